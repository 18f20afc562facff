"""The controls bar under the HUD: a row of buttons (each also has a key), and a "More…"
menu listing those that do not fit the window's width."""

from __future__ import annotations

from typing import Any

import pygame

from . import theme
from .widgets import Button, lay_out_row


class ControlsBar:
    def __init__(self) -> None:
        self.buttons: list[Button] = []  # drawn last frame (the More… button last, when shown)
        self.hidden: list[Button] = []  # those that did not fit: in the menu
        self.menu_open = False

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, buttons: list[Button]) -> None:
        pygame.draw.rect(surf, theme.PANEL, rect)
        self.buttons = buttons
        more = Button("More\u2026", lambda: setattr(self, "menu_open", not self.menu_open), "", active=self.menu_open)
        inner = rect.inflate(-16, 0)
        self.hidden = lay_out_row(buttons, inner)
        if self.hidden:  # room for "More…": the last shown button goes into its menu too
            self.hidden = lay_out_row(buttons, pygame.Rect(inner.x, inner.y, inner.w - more.width() - 6, inner.h))
            more.rect = pygame.Rect(inner.right - more.width(), rect.y + (rect.h - 28) // 2, more.width(), 28)
            self.buttons = [*buttons, more]
        else:
            self.menu_open = False
        mouse = theme.mouse_pos() if pygame.display.get_init() else (-1, -1)
        for b in self.buttons:
            if b.rect.w:
                b.draw(surf, b.rect.collidepoint(mouse))

    def menu_rows(self) -> list[tuple[Button, pygame.Rect]]:
        """Where the menu lists the controls that did not fit (under its button)."""
        more = self.buttons[-1].rect if self.buttons else pygame.Rect(0, 0, 0, 0)
        w = max([b.width() + 80 for b in self.hidden] + [200])
        x = max(0, more.right - w)
        return [(b, pygame.Rect(x, more.bottom + 4 + 32 * k, w, 30)) for k, b in enumerate(self.hidden)]

    def handle(self, event: Any) -> bool:
        """A click while the menu is open: runs the control clicked (the menu closes either way)."""
        if not (self.menu_open and event.type == pygame.MOUSEBUTTONDOWN and event.button == 1):
            return False
        self.menu_open = False
        for b, row in self.menu_rows():
            if row.collidepoint(event.pos):
                b.action()
                break
        return True

    def draw_menu(self, surf: pygame.Surface) -> None:
        rows = self.menu_rows()
        if not rows:
            return
        box = rows[0][1].unionall([r for _, r in rows]).inflate(8, 8)
        theme.overlay(surf, box, theme.ACCENT, alpha=245)
        mouse = theme.mouse_pos() if pygame.display.get_init() else (-1, -1)
        for b, row in rows:
            if row.collidepoint(mouse):
                pygame.draw.rect(surf, theme.BUTTON_HOVER, row, border_radius=4)
            surf.blit(theme.fit(b.label, 17, row.w - 70, theme.INK), (row.x + 10, row.y + 6))
            if b.key_hint:
                hint = theme.text(b.key_hint, 15, theme.FAINT)
                surf.blit(hint, (row.right - hint.get_width() - 10, row.y + 7))


def aquarium_buttons(scene: Any) -> list[Button]:
    """The aquarium's controls for what it shows now (each with its key)."""
    paused = scene.pacer.paused
    out = [Button("Play" if paused else "Pause", scene.toggle_pause, "Space"),
           Button("Step", scene.step_paused, "."),
           Button("Slower", lambda: scene.set_speed(scene.speed / 2), "-"),
           Button(f"Faster ({scene.speed:g}x)", lambda: scene.set_speed(scene.speed * 2), "+")]
    nav = scene.nav
    live, forked, own_past = nav.live_tank, nav.fork is not None, nav.showing_own_past()
    if nav.live_home is not None and not forked:
        out += [Button("Back to now", scene.to_now, "N", active=True)]
    if live is not None and not forked and (nav.live_home is None or own_past):
        rec = live.is_recording
        keep = "Keep this" if own_past else "Record"
        out += [Button("Stop rec" if rec else keep, scene.toggle_record, "K", active=rec)]
    if nav.showing_live is not None and not forked:
        out += [Button("Reset", lambda: scene.reset(None), "R"),
                Button("New seed", lambda: scene.reset(scene.new_seed()), "Shift+R")]
    elif not forked:
        out += [Button("To start", lambda: scene.reset(None), "R")]
    if forked:
        out += [Button("Back to original", scene.end_fork, "O")]
    elif scene.selected is not None:
        out += [Button("Why?", scene.ask_why, "I"), Button("Fork this fish", scene.begin_fork_pick, "F")]
    if nav.shown.kind != "replay":
        out += [Button(scene.pane.TOOL_LABELS[scene.pane.tool], scene.cycle_tool, "D",
                       active=scene.pane.tool != "follow")]
    out += [Button("Charts", lambda: scene.toggle("show_charts"), "C", active=scene.show_charts),
            Button("Open recording", scene.open_picker, "L"),
            Button("Fold panels", scene.toggle_folded, "P"),
            Button("Help", lambda: scene.toggle("show_help"), "H")]
    return out
