"""The negotiation world: a buyer and a seller, several issues, private values — and words
whose private definitions differ ("what does 'standard support' cover?").

Issues: price, delivery time and payment terms are numbers; support scope and the AI feature
are *named levels* ("basic", "standard", "premium" …). Each party maps a name to an actual
level with its own private definition, drawn per session: the buyer may think "standard
support" means level 2 while the seller would deliver level 1. Offers are made in names, so
two parties can agree on words and not on meaning — the grounding failure repair exists for.
A deal is delivered by the seller's definitions; the buyer's *realised* utility uses them.
Where the readings differ is drawn by :data:`MISREAD`: a scale's middle name often, its ends
now and then (from a stream of their own, so the rest of a session does not depend on it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np

NUMERIC = {"price": (80.0, 140.0), "delivery_weeks": (4.0, 16.0), "payment_days": (0.0, 90.0)}
NAMED = {"support": ["basic", "standard", "premium"], "ai_feature": ["none", "basic", "full"]}
# How often a side reads a name otherwise than the other: the middle of a scale ("standard") is
# relative and often read a level up or down; its ends are anchored, but "basic" support and
# "premium" or "full" can still be read a level inward now and then ("none" cannot).
MISREAD = {"middle": 0.75, "end": 0.15}
LEVELS = 4  # actual scope levels 0..3 behind each name
# What each actual level is, in words (what a model negotiator is told a level means).
SCOPE = {"support": ["email only", "business-hours phone", "24/7 phone", "a dedicated engineer"],
         "ai_feature": ["nothing", "autocomplete", "an assistant", "a full agent"]}
ISSUES = tuple(NUMERIC) + tuple(NAMED)
# Which end of each numeric issue a party likes (named levels: buyers like more, sellers less).
# An offer: the numeric issues as floats, the named ones by name (JSON as it goes on the wire).
Offer: TypeAlias = dict[str, Any]
PREFERS_HIGH = {"buyer": {"price": False, "delivery_weeks": False, "payment_days": True},
                "seller": {"price": True, "delivery_weeks": True, "payment_days": False}}


@dataclass
class Party:
    """One side's private view: weights, reservation utility, and what the names mean to it."""

    role: str  # "buyer" or "seller"
    weights: dict[str, float]
    reservation: float
    definitions: dict[str, dict[str, int]]  # issue → name → actual level
    traits: dict[str, float]  # clarification propensity, directness, toughness (Boulware exponent)
    must: tuple[str, str, float] = ("price", "<=", NUMERIC["price"][1])  # a hard limit: (issue, op, value)

    def satisfies(self, offer: Offer) -> bool:
        """Whether ``offer`` keeps this side's hard limit (it never accepts one that does not)."""
        issue, op, value = self.must
        return bool(offer[issue] <= value + 1e-9 if op == "<=" else offer[issue] >= value - 1e-9)

    def must_text(self) -> str:
        issue, op, value = self.must
        return f"{issue} {op} {value:g}"

    def utility(self, offer: Offer, definitions: dict[str, dict[str, int]] | None = None) -> float:
        """0..1 utility of an offer, reading the names with ``definitions`` (default: its own)."""
        defs = definitions or self.definitions
        total = 0.0
        for issue, (lo, hi) in NUMERIC.items():
            x = (offer[issue] - lo) / (hi - lo)
            total += self.weights[issue] * (x if PREFERS_HIGH[self.role][issue] else 1 - x)
        for issue in NAMED:
            level = defs[issue][offer[issue]] / (LEVELS - 1)
            total += self.weights[issue] * (level if self.role == "buyer" else 1 - level)
        return float(total)


