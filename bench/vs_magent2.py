#!/usr/bin/env python3
"""The environments side by side with MAgent2 in one run: agent-steps per second, random actions.

MAgent2's ``battle_v4`` (a C++ gridworld behind a PettingZoo ``ParallelEnv``; ``map_size`` 45 has
162 agents, 80 has 512) stepped with a dict of ``action_space(agent).sample()`` per agent — the
way a PettingZoo user writes a random policy — against, with the same number of agents:

* ``mirofish vector 1×N`` — ``mirofish.env.vector_env(1)``, one tank of N fish, actions
  ``env.action_space.sample()`` (an array over (tank, fish));
* ``mirofish vector 8×N/8`` — ``vector_env(8)``, eight tanks of N/8 fish;
* ``mirofish dict 1×N`` — ``mirofish.env.parallel_env``, the dict API, sampled as MAgent2's.

Each figure is the median of ``--rounds`` fresh processes, rounds alternating between the
environments; each process times ``--steps`` steps after a warm-up of 20, on one core. MAgent2
runs in the Python given with ``--magent-python`` (``pip install magent2`` there; it is a bench
dependency, not one of MiroFish's). Prints a table and, last, one JSON line.

    python bench/vs_magent2.py --magent-python PATH/TO/python [--rounds 3] [--steps 300]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAP_SIZE = {162: 45, 512: 80}  # battle_v4's agents for a map size (two teams of map_size² × 0.04)
TANK = {162: (128, 72), 512: (256, 144), 64: (96, 54), 20: (60, 34)}  # about the default tank's density or less

MAGENT = r"""
import json, sys, time
from magent2.environments import battle_v4
agents, steps, seed = {agents}, {steps}, {seed}
env = battle_v4.parallel_env(map_size={map_size}, max_cycles=10**6)
env.reset(seed=seed)
assert len(env.agents) == agents, len(env.agents)
for a in env.agents:
    env.action_space(a).seed(seed)
for _ in range(20):
    env.step({{a: env.action_space(a).sample() for a in env.agents}})
t = time.perf_counter()
done = 0
for _ in range(steps):
    n = len(env.agents)
    env.step({{a: env.action_space(a).sample() for a in env.agents}})
    done += n
print(json.dumps({{"agent_steps_per_s": done / (time.perf_counter() - t)}}))
"""


def ours_once(kind: str, agents: int, steps: int, seed: int) -> float:
    sys.path.insert(0, ROOT)
    from mirofish.env import parallel_env, vector_env

    tanks = 8 if kind == "vector8" else 1
    fish = agents // tanks
    w, h = TANK[fish] if fish in TANK else TANK[512]
    settings = {"fish.count": fish, "world.width": w, "world.height": h}
    if kind == "dict":
        env = parallel_env(max_steps=10**9, **settings)
        env.reset(seed=seed)
        for a in env.possible_agents:
            env.action_space(a).seed(seed)
        for _ in range(20):
            env.step({a: env.action_space(a).sample() for a in env.agents})
        t = time.perf_counter()
        for _ in range(steps):
            env.step({a: env.action_space(a).sample() for a in env.agents})
        return fish * steps / (time.perf_counter() - t)
    venv = vector_env(tanks, max_steps=10**9, **settings)
    venv.reset(seed=seed)
    venv.action_space.seed(seed)
    for _ in range(20):
        venv.step(venv.action_space.sample())
    t = time.perf_counter()
    for _ in range(steps):
        venv.step(venv.action_space.sample())
    return tanks * fish * steps / (time.perf_counter() - t)


KINDS = (("vector1", "mirofish vector 1×N"), ("vector8", "mirofish vector 8×N/8"), ("dict", "mirofish dict 1×N"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--magent-python", help="a Python with magent2 installed")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--agents", type=int, nargs="+", default=[162, 512], choices=sorted(MAP_SIZE))
    ap.add_argument("--ours-once", nargs=4, metavar=("KIND", "AGENTS", "STEPS", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ours_once:
        kind, agents, steps, seed = args.ours_once
        print(ours_once(kind, int(agents), int(steps), int(seed)))
        return
    if not args.magent_python:
        ap.error("--magent-python PATH (a Python with magent2 installed) is required")
    rows = []
    print(f"{'agents':>6} {'environment':<24} {'agent-steps/s':>14} {'× MAgent2':>10}")
    for agents in args.agents:
        runs: dict[str, list[float]] = {k: [] for k, _ in KINDS} | {"magent2": []}
        for r in range(args.rounds):
            seed = 1 + r
            code = MAGENT.format(agents=agents, steps=args.steps, seed=seed, map_size=MAP_SIZE[agents])
            out = subprocess.run([args.magent_python, "-c", code], capture_output=True, text=True, check=True)
            runs["magent2"].append(json.loads(out.stdout.splitlines()[-1])["agent_steps_per_s"])
            for kind, _ in KINDS:
                out = subprocess.run([sys.executable, __file__, "--ours-once", kind, str(agents), str(args.steps),
                                      str(seed)], capture_output=True, text=True, check=True)
                runs[kind].append(float(out.stdout.split()[-1]))
        theirs = statistics.median(runs["magent2"])
        print(f"{agents:>6} {'MAgent2 battle_v4 (dict)':<24} {theirs:>14,.0f} {1.0:>9.1f}x")
        row = {"agents": agents, "magent2": round(theirs), "magent2_runs": [round(v) for v in runs["magent2"]]}
        for kind, label in KINDS:
            ours = statistics.median(runs[kind])
            print(f"{agents:>6} {label:<24} {ours:>14,.0f} {ours / theirs:>9.1f}x", flush=True)
            row[kind] = round(ours)
            row[f"{kind}_runs"] = [round(v) for v in runs[kind]]
            row[f"{kind}_x_magent2"] = round(ours / theirs, 2)
        row["vector1_x_dict"] = round(statistics.median(runs["vector1"]) / statistics.median(runs["dict"]), 2)
        rows.append(row)
    sys.path.insert(0, ROOT)
    from mirofish import kernel

    print(json.dumps({"tick_kernel": kernel.name(), "steps": args.steps, "vs_magent2": rows}))


if __name__ == "__main__":
    main()
