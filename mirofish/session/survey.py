"""Ask the whole tank: a survey of every fish (or some) at ticks of a recording.

``survey REC --at T[,T…] --questions FILE.toml`` asks each fish each question in the context its
brain had at tick T — the words of a decision request made at T (the recording's prompt text:
its system part, the fish's persona, view, memories, summaries and remembered places, the plans
that fit), then the question — and keeps the answers as a table:

* a **model** fish is asked by the server *you* give (``--base-url``; a recording's own server is
  never contacted, :mod:`~.trust`), each answer a structured reply (JSON schema: free text, a
  Likert score 1–5, one of the options, a number within bounds) read as decisions are read —
  the first JSON object, a number out of range clamped (counted), anything else refused with
  its reason; a ``--reply-cache DIR`` answers a question asked before without the server;
  ``--max-requests`` stops asking cleanly (the rest counted ``max_requests``);
* an **embedded** (instinct) fish answers by *template* from its state — its energy, the fish in
  view, its plan — for the questions that name one (``template = "energy" | "company" |
  "plan" | "heading"``), labelled ``template`` so nobody mistakes it for a model's words; a
  question without a template is counted ``no_template``.

Questions that **predict** behaviour (``predicts = "heading"``: "where will you swim next?",
north / south / west / east / stay; ``predicts = "company"``: "will you stay with the others?",
yes / no) are checked against what the fish then did in the next ``horizon`` ticks of the
recording (its net displacement; whether it had company at least half the time): the words
against the deeds, per group.

``survey A B …`` asks the same of several recordings (a fork and its parent, two prompts) and
gives, per question, each one's mean (Likert, number) or distribution (choice) and the
difference from the first with a 95 % bootstrap interval.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..observe.recording import Recording, RecordingError

KINDS = ("text", "likert", "choice", "number")
TEMPLATES = ("energy", "company", "plan", "heading")
PREDICTS = ("heading", "company")
HEADINGS = ("north", "south", "west", "east", "stay")
LIKERT_LABELS = ("not at all", "a little", "somewhat", "quite", "very")
MAX_QUESTIONS = 50
BOOT = 2000
WAITING_S = 3.0  # a question unanswered this long: "waiting for the server" (stderr)
WAITING_EVERY_S = 30.0  # … and again at most this often


class SurveyError(RecordingError):
    """A survey that cannot run (one line; the CLI exits 2)."""


@dataclass(frozen=True)
class Question:
    """One question of a questions file (module doc; ``docs/survey.md`` lists the keys)."""

    id: str
    kind: str
    text: str
    labels: tuple[str, ...] = LIKERT_LABELS
    options: tuple[str, ...] = ()
    low: float = 0.0
    high: float = 100.0
    template: str | None = None
    predicts: str | None = None
    horizon: int = 30

    def schema(self) -> dict[str, Any]:
        """The answer's JSON schema (strict: one required key, ``answer``)."""
        answer: dict[str, Any]
        if self.kind == "text":
            answer = {"type": "string", "maxLength": 300}
        elif self.kind == "likert":
            answer = {"type": "integer", "minimum": 1, "maximum": 5}
        elif self.kind == "choice":
            answer = {"type": "string", "enum": list(self.options)}
        else:
            answer = {"type": "number", "minimum": self.low, "maximum": self.high}
        return {"type": "object", "properties": {"answer": answer}, "required": ["answer"],
                "additionalProperties": False}

    def ask(self) -> str:
        """The question as the fish reads it, with how to answer."""
        if self.kind == "likert":
            scale = "; ".join(f"{i} = {label}" for i, label in enumerate(self.labels, 1))
            how = f'a whole number from 1 to 5 ({scale})'
        elif self.kind == "choice":
            how = "one of: " + ", ".join(f'"{o}"' for o in self.options)
        elif self.kind == "number":
            how = f"a number from {self.low:g} to {self.high:g}"
        else:
            how = "one or two short sentences, in the first person"
        return (f"Not a plan this time: a question about you. {self.text}\n"
                f'Answer as the fish, with one JSON object {{"answer": ...}}: {how}.')


