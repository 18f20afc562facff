"""Writing a recording while a run goes on: :class:`Recorder` (the tick loop hands it each
tick; a writer thread encodes and commits), and how a chunk of ticks becomes a row
(:func:`encode_chunk`).

Part of :mod:`mirofish.observe.recording` (which documents the format and re-exports these).
"""

from __future__ import annotations

import json
import sqlite3
import struct
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from .. import __version__
from ..config import Config, redact_data
from ..fish.plans import SHIPPED, PlanTable
from ..fish.plantypes import row_data
from .metrics import metric
from .paths import OutputError, WriterLock, check_output
from .recording_calls import CallsCodec
from .recording_chunks import HASH_ROW, encode_columns, pack
from .recording_columns import columns_now, run_columns, run_plans
from .recording_file import FORMAT_VERSION, RecordingError, content_digest

if TYPE_CHECKING:
    from ..frame import Frame
    from ..registry import Registry
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


CHECKPOINT_SECONDS = 2.0  # wall seconds between WAL checkpoints into the main file
_MEAN_ENERGY = metric("mean_energy")
_SIDE_FILES = ("", "-wal", "-shm", "-journal")  # a recording and SQLite's files beside it

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


class _Rows(NamedTuple):
    """What one writer transaction inserts, per table."""

    keyframes: list[tuple[Any, ...]]
    chunks: list[tuple[Any, ...]]
    texts: list[tuple[Any, ...]]
    calls: list[tuple[Any, ...]]
    dicts: list[tuple[Any, ...]]
    interventions: list[tuple[Any, ...]]


def _remove(path: Path) -> None:
    """A recording's file and SQLite's files beside it, gone."""
    for suffix in _SIDE_FILES:
        Path(str(path) + suffix).unlink(missing_ok=True)


def _prompts(cfg: Config, extra_header: dict[str, Any]) -> dict[str, Any]:
    """The words the model brains are sent (name, hash, the file's text), for the header; none
    for a fork's or a window's, whose ``extra_header`` holds the words its parent kept (no file
    a recording names is read)."""
    from ..brains.prompts import PromptError, prompts_of

    if "prompts" in extra_header:
        return {}
    try:
        return {label: p.meta() for label, p in prompts_of(cfg).items()}
    except PromptError as exc:  # a fork of a run whose prompt file is gone: say so, record on
        return {"tank": {"name": cfg.brain.prompt or "default", "hash": "unreadable", "error": str(exc)}}


def own_rows(plans: PlanTable) -> list[dict[str, Any]]:
    """The rows of a run's plan types that MiroFish does not ship (a plug-in's, a run's own), as
    data: a header keeps them, so its file replays where they are not installed."""
    return [row_data(t) for t in plans.types if t not in SHIPPED]


def _run_fields(columns: dict[str, tuple[str, ...]], plans: PlanTable) -> dict[str, Any]:
    """The header's fields that say what a run's rows hold: its columns and plan goals by name (a
    later version reads them by name: LEGACY_COLUMNS) and its own plan types as data
    (recording_reader reads them where they are not installed)."""
    fields: dict[str, Any] = {"columns": {k: list(v) for k, v in columns.items()}, "goals": list(plans.names)}
    rows = own_rows(plans)
    if rows:
        fields["plan_types"] = rows
    return fields


