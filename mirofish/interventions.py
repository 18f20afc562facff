"""Hands-on interventions: a person changes the tank, not a fish's mind.

An intervention is a small JSON-ready dict applied at the start of a tick, before the fish
are asked and before the world steps — in a live tank (the window's clicks), in a fork (the
``fork`` command's flags) and in a replay (read back from the recording), always through
:meth:`mirofish.engine.Engine.step`, so a recording with interventions replays exactly and a
fork of it reproduces them. The kinds (``KINDS``):

``{"kind": "food", "x": X, "y": Y}``
    a handful of food: every open cell of the 3×3 square around (X, Y) without food gets one.
``{"kind": "rock", "x": X, "y": Y}`` / ``{"kind": "clear", "x": X, "y": Y}``
    a 3×3 rock (on water cells no fish is in; food there goes) / rocks and plants of the 3×3
    square removed (never the glass).
``{"kind": "current", "dir": "east", "ticks": N}``
    for N ticks, after every tick, each fish that can is pushed one cell that way (downstream
    fish first, ties by id). ``ticks`` 0 stops a current.
``{"kind": "tune", "key": K, "value": V}``
    one of :data:`LIVE_KEYS` changed (the window's sliders).
``{"kind": "add", "x": X, "y": Y}`` (optional ``"traits": [sociability, curiosity, caution,
appetite, calm]``, 0..100 each; drawn like the tank's own fish when left out)
    a new fish in the free room with the lowest id (a fish taken out before, or ``fish.spare``), on the
    open cell nearest (X, Y): young, its energy at the start maximum, no memories.
``{"kind": "remove", "fish": N}``
    fish N is taken out of the water: parked where nothing sees or meets it, it only rests,
    is asked nothing and counts in no metric; its room can take an added fish. Taking out a
    fish that is already out is refused, never recorded as done: in a live tank when it would
    apply, in a fork before the fork runs or records anything (:func:`check_removals`: the
    fork's own removals, adds and the recording's own interventions followed tick by tick).

What an intervention leaves in the world (changed terrain, a current, tuned settings) is part
of the keyframes and — only when present — of the state hash, so a tank nobody touched hashes
as it always did. Everything here is integer and deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .config import LIVE_KEYS
from .files import CONFIG_LIMIT, FileRefused, read_text_bounded
from .grid import HEX, SQUARE, Grid
from .water import NO_FOOD, ROCK, WATER

if TYPE_CHECKING:
    from .world import World

KINDS = ("food", "rock", "clear", "current", "tune", "add", "remove")  # (checked by _CHECKS)
PATCH = 1  # the square's half-width: 3×3


class InterventionError(ValueError):
    """An intervention that cannot be applied (bad kind, a place outside the tank …).
    ``intervention``: the one refused, when it was refused while a tick applied it (the engine
    sets it: a fork names where that one was given)."""

    intervention: dict[str, Any] | None = None


def _point(iv: dict[str, Any], world: World | None) -> dict[str, Any]:
    if not all(type(iv.get(k)) is int for k in ("x", "y")):
        raise InterventionError(f"{iv['kind']} needs whole-number x and y, got {iv.get('x')!r}, {iv.get('y')!r}")
    if world is not None:
        _square(world, iv["x"], iv["y"])
    return {"kind": iv["kind"], "x": iv["x"], "y": iv["y"]}


def _add(iv: dict[str, Any], world: World | None, room: bool = True) -> dict[str, Any]:
    out = _point(iv, world)
    traits = iv.get("traits")
    if traits is not None and (not isinstance(traits, list) or len(traits) != 5
                               or not all(type(v) is int and 0 <= v <= 100 for v in traits)):
        raise InterventionError(f"add: traits must be five whole numbers 0..100, got {traits!r}")
    if room and world is not None and not world.school.absent[: world.cfg.fish.count + world.cfg.fish.spare].any():
        raise InterventionError(f"no room for another fish: all {world.school.n} are in the water "
                                f"(start the tank with --set fish.spare=N, or take one out)")
    state = iv.get("state")
    if state is not None:  # a migrant from another tank of a reef (mirofish/reef): everything it is
        if not isinstance(state, dict) or not isinstance(state.get("fish"), dict):
            raise InterventionError("add: state must be a migrant's state (from a reef)")
        out = {**out, "state": state}
    return {**out, "traits": traits} if traits is not None else out


def _remove(iv: dict[str, Any], world: World | None) -> dict[str, Any]:
    fish = iv.get("fish")
    if type(fish) is not int or (world is not None and not 0 <= fish < world.school.n):
        raise InterventionError(f"remove: no fish {fish!r} in this tank")
    if world is not None and world.school.absent[fish]:
        raise InterventionError(f"remove: fish {fish} is not in the water")
    return {"kind": "remove", "fish": fish}


def _way(word: object, grid: Grid) -> str | None:
    """``word`` as one of ``grid``'s ways (fish.plans.direction_index: its name or initials), or None."""
    from .fish.plans import direction_index

    try:
        return grid.move_names[direction_index(word, grid)] if isinstance(word, str) else None
    except ValueError:
        return None


