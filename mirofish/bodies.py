"""A group's body beyond its energy costs: how far its fish swim a tick (docs/species.md, "Speed").

``GroupConfig.moves_per_tick``: a fish of a fast group whose move went through swims on the same
way, one cell a round, up to its group's cells a tick. :func:`swim_on` is called by both ticks
(compiled and numpy) after the moves and meals and before the food spawns, so they give the same
world by construction. A tank whose groups set no ``moves_per_tick`` never calls it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import arbiter
from .fish.targets import is_there
from .water import NO_FOOD

if TYPE_CHECKING:
    from .world import World


def swim_on(world: World, executed: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Fast groups' further cells this tick; returns the cells each fish swam on.

    Each cell costs a move (paid as it swims). A fish stops where something is in the way (the
    arbiter resolves each round as a tick's moves: glass, rock, a fish, another fish going there
    first), where its energy would not pay the cell after what the tick costs it anyway (its decay
    and its first move), and where what it came for is beside it: food on its cell or beside it (a
    fish that eats food), a fish it hunts in the eight cells around it (a hunter), or its plan's
    target once there (a place it returns to, a plant it hides or grazes by: fish/targets.py) —
    so a fast fish does not swim past its meal or its goal."""
    s, w = world.school, world.water
    fast = world.moves_of
    assert fast is not None
    swam = np.zeros(s.n, np.int32)
    going = np.flatnonzero((outcome == arbiter.MOVED) & (fast > 1))
    if not going.size:
        return swam
    cfg_a, pop = world.cfg.arbiter, world.population
    cost = world.move_cost_of if world.move_cost_of is not None else np.full(s.n, world.move_cost, np.int32)
    decay = world.decay_of if world.decay_of is not None else np.full(s.n, world.decay, np.int32)
    score = arbiter.priority(s.age, s.energy, world.max_energy, age_weight=cfg_a.age_weight,
                             energy_weight=cfg_a.energy_weight, age_cap=cfg_a.age_cap)
    tie = arbiter.tie_break(world.tick, world._id_keys)
    eats = ~pop.no_food if pop is not None else np.ones(s.n, bool)
    for more in range(1, int(fast.max())):
        # (the energy here is before the tick's decay and first move, which it pays in any case)
        going = going[(fast[going] > more) & (s.energy[going] - decay[going] - cost[going] >= cost[going])]
        going = going[~_came_for(world, going, eats)]
        if not going.size:
            break
        moving = np.zeros(s.n, bool)
        moving[going] = True
        targets = world.move_targets(s.cell, executed)
        out = arbiter.resolve_moves(s.cell, targets, moving, w.blocked, world.occupant, score, tie)
        going = np.flatnonzero(out == arbiter.MOVED)
        if not going.size:
            break
        world.occupant[s.cell[going]] = -1
        s.cell[going] = targets[going]
        world.occupant[s.cell[going]] = going
        s.energy[going] -= cost[going]
        swam[going] += 1
    return swam


def _came_for(world: World, going: np.ndarray, eats: np.ndarray) -> np.ndarray:
    """Which of ``going`` have what they came for beside them (see :func:`swim_on`)."""
    s, pop = world.school, world.population
    here = s.cell[going]
    food = (world.water.food_born[here[:, None] + world.eat_offsets[None, :]] != NO_FOOD).any(axis=1)
    stop: np.ndarray = food & eats[going]
    if pop is not None and pop.hunters and going.size:
        occ = world.occupant[here[:, None] + world.window[None, world.rings == 1]]
        prey = np.zeros(occ.shape, bool)
        seen = occ >= 0
        prey[seen] = pop.prey_of[np.broadcast_to(pop.of[going][:, None], occ.shape)[seen], pop.of[occ[seen]]]
        stop |= prey.any(axis=1)
    for goal, target in world._goals.seeks:
        mine = np.flatnonzero(s.plan_goal[going] == goal)
        if mine.size and target.on(world):
            dx, dy, found = target.find(world, going[mine])
            stop[mine] |= found & is_there(target, dx, dy)
    return stop
