#!/usr/bin/env python3
"""Decisions per second against a server that computes 1, 2 or 4 requests at once: the bundled
test server with ``slots`` N (each completion takes ``--service`` seconds and holds one slot,
as a llama.cpp server started with ``--parallel N`` does) and the model brain in lockstep, which
sends a tick's requests together up to the slots the server says it has (``GET /props``).
Prints decisions per wall second and the server's peak concurrency per slot count. Last line JSON.

    python bench/slots.py [--fish 24] [--ticks 120] [--service 0.25]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.session.live import LiveSession


def run(slots: int, fish: int, ticks: int, service: float) -> dict:
    with TestServer(slots=slots, latency=service) as server:
        cfg = load_config(seed=1, **{"fish.count": fish, "brain.kind": "llm",
                                     "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini"}]})
        eng = LiveSession(cfg)
        start = time.perf_counter()
        try:
            eng.run(ticks)
        finally:
            wall = time.perf_counter() - start
            eng.close()
        st = eng.source.status()
    return {"slots": slots, "model_decisions": st["model_decisions"], "requests": st["requests_sent"],
            "wall_s": round(wall, 2), "decisions_per_s": round(st["model_decisions"] / wall, 2),
            "requests_per_s": round(st["requests_sent"] / wall, 2),
            "slots_seen": st["tiers"]["small"]["endpoints"][0]["slots"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fish", type=int, default=24)
    ap.add_argument("--ticks", type=int, default=120)
    ap.add_argument("--service", type=float, default=0.25, help="seconds each completion takes")
    args = ap.parse_args()
    rows = []
    for slots in (1, 2, 4):
        r = run(slots, args.fish, args.ticks, args.service)
        rows.append(r)
        print(f"{slots} slot{'s' if slots > 1 else ' '}: {r['decisions_per_s']:>5.2f} decisions/s, "
              f"{r['requests_per_s']:>5.2f} requests/s ({r['model_decisions']} decisions in {r['wall_s']} s; "
              f"the brain saw {r['slots_seen']} slots)", flush=True)
    print(json.dumps({"fish": args.fish, "ticks": args.ticks, "service_s": args.service, "runs": rows}))


if __name__ == "__main__":
    main()
