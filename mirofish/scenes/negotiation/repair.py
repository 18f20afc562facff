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

from .grounding import STRATEGIES, Turn
from .state import SessionState
from .world import NAMED


class Repairer(SessionState):
    """Which detections are worth a repair now, and the repair turns themselves."""

    def threshold(self, t: int) -> float:
        """Dynamic threshold: eager to ground early, focused mid-way, careful at the close."""
        if t < 6:
            return 0.35
        return 0.35 if t > 0.75 * self.MAX_TURNS else 0.5

    def initiator(self, topic: str) -> str:
        """Who starts a repair on ``topic``: by stake (what its own offers reveal: the side that
        conceded less on the issue cares more), turn-taking (the side that did not start the
        last repair) and its clarity reputation (repairs it started that restored ground)."""
        last = next((x.speaker for x in reversed(self.turns) if x.kind == "repair"), None)

        def score(r: str) -> float:
            conceded = self.concessions(r).get(topic, 0.0)
            return -conceded + 0.2 * (r != last) + 0.3 * self.clarity[r]
        return max(("buyer", "seller"), key=score)

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
