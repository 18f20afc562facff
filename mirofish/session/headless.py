"""A headless live run: ``python run.py live --headless`` and every sweep run of the aquarium.

``run_headless`` steps a :class:`LiveSession` for a number of ticks (keeping the simulated
clock in realtime mode), optionally recording, and returns — and prints — the summary JSON
object that ``summarize_run`` builds.
"""

from __future__ import annotations

import io
import json
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ..config import Config

if TYPE_CHECKING:
    from ..brains.exchanges import ReplyCache
    from ..observe.recording import Recorder
    from ..registry import Registry
    from .base import Session


class _Progress:
    """A one-line progress bar on stderr, redrawn at most 4 times a second."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self._last = total, enabled, 0.0
        self._start = time.perf_counter()

    def update(self, done: int) -> None:
        now = time.perf_counter()
        if not self.enabled or (now - self._last < 0.25 and done < self.total):
            return
        self._last = now
        frac = done / self.total
        rate = done / max(now - self._start, 1e-9)
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\r[{bar:<30}] {frac:6.1%}  tick {done}/{self.total}  {rate:,.0f} ticks/s")
        if done >= self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _recorder(path: str | None, engine: Session, overwrite: bool = False) -> Recorder | None:
    if path is None:
        return None
    from ..observe.recording import Recorder

    return Recorder(path, engine.cfg, overwrite=overwrite, registry=engine.registry).attach(engine)


class _WholeTicks:
    """Ctrl-C between ticks, never inside one: while ``engine.step()`` runs, a Ctrl-C is held
    until the tick ends — the world stepped, every observer (the recorder) given the frame — and
    then raised; so an interrupted run's summary (its ticks, its state hash) is the last tick
    recorded. Before, a Ctrl-C after the world stepped but before the recorder had the frame left
    a summary one tick past the recording. Two exceptions keep Ctrl-C prompt: a step waiting for
    a model's answers (nothing of the tick is done yet) is interrupted at once, as is any step at
    a second Ctrl-C. Installed only on the main thread, over a callable handler (the command
    line's, :func:`mirofish.catch_interrupts`), and put back after the run."""

    def __init__(self) -> None:
        import signal
        import threading

        from ..engine import Engine

        self.stepping, self.held = False, False
        self._prev: Any = None
        self._waiting = {Engine._collect.__code__}  # (waiting for the tick's decisions: nothing applied yet)
        if threading.current_thread() is threading.main_thread() and callable(signal.getsignal(signal.SIGINT)):
            self._prev = signal.signal(signal.SIGINT, self._on_sigint)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self.stepping and not self.held and not self._in_wait(frame):
            self.held = True  # raised when the step returns (:meth:`after_step`)
            return
        self._prev(signum, frame)

    def _in_wait(self, frame: Any) -> bool:
        while frame is not None:
            if frame.f_code in self._waiting:
                return True
            frame = frame.f_back
        return False

    def after_step(self) -> None:
        self.stepping = False
        if self.held:
            self.held = False
            import signal

            self._prev(signal.SIGINT, None)  # (the command line's handler: remembered, and raised)

    def close(self) -> None:
        if self._prev is not None:
            import signal

            signal.signal(signal.SIGINT, self._prev)
            self._prev = None


def run_headless(cfg: Config, ticks: int, ascii_every: int | None = None, progress: bool = False,
                 out: TextIO | None = None, record: str | None = None, overwrite: bool = False,
                 cache: ReplyCache | None = None, places_of: int | None = None,
                 registry: Registry | None = None) -> dict[str, Any]:
    """Run ``ticks`` ticks and return (and print) the summary JSON (``places_of``: a fish whose
    remembered places the ASCII view marks).

    Lockstep runs as fast as the brain answers; realtime runs keep the simulated clock
    (``world.tick_seconds / engine.speed`` per tick), as the window does, so a model
    brain is measured against the pace a person watching would see."""
    from ..observe import ascii as ascii_view
    from .live import LiveSession

    out = out if out is not None else sys.stdout  # looked up now: a caller may have replaced it

    engine = LiveSession(cfg, cache=cache, own_memory=True, registry=registry)
    groups = None
    if cfg.fish.groups:  # a mixed tank: figures per group too (observe/groups.py)
        from ..observe.groups import GroupFigures

        groups = GroupFigures(cfg)
        engine.observers.append(groups)
    recorder = _recorder(record, engine, overwrite)
    bar = _Progress(ticks, progress)
    interrupted = False
    start = time.perf_counter()
    per_tick = cfg.world.tick_seconds / cfg.engine.speed if engine.mode == "realtime" else 0.0
    done = 0
    whole = _WholeTicks()
    try:
        for done in range(1, ticks + 1):
            if per_tick:
                wait = start + (done - 1) * per_tick - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
            whole.stepping = True
            engine.step()
            whole.after_step()
            if ascii_every and done % ascii_every == 0:
                snap = engine.snapshot()
                p = engine.world.places
                marks = None if p is None or places_of is None else [
                    (j, int(p.x[places_of, j]), int(p.y[places_of, j])) for j in range(p.k)
                    if p.meals_at[places_of, j] > 0]
                print(ascii_view.render(snap, marks), file=out)
                print(ascii_view.status_line(snap), file=out, flush=True)
            if done % 64 == 0 or done == ticks:
                bar.update(done)
    except KeyboardInterrupt:
        interrupted = True
        done = engine.tick
    finally:
        whole.close()
    elapsed = time.perf_counter() - start
    if recorder is not None:
        recorder.close()
    summary = summarize_run(engine, done, elapsed)
    if groups is not None:
        summary["groups"] = groups.summary(engine.metrics.word_deed)
    held = engine.world.recall_part
    if cfg.memory.kind != "two_level" or hasattr(held, "inner"):  # the memory prompts were told, its failures
        summary["memory"] = {"kind": getattr(held, "name", cfg.memory.kind), "fallbacks": engine.world.memory_fallbacks,
                             "problems": list(getattr(held, "problems", []))}
        inner: Any = getattr(held, "inner", None)
        if int(getattr(inner, "embed_requests", 0)) or bool(getattr(inner, "server_given_up", False)):
            summary["memory"].update(embedding_requests=inner.embed_requests, embed_fallbacks=inner.embed_fallbacks,
                                     embedding_server_given_up=inner.server_given_up)
            by_kind = summary["brain"].get("requests_by_kind")
            if isinstance(by_kind, dict):  # the memory's own requests to the server, by kind beside the brain's
                summary["brain"]["requests_by_kind"] = dict(sorted({**by_kind,
                                                                    "embedding": inner.embed_requests}.items()))
        summary["memory"]["remember_failures"] = int(getattr(held, "remember_failures", 0))
        for line in getattr(held, "problems", [])[:1]:
            print(f"mirofish: warning: {line} (a decision it could not tell was told the two-level memory)",
                  file=sys.stderr)
    if interrupted:
        summary["interrupted"] = True
    if recorder is not None:
        summary["recording"] = str(recorder.path)
        if recorder.error:
            summary["recording_error"] = recorder.error
            print(f"mirofish: {recorder.error}", file=sys.stderr)
    print(json.dumps(summary), file=out, flush=True)
    engine.close()
    return summary


def summarize_run(engine: Session, ticks: int, elapsed: float) -> dict[str, Any]:
    """The headless run's closing JSON object."""
    w, m = engine.world, engine.metrics
    s = w.school
    drain = w.decay + int(round(0.8 * w.move_cost))  # per fish per tick, moving 80 % of ticks
    return {
        "ticks": ticks,
        "fish": s.n,
        "seed": w.seed,
        "ticks_per_sec": round(ticks / elapsed, 1) if elapsed > 0 else None,
        "final_state_hash": w.state_hash(),
        "mean_energy": round(w.mean_energy(), 2),
        "low_energy_fish": w.low_energy_count(),
        "max_stuck_ticks": int(s.max_stuck.max()),
        "decisions_by_tier": m.decisions_by_tier(),
        # the plans chosen over the run, by plan type (the run's table: its own types too)
        "plans_chosen": {name: int(c) for name, c in zip(engine.plans.names, engine.decisions().counts.sum(axis=0))
                         if c},
        "metrics": engine.metrics_summary(),
        "action_shares": {k: round(v, 4) for k, v in m.action_shares().items()},
        "rest_share_run": round(float(s.action_counts[:, w.rest_action].sum() / max(1, s.action_counts.sum())), 4),
        "food_items": int(w.water.food_cells().size),
        "carrying_capacity_fish": round(w.water.carrying_capacity(drain), 1),
        "brain_timeouts": engine.timeouts,
        # Same seed + config ⇒ same run only when every decision came in time in lockstep
        # (a recording replays exactly either way).
        "reproducible": engine.timeouts == 0 and (engine.mode == "lockstep" or w.cfg.brain.kind == "instinct"),
        "brain": _brain_status(engine, ticks),
        "word_and_deed": m.word_deed.summary(w.cfg.brain.kind),
        "mode": engine.mode,
        "tick_kernel": w.tick_kernel,
        "elapsed_s": round(elapsed, 3),
        **({"population": w.population.summary(w)} if w.population is not None else {}),
    }


def _brain_status(engine: Session, ticks: int) -> dict[str, Any]:
    status = engine.source.status()
    by_tier = engine.metrics.decisions_by_tier()
    made = sum(by_tier.values())  # one outcome a request (instinct plans swum while waiting are none)
    if engine.world.cfg.brain.kind == "llm" and made > 0:
        status["model_share"] = round((by_tier.get("small", 0) + by_tier.get("large", 0)) / made, 4)
    if "requests" in status and ticks:
        fish_ticks = ticks * engine.world.school.n
        # every request the servers received (decisions, summaries, the warm-up, questions, retries)
        # per fish-tick; the decision requests alone beside it
        status["requests_per_fish_tick"] = round(status.get("requests_sent", status["requests"]) / fish_ticks, 4)
        status["decision_requests_per_fish_tick"] = round(status["requests"] / fish_ticks, 4)
    cost = getattr(engine.source, "cost_per_sim_hour", None)
    if cost is not None:
        status["cost_per_sim_hour"] = round(cost(ticks * engine.world.cfg.world.tick_seconds), 6)
    return status




JOIN_RUNS = 16  # runs stepped as one world at most (a sweep's: sweep/runs.py)


def why_alone(cfg: Config) -> str | None:
    """Why a headless run of ``cfg`` steps alone (None: runs of its setting, seeds and live settings
    aside, may be joined,
    :func:`run_headless_joined`)."""
    from ..batch import why_not

    b = cfg.brain
    if b.kind != "instinct" or (b.decides != "plan" and b.chooser != "random"):
        return "its fish are not decided by the instinct planner or the random chooser"
    if cfg.engine.mode != "lockstep":
        return "it runs in realtime (kept to the simulated clock)"
    if cfg.memory.kind != "two_level":
        return f"its fish keep a memory of their own ({cfg.memory.kind})"
    return why_not(cfg, planned=True)


def run_headless_joined(cfgs: list[Config], ticks: int) -> list[dict[str, Any]] | None:
    """The summaries :func:`run_headless` gives for each of ``cfgs`` run ``ticks`` ticks (configs
    alike but their seeds and live settings: :func:`mirofish.batch.joined_setting`), the runs
    stepped as one world (mirofish/session/joined.py: one compiled
    call per stage and one planner call a tick for all; each run's metrics, decision history and
    summary its own, hash for hash). None when they cannot be joined (:func:`why_alone`): run each
    alone. Each summary's ``elapsed_s`` and ``ticks_per_sec`` are its share of the joined time."""
    from ..batch import Batch
    from ..brains.instinct import instinct_source
    from .joined import JoinedEngine, JoinedTank, draws_watched, keyed_brain, tanks_a_world
    from .live import LiveSession

    if not cfgs or any(why_alone(c) for c in cfgs) or ticks < 0:
        return None
    per = tanks_a_world(cfgs[0].fish.slots, len(cfgs))
    if per < 2:
        return None  # (tanks this large: each alone)
    if per < len(cfgs):  # too many fish for one world: a few worlds, one after another
        out: list[dict[str, Any]] = []
        for i in range(0, len(cfgs), per):
            part = cfgs[i:i + per]
            out += (run_headless_joined(part, ticks) if len(part) > 1 else None) or \
                [run_headless(c, ticks, out=io.StringIO()) for c in part]
        return out
    start = time.perf_counter()
    runs = [LiveSession(c, own_memory=True) for c in cfgs]
    try:
        planners = [b for b in (keyed_brain(r.engine.source) for r in runs) if b is not None]
        planner = keyed_brain(instinct_source(cfgs[0]))
        if len(planners) != len(runs) or planner is None or draws_watched(planner, runs[0].world):
            return None
        world0 = runs[0].world
        try:
            batch = Batch([r.world for r in runs], planned=True)
        except ValueError:
            return None
        n = world0.school.n
        keys = np.concatenate([p._keys[np.arange(n)] for p in planners])  # each run's own draws
        tanks = [JoinedTank(list(r.engine.observers)) for r in runs]
        engine = JoinedEngine(batch, planner, tanks, keys, observe_together=True)
        for _ in range(ticks):
            engine.step()
        engine.settle()
        elapsed = (time.perf_counter() - start) / len(runs)
        out = []
        for k, (run, tank) in enumerate(zip(runs, tanks)):
            batch.world(k)  # the run's own world, brought up to date
            planners[k].decisions += tank.decided
            out.append(summarize_run(run, ticks, elapsed))
        return out
    finally:
        for r in runs:
            r.close()
