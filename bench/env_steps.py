#!/usr/bin/env python3
"""The PettingZoo environment's step against the headless tick, 60 fish (docs/environment.md).

Three timings, each the best of ``--repeat`` runs of ``--steps`` steps after a 100-step warm-up,
one core:

* **headless tick** — ``LiveSession.run``: the default tank with the instinct brain (triggers,
  planner, steering, arbiter, physics, metrics), as ``run.py live --headless``;
* **env step, random actions** — ``env.step`` with a dict of 60 random actions drawn from each
  agent's ``action_space(agent).sample()`` (the way a PettingZoo user writes a random policy);
* **env step, actions given** — ``env.step`` with actions drawn beforehand (numpy), the
  environment's own cost.

The goal: 1,000 random-action steps of 60 fish cost at most 2× the headless tick. Prints a
table and, last, one JSON line.

    python bench/env_steps.py [--steps 1000] [--repeat 3] [--text]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.config import load_config
from mirofish.env import parallel_env
from mirofish.session import LiveSession

FISH = 60


def headless(steps: int, seed: int) -> float:
    s = LiveSession(load_config(seed=seed, **{"fish.count": FISH}))
    s.run(100)
    t = time.perf_counter()
    s.run(steps)
    dt = time.perf_counter() - t
    s.close()
    return dt


def env_run(steps: int, seed: int, sample: bool, text: bool) -> float:
    env = parallel_env(max_steps=steps + 100, text=text, **{"fish.count": FISH})
    env.reset(seed=seed)
    for a in env.possible_agents:
        env.action_space(a).seed(seed)
    drawn = np.random.default_rng(seed).integers(0, 6, (steps + 100, FISH))
    for k in range(100):
        env.step(dict(zip(env.agents, drawn[k].tolist())))
    t = time.perf_counter()
    for k in range(100, steps + 100):
        if sample:
            env.step({a: env.action_space(a).sample() for a in env.agents})
        else:
            env.step(dict(zip(env.agents, drawn[k].tolist())))
    dt = time.perf_counter() - t
    env.close()
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--text", action="store_true", help="also time observations with the model's text")
    args = ap.parse_args()
    rows = {
        "headless tick": min(headless(args.steps, 7 + r) for r in range(args.repeat)),
        "env step, random actions": min(env_run(args.steps, 7 + r, True, False) for r in range(args.repeat)),
        "env step, actions given": min(env_run(args.steps, 7 + r, False, False) for r in range(args.repeat)),
    }
    if args.text:
        rows["env step, with text"] = min(env_run(args.steps, 7 + r, False, True) for r in range(args.repeat))
    base = rows["headless tick"]
    print(f"{'60 fish, ' + str(args.steps) + ' steps':<28}{'seconds':>9}{'ms/step':>9}{'× tick':>8}")
    for name, dt in rows.items():
        print(f"{name:<28}{dt:>9.3f}{dt / args.steps * 1000:>9.3f}{dt / base:>8.2f}")
    ratio = rows["env step, random actions"] / base
    print(json.dumps({"fish": FISH, "steps": args.steps,
                      "seconds": {k: round(v, 4) for k, v in rows.items()},
                      "random_step_vs_tick": round(ratio, 2), "goal": 2.0, "met": ratio <= 2.0}))


if __name__ == "__main__":
    main()
