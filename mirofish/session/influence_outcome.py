"""What ``influence`` measures and offers (mirofish/session/influence.py): the outcome a user names
(a metric, a fish's or a group's figure at a tick) and how it is read off a tank, and the
alternatives a fish was offered at a decision."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..actions import ACTION_NAMES
from ..brains.prompt import fitting_choices, legal_for_view
from ..engine import Engine
from ..fish.plans import DEFAULT, PARAM_WORDS, PlanTable
from ..frame import Frame
from ..observe.metrics import METRICS, Metrics, Sample, _value
from ..observe.recording import RecordingError
from ..world import World

ALIASES = {"largest_school": "school_size", "schooling": "schooling_degree"}
FISH_FIGURES = ("energy", "x", "y", "alive")
GROUP_FIGURES = ("mean_energy", "schooling")
NULL_FIRST, NULL_BATCH, NULL_STABLE = 100, 50, 0.05  # the null: first samples, batch, stability of its P95
BOOT = 2000  # bootstrap resamples of an interval
NOTE = ("pivotal: replacing this decision by the other plans the fish was offered moved the outcome more than "
        "replacing a decision drawn at random from the window does (the whole 95 % interval outside the null "
        "band). It does not say the decision was sufficient or the only cause, and an effect inside the band is "
        "not shown to be zero: it is as large as the world's own noise.")


class InfluenceError(RecordingError):
    """A request ``influence`` cannot run (one line; the CLI exits 2)."""


# ---------------------------------------------------------------- the outcome


@dataclass(frozen=True)
class Outcome:
    """What is measured: ``kind`` metric (a registry key), group (``groups.NAME.FIGURE``), fish
    (``fish.ID.FIGURE``) or user (``FILE.py:NAME`` / ``MODULE:NAME``: a function of a snapshot
    returning a number); at the state after tick ``t0`` — or the mean over the states after
    ``t0`` … ``t1`` inclusive."""

    spec: str
    kind: str
    key: str
    target: Any
    t0: int
    t1: int
    fn: Callable[[Any], float] | None = field(default=None, compare=False, repr=False)

    def lean(self, metrics: Metrics) -> Metrics:
        """``metrics`` set to do only what :meth:`reads` reads of them (:meth:`Metrics.keep_for`):
        a fork's metrics, whose outcome is all that is read of them. A user's function reads a
        snapshot holding every metric: its forks' metrics do everything."""
        if self.kind == "metric":
            metrics.keep_for(next(m for m in metrics.table if m.key == self.key))
        elif self.kind != "user":
            metrics.keep_for(None)  # (a fish's figure, a group's: the world's state and the tally's windows)
        return metrics

    def reads(self, world: World, metrics: Metrics, frame: Frame) -> float:
        """The outcome's figure now (``frame``: the last tick's; ``world.tick`` = its tick + 1)."""
        if self.kind == "metric":
            m = next(m for m in metrics.table if m.key == self.key)  # the run's metrics
            if m.kind == "window":
                return _value(m, metrics)
            if m.kind == "tick":
                return _value(m, frame)
            return _value(m, Sample(frame, metrics.moving(), metrics._prev_xy, metrics.territory, metrics.tank))
        s = world.school
        if self.kind == "fish":
            i = int(self.target)
            if self.key == "energy":
                return int(s.energy[i]) / 100
            if self.key == "alive":
                return float(not bool(s.absent[i]))
            x, y = world.water.xy(s.cell[i:i + 1])
            return float((x if self.key == "x" else y)[0])
        if self.kind == "group":
            mask = (np.asarray(world.cfg.fish.group_of()) == self.target) & ~s.absent
            if self.key == "schooling":
                return metrics.schooling_of(mask)
            return float(s.energy[mask].mean()) / 100 if mask.any() else 0.0
        from ..snapshot import take

        assert self.fn is not None
        try:
            value = self.fn(take(world, metrics.current()))
        except Exception as exc:  # noqa: BLE001 — the user's code: one line naming it, not a traceback
            raise InfluenceError(f"--outcome {self.spec}: the function raised {type(exc).__name__}: {exc}") from None
        try:
            out = float(value)
        except (TypeError, ValueError):
            raise InfluenceError(f"--outcome {self.spec}: the function returned {value!r}, not a number") from None
        if not math.isfinite(out):
            raise InfluenceError(f"--outcome {self.spec}: the function returned {out}, not a finite number")
        return out


