"""Command line (docs/design.md §6). ``python run.py --help`` lists the commands.

Bad input — an unknown flag, a bad value, a missing config file, an invalid config value —
prints exactly one line on stderr and exits with code 2; no traceback. Set
``MIROFISH_DEBUG=1`` to see tracebacks of unexpected errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .actions import ACTION_NAMES
from .config import Config, ConfigError, load_config, parse_override
from .observe.recording import RecordingError
from .session.headless import _recorder, run_headless
from .ui import WindowError

EXIT_BAD_INPUT = 2


_NEEDED = ("pygame", "numpy", "pydantic", "openai")  # the dependencies pip installs


class UsageError(Exception):
    """Bad command-line input; the message is one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line instead of usage + message
        raise UsageError(f"{self.prog}: {message}")


def _int_at_least(lo: int, hi: int = 2**31 - 1):
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


def _number_between(lo: float, hi: float, unit: str = ""):
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


_seconds = _number_between(0.1, 3600, "seconds")
_speed = _number_between(0.25, 64)


def _add_config_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preset", metavar="NAME", help="a config under assets/presets/, e.g. schooling-demo")
    p.add_argument("--config", metavar="PATH", help="TOML file layered over assets/default.toml")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one config value (repeatable), e.g. --set food.spawn_rate=0.0003")


def _add_window_flags(p: argparse.ArgumentParser, aquarium: bool = True) -> None:
    p.add_argument("--screenshot", metavar="PNG", help="render offscreen, save a PNG after --frames frames, exit")
    p.add_argument("--frames", type=_int_at_least(1, 1_000_000), default=60,
                   help="frames for --screenshot / --fps (default 60)")
    p.add_argument("--overwrite", action="store_true", help="replace existing output files (--record, --log, "
                                                            "--screenshot …)")
    if aquarium:
        p.add_argument("--select", type=_int_at_least(0), metavar="ID",
                       help="follow this fish from the start (headless --ascii: its remembered places, as digits)")
        p.add_argument("--charts", action="store_true", help="start with the charts view open (key C)")
    p.add_argument("--fps", action="store_true", help="render offscreen as fast as possible; print frame-rate JSON")
    p.add_argument("--size", metavar="WxH", help="window size, e.g. 1280x720 (default: fits the screen)")


def _size(text: str | None):
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


def _check_select(args: argparse.Namespace, fish: int) -> None:
    """``--select ID`` names a fish of this tank (checked even when no window opens)."""
    if getattr(args, "select", None) is not None and args.select >= fish:
        raise UsageError(f"mirofish: --select {args.select} is not a fish of this tank (ids 0..{fish - 1})")


