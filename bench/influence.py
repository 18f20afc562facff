#!/usr/bin/env python3
"""Forks in bulk: ``influence``'s forks per second against one ``fork`` process per fork.

Records an instinct run (60 fish on the default 96x54 tank, seed 1, 700 ticks), then forks it
at t400 — each fork one fish given one of the fork picker's plans (its horizon varied so no two
forks are alike) and run 300 ticks to the outcome ``largest_school@700``:

* ``processes``: ``python run.py fork REC --at 400 … --ticks 300`` as its own process, one
  after another (what a user did before ``influence``) — ``--sample`` of them, per fork;
* ``1 process, alone``: :class:`mirofish.session.influence.Forker` in this process, each fork
  its own world (``join=1``);
* ``1 process, joined``: the same forks as ``influence`` runs them — a tick's forks stepped as
  one world, up to ``Forker.join`` at once (mirofish/session/influence_joined.py); every fork's
  outcome and final hash are checked equal to the row above's;
* ``2 workers``: :class:`~mirofish.session.influence.Runner` with two worker processes (the
  workers' start-up included), alone and joined.

The table shows forks per second and the time ``--forks`` forks take (the first three
extrapolated from their samples, the last two measured whole). ``--group-sizes 4 8 16 32``
times the joined row with at most that many forks a world. ``--ablations K`` also times
``influence``'s ablations in 1 process, alone and joined (outcomes and hashes checked equal):
K fish's every decision from t400 to t500 replaced by the random chooser, and every plan
of each type the instinct planner chooses (forage, school, explore, rest), six replicates
each (``influence``'s ``--ablate-reps`` default). Last line JSON.

    python bench/influence.py [--forks 1000] [--sample 10] [--group-sizes 4 8 16 32] [--ablations 10]
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
    ap.add_argument("--group-sizes", type=int, nargs="*", default=[], metavar="G",
                    help="also time 1 process with at most G forks stepped as one world")
    ap.add_argument("--ablations", type=int, default=0, metavar="K",
                    help="also time the ablations of K fish and of every plan type, alone and joined")
    args = ap.parse_args()
    if args.forks < 4 or args.sample < 1 or any(g < 1 for g in args.group_sizes):
        print("bench/influence.py: --forks must be at least 4, --sample and --group-sizes at least 1",
              file=sys.stderr)
        return 2
    from mirofish.session.influence import Forker, Runner
    from mirofish.session.influence_joined import MAX_TANKS

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
        n_one = min(len(work), max(4 * args.sample, 128))

        def in_process(join: int) -> tuple[float, list]:
            f = Forker(rec, OUTCOME, join=join)
            f.run(work[0])  # (warm: the recording read, the replay at the fork tick)
            start = time.perf_counter()
            got = f.run_many(work[:n_one])
            took = (time.perf_counter() - start) / n_one
            f.close()
            return took, got

        per_alone, alone = in_process(1)
        per_joined, joined = in_process(MAX_TANKS)
        assert joined == alone, "a joined fork's outcome or hash differs from the fork run alone"
        sizes = [(g, in_process(g)[0]) for g in args.group_sizes]
        ablated: dict[str, float] = {}
        if args.ablations:
            from mirofish.session.influence import Task

            def ablate(join: int) -> tuple[float, list]:
                f = Forker(rec, OUTCOME, window=(AT, AT + 100), join=join)
                goals = [f.rec.plans.code[name] for name in ("forage", "school", "explore", "rest")]  # the planner's
                todo = ([Task("ablate_fish", AT, fish, rep=r) for fish in range(args.ablations) for r in range(6)]
                        + [Task("ablate_goal", AT, goal=g, rep=r) for g in goals for r in range(6)])
                f.run(todo[0])  # (warm)
                start = time.perf_counter()
                got = f.run_many(todo)
                took = time.perf_counter() - start
                f.close()
                return len(todo) / took, got

            (ablated["alone"], a_alone), (ablated["joined"], a_joined) = ablate(1), ablate(MAX_TANKS)
            assert a_joined == a_alone, "a joined ablation's outcome or hash differs from the ablation run alone"
            ablated["forks"] = len(a_alone)

        def workers(join: int) -> tuple[float, list]:
            lead = Forker(rec, OUTCOME, join=join)
            start = time.perf_counter()
            runner = Runner(lead, 2, rec, OUTCOME)
            got = runner.run(work)
            runner.close()
            lead.close()
            assert len(got) == len(work)
            return time.perf_counter() - start, got

        (whole_alone, all_alone), (whole_joined, all_joined) = workers(1), workers(MAX_TANKS)
        assert all_joined == all_alone, "a joined fork's outcome or hash differs from the fork run alone"
    rows = [("processes (fork per process)", 1 / per_process, per_process * args.forks, f"{args.sample} timed"),
            ("1 process, each fork alone", 1 / per_alone, per_alone * args.forks, f"{n_one} timed"),
            ("1 process, joined (influence)", 1 / per_joined, per_joined * args.forks,
             f"{n_one} timed, equal to alone"),
            ("2 workers, each fork alone", len(work) / whole_alone, whole_alone, "measured whole"),
            ("2 workers, joined (--workers 2)", len(work) / whole_joined, whole_joined,
             "measured whole, all equal to alone")]
    print(f"{args.forks} forks of {TICKS} ticks, 60 fish, instinct (fork at t{AT}, outcome {OUTCOME})")
    print(f"{'':36s} {'forks/s':>8s} {'time for all':>13s}")
    for name, rate, total, how in rows:
        print(f"{name:36s} {rate:8.1f} {total:11.1f} s   ({how})")
    for g, per in sizes:
        print(f"  at most {g:3d} forks a world: {1 / per:6.1f} forks/s in 1 process")
    if ablated:
        print(f"ablations ({ablated['forks']:.0f} forks, 1 process): alone {ablated['alone']:.1f} forks/s, joined "
              f"{ablated['joined']:.1f} ({ablated['joined'] / ablated['alone']:.2f}x, all equal to alone)")
    print(json.dumps({"forks": args.forks, "ticks": TICKS, "fish": 60, "ablations": ablated,
                      "rows": [{"how": n, "forks_per_s": round(r, 2), "seconds_for_all": round(t, 1), "timed": h}
                               for n, r, t, h in rows],
                      "group_sizes": {str(g): round(1 / per, 2) for g, per in sizes}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
