"""Where everything goes, from the window size alone (1024×600 … 3840×2160).

``aquarium_layout`` returns the rectangles of the aquarium scene's parts; they always lie
inside the window (tested at 1024×600, 1280×720, 1920×1080 and 2560×1440). Panels that have
more to show than room scroll or shorten their text with a visible "…".

Two arrangements, chosen from the window and the grid alone:

* **side by side** (a window that cannot hold the tank at ``cell_px``, 20 px a cell, beside
  its panels — a laptop's 1280×720): HUD, controls, tank, footer, timeline and side panel never
  overlap; the tank gets the largest whole cell size that fits;
* **floating** (a window that holds the whole tank at ``cell_px`` — 96×54 cells at 20 px =
  1920×1080): the tank fills the window at ``cell_px`` and the other parts float over it.

Either way ``folded`` (key P, the Fold panels button, the « panels tab) takes every part but the footer
away, so the tank gets the window; and in the floating arrangement a part that would cover the
followed fish (``fish_at``, in window pixels) moves out of its way: the side panel to the other
side, the top or bottom strip folds while the fish is under it.
"""

from __future__ import annotations

import pygame

MIN_SIZE = (1024, 600)


CELL_PX = 20  # the design card's pixels per cell (world.cell_px = 0: this, where it fits)
FOOTER_H = 24


def floats(size: tuple[int, int], grid: tuple[int, int], cell_px: int = CELL_PX) -> bool:
    """Does the window hold the whole tank at ``cell_px`` (the floating arrangement)?"""
    return size[0] >= grid[0] * cell_px and size[1] >= grid[1] * cell_px


def aquarium_layout(size: tuple[int, int], replay: bool, grid: tuple[int, int] | None = None,
                    cell_px: int = CELL_PX, folded: bool = False,
                    fish_at: tuple[int, int] | None = None) -> dict[str, pygame.Rect]:
    """Rects of the HUD (metrics strip), the controls bar, the tank, the footer line, the
    replay timeline (height 0 live) and the side panel (follow a fish / tune); a part folded
    away has an empty rect. ``grid``: the tank's cells (None: side by side)."""
    w, h = max(size[0], 1), max(size[1], 1)
    floating = grid is not None and floats((w, h), grid, cell_px)
    panel_w = min(440, max(300, round(w * 0.25)))
    left = w - panel_w
    hud_h = 86 if h >= 720 else 74
    controls_h = 38
    timeline_h = (96 if h >= 720 else 80) if replay else 0
    top = hud_h + controls_h
    none = pygame.Rect(0, 0, 0, 0)
    if folded:  # the tank gets the window; the footer floats over it for the keys and messages
        return {"hud": none, "controls": none, "tank": pygame.Rect(0, 0, w, h),
                "footer": pygame.Rect(0, h - FOOTER_H, w, FOOTER_H), "timeline": none, "panel": none}
    if not floating:
        tank_h = h - top - FOOTER_H - timeline_h - 8
        return {
            "hud": pygame.Rect(0, 0, left, hud_h),
            "controls": pygame.Rect(0, hud_h, left, controls_h),
            "tank": pygame.Rect(8, top + 4, left - 16, max(0, tank_h - 4)),
            "footer": pygame.Rect(0, h - timeline_h - FOOTER_H, left, FOOTER_H),
            "timeline": pygame.Rect(0, h - timeline_h, left, timeline_h),
            "panel": pygame.Rect(left, 0, panel_w, h),
        }
    x0 = 0
    panel = pygame.Rect(left, 0, panel_w, h)
    if fish_at is not None and panel.inflate(40, 0).collidepoint(fish_at):  # the panel moves to the other side
        panel, x0 = pygame.Rect(0, 0, panel_w, h), panel_w
    strip_w = w - panel_w
    rects = {
        "hud": pygame.Rect(x0, 0, strip_w, hud_h),
        "controls": pygame.Rect(x0, hud_h, strip_w, controls_h),
        "tank": pygame.Rect(0, 0, w, h),
        "footer": pygame.Rect(x0, h - timeline_h - FOOTER_H, strip_w, FOOTER_H),
        "timeline": pygame.Rect(x0, h - timeline_h, strip_w, timeline_h),
        "panel": panel,
    }
    if fish_at is not None:  # a strip the followed fish swims under folds while it is there
        if fish_at[1] < top + 20:
            rects["hud"] = rects["controls"] = none
        elif fish_at[1] > h - timeline_h - FOOTER_H - 20:
            rects["timeline"] = none
    return rects


def inside_and_apart(rects: dict[str, pygame.Rect], size: tuple[int, int], under: str | None = None) -> list[str]:
    """Problems with a layout: rects outside the window, or overlapping (empty rects ignored;
    ``under``: the part the others float over, e.g. the tank in the floating arrangement)."""
    window = pygame.Rect(0, 0, *size)
    problems = [f"{k} {r} outside {size}" for k, r in rects.items() if r.w and r.h and not window.contains(r)]
    items = [(k, r) for k, r in rects.items() if r.w and r.h and k != under]
    for i, (a, ra) in enumerate(items):
        for b, rb in items[i + 1:]:
            if ra.colliderect(rb):
                problems.append(f"{a} {ra} overlaps {b} {rb}")
    return problems
