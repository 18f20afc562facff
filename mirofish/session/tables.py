"""A recording as tables: decisions, fish states, metrics, memory, the run, and a fork's divergence.

``python run.py export REC --tables OUT_DIR [--format parquet|csv] [--from T --to T] [--every K]``

The compact blob format stays what it is (replay size and seek speed); these tables sit
beside it for analysis in pandas, polars or DuckDB. Reading never changes the recording.

* ``decisions`` — every applied decision, from the recorded chunks: tick, fish, tier, goal,
  param, horizon, plan (in words), action (single-action decisions), status and
  fallback_reason, latency_ms, tokens (prompt + completion: recordings keep the sum), thought.
* ``fish`` — tick, fish, x, y, heading, energy, age, plan, plan_goal, stuck, meals and returns
  (meals back at a remembered place: tanks with ``fish.places``, else 0), in_water (False: room
  for a fish not yet added or born, or one taken out, starved or caught) — every K ticks,
  from re-simulating the recording (keyframe segments in parallel processes, no metrics,
  checked against the state hashes the recording keeps, like replay);
  the state after ``tick`` ticks, as ``replay`` shows it at that tick.
* ``metrics`` — the per-tick measures at every tick, and the sampled metric set where it was
  sampled (empty cells elsewhere).
* ``memory`` — tick, fish, kind, code, text, source: short-memory events as they happened
  (source "perception") and the long-term summaries a model wrote (source "model").
* ``runs`` — one row: the header (seed, scene, created, code version, parent and fork point)
  and the whole config flattened to columns (``fish.count``, ``food.spawn_rate`` …).
* ``divergence`` — forks only: per tick, cells that differ from the parent, schooling and
  energy differences.
* ``model_calls`` — one row per model request (model runs; empty otherwise): tick (the tick
  its decision was applied at — join to ``decisions`` on tick and fish), asked (the tick the
  fish asked), fish, kind (``decision`` or ``summary``), tier, model, endpoint (never
  credentials), format, the per-fish message (``message``) and the shared prefix's hash
  (``prefix``; its text is in the recording), the raw ``reply``, how it was ``read`` (``ok`` or
  the failure), latency_ms, prompt and completion tokens, retries, cached (answered by a reply
  cache), reply_hash (the reply cache's content hash of the request; named ``key`` before, which
  read like a credential), group (a mixed tank's group).

``decisions``, ``fish`` and ``model_calls`` end with ``group``: the fish's group in a mixed tank
(``[[fish.groups]]``, docs/groups.md), empty in a tank without groups.
* ``word_deed`` — one row per plan that began and ended inside the range (observe/worddeed.py):
  tick it began, end, fish, goal, param, thought, word (did the thought agree with the plan;
  empty when it names nothing to judge), deed (did the plan happen), unfounded (the thought
  claimed food the fish did not have in view; its word is then false).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ..brains.base import TIERS, status_name
from ..config import redacted
from ..engine import Engine
from ..fish.memory import event_text
from ..fish.plans import G_HOLD
from ..observe.paths import OutputError, check_output, open_read_only
from ..observe.recording import (
    TICK_SCENE,
    Recording,
    RecordingError,
    recording_scene,
)
from ..observe.tablefile import write_table
from ..registry import Registry
from ..world import World
from .replay import ReplaySource, replay_check, run_registry

TABLES = ("runs", "decisions", "fish", "metrics", "memory", "model_calls", "word_deed", "divergence")
# Column types (Parquet / DuckDB names); ``metrics`` and ``divergence`` are ``tick`` (BIGINT)
# and DOUBLE columns, ``runs`` takes each header and config value's own type. CSV holds the
# same columns as text. A sweep's tables start with a ``run_id`` VARCHAR column.
TYPES = {
    "decisions": {"tick": "int64", "fish": "int64", "tier": "string", "goal": "string", "param": "int64",
                  "horizon": "int64", "plan": "string", "action": "string", "status": "string",
                  "fallback_reason": "string", "latency_ms": "float64", "tokens": "int64", "thought": "string",
                  "group": "string"},
    "fish": {"tick": "int64", "fish": "int64", "x": "int64", "y": "int64", "heading": "string", "energy": "float64",
             "age": "int64", "plan": "string", "plan_goal": "string", "stuck": "int64",
             "meals": "int64", "returns": "int64", "in_water": "bool", "group": "string"},
    "memory": {"tick": "int64", "fish": "int64", "kind": "string", "code": "int64", "text": "string",
               "source": "string"},
    "model_calls": {"tick": "int64", "asked": "int64", "fish": "int64", "kind": "string", "tier": "string",
                    "model": "string", "endpoint": "string", "format": "string", "prefix": "string",
                    "message": "string", "reply": "string", "read": "string", "latency_ms": "float64",
                    "prompt_tokens": "int64", "completion_tokens": "int64", "retries": "int64", "cached": "bool",
                    "reply_hash": "string", "group": "string", "recalled": "string"},
    "word_deed": {"tick": "int64", "end": "int64", "fish": "int64", "goal": "string", "param": "int64",
                  "thought": "string", "word": "bool", "deed": "bool", "unfounded": "bool"},
}


def word_deed_table(rec: Recording, t0: int, t1: int) -> dict[str, list[Any]]:
    """Every plan that began and ended in ``[t0, t1)``, judged (replays the range once)."""
    from ..observe.worddeed import WordDeed
    from .replay import ReplaySession

    player = ReplaySession(rec)
    try:
        player.seek(t0)
        judge = WordDeed(rec.config.fish.slots, keep=True, plans=rec.plans)
        player.engine.observers.append(judge.observe)
        while player.tick < t1 and player.step() is not None:
            pass
    finally:
        player.close()
    cols: dict[str, list[Any]] = {c: [] for c in TYPES["word_deed"]}
    for r in judge.records:
        for k in cols:
            cols[k].append(r.get(k, False) if k == "unfounded" else r[k])
    return cols


def model_calls_table(rec: Recording, t0: int, t1: int) -> dict[str, list[Any]]:
    calls = rec.model_calls(t0, t1)
    cols: dict[str, list[Any]] = {c: [] for c in TYPES["model_calls"]}
    for c in calls:
        row = {**c, "message": c.get("user"), "latency_ms": _number(c.get("latency_s"), 1000.0),
               "reply_hash": c.get("key"),  # the reply cache's content hash (was the column "key": no credential)
               "recalled": _recalled(c.get("recalled"))}
        for k in cols:
            v = row.get(k)
            kind = TYPES["model_calls"][k]
            if kind == "int64":  # a damaged file's count that is no whole number in range: left empty
                v = v if type(v) is int and -2**63 <= v < 2**63 else None
            elif kind == "string" and v is not None and not isinstance(v, str):
                v = None
            elif kind == "bool":
                v = v if isinstance(v, bool) else None
            cols[k].append(v)
    return cols


def _recalled(value: Any) -> str | None:
    """What a memory recalled for a decision, as ``id:score; …`` (None: nothing said, or not that shape)."""
    if not isinstance(value, list) or not value:
        return None
    try:
        return "; ".join(f"{int(k)}:{float(s):g}" for k, s in value)
    except (TypeError, ValueError):
        return None


def _number(value: Any, scale: float) -> float | None:
    """A recorded measure as a finite number scaled (seconds → ms), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0 if value is None else None
    v = float(value) * scale
    return round(v, 1) if v == v and abs(v) < 1e300 else None


