"""A headless live run: ``python run.py live --headless`` and every sweep run of the aquarium.

``run_headless`` steps a :class:`LiveSession` for a number of ticks (keeping the simulated
clock in realtime mode), optionally recording, and returns — and prints — the summary JSON
object that ``summarize_run`` builds.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

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
    try:
        for done in range(1, ticks + 1):
            if per_tick:
                wait = start + (done - 1) * per_tick - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
            engine.step()
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


