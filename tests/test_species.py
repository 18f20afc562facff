"""Species: fish that are born, starve and are caught, and hunters whose catch a school confuses
(mirofish/population.py, docs/species.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mirofish.config import ConfigError, GroupConfig, load_config
from mirofish.session import LiveSession
from mirofish.water import NO_FOOD

ROOT = Path(__file__).resolve().parent.parent
PRESET = "predators"


def _tank(seed: int = 3, **dotted):
    return load_config(seed=seed, preset=PRESET, **dotted)


def test_births_starvation_and_catches_record_and_replay_by_hash(tmp_path):
    rec = tmp_path / "pred.mirofish"
    run = subprocess.run([sys.executable, "-m", "mirofish", "live", "--headless", "--ticks", "400", "--preset", PRESET,
                          "--record", str(rec)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    pop = summary["population"]
    assert pop["minnows"]["born"] > 0 and pop["minnows"]["caught"] > 0 and pop["minnows"]["starved"] > 0
    assert pop["minnows"]["in_water"] == 74 + pop["minnows"]["born"] - pop["minnows"]["caught"] - pop["minnows"][
        "starved"]
    assert summary["metrics"]["fish_in_water"]["current"] == pop["minnows"]["in_water"] + pop["pike"]["in_water"]
    again = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(rec), "--headless", "--verify"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.strip().splitlines()[-1])["state_hash"] == summary["final_state_hash"]


def test_the_compiled_and_the_numpy_tick_give_the_same_births_and_deaths():
    fast, slow = LiveSession(_tank()), LiveSession(_tank())
    slow.world._kernel = None
    for _ in range(6):
        fast.run(50)
        slow.run(50)
        assert fast.state_hash() == slow.state_hash()
    assert fast.world.population.caught.sum() > 0 and fast.world.population.born.sum() > 0


def test_a_fish_id_is_never_reused_and_the_young_take_their_groups_room():
    s = LiveSession(_tank(seed=5))
    w = s.world
    first, end = w.cfg.fish.young_room()[0]  # the minnows' room
    gone: set[int] = set()
    for _ in range(300):
        before = ~w.school.absent.copy()
        s.step()
        now = ~w.school.absent
        assert not now[sorted(gone)].any(), "a fish that left came back"
        gone |= set(np.flatnonzero(before & ~now).tolist())
        born = np.flatnonzero(~before & now)
        assert ((born >= first) & (born < end)).all()  # only the minnows breed, into their own room
    used = first + int(w.population.born[0])  # the young took the room in id order, none skipped
    assert w.population.born[0] > 0 and w.used_slots >= used
    assert w.school.absent[used:end].all()  # the room no young has had yet is still out of the water


def test_a_hunter_that_eats_no_food_lives_on_its_prey_in_both_ticks():
    cfg = load_config(seed=4, preset="predator-prey")
    fast, slow = LiveSession(cfg), LiveSession(cfg)
    slow.world._kernel = None
    for _ in range(4):
        fast.run(75)
        slow.run(75)
        assert fast.state_hash() == slow.state_hash()
    w = fast.world
    pike = w.population.of == 1
    assert w.school.eats[pike].sum() == 0 and w.population.caught[0] > 0  # never a meal of food: only catches
    assert w.school.eats[~pike].sum() > 0
    assert cfg.for_group(1).brain.planner.forage == 0.0 and cfg.for_group(0).brain.planner.forage > 0


def test_a_groups_own_body_costs_its_fish_what_it_says_in_both_ticks_and_replays(tmp_path):
    """A group's ``decay_per_tick`` and ``move_cost`` (its body): its fish pay them, the others
    the tank's; compiled and numpy ticks agree; a recording replays by hash; a tank whose groups
    set none hashes as before the keys existed (the golden files and determinism tests)."""
    from conftest import record_run

    groups = [GroupConfig(name="costly", share=0.5, decay_per_tick=0.6, move_cost=1.2),
              GroupConfig(name="plain", share=0.5)]
    cfg = load_config(seed=3, **{"fish.count": 40, "fish.groups": groups, "food.spawn_rate": 0.0})
    fast, slow = LiveSession(cfg), LiveSession(cfg)
    slow.world._kernel = None
    w = fast.world
    of = np.array(cfg.fish.group_of())
    for _ in range(3):
        before = w.school.energy.astype(np.int64).copy()
        moves, eats = w.school.moves.astype(np.int64).copy(), w.school.eats.astype(np.int64).copy()
        fast.step()
        slow.step()
        assert fast.state_hash() == slow.state_hash()
        spent = before - w.school.energy
        moved = w.school.moves - moves
        paid = (w.school.energy > 0) & (w.school.eats == eats) & (before >= 1000)  # no meal, no rest's gain
        costly, plain = paid & (of == 0), paid & (of == 1)
        assert costly.sum() >= 10 and plain.sum() >= 10
        assert (spent[costly] == 60 + 120 * moved[costly]).all()  # hundredths: 0.6 a tick, 1.2 a move
        assert (spent[plain] == 15 + 30 * moved[plain]).all()  # the tank's 0.15 and 0.3
    fast.run(150)
    slow.run(150)
    assert fast.state_hash() == slow.state_hash()
    rec = record_run(tmp_path / "bodies.mirofish", 3, 200, **{"fish.count": 40, "fish.groups": groups})
    done = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(rec), "--headless", "--verify"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr


def _seen_within(w, i: int, r: int) -> tuple[int, int]:
    """Fish and food cells fish ``i`` would see within ``r`` rings of it (the world's own truth)."""
    x, y = w.water.xy(w.school.cell)
    here = w.school.cell[i]
    hx, hy = w.water.xy(np.array([here]))
    near = (np.maximum(abs(x - hx[0]), abs(y - hy[0])) <= r) & ~w.school.absent
    near[i] = False
    window = here + w.window[w.rings <= r]  # (a fish hides the food under it, the viewer too)
    food = int(np.count_nonzero((w.water.food_born[window] != NO_FOOD) & (w.occupant[window] < 0)))
    return int(np.count_nonzero(near)), food


def test_a_group_that_sees_less_sees_only_its_rings_in_both_ticks_and_replays(tmp_path):
    """A group's ``view_radius`` (its body): its fish count, steer by and are told only the cells
    within that many rings — the rest is open water to them and ``?`` in their view; the other
    group sees the tank's whole window; compiled and numpy ticks agree; a recording replays by
    hash; a tank whose groups set none hashes as before (the golden files)."""
    from conftest import record_run

    from mirofish.brains.prompts import default_prompt

    groups = [GroupConfig(name="near", share=0.5, view_radius=1), GroupConfig(name="far", share=0.5)]
    cfg = load_config(seed=3, **{"fish.count": 60, "fish.groups": groups})
    fast, slow = LiveSession(cfg), LiveSession(cfg)
    slow.world._kernel = None
    w, of = fast.world, np.array(cfg.fish.group_of())
    counted = {0: [0, 0], 1: [0, 0]}  # per group: fish the view counted, fish within 2 rings
    for t in range(200):
        fast.step()
        slow.step()
        assert fast.state_hash() == slow.state_hash(), t
        for i in range(0, 60, 7):
            r = 1 if of[i] == 0 else 2
            fish, food = _seen_within(w, i, r)
            assert w.school.neighbours[i] == fish and w.school.food_seen[i] == food, (t, i)
            counted[int(of[i])][0] += int(w.school.neighbours[i])
            counted[int(of[i])][1] += _seen_within(w, i, 2)[0]
            rows = w.perceive(i).view.split("\n")
            assert len(rows) == 5
            ring2 = rows[0] + rows[4] + "".join(row[0] + row[4] for row in rows[1:4])
            assert (ring2 == "?" * 16) == (of[i] == 0), rows  # the near group is told it does not see there
            assert "?" not in "".join(row[1:4] for row in rows[1:4])
    assert counted[1][0] == counted[1][1] > 0  # the far group sees every fish within 2 rings
    assert counted[0][0] < counted[0][1]  # the near group misses those beyond 1
    assert "? too far for you to see" in default_prompt().system(shown=w.perceive(0).shown)
    plain = LiveSession(load_config(seed=3, **{"fish.count": 60}))
    assert plain.world.sight is None and "?" not in default_prompt().system(shown=plain.world.perceive(0).shown)
    rec = record_run(tmp_path / "sight.mirofish", 3, 200, **{"fish.count": 60, "fish.groups": groups})
    done = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(rec), "--headless", "--verify"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["state_hash"] == fast.state_hash()


def test_a_fast_group_swims_on_in_both_ticks_stops_for_what_it_came_for_and_replays(tmp_path):
    """A group's ``moves_per_tick`` (its body): a fish whose move went through swims on the same
    way, each cell a move's cost, never through glass or a fish and never past food beside it;
    the others swim one cell; compiled and numpy ticks agree; a recording replays by hash."""
    from conftest import record_run

    groups = [GroupConfig(name="fast", share=0.5, moves_per_tick=3), GroupConfig(name="plain", share=0.5)]
    dotted = {"fish.count": 60, "fish.groups": groups}
    cfg = load_config(seed=3, **dotted)
    fast, slow = LiveSession(cfg), LiveSession(cfg)
    slow.world._kernel = None
    w, of = fast.world, np.array(cfg.fish.group_of())
    far = {0: 0, 1: 0}  # per group: fish that went more than one cell in a tick
    for t in range(200):
        x0, y0 = w.water.xy(w.school.cell)
        before = w.school.energy.astype(np.int64).copy()
        moves0 = w.school.moves.astype(np.int64).copy()
        fast.step()
        slow.step()
        assert fast.state_hash() == slow.state_hash(), t
        x1, y1 = w.water.xy(w.school.cell)
        went = np.abs(x1 - x0) + np.abs(y1 - y0)
        assert (went == w.school.moves - moves0).all()  # every cell counted as a move
        assert ((went <= 1) | (of == 0)).all() and (went <= 3).all()
        assert ((went == 0) | (x1 == x0) | (y1 == y0)).all()  # straight on: one way
        for i in np.flatnonzero(went > 1):
            far[int(of[i])] += 1
            # it paid a move for each cell (the tank's 0.15 a tick, 0.3 a move, in hundredths)
            if not w.school.eats[i] and before[i] > 1000:
                assert before[i] - w.school.energy[i] >= 15 + 30 * went[i] or w.school.energy[i] == 0
            # and it swam on only where no food was beside it on the way (its last cell may have some)
            dx, dy = np.sign(x1[i] - x0[i]), np.sign(y1[i] - y0[i])
            for k in range(1, int(went[i])):
                cell = w.water.cell(int(x0[i] + k * dx), int(y0[i] + k * dy))
                around = cell + w.eat_offsets
                born = w.water.food_born[around]
                assert not ((born != NO_FOOD) & (born < t)).any()  # (food spawned this tick came after)
    assert far[0] > 200 and far[1] == 0
    rec = record_run(tmp_path / "fast.mirofish", 3, 200, **dotted)
    done = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(rec), "--headless", "--verify"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["state_hash"] == fast.state_hash()


def test_fast_pike_catch_more_in_both_ticks():
    """Pike that swim two cells a tick get beside more minnows than pike that swim one (the
    predators preset, the same seed), with the same catches in the compiled and numpy tick."""
    base = _tank(3)
    groups = [g.model_copy(update={"moves_per_tick": 2}) if g.hunts else g for g in base.fish.groups]
    quick, quick_np, plain = LiveSession(_tank(3, **{"fish.groups": groups})), \
        LiveSession(_tank(3, **{"fish.groups": groups})), LiveSession(base)
    quick_np.world._kernel = None
    for s in (quick, quick_np, plain):
        s.run(300)
    assert quick.state_hash() == quick_np.state_hash()
    q, p = quick.world.population, plain.world.population
    assert q.tried[0] > 1.15 * p.tried[0] and q.caught[0] > p.caught[0]


def test_a_groups_own_max_energy_caps_its_fish_in_both_ticks_and_replays(tmp_path):
    """A group's ``max_energy``: its fish hold up to it (more or less than the tank's 100), start at
    most at it, are told it in their view ("energy: …/200") and a catch or a meal never lifts them
    past it; compiled and numpy ticks agree; a recording replays by hash."""
    from conftest import record_run

    groups = [GroupConfig(name="big", share=0.5, max_energy=200.0),
              GroupConfig(name="small", share=0.5, max_energy=60.0)]
    dotted = {"fish.count": 60, "fish.groups": groups, "food.spawn_rate": 0.003}
    cfg = load_config(seed=3, **dotted)
    fast, slow = LiveSession(cfg), LiveSession(cfg)
    slow.world._kernel = None
    w, of = fast.world, np.array(cfg.fish.group_of())
    assert w.school.energy[of == 1].max() <= 6000 < w.school.energy[of == 0].max()  # (a start above 60: capped)
    top = {0: 0, 1: 0}
    for t in range(600):
        fast.step()
        slow.step()
        assert fast.state_hash() == slow.state_hash(), t
        e = w.school.energy
        top = {k: max(top[k], int(e[of == k].max())) for k in top}
    assert top[0] > 10_000 and top[0] <= 20_000 and top[1] == 6000
    assert "energy: " in w.perceive(0).text() and "/200\n" in w.perceive(0).text()
    assert "/60\n" in w.perceive(59).text()
    plain = LiveSession(load_config(seed=3, **{"fish.count": 60}))
    plain.run(600)
    assert plain.world.school.energy.max() <= 10_000 and plain.world.max_energy_of is None
    rec = record_run(tmp_path / "tops.mirofish", 3, 300, **dotted)
    done = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(rec), "--headless", "--verify"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr


def _return_to(moves: int, d: int, ticks: int = 40) -> bool:
    """A fish of a group that swims ``moves`` cells a tick, alone in open water with no food, sent to
    return to a remembered place ``d`` cells east: does its plan end there (within a cell)?"""
    groups = [GroupConfig(name="swimmer", count=1, moves_per_tick=moves)]
    cfg = load_config(seed=1, **{"fish.count": 1, "fish.groups": groups, "fish.places": 3, "food.spawn_rate": 0.0,
                                 "world.rocks": 0, "world.plant_patches": 0})
    w = LiveSession(cfg).world
    s = w.school
    x0, y0 = 40, 25
    w.occupant[s.cell[0]] = -1
    s.cell[0] = w.water.cell(x0, y0)
    w.occupant[s.cell[0]] = 0
    s.energy[0] = 9000
    w.places.x[0, 0], w.places.y[0, 0], w.places.meals_at[0, 0] = x0 + d, y0, 3
    w.apply_plans(np.array([0]), np.array([w.plan_table.code["return"]]), np.array([0]), np.array([200]))
    for _ in range(ticks):
        if s.plan_end[0] <= w.tick:
            x, _ = w.water.xy(s.cell[0])
            return abs(int(x) - (x0 + d)) <= 1
        w.step()
    return False


@pytest.mark.parametrize("moves", [1, 2, 4])
def test_a_fast_fish_stops_at_its_plans_target_and_does_not_swim_past_it(moves):
    assert all(_return_to(moves, d) for d in (2, 3, 4, 6))


def test_a_fish_added_to_a_groups_room_starts_within_its_groups_max_energy():
    cfg = load_config(seed=1, **{"fish.count": 20, "fish.groups": [GroupConfig(name="small", count=10,
                                                                              max_energy=30.0)]})
    w = LiveSession(cfg).world
    w.intervene({"kind": "remove", "fish": 3})
    w.intervene({"kind": "add", "x": 20, "y": 20})
    assert not w.school.absent[3] and w.school.energy[3] == 3000 and "energy: 30.00/30" in w.perceive(3).text()


def test_the_test_server_reads_a_short_sighted_fishs_view_and_a_wider_tank_is_told_its_side():
    """A model at the bundled test server answers a fish that sees one ring (its view with ?) from
    what it sees, as it answers the others; a tank of radius 3 is told its view is 7x7."""
    from mirofish.brains.testreplies import scripted_plan
    from mirofish.brains.testserver import TestServer

    groups = [GroupConfig(name="near", count=10, view_radius=1), GroupConfig(name="far", count=10)]
    with TestServer(keep_bodies=True) as server:
        cfg = load_config(seed=5, **{"fish.count": 20, "fish.groups": groups, "perception.radius": 3,
                                     "brain.kind": "llm", "brain.request_timeout_s": 5.0,
                                     "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini"}]})
        live = LiveSession(cfg)
        try:
            live.run(30)
            status = live.source.status()
        finally:
            live.close()
        asked = [m for m in map(json.loads, server.bodies) if m.get("messages")]
    near = status["groups"]["near"]  # (a mixed tank: each group's own source)
    assert near["model_decisions"] >= 10 and near["fallback_rate"] == 0.0, near
    texts = [m["messages"][-1]["content"] for m in asked]
    assert any("?" in t for t in texts)
    assert not any(scripted_plan(t)["thought"] == "I cannot make out the water" for t in texts)
    systems = [m["messages"][0]["content"] for m in asked]
    assert sum("Your 7x7 view" in t for t in systems) >= 20 and not any("5x5" in t for t in systems)


