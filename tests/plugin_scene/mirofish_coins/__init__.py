"""A biased coin, flipped turn by turn by a seeded agent that also guesses the next flip from
what it has seen: the smallest scene a plug-in can bring (docs/scenes.md)."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from mirofish.scenes.turnscene import TurnScene


class Coins:
    settings: ClassVar[dict[str, Any]] = {"bias": 0.5, "memory": 10}  # every setting with its default

    def __init__(self, seed: int, settings: dict[str, Any]):
        if not 0.0 <= settings["bias"] <= 1.0:
            raise ValueError(f"bias must be 0..1, got {settings['bias']}")
        self.rng = random.Random(seed)  # the scene's own seeded generator: the same seed, the same turns
        self.bias, self.memory = settings["bias"], int(settings["memory"])
        self.seen: list[int] = []
        self.heads = self.right = self.turn = 0

    def step(self) -> dict[str, Any]:
        recent = self.seen[-self.memory:]
        guess = int(sum(recent) * 2 >= len(recent)) if recent else 1
        flip = int(self.rng.random() < self.bias)
        self.seen.append(flip)
        self.heads += flip
        self.right += guess == flip
        self.turn += 1
        return {"flip": "heads" if flip else "tails", "guess": "heads" if guess else "tails", "right": guess == flip}

    def summary(self) -> dict[str, Any]:
        n = max(1, self.turn)
        return {"heads_share": round(self.heads / n, 4), "guessed_right": round(self.right / n, 4)}

    def change(self, key: str, value: Any) -> None:
        if key == "bias":
            self.bias = float(value)
        elif key == "memory":
            self.memory = int(value)


SPEC = TurnScene("coins", Coins, help="a biased coin flipped turn by turn (a scene plug-in)", turns=100,
                 metrics=("heads_share", "guessed_right")).spec()
