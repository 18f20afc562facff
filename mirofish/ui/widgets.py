"""Small hand-drawn widgets for the window: buttons and sliders.

Why not pygame_gui: it needs pygame-ce, which replaces pygame under the same import name —
a swap for every user of the package — and its theme files and UIManager would own the
event loop the scenes already share. Two widget kinds, drawn with the same theme and fonts
as the rest of the window, are less code than adapting to it. Every control also has a key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pygame

from . import theme


@dataclass
class Button:
    """A labelled button; ``action`` runs on a click. ``active``: drawn highlighted (a toggle that is on)."""

    label: str
    action: Callable[[], None]
    key_hint: str = ""
    rect: pygame.Rect = field(default_factory=lambda: pygame.Rect(0, 0, 0, 0))
    active: bool = False
    enabled: bool = True

    def width(self, size: int = 17) -> int:
        return theme.font(size).size(self.label)[0] + 22

    def handle(self, event) -> bool:
        if (event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.enabled
                and self.rect.collidepoint(event.pos)):
            self.action()
            return True
        return False

    def draw(self, surf: pygame.Surface, hover: bool = False) -> None:
        fill = theme.ACCENT_DARK if self.active else (theme.BUTTON_HOVER if hover else theme.BUTTON)
        pygame.draw.rect(surf, fill, self.rect, border_radius=6)
        pygame.draw.rect(surf, theme.PANEL_EDGE, self.rect, 1, border_radius=6)
        label = theme.fit(self.label, 17, self.rect.w - 8, theme.INK if self.enabled else theme.FAINT)
        surf.blit(label, label.get_rect(center=self.rect.center))


@dataclass
class Slider:
    """A horizontal slider over ``[lo, hi]`` with a label and the value shown; ``on_change``
    gets the new value when the user lets go (or clicks)."""

    label: str
    lo: float
    hi: float
    value: float
    on_change: Callable[[float], None]
    fmt: str = "{:.2f}"
    step: float | None = None
    key: str = ""  # the setting it shows (its value follows the tank shown)
    rect: pygame.Rect = field(default_factory=lambda: pygame.Rect(0, 0, 0, 0))
    dragging: bool = False

    @property
    def track(self) -> pygame.Rect:
        return pygame.Rect(self.rect.x, self.rect.y + 20, self.rect.w, 8)

    def _value_at(self, x: int) -> float:
        t = self.track
        f = min(1.0, max(0.0, (x - t.x) / max(1, t.w)))
        v = self.lo + f * (self.hi - self.lo)
        if self.step:
            v = round(v / self.step) * self.step
        return min(self.hi, max(self.lo, v))

    def handle(self, event) -> bool:
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.track.inflate(0, 16).collidepoint(
                event.pos):
            self.dragging = True
            self.value = self._value_at(event.pos[0])
            return True
        if event.type == pygame.MOUSEMOTION and self.dragging:
            self.value = self._value_at(event.pos[0])
            return True
        if event.type == pygame.MOUSEBUTTONUP and event.button == 1 and self.dragging:
            self.dragging = False
            self.value = self._value_at(event.pos[0])
            self.on_change(self.value)
            return True
        return False

    def draw(self, surf: pygame.Surface) -> None:
        head = theme.fit(f"{self.label}: {self.fmt.format(self.value)}", 16, self.rect.w, theme.DIM)
        surf.blit(head, (self.rect.x, self.rect.y))
        t = self.track
        pygame.draw.rect(surf, theme.FAINT, t, border_radius=4)
        # a value beyond the range (a tank made with --fish 10000) fills the track, never past it
        f = min(1.0, max(0.0, (self.value - self.lo) / max(1e-12, self.hi - self.lo)))
        pygame.draw.rect(surf, theme.ACCENT, (t.x, t.y, int(t.w * f), t.h), border_radius=4)
        pygame.draw.circle(surf, theme.INK, (t.x + int(t.w * f), t.centery), 7)


def lay_out_row(buttons: list[Button], rect: pygame.Rect, gap: int = 6, height: int = 28) -> list[Button]:
    """Place buttons left to right in ``rect`` (vertically centred); those that do not fit are
    hidden (zero-size rect) and returned, so the caller can show "…" for them."""
    x, hidden = rect.x, []
    y = rect.y + (rect.h - height) // 2
    for b in buttons:
        w = b.width()
        if x + w > rect.right:
            b.rect = pygame.Rect(0, 0, 0, 0)
            hidden.append(b)
            continue
        b.rect = pygame.Rect(x, y, w, height)
        x += w + gap
    return hidden
