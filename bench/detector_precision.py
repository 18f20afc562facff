#!/usr/bin/env python3
"""The negotiation's failure detector against the simulation's truth, per type, over seeds:
detections, of which real (the two sides read a name it is about differently at that moment),
precision; repairs, repairs that restored common ground, seeds with a detection and seeds with
a repair; and the recall (misread names in play that some detection named). The detector's
confidences (``CONFIDENCE`` in ``scenes/negotiation/grounding.py``) are this table's precision
on the tuning seeds 1–3; docs/negotiation.md reports seeds 11–20.

    python bench/detector_precision.py [--seeds 11 12 …] [--sessions 250] [--all-names] [--json]

``--all-names`` is the ablation: the detector without its one prior about words (every name is
open to misreading, ends of a scale included).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mirofish.brains.prompt import TokenizerError, tokenizer
from mirofish.scenes.negotiation import dialogue as D


def measure(seeds: list[int], sessions: int) -> dict:
    return combine([D.evaluate(sessions, seed, True)[0] for seed in seeds], seeds, sessions)


def combine(summaries: list[dict], seeds: list[int], sessions: int) -> dict:
    """The per-type table over the seeds from each seed's ``negotiation --headless`` summary
    (``bench/source_tables.py`` builds it from the command's output the same way)."""
    table: dict[str, dict[str, int]] = {}
    recall = [0, 0]
    for summary in summaries:
        for kind, row in summary["failure_types"].items():
            out = table.setdefault(kind, {"detections": 0, "real": 0, "repairs": 0, "restored": 0,
                                          "seeds_detected": 0, "seeds_repaired": 0})
            out["detections"] += row["detections"]
            out["repairs"] += row["repairs"]
            out["restored"] += row["restored"]
            out["seeds_detected"] += row["detections"] > 0
            out["seeds_repaired"] += row["repairs"] > 0
        for kind, row in summary["detector_precision"].items():
            if kind != "all_judged":
                table[kind]["real"] += row["real"]
        recall[0] += summary["detector_recall"]["misread_names_in_play"]
        recall[1] += summary["detector_recall"]["named_by_a_detection"]
    for row in table.values():
        row["precision"] = round(row["real"] / row["detections"], 3) if row["detections"] else None
    judged = sum(r["detections"] for r in table.values())
    real = sum(r["real"] for r in table.values())
    return {"seeds": seeds, "sessions": sessions, "types": dict(sorted(table.items())),
            "all": {"detections": judged, "real": real, "precision": round(real / judged, 3) if judged else None},
            "recall": {"misread_names_in_play": recall[0], "named": recall[1],
                       "recall": round(recall[1] / recall[0], 3) if recall[0] else None}}


def markdown(m: dict) -> str:
    n = len(m["seeds"])
    lines = ["| failure type | detections | real | not real | precision | repairs | restored (simulated: "
             "EFFECT table) | seeds with a repair |", "|---|---|---|---|---|---|---|---|"]
    for kind, r in m["types"].items():
        prec = f"{r['precision']:.2f}" if r["precision"] is not None else "–"
        lines.append(f"| {kind} | {r['detections']:,} | {r['real']:,} | {r['detections'] - r['real']:,} | {prec} | "
                     f"{r['repairs']:,} | {r['restored']:,} | {r['seeds_repaired']} of {n} |")
    a, rc = m["all"], m["recall"]
    lines.append(f"| **all** | {a['detections']:,} | {a['real']:,} | {a['detections'] - a['real']:,} | "
                 f"**{a['precision']:.2f}** | | | |")
    lines.append("")
    lines.append(f"Recall: {rc['named']:,} of {rc['misread_names_in_play']:,} misread names in play were named by a "
                 f"detection ({rc['recall']:.2f}).")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(11, 21)))
    ap.add_argument("--sessions", type=int, default=250)
    ap.add_argument("--all-names", action="store_true", help="the ablation: no prior about which names are relative")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.sessions < 1 or not args.seeds:
        ap.exit(2, "detector_precision: --sessions must be at least 1 and --seeds name at least one seed\n")
    try:
        tokenizer()  # a MIROFISH_TOKENIZER that cannot count (the token figures): one line before any work
    except TokenizerError as exc:
        ap.exit(2, f"detector_precision: {exc}\n")
    if args.all_names:
        D.relative = lambda key: True  # every name open to misreading
    try:
        m = measure(args.seeds, args.sessions)
    except TokenizerError as exc:  # a text the tokenizer cannot count (it counted the probe at load)
        ap.exit(2, f"detector_precision: {exc}\n")
    print(json.dumps(m) if args.json else markdown(m))


if __name__ == "__main__":
    main()
