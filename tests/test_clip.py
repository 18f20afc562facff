"""Clips: a stretch of a recording drawn as the window draws it, into a GIF or an MP4."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zlib

import imageio_ffmpeg  # the clips extra, part of the dev install
import pytest
from conftest import record_run
from PIL import Image as PIL


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    return record_run(tmp_path_factory.mktemp("clip") / "run.db", seed=3, ticks=60)


def clip(*args):
    return subprocess.run([sys.executable, "-m", "mirofish", "clip", *map(str, args)], capture_output=True,
                          text=True, timeout=180, env={"SDL_VIDEODRIVER": "dummy", "PATH": "/usr/bin:/bin"})


def test_a_gif_clip_has_a_frame_per_step_of_the_stretch(recording, tmp_path):
    out = tmp_path / "a.gif"
    done = clip(recording, "--from", 20, "--to", 40, "--out", out, "--size", "640x400", "--follow", 3)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    img = PIL.open(out)
    # 20 ticks at 4x (8 ticks per clip second) and 20 frames a second: 50 frames, 2.5 s
    assert img.n_frames == result["frames"] == 50 and img.size == (640, 400)
    first, last = img.convert("RGB").tobytes(), None
    img.seek(img.n_frames - 1)
    last = img.convert("RGB").tobytes()
    assert first != last  # the fish moved


def test_an_mp4_clip_decodes_and_tank_only_is_smaller_than_the_window(recording, tmp_path):
    out = tmp_path / "a.mp4"
    done = clip(recording, "--from", 0, "--to", 16, "--out", out, "--no-hud", "--speed", 8)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["frames"] == 20 and result["size"][0] < 1280 and result["size"][0] % 2 == 0
    decoded = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(out), "-f", "null", "-"],
                             capture_output=True, text=True)
    assert decoded.returncode == 0 and not decoded.stderr
    frames = sum(1 for _ in imageio_ffmpeg.read_frames(str(out))) - 1  # the first item is the metadata
    assert frames == 20


@pytest.mark.parametrize("args, says", [
    (["--from", "50", "--to", "80"], "the recording holds ticks 0..60"),
    (["--out", "x.webm"], "a .gif or an .mp4"),
    (["--follow", "999"], "this tank has fish"),
])
def test_bad_clip_requests_get_one_line(recording, tmp_path, args, says):
    out = ["--out", str(tmp_path / "c.gif")] if "--out" not in args else []
    done = clip(recording, *args, *out)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_clip_never_overwrites_its_recording_or_a_file(recording, tmp_path):
    done = clip(recording, "--out", recording.with_suffix(".gif"))
    assert done.returncode == 0
    again = clip(recording, "--out", recording.with_suffix(".gif"))
    assert again.returncode == 2 and "--overwrite" in again.stderr


def test_without_the_extra_a_clip_is_one_line_naming_it(recording, tmp_path):
    blocked = ("import sys; sys.modules['PIL'] = None; sys.modules['imageio_ffmpeg'] = None; "
               "from mirofish.cli import main; sys.exit(main(sys.argv[1:]))")
    for name, extra in (("c.gif", "Pillow"), ("c.mp4", "imageio-ffmpeg")):
        done = subprocess.run([sys.executable, "-c", blocked, "clip", str(recording), "--out", str(tmp_path / name)],
                              capture_output=True, text=True, timeout=60, env={"SDL_VIDEODRIVER": "dummy"})
        assert done.returncode == 2 and extra in done.stderr and "[clips]" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / name).exists()


def test_a_clip_with_the_hud_has_no_buttons_or_key_hints(recording, tmp_path):
    """A video is watched, not clicked: the controls' strip and the footer are empty water-panel
    colour in every frame, while the HUD above them has its figures."""
    import os

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    from mirofish.session import ReplaySession
    from mirofish.ui.app import App
    from mirofish.ui.scenes.aquarium import AquariumScene

    out = tmp_path / "b.gif"
    assert clip(recording, "--from", 20, "--to", 24, "--out", out, "--size", "1280x720").returncode == 0
    scene = AquariumScene(ReplaySession(recording))  # the window's layout at that size
    app = App([scene], (1280, 720), offscreen=True)
    surf = app.canvas()
    scene.draw(surf)
    rects = {k: scene.rects[k] for k in ("controls", "footer", "hud")}
    app.close()
    img = PIL.open(out)
    for k in range(0, img.n_frames, 4):
        img.seek(k)
        frame = img.convert("RGB")
        for name in ("controls", "footer"):
            r = rects[name]
            assert len(frame.crop((r.x, r.y, r.right, r.bottom)).getcolors(1 << 20)) <= 2, (name, k)
        r = rects["hud"]
        assert len(frame.crop((r.x, r.y, r.right, r.bottom)).getcolors(1 << 20)) > 20


def test_a_10000_frame_gif_is_written_in_bounded_memory(recording, tmp_path):
    """Frames are streamed to the file: 10,000 of them (250 ticks at --speed 0.25, 40 frames a
    tick) keep the process under 300 MB (holding them all took gigabytes: a MemoryError), and
    the GIF reads back frame for frame."""
    import os

    long = record_run(tmp_path / "long.db", seed=3, ticks=260)
    out = tmp_path / "long.gif"
    proc = subprocess.Popen([sys.executable, "-m", "mirofish", "clip", str(long), "--from", "5", "--to", "255",
                             "--speed", "0.25", "--size", "640x400", "--no-hud", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"SDL_VIDEODRIVER": "dummy", "PATH": "/usr/bin:/bin"})
    stdout, stderr = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, stderr
    assert json.loads(stdout)["frames"] == 10_000
    assert usage.ru_maxrss / 1024 < 300, f"peak {usage.ru_maxrss / 1024:.0f} MB"
    img = PIL.open(out)
    assert img.n_frames == 10_000 and img.info["loop"] == 0
    img.seek(9_999)
    assert img.convert("RGB").getbbox() is not None


def test_a_clip_too_long_to_be_meant_is_refused_with_its_size(recording, tmp_path):
    out = tmp_path / "short.gif"
    done = clip(recording, "--from", 0, "--to", 10, "--speed", "0.25", "--size", "640x400", "--no-hud",
                "--out", out)  # 10 ticks at --speed 0.25: 400 frames, allowed …
    assert done.returncode == 0 and json.loads(done.stdout)["frames"] == 400, done.stderr
    from mirofish.ui import clip as clips

    low = clips.MAX_FRAMES
    try:
        clips.MAX_FRAMES = 100  # … and refused, with the count, under a lower limit (like a 3-hour clip)
        with pytest.raises(clips.ClipError, match=r"makes 400 frames .* at most 100"):
            clips.make_clip(recording, tmp_path / "b.gif", 0, 10, speed=0.25)
    finally:
        clips.MAX_FRAMES = low
    assert not (tmp_path / "b.gif").exists()


# ---------------------------------------------------------------- damaged recordings
# A clip of a recording that does not replay used to draw the tick it stopped at forever (the
# window keeps a divergence as its alarm and steps no further) and ignored SIGTERM (SDL turned it
# into a quit event nobody read), leaving a growing GIF. Each case below is edited and re-sealed
# with a fresh checksum (as tests/test_fuzz.py does), so only the replay itself can tell.

def _chunks(change, with_tick=False):
    """Every chunk's columns through ``change(arrays)`` (``with_tick``: ``change(arrays, tick0)``,
    the chunk's first tick), re-encoded."""
    from mirofish.observe.recording import decode_columns, encode_columns

    def edit(db):
        for tick0, blob in db.execute("SELECT tick0, data FROM chunks").fetchall():
            arrays, texts = decode_columns(blob)
            change(arrays, int(tick0)) if with_tick else change(arrays)
            db.execute("UPDATE chunks SET data = ? WHERE tick0 = ?", (encode_columns(arrays, texts), tick0))
    return edit


