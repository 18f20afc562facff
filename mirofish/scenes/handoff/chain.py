"""Argent's own scenario: a chain of agents writing a market-analysis report, with drifts.

An **analyst** picks the facts that serve the brief, a **writer** turns them into a report, a
**reviewer** checks it; half-way the writer hands over to a **colleague**. Eleven messages
(:data:`FLOW`), each of a report's size. Only the analyst reads the brief; everyone else
learns the task from the messages — a game of telephone, in which:

* **dilution** (no injection, always on): a requirement that travels only in prose reaches
  the next agent with probability ``KEEP`` (0.985), and a hand-over without its context keeps
  each with ``HANDOVER_KEEP`` (0.85); the receiver works to what it received and what it held;
* **injected drifts** at known points, one or two per task, of the source's three kinds:
  *cumulative misunderstanding* (a key concept — "growth", "the quarter", "the competitor" —
  read another way: the same words, another meaning, and the agent picks other facts),
  *invented* (a constraint or goal the brief never set: "add a financial forecast"), *lost*
  (a requirement dropped). A drift changes what the agent believes; what it then writes and
  signals follows from that belief, never from knowing it drifted.

The **signals** (Argent, by layer; ``layers`` is any subset of {1, 2, 3}):

* layer 1 on every message: the task id, the hash of the goal the sender works to, its
  checklist of requirements. The receiver looks the task id up in the task registry and
  compares: a goal hash or checklist that differs is a detection (goal, lost, invented).
  The checklist also carries the requirements, so they no longer dilute.
* layer 2 on some messages, written by the sender from what it *heard* (:class:`Evidence`):
  the readings it is unsure of, each with its confidence — (support + ½) / (support +
  conflicts + 1) over the readings stated in the brief, the messages and calibrations it
  received — and the alternative it heard (``l2_source="oracle"``: every reading it holds,
  the upper bound). It goes out when the sender's state changed (a role's first message, the
  final report), when its confidence is low (< 0.6), when the message's word entropy jumps
  from the conversation's (``ENTROPY_JUMP``), or every ``L2_EVERY`` messages otherwise. The
  receiver compares the readings with the registry's (layer 1's task id is the anchor;
  without it, with its own readings — which it may have inherited).
* layer 3: role awareness and, at the hand-over, the handoff context (done, pending, the
  checklist): the colleague loses nothing at the hand-over; a detection raises a drift alert
  that calibrates the whole chain, not only the pair.

A detection opens a **calibration** (an intervention: two short messages that cost tokens):
the agents involved take the registry's reading of what was found. A drift counts as
**intercepted** when a detection of it happened before the reviewer accepted the final
report. Completion, consistency and the signals' share of tokens are measured per task; the
tokens are estimated (``brains.prompt.estimate_tokens``), or counted by the model's own
tokenizer when ``MIROFISH_TOKENIZER`` names its ``tokenizer.json`` — labelled either way.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...brains.prompt import estimate_tokens, token_counter
from ...fish.memory import lexical_similarity
from ..argent import goal_hash, wire
from .brief import BARE, CONCEPTS, CUES, INVENTED, READING_CODES, REQUIREMENTS, Brief, draw_brief

# (sender, receiver, kind) of each message; the writer hands over to the colleague at "handoff".
FLOW: tuple[tuple[str, str, str], ...] = (
    ("analyst", "writer", "insights"), ("writer", "reviewer", "draft"), ("reviewer", "writer", "review"),
    ("writer", "analyst", "question"), ("analyst", "writer", "insights"), ("writer", "colleague", "handoff"),
    ("colleague", "reviewer", "draft"), ("reviewer", "colleague", "review"), ("colleague", "analyst", "question"),
    ("analyst", "colleague", "insights"), ("colleague", "reviewer", "final"),
)
HANDOVER = 5  # the index of the hand-over message in FLOW
KEEP, HANDOVER_KEEP = 0.985, 0.85
L2_EVERY = 4
ENTROPY_JUMP = 0.35  # bits: a message whose word entropy differs this much from the running mean
LOW_CONFIDENCE = 0.6
DRIFT_KINDS = ("misunderstanding", "invented", "lost")
ARMS: dict[str, frozenset[int]] = {"none": frozenset(), "L1": frozenset({1}), "L1+2": frozenset({1, 2}),
                                   "L1+2+3": frozenset({1, 2, 3})}
# Who writes layer 2: "agent" — the sender states only the readings it is unsure of, with the
# confidence its evidence gives and the alternative it heard (the source's design); "oracle" —
# every reading the sender holds goes out, drifted or not (the upper bound: whatever the
# injection changed is on the wire).
L2_SOURCES = ("agent", "oracle")
# The signals' wire form: "full" (layer 1 with goal hash and checklist by name, layer 2 with its
# fields named, a calibration read back in words) or "compact" (layer 1 the task id alone — the
# receiver looks goal and checklist up in the registry —, layer 2 one token group a reading,
# layer 3's role on a role's first message, a calibration by the registry's ids and an "ok").
WIRES = ("full", "compact")
VAGUE_WEIGHT = 0.3  # a concept's bare word, heard: weak support for whatever the hearer reads it as
CODE_READING = {code: reading for reading, code in READING_CODES.items()}
_CUES = {c: {r: re.compile("|".join(CUES[r]), re.I) for r in readings} for c, readings in CONCEPTS.items()}
_BARE = {c: re.compile(pattern, re.I) for c, pattern in BARE.items()}


def heard_in(text: str) -> tuple[dict[str, Counter[str]], Counter[str]]:
    """What a text says about the key concepts, as a receiver hears it: per concept, how often
    it states each reading (:data:`brief.CUES`), and how often it uses the concept's bare word
    without stating a reading (which each hearer reads as its own)."""
    stated: dict[str, Counter[str]] = {}
    bare: Counter[str] = Counter()
    for c, cues in _CUES.items():
        rest, said = text, Counter[str]()
        for reading, cue in cues.items():
            said[reading] = len(cue.findall(rest))
            rest = cue.sub(" ", rest)
        stated[c] = +said
        bare[c] = len(_BARE[c].findall(rest))
    return stated, +bare


@dataclass
class Evidence:
    """What an agent has heard about the key concepts (from the brief, the messages it
    received and the calibrations): the readings stated, and the bare words."""

    stated: dict[str, Counter[str]] = field(default_factory=lambda: {c: Counter() for c in CONCEPTS})
    bare: Counter[str] = field(default_factory=Counter)

    def hear(self, text: str) -> None:
        stated, bare = heard_in(text)
        for c, said in stated.items():
            self.stated[c].update(said)
        self.bare.update(bare)

    def confidence(self, concept: str, reading: str) -> float:
        """How sure the agent can be of ``reading`` from what it heard: (support + ½) /
        (support + conflicts + 1), a bare word counting ``VAGUE_WEIGHT`` toward support — ½
        with no evidence at all, under ½ when what it heard says otherwise."""
        said = self.stated[concept]
        support = said[reading] + VAGUE_WEIGHT * self.bare[concept]
        conflicts = sum(n for r, n in said.items() if r != reading)
        return (support + 0.5) / (support + conflicts + 1.0)

    def alternative(self, concept: str, reading: str) -> str | None:
        """The other reading it heard most (None: it heard none)."""
        others = [(n, r) for r, n in self.stated[concept].items() if r != reading and n]
        return max(others)[1] if others else None



@dataclass
class Understanding:
    """What an agent believes the task is."""

    goal: str
    requirements: set[str]
    concepts: dict[str, str]

    def copy(self) -> Understanding:
        return Understanding(self.goal, set(self.requirements), dict(self.concepts))


@dataclass
class Drift:
    at: int  # the message (index in FLOW) before which the sender drifts
    kind: str  # misunderstanding, invented, lost
    what: str  # the concept, the invented requirement, or the lost one
    detected_at: int | None = None  # the message at which a check found it (None: never)
    caught_by: str = ""  # "layer1" (the registry's checklist or goal hash) or "layer2" (the readings sent)


@dataclass
class Message:
    index: int
    sender: str
    receiver: str
    kind: str
    text: str
    signals: dict[str, Any]
    detections: list[str] = field(default_factory=list)  # what the receiver's checks found
    calibration: str = ""  # the calibration exchange it opened (empty: none)


def _entropy(text: str) -> float:
    words = [w for w in text.lower().split() if w.isalpha()]
    if not words:
        return 0.0
    counts = np.array(list(Counter(words).values()), np.float64)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


class Chain:
    """One task through the chain, message by message (``iter_messages``; ``run`` to the end)."""

    def __init__(self, brief: Brief, layers: frozenset[int], seed: int, l2_every: int = L2_EVERY,
                 l2_triggers: bool = True, writer: Any = None, l2_source: str = "agent", wire_form: str = "full"):
        if l2_source not in L2_SOURCES or wire_form not in WIRES:
            raise ValueError(f"l2_source must be one of {L2_SOURCES} and wire_form one of {WIRES}")
        self.brief, self.layers = brief, layers
        self.l2_source, self.wire_form = l2_source, wire_form
        self.writer = writer  # a model that writes the messages (handoff --agents llm); None: the templates
        self.model_written = 0
        self.l2_every, self.l2_triggers = l2_every, l2_triggers  # layer 2's schedule (see the module doc)
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, int(brief.task_id[-4:]), 11])))
        truth = Understanding(brief.goal, set(brief.requirements), dict(brief.concepts))
        self.registry = truth  # layer 1's anchor: task id → the brief as set
        self.minds: dict[str, Understanding] = {"analyst": truth.copy()}
        self.evidence: dict[str, Evidence] = {"analyst": Evidence()}
        self.evidence["analyst"].hear(brief.goal + " " + " ".join(  # the analyst reads the brief
            f"{c.capitalize()} means {r}." for c, r in brief.concepts.items()))
        self.drifts = self._draw_drifts()
        self.messages: list[Message] = []
        self.calibrations = 0
        self.calibration_tokens = 0
        self.entropies: list[tuple[tuple[str, str], float]] = []
        self.meta_checks: list[float] = []  # meta-task consistency every 3 messages (0..1)
        self.concept_drift: list[float] = []  # cosine of the conversation's concept sentences to the brief's
        self._brief_text = " ".join(brief.concepts.values()) + " " + brief.goal
        self.concept_measure = "lexical"  # or "embeddings", when the model's server serves them
        self.accepted = False

    def _draw_drifts(self) -> list[Drift]:
        """One or two drifts at known points (messages 1–10), of the three kinds."""
        out = []
        points = sorted(self.rng.choice(np.arange(1, len(FLOW)), int(self.rng.integers(1, 3)), replace=False).tolist())
        for at in points:
            kind = DRIFT_KINDS[int(self.rng.integers(len(DRIFT_KINDS)))]
            if kind == "misunderstanding":
                what = list(CONCEPTS)[int(self.rng.integers(len(CONCEPTS)))]
            elif kind == "invented":
                what = list(INVENTED)[int(self.rng.integers(len(INVENTED)))]
            else:
                what = self.brief.requirements[int(self.rng.integers(len(self.brief.requirements)))]
            out.append(Drift(at, kind, what))
        return out

    # ------------------------------------------------------------ the loop

    def run(self) -> dict[str, Any]:
        for _ in self.iter_messages():
            pass
        return self.result()

    def iter_messages(self) -> Iterator[Message]:
        """Each message as it is sent (the window steps through them)."""
        for i, (sender, receiver, kind) in enumerate(FLOW):
            for d in self.drifts:
                if d.at == i:
                    self._drift(sender, d)
            msg = self._send(i, sender, receiver, kind)
            self.messages.append(msg)
            self._diagnose(i)
            yield msg
        self.accepted = True

    def _drift(self, agent: str, d: Drift) -> None:
        mind = self.minds[agent]
        if d.kind == "misunderstanding":
            mind.concepts[d.what] = CONCEPTS[d.what][1 + int(self.rng.integers(len(CONCEPTS[d.what]) - 1))]
        elif d.kind == "invented":
            mind.requirements.add(d.what)
            if d.what in ("persuasive", "forecast"):  # a local goal the agent now also pursues
                mind.goal = f"{self.brief.goal} Also {INVENTED[d.what]}."
        else:
            mind.requirements.discard(d.what)

    def _send(self, i: int, sender: str, receiver: str, kind: str) -> Message:
        mind = self.minds[sender]
        text, unsure = self._write(sender, kind, mind), None
        if self.writer is not None:  # the model writes it from the same belief (the template if it fails)
            received = next((m.text for m in reversed(self.messages) if m.receiver == sender), "")
            told = self._told(sender) if 2 in self.layers and self.l2_source == "agent" else None
            said = self.writer.write(sender, kind, mind, received, self._facts_for(mind, 10), self.brief, told)
            if said is not None:
                text, unsure = said
                self.model_written += 1
        signals = self._signals(i, sender, kind, mind, text, unsure)
        msg = Message(i, sender, receiver, kind, text, signals)
        own = dict(self.minds[receiver].concepts) if receiver in self.minds else {}  # its readings until now
        self._receive(msg, receiver)
        found = self._check(msg, own)
        if found:
            msg.detections = found
            self._calibrate(msg, found)
        return msg

    # ------------------------------------------------------------ writing

    def _facts_for(self, mind: Understanding, n: int) -> list[str]:
        """The facts an agent picks: those that fit its reading of growth and the competitor."""
        growth = mind.concepts["growth"]
        key = {"revenue growth year over year": "revenue", "unit sales growth": "unit sales",
               "growth in market share": "market share"}[growth]
        comp = mind.concepts["competitor"]
        ranked = sorted(self.brief.facts, key=lambda f: (key not in f,
                                                         ("largest" not in f) if "largest" in comp else
                                                         ("launched" not in f), f))
        return ranked[:n]

    def _write(self, sender: str, kind: str, mind: Understanding) -> str:
        """A message of a report's size, from what the sender believes (never from the brief)."""
        b = self.brief
        quarter = {"the calendar quarter": b.quarter, "the fiscal quarter": f"fiscal {b.quarter}",
                   "the last three months": "the last three months"}[mind.concepts["quarter"]]
        asks = "; ".join(_req_text(r) for r in sorted(mind.requirements))
        if kind == "insights":
            facts = self._facts_for(mind, 10)
            return (f"Insights for {b.segment}, {quarter}. The task as I understand it: {mind.goal} "
                    f"Requirements: {asks}. Key facts:\n- " + "\n- ".join(facts)
                    + f"\nGrowth here means {mind.concepts['growth']}; the competitor that matters is "
                      f"{mind.concepts['competitor']}.")
        if kind in ("draft", "final"):
            facts = self._facts_for(mind, 18 if kind == "final" else 12)
            body = " ".join(f"{f} This matters for {b.segment} because it shows how {quarter} developed, and it "
                            f"should be read against the {mind.concepts['growth']} of the segment as a whole."
                            for f in facts)
            extra = "".join(f" As required, we {INVENTED[r]}." for r in sorted(mind.requirements) if r in INVENTED)
            ending = (" Disclaimer: this report is for information only and is not investment advice."
                      if "disclaimer" in mind.requirements else "")
            return f"{'Final report' if kind == 'final' else 'Draft'}: {b.segment} in {quarter}. {body}{extra}{ending}"
        if kind == "review":
            return (f"Review of the draft on {b.segment}: the facts on {mind.concepts['growth']} read well; "
                    f"check these requirements before the final version: {asks}. Keep the structure, "
                    f"tighten the section on {mind.concepts['competitor']}, and make every number cite its source.")
        if kind == "question":
            return (f"Question for the analyst: for {quarter}, do you have more data on {mind.concepts['growth']} "
                    f"and on {mind.concepts['competitor']}? I am writing to: {mind.goal}")
        done = [m.kind for m in self.messages]
        return (f"Hand-over: I am leaving this report to you. Done so far: {', '.join(done)}. The latest draft "
                f"covers {b.segment} in {quarter}. Pending: the final version and the review's points.")

    def unsure(self, agent: str) -> dict[str, tuple[str, float, str | None]]:
        """The readings ``agent`` would flag as assumptions — those its evidence gives less than
        ``LOW_CONFIDENCE`` — as {concept: (reading, confidence, alternative)}. The embedded
        agent's layer 2: it knows what it heard, never whether it drifted."""
        ev, out = self.evidence.get(agent) or Evidence(), {}
        for c, r in self.minds[agent].concepts.items():
            conf = ev.confidence(c, r)
            if conf < LOW_CONFIDENCE:
                out[c] = (r, round(conf, 2), ev.alternative(c, r))
        return out

    def _told(self, agent: str) -> dict[str, dict[str, int]]:
        """What ``agent`` was told about each concept, for a model's prompt: {concept: {reading:
        times stated}} (a model writes its own layer 2 from it and from its readings)."""
        ev = self.evidence.get(agent) or Evidence()
        return {c: dict(ev.stated[c]) for c in CONCEPTS}

    def _signals(self, i: int, sender: str, kind: str, mind: Understanding, text: str,
                 stated: dict[str, tuple[str, float, str | None]] | None = None) -> dict[str, Any]:
        """The message's signals. ``stated``: the layer 2 a model wrote (its unsure readings);
        None — the embedded agent's (:meth:`unsure`)."""
        out: dict[str, Any] = {}
        compact = self.wire_form == "compact"
        first_of_role = sender not in {m.sender for m in self.messages}
        if 1 in self.layers:
            out["layer1"] = self._layer1(compact)
        jump = self._entropy_jump(sender, kind, text)
        unsure = self.unsure(sender) if stated is None else stated
        confidence = self._confidence(sender, mind, unsure)
        why = self._layer2_why(i, kind, first_of_role, confidence, jump)
        layer2 = self._layer2(mind, unsure, confidence, why, compact) if 2 in self.layers and why else None
        if layer2 is not None:
            out["layer2"] = layer2
        if 3 in self.layers and (not compact or first_of_role or kind == "handoff"):
            out["layer3"] = self._layer3(sender, kind, mind)
        return out

    def _layer1(self, compact: bool) -> dict[str, Any]:
        """Layer 1, filled by the signal wrapper from the task registry (the source's design);
        compact: the task id alone, the receiver looks the rest up."""
        if compact:
            return {"task_id": self.brief.task_id}
        return {"task_id": self.brief.task_id, "goal_hash": goal_hash(self.registry.goal),
                "constraints": sorted(self.registry.requirements)}

    def _entropy_jump(self, sender: str, kind: str, text: str) -> bool:
        """Whether the message's word entropy differs by more than ``ENTROPY_JUMP`` from the mean
        of the sender's earlier messages of this kind (kept for the next one)."""
        h = _entropy(text)
        own = [e for (who, e) in self.entropies if who == (sender, kind)]
        mean = float(np.mean(own)) if own else h
        self.entropies.append(((sender, kind), h))
        return abs(h - mean) > ENTROPY_JUMP

    def _confidence(self, sender: str, mind: Understanding,
                    unsure: dict[str, tuple[str, float, str | None]]) -> float:
        """The sender's confidence: the lowest of its unsure readings', or — none unsure — the
        lowest its evidence gives any reading it holds."""
        if unsure:
            return min(u[1] for u in unsure.values())
        ev = self.evidence.get(sender) or Evidence()
        return min(ev.confidence(c, r) for c, r in mind.concepts.items())

    def _layer2_why(self, i: int, kind: str, first_of_role: bool, confidence: float, jump: bool) -> str:
        """Why layer 2 goes out with message ``i`` (empty: it does not): the first trigger that
        fires (with ``l2_triggers``), else the periodic schedule."""
        triggers = (("state change", first_of_role or kind == "final"),
                    ("low confidence", confidence < LOW_CONFIDENCE),
                    ("entropy jump", jump)) if self.l2_triggers else ()
        periodic = self.l2_every > 0 and i % self.l2_every == self.l2_every - 1
        return next((why for why, fired in (*triggers, ("periodic", periodic)) if fired), "")

    def _layer2(self, mind: Understanding, unsure: dict[str, tuple[str, float, str | None]], confidence: float,
                why: str, compact: bool) -> dict[str, Any] | None:
        """Layer 2: every reading the sender holds (``l2_source="oracle"``), or the agent's own —
        only what it is unsure of (None: it is sure of everything)."""
        if self.l2_source == "oracle":
            codes = {c: READING_CODES[r] for c, r in mind.concepts.items()}
            held: dict[str, Any] = {"assumptions": codes, "confidence": round(confidence, 2)}
            return held if compact else {**held, "why": why}
        if not unsure:
            return None
        alt = {c: READING_CODES[u[2]] if u[2] else "-" for c, u in unsure.items()}
        if compact:
            return {"unsure": {c: f"{READING_CODES[u[0]]}.{int(10 * u[1])}/{alt[c]}" for c, u in unsure.items()}}
        return {"assumptions": {c: READING_CODES[u[0]] for c, u in unsure.items()},
                "confidence": {c: u[1] for c, u in unsure.items()}, "alternatives": alt, "why": why}

    def _layer3(self, sender: str, kind: str, mind: Understanding) -> dict[str, Any]:
        """Layer 3: role awareness, and at the hand-over the handoff context."""
        out: dict[str, Any] = {"role": sender if sender != "colleague" else "writer (after the hand-over)"}
        if kind == "handoff":
            out["handoff_context"] = {"done": [m.kind for m in self.messages],
                                      "pending": ["final report", "review points"],
                                      "checklist": sorted(mind.requirements)}
        return out

    # ------------------------------------------------------------ receiving and checking

    def _receive(self, msg: Message, receiver: str) -> None:
        """The receiver works to what the message conveyed (the telephone game): the sender's
        goal and readings, and the requirements the prose carried, plus those it held."""
        sent = self.minds[msg.sender]
        before = self.minds.get(receiver)
        context = "handoff_context" in msg.signals.get("layer3", {})
        keep = 1.0 if context else HANDOVER_KEEP if msg.kind == "handoff" else KEEP
        reqs = {r for r in sorted(sent.requirements) if self.rng.random() < keep}
        if before is not None:  # what it held before stays where the message is silent
            reqs |= before.requirements
        self.minds[receiver] = Understanding(sent.goal, reqs, dict(sent.concepts))
        self.evidence.setdefault(receiver, Evidence()).hear(msg.text)  # what the words said, heard

    def _check(self, msg: Message, own: dict[str, str]) -> list[str]:
        """What the receiver's checks find (empty: nothing).

        Layer 1: before replying, the receiver checks itself against the checklist and the
        goal hash (what it now believes, inherited drift included); a draft or the final
        report is also checked against the checklist — what it includes and what it does
        that the brief did not ask. Layer 2: the sender's stated readings against the
        registry's (layer 1 names the task), or without layer 1 against the receiver's own
        readings until now (which it may have inherited)."""
        reg, found = self.registry, []
        l1 = msg.signals.get("layer1")
        if l1 is not None:
            # compact: the task id only, and the receiver looks goal and checklist up in the registry
            mind, listed = self.minds[msg.receiver], set(l1.get("constraints", reg.requirements))
            if goal_hash(mind.goal) != l1.get("goal_hash", goal_hash(reg.goal)):
                found.append("goal")
            held = set(mind.requirements)
            if msg.kind in ("draft", "final"):  # the report as written: the sender's requirements
                held |= self.minds[msg.sender].requirements
                held -= listed - self.minds[msg.sender].requirements
            found += [f"lost:{r}" for r in sorted(listed - held)]
            found += [f"invented:{r}" for r in sorted(held - listed)]
        l2 = msg.signals.get("layer2")
        if l2 is not None:
            anchor = reg.concepts if l1 is not None else own
            found += [f"misunderstanding:{c}" for c, code in sorted(assumptions(l2).items())
                      if c in anchor and READING_CODES[anchor[c]] != code]
        return found

    def _calibrate(self, msg: Message, found: list[str]) -> None:
        """A calibration exchange: the agents involved take the registry's reading of what was
        found (with layer 3's drift alert: every agent)."""
        reg = self.registry
        involved = list(self.minds) if 3 in self.layers else [msg.sender, msg.receiver]
        for agent in involved:
            mind = self.minds[agent]
            for f in found:
                kind, _, what = f.partition(":")
                if kind == "goal":
                    mind.goal = reg.goal
                elif kind == "lost":
                    mind.requirements.add(what)
                elif kind == "invented":
                    mind.requirements.discard(what)
                    if mind.goal != reg.goal:
                        mind.goal = reg.goal
                else:
                    mind.concepts[what] = reg.concepts[what]
        for d in self.drifts:
            if d.detected_at is None and d.at <= msg.index and any(self._matches(d, f) for f in found):
                d.detected_at = msg.index
                d.caught_by = "layer2" if d.kind == "misunderstanding" else "layer1"
        self.calibrations += 1
        if self.wire_form == "compact":  # by the registry's ids, and a short acknowledgement
            said = f"[cal {self.brief.task_id}] " + " ".join(self._registry_terse(f) for f in found)
            back = f"[ok {self.brief.task_id}]"
        else:  # by name, and the confirmation reads it back
            said = back = f"[calibration] {self.brief.task_id}: {self._registry_says_all(found)}. Please confirm."
        msg.calibration = said
        for agent in involved:  # what the calibration said, heard
            self.evidence.setdefault(agent, Evidence()).hear(self._registry_says_all(found))
        self.calibration_tokens += estimate_tokens(said) + estimate_tokens(back)  # the question and its answer

    def _registry_says(self, found: str) -> str:
        """One finding as the calibration words it: what the registry holds instead."""
        kind, _, what = found.partition(":")
        if kind == "goal":
            return f"the goal is: {self.registry.goal}"
        if kind == "lost":
            return f"required: {_req_text(what)}"
        if kind == "invented":
            return f"not required: {_req_text(what)}"
        return f"{what} means {self.registry.concepts[what]}"

    def _registry_terse(self, found: str) -> str:
        """One finding in the compact calibration: ``+id`` required, ``-id`` not, ``concept=code``,
        or the goal's words."""
        kind, _, what = found.partition(":")
        if kind == "goal":
            return f"goal: {self.registry.goal}"
        return f"+{what}" if kind == "lost" else f"-{what}" if kind == "invented" else \
            f"{what}={READING_CODES[self.registry.concepts[what]]}"

    def _registry_says_all(self, found: list[str]) -> str:
        """What a calibration tells, in words (what its hearers take in, whatever its wire form)."""
        return "; ".join(self._registry_says(f) for f in found)

    @staticmethod
    def _matches(d: Drift, found: str) -> bool:
        kind, _, what = found.partition(":")
        if kind == "goal":
            return d.kind == "invented" and d.what in ("persuasive", "forecast")
        return kind == d.kind and what == d.what

    # ------------------------------------------------------------ diagnosis and result

    def _diagnose(self, i: int) -> None:
        """The meta-task check every 3 messages (does each agent still hold the core task and its
        requirements?) and the concept-vector drift of the conversation so far."""
        if i % 3 == 2:
            scores = [(m.goal == self.registry.goal) * 0.4
                      + 0.6 * len(m.requirements & self.registry.requirements) / len(self.registry.requirements)
                      for m in self.minds.values()]
            self.meta_checks.append(float(np.mean(scores)))
        said = " ".join(m.text for m in self.messages[-3:])
        served = self.writer.similarity(said, self._brief_text) if self.writer is not None else None
        self.concept_measure = "embeddings" if served is not None else "lexical"
        self.concept_drift.append(served if served is not None else lexical_similarity(said, self._brief_text))

    def result(self) -> dict[str, Any]:
        final = self.minds.get("colleague") or self.minds["writer"]
        reg = self.registry
        honoured = [r for r in reg.requirements if r in final.requirements]
        conflicts = [r for r in final.requirements - reg.requirements
                     if (r == "forecast" and "no_forecast" in reg.requirements)
                     or (r == "pricing" and "no_pricing" in reg.requirements) or r in ("persuasive", "fact_check")]
        concepts_right = sum(final.concepts[c] == reg.concepts[c] for c in reg.concepts)
        goal_right = final.goal == reg.goal
        completed = len(honoured) == len(reg.requirements) and not conflicts and goal_right \
            and concepts_right == len(reg.concepts)
        consistency = 100 * (0.6 * (len(honoured) - len(conflicts) * 0.5) / len(reg.requirements)
                             + 0.25 * concepts_right / len(reg.concepts) + 0.15 * goal_right)
        message_tokens = sum(estimate_tokens(m.text) for m in self.messages)
        signal_toks = sum(estimate_tokens(wire(m.signals)) for m in self.messages if m.signals)
        sent = [(c, code) for m in self.messages if "layer2" in m.signals
                for c, code in assumptions(m.signals["layer2"]).items()]
        return {"task_id": self.brief.task_id, "completed": bool(completed), "consistency": round(consistency, 2),
                "drifts": [{"at": d.at, "kind": d.kind, "what": d.what, "detected_at": d.detected_at,
                            "caught_by": d.caught_by} for d in self.drifts],
                "calibrations": self.calibrations, "messages": len(self.messages) + 2 * self.calibrations,
                "message_tokens": message_tokens, "signal_tokens": signal_toks,
                "calibration_tokens": self.calibration_tokens,
                "model_written": self.model_written,
                "layer2_readings": [len(sent), sum(READING_CODES[reg.concepts[c]] != code for c, code in sent)],
                "meta_task": round(float(np.mean(self.meta_checks)), 3) if self.meta_checks else 1.0,
                "concept_similarity_end": round(self.concept_drift[-1], 3) if self.concept_drift else 1.0,
                "concept_measure": self.concept_measure}


