"""Output paths that never destroy a user's data.

Every command that writes a file checks its output first, before anything is written:

* an empty path, a directory, a file name longer than the file system allows, or a folder
  that cannot be created is refused;
* a path that resolves to one of the command's inputs (or to the input's ``-wal``, ``-shm``
  or ``-journal`` companion) is refused: ``export X.db --out X.db`` would leave X.db with no
  keyframe;
* an existing file is refused unless the user says ``--overwrite``; something that is not a
  regular file (``/dev/full``, a pipe) is refused always — it is never replaced;
* a file another run is writing right now (it holds a :class:`WriterLock`, an exclusive
  lock for the whole run) is refused even with ``--overwrite``, whatever this command writes;
* a name like a SQLite database's journal (``X-wal``, ``X-shm``, ``X-journal`` beside an
  existing ``X``), or a path inside a folder so named, is refused: SQLite would take it for
  ``X``'s journal and ``X`` would no longer open;
* a config or preset file this run read, and any ``.toml`` file, is never written over;
* nor is any other file the command was given to read (:data:`INPUTS`: a brain's ``.py``, an
  interventions or questions file, a prompt …, whatever its name), nor a file directly in a folder
  it was given to read (a sweep's folder exported into itself would lose its ``runs.csv``);
* ``--overwrite`` replaces only a file of the kind the command writes: never a recording with
  a chart, a log or a table, never another SQLite database (a glossary, a sweep's store);
* ``--overwrite`` never replaces a read-only file (:func:`read_only`).

Each refusal is an :class:`OutputError` with a one-line message (exit code 2 on the CLI).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

fcntl: Any
try:  # POSIX; elsewhere a second writer is not detected
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

COMPANIONS = ("", "-wal", "-shm", "-journal")

# Files and folders the running command was given to read (resolved), filled by the CLI from its
# input options (mirofish.cli.common.note_inputs): never an output, whatever their names.
INPUTS: set[Path] = set()


class OutputError(ValueError):
    """An output path the command refuses; the message is one line."""


def check_output(path: str | os.PathLike[str] | None, inputs: Iterable[str | os.PathLike[str]] = (),
                 overwrite: bool = False, what: str = "output", scene: str | None = None) -> Path:
    """``path`` as a Path if it is safe to write (see the module doc); raises :class:`OutputError`
    with the first rule it breaks, its folder created when it did not exist. ``scene``: the scene
    a recording written there is of (``aquarium``, ``referential``, ``negotiation``) — with
    ``--overwrite`` a recording replaces only a recording of the same scene."""
    if path is None or not str(path).strip():
        raise OutputError(f"{what} path is empty")
    p = Path(path)
    for rule in (_unusable, _clashes, _replaces):  # (each resolves the path only once the name is usable)
        refusal = rule(p, str(path), inputs, overwrite, what)
        if refusal:
            raise OutputError(refusal)
    if scene is not None and p.exists() and file_kind(p.resolve()) == "recording":
        there = recording_scene(p.resolve())
        if there != scene:
            raise OutputError(f"{p} is a {there} recording; --overwrite replaces it only with another {there} "
                              f"recording, not a {scene} one")
    parent = p.resolve().parent
    if not parent.exists():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create the folder for {what} {p}: {exc.strerror}") from None
    if not os.access(parent, os.W_OK):
        raise OutputError(f"cannot write {what} {p}: the folder is not writable")
    return p


def _unusable(p: Path, given: str, inputs: Iterable[Any], overwrite: bool, what: str) -> str | None:
    """A name no file can have here: too long, a folder, under /proc, /sys or /dev, in a file."""
    if any(len(part.encode()) > 255 for part in p.parts):
        return f"{what} file name is too long ({max(len(q.encode()) for q in p.parts)} bytes; 255 at most)"
    if len(os.fsencode(p.absolute())) > 4095:
        return f"{what} path is too long ({len(os.fsencode(p.absolute()))} bytes; 4095 at most)"
    if p.is_dir() or given.endswith(os.sep):
        return f"{what} {p} is a directory; give a file name"
    target = p.resolve()
    if target.parts[1:2] and target.parts[1] in ("proc", "sys", "dev"):
        return f"{what} {p} is under /{target.parts[1]}: not a place for files"
    if target.parent.exists() and not target.parent.is_dir():
        return f"{what} {p}: {target.parent} is a file, not a folder"
    return None


def _clashes(p: Path, given: str, inputs: Iterable[Any], overwrite: bool, what: str) -> str | None:
    """A file this run reads or another run writes: an input (or its journal), a config file,
    a name SQLite would take for a journal, a file under another run's writer lock."""
    target = p.resolve()
    for source in inputs:
        src = Path(source).resolve()
        if any(target == Path(str(src) + suffix) for suffix in COMPANIONS):
            return f"refusing to write the {what} {p} over its input {source}"
    from ..config import READ_FILES

    if target in READ_FILES or (target.suffix.lower() == ".toml" and target.exists()):
        return f"{p} is a config file; MiroFish never writes a {what} over one"
    for src in INPUTS:
        if any(target == Path(str(src) + suffix) for suffix in COMPANIONS):
            return f"refusing to write the {what} {p} over {src}, an input of this command"
        if target.parent == src:  # (a folder read: its own files, e.g. a sweep's runs.csv; a subfolder is not it)
            return f"refusing to write the {what} {p} into {src}, a folder this command reads; choose another folder"
    journal = journal_name(target)
    if journal:
        return f"{what} {p}: {journal}"
    if locked_by_another_run(target):
        return f"{p} is being written by another run; choose another path"
    return None


