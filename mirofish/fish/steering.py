"""Steering: plan + current view → one of the six actions, every tick, for every fish at once.

This is the fish's body, not its mind: deterministic, vectorised, reading only what the
fish perceives (its view codes, its energy and heading, the moves refused lately) and its
standing plan. The arbiter is unchanged — steering only chooses intents.

Each move gets a utility from features of the view (one matrix product over the one-hot
view) and the plan's goal chooses which features count:

* **separation** — avoid a target cell crowded by other fish (every goal);
* **alignment** — swim the way the fish in view face (school);
* **cohesion** — close in on fish two or more cells away, and do not lose sight of the
  ones in view (school; keep away from a crowd does the opposite);
* food pull and eating (forage; school and explore eat food within reach when hungry);
* a preferred direction (explore), open water, the glass (keep away), holding the course.

Separation, alignment and cohesion are Reynolds' boids (1987) and the repulsion /
orientation / attraction zones of Couzin et al. (2002), made local and perceptual: each is
a tendency weighted by personality (sociability for alignment and cohesion, caution for
separation and the glass, curiosity for open water, appetite for food). Nothing here
refers to a group's shape or size.

The weights of a fish are ``goal row × personality`` (a table lookup: traits are frozen),
so a tick costs a few array operations for the whole tank. The action is sampled from
``softmax(utility / temperature)`` with a draw that is a pure function of (seed, fish,
tick), so the same plan in the same view gives the same action.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..config import SteeringConfig
from ..grid import SQUARE, Grid
from ..rng import at_tick, mix64, seeded_softmax, to_unit
from .perception import N_CODES, V_FISH, V_FOOD, V_WALL, V_WATER
from .plans import DEFAULT, PlanTable
from .plantypes import BASE_ROW, STEER_TERMS

_NEG = -1e9  # impossible
_BOXED = -1e8  # rest when nothing else is possible

# Feature columns: six blocks of four (directions n, s, w, e), then scalars.
F_OPEN, F_WALL, F_CROWD, F_ALIGN, F_FISH, F_LOST, F_FOOD, F_BLOCKED = (4 * i for i in range(8))
F_VISIBLE, F_FOOD_CLOSE, F_FOOD_SEEN, F_WALLS = 32, 33, 34, 35
N_FEATURES = 36
# The six weighted terms of a move's utility, in the order of a fish's weights (Steering.w, the
# goal table's columns, Steering.utilities' terms; _tick.c exports its own as STEER_TERMS).
TERMS = STEER_TERMS
T_OPEN, T_GLASS, T_CROWD, T_ALIGN, T_COHESION, T_FOOD = range(len(TERMS))


class GoalRows:
    """Per goal, from the plan types' table: where its rows of the steering table start and how
    many it has (a goal whose parameter picks a variant — keep away from a crowd or from the
    glass — has one per variant; any other parameter value takes the first), how it eats
    (:data:`EATS` index), whether it rests and whether its parameter is a direction to favour."""

    EATS = ("no", "hungry", "reach")

    def __init__(self, plans: PlanTable) -> None:
        self.types = types = plans.types
        self.start = np.cumsum([0] + [len(t.steer) for t in types[:-1]]).astype(np.int64)
        self.variants = np.array([len(t.steer) for t in types], np.int64)
        self.eats = np.array([self.EATS.index(t.eats) for t in types], np.uint8)
        self.rests = np.array([t.rests for t in types], np.uint8)
        self.biased = np.array([t.param == "direction" for t in types], np.uint8)
        self.n_rows = int(self.variants.sum())

    def row(self, goal: np.ndarray, param: np.ndarray) -> np.ndarray:
        """The steering table's row of each (goal, param)."""
        n = self.variants[goal]
        row: np.ndarray = self.start[goal] + np.where((n > 1) & (param >= 0) & (param < n), param, 0)
        return row

    def table(self, cfg: SteeringConfig) -> np.ndarray:
        """``(rows, TERMS)``: each row's weight of each term (sign included), from ``cfg``."""
        out = np.zeros((self.n_rows, len(TERMS)))
        r = 0
        for t in self.types:
            for variant in t.steer:
                for term, (key, factor) in {**BASE_ROW, **variant}.items():
                    out[r, TERMS.index(term)] = factor * getattr(cfg, key)
                r += 1
        return out


