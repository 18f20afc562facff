#!/usr/bin/env python3
"""Economy of plans (and of the seed's event-driven actions) against 4-tick polling.

Runs the same seeds and duration three ways, with the embedded brain (the number of
decisions does not depend on who answers them; each decision would be one model call):

* **plan** — the default: a decision is a standing plan (``brain.decides = "plan"``);
* **action** — the seed's mode: one action per decision, event triggers, 12-tick timeout;
* **poll** — every fish decides every 4 ticks (the seed's 2-second polling baseline).

Prints, per seed, decisions per fish-tick of each, the plan/poll ratio (goal: ≤ 0.03 per
fish-tick, ≤ 12 % of polling) and both modes' school figures over the last 1,000 ticks
(schooling degree — fish with company that also move — and the largest cluster's
polarization). Last line JSON.

With ``--ablate``, the one-action mode's triggers one by one instead: the source design's four
(low energy, food newly in view, neighbour count changed, the 12-tick hard timeout), this tank's
five (plus a refused move), and each left out, against 4-tick polling — where the calls come
from, and why the source's "18 % of polling" cannot hold with its own 12-tick timeout (a fish
that decides at least every 12 ticks asks ≥ 1/12 = 0.083 times per fish-tick, 33 % of polling
every 4 ticks, before any event).

    python bench/economy.py [--seeds 1 2 3] [--ticks 6000] [--ablate]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.config import load_config
from mirofish.session.studies import schooling_run

MODES = {"plan": {}, "action": {"brain.decides": "action"},
         "poll": {"brain.decides": "action", "triggers.poll_every": 4}}
_ACTION = {"brain.decides": "action"}
_FOUR = {**_ACTION, "triggers.action_failed": False}  # the source design's four triggers
ABLATIONS = {
    "five triggers (this tank)": _ACTION,
    "the source's four": _FOUR,
    "four, no neighbours changed": {**_FOUR, "triggers.neighbours_changed": False},
    "four, no food in view": {**_FOUR, "triggers.food_rose": False},
    "timeout + low energy only": {**_FOUR, "triggers.neighbours_changed": False, "triggers.food_rose": False},
    "four, timeout 24": {**_FOUR, "triggers.hard_timeout": 24},
    "poll every 4": MODES["poll"],
}


def run(seed: int, ticks: int, dotted: dict) -> dict:
    engine, fig = schooling_run(load_config(seed=seed, **dotted), ticks)
    s = engine.world.school
    return {"calls_per_fish_tick": round(float(s.decisions.sum() / (s.n * ticks)), 4),
            "schooling_last1000": round(fig["schooling_last1000"], 3),
            "polarization_last1000": round(fig["polarization_last1000"], 3),
            "mean_energy": round(float(s.energy.mean() / 100), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--ticks", type=int, default=6000)
    ap.add_argument("--ablate", action="store_true", help="the one-action mode's triggers one by one")
    args = ap.parse_args()
    if args.ablate:
        ablate(args.seeds, args.ticks)
        return
    rows = []
    print(f"{'seed':>4} {'plan':>7} {'action':>7} {'poll':>7} {'plan/poll':>9}   schooling plan/action   "
          f"polarization plan/action")
    for seed in args.seeds:
        r = {"seed": seed, **{mode: run(seed, args.ticks, dotted) for mode, dotted in MODES.items()}}
        r["plan_over_poll"] = round(r["plan"]["calls_per_fish_tick"] / r["poll"]["calls_per_fish_tick"], 4)
        rows.append(r)
        print(f"{seed:>4} {r['plan']['calls_per_fish_tick']:>7.4f} {r['action']['calls_per_fish_tick']:>7.4f} "
              f"{r['poll']['calls_per_fish_tick']:>7.4f} {r['plan_over_poll']:>9.1%}   "
              f"{r['plan']['schooling_last1000']:>9.2f} / {r['action']['schooling_last1000']:<9.2f}   "
              f"{r['plan']['polarization_last1000']:>9.2f} / {r['action']['polarization_last1000']:<9.2f}", flush=True)
    print(json.dumps({"economy": rows}))


def ablate(seeds: list[int], ticks: int) -> None:
    rows = {name: [run(seed, ticks, dotted)["calls_per_fish_tick"] for seed in seeds]
            for name, dotted in ABLATIONS.items()}
    poll = sum(rows["poll every 4"]) / len(seeds)
    print(f"{'one-action mode, triggers':<30} " + " ".join(f"{'seed ' + str(s):>8}" for s in seeds)
          + f" {'mean':>7} {'of poll':>8}")
    for name, per_seed in rows.items():
        mean = sum(per_seed) / len(per_seed)
        print(f"{name:<30} " + " ".join(f"{v:>8.4f}" for v in per_seed) + f" {mean:>7.4f} {mean / poll:>8.1%}")
    print(json.dumps({"ablation": rows, "seeds": seeds, "ticks": ticks}))


if __name__ == "__main__":
    main()