def group_column(rec: Recording, fish: Any) -> np.ndarray:
    """Each row's group name in a mixed tank (``[[fish.groups]]``; the rest of the tank is
    ``tank``), None in a tank without groups."""
    ids = np.asarray(fish, np.int64)
    fc = rec.config.fish
    if not fc.groups:
        return np.full(ids.size, None, object)
    names = np.array(fc.group_names(), object)
    return names[np.asarray(fc.group_of(), np.int64)[np.clip(ids, 0, fc.slots - 1)]]


def _range(rec: Recording, t0: int | None, t1: int | None) -> tuple[int, int]:
    lo = rec.first_tick if t0 is None else t0
    hi = rec.last_tick if t1 is None else t1
    if not rec.first_tick <= lo < hi <= rec.last_tick:
        raise RecordingError(f"--from {lo} --to {hi} is not a range inside this recording "
                             f"(ticks {rec.first_tick}..{rec.last_tick})")
    return lo, hi


# The integer rows these tables are gathered in, by column name (STYLE: name columns, don't count them).
DECISION_ROWS = ("tick", "fish", "goal", "param", "horizon", "tier", "status", "latency", "tokens")
FISH_ROWS = ("tick", "fish", "x", "y", "heading", "energy", "age", "plan_goal", "plan_param", "stuck", "meals",
             "returns", "in_water")
