"""The export's pool of workers ends, however the exporting process handles SIGTERM. A process
that has called ``pygame.init()`` (the window; a test session) carries SDL's SIGTERM handler,
which turns the signal into a quit event; the pool's exit terminates its workers with SIGTERM,
and one that survived it was waited for forever: a hung export."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r'''
import os, sys
os.environ["SDL_VIDEODRIVER"] = "dummy"
import pygame
pygame.init()  # SDL's signal handlers, as in the window
from mirofish.config import load_config
from mirofish.observe.recording import Recording
from mirofish.session import LiveSession
from mirofish.session.tables import simulated_tables
path = sys.argv[1]
live = LiveSession(load_config(seed=3, **{"fish.count": 20, "record.keyframe_every": 20}))
live.start_recording(path)
live.run(200)
live.close()
for i in range(12):
    rec = Recording(path)
    try:
        simulated_tables(rec, rec.first_tick, rec.last_tick, 10, workers=2)
    finally:
        rec.close()
print("done", i + 1)
'''


def test_an_export_with_workers_ends_in_a_process_that_initialised_sdl(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "r.mirofish")], capture_output=True,
                          text=True, cwd=ROOT, timeout=240, env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    assert done.returncode == 0 and "done 12" in done.stdout, done.stderr[-600:]
