"""The one small protocol every scene follows (STYLE: pygame_gui's handle_event/update/draw).

View side: ``handle_event(event)``, ``update(dt)`` (dt in seconds of wall time), ``draw(surface)``.
Model side: ``reset(seed)``, ``step()`` (one tick), ``snapshot()`` (a JSON-ready state).
The window's scene switcher (key S) cycles through the scenes the command line hands it.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable


@runtime_checkable
class Scene(Protocol):
    title: str

    def handle_event(self, event: Any) -> None: ...

    def update(self, dt: float) -> None: ...

    def draw(self, surface: Any) -> None: ...

    def reset(self, seed: int) -> None: ...

    def step(self) -> None: ...

    def snapshot(self) -> Any: ...

    def close(self) -> None: ...


class PacedScene:
    """Shared timing and keys of the alternate scenes: Space pause, "." one step, +/- speed.
    Subclasses provide ``step()``; one step happens per simulated tick (0.5 s at 1×)."""

    def __init__(self) -> None:
        from ..pacing import Pacer

        self.pacer = Pacer(0.5)
        self._t = 0.0

    def handle_event(self, event: Any) -> None:
        import pygame

        from ..pacing import clamp_speed

        if event.type != pygame.KEYDOWN:
            return
        if event.key == pygame.K_SPACE:
            self.pacer.paused = not self.pacer.paused
            self.pacer.restart()
        elif event.key == pygame.K_PERIOD:
            self.pacer.paused = True
            self.step()
        elif event.key in (pygame.K_PLUS, pygame.K_EQUALS, pygame.K_KP_PLUS):
            self.pacer.speed = clamp_speed(self.pacer.speed * 2)
        elif event.key in (pygame.K_MINUS, pygame.K_KP_MINUS):
            self.pacer.speed = clamp_speed(self.pacer.speed / 2)

    def update(self, dt: float) -> None:
        self._t += dt
        for _ in range(self.pacer.due(self._t, 64)):
            self.step()