def _replaces(p: Path, given: str, inputs: Iterable[Any], overwrite: bool, what: str) -> str | None:
    """An existing file: only a regular one, only with --overwrite, only one of the kind written."""
    if not p.exists():
        return None
    if not p.is_file():
        return f"{what} {p} is not a regular file (a device, pipe or socket); give a file name"
    if not overwrite:
        return f"{what} {p} exists; add --overwrite to replace it"
    if read_only(p):
        return kept_read_only(f"{what} {p}", "path")
    kind = file_kind(p.resolve())
    if kind == "recording" and what != "recording":
        return f"{p} is a MiroFish recording; --overwrite never replaces one with a {what}"
    if kind == "sqlite":
        return f"{p} is an SQLite database; --overwrite never replaces one with a {what}"
    return None


def read_only(path: Path) -> bool:
    """Is the existing file ``path`` read-only: no write permission bit set (what ``chmod a-w`` or a
    read-only copy leaves — root, for whom :func:`os.access` says yes, included), or not writable by
    this user? Such a file is someone's statement that it is to be kept: ``--overwrite`` (which
    could unlink and recreate it, its folder being writable) is refused for it."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not mode & 0o222 or not os.access(path, os.W_OK)


def kept_read_only(named: str, instead: str) -> str:
    """The one line refusing ``--overwrite`` of a read-only file (``named``: how the command names
    it; ``instead``: what else to choose — a path, a folder, an ``--out``)."""
    return f"{named} is read-only; --overwrite never replaces a read-only file: make it writable (chmod u+w) or " \
           f"choose another {instead}"


def journal_name(path: Path) -> str | None:
    """Why ``path`` must not be written (None: it may): it — or a folder it is in — is named
    like the SQLite journal of an existing file (``X-wal``, ``X-shm``, ``X-journal``), which
    SQLite would then take for ``X``'s journal and ``X`` would no longer open."""
    for q in (path, *path.parents):
        for suffix in COMPANIONS[1:]:
            if q.name.endswith(suffix) and Path(str(q)[: -len(suffix)]).is_file():
                return (f"{q.name} is the name of {q.name[: -len(suffix)]}'s SQLite journal (writing there would "
                        f"make it unreadable); choose another name")
    return None


