"""Play a fish: a person takes the controls of one fish and joins the tank as one of its agents.

While a fish is played, its brain is not asked: every decision it needs comes from the person —
a move (the window's arrow keys: one cell that way each tick while the key is down, one cell
for a tap), a plan (the plan picker: held for its horizon, as a fork's is), or, when the person
has chosen nothing, one tick of rest while it waits. A new choice takes effect at the next tick,
whatever the fish was doing. The other fish keep their brains.

The decisions are the tank's like any other: they go through the engine as decisions of the
``intervention`` tier, with a thought that says the person chose them, so a recording keeps
them and replays them exactly (a fork of it re-simulates them in its parent; in the branch,
after the fork tick, the fish is its brain's again). :class:`PlaySource` wraps the session's
decision source while the fish is played (``Session.play`` / ``Session.stop_playing``); the
window's J, arrows, E and plan picker call it (docs/window.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actions import Action
from ..brains.base import DecisionBatch, DecisionSource, RequestBatch
from ..fish.plans import DEFAULT, G_HOLD, PlanTable

MOVES = (Action.MOVE_N, Action.MOVE_S, Action.MOVE_W, Action.MOVE_E, Action.EAT)
WAITING = "waiting for you (arrows move it, E eats, F picks a plan, J lets it go)"


class PlayError(ValueError):
    """A fish that cannot be played now (not in the water, a replay …), or a plan that does not parse."""


class PlaySource(DecisionSource):
    """The session's source, with fish ``fish``'s decisions taken from a person.

    ``steer(action)`` — a move (held until ``release``; a tap moves once); ``choose(plan)`` — a
    plan held for its horizon. Requests of the played fish are answered at once; the rest go to
    the wrapped source, which keeps its queues (the two share them)."""

    name = "play"

    def __init__(self, inner: DecisionSource, fish: int, plans: PlanTable = DEFAULT):
        super().__init__()
        self.inner, self.fish = inner, fish
        self.plans = plans  # the run's plan table: how a typed plan reads and is worded
        self.requests, self.results = inner.requests, inner.results
        self.wants_perceptions, self.writes_summaries = inner.wants_perceptions, inner.writes_summaries
        self.move: Action | None = None  # the move held down
        self._tap: Action | None = None  # a move pressed since the last tick (applied once even if let go)
        self.plan: tuple[int, int, int] | None = None  # the plan chosen (goal, param, horizon)
        self.until: int | None = None  # its last tick + 1, once applied
        self._fresh = True  # a choice to apply at the next tick, whether the fish asks or not
        self._answered = -1  # the tick the played fish was last answered
        self.decisions = 0  # decisions the person made for the fish

    # -- the person's side

    def steer(self, action: Action) -> None:
        if action not in MOVES:
            raise PlayError(f"a played fish moves or eats ({', '.join(a.name.lower() for a in MOVES)})")
        self.move = self._tap = action
        self.plan = self.until = None
        self._fresh = True

    def release(self, action: Action | None = None) -> None:
        """The move's key let go (``None``: any): the fish stops after the move already asked for."""
        if action is None or self.move == action:
            self.move = None

    def choose(self, plan: str | tuple[int, int, int]) -> tuple[int, int, int]:
        try:
            goal, param, horizon = self.plans.parse_plan(plan) if isinstance(plan, str) else plan
        except ValueError as exc:
            raise PlayError(f"plan: {exc}") from None
        self.plan, self.until = (goal, param, max(1, horizon)), None
        self.move = self._tap = None
        self._fresh = True
        return self.plan

    def doing(self) -> str:
        """What the person has the fish doing, in a line (the window's panel)."""
        if self.move is not None:
            return f"you steer it: {self.move.name.lower()}"
        if self.plan is not None:
            until = f" to t{self.until}" if self.until is not None else ""
            return f"your plan: {self.plans.describe(*self.plan[:2])}{until}"
        return WAITING

    # -- the engine's side

    def _decision(self, tick: int) -> DecisionBatch:
        if self._tap is not None or self.move is not None:
            act = self._tap if self._tap is not None else self.move
            assert act is not None
            goal, param, horizon = G_HOLD, int(act), 1
            thought = f"you chose: {act.name.lower()}"
        elif self.plan is not None and (self.until is None or tick < self.until):
            if self.until is None:
                self.until = tick + self.plan[2]
            goal, param, horizon = self.plan[0], self.plan[1], self.until - tick
            thought = f"you chose this plan, held to t{self.until}"
        else:
            self.plan = self.until = None
            goal, param, horizon = G_HOLD, int(Action.REST), 1
            thought = WAITING
        self._tap, self._fresh, self._answered = None, False, tick
        self.decisions += 1
        return DecisionBatch.one(tick, self.fish, goal, param, horizon, "intervention", f"played: {thought}")

    def begin_tick(self, tick: int) -> None:
        self.inner.begin_tick(tick)
        if self._fresh:
            self.results.put(self._decision(tick))

    def submit(self, batch: RequestBatch) -> None:
        mine = batch.fish == self.fish
        if mine.any():
            if self._answered != batch.tick:  # (answered already at the start of this tick)
                self.results.put(self._decision(batch.tick))
            if mine.all():
                return
            batch = batch.subset(np.flatnonzero(~mine))
        self.inner.submit(batch)

    def interventions_at(self, tick: int) -> list[dict[str, Any]]:
        return self.inner.interventions_at(tick)

    def pump(self) -> None:
        self.inner.pump()

    def status(self) -> dict[str, Any]:
        return {**self.inner.status(), "played": self.fish}

    def tick_wait(self) -> float | None:
        return self.inner.tick_wait()

    def progress(self) -> int:
        return self.inner.progress()

    def dropped_late(self, n: int, dropped: DecisionBatch | None = None) -> None:
        self.inner.dropped_late(n, dropped)

    def give_up(self, batch: RequestBatch) -> DecisionBatch | None:
        return self.inner.give_up(batch)

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        """Everything else is the wrapped source's — a model pool's ``ask``, ``alerts``, ``drift``,
        ``cost_per_sim_hour`` … — so the window's why?, alerts and drift work while a fish is played."""
        if name == "inner":  # (not set yet: no recursion while the object is being built)
            raise AttributeError(name)
        return getattr(self.inner, name)
