"""The negotiation in the window: dialogue with signal badges, grounding board, uncertainty
curve with repair marks, bandit arm statistics. One turn per tick; sessions follow each other."""

from __future__ import annotations

import pygame

from ...ui import theme
from ...ui.panels import sparkline
from ..base import PacedScene
from .dialogue import Bandit, Negotiation
from .world import Session


class NegotiationScene(PacedScene):
    title = "Negotiation"
    help_lines = (
        ("the dialogue", "a buyer and a seller bargain over price, delivery, payment and an AI feature; "
                         "the newest turns at the bottom"),
        ("[1] [2] [3] badges", "the Argent signals a turn carried: [1] the task, a hash of the goal and the hard "
                               "limits; [2] what the speaker assumes and how sure it is; [3] its role, a hand-over "
                               "note, a drift alert"),
        ("colours", "orange: a repair (one side states how it understood something, the other answers); "
                    "yellow: a recalibration or check; red: a dispute; green: a deal"),
        ("what each side understood", "for each issue, the reading each side has stated; 'agreed' when both "
                                      "stated the same (grounding), and the latest offers"),
        ("how misunderstandings get fixed", "the five ways to repair; each bar is how often it was tried, "
                                            "'reward' its average success; the scene learns to try the best "
                                            "more often (a UCB1 bandit)"),
        ("uncertainty", "how unsure the two sides are of each other, turn by turn; orange lines: repairs"),
        ("simulated agents", "without a model the answers to repairs come from a table of effects, so "
                             "repair success here is simulated (labelled so)"),
    )

    def __init__(self, seed: int = 0, repair: bool = True, speakers_for=None, layers: int = 3):
        self.seed, self.repair, self.speakers_for, self.layers = seed, repair, speakers_for, layers
        self.bandit = Bandit()
        super().__init__()
        self.index = 0
        self.results: list[dict] = []
        self._start()

    def _start(self) -> None:
        speakers = self.speakers_for(self.index) if self.speakers_for else None
        self.neg = Negotiation(Session.draw(self.seed * 100_003 + self.index), self.repair, self.bandit,
                               speakers=speakers, layers=self.layers)
        self.turn_iter = self.neg.iter_turns()
        self.done = False

    # model side
    def reset(self, seed: int) -> None:
        self.seed, self.index, self.results = seed, 0, []
        self.bandit = Bandit()
        self._start()

    def step(self) -> None:
        if self.done:
            self.results.append(self.neg.result())
            self.index += 1
            self._start()
            return
        try:
            next(self.turn_iter)
        except StopIteration:
            self.done = True

    def snapshot(self) -> dict:
        return {"session": self.neg.tracker.as_json(), "results": self.results, "bandit": self.bandit.stats()}

    @property
    def uses_model(self) -> bool:  # type: ignore[override]
        return self.speakers_for is not None

    def close(self) -> None:
        self.close_worker()

    # view side
    def layout(self, size: tuple[int, int]) -> dict[str, pygame.Rect]:
        """The scene's boxes for a window of ``size`` (1024×600 and up): inside it, apart."""
        w, h = size
        curve_h = max(110, min(180, h // 5))
        top, bottom = 108, h - curve_h - 24
        box = pygame.Rect(24, top, int(w * 0.55), bottom - top - 16)
        board = pygame.Rect(box.right + 24, top, w - box.right - 48, (box.h - 16) // 2)
        arms = pygame.Rect(board.x, board.bottom + 16, board.w, box.h - board.h - 16)
        curve = pygame.Rect(24, h - curve_h - 16, w - 48, curve_h)
        return {"dialogue": box, "board": board, "bandit": arms, "uncertainty": curve}

    def draw_scene(self, surf: pygame.Surface) -> None:
        w, _, rects = self.begin_frame(surf)
        neg = self.neg
        surf.blit(theme.text("Negotiation", 32, theme.INK, bold=True), (24, 16))
        deals = sum(r["agreement"] for r in self.results)
        agents = "model agents" if self.speakers_for else "simulated agents"
        surf.blit(theme.fit(f"session {self.index + 1} ({neg.tracker.session})   {agents}   repair "
                            f"{'ON' if self.repair else 'OFF'}   Argent layers 1-{self.layers}   "
                            f"finished {len(self.results)}, deals {deals}   "
                            f"speed {self.pacer.speed:g}x   H: what you see   S: next scene", 20, w - 48, theme.DIM),
                  (24, 52))
        surf.blit(theme.fit("badges: [1] task id, goal hash, constraints   [2] assumptions + confidence   "
                            "[3] role, handoff, drift alert      colours: orange repair, yellow recalibration "
                            "or check, red dispute, green deal", 16, w - 48, theme.FAINT), (24, 78))
        # dialogue
        box = rects["dialogue"]
        pygame.draw.rect(surf, (16, 32, 56), box, border_radius=10)
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
            badges = "".join(f"[{k[-1]}]" for k in ("layer1", "layer2", "layer3") if k in turn.signals)
            surf.blit(theme.fit(f"t{turn.index} {turn.speaker} {badges}", 17, box.w - 24, theme.DIM), (box.x + 12, y))
            y += 18
            for line in lines:
                surf.blit(theme.text(line, 18, colour), (box.x + 12, y))
                y += 18
            y += 8
        # grounding board
        board = rects["board"]
        pygame.draw.rect(surf, (16, 32, 56), board, border_radius=10)
        surf.blit(theme.fit("what each side understood (grounding)", 20, board.w - 24, theme.INK, bold=True),
                  (board.x + 12, board.y + 8))
        y = board.y + 36
        for key, ent in sorted(neg.tracker.entities.items()):
            readings = ", ".join(f"{r} says {lvl}" for r, lvl in ent["attributes"].items()) or "no one has said"
            mark, colour = ("agreed", theme.GOOD) if ent["grounded"] else ("not yet agreed", theme.WARN)
            surf.blit(theme.fit(readable(f"{key}: {mark}  ({readings})"), 17, board.w - 24, colour), (board.x + 12, y))
            y += 19
            if y > board.bottom - 20:
                break
        props = list(neg.tracker.propositions.items())[-4:]
        for k, p in props:
            if y > board.bottom - 20:
                break
            status = {"countered": "answered with another offer"}.get(p["status"], p["status"])
            surf.blit(theme.fit(f"offer {k.removeprefix('prop_')} by {p['proponent']}: {status}", 17, board.w - 24,
                                theme.DIM), (board.x + 12, y))
            y += 19
        # bandit
        arms = rects["bandit"]
        pygame.draw.rect(surf, (16, 32, 56), arms, border_radius=10)
        surf.blit(theme.fit("how misunderstandings get fixed: tried, average reward", 20, arms.w - 24, theme.INK,
                            bold=True), (arms.x + 12, arms.y + 8))
        stats = self.bandit.stats()
        most = max(1, max(s["pulls"] for s in stats.values()))
        row_h = max(18, min(30, (arms.h - 44) // max(1, len(stats))))
        for k, (name, s) in enumerate(stats.items()):
            y = arms.y + 40 + k * row_h
            surf.blit(theme.fit(name.replace("_", " "), 17, 190, theme.DIM), (arms.x + 12, y))
            pygame.draw.rect(surf, theme.ACCENT, (arms.x + 210, y + 2, int(max(0, arms.w - 330) * s["pulls"] / most),
                                                  12))
            surf.blit(theme.text(f"{s['pulls']}x  {s['mean_reward']:.2f}", 17, theme.INK), (arms.right - 110, y))
        # uncertainty curve
        curve = rects["uncertainty"]
        pygame.draw.rect(surf, (16, 32, 56), curve, border_radius=10)
        us = [t.uncertainty for t in neg.turns]
        surf.blit(theme.text(f"uncertainty {us[-1] if us else 0:.2f}   (orange marks: repairs)", 18, theme.INK),
                  (curve.x + 12, curve.y + 8))
        area = pygame.Rect(curve.x + 12, curve.y + 34, curve.w - 24, curve.h - 46)
        sparkline(surf, area, us, theme.WARN, 0.0, 1.0)
        for t in neg.turns:
            if t.kind == "repair" and len(us) > 1:
                x = area.x + t.index / max(1, len(us) - 1) * (area.w - 1)
                pygame.draw.line(surf, theme.ACCENT, (x, area.y), (x, area.bottom), 1)


def readable(text: str) -> str:
    """Negotiation text as a person reads it: issue keys in words ("none AI feature" → "no AI
    feature", "ai_feature" → "AI feature")."""
    return (text.replace("none AI feature", "no AI feature").replace("ai_feature", "AI feature")
            .replace("delivery_weeks", "delivery").replace("payment_days", "payment").replace("_", " "))
