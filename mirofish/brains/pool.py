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
import concurrent.futures
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..actions import Action
from ..config import Config, TierConfig, redact_url
from ..fish.memory import drift_score
from ..fish.perception import Perception
from ..fish.triggers import trigger_name
from .base import LATE_ANSWER, TIER_INDEX, DecisionBatch, DecisionSource, RequestBatch, status_code
from .breaker import Breaker
from .copying import copies, examples_of, judge_summary
from .exchanges import ReplyCache, cache_key, exchange, schema_of
from .instinct import instinct_source
from .prompt import (
    JSON_OBJECT_FORMAT,
    JSON_SCHEMA_FORMAT,
    SUMMARY_FORMATS,
    FishReply,
    PlanReply,
    ReplyError,
    earlier_wordings,
    estimate_tokens,
    fitting_choices,
    interview_messages,
    judge_reply,
    messages,
    parse_summary_reply,
    plan_formats,
    summary_messages,
    system_prompt,
    with_summary,
)
from .prompts import load_prompt
from .routing import Familiar, Router, classify
from .transport import Endpoint, Failure, LoopThread, Transport, TransportSettings

DECISION_TOKENS = 80  # max_tokens of a decision request
SUMMARY_TOKENS = 60  # more of them when the request also asks for a due long-term summary


class _Ask(NamedTuple):
    """What a decision request asks a model: the messages, the reply formats (json_schema and
    json_object forms) and the reply's token cap."""

    msgs: list[dict[str, Any]]
    formats: tuple[dict[str, Any], dict[str, Any]]
    max_tokens: int


