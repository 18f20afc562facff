"""The tank's grid, declared once: square (four moves) or hexagonal (six) — ``world.grid``.

Everything that depends on which cells touch reads it from here: the moves and their names, the
actions (the moves first, then eat and rest), the view window (its cells, their rings and where
each lies on screen), the flat offsets a move or a meal takes in the padded grid, the steering
geometry (which cells lie *ahead* of a move) and the text a view is shown as.

**The hexagonal grid** (``world.grid = "hex"``) has pointy-top cells in *odd-r offset*
coordinates: the tank stays a ``width × height`` array of cells (its glass, plants, rocks and food
unchanged), and every odd row sits half a cell to the right. A cell's six neighbours are east,
north-east, north-west, west, south-west and south-east (the moves 0–5, counter-clockwise from
east; eat is 6 and rest 7). The water layer stores the cells in *axial* coordinates ``(q, r)``,
``q = x - y // 2`` (mirofish/water.py), where a neighbour, a step and every cell of a view is one
fixed flat offset (:meth:`Grid.offsets`) — so the compiled tick and the numpy tick run a
hexagonal tank with the same code as a square one, only with six moves. Geometry inside a view —
distances, rings, what lies ahead — is computed in axial coordinates too: the distance of two
hexes is ``max(|dq|, |dr|, |dq + dr|)`` and a view of radius 2 holds 19 cells. On screen a cell's
centre is ``(x + (y & 1) / 2, y·√3/2)`` cell widths.

The square grid is the tank as it always was: every array it gives equals the one the code held
before this module existed, so square tanks keep their hashes (tests/test_grid.py).

Decisions (written down here): both ticks, compiled and numpy, run a hexagonal tank, and the
instinct and model brains, recordings, the window, the browser player and the environments take it
(docs/hex.md). What still reads four directions beyond the tick — groups of fish (their bodies,
sight, hunting, grazing), remembered places, plants shown, a user's own brain, single actions from
a model, plans that swim to a target — is refused on a hexagonal tank with one line
(:func:`hex_refusal`). The grids are the two declared here, not a plug-in door: a new grid changes
the compiled tick's arithmetic, so it is added here, with its C, not from outside ``mirofish/``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SQRT3_2 = 3 ** 0.5 / 2


@dataclass(frozen=True)
class Grid:
    """One kind of grid (see the module doc). ``moves`` are (du, dv) in the grid's view
    coordinates: (dx, dy) on the square grid, axial (dq, dr) on the hexagonal one."""

    name: str
    move_names: tuple[str, ...]  # the direction words (plans, prompts), in move order
    move_labels: tuple[str, ...]  # the actions' short labels, in move order (move_n … / move_e …)
    moves: tuple[tuple[int, int], ...]
    units: tuple[tuple[float, float], ...]  # each move's unit vector on screen (x right, y down)
    fish_chars: str  # another fish in a view, by its heading (move order)

    # derived once (plain attributes, not properties: the tick reads them, and a property is a call)
    n_moves: int = field(init=False)
    eat: int = field(init=False)  # the eat action's code (the moves come first)
    rest: int = field(init=False)  # the rest action's code
    n_actions: int = field(init=False)
    action_names: tuple[str, ...] = field(init=False)
    hex: bool = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.moves)
        for name, value in (("n_moves", n), ("eat", n), ("rest", n + 1), ("n_actions", n + 2),
                            ("action_names", (*self.move_labels, "eat", "rest")), ("hex", self.name == "hex")):
            object.__setattr__(self, name, value)

    # ------------------------------------------------------------ view geometry

    def distance(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Steps between the centre and (u, v): Manhattan on the square grid, hex steps on the other."""
        u, v = np.asarray(u), np.asarray(v)
        out: np.ndarray = (np.maximum(np.maximum(np.abs(u), np.abs(v)), np.abs(u + v)) if self.hex
                           else np.abs(u) + np.abs(v))
        return out

    def ring(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The ring of (u, v) around the centre: Chebyshev on the square grid (the eight cells
        around are ring 1), hex steps on the other."""
        u, v = np.asarray(u), np.asarray(v)
        out: np.ndarray = self.distance(u, v) if self.hex else np.maximum(np.abs(u), np.abs(v))
        return out

    def window_cells(self, radius: int) -> tuple[np.ndarray, np.ndarray]:
        """The view window's cells as (u, v) from its centre, row by row (top to bottom, left to
        right): the (2r+1)² square, or the hexes within ``radius`` steps (3r² + 3r + 1)."""
        v, u = np.mgrid[-radius : radius + 1, -radius : radius + 1]
        u, v = u.ravel(), v.ravel()
        if self.hex:
            keep = self.distance(u, v) <= radius
            u, v = u[keep], v[keep]
        return u.astype(np.int64), v.astype(np.int64)

    def screen(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where (u, v) lies on screen from the centre, in cell widths (x right, y down)."""
        u, v = np.asarray(u, np.float64), np.asarray(v, np.float64)
        if self.hex:
            return u + v / 2, v * SQRT3_2
        return u, v

    # ------------------------------------------------------------ the padded flat grid

    def tank_step(self, du: np.ndarray, dv: np.ndarray, parity: int) -> tuple[np.ndarray, np.ndarray]:
        """(u, v) from a cell in a tank row of ``parity`` → (dx, dy) in tank coordinates (the
        square grid's are the same; a hexagonal tank's odd rows sit half a cell right)."""
        if not self.hex:
            return np.asarray(du), np.asarray(dv)
        dv = np.asarray(dv)
        y = parity + dv
        return np.asarray(du) + (y - (y & 1)) // 2 - (parity - (parity & 1)) // 2, dv

    def offsets(self, du: np.ndarray, dv: np.ndarray, pw: int) -> np.ndarray:
        """int64 flat offsets of (du, dv) in a padded store of row length ``pw`` (a hexagonal
        tank's store is axial, mirofish/water.py: every step is one fixed offset there too)."""
        return (np.asarray(dv, np.int64) * pw + np.asarray(du, np.int64)).astype(np.int64)

    def deltas(self, pw: int) -> np.ndarray:
        """The flat offset of each move."""
        du, dv = zip(*self.moves)
        return self.offsets(np.array(du), np.array(dv), pw)

    def eat_offsets(self, pw: int) -> np.ndarray:
        """Where an eater looks for food, in order: its own cell, then its neighbours in move order."""
        du, dv = zip(*((0, 0), *self.moves))
        return self.offsets(np.array(du), np.array(dv), pw)

    def window(self, radius: int, pw: int) -> np.ndarray:
        """The view window's flat offsets, in order (row by row)."""
        return self.offsets(*self.window_cells(radius), pw)

    def centres(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cells' centres on screen in cell widths (tank coordinates in)."""
        x, y = np.asarray(x, np.float64), np.asarray(y)
        if self.hex:
            return x + (y & 1) / 2, y * SQRT3_2
        return x, y.astype(np.float64)

    # ------------------------------------------------------------ text

    def view_cells(self, view: str) -> str:
        """A view's text (:meth:`render`) → its cells' characters in window order."""
        return "".join(row.replace(" ", "") for row in view.split("\n")) if self.hex else view.replace("\n", "")

    def neighbour_chars(self, view: str) -> str:
        """The characters of the viewer's neighbours in a view's text, in move order."""
        cells = self.view_cells(view)
        radius = view.count("\n") // 2
        u, v = self.window_cells(radius)
        index = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(u, v))}
        return "".join(cells[index[m]] for m in self.moves)

    @functools.cached_property
    def view_chars(self) -> str:
        """The view alphabet as text: water, glass, food, self, then another fish by heading
        (then, on the square grid, the shown-only codes): fish/perception.VIEW_CHARS on the
        square grid (tests/test_hex.py holds the two equal; the fish layer reads the grid, not
        the other way round)."""
        return ".#F@" + self.fish_chars + ("" if self.hex else "PX?")

    def render(self, codes: np.ndarray, radius: int) -> str:
        """One fish's view codes (its window's cells in order) as rows of text. A hexagonal view
        shifts each row by a half cell per row from the middle one, so the rows interlock."""
        chars = self.view_chars
        text = "".join(chars[int(c)] for c in np.asarray(codes))
        if not self.hex:
            side = 2 * radius + 1
            return "\n".join(text[r * side : (r + 1) * side] for r in range(side))
        _u, v = self.window_cells(radius)
        rows, start = [], 0
        for dv in range(-radius, radius + 1):
            count = int(np.count_nonzero(v == dv))
            rows.append(" " * abs(dv) + " ".join(text[start : start + count]))
            start += count
        return "\n".join(rows)


