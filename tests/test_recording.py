"""Recordings, seekable replay, forks, export, trace and the single-fish report."""

import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mirofish.config import load_config
from mirofish.fish.plans import Goal, describe, parse_plan
from mirofish.observe.recording import Recorder, Recording, RecordingError, pack, unpack
from mirofish.session import LiveSession, ReplaySession, export_window, fork, trace_fish
from mirofish.session.report import fish_report, render_text
from mirofish.ui.figures import report_png

ROOT = Path(__file__).resolve().parent.parent


def record(path, seed, ticks, **dotted):
    """A live lockstep run recorded to ``path``; returns the live state hash after every tick."""
    cfg = load_config(seed=seed, **dotted)
    eng = LiveSession(cfg)
    rec = Recorder(path, cfg).attach(eng)
    hashes = {0: eng.state_hash()}
    for _ in range(ticks):
        eng.step()
        hashes[eng.world.tick] = eng.state_hash()
    rec.close()
    return hashes


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = {}
    for seed in (3, 8):
        path = tmp_path_factory.mktemp(f"rec{seed}") / "run.db"
        out[seed] = (path, record(path, seed, 450))
    return out


def file_digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.parametrize("seed", (3, 8))
def test_seek_reproduces_every_swept_tick_exactly(recorded, seed):
    path, live = recorded[seed]
    player = ReplaySession(path)
    assert (player.first_tick, player.last_tick) == (0, 450)
    # Around keyframes (every 100), forwards, backwards and from far away.
    for t in (0, 1, 99, 100, 101, 250, 199, 200, 201, 449, 450, 7, 300, 299):
        player.seek(t)
        assert player.tick == t
        assert player.state_hash() == live[t], t


def test_step_and_back(recorded):
    path, live = recorded[3]
    player = ReplaySession(path)
    player.seek(150)
    player.step()
    assert player.state_hash() == live[151]
    player.back()
    player.back()
    assert player.tick == 149 and player.state_hash() == live[149]
    snap = player.snapshot()
    assert snap.tick == 149 and snap.metrics["mean_energy"] > 0


def test_playback_at_a_speed_steps_the_recording_exactly(recorded):
    """The window paces a replay with a Pacer: 1 s at 4× is 8 ticks, then ¼× gives 1."""
    from mirofish.pacing import Pacer

    path, live = recorded[3]
    player = ReplaySession(path)
    player.seek(10)
    pacer = Pacer(player.cfg.world.tick_seconds, 4)
    pacer.due(50.0, 256)
    player.run(pacer.due(51.0, 256))
    assert player.tick == 18  # 1 s × 4× / 0.5 s per tick
    pacer.speed = 0.25
    player.run(pacer.due(53.0, 256))
    assert player.tick == 19 and player.state_hash() == live[19]


def test_reading_never_modifies_the_file(recorded):
    path, _ = recorded[8]
    before = file_digest(path)
    player = ReplaySession(path)
    player.seek(420)
    fish_report(path, 3, 10, 60)
    player.close()
    assert file_digest(path) == before
    assert not Path(str(path) + "-wal").exists()  # a finished recording is one plain file


def test_recording_holds_header_decisions_metrics(recorded):
    path, _ = recorded[3]
    rec = Recording(path)
    assert rec.header["format_version"] == 1 and rec.header["seed"] == 3 and rec.header["scene"] == "aquarium"
    assert rec.config.seed == 3 and rec.keyframe_ticks == [0, 100, 200, 300, 400]
    d = rec.decisions_at(0)
    assert d.fish.size == 60  # everybody decides at tick 0
    assert set(d.goal.tolist()) <= set(range(1, 6)) and (d.latency_s >= 0).all()  # plans, no bare actions
    assert (d.horizon > 0).all()
    executed = rec.executed_at(0)
    assert executed.shape == (60,) and set(executed.tolist()) <= set(range(6))
    rows = rec.tick_rows(0, 450)
    assert len(rows) == 450 and np.array_equal(rows[:, 0], np.arange(450))
    samples = rec.sample_rows(0, 450)
    assert len(samples) == 45 and samples[:, 1].max() > 1.0  # action entropy


