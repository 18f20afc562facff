"""Your own brain in the tank (docs/brains.md): the public decision protocol and its loader.

A *user brain* is any object with a ``decide(ask)`` method (or a plain function of ``ask``),
named by ``brain.kind`` / ``--brain``:

* ``FILE.py:NAME`` — ``NAME`` in that Python file (a path, relative to the current folder);
* ``MODULE:NAME`` — ``NAME`` in an importable module;
* an installed entry point of the group ``mirofish.brains`` — its name.

``NAME`` is a class (made with no arguments, once per run, per group of a mixed tank), an
object, or a function. Before the first decision the brain's optional ``setup(ctx)`` gets a
:class:`BrainContext`: the run's config, its seed, the group, and :meth:`BrainContext.chat` —
a chat completion from the OpenAI-compatible server the config names, through the same
transport as the model brain (deadline, retries, breaker, capped replies, the API key from
its variable and never written anywhere), with every exchange recorded with the decision it
served and answered from the reply cache in a fork.

**What a brain receives** — an :class:`Ask` per fish that needs a decision: the same
perception the model brain gets (the 5×5 view as text and as codes, energy, age, heading,
food here, its short memories and long-term summaries, the places it remembers), why it asks,
its persona, the plans (or actions) that fit the view, and ``messages``: the exact prompt the
model brain would send for it (an LLM agent may pass it straight to :meth:`BrainContext.chat`).

**What it returns** — a :class:`Decision`, or the same thing as a dict or a JSON string in
the model brain's reply shape (``{"goal": "explore", "direction": "south", "ticks": 30,
"thought": "…"}``; action mode ``{"action": "move_n", "thought": "…"}``). The answer is read
by the one reading the model brain's replies get (:func:`~.prompt.judge_reply`): checked
against the fish's view and the plans offered.

**Failure is data**: a brain that raises (``brain_raised``), runs past
``brain.request_timeout_s`` (``brain_hung``), returns something that is not a decision
(``brain_garbage``) or a plan the view does not allow (``school_without_fish``,
``explore_into_glass``, ``illegal_not_offered``, …: ``illegal_plan``) gets the instinct
planner's decision for that fish instead — counted per reason, recorded per decision, one
warning line per kind of failure — and the tank keeps moving. After
``brain.breaker_failures`` raises or hangs in a row the brain is not asked for
``brain.breaker_cooldown_s`` seconds (``breaker_open``); a call that never returns costs a
worker thread, replaced up to :data:`MAX_LOST_WORKERS` times, after which the fallback
decides for the rest of the run.

Decisions are asked of ``concurrency`` worker threads (a brain's attribute; 1 by default, so
a brain with memory is asked in the order requests come: fish by fish, tick by tick). In
lockstep a tick waits for its brain's answers, so a deterministic brain makes a reproducible
run, and every run — deterministic or not — replays exactly from its recording.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import queue
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from hashlib import blake2b
from pathlib import Path
from typing import Any

import numpy as np

from .. import watchdog
from ..actions import ACTION_NAMES, DIRECTION_NAMES, Action
from ..config import Config, ConfigError
from ..files import not_a_file
from ..fish.triggers import trigger_name
from .base import TIER_INDEX, DecisionBatch, DecisionSource, RequestBatch, status_code
from .exchanges import ReplyCache, cache_key, exchange, schema_of
from .instinct import instinct_source
from .prompt import PlanReply, fitting_choices, judge_reply, legal_for_view, messages
from .prompts import load_prompt

ENTRY_POINTS = "mirofish.brains"
MAX_LOST_WORKERS = 8  # worker threads a brain may leave hanging before the fallback decides for good
BUILT_IN = ("instinct", "llm")


class BrainError(ConfigError):
    """A brain that cannot be loaded: one line naming the spec and what is wrong."""


class ModelFailed(Exception):
    """:meth:`BrainContext.chat` got no usable answer; ``reason`` is the model path's failure
    code (``timeout``, ``connection``, ``http_500``, ``no_server``, …). A brain may catch it and
    decide otherwise; one that lets it through gets the fallback, counted under ``reason``."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(detail or reason)
        self.reason = reason


