"""One call of someone else's code on a watchdog thread (a user's brain, memory or outcome).

:func:`call` runs ``fn()`` on a daemon thread and waits at most ``seconds``: ``("ok", result)``,
``("raised", exception)`` — anything it raises, ``SystemExit`` and a ``KeyboardInterrupt`` it
raises itself included — or ``("late", None)`` when it has not returned (the thread is left
running: Python cannot stop it). The person's own Ctrl-C still reaches the waiting thread. A
caller may be told, once, that the call is still running after some seconds (``waiting``).
Imports nothing of the package.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def call(fn: Callable[[], Any], seconds: float, name: str = "mirofish-watchdog",
         waiting: tuple[float, Callable[[], None]] | None = None) -> tuple[str, Any]:
    """``waiting``: (after, say) — ``say()`` once when ``fn`` is still running ``after`` seconds in
    (and ``after`` is under ``seconds``), so that a long wait is not a silent one."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["out"] = fn()
        except BaseException as exc:  # noqa: BLE001 — someone else's code: whatever it raises is reported
            box["exc"] = exc

    t = threading.Thread(target=run, name=name, daemon=True)
    t.start()
    if waiting is not None and 0 <= waiting[0] < seconds:
        t.join(waiting[0])
        if t.is_alive():
            waiting[1]()
            t.join(seconds - waiting[0])
    else:
        t.join(seconds)
    if t.is_alive():
        return "late", None
    if "exc" in box:
        return "raised", box["exc"]
    return "ok", box.get("out")