def _grazing_settings(grazes: bool = True) -> dict:
    groups = [GroupConfig(name="grazers", share=0.5, eats_plants=grazes), GroupConfig(name="others", share=0.5)]
    return {"fish.count": 60, "fish.groups": groups, "perception.plants_seen": True, "food.spawn_rate": 0.0001,
            "world.plant_patches": 24}


def _grazing_tank(seed: int = 3, grazes: bool = True):
    return load_config(seed=seed, **_grazing_settings(grazes))


def test_a_group_that_eats_plants_grazes_them_in_both_ticks_and_they_grow_back(tmp_path):
    """``eats_plants``: a grazer's eat with no food beside it takes a bite of a plant beside it
    (a meal: energy, ``eats``, the ``ate`` memory), the plant has one bite less and grows it back
    in ``world.plant_regrow_ticks``; the other group never bites; the graze plan is offered in
    the prompt; compiled and numpy ticks agree; a recording replays and forks by hash."""
    from conftest import record_run

    from mirofish.brains.prompts import default_prompt
    from mirofish.water import PLANT

    cfg = _grazing_tank()
    fast, slow = LiveSession(cfg), LiveSession(cfg)
    slow.world._kernel = None
    w, g = fast.world, fast.world.grazing
    assert g is not None and g.bites.size == int(np.count_nonzero(w.water.terrain == PLANT))
    of = np.array(cfg.fish.group_of())
    bitten = 0
    for t in range(500):
        bites, grazed, eats = g.bites.copy(), g.grazed.copy(), w.school.eats.copy()
        fast.step()
        slow.step()
        assert fast.state_hash() == slow.state_hash(), t
        took = int(g.grazed[0] - grazed[0])
        assert g.grazed[1] == 0  # the others never bite
        grew = np.flatnonzero(g.bites > bites)
        assert (g.bites[grew] == bites[grew] + 1).all()  # a bite grows back at a time
        assert int((bites - g.bites).clip(0).sum()) == took  # every bite taken is off a plant
        if took:
            bitten += took
            eaters = np.flatnonzero((w.school.eats > eats) & (of == 0))
            assert eaters.size >= took  # each bite is a meal of a grazer
    assert bitten >= 20 and (g.bites < g.most).any()
    assert "graze - swim beside the nearest plant (P)" in default_prompt().system(shown=w.perceive(0).shown)
    plain = LiveSession(load_config(seed=3, **{"perception.plants_seen": True}))
    assert plain.world.grazing is None and "graze" not in default_prompt().system(shown=plain.world.perceive(0).shown)
    rec = record_run(tmp_path / "graze.mirofish", 3, 400, **_grazing_settings())
    done = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(rec), "--headless", "--verify"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    again = LiveSession(cfg)
    again.run(400)
    assert json.loads(done.stdout.strip().splitlines()[-1])["state_hash"] == again.state_hash()
    fork = subprocess.run([sys.executable, "-m", "mirofish", "fork", str(rec), "--at", "300", "--fish", "0",
                           "--plan", "graze 30", "--ticks", "50"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert fork.returncode == 0, fork.stderr


def test_a_cleared_plant_is_no_food_and_spare_room_does_not_change_a_grazing_tanks_hash():
    from mirofish.water import PLANT

    s = LiveSession(_grazing_tank())
    w, g = s.world, s.world.grazing
    for c in g.cells.tolist():  # a person clears every plant
        x, y = w.water.xy(np.array([c]))
        w.intervene({"kind": "clear", "x": int(x[0]), "y": int(y[0])})
    assert not (w.water.terrain == PLANT).any()
    s.run(300)
    assert g.grazed.sum() == 0 and not w.bites_in_view(np.arange(w.school.n)).any()
    plain, roomy = LiveSession(_grazing_tank()), LiveSession(load_config(seed=3, **{**_grazing_settings(),
                                                                                      "fish.spare": 8}))
    for _ in range(3):
        plain.run(50)
        roomy.run(50)
        assert plain.state_hash() == roomy.state_hash()  # (as for every tank: room no fish had is not hashed)


def test_only_a_grazer_is_offered_graze_and_every_reader_sees_its_bites():
    """A model is offered ``graze`` only for a fish whose group eats plants (its prompt and its
    schema); an eat beside a plant is legal for a grazer only; a session's request (trace, Why?)
    carries the bites as the engine's does, so the planner re-asked agrees with itself; the
    environment's system prompt names what its fish's text shows."""
    from mirofish.brains.prompt import fitting_choices, legal_for_view, messages
    from mirofish.env import parallel_env

    s = LiveSession(_grazing_tank())
    w = s.world
    of = np.array(s.cfg.fish.group_of())
    seen: dict[int, int] = {}
    for _ in range(600):
        s.step()
        for g in (0, 1):
            fish = np.flatnonzero((of == g) & w.plants_in_view(np.arange(w.school.n)).any(axis=1))
            if fish.size and g not in seen:
                seen[g] = int(fish[0])
        if len(seen) == 2:
            break
    grazer, other = w.perceive(seen[0]), w.perceive(seen[1])
    assert "graze" in fitting_choices(grazer.view, table=w.plan_table, shown=grazer.shown)[0]
    assert "graze" not in fitting_choices(other.view, table=w.plan_table, shown=other.shown)[0]
    assert "graze -" in messages(grazer, "a fish", "timeout", plans=True, table=w.plan_table)[0]["content"]
    assert "graze -" not in messages(other, "a fish", "timeout", plans=True, table=w.plan_table)[0]["content"]
    beside = ".....\n..P..\n..@..\n.....\n....."
    assert legal_for_view("eat", beside, False, grazes=True) and not legal_for_view("eat", beside, False)
    req = s.request_for(seen[0])
    assert req.bites is not None and req.bites[0] == w.bites_seen(np.array([seen[0]]))[0]
    env = parallel_env(_grazing_tank())
    try:
        assert "P a plant" in env.system_prompt
    finally:
        env.close()
    from mirofish.vector import vector_env

    vec = vector_env(2, _grazing_tank(), max_steps=5)  # (a Config, as parallel_env takes one)
    vec.reset(seed=3)
    vec.close()


def test_plants_feed_a_group_that_eats_them():
    """The null beside it: the same lean tank and seeds, the same group not grazing, is hungrier."""
    fed, unfed = [], []
    for seed in (1, 2, 3):
        for grazes, out in ((True, fed), (False, unfed)):
            s = LiveSession(_grazing_tank(seed, grazes))
            s.run(600)
            of = np.array(s.cfg.fish.group_of())
            out.append(float(s.world.school.energy[of == 0].mean()))
    assert sum(fed) > sum(unfed) * 1.2, (fed, unfed)


def _duel(m: int, trials: int, chance: float = 1.0, confusion: float = 1.0) -> int:
    """Catches in ``trials`` ticks of one hunter beside one prey facing east, with ``m`` of the
    prey's group within two cells of it facing east too (and, for m > 0, one facing west that
    does not count)."""
    groups = [GroupConfig(name="prey", count=5), GroupConfig(name="hunter", count=1, hunts=["prey"],
                                                             catch_chance=chance, confusion=confusion)]
    cfg = load_config(seed=1, **{"fish.count": 6, "fish.groups": groups, "food.spawn_rate": 0.0})
    caught = 0
    for t in range(trials):
        s = LiveSession(cfg)
        w = s.world
        w.tick = t + 1  # the draw is a hash of the tick: another draw each trial
        cells = {5: (10, 10), 0: (11, 10), 1: (12, 10), 2: (12, 11), 3: (12, 9), 4: (13, 12)}  # only 0 beside it
        w.occupant[:] = -1
        for fish, (x, y) in cells.items():
            w.school.cell[fish] = w.water.cell(x, y)
            w.occupant[w.school.cell[fish]] = fish
        w.school.heading[:] = 3  # east
        for fish in range(m + 1, 4):  # the schoolmates not counted face west
            w.school.heading[fish] = 2
        w.school.heading[4] = 2
        w.population.step(w)
        caught += int(w.school.absent[0])
    return caught


def test_the_confusion_effect_a_school_swimming_together_is_caught_less():
    trials = 300
    alone, three = _duel(0, trials), _duel(3, trials)
    assert alone == trials  # chance 1, nobody to confuse the hunter: always
    assert 0.15 * trials <= three <= 0.35 * trials  # 1 / (1 + 3): about a quarter
    assert _duel(3, trials, confusion=0.0) == trials  # the null: no confusion, no protection


def test_a_fork_that_moves_a_fish_out_of_reach_saves_it(tmp_path):
    from mirofish.fish.plans import CODE
    from mirofish.session.fork import ForkSession
    from mirofish.session.replay import ReplaySession

    rec = tmp_path / "pred.mirofish"
    s = LiveSession(_tank(seed=7))
    s.start_recording(rec)
    absent_at = []
    for _ in range(300):
        absent_at.append(s.world.school.absent.copy())
        s.step()
    s.stop_recording()
    w = s.world
    caught_at = {}
    for t in range(1, 300):
        for f in np.flatnonzero(~absent_at[t - 1] & absent_at[t]).tolist():
            caught_at.setdefault(f, t)
    pike = [i for i, g in enumerate(w.cfg.fish.group_of()) if g == 1]
    saved = 0
    tried = 0
    for fish, t in sorted(caught_at.items(), key=lambda kv: kv[1]):
        if t < 30 or tried >= 4:
            continue
        replay = ReplaySession(rec)
        replay.seek(t - 4)
        rw = replay.world
        if rw.school.energy[fish] < 500:  # starving, not caught: a fork would not save it from that
            replay.close()
            continue
        tried += 1
        fx, fy = rw.water.xy(rw.school.cell[fish])
        px, py = rw.water.xy(rw.school.cell[pike])
        near = int(np.argmin(np.abs(px - fx) + np.abs(py - fy)))
        dx, dy = int(fx - px[near]), int(fy - py[near])
        way = (3 if dx >= 0 else 2) if abs(dx) >= abs(dy) else (1 if dy >= 0 else 0)  # away from the pike
        fork = ForkSession(replay, fish, (CODE["explore"], way, 8), None, replay.engine.source, "lockstep",
                           owns_parent=True)
        for _ in range(5):
            fork.step()
        saved += int(not fork.engine.world.school.absent[fish])
        fork.close()
    assert tried and saved >= 1, "swimming away from the pike four ticks before the catch saved none"


@pytest.mark.parametrize(("setting", "words"), [
    ('fish.groups=[{name="a", count=3, hunts=["b"]}]', "hunts 'b': no such group"),
    ('fish.groups=[{name="a", count=3, hunts=["a"]}]', "hunts itself"),
    ('fish.groups=[{name="a", count=3, birth_energy=150.0}]', "above max_energy"),
    ('fish.groups=[{name="a", count=3, view_radius=3}]', "fish.groups.a.view_radius: 3 is above perception.radius 2"),
    ('fish.groups=[{name="a", count=3, max_energy=0.001}]', "fish.groups.0.max_energy: energy amounts have a"),
    ('fish.groups=[{name="a", count=3, eats_plants=true}]', "fish.groups.a.eats_plants: set perception.plants_seen"),
    ('fish.groups=[{name="a", count=3, max_energy=80.0, birth_energy=90.0}]',
     "birth_energy 90.0 is above max_energy 80.0"),
])
def test_a_bad_species_is_one_line_exit_2(setting, words):
    done = subprocess.run([sys.executable, "-m", "mirofish", "live", "--headless", "--ticks", "5", "--fish", "5",
                           "--set", setting], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_tank_whose_groups_have_no_rules_has_no_population():
    cfg = load_config(seed=1, **{"fish.groups": [GroupConfig(name="a", share=0.5), GroupConfig(name="b", share=0.5)]})
    s = LiveSession(cfg)
    assert s.world.population is None and "world.population" not in s.world.state_arrays()
    s.run(20)
    assert "fish_in_water" not in s.metrics_summary()
    with pytest.raises(ConfigError):
        load_config(**{"fish.groups": [GroupConfig(name="a", count=3, hunts=["zz"])]})


def test_a_prey_is_shown_its_hunter_as_x_and_a_hunter_is_offered_the_hunt():
    from mirofish.brains.prompt import messages
    from mirofish.fish.plans import CODE

    s = LiveSession(_tank(seed=2))
    w = s.world
    for _ in range(200):
        s.step()
        seen = [i for i in range(74) if not w.school.absent[i] and "X" in w.perceive(i).view]
        if seen:
            break
    assert seen, "no minnow had a pike in view in 200 ticks"
    p = w.perceive(seen[0])
    system = messages(p, "a fish", "timeout", plans=True)[0]["content"]
    assert "X a hunter" in system
    plain = LiveSession(load_config(seed=2))
    assert "X a hunter" not in messages(plain.world.perceive(0), "a fish", "timeout", plans=True)[0]["content"]
    hunted = int(np.count_nonzero([w.school.plan_goal[i] == CODE["hunt"] for i in range(74)]))
    assert hunted == 0  # the minnows never choose to hunt (no prey of theirs: its utility is -8)


def test_the_environment_terminates_the_dead_and_admits_the_born():
    from mirofish.env import parallel_env

    env = parallel_env(str(ROOT / "assets" / "presets" / "predators.toml"), max_steps=300)
    env.reset(seed=3)
    start = set(env.agents)
    rng = np.random.default_rng(0)
    dead, born = set(), set()
    for _ in range(200):
        before = set(env.agents)
        obs, _, terms, _, _ = env.step({a: int(rng.integers(0, 6)) for a in env.agents})
        dead |= {a for a, t in terms.items() if t}
        born |= set(env.agents) - before
        assert not (set(env.agents) & dead), "a terminated agent came back"
        assert set(env.agents) <= set(obs)
    assert dead and born and not (born & start)
    env.close()
    from mirofish.env import vector_env  # the array environment takes the preset: every room a fish axis

    arrays = vector_env(2, str(ROOT / "assets" / "presets" / "predators.toml"), max_steps=5)
    _, infos = arrays.reset(seed=1)
    assert arrays.n_fish == len(env.possible_agents) and infos["alive"].sum(1).tolist() == [len(start)] * 2
    arrays.close()


def test_a_groups_shape_is_its_mark_in_the_window_and_the_page(tmp_path):
    """``shape``: the mark its fish wear (default a diamond for a hunter, a ring else), drawn in
    the window (the legend too) and carried to the page."""
    import os

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import pygame

    from mirofish.ui.panels import group_mark

    assert GroupConfig(name="a", count=1).mark == "ring"
    assert GroupConfig(name="a", count=1, hunts=["b"]).mark == "diamond"
    assert GroupConfig(name="a", count=1, hunts=["b"], shape="square").mark == "square"
    with pytest.raises(ValueError):
        GroupConfig(name="a", count=1, shape="star")
    surf = pygame.Surface((40, 40))
    corners = {}
    for shape, edge in (("square", (12, 20)), ("ring", (20, 12)), ("triangle", (20, 9))):
        surf.fill((0, 0, 0))
        group_mark(surf, shape, (255, 0, 0), 20, 20, 8, 1)
        lit = pygame.surfarray.array3d(surf)[:, :, 0] > 0
        assert lit[edge] and not lit[20, 20], shape  # an outline round the fish, not over it
        corners[shape] = bool(lit[12, 12])
    assert corners == {"square": True, "ring": False, "triangle": False}  # three different marks
    groups = [GroupConfig(name="boxes", share=0.5, shape="square"),
              GroupConfig(name="pike", share=0.5, hunts=["boxes"])]
    from conftest import record_run

    rec = record_run(tmp_path / "m.mirofish", 2, 20, **{"fish.count": 10, "fish.groups": groups})
    out = tmp_path / "m.html"
    done = subprocess.run([sys.executable, "-m", "mirofish", "export", str(rec), "--html", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert '"mark":"square"' in page and '"mark":"diamond"' in page


FLEEING = [{"name": "minnows", "count": 74, "chooser": "instinct", "flees": True},
           {"name": "pike", "count": 6, "hunts": ["minnows"], "catch_chance": 0.3, "confusion": 1.5}]


def test_a_group_that_flees_swims_away_from_its_hunters_in_both_ticks():
    """GroupConfig.flees: the flee plan, drawn when a hunter of its group is in view, swims away
    from the nearest one; the compiled and the numpy tick agree tick by tick; the pike never flee."""
    from mirofish.fish.plans import CODE

    cfg = load_config(seed=2, **{"fish.count": 80, "fish.groups": FLEEING})
    fast, slow = LiveSession(cfg), LiveSession(cfg)
    slow.world._kernel = None
    w, flee = fast.world, CODE["flee"]
    away = closer = 0
    for _ in range(200):
        s = w.school
        holding = [i for i in np.flatnonzero(s.plan_goal == flee) if not s.absent[i]]
        before = {i: _nearest_hunter(w, i) for i in holding}
        fast.step()
        slow.step()
        assert fast.state_hash() == slow.state_hash()
        for i, d0 in before.items():
            d1 = _nearest_hunter(w, i)
            if d0 is not None and d1 is not None and not w.school.absent[i] and d1 != d0:
                away, closer = away + (d1 > d0), closer + (d1 < d0)
    counts = fast.decisions().counts
    assert counts[:74, flee].sum() > 100 and counts[74:, flee].sum() == 0
    assert away > 3 * closer, (away, closer)  # a fleeing minnow's distance to the pike grows
    asked = fast.history.ended[fast.history.tick >= 0]  # what ended each fish's plan before its last
    from mirofish.fish.triggers import T_HUNTER
    assert np.count_nonzero(asked == T_HUNTER) > 0  # a pike coming into view made minnows ask


def _nearest_hunter(w, i):
    """Manhattan distance from fish ``i`` to the nearest pike in the water (None: none)."""
    s = w.school
    x, y = w.water.xy(s.cell)
    pike = [j for j in range(74, 80) if not s.absent[j]]
    return min((abs(int(x[j]) - int(x[i])) + abs(int(y[j]) - int(y[i])) for j in pike), default=None)


def test_a_tank_where_no_group_flees_decides_as_before_and_never_offers_flee():
    from mirofish.brains.prompt import fitting_choices, messages

    s = LiveSession(_tank(seed=2))
    s.run(200)
    assert s.decisions().counts[:, s.plans.code["flee"]].sum() == 0
    assert "flee" not in messages(s.world.perceive(0), "a fish", "timeout", plans=True)[0]["content"]
    fleeing = LiveSession(load_config(seed=2, **{"fish.count": 80, "fish.groups": FLEEING}))
    system = messages(fleeing.world.perceive(0), "a fish", "timeout", plans=True)[0]["content"]
    assert "flee - swim straight away from the nearest fish that hunts you" in system, system
    assert "flee" in fitting_choices(".....\n..X..\n..@..\n.....\n.....")[0]
    assert "flee" not in fitting_choices(".....\n.....\n..X..\n.....\n.....")[0]  # a hunter's own X
    fleeing.close()
    s.close()


def test_a_fleeing_tank_with_fish_in_no_group_runs():
    """Groups whose shares leave fish in the tank's own group: those fish neither flee nor break
    the fleeing rule (they were an index past the groups' table)."""
    groups = [{"name": "minnows", "share": 0.6, "flees": True}, {"name": "pike", "share": 0.1, "hunts": ["minnows"]}]
    s = LiveSession(load_config(seed=2, **{"fish.count": 60, "fish.groups": groups}))
    s.run(200)
    pop, flee = s.world.population, s.plans.code["flee"]
    counts = s.decisions().counts
    assert counts[pop.of == 0, flee].sum() > 0 and counts[pop.of == 2, flee].sum() == 0
    s.close()
