"""The negotiation on the command line: ``negotiation`` (headless JSON, ``--record``, the
window), and its side of ``replay`` and ``fork --at-turn N --repair STRATEGY``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .common import (
    UsageError,
    add_model_flags,
    add_window_flags,
    guard_output,
    int_at_least,
    locks,
    prompt_meta,
    prompt_named,
    run_window,
    warn_model_made,
)

SESSIONS = 200  # a headless run's negotiations when --sessions is not given


def arguments(neg: argparse.ArgumentParser) -> None:
    neg.add_argument("--headless", action="store_true", help="no window; print one JSON line of results")
    neg.add_argument("--sessions", type=int_at_least(1, 100_000), default=None,
                     help=f"--headless: negotiations to run (default {SESSIONS}; the window runs them until closed)")
    neg.add_argument("--seed", type=int_at_least(0), default=0, help="random seed (default 0)")
    neg.add_argument("--no-repair", action="store_true", help="no grounding repairs (the signals stay, see --layers)")
    neg.add_argument("--layers", type=int, choices=(0, 1, 2, 3), default=3,
                     help="Argent signal layers: 0 none, 1 (task, goal hash, constraints), 2 (1 + assumptions, "
                          "confidence), 3 (2 + role, handoff context, drift alerts; default)")
    neg.add_argument("--agents", choices=("embedded", "llm"), default="embedded",
                     help="embedded negotiators (default) or a model through --base-url/--model")
    neg.add_argument("--db", metavar="PATH",
                     help="--headless: SQLite file for each session's grounding state and turns (the window keeps "
                          "its turns with --record)")
    neg.add_argument("--record", metavar="OUT", help="record the run (every turn; replay, fork --at-turn and export "
                                                     "--tables read it)")
    add_model_flags(neg, "negotiators")
    add_window_flags(neg, aquarium=False)


def _recorder(args: argparse.Namespace) -> Any:
    if args.record is None:
        return None
    from ..scenes.negotiation.recording import NegotiationRecorder

    inputs = [p for p in (args.db,) if p]
    guard_output(args.record, inputs, args.overwrite, "recording", scene="negotiation")
    return NegotiationRecorder(args.record, {"seed": args.seed, "repair": not args.no_repair, "layers": args.layers,
                                             "agents": "model" if args.agents == "llm" else "embedded",
                                             # model negotiators: the prompt file they were sent (text and hash)
                                             **({"model": args.model, "prompt": prompt_meta("negotiation", args.prompt)}
                                                if args.agents == "llm" else {})},
                               args.overwrite)


def run(args: argparse.Namespace) -> int:
    """``negotiation``: the sessions, headless (one JSON line) or in the window."""
    from ..observe.paths import OutputError, check_scene_db
    from ..scenes.negotiation.dialogue import evaluate

    # the window negotiates until it is closed and keeps no grounding database (its turns go to
    # --record): before, these two were taken there and read by nothing
    for flag, given, why in (("--sessions", args.sessions is not None, "the window negotiates until it is closed"),
                             ("--db", args.db is not None, "the window keeps its turns with --record")):
        if given and not args.headless:
            raise UsageError(f"mirofish negotiation: {flag} is for --headless runs ({why}): add --headless or "
                             f"leave out {flag}")
    try:
        check_scene_db(args.db, {"sessions"}, "negotiation database")
    except OutputError as exc:
        raise UsageError(f"mirofish: {exc}") from None
    speakers_for = close = None
    if args.agents == "llm":
        if not (args.base_url and args.model):
            raise UsageError("mirofish negotiation: --agents llm needs --base-url and --model")
        from ..scenes.negotiation.model_agents import model_speakers

        speakers_for, close = model_speakers(args.base_url, args.model, args.seed, args.timeout, args.prompt)
    if not args.headless:
        from ..ui.scenes.negotiation import NegotiationScene

        scene = NegotiationScene(args.seed, not args.no_repair, speakers_for, args.layers, recorder=_recorder(args))
        return run_window(scene, args)
    recorder = _recorder(args)
    try:
        with locks([args.db]):  # no other run writes into it meanwhile
            sessions = SESSIONS if args.sessions is None else args.sessions
            summary, _, _ = evaluate(sessions, args.seed, not args.no_repair, db_path=args.db,
                                     speakers_for=speakers_for, layers=args.layers, recorder=recorder)
    finally:
        if recorder is not None:
            recorder.close()  # every finished session stays recorded, Ctrl-C included
        failures = close() if close else None
    # say plainly who played: embedded agents answer repairs by the simulated world's table
    summary["agents"] = "model" if close else "simulated"
    if failures is not None:
        made = failures.pop("model_turns", 0)
        summary["model_failures"] = failures
        # notes on turns the model played (a goal hash it got wrong, an offer's number clamped, a message
        # with no words in it) are not fallbacks
        notes = ("goal_hash_mismatch", "offer_clamped", "message_without_words")
        fell_back = sum(n for k, n in failures.items() if k not in notes)
        wordless = failures.get("message_without_words", 0)
        summary["model_made"] = {"turns": made, "fell_back": fell_back,
                                 "share": round(made / max(1, made + fell_back), 4), "without_words": wordless}
        summary["prompt"] = prompt_named("negotiation", args.prompt)
        warn_model_made("negotiation", args.base_url, made, made + fell_back,
                        {k: n for k, n in failures.items() if k not in notes})
        if wordless:  # its offers were played; what it said was nothing: the agreements rest on numbers
            print(f"mirofish negotiation: warning: {wordless} of the model's {made} turns said no words "
                  f"(an offer with a message such as \"1.000\"); its agreements rest on offers alone",
                  file=sys.stderr)
    print(json.dumps(summary))
    return 0


def replay(args: argparse.Namespace) -> int:
    """``replay`` of a negotiation recording: headless, every session checked turn by turn (with
    ``--session K`` that one); else the window, stepping through a session's turns with a
    timeline (``--session K`` shown first)."""
    from ..scenes.negotiation.recording import NegotiationRecording, verify

    rec = NegotiationRecording(args.path)
    try:
        if args.session is not None:
            rec.session(args.session)  # one line if it is not there
        if args.headless:
            print(json.dumps(verify(rec, args.session)))
            return 0
    except BaseException:
        rec.close()
        raise
    from ..ui.scenes.negotiation import NegotiationScene

    return run_window(NegotiationScene.replaying(rec, args.session), args)


def fork_arguments(fk: argparse.ArgumentParser) -> None:
    """The fork flags of a negotiation recording (``--at-turn`` is every turn scene's)."""
    neg = fk.add_argument_group("a negotiation recording (negotiation --record)")
    neg.add_argument("--repair", metavar="STRATEGY",
                     help="the repair strategy at that turn: confirming_restatement, exploratory_question, "
                          "offering_options, revealing_assumptions, rebuilding_consensus")
    neg.add_argument("--session", type=int_at_least(0), default=0, metavar="K",
                     help="the session to fork (default 0)")


def fork(args: argparse.Namespace) -> int:
    """``fork NEG.db --at-turn N --repair STRATEGY [--session K]``."""
    from ..scenes.negotiation.recording import NegotiationRecording, fork_summary

    if args.at_turn is None or args.repair is None:
        raise UsageError(f"mirofish fork: {args.path} is a negotiation recording: a negotiation forks with --at-turn N "
                         f"--repair STRATEGY (--at and --fish fork an aquarium)")
    rec = NegotiationRecording(args.path)
    try:
        print(json.dumps(fork_summary(rec, args.session, args.at_turn, args.repair, args.record, args.overwrite)))
    finally:
        rec.close()
    return 0