def assumptions(layer2: dict[str, Any]) -> dict[str, str]:
    """The readings a layer 2 states, {concept: reading code}, in either wire form."""
    if "unsure" in layer2:
        return {c: v.split(".")[0] for c, v in layer2["unsure"].items()}
    return dict(layer2["assumptions"])


def _req_text(r: str) -> str:
    return INVENTED.get(r) or REQUIREMENTS[r][1]


def major_drifts(brief: Brief, seed: int) -> list[bool]:
    """Which of a task's drifts are *major*: left alone (no signals), they reach the final
    report — the same task run without signals ends with that drift in the final writer's
    belief (a drift in an agent that never writes the report again may not)."""
    shadow = Chain(brief, frozenset(), seed)
    shadow.run()
    final, reg = shadow.minds.get("colleague") or shadow.minds["writer"], shadow.registry
    return [(final.concepts[d.what] != reg.concepts[d.what]) if d.kind == "misunderstanding" else
            (d.what in final.requirements) if d.kind == "invented" else (d.what not in final.requirements)
            for d in shadow.drifts]


def evaluate(tasks: int, seed: int, layers: frozenset[int], l2_every: int = L2_EVERY,
             l2_triggers: bool = True, writer: Any = None, l2_source: str = "agent",
             wire_form: str = "full") -> dict[str, Any]:
    """``tasks`` seeded tasks through the chain with Argent ``layers``: the arm's figures
    (``writer``: a model writes the messages; ``l2_source``, ``wire_form``: see :data:`L2_SOURCES`,
    :data:`WIRES`)."""
    results, before = [], dict(writer.layer2) if writer is not None else {}
    for k in range(tasks):
        brief = draw_brief(seed, k)
        r = Chain(brief, layers, seed, l2_every, l2_triggers, writer, l2_source, wire_form).run()
        for d, reaches in zip(r["drifts"], major_drifts(brief, seed), strict=True):
            d["major"] = reaches
        results.append(r)

    def mean(key: str, digits: int) -> float:
        return round(float(np.mean([r[key] for r in results])), digits)

    message_toks = sum(r["message_tokens"] for r in results)
    extra = sum(r["signal_tokens"] + r["calibration_tokens"] for r in results)
    return {"tasks": tasks, "seed": seed, "layers": sorted(layers), **_drift_figures(results),
            "completion_rate": mean("completed", 4), "consistency_mean": mean("consistency", 2),
            "interventions_per_task": mean("calibrations", 3), "messages_per_task": mean("messages", 2),
            "extra_token_share": round(extra / max(1, message_toks + extra), 4),
            # the readings layer 2 put on the wire, and how many of them were not the brief's (a drift)
            "layer2_readings": {"sent": sum(r["layer2_readings"][0] for r in results),
                                "drifted": sum(r["layer2_readings"][1] for r in results)},
            "signal_token_share": round(sum(r["signal_tokens"] for r in results) / max(1, message_toks + extra), 4),
            "tokens": (f"counted by {token_counter()}" if token_counter() != "estimate" else
                       "estimated (no tokenizer: brains.prompt.estimate_tokens; MIROFISH_TOKENIZER names one)")
            + "; signals as their wire text",
            "l2_every": l2_every if 2 in layers else None, "l2_triggers": l2_triggers if 2 in layers else None,
            "l2_source": l2_source if 2 in layers else None, "wire": wire_form,
            "meta_task_consistency": mean("meta_task", 3), "concept_similarity_end": mean("concept_similarity_end", 3),
            "concept_measure": results[-1]["concept_measure"] if results else "lexical",
            **(_model_figures(results, writer, before) if writer is not None else {})}