def _current(iv: dict[str, Any], world: World | None) -> dict[str, Any]:
    # the tank's ways (a hexagonal tank's six); without a tank, either grid's (checked again on it)
    grids = (world.grid,) if world is not None else (SQUARE, HEX)
    way = next((w for w in (_way(iv.get("dir"), g) for g in grids) if w is not None), None)
    if way is None:
        names = (", ".join(world.grid.move_names) if world is not None else
                 f"{', '.join(SQUARE.move_names)} (a square tank) or {', '.join(HEX.move_names)} (a hexagonal one)")
        raise InterventionError(f"current: dir must be one of {names}, got {iv.get('dir')!r}")
    iv = {**iv, "dir": way}
    if type(iv.get("ticks")) is not int or not 0 <= iv["ticks"] <= 1_000_000:
        raise InterventionError(f"current: ticks must be a whole number 0..1000000, got {iv.get('ticks')!r}")
    return {"kind": "current", "dir": iv["dir"], "ticks": iv["ticks"]}


def _tune(iv: dict[str, Any], world: World | None) -> dict[str, Any]:
    if iv.get("key") not in LIVE_KEYS:
        raise InterventionError(f"tune: key must be one of {', '.join(LIVE_KEYS)}, got {iv.get('key')!r}")
    value = iv.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InterventionError(f"tune {iv['key']}: value must be a number, got {value!r}")
    if world is not None:
        try:
            world.tuned_config(iv["key"], float(value))
        except ValueError as exc:
            raise InterventionError(str(exc)) from None
    return {"kind": "tune", "key": iv["key"], "value": float(value)}


# What each kind needs (and how it is checked): one entry per kind of KINDS.
_CHECKS = {"food": _point, "rock": _point, "clear": _point, "current": _current, "tune": _tune, "add": _add,
           "remove": _remove}


def check(iv: object, world: World | None = None, ahead: bool = False) -> dict[str, Any]:
    """``iv`` as a valid intervention dict (a copy), or :class:`InterventionError` naming the
    problem (with ``world``: also a place outside its tank, a fish that is not there …);
    ``ahead``: checked before the tick it applies at (a fork's interventions, all checked at the
    fork): a fish added later is not refused for want of a room that a fish taken out before it
    frees (its room is looked for when it applies: :func:`add_fish`)."""
    if not isinstance(iv, dict) or iv.get("kind") not in KINDS:
        kind = iv.get("kind") if isinstance(iv, dict) else iv
        raise InterventionError(f"unknown intervention {kind!r} (one of {', '.join(KINDS)})")
    if iv["kind"] == "add":
        return _add(iv, world, room=not ahead)
    return _CHECKS[iv["kind"]](iv, world)


def describe(iv: dict[str, Any]) -> str:
    """One short line for a person: ``food at 40,20``, ``current east for 60 ticks``."""
    kind = iv["kind"]
    if kind == "food":
        return f"food dropped at {iv['x']},{iv['y']}"
    if kind == "rock":
        return f"rock placed at {iv['x']},{iv['y']}"
    if kind == "clear":
        return f"rocks cleared at {iv['x']},{iv['y']}"
    if kind == "current":
        return f"current {iv['dir']} for {iv['ticks']} ticks" if iv["ticks"] else "current stopped"
    if kind == "add":
        return f"a fish added at {iv['x']},{iv['y']}" + (f" (fish {iv['fish']})" if "fish" in iv else "")
    if kind == "remove":
        return f"fish {iv['fish']} taken out"
    return f"{iv['key']} = {iv['value']:g}"


