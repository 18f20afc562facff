"""Deterministic helpers: the world's generator and counter-based hashing.

The world owns exactly one ``numpy.random.Generator``; everything else that needs a
reproducible "random" number (arbiter tie-breaks, the instinct brain's softmax draw) uses
:func:`mix64`, a pure function of integers, so it is the same no matter who asks first.
"""

from __future__ import annotations

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
    return z ^ (z >> _S31)


def mix64(*keys) -> np.ndarray:
    """Hash integers (scalars or arrays, broadcast) to uint64 with splitmix64 chaining."""
    with np.errstate(over="ignore"):
        acc = np.zeros(np.broadcast(*[np.asarray(k) for k in keys]).shape, np.uint64)
        for k in keys:
            acc = _splitmix((acc + _GOLDEN) ^ np.asarray(k).astype(np.int64).astype(np.uint64))
        return acc


def unit_float(*keys) -> np.ndarray:
    """A float in [0, 1) per key tuple (53 bits of :func:`mix64`)."""
    return (mix64(*keys) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