MEMORY_ROWS = ("tick", "fish", "code", "arg")


def _rows(columns: tuple[str, ...], **arrays: Any) -> np.ndarray:
    """``(k, len(columns))`` int64 rows from one array per column name."""
    return np.stack([np.asarray(arrays[c]) for c in columns]).T.astype(np.int64)


def _joined(columns: tuple[str, ...], parts: list[np.ndarray]) -> dict[str, np.ndarray]:
    """The rows of ``parts`` joined, as one column per name."""
    a = np.concatenate(parts) if parts else np.zeros((0, len(columns)), np.int64)
    return {c: a[:, i] for i, c in enumerate(columns)}


def decisions_table(rec: Recording, t0: int, t1: int) -> dict[str, Any]:
    parts = []
    thoughts: dict[tuple[int, int], str] = {}
    for tick0, d, texts in rec.chunks(t0, t1):
        tick = tick0 + d["dt"].astype(np.int64)
        keep = (tick >= t0) & (tick < t1)
        parts.append(_rows(DECISION_ROWS, **{c: d[c] for c in DECISION_ROWS if c != "tick"}, tick=tick)[keep])
        thoughts.update({(int(t), int(f)): text for t, f, text in texts["thoughts"] if t0 <= t < t1})
    a = _joined(DECISION_ROWS, parts)
    tiers = np.array([*TIERS, *(str(k) for k in range(len(TIERS), 256))], object)
    status = _lookup(np.stack([a["status"], a["status"]], axis=1), lambda c, _: status_name(c))
    hold = a["goal"] == G_HOLD
    action = np.full(len(hold), None, object)
    names = rec.plans.grid.action_names  # (the tank's grid: mirofish/grid.py)
    action[hold] = np.array(names + ("?",) * 256, object)[np.clip(a["param"][hold], 0, len(names))]
    return {
        "tick": a["tick"], "fish": a["fish"], "tier": tiers[np.clip(a["tier"], 0, 255)],
        "goal": np.array([*rec.plans.names, *("?",) * 256], object)[np.clip(a["goal"], 0, 255)],
        "param": a["param"], "horizon": a["horizon"],
        "plan": _lookup(np.stack([a["goal"], a["param"], a["horizon"]], axis=1), rec.plans.describe),
        "action": action, "status": status,
        "fallback_reason": np.where(a["status"] != 0, status, np.full(len(hold), None, object)),
        "latency_ms": np.round(a["latency"] / 10.0, 1), "tokens": a["tokens"],
        "thought": np.array([thoughts.get((int(t), int(f))) for t, f in zip(a["tick"], a["fish"])], object)
        if thoughts else np.full(len(hold), None, object),
    }


def metrics_table(rec: Recording, t0: int, t1: int) -> dict[str, list[Any]]:
    ticks = rec.tick_rows(t0, t1)
    samples = {int(r[0]): r[1:] for r in rec.sample_rows(t0, t1)}
    cols: dict[str, list[Any]] = {"tick": [int(t) for t in ticks[:, 0]]}
    named = rec.columns()  # this version's columns, then any only the file has (another version's metric)
    for k, name in enumerate(named["ticks"]):
        cols[name] = [float(v) for v in ticks[:, 1 + k]]
    for k, name in enumerate(named["samples"]):
        key = name if name not in cols else f"sampled_{name}"
        cols[key] = [round(float(samples[t][k]), 6) if t in samples else None for t in cols["tick"]]
    return cols


