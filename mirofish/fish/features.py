"""The named per-fish features formulas read (:mod:`mirofish.fish.formula`), computed on demand.

:class:`Features` is a mapping from a feature's name to its ``(k,)`` float64 values for ``k``
fish, built from a handful of raw inputs; only the features a formula names are computed. The
planner builds it from a request (what the fish sees and is: :func:`from_request`), the tank
from its state after a tick (what it sees, is and is doing: :func:`from_world`), with the same
definitions, so a feature means the same in a utility and in an event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import hundredths
from .formula import EVENT_FEATURES
from .perception import V_WALL
from .plantypes import TRAITS

if TYPE_CHECKING:
    from ..world import World

_TRAITS = TRAITS


def _f(x: Any) -> np.ndarray:
    return np.asarray(x, np.float64)


def _trait(j: int) -> Callable[[dict[str, Any], Features], np.ndarray]:
    return lambda r, f: _f(r["traits"][:, j]) / 100.0


# each feature from the raw inputs (a dict) and the features already computed (the mapping)
_DERIVED: dict[str, Callable[[dict[str, Any], Features], np.ndarray]] = {
    "energy": lambda r, f: _f(r["energy"]) / r["max_energy"],
    "hunger": lambda r, f: np.clip(1.0 - _f(r["energy"]) / (0.8 * r["max_energy"]), 0.0, 1.0),
    "low": lambda r, f: _f(_f(r["energy"]) < r["max_energy"] * r["low_fraction"]),
    "food_seen": lambda r, f: _f(r["food_seen"]),
    "visible": lambda r, f: _f(r["visible"]),
    "company": lambda r, f: np.minimum(f["visible"], 3.0) / 3.0,
    "crowd": lambda r, f: np.maximum(f["visible"] - r["crowd_line"] + 2, 0.0) / 3.0,
    "walls": lambda r, f: _f(r["walls"]()),
    "plants_seen": lambda r, f: _f(r["plants"]()),
    "prey_seen": lambda r, f: _f(r["prey"]()),
    "hunters_seen": lambda r, f: _f(r["hunters"]()),
    "bites_seen": lambda r, f: _f(r["bites"]()),
    "hungry_food": lambda r, f: _f((_f(r["energy"]) < r["max_energy"] * r["hungry_fraction"]) & (f["food_seen"] > 0)),
    "rest_low": lambda r, f: _f(np.asarray(r["energy"]) < r["rest_ceiling"]),
    **{name: _trait(j) for j, name in enumerate(_TRAITS)},
    "param": lambda r, f: _f(r["param"]),
    "plan_ticks": lambda r, f: _f(r["plan_ticks"]),
    "ticks_left": lambda r, f: _f(r["ticks_left"]),
    "alone": lambda r, f: _f(r["alone"]),
    "no_food": lambda r, f: _f(r["no_food"]),
    "stuck": lambda r, f: _f(r["stuck"]),
}
assert set(_DERIVED) == set(EVENT_FEATURES), "every feature formulas may name is computed here"


class Features(Mapping[str, np.ndarray]):
    """Feature name -> ``(k,)`` float64, computed when first read (see the module doc)."""

    def __init__(self, k: int, raw: dict[str, Any]):
        self.k, self._raw = k, raw
        self._done: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._done:
            if name not in _DERIVED:
                raise KeyError(name)
            self._done[name] = np.broadcast_to(_DERIVED[name](self._raw, self), (self.k,))
        value: np.ndarray = self._done[name]
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(_DERIVED)

    def __len__(self) -> int:
        return len(_DERIVED)


def from_request(energy: np.ndarray, max_energy: int, traits: np.ndarray, view: np.ndarray,
                 plants: np.ndarray | None, low_fraction: float, crowd_line: float,
                 prey: np.ndarray | None = None, hungry_fraction: float = 0.5, rest_ceiling: int = 1000,
                 hunters: np.ndarray | None = None, bites: np.ndarray | None = None,
                 lay: Any = None) -> Features:
    """The planner's features for a request: ``view`` is its view-feature rows
    (:func:`mirofish.fish.steering.view_features`), ``plants`` the plants each fish is shown,
    ``prey`` the fish of groups it hunts in its view (None: the tank has no hunters), ``hunters``
    the fish of groups that hunt it in its view (None: no group flees), ``bites`` the plants with
    a bite left in its view (None: no group eats plants);
    ``rest_ceiling`` in hundredths, as energy is; ``lay`` the view features' layout
    (:func:`mirofish.fish.steering.layout`: the square grid's when None)."""
    from .steering import F_FOOD_SEEN, F_VISIBLE, F_WALLS

    if lay is not None:
        F_VISIBLE, F_FOOD_SEEN, F_WALLS = lay.visible, lay.food_seen, lay.walls

    k = len(energy)
    return Features(k, {"energy": energy, "max_energy": max_energy, "traits": traits,
                        "visible": view[:, F_VISIBLE], "food_seen": view[:, F_FOOD_SEEN],
                        "walls": lambda: view[:, F_WALLS],
                        "plants": lambda: plants if plants is not None else np.zeros(k),
                        "prey": lambda: prey if prey is not None else np.zeros(k),
                        "hunters": lambda: hunters if hunters is not None else np.zeros(k),
                        "bites": lambda: bites if bites is not None else np.zeros(k),
                        "low_fraction": low_fraction, "crowd_line": crowd_line,
                        "hungry_fraction": hungry_fraction, "rest_ceiling": rest_ceiling})


def from_world(world: World, fish: np.ndarray) -> Features:
    """The features of ``fish`` in ``world`` as its last tick left them (event formulas)."""
    s, t = world.school, world.cfg.triggers
    return Features(fish.size, {
        "energy": s.energy[fish], "max_energy": world.max_energy, "traits": s.traits[fish],
        "visible": s.neighbours[fish], "food_seen": s.food_seen[fish],
        "walls": lambda: (world.codes[fish] == V_WALL).sum(axis=1),
        "plants": lambda: world.plants_shown(fish),
        "prey": lambda: world.prey_seen(fish),
        "hunters": lambda: world.hunters_seen(fish),
        "bites": lambda: world.bites_seen(fish),
        "low_fraction": t.low_energy_fraction, "crowd_line": t.crowd_line, "hungry_fraction": t.hungry_fraction,
        "rest_ceiling": hundredths(world.cfg.fish.rest_ceiling), "param": s.plan_param[fish],
        "plan_ticks": world.tick - s.last_decision[fish],
        "ticks_left": s.plan_end[fish].astype(np.int64) - world.tick, "alone": s.alone[fish],
        "no_food": s.no_food[fish], "stuck": s.stuck[fish]})
