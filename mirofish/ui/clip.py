"""Clips to share: a stretch of a recording drawn offscreen, as the window draws it, into an
animated GIF or an MP4 (``python run.py clip REC --from T1 --to T2 --out demo.gif``).

Frames come from the same code as the window — an :class:`~mirofish.ui.scenes.aquarium.AquariumScene`
over a :class:`~mirofish.session.ReplaySession`, with its smooth motion between ticks — or,
with ``hud=False``, from the tank renderer alone. Writing them needs the optional extra
``clips`` (``pip install -e '.[clips]'``):

* GIF: Pillow — the well-kept image library; one palette for the whole clip (taken from its
  first frame), so each frame stores only what changed.
* MP4: imageio-ffmpeg — a pinned ffmpeg binary for Linux, macOS and Windows in a wheel, so no
  system ffmpeg is needed; H.264, yuv420p (plays in browsers, VLC and slide decks).

Why not imageio itself: its ffmpeg plugin is imageio-ffmpeg underneath; the two writers here
are each a few lines on the library that does the work.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

FPS = 20  # frames per second of a clip
FORMATS = (".gif", ".mp4")
MAX_FRAMES = 200_000  # 2.8 hours of clip: frames are streamed (memory stays flat), but a longer one is a mistake


class ClipError(Exception):
    """A clip that cannot be made (a missing extra, a bad range); the message is one line."""


def _writer(out: Path, size: tuple[int, int], fps: int):
    """(write(frame_rgb_bytes), close()) for ``out``'s format, or ClipError naming the missing extra."""
    if out.suffix.lower() == ".gif":
        try:
            from PIL import GifImagePlugin, Image
        except ImportError:
            raise ClipError("GIF clips need Pillow: pip install -e '.[clips]'") from None
        return _gif_writer(out, size, fps, Image, GifImagePlugin)
    try:
        import imageio_ffmpeg
    except ImportError:
        raise ClipError("MP4 clips need imageio-ffmpeg: pip install -e '.[clips]'") from None
    gen = imageio_ffmpeg.write_frames(str(out), size, fps=fps, codec="libx264", pix_fmt_in="rgb24",
                                      pix_fmt_out="yuv420p", quality=7, macro_block_size=2,
                                      ffmpeg_log_level="error")
    gen.send(None)
    return gen.send, gen.close


