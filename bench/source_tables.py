#!/usr/bin/env python3
"""The source designs' tables beside ours: each scene's arms on 10 seeds nobody tuned on
(11–20), mean ± 95 % interval over the seeds, printed as Markdown next to the figures the
source document gives (its own numbers where it has them, its expectation where it has none).

* Referential game (GlossoGen's control table): natural language / fixed glossary / dynamic
  glossary — message length, success, glossary size (``referential --headless --rounds 400``).
* Report chain (Argent's A/B): no signals / layer 1 / layers 1+2 written by the agents / layers
  1+2 broadcast by the oracle — completion, semantic consistency, drift interventions per task,
  rounds (messages) per task, major drifts caught and how many by the agents' own layer 2
  (``handoff --headless --tasks 250 [--layers L1+2 --l2-source oracle]``).
* Negotiation (grounding repair's evaluation dimensions): repair off / on — agreement, joint
  utility, fairness, rounds, the share of repair turns (the source: 5–15 %), uncertainty,
  unresolved conflicts (``negotiation --headless --sessions 250 [--no-repair]``); the gains
  from repair depend on the simulated answer (the ``EFFECT`` table), so that column says so.
  Per failure type: detections against the simulation's truth, repairs, seeds with a repair
  (``bench/detector_precision.py`` makes the same table in-process).

    python bench/source_tables.py [--seeds 11 12 …] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from detector_precision import combine, markdown  # bench/ is on the path when run as a script

ROOT = Path(__file__).resolve().parent.parent
T95 = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}


def cli(*args: str) -> dict:
    done = subprocess.run([sys.executable, "run.py", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    if done.returncode != 0:
        sys.exit(f"source_tables: {' '.join(args)}: {done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def interval(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, T95.get(n, 1.96) * sd / math.sqrt(n)


def cell(values: list[float], fmt: str) -> str:
    mean, half = interval(values)
    return f"{fmt.format(mean)} ± {fmt.format(half)}"


def referential(seeds: list[int]) -> dict:
    out = {}
    for arm in ("natural", "fixed", "dynamic"):
        runs = [cli("referential", "--headless", "--rounds", "400", "--seed", str(s), "--set", f'condition="{arm}"')
                for s in seeds]
        out[arm] = {"message_chars": [r["message_chars_per_round"] for r in runs],
                    "success": [r["success_rate"] for r in runs],
                    "success_last100": [r["success_rate_last100"] for r in runs],
                    "glossary": [r["glossary_size"] for r in runs]}
    return out


def handoff(seeds: list[int]) -> dict:
    runs = [cli("handoff", "--headless", "--tasks", "250", "--seed", str(s)) for s in seeds]
    oracle = [cli("handoff", "--headless", "--tasks", "250", "--seed", str(s), "--layers", "L1+2",
                  "--l2-source", "oracle") for s in seeds]
    out = {}
    for arm, per_seed in (("none", [r["none"] for r in runs]), ("L1", [r["L1"] for r in runs]),
                          ("L1+2", [r["L1+2"] for r in runs]), ("L1+2 oracle", oracle)):
        out[arm] = {"completion": [r["completion_rate"] for r in per_seed],
                    "consistency": [r["consistency_mean"] for r in per_seed],
                    "interventions": [r["interventions_per_task"] for r in per_seed],
                    "rounds": [r["messages_per_task"] for r in per_seed],
                    "caught": [r["major_intercepted_share"] for r in per_seed],
                    "by_agents": [r["major_caught_by"]["layer2"] / max(1, r["major_drifts"]) for r in per_seed]}
    return out


def negotiation(seeds: list[int]) -> dict:
    out = {}
    for arm, flags in (("no repair", ["--no-repair"]), ("repair", [])):
        runs = [cli("negotiation", "--headless", "--sessions", "250", "--seed", str(s), *flags) for s in seeds]
        out[arm] = {key: [r[key] for r in runs] for key in
                    ("agreement_rate", "joint_utility_mean", "fairness_mean", "rounds_mean", "repair_share",
                     "uncertainty_mean", "unresolved_conflicts_mean")}
        if arm == "repair":  # per failure type over the seeds: detections, repairs, the detector against the truth
            out["types"] = combine(runs, seeds, 250)
    return out


def tables(ref: dict, ho: dict, neg: dict, seeds: list[int]) -> str:
    s = f"seeds {seeds[0]}–{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else f"seeds {seeds}"
    lines = [f"**Referential game** (GlossoGen's control table; {s}, 400 rounds, mean ± 95 % interval)", "",
             "| arm | source: message | ours: characters a message | source: success | ours: success (all / last 100) "
             "| source: glossary | ours: glossary |", "|---|---|---|---|---|---|---|"]
    src = {"natural": ("≈ 30 characters", "high", "0"), "fixed": ("≈ 10", "medium", "fixed"),
           "dynamic": ("≈ 8", "medium → low, rising", "grows")}
    for arm in ("natural", "fixed", "dynamic"):
        r = ref[arm]
        lines.append(f"| {arm} | {src[arm][0]} | {cell(r['message_chars'], '{:.1f}')} | {src[arm][1]} | "
                     f"{cell(r['success'], '{:.2f}')} / {cell(r['success_last100'], '{:.2f}')} | {src[arm][2]} | "
                     f"{cell(r['glossary'], '{:.0f}')} |")
    lines += ["", f"**Report chain** (Argent's A/B; {s}, 250 tasks, mean ± 95 % interval)", "",
              "| arm | source: completion | ours | source: consistency (0–100) | ours | source: interventions / task "
              "| ours | source: rounds | ours: messages / task | ours: major drifts caught (by the agents' layer 2) |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    src2 = {"none": ("85 %", "72", "n/a", "8.5"), "L1": ("88 %", "86", "1.2", "9.1"),
            "L1+2": ("92 %", "89", "2.5", "10.3"), "L1+2 oracle": ("–", "–", "–", "–")}
    names = {"L1+2": "L1+2 (written by the agents)", "L1+2 oracle": "L1+2 (oracle: every reading sent)"}
    for arm in ("none", "L1", "L1+2", "L1+2 oracle"):
        r, g = ho[arm], src2[arm]
        by = f" ({cell([100 * v for v in r['by_agents']], '{:.0f}')} %)" if arm == "L1+2" else ""
        lines.append(f"| {names.get(arm, arm)} | {g[0]} | {cell([100 * v for v in r['completion']], '{:.0f}')} % | "
                     f"{g[1]} | {cell(r['consistency'], '{:.1f}')} | {g[2]} | {cell(r['interventions'], '{:.2f}')} | "
                     f"{g[3]} | {cell(r['rounds'], '{:.1f}')} | "
                     f"{cell([100 * v for v in r['caught']], '{:.0f}')} %{by} |")
    lines += ["", f"**Negotiation** (grounding repair's evaluation dimensions; {s}, 250 sessions, mean ± 95 % "
                  "interval; the source gives no numbers, only what repair should do)", "",
              "| dimension | source expects | no repair | repair (its answers simulated: EFFECT table) |",
              "|---|---|---|---|"]
    dims = [("agreement_rate", "agreement", "more agreements where interests can be reconciled", "{:.3f}"),
            ("joint_utility_mean", "joint utility", "higher with grounding", "{:.3f}"),
            ("fairness_mean", "fairness", "higher with grounding", "{:.3f}"),
            ("rounds_mean", "rounds", "fewer wasted rounds", "{:.1f}"),
            ("repair_share", "repair turns / all turns", "5–15 %", "{:.3f}"),
            ("uncertainty_mean", "uncertainty (mean)", "lower", "{:.3f}"),
            ("unresolved_conflicts_mean", "unresolved conflicts at the end", "fewer", "{:.3f}")]
    for key, name, expect, fmt in dims:
        lines.append(f"| {name} | {expect} | {cell(neg['no repair'][key], fmt)} | {cell(neg['repair'][key], fmt)} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(11, 21)))
    ap.add_argument("--json", action="store_true", help="print the per-seed figures as JSON too")
    args = ap.parse_args()
    ref, ho, neg = referential(args.seeds), handoff(args.seeds), negotiation(args.seeds)
    print(tables(ref, ho, neg, args.seeds))
    print("\n**Negotiation, per failure type** (the repair arm above; real: the two sides read a name the "
          "detection is about differently at that moment)\n")
    print(markdown(neg["types"]))
    if args.json:
        print(json.dumps({"seeds": args.seeds, "referential": ref, "handoff": ho, "negotiation": neg}))


if __name__ == "__main__":
    main()
