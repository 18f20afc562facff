"""Grounding tracker, failure detector, repair executor, Argent signals and the session loop.

* **Dialogue grounding tracker**: entities (the named terms) with attributes
  and a grounded flag, propositions (offers) with a status, the action history, and an
  uncertainty score; saved per session to SQLite.
* **Failure detector** (§3.2): vague references, undefined terms, contradictions with history
  (an offer rejected that the proposer read as better for the rejecter), extreme statements,
  proposal backtracking, attribute-inheritance contradictions, and — from Argent layer-2
  signals — assumption conflicts. Each detection has a confidence (its type's measured
  precision, ``CONFIDENCE``) and an impact; only confident, high-impact ones above the phase's
  threshold trigger a repair, and a topic cools down after one. The detector's one prior is
  :func:`relative`: a name in the middle of its scale is the one a first use or a changed offer
  leaves misread, an end of the scale is anchored — detections are about the relative names
  not yet grounded (``keys``), and one about none is dropped. The simulation's truth for each
  detection (did the two sides read a name it is about differently at that moment) is kept as
  ``real`` beside it, never read by the detector: ``bench/detector_precision.py`` reports
  precision per type and ``--all-names`` the ablation without the prior.
* **Repair executor** (§3.3, §4.2): five strategies picked by a UCB1 bandit, rewarded by the
  uncertainty drop over the next 3 turns and by key terms newly grounded; the party with more
  at stake initiates — or, by its clarification propensity, says "not yet" and lets it ride a
  turn; after two failed repairs on a topic the anti-loop rule asks a yes/no confirmation, and
  if that fails the parties agree to disagree on it. A repair is two utterances: the initiator
  states its reading of the names in question in the chosen strategy, the other side answers
  with the reading it now holds. It *worked* when the answer's reading matches the
  initiator's — judged from what the other side said. Model negotiators write both
  utterances; embedded ones use a template, and their answer is **simulated**: the other side
  takes the stated reading with the probability in ``EFFECT`` (the simulated world's truth).
  Each repair turn costs both sides ``COMMUNICATION_COST`` of utility.
* **Grounding** is read from what the agents state, never from their private definitions: an
  entity's readings are the levels each side has stated for it (layer-2 assumptions, repair
  utterances and answers, a drafted contract), merged per turn; it is grounded while both
  sides' stated readings agree.
* **Argent signals**: layer 1 on every message (task id, goal hash robust to
  whitespace and punctuation, constraint checklist); layer 2 on uncertain turns (assumptions,
  confidence, alternatives); layer 3 drift alerts that open a one-turn calibration.
"""

from __future__ import annotations

import copy
import json
import math
import re
import sqlite3
from dataclasses import dataclass, field

import numpy as np

from ...brains.prompt import estimate_tokens
from ..argent import goal_hash
from .world import ISSUES, LEVELS, NAMED, NUMERIC, OfferTable, Party, Session, candidate_offers

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
# by ``python bench/detector_precision.py --seeds 1 2 3``. The README's figures are on 11–20.
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
_TABLE = None  # built on first use (OfferTable)


def relative(key: str) -> bool:
    """Whether a name sits inside its issue's scale ("standard" support, "basic" AI feature)
    rather than at an end ("basic" or "premium" support, "none", "full"). The detector's one
    prior about words: an end of a scale is anchored by being the end, a name in the middle is
    relative — the one a first use, a bare reference or a changed offer may leave misread. Only
    what a side *states* (layer 2, a repair, a drafted contract) is evidence about an end."""
    issue, name = key.split(":")
    return name in NAMED[issue][1:-1]


def found_(kind: str, topic: str, impact: float, **more) -> dict:
    """One detection: its failure type, topic (an issue, or what else it is about), its
    confidence (the type's, :data:`CONFIDENCE`) and impact; ``keys``, ``stated`` … as given."""
    return {"type": kind, "topic": topic, "confidence": CONFIDENCE[kind], "impact": impact, **more}
GOAL = "Agree on price, delivery time, payment terms, support scope and the AI feature."


class Bandit:
    """UCB1 over the repair strategies; shared across the sessions of a run, so it learns."""

    def __init__(self, arms=STRATEGIES, c: float = 0.6):
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

    def stats(self) -> dict:
        return {a: {"pulls": self.pulls[a], "mean_reward": round(self.value[a], 3)} for a in self.arms}

    def state(self) -> dict:
        """What it has learnt so far, JSON-ready (a recording keeps it at each session's start)."""
        return {"c": self.c, "pulls": dict(self.pulls), "value": dict(self.value), "history": list(self.history)}

    @classmethod
    def from_state(cls, state: dict) -> Bandit:
        bandit = cls(list(state["pulls"]), state["c"])
        bandit.pulls, bandit.value = dict(state["pulls"]), dict(state["value"])
        bandit.history = list(state["history"])
        return bandit


@dataclass
class Tracker:
    """The dialogue grounding tracker for one session."""

    session: str
    entities: dict = field(default_factory=dict)  # "support:standard" → {"attributes", "grounded", "used"}
    propositions: dict = field(default_factory=dict)  # "prop_7" → {"content", "proponent", "status"}
    history: list = field(default_factory=list)
    uncertainty: float = 0.0
    recent_flags: float = 0.0

    def use_terms(self, offer: dict) -> list[str]:
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
    signals: dict
    detections: list = field(default_factory=list)
    strategy: str | None = None
    uncertainty: float = 0.0
    reply: str = ""  # a repair: the other side's answer
    restored: bool | None = None  # a repair: the answer's reading matches the initiator's
    changed: bool | None = None  # a repair: the answer's reading differs from what that side held before
    needed: bool | None = None  # a repair: the two sides' readings differed going in
    spoken_by_model: bool = False  # a repair: a model wrote both utterances
    offer: dict | None = None  # a proposal: the offer made


