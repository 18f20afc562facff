"""What a fish's memory gives its prompt: the memory as a replaceable part (docs/memory.md).

The tank keeps every fish's raw events as integers (``fish.memory.ShortMemory``: the source's
ring of the last events, hashed with the state) and its periodic summaries
(``LongMemory``). A **memory** is the part that decides what of it a decision is told. It
is told each event as it happens and is asked, when a fish is asked for a decision, for the
text block of memories for this decision:

* ``remember(events)`` — the events of the tick just simulated (:class:`Events`: arrays of
  fish, tick, code and argument, and their words), called after every tick; optional;
* ``recall(fish, tick, view) -> (memories, summaries)`` — two lists of lines for the prompt
  (``memories``: "Recent memories", ``summaries``: "Long-term"), of which a prompt tells the
  newest within the token budget ``brain.memory_tokens`` (``brains.prompt.memory_block``);
* ``get_state()`` / ``set_state(state)`` — optional: what a rewind or an in-process copy
  keeps (a plain value; the default keeps nothing, its state is the tank's own).

Shipped: ``two_level`` (the default: the source's ring and its summaries with anchors, exactly
what prompts held before memories were a part, so every state hash and prompt is unchanged),
``none`` (no memories in the prompt: the ablation arm) and ``vector`` (retrieval by recency ×
importance × relevance with reflections: :mod:`mirofish.brains.vector_memory`). A memory of your own is
``memory.kind = "FILE.py:NAME"`` or ``"MODULE:NAME"`` (a class, made once per tank with
``(n_fish)``, or an object), or the name of an installed ``mirofish.memories`` entry point; it
is loaded by the session a person starts (``live``, a sweep's live runs), never because a
recording or a shared config names it: a replay or a fork of a recording uses ``two_level``
unless its command line names another memory. A memory that raises is a counted fallback
(``World.memory_fallbacks``): that decision gets the two-level block and the run goes on.

This module imports nothing of the package but ``fish.memory`` and ``watchdog``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .. import watchdog
from .memory import event_text

if TYPE_CHECKING:
    from ..world import World

BUILT_IN = ("two_level", "none")


@dataclass(frozen=True)
class Events:
    """The events of one tick, one row each (fish in ascending order, each fish's in the order
    they happened): ``fish``, ``tick``, ``code`` (``fish.memory``'s event codes), ``arg``."""

    fish: np.ndarray
    tick: np.ndarray
    code: np.ndarray
    arg: np.ndarray

    def __len__(self) -> int:
        return int(self.fish.size)

    def text(self, k: int) -> str:
        """Row ``k`` in the words a prompt uses (``"ate food, energy 61"``)."""
        return event_text(int(self.code[k]), int(self.arg[k]))


class Memory(Protocol):
    """What a memory implements (see the module doc); ``remember``, ``get_state`` and
    ``set_state`` are optional."""

    def recall(self, fish: int, tick: int, view: str) -> tuple[list[str], list[str]]: ...


class TwoLevel:
    """The source's two-level memory: the newest raw events of the ring and the summaries with
    their anchors, as the tank keeps them (the default)."""

    name = "two_level"

    def __init__(self, world: World):
        self._world = world

    def recall(self, fish: int, tick: int, view: str) -> tuple[list[str], list[str]]:
        w = self._world
        return list(w.school.memory.lines(fish)), list(w.summaries(fish))


class NoMemory:
    """No memories in the prompt (the ablation arm: what do the memories buy?)."""

    name = "none"

    def recall(self, fish: int, tick: int, view: str) -> tuple[list[str], list[str]]:
        return [], []


def new_events(world: World, seen: np.ndarray) -> Events:
    """The events the ring gained since ``seen`` (each fish's event count when last read; it is
    brought up to date). At most a ring's worth per fish (a ring holds the newest ``size``)."""
    m = world.school.memory
    count = np.asarray(m.count, np.int64)
    fresh = np.minimum(count - seen, m.size)
    fish = np.flatnonzero(fresh > 0)
    seen[:] = count
    if not fish.size:
        empty = np.zeros(0, np.int64)
        return Events(empty, empty, empty, empty)
    k = fresh[fish]
    rows = np.repeat(fish, k)
    # each fish's new slots, oldest first: count - k .. count - 1, modulo the ring
    offset = np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k)
    slots = (np.repeat(count[fish] - k, k) + offset) % m.size
    return Events(rows, m.tick[rows, slots].astype(np.int64), m.code[rows, slots].astype(np.int64),
                  m.arg[rows, slots].astype(np.int64))


