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

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from .. import arbiter, kernel
from ..actions import MOVE_DXDY
from ..brains.base import TIER_INDEX, TIERS, DecisionBatch, late_replaces, status_code
from ..config import Config, ConfigError, MetricsConfig
from ..fish.plans import DEFAULT as DEFAULT_PLANS
from ..fish.plans import PlanTable
from ..grid import Grid, grid_of
from .territory import Territory
from .worddeed import WordDeed

if TYPE_CHECKING:
    from ..frame import Frame

MOVED_WITHIN = 10  # "moved lately" = a successful move in the last this many ticks
_UNIT = np.array(MOVE_DXDY, np.float64)
_FALLBACK = TIER_INDEX["fallback"]
_WAITING = status_code("waiting_for_the_model")


def _as(a: np.ndarray, dtype: Any) -> np.ndarray:
    """``a`` as a contiguous array of ``dtype`` for the compiled code (no copy when it is one)."""
    return np.ascontiguousarray(a, dtype)


# what a metrics sample does (Metrics.sampling): every metric; only the positions the next sample's
# travel reads; nothing
SAMPLE_ALL, SAMPLE_POSITIONS, SAMPLE_NONE = "all", "positions", "none"

_TICK = kernel.built()  # the compiled module, whatever MIROFISH_TICK says (Metrics.compiled decides)


def entropy(counts: np.ndarray) -> float:
    """Shannon entropy (ln) of the shares of ``counts`` (int). numpy's own log and pairwise sum,
    with a few counts as Python ints around them: the same number as
    ``-(p * np.log(p)).sum()`` over ``p = counts[counts > 0] / counts.sum()``, in fewer calls (every
    metrics sample reads it)."""
    c = counts.tolist()
    total = sum(c)
    if total <= 0:
        return 0.0
    p = np.array([x for x in c if x > 0], np.float64) / total
    return float(-np.add.reduce(p * np.log(p)))


def polarization(heading: np.ndarray, units: np.ndarray | None = None) -> float:
    """|Σuᵢ|/N of the headings (unit steps): on the square grid the sums of the unit vectors are
    whole numbers, so counting the headings gives them exactly; ``units``: another grid's unit
    vectors by heading (a hexagonal tank's: mirofish/grid.py)."""
    if units is not None:
        if not len(heading):
            return 0.0
        u = units[np.asarray(heading, np.intp)]
        return float(np.hypot(u[:, 0].sum(), u[:, 1].sum()) / len(heading))
    c = np.bincount(heading, minlength=4) if len(heading) else np.zeros(4, np.int64)
    return float(np.hypot(float(c[3] - c[2]), float(c[1] - c[0])) / max(1, len(heading)))


def rotation(xy: np.ndarray, heading: np.ndarray, units: np.ndarray | None = None) -> float:
    if len(heading) < 2:
        return 0.0
    u = (_UNIT if units is None else units)[heading]
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


def _hex_offsets(steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Axial (dq, dr) within ``steps`` hex steps, nearest on screen first, origin excluded; their
    screen distances (cell widths) and hex steps."""
    d = np.arange(-steps, steps + 1)
    dq, dr = (a.ravel() for a in np.meshgrid(d, d))
    hexsteps = np.maximum(np.maximum(np.abs(dq), np.abs(dr)), np.abs(dq + dr))
    keep = (hexsteps <= steps) & (hexsteps > 0)
    dq, dr, hexsteps = dq[keep], dr[keep], hexsteps[keep]
    dist = np.hypot(dq + dr / 2, dr * (3 ** 0.5 / 2))
    order = np.lexsort((dq, dr, dist))
    return np.stack([dq[order], dr[order]], axis=1), dist[order], hexsteps[order]


_HEX_NEAR, _HEX_NEAR_D, _HEX_NEAR_STEPS = _hex_offsets(6)
_HEX_SURE = 6 * 3 ** 0.5 / 2  # any fish beyond 6 steps is at least this far on screen


def hex_nn_and_labels(x: np.ndarray, y: np.ndarray, link: int = 2) -> tuple[float, np.ndarray | None]:
    """:func:`nn_and_labels` on a hexagonal tank (mirofish/grid.py), from the fish's tank
    coordinates: the mean distance to the nearest fish between the cells' centres on screen (cell
    widths), and clusters of fish within ``link`` hex steps of each other (in each other's view,
    as the square tank's clusters are). A fish's neighbours are looked up around it in an axial
    grid; one with nobody within 6 steps is compared with every fish."""
    n = len(x)
    if n < 2:
        return 0.0, None
    x, y = np.asarray(x, np.int64), np.asarray(y, np.int64)
    q, r = x - (y >> 1), y
    pad = 7
    q0, r0 = q - q.min() + pad, r - r.min() + pad
    grid = np.full((int(r0.max()) + pad + 1, int(q0.max()) + pad + 1), -1, np.int64)
    grid[r0, q0] = np.arange(n)
    hits = grid[r0[:, None] + _HEX_NEAR[None, :, 1], q0[:, None] + _HEX_NEAR[None, :, 0]]  # nearest first
    found = hits >= 0
    first = found.argmax(axis=1)
    nnd = np.where(found.any(axis=1), _HEX_NEAR_D[first], np.inf)
    unsure = np.flatnonzero(nnd > _HEX_SURE)  # nobody that near: against every fish
    if unsure.size:
        sx, sy = x + 0.5 * (y & 1), y * (3 ** 0.5 / 2)
        step = max(1, 4_000_000 // n)
        for s in range(0, unsure.size, step):
            part = unsure[s:s + step]
            d2 = (sx[None, :] - sx[part, None]) ** 2 + (sy[None, :] - sy[part, None]) ** 2
            d2[np.arange(part.size), part] = np.inf
            nnd[part] = np.sqrt(d2.min(axis=1))
    near = link >= _HEX_NEAR_STEPS
    rows, cols = np.nonzero(found[:, near])
    return float(nnd.mean()), _components(n, rows, hits[:, near][rows, cols])


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
        return _nn_compiled(k, np.ascontiguousarray(pts[:, 0]), np.ascontiguousarray(pts[:, 1]), link)
    return numpy_nn_and_labels(xy, link, chunk)


def _nn_compiled(k: Any, x: np.ndarray, y: np.ndarray, link: int) -> tuple[float, np.ndarray]:
    """:func:`nn_and_labels` of two or more fish at the whole cells (``x``, ``y``: contiguous int64)
    by the compiled tick ``k``. The mean is ``nnd.mean()``'s own sum and division (numpy's
    ``_mean`` is ``add.reduce`` over the count), in one call instead of its Python wrapper's few."""
    n = x.size
    nnd, labels = np.empty(n), np.empty(n, np.int64)
    k.neighbours(x, y, link, nnd, labels)
    return float(np.add.reduce(nnd) / n), labels


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


