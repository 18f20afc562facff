"""The engine's queue interface: inline and threaded sources, lockstep and realtime."""

import queue
import threading
import time

import numpy as np

from mirofish.brains.base import DecisionBatch, DecisionSource, InlineSource
from mirofish.brains.instinct import InstinctPlanner, instinct_source
from mirofish.config import load_config
from mirofish.fish.triggers import T_HORIZON
from mirofish.pacing import Pacer, clamp_speed
from mirofish.session import LiveSession


class ThreadedInstinct(DecisionSource):
    """The instinct brain answering from its own thread after a delay, like a model pool."""

    wants_perceptions = True

    def __init__(self, cfg, delay=0.0):
        super().__init__()
        self.brain = instinct_source(cfg)
        self.delay, self.seen_text = delay, []
        self._stop = False
        self.thread = threading.Thread(target=self._work, daemon=True)
        self.thread.start()

    def _work(self):
        while not self._stop:
            try:
                batch = self.requests.get(timeout=0.01)
            except queue.Empty:
                continue
            self.seen_text.append(batch.perceptions[0].text())
            time.sleep(self.delay)
            self.results.put(self.brain.decide(batch))

    def close(self):
        self._stop = True
        self.thread.join()


class Silent(DecisionSource):
    """Never answers (a dead server)."""


def test_threaded_source_in_lockstep_matches_inline_exactly():
    cfg = load_config(seed=9, **{"fish.count": 20})
    inline = LiveSession(cfg)
    threaded = LiveSession(cfg, source=ThreadedInstinct(cfg))
    for _ in range(150):
        inline.step()
        threaded.step()
        assert inline.state_hash() == threaded.state_hash()
    assert "energy:" in threaded.source.seen_text[0] and "@" in threaded.source.seen_text[0]
    threaded.close()


def test_lockstep_gives_up_after_the_timeout_and_fish_keep_moving():
    cfg = load_config(seed=2, **{"fish.count": 10, "brain.timeout_s": 0.02})
    eng = LiveSession(cfg, source=Silent())
    before = eng.world.school.cell.copy()
    start = time.perf_counter()
    eng.run(3)
    assert time.perf_counter() - start < 1.0
    assert eng.timeouts == 30  # every tick the fish ask again, and every tick the wait times out
    assert eng.metrics.decisions_by_tier() == {}
    # with no answer at all the fish swim on with their first plan (explore the way they face)
    assert eng.world.tick == 3 and (before != eng.world.school.cell).sum() >= 5


def test_realtime_never_waits_and_applies_late_answers():
    cfg = load_config(seed=4, **{"fish.count": 10})
    eng = LiveSession(cfg, mode="realtime", source=ThreadedInstinct(cfg, delay=0.05))
    start = time.perf_counter()
    frames = [eng.step() for _ in range(5)]
    assert time.perf_counter() - start < 0.2  # five ticks, no waiting for the 50 ms brain
    assert sum(len(f.applied) for f in frames) == 0
    time.sleep(0.15)
    f = eng.step()
    assert len(f.applied) >= 1 and min(f.latencies) >= 0.05
    eng.close()


def test_pacer_turns_wall_time_into_ticks_by_speed_and_pause():
    """The window and the terminal view pace a session with a Pacer (the engine has no clock)."""
    cfg = load_config(**{"fish.count": 5})
    live = LiveSession(cfg, mode="realtime")
    pacer = Pacer(cfg.world.tick_seconds, 2.0)
    pacer.due(100.0, 64)  # the first call only sets the clock
    live.run(pacer.due(101.0, 64))
    assert live.tick == 4  # 1 s × 2× speed / 0.5 s per tick
    pacer.paused = True
    assert pacer.due(105.0, 64) == 0
    pacer.paused = False
    pacer.restart()
    pacer.due(106.0, 64)
    assert pacer.due(106.5, 64) == 2
    pacer.speed = clamp_speed(1000)
    assert pacer.speed == 64