def run_window_live(cfg: Config, args: argparse.Namespace) -> int:
    from .ui.app import run_window
    from .ui.scenes.aquarium import AquariumScene
    from .ui.scenes.handoff import HandoffScene
    from .ui.scenes.negotiation import NegotiationScene
    from .ui.scenes.referential import ReferentialScene

    size = _size(args.size)
    scene = AquariumScene.live(cfg, cache=_reply_cache(args.reply_cache))
    scene.show_charts = args.charts
    if args.record:
        try:
            scene.session.start_recording(args.record, args.overwrite)  # type: ignore[attr-defined]
        except RecordingError:
            scene.close()
            raise
    return run_window(scene, args.screenshot, args.frames, args.select, args.fps, size,
                      more=[ReferentialScene(), NegotiationScene(), HandoffScene()])


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mirofish", description="MiroFish: an aquarium where order emerges among agents.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    live = sub.add_parser("live", help="run the aquarium in a window (or --terminal, or --headless for JSON)")
    live.add_argument("--headless", action="store_true",
                      help="no view; print JSON. Lockstep runs as fast as possible; with --set engine.mode=realtime "
                      "it keeps the simulated clock at --speed (as the window does)")
    live.add_argument("--terminal", action="store_true", help="the tank as characters in the terminal")
    _add_window_flags(live)
    live.add_argument("--ticks", type=_int_at_least(1), help="ticks to run (headless default 2000)")
    live.add_argument("--fish", type=_int_at_least(1), help="number of fish (default 60)")
    live.add_argument("--seed", type=_int_at_least(0), help="random seed (default 7)")
    live.add_argument("--speed", type=_speed, help="live view and realtime headless: simulated speed, 0.25 to 64 "
                      "(default 1 = 2 ticks/s)")
    live.add_argument("--ascii", nargs="?", const=100, type=_int_at_least(1), metavar="K",
                      help="headless: print the whole tank as characters every K ticks (default 100)")
    live.add_argument("--progress", action="store_true", help="headless: progress bar on stderr even if not a TTY")
    live.add_argument("--record", metavar="PATH", help="write the run to a recording (SQLite), e.g. saves/run.db")
    live.add_argument("--brain", choices=("instinct", "llm"), help="who decides (default: instinct)")
    live.add_argument("--base-url", metavar="URL", help="llm: OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1")
    live.add_argument("--model", metavar="NAME", help="llm: model name on that server (small tier)")
    live.add_argument("--large-base-url", metavar="URL", help="llm: server of the large tier (default: --base-url)")
    live.add_argument("--large-model", metavar="NAME", help="llm: model of the large tier")
    live.add_argument("--budget-tokens", type=_int_at_least(0), metavar="N",
                      help="llm: token budget; at 80 %% small tier only, at 100 %% instinct only")
    live.add_argument("--reply-cache", metavar="DIR",
                      help="llm: answer repeated requests from replies kept in DIR (and keep new ones there), so "
                           "experiments repeated against a paid API do not pay twice")
    _add_config_flags(live)

    rp = sub.add_parser("replay", help="play a recording back in a window (or --terminal, or --headless to a tick)")
    rp.add_argument("path", help="a recording made with --record")
    rp.add_argument("--headless", action="store_true", help="no view: seek and print JSON {tick, state_hash, ...}")
    rp.add_argument("--to-tick", type=_int_at_least(0), metavar="T",
                    help="headless: the tick to seek to (default: end)")
    rp.add_argument("--verify", action="store_true",
                    help="headless: re-simulate every tick from the first (not from the nearest keyframe), checking "
                         "each tick's actions and the kept state hashes against the recording; a replay that "
                         "diverges is one line naming the tick (exit 2)")
    rp.add_argument("--at-tick", type=_int_at_least(0), metavar="T", help="view: start playing from this tick")
    rp.add_argument("--speed", type=_speed, default=1.0, help="view: playback speed, 0.25 to 64 (default 1)")
    rp.add_argument("--terminal", action="store_true", help="play back as characters in the terminal")
    rp.add_argument("--session", type=_int_at_least(0), metavar="K",
                    help="negotiation recordings: the session to show first (default: the first)")
    rp.add_argument("--reply-cache", metavar="DIR", help="model runs: put every recorded model reply into the reply "
                                                         "cache DIR (for live --reply-cache and fork --reply-cache)")
    _add_window_flags(rp)

    fk = sub.add_parser("fork", help="swap one fish's decision at a tick and run on live (intervention replay)")
    fk.add_argument("path", help="the recording to fork (it is only read)")
    fk.add_argument("--at", type=_int_at_least(0), metavar="T", help="the tick of the swapped decision")
    neg_fork = fk.add_argument_group("a negotiation recording (negotiation --record)")
    neg_fork.add_argument("--at-turn", type=_int_at_least(0), metavar="N", help="the repair turn to choose again")
    neg_fork.add_argument("--repair", metavar="STRATEGY",
                          help="the repair strategy at that turn: confirming_restatement, exploratory_question, "
                               "offering_options, revealing_assumptions, rebuilding_consensus")
    neg_fork.add_argument("--session", type=_int_at_least(0), default=0, metavar="K",
                          help="the session to fork (default 0)")
    fk.add_argument("--fish", type=_int_at_least(0), metavar="ID",
                    help="the fish whose decision changes (with --plan or --action)")
    swap = fk.add_mutually_exclusive_group()
    swap.add_argument("--plan", metavar="PLAN",
                      help="new plan, e.g. 'school 60', 'explore east 30', 'forage', 'rest 10', 'keep_away glass'")
    swap.add_argument("--action", choices=ACTION_NAMES, metavar="A",
                      help="a single action instead (held one tick, then the brain plans again): "
                      + ", ".join(ACTION_NAMES))
    iv = fk.add_argument_group("interventions at the fork tick (any number; with or without a swapped decision)")
    iv.add_argument("--drop-food", action="append", default=[], metavar="X,Y",
                    help="a handful of food on the 3x3 cells around X,Y (tank cells, 0,0 top left)")
    iv.add_argument("--rock", action="append", default=[], metavar="X,Y", help="a 3x3 rock around X,Y")
    iv.add_argument("--clear-rock", action="append", default=[], metavar="X,Y",
                    help="remove rocks and plants on the 3x3 cells around X,Y")
    iv.add_argument("--add-fish", action="append", default=[], metavar="X,Y[,S,C,A,P,M]",
                    help="a new fish on the free water nearest X,Y, with random traits or the five given "
                         "(sociability, curiosity, caution, appetite, calm; 0..100); needs room: the recording's "
                         "fish.spare, or a fish taken out")
    iv.add_argument("--remove-fish", action="append", default=[], type=_int_at_least(0), metavar="N",
                    help="take fish N out of the water")
    iv.add_argument("--current", action="append", default=[], metavar="DIR,TICKS",
                    help="push every fish that can one cell DIR (north, south, west, east) each tick for TICKS ticks")
    iv.add_argument("--interventions", metavar="FILE",
                    help="JSON Lines, one {\"tick\": T, \"kind\": food|rock|clear|current|tune|add|remove, ...} "
                         "per line "
                         "(README \"Interventions\"); each happens at its tick (>= --at)")
    fk.add_argument("--ticks", type=_int_at_least(1), default=600, help="ticks to run after the fork (default 600)")
    fk.add_argument("--record", metavar="OUT", help="write the fork as its own recording")
    fk.add_argument("--overwrite", action="store_true", help="replace an existing OUT file")
    fk.add_argument("--base-url", metavar="URL", help="model runs: ask this server instead of the recorded one "
                                                      "(requests the recording answered come from its replies)")
    fk.add_argument("--model", metavar="NAME", help="model runs: ask this model instead of the recorded one")
    fk.add_argument("--reply-cache", metavar="DIR", help="model runs: also keep and reuse replies in DIR")

    cl = sub.add_parser("clip", help="draw a stretch of a recording, as the window shows it, into a GIF or an MP4 "
                                     "(needs pip install -e '.[clips]')")
    cl.add_argument("path", help="a recording (only read)")
    cl.add_argument("--from", dest="t_from", type=_int_at_least(0), metavar="T1",
                    help="first tick (default: the start)")
    cl.add_argument("--to", dest="t_to", type=_int_at_least(1), metavar="T2",
                    help="last tick, excluded (default: the end)")
    cl.add_argument("--out", required=True, metavar="FILE", help="demo.gif or demo.mp4 (never the recording)")
    cl.add_argument("--follow", type=_int_at_least(0), metavar="N", help="ring and follow fish N (its panel shown)")
    cl.add_argument("--speed", type=_speed, default=4.0,
                    help="simulated seconds per clip second, 0.25 to 64 (default 4: a tick is 0.5 s, so 8 ticks/s)")
    cl.add_argument("--size", metavar="WxH", default="1280x720", help="the window drawn (default 1280x720)")
    cl.add_argument("--zoom", type=float, default=1.0, metavar="Z",
                    help="zoom into the tank Z times (around the followed fish with --follow; default 1: all of it)")
    cl.add_argument("--hud", action=argparse.BooleanOptionalAction, default=True,
                    help="the whole window (default) or, with --no-hud, the tank alone")
    cl.add_argument("--overwrite", action="store_true", help="replace an existing --out file")

    rep = sub.add_parser("report", help="single-fish report over a tick range")
    rep.add_argument("path", help="a recording (only read)")
    rep.add_argument("--fish", type=_int_at_least(0), required=True, metavar="ID", help="the fish to report on")
    rep.add_argument("--from", dest="t0", type=_int_at_least(0), metavar="T0", help="first tick (default: the start)")
    rep.add_argument("--to", dest="t1", type=_int_at_least(0), metavar="T1",
                     help="last tick, excluded (default: the end)")
    rep.add_argument("--png", metavar="OUT", help="also draw the report as a chart (a PNG file)")
    rep.add_argument("--overwrite", action="store_true", help="replace an existing --png file")

    ex = sub.add_parser("export", help="copy a window of ticks around a tick into a new recording, or write the "
                                       "recording as tables (--tables DIR) for pandas, polars or DuckDB")
    ex.add_argument("path", help="a recording (only read)")
    ex.add_argument("--around", type=_int_at_least(0), metavar="T", help="window: the tick to centre on")
    ex.add_argument("--radius", type=_int_at_least(1), default=500, metavar="N",
                    help="window: ticks before and after --around (default 500)")
    ex.add_argument("--out", metavar="OUT", help="window: the new recording (never the input)")
    ex.add_argument("--tables", metavar="DIR", help="write tables (decisions, fish, metrics, memory, runs; "
                                                    "divergence for forks) into DIR instead")
    ex.add_argument("--format", choices=("parquet", "csv"), default="parquet",
                    help="tables: parquet (default; needs pyarrow, pip install -e '.[tables]') or csv")
    ex.add_argument("--from", dest="t_from", type=_int_at_least(0), metavar="T", help="tables: first tick "
                                                                                    "(default: the first recorded)")
    ex.add_argument("--to", dest="t_to", type=_int_at_least(1), metavar="T", help="tables: last tick, excluded "
                                                                                  "(default: the last recorded)")
    ex.add_argument("--every", type=_int_at_least(1), default=10, metavar="K",
                    help="tables: sample each fish's state every K ticks (default 10)")
    ex.add_argument("--overwrite", action="store_true", help="replace existing output files")

    ref = sub.add_parser("referential", help="the referential game: agents invent a vocabulary (GlossoGen)")
    ref.add_argument("--headless", action="store_true", help="no window; print one JSON line of results")
    ref.add_argument("--rounds", type=_int_at_least(1), default=400, help="rounds to play (default 400)")
    ref.add_argument("--seed", type=_int_at_least(0), default=0, help="random seed (default 0)")
    ref.add_argument("--agents", choices=("embedded", "llm"), default="embedded",
                     help="embedded learners (default) or a model through --base-url/--model")
    ref.add_argument("--condition", choices=("dynamic", "fixed", "natural"), default="dynamic",
                     help="dynamic: agents invent terms; fixed: a given glossary; natural: spelled-out words")
    ref.add_argument("--candidates", type=_int_at_least(2), default=5, help="candidates per round (2-20)")
    ref.add_argument("--three", action="store_true", help="a third agent joins half-way (majority rule)")
    ref.add_argument("--set", dest="game_overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="set any game setting (repeatable), e.g. --set candidates=10 --set prune_below=0.2 "
                          "(the fields of GameConfig in mirofish/scenes/referential/game.py)")
    ref.add_argument("--review", action="store_true",
                     help="new terms wait for a person's approval before they become global (window: A approve, "
                          "R reject; or: glossary review PATH)")
    ref.add_argument("--glossary", metavar="PATH", help="SQLite glossary to use and keep (default: in memory)")
    ref.add_argument("--record", metavar="OUT", help="record the game round by round (embedded agents, a new "
                                                     "glossary): replay and export --tables read it")
    ref.add_argument("--log", metavar="PATH",
                     help="JSON Lines round log, one line per round (fields in README \"Referential game\")")
    ref.add_argument("--base-url", metavar="URL", help="llm agents: OpenAI-compatible server")
    ref.add_argument("--model", metavar="NAME", help="llm agents: model name")
    ref.add_argument("--timeout", metavar="S", type=_seconds, default=20.0,
                     help="llm agents: one model call takes at most S seconds in all, retries included (default 20)")
    _add_window_flags(ref, aquarium=False)

    neg = sub.add_parser("negotiation", help="negotiation with grounding repair and Argent signals")
    neg.add_argument("--headless", action="store_true", help="no window; print one JSON line of results")
    neg.add_argument("--sessions", type=_int_at_least(1), default=200, help="negotiations to run (default 200)")
    neg.add_argument("--seed", type=_int_at_least(0), default=0, help="random seed (default 0)")
    neg.add_argument("--no-repair", action="store_true", help="no grounding repairs (the signals stay, see --layers)")
    neg.add_argument("--layers", type=int, choices=(0, 1, 2, 3), default=3,
                     help="Argent signal layers: 0 none, 1 (task, goal hash, constraints), 2 (1 + assumptions, "
                          "confidence), 3 (2 + role, handoff context, drift alerts; default)")
    neg.add_argument("--agents", choices=("embedded", "llm"), default="embedded",
                     help="embedded negotiators (default) or a model through --base-url/--model")
    neg.add_argument("--db", metavar="PATH", help="SQLite file for each session's grounding state and turns")
    neg.add_argument("--record", metavar="OUT", help="record the run (every turn; replay, fork --at-turn and export "
                                                     "--tables read it)")
    neg.add_argument("--base-url", metavar="URL", help="llm negotiators: OpenAI-compatible server")
    neg.add_argument("--model", metavar="NAME", help="llm negotiators: model name")
    neg.add_argument("--timeout", metavar="S", type=_seconds, default=20.0,
                     help="llm negotiators: one model call takes at most S seconds in all, retries included "
                          "(default 20)")
    _add_window_flags(neg, aquarium=False)

    ho = sub.add_parser("handoff", help="Argent's scenario: analyst, writer and reviewer write a report, with a "
                                        "hand-over and injected drifts; which signal layers catch them")
    ho.add_argument("--headless", action="store_true",
                    help="no window; print one JSON line: the four arms (none, L1, L1+2, L1+2+3) on the same tasks")
    ho.add_argument("--tasks", type=_int_at_least(1), default=250, help="tasks per arm (default 250)")
    ho.add_argument("--seed", type=_int_at_least(0), default=1, help="random seed (default 1)")
    ho.add_argument("--layers", choices=("none", "L1", "L1+2", "L1+2+3"), default=None,
                    help="one arm only (headless), or the arm the window shows (default L1+2+3)")
    ho.add_argument("--l2-every", type=_int_at_least(0), default=4, metavar="K",
                    help="layer 2 on every K-th message besides its triggers (0: only on its triggers; default 4)")
    ho.add_argument("--no-l2-triggers", action="store_true",
                    help="layer 2 only every K-th message (not on state changes, low confidence, entropy jumps)")
    ho.add_argument("--agents", choices=("embedded", "llm"), default="embedded",
                    help="embedded writers (default: messages from templates) or a model through --base-url/--model")
    ho.add_argument("--base-url", metavar="URL", help="llm agents: OpenAI-compatible server")
    ho.add_argument("--model", metavar="NAME", help="llm agents: model name")
    ho.add_argument("--timeout", metavar="S", type=_seconds, default=20.0,
                    help="llm agents: one model call takes at most S seconds in all, retries included (default 20)")
    _add_window_flags(ho, aquarium=False)

    rf = sub.add_parser("reef", help="a reef of tanks joined by corridors, fish migrating between them "
                                     "(one process, local processes or a Dask cluster)")
    rf.add_argument("path", nargs="?", metavar="REEF.toml", help="the reef file (see mirofish/reef/spec.py)")
    rf.add_argument("--headless", action="store_true", help="no window; print one JSON line at the end")
    rf.add_argument("--ticks", type=_int_at_least(1, 10_000_000), help="ticks to run (default: the file's)")
    rf.add_argument("--workers", type=_int_at_least(1, 256), default=1,
                    help="local processes stepping the tanks (default 1: all in this process)")
    rf.add_argument("--cluster", metavar="ADDRESS", help="run the tanks on a Dask cluster (tcp://HOST:PORT)")
    rf.add_argument("--record", metavar="DIR", help="record every tank and the migrations into DIR")
    rf.add_argument("--checkpoint", metavar="FILE", help="write the reef's state at every exchange (to --resume)")
    rf.add_argument("--resume", metavar="FILE", help="go on from a --checkpoint file of the same reef file")
    rf.add_argument("--replay", metavar="DIR", help="replay a recorded reef (every tank) and check its reef hash")
    rf.add_argument("--progress", action="store_true", help="headless: a progress line on stderr")
    _add_window_flags(rf, aquarium=False)

    gl = sub.add_parser("glossary", help="list a glossary file's terms and snapshots, diff two snapshots, or review "
                                         "pending terms (glossary review PATH)")
    gl.add_argument("path", help="a glossary SQLite file (referential --glossary PATH), or 'review' or 'check' then "
                                 "the file")
    gl.add_argument("review_path", nargs="?", metavar="PATH", help="with 'review' or 'check': the glossary file")
    gl.add_argument("--diff", nargs=2, type=_int_at_least(1), metavar=("OLD", "NEW"), help="snapshot ids to compare")
    gl.add_argument("--approve", nargs="+", metavar="TERM", default=[], help="review: make these pending terms global")
    gl.add_argument("--reject", nargs="+", metavar="TERM", default=[], help="review: reject these pending terms")
    gl.add_argument("--base-url", metavar="URL", help="check: the OpenAI-compatible server of the model to check")
    gl.add_argument("--model", metavar="NAME", help="check: the model to check (glossary check PATH --base-url … "
                                                     "--model …: which terms it still reads as defined)")
    gl.add_argument("--rounds", type=_int_at_least(1), default=40, help="check: rounds to play (default 40)")
    gl.add_argument("--timeout", metavar="S", type=_seconds, default=20.0, help="check: seconds per model call")

    sw = sub.add_parser("sweep", help="run a parameter sweep: many seeded headless runs, in parallel or on a "
                                      "Dask cluster, with tables and plots")
    sw.add_argument("spec", help="a sweep file (TOML; examples in assets/sweeps/)")
    sw.add_argument("--out", metavar="DIR", help="results folder (default saves/sweeps/<sweep file name>); a sweep "
                                                 "started again with the same folder resumes, skipping finished runs")
    sw.add_argument("--workers", type=_int_at_least(1), default=os.cpu_count() or 1,
                    help=f"local processes running at once (default: the cores, {os.cpu_count() or 1})")
    sw.add_argument("--cluster", metavar="ADDRESS", help="run on an existing Dask cluster instead, e.g. "
                                                         "tcp://127.0.0.1:8786 (pip install -e '.[cluster]')")
    sw.add_argument("--record", action="store_true",
                    help="keep each run's recording (aquarium), round log (referential) or session database "
                         "(negotiation) in OUT/runs/")
    sw.add_argument("--overwrite", action="store_true", help="start afresh in a folder that holds another sweep")
    sw.add_argument("--dry-run", action="store_true", help="print each run's single command and exit")
    sw.add_argument("--base-url", metavar="URL", help="aquarium: the model server every run asks (runs whose "
                                                      "settings say brain.kind = \"llm\")")
    sw.add_argument("--model", metavar="NAME", help="aquarium: the model on that server")

    tr = sub.add_parser("trace", help="isolate one fish: its view and decisions per tick, neighbours restored")
    tr.add_argument("path", help="a recording (only read)")
    tr.add_argument("--fish", type=_int_at_least(0), required=True, metavar="ID", help="the fish to trace")
    tr.add_argument("--from", dest="t0", type=_int_at_least(0), required=True, metavar="T0", help="first tick")
    tr.add_argument("--to", dest="t1", type=_int_at_least(1), required=True, metavar="T1", help="last tick, excluded")

    ra = sub.add_parser("reask", help="send a fish's recorded model request again (same or another model, K times) "
                                      "and compare the answers with the recorded one")
    ra.add_argument("path", help="a recording of a model run (only read)")
    ra.add_argument("--fish", type=_int_at_least(0), required=True, metavar="ID", help="the fish")
    ra.add_argument("--tick", type=_int_at_least(0), required=True, metavar="T", help="the tick it asked at")
    ra.add_argument("--base-url", metavar="URL", help="ask this server (default: the recorded one)")
    ra.add_argument("--model", metavar="NAME", help="ask this model (default: the recorded one)")
    ra.add_argument("--n", type=_int_at_least(1, 100), default=1, metavar="K", help="ask K times (default 1)")
    ra.add_argument("--timeout", metavar="S", type=_seconds, default=60.0,
                    help="one answer takes at most S seconds (default 60)")
    ra.add_argument("--json", action="store_true", help="print JSON instead of text")

    df = sub.add_parser("diff", help="compare two recordings (a run and its fork) tick by tick, or two windows of "
                                     "one recording (--a T1:T2 --b T3:T4)")
    df.add_argument("path", help="recording A (only read)")
    df.add_argument("other", nargs="?", help="recording B (only read); leave out to compare two windows of A")
    df.add_argument("--a", dest="wa", metavar="T1:T2", help="windows: the first window of ticks")
    df.add_argument("--b", dest="wb", metavar="T3:T4", help="windows: the second window of ticks")
    df.add_argument("--json", action="store_true", help="print JSON instead of text")
    df.add_argument("--png", metavar="OUT", help="also draw the comparison into a PNG file")
    df.add_argument("--overwrite", action="store_true", help="replace an existing --png file")
    return parser


