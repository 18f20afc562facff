#!/usr/bin/env python3
"""Attribute templates (the source design's ``canonical_schema``: ``crit-db`` for a critical
database alert, whatever its text) against a term per value, on the same objects — alerts,
severity × category × service, each carrying a new free-text detail every round — on seeds
11–20, mean ± 95 % interval over the seeds.

Arms (``referential --headless --rounds R``):

* per value — the default code: a term for each value that tells the target apart
  (``--set attributes=<the alerts>``), messages of one to three terms;
* templates, dynamic — ``--set templates=true``: one term a message, for the values that tell
  the target apart (a schema of one to three values), invented and learnt from feedback;
* templates, fixed — the same with every template's term given in advance (99 terms);
* natural — the spelled-out baseline (``critical database api``).

Generalisation: ``objects_per_term`` and ``instances_per_term`` are the distinct objects and
(object, detail) instances a term named in rounds that succeeded — a name for one object would
stay at one.

    python bench/referential_templates.py [--seeds 11 12 …] [--rounds 400] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys

from source_tables import ROOT, cell, cli  # bench/ is on the path when run as a script

sys.path.insert(0, str(ROOT))
from mirofish.brains.prompt import TokenizerError, tokenizer  # after the path is set

ALERTS = ('attributes={severity=["critical","warning","info"],category=["database","network","disk","auth"],'
          'service=["api","web","batch","queue"]}')
ARMS = {"per value": ["--set", ALERTS],
        "templates, dynamic": ["--set", "templates=true"],
        "templates, fixed": ["--set", "templates=true", "--condition", "fixed"],
        "natural": ["--set", "templates=true", "--condition", "natural"]}


def measure(seeds: list[int], rounds: int) -> dict:
    out = {}
    for arm, flags in ARMS.items():
        runs = [cli("referential", "--headless", "--rounds", str(rounds), "--seed", str(s), *flags) for s in seeds]
        tpl = [r.get("templates") or {} for r in runs]
        out[arm] = {"success": [r["success_rate"] for r in runs],
                    "success_last100": [r["success_rate_last100"] for r in runs],
                    "message_chars": [r["message_chars_per_round"] for r in runs],
                    "glossary": [r["glossary_size"] for r in runs],
                    "agreement": [r["definition_agreement"] for r in runs],
                    "objects_per_term": [t.get("objects_per_term", 0.0) for t in tpl],
                    "instances_per_term": [t.get("instances_per_term", 0.0) for t in tpl]}
    return out


def table(res: dict, seeds: list[int], rounds: int) -> str:
    lines = [f"Attribute templates vs a term per value (alerts, {rounds} rounds, seeds {seeds[0]}–{seeds[-1]}, "
             "mean ± 95 % interval)", "",
             "| arm | success | success, last 100 | chars / message | glossary terms | definition agreement "
             "| objects / term | instances / term |", "|---|---|---|---|---|---|---|---|"]
    for arm, r in res.items():
        gen = ("—", "—") if arm in ("per value", "natural") else (cell(r["objects_per_term"], "{:.1f}"),
                                                                   cell(r["instances_per_term"], "{:.1f}"))
        lines.append(f"| {arm} | {cell(r['success'], '{:.2f}')} | {cell(r['success_last100'], '{:.2f}')} | "
                     f"{cell(r['message_chars'], '{:.2f}')} | {cell(r['glossary'], '{:.0f}')} | "
                     f"{cell(r['agreement'], '{:.2f}') if arm != 'natural' else '—'} | {gen[0]} | {gen[1]} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(11, 21)))
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.rounds < 100 or not args.seeds:
        ap.exit(2, "referential_templates: --rounds must be at least 100 (the last-100 figure) "
                   "and --seeds name at least one seed\n")
    try:  # a MIROFISH_TOKENIZER that cannot count: one line before any run (each run would refuse it)
        tokenizer()
    except TokenizerError as exc:
        ap.exit(2, f"referential_templates: {exc}\n")
    res = measure(args.seeds, args.rounds)
    print(json.dumps({"seeds": args.seeds, "rounds": args.rounds, **res}) if args.json
          else table(res, args.seeds, args.rounds))


if __name__ == "__main__":
    main()
