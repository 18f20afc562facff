#!/usr/bin/env python3
"""The report chain's signal trade-off: major drifts caught against the extra tokens the
signals and calibrations cost, per arm, on 10 seeds nobody tuned on (11–20), mean ± 95 %
interval over the seeds.

Arms: layer 1 alone; layers 1+2 with layer 2 written by the agents (only the readings their
evidence leaves them unsure of) or by the oracle (every reading held: the upper bound), each
in the full and the compact wire form; layer 2 on a schedule only (every K-th message, no
triggers); and layers 1+2+3. "caught by the agents' layer 2" is the share of major drifts a
reading the sender itself flagged caught (the rest: layer 1's checklist and goal hash, from
the task registry). Tokens are estimated, or counted by a model's tokenizer when
``MIROFISH_TOKENIZER`` names its ``tokenizer.json`` (the output says which).

    python bench/handoff_signals.py [--seeds 11 12 …] [--tasks 250] [--json]
    MIROFISH_TOKENIZER=path/to/tokenizer.json python bench/handoff_signals.py
    python bench/handoff_signals.py --base-url URL --model NAME --tasks 20   # model agents

With ``--base-url``/``--model`` a model writes every message and, with agent-written layer 2,
its own layer 2 (``handoff --agents llm``); the arms are those with layer 2 (the model's
prose changes what the others hear, so its flags are its own), and the table adds the share of
messages the model wrote and the layer-2 entries it wrote and that were dropped.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from source_tables import cell, interval  # bench/ is on the path when run as a script

from mirofish.brains.prompt import TokenizerError, token_counter, tokenizer
from mirofish.scenes.handoff.chain import ARMS, evaluate

# name → (layers, layer-2 source, wire form, every K-th, triggers)
CURVE = {
    "L1 full": ("L1", "agent", "full", 4, True),
    "L1 compact": ("L1", "agent", "compact", 4, True),
    "L1+2 oracle, full": ("L1+2", "oracle", "full", 4, True),
    "L1+2 oracle, compact": ("L1+2", "oracle", "compact", 4, True),
    "L1+2 agents, full": ("L1+2", "agent", "full", 4, True),
    "L1+2 agents, compact": ("L1+2", "agent", "compact", 4, True),
    "L1+2 agents, compact, every 3rd only": ("L1+2", "agent", "compact", 3, False),
    "L1+2 agents, compact, every 5th only": ("L1+2", "agent", "compact", 5, False),
    "L1+2+3 agents, compact": ("L1+2+3", "agent", "compact", 4, True),
}


def measure(seeds: list[int], tasks: int, writer: Any = None) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {}
    for name, (arm, source, wire_form, every, triggers) in CURVE.items():
        if writer is not None and "L1+2" not in name:
            continue
        runs = [evaluate(tasks, s, ARMS[arm], every, triggers, writer, source, wire_form) for s in seeds]
        out[name] = {
            "caught": [100 * r["major_intercepted_share"] for r in runs],
            "by_agents": [100 * r["major_caught_by"]["layer2"] / max(1, r["major_drifts"]) for r in runs],
            "extra": [100 * r["extra_token_share"] for r in runs],
            "signals": [100 * r["signal_token_share"] for r in runs],
            "readings": [r["layer2_readings"]["sent"] / tasks for r in runs],
            "drifted": [r["layer2_readings"]["drifted"] / max(1, r["layer2_readings"]["sent"]) for r in runs],
            **({"model_share": [100 * r["model_made"]["share"] for r in runs],
                "model_l2": [sum(r["model_layer2"][k] for r in runs) for k in ("stated", "invalid")]}
               if writer is not None else {}),
        }
    return out


def table(curve: dict[str, dict[str, list[float]]], seeds: list[int], tasks: int, model: str = "") -> str:
    s = f"seeds {seeds[0]}–{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else f"seeds {seeds}"
    by = f"; messages by {model}" if model else ""
    lines = [f"Report chain, signals against their cost ({s}, {tasks} tasks{by}; tokens "
             f"{'counted by ' + token_counter() if token_counter() != 'estimate' else 'estimated'}; mean ± 95 %)",
             "", "| arm | major drifts caught | caught by the agents' layer 2 | extra tokens | of which signals "
             "| layer-2 readings sent / task | of them drifted |", "|---|---|---|---|---|---|---|"]
    for name, c in curve.items():
        has_l2 = "L1+2" in name
        lines.append(f"| {name} | {cell(c['caught'], '{:.1f}')} % | "
                     f"{cell(c['by_agents'], '{:.1f}') + ' %' if has_l2 and 'oracle' not in name else '–'} | "
                     f"{cell(c['extra'], '{:.1f}')} % | {cell(c['signals'], '{:.1f}')} % | "
                     f"{cell(c['readings'], '{:.1f}') if has_l2 else '–'} | "
                     f"{cell([100 * v for v in c['drifted']], '{:.0f}') + ' %' if has_l2 else '–'} |")
    if model:
        lines += ["", "Model-made: " + "; ".join(
            f"{n}: {cell(c['model_share'], '{:.0f}')} % of messages, {c['model_l2'][0]:,} layer-2 entries written "
            f"({c['model_l2'][1]:,} dropped)" for n, c in curve.items()) + "."]
    goal = [n for n, c in curve.items() if interval(c["caught"])[0] >= 80 and interval(c["extra"])[0] <= 5]
    lines += ["", "The source's goal (≥ 80 % of major drifts at ≤ 5 % extra tokens): "
              + (", ".join(goal) if goal else "no arm reaches it") + "."]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(11, 21)))
    ap.add_argument("--tasks", type=int, default=250)
    ap.add_argument("--json", action="store_true", help="print the per-seed figures as JSON too")
    ap.add_argument("--base-url", default="", help="an OpenAI-compatible server: a model writes the messages")
    ap.add_argument("--model", default="", help="the model's name at --base-url")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a model call may take (default 60)")
    args = ap.parse_args()
    if args.tasks < 1 or not args.seeds:
        ap.exit(2, "handoff_signals: --tasks must be at least 1 and --seeds name at least one seed\n")
    if bool(args.base_url) != bool(args.model):
        ap.exit(2, "handoff_signals: --base-url and --model go together\n")
    if not args.timeout > 0:
        ap.exit(2, f"handoff_signals: --timeout must be more than 0 seconds, got {args.timeout:g}\n")
    try:
        tokenizer()  # a MIROFISH_TOKENIZER that cannot be read: one line before any work
    except TokenizerError as exc:
        ap.exit(2, f"handoff_signals: {exc}\n")
    writer = None
    if args.base_url:
        from mirofish.scenes.handoff.model_agents import ModelWriter

        writer = ModelWriter(args.base_url, args.model, timeout_s=args.timeout)
    try:
        curve = measure(args.seeds, args.tasks, writer)
    except TokenizerError as exc:  # a text the tokenizer cannot count (it counted the probe at load)
        ap.exit(2, f"handoff_signals: {exc}\n")
    finally:
        failures = writer.close() if writer is not None else {}
    print(table(curve, args.seeds, args.tasks, args.model))
    if failures:
        print(f"\nModel failures (the template wrote those messages): {failures}")
    if args.json:
        print(json.dumps({"seeds": args.seeds, "tasks": args.tasks, "tokens": token_counter(), "curve": curve}))


if __name__ == "__main__":
    main()
