#!/usr/bin/env python3
"""The model brain against the bundled test server: calls, routing mix, tokens, latency.

Starts :class:`mirofish.brains.testserver.TestServer` on 127.0.0.1, runs a lockstep tank with
the model brain, and prints the brain's accounting (last line JSON). With ``--base-url`` and
``--model`` it measures a real server instead (Ollama, vLLM, llama.cpp server …).

    python bench/model_brain.py [--fish 30] [--ticks 200] [--base-url URL --model NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.brains.testserver import TestServer  # noqa: E402
from mirofish.config import load_config  # noqa: E402
from mirofish.engine import make_engine  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fish", type=int, default=30)
    ap.add_argument("--ticks", type=int, default=200)
    ap.add_argument("--base-url")
    ap.add_argument("--model", default="fish-mini")
    args = ap.parse_args()
    server = None if args.base_url else TestServer().start()
    url = args.base_url or server.url
    cfg = load_config(**{"fish.count": args.fish, "brain.kind": "llm", "brain.timeout_s": 300.0,
                         "brain.small.endpoints": [{"base_url": url, "model": args.model}]})
    engine = make_engine(cfg)
    start = time.perf_counter()
    engine.run(args.ticks)
    elapsed = time.perf_counter() - start
    engine.close()
    if server:
        server.stop()
    st = engine.source.status()
    m = engine.metrics.summary()
    classes = st["classes"]
    total = max(1, sum(classes.values()))
    out = {"ticks": args.ticks, "fish": args.fish, "ticks_per_sec": round(args.ticks / elapsed, 1),
           "calls": st["calls"], "decisions": st["decisions"], "fallback_rate": st["fallback_rate"],
           "fallbacks": st["fallbacks"], "class_shares": {k: round(v / total, 3) for k, v in classes.items()},
           "tokens_per_model_decision": st["tokens"]["per_model_decision"],
           "prefix_share": st["tokens"]["prefix_share"],
           "latency_p95_ms": m["decision_latency_p95_ms"]["current"], "drift": st["drift"]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
