"""The replay timeline: the bar, its ticks, and the marks of the decisions that mattered."""

from __future__ import annotations

import itertools

import numpy as np
import pygame

from ..session.influence_marks import InfluenceMarks, Mark, number
from . import theme

MARK_COLOUR = theme.ACCENT  # a pivotal decision's mark on the timeline (amber)
MARK_FAINT = theme.DIM  # the outline of a non-pivotal decision's mark
MARK_ROW = 14  # the marks' row above the bar (the bar moves down by it when there are marks)
MARK_W = 12  # a mark's width; marks closer than this are set apart (a thin line shows each one's tick)


class Timeline:
    """Replay scrubber: drag to seek; markers for alerts (red) and forks (amber); under it, a
    fork's divergence curve. With an influence study (``influence``: its marks,
    session/influence_marks.py) a row above the bar marks its decisions — pivotal ones amber,
    the next of its ranking faintly; the mouse over one shows what it was (:meth:`draw_tip`)."""

    height = 64

    def __init__(self, first: int, last: int, markers: list[tuple[int, str]] | None = None,
                 influence: InfluenceMarks | None = None):
        self.first, self.last = first, last
        self.markers = markers or []
        self.influence = influence if influence is not None and influence.marks else None
        self.rect = pygame.Rect(0, 0, 0, 0)
        self.dragging = False
        self.seek_to = first  # the tick the last event it took asks for
        self.pointer: tuple[int, int] | None = None  # where the mouse is (the window's motion events)
        self.drawn_marks: list[tuple[pygame.Rect, Mark]] = []  # each mark drawn last frame: its box, its decision
        self.hovered: Mark | None = None  # the mark under the mouse last frame

    def tick_at(self, x: int) -> int:
        bar = self.bar
        f = min(1.0, max(0.0, (x - bar.x) / max(1, bar.w)))
        return int(round(self.first + f * (self.last - self.first)))

    @property
    def bar(self) -> pygame.Rect:
        return pygame.Rect(self.rect.x + 70, self.rect.y + 12 + (MARK_ROW if self.influence else 0),
                           self.rect.w - 140, 10)

    def x_of(self, tick: int) -> int:
        bar = self.bar
        if self.last <= self.first:  # nothing kept before now yet: the handle sits at now
            return bar.right
        return int(bar.x + (tick - self.first) / (self.last - self.first) * bar.w)

    def track(self, event) -> None:
        """Follow the mouse (every motion event of the window, whoever takes it) for the marks' hover."""
        if event.type == pygame.MOUSEMOTION:
            self.pointer = tuple(event.pos)
        elif event.type == getattr(pygame, "WINDOWLEAVE", -1):
            self.pointer = None

    def mark_at(self, pos: tuple[int, int]) -> Mark | None:
        """The influence mark drawn at ``pos`` last frame (None: none there)."""
        for box, mark in reversed(self.drawn_marks):  # the last drawn lies on top
            if box.collidepoint(pos):
                return mark
        return None

    def handle(self, event) -> bool:
        """Whether the event is the timeline's (a press on the bar, a drag, its release): then
        :attr:`seek_to` is the tick it asks for."""
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.bar.inflate(20, 18).collidepoint(
                event.pos):  # the handle at either end sticks out of the bar: it counts
            self.dragging = True
        elif event.type == pygame.MOUSEMOTION and self.dragging:
            pass
        elif event.type == pygame.MOUSEBUTTONUP and event.button == 1 and self.dragging:
            self.dragging = False
        else:
            return False
        self.seek_to = self.tick_at(event.pos[0])
        return True

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, tick: int, divergence=None) -> None:
        self.rect = rect
        pygame.draw.rect(surf, theme.PANEL, rect)
        pygame.draw.line(surf, theme.PANEL_EDGE, rect.topleft, rect.topright)
        bar = self.bar
        surf.blit(theme.text(f"t{self.first}", 17, theme.DIM), (rect.x + 12, bar.y - 3))
        surf.blit(theme.text(f"t{self.last}", 17, theme.DIM), (bar.right + 10, bar.y - 3))
        pygame.draw.rect(surf, theme.FAINT, bar, border_radius=5)
        done = pygame.Rect(bar.x, bar.y, self.x_of(tick) - bar.x, bar.h)
        pygame.draw.rect(surf, theme.PROGRESS, done, border_radius=5)
        for t, kind in self.markers:
            mx = self.x_of(t)
            colour = theme.BAD if kind == "alert" else theme.ACCENT
            pygame.draw.line(surf, colour, (mx, bar.y - 8), (mx, bar.bottom + 8), 3 if kind == "fork" else 2)
            if kind == "fork":
                label = theme.text(f"fork t{t}", 15, theme.ACCENT)
                surf.blit(label, (min(mx + 4, bar.right - label.get_width()), bar.bottom + 4))
        self._draw_marks(surf)
        hx = self.x_of(tick)
        pygame.draw.circle(surf, theme.INK, (hx, bar.centery), 8)
        if divergence is not None and len(divergence):
            d = np.asarray(divergence, np.float64)
            area = pygame.Rect(bar.x, bar.bottom + 22, bar.w, rect.bottom - bar.bottom - 30)
            if area.h < 12:
                return
            ticks, cells = d[:, 0], d[:, 1]
            top = max(1.0, float(cells.max()))
            pygame.draw.line(surf, theme.FAINT, area.bottomleft, area.bottomright)  # axes
            pygame.draw.line(surf, theme.FAINT, area.topleft, area.bottomleft)
            surf.blit(theme.text(f"{top:.0f}", 14, theme.DIM), (area.x - 30, area.y - 6))
            surf.blit(theme.text("0", 14, theme.DIM), (area.x - 14, area.bottom - 8))
            xs = bar.x + (ticks - self.first) / max(1, self.last - self.first) * bar.w
            ys = area.bottom - cells / top * area.h
            if len(xs) > 1:
                pygame.draw.lines(surf, theme.BAD, False, list(zip(xs.tolist(), ys.tolist())), 2)
            surf.blit(theme.fit(f"fish in another cell than in the original (now {int(cells[-1])})", 15,
                                area.w - 8, theme.BAD), (area.x + 6, area.y))

    def _placed(self, influence: InfluenceMarks) -> list[tuple[int, Mark]]:
        """Where each mark goes in the row (x, mark): the pivotal ones at their ticks, set apart
        where they would overlap; the faint ones only where there is room left."""
        bar = self.bar
        pivotal = sorted((m for m in influence.marks if m.pivotal), key=lambda m: (m.tick, m.rank))
        step = min(MARK_W + 2, bar.w / max(1, len(pivotal)))
        xs: list[float] = []
        for m in pivotal:  # left to right, each at least a step after the one before …
            x = float(self.x_of(m.tick))
            xs.append(max(x, xs[-1] + step) if xs else x)
        limit = bar.right + MARK_W / 2
        for k in range(len(xs) - 1, -1, -1):  # … and none past the bar's end
            xs[k] = min(xs[k], limit)
            limit = xs[k] - step
        placed = [(int(round(x)), m) for x, m in zip(xs, pivotal)]
        for m in (m for m in influence.marks if not m.pivotal):
            x = self.x_of(m.tick)
            if all(abs(x - px) >= MARK_W + 2 for px, _ in placed):
                placed.append((x, m))
        return placed

    def _draw_marks(self, surf: pygame.Surface) -> None:
        """The influence study's row of marks above the bar, and which one the mouse is over."""
        self.drawn_marks, self.hovered = [], None
        influence = self.influence
        if influence is None:
            return
        bar = self.bar
        top, tip = self.rect.y + 5, bar.y - 3  # a mark: a triangle pointing down at its tick
        placed = sorted(self._placed(influence), key=lambda pm: pm[1].pivotal)  # the pivotal ones drawn last, on top
        for x, m in placed:
            box = pygame.Rect(x - MARK_W // 2 - 2, top - 2, MARK_W + 4, tip - top + 6)
            self.drawn_marks.append((box, m))
        if self.pointer is not None:
            self.hovered = self.mark_at(self.pointer)
        for x, m in placed:
            at = self.x_of(m.tick)
            hot = m is self.hovered
            half = MARK_W // 2 if m.pivotal or hot else MARK_W // 2 - 2
            y0 = top if m.pivotal or hot else top + 3
            points = [(x - half, y0), (x + half, y0), (x, tip)]
            colour = MARK_COLOUR if m.pivotal else MARK_FAINT
            if x != at:  # set apart from its tick: a thin line to it
                pygame.draw.line(surf, colour, (x, tip), (at, bar.y - 1), 1)
            else:
                pygame.draw.line(surf, colour, (x, tip), (x, bar.y - 1), 1)
            if m.pivotal:
                pygame.draw.polygon(surf, MARK_COLOUR, points)
                pygame.draw.polygon(surf, theme.INK if hot else theme.ACCENT_DARK, points, 2 if hot else 1)
            else:
                pygame.draw.polygon(surf, theme.INK if hot else MARK_FAINT, points, 1)
        self._draw_legend(surf, influence, sorted(x for x, _ in placed))

    def _draw_legend(self, surf: pygame.Surface, influence: InfluenceMarks, xs: list[int]) -> None:
        """What the marks are, in the widest stretch of the row without one (if there is room)."""
        bar = self.bar
        n = len(influence.pivotal)
        what = (f"{n} of {influence.tested} decisions pivotal (amber)" if n else
                f"none of {influence.tested} decisions pivotal; the strongest faint")
        text = f"influence on {influence.outcome}: {what} · hover a mark · a click forks its strongest alternative"
        edges = [bar.x - MARK_W, *xs, bar.right + MARK_W]
        gaps = [(b - a - 2 * MARK_W, a + MARK_W) for a, b in itertools.pairwise(edges)]
        room, x = max(gaps)
        if room < 140:
            return
        label = theme.fit(text, 15, room, theme.DIM)
        surf.blit(label, (x, self.rect.y + 4))

    def tip_lines(self, mark: Mark) -> list[tuple[str, tuple]]:
        """What the tooltip says about ``mark``: the decision, its effect and interval, the verdict,
        the strongest alternative; then the outcome and what a click does."""
        verdict = "pivotal" if mark.pivotal else "not pivotal (inside the null band)"
        head = (f"t{mark.tick} fish {mark.fish}: {mark.recorded} — effect {number(mark.effect)} "
                f"[{number(mark.low)}, {number(mark.high)}], {verdict}")
        if mark.alternative:
            head += f"; strongest alternative: {mark.alternative}"
        influence = self.influence
        if influence is None:
            return [(head, theme.INK)]
        recorded = f": {number(influence.outcome_recorded)} as recorded" if influence.outcome_recorded is not None \
            else ""
        if recorded and mark.alternative and mark.alternative_outcome is not None:
            recorded += f", {number(mark.alternative_outcome)} with {mark.alternative}"
        band = f"; null band [{number(mark.band[0])}, {number(mark.band[1])}]" if mark.band else ""
        more = f"outcome {influence.outcome}{recorded}{band}; rank {mark.rank} of {influence.tested}"
        click = (f"click: go to t{mark.tick}, follow fish {mark.fish} and fork it with {mark.alternative}"
                 if mark.alternative else f"click: go to t{mark.tick} and follow fish {mark.fish}")
        return [(head, MARK_COLOUR if mark.pivotal else theme.INK), (more, theme.DIM), (click, theme.DIM)]

    def draw_tip(self, surf: pygame.Surface) -> pygame.Rect | None:
        """The hovered mark's tooltip over whatever lies above the timeline, inside the window at
        every size (drawn last); returns its box (None: no mark under the mouse)."""
        mark = self.hovered
        if mark is None:
            return None
        area = surf.get_rect()
        width = min(620, area.w - 16)
        lines = [(part, colour) for text, colour in self.tip_lines(mark) for part in theme.wrap(text, width - 20, 16)]
        box = pygame.Rect(0, 0, width, 10 + 18 * len(lines))
        at = next((b for b, m in self.drawn_marks if m is mark), self.rect)
        box.midbottom = (at.centerx, at.top - 4)
        if box.top < area.top:  # no room above the mark: under it
            box.top = at.bottom + 4
        box = box.clamp(area)
        theme.overlay(surf, box, edge=MARK_COLOUR if mark.pivotal else theme.PANEL_EDGE, alpha=245)
        for k, (line, colour) in enumerate(lines):
            surf.blit(theme.fit(line, 16, box.w - 20, colour), (box.x + 10, box.y + 5 + 18 * k))
        return box
