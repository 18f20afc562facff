"""The referential game as a scene of the registry (mirofish/scenes/registry.py)."""

from __future__ import annotations

from typing import Any

from ..parts import SceneSpec, SweepHooks

# Sweep parameters that are not the game's settings: who plays (sweep --base-url --model sets them).
AGENT_KEYS = ("agents", "base_url", "model", "timeout")


def game_config(task: Any) -> Any:
    """The game's settings for a sweep run (raises pydantic's ValidationError)."""
    from .game import GameConfig

    settings = {k: v for k, v in task.params.items() if k not in AGENT_KEYS}
    return GameConfig(**{**settings, "rounds": task.length, "seed": task.seed})


def check(task: Any) -> str | None:
    from pydantic import ValidationError

    who = task.params
    if who.get("agents", "embedded") not in ("embedded", "llm"):
        return f"params.agents: \"embedded\" or \"llm\", got {who.get('agents')!r}"
    if who.get("agents") == "llm" and not (isinstance(who.get("base_url"), str) and isinstance(who.get("model"), str)):
        return "params: model agents (agents = \"llm\") need base_url and model (or sweep --base-url --model)"

    try:
        game_config(task)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        return f"params.{'.'.join(map(str, err['loc'])) or 'game'}: {msg}"
    return None


def summarize(task: Any, record_dir: str | None = None) -> dict[str, Any]:
    """A sweep run: the game played ``task.length`` rounds (``--record``: its round log kept)."""
    from pathlib import Path

    from .experiment import Experiment

    log = str(Path(record_dir) / f"{task.run_id}.jsonl") if record_dir else None
    cfg, who = game_config(task), task.params
    factory = None
    if who.get("agents") == "llm":
        from ...brains.client import DEFAULT_TIMEOUT_S
        from .model_agents import model_agent_factory

        factory = model_agent_factory(who["base_url"], who["model"], cfg, who.get("timeout", DEFAULT_TIMEOUT_S))
    exp = Experiment(cfg, None, log, "llm" if factory else "embedded", factory)
    try:
        summary: dict[str, Any] = exp.run()
        return summary
    finally:
        exp.close()


def command(task: Any) -> list[str]:
    from ...config import toml_value

    who = task.params
    agents = ["--agents", "llm", "--base-url", str(who["base_url"]), "--model", str(who["model"]),
              *(["--timeout", str(who["timeout"])] if "timeout" in who else [])] if who.get("agents") == "llm" else []
    return ["python", "run.py", "referential", "--headless", "--rounds", str(task.length), "--seed", str(task.seed),
            *agents, *(x for k, v in sorted(task.params.items()) if k not in AGENT_KEYS
                       for x in ("--set", f"{k}={toml_value(v)}"))]


def ask_server(params: dict[str, Any], base_url: str, model: str) -> None:
    """``sweep --base-url --model``: model agents on that server play every game."""
    params.update(agents=["llm"], base_url=[base_url], model=[model])


SWEEP = SweepHooks(length="rounds", metrics=("success_rate", "success_rate_last100", "compression_ratio",
                                             "glossary_size"),
                   check=check, summarize=summarize, command=command, ask_server=ask_server)

SPEC = SceneSpec(
    name="referential", help="the referential game: agents invent a vocabulary (GlossoGen)",
    records="turns", export="mirofish.scenes.referential.recording:export_round_tables",
    sweep="mirofish.scenes.referential.spec:SWEEP",
    no_exchanges="a referential game records embedded agents' rounds only (a model run's rounds go to --log)",
    doc="two agents invent a shared vocabulary")
