"""Replay: a recording played back through the engine, seekable to any tick, and forked.

A replay is *just another decision source* (OpenRA's ReplayConnection): :class:`ReplaySource`
hands the engine, at the start of each tick, exactly the decisions the recording says were
applied at that tick; no brain is called. Seeking restores the nearest keyframe at or before
the target and re-simulates from there, so every tick's state equals the live run's.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..actions import Action
from ..brains.base import TIER_INDEX, DecisionBatch, DecisionSource
from ..brains.exchanges import ReplyCache
from ..config import Config
from ..engine import Engine
from ..frame import Frame
from ..observe.paths import OutputError, check_output
from ..observe.recording import SAMPLE_COLUMNS, TICK_COLUMNS, Recorder, Recording, RecordingError
from ..observe.recording_columns import run_plans
from ..registry import Registry
from ..registry import default as default_registry
from ..world import World
from .base import Session, observed, remembered
from .fork import ForkSession, fork_source, plan_of
from .trust import ReaderChoice

if TYPE_CHECKING:
    from ..snapshot import Snapshot

_MOVED = 1 + TICK_COLUMNS.index("moved")  # columns of Recording.tick_rows (tick first)
_LOW = 1 + TICK_COLUMNS.index("low_energy_fish")


class ReplayDiverged(RecordingError):
    """A re-simulation that does not give what the recording says (another tick kernel, a
    file altered and re-sealed, a bug): the message names the tick and what differs."""


def run_registry(rec: Recording) -> Registry | None:
    """The registry a recording is re-simulated with: the reading run's (None: the process's),
    with the file's own plan types added where the reader lacks them (kept in its header as data:
    a plug-in's that is not installed here, a run's own)."""
    if rec.plans is run_plans(rec.registry):
        return rec.registry
    return Registry(rec.plans, (rec.registry or default_registry()).metrics)


def replay_check(rec: Recording, world: Callable[[], World]) -> Callable[[Frame], None]:
    """An engine observer that compares each re-simulated tick with the recording: the actions
    every fish executed (kept for every tick) and the state hash (kept every
    ``record.hash_every`` ticks); raises :class:`ReplayDiverged` at the first difference."""

    def check(frame: Frame) -> None:
        want = rec.executed_at(frame.tick)
        if want is not None and want.shape == frame.executed.shape:
            differ = np.flatnonzero(want != frame.executed)
            if differ.size:
                fish = ", ".join(map(str, differ[:5].tolist())) + (" …" if differ.size > 5 else "")
                raise ReplayDiverged(_diverged(rec, world(), frame.tick, f"fish {fish} did otherwise than recorded"))
        kept = rec.hash_after(frame.tick + 1)
        if kept is not None and kept != world().state_hash():
            raise ReplayDiverged(_diverged(rec, world(), frame.tick, "the state after it is not the recorded one"))

    return check


def _diverged(rec: Recording, world: World, tick: int, what: str) -> str:
    made, now = rec.header.get("tick_kernel"), world.tick_kernel
    kernels = f"; recorded with the {made} tick, replayed with the {now} one" if made and made != now else ""
    return f"replay diverges from the recording at tick {tick} ({what}{kernels}): {rec.path}"


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
        calls = None
        if d.calls:  # with the shared texts they reference (a re-recording stores them too)
            shared = self.recording.texts()
            calls = [{**c, "_texts": {h: shared[h] for h in (c.get("prefix"), c.get("schema")) if h in shared}}
                     for c in d.calls]
        return DecisionBatch(tick=tick, fish=d.fish, actions=None, goals=d.goal, params=d.param,
                             horizons=d.horizon, tier=tier, status=d.status,
                             tokens=d.tokens, thoughts=thoughts, summaries=d.summaries or None,
                             meta={"latency_s": d.latency_s}, calls=calls)

    def interventions_at(self, tick: int) -> list[dict[str, Any]]:
        return self.recording.interventions_at(tick)

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

    def status(self) -> dict[str, Any]:
        return {"source": "replay"}


class ReplaySession(Session):
    """Seekable playback of a recording.

    ``seek(t)`` puts the world in the state it had after ``t`` ticks (``tick == t``), from the
    nearest keyframe; ``step``/``back`` move one tick; ``snapshot()`` carries the metrics
    recorded for that tick.
    """

    kind = "replay"
    can_seek = True
    choice: ReaderChoice | None = None  # the brain and server the user gave for its forks and questions (trust.py)

    def __init__(self, recording: Recording | str | Path):
        self._owns_recording = not isinstance(recording, Recording)  # opened here: closed here
        self.recording = recording if isinstance(recording, Recording) else Recording(recording)
        self.source_ = ReplaySource(self.recording)
        self._restore(self.recording.first_tick)

    @property
    def cfg(self) -> Config:
        return self.recording.config

    @property
    def first_tick(self) -> int:
        return self.recording.first_tick

    @property
    def last_tick(self) -> int:
        return self.recording.last_tick

    def _keyframe_world(self, keyframe_tick: int) -> World:
        """A world in the state the keyframe at ``keyframe_tick`` keeps (a damaged one: one line)."""
        world = World(self.cfg, registry=run_registry(self.recording))
        try:
            world.load_state_arrays(self.recording.keyframe(keyframe_tick))
        except (KeyError, ValueError, IndexError) as exc:
            raise RecordingError(f"recording is damaged (keyframe {keyframe_tick}: {exc})") from None
        return world

    def _restore(self, keyframe_tick: int) -> None:
        world = self._keyframe_world(keyframe_tick)
        engine: Engine | None = getattr(self, "engine", None)
        observers = engine.observers[2:] if engine is not None else []  # keep a recorder's (and the check)
        self.engine = Engine(world, self.source_, mode="lockstep")
        self.metrics = observed(self.engine)
        self.history = remembered(self.engine)
        self.engine.observers.extend(observers or [replay_check(self.recording, lambda: self.engine.world)])

    def seek(self, tick: int) -> None:
        """Go to the state after ``tick`` ticks (clamped to the recording's range)."""
        tick = int(min(max(tick, self.first_tick), self.last_tick))
        k = self.recording.keyframe_at_or_before(tick)
        if not k <= self.tick <= tick:
            self._restore(k)
        self.recording.load_chunks(self.tick, tick)
        while self.tick < tick:
            self.engine.step()
        last, counts = self.decisions_before(tick)
        self.history.last, self.history.counts = last, counts

    def verify(self, tick: int) -> int:
        """``replay --verify``: every keyframe a seek to a tick up to ``tick`` could start from
        read and loaded into a world (a damaged one is a :class:`RecordingError` naming it, as the
        seek would say; checked first, so a damaged file fails at once), then every tick from the
        first to ``tick`` re-simulated and checked against the recording (the actions executed,
        the state hashes kept); the keyframes read. (Before, only the first keyframe was read: a
        recording with no checksum — a killed run's — passed with a damaged keyframe that
        ``--to-tick`` refused.) A keyframe's state is not compared with the re-simulated one: an
        older format's keyframes hold less than its hash covers."""
        ticks = [k for k in self.recording.keyframe_ticks if self.first_tick < k <= tick]
        for k in ticks:
            self._keyframe_world(k)
        self.seek(self.first_tick)
        self.recording.load_chunks(self.tick, tick)
        while self.tick < tick:
            self.engine.step()
        return len(ticks) + 1

    def reset(self, seed: int | None = None) -> None:
        """Back to the recording's first tick (a recording has its own seed)."""
        self.seek(self.first_tick)

    def step(self) -> Frame | None:
        """One tick forward (None at the end of the recording)."""
        if self.tick >= self.last_tick:
            return None
        return self.engine.step()

    def back(self) -> None:
        self.seek(self.tick - 1)

    def fork(self, fish: int, plan: str, replan: bool = False) -> ForkSession:
        """Swap ``fish``'s decision at the current tick (the last tick can't be forked: it has no
        recorded decisions after it) and run the branch live beside the recording."""
        return fork_recording(self.recording, min(self.tick, self.last_tick - 1), fish, plan, replan=replan,
                              choice=self.choice)

    def decisions_before(self, tick: int | None = None) -> tuple[dict[int, dict[str, Any]], np.ndarray]:
        """What the recording says was decided before ``tick`` (default: the tick shown): each
        fish's last decision (``tick``, ``goal``, ``param``, ``horizon``, ``tier``, ``status``,
        ``thought``, ``call``) and the plans per fish by goal — the window's history as of a tick,
        whatever it drew before (a seek back never shows a later decision)."""
        t1 = self.tick if tick is None else tick
        rec = self.recording
        start, counts, last_tick = self._history_checkpoint(t1)
        for tick0, d, _ in rec.chunks(start, t1):
            ticks = tick0 + d["dt"].astype(np.int64)
            keep = (ticks >= start) & (ticks < t1)
            fish, goals = d["fish"][keep].astype(np.int64), d["goal"][keep].astype(np.int64)
            np.add.at(counts, (fish, np.minimum(goals, self.recording.plans.n - 1)), 1)
            np.maximum.at(last_tick, fish, ticks[keep])
        last: dict[int, dict[str, Any]] = {}
        for t in sorted(set(last_tick[last_tick >= 0].tolist())):
            d = rec.decisions_at(t)
            if d is None:
                continue
            calls = {c["fish"]: c for c in d.calls or () if c.get("kind") == "decision"}
            shared = rec.texts() if calls else {}
            for k, f in enumerate(d.fish.tolist()):
                if last_tick[f] == t:
                    call = calls.get(f)
                    if call is not None:
                        call = {**call, "_texts": {h: shared[h] for h in (call.get("prefix"), call.get("schema"))
                                                   if h in shared}}
                    last[f] = {"tick": t, "goal": int(d.goal[k]), "param": int(d.param[k]),
                               "horizon": int(d.horizon[k]), "tier": int(d.tier[k]), "status": int(d.status[k]),
                               "thought": d.thoughts.get(f, ""), "call": call, "ended": int(d.ended[k])}
        return last, counts

    _CHECKPOINT_TICKS = 2000

    def _history_checkpoint(self, tick: int) -> tuple[int, np.ndarray, np.ndarray]:
        """(start tick, plan counts, last decision tick per fish) of the whole recording before
        a multiple of ``_CHECKPOINT_TICKS`` at or below ``tick`` — built once, one pass, so that
        a seek (a timeline drag) scans at most that many ticks."""
        if getattr(self, "_checkpoints", None) is None:
            rec, n, every = self.recording, self.cfg.fish.slots, self._CHECKPOINT_TICKS
            counts, last = np.zeros((n, self.recording.plans.n), np.int64), np.full(n, -1, np.int64)
            marks: dict[int, tuple[np.ndarray, np.ndarray]] = {}
            next_mark = (rec.first_tick // every + 1) * every
            for tick0, d, _ in rec.chunks(rec.first_tick, rec.last_tick):
                ticks = tick0 + d["dt"].astype(np.int64)
                fish, goals = d["fish"].astype(np.int64), np.minimum(d["goal"], self.recording.plans.n - 1)
                while ticks.size and next_mark <= ticks.max():  # a mark inside this chunk's decisions
                    sel = ticks < next_mark
                    c, lt = counts.copy(), last.copy()
                    np.add.at(c, (fish[sel], goals[sel]), 1)
                    np.maximum.at(lt, fish[sel], ticks[sel])
                    marks[next_mark] = (c, lt)
                    next_mark += every
                np.add.at(counts, (fish, goals), 1)
                np.maximum.at(last, fish, ticks)
            self._checkpoints = marks
        best = max((b for b in self._checkpoints if b <= tick), default=None)
        if best is None:
            n_goals = self.recording.plans.n
            return self.recording.first_tick, np.zeros((self.cfg.fish.slots, n_goals), np.int64), \
                np.full(self.cfg.fish.slots, -1, np.int64)
        c, lt = self._checkpoints[best]
        return best, c.copy(), lt.copy()

    def recorded_metrics(self, tick: int | None = None) -> dict[str, Any]:
        """The measures recorded at ``tick`` (default: the last simulated tick) and the latest sample."""
        t = (self.tick - 1) if tick is None else tick
        out: dict[str, Any] = {}
        rows = self.recording.tick_rows(t, t + 1)
        if len(rows):
            out.update({k: float(v) for k, v in zip(TICK_COLUMNS, rows[0, 1:])})
        samples = self.recording.sample_rows(max(self.first_tick, t - 10 * self.cfg.metrics.sample_every), t + 1)
        if len(samples):
            out["sampled"] = {k: round(float(v), 4) for k, v in zip(SAMPLE_COLUMNS, samples[-1, 1:])}
        return out

    def metrics_summary(self) -> dict[str, Any]:
        """What the recording measured at this tick (flat, as the HUD reads it); no alerts."""
        rec = self.recorded_metrics()
        flat = dict(rec.get("sampled", {}))
        flat["schooling_degree"] = rec.get("schooling_degree", flat.get("schooling_degree", 0.0))
        return flat

    def snapshot(self) -> Snapshot:
        from ..snapshot import take

        return take(self.engine.world, self.recorded_metrics())

    def brain_status(self) -> dict[str, Any]:
        """Which brain made the recording."""
        kind = self.cfg.brain.kind
        if self.recording.header.get("decided_by"):  # not the config's brain (mirofish.env: a policy)
            return {"source": "replay", "brain": str(self.recording.header["decided_by"])}
        if kind == "instinct":
            return {"source": kind}
        if kind != "llm":  # a user brain, or a mixed tank
            return {"source": "replay", "brain": "groups" if self.cfg.fish.groups else kind.rpartition(":")[2]}
        eps = self.cfg.brain.small.endpoints or self.cfg.brain.large.endpoints
        return {"source": "replay", "model": eps[0].model if eps else ""}

    def curves(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The whole recording's measures as (ticks, values) per key: the per-tick ones
        (``TICK_COLUMNS``) and the sampled ones (``SAMPLE_COLUMNS``). Read once, then cached."""
        if getattr(self, "_curves", None) is None:
            rec = self.recording
            out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
            rows = rec.tick_rows(rec.first_tick, rec.last_tick)
            for k, name in enumerate(TICK_COLUMNS):
                out[name] = (rows[:, 0].astype(np.float64), rows[:, 1 + k].astype(np.float64))
            samples = rec.sample_rows(rec.first_tick, rec.last_tick)
            for k, name in enumerate(SAMPLE_COLUMNS):
                if name not in out:
                    out[name] = (samples[:, 0].astype(np.float64), samples[:, 1 + k].astype(np.float64))
            self._curves = out
        return self._curves

    def markers(self) -> list[tuple[int, str]]:
        """Timeline markers: ticks where nobody moved for the heartbeat span, ticks where the
        low-energy count crossed 10 % of the fish, and the fork point of a fork recording."""
        rec, cfg = self.recording, self.cfg
        out: list[tuple[int, str]] = []
        rows = rec.tick_rows(rec.first_tick, rec.last_tick)
        if len(rows):
            still = rows[:, _MOVED] == 0
            run = 0
            for t, s in zip(rows[:, 0].astype(int), still):
                run = run + 1 if s else 0
                if run == cfg.metrics.heartbeat_ticks:
                    out.append((int(t), "alert"))
            low = rows[:, _LOW] >= 0.1 * cfg.fish.count
            edges = np.flatnonzero(low[1:] & ~low[:-1])
            out += [(int(rows[i + 1, 0]), "alert") for i in edges[:50]]
        if "fork_tick" in rec.header:
            out.append((int(rec.header["fork_tick"]), "fork"))
        return out

    def close(self) -> None:
        if self._owns_recording:
            self.recording.close()


# ---------------------------------------------------------------- forks of a recording


def fork_plan(rec: Recording, tick: int, fish: int | None,
              action: Action | str | None) -> tuple[int, int, int] | None:
    """What :func:`fork_recording` checks before stepping anything — the tick, the fish, the
    plan's words — as a :class:`RecordingError` naming the first problem; the fork's plan (None:
    no swapped decision)."""
    if not rec.first_tick <= tick < rec.last_tick:
        raise RecordingError(f"--at {tick}: the recording holds ticks {rec.first_tick}..{rec.last_tick} "
                             f"(a fork starts at {rec.first_tick}..{rec.last_tick - 1}: a decision must follow it)")
    if fish is not None and not 0 <= fish < rec.config.fish.slots:
        raise RecordingError(f"--fish {fish} does not exist (this tank has fish 0..{rec.config.fish.slots - 1})")
    return plan_of(action, rec.plans) if action is not None else None


def fork_recording(recording: Recording | str | Path, tick: int, fish: int | None, action: Action | str | None,
                   out: str | Path | None = None, source: DecisionSource | None = None,
                   overwrite: bool = False, added: list[tuple[int, dict[str, Any]]] | None = None,
                   replan: bool = False, choice: ReaderChoice | None = None,
                   cache: ReplyCache | None = None, where: list[str] | None = None) -> ForkSession:
    """Fork a recording at ``tick``: ``fish`` does ``action`` (a plan such as ``"school 60"``,
    ``"explore east 30"``, ``"rest 10"`` — see :func:`mirofish.fish.plans.parse_plan` — or a
    single action, held one tick), and/or the ``added`` ``(tick, intervention)`` pairs happen
    (at ``tick`` or later; :mod:`mirofish.interventions` — the recording's own interventions
    happen in the fork too);
    with ``out`` the branch is written as its own recording naming its parent and fork point,
    with the divergence per tick. ``choice``: the brain, server and key variable the user gives
    for the branch's live brain (:mod:`~.trust`: never the recording's). ``where`` (beside
    ``added``): where each intervention was given, named by a refusal (:func:`check_added`)."""
    rec = recording if isinstance(recording, Recording) else Recording(recording)
    if out is not None:
        check_out(out, rec, overwrite)
    plan = fork_plan(rec, tick, fish, action)
    parent = ReplaySession(rec)
    parent.choice = choice  # the branch's brain again after a reset
    parent._owns_recording = not isinstance(recording, Recording)  # opened here: the fork closes it
    made = None
    try:
        parent.seek(tick)  # the recording is read and checked up to the fork before any brain or server
        first = ReplaySource(rec).batch_at(tick)
        if added:
            added = check_added(parent.world, tick, added, rec.interventions(), where)
        if source is None:
            source = made = fork_source(rec, tick, cache=cache, choice=choice)
        session = ForkSession(parent, fish, plan, first, source, "lockstep",
                              owns_parent=True, added=added, replan=replan)
        session.where = where
    except BaseException:
        if made is not None:  # no model pool left running (no "Task was destroyed")
            made.close()
        parent.close()
        raise
    if out is not None:
        session.recorder = Recorder(out, rec.config, overwrite=overwrite, inputs=(rec.path,),
                                    registry=run_registry(rec), extra_header={
            "parent": str(rec.path), "fork_tick": tick, "fork_fish": fish, "fork_action": session.label,
            "fork_original_action": session.original, "fork_replan": replan,
            "fork_interventions": [[t, iv] for t, iv in session.added],
            **({"prompts": rec.header["prompts"]} if "prompts" in rec.header else {}),  # the words it was asked in
        }).attach(session, observe=False)  # fed by step(), with the divergence row
    return session


def check_added(world: World, tick: int, added: list[tuple[int, dict[str, Any]]],
                recorded: dict[int, list[dict[str, Any]]], where: list[str] | None = None
                ) -> list[tuple[int, dict[str, Any]]]:
    """A fork's ``added`` ``(tick, intervention)`` pairs checked against the tank at its fork
    ``tick`` (``world``; ``recorded``: the recording's own interventions by tick): a place inside
    it, a fish that is there, a room for each fish added at the fork tick, no fish taken out
    twice. A refusal is a :class:`RecordingError` naming the intervention's ``where`` (``FILE
    line 3``, ``--drop-food 500,5``; beside ``added``) when given — before, "500,5 is outside the
    tank" named neither the file nor the line. (A refused fork leaves no file: its tick's own adds
    are given rooms before it records, and a fish taken out twice — nothing done the second time —
    is refused, not reported as done.)"""
    from ..interventions import InterventionError, check, check_removals, rooms_for

    def refused(k: int, exc: InterventionError) -> RecordingError:
        return RecordingError(f"{where[k]}: {exc}" if where is not None and k < len(where) else str(exc))

    checked = []
    for k, (t, iv) in enumerate(added):
        try:
            checked.append((t, check(iv, world, ahead=True)))
        except InterventionError as exc:
            raise refused(k, exc) from None
    for k in range(len(checked)):  # (each prefix: the first that fails is the one refused)
        try:
            if checked[k][0] == tick and checked[k][1]["kind"] == "add":
                rooms_for(world, [iv for t, iv in checked[: k + 1] if t == tick])
            if checked[k][1]["kind"] == "remove":
                check_removals(world, checked[: k + 1], recorded)
        except InterventionError as exc:
            raise refused(k, exc) from None
    return checked


def check_out(out: str | Path, rec: Recording, overwrite: bool) -> None:
    """Refuse an output onto the recording being read, or over a file, before any work."""
    try:
        check_output(out, (rec.path,), overwrite, "recording", scene="aquarium")
    except OutputError as exc:
        raise RecordingError(str(exc)) from None


def fork(recording: Recording | str | Path, tick: int, fish: int | None, action: Action | str | None, ticks: int,
         out: str | Path | None = None, source: DecisionSource | None = None, overwrite: bool = False,
         base_url: str | None = None, model: str | None = None, cache: ReplyCache | None = None,
         added: list[tuple[int, dict[str, Any]]] | None = None, replan: bool = False,
         choice: ReaderChoice | None = None, where: list[str] | None = None) -> dict[str, Any]:
    """Swap ``fish``'s decision at ``tick`` (and/or apply the ``added`` interventions there) and
    run ``ticks`` ticks live (the swapped plan holds for its horizon; ``replan``: triggers may
    end it early, as for any fish); return a JSON-ready summary (for a model run with
    ``cache_hits``/``cache_misses``: see :func:`fork_source`)."""
    if choice is None:
        choice = ReaderChoice(base_url=base_url, model=model)
    session = fork_recording(recording, tick, fish, action, out, source, overwrite, added, replan=replan,
                             choice=choice, cache=cache, where=where)
    try:
        for _ in range(ticks):
            session.step()
    finally:
        session.close()
    return session.summary()
