"""The instinct brain: personality-weighted tendencies and a seeded softmax, no network.

Each action gets a utility from what the fish perceives — never from the world — and its
personality scales each tendency:

* hunger × appetite → move toward food in view, eat food under or beside it;
* sociability → move toward other fish in view (and rest more readily in company — the
  source design's "steadier near others" line, as a tendency);
* curiosity → keep heading into open water (nothing in view → it still swims);
* caution → keep away from walls and from cells crowded by other fish.

The action is sampled from ``softmax(utility / temperature)`` with a uniform number that is
a pure function of (seed, fish id, tick), so the same request always gets the same answer.
Nothing here refers to a group shape: no "if two neighbours then stay" rule. Moves into a
wall or an occupied cell are impossible (the fish can see both), so it never stares at glass.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from .. import kernel
from ..config import Config, InstinctConfig, PlannerConfig, TriggersConfig, hundredths
from ..fish import places
from ..fish.features import from_request
from ..fish.formula import WEIGHT, Formula, program
from ..fish.perception import V_FISH, V_FOOD, V_WALL, V_WATER
from ..fish.plans import DEFAULT, TYPES, PlanTable
from ..fish.plantypes import switches_on
from ..fish.steering import (
    feature_matrix,
    feature_rows,
    layout,
    view_features,
)
from ..grid import SQUARE, Grid, grid_of
from ..rng import KeyTable, at_tick, mix64, seeded_softmax, to_unit
from .base import TIER_INDEX, DecisionBatch, InlineSource, RequestBatch

_NEG = -1e9


def _onehot(codes: np.ndarray) -> np.ndarray:
    """``(k, 4 classes × cells)``: water, wall, food, another fish (any heading)."""
    k = len(codes)
    classes = np.stack([codes == V_WATER, codes == V_WALL, codes == V_FOOD, codes >= V_FISH], axis=1)
    return classes.reshape(k, -1)


def _class_matrix(radius: int, grid: Grid = SQUARE) -> np.ndarray:
    """Steering's feature matrix (:func:`~mirofish.fish.steering.feature_matrix`, the one there
    is) read per class of cell instead of per view code: ``(4 classes × cells, N_FEATURES)``,
    for :func:`_onehot` views. A fish in view counts the same whichever way it faces (the rows
    of one heading; the action brain reads no alignment column)."""
    cells = grid.window_cells(radius)[0].size
    lay = layout(grid)
    full = feature_matrix(radius, grid).reshape(-1, cells, lay.n)
    return np.ascontiguousarray(full[[V_WATER, V_WALL, V_FOOD, V_FISH]].reshape(4 * cells, lay.n))


class InstinctBrain(InlineSource):
    """The embedded brain; also the fallback tier behind model brains."""

    name = "instinct"

    def __init__(self, cfg: InstinctConfig, seed: int, radius: int = 2, tier: str = "instinct", grid: Grid = SQUARE):
        super().__init__(self.decide)
        self.cfg, self.seed, self.tier = cfg, seed, TIER_INDEX[tier]
        self._lay = layout(grid)  # (the tank's grid: its moves, mirofish/grid.py)
        self._features = _class_matrix(radius, grid)
        self._keys = KeyTable(seed)
        self.decisions = 0

    def utilities(self, b: RequestBatch) -> np.ndarray:
        """``(k, moves + 2)`` utilities in action order (the moves, eat, rest); impossible actions
        get a huge negative value."""
        c, k, lay = self.cfg, len(b), self._lay
        d = lay.d
        f = _onehot(b.codes).astype(np.float64) @ self._features
        food_pull, fish_pull, wall_pull, openness, crowd, lost_n = (
            f[:, i : i + d] for i in (lay.food, lay.fish, lay.wall, lay.open, lay.crowd, lay.lost))
        visible, food_close = f[:, lay.visible], f[:, lay.food_close] > 0
        blocked = f[:, lay.blocked:lay.blocked + d] > 0
        soc, cur, cau, app, calm = (b.traits.astype(np.float64) / 100.0).T
        # Hunger is felt below 80 % of max energy and grows to 1 at empty.
        hunger = np.minimum(np.maximum(1.0 - b.energy / (0.8 * b.max_energy), 0.0), 1.0)
        # Share of the fish in view a move would lose sight of (1 = it would be alone).
        lost = lost_n / np.maximum(visible, 1.0)[:, None]
        company = np.minimum(visible, 3.0) / 3.0

        # Company matters less the hungrier a fish is: hunger sends it foraging.
        # Repeated refusals (remembered) cool the urge to push toward the others.
        social = c.social * soc * np.maximum(1.0 - c.hunger_damping * hunger, 0.0) / (1.0 + b.refused.sum(axis=1))
        u = np.empty((k, d + 2))
        u[:, :d] = (
            (c.food * (0.4 + app) * (0.2 + hunger))[:, None] * food_pull
            + social[:, None] * (fish_pull - c.cohesion * lost)
            - (c.crowd * (0.3 + cau))[:, None] * np.maximum(crowd - 1.0, 0.0)
            - (c.wall * (0.3 + cau))[:, None] * wall_pull
            + (c.open_water * (0.3 + cur + hunger) * (1.0 - 0.6 * company))[:, None] * openness
            - c.refused * b.refused
        )
        # Alone, a fish holds its course; in company it turns more readily (it patrols).
        u[np.arange(k), b.heading.astype(np.int64)] += c.persistence * (1.0 - 0.7 * company)
        u[:, :d][blocked] = _NEG
        u[:, d] = np.where(food_close | b.food_here, c.eat * (0.2 + hunger) * (0.5 + app), _NEG)  # eat
        # Resting appeals to calm fish, a little more in company ("steadier near others" —
        # a tendency, not a rule about where to stay), and less the hungrier they are.
        u[:, d + 1] = c.rest * (calm + c.company * soc * company - 0.8 - 2.0 * hunger)  # rest
        return u

    def decide(self, b: RequestBatch) -> DecisionBatch:
        draws = to_unit(at_tick(self._keys[b.fish], b.tick))
        actions = seeded_softmax(self.utilities(b), self.cfg.temperature, draws).astype(np.int8)
        self.decisions += len(b)
        return DecisionBatch(tick=b.tick, fish=b.fish, actions=actions,
                             tier=np.full(len(b), self.tier, np.int8), plain=True)

    def status(self) -> dict[str, Any]:
        return {"source": self.name, "decisions": self.decisions}


# The planner's built-in choices, in _tick.c's plan() order (which exports the same names as
# PLANNER_UTILITIES): each is the ``planner`` of one plan type, whose goal it chooses and whose
# parameter and horizon it picks; its utility is the row's formula (return's: computed, revisit()).
PLANNER_UTILITIES = ("forage", "school", "explore", "rest", "keep_away", "return")
_BY_UTILITY = {t.planner: t for t in TYPES if t.planner}
_unknown = sorted(set(_BY_UTILITY) - set(PLANNER_UTILITIES))
if _unknown or len(_BY_UTILITY) != len(PLANNER_UTILITIES):
    raise ValueError(f"plan types and the instinct planner disagree: planner utilities {sorted(_BY_UTILITY)}, "
                     f"the planner computes {list(PLANNER_UTILITIES)}")
PLANNER_TYPES = tuple(_BY_UTILITY[u] for u in PLANNER_UTILITIES)
_BUILT_IN_UTILITIES = tuple(Formula(t.utility or "0") for t in PLANNER_TYPES[:-1])  # forage … keep_away
_U_SCHOOL, _U_RETURN = PLANNER_UTILITIES.index("school"), PLANNER_UTILITIES.index("return")
_FIVE = np.arange(5, dtype=np.uint64)[None, :]
_EMPTY = np.empty(0)
_STRETCH = [0, 1, 4]  # trait columns: sociability, curiosity, calm


class _Weighted(Mapping[str, Any]):
    """A request's features and, as ``weight``, one plan type's planner weight (formula.WEIGHT)."""

    def __init__(self, values: Mapping[str, np.ndarray], weight: float):
        self.features, self.weight = values, np.float64(weight)

    def __getitem__(self, name: str) -> Any:
        return self.weight if name == WEIGHT else self.features[name]

    def __iter__(self) -> Iterator[str]:
        return iter([*self.features, WEIGHT])

    def __len__(self) -> int:
        return len(self.features) + 1


class InstinctPlanner(InlineSource):
    """The embedded brain in plan mode: chooses a plan from what the fish perceives.

    Goal utilities, each a plan type's formula over the fish's features, scaled by personality
    and state (and sampled by a seeded softmax): forage grows with hunger × appetite and food in
    view; school with sociability and the company in view, fading with hunger; explore with
    curiosity, more when alone; rest with calm when sated (never while hungry with food in view);
    keep away with caution in a crowd or against the glass (fish/plantypes.py has the formulas).
    The steering layer does the swimming. No group-shape rule.
    """

    name = "instinct"

    def __init__(self, cfg: PlannerConfig, triggers: TriggersConfig, seed: int, radius: int = 2,
                 tier: str = "instinct", rest_ceiling: int = 1000, shown: tuple[str, ...] = (), grid: Grid = SQUARE):
        super().__init__(self.decide)
        self.cfg, self.trig, self.seed, self.tier = cfg, triggers, seed, TIER_INDEX[tier]
        self.rest_ceiling = rest_ceiling  # hundredths: rest revives only below this
        # the tank's grid (mirofish/grid.py): its moves are explore's directions
        self.grid, self._lay = grid, layout(grid)
        self._jitters = np.arange(1 + grid.n_moves, dtype=np.uint64)[None, :]  # the goal draw, a jitter a way
        # (shared, read-only: steering.feature_rows); its sparse rows are what the compiled planner reads
        self._matrix, self._rows = feature_rows(radius, grid)
        self._keys = KeyTable(mix64(seed, 0x91A2))
        # each built-in choice's weight (its utility formula's ``weight``) and base horizon
        # (PlannerConfig, named by its plan type)
        self._weights = np.array([getattr(cfg, t.planner_weight) for t in PLANNER_TYPES], np.float64)
        self._base_ticks = np.array([getattr(cfg, t.planner_ticks) for t in PLANNER_TYPES], np.float64)
        self.never_school = False  # brain.chooser = "never_school": school is never chosen
        self.decisions = 0
        self._shown = shown
        # the compiled planner (_tick.c's plan(): the same decisions, tests/test_kernel.py), or
        # None: this module's numpy code, the reference (either grid: plan() reads its moves from the rows)
        self._kernel = kernel.compiled_tick()
        self._adopt(DEFAULT)

    def _adopt(self, plans: PlanTable) -> None:
        """Draw among ``plans``' formula plan types (a run's table: each request carries it, and
        the planner takes a new one when a request brings it)."""
        self._table = plans
        cfg, shown = self.cfg, self._shown
        # The plan types whose utility is a formula and that have no built-in choice, drawn among
        # with the built-in six; one that needs a perception switch the tank has off (``shown``:
        # the switches on) is left out, so such a tank decides exactly as before it existed.
        self.formulas = tuple((t, Formula(t.utility)) for t in plans.types
                              if t.utility and not t.planner and (t.needs is None or t.needs in shown))
        self._formula_weights = [float(getattr(cfg, t.planner_weight)) if t.planner_weight else 1.0
                                 for t, _ in self.formulas]
        missing = [t.name for t in PLANNER_TYPES if t.name not in plans.code]
        if missing:
            raise ValueError(f"the instinct planner needs the plan type {missing[0]}, which this run's table lacks")
        self._plan_goals = np.array([plans.code[t.name] for t in PLANNER_TYPES], np.int8)
        self._goals = np.concatenate([self._plan_goals,
                                      np.array([plans.code[t.name] for t, _ in self.formulas], np.int8)])
        self._extra_ticks = np.array([t.ticks for t, _ in self.formulas], np.float64)
        # every utility the planner draws among but return's: the five built-in rows', then the
        # formula plan types', each with its weight (the ``weight`` its formula may name)
        self._utilities = [*zip(_BUILT_IN_UTILITIES, self._weights.tolist()),
                           *((f, w) for (_, f), w in zip(self.formulas, self._formula_weights))]
        if self._kernel is not None:  # each as a program the compiled planner runs
            features = tuple(self._kernel.FORMULA_FEATURES)
            parts = [program(f, features, {WEIGHT: float(w)}) for f, w in self._utilities]
            self._ops = np.concatenate([o for o, _ in parts])
            self._args = np.concatenate([a for _, a in parts])
            self._starts = np.cumsum([0] + [len(o) for o, _ in parts]).astype(np.int64)

    def utilities(self, b: RequestBatch, f: np.ndarray) -> np.ndarray:
        """``(k, 5 + m)`` the utilities of forage, school, explore, rest, keep_away and the
        :attr:`formulas`' plan types — their rows' formulas in numpy (``f``: the request's view
        features)."""
        k = len(b)
        values = from_request(b.energy, b.max_energy, b.traits, f, b.plants, self.trig.low_energy_fraction,
                              self.trig.crowd_line, b.prey, self.trig.hungry_fraction, self.rest_ceiling, b.hunters,
                              b.bites, self._lay)
        u = np.empty((k, len(self._utilities)))
        for j, (formula, w) in enumerate(self._utilities):
            u[:, j] = formula(_Weighted(values, w), k)
        return u

    def revisit(self, b: RequestBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return's utility (``_NEG`` where there is no place to return to), place and horizon per
        fish: a hungry fish with no food in view, away from its place with the most meals, is
        drawn back to it — more by appetite, hunger and the meals it had there."""
        k = len(b)
        if b.places is None or self.cfg.revisit <= 0:
            return self._no_places(k)
        u, param, horizon = np.full(k, _NEG), np.zeros(k, np.int64), np.zeros(k)
        slot, meals, dist = b.places[:, 0], b.places[:, 1], b.places[:, 2]
        hunger = np.clip(1.0 - b.energy.astype(np.float64) / (0.8 * b.max_energy), 0.0, 1.0)
        app = b.traits[:, 3].astype(np.float64) / 100.0
        food_seen = (b.codes == V_FOOD).any(axis=1)
        ok = (slot >= 0) & (dist > places.RADIUS) & ~food_seen & (hunger > 0)
        u[ok] = (self.cfg.revisit * (0.5 + app) * hunger * (1.0 + 0.25 * np.minimum(meals, 4)))[ok]
        param[ok] = slot[ok]
        horizon[ok] = np.minimum(np.maximum(self.cfg.revisit_ticks, 3 * dist), 600)[ok]
        return u, param, horizon

    def decide(self, b: RequestBatch) -> DecisionBatch:
        if b.plans is not self._table:  # another run's table (mirofish/registry.py)
            self._adopt(b.plans)
        if self._kernel is not None and b.fish.size:
            return self._decide_compiled(b)
        c, k = self.cfg, len(b)
        rows = np.arange(k)
        f = view_features(b.codes, self._matrix)
        t = b.traits.astype(np.float64) / 100.0
        # one hash per fish and tick gives the goal draw and a jitter per direction
        draws = to_unit(at_tick(self._keys[b.fish][:, None] + self._jitters, b.tick))
        every = self.utilities(b, f)
        u5 = every[:, :_U_RETURN]
        if self.never_school:
            u5[:, _U_SCHOOL] = _NEG
        back, back_param, back_horizon = self.revisit(b)
        m = len(self.formulas)
        u = np.concatenate([u5, back[:, None], every[:, _U_RETURN:]], axis=1)
        pick = seeded_softmax(u, c.temperature, draws[:, 0])
        if not m:  # without a place, exactly the five goals (with formulas return's NEG gives it no mass)
            pick = np.where(back <= _NEG, np.minimum(pick, 4), pick)
        # explore: the way that is open, favouring the current course and where others swim
        lay = self._lay
        way = (f[:, lay.open : lay.open + lay.d]
               + 0.5 * f[:, lay.align : lay.align + lay.d] / np.maximum(f[:, lay.visible], 1)[:, None])
        way[rows, b.heading.astype(np.intp)] += 0.3
        way += 0.6 * draws[:, 1:]
        choices = np.zeros((k, 6 + m), np.int64)  # each goal's parameter: explore a way, rest until, keep away from
        choices[:, 2] = way.argmax(axis=1)
        choices[:, 3] = np.where(b.energy < self.rest_ceiling, self.rest_ceiling // 100, 100)
        choices[:, 4] = f[:, lay.visible] < self.trig.crowd_line - 2
        choices[:, 5] = back_param
        params = choices[rows, pick]
        # horizons: a base per goal, stretched by the trait that goal answers to (school:
        # sociability, explore: curiosity, rest: calm); return's by the distance
        stretch = np.ones((k, 5))
        stretch[:, 1:4] = 0.5 + t[:, _STRETCH]
        five = np.minimum(pick, 4)
        horizons = np.where(pick == 5, back_horizon, np.round(self._base_ticks[five] * stretch[rows, five]))
        if m:  # a formula's plan type: its default horizon
            horizons = np.where(pick > 5, self._extra_ticks[np.maximum(pick - 6, 0)], horizons)
        self.decisions += k
        return DecisionBatch(tick=b.tick, fish=b.fish, actions=None, tier=np.full(k, self.tier, np.int8),
                             goals=self._goals[pick], params=params, horizons=horizons, plain=True)

    @kernel.positional
    def _decide_compiled(self, b: RequestBatch) -> DecisionBatch:
        """:meth:`decide` in the compiled tick: the same arithmetic (the draws' hashes too), fish
        by fish in C, which makes the batch's arrays."""
        k = b.fish.size
        c, t, compiled = self.cfg, self.trig, self._kernel
        assert compiled is not None
        back, back_param, back_horizon = (self._no_places(k) if b.places is None or self.cfg.revisit <= 0
                                          else self.revisit(b))
        codes, traits, energy, heading = b.codes, b.traits, b.energy, b.heading
        if not (codes.dtype == np.int8 and traits.dtype == np.int16 and energy.dtype == np.int32
                and heading.dtype == np.int8 and codes.flags.c_contiguous and traits.flags.c_contiguous
                and energy.flags.c_contiguous and heading.flags.c_contiguous):  # (the engine's requests are)
            codes, traits = np.ascontiguousarray(codes, np.int8), np.ascontiguousarray(traits, np.int16)
            energy, heading = np.ascontiguousarray(energy, np.int32), np.ascontiguousarray(heading, np.int8)
        goals, params, horizons, tier, status, tokens = compiled.plan(  # by name (kernel.PLAN_ARRAYS, PLAN_NUMBERS)
            {"codes": codes, "rows_start": self._rows["rows_start"], "rows_column": self._rows["rows_column"],
             "rows_value": self._rows["rows_value"], "traits": traits, "energy": energy, "heading": heading,
             "keys": self._keys[b.fish],
             "base": self._base_ticks, "revisit": back, "revisit_param": back_param,
             "revisit_horizon": back_horizon, "goal_of": self._plan_goals,
             "plants": _EMPTY if b.plants is None else _doubles(b.plants),  # (inline: no call per batch
             "prey": _EMPTY if b.prey is None else _doubles(b.prey),  # in the usual tank, the call budget)
             "hunters": _EMPTY if b.hunters is None else _doubles(b.hunters),
             "bites": _EMPTY if b.bites is None else _doubles(b.bites),
             "ops": self._ops, "args": self._args, "starts": self._starts, "extra_goal": self._goals[6:],
             "extra_ticks": self._extra_ticks},
            {"rest_ceiling": int(self.rest_ceiling), "never_school": int(self.never_school), "tick": int(b.tick),
             "tier": self.tier,
             "max_energy": float(b.max_energy), "low_energy_fraction": float(t.low_energy_fraction),
             "hungry_fraction": float(t.hungry_fraction), "crowd_line": float(t.crowd_line),
             "temperature": c.temperature})
        self.decisions += k  # (the batch's arrays are new and of its types: made without conversions)
        fish = b.fish if b.fish.dtype == np.int64 else np.asarray(b.fish, np.int64)  # (the engine's requests' are)
        return DecisionBatch.made(b.tick, fish, tier, status, tokens, goals, params, horizons, plain=True)

    def _no_places(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return's inputs for ``k`` fish that cannot return: never (read-only, kept between calls)."""
        if self._none is None or len(self._none[0]) < k:
            self._none = (np.full(max(k, 64), _NEG), np.zeros(max(k, 64), np.int64), np.zeros(max(k, 64)))
        return self._none[0][:k], self._none[1][:k], self._none[2][:k]

    _none: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def status(self) -> dict[str, Any]:
        return {"source": self.name, "decisions": self.decisions}

    def explain(self, b: RequestBatch) -> list[str]:
        """Why the first fish of ``b`` would choose what it chooses now: the goals ranked by
        utility (with the chance the seeded softmax gives each), and the facts they rest on."""
        f = view_features(b.codes[:1], self._matrix)
        one = b.subset(np.array([0]))
        u = self.utilities(one, f)[0]
        z = np.exp((u - u.max()) / self.cfg.temperature)
        p = z / z.sum()
        names = [name.replace("_", " ") for name in PLANNER_UTILITIES[:5]] + [t.name for t, _ in self.formulas]
        energy = float(b.energy[0]) / 100
        hunger = max(0.0, min(1.0, 1.0 - float(b.energy[0]) / (0.8 * b.max_energy)))
        soc, cur, cau, app, calm = (int(v) for v in b.traits[0])
        lines = [f"{names[g]}: utility {u[g]:.2f}, chance {p[g]:.0%}" for g in np.argsort(-u)[:3] if u[g] > -1e8]
        lines.append(f"because: energy {energy:.1f} (hunger {hunger:.0%}), {int(f[0, self._lay.food_seen])} food and "
                     f"{int(f[0, self._lay.visible])} fish in view")
        lines.append(f"personality: sociability {soc}, curiosity {cur}, caution {cau}, appetite {app}, calm {calm}")
        return lines


def _doubles(a: np.ndarray) -> np.ndarray:
    """A request's per-fish counts as the compiled planner reads them."""
    return np.ascontiguousarray(a, np.float64)


def _around(radius: int, grid: Grid) -> list[int]:
    """The view window's indexes of the viewer's neighbours, in move order."""
    u, v = grid.window_cells(radius)
    index = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(u, v))}
    return [index[m] for m in grid.moves]


