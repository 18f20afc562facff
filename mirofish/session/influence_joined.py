"""``influence``'s forks of one tick run as one world (mirofish/batch.py): many tanks, one
compiled call per stage, one planner call per tick for all of them.

The forks of a recording at one tick start from the same state; each swaps one fish's decision
(or none: a baseline), so they are tanks of one shape. :func:`run_joined` lays them end to end
as a :class:`~mirofish.batch.Batch` and steps them together, doing for each tank exactly what a
fork's own :class:`~mirofish.engine.Engine` with its :class:`~mirofish.session.fork.ForkSource`
does (:meth:`Forker.run <mirofish.session.influence_forks.Forker.run>`):

* at the fork tick the tank's swapped batch of recorded decisions, its fish answered by it
  asking nothing more; a swapped plan held to its horizon (a trigger before then answered with
  the same plan, its thought naming the trigger);
* every other request of every tank answered by one call of the instinct planner, whose draws
  are hashed from each fish's own number and the tick — so a fish of tank ``k`` draws what it
  draws in its own run;
* each tank's frame — its slice of the joined arrays, its own decisions in the order its engine
  would have taken them — to the tank's own metrics, from which its outcome is read.

Each fork's outcome and final state hash equal :meth:`Forker.run`'s for the same task
(``tests/test_influence_joined.py``). What is not joined runs fork by fork (:func:`joinable`
says why): ablations, a brain other than the instinct planner, tanks with groups, places, spare
room, plants shown or a current, a recording with interventions inside the forks' ticks, plans
that swim to a target or watch for their end (``hide``, ``hunt`` …), the numpy tick.
"""

from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..batch import Batch, why_not
from ..brains.base import DecisionBatch, RequestBatch
from ..brains.instinct import InstinctPlanner, instinct_source
from ..fish.triggers import T_HORIZON, trigger_name
from ..frame import Frame
from ..world import World, goal_parts
from .fork import held_plan, inherited_hold, swapped_batch
from .replay import ReplaySource, run_registry

if TYPE_CHECKING:
    from .influence_forks import Forker, Task

JOINED_KINDS = ("alternative", "null", "keep", "baseline")  # forks a plan swap (or nothing) makes
MAX_TANKS = 16  # forks stepped as one world at most (more were slower: bench/influence.py --sizes)


def joinable(forker: Forker) -> str | None:
    """Why the forks of ``forker``'s recording run one by one (None: they may be joined)."""
    cfg = forker.cfg
    if forker.swaps_brain or cfg.brain.kind != "instinct" or cfg.brain.decides != "plan" \
            or cfg.brain.chooser not in ("instinct", "never_school"):
        return "its forks are not decided by the instinct planner"
    reason = why_not(cfg, planned=True)
    if reason:
        return reason
    if forker.outcome.kind not in ("metric", "fish", "user"):
        return f"its outcome ({forker.outcome.kind}) is read one fork at a time"
    return None


def fits(forker: Forker, task: Task) -> bool:
    """May ``task`` be stepped with other forks of its tick? Its kind swaps a plan (or none), and
    its plan neither swims to a target nor watches for its end (those steps are a tank's own)."""
    if task.kind not in JOINED_KINDS:
        return False
    _, plan = _task_plan(forker, task)
    return plan is None or not goal_parts(forker.rec.plans).watched[plan[0]]


def _task_plan(forker: Forker, task: Task) -> tuple[int | None, tuple[int, int, int] | None]:
    if task.kind in ("alternative", "null", "keep"):
        return task.fish, forker.rec.plans.parse_plan(task.plan)
    return None, None


def _clear_interventions(forker: Forker, t0: int, t1: int) -> bool:
    """No recorded intervention applies in ticks ``t0`` … ``t1``."""
    return not any(t0 <= t <= t1 for t in forker.rec.interventions())


class _Tank:
    """One fork inside the joined world: its first batch, its hold, its metrics and outcome."""

    def __init__(self, first: DecisionBatch, hold: tuple[int, tuple[int, int, int], int] | None, metrics: Any):
        self.first, self.hold, self.metrics = first, hold, metrics
        self.values: list[float] = []


