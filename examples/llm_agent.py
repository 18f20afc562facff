"""An LLM agent with its own prompt and memory — a worked example of your own brain (docs/brains.md).

It keeps, per fish, a short diary of what it decided and what happened to its energy, writes
its own prompt from the fish's view and that diary, and asks an OpenAI-compatible server
through ``ctx.chat`` — the client MiroFish hands a brain: deadline, retries, the breaker, the
API key read from its variable, every exchange recorded with the decision it served (so
``run.py trace`` and ``export --otel`` show them) and answered from the reply cache in a fork.

Run it against any OpenAI-compatible server, e.g. Ollama or the bundled test server::

    python -m mirofish.brains.testserver --port 8765 &
    python run.py live --headless --ticks 300 --brain examples/llm_agent.py:LLMAgent \\
        --base-url http://127.0.0.1:8765/v1 --model fish-mini --record saves/agent.mirofish
"""

from __future__ import annotations

from collections import defaultdict, deque

from mirofish.brains.prompt import first_json_object, salvage_cut
from mirofish.brains.user import Ask, BrainContext

# No placeholder text a small model could copy into its thought ("why, at most 80 characters" was
# copied by SmolLM2 into 62 of 175 thoughts): the fields are described, not shown.
SYSTEM = """You steer one fish in a shared aquarium. Keep it fed; company helps against the current.
Answer with one JSON object with the keys goal (one of the plans offered), direction (north, south,
west or east; explore only), ticks (how long to keep the plan) and thought (your reason, a few words)."""


class LLMAgent:
    name = "diary-agent"
    concurrency = 1  # one request at a time: a local server answers one at a time anyway

    def setup(self, ctx: BrainContext) -> None:
        self.ctx = ctx
        self.diary: dict[int, deque[str]] = defaultdict(lambda: deque(maxlen=5))
        self.last_energy: dict[int, float] = {}

    def decide(self, ask: Ask) -> dict:
        mine = self.diary[ask.fish]
        if ask.fish in self.last_energy:
            mine.append(f"energy went {self.last_energy[ask.fish]:.0f} -> {ask.energy:.0f}")
        self.last_energy[ask.fish] = ask.energy
        user = "\n".join([
            f"You are {ask.persona}. Asking because: {ask.trigger.replace('_', ' ')}.",
            ask.view,
            f"Energy {ask.energy:.0f}/{ask.max_energy:.0f}{'; food under you' if ask.food_here else ''}.",
            "Your diary: " + ("; ".join(mine) or "empty") + ".",
            "Plans that fit now: " + ", ".join(
                f"explore {'/'.join(ask.directions)}" if p == "explore" else p for p in ask.plans) + ".",
        ])
        schema = {"type": "object", "additionalProperties": False,
                  "required": ["goal", "direction", "ticks", "thought"],
                  "properties": {"goal": {"type": "string", "enum": list(ask.plans)},
                                 "direction": {"anyOf": [{"type": "string", "enum": list(ask.directions) or
                                                          ["north"]}, {"type": "null"}]},
                                 "ticks": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                                 "thought": {"type": "string"}}}
        text = self.ctx.chat([{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                             schema=schema, max_tokens=80)
        # read leniently, as the built-in brain reads its model: the first JSON object in the reply,
        # or a reply cut at max_tokens inside its thought; the text itself goes back to MiroFish,
        # which judges it (a reply with no plan in it is counted as brain_garbage, instinct decides)
        plan = first_json_object(text) or salvage_cut(text) or {}
        mine.append(f"t{ask.tick} {plan.get('goal', 'no plan')}")
        return text

    def answer(self, question: dict, ask: Ask):
        """A survey's question (``run.py survey``), asked of its model in its own words, with the
        fish's view and diary; the model's answer goes back as it came (MiroFish reads it as it
        reads a model's: a Likert score, one of the options, a number, or text)."""
        kind = question["kind"]
        if kind == "likert":
            how, answer = "a whole number from 1 to 5", {"type": "integer", "minimum": 1, "maximum": 5}
        elif kind == "choice":
            how, answer = "one of " + ", ".join(question["options"]), {"type": "string", "enum": question["options"]}
        elif kind == "number":
            how = f"a number from {question['min']:g} to {question['max']:g}"
            answer = {"type": "number", "minimum": question["min"], "maximum": question["max"]}
        else:
            how, answer = "a short sentence", {"type": "string"}
        user = "\n".join([f"You are {ask.persona}.", ask.view,
                          f"Energy {ask.energy:.0f}/{ask.max_energy:.0f}.",
                          "Your diary: " + ("; ".join(self.diary[ask.fish]) or "empty") + ".",
                          f"Question: {question['text']} Answer with {how}."])
        schema = {"type": "object", "additionalProperties": False, "required": ["answer"],
                  "properties": {"answer": answer}}
        text = self.ctx.chat([{"role": "system", "content": "You are one fish in a shared aquarium; answer as it."},
                              {"role": "user", "content": user}], schema=schema, max_tokens=60)
        return (first_json_object(text) or {}).get("answer")