def goal_rows(plans: PlanTable) -> GoalRows:
    """The steering rows of a run's plan table (built once per table)."""
    return plans.part("steering", GoalRows)


GOAL_ROWS = goal_rows(DEFAULT)  # the default table's


class Layout:
    """Where each feature block sits in a grid's feature rows: eight blocks of one column per
    move (open water, glass, crowding, fish in view facing each way, fish ahead, fish lost, food,
    blocked), then the four scalars. The square grid's is the module's ``F_*`` constants (the
    compiled tick's); a hexagonal tank's blocks are six wide (mirofish/grid.py)."""

    def __init__(self, d: int) -> None:
        self.d = d
        self.open, self.wall, self.crowd, self.align, self.fish, self.lost, self.food, self.blocked = (
            d * i for i in range(8))
        self.visible, self.food_close, self.food_seen, self.walls = 8 * d, 8 * d + 1, 8 * d + 2, 8 * d + 3
        self.n = 8 * d + 4


def layout(grid: Grid = SQUARE) -> Layout:
    """The feature layout of ``grid`` (the square one's equals the ``F_*`` constants)."""
    return Layout(grid.n_moves)


def feature_matrix(radius: int, grid: Grid = SQUARE) -> np.ndarray:
    """``(codes × cells, features)``: one-hot view → every steering feature in one product (the
    codes are water, glass, food, self and a fish by each heading; the cells the view window's,
    in order: mirofish/grid.py)."""
    lay = layout(grid)
    u, v = grid.window_cells(radius)
    cells = u.size
    dist = grid.distance(u, v)
    index = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(u, v))}
    adjacent = [index[m] for m in grid.moves]
    n_codes = V_FISH + grid.n_moves
    g = np.zeros((n_codes, cells, lay.n))
    fish_codes = range(V_FISH, n_codes)
    for d, (mx, my) in enumerate(grid.moves):
        closer = grid.distance(u - mx, v - my) < dist
        ahead = np.where(closer, 1.0 / np.maximum(dist, 1), 0.0)
        # Food beside the fish is eaten from where it is; only cells two or more away pull.
        far_ahead = np.where(closer & (dist >= 2), 1.0 / np.maximum(dist, 1), 0.0)
        ring_t = grid.ring(u - mx, v - my)
        around_target = ((ring_t == 1) & (dist > 0)).astype(float)
        leaving = (ring_t > radius).astype(float)
        target = index[(mx, my)]
        g[V_FOOD, :, lay.food + d] = far_ahead
        g[V_WALL, :, lay.wall + d] = ahead
        g[V_WATER, :, lay.open + d] = ahead / ahead.sum()
        g[V_WALL, target, lay.blocked + d] = 1.0
        for c in fish_codes:
            g[c, :, lay.fish + d] = far_ahead
            g[c, :, lay.crowd + d] = around_target
            g[c, :, lay.lost + d] = leaving
            g[c, target, lay.blocked + d] = 1.0
        g[V_FISH + d, :, lay.align + d] = 1.0  # fish in view facing direction d
    for c in fish_codes:
        g[c, :, lay.visible] = 1.0
    g[V_FOOD, adjacent, lay.food_close] = 1.0
    g[V_FOOD, :, lay.food_seen] = 1.0
    g[V_WALL, :, lay.walls] = 1.0
    return g.reshape(n_codes * cells, lay.n)


_CODES = np.arange(N_CODES, dtype=np.int8)[None, :, None]


def sparse_rows(matrix: np.ndarray) -> dict[str, np.ndarray]:
    """``matrix`` without its zeros, row by row, as the compiled tick reads it (made once per
    tank): ``rows_start`` (row r's entries are ``rows_start[r]`` … ``rows_start[r + 1] - 1``),
    each entry's ``rows_column`` and ``rows_value``, columns ascending within a row. Read-only
    (shared by every tank: :func:`feature_rows`); the compiled tick checks them whole the first
    time it meets them and, while they equal the copy it kept of what it checked, not again
    (mirofish/_tick.c, sparse_take)."""
    nz = matrix != 0
    rr, cc = np.nonzero(nz)
    start = np.concatenate([[0], np.cumsum(nz.sum(axis=1))]).astype(np.int64)
    out: dict[str, np.ndarray] = {"rows_start": start, "rows_column": cc.astype(np.int32),
                                  "rows_value": np.array(matrix[rr, cc], np.float64)}  # (new arrays, no views)
    for a in out.values():  # read-only: shared by every tank
        a.flags.writeable = False
    return out


