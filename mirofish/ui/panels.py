"""The window's panels: metrics HUD, follow-a-fish panel, replay timeline, help overlay."""

from __future__ import annotations

from collections import deque

import numpy as np
import pygame

from ..actions import ACTION_NAMES
from ..fish.plans import NO_END
from ..fish.triggers import TRIGGER_NAMES
from ..snapshot import FishSnapshot
from . import theme

# (label, key, format, healthy range, bad below, bad above) — docs/design.md §4
SIX = [
    ("action entropy", "action_entropy", "{:.2f}", (1.6, 1.9), 1.2, None),
    ("conflict rate", "conflict_rate", "{:.1%}", (0.03, 0.08), None, 0.15),
    ("schooling", "schooling_degree", "{:.2f}", None, None, None),
    ("tokens/decision", "tokens_per_decision", "{:.0f}", (350, 500), None, 1500),
    ("latency p95", "decision_latency_p95_ms", "{:.0f} ms", (0, 1200), None, 1200),
    ("fallback rate", "fallback_rate", "{:.1%}", (0, 0.05), None, 0.20),
]
MODEL_ONLY = ("tokens_per_decision", "decision_latency_p95_ms", "fallback_rate")
# The largest moving school first: on a narrow window the columns that do not fit are left out.
EXTRA = [("largest school", "school_size", "{:.0f} fish"), ("school polariz.", "school_polarization", "{:.2f}"),
         ("school moving", "school_moving", "{:.0%}"), ("polarization", "polarization", "{:.2f}"),
         ("clusters", "clusters", "{:.0f}")]


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


