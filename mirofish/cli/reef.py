"""``reef``: tanks joined by corridors (one process, local processes or a Dask cluster), its
recording, checkpoints, resume and replay, and the reef's map in the window."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .common import EXIT_BAD_INPUT, MAX_TICKS, UsageError, add_window_flags, guard_output, int_at_least, run_window


def arguments(rf: argparse.ArgumentParser) -> None:
    rf.add_argument("path", nargs="?", metavar="REEF.toml", help="the reef file (example: assets/reefs/ring.toml; "
                                                                 "its keys: docs/reef.md)")
    rf.add_argument("--headless", action="store_true", help="no window; print one JSON line at the end")
    rf.add_argument("--ticks", type=int_at_least(1, MAX_TICKS), help="ticks to run (default: the file's)")
    rf.add_argument("--workers", type=int_at_least(1, 256), default=1,
                    help="local processes stepping the tanks (default 1: all in this process)")
    rf.add_argument("--cluster", metavar="ADDRESS", help="run the tanks on a Dask cluster (tcp://HOST:PORT)")
    rf.add_argument("--record", metavar="DIR", help="record every tank and the migrations into DIR")
    rf.add_argument("--checkpoint", metavar="FILE", help="write the reef's state at every exchange (to --resume)")
    rf.add_argument("--resume", metavar="FILE", help="go on from a --checkpoint file of the same reef file")
    rf.add_argument("--replay", metavar="DIR", help="replay a recorded reef (every tank) and check its reef hash")
    rf.add_argument("--progress", action="store_true", help="headless: a progress line on stderr")
    add_window_flags(rf, aquarium=False)


def run(args: argparse.Namespace) -> int:
    from ..reef.run import ReefError

    try:
        return _run(args)
    except ReefError as exc:
        print(f"mirofish: reef: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _run(args: argparse.Namespace) -> int:
    from ..reef.record import prepare
    from ..reef.spec import load_reef

    if args.replay:
        return _replay(args)
    if not args.path:
        raise UsageError("mirofish reef: a reef file is needed (REEF.toml; try the example: python run.py reef "
                         "assets/reefs/ring.toml" + (" --headless" if args.headless else "") + "), or --replay DIR")
    if args.cluster is not None and not args.cluster.strip():
        raise UsageError("mirofish reef: --cluster needs a Dask scheduler's address (got an empty one)")
    spec = load_reef(args.path)
    _check_files(args)
    folder = prepare(args.record, args.overwrite) if args.record else None
    backend = "dask" if args.cluster else ("local" if args.workers > 1 else "inline")
    if not args.headless:
        return _window(args, spec, backend, folder)
    return _headless(args, spec, backend, folder)


def _replay(args: argparse.Namespace) -> int:
    """``--replay DIR``: every tank replayed, its reef hash checked (a replay that differs is a
    :class:`~mirofish.reef.run.ReefError` naming where)."""
    from ..reef.record import replay_reef
    from ..reef.run import ReefError

    if args.path:
        raise UsageError("mirofish reef: give a reef file or --replay DIR, not both")
    if not Path(args.replay).is_dir():
        raise UsageError(f"mirofish reef: --replay {args.replay}: not a folder (a reef recorded with --record DIR)")
    if args.ticks is not None:  # (a recorded reef replays as long as it was recorded)
        raise UsageError("mirofish reef: --ticks is for a run; --replay replays the recorded reef's ticks")
    result = replay_reef(args.replay)
    print(json.dumps(result))
    if not result["same"]:
        where = (f"tank {', '.join(result['differ'])}" if result["differ"]
                 else "the migration log (every tank's state is the same)")
        raise ReefError(f"{args.replay}: the replay differs from the recording at tick {result['tick']}: {where}")
    return 0


def _check_files(args: argparse.Namespace) -> None:
    """The files a run reads and writes, checked before it starts: --record not with --resume,
    the checkpoint outside the recording and not the file it resumes from (unless --overwrite),
    nothing else overwritten."""
    if args.resume and args.record:
        raise UsageError("mirofish reef: --record starts recordings at tick 0; it can't go with --resume")
    if args.checkpoint and args.record and _inside(args.checkpoint, args.record):
        raise UsageError(f"mirofish reef: --checkpoint {args.checkpoint} is the --record folder or in it; "
                         "keep it outside (the folder holds the recorded reef only)")
    same = bool(args.checkpoint and args.resume and _same_file(args.checkpoint, args.resume))
    if same and not args.overwrite:
        raise UsageError(f"mirofish reef: --checkpoint {args.checkpoint} is the --resume file: writing it would "
                         f"overwrite the state you resume from; give another --checkpoint FILE, or --overwrite to "
                         f"go on saving into it")
    if args.checkpoint and not same:
        guard_output(args.checkpoint, (args.path, *((args.resume,) if args.resume else ())), args.overwrite,
                     "checkpoint")


def _window(args: argparse.Namespace, spec: Any, backend: str, folder: Any) -> int:
    """The reef in the window (it steps the reef in this process)."""
    if backend != "inline":
        raise UsageError("mirofish reef: the window steps the reef in its own process (no --workers or "
                         "--cluster; use --headless for those)")
    from ..ui.scenes.reef import ReefScene

    return run_window(ReefScene(spec, str(folder) if folder else None), args)


def _inside(path: str, folder: str) -> bool:
    from pathlib import Path

    p, f = Path(path).resolve(), Path(folder).resolve()
    return p == f or f in p.parents


def _headless(args: argparse.Namespace, spec: Any, backend: str, folder: Any) -> int:
    from ..reef.record import write
    from ..reef.run import Reef, ReefError

    reef = Reef(spec, backend, args.workers, args.cluster, str(folder) if folder else None, args.checkpoint,
                args.resume)
    ticks = args.ticks or spec.ticks

    def progress(r: Reef) -> None:
        if args.progress:
            print(f"\rt{r.tick}/{ticks} migrations {len(r.log)}", end="", file=sys.stderr, flush=True)

    if reef.tick >= ticks and reef.tick > 0:  # resumed at or past the end: nothing to run
        reef.close()
        raise UsageError(f"mirofish reef: the checkpoint {args.resume} is at tick {reef.tick} already"
                         + (f", past tick {ticks}" if reef.tick > ticks else "") + ": give --ticks past it to go on")
    try:
        summary = reef.run(ticks, progress)
    except ReefError as exc:
        saved = bool(args.checkpoint) and Path(args.checkpoint).is_file()  # (none before the first exchange)
        hint = (f"; resume from the last exchange with --resume {args.checkpoint} (--checkpoint {args.checkpoint} "
                f"--overwrite to go on saving into it)" if saved
                else "; no exchange was checkpointed yet: run it again from the start" if args.checkpoint
                else "; run with --checkpoint FILE to be able to resume")
        raise ReefError(f"{exc} at tick {reef.tick}{hint}") from None
    finally:
        reef.close()
        if args.progress:
            print(file=sys.stderr)
    if folder is not None:
        write(folder, reef, summary)
    print(json.dumps(summary))
    return 0


def _same_file(a: str, b: str) -> bool:
    """The same path, or two names of one file (a link, another spelling)."""
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)
