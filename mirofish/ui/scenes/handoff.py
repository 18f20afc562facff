"""The report chain in the window: the messages with their signals, what each agent believes
the task is (against the brief), the drifts injected and which were caught. One message per
tick; tasks follow each other."""

from __future__ import annotations

from typing import Any

import pygame

from ...scenes.handoff.parts import PARTS
from ...session.handoff import DriftShown, HandoffSession, HandoffShown, MessageShown
from .. import theme
from ..keys import Line, Row
from .base import PacedScene

# the chain's model, handed to its session: its package's own parts (scenes/handoff/parts.py)


class HandoffScene(PacedScene):
    title = "Report chain (Argent)"
    help_lines: tuple[Row, ...] = (
        Line("the chain", "an analyst, a writer and a reviewer write a market-analysis report; half-way the writer "
                          "hands over to a colleague. Only the analyst reads the brief: the others learn the task "
                          "from the messages"),
        Line("drifts", "injected at known points: a concept read another way, a requirement invented, one lost"),
        Line("[1] [2] [3]", "the signals a message carried: [1] task id, goal hash, checklist; [2] the readings "
                            "the sender is unsure of, with confidence and alternative; [3] role and, at the "
                            "hand-over, its context"),
        Line("red lines", "what the receiver's checks found; yellow: the calibration it opened"),
        Line("what each agent believes", "the goal, the requirements and the readings each agent works to; "
                                         "red: not the brief's"),
    )

    def __init__(self, seed: int = 1, layers: str = "L1+2+3", writer: Any = None, l2_source: str = "agent",
                 wire_form: str = "full", l2_every: int | None = None, l2_triggers: bool = True):
        super().__init__()
        # the chain, its tasks and their results are the session's (writer: a model writes the messages)
        self.session = HandoffSession(PARTS, seed, layers, writer, l2_source, wire_form, l2_every, l2_triggers)

    @property
    def shown(self) -> HandoffShown:
        """What is drawn: the session's snapshot."""
        return self.session.snapshot()

    def reset(self, seed: int) -> None:
        self.session.reset(seed)

    def step(self) -> None:
        self.session.step()

    def snapshot(self) -> dict[str, Any]:
        return self.session.snapshot().as_json()

    @property
    def uses_model(self) -> bool:  # type: ignore[override]
        return self.session.model_agents

    def close(self) -> None:
        self.close_worker()
        self.session.close()  # (a model writer is closed with it)

    # ------------------------------------------------------------ view

    def layout(self, size: tuple[int, int]) -> dict[str, pygame.Rect]:
        w, h = size
        top = 116
        left = pygame.Rect(24, top, int(w * 0.55), h - top - 24)
        minds = pygame.Rect(left.right + 24, top, w - left.right - 48, (left.h - 32) * 45 // 100)
        drifts = pygame.Rect(minds.x, minds.bottom + 16, minds.w, (left.h - 32) * 25 // 100)
        figures = pygame.Rect(minds.x, drifts.bottom + 16, minds.w, left.bottom - drifts.bottom - 16)
        return {"messages": left, "minds": minds, "drifts": drifts, "figures": figures}

    def draw_scene(self, surf: pygame.Surface) -> None:
        w, _, rects = self.begin_frame(surf)
        c = self.shown
        surf.blit(theme.text("Report chain", 32, theme.INK, bold=True), (24, 16))
        fig = c.figures
        rate = f"{fig.caught}/{fig.drifts} drifts caught" if fig.drifts else "no task finished yet"
        pace = "paused" if self.pacer.paused else f"speed {self.pacer.speed:g}x"
        surf.blit(theme.fit(f"task {c.index + 1} ({c.task_id})   Argent {c.arm}   {rate}   "
                            f"{pace}   H: what you see   S: next scene", 20, w - 48, theme.DIM), (24, 52))
        brief = theme.wrap(f"brief: {c.goal}  Requirements: " + "; ".join(c.requirements), w - 48, 16)
        for k, line in enumerate(brief[:2]):
            surf.blit(theme.fit(line, 16, w - 48, theme.FAINT, min_size=16), (24, 74 + 16 * k))
        self._draw_messages(surf, rects["messages"], c)
        self._draw_minds(surf, rects["minds"], c)
        self._draw_drifts(surf, rects["drifts"], c)
        self._draw_figures(surf, rects["figures"], c)

    def _draw_figures(self, surf: pygame.Surface, box: pygame.Rect, c: HandoffShown) -> None:
        """This arm's figures over the tasks finished so far."""
        pygame.draw.rect(surf, theme.CARD, box, border_radius=10)
        surf.blit(theme.fit(f"Argent {c.arm}: the tasks finished so far", 19, box.w - 24, theme.INK, bold=True),
                  (box.x + 12, box.y + 8))
        fig = c.figures
        if not fig.tasks:
            surf.blit(theme.text("(the first task is still going)", 16, theme.DIM), (box.x + 12, box.y + 36))
            return
        tokens, extra = fig.message_tokens, fig.signal_tokens
        lines = [f"tasks {fig.tasks}   drifts caught {fig.caught} of {fig.drifts}",
                 f"reports that meet the brief: {fig.completed} of {fig.tasks}",
                 f"calibrations per task {fig.calibrations / fig.tasks:.2f}",
                 f"signals and calibrations: {extra / max(1, tokens + extra):.1%} of the tokens (estimated)"]
        for k, line in enumerate(lines):
            if box.y + 36 + 20 * k < box.bottom - 18:
                surf.blit(theme.fit(line, 16, box.w - 24, theme.DIM), (box.x + 12, box.y + 36 + 20 * k))

    def _draw_messages(self, surf: pygame.Surface, box: pygame.Rect, c: HandoffShown) -> None:
        pygame.draw.rect(surf, theme.CARD, box, border_radius=10)
        shown: list[tuple[MessageShown, list[tuple[str, tuple]]]] = []
        used = 0
        for m in reversed(c.messages):  # the newest that fit
            wrapped = theme.wrap(m.text.replace("\n", " "), box.w - 40, 16)
            lines = [(line, theme.INK) for line in wrapped[:2]]
            if len(wrapped) > 2:  # the rest of a long message: cut, and said so
                lines[-1] = (lines[-1][0] + " …", theme.INK)
            lines += [("found: " + ", ".join(m.detections), theme.BAD)] if m.detections else []
            lines += [(theme.wrap(m.calibration, box.w - 24, 16)[0] + " …", theme.WARN)] if m.calibration else []
            need = 20 + 17 * len(lines) + 8
            if used + need > box.h - 16:
                break
            shown.append((m, lines))
            used += need
        y = box.y + 8
        for m, lines in reversed(shown):
            badges = "".join(f"[{k[-1]}]" for k in m.layers)
            surf.blit(theme.fit(f"{m.index}  {m.sender} to {m.receiver}: {m.kind}  {badges}", 17, box.w - 24,
                                theme.ACCENT), (box.x + 12, y))
            y += 20
            for text, colour in lines:
                surf.blit(theme.fit(text, 16, box.w - 24, colour, min_size=16), (box.x + 12, y))
                y += 17
            y += 8

    def _draw_minds(self, surf: pygame.Surface, box: pygame.Rect, c: HandoffShown) -> None:
        pygame.draw.rect(surf, theme.CARD, box, border_radius=10)
        surf.blit(theme.fit("what each agent believes the task is", 19, box.w - 24, theme.INK, bold=True),
                  (box.x + 12, box.y + 8))
        y = box.y + 36
        for mind in c.minds:
            fine = mind.as_briefed
            surf.blit(theme.fit(f"{mind.agent}: {'as briefed' if fine else 'drifted'}", 17, box.w - 24,
                                theme.GOOD if fine else theme.BAD), (box.x + 12, y))
            y += 19
            for label, items in (("goal changed", ["yes"] if mind.goal_changed else []), ("missing", mind.missing),
                                 ("invented", mind.invented), ("reads", mind.reads)):
                if items and y < box.bottom - 18:
                    surf.blit(theme.fit(f"   {label}: {', '.join(items)}", 16, box.w - 24, theme.WARN),
                              (box.x + 12, y))
                    y += 18
            if y > box.bottom - 20:
                break

    def _draw_drifts(self, surf: pygame.Surface, box: pygame.Rect, c: HandoffShown) -> None:
        pygame.draw.rect(surf, theme.CARD, box, border_radius=10)
        surf.blit(theme.fit("drifts injected in this task", 19, box.w - 24, theme.INK, bold=True),
                  (box.x + 12, box.y + 8))
        y = box.y + 36
        for d in c.drifts:
            state, colour = _drift_state(d, len(c.messages), c.finished)
            surf.blit(theme.fit(f"{d.kind}: {d.what}   {state}", 17, box.w - 24, colour), (box.x + 12, y))
            y += 21
        natural = c.lost_unprompted
        if natural and y < box.bottom - 20:  # requirements the telephone game dropped on its own
            surf.blit(theme.fit("also caught, not injected (lost in transmission): " + ", ".join(natural), 16,
                                box.w - 24, theme.DIM), (box.x + 12, y))


def _drift_state(d: DriftShown, sent: int, finished: bool) -> tuple[str, tuple]:
    """How drift ``d`` stands after ``sent`` messages, in words, and its colour."""
    if d.at >= sent:
        return f"at message {d.at} ({d.sender})", theme.DIM
    if d.detected_at is not None:
        return f"caught at message {d.detected_at}", theme.GOOD
    if not d.carried:
        return "gone: a calibration of the whole chain restored it unseen", theme.DIM
    return ("not caught yet" if not finished else "never caught"), theme.BAD
