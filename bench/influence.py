#!/usr/bin/env python3
"""Forks in bulk: ``influence``'s forks per second against one ``fork`` process per fork.

Records an instinct run (60 fish on the default 96x54 tank, seed 1, 700 ticks), then forks it
at t400 — each fork one fish given one of the fork picker's plans (its horizon varied so no two
forks are alike) and run 300 ticks to the outcome ``largest_school@700``:

* ``processes``: ``python run.py fork REC --at 400 … --ticks 300`` as its own process, one
  after another (what a user did before ``influence``) — ``--sample`` of them, per fork;
* ``1 process``: :class:`mirofish.session.influence.Forker` in this process;
* ``2 workers``: :class:`~mirofish.session.influence.Runner` with two worker processes (the
  workers' start-up included).

The table shows forks per second and the time ``--forks`` forks take (the first two
extrapolated from their samples, the last measured whole). Last line JSON.

    python bench/influence.py [--forks 1000] [--sample 10]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

AT, TICKS, OUTCOME = 400, 300, "largest_school@700"


def tasks(n: int) -> list:
    from mirofish.fish.plans import fork_plans
    from mirofish.session.influence import Task

    plans = fork_plans()
    out = []
    for k in range(n):
        fish, plan = k % 60, plans[(k // 60) % len(plans)]
        words = plan.split()
        words[-1] = str(int(words[-1]) + k // (60 * len(plans)))  # another horizon each round
        out.append(Task("alternative", AT, fish, " ".join(words)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--forks", type=int, default=1000, help="forks of the 2-worker run (default 1000)")
    ap.add_argument("--sample", type=int, default=10, help="forks timed as processes (default 10)")
    args = ap.parse_args()
    if args.forks < 4 or args.sample < 1:
        print("bench/influence.py: --forks must be at least 4 and --sample at least 1", file=sys.stderr)
        return 2
    from mirofish.session.influence import Forker, Runner

    with tempfile.TemporaryDirectory() as d:
        rec = os.path.join(d, "run.mirofish")
        subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "700", "--fish", "60", "--seed",
                        "1", "--record", rec], cwd=ROOT, check=True, capture_output=True)
        work = tasks(args.forks)
        start = time.perf_counter()
        for t in work[:args.sample]:
            subprocess.run([sys.executable, "run.py", "fork", rec, "--at", str(AT), "--fish", str(t.fish), "--plan",
                            t.plan, "--ticks", str(TICKS)], cwd=ROOT, check=True, capture_output=True)
        per_process = (time.perf_counter() - start) / args.sample
        one = Forker(rec, OUTCOME)
        n_one = min(len(work), max(4 * args.sample, 100))
        start = time.perf_counter()
        for t in work[:n_one]:
            one.run(t)
        per_one = (time.perf_counter() - start) / n_one
        one.close()
        lead = Forker(rec, OUTCOME)
        start = time.perf_counter()
        runner = Runner(lead, 2, rec, OUTCOME)
        got = runner.run(work)
        runner.close()
        whole = time.perf_counter() - start
        lead.close()
        assert len(got) == len(work)
    rows = [("processes (fork per process)", 1 / per_process, per_process * args.forks, f"{args.sample} timed"),
            ("1 process (influence)", 1 / per_one, per_one * args.forks, f"{n_one} timed"),
            ("2 workers (influence --workers 2)", len(work) / whole, whole, "measured whole")]
    print(f"{args.forks} forks of {TICKS} ticks, 60 fish, instinct (fork at t{AT}, outcome {OUTCOME})")
    print(f"{'':36s} {'forks/s':>8s} {'time for all':>13s}")
    for name, rate, total, how in rows:
        print(f"{name:36s} {rate:8.1f} {total:11.1f} s   ({how})")
    print(json.dumps({"forks": args.forks, "ticks": TICKS, "fish": 60,
                      "rows": [{"how": n, "forks_per_s": round(r, 2), "seconds_for_all": round(t, 1), "timed": h}
                               for n, r, t, h in rows]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
