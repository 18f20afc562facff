"""Clips to share: a stretch of a recording drawn offscreen with the window's drawing code into
an animated GIF or an MP4 (``python run.py clip REC --from T1 --to T2 --out demo.gif``).

Decision: a clip shows the **whole tank** (at the largest whole size that fits, 8 px a cell at
1280×720), not the window's follow camera (20 px a cell, gliding after the school): a clip is
watched without the minimap that says where a camera is, and what it is shared for — schools
forming, a fork diverging — happens across the tank. ``--zoom Z`` comes closer (around the
middle, or around the fish ``--follow N`` rings). The help and docs/live-past.md say so
(they said "as the window shows it", which a replay at 20 px is not).

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

A clip is checked as it is drawn, as ``replay`` checks: every re-simulated tick against the
recorded actions and the kept state hashes (:func:`~mirofish.session.replay.replay_check`). A
recording that does not replay stops the clip with one line naming the tick (:class:`ClipError`),
and every tick must advance the replay by one, so no loop outlives ``[t_from, t_to)``. Frames go
to a hidden file beside ``out`` (``.NAME.PID.part.gif``), renamed into place only when the clip is
complete; a clip that stops — an error, Ctrl-C, SIGTERM (:class:`Terminated`) — removes it and
leaves any file already at ``out`` as it was.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

FPS = 20  # frames per second of a clip
FORMATS = (".gif", ".mp4")
MAX_FRAMES = 200_000  # 2.8 hours of clip: frames are streamed (memory stays flat), but a longer one is a mistake


class ClipError(Exception):
    """A clip that cannot be made (a missing extra, a bad range, a recording that does not
    replay); the message is one line."""


class Terminated(BaseException):
    """SIGTERM during a clip: raised where the clip is, like KeyboardInterrupt for Ctrl-C, so that
    the partial file is removed (the command line exits 143)."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__(signum)
        self.signum = signum


class _Abort(BaseException):
    """Thrown into the MP4 writer to stop ffmpeg at once (imageio-ffmpeg kills it on a BaseException)."""


Writer = tuple[Callable[[bytes], None], Callable[[], None], Callable[[], None]]


def partial_name(out: Path) -> Path:
    """The hidden file beside ``out`` a clip is written to before it is renamed into place (its
    suffix kept: ffmpeg picks the container from it)."""
    return out.with_name(f".{out.stem}.{os.getpid()}.part{out.suffix}")


def _writer(out: Path, size: tuple[int, int], fps: int) -> Writer:
    """(write(frame_rgb_bytes), close(), abort()) for ``out``'s format, or ClipError naming the
    missing extra; ``abort`` stops without finishing the file (its caller removes it)."""
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

    def abort() -> None:
        with contextlib.suppress(_Abort, StopIteration):
            gen.throw(_Abort())  # ffmpeg is killed, not waited for

    return gen.send, gen.close, abort


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

    return write, close, fh.close


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
        if t0 >= t1:
            raise ClipError(f"--from {t0} is not before --to {t1} (--to is the first tick left out)")
        if not rec.first_tick <= t0 < t1 <= rec.last_tick:
            raise ClipError(f"--from {t0} --to {t1}: the recording holds ticks {rec.first_tick}..{rec.last_tick} "
                            f"(--from {rec.first_tick}..{rec.last_tick - 1}, --to up to {rec.last_tick})")
        frames = round((t1 - t0) * rec.config.world.tick_seconds * FPS / speed)
        if frames > MAX_FRAMES:
            raise ClipError(f"--from {t0} --to {t1} at --speed {speed:g} makes {frames:,} frames "
                            f"({frames / FPS / 3600:.1f} h of clip); at most {MAX_FRAMES:,}: a shorter range or "
                            "a higher --speed")
        if follow is not None and not 0 <= follow < rec.config.fish.slots:
            raise ClipError(f"--follow {follow}: this tank has fish 0..{rec.config.fish.slots - 1}")
        with stoppable():
            return _render(rec, out, t0, t1, follow, speed, size, hud, zoom, progress)
    except RecordingError as exc:
        raise ClipError(str(exc)) from None
    finally:
        rec.close()


