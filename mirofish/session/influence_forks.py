"""How ``influence`` runs its forks (mirofish/session/influence.py): a decision replaced (or
ablated) at its tick, each fork run to the outcome's tick from a kept copy of the recording's
tank at the window's start, in this process or in worker processes."""

from __future__ import annotations

import copy
import math
import queue
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..brains.base import TIER_INDEX, DecisionBatch, DecisionSource, RequestBatch
from ..brains.exchanges import ReplyCache
from ..brains.instinct import RandomChooser
from ..brains.sources import make_source
from ..engine import Engine
from ..observe.metrics import Metrics
from ..observe.recording import Recording
from ..registry import Registry
from ..world import World
from .base import observed
from .fork import ForkSource, fork_source, held_plan, inherited_hold, kept_decisions, swapped_batch
from .influence_outcome import measure, parse_outcome
from .replay import ReplaySession, ReplaySource, run_registry
from .trust import ReaderChoice


class Ablation:
    """What an ablation fork replaces in ticks [t0, t1): for ``fish``, every decision of that
    fish; for ``goal``, every choice of that plan type, by any fish — by the random chooser of
    replicate ``rep`` (seeded; a goal's replacement is never that goal where another fits).

    Its draws are each fish's own (the random chooser is keyed by seed, fish and tick), so a fork
    run alone (:class:`Ablate`) and a fork stepped with others of its tick
    (mirofish/session/joined.py) replace the same decisions with the same plans."""

    def __init__(self, cfg: Any, t0: int, t1: int, fish: int | None = None, goal: int | None = None, rep: int = 0):
        self.t0, self.t1, self.fish, self.goal = t0, t1, fish, goal
        seed = int(cfg.seed) * 7919 + 1_000_003 * (rep + 1)  # one stream per replicate, apart from the run's
        self.choosers = [RandomChooser(cfg.model_copy(update={"seed": seed + k}))
                         for k in range(6)]
        self.replaced = 0

    def inside(self, tick: int) -> bool:
        return self.t0 <= tick < self.t1

    def drawn(self, req: RequestBatch, avoid: int | None = None) -> DecisionBatch:
        """The random chooser's plans for ``req`` (avoiding the goal ``avoid`` where it can)."""
        self.replaced += len(req)
        out = self.choosers[0].decide(req)
        if avoid is not None:
            for chooser in self.choosers[1:]:
                again = np.flatnonzero(out.goals == avoid)
                if not again.size:
                    break
                other = chooser.decide(req.subset(again))
                keep = other.goals != avoid
                out.goals[again[keep]] = other.goals[keep]
                out.params[again[keep]] = other.params[keep]
                out.horizons[again[keep]] = other.horizons[keep]
        out.tier = np.full(len(out), TIER_INDEX["intervention"], np.int8)
        return out


class Ablate(DecisionSource):
    """A live brain whose decisions in an :class:`Ablation`'s ticks are replaced as it says."""

    def __init__(self, live: DecisionSource, ablation: Ablation):
        super().__init__()
        self.live, self.ablation = live, ablation
        self.fish, self.goal = ablation.fish, ablation.goal
        self.wants_perceptions, self.writes_summaries = live.wants_perceptions, live.writes_summaries
        self.asked: dict[int, RequestBatch] = {}

    def begin_tick(self, tick: int) -> None:
        self.live.begin_tick(tick)
        self.asked = {t: b for t, b in self.asked.items() if t >= tick - 1}

    def submit(self, batch: RequestBatch) -> None:
        if self.fish is not None and self.ablation.inside(batch.tick):
            mine = batch.fish == self.fish
            if mine.any():
                self.results.put(self.ablation.drawn(batch.subset(np.flatnonzero(mine))))
                if mine.all():
                    return
                batch = batch.subset(np.flatnonzero(~mine))
        if self.goal is not None:
            self.asked[batch.tick] = batch
        self.live.submit(batch)

    def pump(self) -> None:
        self.live.pump()
        while True:
            try:
                b = self.live.results.get_nowait()
            except queue.Empty:
                return
            if self.goal is not None and self.ablation.inside(b.tick) and b.goals is not None:
                hit = np.flatnonzero(b.goals == self.goal)
                req = self.asked.get(b.tick)
                if hit.size and req is not None:
                    idx = np.searchsorted(req.fish, b.fish[hit])
                    ok = (idx < len(req.fish)) & (req.fish[np.minimum(idx, len(req.fish) - 1)] == b.fish[hit])
                    if ok.any():
                        drawn = self.ablation.drawn(req.subset(idx[ok]), avoid=self.goal)
                        rows = hit[ok]
                        b.goals = b.goals.copy()
                        b.params, b.horizons, b.tier = b.params.copy(), b.horizons.copy(), b.tier.copy()
                        b.goals[rows], b.params[rows], b.horizons[rows] = drawn.goals, drawn.params, drawn.horizons
                        b.tier[rows] = TIER_INDEX["intervention"]
                        if b.thoughts:
                            b.thoughts = [("" if k in set(rows.tolist()) else t) for k, t in enumerate(b.thoughts)]
            self.results.put(b)

    def give_up(self, batch: RequestBatch) -> DecisionBatch | None:
        return self.live.give_up(batch)

    def dropped_late(self, n: int, dropped: DecisionBatch | None = None) -> None:
        self.live.dropped_late(n, dropped)

    def tick_wait(self) -> float | None:
        return self.live.tick_wait()

    def progress(self) -> int:
        return self.live.progress()

    def status(self) -> dict[str, Any]:
        return {**self.live.status(), "ablated": self.ablation.replaced}

    def close(self) -> None:
        self.live.close()


