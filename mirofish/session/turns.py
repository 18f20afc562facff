"""Sessions of the turn-by-turn scenes: one model after another, one turn a step.

The negotiation (:mod:`~.negotiation`) plays negotiation sessions one after another, the report
chain (:mod:`~.handoff`) tasks; each is a model whose turns (messages) come from an iterator,
and whose result is kept when it ends. The scene's window holds a session of this kind, as the
aquarium's window holds a :class:`~mirofish.session.LiveSession`: it forwards the user's actions
and draws the session's :meth:`~SceneSession.snapshot` (a frozen value, taken again only after
the session changed) — it never builds, steps or reads the model itself.

Like the tank sessions, none of these imports pygame or anything of :mod:`mirofish.ui`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable


@runtime_checkable
class SceneSession(Protocol):
    """What a scene's window asks of its session: ``step()`` (one turn; False: a replay is at its
    end), ``reset(seed)``, ``snapshot()`` (what the window draws: frozen), ``close()``."""

    can_seek: bool

    def step(self) -> bool: ...

    def reset(self, seed: int) -> None: ...

    def snapshot(self) -> Any: ...

    def close(self) -> None: ...


class Episode(Protocol):
    """One model of a run of them: a negotiation session, a report chain's task."""

    def result(self) -> dict[str, Any]: ...


M = TypeVar("M", bound=Episode)  # the model of one episode
T = TypeVar("T")  # what one step plays (a turn, a message)
S = TypeVar("S")  # the snapshot


class Episodes(Generic[M, T, S]):
    """Episodes one after another: each step plays the episode's next turn; the step after its
    last ends it (its result kept, :meth:`_ended`) and begins the next (:meth:`_begin`).

    Subclasses give :meth:`_begin` and :meth:`_take` (the snapshot); :meth:`snapshot` keeps
    the one it took until the session changes (:meth:`_changed`)."""

    can_seek = False

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.index = 0  # the episode being played
        self.results: list[dict[str, Any]] = []  # the episodes ended so far
        self._snap: S | None = None
        self._start()

    # -- the scene's side

    def _begin(self, index: int) -> tuple[M, Iterator[T]]:
        """Episode ``index`` set up, and the iterator of its turns."""
        raise NotImplementedError

    def _played(self, turn: T) -> None:
        """A turn was played (a recorder keeps it)."""

    def _ended(self, model: M) -> None:
        """Episode :attr:`index` ended; its result is kept already."""

    def _take(self) -> S:
        """The snapshot of the session as it is now."""
        raise NotImplementedError

    # -- stepping

    def _start(self) -> None:
        self.model, self._turns = self._begin(self.index)
        self.finished = False  # the episode played its last turn: the next step begins the next one
        self._changed()

    def _changed(self) -> None:
        self._snap = None

    def step(self) -> bool:
        """One turn, or the end of the episode and the start of the next (always True: a live
        run has no end)."""
        if self.finished:
            self.results.append(self.model.result())
            self._ended(self.model)
            self.index += 1
            self._start()
            return True
        try:
            turn = next(self._turns)
        except StopIteration:
            self.finished = True
            return True
        finally:
            self._changed()
        self._played(turn)
        return True

    def reset(self, seed: int) -> None:
        """From the first episode again, with ``seed``."""
        self.seed, self.index, self.results = seed, 0, []
        self._start()

    def snapshot(self) -> S:
        if self._snap is None:
            self._snap = self._take()
        return self._snap

    def close(self) -> None:
        pass
