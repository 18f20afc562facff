"""A local sweep's forked workers end when the sweep stops them, whatever SIGTERM handler they
inherited or a run set: SDL's (``pygame.init()`` in the process that sweeps, as a test suite does
before an in-process sweep) turns SIGTERM into a quit event, and ``stop()`` with a run in flight
then waited for that run to finish."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import os, signal, sys, time
how = sys.argv[1]
if how == "sdl":
    import pygame
    pygame.display.init()  # SDL's event subsystem installs its SIGINT/SIGTERM handlers
elif how == "python":
    signal.signal(signal.SIGTERM, lambda *a: None)
elif how == "in-run":
    import mirofish.sweep.runs as runs
    summarize = runs.summarize
    def swallowing(task, record_dir=None):
        signal.signal(signal.SIGTERM, lambda *a: None)
        return summarize(task, record_dir)
    runs.summarize = swallowing
from mirofish.sweep.backends import LocalBackend
from mirofish.sweep.spec import RunTask
# one short run, then two that would take many minutes
tasks = [RunTask("aquarium", {"fish.count": 30}, s, 40 if s == 1 else 10**8, None) for s in (1, 2, 3)]
gen = LocalBackend(2).run(tasks, None)
assert next(gen)["status"] == "ok"
time.sleep(0.3)  # the long runs are under way
t = time.monotonic()
gen.close()  # as a Ctrl-C does: stop() with runs in flight
print(round(time.monotonic() - t, 2))
"""


@pytest.mark.parametrize("how", ["sdl", "python", "in-run"])
def test_stopping_a_sweep_ends_runs_in_flight_whatever_sigterm_handler_they_inherited_or_set(how):
    if how == "sdl":
        pytest.importorskip("pygame")
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy", "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, how], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    took = float(done.stdout.strip().splitlines()[-1])
    assert took < 10, took  # at once, or after the grace a worker that ignores SIGTERM is given
