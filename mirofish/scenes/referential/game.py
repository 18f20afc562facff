"""The referential game (GlossoGen): a sender names a target, a receiver picks it.

Objects are tuples of attribute values (default colour × shape × size = 4 × 3 × 2 = 24). A
round draws a target and ``candidates - 1`` distractors in a fixed (seeded) order; the sender
sees only the target, the receiver only the candidate list and the message. Messages are at
most ``max_chars`` long and may not spell attributes out ("blue square" is rejected) — except in
the natural-language baseline condition, which exists to be the yardstick.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

#: The objects of the ``templates`` option when no ``attributes`` are given: alerts, as in the
#: source design's template example (``crit-db``: a critical database alert, whatever its text).
ALERTS: dict[str, list[str]] = {
    "severity": ["critical", "warning", "info"],
    "category": ["database", "network", "disk", "auth"],
    "service": ["api", "web", "batch", "queue"],
}
#: The free text an alert of a category carries (a different one, and a different number, each
#: round): the part of an instance no term is about.
DETAILS: dict[str, tuple[str, ...]] = {
    "database": ("connection pool exhausted", "replication lag", "slow queries", "deadlock detected"),
    "network": ("packet loss", "DNS timeouts", "TLS handshake failures", "link flapping"),
    "disk": ("volume almost full", "inode exhaustion", "write latency high", "SMART errors"),
    "auth": ("login failures spiking", "token signing key expiring", "MFA provider down", "locked accounts"),
}


class GameConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _template_objects(cls, data: Any) -> Any:
        """``templates`` without ``attributes``: the objects are alerts (:data:`ALERTS`)."""
        if isinstance(data, dict) and data.get("templates") and "attributes" not in data:
            data = {**data, "attributes": ALERTS}
        return data

    attributes: dict[str, list[str]] = {
        "color": ["red", "blue", "green", "yellow"],
        "shape": ["circle", "square", "triangle"],
        "size": ["small", "large"],
    }
    candidates: int = Field(5, ge=2, le=20)
    max_chars: int = Field(20, ge=3, le=200)
    rounds: int = Field(400, ge=1, le=1_000_000)  # (the CLI's --rounds bound: a sweep's params too)
    seed: int = Field(0, ge=0)
    condition: str = Field("dynamic", pattern="^(dynamic|fixed|natural)$")
    agents: int = Field(2, ge=2, le=3)
    prune_below: float = Field(0.15, ge=0, le=1, description="prune terms whose stable score falls below")
    prune_after_uses: int = Field(4, ge=1, description="… once they have been used this often")
    stale_rounds: int = Field(150, ge=1, description="prune terms unused for this many rounds")
    review: bool = Field(False, description="new terms wait for a person's approval before they become global")
    alarm_window: int = Field(20, ge=5, description="rounds in the rolling success rate the alarm watches")
    alarm_drop: float = Field(0.25, gt=0, le=1, description="alarm when it falls this far below its best")
    vary: int = Field(0, ge=0, le=10, description="candidates vary along this many attributes and share the "
                                                   "target's other values (0: any objects)")
    context: bool = Field(True, description="the sender names only what tells the target apart from these "
                                            "candidates (False: every attribute, every time)")
    temperature: float = Field(0.2, ge=0, le=2, description="model agents' sampling temperature (the source "
                                                            "design's 0.2; higher: more varied terms, slower to "
                                                            "settle); recorded with the game")
    coin: Literal["syllable", "initials"] = Field(
        "syllable", description="how an embedded sender coins a new term: a random consonant-vowel syllable, or "
                                "the initials of the values it names (bl, ci: a form that tells its meaning)")
    combine: bool = Field(False, description="a pair of values needed three times gets one term of its own (off by "
                                             "default: each new pair must be learnt, and success falls)")
    templates: bool = Field(False, description="terms name templates (the source design's canonical_schema): a "
                                               "message is one term for the values that tell the target apart, "
                                               "whatever the rest, and every object carries a new free-text detail "
                                               "each round that no term is about; without attributes the objects "
                                               "are alerts (severity × category × service)")

    @model_validator(mode="after")
    def _enough_objects(self) -> GameConfig:
        n = int(np.prod([len(v) for v in self.attributes.values()]))
        if n < self.candidates:
            raise ValueError(f"only {n} objects for {self.candidates} candidates")
        if self.vary > len(self.attributes):
            raise ValueError(f"vary {self.vary}: there are only {len(self.attributes)} attributes")
        if self.vary and max(int(np.prod([len(v) for v in c])) for c in _subsets(list(self.attributes.values()),
                                                                                  self.vary)) < self.candidates:
            raise ValueError(f"no {self.vary} attributes have {self.candidates} different objects between them")
        if any(len(v) < 1 for v in self.attributes.values()):
            raise ValueError("every attribute needs at least one value")
        return self


@dataclass(frozen=True)
class GameObject:
    id: str
    values: tuple[str, ...]  # one value per attribute, in attribute order
    detail: str = ""  # the ``templates`` option: this round's free text (an alert's message), no term's meaning

    def properties(self, names: list[str]) -> dict[str, str]:
        return dict(zip(names, self.values))

    def describe(self, names: tuple[str, ...] = ("color", "shape", "size")) -> str:
        """The natural-language description (the baseline's message), e.g. "large red square"."""
        props = dict(zip(names, self.values))
        if set(props) == {"color", "shape", "size"}:
            return f"{props['size']} {props['color']} {props['shape']}"
        return " ".join(self.values)


@dataclass
class Round:
    index: int
    target: GameObject
    candidates: list[GameObject]
    message: str = ""
    choice: str | None = None
    success: bool = False
    used_terms: list[str] = field(default_factory=list)
    new_terms: list[str] = field(default_factory=list)
    sender_raw: str = ""
    receiver_raw: str = ""


class Game:
    """Objects, rounds and the message rules."""

    def __init__(self, cfg: GameConfig):
        self.cfg = cfg
        self.names = list(cfg.attributes)
        grids = np.array(np.meshgrid(*[range(len(v)) for v in cfg.attributes.values()], indexing="ij"))
        combos = grids.reshape(len(self.names), -1).T
        self.objects = [GameObject(f"obj_{k:02d}", tuple(cfg.attributes[n][i] for n, i in zip(self.names, c)))
                        for k, c in enumerate(combos)]
        self.rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(cfg.seed)))
        words = {w for vals in cfg.attributes.values() for w in vals}
        self._spelled = re.compile(r"\b(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")\b",
                                   re.I)

    def draw_round(self, index: int) -> Round:
        if self.cfg.vary:
            rnd = self._similar_round(index)
        else:
            pick = self.rng.choice(len(self.objects), size=self.cfg.candidates, replace=False)
            cands = [self.objects[i] for i in pick]
            rnd = Round(index, cands[int(self.rng.integers(len(cands)))], cands)
        if self.cfg.templates:  # each candidate an instance: this round's detail (the same draw for the target)
            rnd.candidates = [replace(c, detail=self._detail(c)) for c in rnd.candidates]
            rnd.target = next(c for c in rnd.candidates if c.id == rnd.target.id)
        return rnd

    def _detail(self, obj: GameObject) -> str:
        pool = next((DETAILS[v] for v in obj.values if v in DETAILS), ("event",))
        return f"{pool[int(self.rng.integers(len(pool)))]} #{int(self.rng.integers(1000, 10000))}"

    def _similar_round(self, index: int) -> Round:
        """Candidates that vary along ``vary`` attributes (chosen at random among those with
        enough objects between them) and share the target's values on the others."""
        k = len(self.names)
        fits = [c for c in _subsets(list(range(k)), self.cfg.vary)
                if int(np.prod([len(self.cfg.attributes[self.names[a]]) for a in c])) >= self.cfg.candidates]
        varying = fits[int(self.rng.integers(len(fits)))]
        target = self.objects[int(self.rng.integers(len(self.objects)))]
        same = [o for o in self.objects if all(o.values[a] == target.values[a] for a in range(k) if a not in varying)
                and o.id != target.id]
        pick = self.rng.choice(len(same), size=self.cfg.candidates - 1, replace=False)
        cands = [target, *(same[i] for i in pick)]
        order = self.rng.permutation(len(cands))
        return Round(index, target, [cands[i] for i in order])

    def check_message(self, message: str) -> str | None:
        """Why a message is not allowed (None if it is)."""
        if not message:
            return "empty message"
        if self.cfg.condition != "natural" and len(message) > self.cfg.max_chars:  # the baseline may spell out
            return f"longer than {self.cfg.max_chars} characters"
        if self.cfg.condition != "natural" and self._spelled.search(message):
            return "spells an attribute out"
        return None

    @property
    def chance(self) -> float:
        return 1.0 / self.cfg.candidates


_T = TypeVar("_T")


def _subsets(items: list[_T], k: int) -> list[tuple[_T, ...]]:
    from itertools import combinations

    return list(combinations(items, k))


def distinguishing(target: GameObject, candidates: list[GameObject], names: list[str]) -> list[str]:
    """The fewest attributes that tell ``target`` apart from every other candidate (ties: in
    attribute order); all of them when nothing fewer does."""
    others = [c for c in candidates if c.id != target.id]
    for k in range(1, len(names) + 1):
        for combo in _subsets(list(range(len(names))), k):
            if all(any(o.values[a] != target.values[a] for a in combo) for o in others):
                return [names[a] for a in combo]
    return list(names)
