"""The one interface through which every decision reaches the engine (docs/design.md §3).

A *decision source* — the instinct brain, a model worker pool, a recording being replayed,
an intervention — owns two queues: the engine puts :class:`RequestBatch` objects on
``requests`` and takes :class:`DecisionBatch` objects from ``results``. Sources that work
in the engine's thread (the instinct brain, replay) answer inside :meth:`DecisionSource.pump`;
threaded sources (the model pool) answer from their own thread and ``pump`` does nothing.
Either way the engine code path is the same, which is what keeps replay exact.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, ClassVar

import numpy as np

from ..fish.perception import Perception
from ..fish.plans import DEFAULT as DEFAULT_PLANS
from ..fish.plans import PlanTable, hold

TIERS = ("instinct", "small", "large", "fallback", "replay", "intervention", "user")  # user: your own brain
TIER_INDEX = {name: i for i, name in enumerate(TIERS)}

# Per-decision status: 0 for a decision its brain made, else why the fallback answered
# (failure is data: counted, recorded per decision and shown by trace, report and the window,
# never raised). Codes 0–3 are those of recordings made before reasons were recorded.
STATUS_NAMES = ("ok", "tick_timeout", "invalid", "error", "timeout", "connection", "server_error", "rate_limited",
                "breaker_open", "budget_exhausted", "reply_malformed", "reply_too_large", "illegal_plan",
                "tick_budget", "waiting_for_the_model", "cache_miss", "brain_raised", "brain_hung", "brain_garbage",
                "late_answer")
# ``late_answer``: a model plan that came after the fallback had answered its request, and replaced
# it while its fish had not asked again. A request has one outcome: such a plan is counted in
# place of the fallback it replaced (the fish's latest fallback), never beside it — tiers, model
# share and fallback rate add up (:func:`late_replaces`).
OK, TIMEOUT, INVALID, ERROR = 0, 1, 2, 3
_STATUS = {name: i for i, name in enumerate(STATUS_NAMES)}


def status_code(reason: str) -> int:
    """The per-decision status code of a fallback ``reason`` (a model pool's failure code)."""
    if reason in _STATUS:
        return _STATUS[reason]
    if reason == "request_budget_spent":  # influence's --max-requests: a budget like the tokens'
        return _STATUS["budget_exhausted"]
    if reason.startswith("http_5"):
        return _STATUS["server_error"]
    if reason.startswith("reply_"):
        return _STATUS["reply_malformed"]
    if reason.endswith(("_without_fish", "_into_glass", "_without_plant")) or reason.startswith("illegal"):
        return _STATUS["illegal_plan"]
    return ERROR


LATE_ANSWER = STATUS_NAMES.index("late_answer")


def late_replaces(last_fallback: np.ndarray, fish: np.ndarray, status: np.ndarray | None) -> list[tuple[int, int]]:
    """The one accounting of a request's outcome, for counters fed decision by decision:
    ``(fish, status of the fallback it replaces)`` for each late model answer in a batch (the
    fish's latest fallback; -1: none seen, e.g. a fork's first ticks). ``last_fallback`` (a
    fish-indexed int array, -1 for none) is updated: the batch's fallbacks are remembered and a
    replaced one forgotten. Counters take one decision off the fallback tier and off that
    reason for each pair, so a late answer moves a request from fallback to model."""
    if status is None or not fish.size:
        return []
    f = np.asarray(fish, np.int64)
    keep = (f >= 0) & (f < last_fallback.size)
    if not keep.all():
        f, status = f[keep], np.asarray(status)[keep]
    st = np.asarray(status, np.int16)
    late = st == LATE_ANSWER
    out = list(zip(f[late].tolist(), last_fallback[f[late]].tolist())) if late.any() else []
    waiting = st == _STATUS["waiting_for_the_model"]  # a waiting plan is no answer: leaves it as it was
    last_fallback[f] = np.where(late | (st == 0), -1, np.where(waiting, last_fallback[f], st))
    return out


def status_name(code: int) -> str:
    return STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else f"status_{code}"


@dataclass
class RequestBatch:
    """The fish that need a decision at ``tick`` and what each of them perceives.

    Arrays are aligned with ``fish``. ``codes`` are the view codes (the text view is
    ``perceptions[i].view``); ``perceptions`` is filled only for sources that ask for text.
    """

    tick: int
    fish: np.ndarray
    triggers: np.ndarray
    codes: np.ndarray
    energy: np.ndarray
    max_energy: int
    heading: np.ndarray
    traits: np.ndarray
    food_here: np.ndarray
    refused: np.ndarray  # (k, 4) bool: directions refused or blocked lately (from memory, hard_timeout ticks)
    queued_at: float = 0.0
    perceptions: list[Perception] | None = None
    personas: list[str] | None = None
    # (serial, facts) of a long-term summary the source may write in its own words, per request
    summaries_due: list[tuple[int, str] | None] | None = None
    # (k, 3) when fish remember places (World.place_options): the place with the most meals
    # (slot, -1: none), the meals there, its distance in cells; None in tanks without places
    places: np.ndarray | None = None
    # (k,) plant cells each fish is shown in view (perception.plants_seen; None: plants not shown)
    plants: np.ndarray | None = None
    # (k,) fish of groups it hunts in each fish's view (docs/species.md; None: the tank has no hunters)
    prey: np.ndarray | None = None
    # (k,) fish of groups that hunt it in each fish's view (None: no group flees its hunters)
    hunters: np.ndarray | None = None
    # (k,) plant cells with a bite left in each fish's view (mirofish/grazing.py; None: no group eats plants)
    bites: np.ndarray | None = None
    # the run's plan types (its registry's: mirofish/registry.py); goal codes in a reply are its
    plans: PlanTable = DEFAULT_PLANS

    def __len__(self) -> int:
        return int(self.fish.size)

    def subset(self, pick: np.ndarray) -> RequestBatch:
        """The requests at positions ``pick`` (indices into this batch)."""
        pick = np.asarray(pick, np.int64)
        return replace(
            self, fish=self.fish[pick], triggers=self.triggers[pick], codes=self.codes[pick],
            energy=self.energy[pick], heading=self.heading[pick], traits=self.traits[pick],
            food_here=self.food_here[pick], refused=self.refused[pick],
            perceptions=[self.perceptions[i] for i in pick] if self.perceptions is not None else None,
            personas=[self.personas[i] for i in pick] if self.personas is not None else None,
            summaries_due=[self.summaries_due[i] for i in pick] if self.summaries_due is not None else None,
            places=self.places[pick] if self.places is not None else None,
            plants=self.plants[pick] if self.plants is not None else None,
            prey=self.prey[pick] if self.prey is not None else None,
            hunters=self.hunters[pick] if self.hunters is not None else None,
            bites=self.bites[pick] if self.bites is not None else None,
        )


@dataclass
class DecisionBatch:
    """Answers for (some of) the fish of a request batch. Arrays aligned with ``fish``.

    A decision is a plan (``goals``, ``params``, ``horizons``; see :mod:`mirofish.fish.plans`).
    A source that decides single actions passes ``actions`` instead: each becomes a ``hold``
    plan; ``actions`` stays as given (None for a batch of plans: a hold plan's action is its
    ``params``).
    """

    # Fields typed ``np.ndarray`` with a None default are filled by __post_init__.
    tick: int  # the tick the requests were made at
    fish: np.ndarray
    actions: np.ndarray | None
    tier: np.ndarray  # index into TIERS
    status: np.ndarray = None  # type: ignore[assignment]  # per decision (status_code); OK by default
    tokens: np.ndarray = None  # type: ignore[assignment]  # prompt + completion tokens per decision; 0 by default
    thoughts: list[str] | None = None
    # (fish, serial, text): long-term summaries written by the source (a model), applied with the decisions
    summaries: list[tuple[int, int, str]] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    # True: a plan to swim while the fish's request is still open (realtime, waiting for a model's
    # first answer); the engine applies it and keeps the request pending
    provisional: bool = False
    # the model exchanges behind these decisions (dicts, see brains/exchanges.py; each names its
    # fish): what was sent and said, kept by recordings; None for brains that ask no model
    calls: list[dict[str, Any]] | None = None
    goals: np.ndarray = None  # type: ignore[assignment]
    params: np.ndarray = None  # type: ignore[assignment]
    horizons: np.ndarray = None  # type: ignore[assignment]
    # True: made with every decision of one tier, each status OK and no tokens (the embedded
    # brains' batches): while its tier, status and tokens are still the arrays it was made with
    # (is_plain), the metrics count it without reading them (Metrics._count_decisions)
    plain: bool = False

    @property
    def is_plain(self) -> bool:
        """Made plain, and its tier, status and tokens not replaced since (a fallback's batch
        whose status a model pool sets afterwards is not plain any more). The arrays are
        compared by identity: change a plain batch's tier, status or tokens by replacing them."""
        made = self._plain_arrays
        return made is not None and made[0] is self.tier and made[1] is self.status and made[2] is self.tokens

    # (tier, status, tokens) as made, for a batch made plain; None else (not a field: set by
    # __post_init__, so by replace() too, and by made())
    _plain_arrays: ClassVar[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = None

    def __post_init__(self) -> None:
        self.fish = np.asarray(self.fish, np.int64)
        if self.status is None:
            self.status = np.zeros(self.fish.size, np.int8)
        if self.tokens is None:
            self.tokens = np.zeros(self.fish.size, np.int64)
        if self.goals is None:
            assert self.actions is not None, "a decision batch needs plans or actions"
            self.goals, self.params, self.horizons = hold(self.actions)
        else:
            self.goals = np.asarray(self.goals, np.int8)
            self.params = np.asarray(self.params, np.int16)
            self.horizons = np.asarray(self.horizons, np.int16)
        self.__dict__["_plain_arrays"] = (self.tier, self.status, self.tokens) if self.plain else None

    def __len__(self) -> int:
        return int(self.fish.size)

    @classmethod
    def made(cls, tick: int, fish: np.ndarray, tier: np.ndarray, status: np.ndarray, tokens: np.ndarray,
             goals: np.ndarray, params: np.ndarray, horizons: np.ndarray, plain: bool = False) -> DecisionBatch:
        """A batch of plans whose arrays are already what ``__post_init__`` makes them (``fish`` int64,
        ``tier`` and ``status`` int8, ``tokens`` int64, ``goals`` int8, ``params`` and ``horizons``
        int16, all as long as ``fish``), made without its conversions: the compiled planner's batch,
        every tick. The other fields are their defaults, as the constructor's."""
        b = cls.__new__(cls)
        d = b.__dict__
        d.update(_BATCH_DEFAULTS)
        for name, make in _BATCH_FACTORIES:
            d[name] = make()
        d.update(tick=tick, fish=fish, actions=None, tier=tier, status=status, tokens=tokens, goals=goals,
                 params=params, horizons=horizons, plain=plain, _plain_arrays=(tier, status, tokens) if plain else None)
        return b

    @classmethod
    def one(cls, tick: int, fish: int, goal: int, param: int, horizon: int, tier: str, thought: str) -> DecisionBatch:
        """One fish's plan, decided outside any brain (a fork's hold, a person playing the fish)."""
        return cls(tick=tick, fish=np.array([fish], np.int64), actions=None, goals=np.array([goal], np.int8),
                   params=np.array([param], np.int16), horizons=np.array([horizon], np.int32),
                   tier=np.array([TIER_INDEX[tier]], np.int8), thoughts=[thought])

    def subset(self, pick: np.ndarray) -> DecisionBatch:
        """The decisions at positions ``pick`` (indices into this batch)."""
        pick = np.asarray(pick, np.int64)
        keep = set(self.fish[pick].tolist())
        return replace(
            self, fish=self.fish[pick], actions=None if self.actions is None else self.actions[pick],
            tier=self.tier[pick], status=self.status[pick], tokens=self.tokens[pick], goals=self.goals[pick],
            params=self.params[pick], horizons=self.horizons[pick],
            thoughts=[self.thoughts[i] for i in pick] if self.thoughts is not None else None,
            summaries=[x for x in self.summaries if x[0] in keep] if self.summaries is not None else None,
            calls=[c for c in self.calls if c["fish"] in keep] if self.calls is not None else None,
        )


# DecisionBatch.made's fields that it is not given: their defaults, and the factories of the others
_BATCH_DEFAULTS = {f.name: f.default for f in fields(DecisionBatch) if f.default is not MISSING}
_BATCH_FACTORIES = tuple((f.name, f.default_factory) for f in fields(DecisionBatch) if f.default_factory is not MISSING)


class DecisionSource:
    """Base class: two queues and a ``pump``. Subclasses answer requests."""

    name = "source"
    wants_perceptions = False  # True → the engine renders text perceptions into requests
    writes_summaries = False  # True → requests carry the fish's newest unwritten summary facts
    needs_requests = True  # False → the source decides on its own (a replay); the engine builds none
    # True → a fish still waiting for its first answer swims provisional plans ("waiting for the
    # model"), and when one ends the engine asks for another (renew_waiting) instead of leaving the
    # fish on a plan that has ended (a realtime model pool: its first answer may be minutes away)
    renews_waiting = False

    def renew_waiting(self, batch: RequestBatch) -> None:
        """These fish (``batch``: requests built as usual, none of them submitted) still wait for
        their first answer, and their provisional plan has ended: put another provisional
        :class:`DecisionBatch` for them on ``results``. Only asked when :attr:`renews_waiting`."""

    def begin_tick(self, tick: int) -> None:
        """Called by the engine at the start of every tick, before any request of that tick.

        Sources that know their answers in advance (a replay, an intervention) put them on
        ``results`` here.
        """

    def interventions_at(self, tick: int) -> list[dict[str, Any]]:
        """Hands-on interventions this source knows for ``tick`` (a replay: the recorded ones;
        see :mod:`mirofish.interventions`); the engine applies them before anything else."""
        return []

    def __init__(self) -> None:
        self.requests: queue.SimpleQueue[RequestBatch] = queue.SimpleQueue()
        self.results: queue.SimpleQueue[DecisionBatch] = queue.SimpleQueue()

    def submit(self, batch: RequestBatch) -> None:
        self.requests.put(batch)

    def pump(self) -> None:
        """Answer queued requests in the caller's thread; threaded sources leave this empty."""

    def status(self) -> dict[str, Any]:
        """Whatever the source wants the HUD and the run summary to show."""
        return {"source": self.name}

    def tick_wait(self) -> float | None:
        """Lockstep: seconds a tick waits without any answer before it gives up on the rest
        (None: ``brain.timeout_s``)."""
        return None

    def progress(self) -> int:
        """A count that grows whenever the source's server finishes a piece of work (lockstep
        waits on while it grows, even before a decision is delivered); 0 for sources without one."""
        return 0

    def dropped_late(self, n: int, dropped: DecisionBatch | None = None) -> None:
        """The engine dropped ``n`` late answers (their fish had asked again meanwhile): the
        decisions ``dropped`` (a source that counts its decisions takes them back: they were
        never applied, so no request has them as its outcome)."""

    def give_up(self, batch: RequestBatch) -> DecisionBatch | None:
        """Lockstep: the tick's wait for these requests is over. A source with a fallback
        answers them now (their late answers are then dropped); None leaves the fish on their
        standing plans."""
        return None

    def close(self) -> None:
        """Stop threads, close connections."""


class InlineSource(DecisionSource):
    """A source that computes answers synchronously with ``decide``."""

    def __init__(self, decide: Callable[[RequestBatch], DecisionBatch]):
        super().__init__()
        self._decide = decide

    def decide(self, batch: RequestBatch) -> DecisionBatch:
        """Answer ``batch`` now, in the caller's thread."""
        return self._decide(batch)

    def pump(self) -> None:
        requests = self.requests
        while not requests.empty():  # (no exception raised per tick to find the queue empty)
            batch = requests.get_nowait()
            if batch.fish.size:
                self.results.put(self._decide(batch))
