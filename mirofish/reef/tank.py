"""The tanks of a reef that one process steps (:class:`TankHost`), and the fish that leave them.

A host owns live tanks (one :class:`~mirofish.session.LiveSession` each) and steps each one on
its own up to the next exchange. Everything that crosses a corridor is an intervention of the
tank it happens in, applied at the start of a tick and recorded with it: a fish that leaves is
a ``remove`` at the tick after it swam into the opening; a fish that arrives is an ``add``
carrying its whole state (:func:`mirofish.interventions.departing`). So a tank's recording
replays on its own, exactly, with its migrants. A fish swims into a corridor when it moves onto
one of the opening's water cells toward the glass there (steering never swims into glass, so
the corridor is the cell's way on).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import arbiter
from ..interventions import InterventionError, departing
from ..session import LiveSession
from ..water import GLASS
from .spec import SIDES, ReefSpec, tank_config

# what crosses a corridor, as the hosts and the reef hand it on
Intervention = dict[str, Any]  # an add or a remove (mirofish/interventions.py)
Arrival = tuple[int, int, Intervention]  # (tank, tick, the add that brings the fish in)
Departure = tuple[int, int, int, int, dict[str, Any]]  # (tank, leave tick, corridor, fish, its state)
Bounce = tuple[int, Intervention]  # (tank, an arrival that found no room there)

_STEP = {"north": (0, -1), "south": (0, 1), "west": (-1, 0), "east": (1, 0)}


@dataclass(frozen=True)
class Opening:
    """One end of a corridor in one tank: the water cells by the glass it spans (``cells``),
    the middle one (``x``, ``y``: where migrants arrive) and the move into the glass there
    (``action``: the side's move, north 0 … east 3)."""

    corridor: int
    side: str
    x: int
    y: int
    cells: tuple[int, ...]
    action: int


def openings(session: LiveSession, spec: ReefSpec, i: int) -> list[Opening]:
    """Tank ``i``'s openings: for each corridor end in it, the open water cell next to the glass
    of that side nearest the corridor's place along it (ties: the lower cell)."""
    w = session.world.water
    name = spec.tanks[i].name
    terrain = w.terrain.reshape(w.ph, w.pw)
    out = []
    for c, cor in enumerate(spec.corridors):
        for end, side, at in (("a", cor.side_a, cor.at_a), ("b", cor.side_b, cor.at_b)):
            if getattr(cor, end) != name:
                continue
            dx, dy = _STEP[side]
            cells = w.open_cells.astype(np.int64)
            x, y = w.xy(cells)
            beyond = terrain[y + dy + w.pad, x + dx + w.pad] == GLASS  # the glass is the next cell that way
            cand = cells[beyond]
            if cand.size == 0:
                raise ValueError(f"tank {name}: no open water along its {side} glass for corridor {cor.a}-{cor.b}")
            cx, cy = w.xy(cand)
            along = cy if side in ("west", "east") else cx
            span = (w.height if side in ("west", "east") else w.width) - 1
            target = at * span
            order = np.lexsort((cand, np.abs(along - target)))
            pick = cand[order[0]]
            px, py = w.xy(np.array([pick]))
            near = np.abs(along - along[order[0]]) * 2 < cor.width  # the cells it spans around the middle one
            out.append(Opening(c, side, int(px[0]), int(py[0]), tuple(int(v) for v in np.sort(cand[near])),
                               SIDES.index(side)))
    return out


class TankHost:
    """The tanks ``mine`` (indices into ``spec.tanks``) of a reef, stepped in this process.

    ``states``: a checkpoint's tanks to start from (see :meth:`state`); ``record``: a folder
    where each tank records to ``<name>.db``."""

    def __init__(self, spec: dict[str, Any] | ReefSpec, mine: list[int], record: str | None = None,
                 states: dict[int, dict[str, Any]] | None = None):
        self.spec = spec if isinstance(spec, ReefSpec) else ReefSpec.model_validate(spec)
        self.mine = list(mine)
        self.tanks: dict[int, LiveSession] = {}
        self.doors: dict[int, list[Opening]] = {}
        self.schedule: dict[int, dict[int, list[Intervention]]] = {}
        for i in self.mine:
            live = LiveSession(tank_config(self.spec, i), mode="lockstep")
            if states and i in states:
                live.engine.world.load_state_arrays(states[i]["arrays"])
                live.engine.world.refresh()
                self.schedule[i] = {int(t): ivs for t, ivs in states[i]["schedule"].items()}
            else:
                self.schedule[i] = {}
            if record is not None:
                live.start_recording(Path(record) / f"{self.spec.tanks[i].name}.db")
            self.tanks[i] = live
            self.doors[i] = openings(live, self.spec, i)

    def advance(self, until: int, arrivals: list[Arrival]) -> dict[str, Any]:
        """Take ``arrivals`` ((tank, tick, add intervention), each at a tick not yet stepped),
        step every tank to tick ``until``; returns the fish that left ((tank, leave tick, the
        opening's corridor, fish, state)), the arrivals that found no room (to try again), each
        tank's figures, and the seconds spent stepping."""
        for i, tick, iv in arrivals:
            self.schedule[i].setdefault(int(tick), []).append(iv)
        left: list[Departure] = []
        bounced: list[Bounce] = []
        start = time.perf_counter()
        for i in self.mine:
            self._run(i, until, left, bounced)
            recorder = self.tanks[i].recorder
            if recorder is not None and until % self.spec.interval == 0:  # committed through the exchange:
                recorder.flush()  # a killed reef replays to it
        return {"left": left, "bounced": bounced, "figures": {i: self.figures(i) for i in self.mine},
                "seconds": time.perf_counter() - start}

    def _run(self, i: int, until: int, left: list[Departure], bounced: list[Bounce]) -> None:
        live, sched, doors = self.tanks[i], self.schedule[i], self.doors[i]
        w = live.engine.world
        while w.tick < until:
            room = int(np.count_nonzero(w.school.absent))
            for iv in sched.pop(w.tick, []):
                if iv["kind"] == "add":
                    if room <= 0:
                        bounced.append((i, iv))
                        continue
                    room -= 1
                elif iv["kind"] == "remove":
                    room += 1
                try:
                    live.intervene(iv)
                except InterventionError:  # no water free by the opening: the migrant waits
                    bounced.append((i, iv))
            f = live.step()
            for d in doors:
                for cell in d.cells:
                    fish = int(w.occupant[cell])
                    if fish >= 0 and f.executed[fish] == d.action and f.move_outcome[fish] == arbiter.MOVED:
                        left.append((i, w.tick, d.corridor, fish, departing(w, fish)))
                        sched.setdefault(w.tick, []).append({"kind": "remove", "fish": fish})

    def openings(self) -> dict[int, list[tuple[int, int, int]]]:
        """Per tank: its openings as (corridor, x, y)."""
        return {i: [(d.corridor, d.x, d.y) for d in self.doors[i]] for i in self.mine}

    def figures(self, i: int) -> dict[str, Any]:
        live = self.tanks[i]
        w = live.engine.world
        return {"tick": w.tick, "population": int(np.count_nonzero(~w.school.absent)),
                "schooling": round(live.metrics.schooling_now(), 4), "hash": w.state_hash()}

    def state(self) -> dict[int, dict[str, Any]]:
        """Each tank's state and what is scheduled in it (a checkpoint, at an exchange)."""
        return {i: {"arrays": self.tanks[i].engine.world.state_arrays(),
                    "schedule": {t: list(ivs) for t, ivs in self.schedule[i].items()}} for i in self.mine}

    def view(self, i: int) -> LiveSession:
        """Tank ``i``'s session (the window draws it)."""
        return self.tanks[i]

    def close(self) -> None:
        for live in self.tanks.values():
            live.close()
        self.tanks = {}
