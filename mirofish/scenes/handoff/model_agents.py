"""Model agents for the report chain: a model writes each message from what its agent
believes the task is (the same belief the embedded templates write from, drifts included),
through the scenes' blocking client (``brains/client.py``: one deadline per call, a capped
reply, a breaker). A failed call falls back to the template and is counted."""

from __future__ import annotations

from typing import Any

from ...brains.client import DEFAULT_TIMEOUT_S, ModelClient
from ...brains.prompts import load_prompt
from .brief import Brief
from .chain import Understanding, _req_text

# The writers' system prompt lives in assets/prompts/handoff.toml (brains/prompts.py).
WHAT = {"insights": "the insights for the writer: the facts that serve the task, one per line",
        "draft": "a draft of the report from the facts", "final": "the final report from the facts",
        "review": "your review of the draft: what to keep, what to fix, which requirements to check",
        "question": "a short question to the analyst for more data",
        "handoff": "a hand-over note to the colleague who takes over the report"}


class ModelWriter:
    """Writes the chain's messages with a model (``handoff --agents llm``)."""

    def __init__(self, base_url: str, model: str, seed: int = 0, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_tokens: int = 300, prompt: str | None = None):
        self.client = ModelClient(base_url, model, timeout_s=timeout_s, seed=seed)
        self.prompt = load_prompt(prompt, "handoff")
        self.max_tokens = max_tokens
        self.failures: dict[str, int] = {}
        self.server_tokens = 0  # the model's messages, counted by the server's own tokenizer
        self._embeds = True  # until the server shows it serves no embeddings

    def write(self, role: str, kind: str, mind: Understanding, received: str, facts: list[str],
              brief: Brief) -> str | None:
        lines = [f"You are the {role}. The task as you understand it: {mind.goal}",
                 "Requirements: " + "; ".join(_req_text(r) for r in sorted(mind.requirements)) + ".",
                 "What the key words mean to you: " + "; ".join(f"{c} = {r}" for c, r in mind.concepts.items()) + ".",
                 f"Segment: {brief.segment}, {brief.quarter}."]
        if received:
            lines.append(f"The last message you received: {received[:600]}")
        if kind in ("insights", "draft", "final"):
            lines.append("Facts:\n- " + "\n- ".join(facts))
        lines.append(f"Write {WHAT[kind]}.")
        reply = self.client.complete([{"role": "system", "content": self.prompt.t("agent", "system")},
                                      {"role": "user", "content": "\n".join(lines)}], None,
                                     max_tokens=self.max_tokens)
        text = str(reply.get("text") or "").strip()
        if reply.get("error") or not text:
            why = f"writer_{reply.get('error') or 'empty'}"
            self.failures[why] = self.failures.get(why, 0) + 1
            return None
        self.server_tokens += int(reply.get("completion_tokens") or 0)
        return text

    def similarity(self, a: str, b: str) -> float | None:
        """The cosine of two texts' embeddings, when the server serves embeddings (else None)."""
        if not self._embeds:
            return None
        vecs = self.client.embed([a, b])
        if not vecs or len(vecs) < 2:
            self._embeds = False
            return None
        x, y = vecs[0], vecs[1]
        dot = sum(p * q for p, q in zip(x, y, strict=False))
        nx, ny = sum(p * p for p in x) ** 0.5, sum(q * q for q in y) ** 0.5
        return dot / (nx * ny) if nx and ny else 0.0

    def close(self) -> dict[str, Any]:
        self.client.close()
        return dict(self.failures)