def _config_from(args: argparse.Namespace) -> Config:
    top = {"seed": args.seed, "fish.count": args.fish, "engine.speed": getattr(args, "speed", None),
           "brain.kind": args.brain, "brain.budget_tokens": args.budget_tokens}
    if args.base_url or args.model:
        if not (args.base_url and args.model):
            raise UsageError("mirofish live: --base-url and --model go together")
        top["brain.small.endpoints"] = [{"base_url": args.base_url, "model": args.model}]
        top["brain.kind"] = args.brain or "llm"
    if args.large_base_url or args.large_model:
        top["brain.large.endpoints"] = [{"base_url": args.large_base_url or args.base_url,
                                         "model": args.large_model or args.model}]
    return load_config(args.config, args.overrides, preset=args.preset, **top)


# ---------------------------------------------------------------- live, headless


def guard_output(path, inputs=(), overwrite: bool = False, what: str = "output") -> None:
    """Refuse an unsafe output path before any work (see mirofish.observe.paths)."""
    from .observe.paths import OutputError, check_output

    try:
        check_output(path, inputs, overwrite, what)
    except OutputError as exc:
        raise UsageError(f"mirofish: {exc}") from None


# ---------------------------------------------------------------- live, terminal view


def run_terminal(cfg: Config, ticks: int | None, record: str | None = None, overwrite: bool = False,
                 cache=None) -> int:
    """The live aquarium in the terminal, realtime at ``engine.speed``; Ctrl-C quits."""
    from .observe import ascii as ascii_view
    from .pacing import Pacer
    from .session import LiveSession

    engine = LiveSession(cfg, mode="realtime", cache=cache)
    pacer = Pacer(cfg.world.tick_seconds, cfg.engine.speed)
    recorder = _recorder(record, engine, overwrite)
    clear, home = "\x1b[2J", "\x1b[H"
    sys.stdout.write(clear)
    last_drawn = -1
    try:
        while ticks is None or engine.tick < ticks:
            due = pacer.due(time.perf_counter(), 64 if ticks is None else ticks - engine.tick)
            engine.run(due)
            if engine.tick != last_drawn:
                last_drawn = engine.tick
                snap = engine.snapshot()
                sys.stdout.write(home + ascii_view.render(snap) + "\n" + ascii_view.status_line(snap)
                                 + f"\n{ascii_view.LEGEND}   speed {pacer.speed:g}x   Ctrl-C quits\x1b[K\n")
                sys.stdout.flush()
            time.sleep(0.02)
    except KeyboardInterrupt:
        pass
    finally:
        if recorder is not None:
            recorder.close()
        engine.close()
    print(json.dumps({"ticks": engine.tick, "final_state_hash": engine.state_hash()}))
    return 0


