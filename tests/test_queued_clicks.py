"""A person's interventions (the window's clicks) are checked when made and applied at the start
of the next tick; one made since may take the room another counted on. Such a click is refused
in one line when its tick comes (``Engine.refused``, which the window shows), never a crash, and
neither the tank nor its recording has it: the recording replays exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mirofish.config import load_config
from mirofish.session import LiveSession

ROOT = Path(__file__).resolve().parent.parent
TIGHT = {"fish.count": 14, "fish.spare": 4, "world.width": 8, "world.height": 8, "world.rocks": 0,
         "world.plant_patches": 0}


def test_adds_into_the_last_free_water_are_refused_when_their_tick_comes_and_the_recording_replays(tmp_path):
    s = LiveSession(load_config(seed=9, **TIGHT))
    w = s.world
    free = int((w.occupant[w.water.open_cells] < 0).sum())
    assert 0 < free < 4  # room for fewer fish than are added below
    rec = tmp_path / "tight.mfrec"
    s.start_recording(rec)
    s.run(5)
    for _ in range(4):
        s.intervene({"kind": "add", "x": 3, "y": 3})  # each fits the tank as it is now
    frame = s.step()
    added = [iv for iv in frame.interventions if iv["kind"] == "add"]
    assert len(added) == free
    assert len(s.engine.refused) == 4 - free and all("add: no free water" in r for r in s.engine.refused)
    assert int((~s.world.school.absent).sum()) == 14 + free
    s.run(30)
    path = s.stop_recording()
    out = subprocess.run([sys.executable, "run.py", "replay", str(path), "--headless", "--verify"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["verified_ticks"] == 36 and got["tick"] == s.world.tick and got["state_hash"] == s.state_hash()


def test_the_window_says_which_click_was_refused():
    """Four adds clicked between two ticks of a playing tank with room for fewer: the window
    plays on and its message line says why the rest were not made."""
    from mirofish.ui.app import App
    from mirofish.ui.scenes.aquarium import AquariumScene

    scene = AquariumScene.live(load_config(seed=9, **TIGHT))
    app = App([scene], (1280, 720), offscreen=True)
    app.run(frames=4, fixed_dt=0.25)
    assert not scene.pacer.paused
    for _ in range(4):
        scene.intervene({"kind": "add", "x": 3, "y": 3})  # made between ticks: checked against the tank as it is
    tick = scene.tick
    app.run(frames=8, fixed_dt=0.25)
    assert scene.tick > tick and "add: no free water for another fish" in scene.message
    app.close()
