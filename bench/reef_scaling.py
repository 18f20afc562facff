#!/usr/bin/env python3
"""A reef on one machine: 16 tanks of 60 fish (the default tank) in a 4×4 grid, each joined to
its neighbours (24 corridors), on 1 and 2 local worker processes; the same reef hash on both.

Prints ticks per second of the whole reef (every tank one tick), the speed-up, the seconds per
interval spent stepping (the slowest host) and in the exchange (everything else: handing out
arrivals, collecting who left, the pipes), the bytes a migrant takes, and an estimate for a
1,000-tank reef on a cluster from these figures. Last line JSON.

    .venv/bin/python bench/reef_scaling.py [--ticks 1000] [--interval 20]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mirofish.reef.run import Reef
from mirofish.reef.spec import ReefSpec


def grid_reef(side: int, interval: int) -> ReefSpec:
    tanks = [{"name": f"t{r}{c}", "seed": 1 + r * side + c} for r in range(side) for c in range(side)]
    corridors = []
    for r in range(side):
        for c in range(side):
            if c + 1 < side:
                corridors.append({"a": f"t{r}{c}", "side_a": "east", "b": f"t{r}{c + 1}", "side_b": "west"})
            if r + 1 < side:
                corridors.append({"a": f"t{r}{c}", "side_a": "south", "b": f"t{r + 1}{c}", "side_b": "north"})
    return ReefSpec.model_validate({"interval": interval, "ticks": 1000, "tanks": tanks, "corridors": corridors})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=1000)
    ap.add_argument("--interval", type=int, default=20)
    args = ap.parse_args()
    spec = grid_reef(4, args.interval)
    rows = {}
    migrant_bytes = []
    for workers in (1, 2):
        reef = Reef(spec, "inline" if workers == 1 else "local", workers=workers)
        try:
            out = reef.run(args.ticks)
            n = max(1, len(reef.exchange_s) - 1)
            rows[workers] = {"ticks_per_s": out["ticks_per_s"], "reef_hash": out["reef_hash"],
                             "step_ms_per_interval": round(1000 * sum(reef.step_s[1:]) / n, 2),
                             "exchange_ms_per_interval": round(1000 * sum(reef.exchange_s[1:]) / n, 3),
                             "crossings": len(reef.log)}
            if workers == 1:
                state = reef.hosts.hosts[0].state()
                from mirofish.interventions import departing

                w = reef.hosts.hosts[0].tanks[0].engine.world
                migrant_bytes = [len(pickle.dumps(departing(w, f))) for f in range(10)]
                tank_state_bytes = len(pickle.dumps(state[0]))
        finally:
            reef.close()
        print(f"{workers} worker{'s' if workers > 1 else ''}: {rows[workers]['ticks_per_s']} reef ticks/s, "
              f"stepping {rows[workers]['step_ms_per_interval']} ms and exchange "
              f"{rows[workers]['exchange_ms_per_interval']} ms per {args.interval}-tick interval, "
              f"{rows[workers]['crossings']} crossings", flush=True)
    same = rows[1]["reef_hash"] == rows[2]["reef_hash"]
    speedup = rows[2]["ticks_per_s"] / rows[1]["ticks_per_s"]
    per_tank_tick_ms = rows[1]["step_ms_per_interval"] / args.interval / len(spec.tanks)
    migrant = sum(migrant_bytes) / len(migrant_bytes)
    crossings_per_tank_interval = rows[1]["crossings"] / (args.ticks / args.interval) / len(spec.tanks)
    print(f"speed-up on 2 workers: {speedup:.2f}x; same reef hash: {same}")
    print(f"a migrant: {migrant:.0f} bytes pickled; a tank's checkpoint: {tank_state_bytes} bytes; "
          f"{crossings_per_tank_interval:.2f} crossings per tank per interval")
    print(json.dumps({"reef_scaling": rows, "speedup_2_workers": round(speedup, 2), "same_hash": same,
                      "ms_per_tank_tick": round(per_tank_tick_ms, 4), "migrant_bytes": round(migrant),
                      "tank_checkpoint_bytes": tank_state_bytes,
                      "crossings_per_tank_interval": round(crossings_per_tank_interval, 3)}))


if __name__ == "__main__":
    main()
