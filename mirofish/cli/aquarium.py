"""The aquarium on the command line: ``live`` (window, terminal, headless JSON), and the
aquarium's side of ``replay`` and ``fork``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from ..actions import ACTION_NAMES
from ..brains.prompts import prompts_of
from ..config import Config, load_config
from ..grid import HEX
from ..session.headless import _recorder, run_headless
from .common import (
    MAX_TICKS,
    UsageError,
    add_config_flags,
    add_window_flags,
    check_select,
    int_at_least,
    reply_cache,
    run_window,
    speed,
)

if TYPE_CHECKING:
    from ..registry import Registry


def arguments(live: argparse.ArgumentParser) -> None:
    live.add_argument("--headless", action="store_true",
                      help="no view; print JSON. Lockstep runs as fast as possible; with --set engine.mode=realtime "
                      "it keeps the simulated clock at --speed (as the window does)")
    live.add_argument("--terminal", action="store_true", help="the tank as characters in the terminal")
    add_window_flags(live, ascii_select=True)
    live.add_argument("--ticks", type=int_at_least(1, MAX_TICKS), help="ticks to run (headless default 2000)")
    live.add_argument("--fish", type=int_at_least(1), help="number of fish (default 60)")
    live.add_argument("--seed", type=int_at_least(0), help="random seed (default 7)")
    live.add_argument("--speed", type=speed, help="live view and realtime headless: simulated speed, 0.25 to 64 "
                      "(default 1 = 2 ticks/s)")
    live.add_argument("--ascii", nargs="?", const=100, type=int_at_least(1), metavar="K",
                      help="headless: print the whole tank as characters every K ticks (default 100)")
    live.add_argument("--progress", action="store_true", help="headless: progress bar on stderr even if not a TTY")
    live.add_argument("--record", metavar="PATH", help="write the run to a recording (SQLite), e.g. saves/run.db")
    live.add_argument("--brain", metavar="BRAIN",
                      help="who decides: instinct (default), llm, or your own brain — FILE.py:NAME, MODULE:NAME or "
                           "an installed mirofish.brains entry point (docs/brains.md)")
    live.add_argument("--base-url", metavar="URL", help="llm: OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1")
    live.add_argument("--model", metavar="NAME", help="llm: model name on that server (small tier)")
    live.add_argument("--large-base-url", metavar="URL", help="llm: server of the large tier (default: --base-url)")
    live.add_argument("--large-model", metavar="NAME", help="llm: model of the large tier")
    live.add_argument("--prompt", metavar="FILE",
                      help="the fish prompt file (brain.prompt; assets/prompts/fish.toml is the bundled one, "
                           "docs/prompts.md)")
    live.add_argument("--memory", metavar="MEMORY",
                      help="what a decision is told of the fish's memory (memory.kind): two_level (default), none, "
                           "vector, or your own — FILE.py:NAME, MODULE:NAME or a mirofish.memories entry point "
                           "(docs/memory.md)")
    live.add_argument("--plan-types", metavar="FILE",
                      help="plan types of this run's own, one [[plan]] table each in a TOML file (a new behaviour "
                           "as data; its recordings keep the rows: docs/extending.md)")
    live.add_argument("--budget-tokens", type=int_at_least(0), metavar="N",
                      help="llm: token budget; at 80 %% small tier only, at 100 %% instinct only")
    live.add_argument("--reply-cache", metavar="DIR",
                      help="llm: answer repeated requests from replies kept in DIR (and keep new ones there), so "
                           "experiments repeated against a paid API do not pay twice")
    add_config_flags(live)


def run(args: argparse.Namespace) -> int:
    """``live``: headless JSON, the terminal, or the window."""
    cfg = config_from(args)
    check_select(args, cfg.fish.slots)
    reg = run_registry(args.plan_types)
    if args.headless:
        progress = args.progress or sys.stderr.isatty()
        run_headless(cfg, args.ticks or 2000, args.ascii, progress, record=args.record,
                     overwrite=args.overwrite, cache=reply_cache(args.reply_cache), places_of=args.select,
                     registry=reg)
        return 0
    if args.terminal:
        return run_terminal(cfg, args.ticks, args.record, args.overwrite, reply_cache(args.reply_cache), reg)
    return run_window_live(cfg, args, reg)


def run_registry(plan_types: str | None) -> Registry | None:
    """The run's registry: the process's, with ``--plan-types FILE``'s rows (one line for a bad file)."""
    if plan_types is None:
        return None
    from ..registry import with_plan_file

    try:
        return with_plan_file(plan_types)
    except ValueError as exc:
        raise UsageError(f"mirofish live: {exc}") from None