DENSE_W = 36  # the compiled tick's dense rows: a square tank's 36 features, nine vectors of four


def dense_rows(matrix: np.ndarray) -> dict[str, np.ndarray]:
    """``matrix`` with its zeros (``DENSE_W`` columns a row), as the compiled
    steering reads it on a CPU with AVX2 (the same sums as :func:`sparse_rows`', bit for bit:
    mirofish/_tick.c, view_features_dense); empty for a hexagonal tank's wider rows (the
    sparse rows serve it). Read-only: the compiled tick trusts it to be the sparse rows' matrix."""
    width = matrix.shape[1]
    dense = np.array(matrix if width == DENSE_W else np.zeros((0, DENSE_W)), np.float64)  # (a copy)
    dense.flags.writeable = False
    return {"rows_dense": dense}


@lru_cache(maxsize=16)
def feature_rows(radius: int, grid: Grid = SQUARE) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """:func:`feature_matrix` and its sparse and dense rows, made once per (radius, grid) in a
    process and shared read-only by every tank's steering and planner: the compiled tick checks
    sparse rows whole the first time it meets them, so tanks that share them (a sweep's, the
    influence forks') are not checked again, and none builds its own."""
    matrix = feature_matrix(radius, grid)
    matrix.flags.writeable = False
    return matrix, {**sparse_rows(matrix), **dense_rows(matrix)}


