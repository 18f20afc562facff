"""The commands that read recordings: ``replay``, ``fork`` and ``export`` (each goes to the
recording's scene in the registry), ``clip``, ``report``, ``trace``, ``reask`` and ``diff``
(the aquarium's)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ..scenes.registry import SceneError, SceneSpec, scene, scenes
from .common import UsageError, add_window_flags, guard_output, int_at_least, seconds, speed, window_size
from .fronts import has as has_part
from .fronts import part as scene_part


def recording_spec(path: str, command: str, part: str, records: str | None = None) -> SceneSpec:
    """The scene of the recording at ``path`` (its header says which), if it has ``part`` (and,
    with ``records``, records that: ``influence`` and ``survey`` read a scene's ticks, so the
    scenes a refusal names are those that have both)."""
    from ..observe.recording import recording_scene

    kind = recording_scene(path)
    try:
        spec = scene(kind)
    except SceneError:
        raise UsageError(f"mirofish {command}: {path} is a recording of the scene {kind!r}, which no installed "
                         f"package provides") from None
    def fits(s: SceneSpec) -> bool:
        return has_part(s, part) and (records is None or s.records == records)

    if not fits(spec):
        able = ", ".join(s.name for s in scenes() if fits(s)) or "no scene"
        raise UsageError(f"mirofish {command}: a {kind} recording has no {command} ({command} is for {able}); "
                         f"replay and export --tables read it")
    return spec


# ---------------------------------------------------------------- replay


def replay_arguments(rp: argparse.ArgumentParser) -> None:
    rp.add_argument("path", help="a recording made with --record")
    rp.add_argument("--headless", action="store_true", help="no view: seek and print JSON {tick, state_hash, ...}")
    rp.add_argument("--to-tick", type=int_at_least(0), metavar="T",
                    help="headless: the tick to seek to (default: end)")
    rp.add_argument("--verify", action="store_true",
                    help="headless: re-simulate every tick from the first (not from the nearest keyframe), checking "
                         "each tick's actions and the kept state hashes against the recording; a replay that "
                         "diverges is one line naming the tick (exit 2)")
    rp.add_argument("--at-tick", type=int_at_least(0), metavar="T", help="view: start playing from this tick")
    rp.add_argument("--speed", type=speed, default=1.0, help="view: playback speed, 0.25 to 64 (default 1)")
    rp.add_argument("--terminal", action="store_true", help="play back as characters in the terminal")
    rp.add_argument("--session", type=int_at_least(0), metavar="K",
                    help="negotiation recordings: the one session to check (--headless; default: every one), or "
                         "the session the window shows first (default: the first)")
    rp.add_argument("--reply-cache", metavar="DIR", help="model runs: put every recorded model reply into the reply "
                                                         "cache DIR (for live --reply-cache and fork --reply-cache)")
    rp.add_argument("--influence", metavar="DIR",
                    help="aquarium window: mark the decisions of an influence study (influence --out DIR; DIR or "
                         "its influence.json) on the timeline: pivotal ones amber; a click forks the strongest "
                         "alternative (default: REC.influence/ beside the recording, when it is there)")
    from .aquarium import reader_flags

    reader_flags(rp, "the window's forks and questions ask")
    add_window_flags(rp)


def replay(args: argparse.Namespace) -> int:
    import sys

    from ..session.influence_marks import MarksError, for_command, given

    spec = recording_spec(args.path, "replay", "replay")
    flag = getattr(args, "influence", None)
    aquarium = spec.records == "ticks"
    if flag is not None and not aquarium:
        raise UsageError(f"mirofish replay: --influence marks an aquarium recording's decisions; {args.path} is "
                         f"{_a(spec.name)} recording")
    window = aquarium and not (getattr(args, "headless", False) or getattr(args, "terminal", False))
    try:
        marks = for_command(args.path, flag, window,
                            lambda problem: print(f"mirofish replay: warning: {problem}", file=sys.stderr))
    except MarksError as exc:
        raise UsageError(f"mirofish replay: --influence: {exc}") from None
    _check_replay_flags(args, spec)  # (after --influence's own checks: a study that cannot be used says why)
    with given(args.path, marks):  # the window of this recording shows them
        return int(scene_part(spec, "replay")(args))


# What each built-in scene's replay reads of replay's flags, by how it plays (headless, in the
# terminal, in the window); a flag given where it is not read would do nothing, and is refused.
# A turn scene's replay (scenes/turnscene.py) reads none: it checks every turn and prints JSON.
# A plug-in's own replay is not judged (it may read any of them).
_WINDOW = ("screenshot", "frames", "fps", "size")
_READER = ("base_url", "model", "api_key_env", "brain")  # the window's forks and questions
REPLAY_READS: dict[tuple[str, str], frozenset[str]] = {
    ("aquarium", "headless"): frozenset({"to_tick", "verify", "reply_cache"}),
    ("aquarium", "terminal"): frozenset({"at_tick", "speed", "reply_cache"}),
    ("aquarium", "window"): frozenset({"at_tick", "speed", "reply_cache", "select", "charts", "influence", *_READER,
                                       *_WINDOW}),
    ("referential", "headless"): frozenset(),
    ("referential", "window"): frozenset(_WINDOW),
    ("negotiation", "headless"): frozenset({"session"}),
    ("negotiation", "window"): frozenset({"session", *_WINDOW}),
}
_JUDGED = ("session", "to_tick", "verify", "at_tick", "speed", "reply_cache", "select", "charts", "influence",
           *_READER, *_WINDOW)
_HOW = {"headless": "with --headless", "terminal": "with --terminal", "window": "in the window"}


def _replay_defaults() -> dict[str, Any]:
    p = argparse.ArgumentParser(add_help=False)
    replay_arguments(p)
    return {a.dest: a.default for a in p._actions}


def _where_read(dest: str, scene: str) -> str:
    """``scene``'s replay as far as it reads ``dest``: "an aquarium recording's replay with
    --terminal or in the window" ("" when it never does)."""
    modes = [h for (name, h) in REPLAY_READS if name == scene]
    reading = [h for h in modes if dest in REPLAY_READS[scene, h]]
    if not reading:
        return ""
    return f"{_a(scene)} recording's replay" + ("" if reading == modes else
                                                 " " + " or ".join(_HOW[h] for h in reading))


