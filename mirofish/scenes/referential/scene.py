"""The referential game in the window: sender card, message, candidates, glossary, charts."""

from __future__ import annotations

from collections import deque

import numpy as np
import pygame

from ...ui import theme
from ...ui.panels import sparkline
from ..base import PacedScene
from .experiment import Experiment
from .game import GameConfig, GameObject, Round

COLOURS = {"red": (232, 88, 80), "blue": (84, 140, 240), "green": (96, 200, 120), "yellow": (240, 210, 90)}


def draw_object(surf: pygame.Surface, obj: GameObject, names: list[str], centre: tuple[int, int], unit: int) -> None:
    props = obj.properties(names)
    colour = COLOURS.get(props.get("color", ""), (200, 200, 210))
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

    def __init__(self, experiment: Experiment | None = None):
        self.exp = experiment or Experiment(GameConfig(seed=0, rounds=10_000))
        super().__init__()
        self.success: deque[float] = deque(maxlen=300)
        self.compression: deque[float] = deque(maxlen=300)
        self.size: deque[float] = deque(maxlen=300)
        self.last: Round | None = None

    # model side
    def reset(self, seed: int) -> None:
        cfg = self.exp.cfg.model_copy(update={"seed": seed})
        self.exp.close()
        self.exp = Experiment(cfg)
        for series in (self.success, self.compression, self.size):
            series.clear()
        self.last = None

    def step(self) -> None:
        if len(self.exp.rounds) >= self.exp.cfg.rounds:
            self.pacer.paused = True
            return
        self.last = self.exp.step()
        self.success.append(float(np.mean(self.exp.success[-50:])))
        msg, nat = zip(*self.exp.lengths[-50:])
        self.compression.append(sum(msg) / sum(nat))
        self.size.append(self.exp.glossary.size())

    def snapshot(self) -> dict:
        return {"summary": self.exp.summary(), "glossary": self.exp.glossary.as_dict()}

    def close(self) -> None:
        self.exp.close()

    # view side
    def draw(self, surf: pygame.Surface) -> None:
        surf.fill(theme.PANEL)
        w, h = surf.get_size()
        exp, names = self.exp, self.exp.game.names
        surf.blit(theme.text("Referential game", 32, theme.INK, bold=True), (24, 16))
        s = exp.summary() if exp.rounds else {}
        surf.blit(theme.text(f"round {len(exp.rounds)}/{exp.cfg.rounds}   condition {exp.cfg.condition}   "
                             f"{len(exp.present)} agents   {exp.cfg.candidates} candidates   speed "
                             f"{self.pacer.speed:g}x{'  PAUSED' if self.pacer.paused else ''}   S: next scene",
                             20, theme.DIM), (24, 52))
        r = self.last
        card = pygame.Rect(24, 90, 300, 260)
        pygame.draw.rect(surf, (16, 32, 56), card, border_radius=10)
        surf.blit(theme.text("sender sees the target", 18, theme.DIM), (card.x + 14, card.y + 10))
        if r is not None:
            draw_object(surf, r.target, names, (card.centerx, card.y + 110), 56)
            surf.blit(theme.text(r.target.describe(tuple(names)), 18, theme.FAINT), (card.x + 14, card.bottom - 30))
        msg_box = pygame.Rect(card.right + 24, 90, 340, 260)
        pygame.draw.rect(surf, (16, 32, 56), msg_box, border_radius=10)
        surf.blit(theme.text("message", 18, theme.DIM), (msg_box.x + 14, msg_box.y + 10))
        if r is not None:
            surf.blit(theme.text(f"\u201c{r.message}\u201d", 54, theme.ACCENT, bold=True), (msg_box.x + 20,
                                                                                            msg_box.y + 70))
            said = f"{len(r.message)} chars vs \u201c{r.target.describe(tuple(names))}\u201d"
            surf.blit(theme.text(said, 18, theme.DIM),
                      (msg_box.x + 20, msg_box.y + 140))
            if r.new_terms:
                surf.blit(theme.text("new terms: " + ", ".join(r.new_terms), 20, theme.WARN),
                          (msg_box.x + 20, msg_box.y + 180))
        cands = pygame.Rect(24, 370, card.w + msg_box.w + 24, 170)
        pygame.draw.rect(surf, (16, 32, 56), cands, border_radius=10)
        surf.blit(theme.text("receiver sees the candidates and chooses", 18, theme.DIM), (cands.x + 14, cands.y + 10))
        if r is not None:
            step = cands.w // (len(r.candidates) + 1)
            for k, c in enumerate(r.candidates):
                cx = cands.x + step * (k + 1)
                draw_object(surf, c, names, (cx, cands.y + 90), 30)
                if c.id == r.choice:
                    colour = theme.GOOD if r.success else theme.BAD
                    pygame.draw.rect(surf, colour, (cx - 44, cands.y + 42, 88, 96), 3, border_radius=8)
                if c.id == r.target.id:
                    surf.blit(theme.text("target", 16, theme.INK), (cx - 20, cands.y + 142))
        # charts
        chart = pygame.Rect(24, 560, cands.w, h - 580)
        pygame.draw.rect(surf, (16, 32, 56), chart, border_radius=10)
        rows = [("success (last 50)", self.success, theme.GOOD, 0.0, 1.0, f"chance {exp.game.chance:.0%}"),
                ("compression vs spelled out", self.compression, theme.ACCENT, 0.0, 1.2, ""),
                ("glossary size", self.size, theme.WARN, 0.0, None, "")]
        lh = max(40, (chart.h - 20) // 3)
        for k, (label, data, colour, lo, hi, note) in enumerate(rows):
            y = chart.y + 10 + k * lh
            value = data[-1] if data else 0
            if "success" in label:
                shown = f"{value:.0%}"
            else:
                shown = f"{value:.2f}" if "compression" in label else f"{value:.0f}"
            surf.blit(theme.text(f"{label}: {shown}  {note}", 18, theme.INK), (chart.x + 14, y))
            sparkline(surf, pygame.Rect(chart.x + 14, y + 20, chart.w - 28, lh - 28), data, colour, lo, hi)
        # glossary table
        table = pygame.Rect(cands.right + 24, 90, w - cands.right - 48, h - 110)
        pygame.draw.rect(surf, (16, 32, 56), table, border_radius=10)
        surf.blit(theme.text("glossary (by stable score)", 20, theme.INK, bold=True), (table.x + 14, table.y + 10))
        heads = ("term", "means", "receiver reads", "uses", "success", "stable")
        xs = [0, 70, 250, 430, 500, 590]
        for x, head in zip(xs, heads):
            surf.blit(theme.text(head, 17, theme.DIM), (table.x + 14 + x, table.y + 40))
        terms = sorted(exp.glossary.active(), key=lambda t: -t.stable_score)
        for k, t in enumerate(terms[: (table.h - 80) // 22]):
            y = table.y + 62 + k * 22
            meaning = " ".join(t.canonical.values())
            read = " ".join(t.by_receiver.values()) if t.by_receiver else "?"
            colour = theme.GOOD if t.agreed else theme.BAD
            cells = (t.term, meaning, read, str(t.usage), f"{t.success_rate:.0%}", f"{t.stable_score:.2f}")
            for x, cell in zip(xs, cells):
                surf.blit(theme.text(cell, 18, colour if x == 250 else theme.INK), (table.x + 14 + x, y))
        if s:
            surf.blit(theme.text(f"agreement {s['definition_agreement']:.0%}   topographic similarity "
                                 f"{s['topographic_similarity']:.2f}   pruned {s['pruned_terms']}", 18, theme.DIM),
                      (table.x + 14, table.bottom - 28))
