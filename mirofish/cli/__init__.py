"""Command line (docs/design.md §6). ``python run.py --help`` lists the commands.

A thin dispatcher: each scene of the registry (:mod:`mirofish.scenes.registry`) brings its own
command (``live``, ``referential`` …, and any installed plug-in's), and :data:`COMMANDS` are the
others (the readers of recordings, ``glossary``, ``reef``, ``sweep``); each lives in a module of
this package.

Bad input — an unknown flag, a bad value, a missing config file, an invalid config value —
prints exactly one line on stderr and exits with code 2; no traceback. Set
``MIROFISH_DEBUG=1`` to see tracebacks of unexpected errors.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from .. import interrupted
from ..config import ConfigError
from ..fish.plantypes import PLUGIN_PROBLEMS as plan_problems
from ..observe.metrics import PLUGIN_PROBLEMS as metric_problems
from ..observe.recording import RecordingError
from ..scenes.registry import SceneError, problems, scenes
from ..ui import WindowError
from . import fronts, recordings, reef, referential, sweep, web
from .common import (
    EXIT_BAD_INPUT,
    NEEDED,
    Parser,
    UsageError,
    check_distinct_outputs,
    check_overwrite,
    guard_output,
    note_inputs,
)


@dataclass(frozen=True)
class Command:
    """A command that is not a scene's own: its name, help, flags and what it runs."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], Any]
    run: Callable[[argparse.Namespace], int]


COMMANDS = (
    Command("replay", "play a recording back in a window (or --terminal, or --headless to a tick)",
            recordings.replay_arguments, recordings.replay),
    Command("fork", "swap one fish's decision at a tick and run on live (intervention replay)",
            recordings.fork_arguments, recordings.fork),
    Command("clip", "draw a stretch of a recording with the window's drawing code into a GIF or an MP4: the "
                    "whole tank (where the window's camera follows the school at 20 px a cell; --zoom Z and "
                    "--follow N come closer) (needs pip install -e '.[clips]')",
            recordings.clip_arguments, recordings.clip),
    Command("report", "single-fish report over a tick range", recordings.report_arguments, recordings.report),
    Command("export", "copy a window of ticks around a tick into a new recording, or write the recording as "
                      "tables (--tables DIR) for pandas, polars or DuckDB, or its model exchanges as OpenTelemetry "
                      "traces (--otel FILE.json), or as one HTML player (--html FILE)", recordings.export_arguments,
            recordings.export),
    Command("reef", "a reef of tanks joined by corridors, fish migrating between them (one process, local "
                    "processes or a Dask cluster)", reef.arguments, reef.run),
    Command("glossary", "list a glossary file's terms and snapshots, diff two snapshots, or review pending terms "
                        "(glossary review PATH)", referential.glossary_arguments, referential.glossary),
    Command("sweep", "run a parameter sweep: many seeded headless runs, in parallel or on a Dask cluster, with "
                     "tables and plots", sweep.arguments, sweep.run),
    Command("trace", "isolate one fish: its view and decisions per tick, neighbours restored",
            recordings.trace_arguments, recordings.trace),
    Command("influence", "which decisions made this? every decision of a window forked against the plans its fish "
                         "was offered, ranked by effect on an outcome, with intervals against a null",
            recordings.influence_arguments, recordings.influence),
    Command("survey", "ask every fish (or some) questions at ticks of a recording, in the context each had; "
                      "answers as a table, compared between recordings and against what the fish then did",
            recordings.survey_arguments, recordings.survey),
    Command("reask", "send a fish's recorded model request again (same or another model, K times) and compare "
                     "the answers with the recorded one", recordings.reask_arguments, recordings.reask),
    Command("serve", "watch a live tank (or a recording) from a browser: the page, frames over a WebSocket, "
                     "steering with a token off this machine (needs pip install -e '.[web]')", web.arguments, web.run),
    Command("diff", "compare two recordings (a run and its fork) tick by tick, or two windows of one recording "
                    "(--a T1:T2 --b T3:T4)", recordings.diff_arguments, recordings.diff),
)


def build_parser() -> argparse.ArgumentParser:
    """Every scene's command (the registry's order), then :data:`COMMANDS`."""
    parser = Parser(prog="mirofish", description="MiroFish: an aquarium where order emerges among agents. Without "
                                                 "a command (or with only flags) it runs live: python run.py = "
                                                 "python run.py live.")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for problem in [*problems(), *metric_problems, *plan_problems]:  # a plug-in that does not load: one line each
        print(f"mirofish: {problem}", file=sys.stderr)
    for s in scenes():
        p = sub.add_parser(s.command_name, help=s.help, description=s.help)  # (its --help says what it does)
        fronts.part(s, "arguments")(p)
        p.set_defaults(handler=fronts.part(s, "run"))
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.help, description=c.help)
        c.arguments(p)
        p.set_defaults(handler=c.run)
    return parser


