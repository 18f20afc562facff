#!/usr/bin/env python3
"""The hexagonal tank's speed beside the square one's: microseconds per fish-tick, one run after another.

Each run is a fresh process of the default tank's rules (the instinct planner, every observer),
``--fish`` fish in its default 96×54 water after a 200-tick warm-up, square and hexagonal
(``world.grid = "hex"``), each on the compiled tick (what a user runs) and on the numpy tick
(``MIROFISH_TICK=numpy``: the reference). The runs alternate round by round (this machine's
speed drifts), seeds 1, 2, 3 …; medians. Last line JSON.

    python bench/hex_speed.py [--rounds 5] [--fish 60 240] [--ticks 1500]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATHS = {"square compiled": ("square", ""), "hex compiled": ("hex", ""), "square numpy": ("square", "numpy"),
         "hex numpy": ("hex", "numpy")}


def once(grid: str, fish: int, ticks: int, seed: int) -> float:
    """Ticks per second of one run (this process: called with --once)."""
    import time

    sys.path.insert(0, ROOT)
    from mirofish.config import load_config
    from mirofish.session import LiveSession

    live = LiveSession(load_config(seed=seed, **{"fish.count": fish, "world.grid": grid}))
    live.run(200)
    start = time.perf_counter()
    live.run(ticks)
    return ticks / (time.perf_counter() - start)


def fresh(grid: str, tick: str, fish: int, ticks: int, seed: int) -> float:
    env = {**os.environ, "MIROFISH_TICK": tick} if tick else {k: v for k, v in os.environ.items()
                                                              if k != "MIROFISH_TICK"}
    out = subprocess.run([sys.executable, __file__, "--once", grid, str(fish), str(ticks), str(seed)],
                         capture_output=True, text=True, check=True, env=env)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fish", type=int, nargs="+", default=[60, 240])
    ap.add_argument("--ticks", type=int, default=1500)
    ap.add_argument("--once", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.once:
        grid, fish, ticks, seed = a.once
        print(once(grid, int(fish), int(ticks), int(seed)))
        return
    if a.rounds < 1 or a.ticks < 1 or min(a.fish) < 1:
        ap.error("--rounds, --ticks and --fish must be at least 1")
    rows = []
    print(f"{'fish':>5} " + " ".join(f"{name:>16}" for name in PATHS) + "   hex ÷ square: compiled, numpy "
          "(µs per fish-tick; medians)")
    for fish in a.fish:
        runs: dict[str, list[float]] = {name: [] for name in PATHS}
        for r in range(a.rounds):
            for name, (grid, tick) in PATHS.items():
                runs[name].append(fresh(grid, tick, fish, a.ticks, r + 1))
        us = {name: 1e6 / statistics.median(v) / fish for name, v in runs.items()}
        row = {"fish": fish, "us_per_fish_tick": {k: round(v, 3) for k, v in us.items()},
               "hex_vs_square_compiled": round(us["hex compiled"] / us["square compiled"], 3),
               "hex_vs_square_numpy": round(us["hex numpy"] / us["square numpy"], 3),
               "ticks_per_s": {k: [round(x, 1) for x in v] for k, v in runs.items()}}
        rows.append(row)
        print(f"{fish:>5} " + " ".join(f"{us[name]:>16.3f}" for name in PATHS)
              + f"   {row['hex_vs_square_compiled']:.2f}x, {row['hex_vs_square_numpy']:.2f}x", flush=True)
    print(json.dumps({"hex_speed": rows}))


if __name__ == "__main__":
    main()