def _column(name, forge, from_tick=0):
    """Column ``name`` forged (``forge(values)``) in the decisions from ``from_tick`` on."""
    def change(arrays, tick0):  # ticks from the recording's start (a chunk's length follows the wall clock)
        values = arrays[name]
        late = tick0 + arrays["dt"].astype(int) >= from_tick if values.shape[:1] == arrays["dt"].shape \
            else slice(None)
        values[late] = forge(values[late]).astype(values.dtype)
    return _chunks(change, with_tick=True)


def _executed_from(tick):
    """The executed actions forged from tick ``tick`` on — counted from the recording's start, not
    from each chunk's (a chunk's length follows the wall clock: one simulated second or more)."""
    from mirofish.observe.recording import decode_columns, encode_columns

    def edit(db):
        for tick0, blob in db.execute("SELECT tick0, data FROM chunks").fetchall():
            arrays, texts = decode_columns(blob)
            rows = arrays["executed"]
            start = max(0, tick - int(tick0))
            if start < len(rows):
                rows[start:] = (rows[start:] + 1) % 5
                db.execute("UPDATE chunks SET data = ? WHERE tick0 = ?", (encode_columns(arrays, texts), tick0))
    return edit


def _hashes_inverted(arrays):
    arrays["hashes"][:, 4:] = 255 - arrays["hashes"][:, 4:]


