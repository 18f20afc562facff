"""What every command shares: the one-line usage error, argument types, the config and window
flags, output guards, reply caches and writer locks."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from ..brains.client import DEFAULT_TIMEOUT_S

EXIT_BAD_INPUT = 2
NEEDED = ("pygame", "numpy", "pydantic", "openai")  # the dependencies pip installs


class UsageError(Exception):
    """Bad command-line input; the message is one line."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line instead of usage + message
        raise UsageError(f"{self.prog}: {message}")


MAX_TICKS = 10_000_000  # every tick count a command takes (live, fork, reef): about 58 simulated days


def int_at_least(lo: int, hi: int = 2**31 - 1) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}, got {value}")
        if value > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:,}, got {value}")
        return value

    return parse


def number_between(lo: float, hi: float, unit: str = "") -> Callable[[str], float]:
    """An argument type: a number from ``lo`` to ``hi`` (``unit`` words it: "seconds")."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number{' of ' + unit if unit else ''}, got {text!r}") from None
        if not lo <= value <= hi:  # also refuses nan and inf
            raise argparse.ArgumentTypeError(f"must be between {lo:g} and {hi:g}{' ' + unit if unit else ''}, "
                                             f"got {text}")
        return value

    return parse


seconds = number_between(0.1, 3600, "seconds")
speed = number_between(0.25, 64)


def add_config_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preset", metavar="NAME", help="a config under assets/presets/, e.g. schooling-demo")
    p.add_argument("--config", metavar="PATH", help="TOML file layered over assets/default.toml")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one config value (repeatable), e.g. --set food.spawn_rate=0.0003")


FRAMES = 60  # --screenshot's and --fps' frames when --frames is not given


def add_window_flags(p: argparse.ArgumentParser, aquarium: bool = True, ascii_select: bool = False) -> None:
    """The window's flags; ``aquarium``: ``--select`` and ``--charts`` too (``ascii_select``: the
    command has ``--headless --ascii``, where ``--select`` draws the fish's places)."""
    p.add_argument("--screenshot", metavar="PNG", help="render offscreen, save a PNG after --frames frames, exit")
    p.add_argument("--frames", type=int_at_least(1, 1_000_000), default=None,
                   help=f"frames for --screenshot / --fps (default {FRAMES}; only with one of them)")
    p.add_argument("--overwrite", action="store_true", help="replace existing output files (--record, --log, "
                                                            "--screenshot …)")
    if aquarium:
        p.add_argument("--select", type=int_at_least(0), metavar="ID",
                       help="follow this fish from the start" + (" (headless --ascii: its remembered places, as "
                                                                 "digits)" if ascii_select else ""))
        p.add_argument("--charts", action="store_true", help="start with the charts view open (key C)")
    p.add_argument("--fps", action="store_true", help="render offscreen as fast as possible; print frame-rate JSON")
    p.add_argument("--size", metavar="WxH", help="window size, e.g. 1280x720 (default: fits the screen)")


def add_model_flags(p: argparse.ArgumentParser, who: str) -> None:
    """``--base-url``, ``--model`` and ``--timeout`` of a scene whose ``who`` (agents,
    negotiators …) can be a model."""
    p.add_argument("--base-url", metavar="URL", help=f"llm {who}: OpenAI-compatible server")
    p.add_argument("--model", metavar="NAME", help=f"llm {who}: model name")
    p.add_argument("--timeout", metavar="S", type=seconds, default=DEFAULT_TIMEOUT_S,
                   help=f"llm {who}: one model call takes at most S seconds in all, retries included "
                        f"(default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--prompt", metavar="FILE",
                   help=f"llm {who}: their prompt file (the bundled one is assets/prompts/<scene>.toml; "
                        f"docs/prompts.md)")


def prompt_meta(kind: str, path: str | None) -> dict[str, str]:
    """A scene's prompt file as its recording keeps it: name, hash, path and text (brains/prompts.py)."""
    from ..brains.prompts import load_prompt

    return load_prompt(path, kind).meta()