@dataclass
class Tier:
    name: str
    cfg: TierConfig
    endpoints: list[Endpoint]
    breaker: Breaker
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of the prompt tokens, those the server's prompt cache served (where it says)

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
    fallbacks: Counter[str] = field(default_factory=Counter[str])
    classes: Counter[str] = field(default_factory=Counter[str])
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prefix_tokens: int = 0
    model_tokens: int = 0  # tokens of the replies that became decisions
    late: int = 0  # model answers dropped because their fish had asked again meanwhile
    late_used: int = 0  # model answers that came after the fallback had answered, and replaced its plan
    wasted: int = 0  # completions the server was asked for whose answer no fish used
    superseded: int = 0  # requests dropped unsent: given up or asked again while they waited for a slot
    waiting: int = 0  # realtime: instinct plans swum while a fish's first request waited for the model
    requests: int = 0  # decision requests made by fish (warm-up, summaries and questions not included)
    summaries_asked: int = 0
    summaries_written: int = 0  # kept: in the fish's own words (copying.judge_summary)
    summaries_refused: Counter[str] = field(default_factory=Counter[str])  # by reason: empty, junk, copies_example …
    thoughts: int = 0  # model plans with a thought
    thoughts_copied: int = 0  # … whose thought is a near-copy of one of the prompt's example thoughts
    summary_tokens: int = 0
    miss_reasons: Counter[str] = field(default_factory=Counter[str])  # reply cache in use: why a miss fell back
    cached_tokens: int = 0  # prompt tokens the servers' prompt caches served, as they report them
    cache_reports: int = 0  # completions whose server said how many prompt tokens its cache served
    by_kind: Counter[str] = field(default_factory=Counter[str])  # requests sent to a server, by kind (= calls)
    clamped: Counter[str] = field(default_factory=Counter[str])  # model plans used with a number brought into range
    ignored: Counter[str] = field(default_factory=Counter[str])  # fields a plan's goal does not read, left unchecked

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ModelPool(DecisionSource):
    """Decisions from OpenAI-compatible model servers, with the instinct planner as the fallback tier."""

    name = "llm"
    wants_perceptions = True
    writes_summaries = True

    def __init__(self, cfg: Config, mode: str = "lockstep", warn: Callable[[str], None] | None = None,
                 cache: ReplyCache | None = None, asked_before: set[int] | None = None, offline: bool = False,
                 warmed: dict[str, dict[str, Any]] | None = None, request_budget: int | None = None):
        """``cache``: a reply cache answering every request whose body it holds (a fork of a
        model run: the parent's replies; ``--reply-cache DIR``), filled with every new reply.
        ``offline``: no server is connected or contacted (a fork of a recording given no
        ``--base-url``: a recording never makes us contact the server it names) — a request the
        cache does not hold falls back (``cache_miss``, counted as ``no_server``).
        ``asked_before``: fish that asked before this pool started (a fork: their next request
        is not their first, so its trigger reads as it did in the recording).
        ``warmed``: what an earlier pool of this process found of each server (:meth:`learned`:
        format, slots) — those servers are neither probed nor warmed up again (``influence``'s
        many forks). ``request_budget``: at most this many requests to servers; past it a
        request the cache does not hold falls back (``request_budget_spent``)."""
        super().__init__()
        self.cache, self.offline = cache, offline
        self._warmed = dict(warmed or {})
        self.request_budget = request_budget
        self.cfg, self.bcfg, self.mode = cfg, cfg.brain, mode
        self.plans = cfg.brain.decides == "plan"
        self.prompt = load_prompt(cfg.brain.prompt)  # the prompt file's words (brains/prompts.py)
        self.examples = examples_of(self.prompt)  # what copying is measured against (brains/copying.py)
        self.fallback = instinct_source(cfg, tier="fallback")
        self._warn = warn or (lambda msg: print(f"mirofish: warning: {msg}", file=sys.stderr, flush=True))
        self.stats = Accounts()
        self.tokens_by_fish = np.zeros(cfg.fish.slots, np.int64)
        self.drift: dict[int, float] = {}  # fish → drift score of its newest model-written summary
        self._seen: dict[int, Familiar] = {}
        self._prefix_tokens = estimate_tokens(system_prompt(self.plans, self.bcfg.tendency, self.prompt))
        self._tick = 0  # the newest tick asked about (lockstep breaker cooldown)
        self._given_up: set[tuple[int, int]] = set()  # (tick, fish) of requests the engine gave up on
        self._answered_by: dict[int, tuple[int, str]] = {}  # fish → (tick, reason) of its latest fallback
        self._replaced: dict[tuple[int, int], str] = {}  # (tick, fish) → the fallback reason a late plan replaced
        self._latest: dict[int, int] = {}  # fish → tick of its newest request
        self._asked_before: set[int] = set(asked_before or ())  # fish that have asked at least once
        self.warmup: dict[str, dict[str, Any]] = {}  # server → what its warm-up request found
        self._model_listed: dict[str, bool | None] = {}  # model → does its server list it (None: it did not say)
        self._born = time.monotonic()
        self._first_plan_s: dict[int, float] = {}  # fish → wall seconds from start to its first model plan
        self._tasks: set[asyncio.Task[Any]] = set()
        self._thread = LoopThread("mirofish-model-pool")
        self._loop = self._thread.loop
        self._thread.run(self._start(), timeout=self.bcfg.warmup_timeout_s + 30)

    # ------------------------------------------------------------ engine side

    def submit(self, batch: RequestBatch) -> None:
        for f in batch.fish.tolist():
            self._latest[f] = int(batch.tick)
        if self.mode == "realtime" and self.cache is None and all(t.state() == "open" for t in self._unique_tiers()):
            # every tier is known to be failing: the fallback answers in this very tick
            self.results.put(self._instead(batch, "breaker_open"))
            return
        self._thread.call_soon(self._inbox.put_nowait, batch)

    @property
    def renews_waiting(self) -> bool:  # type: ignore[override]
        """Realtime: a fish waiting for its first answer swims instinct plans meanwhile, one after
        another (a warm-up or a queue may hold its request for minutes)."""
        return self.mode == "realtime"

    def renew_waiting(self, batch: RequestBatch) -> None:
        self._thread.call_soon(self._renew, batch)

    def _renew(self, batch: RequestBatch) -> None:
        for i in range(len(batch.fish)):
            self._swim_meanwhile(batch, i)

    def _instead(self, batch: RequestBatch, reason: str, calls: list[dict[str, Any]] | None = None) -> DecisionBatch:
        """The fallback's decisions for a whole batch, counted and recorded under ``reason``
        (``calls``: the model exchanges that failed, kept with the decision)."""
        self.stats.fallbacks[reason] += len(batch)
        self.stats.decisions += len(batch)
        for f in batch.fish.tolist():  # a late model answer may replace it: then it is no longer a fallback
            self._answered_by[int(f)] = (int(batch.tick), reason)
        decided = self.fallback.decide(batch)
        decided.status = np.full(len(batch), status_code(reason), np.int8)
        decided.meta = {"reason": reason}
        decided.calls = calls
        return decided

    def give_up(self, batch: RequestBatch) -> DecisionBatch:
        """Lockstep: no answer came for :meth:`tick_wait` seconds; the fallback decides these
        fish now. Their requests still waiting for a slot are dropped unsent; one already at the
        server may still answer, and is used if its fish has not asked again (else wasted). A
        tier whose server made the tick wait counts one failure (a server that hangs opens the
        breaker after ``brain.breaker_failures`` such ticks)."""
        self._given_up.update((batch.tick, int(f)) for f in batch.fish)
        tick = int(batch.tick)

        def count() -> None:
            for t in self._unique_tiers():
                if any(ep.outstanding or ep.queued for ep in t.endpoints):
                    t.breaker.outcome(False, False, tick, "tick_timeout")

        self._thread.call_soon(count)
        return self._instead(batch, "tick_timeout")

    def tick_wait(self) -> float:
        """Lockstep: ``brain.timeout_s`` without an answer, and at least 3× the slowest server's
        measured latency (dispatch → answer)."""
        slowest = max((ep.latency_s or 0.0 for t in self._unique_tiers() for ep in t.endpoints), default=0.0)
        return max(self.bcfg.timeout_s, 3.0 * slowest)

    def progress(self) -> int:
        """Completions the servers have finished (a plan whose fish also writes a summary is
        delivered only after the second request: the server is busy, not stuck)."""
        return sum(ep.answered for t in self._unique_tiers() for ep in t.endpoints)

    def dropped_late(self, n: int, dropped: DecisionBatch | None = None) -> None:
        """Answers the engine dropped (their fish had asked again before they were taken): they
        are no request's outcome, so they are taken back out of the accounting — a late plan
        gives its request back to the fallback it had replaced."""
        self.stats.late += n
        self.stats.wasted += n
        if dropped is None:
            return
        reason = dropped.meta.get("reason") if dropped.meta else None
        for k in range(len(dropped)):
            fish, st = int(dropped.fish[k]), int(dropped.status[k])
            if st == LATE_ANSWER:
                was = self._replaced.pop((int(dropped.tick), fish), None)
                if was is not None:
                    self.stats.fallbacks[was] += 1
                    self.stats.late_used -= 1
                    self.stats.model_decisions -= 1
            elif st == 0 and int(dropped.tier[k]) in (TIER_INDEX["small"], TIER_INDEX["large"]):
                self.stats.decisions -= 1
                self.stats.model_decisions -= 1
            elif st and isinstance(reason, str) and self.stats.fallbacks[reason] > 0:
                self.stats.decisions -= 1
                self.stats.fallbacks[reason] -= 1
                if not self.stats.fallbacks[reason]:
                    del self.stats.fallbacks[reason]

    def status(self) -> dict[str, Any]:
        s = self.stats
        return {
            "source": self.name, "calls": s.calls, "requests": s.requests, "decisions": s.decisions,
            # every request sent to a server, by kind (retries included): what the server received
            "requests_by_kind": dict(sorted(s.by_kind.items())), "requests_sent": s.calls,
            "model_decisions": s.model_decisions,
            "fallbacks": dict(s.fallbacks), "fallback_rate": round(sum(s.fallbacks.values()) / max(1, s.decisions), 4),
            # model plans read by what their goal uses: numbers clamped into range, fields not read
            "replies_clamped": dict(s.clamped), "fields_ignored": dict(s.ignored),
            "classes": dict(s.classes), "retries": s.retries, "late_answers_dropped": s.late,
            "late_answers_used": s.late_used, "completions_wasted": s.wasted,
            "wasted_share": round(s.wasted / max(1, s.calls), 4), "superseded_unsent": s.superseded,
            "waiting_plans": s.waiting, "requests_in_flight": self._in_flight(),
            # replies whose usage block could not be true: their tokens unknown (transport.read_usage)
            **({"usage_ignored": self.transport.usage_ignored}
               if getattr(getattr(self, "transport", None), "usage_ignored", 0) else {}),
            **({"reply_cache": self.cache.status(), "cache_hits": self.cache.hits, "cache_misses": self.cache.misses,
                "cache_miss_reasons": dict(s.miss_reasons),
                # entries of --reply-cache DIR that are no entry: misses, the first named on stderr (exchanges.py)
                **({"cache_damaged": self.cache.damaged} if getattr(self.cache, "damaged", 0) else {})}
               if self.cache is not None else {}),
            "first_model_plans": {"fish": len(self._first_plan_s),
                                  "all_within_s": round(max(self._first_plan_s.values()), 2)
                                  if self._first_plan_s else None},
            "summaries": {"asked": s.summaries_asked, "written": s.summaries_written,
                          "refused": dict(sorted(s.summaries_refused.items())), "tokens": s.summary_tokens},
            # how much of what the model wrote repeats its prompt's examples (brains/copying.py)
            "copying": {"thoughts": s.thoughts, "thoughts_copied": s.thoughts_copied,
                        "thought_copy_share": round(s.thoughts_copied / s.thoughts, 4) if s.thoughts else None,
                        "summaries_refused_as_copies": s.summaries_refused["copies_example"]
                        + s.summaries_refused["echoes_instruction"],
                        "summary_copy_share": round((s.summaries_refused["copies_example"]
                                                     + s.summaries_refused["echoes_instruction"])
                                                    / max(1, s.summaries_asked), 4) if s.summaries_asked else None},
            "warmup": self._warmups(),
            "models_listed": dict(self._model_listed),
            "drift": {"fish_scored": len(self.drift),
                      "mean": round(float(np.mean(list(self.drift.values()))), 3) if self.drift else None,
                      "alert_fish": sorted(f for f, d in self.drift.items() if d < self.bcfg.drift_alert),
                      "measure": "embeddings" if self.bcfg.embeddings else "lexical"},
            "tokens_by_fish_max": int(self.tokens_by_fish.max()) if self.tokens_by_fish.size else 0,
            "tokens": {"prompt": s.prompt_tokens, "completion": s.completion_tokens,
                       "per_model_decision": round(s.model_tokens / max(1, s.model_decisions), 1),
                       "per_call": round(s.tokens / max(1, s.calls), 1),
                       "prefix_share": (round(s.prefix_tokens / max(1, s.prompt_tokens), 3)
                                        if s.prompt_tokens else None),
                       # what the servers' prompt caches served, as they report it (None: they do not say)
                       "cached_prompt": s.cached_tokens if s.cache_reports else None,
                       "cached_share": (round(s.cached_tokens / max(1, s.prompt_tokens), 3)
                                        if s.cache_reports else None),
                       "cached_per_model_decision": (round(s.cached_tokens / max(1, s.model_decisions), 1)
                                                     if s.cache_reports else None)},
            "budget": {"limit": self.bcfg.budget_tokens, "used": s.tokens, "state": self.router.state},
            "tiers": {t.name: {"state": t.state(), "calls": t.calls, "prompt_tokens": t.prompt_tokens,
                               "completion_tokens": t.completion_tokens,
                               "endpoints": [{"base_url": redact_url(e.cfg.base_url), "model": e.cfg.model,
                                              "format": e.format, "reachable": e.reachable,
                                              "slots": e.slots, "slots_from": e.slots_source,
                                              "latency_s": None if e.latency_s is None else round(e.latency_s, 3),
                                              "in_flight": e.outstanding, "queued": e.queued}
                                             for e in t.endpoints]}
                      for t in self.tiers.values()},
        }

    def _in_flight(self) -> int:
        """Requests with a server or waiting for its slot now (every endpoint's, once each): read at
        a run's end, those the run ended on — their answers never came, and no other figure
        counts them."""
        seen: dict[int, Any] = {}
        for t in getattr(self, "tiers", {}).values():
            for e in t.endpoints:
                seen[id(e)] = e
        return sum(e.outstanding + e.queued for e in seen.values())

    group: str | None = None  # the group whose fish this pool decides for, in a mixed tank (brains/mixed.py)

    def _sampling(self) -> tuple[float, float | None]:
        return self.bcfg.temperature, self.bcfg.top_p

    def _sampled(self) -> dict[str, Any]:
        """What an exchange of this pool records beside the request: sampling and the group."""
        return {"temperature": self.bcfg.temperature, "top_p": self.bcfg.top_p, "group": self.group}

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

    def ask(self, perception: Perception, persona: str, plan: str,
            question: str) -> concurrent.futures.Future[dict[str, Any]]:
        """A question to a fish, answered by its model in its persona, with its view, memories
        and plan as context — through the small tier's transport, breaker and accounting, on
        the pool's loop. Returns a ``concurrent.futures.Future`` of ``{"text", "error"}``."""
        msgs = interview_messages(perception, persona, plan, question)
        tier = self.tiers["small"]

        async def run() -> dict[str, Any]:
            try:
                text, p, c = await tier.breaker.call(self.transport.complete(
                    tier.endpoints, msgs, None, 120, self._loop.time() + self.bcfg.request_timeout_s, kind="question"))
            except Failure as failure:
                return {"text": None, "error": failure.reason}
            self._account(-1, p, c, tier, prefix=False)
            self.stats.classes["questions"] += 1
            return {"text": (text or "").strip(), "error": None}

        return self._thread.submit(run())

    def cost_per_sim_hour(self, sim_seconds: float) -> float:
        """Tokens per simulated hour × the tiers' prices (each tier priced once)."""
        if sim_seconds <= 0:
            return 0.0
        def price(t: Tier) -> float:
            cached = t.cfg.price_cached_prompt_per_1k
            cached = t.cfg.price_prompt_per_1k if cached is None else cached
            return ((t.prompt_tokens - t.cached_tokens) / 1000 * t.cfg.price_prompt_per_1k
                    + t.cached_tokens / 1000 * cached + t.completion_tokens / 1000 * t.cfg.price_completion_per_1k)

        cost = sum(price(t) for t in self._unique_tiers())
        return cost * 3600.0 / sim_seconds

    def _warmups(self) -> dict[str, dict[str, Any]]:
        """What each server's warm-up found; one still waited for: ``pending`` and ``waited_s`` so far."""
        now = time.monotonic()
        return {where: ({k: v for k, v in r.items() if k != "since"} | {"waited_s": round(now - r["since"], 1)}
                        if "since" in r else r) for where, r in self.warmup.items()}

    def close(self) -> None:
        """Cancel what is in flight, close the HTTP clients, stop the loop thread. A warm-up still
        unanswered is said (one line): every fish of the run swam instinct plans waiting for it."""
        for where, record in list(self.warmup.items()):
            if record.get("pending") and "since" in record:
                waited = round(time.monotonic() - record.pop("since"), 1)
                record.update(ok=False, waited_s=waited)
                self._warn(f"model server {where} ({record.get('model')}) had not answered its warm-up request "
                           f"when the run ended ({waited} s): the fish swam instinct plans waiting for the model "
                           f"(waiting_plans); lower brain.warmup_timeout_s to give up on it sooner")
        self._thread.close(self._shutdown)

    # ------------------------------------------------------------ loop side

    async def _start(self) -> None:
        b = self.bcfg
        self._inbox: asyncio.Queue[RequestBatch] = asyncio.Queue()
        self.transport = Transport(TransportSettings.of(b, seed=self.cfg.seed), self._loop, self.stats, self._warn)
        tick_seconds = self.cfg.world.tick_seconds if self.mode == "lockstep" else None
        tiers = {name: Tier(name, t, [Endpoint(e) for e in t.endpoints],
                            Breaker(b.breaker_failures, b.breaker_cooldown_s, tick_seconds))
                 for name, t in (("small", b.small), ("large", b.large)) if t.endpoints}
        for name, tier in tiers.items():  # one line when its server stops answering, one when it is back
            first = tier.endpoints[0].cfg
            tier.breaker.name = f"model server {redact_url(first.base_url)} ({first.model}, {name} tier)"
            tier.breaker.say = self._warn
        # A missing tier is served by the other one (same servers, same breaker).
        self.tiers = {"small": tiers.get("small") or tiers["large"], "large": tiers.get("large") or tiers["small"]}
        self.router: Router[Tier] = Router(self.tiers, b.budget_tokens, b.budget_small_only_at)
        by_server: dict[str, list[tuple[Tier, Endpoint]]] = {}
        for tier in self._unique_tiers() if not self.offline else ():
            for ep in tier.endpoints:
                self.transport.connect(ep, b.api_key_env)
                known = self._warmed.get(ep.cfg.base_url)
                if known is not None:  # an earlier pool of this process met it: as it found it
                    ep.format, ep.reachable = known.get("format"), True
                    if known.get("slots"):
                        ep.slots, ep.slots_source = int(known["slots"]), str(known.get("slots_from") or "")
                    continue
                by_server.setdefault(ep.cfg.base_url, []).append((tier, ep))
        await asyncio.gather(*(self._probe(pairs) for pairs in by_server.values()))
        warm = [self._warm_up(pairs) for pairs in by_server.values() if pairs[0][1].reachable]
        if self.mode == "lockstep":  # tick 0 waits for warm servers: the first plans are the model's
            await asyncio.gather(*warm)
        else:  # realtime: fish swim on instinct plans ("waiting for the model") meanwhile
            for w in warm:
                task = self._loop.create_task(w)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        self._dispatcher = self._loop.create_task(self._dispatch())

    def _spend(self) -> bool:
        """May one more request go to a server (``request_budget``)? Counts it when it may."""
        if self.request_budget is None:
            return True
        if self.request_budget <= 0:
            return False
        self.request_budget -= 1
        return True

    def learned(self) -> dict[str, dict[str, Any]]:
        """What this pool found of each server it warmed up (``warmed`` of a later pool)."""
        out = dict(self._warmed)
        for tier in self._unique_tiers():
            for ep in tier.endpoints:
                if ep.reachable and ep.format:
                    out[ep.cfg.base_url] = {"format": ep.format, "slots": ep.slots, "slots_from": ep.slots_source}
        return out

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
        listed = pairs[0][1].listed
        for model in dict.fromkeys(ep.cfg.model for _, ep in pairs):  # a name the server does not list:
            known = None if listed is None or not listed else model in listed  # it may answer as another model
            self._model_listed[model] = known
            if known is False and listed:
                shown = ", ".join(listed[:5]) + (" …" if len(listed) > 5 else "")
                self._warn(f"model server {redact_url(pairs[0][1].cfg.base_url)} does not list the model {model!r} "
                           f"(GET /v1/models lists {shown}); its answers may come from another model")
        for tier, ep in pairs:
            ep.reachable = ok
            if not ok:
                tier.breaker.failures = self.bcfg.breaker_failures
                tier.breaker.open(self._tick)

    async def _warm_up(self, pairs: list[tuple[Tier, Endpoint]]) -> None:
        """Before tick 0: ask the server how many requests it computes at once, then send one
        real-sized request — it finds out the structured-output format and meets the cold
        start (8–13 s on a CPU llama.cpp server) — within ``brain.warmup_timeout_s``. A server
        that fails it opens its tiers' breakers (the fish use instinct until it answers). The
        warm-up is a request like any other for ``request_budget``: none left, none sent."""
        if not self._spend():
            return
        ep = pairs[0][1]
        await self.transport.discover_slots(ep)
        for _, other in pairs[1:]:  # the same server: its slots are known now
            self.transport.bind(other)
        where = f"{redact_url(ep.cfg.base_url)} ({ep.cfg.model})"
        self._info(f"warming up the model server {where}: {ep.slots} slot{'s' if ep.slots > 1 else ''} "
                   f"({ep.slots_source}); the first answer of a cold server can take a while (waited for up to "
                   f"{self.bcfg.warmup_timeout_s:g} s: --set brain.warmup_timeout_s=S) …")
        start = self._loop.time()
        # (still waited for when the run ends: close() says so, and the summary shows it)
        self.warmup[redact_url(ep.cfg.base_url)] = {"model": ep.cfg.model, "pending": True, "since": time.monotonic()}
        fish = Perception(tick=0, view=_warm_view(self.cfg.perception.radius), food_here=False, energy=5000,
                          max_energy=10000, age=0, memories=())
        goals, ways = fitting_choices(fish.view)
        msgs = messages(fish, "a calm fish", "first_plan", plans=self.plans, tendency=self.bcfg.tendency,
                        prompt=self.prompt)
        record: dict[str, Any] = {"model": ep.cfg.model, "slots": ep.slots, "slots_from": ep.slots_source}
        sent: list[float] = []  # when each attempt went out (a request may queue for the slot first)
        try:
            text, p, c = await self.transport.complete(
                [ep], msgs, plan_formats(goals, ways) if self.plans else (JSON_SCHEMA_FORMAT, JSON_OBJECT_FORMAT),
                80, start + self.bcfg.warmup_timeout_s, attempt_s=self.bcfg.warmup_timeout_s, kind="warmup",
                dispatched=lambda _ep: sent.append(self._loop.time()))
            self._account(-1, p, c, pairs[0][0])
            self.stats.classes["warmup"] += 1
            # the server's time: from the last attempt's dispatch (a refused format's retry, the
            # slot's queue in front of it are not its answer time); the whole wait beside it
            now = self._loop.time()
            record.update(ok=True, seconds=round(now - (sent[-1] if sent else start), 2),
                          waited_s=round(now - start, 2), format=ep.format)
            queued = f"; {record['waited_s']} s in all" if record["waited_s"] - record["seconds"] >= 0.5 else ""
            _, read = judge_reply(text, fish.view, self.plans)
            if read in ("reply_empty", "reply_garbage", "reply_schema"):  # a reply, but no usable answer in it
                record.update(usable=False, read=read)
                self._warn(f"model server {where} replied to its warm-up in {record['seconds']} s (format "
                           f"{ep.format}{queued}) but gave no usable answer ({read}"
                           f"{': no message' if text is None else ''}); its fish's decisions may all fall back")
            else:
                self._info(f"model server {where} answered in {record['seconds']} s (format {ep.format}{queued})")
        except Failure as failure:
            record.update(ok=False, seconds=round(self._loop.time() - start, 2), error=failure.reason)
            silent = failure.reason in ("timeout", "connection", "tick_budget", "tick_budget_queued")
            self._warn(f"model server {where} failed its warm-up request ({failure.reason} after "
                       f"{record['seconds']} s)" + ("; fish use the instinct brain until it answers" if silent else ""))
            for t, _ in pairs:
                if silent:  # no answer at all: don't make tick 0 wait for it too
                    t.breaker.failures = self.bcfg.breaker_failures
                    t.breaker.open(self._tick)
                elif failure.server:
                    t.breaker.failed(self._tick)
        self.warmup[redact_url(ep.cfg.base_url)] = record

    def _info(self, msg: str) -> None:
        print(f"mirofish: {msg}", file=sys.stderr, flush=True)

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

    def _wanted(self, fish: int, tick: int) -> bool:
        """Is the request (tick, fish) still worth sending: not given up, not asked again since?"""
        return self._latest.get(fish) == tick and (tick, fish) not in self._given_up

    async def _decide(self, batch: RequestBatch, i: int) -> None:
        """One request: route, breaker, dispatch when the server has a free slot, and the
        fallback at ``brain.request_timeout_s`` from dispatch while the request stays open (its
        late answer replaces the fallback's plan if the fish has not asked again)."""
        fish, tick = int(batch.fish[i]), int(batch.tick)
        trigger, first = self._trigger_of(fish, int(batch.triggers[i]))
        assert batch.perceptions is not None and batch.personas is not None  # wants_perceptions
        tier = self.router.route(self._classify(batch, i, trigger, fish, tick), self.stats.tokens)
        lock_tick = tick if self.mode == "lockstep" else None
        view, recalled = batch.perceptions[i].view, batch.perceptions[i].recalled
        ask = self._decision_ask(batch, i, trigger)
        trace: dict[str, Any] = {}
        asked = tier or self.tiers["small"]

        def record(reply: str | None, read: str, cached: bool = False) -> list[dict[str, Any]]:
            return [exchange(tick=tick, fish=fish, kind="decision",
                             model=trace.get("model", asked.endpoints[0].cfg.model), msgs=ask.msgs,
                             formats=ask.formats, max_tokens=ask.max_tokens, trace=dict(trace), reply=reply, read=read,
                             tier=asked.name, view=view, cached=cached, recalled=recalled, **self._sampled())]

        hit = self._from_cache(asked, ask.msgs, ask.formats, ask.max_tokens)
        if hit is not None:  # answered as before, without the server
            trace.update(model=hit.get("model") or asked.endpoints[0].cfg.model)
            await self._deliver(batch, i, asked, hit["reply"], 0, False,
                                lambda reply, read: record(reply, read, cached=True))
            return
        missed = self.cache is not None
        admitted = self._admit(batch, i, tier, lock_tick, missed)
        if admitted is None:
            return
        tier, probe = admitted
        self._tick = max(self._tick, tick)
        if first and self.mode == "realtime":  # swim an instinct plan until the model's first answer
            self._swim_meanwhile(batch, i)
        answer = await self._call(batch, i, tier, probe, lock_tick, ask, trace, record, missed)
        if answer is None:
            return
        text, prompt_toks, completion_toks, fell_back = answer
        tier.breaker.outcome(True, probe, lock_tick, latency_s=trace.get("latency_s"))
        tier.calls += 1
        self._account(fish, prompt_toks, completion_toks, tier)  # the tokens were spent either way
        await self._deliver(batch, i, tier, text, prompt_toks + completion_toks, fell_back, record)

    def _trigger_of(self, fish: int, code: int) -> tuple[str, bool]:
        """The trigger of ``fish``'s request (its first request's timeout is ``first_plan``), and
        whether it is its first."""
        trigger = trigger_name(code)
        first = fish not in self._asked_before
        self._asked_before.add(fish)
        if first and trigger == "timeout":
            trigger = "first_plan"
        return trigger, first

    def _classify(self, batch: RequestBatch, i: int, trigger: str, fish: int, tick: int) -> str:
        """The class of request ``i`` (:func:`~.routing.classify`: what the fish has met, whether
        it is hungry and remembers places), counted."""
        assert batch.perceptions is not None
        seen = self._seen.get(fish)
        if seen is None:
            seen = self._seen[fish] = Familiar(self.bcfg.novel_baseline, self.bcfg.novel_forget_ticks)
        p = batch.perceptions[i]
        hungry = p.energy < self.cfg.triggers.hungry_fraction * batch.max_energy  # (the tank's line, as the triggers')
        klass = classify(trigger, batch.codes[i], seen, tick, recall=hungry and bool(p.places))
        self.stats.classes[klass] += 1
        self.stats.requests += 1
        return klass

    def _decision_ask(self, batch: RequestBatch, i: int, trigger: str) -> _Ask:
        """What request ``i`` asks: the fish's prompt, the reply formats its view fits (with the
        long-term summary when it is due, asked in the same request) and the reply's token cap."""
        assert batch.perceptions is not None and batch.personas is not None
        perception, persona = batch.perceptions[i], batch.personas[i]
        goals, ways = fitting_choices(perception.view, perception.places, batch.plans, perception.shown)
        formats = plan_formats(goals, ways, batch.plans) if self.plans else (JSON_SCHEMA_FORMAT, JSON_OBJECT_FORMAT)
        b = self.bcfg
        due = self._due_with_decision(batch, i)
        if due is not None:  # the due long-term summary is asked in this request: no request of its own
            formats = with_summary(formats)
        max_tokens = DECISION_TOKENS + (SUMMARY_TOKENS if due is not None else 0)
        msgs = messages(perception, persona, trigger, due[1] if due is not None else None, plans=self.plans,
                        memories=b.prompt_memories, summaries=b.prompt_summaries, tendency=b.tendency,
                        prompt=self.prompt, memory_tokens=b.memory_tokens, table=batch.plans)
        return _Ask(msgs, formats, max_tokens)

    def _admit(self, batch: RequestBatch, i: int, tier: Tier | None, lock_tick: int | None,
               missed: bool) -> tuple[Tier, bool] | None:
        """May request ``i`` go to ``tier``: a server to ask, tokens and requests left, the
        breaker's leave. Returns the tier and whether the call is the breaker's probe; None when
        the fallback has answered instead (with the reason)."""
        if self.offline:  # no server to ask: the cache did not hold it
            self._fallback(batch, i, "no_server", None, missed)
            return None
        if tier is None:
            self._fallback(batch, i, "budget_exhausted", None, missed)
            return None
        if not self._spend():
            self._fallback(batch, i, "request_budget_spent", None, missed)
            return None
        try:
            return tier, tier.breaker.admit(lock_tick)
        except Failure as failure:
            self._fallback(batch, i, failure.reason, None, missed)
            return None

    def _swim_meanwhile(self, batch: RequestBatch, i: int) -> None:
        """A fish's first request (realtime): an instinct plan to swim until the model's first answer."""
        self.stats.waiting += 1
        waiting = self.fallback.decide(batch.subset(np.array([i])))
        waiting.status = np.full(1, status_code("waiting_for_the_model"), np.int8)
        waiting.provisional = True
        self.results.put(waiting)

    async def _call(self, batch: RequestBatch, i: int, tier: Tier, probe: bool, lock_tick: int | None, ask: _Ask,
                    trace: dict[str, Any], record: Callable[[str | None, str], list[dict[str, Any]]],
                    missed: bool) -> tuple[str | None, int, int, bool] | None:
        """Request ``i`` sent to ``tier`` when one of its servers has a free slot; the fallback
        answers at ``request_timeout_s`` from dispatch while the call runs on. Returns the reply,
        its prompt and completion tokens and whether the fallback answered meanwhile; None when
        the call failed (its outcome counted, the fallback answering if it has not)."""
        fish, tick = int(batch.fish[i]), int(batch.tick)
        sent = asyncio.Event()
        call = self._loop.create_task(self.transport.complete(
            tier.endpoints, ask.msgs, ask.formats, ask.max_tokens,
            attempt_s=self.bcfg.abandon_after_s, wanted=lambda: self._wanted(fish, tick),
            dispatched=lambda ep: sent.set(), trace=trace,
            # a Retry-After longer than the tick's wait (lockstep) or the fallback's (realtime) fails the call at
            # once, counted rate_limited, not tick_timeout or timeout (the server asked to wait; it was not slow)
            patience_s=self.tick_wait() if lock_tick is not None else self.bcfg.request_timeout_s))
        fell_back = False  # the fallback has answered this request (the call runs on)
        dispatch = self._loop.create_task(sent.wait())
        try:
            await asyncio.wait({call, dispatch}, return_when=asyncio.FIRST_COMPLETED)
            dispatch.cancel()
            if not call.done():
                done, _ = await asyncio.wait({call}, timeout=self.bcfg.request_timeout_s)
                if not done:
                    if not probe:
                        tier.breaker.outcome(False, False, lock_tick, "timeout")
                    self._fallback(batch, i, "timeout", record(None, "timeout"), missed)
                    fell_back = True
            text, prompt_toks, completion_toks = await call
            trace.update(prompt_tokens=prompt_toks, completion_tokens=completion_toks)
            self._cached(trace, tier)
            if self.cache is not None:
                self.cache.put(cache_key(trace["model"], ask.msgs, schema_of(ask.formats), ask.max_tokens,
                                         *self._sampling()), text, prompt_toks, completion_toks, trace["model"])
        except Failure as failure:
            if failure.reason == "superseded":
                self.stats.superseded += 1
                if probe:
                    tier.breaker.probing = False
                return None
            if sent.is_set() and failure.reason != "connection":
                self.stats.wasted += 1  # the server was working on it (a refused connection computed nothing)
            if failure.server or probe:
                tier.breaker.outcome(False, probe, lock_tick, failure.reason)
            if not fell_back:
                self._fallback(batch, i, failure.reason, record(None, failure.reason), missed)
            return None
        except asyncio.CancelledError:
            call.cancel()
            dispatch.cancel()
            raise
        return text, prompt_toks, completion_toks, fell_back

    async def _deliver(self, batch: RequestBatch, i: int, tier: Tier, text: str | None, tokens: int,
                       fell_back: bool, record: Callable[[str | None, str], list[dict[str, Any]]]) -> None:
        """A model's reply (from the server, or from the reply cache) read into the fish's
        decision and put on ``results`` with its exchange (and a due summary's); a reply that
        cannot be used is a fallback with its reason."""
        fish, tick = int(batch.fish[i]), int(batch.tick)
        persona = batch.personas[i] if batch.personas else ""
        try:
            plan, reply = self._read(batch, i, text)
        except Failure as failure:
            if fell_back:
                self.stats.wasted += 1
            else:
                self._fallback(batch, i, failure.reason, record(text, failure.reason))
            return
        except Exception as exc:  # noqa: BLE001 — failure is data
            if not fell_back:
                self._fallback(batch, i, f"error_{type(exc).__name__}", record(text, f"error_{type(exc).__name__}"))
            return
        if self._latest.get(fish) != tick:
            self.stats.late += 1  # its fish has asked again meanwhile: dropped
            self.stats.wasted += 1
            return
        late = fell_back or (tick, fish) in self._given_up
        replaced = self._answered_by.pop(fish, None) if late else None
        if replaced is not None and replaced[0] == tick:  # one outcome a request: the fallback it replaces
            reason = replaced[1]                           # is counted no more
            self._replaced[(tick, fish)] = reason
            if len(self._replaced) > 4096:  # only the newest can still be dropped by the engine
                self._replaced.pop(next(iter(self._replaced)))
            self.stats.fallbacks[reason] -= 1
            if self.stats.fallbacks[reason] <= 0:
                del self.stats.fallbacks[reason]
            self.stats.late_used += 1
        else:
            late = False
            self.stats.decisions += 1
        self.stats.model_decisions += 1
        self.stats.model_tokens += tokens
        self._first_plan_s.setdefault(fish, time.monotonic() - self._born)
        if reply.thought:
            self.stats.thoughts += 1
            self.stats.thoughts_copied += copies(reply.thought, self.examples.thoughts)
        calls = record(text, "ok")
        written = (await self._summary_in(batch, i, reply, persona) if self._due_with_decision(batch, i) is not None
                   else await self._summary(batch, i, tier, persona, calls))
        self.results.put(DecisionBatch(
            tick=batch.tick, fish=np.array([fish]), tier=np.array([TIER_INDEX[tier.name]], np.int8),
            tokens=np.array([tokens]), thoughts=[reply.thought], summaries=written,
            status=np.full(1, LATE_ANSWER if late else 0, np.int8),
            meta={"late": True} if late else {}, calls=calls, **plan))

    def _read(self, batch: RequestBatch, i: int, text: str | None) -> tuple[dict[str, Any], PlanReply | FishReply]:
        """The plan (or action) in a reply, checked against the fish's view and the choices it
        was offered (:func:`~.prompt.judge_reply`); raises :class:`Failure` with the counted reason."""
        assert batch.perceptions is not None
        reply, read = judge_reply(text, batch.perceptions[i].view, self.plans, bool(batch.food_here[i]),
                                  batch.perceptions[i].places, batch.plans, batch.perceptions[i].shown)
        if read != "ok" or reply is None:
            raise Failure(read, server=False)
        if isinstance(reply, PlanReply):
            self.stats.clamped.update(reply.clamped)
            self.stats.ignored.update(reply.ignored)
            goal, param, horizon = reply.plan(batch.max_energy, batch.plans)
            return {"actions": None, "goals": [goal], "params": [param], "horizons": [horizon]}, reply
        return {"actions": np.array([Action.parse(reply.action)], np.int8)}, reply

    def _due_with_decision(self, batch: RequestBatch, i: int) -> tuple[int, str] | None:
        """Fish ``i``'s due long-term summary when it is asked inside its decision request
        (``brain.summaries = "with_decision"``), else None."""
        if self.bcfg.summaries != "with_decision" or not batch.summaries_due:
            return None
        return batch.summaries_due[i]

    def _summary_kept(self, summary: str) -> bool:
        """Is a model-written summary kept? One that is empty, junk, the ask's example or the ask
        itself is refused (:func:`~.copying.judge_summary`), counted by reason, never written
        into the fish's memory (the template summary stays) and never scored for drift."""
        refused = judge_summary(summary, self.examples)
        if refused is not None:
            self.stats.summaries_refused[refused] += 1
            return False
        self.stats.summaries_written += 1
        return True

    async def _summary_in(self, batch: RequestBatch, i: int, reply: PlanReply | FishReply,
                          persona: str) -> list[tuple[int, int, str]] | None:
        """The due summary a decision's reply wrote beside its plan (None: it wrote none, and the
        template text stays; counted ``summary_failed_missing``)."""
        due = batch.summaries_due[i] if batch.summaries_due else None
        assert due is not None
        fish = int(batch.fish[i])
        self.stats.summaries_asked += 1
        summary = (reply.summary or "").strip()
        if not summary:
            self.stats.classes["summary_failed_missing"] += 1
            return None
        if not self._summary_kept(summary):
            return None
        await self._track_drift(fish, summary, persona)
        return [(fish, due[0], summary)]

    async def _summary(self, batch: RequestBatch, i: int, tier: Tier, persona: str,
                       calls: list[dict[str, Any]]) -> list[tuple[int, int, str]] | None:
        """A due long-term summary, written by the model in a small request of its own before
        the decision is delivered (so lockstep stays reproducible; answered from the reply cache
        when it holds the request). None when none is due or the request failed (the template
        text stays; counted). Its exchange is appended to ``calls``."""
        due = batch.summaries_due[i] if batch.summaries_due else None
        if not due:
            return None
        fish, tick = int(batch.fish[i]), int(batch.tick)
        self.stats.summaries_asked += 1
        msgs = summary_messages(persona, due[1], self.prompt)
        trace: dict[str, Any] = {"model": tier.endpoints[0].cfg.model}
        text: str | None = None
        read = "ok"
        cached = self._from_cache(tier, msgs, SUMMARY_FORMATS, 60)
        try:
            if cached is not None:
                text = cached["reply"]
            elif not self._spend():
                raise Failure("request_budget_spent", server=False)
            else:
                text, p, c = await self.transport.complete(
                    tier.endpoints, msgs, SUMMARY_FORMATS, 60, attempt_s=self.bcfg.request_timeout_s, trace=trace,
                    kind="summary")
                trace.update(prompt_tokens=p, completion_tokens=c)
                self._cached(trace, tier)
                if self.cache is not None:
                    key = cache_key(trace["model"], msgs, schema_of(SUMMARY_FORMATS), 60, *self._sampling())
                    self.cache.put(key, text, p, c, trace["model"])
                self._account(fish, p, c, tier, prefix=False)
                self.stats.summary_tokens += p + c
            summary = parse_summary_reply(text)
        except (Failure, ReplyError) as failure:
            read = getattr(failure, "reason", "error")
            self.stats.classes[f"summary_failed_{read}"] += 1
            return None
        finally:
            calls.append(exchange(tick=tick, fish=fish, kind="summary", model=trace["model"], msgs=msgs,
                                  formats=SUMMARY_FORMATS, max_tokens=60, trace=trace, reply=text,
                                  read=read if read == "ok" or read.startswith("reply_") or text is None
                                  else f"reply_{read}", tier=tier.name, cached=cached is not None,
                                  **self._sampled()))
        if not self._summary_kept(summary):
            return None
        await self._track_drift(fish, summary, persona)
        return [(fish, due[0], summary)]

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

    def _cached(self, trace: dict[str, Any], tier: Tier) -> None:
        """The prompt tokens the server's prompt cache served for this completion, where it said."""
        n = trace.get("cached_tokens")
        if isinstance(n, int):
            self.stats.cached_tokens += n
            self.stats.cache_reports += 1
            tier.cached_tokens += n

    def _account(self, fish: int, prompt_toks: int, completion_toks: int, tier: Tier | None = None,
                 prefix: bool = True) -> None:
        """Tokens spent for ``fish`` (-1: no fish), on ``tier`` (priced with it), ``prefix``:
        the request began with the shared prefix (a summary or a question does not)."""
        s = self.stats
        s.prompt_tokens += prompt_toks
        s.completion_tokens += completion_toks
        if prefix:
            s.prefix_tokens += min(self._prefix_tokens, prompt_toks)
        if tier is not None:
            tier.prompt_tokens += prompt_toks
            tier.completion_tokens += completion_toks
        if 0 <= fish < self.tokens_by_fish.size:
            self.tokens_by_fish[fish] += prompt_toks + completion_toks

    def _from_cache(self, tier: Tier, msgs: list[dict[str, Any]], formats: tuple[dict[str, Any], dict[str, Any]] | None,
                    max_tokens: int) -> dict[str, Any] | None:
        """The reply cache's entry for this request to ``tier``'s model(s), or None. A recording
        made before the schemas' words changed (:func:`~.prompt.earlier_wordings`) holds its
        replies under the schema as it sent it: looked up that way too."""
        if self.cache is None:
            return None
        schema = schema_of(formats)
        return self.cache.get(*(cache_key(model, msgs, worded, max_tokens, *self._sampling())
                                for model in dict.fromkeys(ep.cfg.model for ep in tier.endpoints)
                                for worded in (schema, *earlier_wordings(schema))))

    def _fallback(self, batch: RequestBatch, i: int, reason: str, calls: list[dict[str, Any]] | None = None,
                  missed: bool = False) -> None:
        """The fallback decides request ``i``; ``missed``: the reply cache did not hold it and
        the server gave nothing (labelled ``cache_miss``, the server's reason counted apart).

        The decision (fault campaign 3, A5): a miss keeps the one status ``cache_miss`` whether
        no server was given (``no_server``) or the server asked failed (``http_500``,
        ``timeout`` …) — a recording keeps one status per decision, and older recordings read
        as they did — but the server's reason is never lost: ``miss_reasons`` counts it
        (``cache_miss_reasons`` in the summary and the fork's JSON), the decision's exchange
        keeps it as its ``read``, and ``trace`` shows ``cache_miss (server: http_500)``."""
        if (batch.tick, int(batch.fish[i])) in self._given_up:
            return  # the engine gave up on this request; its fallback already answered
        if missed:
            self.stats.miss_reasons[reason] += 1
            reason = "cache_miss"
        self.results.put(self._instead(batch.subset(np.array([i])), reason, calls))


def _warm_view(radius: int) -> str:
    """The warm-up request's view, the tank's side (2r+1): food north of the fish, a fish two cells
    east facing it (at the default radius ".....\n..F..\n..@.<\n.....\n.....")."""
    side = 2 * radius + 1
    grid = [["."] * side for _ in range(side)]
    grid[radius][radius], grid[radius - 1][radius] = "@", "F"
    grid[radius][min(radius + 2, side - 1)] = "<"
    return "\n".join("".join(row) for row in grid)