@dataclass(frozen=True)
class Ask:
    """What a brain is told about one fish that needs a decision (docs/brains.md).

    Energies are in energy units (``energy`` 63.5 of ``max_energy`` 100). ``codes`` are the view's
    cell codes (``mirofish.fish.perception``: row-major, the fish in the middle), ``view`` the same
    as text (``@`` the fish, ``.`` water, ``#`` glass, ``F`` food, ``^ v < >`` other fish).
    ``plans``: the plan types that fit the view (plan mode) — or the actions that are legal
    (action mode); ``directions``: the open ways (explore's ``direction``)."""

    fish: int
    tick: int
    trigger: str
    view: str
    codes: np.ndarray
    energy: float
    max_energy: float
    age: int
    heading: str
    food_here: bool
    persona: str
    memories: tuple[str, ...]
    summaries: tuple[str, ...]
    places: str
    plans: tuple[str, ...]
    directions: tuple[str, ...]
    decides: str
    group: str | None
    messages: list[dict[str, Any]] = field(repr=False)
    # the perception switches on for this fish (Perception.shown: plants_seen, hunting, fleeing,
    # grazing — its group eats plants, so a P beside it is something to eat — sight)
    shown: tuple[str, ...] = ()


@dataclass
class Decision:
    """A brain's answer. Plan mode: ``goal`` (a plan type: forage, school, explore + ``direction``,
    rest + ``until`` energy, keep_away + ``away_from`` crowd/glass, return + ``place``) and
    optionally ``ticks`` (its horizon; the plan type's default otherwise). Action mode:
    ``action`` (move_n, move_s, move_w, move_e, eat, rest). ``thought``: up to 80 characters,
    shown in the follow panel and recorded."""

    goal: str | None = None
    action: str | None = None
    direction: str | None = None
    until: int | None = None
    away_from: str | None = None
    place: int | None = None
    ticks: int | None = None
    thought: str = ""

    def reply(self) -> dict[str, Any]:
        """The decision in the model brain's reply shape."""
        out = {("from" if k == "away_from" else k): v for k, v in asdict(self).items() if v is not None}
        return out


class BrainContext:
    """What a brain's ``setup(ctx)`` gets: ``cfg`` (the run's config as this brain's group sees it),
    ``seed``, ``group`` (None outside a mixed tank), ``decides`` (plan/action), and :meth:`chat`."""

    def __init__(self, source: UserBrainSource):
        self._source = source
        self.cfg: Config = source.cfg
        self.seed: int = source.cfg.seed
        self.group: str | None = source.group
        self.decides: str = source.cfg.brain.decides

    def chat(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None = None,
             max_tokens: int = 200) -> str:
        """A chat completion (JSON shaped by ``schema`` when given) from the server of the brain's
        config (``--base-url``/``--model``, or the group's ``base_url``/``model``), at most
        ``brain.request_timeout_s`` in all; recorded with the decision being made. Returns the
        reply's text; raises :class:`ModelFailed` when there is none."""
        return self._source.chat(messages, schema, max_tokens)


LOAD_TIMEOUT_S = 120.0  # importing a brain, making it, its setup(): each must return within this
LOAD_NOTICE_S = 5.0  # one of them still running after this long: one line on stderr says it is waited for
CLOSE_TIMEOUT_S = 10.0  # a brain's close()
MAX_DEPTH = 8  # a reply's nesting (dicts and lists) past which it is not a decision
MAX_ITEMS = 256  # keys and list items in a reply, all levels together


def one_line(text: Any, limit: int = 300) -> str:
    """``text`` as one printable line, at most ``limit`` characters: newlines and control
    characters escaped; an object whose ``str()`` raises is named by its type."""
    try:
        s = text if isinstance(text, str) else str(text)
    except BaseException:  # noqa: BLE001 — a user's object whose __str__ raises
        s = f"<{type(text).__name__} that cannot be shown>"
    s = s.encode("unicode_escape", "backslashreplace").decode("ascii")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {one_line(exc, 200)}"


