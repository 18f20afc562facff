"""What each fish decided, as of the tick a session is at (the window's follow panel reads it).

A session owns its :class:`DecisionHistory`: live and fork sessions keep it up to date as an
observer of their frames (and a live tank's rewind restores it with the state); a replay
rebuilds it from the recording after a seek. So whatever a window drew before — a branch
that was discarded, ticks skipped by a seek — the panel shows only decisions made before
the tick on screen.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from .. import kernel
from ..fish.plans import N_GOALS
from ..frame import Frame

_FIELDS = ("tick", "goal", "param", "horizon", "tier", "status", "ended")  # kept as arrays, one row per fish
SMALL = 16  # a batch of fewer decisions is kept fish by fish (a small tank's tick), more in numpy at once
# the types _tick.keep takes a batch's arrays in (fish, goals, params, horizons, tier, status, ended)
_KEEP_TYPES = (np.int64, np.int8, np.int16, np.int16, np.int8, np.int8, np.int8)
_TICK = kernel.built()  # the compiled module, whatever MIROFISH_TICK says (DecisionHistory.compiled decides)
_NO_CALLS: dict[int, dict[str, Any]] = {}  # a batch without model exchanges asked nothing (read, never written)


class LastDecisions(Mapping[int, dict[str, Any]]):
    """``history.last``: fish -> its last decision as a dict (``tick``, ``goal``, ``param``,
    ``horizon``, ``tier``, ``status``, ``thought``, ``call``, ``ended``), made when read from the
    history's arrays; only fish that have decided are in it."""

    def __init__(self, h: DecisionHistory):
        self._h = h

    def __getitem__(self, fish: int) -> dict[str, Any]:
        h = self._h
        if not 0 <= fish < h.tick.size or h.tick[fish] < 0:
            raise KeyError(fish)
        out: dict[str, Any] = {name: int(getattr(h, name)[fish]) for name in _FIELDS}
        out["thought"] = h.thoughts.get(fish, "")
        out["call"] = h.calls.get(fish)
        return out

    def __iter__(self) -> Iterator[int]:
        return iter(np.flatnonzero(self._h.tick >= 0).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._h.tick >= 0))


