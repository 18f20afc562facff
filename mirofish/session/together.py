"""The observers of a joined world's tanks, observing all tanks at once.

A :class:`~mirofish.session.joined.JoinedEngine` gives each tank its own frame and each tank's
observers read it: per tank and tick, a frame sliced out of the joined arrays, its metrics'
bookkeeping, its word-and-deed tally, its decision history — Python that does for 16 tanks
sixteen times what it could do once. When every tank's observers are the ones a headless run
keeps (its :class:`~mirofish.observe.metrics.Metrics`, whose word and deed are
:class:`~mirofish.observe.worddeed.WordDeed`, and its
:class:`~mirofish.session.history.DecisionHistory`), :class:`Together` observes them all with
the joined arrays themselves:

* **the metrics' tally**: one compiled call for all tanks (``_tick.tally_tanks``), each tank's
  windows and sums a row of arrays with a tank axis — each tank's
  :class:`~mirofish.observe.metrics.Metrics` keeps views of its rows, so it reads and steps
  alone as before; then each tank's few numbers (``Metrics._fold``), and its sample every
  ``sample_every`` ticks of a frame of its own, made only then;
* **word and deed, and the decision history**: what they keep is fish by fish and nothing of it
  is a tank's sum, so the tanks' fish are one :class:`~mirofish.observe.worddeed.WordDeed` and
  one :class:`~mirofish.session.history.DecisionHistory` of all the joined fish, fed the joined
  frame (one judge, one deed tally, one keep a tick); :meth:`Together.settle` writes each tank's
  fish back into its own (the joined engine calls it when the run's figures are read).

Each tank's figures are those of its run alone, bit for bit (tests/test_together.py; the
sweep's rows, tests/test_sweep_joined.py). Tanks whose observers are anything else (a
plug-in's observer, a kept record of every plan, words to read, a fork's first batch) are
observed one by one, as before (:func:`together`: None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import kernel
from ..brains.base import DecisionBatch
from ..frame import Frame
from ..observe.metrics import _FALLBACK, SAMPLE_NONE, Metrics
from ..observe.worddeed import _HOLD, WordDeed
from .history import DecisionHistory

_TICK = kernel.built()

# the metrics' arrays a tank keeps per tick, given a tank axis (each tank's Metrics: views of its rows)
_STACKED = ("_actions", "_action_sum", "_conflicts", "_conflict_sum", "_nb", "_nb_sum", "last_moved", "heat",
            "_outcomes")
# word and deed's per-fish state (fish on the first axis, but the table's: its second)
_WD_FISH = ("open", "_said", "food0", "counts", "_ring", "_ring_n")
_HISTORY_FISH = ("counts", "tick", "goal", "param", "horizon", "tier", "status", "ended")


def _own(obs: Callable[[Frame], None], cls: Any) -> Any:
    """The object of ``obs`` if it is ``cls.observe`` of an instance of exactly ``cls``, else None."""
    owner, observe = getattr(obs, "__self__", None), cls.observe
    if type(owner) is cls and getattr(obs, "__func__", None) is observe:
        return owner
    return None


def together(observers: list[list[Callable[[Frame], None]]], fish_per_tank: int) -> Together | None:
    """A :class:`Together` for these tanks' observers, or None when they must be observed one by
    one: each tank's observers must be its metrics and its decision history, each observed the
    compiled way, in step with the others (the same tick, the same settings, the same things
    kept), with no word of a plan to read nor every plan kept."""
    if _TICK is None or len(observers) < 2:
        return None
    metrics, histories = [], []
    for obs in observers:
        if len(obs) != 2:
            return None
        m, h = _own(obs[0], Metrics), _own(obs[1], DecisionHistory)
        if m is None or h is None:
            return None
        metrics.append(m)
        histories.append(h)
    m0, n = metrics[0], fish_per_tank
    same = (m0.ticks, m0.cfg, m0.judge_words, m0.count_decisions, m0.sampling, m0.grid, m0.word_deed.plans,
            m0._fallbacks_seen)
    for m, h in zip(metrics, histories):
        wd = m.word_deed
        if (m.ticks, m.cfg, m.judge_words, m.count_decisions, m.sampling, m.grid, wd.plans,
                m._fallbacks_seen) != same or not (m.compiled and wd.compiled and h.compiled):
            return None
        if m.last_moved.size != n or h.counts.shape[0] != n or wd.n != n:
            return None
        if wd.keep or wd.records or wd._ring_thought or any(wd.thought) or wd._said.any() or h.thoughts or h.calls:
            return None  # (words, records or model exchanges: read fish by fish, as alone)
        if (wd._prev is None) != (m0.word_deed._prev is None) or h.counts.dtype != np.int64:
            return None
    return Together(metrics, histories, n)


class Together:
    """Every tank's metrics, word and deed and decision history, observed at once (see the
    module's docstring); made by :func:`together`."""

    def __init__(self, metrics: list[Metrics], histories: list[DecisionHistory], n: int):
        self.metrics, self.histories, self.n, self.tanks = metrics, histories, n, len(metrics)
        self.stacked: dict[str, np.ndarray] = {}
        for name in _STACKED:  # each tank's arrays: views of its row of one array
            self.stacked[name] = stacked = np.stack([getattr(m, name) for m in metrics])
            for k, m in enumerate(metrics):
                setattr(m, name, stacked[k])
        m0, N = metrics[0], self.tanks * n
        self.all_here = np.ones(N, np.uint8)
        self.here_worst = np.zeros((self.tanks, 2), np.int64)
        self.judge_words = m0.judge_words
        wd0 = m0.word_deed
        self.word_deed = wd = WordDeed(N, plans=wd0.plans, grid=wd0.grid)
        wds = [m.word_deed for m in metrics]
        for name in _WD_FISH:
            setattr(wd, name, np.concatenate([getattr(w, name) for w in wds]))
        wd.table = np.concatenate([w.table for w in wds], axis=1)
        wd._holds = sum(w._holds for w in wds)
        if wd0._prev is not None:
            wd._prev = tuple(np.concatenate([w._prev[i] for w in wds]) for i in range(len(wd0._prev)))  # type: ignore[index]
            wd._prev_native = all(w._prev_native for w in wds)
        self.history = hist = DecisionHistory(N, counts=np.concatenate([h.counts for h in histories]))
        for name in _HISTORY_FISH[1:]:
            setattr(hist, name, np.concatenate([getattr(h, name) for h in histories]))
        self.settled = True

    @kernel.positional
    def observe(self, f: Frame, bounds: list[int] | None, live: DecisionBatch | None,
                frames: Callable[[], list[Frame]]) -> None:
        """One tick of every tank: ``f``, the joined world's frame (its fish all tanks' fish, its
        applied decisions the planner's for all, ``live``, whose tank ``k``'s are its rows
        ``bounds[k]:bounds[k + 1]``, its latencies theirs); ``frames``, each tank's own frame,
        asked for only on a sample's tick."""
        self.settled = False
        if self.judge_words:
            self.word_deed.observe(f)
        self.history.observe(f)
        m0, n = self.metrics[0], self.n
        cfg, slot, nslot = m0.cfg, m0.ticks % m0.cfg.window, (m0.ticks + 1) % m0.cfg.schooling_window
        ticks = m0.ticks + 1
        hw, present = self.here_worst, self.all_here if f.present is None else f.present.view(np.uint8)
        a = self.stacked
        assert _TICK is not None
        _TICK.tally_tanks(  # by name (_tick.TALLY_TANKS_ARRAYS, TALLY_TANKS_INTS)
            {"executed": f.executed, "move_outcome": f.move_outcome, "present": present, "neighbours": f.neighbours,
             "stuck": f.stuck, "x": f.x, "y": f.y, "actions": a["_actions"], "action_sum": a["_action_sum"],
             "conflicts": a["_conflicts"], "conflict_sum": a["_conflict_sum"], "nb": a["_nb"],
             "nb_sum": a["_nb_sum"], "last_moved": a["last_moved"], "heat": a["heat"], "outcomes": a["_outcomes"],
             "here_worst": hw},
            {"slot": slot, "nslot": nslot, "window": cfg.window, "schooling_window": cfg.schooling_window,
             "ticks": ticks, "hotspot_cell": cfg.hotspot_cell, "heat_width": a["heat"].shape[2],
             "heat_height": a["heat"].shape[1], "tanks": self.tanks})
        sampled = (ticks - 1) % cfg.sample_every == 0 and m0.sampling != SAMPLE_NONE
        own = frames() if sampled else None
        plain = live is not None and live.is_plain and bounds is not None
        tier = int(live.tier[0]) if plain and live is not None and live.fish.size else 0
        lat = f.latencies
        outs = a["_outcomes"].tolist()  # (Python ints: read a few times a tank)
        for k, (m, hw_k) in enumerate(zip(self.metrics, hw.tolist())):
            if m.ticks == 0:
                m.first_tick = f.tick
            m.ticks = ticks
            m.in_water = hw_k[0]
            lo, hi = (bounds[k], bounds[k + 1]) if bounds is not None else (0, 0)
            dec = None
            applied: list[DecisionBatch] = []
            if m.count_decisions and plain and not m._fallbacks_seen:  # (Metrics._count_decisions' first
                # case: one tier, all OK, nothing to count but their number)
                d = hi - lo
                m.by_tier[tier] += d
                dec = (d, d if tier == _FALLBACK else 0, 0)
            elif hi > lo and live is not None:
                applied = [_part(live, lo, hi, n, k)]
            m._fold(outs[k], k * n + hw_k[1], f.stuck, f.x, f.y, applied, dec, lat[lo:hi],
                    own[k] if own is not None else None)

    def settle(self) -> None:
        """Each tank's word and deed and decision history written back from the joined ones (its
        fish's rows), so that each reads as its run alone's."""
        if self.settled:
            return
        n, wd, hist = self.n, self.word_deed, self.history
        for k, (m, h) in enumerate(zip(self.metrics, self.histories)):
            sl = slice(k * n, (k + 1) * n)
            own = m.word_deed
            for name in _WD_FISH:
                setattr(own, name, getattr(wd, name)[sl].copy())
            own.table = np.ascontiguousarray(wd.table[:, sl])
            own._holds = int(np.count_nonzero(own.open & (own.table[1] == _HOLD)))
            if wd._prev is not None:
                own._prev = tuple(a[sl] for a in wd._prev)
                own._prev_native = wd._prev_native
            for name in _HISTORY_FISH:
                setattr(h, name, getattr(hist, name)[sl].copy())
        self.settled = True


def _part(live: DecisionBatch, lo: int, hi: int, n: int, k: int) -> DecisionBatch:
    """Tank ``k``'s rows of the planner's batch, its fish numbered as in its tank."""
    return DecisionBatch.made(live.tick, live.fish[lo:hi] - k * n, live.tier[lo:hi], live.status[lo:hi],
                              live.tokens[lo:hi], live.goals[lo:hi], live.params[lo:hi], live.horizons[lo:hi],
                              plain=live.is_plain)