def _open_ways(codes: np.ndarray, radius: int, grid: Grid = SQUARE) -> np.ndarray:
    """``(k, moves)``: the cell one move away (north, south, west, east; a hexagonal tank's six)
    is water or food."""
    nbr = codes[:, _around(radius, grid)]
    ways: np.ndarray = (nbr == V_WATER) | (nbr == V_FOOD)
    return ways


# What the random chooser picks among: the plans that fit a view by what is in it (not a remembered place).
_RANDOM_FITS = ("always", "fish_in_view", "open_way")  # what RandomChooser can tell of a view


class RandomChooser(InlineSource):
    """A control arm (``brain.chooser = "random"``): uniformly at random among what fits the
    view — in plan mode the plans (forage; school with fish in view; explore an open way; rest;
    keep away), with the planner's base horizons; in action mode the legal actions. Seeded per
    (seed, fish, tick) like the instinct."""

    name = "random"

    def __init__(self, cfg: Config, tier: str = "instinct"):
        super().__init__(self.decide)
        self.plans = cfg.brain.decides == "plan"
        self.never_school = False
        self.radius, self.tier = cfg.perception.radius, TIER_INDEX[tier]
        self.grid = grid_of(cfg.world.grid)  # (its moves: mirofish/grid.py)
        self._planner_cfg = cfg.brain.planner
        self._adopt(DEFAULT)
        self._rest_until = hundredths(cfg.fish.rest_ceiling) // 100
        self._keys = KeyTable(mix64(cfg.seed, 0x7A11))
        self.decisions = 0

    def _adopt(self, plans: PlanTable) -> None:
        """Draw among ``plans``' types that fit any view (a run's table, from its requests)."""
        self._table = plans
        p = self._planner_cfg
        self._types = tuple(t for t in plans.types if t.fits in _RANDOM_FITS)
        self._goals = np.array([plans.code[t.name] for t in self._types], np.int8)
        self._base = np.array([getattr(p, t.planner_ticks) if t.planner else t.ticks for t in self._types], np.int64)

    def decide(self, b: RequestBatch) -> DecisionBatch:
        if b.plans is not self._table:
            self._adopt(b.plans)
        k = len(b)
        rows = np.arange(k)
        draws = to_unit(at_tick(self._keys[b.fish][:, None] + _FIVE[:, :2], b.tick))
        ways = _open_ways(b.codes, self.radius, self.grid)
        self.decisions += k
        if not self.plans:
            food_near = (b.codes[:, _around(self.radius, self.grid)] == V_FOOD).any(axis=1)
            legal = np.concatenate([ways, (food_near | b.food_here)[:, None], np.ones((k, 1), bool)], axis=1)
            actions = _pick(legal, draws[:, 0]).astype(np.int8)
            return DecisionBatch(tick=b.tick, fish=b.fish, actions=actions, tier=np.full(k, self.tier, np.int8),
                                 plain=True)
        fish_seen = (b.codes >= V_FISH).any(axis=1)
        fit = {"always": np.ones(k, bool), "fish_in_view": fish_seen, "open_way": ways.any(axis=1)}
        fits = np.stack([fit[t.fits] & (not (self.never_school and t.name == "school")) for t in self._types], axis=1)
        pick = _pick(fits, draws[:, 0])
        by_kind = {"none": np.zeros(k, np.int64), "direction": _pick(ways, draws[:, 1]),
                   "energy": np.full(k, self._rest_until, np.int64),
                   "away": np.where(fish_seen, 0, 1)}  # from the crowd in company, else the glass
        params = np.zeros(k, np.int64)
        for j, t in enumerate(self._types):
            params[pick == j] = by_kind[t.param][pick == j]
        return DecisionBatch(tick=b.tick, fish=b.fish, actions=None, tier=np.full(k, self.tier, np.int8),
                             goals=self._goals[pick], params=params, horizons=self._base[pick][rows], plain=True)

    def status(self) -> dict[str, Any]:
        return {"source": self.name, "decisions": self.decisions}


