"""Planner tanks stepped as one world: the engine of tanks joined by :class:`~mirofish.batch.Batch`.

:class:`JoinedEngine` does for every tank of a batch what that tank's own
:class:`~mirofish.engine.Engine` does in lockstep with the instinct planner (``Engine.step``),
one tick at a time: the fish that ask, over all tanks, are answered by **one call of the
planner**, each with its own tank's key (so its draws are those of its own run); each tank's
decisions are applied, the batch steps (one compiled call per stage), and each tank's observers
(its metrics, its decision history) get **its own frame** — its slice of the joined arrays and
its own decisions, in the order its engine would have taken them — or, when they are what a
headless run keeps and the engine is asked to (``observe_together``: a sweep's runs), are
observed all at once from the joined frame (:mod:`.together`). A tank may start from a
fork's first batch and hold a swapped plan (:class:`JoinedTank`), as a
:class:`~mirofish.session.fork.ForkSource` does, and have decisions replaced as an ablation
(:class:`~mirofish.session.influence_forks.Ablate`) replaces them.

Used by ``influence``'s forks of one tick (:mod:`.influence_joined`) and by a sweep's runs of one
setting (:func:`mirofish.session.headless.run_headless_joined`); each tank's state hash, metrics
and summary are its own run's (tests/test_influence_joined.py, tests/test_sweep_joined.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..batch import Batch
from ..brains.base import DecisionBatch, RequestBatch
from ..brains.instinct import InstinctPlanner, RandomChooser
from ..fish.triggers import trigger_name
from ..frame import Frame
from ..rng import KeyTable
from ..world import World
from .fork import held_again
from .together import together

if TYPE_CHECKING:
    from .influence_forks import Ablation

JOIN_FISH = 4096  # fish in one joined world at most: below where the compiled tick splits its loops
# over the cores (_tick.c's PARALLEL_FISH), which would crowd a sweep's or influence's workers;
# tanks that large gain little by joining (their compiled tick is most of a tick)


def tanks_a_world(fish: int, most: int) -> int:
    """How many tanks of ``fish`` fish one joined world takes: ``most`` at most, within :data:`JOIN_FISH`."""
    return max(1, min(most, JOIN_FISH // max(1, fish)))


KeyedBrain = InstinctPlanner | RandomChooser  # brains whose every answer is its fish's own: its key, its tick, its view


def keyed_brain(source: object) -> KeyedBrain | None:
    """``source`` if it is a brain a joined engine can ask for all its tanks at once — one that
    decides each fish from its request row, its key and the tick alone (the instinct planner, the
    random chooser) — else None. The action brain's tanks step alone: its utilities are a BLAS
    matrix product, whose kernels may sum in another order for another number of rows (joined and
    alone agreed in the runs compared, 8 seeds × 400 ticks at 60 and 240 fish, but the library
    promises no such thing)."""
    return source if isinstance(source, InstinctPlanner | RandomChooser) else None


def draws_watched(brain: KeyedBrain, world: World) -> bool:
    """May ``brain`` choose, in ``world``'s plan table, a plan that swims to a target or watches
    for its end (which a joined world refuses: Batch.apply_plans)?"""
    watched = world._goals.watched
    brain._adopt(world.plan_table)  # (the run's plan types)
    if isinstance(brain, InstinctPlanner):
        return any(watched[world.plan_table.code[t.name]] for t, _ in brain.formulas)
    return bool(brain.plans and np.count_nonzero(watched[brain._goals]))


@dataclass
class JoinedTank:
    """One tank of a joined run: who observes it, and what a fork starts it with.

    ``first``: the decisions of the batch's first tick (a fork's swapped batch; its fish ask
    nothing more that tick); ``hold``: ``(fish, plan, until)``, a plan answered again to a trigger
    before ``until`` (ForkSource's hold); ``ablation``: decisions replaced by the random chooser in
    its ticks (an ablation fork's :class:`~mirofish.session.influence_forks.Ablate`: a fish's every
    request answered by it after the hold's answers, or the planner's plans of one type redrawn in
    place); ``decided``: the planner's decisions for this tank so far."""

    observers: list[Callable[[Frame], None]]
    first: DecisionBatch | None = None
    hold: tuple[int, tuple[int, int, int], int] | None = None
    ablation: Ablation | None = None
    decided: int = 0


class JoinedEngine:
    """Steps a :class:`~mirofish.batch.Batch` of planner tanks (``planned=True``) with one
    ``planner`` for all (a :func:`keyed_brain`); ``keys``: each joined fish's key (its own tank's
    brain's)."""

    def __init__(self, batch: Batch, planner: KeyedBrain, tanks: list[JoinedTank], keys: np.ndarray,
                 observe_together: bool = False):
        """``observe_together``: observe the tanks at once where they can be (:mod:`.together`: a
        headless run's observers, no fork's batch, hold nor ablation); then :meth:`step` returns
        no frames, and :meth:`settle` must be called before a tank's observers are read."""
        if len(tanks) != batch.n_tanks or keys.size != batch.school.n:
            raise ValueError("a joined engine needs one tank and one key a fish of the batch")
        self.batch, self.planner, self.tanks = batch, planner, tanks
        planner._keys = KeyTable(0)  # (this planner decides for the joined fish only: by their tanks' keys)
        planner._keys.keys = np.ascontiguousarray(keys, np.uint64)
        self.n, self.first_tick = batch.fish_per_tank, batch.tick
        self.idle = np.zeros(batch.school.n, bool)  # no request is ever left open (inline answers)
        self.queued_at = np.full(batch.school.n, np.nan)  # when each fish last asked (NaN: not in this run)
        self.edges = np.arange(len(tanks) + 1, dtype=np.int64) * self.n
        self.xy_of = batch.tanks[0].water  # every tank's shape: a joined cell's tank coordinates
        self.ablating = any(t.ablation is not None for t in tanks)
        plain = not any(t.first is not None or t.hold is not None or t.ablation is not None for t in tanks)
        self.together = together([t.observers for t in tanks], self.n) if observe_together and plain else None

    def settle(self) -> None:
        """Every tank's observers brought up to date (those observed together: :meth:`Together.settle`)."""
        if self.together is not None:
            self.together.settle()

    def _answers(self) -> tuple[list[list[DecisionBatch]], DecisionBatch | None]:
        """Every tank's own answers this tick (first batch, hold), and the planner's for the rest."""
        w, n, tick = self.batch, self.n, self.batch.tick
        own: list[list[DecisionBatch]] = [[] for _ in self.tanks]
        first = tick == self.first_tick
        if first:
            for k, t in enumerate(self.tanks):
                if t.first is not None:
                    own[k].append(t.first)
        a = w.asks(self.idle)
        need = a.fish
        if not need.size:
            return own, None
        self.queued_at[need] = time.perf_counter()
        keep = np.ones(need.size, bool)
        if first:  # already answered by the tank's first batch
            for k, t in enumerate(self.tanks):
                if t.first is not None and len(t.first):
                    lo, hi = np.searchsorted(need, self.edges[k:k + 2])
                    keep[lo:hi] &= ~np.isin(need[lo:hi] - k * n, t.first.fish)
        for k, t in enumerate(self.tanks):
            if t.hold is None or tick >= t.hold[2]:
                continue
            fish = k * n + t.hold[0]
            row = int(np.searchsorted(need, fish))
            if row < need.size and need[row] == fish and keep[row]:
                keep[row] = False
                own[k].append(held_again(tick, t.hold, trigger_name(int(a.triggers[row]))))
        ablated = [(k, t.ablation) for k, t in enumerate(self.tanks)
                   if t.ablation is not None and t.ablation.inside(tick)] if self.ablating else ()
        for k, ab in ablated:
            if ab.fish is not None and 0 <= ab.fish < n:  # its request answered by the ablation (Ablate.submit;
                # a fish the tank has not is never asked for, so nothing is ablated, as alone)
                fish = k * n + ab.fish
                row = int(np.searchsorted(need, fish))
                if row < need.size and need[row] == fish and keep[row]:
                    keep[row] = False
                    own[k].append(ab.drawn(self._request(a, np.array([row]), k * n)))
        rows = np.flatnonzero(keep)
        if not rows.size:
            return own, None
        req = self._request(a, rows if rows.size < need.size else slice(None))
        live = self.planner.decide(req)
        for k, ab in ablated:
            if ab.goal is not None:
                live = self._redrawn(live, req, k, ab)
        return own, live

    def _request(self, a: Any, rows: np.ndarray | slice, base: int = 0) -> RequestBatch:
        """The requests of ``a``'s ``rows``; ``base``: the start of their one tank, its fish then
        numbered as in that tank (0: as in the joined world)."""
        w = self.batch
        fish = a.fish[rows] - base if base else a.fish[rows]
        return RequestBatch(tick=w.tick, fish=fish, triggers=a.triggers[rows], codes=a.codes[rows],
                            energy=a.energy[rows], max_energy=w.max_energy, heading=a.heading[rows],
                            traits=a.traits[rows], food_here=a.food_here[rows], refused=a.refused[rows],
                            plans=w.plan_table)

    def _redrawn(self, live: DecisionBatch, req: RequestBatch, k: int, ab: Ablation) -> DecisionBatch:
        """``live`` with tank ``k``'s plans of the ablated type redrawn by the ablation (Ablate.pump)."""
        lo, hi = np.searchsorted(live.fish, self.edges[k:k + 2])
        hit = lo + np.flatnonzero(live.goals[lo:hi] == ab.goal)
        if not hit.size:
            return live
        drawn = ab.drawn(self._request(req, hit, k * self.n), avoid=ab.goal)
        goals, params, horizons, tier = live.goals.copy(), live.params.copy(), live.horizons.copy(), live.tier.copy()
        goals[hit], params[hit], horizons[hit], tier[hit] = drawn.goals, drawn.params, drawn.horizons, drawn.tier
        return DecisionBatch.made(live.tick, live.fish, tier, live.status, live.tokens, goals, params, horizons)

    def step(self) -> list[Frame]:
        """One tick of every tank; each tank's frame, as its own engine would have made it, given
        to its observers (none when they are observed together: :meth:`_step_together`)."""
        w, n, tick = self.batch, self.n, self.batch.tick
        own, live = self._answers()
        if self.together is not None:
            self._step_together(live)
            return []
        per_tank: list[list[tuple[DecisionBatch, np.ndarray]]] = [[] for _ in self.tanks]
        for k, batches in enumerate(own):
            for b in batches:
                code = w.apply_plans(b.fish + k * n, b.goals, b.params, b.horizons, ended=True)
                assert code is not None  # (ended=True: what ended each plan, Frame.ended)
                per_tank[k].append((b, code))
        now = time.perf_counter()  # each decision's latency, as the engine counts it (NaN: not asked in this run)
        waited: list[list[float]] = [[] for _ in self.tanks]
        for k, got in enumerate(per_tank):
            for b, _ in got:
                waited[k] += (now - self.queued_at[b.fish + k * n]).tolist()
        if live is not None:
            ended = w.apply_plans(live.fish, live.goals, live.params, live.horizons, ended=True)
            assert ended is not None
            bounds = np.searchsorted(live.fish, self.edges).tolist()
            lat = (now - self.queued_at[live.fish]).tolist()
            local = live.fish % n  # each fish as numbered in its own tank
            for k, tank in enumerate(self.tanks):
                lo, hi = bounds[k], bounds[k + 1]
                if hi > lo:
                    part = DecisionBatch.made(  # (slices of the planner's batch: its types, contiguous)
                        tick, local[lo:hi], live.tier[lo:hi], live.status[lo:hi], live.tokens[lo:hi],
                        live.goals[lo:hi], live.params[lo:hi], live.horizons[lo:hi], plain=live.is_plain)
                    per_tank[k].append((part, ended[lo:hi]))
                    waited[k] += lat[lo:hi]
                    tank.decided += hi - lo
        thoughts = [[w.food_in_view(b.fish + k * n) if b.thoughts else None for b, _ in got]
                    for k, got in enumerate(per_tank)]
        f = self._world_frame(w.step(), [], [], [], [])
        frames = []
        for k, tank in enumerate(self.tanks):
            frame = _tank_frame(f, k, n, [b for b, _ in per_tank[k]], waited[k], [e for _, e in per_tank[k]],
                                thoughts[k])
            for obs in tank.observers:
                obs(frame)
            frames.append(frame)
        return frames

    def _world_frame(self, out: Any, applied: list[DecisionBatch], latencies: list[float], ended: list[np.ndarray],
                     seen: list[np.ndarray | None]) -> Frame:
        """The joined world's frame after its step ``out``: its fish all tanks' fish, at their
        tanks' coordinates."""
        s, w = self.batch.school, self.batch
        x, y = self.xy_of.xy(s.cell % w.cells_per_tank)
        present = ~s.absent if np.count_nonzero(s.absent) else None  # (fish taken out by hand)
        return Frame(tick=out.tick, x=x, y=y, heading=s.heading.copy(), energy=s.energy.copy(), stuck=s.stuck.copy(),
                     neighbours=s.neighbours.copy(), executed=out.executed, move_outcome=out.move_outcome,
                     applied=applied, latencies=latencies, interventions=[], present=present, ended=ended,
                     food_in_view=seen, native=True)

    def _step_together(self, live: DecisionBatch | None) -> None:
        """:meth:`step` for tanks observed together: one frame of the joined world (its fish all
        tanks' fish), each tank's own made only for a sample."""
        w, n = self.batch, self.n
        now = time.perf_counter()  # each decision's latency, as the engine counts it
        applied: list[DecisionBatch] = []
        ended: list[np.ndarray] = []
        bounds, lat = None, []
        seen: list[np.ndarray | None] = []
        if live is not None:
            code = w.apply_plans(live.fish, live.goals, live.params, live.horizons, ended=True)
            assert code is not None
            applied, ended = [live], [code]
            bounds = np.searchsorted(live.fish, self.edges).tolist()
            lat = (now - self.queued_at[live.fish]).tolist()
            for k, tank in enumerate(self.tanks):
                tank.decided += bounds[k + 1] - bounds[k]
            if live.thoughts:
                seen = [w.food_in_view(live.fish)]
        f = self._world_frame(w.step(), applied, lat, ended, seen)

        def frames() -> list[Frame]:  # each tank's own (a sample reads its positions and headings)
            return [_tank_frame(f, k, n, [], [], [], []) for k in range(len(self.tanks))]

        assert self.together is not None
        self.together.observe(f, bounds, live, frames)


def _tank_frame(f: Frame, k: int, n: int, applied: list[DecisionBatch], latencies: list[float],
                ended: list[np.ndarray], seen: list[np.ndarray | None]) -> Frame:
    """Tank ``k``'s frame (its ``n`` fish's slice of the joined world's ``f``), with its own
    decisions, their latencies, what ended each fish's plan and the food each saw."""
    sl = slice(k * n, (k + 1) * n)
    here = None if f.present is None or f.present[sl].all() else f.present[sl]
    return Frame(tick=f.tick, x=f.x[sl], y=f.y[sl], heading=f.heading[sl], energy=f.energy[sl], stuck=f.stuck[sl],
                 neighbours=f.neighbours[sl], executed=f.executed[sl], move_outcome=f.move_outcome[sl],
                 applied=applied, latencies=latencies, interventions=[], present=here, ended=ended,
                 food_in_view=seen, native=True)
