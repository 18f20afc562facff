"""Plants as food: groups that graze (``GroupConfig.eats_plants``; docs/species.md, "Grazing").

Every plant cell holds ``world.plant_bites`` bites. A fish of a group that eats plants whose
``eat`` found no food item (nothing under it nor beside it, or another fish took it) takes a bite
of a plant north, south, west or east of it that has one left (the first in that order), and
gains what a food item gives (``food.energy`` less ``fish.eat_cost``): the arbiter's meal becomes
``ate``, so its energy, its ``eats``, its memory ("ate") and a forage or graze plan's end follow
as for any meal. Grazers beside one plant bite in the arbiter's order (priority, then the tick's
hash), each while a bite is left. A plant with bites missing grows one back every
``world.plant_regrow_ticks`` ticks. A plant is never eaten away: it stays where it is, an
obstacle, with no bites until they grow back.

This module is the one place the rules are written and both ticks call it (after the moves and
meals, before the food spawns), so the compiled and the numpy tick give the same hash by
construction. The bites left and when each plant grows its next one are kept in keyframes and
hashed (``world.plants``) only in a tank where a group eats plants; every other tank runs, records
and hashes as before plants could be eaten.

To a grazer a plant with a bite left is food: a hungry one (below ``triggers.hungry_fraction``)
that comes to see one asks for its next plan at once (the trigger ``hungry_food``), whatever its
plan but ``graze`` (:meth:`Grazing.notice`, after either tick), as a hungry fish that comes to see
food does. The planner's ``graze`` plan (fish/plantypes.py) takes it there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import arbiter
from .water import PLANT

if TYPE_CHECKING:
    from .world import World

KEY = "world.plants"  # the keyframe array: bites left, the tick each plant grows its next, bites per group


class Grazing:
    """The plants' bites and who grazes them (see the module doc)."""

    def __init__(self, world: World):
        cfg, w = world.cfg, world.water
        groups = cfg.fish.groups
        self.cells = np.flatnonzero(w.terrain == PLANT).astype(np.int64)  # the plant cells, at the start
        self.index = np.full(w.terrain.size, -1, np.int64)  # grid cell → plant number (-1: not a plant)
        self.index[self.cells] = np.arange(self.cells.size)
        self.most = cfg.world.plant_bites
        self.regrow = cfg.world.plant_regrow_ticks
        self.bites = np.full(self.cells.size, self.most, np.int32)
        self.grows_at = np.zeros(self.cells.size, np.int32)  # (when a bite is missing) the tick it grows back
        of = np.asarray(cfg.fish.group_of(), np.int64)
        self.of = of
        self.grazes = np.array([g.eats_plants for g in groups] + [False])[of]  # per fish
        self.grazed = np.zeros(len(groups) + 1, np.int64)  # bites taken per group (the groups, then the tank)
        self._sides = world.eat_offsets[1:]  # north, south, west, east
        self._water = w  # (its terrain as it is now: a person's edits, a keyframe's terrain)
        # per fish: hungry with a plant with a bite in view after the last tick (derived from the state:
        # not kept, so spare room no fish had does not change the hash; World.load_state_arrays)
        self.near = np.zeros(of.size, bool)
        self._graze = world.plan_table.code.get("graze", -1)

    # ------------------------------------------------------------ state

    def state(self) -> np.ndarray:
        return np.concatenate([self.bites.astype(np.int64), self.grows_at.astype(np.int64), self.grazed])

    def load(self, arr: np.ndarray | None) -> None:
        k, g = self.cells.size, self.grazed.size
        if arr is None:  # (a keyframe from before the tank grazed: whole plants)
            self.bites[:], self.grows_at[:], self.grazed[:] = self.most, 0, 0
            return
        a = np.asarray(arr, np.int64)
        if a.size == 2 * k + g + self.near.size:  # (a keyframe that also kept each slot's notice: derived now)
            a = a[:2 * k + g]
        if a.size != 2 * k + g:
            raise ValueError(f"array {KEY} holds {a.size} values, expected {2 * k + g}")
        self.bites = a[:k].astype(np.int32)
        self.grows_at = a[k:2 * k].astype(np.int32)
        self.grazed = a[2 * k:].copy()

    # ------------------------------------------------------------ what a fish sees

    def with_bites(self, cells: np.ndarray) -> np.ndarray:
        """Whether each of ``cells`` (any shape, flat grid cells) is a plant with a bite left (a
        plant a person cleared, or put a rock on, is none)."""
        idx = self.index[cells]
        out: np.ndarray = (idx >= 0) & (self._water.terrain[cells] == PLANT)
        out[out] = self.bites[idx[out]] > 0
        return out

    # ------------------------------------------------------------ the rules

    def graze(self, world: World, hungry: np.ndarray, tick: int) -> np.ndarray:
        """Of ``hungry`` (fish whose ``eat`` found nothing this tick), the grazers that take a bite
        of a plant beside them, in the arbiter's order; returns them (their meal is ``ate``)."""
        s = world.school
        fish: np.ndarray = hungry[self.grazes[hungry] & ~s.absent[hungry]]
        if not fish.size:
            return fish
        cfg_a = world.cfg.arbiter
        score = arbiter.priority(s.age[fish], s.energy[fish], world.max_energy, age_weight=cfg_a.age_weight,
                                 energy_weight=cfg_a.energy_weight, age_cap=cfg_a.age_cap)
        tie = arbiter.tie_break(tick, world._id_keys[fish])
        fish = fish[np.lexsort((~tie, -score))]  # best first
        ate: list[int] = []
        for i in fish.tolist():
            for c in (int(s.cell[i]) + self._sides).tolist():
                p = int(self.index[c])
                if p >= 0 and self.bites[p] > 0 and self._water.terrain[c] == PLANT:
                    if self.bites[p] == self.most:
                        self.grows_at[p] = tick + self.regrow
                    self.bites[p] -= 1
                    self.grazed[self.of[i]] += 1
                    ate.append(i)
                    break
        return np.array(ate, np.int64)

    def seeing(self, world: World) -> np.ndarray:
        """Per fish: a grazer in the water, hungry, with a plant with a bite left in view now."""
        s = world.school
        fish = np.flatnonzero(self.grazes & ~s.absent)
        now = np.zeros(self.near.size, bool)
        if fish.size:
            hungry = fish[s.energy[fish] < world.hungry_line]
            if hungry.size:
                now[hungry[world.bites_seen(hungry) > 0]] = True
        return now

    def notice(self, world: World, trigger: int) -> None:
        """After a tick (the last of it): a grazer that is hungry and has come to see a plant with a
        bite left (it had not after the tick before) gets ``trigger`` (``hungry_food``) unless a
        trigger is raised already or it is grazing; it asks for its next plan."""
        s = world.school
        now = self.seeing(world)
        new = np.flatnonzero(now & ~self.near & (s.plan_trigger < 0) & (s.plan_goal != self._graze))
        s.plan_trigger[new] = trigger
        self.near = now

    def grow(self, tick: int) -> None:
        """Plants with bites missing whose time has come grow one back (and the next in ``regrow``)."""
        due = np.flatnonzero((self.bites < self.most) & (self.grows_at <= tick))
        if due.size:
            self.bites[due] += 1
            self.grows_at[due] = tick + self.regrow