@dataclass
class Session:
    """One negotiation's setup, fully determined by its seed."""

    seed: int
    buyer: Party
    seller: Party
    mismatched: list[str] = field(default_factory=list)  # named issues whose definitions differ
    handoff: tuple[str, int] | None = None  # (role, turn): that side's negotiator hands over to a colleague

    @classmethod
    def draw(cls, seed: int) -> Session:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 2])))

        def party(role: str) -> Party:
            w = rng.dirichlet(np.ones(len(ISSUES)) * 2.0)
            traits = {"clarify": float(rng.uniform(0.2, 0.9)), "directness": float(rng.uniform(0.1, 0.9)),
                      "toughness": float(rng.uniform(0.5, 3.0))}
            defs = {issue: {names[0]: 0, names[1]: 1 if issue == "support" else 2, names[2]: 3}
                    for issue, names in NAMED.items()}
            return Party(role, dict(zip(ISSUES, map(float, w))), float(rng.uniform(0.42, 0.58)), defs, traits)

        buyer, seller = party("buyer"), party("seller")
        for issue, names in NAMED.items():  # private definitions differ here, by one level up or down
            if rng.random() < MISREAD["middle"]:
                name = names[1]
                shift = int(rng.choice([-1, 1]))
                buyer.definitions[issue][name] = int(np.clip(seller.definitions[issue][name] + shift, 0, LEVELS - 1))
        ends = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 4])))  # its own stream
        for issue, names in NAMED.items():  # an end of the scale read a level inward, now and then
            for name, inward in ((names[0], 1), (names[-1], -1)):
                if name != "none" and ends.random() < MISREAD["end"]:
                    buyer.definitions[issue][name] = seller.definitions[issue][name] + inward
        mismatched = [issue for issue in NAMED if buyer.definitions[issue] != seller.definitions[issue]]
        for p in (buyer, seller):  # one hard limit each, on a number, some way from the end it dislikes
            issue = str(rng.choice(list(NUMERIC)))
            lo, hi = NUMERIC[issue]
            margin = float(rng.uniform(0.1, 0.3)) * (hi - lo)
            p.must = (issue, ">=", round(lo + margin)) if PREFERS_HIGH[p.role][issue] else (issue, "<=",
                                                                                             round(hi - margin))
        handoff = (str(rng.choice(["buyer", "seller"])), int(rng.integers(8, 18))) if rng.random() < 0.5 else None
        return cls(seed, buyer, seller, mismatched, handoff)

    def realised(self, offer: Offer) -> tuple[float, float]:
        """True utilities of a deal: the seller delivers by its definitions."""
        return self.buyer.utility(offer, self.seller.definitions), self.seller.utility(offer)


class OfferTable:
    """The candidate offers as arrays, so a party's utility over all of them is one numpy pass."""

    def __init__(self, offers: list[Offer]):
        self.offers = offers
        self.numeric = {i: np.array([o[i] for o in offers]) for i in NUMERIC}
        self.names = {i: np.array([NAMED[i].index(o[i]) for o in offers]) for i in NAMED}

    def satisfies(self, p: Party) -> np.ndarray:
        """Which offers keep ``p``'s hard limit."""
        issue, op, value = p.must
        return self.numeric[issue] <= value + 1e-9 if op == "<=" else self.numeric[issue] >= value - 1e-9

    def utilities(self, p: Party) -> np.ndarray:
        total = np.zeros(len(self.offers))
        for issue, (lo, hi) in NUMERIC.items():
            x = (self.numeric[issue] - lo) / (hi - lo)
            total += p.weights[issue] * (x if PREFERS_HIGH[p.role][issue] else 1 - x)
        for issue, names in NAMED.items():
            levels = np.array([p.definitions[issue][n] for n in names], float) / (LEVELS - 1)
            v = levels[self.names[issue]]
            total += p.weights[issue] * (v if p.role == "buyer" else 1 - v)
        return total


def candidate_offers() -> list[Offer]:
    """A grid of offers the embedded negotiators choose from."""
    out = []
    for price in np.linspace(*NUMERIC["price"], 7):
        for weeks in np.linspace(*NUMERIC["delivery_weeks"], 4):
            for days in np.linspace(*NUMERIC["payment_days"], 4):
                for support in NAMED["support"]:
                    for ai in NAMED["ai_feature"]:
                        out.append({"price": float(price), "delivery_weeks": float(weeks), "payment_days": float(days),
                                    "support": support, "ai_feature": ai})
    return out