def divergence_table(rec: Recording, t0: int, t1: int) -> dict[str, list[Any]]:
    rows = rec.divergence_rows(t0, t1)
    cols: dict[str, list[Any]] = {"tick": [int(t) for t in rows[:, 0]]}
    for k, name in enumerate(rec.columns()["divergence"]):
        cols[name] = [float(v) for v in rows[:, 1 + k]]
    return cols


def runs_table(rec: Recording) -> dict[str, list[Any]]:
    head = {k: v for k, v in rec.header.items() if k not in ("config", "checksum")}
    row: dict[str, Any] = {"path": str(rec.path), "first_tick": rec.first_tick, "last_tick": rec.last_tick}
    for k, v in head.items():
        row[k] = v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(v)

    def flat(d: dict[str, Any], prefix: str) -> None:
        for k, v in d.items():
            if isinstance(v, dict):
                flat(v, f"{prefix}{k}.")
            else:
                row[f"config.{prefix}{k}"] = v if isinstance(v, (int, float, str, bool)) or v is None \
                    else json.dumps(v)

    flat(redacted(rec.config), "")  # a recording made before groups were redacted may hold a key
    # a damaged header's whole number past what a table column holds is kept as its text
    return {k: [str(v) if type(v) is int and not -2**63 <= v < 2**63 else v] for k, v in row.items()}


_WORKER_REGISTRY: list[Registry | None] = []  # a pool worker's run registry (set by _start_worker, inherited by fork)


def _start_worker(registry: Registry | None) -> None:
    """A pool worker: the recording's run registry (handed over by the fork, never pickled: a
    metric's ``compute`` may be a lambda), and the default SIGTERM."""
    _WORKER_REGISTRY[:] = [registry]
    _sigterm_default()