def config_from(args: argparse.Namespace) -> Config:
    top = {"seed": args.seed, "fish.count": args.fish, "engine.speed": getattr(args, "speed", None),
           "brain.kind": args.brain, "brain.budget_tokens": args.budget_tokens,
           "brain.prompt": getattr(args, "prompt", None), "memory.kind": getattr(args, "memory", None)}
    if args.base_url or args.model:
        if not (args.base_url and args.model):
            raise UsageError("mirofish live: --base-url and --model go together")
        top["brain.small.endpoints"] = [{"base_url": args.base_url, "model": args.model}]
        top["brain.kind"] = args.brain or "llm"
    if args.large_base_url or args.large_model:
        top["brain.large.endpoints"] = [{"base_url": args.large_base_url or args.base_url,
                                         "model": args.large_model or args.model}]
    cfg = load_config(args.config, args.overrides, preset=args.preset, **top)
    prompts_of(cfg)  # a prompt file that cannot be used: one line before the run starts
    from ..brains.prompts import load_prompt

    for g in range(-1, len(cfg.fish.groups)):  # a prompt named for an instinct part (it asks no model): checked too
        part = cfg if g < 0 else cfg.for_group(g)
        if part.brain.prompt:
            load_prompt(part.brain.prompt)
    return cfg


def other_scenes() -> list[Any]:
    """A fresh window of every other scene that has one, for the window's scene switcher (S)."""
    from ..scenes.registry import scenes
    from ..ui.fronts import has_window, window

    return [window(s)() for s in scenes() if has_window(s) and s.name != "aquarium"]


def run_window_live(cfg: Config, args: argparse.Namespace, registry: Registry | None = None) -> int:
    from ..observe.recording import RecordingError
    from ..ui.scenes.aquarium import AquariumScene

    scene = AquariumScene.live(cfg, cache=reply_cache(args.reply_cache), registry=registry)
    scene.show_charts = args.charts
    if args.record:
        try:
            scene.session.start_recording(args.record, args.overwrite)  # type: ignore[attr-defined]
        except RecordingError:
            scene.close()
            raise
    return run_window(scene, args, args.select, more=other_scenes())


def run_terminal(cfg: Config, ticks: int | None, record: str | None = None, overwrite: bool = False,
                 cache: Any = None, registry: Registry | None = None) -> int:
    """The live aquarium in the terminal, realtime at ``engine.speed``; Ctrl-C quits."""
    from ..observe import ascii as ascii_view
    from ..pacing import Pacer
    from ..session import LiveSession

    engine = LiveSession(cfg, mode="realtime", cache=cache, own_memory=True, registry=registry)
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
                                 + f"\n{ascii_view.HEX_LEGEND if snap.grid == 'hex' else ascii_view.LEGEND}   "
                                 f"speed {pacer.speed:g}x   Ctrl-C quits\x1b[K\n")
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


# ---------------------------------------------------------------- replay, fork


