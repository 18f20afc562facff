"""The negotiation's dialogue data: the repair strategies and what they do in the simulated
world, the detector's confidences, the repair bandit, the grounding tracker and a turn.

* **Dialogue grounding tracker** (:class:`Tracker`): entities (the named terms) with
  attributes and a grounded flag, propositions (offers) with a status, the action history, and
  an uncertainty score; saved per session to SQLite.
* **Grounding** is read from what the agents state, never from their private definitions: an
  entity's readings are the levels each side has stated for it (layer-2 assumptions, repair
  utterances and answers, a drafted contract), merged per turn; it is grounded while both
  sides' stated readings agree.
* **Repair bandit** (:class:`Bandit`): UCB1 over the five strategies, rewarded by the
  uncertainty drop over the next 3 turns and by key terms newly grounded.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Required, TypedDict

from .world import NAMED, Offer

STRATEGIES = ("confirming_restatement", "exploratory_question", "offering_options", "revealing_assumptions",
              "rebuilding_consensus")
# How often each strategy actually restores common ground, per failure type: the simulated
# world's truth, unknown to the bandit (which strategy fits which failure type).
EFFECT = {
    "confirming_restatement": {"undefined_term": .45, "contradiction": .3, "vague_reference": .85,
                               "extreme_statement": .3, "backtracking": .4, "inheritance": .5,
                               "assumption_conflict": .5},
    "exploratory_question": {"undefined_term": .8, "contradiction": .5, "vague_reference": .5, "extreme_statement": .3,
                             "backtracking": .3, "inheritance": .65, "assumption_conflict": .7},
    "offering_options": {"undefined_term": .7, "contradiction": .6, "vague_reference": .6, "extreme_statement": .3,
                         "backtracking": .4, "inheritance": .5, "assumption_conflict": .65},
    "revealing_assumptions": {"undefined_term": .5, "contradiction": .75, "vague_reference": .3,
                              "extreme_statement": .6, "backtracking": .5, "inheritance": .5,
                              "assumption_conflict": .85},
    "rebuilding_consensus": {"undefined_term": .3, "contradiction": .5, "vague_reference": .3, "extreme_statement": .6,
                             "backtracking": .7, "inheritance": .4, "assumption_conflict": .4},
}
# Each failure type's confidence: how often a detection of that type was real (the two sides
# read a name it is about differently) on the seeds the detector was tuned on, 1–3 — measured
# by ``python bench/detector_precision.py --seeds 1 2 3``. The figures on 11–20 are in
# docs/negotiation.md (its detector section).
CONFIDENCE = {"assumption_conflict": 1.0, "backtracking": 0.94, "contradiction": 0.92, "extreme_statement": 0.88,
              "inheritance": 0.91, "response_expectation": 0.96, "strategy_misjudgment": 0.94, "undefined_term": 0.9,
              "vague_reference": 0.92, "value_opacity": 0.8}  # value_opacity: not raised on 1–3, left at 0.8
COMMUNICATION_COST = 0.004  # utility each side pays per repair turn (time and attention)
# How each strategy reads to a model asked to speak it (and the anti-loop yes/no question).
STRATEGY_HOW = {
    "confirming_restatement": "restate what you take the name(s) to mean and ask them to confirm",
    "exploratory_question": "ask an open question about what they mean by the name(s)",
    "offering_options": "offer the possible meanings as options and ask which one they mean",
    "revealing_assumptions": "say plainly which scope level you assumed each name means",
    "rebuilding_consensus": "recall what you both agree on and rebuild from there",
    "yes_no_confirmation": "ask a yes/no question: do they mean exactly your reading?",
}
GOAL = "Agree on price, delivery time, payment terms, support scope and the AI feature."


def relative(key: str) -> bool:
    """Whether a name sits inside its issue's scale ("standard" support, "basic" AI feature)
    rather than at an end ("basic" or "premium" support, "none", "full"). The detector's one
    prior about words: an end of a scale is anchored by being the end, a name in the middle is
    relative — the one a first use, a bare reference or a changed offer may leave misread. Only
    what a side *states* (layer 2, a repair, a drafted contract) is evidence about an end."""
    issue, name = key.split(":")
    return name in NAMED[issue][1:-1]


class Detection(TypedDict, total=False):
    """One detection, JSON as a turn records it: its failure type, topic (an issue, or what
    else it is about), confidence and impact; the names it is about (``keys``), the issue a
    strategy misjudgment named (``stated``), the simulation's truth (``real``, never read by
    the detector) and whether its initiator said "not yet" to it once (``put_off``)."""

    type: Required[str]
    topic: Required[str]
    confidence: Required[float]
    impact: Required[float]
    keys: list[str]
    stated: str
    real: bool
    put_off: bool


def found_(kind: str, topic: str, impact: float, keys: list[str] | None = None,
           stated: str | None = None) -> Detection:
    """One detection: its failure type, topic (an issue, or what else it is about), its
    confidence (the type's, :data:`CONFIDENCE`) and impact; ``keys``, ``stated`` when given."""
    found: Detection = {"type": kind, "topic": topic, "confidence": CONFIDENCE[kind], "impact": impact}
    if keys is not None:
        found["keys"] = keys
    if stated is not None:
        found["stated"] = stated
    return found


class Bandit:
    """UCB1 over the repair strategies; shared across the sessions of a run, so it learns."""

    def __init__(self, arms: Sequence[str] = STRATEGIES, c: float = 0.6):
        self.arms, self.c = list(arms), c
        self.pulls = {a: 0 for a in self.arms}
        self.value = {a: 0.0 for a in self.arms}
        self.history: list[str] = []

    def choose(self) -> str:
        total = sum(self.pulls.values())
        for a in self.arms:
            if self.pulls[a] == 0:
                return a
        arm = max(self.arms, key=lambda a: self.value[a] + self.c * math.sqrt(math.log(total) / self.pulls[a]))
        return arm

    def update(self, arm: str, reward: float) -> None:
        self.pulls[arm] += 1
        self.value[arm] += (reward - self.value[arm]) / self.pulls[arm]
        self.history.append(arm)

    def stats(self) -> dict[str, dict[str, float]]:
        return {a: {"pulls": self.pulls[a], "mean_reward": round(self.value[a], 3)} for a in self.arms}

    def state(self) -> dict[str, Any]:
        """What it has learnt so far, JSON-ready (a recording keeps it at each session's start)."""
        return {"c": self.c, "pulls": dict(self.pulls), "value": dict(self.value), "history": list(self.history)}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Bandit:
        bandit = cls(list(state["pulls"]), state["c"])
        bandit.pulls, bandit.value = dict(state["pulls"]), dict(state["value"])
        bandit.history = list(state["history"])
        return bandit


class Entity(TypedDict):
    """A named term on the grounding board ("support:standard")."""

    attributes: dict[str, int]  # role → the level it stated the name means
    grounded: bool  # both sides' stated readings agree
    used: int  # offers that used it


class Proposition(TypedDict):
    """An offer on the grounding board ("prop_7")."""

    content: Offer
    proponent: str
    status: str  # pending, countered, accepted, rejected


@dataclass
class Tracker:
    """The dialogue grounding tracker for one session."""

    session: str
    entities: dict[str, Entity] = field(default_factory=dict)
    propositions: dict[str, Proposition] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    uncertainty: float = 0.0
    recent_flags: float = 0.0

    def is_grounded(self, key: str) -> bool:
        """Whether ``key`` is on the board and both sides' stated readings of it agree."""
        ent = self.entities.get(key)
        return ent is not None and ent["grounded"]

    def readings(self, key: str) -> dict[str, int]:
        """The levels the sides have stated ``key`` means, by role (empty: none stated)."""
        ent = self.entities.get(key)
        return ent["attributes"] if ent is not None else {}

    def use_terms(self, offer: Offer) -> list[str]:
        """Count the names an offer uses; returns those used for the first time."""
        new = []
        for issue in NAMED:
            key = f"{issue}:{offer[issue]}"
            ent = self.entities.setdefault(key, {"attributes": {}, "grounded": False, "used": 0})
            if ent["used"] == 0:
                new.append(key)
            ent["used"] += 1
        return new

    def merge(self, turn: int, statements: list[tuple[str, str, int]]) -> list[str]:
        """Merge one turn's stated readings ``(key, role, level)``; an entity is grounded while
        both sides' stated readings agree. Returns the keys that became grounded."""
        touched = []
        for key, role, level in statements:
            ent = self.entities.setdefault(key, {"attributes": {}, "grounded": False, "used": 0})
            ent["attributes"][role] = int(level)
            touched.append(key)
        out = []
        for key in dict.fromkeys(touched):
            ent = self.entities[key]
            was, readings = ent["grounded"], ent["attributes"]
            ent["grounded"] = len(readings) == 2 and len(set(readings.values())) == 1
            if ent["grounded"] and not was:
                out.append(key)
                self.history.append({"turn": turn, "action": "grounded", "target": key})
        return out

    def update_uncertainty(self) -> float:
        ungrounded = sum(1 for e in self.entities.values() if not e["grounded"] and e["used"])
        pending = sum(1 for p in self.propositions.values() if p["status"] == "pending")
        self.recent_flags *= 0.6
        self.uncertainty = float(min(1.0, 0.18 * ungrounded + 0.04 * min(pending, 4) + self.recent_flags))
        return self.uncertainty

    def as_json(self) -> str:
        return json.dumps({"session_id": self.session, "grounding_status": {
            "entities": self.entities, "propositions": self.propositions, "action_history": self.history},
            "uncertainty_score": self.uncertainty})


@dataclass
class Turn:
    index: int
    speaker: str
    kind: str  # propose, accept, repair, calibrate, agree_to_disagree
    text: str
    signals: dict[str, Any]
    detections: list[Detection] = field(default_factory=list)
    strategy: str | None = None
    uncertainty: float = 0.0
    reply: str = ""  # a repair: the other side's answer
    restored: bool | None = None  # a repair: the answer's reading matches the initiator's
    changed: bool | None = None  # a repair: the answer's reading differs from what that side held before
    needed: bool | None = None  # a repair: the two sides' readings differed going in
    spoken_by_model: bool = False  # a repair: a model wrote both utterances
    offer: Offer | None = None  # a proposal: the offer made