def bounded(fn: Callable[[], Any], seconds: float, what: str, loading: str | None = None) -> Any:
    """``fn()`` on a watchdog thread: its result, or :class:`BrainError` (one line) when it raises
    anything — ``BaseException`` included (SystemExit, GeneratorExit, a KeyboardInterrupt the
    brain raises itself) — or runs past ``seconds``; the user's own Ctrl-C still stops the run.
    ``loading`` (``"brain FILE.py:NAME"``): still running after :data:`LOAD_NOTICE_S`, one line on
    stderr says so — what is waited for, and when it is stopped — rather than a silent wait."""
    def still_waiting() -> None:
        print(f"mirofish: loading {loading}: {what} still running after {LOAD_NOTICE_S:g} s; waiting (it is "
              f"stopped after {seconds:g} s)", file=sys.stderr, flush=True)

    status, out = watchdog.call(fn, seconds, "mirofish-brain-watchdog",
                                (LOAD_NOTICE_S, still_waiting) if loading is not None else None)
    if status == "late":
        raise BrainError(f"{what} did not return within {seconds:g} s")
    if status == "raised":
        raise BrainError(f"{what} raised {_describe(out)}")
    return out


def load_object(spec: str, what: str = "brain", timeout_s: float | None = None) -> Any:
    """The object ``FILE.py:NAME`` or ``MODULE:NAME`` names (a brain, an ``influence`` outcome
    function), imported under a watchdog (``timeout_s``): a file that raises anything at all, or
    hangs, is one :class:`BrainError` line naming ``what``."""
    timeout_s = LOAD_TIMEOUT_S if timeout_s is None else timeout_s
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise BrainError(f"{what} {spec}: not FILE.py:NAME or MODULE:NAME")
    if where.endswith(".py"):
        path = Path(where)
        kind = not_a_file(path)
        if kind is not None:  # (a FIFO or a device is no "file not found": it would hang or never end)
            raise BrainError(f"{what} {spec}: file not found: {where}" if kind == "not found" else
                             f"{what} {spec}: {where} is {kind}, not a Python file")
        mod_name = "mirofish_user_brain_" + blake2b(str(path.resolve()).encode(), digest_size=6).hexdigest()

        def load() -> Any:
            mspec = importlib.util.spec_from_file_location(mod_name, path)
            if mspec is None or mspec.loader is None:
                raise ImportError("not a Python file")
            module = importlib.util.module_from_spec(mspec)
            sys.modules[mod_name] = module
            mspec.loader.exec_module(module)
            return module

        try:
            module = bounded(load, timeout_s, f"importing {where}", f"{what} {spec}")
        except BrainError as exc:  # a user's file: any error, or a hang, becomes one line
            sys.modules.pop(mod_name, None)
            raise BrainError(f"{what} {spec}: {exc}") from None
        obj = getattr(module, name, None)
        if obj is None:
            raise BrainError(f"{what} {spec}: {where} defines no {name}")
        return obj
    try:
        module = bounded(lambda: importlib.import_module(where), timeout_s, f"importing module {where}",
                         f"{what} {spec}")
    except BrainError as exc:
        raise BrainError(f"{what} {spec}: cannot import module {where}: {exc}") from None
    obj = getattr(module, name, None)
    if obj is None:
        raise BrainError(f"{what} {spec}: module {where} defines no {name}")
    return obj


