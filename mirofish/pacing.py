"""Realtime pacing shared by the live engine and the replay player (no clock of its own)."""

from __future__ import annotations

MIN_SPEED, MAX_SPEED = 0.25, 64.0


class Pacer:
    """Turns clock readings into a number of ticks due at ``speed``× simulated time."""

    def __init__(self, tick_seconds: float, speed: float = 1.0):
        self.tick_seconds = tick_seconds
        self.speed = clamp_speed(speed)
        self.paused = False
        self._debt = 0.0
        self._last: float | None = None

    def due(self, now: float, max_ticks: int) -> int:
        """Ticks to run now (the first call, and any call while paused, only sets the clock)."""
        if self._last is None or self.paused:
            self._last = now
            return 0
        self._debt = min(self._debt + (now - self._last) * self.speed / self.tick_seconds, max_ticks)
        self._last = now
        n = int(self._debt)
        self._debt -= n
        return n

    def restart(self) -> None:
        self._last = None
        self._debt = 0.0


def clamp_speed(speed: float) -> float:
    return min(MAX_SPEED, max(MIN_SPEED, float(speed)))
