"""Which tier answers a request: classify it, route the class, and respect the token budget.

* **Classify** from the trigger and the view: ``routine`` (nothing special in view),
  ``foraging`` (food in view), ``conflict_social`` (a refused move, a stuck plan, or food
  within two cells with another fish at least as close to it: :func:`contested`), ``novel`` (a kind of view —
  food or not, fish or not, glass or not — this fish has not asked about before; a fish's first
  request is its baseline). A school or a crowd in view is routine once the fish has met one: the source
  design's mix is ~72 % routine, 15 % foraging, 8 % conflict/social, 5 % novel.
* **Route** routine and foraging to the small tier, the others to the large tier (the small
  tier serves both when there is no large one).
* **Budget**: from ``brain.budget_small_only_at`` × ``brain.budget_tokens`` (default 80 %)
  everything goes to the small tier; at 100 % nothing goes to a model (the fallback answers).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import numpy as np

from ..fish.perception import V_FISH, V_FOOD, V_WALL

ROUTES = {"routine": "small", "foraging": "small", "conflict_social": "large", "novel": "large"}
TierT = TypeVar("TierT")


def contested(codes: np.ndarray, reach: int = 2) -> bool:
    """Is the food nearest this fish within ``reach`` cells and another fish at least as close
    to it (several fish about to go for the same food: the source design's social conflict)?
    ``codes``: the square view, flattened, the fish in the middle."""
    side = int(round(codes.size ** 0.5))
    r = side // 2
    ys, xs = np.divmod(np.arange(codes.size), side)
    food, rivals = codes == V_FOOD, codes >= V_FISH
    if not food.any() or not rivals.any():
        return False
    mine = np.abs(xs - r) + np.abs(ys - r)
    if mine[food].min() > reach:
        return False
    nearest = np.flatnonzero(food & (mine == mine[food].min()))
    for f in nearest:
        theirs = np.abs(xs[rivals] - xs[f]) + np.abs(ys[rivals] - ys[f])
        if (theirs <= mine[f]).any():
            return True
    return False


def classify(trigger: str, codes: np.ndarray, seen: set[Any]) -> str:
    """routine / foraging / conflict_social / novel for one request (``seen``: the view
    signatures this fish has met; updated)."""
    food = bool(np.any(codes == V_FOOD))
    signature = (food, bool(np.any(codes >= V_FISH)), bool(np.any(codes == V_WALL)))
    if signature not in seen:
        seen.add(signature)
        if len(seen) > 1:  # the first view of a fish is its baseline, not news
            return "novel"
    if trigger in ("action_failed", "stuck") or contested(codes):
        return "conflict_social"
    return "foraging" if food else "routine"


class Router(Generic[TierT]):
    """Routes classes to tiers under a token budget (0 = no budget)."""

    def __init__(self, tiers: dict[str, TierT], budget_tokens: int, small_only_at: float):
        self.tiers, self.budget_tokens, self.small_only_at = tiers, budget_tokens, small_only_at
        self.state = "ok"

    def route(self, klass: str, used_tokens: int) -> TierT | None:
        """The tier for a request of ``klass`` when ``used_tokens`` have been spent (None:
        the budget is exhausted, the fallback answers)."""
        if self.budget_tokens:
            if used_tokens >= self.budget_tokens:
                self.state = "exhausted: instinct only"
                return None
            if used_tokens >= self.small_only_at * self.budget_tokens:
                self.state = f"{self.small_only_at:.0%}: small tier only"
                return self.tiers["small"]
        return self.tiers[ROUTES[klass]]
