"""The referential game on the command line: ``referential`` (headless JSON, ``--record``, the
window), its side of ``replay``, and ``glossary`` (list, diff, review, check a glossary file)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..brains.client import DEFAULT_TIMEOUT_S
from .common import (
    UsageError,
    add_model_flags,
    add_window_flags,
    guard_output,
    int_at_least,
    locks,
    prompt_named,
    reply_cache,
    run_window,
    seconds,
    warn_model_made,
)


def arguments(ref: argparse.ArgumentParser) -> None:
    ref.add_argument("--headless", action="store_true", help="no window; print one JSON line of results")
    ref.add_argument("--rounds", type=int_at_least(1, 1_000_000), default=400, help="rounds to play (default 400)")
    ref.add_argument("--seed", type=int_at_least(0), default=0, help="random seed (default 0)")
    ref.add_argument("--agents", choices=("embedded", "llm"), default="embedded",
                     help="embedded learners (default) or a model through --base-url/--model")
    ref.add_argument("--condition", choices=("dynamic", "fixed", "natural"), default="dynamic",
                     help="dynamic: agents invent terms; fixed: a given glossary; natural: spelled-out words")
    ref.add_argument("--candidates", type=int_at_least(2), default=5, help="candidates per round (2-20)")
    ref.add_argument("--three", action="store_true", help="a third agent joins half-way (majority rule)")
    ref.add_argument("--set", dest="game_overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="set any game setting (repeatable), e.g. --set candidates=10 --set prune_below=0.2 "
                          "(the fields of GameConfig in mirofish/scenes/referential/game.py)")
    ref.add_argument("--review", action="store_true",
                     help="new terms wait for a person's approval before they become global (window: A approve, "
                          "R reject; or: glossary review PATH); --condition dynamic only (the others invent none)")
    ref.add_argument("--glossary", metavar="PATH", help="SQLite glossary to use and keep (default: in memory)")
    ref.add_argument("--record", metavar="OUT", help="record the game round by round (embedded agents, a new "
                                                     "glossary): replay and export --tables read it")
    ref.add_argument("--log", metavar="PATH",
                     help="JSON Lines round log, one line per round (fields in docs/referential.md)")
    add_model_flags(ref, "agents")
    ref.add_argument("--reply-cache", metavar="DIR", help="llm agents: keep every reply in DIR and answer a request "
                                                          "asked before from it (a game run again asks no server)")
    add_window_flags(ref, aquarium=False)


def _game_config(args: argparse.Namespace) -> Any:
    from pydantic import ValidationError

    from ..config import parse_override
    from ..scenes.referential.game import GameConfig

    if args.review and args.condition != "dynamic":  # (only the dynamic condition's agents invent terms)
        raise UsageError(f"mirofish referential: --review holds new terms for a person, and --condition "
                         f"{args.condition} invents none (only dynamic does): leave out --review")
    try:
        given = {"rounds": args.rounds, "seed": args.seed, "condition": args.condition, "candidates": args.candidates,
                 "agents": 3 if args.three else 2, "review": args.review}
        for text in args.game_overrides:
            keys, value = parse_override(text)
            if len(keys) != 1:
                raise UsageError(f"mirofish referential: --set expects key=value (a game setting), got {text!r}")
            if keys[0] in FLAGGED:  # (one door each: --set rounds=… would skip --rounds' bound and quietly win)
                raise UsageError(f"mirofish referential: --set {keys[0]}=…: use --{FLAGGED[keys[0]]}")
            given[keys[0]] = value
        return GameConfig(**given)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise UsageError(f"mirofish referential: {'.'.join(map(str, err['loc'])) or 'config'}: "
                         f"{err['msg'].removeprefix('Value error, ')}") from None


FLAGGED = {"rounds": "rounds", "seed": "seed"}  # set by their flags only (a sweep's commands give the other
# game settings as --set KEY=VALUE: tests/test_sweep.py reruns one)


def run(args: argparse.Namespace) -> int:
    """``referential``: the game, headless (one JSON line) or in the window."""
    from ..scenes.referential.experiment import Experiment
    from ..scenes.referential.glossary import GlossaryError

    cfg = _game_config(args)
    if args.log:
        guard_output(args.log, tuple(filter(None, [args.glossary])), args.overwrite, "log")
    factory = None
    if args.agents == "llm":
        from ..scenes.referential.model_agents import model_agent_factory

        if not (args.base_url and args.model):
            raise UsageError("mirofish referential: --agents llm needs --base-url and --model")
        factory = model_agent_factory(args.base_url, args.model, cfg, args.timeout, args.prompt,
                                      reply_cache(args.reply_cache))
    try:
        exp = Experiment(cfg, args.glossary, args.log, args.agents, factory)
    except GlossaryError as exc:
        raise UsageError(f"mirofish: {exc}") from None
    recorder = None
    if args.record:
        from ..scenes.referential.recording import ReferentialRecorder

        try:
            recorder = ReferentialRecorder(args.record, exp, args.overwrite, tuple(filter(None, [args.glossary,
                                                                                               args.log])))
        except BaseException:
            exp.close()
            raise
    if not args.headless:
        from ..ui.scenes.referential import ReferentialScene

        return run_window(ReferentialScene(exp, recorder), args)
    try:
        with locks([args.log, args.glossary]):  # no other run writes into them meanwhile
            summary = exp.run()
    finally:
        exp.close()
        if recorder is not None:
            recorder.close()  # every round played is kept, Ctrl-C included
    played = turns = 0
    if args.agents == "llm":
        summary["prompt"] = prompt_named("referential", args.prompt)
        mm = summary["model_made"]
        played, turns = mm["sender_turns"] + mm["receiver_turns"], 2 * mm["rounds"]
        if played or not turns:  # some played: a warning when few (a missed turn is lost: no embedded stand-in)
            warn_model_made("referential", args.base_url, played, turns, summary.get("failures", {}), fallback=False)
    print(json.dumps(summary))
    if args.agents == "llm" and turns and not played:
        # the model played no turn: the results measure lost turns, not a game (one line, exit 2, as reask and
        # survey say a server that answered none); the JSON above keeps every count
        from ..config import redact_url

        failures = summary.get("failures", {})
        top = ", ".join(f"{k} {n}" for k, n in sorted(failures.items(), key=lambda kv: -kv[1])[:3] if n)
        print(f"mirofish referential: the model at {redact_url(args.base_url)} played none of {turns} turns"
              f"{f' ({top})' if top else ''}; every one was lost (an empty message, no choice), so the results "
              f"measure no game", file=sys.stderr)
        return 2
    return 0


def replay(args: argparse.Namespace) -> int:
    """``replay`` of a referential game: headless, every round played again and checked; else
    the window, with a timeline over the rounds."""
    from ..scenes.referential.recording import ReferentialRecording, verify

    rec = ReferentialRecording(args.path)
    if args.headless:
        try:
            print(json.dumps(verify(rec)))
        finally:
            rec.close()
        return 0
    from ..ui.scenes.referential import ReferentialScene

    return run_window(ReferentialScene.replaying(rec), args)


# ---------------------------------------------------------------- glossary


def glossary_arguments(gl: argparse.ArgumentParser) -> None:
    gl.add_argument("path", help="a glossary SQLite file (referential --glossary PATH), or 'review' or 'check' then "
                                 "the file")
    gl.add_argument("review_path", nargs="?", metavar="PATH", help="with 'review' or 'check': the glossary file")
    gl.add_argument("--diff", nargs=2, type=int_at_least(1), metavar=("OLD", "NEW"), help="snapshot ids to compare")
    gl.add_argument("--approve", nargs="+", metavar="TERM", default=[], help="review: make these pending terms global")
    gl.add_argument("--reject", nargs="+", metavar="TERM", default=[], help="review: reject these pending terms")
    gl.add_argument("--base-url", metavar="URL", help="check: the OpenAI-compatible server of the model to check")
    gl.add_argument("--model", metavar="NAME", help="check: the model to check (glossary check PATH --base-url … "
                                                     "--model …: which terms it still reads as defined)")
    gl.add_argument("--rounds", type=int_at_least(1, 100_000), default=40, help="check: rounds to play (default 40)")
    gl.add_argument("--timeout", metavar="S", type=seconds, default=DEFAULT_TIMEOUT_S,
                    help="check: seconds per model call")


def glossary(args: argparse.Namespace) -> int:
    """``glossary PATH`` (terms and snapshots), ``--diff OLD NEW``, ``glossary review PATH``,
    ``glossary check PATH --base-url … --model …``."""
    reviewing = args.path == "review" and args.review_path is not None
    checking = args.path == "check" and args.review_path is not None
    path = args.review_path if reviewing or checking else args.path
    if checking:
        return _check_glossary(args, path)
    _check_glossary_flags(args, reviewing)
    _check_glossary_file(path, args.path == "review")
    from ..scenes.referential.glossary import Glossary, GlossaryError

    try:
        writing = reviewing and bool(args.approve or args.reject)
        if writing:  # a glossary, undamaged, the verdicts all possible — checked without writing a byte
            ro = Glossary(path, read_only=True)
            try:
                ro.check_review(args.approve, args.reject)
            finally:
                ro.close()
        g = Glossary(path, read_only=not writing)
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


def _check_glossary_file(path: str, review_hint: bool = False) -> None:
    """A glossary path names a regular file: one line for a missing one, a folder, a FIFO, a device."""
    from ..files import not_a_file

    kind = not_a_file(path)
    if kind == "not found":
        raise UsageError(f"mirofish: glossary file not found: {path}"
                         + ("; review one: glossary review PATH" if review_hint else ""))
    if kind is not None:
        raise UsageError(f"mirofish: glossary {path} is {kind}, not a glossary file")


def _check_glossary_flags(args: argparse.Namespace, reviewing: bool) -> None:
    if args.base_url or args.model:
        raise UsageError("mirofish glossary: --base-url/--model go with: glossary check PATH")
    if args.review_path is not None and not reviewing:
        raise UsageError(f"mirofish glossary: unexpected argument {args.review_path!r} (did you mean: glossary review "
                         f"{args.review_path}?)")
    if (args.approve or args.reject) and not reviewing:
        raise UsageError("mirofish glossary: --approve/--reject go with: glossary review PATH")


def _check_glossary(args: argparse.Namespace, path: str) -> int:
    """``glossary check PATH --base-url … --model …``: which terms a model still reads."""
    from ..scenes.referential.glossary import Glossary, GlossaryError
    from ..scenes.referential.model_agents import check_glossary

    if not (args.base_url and args.model):
        raise UsageError("mirofish glossary check: give the model to check: --base-url URL --model NAME")
    _check_glossary_file(path)
    try:
        g = Glossary(path, read_only=True)
        try:
            result = check_glossary(g, args.base_url, args.model, args.rounds, timeout_s=args.timeout)
        finally:
            g.close()
    except GlossaryError as exc:
        raise UsageError(f"mirofish: {exc}") from None
    print(json.dumps(result))
    failed = sum(result["model_failures"].values())
    if result["rounds"] and failed >= result["rounds"]:  # no answer at all: no term was lost, none was checked
        from ..config import redact_url

        print(f"mirofish glossary check: the model at {redact_url(args.base_url)} answered none of the "
              f"{result['rounds']} rounds ({', '.join(f'{k} {v}' for k, v in result['model_failures'].items())}); "
              f"no term was checked", file=sys.stderr)
        return 2
    return 0