def _fish_swapped(arrays):
    half = arrays["fish"].size // 2
    arrays["fish"][half:] = arrays["fish"][half:][::-1].copy()


def _config(key, change):
    def edit(db):
        cfg = json.loads(db.execute("SELECT value FROM header WHERE key = 'config'").fetchone()[0])
        *path, last = key.split(".")
        part = cfg
        for k in path:
            part = part[k]
        part[last] = change(part[last])
        db.execute("UPDATE header SET value = ? WHERE key = 'config'", (json.dumps(cfg),))
    return edit


def _keyframe_energy_halved(db):
    from mirofish.observe.recording import pack, unpack

    for tick, blob in db.execute("SELECT tick, data FROM keyframes").fetchall():
        arrays, extra = unpack(blob)
        arrays["fish.energy"] //= 2
        db.execute("UPDATE keyframes SET data = ? WHERE tick = ?", (pack(arrays, extra), tick))


def _last_exchanges(garble):
    """The exchanges of the last chunk that has any garbled (the clip draws the earlier ones first)."""
    def edit(db):
        tick0, data = db.execute("SELECT tick0, data FROM calls ORDER BY tick0 DESC LIMIT 1").fetchone()
        assert tick0 > 0
        db.execute("UPDATE calls SET data = ? WHERE tick0 = ?", (garble(data), tick0))
    return edit


def _flipped(data):
    b = bytearray(data)
    for k in range(10, len(b), 37):
        b[k] ^= 0x5A
    return bytes(b)


DAMAGED = {  # name: (the recording edited, the edit)
    "chunk_goals_forged_from_tick_30": ("plain", _column("goal", lambda g: (g + 1) % 4, from_tick=30)),
    "chunk_params_forged": ("plain", _column("param", lambda p: p + 7)),
    "chunk_horizons_forged": ("plain", _column("horizon", lambda h: h + 50)),
    "chunk_decisions_a_tick_late": ("plain", _column("dt", lambda d: d + 1)),
    "chunk_fish_swapped": ("plain", _chunks(_fish_swapped)),
    "chunk_executed_forged_from_tick_40": ("plain", _executed_from(40)),
    "chunk_state_hashes_forged": ("plain", _chunks(_hashes_inverted)),
    "keyframe_energy_halved": ("plain", _keyframe_energy_halved),
    "config_food_spawn_rate": ("plain", _config("food.spawn_rate", lambda v: v * 50)),
    "config_fish_move_cost": ("plain", _config("fish.move_cost", lambda v: v * 3)),
    "config_seed": ("plain", _config("seed", lambda v: v + 1)),
    "config_world_rocks": ("plain", _config("world.rocks", lambda v: v + 3)),
    "exchanges_bytes_garbled": ("model", _last_exchanges(_flipped)),
    "exchanges_truncated": ("model", _last_exchanges(lambda d: d[: len(d) // 2])),
    "exchanges_of_the_wrong_shape": ("model", _last_exchanges(lambda d: zlib.compress(b'["x", 1]'))),
    "exchanges_dictionary_missing": ("model", lambda db: db.execute("UPDATE calls SET dict = 'feedfacefeedface' "
                                                                    "WHERE tick0 = (SELECT MAX(tick0) FROM calls)")),
}


@pytest.fixture(scope="module")
def model_recording(tmp_path_factory):
    """A model run (the bundled test server) whose exchanges are kept in several chunks."""
    from mirofish.brains.testserver import TestServer
    from mirofish.config import load_config
    from mirofish.session import LiveSession

    path = tmp_path_factory.mktemp("clip-model") / "model.db"
    with TestServer() as server:
        cfg = load_config(**{"fish.count": 12, "brain.kind": "llm", "seed": 1,
                             "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini"}]})
        live = LiveSession(cfg)
        live.start_recording(path)
        live.run(40)
        live.close()
    return path


def damaged(source, path, edit):
    """A copy of ``source`` at ``path`` through ``edit(db)``, re-sealed with a fresh checksum."""
    from mirofish.observe.recording import content_digest

    shutil.copy(source, path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        edit(db)
        db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db)),))
        db.commit()
    return path


def clip_within(seconds, *args):
    """``clip`` in a subprocess that must end within ``seconds`` (a clip that spins is killed and fails)."""
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "mirofish", "clip", *map(str, args)], capture_output=True,
                              text=True, timeout=seconds, env={"SDL_VIDEODRIVER": "dummy", "PATH": "/usr/bin:/bin"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"clip {args} still running after {seconds} s")
    return done, time.monotonic() - started


