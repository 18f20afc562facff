#!/usr/bin/env python3
"""Context-dependent terms: compression against how alike the candidates are.

The referential game with embedded agents, 400 rounds, seeds 1-5, five candidates drawn so
that they vary along one, two or all three attributes (sharing the target's other values), or
drawn at random; the sender naming only what tells the target apart (context on) against
naming every attribute (context off). Colours get a fifth value (purple) so that five
candidates can differ in colour alone. Compression = message characters / spelled-out
description characters, over the whole run; success = the receiver picked the target.

    .venv/bin/python bench/glossary_context.py [--rounds 400] [--seeds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mirofish.scenes.referential.experiment import Experiment
from mirofish.scenes.referential.game import GameConfig

ATTRIBUTES = {"color": ["red", "blue", "green", "yellow", "purple"], "shape": ["circle", "square", "triangle"],
              "size": ["small", "large"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    rows = []
    print(f"{'candidates vary along':>22} {'context':>8} {'compression':>12} {'success':>8} {'chars/round':>11}")
    for vary in (1, 2, 3, 0):
        for context in (True, False):
            runs = []
            for seed in range(1, args.seeds + 1):
                exp = Experiment(GameConfig(seed=seed, rounds=args.rounds, attributes=ATTRIBUTES, vary=vary,
                                            context=context))
                runs.append(exp.run())
                exp.close()
            row = {"vary": vary, "context": context,
                   "compression": [r["compression_ratio"] for r in runs],
                   "success": [r["success_rate"] for r in runs],
                   "chars_per_round": [r["message_chars_per_round"] for r in runs]}
            rows.append(row)
            what = {1: "one attribute", 2: "two attributes", 3: "all three", 0: "random objects"}[vary]
            print(f"{what:>22} {'on' if context else 'off':>8} {statistics.mean(row['compression']):>12.3f} "
                  f"{statistics.mean(row['success']):>8.3f} {statistics.mean(row['chars_per_round']):>11.2f}",
                  flush=True)
    print(json.dumps({"glossary_context": rows}))


if __name__ == "__main__":
    main()
