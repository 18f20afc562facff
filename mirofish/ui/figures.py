"""Pictures of the debugging tools, drawn offscreen with the window's palette (ui/theme.py):
the single-fish report (:mod:`mirofish.session.report`, ``report --png``) and the comparison
of two runs or two windows (:mod:`mirofish.session.diff`, ``diff --png``). The figures are
those modules'; only the drawing is here."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pygame

from ..fish.plans import GOAL_NAMES
from ..session.report import FishReport
from . import theme


def _surface(size: tuple[int, int]) -> pygame.Surface:
    """A blank picture (fonts work without a display)."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    pygame.font.init()
    surf = pygame.Surface(size)
    surf.fill(theme.PANEL)
    return surf


def report_png(r: FishReport, out: str | Path, size: tuple[int, int] = (960, 540)) -> None:
    """Draw the report (energy curve, action bars, figures) into a PNG."""
    W, H = size
    surf = _surface(size)
    ink, dim, fish_c, tank_c = theme.INK, theme.DIM, theme.ACCENT, theme.PROGRESS
    surf.blit(theme.text(f"Fish {r.fish}  ·  ticks {r.t0}..{r.t1}", 32, ink), (24, 16))
    surf.blit(theme.text(r.persona, 22, dim), (24, 48))

    # Energy curve.
    box = pygame.Rect(24, 84, W - 360, H - 128)
    pygame.draw.rect(surf, theme.CARD, box)
    for level in (25, 50, 75):
        y = box.bottom - level / 100 * box.height
        pygame.draw.line(surf, theme.GRIDLINE, (box.left, y), (box.right, y))
        surf.blit(theme.text(str(level), 22, dim), (box.left + 4, y - 16))
    e = np.array(r.energy)
    if len(e) > 1:
        xs = box.left + np.linspace(0, box.width - 1, len(e))
        ys = box.bottom - np.clip(e, 0, 100) / 100 * box.height
        pygame.draw.lines(surf, fish_c, False, list(zip(xs.tolist(), ys.tolist())), 2)
    surf.blit(theme.text("energy (0-100)", 22, fish_c), (box.right - 120, box.top - 20))
    surf.blit(theme.text(f"t{r.t0}", 22, dim), (box.left, box.bottom + 6))
    label = theme.text(f"t{r.t1}", 22, dim)
    surf.blit(label, (box.right - label.get_width(), box.bottom + 6))

    # Action distribution: fish vs tank.
    x0, y0 = W - 312, 84
    surf.blit(theme.text("actions", 22, ink), (x0, y0))
    surf.blit(theme.text("fish", 22, fish_c), (x0 + 70, y0))
    surf.blit(theme.text("tank mean", 22, tank_c), (x0 + 110, y0))
    step = min(30, 196 // max(1, len(r.actions)))  # (the tank's actions: a hexagonal tank's eight, closer)
    for k, a in enumerate(r.actions):
        y = y0 + 28 + k * step
        surf.blit(theme.text(a, 22, dim), (x0, y))
        pygame.draw.rect(surf, fish_c, (x0 + 70, y, int(r.actions[a] * 200), 11))
        pygame.draw.rect(surf, tank_c, (x0 + 70, y + 13, int(r.tank_actions[a] * 200), 8))
    facts = [
        f"meals {r.eats}   stuck peak {r.stuck_peak}",
        f"in company {r.company_ticks / (r.t1 - r.t0):.0%}   encounters {r.encounters}",
        f"exploration {r.exploration:.3f} (tank {r.tank_exploration:.3f})",
        f"memory {np.mean(r.memory_chars):.0f} chars (max {max(r.memory_chars)})",
        "drift " + (" ".join(r.drift_judged()) or ("n/a (template summaries)" if r.drift else "n/a")),
    ]
    for k, text in enumerate(facts):
        surf.blit(theme.text(text, 22, ink), (x0, y0 + 230 + k * 26))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as fh:  # a real PNG whatever the file is called
        pygame.image.save(surf, fh, "png")


def diff_png(d: dict[str, Any], out: str | Path, size: tuple[int, int] = (1200, 640)) -> None:
    """The diff as a picture: fish in another cell over time (runs), and the action, plan and
    metric comparisons as paired bars (A in the accent colour, B in the second series' blue)."""
    W = size[0]
    surf = _surface(size)
    ink, dim, ca, cb = theme.INK, theme.DIM, theme.ACCENT, theme.PROGRESS
    a, b = d["a"], d["b"]
    head = (f"diff  A {Path(a['recording']).name}  vs  B {Path(b['recording']).name}" if d["kind"] == "runs"
            else f"diff  {Path(d['recording']).name}: {a['label']} vs {b['label']}")
    surf.blit(theme.text(head, 30, ink), (20, 14))
    surf.blit(theme.text("A", 21, ca), (W - 80, 18))
    surf.blit(theme.text("B", 21, cb), (W - 50, 18))
    top = 52
    if d["kind"] == "runs":
        box = pygame.Rect(20, top + 20, W - 40, 170)
        pygame.draw.rect(surf, theme.CARD, box)
        n = max(1, max((v for _, v in d["curve"]), default=1))
        fd = d["first_divergent_decision"]
        label = "fish in another cell, per tick" + (f"   first divergent decision: t{fd['tick']} fish "
                                                    f"{', '.join(map(str, fd['fish'][:5]))}" if fd else "")
        surf.blit(theme.text(label, 21, ink), (box.left, top))
        if len(d["curve"]) > 1:
            ts = np.array([t for t, _ in d["curve"]], float)
            vs = np.array([v for _, v in d["curve"]], float)
            xs = box.left + (ts - ts[0]) / max(1.0, ts[-1] - ts[0]) * (box.width - 1)
            ys = box.bottom - vs / n * (box.height - 10)
            pygame.draw.lines(surf, ca, False, list(zip(xs.tolist(), ys.tolist())), 2)
        surf.blit(theme.text(f"t{d['from']}", 21, dim), (box.left, box.bottom + 4))
        end = theme.text(f"t{d['to']}   max {n}", 21, dim)
        surf.blit(end, (box.right - end.get_width(), box.bottom + 4))
        top = box.bottom + 30
    # every plan of the shipped table, then any plan type of the runs' own (their registries')
    names = [*GOAL_NAMES, *sorted((set(a["plans"]) | set(b["plans"])) - set(GOAL_NAMES))]
    groups = [("actions executed", a["actions"], b["actions"]),
              ("plans chosen", {k: a["plans"].get(k, 0.0) for k in names},
               {k: b["plans"].get(k, 0.0) for k in names})]
    col_w = (W - 60) // 3
    for gi, (name, va, vb) in enumerate(groups):
        x0 = 20 + gi * (col_w + 10)
        surf.blit(theme.text(name + " (share)", 21, ink), (x0, top))
        keys = [k for k in va if va[k] or vb.get(k)]
        top_share = max([va[k] for k in keys] + [vb.get(k, 0.0) for k in keys] + [1e-9])
        for k, key in enumerate(keys):
            y = top + 24 + k * 26
            surf.blit(theme.text(key, 21, dim), (x0, y))
            for j, (v, c) in enumerate(((va[key], ca), (vb.get(key, 0.0), cb))):
                pygame.draw.rect(surf, c, (x0 + 90, y + j * 10, int(v / top_share * (col_w - 150)), 8))
            surf.blit(theme.text(f"{va[key]:.0%}/{vb.get(key, 0.0):.0%}", 21, dim), (x0 + col_w - 56, y))
    x0 = 20 + 2 * (col_w + 10)
    surf.blit(theme.text("metrics (A / B)", 21, ink), (x0, top))
    rows = list(a["metrics_mean"].items())[:10] + [("stuck fish-ticks", a["stuck_fish_ticks"]),
                                                   ("memories per fish", a["memory_entries_mean"])]
    other = {**b["metrics_mean"], "stuck fish-ticks": b["stuck_fish_ticks"],
             "memories per fish": b["memory_entries_mean"]}
    for k, (key, v) in enumerate(rows):
        y = top + 24 + k * 24
        surf.blit(theme.text(key, 21, dim), (x0, y))
        surf.blit(theme.text(f"{v:g}", 21, ca), (x0 + 190, y))
        surf.blit(theme.text(f"{other.get(key, 0):g}", 21, cb), (x0 + 280, y))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(surf, str(out))


def influence_png(s: dict[str, Any], out: str | Path, size: tuple[int, int] = (1280, 720)) -> None:
    """``influence --out``'s picture: each tested decision's effect (dot) and 95 % interval
    (line) along the window, the null band shaded, pivotal decisions ringed and named; the
    strongest decisions listed on the right."""
    W, H = size
    surf = _surface(size)
    ink, dim = theme.INK, theme.DIM
    w0, w1 = s["window"]
    surf.blit(theme.text(f"Which decisions made {s['outcome']}?  (as recorded {s['outcome_recorded']:g})", 30, ink),
              (20, 14))
    band = s["null"]["band"]
    surf.blit(theme.text(f"decisions t{w0}..t{w1 - 1}: {s['decisions_tested']} tested with {s['forks']} forks; "
                         f"null band {band[0]:+.3g} .. {band[1]:+.3g} ({s['null']['samples']} random swaps); "
                         f"{len(s['pivotal'])} pivotal", 20, dim), (20, 50))
    box = pygame.Rect(70, 92, W - 470, H - 150)
    pygame.draw.rect(surf, theme.CARD, box)
    rows = [r for r in s["decisions"] if r["effect"] is not None]
    lo = min([band[0], *(r["low"] for r in rows)], default=-1.0)
    hi = max([band[1], *(r["high"] for r in rows)], default=1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    pad = 0.06 * (hi - lo)
    lo, hi = lo - pad, hi + pad

    def y_of(v: float) -> int:
        return int(box.bottom - (v - lo) / (hi - lo) * box.height)

    def x_of(t: int) -> int:
        return int(box.left + 12 + (t - w0 + 0.5) / max(1, w1 - w0) * (box.width - 24))

    shade = pygame.Surface((box.width, max(1, y_of(band[0]) - y_of(band[1]))), pygame.SRCALPHA)
    shade.fill((*theme.PROGRESS, 60))
    surf.blit(shade, (box.left, y_of(band[1])))
    surf.blit(theme.text("null band", 18, theme.PROGRESS), (box.right - 86, y_of(band[1]) - 20))
    for v in (lo + pad, 0.0, hi - pad):
        if lo <= v <= hi:
            y = y_of(v)
            pygame.draw.line(surf, theme.GRIDLINE, (box.left, y), (box.right, y))
            surf.blit(theme.text(f"{v:+.3g}", 18, dim), (box.left - 62, y - 9))
    for t in range(w0, w1, max(1, (w1 - w0) // 6)):
        surf.blit(theme.text(f"t{t}", 18, dim), (x_of(t) - 14, box.bottom + 6))
    surf.blit(theme.text("effect of the recorded choice (recorded outcome - mean over its alternatives)", 18, dim),
              (box.left, box.bottom + 28))
    for r in sorted(rows, key=lambda r: r["pivotal"]):
        x = x_of(r["tick"]) + (r["fish"] % 7 - 3)  # fish of one tick side by side
        colour = theme.ACCENT if r["pivotal"] else theme.FAINT
        pygame.draw.line(surf, colour, (x, y_of(r["low"])), (x, y_of(r["high"])), 1)
        pygame.draw.circle(surf, colour, (x, y_of(r["effect"])), 3)
        if r["pivotal"]:
            pygame.draw.circle(surf, theme.SELECT, (x, y_of(r["effect"])), 8, 2)
            surf.blit(theme.text(f"fish {r['fish']}", 16, theme.SELECT), (x + 10, y_of(r["effect"]) - 8))
    x0, y = W - 380, 92
    surf.blit(theme.text("strongest decisions", 22, ink), (x0, y))
    y += 30
    for r in rows[:14]:
        mark = "pivotal " if r["pivotal"] else ""
        surf.blit(theme.fit(f"t{r['tick']} fish {r['fish']}: {r['recorded']}", 18, 360,
                            theme.ACCENT if r["pivotal"] else ink), (x0, y))
        surf.blit(theme.fit(f"  {mark}{r['effect']:+.3g} [{r['low']:+.3g}, {r['high']:+.3g}]  vs "
                            f"{r['strongest_alternative']}", 16, 360, dim), (x0, y + 19))
        y += 42
        if y > H - 60:
            break
    pygame.image.save(surf, str(out))
