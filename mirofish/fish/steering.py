"""Steering: plan + current view → one of the six actions, every tick, for every fish at once.

This is the fish's body, not its mind: deterministic, vectorised, reading only what the
fish perceives (its view codes, its energy and heading, the moves refused lately) and its
standing plan. The arbiter is unchanged — steering only chooses intents.

Each move gets a utility from features of the view (one matrix product over the one-hot
view) and the plan's goal chooses which features count:

* **separation** — avoid a target cell crowded by other fish (all goals but rest);
* **alignment** — swim the way the fish in view face (school);
* **cohesion** — close in on fish two or more cells away, and do not lose sight of the
  ones in view (school);
* food pull and eating (forage; school/explore eat food within reach when hungry);
* a preferred direction (explore), open water, the glass (keep away), holding the course.

Separation, alignment and cohesion are Reynolds' boids (1987) and the repulsion /
orientation / attraction zones of Couzin et al. (2002), made local and perceptual: each is
a tendency weighted by personality (sociability for alignment and cohesion, caution for
separation and the glass). Nothing here refers to a group's shape or size.

The action is sampled from ``softmax(utility / temperature)`` with a draw that is a pure
function of (seed, fish, tick), so the same plan in the same view gives the same action.
"""

from __future__ import annotations

import numpy as np

from ..actions import MOVE_DXDY, Action
from ..config import SteeringConfig
from ..rng import at_tick, mix64, to_unit
from .perception import N_CODES, V_FISH, V_FOOD, V_WALL, V_WATER
from .plans import Goal

_NEG = -1e9

# Feature columns (directions in Action order n, s, w, e).
F_FOOD, F_FISH, F_CROWD, F_LOST, F_WALL, F_OPEN, F_ALIGN, F_BLOCKED = (4 * i for i in range(8))
F_VISIBLE, F_FOOD_CLOSE, F_FOOD_SEEN, F_WALLS = 32, 33, 34, 35
N_FEATURES = 36


def feature_matrix(radius: int) -> np.ndarray:
    """``(N_CODES × side², N_FEATURES)``: one-hot view → every steering feature in one product."""
    side = 2 * radius + 1
    cells = side * side
    dy, dx = np.mgrid[-radius : radius + 1, -radius : radius + 1]
    dx, dy = dx.ravel(), dy.ravel()
    dist = np.abs(dx) + np.abs(dy)
    centre = cells // 2
    adjacent = [centre - side, centre + side, centre - 1, centre + 1]
    g = np.zeros((N_CODES, cells, N_FEATURES))
    fish_codes = range(V_FISH, V_FISH + 4)
    for d, (mx, my) in enumerate(MOVE_DXDY):
        closer = (np.abs(dx - mx) + np.abs(dy - my)) < dist
        ahead = np.where(closer, 1.0 / np.maximum(dist, 1), 0.0)
        # Food beside the fish is eaten from where it is; only cells two or more away pull.
        far_ahead = np.where(closer & (dist >= 2), 1.0 / np.maximum(dist, 1), 0.0)
        cheb_t = np.maximum(np.abs(dx - mx), np.abs(dy - my))
        around_target = ((cheb_t == 1) & (dist > 0)).astype(float)
        leaving = (cheb_t > radius).astype(float)
        target = (radius + my) * side + (radius + mx)
        g[V_FOOD, :, F_FOOD + d] = far_ahead
        g[V_WALL, :, F_WALL + d] = ahead
        g[V_WATER, :, F_OPEN + d] = ahead / ahead.sum()
        g[V_WALL, target, F_BLOCKED + d] = 1.0
        for c in fish_codes:
            g[c, :, F_FISH + d] = far_ahead
            g[c, :, F_CROWD + d] = around_target
            g[c, :, F_LOST + d] = leaving
            g[c, target, F_BLOCKED + d] = 1.0
        g[V_FISH + d, :, F_ALIGN + d] = 1.0  # fish in view facing direction d
    for c in fish_codes:
        g[c, :, F_VISIBLE] = 1.0
    g[V_FOOD, adjacent, F_FOOD_CLOSE] = 1.0
    g[V_FOOD, :, F_FOOD_SEEN] = 1.0
    g[V_WALL, :, F_WALLS] = 1.0
    return g.reshape(N_CODES * cells, N_FEATURES)


