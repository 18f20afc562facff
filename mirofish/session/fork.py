"""Forks: one fish's decision swapped, the branch run live beside its parent.

A fork restores the world at tick T, applies T's decisions with one fish's swapped (for a
recording: the recorded decisions of T; for a live tank: only the swapped fish, the others
ask their brain as usual), and from then on lets a live brain decide. The parent — the
recording re-simulated, or the live tank itself — runs beside it, and the per-tick
divergence (fish in other cells, schooling and energy differences) is measured from both
sides' frames and metrics, the same way.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..actions import Action
from ..brains.base import TIER_INDEX, DecisionBatch, DecisionSource, RequestBatch
from ..brains.exchanges import ReplyCache
from ..brains.prompts import as_recorded
from ..brains.sources import make_source
from ..engine import Engine
from ..fish.plans import DEFAULT, G_HOLD, PlanTable
from ..fish.triggers import trigger_name
from ..frame import Frame
from ..interventions import InterventionError
from ..observe.recording import DIVERGENCE_COLUMNS, Recorder, Recording, RecordingError
from ..snapshot import TankView
from ..world import World
from .base import Session, observed, remembered
from .trust import ReaderChoice, reader_config

if TYPE_CHECKING:
    import concurrent.futures

    from ..config import Config
    from .live import LiveSession

_CELLS = DIVERGENCE_COLUMNS.index("cells_differ")


class ForkSource(DecisionSource):
    """At the fork tick: the intervention batch; afterwards (and for the others) a live brain.

    ``hold`` = (fish, plan, until): the swapped plan holds for its horizon — a trigger that
    would have the fish ask again before ``until`` (found company, food in view, stuck …) is
    answered with the same plan for the ticks left, its thought naming the trigger that did
    not end it (the fork's ``replan`` option lets the brain answer instead, as for any fish)."""

    name = "fork"

    def __init__(self, live: DecisionSource, tick: int, first: DecisionBatch,
                 recorded: Callable[[int], list[dict[str, Any]]] | None = None,
                 added: list[tuple[int, dict[str, Any]]] | None = None,
                 hold: tuple[int, tuple[int, int, int], int] | None = None):
        super().__init__()
        self.live, self.tick, self.first, self.hold = live, tick, first, hold
        self.held: list[tuple[int, str]] = []  # (tick, trigger) the hold answered
        self.recorded = recorded
        self.added: dict[int, list[dict[str, Any]]] = {}
        for t, iv in added or ():
            self.added.setdefault(t, []).append(iv)
        self.requests, self.results = live.requests, live.results  # share the live brain's queues
        self.wants_perceptions = live.wants_perceptions
        self.writes_summaries = live.writes_summaries

    def interventions_at(self, tick: int) -> list[dict[str, Any]]:
        """The parent recording's interventions (a fork reproduces them), and the ones the fork adds."""
        out = self.recorded(tick) if self.recorded is not None else []
        return out + self.added.get(tick, [])

    def begin_tick(self, tick: int) -> None:
        if tick == self.tick:
            self.results.put(self.first)
        else:
            self.live.begin_tick(tick)

    def submit(self, batch: RequestBatch) -> None:
        if batch.tick == self.tick:  # already answered by the intervention batch where it can be
            keep = ~np.isin(batch.fish, self.first.fish)
            if not keep.any():
                return
            batch = batch.subset(np.flatnonzero(keep))
        if self.hold is not None and batch.tick < self.hold[2]:
            mine = batch.fish == self.hold[0]
            if mine.any():
                trigger = trigger_name(int(batch.triggers[np.flatnonzero(mine)[0]]))
                self.held.append((batch.tick, trigger))
                self.results.put(held_again(batch.tick, self.hold, trigger))
                if mine.all():
                    return
                batch = batch.subset(np.flatnonzero(~mine))
        self.live.submit(batch)

    def pump(self) -> None:
        self.live.pump()

    def dropped_late(self, n: int, dropped: DecisionBatch | None = None) -> None:
        self.live.dropped_late(n, dropped)

    def give_up(self, batch: RequestBatch) -> DecisionBatch | None:
        return self.live.give_up(batch)

    def status(self) -> dict[str, Any]:
        return {"source": "fork", "live": self.live.status()}

    def ask(self, *args: Any) -> concurrent.futures.Future[dict[str, Any]] | None:
        """A question to a fish of the branch, by the live brain's model (None without one)."""
        ask = getattr(self.live, "ask", None)
        return ask(*args) if ask is not None else None

    def alerts(self) -> list[str]:
        alerts = getattr(self.live, "alerts", None)
        return alerts() if alerts is not None else []

    def close(self) -> None:
        self.live.close()


def fork_source(rec: Recording, tick: int, base_url: str | None = None, model: str | None = None,
                cache: ReplyCache | None = None, choice: ReaderChoice | None = None,
                pool_options: dict[str, Any] | None = None) -> DecisionSource:
    """The live brain of a fork of ``rec`` at ``tick``: the recording's own kind of brain, built
    only from what the user gives (``choice``: :mod:`~.trust` — a recording never makes us import
    code or contact a server). For a model run, a model pool whose reply cache holds every
    exchange the recording kept — a fish whose request is the same as in the recording gets the
    recorded reply without a server; the others ask the server the user gave
    (``--base-url``/``--model``), or fall back (``cache_miss``) without one — and which knows
    which fish had asked before ``tick`` (so their requests read as in the recording)."""
    if choice is None:
        choice = ReaderChoice(base_url=base_url, model=model)
    with as_recorded(rec.header):  # its model and user brains are asked in the recording's prompt text
        return _fork_source(rec, tick, cache, choice, pool_options)


def _fork_source(rec: Recording, tick: int, cache: ReplyCache | None, choice: ReaderChoice,
                 pool_options: dict[str, Any] | None = None) -> DecisionSource:
    if rec.config.brain.kind == "instinct" and not rec.config.fish.groups:
        return make_source(rec.config, "lockstep")
    pinned = {str(p.get("path") or "") for p in (rec.header.get("prompts") or {}).values()
              if isinstance(p, dict) and isinstance(p.get("text"), str)}
    cfg, offline = reader_config(rec.config, choice, pinned)
    # a model run, a user brain (which may chat) or a mixed tank: every recorded reply is cached
    cache = cache if cache is not None else ReplyCache()
    if getattr(cache, "filled_from", None) != str(rec.path):  # (influence: one fill for all its forks)
        cache.fill(rec.model_calls())
        cache.filled_from = str(rec.path)
    cache.hits = cache.misses = 0
    asked: set[int] = set()
    for tick0, d, _ in rec.chunks(rec.first_tick, tick):
        asked.update(d["fish"][tick0 + d["dt"].astype(np.int64) < tick].tolist())
    return make_source(cfg, "lockstep", cache=cache, asked_before=asked, offline=offline,
                       pool_options=pool_options if cfg.brain.kind == "llm" and not cfg.fish.groups else None)


def divergence_row(branch: Frame, parent: Frame, branch_schooling: float, parent_schooling: float) -> np.ndarray:
    """``DIVERGENCE_COLUMNS`` for one tick: fish in another cell, schooling degree difference
    (each side's own metric), mean energy difference (in energy units)."""
    cells = int(np.count_nonzero((branch.x != parent.x) | (branch.y != parent.y)))
    energy = float(branch.energy.mean() - parent.energy.mean()) / 100
    return np.array([cells, branch_schooling - parent_schooling, energy])


def plan_of(action: Action | str, plans: PlanTable = DEFAULT) -> tuple[int, int, int]:
    """A fork's plan: typed words read by ``plans`` (the run's table) strictly — a word it would
    skip is refused — or a single action held."""
    try:
        return plans.parse_plan(action, strict=True) if isinstance(action, str) else (G_HOLD, int(Action(action)), 1)
    except ValueError as exc:
        raise RecordingError(f"fork plan: {exc}") from None


def kept_decisions(batch: DecisionBatch | None, kind: str, fish: int, goal: int) -> DecisionBatch | None:
    """The recorded decisions ``batch`` of a fork's tick that the fork keeps: an ablation's
    (``kind`` "ablate_fish" of ``fish``, "ablate_goal" of ``goal``: influence's) are asked again,
    and so replaced; any other fork keeps them all."""
    if batch is not None and kind.startswith("ablate"):
        goals = batch.goals if batch.goals is not None else np.full(len(batch), -1)
        drop = (batch.fish == fish) if kind == "ablate_fish" else (goals == goal)
        batch = batch.subset(np.flatnonzero(~drop))
    return batch


def swapped_batch(recorded: DecisionBatch | None, tick: int, fish: int | None,
                  plan: tuple[int, int, int] | None, plans: PlanTable = DEFAULT) -> tuple[DecisionBatch, str | None]:
    """The decisions of ``tick`` as recorded with ``fish``'s replaced by ``plan`` (added where the
    fish decided nothing then; ``plan`` None: every decision as recorded), and the recorded plan
    it replaced in words (None: it had none). The others keep their thoughts, the long-term
    summaries their models wrote then, and the exchanges behind them (a model-written summary
    left out here would change every later prompt of its fish). :class:`ForkSession` and
    :mod:`~.influence` start every fork from it, so a bulk fork is the ``fork`` command's."""
    if recorded is None:
        recorded = DecisionBatch(tick=tick, fish=np.array([], np.int64), actions=np.array([], np.int8),
                                 tier=np.array([], np.int8))
    fish_ids = recorded.fish
    cols = [np.asarray(a).copy() for a in (recorded.goals, recorded.params, recorded.horizons, recorded.tier)]
    hit = np.flatnonzero(fish_ids == fish)
    original = plans.describe(cols[0][hit[0]], cols[1][hit[0]], cols[2][hit[0]]) if hit.size else None
    thoughts = list(recorded.thoughts) if recorded.thoughts else [""] * len(fish_ids)
    if fish is None or plan is None:  # interventions only: every decision as recorded
        pass
    elif hit.size:
        new = (*plan, TIER_INDEX["intervention"])
        for col, v in zip(cols, new):
            col[hit[0]] = v
        thoughts[hit[0]] = ""
    else:
        new = (*plan, TIER_INDEX["intervention"])
        order = np.searchsorted(fish_ids, fish)
        fish_ids = np.insert(fish_ids, order, fish)
        cols = [np.insert(col, order, np.array(v, col.dtype)) for col, v in zip(cols, new)]
        thoughts.insert(int(order), "")
    first = DecisionBatch(tick=tick, fish=fish_ids, actions=None, goals=cols[0], params=cols[1],
                          horizons=cols[2], tier=cols[3], thoughts=thoughts, summaries=recorded.summaries,
                          calls=[c for c in recorded.calls or () if c["fish"] != fish or c["kind"] == "summary"]
                          or None)
    return first, original


def held_again(tick: int, hold: tuple[int, tuple[int, int, int], int], trigger: str) -> DecisionBatch:
    """A fork's held plan answered again at ``tick`` to ``trigger`` (a trigger's name), for the
    ticks left to its end (ForkSource's hold; the joined forks' too, session/joined.py)."""
    fish, (goal, param, _), until = hold
    return DecisionBatch.one(tick, fish, goal, param, until - tick, "intervention",
                             f"the fork holds this plan to t{until}: {trigger.replace('_', ' ')} did not end it")


def held_plan(tick: int, fish: int | None, plan: tuple[int, int, int] | None,
              replan: bool) -> tuple[int, tuple[int, int, int], int] | None:
    """:class:`ForkSource`'s ``hold`` for a swapped plan (None: none, or the fish may re-plan)."""
    if fish is None or plan is None or replan:
        return None
    return fish, plan, tick + max(1, plan[2])


def inherited_hold(header: dict[str, Any] | None, tick: int, unless: int | None = None,
                   plans: PlanTable = DEFAULT) -> tuple[int, tuple[int, int, int], int] | None:
    """The hold of the fork a recording was made by (its header's ``fork_*`` keys) while ``tick``
    is inside its horizon: forking a fork keeps the person's forced plan held, as it keeps the
    recording's interventions — unless this fork swaps that same fish (``unless``)."""
    h = header or {}
    fish, action, t0 = h.get("fork_fish"), h.get("fork_action"), h.get("fork_tick")
    if not isinstance(fish, int) or not isinstance(action, str) or not isinstance(t0, int) or h.get("fork_replan") \
            or fish == unless:
        return None
    try:
        plan = plans.parse_plan(action.split(";")[0])
    except ValueError:
        return None
    until = t0 + max(1, plan[2])
    return (fish, plan, until) if t0 < tick < until else None


def _carry_memory(world: World, parent: Session, tick: int) -> None:
    """The branch's memory as the parent's was at the fork tick (docs/memory.md): a live parent's
    memory of its own is copied (its ``__deepcopy__``, else two_level for the branch, said in
    one line); a recording's ``vector`` memory (the tank's, or a group's) — shipped code, never a
    file the recording names — is rebuilt by replaying the recording from its first tick with one
    told every event (:func:`_shipped_memories`)."""
    part = parent.engine.world.recall_part
    inner = getattr(part, "inner", None)
    if inner is not None:
        try:
            world.attach_memory(copy.deepcopy(inner), getattr(part, "name", "memory"))
        except Exception as exc:  # noqa: BLE001 — someone else's memory that cannot be copied
            import sys

            print(f"mirofish: warning: the branch tells its fish the two-level memory: {part.name} cannot be "
                  f"copied ({type(exc).__name__}: {exc})", file=sys.stderr)
        return
    rec = getattr(parent, "recording", None)
    local = _shipped_memories(parent.cfg)
    if rec is None or local is None:
        return
    from .memories import attach

    again: Any = type(parent)(rec)  # type: ignore[call-arg]  # another replay of it, from its first tick (the parent is one)
    try:
        held = attach(again.engine.world, local)
        while held is not None and again.tick < tick and again.step() is not None:
            pass
        if held is not None:
            world.attach_memory(held.inner, held.name)
    finally:
        again.close()


def _shipped_memories(cfg: Config) -> Config | None:
    """``cfg`` with only shipped memories, for rebuilding a recording's: each group's (or the
    tank's) memory of a person's own made ``two_level`` (a recording's named file is never
    imported), embeddings from the local embedder (its server is never contacted); None when no
    fish was told the vector memory (nothing to rebuild: two_level and none are the tank's own)."""
    def shipped(kind: str) -> str:
        return kind if kind in ("two_level", "none", "vector") else "two_level"

    groups = cfg.fish.groups
    kinds = [cfg.memory.kind] + [g.memory or cfg.memory.kind for g in groups]
    if not any(shipped(k) == "vector" for k in (kinds[1:] if groups else kinds)):
        return None
    memory = cfg.memory.model_copy(update={"kind": shipped(cfg.memory.kind), "embedder": "local"})
    fish = cfg.fish.model_copy(update={"groups": [g.model_copy(update={"memory": shipped(g.memory)})
                                                  if g.memory is not None else g for g in groups]})
    return cfg.model_copy(update={"memory": memory, "fish": fish})


class ForkSession(Session):
    """An intervention, tick by tick: the branch runs live, the parent beside it.

    Build one with :func:`mirofish.session.replay.fork_recording` (the parent is a recording,
    re-simulated) or :meth:`from_live` (the parent is a live tank, which keeps running). ``curve`` holds
    ``[tick, *DIVERGENCE_COLUMNS]`` per compared tick.
    """

    kind = "fork"

    def __init__(self, parent: Session, fish: int | None, plan: tuple[int, int, int] | None,
                 recorded: DecisionBatch | None, source: DecisionSource, mode: str, owns_parent: bool,
                 added: list[tuple[int, dict[str, Any]]] | None = None, replan: bool = False):
        cfg = parent.cfg
        if fish is not None and not 0 <= fish < cfg.fish.slots:
            raise RecordingError(f"--fish {fish} does not exist (this tank has fish 0..{cfg.fish.slots - 1})")
        if (fish is None or plan is None) and not added:
            raise RecordingError("a fork needs a fish and its new plan, or an intervention")
        self.parent, self.fish_id, self.plan, self._owns_parent = parent, fish, plan, owns_parent
        self.replan = replan  # may the swapped fish re-plan on triggers before its horizon? (default: it holds)
        self.added = list(added or ())
        self.where: list[str] | None = None  # beside added: where each was given (FILE line N), named if refused
        from ..interventions import describe as describe_iv

        self.label = "; ".join([parent.plans.describe(*plan)] if fish is not None and plan is not None else []
                               + [f"{describe_iv(iv)} at t{t}" for t, iv in self.added])
        self.tick0 = parent.tick
        self._recorded = recorded
        self._source, self._mode = source, mode
        self.original: str | None = None
        self.recorder: Recorder | None = None
        self._start(source)

    def _start(self, source: DecisionSource) -> None:
        parent, fish, tick = self.parent, self.fish_id, self.tick0
        world = World(parent.cfg, registry=parent.registry)  # the parent run's plan types and metrics
        world.load_state_arrays(parent.state_arrays())
        first, self.original = swapped_batch(self._recorded, tick, fish, self.plan, parent.plans)
        rec = getattr(parent, "recording", None)  # a recording's own interventions happen in its forks too
        header = rec.header if rec is not None else None
        hold = (held_plan(tick, fish, self.plan, self.replan)
                or inherited_hold(header, tick, unless=fish, plans=parent.plans))
        self.fork_source = ForkSource(source, tick, first, rec.interventions_at if rec is not None else None,
                                      self.added, hold)
        _carry_memory(world, parent, tick)
        self.engine = Engine(world, self.fork_source, mode=self._mode)
        self.metrics = observed(self.engine, copy.deepcopy(parent.metrics))  # the same history up to T
        self.history = remembered(self.engine, parent.decisions().copy())
        self.curve: list[np.ndarray] = []
        self.first_diverged: int | None = None
        self._last_parent_frame: Frame | None = None

    # -- construction

    @classmethod
    def from_live(cls, live: LiveSession, fish: int, action: Action | str, replan: bool = False) -> ForkSession:
        """Fork a live tank now: ``fish`` follows ``action`` in the branch while the other fish
        ask their brain as usual; the live tank keeps running beside it as the parent (and
        :meth:`back` rewinds it to now)."""
        origin = live.mark()
        fork = cls(live, fish, plan_of(action, live.plans), None, make_source(live.cfg, live.mode), live.mode,
                   owns_parent=False, replan=replan)
        fork._origin = origin
        return fork

    _origin: tuple[Any, ...] | None = None  # a live parent's state at the fork tick

    def back(self) -> int:
        """End the branch and put the parent back at the fork tick (a live tank is rewound to it,
        a replay seeks there; a fork of a recording closes the replay it opened, and whoever
        shows the recording seeks it); returns that tick."""
        self.close()
        if self._owns_parent:
            return self.tick0
        if self._origin is not None:
            self.parent.rewind(self._origin)  # type: ignore[attr-defined]
        elif self.parent.can_seek:
            self.parent.seek(self.tick0)
        return self.tick0

    # -- stepping

    def step(self) -> Frame:
        try:
            frame = self.engine.step()
        except InterventionError as exc:  # an added fish with no room, no free water: named where it was given
            raise self._refused(exc) from None
        row = None
        parent_frame = self.parent.step()
        if parent_frame is not None:
            row = divergence_row(frame, parent_frame, self.metrics.schooling_now(), self.parent.metrics.schooling_now())
            self.curve.append(np.concatenate([[frame.tick + 1], row]))
            if self.first_diverged is None and row[_CELLS] > 0:
                self.first_diverged = frame.tick
        if self.recorder is not None:
            self.recorder.on_frame(frame, row)
        return frame

    def _refused(self, exc: InterventionError) -> Exception:
        """``exc`` (an intervention refused while the fork ran) with where the intervention was
        given (``FILE line N``, from :attr:`where`) in front, when it is one the fork added."""
        giving = exc.intervention  # (the engine names the one it was applying)
        at = next((k for k, (_, iv) in enumerate(self.added) if iv is giving), None)
        if giving is None or at is None or self.where is None or at >= len(self.where):
            return exc
        return InterventionError(f"{self.where[at]}: {exc}")

    def reset(self, seed: int | None = None) -> None:
        """Back to the fork point, the swap applied again (replays only: a live parent moved on)."""
        if not self.parent.can_seek:
            raise NotImplementedError("a fork of a live tank cannot go back to its fork point")
        self.parent.seek(self.tick0)
        self.engine.close()
        recording = getattr(self.parent, "recording", None)
        self._start(fork_source(recording, self.tick0, choice=getattr(self.parent, "choice", None))
                    if recording is not None else make_source(self.cfg, self._mode))

    # -- views

    def ghost_view(self) -> TankView:
        return self.parent.view()

    def summary(self) -> dict[str, Any]:
        rows = np.array([r[1:] for r in self.curve]) if self.curve else np.zeros((0, 3))
        parent_at_same = self.parent.tick == self.tick
        out = {
            "fork_tick": self.tick0, "fish": self.fish_id, "action": self.label, "recorded_action": self.original,
            "replan": self.replan, "held_against": [f"t{t} {trigger}" for t, trigger in self.fork_source.held],
            "ticks": self.tick - self.tick0, "final_tick": self.tick,
            "final_state_hash": self.state_hash(),
            "parent_state_hash_at_same_tick": self.parent.state_hash() if parent_at_same else None,
            "divergence": {
                "compared_ticks": len(rows),
                "first_tick_cells_differ": self.first_diverged,
                "cells_differ_final": int(rows[-1, 0]) if len(rows) else 0,
                "cells_differ_max": int(rows[:, 0].max()) if len(rows) else 0,
                "schooling_diff_final": round(float(rows[-1, 1]), 4) if len(rows) else 0.0,
                "energy_diff_final": round(float(rows[-1, 2]), 3) if len(rows) else 0.0,
            },
        }
        live = self._source.status()
        if "cache_hits" in live:  # a fork of a model run: how many requests its reply cache answered
            out["cache_hits"], out["cache_misses"] = live["cache_hits"], live["cache_misses"]
            out["model_decisions"], out["fallbacks"] = live["model_decisions"], live["fallbacks"]
            # a miss falls back labelled cache_miss; why the server (or its absence) gave nothing, counted apart
            out["cache_miss_reasons"] = live.get("cache_miss_reasons", {})
            if live.get("cache_damaged"):  # entries of --reply-cache DIR that were no entry (each a miss)
                out["cache_damaged"] = live["cache_damaged"]
        recording = getattr(self.parent, "recording", None)
        if recording is not None:
            out = {"parent": str(recording.path), **out}
        if self.recorder is not None:
            out["recording"] = str(self.recorder.path)
        return out

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
        self.engine.close()
        if self._owns_parent:
            self.parent.close()
