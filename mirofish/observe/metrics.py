"""The six health metrics of DESIGN §4, plus collective-motion measures and alerts.

Metrics read :class:`~mirofish.engine.Frame` objects only (per-tick snapshots in array
form); they never touch the world. Each metric has a *current* value (over its window) and
a *run mean* (the mean of the current values over all ticks observed).

* ``action_entropy`` — Shannon entropy (natural log) of the six executed actions over the
  last ``window`` ticks (max ln 6 ≈ 1.79).
* ``conflict_rate`` — intents refused because of another fish (lost the cell, or its
  occupant stayed) over all intents, in the window. Bumps into glass are counted apart.
* ``schooling_degree`` — share of fish whose mean count of other fish in view over the last
  ``schooling_window`` ticks exceeds 1.
* ``tokens_per_decision`` — prompt + completion tokens per decision in the window (0 for
  the instinct brain).
* ``decision_latency_p95_ms`` — request queued → decision applied, P95 over recent decisions.
* ``fallback_rate`` — share of decisions in the window made by the fallback tier (rules
  standing in for a failed model). The instinct brain chosen as *the* brain is not a fallback.

Collective motion (Couzin et al. 2002; Tunstrøm et al. 2013), from headings ``uᵢ`` of the
last successful move: polarization ``|Σuᵢ|/N``; rotation ``|Σ r̂ᵢ × uᵢ|/N`` around the
group centre; mean nearest-neighbour distance (cells); clusters = groups of ≥2 fish linked
by being in each other's view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..actions import ACTION_NAMES, MOVE_DXDY, N_ACTIONS
from ..brains.base import TIER_INDEX, TIERS
from ..config import MetricsConfig

if TYPE_CHECKING:
    from ..engine import Frame

SIX = ("action_entropy", "conflict_rate", "schooling_degree", "tokens_per_decision",
       "decision_latency_p95_ms", "fallback_rate")
COLLECTIVE = ("polarization", "rotation", "nn_distance", "clusters", "largest_cluster")
_UNIT = np.array(MOVE_DXDY, np.float64)
_FALLBACK = TIER_INDEX["fallback"]


def entropy(counts: np.ndarray) -> float:
    total = counts.sum()
    if total <= 0:
        return 0.0
    p = counts[counts > 0] / total
    return float(-(p * np.log(p)).sum())


def polarization(heading: np.ndarray) -> float:
    u = _UNIT[heading]
    return float(np.hypot(*u.sum(axis=0)) / max(1, len(heading)))


def rotation(xy: np.ndarray, heading: np.ndarray) -> float:
    if len(heading) < 2:
        return 0.0
    u = _UNIT[heading]
    r = xy - xy.mean(axis=0)
    norm = np.hypot(r[:, 0], r[:, 1])
    ok = norm > 0
    r[ok] /= norm[ok, None]
    cross = r[:, 0] * u[:, 1] - r[:, 1] * u[:, 0]
    return float(abs(cross[ok].sum()) / len(heading))


def neighbours_and_clusters(xy: np.ndarray, link: int = 2, chunk: int = 512) -> tuple[float, int, int]:
    """(mean nearest-neighbour distance, clusters of ≥2, largest cluster size)."""
    n = len(xy)
    if n < 2:
        return 0.0, 0, n
    nnd = np.empty(n)
    pairs_i, pairs_j = [], []
    for a in range(0, n, chunk):
        d = xy[a : a + chunk, None, :] - xy[None, :, :]
        dist = np.hypot(d[..., 0], d[..., 1])
        rows = np.arange(dist.shape[0])
        dist[rows, rows + a] = np.inf
        nnd[a : a + chunk] = dist.min(axis=1)
        cheb = np.abs(d).max(axis=2)
        cheb[rows, rows + a] = link + 1
        i, j = np.nonzero(cheb <= link)
        pairs_i.append(i + a)
        pairs_j.append(j)
    i, j = np.concatenate(pairs_i), np.concatenate(pairs_j)
    label = np.arange(n)
    while i.size:
        before = label.copy()
        np.minimum.at(label, i, label[j])
        label = label[label]
        if np.array_equal(before, label):
            break
    sizes = np.bincount(label, minlength=n)
    groups = sizes[sizes >= 2]
    return float(nnd.mean()), int(groups.size), int(sizes.max())


class Metrics:
    """Rolling metrics over :class:`Frame` objects; one instance per run."""

    def __init__(self, cfg: MetricsConfig, n_fish: int, width: int, height: int):
        self.cfg = cfg
        w = cfg.window
        self.ticks = 0
        self._actions = np.zeros((w, N_ACTIONS), np.int64)
        self._conflicts = np.zeros((w, 2), np.int64)  # (conflicts, intents)
        self._decisions = np.zeros((w, 3), np.float64)  # (decisions, fallbacks, tokens)
        self._nb = np.zeros((cfg.schooling_window, n_fish), np.int32)
        self._lat = np.zeros(2048)
        self._lat_n = 0
        self.by_tier = np.zeros(len(TIERS), np.int64)
        self.tokens_total = 0
        self.blocked_total = 0
        self.since_move = 0
        self.max_stuck = 0
        self.heat = np.zeros((height // cfg.hotspot_cell + 1, width // cfg.hotspot_cell + 1), np.int64)
        self._current: dict[str, float] = {k: 0.0 for k in SIX + COLLECTIVE}
        self._sums = dict.fromkeys(SIX, 0.0)
        self._csums = dict.fromkeys(COLLECTIVE, 0.0)
        self._csamples = 0
        self.alerts: list[str] = []

    def observe(self, f: "Frame") -> None:
        cfg, slot = self.cfg, self.ticks % self.cfg.window
        self.ticks += 1
        self._actions[slot] = np.bincount(f.executed, minlength=N_ACTIONS)
        self._conflicts[slot] = (f.conflicts, len(f.executed))
        self.blocked_total += f.blocked
        tiers = np.bincount(f.tiers, minlength=len(TIERS)) if f.tiers.size else np.zeros(len(TIERS), np.int64)
        self.by_tier += tiers
        tok = int(f.tokens.sum()) if f.tokens.size else 0
        self.tokens_total += tok
        self._decisions[slot] = (f.tiers.size, tiers[_FALLBACK], tok)
        for v in f.latencies:
            self._lat[self._lat_n % self._lat.size] = v
            self._lat_n += 1
        self._nb[self.ticks % cfg.schooling_window] = f.neighbours
        self.since_move = 0 if f.moved_any else self.since_move + 1
        self.max_stuck = max(self.max_stuck, int(f.stuck.max()) if f.stuck.size else 0)
        if f.stuck_events.size:
            cy, cx = f.y[f.stuck_events] // cfg.hotspot_cell, f.x[f.stuck_events] // cfg.hotspot_cell
            np.add.at(self.heat, (cy, cx), 1)

        cur = self._current
        cur["action_entropy"] = entropy(self._actions.sum(axis=0))
        c = self._conflicts.sum(axis=0)
        cur["conflict_rate"] = float(c[0] / c[1]) if c[1] else 0.0
        filled = min(self.ticks, cfg.schooling_window)
        mean_nb = self._nb.sum(axis=0) / filled
        cur["schooling_degree"] = float(np.count_nonzero(mean_nb > 1.0) / max(1, len(mean_nb)))
        d = self._decisions.sum(axis=0)
        cur["tokens_per_decision"] = float(d[2] / d[0]) if d[0] else 0.0
        cur["fallback_rate"] = float(d[1] / d[0]) if d[0] else 0.0
        n_lat = min(self._lat_n, self._lat.size)
        cur["decision_latency_p95_ms"] = float(np.percentile(self._lat[:n_lat], 95) * 1000) if n_lat else 0.0
        for k in SIX:
            self._sums[k] += cur[k]

        if (self.ticks - 1) % cfg.collective_every == 0:
            xy = np.stack([f.x, f.y], axis=1).astype(np.float64)
            cur["polarization"] = polarization(f.heading)
            cur["rotation"] = rotation(xy, f.heading)
            cur["nn_distance"], clusters, largest = neighbours_and_clusters(xy)
            cur["clusters"], cur["largest_cluster"] = float(clusters), float(largest)
            self._csamples += 1
            for k in COLLECTIVE:
                self._csums[k] += cur[k]

        alerts = []
        if self.since_move >= cfg.heartbeat_ticks:
            alerts.append(f"heartbeat: no fish moved for {self.since_move} ticks")
        if cur["fallback_rate"] > cfg.fallback_alert:
            alerts.append(f"fallback rate {cur['fallback_rate']:.0%} > {cfg.fallback_alert:.0%}")
        self.alerts = alerts

    # ------------------------------------------------------------ reading

    @property
    def heartbeat_alert(self) -> bool:
        return self.since_move >= self.cfg.heartbeat_ticks

    def current(self) -> dict[str, float]:
        return dict(self._current)

    def run_mean(self) -> dict[str, float]:
        out = {k: (v / self.ticks if self.ticks else 0.0) for k, v in self._sums.items()}
        out.update({k: (v / self._csamples if self._csamples else 0.0) for k, v in self._csums.items()})
        return out

    def action_shares(self) -> dict[str, float]:
        counts = self._actions.sum(axis=0)
        total = max(1, int(counts.sum()))
        return {name: float(c / total) for name, c in zip(ACTION_NAMES, counts)}

    def hotspots(self, top: int = 3) -> list[dict]:
        """The coarse squares where most refused/blocked moves happened (cumulative)."""
        flat = self.heat.ravel()
        order = np.argsort(-flat, kind="stable")[:top]
        side = self.cfg.hotspot_cell
        w = self.heat.shape[1]
        return [{"x": int(k % w) * side, "y": int(k // w) * side, "size": side, "stuck_events": int(flat[k])}
                for k in order if flat[k] > 0]

    def summary(self) -> dict:
        """Current and run-mean values of every metric, plus alerts — JSON-ready."""
        cur, mean = self.current(), self.run_mean()
        out = {k: {"current": round(cur[k], 4), "mean": round(mean[k], 4)} for k in SIX + COLLECTIVE}
        out["heartbeat"] = {"ticks_since_move": self.since_move, "alert": self.heartbeat_alert}
        out["stuck_hotspots"] = self.hotspots()
        out["alerts"] = list(self.alerts)
        return out

    def decisions_by_tier(self) -> dict[str, int]:
        return {name: int(c) for name, c in zip(TIERS, self.by_tier) if c}
