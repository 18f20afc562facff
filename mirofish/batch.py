"""Many tanks stepped as one world: one compiled call per stage per tick for all of them.

Tanks of one shape — the same config but the seed and the settings a running tank may change
(:data:`~mirofish.config.LIVE_KEYS`: the food's spawn rate, steering's school, food and
open-water weights) — are laid one after another. Each tank's
padded grid becomes a block of one joined grid (its cells shifted by the block's start) and its
fish a block of rows (their ids shifted likewise); the per-fish arrays, the memories, the views
and the steering's weights are the tanks' arrays end to end. A tank's glass margin is at least
the view radius wide, so every view, move and meal of its fish stays inside its own block; and
the compiled tick (``_tick.c``) works fish by fish and cell by cell, deciding a conflict only
between fish that want one cell. So one call of each stage (steer, arbitrate, after, the
memories' summaries) steps every tank at once, and each tank is exactly the tank its own run
would be, tick by tick (``tests/test_batch.py`` checks the state hashes). Only the food is
spawned tank by tank: it draws from (a copy of) each tank's own random stream. The batch steps
copies of the tanks; ``world(k)`` writes tank ``k``'s state back into its own world.

The live settings may differ from tank to tank because none of them is a number the compiled
stages take for all fish at once: each tank's food is spawned by its own water (its spawn rate),
and steering's weights reach a fish through its row of ``w``, which a new plan derives from its
own tank's table of plan weights (the distinct tables stacked, each fish's rows starting at its
own tank's: ``World._row_base``, read by the compiled ``adopt``). Any other difference (the
temperature, the food's energy, the planner's weights …) is refused: those are numbers of the
whole joined world.

What it steps (``why_not``): tanks whose fish are given their actions — the array environment's
(:func:`mirofish.env.vector_env`), where every fish holds the action it was given — on the
compiled tick, without species, groups, places, plants as food, currents or spare room, and not
while being recorded; and, with ``planned=True``, tanks whose fish decide plans, for a caller that
asks the planner for all of them at once and runs each tank's observers itself
(mirofish/session/joined.py: ``influence``'s forks of one tick, a sweep's runs of one setting
but their seeds and live settings).
Each tank's metrics, word-and-deed and decision history stay its own, so joining gains the
compiled calls' and the engine's share of a tick, not the observers' (``bench/batch_bound.py``;
docs/speed.md, "Many tanks as one program").

    batch = Batch([World(cfg.model_copy(update={"seed": s})) for s in seeds])
    batch.give(actions)            # (tanks, fish) actions: World.give, hold plans
    out = batch.step()             # one tick of every tank (World.step): over (tanks × fish)
    batch.world(2).state_hash()    # tank 2 as a World of its own, up to date
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from . import kernel
from .config import LIVE_KEYS
from .fish.memory import LongMemory, ShortMemory
from .water import Water
from .world import MEMORY_STATE, School, World

STEERING_ROWS = ("keys", "personal", "w", "bias", "forage", "snacks", "rests")  # Steering's per-fish arrays


def why_not(cfg: Any, planned: bool = False) -> str | None:
    """Why tanks of ``cfg`` cannot be joined (None: they can). ``planned``: tanks whose fish
    decide plans, for a caller that runs each tank's observers itself (the influence forks,
    mirofish/session/influence_joined.py); otherwise only tanks whose fish are given actions."""
    if kernel.compiled_tick() is None:
        return "the compiled tick is off (MIROFISH_TICK=numpy, or not built)"
    if cfg.brain.decides != "action" and not planned:
        return ("its fish decide plans (such tanks join with planned=True, for a caller that runs each tank's "
                "observers: mirofish/session/joined.py)")
    if cfg.fish.groups:
        return "it has groups of fish"
    if cfg.fish.places:
        return "its fish remember places"
    if cfg.fish.spare:
        return "it has spare room"
    if cfg.perception.plants_seen:
        return "its fish see plants"
    return None


def joined_setting(cfg: Any) -> dict[str, Any]:
    """``cfg`` as tanks joined with it must have it: all of it but the seed and the settings a
    running tank may change (:data:`~mirofish.config.LIVE_KEYS`), which may differ.

    Not the planner's weights (``brain.planner``), though the world never reads them: a build that
    asked each tank's fish by a planner of its own setting (one planner call a setting a tick, the
    answers merged) ran slower than the same runs in groups of one planner setting (0.84–0.85×,
    ``bench/sweep_joined.py --settings 16`` and ``64`` with ``brain.planner.school`` varied too;
    not kept) — a call of the compiled planner and its requests costs about what joining a tank
    saves."""
    out: dict[str, Any] = cfg.model_dump(exclude={"seed"})
    for key in LIVE_KEYS:
        section, name = key.split(".")
        out[section].pop(name, None)
    return out


def _alone_only(w: World, before: list[World]) -> str | None:
    """Why world ``w`` cannot join a batch (``before``: the tanks ahead of it), or None."""
    if isinstance(w, Batch):
        return "it is a batch itself"
    if any(w is other for other in before):
        return "it is given twice"
    if w._kernel is None:
        return "it runs the numpy tick (it was made with MIROFISH_TICK=numpy)"
    if w.current is not None:
        return "a current flows in it"
    if w.tuned():
        return "its settings were tuned while it ran"
    if w.used_slots != w.school.n or w.population is not None or w.grazing is not None or w.places is not None:
        return "it has species, plants as food, places or spare room"
    if w._seeking or w._predicating:
        return "a fish in it follows a plan that swims to a target or watches for its end"
    return None


class _Water:
    """The joined tanks' food and glass: one array each. Each tank's food spawns and rots by a
    copy of its :class:`~mirofish.water.Water` whose food is its block of the joined array, drawing
    from a copy of its random stream: the tanks' own worlds are not touched while the batch steps."""

    def __init__(self, worlds: list[World]):
        self.food_born = np.concatenate([w.water.food_born for w in worlds])
        self.blocked = np.concatenate([w.water.blocked for w in worlds])
        g = worlds[0].water.food_born.size
        self.tanks: list[tuple[Water, np.random.Generator]] = []
        for k, w in enumerate(worlds):
            water = copy.copy(w.water)
            water.food_born = self.food_born[k * g:(k + 1) * g]
            water._ring, water._ring_at = w.water._ring.copy(), w.water._ring_at.copy()
            self.tanks.append((water, copy.deepcopy(w.rng)))

    def __getattr__(self, name: str) -> Any:  # (only for what this class does not have)
        raise AttributeError(f"water.{name}: a batch of tanks has no one water (its tanks have theirs): do what "
                             "needs it to a tank's own world (batch.world(k)), stepped alone")

    def feed_compiled(self, k: Any, rng: Any, tick: int) -> tuple[int, int]:
        spawned = rotted = 0
        for water, own in self.tanks:
            s, r = water.feed_compiled(k, own, tick)
            spawned += s
            rotted += r
        return spawned, rotted


