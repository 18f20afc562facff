#!/usr/bin/env python3
"""Recording cost, size and seek speed (docs/recordings.md).

1. Overhead: ticks/s of the default 60-fish tank with and without ``--record`` (best of 3).
2. Size: a 43,200-tick (6 simulated hours) recording; bytes per simulated hour.
3. Seek: random seeks in that recording from a cold player position, p50/p95/max in ms.

    python bench/recording.py [--ticks 43200] [--seeks 200]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from mirofish.config import load_config
from mirofish.observe.recording import Recorder
from mirofish.session import (
    LiveSession,
    ReplaySession,
)


def ticks_per_sec(record_to: str | None, ticks: int) -> float:
    engine = LiveSession(load_config(seed=7))
    rec = Recorder(record_to, engine.world.cfg).attach(engine) if record_to else None
    start = time.perf_counter()
    engine.run(ticks)
    if rec:
        rec.close()
    return ticks / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=43_200)
    ap.add_argument("--seeks", type=int, default=200)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mirofish-bench-")
    plain = max(ticks_per_sec(None, 4000) for _ in range(3))
    recorded = max(ticks_per_sec(os.path.join(tmp, f"o{i}.db"), 4000) for i in range(3))
    overhead = 1 - recorded / plain
    print(f"ticks/s without recording {plain:,.0f}, with {recorded:,.0f}: {overhead:.1%} slower", flush=True)

    path = os.path.join(tmp, "long.db")
    start = time.perf_counter()
    ticks_per_sec(path, args.ticks)
    record_s = time.perf_counter() - start
    size = os.path.getsize(path)
    hours = args.ticks * 0.5 / 3600
    print(f"{args.ticks} ticks recorded in {record_s:.1f} s: {size / 1e6:.2f} MB, "
          f"{size / 1e6 / hours:.2f} MB per simulated hour", flush=True)

    player = ReplaySession(path)
    rng = random.Random(1)
    times = []
    for _ in range(args.seeks):
        t = rng.randrange(0, args.ticks + 1)
        start = time.perf_counter()
        player.seek(t)
        times.append((time.perf_counter() - start) * 1000)
    p50, p95 = np.percentile(times, [50, 95])
    print(f"{args.seeks} random seeks: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {max(times):.1f} ms")
    print(json.dumps({"record_overhead": round(overhead, 4), "ticks_per_sec_plain": round(plain, 1),
                      "ticks_per_sec_recording": round(recorded, 1), "mb_per_sim_hour": round(size / 1e6 / hours, 3),
                      "seek_ms_p50": round(float(p50), 1), "seek_ms_p95": round(float(p95), 1),
                      "seek_ms_max": round(max(times), 1)}))


if __name__ == "__main__":
    main()
