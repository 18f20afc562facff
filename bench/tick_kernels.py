#!/usr/bin/env python3
"""The compiled tick against the numpy tick: same worlds, and how much faster.

For each seed, runs the default tank (``--fish`` fish) for ``--ticks`` ticks twice in this
process — once on the compiled tick (``mirofish/_tick.c``), once on the numpy reference —
comparing the state hash every ``--every`` ticks, and times both (tick loop only). Prints a
row per seed and, last, one JSON line. ``tests/test_kernel.py`` compares every tick over
shorter runs; this covers long ones.

    python bench/tick_kernels.py [--seeds 1 2 3 4 5] [--ticks 8000] [--every 50] [--fish 60]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish import kernel
from mirofish.config import load_config
from mirofish.session import LiveSession


def run(seed: int, fish: int, ticks: int, every: int, compiled: bool) -> tuple[list[str], float]:
    s = LiveSession(load_config(seed=seed, **{"fish.count": fish}))
    if not compiled:
        s.world._kernel = None
    hashes, spent = [], 0.0
    for _ in range(0, ticks, every):
        start = time.perf_counter()
        s.run(every)
        spent += time.perf_counter() - start
        hashes.append(s.state_hash())
    return hashes, ticks / spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--ticks", type=int, default=8000)
    ap.add_argument("--every", type=int, default=50)
    ap.add_argument("--fish", type=int, default=60)
    args = ap.parse_args()
    if kernel.compiled_tick() is None:
        sys.exit("tick_kernels: the compiled tick is not built (pip install -e .) or MIROFISH_TICK=numpy is set")
    rows = []
    print(f"{'seed':>4} {'compiled t/s':>13} {'numpy t/s':>10} {'speed-up':>9}  same worlds")
    for seed in args.seeds:
        fast, fast_tps = run(seed, args.fish, args.ticks, args.every, True)
        ref, ref_tps = run(seed, args.fish, args.ticks, args.every, False)
        differ = next((i for i, (a, b) in enumerate(zip(fast, ref)) if a != b), None)
        first = None if differ is None else (differ + 1) * args.every
        rows.append({"seed": seed, "compiled_tps": round(fast_tps, 1), "numpy_tps": round(ref_tps, 1),
                     "speedup": round(fast_tps / ref_tps, 2), "same": differ is None, "first_difference": first,
                     "final_hash": fast[-1]})
        same = "yes" if differ is None else f"NO (first by tick {first})"
        print(f"{seed:>4} {fast_tps:>13,.0f} {ref_tps:>10,.0f} {fast_tps / ref_tps:>8.2f}x  {same}", flush=True)
    print(json.dumps({"fish": args.fish, "ticks": args.ticks, "tick_kernels": rows}))


if __name__ == "__main__":
    main()