class Batch(World):
    """Tanks of one shape as one :class:`~mirofish.world.World` (see the module's docstring).

    Built from worlds at one tick, made from one config but their seeds (ValueError naming what
    differs, or what of a tank cannot be stepped joined). The batch steps copies: the tanks' own
    worlds stay as they were until :meth:`world` brings one up to date (a snapshot: stepping it
    alone afterwards leaves the batch as it is, and the batch stepping leaves it)."""

    def __init__(self, worlds: list[World], planned: bool = False, alike: bool = False):  # (no World.__init__)
        """``alike``: the tanks are one world given again and again (forks of one state): each
        starts from its state, and :meth:`world` writes tank ``k`` into that one world — read it
        before asking for another tank."""
        if not worlds:
            raise ValueError("a batch needs at least one tank")
        w0 = worlds[0]
        reason = why_not(w0.cfg, planned)
        if reason:
            raise ValueError(f"these tanks cannot be stepped as one: {reason}")
        base = joined_setting(w0.cfg)
        for i, w in enumerate(worlds):
            if i and joined_setting(w.cfg) != base:
                raise ValueError(f"tank {i}: another config than tank 0's (a batch's tanks differ only by their seed "
                                 f"and the settings a running tank may change: {', '.join(LIVE_KEYS)})")
            if w.tick != w0.tick:
                raise ValueError(f"tank {i} is at tick {w.tick}, tank 0 at {w0.tick}")
            if alike and w is not w0:
                raise ValueError(f"tank {i}: alike tanks are one world given again and again")
            trouble = _alone_only(w, [] if alike else worlds[:i])
            if trouble:
                raise ValueError(f"tank {i} cannot be stepped with others: {trouble}")
        self.__dict__.update(w0.__dict__)  # the settings, the grid, the plan table: the same in every tank
        self.tanks = list(worlds)  # each tank's own world (brought up to date by world(k))
        n_tanks, n, g = len(worlds), w0.school.n, w0.water.food_born.size
        self.n_tanks, self.fish_per_tank, self.cells_per_tank = n_tanks, n, g
        self.rng = None  # type: ignore[assignment]  # (each tank draws its food from a copy of its own: _Water)
        self.water = self._joined_water = _Water(self.tanks)  # type: ignore[assignment]
        cell_shift = np.repeat(np.arange(n_tanks, dtype=np.int64) * g, n)  # each fish's block start
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
        # each tank's table of plan weights (tanks of other live settings have their own): the
        # distinct ones stacked, and where each fish's rows start (World._row_base; one: as alone)
        tables: list[np.ndarray] = []
        of_tank = []
        for w in worlds:
            t = w.steering.table
            same = next((i for i, u in enumerate(tables) if np.array_equal(u, t)), None)
            if same is None:
                tables.append(t)
                same = len(tables) - 1
            of_tank.append(same)
        if len(tables) > 1:
            st.table = np.ascontiguousarray(np.concatenate(tables))
            self._row_base = np.repeat(np.array(of_tank, np.int64) * len(tables[0]), n)

    def apply_plans(self, fish: np.ndarray, goals: np.ndarray, params: np.ndarray, horizons: np.ndarray,
                    ended: bool = False) -> np.ndarray | None:
        """:meth:`World.apply_plans`; a plan that swims to a target or watches for its end is refused
        (ValueError): joined tanks step without those plans' parts."""
        g = np.asarray(goals, np.intp)
        if g.size and np.count_nonzero(self._goals.watched[g]):
            raise ValueError(f"plan {self.plan_table.names[int(g[np.flatnonzero(self._goals.watched[g])[0]])]!r}: "
                             "joined tanks take plans that hold an action or steer, not ones that swim to a target "
                             "or watch for their end (step such a tank alone)")
        return super().apply_plans(fish, goals, params, horizons, ended)

    def _alone(self, what: str) -> ValueError:
        return ValueError(f"{what} a batch of tanks: do it to a tank's own world (batch.world(k)), stepped alone")

    def tune(self, key: str, value: float) -> None:
        raise self._alone("cannot tune")

    def retune(self, cfg: Any) -> None:
        raise self._alone("cannot retune")

    def intervene(self, iv: dict[str, Any]) -> dict[str, Any]:
        raise self._alone("cannot intervene in")

    def state_hash(self) -> str:
        raise self._alone("there is no one state hash of")

    def state_arrays(self) -> dict[str, np.ndarray]:
        raise self._alone("there is no one keyframe of")

    def load_state_arrays(self, d: dict[str, np.ndarray]) -> None:
        raise self._alone("cannot load a keyframe into")

    def world(self, k: int) -> World:
        """Tank ``k``'s own world, brought up to date with the batch (its state hash, keyframe
        and views are its own run's); it may step on alone, apart from the batch from then on."""
        if not isinstance(k, int | np.integer) or not 0 <= k < self.n_tanks:
            raise ValueError(f"tank {k!r}: the batch's tanks are 0..{self.n_tanks - 1}")
        k = int(k)
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
        water, rng = self._joined_water.tanks[k]
        w.water.food_born[:] = water.food_born
        w.water.oldest_food = None  # (its ring of food by age is rebuilt from the food: the same rot)
        w.rng.bit_generator.state = rng.bit_generator.state
        w.tick = self.tick
        return w

    def by_tank(self, a: np.ndarray) -> np.ndarray:
        """A per-fish array of the batch as ``(tanks, fish, …)`` (a view)."""
        return a.reshape(self.n_tanks, self.fish_per_tank, *a.shape[1:])