def verify_says(path):
    """``replay --headless --verify``'s exit and line for ``path`` (in process)."""
    from mirofish.cli import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["replay", str(path), "--headless", "--verify"])
    return code, err.getvalue().strip()


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_clip_of_a_recording_that_does_not_replay_is_one_line_naming_the_tick(recording, model_recording,
                                                                                tmp_path, case):
    which, edit = DAMAGED[case]
    path = damaged(recording if which == "plain" else model_recording, tmp_path / "damaged.db", edit)
    code, said = verify_says(path)
    assert code == 2, (case, said)  # the case does not replay: replay --verify says so
    outs = tmp_path / "clips"
    outs.mkdir()
    done, took = clip_within(60, path, "--out", outs / "demo.gif", "--size", "640x400")
    err = done.stderr.strip()
    assert done.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, (case, done.stderr)
    named = re.search(r"\btick (\d+)\b", err)
    assert named, err
    said_tick = re.search(r"\btick (\d+)\b", said)
    if said_tick and "diverges" in said:  # the same tick as replay --verify
        assert named.group(1) == said_tick.group(1), (err, said)
    assert list(outs.iterdir()) == [], case  # no clip, no partial file
    assert took < 30, took


def test_damage_after_frames_were_written_leaves_no_file_and_keeps_an_old_one(recording, tmp_path):
    """The divergence at tick 30 comes 75 frames into the clip: the partial file goes, and with
    --overwrite the file already at --out stays as it was (the clip would have replaced it)."""
    path = damaged(recording, tmp_path / "damaged.db", DAMAGED["chunk_goals_forged_from_tick_30"][1])
    outs = tmp_path / "clips"
    outs.mkdir()
    (outs / "demo.gif").write_bytes(b"the clip made yesterday")
    done, _ = clip_within(60, path, "--out", outs / "demo.gif", "--size", "640x400", "--overwrite")
    assert done.returncode == 2 and re.search(r"at tick (3\d|[4-5]\d)\b", done.stderr), done.stderr
    assert [p.name for p in outs.iterdir()] == ["demo.gif"]
    assert (outs / "demo.gif").read_bytes() == b"the clip made yesterday"


def test_a_clip_starting_past_the_damage_says_so_before_any_frame(recording, tmp_path):
    """--from 30: the seek re-simulates from the keyframe at tick 0 and meets the forged hash at tick 9."""
    path = damaged(recording, tmp_path / "damaged.db", DAMAGED["chunk_state_hashes_forged"][1])
    done, _ = clip_within(60, path, "--from", 30, "--to", 40, "--out", tmp_path / "c.gif", "--size", "640x400")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("mirofish: replay diverges from the recording at tick 9 ("), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged.db"]


def test_an_intact_clip_leaves_only_its_file(recording, tmp_path):
    done, _ = clip_within(120, recording, "--from", 0, "--to", 8, "--out", tmp_path / "c.gif", "--size", "640x400")
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["c.gif"]  # written beside it, renamed into place
    assert PIL.open(tmp_path / "c.gif").n_frames == json.loads(done.stdout)["frames"] == 20


@pytest.mark.parametrize("sig, code, fmt", [(signal.SIGTERM, 143, "gif"), (signal.SIGINT, 130, "gif"),
                                            (signal.SIGTERM, 143, "mp4")])
def test_a_signal_stops_a_long_clip_at_once_and_leaves_no_file(recording, tmp_path, sig, code, fmt):
    """A clip of 2,400 frames at 1280×720 (60 ticks at --speed 0.25: half a minute of drawing),
    stopped once its file has begun: it ends within seconds, says so in one line, and leaves
    nothing at --out or beside it (ffmpeg's output included)."""
    outs = tmp_path / "clips"
    outs.mkdir()
    # the clip as a terminal starts it: Ctrl-C not ignored (a suite launched in the background by a
    # non-interactive shell ignores SIGINT, and a child inherits that: it would never see the signal)
    proc = subprocess.Popen([sys.executable, "-m", "mirofish", "clip", str(recording), "--speed", "0.25",
                             "--out", str(outs / f"long.{fmt}")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"SDL_VIDEODRIVER": "dummy", "PATH": "/usr/bin:/bin"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not any(p.stat().st_size > 0 for p in outs.iterdir()):  # it has started writing
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.05)
        proc.send_signal(sig)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert took < 5, f"{took:.1f} s after the signal"
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert list(outs.iterdir()) == []
