"""Territories: does each fish keep to its own part of the tank? (with ``fish.places``)

Measured from frames every ``metrics.sample_every`` ticks, over the last :data:`WINDOW` ticks:

* ``home_range`` — per fish, the area it was seen in: distinct :data:`BLOCK`×:data:`BLOCK`-cell
  squares among its sampled positions, in cells (the tank's mean is reported).
* ``site_fidelity`` — per fish, the share of its meals eaten back at a place it remembered
  (:mod:`mirofish.fish.places`: within 3 cells of an earlier meal there, 50 or more ticks
  later); the tank's value pools every fish's meals.
* ``range_overlap`` — for each pair of fish, the shared part of their ranges (squares in both
  over squares in either: Jaccard), averaged over pairs (the first :data:`MAX_PAIRS_FISH` fish
  in the water in a larger tank).
* ``territoriality`` — ``site_fidelity × (1 − range_overlap)``: high when fish come back to
  their own places and those places are not everyone's. 0 … 1.

Fish out of the water are left out. All of it is observation: nothing here changes the tank.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..frame import Frame

BLOCK = 4  # cells: the side of a home-range square
WINDOW = 600  # ticks of positions a home range covers (5 simulated minutes)
MAX_PAIRS_FISH = 600  # the overlap compares the ranges of at most this many fish (pairs grow as n²)
KEYS = ("home_range", "site_fidelity", "range_overlap", "territoriality")


class Territory:
    """Ranges from sampled positions; fidelity from the frames' meal counters."""

    def __init__(self, n_fish: int, width: int, height: int, every: int):
        self.samples = max(1, WINDOW // max(1, every))
        self.cols = width // BLOCK + 1
        self.blocks = self.cols * (height // BLOCK + 1)
        self.ring = np.full((self.samples, n_fish), -1, np.int64)  # block of each fish per sample (-1: out)
        self.taken = 0
        self.meals = np.zeros(n_fish, np.int64)
        self.returns = np.zeros(n_fish, np.int64)

    def sample(self, f: Frame) -> dict[str, float]:
        """Fold the frame's positions in and return the four figures now."""
        row = (f.y // BLOCK) * self.cols + f.x // BLOCK
        if f.present is not None:
            row = np.where(f.present, row, -1)
        self.ring[self.taken % self.samples] = row
        self.taken += 1
        if f.meals is not None and f.returns is not None:
            self.meals, self.returns = f.meals.astype(np.int64), f.returns.astype(np.int64)
        here = f.in_water
        ranges = self.ranges(here)
        overlap = self.overlap(ranges[:MAX_PAIRS_FISH])
        meals = int(self.meals[here].sum())
        fidelity = float(self.returns[here].sum() / meals) if meals else 0.0
        home = float(np.mean([len(r) for r in ranges]) * BLOCK * BLOCK) if ranges else 0.0
        return {"home_range": home, "site_fidelity": fidelity, "range_overlap": overlap,
                "territoriality": fidelity * (1.0 - overlap)}

    def ranges(self, fish: np.ndarray) -> list[np.ndarray]:
        """Per fish, the squares it was seen in over the window."""
        kept = self.ring[: min(self.taken, self.samples)]
        return [np.unique(b[b >= 0]) for b in kept[:, fish].T]

    def overlap(self, ranges: list[np.ndarray]) -> float:
        """Mean Jaccard of the ranges over every pair (0 with fewer than two fish)."""
        n = len(ranges)
        if n < 2:
            return 0.0
        m = np.zeros((n, self.blocks), np.float32)
        for i, r in enumerate(ranges):
            m[i, r] = 1.0
        both = m @ m.T
        size = m.sum(axis=1)
        either = size[:, None] + size[None, :] - both
        upper = np.triu_indices(n, 1)
        jac = np.divide(both[upper], either[upper], out=np.zeros(len(upper[0]), np.float32),
                        where=either[upper] > 0)
        return float(jac.mean())

    def fish(self, i: int) -> dict[str, float]:
        """One fish's figures (the follow panel): its home range, meals and returns."""
        r = self.ranges(np.array([i]))[0]
        meals = int(self.meals[i])
        return {"home_range": float(len(r) * BLOCK * BLOCK), "meals": meals, "returns": int(self.returns[i]),
                "site_fidelity": float(self.returns[i] / meals) if meals else 0.0}
