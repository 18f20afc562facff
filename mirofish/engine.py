"""The engine: the tick loop between the world and a decision source (docs/design.md §3).

Per tick:

1. ask the world which fish need a decision (events or the hard timeout); put one
   :class:`~mirofish.brains.base.RequestBatch` on the source's requests queue;
2. *lockstep*: wait until every outstanding request is answered or ``brain.timeout_s``
   passes; *realtime*: do not wait;
3. apply every decision that has arrived (it becomes the fish's standing intent);
4. ``world.step()`` — arbiter, physics, food, energy;
5. publish a :class:`Frame` (the per-tick snapshot in array form) to observers.

The engine reads the clock only through the ``clock`` it is given (for latency and
realtime pacing); the world never does. Which decision was applied at which tick is in
``Frame.applied``, which is what a recording stores and what makes replay exact: a replay
is just another decision source (it answers in ``begin_tick``), as is a fork.
``Engine.snapshot()`` and ``Engine.state_hash()`` may be called after any tick.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import arbiter
from .brains.base import DecisionBatch, DecisionSource, RequestBatch
from .observe.metrics import Metrics
from .pacing import Pacer, clamp_speed
from .snapshot import Snapshot, take
from .world import World


_NONE = np.zeros(0, np.int64)


@dataclass
class Frame:
    """One tick as observers see it: copies of the arrays, never the world itself."""

    tick: int
    x: np.ndarray
    y: np.ndarray
    heading: np.ndarray
    energy: np.ndarray
    stuck: np.ndarray
    neighbours: np.ndarray
    executed: np.ndarray
    move_outcome: np.ndarray
    applied: list[DecisionBatch] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    @property
    def outcome_counts(self) -> np.ndarray:
        """Fish per move outcome (arbiter.MOVED … OCCUPIED)."""
        return np.bincount(self.move_outcome, minlength=5)

    @property
    def conflicts(self) -> int:
        oc = self.outcome_counts
        return int(oc[arbiter.CROWDED] + oc[arbiter.OCCUPIED])

    @property
    def stuck_events(self) -> np.ndarray:
        mo = self.move_outcome
        return np.flatnonzero((mo == arbiter.CROWDED) | (mo == arbiter.OCCUPIED) | (mo == arbiter.BLOCKED))

    @property
    def tiers(self) -> np.ndarray:
        if not self.applied:
            return np.zeros(0, np.int8)
        return np.concatenate([b.tier for b in self.applied])

    @property
    def tokens(self) -> np.ndarray:
        parts = [b.tokens for b in self.applied if b.tokens is not None]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)


class Engine:
    """Drives one world with one decision source.

    Args:
        world: the world to advance.
        source: where decisions come from (instinct brain, model pool, replay, fork).
        mode: ``"lockstep"`` (wait for answers each tick) or ``"realtime"`` (never wait).
        clock: seconds as a float; ``time.perf_counter`` unless a test injects one.
    """

    def __init__(self, world: World, source: DecisionSource, mode: str = "lockstep",
                 clock: Callable[[], float] = time.perf_counter, metrics: Metrics | None = None):
        if mode not in ("lockstep", "realtime"):
            raise ValueError(f"unknown engine mode {mode!r}")
        self.world, self.source, self.mode, self.clock = world, source, mode, clock
        n = world.school.n
        self.pending = np.zeros(n, bool)
        self.queued_at = np.zeros(n)
        self.timeouts = 0
        self.gave_up = np.full(n, -1, np.int64)  # tick of each fish's last request the engine gave up on
        self._asked: RequestBatch | None = None
        self.metrics = metrics or Metrics(world.cfg.metrics, n, world.water.width, world.water.height)
        self.observers: list[Callable[[Frame], None]] = []
        self.pacer = Pacer(world.cfg.world.tick_seconds, world.cfg.engine.speed)

    # ------------------------------------------------------------ one tick

    def _request(self) -> np.ndarray:
        w, s = self.world, self.world.school
        trig = w.triggers()
        need = ((trig >= 0) & ~self.pending).nonzero()[0]
        if need.size == 0:
            return need
        refused = w.recently_refused(need, w.cfg.triggers.hard_timeout)
        now = self.clock()
        batch = RequestBatch(
            tick=w.tick, fish=need, triggers=trig[need], codes=w.view_codes(need), energy=s.energy[need],
            max_energy=w.max_energy, heading=s.heading[need], traits=s.traits[need],
            food_here=w.water.food_born[s.cell[need]] >= 0,
            refused=refused, queued_at=now,
        )
        if self.source.wants_perceptions:
            batch.perceptions = [w.perceive(int(i), c) for i, c in zip(need, batch.codes)]
            batch.personas = [s.persona[int(i)] for i in need]
        if self.source.writes_summaries:
            batch.summaries_due = [w.summary_due(int(i)) for i in need]
        self.pending[need] = True
        self.queued_at[need] = now
        self._asked = batch
        self.source.submit(batch)
        return need

    def _collect(self, asked: np.ndarray) -> list[DecisionBatch]:
        """Take every answer that has arrived; in lockstep, first wait for this tick's ``asked`` fish.

        A lockstep request unanswered after ``brain.timeout_s`` counts as a timeout: the
        source's fallback answers it now (:meth:`DecisionSource.give_up`; a source without
        one leaves the fish on its standing plan, and it may ask again), and the late answer
        is dropped when it turns up. So a tick never waits longer than ``brain.timeout_s``,
        whatever the server does.
        """
        src, got = self.source, []
        src.pump()
        wait = self.mode == "lockstep" and asked.size > 0
        deadline = self.clock() + self.world.cfg.brain.timeout_s if wait else 0.0
        while True:
            try:
                self._take(src.results.get_nowait(), got)
                continue
            except queue.Empty:
                pass
            if not wait or not self.pending[asked].any():
                return got
            remaining = deadline - self.clock()
            if remaining <= 0:
                late = asked[self.pending[asked]]
                self.timeouts += int(late.size)
                self.pending[late] = False
                answered = None
                if self._asked is not None:
                    answered = src.give_up(self._asked.subset(np.searchsorted(self._asked.fish, late)))
                if answered is not None:
                    self.gave_up[late] = self.world.tick
                    got.append(answered)
                return got
            try:
                self._take(src.results.get(timeout=min(remaining, 0.05)), got)
            except queue.Empty:
                src.pump()

    def _take(self, batch: DecisionBatch, got: list[DecisionBatch]) -> None:
        """Keep an answer unless it answers a request the engine already gave up on."""
        stale = self.gave_up[batch.fish] >= batch.tick
        if stale.any():
            batch = batch.subset(np.flatnonzero(~stale))
            if not len(batch) and not batch.summaries:
                return
        self.pending[batch.fish] = False
        got.append(batch)

    def step(self) -> Frame:
        """Advance the world by one tick and return the frame observers saw."""
        w = self.world
        self.source.begin_tick(w.tick)
        applied = self._collect(self._request() if self.source.needs_requests else _NONE)
        now = self.clock()
        latencies: list[float] = []
        for b in applied:
            w.apply_plans(b.fish, b.goals, b.params, b.horizons)
            for fish, serial, text in b.summaries or ():
                w.write_summary(fish, serial, text)
            latencies.extend((now - self.queued_at[b.fish]).tolist())
        out = w.step()
        s = w.school
        x, y = w.water.xy(s.cell)
        frame = Frame(tick=out.tick, x=x, y=y, heading=s.heading.copy(), energy=s.energy.copy(),
                      stuck=s.stuck.copy(), neighbours=s.neighbours.copy(), executed=out.executed,
                      move_outcome=out.move_outcome, applied=applied, latencies=latencies)
        self.metrics.observe(frame)
        for obs in self.observers:
            obs(frame)
        return frame

    def run(self, ticks: int, on_tick: Callable[[Frame], None] | None = None) -> None:
        for _ in range(ticks):
            f = self.step()
            if on_tick:
                on_tick(f)

    # ------------------------------------------------------------ realtime pacing and commands

    def advance(self, now: float, max_ticks: int = 64) -> int:
        """Realtime: run the ticks due since the last call at the current speed (at most ``max_ticks``)."""
        n = self.pacer.due(now, max_ticks)
        for _ in range(n):
            self.step()
        return n

    @property
    def speed(self) -> float:
        return self.pacer.speed

    @property
    def paused(self) -> bool:
        return self.pacer.paused

    def pause(self) -> None:
        self.pacer.paused = True

    def resume(self) -> None:
        self.pacer.paused = False
        self.pacer.restart()

    def set_speed(self, speed: float) -> None:
        self.pacer.speed = clamp_speed(speed)

    def forget_pending(self) -> None:
        """Drop outstanding requests (after switching to a new source, e.g. at a fork point)."""
        self.pending[:] = False

    def metrics_summary(self) -> dict:
        """The metrics summary with the brain's own alerts (budget, breakers, drift) merged in."""
        summary = self.metrics.summary()
        brain_alerts = getattr(self.source, "alerts", None)
        if brain_alerts is not None:
            summary["alerts"] = summary["alerts"] + brain_alerts()
        return summary

    def snapshot(self) -> Snapshot:
        """The current world as a serializable snapshot, with the current metrics."""
        return take(self.world, self.metrics_summary())

    def state_hash(self) -> str:
        return self.world.state_hash()

    def close(self) -> None:
        self.source.close()


