"""One tick as everything downstream of the engine sees it (metrics, recordings, the window).

A :class:`Frame` holds copies of the per-fish arrays after a tick and the decision batches
applied at its start — never the world itself. It sits below the engine and the observers
so that neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .arbiter import BLOCKED, CROWDED, MOVED, OCCUPIED
from .brains.base import DecisionBatch

N_OUTCOMES = 5  # arbiter outcomes MOVED … OCCUPIED


@dataclass
class Frame:
    """One tick as observers see it: copies of the arrays, never the world itself."""

    tick: int
    x: np.ndarray
    y: np.ndarray
    heading: np.ndarray
    energy: np.ndarray
    stuck: np.ndarray
    neighbours: np.ndarray
    executed: np.ndarray
    move_outcome: np.ndarray
    applied: list[DecisionBatch] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    interventions: list[dict[str, Any]] = field(default_factory=list)  # applied at the start of the tick
    # per batch of ``applied``: the trigger code (fish/triggers.py) that ended each fish's plan
    # before the new decision replaced it, -1 where none was raised (a timeout, a fork, a person)
    ended: list[np.ndarray] = field(default_factory=list)
    # per batch of ``applied`` whose decisions carry thoughts: the food each fish had in view
    # (under it included) when its plan began, which is the view a lockstep decision was asked
    # with; None for a batch without thoughts (word-and-deed reads a thought's claims against it)
    food_in_view: list[np.ndarray | None] = field(default_factory=list)
    present: np.ndarray | None = None  # which fish are in the water; None: all of them
    # with remembered places (fish.places): every fish's meals so far, and those eaten back at a
    # place it remembered (fish/places.py); None in tanks without places
    meals: np.ndarray | None = None
    returns: np.ndarray | None = None
    # True: made by the engine from the world's own arrays, so each is contiguous and of the
    # world's dtype (x, y int64; heading, executed, move_outcome int8; energy, stuck int32;
    # neighbours int16) and the compiled observers take them as they are; False: converted first
    native: bool = False

    @property
    def in_water(self) -> np.ndarray:
        """Ids of the fish in the water (all but those taken out or not yet added)."""
        return np.arange(len(self.x)) if self.present is None else np.flatnonzero(self.present)

    @property
    def outcome_counts(self) -> np.ndarray:
        """Fish per move outcome (arbiter.MOVED … OCCUPIED)."""
        return np.bincount(self.move_outcome, minlength=N_OUTCOMES)

    @property
    def moved(self) -> int:
        """Fish whose move succeeded this tick."""
        return int(np.count_nonzero(self.move_outcome == MOVED))

    @property
    def conflicts(self) -> int:
        """Intents refused because of another fish (lost the cell, or its occupant stayed)."""
        oc = self.outcome_counts
        return int(oc[CROWDED] + oc[OCCUPIED])

    @property
    def stuck_events(self) -> np.ndarray:
        mo = self.move_outcome
        return np.flatnonzero((mo == CROWDED) | (mo == OCCUPIED) | (mo == BLOCKED))
