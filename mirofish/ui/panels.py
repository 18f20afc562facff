"""The window's panels: the metrics HUD, the status lines, the help overlay (its lines come from
each scene's table of keys, ui/keys.py), the legends and the footer; the follow-a-fish panel
(ui/follow.py) and the replay timeline (ui/timeline.py) are re-exported here."""

from __future__ import annotations

from collections import deque
from typing import Any

import pygame

from ..observe.metrics import ranked
from . import theme
from .follow import FollowPanel as FollowPanel  # (re-exported: the panels' one door)
from .follow import plan_progress as plan_progress
from .sparkline import sparkline
from .timeline import MARK_COLOUR as MARK_COLOUR
from .timeline import Timeline as Timeline

Colour = tuple[int, int, int]  # an RGB colour (ui/theme.py)

# The HUD's columns, in order: the metrics the metric table (observe/metrics.py) ranks for it — the
# six of docs/design.md §4 with their healthy ranges, then the largest moving school first (on a
# narrow window the columns that do not fit are left out); the model's three only with a model.
HUD_METRICS = ranked("hud")


class Hud:
    """The metrics strip above the tank: six metrics (coloured against their healthy range,
    with sparklines), collective measures, alerts and the brain's status."""

    height = 86

    def __init__(self, history: int = 240):
        self.history: dict[str, deque] = {m.key: deque(maxlen=history) for m in HUD_METRICS}
        self._calls: deque = deque(maxlen=120)  # (wall time, model calls) for calls/s
        self.page = 0  # a narrow window shows the columns a page at a time (click "more")
        self.more_rect = pygame.Rect(0, 0, 0, 0)  # the "more" marker, when there are pages
        self.tip: tuple[list[str], pygame.Rect] | None = None  # the hovered column's explanation

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

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, metrics: dict, status: dict, brain: dict,
             first: list[str] | tuple[str, ...] = ()) -> None:
        """The columns (``first``: the keys shown first, ``metrics.hud_first``; the rest in
        :data:`HUD_METRICS`' order), a page at a time when they do not fit, and the status."""
        pygame.draw.rect(surf, theme.PANEL, rect)
        pygame.draw.line(surf, theme.PANEL_EDGE, rect.bottomleft, rect.bottomright)
        cols = hud_columns(brain, first)
        status_w, area, fit, pages = hud_fit(rect.w, len(cols))
        self.page %= pages
        cols = cols[self.page * fit:(self.page + 1) * fit]
        w = (area - (64 if pages > 1 else 0)) // fit
        spark_h = max(8, rect.h - 62)
        mouse, self.tip = theme.mouse_pos(), None
        for k, m in enumerate(cols):
            x = rect.x + 12 + k * w
            if pygame.Rect(x, rect.y, w, rect.h).collidepoint(mouse):  # what it measures, in what unit
                band = f"; healthy {m.fmt.format(m.healthy[0])}–{m.fmt.format(m.healthy[1])}" if m.healthy else ""
                self.tip = (theme.wrap(f"{m.label} ({m.unit}{band}): {m.doc}", 420, 16)[:4],
                            pygame.Rect(x, rect.bottom + 4, 440, 0))
            hist = self.history[m.key]
            value = hist[-1] if hist else 0.0
            colour = theme.health_colour(value, m.healthy, m.bad_below, m.bad_above) if hist else theme.DIM
            surf.blit(theme.fit(m.label, 17, w - 10, theme.DIM), (x, rect.y + 8))
            shown = m.fmt.format(value + 0.0) if hist else "…"
            surf.blit(theme.fit(shown, 26, w - 10, colour, bold=True), (x, rect.y + 24))
            sparkline(surf, pygame.Rect(x, rect.y + 52, w - 20, spark_h), hist, colour)
        self.more_rect = pygame.Rect(0, 0, 0, 0)
        if pages > 1:  # the other columns: a click shows the next page
            self.more_rect = pygame.Rect(rect.x + 12 + fit * w, rect.y + 20, 58, 40)
            pygame.draw.rect(surf, theme.PANEL_EDGE, self.more_rect, 1, border_radius=6)
            surf.blit(theme.text("more", 16, theme.INK), (self.more_rect.x + 10, self.more_rect.y + 3))
            surf.blit(theme.text(f"{self.page + 1}/{pages}", 15, theme.FAINT),
                      (self.more_rect.x + 12, self.more_rect.y + 21))
        sx = rect.right - status_w
        if brain.get("source") == "llm":
            brain = {**brain, "calls_per_s": self.calls_per_second(int(brain.get("calls", 0)))}
        lines = status_lines(status, brain)
        room = max(1, (rect.h - 8) // 19)
        for k, line in enumerate(lines[:room]):
            text = line[0] if k < room - 1 or len(lines) <= room else line[0] + " …"
            surf.blit(theme.fit(text, 18, status_w - 10, line[1]), (sx, rect.y + 6 + k * 19))


    def draw_tip(self, surf: pygame.Surface) -> None:
        """The hovered column's explanation, over whatever lies under the HUD (drawn last)."""
        if self.tip is None:
            return
        lines, at = self.tip
        box = pygame.Rect(at.x, at.y, at.w, 10 + 18 * len(lines)).clamp(surf.get_rect())
        theme.overlay(surf, box, alpha=245)
        for k, line in enumerate(lines):
            surf.blit(theme.text(line, 16, theme.INK), (box.x + 10, box.y + 5 + 18 * k))

    def click(self, pos: tuple[int, int]) -> bool:
        """A click on "more" shows the next page of columns."""
        if self.more_rect.collidepoint(pos):
            self.page += 1
            return True
        return False


def hud_columns(brain: dict[str, Any], first: list[str] | tuple[str, ...] = ()) -> list[Any]:
    """The HUD's columns in order: ``first`` (a preset's ``metrics.hud_first``: the schooling
    demo's school figures), then the rest in :data:`HUD_METRICS`' order; the model's three only
    with a model brain (no model: room for the schools)."""
    model = brain.get("source") == "llm" or brain.get("live", {}).get("source") == "llm"
    cols = [m for m in HUD_METRICS if model or not m.model_only]
    rank = {k: i for i, k in enumerate(first)}
    return sorted(cols, key=lambda m: rank.get(m.key, len(rank)))  # (stable: the rest keep their order)


def hud_hidden(width: int, brain: dict[str, Any], first: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The labels of the columns a HUD ``width`` px wide leaves to later pages ("more"), as
    :meth:`Hud.draw` lays them out."""
    cols = hud_columns(brain, first)
    return [m.label for m in cols[hud_fit(width, len(cols))[2]:]]


def hud_fit(width: int, n: int) -> tuple[int, int, int, int]:
    """How a HUD ``width`` px wide lays out ``n`` columns: (status column's width, the columns'
    area, columns a page, pages) — a page at a time when they do not fit, the "more" marker in
    a slot of its own."""
    status_w = min(280, max(190, width // 4))
    area = width - status_w - 24
    fit, pages = max(1, area // 112), 1
    if n > fit:
        fit = max(1, (area - 64) // 112)
        pages = -(-n // fit)
    return status_w, area, fit, pages


def status_lines(status: dict[str, Any], brain: dict[str, Any]) -> list[tuple[str, Colour]]:
    """The HUD's status column: the tick and speed, the mode, and the brain's part (a model's
    state and spending, a replay's, each user brain's fallbacks, or the embedded instinct)."""
    run = "PAUSED" if status.get("paused") else f"{status.get('speed', 1):g}x"
    lines: list[tuple[str, Colour]] = [(f"tick {status.get('tick', 0)}   {run}", theme.INK)]
    mode = status.get("mode")
    if mode:
        lines.append((mode, theme.ACCENT))
    source = brain.get("source")
    if source == "llm":
        lines += _model_lines(brain)
    elif source == "replay":
        what = f"model {brain['model']}" if brain.get("model") else brain.get("brain", "brain")
        lines.append((f"brain: recorded {what} (replayed{'; G re-asks' if brain.get('model') else ''})", theme.DIM))
    elif source in ("user", "mixed"):
        lines += _user_brain_lines(brain)
    else:
        lines.append(("brain: instinct (embedded)", theme.DIM))
    return lines


def _model_lines(brain: dict[str, Any]) -> list[tuple[str, Colour]]:
    """A model brain's lines: its state, its calls and tokens, its requests by kind, its budget."""
    lines = [_model_state(brain)]
    summaries = brain.get("summaries") or {}
    kept = f"  summaries kept {summaries.get('written', 0)}/{summaries['asked']}" if summaries.get("asked") else ""
    used = brain.get("budget", {}).get("used", 0)
    lines.append((f"{brain.get('calls_per_s', 0.0):.1f} calls/s  tokens {used:,}{kept}", theme.DIM))
    kinds = brain.get("requests_by_kind") or {}
    if kinds:  # every request the server received, by kind
        lines.append((f"requests {sum(kinds.values()):,}: " + ", ".join(f"{n:,} {k}" for k, n in kinds.items()),
                      theme.DIM))
    limit = brain.get("budget", {}).get("limit")
    if limit:
        left = max(0, limit - brain["budget"]["used"])
        lines.append((f"budget left {left:,}", theme.WARN if left < 0.2 * limit else theme.DIM))
    return lines


def _model_state(brain: dict[str, Any]) -> tuple[str, Colour]:
    """Whether the model answers (a server unreachable, a breaker open: instinct answers), and
    how much its thoughts copy the prompt's examples."""
    tiers = brain.get("tiers", {})
    eps = [e for t in tiers.values() for e in t.get("endpoints", [])]
    down = any(e.get("reachable") is False for e in eps)
    open_ = any(t.get("state") != "closed" for t in tiers.values())
    colour = theme.BAD if down or open_ else theme.GOOD
    state = "model UNREACHABLE: instinct answers" if down else ("breaker open: instinct answers" if open_
                                                                 else "model reachable")
    share = (brain.get("copying") or {}).get("thought_copy_share")
    if share is not None and not (down or open_):  # how much its thoughts copy the prompt's examples
        state += f"; thoughts copy {share:.0%}"  # (of them, near-copies of the prompt's examples)
        colour = theme.WARN if share > 0.3 else colour
    return state, colour


def _user_brain_lines(brain: dict[str, Any]) -> list[tuple[str, Colour]]:
    """A user brain's line (or, a mixed tank, each group's): who decides, its fallback rate. The
    group ``tank`` (config.FishConfig.group_names: the fish no group takes, and in the window the
    spare slots of fish added by a click — listed even when every fish is in a group) reads
    "tank (fish in no group)", as docs/groups.md describes it."""
    lines = []
    for group, part in brain.get("groups", {"": brain}).items():
        who = part.get("brain") or part.get("source", "")
        if group and who == group and part.get("spec"):  # a group's user brain is named by its class
            who = str(part["spec"]).rpartition(":")[2]  # ("rules: RuleBrain", not "rules: rules")
        rate = part.get("fallback_rate", 0.0)
        label = "tank (fish in no group)" if group == "tank" else group
        text = f"{label + ': ' if label else 'brain: '}{who}" + (f"  fallback {rate:.0%}" if rate else "")
        lines.append((text, theme.WARN if rate > 0.2 else theme.DIM))
    return lines


def draw_help(surf: pygame.Surface, lines: list[tuple[str, str]], title: str = "Keys") -> int:
    """An overlay listing ``lines`` (``(key or thing, what it means)``: a scene's table of keys,
    ui/keys.help_lines), wrapped to the window — in one column, or two where one does not fit
    (a laptop's 1024×600); H or Esc closes it. Returns how many lines it drew (all of them
    unless even two columns of small type are too tall)."""
    room_w, room_h = surf.get_width() - 20, surf.get_height() - 20
    for cols, size in ((1, 18), (1, 15), (2, 15), (2, 13)):
        w = min(900 * cols, room_w)
        col_w = w // cols
        key_w = min(230, col_w // 3)
        wrapped = [(key, theme.wrap(what, col_w - key_w - 30, size)) for key, what in lines]
        step = size + 4
        total = sum(max(1, len(ws)) for _, ws in wrapped)
        split, run = len(wrapped), 0  # the first line of the second column
        if cols == 2:
            for i, (_, ws) in enumerate(wrapped):
                if run >= (total + 1) // 2:
                    split = i
                    break
                run += max(1, len(ws))
        rows = max(sum(max(1, len(ws)) for _, ws in part) for part in (wrapped[:split], wrapped[split:]) if part)
        if 56 + step * rows <= room_h:
            break
    rect = pygame.Rect(0, 0, w, min(56 + step * rows, room_h))
    rect.center = surf.get_rect().center
    theme.overlay(surf, rect, alpha=250)
    surf.blit(theme.fit(title, 24, w - 40, theme.INK, bold=True), (rect.x + 20, rect.y + 10))
    drawn = 0
    for c, part in enumerate((wrapped[:split], wrapped[split:])):
        x, y = rect.x + 20 + c * col_w, rect.y + 44
        for key, ws in part:
            if y + step > rect.bottom:
                break
            surf.blit(theme.fit(key, size, key_w - 10, theme.ACCENT, bold=True), (x, y))
            for line in ws or [""]:
                surf.blit(theme.text(line, size, theme.INK), (x + key_w, y))
                y += step
            drawn += 1
    return drawn


def group_mark(surf: pygame.Surface, shape: str, colour: Any, cx: int, cy: int, r: int, width: int) -> None:
    """A group's mark round a fish at (cx, cy): a ring, or a diamond, square or triangle a little
    larger (GroupConfig.mark)."""
    d = r + 3
    if shape == "diamond":
        pygame.draw.polygon(surf, colour, [(cx, cy - d), (cx + d, cy), (cx, cy + d), (cx - d, cy)], width + 1)
    elif shape == "square":
        pygame.draw.rect(surf, colour, (cx - r, cy - r, 2 * r + 1, 2 * r + 1), width + 1)
    elif shape == "triangle":
        pygame.draw.polygon(surf, colour, [(cx, cy - d), (cx + d, cy + r), (cx - d, cy + r)], width + 1)
    else:
        pygame.draw.circle(surf, colour, (cx, cy), r, width)


def draw_legends(surf: pygame.Surface, rect: pygame.Rect, show_heat: bool,
                 groups: list[tuple[tuple[int, int, int], str, str]] | None = None) -> int:
    """What the colours mean: a mixed tank's groups (their rings and figures), personality, food,
    the heat map, a fork's rings — as many of them, in that order, as fit in ``rect`` (a short
    window's minimap below is never drawn over). Returns where it ends."""
    x, y, w = rect.x, rect.y, rect.w

    def room(h: int) -> bool:
        return y + h <= rect.bottom

    if not room(24):
        return y
    surf.blit(theme.fit("Legend", 20, w, theme.INK, bold=True), (x, y))
    y += 24
    for colour, line, shape in groups or ():  # a mixed tank's groups, as of the tick on screen
        if not room(20):
            return y
        group_mark(surf, shape, colour, x + 6, y + 8, 5, 1)  # the mark its fish wear in the tank
        surf.blit(theme.fit(line, 16, w - 18, theme.INK), (x + 18, y))
        y += 20
    if not room(48):
        return y
    surf.blit(theme.fit("fish colour = personality", 16, w, theme.DIM), (x, y))
    y += 18
    bar_w = max(60, w - 120)
    for k in range(bar_w):  # hue: loner → sociable
        soc = k / max(1, bar_w - 1)
        pygame.draw.line(surf, theme.fish_colour([int(soc * 100), 60, 50, 50, 50]), (x + k, y), (x + k, y + 10))
    surf.blit(theme.text("loner", 15, theme.DIM), (x, y + 12))
    soc_l = theme.text("sociable", 15, theme.DIM)
    surf.blit(soc_l, (x + bar_w - soc_l.get_width(), y + 12))
    y += 30
    if not room(20):
        return y
    surf.blit(theme.fit("brighter = more restless (less calm)", 15, w, theme.DIM), (x, y))
    y += 20
    if not room(32):
        return y
    for k in range(bar_w):  # food: fresh → rotting
        pygame.draw.line(surf, theme.food_colour(k, bar_w), (x + k, y), (x + k, y + 10))
    surf.blit(theme.text("fresh food", 15, theme.DIM), (x, y + 12))
    rot = theme.text("about to rot", 15, theme.DIM)
    surf.blit(rot, (x + bar_w - rot.get_width(), y + 12))
    y += 32
    if show_heat and room(18):
        surf.blit(theme.fit("heat map (M): refused or blocked moves per area, red = most", 15, w, theme.BAD),
                  (x, y))
        y += 18
    if room(18):
        surf.blit(theme.fit("fork: rings = where the original's fish are", 15, w, theme.DIM), (x, y))
        y += 18
    return y


def draw_footer(surf: pygame.Surface, rect: pygame.Rect, message: str, alarm: bool, alerts: list[str]) -> None:
    """The footer line: what the last command did, the tank's alerts on the right — or an
    alarm (a replay that left its recording) as a red banner."""
    if alarm and message:
        banner = pygame.Rect(rect.x, rect.y - 6, rect.w, rect.h + 6)
        pygame.draw.rect(surf, theme.ALARM, banner)
        surf.blit(theme.fit(message, 18, rect.w - 20, theme.INK, bold=True), (rect.x + 10, rect.y))
        return
    text = message or "H: keys   click: follow a fish   F: fork   space: pause   +/-: speed"
    room = rect.w - 20
    if alerts:  # the alert on the right, at most half the line; the message fits in what is left
        a = theme.fit("ALERT: " + "; ".join(alerts), 18, rect.w // 2, theme.BAD)
        surf.blit(a, (rect.right - a.get_width() - 10, rect.y + 3))
        room -= a.get_width() + 20
    surf.blit(theme.fit(text, 18, room, theme.DIM), (rect.x + 10, rect.y + 3))
