"""The window: the canonical loop (events → update → draw → flip) around one scene at a time.

``run_window`` opens a resizable window (scaled to the display), or renders offscreen for
``--screenshot``/``--fps`` (works with ``SDL_VIDEODRIVER=dummy``).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame

from . import (
    WindowError,
    theme,
)
from .keys import APP_KEYS, dispatch
from .layout import MIN_SIZE

DEFAULT_SIZE = (1920, 1080)
NO_DISPLAY = ("no display to open a window on; add --terminal (the tank in this terminal) or --headless "
              "(a JSON run), or set DISPLAY")


def default_size(screen: tuple[int, int]) -> tuple[int, int]:
    """The window's size on a screen of ``screen``: the screen less 80×120 (its bars and the
    window's frame), at least 1000×600 (the smallest the layout is made for) but never larger
    than the screen, at most 1920×1080 — a 1024×600 netbook gets 1000×600."""
    w, h = screen
    return (min(DEFAULT_SIZE[0], w, max(MIN_SIZE[0], w - 80)), min(DEFAULT_SIZE[1], h, max(MIN_SIZE[1], h - 120)))


class App:
    """Owns the pygame window and the current scene; key S switches scenes and Q quits when
    the scene did not take the key (ui/keys.APP_KEYS)."""

    def __init__(self, scenes: list, size: tuple[int, int] | None = None, offscreen: bool = False):
        asked_driver = os.environ.get("SDL_VIDEODRIVER")
        if not offscreen and not asked_driver and sys.platform.startswith("linux") \
                and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            raise WindowError(NO_DISPLAY)
        if offscreen:
            os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        pygame.display.init()
        if not offscreen and not asked_driver and pygame.display.get_driver() in ("offscreen", "dummy"):
            # SDL found no display and fell back to an invisible one: say so instead of running unseen
            pygame.display.quit()
            raise WindowError(NO_DISPLAY)
        pygame.font.init()
        if size is None:
            info = pygame.display.Info()
            size = default_size((info.current_w or 1600, info.current_h or 900))
        flags = 0 if offscreen else pygame.RESIZABLE
        self.screen = pygame.display.set_mode(size, flags)
        self._canvas: pygame.Surface | None = None
        self._fit_canvas()
        pygame.display.set_caption("MiroFish")
        self.scenes = scenes
        self.index = 0
        self.running = True

    @property
    def scene(self):
        return self.scenes[self.index]

    LOGICAL = (1920, 1080)

    def _fit_canvas(self) -> None:
        """On a screen larger than 1920×1080 the scenes draw at 1920×1080-ish and the frame is
        scaled up, so text and widgets grow with the window instead of shrinking on it."""
        w, h = self.screen.get_size()
        scale = max(1.0, min(w / self.LOGICAL[0], h / self.LOGICAL[1]))
        theme.SCALE = scale
        self._canvas = pygame.Surface((round(w / scale), round(h / scale))) if scale > 1.0 else None

    def canvas(self) -> pygame.Surface:
        """Where scenes draw (the window itself up to 1920×1080)."""
        return self._canvas if self._canvas is not None else self.screen

    def _logical(self, event):
        """Mouse events in the coordinates the scenes draw in."""
        if theme.SCALE == 1.0 or not hasattr(event, "pos"):
            return event
        data = dict(event.dict)
        data["pos"] = (int(event.pos[0] / theme.SCALE), int(event.pos[1] / theme.SCALE))
        return pygame.event.Event(event.type, data)

    def handle(self, event) -> bool:
        """The window's events (closing it, a resize), then the scene's; the window's keys
        (S, Q) apply only when the scene did not consume the key (typing a question, a picker
        open). Returns whether the event was taken."""
        if event.type == pygame.QUIT:
            self.running = False
            return True
        if event.type == pygame.VIDEORESIZE:
            self.screen = pygame.display.set_mode(event.size, pygame.RESIZABLE)
            self._fit_canvas()
            return True
        taken = bool(self.scene.handle_event(self._logical(event)))
        if getattr(self.scene, "wants_quit", False):
            self.running = False
        return taken or dispatch(APP_KEYS, self, event, owner="app")

    def next_scene(self) -> bool:
        """S: the next scene, when there are several."""
        if len(self.scenes) < 2:
            return False
        self.index = (self.index + 1) % len(self.scenes)
        return True

    def quit(self) -> None:
        self.running = False

    def frame(self, dt: float) -> None:
        for event in pygame.event.get():
            self.handle(event)
        self.scene.update(dt)
        self.scene.draw(self.canvas())
        if self._canvas is not None:  # a whole factor (4K = 2×) stays crisp and fast unsmoothed
            whole = abs(theme.SCALE - round(theme.SCALE)) < 1e-6
            (pygame.transform.scale if whole else pygame.transform.smoothscale)(
                self._canvas, self.screen.get_size(), self.screen)
        pygame.display.flip()

    def run(self, frames: int | None = None, fixed_dt: float | None = None, fps_cap: int = 60,
            wall_paced: bool = False) -> list[float]:
        """Run until quit (or for ``frames`` frames); returns each frame's duration in ms.

        ``fixed_dt`` advances the scene by a fixed step per frame (offscreen automation);
        ``wall_paced`` then also waits that long, so a model server has real time to answer.
        """
        clock = pygame.time.Clock()
        times = []
        n = 0
        while self.running and (frames is None or n < frames):
            start = time.perf_counter()
            dt = fixed_dt if fixed_dt is not None else clock.tick(fps_cap) / 1000.0
            self.frame(dt)
            times.append((time.perf_counter() - start) * 1000)
            if wall_paced and fixed_dt:
                time.sleep(max(0.0, fixed_dt - (time.perf_counter() - start)))
            n += 1
        return times

    def screenshot(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:  # a real PNG whatever the file is called
            pygame.image.save(self.screen, fh, "png")

    def close(self) -> None:
        for scene in self.scenes:
            scene.close()
        theme.reset()
        pygame.quit()


def run_window(scene, screenshot: str | None = None, frames: int = 60, select: int | None = None,
               fps: bool = False, size: tuple[int, int] | None = None, keys: list[int] | None = None,
               more: list | None = None) -> int:
    """Open the window on ``scene`` (``more`` scenes behind it, key S); with ``screenshot`` or
    ``fps``, render offscreen and exit."""
    offscreen = bool(screenshot or fps)
    if select is not None:
        count = len(scene.view.x) if getattr(scene, "view", None) is not None else None
        if count is not None and select >= count:
            scene.close()
            raise WindowError(f"--select {select} does not exist (this tank has fish 0..{count - 1})")
    try:
        app = App([scene, *(more or [])], size or (DEFAULT_SIZE if offscreen else None), offscreen=offscreen)
    except WindowError:
        for s in [scene, *(more or [])]:
            s.close()
        raise
    except pygame.error as exc:
        scene.close()
        raise WindowError(f"cannot open a window ({exc}); use --terminal or --headless on a machine without a "
                          f"display") from None
    if select is not None:
        scene.selected = select
    try:
        if offscreen:
            for key in keys or []:
                pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode=""))
            model = getattr(getattr(scene, "cfg", None), "brain", None)
            wall = bool(screenshot) and model is not None and model.kind == "llm"
            times = app.run(frames=frames, fixed_dt=1 / 30 if screenshot else None, fps_cap=0, wall_paced=wall)
            if screenshot:
                app.screenshot(screenshot)
            if fps:
                body = times[min(10, len(times) // 4):] or times
                ordered = sorted(body)
                print(json.dumps({"fps_median": round(1000 / statistics.median(body), 1),
                                  "frame_ms_median": round(statistics.median(body), 2),
                                  "frame_ms_p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
                                  "frames": len(times), "fish": _in_water(scene.view),
                                  "size": list(app.screen.get_size())}))
        else:
            app.run()
    finally:
        app.close()
    return 0


__all__ = ["App", "run_window", "theme"]


def _in_water(view) -> int:
    """Fish in the water in a tank view (not the room kept for fish added later)."""
    return int(len(view.x) if view.present is None else view.present.sum())
