#!/usr/bin/env python3
"""Can a model server keep up? The model brain in realtime against a paced server.

Starts the bundled OpenAI-compatible test server paced like a local CPU server (``--rate``
completions per second, one after another, each taking ``--latency`` seconds more), runs a
60-fish tank in **realtime** at 1× (2 ticks/s, the window's pace) for ``--ticks`` ticks
(240 = two simulated minutes, two minutes of wall time), and reports the share of applied
plans that came from the model rather than the instinct fallback (goal: ≥ 90 %; the instinct
plans fish swim while their first request waits are not answers and not counted), the
completions wasted, the latency, and the requests per fish-tick. ``--decides action`` runs the seed's one-action mode
for comparison. With ``--base-url``/``--model`` it measures a real server instead. The
same figure comes from the command line:

    python run.py live --headless --ticks 240 --set engine.mode=realtime --base-url URL --model NAME

    python bench/keep_up.py [--fish 60] [--ticks 240] [--rate 4] [--latency 0.3] [--decides plan|action]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.session.headless import run_headless


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fish", type=int, default=60)
    ap.add_argument("--ticks", type=int, default=240)
    ap.add_argument("--rate", type=float, default=4.0)
    ap.add_argument("--latency", type=float, default=0.3)
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--decides", choices=("plan", "action"), default="plan")
    ap.add_argument("--base-url")
    ap.add_argument("--model", default="fish-mini")
    args = ap.parse_args()
    server = None if args.base_url else TestServer(rate=args.rate, latency=args.latency).start()
    url = args.base_url or server.url
    cfg = load_config(**{"fish.count": args.fish, "brain.kind": "llm", "brain.decides": args.decides,
                         "engine.mode": "realtime", "engine.speed": args.speed,
                         "brain.small.endpoints": [{"base_url": url, "model": args.model}]})
    summary = run_headless(cfg, args.ticks, out=io.StringIO())
    if server is not None:
        server.stop()
    brain = summary["brain"]
    made = sum(summary["decisions_by_tier"].values()) - brain.get("waiting_plans", 0)  # answers to requests
    out = {"fish": args.fish, "ticks": args.ticks, "decides": args.decides, "server": url if args.base_url else
           f"test server, {args.rate:g}/s + {args.latency:g}s", "wall_s": summary["elapsed_s"],
           "decisions": made, "model_share": brain.get("model_share", 0.0),
           "fallbacks": brain.get("fallbacks", {}),
           "latency_p95_ms": summary["metrics"]["decision_latency_p95_ms"]["current"],
           "completions_wasted": brain.get("completions_wasted"), "calls": brain.get("calls"),
           "server_completions": server.completions if server is not None else None,
           "waiting_plans": brain.get("waiting_plans"), "first_model_plans": brain.get("first_model_plans"),
           "requests_per_fish_tick": brain.get("requests_per_fish_tick"),
           "mean_energy": summary["mean_energy"]}
    print(f"{out['decisions']} decisions, {out['model_share']:.1%} from the model (instinct plans while "
          f"waiting for a first answer excluded), {out['requests_per_fish_tick']} requests per fish-tick, "
          f"{out['completions_wasted']} of {out['calls']} completions wasted, "
          f"p95 latency {out['latency_p95_ms']:.0f} ms")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
