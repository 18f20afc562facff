#!/usr/bin/env python3
"""Window frame rate: 120 fish on a 1920×1080 (and a 1280×720) software surface with the
follow panel, the HUD, the controls and (in replay) the timeline visible; also with the
charts view open. Prints the ``--fps`` JSON of each case, then a summary.

    python bench/window_fps.py [--frames 400]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fps(*args: str) -> dict:
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy"}
    out = subprocess.run([sys.executable, os.path.join(ROOT, "run.py"), *args], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=400)
    args = ap.parse_args()
    rec = os.path.join(tempfile.mkdtemp(), "fps.db")
    subprocess.run([sys.executable, os.path.join(ROOT, "run.py"), "live", "--headless", "--ticks", "1500", "--fish",
                    "120", "--record", rec], capture_output=True, check=True)
    common = ["--fps", "--frames", str(args.frames), "--select", "3", "--size", "1920x1080"]
    laptop = [a if a != "1920x1080" else "1280x720" for a in common]
    cases = {
        "live 120 fish, 1x": fps("live", "--fish", "120", *common),
        "live 120 fish, 64x": fps("live", "--fish", "120", "--speed", "64", *common),
        "replay 120 fish + timeline, 8x": fps("replay", rec, "--speed", "8", *common),
        "live 120 fish + charts, 1920x1080": fps("live", "--fish", "120", "--charts", *common),
        "live 120 fish + charts, 1280x720": fps("live", "--fish", "120", "--charts", *laptop),
        "replay + charts, 1280x720": fps("replay", rec, "--speed", "8", "--charts", *laptop),
        "live 120 fish, 2560x1440 (scaled 1.33x)": fps("live", "--fish", "120",
                                                       *[a if a != "1920x1080" else "2560x1440" for a in common]),
        "live 120 fish, 3840x2160 (scaled 2x)": fps("live", "--fish", "120",
                                                    *[a if a != "1920x1080" else "3840x2160" for a in common]),
    }
    for name, r in cases.items():
        print(f"{name:<34} median {r['fps_median']:>6.0f} FPS   p95 frame {r['frame_ms_p95']:.1f} ms", flush=True)
    print(json.dumps({"window_fps": cases}))


if __name__ == "__main__":
    main()
