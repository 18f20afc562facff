"""A sweep's results folder: the rows in SQLite (resumable), and the tables and plots.

``OUT/runs.sqlite``  one row per finished run, committed as it arrives (a killed sweep keeps
                     every row it had; the next start skips those runs)
``OUT/runs.csv``     one row per run: run_id, status, error, seed, every parameter, every
                     summary figure (dotted names), the single command  (+ ``runs.parquet``
                     when pyarrow is installed)
``OUT/settings.csv`` one row per setting: each headline figure's mean and 95 % interval over
                     the seeds (Student's t), with the number of seeds that ran
``OUT/plots/*.png``  each headline figure against each swept parameter, one line per value of
                     the other parameters (when matplotlib is installed)
"""

from __future__ import annotations

import fcntl
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from ..config import redact_text
from ..observe.paths import COMPANIONS
from ..observe.tablefile import write_table
from .runs import flatten
from .spec import SweepSpec

# Student's t, two-sided 95 %, by degrees of freedom (1..30); beyond, the normal 1.96.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


class ResultsError(ValueError):
    """A results folder that cannot be used; one line."""


def t95(n: int) -> float:
    return _T95[n - 2] if 2 <= n <= 31 else 1.96


OUTPUTS = ("runs.csv", "settings.csv", "runs.parquet")


def check_folder(out: Path, overwrite: bool) -> None:
    """Refuse (one line) a results folder that would destroy something: a file, a folder named
    like a SQLite journal (or inside one), a ``runs.sqlite`` that is not a sweep's store (a
    recording, a glossary), tables or plots of something else there without ``--overwrite``,
    an output name taken by a folder or ``plots`` by a file."""
    from ..observe.paths import file_kind, holds_recording, journal_name, sqlite_tables

    if out.exists() and not out.is_dir():
        raise ResultsError(f"--out {out} is a file, not a folder")
    journal = journal_name(out.resolve())
    if journal:
        raise ResultsError(f"--out {out}: {journal}")
    store = out / "runs.sqlite"
    if store.exists():
        tables = sqlite_tables(store)
        if tables is None and file_kind(store) is not None:  # an SQLite file that cannot be read: cut short
            if overwrite:  # (the sweep's own store, replaced as asked: Store starts afresh)
                return _check_outputs(out, overwrite)
            raise ResultsError(f"{store} is damaged (an SQLite file that cannot be read); --overwrite starts the "
                               f"sweep afresh, replacing it")
        if tables is None:
            raise ResultsError(f"{store} is not a sweep's results (not an SQLite database)")
        if holds_recording(tables):
            raise ResultsError(f"{store} is a MiroFish recording, not a sweep's results; choose another --out")
        if not tables <= {"meta", "runs"} or "runs" not in tables:
            held = ", ".join(sorted(tables)[:3]) or "nothing"
            raise ResultsError(f"{store} is not a sweep's results (it holds {held}); choose another --out")
    elif not overwrite and any((out / name).exists() for name in OUTPUTS):
        raise ResultsError(f"{out} holds tables that are not a sweep's (no runs.sqlite); choose another --out, or "
                           f"--overwrite to replace them")
    _check_outputs(out, overwrite)


def _check_outputs(out: Path, overwrite: bool = False) -> None:
    """The sweep's table names free for files, ``plots`` for a folder; with ``overwrite``, none of
    the files it would replace read-only."""
    from ..observe.paths import kept_read_only, read_only

    for name in (*OUTPUTS, "runs.sqlite") if overwrite else ():
        if (out / name).is_file() and read_only(out / name):
            raise ResultsError(kept_read_only(str(out / name), "--out"))
    for name in OUTPUTS:
        if (out / name).exists() and not (out / name).is_file():
            raise ResultsError(f"{out / name} is not a file; the sweep writes its table there")
    if (out / "plots").exists() and not (out / "plots").is_dir():
        raise ResultsError(f"{out / 'plots'} is a file; the sweep writes its plots in a folder of that name")



