"""Colours, fonts and a text cache for the window (calm deep-blue water)."""

from __future__ import annotations

import colorsys
from functools import lru_cache

import pygame

WATER_TOP = (14, 44, 78)
WATER_BOTTOM = (6, 22, 44)
GRID = (255, 255, 255, 9)  # the water's cell lines
GLASS = (120, 160, 190)
GLASS_EDGE = (170, 205, 225)
PLANT = (38, 120, 74)
PLANT_DARK = (24, 84, 52)
GRAZED = (150, 118, 60)  # a plant with bites eaten (a grazing tank), over the plant by the share gone
ROCK = (92, 96, 104)
ROCK_DARK = (60, 64, 72)
PANEL = (10, 20, 36)
PANEL_EDGE = (40, 64, 96)
CARD = (16, 32, 56)  # a box on a panel: the scenes' cards, charts and tables, the "why?" answer
BUTTON = (22, 40, 66)
BUTTON_HOVER = (34, 58, 92)  # a button or menu row under the mouse
ALARM = (90, 20, 24)  # the footer's banner when a replay leaves its recording
GRIDLINE = (30, 52, 84)  # a chart's value lines
INK = (226, 236, 245)
DIM = (134, 156, 182)
FAINT = (84, 104, 130)
ACCENT = (255, 196, 80)
ACCENT_DARK = (120, 86, 24)
PROGRESS = (90, 150, 220)  # the replay bar's played part (fork marks are ACCENT); the second of two series
GOOD = (110, 210, 140)
WARN = (245, 190, 80)
BAD = (240, 100, 90)
SELECT = (255, 240, 150)
GHOST = (230, 240, 255)
FOV = (255, 240, 150, 28)  # the followed fish's field of view
FISH_EDGE = (8, 14, 26)  # a fish sprite's outline
FISH_EYE = (10, 14, 22)
STARVED = (110, 110, 118)  # a fish with no energy left
HEAT = (240, 80, 60)  # the stuck heat map (alpha by count)
SHADE = (0, 0, 0, 210)  # under the ASCII view
TIP = (6, 14, 26, 235)  # a chart's hover box
OBJECTS = {"red": (232, 88, 80), "blue": (84, 140, 240), "green": (96, 200, 120), "yellow": (240, 210, 90)}
OBJECT_OTHER = (200, 200, 210)  # the referential game's objects: their colours, and any other


def fish_colour(traits) -> tuple[int, int, int]:
    """Personality as colour: hue from sociability (loners cool cyan-blue … sociable hot
    orange, through violet and pink), saturation from curiosity, brightness from calm
    (restless fish are brighter). Food is pale yellow-green, a hue no fish gets."""
    soc, cur, _cau, _app, calm = (float(v) / 100 for v in traits)
    hue = (0.52 + 0.55 * soc) % 1.0
    sat = 0.55 + 0.4 * cur
    val = 1.0 - 0.25 * calm
    r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
    return int(r * 255), int(g * 255), int(b * 255)


def food_colour(age: int, rot_ticks: int) -> tuple[int, int, int]:
    """Fresh food is bright yellow-green, going dull brown as it nears rotting."""
    f = min(1.0, max(0.0, age / max(1, rot_ticks)))
    fresh, stale = (214, 250, 120), (120, 98, 60)
    r, g, b = (int(a + (b - a) * f) for a, b in zip(fresh, stale))
    return r, g, b


def health_colour(value: float, good: tuple[float, float] | None, bad_below: float | None = None,
                  bad_above: float | None = None) -> tuple[int, int, int]:
    """Green inside the healthy range, amber near it, red past the alarm line."""
    if (bad_below is not None and value < bad_below) or (bad_above is not None and value > bad_above):
        return BAD
    if good is None:
        return INK
    lo, hi = good
    return GOOD if lo <= value <= hi else WARN


@lru_cache(maxsize=64)
def font(size: int, bold: bool = False) -> pygame.font.Font:
    f = pygame.font.Font(None, size)
    f.set_bold(bold)
    return f


@lru_cache(maxsize=8)
def mono(size: int) -> pygame.font.Font:
    return pygame.font.SysFont("monospace", size)


_TEXT: dict = {}


def text(s: str, size: int = 20, colour=INK, bold: bool = False) -> pygame.Surface:
    """A rendered line of text, cached (rendering text is the slowest thing pygame does)."""
    key = (s, size, colour, bold)
    surf = _TEXT.get(key)
    if surf is None:
        if len(_TEXT) > 4000:
            _TEXT.clear()
        surf = _TEXT[key] = font(size, bold).render(s, True, colour)
    return surf


def reset() -> None:
    """Forget fonts and rendered text (they die with pygame.quit())."""
    global SCALE
    font.cache_clear()
    mono.cache_clear()
    _TEXT.clear()
    SCALE = 1.0


def wrap(s: str, width_px: int, size: int = 18) -> list[str]:
    """Greedy word wrap to a pixel width."""
    f = font(size)
    lines, line = [], ""
    for word in s.split():
        trial = f"{line} {word}".strip()
        if f.size(trial)[0] <= width_px or not line:
            line = trial
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


def fit(s: str, size: int, width: int, colour=INK, bold: bool = False, min_size: int = 13) -> pygame.Surface:
    """``s`` rendered to fit ``width`` pixels: at ``size`` if it fits, else smaller (down to
    ``min_size``), else cut with a visible "…" — text never leaves its box."""
    if width <= 0:
        return text("", size, colour, bold)
    for sz in range(size, min_size - 1, -1):
        if font(sz, bold).size(s)[0] <= width:
            return text(s, sz, colour, bold)
    f = font(min_size, bold)
    lo, hi = 0, len(s)
    while lo < hi:  # the longest prefix that fits with the ellipsis
        mid = (lo + hi + 1) // 2
        if f.size(s[:mid].rstrip() + "…")[0] <= width:
            lo = mid
        else:
            hi = mid - 1
    return text(s[:lo].rstrip() + "…", min_size, colour, bold)


def overlay(surf: pygame.Surface, rect: pygame.Rect, edge=None, alpha: int = 240) -> None:
    """A dark translucent box with a thin edge (pickers, help)."""
    layer = pygame.Surface(rect.size, pygame.SRCALPHA)
    layer.fill((8, 16, 30, alpha))
    surf.blit(layer, rect)
    pygame.draw.rect(surf, edge or PANEL_EDGE, rect, 1)


# The window draws at a logical size of at most 1920×1080 and is scaled up on larger screens
# (fonts and layout grow with it); ``SCALE`` is that factor (1 up to 1920×1080).
SCALE = 1.0


def mouse_pos() -> tuple[int, int]:
    """The mouse in the logical coordinates the scenes draw in."""
    x, y = pygame.mouse.get_pos()
    return int(x / SCALE), int(y / SCALE)
