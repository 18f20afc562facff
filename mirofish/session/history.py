"""What each fish decided, as of the tick a session is at (the window's follow panel reads it).

A session owns its :class:`DecisionHistory`: live and fork sessions keep it up to date as an
observer of their frames (and a live tank's rewind restores it with the state); a replay
rebuilds it from the recording after a seek. So whatever a window drew before — a branch
that was discarded, ticks skipped by a seek — the panel shows only decisions made before
the tick on screen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fish.plans import N_GOALS
from ..frame import Frame


class DecisionHistory:
    """Each fish's last applied decision and how many plans of each goal it was given.

    ``last[fish]``: ``{"tick", "goal", "param", "horizon", "tier", "status", "thought", "call",
    "ended"}`` (``call``: the model exchange behind it, or None; ``ended``: the trigger code that
    ended the plan before it, -1 for none — fish/triggers.py); ``counts``: ``(fish, N_GOALS)`` int64.
    """

    def __init__(self, n: int, last: dict[int, dict[str, Any]] | None = None, counts: np.ndarray | None = None):
        self.last: dict[int, dict[str, Any]] = dict(last or {})
        self.counts = counts if counts is not None else np.zeros((n, N_GOALS), np.int64)

    def observe(self, frame: Frame) -> None:
        counts, top = self.counts, N_GOALS - 1
        for k, b in enumerate(frame.applied):
            ended = frame.ended[k].tolist() if k < len(frame.ended) else [-1] * len(b)
            thoughts = b.thoughts or [""] * len(b)
            status = b.status.tolist() if b.status is not None else [0] * len(b)
            asked = {c["fish"]: c for c in b.calls or () if c.get("kind") == "decision"}
            for f, g, p, h, tier, th, st, end in zip(b.fish.tolist(), b.goals.tolist(), b.params.tolist(),
                                                     b.horizons.tolist(), b.tier.tolist(), thoughts, status, ended):
                counts[f, min(g, top)] += 1
                self.last[f] = {"tick": frame.tick, "goal": g, "param": p, "horizon": h, "tier": tier,
                                "status": st, "thought": th, "call": asked.get(f), "ended": end}

    def copy(self) -> DecisionHistory:
        return DecisionHistory(len(self.counts), {f: dict(d) for f, d in self.last.items()}, self.counts.copy())
