"""One sweep run, executed wherever a backend puts it (a local process, a Dask worker).

``run_task`` never raises: a run that fails comes back as a row with ``status`` "failed" and
its error, so one bad run does not stop a sweep. A row's summary is exactly what the single
command (``RunTask.command``) prints.
"""

from __future__ import annotations

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


def run_task(task: RunTask, record_dir: str | None = None) -> dict[str, Any]:
    """Run ``task``; returns its row (never raises)."""
    start = time.perf_counter()
    row: dict[str, Any] = {"run_id": task.run_id, "scene": task.scene, "seed": task.seed, "length": task.length,
           "params": task.params, "command": task.command_line()}
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
