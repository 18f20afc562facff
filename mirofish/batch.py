"""Many tanks stepped as one world: one compiled call per stage per tick for all of them.

Tanks of one shape — the same config but the seed — are laid one after another. Each tank's
padded grid becomes a block of one joined grid (its cells shifted by the block's start) and its
fish a block of rows (their ids shifted likewise); the per-fish arrays, the memories, the views
and the steering's weights are the tanks' arrays end to end. A tank's glass margin is at least
the view radius wide, so every view, move and meal of its fish stays inside its own block; and
the compiled tick (``_tick.c``) works fish by fish and cell by cell, deciding a conflict only
between fish that want one cell. So one call of each stage (steer, arbitrate, after, the
memories' summaries) steps every tank at once, and each tank is exactly the tank its own run
would be, tick by tick (``tests/test_batch.py`` checks the state hashes). Only the food is
spawned tank by tank: it draws from each tank's own random stream.

What it steps (``why_not``): tanks whose fish are given their actions — the array environment's
(:func:`mirofish.env.vector_env`), where every fish holds the action it was given — on the
compiled tick, without species, groups, places, plants as food, currents or spare room, and not
while being recorded. The planner's tanks (``live``, ``sweep``, the influence forks) step one by
one: their per-tank metrics, word-and-deed and decision history would stay per tank, and
``bench/batch_bound.py`` bounds what joining their worlds could gain (docs/speed.md, "Many tanks
as one program").

    batch = Batch([World(cfg.model_copy(update={"seed": s})) for s in seeds])
    batch.give(actions)            # (tanks, fish) actions, as World.apply_plans' hold plans
    out = batch.step()             # one tick of every tank (World.step): over (tanks × fish)
    batch.world(2).state_hash()    # tank 2 as a World of its own, up to date
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import kernel
from .fish.memory import LongMemory, ShortMemory
from .fish.plans import changed_plans
from .world import MEMORY_STATE, School, World

STEERING_ROWS = ("keys", "personal", "w", "bias", "forage", "snacks", "rests")  # Steering's per-fish arrays


def why_not(cfg: Any) -> str | None:
    """Why tanks of ``cfg`` cannot be joined (None: they can)."""
    if kernel.compiled_tick() is None:
        return "the compiled tick is off (MIROFISH_TICK=numpy, or not built)"
    if cfg.brain.decides != "action":
        return "its fish decide plans (a planner's tank steps alone)"
    if cfg.fish.groups:
        return "it has groups of fish"
    if cfg.fish.places:
        return "its fish remember places"
    if cfg.fish.spare:
        return "it has spare room"
    if cfg.perception.plants_seen:
        return "its fish see plants"
    return None


class _Water:
    """The joined tanks' food and glass: one array each, every tank's block a view of it; each
    tank's food spawns and rots by its own :class:`~mirofish.water.Water` and random stream."""

    def __init__(self, worlds: list[World]):
        self.tanks = worlds
        self.food_born = np.concatenate([w.water.food_born for w in worlds])
        self.blocked = np.concatenate([w.water.blocked for w in worlds])
        g = worlds[0].water.food_born.size
        for k, w in enumerate(worlds):  # from now on each tank's food is its block of the joined array
            w.water.food_born = self.food_born[k * g:(k + 1) * g]

    def feed_compiled(self, k: Any, rng: Any, tick: int) -> tuple[int, int]:
        spawned = rotted = 0
        for w in self.tanks:
            s, r = w.water.feed_compiled(k, w.rng, tick)
            spawned += s
            rotted += r
        return spawned, rotted


