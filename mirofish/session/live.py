"""A live tank: a world built from a config, driven by the brain the config names."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..brains.base import DecisionSource
from ..brains.exchanges import ReplyCache
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
        cache: a model brain's reply cache (``--reply-cache DIR``), kept across resets.
    """

    kind = "live"

    def __init__(self, cfg: Config, mode: str | None = None, source: DecisionSource | None = None,
                 clock: Callable[[], float] = time.perf_counter, world: World | None = None,
                 cache: ReplyCache | None = None):
        self._mode = mode or cfg.engine.mode
        self._clock = clock
        self._cache = cache
        self.engine = Engine(world or World(cfg),
                             source if source is not None else make_source(cfg, self._mode, cache=cache),
                             mode=self._mode, clock=clock)
        self.metrics = observed(self.engine)

    def step(self) -> Frame:
        return self.engine.step()

    def reset(self, seed: int | None = None, cfg: Config | None = None) -> None:
        """A fresh tank and a fresh brain: from ``cfg`` if given (settings that apply at a reset,
        such as the fish count), else the current config; with ``seed`` if given."""
        cfg = cfg or self.cfg
        if seed is not None:
            cfg = cfg.model_copy(update={"seed": seed})
        self.stop_recording()
        self.engine.close()
        self.engine = Engine(World(cfg), make_source(cfg, self._mode, cache=self._cache), mode=self._mode,
                             clock=self._clock)
        self.metrics = observed(self.engine)

    recorder = None

    def start_recording(self, path, overwrite: bool = False):
        """Record from now on to ``path`` (refused if it exists, unless ``overwrite``)."""
        from ..observe.recording import Recorder

        self.stop_recording()
        self.recorder = Recorder(path, self.cfg, overwrite=overwrite).attach(self)
        return self.recorder

    def stop_recording(self):
        """Close the recording (if any); returns its path."""
        rec, self.recorder = self.recorder, None
        if rec is not None:
            rec.close()
            return rec.path
        return None

    def mark(self) -> tuple[dict, object]:
        """The current state and metrics, to :meth:`rewind` to (the window's fork point)."""
        import copy

        return self.state_arrays(), copy.deepcopy(self.metrics)

    def rewind(self, point: tuple[dict, object]) -> None:
        """Back to a :meth:`mark`: the tank continues from there as it would have."""
        arrays, metrics = point
        self.engine.world.load_state_arrays(arrays)
        self.engine.pending[:] = False
        self.engine.observers.remove(self.metrics.observe)
        self.metrics = observed(self.engine, metrics)  # type: ignore[arg-type]

    def close(self) -> None:
        self.stop_recording()
        self.engine.close()

    def tune(self, key: str, value: float) -> None:
        """Change a setting of the running tank (one of ``World.LIVE_KEYS``); raises ValueError
        for other keys, bad values, or while a recorder is attached (a recording holds one
        config, so a retuned run would not replay)."""
        from pydantic import ValidationError

        if key not in World.LIVE_KEYS:
            raise ValueError(f"{key} can't change while the tank runs (it applies at a reset)")
        if self.recorder is not None:
            raise ValueError("stop recording to tune the tank (a recording holds one config)")
        data = self.cfg.model_dump()
        section, name = key.split(".")
        data[section][name] = value
        try:
            cfg = Config.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"{key}: {exc.errors()[0]['msg']}") from None
        self.engine.world.retune(cfg)

    def fork(self, fish: int, plan: str) -> ForkSession:
        """From now on fish ``fish`` follows ``plan`` in a branch; this tank runs on beside it."""
        from .fork import ForkSession

        return ForkSession.from_live(self, fish, plan)
