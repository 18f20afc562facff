"""The six health metrics of docs/design.md §4, plus collective-motion measures and alerts.

Metrics read :class:`~mirofish.frame.Frame` objects only (per-tick snapshots in array
form); they never touch the world. Each metric has a *current* value (over its window) and
a *run mean* (the mean of the current values over all ticks observed).

* ``action_entropy`` — Shannon entropy (natural log) of the six executed actions over the
  last ``window`` ticks (max ln 6 ≈ 1.79).
* ``conflict_rate`` — intents refused because of another fish (lost the cell, or its
  occupant stayed) over all intents, in the window. Bumps into glass are counted apart.
* ``schooling_degree`` — share of fish whose mean count of other fish in view over the last
  ``schooling_window`` ticks exceeds 1 *and* that moved in the last 10 ticks (a resting
  heap is company, not schooling).
* ``tokens_per_decision`` — prompt + completion tokens per decision in the window (0 for
  the instinct brain).
* ``decision_latency_p95_ms`` — request queued → decision applied, P95 over the last 2,048
  decisions (its run mean is sampled with the collective measures).
* ``fallback_rate`` — share of decisions in the window made by the fallback tier (rules
  standing in for a failed model). The instinct brain chosen as *the* brain is not a fallback,
  nor is the instinct plan a fish swims while its first request waits for a model.

Windowed metrics and alerts are exact whenever they are read (``current()``, ``alerts()``);
run means and the collective measures are sampled every ``sample_every`` ticks, which
keeps the per-tick cost to a few array updates.

Collective motion (Couzin et al. 2002; Tunstrøm et al. 2013), from headings ``uᵢ`` of the
last successful move: polarization ``|Σuᵢ|/N``; rotation ``|Σ r̂ᵢ × uᵢ|/N`` around the
group centre; mean nearest-neighbour distance (cells); clusters = groups of ≥2 fish linked
by being in each other's view.

Schools (a cluster counts as a school only if it moves): clusters of ≥ 3 fish of which at
least half moved in the last 10 ticks. For the largest school: ``school_size``,
``school_polarization`` and ``school_milling`` (Couzin's order parameters inside it),
``school_moving`` (share of its fish that moved in the last 10 ticks) and ``school_travel``
(cells its members' centre moved since the previous sample, ``sample_every`` ticks ago).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .. import arbiter, kernel
from ..actions import ACTION_NAMES, MOVE_DXDY, N_ACTIONS
from ..brains.base import TIER_INDEX, TIERS, DecisionBatch, status_code
from ..config import MetricsConfig
from .territory import KEYS as TERRITORY
from .territory import Territory
from .worddeed import WordDeed

if TYPE_CHECKING:
    from ..frame import Frame

SIX = ("action_entropy", "conflict_rate", "schooling_degree", "tokens_per_decision",
       "decision_latency_p95_ms", "fallback_rate")
COLLECTIVE = ("polarization", "rotation", "nn_distance", "clusters", "largest_cluster", "school_size",
              "school_polarization", "school_milling", "school_moving", "school_travel")
MOVED_WITHIN = 10  # "moved lately" = a successful move in the last this many ticks
_UNIT = np.array(MOVE_DXDY, np.float64)
_FALLBACK = TIER_INDEX["fallback"]
_WAITING = status_code("waiting_for_the_model")


def _as(a: np.ndarray, dtype: Any) -> np.ndarray:
    """``a`` as a contiguous array of ``dtype`` for the compiled code (no copy when it is one)."""
    return np.ascontiguousarray(a, dtype)


def entropy(counts: np.ndarray) -> float:
    total = counts.sum()
    if total <= 0:
        return 0.0
    p = counts[counts > 0] / total
    return float(-(p * np.log(p)).sum())


def polarization(heading: np.ndarray) -> float:
    """|Σuᵢ|/N of the headings (unit steps): the sums of the unit vectors are whole numbers, so
    counting the headings gives them exactly."""
    c = np.bincount(heading, minlength=4) if len(heading) else np.zeros(4, np.int64)
    return float(np.hypot(float(c[3] - c[2]), float(c[1] - c[0])) / max(1, len(heading)))


def rotation(xy: np.ndarray, heading: np.ndarray) -> float:
    if len(heading) < 2:
        return 0.0
    u = _UNIT[heading]
    r = xy - xy.mean(axis=0)
    norm = np.hypot(r[:, 0], r[:, 1])
    ok = norm > 0
    np.divide(r, norm[:, None], out=r, where=ok[:, None])
    cross = r[:, 0] * u[:, 1] - r[:, 1] * u[:, 0]
    return float(abs(cross[ok].sum()) / len(heading))


def _components(n: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Connected-component labels of ``n`` nodes joined by the pairs (i, j): each node's label
    is the smallest node of its component (the compiled tick's union-find when built)."""
    k = kernel.compiled_tick()
    if k is not None:
        out = np.empty(n, np.int64)
        k.components(n, np.ascontiguousarray(i, np.int64), np.ascontiguousarray(j, np.int64), out)
        return out
    label = np.arange(n)
    while i.size:
        before = label.copy()
        np.minimum.at(label, i, label[j])
        np.minimum.at(label, j, label[i])
        label = label[label]
        if np.array_equal(before, label):
            break
    return label


