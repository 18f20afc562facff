"""The failure detector (§3.2) and its judge.

Vague references, undefined terms, contradictions with history (an offer rejected that the
proposer read as better for the rejecter), extreme statements, proposal backtracking,
attribute-inheritance contradictions, and — from Argent layer-2 signals — assumption
conflicts. Each detection has a confidence (its type's measured precision, ``CONFIDENCE``)
and an impact; only confident, high-impact ones above the phase's threshold trigger a repair,
and a topic cools down after one. The detector's one prior is :func:`relative`: a name in the
middle of its scale is the one a first use or a changed offer leaves misread, an end of the
scale is anchored — detections are about the relative names not yet grounded (``keys``), and
one about none is dropped. The simulation's truth for each detection (did the two sides read a
name it is about differently at that moment) is kept as ``real`` beside it, never read by the
detector: ``bench/detector_precision.py`` reports precision per type and ``--all-names`` the
ablation without the prior.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .grounding import Detection, Turn, found_, relative
from .state import SessionState
from .world import ISSUES, NAMED, NUMERIC, Offer


class Detector(SessionState):
    """What in a turn looks like a misunderstanding, read from the dialogue only."""

    def _relative(self, key: str) -> bool:
        """The detector's one prior about words (:func:`grounding.relative`); ``Negotiation``
        reads it from ``dialogue.relative``, which the ablation replaces."""
        return relative(key)

    def detect(self, role: str, offer: Offer | None, text: str, signals: dict[str, Any], t: int) -> list[Detection]:
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

    def about_names(self, found: list[Detection]) -> list[Detection]:
        """Each detection names what a repair on it would settle (``keys``): a detection read
        from words or offers is about the relative names among those in question (see
        :func:`relative`) that are not grounded yet; one with none left is dropped — there is
        nothing a repair could settle. A strategy misjudgment is about priorities, not names."""
        out = []
        for d in found:
            if d["type"] != "strategy_misjudgment":
                keys = d["keys"] if "keys" in d else [k for k in self.repair_keys(d["topic"]) if self._relative(k)]
                d["keys"] = [k for k in keys if not self.tracker.is_grounded(k)]
                if not d["keys"]:
                    continue
            out.append(d)
        return out

    def _said(self, text: str) -> list[Detection]:
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

    def _priorities(self, role: str, other: str, text: str) -> list[Detection]:
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

    def _unanswered(self, role: str, other: str, offer: Offer | None) -> list[Detection]:
        """Asked about a name in a repair, answered as if not asked (the same level again)."""
        asked = self.turns[-1] if self.turns else None
        if asked is None or asked.kind != "repair" or asked.speaker != other or offer is None \
                or not asked.detections or asked.detections[0]["topic"] not in NAMED:
            return []
        topic, prev = asked.detections[0]["topic"], self.last_offer[role]
        if prev is not None and prev[topic] == offer[topic]:
            return [found_("response_expectation", "response", 0.8)]
        return []

    def _offer_failures(self, role: str, other: str, offer: Offer) -> list[Detection]:
        """Undefined terms, a counter-offer that contradicts the speaker's own positions,
        backtracking, attribute-inheritance contradictions — from the offers on record."""
        theirs, prev = self.last_offer[other], self.last_offer[role]
        found = self._undefined_terms(offer, theirs)
        if theirs is not None and prev is not None and self._gives_all_asked(role, prev, theirs):
            # the other side offered at least what the speaker itself asked on every number, and
            # the speaker counters anyway: it must read a named term otherwise
            named = [i for i in NAMED if theirs[i] != prev[i]]
            found.append(found_("contradiction", named[0] if named else "history", 0.7,
                                keys=[f"{i}:{theirs[i]}" for i in named if self._relative(f"{i}:{theirs[i]}")]))
        if self._backtracks(role, offer, prev, theirs):
            found.append(found_("backtracking", "history", 0.8))
        if prev is not None and prev["price"] == offer["price"]:
            found += [found_("inheritance", issue, 0.7)
                      for issue in NAMED if prev[issue] != offer[issue]]
        return found

    def _undefined_terms(self, offer: Offer, theirs: Offer | None) -> list[Detection]:
        """The relative names the offer uses for the first time (an end of the scale is
        anchored); more urgent where the other side names the issue otherwise."""
        found = []
        for key in self.tracker.use_terms(offer):
            issue = key.split(":")[0]
            if not self._relative(key):
                continue  # an end of the scale: anchored
            contested = theirs is not None and theirs[issue] != offer[issue]  # the sides name it differently
            found.append(found_("undefined_term", issue, 0.75 if contested else 0.6, keys=[key]))
        return found

    def _backtracks(self, role: str, offer: Offer, prev: Offer | None, theirs: Offer | None) -> bool:
        """Backtracking: an offer the proposer rejected before, or one that takes back a
        concession (a number it had moved toward the other side moved back away by a tenth of
        its range)."""
        taken_back = prev is not None and theirs is not None and any(
            self._conceded_before(role, i) and abs(offer[i] - theirs[i]) > abs(prev[i] - theirs[i]) + 0.1 * (hi - lo)
            for i, (lo, hi) in NUMERIC.items())
        return taken_back or any(all(offer[k] == r[k] for k in offer) for r in self.rejected[role])

    def _conceded_before(self, role: str, issue: str) -> bool:
        """Whether ``role``'s offers had moved ``issue`` toward the other side's (from the offers made)."""
        return self.concessions(role).get(issue, 0.0) > 0

    def _gives_all_asked(self, role: str, mine: Offer, theirs: Offer) -> bool:
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

    def _restated_otherwise(self, role: str, readings: list[tuple[str, str, int]]) -> list[Detection]:
        """A contradiction with the speaker's own history: it now states another reading of a
        name than the one it stated before (a colleague after a hand-over often does)."""
        before = self.said_readings[role]
        found = [found_("contradiction", key.split(":")[0], 0.8, keys=[key])
                 for key, _, level in readings if before.get(key, level) != level]
        before.update({key: level for key, _, level in readings})
        return found

    def _assumption_conflicts(self, other: str, assumptions: dict[str, int]) -> list[Detection]:
        """The receiver compares the speaker's stated assumptions (layer 2) with its own readings."""
        found = []
        for key, level in assumptions.items():
            issue, name = key.split(":")
            if self.party(other).definitions[issue][name] != level and not self.tracker.entities[key]["grounded"]:
                found.append(found_("assumption_conflict", issue, 0.8, keys=[key]))
        return found

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