class Hud:
    """The metrics strip above the tank: six metrics (coloured against their healthy range,
    with sparklines), collective measures, alerts and the brain's status."""

    height = 86

    def __init__(self, history: int = 240):
        self.history: dict[str, deque] = {k: deque(maxlen=history) for _, k, *_ in SIX + EXTRA}
        self._calls: deque = deque(maxlen=120)  # (wall time, model calls) for calls/s

    def calls_per_second(self, calls: int) -> float:
        import time

        now = time.monotonic()
        self._calls.append((now, calls))
        t0, c0 = self._calls[0]
        return (calls - c0) / (now - t0) if now - t0 > 0.5 else 0.0

    def push(self, metrics: dict) -> None:
        for key, hist in self.history.items():
            value = metrics.get(key)
            if isinstance(value, dict):
                value = value.get("current")
            if value is not None:
                hist.append(float(value))

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, metrics: dict, status: dict, brain: dict) -> None:
        pygame.draw.rect(surf, theme.PANEL, rect)
        pygame.draw.line(surf, theme.PANEL_EDGE, rect.bottomleft, rect.bottomright)
        model = brain.get("source") == "llm" or brain.get("live", {}).get("source") == "llm"
        cols = SIX + [(lbl, key, fmt, None, None, None) for lbl, key, fmt in EXTRA]
        fit = max(1, (rect.w - 240) // 112)
        if len(cols) > fit and not model:  # no model: its three columns make room for the schools
            cols = [c for c in cols if c[1] not in MODEL_ONLY]
        cols = cols[:fit]
        w = (rect.w - 240) // len(cols)
        for k, (label, key, fmt, good, bad_lo, bad_hi) in enumerate(cols):
            x = rect.x + 12 + k * w
            hist = self.history[key]
            value = hist[-1] if hist else 0.0
            no_model = key in ("tokens_per_decision", "fallback_rate") and not model
            colour = theme.DIM if no_model else theme.health_colour(value, good, bad_lo, bad_hi)
            surf.blit(theme.text(label, 17, theme.DIM), (x, rect.y + 8))
            if not hist:
                colour = theme.DIM
            shown = "n/a (instinct)" if no_model else (fmt.format(value + 0.0) if hist else "…")
            surf.blit(theme.text(shown, 26, colour, bold=True), (x, rect.y + 24))
            sparkline(surf, pygame.Rect(x, rect.y + 50, w - 20, 24), hist, colour)
        sx = rect.right - 228
        if brain.get("source") == "llm":
            brain = {**brain, "calls_per_s": self.calls_per_second(int(brain.get("calls", 0)))}
        for k, line in enumerate(status_lines(status, brain)):
            surf.blit(theme.text(line[0], 18, line[1]), (sx, rect.y + 8 + k * 19))


def status_lines(status: dict, brain: dict) -> list[tuple[str, tuple]]:
    run = "PAUSED" if status.get("paused") else f"{status.get('speed', 1):g}x"
    lines = [(f"tick {status.get('tick', 0)}   {run}", theme.INK)]
    mode = status.get("mode")
    if mode:
        lines.append((mode, theme.ACCENT))
    if brain.get("source") == "llm":
        tiers = brain.get("tiers", {})
        eps = [e for t in tiers.values() for e in t.get("endpoints", [])]
        down = any(e.get("reachable") is False for e in eps)
        open_ = any(t.get("state") != "closed" for t in tiers.values())
        colour = theme.BAD if down or open_ else theme.GOOD
        state = "model UNREACHABLE: instinct answers" if down else ("breaker open: instinct answers" if open_
                                                                     else "model reachable")
        lines.append((state, colour))
        lines.append((f"{brain.get('calls_per_s', 0.0):.1f} calls/s  tokens {brain.get('budget', {}).get('used', 0):,}",
                      theme.DIM))
        limit = brain.get("budget", {}).get("limit")
        if limit:
            left = max(0, limit - brain["budget"]["used"])
            lines.append((f"budget left {left:,}", theme.WARN if left < 0.2 * limit else theme.DIM))
    else:
        lines.append(("brain: instinct (embedded)", theme.DIM))
    return lines


class FollowPanel:
    """Everything about the followed fish, from its snapshot."""

    width = 380

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, fish: FishSnapshot | None, energy_hist,
             last_decision: dict | None, max_energy: float, drift: float | None = None,
             drift_alert: float | None = None) -> None:
        """``drift``: the score of the fish's newest model-written summary (None: none written);
        ``drift_alert``: the threshold below which it is out of character."""
        pygame.draw.rect(surf, theme.PANEL, rect)
        pygame.draw.line(surf, theme.PANEL_EDGE, rect.topleft, rect.bottomleft)
        x, y, w = rect.x + 16, rect.y + 12, rect.w - 32
        if fish is None:
            for k, line in enumerate(["Click a fish to follow it.", "Tab / arrow keys: next fish.",
                                      "H: all keys."]):
                surf.blit(theme.text(line, 20, theme.DIM), (x, y + 8 + k * 24))
            return
        colour = theme.fish_colour(list(fish.traits.values()))
        pygame.draw.circle(surf, colour, (x + 8, y + 12), 8)
        surf.blit(theme.text(f"Fish {fish.id}", 30, theme.INK, bold=True), (x + 24, y))
        surf.blit(theme.text(f"age {fish.age}   at ({fish.x}, {fish.y})", 18, theme.DIM), (x + 150, y + 8))
        y += 30
        for line in theme.wrap(fish.persona, w, 18)[:3]:
            surf.blit(theme.text(line, 18, theme.ACCENT), (x, y))
            y += 18
        y += 4
        for k, (name, v) in enumerate(fish.traits.items()):  # traits as small bars, two columns
            cx, cy = x + (k % 2) * (w // 2), y + (k // 2) * 18
            surf.blit(theme.text(name, 16, theme.DIM), (cx, cy))
            pygame.draw.rect(surf, theme.FAINT, (cx + 82, cy + 4, 80, 8), 1)
            pygame.draw.rect(surf, colour, (cx + 82, cy + 4, int(80 * v / 100), 8))
        y += 58
        e = fish.energy / 100
        surf.blit(theme.text(f"energy {e:.1f}", 20, theme.INK, bold=True), (x, y))
        bar = pygame.Rect(x + 110, y + 3, w - 110, 12)
        pygame.draw.rect(surf, theme.FAINT, bar, 1)
        ecol = theme.BAD if e < 20 else (theme.WARN if e < 40 else theme.GOOD)
        pygame.draw.rect(surf, ecol, (bar.x, bar.y, int(bar.w * min(1.0, e / max_energy)), bar.h))
        y += 20
        sparkline(surf, pygame.Rect(x, y, w, 28), energy_hist, ecol, 0.0, max_energy)
        y += 34
        surf.blit(theme.text(f"plan: {fish.plan}", 20, theme.ACCENT, bold=True), (x, y))
        y += 21
        progress = plan_progress(fish)
        if progress:
            surf.blit(theme.text(progress, 17, theme.DIM), (x, y))
            y += 18
        surf.blit(theme.text(f"doing {fish.intent}    stuck {fish.stuck_ticks} (peak {fish.max_stuck_ticks})",
                             18, theme.INK), (x, y))
        y += 20
        if last_decision:
            d = last_decision
            why = f": {d['reason'].replace('_', ' ')}" if d.get("reason") else ""
            surf.blit(theme.text(f"last decision t{d['tick']}: {d['action']}  [{d['tier']}{why}]", 18,
                                 theme.WARN if why else theme.INK), (x, y))
            y += 18
            if d.get("thought"):
                for line in theme.wrap(f"\u201c{d['thought']}\u201d", w, 17)[:2]:
                    surf.blit(theme.text(line, 17, theme.DIM), (x, y))
                    y += 17
        y += 6
        surf.blit(theme.text("short memory", 17, theme.FAINT), (x, y))
        y += 17
        for m in fish.short_memory[-8:]:
            surf.blit(theme.text(m[:52], 17, theme.INK), (x, y))
            y += 17
        y += 4
        surf.blit(theme.text("long memory", 17, theme.FAINT), (x, y))
        y += 17
        for s in fish.summaries[-3:]:
            body = s.split(" Anchors:")[0]
            for line in theme.wrap(body, w, 16)[:2]:
                surf.blit(theme.text(line, 16, theme.DIM), (x, y))
                y += 16
        if not fish.summaries:
            surf.blit(theme.text("(none yet: one every 20 ticks)", 16, theme.DIM), (x, y))
            y += 16
        if drift is not None:  # scored once, when a model wrote the summary (none for the instinct brain)
            alert = drift_alert is not None and drift < drift_alert
            surf.blit(theme.text(f"drift score {drift:.2f}" + ("  ALERT: out of character" if alert else ""), 18,
                                 theme.BAD if alert else theme.GOOD), (x, y + 2))
            y += 22
        y += 4
        counts = np.array(fish.counters["actions"], np.float64)
        total = max(1.0, counts.sum())
        surf.blit(theme.text("actions so far", 17, theme.FAINT), (x, y))
        y += 18
        for k, name in enumerate(ACTION_NAMES):
            if y > rect.bottom - 14:
                break
            share = counts[k] / total
            surf.blit(theme.text(name, 16, theme.DIM), (x, y))
            pygame.draw.rect(surf, colour, (x + 60, y + 3, int((w - 110) * share), 9))
            surf.blit(theme.text(f"{share:.0%}", 16, theme.DIM), (x + w - 40, y))
            y += 15


class Timeline:
    """Replay scrubber: drag to seek; markers for alerts (red) and forks (amber); under it, a
    fork's divergence curve."""

    height = 64

    def __init__(self, first: int, last: int, markers: list[tuple[int, str]] | None = None):
        self.first, self.last = first, last
        self.markers = markers or []
        self.rect = pygame.Rect(0, 0, 0, 0)
        self.dragging = False

    def tick_at(self, x: int) -> int:
        bar = self.bar
        f = min(1.0, max(0.0, (x - bar.x) / max(1, bar.w)))
        return int(round(self.first + f * (self.last - self.first)))

    @property
    def bar(self) -> pygame.Rect:
        return pygame.Rect(self.rect.x + 90, self.rect.y + 14, self.rect.w - 180, 10)

    def x_of(self, tick: int) -> int:
        bar = self.bar
        return int(bar.x + (tick - self.first) / max(1, self.last - self.first) * bar.w)

    def handle(self, event) -> int | None:
        """A tick to seek to, if the event asks for one."""
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.bar.inflate(0,
                                                                                           18).collidepoint(event.pos):
            self.dragging = True
            return self.tick_at(event.pos[0])
        if event.type == pygame.MOUSEMOTION and self.dragging:
            return self.tick_at(event.pos[0])
        if event.type == pygame.MOUSEBUTTONUP and event.button == 1 and self.dragging:
            self.dragging = False
            return self.tick_at(event.pos[0])
        return None

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, tick: int, divergence=None) -> None:
        self.rect = rect
        pygame.draw.rect(surf, theme.PANEL, rect)
        pygame.draw.line(surf, theme.PANEL_EDGE, rect.topleft, rect.topright)
        bar = self.bar
        surf.blit(theme.text(f"t{self.first}", 17, theme.DIM), (rect.x + 12, bar.y - 3))
        surf.blit(theme.text(f"t{self.last}", 17, theme.DIM), (bar.right + 10, bar.y - 3))
        pygame.draw.rect(surf, theme.FAINT, bar, border_radius=5)
        done = pygame.Rect(bar.x, bar.y, self.x_of(tick) - bar.x, bar.h)
        pygame.draw.rect(surf, theme.ACCENT, done, border_radius=5)
        for t, kind in self.markers:
            mx = self.x_of(t)
            pygame.draw.line(surf, theme.BAD if kind == "alert" else theme.WARN, (mx, bar.y - 6), (mx,
                                                                                                   bar.bottom + 6), 2)
        hx = self.x_of(tick)
        pygame.draw.circle(surf, theme.INK, (hx, bar.centery), 8)
        if divergence is not None and len(divergence):
            d = np.asarray(divergence, np.float64)
            area = pygame.Rect(bar.x, bar.bottom + 10, bar.w, rect.bottom - bar.bottom - 14)
            ticks, cells = d[:, 0], d[:, 1]
            xs = bar.x + (ticks - self.first) / max(1, self.last - self.first) * bar.w
            ys = area.bottom - cells / max(1.0, cells.max()) * area.h
            if len(xs) > 1:
                pygame.draw.lines(surf, theme.BAD, False, list(zip(xs.tolist(), ys.tolist())), 2)
            surf.blit(theme.text(f"divergence: {int(cells[-1])} fish in another cell", 16, theme.BAD),
                      (rect.x + 12, area.y))