def load_questions(path: str | Path) -> list[Question]:
    """The questions of a TOML file (``[[question]]`` tables); :class:`SurveyError` naming what
    is wrong (an unknown kind, a choice without options, bounds the wrong way round …)."""
    from ..files import CONFIG_LIMIT, read_toml_bounded

    data = read_toml_bounded(path, CONFIG_LIMIT, "questions file", SurveyError)
    items = data.get("question")
    if not isinstance(items, list) or not items:
        raise SurveyError(f"questions file {path}: no [[question]] tables")
    if len(items) > MAX_QUESTIONS:
        raise SurveyError(f"questions file {path}: {len(items)} questions; at most {MAX_QUESTIONS}")
    out: list[Question] = []
    for n, q in enumerate(items, 1):
        out.append(_question(q, n, {x.id for x in out}, f"questions file {path}, question {n}"))
    return out


_KEYS = {"id", "kind", "text", "labels", "options", "min", "max", "template", "predicts", "horizon"}


def _question(q: Any, n: int, taken: set[str], where: str) -> Question:
    """One ``[[question]]`` table checked (``where`` names it in the one-line refusal)."""
    if not isinstance(q, dict):
        raise SurveyError(f"{where}: not a table")
    unknown = set(q) - _KEYS
    if unknown:
        raise SurveyError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    kind, text, qid = q.get("kind"), q.get("text"), q.get("id", f"q{n}")
    if kind not in KINDS:
        raise SurveyError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    if not isinstance(text, str) or not text.strip() or len(text) > 500:
        raise SurveyError(f"{where}: text must be a question of 1-500 characters")
    if not isinstance(qid, str) or not qid.isidentifier() or qid in taken:
        raise SurveyError(f"{where}: id {qid!r} must be a unique name (letters, digits, _)")
    labels = q.get("labels", list(LIKERT_LABELS))
    options = q.get("options", list(HEADINGS) if q.get("predicts") == "heading" else [])
    low, high = q.get("min", 0), q.get("max", 100)
    problem = _kind_problem(kind, labels, options, low, high)
    if problem:
        raise SurveyError(f"{where}: {problem}")
    template, predicts, horizon = q.get("template"), q.get("predicts"), q.get("horizon", 30)
    if template is not None and template not in TEMPLATES:
        raise SurveyError(f"{where}: template {template!r} is not one of {', '.join(TEMPLATES)}")
    if predicts is not None:
        if predicts not in PREDICTS:
            raise SurveyError(f"{where}: predicts {predicts!r} is not one of {', '.join(PREDICTS)}")
        need = set(HEADINGS) if predicts == "heading" else {"yes", "no"}
        if kind != "choice" or set(options) != need:
            raise SurveyError(f"{where}: predicts = {predicts!r} needs a choice among {', '.join(sorted(need))}")
    if not isinstance(horizon, int) or isinstance(horizon, bool) or not 1 <= horizon <= 10_000:
        raise SurveyError(f"{where}: horizon must be a whole number of ticks, 1-10000")
    return Question(qid, kind, text.strip(), tuple(labels), tuple(options), float(low), float(high),
                    template, predicts, horizon)


def _kind_problem(kind: str, labels: Any, options: Any, low: Any, high: Any) -> str | None:
    """What is wrong with a question's kind-specific keys (None: nothing)."""
    if kind == "likert" and (not isinstance(labels, list) or len(labels) != 5
                             or not all(isinstance(x, str) and x for x in labels)):
        return "a likert question's labels are 5 words, 1 to 5"
    if kind == "choice" and (not isinstance(options, list) or len(options) < 2 or len(set(options)) != len(options)
                             or not all(isinstance(x, str) and x and len(x) <= 60 for x in options)):
        return "a choice question needs 2 or more distinct options"
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high))
    if kind == "number" and not (numbers and low < high and math.isfinite(low) and math.isfinite(high)):
        return "a number question needs min < max"
    return None


def read_answer(q: Question, text: str | None) -> tuple[Any, bool, str]:
    """(answer, valid, reason) of a model's reply: ``ok``, ``clamped`` (a number brought into
    range: valid), or why it is refused (``empty``, ``not_json``, ``no_answer``, ``not_a_number``,
    ``not_an_option``)."""
    from ..brains.prompt import first_json_object

    if not text or not text.strip():
        return None, False, "empty"
    data = first_json_object(text)
    if data is None:
        return None, False, "not_json"
    if "answer" not in data:
        return None, False, "no_answer"
    a = data["answer"]
    if q.kind == "text":
        s = " ".join(str(a).split()) if isinstance(a, (str, int, float)) and not isinstance(a, bool) else ""
        return (s[:300], True, "ok") if s else (None, False, "empty")
    if q.kind == "choice":
        s = str(a).strip().lower() if isinstance(a, str) else ""
        hit = next((o for o in q.options if o.lower() == s), None)
        return (hit, True, "ok") if hit is not None else (None, False, "not_an_option")
    if isinstance(a, bool) or not isinstance(a, (int, float)):
        try:
            a = float(str(a).strip())
        except ValueError:
            return None, False, "not_a_number"
    if not math.isfinite(a):
        return None, False, "not_a_number"
    lo, hi = (1.0, 5.0) if q.kind == "likert" else (q.low, q.high)
    v = min(max(float(a), lo), hi)
    if q.kind == "likert":
        v = float(round(v))
    return v, True, "ok" if v == a else "clamped"


