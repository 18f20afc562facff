"""What the test server (mirofish/brains/testserver.py) answers: its fault modes and policies, and
its scripted replies — fish plans and actions read from the view in the prompt, the scenes'
turns (negotiation, the referential game, the report chain), surveys, embeddings — each a pure
function of the prompt (and the fault and policy), so a run against it is reproducible."""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
import threading
from typing import Any

from .prompt import TokenizerError, estimate_tokens, estimate_without_tokenizer

FAULTS = ("none", "slow", "garbage", "fenced", "illegal", "429", "500", "reject_json_schema", "hang", "drip", "endless",
          "reset", "not_http", "huge_body", "retry_after_forever", "rule_breaker", "schema_breaker", "echo_auth",
          "lax_grammar", "no_embeddings", "json_array")
POLICIES = ("scripted", "forager", "contrarian", "copycat", "newest")  # copycat: a small model that copies its prompt
_OPPOSITE = {"north": "south", "south": "north", "west": "east", "east": "west"}


_TOLD: set[str] = set()  # the tokenizer problems already said (one line each, once)
_TOLD_LOCK = threading.Lock()


def _tell(message: str) -> None:
    """One line on standard error, once a message (a tokenizer problem, not a traceback a request)."""
    with _TOLD_LOCK:
        new = message not in _TOLD
        _TOLD.add(message)
    if new:
        print(f"testserver: {message}; usage is counted with the estimate", file=sys.stderr, flush=True)


def count_tokens(text: str) -> int:
    """:func:`~mirofish.brains.prompt.estimate_tokens`; where ``MIROFISH_TOKENIZER`` names a tokenizer
    that cannot count, the tokenizer-free estimate and one line on standard error (once)."""
    try:
        return estimate_tokens(text)
    except TokenizerError as exc:
        _tell(str(exc))
        return estimate_without_tokenizer(text)


def contrary(reply: dict[str, Any]) -> dict[str, Any]:
    """A plan whose thought says something else than the plan does (a model whose words and
    deeds disagree): explore one way while saying the opposite, anything else while saying it
    will rest."""
    if reply.get("goal") == "explore" and reply.get("direction") in _OPPOSITE:
        return {**reply, "thought": f"I head {_OPPOSITE[reply['direction']]}, away from here"}
    return {**reply, "thought": "tired, I stay put and rest"}


