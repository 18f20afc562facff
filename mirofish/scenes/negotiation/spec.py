"""The negotiation as a scene of the registry (mirofish/scenes/registry.py)."""

from __future__ import annotations

from typing import Any

from ..parts import SceneSpec, SweepHooks

PARAMS = {"repair": bool, "layers": int}  # what a negotiation sweep varies


def check(task: Any) -> str | None:
    for key, value in task.params.items():
        kind = PARAMS.get(key)
        if kind is None:
            return f"params.{key}: unknown key (the negotiation sweeps {', '.join(PARAMS)})"
        if type(value) is not kind or (key == "layers" and value not in (0, 1, 2, 3)):
            return f"params.{key}: {value!r} is not a {'layer count 0-3' if key == 'layers' else kind.__name__}"
    return None


def summarize(task: Any, record_dir: str | None = None) -> dict[str, Any]:
    """A sweep run: ``task.length`` sessions with embedded negotiators (``--record``: their database kept)."""
    from pathlib import Path

    from .dialogue import evaluate

    db = str(Path(record_dir) / f"{task.run_id}.sqlite") if record_dir else None
    summary, _, _ = evaluate(task.length, task.seed, bool(task.params.get("repair", True)), db_path=db,
                             layers=int(task.params.get("layers", 3)))
    summary["agents"] = "simulated"
    return dict(summary)


def command(task: Any) -> list[str]:
    cmd = ["python", "run.py", "negotiation", "--headless", "--sessions", str(task.length), "--seed", str(task.seed)]
    if "repair" in task.params and not task.params["repair"]:
        cmd.append("--no-repair")
    if "layers" in task.params:
        cmd += ["--layers", str(task.params["layers"])]
    return cmd


SWEEP = SweepHooks(length="sessions", metrics=("agreement_rate", "completion_rate", "joint_utility_mean",
                                               "repair_share", "unresolved_conflicts_mean"),
                   check=check, summarize=summarize, command=command)

SPEC = SceneSpec(
    name="negotiation", help="negotiation with grounding repair and Argent signals",
    records="turns", fork_usage="--at-turn N --repair STRATEGY",
    export="mirofish.scenes.negotiation.recording:export_turn_tables", sweep="mirofish.scenes.negotiation.spec:SWEEP",
    no_exchanges="it keeps what its model negotiators said (offers, repairs, answers), not their exchanges "
                 "(prompts, replies, tokens, latency)",
    doc="negotiators who notice and repair misunderstandings")