class Batch(World):
    """Tanks of one shape as one :class:`~mirofish.world.World` (see the module's docstring).

    Built from worlds at the same tick, made from one config but their seeds and not stepped
    since they were made or last taken back by :meth:`world` (raises ValueError naming what
    differs). From then on the tanks' own worlds are out of date until :meth:`world` brings one
    up to date; their food is the batch's (a view of it) all along."""

    def __init__(self, worlds: list[World]):  # (World.__init__ is not called: joined, not built)
        if not worlds:
            raise ValueError("a batch needs at least one tank")
        w0 = worlds[0]
        reason = why_not(w0.cfg)
        if reason:
            raise ValueError(f"these tanks cannot be stepped as one: {reason}")
        base = w0.cfg.model_dump(exclude={"seed"})
        for i, w in enumerate(worlds[1:], 1):
            if w.cfg.model_dump(exclude={"seed"}) != base:
                raise ValueError(f"tank {i}: another config than tank 0's (a batch's tanks differ only by seed)")
            if w.tick != w0.tick:
                raise ValueError(f"tank {i} is at tick {w.tick}, tank 0 at {w0.tick}")
            if w.water.food_born.size != w0.water.food_born.size:
                raise ValueError(f"tank {i}: another grid size than tank 0's")
        self.__dict__.update(w0.__dict__)  # the settings, the grid, the plan table: the same in every tank
        self.tanks = list(worlds)
        n_tanks, n, g = len(worlds), w0.school.n, w0.water.food_born.size
        self.n_tanks, self.fish_per_tank, self.cells_per_tank = n_tanks, n, g
        self.rng = None  # type: ignore[assignment]  # (each tank draws its food from its own: _Water.feed_compiled)
        self.water = _Water(self.tanks)  # type: ignore[assignment]
        cell_shift = np.repeat(np.arange(n_tanks, dtype=np.int64) * g, n)  # each fish's block start
        self._cell_shift = cell_shift
        self.school = s = School.__new__(School)
        s.n = n_tanks * n
        s.ids = np.arange(s.n, dtype=np.int64)
        for a in self.state_table:
            setattr(s, a.name, np.concatenate([getattr(w.school, a.name) for w in worlds]))
        s.cell += cell_shift
        s.persona = [p for w in worlds for p in w.school.persona]
        s.memory = ShortMemory(s.n, w0.school.memory.size)
        for name in MEMORY_STATE:
            setattr(s.memory, name, np.concatenate([getattr(w.school.memory, name) for w in worlds]))
        lm0 = w0.school.long_memory
        s.long_memory = LongMemory(s.n, lm0.kept, lm0.anchors)
        s.long_memory.records = np.concatenate([w.school.long_memory.records for w in worlds])
        s.long_memory.count = np.concatenate([w.school.long_memory.count for w in worlds])
        self.occupant = np.concatenate([np.where(w.occupant >= 0, w.occupant + k * n, -1)
                                        for k, w in enumerate(worlds)])
        self._best = np.full(n_tanks * g, -1, np.int64)
        self.codes = np.concatenate([w.codes for w in worlds])
        self._id_keys = np.concatenate([w._id_keys for w in worlds])
        self._flags = np.zeros((s.n, w0._flags.shape[1]), bool)
        self._args = np.zeros((s.n, w0._args.shape[1]), np.int16)
        self._eat_here = np.zeros(s.n, bool)
        self.used_slots = s.n
        st = self.steering = type(w0.steering).__new__(type(w0.steering))
        st.__dict__.update(w0.steering.__dict__)
        for name in STEERING_ROWS:
            setattr(st, name, np.concatenate([getattr(w.steering, name) for w in worlds]))
        self._zeros8, self._zeros16 = np.zeros(s.n, np.int8), np.zeros(s.n, np.int16)

    def give(self, actions: np.ndarray) -> None:
        """Each fish's action for the next tick (``(tanks, fish)`` or flat; checked by the
        caller), as the environment gives them: a fish given another action than the one it
        holds takes it as its standing plan (``hold``), the others keep theirs."""
        a = np.asarray(actions).reshape(-1)
        pick = np.flatnonzero(changed_plans(self.school, a))
        if pick.size:
            self.apply_plans(pick, self._zeros8[:pick.size], a[pick].astype(np.int16), self._zeros16[:pick.size])

    def world(self, k: int) -> World:
        """Tank ``k``'s own world, brought up to date with the batch (its state hash, keyframe
        and views are its own run's). Stepping it alone leaves the batch behind: join again."""
        n, g, w = self.fish_per_tank, self.cells_per_tank, self.tanks[k]
        rows, s, ws = slice(k * n, (k + 1) * n), self.school, w.school
        for a in self.state_table:
            setattr(ws, a.name, getattr(s, a.name)[rows].copy())
        ws.cell -= k * g
        for name in MEMORY_STATE:
            setattr(ws.memory, name, getattr(s.memory, name)[rows].copy())
        ws.long_memory.records = s.long_memory.records[rows].copy()
        ws.long_memory.count = s.long_memory.count[rows].copy()
        occ = self.occupant[k * g:(k + 1) * g]
        w.occupant = np.where(occ >= 0, occ - k * n, -1)
        w.codes = self.codes[rows].copy()
        for name in STEERING_ROWS:
            setattr(w.steering, name, getattr(self.steering, name)[rows].copy())
        w.tick = self.tick
        return w

    def by_tank(self, a: np.ndarray) -> np.ndarray:
        """A per-fish array of the batch as ``(tanks, fish, …)`` (a view)."""
        return a.reshape(self.n_tanks, self.fish_per_tank, *a.shape[1:])
