"""What a fish perceives: its (2r+1)² patch of water, its own state and its memories.

The view alphabet is docs/design.md §2's: ``.`` water, ``#`` glass/plant/rock/off-grid, ``F`` food,
``@`` self, and another fish (never an id) as the direction it faces: ``^`` north, ``v``
south, ``<`` west, ``>`` east. Seeing where the others swim is perception, not a rule:
it is what lets a fish fall in with them. A fish standing on food cannot see it under
itself, so the text adds ``here: food``; another fish hides the food beneath it.
A :class:`Perception` is all a brain ever receives — never the world.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

V_WATER, V_WALL, V_FOOD, V_SELF = 0, 1, 2, 3
V_FISH = 4  # another fish facing north; + heading (Action order n, s, w, e) → 4..7
N_CODES = 8
VIEW_CHARS = ".#F@^v<>"
FISH_CHARS = VIEW_CHARS[V_FISH:]
_CHAR_LUT = np.frombuffer(VIEW_CHARS.encode(), np.uint8)


def is_fish(codes: np.ndarray) -> np.ndarray:
    """True where a view code shows another fish (any heading)."""
    return codes >= V_FISH


def cell_codes(blocked: np.ndarray, food: np.ndarray, cells: np.ndarray, heading: np.ndarray) -> np.ndarray:
    """The code every cell of the padded grid shows to a viewer: wall, food, a fish by heading, water."""
    grid = food.astype(np.int8) * V_FOOD
    grid[cells] = V_FISH + heading
    grid[blocked] = V_WALL
    return grid


def view_codes(grid: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """View codes for flat-index windows ``(k, cells)`` read off :func:`cell_codes`; the centre is the viewer."""
    codes: np.ndarray = grid[windows]
    codes[:, windows.shape[1] // 2] = V_SELF
    return codes


def render_view(codes: np.ndarray) -> str:
    """One fish's codes (flat, side²) → rows of characters joined by newlines."""
    side = int(round(len(codes) ** 0.5))
    chars = _CHAR_LUT[np.asarray(codes, np.int64)].tobytes().decode()
    return "\n".join(chars[r * side : (r + 1) * side] for r in range(side))


@dataclass(frozen=True)
class Perception:
    """One fish's local, id-free picture of the world at one tick."""

    tick: int
    view: str  # rows joined by "\n"
    food_here: bool
    energy: int  # hundredths
    max_energy: int  # hundredths
    age: int
    memories: tuple[str, ...]
    summaries: tuple[str, ...] = ()
    places: str = ""  # the places it remembers eating at (fish.places; fish/places.py), "" when none

    def text(self) -> str:
        """The per-fish block a brain reads (view, state, memories)."""
        lines = [self.view, f"here: {'food' if self.food_here else 'water'}",
                 f"energy: {self.energy / 100:.2f}/{self.max_energy / 100:.0f}", f"age: {self.age}",
                 "memories:"]
        lines += [f"- {m}" for m in self.memories] or ["- (none yet)"]
        if self.summaries:
            lines.append("long-term:")
            lines += [f"- {s}" for s in self.summaries]
        return "\n".join(lines)