def template_answer(q: Question, world: Any, fish: int) -> tuple[Any, bool, str]:
    """The embedded brain's answer from the fish's state (module doc), or ``no_template``."""
    if q.template is None:
        return None, False, "no_template"
    s = world.school
    energy = int(s.energy[fish]) / max(1, world.energy_cap(fish))
    company = int(s.neighbours[fish])
    plans = world.plan_table  # the run's plan types
    t = plans.types[int(s.plan_goal[fish])] if 0 <= int(s.plan_goal[fish]) < plans.n else None
    goal = t.name if t is not None else "hold"
    if q.template == "energy":
        value: Any = energy
    elif q.template == "company":
        value = company
    elif q.template == "plan":
        value = goal
    else:  # heading: where its plan takes it next (a hexagonal tank's six ways: the compass word nearest)
        way = int(s.plan_param[fish]) if t is not None and t.param == "direction" else int(s.heading[fish])
        value = "stay" if goal == "rest" and not (t is not None and t.param == "direction") else \
            _compass(world.grid, way)
    if q.kind == "likert":
        score = 1 + min(4, int(value * 5)) if q.template == "energy" else 1 + min(4, int(value)) \
            if q.template == "company" else None
        return (float(score), True, "template") if score is not None else (None, False, "no_template")
    if q.kind == "number":
        num = value * 100 if q.template == "energy" else value if q.template == "company" else None
        return (float(min(max(num, q.low), q.high)), True, "template") if num is not None else \
            (None, False, "no_template")
    if q.kind == "choice":
        if q.predicts == "company" or set(q.options) == {"yes", "no"}:
            return ("yes" if company > 0 else "no"), True, "template"
        hit = next((o for o in q.options if o.lower() == str(value).lower()), None)
        return (hit, True, "template") if hit is not None else (None, False, "no_template")
    words = f"I am on {goal}, with {company} fish in view and {energy:.0%} of my energy."
    return words, True, "template"


def user_brain_parts(cfg: Any) -> set[str | None]:
    """The parts of a recorded tank whose fish a user brain ran — the only fish whose answers a
    survey's ``--brain`` gives: ``None`` for a tank without groups, else each such group's name
    (``tank``: the fish no group takes)."""
    from .trust import _user_brain

    if not cfg.fish.groups:
        return {None} if _user_brain(cfg.brain.kind) else set()
    names = list(cfg.fish.group_names())
    return {names[g] for g in range(len(names)) if _user_brain(cfg.for_group(g).brain.kind)}


