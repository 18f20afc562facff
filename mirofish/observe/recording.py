"""Recordings: one SQLite file per run (docs/design.md §4).

What a recording holds:

* ``header`` — format version, seed, the full config (JSON), scene, created, code
  version, and for forks/exports the parent and the fork point. Never an API key: the
  config holds none (keys come from the environment) and nothing else is written.
* ``keyframes`` — the full world state (:meth:`World.state_arrays`) every
  ``record.keyframe_every`` ticks, the first one at the start.
* ``chunks`` — per ``record.commit_seconds`` of simulated time (or more ticks, when the tick
  loop outruns the writer's 20 ms wake-up): every *applied* decision
  (tick, fish, plan — goal, parameter, horizon —, tier, latency, tokens, status, the
  model's thought), the action every fish executed at every tick, one row of per-tick
  measures, every ``metrics.sample_every`` ticks the full metric set, and for forks the
  divergence from the parent. Recordings made before plans (chunk layout ``MFC1``, single
  actions) still read: their decisions are ``hold`` plans.
* ``calls`` — model runs: every **model exchange** (:mod:`mirofish.brains.exchanges`), one
  row per chunk (same ``tick0``, same transaction) — the per-fish message in full, the raw
  reply, how it was read, tier, model, endpoint without credentials, latency, tokens, retries
  — as JSON compressed with a *dictionary* (``dicts``: the latest 32 KB of exchanges written
  when it was taken, renewed every 256 KB; per-fish messages repeat persona, memories and
  template text that one second's chunk alone would not compress). ``texts`` holds the
  shared texts they reference by hash (the system prompt, the response schemas), each stored
  once. The cache key and the view are derived on reading. Never a key or a URL's userinfo.

Blobs are columns of fixed-width numbers packed by :func:`pack` (a JSON header plus raw
little-endian arrays, zlib-compressed) — no pickle anywhere. A writer thread wakes every
20 ms, encodes and commits (WAL, one transaction), so the tick loop only appends references;
a ``kill -9`` loses at most the ticks not yet committed — one simulated second in a live
(realtime) run; in an unthrottled headless run, whatever ran in the last ~20 ms of wall time
(a few tens of ticks) — and the file still opens and replays to its last committed tick. On
a clean close the file is checkpointed and switched back to a plain rollback journal, so a
finished recording is one self-contained file.

Reading never writes: :class:`Recording` opens the database read-only.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import sqlite3
import struct
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np
from pydantic import ValidationError

from .. import __version__
from ..config import Config, redact_data
from .metrics import RECORDED, metric
from .paths import OutputError, WriterLock, check_output, open_read_only

if TYPE_CHECKING:
    from ..frame import Frame
    from .metrics import Metrics


class Recordable(Protocol):
    """What a recorder needs from what it records (a session): its tick, metrics, observers
    and keyframes."""

    @property
    def tick(self) -> int: ...

    @property
    def metrics(self) -> Metrics: ...

    @property
    def observers(self) -> list[Any]: ...

    def state_arrays(self) -> dict[str, np.ndarray]: ...

    def state_hash(self) -> str: ...


FORMAT_VERSION = 1
MAX_CHUNK_TICKS = 100_000  # no writer makes a chunk longer than this (they hold ~1 s of ticks)
CHECKPOINT_SECONDS = 2.0  # wall seconds between WAL checkpoints into the main file
TICK_COLUMNS = ("mean_energy", "schooling_degree", "conflicts", "moved", "decisions", "low_energy_fish")
SAMPLE_COLUMNS = RECORDED  # the metrics a recording samples (observe.metrics.METRICS' ``recorded``)
_MEAN_ENERGY = metric("mean_energy")
DIVERGENCE_COLUMNS = ("cells_differ", "schooling_diff", "energy_diff")
# A recording names its columns and plan goals in its header ("columns", "goals"): a reader maps
# them by name onto its own, so a metric or plan type added later never breaks an earlier file —
# a column the file lacks reads as NaN, one the reader does not know is left aside
# (:meth:`Recording.file_columns` names it). These are the names of every file written before
# headers named them, frozen: whatever a later version adds is not theirs.
LEGACY_COLUMNS: dict[str, tuple[str, ...]] = {
    "ticks": ("mean_energy", "schooling_degree", "conflicts", "moved", "decisions", "low_energy_fish"),
    "samples": ("action_entropy", "conflict_rate", "schooling_degree", "tokens_per_decision",
                "decision_latency_p95_ms", "fallback_rate", "polarization", "rotation", "nn_distance", "clusters",
                "largest_cluster", "school_size", "school_polarization", "school_milling", "school_moving",
                "school_travel"),
    "divergence": ("cells_differ", "schooling_diff", "energy_diff"),
}
LEGACY_GOALS = ("hold", "forage", "school", "explore", "rest", "keep_away", "return")


def columns_now() -> dict[str, tuple[str, ...]]:
    """This version's per-tick, sample and divergence columns, by name (what a header names)."""
    return {"ticks": tuple(TICK_COLUMNS), "samples": tuple(SAMPLE_COLUMNS), "divergence": tuple(DIVERGENCE_COLUMNS)}


