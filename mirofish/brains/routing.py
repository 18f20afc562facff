"""Which tier answers a request: classify it, route the class, and respect the token budget.

* **Classify** from the trigger, the view and what the fish remembers (:class:`Familiar`):
  ``routine`` (nothing special in view), ``foraging`` (food in view), ``conflict_social`` (a
  refused move, a stuck plan, or food within two cells with another fish at least as close to
  it: :func:`contested`), ``novel`` (a kind of view — food or not, fish or not, glass or not —
  this fish has not met lately: never, or not for ``brain.novel_forget_ticks``; a fish's first
  ``brain.novel_baseline`` requests are its baseline, not news), ``memory_recall`` (a hungry fish
  — energy below ``triggers.hungry_fraction`` — with no food in view that remembers places where
  it ate, ``fish.places`` > 0: where to search is a question for its memory, the source design's
  "long-term memory triggered"; the summaries every prompt carries do not count, they are
  always there). A school or a crowd in view is
  routine once the fish has met one: the source design's mix is ~72 % routine, 15 % foraging,
  8 % conflict/social, 5 % novel.

  Novelty fades both ways, per fish, as the source design means it ("a combination never
  seen"): a kind of view met again is familiar, and familiarity lasts ``novel_forget_ticks``
  since the fish last met it — so ``novel`` is a steady share of a long run, not only of a
  fish's first encounters, and a short run's shares are close to a long run's.
* **Route** routine and foraging to the small tier, the others to the large tier (the small
  tier serves all when there is no large one).
* **Budget**: from ``brain.budget_small_only_at`` × ``brain.budget_tokens`` (default 80 %)
  everything goes to the small tier; at 100 % nothing goes to a model (the fallback answers).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import numpy as np

from ..fish.perception import V_FISH, V_FOOD, V_WALL

ROUTES = {"routine": "small", "foraging": "small", "conflict_social": "large", "novel": "large",
          "memory_recall": "large"}
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


class Familiar:
    """What one fish has met: each kind of view (signature) and the tick it last met it, and
    how many requests it has made (the first ``baseline`` are its baseline, not news)."""

    def __init__(self, baseline: int = 1, forget_ticks: int = 0):
        self.baseline, self.forget_ticks = baseline, forget_ticks
        self.last_met: dict[Any, int] = {}
        self.requests = 0

    def news(self, signature: Any, tick: int) -> bool:
        """Is ``signature`` news at ``tick`` (never met, or not for ``forget_ticks``; 0 = never
        forgotten)? Records the meeting either way."""
        last = self.last_met.get(signature)
        self.last_met[signature] = tick
        self.requests += 1
        if self.requests <= self.baseline:
            return False
        return last is None or (self.forget_ticks > 0 and tick - last > self.forget_ticks)


def classify(trigger: str, codes: np.ndarray, seen: Familiar, tick: int = 0, recall: bool = False) -> str:
    """The class of one request (:data:`ROUTES`' keys). ``seen``: what this fish has met
    (updated); ``recall``: the fish is hungry and remembers places where it ate."""
    food = bool(np.any(codes == V_FOOD))
    if seen.news((food, bool(np.any(codes >= V_FISH)), bool(np.any(codes == V_WALL))), tick):
        return "novel"
    if trigger in ("action_failed", "stuck") or contested(codes):
        return "conflict_social"
    if food:
        return "foraging"
    return "memory_recall" if recall else "routine"


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
