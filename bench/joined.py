#!/usr/bin/env python3
"""Many tanks as one world (mirofish/batch.py) beside the same tanks stepped one by one.

The array environment's workload: ``vector_env(T, fish.count=F)`` with random actions (the same
actions both ways), ``--steps`` steps after a warm-up of 20, stepped two ways — joined (the
default, ``join=True``) and tank by tank (``join=False``) — in ``--processes`` processes at once,
each with its share of the tanks (their seeds apart), rounds alternating between the two ways.
A figure is the tank-ticks per second of all processes together (tank-ticks done ÷ the slowest
process's time); the table shows medians of ``--rounds``. After each run every process checks
its tanks' state hashes against the other way's (the same seeds and actions): printed as
``hashes equal``. Last line JSON.

    python bench/joined.py [--tanks 64] [--fish 60] [--steps 300] [--rounds 3] [--processes 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def once(tanks: int, fish: int, steps: int, seed: int, join: bool) -> dict[str, object]:
    """One process's run: its tanks' tank-ticks per second and their state hashes."""
    sys.path.insert(0, ROOT)
    import numpy as np

    from mirofish.env import vector_env

    env = vector_env(tanks, max_steps=10**6, join=join, **{"fish.count": fish})
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    acts = [rng.integers(0, env.n_actions, (tanks, fish)) for _ in range(16)]
    for i in range(20):
        env.step(acts[i % 16])
    start = time.perf_counter()
    for i in range(steps):
        env.step(acts[i % 16])
    took = time.perf_counter() - start
    hashes = env.state_hashes()
    env.close()
    return {"seconds": took, "tank_ticks": tanks * steps, "hashes": hashes}


def run(tanks: int, fish: int, steps: int, processes: int, join: bool) -> tuple[float, list[str]]:
    """All processes at once: (tank-ticks per second together, every tank's hash in order)."""
    share = [tanks // processes + (p < tanks % processes) for p in range(processes)]
    procs = [subprocess.Popen([sys.executable, __file__, "--once", str(share[p]), str(fish), str(steps),
                               str(1000 + 100_000 * p), str(int(join))], stdout=subprocess.PIPE, text=True)
             for p in range(processes)]
    outs = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode:
            sys.exit(f"joined.py: a run failed (exit {p.returncode})")
        outs.append(json.loads(out.strip().splitlines()[-1]))
    slowest = max(o["seconds"] for o in outs)
    return sum(o["tank_ticks"] for o in outs) / slowest, [h for o in outs for h in o["hashes"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tanks", type=int, default=64)
    ap.add_argument("--fish", type=int, default=60)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--once", nargs=5, type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.once:
        t, f, s, seed, join = a.once
        print(json.dumps(once(t, f, s, seed, bool(join))))
        return
    if min(a.tanks, a.fish, a.steps, a.rounds, a.processes) < 1 or a.processes > a.tanks:
        sys.exit("joined.py: --tanks, --fish, --steps, --rounds and --processes must be at least 1, "
                 "and there must be a tank per process")
    joined, alone, equal = [], [], True
    for _ in range(a.rounds):
        rate_j, hashes_j = run(a.tanks, a.fish, a.steps, a.processes, True)
        rate_a, hashes_a = run(a.tanks, a.fish, a.steps, a.processes, False)
        joined.append(rate_j)
        alone.append(rate_a)
        equal = equal and hashes_j == hashes_a
    j, s = statistics.median(joined), statistics.median(alone)
    print(f"{a.tanks} tanks x {a.fish} fish, {a.processes} processes, {a.steps} steps, medians of {a.rounds}:")
    print(f"  joined       {j:>10,.0f} tank-ticks/s")
    print(f"  one by one   {s:>10,.0f} tank-ticks/s")
    print(f"  ratio        {j / s:>10.2f}x   hashes equal: {equal}")
    print(json.dumps({"tanks": a.tanks, "fish": a.fish, "processes": a.processes, "steps": a.steps,
                      "joined_tank_ticks_s": round(j, 1), "one_by_one_tank_ticks_s": round(s, 1),
                      "ratio": round(j / s, 3), "hashes_equal": equal,
                      "joined_runs": [round(v, 1) for v in joined], "one_by_one_runs": [round(v, 1) for v in alone]}))


if __name__ == "__main__":
    main()
