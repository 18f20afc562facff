"""Model agents for the referential game, through a model client (mirofish.brains.client).

The sender gets the source design's rules: at most ``max_chars`` characters, no spelled-out attributes,
reuse the glossary's terms, and declare any new term with its canonical properties. The
receiver gets the message, the candidate list and the glossary and must return its choice and
its interpretation of each term. Replies are JSON read tolerantly; malformed ones are counted
by reason in the experiment's ``failures`` and the round is lost — never a crash.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ...brains.client import DEFAULT_TIMEOUT_S, ModelClient
from ...brains.prompt import first_json_object
from ...brains.prompts import Prompt, load_prompt
from ...config import BrainConfig
from .game import Game, GameConfig, GameObject, distinguishing
from .glossary import Glossary, GlossaryError, Meaning

# The prompts show a worked example made from the game's real attributes (a small model copies
# placeholders such as "<attribute>" verbatim; it may as well copy something valid).
# The agents' system prompts live in assets/prompts/referential.toml (brains/prompts.py): $max_chars,
# $words and $example filled per round.

SENDER_SCHEMA = {"type": "object", "properties": {
    "message": {"type": "string"},
    "new_terms": {"type": "array", "items": {"type": "object", "properties": {
        "term": {"type": "string"}, "canonical": {"type": "object"}}, "required": ["term", "canonical"]}}},
    "required": ["message"]}
RECEIVER_SCHEMA = {"type": "object", "properties": {
    "choice": {"type": "string"}, "interpretation": {"type": "object"}}, "required": ["choice"]}


def receiver_schema(candidate_ids: list[str]) -> dict[str, Any]:
    """The receiver's reply schema with ``choice`` an enum of this round's candidate ids."""
    schema: dict[str, Any] = json.loads(json.dumps(RECEIVER_SCHEMA))
    schema["properties"]["choice"]["enum"] = list(candidate_ids)
    return schema


def _glossary_lines(glossary: Glossary) -> str:
    terms = sorted(glossary.active(), key=lambda t: -t.stable_score)
    return "\n".join(f"{t.term} = {json.dumps(t.canonical)}" for t in terms) or "(empty)"


def _examples(game: Game) -> tuple[str, str]:
    """A sender and a receiver reply for this game's attributes, as the prompts' examples."""
    (a1, v1), (a2, v2) = [(a, vals[0]) for a, vals in list(game.cfg.attributes.items())[:2]]
    sender = json.dumps({"message": "ko-ta", "new_terms": [{"term": "ko", "canonical": {a1: v1}},
                                                            {"term": "ta", "canonical": {a2: v2}}]})
    receiver = json.dumps({"choice": "obj_3", "interpretation": {"ko": {a1: v1}, "ta": {a2: v2}}})
    return sender, receiver


class ModelAgent:
    def __init__(self, name: str, game: Game, glossary: Glossary, client: ModelClient, failures: dict[str, int],
                 prompt: Prompt | None = None):
        self.name, self.game, self.glossary, self.client, self.failures = name, game, glossary, client, failures
        self.prompt = prompt or load_prompt(None, "referential")
        self.interps: dict[str, Meaning] = {}
        self.last_raw = ""
        self.made = {"sender": 0, "receiver": 0}  # turns the model actually played (the summary reports them)
        self._sender_example, self._receiver_example = _examples(game)

    def _fail(self, reason: str) -> None:
        self.failures[reason] = self.failures.get(reason, 0) + 1

    def speak(self, target: GameObject, round_: int, explore: float, invent: bool, status: str,
              candidates: list[GameObject] | None = None) -> tuple[str, list[str], list[str]]:
        cfg = self.game.cfg
        words = ", ".join(v for vals in cfg.attributes.values() for v in vals)
        seen = ""
        if candidates and cfg.context:  # name only what tells the target apart from these
            need = distinguishing(target, candidates, self.game.names)
            seen = (f"The receiver sees {len(candidates)} objects; naming {', '.join(need)} is enough to tell the "
                    f"target apart.\n")
            if cfg.templates:  # one term, for a schema: these values, whatever the rest and the detail
                schema = {a: target.properties(self.game.names)[a] for a in need}
                seen += (f"Name it with ONE term for the template {json.dumps(schema)} (a term means exactly "
                         f"these values, on any object that has them; the detail is not part of it).\n")
        shown = {**target.properties(self.game.names), **_detail(target)}
        user = (f"Glossary:\n{_glossary_lines(self.glossary)}\n{seen}"
                f"Your target: {json.dumps(shown)}\nYour JSON:")
        system = self.prompt.fill("sender", "system", max_chars=str(cfg.max_chars), words=words,
                                  example=self._sender_example)
        msgs = [{"role": "system", "content": system},
                {"role": "user", "content": user}]
        data: dict[str, Any] = {}
        for attempt in range(2):  # a message that breaks a rule gets one corrective retry
            reply = self.client.complete(msgs, SENDER_SCHEMA)
            self.last_raw = reply["text"] or f"<{reply['error']}>"
            if reply["error"]:
                self._fail(f"sender_{reply['error']}")
                return "", [], []
            parsed = first_json_object(reply["text"])
            if parsed is None or not isinstance(parsed.get("message"), str):
                self._fail("sender_malformed")
                return "", [], []
            data = parsed
            problem = self.game.check_message(data["message"].strip())
            if problem is None or attempt == 1:
                break
            self._fail("sender_corrected")
            msgs = [*msgs, {"role": "assistant", "content": reply["text"]},
                    {"role": "user", "content": f"Your message {data['message']!r} is not allowed: it is {problem}. "
                                                f"Use at most {cfg.max_chars} characters of invented terms. "
                                                f"Your JSON:"}]
        self.made["sender"] += 1
        message = data["message"].strip()
        new = []
        for item in data.get("new_terms") or []:
            term, canonical = (item or {}).get("term"), (item or {}).get("canonical")
            if not invent:
                break
            if not isinstance(term, str) or not isinstance(canonical, dict) or not canonical:
                self._fail("new_term_without_definition")
                continue
            if term in self.glossary:
                continue
            self.glossary.add(term, canonical, canonical, round_, status=status, proposed_by=self.name,
                              example=target.detail or None)
            new.append(term)
        tokens = [t for t in re.split(r"[^A-Za-z0-9]+", message) if t]
        used = [t for t in tokens if t in self.glossary]
        return message, used, new

    def listen(self, message: str, candidates: list[GameObject]) -> tuple[str | None, dict[str, Any]]:
        lines = "\n".join(f"{c.id}: {json.dumps({**c.properties(self.game.names), **_detail(c)})}"
                          for c in candidates)
        user = f"Glossary:\n{_glossary_lines(self.glossary)}\nMessage: {message}\nCandidates:\n{lines}\nYour JSON:"
        msgs = [{"role": "system", "content": self.prompt.fill("receiver", "system", example=self._receiver_example)},
                {"role": "user", "content": user}]
        reply = self.client.complete(msgs, receiver_schema(sorted(c.id for c in candidates)))
        self.last_raw = reply["text"] or f"<{reply['error']}>"
        if reply["error"]:
            self._fail(f"receiver_{reply['error']}")
            return None, {}
        data = first_json_object(reply["text"])
        ids = {c.id for c in candidates}
        if data is None or data.get("choice") not in ids:
            self._fail("receiver_malformed" if data is None else "receiver_invalid_choice")
            return None, {}
        given = data.get("interpretation")
        interp: dict[str, Any] = given if isinstance(given, dict) else {}
        self.made["receiver"] += 1
        for term, meaning in interp.items():
            if isinstance(meaning, dict):
                self.interps[term] = meaning
        return data["choice"], interp

    def interpretation(self, term: str) -> Meaning | None:
        return self.interps.get(term)


def _detail(obj: GameObject) -> dict[str, str]:
    """An instance's free text (the ``templates`` option), shown with its attributes."""
    return {"detail": obj.detail} if obj.detail else {}


