"""What every check of the kit shares: its result, its failure, its working folder, running the
command line in this process, and a recorded aquarium round (run, replay, second run, fork)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
import tempfile
import types
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
        from ..cli import main

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
    from ..observe.recording import Recording

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