def load_brain(spec: str, timeout_s: float | None = None) -> Callable[[], Any]:
    """A factory of the brain ``spec`` names (see the module doc); raises :class:`BrainError`.
    Importing it and making it each run under a watchdog (``timeout_s``): a brain that raises
    anything at all, or hangs, is one line."""
    timeout_s = LOAD_TIMEOUT_S if timeout_s is None else timeout_s
    _, sep, name = spec.rpartition(":")
    if sep:
        obj = load_object(spec, "brain", timeout_s)
    else:
        found = [ep for ep in importlib.metadata.entry_points(group=ENTRY_POINTS) if ep.name == spec]
        if not found:
            known = sorted({ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINTS)})
            raise BrainError(f"unknown brain {spec!r}: not instinct or llm, not FILE.py:NAME or MODULE:NAME, and no "
                             f"installed {ENTRY_POINTS} entry point of that name"
                             + (f" (installed: {', '.join(known)})" if known else ""))
        try:
            obj = bounded(found[0].load, timeout_s, "loading the entry point", f"brain {spec}")
        except BrainError as exc:
            raise BrainError(f"brain {spec}: the entry point does not load: {exc}") from None

    def make() -> Any:
        try:
            brain = bounded(lambda: obj() if isinstance(obj, type) else obj, timeout_s, f"making {name}",
                            f"brain {spec}")
            decide = bounded(lambda: getattr(brain, "decide", None), timeout_s, "its decide attribute")
        except BrainError as exc:
            raise BrainError(f"brain {spec}: {exc}") from None
        if callable(decide):
            return brain
        if callable(brain) and not isinstance(obj, type):
            return _FunctionBrain(brain, name)
        raise BrainError(f"brain {spec}: {name} has no decide(ask) method and is not a function")

    return make


class _FunctionBrain:
    def __init__(self, fn: Callable[[Ask], Any], name: str):
        self.decide, self.name = fn, name


def brain_name(spec: str, brain: Any = None) -> str:
    """The name a brain is shown and counted under: its ``name`` attribute, else ``NAME`` of its spec."""
    given = getattr(brain, "name", None)  # (a user's string: one printable line wherever it is shown)
    return one_line(given, 80) if isinstance(given, str) and given else spec.rpartition(":")[2] or spec


@dataclass
class _Job:
    batch: RequestBatch
    i: int
    ask: Ask
    started: float | None = None
    answered: bool = False
    calls: list[dict[str, Any]] = field(default_factory=list)


