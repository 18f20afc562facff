"""The compiled tick (mirofish/_tick.c) against the numpy reference, tick by tick.

Every test runs two tanks from one config side by side — one on the compiled tick, one on
the numpy code in world.py / arbiter.py / fish/steering.py — and asserts the same state hash,
the same actions and outcomes and the same views after every tick, over stretches that
exercise each rule: plans and their triggers, action mode, a jammed tank (chains, cycles,
crowded cells), starving fish, a states-only replay and the schooling demo.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from mirofish import arbiter, kernel
from mirofish.actions import Action
from mirofish.brains.instinct import PLANNER_UTILITIES
from mirofish.config import load_config
from mirofish.fish import perception
from mirofish.fish.plans import DEFAULT as DEFAULT_PLANS
from mirofish.fish.plans import G_HOLD, GOAL_NAMES
from mirofish.fish.steering import _BOXED, _NEG, F_BLOCKED, F_FOOD_CLOSE, F_VISIBLE, N_FEATURES
from mirofish.session import LiveSession
from mirofish.water import NO_FOOD
from mirofish.world import EVENT_ORDER, World, goal_parts

_GOAL_FLAGS = goal_parts(DEFAULT_PLANS).flags  # the default plan table's rows of plan events

compiled = kernel.compiled_tick()


def pair(**kw) -> tuple[LiveSession, LiveSession]:
    """Two live tanks from the same config: (compiled tick, numpy tick)."""
    cfg = load_config(**kw)
    fast, ref = LiveSession(cfg), LiveSession(cfg)
    ref.world._kernel = None
    assert fast.world._kernel is compiled
    return fast, ref


def agree(fast: LiveSession, ref: LiveSession, ticks: int) -> None:
    for _ in range(ticks):
        fa, fb = fast.step(), ref.step()
        assert np.array_equal(fa.executed, fb.executed), f"tick {fa.tick}: actions differ"
        assert np.array_equal(fa.move_outcome, fb.move_outcome), f"tick {fa.tick}: outcomes differ"
        assert np.array_equal(fast.world.codes, ref.world.codes), f"tick {fa.tick}: views differ"
        assert fast.state_hash() == ref.state_hash(), f"tick {fa.tick}: worlds differ"


def test_the_compiled_tick_is_built_and_runs_by_default(monkeypatch):
    """`pip install -e .` builds it (setup.py); docs/speed.md's figures are this tick's."""
    assert compiled is not None, "mirofish._tick was not built: reinstall with a C compiler (pip install -e .)"
    monkeypatch.delenv(kernel.ENV, raising=False)
    assert kernel.name() == "compiled"
    monkeypatch.setenv(kernel.ENV, "numpy")
    assert kernel.name() == "numpy" and World(load_config(seed=1))._kernel is None
    monkeypatch.setenv(kernel.ENV, "fast")
    with pytest.raises(ValueError, match="MIROFISH_TICK"):
        kernel.compiled_tick()


def test_the_c_constants_are_the_python_ones():
    c = compiled.CONSTANTS
    assert (c["EAT"], c["REST"]) == (Action.EAT, Action.REST)
    assert [c[k] for k in ("MOVED", "STAYED", "BLOCKED", "CROWDED", "OCCUPIED")] == [
        arbiter.MOVED, arbiter.STAYED, arbiter.BLOCKED, arbiter.CROWDED, arbiter.OCCUPIED]
    assert [c[k] for k in ("ATE", "NO_FOOD", "TAKEN")] == [arbiter.ATE, arbiter.NO_FOOD, arbiter.TAKEN]
    assert [c[k] for k in ("V_WATER", "V_WALL", "V_FOOD", "V_SELF", "V_FISH", "N_CODES")] == [
        perception.V_WATER, perception.V_WALL, perception.V_FOOD, perception.V_SELF, perception.V_FISH,
        perception.N_CODES]
    assert (c["G_HOLD"], c["NO_FOOD_BORN"], c["N_FEATURES"]) == (G_HOLD, NO_FOOD, N_FEATURES)
    assert (c["F_BLOCKED"], c["F_VISIBLE"], c["F_FOOD_CLOSE"], c["NEG"], c["BOXED"]) == (
        F_BLOCKED, F_VISIBLE, F_FOOD_CLOSE, _NEG, _BOXED)
    assert c["N_EVENTS"] == EVENT_ORDER.size and c["N_GOAL_FLAGS"] == _GOAL_FLAGS.shape[1]
    assert _GOAL_FLAGS.shape[0] == len(GOAL_NAMES)  # one row per plan type; the C tick reads the count from it
    assert compiled.PLANNER_UTILITIES == PLANNER_UTILITIES


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_default_tank_agrees_with_the_numpy_tick(seed):
    agree(*pair(seed=seed), 700)


def test_action_mode_agrees():
    agree(*pair(seed=4, **{"brain.decides": "action"}), 500)


@pytest.mark.parametrize("kw", [{"seed": 2}, {"seed": 4, "brain.decides": "action"},
                                {"seed": 5, "triggers.poll_every": 7},
                                {"seed": 6, "brain.decides": "action", "triggers.food_rose": False,
                                 "triggers.neighbours_changed": False}])
def test_the_fish_that_ask_are_found_and_gathered_as_in_numpy(kw):
    """Who asks for a decision and what the request carries (``World.asks``): the C call against
    the numpy reference at every tick of a run, with fish waiting for answers and fish taken
    out of the water, in plan, action and polling mode."""
    from mirofish.interventions import check

    fast = LiveSession(load_config(**kw))
    rng = np.random.default_rng(0)
    asked = 0
    for t in range(250):
        if t == 50:
            fast.engine.intervene(check({"kind": "remove", "fish": 3}, fast.world))
        fast.step()
        w = fast.world
        waiting = rng.random(w.school.n) < 0.3
        got = w.asks(waiting)
        w._kernel = None
        want = w.asks(waiting)
        w._kernel = compiled
        for name, a, b in zip(got._fields, got, want):
            assert a.dtype == b.dtype and np.array_equal(a, b), f"tick {w.tick}: {name} differs"
        asked += len(got.fish)
        assert 3 not in got.fish.tolist() or t < 50
    assert asked > 100


def test_damaged_sparse_feature_rows_are_refused_not_read_out_of_bounds():
    """Steering and the planner read the view-feature matrix as sparse rows made once per tank
    (steering.sparse_rows); rows pointing past their arrays or at no feature are a ValueError.
    The compiled tick checks them whole once and then compares them with a copy of what it
    checked: rows changed in any way — written while writable again, then made read-only again;
    another array in their place; a read-only view of an array written elsewhere — are checked
    whole again (each of these once read memory out of bounds)."""
    world = World(load_config(seed=3))
    world.step()
    rows = world.steering.rows
    with pytest.raises(ValueError, match="read-only"):
        rows["rows_column"][0] = 0
    for name, damage in (("rows_column", lambda a: a.__setitem__(0, N_FEATURES)),
                         ("rows_start", lambda a: a.__setitem__(-1, a[-1] + 5)),
                         ("rows_start", lambda a: a.__setitem__(3, a[2] - 1))):
        good = rows[name].copy()
        rows[name].flags.writeable = True  # (checked whole at the step before: now writable again)
        damage(rows[name])
        with pytest.raises(ValueError, match="not the sparse rows"):
            world.steer()
        rows[name][:] = good
        rows[name].flags.writeable = False
        world.steer()
        bad = good.copy()  # a damaged array, read-only, in the place of the one checked before
        damage(bad)
        bad.flags.writeable = False
        rows[name], kept = bad, rows[name]
        with pytest.raises(ValueError, match="not the sparse rows"):
            world.steer()
        rows[name] = kept
        kept.flags.writeable = True  # damaged, then made read-only again: the same object, its flags as before
        damage(kept)
        kept.flags.writeable = False
        with pytest.raises(ValueError, match="not the sparse rows"):
            world.steer()
        kept.flags.writeable = True
        kept[:] = good
        kept.flags.writeable = False
        base = good.copy()  # a read-only view, checked once, of an array then written elsewhere
        view = base[:]
        view.flags.writeable = False
        rows[name] = view
        world.steer()
        damage(base)
        with pytest.raises(ValueError, match="not the sparse rows"):
            world.steer()
        rows[name] = kept
    world.steer()


def test_steering_from_the_dense_rows_is_the_sparse_rows_steering_bit_for_bit():
    """On a CPU with AVX2 the compiled steering sums a square tank's view features from the
    matrix's dense rows (steering.dense_rows) in vector registers; without (a hexagonal tank, an
    older CPU, or no dense rows given) from the sparse rows. Both give the same actions and the
    same world, tick by tick; dense rows of another shape are a ValueError."""
    cfg = load_config(seed=7, **{"fish.count": 240})
    dense, sparse = LiveSession(cfg), LiveSession(cfg)
    assert dense.world.steering.rows["rows_dense"].size  # (read when the CPU has AVX2)
    sparse.world.steering.rows["rows_dense"] = np.zeros((0, 36))
    agree(dense, sparse, 400)
    rows = dense.world.steering.rows
    rows["rows_dense"] = np.zeros((10, 36))
    with pytest.raises(ValueError, match="rows_dense"):
        dense.world.steer()
    rows["rows_dense"] = np.zeros((400, 36), np.float32)  # the bytes of the right size, another dtype
    with pytest.raises(ValueError, match="rows_dense: not float64"):
        dense.world.steer()


@pytest.mark.parametrize("temperature", [0.5, 0.3, 2.0 ** -1024, 2.0 ** -1023])
def test_the_softmax_multiplies_only_where_that_is_dividing(temperature):
    """The compiled softmax multiplies by 1/T for a power-of-two temperature (steering's 0.25):
    the same numbers, so long as 1/T is a finite double. Below 2^-1023 it is not (1/T is inf, and
    0 × inf is NaN where 0 / T is 0): such a T divides, and the tank is numpy's still."""
    with np.errstate(over="ignore", invalid="ignore"):  # (numpy's own reference overflows there)
        agree(*pair(seed=1, **{"steering.temperature": temperature}), 60)


def test_a_cpu_without_avx2_steers_from_the_sparse_rows_to_the_same_world():
    """``MIROFISH_AVX2=0`` makes the compiled steering act as on a CPU without AVX2: it is given
    the dense rows and reads the sparse ones; the tank is the same, tick for tick."""
    code = ("import json, sys; from mirofish.config import load_config; from mirofish.session import LiveSession\n"
            "s = LiveSession(load_config(seed=3, **{'fish.count': 120})); hashes = []\n"
            "for _ in range(300):\n    s.step(); hashes.append(s.state_hash())\n"
            "print(json.dumps(hashes))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "MIROFISH_AVX2": flag}) for flag in ("0", "1")]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-500:] for r in runs]
    sparse, dense = (json.loads(r.stdout) for r in runs)
    assert len(sparse) == 300 and sparse == dense


def test_a_jammed_tank_agrees():
    """240 fish in a small tank: crowded targets, chains and head-on swaps every tick."""
    fast, ref = pair(seed=5, **{"fish.count": 240, "world.width": 36, "world.height": 20})
    agree(fast, ref, 300)
    refused = fast.world.school.refusals.sum()
    assert refused > 1000, f"only {refused} refusals: the jam was not exercised"


def test_starving_fish_agree():
    """No food and low energy: fish run down to 0, rest when exhausted, raise low-energy triggers."""
    fast, ref = pair(seed=6, **{"food.spawn_rate": 0.0, "fish.start_energy_min": 3.0, "fish.start_energy_max": 8.0})
    agree(fast, ref, 400)
    assert (fast.world.school.energy == 0).any()


def test_schooling_demo_agrees():
    cfg_kw = {"preset": "schooling-demo", "seed": 3}
    agree(*pair(**cfg_kw), 500)


def test_a_states_only_replay_agrees():
    """Given recorded actions (tables export): positions, energy, food and memories follow exactly."""
    fast, ref = pair(seed=7)
    src = LiveSession(load_config(seed=7))
    for _ in range(200):
        f = src.step()
        for s in (fast, ref):
            s.world.given_actions = f.executed
            s.world.step()
        assert fast.world.state_hash() == ref.world.state_hash()
        assert np.array_equal(fast.world.school.cell, src.world.school.cell)


def test_a_damaged_state_is_a_value_error_not_a_crash():
    fast, _ = pair(seed=8)
    fast.world.school.cell[3] = 10**9
    with pytest.raises(ValueError, match=r"fish cell 1000000000 is out of range"):
        fast.world.step()
    fast, _ = pair(seed=8)
    fast.world.school.plan_goal[0] = 77
    with pytest.raises(ValueError, match=r"plan goal 77 is out of range"):
        fast.world.step()


def test_adopt_reads_each_fishs_own_rows_of_the_plan_weights():
    # row_base (joined tanks of other live settings, mirofish/batch.py): each fish's rows of the
    # stacked table start at its own block; none given: every fish reads the one table
    from mirofish.config import load_config as lc
    from mirofish.world import World

    a, b = World(lc(seed=4)), World(lc(seed=4, **{"steering.alignment": 0.0, "steering.food": 1.0}))
    assert not np.array_equal(a.steering.table, b.steering.table)
    n, rows = a.school.n, len(a.steering.table)
    code = a.plan_table.code  # plans that swim by alignment and by food: school, forage
    fish, goals = np.arange(n), np.where(np.arange(n) % 4 < 2, code["school"], code["forage"]).astype(np.int8)
    params, horizons = np.zeros(n, np.int16), np.full(n, 30, np.int16)
    a.steering.table = np.concatenate([a.steering.table, b.steering.table])
    a._row_base = np.where(np.arange(n) % 2 == 1, rows, 0).astype(np.int64)  # odd fish: the second table
    a.apply_plans(fish, goals, params, horizons)
    b.apply_plans(fish, goals, params, horizons)
    plain = World(lc(seed=4))
    plain.apply_plans(fish, goals, params, horizons)
    assert np.array_equal(a.steering.w[1::2], b.steering.w[1::2]) and np.array_equal(a.steering.w[::2],
                                                                                     plain.steering.w[::2])
    assert not np.array_equal(a.steering.w[1::2], plain.steering.w[1::2])
    a._row_base = np.full(n, 2 * rows, np.int64)  # past the table: refused in one line
    with pytest.raises(ValueError, match=rf"row base {2 * rows} is out of range"):
        a.apply_plans(fish, goals, params, horizons)
    a._row_base = np.zeros(3, np.int64)
    with pytest.raises(ValueError, match="row_base: 3 items, not 0 or one a fish"):
        a.apply_plans(fish, goals, params, horizons)
    a._row_base = np.full(n, 5e-324)  # as many bytes, read as int64 1: refused, not misread
    with pytest.raises(ValueError, match="row_base: not an int64 array"):
        a.apply_plans(fish, goals, params, horizons)
    a._row_base = np.full(n, 2 * rows - 1, np.int64)  # inside the table, its block past it: the base named
    with pytest.raises(ValueError, match=rf"row base {2 * rows - 1} is out of range"):
        a.apply_plans(fish, goals, params, horizons)


FUZZ = r'''
import json
import sys
import numpy as np
from mirofish.config import load_config
from mirofish.session import LiveSession
from mirofish.world import School

rng = np.random.default_rng(int(sys.argv[1]))
names = [f"fish.{n}" for n in School.STATE] + ["memory.tick", "memory.code", "memory.arg", "memory.count"]
src = LiveSession(load_config(seed=1, **{"fish.count": 30}))
src.run(50)
good = src.world.state_arrays()
outcomes = {"ran": 0, "refused": 0}
for _ in range(int(sys.argv[2])):
    d = {k: v.copy() for k, v in good.items()}
    arr = d[names[rng.integers(len(names))]]
    if arr.dtype == bool:
        continue
    info, flat = np.iinfo(arr.dtype), arr.reshape(-1)
    for _ in range(int(rng.integers(1, 4))):
        flat[rng.integers(flat.size)] = rng.choice([info.min, info.max, -1, -2, 7, 100,
                                                    rng.integers(info.min, info.max, dtype=np.int64)])
    s = LiveSession(load_config(seed=1, **{"fish.count": 30}))
    try:
        s.world.load_state_arrays(d)
        s.run(5)
        outcomes["ran"] += 1
    except (ValueError, IndexError):
        outcomes["refused"] += 1
print(json.dumps(outcomes))
'''


def test_corrupted_states_are_refused_or_run_never_a_crash(tmp_path):
    """Random bad values in every state array (as a damaged keyframe would bring): the compiled
    tick raises or runs on, it never reads or writes outside an array (a crash would kill the
    child process)."""
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ)
    out = subprocess.run([sys.executable, str(script), "3", "250"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"the fuzz child died ({out.returncode}): {out.stderr[-500:]}"
    counts = json.loads(out.stdout.strip().splitlines()[-1])
    assert counts["refused"] >= 10 and counts["ran"] >= 10, counts


def _spied_calls(seed: int = 3) -> dict[str, tuple[dict, dict]]:
    """The arguments of each compiled function in one tick of a fresh tank."""
    k = kernel.compiled_tick()
    assert k is not None
    calls: dict[str, tuple[dict, dict]] = {}

    class Spy:
        def __getattr__(self, name):
            def call(*args):
                if name in kernel.TABLES:  # the functions by name (the package's calls: tuples in table order)
                    arrays, numbers = (a if isinstance(a, dict) else dict(zip(getattr(k, t), a, strict=True))
                                       for a, t in zip(args, kernel.TABLES[name], strict=True))
                    calls[name] = ({n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in arrays.items()},
                                   dict(numbers))
                return getattr(k, name)(*args)
            return call

    world = World(load_config(seed=seed))
    world._kernel = Spy()
    world.step()
    return calls


@pytest.mark.parametrize("fn, arrays, numbers", [("steer", "STEER_ARRAYS", "STEER_NUMBERS"),
                                                  ("arbitrate", "ARBITRATE_ARRAYS", "ARBITRATE_INTS"),
                                                  ("after", "AFTER_ARRAYS", "AFTER_INTS")])
def test_the_compiled_tick_takes_its_arguments_by_name_and_refuses_a_wrong_one(fn, arrays, numbers):
    """The C side names every argument of its three functions: the order they are passed in
    does not matter, and a missing, extra or misspelt name fails loudly instead of silently
    using the wrong array."""
    k = kernel.compiled_tick()
    given, nums = _spied_calls()[fn]
    assert set(given) == set(getattr(k, arrays)) and set(nums) == set(getattr(k, numbers))

    def fresh(d):
        return {name: (v.copy() if isinstance(v, np.ndarray) else v) for name, v in d.items()}

    a, reordered = fresh(given), dict(reversed(list(fresh(given).items())))
    getattr(k, fn)(a, dict(nums))
    getattr(k, fn)(reordered, dict(reversed(list(nums.items()))))
    assert all(np.array_equal(a[n], reordered[n]) for n in a)  # by name, whatever the order
    first = getattr(k, arrays)[1]
    misspelt = fresh(given)
    misspelt[first + "_"] = misspelt.pop(first)
    with pytest.raises(ValueError, match=f"{fn}\\(\\): no array named '{first}'"):
        getattr(k, fn)(misspelt, dict(nums))
    with pytest.raises(ValueError, match=f"{len(given) + 1} arrays given, it takes exactly {len(given)}"):
        getattr(k, fn)({**fresh(given), "spare": np.zeros(1)}, dict(nums))
    short = dict(nums)
    del short["tick"]
    with pytest.raises(ValueError, match="no number named 'tick'"):
        getattr(k, fn)(fresh(given), short)


def test_two_same_shaped_state_arrays_swapped_in_the_declared_table_fail_loudly():
    """The tank's state is declared once (world.FISH_STATE): the school is built from it and
    the compiled tick checks each array it is given by name against the size it expects, so
    two same-shaped rows swapped in the table (heading int8[n] ↔ energy int32[n]) make the
    first tick fail, naming the array — never a tick run on the wrong memory."""
    from mirofish import world as world_module
    from mirofish.world import FISH_STATE, School

    rows = list(FISH_STATE)
    h = next(i for i, r in enumerate(rows) if r.name == "heading")
    e = next(i for i, r in enumerate(rows) if r.name == "energy")
    assert rows[h].width == rows[e].width == 0 and rows[h].dtype != rows[e].dtype
    rows[h], rows[e] = (world_module.StateArray("heading", rows[e].dtype),
                        world_module.StateArray("energy", rows[h].dtype))
    cfg = load_config(seed=2)
    good = World(cfg)
    bad = World(cfg)
    bad.school = School(cfg.fish.slots, cfg.memory, tuple(rows))
    for name in School.STATE:  # the same tank, laid out by the swapped table
        value = getattr(good.school, name)
        setattr(bad.school, name, value.astype(getattr(bad.school, name).dtype))
    good.step()
    with pytest.raises(ValueError, match=r"array (heading|energy): \d+ bytes, expected \d+"):
        bad.step()


def test_the_layouts_the_c_side_uses_are_the_python_ones():
    """Feature columns, the order of steering's six weighted terms, the goal flag columns."""
    from mirofish.fish import steering
    from mirofish.world import GOAL_FLAG_COLUMNS

    k = kernel.compiled_tick()
    c = k.CONSTANTS
    assert [c[f"F_{n}"] for n in ("OPEN", "WALL", "CROWD", "ALIGN", "FISH", "LOST", "FOOD")] == [
        steering.F_OPEN, steering.F_WALL, steering.F_CROWD, steering.F_ALIGN, steering.F_FISH, steering.F_LOST,
        steering.F_FOOD]
    assert k.STEER_TERMS == steering.TERMS
    assert k.GOAL_FLAG_COLUMNS == GOAL_FLAG_COLUMNS and len(GOAL_FLAG_COLUMNS) == _GOAL_FLAGS.shape[1]
    from mirofish.observe import worddeed

    assert k.DEEDS_COLUMNS == worddeed._COLS  # the rows of the word-and-deed table the C tally reads


def test_the_compiled_union_find_labels_as_the_numpy_code_does(monkeypatch):
    """Pocket sealing at tank setup and the metrics' clusters: the compiled union-find gives the
    labels the numpy reference gives (the smallest node of each component), on random graphs
    and random tanks — so a tank is built the same way with or without the extension."""
    from mirofish import water as W
    from mirofish.observe import metrics as M

    rng = np.random.default_rng(5)
    for trial in range(25):
        tank = np.where(rng.random((30 + trial, 50)) < 0.42, W.ROCK, W.WATER).astype(np.int8)
        n = int(rng.integers(1, 400))
        i, j = rng.integers(0, n, 2 * n), rng.integers(0, n, 2 * n)
        fast_tank = tank.copy()
        W._seal_pockets(fast_tank)
        fast = M._components(n, i, j)
        with monkeypatch.context() as m:
            m.setattr(kernel, "_compiled", None)
            W._seal_pockets(tank)
            slow = M._components(n, i, j)
        assert np.array_equal(fast_tank, tank) and np.array_equal(fast, slow), trial
    with pytest.raises(ValueError, match="pair node"):
        kernel.compiled_tick().components(3, np.array([0, 5]), np.array([1, 2]), np.empty(3, np.int64))


@pytest.mark.parametrize("kw", [{"seed": 1}, {"seed": 4}, {"seed": 2, "preset": "schooling-demo"},
                                {"seed": 3, "fish.count": 240}, {"seed": 5, "brain.chooser": "never_school"}])
def test_the_compiled_planner_decides_as_the_numpy_planner(kw):
    """The instinct planner in C (``plan``) against its numpy reference, in whole runs: every
    batch's goals, parameters and horizons the same, and the same world after every tick."""
    preset = kw.pop("preset", None)
    cfg = load_config(preset=preset, seed=kw.pop("seed"), **kw)
    fast, ref = LiveSession(cfg), LiveSession(cfg)
    from mirofish.brains.instinct import InstinctPlanner

    assert isinstance(ref.engine.source, InstinctPlanner) and fast.engine.source._kernel is compiled
    ref.engine.source._kernel = None  # the reference planner: numpy
    for _ in range(600):
        fast.step()
        ref.step()
        assert fast.state_hash() == ref.state_hash(), f"tick {fast.tick}: the planners decided differently"


def test_a_large_tank_reads_its_views_from_a_grid_of_codes_and_agrees():
    """Above BIG_GRID cells after() first builds a grid of view codes (one pass in order instead
    of three big arrays read at random); the views, and so the world, stay the numpy tick's."""
    fast, ref = pair(seed=9, **{"fish.count": 3000, "world.width": 520, "world.height": 400})
    assert fast.world.water.food_born.size > 200_000
    agree(fast, ref, 25)


def test_a_tank_split_over_the_cores_agrees_with_the_numpy_tick_and_with_one_thread():
    """From 4,096 fish steer and after split their per-fish loops over the cores (OpenMP, when
    built with it): the same world as the numpy tick, tick by tick, and as one thread. A damaged
    state found inside a split loop is still one ValueError naming it."""
    kw = {"seed": 11, "fish.count": 4200, "world.width": 300, "world.height": 200}
    fast, ref = pair(**kw)
    agree(fast, ref, 12)
    code = ("import sys; from mirofish.config import load_config; from mirofish.session import LiveSession;"
            f"s = LiveSession(load_config(**{kw!r})); s.run(40); print(s.state_hash())")
    hashes = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "OMP_NUM_THREADS": threads}).stdout.strip() for threads in ("1", "2")}
    assert len(hashes) == 1 and hashes.pop()  # one world, whatever the threads
    fast.world.school.cell[4100] = -5
    with pytest.raises(ValueError, match="fish cell -5 is out of range"):
        fast.step()


