"""Playback, intervention replay (fork), export and single-fish tracing over recordings.

A replay is *just another decision source* (OpenRA's ReplayConnection): :class:`ReplaySource`
hands the engine, at the start of each tick, exactly the decisions the recording says were
applied at that tick; no brain is called. Seeking restores the nearest keyframe at or before
the target and re-simulates from there, so every tick's state equals the live run's.

A fork (:func:`fork`) restores the world at tick T, applies the recorded decisions of T with
one fish's action swapped, and from T+1 lets the configured live brain decide; the parent is
re-simulated alongside to record the per-tick divergence.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..actions import Action
from ..brains.base import TIER_INDEX, TIERS, DecisionBatch, DecisionSource
from ..config import Config
from ..engine import Engine, Frame
from ..fish.plans import Goal, describe, parse_plan
from ..pacing import Pacer, clamp_speed
from ..snapshot import Snapshot, take
from ..world import World
from .paths import OutputError, check_output
from .recording import SAMPLE_COLUMNS, TICK_COLUMNS, Recorder, Recording, RecordingError


class ReplaySource(DecisionSource):
    """Feeds the decisions a recording applied at each tick; ignores requests."""

    name = "replay"
    needs_requests = False

    def __init__(self, recording: Recording, keep_tiers: bool = True):
        super().__init__()
        self.recording = recording
        self.keep_tiers = keep_tiers

    def batch_at(self, tick: int) -> DecisionBatch | None:
        d = self.recording.decisions_at(tick)
        if d is None and tick < self.recording.last_tick:
            raise RecordingError(f"recording is damaged: no decisions stored for tick {tick} "
                                 f"({self.recording.path})")
        if d is None or (d.fish.size == 0 and not d.summaries):
            return None
        tier = d.tier if self.keep_tiers else np.full(d.fish.size, TIER_INDEX["replay"], np.int8)
        thoughts = [d.thoughts.get(int(f), "") for f in d.fish] if d.thoughts else None
        return DecisionBatch(tick=tick, fish=d.fish, actions=None, goals=d.goal, params=d.param,
                             horizons=d.horizon, tier=tier, status=d.status,
                             tokens=d.tokens, thoughts=thoughts, summaries=d.summaries or None,
                             meta={"latency_s": d.latency_s})

    def begin_tick(self, tick: int) -> None:
        batch = self.batch_at(tick)
        if batch is not None:
            self.results.put(batch)

    def pump(self) -> None:
        while True:  # requests are never needed; drop any that arrive
            try:
                self.requests.get_nowait()
            except queue.Empty:
                return


class Player:
    """Seekable playback of a recording.

    ``seek(t)`` puts the world in the state it had after ``t`` ticks (``world.tick == t``),
    from the nearest keyframe; ``step``/``back`` move one tick; ``snapshot()`` is the
    pydantic snapshot with the metrics recorded for that tick.
    """

    def __init__(self, recording: Recording | str | Path):
        self.recording = recording if isinstance(recording, Recording) else Recording(recording)
        self.cfg: Config = self.recording.config
        self.source = ReplaySource(self.recording)
        self.engine: Engine | None = None
        self.pacer = Pacer(self.cfg.world.tick_seconds)
        self.seek(self.recording.first_tick)

    @property
    def world(self) -> World:
        return self.engine.world

    @property
    def tick(self) -> int:
        return self.engine.world.tick

    @property
    def first_tick(self) -> int:
        return self.recording.first_tick

    @property
    def last_tick(self) -> int:
        return self.recording.last_tick

    def _restore(self, keyframe_tick: int) -> None:
        world = World(self.cfg)
        try:
            world.load_state_arrays(self.recording.keyframe(keyframe_tick))
        except (KeyError, ValueError, IndexError) as exc:
            raise RecordingError(f"recording is damaged (keyframe {keyframe_tick}: {exc})") from None
        self.engine = Engine(world, self.source, mode="lockstep")

    def seek(self, tick: int) -> None:
        """Go to the state after ``tick`` ticks (clamped to the recording's range)."""
        tick = int(min(max(tick, self.first_tick), self.last_tick))
        k = self.recording.keyframe_at_or_before(tick)
        if self.engine is None or not (k <= self.tick <= tick):
            self._restore(k)
        self.recording.load_chunks(self.tick, tick)
        while self.tick < tick:
            self.engine.step()

    def step(self) -> Frame | None:
        """One tick forward (None at the end of the recording)."""
        if self.tick >= self.last_tick:
            return None
        return self.engine.step()

    def back(self) -> None:
        self.seek(self.tick - 1)

    @property
    def speed(self) -> float:
        return self.pacer.speed

    def set_speed(self, speed: float) -> None:
        """Playback speed, ¼× … 64× of the recording's simulated time."""
        self.pacer.speed = clamp_speed(speed)

    def advance(self, now: float, max_ticks: int = 256) -> int:
        """Play: step the ticks due since the last call at the current speed; returns how many."""
        done = 0
        for _ in range(self.pacer.due(now, max_ticks)):
            if self.step() is None:
                break
            done += 1
        return done

    def state_hash(self) -> str:
        return self.engine.state_hash()

    def recorded_metrics(self, tick: int | None = None) -> dict:
        """The measures recorded at ``tick`` (default: the last simulated tick) and the latest sample."""
        t = (self.tick - 1) if tick is None else tick
        out: dict = {}
        rows = self.recording.tick_rows(t, t + 1)
        if len(rows):
            out.update({k: float(v) for k, v in zip(TICK_COLUMNS, rows[0, 1:])})
        samples = self.recording.sample_rows(max(self.first_tick, t - 10 * self.cfg.metrics.sample_every), t + 1)
        if len(samples):
            out["sampled"] = {k: round(float(v), 4) for k, v in zip(SAMPLE_COLUMNS, samples[-1, 1:])}
        return out

    def snapshot(self) -> Snapshot:
        return take(self.world, self.recorded_metrics())

    def close(self) -> None:
        self.recording.close()


# ---------------------------------------------------------------- fork


class ForkSource(DecisionSource):
    """At the fork tick: the recorded decisions with one swapped; afterwards a live brain."""

    name = "fork"

    def __init__(self, live: DecisionSource, tick: int, first: DecisionBatch):
        super().__init__()
        self.live, self.tick, self.first = live, tick, first
        self.requests, self.results = live.requests, live.results  # share the live brain's queues
        self.wants_perceptions = live.wants_perceptions

    def begin_tick(self, tick: int) -> None:
        if tick == self.tick:
            self.results.put(self.first)
        else:
            self.live.begin_tick(tick)

    def submit(self, batch) -> None:
        if batch.tick == self.tick:  # already answered by the intervention batch where it can be
            keep = ~np.isin(batch.fish, self.first.fish)
            if not keep.any():
                return
            batch = batch.subset(np.flatnonzero(keep))
        self.live.submit(batch)

    def pump(self) -> None:
        self.live.pump()

    def status(self) -> dict:
        return {"source": "fork", "live": self.live.status()}

    def close(self) -> None:
        self.live.close()


@dataclass
class Divergence:
    """Per-tick difference between a fork and its parent, computed the same way on both sides."""

    window: int
    rows: list[np.ndarray] = field(default_factory=list)

    def __post_init__(self):
        self._nb: dict[str, list[np.ndarray]] = {"fork": [], "parent": []}

    def _schooling(self, side: str, neighbours: np.ndarray) -> float:
        ring = self._nb[side]
        ring.append(neighbours.astype(np.int64))
        if len(ring) > self.window:
            ring.pop(0)
        mean = np.sum(ring, axis=0) / len(ring)
        return float(np.count_nonzero(mean > 1.0) / len(mean))

    def add(self, fork: World, parent: World) -> np.ndarray:
        cells = int(np.count_nonzero(fork.school.cell != parent.school.cell))
        school = self._schooling("fork", fork.school.neighbours) - self._schooling("parent", parent.school.neighbours)
        energy = float(fork.school.energy.mean() - parent.school.energy.mean()) / 100
        row = np.array([cells, school, energy])
        self.rows.append(row)
        return row


def make_live_source(cfg: Config) -> DecisionSource:
    """The brain the recording's config names (instinct, or the model pool)."""
    from ..engine import make_source

    return make_source(cfg, "lockstep")


class ForkSession:
    """An intervention, tick by tick: the branch runs live, the parent is re-simulated beside it.

    Args:
        recording: the parent recording.
        tick: the tick whose decision is swapped.
        fish, action: who does what instead: a plan (``"school 60"``, ``"explore east 30"``,
            ``"rest 10"``, see :func:`mirofish.fish.plans.parse_plan`) or a single action
            (``"move_n"`` or an :class:`Action`: held for one tick, then the brain plans again).
        out: write the branch as its own recording (naming its parent and fork point).
        source: the live brain (default: the one the recording's config names).
    """

    def __init__(self, recording: Recording | str | Path, tick: int, fish: int, action: Action | str,
                 out: str | Path | None = None, source: DecisionSource | None = None, overwrite: bool = False):
        rec = recording if isinstance(recording, Recording) else Recording(recording)
        if out is not None:
            _check_out(out, rec, overwrite)
        cfg = rec.config
        if not rec.first_tick <= tick < rec.last_tick:
            raise RecordingError(f"--at {tick} is outside the recorded ticks {rec.first_tick}..{rec.last_tick - 1}")
        if not 0 <= fish < cfg.fish.count:
            raise RecordingError(f"--fish {fish} does not exist (this tank has fish 0..{cfg.fish.count - 1})")
        try:
            self.plan = parse_plan(action) if isinstance(action, str) else (int(Goal.HOLD), int(Action(action)), 1)
        except ValueError as exc:
            raise RecordingError(f"fork plan: {exc}") from None
        self.label = describe(*self.plan)
        self.recording, self.tick0, self.fish = rec, tick, fish
        self.parent = Player(rec)
        self.parent.seek(tick)
        world = World(cfg)
        world.load_state_arrays(self.parent.world.state_arrays())
        recorded = ReplaySource(rec).batch_at(tick)
        if recorded is None:
            recorded = DecisionBatch(tick=tick, fish=np.array([], np.int64), actions=np.array([], np.int8),
                                     tier=np.array([], np.int8))
        fish_ids = recorded.fish
        cols = [a.copy() for a in (recorded.goals, recorded.params, recorded.horizons, recorded.tier)]
        hit = np.flatnonzero(fish_ids == fish)
        self.original = describe(cols[0][hit[0]], cols[1][hit[0]], cols[2][hit[0]]) if hit.size else None
        new = (*self.plan, TIER_INDEX["intervention"])
        if hit.size:
            for col, v in zip(cols, new):
                col[hit[0]] = v
        else:
            order = np.searchsorted(fish_ids, fish)
            fish_ids = np.insert(fish_ids, order, fish)
            cols = [np.insert(col, order, np.array(v, col.dtype)) for col, v in zip(cols, new)]
        first = DecisionBatch(tick=tick, fish=fish_ids, actions=None, goals=cols[0], params=cols[1],
                              horizons=cols[2], tier=cols[3])
        self.engine = Engine(world, ForkSource(source or make_live_source(cfg), tick, first), mode="lockstep")
        self.recorder = None
        if out is not None:
            self.recorder = Recorder(out, cfg, overwrite=overwrite, inputs=(rec.path,), extra_header={
                "parent": str(rec.path), "fork_tick": tick, "fork_fish": fish, "fork_action": self.label,
                "fork_original_action": self.original,
            })
            self.recorder.keyframe(tick, world.state_arrays())
            self.recorder._engine = self.engine
        self.divergence = Divergence(cfg.metrics.schooling_window)
        self.curve: list[np.ndarray] = []  # [tick, cells, schooling, energy]
        self.first_diverged: int | None = None

    @property
    def world(self) -> World:
        return self.engine.world

    def step(self) -> Frame:
        frame = self.engine.step()
        row = None
        if self.parent.tick < self.parent.last_tick:
            self.parent.step()
            row = self.divergence.add(self.engine.world, self.parent.world)
            self.curve.append(np.concatenate([[frame.tick + 1], row]))
            if self.first_diverged is None and row[0] > 0:
                self.first_diverged = frame.tick
        if self.recorder is not None:
            self.recorder.on_frame(frame, row)
        return frame

    def summary(self) -> dict:
        rows = np.array(self.divergence.rows) if self.divergence.rows else np.zeros((0, 3))
        out = {
            "parent": str(self.recording.path), "fork_tick": self.tick0, "fish": self.fish,
            "action": self.label,
            "recorded_action": self.original,
            "ticks": self.engine.world.tick - self.tick0, "final_tick": self.engine.world.tick,
            "final_state_hash": self.engine.state_hash(),
            "parent_state_hash_at_same_tick": (self.parent.state_hash()
                                               if self.parent.tick == self.engine.world.tick else None),
            "divergence": {
                "compared_ticks": int(len(rows)),
                "first_tick_cells_differ": self.first_diverged,
                "cells_differ_final": int(rows[-1, 0]) if len(rows) else 0,
                "cells_differ_max": int(rows[:, 0].max()) if len(rows) else 0,
                "schooling_diff_final": round(float(rows[-1, 1]), 4) if len(rows) else 0.0,
                "energy_diff_final": round(float(rows[-1, 2]), 3) if len(rows) else 0.0,
            },
        }
        if self.recorder is not None:
            out["recording"] = str(self.recorder.path)
        return out

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()
        self.engine.close()


def fork(recording: Recording | str | Path, tick: int, fish: int, action: Action | str, ticks: int,
         out: str | Path | None = None, source: DecisionSource | None = None, overwrite: bool = False) -> dict:
    """Swap ``fish``'s decision at ``tick`` and run ``ticks`` ticks live; return a JSON-ready summary.

    With ``out``, the fork is written as its own recording naming its parent and fork point,
    with the divergence curve per tick.
    """
    session = ForkSession(recording, tick, fish, action, out, source, overwrite)
    try:
        for _ in range(ticks):
            session.step()
    finally:
        session.close()
    return session.summary()


# ---------------------------------------------------------------- export and trace


def _check_out(out: str | Path, rec: Recording, overwrite: bool) -> None:
    """Refuse an output onto the recording being read, or over a file, before any work."""
    try:
        check_output(out, (rec.path,), overwrite, "recording")
    except OutputError as exc:
        raise RecordingError(str(exc)) from None


def export_window(recording: Recording | str | Path, around: int, radius: int, out: str | Path,
                  overwrite: bool = False) -> dict:
    """Copy ticks ``[around - radius, around + radius)`` into a new, self-contained recording.

    The export starts with a keyframe at its first tick and re-records the same decisions;
    its windowed metrics are measured afresh from that tick.
    """
    rec = recording if isinstance(recording, Recording) else Recording(recording)
    _check_out(out, rec, overwrite)
    t0 = max(rec.first_tick, around - radius)
    t1 = min(rec.last_tick, around + radius)
    if t0 >= t1:
        raise RecordingError(f"--around {around} --radius {radius} selects no recorded tick "
                             f"({rec.first_tick}..{rec.last_tick - 1})")
    player = Player(rec)
    player.seek(t0)
    recorder = Recorder(out, rec.config, overwrite=overwrite, inputs=(rec.path,), extra_header={"parent": str(rec.path), "export_from": t0, "export_to": t1})
    recorder.attach(player.engine)
    while player.tick < t1:
        player.step()
    recorder.close()
    return {"recording": str(out), "parent": str(rec.path), "from_tick": t0, "to_tick": t1,
            "state_hash_at_end": player.state_hash()}


def trace_fish(recording: Recording | str | Path, fish: int, t0: int, t1: int) -> list[dict]:
    """Isolate one fish: its perception, recorded decision and what the brain decides now, per tick.

    The whole tank is re-simulated from the recording, so the fish's neighbours are exactly
    where they were (isolating a fish without its neighbours proves nothing).
    """
    from ..brains.base import RequestBatch

    rec = recording if isinstance(recording, Recording) else Recording(recording)
    if not 0 <= fish < rec.config.fish.count:
        raise RecordingError(f"--fish {fish} does not exist (this tank has fish 0..{rec.config.fish.count - 1})")
    player = Player(rec)
    player.seek(t0)
    brain = make_live_source(rec.config) if rec.config.brain.kind == "instinct" else None  # no model calls
    out = []
    while player.tick < min(t1, player.last_tick):
        w, s = player.world, player.world.school
        decided = rec.decisions_at(player.tick)
        hit = np.flatnonzero(decided.fish == fish) if decided is not None else np.zeros(0, int)
        row = {"tick": player.tick, "view": w.perceive(fish).view, "energy": int(s.energy[fish]) / 100}
        if hit.size:
            i = np.array([fish])
            req = RequestBatch(tick=w.tick, fish=i, triggers=w.triggers()[i], codes=w.view_codes(i),
                               energy=s.energy[i], max_energy=w.max_energy, heading=s.heading[i], traits=s.traits[i],
                               food_here=w.water.food_born[s.cell[i]] >= 0,
                               refused=w.recently_refused(i, w.cfg.triggers.hard_timeout))
            k = hit[0]
            row["decision"] = describe(int(decided.goal[k]), int(decided.param[k]), int(decided.horizon[k]))
            row["tier"] = TIERS[int(decided.tier[k])]
            row["thought"] = decided.thoughts.get(int(fish), "")
            if brain is not None:  # the embedded brain is asked again; a model is never re-asked
                again = brain.decide(req)
                now = describe(int(again.goals[0]), int(again.params[0]), int(again.horizons[0]))
                row["brain_now"] = now
                row["agrees"] = now == row["decision"]
        out.append(row)
        player.step()
        # the plan the fish swam during this tick (after any decision of the tick) and what it did
        row["plan"] = describe(int(s.plan_goal[fish]), int(s.plan_param[fish]))
        row["intent"] = Action(int(s.intent[fish])).label
    return out