def model_agent_factory(base_url: str, model: str, cfg: GameConfig, timeout_s: float = DEFAULT_TIMEOUT_S,
                        prompt: str | None = None, cache: Any = None) -> Callable[[str], _Bound]:
    """Agents sharing one model client (the same transport, limits and breaker as the
    aquarium's model brain); each model call takes at most ``timeout_s`` in all. ``prompt``: a
    referential prompt file (default assets/prompts/referential.toml); ``cache``: a reply cache
    (``--reply-cache DIR``) the agents' requests are answered from when asked before."""
    client = ModelClient(base_url, model, timeout_s=timeout_s, seed=cfg.seed,
                         brain=BrainConfig(temperature=cfg.temperature), cache=cache)
    state = {"closed": False, "prompt": load_prompt(prompt, "referential")}

    def make(name: str) -> _Bound:
        return _Bound(name, client, state)

    return make


class _Bound:
    """Late binding: the experiment creates agents before its game and glossary are visible here."""

    def __init__(self, name: str, client: ModelClient, state: dict[str, Any]):
        self.name, self.client, self.state = name, client, state
        self.agent: ModelAgent | None = None

    def bind(self, game: Game, glossary: Glossary, failures: dict[str, int]) -> None:
        self.agent = ModelAgent(self.name, game, glossary, self.client, failures, self.state["prompt"])

    def __getattr__(self, item: str) -> Any:
        return getattr(self.__dict__["agent"], item)

    def close(self) -> None:
        if not self.state["closed"]:
            self.state["closed"] = True
            self.client.close()


