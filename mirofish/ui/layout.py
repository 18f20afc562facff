"""Where everything goes, from the window size alone (1024×600 … 3840×2160).

``aquarium_layout`` returns the rectangles of the aquarium scene's parts; they never overlap
and always lie inside the window (tested at 1024×600, 1280×720, 1920×1080 and 2560×1440).
Panels that have more to show than room scroll or shorten their text with a visible "…".
"""

from __future__ import annotations

import pygame

MIN_SIZE = (1024, 600)


def aquarium_layout(size: tuple[int, int], replay: bool) -> dict[str, pygame.Rect]:
    """Rects of the HUD (metrics strip), the controls bar, the tank, the footer line, the
    replay timeline (height 0 live) and the side panel (follow a fish / tune)."""
    w, h = max(size[0], 1), max(size[1], 1)
    panel_w = min(440, max(300, round(w * 0.25)))
    left = w - panel_w
    hud_h = 86 if h >= 720 else 74
    controls_h = 38
    timeline_h = (96 if h >= 720 else 80) if replay else 0
    footer_h = 24
    top = hud_h + controls_h
    tank_h = h - top - footer_h - timeline_h - 8
    return {
        "hud": pygame.Rect(0, 0, left, hud_h),
        "controls": pygame.Rect(0, hud_h, left, controls_h),
        "tank": pygame.Rect(8, top + 4, left - 16, max(0, tank_h - 4)),
        "footer": pygame.Rect(0, h - timeline_h - footer_h, left, footer_h),
        "timeline": pygame.Rect(0, h - timeline_h, left, timeline_h),
        "panel": pygame.Rect(left, 0, panel_w, h),
    }


def inside_and_apart(rects: dict[str, pygame.Rect], size: tuple[int, int]) -> list[str]:
    """Problems with a layout: rects outside the window, or overlapping (empty rects ignored)."""
    window = pygame.Rect(0, 0, *size)
    problems = [f"{k} {r} outside {size}" for k, r in rects.items() if r.w and r.h and not window.contains(r)]
    items = [(k, r) for k, r in rects.items() if r.w and r.h]
    for i, (a, ra) in enumerate(items):
        for b, rb in items[i + 1:]:
            if ra.colliderect(rb):
                problems.append(f"{a} {ra} overlaps {b} {rb}")
    return problems
