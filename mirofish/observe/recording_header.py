"""What a reader takes from an aquarium recording's header, checked: the prompts it can use,
its plan goals as this version's codes, its format version, its config, its chunk length —
each refused in one line (:class:`RecordingError`) when a damaged or edited file holds
something else.

Part of :mod:`mirofish.observe.recording` (:class:`~mirofish.observe.recording.Recording` reads
its header through these).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from ..config import Config
from ..fish.plans import SHIPPED, PlanTable
from .recording_columns import goal_names, goals_of
from .recording_file import FORMAT_VERSION, MAX_CHUNK_TICKS, RecordingError


def usable_prompts(value: Any) -> dict[str, dict[str, Any]] | None:
    """A header's ``prompts`` as this version reads it: only entries that are tables (name, hash,
    text as text); anything else a damaged or edited file holds there is left out, not read."""
    if not isinstance(value, dict):
        return None
    out = {}
    for label, p in value.items():
        if isinstance(label, str) and isinstance(p, dict):
            out[label] = {k: v for k, v in p.items() if k not in ("name", "hash", "text", "path") or isinstance(v, str)}
    return out or None


UNKNOWN_GOAL = 255  # goal_map's code for a plan type the file names and this version does not know


def goal_map(header: dict[str, Any], path: Path, now: tuple[str, ...] | None = None) -> np.ndarray | None:
    """The codes of the plan goals a file names as the reading run's (``now``: its plan table's
    names, default this version's) (None: the same); a plan
    type this version does not know maps to :data:`UNKNOWN_GOAL` — a file that merely names one
    (made with a plug-in installed that it never used) reads, and one of its decisions that is
    of such a type is refused where it is read (:func:`unknown_goals`)."""
    goals, now = goals_of(header), goal_names() if now is None else now
    if goals == now:
        return None
    return np.array([now.index(g) if g in now else UNKNOWN_GOAL for g in goals], np.uint8)


def own_plan_types(header: dict[str, Any], path: Path, plans: PlanTable) -> PlanTable:
    """``plans`` and, after them, the rows the header keeps (``plan_types``, as data) of the plan
    types it names and ``plans`` lacks: a file made with a plug-in's plan type (or a run's own)
    replays where that plug-in is not installed. A row that does not check is one
    :class:`RecordingError` line; a goal with no row stays unknown (refused where a decision uses it)."""
    from ..fish.plantypes import row_from_data

    names = goals_of(header)
    missing = [g for g in names if g not in plans.code]
    kept = header.get("plan_types")
    if not missing or not isinstance(kept, list):
        return _in_file_order(plans, names)
    by_name = {d.get("name"): d for d in kept if isinstance(d, dict)}
    rows = []
    for name in missing:
        if name in by_name:
            try:
                rows.append(row_from_data(by_name[name]))
            except ValueError as exc:
                raise RecordingError(f"recording {path}: its plan type {name} cannot be read ({exc})") from None
    try:
        return _in_file_order(plans.adding(tuple(rows)) if rows else plans, names)
    except ValueError as exc:
        raise RecordingError(f"recording {path}: its plan types do not fit this version's ({exc})") from None


def _in_file_order(plans: PlanTable, names: tuple[str, ...]) -> PlanTable:
    """``plans`` with the types the file names at the file's codes (the rest after them), so a
    replay's state — which holds goal codes — hashes as the recorded one did: a run's own or a
    plug-in's plan types may have other codes in the reading run (added in another order, a
    plug-in installed since). Only where every shipped row keeps its code (``Goal`` is fixed);
    else ``plans`` as they are (decisions are still read by name)."""
    if plans.names[: len(names)] == names or not set(names) <= set(plans.code):
        return plans
    order = [*names, *(n for n in plans.names if n not in names)]
    if any(order.index(t.name) != plans.code[t.name] for t in SHIPPED if t.name in plans.code):
        return plans
    return PlanTable(tuple(plans.types[plans.code[n]] for n in order))


def unknown_goals(header: dict[str, Any], path: Path, used: np.ndarray) -> RecordingError:
    """The one line for decisions of plan types this version does not know (``used``: their codes in the file)."""
    goals = goals_of(header)
    names = sorted({goals[int(c)] for c in np.unique(used) if 0 <= int(c) < len(goals)})
    return RecordingError(f"recording {path} has plans of a type this version does not know "
                          f"({', '.join(names[:3])}): a newer MiroFish (or the plug-in that adds it) reads it")


def check_version(header: dict[str, Any], path: Path) -> None:
    """A format version this version reads (none newer than :data:`FORMAT_VERSION`)."""
    version = header.get("format_version")
    if not isinstance(version, int):
        raise RecordingError(f"not a MiroFish recording (no format version): {path}")
    if version > FORMAT_VERSION:
        raise RecordingError(f"recording format {version} is newer than this MiroFish reads ({FORMAT_VERSION}): "
                             f"{path}")


def config_of(header: dict[str, Any], path: Path) -> Config:
    """The run's config as it was stored, validated (the first problem named)."""
    try:
        return Config.model_validate(header["config"])
    except ValidationError as exc:
        err = exc.errors()[0]
        raise RecordingError(f"recording's stored config is invalid ({'.'.join(map(str, err['loc']))}: "
                             f"{err['msg']}): {path}") from None
    except (KeyError, TypeError):
        raise RecordingError(f"recording has no usable config in its header: {path}") from None


def chunk_ticks_of(header: dict[str, Any], path: Path) -> int:
    """The chunk length its writer aimed at, a whole number of ticks in bounds."""
    chunk_ticks = header.get("chunk_ticks")
    if type(chunk_ticks) is not int or not 1 <= chunk_ticks <= MAX_CHUNK_TICKS:
        raise RecordingError(f"recording is damaged (chunk_ticks {chunk_ticks!r} in its header): {path}")
    return chunk_ticks
