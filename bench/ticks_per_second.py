#!/usr/bin/env python3
"""Headless ticks per second at 60, 240 and 1,000 fish (the last on a 256×144 tank).

Each row: build the default tank with that many fish, warm up 200 ticks, then time
``--ticks`` ticks of the full loop (triggers, the instinct planner, steering, arbiter,
physics, metrics), one core, best of ``--repeat`` runs. Prints a table and, last, one JSON
line. ``bench/vs_mesa.py`` runs the same sizes side by side with a Mesa implementation.

    python bench/ticks_per_second.py [--ticks 3000] [--repeat 3]
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

CASES = [
    ("60 fish, 96x54", {"fish.count": 60}),
    ("240 fish, 96x54", {"fish.count": 240}),
    ("1000 fish, 256x144", {"fish.count": 1000, "world.width": 256, "world.height": 144,
                            "world.plant_patches": 16, "world.rocks": 14}),
]


def measure(dotted: dict, ticks: int, repeat: int) -> float:
    best = 0.0
    for r in range(repeat):
        engine = LiveSession(load_config(seed=7 + r, **dotted))
        engine.run(200)
        start = time.perf_counter()
        engine.run(ticks)
        best = max(best, ticks / (time.perf_counter() - start))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    results = {}
    print(f"{'case':<22}{'ticks/s':>10}")
    for name, dotted in CASES:
        tps = measure(dotted, args.ticks if dotted["fish.count"] < 1000 else max(300, args.ticks // 6), args.repeat)
        results[name] = round(tps, 1)
        print(f"{name:<22}{tps:>10,.0f}", flush=True)
    print(json.dumps({"ticks_per_sec": results}))


if __name__ == "__main__":
    main()
