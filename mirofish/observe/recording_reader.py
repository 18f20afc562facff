"""Reading a recording: :class:`Recording` opens one read-only, checks it (scene, format,
config, keyframes, chunks without gap or overlap, its checksum) and reads its chunks of every
layout by name onto this version's columns and plan goals.

Part of :mod:`mirofish.observe.recording` (which documents the format and re-exports these).
Reading never writes.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..grid import grid_of
from .recording_calls import checked_call, decode_calls
from .recording_chunks import decode_columns, unpack
from .recording_columns import by_name, columns_of, run_columns, run_plans
from .recording_file import (
    DAMAGE,
    MAX_CHUNK_TICKS,
    TICK_SCENE,
    RecordingError,
    as_blob,
    content_digest,
    open_recording_file,
)
from .recording_header import (
    UNKNOWN_GOAL,
    check_version,
    chunk_ticks_of,
    config_of,
    goal_map,
    own_plan_types,
    unknown_goals,
    usable_prompts,
)

if TYPE_CHECKING:
    from ..registry import Registry

_CACHED_CHUNKS = 20000  # decoded chunks kept; past it the oldest 10,000 are forgotten


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


def _check_codes(d: dict[str, Any], n_goals: int) -> None:
    """A chunk's plan goals and tiers are codes the reading run knows (``n_goals``: its plan
    table's; a damaged or forged file's goal 7 is refused, not read past the table's end)."""
    from ..brains.base import TIERS

    if d["goal"].size and int(d["goal"].max()) >= n_goals:
        raise ValueError(f"plan goal code {int(d['goal'].max())} (this version knows 0..{n_goals - 1})")
    if d["tier"].size and int(d["tier"].max()) >= len(TIERS):
        raise ValueError(f"tier code {int(d['tier'].max())} (this version knows 0..{len(TIERS) - 1})")


