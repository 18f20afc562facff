"""Clips: a stretch of a recording drawn as the window draws it, into a GIF or an MP4."""

from __future__ import annotations

import json
import subprocess
import sys

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
