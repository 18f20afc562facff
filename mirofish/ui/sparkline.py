"""A sparkline: a series drawn small in a rect (the HUD's columns, the follow panel's energy)."""

from __future__ import annotations

import numpy as np
import pygame


def sparkline(surf: pygame.Surface, rect: pygame.Rect, values, colour, lo: float | None = None,
              hi: float | None = None) -> None:
    vals = np.asarray(values, np.float64)
    if vals.size < 2:
        return
    lo = float(vals.min()) if lo is None else lo
    hi = float(vals.max()) if hi is None else hi
    span = hi - lo if hi > lo else 1.0
    xs = rect.x + np.linspace(0, rect.w - 1, vals.size)
    ys = rect.bottom - 1 - (np.clip(vals, lo, hi) - lo) / span * (rect.h - 2)
    pygame.draw.lines(surf, colour, False, list(zip(xs.tolist(), ys.tolist())), 1)