@dataclass
class Asker:
    """Asks model fish a question through one client (the user's server, a reply cache, a
    budget of requests)."""

    cfg: Any
    base_url: str | None
    model: str | None
    api_key_env: str | None
    cache_dir: str | None
    max_requests: int
    timeout_s: float = 60.0  # one answer, retries included (--timeout)
    say: Callable[[str], None] | None = None  # progress lines (stderr): a server slow to answer
    sent: int = 0  # questions given to the server (--max-requests counts these; retries not)
    said_at: float | None = None  # when the last "waiting for the server" line was said
    cached: int = 0
    client: Any = None
    choice: Any = None  # the brains the user gave (--brain), for user brains' answers
    users: dict[str, Any] = field(default_factory=dict)
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # the model's, as recordings keep them

    def _client(self) -> Any:
        if self.client is None:
            from ..brains.client import ModelClient
            from ..brains.exchanges import ReplyCache

            brain = self.cfg.brain
            if self.api_key_env:
                brain = brain.model_copy(update={"api_key_env": self.api_key_env})
            else:
                from .trust import DEFAULT_KEY_ENV

                brain = brain.model_copy(update={"api_key_env": DEFAULT_KEY_ENV})
            eps = self.cfg.brain.small.endpoints or self.cfg.brain.large.endpoints
            model = self.model or (eps[0].model if eps else "model")
            cache = ReplyCache(self.cache_dir) if self.cache_dir else ReplyCache()
            self.client = ModelClient(self.base_url or "http://127.0.0.1:9/v1", model, timeout_s=self.timeout_s,
                                      seed=self.cfg.seed, brain=brain, cache=cache, max_concurrency=1)
        return self.client

    def ask(self, msgs: list[dict[str, Any]], q: Question, tick: int = 0, fish: int = 0,
            group: str | None = None, view: str = "") -> dict[str, Any]:
        """``{"text", "tokens", "latency_s", "error", "cached"}`` of one question; the exchange is
        kept (:attr:`exchanges`, as recordings keep a decision's, kind ``survey``)."""
        client = self._client()
        from ..brains.exchanges import cache_key, exchange
        from ..brains.transport import response_formats

        key = cache_key(client.model, msgs, q.schema(), 120, *client._sampling)
        if client.cache.get(key) is None:  # a request the server must answer
            if self.base_url is None:
                return {"text": None, "error": "no_server"}
            if self.sent >= self.max_requests:
                return {"text": None, "error": "max_requests"}
            self.sent += 1
        start = time.perf_counter()
        trace: dict[str, Any] = {"model": client.model}
        got = client.complete(msgs, q.schema(), max_tokens=120, trace=trace,
                              waiting=(WAITING_S, self._waiting) if self.say is not None else None)
        if not got.get("error") and got.get("text") is None:  # a reply without a message (no choices,
            got = {**got, "error": "no_content"}  # null content): no usable completion, as a failure
        self.cached += int(bool(got.get("cached")))
        c = int(got.get("completion_tokens") or 0)
        trace.update(prompt_tokens=int(got.get("tokens") or 0) - c, completion_tokens=c,
                     latency_s=trace.get("latency_s", time.perf_counter() - start))
        self.exchanges.append({**exchange(tick=tick, fish=fish, kind="survey", model=client.model, msgs=msgs,
                                          formats=response_formats(q.schema()), max_tokens=120, trace=trace,
                                          reply=got.get("text"), read="ok" if not got.get("error") else
                                          str(got["error"]), tier="survey", view=view,
                                          cached=bool(got.get("cached")), group=group),
                               "question": q.id})
        return {**got, "latency_s": round(time.perf_counter() - start, 3)}

    def _waiting(self) -> None:
        """A question still unanswered after :data:`WAITING_S`: one line (then at most one every
        :data:`WAITING_EVERY_S`), so a hung server is not a silent wait."""
        now = time.monotonic()
        if self.say is None or (self.said_at is not None and now - self.said_at < WAITING_EVERY_S):
            return
        from ..config import redact_url

        self.said_at = now
        done = self.sent - 1
        self.say(f"waiting for the server at {redact_url(self.base_url or '')}: no answer after {WAITING_S:g} s "
                 f"(each question waits at most {self.timeout_s:g} s, --timeout S; {done} question"
                 f"{'s' if done != 1 else ''} asked before this one) …")

    @property
    def requests_sent(self) -> int:
        """Requests that reached the server (retries included): what it received."""
        return int(self.client.sent.calls) if self.client is not None else 0

    def user_answer(self, q: Question, player: Any, part: Any, fish: int, group: str | None) -> tuple[Any, bool, str]:
        """A user brain's answer (its ``answer(question, ask)``), read as a model's is; the
        brain is the one the user gives (``--brain``: a recording never names code to run)."""
        from ..brains.user import BrainError, UserBrainSource
        from .trust import reader_config

        given = (self.choice.brains.get(group) if self.choice is not None and group in self.choice.brains
                 else self.choice.brains.get(None) if self.choice is not None else None)
        if given == "instinct":  # the user put the instinct in its place: it answers by template
            return template_answer(q, player.world, fish)
        key = f"{player.recording.path}:{group or ''}"
        if key not in self.users:
            try:  # the recording's whole config: a group's brain is named as the group's
                full, offline = reader_config(player.recording.config, self.choice, set())
                cfg = full.for_group(list(full.fish.group_names()).index(group)) if group is not None else full
                self.users[key] = UserBrainSource(cfg, "lockstep", cache=self._client().cache, group=group,
                                                  offline=offline)
            except (RecordingError, BrainError) as exc:
                raise SurveyError(f"survey: {exc}") from None
        src = self.users[key]
        w = player.world
        batch = player.request_for(fish)
        batch.perceptions, batch.personas = [w.perceive(fish)], [w.school.persona[fish]]
        out, why = src.answer({"id": q.id, "kind": q.kind, "text": q.text, "options": list(q.options),
                               "labels": list(q.labels), "min": q.low, "max": q.high}, batch)
        if why != "ok":
            return None, False, why
        return read_answer(q, json.dumps({"answer": out}))

    def close(self) -> None:
        for src in self.users.values():
            src.close()
        if self.client is not None:
            self.client.close()


