"""Negotiation with grounding repair: the session loop, the negotiators' turns, the run.

A session alternates offers between a buyer and a seller (embedded negotiators, or models
through ``model_agents.py``) until one accepts, a deal collapses at drafting, or 30 turns pass.
Its parts live beside this module:

* ``grounding.py`` — the dialogue grounding tracker, the repair bandit, a turn, the strategies
  and what they do in the simulated world;
* ``state.py`` — the session's state and the Argent signals a turn carries;
* ``detector.py`` — the failure detector (§3.2) and the simulation's truth for each detection;
* ``repair.py`` — the repair executor (§3.3, §4.2): who repairs, when, in which strategy;
* ``summary.py`` — a run's figures over its sessions.

Here: the loop (hand-overs, the repair queue, layer-3 drift calibrations), the negotiators'
turns (the goal may drift; the other side's signals are read; an offer is weighed, checked
before accepting when it came unsure or on a name nobody has stated the meaning of, or
countered), a session's result, and :func:`evaluate` over seeded sessions. The names the rest
of the package imports from here (``Negotiation``, ``Bandit``, ``Turn``, ``STRATEGIES`` …)
stay importable from here.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ...brains.prompt import estimate_tokens
from ..argent import goal_hash
from .detector import Detector
from .grounding import (
    COMMUNICATION_COST,
    CONFIDENCE,
    EFFECT,
    GOAL,
    STRATEGIES,
    STRATEGY_HOW,
    Bandit,
    Detection,
    Tracker,
    Turn,
    found_,
    relative,
)
from .repair import Repairer
from .state import Speaker
from .summary import summarize
from .world import ISSUES, LEVELS, NAMED, NUMERIC, Offer, Party, Session

if TYPE_CHECKING:
    from .recording import NegotiationRecorder

__all__ = ["COMMUNICATION_COST", "CONFIDENCE", "EFFECT", "GOAL", "STRATEGIES", "STRATEGY_HOW", "Bandit",
           "Negotiation", "Session", "Speaker", "Tracker", "Turn", "evaluate", "found_", "goal_hash", "relative"]


class Negotiation(Detector, Repairer):
    """One seeded session between two negotiators (embedded by default)."""

    def _relative(self, key: str) -> bool:
        """The detector's prior, looked up here at each use: replacing ``dialogue.relative``
        (``bench/detector_precision.py --all-names``, the ablation) replaces it."""
        return relative(key)

    def _choose_offer(self, p: Party, t: int, other: Offer | None) -> Offer:
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

    # ------------------------------------------------------------ the loop

    def run(self) -> dict[str, Any]:
        for _ in self.iter_turns():
            pass
        return self.result()

    def iter_turns(self) -> Iterator[Turn]:
        """The session turn by turn (the window steps through it)."""
        queued: list[Detection] = []
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
                turn = self._calibration_turn(t, role)
            else:
                turn = self._negotiate(t, role)
                role = "seller" if role == "buyer" else "buyer"
                if self.repair:
                    queued = self._urgent(t, turn.detections)
            turn.uncertainty = self.tracker.update_uncertainty()
            self._judge(turn)
            self.last_signals[turn.speaker] = turn.signals
            self.turns.append(turn)
            yield turn
            if self.agreement is not None or self.walked_away:
                break

    def _calibration_turn(self, t: int, role: str) -> Turn:
        """Layer 3's answer to a drift alert: both sides restate the task's goal."""
        self.goal = {"buyer": GOAL, "seller": GOAL}
        self.stated_hash.clear()
        self.drift_seen = False
        self._count("calibration")
        return Turn(t, role, "calibrate", "[drift alert] let us restate the goal: " + GOAL, {"layer3": {
            "drift_alert": True, "issue": "goal hashes differ"}})

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

    def _weigh(self, t: int, role: str, other: str, incoming: Offer, model: dict[str, Any] | None,
               note: str) -> tuple[Turn | None, str]:
        """The other side's offer: accepted (after a layer-2 check when it came unsure, unless
        drafting the contract shows the two meant different things), or countered (None)."""
        p = self.party(role)
        keeps_limit = p.satisfies(incoming)
        if not keeps_limit and self.layers >= 1:  # answer the mismatch with its checklist item
            note += f"My limit {p.must_text()} is missed. "
            self._count("constraint_alert")
        if keeps_limit and (model["accept"] if model is not None else self._worth(p, incoming) >= self.target(p, t)):
            return self._accepting(t, role, other, incoming), note
        self.rejected[role].append(incoming)
        self.tracker.propositions[self.last_prop[other]]["status"] = "countered"
        return None, note

    def _worth(self, p: Party, offer: Offer) -> float:
        """What ``offer`` is worth to ``p`` as it now sees the task (a drifted negotiator only
        looks at the price)."""
        u = p.utility(offer)
        if goal_hash(self.goal[p.role]) != goal_hash(GOAL):
            lo, hi = NUMERIC["price"]
            x = (offer["price"] - lo) / (hi - lo)
            u = min(u, x if p.role == "seller" else 1 - x)
        return u

    def _accepting(self, t: int, role: str, other: str, incoming: Offer) -> Turn:
        """An offer the speaker would take: first a layer-2 check when it came unsure, or a word
        on a name nobody has said the meaning of (once per offer each); a draft that shows the
        two meant different things collapses the deal; else the deal is made."""
        open_names = [f"{i}:{incoming[i]}" for i in NAMED
                      if not self.tracker.is_grounded(f"{i}:{incoming[i]}")]
        confidence = (self.last_signals[other].get("layer2") or {}).get("confidence", 1.0)
        if self.layers >= 2 and confidence < 0.6 and open_names and self.last_prop[other] not in self.checked:
            self.checked.add(self.last_prop[other])
            return self._check_before_accepting(t, role, open_names, confidence)
        unstated = [i for i in NAMED if relative(f"{i}:{incoming[i]}")
                    and not self.tracker.readings(f"{i}:{incoming[i]}")]
        if self.repair and unstated and self.last_prop[other] not in self.checked:
            self.checked.add(self.last_prop[other])  # value opacity: a name nobody has said the meaning of
            return self._unstated_before_accepting(t, role, incoming, unstated)
        mismatch = [i for i in NAMED if self.s.buyer.definitions[i][incoming[i]]
                    != self.s.seller.definitions[i][incoming[i]]]
        if mismatch:  # drafting the contract surfaces what each side meant: the deal falls through
            return self._deal_collapses(t, role, other, incoming, mismatch)
        self.agreement = incoming
        self.completed = self.s.buyer.satisfies(incoming) and self.s.seller.satisfies(incoming) and all(
            goal_hash(g) == goal_hash(GOAL) for g in self.goal.values())
        self.tracker.propositions[self.last_prop[other]]["status"] = "accepted"
        self.tracker.history.append({"turn": t, "agent": role, "action": "accept"})
        return Turn(t, role, "accept", "Deal: I accept.", self._signals(role, t, incoming, None))

    def _deal_collapses(self, t: int, role: str, other: str, incoming: Offer, mismatch: list[str]) -> Turn:
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

    def _propose(self, t: int, role: str, incoming: Offer | None, model: dict[str, Any] | None, note: str) -> Turn:
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

    def _offer_words(self, role: str, offer: Offer, incoming: Offer | None, note: str) -> str:
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

    def _stated(self, role: str, offer: Offer, signals: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
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

    def _unstated_before_accepting(self, t: int, role: str, incoming: Offer, unstated: list[str]) -> Turn:
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

    def result(self) -> dict[str, Any]:
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

    def semantic_consistency(self) -> float:
        """The share of names in play that both sides read the same at the end (1.0 when none)."""
        used = [k.split(":") for k, e in self.tracker.entities.items() if e["used"]]
        same = sum(self.s.buyer.definitions[i][n] == self.s.seller.definitions[i][n] for i, n in used)
        return same / len(used) if used else 1.0

    def overhead(self) -> dict[str, int]:
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


def evaluate(sessions: int, seed: int, repair: bool, bandit: Bandit | None = None,
             effect: dict[str, dict[str, float]] | None = None, db_path: str | None = None,
             speakers_for: Callable[[int], Mapping[str, Speaker] | None] | None = None, layers: int = 3,
             recorder: NegotiationRecorder | None = None) -> tuple[dict[str, Any], Bandit, list[dict[str, Any]]]:
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

    summary = summarize(results, sessions, seed, repair, layers, bandit)
    return summary, bandit, results
