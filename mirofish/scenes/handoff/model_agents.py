"""Model agents for the report chain: a model writes each message from what its agent
believes the task is (the same belief the embedded templates write from, drifts included),
through the scenes' blocking client (``brains/client.py``: one deadline per call, a capped
reply, a breaker). A failed call falls back to the template and is counted.

With agent-written layer 2 (``Chain(l2_source="agent")``, layer 2 on) the model also writes
its own layer 2 in a structured reply: besides the message, the key words whose meaning to it
is not backed by what it was told (``unsure``: concept, its reading, its confidence 0–1, the
alternative it heard). The prompt gives it its readings and how often each reading was stated
in what it received; what it flags is its own. An entry naming an unknown concept or reading,
or a confidence out of 0–1, is dropped and counted (``model_layer2.invalid``)."""

from __future__ import annotations

import re
import sys
from typing import Any

from ...brains.client import DEFAULT_TIMEOUT_S, ModelClient
from ...brains.copying import copies
from ...brains.prompt import first_json_object
from ...brains.prompts import load_prompt
from .brief import CONCEPTS, Brief
from .chain import CODE_READING, Understanding, _req_text

_BARE_NUMBER = re.compile(r"\s*[-+]?[\d.,%]+\s*")  # a message that is only a number ("1.000")

ALL_READINGS = [r for readings in CONCEPTS.values() for r in readings]
UNSURE_SCHEMA = {"type": "object", "properties": {
    "message": {"type": "string"},
    "unsure": {"type": "array", "items": {"type": "object", "properties": {
        "concept": {"type": "string", "enum": list(CONCEPTS)}, "reading": {"type": "string", "enum": ALL_READINGS},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "alternative": {"type": "string", "enum": [*ALL_READINGS, ""]}},
        "required": ["concept", "reading", "confidence", "alternative"], "additionalProperties": False}}},
    "required": ["message", "unsure"], "additionalProperties": False}

# The writers' system prompt lives in assets/prompts/handoff.toml (brains/prompts.py).
WHAT = {"insights": "the insights for the writer: the facts that serve the task, one per line",
        "draft": "a draft of the report from the facts", "final": "the final report from the facts",
        "review": "your review of the draft: what to keep, what to fix, which requirements to check",
        "question": "a short question to the analyst for more data",
        "handoff": "a hand-over note to the colleague who takes over the report"}


def _reading(concept: Any, value: Any) -> str | None:
    """``value`` as one of ``concept``'s readings (its words or its code); None if it is not one."""
    r = CODE_READING.get(value, value) if isinstance(value, str) else None
    return r if isinstance(concept, str) and r in CONCEPTS.get(concept, ()) else None