def _offsets(radius: int) -> np.ndarray:
    """(dx, dy) within ``radius`` (Euclidean), nearest first, origin excluded."""
    d = np.arange(-radius, radius + 1)
    gx, gy = np.meshgrid(d, d)
    dx, dy = gx.ravel(), gy.ravel()
    keep = (dx * dx + dy * dy <= radius * radius) & ((dx != 0) | (dy != 0))
    dx, dy = dx[keep], dy[keep]
    order = np.argsort(dx * dx + dy * dy, kind="stable")
    return np.stack([dx[order], dy[order]], axis=1)


_NEAR = _offsets(6)


def neighbours_and_clusters(xy: np.ndarray, link: int = 2, chunk: int = 512) -> tuple[float, int, int]:
    """(mean nearest-neighbour distance, clusters of ≥2, largest cluster size)."""
    nnd, labels = nn_and_labels(xy, link, chunk)
    if labels is None:
        return 0.0, 0, len(xy)
    sizes = np.bincount(labels, minlength=len(xy))
    return nnd, int(np.count_nonzero(sizes >= 2)), int(sizes.max())


def nn_and_labels(xy: np.ndarray, link: int = 2, chunk: int = 512) -> tuple[float, np.ndarray | None]:
    """(mean nearest-neighbour distance, cluster label per fish).

    Clusters link fish within ``link`` cells (Chebyshev: in each other's view). Up to a few
    hundred fish this compares all pairs; beyond that it looks fish up in a grid around
    each fish and compares all pairs only for the fish with nobody within 6 cells.
    """
    n = len(xy)
    if n < 2:
        return 0.0, None
    k = kernel.compiled_tick()
    if k is not None:  # the same figures from a grid of the fish, in C (_tick.neighbours)
        pts = np.ascontiguousarray(xy, np.int64)
        nnd, labels = np.empty(n), np.empty(n, np.int64)
        k.neighbours(np.ascontiguousarray(pts[:, 0]), np.ascontiguousarray(pts[:, 1]), link, nnd, labels)
        return float(nnd.mean()), labels
    return numpy_nn_and_labels(xy, link, chunk)


def numpy_nn_and_labels(xy: np.ndarray, link: int = 2, chunk: int = 512) -> tuple[float, np.ndarray | None]:
    """:func:`nn_and_labels` in numpy (the reference the compiled one is tested against)."""
    n = len(xy)
    if n < 2:
        return 0.0, None
    if n > 300:
        return _grid_neighbours_and_clusters(xy.astype(np.int64), link)
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
    return float(nnd.mean()), _components(n, np.concatenate(pairs_i), np.concatenate(pairs_j))


def _grid_neighbours_and_clusters(xy: np.ndarray, link: int) -> tuple[float, np.ndarray]:
    n = len(xy)
    pad = int(np.abs(_NEAR).max())
    x, y = xy[:, 0] + pad, xy[:, 1] + pad
    grid = np.full((int(y.max()) + pad + 1, int(x.max()) + pad + 1), -1, np.int64)
    grid[y, x] = np.arange(n)
    hits = grid[y[:, None] + _NEAR[None, :, 1], x[:, None] + _NEAR[None, :, 0]]  # (n, K) nearest first
    found = hits >= 0
    has = found.any(axis=1)
    first = found.argmax(axis=1)
    nnd = np.where(has, np.hypot(_NEAR[first, 0], _NEAR[first, 1]), np.inf)
    lonely = np.flatnonzero(~has)
    if lonely.size and n > 1:
        nnd[lonely] = _far_nearest(xy.astype(np.int64), lonely)
    near = np.maximum(np.abs(_NEAR[:, 0]), np.abs(_NEAR[:, 1])) <= link
    rows, cols = np.nonzero(found[:, near])
    return float(nnd.mean()), _components(n, rows, hits[:, near][rows, cols])