SQUARE = Grid("square", ("north", "south", "west", "east"), ("move_n", "move_s", "move_w", "move_e"),
              ((0, -1), (0, 1), (-1, 0), (1, 0)), ((0.0, -1.0), (0.0, 1.0), (-1.0, 0.0), (1.0, 0.0)), "^v<>")
HEX = Grid("hex", ("east", "north-east", "north-west", "west", "south-west", "south-east"),
           ("move_e", "move_ne", "move_nw", "move_w", "move_sw", "move_se"),
           ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)),
           ((1.0, 0.0), (0.5, -SQRT3_2), (-0.5, -SQRT3_2), (-1.0, 0.0), (-0.5, SQRT3_2), (0.5, SQRT3_2)),
           "697413")  # a number pad's arrows: 6 east, 9 north-east, 7 north-west, 4 west, 1 south-west, 3 south-east
GRIDS = {g.name: g for g in (SQUARE, HEX)}

def hex_refusal(cfg: Any) -> str:
    """Why ``cfg`` cannot run on a hexagonal tank yet ("" when it can): what reads four directions
    beyond the tick itself (see the module doc)."""
    checks = (
        (bool(cfg.fish.groups), "groups of fish ([[fish.groups]]) are not supported on it yet"),
        (cfg.fish.places > 0, "remembered places (fish.places) are not supported on it yet"),
        (cfg.perception.plants_seen, "plants shown (perception.plants_seen) are not supported on it yet"),
        (cfg.brain.kind not in ("instinct", "llm"),
         f"brain.kind = {cfg.brain.kind!r}: only the instinct brain and the model brain decide on it yet"),
        (cfg.brain.kind == "llm" and cfg.brain.decides != "plan",
         "the model brain decides plans on it (brain.decides = \"plan\"), not single actions, yet"),
    )
    return next((why for bad, why in checks if bad), "")


def grid_of(name: str) -> Grid:
    """The grid called ``name`` (``square`` or ``hex``)."""
    return GRIDS[name]
