"""A live tank: a world built from a config, driven by the brain the config names."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..brains.base import DecisionSource
from ..brains.sources import make_source
from ..config import Config
from ..engine import Engine
from ..frame import Frame
from ..world import World
from .base import Session, observed

if TYPE_CHECKING:
    from .fork import ForkSession


class LiveSession(Session):
    """A world built from ``cfg`` with its metrics, stepped live.

    Args:
        cfg: the run's config.
        mode: ``lockstep`` or ``realtime`` (default ``cfg.engine.mode``).
        source: the decision source (default: the brain ``cfg.brain.kind`` names).
        clock: seconds as a float, for latencies and the lockstep wait (tests inject one).
        world: start from this world (built from ``cfg``; tests arrange fish in one) instead
            of a fresh one.
    """

    kind = "live"

    def __init__(self, cfg: Config, mode: str | None = None, source: DecisionSource | None = None,
                 clock: Callable[[], float] = time.perf_counter, world: World | None = None):
        self._mode = mode or cfg.engine.mode
        self._clock = clock
        self.engine = Engine(world or World(cfg), source if source is not None else make_source(cfg, self._mode),
                             mode=self._mode, clock=clock)
        self.metrics = observed(self.engine)

    def step(self) -> Frame:
        return self.engine.step()

    def reset(self, seed: int | None = None) -> None:
        """A fresh tank from the same config (with ``seed`` if given) and a fresh brain."""
        cfg = self.cfg if seed is None else self.cfg.model_copy(update={"seed": seed})
        self.engine.close()
        self.engine = Engine(World(cfg), make_source(cfg, self._mode), mode=self._mode, clock=self._clock)
        self.metrics = observed(self.engine)

    def fork(self, fish: int, plan: str) -> ForkSession:
        """From now on fish ``fish`` follows ``plan`` in a branch; this tank runs on beside it."""
        from .fork import ForkSession

        return ForkSession.from_live(self, fish, plan)
