#!/usr/bin/env python3
"""Schooling without a schooling rule, and jams: 60 fish, 8,000 ticks, several seeds.

For each seed: the schooling degree averaged over the first 100 ticks and over the last
1,000, polarization over the run, and the longest stuck streak (goal: ≤ 6). Last line JSON.

    python bench/emergence.py [--seeds 1 2 3 4 5] [--ticks 8000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.config import load_config  # noqa: E402
from mirofish.observe.studies import schooling_run  # noqa: E402


def run(seed: int, ticks: int) -> dict:
    engine, first, last = schooling_run(load_config(seed=seed), ticks)
    mean = engine.metrics.run_mean()
    return {"seed": seed, "schooling_first100": round(first, 3),
            "schooling_last1000": round(last, 3),
            "largest_cluster_mean": round(mean["largest_cluster"], 1), "polarization_mean": round(mean["polarization"], 3),
            "max_stuck_ticks": int(engine.world.school.max_stuck.max()),
            "conflict_rate_mean": round(mean["conflict_rate"], 4), "action_entropy_mean": round(mean["action_entropy"], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--ticks", type=int, default=8000)
    args = ap.parse_args()
    rows = []
    print(f"{'seed':>4} {'first100':>9} {'last1000':>9} {'max stuck':>10}")
    for seed in args.seeds:
        r = run(seed, args.ticks)
        rows.append(r)
        print(f"{seed:>4} {r['schooling_first100']:>9.3f} {r['schooling_last1000']:>9.3f} {r['max_stuck_ticks']:>10}",
              flush=True)
    print(json.dumps({"emergence": rows}))


if __name__ == "__main__":
    main()