def prompt_named(kind: str, path: str | None) -> dict[str, str]:
    """A scene's prompt file as its JSON summary names it: name and hash."""
    p = prompt_meta(kind, path)
    return {"name": p["name"], "hash": p["hash"]}


def warn_model_made(command: str, base_url: str, made: int, of: int, failures: dict[str, int],
                    fallback: bool = True) -> None:
    """One stderr line when a scene's model answered few of its turns, so a dead or failing server is not
    mistaken for a model run: the JSON still carries every count (``model_failures``) and the run's results.
    ``fallback``: the scene's embedded agents play a turn the model missed (negotiation, handoff); else
    the turn is lost (referential: an empty message, no choice)."""
    import sys

    from ..config import redact_url

    if of <= 0 or made >= of:
        return
    top = ", ".join(f"{k} {n}" for k, n in sorted(failures.items(), key=lambda kv: -kv[1])[:3] if n)
    if made == 0:
        instead = ("the embedded agents played them all" if fallback
                   else "every one was lost (an empty message, no choice)")
        print(f"mirofish {command}: warning: the model at {redact_url(base_url)} played none of {of} turns "
              f"({top}); {instead}", file=sys.stderr)
    elif made < 0.9 * of:
        instead = ("the embedded agents played the rest" if fallback
                   else "the rest were lost (an empty message, no choice)")
        print(f"mirofish {command}: warning: the model at {redact_url(base_url)} played {made} of {of} turns "
              f"({top}); {instead}", file=sys.stderr)


