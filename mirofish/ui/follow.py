"""The follow-a-fish panel: who the fish is, its plan and why, its thought, memories, places and
words against deeds, as of the tick on screen."""

from __future__ import annotations

from typing import Any

import numpy as np
import pygame

from ..actions import ACTION_NAMES
from ..fish.personality import BEHAVIOUR_ALERT, BEHAVIOUR_MIN_DECISIONS, behaviour_score
from ..fish.plans import NO_END
from ..fish.triggers import TRIGGER_NAMES
from ..grid import HEX
from ..snapshot import FishSnapshot, TankView
from . import theme
from .sparkline import sparkline


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
        self._tops_of: Any = None  # the config whose per-fish most energy _tops holds
        self._tops: list[int] | None = None

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
            behaviour = (behaviour_score(counts[fish], traits, counts.sum(axis=0), shown.plans),
                         int(counts[fish][1:].sum()))
        cfg, snap = shown.cfg, _standing(shown, shown.fish(fish))
        self._brain_line = _brain_line(cfg, fish)
        player = shown.player
        if player is not None and player.fish == fish:  # a person plays it: say so, and what they chose
            self._brain_line = f"PLAYED BY YOU: {player.doing()}"
        self._tick = shown.tick
        self._places = _places_lines(shown, view, fish)
        if cfg is not self._tops_of:  # the most energy each fish holds (a group's own max_energy)
            self._tops_of, self._tops = cfg, cfg.max_energy_of()
        top = self._tops[fish] if self._tops is not None and fish < len(self._tops) else view.max_energy
        self.draw(surf, rect, snap, energy_hist, last_decision, top / 100,
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
        pygame.draw.rect(surf, ecol, (bar.x, bar.y, int(bar.w * min(1.0, e / max(max_energy, 0.01))), bar.h))
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
        names = ACTION_NAMES if counts.size == len(ACTION_NAMES) else HEX.action_names  # (a hexagonal tank's)
        for k, name in enumerate(names):
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



def _standing(shown: Any, fish: FishSnapshot) -> FishSnapshot:
    """``fish`` with its plan worded by the end it can reach (PlanTable.standing, as ``trace``
    says it): a rest plan "until 100 energy" that resting (only below fish.rest_ceiling) never
    reaches reads "rest until t1018 (100 energy out of reach)"."""
    world = getattr(getattr(shown, "engine", None), "world", None)
    if world is None or len(fish.plan_state) < 3:
        return fish
    goal, param, end = fish.plan_state[:3]
    plan = shown.plans.standing(goal, param, end, int(world.rest_ceiling), short=True)
    return fish if plan == fish.plan else fish.model_copy(update={"plan": plan})


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
