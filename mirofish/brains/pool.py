"""The model brain: an asyncio worker pool behind the engine's request/result queues (docs/design.md §3).

Flow for each request (one fish, one decision):

1. **Classify** it from its trigger and view — ``routine`` (nothing in view), ``foraging``
   (food in view), ``conflict_social`` (a refused move, or food with rivals, or a crowd),
   ``novel`` (a view composition this fish has not met before) — and **route** routine and
   foraging to the small tier, the others to the large tier (the small tier if no large one).
2. **Budget**: at 80 % of ``brain.budget_tokens`` everything goes to the small tier; at 100 %
   to the instinct brain only.
3. **Breaker**: a tier whose last ``breaker_failures`` requests failed is open for
   ``breaker_cooldown_s``; then one probe request is let through (half-open). A failed probe
   opens it again for twice as long (up to 32×); a success closes it.
4. **Call** the endpoint of the tier with the fewest requests in flight (bounded per endpoint),
   with a per-request timeout, retrying only retryable errors (timeouts, connection errors,
   408/409/429/5xx) with bounded exponential backoff and jitter, honouring ``Retry-After``.
5. **Read** the reply tolerantly, validate it with pydantic and against the fish's view.
6. Anything that fails becomes an **instinct decision** at once (tier ``fallback``), counted
   by reason — failure is data, never an exception in the tick.

Structured output: each endpoint's support is detected on first contact and degraded
json_schema → json_object + schema → plain instructions (llama.cpp's server answers 500 to
json_schema). In realtime mode requests are gathered for ``batch_window_ms`` before being
sent together; in lockstep a tick's requests already arrive as one batch and go out at once.
The API key is read from the environment variable ``brain.api_key_env`` and is never
written anywhere.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..config import Config, EndpointConfig, TierConfig, redact_url
from ..fish.perception import V_FISH, V_FOOD, V_WALL
from ..fish.triggers import trigger_name
from ..actions import Action
from .instinct import instinct_source
from .base import INVALID, TIER_INDEX, TIMEOUT, DecisionBatch, DecisionSource, RequestBatch
from ..fish.memory import drift_score
from .prompt import (JSON_OBJECT_FORMAT, JSON_SCHEMA_FORMAT, PLAN_FORMATS, PLAN_PROMPT, SYSTEM_PROMPT, ReplyError,
                     estimate_tokens, legal_for_view, messages, parse_plan_reply, parse_reply, plan_legal_for_view)

ROUTES = {"routine": "small", "foraging": "small", "conflict_social": "large", "novel": "large"}
FORMATS = ("json_schema", "json_object", "plain")
RETRYABLE_STATUS = {408, 409, 429}


@dataclass
class Endpoint:
    cfg: EndpointConfig
    client: object = None
    outstanding: int = 0
    semaphore: asyncio.Semaphore | None = None
    format: str | None = None  # detected structured-output support
    reachable: bool | None = None
    probing: bool = False  # a first request is finding out the structured-output support
    probed: asyncio.Event = field(default_factory=asyncio.Event)  # … and has found out (others wait)


@dataclass
class Tier:
    name: str
    cfg: TierConfig
    endpoints: list[Endpoint]
    failures: int = 0
    open_until: float = 0.0
    # In lockstep the cooldown is counted in ticks (wall seconds would hand a fast headless run's
    # ticks to the fallback for a whole outage): open until this tick, -1 when not open.
    open_until_tick: int = -1
    backoff: int = 1  # cooldown multiplier: doubles each time a half-open probe fails
    probing: bool = False
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def state(self, now: float, tick: int | None = None) -> str:
        """closed (normal), open (failing: instinct answers), half_open (one probe may go).
        ``tick``: lockstep's current tick (the cooldown then counts ticks)."""
        if self.open_until == 0.0:
            return "closed"
        if tick is not None and self.open_until_tick >= 0:
            return "open" if tick < self.open_until_tick else "half_open"
        return "open" if now < self.open_until else "half_open"


@dataclass
class _Stats:
    calls: int = 0
    decisions: int = 0
    model_decisions: int = 0
    fallbacks: Counter = field(default_factory=Counter)
    classes: Counter = field(default_factory=Counter)
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prefix_tokens: int = 0
    model_tokens: int = 0  # tokens of the replies that became decisions
    late: int = 0  # model answers that came after the engine gave up on their tick
    budget_state: str = "ok"


