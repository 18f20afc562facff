"""What a fish perceives: its (2r+1)² patch of water, its own state and its memories.

The view alphabet is DESIGN §2's: ``.`` water, ``#`` glass/plant/rock/off-grid, ``F`` food,
``f`` another fish (never an id), ``@`` self. A fish standing on food cannot see it under
itself, so the text adds ``here: food``; another fish hides the food beneath it.
A :class:`Perception` is all a brain ever receives — never the world.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

V_WATER, V_WALL, V_FOOD, V_FISH, V_SELF = 0, 1, 2, 3, 4
VIEW_CHARS = ".#Ff@"
_CHAR_LUT = np.frombuffer(VIEW_CHARS.encode(), np.uint8)


def view_codes(blocked: np.ndarray, food: np.ndarray, occupied: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """View codes for flat-index windows ``(k, cells)``; the centre column is the viewer."""
    codes = np.where(food[windows], V_FOOD, V_WATER).astype(np.int8)
    codes[occupied[windows]] = V_FISH
    codes[blocked[windows]] = V_WALL
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