def _drift_figures(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Drifts injected, major, and caught, overall and by kind."""
    drifts = [d for r in results for d in r["drifts"]]
    caught = [d for d in drifts if d["detected_at"] is not None]
    major = [d for d in drifts if d["major"]]
    by_kind = {k: {"injected": sum(d["kind"] == k for d in drifts), "major": sum(d["kind"] == k for d in major),
                   "intercepted": sum(d["kind"] == k for d in caught),
                   "major_intercepted": sum(d["kind"] == k and d["detected_at"] is not None for d in major)}
               for k in DRIFT_KINDS}
    return {"drifts_injected": len(drifts), "intercepted_share": round(len(caught) / max(1, len(drifts)), 4),
            "major_drifts": len(major),
            # which signal caught each major drift: the registry's layer 1, or the readings layer 2 sent
            "major_caught_by": {by: sum(d["caught_by"] == by for d in major) for by in ("layer1", "layer2")},
            "major_intercepted_share": round(sum(d["detected_at"] is not None for d in major) / max(1, len(major)), 4),
            "by_kind": by_kind}


def _model_figures(results: list[dict[str, Any]], writer: Any, before: dict[str, int]) -> dict[str, Any]:
    written = sum(r["model_written"] for r in results)
    return {"model_made": {"messages": written, "of": len(FLOW) * len(results),
                           "share": round(written / max(1, len(FLOW) * len(results)), 4)},
            "model_layer2": {k: n - before.get(k, 0) for k, n in writer.layer2.items()},  # this arm's
            "server_message_tokens": writer.server_tokens}


def compare(tasks: int, seed: int, l2_source: str = "agent", wire_form: str = "full") -> dict[str, Any]:
    """The four arms on the same tasks (none, L1, L1+2, L1+2+3)."""
    return {name: evaluate(tasks, seed, layers, l2_source=l2_source, wire_form=wire_form)
            for name, layers in ARMS.items()}


def dumps(summary: dict[str, Any]) -> str:
    return json.dumps(summary)