def _sigterm_default() -> None:
    """A pool worker ends at SIGTERM, whatever handler it inherited: the pool's exit terminates
    its workers, and SDL's handler (``pygame.init()`` in the exporting process: the window, or a
    test session) turns SIGTERM into a quit event — a worker that survived it was waited for
    forever (a hung export)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _segment(args: tuple[Any, ...], registry: Registry | None = None) -> dict[str, Any]:
    """Re-simulate keyframe segment ``[k0, k1)`` of the recording; the fish state every
    ``every`` ticks inside ``[t0, t1)`` and the short-memory events that happened (``registry``:
    the run's that reads it; a pool worker's is the one its parent handed it)."""
    path, k0, k1, t0, t1, every = args
    rec = Recording(path, registry=registry or (_WORKER_REGISTRY[0] if _WORKER_REGISTRY else None))
    try:
        world = World(rec.config, registry=run_registry(rec))
        world.load_state_arrays(rec.keyframe(k0))
        engine = Engine(world, ReplaySource(rec), mode="lockstep")
        engine.observers.append(replay_check(rec, lambda: world))  # the recorded state hashes, as replay checks
        s = world.school
        fish_rows, mem_rows = [], []
        rec.load_chunks(k0, k1)
        while True:
            t = world.tick
            if t0 <= t < t1 and t % every == 0:
                x, y = world.water.xy(s.cell.astype(np.int64))  # tank cells (the state's are padded by the view)
                p = world.places
                meals, returns = (p.meals, p.returns) if p is not None else (np.zeros(s.n), np.zeros(s.n))
                fish_rows.append(_rows(FISH_ROWS, tick=np.full(s.n, t), fish=np.arange(s.n), x=x,
                                       y=y, heading=s.heading, energy=s.energy, age=s.age,
                                       plan_goal=s.plan_goal, plan_param=s.plan_param, stuck=s.stuck, meals=meals,
                                       returns=returns, in_water=~s.absent))
            if t >= min(k1, t1):
                break
            world.given_actions = rec.executed_at(t)  # None (steer) for recordings made before plans
            engine.step()
            hit = np.nonzero((s.memory.tick == t) & (s.memory.code != 0))
            if hit[0].size and t0 <= t < t1:
                mem_rows.append(_rows(MEMORY_ROWS, tick=np.full(hit[0].size, t), fish=hit[0],
                                      code=s.memory.code[hit], arg=s.memory.arg[hit]))
        return {"fish": np.concatenate(fish_rows) if fish_rows else np.zeros((0, len(FISH_ROWS)), np.int64),
                "memory": np.concatenate(mem_rows) if mem_rows else np.zeros((0, len(MEMORY_ROWS)), np.int64)}
    finally:
        rec.close()


def simulated_tables(rec: Recording, t0: int, t1: int, every: int,
                     workers: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fish table and the perception part of the memory table, by re-simulating."""
    keys = [k for k in rec.keyframe_ticks if k < t1]
    start = max(k for k in keys if k <= t0) if any(k <= t0 for k in keys) else keys[0]
    keys = [k for k in keys if k >= start]
    # a few long stretches, each started from its own keyframe and simulated straight through
    # (opening a recording checks its checksum and a world takes a while to build: not per keyframe)
    pieces = min(len(keys), 2 * workers if workers > 1 else 1)
    cut = [keys[int(round(i * len(keys) / pieces))] for i in range(pieces)]
    jobs = [(str(rec.path), k0, k1, t0, t1, every) for k0, k1 in zip(cut, [*cut[1:], t1])]
    if workers > 1 and len(jobs) > 1:
        # one stretch's last sampled tick is the next one's first: the duplicate is dropped below
        with multiprocessing.get_context("fork").Pool(min(workers, len(jobs)), initializer=_start_worker,
                                                  initargs=(rec.registry,)) as pool:
            parts = pool.map(_segment, jobs, chunksize=1)
    else:
        parts = [_segment(j, rec.registry) for j in jobs]
    rows = np.concatenate([p["fish"] for p in parts]) if parts else np.zeros((0, len(FISH_ROWS)), np.int64)
    _, first = np.unique(rows[:, :2], axis=0, return_index=True)  # (tick, fish): a keyframe tick sampled twice
    fish = _joined(FISH_ROWS, [rows[np.sort(first)]])
    mem = _joined(MEMORY_ROWS, [p["memory"] for p in parts])
    fcols = {
        "tick": fish["tick"], "fish": fish["fish"], "x": fish["x"], "y": fish["y"],
        "heading": np.array(rec.plans.grid.move_names, object)[fish["heading"]], "energy": fish["energy"] / 100,
        "age": fish["age"], "plan": _lookup(np.stack([fish["plan_goal"], fish["plan_param"]], axis=1),
                                            rec.plans.describe),
        "plan_goal": np.array(rec.plans.names, object)[fish["plan_goal"]], "stuck": fish["stuck"],
        "meals": fish["meals"], "returns": fish["returns"], "in_water": fish["in_water"].astype(bool)}
    n_mem = len(mem["tick"])
    mcols = {"tick": mem["tick"], "fish": mem["fish"], "kind": np.full(n_mem, "event", object),
             "code": mem["code"], "text": _lookup(np.stack([mem["code"], mem["arg"]], axis=1), event_text),
             "source": np.full(n_mem, "perception", object)}
    return fcols, mcols


def _lookup(rows: np.ndarray, words: Callable[..., str]) -> np.ndarray:
    """``words(*row)`` for each row of ``rows``, computed once per distinct row."""
    if not len(rows):
        return np.zeros(0, object)
    rows = np.asarray(rows, np.int64)
    lo = rows.min(axis=0)
    span = rows.max(axis=0) - lo + 1
    if float(np.prod(span.astype(float))) < 2**62:  # one integer key per row: a 1-D unique is fast
        key = np.zeros(len(rows), np.int64)
        for k in range(rows.shape[1]):
            key = key * span[k] + (rows[:, k] - lo[k])
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        uniq = rows[first]
    else:
        uniq, inverse = np.unique(rows, axis=0, return_inverse=True)
    return np.array([words(*map(int, u)) for u in uniq], object)[inverse.ravel()]


