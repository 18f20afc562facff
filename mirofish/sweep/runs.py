"""One sweep run, executed wherever a backend puts it (a local process, a Dask worker).

``run_task`` never raises: a run that fails comes back as a row with ``status`` "failed" and
its error, so one bad run does not stop a sweep. A row's summary is exactly what the single
command (``RunTask.command``) prints.
"""

from __future__ import annotations

import io
import time
import traceback
from pathlib import Path

from .spec import RunTask, _toml, referential_config

# Figures that measure the machine, not the run: they differ between two runs of the same
# settings and seed, so comparisons of rows leave them out.
TIMING = ("ticks_per_sec", "elapsed_s", "latency")


def summarize(task: RunTask, record_dir: str | None = None) -> dict:
    """The run's summary, as its single command prints it."""
    if task.scene == "aquarium":
        from ..config import load_config
        from ..session.headless import run_headless

        cfg = load_config(None, [f"{k}={_toml(v)}" for k, v in task.params.items()], preset=task.preset,
                          seed=task.seed)
        record = str(Path(record_dir) / f"{task.run_id}.mfrec") if record_dir else None
        return run_headless(cfg, task.length, out=io.StringIO(), record=record, overwrite=True)
    if task.scene == "referential":
        from ..scenes.referential.experiment import Experiment

        log = str(Path(record_dir) / f"{task.run_id}.jsonl") if record_dir else None
        exp = Experiment(referential_config(task), None, log)
        try:
            return exp.run()
        finally:
            exp.close()
    from ..scenes.negotiation.dialogue import evaluate

    db = str(Path(record_dir) / f"{task.run_id}.sqlite") if record_dir else None
    summary, _, _ = evaluate(task.length, task.seed, bool(task.params.get("repair", True)), db_path=db,
                             layers=int(task.params.get("layers", 3)))
    summary["agents"] = "simulated"
    return summary


def run_task(task: RunTask, record_dir: str | None = None) -> dict:
    """Run ``task``; returns its row (never raises)."""
    start = time.perf_counter()
    row = {"run_id": task.run_id, "scene": task.scene, "seed": task.seed, "length": task.length,
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


def flatten(summary: dict, prefix: str = "") -> dict:
    """Numbers (and booleans) of a nested summary as ``dotted.name → value``; lists are left out."""
    out: dict = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif isinstance(value, bool):
            out[name] = int(value)
        elif isinstance(value, (int, float)) or (isinstance(value, str) and name == "final_state_hash"):
            out[name] = value
    return out


def comparable(row: dict) -> dict:
    """A row's figures without the machine's timings (for comparing two runs of one task)."""
    return {k: v for k, v in flatten(row.get("summary", {})).items() if not any(t in k for t in TIMING)}