def parse_outcome(spec: str, cfg: Any, first: int, last: int, metrics: tuple[Any, ...] | None = None) -> Outcome:
    """``METRIC@T`` or ``METRIC@T0:T1`` (a mean) for a recording of ticks ``first``..``last``
    (``metrics``: the run's table, default this module's); :class:`InfluenceError` naming what is
    wrong."""
    what, at, when = spec.rpartition("@")
    if not at or not what:
        raise InfluenceError(f"--outcome {spec!r}: write FIGURE@TICK or FIGURE@T0:T1 (e.g. largest_school@340)")
    try:
        lo, _, hi = when.partition(":")
        t0, t1 = int(lo), int(hi) if hi else int(lo)
    except ValueError:
        raise InfluenceError(f"--outcome {spec!r}: {when!r} is not a tick or T0:T1") from None
    if not first < t0 <= t1 <= last:
        raise InfluenceError(f"--outcome {spec!r}: ticks {t0}..{t1} are outside the recording's {first + 1}..{last}")
    key = ALIASES.get(what, what)
    table = METRICS if metrics is None else metrics
    known = {m.key for m in table}
    if key in known:
        if any(m.key == key and m.group == "territory" for m in table) and not cfg.fish.places:
            raise InfluenceError(f"--outcome {spec!r}: {key} is a figure of remembered places, and this tank's "
                                 "fish remember none (fish.places = 0)")
        return Outcome(spec, "metric", key, None, t0, t1)
    parts = what.split(".")
    if parts[0] == "fish" and len(parts) == 3:
        if not parts[1].isdigit() or not 0 <= int(parts[1]) < cfg.fish.slots:
            raise InfluenceError(f"--outcome {spec!r}: fish {parts[1]} does not exist (0..{cfg.fish.slots - 1})")
        if parts[2] not in FISH_FIGURES:
            raise InfluenceError(f"--outcome {spec!r}: a fish's figure is one of {', '.join(FISH_FIGURES)}")
        return Outcome(spec, "fish", parts[2], int(parts[1]), t0, t1)
    if parts[0] == "groups" and len(parts) == 3:
        names = list(cfg.fish.group_names()) if cfg.fish.groups else []
        if parts[1] not in names:
            raise InfluenceError(f"--outcome {spec!r}: no group {parts[1]!r} in this tank"
                                 + (f" (groups: {', '.join(names)})" if names else " (it has no groups)"))
        if parts[2] not in GROUP_FIGURES:
            raise InfluenceError(f"--outcome {spec!r}: a group's figure is one of {', '.join(GROUP_FIGURES)}")
        return Outcome(spec, "group", parts[2], names.index(parts[1]), t0, t1)
    if ":" in what:
        from ..brains.user import BrainError, load_object

        try:
            fn = load_object(what, "outcome")
        except BrainError as exc:
            raise InfluenceError(f"--outcome {spec!r}: {exc}") from None
        if not callable(fn):
            raise InfluenceError(f"--outcome {spec!r}: {what} is not a function")
        return Outcome(spec, "user", what, None, t0, t1, fn)
    raise InfluenceError(f"--outcome {spec!r}: {what!r} is not a metric ({', '.join(sorted(known | set(ALIASES)))}), "
                         "groups.NAME.FIGURE, fish.ID.FIGURE, or FILE.py:NAME / MODULE:NAME")


def measure(outcome: Outcome, engine: Engine, metrics: Metrics) -> float:
    """Run ``engine`` to the outcome's last tick and read it (the mean over its ticks)."""
    values: list[float] = []
    frame: Frame | None = None
    while engine.world.tick < outcome.t1:
        frame = engine.step()
        if engine.world.tick >= outcome.t0:
            values.append(outcome.reads(engine.world, metrics, frame))
    if frame is None:
        raise InfluenceError(f"--outcome {outcome.spec}: its tick is not after the fork")
    return float(np.mean(values))


# ---------------------------------------------------------------- alternatives


def offered(world: World, fish: int, decides: str) -> list[str]:
    """The plans ``fish`` was offered at the world's tick (what fits its view), as ``--plan``
    words with each type's default horizon (the fork picker's list; action mode: the legal
    actions)."""
    p = world.perceive(fish)
    if decides != "plan":
        return [a for a in ACTION_NAMES if legal_for_view(a, p.view, p.food_here, "grazing" in p.shown)]
    goals, ways = fitting_choices(p.view, p.places, world.plan_table, p.shown)
    out: list[str] = []
    for t in world.plan_table.types:
        if t.name not in goals or t.fits == "never":
            continue
        for entry in t.fork or (f"{t.name} 0 {{ticks}}",):
            if "{param}" in entry:
                words = ways if t.param == "direction" else PARAM_WORDS.get(t.param, ("",))
                out += [entry.format(param=w, ticks=t.ticks) for w in words]
            else:
                out.append(entry.format(ticks=t.ticks))
    return out


def plan_words(plan: tuple[int, int, int], plans: PlanTable = DEFAULT) -> str | None:
    """``plan`` (a goal code of ``plans``, the run's table) as ``--plan`` words that read back
    to it (None: it has none)."""
    goal, param, horizon = plan
    if not 0 <= goal < plans.n:
        return None
    t = plans.types[goal]
    kind = t.param
    if kind == "direction":
        words = f"{t.name} {plans.grid.move_names[param]} {horizon}"
    elif kind == "away":
        words = f"{t.name} {PARAM_WORDS['away'][param % len(PARAM_WORDS['away'])]} {horizon}"
    elif kind in ("energy", "place"):
        words = f"{t.name} {param} {horizon}"
    elif kind == "action":
        words = f"hold {plans.grid.action_names[param]} {horizon}"
    else:
        words = f"{t.name} {horizon}"
    try:
        return words if plans.parse_plan(words) == (goal, param, horizon) else None
    except ValueError:
        return None


def same_plan(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    """The same goal and parameter (horizons aside): not an alternative to each other."""
    return a[0] == b[0] and a[1] == b[1]


# ---------------------------------------------------------------- the forks
