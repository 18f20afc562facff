#!/usr/bin/env python3
"""A sweep's runs of one setting stepped as one world, beside the same runs one by one.

``--seeds`` headless runs of the default tank (``--fish`` fish, ``--ticks`` ticks, the instinct
planner, every observer: what ``run.py sweep`` runs), on ``--workers`` processes, two ways in
this checkout, alternating ``--rounds`` times:

* ``one by one``: each run its own ``run_task`` (what the local backend did before);
* ``joined``: ``run_tasks`` on the local backend's groups (``groups``: up to 16 runs of one
  setting a group, two groups a worker at least) — each group one world (session/joined.py).

Every run's row is checked equal both ways (every figure but the timings). Prints runs per
second, tank-ticks per second and their ratio (medians); last line JSON.

``--processes K`` also times the runs as a user runs them without ``sweep``: each its own
``python run.py live --headless`` process, ``--workers`` at a time — K of them timed, the rest
extrapolated (each process's final state hash checked equal to its joined run's). That row pays
each process's start-up (Python, numpy, the config; bytecode cached, as after an install) as well
as its ticks; the ``one by one``
row pays the ticks' per-tank cost alone, the stricter yardstick for joining.

``--settings K`` gives the runs K settings that runs joined into one world may differ by, the
live ones (``steering.alignment`` from 0 to 10 and ``food.spawn_rate`` from 0.0002 to 0.0008; run
``j`` the ``j % K``-th, seed ``1 + j // K``), each tank its own (mirofish/batch.py). A third
way is then timed, ``per setting``: groups of one setting each, as the backend joined them
before (``--seeds 64 --settings 16``: 16 groups of 4 runs, against 4 groups of 16).

    python bench/sweep_joined.py [--seeds 64] [--ticks 1000] [--fish 60] [--workers 2] [--rounds 3] [--most G]
                                 [--processes K] [--settings K]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--ticks", type=int, default=1000)
    ap.add_argument("--fish", type=int, default=60)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--most", type=int, default=None, help="runs a group at most (default the backend's, 16)")
    ap.add_argument("--processes", type=int, default=0, metavar="K",
                    help="also time K runs as their own `run.py live --headless` processes (extrapolated)")
    ap.add_argument("--settings", type=int, default=1, metavar="K",
                    help="K settings among the runs (steering.alignment, food.spawn_rate), joined across")
    args = ap.parse_args()
    if min(args.seeds, args.ticks, args.fish, args.workers, args.rounds, args.settings) < 1 or args.processes < 0:
        print("bench/sweep_joined.py: every number must be at least 1", file=sys.stderr)
        return 2
    from mirofish.sweep.runs import comparable, groups, run_task, run_tasks
    from mirofish.sweep.spec import RunTask

    if args.settings > 1 and args.processes:
        print("bench/sweep_joined.py: --processes times the default tank's runs, not --settings ones", file=sys.stderr)
        return 2
    k = args.settings
    tasks = [RunTask("aquarium", {"fish.count": args.fish, **setting(j % k, k)}, 1 + j // k, args.ticks)
             for j in range(args.seeds)]
    parts = groups(tasks, args.workers, args.most)
    ctx = multiprocessing.get_context("fork")
    times: dict[str, list[float]] = {"one by one": [], "joined": []}
    per_setting = []
    if k > 1:  # one setting a group, as the backend joined them before: the settings' runs, 16 at most
        most = 16 if args.most is None else args.most
        for i in range(k):
            same = [t for t in tasks if t.params == tasks[i].params]
            per_setting += [same[j:j + most] for j in range(0, len(same), most)]
        times["per setting"] = []
    rows: dict[str, list] = {}
    for _ in range(args.rounds):
        for how in times:
            with ProcessPoolExecutor(args.workers, mp_context=ctx) as pool:
                start = time.perf_counter()
                if how != "one by one":
                    got = [r for rs in pool.map(run_tasks, parts if how == "joined" else per_setting) for r in rs]
                else:
                    got = list(pool.map(run_task, tasks))
                times[how].append(time.perf_counter() - start)
            rows[how] = sorted(got, key=lambda r: r["run_id"])
    for how in rows:
        assert all(r["status"] == "ok" for r in rows[how])
        assert [comparable(r) for r in rows[how]] == [comparable(r) for r in rows["one by one"]], \
            f"a run's row {how} differs from the run alone"
    med = {how: statistics.median(t) for how, t in times.items()}
    if args.processes:
        med["processes"] = processes(args, rows["joined"]) * args.seeds / min(args.processes, args.seeds)
    tank_ticks = args.seeds * args.ticks
    print(f"{args.seeds} runs × {args.ticks} ticks, {args.fish} fish, {args.settings} setting(s), {args.workers} "
          f"processes, groups of {', '.join(sorted({str(len(p)) for p in parts}))}"
          + (f" (per setting {', '.join(sorted({str(len(p)) for p in per_setting}))})" if per_setting else "")
          + f"; medians of {args.rounds}")
    for how, sec in med.items():
        print(f"{how:12s} {sec:7.2f} s  {args.seeds / sec:7.1f} runs/s  {tank_ticks / sec:10,.0f} tank-ticks/s")
    ratio = med["one by one"] / med["joined"]
    print(f"joined ÷ one by one: {ratio:.2f}× (every row equal but its timings)")
    if "per setting" in med:
        print(f"joined ÷ per setting: {med['per setting'] / med['joined']:.2f}×; per setting ÷ one by one: "
              f"{med['one by one'] / med['per setting']:.2f}×")
    if "processes" in med:
        print(f"joined ÷ processes: {med['processes'] / med['joined']:.2f}× ({min(args.processes, args.seeds)} "
              f"processes timed, extrapolated to {args.seeds}; their hashes equal to the joined runs')")
    print(json.dumps({"seeds": args.seeds, "ticks": args.ticks, "fish": args.fish, "workers": args.workers,
                      "seconds": {k: round(v, 3) for k, v in med.items()},
                      "tank_ticks_per_s": {k: round(tank_ticks / v) for k, v in med.items()},
                      "settings": args.settings, "ratio": round(ratio, 2), "rows_equal": True,
                      "ratio_to_per_setting": round(med["per setting"] / med["joined"], 2) if "per setting" in med
                      else None,
                      "ratio_to_processes": round(med["processes"] / med["joined"], 2) if "processes" in med
                      else None}))
    return 0


def setting(i: int, k: int) -> dict[str, float]:
    """The ``i``-th of ``k`` settings (none when ``k`` is 1: the default tank)."""
    if k == 1:
        return {}
    f = i / (k - 1)
    return {"steering.alignment": round(10.0 * f, 3), "food.spawn_rate": round(0.0002 + 0.0006 * f, 6)}


def processes(args: argparse.Namespace, joined: list) -> float:
    """Seconds for ``--processes`` runs, each a ``run.py live --headless`` process, ``--workers`` at a
    time; each one's final state hash checked against its joined run's row."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    # Each process starts as a user's would: its modules' bytecode cached (``__pycache__``, which
    # Python writes on a first run and pip on an install). With PYTHONDONTWRITEBYTECODE set (as on
    # some CI machines) and no cache, every process would compile every module first: 0.37 s a
    # start-up instead of 0.26 s here, a slower yardstick. So the variable is dropped and one
    # untimed run writes the caches.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def one(seed: int) -> str:
        out = subprocess.run([sys.executable, "run.py", "live", "--headless", "--fish", str(args.fish), "--ticks",
                              str(args.ticks), "--seed", str(seed)], cwd=ROOT, check=True, capture_output=True,
                             text=True, env=env).stdout
        return json.loads(out.strip().splitlines()[-1])["final_state_hash"]

    one(1)  # (untimed: the bytecode caches written)
    seeds = list(range(1, min(args.processes, args.seeds) + 1))
    start = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        hashes = list(pool.map(one, seeds))
    took = time.perf_counter() - start
    by_seed = {r["seed"]: r["summary"]["final_state_hash"] for r in joined}
    assert hashes == [by_seed[s] for s in seeds], \
        "a process's final state hash differs from its joined run's"
    return took


if __name__ == "__main__":
    sys.exit(main())
