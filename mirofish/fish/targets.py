"""Targets: what a plan swims to, declared once by name (a plan type's ``seek``).

A target says where it is for each fish (as a step ``(dx, dy)`` from the fish, or not found),
when the fish is *there*, and what its plan does then:

* ``place`` (the ``return`` plan): the remembered place with its meals (:mod:`fish.places`);
  there when within a cell of it; then the plan **ends** (so does one whose place was forgotten).
* ``away`` (the ``flee`` plan): a point on the far side of the fish from the nearest fish in view
  that hunts it (docs/species.md), never reached: the fish swims straight away, and the plan
  **ends** when no hunter is in view.
* ``plant`` (the ``hide`` plan): the nearest plant in the fish's view (Manhattan distance, the
  window's row order on a tie); there when a plant is next to it (north, south, west or east);
  then it **stays**: it rests beside the plant until its horizon, remembers ``reached a plant``
  when it comes to rest there (:data:`fish.memory.ARRIVED`), and swims back when pushed away.
  With no plant in view it keeps still where it is (hiding by not moving) until one comes into
  view, its horizon, or 10 ticks (hide's ``fails`` predicate, fish/formula.py): a person or a
  fork may give it anywhere, a model and the instinct planner choose it only with a plant in view.

Every tick, before steering, :meth:`mirofish.world.World.seek` pulls each seeking fish the way
that closes the larger of its two distances to the target (steering's per-direction ``bias``,
``steering.direction`` strong, as explore's way is pulled) and sets ``rests`` for one that
stays. It runs in numpy before either tick, the compiled or the reference, so both stay hash
for hash the same with no line of ``_tick.c`` about targets; a tank where no fish ever seeks
pays nothing for it (World keeps a flag, not a per-tick scan).

A new target is one :class:`Target` row here and its ``find``; a plan type names it in ``seek``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..world import World

# ``find(world, fish) -> (dx, dy, found)``: the step from each fish to its target (int64 arrays)
# and whether it has one.
Finder = Callable[["World", np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Target:
    """One thing a plan swims to (see the module doc)."""

    name: str
    find: Finder
    there: str  # "near": within a cell (Chebyshev ≤ 1); "beside": next to it (|dx| + |dy| == 1)
    then: str  # "end": the plan ends there; "stay": it rests there until its horizon; "graze": it eats there
    remembers: bool = False  # "stay": remember arriving (fish.memory.ARRIVED)
    on: Callable[[World], bool] = lambda world: True  # whether the tank has such targets at all

    def __post_init__(self) -> None:
        if self.there not in ("near", "beside") or self.then not in ("end", "stay", "graze"):
            raise ValueError(f"target {self.name}: there is near or beside, then is end, stay or graze")


def _place(world: World, fish: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The remembered place the plan's parameter names (found while it still has meals)."""
    p, s = world.places, world.school
    if p is None:
        return np.zeros(fish.size, np.int64), np.zeros(fish.size, np.int64), np.zeros(fish.size, bool)
    slot = np.clip(s.plan_param[fish].astype(np.intp), 0, p.k - 1)
    x, y = world.water.xy(s.cell[fish])
    return p.x[fish, slot] - x, p.y[fish, slot] - y, p.meals_at[fish, slot] != 0


def _nearest(world: World, seen: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nearest cell of each fish's view window where ``seen`` (``(k, side²)``) is set
    (Manhattan distance, the window's row order on a tie), as a step, and whether there is one."""
    r = world.water.pad
    dy, dx = np.divmod(np.arange((2 * r + 1) ** 2), 2 * r + 1)
    dx, dy = dx - r, dy - r
    far = np.where(seen, (np.abs(dx) + np.abs(dy))[None, :], 1 << 20)
    best = np.argmin(far, axis=1)  # the first of the nearest, in the window's row order
    found: np.ndarray = np.any(seen, axis=1)
    return dx[best].astype(np.int64), dy[best].astype(np.int64), found


def _plant(world: World, fish: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nearest plant cell in each fish's view window."""
    return _nearest(world, world.plants_in_view(fish))


def _prey(world: World, fish: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nearest fish of a group it hunts in each fish's view (docs/species.md)."""
    return _nearest(world, world.prey_in_view(fish))


def _away(world: World, fish: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A point on the far side of each fish from the nearest fish in view of a group that hunts
    it (twice as far as the hunter, the other way: never reached, so the fish swims straight
    away while one is in view)."""
    dx, dy, found = _nearest(world, world.hunters_in_view(fish))
    return -2 * dx, -2 * dy, found


def _bite(world: World, fish: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nearest plant cell with a bite left in each fish's view (mirofish/grazing.py)."""
    return _nearest(world, world.bites_in_view(fish))


def _has_places(world: World) -> bool:
    return world.places is not None


TARGETS: dict[str, Target] = {
    # (a tank without places has none: a return plan a person gives there is not pulled)
    "place": Target("place", _place, there="near", then="end", on=lambda world: _has_places(world)),
    "plant": Target("plant", _plant, there="beside", then="stay", remembers=True),
    # a hunter's (the hunt plan): ends beside its prey, where the catch is the population's rule
    "prey": Target("prey", _prey, there="near", then="end",
                   on=lambda world: world.hunting),
    # a fleeing fish's (the flee plan): away from the nearest of its hunters; ends when none is in view
    "away": Target("away", _away, there="near", then="end", on=lambda world: world.fleeing),
    # a grazer's (the graze plan): beside the nearest plant with a bite left, it eats there; with
    # none in view its plan ends (it asks again)
    "bite": Target("bite", _bite, there="beside", then="graze", on=lambda world: world.grazing is not None),
}


def is_there(target: Target, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """Whether each fish is where ``target`` counts as reached."""
    if target.there == "near":
        near: np.ndarray = np.maximum(np.abs(dx), np.abs(dy)) <= 1
        return near
    beside: np.ndarray = (np.abs(dx) + np.abs(dy)) == 1
    return beside


def way_to(dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """The direction (0 n, 1 s, 2 w, 3 e) that closes the larger of the two distances."""
    way: np.ndarray = np.where(np.abs(dx) >= np.abs(dy), np.where(dx > 0, 3, 2), np.where(dy > 0, 1, 0))
    return way