def parse_point(text: str, kind: str) -> dict[str, Any]:
    """``"X,Y"`` (a command-line flag) → an intervention of ``kind``."""
    try:
        x, y = (int(v) for v in text.split(","))
    except ValueError:
        raise InterventionError(f"--{kind}: expected X,Y (two whole numbers), got {text!r}") from None
    return {"kind": kind, "x": x, "y": y}


def parse_add(text: str) -> dict[str, Any]:
    """``"X,Y"`` or ``"X,Y,S,C,A,P,M"`` (the five traits 0..100) → an add intervention."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in (2, 7):
        raise InterventionError(f"--add-fish: expected X,Y or X,Y and five traits (sociability, curiosity, caution, "
                                f"appetite, calm; 0..100), got {text!r}")
    iv = {"kind": "add", "x": values[0], "y": values[1]}
    return check({**iv, "traits": values[2:]} if len(values) == 7 else iv)


def parse_current(text: str) -> dict[str, Any]:
    """``"east,60"`` → a current intervention."""
    parts = text.split(",")
    if len(parts) != 2 or not parts[1].strip().isdigit():
        raise InterventionError(f"--current: expected DIR,TICKS such as east,60, got {text!r}")
    return check({"kind": "current", "dir": parts[0].strip(), "ticks": int(parts[1])})


def read_file(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """An interventions file: JSON Lines, one ``{"tick": T, "kind": ..., ...}`` per line
    (blank lines and ``#`` comments skipped, a comment may also end a line) → sorted ``(tick,
    intervention)`` pairs. A key given twice, or one its kind does not read, is refused (one line
    naming the file and the line): JSON's own reading keeps the last of two and ignores the
    unknown, so a misspelt key would be read by nothing."""
    return [(t, iv) for t, iv, _ in read_file_lines(path)]


def read_file_lines(path: str | Path) -> list[tuple[int, dict[str, Any], str]]:
    """:func:`read_file`'s ``(tick, intervention)`` pairs, each with where it was written
    (``"FILE line N"``): what a refusal of it against the tank (a place outside it, a fish not
    there, no room) names, as the file's own reading does."""
    out: list[tuple[int, dict[str, Any], str]] = []
    try:  # a regular file of at most files.CONFIG_LIMIT bytes: a FIFO or /dev/zero is one line, unread
        text = read_text_bounded(path, CONFIG_LIMIT, "interventions file")
    except FileRefused as exc:
        raise InterventionError(str(exc)) from None
    decoder = json.JSONDecoder(object_pairs_hook=_no_twice)
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            item, end = decoder.raw_decode(line)
            rest = line[end:].strip()
            if rest and not rest.startswith("#"):  # (a # comment may end a line, as it may fill one)
                raise json.JSONDecodeError("Extra data", line, end)
        except json.JSONDecodeError as exc:
            raise InterventionError(f"{path} line {n}: not JSON ({exc.msg})") from None
        except _Twice as exc:
            raise InterventionError(f"{path} line {n}: {exc}") from None
        except RecursionError:
            raise InterventionError(f"{path} line {n}: nested too deeply") from None
        if not isinstance(item, dict) or type(item.get("tick")) is not int or item["tick"] < 0:
            raise InterventionError(f"{path} line {n}: needs a \"tick\" (a whole number ≥ 0)")
        try:
            iv = check(item)
        except InterventionError as exc:
            raise InterventionError(f"{path} line {n}: {exc}") from None
        unknown = [k for k in item if k != "tick" and k not in iv]  # (check keeps the keys its kind reads)
        if unknown:  # (a misspelt key was read by nothing: "trait" for "traits", a fish drawn at random)
            reads = ["tick", *iv, *(["traits"] if iv["kind"] == "add" and "traits" not in iv else [])]
            raise InterventionError(f"{path} line {n}: unknown key {', '.join(map(repr, unknown))} (a "
                                    f"{iv['kind']} intervention reads {', '.join(reads)})")
        out.append((item["tick"], iv, f"{path} line {n}"))
    return sorted(out, key=lambda p: p[0])


class _Twice(ValueError):
    pass


