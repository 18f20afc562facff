"""The repair executor (§3.3, §4.2).

Five strategies picked by a UCB1 bandit, rewarded by the uncertainty drop over the next 3
turns and by key terms newly grounded; the party with more at stake initiates — or, by its
clarification propensity, says "not yet" and lets it ride a turn; after two failed repairs on
a topic the anti-loop rule asks a yes/no confirmation, and if that fails the parties agree to
disagree on it. A repair is two utterances: the initiator states its reading of the names in
question in the chosen strategy, the other side answers with the reading it now holds. It
*worked* when the answer's reading matches the initiator's — judged from what the other side
said. Model negotiators write both utterances; embedded ones use a template, and their answer
is **simulated**: the other side takes the stated reading with the probability in ``EFFECT``
(the simulated world's truth). Each repair turn costs both sides ``COMMUNICATION_COST`` of
utility.
"""

from __future__ import annotations

from typing import Any

from .grounding import STRATEGIES, Detection, Turn
from .state import SessionState
from .world import NAMED


class Repairer(SessionState):
    """Which detections are worth a repair now, and the repair turns themselves."""

    def threshold(self, t: int) -> float:
        """Dynamic threshold: eager to ground early, focused mid-way, careful at the close."""
        if t < 6:
            return 0.35
        return 0.35 if t > 0.75 * self.MAX_TURNS else 0.5

    def _urgent(self, t: int, detections: list[Detection]) -> list[Detection]:
        """The detections of a negotiation turn (and those put off last turn) worth a repair,
        the most urgent first (it leads): confident and with impact enough, above the phase's
        threshold, on a topic not cooling down. Communication has a cost: beyond ~11 % of the
        turns so far only a failure with a large expected impact (product ≥ 0.6) is worth
        another repair turn."""
        spent = sum(1 for x in self.turns if x.kind == "repair")
        budget = spent < 0.11 * max(t, 8)
        again, self.deferred = self.deferred, []
        urgent = [d for d in detections + again if d["confidence"] >= 0.6 and d["impact"] >= 0.4
                  and d["confidence"] * d["impact"] >= self.threshold(t)
                  and (budget or d["confidence"] * d["impact"] >= 0.6)
                  and self.cooldown.get(d["topic"], -1) < t]
        return sorted(urgent, key=lambda d: -d["confidence"] * d["impact"])

    def initiator(self, topic: str) -> str:
        """Who starts a repair on ``topic``: by stake (what its own offers reveal: the side that
        conceded less on the issue cares more), turn-taking (the side that did not start the
        last repair) and its clarity reputation (repairs it started that restored ground)."""
        last = next((x.speaker for x in reversed(self.turns) if x.kind == "repair"), None)

        def score(r: str) -> float:
            conceded = self.concessions(r).get(topic, 0.0)
            return -conceded + 0.2 * (r != last) + 0.3 * self.clarity[r]
        return max(("buyer", "seller"), key=score)

    def _repair_turn(self, t: int, det: Detection, also: list[Detection] | None = None) -> Turn:
        """A repair led by detection ``det``; the other urgent detections of the turn whose names
        it settles too (``also``) are repaired by it as well and listed after the leader."""
        topic = det["topic"]
        initiator = self.initiator(topic)
        responder = "seller" if initiator == "buyer" else "buyer"
        loops = self.failed_repairs.get(topic, 0)
        strategy = self.forced.get(t) or ("yes_no_confirmation" if loops >= 2 else self.bandit.choose())  # anti-loop
        keys = self.open_keys(det)
        settles = self._settled_along(det, also or [], keys)
        u_before, g_before = self.tracker.uncertainty, self.grounded_count()
        before = {k: self.reading(responder, k) for k in keys}
        said = self._repair_line(t, initiator, strategy, det, keys)
        answer = self._speak(responder, "read_back", t, strategy, said["message"], keys, before)
        by_model = answer is not None and said.get("model", False)
        if answer is None:
            answer = self._simulated_answer(strategy, det["type"], said["readings"])
        self._take_readings(t, [(k, initiator, said["readings"][k]) for k in keys]
                            + [(k, responder, answer["readings"][k]) for k in keys if k in answer["readings"]])
        ok = bool(keys) and all(answer["readings"].get(k) == said["readings"][k] for k in keys)
        changed = any(k in answer["readings"] and answer["readings"][k] != before[k] for k in keys)
        needed = any(before[k] != said["readings"][k] for k in keys)  # the readings differed going in
        self._score_repair(initiator, topic, loops, ok)
        text = said["message"] + self._set_aside(topic, loops, ok)
        self.cooldown[topic] = t + 3
        if strategy in STRATEGIES:
            self.pending_reward.append((strategy, t + 3, u_before, g_before))
        self.tracker.history.append({"turn": t, "agent": initiator, "action": "repair", "strategy": strategy,
                                     "target": topic, "success": ok})
        return Turn(t, initiator, "repair", text, self._signals(initiator, t, None, None), settles, strategy,
                    reply=str(answer["message"]), restored=ok, changed=changed, needed=needed,
                    spoken_by_model=by_model)

    def _settled_along(self, det: Detection, also: list[Detection], keys: list[str]) -> list[Detection]:
        """The leading detection, then each other one of another type whose open names the
        repair settles too."""
        settles = [det]
        for d in also:
            if d["type"] not in {x["type"] for x in settles} and "keys" in d and set(self.open_keys(d)) <= set(keys):
                settles.append(d)
        return settles

    def _repair_line(self, t: int, initiator: str, strategy: str, det: Detection, keys: list[str]) -> dict[str, Any]:
        """What the initiator says: a model's line, or the embedded side's template in the
        chosen strategy — its readings of ``keys`` either way."""
        mine = {k: self.reading(initiator, k) for k in keys}
        said = self._speak(initiator, "repair_line", t, strategy, det, keys, mine)
        if said is None:
            said = {"message": f"[{strategy.replace('_', ' ')}] about {det['topic']}: " + ", ".join(
                f"by '{k.split(':')[1]} {k.split(':')[0]}' I mean level {mine[k]}" for k in keys), "readings": mine}
        return said

    def _simulated_answer(self, strategy: str, kind: str, stated: dict[str, int]) -> dict[str, Any]:
        """The embedded side's answer: with the world's probability (``EFFECT``) the repair lands
        and it states the reading it now holds; otherwise its answer leaves things unclear."""
        p_ok = 0.85 if strategy == "yes_no_confirmation" else self.effect[strategy].get(kind, 0.4)
        if self.rng.random() < p_ok:
            return {"readings": dict(stated), "message": "understood, " + ", ".join(
                f"level {v} for '{k.split(':')[1]}'" for k, v in stated.items()) + " for me too"}
        return {"readings": {}, "message": "still unclear"}

    def _take_readings(self, t: int, statements: list[tuple[str, str, int]]) -> None:
        """From here on each side acts on the reading it stated; the tracker merges them."""
        for key, role, level in statements:
            issue, name = key.split(":")
            self.party(role).definitions[issue][name] = int(level)
            self.said_readings[role][key] = int(level)
        self.tracker.merge(t, statements)

    def _score_repair(self, initiator: str, topic: str, loops: int, ok: bool) -> None:
        """A repair that worked calms the flags and clears the topic's failures; one that did
        not counts one more. The initiator's clarity reputation moves either way."""
        if ok:
            self.tracker.recent_flags = max(0.0, self.tracker.recent_flags - 0.3)
            self.failed_repairs.pop(topic, None)
        else:
            self.failed_repairs[topic] = loops + 1
        self.clarity[initiator] = min(1.0, max(0.0, self.clarity[initiator] + (0.1 if ok else -0.1)))

    def _set_aside(self, topic: str, loops: int, ok: bool) -> str:
        """The anti-loop rule's end: a yes/no confirmation that failed too — the parties agree
        to disagree on the issue and set it aside (what the repair then adds to its words)."""
        if ok or loops < 2 or topic not in NAMED:
            return ""
        self.disagreed.add(topic)
        return f" — we agree to disagree on {topic} and set it aside"

    def _speak(self, role: str, what: str, *args: Any) -> dict[str, Any] | None:
        """A model negotiator's repair line or answer (None: the embedded side speaks)."""
        speaker = self.speakers.get(role) if self.speakers else None
        if speaker is None or not hasattr(speaker, what):
            return None
        said: dict[str, Any] | None = getattr(speaker, what)(self, role, *args)
        return said

    def _settle_rewards(self, t: int) -> None:
        keep = []
        for arm, due, u0, g0 in self.pending_reward:
            if t >= due:
                reward = max(0.0, u0 - self.tracker.uncertainty) + 0.5 * (self.grounded_count() - g0)
                self.bandit.update(arm, min(1.5, reward))
            else:
                keep.append((arm, due, u0, g0))
        self.pending_reward = keep

    def _repair_now(self, t: int, det: Detection) -> bool:
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
