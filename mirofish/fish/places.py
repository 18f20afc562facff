"""Places a fish remembers: where it ate (the source design's "environmental memory").

Each fish keeps ``fish.places`` remembered places (0: none, the default — tanks without them
run and hash exactly as before they existed). A meal within :data:`RADIUS` cells (Chebyshev)
of a place it remembers counts there (its meals there + 1, the tick of the last one); a meal
anywhere else becomes a new place, in an empty slot or over the place with the fewest meals
(the oldest of those, then the lowest slot). Everything is integers, part of the state hash
and the keyframes.

What it is for: the instinct planner may choose ``return`` (swim back to the place with the
most meals, when the fish is hungry and sees no food: ``brain.planner.revisit``; 0 never),
models are told their places in one line and offered the same plan, and the territory
measures (:mod:`mirofish.observe.territory`) read how often a fish eats where it ate before
(its *site fidelity*: ``returns`` of ``meals`` — a return is a meal at a remembered place whose
last meal there is at least :data:`GAP` ticks old, so eating through one patch of food is not
returning —, counted whatever the planner does, so that a tank whose fish never choose
``return`` is the control).
"""

from __future__ import annotations

import numpy as np

RADIUS = 3  # a meal this close (Chebyshev) to a remembered place counts there
GAP = 50  # ticks: a meal at a place counts as a return when the last one there is at least this old
ARRAYS = ("x", "y", "tick", "meals_at", "meals", "returns")  # kept and hashed, in this order


class Places:
    """``x, y, tick, meals_at``: ``(n, k)`` per remembered place (``meals_at`` 0 = empty slot);
    ``meals``, ``returns``: per fish, every meal since the start and those eaten within
    :data:`RADIUS` of a place it remembered, :data:`GAP` or more ticks after its last meal there."""

    def __init__(self, n: int, k: int):
        self.k = k
        self.x = np.zeros((n, k), np.int32)
        self.y = np.zeros((n, k), np.int32)
        self.tick = np.full((n, k), -1, np.int32)
        self.meals_at = np.zeros((n, k), np.int32)
        self.meals = np.zeros(n, np.int32)
        self.returns = np.zeros(n, np.int32)

    def arrays(self) -> dict[str, np.ndarray]:
        return {f"places.{name}": getattr(self, name) for name in ARRAYS}

    def load(self, d: dict[str, np.ndarray]) -> None:
        for name in ARRAYS:
            setattr(self, name, np.array(d[f"places.{name}"], dtype=getattr(self, name).dtype))

    def remember(self, fish: np.ndarray, xs: np.ndarray, ys: np.ndarray, tick: int) -> None:
        """Meals eaten this tick by ``fish`` at (``xs``, ``ys``)."""
        for f, x, y in zip(fish.tolist(), xs.tolist(), ys.tolist()):
            self.meals[f] += 1
            used = self.meals_at[f] > 0
            near = used & (np.abs(self.x[f] - x) <= RADIUS) & (np.abs(self.y[f] - y) <= RADIUS)
            if near.any():
                j = int(np.flatnonzero(near)[0])
                self.returns[f] += tick - self.tick[f, j] >= GAP
            else:  # an empty slot, else the place with the fewest meals, the oldest of those
                j = int(np.lexsort((np.arange(self.k), self.tick[f], self.meals_at[f]))[0])
                self.x[f, j], self.y[f, j], self.meals_at[f, j] = x, y, 0
            self.meals_at[f, j] += 1
            self.tick[f, j] = tick

    def best(self, fish: np.ndarray) -> np.ndarray:
        """Per fish, the slot of its place with the most meals (the latest of those, then the
        lowest slot); -1 for a fish that remembers none."""
        m, t = self.meals_at[fish], self.tick[fish]
        score = m.astype(np.int64) * (1 << 32) + (t.astype(np.int64) + 1)  # meals first, then the latest
        j = np.argmax(score, axis=1)
        return np.where(m[np.arange(len(fish)), j] > 0, j, -1)

    def describe(self, fish: int, here: tuple[int, int] | None = None, now: int | None = None,
                 limit: int = 4) -> str:
        """Its places, most meals first: ``"#0 (40,12) 3 meals t812; …"``, or seen from ``here``
        at tick ``now`` (what a fish itself knows: no coordinates) ``"#0 12 east 3 north, 3
        meals, last 40 ticks ago; …"``."""
        used = np.flatnonzero(self.meals_at[fish] > 0)
        order = used[np.lexsort((used, -self.tick[fish, used], -self.meals_at[fish, used]))][:limit]
        parts = []
        for j in order.tolist():
            x, y, m, t = (int(v[fish, j]) for v in (self.x, self.y, self.meals_at, self.tick))
            meals = f"{m} meal{'s' if m != 1 else ''}"
            if here is None or now is None:
                parts.append(f"#{j} ({x},{y}) {meals} t{t}")
                continue
            dx, dy = x - here[0], y - here[1]
            way = " ".join(f"{abs(d)} {name}" for d, name in ((dx, "east" if dx > 0 else "west"),
                                                              (dy, "south" if dy > 0 else "north")) if d)
            parts.append(f"#{j} {way or 'here'}, {meals}, last {now - t} ticks ago")
        return "; ".join(parts)
