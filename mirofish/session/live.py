"""A live tank: a world built from a config, driven by the brain the config names."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..brains.base import DecisionSource
from ..brains.exchanges import ReplyCache
from ..brains.sources import make_source
from ..config import Config
from ..engine import Engine
from ..frame import Frame
from ..observe.recording import Recorder, Recording, RecordingError
from ..world import World
from .base import Session, observed, remembered

if TYPE_CHECKING:
    from ..registry import Registry
    from .fork import ForkSession
    from .replay import ReplaySession


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
        past: keep the tank's recent past (``cfg.record.history_minutes``) in a temporary
            recording, deleted at :meth:`close` unless kept (:meth:`keep`): the window's rewind.

    One recorder at most is attached: the recent past (temporary, trimmed as the run goes
    on) or a recording (:meth:`start_recording`, :meth:`keep`), which holds everything.
    """

    kind = "live"
    can_record = True

    def __init__(self, cfg: Config, mode: str | None = None, source: DecisionSource | None = None,
                 clock: Callable[[], float] = time.perf_counter, world: World | None = None,
                 cache: ReplyCache | None = None, past: bool = False, own_memory: bool = False,
                 registry: Registry | None = None):
        self._mode = mode or cfg.engine.mode
        # own_memory: the person starting this run named the memory (memory.kind) on their
        # command line or in their config: a memory of their own is loaded (session/memories.py)
        self._own_memory = own_memory
        self._clock = clock
        self._cache = cache
        self._past = past and cfg.record.history_minutes > 0
        world = world or World(cfg, registry=registry)
        self._attach_memory(world, cfg)  # (before the source: a memory that cannot load stops nothing started)
        self.engine = Engine(world, source if source is not None else make_source(cfg, self._mode, cache=cache),
                             mode=self._mode, clock=clock)
        self.metrics = observed(self.engine)
        self.history = remembered(self.engine)
        self._keep_past()

    def _attach_memory(self, world: World, cfg: Config) -> None:
        if self._own_memory:
            from .memories import attach

            attach(world, cfg)

    def step(self) -> Frame:
        return self.engine.step()

    def reset(self, seed: int | None = None, cfg: Config | None = None) -> None:
        """A fresh tank and a fresh brain: from ``cfg`` if given (settings that apply at a reset,
        such as the fish count), else the current config with its tuned settings; with ``seed``
        if given. A recording stops; the recent past starts again."""
        cfg = cfg or self.engine.world.cfg
        if seed is not None:
            cfg = cfg.model_copy(update={"seed": seed})
        self._close_recorder()
        registry = self.registry
        self.engine.close()
        world = World(cfg, registry=registry)
        self._attach_memory(world, cfg)
        self.engine = Engine(world, make_source(cfg, self._mode, cache=self._cache), mode=self._mode,
                             clock=self._clock)
        self.metrics = observed(self.engine)
        self.history = remembered(self.engine)
        self._keep_past()

    # -- the recent past and recordings

    recorder: Recorder | None = None
    past_folder: Path | None = None  # the temporary folder of the recent past, while one is kept

    @property
    def is_recording(self) -> bool:
        """Whether a recording (not just the temporary recent past) is being written."""
        return self.recorder is not None and self.past_folder is None

    def _keep_past(self) -> None:
        self._recorded_from = self.tick
        if not self._past:
            return
        cfg = self.cfg
        keep = max(1, int(round(cfg.record.history_minutes * 60 / cfg.world.tick_seconds)))
        self.past_folder = Path(tempfile.mkdtemp(prefix="mirofish-past-"))
        self.recorder = Recorder(self.past_folder / "past.db", cfg, keep_ticks=keep, registry=self.registry,
                                 extra_header={"kept_from": "a live tank's recent past"}).attach(self)

    def _close_recorder(self) -> Path | None:
        rec, folder = self.recorder, self.past_folder
        self.recorder = self.past_folder = None
        if rec is not None:
            rec.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
            return None
        return rec.path if rec is not None else None

    def past(self) -> ReplaySession | None:
        """The recent past (or the recording being written) as a replay, up to now; None
        when none is kept."""
        from .replay import ReplaySession

        if self.recorder is None:
            return None
        self.recorder.flush()
        past = ReplaySession(Recording(self.recorder.path, registry=self.engine.world.registry))
        past._owns_recording = True  # (opened here for it: closed with it)
        return past

    def past_range(self) -> tuple[int, int] | None:
        """(first, last) tick the recent past or the recording holds (estimated without
        reading the file: the oldest kept keyframe); None when none is kept."""
        rec = self.recorder
        if rec is None:
            return None
        return (rec.first_kept if rec.first_kept is not None else self._recorded_from), self.tick

    _recorded_from = 0

    def keep(self, path: str | Path, overwrite: bool = False) -> Path:
        """Save the recent past as a normal recording at ``path`` and go on recording there
        ("Keep this"): everything from the oldest kept tick on, and what follows."""
        if self.recorder is None:
            return self.start_recording(path, overwrite).path
        if self.past_folder is None:
            raise RecordingError(f"already recording to {self.recorder.path}")
        new = self.recorder.keep_as(path, overwrite)
        shutil.rmtree(self.past_folder, ignore_errors=True)
        self.past_folder = None
        return new

    def start_recording(self, path: str | Path, overwrite: bool = False,
                        extra_header: dict[str, Any] | None = None) -> Recorder:
        """Record from now on to ``path`` (refused if it exists, unless ``overwrite``);
        ``extra_header``: more header keys (``decided_by``: who made the decisions, when it is
        not the config's brain — mirofish.env's policy)."""
        Recorder.check_path(path, overwrite)
        self._close_recorder()
        self._recorded_from = self.tick
        self.recorder = Recorder(path, self.cfg, overwrite=overwrite, extra_header=extra_header,
                                 registry=self.registry).attach(self)
        return self.recorder

    def stop_recording(self) -> Path | None:
        """Close the recording (if any) and return its path; the recent past starts again."""
        if not self.is_recording:
            return None
        path = self._close_recorder()
        self._keep_past()
        return path

    def mark(self) -> tuple[dict[str, Any], object, object, object]:
        """The current state, metrics, decision history and the memory's own state (a memory
        other than the tank's ring: its ``get_state()``), to :meth:`rewind` to (the window's fork
        point); the recorder gets a chunk boundary here."""
        import copy

        if self.recorder is not None:
            self.recorder.flush()
        part = self.engine.world.recall_part
        memory = copy.deepcopy(part.get_state()) if callable(getattr(part, "get_state", None)) else None
        return self.state_arrays(), copy.deepcopy(self.metrics), self.history.copy(), memory

    def rewind(self, point: tuple[Any, ...]) -> None:
        """Back to a :meth:`mark`: the tank continues from there as it would have (its memory
        too: it remembers nothing of the ticks undone); what the recorder wrote since is forgotten."""
        import copy

        arrays, metrics, history, *more = point
        world = self.engine.world
        world.load_state_arrays(arrays)
        part = world.recall_part
        if more and more[0] is not None and callable(getattr(part, "set_state", None)):
            part.set_state(copy.deepcopy(more[0]))
        if world._events_seen is not None:  # told up to the ring as it was at the mark
            world._events_seen = world.school.memory.count.astype(np.int64)
        self.engine.pending[:] = False
        self.engine.observers.remove(self.metrics.observe)
        self.engine.observers.remove(self.history.observe)
        self.metrics = observed(self.engine, metrics)
        self.history = remembered(self.engine, history)
        if self.recorder is not None:
            self.recorder.truncate(self.tick, arrays)

    def close(self) -> None:
        self._close_recorder()
        self.engine.close()

    def tune(self, key: str, value: float) -> None:
        """Change a setting of the running tank (one of ``World.LIVE_KEYS``) from the next tick:
        a ``tune`` intervention, recorded with its tick like the others. Raises ValueError
        (``InterventionError``) for other keys or bad values."""
        self.intervene({"kind": "tune", "key": key, "value": value})

    def fork(self, fish: int, plan: str, replan: bool = False) -> ForkSession:
        """From now on fish ``fish`` follows ``plan`` in a branch; this tank runs on beside it."""
        from .fork import ForkSession

        return ForkSession.from_live(self, fish, plan, replan=replan)