def columns_of(header: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """The columns a recording's header names (the frozen legacy ones where it names none)."""
    named = header.get("columns")
    out = dict(LEGACY_COLUMNS)
    if isinstance(named, dict):
        for k in out:
            v = named.get(k)
            if isinstance(v, list) and all(isinstance(x, str) for x in v) and 0 < len(v) <= 1000:
                out[k] = tuple(v)
    return out


def goals_of(header: dict[str, Any]) -> tuple[str, ...]:
    """The plan goals a recording's header names, in code order (the legacy ones where none)."""
    named = header.get("goals")
    if isinstance(named, list) and named and all(isinstance(x, str) for x in named) and len(named) <= 255:
        return tuple(named)
    return LEGACY_GOALS


def by_name(rows: np.ndarray, have: tuple[str, ...], want: tuple[str, ...]) -> np.ndarray:
    """``rows`` (``[tick, *have]``) as ``[tick, *want]``: each column by its name; one the rows
    lack is NaN, one ``want`` does not name is left out."""
    if have == want:
        return rows
    out = np.full((len(rows), 1 + len(want)), np.nan, np.float32)
    out[:, 0] = rows[:, 0] if len(rows) else out[:, 0]
    for j, name in enumerate(want):
        if name in have:
            out[:, 1 + j] = rows[:, 1 + have.index(name)]
    return out

_SCHEMA = """
CREATE TABLE IF NOT EXISTS header (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS keyframes (tick INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (tick0 INTEGER PRIMARY KEY, tick1 INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS texts (hash TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls (tick0 INTEGER PRIMARY KEY, dict TEXT, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS dicts (hash TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS interventions (tick INTEGER NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL,
                                          PRIMARY KEY (tick, seq));
"""


class RecordingError(Exception):
    """A recording that cannot be used; the message is one line naming the problem."""


# ---------------------------------------------------------------- codec


def pack(arrays: dict[str, np.ndarray], extra: object = None) -> bytes:
    """Arrays (+ optional JSON-able ``extra``) → compressed bytes. No pickle."""
    names, parts = [], []
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        names.append([name, a.dtype.str, list(a.shape)])
        parts.append(a.tobytes())
    head = json.dumps({"arrays": names, "extra": extra}).encode()
    return zlib.compress(struct.pack("<I", len(head)) + head + b"".join(parts), 6)


def unpack(blob: bytes) -> tuple[dict[str, np.ndarray], object]:
    raw = zlib.decompress(blob)
    (n,) = struct.unpack("<I", raw[:4])
    head = json.loads(raw[4 : 4 + n])
    pos, out = 4 + n, {}
    for name, dtype, shape in head["arrays"]:
        dt = np.dtype(dtype)
        if dt.hasobject:
            raise ValueError("object arrays are not allowed")
        count = int(np.prod(shape)) if shape else 1
        size = count * dt.itemsize
        out[name] = np.frombuffer(raw, dt, count, pos).reshape(shape).copy()
        pos += size
    return out, head["extra"]


# ---------------------------------------------------------------- writing


class RecordedTick(NamedTuple):
    """One tick as the tick loop hands it to the recorder's writer thread."""

    tick: int
    applied: list[Any]  # the decision batches applied at it
    latencies: list[Any]
    row: tuple[Any, ...]  # the per-tick measures (TICK_COLUMNS, tick first)
    sample: list[Any] | None  # the sampled metrics, every metrics.sample_every ticks
    divergence: np.ndarray | None  # a fork's divergence row
    executed: np.ndarray  # every fish's executed action
    interventions: list[Any] | tuple[Any, ...] = ()  # applied at its start (mirofish.interventions)
    digest: bytes | None = None  # the state hash after it, every record.hash_every ticks
    ended: list[Any] | tuple[Any, ...] = ()  # per batch of applied: the trigger that ended each plan (Frame.ended)


class Recorder:
    """Writes one run to ``path`` while an engine runs; attach with :meth:`attach`.

    Args:
        path: the new recording (an existing file is replaced only with ``overwrite``; a path
            another run is recording to is refused — see :mod:`mirofish.observe.paths`).
        cfg: the run's config (stored in the header).
        scene: scene name for the header.
        extra_header: more header keys (parent, fork point …).
        keep_ticks: keep only about the last this many ticks (a live tank's recent past:
            older keyframes and chunks are deleted as the run goes on); None keeps all.
    """

    def __init__(self, path: str | Path, cfg: Config, scene: str = "aquarium",
                 extra_header: dict[str, Any] | None = None, overwrite: bool = False, inputs: tuple[Any, ...] = (),
                 keep_ticks: int | None = None):
        try:
            self.path = check_output(path, inputs, overwrite, "recording", scene="aquarium")
            self._lock_file = WriterLock(self.path)  # before anything is written or removed
        except OutputError as exc:
            raise RecordingError(str(exc)) from None
        self.cfg = cfg
        self.keyframe_every = cfg.record.keyframe_every
        self.chunk_ticks = max(1, int(round(cfg.record.commit_seconds / cfg.world.tick_seconds)))
        self.sample_every = cfg.metrics.sample_every
        self.hash_every = cfg.record.hash_every
        if self.path.exists():
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            self._lock_file.release()
            raise RecordingError(f"cannot create recording {self.path}: {exc}") from None
        db = self._db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        header = {
            "format_version": FORMAT_VERSION, "seed": cfg.seed, "config": cfg.model_dump(mode="json"),
            "scene": scene, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "code_version": __version__, "keyframe_every": self.keyframe_every, "chunk_ticks": self.chunk_ticks,
            # its columns and plan goals by name: a later version reads them by name (LEGACY_COLUMNS)
            "columns": {k: list(v) for k, v in columns_now().items()}, "goals": list(_goal_names()),
        }
        from ..brains.prompts import PromptError, prompts_of

        try:  # a fork's or a window's: the words its parent kept (no file a recording names is read)
            prompts = {} if "prompts" in (extra_header or {}) else \
                {label: p.meta() for label, p in prompts_of(cfg).items()}
        except PromptError as exc:  # a fork of a run whose prompt file is gone: say so, record on
            prompts = {"tank": {"name": cfg.brain.prompt or "default", "hash": "unreadable", "error": str(exc)}}
        if prompts:  # the words the model brains were sent: name, hash and the file's text
            header["prompts"] = prompts
        header.update(extra_header or {})
        header = redact_data(header)  # no URL's credentials in a file, wherever in the header it sits
        db.execute("BEGIN")
        db.executemany("INSERT OR REPLACE INTO header VALUES (?, ?)",
                       [(k, json.dumps(v)) for k, v in header.items()])
        db.execute("COMMIT")
        self._lock = threading.Lock()
        self._db_lock = threading.Lock()  # held by whoever uses the connection (writer, keep_as)
        self.keep_ticks = keep_ticks
        self.first_kept: int | None = None  # the oldest keyframe still kept (keep_ticks)
        self._flush_all = False
        self._ticks: list[RecordedTick] = []  # per tick, handed over by the tick loop
        self._keyframes: list[tuple[int, dict[str, Any]]] = []
        self._wake = threading.Event()
        self._texts_written: set[str] = set()  # hashes already in the texts table
        self._calls = CallsCodec()
        self._stop = False
        self._session: Recordable | None = None
        self._low_line = int(round(cfg.fish.low_energy * 100))
        self.error: str | None = None
        self.closed = False
        self._thread = threading.Thread(target=self._write_loop, name="mirofish-recorder", daemon=True)
        self._thread.start()

    # -- feeding (tick loop side: only cheap appends)

    def attach(self, session: Recordable, observe: bool = True) -> Recorder:
        """Record every tick ``session`` runs from now on: a keyframe of its current state now,
        then its frames (as one of its observers, unless ``observe`` is False: the caller then
        hands frames to :meth:`on_frame` itself, as a fork does with its divergence row), its
        metrics' measures, and a keyframe every ``keyframe_every`` ticks."""
        self._session = session
        kernel = getattr(getattr(session, "world", None), "tick_kernel", None)
        if kernel is not None:  # which tick wrote it: a replay on the other one says so if it diverges
            with self._db_lock:
                self._db.execute("INSERT OR REPLACE INTO header VALUES ('tick_kernel', ?)", (json.dumps(kernel),))
        self.keyframe(session.tick, session.state_arrays())
        if observe:
            session.observers.append(self.on_frame)
        return self

    def keyframe(self, tick: int, arrays: dict[str, np.ndarray]) -> None:
        with self._lock:
            self._keyframes.append((tick, arrays))
        self._wake.set()

    def on_frame(self, f: Frame, divergence: np.ndarray | None = None) -> None:
        """One simulated tick (``f.tick``): decisions applied at it, its measures, keyframes."""
        t = f.tick
        m = self._session.metrics if self._session is not None else None
        energy = f.energy if f.present is None else f.energy[f.present]  # of the fish in the water
        row = (t, _MEAN_ENERGY.compute(f), m.schooling_now() if m else 0.0,
               f.conflicts, f.moved, sum(len(b) for b in f.applied),
               int(np.count_nonzero(energy < self._low_line)))
        sample = None
        if m is not None and t % self.sample_every == 0:
            cur = m.current()
            sample = [t] + [cur.get(k, float("nan")) for k in SAMPLE_COLUMNS]  # (a column no metric fills: NaN)
        digest = None
        if self.hash_every and (t + 1) % self.hash_every == 0 and self._session is not None:
            digest = bytes.fromhex(self._session.state_hash())  # the state after tick t, for replays to check
        self._ticks.append(RecordedTick(t, f.applied, f.latencies, row, sample, divergence, f.executed,
                                        f.interventions, digest, f.ended))
        if (t + 1) % self.keyframe_every == 0 and self._session is not None:
            self.keyframe(t + 1, self._session.state_arrays())

    def flush(self) -> None:
        """Wait until everything handed over so far is committed (a short last chunk too)."""
        self._flush_all = True
        self._wake.set()
        deadline = time.monotonic() + 30
        while (self._ticks or self._keyframes) and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.002)
            self._wake.set()
        with self._db_lock:  # the writer's last transaction is over
            self._flush_all = False

    @staticmethod
    def check_path(path: str | Path, overwrite: bool = False, inputs: tuple[Any, ...] = ()) -> Path:
        """Refuse ``path`` as a new recording (RecordingError naming why) before anything is touched."""
        try:
            return check_output(path, inputs, overwrite, "recording", scene="aquarium")
        except OutputError as exc:
            raise RecordingError(str(exc)) from None

    def truncate(self, tick: int, arrays: dict[str, np.ndarray]) -> None:
        """Forget every tick from ``tick`` on (a live tank went back there: its state is
        ``arrays``) and go on from there. The recording must have a chunk boundary at
        ``tick`` (a :meth:`flush` when the tank was at ``tick`` makes one)."""
        self.flush()
        with self._db_lock, self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM chunks WHERE tick0 >= ?", (tick,))
            self._db.execute("DELETE FROM keyframes WHERE tick > ?", (tick,))
            self._db.execute("DELETE FROM calls WHERE tick0 >= ?", (tick,))
            self._db.execute("DELETE FROM interventions WHERE tick >= ?", (tick,))
        self.keyframe(tick, arrays)
        self.flush()

    def keep_as(self, path: str | Path, overwrite: bool = False) -> Path:
        """Make what was recorded so far a normal recording at ``path`` (refused like any
        output) and go on recording there, keeping everything from now on: a live tank's
        recent past kept ("Keep this"). The old file is removed."""
        try:
            new_path = check_output(path, (), overwrite, "recording", scene="aquarium")
            new_lock = WriterLock(new_path)
        except OutputError as exc:
            raise RecordingError(str(exc)) from None
        self.flush()
        old_path, old_lock = self.path, self._lock_file
        with self._db_lock:
            try:
                new_path.parent.mkdir(parents=True, exist_ok=True)
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(str(new_path) + suffix).unlink(missing_ok=True)
                db = sqlite3.connect(new_path, check_same_thread=False, isolation_level=None)
                self._db.backup(db)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
            except (sqlite3.Error, OSError) as exc:
                new_lock.release()
                raise RecordingError(f"cannot write {new_path}: {exc}") from None
            self._db.close()
            self._db, self.path, self._lock_file, self.keep_ticks = db, new_path, new_lock, None
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(old_path) + suffix).unlink(missing_ok=True)
        old_lock.release()
        return new_path

    def close(self) -> None:
        """Flush, checkpoint, and leave a single self-contained file."""
        if self.closed:
            return
        if self._session is not None and self.on_frame in self._session.observers:
            self._session.observers.remove(self.on_frame)
        self._stop = True
        self._wake.set()
        self._thread.join()
        try:
            digest = content_digest(self._db)
            with self._db:
                self._db.execute("BEGIN")
                self._db.execute("INSERT OR REPLACE INTO header VALUES ('checksum', ?)", (json.dumps(digest),))
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.execute("PRAGMA journal_mode=DELETE")
        except sqlite3.Error:
            pass
        self._db.close()
        self._lock_file.release()
        self.closed = True

    # -- writer thread

    def _write_loop(self) -> None:
        """Every 20 ms: take whole chunks of ticks, encode, commit in one transaction.

        A chunk is at least ``chunk_ticks`` ticks (one simulated second), more when the tick
        loop runs faster than the writer wakes. SQLite releases the GIL while it writes.
        """
        last_checkpoint = time.monotonic()
        while True:
            self._wake.wait(0.02)
            self._wake.clear()
            stopping = self._stop
            with self._db_lock:  # from taking ticks to their commit: flush() waits for it
                self._write_once(stopping)
                now = time.monotonic()
                if now - last_checkpoint >= CHECKPOINT_SECONDS:
                    # copy the WAL into the main file now and then: losing the -wal file after a
                    # crash then costs seconds, not the whole run
                    last_checkpoint = now
                    try:
                        self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    except sqlite3.Error:
                        pass
            if stopping and not self._ticks:
                return

    def _write_once(self, stopping: bool) -> None:
        with self._lock:
            keyframes, self._keyframes = self._keyframes, []
        ticks = self._ticks
        take = len(ticks) if stopping or self._flush_all else (len(ticks) if len(ticks) >= self.chunk_ticks else 0)
        batch = ticks[:take]
        del ticks[:take]
        try:
            rows_k = [(tick, pack(arrays)) for tick, arrays in keyframes]
            rows_c, rows_t = [], []
            rows_calls: list[tuple[Any, ...]] = []
            rows_d: list[tuple[Any, ...]] = []
            rows_i = [(r.tick, k, json.dumps(iv, sort_keys=True))
                      for r in batch for k, iv in enumerate(r.interventions)]
            if batch:
                *row, texts, calls = _encode_chunk(batch, self.cfg.record.model_calls)
                rows_c.append(tuple(row))
                rows_t = [(h, body) for h, body in texts.items() if h not in self._texts_written]
                if calls:
                    rows_calls, rows_d = self._calls.encode(row[0], calls)
            if rows_k or rows_c:
                with self._db:
                    self._db.execute("BEGIN")
                    self._db.executemany("INSERT OR REPLACE INTO keyframes VALUES (?, ?)", rows_k)
                    self._db.executemany("INSERT OR REPLACE INTO chunks VALUES (?, ?, ?)", rows_c)
                    self._db.executemany("INSERT OR IGNORE INTO texts VALUES (?, ?)", rows_t)
                    self._db.executemany("INSERT OR IGNORE INTO dicts VALUES (?, ?)", rows_d)
                    self._db.executemany("INSERT OR REPLACE INTO calls VALUES (?, ?, ?)", rows_calls)
                    self._db.executemany("INSERT OR REPLACE INTO interventions VALUES (?, ?, ?)", rows_i)
                self._texts_written.update(h for h, _ in rows_t)
                if self.keep_ticks is not None and rows_c:
                    self._trim(rows_c[-1][1] - self.keep_ticks)
        except sqlite3.Error as exc:  # disk full, file removed: keep the run going, say so once
            self.error = self.error or f"recording {self.path} stopped: {exc}"

    def _trim(self, cutoff: int) -> None:
        """Forget what lies before the newest keyframe at or before ``cutoff`` (keep_ticks)."""
        db = self._db
        row = db.execute("SELECT MAX(tick) FROM keyframes WHERE tick <= ?", (cutoff,)).fetchone()
        first = row[0] if row else None
        if first is None or (self.first_kept is not None and first <= self.first_kept):
            return
        self.first_kept = first
        with db:
            db.execute("BEGIN")
            db.execute("DELETE FROM keyframes WHERE tick < ?", (first,))
            db.execute("DELETE FROM chunks WHERE tick1 <= ?", (first,))
            start = db.execute("SELECT MIN(tick0) FROM chunks").fetchone()[0]
            db.execute("DELETE FROM calls WHERE tick0 < ?", (start if start is not None else first,))
            db.execute("DELETE FROM interventions WHERE tick < ?", (first,))
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the pages freed are reused: the file stays bounded


