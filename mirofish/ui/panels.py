"""The window's panels: metrics HUD, follow-a-fish panel, replay timeline, help overlay
(its lines come from each scene's table of keys, ui/keys.py)."""

from __future__ import annotations

import itertools
from collections import deque
from typing import Any

import numpy as np
import pygame

from ..actions import ACTION_NAMES
from ..fish.personality import BEHAVIOUR_ALERT, BEHAVIOUR_MIN_DECISIONS, behaviour_score
from ..fish.plans import NO_END
from ..fish.triggers import TRIGGER_NAMES
from ..observe.metrics import ranked
from ..session.influence_marks import InfluenceMarks, Mark, number
from ..snapshot import FishSnapshot, TankView
from . import theme

# The HUD's columns, in order: the metrics the metric table (observe/metrics.py) ranks for it — the
# six of docs/design.md §4 with their healthy ranges, then the largest moving school first (on a
# narrow window the columns that do not fit are left out); the model's three only with a model.
HUD_METRICS = ranked("hud")


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

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, metrics: dict, status: dict, brain: dict) -> None:
        pygame.draw.rect(surf, theme.PANEL, rect)
        pygame.draw.line(surf, theme.PANEL_EDGE, rect.bottomleft, rect.bottomright)
        model = brain.get("source") == "llm" or brain.get("live", {}).get("source") == "llm"
        cols = [m for m in HUD_METRICS if model or not m.model_only]  # no model: room for the schools
        status_w = min(280, max(190, rect.w // 4))
        area = rect.w - status_w - 24
        fit, pages = max(1, area // 112), 1
        if len(cols) > fit:  # a page at a time, the marker in a slot of its own
            fit = max(1, (area - 64) // 112)
            pages = -(-len(cols) // fit)
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


def _brain_line(cfg: Any, fish: int) -> str:
    """Who decides for ``fish``: its group and that group's brain (a mixed tank), or the brain
    when it is not the embedded one; "" for the instinct tank."""
    from ..brains.prompts import prompt_name
    from ..observe.groups import brain_label

    def label(c: Any) -> str:
        return brain_label(c) + ("" if c.brain.kind == "instinct" else f", prompt {prompt_name(c.brain.prompt)}")

    if cfg.fish.groups:
        g = cfg.fish.group_of()[fish] if fish < cfg.fish.slots else len(cfg.fish.groups)
        return f"group {cfg.fish.group_names()[g]}: {label(cfg.for_group(g))}"
    return "" if cfg.brain.kind == "instinct" else f"brain: {label(cfg)}"


Colour = tuple[int, int, int]  # an RGB colour (ui/theme.py)


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
    """A user brain's line (or, a mixed tank, each group's): who decides, its fallback rate."""
    lines = []
    for group, part in brain.get("groups", {"": brain}).items():
        who = part.get("brain") or part.get("source", "")
        rate = part.get("fallback_rate", 0.0)
        text = f"{group + ': ' if group else 'brain: '}{who}" + (f"  fallback {rate:.0%}" if rate else "")
        lines.append((text, theme.WARN if rate > 0.2 else theme.DIM))
    return lines


class FollowPanel:
    """Everything about the followed fish, from its snapshot."""

    width = 380

    def __init__(self) -> None:
        self._behaviour: tuple[float | None, int] = (None, 0)
        self._word_deed: dict | None = None
        self._places: list[str] = []  # the followed fish's remembered places (fish.places)
        self._page: pygame.Surface | None = None
        self.scroll = 0
        self._content_h = 0
        self._view_h = 0

    def scroll_by(self, dy: int) -> None:
        self.scroll = max(0, min(self.scroll + dy, max(0, self._content_h - self._view_h)))

    def draw_followed(self, surf: pygame.Surface, rect: pygame.Rect, shown: Any, view: TankView, fish: int,
                      energy_hist, last_decision: dict | None, why: list[tuple[str, tuple]] | None) -> None:
        """Fish ``fish`` of the session ``shown`` (its tank ``view``), as of the tick shown: its
        snapshot, how it behaves against its character (plans by goal, the tank's for scale), its
        words and deeds."""
        word_deed = shown.metrics.word_deed.fish(fish)
        if shown.metrics.first_tick > 0:
            word_deed["since"] = shown.metrics.first_tick
        counts = shown.decisions().counts
        behaviour: tuple[float | None, int] = (None, 0)
        if fish < len(counts):
            traits = list(shown.fish(fish).traits.values())
            behaviour = behaviour_score(counts[fish], traits, counts.sum(axis=0)), int(counts[fish][1:].sum())
        cfg, snap = shown.cfg, shown.fish(fish)
        self._brain_line = _brain_line(cfg, fish)
        player = shown.player
        if player is not None and player.fish == fish:  # a person plays it: say so, and what they chose
            self._brain_line = f"PLAYED BY YOU: {player.doing()}"
        self._tick = shown.tick
        self._places = _places_lines(shown, view, fish)
        self.draw(surf, rect, snap, energy_hist, last_decision, view.max_energy / 100,
                  shown.drift(fish), cfg.brain.drift_alert, why, behaviour=behaviour,
                  word_deed=word_deed)

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, fish: FishSnapshot | None, energy_hist,
             last_decision: dict | None, max_energy: float, drift: tuple[float, str] | None = None,
             drift_alert: float | None = None, why: list[tuple[str, tuple]] | None = None,
             behaviour: tuple[float | None, int] = (None, 0),
             word_deed: dict | None = None) -> None:
        """``drift``: the drift score of the fish's newest summary and who wrote it, ``model`` or
        ``template`` (:meth:`~mirofish.session.base.Session.drift`; None: no summary yet);
        ``drift_alert``: the threshold below which it is out of character. Drawn onto a tall
        page that scrolls (mouse wheel) when it is taller than the window."""
        size = (rect.w, max(rect.h, 1400))
        if self._page is None or self._page.get_size() != size:  # one page, reused every frame
            self._page = pygame.Surface(size)
        page = self._page
        self._behaviour = behaviour
        self._word_deed = word_deed
        bottom = self._draw_page(page, page.get_rect(), fish, energy_hist, last_decision, max_energy, drift,
                                 drift_alert, why)
        overflow = bottom + 12 > rect.h
        hint_h = 22 if overflow else 0  # a strip of its own for the hint: it never covers text
        view_h = rect.h - hint_h
        self._content_h, self._view_h = bottom + 12, view_h
        self.scroll_by(0)
        surf.blit(page, rect.topleft, pygame.Rect(0, self.scroll, rect.w, view_h))
        pygame.draw.line(surf, theme.PANEL_EDGE, rect.topleft, rect.bottomleft)
        if overflow:  # a scrollbar, and a hint
            bar_h = max(30, view_h * view_h // self._content_h)
            bar_y = rect.y + (view_h - bar_h) * self.scroll // max(1, self._content_h - view_h)
            pygame.draw.rect(surf, theme.FAINT, (rect.right - 6, bar_y, 4, bar_h), border_radius=2)
            strip = pygame.Rect(rect.x + 1, rect.bottom - hint_h, rect.w - 1, hint_h)
            pygame.draw.rect(surf, theme.PANEL, strip)
            pygame.draw.line(surf, theme.PANEL_EDGE, strip.topleft, strip.topright)
            at_end = self.scroll >= self._content_h - view_h
            more = theme.text("end (wheel scrolls up)" if at_end else "… wheel scrolls for more", 15, theme.DIM)
            surf.blit(more, more.get_rect(midright=(rect.right - 12, strip.centery)))

    def _draw_page(self, surf: pygame.Surface, rect: pygame.Rect, fish: FishSnapshot | None, energy_hist,
                   last_decision: dict | None, max_energy: float, drift: tuple[float, str] | None,
                   drift_alert: float | None, why: list[tuple[str, tuple]] | None = None) -> int:
        """The panel's content, section by section; returns where it ends."""
        pygame.draw.rect(surf, theme.PANEL, rect)
        x, y, w = rect.x + 16, rect.y + 12, rect.w - 32
        if fish is None:
            for k, line in enumerate(["Click a fish to follow it.", "Tab / arrow keys: next fish.",
                                      "H: all keys."]):
                surf.blit(theme.fit(line, 20, w, theme.DIM), (x, y + 8 + k * 24))
            return y + 80
        y = self._draw_head(surf, x, y, w, fish, energy_hist, max_energy)
        if not fish.in_water:  # taken out, starved or caught (docs/species.md), or not yet added or born
            for part in theme.wrap("not in the water at this tick: not yet added or born, or taken out, starved "
                                   "or caught", w, 17)[:3]:
                surf.blit(theme.fit(part, 17, w, theme.WARN), (x, y + 2))
                y += 20
            y += 6
        y = self._draw_plan(surf, x, y, w, fish)
        y = self._draw_why(surf, x, y, w, why)
        y = self._draw_last(surf, x, y, w, last_decision)
        y = self._draw_word_deed(surf, x, y, w)
        for i, line in enumerate(self._places):  # remembered places and its range (fish.places)
            for part in theme.wrap(line, w, 16)[:3]:
                surf.blit(theme.fit(part, 16, w, theme.INK if i == 0 else theme.DIM), (x, y + 4))
                y += 18
        y = self._draw_memories(surf, x, y, w, fish)
        y = self._draw_in_character(surf, x, y, w, drift, drift_alert)
        return self._draw_actions(surf, x, y, w, fish)

    def _draw_head(self, surf, x: int, y: int, w: int, fish: FishSnapshot, energy_hist, max_energy: float) -> int:
        """Who it is: id, age, place, persona, traits; its energy and the energy sparkline."""
        colour = theme.fish_colour(list(fish.traits.values()))
        pygame.draw.circle(surf, colour, (x + 8, y + 12), 8)
        surf.blit(theme.text(f"Fish {fish.id}", 30, theme.INK, bold=True), (x + 24, y))
        # a tank starts with fish of every age (they were born before its first tick)
        born = " (born before t0)" if fish.age > getattr(self, "_tick", fish.age) else ""
        surf.blit(theme.fit(f"age {fish.age}{born}   at ({fish.x}, {fish.y})", 18, w - 140, theme.DIM),
                  (x + 140, y + 8))
        y += 30
        for line in theme.wrap(fish.persona, w, 18)[:3]:
            surf.blit(theme.text(line, 18, theme.ACCENT), (x, y))
            y += 18
        brain = getattr(self, "_brain_line", "")
        if brain:  # a mixed tank's group, or a brain other than the embedded one
            played = brain.startswith("PLAYED BY YOU")
            surf.blit(theme.fit(brain, 16, w, theme.WARN if played else theme.INK, bold=played), (x, y))
            y += 18
        y += 4
        col_w = w // 2
        bar_w = max(24, col_w - 90)
        for k, (name, v) in enumerate(fish.traits.items()):  # traits as small bars, two columns
            cx, cy = x + (k % 2) * col_w, y + (k // 2) * 18
            surf.blit(theme.fit(name, 16, 80, theme.DIM), (cx, cy))
            pygame.draw.rect(surf, theme.FAINT, (cx + 82, cy + 4, bar_w, 8), 1)
            pygame.draw.rect(surf, colour, (cx + 82, cy + 4, int(bar_w * v / 100), 8))
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
        return y

    def _draw_plan(self, surf, x: int, y: int, w: int, fish: FishSnapshot) -> int:
        surf.blit(theme.fit(f"plan: {fish.plan}", 20, w, theme.ACCENT, bold=True), (x, y))
        y += 21
        progress = plan_progress(fish)
        if progress:
            surf.blit(theme.fit(progress, 17, w, theme.DIM), (x, y))
            y += 18
        surf.blit(theme.fit(f"doing {fish.intent}    stuck {fish.stuck_ticks} (peak {fish.max_stuck_ticks})",
                            18, w, theme.INK), (x, y))
        y += 20
        return y

    @staticmethod
    def _draw_why(surf, x: int, y: int, w: int, why: list[tuple[str, tuple]] | None) -> int:
        if why:  # the answer to "why?" (I)
            pygame.draw.rect(surf, theme.CARD, (x - 6, y, w + 12, 8 + 17 * sum(
                len(theme.wrap(t, w, 17)) for t, _ in why)), border_radius=6)
            y += 4
            for text, colour in why:
                for line in theme.wrap(text, w, 17):
                    surf.blit(theme.text(line, 17, colour), (x, y))
                    y += 17
            y += 8
        return y

    def _draw_last(self, surf, x: int, y: int, w: int, last_decision: dict | None) -> int:
        if last_decision:
            d = last_decision
            because = f": {d['reason'].replace('_', ' ')}" if d.get("reason") else ""
            for line in theme.wrap(f"last decision t{d['tick']}: {d['action']}  [{d['tier']}{because}]", w, 18)[:2]:
                surf.blit(theme.text(line, 18, theme.WARN if because else theme.INK), (x, y))
                y += 18
            if d.get("ended_by"):  # the plan before it did not run to its horizon: say what ended it
                for line in theme.wrap(f"the plan before ended early, at t{d['tick']}: {d['ended_by']}", w, 17)[:2]:
                    surf.blit(theme.text(line, 17, theme.WARN), (x, y))
                    y += 17
            if d.get("thought"):
                for line in theme.wrap(f"\u201c{d['thought']}\u201d", w, 17)[:2]:
                    surf.blit(theme.text(line, 17, theme.DIM), (x, y))
                    y += 17
            y = self._draw_exchange(surf, x, y, w, d.get("call"))
        return y

    @staticmethod
    def _draw_memories(surf, x: int, y: int, w: int, fish: FishSnapshot) -> int:
        y += 6
        surf.blit(theme.text("short memory", 17, theme.FAINT), (x, y))
        y += 17
        for m in fish.short_memory[-8:]:
            surf.blit(theme.fit(m, 17, w, theme.INK), (x, y))
            y += 17
        y += 4
        surf.blit(theme.text("long memory", 17, theme.FAINT), (x, y))
        y += 17
        for s in fish.summaries[-3:]:
            body = s.split(" Anchors:")[0]
            for line in theme.wrap(body, w, 16)[:4]:
                surf.blit(theme.text(line, 16, theme.DIM), (x, y))
                y += 16
        if not fish.summaries:
            surf.blit(theme.text("(none yet: one every 20 ticks)", 16, theme.DIM), (x, y))
            y += 16
        return y

    def _draw_in_character(self, surf, x: int, y: int, w: int, drift: tuple[float, str] | None,
                           drift_alert: float | None) -> int:
        # In character? The behaviour score applies to every brain; the text drift only to
        # summaries a model wrote. A figure that does not apply says n/a, never a green 0.
        score, seen = self._behaviour
        if score is None:
            line, col = f"behaviour: n/a ({seen} of {BEHAVIOUR_MIN_DECISIONS} plans needed)", theme.DIM
        else:
            alert = score < BEHAVIOUR_ALERT
            line = f"behaviour vs personality {score:.2f}" + ("  ALERT: out of character" if alert else "")
            col = theme.BAD if alert else theme.GOOD
        surf.blit(theme.fit(line, 17, w, col), (x, y + 2))
        y += 20
        if drift is not None and drift[1] == "template":
            # a template summary is facts in set words, not the fish's own: scored against the persona
            # it measures nothing about its character, so it never alarms (the model brain's do)
            line = (f"drift: n/a for a template summary (it scores {drift[0]:.2f}; only a model's own summaries "
                    "are judged)")
            col = theme.DIM
        elif drift is not None:  # the newest summary a model wrote against the persona: report's drift score
            score, _ = drift
            alert = drift_alert is not None and score < drift_alert
            line = f"drift {score:.2f} (newest model summary vs persona, 1 = in character)"
            if alert:
                line = f"drift {score:.2f} < {drift_alert:.2f}  ALERT: out of character"
            col = theme.BAD if alert else theme.GOOD
        else:
            line, col = "drift: n/a (no summary yet: one every 20 ticks)", theme.DIM
        surf.blit(theme.fit(line, 17, w, col), (x, y + 2))
        y += 22
        y += 4
        return y

    @staticmethod
    def _draw_actions(surf, x: int, y: int, w: int, fish: FishSnapshot) -> int:
        colour = theme.fish_colour(list(fish.traits.values()))
        counts = np.array(fish.counters["actions"], np.float64)
        total = max(1.0, counts.sum())
        surf.blit(theme.text("actions so far", 17, theme.FAINT), (x, y))
        y += 18
        for k, name in enumerate(ACTION_NAMES):
            share = counts[k] / total
            surf.blit(theme.text(name, 16, theme.DIM), (x, y))
            pygame.draw.rect(surf, colour, (x + 60, y + 3, int((w - 110) * share), 9))
            surf.blit(theme.text(f"{share:.0%}", 16, theme.DIM), (x + w - 40, y))
            y += 15
        return y

    @staticmethod
    def _draw_exchange(surf: pygame.Surface, x: int, y: int, w: int, call: dict | None) -> int:
        """What the fish's model saw (its own message; the shared prefix is the same for every
        fish) and what it said, raw, with how the reply was read."""
        if not call:
            return y
        y += 4
        where = "reply cache" if call.get("cached") else f"{call.get('latency_s', 0):.2f} s"
        head = (f"what it saw ({call['model']}, {where}, {call.get('prompt_tokens', 0)}+"
                f"{call.get('completion_tokens', 0)} tokens; G asks again)")
        surf.blit(theme.fit(head, 16, w, theme.FAINT), (x, y))
        y += 17
        recalled = call.get("recalled")
        if isinstance(recalled, list) and recalled:  # what its memory chose to tell it (docs/memory.md)
            scores = [float(r[1]) for r in recalled if isinstance(r, list) and len(r) == 2]
            line = (f"its memory recalled {len(recalled)} item{'s' if len(recalled) != 1 else ''} (#"
                    + ", #".join(str(r[0]) for r in recalled[:6]) + ")"
                    + (f", scores {max(scores):.2f}..{min(scores):.2f}" if scores else ""))
            surf.blit(theme.fit(line, 15, w, theme.DIM), (x, y))
            y += 16
        for line in str(call.get("user", "")).split("\n")[:16]:
            for part in theme.wrap(line, w - 8, 15)[:3]:
                surf.blit(theme.text(part, 15, theme.DIM), (x + 8, y))
                y += 15
        ok = call.get("read") == "ok"
        surf.blit(theme.fit(f"what it said [{call.get('read')}]", 16, w, theme.FAINT if ok else theme.BAD), (x, y + 2))
        y += 18
        for part in theme.wrap(str(call.get("reply")), w - 8, 15)[:4]:
            surf.blit(theme.text(part, 15, theme.INK), (x + 8, y))
            y += 15
        return y

    def _draw_word_deed(self, surf: pygame.Surface, x: int, y: int, w: int) -> int:
        """Does the fish do what it says? Its word-and-deed shares and its newest judged plan."""
        wd = self._word_deed
        if not wd or not wd["plans_judged"]:
            return y
        y += 6
        if wd["word_agrees"] is None:
            n = wd["plans_judged"]
            line = f"deeds: {wd['deed_done']:.0%} of {n} plan{'s' if n != 1 else ''} happened (no thoughts to judge)"
        else:
            line = (f"words agree {wd['word_agrees']:.0%} of {wd['thoughts_judged']} · plans happened "
                    f"{wd['deed_done']:.0%} · both {wd['word_and_deed']:.0%}")
        if wd.get("since"):  # a replay after a seek measures from the keyframe it restored
            line += f" (counted from t{wd['since']}, where this replay started)"
        low = wd["word_agrees"] is not None and wd["word_agrees"] < 0.5
        for part in theme.wrap(line, w, 15)[:2]:  # two readable lines rather than one shrunk to fit
            surf.blit(theme.fit(part, 15, w, theme.WARN if low else theme.INK), (x, y))
            y += 16
        y += 1
        if wd["recent"]:
            r = wd["recent"][-1]
            said = ("n/a" if r["word"] is None else "agreed" if r["word"] else
                    "claimed food it did not see" if r.get("unfounded") else "DISAGREED")
            text = f"last: {r['goal']} t{r['tick']}-t{r['end']}: words {said}, {'done' if r['deed'] else 'not done'}"
            surf.blit(theme.fit(text, 15, w, theme.DIM), (x, y))
            y += 16
        return y


MARK_COLOUR = theme.ACCENT  # a pivotal decision's mark on the timeline (amber)
MARK_FAINT = theme.DIM  # the outline of a non-pivotal decision's mark
MARK_ROW = 14  # the marks' row above the bar (the bar moves down by it when there are marks)
MARK_W = 12  # a mark's width; marks closer than this are set apart (a thin line shows each one's tick)


class Timeline:
    """Replay scrubber: drag to seek; markers for alerts (red) and forks (amber); under it, a
    fork's divergence curve. With an influence study (``influence``: its marks,
    session/influence_marks.py) a row above the bar marks its decisions — pivotal ones amber,
    the next of its ranking faintly; the mouse over one shows what it was (:meth:`draw_tip`)."""

    height = 64

    def __init__(self, first: int, last: int, markers: list[tuple[int, str]] | None = None,
                 influence: InfluenceMarks | None = None):
        self.first, self.last = first, last
        self.markers = markers or []
        self.influence = influence if influence is not None and influence.marks else None
        self.rect = pygame.Rect(0, 0, 0, 0)
        self.dragging = False
        self.seek_to = first  # the tick the last event it took asks for
        self.pointer: tuple[int, int] | None = None  # where the mouse is (the window's motion events)
        self.drawn_marks: list[tuple[pygame.Rect, Mark]] = []  # each mark drawn last frame: its box, its decision
        self.hovered: Mark | None = None  # the mark under the mouse last frame

    def tick_at(self, x: int) -> int:
        bar = self.bar
        f = min(1.0, max(0.0, (x - bar.x) / max(1, bar.w)))
        return int(round(self.first + f * (self.last - self.first)))

    @property
    def bar(self) -> pygame.Rect:
        return pygame.Rect(self.rect.x + 70, self.rect.y + 12 + (MARK_ROW if self.influence else 0),
                           self.rect.w - 140, 10)

    def x_of(self, tick: int) -> int:
        bar = self.bar
        if self.last <= self.first:  # nothing kept before now yet: the handle sits at now
            return bar.right
        return int(bar.x + (tick - self.first) / (self.last - self.first) * bar.w)

    def track(self, event) -> None:
        """Follow the mouse (every motion event of the window, whoever takes it) for the marks' hover."""
        if event.type == pygame.MOUSEMOTION:
            self.pointer = tuple(event.pos)
        elif event.type == getattr(pygame, "WINDOWLEAVE", -1):
            self.pointer = None

    def mark_at(self, pos: tuple[int, int]) -> Mark | None:
        """The influence mark drawn at ``pos`` last frame (None: none there)."""
        for box, mark in reversed(self.drawn_marks):  # the last drawn lies on top
            if box.collidepoint(pos):
                return mark
        return None

    def handle(self, event) -> bool:
        """Whether the event is the timeline's (a press on the bar, a drag, its release): then
        :attr:`seek_to` is the tick it asks for."""
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.bar.inflate(20, 18).collidepoint(
                event.pos):  # the handle at either end sticks out of the bar: it counts
            self.dragging = True
        elif event.type == pygame.MOUSEMOTION and self.dragging:
            pass
        elif event.type == pygame.MOUSEBUTTONUP and event.button == 1 and self.dragging:
            self.dragging = False
        else:
            return False
        self.seek_to = self.tick_at(event.pos[0])
        return True

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, tick: int, divergence=None) -> None:
        self.rect = rect
        pygame.draw.rect(surf, theme.PANEL, rect)
        pygame.draw.line(surf, theme.PANEL_EDGE, rect.topleft, rect.topright)
        bar = self.bar
        surf.blit(theme.text(f"t{self.first}", 17, theme.DIM), (rect.x + 12, bar.y - 3))
        surf.blit(theme.text(f"t{self.last}", 17, theme.DIM), (bar.right + 10, bar.y - 3))
        pygame.draw.rect(surf, theme.FAINT, bar, border_radius=5)
        done = pygame.Rect(bar.x, bar.y, self.x_of(tick) - bar.x, bar.h)
        pygame.draw.rect(surf, theme.PROGRESS, done, border_radius=5)
        for t, kind in self.markers:
            mx = self.x_of(t)
            colour = theme.BAD if kind == "alert" else theme.ACCENT
            pygame.draw.line(surf, colour, (mx, bar.y - 8), (mx, bar.bottom + 8), 3 if kind == "fork" else 2)
            if kind == "fork":
                label = theme.text(f"fork t{t}", 15, theme.ACCENT)
                surf.blit(label, (min(mx + 4, bar.right - label.get_width()), bar.bottom + 4))
        self._draw_marks(surf)
        hx = self.x_of(tick)
        pygame.draw.circle(surf, theme.INK, (hx, bar.centery), 8)
        if divergence is not None and len(divergence):
            d = np.asarray(divergence, np.float64)
            area = pygame.Rect(bar.x, bar.bottom + 22, bar.w, rect.bottom - bar.bottom - 30)
            if area.h < 12:
                return
            ticks, cells = d[:, 0], d[:, 1]
            top = max(1.0, float(cells.max()))
            pygame.draw.line(surf, theme.FAINT, area.bottomleft, area.bottomright)  # axes
            pygame.draw.line(surf, theme.FAINT, area.topleft, area.bottomleft)
            surf.blit(theme.text(f"{top:.0f}", 14, theme.DIM), (area.x - 30, area.y - 6))
            surf.blit(theme.text("0", 14, theme.DIM), (area.x - 14, area.bottom - 8))
            xs = bar.x + (ticks - self.first) / max(1, self.last - self.first) * bar.w
            ys = area.bottom - cells / top * area.h
            if len(xs) > 1:
                pygame.draw.lines(surf, theme.BAD, False, list(zip(xs.tolist(), ys.tolist())), 2)
            surf.blit(theme.fit(f"fish in another cell than in the original (now {int(cells[-1])})", 15,
                                area.w - 8, theme.BAD), (area.x + 6, area.y))

    def _placed(self, influence: InfluenceMarks) -> list[tuple[int, Mark]]:
        """Where each mark goes in the row (x, mark): the pivotal ones at their ticks, set apart
        where they would overlap; the faint ones only where there is room left."""
        bar = self.bar
        pivotal = sorted((m for m in influence.marks if m.pivotal), key=lambda m: (m.tick, m.rank))
        step = min(MARK_W + 2, bar.w / max(1, len(pivotal)))
        xs: list[float] = []
        for m in pivotal:  # left to right, each at least a step after the one before …
            x = float(self.x_of(m.tick))
            xs.append(max(x, xs[-1] + step) if xs else x)
        limit = bar.right + MARK_W / 2
        for k in range(len(xs) - 1, -1, -1):  # … and none past the bar's end
            xs[k] = min(xs[k], limit)
            limit = xs[k] - step
        placed = [(int(round(x)), m) for x, m in zip(xs, pivotal)]
        for m in (m for m in influence.marks if not m.pivotal):
            x = self.x_of(m.tick)
            if all(abs(x - px) >= MARK_W + 2 for px, _ in placed):
                placed.append((x, m))
        return placed

    def _draw_marks(self, surf: pygame.Surface) -> None:
        """The influence study's row of marks above the bar, and which one the mouse is over."""
        self.drawn_marks, self.hovered = [], None
        influence = self.influence
        if influence is None:
            return
        bar = self.bar
        top, tip = self.rect.y + 5, bar.y - 3  # a mark: a triangle pointing down at its tick
        placed = sorted(self._placed(influence), key=lambda pm: pm[1].pivotal)  # the pivotal ones drawn last, on top
        for x, m in placed:
            box = pygame.Rect(x - MARK_W // 2 - 2, top - 2, MARK_W + 4, tip - top + 6)
            self.drawn_marks.append((box, m))
        if self.pointer is not None:
            self.hovered = self.mark_at(self.pointer)
        for x, m in placed:
            at = self.x_of(m.tick)
            hot = m is self.hovered
            half = MARK_W // 2 if m.pivotal or hot else MARK_W // 2 - 2
            y0 = top if m.pivotal or hot else top + 3
            points = [(x - half, y0), (x + half, y0), (x, tip)]
            colour = MARK_COLOUR if m.pivotal else MARK_FAINT
            if x != at:  # set apart from its tick: a thin line to it
                pygame.draw.line(surf, colour, (x, tip), (at, bar.y - 1), 1)
            else:
                pygame.draw.line(surf, colour, (x, tip), (x, bar.y - 1), 1)
            if m.pivotal:
                pygame.draw.polygon(surf, MARK_COLOUR, points)
                pygame.draw.polygon(surf, theme.INK if hot else theme.ACCENT_DARK, points, 2 if hot else 1)
            else:
                pygame.draw.polygon(surf, theme.INK if hot else MARK_FAINT, points, 1)
        self._draw_legend(surf, influence, sorted(x for x, _ in placed))

    def _draw_legend(self, surf: pygame.Surface, influence: InfluenceMarks, xs: list[int]) -> None:
        """What the marks are, in the widest stretch of the row without one (if there is room)."""
        bar = self.bar
        n = len(influence.pivotal)
        what = (f"{n} of {influence.tested} decisions pivotal (amber)" if n else
                f"none of {influence.tested} decisions pivotal; the strongest faint")
        text = f"influence on {influence.outcome}: {what} · hover a mark · a click forks its strongest alternative"
        edges = [bar.x - MARK_W, *xs, bar.right + MARK_W]
        gaps = [(b - a - 2 * MARK_W, a + MARK_W) for a, b in itertools.pairwise(edges)]
        room, x = max(gaps)
        if room < 140:
            return
        label = theme.fit(text, 15, room, theme.DIM)
        surf.blit(label, (x, self.rect.y + 4))

    def tip_lines(self, mark: Mark) -> list[tuple[str, tuple]]:
        """What the tooltip says about ``mark``: the decision, its effect and interval, the verdict,
        the strongest alternative; then the outcome and what a click does."""
        verdict = "pivotal" if mark.pivotal else "not pivotal (inside the null band)"
        head = (f"t{mark.tick} fish {mark.fish}: {mark.recorded} — effect {number(mark.effect)} "
                f"[{number(mark.low)}, {number(mark.high)}], {verdict}")
        if mark.alternative:
            head += f"; strongest alternative: {mark.alternative}"
        influence = self.influence
        if influence is None:
            return [(head, theme.INK)]
        recorded = f": {number(influence.outcome_recorded)} as recorded" if influence.outcome_recorded is not None \
            else ""
        if recorded and mark.alternative and mark.alternative_outcome is not None:
            recorded += f", {number(mark.alternative_outcome)} with {mark.alternative}"
        band = f"; null band [{number(mark.band[0])}, {number(mark.band[1])}]" if mark.band else ""
        more = f"outcome {influence.outcome}{recorded}{band}; rank {mark.rank} of {influence.tested}"
        click = (f"click: go to t{mark.tick}, follow fish {mark.fish} and fork it with {mark.alternative}"
                 if mark.alternative else f"click: go to t{mark.tick} and follow fish {mark.fish}")
        return [(head, MARK_COLOUR if mark.pivotal else theme.INK), (more, theme.DIM), (click, theme.DIM)]

    def draw_tip(self, surf: pygame.Surface) -> pygame.Rect | None:
        """The hovered mark's tooltip over whatever lies above the timeline, inside the window at
        every size (drawn last); returns its box (None: no mark under the mouse)."""
        mark = self.hovered
        if mark is None:
            return None
        area = surf.get_rect()
        width = min(620, area.w - 16)
        lines = [(part, colour) for text, colour in self.tip_lines(mark) for part in theme.wrap(text, width - 20, 16)]
        box = pygame.Rect(0, 0, width, 10 + 18 * len(lines))
        at = next((b for b, m in self.drawn_marks if m is mark), self.rect)
        box.midbottom = (at.centerx, at.top - 4)
        if box.top < area.top:  # no room above the mark: under it
            box.top = at.bottom + 4
        box = box.clamp(area)
        theme.overlay(surf, box, edge=MARK_COLOUR if mark.pivotal else theme.PANEL_EDGE, alpha=245)
        for k, (line, colour) in enumerate(lines):
            surf.blit(theme.fit(line, 16, box.w - 20, colour), (box.x + 10, box.y + 5 + 18 * k))
        return box


def _places_lines(shown: Any, view: TankView, fish: int) -> list[str]:
    """The followed fish's remembered places and territory figures (tanks with fish.places)."""
    places = view.places
    if places is None:
        return []
    said = places.describe(fish) or "none yet"
    lines = [f"places it ate at: {said}"]
    territory = getattr(shown.metrics, "territory", None)
    if territory is not None and territory.taken:
        t = territory.fish(fish)
        lines.append(f"home range {t['home_range']:.0f} cells over the last 5 min · ate back at a place "
                     f"{t['returns']} of {t['meals']} meals")
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


def plan_progress(fish: FishSnapshot) -> str:
    """'chosen at t120, ends t240, asking again: plan horizon' — how far the standing plan has come."""
    if len(fish.plan_state) < 4:
        return ""
    _, _, end, trigger = fish.plan_state[:4]
    parts = [f"chosen at t{fish.last_decision_tick}" if fish.last_decision_tick >= 0 else "since the start"]
    if end != NO_END:
        parts.append(f"ends t{end}")
    if trigger >= 0:
        parts.append(f"asking again: {TRIGGER_NAMES[trigger].replace('_', ' ')}")
    return ", ".join(parts)


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
