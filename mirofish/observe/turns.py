"""Recordings of the scenes that go turn by turn (the negotiation, the referential game).

The same container as an aquarium recording: one SQLite file with a ``header`` table (the
scene, its settings, the code version, when it was made, and a checksum over everything,
written at a clean close and checked when the file is opened) and the scene's own tables of
JSON rows. Writing refuses what the aquarium's recorder refuses (an existing file without
``--overwrite``, an input, a path another run is writing); each ``write`` is one commit, so
Ctrl-C keeps everything written before it. The scenes say what a row is and re-simulate it
(scenes/negotiation/recording.py, scenes/referential/recording.py).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from .paths import OutputError, WriterLock, check_output
from .recording import RecordingError, content_digest, open_recording_file


class TurnWriter:
    """Writes a turn-by-turn recording: ``tables`` are (name, ordering columns) of the scene's
    tables, created by ``schema`` (SQL)."""

    def __init__(self, path: str | Path, scene: str, header: dict[str, Any], schema: str,
                 tables: Sequence[tuple[str, str]], overwrite: bool = False, inputs: Sequence[str | Path] = ()):
        try:
            self.path = check_output(path, inputs, overwrite, "recording", scene=scene)
            self._lock = WriterLock(self.path)
        except OutputError as exc:
            raise RecordingError(str(exc)) from None
        self.tables = list(tables)
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db: sqlite3.Connection | None = sqlite3.connect(self.path, isolation_level=None)
            self._db.executescript("CREATE TABLE header (key TEXT PRIMARY KEY, value TEXT);\n" + schema)
        except (sqlite3.Error, OSError) as exc:
            self._lock.release()
            raise RecordingError(f"cannot create recording {self.path}: {exc}") from None
        full = {"scene": scene, "code_version": __version__,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **header}
        self._db.executemany("INSERT INTO header VALUES (?, ?)", [(k, json.dumps(v)) for k, v in full.items()])

    def write(self, rows: dict[str, list[tuple[Any, ...]]]) -> None:
        """Rows into each named table, in one commit."""
        db = self._db
        if db is None:
            return
        db.execute("BEGIN")
        for table, values in rows.items():
            if values:
                marks = ", ".join("?" * len(values[0]))
                db.executemany(f"INSERT OR REPLACE INTO {table} VALUES ({marks})", values)
        db.execute("COMMIT")

    def close(self) -> None:
        """Seal the file (its checksum) and let other runs write it."""
        db, self._db = self._db, None
        if db is None:
            return
        try:
            db.execute("INSERT OR REPLACE INTO header VALUES ('checksum', ?)",
                       (json.dumps(content_digest(db, self.tables)),))
        finally:
            db.close()
            self._lock.release()


class TurnReader:
    """A turn-by-turn recording opened read-only, checked against its checksum."""

    def __init__(self, path: str | Path, scene: str, version_key: str, version: int,
                 tables: Sequence[tuple[str, str]]):
        self.path = Path(path)
        self.db, self.header = open_recording_file(self.path)
        try:
            if self.header.get("scene") != scene:
                raise RecordingError(f"not a {scene} recording: {self.path}")
            made = self.header.get(version_key)
            if not isinstance(made, int) or made > version:
                raise RecordingError(f"{scene} recording format {made!r} is not one this MiroFish reads: {self.path}")
            stored = self.header.get("checksum")
            if stored is not None and stored != content_digest(self.db, tables):
                raise RecordingError(f"recording was modified after it was written (its checksum does not match): "
                                     f"{self.path}")
        except sqlite3.DatabaseError as exc:
            self.close()
            raise RecordingError(f"recording is damaged ({exc}): {self.path}") from None
        except RecordingError:
            self.close()
            raise

    def rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query (RecordingError, one line, for a damaged file)."""
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise RecordingError(f"recording is damaged ({exc}): {self.path}") from None

    def close(self) -> None:
        self.db.close()
