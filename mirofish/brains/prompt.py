"""What a model brain is asked and how its answer is read (DESIGN §3, seed 003 §2, §4.2).

The prompt is a fixed **shared prefix** — world rules, the six actions with their
preconditions and costs, the output format, and the seed's tendency line about being steadier
near others (a tendency, not a rule) — byte-identical for every fish, so servers with prefix
caching reuse it; then a short **per-fish** message (persona, 5×5 view, state, memories).

Replies are read tolerantly — raw JSON, JSON in a code fence or inside prose, raw newlines in
strings — validated with pydantic, and checked against the fish's view (no eating without
food beside it, no move into glass or another fish). Anything else is a counted fallback
with its reason: failure is data.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..actions import ACTION_NAMES
from ..fish.perception import Perception

SYSTEM_PROMPT = """You are a fish in a shared aquarium with other fish, each an agent like you.
You see only the 5x5 patch of water around you.

View (north is up): @ you, . water, # glass/plant/rock (impassable), F food, f another fish.
"here: food" means food lies under you.

Actions:
- move_n / move_s / move_w / move_e: swim one cell north/south/west/east. The cell must be . or F. Cost 0.3.
- eat: eat food under you or directly N, S, W or E of you. Cost 0.1, gain 40.
- rest: stay put. No extra cost.

Rules:
- Each tick costs 0.15 energy (max 100). At 0 you can only rest; rest barely revives, only food feeds.
- Food appears mostly in open water and rots.
- When fish want the same cell or food, one gets it; the others stay and remember it.
- Your action repeats until something changes, so choose a course, not a single step.
- Alone, the current scatters you more easily; near others you feel steadier.

Answer with one JSON object only:
{"action": "move_n|move_s|move_w|move_e|eat|rest", "thought": "why, at most 80 characters"}"""


class FishReply(BaseModel):
    """The only output a model brain may give."""

    model_config = ConfigDict(extra="ignore")

    action: Literal["move_n", "move_s", "move_w", "move_e", "eat", "rest"]
    thought: str = Field(default="", max_length=80)
    summary: str | None = Field(default=None, max_length=160)


REPLY_SCHEMA = FishReply.model_json_schema()
JSON_SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "fish_reply", "schema": REPLY_SCHEMA,
                                                              "strict": True}}
JSON_OBJECT_FORMAT = {"type": "json_object", "schema": REPLY_SCHEMA}


SUMMARY_ASK = ("Also put in the JSON a \"summary\": one line (at most 160 characters) in your own words "
               "remembering {span}, from these facts: {facts}")


def fish_message(perception: Perception, persona: str, trigger: str, summary_facts: str | None = None) -> str:
    """The per-fish part of the prompt (long-term summaries without their anchor quotes, which
    are already among the memories)."""
    p = perception
    lines = [f"You are {persona}. Deciding because: {trigger.replace('_', ' ')}.", p.view,
             f"here: {'food' if p.food_here else 'water'}; energy {p.energy / 100:.0f}/{p.max_energy / 100:.0f}; "
             f"age {p.age}", "Recent:"]
    lines += list(p.memories) or ["nothing yet"]
    if p.summaries:
        lines.append("Earlier:")
        lines += [s.split(" Anchors:")[0] for s in p.summaries]
    if summary_facts:
        span, _, facts = summary_facts.partition(": ")
        lines.append(SUMMARY_ASK.format(span=span, facts=facts))
    return "\n".join(lines)


def messages(perception: Perception, persona: str, trigger: str, summary_facts: str | None = None) -> list[dict]:
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": fish_message(perception, persona, trigger, summary_facts)}]


# ---------------------------------------------------------------- reading replies

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


class ReplyError(ValueError):
    """A reply that cannot be used; ``reason`` is the counted fallback reason."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def _json_candidates(text: str):
    for m in _FENCE.finditer(text):
        yield m.group(1)
    yield text
    depth, start = 0, None
    for i, ch in enumerate(text):  # the first balanced {...} inside prose
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0 and start is not None:
                yield text[start : i + 1]
                start = None


def first_json_object(text: str | None) -> dict | None:
    """The first JSON object in a reply: raw, in a code fence, or inside prose (raw newlines allowed)."""
    for candidate in _json_candidates((text or "").strip()):
        try:
            data = json.loads(candidate.strip(), strict=False)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return None


def parse_reply(text: str | None) -> FishReply:
    """Read a model's reply; raises :class:`ReplyError` with reason ``empty``/``garbage``/``schema``."""
    if not text or not text.strip():
        raise ReplyError("empty")
    data = first_json_object(text)
    if data is None:
        raise ReplyError("garbage", text[:60])
    if isinstance(data.get("action"), str):
        data["action"] = data["action"].strip().lower()
    if isinstance(data.get("thought"), str):
        data["thought"] = " ".join(data["thought"].split())[:80]
    if isinstance(data.get("summary"), str):
        data["summary"] = " ".join(data["summary"].split())[:160] or None
    elif "summary" in data and not isinstance(data["summary"], str):
        data["summary"] = None
    try:
        return FishReply.model_validate(data)
    except ValidationError as exc:
        raise ReplyError("schema", exc.errors()[0]["msg"]) from None


def legal_for_view(action: str, view: str, food_here: bool) -> bool:
    """Whether ``action`` is possible given the fish's 5×5 view text."""
    rows = view.split("\n")
    r = len(rows) // 2
    if action == "eat":
        around = [rows[r - 1][r], rows[r + 1][r], rows[r][r - 1], rows[r][r + 1]]
        return food_here or "F" in around
    if action.startswith("move_"):
        dx, dy = {"n": (0, -1), "s": (0, 1), "w": (-1, 0), "e": (1, 0)}[action[-1]]
        return rows[r + dy][r + dx] in ".F"
    return action in ACTION_NAMES


_TOKEN = re.compile(r"[A-Za-z]+|\d{1,3}|([^\w\s])\1*")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate close to BPE counts: a token per word, per 1–3 digits and per
    run of one punctuation mark (``.....`` is one token). Used by the bundled test server and
    whenever a server reports no ``usage``."""
    return sum(1 for _ in _TOKEN.finditer(text))
