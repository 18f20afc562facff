#!/usr/bin/env python3
"""Every request counted, and what summaries cost: a model run against the bundled test server,
its JSON's request figures beside the server's own count of the chat completions it computed.

For each way a due long-term summary is asked (``brain.summaries``: ``with_decision``, the
default — inside the fish's next decision request — and ``own_request`` — a small request of its
own) and each server policy (``forager``: a model that always forages, as a tiny model does;
``scripted``: the test server's schema-following policy), prints requests per fish-tick as the
server counted them and as the JSON says (the total of every kind), the requests by kind,
summaries asked and written, and how many fish have a drift score. Last line JSON.

    python bench/requests.py [--fish 30] [--ticks 1500] [--seed 1]
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
from mirofish.session.headless import _brain_status
from mirofish.session.live import LiveSession


def run(fish: int, ticks: int, seed: int, policy: str, summaries: str) -> dict:
    with TestServer(policy=policy) as server:
        cfg = load_config(seed=seed, **{"fish.count": fish, "brain.kind": "llm", "brain.summaries": summaries,
                                        "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini"}]})
        start = time.perf_counter()
        eng = LiveSession(cfg)
        try:
            eng.run(ticks)
        finally:
            eng.close()
        computed = server.completions
    st = _brain_status(eng, ticks)
    return {"policy": policy, "summaries": summaries, "server_completions": computed,
            "server_per_fish_tick": round(computed / (fish * ticks), 4),
            "json_requests_sent": st["requests_sent"], "json_per_fish_tick": st["requests_per_fish_tick"],
            "decision_requests_per_fish_tick": st["decision_requests_per_fish_tick"],
            "by_kind": st["requests_by_kind"], "summaries_asked": st["summaries"]["asked"],
            "summaries_written": st["summaries"]["written"], "fish_with_drift_score": st["drift"]["fish_scored"],
            "model_share": st.get("model_share"), "tokens_per_model_decision": st["tokens"]["per_model_decision"],
            "wall_s": round(time.perf_counter() - start, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fish", type=int, default=30)
    ap.add_argument("--ticks", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rows = []
    print(f"{'policy':<9} {'summaries':<14} {'server/ft':>9} {'json/ft':>8} {'decisions/ft':>12} "
          f"{'asked':>6} {'written':>7} {'drift fish':>10}  by kind")
    for policy in ("forager", "scripted"):
        for summaries in ("with_decision", "own_request"):
            r = run(args.fish, args.ticks, args.seed, policy, summaries)
            rows.append(r)
            print(f"{policy:<9} {summaries:<14} {r['server_per_fish_tick']:>9.4f} {r['json_per_fish_tick']:>8.4f} "
                  f"{r['decision_requests_per_fish_tick']:>12.4f} {r['summaries_asked']:>6} "
                  f"{r['summaries_written']:>7} {r['fish_with_drift_score']:>10}  {r['by_kind']}", flush=True)
    print(json.dumps({"fish": args.fish, "ticks": args.ticks, "seed": args.seed, "runs": rows}))


if __name__ == "__main__":
    main()
