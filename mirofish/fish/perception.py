"""What a fish perceives: its (2r+1)² patch of water, its own state and its memories.

The view alphabet is docs/design.md §2's: ``.`` water, ``#`` glass/plant/rock/off-grid, ``F`` food,
``@`` self, and another fish (never an id) as the direction it faces: ``^`` north, ``v``
south, ``<`` west, ``>`` east. Seeing where the others swim is perception, not a rule:
it is what lets a fish fall in with them. A fish standing on food cannot see it under
itself, so the text adds ``here: food``; another fish hides the food beneath it.

With ``perception.plants_seen`` a plant shows as ``P`` (:data:`V_PLANT`): a code that is *shown*,
to a model, a person and a plan's fit, but never *steered by* — steering and the compiled tick
read a plant as the obstacle it is, exactly as glass (their alphabet is the first
:data:`N_CODES` codes), so turning plants visible changes what a fish is told, not how it swims.
The prompt's legend names the shown codes that are on (:func:`legend_extra`).
A :class:`Perception` is all a brain ever receives — never the world.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

V_WATER, V_WALL, V_FOOD, V_SELF = 0, 1, 2, 3
V_FISH = 4  # another fish facing north; + heading (Action order n, s, w, e) → 4..7
N_CODES = 8  # the codes steering reads (the compiled tick's alphabet)
V_PLANT = 8  # shown only (perception.plants_seen): a plant; steering reads it as V_WALL
V_HUNTER = 9  # shown only (a tank with hunters: docs/species.md): a fish that hunts; steering reads it as a fish
V_UNSEEN = 10  # shown only (a group's own view_radius): a cell beyond the fish's sight; steering reads it as water
VIEW_CHARS = ".#F@^v<>PX?"
# The shown-only codes: (code, the switch that turns it on, its words in the prompt's legend).
SHOWN_CODES = ((V_PLANT, "plants_seen", "P a plant (a fish beside one is hidden)"),
               (V_HUNTER, "hunting", "X a hunter (a fish that catches fish; which way it faces is not shown; "
                                     "X in the centre: you are one)"),
               (V_UNSEEN, "sight", "? too far for you to see"))
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


def legend_extra(switches: dict[str, bool] | None) -> str:
    """The prompt legend's words for the shown-only codes whose switch is on ("" when none is:
    a tank without them is told exactly what it was told before they existed)."""
    on = switches or {}
    return "; ".join(words for _, switch, words in SHOWN_CODES if on.get(switch))


def shown_codes(codes: np.ndarray, cells: np.ndarray, is_plant: np.ndarray) -> np.ndarray:
    """One fish's steering ``codes`` as it is shown: the glass cells among ``cells`` (its
    window's padded flat cells, row by row) that are plants become :data:`V_PLANT`."""
    out = np.array(codes, np.int8)
    out[(out == V_WALL) & is_plant[cells]] = V_PLANT
    return out


def hunters_shown(codes: np.ndarray, occupants: np.ndarray, is_hunter: np.ndarray, viewer_hunts: bool) -> np.ndarray:
    """One fish's ``codes`` with the fish among ``occupants`` (its window's fish ids, -1 where
    none) that hunt shown as :data:`V_HUNTER`, and the viewer itself too when it hunts (its view
    then says what it is: a hunter's plans fit by its view alone)."""
    out = np.array(codes, np.int8)
    there = (occupants >= 0) & (out >= V_FISH) & (out < N_CODES)
    out[there] = np.where(is_hunter[occupants[there]], V_HUNTER, out[there])
    if viewer_hunts:
        out[out.size // 2] = V_HUNTER
    return out


def view_rings(radius: int) -> np.ndarray:
    """Each cell of the (2r+1)² window, row by row: its distance from the centre in rings
    (Chebyshev: 0 the centre, 1 the eight cells around it, …) — a fish whose own view radius is
    ``k`` sees the cells of rings ``<= k``."""
    dy, dx = np.divmod(np.arange((2 * radius + 1) ** 2), 2 * radius + 1)
    rings: np.ndarray = np.maximum(np.abs(dx - radius), np.abs(dy - radius)).astype(np.int8)
    return rings


def unseen_shown(codes: np.ndarray, rings: np.ndarray, sight: int) -> np.ndarray:
    """One fish's ``codes`` as it is shown: the cells beyond its ``sight`` (rings, :func:`view_rings`)
    become :data:`V_UNSEEN` (``?``), so the view keeps the tank's size and says what it does not see."""
    out = np.array(codes, np.int8)
    out[rings > sight] = V_UNSEEN
    return out


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
    shown: tuple[str, ...] = ()  # the switches of the shown-only codes on in its tank (SHOWN_CODES)
    # what a memory other than the ring recalled for this decision: (item id, score) pairs, recorded
    # with the model exchange (docs/memory.md); () for the two-level memory
    recalled: tuple[tuple[int, float], ...] = ()
    grid: str = "square"  # world.grid: a hexagonal tank's view is its 19 hexes, rows half a hex apart

    @property
    def side(self) -> int:
        """The view's side (2 × perception.radius + 1: 5 by default)."""
        return self.view.count("\n") + 1

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
