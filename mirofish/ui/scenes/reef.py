"""The reef in the window: a map of its tanks, any of them opened live (``run.py reef REEF.toml``).

The map draws every tank as a tile — its water and fish, its name, how many fish are in it
and how many of them school — and every corridor as a line between the openings it joins,
with the fish in transit on it. A click on a tile opens that tank large, live, with the same
drawing as the aquarium; Esc (or M) returns to the map. The reef steps in this process,
exchanging migrants at every interval exactly as ``--headless`` does.
"""

from __future__ import annotations

import math
from typing import Any

import pygame

from ...reef.run import Reef
from ...reef.spec import ReefSpec
from ...session.reef import ReefSession, ReefShown, TankShown
from .. import theme
from ..keys import Binding, Line, Row
from ..tank import TankRenderer
from .base import PacedScene


class ReefScene(PacedScene):
    title = "Reef"
    help_lines: tuple[Row, ...] = (
        Line("tiles", "the tanks: their water and fish, name, fish in it, share schooling"),
        Line("in / out", "fish that arrived in the tank through a corridor / that left it, so far"),
        Line("lines", "corridors between openings in the glass; dots: fish swimming through one now"),
        Binding("click a tank", "open it large, live; Esc or M: back to the map", (pygame.K_ESCAPE, pygame.K_m),
                lambda s, e: s.to_map()),
        Line("exchange", "every interval ticks the tanks hand over the fish that left"))
    switchable = False

    def __init__(self, spec: ReefSpec, record: str | None = None):
        super().__init__()
        self.session = ReefSession(Reef, spec, record)  # the reef and its tanks, stepped here
        self.renderers = [TankRenderer(self.session.terrain(i)) for i in range(len(spec.tanks))]
        self.opened: int | None = None
        self.tiles: list[pygame.Rect] = []

    @property
    def reef(self) -> ReefShown:
        """What is drawn: the session's snapshot."""
        return self.session.snapshot()

    def step(self) -> None:
        self.session.step()

    def layout(self, size: tuple[int, int]) -> dict:
        w, h = size
        return {"header": pygame.Rect(0, 0, w, 70), "map": pygame.Rect(16, 78, w - 32, h - 94)}

    def _tile_rects(self, area: pygame.Rect, n: int) -> list[pygame.Rect]:
        cols = max(1, round(math.sqrt(n * area.w / max(1, area.h) / 1.6)))
        rows = math.ceil(n / cols)
        gap = 28
        tw, th = (area.w - gap * (cols - 1)) // cols, (area.h - gap * (rows - 1)) // rows
        return [pygame.Rect(area.x + (k % cols) * (tw + gap), area.y + (k // cols) * (th + gap), tw, th)
                for k in range(n)]

    def handle_event(self, event: Any) -> bool:
        """A click on a tile opens its tank; then the keys."""
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.opened is None:
            for i, r in enumerate(self.tiles):
                if r.collidepoint(event.pos):
                    self.opened = i
                    return True
        return super().handle_event(event)

    def to_map(self) -> bool:
        """Esc / M: from the tank opened back to the map (Esc closes the help first)."""
        if self.opened is None or self.show_help:
            return False
        self.opened = None
        return True

    def draw_scene(self, surf: pygame.Surface) -> None:
        _, _, r = self.begin_frame(surf)
        reef = self.reef
        what = "click a tank to open it" if self.opened is None else \
            f"tank {reef.tanks[self.opened].name} (Esc: the map)"
        surf.blit(theme.text("Reef", 30, theme.INK, bold=True), (24, 12))
        pace = "paused" if self.pacer.paused else f"{self.pacer.speed:g}x"
        surf.blit(theme.fit(f"tick {reef.tick} {pace} · {len(reef.tanks)} tanks · exchange every "
                            f"{reef.interval} ticks · {reef.crossings} crossings · "
                            f"{reef.in_transit} in a corridor now · "
                            f"{what} · H: what you see", 18, r["header"].w - 48, theme.DIM), (24, 46))
        if self.opened is None:
            self._draw_map(surf, r["map"], reef)
        else:
            self._draw_tank(surf, r["map"], self.opened, reef.tanks[self.opened], big=True)

    def _draw_map(self, surf: pygame.Surface, area: pygame.Rect, reef: ReefShown) -> None:
        self.tiles = self._tile_rects(area, len(reef.tanks))
        for i, tile in enumerate(self.tiles):
            self._draw_tank(surf, tile, i, reef.tanks[i])
        for cor in reef.corridors:  # corridors over the tiles, with their travellers
            pa, pb = self._opening_px(cor.a, cor.door_a), self._opening_px(cor.b, cor.door_b)
            pygame.draw.line(surf, theme.ACCENT, pa, pb, 3)
            for f, forward in cor.travellers:
                start, end = (pa, pb) if forward else (pb, pa)
                pos = (int(start[0] + f * (end[0] - start[0])), int(start[1] + f * (end[1] - start[1])))
                pygame.draw.circle(surf, theme.INK, pos, 5)

    def _opening_px(self, tank: int, door: tuple[int, int]) -> tuple[int, int]:
        px, py = self.renderers[tank].to_px(*door)
        return int(px), int(py)

    def _draw_tank(self, surf: pygame.Surface, rect: pygame.Rect, i: int, tank: TankShown, big: bool = False) -> None:
        pygame.draw.rect(surf, theme.CARD, rect, border_radius=8)
        label = (f"{tank.name}: {tank.population} fish · schooling {tank.schooling:.0%}"
                 f" · in {tank.arrived} / out {tank.left}")
        surf.blit(theme.fit(label, 20 if big else 16, rect.w - 16, theme.INK), (rect.x + 8, rect.y + 6))
        water = pygame.Rect(rect.x + 6, rect.y + 30, rect.w - 12, rect.h - 36)
        rend = self.renderers[i]
        rend.layout(water)
        rend.draw(surf, tank.view, None, 1.0, None, False, None, 4, None)

    def snapshot(self) -> Any:
        return self.session.snapshot().as_json()

    def reset(self, seed: int) -> None:
        self.session.reset(seed)

    def close(self) -> None:
        self.session.close()