def _pick(allowed: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Per row, the index of one allowed column, uniformly by ``draws`` in [0, 1)."""
    counts = allowed.sum(axis=1)
    nth = np.minimum((draws * counts).astype(np.int64), np.maximum(counts - 1, 0))
    picked: np.ndarray = (np.cumsum(allowed, axis=1) > nth[:, None]).argmax(axis=1)
    return picked


def instinct_source(cfg: Config, tier: str = "instinct") -> InlineSource:
    """The embedded brain for ``cfg.brain.decides``: the instinct planner, or the action brain
    (``brain.chooser``: its utilities; at random; never schooling)."""
    chooser = cfg.brain.chooser
    if chooser == "random":
        return RandomChooser(cfg, tier)
    if cfg.brain.decides == "plan":
        shown = switches_on(cfg)
        planner = InstinctPlanner(cfg.brain.planner, cfg.triggers, seed=cfg.seed, radius=cfg.perception.radius,
                                  tier=tier, rest_ceiling=hundredths(cfg.fish.rest_ceiling), shown=shown,
                                  grid=grid_of(cfg.world.grid))
        planner.never_school = chooser == "never_school"
        return planner
    weights = cfg.brain.instinct
    if chooser == "never_school":  # no pull toward other fish, no comfort in their company
        weights = weights.model_copy(update={"social": 0.0, "company": 0.0})
    return InstinctBrain(weights, seed=cfg.seed, radius=cfg.perception.radius, tier=tier, grid=grid_of(cfg.world.grid))