HELP = [
    ("Space", "pause / play"), (".", "one tick forward (paused)"), (",", "one tick back (replay)"),
    ("+ / -", "speed ×2 / ÷2 (¼× … 64×)"), ("click", "follow a fish"), ("Tab / Left / Right", "next / previous fish"),
    ("Esc", "stop following"), ("V", "field of view on/off"), ("M", "stuck heat map on/off"),
    ("A", "ASCII debug view on/off"), ("F", "fork: swap the followed fish's action (then 1-6)"),
    ("O", "back to the original after a fork"), ("S", "next scene"), ("H", "this help"), ("Q", "quit"),
]


def draw_help(surf: pygame.Surface) -> None:
    w, h = 560, 50 + 26 * len(HELP)
    rect = pygame.Rect(0, 0, w, h)
    rect.center = surf.get_rect().center
    layer = pygame.Surface(rect.size, pygame.SRCALPHA)
    layer.fill((8, 16, 30, 236))
    surf.blit(layer, rect)
    pygame.draw.rect(surf, theme.PANEL_EDGE, rect, 1)
    surf.blit(theme.text("Keys", 28, theme.INK, bold=True), (rect.x + 20, rect.y + 10))
    for k, (key, what) in enumerate(HELP):
        surf.blit(theme.text(key, 20, theme.ACCENT, bold=True), (rect.x + 20, rect.y + 42 + k * 26))
        surf.blit(theme.text(what, 20, theme.INK), (rect.x + 190, rect.y + 42 + k * 26))


def plan_progress(fish: FishSnapshot) -> str:
    """'since t120, ends t240 · waiting: plan_horizon' — how far the standing plan has come."""
    if len(fish.plan_state) < 4:
        return ""
    _, _, end, trigger = fish.plan_state[:4]
    parts = [f"since t{fish.last_decision_tick}"]
    if end != NO_END:
        parts.append(f"ends t{end}")
    if trigger >= 0:
        parts.append(f"asking again: {TRIGGER_NAMES[trigger].replace('_', ' ')}")
    return ", ".join(parts)
