"""The aquarium as a scene of the registry (mirofish/scenes/registry.py): its command ``live``,
its recordings (ticks), export tables and sweeps (its command line: cli/fronts.py; its window:
ui/fronts.py)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ..config import LIVE_KEYS
from ..observe.metrics import ranked, summary_key
from .parts import SceneSpec, SweepHooks


def export(path: str, out_dir: str, fmt: str = "parquet", overwrite: bool = False, t_from: int | None = None,
           t_to: int | None = None, every: int = 10) -> dict[str, Any]:
    """``export REC --tables DIR``: a recording (or a sweep's folder) as tables (session/tables.py)."""
    from ..session.tables import export_tables

    result: dict[str, Any] = export_tables(path, out_dir, fmt, t_from, t_to, every, overwrite)
    return result


def _settings(task: Any) -> list[str]:
    from ..config import toml_value

    return [f"{k}={toml_value(v)}" for k, v in task.params.items()]


def check(task: Any) -> str | None:
    """Why a sweep run's settings cannot run (unknown keys, values the config refuses)."""
    from ..config import ConfigError, load_config

    try:
        load_config(None, _settings(task), preset=task.preset, seed=task.seed)
    except ConfigError as exc:
        return f"params: {exc}"
    return None


def summarize(task: Any, record_dir: str | None = None) -> dict[str, Any]:
    """A sweep run: a headless run of ``task.length`` ticks, its summary JSON."""
    from ..config import load_config
    from ..session.headless import run_headless

    cfg = load_config(None, _settings(task), preset=task.preset, seed=task.seed)
    record = str(Path(record_dir) / f"{task.run_id}.mfrec") if record_dir else None
    return run_headless(cfg, task.length, out=io.StringIO(), record=record, overwrite=True)


def summarize_joined(tasks: list[Any]) -> list[dict[str, Any]] | None:
    """Sweep runs of one setting but their seeds and live settings (``LIVE_KEYS``) stepped as one
    world (session/headless.py: run_headless_joined); None when their tank cannot be (a model's
    runs, species, realtime …: each runs alone)."""
    from ..config import load_config
    from ..session.headless import run_headless_joined

    cfgs = [load_config(None, _settings(t), preset=t.preset, seed=t.seed) for t in tasks]
    return run_headless_joined(cfgs, tasks[0].length)


def command(task: Any) -> list[str]:
    cmd = ["python", "run.py", "live", "--headless", "--ticks", str(task.length), "--seed", str(task.seed)]
    if task.preset:
        cmd += ["--preset", task.preset]
    return cmd + [x for setting in sorted(_settings(task)) for x in ("--set", setting)]


# what an aquarium sweep's table and plots show unless the file says (the metric table's sweep ranks)
def ask_server(params: dict[str, Any], base_url: str, model: str) -> None:
    """``sweep --base-url --model``: every run's fish ask that server (its small tier)."""
    params["brain.small.endpoints"] = [[{"base_url": base_url, "model": model}]]


SWEEP = SweepHooks(length="ticks", metrics=tuple(summary_key(m) for m in ranked("sweep")), check=check,
                   summarize=summarize, command=command, presets=True, ask_server=ask_server,
                   summarize_joined=summarize_joined, joins_across=LIVE_KEYS)

SPEC = SceneSpec(
    name="aquarium", command="live", help="run the aquarium in a window (or --terminal, or --headless for JSON)",
    records="ticks",  # (its command, replay, fork and window: cli/fronts.py, ui/fronts.py)
    fork_usage="--at T and --fish ID --plan PLAN (or --action A), or interventions",
    export="mirofish.scenes.aquarium:export",
    sweep="mirofish.scenes.aquarium:SWEEP",
    doc="fish that forage, jam and school from what each one sees")