class UserBrainSource(DecisionSource):
    """Decisions from a user brain, asked on worker threads, with the instinct planner as fallback."""

    wants_perceptions = True

    def __init__(self, cfg: Config, mode: str = "lockstep", cache: ReplyCache | None = None,
                 group: str | None = None, warn: Callable[[str], None] | None = None, offline: bool = False):
        """``offline``: the brain's ``chat()`` contacts no server — only the reply cache answers (a
        fork of a recording given no ``--base-url``)."""
        super().__init__()
        self.cfg, self.mode, self.cache, self.group, self.offline = cfg, mode, cache, group, offline
        self.spec = cfg.brain.kind
        self.brain = load_brain(self.spec)()
        try:
            self.name = bounded(lambda: brain_name(self.spec, self.brain), LOAD_TIMEOUT_S, "its name")
        except BrainError:
            self.name = brain_name(self.spec)
        self.plans = cfg.brain.decides == "plan"
        self.prompt = load_prompt(cfg.brain.prompt)  # the words of Ask.messages (brains/prompts.py)
        self.deadline_s = cfg.brain.request_timeout_s
        self.fallback = instinct_source(cfg, tier="fallback")
        self._warn = warn or (lambda msg: print(f"mirofish: warning: {msg}", file=sys.stderr, flush=True))
        self._warned: set[str] = set()
        self._lock = threading.RLock()
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._running: list[_Job] = []
        self._asked_before: set[int] = set()
        self._local = threading.local()
        self._client: Any = None
        self.fallbacks: Counter[str] = Counter()
        self.decisions = self.brain_decisions = self.calls = self.tokens = self.late = 0
        self.lost_workers, self._streak, self._open_until, self._dead = 0, 0, 0.0, False
        self._said_off = False
        try:
            concurrency = bounded(lambda: getattr(self.brain, "concurrency", 1), LOAD_TIMEOUT_S, "its concurrency")
        except BrainError:
            concurrency = 1
        self.concurrency = concurrency if isinstance(concurrency, int) and 1 <= concurrency <= 64 else 1
        setup = getattr(self.brain, "setup", None)
        if callable(setup):
            try:
                bounded(lambda: setup(BrainContext(self)), max(LOAD_TIMEOUT_S, cfg.brain.warmup_timeout_s), "setup",
                        f"brain {self.spec}")
            except BrainError as exc:  # one line, exit 2
                raise BrainError(f"brain {self.spec}: {exc}") from None
        self._workers = [self._start_worker() for _ in range(self.concurrency)]

    # ------------------------------------------------------------ engine side

    def submit(self, batch: RequestBatch) -> None:
        now = time.monotonic()
        for i in range(len(batch)):
            ask = self._ask(batch, i)
            with self._lock:
                blocked = self._dead or now < self._open_until
            if blocked:
                self._fall_back(_Job(batch, i, ask), "brain_hung" if self._dead else "breaker_open")
            else:
                self._jobs.put(_Job(batch, i, ask))

    def pump(self) -> None:
        """The watchdog: a call past its deadline gets the fallback now (``brain_hung``); its worker is
        replaced while fewer than :data:`MAX_LOST_WORKERS` are lost."""
        now = time.monotonic()
        with self._lock:
            dead = [t for t in self._workers if not t.is_alive()]
            for t in dead:  # a worker that died (it never should): replaced and counted
                self._workers.remove(t)
                self.lost_workers += 1
        if dead and not self._dead:
            self._warn(f"brain {self.name}: {len(dead)} worker thread(s) died; replaced")
            self._workers += [self._start_worker() for _ in dead]
        with self._lock:
            overdue = [j for j in self._running if not j.answered and j.started is not None
                       and now - j.started > self.deadline_s]
        for job in overdue:
            self._fall_back(job, "brain_hung", f"no answer within brain.request_timeout_s = {self.deadline_s:g} s")
            with self._lock:
                self._running.remove(job)
                self._failed()
                self.lost_workers += 1
                replace = self.lost_workers < MAX_LOST_WORKERS
                if not replace:
                    self._dead = True
            if replace:
                self._workers.append(self._start_worker())
            else:
                with self._lock:
                    first_off, self._said_off = not self._said_off, True
                if first_off:  # said once
                    self._warn(f"brain {self.name}: {self.lost_workers} calls hung past brain.request_timeout_s; "
                               f"it is switched off for the rest of the run: the instinct decides for its fish")
                self._drain("brain_hung")

    def tick_wait(self) -> float:
        return self.deadline_s + 1.0  # the watchdog answers first, with its reason

    def give_up(self, batch: RequestBatch) -> DecisionBatch | None:
        return None  # the watchdog answers every call that runs past its deadline

    def status(self) -> dict[str, Any]:
        with self._lock:
            fallbacks = dict(self.fallbacks)
        return {"source": "user", "brain": self.name, "spec": self.spec,
                **({"group": self.group} if self.group else {}),
                "decisions": self.decisions, "brain_decisions": self.brain_decisions, "fallbacks": fallbacks,
                "fallback_rate": round(sum(fallbacks.values()) / max(1, self.decisions), 4),
                "model_calls": self.calls, "tokens": self.tokens, "late_answers_dropped": self.late,
                "lost_workers": self.lost_workers}

    def close(self) -> None:
        for _ in self._workers:
            self._jobs.put(None)
        close = getattr(self.brain, "close", None)
        if callable(close):
            try:
                bounded(close, CLOSE_TIMEOUT_S, "close()")
            except BrainError as exc:  # closing is best effort: one line, the run's results stand
                self._warn(f"brain {self.name}: {exc}")
        if self._client is not None:
            self._client.close()

    # ------------------------------------------------------------ a survey's question

    def answer(self, question: dict[str, Any], batch: RequestBatch) -> tuple[Any, str]:
        """A survey's question (``run.py survey``) put to the brain's optional ``answer(question,
        ask)`` for the one fish of ``batch`` (with its perceptions), under the watchdog
        (``brain.request_timeout_s``): ``(answer as plain data, "ok")`` or ``(None, why)`` —
        ``no_answer_method``, ``brain_hung``, ``brain_raised``, ``brain_garbage``. ``question``:
        ``id``, ``kind`` (text, likert, choice, number), ``text``, ``options``, ``labels``,
        ``min``, ``max``. Its ``ctx.chat`` works as in a decision (the reply cache answers first)."""
        fn = getattr(self.brain, "answer", None)
        if not callable(fn):
            return None, "no_answer_method"
        ask = self._ask(batch, 0)
        try:
            out = bounded(lambda: fn(dict(question), ask), self.cfg.brain.request_timeout_s, "its answer")
        except BrainError as exc:
            return None, "brain_hung" if "did not return" in str(exc) else "brain_raised"
        try:
            return _plain(out, 0, [MAX_ITEMS]), "ok"
        except _NotPlain:
            return None, "brain_garbage"

    # ------------------------------------------------------------ the ask

    def _ask(self, batch: RequestBatch, i: int) -> Ask:
        assert batch.perceptions is not None and batch.personas is not None
        p, fish = batch.perceptions[i], int(batch.fish[i])
        trigger = trigger_name(int(batch.triggers[i]))
        if fish not in self._asked_before and trigger == "timeout":
            trigger = "first_plan"
        self._asked_before.add(fish)
        b = self.cfg.brain
        if self.plans:
            goals, ways = fitting_choices(p.view, p.places, batch.plans, p.shown)
            plans: tuple[str, ...] = tuple(goals)
        else:
            ways = []
            plans = tuple(a for a in ACTION_NAMES if legal_for_view(a, p.view, p.food_here, "grazing" in p.shown))
        msgs = messages(p, batch.personas[i], trigger, None, plans=self.plans, memories=b.prompt_memories,
                        summaries=b.prompt_summaries, tendency=b.tendency, prompt=self.prompt,
                        memory_tokens=b.memory_tokens, table=batch.plans)
        return Ask(fish=fish, tick=int(batch.tick), trigger=trigger, view=p.view, codes=batch.codes[i].copy(),
                   energy=p.energy / 100, max_energy=p.max_energy / 100, age=p.age,
                   heading=DIRECTION_NAMES[int(batch.heading[i]) % 4], food_here=bool(p.food_here),
                   persona=batch.personas[i], memories=tuple(p.memories), summaries=tuple(p.summaries),
                   places=p.places, plans=plans, directions=tuple(ways), decides=b.decides, group=self.group,
                   messages=msgs, shown=tuple(p.shown))

    # ------------------------------------------------------------ worker side

    def _start_worker(self) -> threading.Thread:
        t = threading.Thread(target=self._work, name=f"mirofish-brain-{self.name}", daemon=True)
        t.start()
        return t

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                if not self._one(job):
                    return  # the watchdog replaced this worker
            except BaseException as exc:  # noqa: BLE001 — never a dead worker and ticks left waiting
                with self._lock:
                    if job in self._running:
                        self._running.remove(job)
                self._fall_back(job, "brain_garbage", f"its answer could not be read ({_describe(exc)})")

    def _one(self, job: _Job) -> bool:
        """Ask the brain for ``job`` and deliver its answer or the fallback; False when the
        watchdog gave up on it meanwhile (this worker was replaced)."""
        with self._lock:
            if job.answered:
                return True
            job.started = time.monotonic()
            self._running.append(job)
        self._local.job = job
        out: Any = None
        error: tuple[str, str] | None = None
        try:
            out = self.brain.decide(job.ask)
        except ModelFailed as exc:
            error = (str(exc.reason) if isinstance(exc.reason, str) else "error", one_line(exc))
        except BaseException as exc:  # noqa: BLE001 — failure is data, SystemExit and the like included
            error = ("brain_raised", f"raised {_describe(exc)}")
        with self._lock:
            if job.answered:  # the watchdog gave up on it: a late answer
                self.late += 1
                return False
            self._running.remove(job)
            if error is None:
                self._streak = 0
        if error is not None:
            with self._lock:
                self._failed()
            self._fall_back(job, *error)
        else:
            self._deliver(job, out)
        return True

    def _failed(self) -> None:
        """A raise or a hang (under the lock): open the breaker after ``breaker_failures`` in a row."""
        self._streak += 1
        if self._streak >= self.cfg.brain.breaker_failures:
            self._open_until = time.monotonic() + self.cfg.brain.breaker_cooldown_s
            self._streak = self.cfg.brain.breaker_failures - 1  # half-open: one more failure reopens

    def _drain(self, reason: str) -> None:
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is None:
                self._jobs.put(None)
                return
            self._fall_back(job, reason)

    def _deliver(self, job: _Job, out: Any) -> None:
        text, detail = _reply_text(out, self.cfg.brain.max_reply_bytes)
        ask, batch = job.ask, job.batch
        if text is None:
            self._fall_back(job, "brain_garbage", detail)
            return
        reply, read = judge_reply(text, ask.view, self.plans, ask.food_here, ask.places, batch.plans, ask.shown)
        if read != "ok" or reply is None:
            reason = "brain_garbage" if read.startswith("reply_") else read
            self._fall_back(job, reason, f"returned {text[:60]!r} ({read})")
            return
        if isinstance(reply, PlanReply):
            goal, param, horizon = reply.plan(batch.max_energy, batch.plans)
            plan: dict[str, Any] = {"actions": None, "goals": [goal], "params": [param], "horizons": [horizon]}
        else:
            plan = {"actions": np.array([Action.parse(reply.action)], np.int8)}
        with self._lock:
            if job.answered:
                self.late += 1
                return
            job.answered = True
            self.decisions += 1
            self.brain_decisions += 1
        tokens = sum(int(c["prompt_tokens"]) + int(c["completion_tokens"]) for c in job.calls)
        self.results.put(DecisionBatch(
            tick=batch.tick, fish=np.array([ask.fish]), tier=np.array([TIER_INDEX["user"]], np.int8),
            tokens=np.array([tokens]), thoughts=[reply.thought], calls=job.calls or None, **plan))

    def _fall_back(self, job: _Job, reason: str, detail: str = "") -> None:
        with self._lock:
            if job.answered:
                return
            job.answered = True
            self.fallbacks[reason] += 1
            self.decisions += 1
            first = reason not in self._warned
            self._warned.add(reason)
        if first and reason != "breaker_open":
            more = "" if reason == "brain_hung" and self._dead else "; further ones are counted, not shown"
            self._warn(f"brain {self.name}: fish {job.ask.fish} at tick {job.ask.tick}: {one_line(detail or reason)}; "
                       f"the instinct decides instead (counted as {reason}{more})")
        decided = self.fallback.decide(job.batch.subset(np.array([job.i])))
        decided.status = np.full(1, status_code(reason), np.int8)
        decided.meta = {"reason": reason}
        decided.calls = job.calls or None
        self.results.put(decided)

    # ------------------------------------------------------------ models, for the brain

    def chat(self, msgs: list[dict[str, Any]], schema: dict[str, Any] | None, max_tokens: int) -> str:
        job: _Job | None = getattr(self._local, "job", None)
        b = self.cfg.brain
        eps = b.small.endpoints or b.large.endpoints
        if not eps:
            raise ModelFailed("no_server", "chat() needs a model server: give --base-url and --model "
                                           "(or the group's base_url and model)")
        ep = eps[0]
        with self._lock:
            if self._client is None and not self.offline:
                from .client import ModelClient  # imports openai; only a brain that chats pays for it

                brain = b.model_copy(update={"api_key_env": ep.api_key_env or b.api_key_env})
                self._client = ModelClient(ep.base_url, ep.model, timeout_s=b.request_timeout_s, seed=self.cfg.seed,
                                           brain=brain, max_concurrency=ep.max_concurrency or 4)
        formats = None
        if schema is not None:
            from .transport import response_formats

            formats = response_formats(schema)
        key = cache_key(ep.model, msgs, schema_of(formats), max_tokens, b.temperature, b.top_p)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            text, p, c, err, trace = hit["reply"], 0, 0, None, {"model": hit.get("model") or ep.model}
        elif self.offline:
            raise ModelFailed("no_server", "chat(): no model server was given for this fork (give --base-url and "
                                           "--model); only the recorded replies answer")
        else:
            trace = {}
            got = self._client.complete(msgs, schema, max_tokens, trace=trace)
            text, err = got["text"], got["error"]
            c = int(got.get("completion_tokens") or 0)
            p = int(got["tokens"]) - c
            if err is None and self.cache is not None:
                self.cache.put(key, text, p, c, ep.model)
        with self._lock:
            self.calls += 1
            self.tokens += p + c
        if job is not None:
            trace.update(prompt_tokens=p, completion_tokens=c)
            job.calls.append(exchange(tick=job.ask.tick, fish=job.ask.fish, kind="decision", model=ep.model,
                                      msgs=msgs, formats=formats, max_tokens=max_tokens, trace=trace, reply=text,
                                      read="ok" if err is None else err, tier="user", view=job.ask.view,
                                      cached=hit is not None, temperature=b.temperature, top_p=b.top_p,
                                      group=self.group))
        if err is not None or text is None:
            raise ModelFailed(err or "reply_empty", f"the model answered nothing ({err or 'empty reply'})")
        return str(text)


