"""The run keys every scene shares (the aquarium and the alternate scenes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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
