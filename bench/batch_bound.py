#!/usr/bin/env python3
"""How fast could many tanks stepped as one program be? An upper bound, measured.

A batched world (N tanks with a tank axis, one compiled call per tick for all) removes the
Python around the compiled calls; it cannot remove the compiled work itself. This script runs
the 60-fish default tank (seeds 1–3, best of ``--repeats`` stretches of ``--ticks`` ticks in one
process, the instinct planner and every observer, as ``live --headless`` runs it) with each
compiled function of ``mirofish._tick`` wrapped in a clock, and reports:

- the whole tick (µs) and the compiled calls' part of it (µs);
- the start-up of a run in a warm process (building the session: what a sweep's worker pays
  per run) and of a fresh ``live --headless --ticks 1`` process;
- the bound: if every line of Python around the compiled calls were gone, a tank-tick would
  cost the compiled part alone, so N tanks on the same cores could go at most
  ``whole ÷ compiled`` times the tank-ticks per second of N separate runs (ticks only), or
  ``(start-up + T × whole) ÷ (T × compiled)`` with each separate run's start-up counted
  (runs of ``--run-ticks`` T ticks).

With ``--joined N`` (default 16, 0 to skip) it also steps N such tanks joined into one world
(``mirofish/session/joined.py``, as a sweep's worker runs a group of runs), the best of
``--repeats`` stretches each way, alternating:

- ``joined``: every tank's own metrics and decision history, observed together as a sweep's
  worker observes them (``mirofish/session/together.py``);
- ``joined, no observers``: none at all — what joining could reach if every tank's observers were
  batched into calls that cost nothing (the counterfactual for "batch the observers too");

and the compiled calls' part of a joined tank-tick. Their ratios to the tank alone bound what a
sweep's joined runs can gain over the same runs one by one.

Last line JSON. The timers add about 0.1 µs a call (measured by the script: an empty wrapped
call), subtracted.

    python bench/batch_bound.py [--ticks 2000] [--repeats 5] [--run-ticks 300] [--joined 16]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mirofish import _tick  # type: ignore[attr-defined]
from mirofish.config import load_config
from mirofish.session import LiveSession

SPENT = {"s": 0.0, "calls": 0}


def _timed(fn):
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT["s"] += time.perf_counter() - t
            SPENT["calls"] += 1
    return wrapper


def _overhead() -> float:
    """Seconds a wrapped empty call adds (the clock's own cost)."""
    f = _timed(lambda: None)
    n = 200_000
    t = time.perf_counter()
    for _ in range(n):
        f()
    with_clock = time.perf_counter() - t
    g = (lambda: None)
    t = time.perf_counter()
    for _ in range(n):
        g()
    return max(0.0, (with_clock - (time.perf_counter() - t)) / n)


def joined_world(n: int, together: bool = False) -> Callable[[bool], Any]:
    """A step function for ``n`` default tanks (seeds 1…n) joined into one world as a sweep's
    worker joins them (``run_headless_joined``): ``step(observed)`` steps it once, with each
    tank's own observers or with none. ``together``: the observers observed together, as a
    sweep's worker observes them (mirofish/session/together.py; ``step(True)`` only), else each
    tank's in turn."""
    from mirofish.batch import Batch
    from mirofish.brains.instinct import instinct_source
    from mirofish.session.joined import JoinedEngine, JoinedTank, keyed_brain

    cfgs = [load_config(seed=1 + k) for k in range(n)]
    runs = [LiveSession(c, own_memory=True) for c in cfgs]
    planners = [keyed_brain(r.engine.source) for r in runs]
    planner = keyed_brain(instinct_source(cfgs[0]))
    assert planner is not None and all(p is not None for p in planners)
    batch = Batch([r.world for r in runs], planned=True)
    fish = runs[0].world.school.n
    keys = np.concatenate([p._keys[np.arange(fish)] for p in planners])  # type: ignore[union-attr]
    tanks = [JoinedTank(list(r.engine.observers)) for r in runs]
    kept = [t.observers for t in tanks]
    engine = JoinedEngine(batch, planner, tanks, keys, observe_together=together)
    assert (engine.together is not None) == together

    def step(observed: bool) -> None:
        assert observed or not together, "tanks observed together keep their observers"
        for t, obs in zip(tanks, kept):
            t.observers = obs if observed else []
        engine.step()

    return step


def best_per_tick(step: Callable[[], Any], ticks: int, repeats: int) -> float:
    best = 1e9
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(ticks):
            step()
        best = min(best, (time.perf_counter() - t) / ticks)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--run-ticks", type=int, default=300)
    ap.add_argument("--joined", type=int, default=16, metavar="N", help="tanks joined into one world (0: skip)")
    a = ap.parse_args()
    whole, compiled = [], []
    for seed in (1, 2, 3):
        s = LiveSession(load_config(seed=seed))
        s.run(200)
        best_whole = 1e9
        for _ in range(a.repeats):  # untimed kernels: the whole tick as it runs
            t = time.perf_counter()
            s.run(a.ticks)
            best_whole = min(best_whole, (time.perf_counter() - t) / a.ticks)
        whole.append(best_whole)
        names = [n for n in dir(_tick) if not n.startswith("_") and callable(getattr(_tick, n))]
        saved = {n: getattr(_tick, n) for n in names}
        try:
            for n in names:
                setattr(_tick, n, _timed(saved[n]))
            best = 1e9
            over = _overhead()
            for _ in range(a.repeats):
                SPENT["s"], SPENT["calls"] = 0.0, 0
                s.run(a.ticks)
                best = min(best, (SPENT["s"] - SPENT["calls"] * over) / a.ticks)
            compiled.append(best)
        finally:
            for n in names:
                setattr(_tick, n, saved[n])
        s.close()
    t = time.perf_counter()
    for seed in range(10):
        LiveSession(load_config(seed=seed)).close()
    warm_start = (time.perf_counter() - t) / 10
    fresh = [sys.executable, "-m", "mirofish", "live", "--headless", "--ticks", "1"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode cached, as
    subprocess.run(fresh, cwd=ROOT, capture_output=True, check=True, env=env)  # after an install (untimed)
    t = time.perf_counter()
    subprocess.run(fresh, cwd=ROOT, capture_output=True, check=True, env=env)
    cold_start = time.perf_counter() - t
    w, c = min(whole), min(compiled)
    T = a.run_ticks
    out = {"whole_us": round(w * 1e6, 1), "compiled_us": round(c * 1e6, 1),
           "compiled_share": round(c / w, 3), "warm_start_ms": round(warm_start * 1e3, 1),
           "fresh_process_s": round(cold_start, 2), "bound_ticks_only": round(w / c, 2),
           "bound_with_warm_starts": round((warm_start + T * w) / (T * c), 2),
           "bound_with_fresh_processes": round((cold_start + T * w) / (T * c), 2), "run_ticks": T}
    print(f"whole tick {out['whole_us']} µs, compiled calls {out['compiled_us']} µs ({out['compiled_share']:.0%}); "
          f"a run's start-up {out['warm_start_ms']} ms in a warm process, {out['fresh_process_s']} s as a fresh one")
    print(f"bound for a batched world: {out['bound_ticks_only']}× (ticks only), {out['bound_with_warm_starts']}× "
          f"(runs of {T} ticks, warm starts), {out['bound_with_fresh_processes']}× (fresh processes)")
    if a.joined > 0:
        step, observed = joined_world(a.joined), joined_world(a.joined, together=True)
        for _ in range(200):
            step(True)
            observed(True)
        per = {"with observers": [], "no observers": []}
        for _ in range(a.repeats):  # alternating, the best of each: this machine's load moves between minutes
            per["with observers"].append(best_per_tick(lambda: observed(True), a.ticks // 4, 1) / a.joined)
            per["no observers"].append(best_per_tick(lambda: step(False), a.ticks // 4, 1) / a.joined)
        names = [n for n in dir(_tick) if not n.startswith("_") and callable(getattr(_tick, n))]
        saved = {n: getattr(_tick, n) for n in names}
        try:
            for n in names:
                setattr(_tick, n, _timed(saved[n]))
            over, jc = _overhead(), 1e9
            for _ in range(a.repeats):
                SPENT["s"], SPENT["calls"] = 0.0, 0
                for _ in range(a.ticks // 4):
                    step(False)
                jc = min(jc, (SPENT["s"] - SPENT["calls"] * over) / (a.ticks // 4) / a.joined)
        finally:
            for n in names:
                setattr(_tick, n, saved[n])
        jo, jn = min(per["with observers"]), min(per["no observers"])
        out.update(joined_tanks=a.joined, joined_us=round(jo * 1e6, 1), joined_no_observers_us=round(jn * 1e6, 1),
                   joined_compiled_us=round(jc * 1e6, 1), joined_gain=round(w / jo, 2),
                   joined_gain_no_observers=round(w / jn, 2))
        print(f"{a.joined} tanks joined: {out['joined_us']} µs a tank-tick with their observers "
              f"({out['joined_gain']}× the tank alone), {out['joined_no_observers_us']} µs with none "
              f"({out['joined_gain_no_observers']}×: observers batched at no cost); its compiled calls "
              f"{out['joined_compiled_us']} µs")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
