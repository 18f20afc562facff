"""What a fish's memory gives its prompt: the memory as a replaceable part (docs/memory.md).

The tank keeps every fish's raw events as integers (``fish.memory.ShortMemory``: the source's
ring of the last events, hashed with the state) and its periodic summaries
(``LongMemory``). A **memory** is the part that decides what of it a decision is told. It
is told each event as it happens and is asked, when a fish is asked for a decision, for the
text block of memories for this decision:

* ``remember(events)`` — the events of the tick just simulated (:class:`Events`: arrays of
  fish, tick, code and argument, and their words), called after every tick; optional;
* ``recall(fish, tick, view) -> (memories, summaries)`` — two lists of lines for the prompt
  (``memories``: "Recent memories", ``summaries``: "Long-term");
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

This module imports nothing of the package but ``fish.memory``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

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


class Guarded:
    """A memory of someone else's, held so that one that raises costs a counted fallback (the
    two-level block for that decision), never the run. ``problems``: the first few, in words."""

    def __init__(self, inner: Any, fallback: TwoLevel, name: str):
        self.inner, self.fallback, self.name = inner, fallback, name
        self.fallbacks = 0
        self.problems: list[str] = []
        self.wants_events = callable(getattr(inner, "remember", None))

    def _failed(self, what: str, exc: BaseException) -> None:
        self.fallbacks += 1
        if len(self.problems) < 5:
            self.problems.append(f"memory {self.name}: {what} raised {type(exc).__name__}: {exc}"[:300])

    def remember(self, events: Events) -> None:
        if not self.wants_events:
            return
        try:
            self.inner.remember(events)
        except Exception as exc:  # noqa: BLE001 — someone else's memory: counted, the tank goes on
            self._failed("remember", exc)

    def recall(self, fish: int, tick: int, view: str) -> tuple[list[str], list[str]]:
        try:
            got = self.inner.recall(fish, tick, view)
            memories, summaries = got
            out = [str(x) for x in memories][:64], [str(x) for x in summaries][:16]
        except Exception as exc:  # noqa: BLE001 — a bad reply is a fallback, as a model's is
            self._failed("recall", exc)
            return self.fallback.recall(fish, tick, view)
        return out

    def recalled(self, fish: int) -> tuple[tuple[int, float], ...]:
        """What the memory says it recalled for ``fish``'s last decision ((item id, score) pairs;
        () when it does not say, or says something else)."""
        which = getattr(self.inner, "recalled", None)
        if not callable(which):
            return ()
        try:
            return tuple((int(k), float(s)) for k, s in which(fish))[:64]
        except Exception:  # noqa: BLE001 — not what a recording keeps: kept as nothing
            return ()

    def get_state(self) -> Any:
        get = getattr(self.inner, "get_state", None)
        return get() if callable(get) else None

    def set_state(self, state: Any) -> None:
        put = getattr(self.inner, "set_state", None)
        if callable(put) and state is not None:
            put(state)
