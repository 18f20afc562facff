"""Serializable world snapshots — the contract between the world and everything that watches it.

A :class:`Snapshot` is plain JSON (pydantic): the window, recordings and reports read it;
:func:`restore` rebuilds a :class:`~mirofish.world.World` from one, RNG state included, so a
restored world continues exactly like the original.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict

from .actions import ACTION_NAMES, Action
from .config import Config
from .fish.personality import TRAITS
from .fish.plans import describe
from .water import GLASS, NO_FOOD, OFFGRID, PLANT, ROCK, WATER
from .world import World

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
    rng_state: dict
    metrics: dict | None = None


def take(world: World, metrics: dict | None = None) -> Snapshot:
    """The world as a JSON-ready snapshot."""
    s, w = world.school, world.water
    xs, ys = w.xy(s.cell)
    fcells = w.food_cells()
    fx, fy = w.xy(fcells)
    fish = [fish_snapshot(world, i, xs, ys) for i in range(s.n)]
    st = world.rng.bit_generator.state
    return Snapshot(
        tick=world.tick, seed=world.seed, width=w.width, height=w.height, state_hash=world.state_hash(),
        terrain=take_terrain(world), food=[(int(x), int(y), int(world.water.food_born[c])) for x, y, c in zip(fx, fy, fcells)],
        fish=fish, rng_state={"bit_generator": st["bit_generator"], "state": {k: str(v) for k, v in st["state"].items()},
                              "has_uint32": st["has_uint32"], "uinteger": str(st["uinteger"])},
        metrics=metrics,
    )


def fish_snapshot(world: World, i: int, xs=None, ys=None) -> FishSnapshot:
    """One fish, as in :func:`take` (cheap enough to call every frame for the followed fish)."""
    s = world.school
    if xs is None:
        xs, ys = world.water.xy(s.cell)
    return FishSnapshot(
        id=i, x=int(xs[i]), y=int(ys[i]), heading=int(s.heading[i]), energy=int(s.energy[i]), age=int(s.age[i]),
        intent=ACTION_NAMES[int(s.intent[i])], stuck_ticks=int(s.stuck[i]), max_stuck_ticks=int(s.max_stuck[i]),
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
        plan=describe(int(s.plan_goal[i]), int(s.plan_param[i])),
        plan_state=[int(s.plan_goal[i]), int(s.plan_param[i]), int(s.plan_end[i]), int(s.plan_trigger[i]),
                    int(s.no_food[i]), int(s.alone[i]), int(s.crowded[i]), int(s.hungry_food[i])],
    )


@dataclass(frozen=True)
class TankView:
    """What the window draws each frame: copies of the world's arrays, in tank coordinates."""

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


def tank_view(world: World) -> TankView:
    s, w = world.school, world.water
    x, y = w.xy(s.cell)
    cells = w.food_cells()
    fx, fy = w.xy(cells)
    return TankView(tick=world.tick, x=x, y=y, heading=s.heading.copy(), energy=s.energy.copy(),
                    max_energy=world.max_energy, traits=s.traits.copy(), stuck=s.stuck.copy(), food_x=fx, food_y=fy,
                    food_age=world.tick - w.food_born[cells], rot_ticks=w.rot_ticks)


def restore(cfg: Config, snap: Snapshot) -> World:
    """A world in exactly the state ``snap`` describes (``cfg`` must be the run's config).

    Raises:
        ValueError: the snapshot does not belong to this config (seed, size or terrain differ).
    """
    if snap.format != FORMAT:
        raise ValueError(f"snapshot format {snap.format} is not supported (expected {FORMAT})")
    if snap.seed != cfg.seed or snap.width != cfg.world.width or snap.height != cfg.world.height:
        raise ValueError("snapshot was taken with a different seed or tank size than this config")
    if len(snap.fish) != cfg.fish.count:
        raise ValueError(f"snapshot has {len(snap.fish)} fish, config says {cfg.fish.count}")
    world = World(cfg)
    if take_terrain(world) != snap.terrain:
        raise ValueError("snapshot terrain differs from the terrain this config generates")
    s, w = world.school, world.water
    world.tick = snap.tick
    w.food_born[:] = NO_FOOD
    for x, y, born in snap.food:
        w.food_born[w.cell(x, y)] = born
    world.occupant[:] = -1
    for f in snap.fish:
        i = f.id
        s.cell[i] = w.cell(f.x, f.y)
        s.heading[i], s.energy[i], s.age[i] = f.heading, f.energy, f.age
        s.intent[i] = Action.parse(f.intent)
        s.stuck[i], s.max_stuck[i], s.last_decision[i] = f.stuck_ticks, f.max_stuck_ticks, f.last_decision_tick
        s.traits[i] = [f.traits[k] for k in TRAITS]
        s.persona[i] = f.persona
        s.memory.load(i, f.memory, f.memory_count)
        s.long_memory.load(i, f.long_memory, f.long_memory_count)
        s.food_seen[i], s.neighbours[i] = f.food_seen, f.neighbours
        s.refused_at[i] = f.refused_at
        s.failed[i], s.food_rose[i], s.neighbours_changed[i] = f.failed, f.food_rose, f.neighbours_changed
        c = f.counters
        s.action_counts[i] = c["actions"]
        s.eats[i], s.refusals[i], s.moves[i] = c["eats"], c["refusals"], c["moves"]
        s.company_ticks[i], s.decisions[i] = c["company_ticks"], c["decisions"]
        s.at_summary[i] = f.at_summary
        if f.plan_state:
            (s.plan_goal[i], s.plan_param[i], s.plan_end[i], s.plan_trigger[i], s.no_food[i], s.alone[i],
             s.crowded[i], s.hungry_food[i]) = f.plan_state
    world.occupant[s.cell] = s.ids
    world.refresh()
    st = snap.rng_state
    world.rng.bit_generator.state = {
        "bit_generator": st["bit_generator"], "state": {k: int(v) for k, v in st["state"].items()},
        "has_uint32": st["has_uint32"], "uinteger": int(st["uinteger"]),
    }
    if world.state_hash() != snap.state_hash:
        raise ValueError("snapshot is inconsistent: restored state does not match its state_hash")
    return world


def take_terrain(world: World) -> list[str]:
    return ["".join(TERRAIN_CHARS[int(v)] for v in row) for row in world.water.tank_terrain()]
