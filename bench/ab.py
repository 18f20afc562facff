#!/usr/bin/env python3
"""Two checkouts of MiroFish side by side: is the tick faster or slower than before a change?

This machine's speed drifts by 10–30 % from one hour to the next, so a figure measured today
cannot be set against one from yesterday. This script runs the tick loop of this checkout and
of ``--other`` (another checkout: a ``git worktree add /tmp/before <commit>``, its compiled tick
built there with ``python setup.py build_ext --inplace``) in fresh processes, alternating, for
each size, and prints the medians of ticks per second and their ratio (this ÷ other). Each run is
``bench/vs_mesa.py --ours-once`` of its own checkout: the default tank's rules, the instinct
planner, every observer, after a 200-tick warm-up; seeds 1, 2, 3, … by round. Last line JSON.

    python bench/ab.py --other /tmp/before [--rounds 5] [--sizes 60 240 1000 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TANKS = {60: (96, 54, 3000), 240: (96, 54, 1000), 1000: (320, 180, 300), 10000: (1000, 600, 150),
         100000: (2000, 2000, 10)}


def once(checkout: str, fish: int, seed: int) -> float:
    """Ticks per second of one fresh run of ``checkout``'s tick loop."""
    w, h, ticks = TANKS[fish]
    out = subprocess.run([sys.executable, os.path.join(checkout, "bench", "vs_mesa.py"), "--ours-once", str(fish),
                          str(w), str(h), str(ticks), str(seed)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--other", required=True, help="the other checkout (its compiled tick built)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[60, 240, 1000], choices=sorted(TANKS))
    a = ap.parse_args()
    other = os.path.abspath(a.other)
    if not os.path.isfile(os.path.join(other, "bench", "vs_mesa.py")):
        ap.error(f"--other {other}: not a MiroFish checkout (no bench/vs_mesa.py)")
    rows = []
    print(f"{'fish':>7} {'other':>10} {'this':>10}  ratio   (medians of {a.rounds} alternating runs, ticks/s)")
    for fish in a.sizes:
        mine, theirs = [], []
        for r in range(a.rounds):
            theirs.append(once(other, fish, r + 1))
            mine.append(once(ROOT, fish, r + 1))
        m, t = statistics.median(mine), statistics.median(theirs)
        rows.append({"fish": fish, "this_tps": round(m, 1), "other_tps": round(t, 1), "ratio": round(m / t, 3),
                     "this_runs": [round(x, 1) for x in mine], "other_runs": [round(x, 1) for x in theirs]})
        print(f"{fish:>7} {t:>10,.0f} {m:>10,.0f}  {m / t:.2f}x", flush=True)
    print(json.dumps({"other": other, "ab": rows}))


if __name__ == "__main__":
    main()
