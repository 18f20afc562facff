#!/usr/bin/env python3
"""MiroFish against a Mesa implementation of the same aquarium rules, side by side.

The Mesa peer is not part of this repository: it is a yardstick written the way a Mesa user
would (``mesa`` 3.3, one agent object per fish). Give its ``bench.py`` with ``--peer`` and the
Python that has ``mesa`` installed with ``--peer-python``. For each size (60 and 240 fish on
96×54, 1,000 fish on 320×180) both run in fresh processes, alternating, ``--rounds`` times;
the table shows medians of ticks per second (tick loop only, after setup; ours after a
200-tick warm-up, with the instinct planner, the steering layer and the tick that
``mirofish.kernel`` picks — the compiled one when it was built, named in the JSON) and
their ratio. The last two columns are each side's spread, (slowest to fastest) ÷ median of
its runs: one run of ours is a fraction of a second and Mesa's several seconds, so a busy
machine shows first in ours; a row where either spread passes ``NOISY`` is marked ``noisy``
(its ratio may be the machine's, not the code's: run it again). Last line JSON.

    python bench/vs_mesa.py --peer PATH/TO/mesa_aquarium/bench.py --peer-python PATH/TO/python [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [(60, 96, 54, 3000), (240, 96, 54, 1000), (1000, 320, 180, 300)]
NOISY = 0.10  # a spread of a side's runs past which its row is marked noisy


def spread(runs: list[float]) -> float:
    """(max - min) / median of ``runs``: 0 when they all agree."""
    return (max(runs) - min(runs)) / statistics.median(runs)


def ours_once(fish: int, width: int, height: int, ticks: int, seed: int) -> float:
    sys.path.insert(0, ROOT)
    from mirofish.config import load_config
    from mirofish.session import LiveSession

    engine = LiveSession(load_config(seed=seed, **{"fish.count": fish, "world.width": width,
                                                   "world.height": height}))
    engine.run(200)
    start = time.perf_counter()
    engine.run(ticks)
    return ticks / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", help="the Mesa peer's bench.py")
    ap.add_argument("--peer-python", default=sys.executable, help="a Python with mesa installed")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ours-once", nargs=5, type=int, metavar=("FISH", "W", "H", "TICKS", "SEED"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ours_once:
        print(ours_once(*args.ours_once))
        return
    if not args.peer:
        ap.error("--peer PATH (the Mesa peer's bench.py) is required")
    rows = []
    print(f"{'fish':>5} {'grid':>8} {'mirofish':>9} {'mesa':>7} {'ratio':>6}  {'spread':>6} {'(mesa)':>6}")
    for fish, w, h, ticks in SIZES:
        ours, theirs = [], []
        for r in range(args.rounds):
            seed = 1 + r
            out = subprocess.run([sys.executable, __file__, "--ours-once", str(fish), str(w), str(h), str(ticks),
                                  str(seed)], capture_output=True, text=True, check=True)
            ours.append(float(out.stdout.split()[-1]))
            out = subprocess.run([args.peer_python, args.peer, "--fish", str(fish), "--ticks", str(ticks),
                                  "--seed", str(seed), "--grid", f"{w}x{h}"], capture_output=True, text=True,
                                 check=True)
            theirs.append(float(json.loads(out.stdout.splitlines()[-1])["ticks_per_sec"]))
        a, b = statistics.median(ours), statistics.median(theirs)
        sa, sb = spread(ours), spread(theirs)
        noisy = max(sa, sb) > NOISY
        rows.append({"fish": fish, "grid": f"{w}x{h}", "mirofish_tps": round(a, 1), "mesa_tps": round(b, 1),
                     "ratio": round(a / b, 2), "mirofish_runs": [round(v, 1) for v in ours],
                     "mesa_runs": [round(v, 1) for v in theirs], "mirofish_spread": round(sa, 3),
                     "mesa_spread": round(sb, 3), "noisy": noisy})
        print(f"{fish:>5} {w}x{h:<5} {a:>9,.0f} {b:>7,.0f} {a / b:>5.1f}x  {sa:>6.0%} {sb:>6.0%}"
              f"{'  noisy' if noisy else ''}", flush=True)
    sys.path.insert(0, ROOT)
    from mirofish import kernel

    print(json.dumps({"tick_kernel": kernel.name(), "vs_mesa": rows}))


if __name__ == "__main__":
    main()