class Store:
    """The rows of one sweep in ``OUT/runs.sqlite``; held by one sweep at a time (a lock file)."""

    def __init__(self, out: Path, spec: SweepSpec, overwrite: bool = False):
        self.out = out
        check_folder(out, overwrite)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsError(f"cannot create the results folder {out}: {exc.strerror}") from None
        self._lock = open(out / ".lock", "w")  # noqa: SIM115 — held for the sweep, released by close()
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise ResultsError(f"another sweep is writing {out}; wait for it or choose another --out") from None
        path = out / "runs.sqlite"
        if overwrite and path.exists():
            path.unlink()
            for left in COMPANIONS[1:]:  # (a journal left beside it would be rolled into the new one)
                Path(f"{path}{left}").unlink(missing_ok=True)
        try:
            self.db = sqlite3.connect(path)
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self.db.execute("CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, status TEXT NOT NULL, "
                            "seed INTEGER, params TEXT, summary TEXT, error TEXT, elapsed_s REAL, command TEXT)")
            row = self.db.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise ResultsError(f"{path} is not a sweep results file: {exc}") from None
        if row is not None and row[0] != spec.digest():
            self.close()
            raise ResultsError(f"{out} holds the results of another sweep file; choose another --out, or "
                               f"--overwrite to start it afresh")
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('spec', ?)", (spec.digest(),))
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('spec_json', ?)",
                        (redact_text(spec.model_dump_json(by_alias=True)),))
        self.db.commit()

    def done(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT run_id FROM runs")}

    def add(self, row: dict[str, Any]) -> None:
        # every text stored has the credentials of every URL in it redacted (a sweep parameter may be
        # an endpoint with a key in it): the table, runs.csv, settings.csv, runs.parquet and exports
        # are all read from here
        self.db.execute("INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?)", (
            row["run_id"], row["status"], row["seed"], redact_text(json.dumps(row["params"], sort_keys=True)),
            redact_text(json.dumps(row["summary"])), redact_text(row["error"]) if row["error"] else row["error"],
            row["elapsed_s"], redact_text(row["command"])))
        self.db.commit()  # a row is safe the moment it is added

    def rows(self) -> list[dict[str, Any]]:
        """Every run's row; a row that cannot be read (its parameters or summary not the JSON
        this table writes) is a :class:`ResultsError` naming the file and the row."""
        path = self.out / "runs.sqlite"
        try:
            found = self.db.execute("SELECT rowid, * FROM runs ORDER BY params, seed").fetchall()
        except sqlite3.DatabaseError as exc:
            raise ResultsError(f"sweep results {path} are damaged ({exc})") from None
        out = []
        for r in found:
            try:
                params, summary = json.loads(r[4]), json.loads(r[5])
                if not isinstance(params, dict) or not isinstance(summary, dict):
                    raise ValueError("params or summary is not a JSON object")
            except (ValueError, TypeError) as exc:  # (TypeError: a NULL or a number where JSON text is)
                raise ResultsError(f"sweep results {path} are damaged (run row {r[0]}: {exc}); "
                                   f"--overwrite starts the sweep afresh") from None
            out.append({"run_id": r[1], "status": r[2], "seed": r[3], "params": params, "summary": summary,
                        "error": r[6], "elapsed_s": r[7], "command": r[8]})
        return out

    def close(self) -> None:
        if getattr(self, "db", None) is not None:
            self.db.close()
            self.db = None  # type: ignore[assignment]
        self._lock.close()


def table(rows: list[dict[str, Any]], keys: list[str]) -> tuple[list[str], list[list[Any]]]:
    """(columns, rows) of the per-run table: identity, parameters, every figure, the command."""
    flat = [flatten(r["summary"]) for r in rows]
    figures = sorted({k for f in flat for k in f})
    cols = ["run_id", "status", "error", "seed", *keys, *figures, "elapsed_s", "command"]
    out = [[r["run_id"], r["status"], r["error"] or "", r["seed"], *(_cell(r["params"].get(k)) for k in keys),
            *(f.get(k) for k in figures), r["elapsed_s"], r["command"]] for r, f in zip(rows, flat)]
    return cols, out


def settings(rows: list[dict[str, Any]], keys: list[str], figures: list[str]) -> tuple[list[str], list[list[Any]]]:
    """(columns, rows) of the per-setting table: mean and 95 % interval of each figure over seeds."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["status"] == "ok":
            groups.setdefault(json.dumps([r["params"].get(k) for k in keys]), []).append(flatten(r["summary"]))
    cols = [*keys, "seeds"] + [c for f in figures for c in (f"{f} mean", f"{f} ci95")]
    out = []
    for key, flats in sorted(groups.items(), key=lambda kv: [_order(v) for v in json.loads(kv[0])]):
        line = [*(_cell(v) for v in json.loads(key)), len(flats)]
        for f in figures:
            vals = np.array([x[f] for x in flats if isinstance(x.get(f), (int, float))], float)
            mean = float(vals.mean()) if vals.size else math.nan
            half = float(t95(vals.size) * vals.std(ddof=1) / math.sqrt(vals.size)) if vals.size > 1 else math.nan
            line += [round(mean, 6), round(half, 6)]
        out.append(line)
    return cols, out


def _cell(value: Any) -> Any:
    """A setting as a table cell: lists and tables (an endpoint list) as JSON."""
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def _order(value: Any) -> tuple[int, float, str]:
    """Sort settings by value (numbers as numbers), whatever their types."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, float(value), "")
    return (0 if isinstance(value, bool) else 2, 0.0, json.dumps(value))


def write_csv(path: Path, cols: list[str], rows: list[list[Any]]) -> None:
    write_table(path, {c: [r[k] for r in rows] for k, c in enumerate(cols)}, "csv")


def write_parquet(path: Path, cols: list[str], rows: list[list[Any]]) -> bool:
    """The per-run table as Parquet, when pyarrow is installed (returns whether it was written)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    write_table(path, {c: [r[k] for r in rows] for k, c in enumerate(cols)}, "parquet")
    return True


def plots(out: Path, rows: list[dict[str, Any]], spec: SweepSpec, keys: list[str]) -> list[Path]:
    """Each headline figure against each swept parameter with more than one value, one line
    per combination of the other parameters, with 95 % intervals (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    cols, lines = settings(rows, keys, spec.headline())
    swept = [k for k in keys if len({json.dumps(r[keys.index(k)]) for r in lines}) > 1]
    made = []
    (out / "plots").mkdir(exist_ok=True)
    for figure in spec.headline():
        mi, ci = cols.index(f"{figure} mean"), cols.index(f"{figure} ci95")
        for x_key in swept:
            xi = keys.index(x_key)
            others = [k for k in keys if k != x_key]
            by_other: dict[str, list[list[Any]]] = {}
            for line in lines:
                label = ", ".join(f"{k}={line[keys.index(k)]}" for k in others) or "all"
                by_other.setdefault(label, []).append(line)
            fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
            for label, group in sorted(by_other.items()):
                group = sorted(group, key=lambda g: (isinstance(g[xi], str), g[xi]))
                xs = [g[xi] for g in group]
                numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
                pos = xs if numeric else list(range(len(xs)))
                ys = [g[mi] for g in group]
                err = [0 if math.isnan(g[ci]) else g[ci] for g in group]
                ax.errorbar(pos, ys, yerr=err, marker="o", capsize=3, label=label, linestyle="-" if numeric else "none")
                if not numeric:
                    ax.set_xticks(pos, [str(x) for x in xs])
            xs_all = [line[xi] for line in lines if isinstance(line[xi], (int, float))
                      and not isinstance(line[xi], bool)]
            if xs_all and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 20:  # rates over decades
                ax.set_xscale("log")
            ax.set_xlabel(x_key)
            ax.set_ylabel(figure)
            ax.set_title(f"{figure} against {x_key} (mean, 95 % interval over seeds)", fontsize=9)
            ax.grid(alpha=0.3)
            if len(by_other) > 1:
                ax.legend(fontsize=7)
            fig.tight_layout()
            path = out / "plots" / f"{figure}__vs__{x_key}.png".replace("/", "_")
            fig.savefig(path)
            plt.close(fig)
            made.append(path)
    return made


def write_outputs(store: Store, spec: SweepSpec) -> dict[str, Any]:
    """Write the tables (and plots) from every row the store holds; returns what was written."""
    rows = store.rows()
    keys = spec.param_keys()
    cols, lines = table(rows, keys)
    write_csv(store.out / "runs.csv", cols, lines)
    parquet = write_parquet(store.out / "runs.parquet", cols, lines)
    scols, slines = settings(rows, keys, spec.headline())
    write_csv(store.out / "settings.csv", scols, slines)
    made = plots(store.out, rows, spec, keys)
    return {"runs_csv": str(store.out / "runs.csv"), "parquet": parquet,
            "settings_csv": str(store.out / "settings.csv"), "plots": [str(p) for p in made]}