def window_size(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise UsageError(f"mirofish: --size expects WIDTHxHEIGHT, got {text!r}") from None
    if w > 16384 or h > 16384:
        raise UsageError(f"mirofish: --size is at most 16384x16384, got {text!r}")
    if w < 640 or h < 400:
        raise UsageError(f"mirofish: --size must be at least 640x400, got {text!r}")
    return w, h


def check_select(args: argparse.Namespace, fish: int) -> None:
    """``--select ID`` names a fish of this tank (checked even when no window opens)."""
    if getattr(args, "select", None) is not None and args.select >= fish:
        raise UsageError(f"mirofish: --select {args.select} is not a fish of this tank (ids 0..{fish - 1})")


# The options that name something a command reads (besides --config, which load_config notes):
# a recording, a brain's FILE.py:NAME (GROUP=SPEC), a prompt, plan types, interventions, an
# outcome's FILE.py:NAME, questions, a reef's checkpoint or recorded folder, a sweep file.
INPUT_OPTIONS = ("path", "paths", "other", "review_path", "spec", "brain", "prompt", "plan_types",
                 "interventions", "outcome", "questions", "resume", "replay", "config")


def note_inputs(args: argparse.Namespace) -> None:
    """Note every file or folder ``args`` name to be read (:data:`INPUT_OPTIONS`) in
    :data:`mirofish.observe.paths.INPUTS`, so that no output of this command is written over one
    (``--record brain.py`` with ``--brain brain.py:Brain`` would have replaced the brain's source
    with a recording)."""
    from ..observe.paths import INPUTS

    INPUTS.clear()
    for name in INPUT_OPTIONS:
        value = getattr(args, name, None)
        for v in value if isinstance(value, list | tuple) else (value,):
            if not isinstance(v, str) or not v.strip():
                continue
            spec = v.split("=", 1)[1] if "=" in v and name == "brain" else v  # (GROUP=SPEC)
            for candidate in {spec, spec.rsplit(":", 1)[0]}:  # (FILE.py:NAME)
                try:
                    p = Path(candidate)
                    if p.exists():
                        INPUTS.add(p.resolve())
                except (OSError, ValueError):  # a name no file has (too long, a NUL): not an input here
                    continue


# The options that name a file (or folder) a command writes: two of them naming one path would
# have one output destroy the other (a log under a screenshot, a recording under a log).
OUTPUT_OPTIONS = ("record", "log", "glossary", "db", "screenshot", "checkpoint", "png", "otel", "html", "out",
                  "tables")


def check_distinct_outputs(args: argparse.Namespace) -> None:
    """A :class:`UsageError` (one line) when two output options of ``args`` name the same path —
    checked before anything is opened, so a refused run leaves no file behind."""
    seen: dict[Path, str] = {}
    for name in OUTPUT_OPTIONS:
        value = getattr(args, name, None)
        if not isinstance(value, str) or not value.strip():
            continue
        try:
            p = Path(value).resolve()
        except (OSError, ValueError):  # (a name no file can have: its own check says so)
            continue
        flag = "--" + name.replace("_", "-")
        if p in seen:
            raise UsageError(f"mirofish: {seen[p]} and {flag} name the same file {value}; give each its own")
        seen[p] = flag


# The output options ``--overwrite`` may replace (a glossary and a negotiation's --db are kept and
# added to, never replaced).
OVERWRITTEN = tuple(name for name in OUTPUT_OPTIONS if name not in ("glossary", "db"))


def check_overwrite(args: argparse.Namespace) -> None:
    """A :class:`UsageError` (one line) for ``--overwrite`` where the command writes no file it
    could replace: none of its output options is given (``live --headless --overwrite`` without
    ``--record``), or ``sweep --dry-run``. Before, it was taken and did nothing, so a user who
    meant to replace a file learned nothing. (A sweep's results folder has a default: its
    ``--overwrite`` always has something to start afresh, unless ``--dry-run``.)"""
    if not getattr(args, "overwrite", False):
        return
    command = getattr(args, "command", None) or "mirofish"
    if command == "sweep":
        if args.dry_run:
            raise UsageError("mirofish sweep: --overwrite replaces a results folder, and --dry-run writes nothing: "
                             "nothing would be overwritten; leave out one of them")
        return
    flags = [f"--{name.replace('_', '-')}" for name in OVERWRITTEN if hasattr(args, name)]
    if not flags or any(isinstance(getattr(args, name, None), str) for name in OVERWRITTEN):
        return
    named = ", ".join(flags[:-1]) + f" or {flags[-1]}" if len(flags) > 1 else flags[0]
    raise UsageError(f"mirofish {command}: --overwrite replaces an existing output file, and this run writes none "
                     f"(no {named}): nothing would be overwritten; leave out --overwrite or name the output")


def guard_output(path: Any, inputs: Iterable[Any] = (), overwrite: bool = False, what: str = "output",
                 scene: str | None = None) -> None:
    """Refuse an unsafe output path before any work (see mirofish.observe.paths)."""
    from ..observe.paths import OutputError, check_output

    try:
        check_output(path, tuple(inputs), overwrite, what, scene=scene)
    except OutputError as exc:
        raise UsageError(f"mirofish: {exc}") from None


def reply_cache(folder: str | None) -> Any:
    """``--reply-cache DIR`` as a reply cache (None without the flag)."""
    if folder is None:
        return None
    if not folder.strip():
        raise UsageError("mirofish: --reply-cache needs a folder (got an empty name)")
    from ..brains.exchanges import ReplyCache

    try:
        return ReplyCache(folder)
    except (OSError, ValueError) as exc:
        raise UsageError(f"mirofish: --reply-cache {folder}: {exc}") from None


def locks(paths: Iterable[str | None]) -> Any:
    """The writer locks of a command's output files, as a context manager (one-line refusal)."""
    from ..observe.paths import Locks, OutputError

    try:
        return Locks(list(paths))
    except OutputError as exc:
        raise UsageError(f"mirofish: {exc}") from None


def run_window(view: Any, args: argparse.Namespace, select: int | None = None, more: list[Any] | None = None) -> int:
    """Open ``view`` in the window (or render it offscreen: ``--screenshot``, ``--fps``) with the
    command's window flags."""
    from ..ui.app import run_window as open_window

    frames = FRAMES if args.frames is None else args.frames
    return int(open_window(view, args.screenshot, frames, select, args.fps, window_size(args.size),
                           **({"more": more} if more else {})))
