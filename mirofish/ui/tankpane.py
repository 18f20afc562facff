"""The water as the aquarium window shows it: zoom and pan, the followed fish kept in the
middle, a fork's ghost, the heat map and the ASCII view over it — and what the mouse does in
it (a press follows a fish or starts a drag, a drag pans, a click with a hand tool intervenes)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pygame

from ..observe import ascii as ascii_view
from ..observe.groups import groups_now
from ..session import Session
from ..snapshot import TankView
from . import theme
from .tank import TankRenderer

GROUP_COLOURS = ((90, 180, 255), (255, 160, 64), (120, 220, 120), (230, 110, 200), (250, 230, 90),
                 (160, 140, 255), (90, 220, 210), (255, 110, 110))  # a group without a colour of its own


def group_colours(cfg: Any) -> list[tuple[int, int, int]]:
    """Each group's ring colour (its ``colour``, else the next of :data:`GROUP_COLOURS`), the
    fish no group takes (``tank``) last, in grey."""
    out = []
    for g, grp in enumerate(cfg.fish.groups):
        c = grp.colour
        out.append((int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)) if c else GROUP_COLOURS[g % len(GROUP_COLOURS)])
    return out + [theme.DIM]


class TankPane:
    """The tank's pane: a renderer plus the view state (zoom, pan, tool) of one window."""

    TOOLS = ("follow", "food", "rock", "clear", "add", "remove")
    TOOL_LABELS: ClassVar[dict[str, str]] = {"follow": "Click: follow", "food": "Click: drop food",
                                             "rock": "Click: place rock", "clear": "Click: clear rock",
                                             "add": "Click: add a fish", "remove": "Click: take out"}

    def __init__(self, terrain: list[str]):
        self.renderer = TankRenderer(terrain)
        self.tool = "follow"  # what a click in the tank does: follow, food, rock, clear, add, remove
        self.zoom = 1.0
        self.pan: tuple[float, float] | None = None  # the cell at the tank's centre when zoomed (None: fit)
        self._drag: tuple | None = None  # a mouse press in the tank: (where, centre then, moved, button)
        self.clicked: tuple[int, int] | None = None  # the point the last event clicked, for the follow or hand tool
        self.centred = True  # zoomed in, the followed fish stays in the middle (until a drag pans)
        self._terrain_key: Any = None
        self._ascii: tuple[Any, pygame.Surface] | None = None

    def new_tank(self, terrain: list[str]) -> None:
        """Another session is shown: its terrain (the zoom stays)."""
        self.renderer = TankRenderer(terrain)

    # ------------------------------------------------------------ the mouse

    def handle(self, event: Any) -> bool:
        """Whether the event is the pane's; :attr:`clicked` is then the point a click asks the
        scene's follow or hand tool about (None: a press that only starts a drag, a drag)."""
        self.clicked = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button in (1, 2, 3) \
                and self.renderer.rect.collidepoint(event.pos):
            self._drag = (event.pos, self.renderer.cell_at(self.renderer.view_rect.center), False, event.button)
            follows = event.button == 1 and self.tool == "follow"  # follows at once; a drag then pans
            self.clicked = event.pos if follows else None
            return True
        if event.type == pygame.MOUSEMOTION and self._drag is not None:
            start, centre, moved, button = self._drag
            dx, dy = event.pos[0] - start[0], event.pos[1] - start[1]
            if moved or abs(dx) + abs(dy) > 4:  # a drag pans (a click stays a click)
                c = self.renderer.cell
                self.pan = (centre[0] - dx / c, centre[1] - dy / c)
                self.centred = False
                self._drag = (start, centre, True, button)
            return True
        if event.type == pygame.MOUSEBUTTONUP and self._drag is not None:
            start, _, moved, button = self._drag
            self._drag = None
            self.clicked = start if not moved and button == 1 and self.tool != "follow" else None
            return True
        return False

    def cycle_tool(self) -> str:
        self.tool = self.TOOLS[(self.TOOLS.index(self.tool) + 1) % len(self.TOOLS)]
        return f"{self.TOOL_LABELS[self.tool].lower()} (D: next tool)"

    def zoom_at(self, pos: tuple[int, int], factor: float, tank: pygame.Rect) -> None:
        """Zoom by ``factor`` keeping the cell under ``pos`` where it is (``tank``: the pane)."""
        r = self.renderer
        fit = r.fit_cell(tank)
        zoom = min(r.MAX_ZOOM_CELL / fit, max(1.0, self.zoom * factor))
        if zoom == self.zoom:
            return
        under = r.cell_at(pos)
        centre = r.cell_at(r.view_rect.center)
        new_cell = max(fit, min(r.MAX_ZOOM_CELL, int(round(fit * zoom))))
        scale = r.cell / new_cell
        self.pan = (under[0] + (centre[0] - under[0]) * scale, under[1] + (centre[1] - under[1]) * scale)
        self.zoom = zoom  # (a followed fish stays centred; only a drag stops that)
        if zoom == 1.0:
            self.pan = None

    def reset_zoom(self) -> None:
        self.zoom, self.pan = 1.0, None

    def set_cell(self, px: int, tank: pygame.Rect) -> bool:
        """Draw ``px`` pixels a cell in ``tank`` (the view follows the followed fish); False when
        the whole tank already shows at that size or larger."""
        fit = self.renderer.fit_cell(tank)
        if px <= fit:
            return False
        self.zoom, self.centred = px / fit, True
        if self.pan is None:
            self.pan = ((self.renderer.w - 1) / 2, (self.renderer.h - 1) / 2)
        return True

    # ------------------------------------------------------------ drawing

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, shown: Session, view: TankView, prev: TankView | None,
             alpha: float, selected: int | None, show_fov: bool, heat: Any) -> None:
        """The water (zoomed and panned; the followed fish kept in the middle) and the ghost of
        a fork's original."""
        centre = self.pan
        if self.zoom > 1.0 and selected is not None and self.centred \
                and selected < len(view.x):  # zoomed in, the followed fish stays in the middle
            centre = (float(view.x[selected]), float(view.y[selected]))
            self.pan = centre
        key = shown.terrain_key()
        if key != self._terrain_key:
            self._terrain_key = key
            self.renderer.set_terrain(shown.terrain())
        self.renderer.layout(rect, self.zoom, centre)
        self.renderer.draw(surf, view, prev, alpha, selected, show_fov, heat, shown.cfg.metrics.hotspot_cell,
                           shown.ghost_view())
        self._draw_school(surf, view, getattr(shown.metrics, "school_members", None))
        if shown.cfg.fish.groups:
            self._draw_groups(surf, shown.cfg, view, prev, alpha, shown.metrics)
        places = view.places
        if selected is not None and places is not None and selected < len(places.meals):
            self._draw_places(surf, places, selected)

    def _draw_groups(self, surf: pygame.Surface, cfg: Any, view: TankView, prev: TankView | None,
                     alpha: float, metrics: Any) -> None:
        """A mixed tank: a thin ring in its group's colour around every fish (up to 3,000 fish),
        and the groups' legend in the water's top-left corner: each group's fish, mean energy and
        schooling degree (:func:`~mirofish.observe.groups.groups_now`)."""
        colours = group_colours(cfg)
        of = np.asarray(cfg.fish.group_of(), np.int64)[: len(view.x)]
        clip = surf.get_clip()
        surf.set_clip(self.renderer.rect)
        if len(view.x) <= 3000:
            x, y = view.x.astype(float), view.y.astype(float)
            if prev is not None and len(prev.x) == len(x) and alpha < 1.0:
                x, y = prev.x + (x - prev.x) * alpha, prev.y + (y - prev.y) * alpha
            px, py = self.renderer.to_px(x, y)
            r = max(5, int(self.renderer.cell * 0.95))
            width = 1 if self.renderer.cell < 14 else 2
            for i in range(len(of)):
                if view.in_water(i):
                    pygame.draw.circle(surf, colours[int(of[i])], (int(px[i]), int(py[i])), r, width)
        lx, ly = self.renderer.rect.x + 8, self.renderer.rect.y + 6
        # each group's fish, their mean energy and their schooling degree as of the tick on screen
        for g, name, n, energy, school in groups_now(cfg, view, metrics):
            pygame.draw.circle(surf, colours[g], (lx + 6, ly + 9), 6, 2)
            label = theme.text(f"{name} {n} fish, energy {energy:.0f}, schooling {school:.2f}", 14, theme.INK)
            surf.blit(label, (lx + 16, ly + 1))
            lx += 30 + label.get_width()
        surf.set_clip(clip)

    def _draw_school(self, surf: pygame.Surface, view: TankView, members: Any) -> None:
        """The HUD's "largest school" — moving and aligned (observe/metrics.py SCHOOL_ALIGNED) —
        ringed in the tank, so the number points at fish."""
        if members is None or len(members) == 0:
            return
        ids = np.asarray(members, np.int64)
        ids = ids[ids < len(view.x)]
        clip = surf.get_clip()
        surf.set_clip(self.renderer.rect)
        px, py = self.renderer.to_px(view.x[ids].astype(float), view.y[ids].astype(float))
        r = max(4, int(self.renderer.cell * 0.8))
        for x, y in zip(np.atleast_1d(px).tolist(), np.atleast_1d(py).tolist()):
            pygame.draw.circle(surf, theme.GOOD, (int(x), int(y)), r, 1)
        surf.set_clip(clip)

    def _draw_places(self, surf: pygame.Surface, places: Any, fish: int) -> None:
        """The followed fish's remembered places: a ring per place (thicker for more meals) and
        its slot number, clipped to the water."""
        clip = surf.get_clip()
        surf.set_clip(self.renderer.rect)
        r = max(4, int(self.renderer.cell * 1.6))
        for j in np.flatnonzero(places.meals_at[fish] > 0).tolist():
            px, py = self.renderer.to_px(int(places.x[fish, j]), int(places.y[fish, j]))
            width = 1 + min(3, int(places.meals_at[fish, j]) // 2)
            pygame.draw.circle(surf, theme.GOOD, (int(px), int(py)), r, width)
            surf.blit(theme.text(f"#{j}", 13, theme.GOOD), (int(px) + r - 2, int(py) - r - 4))
        surf.set_clip(clip)

    def draw_ascii(self, surf: pygame.Surface, rect: pygame.Rect, shown: Session, mode: str) -> None:
        """The terminal view's characters over the tank (rendered once per tick)."""
        key = (shown.tick, rect.size, mode)
        if self._ascii is None or self._ascii[0] != key:
            lines = ascii_view.render(shown.snapshot()).split("\n")
            size = max(8, min(16, (rect.h - 8) // max(1, len(lines))))
            font = theme.mono(size)
            text = pygame.Surface((max(font.size(line)[0] for line in lines) + 12, 8 + len(lines) * size),
                                  pygame.SRCALPHA)
            for k, line in enumerate(lines):
                text.blit(font.render(line, False, theme.GOOD), (6, 4 + k * size))
            if text.get_width() > rect.w or text.get_height() > rect.h:  # a small window: all of it, smaller
                f = min(rect.w / text.get_width(), rect.h / text.get_height())
                text = pygame.transform.smoothscale(text, (int(text.get_width() * f), int(text.get_height() * f)))
            layer = pygame.Surface(rect.size, pygame.SRCALPHA)
            layer.fill(theme.SHADE)
            layer.blit(text, (0, 0))
            self._ascii = (key, layer)
        surf.blit(self._ascii[1], rect)