# ---------------------------------------------------------------- recordings


def run_replay(args: argparse.Namespace) -> int:
    from .observe.recording import TURN_SCENES, recording_scene
    from .session import ReplaySession

    kind = recording_scene(args.path)
    if kind in TURN_SCENES:
        return _replay_rounds(args) if kind == "referential" else _replay_turns(args)
    player = ReplaySession(args.path)
    _check_select(args, player.cfg.fish.slots)
    cache = _reply_cache(args.reply_cache)
    filled = cache.fill(player.recording.model_calls()) if cache is not None else None
    if args.headless:
        target = player.last_tick if args.to_tick is None else args.to_tick
        if not player.first_tick <= target <= player.last_tick:
            raise UsageError(f"mirofish replay: --to-tick {target} is outside the recording "
                             f"({player.first_tick}..{player.last_tick})")
        if args.verify:  # every tick from the first, each checked against the recording
            player.seek(player.first_tick)
            while player.tick < target:
                player.step()
        else:
            player.seek(target)
        w = player.world
        print(json.dumps({"tick": player.tick, "state_hash": player.state_hash(),
                          "mean_energy": round(float(w.school.energy.mean()) / 100, 2),
                          "low_energy_fish": w.low_energy_count(), "first_tick": player.first_tick,
                          "last_tick": player.last_tick, "recorded": player.recorded_metrics(),
                          **({"verified_ticks": target - player.first_tick} if args.verify else {}),
                          **({"reply_cache": {"folder": args.reply_cache, "replies_added": filled}}
                             if cache is not None else {})}))
        return 0
    if args.terminal:
        return _play_terminal(player, args.at_tick or player.first_tick, args.speed)
    from .ui.app import run_window
    from .ui.scenes.aquarium import AquariumScene
    from .ui.scenes.handoff import HandoffScene
    from .ui.scenes.negotiation import NegotiationScene
    from .ui.scenes.referential import ReferentialScene

    scene = AquariumScene(player)
    scene.set_speed(args.speed)
    scene.show_charts = args.charts
    if args.at_tick is not None:
        scene.seek(args.at_tick)
    return run_window(scene, args.screenshot, args.frames, args.select, args.fps, _size(args.size),
                      more=[ReferentialScene(), NegotiationScene(), HandoffScene()])