class _Failure(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def classify(trigger: str, codes: np.ndarray, seen: set) -> str:
    """routine / foraging / conflict_social / novel for one request (see module doc)."""
    food = int(np.count_nonzero(codes == V_FOOD))
    fish = int(np.count_nonzero(codes >= V_FISH))
    wall = int(np.count_nonzero(codes == V_WALL))
    signature = (food > 0, min(fish, 3), wall > 0)
    if signature not in seen:
        seen.add(signature)
        if len(seen) > 1:  # the first view of a fish is its baseline, not news
            return "novel"
    if trigger == "action_failed" or (food and fish >= 2) or fish >= 4:
        return "conflict_social"
    return "foraging" if food else "routine"


class ModelPool(DecisionSource):
    """Decisions from OpenAI-compatible model servers, with instinct as the fallback tier."""

    name = "llm"
    wants_perceptions = True
    writes_summaries = True

    def __init__(self, cfg: Config, mode: str = "lockstep", warn=None):
        super().__init__()
        self.cfg, self.bcfg, self.mode = cfg, cfg.brain, mode

        self.plans = cfg.brain.decides == "plan"
        self.fallback = instinct_source(cfg, tier="fallback")
        self._warn = warn or (lambda msg: print(f"mirofish: warning: {msg}", file=sys.stderr, flush=True))
        self.stats = _Stats()
        self.tokens_by_fish = np.zeros(cfg.fish.count, np.int64)
        self.drift: dict[int, float] = {}  # fish → drift score of its newest model-written summary
        self._seen: dict[int, set] = {}
        self._api_key = os.environ.get(self.bcfg.api_key_env) or "not-needed"
        self._prefix_tokens = estimate_tokens(PLAN_PROMPT if cfg.brain.decides == "plan" else SYSTEM_PROMPT)
        self._rng = random.Random(cfg.seed)  # retry jitter only; never affects a decision
        self._tick = 0  # the newest tick asked about (lockstep breaker cooldown)
        self._given_up: set[tuple[int, int]] = set()  # (tick, fish) of requests the engine gave up on
        self._tick_seconds = cfg.world.tick_seconds
        self._loop = asyncio.new_event_loop()
        self._tasks: set[asyncio.Task] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mirofish-model-pool", daemon=True)
        self._thread.start()
        self._closed = False
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)

    # ------------------------------------------------------------ engine side

    def submit(self, batch: RequestBatch) -> None:
        if self.mode == "realtime" and self._all_open():
            # every tier is known to be failing: the fallback answers in this very tick
            self.results.put(self._instead(batch, "breaker_open", INVALID))
            return
        self._loop.call_soon_threadsafe(self._inbox.put_nowait, batch)

    def _all_open(self) -> bool:
        now = time.monotonic()
        return all(t.state(now) == "open" for t in {id(t): t for t in self.tiers.values()}.values())

    def _instead(self, batch: RequestBatch, reason: str, status: int) -> DecisionBatch:
        """The fallback's decisions for a whole batch, counted under ``reason``."""
        self.stats.fallbacks[reason] += len(batch)
        self.stats.decisions += len(batch)
        decided = self.fallback.decide(batch)
        decided.status = np.full(len(batch), status, np.int8)
        decided.meta = {"reason": reason}
        return decided

    def give_up(self, batch: RequestBatch) -> DecisionBatch:
        """Lockstep: the tick waited ``brain.timeout_s``; the fallback decides these fish now and
        the model's late answers to these requests are neither applied nor counted."""
        self._given_up.update((batch.tick, int(f)) for f in batch.fish)
        return self._instead(batch, "tick_timeout", TIMEOUT)

    def status(self) -> dict:
        now = time.monotonic()
        s = self.stats
        total_prompt = max(1, s.prompt_tokens)
        return {
            "source": self.name, "calls": s.calls, "decisions": s.decisions, "model_decisions": s.model_decisions,
            "fallbacks": dict(s.fallbacks), "fallback_rate": round(sum(s.fallbacks.values()) / max(1, s.decisions), 4),
            "classes": dict(s.classes), "retries": s.retries, "late_answers_dropped": s.late,
            "drift": {"fish_scored": len(self.drift),
                      "mean": round(float(np.mean(list(self.drift.values()))), 3) if self.drift else None,
                      "alert_fish": sorted(f for f, d in self.drift.items() if d < self.bcfg.drift_alert),
                      "measure": "embeddings" if self.bcfg.embeddings else "lexical"},
            "tokens_by_fish_max": int(self.tokens_by_fish.max()) if self.tokens_by_fish.size else 0,
            "tokens": {"prompt": s.prompt_tokens, "completion": s.completion_tokens,
                       "per_model_decision": round(s.model_tokens / max(1, s.model_decisions), 1),
                       "per_call": round((s.prompt_tokens + s.completion_tokens) / max(1, s.calls), 1),
                       "prefix_share": round(s.prefix_tokens / total_prompt, 3) if s.prompt_tokens else None},
            "budget": {"limit": self.bcfg.budget_tokens, "used": s.prompt_tokens + s.completion_tokens,
                       "state": s.budget_state},
            "tiers": {t.name: {"state": t.state(now), "calls": t.calls, "prompt_tokens": t.prompt_tokens,
                               "completion_tokens": t.completion_tokens,
                               "endpoints": [{"base_url": redact_url(e.cfg.base_url), "model": e.cfg.model, "format": e.format,
                                              "reachable": e.reachable, "in_flight": e.outstanding}
                                             for e in t.endpoints]}
                      for t in self.tiers.values()},
        }

    def alerts(self) -> list[str]:
        """Brain alerts for the HUD and the run summary: budget, open breakers, drift."""
        out = []
        if self.stats.budget_state != "ok":
            out.append(f"token budget {self.stats.budget_state}")
        now = time.monotonic()
        for t in self._unique_tiers():
            if t.state(now) != "closed":
                out.append(f"{t.name} tier breaker {t.state(now)}: instinct is answering")
        drifting = sorted(f for f, d in self.drift.items() if d < self.bcfg.drift_alert)
        if drifting:
            out.append(f"drift: {len(drifting)} fish's summaries no longer sound like their persona")
        return out

    def cost_per_sim_hour(self, sim_seconds: float) -> float:
        """Seed §2.4: tokens per simulated hour × the tiers' prices."""
        if sim_seconds <= 0:
            return 0.0
        tiers = {id(t): t for t in self.tiers.values()}.values()  # one tier may serve both routes
        cost = sum(t.prompt_tokens / 1000 * t.cfg.price_prompt_per_1k
                   + t.completion_tokens / 1000 * t.cfg.price_completion_per_1k for t in tiers)
        return cost * 3600.0 / sim_seconds

    def close(self) -> None:
        """Cancel what is in flight, close the HTTP clients, stop the loop thread."""
        if self._closed:
            return
        self._closed = True
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=10)
        except Exception:  # noqa: BLE001 — closing must not raise
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    # ------------------------------------------------------------ loop side

    async def _start(self) -> None:
        from openai import AsyncOpenAI

        self._inbox: asyncio.Queue[RequestBatch] = asyncio.Queue()
        b = self.bcfg
        tiers = {name: Tier(name, t, [Endpoint(e) for e in t.endpoints])
                 for name, t in (("small", b.small), ("large", b.large)) if t.endpoints}
        # A missing tier is served by the other one (same servers, same breaker).
        self.tiers = {"small": tiers.get("small") or tiers["large"], "large": tiers.get("large") or tiers["small"]}
        clients = {}
        for tier in self._unique_tiers():
            for ep in tier.endpoints:
                key = (ep.cfg.base_url, ep.cfg.model)
                if key not in clients:  # one client and one concurrency limit per server
                    clients[key] = (AsyncOpenAI(base_url=ep.cfg.base_url, api_key=self._api_key, max_retries=0,
                                                timeout=b.request_timeout_s), asyncio.Semaphore(ep.cfg.max_concurrency))
                ep.client, ep.semaphore = clients[key]
        self._clients = [c for c, _ in clients.values()]
        probed = {}
        for tier in self._unique_tiers():
            for ep in tier.endpoints:
                probed.setdefault(ep.cfg.base_url, []).append((tier, ep))
        await asyncio.gather(*(self._probe(pairs) for pairs in probed.values()))
        self._dispatcher = self._loop.create_task(self._dispatch())

    def _unique_tiers(self) -> list[Tier]:
        out = []
        for t in self.tiers.values():
            if all(t is not o for o in out):
                out.append(t)
        return out

    async def _probe(self, pairs: list[tuple[Tier, Endpoint]]) -> None:
        """Is the server there? (A dead server at start: warn once, fish run on instinct.)"""
        ep0 = pairs[0][1]
        try:
            await asyncio.wait_for(ep0.client.models.list(), timeout=min(3.0, self.bcfg.request_timeout_s))
            ok = True
        except Exception as exc:  # noqa: BLE001
            ok = False
            self._warn(f"model server {redact_url(ep0.cfg.base_url)} is unreachable ({type(exc).__name__}); "
                       f"fish use the instinct brain until it answers")
        for tier, ep in pairs:
            ep.reachable = ok
            if not ok:
                tier.failures = self.bcfg.breaker_failures
                self._open(tier)

    def _open(self, tier: Tier) -> None:
        """Open a tier's breaker for ``breaker_cooldown_s`` (in lockstep: as many simulated seconds).
        A tier that fails again right after its half-open probe stays open twice as long each
        time (up to 32×), so a server that hangs costs one probe's wait ever more rarely."""
        cooldown = self.bcfg.breaker_cooldown_s * tier.backoff
        tier.open_until = time.monotonic() + cooldown
        if self.mode == "lockstep":
            tier.open_until_tick = self._tick + max(1, round(cooldown / self._tick_seconds))

    async def _through_breaker(self, tier: Tier, tick: int | None, call):
        """Await ``call`` (a coroutine) if the tier's breaker lets it through: closed, or
        half-open with no other probe in flight. Raises _Failure("breaker_open") otherwise;
        a success closes the breaker. ``tick``: lockstep's tick (cooldown in ticks), else None."""
        state = tier.state(time.monotonic(), tick)
        if state == "open" or (state == "half_open" and tier.probing):
            call.close()  # never awaited
            raise _Failure("breaker_open")
        probe = state == "half_open"
        tier.probing = tier.probing or probe
        try:
            out = await call
        except _Failure:
            if probe:  # the server is still failing: open again, for longer
                tier.backoff = min(32, tier.backoff * 2)
                self._open(tier)
            raise
        finally:
            if probe:
                tier.probing = False
        tier.failures, tier.open_until, tier.open_until_tick, tier.backoff = 0, 0.0, -1, 1
        return out

    async def _shutdown(self) -> None:
        self._dispatcher.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(self._dispatcher, *self._tasks, return_exceptions=True)
        for client in self._clients:
            try:
                await client.close()
            except Exception:  # noqa: BLE001
                pass
        await self._loop.shutdown_default_executor()

    async def _dispatch(self) -> None:
        window = self.bcfg.batch_window_ms / 1000.0
        while True:
            batches = [await self._inbox.get()]
            if self.mode == "realtime" and window > 0:
                deadline = self._loop.time() + window
                while (left := deadline - self._loop.time()) > 0:
                    try:
                        batches.append(await asyncio.wait_for(self._inbox.get(), left))
                    except asyncio.TimeoutError:
                        break
            for batch in batches:
                for i in range(len(batch)):
                    task = self._loop.create_task(self._decide(batch, i))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)

    def _route(self, klass: str) -> Tier | None:
        b = self.bcfg
        used = self.stats.prompt_tokens + self.stats.completion_tokens
        if b.budget_tokens:
            if used >= b.budget_tokens:
                self.stats.budget_state = "exhausted: instinct only"
                return None
            if used >= 0.8 * b.budget_tokens:
                self.stats.budget_state = "80%: small tier only"
                return self.tiers["small"]
        return self.tiers[ROUTES[klass]]

    async def _decide(self, batch: RequestBatch, i: int) -> None:
        fish = int(batch.fish[i])
        trigger = trigger_name(int(batch.triggers[i]))
        klass = classify(trigger, batch.codes[i], self._seen.setdefault(fish, set()))
        self.stats.classes[klass] += 1
        tier = self._route(klass)
        try:
            if tier is None:
                raise _Failure("budget_exhausted")
            self._tick = max(self._tick, int(batch.tick))
            # lockstep: an answer after the tick's wait is useless, so that is the deadline
            budget_end = self._loop.time() + self.bcfg.timeout_s if self.mode == "lockstep" else None
            due = batch.summaries_due[i] if batch.summaries_due else None
            reply, prompt_toks, completion_toks = await self._through_breaker(
                tier, self._tick if self.mode == "lockstep" else None,
                self._call(tier, batch.perceptions[i], batch.personas[i], trigger, due[1] if due else None, budget_end))
            tier.calls += 1
            tier.prompt_tokens += prompt_toks
            tier.completion_tokens += completion_toks
            if self.plans:
                illegal = plan_legal_for_view(reply, batch.perceptions[i].view)
            else:
                illegal = None if legal_for_view(reply.action, batch.perceptions[i].view,
                                                 bool(batch.food_here[i])) else "illegal_action"
            if illegal:
                self._account(fish, prompt_toks, completion_toks)
                raise _Failure(illegal)
        except _Failure as failure:
            self._fallback(batch, i, failure.reason)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 — failure is data
            self._fallback(batch, i, f"error_{type(exc).__name__}")
            return
        self._account(fish, prompt_toks, completion_toks)  # the tokens were spent either way
        if (batch.tick, fish) in self._given_up:
            self.stats.late += 1  # answered after the tick gave up on it: dropped
            return
        self.stats.decisions += 1
        self.stats.model_decisions += 1
        self.stats.model_tokens += prompt_toks + completion_toks
        written = None
        if reply.summary and due:
            written = [(fish, due[0], reply.summary)]
            await self._track_drift(fish, reply.summary, batch.personas[i])
        if self.plans:
            goal, param, horizon = reply.plan(batch.max_energy)
            plan = {"actions": None, "goals": [goal], "params": [param], "horizons": [horizon]}
        else:
            plan = {"actions": np.array([Action.parse(reply.action)], np.int8)}
        self.results.put(DecisionBatch(
            tick=batch.tick, fish=np.array([fish]), tier=np.array([TIER_INDEX[tier.name]], np.int8),
            tokens=np.array([prompt_toks + completion_toks]), thoughts=[reply.thought], summaries=written, **plan))

    async def _track_drift(self, fish: int, summary: str, persona: str) -> None:
        """Drift score of a model-written summary vs the persona: embeddings when configured, else lexical."""
        score = None
        if self.bcfg.embeddings:
            ep = self.tiers["small"].endpoints[0]
            try:
                resp = await ep.client.embeddings.create(model=ep.cfg.model, input=[summary, persona],
                                                         timeout=self.bcfg.request_timeout_s)
                a, b = (np.asarray(d.embedding, np.float64) for d in resp.data[:2])
                score = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) or 1.0))
            except Exception:  # noqa: BLE001 — fall back to the built-in measure
                self.stats.classes["embeddings_failed"] += 1
        if score is None:
            score = drift_score(summary, persona)
        self.drift[fish] = round(score, 3)

    def _account(self, fish: int, prompt_toks: int, completion_toks: int) -> None:
        s = self.stats
        s.prompt_tokens += prompt_toks
        s.completion_tokens += completion_toks
        s.prefix_tokens += min(self._prefix_tokens, prompt_toks)
        if 0 <= fish < self.tokens_by_fish.size:
            self.tokens_by_fish[fish] += prompt_toks + completion_toks

    def _fallback(self, batch: RequestBatch, i: int, reason: str) -> None:
        if (batch.tick, int(batch.fish[i])) in self._given_up:
            return  # the engine gave up on this request; its fallback already answered
        # the model's decision failed; instinct stands in
        self.results.put(self._instead(batch.subset(np.array([i])), reason, INVALID))

    async def _call(self, tier: Tier, perception, persona: str, trigger: str, summary_facts: str | None = None,
                    budget_end: float | None = None):
        """One fish decision from the tier; raises _Failure."""
        msgs = messages(perception, persona, trigger, summary_facts, plans=self.plans)
        formats = PLAN_FORMATS if self.plans else (JSON_SCHEMA_FORMAT, JSON_OBJECT_FORMAT)
        text, prompt_toks, completion_toks = await self._complete(
            tier, msgs, formats, 160 if summary_facts else 80, budget_end)
        try:
            return (parse_plan_reply(text) if self.plans else parse_reply(text)), prompt_toks, completion_toks
        except ReplyError as exc:
            self._account(-1, prompt_toks, completion_toks)
            raise _Failure(f"reply_{exc.reason}") from None

    async def _complete(self, tier: Tier, msgs: list[dict], formats: tuple[dict, dict] | None,
                        max_tokens: int, budget_end: float | None = None) -> tuple[str | None, int, int]:
        """One chat completion from the tier's least busy server: retries, breaker, format
        degradation (json_schema → json_object → plain). Returns (text, prompt, completion tokens).

        Each attempt has a **total** deadline — waiting for a slot, connecting and reading the
        whole body — of ``brain.request_timeout_s``, and never beyond ``budget_end`` (the
        loop time after which the answer is useless: the end of a lockstep tick's wait); a
        retry is made only if it can still finish by then. A server that never answers,
        drips its reply or streams an endless body is cut off at the deadline."""
        ep = min(tier.endpoints, key=lambda e: e.outstanding)
        attempt = 0
        prober = False
        while True:
            if formats is not None and ep.format is None and ep.probing and not prober:
                # one request per server finds out its structured-output support; the others wait
                # for it, but no longer than their own deadline
                try:
                    await asyncio.wait_for(ep.probed.wait(), self._limit(budget_end))
                except TimeoutError:
                    self._failed(tier)
                    raise _Failure("timeout") from None
            if formats is not None and ep.format is None and not ep.probing:
                ep.probing = prober = True
            fmt = ep.format or "json_schema"
            kwargs = {"model": ep.cfg.model, "messages": msgs, "temperature": 0, "max_tokens": max_tokens,
                      "seed": self.cfg.seed, "timeout": self.bcfg.request_timeout_s}
            if formats is not None and fmt == "json_schema":
                kwargs["response_format"] = formats[0]
            elif formats is not None and fmt == "json_object":
                kwargs["response_format"] = formats[1]
            limit = self._limit(budget_end)
            if limit <= 0.0:
                if prober:
                    ep.probing = False
                    ep.probed.set()
                    ep.probed.clear()
                raise _Failure("tick_budget")
            ep.outstanding += 1
            self.stats.calls += 1
            try:
                resp = await asyncio.wait_for(self._create(ep, kwargs), limit)
            except Exception as exc:  # noqa: BLE001
                reason, retry, wait = self._classify_error(exc, ep, fmt)
                if reason == "format_unsupported":
                    ep.format = FORMATS[FORMATS.index(fmt) + 1]
                    if prober:  # the others may go now, in the format that works
                        ep.probing, prober = False, False
                        ep.probed.set()
                    continue
                base = self.bcfg.backoff_s * (2 ** attempt)
                pause = min(4.0, wait if wait is not None else base + self._rng.uniform(0, base))
                in_time = budget_end is None or self._loop.time() + pause + 0.05 < budget_end
                if retry and attempt < self.bcfg.max_retries and in_time:
                    attempt += 1
                    self.stats.retries += 1
                    await asyncio.sleep(pause)
                    continue
                self._failed(tier)
                if prober:  # it learned nothing about the format; let the next request try
                    ep.probing = False
                    ep.probed.set()
                    ep.probed.clear()
                raise _Failure(reason) from None
            finally:
                ep.outstanding -= 1
            ep.format = fmt
            if prober:
                ep.probing, prober = False, False
                ep.probed.set()
            ep.reachable = True
            text, prompt_toks, completion_toks = resp
            prompt_toks = prompt_toks or sum(estimate_tokens(m["content"]) for m in msgs)
            completion_toks = completion_toks or estimate_tokens(text or "")
            return text, prompt_toks, completion_toks

    def _limit(self, budget_end: float | None) -> float:
        """Seconds an attempt may take: ``request_timeout_s``, and not past ``budget_end``."""
        if budget_end is None:
            return self.bcfg.request_timeout_s
        return min(self.bcfg.request_timeout_s, budget_end - self._loop.time())

    def _failed(self, tier: Tier) -> None:
        tier.failures += 1
        if tier.failures >= self.bcfg.breaker_failures and not tier.open_until:
            self._open(tier)  # (a tier that is open or half-open is reopened by its failed probe)

    async def _create(self, ep: Endpoint, kwargs: dict) -> tuple[str | None, int, int]:
        """One completion: (text, prompt tokens, completion tokens; 0 when the server gave none).
        The body is read in pieces and cut off past ``brain.max_reply_bytes`` (a server that
        answers 50 MB, or an endless stream, costs at most that much memory)."""
        import json

        cap = self.bcfg.max_reply_bytes
        async with ep.semaphore:
            async with ep.client.chat.completions.with_streaming_response.create(**kwargs) as resp:
                declared = resp.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > cap:
                    raise _Failure("reply_too_large")
                body = bytearray()
                async for piece in resp.iter_bytes():
                    body += piece
                    if len(body) > cap:
                        raise _Failure("reply_too_large")
        try:
            data = json.loads(bytes(body))
            choices = data.get("choices") or []
            text = choices[0]["message"].get("content") if choices else None
            usage = data.get("usage") or {}
            prompt_toks, completion_toks = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            raise _Failure("reply_not_completion") from None
        if text is not None and not isinstance(text, str):
            raise _Failure("reply_not_completion")
        return text, max(0, prompt_toks), max(0, completion_toks)

    def complete(self, msgs: list[dict], schema: dict | None = None, tier: str = "small",
                 max_tokens: int = 200, timeout: float | None = None) -> dict:
        """Blocking completion for other scenes (referential game, negotiation) through the same
        pool: the same servers, limits, retries, breaker and accounting. The call takes at most
        ``timeout`` (default ``brain.request_timeout_s``) in all, retries included, whatever the
        server does; an open breaker answers at once. Failure is data: returns
        ``{"text", "tokens", "error"}`` with ``error`` None on success."""
        formats = None
        if schema is not None:
            formats = ({"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
                       {"type": "json_object", "schema": schema})

        limit = timeout or self.bcfg.request_timeout_s

        async def run():
            # one total deadline per call, retries included; the breaker counts wall seconds
            t = self.tiers[tier]
            return await self._through_breaker(t, None, self._complete(t, msgs, formats, max_tokens,
                                                                        self._loop.time() + limit))

        fut = asyncio.run_coroutine_threadsafe(run(), self._loop)
        try:
            text, p, c = fut.result(timeout=limit + 5.0)
        except _Failure as failure:
            return {"text": None, "tokens": 0, "error": failure.reason}
        except Exception as exc:  # noqa: BLE001 — timeouts of the wait itself, cancellations
            fut.cancel()
            return {"text": None, "tokens": 0, "error": f"error_{type(exc).__name__}"}
        self._account(-1, p, c)
        return {"text": text, "tokens": p + c, "error": None}

    @staticmethod
    def _classify_error(exc: Exception, ep: Endpoint, fmt: str) -> tuple[str, bool, float | None]:
        """(reason, retryable?, server-requested wait) for an exception from the client."""
        import openai

        if isinstance(exc, _Failure):  # the reply itself was unusable (too large, not a completion)
            return exc.reason, False, None
        if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
            return "timeout", True, None
        if isinstance(exc, openai.APIConnectionError):
            ep.reachable = False
            return "connection", True, None
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            body = str(getattr(exc, "body", "") or exc.message or "").lower()
            if fmt != "plain" and status in (400, 422, 500) and ("json_schema" in body or "response_format" in body):
                return "format_unsupported", False, None
            wait = None
            try:
                wait = float(exc.response.headers.get("retry-after"))
            except (TypeError, ValueError, AttributeError):
                pass
            if status == 429:
                return "rate_limited", True, wait
            if status >= 500:
                return f"http_{status}", True, wait
            return f"http_{status}", status in RETRYABLE_STATUS, wait
        return f"error_{type(exc).__name__}", False, None
