#!/usr/bin/env python3
"""Economy of event-driven decisions (seed 003 §4.1) against a polling baseline.

Runs the same seeds and duration twice: with the event triggers of DESIGN §2 (hard timeout 12
ticks) and with every fish deciding every 4 ticks (the seed's 2-second polling). Each decision
is what would be one model call. Prints calls per fish-tick, the ratio, and the schooling
degree of both (last 1,000 ticks), then one JSON line. Uses the instinct brain, so it needs no
server; the number of calls does not depend on who answers them.

    python bench/economy.py [--seeds 1 2 3] [--ticks 6000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.config import load_config  # noqa: E402
from mirofish.observe.studies import schooling_run  # noqa: E402


def calls(seed: int, ticks: int, poll_every: int, **dotted) -> tuple[float, float]:
    engine, _, last = schooling_run(load_config(seed=seed, **{"triggers.poll_every": poll_every, **dotted}), ticks)
    s = engine.world.school
    return float(s.decisions.sum() / (s.n * ticks)), last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--ticks", type=int, default=6000)
    args = ap.parse_args()
    rows = []
    for seed in args.seeds:
        ev, ev_school = calls(seed, args.ticks, 0)
        po, po_school = calls(seed, args.ticks, 4)
        rows.append({"seed": seed, "event_calls_per_fish_tick": round(ev, 4), "poll_calls_per_fish_tick": round(po, 4),
                     "ratio": round(ev / po, 3), "schooling_event": round(ev_school, 3),
                     "schooling_poll": round(po_school, 3)})
        print(f"seed {seed}: event {ev:.3f} vs poll {po:.3f} calls/fish-tick = {ev / po:.0%}; "
              f"schooling {ev_school:.2f} vs {po_school:.2f}", flush=True)
    floor = 1 / load_config().triggers.hard_timeout
    print(json.dumps({"economy": rows, "hard_timeout_floor_ratio": round(floor / 0.25, 3)}))


if __name__ == "__main__":
    main()