def _check_replay_flags(args: argparse.Namespace, spec: SceneSpec) -> None:
    """A replay flag the recording's replay does not read, as it plays (see :data:`REPLAY_READS`):
    one line naming the flag and where it acts (before: read by nothing, exit 0)."""
    from ..scenes.turnscene import TurnScene

    turns = isinstance(getattr(scene_part(spec, "replay"), "__self__", None), TurnScene)
    if not turns and spec.name not in {scene for scene, _ in REPLAY_READS}:
        return
    how = "headless" if getattr(args, "headless", False) else "terminal" if getattr(args, "terminal", False) \
        else "window"
    if how == "terminal" and spec.name != "aquarium":  # (only the aquarium plays in the terminal)
        plays = "it replays headless" if turns else "--headless checks it, the window plays it"
        raise UsageError(f"mirofish replay: --terminal plays an aquarium recording; {args.path} is {_a(spec.name)} "
                         f"recording ({plays})")
    reads = frozenset() if turns else REPLAY_READS[spec.name, how]
    defaults = _replay_defaults()
    for dest in _JUDGED:
        if dest in reads or getattr(args, dest, defaults.get(dest)) == defaults.get(dest):
            continue
        flag = "--" + dest.replace("_", "-")
        acts = " or ".join(filter(None, (_where_read(dest, scene) for scene in dict.fromkeys(
            name for name, _ in REPLAY_READS))))
        here = f"{_a(spec.name)} recording's replay" + (
            " (it checks every turn and prints JSON)" if turns else
            f" {_HOW[how]}" if _where_read(dest, spec.name) else "")
        raise UsageError(f"mirofish replay: {flag} does nothing in {here}; it acts in {acts}")


# ---------------------------------------------------------------- fork


def fork_arguments(fk: argparse.ArgumentParser) -> None:
    """The fork command's flags: the shared ones, then each scene's own (its ``fork_arguments``;
    :data:`FORK_OWNERS` keeps which scene each of those flags belongs to, and its default)."""
    fk.add_argument("path", help="the recording to fork (it is only read)")
    fk.add_argument("--at-turn", type=int_at_least(0), metavar="N",
                    help="a recording made turn by turn (negotiation --record): the turn to choose again")
    fk.add_argument("--change", action="append", default=[], metavar="KEY=VALUE",
                    help="a turn-by-turn scene of a plug-in (scenes/turnscene.py): a setting changed from --at-turn on")
    fk.add_argument("--record", metavar="OUT", help="write the fork as its own recording")
    fk.add_argument("--overwrite", action="store_true", help="replace an existing OUT file")
    FORK_OWNERS.clear()
    for s in (s for s in scenes() if has_part(s, "fork_arguments")):
        before = {a.dest for a in fk._actions}
        try:
            scene_part(s, "fork_arguments")(fk)
        except argparse.ArgumentError as exc:
            raise SceneError(f"scene {s.name}: its fork flags clash with another scene's ({exc})") from None
        FORK_OWNERS.update({a.dest: (s.name, a.default) for a in fk._actions if a.dest not in before})


FORK_OWNERS: dict[str, tuple[str, Any]] = {}  # scene-only fork flags: dest → (scene, default)