class Recording:
    """A recording opened read-only. Raises :class:`RecordingError` for anything unusable.

    ``registry``: the run that reads it (mirofish/registry.py; default the process's): the file's
    plan goals and columns are mapped by name onto that run's."""

    def __init__(self, path: str | Path, registry: Registry | None = None):
        self.path = Path(path)
        self.registry = registry  # None: the process's default (mirofish.registry.default)
        self._db, self.header = open_recording_file(self.path)
        if self.header.get("scene", TICK_SCENE) != TICK_SCENE:
            raise RecordingError(f"{self.path} is a {self.header['scene']} recording (turns, not ticks): replay and "
                                 f"export --tables read it (fork --at-turn too, where its scene forks)")
        self._keep_usable_prompts()
        # its columns and plan goals by name (columns_of): mapped onto this version's as chunks are read
        self._file_columns = columns_of(self.header)
        # the plan table its goals are read by: the run's, and the file's own rows of the plan
        # types the run lacks (a plug-in's or a run's own, kept in the header as data)
        self.plans = own_plan_types(self.header, self.path, run_plans(registry))
        self._goal_map = goal_map(self.header, self.path, self.plans.names)
        check_version(self.header, self.path)
        self.config = config_of(self.header, self.path)
        self.plans = self.plans.on(grid_of(self.config.world.grid))  # (its tank's directions and actions)
        spans = self._read_index()
        self.first_tick = self.keyframe_ticks[0]
        self.last_tick = self._check_spans(spans)
        self._check_sealed()
        self.chunk_ticks = chunk_ticks_of(self.header, self.path)
        self._cache: dict[int, tuple[Any, ...]] = {}
        self._texts: dict[str, str] | None = None  # the shared texts, read once
        self._tables: dict[str, bool] = {}  # which optional tables the file has
        self._dicts: dict[str, bytes] = {}  # exchange dictionaries by hash
        self._calls_cache: dict[int, list[dict[str, Any]]] = {}  # decoded exchanges by chunk start
        self._starts: list[int] = []  # sorted keys of _cache
        self._interventions: dict[int, list[dict[str, Any]]] | None = None

    def _keep_usable_prompts(self) -> None:
        if "prompts" in self.header:
            prompts = usable_prompts(self.header["prompts"])
            if prompts is None:
                del self.header["prompts"]
            else:
                self.header["prompts"] = prompts

    def _read_index(self) -> list[Any]:
        """The keyframes' ticks (``keyframe_ticks``, checked) and the chunks' spans."""
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
        return spans

    def _check_sealed(self) -> None:
        """The checksum written at a clean close matches (a run cut off by a crash has none)."""
        stored = self.header.get("checksum")
        if stored is None:
            return
        try:
            actual = content_digest(self._db)
        except sqlite3.DatabaseError as exc:
            raise RecordingError(f"recording is damaged ({exc}): {self.path}") from None
        if actual != stored:
            raise RecordingError(f"recording was modified after it was written (its checksum does not match): "
                                 f"{self.path}")

    def _check_spans(self, spans: list[Any]) -> int:
        """The last recorded tick, after checking that the chunks cover the ticks from the
        first keyframe on without gap or overlap (a damaged or edited file is refused, not
        re-simulated for ticks it does not hold)."""
        expected = self.first_tick
        if spans and isinstance(spans[0][0], int) and isinstance(spans[0][1], int) \
                and spans[0][0] < expected < spans[0][1]:
            expected = spans[0][0]  # a kept recent past: its first chunk began before its first keyframe
        for tick0, tick1 in spans:
            self._check_span(tick0, tick1, expected)
            expected = tick1
        return expected

    def _check_span(self, tick0: Any, tick1: Any, expected: int) -> None:
        if not (isinstance(tick0, int) and isinstance(tick1, int)):
            raise RecordingError(f"recording is damaged (a chunk's ticks are not numbers): {self.path}")
        if tick1 <= tick0 or tick1 - tick0 > MAX_CHUNK_TICKS:
            raise RecordingError(f"recording is damaged (a chunk claims ticks {tick0}..{tick1}): {self.path}")
        if tick0 != expected:
            what = "a gap" if tick0 > expected else "an overlap"
            raise RecordingError(f"recording is damaged ({what} in its chunks at tick {expected}): {self.path}")

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
            arrays: dict[str, np.ndarray] = unpack(as_blob(rows[0][0]))[0]
            goals = arrays.get("fish.plan_goal")
            if goals is not None and goals.size and self._goal_map is not None:  # the file's codes as the run's
                if int(goals.min()) < 0 or int(goals.max()) >= len(self._goal_map):
                    raise ValueError(f"plan goal code {int(goals.max())} (the file names {len(self._goal_map)} goals)")
                mapped = self._goal_map[goals]
                if np.any(mapped == UNKNOWN_GOAL):  # a fish holding a plan of a type this run does not know
                    raise unknown_goals(self.header, self.path, goals[mapped == UNKNOWN_GOAL])
                arrays["fish.plan_goal"] = mapped.astype(goals.dtype)
            return arrays
        except DAMAGE as exc:
            raise RecordingError(f"recording is damaged (keyframe {tick}: {exc}): {self.path}") from None

    def keyframe_at_or_before(self, tick: int) -> int:
        i = int(np.searchsorted(self.keyframe_ticks, tick, side="right")) - 1
        if i < 0:
            raise RecordingError(f"tick {tick} is before this recording starts (tick {self.first_tick})")
        return self.keyframe_ticks[i]

    def _decode_chunk(self, data: object) -> tuple[dict[str, Any], dict[str, Any]]:
        """A chunk's columns by name as this version's, its goals as this version's codes,
        checked against the tank (``ValueError`` and the like: the chunk is damaged)."""
        d, texts = decode_columns(as_blob(data), self._file_columns)
        for k, want in self.columns().items():  # the file's columns by name onto this version's (its own after)
            d[k] = by_name(d[k], self._file_columns[k], want)
        if self._goal_map is not None:  # the file's plan goals by name onto this version's codes
            if d["goal"].size and int(d["goal"].max()) >= len(self._goal_map):
                raise ValueError(f"plan goal code {int(d['goal'].max())} (the file names "
                                 f"{len(self._goal_map)} goals)")
            raw, d["goal"] = d["goal"], self._goal_map[d["goal"]]
            if np.any(d["goal"] == UNKNOWN_GOAL):  # a decision of a plan type this version does not know
                raise unknown_goals(self.header, self.path, raw[d["goal"] == UNKNOWN_GOAL])
        if d["fish"].size and int(d["fish"].max()) >= self.config.fish.slots:
            raise ValueError(f"fish id {int(d['fish'].max())} in a tank of {self.config.fish.slots}")
        if d["executed"].size and d["executed"].shape[1] != self.config.fish.slots:
            raise ValueError("executed actions for a different number of fish")
        _check_codes(d, self.plans.n)
        return d, texts

    def load_chunks(self, t0: int, t1: int) -> None:
        """Decode (and cache) every chunk that covers ticks in ``[t0, t1)``."""
        rows = self._fetch("SELECT tick0, tick1, data FROM chunks WHERE tick1 > ? AND tick0 < ? ORDER BY tick0",
                           (t0, t1))
        for tick0, tick1, data in rows:
            if tick0 in self._cache:
                continue
            try:
                d, texts = self._decode_chunk(data)
                self._cache[tick0] = (tick1, d, texts, d["ticks"], d["samples"], d["divergence"])
            except DAMAGE as exc:
                raise RecordingError(f"recording is damaged (chunk at tick {tick0}: {exc}): {self.path}") from None
            bisect.insort(self._starts, tick0)
        if len(self._starts) > _CACHED_CHUNKS:  # keep memory bounded on very long recordings
            for key in self._starts[: _CACHED_CHUNKS // 2]:
                del self._cache[key]
            del self._starts[: _CACHED_CHUNKS // 2]

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
                self._dicts[name] = zlib.decompress(as_blob(rows[0][0]))
            except DAMAGE as exc:
                raise RecordingError(f"recording is damaged (exchange dictionary {name}: {exc}): {self.path}") from None
        return self._dicts[name]

    def _calls_rows(self, rows: list[Any]) -> list[dict[str, Any]]:
        from ..brains.exchanges import complete_call

        texts = self.texts()
        out = []
        for tick0, name, data in rows:
            try:
                out += [complete_call(checked_call(c, self.config.fish.slots), texts)
                        for c in decode_calls(as_blob(data), self._zdict(name))]
            except DAMAGE as exc:
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
        """The columns the file itself holds, by name, in its own order."""
        return dict(self._file_columns)

    def columns(self) -> dict[str, tuple[str, ...]]:
        """The columns its rows hold (:meth:`tick_rows`, :meth:`sample_rows`, …): this version's
        (its registry's, :func:`~.recording_columns.run_columns`: one the file lacks reads
        NaN), then the ones only the file names,
        written by another version (a metric added there): kept, and shown where the rows are
        shown by name (the export's tables)."""
        now = run_columns(self.registry)
        return {k: (*now[k], *(c for c in self._file_columns.get(k, ()) if c not in now[k])) for k in now}

    def tick_rows(self, t0: int, t1: int) -> np.ndarray:
        """Per-tick measures ``[tick, *TICK_COLUMNS]`` for ticks in ``[t0, t1)``."""
        return self._rows(t0, t1, 3, 1 + len(self.columns()["ticks"]))

    def sample_rows(self, t0: int, t1: int) -> np.ndarray:
        """Sampled metrics ``[tick, *SAMPLE_COLUMNS]`` (then any only the file names: :meth:`columns`)."""
        return self._rows(t0, t1, 4, 1 + len(self.columns()["samples"]))

    def divergence_rows(self, t0: int, t1: int) -> np.ndarray:
        """For a fork: ``[tick, *DIVERGENCE_COLUMNS]`` per tick."""
        return self._rows(t0, t1, 5, 1 + len(self.columns()["divergence"]))
