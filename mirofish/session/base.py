"""What every session offers: one tank being stepped, and read-only views of it.

A session owns an :class:`~mirofish.engine.Engine` (world + decision source) and the
:class:`~mirofish.observe.metrics.Metrics` that observe it. Everything that shows or records
a tank — the window, the terminal view, the headless CLI, recorders — goes through a
session and reads :class:`~mirofish.snapshot.TankView` / :class:`~mirofish.snapshot.Snapshot`
objects; none of them touches the world. The three kinds (live, replay, fork) answer the
same small protocol:

* ``step()`` one tick (None when a replay is at its end), ``run(n)``, ``reset()``;
* ``seek(tick)`` where it applies (``can_seek``: replays);
* ``fork(fish, plan)`` → a :class:`~mirofish.session.fork.ForkSession` from the current tick;
* ``view()``, ``fish(i)``, ``snapshot()``, ``terrain()``, ``ghost_view()`` (a fork's parent);
* ``metrics_summary()``, ``brain_status()``, ``heat()``, ``state_hash()``, ``close()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..engine import Engine
from ..frame import Frame
from ..observe.metrics import Metrics
from ..registry import default as default_registry
from ..snapshot import FishSnapshot, Snapshot, TankView, fish_snapshot, take, take_terrain, tank_view
from .history import DecisionHistory
from .play import PlayError, PlaySource

if TYPE_CHECKING:
    import concurrent.futures

    from ..brains.base import DecisionSource, RequestBatch
    from ..fish.perception import Perception
    from ..fish.plans import PlanTable
    from ..registry import Registry
    from ..world import World
    from .fork import ForkSession


def observed(engine: Engine, metrics: Metrics | None = None) -> Metrics:
    """Attach ``metrics`` (a fresh one by default) to ``engine`` as its first observer."""
    w = engine.world
    m = metrics or Metrics(w.cfg.metrics, w.school.n, w.water.width, w.water.height, territory=w.places is not None,
                           tank=w.cfg, table=w.registry.metrics if w.registry is not None else None,
                           plans=w.plan_table)
    engine.observers.insert(0, m.observe)
    return m


def remembered(engine: Engine, history: DecisionHistory | None = None) -> DecisionHistory:
    """Attach ``history`` (a fresh one by default) to ``engine`` as its second observer."""
    h = history or DecisionHistory(engine.world.school.n, n_goals=engine.world.plan_table.n)
    engine.observers.insert(1, h.observe)
    return h


class Session:
    """The shared part of live, replay and fork sessions (see the module doc)."""

    kind = "session"
    can_seek = False  # a replay: seek(tick), first_tick, last_tick, curves(), markers()
    can_record = False  # a live tank: recordings, its kept past, tuning (LiveSession)
    engine: Engine
    metrics: Metrics
    history: DecisionHistory

    def decisions(self) -> DecisionHistory:
        """Each fish's last decision and plan counts as of the tick shown (never a later one)."""
        return self.history

    @property
    def cfg(self) -> Config:
        """The tank's config as built (settings tuned since are :meth:`tuned`)."""
        return self.engine.world.base_cfg

    @property
    def registry(self) -> Registry:
        """The run's plan types and metrics (mirofish/registry.py): what its world, prompt,
        recordings, forks and fork picker read."""
        return self.engine.world.registry or default_registry()

    @property
    def plans(self) -> PlanTable:
        """The run's plan table (its registry's): how its goal codes read and are worded."""
        return self.engine.world.plan_table

    def tuned(self) -> dict[str, float]:
        """Live settings changed since the tank was built (sliders, ``tune`` interventions)."""
        return self.engine.world.tuned()

    def intervene(self, iv: dict[str, Any]) -> None:
        """A hands-on change at the start of the next tick (see :mod:`mirofish.interventions`);
        recorded with that tick. Raises ``InterventionError`` naming what is wrong."""
        self.engine.intervene(iv)

    def take_refused(self) -> list[str]:
        """Interventions asked for that could not apply when their tick came (another made since
        took their room: ``Engine.refused``), one line each, each given once (the window says it)."""
        out = list(self.engine.refused)
        self.engine.refused.clear()
        return out

    # -- a person plays a fish (session/play.py)

    @property
    def player(self) -> PlaySource | None:
        """The person's controls while a fish is played (None: every fish has its brain)."""
        src = self.engine.source
        return src if isinstance(src, PlaySource) else None

    @property
    def can_play(self) -> bool:
        """A tank whose fish are asked (live, a fork); a replay plays back what was recorded."""
        src = self.engine.source
        return (src.inner if isinstance(src, PlaySource) else src).needs_requests

    def play(self, fish: int) -> PlaySource:
        """Take the controls of ``fish``: its brain is not asked until :meth:`stop_playing`; its
        decisions are the person's (:class:`~mirofish.session.play.PlaySource`), recorded as
        interventions. Raises :class:`~mirofish.session.play.PlayError` naming why not."""
        if not self.can_play:
            raise PlayError("a replay plays back what was recorded: fork it (F) or go back to the live tank "
                            "(N) to play a fish")
        school = self.engine.world.school
        if self.engine.world.grid.hex:  # (the arrow keys are the square tank's four moves)
            raise PlayError("playing a fish with the arrow keys needs a square tank; on this hexagonal one, fork "
                            "it with a plan (F)")
        if not 0 <= fish < school.n or school.absent[fish]:
            raise PlayError(f"fish {fish} is not in the water")
        if self.player is not None:
            if self.player.fish == fish:
                return self.player
            self.stop_playing()
        src = PlaySource(self.engine.source, fish, self.plans)
        self.engine.source = src
        self.engine.take_over(fish)
        return src

    def stop_playing(self) -> int | None:
        """Give the played fish back to its brain (it asks at the end of the tick's move); returns it."""
        src = self.player
        if src is None:
            return None
        self.engine.source = src.inner
        return src.fish

    @property
    def tick(self) -> int:
        """Ticks simulated so far (the state shown is the one after this many ticks)."""
        return self.engine.world.tick

    @property
    def world(self) -> World:
        """The world being stepped. For sessions and their tests only: views go through
        :meth:`view`, :meth:`fish` and :meth:`snapshot`."""
        return self.engine.world

    @property
    def source(self) -> DecisionSource:
        return self.engine.source

    @property
    def observers(self) -> list[Callable[[Frame], None]]:
        return self.engine.observers

    @property
    def mode(self) -> str:
        return self.engine.mode

    @property
    def timeouts(self) -> int:
        return self.engine.timeouts

    # -- stepping

    def step(self) -> Frame | None:
        return self.engine.step()

    def run(self, ticks: int, on_tick: Callable[[Frame], None] | None = None) -> None:
        for _ in range(ticks):
            frame = self.step()
            if frame is None:
                return
            if on_tick:
                on_tick(frame)

    def reset(self, seed: int | None = None) -> None:
        """Back to the session's start (a live tank: a fresh one, with ``seed`` if given)."""
        raise NotImplementedError

    def seek(self, tick: int) -> None:
        raise NotImplementedError(f"a {self.kind} session cannot seek")

    def fork(self, fish: int, plan: str, replan: bool = False) -> ForkSession:
        """``fish`` follows ``plan`` in a branch (it holds for its horizon; ``replan``: triggers
        may end it early, as for any fish)."""
        raise NotImplementedError(f"a {self.kind} session cannot be forked: record it, then fork the recording")

    # -- views

    def view(self) -> TankView:
        return tank_view(self.engine.world)

    def ghost_view(self) -> TankView | None:
        """The other tank drawn as rings (a fork's parent); None for others."""
        return None

    def fish(self, i: int) -> FishSnapshot:
        return fish_snapshot(self.engine.world, i)

    def terrain(self) -> list[str]:
        return take_terrain(self.engine.world)

    def terrain_key(self) -> tuple[int, int]:
        """Changes whenever :meth:`terrain` does (a rock placed or cleared, a seek across one)."""
        return id(self.engine.world.water), self.engine.world.water.terrain_version

    def snapshot(self) -> Snapshot:
        return take(self.engine.world, self.metrics_summary())

    def state_hash(self) -> str:
        return self.engine.world.state_hash()

    def state_arrays(self) -> dict[str, np.ndarray]:
        """The keyframe of the current state (recorders store these)."""
        return self.engine.world.state_arrays()

    def metrics_summary(self) -> dict[str, Any]:
        """The metrics summary with the brain's own alerts (budget, breakers, drift) merged in."""
        summary = self.metrics.summary()
        brain_alerts = getattr(self.engine.source, "alerts", None)
        if brain_alerts is not None:
            summary["alerts"] = summary["alerts"] + brain_alerts()
        return summary

    def brain_status(self) -> dict[str, Any]:
        return self.engine.source.status()

    def drift(self, fish: int) -> tuple[float, str] | None:
        """``fish``'s drift score — how much its newest long-term summary still sounds like its
        persona (1 = in character; :func:`~mirofish.fish.memory.drift_score`, the number
        ``report`` prints) — and who wrote that summary: ``"model"`` (the newest a model wrote,
        scored when it was written, or — a replay — now, from its kept text) or ``"template"``
        (the memory's template: no summary of a model's kept, the newest scored the same way).
        Who wrote each is the memory's own record (``LongMemory.written``, as ``report`` reads
        it): before, a replay said "template" of every summary, a model's too. None: no summary yet."""
        from ..fish.memory import drift_score

        scores = getattr(self.engine.source, "drift", None)
        if isinstance(scores, dict) and scores.get(fish) is not None:
            return float(scores[fish]), "model"
        w = self.engine.world
        kept = w.summaries(fish) if fish < w.school.n else []
        if not kept:
            return None
        memory = getattr(w.school, "long_memory", None)
        own = [text for text, by in zip(kept, memory.written(fish) if memory is not None else []) if by]
        if own:
            return drift_score(own[-1], w.school.persona[fish]), "model"
        return drift_score(kept[-1], w.school.persona[fish]), "template"

    def request_for(self, fish: int) -> RequestBatch:
        """A decision request for ``fish`` as the engine would make it now (for explanations)."""
        from ..brains.base import RequestBatch

        w, s = self.engine.world, self.engine.world.school
        i = np.array([fish])
        return RequestBatch(tick=w.tick, fish=i, triggers=w.triggers()[i], codes=w.view_codes(i),
                            energy=s.energy[i], max_energy=w.max_energy, heading=s.heading[i], traits=s.traits[i],
                            food_here=w.water.food_born[s.cell[i]] >= 0,
                            refused=w.recently_refused(i, w.cfg.triggers.hard_timeout), plans=w.plan_table,
                            **w.request_extras(i)._asdict())

    def explain(self, fish: int) -> list[str]:
        """Why ``fish`` does what it does: the embedded planner's reasons, with their numbers
        (for any brain: what the instinct would weigh in the fish's place now)."""
        from ..brains.instinct import InstinctPlanner, instinct_source

        planner = instinct_source(self.cfg)
        snap = self.fish(fish)
        if not isinstance(planner, InstinctPlanner):
            return [f"plan now: {snap.plan}", "(the action brain has no plans to explain)"]
        # the plan it swims was chosen then; the numbers below are the choice it would make now —
        # said apart, so that they do not read as the reasons for the plan on screen
        when = f"chosen at t{snap.last_decision_tick}" if snap.last_decision_tick >= 0 else "its starting plan"
        head = [f"plan now: {snap.plan} ({when}); asked now, the instinct would weigh:"]
        return head + [f"  {line}" if ": utility" in line else line for line in planner.explain(self.request_for(fish))]

    def ask(self, fish: int, question: str) -> concurrent.futures.Future[dict[str, Any]] | None:
        """Ask the fish's model (a model brain only) with the context it has at the tick shown —
        live, in a fork or in a replay (the server given with ``replay --base-url``, never the
        one the recording names: :mod:`~.trust`): a Future of ``{"text",
        "error"}``; None when the brain is not a model. Never blocks."""
        source: Any = self.engine.source
        part_of = getattr(source, "source_of", None)  # a mixed tank: the fish's group's source answers
        if part_of is not None:
            source = part_of(fish)
            if source is None or getattr(source, "ask", None) is None:
                return None  # (its group's brain is no model)
        ask = getattr(source, "ask", None)
        if ask is None and self.cfg.brain.kind == "llm":  # a replay: the server the user gave, asked now
            from .reask import interview

            def ask(perception: Perception, persona: str, plan: str,
                    question: str) -> concurrent.futures.Future[dict[str, Any]]:
                return interview(self.cfg, perception, persona, plan, question, choice=getattr(self, "choice", None))
        if ask is None:
            return None
        w, s = self.engine.world, self.engine.world.school
        snap = self.fish(fish)
        answer: concurrent.futures.Future[dict[str, Any]] | None  # what the source's (or the replay's) ask returns
        answer = ask(w.perceive(fish), s.persona[fish], snap.plan, question)
        return answer

    def heat(self) -> np.ndarray | None:
        """Stuck events per hotspot cell (the heat map)."""
        return self.metrics.heat

    def close(self) -> None:
        self.engine.close()