# what Sample.collective holds, in _tick.school's order (its ``figures``)
COLLECTIVE_FIGURES = ("polarization", "rotation", "clusters", "largest_cluster", "school_polarization",
                      "school_milling", "school_moving")
SCHOOL_ALIGNED = 0.5  # a school's polarization at least this (5 fish facing random ways: ≈ 0.40)


def _moving_clusters(labels: np.ndarray, moving: np.ndarray, min_size: int, heading: np.ndarray | None = None,
                     units: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(fish per label, the labels of the clusters of at least ``min_size`` fish of which at
    least half moved lately and — given ``heading`` — that face one way, polarization at least
    :data:`SCHOOL_ALIGNED`, ascending): the schools' candidates."""
    sizes = np.bincount(labels, minlength=len(labels))
    moved = np.bincount(labels, weights=moving.astype(np.float64), minlength=len(labels))
    ok = (sizes >= min_size) & (moved * 2 >= sizes)
    if heading is not None:  # Σ of the unit headings per cluster (the moves' steps, _UNIT)
        u = (_UNIT if units is None else units)[np.asarray(heading, np.int64)]
        sx = np.bincount(labels, weights=u[:, 0], minlength=len(labels))
        sy = np.bincount(labels, weights=u[:, 1], minlength=len(labels))
        ok &= np.hypot(sx, sy) >= SCHOOL_ALIGNED * np.maximum(sizes, 1) - 1e-9
    return sizes, np.flatnonzero(ok)


def schools(labels: np.ndarray | None, moving: np.ndarray, min_size: int = 3,
            heading: np.ndarray | None = None, units: np.ndarray | None = None) -> list[np.ndarray]:
    """Moving, aligned schools, largest first: clusters of at least ``min_size`` fish of which
    at least half moved lately (``moving``, per fish) and whose headings agree (polarization ≥
    :data:`SCHOOL_ALIGNED`, given ``heading``). A resting heap is a cluster, not a school, and
    so is a crowd milling every way."""
    if labels is None:
        return []
    sizes, ok = _moving_clusters(labels, moving, min_size, heading, units)
    ok = ok[np.argsort(-sizes[ok], kind="stable")]
    if not ok.size:
        return []
    by_label = np.argsort(labels, kind="stable")  # each cluster's fish together, in index order
    starts = np.cumsum(sizes) - sizes
    return [by_label[starts[k]:starts[k] + sizes[k]] for k in ok]


def largest_school(labels: np.ndarray | None, moving: np.ndarray, min_size: int = 3,
                   heading: np.ndarray | None = None, units: np.ndarray | None = None) -> np.ndarray:
    """The fish of the largest moving (and, given ``heading``, aligned) school
    (``schools(...)[0]``; the lowest label of equal sizes), or none."""
    if labels is None:
        return np.zeros(0, np.int64)
    sizes, ok = _moving_clusters(labels, moving, min_size, heading, units)
    if not ok.size:
        return np.zeros(0, np.int64)
    return np.flatnonzero(labels == ok[np.argmax(sizes[ok])])


def school_figures(members: np.ndarray, xy: np.ndarray, heading: np.ndarray, moving: np.ndarray,
                   units: np.ndarray | None = None) -> dict[str, Any]:
    """Couzin's order parameters of one school: size, polarization, milling, share that moved lately."""
    if members.size == 0:
        return {"school_size": 0.0, "school_polarization": 0.0, "school_milling": 0.0, "school_moving": 0.0}
    return {"school_size": float(members.size), "school_polarization": polarization(heading[members], units),
            "school_milling": rotation(xy[members], heading[members], units),
            "school_moving": float(moving[members].mean())}


class Metrics:
    """Rolling metrics over :class:`Frame` objects; one instance per run."""

    def __init__(self, cfg: MetricsConfig, n_fish: int, width: int, height: int, territory: bool = False,
                 tank: Config | None = None, table: tuple[Metric, ...] | None = None,
                 plans: PlanTable | None = None):
        self.cfg = cfg
        # the tank's grid (mirofish/grid.py): its actions, and a hexagonal tank's sample figures in numpy
        self.grid = grid_of(tank.world.grid if tank is not None else "square")
        # the run's metrics (its registry's, mirofish/registry.py; default this module's table)
        self.table = table = METRICS if table is None else table
        hud = [m.key for m in table if m.hud is not None]
        wrong = [k for k in cfg.hud_first if k not in hud]  # (a misspelt key would be read by nothing)
        if wrong:
            raise ConfigError(f"metrics.hud_first: {', '.join(wrong)} is not a HUD column; choose from: "
                              f"{', '.join(hud)}")
        self.tank = tank  # the run's whole Config (a sampled metric reads it as Sample.cfg), or None
        # with remembered places: home ranges, site fidelity, overlap (observe/territory.py)
        self.territory = Territory(n_fish, width, height, cfg.sample_every) if territory else None
        # a tank whose groups live by population rules (docs/species.md) counts its fish in the water
        population = tank is not None and any(g.species_rules for g in tank.fish.groups)
        self.keys = tuple(m.key for m in table if m.kind != "tick" and (territory or m.group != "territory")
                          and (population or m.group != "population"))
        self._window = [m for m in table if m.kind == "window"]
        self._sampled = [m for m in table if m.kind == "sample" and m.key in self.keys]
        w = cfg.window
        self.ticks = 0
        # Rolling windows: a ring of per-tick rows plus their running sum.
        self._actions = np.zeros((w, self.grid.n_actions), np.int64)
        self._action_sum = np.zeros(self.grid.n_actions, np.int64)
        self._conflicts = np.zeros((w, 2), np.int64)  # (conflicts, intents)
        self._conflict_sum = np.zeros(2, np.int64)
        self._decisions = [(0, 0, 0)] * w  # per tick of the window: (decisions, fallbacks, tokens)
        self._decision_sum = [0, 0, 0]
        self._nb = np.zeros((cfg.schooling_window, n_fish), np.int64)
        self._nb_sum = np.zeros(n_fish, np.int64)
        self._lat = np.zeros(2048)
        self._lat_n = 0
        self.by_tier = np.zeros(len(TIERS), np.int64)
        self._last_fallback = np.full(n_fish, -1, np.int16)  # each fish's latest fallback status (late answers)
        self._fallbacks_seen = False
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
        # does each fish do what its thoughts say (observe/worddeed.py)
        self.word_deed = WordDeed(n_fish, plans=plans or DEFAULT_PLANS, grid=self.grid)
        self.judge_words = True  # False: no word-and-deed (mirofish.env: a policy's actions carry no words)
        # False: the decisions are not counted (their tiers, fallbacks, tokens, latencies: keep_for)
        self.count_decisions = True
        self.sampling = SAMPLE_ALL  # what a sample every sample_every ticks does (keep_for)
        # the per-tick bookkeeping in C (_tick.tally: a hexagonal tank's eight actions too; its
        # samples' figures are numpy's: Sample)
        self.compiled = kernel.compiled_tick() is not None
        self._outcomes = np.zeros(5, np.int64)  # fish per move outcome at the last tick (filled by tally)
        self._all_here = np.ones(n_fish, np.uint8)

    def __deepcopy__(self, memo: dict[int, Any]) -> Metrics:
        """A copy whose every rolling window, count and sample is its own (a fork's metrics go on
        from its parent's); what no observer changes — the settings, the run's config, the metric
        and plan tables, the grid — is shared, not copied (a fork's setup: 1.2 → 0.3 ms)."""
        shared = (self.cfg, self.tank, self.grid, self.table, *self.table, self.word_deed.plans, self.word_deed.grid)
        for o in shared:
            memo.setdefault(id(o), o)
        out = type(self).__new__(type(self))
        memo[id(self)] = out
        for k, v in self.__dict__.items():
            # the window's (decisions, fallbacks, tokens): tuples of ints, never changed in place, so a
            # new list of the same tuples (deepcopy walks its 100 tuples: two thirds of the copy's time)
            out.__dict__[k] = list(v) if k == "_decisions" else copy.deepcopy(v, memo)
        return out

    def moving(self) -> np.ndarray:
        """Per fish: moved in the last ``MOVED_WITHIN`` ticks."""
        return self.last_moved >= self.ticks - MOVED_WITHIN

    first_tick = 0
    in_water = 0  # fish in the water at the last tick observed

    @kernel.positional
    def observe(self, f: Frame) -> None:
        """Fold one tick in: rolling windows every tick, values and run means every ``sample_every``."""
        cfg, slot = self.cfg, self.ticks % self.cfg.window
        if self.ticks == 0:
            self.first_tick = f.tick  # what these metrics have seen starts here (a replay: its keyframe)
        self.ticks += 1
        if self.judge_words:
            self.word_deed.observe(f)
        nslot = self.ticks % cfg.schooling_window
        k = _TICK if self.compiled else None
        if k is not None:
            oc = self._outcomes
            ex, mo, nb, st, x, y = f.executed, f.move_outcome, f.neighbours, f.stuck, f.x, f.y
            if not f.native:  # a frame from elsewhere (a replay's): as the compiled code takes them
                ex, mo, nb, st = _as(ex, np.int8), _as(mo, np.int8), _as(nb, np.int16), _as(st, np.int32)
                x, y = _as(x, np.int64), _as(y, np.int64)
            self.in_water, worst = k.tally(  # by name (_tick.TALLY_ARRAYS, TALLY_INTS)
                {"executed": ex, "move_outcome": mo,
                 "present": self._all_here if f.present is None else _as(f.present, np.bool_),
                 "neighbours": nb, "stuck": st, "x": x, "y": y, "actions": self._actions,
                 "action_sum": self._action_sum, "conflicts": self._conflicts, "conflict_sum": self._conflict_sum,
                 "nb": self._nb, "nb_sum": self._nb_sum, "last_moved": self.last_moved, "heat": self.heat,
                 "outcomes": oc},
                {"slot": slot, "nslot": nslot, "window": cfg.window, "schooling_window": cfg.schooling_window,
                 "ticks": self.ticks, "hotspot_cell": cfg.hotspot_cell, "heat_width": self.heat.shape[1],
                 "heat_height": self.heat.shape[0]})
        else:
            oc, worst = self._tally(f, slot, nslot)
        self._fold(oc, worst, f.stuck, f.x, f.y, f.applied, None, f.latencies, f)

    def _fold(self, oc: np.ndarray | list[int], worst: int, stuck: np.ndarray, x: np.ndarray, y: np.ndarray,
              applied: list[DecisionBatch], dec: tuple[int, int, int] | None, latencies: list[float],
              f: Frame | None) -> None:
        """The rest of a tick after its tally (``oc``: fish per move outcome; ``worst``: the first
        fish of the longest stuck streak, an index into ``stuck``, ``x`` and ``y``): the heartbeat,
        the stuck streak, the decisions (``dec``: already counted, else counted from ``applied``),
        their latencies, and a sample when one is due (of ``f``: given on a sample's tick). Shared by
        :meth:`observe` and the tanks of a joined world observed together (session/together.py)."""
        cfg, slot = self.cfg, (self.ticks - 1) % self.cfg.window
        self.since_move = 0 if oc[arbiter.MOVED] else self.since_move + 1
        if oc[arbiter.CROWDED] + oc[arbiter.OCCUPIED] + oc[arbiter.BLOCKED]:
            self.stuck_now = (int(stuck[worst]), int(x[worst]), int(y[worst]))
            self.max_stuck = max(self.max_stuck, self.stuck_now[0])
        elif self.stuck_now[0]:  # streaks end on a successful move
            self.stuck_now = (int(stuck[worst]), *self.stuck_now[1:])
        if self.count_decisions:
            if dec is None:
                dec = self._count_decisions(applied) if applied else (0, 0, 0)
            old, total = self._decisions[slot], self._decision_sum
            total[0] += dec[0] - old[0]  # (decisions, fallbacks, tokens: written out, no loop a tick)
            total[1] += dec[1] - old[1]
            total[2] += dec[2] - old[2]
            self._decisions[slot] = dec
            if latencies:
                self._keep_latencies(latencies)
        if (self.ticks - 1) % cfg.sample_every == 0 and self.sampling != SAMPLE_NONE:
            assert f is not None  # (a sample's tick is given its frame)
            if self.sampling == SAMPLE_ALL:
                self._sample(f)
            else:
                self._prev_xy = positions(f, self.grid)

    def keep_for(self, metric: Metric | None) -> None:
        """From now on do only what reading ``metric`` needs (None: no metric at all), as an
        ``influence`` fork's metrics do: its outcome is the one thing read of them, so the rest
        of their work each tick would be thrown away (a joined fork of 60 fish and 300 ticks:
        16.0 → 12.5 ms; tests/test_influence_joined.py reads six kinds of outcome both ways).

        Kept always: the compiled tally (every window figure, who moved lately, the stuck
        streaks). Kept for a metric that reads the decisions (``Metric.decisions``: their
        fallbacks, tokens and latencies): the decisions counted. Kept for a sampled metric: the
        positions a sample leaves for the next (``school_travel`` reads how far the school's centre
        moved since the last sample), and for one of the territory group or of another package
        every sample whole (a territory's figures fold in every sample). Any metric but a shipped
        one — a plug-in's, a registry's, a row put in a table by hand — may read any of it: it
        keeps everything, word and deed included (a shipped row is known by its own compute
        function, not by its key or ``plugin``)."""
        if metric is not None:
            ours = next((m for m in BUILT_IN_METRICS if m.key == metric.key), None)
            if ours is None or metric.compute is not ours.compute:
                return
            metric = ours
        self.judge_words = False
        self.count_decisions = metric is not None and metric.decisions
        if metric is None or metric.kind != "sample":
            self.sampling = SAMPLE_NONE
        elif metric.group != "territory":
            self.sampling = SAMPLE_POSITIONS

    def _count_decisions(self, applied: list[DecisionBatch]) -> tuple[int, int, int]:
        """Count a tick's decisions by tier; (decisions, fallbacks, tokens) for the window."""
        n = fallbacks = tok = 0
        for b in applied:
            if b.is_plain and not self._fallbacks_seen and b.fish.size:  # one tier, all OK, no tokens (the
                k, t = b.fish.size, int(b.tier[0])  # embedded brains'): counted without reading the arrays
                self.by_tier[t] += k
                n += k
                fallbacks += k if t == _FALLBACK else 0
                continue
            if b.tier.size < 16:  # a few decisions (a small tank's tick): counted in Python, fewer numpy calls
                tiers, status = b.tier.tolist(), b.status.tolist() if b.status is not None else []
                fb = tiers.count(_FALLBACK)
                for t in set(tiers):
                    self.by_tier[t] += tiers.count(t)
                waiting = status.count(_WAITING)
                n += len(tiers) - waiting
                fallbacks += fb - waiting
                said = any(status)
                tok += sum(b.tokens.tolist()) if b.tokens is not None else 0
            else:
                by_tier = np.bincount(b.tier, minlength=len(TIERS))
                self.by_tier += by_tier
                # an instinct plan swum while a first request waits for the model is no answer:
                # neither a decision nor a fallback for the rate
                waiting = int(np.count_nonzero(b.status == _WAITING))
                n += len(b.tier) - waiting
                fallbacks += int(by_tier[_FALLBACK]) - waiting
                said = b.status is not None and bool(b.status.any())
                tok += int(b.tokens.sum()) if b.tokens is not None else 0
            # a late model answer replaces its request's fallback: one outcome, not two
            replaced = 0
            if b.status is not None and (self._fallbacks_seen or said):  # (never with the embedded brain)
                self._fallbacks_seen = True
                replaced = sum(1 for _, st in late_replaces(self._last_fallback, b.fish, b.status) if st >= 0)
            if replaced or waiting:
                self.by_tier[_FALLBACK] -= replaced + waiting  # a waiting plan is no decision of any tier
                n -= replaced
                fallbacks -= replaced
        return n, fallbacks, tok

    def _keep_latencies(self, latencies: list[float]) -> None:
        """Put a tick's decision latencies into the ring the P95 is read from (NaN: a decision
        whose request was made before this run, a fork's first ones: left out)."""
        size = self._lat.size
        if len(latencies) <= 8:  # a small tank's tick: a few, put in one by one (fewer numpy calls)
            ring, n = self._lat, self._lat_n
            for v in latencies:
                if v == v:  # (not NaN)
                    ring[n % size] = v
                    n += 1
            self._lat_n = n
            return
        lat = np.asarray(latencies, np.float64)
        lat = lat[~np.isnan(lat)][-size:]
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
        counts = np.bincount(executed, minlength=self._action_sum.size)
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

    def schooling_of(self, fish: np.ndarray) -> float:
        """The schooling degree of some of the fish (``fish``: a mask of those in the water, e.g.
        a mixed tank's group): the same test as :meth:`schooling_now`, over them only."""
        n = int(np.count_nonzero(fish))
        if not n:
            return 0.0
        filled = min(self.ticks, self.cfg.schooling_window)
        return float(np.count_nonzero((self._nb_sum > filled) & self.moving() & fish) / n)

    def _window_values(self) -> dict[str, float]:
        return {m.key: _value(m, self) for m in self._window}

    def _sample(self, f: Frame) -> None:
        cur = self._current
        for m in self._window:  # (loops, not _window_values: a sample's calls every 10 ticks)
            cur[m.key] = _value(m, self) if m.plugin else float(m.compute(self))
        s = Sample(f, self.moving(), self._prev_xy, self.territory, self.tank, compiled=self.compiled, grid=self.grid)
        for m in self._sampled:
            cur[m.key] = _value(m, s) if m.plugin else float(m.compute(s))
        self.school_members = s.school_members
        self._prev_xy = s.full_xy
        self._samples += 1
        for k in self.keys:
            self._sums[k] += cur[k]

    def decisions_window(self) -> tuple[int, int, int]:
        """(decisions, fallbacks, tokens) over the window."""
        d = self._decision_sum
        return d[0], d[1], d[2]

    def conflicts_window(self) -> tuple[int, int]:
        """(intents refused because of another fish, intents) over the window."""
        return int(self._conflict_sum[0]), int(self._conflict_sum[1])

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

    def latency_p95(self) -> float:
        """P95 of the last 2,048 decision latencies, ms (nearest rank)."""
        return self._latency_p95()

    def _latency_p95(self) -> float:
        n = min(self._lat_n, self._lat.size)
        if not n:
            return 0.0
        k = math.ceil(0.95 * n) - 1  # nearest-rank P95
        if self.compiled and _TICK is not None:  # the same value, selected in C (a third of the time)
            return float(_TICK.nth(self._lat[:n], k) * 1000)
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
        return {name: float(c / total) for name, c in zip(self.grid.action_names, counts)}

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


# ---------------------------------------------------------------- the metrics, declared once


def _value(m: Metric, on: Any) -> float:
    """``m`` computed on ``on``; a plug-in's metric that raises is 0.0 and one warning line (once)
    (Metrics._sample calls it for plug-ins' metrics only; its own it computes directly)."""
    if not m.plugin:
        return float(m.compute(on))
    try:
        return float(m.compute(on))
    except Exception as exc:  # noqa: BLE001 — someone else's metric must not stop the tank
        if m.key not in _WARNED:
            _WARNED.add(m.key)
            import sys

            print(f"mirofish: warning: metric {m.key} (plug-in {m.plugin}) failed: {type(exc).__name__}: {exc}; "
                  f"it reads 0 from now on", file=sys.stderr)
        return 0.0


_WARNED: set[str] = set()


_T = TypeVar("_T")


class _once(Generic[_T]):
    """functools.cached_property without its lock (Python 3.11 takes an RLock on every first read):
    the value is computed on first read and kept in the instance's ``__dict__``, which later reads
    find first. A Sample is read by one thread, every 10 ticks."""

    def __init__(self, fn: Callable[[Any], _T]) -> None:
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> _T:
        if obj is None:
            return self  # type: ignore[return-value]  # (the class's attribute: the descriptor, as cached_property)
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


def positions(f: Frame, grid: Grid) -> np.ndarray:
    """Every fish's position as a sample reads it, an (n, 2) float array: its cell's, or on a
    hexagonal tank its hex's centre on screen (mirofish/grid.py)."""
    if grid.hex:
        xy: np.ndarray = np.stack(grid.centres(f.x, f.y), axis=1)
        return xy
    xy = np.empty((len(f.x), 2))  # (np.stack's values, without its Python wrapper: a sample every 10 ticks)
    xy[:, 0], xy[:, 1] = f.x, f.y
    return xy


class Sample:
    """What a sampled metric reads (``compute(sample)``), every ``metrics.sample_every`` ticks: the
    frame (:attr:`f`), the fish in the water (:attr:`ids`) with their positions and headings, who
    moved lately, and — computed once, on first use — the clusters, the largest moving school and
    the territory figures; :attr:`cfg`, the run's config (its tank size, perception radius,
    fish settings …; None where a sample is made without one). A metric of a user's reads the
    same (docs: "Your own metric")."""

    def __init__(self, f: Frame, moving: np.ndarray, prev_xy: np.ndarray | None, territory: Territory | None,
                 cfg: Config | None = None, compiled: bool | None = None, grid: Grid | None = None):
        self.f = f
        if grid is None:
            grid = grid_of(cfg.world.grid if cfg is not None else "square")
        # A hexagonal tank's figures are of the cells' centres on screen (mirofish/grid.py), its
        # headings' unit vectors six, all in numpy; its clusters link fish within two hex steps
        # (in each other's view: hex_nn_and_labels).
        self.units = None if not grid.hex else np.array(grid.units, np.float64)
        # the collective figures in one compiled call (None: as kernel.compiled_tick() says)
        use = kernel.compiled_tick() is not None if compiled is None else compiled
        self.compiled = use and not grid.hex
        self._kernel = _TICK if use else None  # (decided once: compiled_tick() reads the environment)
        self.cfg = cfg
        self.ids = f.in_water  # the collective figures are of the fish in the water
        self.full_xy = positions(f, grid)
        if f.present is None:  # every fish in the water (the ids are all of them): no copies
            self.xy, self.heading, self.moving = self.full_xy, f.heading, moving
        else:
            self.xy, self.heading = self.full_xy[self.ids], f.heading[self.ids]
            self.moving = moving[self.ids]
        self.prev_xy = prev_xy
        self._territory = territory

    @_once
    def neighbours(self) -> tuple[float, np.ndarray | None]:
        """(mean nearest-neighbour distance, cluster labels) of the fish in the water."""
        if self.units is not None:  # a hexagonal tank: by hex steps, from its fish's tank coordinates
            return hex_nn_and_labels(self.f.x[self.ids], self.f.y[self.ids])
        k, f = self._kernel, self.f
        if k is not None and len(self.ids) >= 2:  # from the frame's whole cells (nn_and_labels' figures)
            x, y = (f.x, f.y) if f.present is None else (f.x[self.ids], f.y[self.ids])
            return _nn_compiled(k, _as(x, np.int64), _as(y, np.int64), 2)
        return nn_and_labels(self.xy)

    @_once
    def _compiled(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(fish per cluster label, the largest school's members, :data:`COLLECTIVE_FIGURES`) in
        one compiled call (``_tick.school``: the numpy functions' figures bit for bit, tested),
        or None: the numpy reference (no compiled tick, or fewer than two fish)."""
        labels = self.neighbours[1]
        prev = self.prev_xy
        if labels is None or not self.compiled or (prev is not None and prev.shape != self.full_xy.shape):
            return None
        n = len(labels)
        sizes, members, figures = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(len(COLLECTIVE_FIGURES) + 1)
        before = None if prev is None else _as(prev, np.float64)  # (the last sample's positions: the travel)
        assert _TICK is not None  # (compiled: the module was built)
        m = _TICK.school(self.xy, _as(self.heading, np.int8), _as(self.moving, np.bool_), labels, sizes, members,
                         figures, _as(self.ids, np.int64), self.full_xy, before)
        return sizes, members[:m], figures

    @_once
    def collective(self) -> dict[str, float]:
        """The tank's and its largest school's order figures (:data:`COLLECTIVE_FIGURES`)."""
        c = self._compiled
        if c is not None:
            return dict(zip(COLLECTIVE_FIGURES, c[2].tolist()))
        sizes, school = self.cluster_sizes, self.school
        return {"polarization": polarization(self.heading, self.units),
                "rotation": rotation(self.xy, self.heading, self.units),
                "clusters": float(np.count_nonzero(sizes >= 2)), "largest_cluster": float(sizes.max(initial=0)),
                "school_polarization": school["school_polarization"], "school_milling": school["school_milling"],
                "school_moving": school["school_moving"]}

    @_once
    def cluster_sizes(self) -> np.ndarray:
        c = self._compiled
        if c is not None:
            return c[0]
        labels = self.neighbours[1]
        return np.bincount(labels, minlength=len(self.xy)) if labels is not None else np.ones(len(self.xy), np.int64)

    @_once
    def members(self) -> np.ndarray:
        """The largest moving school (indexes into :attr:`ids`)."""
        c = self._compiled
        if c is not None:
            return c[1]
        return largest_school(self.neighbours[1], self.moving, heading=self.heading, units=self.units)

    @property
    def school_members(self) -> np.ndarray:
        """The largest moving school's fish (fish ids)."""
        fish: np.ndarray = self.ids[self.members]
        return fish

    @_once
    def school(self) -> dict[str, Any]:
        c = self._compiled
        if c is not None:
            fig = c[2]
            return {"school_size": float(c[1].size), "school_polarization": float(fig[4]),
                    "school_milling": float(fig[5]), "school_moving": float(fig[6])}
        return school_figures(self.members, self.xy, self.heading, self.moving, self.units)

    def school_travel(self) -> float:
        c = self._compiled
        if c is not None:
            return float(c[2][-1])
        m, prev = self.school_members, self.prev_xy
        moved = self.full_xy[m].mean(axis=0) - prev[m].mean(axis=0) if m.size and prev is not None else np.zeros(2)
        return float(np.hypot(*moved))

    @_once
    def territory(self) -> dict[str, float]:
        assert self._territory is not None
        return self._territory.sample(self.f)


@dataclass(frozen=True)
class Metric:
    """One metric, declared once (Mesa's reporters): the metrics, the HUD, the charts, the
    recordings' samples, the export tables, the sweeps and ``diff`` read this table.

    ``kind``: ``"window"`` — exact whenever read, over the rolling window (``compute(metrics)``,
    a :class:`Metrics`); ``"sample"`` — every ``metrics.sample_every`` ticks (``compute(sample)``,
    a :class:`Sample`); ``"tick"`` — every tick, kept in a recording's per-tick rows
    (``compute(frame)``). ``group``: ``"health"`` (docs/design.md §4's six), ``"collective"``,
    ``"territory"`` (only in tanks with remembered places), ``"population"`` (only in tanks with
    species: docs/species.md), ``"tank"``, or a user's own.
    ``healthy``: the design's healthy range; ``bad_below``/``bad_above``: alarm lines. The rest
    says where it is shown: ``hud`` / ``chart`` / ``diff`` rank (None: not there), the chart's
    title, colour (a ``ui.theme`` name) and fixed y range, ``sweep`` (an aquarium sweep's default
    figures), ``model_only`` (the HUD shows it only with a model brain), ``recorded`` (in a
    recording's samples), ``computed_in`` (where the numbers come from: a compiled tally's arrays
    or Python)."""

    key: str
    label: str
    doc: str
    unit: str
    fmt: str
    kind: str
    compute: Callable[[Any], float]
    group: str = "collective"
    healthy: tuple[float, float] | None = None
    bad_below: float | None = None
    bad_above: float | None = None
    model_only: bool = False
    hud: int | None = None
    chart: int | None = None
    chart_title: str = ""
    chart_colour: str = "INK"
    chart_range: tuple[float, float] | None = None
    chart_fmt: str = ""  # the chart's number format (default: fmt)
    diff: int | None = None
    sweep: int | None = None
    recorded: bool = False
    computed_in: str = "Python"
    plugin: str = ""  # the entry point of a metric from another package ("" for ours)
    decisions: bool = False  # reads the decisions counted each tick: their fallbacks, tokens or latencies

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"metric {self.key}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if not self.key.isidentifier():
            raise ValueError(f"metric {self.key!r}: a key is a name (letters, digits, _)")
        try:
            self.fmt.format(0.5)
        except (ValueError, IndexError, KeyError) as exc:
            raise ValueError(f"metric {self.key}: format {self.fmt!r} does not format a number ({exc})") from None


KINDS = ("window", "sample", "tick")


def _ratio(a: float, b: float) -> float:
    return float(a / b) if b else 0.0


METRICS: tuple[Metric, ...] = (
    Metric("action_entropy", "action entropy", "Shannon entropy (ln) of the six executed actions in the window "
           "(max ln 6 = 1.79; a hexagonal tank's eight: ln 8 = 2.08)", "nats", "{:.2f}", "window",
           lambda m: entropy(m._action_sum), group="health",
           healthy=(1.6, 1.9), bad_below=1.2, hud=0, chart=5, chart_title="action entropy (ln)",
           chart_range=(0.0, 1.8), diff=6, recorded=True, computed_in="C tally: actions (rolling window)"),
    Metric("conflict_rate", "conflict rate", "intents refused because of another fish / all intents, in the "
           "window (bumps into glass apart). The source design's healthy 3-8 % is for its one-action tank, "
           "where fish bump into each other; plans steer around the fish they see, so the band here starts at "
           "0.3 % (default tank, seeds 1-3, 2,000 ticks: mean 0.72-0.94 %); above 15 % the tank is jammed",
           "share", "{:.1%}", "window",
           lambda m: _ratio(*m.conflicts_window()), group="health", healthy=(0.003, 0.08), bad_above=0.15, hud=1,
           chart=4, chart_title="conflict rate", chart_colour="WARN", diff=5, recorded=True,
           computed_in="C tally: conflicts (rolling window)"),
    Metric("schooling_degree", "schooling", "share of fish with more than one other fish in view on average "
           "over the schooling window, that moved in the last 10 ticks", "share", "{:.2f}", "window",
           lambda m: m.schooling_now(), group="health", hud=2, chart=0, chart_title="schooling degree",
           chart_colour="GOOD", chart_range=(0.0, 1.0), diff=0, sweep=1, recorded=True,
           computed_in="C tally: nb (fish in view, rolling window)"),
    Metric("tokens_per_decision", "tokens/decision", "prompt + completion tokens per decision in the window "
           "(0 for the instinct brain)", "tokens", "{:.0f}", "window",
           lambda m: _ratio(m.decisions_window()[2], m.decisions_window()[0]), group="health",
           healthy=(350, 500), bad_above=1500, model_only=True, hud=3, diff=9, recorded=True, decisions=True),
    Metric("decision_latency_p95_ms", "latency p95", "request queued -> decision applied, P95 over the last "
           "2,048 decisions", "ms", "{:.0f} ms", "window", lambda m: m.latency_p95(), group="health",
           healthy=(0, 1200), bad_above=1200, model_only=True, hud=4, recorded=True, decisions=True),
    Metric("fallback_rate", "fallback rate", "share of decisions in the window made by the fallback tier (rules "
           "standing in for a failed model)", "share", "{:.1%}", "window",
           lambda m: _ratio(m.decisions_window()[1], m.decisions_window()[0]), group="health", healthy=(0, 0.05),
           bad_above=0.20, model_only=True, hud=5, diff=8, recorded=True, decisions=True),
    Metric("polarization", "polarization", "|sum of the heading unit vectors| / N: 1 = all the same way",
           "0..1", "{:.2f}", "sample", lambda s: s.collective["polarization"], hud=9, diff=1, recorded=True,
           computed_in="C school"),
    Metric("rotation", "rotation", "|sum of r x u| / N around the group's centre (Couzin's milling)", "0..1",
           "{:.2f}", "sample", lambda s: s.collective["rotation"], recorded=True,
           computed_in="C school"),
    Metric("nn_distance", "nn distance", "mean distance to the nearest other fish", "cells", "{:.1f}", "sample",
           lambda s: s.neighbours[0], diff=7, recorded=True, computed_in="C neighbours (grid of the fish)"),
    Metric("clusters", "clusters", "groups of 2 or more fish linked by being in each other's view", "groups",
           "{:.0f}", "sample", lambda s: s.collective["clusters"], hud=10, recorded=True,
           computed_in="C neighbours + school"),
    Metric("largest_cluster", "largest cluster", "fish in the largest cluster", "fish", "{:.0f}", "sample",
           lambda s: s.collective["largest_cluster"], recorded=True,
           computed_in="C neighbours + school"),
    Metric("school_size", "largest school", "fish in the largest moving, aligned school: a cluster of 3 or more "
           "(fish within 2 cells of each other) of which at least half moved in the last 10 ticks and whose "
           "polarization is at least 0.5 (ringed in the tank)", "fish", "{:.0f} fish", "sample",
           lambda s: s.school["school_size"], hud=6, chart=1, chart_title="largest moving school (fish)",
           chart_colour="ACCENT", chart_fmt="{:.0f}", diff=2, sweep=4, recorded=True,
           computed_in="C neighbours + school"),
    Metric("school_polarization", "school polariz.", "polarization inside the largest moving school", "0..1",
           "{:.2f}", "sample", lambda s: s.school["school_polarization"], hud=7, chart=2,
           chart_title="polarization inside it", chart_colour="ACCENT", chart_range=(0.0, 1.0), sweep=3,
           recorded=True, computed_in="C school"),
    Metric("school_milling", "school milling", "rotation inside the largest moving school", "0..1", "{:.2f}",
           "sample", lambda s: s.school["school_milling"], recorded=True,
           computed_in="C school"),
    Metric("school_moving", "school moving", "share of the largest school's fish that moved in the last 10 ticks",
           "share", "{:.0%}", "sample", lambda s: s.school["school_moving"], hud=8, diff=3, sweep=2, recorded=True,
           computed_in="C school"),
    Metric("school_travel", "school travel", "cells the largest school's centre moved since the previous sample",
           "cells", "{:.1f}", "sample", lambda s: s.school_travel(), diff=4, recorded=True),
    Metric("home_range", "home range", "per fish, the 4x4-cell squares it was seen in over 5 minutes, in cells "
           "(the tank's mean)", "cells", "{:.0f}", "sample", lambda s: s.territory["home_range"],
           group="territory", chart=7, chart_title="home range (cells, last 5 min)", chart_colour="ACCENT"),
    Metric("site_fidelity", "site fidelity", "share of meals eaten back at a remembered place", "share", "{:.0%}",
           "sample", lambda s: s.territory["site_fidelity"], group="territory", chart=6,
           chart_title="site fidelity (meals back at a place)", chart_colour="GOOD", chart_range=(0.0, 1.0)),
    Metric("range_overlap", "range overlap", "mean Jaccard overlap of two fish's home ranges", "0..1", "{:.2f}",
           "sample", lambda s: s.territory["range_overlap"], group="territory", chart=8,
           chart_title="range overlap between fish", chart_colour="WARN", chart_range=(0.0, 1.0)),
    Metric("territoriality", "territoriality", "site fidelity x (1 - range overlap)", "0..1", "{:.2f}", "sample",
           lambda s: s.territory["territoriality"], group="territory"),
    Metric("fish_in_water", "fish in the water", "fish in the water now: with species they are born, starve and "
           "are caught (docs/species.md)", "fish", "{:.0f}", "sample", lambda s: float(len(s.ids)),
           group="population", chart=9, chart_title="fish in the water (by group)", chart_colour="ACCENT"),
    Metric("mean_energy", "mean energy", "mean energy of the fish in the water", "energy", "{:.1f}", "tick",
           lambda f: _mean_energy(f), group="tank", chart=3, chart_title="mean energy", chart_colour="GOOD",
           sweep=0),
)
_BUILT_IN = len(METRICS)
# What a tank needs for the metrics of a group to be counted at all (the check kit's runs, tests):
# territory — fish that remember places; population — species (docs/species.md).
GROUP_SETTINGS: dict[str, dict[str, Any]] = {
    "territory": {"fish.places": 3},
    "population": {"fish.groups": [{"name": "prey", "share": 0.8, "dies": True},
                                   {"name": "hunters", "share": 0.2, "hunts": ["prey"]}]},
}
PLUGIN_PROBLEMS: list[str] = []


def _plugin_metrics() -> tuple[Metric, ...]:
    """Metrics of installed packages (entry point group ``mirofish.metrics``, each a
    :class:`Metric` of kind ``sample`` or ``window``): shown in the summary JSON and sweeps like
    the built-in ones; they are not recorded in a recording's samples (its columns are fixed
    per format) and sit in no HUD column unless they rank one. A plug-in that does not load, or
    whose key is taken, is left out with one line in :data:`PLUGIN_PROBLEMS`."""
    from importlib.metadata import entry_points

    from ..plugins import load_entry

    taken, out = {m.key for m in METRICS}, []
    for ep in sorted(entry_points(group="mirofish.metrics"), key=lambda e: e.name):
        try:
            m = load_entry(ep)  # its module by itself: the package's __init__ may import the window
            if not isinstance(m, Metric) or m.kind == "tick":
                raise TypeError("not a sample or window Metric")
        except Exception as exc:  # noqa: BLE001 — someone else's package: one line, not our failure
            PLUGIN_PROBLEMS.append(f"metric plug-in {ep.name} ({ep.value}) does not load: {exc}")
            continue
        if m.key in taken:
            PLUGIN_PROBLEMS.append(f"metric plug-in {ep.name}: the key {m.key!r} is taken")
            continue
        taken.add(m.key)
        out.append(Metric(**{**m.__dict__, "recorded": False, "plugin": ep.name}))
    return tuple(out)


def _mean_energy(f: Frame) -> float:
    energy = f.energy if f.present is None else f.energy[f.present]  # of the fish in the water
    return int(energy.sum()) / (100.0 * max(1, len(energy)))


def metric(key: str) -> Metric:
    """The metric named ``key`` (KeyError naming the known ones)."""
    for m in METRICS:
        if m.key == key:
            return m
    raise KeyError(f"no metric {key!r}; the metrics are {', '.join(m.key for m in METRICS)}")


def keys(group: str | None = None, kind: str | None = None) -> tuple[str, ...]:
    """The metrics' keys, in table order, of one ``group`` and/or ``kind``."""
    return tuple(m.key for m in METRICS if (group is None or m.group == group) and (kind is None or m.kind == kind))


def summary_key(m: Metric) -> str:
    """Where a headless run's summary JSON holds ``m`` (dotted): a tick figure at the top, the
    others as their run mean."""
    return m.key if m.kind == "tick" else f"metrics.{m.key}.mean"


def ranked(field: str) -> list[Metric]:
    """The metrics shown in one place (``"hud"``, ``"chart"``, ``"diff"``, ``"sweep"``), in their order there."""
    return sorted((m for m in METRICS if getattr(m, field) is not None), key=lambda m: getattr(m, field))


BUILT_IN_METRICS = METRICS  # the shipped rows (mirofish.registry.built_in)
RECORDED = tuple(m.key for m in METRICS if m.recorded)  # a recording's sampled columns (built-in only)
# The plug-ins last: every name above exists by now, so a plug-in whose package imports any part
# of MiroFish (observe.recording, which reads RECORDED and metric() from here) loads — no import trap.
METRICS = METRICS + _plugin_metrics()
SIX = keys("health")  # docs/design.md §4
COLLECTIVE = keys("collective")
