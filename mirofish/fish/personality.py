"""Frozen personalities: a few numeric traits and a one-line persona (docs/design.md §2).

Traits are integers 0..100 drawn once from the world's generator; the persona text is a
pure function of them. Nothing rewrites either after birth — long-term summaries are
stored beside the persona, never in it.
"""

from __future__ import annotations

import numpy as np

TRAITS = ("sociability", "curiosity", "caution", "appetite", "calm")

_WORDS = {
    "sociability": ("a loner", "an easygoing fish", "a sociable fish"),
    "curiosity": ("that keeps to familiar water", "", "that loves to explore open water"),
    "caution": ("bold around walls and crowds", "", "wary of walls and crowds"),
    "appetite": ("a light eater", "", "always hungry"),
    "calm": ("restless", "", "happy to drift and rest"),
}


def sample_traits(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 5)`` int16 traits; a Beta(2,2) spread so most fish are moderate, some extreme."""
    return np.rint(rng.beta(2.0, 2.0, size=(n, len(TRAITS))) * 100).astype(np.int16)


def _band(v: int) -> int:
    return 0 if v < 34 else (2 if v > 66 else 1)


def persona_text(traits) -> str:
    """One line describing a fish, e.g. 'a sociable fish that loves to explore open water, always hungry'."""
    t = dict(zip(TRAITS, (int(v) for v in traits)))
    head = _WORDS["sociability"][_band(t["sociability"])]
    parts = [w for k in ("curiosity",) if (w := _WORDS[k][_band(t[k])])]
    tail = [w for k in ("caution", "appetite", "calm") if (w := _WORDS[k][_band(t[k])])]
    text = " ".join([head, *parts])
    if tail:
        text += ", " + ", ".join(tail)
    return text
