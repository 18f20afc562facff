"""Where everything goes, from the window size alone (1000×600 … 3840×2160).

``aquarium_layout`` returns the rectangles of the aquarium scene's parts; they always lie
inside the window and never overlap (tested at 1000×600, 1024×600, 1280×720, 1920×1080 and
larger). Panels that have more to show than room scroll or shorten their text with a visible "…".

The parts are docked beside the water, never over it: the HUD and the controls above the
tank, the footer line and the timeline under it, the side panel (follow a fish / tune) on the
right with the minimap of the whole tank at its foot. The tank pane shows the tank through its
camera (ui/camera.py): 20 px a cell (``world.cell_px``) around what matters, or the whole tank.

``folded`` (key P, the Fold panels button, the « panels tab) takes every part but the footer
away, so the tank gets the window but the footer's line; the « panels tab sits at the footer's
right end, beside the water too.
"""

from __future__ import annotations

import pygame

MIN_SIZE = (1000, 600)

CELL_PX = 20  # the design card's pixels per cell (world.cell_px = 0: this)
FOOTER_H = 24
TAB_W = 120  # the « panels tab at the folded footer's right end
MINIMAP_CAPTION = 20  # the minimap's line of text above the map
TUNE_PANEL_NEEDS = 510  # px of height the tune panel's sliders and legends take; the minimap gets what is left


def minimap_size(size: tuple[int, int], grid: tuple[int, int], panel_w: int) -> tuple[int, int]:
    """The minimap's map (the whole tank, cells kept square) for a window of ``size``: as wide
    as the side panel allows, and as tall as the panel can spare (a fifth of the window at most,
    80 px at least)."""
    h = size[1]
    budget = max(80, min(int(0.2 * h), h - TUNE_PANEL_NEEDS))
    s = min((panel_w - 24) / max(1, grid[0]), budget / max(1, grid[1]))
    return max(1, int(grid[0] * s)), max(1, int(grid[1] * s))


def aquarium_layout(size: tuple[int, int], replay: bool, grid: tuple[int, int] | None = None,
                    folded: bool = False) -> dict[str, pygame.Rect]:
    """Rects of the HUD (metrics strip), the controls bar, the tank pane, the footer line, the
    timeline (height 0 without one), the side panel (follow a fish / tune), the minimap (the
    map and its caption; ``grid``: the tank's cells, None: no minimap) and the « panels tab
    (folded only); a part folded away has an empty rect. None of them overlaps another."""
    w, h = max(size[0], 1), max(size[1], 1)
    panel_w = min(440, max(300, round(w * 0.25)))
    left = w - panel_w
    hud_h = 86 if h >= 720 else 74
    controls_h = 38
    timeline_h = (96 if h >= 720 else 80) if replay else 0
    top = hud_h + controls_h
    none = pygame.Rect(0, 0, 0, 0)
    if folded:  # the tank gets the window; the footer stays under it for the keys and messages
        return {"hud": none, "controls": none, "tank": pygame.Rect(0, 0, w, h - FOOTER_H),
                "footer": pygame.Rect(0, h - FOOTER_H, w - TAB_W, FOOTER_H), "timeline": none, "panel": none,
                "minimap": none, "tab": pygame.Rect(w - TAB_W, h - FOOTER_H, TAB_W, FOOTER_H)}
    tank_h = h - top - FOOTER_H - timeline_h - 8
    panel = pygame.Rect(left, 0, panel_w, h)
    minimap = none
    if grid is not None:
        _, mh = minimap_size((w, h), grid, panel_w)
        box_h = mh + MINIMAP_CAPTION + 12
        panel = pygame.Rect(left, 0, panel_w, h - box_h)
        minimap = pygame.Rect(left, h - box_h, panel_w, box_h)
    return {
        "hud": pygame.Rect(0, 0, left, hud_h),
        "controls": pygame.Rect(0, hud_h, left, controls_h),
        "tank": pygame.Rect(8, top + 4, left - 16, max(0, tank_h - 4)),
        "footer": pygame.Rect(0, h - timeline_h - FOOTER_H, left, FOOTER_H),
        "timeline": pygame.Rect(0, h - timeline_h, left, timeline_h),
        "panel": panel,
        "minimap": minimap,
        "tab": none,
    }


def minimap_map(box: pygame.Rect, grid: tuple[int, int]) -> pygame.Rect:
    """Where the map itself lies in the minimap's box: under its caption, centred."""
    if not box.w:
        return pygame.Rect(0, 0, 0, 0)
    s = min((box.w - 24) / max(1, grid[0]), (box.h - MINIMAP_CAPTION - 12) / max(1, grid[1]))
    mw, mh = max(1, int(grid[0] * s)), max(1, int(grid[1] * s))
    return pygame.Rect(box.x + (box.w - mw) // 2, box.y + MINIMAP_CAPTION + 4, mw, mh)


def inside_and_apart(rects: dict[str, pygame.Rect], size: tuple[int, int], under: str | None = None) -> list[str]:
    """Problems with a layout: rects outside the window, or overlapping (empty rects ignored;
    ``under``: a part the others may lie over)."""
    window = pygame.Rect(0, 0, *size)
    problems = [f"{k} {r} outside {size}" for k, r in rects.items() if r.w and r.h and not window.contains(r)]
    items = [(k, r) for k, r in rects.items() if r.w and r.h and k != under]
    for i, (a, ra) in enumerate(items):
        for b, rb in items[i + 1:]:
            if ra.colliderect(rb):
                problems.append(f"{a} {ra} overlaps {b} {rb}")
    return problems
