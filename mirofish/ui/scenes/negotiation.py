"""The negotiation in the window: dialogue with signal badges, grounding board, uncertainty
curve with repair marks, bandit arm statistics. One turn per tick; sessions follow each other."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import pygame

from ...observe.recording import RecordingError
from ...scenes.negotiation.dialogue import STRATEGIES
from ...scenes.negotiation.parts import PARTS
from ...scenes.negotiation.recording import (
    NegotiationRecording,
    ReplayDiverged,
)
from ...session.negotiation import NegotiationSession, NegotiationShown, NotARepair, ReplayShown
from .. import theme
from ..keys import Binding, Line, Row
from ..panels import Timeline, sparkline
from .base import PacedScene

# the negotiation's model, handed to its session: its package's own parts (scenes/negotiation/parts.py)


class NegotiationScene(PacedScene):
    title = "Negotiation"
    help_lines: tuple[Row, ...] = (
        Line("the dialogue", "a buyer and a seller bargain over price, delivery, payment and an AI feature; "
                             "the newest turns at the bottom"),
        Line("[1] [2] [3] badges", "the Argent signals a turn carried: [1] the task, a hash of the goal and the hard "
                                   "limits; [2] what the speaker assumes and how sure it is; [3] its role, a hand-over "
                                   "note, a drift alert"),
        Line("colours", "orange: a repair (one side states how it understood something, the other answers); "
                        "yellow: a recalibration or check; red: a dispute; green: a deal"),
        Line("what each side understood", "for each issue, the reading each side has stated; 'agreed' when both "
                                          "stated the same (grounding), and the latest offers"),
        Line("how misunderstandings get fixed",
             "the five ways to repair; each bar is how many of its repairs have been scored (a repair is scored "
             "three turns after it, by the drop in uncertainty plus half a point per name newly agreed: 0 to 1.5), "
             "'reward' its average success; the scene learns to try the best more often (a UCB1 bandit)"),
        Line("uncertainty", "how unsure the two sides are of each other, turn by turn; orange lines: repairs"),
        Line("simulated agents", "without a model the answers to repairs come from a table of effects, so "
                                 "repair success here is simulated (labelled so)"),
    )

    REPLAY_HELP: tuple[Row, ...] = (
        Line("replay", "a recorded negotiation, re-played and checked turn by turn against the recording"),
        Binding(", / .", "one turn back / forward;  drag the timeline: any turn;  [ / ]: previous / next session",
                (pygame.K_COMMA, pygame.K_LEFTBRACKET, pygame.K_RIGHTBRACKET), lambda s, e: s.replay_key(e.key)),
        Binding("F then 1-5", "fork: when the newest turn is a repair, play it again with another strategy "
                              "(1 confirming restatement, 2 exploratory question, 3 offering options, "
                              "4 revealing assumptions, 5 rebuilding consensus); the turns after are new",
                (pygame.K_f,), lambda s, e: s.fork_key()),
        Binding("O", "after a fork: back to the recording, at the fork's turn", (pygame.K_o,),
                lambda s, e: s.replay_key(e.key)),
    )

    def __init__(self, seed: int = 0, repair: bool = True, speakers_for=None, layers: int = 3, recorder=None,
                 session: NegotiationSession | None = None):
        super().__init__()
        # the negotiation, its bandit, its recorder and a replay's player are the session's
        self.session = session or NegotiationSession(PARTS, seed, repair, speakers_for, layers, recorder)
        self.timeline: Timeline | None = None  # a replay's
        self.picking = False  # the fork's strategy picker is open
        self.message, self.alarm = "", False

    @classmethod
    def replaying(cls, rec: NegotiationRecording, session: int | None = None) -> NegotiationScene:
        """The scene playing a recording back (``replay R.db``), paused at its first turn."""
        scene = cls(session=NegotiationSession.replaying(PARTS, rec, session))
        replay = scene.player
        assert replay is not None
        scene.timeline = Timeline(0, replay.last)
        scene.help_lines = (*cls.REPLAY_HELP, *cls.help_lines)
        scene.pacer.paused = True
        scene.switchable = False  # a replay's window shows the recording only
        return scene

    # what is shown: the session's snapshot
    @property
    def neg(self) -> NegotiationShown:
        return self.session.snapshot()

    @property
    def player(self) -> ReplayShown | None:
        """Where a replay is (None: a live run)."""
        return self.session.snapshot().replay

    @property
    def index(self) -> int:
        return self.session.snapshot().index

    @property
    def results(self) -> tuple[dict, ...]:
        return self.session.snapshot().results

    # model side: forwarded to the session
    def reset(self, seed: int) -> None:
        if self.player is not None:
            self._replay(lambda s: s.seek(0))
            return
        self.session.reset(seed)

    def step(self) -> None:
        if self.player is not None:
            self._replay(self._replay_step)
            return
        self.session.step()

    def _replay_step(self, session: NegotiationSession) -> None:
        if not self.alarm:
            self.message = ""  # a hint about the turn before is stale now
        if not session.step():
            self.pacer.paused = True  # the recording's end
            self.message = "the end of the recording"

    def _replay(self, move) -> None:
        """A move in the recording; a turn that is not the recorded one stops it, on a banner."""
        try:
            move(self.session)
        except RecordingError as exc:
            self.pacer.paused = True
            self.message, self.alarm = str(exc), isinstance(exc, ReplayDiverged)
            return
        replay = self.player
        if self.timeline is not None and replay is not None:
            self.timeline.last = max(1, replay.last)
            fork = replay.fork_point
            self.timeline.markers = [(fork[0], "fork")] if fork else []

    def snapshot(self) -> dict:
        return self.session.snapshot().as_json()

    @property
    def uses_model(self) -> bool:  # type: ignore[override]
        return self.session.model_agents

    def close(self) -> None:
        self.close_worker()
        self.session.close()  # finished sessions stay recorded; a replay's recording is closed

    def handle_event(self, event) -> bool:
        """A replay's timeline and its strategy picker (open after F: 1-5 forks, any other key
        cancels), then the keys (a replay's ``,`` ``[`` ``]`` ``O`` and ``F``: REPLAY_HELP)."""
        if self.player is not None and self.timeline is not None and self.timeline.handle(event):
            n = self.timeline.seek_to
            self.pacer.paused = True
            self._replay(lambda s: s.seek(n))
            return True
        if self.picking and event.type == pygame.KEYDOWN:
            self.picking = False
            k = event.key - pygame.K_1
            if 0 <= k < len(STRATEGIES):
                self.message, self.alarm = "", False
                self._replay(lambda s: s.fork(STRATEGIES[k]))
            return True
        return super().handle_event(event)

    REPLAY_MOVES: ClassVar[dict[int, Callable[[NegotiationSession], Any]]] = {
        pygame.K_COMMA: lambda s: s.back(), pygame.K_LEFTBRACKET: lambda s: s.session_by(-1),
        pygame.K_RIGHTBRACKET: lambda s: s.session_by(+1), pygame.K_o: lambda s: s.original()}

    def replay_key(self, key: int) -> None:
        """One turn back, the previous or next session, back to the recording after a fork."""
        self.pacer.paused = True
        self.message, self.alarm = "", False
        self._replay(self.REPLAY_MOVES[key])

    def fork_key(self) -> None:
        """F: the strategy picker, when the newest turn is a repair."""
        self.pacer.paused = True
        try:
            self.session.check_fork()
        except NotARepair as exc:
            repairs = ", ".join(map(str, exc.repairs)) or "none"
            self.message, self.alarm = f"F forks a repair: step to one first (repairs at turns {repairs})", False
        else:
            self.picking = True

    # view side
    def layout(self, size: tuple[int, int]) -> dict[str, pygame.Rect]:
        """The scene's boxes for a window of ``size`` (1024×600 and up): inside it, apart."""
        w, h = size
        line = Timeline.height - 20 if self.player is not None else 0  # a replay's timeline along the bottom
        curve_h = max(100, min(180, h // 5)) - (20 if line else 0)
        top, bottom = 108, h - curve_h - 24 - line
        box = pygame.Rect(24, top, int(w * 0.55), bottom - top - 16)
        board = pygame.Rect(box.right + 24, top, w - box.right - 48, (box.h - 16) // 2)
        arms = pygame.Rect(board.x, board.bottom + 16, board.w, box.h - board.h - 16)
        curve = pygame.Rect(24, h - curve_h - 16 - line, w - 48, curve_h)
        boxes = {"dialogue": box, "board": board, "bandit": arms, "uncertainty": curve}
        if line:
            boxes["timeline"] = pygame.Rect(0, h - line - 8, w, line)
        return boxes

    def draw_scene(self, surf: pygame.Surface) -> None:
        w, _, rects = self.begin_frame(surf)
        neg = self.neg
        surf.blit(theme.text("Negotiation", 32, theme.INK, bold=True), (24, 16))
        surf.blit(theme.fit(self._status_line(), 20, w - 48, theme.DIM), (24, 52))
        note = self._replay_note()
        if note is not None:  # a replay's line: a fork, a message, a divergence
            surf.blit(theme.fit(note[0], 17, w - 48, note[1]), (24, 78))
        else:
            surf.blit(theme.fit("badges: [1] task id, goal hash, constraints   [2] assumptions + confidence   "
                                "[3] role, handoff, drift alert      colours: orange repair, yellow recalibration "
                                "or check, red dispute, green deal", 16, w - 48, theme.FAINT), (24, 78))
        # dialogue
        box = rects["dialogue"]
        pygame.draw.rect(surf, theme.CARD, box, border_radius=10)
        shown, used = [], 0
        for turn in reversed(neg.turns):  # the newest turns that fit, each with its wrapped lines
            other = "seller" if turn.speaker == "buyer" else "buyer"
            said = turn.text + (f"  \u2014 {other}: {turn.reply}" if turn.reply else "")
            lines = theme.wrap(readable(said), box.w - 24, 18)[:2]
            need = 18 + 18 * len(lines) + 8
            if used + need > box.h - 20:
                break
            shown.append((turn, lines))
            used += need
        y = box.y + 10
        for turn, lines in reversed(shown):
            colour = {"repair": theme.ACCENT, "calibrate": theme.WARN, "check": theme.WARN, "dispute": theme.BAD,
                      "accept": theme.GOOD}.get(turn.kind, theme.INK)
            badges = "".join(f"[{k[-1]}]" for k in turn.layers)
            surf.blit(theme.fit(f"t{turn.index} {turn.speaker} {badges}", 17, box.w - 24, theme.DIM), (box.x + 12, y))
            y += 18
            for line in lines:
                surf.blit(theme.text(line, 18, colour), (box.x + 12, y))
                y += 18
            y += 8
        # grounding board
        board = rects["board"]
        pygame.draw.rect(surf, theme.CARD, board, border_radius=10)
        surf.blit(theme.fit("what each side understood (grounding)", 20, board.w - 24, theme.INK, bold=True),
                  (board.x + 12, board.y + 8))
        y = board.y + 36
        for ent in neg.issues:
            readings = ", ".join(f"{r} says {lvl}" for r, lvl in ent.readings) or "no one has said"
            mark, colour = ("agreed", theme.GOOD) if ent.grounded else ("not yet agreed", theme.WARN)
            issue, _, value = ent.key.partition(":")  # "support:premium" reads "support = premium"
            what = f"{issue} = {value}" if value else issue
            surf.blit(theme.fit(readable(f"{what}: {mark}  ({readings})"), 17, board.w - 24, colour), (board.x + 12, y))
            y += 19
            if y > board.bottom - 20:
                break
        for offer in neg.offers[-4:]:
            if y > board.bottom - 20:
                break
            status = {"countered": "answered with another offer"}.get(offer.status, offer.status)
            line = f"offer {offer.id.removeprefix('prop_')} by {offer.proponent}: {status}"
            surf.blit(theme.fit(line, 17, board.w - 24, theme.DIM), (board.x + 12, y))
            y += 19
        # bandit
        arms = rects["bandit"]
        pygame.draw.rect(surf, theme.CARD, arms, border_radius=10)
        surf.blit(theme.fit("how misunderstandings get fixed: repairs scored, average reward", 20, arms.w - 24,
                            theme.INK, bold=True), (arms.x + 12, arms.y + 8))
        most = max(1, max(a.pulls for a in neg.arms))
        row_h = max(18, min(30, (arms.h - 44) // max(1, len(neg.arms))))
        for k, arm in enumerate(neg.arms):
            y = arms.y + 40 + k * row_h
            surf.blit(theme.fit(arm.name.replace("_", " "), 17, 190, theme.DIM), (arms.x + 12, y))
            pygame.draw.rect(surf, theme.ACCENT, (arms.x + 210, y + 2, int(max(0, arms.w - 330) * arm.pulls / most),
                                                  12))
            surf.blit(theme.text(f"{arm.pulls}x  {arm.mean_reward:.2f}", 17, theme.INK), (arms.right - 110, y))
        # uncertainty curve
        curve = rects["uncertainty"]
        pygame.draw.rect(surf, theme.CARD, curve, border_radius=10)
        us = [t.uncertainty for t in neg.turns]
        surf.blit(theme.text(f"uncertainty {us[-1] if us else 0:.2f}   (vertical marks: repairs)", 18, theme.INK),
                  (curve.x + 12, curve.y + 8))
        area = pygame.Rect(curve.x + 12, curve.y + 34, curve.w - 24, curve.h - 46)
        sparkline(surf, area, us, theme.INK, 0.0, 1.0)  # the curve white, the repairs' marks orange
        for t in neg.turns:
            if t.kind == "repair" and len(us) > 1:
                x = area.x + t.index / max(1, len(us) - 1) * (area.w - 1)
                pygame.draw.line(surf, theme.ACCENT, (x, area.y), (x, area.bottom), 1)
        if self.player is not None:
            self._draw_replay(surf, rects)

    def _status_line(self) -> str:
        neg = self.neg
        agents = "model agents" if neg.model_agents else "simulated agents"
        setup = f"{agents}   repair {'ON' if neg.repair else 'OFF'}   Argent layers 1-{neg.layers}"
        p = neg.replay
        if p is None:
            rec = "   recording" if neg.recording else ""
            return (f"session {neg.index + 1} ({neg.session_id})   {setup}   finished {len(neg.results)}, "
                    f"deals {neg.deals}{rec}   speed {self.pacer.speed:g}x   H: what you see   S: next scene")
        turn = f"turn {p.shown} (a fork)" if p.fork_point else f"turn {p.shown} of {p.recorded}"
        where = f"replay: session {p.session} ({p.pos + 1} of {p.sessions}), {turn}"
        state = "paused" if self.pacer.paused else f"playing {self.pacer.speed:g}x"
        return f"{where}   {state}   {setup}   H: keys"

    def _replay_note(self) -> tuple[str, tuple] | None:
        """What a replay says under its status line: a message, or what the fork changed."""
        p = self.player
        if p is None:
            return None
        if self.message:
            return self.message, theme.BAD if self.alarm else theme.WARN
        fork = p.fork_point
        if fork:
            differs = p.differs_from
            since = (f"the turns differ from turn {differs}" if differs is not None else
                     "the turns after it are the recording's so far (this repair landed the same way)")
            return (f"fork at turn {fork[0]}: {fork[1].replace('_', ' ')} instead of the recorded "
                    f"{fork[2].replace('_', ' ')}; {since}   (O: back to the recording)", theme.ACCENT)
        return None

    def _draw_replay(self, surf: pygame.Surface, rects: dict) -> None:
        """The timeline, what a fork changed, a message or a divergence, the strategy picker."""
        assert self.player is not None and self.timeline is not None
        self.timeline.draw(surf, rects["timeline"], self.player.shown)
        w = surf.get_width()
        if self.picking:
            rect = pygame.Rect(0, 0, min(560, w - 48), 54 + 26 * len(STRATEGIES) + 30)
            rect.center = (w // 2, surf.get_height() // 2)
            theme.overlay(surf, rect, theme.ACCENT, alpha=250)
            turn = self.neg.turns[-1]
            surf.blit(theme.fit(f"Fork at turn {turn.index}: repair with which strategy?", 22, rect.w - 32,
                                theme.INK, bold=True), (rect.x + 16, rect.y + 12))
            for k, name in enumerate(STRATEGIES):
                now = "   (recorded)" if name == turn.strategy else ""
                surf.blit(theme.text(f"{k + 1}  {name.replace('_', ' ')}{now}", 19, theme.ACCENT),
                          (rect.x + 30, rect.y + 50 + k * 26))
            surf.blit(theme.text("any other key cancels", 16, theme.DIM), (rect.x + 30, rect.bottom - 28))


def readable(text: str) -> str:
    """Negotiation text as a person reads it: issue keys in words ("none AI feature" → "no AI
    feature", "ai_feature" → "AI feature")."""
    return (text.replace("none AI feature", "no AI feature").replace("ai_feature", "AI feature")
            .replace("delivery_weeks", "delivery").replace("payment_days", "payment").replace("_", " "))