def _play_terminal(player, start: int, speed: float) -> int:
    """Terminal playback until the end of the recording; Ctrl-C stops."""
    from .observe import ascii as ascii_view

    player.seek(start)
    tick_s = player.cfg.world.tick_seconds / speed
    sys.stdout.write("\x1b[2J")
    try:
        while True:
            snap = player.snapshot()
            sys.stdout.write("\x1b[H" + ascii_view.render(snap) + "\n"
                             + f"replay tick {snap.tick}/{player.last_tick}  speed {speed:g}x  Ctrl-C stops\x1b[K\n")
            sys.stdout.flush()
            if player.step() is None:
                break
            time.sleep(tick_s)
    except KeyboardInterrupt:
        pass
    print(json.dumps({"tick": player.tick, "state_hash": player.state_hash()}))
    return 0


def run_clip(args: argparse.Namespace) -> int:
    from .ui.clip import ClipError, make_clip

    if not 1.0 <= args.zoom <= 8.0:
        raise UsageError(f"mirofish clip: --zoom must be 1 to 8, got {args.zoom:g}")
    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:
            sys.stderr.write(f"\rclip: tick {done}/{total}  ")

    try:
        result = make_clip(args.path, args.out, args.t_from, args.t_to, args.follow, args.speed, _size(args.size),
                           args.hud, args.zoom, args.overwrite, progress)
    except ClipError as exc:
        print(f"mirofish: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        if tty:
            sys.stderr.write("\n")
    print(json.dumps(result))
    return 0


def _replay_turns(args: argparse.Namespace) -> int:
    """``replay`` of a negotiation recording: headless, every session checked turn by turn;
    else the window, stepping through a session's turns with a timeline."""
    from .scenes.negotiation.recording import NegotiationRecording, verify

    rec = NegotiationRecording(args.path)
    try:
        if args.session is not None:
            rec.session(args.session)  # one line if it is not there
        if args.headless:
            print(json.dumps(verify(rec)))
            return 0
    except BaseException:
        rec.close()
        raise
    from .ui.app import run_window
    from .ui.scenes.negotiation import NegotiationScene

    scene = NegotiationScene.replaying(rec, args.session)
    return run_window(scene, args.screenshot, args.frames, None, args.fps, _size(args.size))


def _replay_rounds(args: argparse.Namespace) -> int:
    """``replay`` of a referential game: headless, every round played again and checked; else
    the window, with a timeline over the rounds."""
    from .scenes.referential.recording import ReferentialRecording, verify

    rec = ReferentialRecording(args.path)
    if args.headless:
        try:
            print(json.dumps(verify(rec)))
        finally:
            rec.close()
        return 0
    from .ui.app import run_window
    from .ui.scenes.referential import ReferentialScene

    return run_window(ReferentialScene.replaying(rec), args.screenshot, args.frames, None, args.fps, _size(args.size))


def _fork_turns(args: argparse.Namespace) -> int:
    from .scenes.negotiation.recording import NegotiationRecording, fork_summary

    if args.at_turn is None or args.repair is None or args.at is not None or args.fish is not None:
        raise UsageError(f"mirofish fork: {args.path} is a negotiation recording: a negotiation forks with --at-turn N "
                         f"--repair STRATEGY (--at and --fish fork an aquarium)")
    rec = NegotiationRecording(args.path)
    try:
        print(json.dumps(fork_summary(rec, args.session, args.at_turn, args.repair, args.record, args.overwrite)))
    finally:
        rec.close()
    return 0


def run_fork(args: argparse.Namespace) -> int:
    from . import interventions as ivs
    from .observe.recording import TURN_SCENES, recording_scene
    from .session import fork

    kind = recording_scene(args.path)
    if kind == "referential":
        raise UsageError("mirofish fork: a referential game's recording replays (replay, export --tables); forks "
                         "are for the aquarium and the negotiation")
    if kind in TURN_SCENES:
        return _fork_turns(args)
    if args.at is None:
        raise UsageError("mirofish fork: --at T is required (the tick to fork at)")
    if args.at_turn is not None or args.repair is not None:
        raise UsageError("mirofish fork: --at-turn and --repair fork a negotiation recording; this one is an aquarium")
    swap = args.plan or args.action
    if (args.fish is None) != (swap is None):
        raise UsageError("mirofish fork: --fish and --plan/--action go together (or leave both out and intervene)")
    try:
        now = ([ivs.parse_point(t, "food") for t in args.drop_food] + [ivs.parse_point(t, "rock") for t in args.rock]
               + [ivs.parse_point(t, "clear") for t in args.clear_rock] + [ivs.parse_current(t) for t in args.current]
               + [ivs.parse_add(t) for t in args.add_fish] + [{"kind": "remove", "fish": n} for n in args.remove_fish])
        later = ivs.read_file(args.interventions) if args.interventions else []
    except ivs.InterventionError as exc:
        raise UsageError(f"mirofish fork: {exc}") from None
    if any(t < args.at for t, _ in later):
        raise UsageError(f"mirofish fork: {args.interventions} has an intervention before --at {args.at}")
    added = [(args.at, iv) for iv in now] + later
    if swap is None and not added:
        raise UsageError("mirofish fork: say what changes: --fish with --plan/--action, or an intervention "
                       "(--drop-food, --rock, --clear-rock, --current, --add-fish, --remove-fish, --interventions)")
    print(json.dumps(fork(args.path, args.at, args.fish, swap, args.ticks, args.record,
                          overwrite=args.overwrite, base_url=args.base_url, model=args.model,
                          cache=_reply_cache(args.reply_cache), added=added)))
    return 0


def _reply_cache(folder: str | None):
    """``--reply-cache DIR`` as a reply cache (None without the flag)."""
    if folder is None:
        return None
    from .brains.exchanges import ReplyCache

    try:
        return ReplyCache(folder)
    except (OSError, ValueError) as exc:
        raise UsageError(f"mirofish: --reply-cache {folder}: {exc}") from None


def run_report(args: argparse.Namespace) -> int:
    from .session.report import fish_report, render_text
    from .ui.figures import report_png

    if args.png:
        guard_output(args.png, (args.path,), args.overwrite, "chart")
    report = fish_report(args.path, args.fish, args.t0, args.t1)
    print(render_text(report))
    if args.png:
        report_png(report, args.png)
        print(f"chart written to {args.png}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    if args.tables is not None:
        if args.around is not None or args.out is not None:
            raise UsageError("mirofish export: --tables DIR writes tables; --around/--out copy a window (not both)")
        from .observe.recording import TURN_SCENES, recording_scene
        from .session.tables import export_tables

        scene = "" if Path(args.path).is_dir() else recording_scene(args.path)
        if scene in TURN_SCENES:  # a negotiation's turns, a referential game's rounds
            from .scenes.negotiation.recording import export_turn_tables
            from .scenes.referential.recording import export_round_tables

            write = export_round_tables if scene == "referential" else export_turn_tables
            print(json.dumps(write(args.path, args.tables, args.format, args.overwrite)))
            return 0

        print(json.dumps(export_tables(args.path, args.tables, args.format, args.t_from, args.t_to, args.every,
                                       args.overwrite)))
        return 0
    if args.around is None or args.out is None:
        raise UsageError("mirofish export: give --around T --out OUT (a window), or --tables DIR (tables)")
    from .session import export_window

    print(json.dumps(export_window(args.path, args.around, args.radius, args.out, overwrite=args.overwrite)))
    return 0


def run_glossary(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .scenes.referential.glossary import Glossary, GlossaryError

    reviewing = args.path == "review" and args.review_path is not None
    checking = args.path == "check" and args.review_path is not None
    path = args.review_path if reviewing or checking else args.path
    if checking:
        return _check_glossary(args, path)
    if args.base_url or args.model:
        raise UsageError("mirofish glossary: --base-url/--model go with: glossary check PATH")
    if args.review_path is not None and not reviewing:
        raise UsageError(f"mirofish glossary: unexpected argument {args.review_path!r} (did you mean: glossary review "
                         f"{args.review_path}?)")
    if (args.approve or args.reject) and not reviewing:
        raise UsageError("mirofish glossary: --approve/--reject go with: glossary review PATH")
    if not Path(path).is_file():
        raise UsageError(f"mirofish: glossary file not found: {path}")
    try:
        g = Glossary(path, read_only=not (reviewing and (args.approve or args.reject)))
        if reviewing:
            g.review_all(args.approve, args.reject)  # every term checked first, then all in one transaction
            print(json.dumps({"approved": args.approve, "rejected": args.reject, "pending": [
                {"term": t.term, "canonical": t.canonical, "proposed_by": t.proposed_by, "usage": t.usage,
                 "success_rate": round(t.success_rate, 4), "agreement": round(t.agreement_rate, 4)}
                for t in g.pending()]}))
        elif args.diff:
            old, new = (g.load_snapshot(i) for i in args.diff)
            print(json.dumps(Glossary.diff(old, new)))
        else:
            print(json.dumps({"terms": g.as_dict(), "snapshots": [
                {"id": i, "run": run, "round": r} for i, run, r in g.snapshots()]}))
        g.close()
    except GlossaryError as exc:
        raise UsageError(f"mirofish: {exc}") from None
    return 0


def _check_glossary(args: argparse.Namespace, path: str) -> int:
    """``glossary check PATH --base-url … --model …``: which terms a model still reads."""
    from pathlib import Path

    from .scenes.referential.glossary import Glossary, GlossaryError
    from .scenes.referential.model_agents import check_glossary

    if not (args.base_url and args.model):
        raise UsageError("mirofish glossary check: give the model to check: --base-url URL --model NAME")
    if not Path(path).is_file():
        raise UsageError(f"mirofish: glossary file not found: {path}")
    try:
        g = Glossary(path, read_only=True)
        try:
            print(json.dumps(check_glossary(g, args.base_url, args.model, args.rounds, timeout_s=args.timeout)))
        finally:
            g.close()
    except GlossaryError as exc:
        raise UsageError(f"mirofish: {exc}") from None
    return 0


def run_handoff(args: argparse.Namespace) -> int:
    from .scenes.handoff.chain import ARMS, evaluate

    writer = None
    if args.agents == "llm":
        if not (args.base_url and args.model):
            raise UsageError("mirofish handoff: --agents llm needs --base-url and --model")
        from .scenes.handoff.model_agents import ModelWriter

        writer = ModelWriter(args.base_url, args.model, args.seed, args.timeout)
    if not args.headless:
        from .ui.app import run_window
        from .ui.scenes.handoff import HandoffScene

        return run_window(HandoffScene(args.seed, args.layers or "L1+2+3", writer), args.screenshot, args.frames,
                          None, args.fps, _size(args.size))
    arms = [args.layers] if args.layers else list(ARMS)
    try:
        out = {name: evaluate(args.tasks, args.seed, ARMS[name], args.l2_every, not args.no_l2_triggers, writer)
               for name in arms}
    finally:
        failures = writer.close() if writer is not None else None
    result = out if len(out) > 1 else out[arms[0]]
    if failures is not None:
        result = {**result, "model_failures": failures}
    print(json.dumps(result))
    return 0


def run_reef(args: argparse.Namespace) -> int:
    from .reef.record import prepare, replay_reef, write
    from .reef.run import Reef, ReefError
    from .reef.spec import load_reef

    try:
        if args.replay:
            if args.path:
                raise UsageError("mirofish reef: give a reef file or --replay DIR, not both")
            print(json.dumps(replay_reef(args.replay)))
            return 0
        if not args.path:
            raise UsageError("mirofish reef: a reef file is needed (REEF.toml), or --replay DIR")
        spec = load_reef(args.path)
        if args.resume and args.record:
            raise UsageError("mirofish reef: --record starts recordings at tick 0; it can't go with --resume")
        for what, path in (("checkpoint", args.checkpoint),):
            if path and path != args.resume:
                guard_output(path, (args.path,), args.overwrite, what)
        folder = prepare(args.record, args.overwrite) if args.record else None
        backend = "dask" if args.cluster else ("local" if args.workers > 1 else "inline")
        if not args.headless:
            if backend != "inline":
                raise UsageError("mirofish reef: the window steps the reef in its own process (no --workers or "
                                 "--cluster; use --headless for those)")
            from .ui.app import run_window
            from .ui.scenes.reef import ReefScene

            return run_window(ReefScene(spec, str(folder) if folder else None), args.screenshot, args.frames,
                              None, args.fps, _size(args.size))
        reef = Reef(spec, backend, args.workers, args.cluster, str(folder) if folder else None, args.checkpoint,
                    args.resume)
        ticks = args.ticks or spec.ticks

        def progress(r: Reef) -> None:
            if args.progress:
                print(f"\rt{r.tick}/{ticks} migrations {len(r.log)}", end="", file=sys.stderr, flush=True)

        try:
            summary = reef.run(ticks, progress)
        except ReefError as exc:
            hint = (f"; resume from the last exchange with --resume {args.checkpoint}" if args.checkpoint
                    else "; run with --checkpoint FILE to be able to resume")
            raise ReefError(f"{exc} at tick {reef.tick}{hint}") from None
        finally:
            reef.close()
            if args.progress:
                print(file=sys.stderr)
        if folder is not None:
            write(folder, reef, summary)
        print(json.dumps(summary))
        return 0
    except ReefError as exc:
        print(f"mirofish: reef: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _negotiation_recorder(args: argparse.Namespace):
    if args.record is None:
        return None
    from .scenes.negotiation.recording import NegotiationRecorder

    inputs = [p for p in (args.db,) if p]
    guard_output(args.record, inputs, args.overwrite, "recording")
    return NegotiationRecorder(args.record, {"seed": args.seed, "repair": not args.no_repair, "layers": args.layers,
                                             "agents": "model" if args.agents == "llm" else "embedded",
                                             **({"model": args.model} if args.agents == "llm" else {})},
                               args.overwrite)


def run_negotiation(args: argparse.Namespace) -> int:
    from .observe.paths import OutputError, check_scene_db
    from .scenes.negotiation.dialogue import evaluate

    try:
        check_scene_db(args.db, {"sessions"}, "negotiation database")
    except OutputError as exc:
        raise UsageError(f"mirofish: {exc}") from None
    speakers_for = close = None
    if args.agents == "llm":
        if not (args.base_url and args.model):
            raise UsageError("mirofish negotiation: --agents llm needs --base-url and --model")
        from .scenes.negotiation.model_agents import model_speakers

        speakers_for, close = model_speakers(args.base_url, args.model, args.seed, args.timeout)
    if not args.headless:
        from .ui.app import run_window
        from .ui.scenes.negotiation import NegotiationScene

        scene = NegotiationScene(args.seed, not args.no_repair, speakers_for, args.layers,
                                 recorder=_negotiation_recorder(args))
        return run_window(scene, args.screenshot, args.frames, None, args.fps, _size(args.size))
    recorder = _negotiation_recorder(args)
    try:
        with _locks([args.db]):  # no other run writes into it meanwhile
            summary, _, _ = evaluate(args.sessions, args.seed, not args.no_repair, db_path=args.db,
                                     speakers_for=speakers_for, layers=args.layers, recorder=recorder)
    finally:
        if recorder is not None:
            recorder.close()  # every finished session stays recorded, Ctrl-C included
        if close:
            summary_failures = close()
    # say plainly who played: embedded agents answer repairs by the simulated world's table
    summary["agents"] = "model" if close else "simulated"
    if close:
        made = summary_failures.pop("model_turns", 0)
        summary["model_failures"] = summary_failures
        fell_back = sum(n for k, n in summary_failures.items() if k != "goal_hash_mismatch")
        summary["model_made"] = {"turns": made, "fell_back": fell_back,
                                 "share": round(made / max(1, made + fell_back), 4)}
    print(json.dumps(summary))
    return 0


def run_referential(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from .scenes.referential.experiment import Experiment
    from .scenes.referential.game import GameConfig
    from .scenes.referential.glossary import GlossaryError

    try:
        given = {"rounds": args.rounds, "seed": args.seed, "condition": args.condition, "candidates": args.candidates,
                 "agents": 3 if args.three else 2, "review": args.review}
        for text in args.game_overrides:
            keys, value = parse_override(text)
            if len(keys) != 1:
                raise UsageError(f"mirofish referential: --set expects key=value (a game setting), got {text!r}")
            given[keys[0]] = value
        cfg = GameConfig(**given)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise UsageError(f"mirofish referential: {'.'.join(map(str, err['loc'])) or 'config'}: "
                         f"{err['msg'].removeprefix('Value error, ')}") from None
    if args.log:
        guard_output(args.log, tuple(filter(None, [args.glossary])), args.overwrite, "log")
    factory = None
    if args.agents == "llm":
        from .scenes.referential.model_agents import model_agent_factory

        if not (args.base_url and args.model):
            raise UsageError("mirofish referential: --agents llm needs --base-url and --model")
        factory = model_agent_factory(args.base_url, args.model, cfg, args.timeout)
    try:
        exp = Experiment(cfg, args.glossary, args.log, args.agents, factory)
    except GlossaryError as exc:
        raise UsageError(f"mirofish: {exc}") from None
    recorder = None
    if args.record:
        from .scenes.referential.recording import ReferentialRecorder

        try:
            recorder = ReferentialRecorder(args.record, exp, args.overwrite, tuple(filter(None, [args.glossary,
                                                                                               args.log])))
        except BaseException:
            exp.close()
            raise
    if not args.headless:
        from .ui.app import run_window
        from .ui.scenes.referential import ReferentialScene

        return run_window(ReferentialScene(exp, recorder), args.screenshot, args.frames, None, args.fps,
                          _size(args.size))
    try:
        with _locks([args.log, args.glossary]):  # no other run writes into them meanwhile
            summary = exp.run()
    finally:
        exp.close()
        if recorder is not None:
            recorder.close()  # every round played is kept, Ctrl-C included
    print(json.dumps(summary))
    return 0


def _locks(paths):
    """The writer locks of a command's output files, as a context manager (one-line refusal)."""
    from .observe.paths import Locks, OutputError

    try:
        return Locks(paths)
    except OutputError as exc:
        raise UsageError(f"mirofish: {exc}") from None


def run_trace(args: argparse.Namespace) -> int:
    from .session import trace_fish

    rows = trace_fish(args.path, args.fish, args.t0, args.t1)
    for r in rows:
        print(f"t{r['tick']}  energy {r['energy']:.2f}  plan {r['plan']}  doing {r['intent']}")
        if "decision" in r:
            again = f"  (the embedded brain now: {r['brain_now']})" if "brain_now" in r else ""
            why = f": {r['reason']}" if r.get("reason") else ""
            print(f"  decided [{r['tier']}{why}] {r['decision']}{again}")
            if r.get("thought"):
                print(f"  thought: \u201c{r['thought']}\u201d")
            for c in r.get("exchanges", []):
                where = "reply cache" if c["cached"] else f"{c['latency_s']:.2f} s"
                print(f"  {c['kind']}: it saw ({c['model']}, {where}, {c['prompt_tokens']}+{c['completion_tokens']} "
                      f"tokens):\n    " + c["user"].replace("\n", "\n    "))
                print(f"    it said [{c['read']}]: {c['reply']!r}")
        print("  " + r["view"].replace("\n", "\n  "))
    agree = [r["agrees"] for r in rows if r.get("agrees") is not None]
    decisions = sum(1 for r in rows if "decision" in r)
    print(json.dumps({"fish": args.fish, "ticks": len(rows), "decisions": decisions,
                      "brain_agrees": sum(agree) if agree else None}))
    return 0


def run_reask(args: argparse.Namespace) -> int:
    from .session.reask import reask, render_reask

    result = reask(args.path, args.fish, args.tick, args.base_url, args.model, args.n, args.timeout)
    print(json.dumps(result) if args.json else render_reask(result))
    return 0


def run_diff(args: argparse.Namespace) -> int:
    from .session.diff import diff_runs, diff_windows, parse_window, render_text
    from .ui.figures import diff_png

    inputs = tuple(p for p in (args.path, args.other) if p)
    if args.png:
        guard_output(args.png, inputs, args.overwrite, "chart")
    if args.other:
        if args.wa or args.wb:
            raise UsageError("mirofish diff: --a/--b compare two windows of one recording; give one recording")
        result = diff_runs(args.path, args.other)
    else:
        if not (args.wa and args.wb):
            raise UsageError("mirofish diff: give a second recording, or two windows --a T1:T2 --b T3:T4")
        try:
            wa, wb = parse_window(args.wa), parse_window(args.wb)
        except ValueError as exc:
            raise UsageError(f"mirofish diff: {exc}") from None
        result = diff_windows(args.path, wa, wb)
    if args.png:
        diff_png(result, args.png)
    if args.json:
        print(json.dumps(result))
    else:
        print(render_text(result))
    return 0


def run_sweep(args: argparse.Namespace) -> int:
    from .kernel import compiled_tick
    from .sweep.backends import BackendError, DaskBackend, LocalBackend
    from .sweep.results import ResultsError, Store, write_outputs
    from .sweep.spec import SpecError, load_spec

    compiled_tick()  # an unknown MIROFISH_TICK is one line here, not a sweep of failed runs
    try:
        spec = load_spec(args.spec, args.base_url, args.model)
    except SpecError as exc:
        raise UsageError(f"mirofish sweep: {exc}") from None
    tasks = spec.tasks()
    if args.dry_run:
        for t in tasks:
            print(t.command_line())
        return 0
    out = Path(args.out) if args.out else Path("saves") / "sweeps" / Path(args.spec).stem
    if out.exists() and not out.is_dir():
        raise UsageError(f"mirofish sweep: --out {out} is a file, not a folder")
    try:
        backend = DaskBackend(args.cluster) if args.cluster else LocalBackend(args.workers)
    except BackendError as exc:
        raise UsageError(f"mirofish sweep: {exc}") from None
    try:
        store = Store(out, spec, args.overwrite)
    except (ResultsError, OSError) as exc:
        backend.close()
        raise UsageError(f"mirofish sweep: {exc}") from None
    finished = store.done()
    todo = [t for t in tasks if t.run_id not in finished]
    record_dir = None
    if args.record:
        record_dir = str((out / "runs").resolve())
        Path(record_dir).mkdir(exist_ok=True)
    bar = _SweepProgress(len(tasks), len(tasks) - len(todo), sys.stderr.isatty() or bool(todo))
    failed = 0
    interrupted = False
    try:
        for row in backend.run(todo, record_dir):
            store.add(row)
            failed += row["status"] != "ok"
            bar.update(row["status"] == "ok")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        backend.close()
        files = write_outputs(store, spec)
        rows = store.rows()
        store.close()
    bar.finish()
    if interrupted:
        print(f"mirofish sweep: interrupted with {len(rows)} of {len(tasks)} runs done (kept in {out}); "
              f"run the same command again to resume", file=sys.stderr)
        return 130
    all_failed = sum(r["status"] != "ok" for r in rows)
    print(json.dumps({"runs": len(tasks), "ran_now": len(todo), "skipped_finished": len(tasks) - len(todo),
                      "failed": all_failed, "backend": backend.name, "out": str(out), **files}))
    if all_failed:
        print(f"mirofish sweep: {all_failed} run(s) failed; their errors are in {out / 'runs.csv'}", file=sys.stderr)
    return 0


class _SweepProgress:
    """Runs done, failures and the time left, on one stderr line."""

    def __init__(self, total: int, already: int, enabled: bool):
        self.total, self.done, self.failed, self.enabled = total, already, 0, enabled
        self.already, self.start = already, time.perf_counter()
        self._draw()

    def update(self, ok: bool) -> None:
        self.done += 1
        self.failed += not ok
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        ran = self.done - self.already
        elapsed = time.perf_counter() - self.start
        left = (self.total - self.done) * elapsed / ran if ran else None
        eta = "--" if left is None else f"{int(left // 60)}m{int(left % 60):02d}s"
        bar = "#" * int(30 * self.done / max(1, self.total))
        sys.stderr.write(f"\r[{bar:<30}] {self.done}/{self.total} runs  ETA {eta}  failures {self.failed}  ")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


# ---------------------------------------------------------------- entry point


class _Redacting:
    """A text stream that never shows a URL's credentials (every line the CLI prints)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        from .config import redact_text

        return self._stream.write(redact_text(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Redacting(out), _Redacting(err)
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C while the parser is built or an error is printed: one line
        print("mirofish: interrupted", file=err)
        return 130
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
            argv = ["live", *argv]
        args = parser.parse_args(argv)
        if getattr(args, "screenshot", None) is not None:
            guard_output(args.screenshot, tuple(filter(None, [getattr(args, "path", None)])), args.overwrite,
                         "screenshot")
        if args.command == "live":
            cfg = _config_from(args)
            _check_select(args, cfg.fish.slots)
            if args.headless:
                progress = args.progress or sys.stderr.isatty()
                run_headless(cfg, args.ticks or 2000, args.ascii, progress, record=args.record,
                             overwrite=args.overwrite, cache=_reply_cache(args.reply_cache), places_of=args.select)
                return 0
            if args.terminal:
                return run_terminal(cfg, args.ticks, args.record, args.overwrite, _reply_cache(args.reply_cache))
            return run_window_live(cfg, args)
        handlers = {"glossary": run_glossary, "negotiation": run_negotiation, "referential": run_referential,
                    "handoff": run_handoff, "reef": run_reef,
                    "sweep": run_sweep,
                    "replay": run_replay, "fork": run_fork, "report": run_report, "export": run_export,
                    "trace": run_trace, "reask": run_reask, "diff": run_diff, "clip": run_clip}
        if args.command in handlers:
            return handlers[args.command](args)
        parser.print_help()
        return EXIT_BAD_INPUT
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    except ConfigError as exc:
        print(f"mirofish: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RecordingError as exc:
        print(f"mirofish: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except WindowError as exc:
        print(f"mirofish: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:  # e.g. more fish than open water
        print(f"mirofish: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:  # Ctrl-C before a command's own handling began: one line, no traceback
        print("mirofish: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a path that cannot be used: too long, under /proc, a full device …
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"mirofish: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RecursionError:
        print("mirofish: an input is nested too deeply", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        import sqlite3

        if isinstance(exc, sqlite3.Error):  # a database file that cannot be written or read
            print(f"mirofish: database error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if isinstance(exc, ModuleNotFoundError) and exc.name in _NEEDED:  # run with a Python MiroFish isn't in
            print(f"mirofish: {exc.name} is not installed for this Python ({sys.executable}); run MiroFish with the "
                  f"one it was installed into, e.g. .venv/bin/python run.py (or pip install -e .)", file=sys.stderr)
            return EXIT_BAD_INPUT
        if os.environ.get("MIROFISH_DEBUG"):
            raise
        print(f"mirofish: unexpected error: {type(exc).__name__}: {exc} (set MIROFISH_DEBUG=1 for details)",
              file=sys.stderr)
        return 1