def replay(args: argparse.Namespace) -> int:
    """``replay REC`` of an aquarium recording: headless to a tick (``--verify``: every tick
    checked), in the terminal, or in the window."""
    from ..session import ReplaySession

    player = ReplaySession(args.path)
    player.choice = reader_choice(args, "replay")  # its forks' brain and its questions' server: the user's
    check_select(args, player.cfg.fish.slots)
    cache = reply_cache(args.reply_cache)
    filled = cache.fill(player.recording.model_calls()) if cache is not None else None
    if args.headless:
        return _replay_headless(args, player, filled)
    if args.at_tick is not None and not player.first_tick <= args.at_tick <= player.last_tick:
        raise UsageError(f"mirofish replay: --at-tick {args.at_tick} is outside the recording "
                         f"({player.first_tick}..{player.last_tick})")
    if args.terminal:
        return _play_terminal(player, args.at_tick or player.first_tick, args.speed)
    from ..ui.scenes.aquarium import AquariumScene

    scene = AquariumScene(player)
    scene.set_speed(args.speed)
    scene.show_charts = args.charts
    if args.at_tick is not None:
        scene.seek(args.at_tick)
    return run_window(scene, args, args.select, more=other_scenes())


def _replay_headless(args: argparse.Namespace, player: Any, filled: int | None) -> int:
    target = player.last_tick if args.to_tick is None else args.to_tick
    if not player.first_tick <= target <= player.last_tick:
        raise UsageError(f"mirofish replay: --to-tick {target} is outside the recording "
                         f"({player.first_tick}..{player.last_tick})")
    if args.verify:  # every tick from the first, each checked against the recording, and every keyframe read
        player.verify(target)
    else:
        player.seek(target)
    w = player.world
    print(json.dumps({"tick": player.tick, "state_hash": player.state_hash(),
                      "mean_energy": round(w.mean_energy(), 2),
                      "low_energy_fish": w.low_energy_count(), "first_tick": player.first_tick,
                      "last_tick": player.last_tick, "recorded": player.recorded_metrics(),
                      **({"verified_ticks": target - player.first_tick} if args.verify else {}),
                      **({"reply_cache": {"folder": args.reply_cache, "replies_added": filled}}
                         if filled is not None else {})}))
    return 0


def _play_terminal(player: Any, start: int, playback: float) -> int:
    """Terminal playback until the end of the recording; Ctrl-C stops."""
    from ..observe import ascii as ascii_view

    player.seek(start)
    tick_s = player.cfg.world.tick_seconds / playback
    sys.stdout.write("\x1b[2J")
    try:
        while True:
            snap = player.snapshot()
            sys.stdout.write("\x1b[H" + ascii_view.render(snap) + "\n"
                             + f"replay tick {snap.tick}/{player.last_tick}  speed {playback:g}x  Ctrl-C stops\x1b[K\n")
            sys.stdout.flush()
            if player.step() is None:
                break
            time.sleep(tick_s)
    except KeyboardInterrupt:
        pass
    print(json.dumps({"tick": player.tick, "state_hash": player.state_hash()}))
    return 0


def fork_arguments(fk: argparse.ArgumentParser) -> None:
    """The fork flags of an aquarium recording."""
    fk.add_argument("--at", type=int_at_least(0), metavar="T", help="the tick of the swapped decision")
    fk.add_argument("--fish", type=int_at_least(0), metavar="ID",
                    help="the fish whose decision changes (with --plan or --action)")
    swap = fk.add_mutually_exclusive_group()
    swap.add_argument("--plan", metavar="PLAN",
                      help="new plan, e.g. 'school 60', 'explore east 30', 'forage', 'rest 10', 'keep_away glass' "
                           "(every word is read: a word it would skip, like -5 or 1.5, is refused)")
    swap.add_argument("--action", choices=tuple(dict.fromkeys((*ACTION_NAMES, *HEX.action_names))), metavar="A",
                      help="a single action instead (held one tick, then the brain plans again): "
                      + ", ".join(ACTION_NAMES) + f"; on a hexagonal tank {', '.join(HEX.move_labels)} for the moves")
    fk.add_argument("--replan", action="store_true",
                    help="let triggers (found company, food in view, stuck …) end the new plan before its horizon, "
                         "as for any fish (default: it holds for its horizon; the window's fork picker: key 0)")
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
    iv.add_argument("--remove-fish", action="append", default=[], type=int_at_least(0), metavar="N",
                    help="take fish N out of the water")
    iv.add_argument("--current", action="append", default=[], metavar="DIR,TICKS",
                    help="push every fish that can one cell DIR (north, south, west, east; on a hexagonal tank east, "
                         "north-east, north-west, west, south-west, south-east, or initials: ne) each tick for TICKS "
                         "ticks")
    iv.add_argument("--interventions", metavar="FILE",
                    help="JSON Lines, one {\"tick\": T, \"kind\": food|rock|clear|current|tune|add|remove, ...} "
                         "per line "
                         "(docs/live-past.md); each happens at its tick (>= --at)")
    fk.add_argument("--ticks", type=int_at_least(1, MAX_TICKS), default=600,
                    help="ticks to run after the fork (default 600)")
    fk.add_argument("--outcome", metavar="FIGURE@T",
                    help="also measure an outcome as `influence` does (e.g. largest_school@340): a row of its table "
                         "re-run; with --fish and --plan/--action only")
    reader_flags(fk, "the fork asks")
    fk.add_argument("--reply-cache", metavar="DIR", help="model runs: also keep and reuse replies in DIR")


