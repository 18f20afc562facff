"""The charts view (key C): the metrics over time on labelled axes.

Live, the series are what this window has seen of the tank up to the tick shown (sampled
every ``metrics.sample_every`` ticks; going back into the past drops the later points, and
back at now the live tank's series return); in replay, the whole recording's curves with a
cursor at the current tick.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pygame

from ..observe.metrics import ranked
from . import theme

# (title, key, format, colour, fixed y range or None) of each metric the metric table
# (observe/metrics.py) ranks for the charts, in that order; the territory measures (with
# remembered places, fish.places) only when they have points
Chart = tuple[str, str, str, tuple[int, int, int], "tuple[float, float] | None"]
_ALL: list[Chart] = [(m.chart_title, m.key, m.chart_fmt or m.fmt, getattr(theme, m.chart_colour), m.chart_range)
                     for m in ranked("chart")]
_TERRITORY = {m.key for m in ranked("chart") if m.group == "territory"}
_POPULATION = {m.key for m in ranked("chart") if m.group == "population"}  # a tank with species (docs/species.md)
CHARTS = [c for c in _ALL if c[1] not in _TERRITORY | _POPULATION]
TERRITORY_CHARTS = [c for c in _ALL if c[1] in _TERRITORY]
POPULATION_CHARTS = [c for c in _ALL if c[1] in _POPULATION]
MAX_POINTS = 20_000
# the charts a mixed tank ([[fish.groups]]) splits: a thin line per group in its colour over the
# tank's line (the schooling degree by the metrics' own test over the group's fish, the mean energy)
GROUP_SPLIT = ("schooling_degree", "mean_energy", "fish_in_water")


def group_key(group: str, key: str) -> str:
    """The series key of one group's line of the chart ``key``."""
    return f"groups.{group}.{key}"


class Series:
    """Per-key (tick, value) points, thinned to every second point when they grow too many."""

    def __init__(self) -> None:
        self.points: dict[str, list[tuple[int, float]]] = {key: [] for _, key, *_ in
                                                           CHARTS + TERRITORY_CHARTS + POPULATION_CHARTS}

    def cut(self, tick: int) -> None:
        """Forget the points after ``tick`` (the window went back to it)."""
        for pts in self.points.values():
            while pts and pts[-1][0] > tick:
                pts.pop()

    def add(self, tick: int, values: dict) -> None:
        """A sample at ``tick``; one at or before the last point's tick means time went back:
        the points from that tick on belong to a past that was replaced, and go."""
        self.cut(tick - 1)
        for key in values:
            if key.startswith("groups.") and key not in self.points:  # a mixed tank's group lines
                self.points[key] = []
        for key, pts in self.points.items():
            v = values.get(key)
            if isinstance(v, dict):
                v = v.get("current")
            if v is None:
                continue
            pts.append((tick, float(v)))
            if len(pts) > MAX_POINTS:
                del pts[::2]


Line = tuple[str, np.ndarray, np.ndarray, tuple[int, int, int]]  # (label, ticks, values, colour)


def _at(xs: np.ndarray, cursor: int | None) -> int:
    """The index of the newest sample (at or before the cursor in replay)."""
    return len(xs) - 1 if cursor is None else int(np.searchsorted(xs, cursor, side="right")) - 1


