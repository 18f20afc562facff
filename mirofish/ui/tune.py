"""The tune panel (no fish followed): how to follow one, sliders for the running tank — each
a ``tune`` intervention from the next tick, showing the setting of the tick on screen — and
two that apply at the next reset; then the legends."""

from __future__ import annotations

from collections.abc import Callable

import pygame

from . import theme
from .panels import draw_legends
from .widgets import Slider


def tune_sliders(cfg, tune: Callable[[str, float], None], at_reset: Callable[[str, float, str], None]) -> list[Slider]:
    """The sliders, from ``cfg``'s values: live settings call ``tune(key, value)``; the fish
    count and the personality mix call ``at_reset(key, value, what)``."""
    def live(key: str):
        return lambda value: tune(key, value)

    def later(key: str, what: str):
        return lambda value: at_reset(key, value, what)

    return [
        Slider("food per open cell per tick", 0.0, 0.003, cfg.food.spawn_rate, live("food.spawn_rate"), "{:.4f}",
               key="food.spawn_rate"),
        Slider("school: alignment", 0.0, 15.0, cfg.steering.alignment, live("steering.alignment"), "{:.1f}",
               key="steering.alignment"),
        Slider("school: cohesion", 0.0, 15.0, cfg.steering.cohesion, live("steering.cohesion"), "{:.1f}",
               key="steering.cohesion"),
        Slider("separation", 0.0, 10.0, cfg.steering.separation, live("steering.separation"), "{:.1f}",
               key="steering.separation"),
        Slider("fish at reset", 10, 240, cfg.fish.count, later("count", "fish:"), "{:.0f}", step=1),
        Slider("mix at reset: loners … sociable", -50, 50, cfg.fish.sociability_shift,
               later("sociability_shift", "sociability shift"), "{:+.0f}", step=1),
    ]


def draw_tune_panel(surf: pygame.Surface, rect: pygame.Rect, sliders: list[Slider], now, show_heat: bool,
                    hints: bool = True, groups: list[tuple[tuple[int, int, int], str, str]] | None = None,
                    above: int | None = None) -> None:
    """Draw the panel; ``now``: the settings of the tick shown (the sliders follow them);
    ``hints``: the keys' hints at the top (a clip leaves them out); ``above``: where the panel's
    own content must end (the minimap's top), the legend's lines that do not fit left out."""
    pygame.draw.rect(surf, theme.PANEL, rect)
    pygame.draw.line(surf, theme.PANEL_EDGE, rect.topleft, rect.bottomleft)
    x, y, w = rect.x + 16, rect.y + 12, rect.w - 32
    for line in ("Click a fish to follow it (Tab: next).", "H: all keys.") if hints else ():
        surf.blit(theme.fit(line, 19, w, theme.DIM), (x, y))
        y += 22
    y += 8
    if sliders:
        surf.blit(theme.fit("Tune the tank", 22, w, theme.INK, bold=True), (x, y))
        y += 26
        for sl in sliders:
            if sl.key and not sl.dragging and now is not None:
                section, name = sl.key.split(".")
                sl.value = float(getattr(getattr(now, section), name))
            sl.rect = pygame.Rect(x, y, w, 34)
            if sl.rect.bottom < rect.bottom - 150:
                sl.draw(surf)
            else:
                sl.rect = pygame.Rect(0, 0, 0, 0)
            y += 40
    y += 6
    bottom = rect.bottom if above is None else min(rect.bottom, above)
    draw_legends(surf, pygame.Rect(x, y, w, max(0, bottom - y - 8)), show_heat, groups)