class _NotPlain(ValueError):
    pass


def _plain(value: Any, depth: int, budget: list[int]) -> Any:
    """``value`` as plain JSON data (numpy scalars as Python numbers), or :class:`_NotPlain` with
    why: only exact dicts with text keys, lists and tuples, text, whole and finite numbers, bools
    and None, at most :data:`MAX_DEPTH` deep and :data:`MAX_ITEMS` items — checked before any
    encoding, so nothing a brain returns can raise inside ``json.dumps``."""
    if depth > MAX_DEPTH:
        raise _NotPlain(f"nested deeper than {MAX_DEPTH}")
    budget[0] -= 1
    if budget[0] < 0:
        raise _NotPlain(f"more than {MAX_ITEMS} items")
    t = type(value)
    if value is None or t in (str, bool, int):
        return value
    if t is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise _NotPlain("a number that is not finite")
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):  # numpy scalars read as Python numbers
        return _plain(value.item(), depth, budget)
    if t is dict:
        out = {}
        for k, v in list(value.items()):
            if type(k) is not str:
                raise _NotPlain(f"a key of type {type(k).__name__}")
            out[k] = _plain(v, depth + 1, budget)
        return out
    if t in (list, tuple):
        return [_plain(v, depth + 1, budget) for v in list(value)]
    raise _NotPlain(f"a value of type {t.__name__}")


