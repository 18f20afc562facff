#!/usr/bin/env python3
"""The model brain against the bundled test server: calls, routing mix, tokens, latency.

Starts :class:`mirofish.brains.testserver.TestServer` on 127.0.0.1, runs a lockstep tank with
the model brain, and prints the brain's accounting (last line JSON): calls, fallbacks by
reason, tokens, latency, the model's plans by goal, how many distinct thoughts it wrote and
how many of them copy text from the prompt, how many long-term summaries it wrote, and the
fish's mean energy next to the same seed run with the embedded brain. With ``--base-url``
and ``--model`` it measures a real server instead (Ollama, vLLM, llama.cpp server …).

    python bench/model_brain.py [--fish 30] [--ticks 200] [--seed 7] [--base-url URL --model NAME]
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from collections import Counter

from mirofish.brains.base import TIER_INDEX
from mirofish.brains.prompt import PLAN_PROMPT
from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.fish.plans import GOAL_NAMES
from mirofish.session import LiveSession


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fish", type=int, default=30)
    ap.add_argument("--ticks", type=int, default=200)
    ap.add_argument("--base-url")
    ap.add_argument("--model", default="fish-mini")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    server = None if args.base_url else TestServer().start()
    url = args.base_url or server.url
    cfg = load_config(seed=args.seed, **{"fish.count": args.fish, "brain.kind": "llm",  # the defaults' waits
                         "brain.small.endpoints": [{"base_url": url, "model": args.model}]})
    engine = LiveSession(cfg)
    goals: Counter = Counter()
    thoughts: list[str] = []
    summaries = 0

    def watch(frame) -> None:
        nonlocal summaries
        for b in frame.applied:
            model = b.tier != TIER_INDEX["fallback"]
            goals.update(GOAL_NAMES[g] for g in b.goals[model])
            thoughts.extend(t for t, m in zip(b.thoughts or [], model) if m and t)
            summaries += len(b.summaries or ())

    engine.observers.append(watch)
    start = time.perf_counter()
    engine.run(args.ticks)
    elapsed = time.perf_counter() - start
    instinct = LiveSession(cfg.model_copy(update={"brain": cfg.brain.model_copy(update={"kind": "instinct"})}))
    instinct.run(args.ticks)
    prompt_text = PLAN_PROMPT.lower()
    copied = sum(1 for t in thoughts if t.lower() in prompt_text or "at most 80 characters" in t.lower())
    examples = [json.loads(line)["thought"].lower() for line in PLAN_PROMPT.splitlines() if line.startswith("{")]
    near = sum(1 for t in thoughts  # an example's words with a few letters changed
               if max(difflib.SequenceMatcher(None, t.lower(), e).ratio() for e in examples) >= 0.8)
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
           "latency_p95_ms": m["decision_latency_p95_ms"]["current"], "drift": st["drift"],
           "model_plans_by_goal": dict(goals.most_common()), "thoughts": len(thoughts),
           "distinct_thoughts": len(set(thoughts)), "thoughts_copied_from_prompt": copied,
           "thoughts_near_copies_of_an_example": near,
           "summaries_written": summaries, "sample_thoughts": sorted(set(thoughts))[:6],
           "mean_energy": round(float(engine.world.school.energy.mean() / 100), 1),
           "mean_energy_instinct_same_seed": round(float(instinct.world.school.energy.mean() / 100), 1),
           "brain_timeouts": engine.timeouts}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
