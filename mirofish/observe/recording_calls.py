"""A recording's model exchanges (the ``calls`` and ``dicts`` tables): compressed per chunk with
a shared dictionary when written, decoded and checked when read.

Part of :mod:`mirofish.observe.recording` (which documents the format and re-exports these).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from typing import Any

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


_CALL_TEXT = ("kind", "user")  # an exchange's fields that are text; those of _CALL_TEXT_OR_NONE may be None
_CALL_TEXT_OR_NONE = ("model", "read", "reply", "tier", "endpoint", "format", "prefix", "schema", "group")
_CALL_INT = ("tick", "fish")


def checked_call(c: Any, slots: int) -> dict[str, Any]:
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
