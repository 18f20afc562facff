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

Last line JSON. The timers add about 0.1 µs a call (measured by the script: an empty wrapped
call), subtracted.

    python bench/batch_bound.py [--ticks 2000] [--repeats 5] [--run-ticks 300]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--run-ticks", type=int, default=300)
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
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mirofish", "live", "--headless", "--ticks", "1"], cwd=ROOT,
                   capture_output=True, check=True)
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
    print(json.dumps(out))


if __name__ == "__main__":
    main()