ROW_TYPES = {"recording": "string", "tick": "int64", "fish": "int64", "group": "string", "brain": "string",
             "question": "string", "kind": "string", "answer": "string", "value": "float64", "valid": "bool",
             "reason": "string", "tokens": "int64", "latency_s": "float64", "did": "string", "agrees": "string"}


def _compass(grid: Any, way: int) -> str:
    """A move of ``grid`` as the compass word nearest it on screen (north, south, west, east)."""
    ux, uy = grid.units[way % grid.n_moves]
    return ("east" if ux > 0 else "west") if abs(ux) >= abs(uy) else ("south" if uy > 0 else "north")


def _deeds(player: Any, fish: list[int], start: int, horizon: int) -> dict[int, tuple[str, bool]]:
    """What each fish did in the ``horizon`` ticks after ``start``: its net heading (``stay``
    within a cell) and whether it had company at least half the time."""
    w = player.world
    x0, y0 = w.water.xy(w.school.cell)
    company = np.zeros(w.school.n, np.int64)
    ticks = 0
    while player.tick < min(start + horizon, player.last_tick):
        player.step()
        company += player.world.school.neighbours > 0
        ticks += 1
    x1, y1 = player.world.water.xy(player.world.school.cell)
    (x0, y0), (x1, y1) = w.grid.centres(x0, y0), w.grid.centres(x1, y1)  # (a hexagonal tank: on screen)
    out: dict[int, tuple[str, bool]] = {}
    for f in fish:
        dx, dy = float(x1[f] - x0[f]), float(y1[f] - y0[f])
        way = "stay" if abs(dx) + abs(dy) <= 1 else (("east" if dx > 0 else "west") if abs(dx) >= abs(dy)
                                                      else ("south" if dy > 0 else "north"))
        out[f] = (way, bool(ticks) and 2 * int(company[f]) >= ticks)
    return out


def _fish_answers(player: Any, cfg: Any, f: int, t: int, questions: list[Question], asker: Asker,
                  group: str | None, g: int | None) -> list[tuple[Question, dict[str, Any]]]:
    """Fish ``f``'s answers at tick ``t``: its model's (asked in the words of a decision request
    made then), its template's, or its user brain's — each ``{brain, value, valid, reason, tokens,
    latency_s}``."""
    from ..brains.prompt import messages
    from ..brains.prompts import load_prompt

    part = cfg.for_group(g) if g is not None else cfg
    kind = part.brain.kind
    brain = "model" if kind == "llm" else "template" if kind == "instinct" else "user"
    w = player.world
    p = w.perceive(f) if kind == "llm" else None
    base = None
    if p is not None:
        b = part.brain
        base = messages(p, w.school.persona[f], "asked", plans=b.decides == "plan", memories=b.prompt_memories,
                        summaries=b.prompt_summaries, tendency=b.tendency, prompt=load_prompt(b.prompt),
                        memory_tokens=b.memory_tokens)
    out: list[tuple[Question, dict[str, Any]]] = []
    for q in questions:
        row: dict[str, Any] = {"brain": brain, "tokens": 0, "latency_s": 0.0}
        if base is not None and p is not None:
            got = asker.ask([*base, {"role": "user", "content": q.ask()}], q, t, f, group, p.view)
            value, valid, reason = (None, False, str(got["error"])) if got.get("error") else \
                read_answer(q, got.get("text"))
            row.update(tokens=int(got.get("tokens") or 0), latency_s=got.get("latency_s", 0.0))
        elif kind == "instinct":
            value, valid, reason = template_answer(q, w, f)
        else:
            value, valid, reason = asker.user_answer(q, player, part, f, group)
        row.update(value=value, valid=valid, reason=reason)
        out.append((q, row))
    return out


