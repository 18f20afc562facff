"""The bytes of a recording's blobs: the array codec of keyframes (:func:`pack`) and the chunk
layouts ``MFC1``–``MFC4`` (:func:`encode_columns` writes the newest, :func:`decode_columns`
reads them all).

Part of :mod:`mirofish.observe.recording` (which documents the format and re-exports these).
No pickle anywhere: a JSON header and raw little-endian arrays, zlib-compressed.

The chunk layouts, each the one before with more (``tests/golden/`` holds a recording of each,
made by the commit that last wrote it):

* ``MFC1`` — before plans: single actions (8-bit), 16-bit latency, the sampled metrics of then
  (up to ``largest_cluster``), no executed actions; its decisions read as ``hold`` plans.
* ``MFC2`` — plans (goal, parameter, horizon), 32-bit latency, the action every fish executed
  at every tick.
* ``MFC3`` — the state hash every ``record.hash_every`` ticks.
* ``MFC4`` — per decision, the trigger that ended the fish's plan before it.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import numpy as np

from .recording_columns import DIVERGENCE_COLUMNS, LEGACY_COLUMNS, SAMPLE_COLUMNS, TICK_COLUMNS, columns_now

# ---------------------------------------------------------------- arrays (keyframes, checkpoints)


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


# ---------------------------------------------------------------- chunk layouts

# A chunk's columns in a fixed order (name, dtype, row width: 0 one value per decision, -1 one
# per fish); fish ids are 16-bit (dtype None) unless a tank has more than 65,535 fish. A fixed
# layout keeps small (one-second) chunks small.
_Layout = tuple[tuple[str, Any, int], ...]
_CHUNK_MAGIC = b"MFC4"
_MFC2: _Layout = (
    ("dt", np.uint16, 0), ("fish", None, 0), ("goal", np.uint8, 0), ("param", np.int16, 0),
    ("horizon", np.uint16, 0), ("tier", np.uint8, 0),
    ("status", np.uint8, 0), ("latency", np.uint32, 0), ("tokens", np.uint32, 0),
    ("ticks", np.float32, 1 + len(TICK_COLUMNS)), ("samples", np.float32, 1 + len(SAMPLE_COLUMNS)),
    ("divergence", np.float32, 1 + len(DIVERGENCE_COLUMNS)), ("executed", np.uint8, -1),
)
# MFC3 adds the state hash every record.hash_every ticks: per row the tick's offset in the
# chunk (4 bytes, little-endian) and the 16-byte digest of the state after it.
HASH_ROW = 20
_MFC3: _Layout = (*_MFC2, ("hashes", np.uint8, HASH_ROW))
# MFC4 adds, per decision, the trigger that ended the fish's plan before it (-1: none raised —
# a timeout, the first plan, a fork's or a person's choice): why a plan ended early, after a seek.
_CHUNK_LAYOUT: _Layout = (*_MFC3, ("ended", np.int8, 0))
# Before plans: single actions, 16-bit latency, fewer sampled metrics, no executed actions.
_OLD_SAMPLE_COLUMNS = LEGACY_COLUMNS["samples"][: LEGACY_COLUMNS["samples"].index("school_size")]
_LAYOUTS: dict[bytes, _Layout] = {
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
_HASHED = (b"MFC3", b"MFC4")  # the layouts that keep state hashes (and count them in their head)
_CHUNK_HEAD = struct.Struct("<4sBIIIII")
_CHUNK_HEAD3 = struct.Struct("<4sBIIIIII")  # MFC3 and MFC4: and the number of state hashes


def _dtype(dtype: Any, wide: bool) -> np.dtype[Any]:
    """A column's little-endian dtype (fish ids: 32-bit in a ``wide`` chunk, else 16-bit)."""
    return np.dtype(dtype or (np.uint32 if wide else np.uint16)).newbyteorder("<")


def encode_columns(arrays: dict[str, np.ndarray], texts: dict[str, Any] | None) -> bytes:
    wide = bool(arrays["fish"].size and arrays["fish"].max() >= 65536)
    head = _CHUNK_HEAD3.pack(_CHUNK_MAGIC, wide, len(arrays["dt"]), len(arrays["ticks"]), len(arrays["samples"]),
                             len(arrays["divergence"]), arrays["executed"].shape[1], len(arrays["hashes"]))
    parts = [head]
    for name, dtype, _ in _CHUNK_LAYOUT:
        parts.append(np.ascontiguousarray(arrays[name], dtype=_dtype(dtype, wide)).tobytes())
    if texts:
        parts.append(json.dumps(texts).encode())
    return zlib.compress(b"".join(parts), 6)


