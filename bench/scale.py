#!/usr/bin/env python3
"""The cost curve: ticks per second, µs per fish-tick, setup time and peak memory, from 60 to
100,000 fish, the tank growing with the fish.

Sizes (the default tank's density for 60 and 240 fish; the tanks of docs/speed.md for 1,000 and
10,000; the largest tank the config allows for 100,000): 60 fish on 96×54, 240 on 192×108,
1,000 on 320×180, 10,000 on 1,000×600, 100,000 on 2,000×2,000, with plants and rocks in
proportion to the area. Each size runs in a fresh process (its peak RSS is its own): build the
live tank (setup: config to first tick), warm up, then time the full headless loop (triggers,
the instinct planner, steering, arbiter, physics, metrics). One process: up to 4,095 fish on one
core; from 4,096 fish the compiled steering and after-tick loops split over the cores
(OpenMP, when the extension was built with it; ``OMP_NUM_THREADS=1`` keeps one). The
``threads`` column says which. Prints a table, then one JSON line.

    .venv/bin/python bench/scale.py [--sizes 60 240 1000 10000 100000] [--seconds 20] [--plot PNG]

``--plot`` draws ticks per second and µs per fish-tick against the fish, log-log (needs the
``plots`` extra, matplotlib).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TANKS = {60: (96, 54), 240: (192, 108), 1000: (320, 180), 10_000: (1000, 600), 100_000: (2000, 2000)}

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from mirofish.config import load_config
from mirofish.session import LiveSession
fish, width, height, budget = {fish}, {width}, {height}, {seconds}
area = width * height / (96 * 54)
start = time.perf_counter()
cfg = load_config(seed=7, **{{"fish.count": fish, "world.width": width, "world.height": height,
                            "world.plant_patches": min(200, round(6 * area)),
                            "world.rocks": min(200, round(5 * area))}})
live = LiveSession(cfg)
from mirofish import kernel
k = kernel.built()
threads = k.THREADS if k is not None and fish >= k.PARALLEL_FISH and live.world.tick_kernel == "compiled" else 1
setup = time.perf_counter() - start
live.run(3)  # warm-up (first metrics, caches)
done, start = 0, time.perf_counter()
while time.perf_counter() - start < budget or done < 3:
    live.run(1)
    done += 1
elapsed = time.perf_counter() - start
print(json.dumps({{"fish": fish, "tank": f"{{width}}x{{height}}", "setup_s": round(setup, 3), "ticks": done,
                  "ticks_per_s": round(done / elapsed, 2), "us_per_fish_tick": round(elapsed / done / fish * 1e6, 2),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "tick_kernel": live.world.tick_kernel, "threads": threads}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(TANKS))
    ap.add_argument("--seconds", type=float, default=20.0, help="time each size's loop for about this long")
    ap.add_argument("--plot", metavar="PNG", help="a log-log plot of the curve (matplotlib)")
    args = ap.parse_args()
    if args.plot:
        try:
            import matplotlib
        except ImportError:
            sys.exit("scale.py: --plot needs matplotlib: pip install -e '.[plots]'")
        matplotlib.use("Agg")
    rows = []
    print(f"{'fish':>8} {'tank':>10} {'setup s':>8} {'ticks/s':>9} {'µs/fish-tick':>13} {'peak MB':>8} {'threads':>8}")
    for fish in args.sizes:
        width, height = TANKS[fish]
        code = CHILD.format(root=ROOT, fish=fish, width=width, height=height, seconds=args.seconds)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
        if out.returncode != 0:
            print(f"{fish:>8} failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
            continue
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"{fish:>8} {row['tank']:>10} {row['setup_s']:>8.2f} {row['ticks_per_s']:>9.1f} "
              f"{row['us_per_fish_tick']:>13.2f} {row['peak_rss_mb']:>8.0f} {row['threads']:>8}", flush=True)
    print(json.dumps({"scale": rows}))
    if args.plot and rows:
        plot(rows, args.plot)


def plot(rows: list[dict], path: str) -> None:
    """Ticks per second and µs per fish-tick against the fish, both axes logarithmic."""
    import matplotlib.pyplot as plt

    fish = [r["fish"] for r in rows]
    split = [r for r in rows if r.get("threads", 1) > 1]  # sizes whose compiled loops ran on several cores
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.loglog(fish, [r["ticks_per_s"] for r in rows], "o-")
    a.set(xlabel="fish (tank grows with them)", ylabel="ticks per second", title="speed")
    b.loglog(fish, [r["us_per_fish_tick"] for r in rows], "o-", color="tab:orange")
    b.set(xlabel="fish (tank grows with them)", ylabel="µs per fish-tick", title="cost per fish")
    cost = [r["us_per_fish_tick"] for r in rows]
    b.set_ylim(min(cost) / 2, max(cost) * 2)  # (every point in view, whatever the machine)
    for ax, key in ((a, "ticks_per_s"), (b, "us_per_fish_tick")):
        ax.grid(True, which="both", alpha=0.3)
        if split:
            ax.plot([r["fish"] for r in split], [r[key] for r in split], "o", mfc="white", color="black",
                    label=f"steering and after-tick on {split[0]['threads']} cores")
            ax.legend(loc="upper right" if key == "us_per_fish_tick" else "lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
