"""A circuit breaker per model tier: stop asking a server that keeps failing, probe it now and then.

States: ``closed`` (calls go through), ``open`` (calls fail at once with ``breaker_open``;
the fallback answers), ``half_open`` (the cooldown is over: one probe call may go). The
breaker opens after ``failures`` consecutive server failures; a failed probe opens it again
for twice as long (up to 32×), so a server that hangs costs one probe's wait ever more
rarely; a success closes it.

In lockstep the cooldown is counted in ticks (``tick_seconds`` given): wall seconds would
hand a fast headless run's ticks to the fallback for a whole outage. Either way a probe may go
at the latest :data:`PROBE_CAP_S` wall seconds after the breaker opened, so a server that
comes back is used again within about that long, however slowly the ticks pass.

``say`` (optional) gets one line when the breaker opens after failures (the server stopped
answering) and one when a call succeeds after it had opened (the server is back).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .transport import Failure

T = TypeVar("T")
MAX_BACKOFF = 32
PROBE_CAP_S = 10.0  # the longest wall time between an opening (or a failed probe) and the next probe


class Breaker:
    def __init__(self, failures: int, cooldown_s: float, tick_seconds: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.threshold, self.cooldown_s, self.tick_seconds, self.clock = failures, cooldown_s, tick_seconds, clock
        self.failures = 0
        self.backoff = 1  # cooldown multiplier: doubles each time a half-open probe fails
        self.open_until = 0.0  # wall clock; 0 = never opened since the last success
        self.open_until_tick = -1  # lockstep: open until this tick
        self.probing = False
        self.name = "model server"  # how its lines name it
        self.say: Callable[[str], None] | None = None
        self.down_since: float | None = None  # wall clock of the opening its line announced

    def state(self, tick: int | None = None) -> str:
        """closed, open or half_open. ``tick``: lockstep's current tick (cooldown in ticks)."""
        if self.open_until == 0.0:
            return "closed"
        if tick is not None and self.open_until_tick >= 0:
            # a probe may go once its ticks have passed, or at open_until (at most PROBE_CAP_S) whatever the ticks say
            return "open" if tick < self.open_until_tick and self.clock() < self.open_until else "half_open"
        return "open" if self.clock() < self.open_until else "half_open"

    def open(self, tick: int | None = None) -> None:
        """Open for the cooldown (× the backoff multiplier) from now."""
        cooldown = self.cooldown_s * self.backoff
        self.open_until = self.clock() + min(cooldown, PROBE_CAP_S)
        if self.down_since is None:
            self.down_since = self.clock()
        if self.tick_seconds is not None and tick is not None:
            self.open_until_tick = tick + max(1, round(cooldown / self.tick_seconds))

    def failed(self, tick: int | None = None, reason: str = "") -> None:
        """A server failure outside a probe: open after ``failures`` in a row."""
        self.failures += 1
        if self.failures >= self.threshold and not self.open_until:
            self.open(tick)  # (an open or half-open breaker is reopened by its failed probe)
            if self.say is not None:
                # a lockstep tick that gave up while the server had requests counts one failure, not one per
                # request (a server hung on one request fails every tick): said as ticks
                what = (f"{self.failures} ticks in a row gave up waiting for its answer, tick_timeout"
                        if reason == "tick_timeout" else f"{reason or 'failures'}, {self.failures} in a row")
                self.say(f"{self.name} {_doing(reason)} ({what}); "
                         f"fish use the instinct brain, and it is asked again at least every {PROBE_CAP_S:.0f} s")

    def succeeded(self, latency_s: float | None = None) -> None:
        """The server answered: closed again. ``latency_s``: how long that answer took — said in
        the "answers again" line, since a cold server's first completion can take most of the
        time it was down (a restarted one-slot llama.cpp server: 41 s and 85 s)."""
        if self.open_until and self.say is not None:
            since = self.down_since if self.down_since is not None else self.clock()
            took = f"; its first answer took {latency_s:.1f} s" if latency_s is not None else ""
            self.say(f"{self.name} answers again (down {self.clock() - since:.1f} s{took}); fish use the model again")
        self.failures, self.open_until, self.open_until_tick, self.backoff = 0, 0.0, -1, 1
        self.down_since = None

    def admit(self, tick: int | None = None) -> bool:
        """May a call go now? Returns whether it is the half-open probe; raises
        ``Failure("breaker_open")`` when it may not. Report its end with :meth:`outcome`."""
        state = self.state(tick)
        if state == "open" or (state == "half_open" and self.probing):
            raise Failure("breaker_open", server=False)
        probe = state == "half_open"
        self.probing = self.probing or probe
        return probe

    def outcome(self, ok: bool, probe: bool, tick: int | None = None, reason: str = "",
                latency_s: float | None = None) -> None:
        """How an admitted call ended: ``ok`` (the server answered, however late) closes the
        breaker; a failure counts, and a failed probe reopens it for twice as long."""
        if probe:
            self.probing = False
        if ok:
            self.succeeded(latency_s)
        elif probe:
            self.backoff = min(MAX_BACKOFF, self.backoff * 2)
            self.open(tick)
        else:
            self.failed(tick, reason)

    async def call(self, call: Awaitable[T], tick: int | None = None) -> T:
        """Await ``call`` if the breaker lets it through (:meth:`admit`); raises
        ``Failure("breaker_open")`` if not. Server failures count (:meth:`outcome`)."""
        try:
            probe = self.admit(tick)
        except Failure:
            close = getattr(call, "close", None)
            if close is not None:
                close()  # a coroutine that will never be awaited
            raise
        try:
            out = await call
        except Failure as failure:
            if failure.server:
                self.outcome(False, probe, tick, failure.reason)
            elif probe:
                self.probing = False
            raise
        except BaseException:
            if probe:
                self.probing = False
            raise
        self.outcome(True, probe, tick)
        return out


def _doing(reason: str) -> str:
    """What a server whose breaker opens is doing, in words: one that answers with a refusal (a
    429 asking to wait, an HTTP error, replies that are not completions) has not stopped answering."""
    if reason == "rate_limited":
        return "asks to be asked later"
    if reason.startswith(("http_", "reply_")):
        return "answers with errors"
    return "stopped answering"