def draw_axes_chart(surf: pygame.Surface, rect: pygame.Rect, xs: np.ndarray, ys: np.ndarray, title: str,
                    colour, fmt: str = "{:.2f}", y_range: tuple[float, float] | None = None,
                    cursor: int | None = None, x_range: tuple[int, int] | None = None,
                    lines: Sequence[Line] = ()) -> None:
    """A line chart with a title, the current value, and labelled x (tick) and y axes; ``lines``:
    more series drawn thin over it in their colours (a mixed tank's groups), with a legend of
    their values under the title."""
    pygame.draw.rect(surf, theme.CARD, rect, border_radius=6)
    at = _at(xs, cursor)
    # the value of the newest sample (at the cursor in replay), with its tick: samples are taken every
    # metrics.sample_every ticks, so it can differ from the HUD's value of the tick shown
    now = f" at t{int(xs[at])}: {fmt.format(ys[at])}" if len(ys) and at >= 0 else ": –"
    surf.blit(theme.fit(f"{title}{now}", 17, rect.w - 16, theme.INK), (rect.x + 8, rect.y + 6))
    top = 28
    if lines:  # the legend: each group's value at the same sample, in its colour
        lx = rect.x + 8
        for name, lxs, lys, lcol in lines:
            k = _at(lxs, cursor)
            text = theme.text(f"{name} {fmt.format(lys[k]) if len(lys) and k >= 0 else '–'}", 13, lcol)
            if lx + text.get_width() > rect.right - 8:
                break
            surf.blit(text, (lx, rect.y + 26))
            lx += text.get_width() + 12
        top = 44
    plot = pygame.Rect(rect.x + 46, rect.y + top, rect.w - 58, rect.h - top - 22)
    if plot.w < 20 or plot.h < 12:
        return
    pygame.draw.line(surf, theme.FAINT, plot.bottomleft, plot.bottomright)
    pygame.draw.line(surf, theme.FAINT, plot.topleft, plot.bottomleft)
    if len(xs) == 0:
        surf.blit(theme.text("no data yet", 15, theme.DIM), (plot.x + 8, plot.centery - 8))
        return
    every = np.concatenate([ys, *(ly for _, _, ly, _ in lines)])
    lo, hi = y_range if y_range is not None else (float(min(0.0, every.min())), float(every.max()))
    if y_range is not None and float(every.max()) > hi:  # a fixed range grows to what it must show (a
        hi = float(every.max())  # hexagonal tank's action entropy reaches ln 8 = 2.08, above the usual 1.8)
    if hi <= lo:
        hi = lo + 1.0
    x0, x1 = x_range if x_range is not None else (int(xs[0]), int(xs[-1]))
    if x1 <= x0:
        x1 = x0 + 1
    for frac in (0.0, 0.5, 1.0):  # y ticks
        y = plot.bottom - frac * plot.h
        pygame.draw.line(surf, theme.GRIDLINE, (plot.x, y), (plot.right, y))
        label = theme.text(fmt.format(lo + frac * (hi - lo)), 13, theme.DIM)
        surf.blit(label, (plot.x - label.get_width() - 4, y - 7))
    for frac in (0.0, 0.5, 1.0):  # x ticks (ticks of the simulation)
        x = plot.x + frac * plot.w
        label = theme.text(f"t{int(x0 + frac * (x1 - x0))}", 13, theme.DIM)
        surf.blit(label, (min(max(plot.x, x - label.get_width() / 2), plot.right - label.get_width()),
                          plot.bottom + 3))
    for lxs, lys, lcol, width in [(xs, ys, colour, 2), *((lx_, ly_, lc, 1) for _, lx_, ly_, lc in lines)]:
        px = plot.x + (lxs - x0) / (x1 - x0) * plot.w
        py = plot.bottom - (np.clip(lys, lo, hi) - lo) / (hi - lo) * plot.h
        if len(px) > plot.w * 2:  # one point per half pixel is plenty
            keep = np.linspace(0, len(px) - 1, plot.w * 2).astype(int)
            px, py = px[keep], py[keep]
        if len(px) > 1:
            pygame.draw.lines(surf, lcol, False, list(zip(px.tolist(), py.tolist())), width)
    if cursor is not None:
        cx = plot.x + (cursor - x0) / (x1 - x0) * plot.w
        pygame.draw.line(surf, theme.INK, (cx, plot.y), (cx, plot.bottom), 1)


def draw_charts(surf: pygame.Surface, rect: pygame.Rect, data: dict[str, tuple[np.ndarray, np.ndarray]],
                cursor: int | None = None, x_range: tuple[int, int] | None = None,
                groups: Sequence[tuple[str, tuple[int, int, int]]] = ()) -> list[pygame.Rect]:
    """The chart grid over ``rect`` (2 or 3 columns by width); returns each chart's rect.
    ``groups``: a mixed tank's groups (name, colour), whose lines of the :data:`GROUP_SPLIT`
    charts ``data`` holds under :func:`group_key`."""
    layer = pygame.Surface(rect.size, pygame.SRCALPHA)
    layer.fill(theme.TIP)
    surf.blit(layer, rect)
    charts = CHARTS + (TERRITORY_CHARTS if len(data.get("site_fidelity", ((), ()))[0]) else []) \
        + (POPULATION_CHARTS if len(data.get("fish_in_water", ((), ()))[0]) else [])
    cols = 3 if rect.w >= 1200 or len(charts) > 6 else 2
    rows = -(-len(charts) // cols)
    gap = 10
    cw, ch = (rect.w - gap * (cols + 1)) // cols, (rect.h - 30 - gap * (rows + 1)) // rows
    surf.blit(theme.fit("Charts (C closes)", 18, rect.w - 20, theme.DIM), (rect.x + 10, rect.y + 6))
    out = []
    for k, (title, key, fmt, colour, y_range) in enumerate(charts):
        r = pygame.Rect(rect.x + gap + (k % cols) * (cw + gap), rect.y + 30 + gap + (k // cols) * (ch + gap), cw, ch)
        xs, ys = data.get(key, (np.zeros(0), np.zeros(0)))
        lines = [(name, *data[group_key(name, key)], col) for name, col in groups
                 if key in GROUP_SPLIT and group_key(name, key) in data]
        draw_axes_chart(surf, r, xs, ys, title, colour, fmt, y_range, cursor, x_range, lines)
        out.append(r)
    return out
