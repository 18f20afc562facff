"""Recordings that check themselves, measured.

    python bench/replay_checks.py                 # 5 seeds x 8,000 ticks, 60 fish
    python bench/replay_checks.py --seeds 2 --ticks 2000

For each seed, records a run made with the numpy tick (``MIROFISH_TICK=numpy``, in a fresh
process) and replays it on the compiled tick with ``replay --headless --verify`` — every
tick's actions and every kept state hash compared — and prints whether it held or where it
diverged. Then the cost of the state hashes: a 60-fish recording's ticks/s and size with
``record.hash_every`` 10 (the default) and 0 (none), medians of 3 alternating runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RECORD = r"""
import sys, time
sys.path.insert(0, {root!r})
from mirofish.config import load_config
from mirofish.session import LiveSession
s = LiveSession(load_config(seed={seed}, overrides=["record.hash_every={every}"]))
s.start_recording({path!r})
start = time.perf_counter()
s.run({ticks})
took = time.perf_counter() - start
print(s.world.tick_kernel, s.state_hash(), {ticks} / took)
s.close()
"""


def record(path: Path, seed: int, ticks: int, every: int = 10, kernel: str | None = None) -> tuple[str, str, float]:
    env = {**os.environ, **({"MIROFISH_TICK": kernel} if kernel else {})}
    code = RECORD.format(root=str(ROOT), seed=seed, every=every, path=str(path), ticks=ticks)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    made, final, speed = out.stdout.split()
    return made, final, float(speed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--ticks", type=int, default=8000)
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp())
    runs = []
    for seed in range(1, a.seeds + 1):
        path = folder / f"numpy-{seed}.db"
        made, final, _ = record(path, seed, a.ticks, kernel="numpy")
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(path), "--headless", "--verify"],
                              capture_output=True, text=True, cwd=ROOT)
        took = time.perf_counter() - start
        if done.returncode == 0:
            got = json.loads(done.stdout)
            runs.append({"seed": seed, "recorded_with": made, "verified_ticks": got["verified_ticks"],
                         "final_state_equal": got["state_hash"] == final, "verify_s": round(took, 1)})
        else:
            runs.append({"seed": seed, "recorded_with": made, "diverged": done.stderr.strip()})
    speeds: dict[int, list[float]] = {10: [], 0: []}
    sizes: dict[int, int] = {}
    for k in range(3):
        for every in (10, 0):
            path = folder / f"cost-{every}-{k}.db"
            speeds[every].append(record(path, 7, 3000, every)[2])
            sizes[every] = path.stat().st_size
    print(json.dumps({
        "numpy_recorded_compiled_replayed": runs,
        "all_held": all(r.get("final_state_equal") for r in runs),
        "recording_ticks_per_s_hash_every_10": round(statistics.median(speeds[10]), 1),
        "recording_ticks_per_s_no_hashes": round(statistics.median(speeds[0]), 1),
        "hash_cost": round(1 - statistics.median(speeds[10]) / statistics.median(speeds[0]), 3),
        "bytes_3000_ticks_hash_every_10": sizes[10], "bytes_3000_ticks_no_hashes": sizes[0],
    }, indent=1))


if __name__ == "__main__":
    main()
