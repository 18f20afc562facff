#!/usr/bin/env python3
"""A long clip in bounded memory: record a tank, then draw a 10,000-frame GIF (and an MP4) of it
at 1280×720 in a fresh process each, and print the peak memory (max RSS) of that process.

Frames are streamed to the encoder (GIF: each frame's changed rectangle written as it comes;
MP4: piped to ffmpeg), so memory stays that of a frame or two, whatever the clip's length.
Needs the clips extra (pip install -e '.[clips]').

    python bench/clip_memory.py [--frames 10000] [--size 1280x720] [--formats gif mp4]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def peak_mb_of(cmd: list[str]) -> tuple[float, dict, float]:
    """Run ``cmd`` in a child; (its peak RSS in MB — that process's own, from wait4 — its JSON
    line, seconds)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"clip_memory: {' '.join(cmd[2:])} failed: {err.strip()}")
    return usage.ru_maxrss / 1024, json.loads(out.splitlines()[-1]), took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=10_000)
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--formats", nargs="+", default=["gif", "mp4"], choices=["gif", "mp4"])
    args = ap.parse_args()
    speed = 0.25  # 40 frames a tick (a tick is 0.5 s, 20 frames a second)
    ticks = -(-args.frames // 40)
    with tempfile.TemporaryDirectory() as tmp:
        rec = Path(tmp) / "run.db"
        subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", str(ticks + 20), "--seed", "1",
                        "--record", str(rec)], check=True, capture_output=True, cwd=ROOT)
        rows = []
        for fmt in args.formats:  # one process each
            out = Path(tmp) / f"long.{fmt}"
            peak, result, took = peak_mb_of([sys.executable, "run.py", "clip", str(rec), "--from", "10", "--to",
                                             str(10 + ticks), "--speed", str(speed), "--size", args.size,
                                             "--out", str(out)])
            rows.append({"format": fmt, "frames": result["frames"], "size": result["size"],
                         "peak_rss_mb": round(peak, 1), "file_mb": round(result["bytes"] / 1e6, 1),
                         "seconds": round(took, 1), "render_fps": result["render_fps"]})
            print(f"{fmt}: {result['frames']:,} frames at {args.size}: peak memory {peak:.0f} MB, "
                  f"file {result['bytes'] / 1e6:.1f} MB, {took:.0f} s", flush=True)
    print(json.dumps({"clips": rows, "cpu_count": os.cpu_count()}))


if __name__ == "__main__":
    main()
