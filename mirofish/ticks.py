"""The tick itself, two ways: in numpy (the reference) and in the compiled module (``_tick.c``).

:meth:`World.step <mirofish.world.World.step>` runs one of them (``World.tick_kernel``; see
:mod:`mirofish.kernel`), then what both share after it (the population's rules, plan predicates,
grazing, currents). Both steer, arbitrate the moves and meals, let a fast group swim on
(:mod:`mirofish.bodies`), let grazers bite (:mod:`mirofish.grazing`), spawn and rot food, and do
the after-tick bookkeeping — energy, counters, views, plan triggers, memories — and give the same
world on the same seed, tick by tick (``tests/test_kernel.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import arbiter
from .bodies import swim_on
from .fish import memory as mem
from .fish.plantypes import EVENTS
from .fish.triggers import (
    T_ATE,
    T_CROWDED,
    T_ENERGY_REACHED,
    T_FOOD_GONE,
    T_FOUND_COMPANY,
    T_HORIZON,
    T_HUNGRY_FOOD,
    T_LOST_COMPANY,
    T_LOW_ENERGY,
    T_STUCK,
)
from .kernel import positional
from .water import NO_FOOD

if TYPE_CHECKING:
    from .world import World

EVENTS_IN_ORDER = ("exhausted", "refused", "blocked", "ate", "food_taken", "nothing_to_eat", "low_energy",
                   "food_seen", "neighbours")  # the memory events of a tick, in the order they are remembered
EVENT_ORDER = np.array([getattr(mem, name.upper()) for name in EVENTS_IN_ORDER], np.int8)
_EV = {name: i for i, name in enumerate(EVENTS_IN_ORDER)}  # their columns in World._flags / _args

# the plan events' columns of GoalParts.flags (World.GOAL_FLAG_COLUMNS: the plan types' EVENTS)
_F_PLANNED, _F_FORAGE, _F_SCHOOL, _F_REST, _F_ROAMING, _F_CROWD, _F_HUNGRY = range(len(EVENTS))
_NONE32 = np.zeros(0, np.int32)  # (after()'s per-fish bodies when no group has its own)
_NONE8 = np.zeros(0, np.int8)  # (after()'s sight and rings when every fish sees the whole window)


@dataclass
class StepOutcome:
    """What happened in one tick, per fish (read-only for observers)."""

    tick: int  # the tick that was simulated
    executed: np.ndarray  # action each fish actually attempted (exhausted → rest)
    move_outcome: np.ndarray  # arbiter.MOVED / STAYED / BLOCKED / CROWDED / OCCUPIED
    ate: np.ndarray  # bool
    food_spawned: int
    food_rotted: int


def step_numpy(world: World) -> StepOutcome:
    """World.step's tick in numpy (the reference the compiled tick is tested against)."""
    s, w, t = world.school, world.water, world.tick
    n, eat, rest = s.n, world.eat_action, world.rest_action  # (the grid's: mirofish/grid.py)
    executed = world.steer()
    if world.used_slots != n or np.count_nonzero(s.absent):
        executed[s.absent] = rest  # out of the water: it only rests
    s.intent = executed.copy()

    cfg_a = world.cfg.arbiter
    score = arbiter.priority(s.age, s.energy, world.max_energy, age_weight=cfg_a.age_weight,
                             energy_weight=cfg_a.energy_weight, age_cap=cfg_a.age_cap)
    tie = arbiter.tie_break(t, world._id_keys)

    moving = executed < eat
    targets = world.move_targets(s.cell, executed)
    outcome = arbiter.resolve_moves(s.cell, targets, moving, w.blocked, world.occupant, score, tie)
    has_food = w.food_born != NO_FOOD
    eaters, eat_result, eaten = arbiter.resolve_eats(s.cell, executed == eat, has_food, world.eat_offsets, score, tie)

    moved = (outcome == arbiter.MOVED).nonzero()[0]
    if moved.size:
        world.occupant[s.cell[moved]] = -1
        s.cell[moved] = targets[moved]
        world.occupant[s.cell[moved]] = moved
        s.heading[moved] = executed[moved]
    w.food_born[eaten] = NO_FOOD
    swam = swim_on(world, executed, outcome) if world.moves_of is not None else None
    if world.grazing is not None:
        grazed = world.grazing.graze(world, eaters[eat_result == arbiter.NO_FOOD], t)
        eat_result[np.isin(eaters, grazed)] = arbiter.ATE

    spawned = w.spawn_food(world.rng, t)
    rotted = w.rot_food(t)

    ate_mask = np.zeros(n, bool)
    ate_mask[eaters[eat_result == arbiter.ATE]] = True
    if world.decay_of is None or world.move_cost_of is None:
        e = s.energy - world.decay
        e[moved] -= world.move_cost
    else:  # each group's own body
        e = s.energy - world.decay_of
        e[moved] -= world.move_cost_of[moved]
    e[ate_mask] += world.food_energy - world.eat_cost
    e[(executed == rest) & (s.energy < world.rest_ceiling)] += world.rest_gain
    before = s.energy
    s.energy = np.minimum(np.maximum(e, 0), world.energy_tops).astype(np.int32)
    s.age += 1

    # Bookkeeping.
    refused = (outcome == arbiter.CROWDED) | (outcome == arbiter.OCCUPIED)
    bumped = outcome == arbiter.BLOCKED
    stuck = refused | bumped
    s.stuck[stuck] += 1
    stuck_idx = stuck.nonzero()[0]
    s.refused_at[stuck_idx, executed[stuck_idx]] = t
    s.stuck[~stuck] = 0  # a streak of refusals ends when the fish's own intent works (move, rest, eat)
    np.maximum(s.max_stuck, s.stuck, out=s.max_stuck)
    s.action_counts[s.ids, executed] += 1
    s.moves[moved] += 1
    if swam is not None:
        s.moves += swam
    s.refusals[stuck] += 1
    s.eats[ate_mask] += 1
    taken = np.zeros(n, bool)
    taken[eaters[eat_result == arbiter.TAKEN]] = True
    nothing = np.zeros(n, bool)
    nothing[eaters[eat_result == arbiter.NO_FOOD]] = True
    s.failed = stuck | taken | nothing

    food_before, nb_before = s.food_seen, s.neighbours
    food_seen, neighbours = world.look()
    s.food_rose = food_seen > food_before
    s.neighbours_changed = neighbours != nb_before
    s.company_ticks[neighbours > 0] += 1
    if world.plans:
        plan_events(world, ate_mask, before, food_seen, neighbours)

    # Memories, in this order within a tick (columns of EVENT_ORDER), filled in place.
    level = s.energy // 100
    flags, args = world._flags, world._args
    col = _EV
    np.logical_and(before > 0, s.energy == 0, out=flags[:, col["exhausted"]])
    for name, happened in (("refused", refused), ("blocked", bumped), ("ate", ate_mask), ("food_taken", taken),
                           ("nothing_to_eat", nothing), ("food_seen", s.food_rose),
                           ("neighbours", s.neighbours_changed)):
        flags[:, col[name]] = happened
    np.logical_and(before >= world.low_line, s.energy < world.low_line, out=flags[:, col["low_energy"]])
    way = executed if not world.grid.hex else executed + np.int16(mem.HEX_MOVE_ARG)
    for name, arg in (("refused", way), ("blocked", way), ("ate", level), ("low_energy", level),
                      ("food_seen", food_seen), ("neighbours", neighbours)):
        args[:, col[name]] = arg
    s.memory.record_many(t, flags, EVENT_ORDER, args)

    world.tick = t + 1
    world._summarize()
    return StepOutcome(t, executed, outcome, ate_mask, spawned, rotted)


