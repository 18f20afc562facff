"""Model negotiators through a model client (mirofish.brains.client): text plus the structured signal JSON.

Each turn the model gets its role, its private priorities and definitions, the offer on the
table with what it is worth to it, its current target and three offers it could make, and
answers JSON: accept or an offer, a message, and Argent signals (layer 1 always). Malformed
JSON or signals are counted by reason and that turn falls back to the embedded negotiator.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ...brains.client import DEFAULT_TIMEOUT_S, ModelClient
from ...brains.prompt import first_json_object
from ...brains.prompts import Prompt, load_prompt
from .dialogue import GOAL, STRATEGY_HOW, Negotiation, goal_hash
from .grounding import Detection
from .world import LEVELS, NAMED, NUMERIC, SCOPE, Offer

# The negotiators' system prompts live in assets/prompts/negotiation.toml (brains/prompts.py).

_ISSUES = {**{k: {"type": "number", "minimum": lo, "maximum": hi} for k, (lo, hi) in NUMERIC.items()},  # bounded
           "support": {"type": "string", "enum": ["basic", "standard", "premium"]},
           "ai_feature": {"type": "string", "enum": ["none", "basic", "full"]}}
REPLY_SCHEMA = {"type": "object", "properties": {
    "accept": {"type": "boolean"},
    "offer": {"type": "object", "properties": _ISSUES, "required": list(_ISSUES)},
    "message": {"type": "string"},
    "signals": {"type": "object", "properties": {"layer1": {"type": "object", "properties": {
        "task_id": {"type": "string"}, "goal_hash": {"type": "string"},
        "constraints": {"type": "array", "items": {"type": "string"}}},
        "required": ["task_id", "goal_hash", "constraints"]}}, "required": ["layer1"]}},
    "required": ["accept", "message", "signals"]}


def _readings_schema(keys: list[str]) -> dict[str, Any]:
    level = {"type": "integer", "minimum": 0, "maximum": LEVELS - 1}
    return {"type": "object", "properties": {
        "message": {"type": "string"},
        "readings": {"type": "object", "properties": {k: level for k in keys}, "required": list(keys)}},
        "required": ["message", "readings"]}


def _scope_lines(keys: list[str]) -> str:
    issues = sorted({k.split(":")[0] for k in keys})
    return "\n".join(f"Scope levels for {i}: " + ", ".join(f"{n} = {d}" for n, d in enumerate(SCOPE[i]))
                     for i in issues)


def _named(key: str) -> str:
    issue, name = key.split(":")
    return f'"{name}" {issue}'


def _read_offer(offer: Any) -> tuple[Offer | None, bool]:
    """An offer as the scene can use it, and whether a number was clamped: each numeric issue
    brought into its range (a grammar-constrained server does not enforce the schema's bounds,
    so a small model writes price 8.2 where 80-140 is allowed); None when an issue is missing,
    not a number, or a named issue is not one of its names."""
    if not isinstance(offer, dict):
        return None, False
    try:
        values = {i: float(offer[i]) for i in NUMERIC}
        if not all(offer[i] in names for i, names in NAMED.items()):
            return None, False
    except (KeyError, TypeError, ValueError):
        return None, False
    if any(v != v or v in (float("inf"), float("-inf")) for v in values.values()):
        return None, False
    clamped = {i: min(max(v, NUMERIC[i][0]), NUMERIC[i][1]) for i, v in values.items()}
    return {**offer, **clamped}, clamped != values


class ModelNegotiator:
    def __init__(self, client: ModelClient, failures: dict[str, int], prompt: Prompt | None = None):
        self.client, self.failures = client, failures
        self.prompt = prompt or load_prompt(None, "negotiation")
        self.made = 0  # turns the model actually played (the others fell back to the embedded logic)
        self.spoken: dict[str, int] = {}  # repair utterances and answers the model wrote

    def _fail(self, reason: str) -> None:
        self.failures[reason] = self.failures.get(reason, 0) + 1

    def __call__(self, neg: Negotiation, t: int, role: str) -> dict[str, Any] | None:
        p = neg.party(role)
        other = "seller" if role == "buyer" else "buyer"
        incoming = neg.last_offer[other]
        lines = [f"You are the {role}. Task id: {neg.tracker.session}. Goal: {GOAL} Goal hash: {goal_hash(GOAL)}",
                 "Your priorities: " + json.dumps({k: round(v, 2) for k, v in p.weights.items()}),
                 "What the names mean to you: " + json.dumps(p.definitions),
                 f"Your target now: {neg.target(p, t):.3f}"]
        if incoming is not None:
            lines.append(f"Offer on the table: {json.dumps(incoming)}. It is worth {p.utility(incoming):.3f} to you.")
        lines.append("Make your own offer (the five issues, each within its range), or accept the one on the table.")
        reply = self.client.complete([{"role": "system", "content": self.prompt.t("negotiator", "system")},
                                    {"role": "user", "content": "\n".join(lines)}], REPLY_SCHEMA, max_tokens=300)
        if reply["error"]:
            self._fail(f"negotiator_{reply['error']}")
            return None
        data = first_json_object(reply["text"])
        if data is None:
            self._fail("reply_not_json")
            return None
        sig = data.get("signals")
        l1 = sig.get("layer1") if isinstance(sig, dict) else None
        if not (isinstance(l1, dict) and isinstance(l1.get("task_id"), str) and isinstance(l1.get("goal_hash"), str)
                and isinstance(l1.get("constraints"), list)):
            self._fail("signal_json_malformed")
            return None
        if l1["goal_hash"] != goal_hash(GOAL):
            self.failures["goal_hash_mismatch"] = self.failures.get("goal_hash_mismatch", 0) + 1
        accept = bool(data.get("accept")) and incoming is not None
        offer = data.get("offer")
        if accept:
            offer = None
        else:
            offer, clamped = _read_offer(offer)
            if offer is None:
                self._fail("offer_invalid")
                return None
            if clamped:  # used, with its numbers brought into range: counted
                self.failures["offer_clamped"] = self.failures.get("offer_clamped", 0) + 1
        self.made += 1
        message = str(data.get("message") or "")[:300]
        if not re.search(r"[A-Za-z]{2}", message):  # "1.000", "": the offer is the model's, the words are none
            self.failures["message_without_words"] = self.failures.get("message_without_words", 0) + 1
        return {"accept": accept, "offer": offer, "message": message, "signals": sig}

    def _readings(self, prompt: str, keys: list[str], what: str) -> dict[str, Any] | None:
        reply = self.client.complete([{"role": "system", "content": self.prompt.t("repair", "system")},
                                      {"role": "user", "content": prompt}], _readings_schema(keys), max_tokens=200)
        if reply["error"]:
            self._fail(f"{what}_{reply['error']}")
            return None
        data = first_json_object(reply["text"])
        if data is None:
            self._fail(f"{what}_not_json")
            return None
        readings = data.get("readings")
        if not (isinstance(readings, dict) and all(type(readings.get(k)) is int and 0 <= readings[k] < LEVELS
                                                   for k in keys)):
            self._fail(f"{what}_readings_invalid")
            return None
        message = str(data.get("message") or "").strip()
        if not message:
            self._fail(f"{what}_no_message")
            return None
        self.made += 1
        self.spoken[what] = self.spoken.get(what, 0) + 1
        return {"message": message[:300], "readings": {k: readings[k] for k in keys}, "model": True}

    def repair_line(self, neg: Negotiation, role: str, t: int, strategy: str, det: Detection, keys: list[str],
                    mine: dict[str, int]) -> dict[str, Any] | None:
        """The initiator's repair utterance in ``strategy`` about ``keys``, with its readings."""
        if not keys:
            return None
        lines = [f"You are the {role}. Task id: {neg.tracker.session}.",
                 f"You noticed a possible misunderstanding ({det['type'].replace('_', ' ')}) about "
                 + ", ".join(_named(k) for k in keys) + ".",
                 "What these names mean to you: " + "; ".join(f"{_named(k)} = level {mine[k]}" for k in keys) + ".",
                 _scope_lines(keys),
                 f"Repair strategy: {strategy.replace('_', ' ')}: {STRATEGY_HOW[strategy]}.",
                 "Write your message in that strategy, and give the level you take each name to mean."]
        return self._readings("\n".join(lines), keys, "repair")

    def read_back(self, neg: Negotiation, role: str, t: int, strategy: str, message: str, keys: list[str],
                  mine: dict[str, int]) -> dict[str, Any] | None:
        """The other side's answer to a repair: its reply and the readings it now holds."""
        if not keys:
            return None
        lines = [f"You are the {role}. Task id: {neg.tracker.session}.",
                 f'The other side says: "{message}"',
                 "What these names meant to you until now: "
                 + "; ".join(f"{_named(k)} = level {mine[k]}" for k in keys) + ".",
                 _scope_lines(keys),
                 "Reply to them, and give the level you now take each name to mean: keep yours, or take theirs if "
                 "they made it clear."]
        return self._readings("\n".join(lines), keys, "answer")


def model_speakers(base_url: str, model: str, seed: int, timeout_s: float = DEFAULT_TIMEOUT_S,
                   prompt: str | None = None,
                   ) -> tuple[Callable[[int], dict[str, ModelNegotiator]], Callable[[], dict[str, int]]]:
    """(speakers_for(session index) → {"buyer", "seller"}, close() → failure counts); each
    model call takes at most ``timeout_s`` in all."""
    client = ModelClient(base_url, model, timeout_s=timeout_s, seed=seed)
    failures: dict[str, int] = {}
    negotiator = ModelNegotiator(client, failures, load_prompt(prompt, "negotiation"))

    def speakers_for(_session: int) -> dict[str, ModelNegotiator]:
        return {"buyer": negotiator, "seller": negotiator}

    def close() -> dict[str, int]:
        client.close()
        return {**failures, "model_turns": negotiator.made}

    return speakers_for, close
