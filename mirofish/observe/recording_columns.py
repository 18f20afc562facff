"""A recording's columns and plan goals by name: what this version writes, what a file's header
names (or the frozen names of files made before headers named them), and rows mapped by name.

Part of :mod:`mirofish.observe.recording` (which re-exports these). This version's columns
are read each time :func:`columns_now` is called: a test or a plug-in may set others, here or
as ``mirofish.observe.recording.SAMPLE_COLUMNS`` (which sets them here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from .metrics import RECORDED

if TYPE_CHECKING:
    from ..fish.plans import PlanTable
    from ..registry import Registry

TICK_COLUMNS = ("mean_energy", "schooling_degree", "conflicts", "moved", "decisions", "low_energy_fish")
SAMPLE_COLUMNS = RECORDED  # the metrics a recording samples (observe.metrics.METRICS' ``recorded``)
DIVERGENCE_COLUMNS = ("cells_differ", "schooling_diff", "energy_diff")
# A recording names its columns and plan goals in its header ("columns", "goals"): a reader maps
# them by name onto its own, so a metric or plan type added later never breaks an earlier file —
# a column the file lacks reads as NaN, one the reader does not know is left aside
# (:meth:`Recording.file_columns` names it). These are the names of every file written before
# headers named them, frozen: whatever a later version adds is not theirs.
LEGACY_COLUMNS: dict[str, tuple[str, ...]] = {
    "ticks": ("mean_energy", "schooling_degree", "conflicts", "moved", "decisions", "low_energy_fish"),
    "samples": ("action_entropy", "conflict_rate", "schooling_degree", "tokens_per_decision",
                "decision_latency_p95_ms", "fallback_rate", "polarization", "rotation", "nn_distance", "clusters",
                "largest_cluster", "school_size", "school_polarization", "school_milling", "school_moving",
                "school_travel"),
    "divergence": ("cells_differ", "schooling_diff", "energy_diff"),
}
LEGACY_GOALS = ("hold", "forage", "school", "explore", "rest", "keep_away", "return")


def columns_now() -> dict[str, tuple[str, ...]]:
    """This version's per-tick, sample and divergence columns, by name (what a header names)."""
    return {"ticks": tuple(TICK_COLUMNS), "samples": tuple(SAMPLE_COLUMNS), "divergence": tuple(DIVERGENCE_COLUMNS)}


def run_columns(registry: Registry | None) -> dict[str, tuple[str, ...]]:
    """The columns a run's recording writes, by name: a registry of its own samples its recorded
    metrics; the process's default (or none) the columns this module names (:func:`columns_now`)."""
    if registry is None or registry.process_default:
        return columns_now()
    return {"ticks": tuple(TICK_COLUMNS), "samples": registry.recorded, "divergence": tuple(DIVERGENCE_COLUMNS)}


def run_plans(registry: Registry | None) -> PlanTable:
    """A run's plan table (None: the process's default)."""
    from ..fish.plans import DEFAULT

    return DEFAULT if registry is None else registry.plans


def _names(value: Any, most: int) -> TypeGuard[list[str]]:
    """``value`` is a list of 1 to ``most`` names."""
    return isinstance(value, list) and 0 < len(value) <= most and all(isinstance(x, str) for x in value)


def columns_of(header: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """The columns a recording's header names (the frozen legacy ones where it names none)."""
    named = header.get("columns")
    out = dict(LEGACY_COLUMNS)
    if isinstance(named, dict):
        for k in out:
            v = named.get(k)
            if _names(v, 1000):
                out[k] = tuple(v)
    return out


def goals_of(header: dict[str, Any]) -> tuple[str, ...]:
    """The plan goals a recording's header names, in code order (the legacy ones where none)."""
    named = header.get("goals")
    if _names(named, 255):
        return tuple(named)
    return LEGACY_GOALS


def goal_names() -> tuple[str, ...]:
    """This version's plan goals, in code order (what a header names)."""
    from ..fish.plans import GOAL_NAMES

    return tuple(GOAL_NAMES)


def by_name(rows: np.ndarray, have: tuple[str, ...], want: tuple[str, ...]) -> np.ndarray:
    """``rows`` (``[tick, *have]``) as ``[tick, *want]``: each column by its name; one the rows
    lack is NaN, one ``want`` does not name is left out."""
    if have == want:
        return rows
    out = np.full((len(rows), 1 + len(want)), np.nan, np.float32)
    out[:, 0] = rows[:, 0] if len(rows) else out[:, 0]
    for j, name in enumerate(want):
        if name in have:
            out[:, 1 + j] = rows[:, 1 + have.index(name)]
    return out
