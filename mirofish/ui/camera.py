"""The camera over the tank: which part of it the tank pane shows, and at what scale — an RTS
viewport (OpenRA's): a pane of the window looks at a grid of cells.

Two modes (key X switches them):

* ``follow`` (the default): ``scale`` pixels a cell (``world.cell_px``, 20 unless set; the
  wheel zooms from the whole tank up to 40), the view gliding to what matters — the followed
  fish, else the largest school's centre, else it stays. A drag, the mouse resting at the
  water's edge or a click on the minimap move it by hand: it then stays where it was put
  (``following`` is False) until a fish is followed or Z puts it back on what matters.
* ``whole``: the whole tank at the largest whole number of pixels a cell that fits the pane.

Until something matters (no fish followed, no school yet: a tank's first seconds) the camera
shows the whole tank — an overview — and goes to follow mode on the first target it is given
(``auto``), zooming down to it over :data:`DIVE` seconds; a key, the wheel or the minimap
before that ends the overview too. (A tank that has a school or a followed fish at its first
frame opens on it at once.)

Where the whole tank already fits at ``scale`` the two look the same. Cells are whole pixels
(crisp sprites and grid); the view never shows water beyond the glass when the tank is larger
than the pane, and centres the tank when it is smaller. No pygame display is needed: the
class is plain arithmetic on rectangles, tested in tests/test_camera.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pygame

MAX_CELL = 40  # px a cell at the closest zoom
MIN_CELL = 2
ZOOM_STEP = 1.25  # one wheel notch
GLIDE = 6.0  # 1/s: the view covers 1 - e^(-6 t) of the way to its target in t seconds (95 % in 0.5 s)
EDGE_PX = 14  # the water's edge band where a resting mouse scrolls the view
EDGE_DELAY = 0.25  # s the mouse rests in that band before it scrolls (crossing it does nothing)
EDGE_SPEED = 900.0  # px/s of edge scrolling
DIVE = 0.6  # s from the opening overview down to the follow camera's scale


class Camera:
    """The view of a ``grid`` (cells across, down) in a pane rectangle of the window."""

    def __init__(self, grid: tuple[int, int], cell_px: int = 20, max_cell: int = MAX_CELL):
        self.w, self.h = int(grid[0]), int(grid[1])
        self.cell_px = cell_px  # the design's scale: follow mode's default, and the whole tank's largest
        self.max_cell = max_cell
        self.scale = cell_px  # follow mode's px a cell (the wheel changes it)
        self.mode = "whole"
        self.auto = True  # the opening overview: follow mode at the first target (see the module's doc)
        self._overview_drawn = False  # the overview was on screen (its end then zooms down smoothly)
        self._dive = 1.0  # progress of that zoom (1: done)
        self.following = True  # follow mode: glide to the target (False once moved by hand)
        self.pane = pygame.Rect(0, 0, 0, 0)
        self.centre: tuple[float, float] | None = None  # the cell at the pane's centre (None: not placed yet)
        self._edge_rest = 0.0

    # ------------------------------------------------------------ geometry

    def set_grid(self, grid: tuple[int, int]) -> None:
        """Another tank (another session shown): its size; the view keeps its mode and scale."""
        if (int(grid[0]), int(grid[1])) != (self.w, self.h):
            self.w, self.h = int(grid[0]), int(grid[1])
            self.centre = None

    def place(self, pane: pygame.Rect) -> None:
        """The pane the tank is shown in (the window laid out again)."""
        self.pane = pygame.Rect(pane)
        if self.centre is not None:
            self.centre = self._clamp(self.centre)

    def fit(self) -> int:
        """Pixels a cell that show the whole tank in the pane: the largest whole number, up to
        :attr:`cell_px`."""
        return max(MIN_CELL, min(self.cell_px, self.pane.w // max(1, self.w), self.pane.h // max(1, self.h)))

    @property
    def cell(self) -> int:
        """Pixels a cell now."""
        fit = self.fit()
        if self.mode == "whole":
            return fit
        cell = max(fit, min(self.max_cell, self.scale))
        if self._dive < 1.0:  # coming down from the overview: eased, in steps of 2 px (each size is drawn anew)
            eased = 1.0 - (1.0 - self._dive) ** 2
            return min(cell, fit + 2 * int(round((cell - fit) * eased / 2)))
        return cell

    @property
    def whole_shown(self) -> bool:
        """Does the pane show the whole tank (whole mode, or a tank that fits at the scale)?"""
        c = self.cell
        return self.w * c <= self.pane.w and self.h * c <= self.pane.h

    def _half(self, c: int) -> tuple[float, float]:
        return self.pane.w / (2 * c), self.pane.h / (2 * c)

    def _clamp(self, centre: tuple[float, float]) -> tuple[float, float]:
        """A centre that keeps the view inside the glass (the middle, on an axis the pane holds)."""
        c = self.cell
        hx, hy = self._half(c)
        out = []
        for v, n, half in ((centre[0], self.w, hx), (centre[1], self.h, hy)):
            lo, hi = half - 0.5, n - half - 0.5
            out.append((n - 1) / 2 if lo >= hi else min(hi, max(lo, float(v))))
        return out[0], out[1]

    def _centre(self) -> tuple[float, float]:
        return self._clamp(self.centre if self.centre is not None else ((self.w - 1) / 2, (self.h - 1) / 2))

    @property
    def origin(self) -> tuple[int, int]:
        """The pixel of cell (0, 0)'s top-left corner."""
        c = self.cell
        cx, cy = self._centre()
        return (int(round(self.pane.centerx - cx * c - c / 2)), int(round(self.pane.centery - cy * c - c / 2)))

    def to_px(self, x: Any, y: Any) -> tuple[Any, Any]:
        """Tank cell (x, y) → the pixel of its centre (works on arrays)."""
        c = self.cell
        ox, oy = self.origin
        return ox + np.asarray(x) * c + c / 2, oy + np.asarray(y) * c + c / 2

    def to_cell(self, pos: tuple[float, float]) -> tuple[float, float]:
        """The tank cell (fractional) under a pixel."""
        c = self.cell
        ox, oy = self.origin
        return (pos[0] - ox) / c - 0.5, (pos[1] - oy) / c - 0.5

    def visible(self) -> tuple[float, float, float, float]:
        """The part of the tank the pane shows, in cells: (left, top, right, bottom) edges,
        clipped to the tank (cell x spans x … x+1)."""
        c = self.cell
        ox, oy = self.origin
        return (max(0.0, (self.pane.x - ox) / c), max(0.0, (self.pane.y - oy) / c),
                min(float(self.w), (self.pane.right - ox) / c), min(float(self.h), (self.pane.bottom - oy) / c))

    def shows(self, x: Any, y: Any) -> Any:
        """Is cell (x, y)'s centre drawn in the pane (works on arrays)?"""
        px, py = self.to_px(x, y)
        p = self.pane
        return (px >= p.x) & (px < p.right) & (py >= p.y) & (py < p.bottom)

    # ------------------------------------------------------------ moving it

    def update(self, dt: float, target: tuple[float, float] | None) -> None:
        """Glide toward ``target`` (a cell, or None: stay) while following; the first call
        places the view on it at once."""
        if self.auto and target is None:
            self._overview_drawn = True  # (drawn after this call)
        if self.auto and target is not None:  # something matters now: the overview ends there
            self.auto, self.mode, self.following = False, "follow", True
            if self._overview_drawn:  # zoom down onto it (its first frame still at the overview's size)
                self._dive, self.centre = 0.0, (float(target[0]), float(target[1]))
                return
            self.centre = None
        if self._dive < 1.0:  # diving: straight at the target (the clamp at each size eases the view in)
            self._dive = min(1.0, self._dive + max(0.0, dt) / DIVE)
            if target is not None:
                self.centre = (float(target[0]), float(target[1]))
            return
        if self.centre is None:
            self.centre = self._clamp(target if target is not None else ((self.w - 1) / 2, (self.h - 1) / 2))
            return
        if target is None or self.mode != "follow" or not self.following:
            self.centre = self._clamp(self.centre)
            return
        k = 1.0 - math.exp(-GLIDE * max(0.0, dt))
        goal = self._clamp(target)
        cx, cy = self.centre
        self.centre = self._clamp((cx + (goal[0] - cx) * k, cy + (goal[1] - cy) * k))

    def look_at(self, cell: tuple[float, float]) -> None:
        """Put the view's centre on ``cell`` by hand (the minimap): follow mode, not following."""
        self.auto, self._dive = False, 1.0
        if self.mode == "whole":
            self.mode = "follow"
        self.centre = self._clamp(cell)
        self.following = False

    def pan_px(self, dx: float, dy: float) -> None:
        """Move the view by hand by (dx, dy) pixels of the window (a drag: the water moves with
        the mouse, so the view moves the other way)."""
        if self.whole_shown:
            return
        self._dive = 1.0
        c = self.cell
        cx, cy = self._centre()
        self.centre = self._clamp((cx - dx / c, cy - dy / c))
        self.following = False

    def zoom_at(self, pos: tuple[float, float], factor: float) -> None:
        """Zoom by ``factor`` (a wheel notch: ×1.25 or ÷1.25) from the whole tank to
        :attr:`max_cell`, keeping the cell under ``pos`` under it (or, while following, the view
        on its target). Zoomed out to the whole tank's size: whole mode."""
        self.auto = False
        old = self.cell
        self._dive = 1.0
        new = int(round(old * factor))
        if new == old:
            new = old + (1 if factor > 1 else -1)
        fit = self.fit()
        new = max(fit, min(self.max_cell, new))
        if new == old and not (new == fit and self.mode == "follow"):
            return
        anchor = pygame.Rect(self.pane).center if self.mode == "follow" and self.following else pos
        under = self.to_cell(anchor)
        if new <= fit:  # zoomed all the way out: the whole tank (X or Z come back at the design's scale)
            self.mode, self.scale = "whole", self.cell_px
            return
        if self.mode == "whole":
            self.following = False  # zoomed in at the cursor: the view stays there
        self.mode, self.scale = "follow", new
        self.centre = self._clamp((under[0] - (anchor[0] - self.pane.centerx) / new,
                                   under[1] - (anchor[1] - self.pane.centery) / new))

    def toggle(self) -> str:
        """Key X: follow mode (at its scale, back on what matters) or the whole tank; returns the mode."""
        self.auto, self._dive = False, 1.0
        if self.mode == "follow":
            self.mode = "whole"
        else:
            self.mode, self.following = "follow", True
        return self.mode

    def whole(self) -> None:
        self.auto, self.mode, self._dive = False, "whole", 1.0

    def follow(self) -> None:
        """Back on what matters (key Z): follow mode, following."""
        self.auto, self.mode, self.following, self._dive = False, "follow", True, 1.0

    def edge_scroll(self, mouse: tuple[int, int] | None, dt: float) -> bool:
        """Scroll while the mouse rests in the water's edge band (after :data:`EDGE_DELAY`);
        returns whether it scrolled. ``mouse``: where it is (None: not over the window)."""
        p = self.pane
        if mouse is None or self.whole_shown or not p.collidepoint(mouse):
            self._edge_rest = 0.0
            return False
        x, y = mouse
        dx = -1 if x < p.x + EDGE_PX else 1 if x >= p.right - EDGE_PX else 0
        dy = -1 if y < p.y + EDGE_PX else 1 if y >= p.bottom - EDGE_PX else 0
        if not (dx or dy):
            self._edge_rest = 0.0
            return False
        self._edge_rest += dt
        if self._edge_rest < EDGE_DELAY:
            return False
        before = self._centre()
        step = EDGE_SPEED * dt
        self.pan_px(-dx * step, -dy * step)  # the view moves toward the edge the mouse rests on
        return self._centre() != before

    def describe(self) -> str:
        """What the pane shows, for the footer's message."""
        if self.mode == "whole" or self.whole_shown:
            return f"the whole tank ({self.cell} px a cell)"
        return f"{self.cell} px a cell" + (", following" if self.following else ", where you put it (Z: follow)")