_BUCKET = 16  # cells: a fish's 3x3 block of buckets holds everyone within 16 cells of it


def _far_nearest(pts: np.ndarray, lonely: np.ndarray) -> np.ndarray:
    """The nearest-neighbour distance of fish ``lonely`` (nobody within 6 cells), exactly: first
    among the fish in their 3x3 block of 16-cell buckets (anyone outside is farther than 16
    cells away, so a distance of at most 16 found there is the nearest), then, for the few
    still without one, against everyone, a block of fish at a time."""
    n = len(pts)
    b = pts // _BUCKET
    width = int(b[:, 0].max()) + 3
    key = (b[:, 1] + 1) * width + (b[:, 0] + 1)  # (+1: the blocks of the edge buckets stay inside)
    order = np.argsort(key, kind="stable")
    starts = np.searchsorted(key[order], np.arange(int(key.max()) + 2 * width + 3))
    cap = int(np.bincount(key).max())
    best = np.full(lonely.size, np.iinfo(np.int64).max)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            k = key[lonely] + dy * width + dx
            lo, hi = starts[k], starts[k + 1]
            slots = lo[:, None] + np.arange(cap)[None, :]
            valid = slots < hi[:, None]
            cand = order[np.minimum(slots, n - 1)]
            d2 = ((pts[cand] - pts[lonely][:, None, :]) ** 2).sum(axis=2)
            d2[~valid | (cand == lonely[:, None])] = np.iinfo(np.int64).max
            best = np.minimum(best, d2.min(axis=1))
    out = np.sqrt(best.astype(np.float64))
    far = np.flatnonzero(best > _BUCKET * _BUCKET)  # nobody close enough in the block: everyone
    step = max(1, 4_000_000 // n)
    for s in range(0, far.size, step):
        part = lonely[far[s:s + step]]
        d2 = ((pts[None, :, 0] - pts[part, None, 0]) ** 2 + (pts[None, :, 1] - pts[part, None, 1]) ** 2)
        d2[np.arange(part.size), part] = np.iinfo(np.int64).max  # not itself
        out[far[s:s + step]] = np.sqrt(d2.min(axis=1).astype(np.float64))
    return out


def _moving_clusters(labels: np.ndarray, moving: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(fish per label, the labels of the clusters of at least ``min_size`` fish of which at
    least half moved lately, ascending): the schools' candidates."""
    sizes = np.bincount(labels, minlength=len(labels))
    moved = np.bincount(labels, weights=moving.astype(np.float64), minlength=len(labels))
    return sizes, np.flatnonzero((sizes >= min_size) & (moved * 2 >= sizes))


def schools(labels: np.ndarray | None, moving: np.ndarray, min_size: int = 3) -> list[np.ndarray]:
    """Moving schools, largest first: clusters of at least ``min_size`` fish of which at least
    half moved lately (``moving``, per fish). A resting heap is a cluster, not a school."""
    if labels is None:
        return []
    sizes, ok = _moving_clusters(labels, moving, min_size)
    ok = ok[np.argsort(-sizes[ok], kind="stable")]
    if not ok.size:
        return []
    by_label = np.argsort(labels, kind="stable")  # each cluster's fish together, in index order
    starts = np.cumsum(sizes) - sizes
    return [by_label[starts[k]:starts[k] + sizes[k]] for k in ok]


def largest_school(labels: np.ndarray | None, moving: np.ndarray, min_size: int = 3) -> np.ndarray:
    """The fish of the largest moving school (``schools(...)[0]``; the lowest label of equal
    sizes), or none."""
    if labels is None:
        return np.zeros(0, np.int64)
    sizes, ok = _moving_clusters(labels, moving, min_size)
    if not ok.size:
        return np.zeros(0, np.int64)
    return np.flatnonzero(labels == ok[np.argmax(sizes[ok])])


def school_figures(members: np.ndarray, xy: np.ndarray, heading: np.ndarray, moving: np.ndarray) -> dict[str, Any]:
    """Couzin's order parameters of one school: size, polarization, milling, share that moved lately."""
    if members.size == 0:
        return {"school_size": 0.0, "school_polarization": 0.0, "school_milling": 0.0, "school_moving": 0.0}
    return {"school_size": float(members.size), "school_polarization": polarization(heading[members]),
            "school_milling": rotation(xy[members], heading[members]),
            "school_moving": float(moving[members].mean())}


class Metrics:
    """Rolling metrics over :class:`Frame` objects; one instance per run."""

    def __init__(self, cfg: MetricsConfig, n_fish: int, width: int, height: int, territory: bool = False):
        self.cfg = cfg
        # with remembered places: home ranges, site fidelity, overlap (observe/territory.py)
        self.territory = Territory(n_fish, width, height, cfg.sample_every) if territory else None
        self.keys = SIX + COLLECTIVE + (TERRITORY if territory else ())
        w = cfg.window
        self.ticks = 0
        # Rolling windows: a ring of per-tick rows plus their running sum.
        self._actions = np.zeros((w, N_ACTIONS), np.int64)
        self._action_sum = np.zeros(N_ACTIONS, np.int64)
        self._conflicts = np.zeros((w, 2), np.int64)  # (conflicts, intents)
        self._conflict_sum = np.zeros(2, np.int64)
        self._decisions = [(0, 0, 0)] * w  # per tick of the window: (decisions, fallbacks, tokens)
        self._decision_sum = [0, 0, 0]
        self._nb = np.zeros((cfg.schooling_window, n_fish), np.int64)
        self._nb_sum = np.zeros(n_fish, np.int64)
        self._lat = np.zeros(2048)
        self._lat_n = 0
        self.by_tier = np.zeros(len(TIERS), np.int64)
        self.since_move = 0
        self.max_stuck = 0
        self.stuck_now = (0, 0, 0)  # (longest current stuck streak, x, y)
        self.heat = np.zeros((height // cfg.hotspot_cell + 1, width // cfg.hotspot_cell + 1), np.int64)
        self._current: dict[str, float] = dict.fromkeys(self.keys, 0.0)
        self._sums = dict.fromkeys(self.keys, 0.0)
        self._samples = 0
        self.last_moved = np.full(n_fish, -(2**30), np.int64)  # tick of each fish's last successful move
        self._prev_xy: np.ndarray | None = None
        self.school_members = np.zeros(0, np.int64)  # the largest moving school at the last sample
        self.word_deed = WordDeed(n_fish)  # does each fish do what its thoughts say (observe/worddeed.py)
        self.compiled = kernel.compiled_tick() is not None  # the per-tick bookkeeping in C (_tick.tally)
        self._outcomes = np.zeros(5, np.int64)  # fish per move outcome at the last tick (filled by tally)
        self._all_here = np.ones(n_fish, np.uint8)

    def moving(self) -> np.ndarray:
        """Per fish: moved in the last ``MOVED_WITHIN`` ticks."""
        return self.last_moved >= self.ticks - MOVED_WITHIN

    first_tick = 0
    in_water = 0  # fish in the water at the last tick observed

    def observe(self, f: Frame) -> None:
        """Fold one tick in: rolling windows every tick, values and run means every ``sample_every``."""
        cfg, slot = self.cfg, self.ticks % self.cfg.window
        if self.ticks == 0:
            self.first_tick = f.tick  # what these metrics have seen starts here (a replay: its keyframe)
        self.ticks += 1
        self.word_deed.observe(f)
        nslot = self.ticks % cfg.schooling_window
        k = kernel.built() if self.compiled else None
        if k is not None:
            oc = self._outcomes
            self.in_water, worst = k.tally(  # by name (_tick.TALLY_ARRAYS, TALLY_INTS)
                {"executed": _as(f.executed, np.int8), "move_outcome": _as(f.move_outcome, np.int8),
                 "present": self._all_here if f.present is None else _as(f.present, np.bool_).view(np.uint8),
                 "neighbours": _as(f.neighbours, np.int16), "stuck": _as(f.stuck, np.int32),
                 "x": _as(f.x, np.int64), "y": _as(f.y, np.int64), "actions": self._actions,
                 "action_sum": self._action_sum, "conflicts": self._conflicts, "conflict_sum": self._conflict_sum,
                 "nb": self._nb, "nb_sum": self._nb_sum, "last_moved": self.last_moved, "heat": self.heat,
                 "outcomes": oc},
                {"slot": slot, "nslot": nslot, "window": cfg.window, "schooling_window": cfg.schooling_window,
                 "ticks": self.ticks, "hotspot_cell": cfg.hotspot_cell, "heat_width": self.heat.shape[1],
                 "heat_height": self.heat.shape[0]})
        else:
            oc, worst = self._tally(f, slot, nslot)
        self.since_move = 0 if oc[arbiter.MOVED] else self.since_move + 1
        if oc[arbiter.CROWDED] + oc[arbiter.OCCUPIED] + oc[arbiter.BLOCKED]:
            self.stuck_now = (int(f.stuck[worst]), int(f.x[worst]), int(f.y[worst]))
            self.max_stuck = max(self.max_stuck, self.stuck_now[0])
        elif self.stuck_now[0]:  # streaks end on a successful move
            self.stuck_now = (int(f.stuck[worst]), *self.stuck_now[1:])
        dec = self._count_decisions(f.applied) if f.applied else (0, 0, 0)
        old, total = self._decisions[slot], self._decision_sum
        for j in range(3):
            total[j] += dec[j] - old[j]
        self._decisions[slot] = dec
        if f.latencies:
            self._keep_latencies(f.latencies)
        if (self.ticks - 1) % cfg.sample_every == 0:
            self._sample(f)

    def _count_decisions(self, applied: list[DecisionBatch]) -> tuple[int, int, int]:
        """Count a tick's decisions by tier; (decisions, fallbacks, tokens) for the window."""
        n = fallbacks = tok = 0
        for b in applied:
            by_tier = np.bincount(b.tier, minlength=len(TIERS))
            self.by_tier += by_tier
            # an instinct plan swum while a first request waits for the model is no answer:
            # neither a decision nor a fallback for the rate
            waiting = int(np.count_nonzero(b.status == _WAITING))
            n += len(b.tier) - waiting
            fallbacks += int(by_tier[_FALLBACK]) - waiting
            tok += int(b.tokens.sum()) if b.tokens is not None else 0
        return n, fallbacks, tok

    def _keep_latencies(self, latencies: list[float]) -> None:
        """Put a tick's decision latencies into the ring the P95 is read from."""
        size = self._lat.size
        lat = np.asarray(latencies[-size:])
        start = self._lat_n % size
        if start + lat.size <= size:
            self._lat[start:start + lat.size] = lat
        else:
            self._lat[(start + np.arange(lat.size)) % size] = lat
        self._lat_n += lat.size

    def _tally(self, f: Frame, slot: int, nslot: int) -> tuple[np.ndarray, int]:
        """The per-tick bookkeeping in numpy (the reference for _tick.tally): the rolling
        windows of actions, conflicts and fish in view, each fish's last move, the squares of
        refused or bumped moves. Returns (fish per move outcome, the longest-stuck fish)."""
        here = f.present  # fish out of the water count in nothing
        executed = f.executed if here is None else f.executed[here]
        self.in_water = len(executed)
        counts = np.bincount(executed, minlength=N_ACTIONS)
        self._action_sum += counts - self._actions[slot]
        self._actions[slot] = counts
        oc = f.outcome_counts
        conflicts = f.conflicts
        self._conflict_sum[0] += conflicts - self._conflicts[slot, 0]
        self._conflict_sum[1] += len(executed) - self._conflicts[slot, 1]
        self._conflicts[slot] = (conflicts, len(executed))
        self.last_moved[f.move_outcome == arbiter.MOVED] = self.ticks
        self._nb_sum += f.neighbours - self._nb[nslot]
        self._nb[nslot] = f.neighbours
        if conflicts or oc[arbiter.BLOCKED]:
            ev, side = f.stuck_events, self.cfg.hotspot_cell
            cell = (f.y[ev] // side) * self.heat.shape[1] + f.x[ev] // side
            self.heat += np.bincount(cell, minlength=self.heat.size).reshape(self.heat.shape)
        return oc, int(np.argmax(f.stuck))

    def schooling_now(self) -> float:
        """The schooling degree over the current window (cheap; called every tick by recorders)."""
        filled = min(self.ticks, self.cfg.schooling_window)
        return float(np.count_nonzero((self._nb_sum > filled) & self.moving()) / max(1, self.in_water))

    def _window_values(self) -> dict[str, float]:
        cur = {"action_entropy": entropy(self._action_sum)}
        c = self._conflict_sum
        cur["conflict_rate"] = float(c[0] / c[1]) if c[1] else 0.0
        cur["schooling_degree"] = self.schooling_now()
        d = self._decision_sum
        cur["tokens_per_decision"] = float(d[2] / d[0]) if d[0] else 0.0
        cur["fallback_rate"] = float(d[1] / d[0]) if d[0] else 0.0
        cur["decision_latency_p95_ms"] = self._latency_p95()
        return cur

    def _sample(self, f: Frame) -> None:
        cur = self._current
        cur.update(self._window_values())
        ids = f.in_water  # the collective figures are of the fish in the water
        full_xy = np.stack([f.x, f.y], axis=1).astype(np.float64)
        xy, heading = full_xy[ids], f.heading[ids]
        cur["polarization"] = polarization(heading)
        cur["rotation"] = rotation(xy, heading)
        cur["nn_distance"], labels = nn_and_labels(xy)
        sizes = np.bincount(labels, minlength=len(xy)) if labels is not None else np.ones(len(xy), np.int64)
        cur["clusters"], cur["largest_cluster"] = float(np.count_nonzero(sizes >= 2)), float(sizes.max(initial=0))
        moving = self.moving()[ids]
        members = largest_school(labels, moving)
        cur.update(school_figures(members, xy, heading, moving))
        self.school_members = ids[members]
        xy = full_xy
        prev, m = self._prev_xy, self.school_members
        moved = xy[m].mean(axis=0) - prev[m].mean(axis=0) if m.size and prev is not None else np.zeros(2)
        cur["school_travel"] = float(np.hypot(*moved))
        self._prev_xy = xy
        if self.territory is not None:
            cur.update(self.territory.sample(f))
        self._samples += 1
        for k in self.keys:
            self._sums[k] += cur[k]

    def alerts(self) -> list[str]:
        """Alerts in force now: heartbeat (no fish moved for ``heartbeat_ticks``), fallback rate, jams."""
        out = []
        if self.since_move >= self.cfg.heartbeat_ticks:
            out.append(f"heartbeat: no fish moved for {self.since_move} ticks")
        d = self._decision_sum
        fallback = d[1] / d[0] if d[0] else 0.0
        if fallback > self.cfg.fallback_alert:
            out.append(f"fallback rate {fallback:.0%} > {self.cfg.fallback_alert:.0%}")
        streak, x, y = self.stuck_now
        if streak > self.cfg.jam_ticks:
            out.append(f"jam: a fish refused {streak} times in a row near ({x}, {y})")
        return out

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
        """Every metric now: the windowed ones exact, the collective ones as of the last sample."""
        cur = dict(self._current)
        cur.update(self._window_values())
        return cur

    def run_mean(self) -> dict[str, float]:
        """Mean of each metric over the samples taken every ``sample_every`` ticks."""
        return {k: (v / self._samples if self._samples else 0.0) for k, v in self._sums.items()}

    def action_shares(self) -> dict[str, float]:
        counts = self._action_sum
        total = max(1, int(counts.sum()))
        return {name: float(c / total) for name, c in zip(ACTION_NAMES, counts)}

    def hotspots(self, top: int = 3) -> list[dict[str, Any]]:
        """The coarse squares where most refused/blocked moves happened (cumulative)."""
        flat = self.heat.ravel()
        order = np.argsort(-flat, kind="stable")[:top]
        side = self.cfg.hotspot_cell
        w = self.heat.shape[1]
        return [{"x": int(k % w) * side, "y": int(k // w) * side, "size": side, "stuck_events": int(flat[k])}
                for k in order if flat[k] > 0]

    def summary(self) -> dict[str, Any]:
        """Current and run-mean values of every metric, plus alerts — JSON-ready."""
        cur, mean = self.current(), self.run_mean()
        out: dict[str, Any] = {k: {"current": round(cur[k], 4), "mean": round(mean[k], 4)} for k in self.keys}
        out["heartbeat"] = {"ticks_since_move": self.since_move, "alert": self.heartbeat_alert}
        out["stuck_hotspots"] = self.hotspots()
        out["alerts"] = self.alerts()
        return out

    def decisions_by_tier(self) -> dict[str, int]:
        return {name: int(c) for name, c in zip(TIERS, self.by_tier) if c}