def _model_summaries(rec: Recording, t0: int, t1: int) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {"tick": [], "fish": [], "kind": [], "code": [], "text": [], "source": []}
    for t in range(t0, t1):
        d = rec.decisions_at(t)
        for f, _serial, text in (d.summaries if d is not None else []):
            out["tick"].append(t)
            out["fish"].append(int(f))
            out["kind"].append("summary")
            out["code"].append(None)
            out["text"].append(text)
            out["source"].append("model")
    return out


def _types(name: str, cols: dict[str, Any]) -> dict[str, str] | None:
    """The column types of table ``name`` (None: each value's own, for ``runs``)."""
    if name in ("metrics", "divergence"):
        return {c: "string" if c == "run_id" else "int64" if c == "tick" else "float64" for c in cols}
    if name in TYPES:
        return {"run_id": "string", **TYPES[name]}
    return None


def _write(path: Path, cols: dict[str, Any], fmt: str, name: str = "") -> int:
    types = _types(name, cols)
    return write_table(path, cols, fmt, {c: types[c] for c in cols} if types else None)


def read_tables(rec: Recording, t0: int | None = None, t1: int | None = None, every: int = 10,
                workers: int | None = None) -> dict[str, dict[str, list[Any]]]:
    """Every table of one recording as columns (``{table: {column: values}}``)."""
    if every < 1:
        raise RecordingError(f"--every must be at least 1 (got {every})")
    lo, hi = _range(rec, t0, t1)
    fish, perceived = simulated_tables(rec, lo, hi, every, workers or os.cpu_count() or 1)
    model = _model_summaries(rec, lo, hi)
    memory = perceived
    if model["tick"]:  # model-written summaries, in tick order among the events
        memory = {k: np.concatenate([np.asarray(perceived[k], object), np.asarray(model[k], object)])
                  for k in perceived}
        ticks = np.concatenate([perceived["tick"], model["tick"]]).astype(np.int64)
        fish_ids = np.concatenate([perceived["fish"], model["fish"]]).astype(np.int64)
        order = np.lexsort((fish_ids, ticks))
        memory = {k: v[order] for k, v in memory.items()}
    decisions = decisions_table(rec, lo, hi)
    for table in (decisions, fish):
        table["group"] = group_column(rec, table["fish"])
    tables = {"runs": runs_table(rec), "decisions": decisions, "fish": fish,
              "metrics": metrics_table(rec, lo, hi), "memory": memory, "model_calls": model_calls_table(rec, lo, hi),
              "word_deed": word_deed_table(rec, lo, hi)}
    if "fork_tick" in rec.header:
        tables["divergence"] = divergence_table(rec, lo, hi)
    return tables


def check_parquet(fmt: str) -> None:
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise RecordingError("--format parquet needs pyarrow (pip install -e '.[tables]'); or use --format csv") \
                from None


def table_format(fmt: str | None) -> str:
    """``fmt``, or when none was asked for (``influence --out``, ``survey --out``: a table beside
    their JSON) Parquet if pyarrow is installed, else CSV — so the README's commands work after its
    install, which has no ``[tables]`` extra."""
    if fmt is not None:
        return fmt
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return "csv"
    return "parquet"


def table_targets(out_dir: str | Path, names: Iterable[str], fmt: str, inputs: tuple[Any, ...],
                  overwrite: bool, flag: str = "--tables") -> dict[str, Path]:
    """The files of tables ``names`` in folder ``out_dir`` (given as ``flag``), each checked as
    an output (mirofish.observe.paths)."""
    if not str(out_dir).strip():
        raise RecordingError(f"{flag} needs a folder name (an empty one would write into the current folder)")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise RecordingError(f"{flag} {out} is a file, not a folder")
    files = {n: out / f"{n}.{'parquet' if fmt == 'parquet' else 'csv'}" for n in names}
    for f in files.values():
        try:
            check_output(f, inputs, overwrite, "table")
        except OutputError as exc:
            raise RecordingError(str(exc)) from None
    return files


