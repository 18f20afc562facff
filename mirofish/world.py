"""The world: water + fish + arbiter, advanced one tick at a time from a set of intents.

``World`` owns the only random generator of a run and all state that the state hash
covers. It never imports a brain, pygame or openai, and never reads the clock: the engine
asks it which fish need a decision, hands it decisions, and calls :meth:`World.step`.

Tick order (docs/design.md §3): the steering layer turns each fish's standing plan and its view
into an action (exhausted fish rest) → the arbiter resolves moves and meals → food spawns
and rots → energy → age → the fish look at their new surroundings (one gather of view codes
that serves the triggers, the next tick's steering and the brains' requests), remember what
happened, and their plans end, fail or meet something salient (decision triggers).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import interventions, kernel
from .actions import N_ACTIONS, Action
from .config import LIVE_KEYS, Config, MemoryConfig, hundredths
from .fish import memory as mem
from .fish.features import from_world
from .fish.formula import Formula
from .fish.memory import AS, AT_SUMMARY, LongMemory, ShortMemory, Summarizer, TemplateSummarizer
from .fish.perception import (
    V_FISH,
    V_FOOD,
    V_WATER,
    Perception,
    cell_codes,
    hunters_shown,
    render_view,
    shown_codes,
    unseen_shown,
    view_codes,
    view_rings,
)
from .fish.personality import persona_text, sample_traits
from .fish.places import Places
from .fish.plans import DEFAULT as DEFAULT_PLANS
from .fish.plans import FIRST_PLAN, G_HOLD, NO_END, PlanTable, changed_plans
from .fish.plantypes import EVENTS
from .fish.recall import Guarded, NoMemory, TwoLevel, new_events
from .fish.steering import Steering
from .fish.targets import TARGETS, is_there, way_to
from .fish.triggers import (
    T_ACTION_FAILED,
    T_FOOD_ROSE,
    T_HORIZON,
    T_HUNGRY_FOOD,
    T_HUNTER,
    T_LOW_ENERGY,
    T_NEIGHBOURS,
    T_PLAN_DONE,
    T_PLAN_FAILED,
    T_TIMEOUT,
)
from .grazing import KEY as PLANTS_KEY
from .grazing import Grazing
from .grid import Grid, grid_of
from .population import KEY as POPULATION_KEY
from .population import Population
from .rng import make_generator, mix64
from .ticks import EVENT_ORDER, StepOutcome, step_compiled, step_numpy
from .water import NO_FOOD, PLANT, Water

if TYPE_CHECKING:
    from .registry import Registry

# Decision triggers, most urgent first (a request carries the first that applies).
NEVER = -(2**30)  # "long ago" for tick-valued fields

# Which plan events concern a goal: one column per event (the plan types' table,
# fish/plantypes.py; _tick.c reads the same rows: GoalParts.flags).
GOAL_FLAG_COLUMNS = EVENTS  # (_tick.c's too)


class GoalParts:
    """What a world derives from its run's plan table (:class:`~mirofish.fish.plans.PlanTable`,
    built once per table): the goals that swim to a target and their targets, the goals with plan
    events of their own (a plan type's ``ends``/``fails`` predicates, fish/formula.py), and which
    plan events concern each goal (one row per plan type, one column per event)."""

    def __init__(self, plans: PlanTable) -> None:
        types = plans.types
        self.seeks = tuple((goal, TARGETS[t.seek]) for goal, t in enumerate(types) if t.seek)
        self.seeking = np.zeros(len(types), bool)  # by goal code: does it seek
        self.seeking[[goal for goal, _ in self.seeks]] = True
        self.predicates = tuple((goal, Formula(t.fails, "fails") if t.fails else None,
                                 Formula(t.ends, "ends") if t.ends else None)
                                for goal, t in enumerate(types) if t.ends or t.fails)
        self.predicated = np.zeros(len(types), bool)
        self.predicated[[goal for goal, _, _ in self.predicates]] = True
        self.watched = self.seeking | self.predicated  # a plan World.step looks after beyond the tick itself
        self.watched_u8 = self.watched.astype(np.uint8)  # (as the compiled adopt reads it)
        self.flags = np.array([[event in t.events for event in GOAL_FLAG_COLUMNS] for t in types], bool)
        self.flags_u8 = self.flags.astype(np.uint8)


def goal_parts(plans: PlanTable) -> GoalParts:
    """The world's parts of a run's plan table (built once per table)."""
    return plans.part("world", GoalParts)




class RequestExtras(NamedTuple):
    """What a decision request carries of its fish beyond view and state (:meth:`World.request_extras`)."""

    places: np.ndarray | None
    plants: np.ndarray | None
    prey: np.ndarray | None
    hunters: np.ndarray | None
    bites: np.ndarray | None


class Asks(NamedTuple):
    """The fish asking for a decision and what a request carries about each (:meth:`World.asks`)."""

    fish: np.ndarray  # int64
    triggers: np.ndarray  # int8 trigger codes
    codes: np.ndarray  # (k, side²) int8 view codes
    energy: np.ndarray
    heading: np.ndarray
    traits: np.ndarray
    food_here: np.ndarray  # bool
    refused: np.ndarray  # (k, moves) bool: directions refused lately (hard_timeout ticks)




@dataclass(frozen=True)
class StateArray:
    """One per-fish array of the tank's state, declared once in :data:`FISH_STATE`: the
    :class:`School` builds it from here, the state hash and the keyframes walk this table (in
    its order), and the compiled tick takes it by this name (``_tick.c`` checks every array's
    size against the dtype it expects, so a row given another dtype fails loudly)."""

    name: str
    dtype: Any
    width: int = 0  # columns per fish (0: one value per fish)
    fill: int = 0  # the value of a fresh tank
    hashed: bool = True  # part of the state hash
    kept: bool = True  # in keyframes (everything hashed is kept; report counters are kept too)


FISH_STATE: tuple[StateArray, ...] = (
    StateArray("cell", np.int64),
    StateArray("heading", np.int8),
    StateArray("energy", np.int32),
    StateArray("age", np.int32),
    StateArray("intent", np.int8, fill=Action.REST),  # the action steering chose last tick
    StateArray("stuck", np.int32),
    StateArray("last_decision", np.int32),
    StateArray("food_seen", np.int16),  # food count in view after the last tick
    StateArray("neighbours", np.int16),  # other fish in view after the last tick
    StateArray("failed", bool),  # last attempted action failed
    StateArray("refused_at", np.int32, width=4, fill=NEVER),  # last tick a move north/south/west/east failed
    StateArray("food_rose", bool),  # more food in view than a tick before
    StateArray("neighbours_changed", bool),
    StateArray("traits", np.int16, width=5),
    StateArray("eats", np.int32),
    StateArray("refusals", np.int32),
    StateArray("moves", np.int32),
    StateArray("company_ticks", np.int32),
    # The standing plan (fish.plans): goal, parameter, the tick it ends, and the trigger raised
    # since it was set (-1: none yet).
    StateArray("plan_goal", np.int8, fill=G_HOLD),
    StateArray("plan_param", np.int16, fill=Action.REST),
    StateArray("plan_end", np.int32, fill=NO_END),
    StateArray("plan_trigger", np.int8, fill=-1),
    StateArray("no_food", np.int32),  # ticks since food was last in view
    StateArray("alone", np.int32),  # ticks since another fish was last in view
    StateArray("crowded", bool),
    StateArray("hungry_food", bool),
    # Counters for reports and summaries: kept in keyframes, not hashed.
    StateArray("max_stuck", np.int32, hashed=False),
    StateArray("action_counts", np.int32, width=N_ACTIONS, hashed=False),
    StateArray("decisions", np.int32, hashed=False),
    StateArray("at_summary", np.int64, width=len(AT_SUMMARY), hashed=False),  # at the last summary (AT_SUMMARY)
    # Out of the water (spare room, or taken out: see World.park); kept and hashed only when it
    # differs from a fresh tank's (World._touched), so untouched tanks hash as before it existed.
    StateArray("absent", bool, hashed=False, kept=False),
)
MEMORY_STATE = ("tick", "code", "arg", "count")  # the short memory's arrays (fish.memory.ShortMemory): kept, hashed


def state_table(grid: Grid) -> tuple[StateArray, ...]:
    """:data:`FISH_STATE` as ``grid``'s tank holds it: the arrays with a column per move or per
    action are as wide as its moves and actions (the square grid's: the table itself)."""
    widths = {"refused_at": grid.n_moves, "action_counts": grid.n_actions}
    fills = {"intent": grid.rest, "plan_param": grid.rest}  # (a fresh fish rests)
    if all(a.width == widths.get(a.name, a.width) and a.fill == fills.get(a.name, a.fill) for a in FISH_STATE):
        return FISH_STATE
    return tuple(StateArray(a.name, a.dtype, widths.get(a.name, a.width), fills.get(a.name, a.fill), a.hashed,
                            a.kept) for a in FISH_STATE)


class School:
    """All per-fish state as parallel arrays (index = fish id), one per row of :data:`FISH_STATE`."""

    HASHED = tuple(a.name for a in FISH_STATE if a.hashed)  # in the state hash, in this order
    STATE = tuple(a.name for a in FISH_STATE if a.kept)  # everything a keyframe must hold

    def __init__(self, n: int, cfg_memory: MemoryConfig, table: tuple[StateArray, ...] = FISH_STATE):
        self.n = n
        self.ids = np.arange(n, dtype=np.int64)
        for a in table:
            setattr(self, a.name, np.full((n, a.width) if a.width else n, a.fill, a.dtype))
        self.persona: list[str] = []
        self.memory = ShortMemory(n, cfg_memory.short_size)
        self.long_memory = LongMemory(n, cfg_memory.summaries_kept, cfg_memory.summary_anchors)

    if TYPE_CHECKING:  # the arrays are set from FISH_STATE: to a type checker, every one is an array
        def __getattr__(self, name: str) -> np.ndarray: ...

        def __setattr__(self, name: str, value: Any) -> None: ...


class World:
    """One aquarium. ``World(cfg)`` is fully determined by ``cfg`` (including ``cfg.seed``)."""

    def __init__(self, cfg: Config, summarizer: Summarizer | None = None, registry: Registry | None = None):
        self.cfg = cfg
        # the run's plan types and metrics (mirofish/registry.py): every goal code here is the table's
        self.registry = registry  # None: the process's default (mirofish.registry.default)
        # (on the tank's grid: its directions and actions are worded and read there; mirofish/grid.py)
        self.plan_table: PlanTable = (registry.plans if registry is not None else DEFAULT_PLANS).on(
            grid_of(cfg.world.grid))
        self._goals = goal_parts(self.plan_table)
        self.seed = cfg.seed
        self.rng = make_generator(cfg.seed)
        self.tick = 0
        self.summarizer: Summarizer = summarizer or TemplateSummarizer()
        self.water = w = Water(cfg, self.rng)
        f = cfg.fish
        self.max_energy = hundredths(f.max_energy)
        self.decay, self.move_cost = hundredths(f.decay_per_tick), hundredths(f.move_cost)
        self._bodies(cfg)
        self.eat_cost, self.rest_gain = hundredths(f.eat_cost), hundredths(f.rest_gain)
        self.rest_ceiling = hundredths(f.rest_ceiling)
        self.food_energy = hundredths(cfg.food.energy)
        self.low_line = int(self.max_energy * cfg.triggers.low_energy_fraction)
        self.hungry_line = int(self.max_energy * cfg.triggers.hungry_fraction)
        self.sated_line = int(self.max_energy * cfg.triggers.sated_fraction)
        self.plans = cfg.brain.decides == "plan"
        # the grid (mirofish/grid.py): which cells touch; the actions' codes follow its moves
        self.grid = g = grid_of(cfg.world.grid)
        self.eat_action, self.rest_action = g.eat, g.rest
        # each move's, each meal's and the view's flat offsets (a hexagonal tank's too: its store
        # is axial, where every step is one fixed offset: mirofish/water.py)
        self.delta = g.deltas(w.pw)
        self.eat_offsets = g.eat_offsets(w.pw)
        self.window = w.view_offsets().astype(np.int64)
        self.occupant = np.full(w.terrain.size, -1, np.int32)  # fish ids (int32: half the grid after() reads at random)
        self.block_cells = w.terrain.size  # one tank's grid (joined tanks, mirofish/batch.py: each one's block)

        n, k = f.slots, f.count  # room for n fish; k in the water at the start (spare ones out of it)
        if k > w.open_cells.size:
            raise ValueError(f"{k} fish do not fit in {w.open_cells.size} open cells")
        self.state_table = state_table(g)  # the per-fish arrays as this grid's tank holds them
        self.school = s = School(n, cfg.memory, self.state_table)
        s.cell[:k] = self.rng.choice(w.open_cells, size=k, replace=False)
        s.heading[:k] = self.rng.integers(0, g.n_moves, k)
        lo, hi = hundredths(f.start_energy_min), hundredths(f.start_energy_max)
        s.energy[:k] = self.rng.integers(lo, hi + 1, k)
        s.age[:k] = self.rng.integers(0, f.start_age_max + 1, k)
        s.traits[:k] = sample_traits(self.rng, k, cfg.fish.sociability_shift)
        # Out of the water (spare room, or taken out): parked on the glass corner, where nothing
        # sees them (a viewer sees glass there), nothing enters, and they only rest.
        self.park = int(w.cell(0, 0))
        self.used_slots = k  # slots ever in the water: the state hash covers these
        s.absent[k:] = True
        s.cell[k:] = self.park
        s.energy[k:] = hundredths(f.start_energy_max)
        if self.max_energy_of is not None:  # (after the draws: the tank's random stream as before)
            np.minimum(s.energy, self.max_energy_of, out=s.energy)
        s.persona = [persona_text(t) for t in s.traits]
        if self.plans:  # until its first plan arrives (late, from a slow model), a fish swims on
            s.plan_goal[:], s.plan_param[:] = FIRST_PLAN, s.heading
        s.last_decision[:] = -max(cfg.triggers.hard_timeout, cfg.triggers.plan_timeout)  # all decide at tick 0
        s.at_summary[:, AS["energy"]] = s.energy
        self.occupant[s.cell[:k]] = s.ids[:k]
        self._id_keys = mix64(cfg.seed, s.ids)
        self._flags = np.zeros((n, EVENT_ORDER.size), bool)  # per tick: which memory events happened
        self._args = np.zeros((n, EVENT_ORDER.size), np.int16)  # … and their arguments
        # Species' births, deaths and hunting (mirofish/population.py); None: no group has a rule,
        # and then nothing of it is kept or hashed, so such tanks hash as before species existed.
        self.population = Population(self) if any(g.species_rules for g in f.groups) else None
        self.hunting: bool = self.population is not None and bool(self.population.hunters)  # does a group hunt?
        # does a group flee its hunters (the flee plan, GroupConfig.flees: docs/species.md)?
        self.fleeing: bool = self.hunting and any(g.flees for g in cfg.fish.groups)
        self._flee = self.plan_table.code.get("flee", -1)  # (World.hunted: a fish already fleeing asks nothing)
        # plants as food (GroupConfig.eats_plants; mirofish/grazing.py); None: no group grazes, and then
        # nothing of it is kept or hashed, so such tanks hash as before plants could be eaten
        self.grazing: Grazing | None = Grazing(self) if any(g.eats_plants for g in f.groups) else None
        self._eat_here = np.zeros(n, bool)  # fish a graze plan keeps eating beside its plant (World.seek)
        # whether a request here carries anything of request_extras (the engine asks for them only then)
        self.has_extras = (f.places > 0 or cfg.perception.plants_seen or self.hunting or self.fleeing
                           or self.grazing is not None)
        self.steering = self._new_steering(cfg)
        self._hunger_scale = 1.0 / (0.8 * self.max_energy)
        # Places each fish remembers where it ate (fish/places.py); None: none (fish.places = 0),
        # and then nothing of them is kept or hashed, so such tanks hash as before they existed.
        self.places = Places(n, f.places) if f.places else None
        # Whether any fish may be swimming to a target (World.seek): set by a plan that seeks
        # (apply_plans, refresh), cleared by seek when none is; a tank with places always looks.
        self._seeking = self.places is not None
        # What a decision is told of the fish's memory (fish/recall.py): the default, or none;
        # a memory of a person's own is attached by the session they start (attach_memory).
        self.recall_part: Any = NoMemory() if cfg.memory.kind == "none" else TwoLevel(self)
        self._events_seen: np.ndarray | None = None  # event counts a memory was told up to (None: not told)
        # Whether any fish may hold a plan with events of its own (plan_predicates): set as
        # _seeking is, cleared by plan_predicates when none does.
        self._predicating = False
        # Set by a reader that replays a recording for its states only: the actions the
        # recording says each fish executed this tick, used instead of steering (which would
        # choose the same ones). Everything else follows exactly — plan triggers included, so
        # the state hash a recording keeps can be checked on this path too.
        self.given_actions: np.ndarray | None = None
        # The compiled tick (mirofish.kernel) or None for the numpy reference; a scratch grid for it.
        self._kernel = kernel.compiled_tick()
        self._best = np.full(w.terrain.size, -1, np.int64)
        self.base_cfg = cfg  # the tank as built: tuned settings are kept (and hashed) against it
        self.current: tuple[int, int] | None = None  # a current (direction, until tick): interventions
        self.look()

    def _bodies(self, cfg: Config) -> None:
        """Each group's own body (GroupConfig: decay_per_tick, move_cost, max_energy, view_radius,
        moves_per_tick) as per-slot arrays, each None where no group sets its own (then the tick and
        the hash are as before the key)."""
        f = cfg.fish
        # a group's own body (GroupConfig decay_per_tick, move_cost): per fish slot, or None where no
        # group sets its own (every fish pays the tank's: the arithmetic and the hash as before)
        self.decay_of: np.ndarray | None = None
        self.move_cost_of: np.ndarray | None = None
        if any(g.decay_per_tick is not None or g.move_cost is not None for g in f.groups):
            of = np.array(f.group_of(), np.intp)
            own = [(hundredths(g.decay_per_tick) if g.decay_per_tick is not None else self.decay,
                    hundredths(g.move_cost) if g.move_cost is not None else self.move_cost) for g in f.groups]
            own.append((self.decay, self.move_cost))  # the fish no group takes
            table = np.array(own, np.int32)
            self.decay_of = np.ascontiguousarray(table[of, 0])
            self.move_cost_of = np.ascontiguousarray(table[of, 1])
        # the most energy each fish holds (GroupConfig.max_energy): per fish slot, or None where every fish
        # holds the tank's fish.max_energy (the hunger, low and sated lines stay the tank's either way)
        tops = cfg.max_energy_of()
        self.max_energy_of: np.ndarray | None = None if tops is None else np.array(tops, np.int32)
        self.top_energy = self.max_energy if tops is None else max(tops)  # (the scale of bars and observations)
        # the most energy of each fish as the tick clamps to it: the tank's, or each slot's own
        self.energy_tops: int | np.ndarray = self.max_energy if self.max_energy_of is None else self.max_energy_of
        # how far each fish sees (GroupConfig.view_radius): its rings of the window, per fish slot; None
        # where every fish sees the whole window (then nothing is masked: the views and hash as before)
        self.rings = view_rings(cfg.perception.radius)
        self.sight: np.ndarray | None = None
        self._beyond = np.zeros((0, self.rings.size), bool)
        # cells each fish may swim a tick (GroupConfig.moves_per_tick): per fish slot; None where every
        # fish swims one (then nothing more is done: the tick and hash as before)
        fast = cfg.moves_of()
        self.moves_of: np.ndarray | None = None if fast is None else np.array(fast, np.int8)
        radii = cfg.view_radii()
        if radii is not None:
            self.sight = np.array(radii, np.int8)
            self._beyond = self.rings[None, :] > self.sight[:, None]  # (slots, side²): cells each fish cannot see

    @property
    def tick_kernel(self) -> str:
        """``"compiled"`` (mirofish/_tick.c) or ``"numpy"``: which tick this world runs (mirofish.kernel)."""
        return "numpy" if self._kernel is None else "compiled"

    # ------------------------------------------------------------ perception

    def look(self) -> tuple[np.ndarray, np.ndarray]:
        """Every fish's view codes now (one gather), and the food and fish counts in them.

        The codes stay valid until the next :meth:`step` (nothing else moves fish or food):
        they serve the triggers, the brains' requests and the next tick's steering.
        """
        s = self.school
        grid = cell_codes(self.water.blocked, self.water.food_born != NO_FOOD, s.cell, s.heading)
        self.codes = view_codes(grid, s.cell[:, None] + self.window[None, :])
        if self.sight is not None:  # beyond a fish's own sight: open water to it
            self.codes[self._beyond] = V_WATER
        food_seen = np.count_nonzero(self.codes == V_FOOD, axis=1).astype(np.int16)
        neighbours = np.count_nonzero(self.codes >= V_FISH, axis=1).astype(np.int16)
        s.food_seen, s.neighbours = food_seen, neighbours
        return food_seen, neighbours

    def move_targets(self, cells: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """The cell each of ``cells`` would move to by ``actions`` (a move's code; any other
        action gives some neighbour, ignored by whoever asks)."""
        out: np.ndarray = cells + self.delta[np.minimum(actions, self.grid.n_moves - 1)]
        return out

    def food_in_view(self, fish: np.ndarray) -> np.ndarray:
        """Food cells in view of each of ``fish`` now, the one under it included (as of the
        last :meth:`look`: what a decision asked now is asked with)."""
        s = self.school
        under = self.water.food_born[s.cell[fish]] != NO_FOOD
        seen: np.ndarray = s.food_seen[fish].astype(np.int16) + under
        return seen

    LIVE_KEYS = LIVE_KEYS  # settings a running tank may change; the rest apply at a reset (config.py)
    # where each fish's rows of steering's plan weights start (empty: at 0, one table for all; a
    # joined world of tanks of other live settings stacks their tables: mirofish/batch.py)
    _row_base = np.zeros(0, np.int64)

    def retune(self, cfg: Config) -> None:
        """Take ``cfg``'s :attr:`LIVE_KEYS` from now on (``cfg`` equals the current config
        elsewhere). A recording stores one config, so a tank being recorded is not retuned."""
        self.cfg = cfg
        self.water.spawn_rate = cfg.food.spawn_rate
        self.steering = self._new_steering(cfg)

    def _new_steering(self, cfg: Config) -> Steering:
        """Steering for the fish as they are now (traits, plans; a species that eats no food)."""
        s = self.school
        st = Steering(cfg.steering, cfg.seed, cfg.perception.radius, s.traits,
                      no_food=self.population.no_food if self.population is not None else None, plans=self.plan_table,
                      grid=self.grid)
        st.set_plans(s.ids, s.plan_goal, s.plan_param)
        return st

    def tune(self, key: str, value: float) -> None:
        """Change one of :attr:`LIVE_KEYS` to ``value`` from now on (ValueError naming the
        problem for another key or a value the config refuses)."""
        self.retune(self.tuned_config(key, value))

    def tuned_config(self, key: str, value: float) -> Config:
        """The current config with ``key`` (one of :attr:`LIVE_KEYS`) set to ``value``, validated."""
        from pydantic import ValidationError

        if key not in self.LIVE_KEYS:
            raise ValueError(f"{key} can't change while the tank runs (it applies at a reset)")
        data = self.cfg.model_dump()
        section, name = key.split(".")
        data[section][name] = value
        try:
            cfg = type(self.cfg).model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"{key}: {exc.errors()[0]['msg']}") from None
        return cfg

    def tuned(self) -> dict[str, float]:
        """The live settings that differ from the tank as built (``{key: value}``)."""
        out = {}
        for key in self.LIVE_KEYS:
            section, name = key.split(".")
            now, was = getattr(getattr(self.cfg, section), name), getattr(getattr(self.base_cfg, section), name)
            if now != was:
                out[key] = float(now)
        return out

    def intervene(self, iv: dict[str, Any]) -> dict[str, Any]:
        """Apply a hands-on intervention now (see :mod:`mirofish.interventions`)."""
        return interventions.apply(self, iv)

    def refit_fish(self) -> None:
        """After fish were added or taken out: steering takes the traits and plans as they are now."""
        self.steering = self._new_steering(self.cfg)

    def refresh(self) -> None:
        """Recompute what is derived from the state (views, the steering's plan weights) after
        the state was loaded from a keyframe or a snapshot."""
        self.look()
        self.steering.set_plans(self.school.ids, self.school.plan_goal, self.school.plan_param)
        self._seeking = True  # (seek finds out)
        self._predicating = bool(self._goals.predicates)  # (plan_predicates finds out)

    def energy_cap(self, i: int) -> int:
        """The most energy fish ``i`` can hold, in hundredths (its group's ``max_energy``, else the tank's)."""
        return self.max_energy if self.max_energy_of is None else int(self.max_energy_of[i])

    def view_codes(self, fish: np.ndarray) -> np.ndarray:
        """``(k, side²)`` view codes for the given fish (see :mod:`mirofish.fish.perception`)."""
        codes: np.ndarray = self.codes[fish]
        return codes

    def perceive(self, i: int, codes: np.ndarray | None = None) -> Perception:
        """Fish ``i``'s complete perception (the only input any brain gets)."""
        s = self.school
        if codes is None:
            codes = self.view_codes(np.array([i]))[0]
        shown: tuple[str, ...] = ("sight",) if self.sight is not None else ()
        if self.cfg.perception.plants_seen:  # plants show as P (steering still reads them as glass)
            codes = shown_codes(codes, s.cell[i] + self.window, self.water.terrain == PLANT)
            shown = (*shown, "plants_seen")
        if self.hunting and self.population is not None:  # hunters show as X (docs/species.md)
            codes = hunters_shown(codes, self.occupant[s.cell[i] + self.window], self.population.hunter_mask,
                                  bool(self.population.hunter_mask[i]))
            shown = (*shown, "hunting", *(("fleeing",) if self.fleeing else ()))  # (the flee plan: listed)
        if self.grazing is not None and self.grazing.grazes[i]:  # its group eats plants (the graze plan: listed)
            shown = (*shown, "grazing")
        if self.sight is not None and self.sight[i] < self.water.pad:  # beyond its sight: ?
            codes = unseen_shown(codes, self.rings, int(self.sight[i]))
        x, y = self.water.xy(s.cell[i])
        view = render_view(codes) if not self.grid.hex else self.grid.render(codes, self.cfg.perception.radius)
        memories, summaries = self.recall_part.recall(int(i), self.tick, view)
        which = getattr(self.recall_part, "recalled", None)
        return Perception(
            recalled=which(int(i)) if which is not None else (),
            shown=shown, grid=self.grid.name,
            tick=self.tick, view=view, food_here=bool(self.water.food_born[s.cell[i]] != NO_FOOD),
            energy=int(s.energy[i]), max_energy=self.energy_cap(i), age=int(s.age[i]),
            memories=tuple(memories), summaries=tuple(summaries),
            places=self.places.describe(i, (int(x), int(y)), self.tick) if self.places is not None else "",
        )

    # ------------------------------------------------------------ decisions

    def triggers(self) -> np.ndarray:
        """Per fish: the trigger code asking for a decision this tick, or -1 (keep the standing plan)."""
        s, t = self.school, self.cfg.triggers
        out = np.full(s.n, -1, np.int8)
        if self.plans and not t.poll_every:
            out[self.tick - s.last_decision >= t.plan_timeout] = T_TIMEOUT
            raised = s.plan_trigger >= 0
            out[raised] = s.plan_trigger[raised]
            return out
        if t.poll_every:  # the polling baseline: no events, a fixed rhythm
            out[self.tick - s.last_decision >= t.poll_every] = T_TIMEOUT
            return out
        out[self.tick - s.last_decision >= t.hard_timeout] = T_TIMEOUT
        if t.neighbours_changed:
            out[s.neighbours_changed] = T_NEIGHBOURS
        if t.food_rose:
            out[s.food_rose] = T_FOOD_ROSE
        if t.action_failed:
            out[s.failed] = T_ACTION_FAILED
        out[s.energy < self.low_line] = T_LOW_ENERGY
        return out

    @kernel.positional
    def asks(self, waiting: np.ndarray) -> Asks:
        """The fish that ask for a decision now — their trigger is set (:meth:`triggers`), they
        are not ``waiting`` for an answer and are in the water — and what a request carries
        about each (in the compiled tick one C call finds and gathers them)."""
        s, t = self.school, self.cfg.triggers
        if self._kernel is None:
            trig = self.triggers()
            need = ((trig >= 0) & ~waiting & ~s.absent).nonzero()[0]
            return Asks(need, trig[need], self.view_codes(need), s.energy[need], s.heading[need], s.traits[need],
                        self.water.food_born[s.cell[need]] >= 0, self.recently_refused(need, t.hard_timeout))
        plan_mode, events = self.plans and not t.poll_every, not self.plans and not t.poll_every
        return Asks._make(self._kernel.ask(  # by name (kernel.ASK_ARRAYS, ASK_INTS): the asking fish's new arrays
            {"last_decision": s.last_decision, "plan_trigger": s.plan_trigger,
             "neighbours_changed": s.neighbours_changed, "food_rose": s.food_rose,
             "failed": s.failed, "energy": s.energy, "waiting": waiting,
             "absent": s.absent, "codes": self.codes, "heading": s.heading, "traits": s.traits,
             "cell": s.cell, "food_born": self.water.food_born, "refused_at": s.refused_at},
            {"tick": self.tick,
             "timeout": t.plan_timeout if plan_mode else (t.poll_every or t.hard_timeout),
             "plan_trigger_on": int(plan_mode), "events_on": int(events), "t_timeout": T_TIMEOUT,
             "t_neighbours": T_NEIGHBOURS if t.neighbours_changed else -1,
             "t_food_rose": T_FOOD_ROSE if t.food_rose else -1,
             "t_action_failed": T_ACTION_FAILED if t.action_failed else -1, "t_low_energy": T_LOW_ENERGY,
             "low_line": self.low_line, "refused_within": t.hard_timeout}))

    def recently_refused(self, fish: np.ndarray, within: int) -> np.ndarray:
        """``(k, moves)`` bool: directions in which each fish's move failed during the last ``within`` ticks."""
        refused: np.ndarray = self.school.refused_at[fish] >= self.tick - within
        return refused

    def apply_decisions(self, fish: np.ndarray, actions: np.ndarray) -> None:
        """Make single actions the fish's standing plans (``hold``), from this tick on."""
        a = np.asarray(actions, np.int16)
        self.apply_plans(fish, np.zeros(a.size, np.int8), a, np.zeros(a.size, np.int16))

    def give(self, actions: np.ndarray) -> None:
        """The environment's actions (one per fish, flat or by tank): a fish in the water given
        another action than the one it holds takes it as its standing plan (``hold``), the others
        keep theirs (mirofish/vector.py, mirofish/batch.py)."""
        s, a = self.school, np.asarray(actions).reshape(-1)
        change = changed_plans(s, a)
        if self.population is not None and np.count_nonzero(s.absent):
            change &= ~s.absent
        pick = np.flatnonzero(change)
        if pick.size:
            self.apply_decisions(pick, a[pick])

    @kernel.positional
    def apply_plans(self, fish: np.ndarray, goals: np.ndarray, params: np.ndarray, horizons: np.ndarray,
                    ended: bool = False) -> np.ndarray | None:
        """Make decided plans the fish's standing plans, from this tick on (horizon 0 = none).
        ``fish`` holds no fish twice (one batch's); in the compiled tick one C call does it all.
        ``ended``: return what ended each fish's plan as the new one replaces it, int8 (Frame.ended:
        its raised trigger, the horizon's where a raised one met the plan's end, -1 none raised)."""
        s = self.school
        parts = self._goals
        if self._kernel is not None:
            st = self.steering
            gr = st.goal_rows
            code, watched = self._kernel.adopt(  # by name (kernel.ADOPT_ARRAYS, ADOPT_NUMBERS): the ended codes
                {"fish": np.asarray(fish, np.int64), "goals": np.asarray(goals, np.int8),
                 "params": np.asarray(params, np.int16), "horizons": np.asarray(horizons, np.int16),
                 "plan_goal": s.plan_goal, "plan_param": s.plan_param, "plan_end": s.plan_end,
                 "plan_trigger": s.plan_trigger, "no_food": s.no_food, "intent": s.intent,
                 "last_decision": s.last_decision, "decisions": s.decisions, "w": st.w, "bias": st.bias,
                 "forage": st.forage, "snacks": st.snacks, "rests": st.rests, "table": st.table,
                 "personal": st.personal, "goal_start": gr.start, "goal_variants": gr.variants,
                 "goal_eats": gr.eats, "goal_rests": gr.rests, "goal_biased": gr.biased,
                 "goal_watched": parts.watched_u8, "row_base": self._row_base},
                {"tick": self.tick, "no_end": NO_END, "t_horizon": T_HORIZON, "direction": st.cfg.direction})
            if watched and not (self._seeking and self._predicating):  # (and how many plans are watched)
                self._watch(goals)
            if st.no_food is not None:  # a species that eats no food (docs/species.md)
                st.mask_food(np.asarray(fish))
            return code if ended else None
        if not (self._seeking and self._predicating) and np.count_nonzero(parts.watched[np.asarray(goals, np.intp)]):
            self._watch(goals)
        out = None
        if ended:  # (before the plans are replaced: the compiled adopt's codes, in numpy)
            out = s.plan_trigger[fish]
            out[(out >= 0) & (s.plan_end[fish] <= self.tick)] = T_HORIZON
            out = out.astype(np.int8, copy=False)
        s.plan_goal[fish] = goals
        s.plan_param[fish] = params
        h = np.asarray(horizons, np.int64)
        s.plan_end[fish] = np.where(h > 0, self.tick + h, NO_END)
        s.plan_trigger[fish] = -1
        s.no_food[fish] = 0  # counts ticks without food in view during this plan
        hold = np.asarray(goals) == G_HOLD
        s.intent[np.asarray(fish)[hold]] = np.asarray(params)[hold]
        s.last_decision[fish] = self.tick
        s.decisions[fish] += 1
        self.steering.set_plans(fish, goals, params)
        return out

    def _watch(self, goals: np.ndarray) -> None:
        """Plans of these goals are adopted, some of which World.step looks after: it seeks
        targets or checks plan predicates from now on (flags, so a tank without them pays nothing)."""
        parts, g = self._goals, np.asarray(goals, np.intp)
        self._seeking = self._seeking or bool(parts.seeking[g].any())
        self._predicating = self._predicating or bool(parts.predicated[g].any())

    @kernel.positional
    def steer(self) -> np.ndarray:
        """This tick's action of every fish: ``hold`` plans their action, the others by steering."""
        s = self.school
        if self.given_actions is not None:
            return np.asarray(self.given_actions, np.int8).copy()
        if self._kernel is not None:
            st = self.steering
            c, rows = st.cfg, st.rows
            out: np.ndarray = self._kernel.steer(  # by name (kernel.STEER_ARRAYS, STEER_NUMBERS): a new array
                {"goal": s.plan_goal, "param": s.plan_param, "codes": self.codes, "heading": s.heading,
                 "energy": s.energy, "food_born": self.water.food_born, "cell": s.cell, "refused_at": s.refused_at,
                 "stuck": s.stuck, "w": st.w, "bias": st.bias, "forage": st.forage, "snacks": st.snacks,
                 "rests": st.rests, "keys": st.keys, "rows_start": rows["rows_start"],
                 "rows_column": rows["rows_column"], "rows_value": rows["rows_value"],
                 "rows_dense": rows["rows_dense"]},
                {"tick": self.tick, "hunger_scale": self._hunger_scale, "persistence": c.persistence,
                 "refused": c.refused, "eat": c.eat, "rest": c.rest, "temperature": c.temperature})
            if self.grazing is not None:
                out[self._grazing_now()] = self.eat_action  # a graze plan beside its plant eats
            return out
        executed = s.plan_param.astype(np.int8)  # hold plans: their action
        planned = (s.plan_goal != G_HOLD).nonzero()[0]
        if planned.size:
            hungry = np.clip(1.0 - s.energy[planned] * self._hunger_scale, 0.0, 1.0)
            executed[planned] = self.steering.actions(
                self.tick, planned, self.codes[planned], s.heading[planned], hungry,
                self.water.food_born[s.cell[planned]] != NO_FOOD, s.refused_at[planned] >= self.tick - 2,
                s.stuck[planned])
        executed[s.energy <= 0] = self.rest_action
        if self.grazing is not None:
            executed[self._grazing_now()] = self.eat_action  # a graze plan beside its plant eats
        return executed

    def _grazing_now(self) -> np.ndarray:
        """Fish a graze plan keeps eating beside its plant: not exhausted and not full (a bite
        to a full fish would be wasted)."""
        s = self.school
        eating: np.ndarray = self._eat_here & (s.energy > 0) & (s.energy < self.energy_tops)
        return eating

    # ------------------------------------------------------------ the tick

    def step(self) -> StepOutcome:
        """Advance one tick using every fish's standing intent (then a current, if one flows)."""
        if self._seeking:
            self.seek()
        out = step_compiled(self) if self._kernel is not None else step_numpy(self)
        if self.grazing is not None:
            self.grazing.grow(out.tick)
        if self.population is not None and self.population.step(self):
            self.refit_fish()
        if self._predicating:
            self.plan_predicates()
        if self.fleeing and self.plans:
            self.hunted()
        if self._events_seen is not None:
            self.recall_part.remember(new_events(self, self._events_seen))
        if self.places is not None and np.count_nonzero(out.ate):
            eaters = np.flatnonzero(out.ate)
            x, y = self.water.xy(self.school.cell[eaters])
            self.places.remember(eaters, x, y, out.tick)
        if self.current is not None:
            interventions.drift(self)
        if self.grazing is not None and self.plans:  # (last: what a hungry grazer sees after all of the tick)
            self.grazing.notice(self, T_HUNGRY_FOOD)
        return out

    def seek(self) -> None:
        """Fish whose plan swims to a target (a plan type's ``seek``: fish/targets.py): steering
        pulls each toward it (the way that closes the larger of the two distances, as explore's
        way is pulled); one that is there ends its plan this tick (``then = "end"``: ``return``,
        and so does one whose place is gone) or rests there (``"stay"``: ``hide``, remembering its
        arrival; with no target in view it keeps still where it is). Runs before either tick
        (compiled or numpy), so both stay the same hash for hash."""
        s, st, found_any = self.school, self.steering, False
        if self.grazing is not None:
            self._eat_here[:] = False
        for goal, target in self._goals.seeks:
            if not target.on(self):
                continue
            fish = np.flatnonzero((s.plan_goal == goal) & ~s.absent)
            if not fish.size:
                continue
            found_any = True
            dx, dy, found = target.find(self, fish)
            there = is_there(target, dx, dy)
            st.bias[fish] = 0.0
            if target.then == "end":
                gone = there | ~found
            elif target.then == "graze":  # it eats beside its plant; with none in view its plan ends
                gone = ~found
                self._eat_here[fish[there & found]] = True
            else:  # it stays there; with none in view it keeps still where it is (its plan goes on)
                gone = np.zeros(fish.size, bool)
                staying = there & found
                if target.remembers:  # came to rest there: just planned, or moved there last tick
                    came = staying & ~st.rests[fish] & ((s.last_decision[fish] == self.tick)
                                                        | ((s.intent[fish] < self.grid.n_moves) & (s.stuck[fish] == 0)))
                    s.memory.record(fish[came], self.tick, mem.ARRIVED, 0)
                st.rests[fish] = staying | ~found
                there = there | ~found  # (not pulled anywhere)
            s.plan_end[fish[gone]] = np.minimum(s.plan_end[fish[gone]], self.tick)
            pulled = ~gone & ~there
            st.bias[fish[pulled], way_to(dx, dy)[pulled]] = st.cfg.direction
        if not found_any and self.places is None:
            self._seeking = False  # until a plan that seeks is adopted again (apply_plans)

    def plan_predicates(self) -> None:
        """After a tick, the plan events a plan type declares as predicates over named features
        (its ``fails`` and ``ends``: fish/formula.py): a fish holding such a plan, in the water,
        with no trigger raised yet since the plan was set, gets ``plan_failed`` when ``fails``
        holds, else ``plan_done`` when ``ends`` does, and asks for its next plan. A predicate never
        overrides a trigger the tick already raised (stuck, low energy, the horizon … outrank it).
        Runs after either tick, compiled or numpy, so both stay the same hash for hash; a tank
        where no fish holds such a plan pays nothing (a flag, as :meth:`seek`'s)."""
        s, any_held = self.school, False
        for goal, fails, ends in self._goals.predicates:
            fish = np.flatnonzero(s.plan_goal == goal)
            if not fish.size:
                continue
            any_held = True
            fish = fish[(s.plan_trigger[fish] < 0) & ~s.absent[fish]]
            if not (self.plans and fish.size):
                continue
            values = from_world(self, fish)
            ev = np.full(fish.size, -1, np.int8)
            if ends is not None:
                ev[ends(values, fish.size) != 0] = T_PLAN_DONE
            if fails is not None:
                ev[fails(values, fish.size) != 0] = T_PLAN_FAILED
            hit = ev >= 0
            s.plan_trigger[fish[hit]] = ev[hit]
        self._predicating = any_held

    def hunted(self) -> None:
        """After a tick, in a tank where a group flees: a fish of such a group in the water, with no
        trigger raised yet, not fleeing already, that has a hunter of its group in view gets
        ``hunter_in_view`` and asks for its next plan (it may flee: docs/species.md). Runs after
        either tick, compiled or numpy, so both stay the same hash for hash."""
        s, pop = self.school, self.population
        assert pop is not None
        fish = np.flatnonzero(pop.flees & ~s.absent & (s.plan_trigger < 0) & (s.plan_goal != self._flee))
        if fish.size:
            fish = fish[self.hunters_seen(fish) > 0]
            s.plan_trigger[fish] = T_HUNTER

    def attach_memory(self, memory: Any, name: str, timeout_s: float | None = None) -> Guarded:
        """Make ``memory`` (fish/recall.py's protocol) what decisions are told of the fish's
        memory from now on; told every tick's events from now on when it has ``remember``
        (``timeout_s``: a memory of a person's own, each call bounded: fish/recall.Guarded)."""
        held = Guarded(memory, TwoLevel(self), name, timeout_s)
        self.recall_part = held
        self._events_seen = self.school.memory.count.astype(np.int64) if held.wants_events else None
        return held

    @property
    def memory_fallbacks(self) -> int:
        """Decisions that got the two-level block because the attached memory raised."""
        return int(getattr(self.recall_part, "fallbacks", 0))

    def request_extras(self, fish: np.ndarray) -> RequestExtras:
        """What a decision request carries of ``fish`` beyond its view and state, each only in a
        tank that has it (None else): its best remembered place, the plants, prey, hunters and
        plants with a bite it sees (the engine's requests and a session's ``request_for`` alike)."""
        return RequestExtras(self.place_options(fish) if self.places is not None else None,
                             self.plants_shown(fish) if self.cfg.perception.plants_seen else None,
                             self.prey_seen(fish) if self.hunting else None,
                             self.hunters_seen(fish) if self.fleeing else None,
                             self.bites_seen(fish) if self.grazing is not None else None)

    def bites_in_view(self, fish: np.ndarray) -> np.ndarray:
        """``(k, side²)`` bool: the cells of each fish's view window that are plants with a bite
        left, for a fish of a group that eats plants (all False for the others, and in a tank
        where no group does: mirofish/grazing.py)."""
        fish = np.asarray(fish, np.int64)
        if self.grazing is None:
            return np.zeros((fish.size, self.window.size), bool)
        out = self.grazing.with_bites(self.school.cell[fish][:, None] + self.window[None, :])
        out &= self.grazing.grazes[fish][:, None]
        if self.sight is not None:
            out &= ~self._beyond[fish]
        return out

    def bites_seen(self, fish: np.ndarray) -> np.ndarray:
        """``(k,)`` plant cells with a bite left in each of ``fish``'s view (0 for a fish whose group
        does not eat plants: the planner's ``bites_seen``)."""
        counts: np.ndarray = self.bites_in_view(fish).sum(axis=1)
        return counts

    def plants_in_view(self, fish: np.ndarray) -> np.ndarray:
        """``(k, side²)`` bool: the cells of each fish's view window that are plants, row by row."""
        plants: np.ndarray = self.water.terrain[self.school.cell[fish][:, None] + self.window[None, :]] == PLANT
        if self.sight is not None:
            plants &= ~self._beyond[fish]
        return plants

    def prey_in_view(self, fish: np.ndarray) -> np.ndarray:
        """``(k, side²)``: where each of ``fish`` sees a fish of a group its group hunts (all
        False in a tank without hunters: docs/species.md)."""
        return self._groups_in_view(fish, hunted=False)

    def hunters_in_view(self, fish: np.ndarray) -> np.ndarray:
        """``(k, side²)``: where each of ``fish`` sees a fish of a group that hunts its group
        (all False in a tank without hunters)."""
        return self._groups_in_view(fish, hunted=True)

    def _groups_in_view(self, fish: np.ndarray, hunted: bool) -> np.ndarray:
        fish = np.asarray(fish, np.int64)
        out = np.zeros((fish.size, self.window.size), bool)
        pop = self.population
        if pop is None or not pop.hunters:  # (self.hunting, spelt out for the type checker)
            return out
        occ = self.occupant[self.school.cell[fish][:, None] + self.window[None, :]]
        seen = occ >= 0
        if self.sight is not None:
            seen &= ~self._beyond[fish]
        pair = pop.prey_of.T if hunted else pop.prey_of  # [viewer's group, seen fish's group]
        out[seen] = pair[np.repeat(pop.of[fish], self.window.size).reshape(occ.shape)[seen], pop.of[occ[seen]]]
        return out

    def hunters_seen(self, fish: np.ndarray) -> np.ndarray:
        """``(k,)`` fish of groups that hunt it in each of ``fish``'s view, for a fish of a group
        that flees (``GroupConfig.flees``; 0 for the others: the planner's ``hunters_seen``)."""
        pop = self.population
        if pop is None or not self.fleeing:
            return np.zeros(np.asarray(fish).size, np.int64)
        counts: np.ndarray = np.where(pop.flees[np.asarray(fish, np.int64)], self.hunters_in_view(fish).sum(axis=1), 0)
        return counts

    def prey_seen(self, fish: np.ndarray) -> np.ndarray:
        """``(k,)`` fish of groups it hunts in each of ``fish``'s view."""
        counts: np.ndarray = self.prey_in_view(fish).sum(axis=1)
        return counts

    def plants_shown(self, fish: np.ndarray) -> np.ndarray:
        """Plant cells in each fish's view as it is shown them (0 without ``perception.plants_seen``)."""
        if not self.cfg.perception.plants_seen:
            return np.zeros(fish.size, np.int64)
        counts: np.ndarray = self.plants_in_view(fish).sum(axis=1)
        return counts

    def place_options(self, fish: np.ndarray) -> np.ndarray | None:
        """``(k, 3)`` for a request: each fish's place with the most meals (slot, or -1 for
        none), its meals there and its distance (Chebyshev, cells); None without places."""
        if self.places is None:
            return None
        p, s = self.places, self.school
        slot = p.best(fish)
        j = np.maximum(slot, 0)
        x, y = self.water.xy(s.cell[fish])
        dist = np.maximum(np.abs(p.x[fish, j] - x), np.abs(p.y[fish, j] - y))
        return np.stack([slot, np.where(slot >= 0, p.meals_at[fish, j], 0), dist], axis=1).astype(np.int64)

    @kernel.positional
    def _summarize(self) -> None:
        """Every ``summary_every`` ticks, write a long-term summary for each fish with news.

        Each record is built from the counters since the last summary plus the newest
        ``summary_anchors`` raw events, quoted as they are; the persona is not an input.
        """
        s, c, m = self.school, self.cfg.memory, self.school.memory
        if self.tick % c.summary_every:
            return
        if self._kernel is not None:  # the same records, fish by fish in C (_tick.summarize)
            lm = s.long_memory
            self._kernel.summarize(  # by name (_tick.SUMMARIZE_ARRAYS, SUMMARIZE_INTS)
                {"mem_count": m.count, "mem_tick": m.tick, "mem_code": m.code, "mem_arg": m.arg,
                 "at_summary": s.at_summary, "eats": s.eats, "refusals": s.refusals, "moves": s.moves,
                 "company": s.company_ticks, "energy": s.energy, "records": lm.records, "long_count": lm.count},
                {"tick": self.tick, "summary_every": c.summary_every, "mem_size": m.size, "anchors": lm.anchors,
                 "kept": lm.kept})
            return
        a = AS
        due = np.flatnonzero((np.minimum(m.count, m.size) >= c.summary_anchors)
                             & (m.count > s.at_summary[:, a["memories"]]))
        if due.size == 0:
            return
        prev = s.at_summary[due]
        slots = (m.count[due, None] - np.arange(c.summary_anchors, 0, -1)[None, :]) % m.size
        rows_idx = due[:, None]
        anchors = np.stack([m.tick[rows_idx, slots], m.code[rows_idx, slots], m.arg[rows_idx, slots]], axis=2)
        now = {"memories": m.count[due], "eats": s.eats[due], "refusals": s.refusals[due], "moves": s.moves[due],
               "company": s.company_ticks[due], "energy": s.energy[due]}
        head = {"tick": np.full(due.size, self.tick), "since": np.full(due.size, max(0, self.tick - c.summary_every)),
                "ate": now["eats"] - prev[:, a["eats"]], "refused": now["refusals"] - prev[:, a["refusals"]],
                "moves": now["moves"] - prev[:, a["moves"]], "company": now["company"] - prev[:, a["company"]],
                "energy_from": prev[:, a["energy"]] // 100, "energy_to": now["energy"] // 100}
        s.long_memory.add(due, np.concatenate([np.stack([head[f] for f in mem.SUMMARY_FIELDS], axis=1),
                                               anchors.reshape(due.size, -1)], axis=1))
        s.at_summary[due] = np.stack([now[col] for col in AT_SUMMARY], axis=1)

    def summary_due(self, i: int) -> tuple[int, str] | None:
        """(serial, facts) of fish ``i``'s newest summary if no model has written it yet."""
        lm = self.school.long_memory
        serial = int(lm.count[i]) - 1
        if serial < 0 or (i, serial) in lm.texts:
            return None
        item = lm.items(i)[-1]
        return serial, self.summarizer.summarize(item)

    def write_summary(self, i: int, serial: int, text: str) -> None:
        """Store a model-written long-term summary (it replaces the template text; the persona is untouched)."""
        lm = self.school.long_memory
        oldest = int(lm.count[i]) - lm.kept
        if oldest <= serial < int(lm.count[i]):
            lm.texts[(int(i), int(serial))] = text
            for key in [k for k in lm.texts if k[0] == i and k[1] < oldest]:
                del lm.texts[key]

    def summaries(self, i: int) -> list[str]:
        """Fish ``i``'s long-term summaries (at most ``summaries_kept``), oldest first."""
        return self.school.long_memory.summaries(i, self.summarizer)

    # ------------------------------------------------------------ hashing

    def state_arrays(self) -> dict[str, np.ndarray]:
        """Copies of every array that decides the future (and the report counters).

        :meth:`load_state_arrays` on a world built from the same config continues exactly
        like this one; recordings store these as keyframes.
        """
        s, w = self.school, self.water
        out: dict[str, np.ndarray] = {"tick": np.array([self.tick], np.int64)}
        for name in School.STATE:
            out[f"fish.{name}"] = getattr(s, name).copy()
        for name in MEMORY_STATE:
            out[f"memory.{name}"] = getattr(s.memory, name).copy()
        out["long.records"] = s.long_memory.records.copy()
        out["long.count"] = s.long_memory.count.copy()
        cells = w.food_cells()
        out["food.cell"], out["food.born"] = cells, w.food_born[cells]
        st = self.rng.bit_generator.state
        rng = {"bit_generator": st["bit_generator"], "state": {k: str(v) for k, v in st["state"].items()},
               "has_uint32": st["has_uint32"], "uinteger": str(st["uinteger"])}
        out["rng"] = np.frombuffer(json.dumps(rng).encode(), np.uint8).copy()
        texts = [[f, k, t] for (f, k), t in s.long_memory.texts.items()]
        out["long.texts"] = np.frombuffer(json.dumps(texts).encode(), np.uint8).copy()
        if self.places is not None:
            out.update({name: a.copy() for name, a in self.places.arrays().items()})
        out.update(self._touched())
        return out

    def _touched(self) -> dict[str, np.ndarray]:
        """What interventions left in the tank, as keyframe arrays — only what is there: a
        tank nobody touched has none (and hashes as before interventions existed)."""
        out: dict[str, np.ndarray] = {}
        if self.water.edited:
            out["water.terrain"] = self.water.terrain.copy()
        if self.current is not None:
            out["world.current"] = np.array(self.current, np.int64)
        s = self.school
        if self.used_slots != self.cfg.fish.count:
            out["world.slots"] = np.array([self.used_slots], np.int64)
        if not np.array_equal(s.absent, s.ids >= self.cfg.fish.count):
            out["fish.absent"] = s.absent.copy()
        if self.population is not None:
            out[POPULATION_KEY] = self.population.state()
        if self.grazing is not None:
            out[PLANTS_KEY] = self.grazing.state()
        tuned = self.tuned()
        if tuned:
            out["world.tuned"] = np.frombuffer(json.dumps(tuned, sort_keys=True).encode(), np.uint8).copy()
        return out

    def load_state_arrays(self, d: dict[str, np.ndarray]) -> None:
        """Put this world (built from the same config) into the state :meth:`state_arrays` returned."""
        s, w = self.school, self.water
        for name, mine in self.state_arrays().items():  # a keyframe from elsewhere is refused, not cast
            if name in d and (d[name].dtype != mine.dtype or d[name].shape[1:] != mine.shape[1:]
                              or (name.startswith("fish.") and d[name].shape != mine.shape)):
                raise ValueError(f"array {name} is {d[name].dtype}{list(d[name].shape)}, "
                                 f"expected {mine.dtype}{list(mine.shape)}")
        self.tick = int(d["tick"][0])
        for name in School.STATE:
            if f"fish.{name}" in d:  # recordings made before plans lack the plan arrays: hold plans
                setattr(s, name, np.array(d[f"fish.{name}"], dtype=getattr(s, name).dtype))
        for name in MEMORY_STATE:
            setattr(s.memory, name, np.array(d[f"memory.{name}"], dtype=getattr(s.memory, name).dtype))
        s.long_memory.records = np.array(d["long.records"], np.int32)
        s.long_memory.count = np.array(d["long.count"], np.int32)
        s.long_memory.texts = {(int(f), int(k)): t for f, k, t in json.loads(bytes(d["long.texts"]).decode())}
        s.persona = [persona_text(t) for t in s.traits]
        w.load_terrain(d.get("water.terrain"))
        self.used_slots = int(d["world.slots"][0]) if "world.slots" in d else self.cfg.fish.count
        s.absent = np.array(d["fish.absent"], bool) if "fish.absent" in d else s.ids >= self.cfg.fish.count
        self.current = tuple(int(v) for v in d["world.current"]) if "world.current" in d else None  # type: ignore[assignment]
        if self.population is not None:
            self.population.load(d.get(POPULATION_KEY))
        if self.grazing is not None:
            self.grazing.load(d.get(PLANTS_KEY))
            if self.plans:
                self.grazing.near = self.grazing.seeing(self)  # (derived: what notice left after the tick)
        tuned = json.loads(bytes(d["world.tuned"]).decode()) if "world.tuned" in d else {}
        if tuned or self.tuned():
            self.retune(self.base_cfg)
            for key, value in sorted(tuned.items()):
                self.tune(key, value)
        w.food_born[:] = NO_FOOD
        w.food_born[d["food.cell"]] = d["food.born"]
        w.oldest_food = None
        if self.places is not None:
            self.places.load(d)
        self.occupant[:] = -1
        self.occupant[s.cell[~s.absent]] = s.ids[~s.absent]
        self.refit_fish()  # added fish have traits of their own
        self.refresh()
        rng = json.loads(bytes(d["rng"]).decode())
        self.rng.bit_generator.state = {
            "bit_generator": rng["bit_generator"], "state": {k: int(v) for k, v in rng["state"].items()},
            "has_uint32": rng["has_uint32"], "uinteger": int(rng["uinteger"]),
        }

    def state_hash(self) -> str:
        """A digest of everything that decides the future: fish, food, memories, tick, RNG state."""
        h = hashlib.blake2b(digest_size=16)
        s = self.school
        k = self.used_slots  # room never used (fish.spare) is not hashed: a tank with spare room hashes as without
        h.update(np.int64(self.tick).tobytes())
        for name in School.HASHED:
            h.update(np.ascontiguousarray(getattr(s, name)[:k]).tobytes())
        for arr in (*(getattr(s.memory, name) for name in MEMORY_STATE), s.long_memory.records, s.long_memory.count):
            h.update(np.ascontiguousarray(arr[:k]).tobytes())
        h.update(self.water.food_born.tobytes())
        if self.places is not None:  # only in tanks whose fish remember places
            for name, arr in self.places.arrays().items():
                h.update(name.encode())
                h.update(np.ascontiguousarray(arr[:k]).tobytes())
        st = self.rng.bit_generator.state["state"]
        h.update(f"{st['state']}:{st['inc']}".encode())
        for name, arr in sorted(self._touched().items()):  # interventions' traces, only when present
            h.update(name.encode())
            h.update(arr.tobytes())
        return h.hexdigest()

    def energy_in_water(self) -> np.ndarray:
        """The energy (hundredths) of the fish in the water (not of room out of it: spare, taken
        out, starved or caught)."""
        s = self.school
        e: np.ndarray = s.energy[~s.absent] if s.absent.any() else s.energy
        return e

    def mean_energy(self) -> float:
        """Mean energy of the fish in the water, in units (0 when none is)."""
        e = self.energy_in_water()
        return float(e.mean()) / 100 if e.size else 0.0

    def low_energy_count(self) -> int:
        """Fish in the water below the low-energy line."""
        return int(np.count_nonzero(self.energy_in_water() < hundredths(self.cfg.fish.low_energy)))