@dataclass
class Task:
    """One fork: at ``tick`` fish ``fish`` gets ``plan`` (``--plan`` words); or an ablation
    (``kind`` "ablate_fish" / "ablate_goal" with ``fish`` / ``goal`` and replicate ``rep``)."""

    kind: str
    tick: int
    fish: int = -1
    plan: str = ""
    goal: int = -1
    rep: int = 0


class Forker:
    """Runs forks of one recording in this process: the recording re-simulated to each fork tick
    (restored from the keyframe at or before it, as the ``fork`` command does, so the metrics'
    history at the fork is the command's), the branch started from that state."""

    def __init__(self, path: str | Path, outcome_spec: str, brain: str = "recorded",
                 choice: ReaderChoice | None = None, window: tuple[int, int] = (0, 0), max_requests: int = 0,
                 registry: Registry | None = None, join: int | None = None):
        from .influence_joined import MAX_TANKS

        # forks of one tick stepped as one world: at most this many (1: each alone; :meth:`run_many`)
        self.join = MAX_TANKS if join is None else max(1, join)
        self.rec = Recording(path, registry=registry)  # read by the run's registry (its plan types, metrics)
        self.cfg = self.rec.config
        self.outcome = parse_outcome(outcome_spec, self.cfg, self.rec.first_tick, self.rec.last_tick,
                                     self.rec.registry.metrics if self.rec.registry is not None else None)
        self.brain, self.choice, self.window = brain, choice or ReaderChoice(), window
        self.player = ReplaySession(self.rec)
        self._k: int | None = None
        self.cache: ReplyCache | None = None
        self.max_requests, self.requests_sent = max_requests, 0
        self.cache_hits = self.cache_misses = 0
        self._recorded: dict[int, tuple[float, str]] = {}
        self.warmed: dict[str, dict[str, Any]] = {}  # servers the forks' pools have met (ModelPool.learned)
        self.lean = True  # forks' metrics do only what the outcome reads (fork_metrics)

    def close(self) -> None:
        self.player.close()
        self.rec.close()

    def seek(self, tick: int) -> None:
        """The replay at ``tick``, its metrics begun at the keyframe at or before it."""
        k = self.rec.keyframe_at_or_before(tick)
        if self._k != k or self.player.tick > tick:
            self.player._restore(k)
            self._k = k
        self.rec.load_chunks(self.player.tick, tick)
        while self.player.tick < tick:
            self.player.engine.step()

    def _source(self, tick: int) -> DecisionSource:
        if self.brain == "instinct" or (self.cfg.brain.kind == "instinct" and not self.cfg.fish.groups):
            cfg = self.cfg if self.brain != "instinct" else self.cfg.model_copy(
                update={"brain": self.cfg.brain.model_copy(update={"kind": "instinct"}),
                        "fish": self.cfg.fish.model_copy(update={"groups": []})})
            return make_source(cfg, "lockstep")
        if self.cache is None:
            self.cache = ReplyCache()
        choice, left = self.choice, self.max_requests - self.requests_sent
        if left <= 0:
            choice = ReaderChoice(brains=choice.brains)  # no budget (left): no server, the recording's replies only
        return fork_source(self.rec, tick, cache=self.cache, choice=choice,
                           pool_options={"warmed": self.warmed, "request_budget": max(0, left)})

    def _tally(self, source: DecisionSource) -> None:
        learned = getattr(source, "learned", None)
        if learned is not None:  # the servers it met: the next forks' pools skip their warm-up
            self.warmed.update(learned())
        st = source.status()
        live = st.get("live", st)
        self.requests_sent += int(live.get("requests_sent") or 0)
        self.cache_hits += int(live.get("cache_hits") or 0)
        self.cache_misses += int(live.get("cache_misses") or 0)

    @property
    def swaps_brain(self) -> bool:
        """Do the forks' futures run on another brain than the recording's (``--brain instinct``
        on a model or user brain's run)? Then the baseline is a fork of its own (:meth:`recorded`)."""
        return self.brain == "instinct" and (self.cfg.brain.kind != "instinct" or bool(self.cfg.fish.groups))

    def recorded(self, tick: int) -> tuple[float, str]:
        """The outcome as recorded (the replay run on from ``tick``) and the final hash — or,
        when the futures run on another brain (:attr:`swaps_brain`), the outcome of a fork that
        keeps every decision of ``tick`` as recorded: the same brain after it as the swaps', so
        an effect is the decision's, not the brain's."""
        if self.swaps_brain:
            if tick not in self._recorded:
                got = self.run(Task("baseline", tick))
                self._recorded[tick] = (got["outcome"], got["final_hash"])
            return self._recorded[tick]
        k = self.rec.keyframe_at_or_before(tick)
        if k not in self._recorded:  # the same for every tick of a keyframe interval
            self.seek(tick)
            world = World(self.cfg, registry=run_registry(self.rec))
            world.load_state_arrays(self.player.state_arrays())
            engine = Engine(world, ReplaySource(self.rec), mode="lockstep")
            metrics = observed(engine, self.fork_metrics())
            self._recorded[k] = (measure(self.outcome, engine, metrics), world.state_hash())
        return self._recorded[k]

    def fork_metrics(self) -> Metrics:
        """A fork's metrics: the replay's at the fork tick, copied, doing only what the outcome
        reads of them (:meth:`Outcome.lean <mirofish.session.influence_outcome.Outcome.lean>`;
        :attr:`lean` False: everything, as in a run)."""
        metrics = copy.deepcopy(self.player.metrics)
        return self.outcome.lean(metrics) if self.lean else metrics

    def ablation(self, task: Task) -> Ablation:
        """What an ablation task replaces: from its tick to the window's end."""
        if task.kind == "ablate_fish":
            return Ablation(self.cfg, task.tick, self.window[1], fish=task.fish, rep=task.rep)
        return Ablation(self.cfg, task.tick, self.window[1], goal=task.goal, rep=task.rep)

    def run(self, task: Task) -> dict[str, Any]:
        """One fork: its outcome, final hash and what it cost."""
        self.seek(task.tick)
        world = World(self.cfg, registry=run_registry(self.rec))
        world.load_state_arrays(self.player.state_arrays())
        batch = kept_decisions(ReplaySource(self.rec).batch_at(task.tick), task.kind, task.fish, task.goal)
        live = self._source(task.tick)
        try:
            fish: int | None = None
            plan: tuple[int, int, int] | None = None
            source: DecisionSource = live
            if task.kind in ("alternative", "null", "keep"):
                fish, plan = task.fish, self.rec.plans.parse_plan(task.plan)
            elif task.kind == "baseline":  # every decision of the tick as recorded
                pass
            else:
                source = Ablate(live, self.ablation(task))
            plans = self.rec.plans
            first, _ = swapped_batch(batch, task.tick, fish, plan, plans)
            hold = held_plan(task.tick, fish, plan, False) or inherited_hold(self.rec.header, task.tick, unless=fish,
                                                                             plans=plans)
            fork = ForkSource(source, task.tick, first, self.rec.interventions_at, [], hold)
            engine = Engine(world, fork, mode="lockstep")
            metrics = observed(engine, self.fork_metrics())
            value = measure(self.outcome, engine, metrics)
        finally:
            self._tally(live)
            live.close()
        return {"outcome": value, "final_hash": world.state_hash()}

    def run_many(self, tasks: list[Task]) -> list[dict[str, Any]]:
        """Every task's result, in the tasks' order, each as :meth:`run` gives it: the forks of one
        tick stepped as one world where they can be (mirofish/session/influence_joined.py: up to
        :attr:`join` at once; what cannot, and a tick's lone fork, one by one)."""
        from .influence_joined import fits, joinable, run_joined
        from .joined import tanks_a_world

        out: list[dict[str, Any] | None] = [None] * len(tasks)
        most = tanks_a_world(self.cfg.fish.slots, self.join)
        join = most > 1 and joinable(self) is None
        may = [join and fits(self, t) for t in tasks]
        # by tick, those that may join first (each tick's forks are run from one seek: Forker.seek)
        order = sorted(range(len(tasks)), key=lambda i: (tasks[i].tick, not may[i], i))
        i = 0
        while i < len(order):
            j = i + 1
            if may[order[i]]:
                tick = tasks[order[i]].tick
                while j < len(order) and j - i < most and tasks[order[j]].tick == tick and may[order[j]]:
                    j += 1
            group = order[i:j]
            got = run_joined(self, [tasks[k] for k in group]) if len(group) > 1 else None
            for n, k in enumerate(group):
                out[k] = got[n] if got is not None else self.run(tasks[k])
            i = j
        return [r for r in out if r is not None]