def test_a_worker_forked_after_a_split_tick_runs_its_tank():
    """Sweeps and reefs fork their workers. A child forked from a process whose tank split its
    loops over the cores runs its own large tank (serially) to the same world, without hanging
    on threads it did not inherit."""
    code = (
        "import os, sys\n"
        "from mirofish.config import load_config\n"
        "from mirofish.session import LiveSession\n"
        "kw = {'seed': 12, 'fish.count': 4200, 'world.width': 300, 'world.height': 200}\n"
        "def run():\n"
        "    s = LiveSession(load_config(**kw)); s.run(8); return s.state_hash()\n"
        "mine = run()\n"
        "r, w = os.pipe()\n"
        "if os.fork() == 0:\n"
        "    os.write(w, run().encode()); os._exit(0)\n"
        "os.close(w); child = os.read(r, 200).decode(); os.wait()\n"
        "print(mine == child and len(child) > 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "OMP_NUM_THREADS": "2"})
    assert out.stdout.strip() == "True", out.stderr[-400:]


def test_the_compiled_neighbours_give_the_numpy_figures():
    """Nearest-neighbour distances and cluster labels from the C grid search equal the numpy
    reference (all pairs up to 300 fish, its own grid search beyond), on random tanks."""
    from mirofish.observe import metrics as M

    rng = np.random.default_rng(11)
    for trial in range(60):
        n = int(rng.choice([2, 3, 7, 60, 299, 301, 900]))
        w, h = int(rng.integers(4, 300)), int(rng.integers(4, 200))
        if n > w * h:
            continue
        cells = rng.choice(w * h, n, replace=False)
        xy = np.stack([cells % w, cells // w], axis=1).astype(np.float64)
        nnd, labels = M.nn_and_labels(xy)
        ref_nnd, ref_labels = M.numpy_nn_and_labels(xy)
        assert nnd == ref_nnd and np.array_equal(labels, ref_labels), trial
        moving = rng.random(n) < 0.6
        found = [k for k in sorted(set(labels.tolist()))  # moving schools, largest first, then by label
                 if (labels == k).sum() >= 3 and 2 * moving[labels == k].sum() >= (labels == k).sum()]
        found.sort(key=lambda k: -(labels == k).sum())
        assert [list(s) for s in M.schools(labels, moving)] == [list(np.flatnonzero(labels == k)) for k in found]


@pytest.mark.parametrize("kw", [{"seed": 1}, {"seed": 2, "brain.decides": "action"},
                                {"seed": 3, "fish.count": 240, "world.width": 36, "world.height": 20}])
def test_the_compiled_metrics_tally_as_the_numpy_metrics(kw):
    """The metrics' and the word-and-deed score's per-tick bookkeeping in C (tally, deeds) against
    their numpy reference fed the same frames: every figure, alert and plan tally the same."""
    from mirofish.observe.metrics import Metrics

    cfg = load_config(**kw)
    live = LiveSession(cfg)
    ref = Metrics(cfg.metrics, live.world.school.n, cfg.world.width, cfg.world.height)
    ref.compiled = ref.word_deed.compiled = False
    live.engine.observers.append(ref.observe)
    assert live.metrics.compiled and live.metrics.word_deed.compiled
    for t in range(600):
        live.step()
        if t % 25 == 0:
            assert live.metrics.summary() == ref.summary(), t
            assert np.array_equal(live.metrics.word_deed.counts, ref.word_deed.counts), t
            assert np.array_equal(live.metrics.heat, ref.heat), t
    assert ref.heat.sum() > 0 and ref.word_deed.counts[:, 5].sum() > 0  # stuck squares and judged plans were tallied


def test_food_spawns_found_through_the_bucket_index_are_the_binary_searchs():
    """The compiled food() looks each draw up between two entries of a bucket index of the spawn
    cdf (Water.spawn_index) instead of over the whole cdf: the same cells, for uneven weights,
    draws that fall exactly on a bucket's edge or on a cdf value, and indexes of any size."""
    k = kernel.compiled_tick()
    if k is None:
        pytest.skip("the compiled tick is not built here (MIROFISH_TICK=numpy)")
    rng = np.random.default_rng(8)
    for m in (1, 2, 7, 100, 5000, 70000):
        weights = rng.random(m) ** 4 + (rng.random(m) < 0.3) * 5.0
        cdf = np.cumsum(weights)
        cdf /= cdf[-1]
        for buckets in (1, 16, 1024, 65536):
            index = np.searchsorted(cdf, np.arange(buckets + 1) / buckets, side="right").astype(np.int32)
            draws = np.concatenate([rng.random(300), np.arange(buckets) / buckets, cdf[rng.integers(0, m, 50)],
                                    [0.0, np.nextafter(1.0, 0.0)]])
            draws = draws[draws < 1.0]
            open_cells = np.arange(m, dtype=np.int32)
            picked = []
            for idx in (index, None):
                born = np.full(m, -1, np.int32)
                args = (born, open_cells, cdf, draws, 5, 300, None) + ((idx,) if idx is not None else ())
                k.food(*args)
                picked.append(born)
            want = np.full(m, -1, np.int32)
            want[np.minimum(np.searchsorted(cdf, draws, side="right"), m - 1)] = 5
            assert np.array_equal(picked[0], picked[1]) and np.array_equal(picked[0], want), (m, buckets)


def test_food_rots_from_the_ring_as_from_a_scan_of_the_grid():
    """The compiled tick rots food from a ring of (born tick, cell) pairs instead of scanning
    the grid every tick: tick by tick the same world as the numpy tick's scan, with food that
    rots within 7 ticks, food put in by hand (the ring rebuilt from the grid), a fish eating it,
    a state loaded in the middle (a fork's start) and a spawn larger than the ring."""
    fast, ref = pair(seed=6, **{"food.rot_ticks": 7, "food.spawn_rate": 0.004})
    agree(fast, ref, 40)
    rotted = 0
    for t in range(60):
        if t % 9 == 0:
            for s in (fast, ref):
                s.engine.intervene({"kind": "food", "x": 10 + t % 40, "y": 5 + t % 30})
        for s in (fast, ref):
            s.step()
        assert fast.state_hash() == ref.state_hash(), f"tick {fast.world.tick}: worlds differ"
        rotted += int(np.count_nonzero(fast.world.water.food_born != NO_FOOD))
    state = fast.world.state_arrays()
    fast.world.load_state_arrays(state)  # (a fork's start: the ring is rebuilt from the grid)
    ref.world.load_state_arrays(state)
    fast.world.water._ring = np.zeros((1, 2), np.int32)  # too small for the next spawn: grown, rebuilt
    agree(fast, ref, 60)
    w = fast.world.water
    live = w._ring[(w._ring_at[0] + np.arange(w._ring_at[1])) % len(w._ring)]
    on_grid = np.flatnonzero(w.food_born != NO_FOOD)
    assert set(on_grid.tolist()) <= set(live[:, 1].tolist())  # every item on the grid is in the ring
    assert (np.diff(live[:, 0]) >= 0).all() and rotted > 0  # oldest first


def test_long_term_summaries_written_in_c_are_the_numpy_ones():
    """Every summary_every ticks the compiled tick writes the long-term memories' records in C
    (_tick.summarize): tick by tick the same records, counts and counters as World._summarize's
    numpy, with summaries every 3 ticks quoting 5 events and keeping 2."""
    fast, ref = pair(seed=9, **{"memory.summary_every": 3, "memory.summary_anchors": 5,
                                "memory.summaries_kept": 2})
    written = 0
    for _ in range(240):
        fast.step(), ref.step()
        a, b = fast.world.school, ref.world.school
        assert np.array_equal(a.long_memory.records, b.long_memory.records)
        assert np.array_equal(a.long_memory.count, b.long_memory.count)
        assert np.array_equal(a.at_summary, b.at_summary)
        written = int(a.long_memory.count.sum())
    assert written > 500


def test_a_sessions_decision_history_kept_in_c_is_the_pythons():
    """A session's decision history takes each batch of decisions in one compiled call
    (_tick.keep): every field of every fish and the per-goal counts equal the Python reference's
    (fish by fish for small batches, numpy for large), in a small and a large tank."""
    from mirofish.session.history import DecisionHistory

    for fish, w, h in ((60, 96, 54), (500, 140, 80)):
        live = LiveSession(load_config(seed=3, **{"fish.count": fish, "world.width": w, "world.height": h}))
        frames = [live.step() for _ in range(150)]
        with_plans = [f for f in frames if f.applied]
        with_plans[5].applied[0].status = None  # (a batch without statuses: status 0)
        with_plans[6].ended = []  # (a frame without the ended triggers: -1)
        hist = []
        for compiled in (True, False):
            hs = DecisionHistory(fish, n_goals=live.world.plan_table.n)
            hs.compiled = compiled
            for f in frames:
                hs.observe(f)
            hist.append(hs)
        fast, slow = hist
        assert np.array_equal(fast.counts, slow.counts) and fast.counts.sum() > fish
        for name in ("tick", "goal", "param", "horizon", "tier", "status", "ended"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name)), (fish, name)
        assert fast.last == slow.last and fast.copy().compiled


def test_a_loaded_state_with_food_born_later_rots_as_the_numpy_tick():
    """A state whose food was born after its tick (an edited or damaged keyframe): the ring of
    the compiled tick's rot would not stay oldest first, so it is rebuilt from the grid while
    such food is there — tick by tick the numpy tick's rot (a fault campaign found the ring
    keeping food past its rot tick here)."""
    fast, ref = pair(seed=2, **{"food.rot_ticks": 9})
    agree(fast, ref, 30)
    state = fast.world.state_arrays()
    born = np.array(state["food.born"])
    born[: max(1, born.size // 3)] = fast.world.tick + 20  # a third of the food "born" 20 ticks ahead
    state["food.born"] = born
    fast.world.load_state_arrays(state)
    ref.world.load_state_arrays(state)
    agree(fast, ref, 60)


def test_the_newer_compiled_functions_refuse_what_would_write_outside_their_arrays():
    """Cases a fault campaign found (each once wrote past an array or answered wrongly): an
    output that is also an input, a ring far too deep, a heading outside the four, a NaN draw,
    a tick beyond int32 — each one ValueError naming it; an index not of this cdf still picks
    as the whole cdf does."""
    k = compiled
    if k is None:
        pytest.skip("the compiled tick is not built here (MIROFISH_TICK=numpy)")
    n = 40
    xy, heading, moving = np.zeros((n, 2)), np.zeros(n, np.int8), np.ones(n, bool)
    ids, labels = np.arange(n, dtype=np.int64), np.zeros(n, np.int64)
    with pytest.raises(ValueError, match="shares memory"):
        k.school(xy, heading, moving, labels, labels, np.empty(n, np.int64), np.empty(8), ids, xy, None)
    with pytest.raises(ValueError, match="heading 5"):
        k.school(xy, np.full(n, 5, np.int8), moving, labels, np.empty(n, np.int64), np.empty(n, np.int64),
                 np.empty(8), ids, xy, None)
    ring_n = np.zeros(n, np.int64)
    arrays = {"fish": ring_n, "goals": np.zeros(n, np.int8), "params": np.zeros(n, np.int16),
              "open": np.ones(n, bool), "said": np.zeros(n, bool), "food0": np.zeros(n, np.int16),
              "table": np.zeros((11, n), np.int64), "counts": np.zeros((n, 7), np.int64),
              "ring": np.zeros((n, 8, 7), np.int64), "ring_n": ring_n, "deed_of": np.zeros(12, np.int64),
              "x": np.zeros(n, np.int64), "y": np.zeros(n, np.int64), "nb_prev": np.zeros(n, np.int16),
              "neighbours": np.zeros(n, np.int16)}
    ints = {"tick": 5, "recent": 8, "crowd": 0, "away_kinds": 2, "moves": 4}
    with pytest.raises(ValueError, match="shares memory"):
        k.judge(arrays, ints)
    with pytest.raises(ValueError, match="recent must be"):
        k.judge({**arrays, "fish": np.zeros(n, np.int64)}, {**ints, "recent": 2**61 + 1})
    born, cells, cdf = np.full(50, -1, np.int32), np.arange(50, dtype=np.int32), np.linspace(0.02, 1.0, 50)
    with pytest.raises(ValueError, match="NaN"):
        k.food(born, cells, cdf, np.array([np.nan]), 5, 10, None)
    with pytest.raises(ValueError, match="out of range"):
        k.food(born, cells, cdf, np.array([0.5]), 2**32 - 1, 10, None)
    draws = np.random.default_rng(1).random(30)
    want = np.full(50, -1, np.int32)
    want[np.searchsorted(cdf, draws, side="right")] = 5
    k.food(born, cells, cdf, draws, 5, 10, None, np.zeros(17, np.int32))  # (an index of another cdf)
    assert np.array_equal(born, want)


def test_the_compiled_selection_gives_numpys_partition_and_the_p95_with_it():
    """The metrics' latency P95 (nearest rank over the last 2,048 decisions) is selected in C
    (``_tick.nth``): the value ``np.partition`` gives, for values with ties, all equal, sorted
    either way; NaN or an index outside the values is a ValueError, not a read past them. Both
    ways of selecting are taken: a heap of the values above the k-th when they are 256 or fewer
    (the P95's 103 of 2,048), a selection in a copy otherwise."""
    rng = np.random.default_rng(5)
    for trial in range(500):
        n = int(rng.integers(1, 2100))
        kind = trial % 5
        v = (rng.random(n), rng.integers(0, 5, n).astype(np.float64), np.zeros(n),
             np.sort(rng.random(n))[::-1].copy(), np.sort(rng.random(n)))[kind]
        near_top = max(0, n - 1 - int(rng.integers(0, 300)))  # 256 or fewer above it: the heap, mostly
        for k in (int(rng.integers(0, n)), near_top, math.ceil(0.95 * n) - 1):
            assert compiled.nth(v, k) == np.partition(v, k)[k], (n, k, kind)
    with pytest.raises(ValueError, match="NaN"):
        compiled.nth(np.array([1.0, 2.0, np.nan]), 2)  # (the heap's way: one value above the k-th)
    with pytest.raises(ValueError, match="NaN"):
        compiled.nth(np.array([1.0, np.nan, 2.0]), 1)
    with pytest.raises(ValueError, match="not an index"):
        compiled.nth(np.array([1.0, 2.0]), 2)
    for wrong in (np.array([3, 1, 2]), np.array([3.0, 1.0], np.float32), np.array([3.0, 1.0], np.longdouble),
                  np.array([1 + 1j, 2j])):  # no other dtype is read as float64
        with pytest.raises(ValueError, match="not float64"):
            compiled.nth(wrong, 0)
    s = LiveSession(load_config(seed=2))
    s.run(300)
    m = s.metrics
    n = min(m._lat_n, m._lat.size)
    k = int(np.ceil(0.95 * n)) - 1  # nearest rank
    assert n and m.compiled and m.latency_p95() == float(np.partition(m._lat[:n], k)[k] * 1000)


def test_arrays_come_in_through_numpy_or_any_buffer_with_the_same_checks():
    """numpy arrays are read through numpy's C API, anything else that exports a buffer through
    the buffer protocol: the same figures either way, and the same one-line errors for an array
    that is not contiguous, not writable where it is written, or of another size."""
    import array

    k = kernel.compiled_tick()
    rng = np.random.default_rng(5)
    x, y = rng.integers(0, 40, 50), rng.integers(0, 30, 50)
    got = []
    for xs, ys in ((x, y), (array.array("q", x.tolist()), memoryview(array.array("q", y.tolist())))):
        nnd, labels = np.empty(50), np.empty(50, np.int64)
        k.neighbours(xs, ys, 2, nnd, labels)
        got.append((nnd, labels))
    assert np.array_equal(got[0][0], got[1][0]) and np.array_equal(got[0][1], got[1][1])
    nnd, labels = np.empty(50), np.empty(50, np.int64)
    with pytest.raises(ValueError, match="array x: not a contiguous array"):
        k.neighbours(np.repeat(x, 2)[::2], y, 2, nnd, labels)
    frozen = np.empty(50)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="array nnd: not a contiguous writable array"):
        k.neighbours(x, y, 2, frozen, labels)
    with pytest.raises(ValueError, match="array nnd: not a contiguous writable array"):
        k.neighbours(x, y, 2, bytes(400), labels)  # (bytes: the buffer protocol's path)
    with pytest.raises(ValueError, match="array labels: 392 bytes, expected 400"):
        k.neighbours(x, y, 2, nnd, labels[:49])
    with pytest.raises(ValueError, match="array labels: 392 bytes, expected 400"):
        k.neighbours(x, y, 2, nnd, bytearray(392))


@pytest.mark.parametrize("fish", [2, 128, 129, 300])
def test_neighbours_refuses_fish_spread_past_its_limit_however_far(fish):
    """Fish a million cells or more apart are refused in one line — also at the ends of int64,
    where the spread, taken as a signed difference, wraps round to a small number (the grid's
    path wrote outside its buffer there, the pairs' path gave wrong distances); one fish alone
    has no nearest (inf), as numpy says."""
    k = kernel.compiled_tick()
    big = np.iinfo(np.int64)
    x = np.resize(np.array([big.min, big.max]), fish)
    y = np.zeros(fish, np.int64)
    for xs in (x, np.resize(np.array([0, 1_000_000]), fish)):
        with pytest.raises(ValueError, match="spread over more than 1000000 cells"):
            k.neighbours(xs, y, 2, np.empty(fish), np.empty(fish, np.int64))
    nnd = np.empty(1)
    k.neighbours(np.array([3]), np.array([4]), 2, nnd, np.zeros(1, np.int64))
    assert nnd[0] == np.inf


def test_names_in_another_order_give_the_same_answer():
    """A compiled call's dicts of names in their table's order (the package's own calls) are read
    in one walk; in another order, each name is looked up (counted in dict_counts) with the same
    result; a missing or an extra name is still refused by name either way."""
    k = kernel.compiled_tick()
    world = World(load_config(seed=3))
    for _ in range(30):
        world.step()
    got: list[tuple[dict, dict]] = []

    class Spy:  # the world's kernel, keeping what ask() was given
        def __getattr__(self, name):
            return getattr(k, name)

        def ask(self, arrays, numbers):
            got.append((arrays, numbers))
            return k.ask(arrays, numbers)

    world._kernel = Spy()
    waiting = np.zeros(world.school.n, bool)
    world.asks(waiting)
    world._kernel = k
    values, ints = got[0]  # (World.asks, rewritten by kernel.positional: tuples in the tables' order)
    assert isinstance(values, tuple) and isinstance(ints, tuple)
    arrays, numbers = dict(zip(k.ASK_ARRAYS, values, strict=True)), dict(zip(k.ASK_INTS, ints, strict=True))
    assert [type(v) for v in k.ask(values, ints)] == [type(v) for v in k.ask(arrays, numbers)]
    before = k.dict_counts()[1]
    want = k.ask(arrays, numbers)
    assert k.dict_counts()[1] == before
    backwards = dict(reversed(arrays.items())), dict(reversed(numbers.items()))
    again = k.ask(*backwards)
    assert k.dict_counts()[1] == before + 2  # (both dicts)
    assert want[0].size and all(np.array_equal(a, b) for a, b in zip(want, again))
    for bad, match in (({**arrays, "extra": waiting}, "takes exactly"),
                       ({n: v for n, v in arrays.items() if n != "codes"}, "no array named 'codes'")):
        with pytest.raises(ValueError, match=match):
            k.ask(bad, numbers)