class ModelWriter:
    """Writes the chain's messages with a model (``handoff --agents llm``)."""

    def __init__(self, base_url: str, model: str, seed: int = 0, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_tokens: int = 300, prompt: str | None = None):
        self.client = ModelClient(base_url, model, timeout_s=timeout_s, seed=seed)
        self.prompt = load_prompt(prompt, "handoff")
        self.max_tokens = max_tokens
        self.failures: dict[str, int] = {}
        self.layer2 = {"stated": 0, "invalid": 0}  # layer-2 entries the model wrote, and those dropped
        self.server_tokens = 0  # the model's messages, counted by the server's own tokenizer
        self._embeds = True  # until the server shows it serves no embeddings

    def write(self, role: str, kind: str, mind: Understanding, received: str, facts: list[str],
              brief: Brief, told: dict[str, dict[str, int]] | None = None,
              ) -> tuple[str, dict[str, tuple[str, float, str | None]] | None] | None:
        """The message (and, when ``told`` is given — what the agent was told about each concept
        —, the layer 2 the model wrote: {concept: (reading, confidence, alternative)}); None
        when the call failed (the template writes it)."""
        lines = [f"You are the {role}. The task as you understand it: {mind.goal}",
                 "Requirements: " + "; ".join(_req_text(r) for r in sorted(mind.requirements)) + ".",
                 "What the key words mean to you: " + "; ".join(f"{c} = {r}" for c, r in mind.concepts.items()) + ".",
                 f"Segment: {brief.segment}, {brief.quarter}."]
        if received:
            lines.append(f"The last message you received: {received[:600]}")
        if kind in ("insights", "draft", "final"):
            lines.append("Facts:\n- " + "\n- ".join(facts))
        lines.append(f"Write {WHAT[kind]}.")
        if told is not None:
            lines.append("What you were told about the key words (how often each reading was stated in the "
                         "messages you received): " + "; ".join(
                             f"{c}: " + (", ".join(f"'{r}' {n}x" for r, n in sorted(said.items())) or "nothing")
                             for c, said in told.items()) + ".")
            lines.append("Each key word can mean: " + "; ".join(f"{c}: " + " | ".join(f"'{r}'" for r in readings)
                                                               for c, readings in CONCEPTS.items()) + ".")
            lines.append('Reply as JSON: {"message": your message, "unsure": [{"concept", "reading", "confidence", '
                         '"alternative"}]} - in "unsure" list only the key words whose meaning to you is not '
                         "backed by what you were told: your reading, how sure you are (0 to 1) and the other "
                         'reading you were told ("" if none).')
        reply = self.client.complete([{"role": "system", "content": self.prompt.t("agent", "system")},
                                      {"role": "user", "content": "\n".join(lines)}],
                                     UNSURE_SCHEMA if told is not None else None, max_tokens=self.max_tokens)
        text = str(reply.get("text") or "").strip()
        if reply.get("error") or not text:
            self._fail(f"writer_{reply.get('error') or 'empty'}")
            return None
        unsure = None
        if told is not None:
            data = first_json_object(text)
            if data is None or not str(data.get("message") or "").strip():
                self._fail("writer_not_json")
                return None
            text, unsure = str(data["message"]).strip(), self._unsure(data.get("unsure"))
        # a message that only restates the task, or is a bare number, says nothing of the agent's
        # own: not model-made (the template writes it), counted by why
        if _BARE_NUMBER.fullmatch(text):
            self._fail("writer_bare_number")
            return None
        if copies(text, [mind.goal, lines[0]]):
            self._fail("writer_restates_task")
            return None
        self.server_tokens += int(reply.get("completion_tokens") or 0)
        return text, unsure

    def _fail(self, why: str) -> None:
        self.failures[why] = self.failures.get(why, 0) + 1
        return None

    def _unsure(self, entries: Any) -> dict[str, tuple[str, float, str | None]]:
        """The model's layer 2, the entries the chain can use (a reading by its words or its
        code); the others are dropped and counted."""
        out: dict[str, tuple[str, float, str | None]] = {}
        for e in entries if isinstance(entries, list) else []:
            self.layer2["stated"] += 1
            concept = e.get("concept") if isinstance(e, dict) else None
            reading = _reading(concept, e.get("reading")) if isinstance(e, dict) else None
            conf = e.get("confidence") if reading is not None else None
            if reading is None or isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
                self.layer2["invalid"] += 1
                continue
            out[str(concept)] = (reading, round(float(conf), 2), _reading(concept, e.get("alternative")))
        return out

    def similarity(self, a: str, b: str) -> float | None:
        """The cosine of two texts' embeddings, when the server serves embeddings (else None)."""
        if not self._embeds:
            return None
        vecs = self.client.embed([a, b])
        if not vecs or len(vecs) < 2:
            self._embeds = False
            dead = any(k.endswith(("_connection", "_breaker_open", "_timeout")) for k in self.failures)
            self._fail("embeddings_unavailable")  # recorded in the run's failures, and said once
            if not dead:  # (a server that is gone is said by the run's own line)
                print("mirofish handoff: warning: the model server gave no embeddings (/v1/embeddings); concept "
                      "drift is measured lexically", file=sys.stderr, flush=True)
            return None
        x, y = vecs[0], vecs[1]
        dot = sum(p * q for p, q in zip(x, y, strict=False))
        nx, ny = sum(p * p for p in x) ** 0.5, sum(q * q for q in y) ** 0.5
        return dot / (nx * ny) if nx and ny else 0.0

    def close(self) -> dict[str, Any]:
        self.client.close()
        return dict(self.failures)