def _add_row(rows: dict[str, list[Any]], path: str, t: int, f: int, group: str, q: Question, row: dict[str, Any],
             deed: tuple[str, bool] | None) -> None:
    """One answer into the table, with what the fish then did for a question that predicts it."""
    did, agrees = "", ""
    if q.predicts and row["valid"] and deed is not None:
        way, together = deed
        did = way if q.predicts == "heading" else ("yes" if together else "no")
        agrees = str(did == row["value"]).lower()
    v = row["value"]
    values = {"recording": path, "tick": t, "fish": f, "group": group, "brain": row["brain"], "question": q.id,
              "kind": q.kind, "answer": "" if v is None else str(v) if not isinstance(v, float) else f"{v:g}",
              "value": float(v) if isinstance(v, (int, float)) else float("nan"), "valid": bool(row["valid"]),
              "reason": row["reason"], "tokens": int(row["tokens"]), "latency_s": float(row["latency_s"] or 0.0),
              "did": did, "agrees": agrees}
    for k, v2 in values.items():
        rows[k].append(v2)


def survey_one(path: str | Path, ticks: list[int], questions: list[Question], fish: str | None, asker: Asker,
               say: Callable[[str], None] | None = None) -> dict[str, list[Any]]:
    """The answers of one recording (rows of :data:`ROW_TYPES`)."""
    from ..brains.prompts import as_recorded
    from .influence import fish_ids
    from .replay import ReplaySession

    rec = Recording(path)
    rows: dict[str, list[Any]] = {c: [] for c in ROW_TYPES}
    try:
        cfg = rec.config
        for t in ticks:
            if not rec.first_tick <= t < rec.last_tick:
                raise SurveyError(f"--at {t} is outside the recording's ticks {rec.first_tick}..{rec.last_tick - 1}")
        chosen = fish_ids(fish, cfg) if fish and fish != "all" else None  # (a bad one: one line)
        groups = cfg.fish.group_of() if cfg.fish.groups else None
        names = list(cfg.fish.group_names()) if cfg.fish.groups else []
        player = ReplaySession(rec)
        try:
            with as_recorded(rec.header):
                for t in sorted(set(ticks)):
                    player.seek(t)
                    w = player.world
                    s = w.school
                    ids = [int(i) for i in np.flatnonzero(~s.absent) if chosen is None or int(i) in chosen]
                    if say:
                        say(f"survey: t{t}, {len(ids)} fish × {len(questions)} questions …")
                    answers = [(f, q, row) for f in ids
                               for q, row in _fish_answers(player, cfg, f, t, questions, asker,
                                                           names[groups[f]] if groups is not None else None,
                                                           groups[f] if groups is not None else None)]
                    horizons = sorted({q.horizon for q in questions if q.predicts})
                    deeds: dict[int, dict[int, tuple[str, bool]]] = {}
                    for h in horizons:
                        deeds[h] = _deeds(player, ids, t, h)
                        player.seek(t)
                    for f, q, row in answers:
                        _add_row(rows, str(path), t, f, names[groups[f]] if groups is not None else "", q, row,
                                 deeds.get(q.horizon, {}).get(f))
        finally:
            player.close()
    finally:
        rec.close()
    return rows


