"""A kit for plug-in authors: does my brain, scene, metric or plan type keep MiroFish's contract?

As PettingZoo ships ``parallel_api_test`` for an environment, MiroFish ships one check per kind
of plug-in (docs/extending.md, "Check your plug-in"):

* :func:`check_brain` — your own brain (``FILE.py:NAME``, ``MODULE:NAME``, an entry point name,
  or the class, object or function itself);
* :func:`check_scene` — a scene of the registry (its name, ``"module:SPEC"``, or the
  :class:`~mirofish.scenes.registry.SceneSpec` itself);
* :func:`check_metric` — a metric (its key, ``"module:ATTR"``, or the
  :class:`~mirofish.observe.metrics.Metric` itself);
* :func:`check_plan_type` — a plan type of the running table (its name).

Each runs the plug-in through the paths a user takes — the command line (in this process,
:func:`mirofish.cli.main` with its arguments) and the session API: a short recorded run, its
replay compared by state hash, a second run of the same seed, a fork, an export of its tables,
and bad input that must come back as one line and exit code 2, never a traceback. Nothing of
MiroFish is stubbed (a metric or scene not installed is added to its table for the check's
duration, as its entry point would add it): a check that passes means a user's run, replay,
fork and export work.

When something is missing or broken the check raises :class:`CheckFailed` (an
``AssertionError``, so a bare ``pytest`` test reports it) whose message is one line naming the
check, the plug-in and what is wrong::

    check_brain: tests/clock_brain.py:ClockBrain: a second run of seed 3 differs from the first
    at tick 1 (state hash 5f90… vs 7df2…): its decisions depend on more than the ask and the seed
    (the clock, an unseeded random, state kept between runs?)

and otherwise returns a :class:`Checked` listing what it ran. Each check takes a few seconds
(a 60-tick tank of 12 fish); the files it writes go to a temporary folder (``workdir`` keeps
them). In a test::

    from mirofish.testing import check_brain

    def test_my_brain_keeps_the_contract():
        check_brain("mybrains/cautious.py:Cautious")

Importing this module is cheap: it loads the rest of MiroFish only when a check runs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
import sys
import tempfile
import types
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CheckFailed", "Checked", "check_brain", "check_metric", "check_plan_type", "check_scene"]

TICKS = 60  # a check's run: ticks (aquarium) or turns (a turn-by-turn scene)
FISH = 12
SEED = 3


class CheckFailed(AssertionError):
    """A plug-in that breaks MiroFish's contract. ``str()`` is one line: ``"{check}: {subject}:
    {problem}"``; the parts are kept as attributes."""

    def __init__(self, check: str, subject: str, problem: str):
        self.check, self.subject, self.problem = check, subject, _line(problem)
        super().__init__(f"{check}: {subject}: {self.problem}")


@dataclass(frozen=True)
class Checked:
    """A check that passed: what it checked (``subject``) and each step it ran, in order."""

    check: str
    subject: str
    steps: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.check}: {self.subject}: ok ({'; '.join(self.steps)})"


# ---------------------------------------------------------------- the shared machinery


def _line(text: Any, limit: int = 600) -> str:
    """``text`` on one line (newlines folded), at most ``limit`` characters."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


@dataclass
class _Done:
    """One command run in this process: its exit code, output, errors and last JSON line."""

    argv: list[str]
    code: int
    out: str
    err: str

    @property
    def data(self) -> dict[str, Any] | None:
        for line in reversed(self.out.splitlines()):
            if line.startswith("{"):
                try:
                    got = json.loads(line)
                except json.JSONDecodeError:
                    return None
                return got if isinstance(got, dict) else None
        return None

    def said(self) -> str:
        """What it printed on stderr, as one line (its last line when there are several)."""
        lines = [ln for ln in self.err.splitlines() if ln.strip()]
        return _line(lines[-1]) if lines else f"exit code {self.code} and nothing on stderr"


@dataclass
class _Check:
    """One check under way: its name, subject, working folder and the steps done."""

    name: str
    subject: str
    work: Path
    steps: list[str] = field(default_factory=list)

    def fail(self, problem: str) -> CheckFailed:
        return CheckFailed(self.name, self.subject, problem)

    def done(self, step: str) -> None:
        self.steps.append(step)

    def result(self) -> Checked:
        return Checked(self.name, self.subject, tuple(self.steps))

    def path(self, name: str) -> str:
        return str(self.work / name)

    def cli(self, *argv: Any) -> _Done:
        """``mirofish ARGV…`` in this process, as a user types it (stdout and stderr captured)."""
        from .cli import main

        args = [str(a) for a in argv]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(args)
        return _Done(args, int(code), out.getvalue(), err.getvalue())

    def ok(self, what: str, *argv: Any) -> dict[str, Any]:
        """The command's JSON line; CheckFailed naming ``what`` when it fails or prints a traceback."""
        done = self.cli(*argv)
        if done.code != 0:
            raise self.fail(f"{what} failed (exit code {done.code}): {done.said()}")
        if "Traceback" in done.err:
            raise self.fail(f"{what} printed a traceback: {done.said()}")
        data = done.data
        if data is None:
            raise self.fail(f"{what} printed no JSON line (`mirofish {' '.join(done.argv[:2])} …`)")
        return data

    def one_line(self, what: str, *argv: Any) -> str:
        """Bad input: it must fail with exit code 2 and exactly one line on stderr, no traceback."""
        done = self.cli(*argv)
        lines = [ln for ln in done.err.splitlines() if ln.strip()]
        if done.code == 0:
            raise self.fail(f"{what} was accepted (exit code 0); it should be refused in one line")
        if "Traceback" in done.err:
            raise self.fail(f"{what} ended in a traceback, not one line: {done.said()}")
        if done.code != 2 or len(lines) != 1:
            raise self.fail(f"{what} gave exit code {done.code} and {len(lines)} lines on stderr "
                            f"(one line and exit code 2 expected): {done.said()}")
        return lines[0]


@contextlib.contextmanager
def _work(name: str, subject: str, workdir: str | Path | None) -> Iterator[_Check]:
    if workdir is not None:  # kept: a folder of its own in it for each check
        folder = Path(workdir) / f"{name}-{uuid.uuid4().hex[:8]}"
        folder.mkdir(parents=True)
        yield _Check(name, subject, folder)
        return
    with tempfile.TemporaryDirectory(prefix="mirofish-check-") as tmp:
        yield _Check(name, subject, Path(tmp))


@contextlib.contextmanager
def _module_with(obj: Any) -> Iterator[str]:
    """``obj`` as ``MODULE:NAME`` (a module made for the check, importable while it runs): how
    an object that is not in a file reaches ``--brain``."""
    mod_name = f"mirofish_check_{uuid.uuid4().hex[:12]}"
    module = types.ModuleType(mod_name)
    module.brain = obj  # type: ignore[attr-defined]
    sys.modules[mod_name] = module
    try:
        yield f"{mod_name}:brain"
    finally:
        sys.modules.pop(mod_name, None)