def run_joined(forker: Forker, tasks: list[Task]) -> list[dict[str, Any]] | None:
    """The results of ``tasks`` (all at one tick, kinds of :data:`JOINED_KINDS`), each as
    :meth:`Forker.run` gives it; None when they cannot be stepped as one (then run them one by
    one: nothing was changed that :meth:`Forker.run` reads)."""
    tick, outcome = tasks[0].tick, forker.outcome
    if any(t.tick != tick or t.kind not in JOINED_KINDS for t in tasks) or outcome.t1 <= tick:
        return None
    if not _clear_interventions(forker, tick, outcome.t1):
        return None
    rec, plans = forker.rec, forker.rec.plans
    forker.seek(tick)
    state = forker.player.state_arrays()
    recorded = ReplaySource(rec).batch_at(tick)
    w = World(forker.cfg, registry=run_registry(rec))  # every fork starts from this state (Batch alike)
    w.load_state_arrays(state)
    watched = w._goals.watched
    if w.has_extras or np.count_nonzero(watched[w.school.plan_goal]):
        return None  # a plan that swims to a target or watches for its end is held: the tanks step alone
    # a loaded state has the world look for such plans at its next tick (World.refresh); with none
    # held, that look finds none and changes nothing: it is done here, so the tanks join
    w._seeking = w._predicating = False
    tanks = []
    for task in tasks:
        fish, plan = _task_plan(forker, task)
        first, _ = swapped_batch(recorded, tick, fish, plan, plans)
        hold = held_plan(tick, fish, plan, False) or inherited_hold(rec.header, tick, unless=fish, plans=plans)
        goals = [int(g) for g in first.goals] + ([hold[1][0]] if hold is not None else [])
        if any(watched[g] for g in goals if 0 <= g < watched.size):
            return None  # (Batch.apply_plans would refuse it)
        tanks.append(_Tank(first, hold, copy.deepcopy(forker.player.metrics)))
    try:
        batch = Batch([w] * len(tasks), planned=True, alike=True)
    except ValueError:
        return None
    source = instinct_source(forker.cfg)
    if not isinstance(source, InstinctPlanner):
        return None
    source._adopt(w.plan_table)  # the run's plan types: may the planner draw one that is watched?
    if any(watched[w.plan_table.code[t.name]] for t, _ in source.formulas):
        return None
    stepper = _Joined(batch, source, tanks)
    while batch.tick < outcome.t1:
        frames = stepper.step()
        if batch.tick >= outcome.t0:
            for k, (tank, frame) in enumerate(zip(tanks, frames)):
                world = None if outcome.kind == "metric" else batch.world(k)
                tank.values.append(outcome.reads(world, tank.metrics, frame))  # type: ignore[arg-type]
    return [{"outcome": float(np.mean(t.values)), "final_hash": batch.world(k).state_hash()}
            for k, t in enumerate(tanks)]


