"""Sweep scaling: 1 vs 2 local workers, and what a Dask cluster adds per run.

    python bench/sweep_scaling.py [--runs 8] [--ticks 2000]

Times `run.py sweep` end to end (a fresh results folder each time) on the same sweep: 60-fish
tanks, one seed per run. Then starts a real local Dask cluster (a scheduler and a worker with
two processes, as separate programs), runs the same sweep on it, and measures the per-run
overhead of both backends with a sweep of runs one tick long. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sweep(spec: Path, out: Path, *args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "run.py", "sweep", str(spec), "--out", str(out), *args],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"sweep failed: {done.stderr.strip()[-300:]}")
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--ticks", type=int, default=2000)
    ap.add_argument("--tiny-runs", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        spec = d / "scaling.toml"
        spec.write_text(f'scene = "aquarium"\nlength = {args.ticks}\nseeds = {{from = 1, count = {args.runs}}}\n'
                        '[params]\n"fish.count" = [60]\n')
        tiny = d / "tiny.toml"
        tiny.write_text(f'scene = "aquarium"\nlength = 1\nseeds = {{from = 1, count = {args.tiny_runs}}}\n'
                        '[params]\n"fish.count" = [60]\n')
        one = sweep(spec, d / "w1", "--workers", "1")
        two = sweep(spec, d / "w2", "--workers", "2")
        tiny_local = sweep(tiny, d / "t2", "--workers", "2")
        from mirofish.sweep.backends import LocalDaskCluster

        with LocalDaskCluster(workers=2, log_dir=d) as address:  # scheduler + 2 worker processes
            cluster = sweep(spec, d / "c2", "--cluster", address)
            tiny_cluster = sweep(tiny, d / "tc", "--cluster", address)
    print(json.dumps({
        "runs": args.runs, "ticks": args.ticks,
        "wall_s": {"local_1_worker": round(one, 2), "local_2_workers": round(two, 2),
                   "dask_2_workers": round(cluster, 2)},
        "speedup_2_vs_1": round(one / two, 2),
        "per_run_overhead_ms": {"local": round(1000 * tiny_local / args.tiny_runs, 1),
                                "dask": round(1000 * tiny_cluster / args.tiny_runs, 1)},
        "tiny_runs": args.tiny_runs,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
