"""Output paths that never destroy a user's data.

Every command that writes a file checks its output first, before anything is written:

* an empty path, a directory, a file name longer than the file system allows, or a folder
  that cannot be created is refused;
* a path that resolves to one of the command's inputs (or to the input's ``-wal``, ``-shm``
  or ``-journal`` companion) is refused: ``export X.db --out X.db`` would leave X.db with no
  keyframe;
* an existing file is refused unless the user says ``--overwrite``; something that is not a
  regular file (``/dev/full``, a pipe) is refused always — it is never replaced;
* a recording another run is writing right now is refused even with ``--overwrite``
  (:class:`WriterLock`, an exclusive lock held for the whole run).

Each refusal is an :class:`OutputError` with a one-line message (exit code 2 on the CLI).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

fcntl: Any
try:  # POSIX; elsewhere a second writer is not detected
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

COMPANIONS = ("", "-wal", "-shm", "-journal")


class OutputError(ValueError):
    """An output path the command refuses; the message is one line."""


def check_output(path: str | os.PathLike | None, inputs: Iterable[str | os.PathLike] = (),
                 overwrite: bool = False, what: str = "output") -> Path:
    """``path`` as a Path if it is safe to write (see the module doc); raises :class:`OutputError`."""
    if path is None or not str(path).strip():
        raise OutputError(f"{what} path is empty")
    p = Path(path)
    if any(len(part.encode()) > 255 for part in p.parts):
        raise OutputError(f"{what} file name is too long ({max(len(q.encode()) for q in p.parts)} bytes; 255 at most)")
    if len(os.fsencode(p.absolute())) > 4095:
        raise OutputError(f"{what} path is too long ({len(os.fsencode(p.absolute()))} bytes; 4095 at most)")
    if p.is_dir() or str(path).endswith(os.sep):
        raise OutputError(f"{what} {p} is a directory; give a file name")
    target = p.resolve()
    for source in inputs:
        src = Path(source).resolve()
        if any(target == Path(str(src) + suffix) for suffix in COMPANIONS):
            raise OutputError(f"refusing to write the {what} {p} over its input {source}")
    if p.exists() and not p.is_file():
        raise OutputError(f"{what} {p} is not a regular file (a device, pipe or socket); give a file name")
    if p.exists() and not overwrite:
        raise OutputError(f"{what} {p} exists; add --overwrite to replace it")
    parent = target.parent
    if not parent.exists():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create the folder for {what} {p}: {exc.strerror}") from None
    if not os.access(parent, os.W_OK):
        raise OutputError(f"cannot write {what} {p}: the folder is not writable")
    return p


class WriterLock:
    """An exclusive lock on ``path`` + ``.lock`` for as long as a run writes ``path``."""

    def __init__(self, path: Path):
        self.path = Path(str(path) + ".lock")
        self._fd: int | None = None
        if fcntl is None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError(f"cannot lock {path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise OutputError(f"{path} is being written by another run; choose another path") from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def check_scene_db(path: str | os.PathLike | None, own: set[str], what: str) -> None:
    """A scene's SQLite file may be new or its own; one that holds other tables — a recording,
    another program's database — is refused rather than written into."""
    if path is None or str(path) == ":memory:" or not Path(path).exists():
        return
    import sqlite3
    from urllib.parse import quote

    p = Path(path)
    if p.is_dir():
        raise OutputError(f"{what} {p} is a directory; give a file name")
    try:
        db = sqlite3.connect(f"file:{quote(str(p.resolve()))}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            db.close()
    except sqlite3.DatabaseError:
        raise OutputError(f"{what} {p} is not an SQLite database") from None
    if {"header", "keyframes", "chunks"} <= tables:
        raise OutputError(f"{p} is a MiroFish recording, not a {what}; give another file")
    foreign = tables - own
    if foreign and not tables & own:
        raise OutputError(f"{p} is not a {what} (it holds the tables {', '.join(sorted(foreign)[:3])}); "
                          f"give another file")