TICK_SCENE = "aquarium"  # the scene recorded tick by tick here; every other scene records turns (observe/turns.py)


def open_recording_file(path: Path) -> tuple[sqlite3.Connection, dict[str, Any]]:
    """Any MiroFish recording opened read-only, and its header; :class:`RecordingError` (one
    line) for a missing file, a folder, a file that is not SQLite or has no header."""
    import os
    import stat

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
    with open(path, "rb") as fh:
        magic = fh.read(16)
    if magic != b"SQLite format 3\x00":
        raise RecordingError(f"not a MiroFish recording (not an SQLite database): {path}")
    try:
        db = open_read_only(path)  # (immutable unless a recorder is writing it)
        rows = db.execute("SELECT key, value FROM header").fetchall()
        return db, {k: json.loads(v) for k, v in rows}
    except (sqlite3.DatabaseError, ValueError) as exc:
        raise RecordingError(f"recording is damaged or not a MiroFish recording ({exc}): {path}") from None


def recording_scene(path: str | Path) -> str:
    """The scene a recording file holds (``aquarium``, ``negotiation`` …), read from its header."""
    db, header = open_recording_file(Path(path))
    db.close()
    return str(header.get("scene", "aquarium"))


def content_digest(db: sqlite3.Connection, tables: Sequence[tuple[str, str]] | None = None) -> str:
    """A digest of everything a recording holds — header (but its checksum), then ``tables``
    (name, order) row by row; by default an aquarium's keyframes and chunks in tick order —
    written at a clean close and checked when the file is opened, so a file edited afterwards
    says so instead of replaying something else."""
    h = hashlib.blake2b(digest_size=16)
    for key, value in db.execute("SELECT key, value FROM header WHERE key != 'checksum' ORDER BY key"):
        h.update(f"{key}={value}\n".encode())
    if tables is None:
        tables = [("keyframes", "tick"), ("chunks", "tick0")]
        for name, key in (("texts", "hash"), ("calls", "tick0"), ("dicts", "hash"), ("interventions", "tick, seq")):
            # recordings made before exchanges were kept have none of these
            if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone():
                tables.append((name, key))
    for table, key in tables:
        for row in db.execute(f"SELECT * FROM {table} ORDER BY {key}"):
            for v in row:
                h.update(v if isinstance(v, bytes) else repr(v).encode())
                h.update(b"|")
    return h.hexdigest()