def reader_flags(p: argparse.ArgumentParser, what: str) -> None:
    """The brain, server and key a reader of a recording may use (``what``: who asks the server,
    with its verb: "the fork asks") — only the user's, never the
    recording's (mirofish/session/trust.py)."""
    p.add_argument("--base-url", metavar="URL",
                   help=f"model runs: the server {what} (without it only the recorded replies answer; a "
                        "recording's own server is never contacted)")
    p.add_argument("--model", metavar="NAME", help="model runs: the model to ask (default: the recorded one)")
    p.add_argument("--api-key-env", metavar="VAR",
                   help="the environment variable with --base-url's key (default OPENAI_API_KEY; never a variable "
                        "the recording names)")
    p.add_argument("--brain", action="append", default=[], metavar="SPEC",
                   help="a run of a user brain: the brain to use, FILE.py:NAME, MODULE:NAME or instinct (GROUP=SPEC "
                        "for one group; a recording never loads code)")


def reader_choice(args: argparse.Namespace, command: str) -> Any:
    """The :class:`~mirofish.session.trust.ReaderChoice` of :func:`reader_flags`' values."""
    from ..observe.recording import RecordingError
    from ..session.trust import ReaderChoice

    try:
        return ReaderChoice.of(getattr(args, "base_url", None), getattr(args, "model", None),
                               getattr(args, "api_key_env", None), getattr(args, "brain", None) or ())
    except RecordingError as exc:
        raise UsageError(f"mirofish {command}: {exc}") from None


def check_user_brains(command: str, paths: list[str], brains: dict[str | None, str],
                      built_in: dict[str, str] | None = None) -> None:
    """Each ``--brain`` answers for some fish a user brain ran in the recordings ``paths`` (a
    survey's answers, a fork's or a study's decisions after the fork): fish the instinct brain or a
    model ran never ask it, so it would be read by nothing. ``built_in``: how ``command`` puts those
    brains (the instinct brain, a model), for the refusal's line."""
    from ..observe.recording import Recording, RecordingError
    from ..session.survey import user_brain_parts

    if not brains:
        return
    parts: set[str | None] = set()
    kinds: set[str] = set()  # the built-in brains that ran the other fish
    for path in paths:
        try:
            rec = Recording(path)
        except (RecordingError, OSError):
            return  # (the command's own reading says what is wrong with the file)
        try:
            cfg = rec.config
            parts |= user_brain_parts(cfg)
            kinds |= {cfg.for_group(g).brain.kind for g in range(len(cfg.fish.groups) + 1)}
        finally:
            rec.close()
    where = " and ".join(str(p) for p in paths)
    words = built_in or {"instinct": "the instinct brain", "llm": "a model"}
    if not parts:
        flag = next(iter(brains.values())) if None in brains else next(f"{g}={s}" for g, s in brains.items())
        ran = " or ".join(w for k, w in words.items() if k in kinds)
        raise UsageError(f"mirofish {command}: --brain {flag} answers for fish a user brain ran, and every fish of "
                         f"{where} was run by {ran}: leave out --brain")
    for group, spec in brains.items():
        if group is not None and group not in parts:
            groups = sorted(str(p) for p in parts if p is not None)
            ran = f"a user brain ran the groups {', '.join(groups)}" if groups else \
                "a user brain ran the tank, which has no groups: give --brain SPEC"
            raise UsageError(f"mirofish {command}: --brain {group}={spec}: no fish of group {group!r} in {where} was "
                             f"run by a user brain ({ran})")


