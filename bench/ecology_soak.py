#!/usr/bin/env python3
"""Six simulated hours (43,200 ticks) of the default 60-fish tank: does the ecology hold?

Prints, per seed, the state every 7,200 ticks (one simulated hour) and a final JSON line
with the acceptance figures: fish below 20 energy at the end (goal: under 10 %), mean
energy, rest share (goal: under 30 %), the worst stuck streak and the schooling degree.

    python bench/ecology_soak.py [--seeds 7 1] [--ticks 43200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.config import load_config
from mirofish.session import LiveSession


def soak(seed: int, ticks: int) -> dict:
    engine = LiveSession(load_config(seed=seed))
    w, s = engine.world, engine.world.school
    start = time.perf_counter()
    worst_low = 0
    for t in range(1, ticks + 1):
        engine.step()
        if t % 600 == 0:
            worst_low = max(worst_low, w.low_energy_count())
        if t % 7200 == 0 or t == ticks:
            print(f"seed {seed}  tick {t:>6}  low<20: {w.low_energy_count():>2}"
                  f"  mean energy {s.energy.mean() / 100:5.1f}"
                  f"  schooling {engine.metrics.current()['schooling_degree']:.2f}", flush=True)
    counts = s.action_counts.sum(axis=0)
    return {
        "seed": seed, "ticks": ticks, "fish": s.n,
        "low_energy_fish_end": w.low_energy_count(), "low_energy_fish_worst": worst_low,
        "mean_energy_end": round(float(s.energy.mean()) / 100, 1),
        "rest_share": round(float(counts[5] / counts.sum()), 3),
        "max_stuck_ticks": int(s.max_stuck.max()),
        "schooling_mean": round(engine.metrics.run_mean()["schooling_degree"], 3),
        "ticks_per_sec": round(ticks / (time.perf_counter() - start), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[7, 1])
    ap.add_argument("--ticks", type=int, default=43_200)
    args = ap.parse_args()
    print(json.dumps({"soak": [soak(seed, args.ticks) for seed in args.seeds]}))


if __name__ == "__main__":
    main()
