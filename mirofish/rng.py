"""Deterministic helpers: the world's generator and counter-based hashing.

The world owns exactly one ``numpy.random.Generator``; everything else that needs a
reproducible "random" number (arbiter tie-breaks, the instinct brain's softmax draw) uses
:func:`mix64`, a pure function of integers, so it is the same no matter who asks first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def make_generator(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def _splitmix(z: np.ndarray) -> np.ndarray:
    z = z ^ (z >> _S30)
    z = z * _M1
    z = z ^ (z >> _S27)
    z = z * _M2
    out: np.ndarray = z ^ (z >> _S31)
    return out


def mix64(*keys: Any) -> np.ndarray:
    """Hash integers (scalars or arrays, broadcast) to uint64: each key is folded in and mixed."""
    with np.errstate(over="ignore"):
        acc: Any = np.uint64(0)
        for k in keys:
            acc = _splitmix((acc + _GOLDEN) ^ np.asarray(k, dtype=np.int64).astype(np.uint64))
        return np.asarray(acc, dtype=np.uint64)


def at_tick(keys: np.ndarray, tick: int) -> np.ndarray:
    """Per-key hash for one tick: ``keys`` come from :func:`mix64` once, this costs one round.

    (Array arithmetic wraps silently; only the scalar product is done in Python.)
    """
    return _splitmix(keys ^ np.uint64((tick * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF))


def to_unit(h: np.ndarray) -> np.ndarray:
    """uint64 hashes → floats in [0, 1) (53 bits)."""
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


class KeyTable:
    """Per-id keys ``mix64(salt, id)``, computed once and grown on demand."""

    def __init__(self, salt: int | np.ndarray):
        self.salt = salt
        self.keys = np.zeros(0, np.uint64)

    def __getitem__(self, ids: np.ndarray) -> np.ndarray:
        try:
            keys: np.ndarray = self.keys[ids]  # (ids are never negative: fish ids)
        except IndexError:  # an id beyond the table: grown to hold it
            top = int(np.max(ids)) + 1
            self.keys = mix64(self.salt, np.arange(max(top, 2 * self.keys.size)))
            keys = self.keys[ids]
        return keys


def seeded_softmax(u: np.ndarray, temperature: float, draws: np.ndarray) -> np.ndarray:
    """Index sampled from ``softmax(u / temperature)`` per row, with uniform ``draws`` in [0, 1)
    — the one seeded softmax of steering, the action brain and the planner (``_tick.c``'s
    steer() does the same sums in C)."""
    z = u / temperature
    z -= z.max(axis=1, keepdims=True)
    cdf = np.cumsum(np.exp(z), axis=1)
    picked: np.ndarray = np.minimum((cdf <= (draws * cdf[:, -1])[:, None]).sum(axis=1), u.shape[1] - 1)
    return picked
