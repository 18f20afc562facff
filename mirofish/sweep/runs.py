"""One sweep run, executed wherever a backend puts it (a local process, a Dask worker).

``run_task`` never raises: a run that fails comes back as a row with ``status`` "failed" and
its error, so one bad run does not stop a sweep. A row's summary is exactly what the single
command (``RunTask.command``) prints.
"""

from __future__ import annotations

import json
import time
import traceback
from pathlib import Path
from typing import Any

from .spec import RunTask, hooks

# Figures that measure the machine, not the run: they differ between two runs of the same
# settings and seed, so comparisons of rows leave them out.
TIMING = ("ticks_per_sec", "elapsed_s", "latency")


def summarize(task: RunTask, record_dir: str | None = None) -> dict[str, Any]:
    """The run's summary, as its single command prints it (the scene's sweep hooks run it)."""
    return hooks(task.scene).summarize(task, record_dir)


def _row(task: RunTask) -> dict[str, Any]:
    return {"run_id": task.run_id, "scene": task.scene, "seed": task.seed, "length": task.length,
            "params": task.params, "command": task.command_line()}


def join_key(task: RunTask) -> str:
    """Runs with equal keys may run joined: they differ only by their seed and by the settings the
    scene's runs may differ by within one joined world (``SweepHooks.joins_across``: the aquarium's
    live settings, mirofish/batch.py)."""
    across = hooks(task.scene).joins_across
    params = {k: v for k, v in task.params.items() if k not in across}
    return json.dumps([task.scene, params, task.length, task.preset], sort_keys=True, default=str)


def run_tasks(tasks: list[RunTask], record_dir: str | None = None) -> list[dict[str, Any]]:
    """The rows of runs that may join (one :func:`join_key`), each what :func:`run_task` gives it
    but for its timings: stepped together where the scene can (``SweepHooks.summarize_joined``;
    a recorded sweep's runs and runs that cannot join run one by one). A joined run's
    ``elapsed_s`` is its share of the group's time (never raises)."""
    if len(tasks) > 1 and record_dir is None and len({join_key(t) for t in tasks}) == 1:
        start = time.perf_counter()
        try:
            joined = hooks(tasks[0].scene).summarize_joined
            summaries = joined(tasks) if joined is not None else None
        except (Exception, SystemExit):  # noqa: BLE001 — then each alone: a failure is its own run's row
            summaries = None
        if summaries is not None:
            share = round((time.perf_counter() - start) / len(tasks), 3)
            return [{**_row(t), "status": "ok", "error": None, "summary": s, "elapsed_s": share}
                    for t, s in zip(tasks, summaries)]
    return [run_task(t, record_dir) for t in tasks]


def groups(tasks: list[RunTask], workers: int, most: int | None = None) -> list[list[RunTask]]:
    """``tasks`` in groups that may join (one :func:`join_key` a group: their seeds and live
    settings may differ) for :func:`run_tasks`: at most ``most`` runs a group (default
    ``JOIN_RUNS``), and a key's runs split further while there are fewer than two groups a worker
    (each worker kept busy, and a stopped sweep keeps the groups that finished: their rows come a
    group at a time). Every task once, in the order given within a key."""
    from ..session.headless import JOIN_RUNS

    most = JOIN_RUNS if most is None else max(1, most)
    by: dict[str, list[RunTask]] = {}
    for t in tasks:
        by.setdefault(join_key(t), []).append(t)
    split = -(-2 * max(1, workers) // max(1, len(by)))  # parts per setting: two groups a worker at least
    out: list[list[RunTask]] = []
    for same in by.values():
        size = max(1, min(most, -(-len(same) // split)))
        out += [same[i:i + size] for i in range(0, len(same), size)]
    return out


def run_task(task: RunTask, record_dir: str | None = None) -> dict[str, Any]:
    """Run ``task``; returns its row (never raises)."""
    start = time.perf_counter()
    row: dict[str, Any] = _row(task)
    try:
        summary = summarize(task, record_dir)
        row.update(status="ok", error=None, summary=summary)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 — a failed run is a row, not a crash
        last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        where = f" ({Path(last[0].filename).name}:{last[0].lineno})" if last else ""
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}{where}".splitlines()[0][:300], summary={})
    row["elapsed_s"] = round(time.perf_counter() - start, 3)
    return row


def flatten(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Numbers (and booleans) of a nested summary as ``dotted.name → value``; lists are left out."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif isinstance(value, bool):
            out[name] = int(value)
        elif isinstance(value, (int, float)) or (isinstance(value, str) and name == "final_state_hash"):
            out[name] = value
    return out


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A row's figures without the machine's timings (for comparing two runs of one task)."""
    return {k: v for k, v in flatten(row.get("summary", {})).items() if not any(t in k for t in TIMING)}