def make_engine(cfg, mode: str | None = None, source: DecisionSource | None = None, **kw) -> Engine:
    """A world built from ``cfg`` driven by ``source`` (default: the brain the config names)."""
    world = World(cfg)
    mode = mode or cfg.engine.mode
    if source is None:
        source = make_source(cfg, mode)
    return Engine(world, source, mode=mode, **kw)


def make_source(cfg, mode: str) -> DecisionSource:
    """The brain ``cfg.brain.kind`` names: the instinct brain, or the model worker pool."""
    if cfg.brain.kind == "llm":
        from .brains.pool import ModelPool  # imports openai; the core never does

        return ModelPool(cfg, mode)
    return instinct_source(cfg)


def instinct_source(cfg, tier: str = "instinct") -> DecisionSource:
    """The embedded brain for ``cfg.brain.decides``: the instinct planner, or the action brain."""
    from .brains.instinct import InstinctBrain, InstinctPlanner
    from .config import hundredths

    if cfg.brain.decides == "plan":
        return InstinctPlanner(cfg.brain.planner, cfg.triggers, seed=cfg.seed, radius=cfg.perception.radius,
                               tier=tier, rest_ceiling=hundredths(cfg.fish.rest_ceiling))
    return InstinctBrain(cfg.brain.instinct, seed=cfg.seed, radius=cfg.perception.radius, tier=tier)
