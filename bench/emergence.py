#!/usr/bin/env python3
"""Schooling without a schooling rule, and jams: 60 fish, 8,000 ticks, several seeds.

For each seed, averaged over the first 100 ticks and over the last 1,000: the schooling
degree (fish with company that also move), the largest cluster's size and polarization, and
its alignment beyond chance (polarization minus what random headings give a group of that
size: a 3-fish cluster is 0.5 polarized by chance alone). Also the rest share and the
longest stuck streak (goal: ≤ 6). Last line JSON.

    python bench/emergence.py [--seeds 1 2 3 4 5] [--ticks 8000] [--decides plan|action]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.config import load_config
from mirofish.session.studies import schooling_run


def run(seed: int, ticks: int, decides: str) -> dict:
    engine, fig = schooling_run(load_config(seed=seed, **{"brain.decides": decides}), ticks)
    mean = engine.metrics.run_mean()
    s = engine.world.school
    return {"seed": seed, **{k: round(v, 3) for k, v in fig.items()},
            "rest_share": round(float(s.action_counts[:, 5].sum() / s.action_counts.sum()), 3),
            "decisions_per_fish_tick": round(float(s.decisions.sum() / (s.n * ticks)), 4),
            "largest_cluster_mean": round(mean["largest_cluster"],
                                          1), "polarization_mean": round(mean["polarization"], 3),
            "max_stuck_ticks": int(engine.world.school.max_stuck.max()),
            "conflict_rate_mean": round(mean["conflict_rate"], 4),
            "action_entropy_mean": round(mean["action_entropy"], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--ticks", type=int, default=8000)
    ap.add_argument("--decides", choices=("plan", "action"), default="plan")
    args = ap.parse_args()
    rows = []
    print(f"{'seed':>4} {'school':>13} {'cluster size':>13} {'polarization':>12} {'beyond chance':>13} "
          f"{'rest':>5} {'max stuck':>9}   (first 100 ticks → last 1,000)")
    for seed in args.seeds:
        r = run(seed, args.ticks, args.decides)
        rows.append(r)
        pair = "{:.2f}→{:.2f}".format
        print(f"{seed:>4} {pair(r['schooling_first100'], r['schooling_last1000']):>13} "
              f"{pair(r['cluster_size_first100'], r['cluster_size_last1000']):>13} "
              f"{pair(r['polarization_first100'], r['polarization_last1000']):>12} "
              f"{pair(r['alignment_first100'], r['alignment_last1000']):>13} {r['rest_share']:>5.2f} "
              f"{r['max_stuck_ticks']:>9}", flush=True)
    print(json.dumps({"emergence": rows}))


if __name__ == "__main__":
    main()
