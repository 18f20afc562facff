"""One negotiation session's state, shared by the failure detector (``detector.py``), the
repair executor (``repair.py``) and the session loop (``dialogue.py``): the parties and what
the names mean to each, the grounding tracker, the offers made and rejected, the repair
bookkeeping — and what all of them read of it (a side's reading of a name, its revealed
concessions, the names a repair is about, the Argent signals a turn carries).

* **Argent signals**: layer 1 on every message (task id, goal hash robust to whitespace and
  punctuation, constraint checklist); layer 2 on uncertain turns (assumptions, confidence,
  alternatives); layer 3 role awareness, and the handoff context after a hand-over.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..argent import goal_hash
from .grounding import EFFECT, GOAL, Bandit, Detection, Tracker, Turn
from .world import ISSUES, NAMED, NUMERIC, Offer, OfferTable, Party, Session, candidate_offers

if TYPE_CHECKING:
    from .dialogue import Negotiation

_TABLE: OfferTable | None = None  # built on first use


class Speaker(Protocol):
    """A model negotiator (``model_agents.ModelNegotiator``, or a recording's taped or played
    one): its move at turn ``t`` — accept or an offer, a message, its signals — or None, and
    the embedded logic plays the turn. It may also speak repairs (``repair_line``,
    ``read_back``: looked up by name, an embedded side speaks those it lacks)."""

    def __call__(self, neg: Negotiation, t: int, role: str) -> dict[str, Any] | None: ...


class SessionState:
    """One seeded session between two negotiators (embedded by default): its state."""

    MAX_TURNS = 30

    def __init__(self, session: Session, repair: bool = True, bandit: Bandit | None = None,
                 effect: dict[str, dict[str, float]] | None = None, speakers: Mapping[str, Speaker] | None = None,
                 layers: int = 3):
        global _TABLE
        if _TABLE is None:
            _TABLE = OfferTable(candidate_offers())
        self.s, self.repair = session, repair
        self.bandit = bandit or Bandit()
        self.effect = effect or EFFECT
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([session.seed, 3])))
        self.tracker = Tracker(f"neg_{session.seed:05d}")
        self.turns: list[Turn] = []
        self.table = _TABLE
        self.offers = _TABLE.offers
        self.last_offer: dict[str, Offer | None] = {"buyer": None, "seller": None}
        self.last_prop: dict[str, str] = {}
        self.rejected: dict[str, list[Offer]] = {"buyer": [], "seller": []}
        self.goal = {"buyer": GOAL, "seller": GOAL}
        self.cooldown: dict[str, int] = {}
        self.failed_repairs: dict[str, int] = {}
        self.disagreed: set[str] = set()
        self.pending_reward: list[tuple[str, int, float, int]] = []  # (arm, due turn, u before, grounded before)
        self.deferred: list[Detection] = []  # detections an initiator said "not yet" to (retried once)
        self.not_yet = 0
        self.agreement: Offer | None = None
        self.walked_away = False
        self.speakers = speakers  # optional model negotiators: {"buyer": callable, "seller": callable}
        self.layers = layers  # Argent layers in use: 0 none, 1, 2 (1+2), 3 (1+2+3)
        self.defaults = {r: copy.deepcopy(self.party(r).definitions) for r in ("buyer", "seller")}  # the firms' own
        self.knows_limit = {"buyer": False, "seller": False}  # has read the other side's hard limit (layer 1)
        self.stated_hash: dict[str, str] = {}  # the goal hash each side last sent (a model may send its own)
        self.last_signals: dict[str, dict[str, Any]] = {"buyer": {}, "seller": {}}
        self.drift_seen = False  # a goal-hash mismatch was noticed (layer 3 answers it with a calibration)
        self.agent_no = {"buyer": 1, "seller": 1}  # a hand-over brings the side's next negotiator
        self.handoff_note: dict[str, dict[str, Any]] = {}
        self.interventions: dict[str, int] = {}  # calibrations, goal clarifications, constraint alerts, checks
        self.completed = False  # the deal meets every initial requirement
        self.checked: set[str] = set()  # offers a low-confidence check has asked about
        self.forced: dict[int, str] = {}  # turn → repair strategy chosen by hand (a fork), not by the bandit
        self.clarity = {"buyer": 0.5, "seller": 0.5}  # clarity reputation: repairs a side started that worked
        # what each side has said it means by each name (kept across a hand-over: the other side
        # remembers what was said, whoever says it now)
        self.said_readings: dict[str, dict[str, int]] = {"buyer": {}, "seller": {}}
        self.introduces: set[str] = set()  # a side whose new negotiator has not yet said what it means

    def party(self, role: str) -> Party:
        return self.s.buyer if role == "buyer" else self.s.seller

    def target(self, p: Party, t: int) -> float:
        f: float = (t / self.MAX_TURNS) ** (1.0 / p.traits["toughness"])
        return p.reservation + (1 - p.reservation) * (1 - f)

    def grounded_count(self) -> int:
        return sum(1 for e in self.tracker.entities.values() if e["grounded"])

    def _count(self, kind: str) -> None:
        self.interventions[kind] = self.interventions.get(kind, 0) + 1

    def reading(self, role: str, key: str) -> int:
        issue, name = key.split(":")
        return self.party(role).definitions[issue][name]

    def concessions(self, role: str) -> dict[str, float]:
        """How far ``role``'s own offers moved toward the other side's, per issue, over the
        dialogue (its revealed concessions: from the offers made, nothing private)."""
        mine = [x.offer for x in self.turns if x.speaker == role and x.kind == "propose" and x.offer]
        theirs = [x.offer for x in self.turns if x.speaker != role and x.kind == "propose" and x.offer]
        if len(mine) < 2 or not theirs:
            return {}
        first, last, target = mine[0], mine[-1], theirs[-1]
        out: dict[str, float] = {}
        for i, (lo, hi) in NUMERIC.items():
            out[i] = (abs(first[i] - target[i]) - abs(last[i] - target[i])) / (hi - lo)
        for i in NAMED:
            out[i] = 0.5 * ((first[i] != target[i]) - (last[i] != target[i]))
        return out

    def repair_keys(self, topic: str) -> list[str]:
        """The names a repair on ``topic`` is about: the issue's names used so far, or — for a
        topic that is not an issue (a vague reference, a stance …) — the names of the offer on
        the table."""
        ents = self.tracker.entities
        if topic in NAMED:
            keys = sorted(k for k, e in ents.items() if k.startswith(topic + ":") and e["used"])
        else:
            props = [p for p in self.tracker.propositions.values() if p["status"] == "pending"] or \
                list(self.tracker.propositions.values())
            keys = [f"{i}:{props[-1]['content'][i]}" for i in NAMED] if props else []
        return [k for k in keys if not self.tracker.is_grounded(k)]  # settled names need no repair

    def open_keys(self, det: Detection) -> list[str]:
        """The names a repair on detection ``det`` settles: those it is about that are not
        grounded yet (a strategy misjudgment: the names on the table)."""
        if "keys" not in det:
            return self.repair_keys(det["topic"])
        return [k for k in det["keys"] if not self.tracker.is_grounded(k)]

    def _signals(self, role: str, t: int, offer: Offer | None, alternative: Offer | None) -> dict[str, Any]:
        p = self.party(role)
        sig: dict[str, dict[str, Any]] = {}
        if self.layers >= 1:
            sig["layer1"] = {"task_id": self.tracker.session,
                             "goal_hash": self.stated_hash.get(role, goal_hash(self.goal[role])),
                             "constraints": [f"utility >= {p.reservation:.2f}", f"deadline {self.MAX_TURNS} turns",
                                             p.must_text()]}
        if self.layers >= 2 and self.tracker.uncertainty > 0.45 and offer is not None:
            sig["layer2"] = {"assumptions": {f"{i}:{offer[i]}": p.definitions[i][offer[i]] for i in NAMED},
                             "confidence": round(1 - self.tracker.uncertainty, 2),
                             "alternatives": [alternative] if alternative else []}
        if self.layers >= 3:
            sig["layer3"] = {"role_awareness": {"role": role, "agent": f"{role}-{self.agent_no[role]}",
                                                "commits_to": list(ISSUES)}}
            if role in self.handoff_note:
                sig["layer3"]["handoff_context"] = self.handoff_note.pop(role)
        return sig
