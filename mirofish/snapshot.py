"""Serializable world snapshots — the contract between the world and everything that watches it.

A :class:`Snapshot` is plain JSON (pydantic): the window, the terminal view, the headless
CLI and tests read it. It is a *view*, not a codec: the one state codec is
:meth:`~mirofish.world.World.state_arrays` / :meth:`~mirofish.world.World.load_state_arrays`
(recordings store those as keyframes).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from .fish.personality import TRAITS
from .water import GLASS, OFFGRID, PLANT, ROCK, WATER
from .world import World

if TYPE_CHECKING:
    from .config import Config
    from .fish.places import Places

FORMAT = 1
TERRAIN_CHARS = {WATER: ".", GLASS: "#", PLANT: "*", ROCK: "o", OFFGRID: " "}


class FishSnapshot(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    x: int
    y: int
    heading: int  # Action index of the last successful move (0 n, 1 s, 2 w, 3 e)
    energy: int  # hundredths
    age: int
    intent: str
    stuck_ticks: int
    max_stuck_ticks: int
    last_decision_tick: int
    traits: dict[str, int]
    persona: str
    memory: list[tuple[int, int, int]]  # raw (tick, code, arg), oldest first
    memory_count: int
    short_memory: list[str]  # the same events as text, ``t{tick} {event}``
    summaries: list[str]  # long-term memory as text, oldest first
    long_memory: list[list[int]]  # the same as numeric records (see fish.memory.LongMemory)
    long_memory_count: int
    food_seen: int
    neighbours: int
    failed: bool
    refused_at: list[int]  # last tick a move north/south/west/east failed
    food_rose: bool
    neighbours_changed: bool
    counters: dict[str, int | list[int]]
    at_summary: list[int]
    plan: str = ""  # the standing plan in words, e.g. "explore east"
    in_water: bool = True  # False: taken out, or room for a fish not yet added (fish.spare)
    # the plan as numbers: goal, param, end tick, trigger raised since (-1 none), and the
    # plan-mode event state: ticks without food in view, ticks alone, crowded, hungry with food
    plan_state: list[int] = []


class Snapshot(BaseModel):
    model_config = ConfigDict(frozen=True)

    format: int = FORMAT
    tick: int
    seed: int
    width: int
    height: int
    state_hash: str
    terrain: list[str]  # rows; . water, # glass, * plant, o rock
    food: list[tuple[int, int, int]]  # (x, y, tick spawned)
    fish: list[FishSnapshot]
    metrics: dict[str, Any] | None = None
    grid: str = "square"  # world.grid: square, or hex (odd rows half a cell right: mirofish/grid.py)


def take(world: World, metrics: dict[str, Any] | None = None) -> Snapshot:
    """The world as a JSON-ready snapshot."""
    s, w = world.school, world.water
    xs, ys = w.xy(s.cell)
    fcells = w.food_cells()
    fx, fy = w.xy(fcells)
    fish = [fish_snapshot(world, i, xs, ys) for i in range(s.n)]
    return Snapshot(
        tick=world.tick, seed=world.seed, width=w.width, height=w.height, state_hash=world.state_hash(),
        terrain=take_terrain(world), food=[(int(x), int(y), int(world.water.food_born[c])) for x, y, c in zip(fx, fy,
                                                                                                              fcells)],
        fish=fish,
        metrics=metrics,
        grid=world.grid.name,
    )


def fish_snapshot(world: World, i: int, xs: np.ndarray | None = None, ys: np.ndarray | None = None) -> FishSnapshot:
    """One fish, as in :func:`take` (cheap enough to call every frame for the followed fish)."""
    s = world.school
    if xs is None or ys is None:
        xs, ys = world.water.xy(s.cell)
    return FishSnapshot(
        id=i, x=int(xs[i]), y=int(ys[i]), heading=int(s.heading[i]), energy=int(s.energy[i]), age=int(s.age[i]),
        intent=world.grid.action_names[int(s.intent[i])], stuck_ticks=int(s.stuck[i]),
        max_stuck_ticks=int(s.max_stuck[i]),
        last_decision_tick=int(s.last_decision[i]),
        traits={k: int(v) for k, v in zip(TRAITS, s.traits[i])}, persona=s.persona[i],
        memory=s.memory.raw(i), memory_count=int(s.memory.count[i]), short_memory=s.memory.lines(i),
        summaries=world.summaries(i), long_memory=[r.tolist() for _, r in s.long_memory.rows(i)],
        long_memory_count=int(s.long_memory.count[i]), food_seen=int(s.food_seen[i]), neighbours=int(s.neighbours[i]),
        failed=bool(s.failed[i]), refused_at=[int(v) for v in s.refused_at[i]], food_rose=bool(s.food_rose[i]),
        neighbours_changed=bool(s.neighbours_changed[i]),
        counters={"actions": [int(v) for v in s.action_counts[i]], "eats": int(s.eats[i]),
                  "refusals": int(s.refusals[i]), "moves": int(s.moves[i]),
                  "company_ticks": int(s.company_ticks[i]), "decisions": int(s.decisions[i])},
        at_summary=[int(v) for v in s.at_summary[i]],
        plan=world.plan_table.describe(int(s.plan_goal[i]), int(s.plan_param[i])),
        plan_state=[int(s.plan_goal[i]), int(s.plan_param[i]), int(s.plan_end[i]), int(s.plan_trigger[i]),
                    int(s.no_food[i]), int(s.alone[i]), int(s.crowded[i]), int(s.hungry_food[i])],
        in_water=not bool(s.absent[i]),
    )


@dataclass(frozen=True)
class TankView:
    """What the window draws each frame: copies of the world's arrays, in tank coordinates,
    and what else its views read of the tank at this tick (never the world itself)."""

    tick: int
    x: np.ndarray
    y: np.ndarray
    heading: np.ndarray
    energy: np.ndarray  # hundredths
    max_energy: int
    traits: np.ndarray
    stuck: np.ndarray
    food_x: np.ndarray
    food_y: np.ndarray
    food_age: np.ndarray
    rot_ticks: int
    present: np.ndarray | None = None  # which fish are in the water; None: all
    places: Places | None = None  # a copy of the fish's remembered places (fish.places), None without
    settings: Config | None = None  # the config at this tick: live settings tuned since included
    # plants with bites missing (a tank where a group grazes: mirofish/grazing.py): x, y and the
    # share of their bites left; None where no group grazes
    bitten: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def in_water(self, i: int) -> bool:
        return self.present is None or bool(self.present[i])


def tank_view(world: World) -> TankView:
    s, w = world.school, world.water
    x, y = w.xy(s.cell)
    cells = w.food_cells()
    fx, fy = w.xy(cells)
    return TankView(tick=world.tick, x=x, y=y, heading=s.heading.copy(), energy=s.energy.copy(),
                    max_energy=world.top_energy, traits=s.traits.copy(), stuck=s.stuck.copy(), food_x=fx, food_y=fy,
                    food_age=world.tick - w.food_born[cells], rot_ticks=w.rot_ticks,
                    present=~s.absent if s.absent.any() else None,
                    places=copy.deepcopy(world.places) if world.places is not None else None, settings=world.cfg,
                    bitten=_bitten(world))


def _bitten(world: World) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    g = world.grazing
    if g is None:
        return None
    idx = np.flatnonzero((g.bites < g.most) & (world.water.terrain[g.cells] == PLANT))  # (a cleared one: none)
    bx, by = world.water.xy(g.cells[idx])
    return bx, by, g.bites[idx] / g.most


def take_terrain(world: World) -> list[str]:
    return ["".join(TERRAIN_CHARS[int(v)] for v in row) for row in world.water.tank_terrain()]