class DecisionHistory:
    """Each fish's last applied decision and how many plans of each goal it was given.

    ``last[fish]``: ``{"tick", "goal", "param", "horizon", "tier", "status", "thought", "call",
    "ended"}`` (``call``: the model exchange behind it, or None; ``ended``: the trigger code that
    ended the plan before it, -1 for none — fish/triggers.py); ``counts``: ``(fish, N_GOALS)`` int64.
    Kept as one array per field (``tick`` -1: no decision yet) and dicts of the fish with a
    thought or a model exchange, so a tick of 10,000 decisions costs a few array writes, not
    10,000 dicts; ``last`` makes the dicts when read (the window reads them, not every tick).
    """

    def __init__(self, n: int, last: Mapping[int, dict[str, Any]] | None = None, counts: np.ndarray | None = None,
                 n_goals: int = N_GOALS):
        # one column per goal of the run's plan table (its registry's; default this version's)
        self.counts = counts if counts is not None else np.zeros((n, n_goals), np.int64)
        self.compiled = kernel.compiled_tick() is not None  # batches kept in C (_tick.keep)
        self._set(len(self.counts), last or {})

    def _set(self, n: int, last: Mapping[int, dict[str, Any]]) -> None:
        self.tick = np.full(n, -1, np.int64)
        self.goal, self.param, self.horizon = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
        self.tier, self.status, self.ended = np.zeros(n, np.int64), np.zeros(n, np.int64), np.full(n, -1, np.int64)
        self.thoughts: dict[int, str] = {}
        self.calls: dict[int, dict[str, Any]] = {}
        for f, d in last.items():
            for name in _FIELDS:
                getattr(self, name)[f] = d.get(name, -1 if name == "ended" else 0)
            if d.get("thought"):
                self.thoughts[f] = d["thought"]
            if d.get("call") is not None:
                self.calls[f] = d["call"]

    @property
    def last(self) -> LastDecisions:
        return LastDecisions(self)

    @last.setter
    def last(self, value: Mapping[int, dict[str, Any]]) -> None:
        self._set(len(self.counts), value)

    compiled = False  # (a history made by copy() or unpickled: as its original says)

    def observe(self, frame: Frame) -> None:
        counts, tick = self.counts, frame.tick
        top = counts.shape[1] - 1
        for k, b in enumerate(frame.applied):
            fish = b.fish
            ended = frame.ended[k] if k < len(frame.ended) else None
            asked = {c["fish"]: c for c in b.calls if c.get("kind") == "decision"} if b.calls else _NO_CALLS
            if self.compiled and counts.dtype == np.int64 and counts.flags.c_contiguous:  # one C call (the
                # Python below is the reference)
                self._keep(b, ended, tick, top)
            elif fish.size < SMALL:  # a few decisions: fish by fish (fewer numpy calls than a batch's)
                ends = ended.tolist() if ended is not None else [-1] * fish.size
                status = b.status.tolist() if b.status is not None else [0] * fish.size
                for f, g, p, h, tier, st, end in zip(fish.tolist(), b.goals.tolist(), b.params.tolist(),
                                                      b.horizons.tolist(), b.tier.tolist(), status, ends):
                    counts[f, min(g, top)] += 1
                    self.tick[f], self.goal[f], self.param[f], self.horizon[f] = tick, g, p, h
                    self.tier[f], self.status[f], self.ended[f] = tier, st, end
            else:
                counts[fish, np.minimum(b.goals, top)] += 1  # (a batch holds each fish once)
                self.tick[fish] = tick
                self.goal[fish], self.param[fish], self.horizon[fish] = b.goals, b.params, b.horizons
                self.tier[fish] = b.tier
                self.status[fish] = b.status if b.status is not None else 0
                self.ended[fish] = ended if ended is not None else -1
            if b.thoughts or self.thoughts:
                for f, th in zip(fish.tolist(), b.thoughts or [""] * fish.size):
                    if th:
                        self.thoughts[f] = th
                    else:
                        self.thoughts.pop(f, None)
            if asked or self.calls:
                for f in fish.tolist():
                    call = asked.get(f)
                    if call is not None:
                        self.calls[f] = call
                    else:
                        self.calls.pop(f, None)

    @kernel.positional
    def _keep(self, b: Any, ended: np.ndarray | None, tick: int, top: int) -> None:
        """A batch's decisions into the arrays in one compiled call (``_tick.keep``)."""
        compiled, k = _TICK, b.fish.size
        assert compiled is not None
        batch = [b.fish, b.goals, b.params, b.horizons, b.tier, np.zeros(k, np.int8) if b.status is None else b.status,
                 np.full(k, -1, np.int8) if ended is None else ended]
        for again in (False, True):
            if again:  # one made otherwise (a slice, another integer type): converted, once more
                batch = [np.ascontiguousarray(a, t) for a, t in zip(batch, _KEEP_TYPES)]
            fish, goals, params, horizons, tier, status, ends = batch
            try:  # (a batch's arrays are of these types: DecisionBatch makes them so)
                compiled.keep(  # by name (_tick.KEEP_ARRAYS, KEEP_INTS)
                    {"fish": fish, "goals": goals, "params": params, "horizons": horizons, "tier": tier,
                     "status": status, "ended": ends, "counts": self.counts, "tick_of": self.tick,
                     "goal_of": self.goal, "param_of": self.param, "horizon_of": self.horizon,
                     "tier_of": self.tier, "status_of": self.status, "ended_of": self.ended},
                    {"tick": tick, "top": top})
                return
            except ValueError:
                if again:
                    raise

    def copy(self) -> DecisionHistory:
        out = DecisionHistory.__new__(DecisionHistory)
        out.compiled = self.compiled
        out.counts = self.counts.copy()
        for name in _FIELDS:
            setattr(out, name, getattr(self, name).copy())
        out.thoughts = dict(self.thoughts)
        out.calls = {f: dict(c) for f, c in self.calls.items()}
        return out
