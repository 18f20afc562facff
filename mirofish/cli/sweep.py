"""``sweep SPEC.toml``: seeded headless runs of any scene that sweeps (the scene registry), in
local processes or on a Dask cluster, with a resumable results store, tables and plots."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import interrupted as interrupted_at_all
from .common import UsageError, int_at_least

if TYPE_CHECKING:
    from ..sweep.backends import DaskBackend, LocalBackend
    from ..sweep.results import Store
    from ..sweep.spec import RunTask, SweepSpec


def arguments(sw: argparse.ArgumentParser) -> None:
    sw.add_argument("spec", help="a sweep file (TOML; examples in assets/sweeps/)")
    sw.add_argument("--out", metavar="DIR", help="results folder (default saves/sweeps/<sweep file name>); a sweep "
                                                 "started again with the same folder resumes, skipping finished runs")
    sw.add_argument("--workers", type=int_at_least(1, 256), default=os.cpu_count() or 1,
                    help=f"local processes running at once (default: the cores, {os.cpu_count() or 1})")
    sw.add_argument("--cluster", metavar="ADDRESS", help="run on an existing Dask cluster instead, e.g. "
                                                         "tcp://127.0.0.1:8786 (pip install -e '.[cluster]')")
    sw.add_argument("--record", action="store_true",
                    help="keep each run's recording (aquarium), round log (referential) or session database "
                         "(negotiation) in OUT/runs/")
    sw.add_argument("--overwrite", action="store_true", help="start afresh in a folder that holds another sweep")
    sw.add_argument("--dry-run", action="store_true", help="print each run's single command and exit")
    sw.add_argument("--base-url", metavar="URL", help="aquarium: the model server every run asks (runs whose "
                                                      "settings say brain.kind = \"llm\")")
    sw.add_argument("--model", metavar="NAME", help="aquarium: the model on that server")


def run(args: argparse.Namespace) -> int:
    from ..kernel import compiled_tick
    from ..sweep.spec import SpecError, load_spec

    compiled_tick()  # an unknown MIROFISH_TICK is one line here, not a sweep of failed runs
    try:
        spec = load_spec(args.spec, args.base_url, args.model)
    except SpecError as exc:
        raise UsageError(f"mirofish sweep: {exc}") from None
    tasks = spec.tasks()
    if args.dry_run:
        for t in tasks:
            print(t.command_line())
        return 0
    out = Path(args.out) if args.out else Path("saves") / "sweeps" / Path(args.spec).stem
    backend, store = _open(args, out, spec)
    finished = store.done()
    todo = [t for t in tasks if t.run_id not in finished]
    record_dir = None
    if args.record:
        record_dir = str((out / "runs").resolve())
        Path(record_dir).mkdir(exist_ok=True)
    bar = _SweepProgress(len(tasks), len(tasks) - len(todo), sys.stderr.isatty() or bool(todo))
    interrupted, files, rows, unknown = _drive(backend, store, spec, todo, record_dir, bar)
    bar.finish()
    if unknown:
        print(f"mirofish sweep: {unknown}; stopped with {len(rows)} of {len(tasks)} runs done (kept in {out})",
              file=sys.stderr)
        return 2
    if interrupted:
        print(f"mirofish sweep: interrupted with {len(rows)} of {len(tasks)} runs done (kept in {out}); "
              f"run the same command again to resume", file=sys.stderr)
        return 130
    all_failed = sum(r["status"] != "ok" for r in rows)
    print(json.dumps({"runs": len(tasks), "ran_now": len(todo), "skipped_finished": len(tasks) - len(todo),
                      "failed": all_failed, "backend": backend.name, "out": str(out), **files}))
    if all_failed:
        print(f"mirofish sweep: {all_failed} run(s) failed; their errors are in {out / 'runs.csv'}", file=sys.stderr)
    return 0


def _open(args: argparse.Namespace, out: Path, spec: SweepSpec) -> tuple[LocalBackend | DaskBackend, Store]:
    """Where the runs go (local processes, or the --cluster) and the results folder they are
    kept in, both checked; a :class:`UsageError` (one line) when either cannot be used."""
    from ..sweep.backends import BackendError, DaskBackend, LocalBackend
    from ..sweep.results import ResultsError, Store

    if out.exists() and not out.is_dir():
        raise UsageError(f"mirofish sweep: --out {out} is a file, not a folder")
    if args.cluster is not None and not args.cluster.strip():
        raise UsageError("mirofish sweep: --cluster needs a Dask scheduler's address (got an empty one)")
    try:
        backend = DaskBackend(args.cluster) if args.cluster else LocalBackend(args.workers)
    except BackendError as exc:
        raise UsageError(f"mirofish sweep: {exc}") from None
    try:
        store = Store(out, spec, args.overwrite)
    except (ResultsError, OSError) as exc:
        backend.close()
        raise UsageError(f"mirofish sweep: {exc}") from None
    return backend, store


def _drive(backend: LocalBackend | DaskBackend, store: Store, spec: SweepSpec, todo: list[RunTask],
           record_dir: str | None, bar: _SweepProgress) -> tuple[bool, dict[str, Any], list[dict[str, Any]], str]:
    """The runs still to do, each row kept as it arrives, until all are done, Ctrl-C or the first
    run's summary shows that a figure the sweep file names is none of its figures; then the
    backend closed and the tables written from every row kept. Returns (interrupted, the files
    written, every row, what the unknown figures are or "")."""
    from ..sweep.results import write_outputs

    interrupted, unknown, named = False, "", list(spec.metrics or [])
    try:
        for row in backend.run(todo, record_dir):
            store.add(row)
            bar.update(row["status"] == "ok")
            if named and row["status"] == "ok":  # (the figures are a summary's: known once one run has one)
                unknown = unknown_figures(named, row["summary"])
                named = []
                if unknown:
                    break
            if interrupted_at_all():  # a Ctrl-C whose exception Python dropped (see mirofish.catch_interrupts)
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        interrupted = True
    finally:
        backend.close()
        files = write_outputs(store, spec)
        rows = store.rows()
        store.close()
    return interrupted, files, rows, unknown


def unknown_figures(names: list[str], summary: dict[str, Any]) -> str:
    """Which of a sweep file's ``metrics`` names no figure of a run's ``summary`` (flattened:
    ``metrics.school_size.mean``), with the nearest names; "" when each is one."""
    import difflib

    from ..sweep.runs import flatten

    have = flatten(summary)
    missing = [n for n in names if n not in have]
    if not missing:
        return ""
    near = difflib.get_close_matches(missing[0], list(have), n=3)
    return (f"metrics: {', '.join(repr(m) for m in missing)} {'is' if len(missing) == 1 else 'are'} not a figure of "
            f"the runs' summaries" + (f" (did you mean {', '.join(near)}?)" if near else
                                      f" (they have {len(have)}, e.g. {', '.join(list(have)[:4])})"))


class _SweepProgress:
    """Runs done, failures and the time left, on one stderr line."""

    def __init__(self, total: int, already: int, enabled: bool):
        self.total, self.done, self.failed, self.enabled = total, already, 0, enabled
        self.already, self.start = already, time.perf_counter()
        self._draw()

    def update(self, ok: bool) -> None:
        self.done += 1
        self.failed += not ok
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        ran = self.done - self.already
        elapsed = time.perf_counter() - self.start
        left = (self.total - self.done) * elapsed / ran if ran else None
        eta = "--" if left is None else f"{int(left // 60)}m{int(left % 60):02d}s"
        bar = "#" * int(30 * self.done / max(1, self.total))
        sys.stderr.write(f"\r[{bar:<30}] {self.done}/{self.total} runs  ETA {eta}  failures {self.failed}  ")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()
