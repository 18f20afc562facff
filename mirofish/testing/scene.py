"""``check_scene``: a scene of the registry through record, replay, fork, export, sweep and bad input."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .common import FISH, SEED, TICKS, Checked, _aquarium_round, _Check, _line, _work


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
    from ..scenes.registry import SceneError, SceneSpec, resolve

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
    from ..scenes.registry import BUILT_IN, resolve

    return [resolve(ref, "built-in scene") for ref in BUILT_IN]


def _scene_spec(scene: Any, resolve: Callable[[str, str], Any]) -> Any:
    from ..scenes.registry import scene as by_name

    if not isinstance(scene, str):
        return scene
    if ":" in scene:
        return resolve(scene, "scene")
    return by_name(scene)


@contextlib.contextmanager
def _registered(c: _Check, spec: Any) -> Iterator[None]:
    """``spec`` in the scene registry while the check runs (an installed one already is)."""
    from ..scenes import registry

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
    from ..scenes.turnscene import TurnScene

    owner = next((o for o in (getattr(spec.run, "__self__", None), getattr(spec.replay, "__self__", None))
                  if o is not None), None)
    return owner if isinstance(owner, TurnScene) else None


def _turn_scene(c: _Check, spec: Any, length: int, seed: int, run_args: Sequence[str] | None,
                fork_args: Sequence[str] | None, replay_args: Sequence[str]) -> None:
    from ..cli import fronts
    from ..config import toml_value

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
    from ..sweep.runs import flatten
    from ..sweep.spec import RunTask

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
