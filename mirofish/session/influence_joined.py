"""``influence``'s forks of one tick run as one world (mirofish/batch.py, stepped by
mirofish/session/joined.py): many tanks, one compiled call per stage, one planner call per tick
for all of them.

The forks of a recording at one tick start from the same state; each swaps one fish's decision
(or none: a baseline), so they are tanks of one shape. :func:`run_joined` lays them end to end
as a :class:`~mirofish.batch.Batch` and steps them together, doing for each tank exactly what a
fork's own :class:`~mirofish.engine.Engine` with its :class:`~mirofish.session.fork.ForkSource`
does (:meth:`Forker.run <mirofish.session.influence_forks.Forker.run>`):

* at the fork tick the tank's swapped batch of recorded decisions, its fish answered by it
  asking nothing more; a swapped plan held to its horizon (a trigger before then answered with
  the same plan, its thought naming the trigger);
* an ablation's decisions in the window replaced by its random chooser (one fish's every
  request; or every plan of one type the planner chooses, redrawn in place), as
  :class:`~mirofish.session.influence_forks.Ablate` replaces them — the chooser's draws, like
  the planner's, are hashed from each fish's own number and the tick;
* every other request of every tank answered by one call of the instinct planner, whose draws
  are hashed from each fish's own number and the tick — so a fish of tank ``k`` draws what it
  draws in its own run;
* each tank's frame — its slice of the joined arrays, its own decisions in the order its engine
  would have taken them — to the tank's own metrics, from which its outcome is read.

Each fork's outcome and final state hash equal :meth:`Forker.run`'s for the same task
(``tests/test_influence_joined.py``). What is not joined runs fork by fork (:func:`joinable`
says why): a brain other than the instinct planner or the random chooser, tanks with
groups, places, spare room, plants shown or a current, a recording with interventions inside
the forks' ticks, plans that swim to a target or watch for their end (``hide``, ``hunt`` …),
tanks of more than 2,048 fish (session/joined.py: JOIN_FISH), the numpy tick.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..batch import Batch, why_not
from ..brains.instinct import instinct_source
from ..world import World, goal_parts
from .fork import held_plan, inherited_hold, kept_decisions, swapped_batch
from .joined import JoinedEngine, JoinedTank, draws_watched, keyed_brain
from .replay import ReplaySource, run_registry

if TYPE_CHECKING:
    from .influence_forks import Forker, Task

# forks a plan swap (or nothing) makes, and ablations (the random chooser's draws are each fish's own)
JOINED_KINDS = ("alternative", "null", "keep", "baseline", "ablate_fish", "ablate_goal")
MAX_TANKS = 16  # forks stepped as one world at most (more were slower: bench/influence.py --sizes)


def joinable(forker: Forker) -> str | None:
    """Why the forks of ``forker``'s recording run one by one (None: they may be joined)."""
    cfg = forker.cfg
    if forker.swaps_brain or cfg.brain.kind != "instinct" or (cfg.brain.decides != "plan"
                                                              and cfg.brain.chooser != "random"):
        return "its forks are not decided by the instinct planner or the random chooser"
    reason = why_not(cfg, planned=True)
    if reason:
        return reason
    if forker.outcome.kind not in ("metric", "fish", "user"):
        return f"its outcome ({forker.outcome.kind}) is read one fork at a time"
    return None


def fits(forker: Forker, task: Task) -> bool:
    """May ``task`` be stepped with other forks of its tick? Its kind swaps a plan (or none) or
    ablates, and its plan neither swims to a target nor watches for its end (those steps are a
    tank's own; an ablation's random chooser drawing such plans :func:`run_joined` checks)."""
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
    tanks: list[JoinedTank] = []
    kept: list[Any] = []  # each fork's metrics
    ablations = [forker.ablation(t) if t.kind.startswith("ablate") else None for t in tasks]
    if any(ab is not None and draws_watched(ab.choosers[0], w) for ab in ablations):
        return None
    for task, ablation in zip(tasks, ablations):
        fish, plan = _task_plan(forker, task)
        first, _ = swapped_batch(kept_decisions(recorded, task.kind, task.fish, task.goal), tick, fish, plan, plans)
        hold = held_plan(tick, fish, plan, False) or inherited_hold(rec.header, tick, unless=fish, plans=plans)
        goals = [int(g) for g in first.goals] + ([hold[1][0]] if hold is not None else [])
        if any(watched[g] for g in goals if 0 <= g < watched.size):
            return None  # (Batch.apply_plans would refuse it)
        metrics = forker.fork_metrics()
        tanks.append(JoinedTank([metrics.observe], first=first, hold=hold, ablation=ablation))
        kept.append(metrics)
    try:
        batch = Batch([w] * len(tasks), planned=True, alike=True)
    except ValueError:
        return None
    source = keyed_brain(instinct_source(forker.cfg))
    if source is None or draws_watched(source, w):
        return None
    n = w.school.n
    stepper = JoinedEngine(batch, source, tanks, np.tile(source._keys[np.arange(n)], len(tanks)))  # one seed
    values: list[list[float]] = [[] for _ in tanks]  # each fork's outcome at each tick read
    while batch.tick < outcome.t1:
        frames = stepper.step()
        if batch.tick >= outcome.t0:
            for k, frame in enumerate(frames):
                world = None if outcome.kind == "metric" else batch.world(k)
                values[k].append(outcome.reads(world, kept[k], frame))  # type: ignore[arg-type]
    return [{"outcome": float(np.mean(v)), "final_hash": batch.world(k).state_hash()} for k, v in enumerate(values)]


__all__ = ["JOINED_KINDS", "MAX_TANKS", "fits", "joinable", "run_joined"]