def _header(cfg: Config, scene: str, extra_header: dict[str, Any], keyframe_every: int, chunk_ticks: int,
            columns: dict[str, tuple[str, ...]], plans: PlanTable) -> dict[str, Any]:
    """A new recording's header, redacted (no URL's credentials in a file, wherever they sit)."""
    header: dict[str, Any] = {
        "format_version": FORMAT_VERSION, "seed": cfg.seed, "config": cfg.model_dump(mode="json"),
        "scene": scene, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "code_version": __version__, "keyframe_every": keyframe_every, "chunk_ticks": chunk_ticks,
        **_run_fields(columns, plans),
    }
    prompts = _prompts(cfg, extra_header)
    if prompts:
        header["prompts"] = prompts
    header.update(extra_header)
    redacted: dict[str, Any] = redact_data(header)
    return redacted


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

    The columns and plan goals it writes are its run's (``registry``: the session's; default
    None: the process's, :func:`mirofish.registry.default`), taken when it starts: its header
    names them.
    """

    def __init__(self, path: str | Path, cfg: Config, scene: str = "aquarium",
                 extra_header: dict[str, Any] | None = None, overwrite: bool = False, inputs: tuple[Any, ...] = (),
                 keep_ticks: int | None = None, registry: Registry | None = None):
        self.path = self.check_path(path, overwrite, inputs)
        try:
            self._lock_file = WriterLock(self.path)  # before anything is written or removed
        except OutputError as exc:
            raise RecordingError(str(exc)) from None
        self.cfg = cfg
        self.keyframe_every = cfg.record.keyframe_every
        self.chunk_ticks = max(1, int(round(cfg.record.commit_seconds / cfg.world.tick_seconds)))
        self.sample_every = cfg.metrics.sample_every
        self.hash_every = cfg.record.hash_every
        self._db = self._create()
        # the run's columns and plan goals (its registry's: mirofish/registry.py), named in the header
        self._given_registry = registry is not None
        self.registry = registry  # None: the process's default (mirofish.registry.default)
        self._columns = run_columns(registry)
        header = _header(cfg, scene, extra_header or {}, self.keyframe_every, self.chunk_ticks, self._columns,
                         run_plans(registry))
        self._db.execute("BEGIN")
        self._db.executemany("INSERT OR REPLACE INTO header VALUES (?, ?)",
                             [(k, json.dumps(v)) for k, v in header.items()])
        self._db.execute("COMMIT")
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

    def _create(self) -> sqlite3.Connection:
        """The new file (an old one at the path removed), its tables made, in WAL mode."""
        if self.path.exists():
            _remove(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            self._lock_file.release()
            raise RecordingError(f"cannot create recording {self.path}: {exc}") from None
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        return db

    # -- feeding (tick loop side: only cheap appends)

    def attach(self, session: Recordable, observe: bool = True) -> Recorder:
        """Record every tick ``session`` runs from now on: a keyframe of its current state now,
        then its frames (as one of its observers, unless ``observe`` is False: the caller then
        hands frames to :meth:`on_frame` itself, as a fork does with its divergence row), its
        metrics' measures, and a keyframe every ``keyframe_every`` ticks."""
        self._session = session
        world = getattr(session, "world", None)
        kernel = getattr(world, "tick_kernel", None)
        if kernel is not None:  # which tick wrote it: a replay on the other one says so if it diverges
            with self._db_lock:
                self._db.execute("INSERT OR REPLACE INTO header VALUES ('tick_kernel', ?)", (json.dumps(kernel),))
        run = getattr(world, "registry", None)
        if run is not None and run is not self.registry and not self._given_registry:
            # made without the run's registry (Recorder(path, cfg).attach(session)): the run's
            # plan goals and columns, named before anything is written
            self.registry, self._columns = run, run_columns(run)
            with self._db_lock:
                self._db.execute("DELETE FROM header WHERE key = 'plan_types'")
                self._db.executemany("INSERT OR REPLACE INTO header VALUES (?, ?)",
                                     [(k, json.dumps(v)) for k, v in _run_fields(self._columns, run.plans).items()])
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
            # (a column no metric fills: NaN)
            sample = [t] + [cur.get(k, float("nan")) for k in self._columns["samples"]]
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
                _remove(new_path)
                db = sqlite3.connect(new_path, check_same_thread=False, isolation_level=None)
                self._db.backup(db)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
            except (sqlite3.Error, OSError) as exc:
                new_lock.release()
                raise RecordingError(f"cannot write {new_path}: {exc}") from None
            self._db.close()
            self._db, self.path, self._lock_file, self.keep_ticks = db, new_path, new_lock, None
        _remove(old_path)
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

    def _take(self, stopping: bool) -> list[RecordedTick]:
        """The ticks handed over so far if they make a whole chunk (or all of them when
        stopping or flushing), taken off the list; else none."""
        ticks = self._ticks
        take = len(ticks) if stopping or self._flush_all or len(ticks) >= self.chunk_ticks else 0
        batch = ticks[:take]
        del ticks[:take]
        return batch

    def _rows(self, keyframes: list[tuple[int, dict[str, Any]]], batch: list[RecordedTick]) -> _Rows:
        """The keyframes and ticks taken, encoded as the rows of each table."""
        rows_k = [(tick, pack(arrays)) for tick, arrays in keyframes]
        rows_i = [(r.tick, k, json.dumps(iv, sort_keys=True)) for r in batch for k, iv in enumerate(r.interventions)]
        if not batch:
            return _Rows(rows_k, [], [], [], [], rows_i)
        *row, texts, calls = encode_chunk(batch, self.cfg.record.model_calls, self._columns)
        rows_t = [(h, body) for h, body in texts.items() if h not in self._texts_written]
        rows_calls, rows_d = self._calls.encode(row[0], calls) if calls else ([], [])
        return _Rows(rows_k, [tuple(row)], rows_t, rows_calls, rows_d, rows_i)

    def _commit(self, rows: _Rows) -> None:
        """One transaction with every table's rows; then the recent past trimmed (keep_ticks)."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO keyframes VALUES (?, ?)", rows.keyframes)
            self._db.executemany("INSERT OR REPLACE INTO chunks VALUES (?, ?, ?)", rows.chunks)
            self._db.executemany("INSERT OR IGNORE INTO texts VALUES (?, ?)", rows.texts)
            self._db.executemany("INSERT OR IGNORE INTO dicts VALUES (?, ?)", rows.dicts)
            self._db.executemany("INSERT OR REPLACE INTO calls VALUES (?, ?, ?)", rows.calls)
            self._db.executemany("INSERT OR REPLACE INTO interventions VALUES (?, ?, ?)", rows.interventions)
        self._texts_written.update(h for h, _ in rows.texts)
        if self.keep_ticks is not None and rows.chunks:
            self._trim(rows.chunks[-1][1] - self.keep_ticks)

    def _write_once(self, stopping: bool) -> None:
        with self._lock:
            keyframes, self._keyframes = self._keyframes, []
        batch = self._take(stopping)
        try:
            rows = self._rows(keyframes, batch)
            if rows.keyframes or rows.chunks:
                self._commit(rows)
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


# ---------------------------------------------------------------- a chunk of ticks


class _Decisions:
    """The decisions applied in a chunk's ticks, gathered batch by batch into its columns,
    with the model's thoughts, summaries and exchanges (and the shared texts they reference)."""

    def __init__(self, tick0: int, keep_calls: bool):
        self.tick0, self.keep_calls = tick0, keep_calls
        self.batches: list[Any] = []
        self.dts: list[np.ndarray] = []
        self.ends: list[np.ndarray] = []
        self.lats: list[np.ndarray] = []
        self.thoughts: list[list[Any]] = []
        self.summaries: list[list[Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.shared: dict[str, str] = {}

    def add(self, r: RecordedTick) -> None:
        for k, b in enumerate(r.applied):
            self._batch(r, k, b)
        if r.latencies:
            self.lats.append(np.asarray(r.latencies))

    def _batch(self, r: RecordedTick, k: int, b: Any) -> None:
        t = r.tick
        self.batches.append(b)
        self.ends.append(np.asarray(r.ended[k], np.int8) if k < len(r.ended) else np.full(len(b), -1, np.int8))
        self.dts.append(np.full(len(b), t - self.tick0, np.uint16))
        if b.thoughts:
            self.thoughts += [[int(t), int(f), text] for f, text in zip(b.fish, b.thoughts) if text]
        if b.summaries:
            self.summaries += [[int(t), int(f), int(serial), text] for f, serial, text in b.summaries]
        if self.keep_calls:
            for c in b.calls or ():
                self.shared.update(c.get("_texts") or {})
                self.calls.append({**{key: v for key, v in c.items() if key != "_texts"}, "tick": int(t)})

    def column(self, attr: str, dtype: type[np.generic]) -> np.ndarray:
        parts = [np.zeros(len(b), dtype) if getattr(b, attr) is None else getattr(b, attr) for b in self.batches]
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    def arrays(self) -> dict[str, np.ndarray]:
        lat = np.concatenate(self.lats) if self.lats else np.zeros(0)
        return {
            "dt": np.concatenate(self.dts) if self.dts else np.zeros(0, np.uint16),
            "fish": self.column("fish", np.uint32),
            "goal": self.column("goals", np.uint8), "param": self.column("params", np.int16),
            "horizon": self.column("horizons", np.uint16),
            "tier": self.column("tier", np.uint8), "status": self.column("status", np.uint8),
            # 0.1 ms units; 0 for a decision whose request this run did not make (a fork's first ones)
            "latency": np.minimum(np.round(np.nan_to_num(lat, nan=0.0) * 1e4), 2**32 - 1).astype(np.uint32),
            "tokens": self.column("tokens", np.uint32),
            "ended": np.concatenate(self.ends).astype(np.int8) if self.ends else np.zeros(0, np.int8),
        }

    def texts(self) -> dict[str, Any] | None:
        return {"thoughts": self.thoughts, "summaries": self.summaries} if self.thoughts or self.summaries else None


def _tick_arrays(ticks: list[RecordedTick], tick0: int, columns: dict[str, tuple[str, ...]]) -> dict[str, np.ndarray]:
    """A chunk's columns of one row per tick (or per sampled tick, per kept hash)."""
    return {
        "ticks": np.array([r.row for r in ticks], np.float32),
        "samples": np.array([r.sample for r in ticks if r.sample is not None],
                            np.float32).reshape(-1, 1 + len(columns["samples"])),
        "divergence": np.array([np.concatenate([[r.tick], r.divergence]) for r in ticks if r.divergence is not None],
                               np.float32).reshape(-1, 1 + len(columns["divergence"])),
        "executed": np.stack([r.executed for r in ticks]).astype(np.uint8),
        "hashes": np.array([list(struct.pack("<I", r.tick - tick0)) + list(r.digest) for r in ticks
                            if r.digest is not None], np.uint8).reshape(-1, HASH_ROW),
    }


def encode_chunk(given: Sequence[tuple[Any, ...]], keep_calls: bool = True,
                 columns: dict[str, tuple[str, ...]] | None = None) -> tuple[Any, ...]:
    """Consecutive ticks → (tick0, tick1, blob, texts, calls) with every column in one packed
    blob; ``texts``: the shared texts (``{hash: text}``) the chunk's model exchanges reference;
    ``columns``: the sample and divergence columns its rows hold (default :func:`columns_now`)."""
    ticks = [RecordedTick(*r) for r in given]  # (plain tuples too: the tests hand some in)
    tick0, tick1 = ticks[0].tick, ticks[-1].tick + 1
    decisions = _Decisions(tick0, keep_calls)
    for r in ticks:
        decisions.add(r)
    arrays = {**decisions.arrays(), **_tick_arrays(ticks, tick0, columns or columns_now())}
    return tick0, tick1, encode_columns(arrays, decisions.texts()), decisions.shared, decisions.calls
