"""A scene of your own that goes turn by turn: a small model class, and this module makes the
whole :class:`~mirofish.scenes.registry.SceneSpec` — its command, recording, checked replay,
fork, export tables and sweeps — the way the built-in scenes have them (docs/scenes.md).

The model (any class; :class:`TurnModel` is its protocol)::

    class Coins:
        settings = {"bias": 0.5}              # every setting with its default (the types are the defaults')

        def __init__(self, seed: int, settings: dict): ...   # seeded: the same seed, the same turns
        def step(self) -> dict: ...           # one turn, as JSON-ready data (the recording's row)
        def summary(self) -> dict: ...        # the run's figures (the JSON line, a sweep's table)
        def change(self, key: str, value) -> None: ...      # a fork: a setting from this turn on

and the spec, in the plug-in's package (its ``pyproject.toml`` lists it under the entry point
group ``mirofish.scenes``)::

    SPEC = TurnScene("coins", Coins, help="a biased coin", metrics=("heads_share",)).spec()

Then ``run.py coins --turns 200 --seed 3 --set bias=0.7 --record R.db`` plays and records it
(one JSON line); ``replay R.db`` plays it again and checks every turn; ``fork R.db --at-turn 50
--change bias=0.9 --record F.db`` branches it; ``export R.db --tables DIR`` writes its turns as a
table; a sweep file with ``scene = "coins"`` varies its settings over seeds.

Bad input — an unknown setting, a value of the wrong type, a recording of another scene, a turn
past the end — is one line (exit code 2); a model that raises is reported in one line naming the
scene and the turn.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..observe.recording import RecordingError
from ..observe.turns import TurnReader, TurnWriter
from .parts import SceneSpec, SweepHooks

VERSION = 1
_TABLES = [("turns", "turn")]
_SCHEMA = "CREATE TABLE turns (turn INTEGER PRIMARY KEY, data TEXT);"
BATCH = 50  # turns per commit (and at the end: Ctrl-C keeps what was played)


class TurnModel(Protocol):
    settings: dict[str, Any]

    def step(self) -> dict[str, Any]: ...

    def summary(self) -> dict[str, Any]: ...

    def change(self, key: str, value: Any) -> None: ...


class TurnSceneError(RecordingError):
    """A turn scene that cannot run as asked; the message is one line."""


class TurnScene:
    """Makes a :class:`SceneSpec` from a turn model (see the module doc). ``turns``: a run's
    default length; ``metrics``: the summary figures a sweep shows unless its file names others."""

    def __init__(self, name: str, model: Callable[..., Any], help: str, turns: int = 100,
                 metrics: tuple[str, ...] = (), doc: str = ""):
        self.name, self.model, self.help, self.turns, self.metrics, self.doc = name, model, help, turns, metrics, doc
        self.defaults: dict[str, Any] = dict(getattr(model, "settings", {}))

    def spec(self) -> SceneSpec:
        return SceneSpec(name=self.name, help=self.help, arguments=self.arguments, run=self.run, records="turns",
                         replay=self.replay, fork=self.fork, fork_usage="--at-turn N --change KEY=VALUE",
                         export=self.export, sweep=self.sweep_hooks(), doc=self.doc)

    # ---------------------------------------------------------------- settings

    def settings(self, given: dict[str, Any]) -> dict[str, Any]:
        """The defaults with ``given`` on top; TurnSceneError naming an unknown key or a wrong type."""
        out = dict(self.defaults)
        for key, value in given.items():
            if key not in self.defaults:
                known = ", ".join(self.defaults) or "none"
                raise TurnSceneError(f"{self.name}: no setting {key!r} (its settings: {known})")
            out[key] = self._typed(key, value)
        return out

    def _typed(self, key: str, value: Any) -> Any:
        default = self.defaults[key]
        if isinstance(default, bool) != isinstance(value, bool) or (
                isinstance(default, (int, float)) and not isinstance(value, (int, float))) or (
                isinstance(default, str) and not isinstance(value, str)):
            raise TurnSceneError(f"{self.name}: setting {key} = {value!r} is not a {type(default).__name__}")
        return float(value) if isinstance(default, float) else value

    def make(self, seed: int, settings: dict[str, Any]) -> Any:
        try:
            return self.model(seed, dict(settings))
        except (ValueError, TypeError) as exc:
            raise TurnSceneError(f"{self.name}: {exc}") from None

    def play(self, m: Any, turn: int) -> dict[str, Any]:
        """One turn of model ``m``, as JSON data (one line naming the turn if the model fails)."""
        try:
            row = m.step()
            data: dict[str, Any] = json.loads(json.dumps(row))
        except Exception as exc:  # noqa: BLE001 — a plug-in's failure is one line naming the turn
            raise TurnSceneError(f"{self.name}: turn {turn} failed: {type(exc).__name__}: {exc}") from None
        if not isinstance(data, dict):
            raise TurnSceneError(f"{self.name}: turn {turn} is not a JSON object (step() returned "
                                 f"{type(row).__name__})")
        return data

    # ---------------------------------------------------------------- the command

    def arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--headless", action="store_true", help="print one JSON line (this scene has no window)")
        p.add_argument("--turns", type=_count(1), default=self.turns, help=f"turns to play (default "
                                                                                 f"{self.turns})")
        p.add_argument("--seed", type=_count(0), default=0, help="random seed (default 0)")
        p.add_argument("--set", dest="scene_settings", action="append", default=[], metavar="KEY=VALUE",
                       help=f"a setting (repeatable): {', '.join(f'{k}={v!r}' for k, v in self.defaults.items())}")
        p.add_argument("--record", metavar="OUT", help="record every turn (replay, fork and export read it)")
        p.add_argument("--overwrite", action="store_true", help="replace an existing OUT file")

    def _given(self, texts: list[str]) -> dict[str, Any]:
        from ..config import ConfigError, parse_override

        out: dict[str, Any] = {}
        for text in texts:
            try:
                keys, value = parse_override(text)
            except ConfigError as exc:
                raise TurnSceneError(f"{self.name}: {exc}") from None
            out[".".join(keys)] = value
        return out

    def run(self, args: argparse.Namespace) -> int:
        settings = self.settings(self._given(args.scene_settings))
        summary = self.play_run(args.seed, settings, args.turns, args.record, args.overwrite)
        print(json.dumps(summary))
        return 0

    def play_run(self, seed: int, settings: dict[str, Any], turns: int, record: str | None = None,
                 overwrite: bool = False, changes: list[tuple[int, str, Any]] | None = None,
                 check: list[dict[str, Any]] | None = None, header: dict[str, Any] | None = None) -> dict[str, Any]:
        """Play ``turns`` turns (``changes``: settings changed at a turn; ``check``: the turns a
        recording holds, each compared as it is played again); record them to ``record``."""
        m = self.make(seed, settings)
        changes = sorted(changes or [])
        out = None
        if record:
            out = TurnWriter(record, self.name, {"turns_version": VERSION, "seed": seed, "settings": settings,
                                                 "changes": changes, **(header or {})}, _SCHEMA, _TABLES, overwrite)
        pending: list[tuple[int, str]] = []
        first_other = None
        try:
            for t in range(turns):
                for when, key, value in changes:
                    if when == t:
                        self._change(m, key, value, t)
                row = self.play(m, t)
                if check is not None and t < len(check) and check[t] != row and first_other is None:
                    first_other = t
                pending.append((t, json.dumps(row)))
                if out is not None and len(pending) >= BATCH:
                    out.write({"turns": pending})
                    pending = []
        finally:
            if out is not None:
                out.write({"turns": pending})
                out.close()
        summary = {"scene": self.name, "seed": seed, "turns": turns, "settings": settings, **self._summary(m)}
        if check is not None:
            summary["first_different_turn"] = first_other
        return summary

    def _change(self, m: Any, key: str, value: Any, turn: int) -> None:
        try:
            m.change(key, value)
        except Exception as exc:  # noqa: BLE001 — a plug-in's failure is one line
            raise TurnSceneError(f"{self.name}: changing {key} at turn {turn} failed: {exc}") from None

    def _summary(self, m: Any) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(json.dumps(m.summary()))
        except Exception as exc:  # noqa: BLE001 — a plug-in's failure is one line
            raise TurnSceneError(f"{self.name}: summary() failed: {type(exc).__name__}: {exc}") from None
        return data

    # ---------------------------------------------------------------- recordings

    def open(self, path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """A recording's header and turns (checked against its checksum)."""
        rec = TurnReader(path, self.name, "turns_version", VERSION, _TABLES)
        try:
            rows = [json.loads(d) for (d,) in rec.rows("SELECT data FROM turns ORDER BY turn")]
        finally:
            rec.close()
        if not rows:
            raise TurnSceneError(f"recording holds no turn: {path}")
        return rec.header, rows

    def _replayed(self, header: dict[str, Any], rows: list[dict[str, Any]], path: str) -> dict[str, Any]:
        try:
            seed, settings = int(header["seed"]), self.settings(dict(header["settings"]))
            changes = [(int(t), str(k), v) for t, k, v in header.get("changes", [])]
        except (KeyError, TypeError, ValueError) as exc:
            raise TurnSceneError(f"recording is damaged ({exc}): {path}") from None
        summary = self.play_run(seed, settings, len(rows), changes=changes, check=rows)
        diverged = summary.pop("first_different_turn")
        if diverged is not None:
            raise TurnSceneError(f"replay diverges from the recording at turn {diverged}: {path}")
        return summary

    def replay(self, args: argparse.Namespace) -> int:
        header, rows = self.open(args.path)
        summary = self._replayed(header, rows, args.path)
        print(json.dumps({**summary, "verified_turns": len(rows)}))
        return 0

    def fork(self, args: argparse.Namespace) -> int:
        from ..observe.paths import OutputError, check_output

        if args.at_turn is None or not args.change:
            raise TurnSceneError(f"fork: a {self.name} recording forks with --at-turn N --change KEY=VALUE")
        header, rows = self.open(args.path)
        if args.at_turn >= len(rows):
            raise TurnSceneError(f"fork: --at-turn {args.at_turn} is past the recording's last turn "
                                 f"({len(rows) - 1})")
        if args.record:
            try:
                check_output(args.record, (args.path,), args.overwrite, "recording", scene=self.name)
            except OutputError as exc:
                raise TurnSceneError(str(exc)) from None
        original = self._replayed(header, rows, args.path)
        given = self._given(args.change)
        self.settings(given)  # known keys, right types
        changes = [(int(t), str(k), v) for t, k, v in header.get("changes", [])]
        changes += [(args.at_turn, k, self._typed(k, v)) for k, v in given.items()]
        branch = self.play_run(int(header["seed"]), dict(header["settings"]), len(rows), args.record,
                               args.overwrite, changes=changes, check=rows,
                               header={"parent": str(args.path), "fork_turn": args.at_turn})
        print(json.dumps({"scene": self.name, "fork_turn": args.at_turn, "change": given,
                          "first_different_turn": branch.pop("first_different_turn"), "original": original,
                          "fork": branch, **({"record": args.record} if args.record else {})}))
        return 0

    def export(self, path: str, out_dir: str, fmt: str = "parquet", overwrite: bool = False,
               **_: Any) -> dict[str, Any]:
        """``export R.db --tables DIR``: the turns as one table (a column per key of the rows), after
        a replay checked every turn."""
        from ..session.tables import check_parquet, finish_export, table_targets

        check_parquet(fmt)
        start = time.perf_counter()
        header, rows = self.open(path)
        self._replayed(header, rows, path)
        keys = sorted({k for r in rows for k in r})
        table = {"turn": list(range(len(rows))),
                 **{k: [_cell(r.get(k)) for r in rows] for k in keys if k != "turn"}}
        files = table_targets(out_dir, ["turns"], fmt, (Path(path),), overwrite)
        return finish_export({"turns": table}, files, fmt, start, {"verified_turns": len(rows)})

    # ---------------------------------------------------------------- sweeps

    def sweep_hooks(self) -> SweepHooks:
        return SweepHooks(length="turns", metrics=self.metrics, check=self._check, summarize=self._summarize,
                          command=self._command)

    def _check(self, task: Any) -> str | None:
        try:
            self.settings(task.params)
        except TurnSceneError as exc:
            return f"params: {exc}"
        return None

    def _summarize(self, task: Any, record_dir: str | None = None) -> dict[str, Any]:
        record = str(Path(record_dir) / f"{task.run_id}.sqlite") if record_dir else None
        return self.play_run(task.seed, self.settings(task.params), task.length, record, overwrite=True)

    def _command(self, task: Any) -> list[str]:
        from ..config import toml_value

        return ["python", "run.py", self.name, "--headless", "--turns", str(task.length), "--seed", str(task.seed),
                *(x for k, v in sorted(task.params.items()) for x in ("--set", f"{k}={toml_value(v)}"))]


def _count(lo: int) -> Callable[[str], int]:
    """An argument type: a whole number from ``lo``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if not lo <= value <= 2**31 - 1:
            raise argparse.ArgumentTypeError(f"must be from {lo} to {2**31 - 1}, got {value}")
        return value
    return parse


def _cell(v: Any) -> Any:
    """A table cell: numbers, text and booleans as they are, anything else as JSON text."""
    return v if v is None or isinstance(v, (int, float, str, bool)) else json.dumps(v)
