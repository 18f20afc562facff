"""The referential game (GlossoGen): a sender names a target, a receiver picks it.

Objects are tuples of attribute values (default colour × shape × size = 4 × 3 × 2 = 24). A
round draws a target and ``candidates - 1`` distractors in a fixed (seeded) order; the sender
sees only the target, the receiver only the candidate list and the message. Messages are at
most ``max_chars`` long and may not spell attributes out ("blue square" is rejected) — except in
the natural-language baseline condition, which exists to be the yardstick.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator


class GameConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    attributes: dict[str, list[str]] = {
        "color": ["red", "blue", "green", "yellow"],
        "shape": ["circle", "square", "triangle"],
        "size": ["small", "large"],
    }
    candidates: int = Field(5, ge=2, le=20)
    max_chars: int = Field(20, ge=3, le=200)
    rounds: int = Field(400, ge=1)
    seed: int = Field(0, ge=0)
    condition: str = Field("dynamic", pattern="^(dynamic|fixed|natural)$")
    agents: int = Field(2, ge=2, le=3)
    prune_below: float = Field(0.15, ge=0, le=1, description="prune terms whose stable score falls below")
    prune_after_uses: int = Field(4, ge=1, description="… once they have been used this often")
    stale_rounds: int = Field(150, ge=1, description="prune terms unused for this many rounds")
    review: bool = Field(False, description="new terms wait for a person's approval before they become global")
    alarm_window: int = Field(20, ge=5, description="rounds in the rolling success rate the alarm watches")
    alarm_drop: float = Field(0.25, gt=0, le=1, description="alarm when it falls this far below its best")

    @model_validator(mode="after")
    def _enough_objects(self) -> GameConfig:
        n = int(np.prod([len(v) for v in self.attributes.values()]))
        if n < self.candidates:
            raise ValueError(f"only {n} objects for {self.candidates} candidates")
        if any(len(v) < 1 for v in self.attributes.values()):
            raise ValueError("every attribute needs at least one value")
        return self


@dataclass(frozen=True)
class GameObject:
    id: str
    values: tuple[str, ...]  # one value per attribute, in attribute order

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
        pick = self.rng.choice(len(self.objects), size=self.cfg.candidates, replace=False)
        cands = [self.objects[i] for i in pick]
        return Round(index, cands[int(self.rng.integers(len(cands)))], cands)

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