def _encode_chunk(given: Sequence[tuple[Any, ...]], keep_calls: bool = True) -> tuple[Any, ...]:
    """Consecutive ticks → (tick0, tick1, blob, texts) with every column in one packed blob;
    ``texts``: the shared texts (``{hash: text}``) the chunk's model exchanges reference."""
    ticks = [RecordedTick(*r) for r in given]  # (plain tuples too: the tests hand some in)
    tick0, tick1 = ticks[0].tick, ticks[-1].tick + 1
    batches, dts, lats, thoughts, summaries, calls = [], [], [], [], [], []
    ends: list[np.ndarray] = []
    shared: dict[str, str] = {}
    for r in ticks:
        t, applied, latencies = r.tick, r.applied, r.latencies
        for k, b in enumerate(applied):
            batches.append(b)
            ends.append(np.asarray(r.ended[k], np.int8) if k < len(r.ended) else np.full(len(b), -1, np.int8))
            dts.append(np.full(len(b), t - tick0, np.uint16))
            if b.thoughts:
                thoughts += [[int(t), int(f), text] for f, text in zip(b.fish, b.thoughts) if text]
            if b.summaries:
                summaries += [[int(t), int(f), int(k), text] for f, k, text in b.summaries]
            for c in (b.calls or ()) if keep_calls else ():
                shared.update(c.get("_texts") or {})
                calls.append({**{k: v for k, v in c.items() if k != "_texts"}, "tick": int(t)})
        if latencies:
            lats.append(np.asarray(latencies))

    def column(attr: str, dtype: type[np.generic]) -> np.ndarray:
        parts = [np.zeros(len(b), dtype) if getattr(b, attr) is None else getattr(b, attr) for b in batches]
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    fish = column("fish", np.uint32)
    lat = np.concatenate(lats) if lats else np.zeros(0)
    arrays = {
        "dt": np.concatenate(dts) if dts else np.zeros(0, np.uint16),
        "fish": fish,
        "goal": column("goals", np.uint8), "param": column("params", np.int16),
        "horizon": column("horizons", np.uint16),
        "tier": column("tier", np.uint8), "status": column("status", np.uint8),
        # 0.1 ms units; 0 for a decision whose request this run did not make (a fork's first ones)
        "latency": np.minimum(np.round(np.nan_to_num(lat, nan=0.0) * 1e4), 2**32 - 1).astype(np.uint32),
        "tokens": column("tokens", np.uint32),
        "ended": np.concatenate(ends).astype(np.int8) if ends else np.zeros(0, np.int8),
        "ticks": np.array([r.row for r in ticks], np.float32),
        "samples": np.array([r.sample for r in ticks if r.sample is not None],
                            np.float32).reshape(-1, 1 + len(SAMPLE_COLUMNS)),
        "divergence": np.array([np.concatenate([[r.tick], r.divergence]) for r in ticks if r.divergence is not None],
                               np.float32).reshape(-1, 1 + len(DIVERGENCE_COLUMNS)),
        "executed": np.stack([r.executed for r in ticks]).astype(np.uint8),
        "hashes": np.array([list(struct.pack("<I", r.tick - tick0)) + list(r.digest) for r in ticks
                            if r.digest is not None], np.uint8).reshape(-1, HASH_ROW),
    }
    texts = {"thoughts": thoughts, "summaries": summaries} if thoughts or summaries else None
    return tick0, tick1, encode_columns(arrays, texts), shared, calls


_DERIVED = ("key", "view")  # exchange fields not stored: recomputed on reading (exchanges.complete_call)