def _read_csv(path: str | Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _first_other_tick(a: str, b: str, ticks: int) -> tuple[int, str, str] | None:
    """The first tick after which two recordings (kept with ``record.hash_every = 1``) hold
    different state hashes: (tick, hash of a, hash of b), None when they agree throughout."""
    from .observe.recording import Recording

    ra, rb = Recording(a), Recording(b)
    try:
        for t in range(max(ra.first_tick, rb.first_tick) + 1, min(ra.last_tick, rb.last_tick, ticks) + 1):
            ha, hb = ra.hash_after(t), rb.hash_after(t)
            if ha is not None and hb is not None and ha != hb:
                return t, ha, hb
        return None
    finally:
        ra.close()
        rb.close()


# what a run of the aquarium is checked with: every tick's state hash kept
_HASH_EVERY_TICK = ("--set", "record.hash_every=1")


def _aquarium_round(c: _Check, extra: Sequence[str], ticks: int, fish: int, seed: int, why_differs: str,
                    fork_extra: Sequence[str] = (),
                    first_look: Callable[[_Done], None] | None = None) -> tuple[dict[str, Any], str]:
    """Record a run, replay it (every tick re-simulated and checked), run it again with the same
    seed (every tick's hash compared), fork it twice, replay the fork, export its tables.
    ``first_look`` reads the first run before it is judged (a brain's fallbacks). Returns the
    first run's JSON and its recording."""
    rec, again = c.path("run.mirofish"), c.path("again.mirofish")
    common = ["--headless", "--ticks", ticks, "--fish", fish, "--seed", seed, *_HASH_EVERY_TICK, *extra]
    done = c.cli("live", *common, "--record", rec)
    if first_look is not None:
        first_look(done)
    if done.code != 0:
        raise c.fail(f"a recorded run failed (exit code {done.code}): {done.said()}")
    if "Traceback" in done.err:
        raise c.fail(f"a recorded run printed a traceback: {done.said()}")
    if done.data is None:
        raise c.fail("a recorded run printed no JSON line")
    first = done.data
    c.done(f"recorded {ticks} ticks (state hash {first['final_state_hash'][:8]})")
    replayed = c.ok("replaying its recording", "replay", rec, "--headless", "--verify")
    if replayed.get("state_hash") != first["final_state_hash"]:
        raise c.fail(f"its replay ends in state hash {replayed.get('state_hash')}, the live run in "
                     f"{first['final_state_hash']}")
    c.done(f"replay --verify: {replayed.get('verified_ticks')} ticks, the same hash")
    second = c.ok("a second run of the same seed", "live", *common, "--record", again)
    other = _first_other_tick(rec, again, ticks)
    if other is not None or second["final_state_hash"] != first["final_state_hash"]:
        t, ha, hb = other or (ticks, first["final_state_hash"], second["final_state_hash"])
        raise c.fail(f"a second run of seed {seed} differs from the first at tick {t} (state hash {ha[:12]} vs "
                     f"{hb[:12]}): {why_differs}")
    c.done("a second run of the same seed: the same hash at every tick")
    at = max(1, ticks // 2)
    fork_rec, fork_again = c.path("fork.mirofish"), c.path("fork-again.mirofish")
    fork_args = ["fork", rec, "--at", at, "--fish", 0, "--plan", "rest 100 20", "--ticks", max(10, ticks // 2),
                 *fork_extra]
    forked = c.ok("a fork of its recording", *fork_args, "--record", fork_rec)
    forked_again = c.ok("the same fork again", *fork_args, "--record", fork_again)
    if forked["final_state_hash"] != forked_again["final_state_hash"]:
        diverged = _first_other_tick(fork_rec, fork_again, 10**9)
        where = f" at tick {diverged[0]}" if diverged else ""
        raise c.fail(f"the same fork (tick {at}, fish 0, rest 100 20) run twice differs{where} (state hash "
                     f"{forked['final_state_hash'][:12]} vs {forked_again['final_state_hash'][:12]}): {why_differs}")
    fork_replay = c.ok("replaying its fork's recording", "replay", fork_rec, "--headless", "--verify")
    if fork_replay.get("state_hash") != forked["final_state_hash"]:
        raise c.fail(f"its fork's recording replays to state hash {fork_replay.get('state_hash')}, the fork ran "
                     f"to {forked['final_state_hash']}")
    c.done(f"fork at tick {at} (twice the same; its recording replays)")
    tables = c.ok("exporting its tables", "export", rec, "--tables", c.path("tables"), "--format", "csv")
    rows = {k: v.get("rows", 0) for k, v in tables.get("tables", {}).items()}
    if not rows.get("decisions"):
        raise c.fail(f"its export holds no decision (tables: {rows})")
    c.done(f"export --tables: {rows.get('decisions')} decisions")
    return first, rec


# ---------------------------------------------------------------- brains


_QUESTIONS = """
[[question]]
id = "safe"
kind = "likert"
text = "How safe do you feel right now?"
labels = ["not at all", "a little", "somewhat", "quite", "very"]

[[question]]
id = "next"
kind = "choice"
text = "Where will you swim next?"
options = ["north", "south", "west", "east", "stay"]

[[question]]
id = "energy"
kind = "number"
text = "How much energy do you have left, from 0 to 100?"
min = 0
max = 100

[[question]]
id = "mind"
kind = "text"
text = "What is on your mind?"
"""


def check_brain(brain: Any, *, ticks: int = TICKS, fish: int = FISH, seed: int = SEED,
                base_url: str | None = None, model: str | None = None, test_server: bool = False,
                settings: Sequence[str] = (), max_fallback_rate: float = 0.1,
                workdir: str | Path | None = None) -> Checked:
    """Check a user brain (docs/brains.md) the way a user runs it:

    1. ``live --headless --brain SPEC --record R``: it loads, decides (at most
       ``max_fallback_rate`` of the decisions fall back to the instinct — a brain that raises,
       hangs or answers garbage is named with the first reason), nothing on stderr is a traceback;
    2. ``replay R --headless --verify``: the recording replays to the live run's state hash;
    3. the same run again: every tick's state hash is the first run's (a brain whose decisions
       read the clock or an unseeded random fails here, naming the first tick that differs);
    4. ``fork R --at T --fish 0 --plan "rest 100 20" --brain SPEC``, twice: the same branch both
       times, and the fork's recording replays;
    5. ``export R --tables``: the decisions are there;
    6. with an ``answer(question, ask)`` method: ``survey R --brain SPEC`` — every answer read;
    7. bad input — a spec naming something its module lacks, a fork to a plan that does not
       exist — is one line and exit code 2.

    ``brain``: a spec (``FILE.py:NAME``, ``MODULE:NAME``, an installed entry point's name) or
    the class, object or function itself. A brain that calls ``ctx.chat`` needs a model server:
    ``base_url`` and ``model``, or ``test_server=True`` (the bundled scripted server,
    :mod:`mirofish.brains.testserver`). ``settings``: ``SECTION.KEY=VALUE`` overrides for every run.
    """
    label = brain if isinstance(brain, str) else _name_of(brain)
    with contextlib.ExitStack() as stack:
        spec = brain if isinstance(brain, str) else stack.enter_context(_module_with(brain))
        c = stack.enter_context(_work("check_brain", label, workdir))
        if test_server:
            from .brains.testserver import TestServer

            server = stack.enter_context(TestServer())
            base_url, model = server.url, server.model
        model_args = ["--base-url", base_url, "--model", model] if base_url and model else []
        sets = [x for s in settings for x in ("--set", s)]
        _, rec = _brain_run(c, spec, model_args, sets, ticks, fish, seed, max_fallback_rate)
        _brain_survey(c, spec, rec, ticks, model_args)
        _brain_bad_input(c, spec, rec, ticks)
        return c.result()


def _name_of(obj: Any) -> str:
    return str(getattr(obj, "__qualname__", None) or type(obj).__qualname__)


def _brain_run(c: _Check, spec: str, model_args: list[str], sets: list[str], ticks: int, fish: int, seed: int,
               max_fallback_rate: float) -> tuple[dict[str, Any], str]:
    why = ("its decisions depend on more than the ask and the seed (the clock, an unseeded random, "
           "state kept between runs?)")

    def decided(done: _Done) -> None:
        if done.code != 0:
            raise c.fail(f"a run with it failed (exit code {done.code}): {done.said()}")
        b = (done.data or {}).get("brain", {})
        decisions, mine = int(b.get("decisions", 0)), int(b.get("brain_decisions", 0))
        fallbacks: dict[str, int] = b.get("fallbacks", {}) or {}
        if "no_server" in fallbacks:
            raise c.fail("its ctx.chat() needs a model server: pass base_url= and model= (or test_server=True for "
                         "the bundled scripted server)")
        if decisions == 0:
            raise c.fail(f"it was never asked for a decision in {ticks} ticks")
        if fallbacks and (decisions - mine) / decisions > max_fallback_rate:
            causes = {k: v for k, v in fallbacks.items() if k != "breaker_open"} or fallbacks  # the breaker follows
            reason, n = max(causes.items(), key=lambda kv: kv[1])
            warned = [ln for ln in done.err.splitlines() if f"counted as {reason}" in ln]
            detail = f" — {_line(warned[0].removeprefix('mirofish: warning: '))}" if warned else ""
            others = "".join(f", {v} {k}" for k, v in sorted(fallbacks.items(), key=lambda kv: -kv[1]) if k != reason)
            raise c.fail(f"{decisions - mine} of its {decisions} decisions fell back to the instinct "
                         f"({n} {reason}{others}){detail}")
        c.done(f"{mine} of {decisions} decisions its own")

    first, rec = _aquarium_round(c, [*model_args, *sets, "--brain", spec], ticks, fish, seed, why,
                                 ("--brain", spec, *model_args), first_look=decided)
    mine = int(first.get("brain", {}).get("brain_decisions", 0))
    kept = sum(1 for d in _read_csv(c.work / "tables" / "decisions.csv") if d["tier"] == "user")
    if kept != mine:
        raise c.fail(f"its run made {mine} decisions of its own, its export holds {kept} of tier user")
    return first, rec


def _brain_survey(c: _Check, spec: str, rec: str, ticks: int, model_args: list[str]) -> None:
    questions = Path(c.path("questions.toml"))
    questions.write_text(_QUESTIONS)
    done = c.cli("survey", rec, "--at", max(1, ticks // 2), "--questions", questions, "--fish", "0,1,2",
                 "--brain", spec, "--json", *model_args)
    if done.code != 0 or "Traceback" in done.err:
        raise c.fail(f"a survey of its run failed (exit code {done.code}): {done.said()}")
    reasons: dict[str, int] = (done.data or {}).get("reasons", {})
    if set(reasons) <= {"no_answer_method"}:
        c.done("no answer method: no survey")
        return
    bad = {k: v for k, v in reasons.items() if k != "ok"}
    if bad:
        reason, n = max(bad.items(), key=lambda kv: kv[1])
        raise c.fail(f"its answer(question, ask) failed {sum(bad.values())} of {sum(reasons.values())} survey "
                     f"questions ({n} {reason})")
    c.done(f"survey: {reasons.get('ok', 0)} answers read")


def _brain_bad_input(c: _Check, spec: str, rec: str, ticks: int) -> None:
    where, sep, _ = spec.rpartition(":")
    if sep:
        c.one_line("a spec naming something its module lacks", "live", "--headless", "--ticks", 5,
                   "--brain", f"{where}:no_such_brain_here")
    c.one_line("a fork to a plan that does not exist", "fork", rec, "--at", max(1, ticks // 2), "--fish", 0,
               "--plan", "fly_to_the_moon 5", "--ticks", 5, "--brain", spec)
    c.done("bad input: one line each")


# ---------------------------------------------------------------- scenes


def check_scene(scene: Any, *, length: int = TICKS, seed: int = SEED, run_args: Sequence[str] | None = None,
                fork_args: Sequence[str] | None = None, replay_args: Sequence[str] = (),
                workdir: str | Path | None = None) -> Checked:
    """Check a scene of the registry (docs/scenes.md) through its command, ``replay``, ``fork``
    and ``export``, as a user runs them:

    1. it is a :class:`~mirofish.scenes.registry.SceneSpec` whose name no other scene has, with
       the parts its recordings need (``replay`` and ``export`` when it records);
    2. its command with ``--record R``: one JSON line;
    3. ``replay R``: played again, every turn (or tick) checked — a scene whose step is not
       determined by its seed fails here, with the turn it diverged at;
    4. the same run again: the same turns (the first turn that differs is named);
    5. ``fork R …`` (a turn scene: ``--at-turn N --change KEY=VALUE``, its first setting set to
       its default), when it has a fork: the turns before the fork are the recorded ones, and the
       fork's recording replays;
    6. ``export R --tables DIR``: a table with a row per turn;
    7. its sweep hooks: a run's summary holds every figure they name;
    8. bad input — an unknown flag, a fork past the end, a damaged recording — is one line
       and exit code 2.

    ``scene``: a scene's name (the built-in ones and installed plug-ins), ``"module:ATTR"``, or
    the spec itself (registered for the check's duration if it is not installed). A scene made
    with :class:`~mirofish.scenes.turnscene.TurnScene`, and the built-in scenes, need nothing more; for
    another scene give ``run_args`` (its command's flags for a short run, without ``--record``)
    and, if it forks, ``fork_args`` (the flags of a fork, without the recording and ``--record``);
    ``replay_args`` are added to its ``replay`` (e.g. ``("--headless",)``).
    """
    from .scenes.registry import SceneError, SceneSpec, resolve

    subject = scene if isinstance(scene, str) else getattr(scene, "name", type(scene).__name__)
    with _work("check_scene", str(subject), workdir) as c:
        try:
            spec = _scene_spec(scene, resolve)
        except SceneError as exc:
            raise c.fail(str(exc)) from None
        if not isinstance(spec, SceneSpec):
            raise c.fail(f"is a {type(spec).__name__}, not a mirofish.scenes.registry.SceneSpec")
        c.subject = spec.name
        with _registered(c, spec):
            built_in = any(s is spec for s in _built_in_specs())
            recipe = _recipe(spec.name, seed) if built_in and run_args is None else {}
            run_args = recipe.get("run_args", run_args)
            replay_args = recipe.get("replay_args", replay_args)
            if built_in and spec.name == "aquarium" and run_args is None:
                _aquarium_round(c, [], length, FISH, seed, "the scene is not determined by its seed")
                c.one_line("an unknown flag", spec.command_name, "--no-such-flag")
                c.done("bad input: one line")
            else:
                _turn_scene(c, spec, length, seed, run_args, fork_args, replay_args)
        return c.result()


def _recipe(name: str, seed: int) -> dict[str, list[str]]:
    """How the check runs a built-in scene that is not a turn scene (a plug-in's: ``run_args=``, …)."""
    return {"negotiation": {"run_args": ["--headless", "--sessions", "3", "--seed", str(seed)],
                            "replay_args": ["--headless"]},
            "referential": {"run_args": ["--headless", "--rounds", "40", "--seed", str(seed)],
                            "replay_args": ["--headless"]},
            "handoff": {"run_args": ["--headless", "--tasks", "5", "--seed", str(seed)]}}.get(name, {})


def _built_in_specs() -> list[Any]:
    from .scenes.registry import BUILT_IN, resolve

    return [resolve(ref, "built-in scene") for ref in BUILT_IN]


def _scene_spec(scene: Any, resolve: Callable[[str, str], Any]) -> Any:
    from .scenes.registry import scene as by_name

    if not isinstance(scene, str):
        return scene
    if ":" in scene:
        return resolve(scene, "scene")
    return by_name(scene)


@contextlib.contextmanager
def _registered(c: _Check, spec: Any) -> Iterator[None]:
    """``spec`` in the scene registry while the check runs (an installed one already is)."""
    from .scenes import registry

    known = registry.scenes()
    if any(s is spec for s in known):
        yield
        return
    clash = registry._clash(spec, known, spec.name)
    if clash:
        raise c.fail(clash.removeprefix(f"scene plug-in {spec.name}").lstrip(": "))
    loaded = registry._loaded
    assert loaded is not None
    loaded.append(spec)
    try:
        yield
    finally:
        for i, s in enumerate(loaded):
            if s is spec:
                del loaded[i]
                break


def _turn_model(spec: Any) -> Any:
    """The :class:`TurnScene` behind a spec made by it, else None."""
    from .scenes.turnscene import TurnScene

    owner = next((o for o in (getattr(spec.run, "__self__", None), getattr(spec.replay, "__self__", None))
                  if o is not None), None)
    return owner if isinstance(owner, TurnScene) else None


def _turn_scene(c: _Check, spec: Any, length: int, seed: int, run_args: Sequence[str] | None,
                fork_args: Sequence[str] | None, replay_args: Sequence[str]) -> None:
    from .cli import fronts
    from .config import toml_value

    if spec.records:
        missing = [p for p in ("replay", "export") if not fronts.has(spec, p)]
        if missing:
            raise c.fail(f"records {spec.records} but has no {' and no '.join(missing)} part: "
                         + ", ".join(f"`{p} REC` of its recordings fails" for p in missing))
    ts = _turn_model(spec)
    if run_args is None and ts is None:
        raise c.fail("give run_args= (its command's flags for a short run, without --record): it is not a "
                     "TurnScene, so the check cannot know them")
    args = list(run_args) if run_args is not None else ["--turns", length, "--seed", seed]
    rec, again = c.path("run.db"), c.path("again.db")
    cmd = spec.command_name
    c.ok(f"its command ({cmd})", cmd, *args, *(["--record", rec] if spec.records else []))
    c.done(f"{cmd}: one JSON line")
    if not spec.records:
        c.one_line("an unknown flag", cmd, "--no-such-flag")
        c.done("bad input: one line (it keeps no recording: nothing to replay, fork or export)")
        return
    c.ok("replaying its recording", "replay", rec, *replay_args)
    c.done("replay: every turn checked")
    c.ok("a second run of the same seed", cmd, *args, "--record", again)
    _same_turns(c, ts, rec, again, seed)
    c.done("a second run of the same seed: the same turns")
    if fork_args is None and ts is not None and ts.defaults:
        key, value = next(iter(ts.defaults.items()))
        fork_args = ["--at-turn", str(max(1, length // 2)), "--change", f"{key}={toml_value(value)}"]
    if not fronts.has(spec, "fork"):
        c.done("no fork part: its recordings do not fork")
    elif fork_args is None:
        c.done("fork not checked (give fork_args=)")
    else:
        fork_rec = c.path("fork.db")
        forked = c.ok("a fork of its recording", "fork", rec, *fork_args, "--record", fork_rec)
        at = _at_turn(fork_args)
        differs = forked.get("first_different_turn")
        if at is not None and isinstance(differs, int) and differs < at:
            raise c.fail(f"its fork at turn {at} changed turn {differs}, before the fork")
        c.ok("replaying its fork's recording", "replay", fork_rec, *replay_args)
        c.done(f"fork {' '.join(map(str, fork_args))}: its recording replays")
    tables = c.ok("exporting its tables", "export", rec, "--tables", c.path("tables"), "--format", "csv")
    rows = {k: v.get("rows", 0) for k, v in tables.get("tables", {}).items()}
    if not any(rows.values()):
        raise c.fail(f"its export holds no row (tables: {rows or 'none'})")
    c.done(f"export --tables: {rows}")
    if spec.has("sweep"):
        _sweep_hooks(c, spec, length, seed)
    c.one_line("an unknown flag", cmd, "--no-such-flag")
    if ts is not None:
        key = next(iter(ts.defaults), "x")
        c.one_line("a fork past the last turn", "fork", rec, "--at-turn", 10**6, "--change",
                   f"{key}={toml_value(ts.defaults.get(key, 0))}")
        c.one_line("an unknown setting", cmd, "--turns", 2, "--set", "no_such_setting_here=1")
    damaged = Path(c.path("damaged.db"))
    damaged.write_bytes(Path(rec).read_bytes()[:512] + b"\0" * 512)
    c.one_line("a damaged recording", "replay", damaged)
    c.done("bad input: one line each")


def _at_turn(fork_args: Sequence[Any]) -> int | None:
    args = [str(a) for a in fork_args]
    if "--at-turn" in args and args.index("--at-turn") + 1 < len(args):
        try:
            return int(args[args.index("--at-turn") + 1])
        except ValueError:
            return None
    return None


def _same_turns(c: _Check, ts: Any, a: str, b: str, seed: int) -> None:
    why = "its step depends on more than its seed and settings (the clock, an unseeded random?)"
    if ts is not None:
        _, rows_a = ts.open(a)
        _, rows_b = ts.open(b)
        for t, (x, y) in enumerate(zip(rows_a, rows_b)):
            if x != y:
                raise c.fail(f"a second run of seed {seed} differs from the first at turn {t} "
                             f"({_line(json.dumps(x), 80)} vs {_line(json.dumps(y), 80)}): {why}")
        if len(rows_a) != len(rows_b):
            raise c.fail(f"a second run of seed {seed} played {len(rows_b)} turns, the first {len(rows_a)}")
        return
    ta, tb = _tables_of(a), _tables_of(b)
    for table in sorted(set(ta) | set(tb)):
        rows_a, rows_b = ta.get(table, []), tb.get(table, [])
        for n, (x, y) in enumerate(zip(rows_a, rows_b)):
            if x != y:
                raise c.fail(f"a second run of seed {seed} differs from the first in its recording's table {table}, "
                             f"row {n}: {why}")
        if len(rows_a) != len(rows_b):
            raise c.fail(f"a second run of seed {seed} recorded {len(rows_b)} rows of {table}, the first "
                         f"{len(rows_a)}: {why}")


def _tables_of(path: str) -> dict[str, list[Any]]:
    """Every table of a recording but its header (which says when it was made), row by row."""
    import sqlite3

    db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: db.execute(f'SELECT * FROM "{n}" ORDER BY rowid').fetchall() for n in names if n != "header"}
    finally:
        db.close()


def _sweep_hooks(c: _Check, spec: Any, length: int, seed: int) -> None:
    from .sweep.runs import flatten
    from .sweep.spec import RunTask

    hooks = spec.part("sweep")
    task = RunTask(spec.name, {}, seed, min(length, 30))
    why = hooks.check(task)
    if why is not None:
        raise c.fail(f"its sweep hooks refuse a run with no settings: {why}")
    summary = flatten(hooks.summarize(task, None))
    missing = [m for m in hooks.metrics if m not in summary]
    if missing:
        raise c.fail(f"its sweep hooks name figures its summary lacks: {', '.join(missing)} (it has "
                     f"{', '.join(sorted(summary)[:8])}…)")
    c.done(f"sweep hooks: a run's summary holds {', '.join(hooks.metrics) or 'its figures'}")


# ---------------------------------------------------------------- metrics


def check_metric(metric: Any, *, ticks: int = 200, fish: int = FISH, seed: int = SEED,
                 settings: Sequence[str] = (), workdir: str | Path | None = None) -> Checked:
    """Check a metric (docs/extending.md "A metric") as a user sees it:

    1. it is a :class:`~mirofish.observe.metrics.Metric` — a plug-in's of kind ``sample`` or
       ``window`` — whose key no other metric has (one not installed is added to the running
       table, as its entry point would add it, for the check's duration);
    2. ``live --headless --record R``: its key is in the JSON's ``metrics`` with finite
       ``current`` and ``mean``, and its ``compute`` never raised (a plug-in's that raises
       reads 0 with one warning: the check fails with that warning);
    3. the same run again: the same values (a metric reading the clock or an unseeded random
       fails here);
    4. the recording replayed (:class:`~mirofish.session.ReplaySession`, every tick from the
       first): its metrics give the live run's value;
    5. a sweep run (the aquarium's sweep hooks): its figure ``metrics.KEY.mean`` is in the
       summary a sweep reads;
    6. bad input — a tank whose fish were all taken out — is a number, not a raise.

    ``metric``: a key of the running table (built-in or installed), ``"module:ATTR"``, or the
    ``Metric`` itself. ``settings``: ``SECTION.KEY=VALUE`` for the runs (a metric of a group that
    only some tanks count gets what they need, ``observe.metrics.GROUP_SETTINGS``: ``territory``
    ``fish.places=3``, ``population`` a tank with species).
    """
    subject = metric if isinstance(metric, str) else str(getattr(metric, "key", type(metric).__name__))
    with _work("check_metric", subject, workdir) as c, _installed_metric(c, metric) as m:
        c.subject = m.key
        from .config import toml_value
        from .observe.metrics import GROUP_SETTINGS

        sets = [*settings, *(f"{k}={toml_value(v)}" for k, v in GROUP_SETTINGS.get(m.group, {}).items())]
        _metric_runs(c, m, ticks, fish, seed, sets)
        _metric_empty_tank(c, m, seed, sets)
        return c.result()


@contextlib.contextmanager
def _installed_metric(c: _Check, given: Any) -> Iterator[Any]:
    from .observe import metrics as mx
    from .scenes.registry import SceneError, resolve

    m = given
    if isinstance(given, str):
        if ":" in given:
            try:
                m = resolve(given, "metric")
            except SceneError as exc:
                raise c.fail(str(exc)) from None
        else:
            try:
                m = mx.metric(given)
            except KeyError:
                raise c.fail(f"no metric {given!r} in the running table (the installed plug-ins: "
                             f"{', '.join(x.key for x in mx.METRICS if x.plugin) or 'none'}"
                             f"{'; ' + '; '.join(mx.PLUGIN_PROBLEMS) if mx.PLUGIN_PROBLEMS else ''})") from None
    if not isinstance(m, mx.Metric):
        raise c.fail(f"is a {type(m).__name__}, not a mirofish.observe.metrics.Metric")
    here = next((x for x in mx.METRICS if x.key == m.key), None)
    if here is not None:
        if here is not m and here.compute is not m.compute:
            raise c.fail(f"its key {m.key!r} is taken by another metric ({here.plugin or 'built-in'}): a plug-in "
                         f"with it is left out")
        yield here
        return
    if m.kind == "tick":
        raise c.fail("is of kind tick: a plug-in's metric is a sample or window metric (docs/extending.md)")
    row = mx.Metric(**{**m.__dict__, "recorded": False, "plugin": "mirofish.testing"})
    table = mx.METRICS
    mx.METRICS = (*table, row)
    try:
        yield row
    finally:
        mx.METRICS = table


def _warning_of(m: Any, err: str) -> str | None:
    for ln in err.splitlines():
        if f"metric {m.key} " in ln and "failed" in ln:
            return _line(ln.removeprefix("mirofish: warning: "))
    return None


def _values(c: _Check, m: Any, data: dict[str, Any], what: str) -> tuple[float, float]:
    if m.kind == "tick":  # a figure of the whole run, at the top of the JSON
        value = data.get(m.key)
        got: Any = {"current": value, "mean": value} if m.key in data else None
    else:
        got = data.get("metrics", {}).get(m.key)
    if not isinstance(got, dict):
        raise c.fail(f"is not in {what}'s JSON (metrics: {', '.join(list(data.get('metrics', {}))[:6])}…)")
    cur, mean = got.get("current"), got.get("mean")
    for name, v in (("current", cur), ("mean", mean)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise c.fail(f"its {name} value in {what}'s JSON is {v!r}, not a finite number")
    return float(cur), float(mean)  # type: ignore[arg-type]


def _metric_runs(c: _Check, m: Any, ticks: int, fish: int, seed: int, sets: list[str]) -> None:
    from .config import parse_override
    from .observe import metrics as mx

    rec = c.path("run.mirofish")
    common = ["live", "--headless", "--ticks", ticks, "--fish", fish, "--seed", seed,
              *(x for s in sets for x in ("--set", s))]
    mx._WARNED.discard(m.key)
    done = c.cli(*common, "--record", rec)
    warned = _warning_of(m, done.err)
    if warned:
        raise c.fail(f"its compute raised in a {ticks}-tick run: {warned}")
    if done.code != 0 or done.data is None:
        raise c.fail(f"a run with it failed (exit code {done.code}): {done.said()}")
    cur, mean = _values(c, m, done.data, "a run")
    c.done(f"a {ticks}-tick run: {m.key} current {cur:g}, mean {mean:g}")
    mx._WARNED.discard(m.key)
    again = c.cli(*common)
    if again.code != 0 or again.data is None:
        raise c.fail(f"a second run with it failed (exit code {again.code}): {again.said()}")
    cur2, mean2 = _values(c, m, again.data, "a second run")
    if (cur2, mean2) != (cur, mean):
        raise c.fail(f"a second run of seed {seed} gives {m.key} mean {mean2:g} (current {cur2:g}), the first "
                     f"{mean:g} ({cur:g}): it reads more than the tank (the clock, an unseeded random?)")
    c.done("a second run of the same seed: the same values")
    from .session.replay import ReplaySession

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        mx._WARNED.discard(m.key)
        session = ReplaySession(rec)
        try:
            while session.step() is not None:  # every tick from the first (a seek starts at a keyframe)
                pass
            replayed = session.metrics.summary().get(m.key, {})
        finally:
            session.close()
    warned = _warning_of(m, err.getvalue())
    if warned:
        raise c.fail(f"its compute raised on the replay of a run: {warned}")
    if m.kind == "tick":
        replayed = {"current": cur, "mean": mean}  # kept in the recording's per-tick rows, not recomputed
    if (replayed.get("current"), replayed.get("mean")) != (cur, mean):
        raise c.fail(f"replayed, the recording gives {m.key} mean {replayed.get('mean')} (current "
                     f"{replayed.get('current')}), the live run {mean:g} ({cur:g})")
    c.done("replayed from its recording: the same values")
    from .scenes.aquarium import SWEEP
    from .sweep.runs import flatten
    from .sweep.spec import RunTask

    with contextlib.redirect_stdout(io.StringIO()):
        params = {"fish.count": fish, **{".".join(parse_override(s)[0]): parse_override(s)[1] for s in sets}}
        summary = flatten(SWEEP.summarize(RunTask("aquarium", params, seed, ticks), None))
    figure = mx.summary_key(m)
    if summary.get(figure) != mean:
        raise c.fail(f"a sweep run's figure {figure} is {summary.get(figure)!r}, the run's mean {mean:g}")
    c.done(f"a sweep run's figure {figure}")


def _metric_empty_tank(c: _Check, m: Any, seed: int, sets: list[str]) -> None:
    """Every fish taken out of the water, then a few samples: a number, never a raise."""
    from .config import load_config
    from .observe import metrics as mx
    from .session.live import LiveSession

    if m.kind == "tick":
        c.done("a tick figure: no empty-tank sample")
        return
    cfg = load_config(None, [*sets, "fish.count=3"], seed=seed)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        mx._WARNED.discard(m.key)
        session = LiveSession(cfg, mode="lockstep")
        try:
            for f in range(3):
                session.intervene({"kind": "remove", "fish": f})
            for _ in range(3 * cfg.metrics.sample_every + 1):
                session.step()
            got = session.metrics.summary().get(m.key, {})
        finally:
            session.close()
    warned = _warning_of(m, err.getvalue())
    if warned:
        raise c.fail(f"its compute raised on a tank with no fish in the water: {warned}")
    values = [got.get("current"), got.get("mean")]
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        raise c.fail(f"on a tank with no fish in the water it reads {values}, not finite numbers")
    c.done("a tank with no fish in the water: a number")


# ---------------------------------------------------------------- plan types


class _PlanProbe:
    """A user brain that chooses plan type ``name`` whenever a fish is offered it (forage
    otherwise, so fish eat and remember places), noting what the fish were offered and told."""

    name = "plan-probe"

    def __init__(self, plan: Any, prompt_line: str | None):
        self.plan, self.prompt_line = plan, prompt_line
        self.asked = self.offered = self.chosen = 0
        self.untold: str | None = None  # the first ask that offered the plan without the prompt saying so

    def decide(self, ask: Any) -> Any:
        from .brains.user import Decision

        self.asked += 1
        t = self.plan
        if ask.decides == "action":  # hold: every single action is a hold plan
            self.offered += 1
            self.chosen += 1
            return Decision(action=ask.plans[0], thought=f"check {t.name}")
        if t.name not in ask.plans:
            return Decision(goal="forage", thought="check: eat")
        self.offered += 1
        system = " ".join(m.get("content", "") for m in ask.messages if m.get("role") == "system")
        user = " ".join(m.get("content", "") for m in ask.messages if m.get("role") != "system")
        if self.untold is None:
            if not re.search(rf"\b{re.escape(t.name)}\b", user):
                self.untold = f"fish {ask.fish} at tick {ask.tick} is offered it but its message does not name it"
            elif self.prompt_line and self.prompt_line not in system:
                self.untold = (f"fish {ask.fish} at tick {ask.tick} is offered it but the system prompt lacks "
                               f"{self.prompt_line!r}")
        self.chosen += 1
        out: dict[str, Any] = {"goal": t.name, "thought": f"check {t.name}"}
        if t.ticks:
            out["ticks"] = t.ticks
        if t.param == "direction":
            out["direction"] = ask.directions[0]
        elif t.param == "energy":
            out["until"] = 100
        elif t.param == "away":
            out["away_from"] = "crowd"
        elif t.param == "place":
            found = re.search(r"#(\d+)", ask.places)
            out["place"] = int(found.group(1)) if found else 0
        return Decision(**out)


def check_plan_type(name: str, *, ticks: int = 150, fish: int = FISH, seed: int = SEED,
                    workdir: str | Path | None = None) -> Checked:
    """Check a plan type (docs/extending.md "A plan type") through the places a plan reaches:

    1. it is a row of the running table (``mirofish.fish.plantypes.PLAN_TYPES``) that the goal
       enum was built from (a row added after ``mirofish.fish.plans`` loaded is not);
    2. ``describe`` and ``parse_plan`` read each other back; a plan a model may choose is in
       the reply schema's goal enum with its default horizon;
    3. its fork entries are in the fork picker's plans (``plans.fork_plans()``) and read back
       as this goal;
    4. a run whose user brain chooses it whenever a fish is offered it: every fish offered it
       is told so (its message names it; the system prompt has its ``prompt`` line), no choice
       of it is refused, and the run's export records its goal by name (a plan type that
       ``fits`` always must be offered; ``hold`` is run in action mode);
    5. that run's recording replays to its state hash;
    6. a fork giving fish 0 the plan (its first fork entry, or the plan in words): the fork
       runs, records the decision by the goal's name, the fish swims it, the fork's recording
       replays, its export has it;
    7. with a ``utility`` formula: in an instinct run (its perception switch on, if it needs
       one) the compiled planner draws exactly as the numpy one on every fish's request, every
       10th tick, and says how often the plan won a draw; with ``ends`` or ``fails``: the run's
       compiled and numpy ticks stay the same world with fish holding it.
    """
    from .brains import prompt as pr
    from .fish import plans, plantypes

    with _work("check_plan_type", name, workdir) as c:
        row = next((t for t in plantypes.PLAN_TYPES if t.name == name), None)
        if row is None:
            loaded = [p for p in plantypes.PLUGIN_PROBLEMS if name in p]
            why = f"; {loaded[0]}" if loaded else ""
            raise c.fail(f"is not a plan type of the running table (mirofish.fish.plantypes.PLAN_TYPES: "
                         f"{', '.join(t.name for t in plantypes.PLAN_TYPES)}){why}")
        if name not in plans.CODE or plans.TYPES[plans.CODE[name]] != row:
            raise c.fail("was added to PLAN_TYPES after mirofish.fish.plans loaded: the goal enum, steering and the "
                         "compiled tick do not know it (extend the table before importing the rest of MiroFish)")
        code = plans.code(name)
        c.done(f"goal code {code}")
        _plan_words(c, row, code, plans, pr)
        entries = _plan_fork_entries(c, row, code, plans)
        rec = _plan_run(c, row, ticks, fish, seed)
        _plan_fork(c, row, code, rec, entries, plans, ticks)
        _plan_formulas(c, row, code, ticks, fish, seed)
        return c.result()


def _plan_formulas(c: _Check, row: Any, code: int, ticks: int, fish: int, seed: int) -> None:
    """Step 7 of :func:`check_plan_type`: its formulas, the compiled planner and tick against numpy."""
    if not (row.utility or row.ends or row.fails):
        return
    import numpy as np

    from . import kernel
    from .brains.base import RequestBatch
    from .brains.instinct import InstinctPlanner, instinct_source
    from .config import load_config
    from .session import LiveSession

    if kernel.compiled_tick() is None:
        c.done("formulas: no compiled tick to compare (MIROFISH_TICK=numpy or not built)")
        return
    sets: dict[str, Any] = {"fish.count": fish, "brain.decides": "plan"}
    if row.needs:
        from .fish.plantypes import NEED_SETTINGS

        sets.update(NEED_SETTINGS.get(row.needs, {f"perception.{row.needs}": True}))
    cfg = load_config(seed=seed, **sets)
    fast, slow = LiveSession(cfg), LiveSession(cfg)
    slow.world._kernel = None
    planner, reference = instinct_source(cfg), instinct_source(cfg)
    assert isinstance(planner, InstinctPlanner) and isinstance(reference, InstinctPlanner)
    reference._kernel = None
    won = drawn = held = 0
    for t in range(ticks):
        if (row.ends or row.fails) and t % 25 == 0:  # fish given the plan now and then: its predicates run
            for s in (fast, slow):
                ids = np.arange(0, s.world.school.n, 2)
                s.world.apply_plans(ids, np.full(ids.size, code, np.int8), np.zeros(ids.size, np.int16),
                                    np.full(ids.size, row.ticks or 20, np.int16))
        fast.step()
        slow.step()
        if fast.state_hash() != slow.state_hash():
            raise c.fail(f"with fish holding it, the compiled tick and the numpy tick part at tick {fast.tick}: "
                         f"its ends/fails formulas or its utility differ between them")
        held += int(np.count_nonzero(fast.world.school.plan_goal == code))
        if row.utility and t % 10 == 0:
            w = fast.world
            ids = np.flatnonzero(~w.school.absent)
            batch = RequestBatch(tick=w.tick, fish=ids, triggers=np.zeros(ids.size, np.int8), codes=w.view_codes(ids),
                                 energy=w.school.energy[ids], max_energy=w.max_energy, heading=w.school.heading[ids],
                                 traits=w.school.traits[ids], food_here=np.zeros(ids.size, bool),
                                 refused=np.zeros((ids.size, 4), bool), places=w.place_options(ids),
                                 plants=w.plants_shown(ids) if w.cfg.perception.plants_seen else None,
                                 prey=w.prey_seen(ids) if w.hunting else None)
            a, b = planner.decide(batch), reference.decide(batch)
            if not (np.array_equal(a.goals, b.goals) and np.array_equal(a.params, b.params)
                    and np.array_equal(np.asarray(a.horizons, np.int64), np.asarray(b.horizons, np.int64))):
                raise c.fail(f"its utility formula: the compiled planner and the numpy one choose differently at "
                             f"tick {w.tick}")
            won += int(np.count_nonzero(a.goals == code))
            drawn += ids.size
    parts = []
    if row.utility:
        parts.append(f"utility: compiled planner = numpy on {drawn} requests, the plan won {won}")
    if row.ends or row.fails:
        parts.append(f"ends/fails: compiled tick = numpy over {ticks} ticks ({held} fish-ticks holding it)")
    c.done("; ".join(parts))


def _plan_words(c: _Check, row: Any, code: int, plans: Any, pr: Any) -> None:
    param = {"none": 0, "energy": 10}.get(row.param, 1)
    for horizon in (0, 7):
        text = plans.describe(code, param, horizon)
        try:
            back = plans.parse_plan(text)
        except ValueError as exc:
            raise c.fail(f"its plan in words {text!r} does not read back: {exc}") from None
        if back != (code, param, horizon):
            raise c.fail(f"its plan in words {text!r} reads back as {back}, not {(code, param, horizon)}")
    schema_goals = pr.PLAN_REPLY_SCHEMA["properties"]["goal"]["enum"]
    if row.fits != "never":
        if row.name not in schema_goals:
            raise c.fail(f"a model may choose it (fits {row.fits}) but the reply schema's goal enum lacks it")
        if pr.DEFAULT_TICKS.get(row.name) != row.ticks:
            raise c.fail(f"the default horizon of a model's plan is {pr.DEFAULT_TICKS.get(row.name)}, the row "
                         f"says {row.ticks}")
    elif row.name in schema_goals:
        raise c.fail("fits never, yet the reply schema offers it to a model")
    c.done("describe/parse read back; reply schema" + ("" if row.fits != "never" else ": not offered"))


def _plan_fork_entries(c: _Check, row: Any, code: int, plans: Any) -> list[str]:
    picker = plans.fork_plans()
    entries = [e.format(param=w, ticks=row.ticks) for e in row.fork
               for w in (plans.PARAM_WORDS.get(row.param, ("",)) if "{param}" in e else ("",))]
    for e in entries:
        if e not in picker:
            raise c.fail(f"its fork entry {e!r} is not among the fork picker's plans (fish.plans.fork_plans())")
        try:
            got = plans.parse_plan(e)[0]
        except ValueError as exc:
            raise c.fail(f"its fork entry {e!r} does not read as a plan: {exc}") from None
        if got != code:
            raise c.fail(f"its fork entry {e!r} reads as goal {plans.GOAL_NAMES[got]}")
    c.done(f"fork picker: {', '.join(entries)}" if entries else "no fork entries (not in the fork picker)")
    return entries


def _plan_run(c: _Check, row: Any, ticks: int, fish: int, seed: int) -> str:
    probe = _PlanProbe(row, f"{row.name} - {row.prompt}" if row.prompt else None)
    sets = ["--set", "fish.places=3"] if row.fits == "places" else []
    if getattr(row, "needs", None):  # a plan a tank offers only with a switch on (hide: plants_seen; hunt: hunting)
        from .config import toml_value
        from .fish.plantypes import NEED_SETTINGS

        for key, value in NEED_SETTINGS.get(row.needs, {f"perception.{row.needs}": True}).items():
            sets += ["--set", f"{key}={toml_value(value)}"]
    if row.param == "action":
        sets += ["--set", "brain.decides=action"]
    rec = c.path("run.mirofish")
    with _module_with(probe) as spec:
        first = c.ok("a run whose brain chooses it", "live", "--headless", "--ticks", ticks, "--fish", fish,
                     "--seed", seed, *_HASH_EVERY_TICK, *sets, "--brain", spec, "--record", rec)
    fallbacks = first.get("brain", {}).get("fallbacks", {})
    if fallbacks:
        reason, n = max(fallbacks.items(), key=lambda kv: kv[1])
        raise c.fail(f"a fish that chose it when offered was refused {n} times ({reason})")
    if probe.untold:
        raise c.fail(f"the model prompt's plan options miss it: {probe.untold}")
    if probe.offered == 0:
        if row.fits == "always":
            raise c.fail(f"it fits always, yet none of {probe.asked} asks in {ticks} ticks offered it (Ask.plans)")
        c.done(f"a {ticks}-tick run: never offered (fits {row.fits})")
    else:
        decisions = _read_csv(Path(_export(c, rec, "tables-run")) / "decisions.csv")
        goal = row.name if row.param != "action" else "hold"
        mine = sum(1 for d in decisions if d["goal"] == goal)
        if not mine:
            raise c.fail(f"chosen {probe.chosen} times, yet its export holds no decision with goal {goal!r}")
        c.done(f"a {ticks}-tick run: offered {probe.offered} times, told so, chosen, {mine} decisions recorded "
               f"as {goal!r}")
    replayed = c.ok("replaying that run", "replay", rec, "--headless", "--verify")
    if replayed.get("state_hash") != first["final_state_hash"]:
        raise c.fail(f"that run replays to state hash {replayed.get('state_hash')}, it ran to "
                     f"{first['final_state_hash']}")
    c.done("its recording replays (--verify, the same hash)")
    return rec


def _export(c: _Check, rec: str, folder: str, every: int = 10) -> str:
    out = c.path(folder)
    c.ok("exporting its tables", "export", rec, "--tables", out, "--format", "csv", "--every", every)
    return out


def _plan_fork(c: _Check, row: Any, code: int, rec: str, entries: list[str], plans: Any, ticks: int) -> None:
    horizon = row.ticks or 20
    param = {"direction": 0, "away": 0, "action": 0, "place": 0, "energy": 100}.get(row.param, 0)
    text = entries[0] if entries else plans.describe(code, param, horizon)
    at = max(1, ticks // 3)
    fork_rec = c.path("fork.mirofish")
    forked = c.ok(f"a fork to {text!r}", "fork", rec, "--at", at, "--fish", 0, "--plan", text, "--ticks", 30,
                  "--brain", "instinct", "--record", fork_rec)
    if not str(forked.get("action", "")).startswith(row.name):
        raise c.fail(f"a fork to {text!r} gave fish 0 the plan {forked.get('action')!r}")
    replayed = c.ok("replaying the fork", "replay", fork_rec, "--headless", "--verify")
    if replayed.get("state_hash") != forked["final_state_hash"]:
        raise c.fail(f"the fork to {text!r} replays to state hash {replayed.get('state_hash')}, it ran to "
                     f"{forked['final_state_hash']}")
    tables = Path(_export(c, fork_rec, "tables-fork", every=1))
    decided = [d for d in _read_csv(tables / "decisions.csv") if d["tick"] == str(at) and d["fish"] == "0"]
    if not decided or decided[0]["goal"] != row.name:
        raise c.fail(f"the fork's recording holds fish 0's decision at tick {at} as "
                     f"{decided[0]['goal'] if decided else 'nothing'}, not {row.name!r}")
    swam = [r for r in _read_csv(tables / "fish.csv") if r["fish"] == "0" and int(r["tick"]) > at]
    if not any(r["plan_goal"] == row.name for r in swam):
        raise c.fail(f"after the fork fish 0 never swims it (its plans: "
                     f"{', '.join(sorted({r['plan_goal'] for r in swam})) or 'none'})")
    c.done(f"fork to {text!r}: recorded as {row.name!r}, fish 0 swims it, replays, exports")