def file_kind(path: Path) -> str | None:
    """``"recording"`` (a MiroFish recording), ``"sqlite"`` (another SQLite database) or None."""
    try:
        with open(path, "rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                return None
    except OSError:
        return None
    tables = sqlite_tables(path)
    return "recording" if tables is not None and holds_recording(tables) else "sqlite"


def sqlite_truncated(path: Path) -> str | None:
    """How an SQLite file is cut short — by a copy, a download or a full disk — in words
    (``"86,528 of its 90,112 bytes"``), or None: it is whole, is no SQLite file,
    its header does not say (its page count is valid only while its "version valid for" number
    equals its change counter), or a run is writing it (a ``-wal`` beside it, or its writer lock:
    a checkpoint may write the first page before the last)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        return None
    if not head.startswith(b"SQLite format 3\x00"):
        return None
    if len(head) < 100:
        return f"{size:,} bytes, not even its 100-byte SQLite header"
    if Path(f"{path}-wal").exists() or locked_by_another_run(Path(path)):
        return None
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages, counter, valid_for = (int.from_bytes(head[k:k + 4], "big") for k in (28, 24, 92))
    if not pages or valid_for != counter or size >= page * pages:
        return None
    return f"{size:,} of its {page * pages:,} bytes"


# The tables every MiroFish recording has: an aquarium's (tick by tick), a negotiation's (turn by
# turn), a referential game's (round by round).
RECORDING_TABLES = ({"header", "keyframes", "chunks"}, {"header", "sessions", "turns"}, {"header", "rounds"})


def recording_scene(path: Path) -> str:
    """The scene a recording is of: its header's ``scene`` (the turn-by-turn scenes write one),
    else ``aquarium``; ``unknown`` when the header cannot be read."""
    import json
    import sqlite3

    try:
        db = open_read_only(path)
        try:
            row = db.execute("SELECT value FROM header WHERE key = 'scene'").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return "unknown"
    if row is None:
        return "aquarium"
    try:
        name = json.loads(row[0])
    except (TypeError, ValueError):
        return "unknown"
    return name if isinstance(name, str) and name.isidentifier() else "unknown"


def holds_recording(tables: set[str]) -> bool:
    """Whether an SQLite file with these tables is a MiroFish recording."""
    return any(tables >= kind for kind in RECORDING_TABLES)


def open_read_only(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """The one way MiroFish opens an SQLite file it only reads: read-only by a URI whose path is
    quoted (``#``, ``?`` or ``%`` in a name would otherwise end it and leave a stray file), and
    — when no writer's ``-wal``/``-journal`` is beside it and no run holds its writer lock (a
    turn-by-turn recording between two commits has no journal, yet changes) — as an immutable
    file, so that not even a ``-shm`` appears. A ``-journal`` left by a run that was killed
    mid-write (a "hot" journal, which a read-only connection cannot roll back: every command
    then called the file "not an SQLite database") is rolled back first, by SQLite itself, in a
    connection that may write — the file's last committed state, what the run had saved; if
    that connection cannot be made (a read-only folder), the read fails as before. Raises
    ``sqlite3.Error`` like ``sqlite3.connect``."""
    import sqlite3
    from urllib.parse import quote

    p = Path(path)
    name = quote(str(p.resolve()))
    journal = Path(f"{p}-journal")
    writing = locked_by_another_run(p)
    if journal.is_file() and journal.stat().st_size and not writing:
        try:  # (SQLite rolls a hot journal back on a writer's first read, under its own file locks)
            db = sqlite3.connect(f"file:{name}?mode=rw", uri=True, timeout=5)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                db.close()
        except sqlite3.Error:
            pass
    uri = f"file:{name}?mode=ro"
    if not writing and not any(Path(f"{p}{x}").exists() for x in ("-wal", "-journal")):
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


def sqlite_tables(path: Path) -> set[str] | None:
    """The table names of an SQLite file, read without writing to it; None when it is not a
    readable SQLite database."""
    import sqlite3

    try:
        db = open_read_only(path)
        try:
            return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return None


def locked_by_another_run(path: Path) -> bool:
    """Does a run hold the :class:`WriterLock` of ``path`` now?"""
    lock = Path(str(path) + ".lock")
    if fcntl is None or not lock.is_file():
        return False
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


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


class Locks:
    """The writer locks of a run's outputs, held until :meth:`release` (a context manager)."""

    def __init__(self, paths: Iterable[str | os.PathLike[str] | None]):
        self.locks: list[WriterLock] = []
        try:
            for path in paths:
                if path is not None and str(path) not in ("", ":memory:"):
                    self.locks.append(WriterLock(Path(path)))
        except OutputError:
            self.release()
            raise

    def release(self) -> None:
        for lock in self.locks:
            lock.release()
        self.locks = []

    def __enter__(self) -> Locks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def check_scene_db(path: str | os.PathLike[str] | None, own: set[str], what: str) -> None:
    """A scene's SQLite file may be new or its own; one that holds other tables — a recording,
    another program's database — is refused rather than written into."""
    if path is not None and not str(path).strip():
        raise OutputError(f"{what} path is empty")
    if path is not None and str(path) != ":memory:":
        q = Path(path)
        if any(len(part.encode()) > 255 for part in q.parts):
            raise OutputError(f"{what} file name is too long (255 bytes at most)")
        journal = journal_name(q.absolute())
        if journal:
            raise OutputError(f"{what} {q}: {journal}")
        if q.exists() and not q.is_file() and not q.is_dir():
            raise OutputError(f"{what} {q} is not a regular file (a device, pipe or socket); give a file name")
    if path is None or str(path) == ":memory:" or not Path(path).exists():
        return
    p = Path(path)
    if p.is_dir():
        raise OutputError(f"{what} {p} is a directory; give a file name")
    if locked_by_another_run(p.resolve()):
        raise OutputError(f"{p} is being written by another run; choose another path")
    tables = sqlite_tables(p)
    if tables is None:
        raise OutputError(f"{what} {p} is not an SQLite database")
    if holds_recording(tables):
        raise OutputError(f"{p} is a MiroFish recording, not a {what}; give another file")
    foreign = tables - own - {"sqlite_sequence"}
    if foreign:  # even beside tables of ours: a sweep's store has a "meta" table too
        raise OutputError(f"{p} is not a {what} (it holds the tables {', '.join(sorted(foreign)[:3])}); "
                          f"give another file")