@positional
def step_compiled(world: World) -> StepOutcome:
    """World.step's tick in the compiled module (mirofish/_tick.c): the same tick, fish by fish in C."""
    s, w, t, k = world.school, world.water, world.tick, world._kernel
    assert k is not None
    n, trig, cfg_a, m = s.n, world.cfg.triggers, world.cfg.arbiter, s.memory
    executed = world.steer()
    if world.used_slots != n or np.count_nonzero(s.absent):
        executed[s.absent] = world.rest_action  # out of the water: it only rests
    s.intent = executed.copy()
    outcome, meal = k.arbitrate(  # by name (kernel.ARBITRATE_ARRAYS, ARBITRATE_INTS): two new arrays
        {"executed": executed, "cell": s.cell, "heading": s.heading, "age": s.age, "energy": s.energy,
         "id_keys": world._id_keys, "blocked": w.blocked, "occupant": world.occupant, "food_born": w.food_born,
         "best": world._best, "delta": world.delta, "eat_offsets": world.eat_offsets},
        {"tick": t, "max_energy": world.max_energy, "age_weight": cfg_a.age_weight,
         "energy_weight": cfg_a.energy_weight, "age_cap": cfg_a.age_cap})
    swam = swim_on(world, executed, outcome) if world.moves_of is not None else None
    if world.grazing is not None:
        meal[world.grazing.graze(world, np.flatnonzero(meal == arbiter.NO_FOOD), t)] = arbiter.ATE
    spawned, rotted = w.feed_compiled(k, world.rng, t)
    before = s.energy
    (s.energy, s.failed, codes, food_seen, neighbours, food_rose, changed) = k.after(  # (new arrays)
        # by name: the C side refuses a missing, unknown or misspelt one (kernel.AFTER_ARRAYS)
        {"executed": executed, "outcome": outcome, "meal": meal, "before": before,
         "age": s.age, "stuck": s.stuck, "refused_at": s.refused_at, "max_stuck": s.max_stuck,
         "action_counts": s.action_counts, "moves": s.moves, "refusals": s.refusals, "eats": s.eats,
         "cell": s.cell, "heading": s.heading, "blocked": w.blocked,
         "occupant": world.occupant, "food_born": w.food_born, "window": world.window,
         "food_seen_old": s.food_seen, "neighbours_old": s.neighbours, "company_ticks": s.company_ticks,
         "plan_goal": s.plan_goal, "plan_param": s.plan_param, "plan_end": s.plan_end,
         "plan_trigger": s.plan_trigger, "no_food": s.no_food, "alone": s.alone,
         "crowded": s.crowded, "hungry_food": s.hungry_food, "goal_flags": world._goals.flags_u8,
         "mem_tick": m.tick, "mem_code": m.code, "mem_arg": m.arg, "mem_count": m.count,
         "event_order": EVENT_ORDER, "decay_of": _NONE32 if world.decay_of is None else world.decay_of,
         "move_cost_of": _NONE32 if world.move_cost_of is None else world.move_cost_of,
         "max_energy_of": _NONE32 if world.max_energy_of is None else world.max_energy_of,
         "sight": _NONE8 if world.sight is None else world.sight,
         "rings": _NONE8 if world.sight is None else world.rings},
        {"tick": t, "decay": world.decay, "move_cost": world.move_cost,
         "food_gain": world.food_energy - world.eat_cost, "rest_gain": world.rest_gain,
         "rest_ceiling": world.rest_ceiling, "max_energy": world.max_energy, "low_line": world.low_line,
         "hungry_line": world.hungry_line, "plan_events": int(world.plans),
         "alone_ticks": trig.alone_ticks, "crowd_line": trig.crowd_line,
         "forage_patience": trig.forage_patience, "stuck_ticks": trig.stuck_ticks, "mem_size": m.size,
         "t_horizon": T_HORIZON, "t_found_company": T_FOUND_COMPANY, "t_crowded": T_CROWDED,
         "t_hungry_food": T_HUNGRY_FOOD, "t_lost_company": T_LOST_COMPANY, "t_food_gone": T_FOOD_GONE,
         "t_energy_reached": T_ENERGY_REACHED, "t_ate": T_ATE, "t_stuck": T_STUCK,
         "t_low_energy": T_LOW_ENERGY, "sated_line": world.sated_line, "block_cells": world.block_cells})
    world.codes = codes
    s.food_seen, s.neighbours, s.food_rose, s.neighbours_changed = food_seen, neighbours, food_rose, changed
    if swam is not None:
        s.moves += swam
    world.tick = t + 1
    if not world.tick % world.cfg.memory.summary_every:
        world._summarize()
    return StepOutcome(t, executed, outcome, meal == arbiter.ATE, spawned, rotted)


