"""What a model brain is asked and how its answer is read (docs/design.md §3).

**Plan mode** (the default, ``brain.decides = "plan"``): a fixed **shared prefix**
(:data:`PLAN_PROMPT`: the view alphabet, the five plans in one line each, the energy rules, the
source design's tendency line — "alone, the current scatters you; near others you feel
steadier", a tendency given to the model, not a behaviour rule; ``brain.tendency = false``
leaves it out — and three worked example replies) — byte-identical for every fish, so servers
with prefix caching reuse it — then a **per-fish** message (:func:`plan_message`: persona, why
it asks, the 5×5 view with a one-line reading, energy and age, its short memories — the
newest ``brain.prompt_memories``, 8 by default, all the memory keeps — and long-term
summaries — the newest ``brain.prompt_summaries``, 3 —, and the plans that fit the view).
The reply is a plan (:class:`PlanReply`) under a strict json_schema whose goal enum is
narrowed to the plans that fit (:func:`plan_formats`). A due
long-term summary is asked for in a small request of its own (:func:`summary_messages`).

**Action mode** (``brain.decides = "action"``, the source design's): :data:`SYSTEM_PROMPT` —
world rules, the six actions with their preconditions and costs, the tendency line about being
steadier near others (a tendency, not a rule) — and :func:`fish_message`; the reply is one
action (:class:`FishReply`).

Replies are read tolerantly — raw JSON, JSON in a code fence or inside prose, raw newlines in
strings — validated with pydantic, and checked against the fish's view (no school plan with
nobody in view, no exploring into glass, no eating without food beside it). Anything else is a
counted fallback with its reason: failure is data.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, create_model

from ..actions import ACTION_NAMES
from ..fish.perception import Perception
from ..fish.plans import AWAY_NAMES, DEFAULT, PLAN_GOALS, TYPES, PlanTable, direction_index
from ..grid import SQUARE, Grid
from .prompts import Prompt, default_prompt

# Plan mode (the default): the model chooses a standing plan; the fish's body (the steering
# layer) swims it tick by tick. Every choice is legal in almost every view, and the format is
# shown by worked examples, not by placeholder text a small model could copy back. Tiny models
# (SmolLM2-135M) copy the first example's goal whatever the view: it is forage, the plan that
# is legal in every view and keeps a fish fed (docs/model-brain.md has the measurements).
# The words live in the prompt file (assets/prompts/fish.toml, brains/prompts.py); these are
# the bundled file's shared prefixes.
PLAN_PROMPT = default_prompt().system(plans=True)
SYSTEM_PROMPT = default_prompt().system(plans=False)


class PlanReply(BaseModel):
    """A model's plan (plan mode). :func:`parse_plan_reply` reads a reply by what its goal uses:
    ``clamped`` names the numbers it brought into range, ``ignored`` the fields the goal does
    not read (kept in the recorded reply text, not checked)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    _clamped: tuple[str, ...] = PrivateAttr(default=())
    _ignored: tuple[str, ...] = PrivateAttr(default=())

    @property
    def clamped(self) -> tuple[str, ...]:
        return self._clamped

    @property
    def ignored(self) -> tuple[str, ...]:
        return self._ignored

    goal: Literal[PLAN_GOALS]  # type: ignore[valid-type]  # the plan types a brain may choose
    place: int | None = Field(default=None, ge=0, le=7)  # return: which remembered place (#)
    direction: Literal["north", "south", "west", "east"] | None = None
    until: int | None = Field(default=None, ge=0, le=10_000)
    away_from: Literal["crowd", "glass"] | None = Field(default=None, alias="from")
    ticks: int | None = Field(default=None, ge=1, le=1000)
    thought: str = Field(default="", max_length=80)
    summary: str | None = Field(default=None, max_length=160)

    def plan(self, max_energy: int, table: PlanTable = DEFAULT) -> tuple[int, int, int]:
        """(goal, param, horizon) for the world (a goal code of ``table``, the run's plan table);
        ``max_energy`` in hundredths."""
        goal = table.code[self.goal]
        t = table.types[goal]
        kind = t.param  # each parameter kind is read from its field of the reply
        param = 0
        if kind == "direction":  # (the tank's grid's words: mirofish/grid.py)
            names = table.grid.move_names
            param = names.index(self.direction) if self.direction in names else 0
        elif kind == "energy":
            param = min(self.until if self.until is not None else 10, max_energy // 100)
        elif kind == "away":
            param = AWAY_NAMES.index(self.away_from or AWAY_NAMES[0])
        elif kind == "place":
            param = self.place or 0
        return int(goal), int(param), int(self.ticks or t.ticks)  # a plan without "ticks": its type's


DEFAULT_TICKS = {t.name: t.ticks for t in TYPES if t.fits != "never"}  # a plan without "ticks" (plan types)


def plan_reply_model(table: PlanTable) -> type[PlanReply]:
    """:class:`PlanReply` with ``goal`` one of ``table``'s plans a brain may choose (the run's
    plan table; the default table's is :class:`PlanReply` itself). Built once per table."""
    if (table is DEFAULT or table.plan_goals == PLAN_GOALS) and not table.grid.hex:
        return PlanReply
    def build(t: PlanTable) -> type[PlanReply]:
        goal: Any = Literal[t.plan_goals]  # (a Literal made at run time)
        if not t.grid.hex:
            model: type[PlanReply] = create_model("PlanReply", __base__=PlanReply, goal=(goal, ...))
            return model
        way: Any = Literal[t.grid.move_names]  # a hexagonal tank's six directions
        return create_model("PlanReply", __base__=PlanReply, goal=(goal, ...), direction=(way | None, None))

    return table.part("plan_reply", build)


# What each reply's schema tells the model it is (its ``description``): words for the model,
# not the classes' docstrings (which earlier versions sent; :data:`WORDED_BEFORE`).
# They say what the fields are, with no sentence a small model could copy back as its thought.
SCHEMA_WORDS = {
    "fish_plan": "The next plan for your fish. goal: one of the plans offered. direction only for explore, "
                 "until only for rest (the energy to rest up to), from only for keep_away, place only for "
                 "return; null when the goal does not use it. ticks: how long to keep the plan.",
    "fish_reply": "Your fish's action this tick.",
    "fish_memory": "Your fish's memory of the ticks asked about.",
}
# The descriptions the same schemas carried before SCHEMA_WORDS (the reply classes' docstrings):
# a recorded reply was cached under a key of the schema as it was sent, so a fork of a recording
# made then looks its requests up under these words too (:func:`earlier_wordings`).
WORDED_BEFORE = {
    "fish_plan": "A model's plan (plan mode). :func:`parse_plan_reply` reads a reply by what its goal uses:\n"
                 "``clamped`` names the numbers it brought into range, ``ignored`` the fields the goal does\n"
                 "not read (kept in the recorded reply text, not checked).",
    "fish_reply": "The only output a model brain may give.",
    "fish_memory": "A long-term memory in the fish's own words (its own small request, see "
                   ":func:`summary_messages`).",
}


def earlier_wordings(schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    """``schema`` as earlier versions worded it (for reply-cache lookups of old recordings'
    replies): the same schema with its description as it was before :data:`SCHEMA_WORDS`."""
    if not isinstance(schema, dict):
        return []
    for name, words in SCHEMA_WORDS.items():
        if schema.get("description") == words:
            return [{**schema, "description": WORDED_BEFORE[name]}]
    return []


def strict_schema(schema: dict[str, Any], drop: tuple[str, ...] = (), name: str | None = None) -> dict[str, Any]:
    """``schema`` made valid for OpenAI's strict structured outputs: every object lists all
    its properties as required (an optional one is nullable already: pydantic writes
    ``anyOf [..., null]`` for ``X | None``), allows no others, and carries no ``title`` or
    ``default``. ``drop``: top-level properties to leave out; ``name``: the reply's words for
    the model (:data:`SCHEMA_WORDS`) as its description, in place of the class's docstring."""

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items() if k not in ("title", "default")}
            if out.get("type") == "object" and "properties" in out:
                out["properties"] = {k: v for k, v in out["properties"].items() if k not in drop}
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    strict: dict[str, Any] = walk(schema)
    if name is not None:
        strict["description"] = SCHEMA_WORDS[name]
    return strict


PLAN_REPLY_SCHEMA = strict_schema(PlanReply.model_json_schema(by_alias=True), drop=("summary",), name="fish_plan")


def plan_schema(goals: list[str] | None = None, directions: list[str] | None = None,
                table: PlanTable = DEFAULT) -> dict[str, Any]:
    """The plan reply's schema with ``goal`` (and explore's ``direction``) narrowed to the
    plans that fit the fish's view, so a grammar-constrained server cannot choose another (a
    hexagonal tank's ``table``: its six directions; a square one's schema is the one it always was)."""
    base = PLAN_REPLY_SCHEMA if not table.grid.hex else table.part("plan_schema", lambda t: strict_schema(
        plan_reply_model(t).model_json_schema(by_alias=True), drop=("summary",), name="fish_plan"))
    schema: dict[str, Any] = json.loads(json.dumps(base))
    props = schema["properties"]
    if goals:
        props["goal"]["enum"] = list(goals)
    if directions:
        for option in props["direction"]["anyOf"]:
            if "enum" in option:
                option["enum"] = list(directions)
    return schema


def plan_formats(goals: list[str] | None = None, directions: list[str] | None = None,
                 table: PlanTable = DEFAULT) -> tuple[dict[str, Any], dict[str, Any]]:
    """json_schema (strict) and json_object + schema forms of :func:`plan_schema`."""
    schema = plan_schema(goals, directions, table)
    return ({"type": "json_schema", "json_schema": {"name": "fish_plan", "schema": schema, "strict": True}},
            {"type": "json_object", "schema": schema})


PLAN_FORMATS = plan_formats()


def with_summary(formats: tuple[dict[str, Any], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A decision's formats (both forms) with a required ``summary`` string after its other
    properties: the reply of a fish whose long-term summary is due and asked in the same request."""
    out = json.loads(json.dumps(formats))
    for schema in (out[0]["json_schema"]["schema"], out[1]["schema"]):
        schema["properties"]["summary"] = {"type": "string", "maxLength": 160}
        schema["required"] = [*schema["required"], "summary"]
    return out[0], out[1]


class FishReply(BaseModel):
    """The only output a model brain may give."""

    model_config = ConfigDict(extra="ignore")

    action: Literal["move_n", "move_s", "move_w", "move_e", "eat", "rest"]
    thought: str = Field(default="", max_length=80)
    summary: str | None = Field(default=None, max_length=160)


REPLY_SCHEMA = strict_schema(FishReply.model_json_schema(), drop=("summary",), name="fish_reply")
JSON_SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "fish_reply", "schema": REPLY_SCHEMA,
                                                              "strict": True}}
JSON_OBJECT_FORMAT = {"type": "json_object", "schema": REPLY_SCHEMA}


class SummaryReply(BaseModel):
    """A long-term memory in the fish's own words (its own small request, see :func:`summary_messages`)."""

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(min_length=1, max_length=160)


SUMMARY_SCHEMA = strict_schema(SummaryReply.model_json_schema(), name="fish_memory")
SUMMARY_FORMATS = ({"type": "json_schema", "json_schema": {"name": "fish_memory", "schema": SUMMARY_SCHEMA,
                                                           "strict": True}},
                   {"type": "json_object", "schema": SUMMARY_SCHEMA})
def summary_parts(summary_facts: str) -> tuple[str, str]:
    """(span, facts without the anchor quotes) of a due summary's facts, as the asks word them."""
    span, _, facts = summary_facts.partition(": ")
    return span, facts.split(" Anchors:")[0].rstrip(".")


def summary_messages(persona: str, summary_facts: str, prompt: Prompt | None = None) -> list[dict[str, Any]]:
    """The small request that asks a model to write a due long-term summary in the fish's words."""
    pr = prompt or default_prompt()
    span, facts = summary_parts(summary_facts)
    return [{"role": "system", "content": pr.t("summary", "system")},
            {"role": "user", "content": pr.fill("summary", "user", persona=persona, span=span, facts=facts)}]


def parse_summary_reply(text: str | None) -> str:
    """The summary sentence of a reply; raises :class:`ReplyError` (``empty``/``garbage``/``schema``)."""
    data = _reply_object(text)
    _clean_texts(data)
    try:
        return SummaryReply.model_validate(data).summary
    except ValidationError as exc:
        raise ReplyError("schema", exc.errors()[0]["msg"]) from None


def system_prompt(plans: bool = True, tendency: bool = True, prompt: Prompt | None = None,
                  shown: tuple[str, ...] = (), table: PlanTable = DEFAULT, side: int = 5) -> str:
    """The shared prefix of plan or action mode, with or without the tendency line (``prompt``:
    a prompt file's, default the bundled one; ``shown``: the tank's perception switches on;
    ``table``: the run's plan types, listed in plan mode; ``side``: the view's side)."""
    return (prompt or default_prompt()).system(plans, tendency, shown, table, side)


MEMORY_TOKENS = 200  # brain.memory_tokens' default: the memory block's budget (docs/memory.md)


def fish_message(perception: Perception, persona: str, trigger: str, summary_facts: str | None = None,
                 memories: int = 8, summaries: int = 3, prompt: Prompt | None = None,
                 memory_tokens: int = MEMORY_TOKENS) -> str:
    """The per-fish part of the action prompt (long-term summaries without their anchor quotes,
    which are already among the memories)."""
    p, pr = perception, prompt or default_prompt()
    ask = ""
    if summary_facts:
        span, _, facts = summary_facts.partition(": ")
        ask = pr.fill("action", "summary_ask", span=span, facts=facts)
    recent, earlier = memory_block(pr, "action", p, memories, summaries, memory_tokens)
    return pr.fill("action", "fish", persona=persona, trigger=trigger.replace("_", " "), view=p.view,
                   here=pr.t("action", "here_food" if p.food_here else "here_water"),
                   energy=f"{p.energy / 100:.0f}", max_energy=f"{p.max_energy / 100:.0f}", age=str(p.age),
                   recent=recent, earlier=earlier, summary_ask=ask)


def _newest(items: Iterable[str], k: int) -> list[str]:
    return list(items)[-k:] if k > 0 else []


def memory_block(pr: Prompt, table: str, p: Perception, memories: int, summaries: int,
                 budget: int = MEMORY_TOKENS) -> tuple[str, str]:
    """The prompt's "Recent" and "Earlier" text for perception ``p``: its newest ``memories``
    memories and ``summaries`` long-term summaries (without their anchor quotes, which are among
    the memories), kept within ``budget`` tokens (:func:`estimate_tokens`; 0: no budget). Over
    budget, the oldest summaries but the newest go first, then the oldest memories, then the
    last summary; a single line still over is cut to its first words and "…". Whatever memory
    gave the lines (docs/memory.md: a memory of your own may give up to 64), the block a model is
    told stays within the budget."""
    mem = _newest(p.memories, memories)
    earl = [s.split(" Anchors:")[0] for s in _newest(p.summaries, summaries)] if p.summaries else []
    recent, earlier = pr.recent(table, mem), pr.earlier(table, earl)
    if budget <= 0 or estimate_tokens(recent + "\n" + earlier) <= budget:
        return recent, earlier
    while len(mem) + len(earl) > 1:
        if len(earl) > 1 or not mem:
            earl.pop(0)
        else:
            mem.pop(0)
        recent, earlier = pr.recent(table, mem), pr.earlier(table, earl)
        if estimate_tokens(recent + "\n" + earlier) <= budget:
            return recent, earlier
    lines = mem or earl
    if lines:  # one line, alone over the budget: its first words
        words = lines[0].split()
        while len(words) > 1:
            words = words[:max(1, len(words) * 3 // 4)]
            lines[0] = " ".join(words) + " …"
            recent, earlier = pr.recent(table, mem), pr.earlier(table, earl)
            if estimate_tokens(recent + "\n" + earlier) <= budget:
                break
    return recent, earlier


def messages(perception: Perception, persona: str, trigger: str, summary_facts: str | None = None,
             plans: bool = False, memories: int = 8, summaries: int = 3, tendency: bool = True,
             prompt: Prompt | None = None, memory_tokens: int = MEMORY_TOKENS,
             table: PlanTable = DEFAULT) -> list[dict[str, Any]]:
    """A fish's request: the shared prefix (:func:`system_prompt`) and its own message, with its
    newest ``memories`` short memories and ``summaries`` long-term summaries within
    ``memory_tokens`` (:func:`memory_block`), in the words of ``prompt`` (a prompt file; default
    the bundled one; ``table``: the run's plan types)."""
    if plans:
        body = plan_message(perception, persona, trigger, summary_facts, memories, summaries, prompt, memory_tokens,
                            table)
    else:
        body = fish_message(perception, persona, trigger, summary_facts, memories, summaries, prompt, memory_tokens)
    return [{"role": "system",
             "content": system_prompt(plans, tendency, prompt, perception.shown, table, perception.side)},
            {"role": "user", "content": body}]


_WAYS = (("north", 0, -1), ("south", 0, 1), ("west", -1, 0), ("east", 1, 0))
_FACING = {"^": "north", "v": "south", "<": "west", ">": "east"}


def reading(view: str, table: PlanTable = DEFAULT, shown: tuple[str, ...] | None = None) -> tuple[str, list[str]]:
    """What a small model should not have to work out from the grid itself: a one-line
    reading of the view (food and its nearest distance and way, fish and the ways they face,
    glass beside the fish) and the plans that fit it (school only with fish in view, explore
    only where the next cell is open). A description of the view, not a decision."""
    if table.grid.hex:
        return _hex_reading(view, table, shown)
    rows = view.split("\n")
    r = len(rows) // 2
    cells = [(x - r, y - r, ch) for y, row in enumerate(rows) for x, ch in enumerate(row)]
    food = sorted((abs(x) + abs(y), x, y) for x, y, ch in cells if ch == "F")
    fish = [_FACING[ch] for _, _, ch in cells if ch in _FACING]
    parts = []
    if food:
        d, x, y = food[0]
        way = " ".join(w for w, on in (("north", y < 0), ("south", y > 0), ("west", x < 0), ("east", x > 0)) if on)
        parts.append(f"{len(food)} food (nearest {d} cell{'s' if d > 1 else ''} {way})")
    else:
        parts.append("no food")
    if fish:
        faces = ", ".join(f"{fish.count(w)} {w}" for w in ("north", "south", "west", "east") if fish.count(w))
        parts.append(f"{len(fish)} fish (facing {faces})")
    else:
        parts.append("no fish")
    glass = [w for w, dx, dy in _WAYS if rows[r + dy][r + dx] == "#"]
    if glass:
        parts.append("glass " + "/".join(glass))
    goals, ways = fitting_choices(view, table=table, shown=shown)
    fitting = [f"{g} {'/'.join(ways)}" if table.types[table.code[g]].param == "direction" else g for g in goals]
    return ", ".join(parts), fitting


def _hex_reading(view: str, table: PlanTable, shown: tuple[str, ...] | None) -> tuple[str, list[str]]:
    """:func:`reading` of a hexagonal tank's view (mirofish/grid.py): food by its steps and the
    way of its nearest, fish by the ways they face, glass beside."""
    grid = table.grid
    radius = view.count("\n") // 2
    u, v = grid.window_cells(radius)
    chars = grid.view_cells(view)
    steps = grid.distance(u, v)
    sx, sy = grid.screen(u, v)
    food = sorted((int(steps[k]), k) for k, ch in enumerate(chars) if ch == "F")
    units = np.array(grid.units)
    parts = []
    if food:
        d, k = food[0]
        way = grid.move_names[int(np.argmax(units @ np.array([sx[k], sy[k]])))]
        parts.append(f"{len(food)} food (nearest {d} step{'s' if d > 1 else ''} {way})")
    else:
        parts.append("no food")
    fish = [grid.move_names[grid.fish_chars.index(ch)] for ch in chars if ch in grid.fish_chars]
    if fish:
        faces = ", ".join(f"{fish.count(w)} {w}" for w in grid.move_names if fish.count(w))
        parts.append(f"{len(fish)} fish (facing {faces})")
    else:
        parts.append("no fish")
    glass = [w for w, ch in zip(grid.move_names, grid.neighbour_chars(view)) if ch == "#"]
    if glass:
        parts.append("glass " + "/".join(glass))
    goals, ways = fitting_choices(view, table=table, shown=shown)
    fitting = [f"{g} {'/'.join(ways)}" if table.types[table.code[g]].param == "direction" else g for g in goals]
    return ", ".join(parts), fitting


_OPTION = {"place": ' {"place": #}'}  # how the plans-that-fit line offers a parameter kind the view does not show


def _hunter_in_view(rows: list[str], r: int) -> bool:
    """A hunter (X) in view other than the fish itself (the flee plan fits)."""
    return any(ch == "X" for y, row in enumerate(rows) for x, ch in enumerate(row) if (x, y) != (r, r))


def fitting_choices(view: str, places: str = "", table: PlanTable = DEFAULT,
                    shown: tuple[str, ...] | None = None) -> tuple[list[str], list[str]]:
    """(goals, explore directions) that fit ``view`` (and the goals that need a remembered place,
    ``return``, for a fish that remembers ``places``): the enums a plan reply's schema is narrowed
    to, in the order of ``table`` (the run's plan types; each type's ``fits``). With ``shown``
    (the fish's Perception.shown), a type that needs a switch the fish does not have is left out
    (``graze`` for a fish whose group does not eat plants)."""
    rows = view.split("\n")
    r = len(rows) // 2
    if table.grid.hex:  # (a hexagonal tank's view: mirofish/grid.py)
        ways = [w for w, ch in zip(table.grid.move_names, table.grid.neighbour_chars(view)) if ch in ".F"]
        fish_seen = any(ch in table.grid.fish_chars for ch in view)
    else:
        ways = [w for w, dx, dy in _WAYS if rows[r + dy][r + dx] in ".F"]
        fish_seen = any(ch in _FACING for row in rows for ch in row)
    fits = {"always": True, "fish_in_view": fish_seen, "open_way": bool(ways), "places": bool(places),
            "plants_in_view": "P" in view, "prey_in_view": fish_seen and rows[r][r] == "X",
            "hunter_in_view": _hunter_in_view(rows, r),
            "never": False}
    offered = [t.name for t in table.types if fits[t.fits] and (shown is None or t.needs is None or t.needs in shown)]
    return offered, ways


def plan_message(perception: Perception, persona: str, trigger: str, summary_facts: str | None = None,
                 memories: int = 8, summaries: int = 3, prompt: Prompt | None = None,
                 memory_tokens: int = MEMORY_TOKENS, table: PlanTable = DEFAULT) -> str:
    """The per-fish part of the plan prompt (the plans of ``table``, the run's): persona, why it
    asks (``first_plan`` for a fish's first request), the view with a one-line reading, energy
    and age, the newest ``memories`` short memories and ``summaries`` long-term summaries, and
    the plans that fit; with
    ``summary_facts``, the ask for a due long-term summary on a line of its own (the reply's
    schema then holds ``summary``: :func:`with_summary`).)"""
    p, pr = perception, prompt or default_prompt()
    seen, fitting = reading(p.view, table, p.shown)
    places = ""
    if p.places:  # environmental memory (fish.places): one line, and the plans that use it
        places = pr.fill("plan", "places", places=p.places)
        fitting = [*fitting, *(t.name + _OPTION[t.param] for t in table.types if t.fits == "places")]
    recent, earlier = memory_block(pr, "plan", p, memories, summaries, memory_tokens)
    body = pr.fill("plan", "fish", persona=persona, trigger=trigger.replace("_", " "), view=p.view, seen=seen,
                   energy=f"{p.energy / 100:.0f}", max_energy=f"{p.max_energy / 100:.0f}",
                   food_under=pr.t("plan", "food_under") if p.food_here else "", age=str(p.age),
                   recent=recent, earlier=earlier, places=places, plans_that_fit=", ".join(fitting))
    if summary_facts:  # a due long-term summary, asked in this request (brain.summaries = "with_decision")
        span, facts = summary_parts(summary_facts)
        body += "\n" + pr.fill("plan", "summary_ask", span=span, facts=facts)
    return body


# ---------------------------------------------------------------- reading replies

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


class ReplyError(ValueError):
    """A reply that cannot be used; ``reason`` is the counted fallback reason."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def _json_candidates(text: str) -> Iterator[str]:
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


def first_json_object(text: str | None) -> dict[str, Any] | None:
    """The first JSON object in a reply: raw, in a code fence, or inside prose (raw newlines allowed).

    A reply (or its fenced block) that is JSON but not an object — an array, a string, a number —
    is no object: None, like a reply that is no JSON (an object found inside ``[{…}]`` is not
    read as the answer; the model was asked for an object and answered something else)."""
    for candidate in _json_candidates((text or "").strip()):
        try:
            data = json.loads(candidate.strip(), strict=False)
        except (json.JSONDecodeError, ValueError):
            continue
        return data if isinstance(data, dict) else None
    return None


def opens_array(text: str) -> bool:
    """Does the reply open a JSON array (its first character, or its code fence's, is ``[``)?"""
    body = re.sub(r"^```(?:json)?\s*", "", text.lstrip(), flags=re.I)
    return body.startswith("[")


# the reply field each plan parameter kind is read from (fish/plans.py TYPES[...].param)
PARAM_FIELD = {"direction": "direction", "energy": "until", "away": "from", "place": "place"}
# the numbers a plan reads, and their legal range: PlanReply's own bounds (its schema's; a
# grammar-constrained server such as llama.cpp does not enforce them, so a small model writes any number)
NUMBER_RANGE = {name: (next(m.ge for m in PlanReply.model_fields[name].metadata if hasattr(m, "ge")),
                       next(m.le for m in PlanReply.model_fields[name].metadata if hasattr(m, "le")))
                for name in ("place", "until", "ticks")}
_PLAN_FIELDS = ("place", "direction", "until", "from", "ticks")


def parse_plan_reply(text: str | None, table: PlanTable = DEFAULT) -> PlanReply:
    """Read a model's plan by what its goal uses; raises :class:`ReplyError`
    (``empty``/``garbage``/``schema``).

    Only the goal and the fields it reads are checked: a field the goal does not read is
    ignored (``reply.ignored``; e.g. a forage plan's ``place`` or ``direction``, which a
    grammar-constrained server fills with whatever the model wrote); a number it reads that is
    out of range is clamped to the nearest legal value (``reply.clamped``), a fraction rounded;
    a thought that runs on into JSON is cut where the braces begin (``clamped`` names it too).
    Tolerant of small models: goal and words in any case, ``keep away``, one-letter
    directions. A goal that is not a plan, a direction that is not one, a number that is not a
    number, or explore without a direction is a schema error."""
    data = _reply_object(text, salvage=True)
    salvaged = bool(data.pop(_CUT, False))
    _plain_words(data, table.grid)
    _clean_texts(data)
    cut = _cut_thought(data)
    reads = _plan_reads(data.get("goal"), table)
    ignored = tuple(k for k in _PLAN_FIELDS if k in data and k not in reads and data[k] is not None)
    for k in _PLAN_FIELDS:
        if k not in reads:
            data.pop(k, None)
    clamped = _clamp_numbers(data, reads)
    try:
        reply = plan_reply_model(table).model_validate(data)
    except ValidationError as exc:
        raise ReplyError("schema", exc.errors()[0]["msg"]) from None
    if table.types[table.code[reply.goal]].param == "direction" and reply.direction is None:
        raise ReplyError("schema", f"{reply.goal} needs a direction")
    reply._clamped, reply._ignored = (*clamped, *(("thought",) if cut or salvaged else ())), ignored
    return reply


def _plain_words(data: dict[str, Any], grid: Grid = SQUARE) -> None:
    """A plan's words as the schema spells them: goal, direction and ``from`` in lower case with
    underscores (``keep away`` is ``keep_away``), a one-letter or other known spelling of a
    direction as its name (``grid``'s: a hexagonal tank's ``ne`` is ``north-east``)."""
    for key in ("goal", "direction", "from"):
        if isinstance(data.get(key), str):
            data[key] = data[key].strip().lower().replace(" ", "_").replace("-", "_")
    if isinstance(data.get("direction"), str):
        try:
            data["direction"] = grid.move_names[direction_index(data["direction"], grid)]
        except ValueError:
            pass


def _cut_thought(data: dict[str, Any]) -> bool:
    """A thought that runs on into JSON cut where the braces begin (returns whether it was);
    a thought that is not words dropped (the plan stands without it)."""
    thought = data.get("thought")
    cut = False
    if isinstance(thought, str) and ("{" in thought or "}" in thought):
        # a small model runs on past its thought into JSON ('… energy 96->98}\n{ "summary": …'):
        # the plan stands, its thought is cut where the braces begin
        data["thought"] = re.split(r"[{}]", thought, maxsplit=1)[0].strip(" \n,;")
        cut = True
    if thought is not None and not isinstance(thought, str):
        data.pop("thought")  # words that are not words: the plan stands without them
    return cut


def _plan_reads(goal: Any, table: PlanTable = DEFAULT) -> set[str]:
    """The plan fields ``goal`` reads: its horizon (``ticks``) and its parameter's field, if it
    is a plan that has one."""
    reads = {"ticks"}
    if isinstance(goal, str) and goal in table.code and table.types[table.code[goal]].fits != "never":
        field = PARAM_FIELD.get(table.types[table.code[goal]].param or "")
        reads |= {field} if field else set()
    return reads


def _clamp_numbers(data: dict[str, Any], reads: set[str]) -> list[str]:
    """Each number the plan reads made a whole number in its legal range (a numeral in a string
    read as one); returns the fields that changed. A number that is not a number is a schema
    :class:`ReplyError`."""
    clamped = []
    for k, (lo, hi) in NUMBER_RANGE.items():
        v = data.get(k)
        if k not in reads or v is None:
            continue
        v = _plan_number(k, v)
        n = min(max(int(round(v)), lo), hi)
        if n != v:
            clamped.append(k)
        data[k] = n
    return clamped


def _plan_number(k: str, v: Any) -> float:
    """The number a plan's field ``k`` holds (a numeral in a string read as one); a schema
    :class:`ReplyError` if it is not a finite number."""
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            raise ReplyError("schema", f"{k} is not a number") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
        raise ReplyError("schema", f"{k} is not a number")
    return v


_CUT = "\x00cut"  # marks a reply salvaged from one cut at max_tokens


def salvage_cut(text: str) -> dict[str, Any] | None:
    """A reply cut off at ``max_tokens`` inside its thought (the grammar does not bound the
    thought's length: all 6 ``reply_garbage`` of a quiet SmolLM2 run were so): closed where it
    stops and read, when its goal and its horizon (``ticks``) came whole before the cut. The
    plan stands; its thought is what was written (``clamped`` names it). None otherwise."""
    start = text.find("{")
    if start < 0 or opens_array(text):  # an array cut short is still no object
        return None
    body = text[start:].rstrip()
    for closer in ('"}', "}", '""}'):
        try:
            data = json.loads(body + closer, strict=False)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("goal"), str) and "ticks" in data \
                and list(data)[-1] == "thought" and isinstance(data["thought"], str):  # cut in the thought
            data[_CUT] = True
            return data
        return None
    return None


def _reply_object(text: str | None, salvage: bool = False) -> dict[str, Any]:
    if not text or not text.strip():
        raise ReplyError("empty")
    data = first_json_object(text)
    if data is None and salvage:
        data = salvage_cut(text)
    if data is None:
        raise ReplyError("garbage", f"{_json_kind(text)}, not an object: {text[:60]}" if _json_kind(text)
                         else text[:60])
    return data


def _json_kind(text: str) -> str:
    """What JSON that is not an object a reply is (``a JSON array``, …); "" when it is no JSON."""
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip(), flags=re.I)
    try:
        data = json.loads(body, strict=False)
    except (json.JSONDecodeError, ValueError):
        return "a JSON array" if opens_array(text) else ""
    kinds = {list: "a JSON array", str: "a JSON string", bool: "JSON true/false", type(None): "JSON null"}
    return "" if isinstance(data, dict) else kinds.get(type(data), "a JSON number")


def _clean_texts(data: dict[str, Any]) -> None:
    if isinstance(data.get("thought"), str):
        data["thought"] = " ".join(data["thought"].split())[:80]
    if isinstance(data.get("summary"), str):
        data["summary"] = " ".join(data["summary"].split())[:160] or None
    elif "summary" in data and not isinstance(data["summary"], str):
        data["summary"] = None


def plan_legal_for_view(reply: PlanReply, view: str, table: PlanTable = DEFAULT) -> str | None:
    """Why a plan cannot be carried out from this view (None when it can): a plan that needs
    fish in view with none (``school_without_fish``), or one that swims a way straight into
    glass (``explore_into_glass``)."""
    rows = view.split("\n")
    r = len(rows) // 2
    t = table.types[table.code[reply.goal]]
    grid = table.grid
    if t.fits == "fish_in_view" and not any(ch in grid.fish_chars for row in rows for ch in row):
        return f"{t.name}_without_fish"
    if t.fits == "plants_in_view" and "P" not in view:
        return f"{t.name}_without_plant"
    if t.fits == "prey_in_view" and (rows[r][r] != "X" or not any(ch in "^v<>" for row in rows for ch in row)):
        return f"{t.name}_without_prey"
    if t.fits == "hunter_in_view" and not _hunter_in_view(rows, r):
        return f"{t.name}_without_hunter"
    if (t.param == "direction" and reply.direction in grid.move_names
            and grid.neighbour_chars(view)[grid.move_names.index(reply.direction)] == "#"):
        return f"{t.name}_into_glass"
    return None


def interview_messages(perception: Perception, persona: str, plan: str, question: str) -> list[dict[str, Any]]:
    """A question to a fish, answered in its persona with its view, memories and plan as context."""
    p = perception
    side = p.side
    shape = f"{side}x{side}" if p.grid != "hex" else f"{len(p.view.replace(' ', '').replace(chr(10), ''))} hexes"
    return [{"role": "system", "content": f"You are a fish in an aquarium. {persona}. Answer in one or two "
                                          f"short sentences, in the first person."},
            {"role": "user", "content": f"What you see ({shape}, @ is you):\n{p.view}\n"
                                        f"Energy {p.energy / 100:.0f}/{p.max_energy / 100:.0f}. "
                                        f"Recent memories: {'; '.join(p.memories[-4:]) or 'none'}.\n"
                                        f"Your current plan: {plan}.\nQuestion: {question}"}]


# what a refusal that is not a reading error means, in words (``trace``)
_REFUSALS = {
    "school_without_fish": "a school plan with no fish in view",
    "explore_into_glass": "explore straight into glass",
    "illegal_not_offered": "a plan (or direction) the request did not offer for this view",
    "illegal_action": "an action the view does not allow",
    "timeout": "no answer within brain.request_timeout_s (the fallback decided; a late answer may replace it)",
    **{f"{t.name}_without_plant": f"a {t.name} plan with no plant in view"
       for t in TYPES if t.fits == "plants_in_view"},
    **{f"{t.name}_without_prey": f"a {t.name} plan by a fish that hunts nothing, or with no prey in view"
       for t in TYPES if t.fits == "prey_in_view"},
    **{f"{t.name}_without_hunter": f"a {t.name} plan with no fish that hunts it in view"
       for t in TYPES if t.fits == "hunter_in_view"},
}


def why_refused(text: str | None, read: str, plans: bool = True, table: PlanTable = DEFAULT) -> str | None:
    """Why a reply was not used, in words (None when it was): the reading error with what was
    wrong (e.g. ``schema: Input should be 'north', 'south', 'west' or 'east'``), or what the plan
    would have done."""
    if read == "ok":
        return None
    if read.startswith("reply_"):
        try:
            parse_plan_reply(text, table) if plans else parse_reply(text)
        except ReplyError as exc:
            return str(exc)
    return _REFUSALS.get(read, read.replace("_", " "))


def judge_reply(text: str | None, view: str, plans: bool = True,
                food_here: bool = False, places: str = "",
                table: PlanTable = DEFAULT, shown: tuple[str, ...] | None = None
                ) -> tuple[PlanReply | FishReply | None, str]:
    """How a model brain reads a reply to a fish whose view is ``view``: ``(reply, "ok")``, or
    the reason it cannot be used — ``reply_empty``/``reply_garbage``/``reply_schema`` (not a
    reply), ``school_without_fish``/``explore_into_glass`` (impossible from this view),
    ``illegal_not_offered`` (outside the plans the schema offered), ``illegal_action`` —
    with the reply when it parsed (``table``: the run's plan types). The one reading used by the
    brain, ``reask`` and ``trace``."""
    try:
        reply: PlanReply | FishReply = parse_plan_reply(text, table) if plans else parse_reply(text)
    except ReplyError as exc:
        return None, f"reply_{exc.reason}"
    if isinstance(reply, PlanReply):
        goals, ways = fitting_choices(view, places, table, shown)
        illegal = plan_legal_for_view(reply, view, table)
        if not illegal and (reply.goal not in goals
                            or (table.types[table.code[reply.goal]].param == "direction"
                                and reply.direction not in ways)):
            illegal = "illegal_not_offered"  # outside the schema's narrowed enum
        return reply, illegal or "ok"
    grazes = shown is not None and "grazing" in shown
    return reply, "ok" if legal_for_view(reply.action, view, food_here, grazes) else "illegal_action"


def parse_reply(text: str | None) -> FishReply:
    """Read a model's reply; raises :class:`ReplyError` with reason ``empty``/``garbage``/``schema``."""
    data = _reply_object(text)
    if isinstance(data.get("action"), str):
        data["action"] = data["action"].strip().lower()
    _clean_texts(data)
    try:
        return FishReply.model_validate(data)
    except ValidationError as exc:
        raise ReplyError("schema", exc.errors()[0]["msg"]) from None


def legal_for_view(action: str, view: str, food_here: bool, grazes: bool = False) -> bool:
    """Whether ``action`` is possible given the fish's view text ((2r+1)², 5×5 by default);
    ``grazes``: the fish's group eats plants (a plant beside it, P, is something to eat)."""
    rows = view.split("\n")
    r = len(rows) // 2
    if action == "eat":
        around = [rows[r - 1][r], rows[r + 1][r], rows[r][r - 1], rows[r][r + 1]]
        return food_here or "F" in around or (grazes and "P" in around)
    if action.startswith("move_"):
        dx, dy = {"n": (0, -1), "s": (0, 1), "w": (-1, 0), "e": (1, 0)}[action[-1]]
        return rows[r + dy][r + dx] in ".F"
    return action in ACTION_NAMES


_TOKEN = re.compile(r"[A-Za-z]+|\d{1,3}|([^\w\s])\1*")


TOKENIZER_ENV = "MIROFISH_TOKENIZER"  # a tokenizer.json (Hugging Face tokenizers format) to count with
_TOKENIZERS: dict[tuple[Any, ...], Any] = {}  # (path, inode, size, mtime) → a tokenizer, or the TokenizerError

# The wall in front of the native ``tokenizers`` library: a tokenizer.json is checked
# in Python before the library sees it, because some of its fields make the library allocate
# without bound or panic — a Fixed padding of 10^12 tokens aborts the process ("memory allocation
# of 4000000000000 bytes failed", exit 134), a Replace normalizer chain can make a text thousands
# of times longer, a regular expression that backtracks panics at encoding time.
TOKENIZER_MAX_PADDING = 1_000_000  # padding: a Fixed length or pad_to_multiple_of above it is refused
TOKENIZER_MAX_DEPTH = 64  # JSON nesting (real files nest under 10 levels)
TOKENIZER_MAX_VOCAB = 4_000_000  # vocabulary entries (the largest real ones hold about 260,000)
TOKENIZER_MAX_GROWTH = 256  # how many times longer the normalizers (Replace, Prepend) may make a text
TOKENIZER_MAX_STRING = 4_096  # characters of a setting's string (a pattern, a prefix); vocabularies apart
TOKENIZER_PROBE_SECONDS = 2.0  # the probe text must be counted within this (a backtracking pattern is not)
_ID_RANGE = range(0, 2**32)  # a token id is a u32
_INT_RANGE = range(-(2**31), 2**32)  # every other number in the file
# What the probe counts at load: every printable ASCII character, words the vocabulary may lack,
# digits, the tank's view characters, JSON, runs of one character (backtracking patterns), and
# characters outside ASCII. A tokenizer that cannot count it is refused before any work.
_PROBE = ("You are a fish. Energy 42/100, age 7. View:\n..#F.\n.^@v<\n>..F#\n"
          '{"goal": "forage", "ticks": 30, "thought": "food north"} zqxjvk qwfp 0123456789 3.14159\n'
          + "".join(chr(c) for c in range(32, 127)) + "\t\r\n"
          + "a" * 64 + "! " + " " * 64 + "1" * 64 + "." * 64 + "\n"
          + "naïve café — 水族館 🐟 Ünïcödé ß ∑ \u200b")


class TokenizerError(ValueError):
    """The tokenizer file :data:`TOKENIZER_ENV` names cannot be used (one line)."""


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [exc.__class__.__name__])[0][:300]


def _check_tokenizer_json(data: Any) -> dict[str, Any]:
    """``data`` (a parsed tokenizer.json) checked for what would make the native library allocate
    without bound; returns it with its padding and truncation dropped (a count is of the text's own
    tokens: padding would add tokens, truncation would cut them). Raises ValueError (one line)."""
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise ValueError("not a tokenizer.json (a JSON object with a \"model\")")
    _check_padding(data.get("padding"))
    _check_truncation(data.get("truncation"))
    model = data["model"]
    vocab = model.get("vocab")
    _check_vocab(vocab)
    added = data.get("added_tokens")
    _check_added_tokens(added)
    # the rest of the tree: the vocabulary, the merges and the added tokens are left to the library
    # (it refuses what is malformed)
    _check_tree(data, skip={id(vocab), id(model.get("merges")), id(added)})
    return {**data, "padding": None, "truncation": None}


def _check_padding(padding: Any) -> None:
    """A tokenizer.json's padding: null, or an object whose Fixed length and pad_to_multiple_of
    are at most :data:`TOKENIZER_MAX_PADDING` tokens."""
    if padding is None:
        return
    if not isinstance(padding, dict):
        raise ValueError("padding: an object or null")
    strategy = padding.get("strategy")
    fixed = strategy.get("Fixed") if isinstance(strategy, dict) else None
    for name, n in (("a Fixed length", fixed), ("pad_to_multiple_of", padding.get("pad_to_multiple_of"))):
        if n is not None and (type(n) is not int or not 0 <= n <= TOKENIZER_MAX_PADDING):
            raise ValueError(f"padding: {name} of {_shown_value(n)} tokens (at most {TOKENIZER_MAX_PADDING:,})")


def _check_truncation(truncation: Any) -> None:
    """A tokenizer.json's truncation: null, or an object whose max_length and stride are token counts (u32)."""
    if truncation is None:
        return
    if not isinstance(truncation, dict):
        raise ValueError("truncation: an object or null")
    for key in ("max_length", "stride"):
        n = truncation.get(key)
        if n is not None and (type(n) is not int or n not in _ID_RANGE):
            raise ValueError(f"truncation: {key} of {_shown_value(n)} (at most {_ID_RANGE.stop - 1:,})")


def _check_vocab(vocab: Any) -> None:
    """A model's vocabulary: at most :data:`TOKENIZER_MAX_VOCAB` entries; a token → id table's ids token ids."""
    if isinstance(vocab, (dict, list)) and len(vocab) > TOKENIZER_MAX_VOCAB:
        raise ValueError(f"model: a vocabulary of {len(vocab):,} tokens (at most {TOKENIZER_MAX_VOCAB:,})")
    if isinstance(vocab, dict):
        bad = next((k for k, v in vocab.items() if type(v) is not int or v not in _ID_RANGE), None)
        if bad is not None:
            raise ValueError(f"model: the id of {_shown_value(bad)} is {_shown_value(vocab[bad])}, "
                             f"not a token id (0 to {_ID_RANGE.stop - 1:,})")


def _check_added_tokens(added: Any) -> None:
    """A tokenizer.json's added tokens: null, or a list of objects each with a token id."""
    if added is not None and not isinstance(added, list):
        raise ValueError("added_tokens: a list")
    for tok in added or []:
        n = tok.get("id") if isinstance(tok, dict) else None
        if type(n) is not int or n not in _ID_RANGE:
            raise ValueError(f"added_tokens: an id of {_shown_value(n)}, not a token id (0 to {_ID_RANGE.stop - 1:,})")


def _check_tree(data: dict[str, Any], skip: set[int]) -> None:
    """Every object and list of ``data`` but those in ``skip`` (by id), without recursion: the
    nesting depth, the normalizers' growth, each string's length and each integer's range."""
    growth = 1
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > TOKENIZER_MAX_DEPTH:
            raise ValueError(f"nested more than {TOKENIZER_MAX_DEPTH} levels deep")
        if isinstance(node, dict):
            growth *= _growth(node)
            if growth > TOKENIZER_MAX_GROWTH:
                raise ValueError(f"normalizer: its Replace and Prepend steps could make a text more than "
                                 f"{TOKENIZER_MAX_GROWTH} times longer")
            items = list(node.items())
        else:
            items = [("a list", v) for v in node]
        for key, value in items:
            if isinstance(value, (dict, list)):
                if id(value) not in skip:
                    stack.append((value, depth + 1))
            else:
                _check_setting(key, value)


def _growth(node: dict[str, Any]) -> int:
    """How many times longer a normalizer step can make a text: a Replace by its content, a
    Prepend by its prefix (1 for any other object)."""
    kind = node.get("type")
    if kind not in ("Replace", "Prepend"):
        return 1
    text = node.get("content") if kind == "Replace" else node.get("prepend")
    return len(text) + 1 if isinstance(text, str) else 1


def _check_setting(key: str, value: Any) -> None:
    """One setting's value (not an object or list): a string of at most :data:`TOKENIZER_MAX_STRING`
    characters (the precompiled charsmap apart), an integer in range."""
    if isinstance(value, str) and len(value) > TOKENIZER_MAX_STRING and key != "precompiled_charsmap":
        raise ValueError(f"{key}: a string of {len(value):,} characters (at most {TOKENIZER_MAX_STRING:,})")
    if type(value) is int and value not in _INT_RANGE:
        raise ValueError(f"{key}: {_shown_value(value)} is out of range")


def _shown_value(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=True)
    return text if len(text) <= 40 else text[:40] + "…"


@contextmanager
def _native_quiet() -> Iterator[None]:
    """Standard error (the descriptor) sent to the null device while the native library loads and
    probes a tokenizer: a Rust panic prints its own lines (a backtrace with RUST_BACKTRACE) before
    Python sees the exception, which then becomes one line."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield  # no descriptor 2 to quiet
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 2)
        finally:
            os.close(null)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _load_tokenizer(path: str, shown: str) -> Any:
    from ..files import TOKENIZER_LIMIT, FileRefused, read_bounded

    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise TokenizerError(f"{shown}: counting with a tokenizer needs the tokenizers library "
                             f"(pip install -e '.[tokens]')") from None
    try:  # a regular file of at most 64 MB (mirofish/files.py): a FIFO or /dev/zero is refused unread
        raw = read_bounded(path, TOKENIZER_LIMIT, "tokenizer file")
    except FileRefused as exc:
        raise TokenizerError(f"{TOKENIZER_ENV}: {exc}") from None
    try:
        data = _check_tokenizer_json(json.loads(raw))
    except RecursionError:
        raise TokenizerError(f"{shown}: not a tokenizer.json it can use (nested too deeply)") from None
    except ValueError as exc:  # not JSON, not UTF-8, or a field the check refuses
        raise TokenizerError(f"{shown}: not a tokenizer.json it can use ({_first_line(exc)})") from None
    started = time.monotonic()
    try:
        with _native_quiet():
            tok = Tokenizer.from_str(json.dumps(data))
            tok.no_padding()
            tok.no_truncation()
            tok.encode(_PROBE, add_special_tokens=False)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 — a Rust panic is a BaseException (pyo3's PanicException)
        raise TokenizerError(f"{shown}: not a tokenizer.json it can use ({_first_line(exc)})") from None
    took = time.monotonic() - started
    if took > TOKENIZER_PROBE_SECONDS:
        raise TokenizerError(f"{shown}: too slow to count with ({took:.1f} s for {len(_PROBE)} characters)")
    return tok


def _shown_path(path: str) -> str:
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)
    return f"{TOKENIZER_ENV}={text if len(text) <= 200 else text[:200] + '…'}"


def tokenizer() -> Any:
    """The tokenizer :data:`TOKENIZER_ENV` names (the model's own ``tokenizer.json``, read with
    the ``tokenizers`` library, extra ``[tokens]``), or None when it names none. The file is read
    under mirofish/files.py's rule (a regular file, at most 64 MB), checked before the native
    library sees it (:func:`_check_tokenizer_json`: padding, truncation, ids, nesting, growth; its
    padding and truncation are dropped, a count is of a text's own tokens) and must count a probe
    text (:data:`_PROBE`) within :data:`TOKENIZER_PROBE_SECONDS`. Raises :class:`TokenizerError`
    (one line) for a file or library that cannot be used."""
    path = os.environ.get(TOKENIZER_ENV, "")
    if not path:
        return None
    try:  # the file as it is now (a stat never blocks, even on a FIFO)
        st = os.stat(path)
        key: tuple[Any, ...] = (path, st.st_ino, st.st_size, st.st_mtime_ns)
    except (OSError, ValueError):
        key = (path,)
    if key not in _TOKENIZERS:
        try:
            _TOKENIZERS[key] = _load_tokenizer(path, _shown_path(path))
        except TokenizerError as exc:
            _TOKENIZERS[key] = exc  # refused once: not read again for every text counted
    got = _TOKENIZERS[key]
    if isinstance(got, TokenizerError):
        raise TokenizerError(str(got))
    return got


def token_counter() -> str:
    """What counts the tokens no server reported: ``estimate`` or ``tokenizer FILE``."""
    path = os.environ.get(TOKENIZER_ENV, "")
    return f"tokenizer {os.path.basename(path)}" if path else "estimate"


def estimate_without_tokenizer(text: str) -> int:
    """The tokenizer-free estimate (what :func:`estimate_tokens` gives without :data:`TOKENIZER_ENV`)."""
    return sum(1 for _ in _TOKEN.finditer(text))


def estimate_tokens(text: str) -> int:
    """The tokens of ``text``: with :data:`TOKENIZER_ENV` set, counted by that tokenizer (a
    model's own ``tokenizer.json``); else a tokenizer-free estimate close to BPE counts: a token
    per word, per 1–3 digits and per run of one punctuation mark (``.....`` is one token). Used
    by the bundled test server, the scenes' token figures and whenever a server reports no
    ``usage``. Raises :class:`TokenizerError` (one line) where the tokenizer cannot count ``text``
    (one that counted the probe at load rarely does)."""
    tok = tokenizer()
    if tok is not None:
        try:
            return len(tok.encode(text, add_special_tokens=False).ids)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 — a Rust panic is a BaseException
            raise TokenizerError(f"{_shown_path(os.environ.get(TOKENIZER_ENV, ''))}: cannot count the tokens "
                                 f"of a text ({_first_line(exc)})") from None
    return estimate_without_tokenizer(text)
