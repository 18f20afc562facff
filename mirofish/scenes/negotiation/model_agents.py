"""Model negotiators through a model client (mirofish.brains.client): text plus the structured signal JSON.

Each turn the model gets its role, its private priorities and definitions, the offer on the
table with what it is worth to it, its current target and three offers it could make, and
answers JSON: accept or an offer, a message, and Argent signals (layer 1 always). Malformed
JSON or signals are counted by reason and that turn falls back to the embedded negotiator.
"""

from __future__ import annotations

import json

from ...brains.client import ModelClient
from ...brains.prompt import first_json_object
from .dialogue import GOAL, Negotiation, goal_hash
from .world import NAMED, NUMERIC

SYSTEM = """You are a negotiator in a negotiation between a buyer and a seller.
Issues: price, delivery_weeks, payment_days, support (basic/standard/premium), ai_feature (none/basic/full).
Answer with JSON only: accept (true or false), offer (one of the suggested offers, or your own), message (what you
say) and signals.layer1 (the task id and goal hash you were given, and your constraints)."""

_ISSUES = {"price": {"type": "number"}, "delivery_weeks": {"type": "number"}, "payment_days": {"type": "number"},
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


def _valid_offer(offer) -> bool:
    if not isinstance(offer, dict):
        return False
    try:
        return all(lo <= float(offer[i]) <= hi for i, (lo, hi) in NUMERIC.items()) and \
            all(offer[i] in names for i, names in NAMED.items())
    except (KeyError, TypeError, ValueError):
        return False


class ModelNegotiator:
    def __init__(self, client: ModelClient, failures: dict):
        self.client, self.failures = client, failures
        self.made = 0  # turns the model actually played (the others fell back to the embedded logic)

    def _fail(self, reason: str):
        self.failures[reason] = self.failures.get(reason, 0) + 1
        return None

    def __call__(self, neg: Negotiation, t: int, role: str) -> dict | None:
        p = neg.party(role)
        other = "seller" if role == "buyer" else "buyer"
        incoming = neg.last_offer[other]
        suggestions = [neg._choose_offer(p, t, incoming), neg._choose_offer(p, t, None),
                       neg._choose_offer(p, max(0, t - 3), incoming)]
        lines = [f"You are the {role}. Task id: {neg.tracker.session}. Goal: {GOAL} Goal hash: {goal_hash(GOAL)}",
                 "Your priorities: " + json.dumps({k: round(v, 2) for k, v in p.weights.items()}),
                 "What the names mean to you: " + json.dumps(p.definitions),
                 f"Your target now: {neg.target(p, t):.3f}"]
        if incoming is not None:
            lines.append(f"Offer on the table: {json.dumps(incoming)}. It is worth {p.utility(incoming):.3f} to you.")
        for k, o in enumerate(suggestions, 1):
            lines.append(f"Suggested offer {k}: {json.dumps(o)}")
        reply = self.client.complete([{"role": "system", "content": SYSTEM},
                                    {"role": "user", "content": "\n".join(lines)}], REPLY_SCHEMA, max_tokens=300)
        if reply["error"]:
            return self._fail(f"negotiator_{reply['error']}")
        data = first_json_object(reply["text"])
        if data is None:
            return self._fail("reply_not_json")
        sig = data.get("signals")
        l1 = sig.get("layer1") if isinstance(sig, dict) else None
        if not (isinstance(l1, dict) and isinstance(l1.get("task_id"), str) and isinstance(l1.get("goal_hash"), str)
                and isinstance(l1.get("constraints"), list)):
            return self._fail("signal_json_malformed")
        if l1["goal_hash"] != goal_hash(GOAL):
            self.failures["goal_hash_mismatch"] = self.failures.get("goal_hash_mismatch", 0) + 1
        accept = bool(data.get("accept")) and incoming is not None
        offer = data.get("offer")
        if accept:
            offer = None
        elif isinstance(offer, dict) and _valid_offer(offer):
            offer = {**offer, **{i: float(offer[i]) for i in NUMERIC}}
        else:
            return self._fail("offer_invalid")
        self.made += 1
        return {"accept": accept, "offer": offer,
                "message": str(data.get("message") or "")[:300], "signals": sig}


def model_speakers(base_url: str, model: str, seed: int, timeout_s: float = 20.0):
    """(speakers_for(session index) → {"buyer", "seller"}, close() → failure counts); each
    model call takes at most ``timeout_s`` in all."""
    client = ModelClient(base_url, model, timeout_s=timeout_s, seed=seed)
    failures: dict[str, int] = {}
    negotiator = ModelNegotiator(client, failures)

    def speakers_for(_session: int) -> dict:
        return {"buyer": negotiator, "seller": negotiator}

    def close() -> dict:
        client.close()
        return {**failures, "model_turns": negotiator.made}

    return speakers_for, close