def _no_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once (json's own reading keeps the last silently)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Twice(f"key {k!r} given twice")
        out[k] = v
    return out


# ---------------------------------------------------------------- applying


def _square(world: World, x: int, y: int) -> np.ndarray:
    """The padded cells of the 3×3 square around (x, y) inside the tank."""
    w = world.water
    if not (0 <= x < w.width and 0 <= y < w.height):
        raise InterventionError(f"{x},{y} is outside the tank (0..{w.width - 1}, 0..{w.height - 1})")
    xs = np.arange(max(0, x - PATCH), min(w.width, x + PATCH + 1))
    ys = np.arange(max(0, y - PATCH), min(w.height, y + PATCH + 1))
    gx, gy = np.meshgrid(xs, ys)
    return np.asarray(w.cell(gx.ravel(), gy.ravel()), np.int64)


def apply(world: World, iv: dict[str, Any]) -> dict[str, Any]:
    """Apply ``iv`` (checked) to ``world`` now; returns what it did (``iv`` plus ``"cells"``:
    how many cells changed — 0 when nothing could: food everywhere already, fish in the way)."""
    iv = check(iv)
    w, kind = world.water, iv["kind"]
    changed = 0
    if kind == "food":
        cells = _square(world, iv["x"], iv["y"])
        cells = cells[~w.blocked[cells] & (w.food_born[cells] == NO_FOOD)]
        w.food_born[cells] = world.tick
        w.oldest_food = None
        changed = int(cells.size)
    elif kind == "rock":
        cells = _square(world, iv["x"], iv["y"])
        cells = cells[(w.terrain[cells] == WATER) & (world.occupant[cells] < 0)]
        if cells.size:
            w.edit(cells, ROCK)
        changed = int(cells.size)
    elif kind == "clear":
        cells = _square(world, iv["x"], iv["y"])
        x, y = w.xy(cells)
        inner = (x >= w.margin) & (x < w.width - w.margin) & (y >= w.margin) & (y < w.height - w.margin)
        cells = cells[inner & (w.terrain[cells] != WATER)]
        if cells.size:
            w.edit(cells, WATER)
        changed = int(cells.size)
    elif kind == "current":
        world.current = (world.grid.move_names.index(iv["dir"]), world.tick + iv["ticks"]) if iv["ticks"] else None
    elif kind == "add":
        fish = add_fish(world, iv)
        world.look()
        return {**iv, "fish": fish, "cells": 1}
    elif kind == "remove":
        remove_fish(world, iv["fish"])
        world.look()
        return {**iv, "cells": 1}
    else:
        world.tune(iv["key"], iv["value"])
    if kind != "tune":
        world.look()  # what the fish see changed
    return {**iv, "cells": changed}


def _rooms(cfg: Any) -> int:
    """The rooms a fish may be added into: the tank's fish and its spare rooms."""
    return int(cfg.fish.count + cfg.fish.spare)


def _no_room(cfg: Any) -> InterventionError:
    return InterventionError(f"no room for another fish: all {_rooms(cfg)} rooms are taken "
                             f"(start the tank with --set fish.spare=N)")


def rooms_for(world: World, ivs: list[dict[str, Any]]) -> None:
    """Each fish ``ivs`` add (checked interventions of one tick, in the order they apply) has a
    room, a fish they take out first freeing one: :func:`add_fish`'s room as it will look then,
    or its InterventionError (a fork asks before it records anything)."""
    cfg, s = world.cfg, world.school
    free = int(np.count_nonzero(s.absent[: _rooms(cfg)]))
    out: set[int] = set()
    for iv in ivs:
        if iv["kind"] == "remove" and 0 <= iv["fish"] < s.n and not s.absent[iv["fish"]] and iv["fish"] not in out:
            out.add(iv["fish"])
            free += iv["fish"] < _rooms(cfg)
        elif iv["kind"] == "add":
            free -= 1
            if free < 0:
                raise _no_room(cfg)


def check_removals(world: World, added: list[tuple[int, dict[str, Any]]],
                   recorded: dict[int, list[dict[str, Any]]] | None = None) -> None:
    """Each fish the checked ``added`` ``(tick, intervention)`` pairs take out (a fork's, at
    ``world.tick`` or later) is in the water when it is taken out — followed tick by tick from
    ``world`` with the ``recorded`` interventions (a recording's own, by tick: applied first at
    each tick) and the adds (each into the first free room, as :func:`add_fish`); else an
    :class:`InterventionError` naming the tick and the fish. (Before, a second removal of the same
    fish did nothing and was reported and recorded as done.)"""
    if not any(iv["kind"] == "remove" for _, iv in added):
        return
    absent, rooms = world.school.absent.copy(), _rooms(world.cfg)
    mine: dict[int, list[dict[str, Any]]] = {}
    for t, iv in added:
        mine.setdefault(t, []).append(iv)
    last = max(mine)
    theirs = {t: ivs for t, ivs in (recorded or {}).items() if world.tick <= t <= last}
    for t in sorted(set(mine) | set(theirs)):
        for own, iv in [(False, iv) for iv in theirs.get(t, [])] + [(True, iv) for iv in mine.get(t, [])]:
            if iv.get("kind") == "remove" and type(iv.get("fish")) is int and 0 <= iv["fish"] < absent.size:
                if own and absent[iv["fish"]]:
                    raise InterventionError(f"remove at t{t}: fish {iv['fish']} is already out of the water")
                absent[iv["fish"]] = True
            elif iv.get("kind") == "add":
                free = np.flatnonzero(absent[:rooms])
                if free.size:
                    absent[free[0]] = False


def add_fish(world: World, iv: dict[str, Any], fish: int | None = None, heading: int | None = None) -> int:
    """Put a new fish in room ``fish`` (default: the first free room that is no group's room for
    its young), on the free open cell nearest (x, y); its id. ``heading`` (default: drawn from
    the world's generator) and ``iv["traits"]`` (default: drawn) are the new fish's."""
    from .config import hundredths
    from .fish.memory import AS
    from .fish.personality import persona_text, sample_traits
    from .fish.plans import FIRST_PLAN

    s, w, cfg = world.school, world.water, world.cfg
    if fish is None:
        free = np.flatnonzero(s.absent[: _rooms(cfg)])
        if not free.size:  # (several added at one tick, checked before any was: one line, not a crash)
            raise _no_room(cfg)
        fish = int(free[0])
    open_free = w.open_cells[world.occupant[w.open_cells] < 0]
    if open_free.size == 0:
        raise InterventionError("no free water for another fish")
    ox, oy = w.xy(open_free)
    d2 = (ox - iv["x"]) ** 2 + (oy - iv["y"]) ** 2
    cell = int(open_free[np.lexsort((open_free, d2))[0]])  # nearest, ties by cell
    if iv.get("traits") is not None:
        traits = np.array(iv["traits"], np.int16)
    else:  # drawn like the tank's own fish, from the world's generator (so a replay draws the same)
        traits = sample_traits(world.rng, 1, cfg.fish.sociability_shift)[0]
    fresh = type(s)(1, cfg.memory, world.state_table)  # a new fish's every array, then what makes it this one
    for name in type(s).STATE:
        getattr(s, name)[fish] = getattr(fresh, name)[0]
    s.memory.tick[fish], s.memory.code[fish], s.memory.arg[fish], s.memory.count[fish] = 0, 0, 0, 0
    s.long_memory.records[fish], s.long_memory.count[fish] = 0, 0
    s.long_memory.texts = {k: v for k, v in s.long_memory.texts.items() if k[0] != fish}
    if world.places is not None:  # the places of a fish that had this room before are not its own
        fresh_places = type(world.places)(1, world.places.k)
        for name, arr in world.places.arrays().items():
            arr[fish] = fresh_places.arrays()[name][0]
    s.absent[fish] = False
    s.cell[fish] = cell
    world.occupant[cell] = fish
    s.heading[fish] = int(world.rng.integers(0, world.grid.n_moves)) if heading is None else heading
    s.energy[fish] = min(hundredths(cfg.fish.start_energy_max), world.energy_cap(fish))  # (its group's own cap)
    s.traits[fish] = traits
    s.persona[fish] = persona_text(traits)
    s.plan_goal[fish], s.plan_param[fish] = (FIRST_PLAN, s.heading[fish]) if world.plans else (
        s.plan_goal[fish], s.plan_param[fish])
    s.last_decision[fish] = world.tick - max(cfg.triggers.hard_timeout, cfg.triggers.plan_timeout)  # it decides now
    s.at_summary[fish, AS["memories"]], s.at_summary[fish, AS["energy"]] = 0, s.energy[fish]
    if iv.get("state") is not None:
        arrive(world, fish, iv["state"])
    world.used_slots = max(world.used_slots, fish + 1)
    world.refit_fish()
    return fish


# What a migrant keeps when it swims to another tank (mirofish/reef): not where it was or what it
# was doing there — its body, its counters and its memories.
_LEFT_BEHIND = ("cell", "absent", "intent", "stuck", "refused_at", "last_decision", "plan_goal", "plan_param",
                "plan_end", "plan_trigger", "no_food", "alone", "crowded", "hungry_food", "failed")


def departing(world: World, fish: int) -> dict[str, Any]:
    """Fish ``fish`` as an ``add`` intervention's ``state`` (JSON-ready): every kept array but
    where it was and its plan, its short and long memories (with their texts), its persona and
    its remembered places (their coordinates are the old tank's: kept, as a fish remembers)."""
    s = world.school
    state: dict[str, Any] = {"fish": {name: getattr(s, name)[fish].tolist() for name in type(s).STATE
                            if name not in _LEFT_BEHIND},
                   "memory": {name: getattr(s.memory, name)[fish].tolist()
                              for name in ("tick", "code", "arg", "count")},
                   "long": {"records": s.long_memory.records[fish].tolist(), "count": int(s.long_memory.count[fish]),
                            "texts": [[k[1], v] for k, v in sorted(s.long_memory.texts.items()) if k[0] == fish]},
                   "persona": s.persona[fish]}
    if world.places is not None:
        state["places"] = {name: a[fish].tolist() for name, a in world.places.arrays().items()}
    return state


def arrive(world: World, fish: int, state: dict[str, Any]) -> None:
    """Give the fish just added at room ``fish`` a migrant's ``state`` (see :func:`departing`);
    a part that does not fit this tank (another memory size, no places) is left out."""
    s = world.school
    try:
        for name, value in state["fish"].items():
            arr = getattr(s, name, None)
            if name in type(s).STATE and name not in _LEFT_BEHIND and arr is not None \
                    and np.shape(value) == arr[fish].shape:
                arr[fish] = value
        mem = state.get("memory", {})
        if all(np.shape(mem.get(n)) == getattr(s.memory, n)[fish].shape for n in ("tick", "code", "arg", "count")):
            for name in ("tick", "code", "arg", "count"):
                getattr(s.memory, name)[fish] = mem[name]
        long = state.get("long", {})
        if np.shape(long.get("records")) == s.long_memory.records[fish].shape:
            s.long_memory.records[fish], s.long_memory.count[fish] = long["records"], long["count"]
            for serial, text in long.get("texts", []):
                s.long_memory.texts[(fish, int(serial))] = str(text)
        s.persona[fish] = str(state.get("persona", s.persona[fish]))
        places = state.get("places")
        if world.places is not None and places is not None:
            for name, arr in world.places.arrays().items():
                if np.shape(places.get(name)) == arr[fish].shape:
                    arr[fish] = places[name]
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InterventionError(f"add: a migrant's state that does not fit: {exc}") from None


def remove_fish(world: World, fish: int) -> None:
    """Take fish ``fish`` out of the water (parked; its room is kept)."""
    s = world.school
    world.occupant[s.cell[fish]] = -1
    s.absent[fish] = True
    s.cell[fish] = world.park
    s.stuck[fish] = 0
    world.refit_fish()


def drift(world: World) -> int:
    """One tick of the current: each fish whose downstream cell is open and free moves there
    (downstream fish first, so a line of fish moves together; ties by id). Returns how many moved."""
    if world.current is None:
        return 0
    direction, until = world.current
    if world.tick >= until:
        world.current = None
        return 0
    s, w = world.school, world.water
    x, y = w.xy(s.cell)
    if world.grid.hex:  # downstream: along the way's unit vector between the cells' centres on screen
        cx, cy = world.grid.centres(x, y)
        ux, uy = world.grid.units[direction]
        along = np.round(cx * ux + cy * uy, 9)
    else:
        along = (-y, y, -x, x)[direction]  # larger = further downstream
    order = np.lexsort((s.ids, -along))
    order = order[~s.absent[order]]  # fish out of the water feel no current
    step = int(world.delta[direction])
    occupant, blocked, cell = world.occupant, w.blocked, s.cell
    moved = 0
    for i in order.tolist():
        target = cell[i] + step
        if not blocked[target] and occupant[target] < 0:
            occupant[cell[i]] = -1
            cell[i] = target
            occupant[target] = i
            moved += 1
    if moved:
        world.look()
    return moved