def view_features(codes: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``(k, N_FEATURES)`` from view codes ``(k, side²)``."""
    k, cells = codes.shape
    onehot = np.zeros((k, N_CODES * cells), np.float64)
    onehot[np.arange(k)[:, None], codes.astype(np.int64) * cells + np.arange(cells)[None, :]] = 1.0
    return onehot @ matrix


class Steering:
    """Turns every fish's plan into this tick's actions (see the module doc)."""

    def __init__(self, cfg: SteeringConfig, seed: int, radius: int, n: int):
        self.cfg = cfg
        self.matrix = feature_matrix(radius)
        self._keys = mix64(seed, 0x5EE7, np.arange(n))

    def utilities(self, f: np.ndarray, goal: np.ndarray, param: np.ndarray, heading: np.ndarray,
                  energy: np.ndarray, max_energy: int, traits: np.ndarray, food_here: np.ndarray,
                  refused: np.ndarray, stuck: np.ndarray) -> np.ndarray:
        """``(k, 6)`` utilities in Action order for fish with features ``f`` and the given plans."""
        c, k = self.cfg, len(goal)
        soc, cur, cau, app, _calm = (traits.astype(np.float64) / 100.0).T
        hunger = np.clip(1.0 - energy / (0.8 * max_energy), 0.0, 1.0)
        visible = f[:, F_VISIBLE]
        school = goal == Goal.SCHOOL
        forage = goal == Goal.FORAGE
        explore = goal == Goal.EXPLORE
        away = goal == Goal.KEEP_AWAY
        moves = f[:, F_OPEN : F_OPEN + 4] * (c.open_water * (0.5 + cur))[:, None]
        moves -= f[:, F_WALL : F_WALL + 4] * (c.wall * (0.3 + cau) * (1.0 + 3.0 * (away & (param == 1))))[:, None]
        moves -= np.maximum(f[:, F_CROWD : F_CROWD + 4] - 1.0, 0.0) * (c.separation * (0.3 + cau))[:, None]
        moves -= c.refused * refused
        # school: alignment with the headings in view, cohesion toward the others
        sw = np.where(school, 0.5 + soc, 0.0)
        share = f[:, F_ALIGN : F_ALIGN + 4] / np.maximum(visible, 1.0)[:, None]
        lost = f[:, F_LOST : F_LOST + 4] / np.maximum(visible, 1.0)[:, None]
        moves += (c.alignment * sw)[:, None] * share
        moves += (c.cohesion * sw)[:, None] * (f[:, F_FISH : F_FISH + 4] - lost)
        # forage: toward food; when none is in view it searches (open water, its course)
        moves += (c.food * np.where(forage, 0.6 + app, 0.0))[:, None] * f[:, F_FOOD : F_FOOD + 4]
        # explore: the chosen direction
        rows = np.arange(k)
        moves[rows, param.astype(np.int64) & 3] += c.direction * explore
        # keep away from a crowd: away from the fish in view
        moves -= (c.cohesion * (away & (param == 0)))[:, None] * (f[:, F_FISH : F_FISH + 4] - lost)
        moves[rows, heading.astype(np.int64)] += c.persistence
        moves[f[:, F_BLOCKED : F_BLOCKED + 4] > 0] = _NEG

        u = np.empty((k, 6))
        u[:, :4] = moves
        can_eat = (f[:, F_FOOD_CLOSE] > 0) | food_here
        # Forage eats what it reaches; the others eat within reach when hungry.
        eat_w = np.where(forage, c.eat, np.where(goal == Goal.REST, 0.0, c.eat * (hunger > 0)))
        u[:, Action.EAT] = np.where(can_eat & (eat_w > 0), eat_w * (1.0 + hunger), _NEG)
        # Resting is the rest plan's; a fish refused twice in a row may also wait for the way to clear.
        u[:, Action.REST] = np.where(goal == Goal.REST, c.rest, np.where(stuck >= 2, c.refused * (stuck - 1.0), _NEG))
        # A fish with nowhere to go (boxed in) stays put rather than bump.
        boxed = (moves <= _NEG / 2).all(axis=1) & (u[:, Action.EAT] <= _NEG / 2)
        u[boxed, Action.REST] = 0.0
        return u

    def choose(self, tick: int, fish: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Seeded softmax over utilities → actions (int8)."""
        z = u / self.cfg.temperature
        z -= z.max(axis=1, keepdims=True)
        cdf = np.cumsum(np.exp(z), axis=1)
        draw = to_unit(at_tick(self._keys[fish], tick)) * cdf[:, -1]
        return np.minimum((cdf <= draw[:, None]).sum(axis=1), 5).astype(np.int8)