def summarize(rows: dict[str, list[Any]], questions: list[Question], seed: int = 0) -> dict[str, Any]:
    """Per question, recording, tick and group: counts by reason, the distribution (choice,
    likert) or mean with its 95 % interval (likert, number), words against deeds; per question
    the difference of each recording from the first."""
    from .influence import bootstrap

    rng = np.random.default_rng(seed)
    n = len(rows["fish"])
    col = {k: np.array(v, dtype=object) for k, v in rows.items()}
    value = np.array(rows["value"], np.float64) if n else np.zeros(0)
    out: dict[str, Any] = {}
    recordings = list(dict.fromkeys(rows["recording"]))
    for q in questions:
        mine = col["question"] == q.id if n else np.zeros(0, bool)
        entry: dict[str, Any] = {"kind": q.kind, "text": q.text, "by": []}
        for r in recordings:
            for t in sorted(set(np.array(rows["tick"])[mine & (col["recording"] == r)].tolist())):
                for g in sorted(set(col["group"][mine & (col["recording"] == r)].tolist())):
                    sel = mine & (col["recording"] == r) & (np.array(rows["tick"]) == t) & (col["group"] == g)
                    valid = sel & np.array(rows["valid"], bool)
                    one: dict[str, Any] = {"recording": r, "tick": t, "group": g or None,
                                           "asked": int(sel.sum()), "valid": int(valid.sum()),
                                           "reasons": _counts(col["reason"][sel])}
                    brains = _counts(col["brain"][sel])
                    one["brains"] = brains
                    if q.kind in ("likert", "number") and valid.any():
                        lo, hi = bootstrap(value[valid], rng)
                        one.update(mean=round(float(value[valid].mean()), 3), low=round(lo, 3), high=round(hi, 3))
                    if q.kind in ("choice", "likert") and valid.any():
                        one["distribution"] = _counts(col["answer"][valid])
                    if q.predicts:
                        judged = valid & (col["agrees"] != "")
                        if judged.any():
                            one["words_vs_deeds"] = {"judged": int(judged.sum()), "agree": round(
                                float(np.mean(col["agrees"][judged] == "true")), 3), "horizon": q.horizon}
                    entry["by"].append(one)
        if len(recordings) > 1 and q.kind in ("likert", "number"):
            base = mine & (col["recording"] == recordings[0]) & np.array(rows["valid"], bool)
            entry["differences"] = []
            for r in recordings[1:]:
                other = mine & (col["recording"] == r) & np.array(rows["valid"], bool)
                if base.any() and other.any():
                    a, b = value[base], value[other]
                    diffs = (b[rng.integers(0, len(b), (BOOT, len(b)))].mean(axis=1)
                             - a[rng.integers(0, len(a), (BOOT, len(a)))].mean(axis=1))
                    lo, hi = np.percentile(diffs, [2.5, 97.5])
                    entry["differences"].append({"recording": r, "minus": recordings[0],
                                                 "difference": round(float(b.mean() - a.mean()), 3),
                                                 "low": round(float(lo), 3), "high": round(float(hi), 3)})
        out[q.id] = entry
    return out


def _counts(values: Any) -> dict[str, int]:
    if not len(values):
        return {}
    keys, counts = np.unique(np.asarray(values, dtype=str), return_counts=True)
    return {str(k): int(c) for k, c in zip(keys.tolist(), counts.tolist())}