def plan_events(world: World, ate: np.ndarray, before: np.ndarray, food_seen: np.ndarray,
                neighbours: np.ndarray) -> None:
    """After a tick: which plans ended or failed, and what salient happened (plan triggers).

    Later lines win: failing (stuck) and low energy outrank a plan's ordinary end.
    """
    s, t = world.school, world.cfg.triggers
    goal = world._goals.flags[s.plan_goal]  # (n, flags) — which events matter to each fish's goal
    seen_food, company = food_seen > 0, neighbours > 0
    s.no_food = np.where(seen_food, 0, s.no_food + 1)
    was_alone = s.alone >= t.alone_ticks
    s.alone = np.where(company, 0, s.alone + 1)
    crowded = (neighbours >= t.crowd_line) | (s.crowded & (neighbours >= t.crowd_line - 2))
    hungry_food = (s.energy < world.hungry_line) & seen_food
    ev = np.where(world.tick + 1 >= s.plan_end, T_HORIZON, -1).astype(np.int8)
    ev[goal[:, _F_ROAMING] & was_alone & company] = T_FOUND_COMPANY
    ev[goal[:, _F_CROWD] & crowded & ~s.crowded] = T_CROWDED
    ev[goal[:, _F_HUNGRY] & hungry_food & ~s.hungry_food] = T_HUNGRY_FOOD
    ev[goal[:, _F_SCHOOL] & (s.alone == t.alone_ticks)] = T_LOST_COMPANY
    forage = goal[:, _F_FORAGE]
    ev[forage & (s.no_food >= t.forage_patience)] = T_FOOD_GONE
    ev[goal[:, _F_REST] & (s.energy >= s.plan_param.astype(np.int32) * 100)] = T_ENERGY_REACHED
    # a meal ends a forage plan only when it made the fish sated (sated_line 0: every meal);
    # a forager with nothing left in view searches on until food_gone or its horizon
    sated = ((before < world.sated_line) & (s.energy >= world.sated_line)) | (world.sated_line == 0)
    ev[forage & ate & sated] = T_ATE
    ev[goal[:, _F_PLANNED] & (s.stuck > 0) & (s.stuck % t.stuck_ticks == 0)] = T_STUCK
    ev[~forage & (before >= world.low_line) & (s.energy < world.low_line)] = T_LOW_ENERGY
    s.crowded, s.hungry_food = crowded, hungry_food
    raised = ev >= 0
    s.plan_trigger[raised] = ev[raised]
