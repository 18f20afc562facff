"""Do the predator-prey preset's populations cycle? (docs/species.md)

    python bench/population_cycles.py [--seeds 1 2 3 4 5] [--ticks 6000] [--plot PNG]

Runs ``assets/presets/predator-prey.toml`` headless for each seed, counts each group's fish in the
water every 10 ticks, and reports per seed: whether both groups lasted, the minnows' peaks (the
largest count between two crossings of the run's mean, after tick 500), the period (mean ticks
between peaks), the ranges, and the lag at which the pike's curve best follows the minnows'
(cross-correlation of the two mean-removed curves, 0..1,000 ticks). A null beside it: the same
seeds with the pike not hunting (``hunts = []``; they starve), where the minnows only grow to
what the food feeds and stay near it (their range after tick 500 is the figure). With
``--plot``, the first seed's curves as a PNG (needs matplotlib).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mirofish.config import load_config
from mirofish.session import LiveSession

EVERY = 10


def curves(seed: int, ticks: int, hunting: bool = True) -> np.ndarray:
    """``(ticks // EVERY, 2)``: minnows and pike in the water every EVERY ticks."""
    cfg = load_config(seed=seed, preset="predator-prey")
    if not hunting:
        groups = [g.model_copy(update={"hunts": []}) if g.hunts else g for g in cfg.fish.groups]
        cfg = cfg.model_copy(update={"fish": cfg.fish.model_copy(update={"groups": groups})})
    s = LiveSession(cfg)
    out = np.zeros((ticks // EVERY, 2), np.int64)
    for k in range(out.shape[0]):
        s.run(EVERY)
        out[k] = s.world.population.alive(s.world)[:2]
    s.close()
    return out


def peaks(x: np.ndarray, start: int) -> list[int]:
    """Indices of the peaks of ``x`` from ``start``: the largest value between two crossings of its mean."""
    y = x[start:].astype(float)
    above = y > y.mean()
    edges = np.flatnonzero(np.diff(above.astype(int))) + 1
    return [start + a + int(np.argmax(y[a:b])) for a, b in itertools.pairwise(edges) if above[a]]


def lag(prey: np.ndarray, hunter: np.ndarray, most: int) -> int:
    a, b = prey - prey.mean(), hunter - hunter.mean()
    best = max(range(0, most + 1), key=lambda k: float(np.dot(a[: len(a) - k], b[k:])))
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    p.add_argument("--ticks", type=int, default=6000)
    p.add_argument("--plot", type=Path)
    args = p.parse_args()
    start = 500 // EVERY
    rows = []
    first = None
    for seed in args.seeds:
        c = curves(seed, args.ticks)
        null = curves(seed, args.ticks, hunting=False)
        first = first if first is not None else (c, null)
        ups = peaks(c[:, 0], start)
        lasted = bool(c[-1, 0] > 0 and c[-1, 1] > 0)
        rows.append({
            "seed": seed, "both_lasted": lasted, "minnow_peaks": len(ups),
            "period_ticks": round(float(np.diff(ups).mean()) * EVERY) if len(ups) > 1 else None,
            "minnows_range": [int(c[start:, 0].min()), int(c[start:, 0].max())],
            "pike_range": [int(c[start:, 1].min()), int(c[start:, 1].max())],
            "pike_lag_ticks": lag(c[start:, 0], c[start:, 1], 1000 // EVERY) * EVERY if lasted else None,
            "null_minnows_range": [int(null[start:, 0].min()), int(null[start:, 0].max())],
        })
        print(json.dumps(rows[-1]), flush=True)
    if args.plot and first is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        c, null = first
        t = np.arange(1, len(c) + 1) * EVERY
        fig, ax = plt.subplots(figsize=(9, 3.6), dpi=110)
        ax.plot(t, c[:, 0], color="#c9a227", label="minnows")
        ax.plot(t, c[:, 1], color="#d04020", label="pike")
        ax.plot(t, null[:, 0], color="#c9a227", alpha=0.35, ls="--", label="minnows, pike not hunting (null)")
        ax.set_xlabel("tick")
        ax.set_ylabel("fish in the water")
        ax.set_title(f"predator-prey preset, seed {args.seeds[0]}")
        ax.legend(loc="upper right", fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot)
        print(json.dumps({"plot": str(args.plot)}))


if __name__ == "__main__":
    main()