# ---------------------------------------------------------------- running many


_WORKER: Forker | None = None  # a worker process's own forker (its recording opened once)


def _start_worker(path: str, spec: str, brain: str, choice: ReaderChoice | None, window: tuple[int, int],
                  max_requests: int, join: int) -> None:
    global _WORKER
    _WORKER = Forker(path, spec, brain, choice, window, max_requests, join=join)


def _work(tasks: list[Task]) -> dict[str, Any]:
    """A worker process's share of the forks (tasks sorted by tick), and what they cost."""
    f = _WORKER
    assert f is not None
    before = (f.requests_sent, f.cache_hits, f.cache_misses)
    out = f.run_many(tasks)
    return {"results": out, "requests_sent": f.requests_sent - before[0], "cache_hits": f.cache_hits - before[1],
            "cache_misses": f.cache_misses - before[2]}


class Runner:
    """Runs tasks in this process, or split by tick among ``workers`` processes that live as long
    as the runner (each opens the recording once; a model run's budget of requests is shared out)."""

    def __init__(self, forker: Forker, workers: int, path: str, spec: str):
        # a registry of the caller's own (rows added for one run) lives in this process only: its
        # forks run here (a spawned worker builds the default registry, and a row's code is not sent)
        if forker.rec.registry is not None and not forker.rec.registry.process_default:
            workers = 1
        self.forker, self.workers, self.pool = forker, workers, None
        if workers > 1:
            import concurrent.futures
            import multiprocessing

            share = math.ceil(forker.max_requests / workers) if forker.max_requests else 0
            self.pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("spawn"),  # no model pool's threads
                initializer=_start_worker,
                initargs=(path, spec, forker.brain, forker.choice, forker.window, share, forker.join))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def run(self, tasks: list[Task]) -> list[dict[str, Any]]:
        """Every task's result, in the tasks' order."""
        if not tasks:
            return []
        if self.pool is None or len(tasks) < 2 * self.workers:
            return self.forker.run_many(tasks)
        order = sorted(range(len(tasks)), key=lambda i: (tasks[i].tick, i))
        results: list[dict[str, Any] | None] = [None] * len(tasks)
        import concurrent.futures

        size = math.ceil(len(order) / (2 * self.workers))  # two shares each: a slow share does not hold the rest
        chunks = [order[j:j + size] for j in range(0, len(order), size)]
        futures = {self.pool.submit(_work, [tasks[i] for i in chunk]): chunk for chunk in chunks}
        f = self.forker
        for fut in concurrent.futures.as_completed(futures):
            got = fut.result()
            for i, r in zip(futures[fut], got["results"]):
                results[i] = r
            f.requests_sent += got["requests_sent"]
            f.cache_hits += got["cache_hits"]
            f.cache_misses += got["cache_misses"]
        return [r for r in results if r is not None]
