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
        self.spec = spec
        self.reef = Reef(spec, "inline", record=record)
        self.host = self.reef.hosts.hosts[0]
        self.renderers = [TankRenderer(self.host.view(i).terrain()) for i in range(len(spec.tanks))]
        self.opened: int | None = None
        self.tiles: list[pygame.Rect] = []
        self.reef.advance(0)  # the figures of tick 0

    def step(self) -> None:
        self.reef.advance(self.reef.tick + 1)

    def layout(self, size: tuple[int, int]) -> dict:
        w, h = size
        return {"header": pygame.Rect(0, 0, w, 70), "map": pygame.Rect(16, 78, w - 32, h - 94)}

    def _tile_rects(self, area: pygame.Rect) -> list[pygame.Rect]:
        n = len(self.spec.tanks)
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
        moves = sum(self.reef.migrations().values())
        what = "click a tank to open it" if self.opened is None else \
            f"tank {self.spec.tanks[self.opened].name} (Esc: the map)"
        surf.blit(theme.text("Reef", 30, theme.INK, bold=True), (24, 12))
        pace = "paused" if self.pacer.paused else f"{self.pacer.speed:g}x"
        surf.blit(theme.fit(f"tick {self.reef.tick} {pace} · {len(self.spec.tanks)} tanks · exchange every "
                            f"{self.spec.interval} ticks · {moves} crossings · "
                            f"{self.reef.in_transit()} in a corridor now · "
                            f"{what} · H: what you see", 18, r["header"].w - 48, theme.DIM), (24, 46))
        if self.opened is None:
            self._draw_map(surf, r["map"])
        else:
            self._draw_tank(surf, r["map"], self.opened, big=True)

    def _draw_map(self, surf: pygame.Surface, area: pygame.Rect) -> None:
        self.tiles = self._tile_rects(area)
        for i, tile in enumerate(self.tiles):
            self._draw_tank(surf, tile, i)
        for c, cor in enumerate(self.spec.corridors):  # corridors over the tiles, with their travellers
            a, b = self.spec.index(cor.a), self.spec.index(cor.b)
            pa, pb = self._opening_px(a, c), self._opening_px(b, c)
            pygame.draw.line(surf, theme.ACCENT, pa, pb, 3)
            now = self.reef.tick
            for e in self.reef.log:
                if e["corridor"] == c and e["leave"] < now <= e["arrive"]:
                    f = (now - e["leave"]) / max(1, e["arrive"] - e["leave"])
                    start, end = (pa, pb) if e["from"] == cor.a else (pb, pa)
                    pos = (int(start[0] + f * (end[0] - start[0])), int(start[1] + f * (end[1] - start[1])))
                    pygame.draw.circle(surf, theme.INK, pos, 5)

    def _opening_px(self, tank: int, corridor: int) -> tuple[int, int]:
        x, y = self.reef.doors[tank][corridor]
        rend = self.renderers[tank]
        px, py = rend.to_px(x, y)
        return int(px), int(py)

    def _draw_tank(self, surf: pygame.Surface, rect: pygame.Rect, i: int, big: bool = False) -> None:
        name = self.spec.tanks[i].name
        fig = self.reef.figures.get(i, {})
        pygame.draw.rect(surf, theme.CARD, rect, border_radius=8)
        label = (f"{name}: {fig.get('population', 0)} fish · schooling {fig.get('schooling', 0.0):.0%}"
                 f" · in {sum(1 for e in self.reef.log if e['to'] == name and e['arrive'] <= self.reef.tick)}"
                 f" / out {sum(1 for e in self.reef.log if e['from'] == name and e['leave'] <= self.reef.tick)}")
        surf.blit(theme.fit(label, 20 if big else 16, rect.w - 16, theme.INK), (rect.x + 8, rect.y + 6))
        water = pygame.Rect(rect.x + 6, rect.y + 30, rect.w - 12, rect.h - 36)
        rend = self.renderers[i]
        rend.layout(water)
        rend.draw(surf, self.host.view(i).view(), None, 1.0, None, False, None, 4, None)

    def snapshot(self) -> Any:
        return {"tick": self.reef.tick, "migrations": self.reef.migrations()}

    def reset(self, seed: int) -> None:
        pass

    def close(self) -> None:
        self.reef.close()