def strict_schema_errors(schema: Any, path: str = "schema") -> list[str]:
    """Where ``schema`` breaks OpenAI's strict structured-output rules: every object must list
    all its properties as required and set ``additionalProperties: false``."""
    errors: list[str] = []
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            props = schema.get("properties") or {}
            if schema.get("additionalProperties") is not False:
                errors.append(f"{path}: additionalProperties must be false")
            missing = sorted(set(props) - set(schema.get("required") or []))
            if missing:
                errors.append(f"{path}: every property must be required ({', '.join(missing)} is not)")
        for key, value in schema.items():
            if isinstance(value, (dict, list)):
                errors += strict_schema_errors(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for k, value in enumerate(schema):
            errors += strict_schema_errors(value, f"{path}[{k}]")
    return errors


_MOVES = {"move_n": (0, -1), "move_s": (0, 1), "move_w": (-1, 0), "move_e": (1, 0)}


_VIEW_ROW = re.compile(r"^[.#F@^v<>PX?]{3,13}$", re.M)  # a view row: any side (perception.radius), any code
_FISH = "^v<>"


def _view(prompt: str) -> list[str] | None:
    """The last square view in ``prompt`` (its rows), or None: the last ``side`` rows of one
    width, ``side`` odd (5 at the default radius; a plant, a hunter or a cell out of sight read
    as they are shown)."""
    rows = _VIEW_ROW.findall(prompt)
    if not rows:
        return None
    side = len(rows[-1])
    view = rows[-side:]
    if side % 2 == 0 or len(view) < side or any(len(r) != side for r in view):
        return None
    return view


def _find(pattern: str, text: str, flags: int = 0) -> str:
    """The first group of ``pattern`` in ``text``; ValueError (a 500 to the client) if absent."""
    found = re.search(pattern, text, flags)
    if found is None:
        raise ValueError(f"the prompt has no {pattern!r}")
    return found.group(1)


_HEX_ROW = re.compile(r"^ {0,12}[.#F@1346789PX?](?: [.#F@1346789PX?]){1,12}$", re.M)


def _hex_view(prompt: str) -> str | None:
    """The last hexagonal view in ``prompt`` (mirofish/grid.py: rows of cells a space apart,
    each row half a cell off the next, 2r + 1 rows), or None."""
    rows = _HEX_ROW.findall(prompt)
    if len(rows) < 3:
        return None
    cells = [len(r.split()) for r in rows]
    r = (max(cells) - 1) // 2
    view = rows[-(2 * r + 1):]
    if [len(x.split()) for x in view] != [2 * r + 1 - abs(k - r) for k in range(2 * r + 1)]:
        return None
    return "\n".join(view)


def _hex_plan(view: str, energy: int, prompt: str) -> dict[str, Any]:
    """:func:`scripted_plan` for a hexagonal view: deterministic and legal for it."""
    from ..grid import HEX

    if energy == 0:
        return {"goal": "rest", "until": 10, "ticks": 20, "thought": "exhausted"}
    if "F" in view and energy < 60:
        return {"goal": "forage", "ticks": 40, "thought": f"hungry ({energy}), food in view"}
    if any(c in view for c in HEX.fish_chars):
        return {"goal": "school", "ticks": 120, "thought": "others nearby, swim with them"}
    ways = [w for w, ch in zip(HEX.move_names, HEX.neighbour_chars(view)) if ch in ".F"]
    k = int(hashlib.blake2b(prompt.encode(), digest_size=4).hexdigest(), 16)
    way = ways[k % len(ways)] if ways else "east"
    return {"goal": "explore", "direction": way, "ticks": 30, "thought": f"open water to the {way}"}


def scripted_plan(prompt: str) -> dict[str, Any]:
    """A plan for a plan-mode fish prompt: deterministic and legal for the view in it."""
    found = re.search(r"energy (\d+)/", prompt, re.I)
    energy = int(found.group(1)) if found else 50
    hexes = _hex_view(prompt)
    if hexes is not None:
        return _hex_plan(hexes, energy, prompt)
    view = _view(prompt)
    if view is None:
        return {"goal": "explore", "direction": "east", "ticks": 20, "thought": "I cannot make out the water"}
    text = "".join(view)
    r = len(view) // 2
    if energy == 0:
        return {"goal": "rest", "until": 10, "ticks": 20, "thought": "exhausted"}
    if "F" in text and energy < 60:
        return {"goal": "forage", "ticks": 40, "thought": f"hungry ({energy}), food in view"}
    if any(c in text for c in _FISH):
        return {"goal": "school", "ticks": 120, "thought": "others nearby, swim with them"}
    open_ways = {"north": sum(row.count(".") for row in view[:r]), "south": sum(row.count(".") for row in view[r + 1:]),
                 "west": sum(row[:r].count(".") for row in view), "east": sum(row[r + 1:].count(".") for row in view)}
    ahead = {"north": view[r - 1][r], "south": view[r + 1][r], "west": view[r][r - 1], "east": view[r][r + 1]}
    ways = sorted((-n, w) for w, n in open_ways.items() if ahead[w] != "#")
    k = int(hashlib.blake2b(prompt.encode(), digest_size=4).hexdigest(), 16)
    way = ways[k % min(2, len(ways))][1] if ways else "north"
    return {"goal": "explore", "direction": way, "ticks": 30, "thought": f"open water to the {way}"}


def scripted_reply(prompt: str) -> tuple[str, str]:
    """(action, thought) for a fish prompt: deterministic, legal for the view in it."""
    view = _view(prompt)
    if view is None:
        return "rest", "I cannot make out the water"
    food_here = re.search(r"^here: food", prompt, re.M) is not None
    r = len(view) // 2
    cells = {(x - r, y - r): view[y][x] for y in range(len(view)) for x in range(len(view))}
    legal = [a for a, (dx, dy) in _MOVES.items() if cells[(dx, dy)] in ".F"]
    if food_here or any(cells[d] == "F" for d in _MOVES.values()):
        return "eat", "food right here"

    def toward(target: str) -> str | None:
        spots = sorted((abs(x) + abs(y), x, y) for (x, y), c in cells.items() if c == target and abs(x) + abs(y) > 1)
        for _, x, y in spots:
            best = [a for a in legal if abs(x - _MOVES[a][0]) + abs(y - _MOVES[a][1]) < abs(x) + abs(y)]
            if best:
                return best[0]
        return None

    if (a := toward("F")) is not None:
        return a, "food ahead"
    for c in _FISH:
        if (a := toward(c)) is not None:
            return a, "steadier near the others"
    if not legal:
        return "rest", "boxed in, waiting"
    k = int(hashlib.blake2b(prompt.encode(), digest_size=4).hexdigest(), 16)
    return legal[k % len(legal)], "exploring open water"


_NAME_LEVEL = r'"(\w+)" (\w+) = level (\d)'
_STATING = ("confirming restatement", "revealing assumptions", "yes no confirmation")


def negotiation_repair_reply(prompt: str) -> str:
    """Scripted repairs: the initiator states its readings outright in the strategies that say
    them (restatement, revealing assumptions, the yes/no question) and only asks in the others;
    the other side takes a reading it was told outright and keeps its own otherwise."""
    mine = {f"{issue}:{name}": int(level) for name, issue, level in re.findall(_NAME_LEVEL, prompt)}
    if "Repair strategy:" in prompt:
        strategy = _find(r"Repair strategy: ([a-z ]+):", prompt)
        if strategy in _STATING:
            message = " ".join(f'By "{k.split(":")[1]}" {k.split(":")[0]} I mean level {v}.' for k, v in mine.items())
        elif strategy == "offering options":
            message = " ".join(f'Does "{k.split(":")[1]}" {k.split(":")[0]} mean level {v} or level {min(3, v + 1)}?'
                               for k, v in mine.items())
        else:
            message = "What do you mean by " + " and ".join(f'"{k.split(":")[1]}" {k.split(":")[0]}'
                                                            for k in mine) + "?"
        return json.dumps({"message": message, "readings": mine})
    said = _find(r'^The other side says: "(.*)"$', prompt, re.M)
    told = {f"{issue}:{name}": int(level) for name, issue, level in re.findall(r'By "(\w+)" (\w+) I mean level (\d)',
                                                                                said)}
    readings = {k: told.get(k, v) for k, v in mine.items()}
    message = " ".join((f'Understood: "{k.split(":")[1]}" {k.split(":")[0]} is level {v} for me too.' if k in told
                        else f'For me "{k.split(":")[1]}" {k.split(":")[0]} is level {v}.')
                       for k, v in readings.items())
    return json.dumps({"message": message, "readings": readings})


_NEG_RANGES = {"price": (80.0, 140.0), "delivery_weeks": (4.0, 16.0), "payment_days": (0.0, 90.0)}


def _own_offer(prompt: str) -> dict[str, Any]:
    """A scripted negotiator's own offer: the offer on the table (or the middle of every range)
    moved a step its way on each number — a buyer wants a lower price, a later payment and an
    earlier delivery, a seller the opposite — with the names kept."""
    table = re.search(r"Offer on the table: (\{.*?\})\.", prompt)
    offer: dict[str, Any] = json.loads(table.group(1)) if table else {
        **{k: (lo + hi) / 2 for k, (lo, hi) in _NEG_RANGES.items()}, "support": "standard", "ai_feature": "basic"}
    buyer = "You are the buyer" in prompt
    for k, (lo, hi) in _NEG_RANGES.items():
        want_up = (k == "payment_days") == buyer
        step = 0.02 * (hi - lo) * (1 if want_up else -1)  # a small step: the targets fall, a deal comes
        offer[k] = round(min(hi, max(lo, float(offer[k]) + step)), 1)
    return offer


def negotiation_reply(prompt: str) -> str:
    """Scripted negotiator: accept what comes close to the target, else make its own offer."""
    if "Repair strategy:" in prompt or "The other side says:" in prompt:
        return negotiation_repair_reply(prompt)
    task = _find(r"Task id: (\S+)\.", prompt)
    ghash = _find(r"Goal hash: (\w+)", prompt)
    target = float(_find(r"Your target now: ([\d.]+)", prompt))
    worth = re.search(r"It is worth ([\d.]+) to you", prompt)
    signals = {"layer1": {"task_id": task, "goal_hash": ghash, "constraints": [f"utility >= {target:.2f}"]}}
    if worth and float(worth.group(1)) >= target - 0.15:  # a lenient small model: close enough is a deal
        return json.dumps({"accept": True, "message": "That works for me: deal.", "signals": signals})
    return json.dumps({"accept": False, "offer": _own_offer(prompt), "message": "Here is what I can do.",
                       "signals": signals})


def referential_reply(prompt: str) -> str:
    """Scripted sender/receiver for the referential game: reuse glossary terms, invent
    deterministic new ones, and read messages through the glossary."""
    glossary = {}
    for term, meaning in re.findall(r"^(\w+) = (\{.*\})$", prompt, re.M):
        glossary[term] = json.loads(meaning)
    if "You are the SENDER" in prompt:
        target = json.loads(_find(r"Your target: (\{.*\})", prompt))
        target.pop("detail", None)
        template = re.search(r"ONE term for the template (\{.*?\}) ", prompt)
        if template:  # one term for the schema it is asked to name
            schema = json.loads(template.group(1))
            known = sorted(t for t, m in glossary.items() if m == schema)
            if known:
                return json.dumps({"message": known[0], "new_terms": []})
            term = "t" + hashlib.blake2b(json.dumps(schema, sort_keys=True).encode(), digest_size=2).hexdigest()
            return json.dumps({"message": term, "new_terms": [{"term": term, "canonical": schema}]})
        parts, new = [], []
        for attr, value in target.items():
            known = [t for t, m in glossary.items() if m == {attr: value}]
            if known:
                parts.append(sorted(known)[0])
            else:
                term = "q" + hashlib.blake2b(f"{attr}={value}".encode(), digest_size=2).hexdigest()[:2]
                parts.append(term)
                new.append({"term": term, "canonical": {attr: value}})
        return json.dumps({"message": "-".join(parts), "new_terms": new})
    message = _find(r"^Message: (.*)$", prompt, re.M)
    cands = {cid: json.loads(props) for cid, props in re.findall(r"^(obj_\d+): (\{.*\})$", prompt, re.M)}
    terms = [t for t in re.split(r"[^A-Za-z0-9]+", message) if t]
    meaning = {t: glossary[t] for t in terms if t in glossary}

    def fit(props: dict[str, Any]) -> int:
        return sum(all(props.get(a) == v for a, v in m.items()) for m in meaning.values())

    best = max(sorted(cands), key=lambda cid: fit(cands[cid])) if cands else ""
    return json.dumps({"choice": best, "interpretation": meaning})


def illegal_action(prompt: str) -> str | None:
    """An action the view in ``prompt`` forbids (to test that replies are checked), if any."""
    from .prompt import legal_for_view

    rows = _view(prompt)
    if rows is None:
        return None
    view = "\n".join(rows)
    for action in ("eat", "move_n", "move_s", "move_w", "move_e"):
        if not legal_for_view(action, view, re.search(r"^here: food", prompt, re.M) is not None):
            return action
    return None


_WITH_PARAMETER = ("hold", "explore", "rest", "keep_away", "return")  # the shipped plans that read one


def _offered(schema: dict[str, Any] | None) -> list[str]:
    """The goals a plan schema allows."""
    return list(((schema or {}).get("properties") or {}).get("goal", {}).get("enum") or [])


def _ahead(prompt: str) -> str:
    """The four cells next to the fish (n, s, w, e) in a prompt's view."""
    rows = _view(prompt)
    if rows is None:
        return "...."
    r = len(rows) // 2
    return rows[r - 1][r] + rows[r + 1][r] + rows[r][r - 1] + rows[r][r + 1]


def _embedding(text: str, dims: int = 64) -> list[float]:
    vec = [0.0] * dims
    for w in re.findall(r"[a-z]+", text.lower()):
        h = int(hashlib.blake2b(w[:6].encode(), digest_size=4).hexdigest(), 16)
        vec[h % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def _chain_reply(prompt: str) -> str:
    """A report chain's message: the facts it was given, in the role's form (the test server
    writes from the prompt only, like a model)."""
    role = _find(r"You are the (\w+)\.", prompt)
    facts = re.findall(r"^- (.+)$", prompt, re.M)
    ask = re.search(r"Write (.+)\.$", prompt, re.M)
    head = f"{role.capitalize()} here. " + (ask.group(1).capitalize() + ": " if ask else "")
    text = head + (" ".join(facts[:8]) if facts else "Noted; please send the data on the quarter's growth.")
    if 'Reply as JSON: {"message"' not in prompt:
        return text
    # its own layer 2: a key word is unsure when what it was told backs its reading less than ~0.6
    mine = dict(re.findall(r"(\w+) = ([^;]+?)(?:;|\.$)", _find(r"What the key words mean to you: (.+)$", prompt, re.M)))
    told_line = _find(r"What you were told about the key words [^:]*: (.+)$", prompt, re.M)
    unsure = []
    for concept, said in re.findall(r"(\w+): ([^;]+)", told_line):
        counts = {r: int(n) for r, n in re.findall(r"'([^']+)' (\d+)x", said)}
        own = mine.get(concept, "")
        confidence = (counts.get(own, 0) + 0.5) / (sum(counts.values()) + 1)
        others = sorted((n, r) for r, n in counts.items() if r != own and n)
        if own and confidence < 0.6:
            unsure.append({"concept": concept, "reading": own, "confidence": round(confidence, 2),
                           "alternative": others[-1][1] if others else ""})
    return json.dumps({"message": text, "unsure": unsure})


def survey_reply(prompt: str, schema: dict[str, Any] | None) -> str:
    """A survey question's answer (session/survey.py, a user brain's ``answer``), by what the
    request's schema asks for — its ``answer``'s options, score or bounds — the one a hash of
    the prompt picks, or a sentence: reproducible."""
    h = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16)
    spec = ((schema or {}).get("properties") or {}).get("answer") or {}
    if spec.get("enum"):
        return json.dumps({"answer": spec["enum"][h % len(spec["enum"])]})
    if spec.get("type") in ("integer", "number"):
        lo, hi = float(spec.get("minimum", 0)), float(spec.get("maximum", 100))
        if spec["type"] == "integer":
            return json.dumps({"answer": int(lo) + h % (int(hi) - int(lo) + 1)})
        return json.dumps({"answer": round(lo + (h % 1000) / 999 * (hi - lo), 1)})
    return json.dumps({"answer": "I keep close to what I see and swim on."})


def _is_survey(schema: dict[str, Any] | None) -> bool:
    """A survey's request: its schema asks for one thing, ``answer``."""
    return isinstance(schema, dict) and list(schema.get("properties") or {}) == ["answer"]


def _scene_reply(prompt: str, fault: str, policy: str = "scripted") -> str | None:
    """The reply to a scene's prompt (negotiation, referential game, report chain, a fish's
    diary); None for a fish's decision. ``policy`` copycat: a small model whose report-chain
    messages restate the task it was given and whose negotiation messages are a bare number."""
    if "market-analysis report chain" in prompt:
        if fault == "garbage":
            return ""
        text = _chain_reply(prompt)
        if policy == "copycat":
            task = "The task as you understand it: " + _find(r"The task as you understand it: (.+)$", prompt, re.M)
            return json.dumps({**json.loads(text), "message": task}) if text.startswith("{") else task
        return text
    if "negotiation between a buyer and a seller" in prompt:
        if fault == "lax_grammar":  # no numeric bounds: the price a tenth of what it means (8.2 for 82)
            data = json.loads(negotiation_reply(prompt))
            if isinstance(data.get("offer"), dict):
                data["offer"]["price"] = round(float(data["offer"]["price"]) / 10, 1)
            return json.dumps(data)
        if fault == "garbage":
            return '{"accept": false, "signals": 7}'
        reply = negotiation_reply(prompt)
        if policy == "copycat" and reply.startswith("{") and "message" in json.loads(reply):
            reply = json.dumps({**json.loads(reply), "message": "1.000"})
        return reply
    if "referential game" in prompt:
        if fault == "rule_breaker" and "You are the SENDER" in prompt and "is not allowed" not in prompt:
            # a small model's first answer: too long and spelled out, until corrected
            return json.dumps({"message": "Your target is a circle.", "new_terms": []})
        return referential_reply(prompt) if fault != "garbage" else "I would rather not say."
    if "keeping a diary" in prompt:  # a long-term summary in the fish's words
        asked = re.search(r"About (t\d+-t\d+)\. Facts: (.*)", prompt)
        span, facts = (asked.group(1), asked.group(2)) if asked else ("a while", "nothing much")
        content = json.dumps({"summary": f"I remember {span}: {facts.split('; energy')[0]}"[:160]})
        return content if fault != "garbage" else "I forget."
    return None


def _plan_reply(prompt: str, policy: str, strict_schema: dict[str, Any] | None, fault: str,
                schema: dict[str, Any] | None) -> dict[str, Any]:
    """A plan, as the server's policy and fault answer (a strict server fills every key of ``strict_schema``)."""
    reply = scripted_plan(prompt)
    if policy == "forager":  # a small model that always answers forage
        reply = {"goal": "forage", "ticks": 60, "thought": "food first"}
    elif policy == "contrarian":
        reply = contrary(reply)
    elif policy == "copycat":  # the example thought, word for word, whatever it sees
        reply = {**reply, "thought": "hungry, food two cells east"}
    elif policy == "newest" and _offered(schema)[-1:] and _offered(schema)[-1] not in _WITH_PARAMETER:
        # a model that tries the last plan its schema offers (a plan type added for one run comes last)
        reply = {"goal": _offered(schema)[-1], "ticks": 20, "thought": f"let me try {_offered(schema)[-1]}"}
    if strict_schema is not None:  # a strict server fills every key
        reply = {k: reply.get(k) for k in strict_schema.get("properties", reply)}
        reply["thought"] = reply["thought"] or ""
    if fault == "lax_grammar":  # a grammar without numeric bounds (llama.cpp): every key, any number
        h = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16)
        reply = {"goal": reply["goal"], "place": 1000 + h % 9000, "direction": reply.get("direction")
                 or ("north", "south", "west", "east")[h % 4], "until": reply.get("until", h % 300),
                 "from": reply.get("from") or "crowd", "ticks": (reply.get("ticks") or 40) * (1 + h % 40),
                 "thought": reply.get("thought", "")}
    if fault == "schema_breaker":  # a server that ignores the schema's narrowed enum
        reply = {**reply, "goal": "school" if "school" not in _offered(schema) else "dance"}
    if fault == "illegal":  # school with nobody in view, else explore into adjacent glass
        glass = [w for w, ch in zip(("north", "south", "west", "east"), _ahead(prompt)) if ch == "#"]
        if not any(c in "".join(_view(prompt) or ()) for c in _FISH):
            reply = {"goal": "school", "thought": "with nobody"}
        elif glass:
            reply = {"goal": "explore", "direction": glass[0], "thought": "into the glass"}
    return reply
