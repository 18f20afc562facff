"""Species: fish that are born, starve and are caught (docs/species.md).

A **species** is a group of a mixed tank (``[[fish.groups]]``) with population rules: ``dies``
(its fish leave the tank when their energy reaches 0), ``birth_energy`` (a fish at or above it
splits: the young takes half its energy and its parent's traits, each moved by up to
``mutation`` points, into the group's own ``spare`` room — a room no fish had, so a fish id is
never reused) and ``hunts`` (the groups its fish catch). A tank none of whose groups has a rule
has no :class:`Population`: nothing of it is kept or hashed, and it runs as before species
existed.

After every tick, in both kernels alike (this module is the one place the rules are written,
so the compiled and the numpy tick give the same hash by construction), in this order:

1. **Hunting.** Each hunter in the water, in the order of a hash of (tick, id), looks at the
   eight cells around it. Of the prey there (fish of a group it hunts, not yet caught this
   tick) it tries the one with the smallest hash of (tick, hunter, prey). It catches it with
   chance ``catch_chance / (1 + confusion × m)``, where ``m`` counts the prey's own group
   within two cells of the prey that face the way it faces — the **confusion effect**: a
   predator singles out a lone fish more easily than one in a school swimming together. The
   draw is a hash of (seed, tick, hunter, prey), not the tank's generator, so the food falls
   the same in every arm of an ablation. A caught fish leaves the tank; the hunter gains
   ``catch_gain`` energy (to its maximum).
2. **Starving.** A fish of a group that ``dies`` with energy 0 leaves the tank.
3. **Births.** A fish of a group with ``birth_energy``, at or above it, in id order, splits
   while its group has room: the young is put on the free open cell nearest its parent,
   facing its parent's way, and decides at once.

What happened is counted per group (born, starved, caught, and catches tried), kept in keyframes and hashed with
the state (``world.population``), so a replay and a fork reproduce every birth and death.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .config import hundredths
from .rng import mix64

if TYPE_CHECKING:
    from .world import World

KEY = "world.population"  # the keyframe array: born, starved and caught per group (groups + the tank)
_U53 = float(2**53)


def _uniform(seed: int, tick: int, a: int, b: int) -> float:
    """A uniform draw in [0, 1) from (seed, tick, a, b): the same on every run, no generator."""
    return float(int(mix64(seed, tick, a, b)) >> 11) / _U53


def _order(seed: int, tick: int, salt: int, ids: np.ndarray) -> np.ndarray:
    """``ids`` in the order of a hash of (seed, tick, salt, id): who goes first changes every tick."""
    keys = mix64(seed, tick, salt, ids)
    return ids[np.lexsort((ids, keys))]


class Population:
    """The population rules of a tank's species (see the module doc) and what they did."""

    def __init__(self, world: World):
        f = world.cfg.fish
        groups = f.groups
        self.n_groups = len(groups) + 1  # the groups and the tank
        self.of = np.asarray(f.group_of(), np.int64)
        self.dies = np.array([g.dies for g in groups] + [False])
        self.birth_line = np.array([hundredths(g.birth_energy) if g.birth_energy is not None else -1
                                    for g in groups] + [-1], np.int64)
        self.mutation = [g.mutation for g in groups] + [0]
        self.room = f.young_room()
        names = [g.name for g in groups]
        self.hunters = [gi for gi, g in enumerate(groups) if g.hunts]
        self.prey = {gi: np.isin(np.arange(self.n_groups), [names.index(h) for h in groups[gi].hunts])
                     for gi in self.hunters}
        self.chance = {gi: groups[gi].catch_chance for gi in self.hunters}
        self.confusion = {gi: groups[gi].confusion for gi in self.hunters}
        self.gain = {gi: hundredths(groups[gi].catch_gain) for gi in self.hunters}
        self.born = np.zeros(self.n_groups, np.int64)
        self.starved = np.zeros(self.n_groups, np.int64)
        self.caught = np.zeros(self.n_groups, np.int64)
        self.tried = np.zeros(self.n_groups, np.int64)  # catches tried (a hunter beside a prey)
        self.hunter_mask = np.isin(self.of, self.hunters)
        self.no_food = np.array([not g.eats_food for g in groups] + [False])[self.of]  # per fish
        self.flees = np.array([g.flees for g in groups] + [False])[self.of]  # per fish: its group flees its hunters
        # [hunter's group, prey's group]: does the first hunt the second (World.prey_in_view, hunters_in_view)
        self.prey_of = np.zeros((self.n_groups, self.n_groups), bool)
        for gi, mask in self.prey.items():
            self.prey_of[gi] = mask
        w = world.water
        pw = w.pw
        self._ring1 = np.array([-pw - 1, -pw, -pw + 1, -1, 1, pw - 1, pw, pw + 1], np.int64)
        self._last = world.occupant.size - 1  # (a view of radius 1 pads the glass one cell deep)
        self._ring2 = np.array([dy * pw + dx for dy in range(-2, 3) for dx in range(-2, 3) if dx or dy], np.int64)

    # ------------------------------------------------------------ state

    def state(self) -> np.ndarray:
        return np.concatenate([self.born, self.starved, self.caught, self.tried])

    def load(self, arr: np.ndarray | None) -> None:
        g = self.n_groups
        a = np.zeros(4 * g, np.int64) if arr is None else np.asarray(arr, np.int64)
        self.born, self.starved, self.caught, self.tried = (a[k * g:(k + 1) * g].copy() for k in range(4))

    def alive(self, world: World) -> np.ndarray:
        """Fish in the water per group (the groups, then the tank)."""
        return np.bincount(self.of[~world.school.absent], minlength=self.n_groups)

    def summary(self, world: World) -> dict[str, dict[str, float]]:
        """Per group (that has fish or rules): in the water now, born, starved and caught so far (and
        the bites of plants it took, in a tank where a group eats plants: mirofish/grazing.py)."""
        alive = self.alive(world)
        names = world.cfg.fish.group_names()
        grazed = world.grazing.grazed if world.grazing is not None else None
        return {name: {"in_water": int(alive[g]), "born": int(self.born[g]), "starved": int(self.starved[g]),
                       "caught": int(self.caught[g]), "tried": int(self.tried[g]),
                       "caught_per_try": round(int(self.caught[g]) / int(self.tried[g]), 4) if self.tried[g] else 0.0,
                       "grazed": int(grazed[g]) if grazed is not None else 0}
                for g, name in enumerate(names) if alive[g] or self.born[g] or self.starved[g] or self.caught[g]}

    # ------------------------------------------------------------ the rules

    def step(self, world: World) -> bool:
        """Hunting, starving and births after the tick just simulated; True if a fish came or went."""
        from .interventions import add_fish, remove_fish

        s, tick, seed = world.school, world.tick - 1, world.cfg.seed
        changed = False
        if self.hunters:
            hunters = np.flatnonzero(self.hunter_mask & ~s.absent)
            taken: set[int] = set()
            for h in _order(seed, tick, -1, hunters).tolist():
                gh = int(self.of[h])
                near = world.occupant[np.clip(s.cell[h] + self._ring1, 0, self._last)]
                near = near[near >= 0]
                near = near[self.prey[gh][self.of[near]]]
                near = np.array([p for p in near.tolist() if p not in taken], np.int64)
                if not near.size:
                    continue
                prey = int(_order(seed, tick, h, near)[0])
                around = world.occupant[np.clip(s.cell[prey] + self._ring2, 0, self._last)]
                around = around[around >= 0]
                m = int(np.count_nonzero((self.of[around] == self.of[prey]) & (s.heading[around] == s.heading[prey])))
                self.tried[self.of[prey]] += 1
                if _uniform(seed, tick, h, prey) < self.chance[gh] / (1.0 + self.confusion[gh] * m):
                    taken.add(prey)
                    remove_fish(world, prey)
                    self.caught[self.of[prey]] += 1
                    s.energy[h] = min(int(s.energy[h]) + self.gain[gh], world.energy_cap(h))
                    changed = True
        starving = np.flatnonzero(self.dies[self.of] & ~s.absent & (s.energy <= 0))
        for i in starving.tolist():
            remove_fish(world, i)
            self.starved[self.of[i]] += 1
            changed = True
        line = self.birth_line[self.of]
        ready = np.flatnonzero((line >= 0) & ~s.absent & (s.energy >= line))
        for parent in ready.tolist():
            g = int(self.of[parent])
            first, end = self.room[g]
            if first + self.born[g] >= end:
                continue
            young = int(first + self.born[g])
            x, y = world.water.xy(s.cell[parent])
            m = self.mutation[g]
            shift = np.array([int(_uniform(seed, tick, young, j) * (2 * m + 1)) - m for j in range(5)])
            traits = np.clip(s.traits[parent].astype(np.int64) + shift, 0, 100)
            half = int(s.energy[parent]) // 2
            try:
                add_fish(world, {"x": int(x), "y": int(y), "traits": traits.tolist()}, young, int(s.heading[parent]))
            except Exception:  # noqa: BLE001 — no free water: none is born this tick
                break
            s.energy[young] = int(s.energy[parent]) - half
            s.energy[parent] = half
            self.born[g] += 1
            changed = True
        if changed:
            world.look()
        return changed
