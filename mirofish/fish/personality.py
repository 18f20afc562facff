"""Frozen personalities: a few numeric traits and a one-line persona (docs/design.md §2).

Traits are integers 0..100 drawn once from the world's generator; the persona text is a
pure function of them. Nothing rewrites either after birth — long-term summaries are
stored beside the persona, never in it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .plans import DEFAULT, PlanTable
from .plantypes import TRAITS as TRAITS  # (declared with the plan types, whose rows name them)

_WORDS = {
    "sociability": ("a loner", "a moderately social fish", "a sociable fish"),
    "curiosity": ("that keeps to familiar water", "", "that loves to explore open water"),
    "caution": ("bold around walls and crowds", "", "wary of walls and crowds"),
    "appetite": ("a light eater", "", "always hungry"),
    "calm": ("restless", "", "happy to drift and rest"),
}


def sample_traits(rng: np.random.Generator, n: int, sociability_shift: int = 0) -> np.ndarray:
    """``(n, 5)`` int16 traits; a Beta(2,2) spread so most fish are moderate, some extreme.
    ``sociability_shift`` moves the mix toward loners (< 0) or sociable fish (> 0)."""
    traits = np.rint(rng.beta(2.0, 2.0, size=(n, len(TRAITS))) * 100).astype(np.int16)
    if sociability_shift:
        traits[:, 0] = np.clip(traits[:, 0] + sociability_shift, 0, 100)
    return traits


def _band(v: int) -> int:
    return 0 if v < 34 else (2 if v > 66 else 1)


def persona_text(traits: ArrayLike) -> str:
    """One line describing a fish, e.g. 'a sociable fish that loves to explore open water, always hungry'."""
    t = dict(zip(TRAITS, (int(v) for v in np.asarray(traits).tolist())))
    head = _WORDS["sociability"][_band(t["sociability"])]
    parts = [w for k in ("curiosity",) if (w := _WORDS[k][_band(t[k])])]
    tail = [w for k in ("caution", "appetite", "calm") if (w := _WORDS[k][_band(t[k])])]
    text = " ".join([head, *parts])
    if tail:
        text += ", " + ", ".join(tail)
    return text


# The goals a character shows in, and the trait each answers to (the plan types' ``trait``: forage ←
# appetite, school ← sociability, explore ← curiosity, rest ← calm, keep away ← caution).
def _scored(plans: PlanTable) -> tuple[list[int], list[int]]:
    """(the goals of ``plans`` with a trait, the trait each answers to) — once per table."""
    scored = [i for i, t in enumerate(plans.types) if t.trait]
    return scored, [TRAITS.index(str(plans.types[i].trait)) for i in scored]


BEHAVIOUR_MIN_DECISIONS = 8  # fewer plans than this say nothing about character
BEHAVIOUR_ALERT = 0.5  # a behaviour score below this is out of character


def behaviour_score(goal_counts: ArrayLike, traits: ArrayLike, tank_counts: ArrayLike | None = None,
                    plans: PlanTable = DEFAULT) -> float | None:
    """How in character a fish's recent plans are: the cosine between the shares of goals it
    chose (forage, school, explore, rest, keep away) and the shares its personality predicts —
    the whole tank's shares over the same time (``tank_counts``; uniform if not given), each
    tilted by the trait the goal answers to (× 0.5 + trait/100). 1 = in character; lower =
    drifting; None with fewer than ``BEHAVIOUR_MIN_DECISIONS`` plans (the figure does not
    apply yet). ``return`` (to a remembered place: memory, not a trait) is left out.
    Works for every brain — unlike the text drift, which needs model-written
    summaries. ``plans``: the run's plan table (its goal codes are the counts' columns)."""
    scored, goal_trait = plans.part("personality", _scored)
    counts = np.asarray(goal_counts, np.float64)[scored]  # hold plans are single actions: no goal
    if counts.sum() < BEHAVIOUR_MIN_DECISIONS:
        return None
    base = np.ones(len(scored)) if tank_counts is None else np.asarray(tank_counts, np.float64)[scored] + 1.0
    expected = base / base.sum() * (0.5 + np.asarray(traits, np.float64)[goal_trait] / 100.0)
    return float(counts @ expected / (np.linalg.norm(counts) * np.linalg.norm(expected)))
