"""The referential game in the window: sender card, message, candidates, glossary, charts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pygame

from ...observe.recording import RecordingError
from ...scenes.referential.experiment import Experiment
from ...scenes.referential.parts import PARTS
from ...scenes.referential.recording import ReferentialRecorder, ReferentialRecording
from ...session.referential import ObjectShown, ReferentialSession, ReferentialShown, RoundShown
from .. import theme
from ..charts import draw_axes_chart
from ..keys import Binding, Line, Row
from ..panels import Timeline
from .base import PacedScene

if TYPE_CHECKING:
    from ...scenes.referential.game import GameObject

# the game's model, handed to its session: its package's own parts (scenes/referential/parts.py)

#: A card's edge by the value it holds (the templates option's alerts); anything else: FAINT.
CARD_EDGE = {"critical": theme.BAD, "warning": theme.WARN, "info": theme.PROGRESS}


def draw_object(surf: pygame.Surface, obj: GameObject | ObjectShown, names: list[str], centre: tuple[int, int],
                unit: int) -> None:
    """A shape for colour/shape/size objects; for any other attributes (the templates option's
    alerts) a card with its values and this round's detail, edged by its severity."""
    props = obj.properties(names)
    if not {"color", "shape"} & set(props):
        card = pygame.Rect(0, 0, 2 * unit + 22, 2 * unit + 22)
        card.center = centre
        pygame.draw.rect(surf, theme.BUTTON, card, border_radius=6)
        edge = next((CARD_EDGE[v] for v in props.values() if v in CARD_EDGE), theme.FAINT)
        pygame.draw.rect(surf, edge, card, 2, border_radius=6)
        lines = [*props.values(), *(obj.detail.replace(" #", "\n#").split("\n") if obj.detail else [])]
        size = max(11, min(16, card.h // (len(lines) + 1)))
        for k, line in enumerate(lines):
            colour = theme.INK if k < len(props) else theme.DIM
            img = theme.fit(line, size, card.w - 8, colour, min_size=9)
            surf.blit(img, img.get_rect(midtop=(card.centerx, card.y + 5 + k * (card.h - 10) // len(lines))))
        return
    colour = theme.OBJECTS.get(props.get("color", ""), theme.OBJECT_OTHER)
    r = int(unit * (1.0 if props.get("size") == "large" else 0.6))
    x, y = centre
    shape = props.get("shape", "circle")
    if shape == "square":
        pygame.draw.rect(surf, colour, (x - r, y - r, 2 * r, 2 * r), border_radius=3)
    elif shape == "triangle":
        pygame.draw.polygon(surf, colour, [(x, y - r), (x - r, y + r), (x + r, y + r)])
    else:
        pygame.draw.circle(surf, colour, (x, y), r)


class ReferentialScene(PacedScene):
    """Scene protocol over an :class:`Experiment` (one round per tick; 2 rounds/s at 1×)."""

    title = "Referential game"
    help_lines: tuple[Row, ...] = (
        Line("the game", "one agent (the sender) sees a target object and sends a short message; the other (the "
                          "receiver) sees a few candidate objects and picks the one it thinks is meant"),
        Line("message", "the words the sender used, and how long they are against spelling the object out"),
        Line("candidates", "green frame: the receiver picked the target; red: it picked another one; 'picked none': "
                            "it could not read the message"),
        Line("new terms", "words the agents made up this round: one for a value (a colour, a shape, a size), or "
                           "with --set templates=true one for the combination of values that tells the target "
                           "apart (an alert's severity with its category)"),
        Line("glossary", "the made-up words both agents use: what the sender means, what the receiver reads, its "
                          "tier (private: only its inventor's so far; shared: understood once; global: voted in, "
                          "approved, or settled by use), how often used and how often it worked, and 'stable' (high "
                          "for words used often, successfully, and read the same by both)"),
        Line("context", "the sender names only what tells the target apart from the other candidates: one value "
                         "when one alone does (the colour, say), more when it must"),
        Line("charts", "success over the last 50 rounds (against picking at random), message length against "
                        "spelled out (lower = shorter), and the glossary's size"),
        Binding("A / R", "with --review: approve or reject the first new word waiting for a person",
                (pygame.K_a, pygame.K_r), lambda s, e: s.review(e.key == pygame.K_a)),
    )

    REPLAY_HELP: tuple[Row, ...] = (
        Line("replay", "a recorded game, played again and checked round by round against the recording"),
        Binding(", / .", "one round back / forward;  drag the timeline: any round", (pygame.K_COMMA,),
                lambda s, e: s.seek_paused(s.shown.rounds - 1)),
    )

    def __init__(self, experiment: Experiment | None = None, recorder: ReferentialRecorder | None = None,
                 session: ReferentialSession | None = None):
        super().__init__()
        # the game, its charts' series, its recorder and a replay's recording are the session's
        self.session = session or ReferentialSession(PARTS, experiment, recorder)
        self.reviewed: tuple[str, bool] | None = None  # the last verdict, shown in the review strip
        self.timeline: Timeline | None = None
        self.message = ""

    @classmethod
    def replaying(cls, rec: ReferentialRecording) -> ReferentialScene:
        """The scene playing a recording back (``replay R.db``), paused at its start."""
        scene = cls(session=ReferentialSession.replaying(PARTS, rec))
        scene.timeline = Timeline(0, len(rec.rounds))
        scene.help_lines = (*cls.REPLAY_HELP, *cls.help_lines)
        scene.pacer.paused = True
        scene.switchable = False  # a replay's window shows the recording only
        return scene

    # what is shown: the session's snapshot
    @property
    def shown(self) -> ReferentialShown:
        return self.session.snapshot()

    @property
    def last(self) -> RoundShown | None:
        """The round played last."""
        return self.session.snapshot().last

    @property
    def success(self) -> tuple[float, ...]:
        """The success chart's series."""
        return self.session.snapshot().success

    @property
    def last_round(self) -> int:
        """The rounds there are: the recording's, or the game's."""
        return self.session.snapshot().last_round

    @property
    def exp(self) -> Experiment:
        """The session's game (for callers that inspect it; the window draws the snapshot)."""
        return self.session.exp

    @property
    def recorder(self) -> ReferentialRecorder | None:
        return self.session.recorder

    @property
    def recording(self) -> ReferentialRecording | None:
        return self.session.recording

    # model side: forwarded to the session
    def reset(self, seed: int) -> None:
        self.session.reset(seed)

    def seek(self, n: int) -> None:
        """A replay at round ``n``: the game played again from its start (the charts too)."""
        try:
            self.session.seek(n)
        except RecordingError as exc:  # a replay that leaves its recording stops and says where
            self.pacer.paused = True
            self.message = str(exc)

    def step(self) -> None:
        try:
            played = self.session.step()
        except RecordingError as exc:  # a replay that leaves its recording stops and says where
            self.pacer.paused = True
            self.message = str(exc)
            return
        if not played:  # every round is played
            self.pacer.paused = True

    def snapshot(self) -> dict[str, Any]:
        return self.session.snapshot().as_json()

    def handle_event(self, event) -> bool:
        """A replay's timeline, then the keys (A / R: review; "," one round back in a replay)."""
        if self.timeline is not None and self.timeline.handle(event):
            self.seek_paused(self.timeline.seek_to)
            return True
        return super().handle_event(event)

    def seek_paused(self, n: int) -> None:
        self.pacer.paused = True
        self.seek(n)

    def review(self, approve: bool) -> bool:
        """Approve or reject the first term waiting for review (``--review``); not while the
        model agents play a round."""
        if self.thinking:
            return False
        verdict = self.session.review(approve)
        if verdict is not None:
            self.reviewed = verdict
        return True

    @property
    def uses_model(self) -> bool:  # type: ignore[override]
        return self.session.model_agents

    def close(self) -> None:
        self.close_worker()
        self.session.close()  # every round played stays recorded; a replay's recording is closed

    # view side
    def layout(self, size: tuple[int, int]) -> dict[str, pygame.Rect]:
        """The scene's boxes for a window of ``size`` (1024×600 and up): inside it, apart."""
        w, h = size
        line = Timeline.height - 20 if self.timeline is not None else 0  # a replay's timeline along the bottom
        h -= line
        left = min(700, int(w * 0.62))
        top, room = 90, h - 90 - 16
        card_h = min(260, int(room * 0.4))
        cands_h = min(170, int(room * 0.27))
        card = pygame.Rect(24, top, (left - 24) * 46 // 100, card_h)
        msg = pygame.Rect(card.right + 24, top, left - card.w - 24, card_h)
        cands = pygame.Rect(24, card.bottom + 16, left, cands_h)
        chart = pygame.Rect(24, cands.bottom + 16, left, h - cands.bottom - 32)
        table = pygame.Rect(left + 48, top, w - left - 72, h - top - 16)
        boxes = {"card": card, "message": msg, "candidates": cands, "charts": chart, "glossary": table}
        if line:
            boxes["timeline"] = pygame.Rect(0, h - 4, w, line)
        return boxes

    def draw_scene(self, surf: pygame.Surface) -> None:
        w, _, rects = self.begin_frame(surf)
        g = self.shown
        names = list(g.names)
        surf.blit(theme.text("Referential game", 32, theme.INK, bold=True), (24, 16))
        s = g.summary if g.rounds else {}
        what = "replay: " if g.replay else ""
        surf.blit(theme.fit(f"{what}round {g.rounds}/{g.last_round}   condition {g.condition}   "
                            f"{g.agents} agents   {g.candidates} candidates   speed "
                            f"{self.pacer.speed:g}x{'  PAUSED' if self.pacer.paused else ''}   "
                            f"{'recording   ' if g.recording else ''}H: what you see"
                            f"{'   S: next scene' if self.switchable else ''}",
                            20, w - 48, theme.DIM), (24, 52))
        if self.message:  # a replay that left its recording
            surf.blit(theme.fit(self.message, 17, w - 48, theme.BAD), (24, 72))
        r = g.last
        self._draw_round(surf, rects, r, names)
        self._draw_candidates(surf, rects["candidates"], r, names)
        self._draw_charts(surf, rects["charts"], g)
        self._draw_glossary(surf, rects["glossary"], s, g)
        if self.timeline is not None:
            self.timeline.draw(surf, rects["timeline"], g.rounds)

    @staticmethod
    def _draw_round(surf: pygame.Surface, rects: dict, r: RoundShown | None, names: list[str]) -> None:
        """What the sender sees (the target) and the message it sent."""
        card = rects["card"]
        pygame.draw.rect(surf, theme.CARD, card, border_radius=10)
        surf.blit(theme.text("sender sees the target", 18, theme.DIM), (card.x + 14, card.y + 10))
        if r is not None:
            draw_object(surf, r.target, names, (card.centerx, card.centery), min(56, card.h // 4))
            said = r.target.description + (f" \u2014 {r.target.detail}" if r.target.detail else "")
            surf.blit(theme.fit(said, 18, card.w - 28, theme.FAINT), (card.x + 14, card.bottom - 30))
        msg_box = rects["message"]
        pygame.draw.rect(surf, theme.CARD, msg_box, border_radius=10)
        surf.blit(theme.text("message", 18, theme.DIM), (msg_box.x + 14, msg_box.y + 10))
        if r is not None:
            surf.blit(theme.fit(f"\u201c{r.message}\u201d", 54, msg_box.w - 40, theme.ACCENT, bold=True),
                      (msg_box.x + 20, msg_box.y + msg_box.h // 4))
            said = f"{len(r.message)} chars vs \u201c{r.target.description}\u201d"
            surf.blit(theme.fit(said, 18, msg_box.w - 40, theme.DIM), (msg_box.x + 20, msg_box.y + msg_box.h // 2 + 10))
            if r.new_terms:
                surf.blit(theme.fit("new terms: " + ", ".join(r.new_terms), 20, msg_box.w - 40, theme.WARN),
                          (msg_box.x + 20, msg_box.y + msg_box.h * 3 // 4))

    @staticmethod
    def _draw_candidates(surf: pygame.Surface, cands: pygame.Rect, r: RoundShown | None, names: list[str]) -> None:
        """What the receiver sees, its pick framed (green: the target), the target named."""
        pygame.draw.rect(surf, theme.CARD, cands, border_radius=10)
        surf.blit(theme.text("receiver sees the candidates and chooses", 18, theme.DIM), (cands.x + 14, cands.y + 10))
        if r is not None:
            step = cands.w // (len(r.candidates) + 1)
            for k, c in enumerate(r.candidates):
                cx = cands.x + step * (k + 1)
                unit = max(10, min(30, cands.h // 6, step // 3))
                draw_object(surf, c, names, (cx, cands.centery + 6), unit)
                if c.id == r.choice:
                    colour = theme.GOOD if r.success else theme.BAD
                    pygame.draw.rect(surf, colour, (cx - unit - 14, cands.centery + 6 - unit - 14, 2 * unit + 28,
                                                    2 * unit + 28), 3, border_radius=8)
                if c.id == r.target.id:
                    surf.blit(theme.text("target", 16, theme.INK), (cx - 20, cands.bottom - 20))
            if r.choice not in {c.id for c in r.candidates}:  # the receiver could not read the message
                none = theme.text("the receiver picked none", 18, theme.BAD, bold=True)
                surf.blit(none, none.get_rect(midtop=(cands.centerx, cands.y + 34)))

    @staticmethod
    def _draw_charts(surf: pygame.Surface, chart: pygame.Rect, g: ReferentialShown) -> None:
        rows = [("success (last 50)", g.success, theme.GOOD, "{:.0%}", (0.0, 1.0)),
                ("compression vs spelled out", g.compression, theme.ACCENT, "{:.2f}", (0.0, 1.2)),
                ("glossary size", g.size, theme.WARN, "{:.0f}", (0.0, max(4.0, max(g.size, default=0.0) * 1.1)))]
        first = max(0, g.rounds - len(g.success))
        gap = 8
        stacked = chart.h >= 240  # tall: one above the other; short: side by side
        ch = (chart.h - 2 * gap) // 3 if stacked else chart.h
        cw = chart.w if stacked else (chart.w - 2 * gap) // 3
        for k, (label, data, colour, fmt, y_range) in enumerate(rows):
            box = (pygame.Rect(chart.x, chart.y + k * (ch + gap), cw, ch) if stacked
                   else pygame.Rect(chart.x + k * (cw + gap), chart.y, cw, ch))
            ys = np.asarray(data, np.float64)
            xs = np.arange(first + 1, first + 1 + len(ys), dtype=np.float64)
            note = f"  (chance {g.chance:.0%})" if "success" in label else ""
            draw_axes_chart(surf, box, xs, ys, label + note, colour, fmt, y_range)

    def _draw_glossary(self, surf: pygame.Surface, table: pygame.Rect, s: Mapping[str, Any],
                       g: ReferentialShown) -> None:
        """The glossary table, its facts, the alarm and the review line."""
        pygame.draw.rect(surf, theme.CARD, table, border_radius=10)
        surf.blit(theme.fit("made-up words (most stable first)", 20, table.w - 28, theme.INK, bold=True),
                  (table.x + 14, table.y + 10))
        heads = ("term", "means", "receiver reads", "tier", "uses", "success", "stable")
        inner = table.w - 28
        cols = [int(inner * f) for f in (0.0, 0.1, 0.33, 0.56, 0.7, 0.79, 0.89)]
        widths = [b - a - 6 for a, b in zip(cols, [*cols[1:], inner])]
        for x, cw, head in zip(cols, widths, heads):
            surf.blit(theme.fit(head, 17, cw, theme.DIM), (table.x + 14 + x, table.y + 40))
        terms = g.terms
        # the rows stop above the footer lines: facts, and the alarm and review lines when shown
        footer = 44 + (24 if s and s.get("success_alarms") else 0) + (24 if g.review else 0)
        for k, t in enumerate(terms[: max(0, (table.h - 62 - footer) // 22)]):
            y = table.y + 62 + k * 22
            meaning = " ".join(t.means)
            read = " ".join(t.reads) if t.reads else "?"
            colour = theme.GOOD if t.agreed else theme.BAD
            waiting = t.status == "pending"  # listed under the global terms, greyed, until reviewed
            cells = (t.term, meaning, read, t.tier, str(t.usage), f"{t.success_rate:.0%}",
                     "pending" if waiting else f"{t.stable_score:.2f}")
            for k2, (x, cw, cell) in enumerate(zip(cols, widths, cells)):
                ink = theme.FAINT if waiting else colour if k2 == 2 else theme.INK
                surf.blit(theme.fit(cell, 18, cw, ink), (table.x + 14 + x, y))
        if s:
            facts = (f"agreement {s['definition_agreement']:.0%}   topographic similarity "
                     f"{s['topographic_similarity']:.2f}   pruned {s['pruned_terms']}")
            surf.blit(theme.fit(facts, 18, inner, theme.DIM), (table.x + 14, table.bottom - 28))
            if s["success_alarms"]:
                a = s["success_alarms"][-1]
                surf.blit(theme.fit(f"ALARM round {a['round']}: success over the last {g.alarm_window} rounds "
                                    f"{a['now']:.0%} (best {a['best']:.0%})", 18,
                                    inner, theme.BAD, bold=True), (table.x + 14, table.bottom - 52))
        if g.review:
            queue = g.pending
            y = table.bottom - (100 if s.get("success_alarms") else 76)
            if queue:
                t = queue[0]
                line = (f"review: '{t.term}' = {' '.join(t.means)} (by {t.proposed_by})   "
                        f"A approve / R reject   {len(queue)} waiting")
                surf.blit(theme.fit(line, 18, inner, theme.WARN, bold=True), (table.x + 14, y))
            elif self.reviewed:
                verdict = "approved" if self.reviewed[1] else "rejected"
                surf.blit(theme.fit(f"review: '{self.reviewed[0]}' {verdict}; none waiting", 18, inner, theme.DIM),
                          (table.x + 14, y))