class CallsCodec:
    """A recording's model exchanges, compressed per chunk with a shared dictionary.

    :meth:`encode` gives the ``calls`` row of a chunk and any new ``dicts`` row; the dictionary
    is the latest 32 KB of exchange JSON at the time it is taken — after the first 24 KB, then
    every 256 KB — so it holds the personas, memories and phrasing of the run as it is now.
    """

    WINDOW, FIRST, EVERY = 32_768, 24_576, 262_144

    def __init__(self) -> None:
        self._recent = b""
        self._since = 0
        self._dict: tuple[str, bytes] | None = None

    def encode(self, tick0: int, calls: list[dict[str, Any]]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        raw = json.dumps([{k: v for k, v in c.items() if k not in _DERIVED} for c in calls],
                         separators=(",", ":")).encode()
        name, zdict = self._dict if self._dict is not None else (None, b"")
        comp = zlib.compressobj(9, zdict=zdict) if zdict else zlib.compressobj(9)
        row = (tick0, name, comp.compress(raw) + comp.flush())
        self._recent = (self._recent + raw)[-self.WINDOW :]
        self._since += len(raw)
        new: list[tuple[Any, ...]] = []
        if self._since >= (self.EVERY if self._dict is not None else self.FIRST):
            zd = self._recent
            key = hashlib.blake2b(zd, digest_size=8).hexdigest()
            self._dict, self._since = (key, zd), 0
            new.append((key, zlib.compress(zd, 9)))
        return [row], new


def decode_calls(blob: bytes, zdict: bytes | None) -> list[dict[str, Any]]:
    d = zlib.decompressobj(zdict=zdict) if zdict else zlib.decompressobj()
    calls = json.loads(d.decompress(blob) + d.flush())
    if not (isinstance(calls, list) and all(isinstance(c, dict) and isinstance(c.get("tick"), int)
                                            and isinstance(c.get("fish"), int) for c in calls)):
        raise ValueError("its model exchanges are not records with a tick and a fish")
    return calls


# A chunk's columns in a fixed order (dtype, row width); fish ids are 16-bit unless a tank
# has more than 65,535 fish. A fixed layout keeps small (one-second) chunks small.
_CHUNK_MAGIC = b"MFC4"
_MFC2 = (
    ("dt", np.uint16, 0), ("fish", None, 0), ("goal", np.uint8, 0), ("param", np.int16, 0),
    ("horizon", np.uint16, 0), ("tier", np.uint8, 0),
    ("status", np.uint8, 0), ("latency", np.uint32, 0), ("tokens", np.uint32, 0),
    ("ticks", np.float32, 1 + len(TICK_COLUMNS)), ("samples", np.float32, 1 + len(SAMPLE_COLUMNS)),
    ("divergence", np.float32, 1 + len(DIVERGENCE_COLUMNS)), ("executed", np.uint8, -1),
)
# MFC3 adds the state hash every record.hash_every ticks: per row the tick's offset in the
# chunk (4 bytes, little-endian) and the 16-byte digest of the state after it.
HASH_ROW = 20
_MFC3 = (*_MFC2, ("hashes", np.uint8, HASH_ROW))
# MFC4 adds, per decision, the trigger that ended the fish's plan before it (-1: none raised —
# a timeout, the first plan, a fork's or a person's choice): why a plan ended early, after a seek.
_CHUNK_LAYOUT = (*_MFC3, ("ended", np.int8, 0))
# Before plans: single actions, 16-bit latency, fewer sampled metrics, no executed actions.
_OLD_SAMPLE_COLUMNS = LEGACY_COLUMNS["samples"][: LEGACY_COLUMNS["samples"].index("school_size")]
_LAYOUTS = {
    b"MFC4": _CHUNK_LAYOUT,
    b"MFC3": _MFC3,
    b"MFC2": _MFC2,
    b"MFC1": (
        ("dt", np.uint16, 0), ("fish", None, 0), ("param", np.uint8, 0), ("tier", np.uint8, 0),
        ("status", np.uint8, 0), ("latency", np.uint16, 0), ("tokens", np.uint32, 0),
        ("ticks", np.float32, 1 + len(TICK_COLUMNS)), ("samples", np.float32, 1 + len(_OLD_SAMPLE_COLUMNS)),
        ("divergence", np.float32, 1 + len(DIVERGENCE_COLUMNS)),
    ),
}
_CHUNK_HEAD = struct.Struct("<4sBIIIII")
_CHUNK_HEAD3 = struct.Struct("<4sBIIIIII")  # MFC3 and MFC4: and the number of state hashes


def encode_columns(arrays: dict[str, np.ndarray], texts: dict[str, Any] | None) -> bytes:
    wide = bool(arrays["fish"].size and arrays["fish"].max() >= 65536)
    head = _CHUNK_HEAD3.pack(_CHUNK_MAGIC, wide, len(arrays["dt"]), len(arrays["ticks"]), len(arrays["samples"]),
                             len(arrays["divergence"]), arrays["executed"].shape[1], len(arrays["hashes"]))
    parts = [head]
    for name, dtype, _ in _CHUNK_LAYOUT:
        dtype = dtype or (np.uint32 if wide else np.uint16)
        parts.append(np.ascontiguousarray(arrays[name], dtype=np.dtype(dtype).newbyteorder("<")).tobytes())
    if texts:
        parts.append(json.dumps(texts).encode())
    return zlib.compress(b"".join(parts), 6)


def _goal_names() -> tuple[str, ...]:
    from ..fish.plans import GOAL_NAMES

    return tuple(GOAL_NAMES)


def decode_columns(blob: bytes, columns: dict[str, tuple[str, ...]] | None = None
                   ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A chunk's columns and texts. ``columns``: the names its per-tick, sample and divergence
    rows hold (the file's header's, :func:`columns_of`; default this version's) — their widths."""
    widths = {k: 1 + len(v) for k, v in (columns or columns_now()).items()}
    raw = zlib.decompress(blob)
    head = _CHUNK_HEAD3 if raw[:4] in (b"MFC3", b"MFC4") else _CHUNK_HEAD
    magic, wide, n_dec, n_ticks, n_samples, n_div, n_fish, *more = head.unpack_from(raw)
    layout = _LAYOUTS.get(magic)
    if layout is None:
        raise ValueError("unknown chunk layout")
    rows = {"ticks": n_ticks, "samples": n_samples, "divergence": n_div, "executed": n_ticks,
            "hashes": more[0] if more else 0}
    pos, out = head.size, {}
    for name, dtype, width in layout:
        dt = np.dtype(dtype or (np.uint32 if wide else np.uint16)).newbyteorder("<")
        if name in widths and not (magic == b"MFC1" and name == "samples"):
            width = widths[name]  # as wide as the file's own columns
        width = n_fish if width == -1 else width
        count = rows[name] * width if width else n_dec
        out[name] = np.frombuffer(raw, dt, count, pos).copy()
        if width:
            out[name] = out[name].reshape(rows[name], width)
        pos += count * dt.itemsize
    texts = json.loads(raw[pos:]) if pos < len(raw) else {}
    if not (isinstance(texts, dict) and all(isinstance(texts.get(k, []), list) for k in ("thoughts", "summaries"))):
        raise ValueError("its text part is not {thoughts: [...], summaries: [...]}")
    for key, width in (("thoughts", 3), ("summaries", 4)):
        if not all(isinstance(row, list) and len(row) == width for row in texts.get(key, [])):
            raise ValueError(f"its {key} are not rows of {width}")
    if magic not in (b"MFC3", b"MFC4"):  # made before state hashes were kept
        out["hashes"] = np.zeros((0, HASH_ROW), np.uint8)
    if magic != b"MFC4":  # made before the triggers that ended plans were kept
        out["ended"] = np.full(n_dec, -1, np.int8)
    if magic == b"MFC1":  # single actions → hold plans; old sample rows padded with zeros
        out["goal"] = np.zeros(n_dec, np.uint8)
        out["horizon"] = np.zeros(n_dec, np.uint16)
        out["param"] = out["param"].astype(np.int16)
        out["samples"] = np.pad(out["samples"], ((0, 0), (0, widths["samples"] - 1 - len(_OLD_SAMPLE_COLUMNS))),
                                constant_values=np.nan)
        out["executed"] = np.zeros((0, 0), np.uint8)
    return out, {"thoughts": texts.get("thoughts", []), "summaries": texts.get("summaries", [])}


# ---------------------------------------------------------------- reading


@dataclass
class TickDecisions:
    fish: np.ndarray
    goal: np.ndarray
    param: np.ndarray
    horizon: np.ndarray
    tier: np.ndarray
    status: np.ndarray
    latency_s: np.ndarray
    tokens: np.ndarray
    thoughts: dict[int, str]
    summaries: list[tuple[int, int, str]]  # (fish, serial, text) written by a model at this tick
    calls: list[dict[str, Any]] = None  # type: ignore[assignment]  # the model exchanges behind them (brains/exchanges.py)
    ended: np.ndarray = None  # type: ignore[assignment]  # the trigger that ended each fish's plan before (-1: none)


# What a damaged blob can raise while it is decoded (all become a one-line RecordingError).
_DAMAGE = (zlib.error, ValueError, KeyError, IndexError, TypeError, struct.error, OverflowError, MemoryError)


def _blob(data: object) -> bytes:
    if not isinstance(data, bytes):
        raise TypeError(f"stored as {type(data).__name__}, not a blob")
    return data


_CALL_TEXT = ("kind", "user")  # an exchange's fields that are text; those of _CALL_TEXT_OR_NONE may be None
_CALL_TEXT_OR_NONE = ("model", "read", "reply", "tier", "endpoint", "format", "prefix", "schema", "group")
_CALL_INT = ("tick", "fish")


def _checked_call(c: Any, slots: int) -> dict[str, Any]:
    """An exchange as readers use it, or ``ValueError`` (the recording is damaged): a dict whose
    tick and fish are whole numbers in range and whose text fields are text — a garbled or forged
    one is refused here, not deep inside a table writer or a trace."""
    if not isinstance(c, dict):
        raise ValueError("an exchange that is not a record")
    for k in _CALL_INT:  # (a fish past the tank is read: it matches no fish a reader asks about)
        v = c.get(k)
        if type(v) is not int or (k == "tick" and not 0 <= v < 2**62):
            raise ValueError(f"an exchange's {k} is {str(v)[:20]!r}")
    for k in _CALL_TEXT:
        if not isinstance(c.get(k), str):
            raise ValueError(f"an exchange's {k} is not text")
    for k in _CALL_TEXT_OR_NONE:
        if c.get(k) is not None and not isinstance(c[k], str):
            raise ValueError(f"an exchange's {k} is not text")
    return c  # (its counts are read as far as they are numbers: a table or a trace leaves the others out)


def _check_codes(d: dict[str, Any]) -> None:
    """A chunk's plan goals and tiers are codes this version knows (a damaged or forged file's
    goal 7 is refused, not read past the table's end)."""
    from ..brains.base import TIERS
    from ..fish.plans import GOAL_NAMES

    if d["goal"].size and int(d["goal"].max()) >= len(GOAL_NAMES):
        raise ValueError(f"plan goal code {int(d['goal'].max())} (this version knows 0..{len(GOAL_NAMES) - 1})")
    if d["tier"].size and int(d["tier"].max()) >= len(TIERS):
        raise ValueError(f"tier code {int(d['tier'].max())} (this version knows 0..{len(TIERS) - 1})")


def _usable_prompts(value: Any) -> dict[str, dict[str, Any]] | None:
    """A header's ``prompts`` as this version reads it: only entries that are tables (name, hash,
    text as text); anything else a damaged or edited file holds there is left out, not read."""
    if not isinstance(value, dict):
        return None
    out = {}
    for label, p in value.items():
        if isinstance(label, str) and isinstance(p, dict):
            out[label] = {k: v for k, v in p.items() if k not in ("name", "hash", "text", "path") or isinstance(v, str)}
    return out or None


class Recording:
    """A recording opened read-only. Raises :class:`RecordingError` for anything unusable."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._db, self.header = open_recording_file(self.path)
        if self.header.get("scene", TICK_SCENE) != TICK_SCENE:
            raise RecordingError(f"{self.path} is a {self.header['scene']} recording (turns, not ticks): replay, fork "
                                 f"--at-turn and export --tables read it")
        if "prompts" in self.header:
            prompts = _usable_prompts(self.header["prompts"])
            if prompts is None:
                del self.header["prompts"]
            else:
                self.header["prompts"] = prompts
        # its columns and plan goals by name (columns_of): mapped onto this version's as chunks are read
        self._file_columns = columns_of(self.header)
        goals, now = goals_of(self.header), _goal_names()
        unknown = [g for g in goals if g not in now]
        if unknown:
            raise RecordingError(f"recording {self.path} has plans of a type this version does not know "
                                 f"({', '.join(unknown[:3])}): a newer MiroFish (or the plug-in that adds it) reads it")
        self._goal_map = None if goals == now else np.array([now.index(g) for g in goals], np.uint8)
        version = self.header.get("format_version")
        if not isinstance(version, int):
            raise RecordingError(f"not a MiroFish recording (no format version): {self.path}")
        if version > FORMAT_VERSION:
            raise RecordingError(f"recording format {version} is newer than this MiroFish reads ({FORMAT_VERSION}): "
                                 f"{self.path}")
        try:
            self.config = Config.model_validate(self.header["config"])
        except ValidationError as exc:
            err = exc.errors()[0]
            raise RecordingError(f"recording's stored config is invalid ({'.'.join(map(str, err['loc']))}: "
                                 f"{err['msg']}): {self.path}") from None
        except (KeyError, TypeError):
            raise RecordingError(f"recording has no usable config in its header: {self.path}") from None
        try:
            self.keyframe_ticks: list[int] = [r[0] for r in
                                              self._db.execute("SELECT tick FROM keyframes ORDER BY tick")]
            spans = self._db.execute("SELECT tick0, tick1 FROM chunks ORDER BY tick0").fetchall()
        except sqlite3.DatabaseError as exc:
            raise RecordingError(f"recording is damaged ({type(exc).__name__}: {exc}): {self.path}") from None
        if not self.keyframe_ticks:
            raise RecordingError(f"recording has no keyframe (it was cut off at its very start): {self.path}")
        if not all(isinstance(t, int) and t >= 0 for t in self.keyframe_ticks):
            raise RecordingError(f"recording is damaged (a keyframe's tick is not a tick): {self.path}")
        self.first_tick = self.keyframe_ticks[0]
        self.last_tick = self._check_spans(spans)
        stored = self.header.get("checksum")
        if stored is not None:  # written at a clean close (a run cut off by a crash has none)
            try:
                actual = content_digest(self._db)
            except sqlite3.DatabaseError as exc:
                raise RecordingError(f"recording is damaged ({exc}): {self.path}") from None
            if actual != stored:
                raise RecordingError(f"recording was modified after it was written (its checksum does not match): "
                                     f"{self.path}")
        self.chunk_ticks = self.header.get("chunk_ticks")
        if type(self.chunk_ticks) is not int or not 1 <= self.chunk_ticks <= MAX_CHUNK_TICKS:
            raise RecordingError(f"recording is damaged (chunk_ticks {self.chunk_ticks!r} in its header): "
                                 f"{self.path}")
        self._cache: dict[int, tuple[Any, ...]] = {}
        self._texts: dict[str, str] | None = None  # the shared texts, read once
        self._tables: dict[str, bool] = {}  # which optional tables the file has
        self._dicts: dict[str, bytes] = {}  # exchange dictionaries by hash
        self._calls_cache: dict[int, list[dict[str, Any]]] = {}  # decoded exchanges by chunk start
        self._starts: list[int] = []  # sorted keys of _cache
        self._interventions: dict[int, list[dict[str, Any]]] | None = None

    def _check_spans(self, spans: list[Any]) -> int:
        """The last recorded tick, after checking that the chunks cover the ticks from the
        first keyframe on without gap or overlap (a damaged or edited file is refused, not
        re-simulated for ticks it does not hold)."""
        expected = self.first_tick
        if spans and isinstance(spans[0][0], int) and isinstance(spans[0][1], int) \
                and spans[0][0] < expected < spans[0][1]:
            expected = spans[0][0]  # a kept recent past: its first chunk began before its first keyframe
        for tick0, tick1 in spans:
            if not (isinstance(tick0, int) and isinstance(tick1, int)):
                raise RecordingError(f"recording is damaged (a chunk's ticks are not numbers): {self.path}")
            if tick1 <= tick0 or tick1 - tick0 > MAX_CHUNK_TICKS:
                raise RecordingError(f"recording is damaged (a chunk claims ticks {tick0}..{tick1}): {self.path}")
            if tick0 != expected:
                what = "a gap" if tick0 > expected else "an overlap"
                raise RecordingError(f"recording is damaged ({what} in its chunks at tick {expected}): {self.path}")
            expected = tick1
        return expected

    def close(self) -> None:
        self._db.close()

    def _fetch(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise RecordingError(f"recording is damaged ({exc}): {self.path}") from None

    def keyframe(self, tick: int) -> dict[str, np.ndarray]:
        rows = self._fetch("SELECT data FROM keyframes WHERE tick = ?", (tick,))
        if not rows:
            raise RecordingError(f"no keyframe at tick {tick} in {self.path}")
        try:
            return unpack(_blob(rows[0][0]))[0]
        except _DAMAGE as exc:
            raise RecordingError(f"recording is damaged (keyframe {tick}: {exc}): {self.path}") from None

    def keyframe_at_or_before(self, tick: int) -> int:
        i = int(np.searchsorted(self.keyframe_ticks, tick, side="right")) - 1
        if i < 0:
            raise RecordingError(f"tick {tick} is before this recording starts (tick {self.first_tick})")
        return self.keyframe_ticks[i]

    def load_chunks(self, t0: int, t1: int) -> None:
        """Decode (and cache) every chunk that covers ticks in ``[t0, t1)``."""
        rows = self._fetch("SELECT tick0, tick1, data FROM chunks WHERE tick1 > ? AND tick0 < ? ORDER BY tick0",
                           (t0, t1))
        for tick0, tick1, data in rows:
            if tick0 in self._cache:
                continue
            try:
                d, texts = decode_columns(_blob(data), self._file_columns)
                for k, want in columns_now().items():  # the file's columns by name onto this version's
                    d[k] = by_name(d[k], self._file_columns[k], want)
                if self._goal_map is not None:  # the file's plan goals by name onto this version's codes
                    if d["goal"].size and int(d["goal"].max()) >= len(self._goal_map):
                        raise ValueError(f"plan goal code {int(d['goal'].max())} (the file names "
                                         f"{len(self._goal_map)} goals)")
                    d["goal"] = self._goal_map[d["goal"]]
                if d["fish"].size and int(d["fish"].max()) >= self.config.fish.slots:
                    raise ValueError(f"fish id {int(d['fish'].max())} in a tank of {self.config.fish.slots}")
                if d["executed"].size and d["executed"].shape[1] != self.config.fish.slots:
                    raise ValueError("executed actions for a different number of fish")
                _check_codes(d)
                self._cache[tick0] = (tick1, d, texts, d["ticks"], d["samples"], d["divergence"])
            except _DAMAGE as exc:
                raise RecordingError(f"recording is damaged (chunk at tick {tick0}: {exc}): {self.path}") from None
            bisect.insort(self._starts, tick0)
        if len(self._starts) > 20000:  # keep memory bounded on very long recordings
            for key in self._starts[:10000]:
                del self._cache[key]
            del self._starts[:10000]

    def chunks(self, t0: int, t1: int) -> Iterator[tuple[int, Any, dict[str, Any]]]:
        """``(tick0, columns, texts)`` of every chunk covering ticks in ``[t0, t1)``, in order
        (decoded columns as in :func:`decode_columns`; callers select the ticks they want)."""
        self.load_chunks(t0, t1)
        for k in self._starts:
            tick1, d, texts, *_ = self._cache[k]
            if k < t1 and tick1 > t0:
                yield k, d, texts

    def _chunk_for(self, tick: int) -> tuple[Any, tuple[Any, ...] | None]:
        for attempt in range(2):
            i = bisect.bisect_right(self._starts, tick) - 1
            if i >= 0:
                entry = self._cache[self._starts[i]]
                if tick < entry[0]:
                    return self._starts[i], entry
            if attempt == 0:
                self.load_chunks(tick, tick + 1)
        return None, None

    def decisions_at(self, tick: int) -> TickDecisions | None:
        """The decisions applied at ``tick``, or None if the recording has no chunk for it."""
        tick0, entry = self._chunk_for(tick)
        if entry is None:
            return None
        _, d, texts, *_ = entry
        sel = d["dt"] == tick - tick0
        th = {f: s for t, f, s in texts["thoughts"] if t == tick}
        sm = [(f, k, s) for t, f, k, s in texts["summaries"] if t == tick]
        calls = [c for c in self._calls_of(tick0) if c["tick"] == tick]
        return TickDecisions(d["fish"][sel].astype(np.int64), d["goal"][sel].astype(np.int8),
                             d["param"][sel].astype(np.int16), d["horizon"][sel].astype(np.int16),
                             d["tier"][sel].astype(np.int8), d["status"][sel].astype(np.int8),
                             d["latency"][sel] / 1e4, d["tokens"][sel].astype(np.int64), th, sm, calls,
                             d["ended"][sel].astype(np.int8))

    def texts(self) -> dict[str, str]:
        """The shared texts model exchanges reference by hash (system prompts, schemas)."""
        if self._texts is None:
            try:
                has = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'texts'").fetchone()
                rows = self._db.execute("SELECT hash, body FROM texts").fetchall() if has else []
            except sqlite3.DatabaseError as exc:
                raise RecordingError(f"recording is damaged ({exc}): {self.path}") from None
            self._texts = {str(h): str(b) for h, b in rows}
        return self._texts

    def interventions(self) -> dict[int, list[dict[str, Any]]]:
        """The hands-on interventions by tick (see :mod:`mirofish.interventions`), read once;
        each as applied, with ``cells`` (how many cells it changed)."""
        if self._interventions is None:
            rows = self._fetch("SELECT tick, data FROM interventions ORDER BY tick, seq", ()) \
                if self._has("interventions") else []
            out: dict[int, list[dict[str, Any]]] = {}
            try:
                for tick, data in rows:
                    out.setdefault(int(tick), []).append(json.loads(data))
            except (ValueError, TypeError) as exc:
                raise RecordingError(f"recording is damaged (an intervention: {exc}): {self.path}") from None
            self._interventions = out
        return self._interventions

    def interventions_at(self, tick: int) -> list[dict[str, Any]]:
        """The interventions applied at the start of ``tick`` (what replays and forks apply again)."""
        return self.interventions().get(tick, [])

    def _has(self, table: str) -> bool:
        if table not in self._tables:
            try:
                self._tables[table] = self._db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None
            except sqlite3.DatabaseError as exc:
                raise RecordingError(f"recording is damaged ({exc}): {self.path}") from None
        return self._tables[table]

    def _zdict(self, name: str | None) -> bytes | None:
        if name is None:
            return None
        if name not in self._dicts:
            rows = self._fetch("SELECT data FROM dicts WHERE hash = ?", (name,))
            if not rows:
                raise RecordingError(f"recording is damaged (exchange dictionary {name} is missing): {self.path}")
            try:
                self._dicts[name] = zlib.decompress(_blob(rows[0][0]))
            except _DAMAGE as exc:
                raise RecordingError(f"recording is damaged (exchange dictionary {name}: {exc}): {self.path}") from None
        return self._dicts[name]

    def _calls_rows(self, rows: list[Any]) -> list[dict[str, Any]]:
        from ..brains.exchanges import complete_call

        texts = self.texts()
        out = []
        for tick0, name, data in rows:
            try:
                out += [complete_call(_checked_call(c, self.config.fish.slots), texts)
                        for c in decode_calls(_blob(data), self._zdict(name))]
            except _DAMAGE as exc:
                raise RecordingError(f"recording is damaged (model exchanges at tick {tick0}: {exc}): "
                                     f"{self.path}") from None
        return out

    def _calls_of(self, tick0: int | None) -> list[dict[str, Any]]:
        """The exchanges stored with the chunk that starts at ``tick0``."""
        if tick0 is None or not self._has("calls"):
            return []
        cache = self._calls_cache
        if tick0 not in cache:
            if len(cache) > 4096:
                cache.clear()
            cache[tick0] = self._calls_rows(self._fetch("SELECT tick0, dict, data FROM calls WHERE tick0 = ?",
                                                        (tick0,)))
        return cache[tick0]

    def model_calls(self, t0: int | None = None, t1: int | None = None,
                    fish: int | None = None) -> list[dict[str, Any]]:
        """The model exchanges of decisions applied in ``[t0, t1)`` (default: all), in tick
        order, each with its cache ``key`` and ``view`` (see :mod:`mirofish.brains.exchanges`)."""
        lo = self.first_tick if t0 is None else t0
        hi = self.last_tick if t1 is None else t1
        if not self._has("calls"):
            return []
        start = self._fetch("SELECT MAX(tick0) FROM chunks WHERE tick0 <= ?", (lo,))[0][0]
        rows = self._fetch("SELECT tick0, dict, data FROM calls WHERE tick0 >= ? AND tick0 < ? ORDER BY tick0",
                           (start if start is not None else lo, hi))
        return [c for c in self._calls_rows(rows) if lo <= c["tick"] < hi and (fish is None or c["fish"] == fish)]

    def hash_after(self, tick: int) -> str | None:
        """The state hash the recording kept for the state after ``tick`` ticks (the state at
        ``tick``), or None where it kept none (``record.hash_every``)."""
        tick0, entry = self._chunk_for(tick - 1)
        if entry is None:
            return None
        rows = entry[1]["hashes"]
        if not len(rows):
            return None
        offsets = rows[:, :4].copy().view("<u4").ravel()
        hit = np.flatnonzero(offsets == tick - 1 - tick0)
        return bytes(rows[hit[0], 4:]).hex() if hit.size else None

    def executed_at(self, tick: int) -> np.ndarray | None:
        """The action every fish executed at ``tick`` (None for recordings made before plans)."""
        tick0, entry = self._chunk_for(tick)
        if entry is None or entry[1]["executed"].size == 0:
            return None
        executed: np.ndarray = entry[1]["executed"][tick - tick0].astype(np.int8)
        return executed

    def _rows(self, t0: int, t1: int, slot: int, width: int) -> np.ndarray:
        self.load_chunks(t0, t1)
        parts = [self._cache[k][slot] for k in self._starts
                 if k < t1 and self._cache[k][0] > t0 and len(self._cache[k][slot])]
        rows = np.concatenate(parts) if parts else np.zeros((0, width), np.float32)
        return rows[(rows[:, 0] >= t0) & (rows[:, 0] < t1)]

    def file_columns(self) -> dict[str, tuple[str, ...]]:
        """The columns the file itself holds, by name (this version's rows hold :func:`columns_now`'s:
        a name here that is not there was written by another version and is left aside)."""
        return dict(self._file_columns)

    def tick_rows(self, t0: int, t1: int) -> np.ndarray:
        """Per-tick measures ``[tick, *TICK_COLUMNS]`` for ticks in ``[t0, t1)``."""
        return self._rows(t0, t1, 3, 1 + len(TICK_COLUMNS))

    def sample_rows(self, t0: int, t1: int) -> np.ndarray:
        """Sampled metrics ``[tick, *SAMPLE_COLUMNS]``."""
        return self._rows(t0, t1, 4, 1 + len(SAMPLE_COLUMNS))

    def divergence_rows(self, t0: int, t1: int) -> np.ndarray:
        """For a fork: ``[tick, *DIVERGENCE_COLUMNS]`` per tick."""
        return self._rows(t0, t1, 5, 1 + len(DIVERGENCE_COLUMNS))
