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
* ``decision_latency_p95_ms`` — request queued → decision applied, P95 over the last 2,048
  decisions (its run mean is sampled with the collective measures).
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
CHEAP = tuple(k for k in SIX if k != "decision_latency_p95_ms")  # updated every tick
SAMPLED = ("decision_latency_p95_ms",) + COLLECTIVE  # every ``collective_every`` ticks
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
    x, y = xy[:, 0], xy[:, 1]
    for a in range(0, n, chunk):
        dx = np.abs(x[a : a + chunk, None] - x[None, :])
        dy = np.abs(y[a : a + chunk, None] - y[None, :])
        d2 = dx * dx + dy * dy
        rows = np.arange(d2.shape[0])
        d2[rows, rows + a] = np.inf
        nnd[a : a + chunk] = np.sqrt(d2.min(axis=1))
        cheb = np.maximum(dx, dy)
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
        # Rolling windows: a ring of per-tick rows plus their running sum.
        self._actions = np.zeros((w, N_ACTIONS), np.int64)
        self._action_sum = np.zeros(N_ACTIONS, np.int64)
        self._conflicts = np.zeros((w, 2), np.int64)  # (conflicts, intents)
        self._conflict_sum = np.zeros(2, np.int64)
        self._decisions = np.zeros((w, 3), np.int64)  # (decisions, fallbacks, tokens)
        self._decision_sum = np.zeros(3, np.int64)
        self._nb = np.zeros((cfg.schooling_window, n_fish), np.int64)
        self._nb_sum = np.zeros(n_fish, np.int64)
        self._no_tiers = np.zeros(len(TIERS), np.int64)
        self._lat = np.zeros(2048)
        self._lat_n = 0
        self.by_tier = np.zeros(len(TIERS), np.int64)
        self.tokens_total = 0
        self.blocked_total = 0
        self.since_move = 0
        self.max_stuck = 0
        self.heat = np.zeros((height // cfg.hotspot_cell + 1, width // cfg.hotspot_cell + 1), np.int64)
        self._current: dict[str, float] = {k: 0.0 for k in SIX + COLLECTIVE}
        self._sums = dict.fromkeys(CHEAP, 0.0)
        self._ssums = dict.fromkeys(SAMPLED, 0.0)
        self._samples = 0
        self.alerts: list[str] = []

    def observe(self, f: "Frame") -> None:
        cfg, slot = self.cfg, self.ticks % self.cfg.window
        self.ticks += 1
        counts = np.bincount(f.executed, minlength=N_ACTIONS)
        self._action_sum += counts - self._actions[slot]
        self._actions[slot] = counts
        conf = (f.conflicts, len(f.executed))
        self._conflict_sum += np.subtract(conf, self._conflicts[slot])
        self._conflicts[slot] = conf
        stuck_events = f.stuck_events
        self.blocked_total += f.blocked
        tiers = f.tiers
        by_tier = np.bincount(tiers, minlength=len(TIERS)) if tiers.size else self._no_tiers
        self.by_tier += by_tier
        tok = int(f.tokens.sum()) if f.applied else 0
        self.tokens_total += tok
        dec = (tiers.size, by_tier[_FALLBACK], tok)
        self._decision_sum += np.subtract(dec, self._decisions[slot])
        self._decisions[slot] = dec
        if f.latencies:
            lat = np.asarray(f.latencies)[-self._lat.size:]
            pos = (self._lat_n + np.arange(lat.size)) % self._lat.size
            self._lat[pos] = lat
            self._lat_n += lat.size
        nslot = self.ticks % cfg.schooling_window
        self._nb_sum += f.neighbours - self._nb[nslot]
        self._nb[nslot] = f.neighbours
        self.since_move = 0 if f.moved_any else self.since_move + 1
        if f.stuck.size:
            self.max_stuck = max(self.max_stuck, int(f.stuck.max()))
        if stuck_events.size:
            cell = (f.y[stuck_events] // cfg.hotspot_cell) * self.heat.shape[1] + f.x[stuck_events] // cfg.hotspot_cell
            self.heat += np.bincount(cell, minlength=self.heat.size).reshape(self.heat.shape)

        cur = self._current
        cur["action_entropy"] = entropy(self._action_sum)
        c = self._conflict_sum
        cur["conflict_rate"] = float(c[0] / c[1]) if c[1] else 0.0
        filled = min(self.ticks, cfg.schooling_window)
        cur["schooling_degree"] = float(np.count_nonzero(self._nb_sum > filled) / max(1, len(self._nb_sum)))
        d = self._decision_sum
        cur["tokens_per_decision"] = float(d[2] / d[0]) if d[0] else 0.0
        cur["fallback_rate"] = float(d[1] / d[0]) if d[0] else 0.0
        for k in CHEAP:
            self._sums[k] += cur[k]

        if (self.ticks - 1) % cfg.collective_every == 0:
            cur["decision_latency_p95_ms"] = self._latency_p95()
            xy = np.stack([f.x, f.y], axis=1).astype(np.float64)
            cur["polarization"] = polarization(f.heading)
            cur["rotation"] = rotation(xy, f.heading)
            cur["nn_distance"], clusters, largest = neighbours_and_clusters(xy)
            cur["clusters"], cur["largest_cluster"] = float(clusters), float(largest)
            self._samples += 1
            for k in SAMPLED:
                self._ssums[k] += cur[k]

        if self.since_move >= cfg.heartbeat_ticks or cur["fallback_rate"] > cfg.fallback_alert or self.alerts:
            alerts = []
            if self.since_move >= cfg.heartbeat_ticks:
                alerts.append(f"heartbeat: no fish moved for {self.since_move} ticks")
            if cur["fallback_rate"] > cfg.fallback_alert:
                alerts.append(f"fallback rate {cur['fallback_rate']:.0%} > {cfg.fallback_alert:.0%}")
            self.alerts = alerts

    def _latency_p95(self) -> float:
        n = min(self._lat_n, self._lat.size)
        if not n:
            return 0.0
        k = int(np.ceil(0.95 * n)) - 1  # nearest-rank P95
        return float(np.partition(self._lat[:n], k)[k] * 1000)

    # ------------------------------------------------------------ reading

    @property
    def heartbeat_alert(self) -> bool:
        return self.since_move >= self.cfg.heartbeat_ticks

    def current(self) -> dict[str, float]:
        cur = dict(self._current)
        cur["decision_latency_p95_ms"] = self._latency_p95()
        return cur

    def run_mean(self) -> dict[str, float]:
        out = {k: (v / self.ticks if self.ticks else 0.0) for k, v in self._sums.items()}
        out.update({k: (v / self._samples if self._samples else 0.0) for k, v in self._ssums.items()})
        return out

    def action_shares(self) -> dict[str, float]:
        counts = self._action_sum
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
