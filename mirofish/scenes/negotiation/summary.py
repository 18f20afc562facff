"""A negotiation run's figures over its sessions (``dialogue.evaluate``'s summary): rates and
means, the failure types detected and repaired, the detector's precision and recall against
the simulation's truth, the repairs, the drift interventions and the signals' overhead."""

from __future__ import annotations

from typing import Any

import numpy as np

from .grounding import Bandit


def summarize(results: list[dict[str, Any]], sessions: int, seed: int, repair: bool, layers: int,
              bandit: Bandit) -> dict[str, Any]:
    """The run's summary: rates and means over the sessions, then the tables below."""

    def mean(key: str) -> float:
        return round(float(np.mean([r[key] for r in results])), 4)

    summary: dict[str, Any] = {"sessions": sessions, "seed": seed, "repair": repair, "layers": layers,
               "agreement_rate": mean("agreement"), "joint_utility_mean": mean("joint_utility"),
               "fairness_mean": mean("fairness"), "rounds_mean": mean("rounds"), "repair_share": mean("repair_share"),
               "uncertainty_mean": mean("uncertainty_mean"),
               "uncertainty_max": round(float(max(r["uncertainty_max"] for r in results)), 4),
               "unresolved_conflicts_mean": mean("unresolved_conflicts"), "bandit": bandit.stats()}
    summary["failure_types"] = _failure_types(results)
    summary["detector_precision"] = _precision(results)
    misread, named = (sum(r["misread_names"][i] for r in results) for i in (0, 1))
    summary["detector_recall"] = {"misread_names_in_play": misread, "named_by_a_detection": named,
                                  "recall": round(named / misread, 3) if misread else None}
    summary["repairs"] = _repairs(results)
    summary["communication_cost_mean"] = mean("communication_cost")
    summary["completion_rate"] = mean("completed")  # deals that meet every initial requirement
    summary["semantic_consistency"] = mean("semantic_consistency")
    kinds: dict[str, int] = {}
    for r in results:
        for kind, n in r["interventions"].items():
            kinds[kind] = kinds.get(kind, 0) + n
    summary["drift_interventions"] = {"per_session": round(sum(kinds.values()) / max(1, sessions), 3),
                                      **dict(sorted(kinds.items()))}
    summary["signal_overhead"] = _signal_overhead(results)
    return summary


def _failure_types(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per failure type: detections, repairs, repairs that restored common ground."""
    table: dict[str, dict[str, int]] = {}
    for r in results:
        for kind, (det, rep, ok) in r["by_type"].items():
            row = table.setdefault(kind, {"detections": 0, "repairs": 0, "restored": 0})
            row["detections"] += det
            row["repairs"] += rep
            row["restored"] += ok
    return dict(sorted(table.items()))


def _precision(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Detections that were real misunderstandings, by type, against the simulation's truth
    (see :meth:`Negotiation.judge_detections`; types without a truth are not in it)."""
    table: dict[str, list[int]] = {}
    for r in results:
        for kind, (judged, real) in r["judged"].items():
            row = table.setdefault(kind, [0, 0])
            row[0] += judged
            row[1] += real
    out = {k: {"judged": j, "real": rl, "precision": round(rl / j, 3) if j else None}
           for k, (j, rl) in sorted(table.items())}
    judged = sum(j for j, _ in table.values())
    out["all_judged"] = {"judged": judged, "real": sum(rl for _, rl in table.values()),
                         "precision": round(sum(rl for _, rl in table.values()) / judged, 3) if judged else None}
    return out


def _repairs(results: list[dict[str, Any]]) -> dict[str, Any]:
    repairs = [x for r in results for x in r["repairs"]]
    spoken = [x for x in repairs if x["by_model"]]
    return {
        "turns": len(repairs), "restored": sum(bool(x["restored"]) for x in repairs),
        # repairs that met a real difference in readings, and those after which the other side's
        # stated reading had changed to match the initiator's
        "readings_differed": sum(bool(x["needed"]) for x in repairs),
        "resolved": sum(bool(x["needed"] and x["restored"]) for x in repairs),
        "not_yet": sum(r["not_yet"] for r in results),
        "spoken_by_model": len(spoken),
        "judged": "none" if not repairs else "model" if len(spoken) == len(repairs) else
        "simulated" if not spoken else "mixed"}


def _signal_overhead(results: list[dict[str, Any]]) -> dict[str, Any]:
    o = {k: sum(r["overhead"][k] for r in results) for k in results[0]["overhead"]} if results else {}
    n = max(1, o.get("messages", 0))
    return {"chars_per_message": round(o.get("signal_chars", 0) / n, 1),
            "tokens_per_message": round(o.get("signal_tokens", 0) / n, 1),
            "share_of_tokens": round(o.get("signal_tokens", 0) / max(1, o.get("signal_tokens", 0)
                                                                    + o.get("message_tokens", 0)), 3)}