def fork(args: argparse.Namespace) -> int:
    spec = recording_spec(args.path, "fork", "fork")
    for dest, (owner, default) in FORK_OWNERS.items():
        if owner != spec.name and getattr(args, dest, default) != default:
            flag = "--" + dest.replace("_", "-")
            how = f": {_a(spec.name)} forks with {spec.fork_usage}" if spec.fork_usage else ""
            raise UsageError(f"mirofish fork: {flag} forks {_a(owner)} recording; {args.path} is {_a(spec.name)} "
                             f"recording{how}")
    if spec.records == "ticks" and args.at_turn is not None:
        raise UsageError("mirofish fork: --at-turn forks a recording made turn by turn; this one is an aquarium")
    return int(scene_part(spec, "fork")(args))


def _a(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


# ---------------------------------------------------------------- export


def export_arguments(ex: argparse.ArgumentParser) -> None:
    ex.add_argument("path", help="a recording (only read)")
    ex.add_argument("--around", type=int_at_least(0), metavar="T", help="window: the tick to centre on")
    ex.add_argument("--radius", type=int_at_least(1), default=500, metavar="N",
                    help="window: ticks before and after --around (default 500)")
    ex.add_argument("--out", metavar="OUT", help="window: the new recording (never the input)")
    ex.add_argument("--tables", metavar="DIR", help="write tables (decisions, fish, metrics, memory, runs; "
                                                    "divergence for forks) into DIR instead")
    ex.add_argument("--format", choices=("parquet", "csv"), default="parquet",
                    help="tables: parquet (default; needs pyarrow, pip install -e '.[tables]') or csv")
    ex.add_argument("--from", dest="t_from", type=int_at_least(0), metavar="T", help="tables, otel: first tick "
                                                                                   "(default: the first recorded)")
    ex.add_argument("--to", dest="t_to", type=int_at_least(1), metavar="T", help="tables, otel: last tick, excluded "
                                                                                 "(default: the last recorded)")
    ex.add_argument("--every", type=int_at_least(1), default=10, metavar="K",
                    help="tables: sample each fish's state every K ticks (default 10)")
    ex.add_argument("--otel", metavar="FILE.json", help="write the model exchanges as OpenTelemetry traces "
                                                        "(OTLP/JSON, GenAI conventions; docs/traces.md) instead")
    ex.add_argument("--otel-content", choices=("events", "attributes", "none"), default="events",
                    help="otel: the prompts and replies as span events (default), as gen_ai.input/output.messages "
                         "attributes, or none")
    ex.add_argument("--otel-anchor", metavar="WHEN", default="created",
                    help="otel: the time of the first tick: created (the recording's, default), now, or ISO-8601")
    ex.add_argument("--html", metavar="FILE.html", help="write one self-contained HTML file that plays the "
                                                        "recording in a browser, from disk, with no server "
                                                        "(docs/web.md); --from/--to cut it")
    ex.add_argument("--overwrite", action="store_true", help="replace existing output files")


def export(args: argparse.Namespace) -> int:
    if args.html is not None:
        return export_html(args)
    if args.otel is not None:
        return export_otel(args)
    if args.tables is not None:
        if args.around is not None or args.out is not None:
            raise UsageError("mirofish export: --tables DIR writes tables; --around/--out copy a window (not both)")
        # a sweep's folder is the aquarium's; a recording's header names its scene
        spec = scene("aquarium") if Path(args.path).is_dir() else recording_spec(args.path, "export", "export")
        write = spec.part("export")
        options = {"t_from": args.t_from, "t_to": args.t_to, "every": args.every} if spec.records == "ticks" else {}
        print(json.dumps(write(args.path, args.tables, args.format, args.overwrite, **options)))
        return 0
    if args.around is None or args.out is None:
        raise UsageError("mirofish export: give --around T --out OUT (a window), or --tables DIR (tables)")
    from ..session import export_window

    print(json.dumps(export_window(args.path, args.around, args.radius, args.out, overwrite=args.overwrite)))
    return 0


def export_html(args: argparse.Namespace) -> int:
    """``export REC --html FILE``: the recording as one self-contained HTML player (session/html_export.py)."""
    from ..session.html_export import export_html as write

    if args.tables is not None or args.around is not None or args.out is not None or args.otel is not None:
        raise UsageError("mirofish export: --html FILE writes a page; --tables, --otel and --around/--out are other "
                         "exports (one at a time)")
    guard_output(args.html, (args.path,), args.overwrite, "HTML file")
    print(json.dumps(write(args.path, args.html, args.t_from, args.t_to, args.overwrite)))
    return 0


def export_otel(args: argparse.Namespace) -> int:
    """``export REC --otel FILE.json``: a model run's exchanges as OTLP/JSON (session/otel.py)."""
    from ..session.otel import export_otel as write

    if args.tables is not None or args.around is not None or args.out is not None:
        raise UsageError("mirofish export: --otel FILE writes traces; --tables and --around/--out are other exports "
                         "(one at a time)")
    guard_output(args.otel, (args.path,), args.overwrite, "trace")
    _has_exchanges(args.path)
    print(json.dumps(write(args.path, args.otel, args.otel_content, args.otel_anchor, args.t_from, args.t_to,
                           args.overwrite)))
    return 0


def _has_exchanges(path: str) -> None:
    """A recording of a scene that keeps no model exchanges: one line saying why (its spec's
    ``no_exchanges``), before the exporter opens it."""
    from ..observe.recording import TICK_SCENE, RecordingError, recording_scene

    kind = recording_scene(path)
    if kind == TICK_SCENE:
        return
    try:
        why = scene(kind).no_exchanges or "its scene keeps no model exchanges"
    except SceneError:
        why = "its scene keeps no model exchanges"
    raise RecordingError(f"{path} is a {kind} recording: {why}; export --otel writes an aquarium model run's "
                         f"exchanges")


# ---------------------------------------------------------------- the aquarium's readers


def clip_arguments(cl: argparse.ArgumentParser) -> None:
    cl.add_argument("path", help="a recording (only read)")
    cl.add_argument("--from", dest="t_from", type=int_at_least(0), metavar="T1",
                    help="first tick (default: the start)")
    cl.add_argument("--to", dest="t_to", type=int_at_least(1), metavar="T2",
                    help="last tick, excluded (default: the end)")
    cl.add_argument("--out", required=True, metavar="FILE", help="demo.gif or demo.mp4 (never the recording)")
    cl.add_argument("--follow", type=int_at_least(0), metavar="N", help="ring and follow fish N (its panel shown)")
    cl.add_argument("--speed", type=speed, default=4.0,
                    help="simulated seconds per clip second, 0.25 to 64 (default 4: a tick is 0.5 s, so 8 ticks/s)")
    cl.add_argument("--size", metavar="WxH", default="1280x720", help="the window drawn (default 1280x720)")
    cl.add_argument("--zoom", type=float, default=1.0, metavar="Z",
                    help="zoom into the tank Z times (around the followed fish with --follow; default 1: all of it)")
    cl.add_argument("--hud", action=argparse.BooleanOptionalAction, default=True,
                    help="the whole window (default) or, with --no-hud, the tank alone")
    cl.add_argument("--overwrite", action="store_true", help="replace an existing --out file")


def clip(args: argparse.Namespace) -> int:
    import sys

    from ..ui.clip import ClipError, Terminated, make_clip
    from .common import EXIT_BAD_INPUT

    if not 1.0 <= args.zoom <= 8.0:
        raise UsageError(f"mirofish clip: --zoom must be 1 to 8, got {args.zoom:g}")
    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:
            sys.stderr.write(f"\rclip: tick {done}/{total}  ")

    try:
        result = make_clip(args.path, args.out, args.t_from, args.t_to, args.follow, args.speed,
                           window_size(args.size) or (1280, 720), args.hud, args.zoom, args.overwrite, progress)
    except ClipError as exc:
        print(f"mirofish: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Terminated:  # the partial clip is gone; 128 + SIGTERM, as a shell reports a process it ended
        print(f"mirofish: clip stopped (SIGTERM); {args.out} not written", file=sys.stderr)
        return 143
    finally:
        if tty:
            sys.stderr.write("\n")
    print(json.dumps(result))
    return 0


def report_arguments(rep: argparse.ArgumentParser) -> None:
    rep.add_argument("path", help="a recording (only read)")
    rep.add_argument("--fish", type=int_at_least(0), required=True, metavar="ID", help="the fish to report on")
    rep.add_argument("--from", dest="t0", type=int_at_least(0), metavar="T0", help="first tick (default: the start)")
    rep.add_argument("--to", dest="t1", type=int_at_least(0), metavar="T1",
                     help="last tick, excluded (default: the end)")
    rep.add_argument("--png", metavar="OUT", help="also draw the report as a chart (a PNG file)")
    rep.add_argument("--overwrite", action="store_true", help="replace an existing --png file")


def report(args: argparse.Namespace) -> int:
    from ..session.report import fish_report, render_text
    from ..ui.figures import report_png

    if args.png:
        guard_output(args.png, (args.path,), args.overwrite, "chart")
    result = fish_report(args.path, args.fish, args.t0, args.t1)
    print(render_text(result))
    if args.png:
        report_png(result, args.png)
        print(f"chart written to {args.png}")
    return 0


def trace_arguments(tr: argparse.ArgumentParser) -> None:
    tr.add_argument("path", help="a recording (only read)")
    tr.add_argument("--fish", type=int_at_least(0), required=True, metavar="ID", help="the fish to trace")
    tr.add_argument("--from", dest="t0", type=int_at_least(0), required=True, metavar="T0", help="first tick")
    tr.add_argument("--to", dest="t1", type=int_at_least(1), required=True, metavar="T1", help="last tick, excluded")


def trace(args: argparse.Namespace) -> int:
    from ..session import trace_fish

    rows = trace_fish(args.path, args.fish, args.t0, args.t1)
    prompt = _trace_prompt(args, rows)
    for r in rows:
        print(f"t{r['tick']}  energy {r['energy']:.2f}  plan {r['plan']}  doing {r['intent']}")
        if "decision" in r:
            _print_decision(r)
        print("  " + r["view"].replace("\n", "\n  "))
    agree = [r["agrees"] for r in rows if r.get("agrees") is not None]
    decisions = sum(1 for r in rows if "decision" in r)
    print(json.dumps({"fish": args.fish, "ticks": len(rows), "decisions": decisions,
                      "brain_agrees": sum(agree) if agree else None,
                      "prompt": {k: prompt[k] for k in ("name", "hash", "own") if k in prompt} if prompt else None}))
    return 0


def _trace_prompt(args: argparse.Namespace, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The prompt the traced fish was asked in, said on the trace's first line: MiroFish's, or
    (a user brain) the fish's own prompts, MiroFish's only offered; returns it for the JSON line
    (with the user brain's prompts by hash, ``own``)."""
    from ..brains.prompts import recorded_prompt
    from ..observe.recording import Recording

    rec = Recording(args.path)
    try:
        prompt = recorded_prompt(rec.header, rec.config, args.fish)
        cfg = rec.config
        own = cfg.for_group(cfg.fish.group_of()[args.fish]) if cfg.fish.groups else cfg
        own_words = own_prompts(rows, rec.texts()) if own.brain.kind not in ("instinct", "llm") else None
    finally:
        rec.close()
    if own_words is None:
        if prompt:
            print(f"fish {args.fish} was asked in the prompt {prompt['name']} ({prompt['hash']})")
        return prompt
    # a user brain: what it sent is its own; MiroFish's words were only offered
    print(f"fish {args.fish}'s brain is your own ({own.brain.kind}): "
          + ("; ".join(f"it asked its model in its own prompt {h} ({n} request{'s' if n != 1 else ''}): "
                       f"\u201c{first}\u201d" for h, (n, first) in own_words.items())
             or "it asked no model in these ticks")
          + (f"; MiroFish's prompt {prompt['name']} ({prompt['hash']}) was offered to it as Ask.messages"
             if prompt else ""))
    if prompt:
        prompt = {**prompt, "own": {h: n for h, (n, _) in own_words.items()}}
    return prompt


def own_prompts(rows: list[dict[str, Any]], texts: dict[str, str]) -> dict[str, tuple[int, str]]:
    """The system prompts a user brain's requests carried in a trace's ``rows``: by the text's
    hash, how many requests and its opening words (a request without a system message is
    counted under "none")."""
    out: dict[str, tuple[int, str]] = {}
    for r in rows:
        for c in r.get("exchanges", ()):
            h = c.get("prefix") or "none"
            n, first = out.get(h, (0, ""))
            text = " ".join(str(texts.get(h, "")).split())
            out[h] = (n + 1, first or (text[:60] + ("\u2026" if len(text) > 60 else "")))
    return out


def _print_decision(r: dict[str, Any]) -> None:
    """One decision of a trace: who made it and why, its thought, what the model saw and said."""
    again = f"  (the embedded brain now: {r['brain_now']})" if "brain_now" in r else ""
    why = f": {r['reason']}" if r.get("reason") else ""
    if r.get("server_reason"):  # a reply-cache miss the server was asked for, and failed
        why += f" (server: {r['server_reason']})"
    print(f"  decided [{r['tier']}{why}] {r['decision']}{again}")
    if r.get("thought"):
        print(f"  thought: \u201c{r['thought']}\u201d")
    for c in r.get("exchanges", []):
        where = "reply cache" if c["cached"] else f"{c['latency_s']:.2f} s"
        print(f"  {c['kind']}: it saw ({c['model']}, {where}, {c['prompt_tokens']}+{c['completion_tokens']} "
              f"tokens):\n    " + c["user"].replace("\n", "\n    "))
        print(f"    it said [{c['read']}]: {c['reply']!r}")
        if c.get("why"):  # why the reply was not used
            print(f"    not used: {c['why']}")


def reask_arguments(ra: argparse.ArgumentParser) -> None:
    ra.add_argument("path", help="a recording of a model run (only read)")
    ra.add_argument("--fish", type=int_at_least(0), required=True, metavar="ID", help="the fish")
    ra.add_argument("--tick", type=int_at_least(0), required=True, metavar="T", help="the tick it asked at")
    ra.add_argument("--base-url", metavar="URL",
                    help="ask this server (needed: a recording's own server is never contacted)")
    ra.add_argument("--model", metavar="NAME", help="ask this model (default: the recorded one)")
    ra.add_argument("--api-key-env", metavar="VAR", help="the environment variable with the server's key "
                                                        "(default OPENAI_API_KEY; never one the recording names)")
    ra.add_argument("--n", type=int_at_least(1, 100), default=1, metavar="K", help="ask K times (default 1)")
    ra.add_argument("--timeout", metavar="S", type=seconds, default=60.0,
                    help="one answer takes at most S seconds (default 60)")
    ra.add_argument("--json", action="store_true", help="print JSON instead of text")


def reask(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ..config import EndpointConfig
    from ..session.reask import reask as ask_again
    from ..session.reask import render_reask

    if args.base_url is not None:
        try:
            EndpointConfig(base_url=args.base_url, model=args.model or "m")
        except ValidationError as exc:
            raise UsageError(f"mirofish reask: --base-url {args.base_url!r}: "
                             f"{exc.errors()[0]['msg'].removeprefix('Value error, ')}") from None

    from .aquarium import reader_choice

    reader_choice(args, "reask")  # the key variable's name checked
    result = ask_again(args.path, args.fish, args.tick, args.base_url, args.model, args.n, args.timeout,
                       api_key_env=args.api_key_env)
    print(json.dumps(result) if args.json else render_reask(result))
    # an answer without a reply got no usable completion (a failure, or a reply with no message)
    reasons = Counter(str(a["read"]) for a in result["answers"] if a.get("reply") is None)
    down = dict(reasons)
    if down and sum(down.values()) == len(result["answers"]):  # a dead server: as survey says it (one line, 2)
        print(f"mirofish reask: the server at {result['asked']['endpoint']} answered none of the "
              f"{len(result['answers'])} request(s) ({', '.join(f'{k} {v}' for k, v in down.items())})",
              file=sys.stderr)
        return 2
    return 0


def _server_down(reason: str) -> bool:
    """A request that got no usable completion — the server or the way to it failed, whatever
    the way: mirofish.brains.transport's reasons for a call that got no completion (a refused
    connection, one closed mid-reply ``connection_closed``, a timeout, an HTTP error, an error of
    another kind ``error_…``, a body that is no completion ``reply_not_completion``, one too
    large) and a reply without a message (``no_content``). A completion whose words are no
    answer (``not_json`` …) is not one: the server answered."""
    return reason in ("connection", "connection_closed", "timeout", "breaker_open", "rate_limited", "no_server",
                      "tick_budget", "reply_not_completion", "reply_too_large", "no_content") \
        or reason.startswith(("http_", "error_"))


def diff_arguments(df: argparse.ArgumentParser) -> None:
    df.add_argument("path", help="recording A (only read)")
    df.add_argument("other", nargs="?", help="recording B (only read); leave out to compare two windows of A")
    df.add_argument("--a", dest="wa", metavar="T1:T2", help="windows: the first window of ticks")
    df.add_argument("--b", dest="wb", metavar="T3:T4", help="windows: the second window of ticks")
    df.add_argument("--json", action="store_true", help="print JSON instead of text")
    df.add_argument("--png", metavar="OUT", help="also draw the comparison into a PNG file")
    df.add_argument("--overwrite", action="store_true", help="replace an existing --png file")


def diff(args: argparse.Namespace) -> int:
    from ..session.diff import diff_runs, diff_windows, parse_window, render_text
    from ..ui.figures import diff_png

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
    print(json.dumps(result) if args.json else render_text(result))
    return 0



def influence_arguments(p: argparse.ArgumentParser) -> None:
    from .aquarium import reader_flags

    p.add_argument("path", help="an aquarium recording (only read)")
    p.add_argument("--outcome", required=True, metavar="FIGURE@T",
                   help="what to explain: a metric (largest_school, schooling_degree, mean_energy …), "
                        "groups.NAME.mean_energy|schooling, fish.ID.energy|x|y|alive, or FILE.py:NAME / MODULE:NAME "
                        "(a function of a snapshot returning a number); @T at tick T, @T0:T1 the mean over T0..T1")
    p.add_argument("--window", metavar="T0:T1", help="the decisions to test: ticks T0..T1-1 (default the 100 ticks "
                                                     "before the outcome)")
    p.add_argument("--fish", metavar="IDS", help="test only these fish's decisions: 3,17,42 or group:NAME "
                                                 "(the null still draws from every decision of the window)")
    p.add_argument("--alternatives", default="all", metavar="HOW",
                   help="all (every other plan the fish was offered, default horizons; default), random:K (K of "
                        "them), or keep (no new decision: the plan the fish had before goes on)")
    p.add_argument("--max-requests", type=int_at_least(0), default=0, metavar="N",
                   help="model runs with --base-url: at most N requests to the server over all forks (a request "
                        "the recording holds is answered from it, free); 0: none (default)")
    p.add_argument("--workers", type=int_at_least(1, 64), default=1, metavar="N",
                   help="fork in N processes (default 1: all in this process)")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="the seed of the null's and intervals' draws")
    p.add_argument("--null-max", type=int_at_least(20, 100_000), default=400, metavar="N",
                   help="at most N null samples (they are drawn until the null's 95th percentile is stable)")
    p.add_argument("--ablate-fish", type=int_at_least(0, 1000), default=5, metavar="N",
                   help="ablate the N fish with the largest summed effects (default 5)")
    p.add_argument("--ablate-reps", type=int_at_least(1, 1000), default=6, metavar="N",
                   help="random-chooser replicates per ablation (default 6)")
    p.add_argument("--out", metavar="DIR", help="write influence.parquet (or .csv), influence.json and influence.png")
    p.add_argument("--format", choices=("parquet", "csv"), default=None,
                   help="the table's format (default: parquet if pyarrow is installed — pip install -e '.[tables]' — "
                        "else csv)")
    p.add_argument("--overwrite", action="store_true", help="replace existing files in DIR")
    p.add_argument("--json", action="store_true", help="print the summary as JSON instead of text")
    reader_flags(p, "the influence study's forks ask")


def _ticks_pair(text: str, flag: str) -> tuple[int, int]:
    try:
        a, _, b = text.partition(":")
        t0, t1 = int(a), int(b)
    except ValueError:
        raise UsageError(f"mirofish influence: {flag} {text!r}: write T0:T1 (two ticks)") from None
    if not 0 <= t0 < t1:
        raise UsageError(f"mirofish influence: {flag} {text!r}: T0 must be below T1")
    return t0, t1


def influence(args: argparse.Namespace) -> int:
    import sys

    from ..session.influence import influence as run_influence
    from ..session.influence import render_text, write_outputs
    from .aquarium import reader_choice

    recording_spec(args.path, "influence", "fork", records="ticks")
    choice = reader_choice(args, "influence")
    brains = dict(choice.brains)
    brain = "instinct" if brains.get(None) == "instinct" else "recorded"
    window = _ticks_pair(args.window, "--window") if args.window else None
    if args.out:
        from ..session.tables import check_parquet, table_format, table_targets

        args.format = table_format(args.format)
        check_parquet(args.format)
        table_targets(args.out, ["influence"], args.format, (args.path,), args.overwrite, "--out")
        for name in ("influence.json", "influence.png"):
            guard_output(str(Path(args.out) / name), (args.path,), args.overwrite, "influence")
    result = run_influence(args.path, args.outcome, window, args.fish, args.alternatives, brain, choice,
                           args.max_requests, args.workers, args.seed, args.null_max, args.ablate_fish,
                           args.ablate_reps, say=lambda m: print(m, file=sys.stderr, flush=True))
    summary = result["summary"]
    if args.out:
        from ..ui.figures import influence_png

        summary["files"] = write_outputs(result, args.out, args.format, (args.path,), args.overwrite)
        png = Path(args.out) / "influence.png"
        influence_png(summary, png)
        summary["files"]["png"] = str(png)
        (Path(args.out) / "influence.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary) if args.json else render_text(summary))
    return 0


def survey_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="REC", help="aquarium recordings (only read); several: compared "
                                                           "question by question with the first")
    p.add_argument("--at", required=True, metavar="T[,T…]", help="the ticks to ask at")
    p.add_argument("--questions", required=True, metavar="FILE.toml",
                   help="the questions ([[question]] tables; assets/questions/fish.toml is an example)")
    p.add_argument("--fish", metavar="IDS", help="all (default), 3,17,42 or group:NAME")
    p.add_argument("--base-url", metavar="URL", help="the server that answers for model fish (a recording's own "
                                                     "server is never contacted)")
    p.add_argument("--model", metavar="NAME", help="the model to ask (default: the recorded one)")
    p.add_argument("--api-key-env", metavar="VAR", help="the environment variable with the key (default "
                                                        "OPENAI_API_KEY)")
    p.add_argument("--reply-cache", metavar="DIR", help="keep the answers' replies in DIR; a question asked "
                                                        "before is answered from it")
    p.add_argument("--max-requests", type=int_at_least(0), default=10_000, metavar="N",
                   help="at most N requests to the server (default 10,000); the rest are counted max_requests")
    p.add_argument("--timeout", metavar="S", type=seconds, default=60.0,
                   help="one answer takes at most S seconds, retries included (default 60); one unanswered "
                        "after 3 s is said on stderr")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="the intervals' draws")
    p.add_argument("--out", metavar="DIR", help="write survey.parquet (or .csv) and survey.json")
    p.add_argument("--format", choices=("parquet", "csv"), default=None,
                   help="the table's format (default: parquet if pyarrow is installed — pip install -e '.[tables]' — "
                        "else csv)")
    p.add_argument("--overwrite", action="store_true", help="replace existing files in DIR")
    p.add_argument("--json", action="store_true", help="print the summary as JSON instead of text")
    p.add_argument("--brain", action="append", default=[], metavar="SPEC",
                   help="a run of a user brain: the brain that answers (its answer(question, ask)), FILE.py:NAME or "
                        "MODULE:NAME (GROUP=SPEC for one group; a recording never loads code)")
    p.add_argument("--otel", metavar="FILE.json", help="also write the model's exchanges as OpenTelemetry traces "
                                                       "(one recording)")


def survey(args: argparse.Namespace) -> int:
    from ..session.survey import render_text
    from ..session.survey import survey as run_survey
    from .aquarium import check_user_brains, reader_choice

    for path in args.paths:
        recording_spec(path, "survey", "fork", records="ticks")
    ticks = _survey_ticks(args.at)
    choice = reader_choice(args, "survey")  # the server's URL, the key variable's name, the brains checked
    check_user_brains("survey", args.paths, choice.brains, {"instinct": "the instinct brain (answering by template)",
                                                            "llm": "a model (answering through --base-url)"})
    _check_survey_outputs(args)
    result = run_survey(args.paths, ticks, args.questions, args.fish, args.base_url, args.model, args.api_key_env,
                        args.reply_cache, args.max_requests, args.seed, choice=choice, timeout_s=args.timeout,
                        waiting=lambda m: print(f"mirofish survey: {m}", file=sys.stderr, flush=True))
    summary = result["summary"]
    _write_survey_files(args, result)
    reasons = summary["reasons"]
    print(json.dumps(summary) if args.json else render_text(summary))
    return _survey_server(reasons, args.base_url)


def _survey_ticks(at: str) -> list[int]:
    """``--at T[,T…]``: the ticks to ask at."""
    try:
        ticks = [int(t) for t in at.split(",") if t.strip()]
    except ValueError:
        raise UsageError(f"mirofish survey: --at {at!r}: ticks separated by commas") from None
    if not ticks or any(t < 0 for t in ticks):
        raise UsageError(f"mirofish survey: --at {at!r}: ticks separated by commas")
    return ticks


def _check_survey_outputs(args: argparse.Namespace) -> None:
    """The files a survey writes (--otel, --out DIR), checked before it asks anything."""
    if args.otel:
        if len(args.paths) > 1:
            raise UsageError("mirofish survey: --otel writes one recording's exchanges: give one recording")
        guard_output(args.otel, tuple(args.paths), args.overwrite, "trace")
    if args.out:
        from ..session.tables import check_parquet, table_format, table_targets

        args.format = table_format(args.format)
        check_parquet(args.format)
        table_targets(args.out, ["survey"], args.format, tuple(args.paths), args.overwrite, "--out")
        guard_output(str(Path(args.out) / "survey.json"), tuple(args.paths), args.overwrite, "survey")


def _write_survey_files(args: argparse.Namespace, result: dict[str, Any]) -> None:
    """The survey's table and summary (--out DIR) and its traces (--otel), named in the summary's ``files``."""
    from ..session.survey import write_outputs

    summary = result["summary"]
    if args.out:
        summary["files"] = write_outputs(result, args.out, args.format, args.paths, args.overwrite)
    if args.otel:
        from ..session.survey import write_otel

        summary.setdefault("files", {})["otel"] = write_otel(result, args.paths[0], args.otel, args.overwrite)["otel"]


READ_REFUSALS = ("empty", "not_json", "no_answer", "not_a_number", "not_an_option")  # session.survey.read_answer's


def _survey_server(reasons: dict[str, int], base_url: str | None) -> int:
    """The server's part, said on stderr: a server that answered none of the model fish's
    questions is exit 2 (what was asked is written), one that missed some a warning."""
    import sys

    from ..config import redact_url

    down = {k: v for k, v in reasons.items() if _server_down(k)}
    # the server's completions, usable or not (words that are no answer are still an answer)
    answered = sum(v for k, v in reasons.items() if k in ("ok", "clamped") + READ_REFUSALS)
    if down and not answered:  # a dead server: what was asked is written, and the run says so
        print(f"mirofish survey: the server at {redact_url(base_url or '')} answered none of the model fish's "
              f"questions ({', '.join(f'{k} {v}' for k, v in down.items())})", file=sys.stderr)
        return 2
    if down:
        print(f"mirofish survey: warning: the server at {redact_url(base_url or '')} did not answer "
              + ", ".join(f"{k} {v}" for k, v in down.items()) + " questions (counted in the table)", file=sys.stderr)
    return 0
