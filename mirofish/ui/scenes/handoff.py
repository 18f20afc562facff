"""The report chain in the window: the messages with their signals, what each agent believes
the task is (against the brief), the drifts injected and which were caught. One message per
tick; tasks follow each other."""

from __future__ import annotations

from typing import Any

import pygame

from ...scenes.handoff.brief import READING_CODES, draw_brief
from ...scenes.handoff.chain import ARMS, FLOW, Chain, Message, _req_text
from .. import theme
from ..keys import Line, Row
from .base import PacedScene


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
                 wire_form: str = "full"):
        self.seed, self.arm, self.writer = seed, layers, writer  # writer: a model writes the messages
        self.l2_source, self.wire_form = l2_source, wire_form
        super().__init__()
        self.index = 0
        self.done: list[dict[str, Any]] = []
        self._start()

    def _start(self) -> None:
        self.chain = Chain(draw_brief(self.seed, self.index), ARMS[self.arm], self.seed, writer=self.writer,
                           l2_source=self.l2_source, wire_form=self.wire_form)
        self.messages = self.chain.iter_messages()
        self.finished = False

    def reset(self, seed: int) -> None:
        self.seed, self.index, self.done = seed, 0, []
        self._start()

    def step(self) -> None:
        if self.finished:
            self.done.append(self.chain.result())
            self.index += 1
            self._start()
            return
        try:
            next(self.messages)
        except StopIteration:
            self.finished = True

    def snapshot(self) -> dict[str, Any]:
        return {"task": self.chain.brief.task_id, "messages": len(self.chain.messages), "done": self.done[-20:]}

    @property
    def uses_model(self) -> bool:  # type: ignore[override]
        return self.writer is not None

    def close(self) -> None:
        self.close_worker()
        if self.writer is not None:
            self.writer.close()

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
        c = self.chain
        surf.blit(theme.text("Report chain", 32, theme.INK, bold=True), (24, 16))
        caught = sum(d["detected_at"] is not None for r in self.done for d in r["drifts"])
        injected = sum(len(r["drifts"]) for r in self.done)
        rate = f"{caught}/{injected} drifts caught" if injected else "no task finished yet"
        pace = "paused" if self.pacer.paused else f"speed {self.pacer.speed:g}x"
        surf.blit(theme.fit(f"task {self.index + 1} ({c.brief.task_id})   Argent {self.arm}   {rate}   "
                            f"{pace}   H: what you see   S: next scene", 20, w - 48, theme.DIM), (24, 52))
        brief = theme.wrap(f"brief: {c.brief.goal}  Requirements: "
                           + "; ".join(_req_text(r) for r in c.brief.requirements), w - 48, 16)
        for k, line in enumerate(brief[:2]):
            surf.blit(theme.fit(line, 16, w - 48, theme.FAINT, min_size=16), (24, 74 + 16 * k))
        self._draw_messages(surf, rects["messages"])
        self._draw_minds(surf, rects["minds"])
        self._draw_drifts(surf, rects["drifts"])
        self._draw_figures(surf, rects["figures"])

    def _draw_figures(self, surf: pygame.Surface, box: pygame.Rect) -> None:
        """This arm's figures over the tasks finished so far."""
        pygame.draw.rect(surf, theme.CARD, box, border_radius=10)
        surf.blit(theme.fit(f"Argent {self.arm}: the tasks finished so far", 19, box.w - 24, theme.INK, bold=True),
                  (box.x + 12, box.y + 8))
        done = self.done
        if not done:
            surf.blit(theme.text("(the first task is still going)", 16, theme.DIM), (box.x + 12, box.y + 36))
            return
        drifts = [d for r in done for d in r["drifts"]]
        caught = sum(d["detected_at"] is not None for d in drifts)
        tokens = sum(r["message_tokens"] for r in done)
        extra = sum(r["signal_tokens"] + r["calibration_tokens"] for r in done)
        lines = [f"tasks {len(done)}   drifts caught {caught} of {len(drifts)}",
                 f"reports that meet the brief: {sum(r['completed'] for r in done)} of {len(done)}",
                 f"calibrations per task {sum(r['calibrations'] for r in done) / len(done):.2f}",
                 f"signals and calibrations: {extra / max(1, tokens + extra):.1%} of the tokens (estimated)"]
        for k, line in enumerate(lines):
            if box.y + 36 + 20 * k < box.bottom - 18:
                surf.blit(theme.fit(line, 16, box.w - 24, theme.DIM), (box.x + 12, box.y + 36 + 20 * k))

    def _draw_messages(self, surf: pygame.Surface, box: pygame.Rect) -> None:
        pygame.draw.rect(surf, theme.CARD, box, border_radius=10)
        shown: list[tuple[Message, list[tuple[str, tuple]]]] = []
        used = 0
        for m in reversed(self.chain.messages):  # the newest that fit
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
            badges = "".join(f"[{k[-1]}]" for k in ("layer1", "layer2", "layer3") if k in m.signals)
            surf.blit(theme.fit(f"{m.index}  {m.sender} to {m.receiver}: {m.kind}  {badges}", 17, box.w - 24,
                                theme.ACCENT), (box.x + 12, y))
            y += 20
            for text, colour in lines:
                surf.blit(theme.fit(text, 16, box.w - 24, colour, min_size=16), (box.x + 12, y))
                y += 17
            y += 8

    def _draw_minds(self, surf: pygame.Surface, box: pygame.Rect) -> None:
        pygame.draw.rect(surf, theme.CARD, box, border_radius=10)
        surf.blit(theme.fit("what each agent believes the task is", 19, box.w - 24, theme.INK, bold=True),
                  (box.x + 12, box.y + 8))
        reg, y = self.chain.registry, box.y + 36
        for agent, mind in self.chain.minds.items():
            goal_ok = mind.goal == reg.goal
            missing = sorted(reg.requirements - mind.requirements)
            extra = sorted(mind.requirements - reg.requirements)
            wrong = [f"{c}={READING_CODES[r]}" for c, r in mind.concepts.items() if r != reg.concepts[c]]
            fine = goal_ok and not missing and not extra and not wrong
            surf.blit(theme.fit(f"{agent}: {'as briefed' if fine else 'drifted'}", 17, box.w - 24,
                                theme.GOOD if fine else theme.BAD), (box.x + 12, y))
            y += 19
            for label, items in (("goal changed", [] if goal_ok else ["yes"]), ("missing", missing),
                                 ("invented", extra), ("reads", wrong)):
                if items and y < box.bottom - 18:
                    surf.blit(theme.fit(f"   {label}: {', '.join(items)}", 16, box.w - 24, theme.WARN),
                              (box.x + 12, y))
                    y += 18
            if y > box.bottom - 20:
                break

    def _draw_drifts(self, surf: pygame.Surface, box: pygame.Rect) -> None:
        pygame.draw.rect(surf, theme.CARD, box, border_radius=10)
        surf.blit(theme.fit("drifts injected in this task", 19, box.w - 24, theme.INK, bold=True),
                  (box.x + 12, box.y + 8))
        y = box.y + 36
        at = len(self.chain.messages)
        for d in self.chain.drifts:
            who = FLOW[d.at][0]
            if d.at >= at:
                state, colour = f"at message {d.at} ({who})", theme.DIM
            elif d.detected_at is not None:
                state, colour = f"caught at message {d.detected_at}", theme.GOOD
            elif not self._carried(d):
                state, colour = "gone: a calibration of the whole chain restored it unseen", theme.DIM
            else:
                state, colour = "not caught yet" if not self.finished else "never caught", theme.BAD
            surf.blit(theme.fit(f"{d.kind}: {d.what}   {state}", 17, box.w - 24, colour), (box.x + 12, y))
            y += 21
        injected = {f"{d.kind}:{d.what}" for d in self.chain.drifts}
        natural = sorted({f for m in self.chain.messages for f in m.detections
                          if f.startswith("lost:") and f not in injected})
        if natural and y < box.bottom - 20:  # requirements the telephone game dropped on its own
            surf.blit(theme.fit("also caught, not injected (lost in transmission): " + ", ".join(natural), 16,
                                box.w - 24, theme.DIM), (box.x + 12, y))

    def _carried(self, d: Any) -> bool:
        """Whether any agent still believes what drift ``d`` made it believe."""
        reg = self.chain.registry
        for mind in self.chain.minds.values():
            if d.kind == "misunderstanding" and mind.concepts[d.what] != reg.concepts[d.what]:
                return True
            if d.kind == "invented" and d.what in mind.requirements:
                return True
            if d.kind == "lost" and d.what not in mind.requirements:
                return True
        return False
