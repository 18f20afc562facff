"""A reef as a session: what its window (:mod:`mirofish.ui.scenes.reef`) shows, without the window.

The session owns a :class:`~mirofish.reef.run.Reef` stepped in this process (the ``inline``
backend: its tanks' live sessions are here to be drawn), one tick a step, exchanging migrants
at every interval exactly as ``reef --headless`` does; ``record``: a folder the reef is
recorded in as it goes. :meth:`ReefSession.snapshot` is what the window draws, as a frozen
:class:`ReefShown` — each tank's figures and :class:`~mirofish.snapshot.TankView`, each
corridor's openings and the fish in it now; its :meth:`~ReefShown.as_json` is the scene's
JSON-ready state. :meth:`~ReefSession.terrain` is a tank's rock and glass (it never changes).

The session sits below :mod:`mirofish.reef` (whose tanks are live sessions) and imports none of
it: the reef's class is handed to it by whoever opens it (the window).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..snapshot import TankView

if TYPE_CHECKING:  # (types only: the reef's class comes from the caller)
    from ..reef.run import Reef
    from ..reef.spec import ReefSpec
    from ..reef.tank import TankHost

__all__ = ["CorridorShown", "ReefSession", "ReefShown", "TankShown"]


@dataclass(frozen=True)
class TankShown:
    """One tank: its fish now, how many of them school, the fish that arrived in it through a
    corridor and that left it so far, and its water (``view``)."""

    name: str
    population: int
    schooling: float
    arrived: int
    left: int
    view: TankView


@dataclass(frozen=True)
class CorridorShown:
    """A corridor between tanks ``a`` and ``b`` (indices), through the openings ``door_a`` and
    ``door_b`` (cells of each tank); ``travellers``: each fish in it now, (how far along, 0..1;
    whether it goes from ``a`` to ``b``)."""

    a: int
    b: int
    door_a: tuple[int, int]
    door_b: tuple[int, int]
    travellers: tuple[tuple[float, bool], ...]


@dataclass(frozen=True)
class ReefShown:
    """What the reef's window draws (see the module doc)."""

    tick: int
    interval: int  # ticks between exchanges
    crossings: int  # fish that left one tank for another so far
    in_transit: int  # fish in a corridor now
    tanks: tuple[TankShown, ...]
    corridors: tuple[CorridorShown, ...]
    migrations: tuple[tuple[str, int], ...]  # ("a->b", fish) by way, sorted

    def as_json(self) -> dict[str, Any]:
        """The scene's JSON-ready state: the tick and the migrations by way."""
        return {"tick": self.tick, "migrations": dict(self.migrations)}


class ReefSession:
    """A reef stepped tick by tick in this process (see the module doc); ``reef``: the reef's
    class (:class:`mirofish.reef.run.Reef`)."""

    can_seek = False

    def __init__(self, reef: type[Reef], spec: ReefSpec, record: str | None = None):
        self.spec = spec
        self.reef = reef(spec, "inline", record=record)
        self._host: TankHost = self.reef.hosts.hosts[0]  # (inline: every tank in one host, here)
        self._snap: ReefShown | None = None
        self.reef.advance(0)  # the figures of tick 0

    @property
    def tick(self) -> int:
        return self.reef.tick

    def step(self) -> bool:
        """One tick (an exchange when it ends an interval); a live reef has no end: True."""
        try:
            self.reef.advance(self.reef.tick + 1)
        finally:
            self._snap = None
        return True

    def reset(self, seed: int) -> None:
        """Nothing: a reef's tanks take their seeds from its file."""

    def terrain(self, tank: int) -> list[str]:
        """Tank ``tank``'s rock and glass, row by row."""
        return self._host.view(tank).terrain()

    def snapshot(self) -> ReefShown:
        if self._snap is None:
            self._snap = self._take()
        return self._snap

    def _take(self) -> ReefShown:
        reef, spec, now = self.reef, self.spec, self.reef.tick
        arrived = Counter(e["to"] for e in reef.log if e["arrive"] <= now)
        left = Counter(e["from"] for e in reef.log if e["leave"] <= now)
        tanks = []
        for i, t in enumerate(spec.tanks):
            fig = reef.figures.get(i, {})
            tanks.append(TankShown(t.name, int(fig.get("population", 0)), float(fig.get("schooling", 0.0)),
                                   arrived[t.name], left[t.name], self._host.view(i).view()))
        moving: dict[int, list[tuple[float, bool]]] = {}
        for e in reef.log:
            if e["leave"] < now <= e["arrive"]:
                cor = spec.corridors[e["corridor"]]
                moving.setdefault(e["corridor"], []).append(
                    ((now - e["leave"]) / max(1, e["arrive"] - e["leave"]), e["from"] == cor.a))
        corridors = []
        for c, cor in enumerate(spec.corridors):
            a, b = spec.index(cor.a), spec.index(cor.b)
            corridors.append(CorridorShown(a, b, reef.doors[a][c], reef.doors[b][c], tuple(moving.get(c, ()))))
        ways = reef.migrations()
        return ReefShown(now, spec.interval, sum(ways.values()), reef.in_transit(), tuple(tanks), tuple(corridors),
                         tuple(ways.items()))

    def close(self) -> None:
        self.reef.close()
