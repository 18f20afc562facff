"""The one small protocol every scene follows (STYLE: pygame_gui's handle_event/update/draw).

View side: ``handle_event(event)``, ``update(dt)`` (dt in seconds of wall time), ``draw(surface)``.
Model side: ``reset(seed)``, ``step()`` (one tick), ``snapshot()`` (a JSON-ready state).
The window's scene switcher (key S) cycles through the scenes the command line hands it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable


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

    def step(self) -> Any:
        raise NotImplementedError

    def handle_event(self, event: Any) -> None:
        import pygame

        if event.type == pygame.KEYDOWN:
            pacing_key(event.key, self.pacer, self.step)

    def update(self, dt: float) -> None:
        self._t += dt
        for _ in range(self.pacer.due(self._t, 64)):
            self.step()


def pacing_key(key: int, pacer: Any, step: Callable[[], Any]) -> bool:
    """The run keys every scene shares: Space pause/play, "." one step (and pause), +/- speed
    ×2 / ÷2 (¼× … 64×). Returns whether ``key`` was one of them."""
    import pygame

    from ..pacing import clamp_speed

    if key == pygame.K_SPACE:
        pacer.paused = not pacer.paused
        pacer.restart()
    elif key == pygame.K_PERIOD:
        pacer.paused = True
        step()
    elif key in (pygame.K_PLUS, pygame.K_EQUALS, pygame.K_KP_PLUS):
        pacer.speed = clamp_speed(pacer.speed * 2)
    elif key in (pygame.K_MINUS, pygame.K_KP_MINUS):
        pacer.speed = clamp_speed(pacer.speed / 2)
    else:
        return False
    return True
