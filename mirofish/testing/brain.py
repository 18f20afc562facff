"""``check_brain``: a brain of your own through a recorded run, its replay, a survey and bad input."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .common import FISH, SEED, TICKS, Checked, _aquarium_round, _Check, _Done, _line, _module_with, _read_csv, _work

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
            from ..brains.testserver import TestServer

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