def check_glossary(glossary: Glossary, base_url: str, model: str, rounds: int = 40, seed: int = 0,
                   timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """``glossary check``: does a (new) model still read the glossary's terms? ``rounds``
    rounds are drawn over the values the glossary names (a target among up to five
    candidates, its message made of the glossary's best term for each value that tells it
    apart) and the model, as the receiver, picks one and says what each term means. Per
    term: how often it was read as defined; a term read as defined in fewer than half of its
    rounds is *lost* for that model."""
    attributes: dict[str, set[str]] = {}
    for t in glossary.active():
        for attr, value in t.canonical.items():
            attributes.setdefault(attr, set()).add(value)
    if not attributes:
        raise GlossaryError(f"glossary {glossary.path} has no active terms to check")
    values = {a: sorted(v) for a, v in sorted(attributes.items())}
    objects = 1
    for v in values.values():
        objects *= len(v)
    game = Game(GameConfig(seed=seed, attributes=values, candidates=max(2, min(5, objects))))
    client = ModelClient(base_url, model, timeout_s=timeout_s, seed=seed)
    failures: dict[str, int] = {}
    agent = ModelAgent("check", game, glossary, client, failures)
    per_term: dict[str, list[int]] = {}
    picked = asked = 0
    try:
        for r in range(rounds):
            rnd = game.draw_round(r)
            props = rnd.target.properties(game.names)
            terms = []
            for attr in distinguishing(rnd.target, rnd.candidates, game.names):
                known = glossary.terms_for({attr: props[attr]})
                if known:
                    terms.append(max(known, key=lambda t: (t.stable_score, t.usage, t.term)).term)
            if not terms:
                continue
            asked += 1
            choice, interp = agent.listen("".join(terms), rnd.candidates)
            picked += choice == rnd.target.id
            for term in terms:
                row = per_term.setdefault(term, [0, 0])
                row[0] += 1
                defined = glossary.get(term)
                row[1] += defined is not None and (interp or {}).get(term) == defined.canonical
    finally:
        client.close()
    read = {t: {"means": d.canonical if (d := glossary.get(t)) else None, "asked": n,
                "read_as_defined": ok, "still_read": ok * 2 >= n} for t, (n, ok) in sorted(per_term.items())}
    return {"model": model, "rounds": asked, "target_picked": round(picked / max(1, asked), 4),
            "terms_checked": len(read), "terms_still_read": sum(v["still_read"] for v in read.values()),
            "terms_lost": sorted(t for t, v in read.items() if not v["still_read"]), "terms": read,
            "model_failures": failures}
