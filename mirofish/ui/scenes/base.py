"""The view side of the one small protocol every scene follows (STYLE: pygame_gui's
handle_event/update/draw), and the shared timing and keys of the alternate scenes.

View side: ``handle_event(event)``, ``update(dt)`` (dt in seconds of wall time), ``draw(surface)``.
Model side (:class:`mirofish.scenes.base.SceneModel`): ``reset(seed)``, ``step()`` (one
tick), ``snapshot()`` (a JSON-ready state), ``close()``.
The window's scene switcher (key S) cycles through the scenes the command line hands it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ...scenes.base import SceneModel
from .. import theme
from ..keys import Row, dispatch, help_lines, paced_keys
from ..panels import draw_help


@runtime_checkable
class Scene(SceneModel, Protocol):
    def handle_event(self, event: Any) -> bool:
        """Whether the scene consumed ``event`` (the window takes S and Q only when it did not)."""
        ...

    def update(self, dt: float) -> None: ...

    def draw(self, surface: Any) -> None: ...


class PacedScene:
    """Shared timing and keys of the alternate scenes: Space pause, "." one step, +/- speed.
    Subclasses provide ``step()`` and ``draw_scene(surface)``; one step happens per simulated
    tick (0.5 s at 1×).

    With model agents (``uses_model``) a step waits on a server, so it runs on a worker
    thread: the window keeps drawing — the last complete frame, with "thinking…" — and
    handling keys at full frame rate until the step is done; the scene's state is only read
    between steps, never while one runs."""

    uses_model = False
    title = "Scene"
    # The scene's own lines of its help overlay (H), in plain words: what you see (ui/keys.Line)
    # and its keys (ui/keys.Binding: what they do, too); the keys every scene has follow (keys).
    help_lines: tuple[Row, ...] = ()
    show_help = False
    switchable = True  # S goes to the next scene (a replay's window has none)

    def __init__(self) -> None:
        from ...pacing import Pacer

        self.pacer = Pacer(0.5)
        self._t = 0.0
        self._pending: Any = None  # the running step (a Future), model scenes only
        self._executor: Any = None
        self._last_frame: Any = None
        self.thinking_frames = 0  # frames drawn while a model step ran (tests read it)

    def step(self) -> Any:
        raise NotImplementedError

    def layout(self, size: tuple[int, int]) -> dict:
        """The scene's boxes for a window of ``size`` (scenes define theirs)."""
        return {}

    def begin_frame(self, surf: Any) -> tuple[int, int, dict]:
        """Clear the frame and lay the scene out for its size: (width, height, boxes)."""
        surf.fill(theme.PANEL)
        w, h = surf.get_size()
        self.rects = self.layout((w, h))
        return w, h, self.rects

    def widget_rects(self) -> dict:
        """Every box drawn last frame (the layout test checks them)."""
        return dict(getattr(self, "rects", {}))

    def draw_scene(self, surface: Any) -> None:
        raise NotImplementedError

    @property
    def thinking(self) -> bool:
        return self._pending is not None and not self._pending.done()

    def _step_now(self) -> None:
        if not self.uses_model:
            self.step()
        elif not self.thinking:
            self._collect()
            if self._executor is None:
                from concurrent.futures import ThreadPoolExecutor

                self._executor = ThreadPoolExecutor(1, thread_name_prefix="mirofish-scene-step")
            self._pending = self._executor.submit(self.step)

    def _collect(self) -> None:
        """Take a finished step (re-raising what it raised)."""
        if self._pending is not None and self._pending.done():
            pending, self._pending = self._pending, None
            pending.result()

    @property
    def keys(self) -> tuple[Row, ...]:
        """The scene's whole table of keys: its own lines, then the shared run and help keys."""
        return (*self.help_lines, *paced_keys(self.switchable))

    def handle_event(self, event: Any) -> bool:
        return dispatch(self.keys, self, event)

    def update(self, dt: float) -> None:
        self._t += dt
        due = self.pacer.due(self._t, 64)
        if self.uses_model:
            if not self.thinking:
                self._collect()
                if due:
                    self._step_now()
            return
        for _ in range(due):
            self.step()

    def draw(self, surface: Any) -> None:
        if self.thinking and self._last_frame is not None and self._last_frame.get_size() == surface.get_size():
            surface.blit(self._last_frame, (0, 0))
            badge = theme.text("the model is thinking…", 20, theme.WARN)
            surface.blit(badge, (surface.get_width() - badge.get_width() - 24, 20))
            self.thinking_frames += 1
            return
        self.draw_scene(surface)
        if self.uses_model:
            self._last_frame = surface.copy()
        if self.show_help:
            draw_help(surface, help_lines(self.keys), f"{self.title}: what you see")

    def close_worker(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