def _reply_text(out: Any, limit: int = 262_144) -> tuple[str | None, str]:
    """A brain's answer as reply text (None: not a decision, with why). Validated before any
    encoding (types, depth, size): a dict subclass, a numpy array, an object that raises when
    read, a 30 MB thought are each a counted ``brain_garbage``, never a dead worker."""
    if inspect.iscoroutine(out) or inspect.isgenerator(out):  # an async decide: never awaited, closed here
        out.close()
        return None, f"returned a {type(out).__name__} (decide must be a plain function, not async)"
    try:
        if type(out) is Decision or isinstance(out, Decision):
            data = {("from" if f == "away_from" else f): getattr(out, f) for f in Decision.__dataclass_fields__}
            data = {k: v for k, v in data.items() if v is not None}
        elif type(out) is dict:
            data = out
        elif isinstance(out, dict):
            return None, f"returned a {type(out).__name__} (a dict subclass), not a plain dict"
        elif type(out) is str:
            if len(out) > limit:
                return None, f"returned {len(out):,} characters (more than {limit:,})"
            return out, ""
        else:
            return None, f"returned {type(out).__name__}, not a Decision, a dict or a JSON string"
        text = json.dumps(_plain(data, 0, [MAX_ITEMS]))
    except _NotPlain as why:
        return None, f"returned a decision holding {why}"
    except BaseException as exc:  # noqa: BLE001 — a user's object that raises when read
        return None, f"returned a decision that cannot be read ({_describe(exc)})"
    if len(text) > limit:
        return None, f"returned {len(text):,} characters (more than {limit:,})"
    return text, ""
