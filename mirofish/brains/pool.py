"""The model brain: decisions from model servers behind the engine's request/result queues
(docs/design.md §3).

Flow for each request (one fish, one decision):

1. **Route** (:mod:`~mirofish.brains.routing`): classify the request from its trigger and
   view, pick the small or large tier, respect the token budget.
2. **Breaker** (:mod:`~mirofish.brains.breaker`): a tier that keeps failing is open — the
   fallback answers at once — and is probed now and then.
3. **Call** (:mod:`~mirofish.brains.transport`): the tier's least busy server, with a total
   deadline per attempt (in lockstep never past the tick's wait), a capped reply size,
   bounded retries with jitter and ``Retry-After``, structured-output detection.
4. **Read** the reply tolerantly, validate it with pydantic and against the fish's view.
5. Anything that fails becomes a **fallback decision** (the instinct planner, tier
   ``fallback``) at once, with its reason recorded per decision (``status``) and counted
   (``fallbacks``) — failure is data, never an exception in the tick.

In realtime mode requests are gathered for ``batch_window_ms`` before being sent together;
in lockstep a tick's requests already arrive as one batch and go out at once. The API key
is read from the environment variable ``brain.api_key_env`` and is never written anywhere.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..actions import Action
from ..config import Config, TierConfig, redact_url
from ..fish.memory import drift_score
from ..fish.triggers import trigger_name
from .base import TIER_INDEX, DecisionBatch, DecisionSource, RequestBatch, status_code
from .breaker import Breaker
from .instinct import instinct_source
from .prompt import (
    JSON_OBJECT_FORMAT,
    JSON_SCHEMA_FORMAT,
    PLAN_FORMATS,
    PLAN_PROMPT,
    SYSTEM_PROMPT,
    FishReply,
    PlanReply,
    ReplyError,
    estimate_tokens,
    legal_for_view,
    messages,
    parse_plan_reply,
    parse_reply,
    plan_legal_for_view,
)
from .routing import Router, classify
from .transport import Endpoint, Failure, LoopThread, Transport, TransportSettings


@dataclass
class Tier:
    name: str
    cfg: TierConfig
    endpoints: list[Endpoint]
    breaker: Breaker
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def state(self, tick: int | None = None) -> str:
        return self.breaker.state(tick)


@dataclass
class Accounts:
    """What the pool counts: calls, decisions, fallbacks by reason, tokens (for the HUD, the
    run summary and the cost per simulated hour)."""

    calls: int = 0
    retries: int = 0
    decisions: int = 0
    model_decisions: int = 0
    fallbacks: Counter = field(default_factory=Counter)
    classes: Counter = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prefix_tokens: int = 0
    model_tokens: int = 0  # tokens of the replies that became decisions
    late: int = 0  # model answers that came after the engine gave up on their tick

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ModelPool(DecisionSource):
    """Decisions from OpenAI-compatible model servers, with the instinct planner as the fallback tier."""

    name = "llm"
    wants_perceptions = True
    writes_summaries = True

    def __init__(self, cfg: Config, mode: str = "lockstep", warn=None):
        super().__init__()
        self.cfg, self.bcfg, self.mode = cfg, cfg.brain, mode
        self.plans = cfg.brain.decides == "plan"
        self.fallback = instinct_source(cfg, tier="fallback")
        self._warn = warn or (lambda msg: print(f"mirofish: warning: {msg}", file=sys.stderr, flush=True))
        self.stats = Accounts()
        self.tokens_by_fish = np.zeros(cfg.fish.count, np.int64)
        self.drift: dict[int, float] = {}  # fish → drift score of its newest model-written summary
        self._seen: dict[int, set] = {}
        self._prefix_tokens = estimate_tokens(PLAN_PROMPT if self.plans else SYSTEM_PROMPT)
        self._tick = 0  # the newest tick asked about (lockstep breaker cooldown)
        self._given_up: set[tuple[int, int]] = set()  # (tick, fish) of requests the engine gave up on
        self._tasks: set[asyncio.Task] = set()
        self._thread = LoopThread("mirofish-model-pool")
        self._loop = self._thread.loop
        self._thread.run(self._start(), timeout=30)

    # ------------------------------------------------------------ engine side

    def submit(self, batch: RequestBatch) -> None:
        if self.mode == "realtime" and all(t.state() == "open" for t in self._unique_tiers()):
            # every tier is known to be failing: the fallback answers in this very tick
            self.results.put(self._instead(batch, "breaker_open"))
            return
        self._thread.call_soon(self._inbox.put_nowait, batch)

    def _instead(self, batch: RequestBatch, reason: str) -> DecisionBatch:
        """The fallback's decisions for a whole batch, counted and recorded under ``reason``."""
        self.stats.fallbacks[reason] += len(batch)
        self.stats.decisions += len(batch)
        decided = self.fallback.decide(batch)
        decided.status = np.full(len(batch), status_code(reason), np.int8)
        decided.meta = {"reason": reason}
        return decided

    def give_up(self, batch: RequestBatch) -> DecisionBatch:
        """Lockstep: the tick waited ``brain.timeout_s``; the fallback decides these fish now and
        the model's late answers to these requests are neither applied nor counted."""
        self._given_up.update((batch.tick, int(f)) for f in batch.fish)
        return self._instead(batch, "tick_timeout")

    def status(self) -> dict:
        s = self.stats
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
                       "per_call": round(s.tokens / max(1, s.calls), 1),
                       "prefix_share": (round(s.prefix_tokens / max(1, s.prompt_tokens), 3)
                                        if s.prompt_tokens else None)},
            "budget": {"limit": self.bcfg.budget_tokens, "used": s.tokens, "state": self.router.state},
            "tiers": {t.name: {"state": t.state(), "calls": t.calls, "prompt_tokens": t.prompt_tokens,
                               "completion_tokens": t.completion_tokens,
                               "endpoints": [{"base_url": redact_url(e.cfg.base_url), "model": e.cfg.model,
                                              "format": e.format, "reachable": e.reachable,
                                              "in_flight": e.outstanding} for e in t.endpoints]}
                      for t in self.tiers.values()},
        }

    def alerts(self) -> list[str]:
        """Brain alerts for the HUD and the run summary: budget, open breakers, drift."""
        out = []
        if self.router.state != "ok":
            out.append(f"token budget {self.router.state}")
        for t in self._unique_tiers():
            if t.state() != "closed":
                out.append(f"{t.name} tier breaker {t.state()}: instinct is answering")
        drifting = sorted(f for f, d in self.drift.items() if d < self.bcfg.drift_alert)
        if drifting:
            out.append(f"drift: {len(drifting)} fish's summaries no longer sound like their persona")
        return out

    def ask(self, perception, persona: str, plan: str, question: str):
        """A question to a fish, answered by its model in its persona, with its view, memories
        and plan as context — through the small tier's transport, breaker and accounting, on
        the pool's loop. Returns a ``concurrent.futures.Future`` of ``{"text", "error"}``."""
        msgs = [{"role": "system", "content": f"You are a fish in an aquarium. {persona}. Answer in one or two "
                                              f"short sentences, in the first person."},
                {"role": "user", "content": f"What you see (5x5, @ is you):\n{perception.view}\n"
                                            f"Energy {perception.energy / 100:.0f}/{perception.max_energy / 100:.0f}. "
                                            f"Recent memories: {'; '.join(perception.memories[-4:]) or 'none'}.\n"
                                            f"Your current plan: {plan}.\nQuestion: {question}"}]
        tier = self.tiers["small"]

        async def run() -> dict:
            try:
                text, p, c = await tier.breaker.call(self.transport.complete(
                    tier.endpoints, msgs, None, 120, self._loop.time() + self.bcfg.request_timeout_s))
            except Failure as failure:
                return {"text": None, "error": failure.reason}
            self._account(-1, p, c)
            self.stats.classes["questions"] += 1
            return {"text": (text or "").strip(), "error": None}

        return self._thread.submit(run())

    def cost_per_sim_hour(self, sim_seconds: float) -> float:
        """Tokens per simulated hour × the tiers' prices (each tier priced once)."""
        if sim_seconds <= 0:
            return 0.0
        cost = sum(t.prompt_tokens / 1000 * t.cfg.price_prompt_per_1k
                   + t.completion_tokens / 1000 * t.cfg.price_completion_per_1k for t in self._unique_tiers())
        return cost * 3600.0 / sim_seconds

    def close(self) -> None:
        """Cancel what is in flight, close the HTTP clients, stop the loop thread."""
        self._thread.close(self._shutdown)

    # ------------------------------------------------------------ loop side

    async def _start(self) -> None:
        b = self.bcfg
        self._inbox: asyncio.Queue[RequestBatch] = asyncio.Queue()
        self.transport = Transport(TransportSettings(
            request_timeout_s=b.request_timeout_s, max_retries=b.max_retries, backoff_s=b.backoff_s,
            backoff_cap_s=b.backoff_cap_s, retry_after_cap_s=b.retry_after_cap_s, max_reply_bytes=b.max_reply_bytes,
            seed=self.cfg.seed), self._loop, self.stats)
        tick_seconds = self.cfg.world.tick_seconds if self.mode == "lockstep" else None
        tiers = {name: Tier(name, t, [Endpoint(e) for e in t.endpoints],
                            Breaker(b.breaker_failures, b.breaker_cooldown_s, tick_seconds))
                 for name, t in (("small", b.small), ("large", b.large)) if t.endpoints}
        # A missing tier is served by the other one (same servers, same breaker).
        self.tiers = {"small": tiers.get("small") or tiers["large"], "large": tiers.get("large") or tiers["small"]}
        self.router: Router[Tier] = Router(self.tiers, b.budget_tokens, b.budget_small_only_at)
        by_server: dict[str, list[tuple[Tier, Endpoint]]] = {}
        for tier in self._unique_tiers():
            for ep in tier.endpoints:
                self.transport.connect(ep, b.api_key_env)
                by_server.setdefault(ep.cfg.base_url, []).append((tier, ep))
        await asyncio.gather(*(self._probe(pairs) for pairs in by_server.values()))
        self._dispatcher = self._loop.create_task(self._dispatch())

    def _unique_tiers(self) -> list[Tier]:
        out: list[Tier] = []
        for t in self.tiers.values():
            if all(t is not o for o in out):
                out.append(t)
        return out

    async def _probe(self, pairs: list[tuple[Tier, Endpoint]]) -> None:
        """Is the server there? (A dead server at start: warn once, fish run on instinct.)"""
        ok = await self.transport.reachable(pairs[0][1])
        if not ok:
            self._warn(f"model server {redact_url(pairs[0][1].cfg.base_url)} is unreachable; "
                       f"fish use the instinct brain until it answers")
        for tier, ep in pairs:
            ep.reachable = ok
            if not ok:
                tier.breaker.failures = self.bcfg.breaker_failures
                tier.breaker.open(self._tick)

    async def _shutdown(self) -> None:
        self._dispatcher.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(self._dispatcher, *self._tasks, return_exceptions=True)
        await self.transport.close()
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
                    except TimeoutError:
                        break
            for batch in batches:
                for i in range(len(batch)):
                    task = self._loop.create_task(self._decide(batch, i))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)

    async def _decide(self, batch: RequestBatch, i: int) -> None:
        fish = int(batch.fish[i])
        trigger = trigger_name(int(batch.triggers[i]))
        klass = classify(trigger, batch.codes[i], self._seen.setdefault(fish, set()))
        self.stats.classes[klass] += 1
        tier = self.router.route(klass, self.stats.tokens)
        try:
            if tier is None:
                raise Failure("budget_exhausted", server=False)
            self._tick = max(self._tick, int(batch.tick))
            # lockstep: an answer after the tick's wait is useless, so that is the deadline
            budget_end = self._loop.time() + self.bcfg.timeout_s if self.mode == "lockstep" else None
            due = batch.summaries_due[i] if batch.summaries_due else None
            assert batch.perceptions is not None and batch.personas is not None  # wants_perceptions
            view, persona = batch.perceptions[i].view, batch.personas[i]
            text, prompt_toks, completion_toks = await tier.breaker.call(
                self.transport.complete(tier.endpoints, messages(batch.perceptions[i], persona, trigger,
                                                                 due[1] if due else None, plans=self.plans),
                                        PLAN_FORMATS if self.plans else (JSON_SCHEMA_FORMAT, JSON_OBJECT_FORMAT),
                                        160 if due else 80, budget_end),
                self._tick if self.mode == "lockstep" else None)
            tier.calls += 1
            tier.prompt_tokens += prompt_toks
            tier.completion_tokens += completion_toks
            self._account(fish, prompt_toks, completion_toks)  # the tokens were spent either way
            plan: dict[str, Any]
            try:
                if self.plans:
                    planned = parse_plan_reply(text)
                    illegal = plan_legal_for_view(planned, view)
                    goal, param, horizon = planned.plan(batch.max_energy)
                    plan = {"actions": None, "goals": [goal], "params": [param], "horizons": [horizon]}
                    reply: PlanReply | FishReply = planned
                else:
                    acted = parse_reply(text)
                    food_here = bool(batch.food_here[i])
                    illegal = None if legal_for_view(acted.action, view, food_here) else "illegal_action"
                    plan = {"actions": np.array([Action.parse(acted.action)], np.int8)}
                    reply = acted
            except ReplyError as exc:
                raise Failure(f"reply_{exc.reason}", server=False) from None
            if illegal:
                raise Failure(illegal, server=False)
        except Failure as failure:
            self._fallback(batch, i, failure.reason)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 — failure is data
            self._fallback(batch, i, f"error_{type(exc).__name__}")
            return
        if (batch.tick, fish) in self._given_up:
            self.stats.late += 1  # answered after the tick gave up on it: dropped
            return
        self.stats.decisions += 1
        self.stats.model_decisions += 1
        self.stats.model_tokens += prompt_toks + completion_toks
        written = None
        if reply.summary and due:
            written = [(fish, due[0], reply.summary)]
            await self._track_drift(fish, reply.summary, persona)
        self.results.put(DecisionBatch(
            tick=batch.tick, fish=np.array([fish]), tier=np.array([TIER_INDEX[tier.name]], np.int8),
            tokens=np.array([prompt_toks + completion_toks]), thoughts=[reply.thought], summaries=written, **plan))

    async def _track_drift(self, fish: int, summary: str, persona: str) -> None:
        """Drift score of a model-written summary vs the persona: embeddings when configured, else lexical."""
        score = None
        if self.bcfg.embeddings:
            try:
                a, b = (np.asarray(v, np.float64) for v in
                        (await self.transport.embeddings(self.tiers["small"].endpoints[0], [summary, persona]))[:2])
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
        self.results.put(self._instead(batch.subset(np.array([i])), reason))
