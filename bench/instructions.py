#!/usr/bin/env python3
"""Machine instructions per tick, counted by valgrind: a figure that does not move with the load.

This machine's speed moves by ±20 % from one minute to the next (``bench/vs_mesa.py`` marks such
runs ``noisy``), so a change worth a few per cent of a tick cannot be seen by a clock. Valgrind's
``callgrind`` counts the instructions the CPU runs; the same code on the same seed counts the same
to within about 0.3 % (what is left: Python's allocator and garbage collector see other addresses).
Each figure is two runs of one tank, after ``--warm`` ticks: one stopping there, one going on
``--ticks`` ticks more; their difference over ``--ticks`` is the instructions per tick of the tick
loop alone (planner, steering, metrics and history included, as ``bench/vs_mesa.py`` runs it).
Each run is about 50 times slower than without valgrind. ``--other PATH`` counts another checkout
(a ``git worktree`` of the code before a change, built there) beside this one. Needs ``valgrind``
on the PATH; last line JSON.

``--joined N`` also counts N default tanks joined into one world as a sweep's worker joins them
(``bench/batch_bound.py``'s, every observer kept and observed together:
``mirofish/session/together.py``), per tank-tick over 300 ticks. With ``--split`` it counts them
again each tank's observers in turn (as before they were observed together), then with fewer
observers — without word-and-deed, without the metrics, with none — and, for each, the compiled
tick's part (``_tick.c`` and libm's ``exp``, by
``callgrind_annotate``): what the observers cost, and what is left if they cost nothing.

    python bench/instructions.py [--fish 60 1000] [--ticks 1000] [--other PATH] [--joined N [--split]]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = {60: (96, 54), 240: (96, 54), 1000: (320, 180)}  # the tanks bench/vs_mesa.py runs


def once(root: str, fish: int, warm: int, ticks: int) -> None:
    sys.path.insert(0, root)
    if fish < 0:  # (--joined N: N default tanks joined as a sweep's worker joins them)
        sys.path.insert(0, os.path.join(root, "bench"))
        from batch_bound import joined_world

        keep = os.environ.get("MIROFISH_BENCH_KEEP", "together")  # (--split: which observers each tank keeps)
        try:
            step = joined_world(-fish, together=keep == "together")
        except TypeError:  # (another checkout's, from before the tanks were observed together)
            step = joined_world(-fish)
        engine = next(c.cell_contents for c in step.__closure__ or () if hasattr(c.cell_contents, "tanks"))
        for t in engine.tanks:
            metrics = [o for o in t.observers if getattr(o, "__qualname__", "") == "Metrics.observe"]
            if keep == "no word-and-deed":
                for m in metrics:
                    m.__self__.judge_words = False
            elif keep == "no metrics":
                t.observers = [o for o in t.observers if o not in metrics]
            elif keep == "none":
                t.observers = []
        for _ in range(warm + ticks):
            engine.step()
        return
    from mirofish.config import load_config
    from mirofish.session import LiveSession

    w, h = SIZES.get(fish, (96, 54))
    s = LiveSession(load_config(seed=1, **{"fish.count": fish, "world.width": w, "world.height": h}))
    s.run(warm)
    s.run(ticks)


def _env() -> dict[str, str]:
    # (bytecode written and read: a machine with PYTHONDONTWRITEBYTECODE would compile every module
    # in every counted run)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return dict(env, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


COMPILED = ("_tick.c", "avxintrin.h", "e_exp.c", "w_exp_compat.c")  # the compiled tick's sources (and libm's exp)


def counted(root: str, fish: int, warm: int, ticks: int, keep: str | None = None) -> int | tuple[int, int]:
    """Instructions of a whole run of ``root``'s tank (start-up, ``warm`` and ``ticks`` ticks);
    with ``keep`` (joined tanks only: which observers they keep, ``--split``) also those of the
    compiled tick (:data:`COMPILED`, by ``callgrind_annotate``)."""
    env = dict(_env(), MIROFISH_BENCH_KEEP=keep or "together")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__,
               "--once", root, str(fish), str(warm), str(ticks)]
        if shutil.which("setarch"):  # the same addresses every run
            cmd = ["setarch", "-R", *cmd]
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        total = None
        with open(out) as f:
            for line in f:
                if line.startswith(("summary:", "totals:")):
                    total = int(line.split()[1])
        if total is None:
            raise SystemExit("callgrind wrote no totals")
        if keep is None:
            return total
        listing = subprocess.run(["callgrind_annotate", "--threshold=100", out], check=True, capture_output=True,
                                 text=True).stdout
        compiled = 0
        for line in listing.splitlines():  # "  314,971,283 ( 7.16%)  mirofish/_tick.c:after._omp_fn.1 [obj]"
            m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+([^:\s]+):", line)
            if m and m.group(2).rsplit("/", 1)[-1] in COMPILED:
                compiled += int(m.group(1).replace(",", ""))
        return total, compiled


def per_tick(root: str, fish: int, warm: int, ticks: int) -> float:
    # a run without valgrind first: every module's bytecode cached (compiling one in only one of the
    # two counted runs would add its cost to the difference)
    subprocess.run([sys.executable, __file__, "--once", root, str(fish), "1", "0"], check=True, capture_output=True,
                   env=_env())
    return (counted(root, fish, warm, ticks) - counted(root, fish, warm, 0)) / ticks


# --split: the observers each joined tank keeps (together: all, observed together as a sweep's worker
# observes them; all: each tank's observers in turn, as before session/together.py)
KEEP = ("together", "all", "no word-and-deed", "no metrics", "none")


def split(n: int, warm: int, ticks: int) -> list[dict[str, object]]:
    """Instructions a tank-tick of ``n`` joined tanks with fewer and fewer of their observers, and
    the compiled tick's part of each (what batching the observers could save, counted)."""
    rows = []
    for keep in KEEP:
        (a, ca), (b, cb) = counted(ROOT, -n, warm, 0, keep), counted(ROOT, -n, warm, ticks, keep)
        rows.append({"observers": keep, "per_tank_tick": round((b - a) / ticks / n),
                     "compiled": round((cb - ca) / ticks / n)})
        r = rows[-1]
        print(f"{keep:>17} {r['per_tank_tick']:>12,} {r['compiled']:>12,}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fish", type=int, nargs="+", default=[60, 1000])
    ap.add_argument("--ticks", type=int, default=1000)
    ap.add_argument("--warm", type=int, default=200)
    ap.add_argument("--other", help="another checkout, built, counted beside this one")
    ap.add_argument("--joined", type=int, default=0, metavar="N",
                    help="also count N default tanks joined into one world (bench/batch_bound.py's), per tank-tick")
    ap.add_argument("--split", action="store_true",
                    help="with --joined N: count them with fewer and fewer observers, and the compiled part")
    ap.add_argument("--once", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.once:
        root, fish, warm, ticks = args.once
        once(root, int(fish), int(warm), int(ticks))
        return
    if not shutil.which("valgrind"):
        raise SystemExit("bench/instructions.py: valgrind is not on the PATH (apt install valgrind)")
    rows = []
    print(f"{'fish':>5} {'this':>12}" + (f" {'other':>12} {'this/other':>10}" if args.other else ""))
    for fish in args.fish:
        ticks = args.ticks if fish <= 240 else max(100, args.ticks // 4)
        row = {"fish": fish, "ticks": ticks, "this": round(per_tick(ROOT, fish, args.warm, ticks))}
        line = f"{fish:>5} {row['this']:>12,}"
        if args.other:
            row["other"] = round(per_tick(os.path.abspath(args.other), fish, args.warm, ticks))
            row["ratio"] = round(row["this"] / row["other"], 3)
            line += f" {row['other']:>12,} {row['ratio']:>10.3f}"
        print(line, flush=True)
        rows.append(row)
    if args.joined > 1:  # per tank-tick of N joined tanks, their observers kept (300 ticks after the warm-up)
        n, ticks = args.joined, 300
        row = {"fish": f"{n} joined", "ticks": ticks, "this": round(per_tick(ROOT, -n, args.warm, ticks) / n)}
        line = f"{n:>2} joined {row['this']:>12,}"
        if args.other:
            row["other"] = round(per_tick(os.path.abspath(args.other), -n, args.warm, ticks) / n)
            row["ratio"] = round(row["this"] / row["other"], 3)
            line += f" {row['other']:>12,} {row['ratio']:>10.3f}"
        print(line, flush=True)
        rows.append(row)
    parts = None
    if args.split and args.joined > 1:
        print(f"{args.joined} joined tanks, per tank-tick over 300 ticks: {'observers kept':>17} {'instructions':>12} "
              f"{'compiled':>12}")
        parts = split(args.joined, args.warm, 300)
    print(json.dumps({"instructions_per_tick": rows, "other": args.other, "split": parts}))


if __name__ == "__main__":
    main()
