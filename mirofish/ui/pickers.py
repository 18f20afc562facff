"""The aquarium's pickers: the fork picker (what should the followed fish do now?) and the
open-a-recording list — drawn over the window, chosen by a key or a click."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pygame

from ..fish.plans import fork_plans
from . import theme

# The fork picker: the plan types' fork entries (fish/plantypes.py) of the tank shown (its run's
# plan table: Session.plans.fork_plans()), every one of them, nine to a page on the number keys
# (Tab or Page Down turns the page, Shift+Tab or Page Up back); the six single actions on letters.
FORK_PLANS = fork_plans()  # the default table's
PAGE = 9
PAGES = max(1, -(-len(FORK_PLANS) // PAGE))


def pages_of(entries: tuple[str, ...]) -> int:
    """How many pages the fork picker has for ``entries``."""
    return max(1, -(-len(entries) // PAGE))


def fork_page(page: int, entries: tuple[str, ...] = FORK_PLANS) -> tuple[str, ...]:
    """The plans on page ``page`` of the fork picker (wrapping), of ``entries`` (the tank's)."""
    start = (page % pages_of(entries)) * PAGE
    return entries[start : start + PAGE]
FORK_ACTION_LABELS = (("Q", "move_n"), ("W", "move_s"), ("E", "move_w"), ("R", "move_e"), ("T", "eat"),
                      ("Y", "rest"))
FORK_ACTION_KEYS = {getattr(pygame, f"K_{key.lower()}"): action for key, action in FORK_ACTION_LABELS}


def _inside(rect: pygame.Rect, size: tuple[int, int], area: pygame.Rect | None) -> pygame.Rect:
    """``rect`` centred on ``area`` (the space the picker owns: the water, so the panels stay in
    view) and kept inside it — or, where it is too small, inside the window."""
    window = pygame.Rect(0, 0, *size)
    room = area.clip(window) if area is not None and area.w and area.h else window
    rect.center = room.center
    return rect.clamp(room if room.w >= rect.w and room.h >= rect.h else window)


def _fork_rect(size: tuple[int, int], area: pygame.Rect | None = None) -> pygame.Rect:
    """Where the fork picker goes: centred on ``area`` (the water, beside the follow panel, so
    the followed fish's energy and plan stay in view), inside it."""
    return _inside(pygame.Rect(0, 0, 560, 326), size, area)


def fork_choice_for_key(k: int, page: int = 0, entries: tuple[str, ...] = FORK_PLANS) -> str | None:
    """1–9: a plan of the page shown; Q W E R T Y: one action; any other key: None (cancel)."""
    plans = fork_page(page, entries)
    if pygame.K_1 <= k <= pygame.K_9:
        return plans[k - pygame.K_1] if k - pygame.K_1 < len(plans) else None
    return FORK_ACTION_KEYS.get(k)


def fork_choice_at(pos: tuple[int, int], size: tuple[int, int], area: pygame.Rect | None = None,
                   page: int = 0, entries: tuple[str, ...] = FORK_PLANS) -> str | None:
    """The line of the fork picker under a click (in a window of ``size``); None elsewhere."""
    rect = _fork_rect(size, area)
    plans = fork_page(page, entries)
    x, y = pos
    row = (y - rect.y - 62) // 23
    if rect.x + 20 <= x < rect.x + 330 and 0 <= row < len(plans):
        return plans[row]
    if rect.x + 340 <= x < rect.right and 0 <= row < len(FORK_ACTION_LABELS):
        return FORK_ACTION_LABELS[row][1]
    return None


def draw_fork_picker(surf: pygame.Surface, tick: int, fish: int | None, replan: bool = False,
                     area: pygame.Rect | None = None, played: bool = False, page: int = 0,
                     entries: tuple[str, ...] = FORK_PLANS) -> None:
    """The plans and actions to give fish ``fish``: a fork of the tank — or, for the fish the
    person plays (``played``), its own next plan, with no branch (the title says which)."""
    rect = _fork_rect(surf.get_size(), area)
    theme.overlay(surf, rect, theme.ACCENT, alpha=250)
    title = (f"t{tick}: your fish {fish}'s next plan (no fork)" if played
             else f"Fork at t{tick}: what should fish {fish} do now?")
    surf.blit(theme.fit(title, 22, rect.w - 32, theme.INK, bold=True), (rect.x + 16, rect.y + 12))
    pages = pages_of(entries)
    more = f"  page {page % pages + 1}/{pages}, Tab: more" if pages > 1 else ""
    surf.blit(theme.text(f"a new plan{more}", 16, theme.FAINT), (rect.x + 30, rect.y + 42))
    for k, plan in enumerate(fork_page(page, entries)):
        surf.blit(theme.text(f"{k + 1}  {plan}", 19, theme.ACCENT), (rect.x + 30, rect.y + 62 + k * 23))
    surf.blit(theme.text("or one action", 16, theme.FAINT), (rect.x + 340, rect.y + 42))
    for k, (key, action) in enumerate(FORK_ACTION_LABELS):
        surf.blit(theme.text(f"{key}  {action}", 19, theme.ACCENT), (rect.x + 350, rect.y + 62 + k * 23))
    option = ("0  may re-plan on triggers: yes (found company, food … end it early)" if replan
              else "0  may re-plan on triggers: no (the plan holds for its horizon)")
    surf.blit(theme.fit(option, 16, rect.w - 40, theme.INK), (rect.x + 30, rect.y + 274))
    surf.blit(theme.text("any other key cancels", 16, theme.DIM), (rect.x + 350, rect.y + 298))
    surf.blit(theme.text("the tank waits while you choose", 16, theme.DIM), (rect.x + 30, rect.y + 298))


def file_choice(event, files: list[Path], rows: list[pygame.Rect]) -> Path | bool | None:
    """The recording an event picks: a number key or a click on its row; False: cancelled
    (any other key, a click elsewhere); None: the event says nothing."""
    if event.type == pygame.KEYDOWN:
        if pygame.K_1 <= event.key < pygame.K_1 + len(files):
            return files[event.key - pygame.K_1]
        return False
    if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
        for k, rect in enumerate(rows):
            if rect.collidepoint(event.pos):
                return files[k]
        return False
    return None


def draw_file_picker(surf: pygame.Surface, files: list[Path], area: pygame.Rect | None = None) -> list[pygame.Rect]:
    """Draw the list of recordings (over ``area``, the water); returns each row's rect (for clicks)."""
    room = area if area is not None and area.w else surf.get_rect()
    rect = _inside(pygame.Rect(0, 0, min(720, room.w - 40), 80 + 30 * len(files)), surf.get_size(), area)
    theme.overlay(surf, rect, theme.ACCENT, alpha=250)
    surf.blit(theme.text("Open a recording (newest first)", 22, theme.INK, bold=True), (rect.x + 16, rect.y + 12))
    rows = []
    for k, path in enumerate(files):
        row = pygame.Rect(rect.x + 16, rect.y + 46 + 30 * k, rect.w - 32, 26)
        rows.append(row)
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
        surf.blit(theme.fit(f"{k + 1}  {path.name}   {stamp}   {path.stat().st_size / 1e6:.1f} MB", 19,
                            row.w, theme.ACCENT), row.topleft)
    surf.blit(theme.text("a number or a click opens it; any other key cancels", 16, theme.DIM),
              (rect.x + 16, rect.bottom - 24))
    return rows


CURRENT_KEYS = {pygame.K_UP: "north", pygame.K_DOWN: "south", pygame.K_LEFT: "west", pygame.K_RIGHT: "east"}


class Pickers:
    """The choices drawn over the aquarium — a fork's plan, a recording to open, a current's
    direction. The tank waits while the fork or file picker is open. ``handle_*`` answer
    whether the event was theirs, and call ``on_pick(what, choice)`` with what was chosen for
    the scene to act on: ``("fork", plan or None)``, ``("file", path or None)``, ``("current",
    direction, "stop" or None)`` (None: cancelled)."""

    def __init__(self, pacer: Any, on_pick: Callable[[str, Any], None]):
        self.pacer = pacer
        self.on_pick = on_pick
        self.action = False  # the fork picker is open
        self.replan = False  # the fork's option (key 0 in the picker): triggers may end its plan early
        self.page = 0  # the fork picker's page of plans (Tab / Page Down, Shift+Tab / Page Up)
        self.files: list[Path] | None = None  # the open-a-recording list, while shown
        self.current = False  # the next key picks a current's direction
        self._paused_before = False
        self._rows: list[pygame.Rect] = []
        self.size = (1920, 1080)  # the window's, at the last frame (where the fork picker's lines are)
        self.area: pygame.Rect | None = None  # the space the pickers own: the water (the scene sets it)

    def _wait(self) -> None:
        self._paused_before = self.pacer.paused
        self.pacer.paused = True

    def open_fork(self, entries: tuple[str, ...] = FORK_PLANS) -> None:
        """The fork happens at the tick F was pressed; ``entries``: the plans of the tank shown
        (its run's plan table's fork entries)."""
        self._wait()
        self.action = True
        self.page = 0
        self.entries = entries

    entries: tuple[str, ...] = FORK_PLANS

    def open_files(self, files: list[Path]) -> None:
        self._wait()
        self.files = files

    def done(self) -> None:
        self.pacer.paused = self._paused_before
        if not self.pacer.paused:
            self.pacer.restart()

    def handle_overlay(self, event: Any) -> bool:
        """The file list takes every event; the fork picker every click."""
        if self.files is not None:
            choice = file_choice(event, self.files, self._rows)
            if choice is not None:  # (an event that picks nothing is the list's all the same)
                self.files = None
                self.on_pick("file", choice or None)
            return True
        if self.action and event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self.action = False
            self.on_pick("fork", fork_choice_at(event.pos, self.size, self.area, self.page, self.entries))
            return True
        return False

    def handle_key(self, event: Any) -> bool:
        """The open fork picker, or a current's direction: the next key is theirs."""
        if event.type != pygame.KEYDOWN or not (self.action or self.current):
            return False
        k = event.key
        if self.action:
            if k in (pygame.K_0, pygame.K_KP0):  # the option, the picker stays open
                self.replan = not self.replan
                return True
            if k in (pygame.K_TAB, pygame.K_PAGEDOWN, pygame.K_PAGEUP):  # another page, the picker stays open
                back = k == pygame.K_PAGEUP or bool(getattr(event, "mod", 0) & pygame.KMOD_SHIFT)
                self.page = (self.page + (-1 if back else 1)) % pages_of(self.entries)
                return True
            self.action = False
            self.on_pick("fork", fork_choice_for_key(k, self.page, self.entries))
        else:
            self.current = False
            self.on_pick("current", CURRENT_KEYS.get(k) or ("stop" if k in (pygame.K_0, pygame.K_KP0) else None))
        return True

    def draw(self, surf: pygame.Surface, tick: int, fish: int | None, played: bool = False) -> None:
        self.size = surf.get_size()
        if self.action:
            draw_fork_picker(surf, tick, fish, self.replan, self.area, played, self.page, self.entries)
        if self.files is not None:
            self._rows = draw_file_picker(surf, self.files, self.area)
