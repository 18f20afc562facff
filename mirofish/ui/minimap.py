"""The minimap: the whole tank, small, at the foot of the side panel (beside the water, never
over it) — rocks, plants and glass, every fish a dot in its personality's colour, the followed
fish brighter, the largest school ringed, and the camera's rectangle; a click or a drag on it
puts the camera there (an RTS's minimap)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pygame

from ..snapshot import TankView
from . import theme
from .camera import Camera
from .layout import minimap_map


class Minimap:
    """Draws the whole tank into the minimap's box and moves a :class:`Camera` on a click or drag."""

    def __init__(self) -> None:
        self.box = pygame.Rect(0, 0, 0, 0)  # the minimap's part of the window (caption and map)
        self.map = pygame.Rect(0, 0, 0, 0)  # the map in it, last drawn
        self.grid = (1, 1)
        self.dragging = False
        self._bg: tuple[Any, pygame.Surface] | None = None
        self._colours: dict[int, tuple] = {}

    # ------------------------------------------------------------ geometry

    def to_px(self, x: Any, y: Any) -> tuple[Any, Any]:
        """Tank cell (x, y) → its centre on the map (works on arrays)."""
        sx, sy = self.map.w / self.grid[0], self.map.h / self.grid[1]
        return self.map.x + (np.asarray(x) + 0.5) * sx, self.map.y + (np.asarray(y) + 0.5) * sy

    def to_cell(self, pos: tuple[int, int]) -> tuple[float, float]:
        """The tank cell under a point of the map (clamped to the tank)."""
        x = (pos[0] - self.map.x) / self.map.w * self.grid[0] - 0.5
        y = (pos[1] - self.map.y) / self.map.h * self.grid[1] - 0.5
        return min(self.grid[0] - 1.0, max(0.0, x)), min(self.grid[1] - 1.0, max(0.0, y))

    # ------------------------------------------------------------ the mouse

    def handle(self, event: Any, camera: Camera) -> bool:
        """A press on the map (and the drag after it) puts the camera's centre there."""
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.map.w \
                and self.map.inflate(8, 8).collidepoint(event.pos):
            self.dragging = True
            camera.look_at(self.to_cell(event.pos))
            return True
        if event.type == pygame.MOUSEMOTION and self.dragging:
            camera.look_at(self.to_cell(event.pos))
            return True
        if event.type == pygame.MOUSEBUTTONUP and self.dragging:
            self.dragging = False
            return True
        return event.type == pygame.MOUSEBUTTONDOWN and self.box.collidepoint(event.pos)

    # ------------------------------------------------------------ drawing

    def _background(self, terrain: list[str], size: tuple[int, int]) -> pygame.Surface:
        """The terrain at one pixel a cell, scaled to the map."""
        h, w = len(terrain), len(terrain[0])
        small = pygame.Surface((w, h))
        for y, row in enumerate(terrain):
            t = y / max(1, h - 1)
            water = tuple(int(a + (b - a) * t) for a, b in zip(theme.WATER_TOP, theme.WATER_BOTTOM))
            glass = tuple(int(a + (b - a) * 70 / 255) for a, b in zip(water, theme.GLASS))  # as the tank draws it
            colours = {"#": glass, "*": theme.PLANT, "o": theme.ROCK}
            for x, ch in enumerate(row):
                small.set_at((x, y), colours.get(ch, water))
        return pygame.transform.scale(small, size)

    def draw(self, surf: pygame.Surface, box: pygame.Rect, terrain: list[str], terrain_key: Any, view: TankView,
             camera: Camera, selected: int | None, members: Any) -> None:
        self.box = box
        self.grid = (len(terrain[0]), len(terrain))
        self.map = minimap_map(box, self.grid)
        if not box.w or not self.map.w:
            return
        pygame.draw.rect(surf, theme.PANEL, box)
        pygame.draw.line(surf, theme.PANEL_EDGE, box.topleft, box.bottomleft)
        pygame.draw.line(surf, theme.PANEL_EDGE, box.topleft, (box.right, box.y))
        say = ("the whole tank · click or drag: look there" if camera.mode == "follow" and not camera.whole_shown
               else f"the whole tank · click: {camera.scale} px a cell there")
        caption = theme.fit(f"{say} · X", 14, box.w - 24, theme.DIM)
        surf.blit(caption, (self.map.x, box.y + 3))
        key = (terrain_key, self.map.size)
        if self._bg is None or self._bg[0] != key:
            self._bg = (key, self._background(terrain, self.map.size))
        surf.blit(self._bg[1], self.map)
        clip = surf.get_clip()
        surf.set_clip(self.map)
        n = len(view.x)
        here = np.ones(n, bool) if view.present is None else np.asarray(view.present, bool)[:n]
        px, py = self.to_px(view.x.astype(float), view.y.astype(float))
        dot = max(2, int(round(self.map.w / self.grid[0] * 1.2)))
        for i in np.flatnonzero(here).tolist():
            colour = self._colours.get(i)
            if colour is None:
                colour = self._colours[i] = theme.fish_colour(view.traits[i])
            if view.energy[i] <= 0:
                colour = theme.STARVED
            surf.fill(colour, (int(px[i]) - dot // 2, int(py[i]) - dot // 2, dot, dot))
        if members is not None and len(members):  # the largest school, ringed
            ids = np.asarray(members, np.int64)
            ids = ids[ids < n]
            if ids.size:
                cx, cy = float(px[ids].mean()), float(py[ids].mean())
                r = float(np.sqrt(((px[ids] - cx) ** 2 + (py[ids] - cy) ** 2).max())) + dot + 2
                pygame.draw.circle(surf, theme.GOOD, (int(cx), int(cy)), int(r), 1)
        if selected is not None and 0 <= selected < n and here[selected]:
            pygame.draw.circle(surf, theme.SELECT, (int(px[selected]), int(py[selected])), dot + 2, 1)
        surf.set_clip(clip)
        pygame.draw.rect(surf, theme.PANEL_EDGE, self.map.inflate(2, 2), 1)
        if not camera.whole_shown:  # the camera's rectangle
            x0, y0, x1, y1 = camera.visible()
            sx, sy = self.map.w / self.grid[0], self.map.h / self.grid[1]
            view_rect = pygame.Rect(round(self.map.x + x0 * sx), round(self.map.y + y0 * sy),
                                    max(2, round((x1 - x0) * sx)), max(2, round((y1 - y0) * sy)))
            pygame.draw.rect(surf, theme.INK, view_rect.clip(self.map.inflate(2, 2)), 1)

    def forget_colours(self) -> None:
        """Another tank: its fish have other personalities."""
        self._colours.clear()