class _Redacting:
    """A text stream that never shows a URL's credentials (every line the CLI prints)."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        from ..config import redact_text

        return self._stream.write(redact_text(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Redacting(out), _Redacting(err)
    try:
        code = _main(argv)
        if code == 0 and interrupted():  # a Ctrl-C Python dropped (mirofish.catch_interrupts): not a clean run
            print("mirofish: interrupted", file=err)
            return 130
        return code
    except KeyboardInterrupt:  # Ctrl-C while the parser is built or an error is printed: one line
        print("mirofish: interrupted", file=err)
        return 130
    finally:
        sys.stdout, sys.stderr = out, err
        from ..observe.paths import INPUTS

        INPUTS.clear()  # (this command's inputs: not the next one's, nor a library call's, in this process)


def _main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        if not args_in or (args_in[0].startswith("-") and args_in[0] not in ("-h", "--help")):
            args_in = ["live", *args_in]
        args = parser.parse_args(args_in)
        note_inputs(args)  # (before any output is checked: none may be written over an input)
        check_distinct_outputs(args)  # (nor over another output of this command)
        check_overwrite(args)  # (--overwrite where no file would be written)
        _check_window_flags(args)
        if getattr(args, "agents", None) == "embedded":  # (a scene's model flags, read only for model agents)
            for flag in ("base_url", "model", "prompt", "reply_cache"):
                if getattr(args, flag, None):
                    raise UsageError(f"mirofish: --{flag.replace('_', '-')} is for model agents: add --agents llm")
        if getattr(args, "screenshot", None) is not None:
            guard_output(args.screenshot, tuple(filter(None, [getattr(args, "path", None)])), args.overwrite,
                         "screenshot")
        from ..brains.prompt import tokenizer

        tokenizer()  # MIROFISH_TOKENIZER names a file that cannot count tokens: one line before any work
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return EXIT_BAD_INPUT
        return int(handler(args))
    except BaseException as exc:  # noqa: BLE001 — every failure becomes one line and an exit code (below)
        return _failed(exc)


def _check_window_flags(args: argparse.Namespace) -> None:
    """The window's flags (--screenshot, --fps, --charts, --size, --frames) where no window
    opens — --headless, --terminal, reef --replay — and --frames without the offscreen run it
    counts (--screenshot or --fps): each would be ignored, and say nothing; refused, one line."""
    drawn = [f for f, on in (("--screenshot", getattr(args, "screenshot", None) is not None),
                             ("--fps", getattr(args, "fps", False)), ("--charts", getattr(args, "charts", False)),
                             ("--size", getattr(args, "size", None) is not None),
                             ("--frames", getattr(args, "frames", None) is not None))
             if on]
    if not drawn:
        return
    no_window = [f"--{k}" for k in ("headless", "terminal") if getattr(args, k, False)]
    if no_window:
        raise UsageError(f"mirofish: {drawn[0]} is for the window; leave out {no_window[0]}")
    if getattr(args, "command", None) == "reef" and getattr(args, "replay", None):
        raise UsageError(f"mirofish: {drawn[0]} is for the window; reef --replay checks a recorded reef without one")
    if "--frames" in drawn and not {"--screenshot", "--fps"} & set(drawn):
        raise UsageError("mirofish: --frames counts the frames of --screenshot or --fps; the window runs until "
                         "closed: add one of them, or leave out --frames")


# What each kind of failure prints (one line on stderr) and the exit code; the first match wins.
_ONE_LINE: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], Callable[[Any], str], int], ...] = (
    (UsageError, str, EXIT_BAD_INPUT),
    ((ConfigError, RecordingError, WindowError, SceneError), lambda e: f"mirofish: {e}", EXIT_BAD_INPUT),
    (ValueError, lambda e: f"mirofish: {e}", EXIT_BAD_INPUT),  # e.g. more fish than open water
    (KeyboardInterrupt, lambda e: "mirofish: interrupted", 130),  # before a command's own handling began
    (OSError, lambda e: f"mirofish: {e.strerror or e}{f': {e.filename}' if getattr(e, 'filename', None) else ''}",
     EXIT_BAD_INPUT),  # a path that cannot be used: too long, under /proc, a full device …
    (RecursionError, lambda e: "mirofish: an input is nested too deeply", EXIT_BAD_INPUT),
)


def _failed(exc: BaseException) -> int:
    """One line for ``exc`` on stderr, and the exit code (SystemExit and a broken pipe pass)."""
    import sqlite3

    if isinstance(exc, SystemExit):
        raise exc
    if isinstance(exc, BrokenPipeError):
        return 0
    for kinds, say, code in _ONE_LINE:
        if isinstance(exc, kinds):
            print(say(exc), file=sys.stderr)
            return code
    if isinstance(exc, sqlite3.Error):  # a database file that cannot be written or read
        print(f"mirofish: database error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if isinstance(exc, ModuleNotFoundError) and exc.name in NEEDED:  # run with a Python MiroFish isn't in
        print(f"mirofish: {exc.name} is not installed for this Python ({sys.executable}); run MiroFish with the "
              f"one it was installed into, e.g. .venv/bin/python run.py (or pip install -e .)", file=sys.stderr)
        return EXIT_BAD_INPUT
    if os.environ.get("MIROFISH_DEBUG") or not isinstance(exc, Exception):
        raise exc
    print(f"mirofish: unexpected error: {type(exc).__name__}: {exc} (set MIROFISH_DEBUG=1 for details)",
          file=sys.stderr)
    return 1