class _Joined:
    """The engine of the joined forks (Engine.step, lockstep, an inline planner), one tick at a time."""

    def __init__(self, batch: Batch, planner: InstinctPlanner, tanks: list[_Tank]):
        self.batch, self.planner, self.tanks = batch, planner, tanks
        self.n, self.fork_tick = batch.fish_per_tank, batch.tick
        self.idle = np.zeros(batch.school.n, bool)  # no request is ever left open (inline answers)
        self.queued_at = np.full(batch.school.n, np.nan)  # when each fish last asked (NaN: not in this run)
        self.edges = np.arange(len(tanks) + 1, dtype=np.int64) * self.n
        self.xy_of = batch.tanks[0].water  # every tank's shape: a joined cell's tank coordinates

    def _answers(self) -> tuple[list[list[DecisionBatch]], DecisionBatch | None]:
        """Every tank's own answers this tick (first batch, hold), and the planner's for the rest."""
        w, n, tick = self.batch, self.n, self.batch.tick
        own: list[list[DecisionBatch]] = [[] for _ in self.tanks]
        if tick == self.fork_tick:
            for k, t in enumerate(self.tanks):
                own[k].append(t.first)
        a = w.asks(self.idle)
        need = a.fish
        if not need.size:
            return own, None
        self.queued_at[need] = time.perf_counter()
        keep = np.ones(need.size, bool)
        if tick == self.fork_tick:  # already answered by the tank's first batch
            for k, t in enumerate(self.tanks):
                if len(t.first):
                    lo, hi = np.searchsorted(need, self.edges[k:k + 2])
                    keep[lo:hi] &= ~np.isin(need[lo:hi] - k * n, t.first.fish)
        for k, t in enumerate(self.tanks):
            if t.hold is None or tick >= t.hold[2]:
                continue
            fish, (goal, param, _), until = t.hold
            row = int(np.searchsorted(need, k * n + fish))
            if row < need.size and need[row] == k * n + fish and keep[row]:
                keep[row] = False
                trigger = trigger_name(int(a.triggers[row]))
                own[k].append(DecisionBatch.one(
                    tick, fish, goal, param, until - tick, "intervention",
                    f"the fork holds this plan to t{until}: {trigger.replace('_', ' ')} did not end it"))
        rows = np.flatnonzero(keep)
        if not rows.size:
            return own, None
        pick = rows if rows.size < need.size else slice(None)
        req = RequestBatch(tick=tick, fish=need[pick] % n, triggers=a.triggers[pick], codes=a.codes[pick],
                           energy=a.energy[pick], max_energy=w.max_energy, heading=a.heading[pick],
                           traits=a.traits[pick], food_here=a.food_here[pick], refused=a.refused[pick],
                           plans=w.plan_table)  # each fish by its number in its own tank: its own draws
        got = self.planner.decide(req)
        got.fish = need[pick]
        return own, got

    def step(self) -> list[Frame]:
        """One tick of every tank; each tank's frame, as its own engine would have made it."""
        w, n, tick = self.batch, self.n, self.batch.tick
        own, live = self._answers()
        s = w.school
        per_tank: list[list[tuple[DecisionBatch, np.ndarray]]] = [[] for _ in self.tanks]
        for k, batches in enumerate(own):
            for b in batches:
                fish = b.fish + k * n
                per_tank[k].append((b, self._ended(fish)))
                w.apply_plans(fish, b.goals, b.params, b.horizons)
        if live is not None:
            ended = self._ended(live.fish)
            w.apply_plans(live.fish, live.goals, live.params, live.horizons)
            bounds = np.searchsorted(live.fish, self.edges)
            for k in range(len(self.tanks)):
                lo, hi = int(bounds[k]), int(bounds[k + 1])
                if hi > lo:
                    part = DecisionBatch(tick=tick, fish=live.fish[lo:hi] - k * n, actions=None,
                                         tier=live.tier[lo:hi], status=live.status[lo:hi],
                                         tokens=live.tokens[lo:hi], goals=live.goals[lo:hi],
                                         params=live.params[lo:hi], horizons=live.horizons[lo:hi])
                    per_tank[k].append((part, ended[lo:hi]))
        thoughts = [[w.food_in_view(b.fish + k * n) if b.thoughts else None for b, _ in got]
                    for k, got in enumerate(per_tank)]
        now = time.perf_counter()  # each decision's latency, as the engine counts it (NaN: not asked in this run)
        waited = [[(now - self.queued_at[b.fish + k * n]).tolist() for b, _ in got] for k, got in enumerate(per_tank)]
        out = w.step()
        x, y = self.xy_of.xy(s.cell % w.cells_per_tank)
        heading, energy, stuck, nb = s.heading.copy(), s.energy.copy(), s.stuck.copy(), s.neighbours.copy()
        frames = []
        for k, tank in enumerate(self.tanks):
            sl = slice(k * n, (k + 1) * n)
            frame = Frame(tick=out.tick, x=x[sl], y=y[sl], heading=heading[sl], energy=energy[sl], stuck=stuck[sl],
                          neighbours=nb[sl], executed=out.executed[sl], move_outcome=out.move_outcome[sl],
                          applied=[b for b, _ in per_tank[k]], latencies=[v for got in waited[k] for v in got],
                          interventions=[], present=None, ended=[e for _, e in per_tank[k]],
                          food_in_view=thoughts[k], native=True)
            tank.metrics.observe(frame)
            frames.append(frame)
        return frames

    def _ended(self, fish: np.ndarray) -> np.ndarray:
        """Engine.step's ``ended`` for decisions of ``fish`` (joined numbers) at this tick."""
        s = self.batch.school
        code: np.ndarray = s.plan_trigger[fish]  # (a copy)
        code[(code >= 0) & (s.plan_end[fish] <= self.batch.tick)] = T_HORIZON
        return code


__all__ = ["JOINED_KINDS", "MAX_TANKS", "fits", "joinable", "run_joined"]