RECALL_TIMEOUT_S = 5.0  # a memory of a person's own: longer than this, and it is not asked again this run


def _lines(got: Any) -> tuple[list[str], list[str]]:
    """A recall's answer as the prompt takes it: two lists of one-line strings (at most 64 and 16)."""
    memories, summaries = got
    for part in (memories, summaries):
        if isinstance(part, (str, bytes)) or not isinstance(part, (list, tuple)):
            raise TypeError(f"recall returns (memories, summaries), two lists of lines, not {type(part).__name__}")
    return ([" ".join(str(x).split())[:500] for x in memories[:64]],
            [" ".join(str(x).split())[:500] for x in summaries[:16]])


class Guarded:
    """A memory held so that one that raises, answers the wrong shape or hangs costs a counted
    fallback (the two-level block for that decision), never the run. ``timeout_s`` (a memory of
    a person's own): each call runs on a watchdog thread, and one that does not return in time
    is not asked again this run; None (shipped code): called directly. ``problems``: the first
    few, in words; ``fallbacks``: decisions told the two-level memory instead;
    ``remember_failures``: ticks whose events it could not take."""

    def __init__(self, inner: Any, fallback: TwoLevel, name: str, timeout_s: float | None = None):
        self.inner, self.fallback, self.name, self.timeout_s = inner, fallback, name, timeout_s
        self.own_fallbacks = self.remember_failures = 0
        self.own_problems: list[str] = []
        self.given_up = False
        self.wants_events = callable(getattr(inner, "remember", None))

    @property
    def fallbacks(self) -> int:
        return self.own_fallbacks + int(getattr(self.inner, "fallbacks", 0) or 0)

    @property
    def problems(self) -> list[str]:
        return self.own_problems + list(getattr(self.inner, "problems", []) or [])

    def _problem(self, text: str) -> None:
        if len(self.own_problems) < 5:
            self.own_problems.append(f"memory {self.name}: {text}"[:300])

    def _call(self, what: str, fn: Any) -> tuple[bool, Any]:
        """(True, ``fn()``), or (False, None) with the problem noted."""
        if self.timeout_s is None:
            try:
                return True, fn()
            except Exception as exc:  # noqa: BLE001 — counted, the tank goes on
                self._problem(f"{what} raised {type(exc).__name__}: {exc}")
                return False, None
        status, out = watchdog.call(fn, self.timeout_s, "mirofish-memory-watchdog")
        if status == "late":
            self.given_up = True
            self._problem(f"{what} did not return within {self.timeout_s:g} s: not asked again this run")
            return False, None
        if status == "raised":
            self._problem(f"{what} raised {type(out).__name__}: {out}")
            return False, None
        return True, out

    def remember(self, events: Events) -> None:
        if not self.wants_events or self.given_up:
            return
        ok, _ = self._call("remember", lambda: self.inner.remember(events))
        self.remember_failures += not ok

    def recall(self, fish: int, tick: int, view: str) -> tuple[list[str], list[str]]:
        if not self.given_up:
            ok, got = self._call("recall", lambda: _lines(self.inner.recall(fish, tick, view)))
            if ok:
                memories, summaries = got
                return memories, summaries
        self.own_fallbacks += 1
        return self.fallback.recall(fish, tick, view)

    def recalled(self, fish: int) -> tuple[tuple[int, float], ...]:
        """What the memory says it recalled for ``fish``'s last decision ((item id, score) pairs;
        () when it does not say, or says something else)."""
        which = getattr(self.inner, "recalled", None)
        if not callable(which) or self.given_up:
            return ()
        ok, got = self._call("recalled", lambda: tuple((int(k), float(s)) for k, s in which(fish))[:64])
        return got if ok else ()

    def get_state(self) -> Any:
        get = getattr(self.inner, "get_state", None)
        if not callable(get) or self.given_up:
            return None
        ok, got = self._call("get_state", get)
        return got if ok else None

    def set_state(self, state: Any) -> None:
        put = getattr(self.inner, "set_state", None)
        if callable(put) and state is not None and not self.given_up:
            self._call("set_state", lambda: put(state))
