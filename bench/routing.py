#!/usr/bin/env python3
"""Routing over a run: the share of each request class and of the large tier, read at several
run lengths of one run (a lockstep run is deterministic, so its first 600 ticks are a 600-tick
run), two tiers on the bundled test server.

Prints, per length, the classes (``brain/routing.py``: routine, foraging, conflict_social,
novel, memory_recall) as shares of the decision requests and the large tier's share. ``--set``
takes the CLI's dotted settings (e.g. ``fish.places=4`` for remembered places, which the
``memory_recall`` class needs; ``brain.novel_forget_ticks=0`` for novelty that never fades).
Last line JSON.

    python bench/routing.py [--fish 60] [--ticks 600 2000 8000] [--seed 1] [--set KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.brains.routing import ROUTES
from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.session.live import LiveSession


def shares(classes: dict[str, int]) -> dict:
    decisions = sum(classes.get(k, 0) for k in ROUTES)
    out = {k: round(classes.get(k, 0) / decisions, 3) if decisions else 0.0 for k in ROUTES}
    large = sum(classes.get(k, 0) for k, tier in ROUTES.items() if tier == "large")
    return {"decision_requests": decisions, "large_share": round(large / decisions, 3) if decisions else 0.0,
            **out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fish", type=int, default=60)
    ap.add_argument("--ticks", type=int, nargs="+", default=[600, 2000, 8000])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    rows = []
    with TestServer() as server:
        cfg = load_config(overrides=args.set, seed=args.seed, **{"fish.count": args.fish, "brain.kind": "llm",
                                             "brain.small.endpoints": [{"base_url": server.url, "model": "small"}],
                                             "brain.large.endpoints": [{"base_url": server.url, "model": "large"}]})
        eng = LiveSession(cfg)
        try:
            done = 0
            print(f"{'ticks':>6} {'requests':>8} {'large':>6}  " + " ".join(f"{k:>15}" for k in ROUTES))
            for t in sorted(args.ticks):
                eng.run(t - done)
                done = t
                row = {"ticks": t, **shares(dict(eng.source.stats.classes))}
                rows.append(row)
                print(f"{t:>6} {row['decision_requests']:>8} {row['large_share']:>6.1%}  "
                      + " ".join(f"{row[k]:>15.1%}" for k in ROUTES), flush=True)
        finally:
            eng.close()
    print(json.dumps({"routing": rows, "settings": args.set}))


if __name__ == "__main__":
    main()