def fork(args: argparse.Namespace) -> int:
    """``fork REC --at T …`` of an aquarium recording: a swapped decision and/or interventions."""
    from ..session import fork as fork_run

    if args.at is None:
        raise UsageError("mirofish fork: --at T is required (the tick to fork at)")
    swap = args.plan or args.action
    if (args.fish is None) != (swap is None):
        raise UsageError("mirofish fork: --fish and --plan/--action go together (or leave both out and intervene)")
    added, where = _interventions(args)
    if args.replan and swap is None:
        raise UsageError("mirofish fork: --replan is about a swapped plan: give --fish with --plan/--action")
    if swap is None and not added:
        raise UsageError("mirofish fork: say what changes: --fish with --plan/--action, or an intervention "
                         "(--drop-food, --rock, --clear-rock, --current, --add-fish, --remove-fish, --interventions)")
    if args.outcome is not None and (swap is None or added or args.replan):
        raise UsageError("mirofish fork: --outcome measures a swapped decision as influence forks it: give --fish "
                         "with --plan/--action, and no intervention or --replan")
    choice = reader_choice(args, "fork")
    check_user_brains("fork", [args.path], choice.brains)
    out = fork_run(args.path, args.at, args.fish, swap, args.ticks, args.record, overwrite=args.overwrite,
                   cache=reply_cache(args.reply_cache), added=added, replan=args.replan, choice=choice,
                   where=where)
    if args.outcome is not None:
        from ..session.influence import measure_fork

        got = measure_fork(args.path, args.at, args.fish, swap, args.outcome, choice)
        out["outcome"] = {"spec": args.outcome, "value": got["outcome"], "final_hash_at_outcome": got["final_hash"]}
    print(json.dumps(out))
    return 0


def _interventions(args: argparse.Namespace) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """The fork's interventions — those of the flags at ``--at``, and a file's at their ticks —
    and where each was given (``--drop-food 500,5``, ``FILE line 3``: what a refusal of it names)."""
    from .. import interventions as ivs

    flags = [("--drop-food", t, lambda t: ivs.parse_point(t, "food")) for t in args.drop_food] \
        + [("--rock", t, lambda t: ivs.parse_point(t, "rock")) for t in args.rock] \
        + [("--clear-rock", t, lambda t: ivs.parse_point(t, "clear")) for t in args.clear_rock] \
        + [("--current", t, ivs.parse_current) for t in args.current] \
        + [("--add-fish", t, ivs.parse_add) for t in args.add_fish] \
        + [("--remove-fish", n, lambda n: {"kind": "remove", "fish": n}) for n in args.remove_fish]
    try:
        now = [parse(given) for _, given, parse in flags]
        lines = ivs.read_file_lines(args.interventions) if args.interventions else []
    except ivs.InterventionError as exc:
        raise UsageError(f"mirofish fork: {exc}") from None
    later = [(t, iv) for t, iv, _ in lines]
    if any(t < args.at for t, _ in later):
        raise UsageError(f"mirofish fork: {args.interventions} has an intervention before --at {args.at}")
    end = args.at + args.ticks  # the fork's last tick: an intervention from then on would never happen
    if any(t >= end for t, _ in later):
        t = min(t for t, _ in later if t >= end)
        raise UsageError(f"mirofish fork: {args.interventions} has an intervention at t{t}, after the fork ends at "
                         f"t{end} (--at {args.at} + --ticks {args.ticks})")
    return [(args.at, iv) for iv in now] + later, [f"{flag} {given}" for flag, given, _ in flags] + [
        where for _, _, where in lines]

