"""Recordings that check themselves: a replay that does not give what the recording says stops
at the first tick that differs and says so, instead of showing another tank."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
from conftest import record_run

from mirofish.observe.recording import Recording, content_digest, decode_columns, encode_columns, pack, unpack
from mirofish.session import ReplaySession
from mirofish.session.replay import ReplayDiverged


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return record_run(tmp_path_factory.mktemp("checks") / "run.db", seed=9, ticks=400)


def resealed(src, dst, change) -> None:
    shutil.copy(src, dst)
    with contextlib.closing(sqlite3.connect(dst)) as db:
        change(db)
        db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db)),))
        db.commit()


def _other_plan_at(tick: int):
    """Re-seal a chunk with one fish's plan at ``tick`` changed to rest (its file checks out)."""
    def change(db):
        tick0, blob = db.execute("SELECT tick0, data FROM chunks WHERE tick0 <= ? AND tick1 > ?",
                                 (tick, tick)).fetchone()
        cols, texts = decode_columns(blob)
        at = np.flatnonzero(cols["dt"] == tick - tick0)
        assert at.size, "a decision at that tick"
        k = at[0]
        cols["goal"][k], cols["param"][k], cols["horizon"][k] = 4, 100, 40  # rest until 100 energy, 40 ticks
        db.execute("UPDATE chunks SET data = ? WHERE tick0 = ?", (encode_columns(cols, texts), tick0))
    return change


def _lighter_fish_in_keyframe(tick: int):
    def change(db):
        arrays, extra = unpack(db.execute("SELECT data FROM keyframes WHERE tick = ?", (tick,)).fetchone()[0])
        arrays["fish.energy"][4] -= 700
        db.execute("UPDATE keyframes SET data = ? WHERE tick = ?", (pack(arrays, extra), tick))
    return change


def first_decision_tick_at_or_after(path, tick):
    rec = Recording(path)
    try:
        return next(t for t in range(tick, rec.last_tick) if (d := rec.decisions_at(t)) is not None and d.fish.size)
    finally:
        rec.close()


def test_an_altered_decision_is_reported_where_the_replay_leaves_the_recording(recorded, tmp_path):
    t = first_decision_tick_at_or_after(recorded, 150)
    path = tmp_path / "plan.db"
    resealed(recorded, path, _other_plan_at(t))
    replay = ReplaySession(path)
    replay.seek(t - 1)  # (a seek re-simulates from the keyframe before: here from 100)
    with pytest.raises(ReplayDiverged, match=r"replay diverges from the recording at tick (\d+)") as caught:
        for _ in range(100):
            replay.step()
    at = int(caught.value.args[0].split("at tick ")[1].split(" ")[0])
    assert t <= at <= t + 10, (t, at)  # actions are checked every tick, the state every 10
    replay.close()


def test_an_altered_keyframe_is_reported_after_a_seek_from_it(recorded, tmp_path):
    path = tmp_path / "keyframe.db"
    resealed(recorded, path, _lighter_fish_in_keyframe(200))
    replay = ReplaySession(path)
    replay.seek(150)  # before the keyframe: all as recorded
    with pytest.raises(ReplayDiverged, match=r"at tick 20[0-9]"):
        replay.seek(260)  # restored from the altered keyframe at 200
    replay.close()


@pytest.mark.parametrize("argv", [["replay", "{p}", "--headless", "--verify"],
                                  ["trace", "{p}", "--fish", "1", "--from", "140", "--to", "260"],
                                  ["export", "{p}", "--tables", "{out}", "--format", "csv"]])
def test_the_command_line_says_where_in_one_line(recorded, tmp_path, argv):
    t = first_decision_tick_at_or_after(recorded, 150)
    path = tmp_path / "plan.db"
    resealed(recorded, path, _other_plan_at(t))
    argv = [a.replace("{p}", str(path)).replace("{out}", str(tmp_path / "tables")) for a in argv]
    done = subprocess.run([sys.executable, "-m", "mirofish", *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "replay diverges from the recording at tick" in done.stderr
    at = int(done.stderr.split("at tick ")[1].split(" ")[0])
    assert t <= at <= t + 10, (t, at)
    assert not (tmp_path / "tables").exists() or not any((tmp_path / "tables").iterdir())  # no half-true tables


def test_tables_and_trace_report_an_altered_keyframe(recorded, tmp_path):
    path = tmp_path / "keyframe.db"
    resealed(recorded, path, _lighter_fish_in_keyframe(200))
    for argv in (["export", str(path), "--tables", str(tmp_path / "t"), "--format", "csv"],
                 ["trace", str(path), "--fish", "4", "--from", "200", "--to", "260"]):
        done = subprocess.run([sys.executable, "-m", "mirofish", *argv], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "replay diverges from the recording at tick 20" in done.stderr, done.stderr


def test_the_window_stops_on_a_banner(recorded, tmp_path):
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    from mirofish.ui.app import App
    from mirofish.ui.scenes.aquarium import AquariumScene

    t = first_decision_tick_at_or_after(recorded, 150)
    path = tmp_path / "plan.db"
    resealed(recorded, path, _other_plan_at(t))
    scene = AquariumScene(ReplaySession(path))
    app = App([scene], (1280, 720), offscreen=True)
    scene.seek(t - 1)
    scene.pacer.paused = False
    for _ in range(30):
        scene.step()
    assert scene.pacer.paused and scene.alarm and "diverges" in scene.message
    stopped = scene.tick
    assert t <= stopped <= t + 11
    app.frame(0.0)
    app.close()


def test_a_recording_made_with_the_numpy_tick_replays_on_the_compiled_one(tmp_path):
    """The two ticks agree (tests/test_kernel.py); the recording says which one made it, and a
    replay on the other checks every tick's actions and every tenth tick's state."""
    path = tmp_path / "numpy.db"
    code = ("import sys; from mirofish.config import load_config; from mirofish.session import LiveSession; "
            f"s = LiveSession(load_config(seed=4)); s.start_recording({str(path)!r}); s.run(1500); "
            "print(s.world.tick_kernel, s.state_hash()); s.close()")
    made = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MIROFISH_TICK": "numpy"})
    assert made.returncode == 0, made.stderr
    kernel, final = made.stdout.split()
    assert kernel == "numpy" and Recording(path).header["tick_kernel"] == "numpy"
    replay = ReplaySession(path)
    assert replay.world.tick_kernel == "compiled"
    replay.seek(1500)
    assert replay.state_hash() == final
    replay.close()