def test_cli_replay_matches_the_live_run(tmp_path):
    path = tmp_path / "cli.db"
    live = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "230", "--seed", "6",
                           "--record", str(path)], capture_output=True, text=True, cwd=ROOT, check=True)
    live_hash = json.loads(live.stdout.splitlines()[-1])["final_state_hash"]
    out = subprocess.run([sys.executable, "run.py", "replay", str(path), "--headless", "--to-tick", "230"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["tick"] == 230 and result["state_hash"] == live_hash


def test_fork_with_the_recorded_action_reproduces_the_parent(recorded, tmp_path):
    path, live = recorded[3]
    rec = Recording(path)
    d = rec.decisions_at(200)
    fish, plan = int(d.fish[0]), describe(d.goal[0], d.param[0], d.horizon[0])
    assert parse_plan(plan) == (int(d.goal[0]), int(d.param[0]), int(d.horizon[0]))
    out = fork(path, 200, fish, plan, 150, tmp_path / "same.db")
    assert out["final_state_hash"] == live[350]
    assert out["divergence"]["cells_differ_max"] == 0 and out["divergence"]["first_tick_cells_differ"] is None


def test_a_real_swap_diverges_and_the_fork_is_its_own_recording(recorded, tmp_path):
    path, live = recorded[3]
    rec = Recording(path)
    d = rec.decisions_at(200)
    fish = int(d.fish[0])
    other = "rest until 100 energy for 150 ticks" if d.goal[0] != Goal.REST else "explore north for 150 ticks"
    out = fork(path, 200, fish, other, 200, tmp_path / "fork.db")
    assert out["final_state_hash"] != live[400]
    assert out["divergence"]["cells_differ_max"] > 0
    frec = Recording(tmp_path / "fork.db")
    assert frec.header["parent"] == str(path) and frec.header["fork_tick"] == 200
    assert frec.header["fork_fish"] == fish and frec.header["fork_action"] == other
    curve = frec.divergence_rows(200, 400)
    assert len(curve) == 200 and curve[:, 1].max() == out["divergence"]["cells_differ_max"]
    assert frec.decisions_at(200).tier[list(frec.decisions_at(200).fish).index(fish)] == 5  # "intervention"
    fork_player = ReplaySession(frec)
    fork_player.seek(400)
    assert fork_player.state_hash() == out["final_state_hash"]


def test_export_window_is_a_self_contained_recording(recorded, tmp_path):
    path, live = recorded[8]
    out = export_window(path, around=300, radius=80, out=tmp_path / "window.db")
    assert (out["from_tick"], out["to_tick"]) == (220, 380)
    player = ReplaySession(tmp_path / "window.db")
    assert player.first_tick == 220 and player.last_tick == 380
    for t in (220, 301, 380):
        player.seek(t)
        assert player.state_hash() == live[t]


def test_trace_isolates_a_fish_with_its_neighbours_restored(recorded):
    path, _ = recorded[8]
    rows = trace_fish(path, fish=4, t0=100, t1=160)
    assert len(rows) == 60 and all("@" in r["view"] for r in rows)
    decided = [r for r in rows if "decision" in r]
    assert decided and all(r["agrees"] for r in decided)  # the deterministic brain decides the same again


def test_single_fish_report(recorded, tmp_path):
    path, _ = recorded[3]
    r = fish_report(path, 5, 50, 400)
    assert len(r.energy) == 350 and abs(sum(r.actions.values()) - 1) < 1e-3
    assert 0 < r.exploration <= 1 and 0 < r.tank_exploration <= 1
    assert r.stuck_peak >= 0 and all(0 <= d <= 1 for d in r.drift)
    text = render_text(r)
    for needle in ("actions", "energy", "exploration", "drift score", "memory length", "stuck peak", "social"):
        assert needle in text
    report_png(r, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pack_round_trip_and_no_objects():
    arrays = {"a": np.arange(5, dtype=np.int16), "b": np.ones((2, 3), np.float32)}
    got, extra = unpack(pack(arrays, {"x": 1}))
    assert extra == {"x": 1} and all(np.array_equal(got[k], arrays[k]) for k in arrays)


def test_no_secret_reaches_a_recording(tmp_path, monkeypatch):
    secret = "sk-test-SECRET-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    record(tmp_path / "s.db", 1, 30)
    assert secret.encode() not in (tmp_path / "s.db").read_bytes()


def test_kill_9_leaves_a_file_that_replays_to_its_last_committed_tick(tmp_path):
    path = tmp_path / "crash.db"
    proc = subprocess.Popen([sys.executable, "run.py", "live", "--headless", "--ticks", "10000000", "--seed", "4",
                             "--record", str(path)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        time.sleep(0.3)
        try:
            if Recording(path).last_tick > 600:
                break
        except RecordingError:
            continue
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    rec = Recording(path)
    last = rec.last_tick
    assert last > 600
    player = ReplaySession(rec)
    player.seek(last)
    live = LiveSession(load_config(seed=4))
    live.run(last)
    assert player.state_hash() == live.state_hash()


def edited(path, out, sql: str):
    """A copy of the recording ``path`` at ``out`` with ``sql`` run on it."""
    shutil.copy(path, out)
    with sqlite3.connect(out) as db:
        db.execute(sql)
    return out


def _cli_error(*args):
    out = subprocess.run([sys.executable, "run.py", *args], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2, out
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    return out.stderr.strip()


def test_bad_recordings_are_one_line_errors_and_stay_untouched(recorded, tmp_path):
    path, _ = recorded[8]
    assert "not found" in _cli_error("replay", str(tmp_path / "missing.db"), "--headless")
    text = tmp_path / "notes.txt"
    text.write_text("hello, I am not a database\n" * 50)
    before = file_digest(text)
    assert "not a MiroFish recording" in _cli_error("replay", str(text), "--headless")
    assert file_digest(text) == before

    truncated = tmp_path / "truncated.db"
    data = Path(path).read_bytes()
    truncated.write_bytes(data[: len(data) // 3])
    before = file_digest(truncated)
    msg = _cli_error("replay", str(truncated), "--headless", "--to-tick", "440")
    assert "damaged" in msg or "no keyframe" in msg or "outside" in msg
    assert file_digest(truncated) == before

    corrupted = tmp_path / "corrupted.db"
    blob = bytearray(data)
    blob[4096:4096 + 2000] = random.Random(266).randbytes(2000)  # seeded: the same damage every run
    corrupted.write_bytes(bytes(blob))
    before = file_digest(corrupted)
    _cli_error("replay", str(corrupted), "--headless", "--to-tick", "440")
    assert file_digest(corrupted) == before

    newer = edited(path, tmp_path / "newer.db", "UPDATE header SET value = '99' WHERE key = 'format_version'")
    assert "newer" in _cli_error("replay", str(newer), "--headless")

    gap = edited(path, tmp_path / "gap.db",
                 "DELETE FROM chunks WHERE tick0 = (SELECT MIN(tick0) FROM chunks WHERE tick0 > 120)")
    assert "a gap in its chunks" in _cli_error("replay", str(gap), "--headless", "--to-tick", "190")

    # a last chunk claiming a trillion ticks must not run forever …
    forever = edited(path, tmp_path / "forever.db",
                     "UPDATE chunks SET tick1 = 1000000000000 WHERE tick0 = (SELECT MAX(tick0) FROM chunks)")
    assert "claims ticks" in _cli_error("replay", str(forever), "--headless")
    # … or ticks it does not hold (shifted far: chunk lengths vary with load, a small shift could collide)
    longer = edited(path, tmp_path / "longer.db",
                    "UPDATE chunks SET tick0 = tick0 + 100000, tick1 = tick1 + 100000 WHERE tick0 > 300")
    assert "a gap" in _cli_error("replay", str(longer), "--headless")
    badcfg = edited(path, tmp_path / "badcfg.db",
                    """UPDATE header SET value = json_set(value, '$.fish.count', -4) WHERE key = 'config'""")
    assert "stored config is invalid (fish.count" in _cli_error("replay", str(badcfg), "--headless")

    assert "outside" in _cli_error("replay", str(path), "--headless", "--to-tick", "999999")
    assert "--fish" in _cli_error("fork", str(path), "--at", "10", "--fish", "999", "--action", "rest")
    assert "--action" in _cli_error("fork", str(path), "--at", "10", "--fish", "1", "--action", "dance")


def test_latencies_beyond_six_seconds_are_recorded_as_they_were():
    """Latency is stored in 0.1 ms units in 32 bits: a 14.7 s answer from a slow server is kept."""
    from mirofish.brains.base import DecisionBatch
    from mirofish.observe.recording import _encode_chunk, decode_columns

    batch = DecisionBatch(tick=5, fish=np.array([1, 2]), actions=None, tier=np.array([1, 1], np.int8),
                          goals=np.array([2, 3]), params=np.array([0, 3]), horizons=np.array([120, 30]))
    _, _, blob, _, _ = _encode_chunk([(5, [batch], [14.7, 0.25], (5, 1, 0, 0, 0, 0, 0), None, None,
                                 np.zeros(3, np.int8))])
    cols, _ = decode_columns(blob)
    assert np.allclose(cols["latency"] / 1e4, [14.7, 0.25])
    assert cols["goal"].tolist() == [2, 3] and cols["param"].tolist() == [0, 3] and cols["horizon"].tolist() == [120,
                                                                                                                 30]


def test_no_command_writes_its_output_onto_its_input(recorded, tmp_path):
    """export/fork/report refuse an output that is the recording they read (or its -wal), and
    any existing file without --overwrite; the recording stays byte for byte the same."""
    path, _ = recorded[3]
    before = file_digest(path)
    assert "over its input" in _cli_error("export", str(path), "--around", "100", "--radius", "20", "--out", str(path))
    assert "over its input" in _cli_error("fork", str(path), "--at", "10", "--fish", "1", "--plan", "forage",
                                          "--record", str(path) + "-wal")
    assert "over its input" in _cli_error("report", str(path), "--fish", "1", "--png", str(path))
    other = tmp_path / "other.db"
    other.write_bytes(b"keep me")
    assert "--overwrite" in _cli_error("export", str(path), "--around", "100", "--radius", "20", "--out", str(other))
    assert "--overwrite" in _cli_error("live", "--headless", "--ticks", "5", "--record", str(other))
    assert "directory" in _cli_error("live", "--headless", "--ticks", "5", "--record", str(tmp_path))
    assert other.read_bytes() == b"keep me" and file_digest(path) == before
    done = subprocess.run([sys.executable, "run.py", "export", str(path), "--around", "100", "--radius", "20",
                           "--out", str(other), "--overwrite"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and Recording(other).last_tick == 120


def test_the_report_chart_is_a_real_png_whatever_its_name(recorded, tmp_path):
    path, _ = recorded[3]
    out = tmp_path / "chart.img"
    done = subprocess.run([sys.executable, "run.py", "report", str(path), "--fish", "2", "--png", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_second_writer_on_a_recording_in_progress_is_refused(tmp_path):
    path = tmp_path / "busy.db"
    first = Recorder(path, load_config(seed=1))
    try:
        with pytest.raises(RecordingError, match="being written by another run"):
            Recorder(path, load_config(seed=1), overwrite=True)
        assert "another run" in _cli_error("live", "--headless", "--ticks", "5", "--record", str(path), "--overwrite")
    finally:
        first.close()
    Recorder(path, load_config(seed=1), overwrite=True).close()  # free again once the first run closed


def test_file_names_with_uri_characters_are_read_and_leave_no_stray_file(tmp_path):
    folder = tmp_path / "we#ird?%dir"
    folder.mkdir()
    path = folder / "run#1?%.db"
    live = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "30", "--record", str(path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert live.returncode == 0, live.stderr
    replay = subprocess.run([sys.executable, "run.py", "replay", str(path), "--headless"], capture_output=True,
                            text=True, cwd=ROOT)
    assert replay.returncode == 0 and json.loads(replay.stdout)["tick"] == 30
    assert sorted(p.name for p in folder.iterdir()) == [path.name]
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder.name]


def test_credentials_in_a_model_url_are_never_shown_or_stored(tmp_path):
    path = tmp_path / "cred.db"
    out = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "2", "--fish", "3",
                          "--base-url", "http://fishuser:S3CRET-KEY@127.0.0.1:9/v1", "--model", "m",
                          "--set", "brain.timeout_s=0.2", "--record", str(path)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "S3CRET" not in out.stdout + out.stderr and "***@127.0.0.1" in out.stdout + out.stderr
    assert b"S3CRET" not in path.read_bytes()
    bad = subprocess.run([sys.executable, "run.py", "live", "--headless", "--base-url", "ftp://u:S3CRET@h/v1",
                          "--model", "m"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "S3CRET" not in bad.stderr


def test_scene_databases_and_logs_never_overwrite_a_recording(recorded, tmp_path):
    path, _ = recorded[8]
    before = file_digest(path)
    assert "is a MiroFish recording" in _cli_error("referential", "--headless", "--rounds", "3", "--glossary",
                                                   str(path))
    assert "is a MiroFish recording" in _cli_error("negotiation", "--headless", "--sessions", "1", "--db", str(path))
    assert "--overwrite" in _cli_error("referential", "--headless", "--rounds", "3", "--log", str(path))
    assert file_digest(path) == before


def test_losing_the_wal_after_a_crash_loses_seconds_not_the_run(tmp_path):
    path = tmp_path / "crash.db"
    proc = subprocess.Popen([sys.executable, "run.py", "live", "--headless", "--ticks", "10000000", "--seed", "4",
                             "--record", str(path)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(4.0)  # the writer checkpoints the WAL into the main file every 2 s
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    rec = Recording(path)
    assert rec.last_tick > 200  # seconds of work survive in the main file alone
    player = ReplaySession(rec)
    player.seek(rec.last_tick)
    live = LiveSession(load_config(seed=4))
    live.run(rec.last_tick)
    assert player.state_hash() == live.state_hash()
    # the lock of the killed run does not block the next one
    again = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "5", "--record", str(path),
                            "--overwrite"], capture_output=True, text=True, cwd=ROOT)
    assert again.returncode == 0, again.stderr


def test_an_edited_recording_says_modified_instead_of_replaying_something_else(recorded, tmp_path):
    path, _ = recorded[3]
    seed = edited(path, tmp_path / "seed.db", "UPDATE header SET value = '4' WHERE key = 'seed'")
    assert "modified" in _cli_error("replay", str(seed), "--headless")
    config = edited(path, tmp_path / "config.db",
                    """UPDATE header SET value = json_set(value, '$.food.spawn_rate', 0.001) WHERE key = 'config'""")
    assert "modified" in _cli_error("replay", str(config), "--headless")
    chunk = tmp_path / "chunk.db"
    shutil.copy(path, chunk)
    with sqlite3.connect(chunk) as db:
        tick0, data = db.execute("SELECT tick0, data FROM chunks WHERE tick0 > 200 ORDER BY tick0").fetchone()
        from mirofish.observe.recording import decode_columns, encode_columns

        cols, texts = decode_columns(data)
        if len(cols["goal"]):
            cols["goal"][0] = (int(cols["goal"][0]) % 5) + 1  # a different plan, validly encoded
        cols["ticks"][0, 1] += 1.0
        db.execute("UPDATE chunks SET data = ? WHERE tick0 = ?", (encode_columns(cols, texts), tick0))
    assert "modified" in _cli_error("report", str(chunk), "--fish", "1")
    assert Recording(path).header["checksum"]  # the untouched file verifies


def test_outputs_never_replace_something_that_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for args in (["live", "--headless", "--ticks", "3", "--record", str(fifo), "--overwrite"],
                 ["referential", "--headless", "--rounds", "2", "--log", str(fifo), "--overwrite"]):
        assert "not a regular file" in _cli_error(*args)
    assert fifo.exists() and not fifo.is_file()  # still the pipe it was
