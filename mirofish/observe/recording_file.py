"""A recording as a file: the error every reader raises, opening any MiroFish recording
read-only (aquarium or turn by turn), which scene it holds, and the digest sealed into it.

Part of :mod:`mirofish.observe.recording` (which documents the format and re-exports these).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .paths import open_read_only, sqlite_truncated

FORMAT_VERSION = 1
MAX_CHUNK_TICKS = 100_000  # no writer makes a chunk longer than this (they hold ~1 s of ticks)
TICK_SCENE = "aquarium"  # the scene recorded tick by tick here; every other scene records turns (observe/turns.py)
_SQLITE_MAGIC = b"SQLite format 3\x00"

# What a damaged blob can raise while it is decoded (all become a one-line RecordingError).
DAMAGE = (zlib.error, ValueError, KeyError, IndexError, TypeError, struct.error, OverflowError, MemoryError)


class RecordingError(Exception):
    """A recording that cannot be used; the message is one line naming the problem."""


def as_blob(data: object) -> bytes:
    """A stored value that must be a blob (``TypeError`` otherwise: a damaged file)."""
    if not isinstance(data, bytes):
        raise TypeError(f"stored as {type(data).__name__}, not a blob")
    return data


def _check_regular_file(path: Path) -> None:
    """:class:`RecordingError` unless ``path`` is an existing regular file."""
    if not path.exists():
        raise RecordingError(f"recording not found: {path}")
    if path.is_dir():
        raise RecordingError(f"recording path is a directory: {path}")
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise RecordingError(f"cannot read recording {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):  # a FIFO or a device would block or never end
        raise RecordingError(f"recording path is not a file (a FIFO or a device): {path}")


# MiroFish's SQLite files that are not recordings, by the tables that tell them
_OTHER_FILES = ((frozenset({"glossary"}), "a referential game's glossary (--glossary)"),
                (frozenset({"sessions"}), "a negotiation's grounding database (--db)"),
                (frozenset({"runs", "meta"}), "a sweep's results (runs.sqlite)"))


def open_recording_file(path: Path) -> tuple[sqlite3.Connection, dict[str, Any]]:
    """Any MiroFish recording opened read-only, and its header; :class:`RecordingError` (one
    line) for a missing file, a folder, a file that is not SQLite or has no header."""
    _check_regular_file(path)
    with open(path, "rb") as fh:
        magic = fh.read(16)
    if magic != _SQLITE_MAGIC:
        raise RecordingError(f"not a MiroFish recording (not an SQLite database): {path}")
    cut = sqlite_truncated(path)
    if cut is not None:  # (before: "database disk image is malformed", or a header row "name None, value NULL")
        raise RecordingError(f"recording is damaged: the file is truncated ({cut}; cut short by a copy, a download "
                             f"or a full disk): {path}")
    try:
        db = open_read_only(path)  # (immutable unless a recorder is writing it)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "header" not in tables:  # another SQLite file: one of ours of another kind is named as such
            db.close()
            other = next((what for names, what in _OTHER_FILES if names <= tables), None)
            raise RecordingError(f"{path} is {other}, not a recording (--record makes one)" if other else
                                 f"not a MiroFish recording (an SQLite file without a header): {path}")
        rows = db.execute("SELECT key, value FROM header").fetchall()
        for k, v in rows:  # (a row of another SQL type, e.g. NULL: json.loads would raise TypeError)
            if k is None or v is None:  # (what a file cut short, or its header's page zeroed, reads as)
                raise RecordingError(f"recording is damaged: its header has an empty row (the file was cut short "
                                     f"or overwritten): {path}")
            if not isinstance(k, str) or not isinstance(v, str):
                raise RecordingError(f"recording is damaged: a row of its header is not text (name {k!r}, "
                                     f"value {type(v).__name__}): {path}")
        return db, {k: json.loads(v) for k, v in rows}
    except (sqlite3.DatabaseError, ValueError) as exc:
        raise RecordingError(f"recording is damaged or not a MiroFish recording ({exc}): {path}") from None


def recording_scene(path: str | Path) -> str:
    """The scene a recording file holds (``aquarium``, ``negotiation`` …), read from its header."""
    db, header = open_recording_file(Path(path))
    db.close()
    return str(header.get("scene", "aquarium"))


def _aquarium_tables(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """An aquarium recording's tables, in the order the digest reads them."""
    tables = [("keyframes", "tick"), ("chunks", "tick0")]
    for name, key in (("texts", "hash"), ("calls", "tick0"), ("dicts", "hash"), ("interventions", "tick, seq")):
        # recordings made before exchanges were kept have none of these
        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone():
            tables.append((name, key))
    return tables


def content_digest(db: sqlite3.Connection, tables: Sequence[tuple[str, str]] | None = None) -> str:
    """A digest of everything a recording holds — header (but its checksum), then ``tables``
    (name, order) row by row; by default an aquarium's keyframes and chunks in tick order —
    written at a clean close and checked when the file is opened, so a file edited afterwards
    says so instead of replaying something else."""
    h = hashlib.blake2b(digest_size=16)
    for key, value in db.execute("SELECT key, value FROM header WHERE key != 'checksum' ORDER BY key"):
        h.update(f"{key}={value}\n".encode())
    for table, key in (_aquarium_tables(db) if tables is None else tables):
        for row in db.execute(f"SELECT * FROM {table} ORDER BY {key}"):
            for v in row:
                h.update(v if isinstance(v, bytes) else repr(v).encode())
                h.update(b"|")
    return h.hexdigest()
