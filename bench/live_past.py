"""What keeping a live tank's recent past costs (the window's rewind without Record).

    python bench/live_past.py                  # 60 fish, 3,000 ticks per run, 3 alternating pairs
    python bench/live_past.py --fish 240 --ticks 2000

Prints JSON: ticks/s of the same live tank (embedded brain, stepped as fast as it goes) with
the recent past kept (``LiveSession(past=True)``: a temporary recording trimmed to
``record.history_minutes``, 10 simulated minutes by default) and without, as medians of
alternating runs in fresh processes, and the slowdown; then one simulated hour (7,200 ticks)
with the past kept untrimmed (``history_minutes`` = 60): the size of what "Keep this" saves then
(a closed recording: disk per simulated hour), the same with the default 10 minutes kept
(bounded), and the process's peak memory with and without the past.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ONE_RUN = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from mirofish.config import load_config
from mirofish.session import LiveSession
past, fish, ticks, minutes = {past!r}, {fish!r}, {ticks!r}, {minutes!r}
cfg = load_config(seed=11, overrides=[f"fish.count={{fish}}", f"record.history_minutes={{minutes}}"])
live = LiveSession(cfg, past=past)
live.run(20)
start = time.perf_counter()
live.run(ticks)
took = time.perf_counter() - start
size = 0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
if live.recorder is not None:  # what "Keep this" would save now: the kept past as a closed recording
    import pathlib, tempfile
    kept = pathlib.Path(tempfile.mkdtemp()) / "kept.db"
    live.keep(kept)
    live.stop_recording()
    size = kept.stat().st_size
    kept.unlink()
live.close()
print(json.dumps({{"ticks_per_s": ticks / took, "past_bytes": size, "peak_rss": rss}}))
"""


def run(past: bool, fish: int, ticks: int, minutes: float) -> dict:
    code = ONE_RUN.format(root=str(ROOT), past=past, fish=fish, ticks=ticks, minutes=minutes)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fish", type=int, default=60)
    ap.add_argument("--ticks", type=int, default=3000)
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    on, off = [], []
    for _ in range(a.pairs):  # alternating, fresh processes
        off.append(run(False, a.fish, a.ticks, 10.0)["ticks_per_s"])
        on.append(run(True, a.fish, a.ticks, 10.0)["ticks_per_s"])
    hour_on = run(True, a.fish, 7200, 60.0)
    hour_off = run(False, a.fish, 7200, 60.0)
    ten_min = run(True, a.fish, 7200, 10.0)
    print(json.dumps({
        "fish": a.fish, "ticks_per_run": a.ticks,
        "ticks_per_s_past_off": round(statistics.median(off), 1),
        "ticks_per_s_past_on": round(statistics.median(on), 1),
        "slowdown": round(1 - statistics.median(on) / statistics.median(off), 3),
        "runs_off": [round(v, 1) for v in off], "runs_on": [round(v, 1) for v in on],
        "disk_per_simulated_hour_mb": round(hour_on["past_bytes"] / 1e6, 2),
        "disk_kept_10_minutes_after_an_hour_mb": round(ten_min["past_bytes"] / 1e6, 2),
        "peak_rss_mb_hour_past_on": round(hour_on["peak_rss"] / 1e6, 1),
        "peak_rss_mb_hour_past_off": round(hour_off["peak_rss"] / 1e6, 1),
    }, indent=1))


if __name__ == "__main__":
    main()