class Negotiation:
    """One seeded session between two negotiators (embedded by default)."""

    MAX_TURNS = 30

    def __init__(self, session: Session, repair: bool = True, bandit: Bandit | None = None, effect: dict | None = None,
                 speakers=None, layers: int = 3):
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
        self.last_offer: dict[str, dict | None] = {"buyer": None, "seller": None}
        self.last_prop: dict[str, str] = {}
        self.rejected: dict[str, list[dict]] = {"buyer": [], "seller": []}
        self.goal = {"buyer": GOAL, "seller": GOAL}
        self.cooldown: dict[str, int] = {}
        self.failed_repairs: dict[str, int] = {}
        self.disagreed: set[str] = set()
        self.pending_reward: list[tuple[str, int, float, int]] = []  # (arm, due turn, u before, grounded before)
        self.deferred: list[dict] = []  # detections an initiator said "not yet" to (retried once)
        self.not_yet = 0
        self.agreement: dict | None = None
        self.walked_away = False
        self.speakers = speakers  # optional model negotiators: {"buyer": callable, "seller": callable}
        self.layers = layers  # Argent layers in use: 0 none, 1, 2 (1+2), 3 (1+2+3)
        self.defaults = {r: copy.deepcopy(self.party(r).definitions) for r in ("buyer", "seller")}  # the firms' own
        self.knows_limit = {"buyer": False, "seller": False}  # has read the other side's hard limit (layer 1)
        self.stated_hash: dict[str, str] = {}  # the goal hash each side last sent (a model may send its own)
        self.last_signals: dict[str, dict] = {"buyer": {}, "seller": {}}
        self.drift_seen = False  # a goal-hash mismatch was noticed (layer 3 answers it with a calibration)
        self.agent_no = {"buyer": 1, "seller": 1}  # a hand-over brings the side's next negotiator
        self.handoff_note: dict[str, dict] = {}
        self.interventions: dict[str, int] = {}  # calibrations, goal clarifications, constraint alerts, checks
        self.completed = False  # the deal meets every initial requirement
        self.checked: set[str] = set()  # offers a low-confidence check has asked about
        self.forced: dict[int, str] = {}  # turn → repair strategy chosen by hand (a fork), not by the bandit
        self.clarity = {"buyer": 0.5, "seller": 0.5}  # clarity reputation: repairs a side started that worked
        # what each side has said it means by each name (kept across a hand-over: the other side
        # remembers what was said, whoever says it now)
        self.said_readings: dict[str, dict[str, int]] = {"buyer": {}, "seller": {}}
        self.introduces: set[str] = set()  # a side whose new negotiator has not yet said what it means

    # ------------------------------------------------------------ helpers

    def party(self, role: str) -> Party:
        return self.s.buyer if role == "buyer" else self.s.seller

    def target(self, p: Party, t: int) -> float:
        f = (t / self.MAX_TURNS) ** (1.0 / p.traits["toughness"])
        return p.reservation + (1 - p.reservation) * (1 - f)

    def grounded_count(self) -> int:
        return sum(1 for e in self.tracker.entities.values() if e["grounded"])

    def _choose_offer(self, p: Party, t: int, other: dict | None) -> dict:
        """An offer worth at least today's target to ``p``, as close as possible to ``other``'s."""
        table = self.table
        u = table.utilities(p)
        mine = table.satisfies(p)  # its own hard limit, always
        ok = (u >= self.target(p, t)) & mine
        if self.knows_limit[p.role]:  # the other side's limit, read from its checklist (layer 1)
            both = ok & table.satisfies(self.party("seller" if p.role == "buyer" else "buyer"))
            if both.any():
                ok = both
        for issue in self.disagreed:  # set aside at their middle name
            ok &= table.names[issue] == 1
        if not ok.any():
            idx = np.flatnonzero(mine)
            return self.offers[int(idx[np.argmax(u[idx])])]
        if other is None:
            idx = np.flatnonzero(ok)
            return self.offers[int(idx[np.argmax(u[idx])])]
        d = np.zeros(len(self.offers))
        for i, (lo, hi) in NUMERIC.items():
            d += np.abs(table.numeric[i] - other[i]) / (hi - lo)
        for i in NAMED:
            d += 0.5 * (table.names[i] != NAMED[i].index(other[i]))
        d[~ok] = np.inf
        best = np.flatnonzero(d == d.min())
        return self.offers[int(best[np.argmax(u[best])])]

    def _signals(self, role: str, t: int, offer: dict | None, alternative: dict | None) -> dict:
        p = self.party(role)
        sig: dict[str, dict] = {}
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

    def _count(self, kind: str) -> None:
        self.interventions[kind] = self.interventions.get(kind, 0) + 1

    def _read_signals(self, role: str, t: int) -> str:
        """The speaker reads the other side's last signals before it answers (Argent's
        verification): learns the other's hard limit from its constraint checklist; a goal hash
        that differs from its own is a drift — answered by a calibration turn with layer 3, by a
        goal restatement otherwise (which the drifted side heeds half the time). Returns what the
        speaker adds to its message."""
        other = "seller" if role == "buyer" else "buyer"
        l1 = self.last_signals[other].get("layer1")
        if not isinstance(l1, dict):
            return ""
        if self.party(other).must_text() in l1.get("constraints", []):
            self.knows_limit[role] = True
        if l1.get("goal_hash") == goal_hash(self.goal[role]):
            return ""
        if self.layers >= 3:
            self.drift_seen = True
            return ""
        self._count("goal_clarification")
        for r in (role, other):  # the side whose goal is not the task's re-reads it — or ignores the note
            if goal_hash(self.goal[r]) != goal_hash(GOAL) and self.rng.random() < 0.5:
                self.goal[r] = GOAL
        self.stated_hash.pop(other, None)
        return f"My understanding of the goal: {GOAL} "

    def _hand_over(self, t: int) -> None:
        """A side's negotiator hands over to a colleague. With layer 3 a handoff context (done,
        open, next) carries what was settled; without it the colleague starts from the firm's own
        definitions, has not read the other side's limit, and what its predecessor said no longer
        stands."""
        if self.s.handoff is None or t != self.s.handoff[1]:
            return
        role = self.s.handoff[0]
        self.agent_no[role] += 1
        self.tracker.history.append({"turn": t, "agent": role, "action": "handoff"})
        ents = self.tracker.entities
        if self.layers >= 3:
            self.handoff_note[role] = {"done": sorted(k for k, e in ents.items() if e["grounded"]),
                                       "open": sorted(k for k, e in ents.items() if e["used"] and not e["grounded"]),
                                       "next": "carry on from the offer on the table"}
            return
        self.party(role).definitions = copy.deepcopy(self.defaults[role])
        self.introduces.add(role)  # the colleague says what it means by the names in its first offer
        self.knows_limit[role] = False
        self.rejected[role] = []
        for e in ents.values():
            e["attributes"].pop(role, None)
            e["grounded"] = False

    # ------------------------------------------------------------ detection

    def detect(self, role: str, offer: dict | None, text: str, signals: dict, t: int) -> list[dict]:
        """What in this turn looks like a misunderstanding, by failure type, each with a
        confidence and an impact — read from the dialogue only: the words, the offers made and
        rejected, the readings stated, the signals. Never a party's private utility, weights or
        reservation (tests/test_negotiation.py checks it). A type's confidence is its measured
        precision on the tuning seeds (``CONFIDENCE``); its impact is set so that every type can
        pass the gate (≥ 0.6 confidence, ≥ 0.4 impact, product ≥ the phase's threshold). What
        is returned is about relative, ungrounded names only (:meth:`about_names`)."""
        other = "seller" if role == "buyer" else "buyer"
        found = self._said(text) + self._unanswered(role, other, offer) + self._priorities(role, other, text)
        if offer is not None:
            found += self._offer_failures(role, other, offer)
        if "layer2" in signals:
            found += self._assumption_conflicts(other, signals["layer2"]["assumptions"])
        self.tracker.recent_flags += 0.05 * len(found)  # every sign of trouble raises the uncertainty …
        return self.about_names(found)  # … but only one with names open to misreading is for repair

    def about_names(self, found: list[dict]) -> list[dict]:
        """Each detection names what a repair on it would settle (``keys``): a detection read
        from words or offers is about the relative names among those in question (see
        :func:`relative`) that are not grounded yet; one with none left is dropped — there is
        nothing a repair could settle. A strategy misjudgment is about priorities, not names."""
        out = []
        for d in found:
            if d["type"] != "strategy_misjudgment":
                keys = d["keys"] if "keys" in d else [k for k in self.repair_keys(d["topic"]) if relative(k)]
                d["keys"] = [k for k in keys if not self.tracker.entities.get(k, {}).get("grounded")]
                if not d["keys"]:
                    continue
            out.append(d)
        return out

    def _said(self, text: str) -> list[dict]:
        """Vague references (only when the referent cannot be resolved), extreme statements and
        "but you said" in the words of the turn."""
        patterns = ((r"\b(absolutely not|no way|never)\b", "extreme_statement", "stance", 0.7),
                    (r"\bbut you said\b", "contradiction", "history", 0.7))  # points at what was said before
        found = [found_(kind, topic, impact) for pattern, kind, topic, impact in patterns
                 if re.search(pattern, text, re.I)]
        if re.search(r"\b(that offer|it|as above)\b", text, re.I) and not self._one_referent():
            found.insert(0, found_("vague_reference", "reference", 0.7))
        return found

    def _one_referent(self) -> bool:
        """A bare reference ("that offer", "it") points at one thing only when the turn just
        before was an offer; after a repair, a check or a calibration it could mean the offer
        or what was just restated."""
        return bool(self.turns) and self.turns[-1].kind == "propose"

    def _priorities(self, role: str, other: str, text: str) -> list[dict]:
        """Strategy misjudgment: the speaker says what the other side cares most about, and the
        other side's own offers conceded most on exactly that issue (one does not give most on
        what matters most)."""
        m = re.search(r"\bI know (\w+) matters most to you\b", text)
        if m is None or m.group(1) not in ISSUES:
            return []
        conceded = self.concessions(other)
        if conceded and max(conceded, key=lambda i: conceded[i]) == m.group(1) and conceded[m.group(1)] > 0:
            return [found_("strategy_misjudgment", "priorities", 0.75, stated=m.group(1))]
        return []

    def concessions(self, role: str) -> dict[str, float]:
        """How far ``role``'s own offers moved toward the other side's, per issue, over the
        dialogue (its revealed concessions: from the offers made, nothing private)."""
        mine = [x.offer for x in self.turns if x.speaker == role and x.kind == "propose" and x.offer]
        theirs = [x.offer for x in self.turns if x.speaker != role and x.kind == "propose" and x.offer]
        if len(mine) < 2 or not theirs:
            return {}
        first, last, target = mine[0], mine[-1], theirs[-1]
        out = {}
        for i, (lo, hi) in NUMERIC.items():
            out[i] = (abs(first[i] - target[i]) - abs(last[i] - target[i])) / (hi - lo)
        for i in NAMED:
            out[i] = 0.5 * ((first[i] != target[i]) - (last[i] != target[i]))
        return out

    def _unanswered(self, role: str, other: str, offer: dict | None) -> list[dict]:
        """Asked about a name in a repair, answered as if not asked (the same level again)."""
        asked = self.turns[-1] if self.turns else None
        if asked is None or asked.kind != "repair" or asked.speaker != other or offer is None \
                or not asked.detections or asked.detections[0]["topic"] not in NAMED:
            return []
        topic, prev = asked.detections[0]["topic"], self.last_offer[role]
        if prev is not None and prev[topic] == offer[topic]:
            return [found_("response_expectation", "response", 0.8)]
        return []

    def _offer_failures(self, role: str, other: str, offer: dict) -> list[dict]:
        """Undefined terms, a counter-offer that contradicts the speaker's own positions,
        backtracking, attribute-inheritance contradictions — from the offers on record."""
        found = []
        theirs = self.last_offer[other]
        for key in self.tracker.use_terms(offer):
            issue = key.split(":")[0]
            if not relative(key):
                continue  # an end of the scale: anchored
            contested = theirs is not None and theirs[issue] != offer[issue]  # the sides name it differently
            found.append(found_("undefined_term", issue, 0.75 if contested else 0.6, keys=[key]))
        prev = self.last_offer[role]
        if theirs is not None and prev is not None and self._gives_all_asked(role, prev, theirs):
            # the other side offered at least what the speaker itself asked on every number, and
            # the speaker counters anyway: it must read a named term otherwise
            named = [i for i in NAMED if theirs[i] != prev[i]]
            found.append(found_("contradiction", named[0] if named else "history", 0.7,
                                keys=[f"{i}:{theirs[i]}" for i in named if relative(f"{i}:{theirs[i]}")]))
        # backtracking: an offer the proposer rejected before, or one that takes back a concession
        # (a number it had moved toward the other side moved back away by a tenth of its range)
        taken_back = prev is not None and theirs is not None and any(
            self._conceded_before(role, i) and abs(offer[i] - theirs[i]) > abs(prev[i] - theirs[i]) + 0.1 * (hi - lo)
            for i, (lo, hi) in NUMERIC.items())
        if taken_back or any(all(offer[k] == r[k] for k in offer) for r in self.rejected[role]):
            found.append(found_("backtracking", "history", 0.8))
        if prev is not None and prev["price"] == offer["price"]:
            found += [found_("inheritance", issue, 0.7)
                      for issue in NAMED if prev[issue] != offer[issue]]
        return found

    def _conceded_before(self, role: str, issue: str) -> bool:
        """Whether ``role``'s offers had moved ``issue`` toward the other side's (from the offers made)."""
        return self.concessions(role).get(issue, 0.0) > 0

    def _gives_all_asked(self, role: str, mine: dict, theirs: dict) -> bool:
        """Whether ``theirs`` is at least what ``role``'s own offer ``mine`` asked on every
        number, in the direction ``role``'s offers have been pushing (from the offers made)."""
        first = next((x.offer for x in self.turns if x.speaker == role and x.kind == "propose" and x.offer), None)
        if first is None:
            return False
        for i in NUMERIC:
            push = np.sign(first[i] - theirs[i]) or np.sign(mine[i] - theirs[i])
            if push and np.sign(theirs[i] - mine[i]) == -push:
                return False  # it falls short of what I asked on this number
        return any(theirs[i] != mine[i] for i in NUMERIC)

    def _restated_otherwise(self, role: str, readings: list[tuple[str, str, int]]) -> list[dict]:
        """A contradiction with the speaker's own history: it now states another reading of a
        name than the one it stated before (a colleague after a hand-over often does)."""
        before = self.said_readings[role]
        found = [found_("contradiction", key.split(":")[0], 0.8, keys=[key])
                 for key, _, level in readings if before.get(key, level) != level]
        before.update({key: level for key, _, level in readings})
        return found

    def _assumption_conflicts(self, other: str, assumptions: dict) -> list[dict]:
        """The receiver compares the speaker's stated assumptions (layer 2) with its own readings."""
        found = []
        for key, level in assumptions.items():
            issue, name = key.split(":")
            if self.party(other).definitions[issue][name] != level and not self.tracker.entities[key]["grounded"]:
                found.append(found_("assumption_conflict", issue, 0.8, keys=[key]))
        return found

    def threshold(self, t: int) -> float:
        """Dynamic threshold: eager to ground early, focused mid-way, careful at the close."""
        if t < 6:
            return 0.35
        return 0.35 if t > 0.75 * self.MAX_TURNS else 0.5

    # ------------------------------------------------------------ repair

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
        return [k for k in keys if not ents.get(k, {}).get("grounded")]  # settled names need no repair

    def open_keys(self, det: dict) -> list[str]:
        """The names a repair on detection ``det`` settles: those it is about that are not
        grounded yet (a strategy misjudgment: the names on the table)."""
        if "keys" not in det:
            return self.repair_keys(det["topic"])
        return [k for k in det["keys"] if not self.tracker.entities.get(k, {}).get("grounded")]

    def initiator(self, topic: str) -> str:
        """Who starts a repair on ``topic``: by stake (what its own offers reveal: the side that
        conceded less on the issue cares more), turn-taking (the side that did not start the
        last repair) and its clarity reputation (repairs it started that restored ground)."""
        last = next((x.speaker for x in reversed(self.turns) if x.kind == "repair"), None)

        def score(r: str) -> float:
            conceded = self.concessions(r).get(topic, 0.0)
            return -conceded + 0.2 * (r != last) + 0.3 * self.clarity[r]
        return max(("buyer", "seller"), key=score)

    def reading(self, role: str, key: str) -> int:
        issue, name = key.split(":")
        return self.party(role).definitions[issue][name]

    def _repair_turn(self, t: int, det: dict, also: list[dict] | None = None) -> Turn:
        """A repair led by detection ``det``; the other urgent detections of the turn whose names
        it settles too (``also``) are repaired by it as well and listed after the leader."""
        topic, kind = det["topic"], det["type"]
        initiator = self.initiator(topic)
        responder = "seller" if initiator == "buyer" else "buyer"
        loops = self.failed_repairs.get(topic, 0)
        strategy = self.forced.get(t) or ("yes_no_confirmation" if loops >= 2 else self.bandit.choose())  # anti-loop
        keys = self.open_keys(det)
        settles = [det]
        for d in also or []:
            if d["type"] not in {x["type"] for x in settles} and "keys" in d and set(self.open_keys(d)) <= set(keys):
                settles.append(d)
        u_before, g_before = self.tracker.uncertainty, self.grounded_count()
        before = {k: self.reading(responder, k) for k in keys}
        mine = {k: self.reading(initiator, k) for k in keys}
        said = self._speak(initiator, "repair_line", t, strategy, det, keys, mine)
        if said is None:  # the embedded initiator: a template in the chosen strategy
            said = {"message": f"[{strategy.replace('_', ' ')}] about {topic}: " + ", ".join(
                f"by '{k.split(':')[1]} {k.split(':')[0]}' I mean level {mine[k]}" for k in keys), "readings": mine}
        answer = self._speak(responder, "read_back", t, strategy, said["message"], keys, before)
        by_model = answer is not None and said.get("model", False)
        if answer is None:  # simulated answer: with the world's probability the repair lands and the
            # other side states the reading it now holds; otherwise its answer leaves things unclear
            p_ok = 0.85 if strategy == "yes_no_confirmation" else self.effect[strategy].get(kind, 0.4)
            took = self.rng.random() < p_ok
            answer = {"readings": dict(said["readings"]) if took else {},
                      "message": ("understood, " + ", ".join(f"level {v} for '{k.split(':')[1]}'"
                                                             for k, v in said["readings"].items()) + " for me too"
                                  if took else "still unclear")}
        statements = [(k, initiator, said["readings"][k]) for k in keys] + \
            [(k, responder, answer["readings"][k]) for k in keys if k in answer["readings"]]
        for key, role, level in statements:  # from here on each side acts on the reading it stated
            issue, name = key.split(":")
            self.party(role).definitions[issue][name] = int(level)
            self.said_readings[role][key] = int(level)
        self.tracker.merge(t, statements)
        ok = bool(keys) and all(answer["readings"].get(k) == said["readings"][k] for k in keys)
        changed = any(k in answer["readings"] and answer["readings"][k] != before[k] for k in keys)
        needed = any(before[k] != said["readings"][k] for k in keys)  # the readings differed going in
        if ok:
            self.tracker.recent_flags = max(0.0, self.tracker.recent_flags - 0.3)
            self.failed_repairs.pop(topic, None)
        else:
            self.failed_repairs[topic] = loops + 1
        self.clarity[initiator] = min(1.0, max(0.0, self.clarity[initiator] + (0.1 if ok else -0.1)))
        text = said["message"]
        if not ok and loops >= 2 and topic in NAMED:
            self.disagreed.add(topic)
            text += f" — we agree to disagree on {topic} and set it aside"
        self.cooldown[topic] = t + 3
        if strategy in STRATEGIES:
            self.pending_reward.append((strategy, t + 3, u_before, g_before))
        self.tracker.history.append({"turn": t, "agent": initiator, "action": "repair", "strategy": strategy,
                                     "target": topic, "success": ok})
        return Turn(t, initiator, "repair", text, self._signals(initiator, t, None, None), settles, strategy,
                    reply=str(answer["message"]), restored=ok, changed=changed, needed=needed,
                    spoken_by_model=by_model)

    def _speak(self, role: str, what: str, *args):
        """A model negotiator's repair line or answer (None: the embedded side speaks)."""
        speaker = self.speakers.get(role) if self.speakers else None
        if speaker is None or not hasattr(speaker, what):
            return None
        return getattr(speaker, what)(self, role, *args)

    def _settle_rewards(self, t: int) -> None:
        keep = []
        for arm, due, u0, g0 in self.pending_reward:
            if t >= due:
                reward = max(0.0, u0 - self.tracker.uncertainty) + 0.5 * (self.grounded_count() - g0)
                self.bandit.update(arm, min(1.5, reward))
            else:
                keep.append((arm, due, u0, g0))
        self.pending_reward = keep

    # ------------------------------------------------------------ the loop

    def run(self) -> dict:
        for _ in self.iter_turns():
            pass
        return self.result()

    def iter_turns(self):
        """The session turn by turn (the window steps through it)."""
        queued: list[dict] = []
        role = "buyer"
        for t in range(self.MAX_TURNS):
            self._hand_over(t)
            self.tracker.update_uncertainty()
            self._settle_rewards(t)
            if queued and not self.open_keys(queued[0]):
                queued = []  # every name in question is grounded by now: nothing left to repair
            if self.repair and queued and not self._repair_now(t, queued[0]):
                self.deferred.append(queued[0])  # "not yet": it may come back once, next turn
                queued = []
            if self.repair and queued:
                turn = self._repair_turn(t, queued.pop(0), queued)
                queued.clear()
            elif self.drift_seen:  # a layer-3 drift alert opens a calibration turn
                self.goal = {"buyer": GOAL, "seller": GOAL}
                self.stated_hash.clear()
                self.drift_seen = False
                self._count("calibration")
                turn = Turn(t, role, "calibrate", "[drift alert] let us restate the goal: " + GOAL, {"layer3": {
                    "drift_alert": True, "issue": "goal hashes differ"}})
            else:
                turn = self._negotiate(t, role)
                role = "seller" if role == "buyer" else "buyer"
                if self.repair:
                    # communication has a cost: beyond ~11 % of the turns so far only a failure with
                    # a large expected impact (product ≥ 0.6) is worth another repair turn
                    spent = sum(1 for x in self.turns if x.kind == "repair")
                    budget = spent < 0.11 * max(t, 8)
                    again, self.deferred = self.deferred, []
                    urgent = [d for d in turn.detections + again if d["confidence"] >= 0.6 and d["impact"] >= 0.4
                              and d["confidence"] * d["impact"] >= self.threshold(t)
                              and (budget or d["confidence"] * d["impact"] >= 0.6)
                              and self.cooldown.get(d["topic"], -1) < t]
                    queued = sorted(urgent, key=lambda d: -d["confidence"] * d["impact"])  # the first leads
            turn.uncertainty = self.tracker.update_uncertainty()
            self._judge(turn)
            self.last_signals[turn.speaker] = turn.signals
            self.turns.append(turn)
            yield turn
            if self.agreement is not None or self.walked_away:
                break

    def _judge(self, turn: Turn) -> None:
        """The simulation's truth for each detection of a turn, kept beside it as ``real`` (the
        detector never reads it; a repair turn's detection was judged when it was made): a
        detection about names is real when the two sides read one of them differently at that
        moment — the misunderstanding a repair would be for; a strategy misjudgment when the
        issue it named is not what the other side's weights put first."""
        if turn.kind == "repair":
            return
        for d in turn.detections:
            if d["type"] == "strategy_misjudgment":
                weights = self.party("seller" if turn.speaker == "buyer" else "buyer").weights
                d["real"] = d.get("stated") != max(weights, key=lambda i: weights[i])
            else:
                d["real"] = any(self.reading("buyer", k) != self.reading("seller", k) for k in d["keys"])

    def _repair_now(self, t: int, det: dict) -> bool:
        """The initiator's choice: repair now, or "not yet" (by its clarification propensity;
        a detection already put off once is repaired now)."""
        if det.get("put_off"):
            return True
        clarify = self.party(self.initiator(det["topic"])).traits["clarify"]
        if self.rng.random() < 0.4 + 0.6 * clarify:
            return True
        det["put_off"] = True
        self.not_yet += 1
        self.tracker.history.append({"turn": t, "action": "not_yet", "target": det["topic"]})
        return False

    def _negotiate(self, t: int, role: str) -> Turn:
        """One negotiation turn: the goal may drift, the other side's offer is weighed (accepted,
        checked first, or it collapses at drafting), else a counter-offer is made."""
        other = "seller" if role == "buyer" else "buyer"
        incoming = self.last_offer[other]
        if self.rng.random() < 0.02:  # goal drift: only the wording changes (robust hash: no alarm) …
            self.goal[role] = self.goal[role].upper().replace(",", " ,")
        if self.rng.random() < 0.03:  # … or the goal itself narrows
            self.goal[role] = "Agree on the price."
        note = self._read_signals(role, t)
        model = self.speakers[role](self, t, role) if self.speakers and role in self.speakers else None
        if model is not None and isinstance((model.get("signals") or {}).get("layer1"), dict):
            sent = model["signals"]["layer1"].get("goal_hash")
            if sent != goal_hash(GOAL):  # the model's own goal hash goes out; the other side checks it
                self.stated_hash[role] = str(sent)
        if incoming is not None:
            turn, note = self._weigh(t, role, other, incoming, model, note)
            if turn is not None:
                return turn
        return self._propose(t, role, incoming, model, note)

    def _weigh(self, t: int, role: str, other: str, incoming: dict, model: dict | None,
               note: str) -> tuple[Turn | None, str]:
        """The other side's offer: accepted (after a layer-2 check when it came unsure, unless
        drafting the contract shows the two meant different things), or countered (None)."""
        p = self.party(role)
        u_in = p.utility(incoming)
        if goal_hash(self.goal[role]) != goal_hash(GOAL):  # a drifted negotiator only looks at the price
            lo, hi = NUMERIC["price"]
            x = (incoming["price"] - lo) / (hi - lo)
            u_in = min(u_in, x if p.role == "seller" else 1 - x)
        keeps_limit = p.satisfies(incoming)
        if not keeps_limit and self.layers >= 1:  # answer the mismatch with its checklist item
            note += f"My limit {p.must_text()} is missed. "
            self._count("constraint_alert")
        if keeps_limit and (model["accept"] if model is not None else u_in >= self.target(p, t)):
            open_names = [f"{i}:{incoming[i]}" for i in NAMED
                          if not self.tracker.entities.get(f"{i}:{incoming[i]}", {}).get("grounded")]
            confidence = (self.last_signals[other].get("layer2") or {}).get("confidence", 1.0)
            if self.layers >= 2 and confidence < 0.6 and open_names and self.last_prop[other] not in self.checked:
                self.checked.add(self.last_prop[other])
                return self._check_before_accepting(t, role, open_names, confidence), note
            unstated = [i for i in NAMED if relative(f"{i}:{incoming[i]}")
                        and not self.tracker.entities.get(f"{i}:{incoming[i]}", {}).get("attributes")]
            if self.repair and unstated and self.last_prop[other] not in self.checked:
                self.checked.add(self.last_prop[other])  # value opacity: a name nobody has said the meaning of
                return self._unstated_before_accepting(t, role, incoming, unstated), note
            mismatch = [i for i in NAMED if self.s.buyer.definitions[i][incoming[i]]
                        != self.s.seller.definitions[i][incoming[i]]]
            if mismatch:  # drafting the contract surfaces what each side meant: the deal falls through
                return self._deal_collapses(t, role, other, incoming, mismatch), note
            self.agreement = incoming
            self.completed = self.s.buyer.satisfies(incoming) and self.s.seller.satisfies(incoming) and all(
                goal_hash(g) == goal_hash(GOAL) for g in self.goal.values())
            self.tracker.propositions[self.last_prop[other]]["status"] = "accepted"
            self.tracker.history.append({"turn": t, "agent": role, "action": "accept"})
            return Turn(t, role, "accept", "Deal: I accept.", self._signals(role, t, incoming, None)), note
        self.rejected[role].append(incoming)
        self.tracker.propositions[self.last_prop[other]]["status"] = "countered"
        return None, note

    def _deal_collapses(self, t: int, role: str, other: str, incoming: dict, mismatch: list[str]) -> Turn:
        """The contract's draft shows the sides meant different things by ``mismatch``: the
        buyer learns the seller's meaning, the offer is rejected, and one side often walks away."""
        drafted = []
        for issue in mismatch:
            self.s.buyer.definitions[issue] = dict(self.s.seller.definitions[issue])
            level = self.s.seller.definitions[issue][incoming[issue]]
            drafted += [(f"{issue}:{incoming[issue]}", r, level) for r in ("buyer", "seller")]
        self.tracker.merge(t, drafted)
        self.tracker.propositions[self.last_prop[other]]["status"] = "rejected"
        self.tracker.history.append({"turn": t, "agent": role, "action": "deal_collapsed",
                                     "target": ",".join(mismatch)})
        self.tracker.recent_flags += 0.4
        self.last_offer[other] = None
        walk = self.rng.random() < 0.6  # feeling misled, one side often walks away
        if walk:
            self.walked_away = True
        return Turn(t, role, "dispute", "Drafting the contract shows we meant different things by "
                    + " and ".join(f"'{incoming[i]} {i.replace('_', ' ')}'" for i in mismatch)
                    + (": the deal falls through and we walk away." if walk else ": the deal falls through."),
                    self._signals(role, t, incoming, None))

    def _propose(self, t: int, role: str, incoming: dict | None, model: dict | None, note: str) -> Turn:
        """A (counter-)offer, in words, with its signals; what the speaker states it means by
        the names it used goes on the grounding board."""
        p = self.party(role)
        offer = self._choose_offer(p, t, incoming)
        alt = self._choose_offer(p, t, None)
        if model is not None and model.get("offer"):
            offer = model["offer"]
        text = self._offer_words(role, offer, incoming, note)
        self.tracker.propositions[f"prop_{t}"] = {"content": offer, "proponent": role, "status": "pending"}
        self.tracker.history.append({"turn": t, "agent": role, "action": "propose", "target": f"prop_{t}"})
        if model is not None and model.get("message"):
            text = note + model["message"]
        signals = self._signals(role, t, offer, alt if alt != offer else None)
        if model is not None and model.get("signals"):
            signals["model"] = model["signals"]
        dets = self.detect(role, offer, text, signals, t)
        stated, introduced = self._stated(role, offer, signals)
        text += introduced
        if stated is not None:  # what the speaker says it means by the names it used
            readings = [(k, role, int(v)) for k, v in stated.items()
                        if k in self.tracker.entities and type(v) is int and 0 <= v < LEVELS]
            dets += self.about_names(self._restated_otherwise(role, readings))
            self.tracker.merge(t, readings)
        self.last_offer[role] = offer
        self.last_prop[role] = f"prop_{t}"
        return Turn(t, role, "propose", text, signals, dets, offer=offer)

    def _offer_words(self, role: str, offer: dict, incoming: dict | None, note: str) -> str:
        """The offer as the embedded negotiator says it (a bare "that offer", an "Absolutely
        not", a read of the other side's priorities, by its traits and the seeded draws)."""
        p = self.party(role)
        pieces = [f"price {offer['price']:.0f}", f"delivery {offer['delivery_weeks']:.0f} weeks",
                  f"payment {offer['payment_days']:.0f} days", f"{offer['support']} support",
                  f"{offer['ai_feature']} AI feature"]
        text = note + "I propose " + ", ".join(pieces) + "."
        if incoming is None:
            return text
        if self.rng.random() < 0.35 * (1 - p.traits["directness"]):
            text = "About that offer: " + text
        if self.rng.random() < 0.2 * p.traits["directness"]:
            text = "Absolutely not. " + text
        took_back = self._taken_back("seller" if role == "buyer" else "buyer", role)
        if took_back and self.rng.random() < 0.3 + 0.5 * p.traits["directness"]:
            issue, value = took_back
            text = f"But you said {issue.replace('_', ' ')} {value:.0f} before. " + text
        if self.rng.random() < 0.2:  # a read of the other side's priorities
            held = self.concessions("seller" if role == "buyer" else "buyer")
            guess = min(held, key=lambda i: held[i]) if held and self.rng.random() < 0.6 else \
                ISSUES[int(self.rng.integers(len(ISSUES)))]
            text = f"I know {guess} matters most to you. " + text
        return text

    def _taken_back(self, other: str, role: str) -> tuple[str, float] | None:
        """A number ``other``'s latest offer moved back away from ``role``'s (by a tenth of its
        range) after its offer before had come toward it: (issue, the value it had offered)."""
        theirs = [x.offer for x in self.turns if x.speaker == other and x.kind == "propose" and x.offer]
        mine = self.last_offer[role]
        if len(theirs) < 2 or mine is None:
            return None
        before, now = theirs[-2], theirs[-1]
        for issue, (lo, hi) in NUMERIC.items():
            if abs(now[issue] - mine[issue]) > abs(before[issue] - mine[issue]) + 0.1 * (hi - lo):
                return issue, before[issue]
        return None

    def _stated(self, role: str, offer: dict, signals: dict) -> tuple[dict | None, str]:
        """The readings the speaker states with this offer (a model's layer 2, the embedded
        layer 2, or a new negotiator introducing itself — with the words that say so)."""
        said = signals.get("model") or {}
        stated = said["layer2"].get("assumptions") \
            if self.layers >= 2 and isinstance(said.get("layer2"), dict) else None
        if not isinstance(stated, dict) and "layer2" in signals:
            stated = signals["layer2"]["assumptions"]
        if role in self.introduces and not isinstance(stated, dict):  # a new negotiator states its readings
            self.introduces.discard(role)
            p = self.party(role)
            stated = {f"{i}:{offer[i]}": p.definitions[i][offer[i]] for i in NAMED}
            return stated, " " + " ".join(f"By '{offer[i]} {i.replace('_', ' ')}' we mean level "
                                          f"{stated[f'{i}:{offer[i]}']}." for i in NAMED)
        return (stated if isinstance(stated, dict) else None), ""

    def _unstated_before_accepting(self, t: int, role: str, incoming: dict, unstated: list[str]) -> Turn:
        """Value opacity: the deal would settle on a name whose meaning neither side has ever
        stated; before accepting, the speaker says so (the repair executor takes it up)."""
        self.tracker.history.append({"turn": t, "agent": role, "action": "check", "target": ",".join(unstated)})
        text = ("Before I accept: neither of us has said what we mean by "
                + " and ".join(f"'{incoming[i]} {i.replace('_', ' ')}'" for i in unstated) + ".")
        return Turn(t, role, "check", text, self._signals(role, t, None, None), self.about_names(
                    [found_("value_opacity", i, 0.7, keys=[f"{i}:{incoming[i]}"]) for i in unstated]))

    def _check_before_accepting(self, t: int, role: str, names: list[str], confidence: float) -> Turn:
        """Layer 2's low-confidence response: the offer came with confidence < 0.6, so before
        accepting it the speaker asks what the names in it mean (once per offer). Both sides state
        their readings; a difference is now on the table as an assumption conflict, for the repair
        executor (if repair is on) — the check itself settles nothing."""
        self._count("low_confidence_check")
        self.tracker.merge(t, [(key, r, self.reading(r, key)) for key in names for r in ("buyer", "seller")])
        differ = [k for k in names if self.reading("buyer", k) != self.reading("seller", k)]
        self.tracker.history.append({"turn": t, "agent": role, "action": "check", "target": ",".join(names)})
        text = (f"Your confidence was {confidence:.2f}; before I accept, what do we each mean by "
                + " and ".join(f"'{k.split(':')[1]} {k.split(':')[0]}'" for k in names) + "?")
        return Turn(t, role, "check", text, self._signals(role, t, None, None),
                    [found_("assumption_conflict", k.split(":")[0], 0.8, keys=[k]) for k in differ])

    def result(self) -> dict:
        turns = len(self.turns)
        repairs = sum(1 for x in self.turns if x.kind == "repair")  # calibrations count as drift interventions
        us = [x.uncertainty for x in self.turns] or [0.0]
        spent = sum(1 for x in self.turns if x.kind == "repair") * COMMUNICATION_COST
        if self.agreement is not None:
            ub, us_ = self.s.realised(self.agreement)
            ub, us_ = ub - spent, us_ - spent
            joint, fair = ub + us_, 1 - abs(ub - us_)
        else:
            ub = us_ = joint = fair = 0.0
        defs_b, defs_s = self.s.buyer.definitions, self.s.seller.definitions
        # a misunderstanding still open at the end: a name in play that the two sides still read differently
        unresolved = sum(1 for key, e in self.tracker.entities.items() if e["used"]
                         and defs_b[key.split(":")[0]][key.split(":")[1]]
                         != defs_s[key.split(":")[0]][key.split(":")[1]]) + len(self.disagreed)
        by_type: dict[str, list[int]] = {}  # type → [detections, repairs, repairs that restored ground]
        for turn in self.turns:
            if turn.kind == "repair":  # the detection that led it and those it settled too
                for d in turn.detections:
                    row = by_type.setdefault(d["type"], [0, 0, 0])
                    row[1] += 1
                    row[2] += bool(turn.restored)
            elif turn.kind != "repair":
                for d in turn.detections:
                    by_type.setdefault(d["type"], [0, 0, 0])[0] += 1
        return {"agreement": self.agreement is not None, "joint_utility": joint, "fairness": fair, "rounds": turns,
                "repair_share": repairs / max(1, turns), "uncertainty_mean": float(np.mean(us)),
                "uncertainty_max": float(np.max(us)), "unresolved_conflicts": unresolved, "by_type": by_type,
                "communication_cost": 2 * spent, "not_yet": self.not_yet,
                "completed": self.completed, "interventions": dict(self.interventions),
                "semantic_consistency": self.semantic_consistency(), "overhead": self.overhead(),
                "judged": self.judge_detections(), "misread_names": self.misread_names(),
                "repairs": [{"strategy": x.strategy, "restored": x.restored, "changed": x.changed,
                             "needed": x.needed, "by_model": x.spoken_by_model}
                            for x in self.turns if x.kind == "repair"]}

    def judge_detections(self) -> dict[str, list[int]]:
        """Per failure type, [detections, of which real] against the simulation's truth (each
        detection's ``real``, see :meth:`_judge`); a repair turn's detection is counted where it
        was made."""
        out: dict[str, list[int]] = {}
        for turn in self.turns:
            if turn.kind == "repair":
                continue
            for d in turn.detections:
                row = out.setdefault(d["type"], [0, 0])
                row[0] += 1
                row[1] += int(d["real"])
        return out

    def misread_names(self) -> list[int]:
        """[names in play read differently from the start, of which a detection named] — the
        detector's recall of the misunderstandings there were."""
        named = {k for x in self.turns if x.kind != "repair" for d in x.detections for k in d.get("keys", [])}
        misread = [k for k, e in self.tracker.entities.items() if e["used"]
                   and self.defaults["buyer"][k.split(":")[0]][k.split(":")[1]]
                   != self.defaults["seller"][k.split(":")[0]][k.split(":")[1]]]
        return [len(misread), sum(k in named for k in misread)]

    def semantic_consistency(self) -> float:
        """The share of names in play that both sides read the same at the end (1.0 when none)."""
        used = [k.split(":") for k, e in self.tracker.entities.items() if e["used"]]
        same = sum(self.s.buyer.definitions[i][n] == self.s.seller.definitions[i][n] for i, n in used)
        return same / len(used) if used else 1.0

    def overhead(self) -> dict:
        """Signal size against message size: characters and estimated tokens, summed over turns."""
        sig = [json.dumps({k: v for k, v in x.signals.items() if k != "model"}) if x.signals else ""
               for x in self.turns]
        return {"messages": len(self.turns), "signal_chars": sum(map(len, sig)),
                "signal_tokens": sum(estimate_tokens(x) for x in sig if x),
                "message_chars": sum(len(x.text) + len(x.reply) for x in self.turns),
                "message_tokens": sum(estimate_tokens(x.text + x.reply) for x in self.turns)}

    def save(self, db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE IF NOT EXISTS sessions (session_id TEXT PRIMARY KEY, repair INTEGER, state TEXT, "
                   "turns TEXT, result TEXT)")
        db.execute("INSERT OR REPLACE INTO sessions VALUES (?,?,?,?,?)", (
            self.tracker.session + ("" if self.repair else "_norepair")
            + ("" if self.layers == 3 else f"_L{self.layers}"),
            int(self.repair), self.tracker.as_json(),
            json.dumps([t.__dict__ for t in self.turns], default=str), json.dumps(self.result())))


def evaluate(sessions: int, seed: int, repair: bool, bandit: Bandit | None = None, effect: dict | None = None,
             db_path: str | None = None, speakers_for=None, layers: int = 3,
             recorder=None) -> tuple[dict, Bandit, list]:
    """Run ``sessions`` seeded sessions with Argent ``layers`` (0–3); returns (summary, bandit,
    per-session results). ``recorder`` (recording.NegotiationRecorder) keeps each session as
    it ends."""
    bandit = bandit or Bandit()
    results = []
    db = sqlite3.connect(db_path) if db_path else None
    for k in range(sessions):
        speakers = speakers_for(k) if speakers_for else None
        if recorder is not None:
            speakers = recorder.begin(bandit, speakers)
        neg = Negotiation(Session.draw(seed * 100_003 + k), repair, bandit, effect, speakers, layers)
        for turn in neg.iter_turns():
            if recorder is not None:
                recorder.turn(turn)
        results.append(neg.result())
        if recorder is not None:
            recorder.end(k, neg)
        if db is not None:
            neg.save(db)
    if db is not None:
        db.commit()
        db.close()

    summary = _summary(results, sessions, seed, repair, layers, bandit)
    return summary, bandit, results


def _summary(results: list[dict], sessions: int, seed: int, repair: bool, layers: int, bandit: Bandit) -> dict:
    """The run's summary: rates and means over the sessions, then the tables below."""

    def mean(key):
        return round(float(np.mean([r[key] for r in results])), 4)

    summary = {"sessions": sessions, "seed": seed, "repair": repair, "layers": layers,
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


def _failure_types(results: list[dict]) -> dict:
    """Per failure type: detections, repairs, repairs that restored common ground."""
    table: dict[str, dict[str, int]] = {}
    for r in results:
        for kind, (det, rep, ok) in r["by_type"].items():
            row = table.setdefault(kind, {"detections": 0, "repairs": 0, "restored": 0})
            row["detections"] += det
            row["repairs"] += rep
            row["restored"] += ok
    return dict(sorted(table.items()))


def _precision(results: list[dict]) -> dict:
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


def _repairs(results: list[dict]) -> dict:
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


def _signal_overhead(results: list[dict]) -> dict:
    o = {k: sum(r["overhead"][k] for r in results) for k in results[0]["overhead"]} if results else {}
    n = max(1, o.get("messages", 0))
    return {"chars_per_message": round(o.get("signal_chars", 0) / n, 1),
            "tokens_per_message": round(o.get("signal_tokens", 0) / n, 1),
            "share_of_tokens": round(o.get("signal_tokens", 0) / max(1, o.get("signal_tokens", 0)
                                                                    + o.get("message_tokens", 0)), 3)}
