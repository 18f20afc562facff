"""Do fish that hold more energy outlast a famine? (docs/species.md, "Reserves")

    python bench/famine.py [--seeds 1 ... 80] [--fed 400] [--ticks 1500]

Each seed: a 60-fish tank of two groups that die at 0 energy, `big` (its own `max_energy`, 200
by default) and `plain` (the tank's 100), fed as ever for ``--fed`` ticks, then no food spawns
(`food.spawn_rate` tuned to 0, as the window's slider does). Reports per group the mean energy
when the food stops and the tick each fish starved (fish alive at the end count as the last
tick), paired by seed (big − plain), with 95 % intervals. The null beside it: the same tanks
with `big` holding the tank's 100 too (``--null``), where the groups are the same but for their
ids.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mirofish.config import GroupConfig, load_config
from mirofish.session import LiveSession


def run(seed: int, fed: int, ticks: int, top: float) -> dict[str, float]:
    groups = [GroupConfig(name="big", share=0.5, max_energy=top, dies=True),
              GroupConfig(name="plain", share=0.5, dies=True)]
    s = LiveSession(load_config(seed=seed, **{"fish.count": 60, "fish.groups": groups}))
    of = np.array(s.cfg.fish.group_of())
    s.run(fed)
    w = s.world
    out = {f"{g}_energy_at_stop": float(w.school.energy[(of == k) & ~w.school.absent].mean()) / 100
           for k, g in enumerate(("big", "plain"))}
    s.engine.intervene({"kind": "tune", "key": "food.spawn_rate", "value": 0.0})
    died = np.full(of.size, ticks, np.int64)
    for t in range(fed, ticks):
        was = w.school.absent.copy()
        s.step()
        died[w.school.absent & ~was] = t
    for k, g in enumerate(("big", "plain")):
        out[f"{g}_starved_at"] = float(died[of == k].mean())
    s.close()
    return out


def _ci(v: np.ndarray) -> str:
    return f"{v.mean():.1f} ± {1.96 * v.std(ddof=1) / np.sqrt(v.size):.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 81)))
    ap.add_argument("--fed", type=int, default=400)
    ap.add_argument("--ticks", type=int, default=1500)
    ap.add_argument("--top", type=float, default=200.0, help="the big group's max_energy")
    ap.add_argument("--null", action="store_true", help="the big group holds the tank's 100 too")
    a = ap.parse_args()
    rows = [run(seed, a.fed, a.ticks, 100.0 if a.null else a.top) for seed in a.seeds]
    col = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    diff = col["big_starved_at"] - col["plain_starved_at"]
    for k, v in col.items():
        print(f"{k:>22}: {_ci(v)}")
    print(f"{'big - plain starved at':>22}: {_ci(diff)} (later on {int((diff > 0).sum())} of {diff.size} seeds, "
          f"earlier on {int((diff < 0).sum())})")
    print(json.dumps({"seeds": len(a.seeds), "top": 100.0 if a.null else a.top, "fed": a.fed,
                      **{k: round(float(v.mean()), 2) for k, v in col.items()},
                      "paired_difference": round(float(diff.mean()), 2)}))


if __name__ == "__main__":
    main()