def _gif_writer(out: Path, size: tuple[int, int], fps: int, Image, GifImagePlugin):
    """A GIF written frame by frame as the frames come (memory stays that of one frame, however
    long the clip): one palette for the whole clip, taken from the first frame, and each later
    frame only the rectangle where it differs from the one before (the rest stays on screen)."""
    import numpy as np

    fh = open(out, "wb")  # noqa: SIM115 — open across write() calls; close() (or the caller's cleanup) ends it
    duration = int(round(1000 / fps))
    first: list = []  # the first frame, quantized: its palette is every frame's
    prev: list[np.ndarray] = []

    def write(rgb: bytes) -> None:
        img = Image.frombytes("RGB", size, rgb)
        if not first:
            q = img.quantize(colors=160, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
            header, _ = GifImagePlugin.getheader(q, info={"loop": 0})
            for chunk in header:
                fh.write(chunk)
            first.append(q)
            box = (0, 0, *size)
        else:
            q = img.quantize(palette=first[0], dither=Image.Dither.NONE)
            changed = np.asarray(q) != prev[0]
            rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
            box = (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1) if rows.size else (0, 0, 1, 1)
        part = q if box == (0, 0, *size) else q.crop(box)
        for chunk in GifImagePlugin.getdata(part, box[:2], duration=duration, disposal=1):
            fh.write(chunk)
        prev[:] = [np.asarray(q)]

    def close() -> None:
        if not fh.closed:
            fh.write(b";")  # the trailer
            fh.close()

    return write, close


def make_clip(recording, out, t_from: int | None = None, t_to: int | None = None, follow: int | None = None,
              speed: float = 4.0, size: tuple[int, int] = (1280, 720), hud: bool = True, zoom: float = 1.0,
              overwrite: bool = False, progress=None) -> dict:
    """Render ticks ``[t_from, t_to)`` of ``recording`` to ``out`` (.gif or .mp4) at ``speed``×
    (simulated seconds per clip second; a tick is ``world.tick_seconds``). ``size``: the window
    drawn; with ``hud=False`` only its tank, cropped. ``follow``: the fish ringed and followed
    (its panel shown with ``hud``; centred when ``zoom`` > 1). Returns ``{"out", "frames",
    "ticks", "seconds", "size", "bytes", "render_fps"}``."""
    from ..observe.paths import OutputError, check_output
    from ..observe.recording import Recording, RecordingError

    out = Path(out)
    if out.suffix.lower() not in FORMATS:
        raise ClipError(f"--out {out}: a clip is a .gif or an .mp4")
    try:
        check_output(out, (recording,), overwrite, "clip")
    except OutputError as exc:
        raise ClipError(str(exc)) from None
    try:
        rec = Recording(recording)
    except RecordingError as exc:
        raise ClipError(str(exc)) from None
    try:
        t0 = rec.first_tick if t_from is None else t_from
        t1 = rec.last_tick if t_to is None else t_to
        if not rec.first_tick <= t0 < t1 <= rec.last_tick:
            raise ClipError(f"--from {t0} --to {t1}: the recording holds ticks {rec.first_tick}..{rec.last_tick}")
        frames = round((t1 - t0) * rec.config.world.tick_seconds * FPS / speed)
        if frames > MAX_FRAMES:
            raise ClipError(f"--from {t0} --to {t1} at --speed {speed:g} makes {frames:,} frames "
                            f"({frames / FPS / 3600:.1f} h of clip); at most {MAX_FRAMES:,}: a shorter range or "
                            "a higher --speed")
        if follow is not None and not 0 <= follow < rec.config.fish.slots:
            raise ClipError(f"--follow {follow}: this tank has fish 0..{rec.config.fish.slots - 1}")
        return _render(rec, out, t0, t1, follow, speed, size, hud, zoom, progress)
    except RecordingError as exc:
        raise ClipError(str(exc)) from None
    finally:
        rec.close()


def _render(rec, out: Path, t0: int, t1: int, follow: int | None, speed: float, size: tuple[int, int], hud: bool,
            zoom: float, progress) -> dict:
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import pygame

    from ..session import ReplaySession
    from .app import App
    from .scenes.aquarium import AquariumScene

    session = ReplaySession(rec)
    scene = AquariumScene(session)
    app = App([scene], size, offscreen=True)
    try:
        surface = app.canvas()
        scene.seek(t0)
        scene.pacer.paused = False  # drawn as playing, at the clip's speed
        scene.set_speed(speed)
        scene.selected = follow
        scene.show_fov = follow is not None
        scene.chrome = False  # no buttons or key hints in a video
        scene.draw(surface)  # lays the window out
        if zoom > 1.0:  # zoomed around the middle, or kept on the followed fish
            scene.zoom_at(scene.rects["tank"].center, zoom)
            scene.pane.centred = follow is not None
            scene.draw(surface)
        crop = surface.get_rect() if hud else scene.renderer.rect.clip(surface.get_rect())
        frame_size = (crop.w - crop.w % 2, crop.h - crop.h % 2)  # H.264 wants even sides
        crop.size = frame_size
        write, close = _writer(out, frame_size, FPS)  # a missing extra is said before any frame is drawn
        started = time.perf_counter()
        ticks_per_frame = speed / rec.config.world.tick_seconds / FPS
        frames, clock = 0, 0.0
        try:
            while scene.tick < t1:
                clock += ticks_per_frame
                while clock >= 1.0 and scene.tick < t1:
                    clock -= 1.0
                    scene.step()
                scene._alpha = min(1.0, clock) if ticks_per_frame < 1.0 else 1.0  # the window's motion between ticks
                scene.message = ""
                scene.draw(surface)
                write(pygame.image.tobytes(surface.subsurface(crop), "RGB"))
                frames += 1
                if progress is not None:
                    progress(scene.tick - t0, t1 - t0)
        except BaseException:
            try:
                close()
            finally:
                out.unlink(missing_ok=True)  # never a half-written clip left behind
            raise
        close()
        took = time.perf_counter() - started
    finally:
        app.close()
        session.close()
    return {"out": str(out), "frames": frames, "ticks": t1 - t0, "seconds": round(frames / FPS, 2),
            "size": list(frame_size), "bytes": out.stat().st_size, "render_fps": round(frames / max(took, 1e-9), 1)}