class _Head:
    """A chunk's head: its layout, whether fish ids are 32-bit, the number of decisions, the
    rows of each row column and the number of fish (executed actions' width)."""

    def __init__(self, raw: bytes):
        head = _CHUNK_HEAD3 if raw[:4] in _HASHED else _CHUNK_HEAD
        magic, wide, n_dec, n_ticks, n_samples, n_div, n_fish, *more = head.unpack_from(raw)
        layout = _LAYOUTS.get(magic)
        if layout is None:
            raise ValueError("unknown chunk layout")
        self.magic: bytes = magic
        self.layout = layout
        self.wide = bool(wide)
        self.size = head.size
        self.decisions: int = n_dec
        self.fish: int = n_fish
        self.rows: dict[str, int] = {"ticks": n_ticks, "samples": n_samples, "divergence": n_div, "executed": n_ticks,
                                     "hashes": more[0] if more else 0}

    def width(self, name: str, width: int, widths: dict[str, int]) -> int:
        """A column's row width: as wide as the file's own columns for its named rows (but an
        MFC1 chunk's samples, of then), one per fish for executed actions."""
        if name in widths and not (self.magic == b"MFC1" and name == "samples"):
            width = widths[name]
        return self.fish if width == -1 else width


def _read_arrays(raw: bytes, head: _Head, widths: dict[str, int]) -> tuple[dict[str, np.ndarray], int]:
    """The chunk's columns, and where its text part starts."""
    pos, out = head.size, {}
    for name, dtype, width in head.layout:
        dt = _dtype(dtype, head.wide)
        width = head.width(name, width, widths)
        count = head.rows[name] * width if width else head.decisions
        out[name] = np.frombuffer(raw, dt, count, pos).copy()
        if width:
            out[name] = out[name].reshape(head.rows[name], width)
        pos += count * dt.itemsize
    return out, pos


def _read_texts(raw: bytes, pos: int) -> dict[str, Any]:
    """The chunk's text part (the model's thoughts and summaries), checked."""
    texts = json.loads(raw[pos:]) if pos < len(raw) else {}
    if not (isinstance(texts, dict) and all(isinstance(texts.get(k, []), list) for k in ("thoughts", "summaries"))):
        raise ValueError("its text part is not {thoughts: [...], summaries: [...]}")
    for key, width in (("thoughts", 3), ("summaries", 4)):
        if not all(isinstance(row, list) and len(row) == width for row in texts.get(key, [])):
            raise ValueError(f"its {key} are not rows of {width}")
    return texts


def _as_newest(out: dict[str, np.ndarray], head: _Head, samples: int) -> None:
    """An older layout's columns as the newest layout's (``samples``: this reader's sample row width)."""
    n_dec = head.decisions
    if head.magic not in _HASHED:  # made before state hashes were kept
        out["hashes"] = np.zeros((0, HASH_ROW), np.uint8)
    if head.magic != b"MFC4":  # made before the triggers that ended plans were kept
        out["ended"] = np.full(n_dec, -1, np.int8)
    if head.magic == b"MFC1":  # single actions → hold plans; old sample rows padded with NaN
        out["goal"] = np.zeros(n_dec, np.uint8)
        out["horizon"] = np.zeros(n_dec, np.uint16)
        out["param"] = out["param"].astype(np.int16)
        out["samples"] = np.pad(out["samples"], ((0, 0), (0, samples - 1 - len(_OLD_SAMPLE_COLUMNS))),
                                constant_values=np.nan)
        out["executed"] = np.zeros((0, 0), np.uint8)


def decode_columns(blob: bytes, columns: dict[str, tuple[str, ...]] | None = None
                   ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A chunk's columns and texts. ``columns``: the names its per-tick, sample and divergence
    rows hold (the file's header's, :func:`columns_of`; default this version's) — their widths."""
    widths = {k: 1 + len(v) for k, v in (columns or columns_now()).items()}
    raw = zlib.decompress(blob)
    head = _Head(raw)
    out, pos = _read_arrays(raw, head, widths)
    texts = _read_texts(raw, pos)
    _as_newest(out, head, widths["samples"])
    return out, {"thoughts": texts.get("thoughts", []), "summaries": texts.get("summaries", [])}
