"""A referential game as a recording, round by round (``referential --record R.db``).

The turn-by-turn container of observe/turns.py: the header keeps the game's settings, the
``rounds`` table every round as ``--log`` writes it (target, candidates, message, choice,
success, the terms used and made up, the success alarm). Rounds are written in batches of
:data:`BATCH` and at the end — Ctrl-C included.

The game is seeded, so a recording of embedded agents that started from an empty glossary
replays by playing it again: ``replay R.db`` re-plays every round and compares it with the
recorded one ("replay diverges from the recording at round R" otherwise), headless or in the
window with a timeline (a seek plays the game again from its start: 400 rounds take about
half a second). Model agents' runs and runs that continue a glossary file are not recorded
this way (their rounds are in ``--log``): the window could not show them as of a round.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...observe.recording import RecordingError
from ...observe.turns import TurnReader, TurnWriter
from .experiment import Experiment
from .game import GameConfig

SCENE = "referential"
ROUNDS_VERSION = 1
BATCH = 50
_TABLES = [("rounds", "round")]
_SCHEMA = "CREATE TABLE rounds (round INTEGER PRIMARY KEY, data TEXT);"


class ReplayDiverged(RecordingError):
    """A re-played round that is not the recorded one."""


class ReferentialRecorder:
    """Keeps an :class:`Experiment`'s rounds as it plays them."""

    def __init__(self, path: str | Path, exp: Experiment, overwrite: bool = False, inputs: tuple[str, ...] = ()):
        if exp.agents_kind != "embedded":
            raise RecordingError("referential --record keeps embedded agents' games (a model run's rounds are in "
                                 "--log)")
        if exp.offset or exp.glossary.size():
            raise RecordingError("referential --record starts from an empty glossary (this one holds a run already)")
        self._out = TurnWriter(path, SCENE, {"rounds_version": ROUNDS_VERSION, "game": exp.cfg.model_dump(),
                                             "agents": "embedded"}, _SCHEMA, _TABLES, overwrite, inputs)
        self.path = self._out.path
        self._pending: list[tuple[int, str]] = []
        exp.watch = self.round

    def round(self, record: dict[str, Any]) -> None:
        self._pending.append((int(record["round"]), json.dumps(record)))
        if len(self._pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        self._out.write({"rounds": self._pending})
        self._pending = []

    def close(self) -> None:
        self.flush()
        self._out.close()


class ReferentialRecording:
    """A referential game's recording, opened read-only (checked against its checksum)."""

    def __init__(self, path: str | Path):
        self._in = TurnReader(path, SCENE, "rounds_version", ROUNDS_VERSION, _TABLES)
        self.path, self.header = self._in.path, self._in.header
        try:
            self.cfg = GameConfig(**self.header["game"])
            self.rounds = [json.loads(d) for (d,) in self._in.rows("SELECT data FROM rounds ORDER BY round")]
        except (KeyError, TypeError, ValueError) as exc:
            self.close()
            raise RecordingError(f"recording is damaged ({exc}): {self.path}") from None
        if not self.rounds:
            self.close()
            raise RecordingError(f"recording holds no round: {self.path}")

    def experiment(self) -> Experiment:
        """The game as it began, each round it plays checked against the recording."""
        exp = Experiment(self.cfg)
        exp.watch = self._checker()
        return exp

    def _checker(self) -> Callable[[dict[str, Any]], None]:
        def check(record: dict[str, Any]) -> None:
            r = int(record["round"])
            want = self.rounds[r] if r < len(self.rounds) else None
            if want != json.loads(json.dumps(record)):
                what = "a round the recording does not have" if want is None else \
                    "another message" if want["message"] != record["message"] else \
                    "another choice" if want["choice"] != record["choice"] else "the round differs"
                raise ReplayDiverged(f"replay diverges from the recording at round {r} ({what}): {self.path}")
        return check

    def close(self) -> None:
        self._in.close()


def verify(rec: ReferentialRecording) -> dict[str, Any]:
    """``replay R.db --headless``: every round played again and checked."""
    exp = rec.experiment()
    try:
        for _ in rec.rounds:
            exp.step()
    finally:
        exp.close()
    return {"scene": SCENE, "rounds": len(rec.rounds), "verified_rounds": len(rec.rounds),
            "success_rate": round(sum(bool(r["success"]) for r in rec.rounds) / len(rec.rounds), 4)}


def round_tables(rec: ReferentialRecording) -> dict[str, dict[str, list[Any]]]:
    """``export --tables``: one row per round."""
    cols = ("round", "target_id", "message", "choice", "success", "used_terms", "new_terms", "alarm")
    table: dict[str, list[Any]] = {c: [] for c in (*cols, "candidate_ids")}
    for r in rec.rounds:
        for c in cols:
            v = r.get(c)
            table[c].append(" ".join(v) if isinstance(v, list) else v)
        table["candidate_ids"].append(" ".join(r.get("candidate_ids") or []))
    return {"rounds": table}


def export_round_tables(path: str | Path, out_dir: str | Path, fmt: str = "parquet",
                        overwrite: bool = False) -> dict[str, Any]:
    """``export R.db --tables DIR``: the rounds table, after a replay checked every round."""
    import time

    from ...session.tables import check_parquet, finish_export, table_targets

    check_parquet(fmt)
    start = time.perf_counter()
    rec = ReferentialRecording(path)
    try:
        files = table_targets(out_dir, ["rounds"], fmt, (rec.path,), overwrite)
        checked = verify(rec)
        return finish_export(round_tables(rec), files, fmt, start, {"verified_rounds": checked["verified_rounds"]})
    finally:
        rec.close()