def survey(paths: list[str], ticks: list[int], questions_file: str, fish: str | None = None,
           base_url: str | None = None, model: str | None = None, api_key_env: str | None = None,
           reply_cache: str | None = None, max_requests: int = 10_000, seed: int = 0,
           say: Callable[[str], None] | None = None, choice: Any = None, timeout_s: float = 60.0,
           waiting: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Ask every chosen fish of each recording each question at each tick (module doc).
    ``timeout_s``: one answer, retries included; ``waiting``: a line when the server is slow
    to answer (no answer after :data:`WAITING_S`)."""
    start = time.perf_counter()
    questions = load_questions(questions_file)
    rows: dict[str, list[Any]] = {c: [] for c in ROW_TYPES}
    exchanges: dict[str, list[dict[str, Any]]] = {}
    asker: Asker | None = None
    try:
        for p in paths:
            rec = Recording(p)
            cfg = rec.config
            rec.close()
            if asker is None:
                asker = Asker(cfg, base_url, model, api_key_env, reply_cache, max_requests, timeout_s, waiting,
                              choice=choice)
            before = len(asker.exchanges)
            got = survey_one(p, ticks, questions, fish, asker, say)
            for k in rows:
                rows[k] += got[k]
            exchanges[str(p)] = asker.exchanges[before:]
        sent = (asker.requests_sent + sum(int(u.calls) for u in asker.users.values())) if asker else 0
    finally:
        if asker is not None:
            asker.close()
    valid = sum(rows["valid"])
    summary = {"recordings": paths, "ticks": sorted(set(ticks)), "questions": len(questions),
               "answers": len(rows["fish"]), "valid": valid,
               "reasons": _counts(np.array(rows["reason"], dtype=object)),
               "requests_sent": sent, "answered_from_cache": asker.cached if asker else 0,
               "max_requests": max_requests, "seconds": round(time.perf_counter() - start, 2),
               "by_question": summarize(rows, questions, seed)}
    return {"summary": summary, "rows": rows, "exchanges": exchanges}


def write_outputs(result: dict[str, Any], out_dir: str | Path, fmt: str, inputs: list[str],
                  overwrite: bool) -> dict[str, str]:
    """``survey.parquet``/``.csv`` and ``survey.json`` in ``out_dir``."""
    import os

    from ..observe.tablefile import write_table
    from .tables import check_parquet, table_targets

    check_parquet(fmt)
    target = table_targets(out_dir, ["survey"], fmt, tuple(inputs), overwrite, "--out")["survey"]
    target.parent.mkdir(parents=True, exist_ok=True)
    write_table(target, result["rows"], fmt, ROW_TYPES)
    from ..config import redact_text

    lines = []  # the model's exchanges, each whole (its shared texts in place): re-sendable as they were
    for rec_path, calls in result.get("exchanges", {}).items():
        for c in calls:
            texts = c.get("_texts") or {}
            lines.append(json.dumps({**{k: v for k, v in c.items() if k != "_texts"}, "recording": rec_path,
                                     "system": texts.get(c.get("prefix") or "", ""),
                                     "schema_text": texts.get(c.get("schema") or "", "")}, ensure_ascii=False))
    ex = target.parent / "exchanges.jsonl"
    tmp_ex = ex.with_name(ex.name + ".tmp")
    tmp_ex.write_text(redact_text("\n".join(lines) + ("\n" if lines else "")))
    os.replace(tmp_ex, ex)
    js = target.parent / "survey.json"
    tmp = js.with_name(js.name + ".tmp")
    tmp.write_text(json.dumps(result["summary"], indent=1))
    os.replace(tmp, js)
    return {"table": str(target), "summary": str(js), "exchanges": str(ex)}


def write_otel(result: dict[str, Any], path: str, out: str | Path, overwrite: bool) -> dict[str, Any]:
    """The survey's model exchanges of recording ``path`` as OTLP/JSON traces (``export
    --otel``'s form: one span a request, kind ``survey``, in the recording's simulated time)."""
    from ..observe.paths import OutputError, check_output
    from .otel import _Scrub, build_request, key_secrets, write_atomically

    calls = result.get("exchanges", {}).get(str(path), [])
    if not calls:
        raise SurveyError(f"--otel: no model was asked in {path} (its fish answered by template or brain)")
    try:
        target = check_output(out, (path,), overwrite, "trace")
    except OutputError as exc:
        raise SurveyError(str(exc)) from None
    texts: dict[str, str] = {}
    for c in calls:
        texts.update(c.get("_texts") or {})
    rec = Recording(path)
    try:
        request = build_request(rec, [{**c, "asked": c["tick"]} for c in calls], texts=texts)
        secrets = key_secrets(rec.config)
    finally:
        rec.close()
    _Scrub(secrets).walk(request)
    write_atomically(target, json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n")
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return {"otel": str(target), "spans": len(spans), "exchange_spans": len(calls)}


def render_text(s: dict[str, Any]) -> str:
    """The summary as a person reads it."""
    lines = [f"survey of {', '.join(Path(p).name for p in s['recordings'])} at t{', t'.join(map(str, s['ticks']))}: "
             f"{s['answers']} answers, {s['valid']} valid; requests sent {s['requests_sent']}, from the reply cache "
             f"{s['answered_from_cache']} ({s['seconds']:.1f} s)",
             "reasons: " + ", ".join(f"{k} {v}" for k, v in s["reasons"].items())]
    for qid, e in s["by_question"].items():
        lines += ["", f"{qid} ({e['kind']}): {e['text']}"]
        for b in e["by"]:
            head = f"  {Path(b['recording']).name} t{b['tick']}" + (f" {b['group']}" if b["group"] else "")
            fig = (f"mean {b['mean']:g} [{b['low']:g}, {b['high']:g}]" if "mean" in b else "")
            dist = ", ".join(f"{k} {v}" for k, v in (b.get("distribution") or {}).items())
            wd = b.get("words_vs_deeds")
            lines.append(f"{head}: {b['valid']} of {b['asked']} valid ({', '.join(b['brains'])})"
                         + (f"; {fig}" if fig else "") + (f"; {dist}" if dist else "")
                         + (f"; words vs deeds {wd['agree']:.0%} of {wd['judged']} (next {wd['horizon']} ticks)"
                            if wd else ""))
        for d in e.get("differences", []):
            lines.append(f"  {Path(d['recording']).name} - {Path(d['minus']).name}: {d['difference']:+g} "
                         f"[{d['low']:+g}, {d['high']:+g}]")
    return "\n".join(lines)