class QueuedPlanner(InstinctPlanner):
    """The instinct planner answered through its two queues, as before the engine asked inline
    sources directly (its own ``pump``: the engine cannot take it for InlineSource's plumbing)."""

    def pump(self):
        InlineSource.pump(self)


def _twins(seed, fish=40):
    cfg = load_config(seed=seed, **{"fish.count": fish})
    direct = LiveSession(cfg)
    queued = LiveSession(cfg, source=QueuedPlanner(cfg.brain.planner, cfg.triggers, seed=cfg.seed))
    return direct, queued


def test_an_inline_source_is_asked_directly_with_what_its_queues_gave():
    """The engine answers the instinct planner's requests without its queues (no request is put on
    them, the planner still decides every one) and the tank, its decision history and its metrics
    are what the queued way gives, tick by tick; an answer already on the source's results (a
    fork's first one) is applied before the tick's own, as the queued way does."""
    direct, queued = _twins(seed=4)
    src, asked = direct.engine.source, []
    decide = src._decide
    src._decide = lambda b: asked.append(len(b)) or decide(b)
    for t in range(300):
        if t == 120:  # the same answer waiting on both sources' results, for a fish that asks this tick
            fish = int(direct.engine.world.asks(direct.engine.pending).fish[0])  # (told to rest: hold 5)
            for s in (direct, queued):
                s.engine.source.results.put(DecisionBatch.one(s.engine.world.tick, fish, 0, 5, 0, "user", ""))
        direct.step()
        queued.step()
        assert direct.state_hash() == queued.state_hash(), t
        assert src.requests.empty()
    assert sum(asked) == src.decisions > 100
    for name in ("tick", "goal", "param", "horizon", "tier", "status", "ended", "counts"):
        assert np.array_equal(getattr(direct.history, name), getattr(queued.history, name)), name
    a, b = direct.metrics.summary(), queued.metrics.summary()
    a.pop("decision_latency_p95_ms"), b.pop("decision_latency_p95_ms")  # (the machine's clock)
    assert a == b


def test_what_ended_each_plan_is_the_same_from_the_compiled_and_the_numpy_tick(monkeypatch):
    """Frame.ended (what ended each fish's plan as a decision replaced it: a raised trigger, the
    horizon's where one met the plan's end, -1 none) comes from the compiled adopt in the compiled
    tick and from numpy in the numpy tick: the same codes for every decision, tick by tick, with
    every kind among them."""
    cfg = load_config(seed=8, **{"fish.count": 40})
    compiled = LiveSession(cfg)
    monkeypatch.setenv("MIROFISH_TICK", "numpy")
    reference = LiveSession(cfg)
    seen = set()
    for _ in range(400):
        a, b = compiled.step(), reference.step()
        assert len(a.ended) == len(b.ended)
        for x, y in zip(a.ended, b.ended):
            assert x.dtype == y.dtype == np.int8 and np.array_equal(x, y)
            seen.update(x.tolist())
    assert {-1, T_HORIZON} <= seen and len(seen) >= 4


def test_a_batch_made_without_conversions_is_the_one_the_constructor_makes():
    """DecisionBatch.made (the compiled planner's batches, every tick) gives every field the value
    and type the constructor gives the same plans, its defaults included, and a fresh ``meta``."""
    from dataclasses import fields

    fish, tier = np.array([4, 9], np.int64), np.array([1, 1], np.int8)
    goals, params, horizons = np.array([2, 0], np.int8), np.array([3, 5], np.int16), np.array([40, 0], np.int16)
    made = DecisionBatch.made(7, fish, tier, np.zeros(2, np.int8), np.zeros(2, np.int64), goals, params, horizons,
                              plain=True)
    built = DecisionBatch(tick=7, fish=fish, actions=None, tier=tier, goals=goals, params=params, horizons=horizons,
                          plain=True)
    for f in fields(DecisionBatch):
        a, b = getattr(made, f.name), getattr(built, f.name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), f.name
        else:
            assert a == b, f.name
    assert made.meta is not DecisionBatch.made(7, fish, tier, tier, fish, goals, params, horizons).meta
