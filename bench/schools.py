#!/usr/bin/env python3
"""Travelling schools in the schooling-demo preset: seeds 1–5 (the acceptance figures of docs/schools.md).

Per seed: the largest moving school at tick 240 (size, polarization inside it, share of its
fish that moved in the last 10 ticks), how far its members' centre travels over the next 100
ticks, the largest moving school at tick 340 (size, polarization), and the splits and merges
of schools over 2,000 ticks. Goals: size ≥ 15,
polarization ≥ 0.6, moving ≥ 0.7, travel ≥ 15 cells. Last line JSON.

    python bench/schools.py [--seeds 1 2 3 4 5] [--preset schooling-demo] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.config import load_config
from mirofish.session.studies import demo_run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--preset", default="schooling-demo")
    ap.add_argument("--ticks", type=int, default=2000)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    rows = []
    print(f"{'seed':>4} {'size':>5} {'polar':>6} {'moving':>7} {'travel':>7} {'net':>5} {'@340':>5} {'polar':>6} "
          f"{'splits':>7} {'merges':>7} {'energy':>7}")
    for seed in args.seeds:
        r = {"seed": seed, **demo_run(load_config(preset=args.preset, overrides=args.set, seed=seed), ticks=args.ticks)}
        rows.append(r)
        print(f"{seed:>4} {r['school_size']:>5.0f} {r['school_polarization']:>6.2f} {r['school_moving']:>7.2f} "
              f"{r['travel_next_100']:>7.1f} {r['displacement_next_100']:>5.1f} {r.get('later_school_size', 0):>5.0f} "
              f"{r.get('later_school_polarization', 0):>6.2f} {r['splits']:>7} {r['merges']:>7} "
              f"{r['mean_energy']:>7.1f}", flush=True)
    print(json.dumps({"schools": rows}))


if __name__ == "__main__":
    main()
