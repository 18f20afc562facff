"""Reusable measurements over whole runs (used by the benchmarks and the acceptance tests)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..observe.metrics import nn_and_labels, polarization, school_figures, schools

if TYPE_CHECKING:
    from ..frame import Frame
    from .live import LiveSession


def schooling_run(cfg: Config, ticks: int, every: int = 10) -> tuple[LiveSession, dict[str, float]]:
    """Run ``cfg`` for ``ticks`` ticks; return (engine, figures) where figures holds the
    schooling degree, the largest cluster's polarization and size, and its alignment beyond
    chance (polarization minus :func:`chance_polarization` of its size) — the cluster figures
    sampled every ``every`` ticks — each averaged over the first 100 ticks and the last 1,000."""
    from . import LiveSession

    engine = LiveSession(cfg)
    first: dict[str, list[Any]] = {"schooling": [], "polarization": [], "cluster_size": [], "alignment": []}
    last: dict[str, list[Any]] = {"schooling": [], "polarization": [], "cluster_size": [], "alignment": []}
    for t in range(ticks):
        frame = engine.step()
        into = first if t < 100 else last if t >= ticks - 1000 else None
        if into is not None:
            into["schooling"].append(engine.metrics.current()["schooling_degree"])
            if t % every == 0:
                pol, size = largest_cluster_polarization(frame)
                into["polarization"].append(pol)
                into["cluster_size"].append(size)
                into["alignment"].append(pol - chance_polarization(size) if size else 0.0)
    figures = {f"{k}_first100": float(np.mean(v)) for k, v in first.items()}
    figures.update({f"{k}_last1000": float(np.mean(v)) for k, v in last.items()})
    return engine, figures


def _xy(frame: Frame) -> np.ndarray:
    return np.stack([frame.x, frame.y], axis=1).astype(np.float64)


def chance_polarization(n: int) -> float:
    """Expected polarization of ``n`` fish facing random ways (≈ √(π / 4n) for large n): a
    3-fish cluster is 0.5 polarized by chance alone, a 20-fish one 0.2."""
    return float(np.sqrt(np.pi / (4 * n))) if n > 0 else 0.0


def largest_cluster_polarization(frame: Frame) -> tuple[float, int]:
    """(polarization, size) of the largest cluster (fish linked by being in each other's view), moving or not."""
    _, labels = nn_and_labels(_xy(frame))
    if labels is None:
        return 0.0, 0
    biggest = np.flatnonzero(labels == np.bincount(labels).argmax())
    return (polarization(frame.heading[biggest]), int(biggest.size)) if biggest.size >= 3 else (0.0, 0)


def _fanned_out(groups: list[np.ndarray], into: list[np.ndarray], least: int) -> int:
    """How many of ``groups`` have members in ≥ 2 of ``into`` with ≥ ``least`` in each."""
    label = {i: k for k, members in enumerate(into) for i in members.tolist()}
    count = 0
    for members in groups:
        parts = np.bincount([label[i] for i in members.tolist() if i in label], minlength=len(into) or 1)
        count += int(np.count_nonzero(parts >= least) >= 2)
    return count


def school_events(before: list[np.ndarray], after: list[np.ndarray], least: int = 3) -> tuple[int, int]:
    """(splits, merges) between two lists of schools (member arrays): a split is a school whose
    members now make up ≥ 2 schools with ≥ ``least`` of them each; a merge the reverse."""
    return _fanned_out(before, after, least), _fanned_out(after, before, least)


def demo_run(cfg: Config, at: int = 240, follow: int = 100, ticks: int = 2000, every: int = 10) -> dict[str, Any]:
    """The schooling-demo figures of one run: the largest moving school at tick ``at`` (size,
    polarization, share moved in the last 10 ticks), how far its members' centre travels over the
    next ``follow`` ticks — the path, sampled every ``every`` ticks, and the net displacement —,
    the largest moving school at ``at + follow`` (``later_school_size`` …), and school splits and
    merges (checked every ``every`` ticks) over ``ticks``."""
    from . import LiveSession

    engine = LiveSession(cfg)
    out: dict[str, Any] = {}
    members = None
    start = last = None
    path = 0.0
    prev: list[np.ndarray] | None = None
    splits = merges = 0
    for t in range(1, ticks + 1):
        frame = engine.step()
        if t % every and t not in (at, at + follow):
            continue
        moving = engine.metrics.moving()
        _, labels = nn_and_labels(_xy(frame))
        found = schools(labels, moving, heading=frame.heading)
        if t == at:
            members = found[0] if found else np.zeros(0, np.int64)
            out.update({k: round(v, 3) for k, v in school_figures(members, _xy(frame), frame.heading, moving).items()})
            start = last = _xy(frame)[members].mean(axis=0) if members.size else None
        if start is not None and at < t <= at + follow and t % every == 0:
            centre = _xy(frame)[members].mean(axis=0)
            path += float(np.hypot(*(centre - last)))
            last = centre
        if t == at + follow:  # the largest moving school then (another group, or the same one)
            later = found[0] if found else np.zeros(0, np.int64)
            out.update({f"later_{k}": round(v, 3)
                        for k, v in school_figures(later, _xy(frame), frame.heading, moving).items()})
        if t == at + follow and start is not None:
            out["travel_next_100"] = round(path, 1)
            out["displacement_next_100"] = round(float(np.hypot(*(_xy(frame)[members].mean(axis=0) - start))), 1)
        if t % every == 0:
            if prev is not None:
                s, m = school_events(prev, found)
                splits, merges = splits + s, merges + m
            prev = found
    out.setdefault("travel_next_100", 0.0)
    out.setdefault("displacement_next_100", 0.0)
    out["splits"], out["merges"] = splits, merges
    out["mean_energy"] = round(engine.world.mean_energy(), 1)
    return out
