"""The engine: the tick loop between the world and a decision source (docs/design.md §3).

Per tick:

1. ask the world which fish need a decision (events or the hard timeout); put one
   :class:`~mirofish.brains.base.RequestBatch` on the source's requests queue;
2. *lockstep*: wait until every outstanding request is answered, or until no answer has come
   for ``source.tick_wait()`` seconds; *realtime*: do not wait;
3. apply every decision that has arrived (it becomes the fish's standing intent);
4. ``world.step()`` — arbiter, physics, food, energy;
5. publish a :class:`~mirofish.frame.Frame` (the per-tick snapshot in array form) to its
   observers (metrics and recorders are observers; the engine imports neither).

The engine reads the clock only through the ``clock`` it is given (for latency and the
lockstep wait); the world never does. Which decision was applied at which tick is in
``Frame.applied``, which is what a recording stores and what makes replay exact: a replay
is just another decision source (it answers in ``begin_tick``), as is a fork.
``Engine.state_hash()`` may be called after any tick. Sessions (:mod:`mirofish.session`)
wrap an engine with its metrics for everything that runs or shows a tank.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .brains.base import DecisionBatch, DecisionSource, InlineSource, RequestBatch
from .frame import Frame
from .interventions import InterventionError
from .world import World

_NONE = np.zeros(0, np.int64)
# An inline source's own queue plumbing (InlineSource.pump, DecisionSource.submit): a source that
# keeps both answers in the engine's thread, and the engine calls it directly (Engine._inline)
_INLINE_PUMP, _SUBMIT = InlineSource.pump, DecisionSource.submit


class Engine:
    """Drives one world with one decision source.

    Args:
        world: the world to advance.
        source: where decisions come from (instinct brain, model pool, replay, fork).
        mode: ``"lockstep"`` (wait for answers each tick) or ``"realtime"`` (never wait).
        clock: seconds as a float; ``time.perf_counter`` unless a test injects one.

    The engine keeps no metrics and no wall-clock pacing: observers (metrics, recorders, the
    window through a session) get every :class:`~mirofish.frame.Frame`, and whoever shows
    the tank decides when to call :meth:`step`.
    """

    def __init__(self, world: World, source: DecisionSource, mode: str = "lockstep",
                 clock: Callable[[], float] = time.perf_counter):
        if mode not in ("lockstep", "realtime"):
            raise ValueError(f"unknown engine mode {mode!r}")
        self.world, self.source, self.mode, self.clock = world, source, mode, clock
        n = world.school.n
        self.pending = np.zeros(n, bool)
        # fish whose plan is a provisional one, swum while their first request waits (a realtime
        # model pool's "waiting for the model"): when it ends they get another (DecisionSource.renew_waiting)
        self.waiting = np.zeros(n, bool)
        self._renews = bool(getattr(source, "renews_waiting", False))
        self.queued_at = np.full(n, np.nan)  # when each fish's open request was made here (NaN: not by this engine)
        self.timeouts = 0
        self.asked_at = np.full(n, -1, np.int64)  # tick of each fish's newest request
        self._asked: RequestBatch | None = None
        self.observers: list[Callable[[Frame], None]] = []
        self._queued: list[dict[str, Any]] = []  # interventions for the next tick (the window's clicks)
        # what a person asked for that could not apply when its tick came (checked when asked, but
        # another made since took its room: a second fish added into the last free cell), one line
        # each; dropped, so neither the tank nor a recording has them
        self.refused: list[str] = []

    def take_over(self, fish: int) -> None:
        """From now on ``fish`` is answered by someone else (a person plays it): answers to its
        earlier requests still under way are dropped when they come (counted as late)."""
        self.asked_at[fish] = self.world.tick
        self.pending[fish] = False
        self.waiting[fish] = False

    def intervene(self, iv: dict[str, Any]) -> None:
        """Apply ``iv`` (see :mod:`mirofish.interventions`) at the start of the next tick; it is
        in that tick's :attr:`Frame.interventions` (what recorders store). Raises
        :class:`~mirofish.interventions.InterventionError` for one that cannot apply here."""
        from .interventions import check

        self._queued.append(check(iv, self.world))

    # ------------------------------------------------------------ one tick

    def _request(self, submit: bool = True) -> np.ndarray:
        """Ask the world which fish need a decision and hand their requests to the source
        (``submit``; else only kept as :attr:`_asked`, for :meth:`_inline` to answer). Returns the fish."""
        w, s = self.world, self.world.school
        renew = self._renews and bool(self.waiting.any())
        a = w.asks(self.pending & ~self.waiting if renew else self.pending)  # fish out of the water are asked nothing
        need = a.fish
        if need.size == 0:
            return need
        now = self.clock()
        batch = RequestBatch(
            tick=w.tick, fish=need, triggers=a.triggers, codes=a.codes, energy=a.energy, max_energy=w.max_energy,
            heading=a.heading, traits=a.traits, food_here=a.food_here, refused=a.refused, queued_at=now,
            plans=w.plan_table, **(w.request_extras(need)._asdict() if w.has_extras else {}),
        )  # (the default tank has none of them: no call per request, the call budget)
        if self.source.wants_perceptions:
            batch.perceptions = [w.perceive(int(i), c) for i, c in zip(need, batch.codes)]
            batch.personas = [s.persona[int(i)] for i in need]

        if self.source.writes_summaries:
            batch.summaries_due = [w.summary_due(int(i)) for i in need]
        if renew:
            again = self.waiting[need]  # their provisional plan ended: another one, their first request kept
            if again.any():
                self.source.renew_waiting(batch.subset(np.flatnonzero(again)))
                self.waiting[need[again]] = False  # (until it comes: asked once)
                batch = batch.subset(np.flatnonzero(~again))
                need = batch.fish
                if need.size == 0:
                    return need
        self.queued_at[need] = now
        self.asked_at[need] = w.tick
        self._asked = batch
        if submit:
            self.pending[need] = True
            self.source.submit(batch)
        return need

    def _inline(self, src: InlineSource) -> list[DecisionBatch]:
        """:meth:`_collect` of :meth:`_request` for a source that answers in the engine's thread
        with InlineSource's own plumbing (the instinct brain, the random chooser): the same
        answers in the same order — first whatever is already on its results queue, then its
        answer to this tick's requests — asked directly instead of through its two queues (a
        request is answered before the tick goes on, so its fish is never left pending)."""
        got: list[DecisionBatch] = []  # (not list[DecisionBatch](): the alias's call tries to set
        # __orig_class__ on the list and swallows the AttributeError, about 9,000 instructions a tick)
        results = src.results
        while not results.empty():  # (put there by someone else: a fork's first answer)
            self._take(results.get_nowait(), got)
        if self._request(submit=False).size:
            got.append(src._decide(self._asked))  # type: ignore[arg-type]
        return got

    def _collect(self, asked: np.ndarray) -> list[DecisionBatch]:
        """Take every answer that has arrived; in lockstep, first wait for this tick's ``asked`` fish.

        The wait lasts while answers keep coming (or the source reports progress: a completion
        finished): after ``source.tick_wait()`` seconds without any (``brain.timeout_s``, at
        least 3× the server's measured latency) the rest count as
        timeouts — the source's fallback answers them now (:meth:`DecisionSource.give_up`; a
        source without one leaves the fish on its standing plan, and it may ask again). So a
        server that hangs costs a tick at most that long, while a slow one-slot server that
        answers the tick's requests one after another is waited for.
        """
        src = self.source
        got: list[DecisionBatch] = []  # (no alias call: _inline)
        src.pump()
        results = src.results
        while not results.empty():  # what has arrived (one consumer: this engine)
            self._take(results.get_nowait(), got)
        wait = self.mode == "lockstep" and asked.size > 0
        if not wait or not np.count_nonzero(self.pending[asked]):
            return got  # (an inline source: every answer is in)
        idle = src.tick_wait() or self.world.cfg.brain.timeout_s
        deadline = self.clock() + idle
        progress = src.progress()
        while True:
            try:
                self._take(src.results.get_nowait(), got)
                deadline = self.clock() + idle  # an answer came: the server is making progress
                continue
            except queue.Empty:
                pass
            if not wait or not np.count_nonzero(self.pending[asked]):
                return got
            if src.progress() != progress:  # the server finished something: it is busy, not stuck
                progress, deadline = src.progress(), self.clock() + idle
            remaining = deadline - self.clock()
            if remaining <= 0:
                late = asked[self.pending[asked]]
                self.timeouts += int(late.size)
                self.pending[late] = False
                answered = None
                if self._asked is not None:
                    answered = src.give_up(self._asked.subset(np.searchsorted(self._asked.fish, late)))
                if answered is not None:
                    got.append(answered)
                return got
            try:
                self._take(src.results.get(timeout=min(remaining, 0.05)), got)
                deadline = self.clock() + idle
            except queue.Empty:
                src.pump()

    def _take(self, batch: DecisionBatch, got: list[DecisionBatch]) -> None:
        """Keep an answer unless its fish has asked again since the request it answers.

        An answer that comes after the fallback answered its request (a lockstep tick gave up,
        or the request ran past ``brain.request_timeout_s``) is still used while its fish has
        not asked again — the model's plan replaces the fallback's; otherwise it is dropped and
        the source told (a completion wasted)."""
        stale = self.asked_at[batch.fish] > batch.tick
        late = int(np.count_nonzero(stale))
        if late:
            self.source.dropped_late(late, batch.subset(np.flatnonzero(stale)))
            batch = batch.subset(np.flatnonzero(~stale))
            if not len(batch) and not batch.summaries:
                return
        if not batch.provisional:
            self.pending[batch.fish] = False
            self.waiting[batch.fish] = False
        elif self._renews:
            open_ = self.pending[batch.fish]  # a provisional plan for a fish answered meanwhile: dropped
            if not open_.all():
                batch = batch.subset(np.flatnonzero(open_))
                if not len(batch):
                    return
            self.waiting[batch.fish] = True
        got.append(batch)

    def step(self) -> Frame:
        """Advance the world by one tick and return the frame observers saw."""
        w = self.world
        done = []
        for iv in self.source.interventions_at(w.tick):  # (a loop, not a comprehension: no call a tick)
            try:
                done.append(w.intervene(iv))
            except InterventionError as exc:  # which one was refused (a fork names where it was given)
                exc.intervention = iv
                raise
        if self._queued:
            for iv in self._queued:
                try:
                    done.append(w.intervene(iv))
                except InterventionError as exc:  # (raised before it changed anything)
                    self.refused.append(f"{iv.get('kind')}: {exc}")
            self._queued = []
        src = self.source
        src.begin_tick(w.tick)
        kind = type(src)
        if kind.pump is _INLINE_PUMP and kind.submit is _SUBMIT and src.needs_requests and src.requests.empty():
            applied = self._inline(src)  # type: ignore[arg-type]  # (an InlineSource's plumbing: no queues)
        else:
            applied = self._collect(self._request() if src.needs_requests else _NONE)
        now = self.clock()
        latencies: list[float] = []
        ended: list[np.ndarray] = []  # per batch: the trigger that ended each fish's plan (-1: none raised)
        food: list[np.ndarray | None] = []  # per batch with thoughts: the food each fish had in view
        for b in applied:
            food.append(w.food_in_view(b.fish) if b.thoughts else None)
            code = w.apply_plans(b.fish, b.goals, b.params, b.horizons, ended=True)  # (what ended each plan)
            assert code is not None
            ended.append(code)
            for fish, serial, text in b.summaries or ():
                w.write_summary(fish, serial, text)
            # one per decision; NaN for a request made before this engine (a fork's parent's): no latency here
            latencies.extend((now - self.queued_at[b.fish]).tolist())
        out = w.step()
        s = w.school
        x, y = w.water.xy(s.cell)
        frame = Frame(tick=out.tick, x=x, y=y, heading=s.heading.copy(), energy=s.energy.copy(),
                      stuck=s.stuck.copy(), neighbours=s.neighbours.copy(), executed=out.executed,
                      move_outcome=out.move_outcome, applied=applied, latencies=latencies,
                      interventions=done, present=~s.absent if np.count_nonzero(s.absent) else None,
                      ended=ended, food_in_view=food, native=True)
        if w.places is not None:
            frame.meals, frame.returns = w.places.meals.copy(), w.places.returns.copy()
        for obs in self.observers:
            obs(frame)
        return frame

    def run(self, ticks: int, on_tick: Callable[[Frame], None] | None = None) -> None:
        for _ in range(ticks):
            f = self.step()
            if on_tick:
                on_tick(f)

    def state_hash(self) -> str:
        return self.world.state_hash()

    def close(self) -> None:
        self.source.close()