@contextlib.contextmanager
def stoppable() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` (once: a second one, while the clip cleans up, changes
    nothing), and a SIGINT nobody handles raises KeyboardInterrupt. Without this, SDL — started
    by pygame for the offscreen window — takes any signal left at its default and turns it into a
    quit event nobody reads: a clip went on writing. Handlers the caller set (the command line's
    Ctrl-C, an ignored signal) are kept; the main thread only (Python's rule for handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[int] = []

    def on_term(signum: int, frame: object) -> None:
        if not fired:
            fired.append(signum)
            raise Terminated(signum)

    previous = {}
    for sig, handler in ((signal.SIGTERM, on_term), (signal.SIGINT, signal.default_int_handler)):
        if signal.getsignal(sig) is signal.SIG_DFL:
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait while a frame is written or a partial clip is removed (they are
    delivered after)."""
    held = {signal.SIGINT, signal.SIGTERM}
    can = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held) if can else None
    try:
        yield
    finally:
        if before is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _discard(abort: Callable[[], None] | None, part: Path) -> None:
    """Stop the writer and remove the partial file, whatever the writer says on the way."""
    with _signals_held():
        try:
            if abort is not None:
                with contextlib.suppress(Exception):
                    abort()
        finally:
            part.unlink(missing_ok=True)


def _does_not_replay(rec, scene, tick: int, exc: Exception | None = None) -> ClipError:
    """The one line for a replay that stops at ``tick``: the replay's own when it names a tick
    ("replay diverges from the recording at tick T (…): REC", as ``replay`` and ``export`` say;
    "… model exchanges at tick T …"), else what it said with the tick it stopped at."""
    said = str(exc) if exc is not None else scene.message if scene.alarm else ""
    if re.search(r"\btick \d+\b", said):
        return ClipError(said)
    if said.endswith(f": {rec.path}"):  # "recording is damaged (…): REC"
        return ClipError(f"replay stops at tick {tick}: {said}")
    return ClipError(f"replay stops at tick {tick} ({said or 'it does not advance'}): {rec.path}")


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
        if scene.alarm or scene.tick != t0:  # the replay left its recording on the way to t0 (checked at once:
            raise _does_not_replay(rec, scene, scene.tick)  # setting the view up may replace the alarm's line)
        scene.pacer.paused = False  # drawn as playing, at the clip's speed
        scene.set_speed(speed)
        scene.selected = follow
        scene.show_fov = follow is not None
        scene.chrome = False  # no buttons or key hints in a video
        scene.reset_zoom()  # the whole tank (the window's camera would follow the school at 20 px)
        scene.draw(surface)  # lays the window out
        if zoom > 1.0:  # zoomed around the middle, or kept on the followed fish
            scene.zoom_at(scene.rects["tank"].center, zoom)
            scene.pane.centred = follow is not None
            scene.draw(surface)
        crop = surface.get_rect() if hud else scene.renderer.rect.clip(surface.get_rect())
        frame_size = (crop.w - crop.w % 2, crop.h - crop.h % 2)  # H.264 wants even sides
        crop.size = frame_size
        started = time.perf_counter()
        ticks_per_frame = speed / rec.config.world.tick_seconds / FPS
        most = math.ceil((t1 - t0) / ticks_per_frame) + 2  # frames the range can take, with rounding to spare
        frames, clock = 0, 0.0
        part, abort = partial_name(out), None
        try:
            write, close, abort = _writer(part, frame_size, FPS)  # a missing extra is said before any frame
            while scene.tick < t1:
                if frames >= most:
                    raise _does_not_replay(rec, scene, scene.tick)
                clock += ticks_per_frame
                while clock >= 1.0 and scene.tick < t1:
                    clock -= 1.0
                    before = scene.tick
                    try:
                        scene.step()
                    except ValueError as exc:  # recorded decisions the engine refuses (an action out of range)
                        raise _does_not_replay(rec, scene, before, exc) from None
                    if scene.alarm or scene.tick != before + 1:  # it diverged (the scene's alarm says where)
                        raise _does_not_replay(rec, scene, before)
                scene._alpha = min(1.0, clock) if ticks_per_frame < 1.0 else 1.0  # the window's motion between ticks
                scene.message = ""
                scene.draw(surface)
                rgb = pygame.image.tobytes(surface.subsurface(crop), "RGB")
                with _signals_held():  # a frame goes whole to the writer: a stop comes between frames (ffmpeg
                    write(rgb)  # read a cut frame as "Invalid buffer size" on the user's terminal)
                frames += 1
                if progress is not None:
                    progress(scene.tick - t0, t1 - t0)
            close()
            abort = None
            os.replace(part, out)  # complete: into place at once (never a half-written clip at --out)
        except OSError as exc:
            _discard(abort, part)
            raise ClipError(f"cannot write the clip {out}: {exc.strerror or exc}") from None
        except BaseException:
            _discard(abort, part)
            raise
        took = time.perf_counter() - started
    finally:
        app.close()
        session.close()
    return {"out": str(out), "frames": frames, "ticks": t1 - t0, "seconds": round(frames / FPS, 2),
            "size": list(frame_size), "bytes": out.stat().st_size, "render_fps": round(frames / max(took, 1e-9), 1)}