def export_tables(path: str | Path, out_dir: str | Path, fmt: str = "parquet", t0: int | None = None,
                  t1: int | None = None, every: int = 10, overwrite: bool = False,
                  workers: int | None = None) -> dict[str, Any]:
    """Write a recording's tables — or, for a sweep's results folder, every recorded run's
    tables concatenated with a ``run_id`` column — into ``out_dir``."""
    check_parquet(fmt)
    if Path(path).is_dir():
        return export_sweep_tables(path, out_dir, fmt, t0, t1, every, overwrite, workers)
    start = time.perf_counter()
    if recording_scene(path) != TICK_SCENE:
        raise RecordingError(f"{path} is a turn-by-turn recording: its scene exports it (scenes/*/recording.py)")
    rec = Recording(path)
    try:
        lo, hi = _range(rec, t0, t1)
        names = [n for n in TABLES if n != "divergence" or "fork_tick" in rec.header]
        files = table_targets(out_dir, names, fmt, (rec.path,), overwrite)
        tables = read_tables(rec, lo, hi, every, workers)
    finally:
        rec.close()
    return finish_export(tables, files, fmt, start, {"from": lo, "to": hi, "every": every})


def finish_export(tables: dict[str, Any], files: dict[str, Path], fmt: str, start: float,
                  extra: dict[str, Any]) -> dict[str, Any]:
    next(iter(files.values())).parent.mkdir(parents=True, exist_ok=True)
    rows = {n: _write(files[n], cols, fmt, n) for n, cols in tables.items()}
    return {"tables": {n: {"rows": rows[n], "file": str(files[n])} for n in rows}, **extra, "format": fmt,
            "seconds": round(time.perf_counter() - start, 2),
            "bytes": sum(files[n].stat().st_size for n in rows)}


def export_sweep_tables(folder: str | Path, out_dir: str | Path, fmt: str = "parquet", t0: int | None = None,
                        t1: int | None = None, every: int = 10, overwrite: bool = False,
                        workers: int | None = None) -> dict[str, Any]:
    """A sweep's recorded runs (``sweep --record``) as one set of tables, each row tagged with
    its ``run_id`` (the runs table adds the run's parameters; its seed is in the header), so a whole sweep loads
    as one frame."""
    import sqlite3

    start = time.perf_counter()
    folder = Path(folder)
    db_path = folder / "runs.sqlite"
    if not db_path.is_file():
        raise RecordingError(f"{folder} is a folder but not a sweep's results (no runs.sqlite)")
    try:
        db = open_read_only(db_path)
        runs = db.execute("SELECT run_id, params FROM runs WHERE status = 'ok' ORDER BY run_id").fetchall()
        db.close()
    except sqlite3.DatabaseError as exc:
        raise RecordingError(f"{db_path} is not a sweep results file: {exc}") from None
    recorded = [(rid, json.loads(params)) for rid, params in runs if (folder / "runs" / f"{rid}.mfrec").is_file()]
    if not recorded:
        raise RecordingError(f"no recorded aquarium runs in {folder} (run the sweep with --record)")
    names = ("runs", "decisions", "fish", "metrics", "memory", "model_calls", "word_deed")
    files = table_targets(out_dir, names, fmt, tuple(folder / "runs" / f"{r}.mfrec" for r, _ in recorded), overwrite)
    merged: dict[str, dict[str, list[Any]]] = {}
    for rid, params in recorded:
        rec = Recording(folder / "runs" / f"{rid}.mfrec")
        try:
            tables = read_tables(rec, t0, t1, every, workers)
        finally:
            rec.close()
        tables["runs"].update({f"param.{k}": [v] for k, v in params.items()})
        for name in names:
            cols = tables[name]
            n = len(next(iter(cols.values()), []))
            block = {"run_id": [rid] * n, **cols}
            into = merged.setdefault(name, {k: [] for k in block})
            for k in set(into) | set(block):  # runs may differ in columns (configs): fill the gaps
                into.setdefault(k, [None] * len(into["run_id"]))
            for k in into:
                into[k].extend(block.get(k, [None] * n))
    return finish_export(merged, files, fmt, start, {"runs": len(recorded), "every": every})
