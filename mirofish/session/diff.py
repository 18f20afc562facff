"""Compare two runs, or two time windows of one run (the source design's second debugging step).

``python run.py diff A.db B.db`` — a run and its fork, or two runs of the same tank: both are
replayed over the ticks they share, side by side, and compared tick by tick: the **first
divergent tick and fish** (the first tick at which a fish's applied decision differs — for a
fork: the fork tick and the swapped fish), the first tick a fish stands in another cell, how
many fish are in another cell over time, and, over the shared ticks, the executed actions and
the plans chosen, stuck fish-ticks, memory sizes and the sampled metrics, side by side.

``python run.py diff REC --a T1:T2 --b T3:T4`` — two windows of one run: the same
distributions and measures, window against window (nothing is compared cell by cell).

Text by default, ``--json`` for JSON, ``--png OUT`` for a picture (drawn by :func:`mirofish.ui.figures.diff_png`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..fish.plans import DEFAULT
from ..observe.metrics import ranked
from ..observe.recording import SAMPLE_COLUMNS, Recording, RecordingError
from ..registry import Registry
from .replay import ReplaySession

_SHOWN_METRICS = {m.key for m in ranked("diff")}  # the metric table's (observe/metrics.py)


def parse_window(text: str) -> tuple[int, int]:
    """``"T1:T2"`` → (T1, T2) with T1 < T2; ValueError otherwise."""
    try:
        a, b = (int(v) for v in text.split(":"))
    except ValueError:
        raise ValueError(f"a window is T1:T2 (two ticks), got {text!r}") from None
    if not 0 <= a < b:
        raise ValueError(f"a window T1:T2 needs 0 <= T1 < T2, got {text!r}")
    return a, b


class _Side:
    """One side of a diff: a recording replayed over ``[t0, t1)``, with what is counted per tick."""

    def __init__(self, rec: Recording, t0: int, t1: int, label: str):
        self.rec, self.t0, self.t1, self.label = rec, t0, t1, label
        self.player = ReplaySession(rec)
        self.player.seek(t0)
        n = rec.config.fish.slots
        self.names = rec.plans.grid.action_names  # (the tank's grid: a hexagonal tank's eight)
        self.actions = np.zeros(len(self.names), np.int64)
        self.plans = np.zeros(rec.plans.n, np.int64)  # per goal of the run's plan table
        self.decisions = 0
        self.stuck_ticks = 0
        self.n = n
        self.groups = None
        if rec.config.fish.groups:  # a mixed tank: figures per group (observe/groups.py)
            from ..observe.groups import GroupFigures

            self.groups = GroupFigures(rec.config)

    def step(self) -> tuple[np.ndarray, dict[int, tuple[int, int, int]]] | None:
        """One tick: the decisions applied at it (fish → plan), counted; then the cells after it."""
        t = self.player.tick
        d = self.rec.decisions_at(t)
        decided: dict[int, tuple[int, int, int]] = {}
        if d is not None:
            for f, g, p, h in zip(d.fish.tolist(), d.goal.tolist(), d.param.tolist(), d.horizon.tolist()):
                decided[f] = (g, p, h)
                self.plans[g] += 1
            self.decisions += d.fish.size
        frame = self.player.step()
        if frame is None:
            return None
        if self.groups is not None:
            self.groups(frame)
        self.actions += np.bincount(frame.executed.astype(np.int64), minlength=len(self.names))[: len(self.names)]
        self.stuck_ticks += int(np.count_nonzero(self.player.world.school.stuck))
        return self.player.world.school.cell.copy(), decided

    def summary(self) -> dict[str, Any]:
        s = self.player.world.school
        mem = s.memory
        sizes = np.count_nonzero(mem.code != 0, axis=1)
        samples = self.rec.sample_rows(self.t0, self.t1)
        metrics = {}
        for k, name in enumerate(SAMPLE_COLUMNS):
            if name in _SHOWN_METRICS and len(samples):
                metrics[name] = round(float(np.mean(samples[:, 1 + k])), 4)
        total_a = max(1, int(self.actions.sum()))
        total_p = max(1, int(self.plans.sum()))
        return {
            "label": self.label, "recording": str(self.rec.path), "ticks": [self.t0, self.player.tick],
            "decisions": self.decisions,
            "actions": {a: round(int(c) / total_a, 4) for a, c in zip(self.names, self.actions)},
            "plans": {g: round(int(c) / total_p, 4) for g, c in zip(self.rec.plans.names, self.plans) if c},
            "stuck_fish_ticks": self.stuck_ticks,
            "memory_entries_mean": round(float(np.mean(sizes)), 2),
            "summaries_mean": round(float(np.mean(np.minimum(s.long_memory.count, s.long_memory.kept))), 2),
            "metrics_mean": metrics,
            **({"groups": self.groups.summary(self.player.metrics.word_deed)} if self.groups is not None else {}),
        }

    def close(self) -> None:
        self.player.close()


def _open(path: str | Path, registry: Registry | None = None) -> Recording:
    return Recording(path, registry=registry)


def diff_runs(a_path: str | Path, b_path: str | Path, registry: Registry | None = None) -> dict[str, Any]:
    """Two recordings of the same tank compared over the ticks both hold (see the module doc);
    ``registry``: the run's that reads them (default the process's)."""
    a, b = _open(a_path, registry), _open(b_path, registry)
    try:
        if a.config.fish.slots != b.config.fish.slots:
            raise RecordingError(f"{a.path} has {a.config.fish.slots} fish and {b.path} {b.config.fish.slots}: "
                                 f"diff compares the same tank")
        if a.config.world.grid != b.config.world.grid:  # (their actions and cells are not the same things)
            raise RecordingError(f"{a.path} is a {a.config.world.grid} tank and {b.path} a {b.config.world.grid} one: "
                                 f"diff compares the same tank")
        t0, t1 = max(a.first_tick, b.first_tick), min(a.last_tick, b.last_tick)
        if t0 >= t1:
            raise RecordingError(f"{a.path} (ticks {a.first_tick}..{a.last_tick}) and {b.path} (ticks "
                                 f"{b.first_tick}..{b.last_tick}) share no tick")
        sa, sb = _Side(a, t0, t1, "A"), _Side(b, t0, t1, "B")
        try:
            same_start = sa.player.state_hash() == sb.player.state_hash()
            first_decision: dict[str, Any] | None = None
            first_cell: dict[str, Any] | None = None
            curve: list[tuple[int, int]] = []
            ever = np.zeros(a.config.fish.slots, bool)
            for t in range(t0, t1):
                ra, rb = sa.step(), sb.step()
                if ra is None or rb is None:
                    break
                (ca, da), (cb, db) = ra, rb
                if first_decision is None and da != db:
                    fish = sorted(f for f in set(da) | set(db) if da.get(f) != db.get(f))
                    first_decision = {"tick": t, "fish": fish,
                                      "a": [a.plans.describe(*da[f]) if f in da else None for f in fish],
                                      "b": [b.plans.describe(*db[f]) if f in db else None for f in fish]}
                differ = ca != cb
                ever |= differ
                n = int(np.count_nonzero(differ))
                curve.append((t + 1, n))
                if first_cell is None and n:
                    first_cell = {"tick": t, "fish": np.flatnonzero(differ).tolist()}
            out = {
                "kind": "runs", "from": t0, "to": sa.player.tick, "same_state_at_start": same_start,
                "first_divergent_decision": first_decision, "first_tick_cells_differ": first_cell,
                "cells_differ": {"final": curve[-1][1] if curve else 0,
                                 "max": max((n for _, n in curve), default=0),
                                 "fish_ever_elsewhere": int(ever.sum())},
                "curve": curve, "a": sa.summary(), "b": sb.summary(),
                "final_state_hashes": [sa.player.state_hash(), sb.player.state_hash()],
                "prompts": [_prompts(a), _prompts(b)],
            }
        finally:
            sa.close()
            sb.close()
    finally:
        a.close()
        b.close()
    return out


def _prompts(rec: Recording) -> dict[str, dict[str, str]]:
    """The prompts a recording says its model or user brains were asked in: label → name, hash."""
    return {label: {"name": p.get("name", "?"), "hash": p.get("hash", "?")}
            for label, p in (rec.header.get("prompts") or {}).items()}


def diff_windows(path: str | Path, wa: tuple[int, int], wb: tuple[int, int]) -> dict[str, Any]:
    """Two windows of one recording compared (see the module doc)."""
    rec = _open(path)
    try:
        sides = []
        for (t0, t1), label in ((wa, "A"), (wb, "B")):
            if not rec.first_tick <= t0 < t1 <= rec.last_tick:
                raise RecordingError(f"window {label} {t0}:{t1} is not inside the recorded ticks "
                                     f"{rec.first_tick}..{rec.last_tick}")
            side = _Side(rec, t0, t1, f"{label} t{t0}-t{t1}")
            try:
                while side.player.tick < t1 and side.step() is not None:
                    pass
                sides.append(side.summary())
            finally:
                side.close()
    finally:
        rec.close()
    return {"kind": "windows", "recording": str(path), "a": sides[0], "b": sides[1]}


def render_text(d: dict[str, Any]) -> str:
    a, b = d["a"], d["b"]
    lines = []
    if d["kind"] == "runs":
        lines.append(f"A {a['recording']}  vs  B {b['recording']}  over ticks {d['from']}..{d['to']}"
                     + ("" if d["same_state_at_start"] else "  (they differ already at the start)"))
        fd = d["first_divergent_decision"]
        if fd:
            said = [v[0] if v and v[0] is not None else "no decision then" for v in (fd["a"], fd["b"])]
            lines.append(f"first divergent decision: t{fd['tick']}, fish {', '.join(map(str, fd['fish'][:8]))}"
                         f" (A: {said[0]}; B: {said[1]})")
        else:
            lines.append("no decision differs")
        fc = d["first_tick_cells_differ"]
        lines.append(f"first tick a fish is in another cell: t{fc['tick']} (fish {', '.join(map(str, fc['fish'][:8]))})"
                     if fc else "every fish is in the same cell at every tick")
        pa, pb = d.get("prompts", [{}, {}])
        if pa or pb:
            from ..brains.prompts import prompt_line

            same = "the same prompt" if pa == pb else "different prompts"
            lines.append(f"{same}: A {prompt_line(pa).split(': ', 1)[1]}  vs  B {prompt_line(pb).split(': ', 1)[1]}")
        cd = d["cells_differ"]
        lines.append(f"fish in another cell: {cd['final']} at the end, {cd['max']} at most, "
                     f"{cd['fish_ever_elsewhere']} ever")
    else:
        lines.append(f"{d['recording']}: window {a['label']}  vs  window {b['label']}")
    width = 22

    def row(name: str, va: object, vb: object) -> str:
        return f"  {name:<{width}} {va!s:>10} {vb!s:>10}"

    lines.append(row("", "A", "B"))
    lines.append("actions executed (share)")
    for k in a["actions"]:
        lines.append(row(k, a["actions"][k], b["actions"][k]))
    lines.append("plans chosen (share)")
    order = {g: i for i, g in enumerate(DEFAULT.names)}  # the shipped order first, a run's own after
    for k in sorted(set(a["plans"]) | set(b["plans"]), key=lambda g: (order.get(g, len(order)), g)):
        lines.append(row(k, a["plans"].get(k, 0.0), b["plans"].get(k, 0.0)))
    lines.append(row("decisions", a["decisions"], b["decisions"]))
    lines.append(row("stuck fish-ticks", a["stuck_fish_ticks"], b["stuck_fish_ticks"]))
    lines.append(row("memories per fish", a["memory_entries_mean"], b["memory_entries_mean"]))
    lines.append("metrics (mean of the samples)")
    for k in a["metrics_mean"]:
        lines.append(row(k, a["metrics_mean"][k], b["metrics_mean"].get(k)))
    if "groups" in a or "groups" in b:
        from ..observe.groups import render_lines

        for side, name in ((a, "A"), (b, "B")):
            if "groups" in side:
                lines.append(f"groups, {name}")
                lines += ["  " + x for x in render_lines(side["groups"])]
    return "\n".join(lines)
