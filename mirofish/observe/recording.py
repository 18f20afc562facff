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

The code lives in parts, every name importable from here: ``recording_file`` (opening any
recording, its scene, the sealed digest, :class:`RecordingError`), ``recording_columns`` (the
columns and plan goals by name), ``recording_chunks`` (:func:`pack` and the chunk layouts
``MFC1``–``MFC4``; ``tests/golden/`` keeps a recording of each, made by the commit that last
wrote it), ``recording_calls`` (the model exchanges), ``recording_writer`` (:class:`Recorder`),
``recording_header`` (a header's fields, checked) and ``recording_reader`` (:class:`Recording`).
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from . import recording_columns as _columns
from .recording_calls import CallsCodec, decode_calls
from .recording_chunks import HASH_ROW, decode_columns, encode_columns, pack, unpack
from .recording_columns import (
    DIVERGENCE_COLUMNS,
    LEGACY_COLUMNS,
    LEGACY_GOALS,
    SAMPLE_COLUMNS,
    TICK_COLUMNS,
    by_name,
    columns_now,
    columns_of,
    goals_of,
)
from .recording_file import (
    FORMAT_VERSION,
    MAX_CHUNK_TICKS,
    TICK_SCENE,
    RecordingError,
    content_digest,
    open_recording_file,
    recording_scene,
)
from .recording_reader import Recording, TickDecisions
from .recording_writer import CHECKPOINT_SECONDS, Recordable, RecordedTick, Recorder
from .recording_writer import encode_chunk as _encode_chunk

__all__ = [
    "CHECKPOINT_SECONDS", "DIVERGENCE_COLUMNS", "FORMAT_VERSION", "HASH_ROW", "LEGACY_COLUMNS", "LEGACY_GOALS",
    "MAX_CHUNK_TICKS", "SAMPLE_COLUMNS", "TICK_COLUMNS", "TICK_SCENE", "CallsCodec", "Recordable", "RecordedTick",
    "Recorder", "Recording", "RecordingError", "TickDecisions", "_encode_chunk", "by_name", "columns_now",
    "columns_of", "content_digest", "decode_calls", "decode_columns", "encode_columns", "goals_of",
    "open_recording_file", "pack", "recording_scene", "unpack",
]

# This version's columns, where every part reads them (recording_columns.columns_now): setting
# one here sets it there, so a test or a plug-in that sets SAMPLE_COLUMNS here (tests/test_golden.py
# adds a column a later version might record) is heard by the writer and the reader alike.
_NOW = ("TICK_COLUMNS", "SAMPLE_COLUMNS", "DIVERGENCE_COLUMNS")


class _Recording(ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _NOW:
            setattr(_columns, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Recording