def view_features(codes: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``(k, features)`` from view codes ``(k, cells)``: one-hot view (code-major) @ ``matrix``."""
    n_codes = matrix.shape[0] // codes.shape[1]
    every = _CODES if n_codes == N_CODES else np.arange(n_codes, dtype=np.int8)[None, :, None]
    onehot = (codes[:, None, :] == every).reshape(len(codes), -1)
    features: np.ndarray = onehot.astype(np.float64) @ matrix
    return features


class Steering:
    """Turns every fish's plan into this tick's actions (see the module doc)."""

    def __init__(self, cfg: SteeringConfig, seed: int, radius: int, traits: np.ndarray,
                 no_food: np.ndarray | None = None, plans: PlanTable = DEFAULT, grid: Grid = SQUARE):
        self.cfg = c = cfg
        self.grid, self.lay = grid, layout(grid)
        self.goal_rows = goal_rows(plans)
        self.matrix, rows = feature_rows(radius, grid)  # (shared, read-only)
        self.rows = dict(rows)  # the same, as the compiled tick reads it (this tank's dict, the arrays shared)
        self.keys = mix64(seed, 0x5EE7, np.arange(len(traits)))
        soc, cur, cau, app, _calm = (traits.astype(np.float64) / 100.0).T
        # Per fish and term: the personality factor of each of the six feature blocks
        # (open water, glass, crowding, alignment, cohesion, food).
        self.personal = np.stack([0.5 + cur, 0.3 + cau, 0.3 + cau, 0.5 + soc, 0.5 + soc, 0.6 + app], axis=1)
        # Per goal row and term: the weight (sign included) of each block (the plan types' steer rows).
        self.table = self.goal_rows.table(c)
        # Per fish, derived from its standing plan (set_plans): the block weights, the bonus of
        # each direction (explore), whether it forages, may eat when hungry (not resting), rests.
        n = len(traits)
        self.w = np.zeros((n, len(TERMS)))
        self.bias = np.zeros((n, grid.n_moves))
        self.forage = np.zeros(n, bool)
        self.snacks = np.zeros(n, bool)
        self.rests = np.zeros(n, bool)
        # fish of a species that eats no food (docs/species.md): never pulled to food, never eat it
        self.no_food = no_food if no_food is not None and no_food.any() else None

    def set_plans(self, fish: np.ndarray, goal: np.ndarray, param: np.ndarray) -> None:
        """Take new standing plans (called whenever plans change; the weights are derived state)."""
        fish = np.asarray(fish, np.intp)
        g = np.asarray(goal, np.intp)
        param = np.asarray(param, np.intp)
        rows = self.goal_rows
        self.w[fish] = self.table[rows.row(g, param)] * self.personal[fish]
        self.bias[fish] = 0.0
        biased = rows.biased[g].astype(bool)
        self.bias[fish[biased], np.mod(param[biased], self.grid.n_moves)] = self.cfg.direction
        self.forage[fish] = rows.eats[g] == 2
        self.snacks[fish] = rows.eats[g] != 0
        self.rests[fish] = rows.rests[g].astype(bool)
        if self.no_food is not None:
            self.mask_food(fish)

    def mask_food(self, fish: np.ndarray) -> None:
        """Of ``fish``, those of a species that eats no food: no pull to food, no eating (after
        :meth:`set_plans` or the compiled tick's ``adopt`` derived their plans' weights)."""
        assert self.no_food is not None
        off = np.asarray(fish, np.intp)
        off = off[self.no_food[off]]
        self.forage[off] = self.snacks[off] = False
        self.w[off, T_FOOD] = 0.0

    def actions(self, tick: int, fish: np.ndarray, codes: np.ndarray, heading: np.ndarray, hungry: np.ndarray,
                food_here: np.ndarray, refused: np.ndarray, stuck: np.ndarray) -> np.ndarray:
        """This tick's action (int8) for each of ``fish`` (their plans as last :meth:`set_plans`)."""
        f = view_features(codes, self.matrix)
        return self.choose(tick, fish, self.utilities(fish, f, heading, hungry, food_here, refused, stuck))

    def utilities(self, fish: np.ndarray, f: np.ndarray, heading: np.ndarray, hungry: np.ndarray,
                  food_here: np.ndarray, refused: np.ndarray, stuck: np.ndarray) -> np.ndarray:
        """``(k, moves + 2)`` utilities in action order (the moves, eat, rest). ``hungry``: 0 when
        sated … 1 when empty."""
        c, k, lay = self.cfg, len(fish), self.lay
        d = lay.d
        rows = np.arange(k)
        w = self.w[fish]
        inv = 1.0 / np.maximum(f[:, lay.visible], 1.0)[:, None]
        blocks = f[:, :8 * d].reshape(k, 8, d)
        terms = np.empty((k, len(TERMS), d))  # (TERMS, from the feature blocks open … food)
        terms[:, T_OPEN:T_GLASS + 1] = blocks[:, :2]  # open water, glass
        np.maximum(blocks[:, 2] - 1.0, 0.0, out=terms[:, T_CROWD])  # crowding beyond one neighbour
        np.multiply(blocks[:, 3], inv, out=terms[:, T_ALIGN])  # share of the fish in view facing each way
        terms[:, T_COHESION] = blocks[:, 4] - blocks[:, 5] * inv  # toward the others, not losing them
        terms[:, T_FOOD] = blocks[:, 6]  # food
        u = np.empty((k, d + 2))
        moves = u[:, :d]
        np.einsum("kj,kjd->kd", w, terms, out=moves)
        moves += self.bias[fish]
        moves[rows, heading.astype(np.intp)] += c.persistence
        moves -= c.refused * refused
        moves[blocks[:, 7] > 0] = _NEG
        # Forage eats what it reaches; the others (not rest) eat within reach when hungry.
        can_eat = ((f[:, lay.food_close] > 0) | food_here) & (self.forage[fish] | ((hungry > 0) & self.snacks[fish]))
        u[:, d] = np.where(can_eat, c.eat * (1.0 + hungry), _NEG)
        # Resting is the rest plan's; a fish refused twice in a row may also wait for the way to
        # clear; a fish with nowhere to go stays put rather than bump (its rest floor beats
        # impossible moves).
        u[:, d + 1] = np.where(self.rests[fish], c.rest, np.where(stuck >= 2, c.refused * (stuck - 1.0), _BOXED))
        return u

    def choose(self, tick: int, fish: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Seeded softmax over utilities → actions (int8)."""
        return seeded_softmax(u, self.cfg.temperature, to_unit(at_tick(self.keys[fish], tick))).astype(np.int8)
