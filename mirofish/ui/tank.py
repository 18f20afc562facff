"""Drawing the aquarium: water, glass, plants, rocks, food, fish — from snapshots only."""

from __future__ import annotations

from typing import Any

import numpy as np
import pygame

from ..snapshot import TankView
from . import theme

MAX_CELL = 40  # px per cell at the closest zoom


def hex_shift(y: Any) -> Any:
    """A hexagonal tank's odd rows sit half a cell right (mirofish/grid.py): each row's shift
    in cells (a fractional row: the nearest row's)."""
    return 0.5 * (np.round(np.asarray(y, np.float64)).astype(np.int64) & 1)


def moving_xy(view: TankView, prev: TankView | None, alpha: float,
              hexes: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each fish where it is drawn between two ticks (cells, fractional): a fish that moved one
    cell since ``prev`` is ``alpha`` of the way; the others where ``view`` has them. On a
    hexagonal tank (``hexes``) the way is the straight line between the two cells' centres on
    screen, given back in the tank's coordinates as :meth:`TankRenderer.to_px` reads them."""
    x, y = view.x.astype(np.float64), view.y.astype(np.float64)
    if prev is not None and alpha < 1.0 and prev.x.shape == view.x.shape:
        dx, dy = np.abs(view.x - prev.x), np.abs(view.y - prev.y)
        if not hexes:
            step = (dx + dy) == 1
            x = np.where(step, prev.x + (view.x - prev.x) * alpha, x)
            y = np.where(step, prev.y + (view.y - prev.y) * alpha, y)
        else:
            step = (np.maximum(dx, dy) == 1)
            x0, x1 = prev.x + hex_shift(prev.y), view.x + hex_shift(view.y)
            y = np.where(step, prev.y + (view.y - prev.y) * alpha, y)
            x = np.where(step, x0 + (x1 - x0) * alpha - hex_shift(y), x)
    return x, y


def hex_points(cx: float, cy: float, c: float, inset: float = 0.0) -> list[tuple[float, float]]:
    """A pointy-top hexagon's corners around (cx, cy), ``c`` px wide, as tall as a row and a
    third (the rows, ``c`` apart, interlock: the window's hexes are a little taller than regular
    ones, so the tank keeps its square cells' rows and its camera)."""
    w, h = c / 2 - inset, 2 * c / 3 - inset
    return [(cx, cy - h), (cx + w, cy - h / 2), (cx + w, cy + h / 2), (cx, cy + h), (cx - w, cy + h / 2),
            (cx - w, cy - h / 2)]


class TankRenderer:
    """Draws a :class:`TankView` into a rectangle, with crisp integer-sized cells: the whole
    tank fits (≤ 20 px a cell) at zoom 1; zoomed in, a window on it centred on a cell
    (:meth:`layout`, or where a camera puts it: :meth:`place`), clipped to the rectangle,
    drawing only the fish and food in view. Everything in tank cells — fish, food, rocks,
    rings, a fork's ghosts, the field of view — goes through :meth:`to_px`."""

    def __init__(self, terrain: list[str]):
        self.terrain = terrain
        self.h, self.w = len(terrain), len(terrain[0])
        self.cell = 20
        self.origin = (0, 0)
        self._bg: pygame.Surface | None = None
        self._backgrounds: dict[int, pygame.Surface] = {}  # by px a cell, for this terrain
        self._sprites: dict = {}
        self._colours: dict[int, tuple] = {}
        # how far the fish see (perception.radius; view_radii: each fish's own, None when all see it):
        # the followed fish's square of view is drawn that wide
        self.radius = 2
        self.sight: list[int] | None = None
        # a hexagonal tank (world.grid = "hex", mirofish/grid.py): cells drawn as hexes, odd rows
        # half a cell right; the pane sets it from the session's config
        self.hexes = False

    # ------------------------------------------------------------ layout

    def set_terrain(self, terrain: list[str]) -> None:
        """New terrain (an intervention placed or cleared rocks): redrawn at the next layout."""
        if terrain != self.terrain:
            self.terrain, self._bg = terrain, None
            self._backgrounds.clear()

    fit_cap = 20  # the largest cell size a tank is fitted at (the scene sets world.cell_px)

    def fit_cell(self, rect: pygame.Rect) -> int:
        """Pixels per cell that show the whole tank in ``rect``: the largest whole number, up to
        :attr:`fit_cap`."""
        return max(2, min(self.fit_cap, rect.w // self.w, rect.h // self.h))

    def layout(self, rect: pygame.Rect, zoom: float = 1.0, centre: tuple[float, float] | None = None) -> None:
        """Fit the tank into ``rect``; with ``zoom`` > 1, ``zoom`` times larger (up to
        ``MAX_CELL`` px a cell) around ``centre`` (tank cells; default the middle). (The
        aquarium's pane places it through its camera instead: :meth:`place`.)"""
        fit = self.fit_cell(rect)
        cell = max(fit, min(MAX_CELL, int(round(fit * zoom))))
        ox, oy = rect.x + (rect.w - self.w * cell) // 2, rect.y + (rect.h - self.h * cell) // 2
        if centre is not None:
            if self.w * cell > rect.w:
                ox = int(round(rect.centerx - (centre[0] + 0.5) * cell))
                ox = min(rect.x, max(rect.right - self.w * cell, ox))
            if self.h * cell > rect.h:
                oy = int(round(rect.centery - (centre[1] + 0.5) * cell))
                oy = min(rect.y, max(rect.bottom - self.h * cell, oy))
        self.place(rect, cell, (ox, oy))

    def release(self) -> None:
        """Drop the drawing caches (backgrounds, sprites: megabytes at 20 px a cell); the next
        frame draws them anew."""
        self._bg = None
        self._backgrounds.clear()
        self._sprites.clear()

    def place(self, rect: pygame.Rect, cell: int, origin: tuple[int, int]) -> None:
        """Draw at ``cell`` px a cell with cell (0, 0)'s corner at ``origin``, clipped to ``rect``
        (what a :class:`~mirofish.ui.camera.Camera` says)."""
        if cell != self.cell or self._bg is None:
            self.cell = cell
            bg = self._backgrounds.pop(cell, None)  # (X and the wheel go back and forth: the last two sizes are kept)
            self._bg = bg if bg is not None else self._background()
            self._backgrounds[cell] = self._bg
            while len(self._backgrounds) > 2:
                self._backgrounds.pop(next(iter(self._backgrounds)))
            self._sprites.clear()
        self.view_rect = rect
        self.origin = (int(origin[0]), int(origin[1]))

    def cell_at(self, pos: tuple[int, int]) -> tuple[float, float]:
        """The tank cell (fractional) under a pixel."""
        y = (pos[1] - self.origin[1]) / self.cell - 0.5
        x = (pos[0] - self.origin[0]) / self.cell - 0.5
        return (x - float(hex_shift(y)) if self.hexes else x), y

    view_rect = pygame.Rect(0, 0, 0, 0)
    MAX_ZOOM_CELL = MAX_CELL

    @property
    def rect(self) -> pygame.Rect:
        """The part of the window the tank covers (clipped to its rectangle when zoomed)."""
        full = pygame.Rect(self.origin, (self.w * self.cell, self.h * self.cell))
        return full.clip(self.view_rect) if self.view_rect.w else full

    def _background(self) -> pygame.Surface:
        if self.hexes:
            return self._hex_background()
        c, w, h = self.cell, self.w, self.h
        bg = pygame.Surface((w * c, h * c))
        for py in range(h * c):  # a calm vertical gradient
            t = py / max(1, h * c - 1)
            col = tuple(int(a + (b - a) * t) for a, b in zip(theme.WATER_TOP, theme.WATER_BOTTOM))
            pygame.draw.line(bg, col, (0, py), (w * c, py))
        if c >= 6:
            grid = pygame.Surface((w * c, h * c), pygame.SRCALPHA)
            for x in range(0, w * c, c):
                pygame.draw.line(grid, theme.GRID, (x, 0), (x, h * c))
            for y in range(0, h * c, c):
                pygame.draw.line(grid, theme.GRID, (0, y), (w * c, y))
            bg.blit(grid, (0, 0))
        glass = pygame.Surface((c, c), pygame.SRCALPHA)
        glass.fill((*theme.GLASS, 70))
        for ty, row in enumerate(self.terrain):
            for tx, ch in enumerate(row):
                r = pygame.Rect(tx * c, ty * c, c, c)
                if ch == "#":
                    bg.blit(glass, r)
                elif ch == "*":
                    pygame.draw.rect(bg, theme.PLANT_DARK, r)
                    pygame.draw.rect(bg, theme.PLANT, r.inflate(-max(1, c // 3), 0))
                elif ch == "o":
                    pygame.draw.rect(bg, theme.ROCK_DARK, r)
                    pygame.draw.rect(bg, theme.ROCK, r.inflate(-max(1, c // 5), -max(1, c // 5)), border_radius=c // 3)
        m = next((i for i, ch in enumerate(self.terrain[len(self.terrain) // 2]) if ch != "#"), 0)
        inner = pygame.Rect(m * c, m * c, (w - 2 * m) * c, (h - 2 * m) * c)
        pygame.draw.rect(bg, theme.GLASS_EDGE, inner, 1)
        return bg

    def _hex_background(self) -> pygame.Surface:
        """A hexagonal tank's background: the water's gradient, then every cell a hexagon (its
        outline at 6 px a cell and more), glass, plants and rocks as the square tank's."""
        c, w, h = self.cell, self.w, self.h
        bg = pygame.Surface((w * c, h * c))
        for py in range(h * c):
            t = py / max(1, h * c - 1)
            col = tuple(int(a + (b - a) * t) for a, b in zip(theme.WATER_TOP, theme.WATER_BOTTOM))
            pygame.draw.line(bg, col, (0, py), (w * c, py))
        lines = pygame.Surface((w * c, h * c), pygame.SRCALPHA)
        glass = pygame.Surface((w * c, h * c), pygame.SRCALPHA)
        for ty, row in enumerate(self.terrain):
            for tx, ch in enumerate(row):
                cx, cy = (tx + 0.5 * (ty & 1)) * c + c / 2, ty * c + c / 2
                if ch == "#":
                    pygame.draw.polygon(glass, (*theme.GLASS, 70), hex_points(cx, cy, c))
                elif ch == "*":
                    pygame.draw.polygon(bg, theme.PLANT_DARK, hex_points(cx, cy, c))
                    pygame.draw.polygon(bg, theme.PLANT, hex_points(cx, cy, c, inset=max(1, c // 6)))
                elif ch == "o":
                    pygame.draw.polygon(bg, theme.ROCK_DARK, hex_points(cx, cy, c))
                    pygame.draw.polygon(bg, theme.ROCK, hex_points(cx, cy, c, inset=max(1, c // 6)))
                if c >= 6:
                    pygame.draw.polygon(lines, theme.GRID, hex_points(cx, cy, c), 1)
        bg.blit(glass, (0, 0))
        bg.blit(lines, (0, 0))
        return bg

    # ------------------------------------------------------------ geometry

    def to_px(self, x: Any, y: Any) -> tuple[Any, Any]:
        """Tank cell (x, y) → pixel centre (works on arrays; a hexagonal tank's odd rows half a
        cell right)."""
        c = self.cell
        x = np.asarray(x) + hex_shift(y) if self.hexes else np.asarray(x)
        return self.origin[0] + x * c + c / 2, self.origin[1] + np.asarray(y) * c + c / 2

    drawn_xy: tuple[np.ndarray, np.ndarray] | None = None  # where the last frame drew each fish (cells)

    def fish_at(self, pos: tuple[int, int], view: TankView) -> int | None:
        """The fish drawn under (or nearest within a cell of) a pixel, if any: where the last
        frame drew it (between two ticks, on its way), else where the view has it."""
        drawn = self.drawn_xy
        x, y = drawn if drawn is not None and len(drawn[0]) == len(view.x) else (view.x, view.y)
        px, py = self.to_px(x, y)
        d2 = (px - pos[0]) ** 2 + (py - pos[1]) ** 2
        if view.present is not None:
            d2 = np.where(view.present, d2, np.inf)  # fish out of the water cannot be clicked
        i = int(np.argmin(d2)) if d2.size else -1
        return i if i >= 0 and d2[i] <= (self.cell * 1.1) ** 2 else None

    # ------------------------------------------------------------ sprites

    def _sprite(self, fish: int, heading: int, colour: tuple) -> pygame.Surface:
        key = (fish, heading)
        spr = self._sprites.get(key)
        if spr is None:
            c = max(6, int(self.cell * 1.45))  # a little larger than its cell, to be seen
            base = pygame.Surface((c, c), pygame.SRCALPHA)
            body = pygame.Rect(int(c * 0.22), int(c * 0.27), int(c * 0.74), int(c * 0.46))
            tail = [(int(c * 0.3), c // 2), (int(c * 0.02), int(c * 0.2)), (int(c * 0.02), int(c * 0.8))]
            pygame.draw.polygon(base, colour, tail)
            pygame.draw.ellipse(base, colour, body)
            pygame.draw.ellipse(base, theme.FISH_EDGE, body, 1)
            if c >= 10:
                pygame.draw.circle(base, theme.FISH_EYE, (int(c * 0.78), int(c * 0.44)), max(1, c // 14))
            # sprites face east; a hexagonal tank's six headings are 60° apart, east first
            angle = 60 * heading if self.hexes else {0: 90, 1: -90, 2: 180, 3: 0}[heading]
            spr = self._sprites[key] = pygame.transform.rotate(base, angle)
        return spr

    # ------------------------------------------------------------ drawing

    def draw(self, surf: pygame.Surface, view: TankView, prev: TankView | None = None, alpha: float = 1.0,
             selected: int | None = None, show_fov: bool = True, heat: np.ndarray | None = None,
             heat_cell: int = 8, ghost: TankView | None = None) -> None:
        assert self._bg is not None, "layout() first"
        clip = surf.get_clip()
        surf.set_clip(self.rect)
        try:
            self._draw(surf, view, prev, alpha, selected, show_fov, heat, heat_cell, ghost)
        finally:
            surf.set_clip(clip)

    def _draw(self, surf, view, prev, alpha, selected, show_fov, heat, heat_cell, ghost) -> None:
        c = self.cell
        assert self._bg is not None
        surf.blit(self._bg, self.origin)
        if heat is not None and heat.max() > 0:
            layer = pygame.Surface((self.w * c, self.h * c), pygame.SRCALPHA)
            peak = float(heat.max())
            for (hy, hx), v in np.ndenumerate(heat):
                if v:
                    a = int(30 + 140 * v / peak)
                    pygame.draw.rect(layer, (*theme.HEAT, a), (hx * heat_cell * c, hy * heat_cell * c,
                                                               heat_cell * c, heat_cell * c))
            surf.blit(layer, self.origin)
        fx, fy = self.to_px(view.food_x, view.food_y)
        r = max(1, int(c * 0.28))
        box = self.rect.inflate(2 * c, 2 * c)  # zoomed in, only what the pane shows is drawn
        near = (fx >= box.x) & (fx < box.right) & (fy >= box.y) & (fy < box.bottom)
        for x, y, age in zip(fx[near].tolist(), fy[near].tolist(), np.asarray(view.food_age)[near].tolist()):
            pygame.draw.circle(surf, theme.food_colour(age, view.rot_ticks), (int(x), int(y)), r)
        if ghost is not None:  # the original's fish, where they differ from the branch
            moved = (ghost.x != view.x) | (ghost.y != view.y)
            if ghost.present is not None:
                moved &= ghost.present
            gx, gy = self.to_px(ghost.x[moved], ghost.y[moved])
            for x, y in zip(gx.tolist(), gy.tolist()):
                pygame.draw.circle(surf, theme.GHOST, (int(x), int(y)), max(3, int(c * 0.5)), 1)
        x, y = self.drawn_xy = moving_xy(view, prev, alpha, self.hexes)
        px, py = self.to_px(x, y)
        half = c / 2
        seen = np.flatnonzero((px >= box.x) & (px < box.right) & (py >= box.y) & (py < box.bottom)
                              & (view.present if view.present is not None else True))
        for i in seen.tolist():
            colour = self._colours.get(i)
            if colour is None:
                colour = self._colours[i] = theme.fish_colour(view.traits[i])
            spr = self._sprite(i, int(view.heading[i]), colour if view.energy[i] > 0 else theme.STARVED)
            surf.blit(spr, (px[i] - spr.get_width() / 2, py[i] - spr.get_height() / 2))
        if selected is not None and 0 <= selected < len(px):
            sx, sy = px[selected], py[selected]
            pygame.draw.circle(surf, theme.SELECT, (int(sx), int(sy)), int(c * 0.8), 2)
            if show_fov and self.hexes:
                self._hex_fov(surf, int(view.x[selected]), int(view.y[selected]),
                              self.sight[selected] if self.sight is not None and selected < len(self.sight)
                              else self.radius)
            elif show_fov:
                r = self.sight[selected] if self.sight is not None and selected < len(self.sight) else self.radius
                fov = pygame.Rect(0, 0, (2 * r + 1) * c, (2 * r + 1) * c)
                fov.center = (int(view.x[selected] * c + self.origin[0] + half),
                              int(view.y[selected] * c + self.origin[1] + half))
                layer = pygame.Surface(fov.size, pygame.SRCALPHA)
                layer.fill(theme.FOV)
                surf.blit(layer, fov)
                pygame.draw.rect(surf, theme.SELECT, fov, 1)

    def _hex_fov(self, surf: pygame.Surface, x: int, y: int, radius: int) -> None:
        """The followed fish's view on a hexagonal tank: the hexes within ``radius`` steps."""
        from ..grid import HEX

        u, v = HEX.window_cells(radius)
        dx, dy = HEX.tank_step(u, v, y & 1)
        px, py = self.to_px(x + dx, y + dy)
        c = self.cell
        left, top = float(px.min()) - c, float(py.min()) - c  # a layer just around the view's hexes
        layer = pygame.Surface((int(px.max() - left) + 2 * c, int(py.max() - top) + 2 * c), pygame.SRCALPHA)
        for cx, cy in zip((px - left).tolist(), (py - top).tolist()):
            pygame.draw.polygon(layer, theme.FOV, hex_points(cx, cy, c))
        surf.blit(layer, (int(left), int(top)))
