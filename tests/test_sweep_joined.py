"""A sweep's runs of one setting stepped as one world (session/headless.py: run_headless_joined;
sweep/runs.py: run_tasks, groups): each run's summary is what its own headless run prints, every
figure but the timings; what cannot join runs alone; the groups keep every worker busy."""

from __future__ import annotations

import io

import pytest

from mirofish.config import load_config
from mirofish.session.headless import run_headless, run_headless_joined, why_alone
from mirofish.sweep.runs import comparable, groups, run_task, run_tasks
from mirofish.sweep.spec import RunTask


def untimed(d):
    """A summary without what measures the machine (its timings)."""
    if isinstance(d, dict):
        return {k: untimed(v) for k, v in d.items() if k not in ("ticks_per_sec", "elapsed_s") and "latency" not in k}
    return d


@pytest.mark.parametrize("settings", [(), ("fish.count=25", "perception.radius=3"), ("world.grid=hex",),
                                      ("brain.chooser=never_school", "food.spawn_rate=0.02"),
                                      ("brain.chooser=random",), ("brain.chooser=random", "brain.decides=action")])
def test_joined_runs_print_each_runs_own_summary(settings):
    cfgs = [load_config(None, settings, seed=s) for s in (1, 2, 3, 9)]
    alone = [run_headless(c, 300, out=io.StringIO()) for c in cfgs]
    joined = run_headless_joined(cfgs, 300)
    assert joined is not None
    assert [untimed(j) for j in joined] == [untimed(a) for a in alone]
    assert len({j["final_state_hash"] for j in joined}) == 4 and joined[0]["brain"]["decisions"] > 100
    assert joined[0]["brain"]["source"] == alone[0]["brain"]["source"]


@pytest.mark.parametrize(("settings", "why"), [
    (("brain.decides=action",), "instinct planner"), (("engine.mode=realtime",), "realtime"),
    (("memory.kind=none",), "memory"), (("fish.places=3",), "places"), (("fish.spare=4",), "spare"),
])
def test_what_cannot_join_says_why_and_is_not_joined(settings, why):
    cfgs = [load_config(None, settings, seed=s) for s in (1, 2)]
    assert why in (why_alone(cfgs[0]) or "")
    assert run_headless_joined(cfgs, 5) is None


def test_species_and_the_numpy_tick_run_alone(monkeypatch):
    assert "groups" in (why_alone(load_config(None, (), preset="predators", seed=1)) or "")
    monkeypatch.setenv("MIROFISH_TICK", "numpy")
    assert "compiled tick" in (why_alone(load_config(None, (), seed=1)) or "")


def test_a_group_of_rows_is_the_rows_run_one_by_one():
    tasks = [RunTask("aquarium", {"fish.count": 20}, seed, 200) for seed in (4, 5, 6)]
    rows = run_tasks(tasks)
    alone = [run_task(t) for t in tasks]
    assert [r["run_id"] for r in rows] == [t.run_id for t in tasks]
    assert [comparable(r) for r in rows] == [comparable(r) for r in alone]
    assert all(r["status"] == "ok" and r["command"] == a["command"] for r, a in zip(rows, alone))
    bad = [RunTask("aquarium", {"fish.count": 20000}, seed, 20) for seed in (1, 2)]  # do not fit the tank
    failed = run_tasks(bad)
    assert [r["status"] for r in failed] == ["failed", "failed"] and "do not fit" in failed[0]["error"]


def test_groups_hold_one_setting_each_and_keep_every_worker_busy():
    tasks = [RunTask("aquarium", {"fish.count": n}, seed, 100) for n in (20, 30) for seed in range(40)]
    for workers in (1, 2, 8):
        got = groups(tasks, workers)
        assert sorted(t.run_id for g in got for t in g) == sorted(t.run_id for t in tasks)  # each once
        assert all(len({t.params["fish.count"] for t in g}) == 1 for g in got)  # one setting a group
        assert all(len(g) <= 16 for g in got) and len(got) >= min(2 * workers, len(tasks))
    one_setting = tasks[:6]
    assert [len(g) for g in groups(one_setting, 1)] == [3, 3]  # two groups a worker: rows come as groups end
    assert [len(g) for g in groups(one_setting, 1, most=1)] == [1] * 6


def test_large_tanks_join_fewer_to_a_world_and_the_largest_run_alone():
    from mirofish.session.joined import JOIN_FISH, tanks_a_world

    assert tanks_a_world(60, 16) == 16 and tanks_a_world(1400, 16) == 2 and tanks_a_world(JOIN_FISH // 2 + 1, 16) == 1
    cfgs = [load_config(None, ("fish.count=1400",), seed=s) for s in (1, 2, 3)]  # two joined, then one alone
    joined = run_headless_joined(cfgs, 30)
    assert joined is not None
    assert [untimed(j) for j in joined] == [untimed(run_headless(c, 30, out=io.StringIO())) for c in cfgs]
    assert run_headless_joined([load_config(None, ("fish.count=2100",), seed=s) for s in (1, 2)], 5) is None


LIVE = [("steering.alignment=0",), ("steering.alignment=5", "steering.cohesion=0"), ("food.spawn_rate=0.002",),
        ("steering.separation=7", "steering.food=1", "steering.open_water=3"), ()]


def test_runs_of_other_live_settings_join_and_print_each_runs_own_summary():
    # the settings a running tank may change (LIVE_KEYS) may differ within one joined world: each
    # tank's food spawns by its own rate, each fish's plans are weighed by its own tank's table
    cfgs = [load_config(None, live, seed=s) for s, live in zip((1, 2, 3, 4, 5), LIVE)]
    alone = [run_headless(c, 300, out=io.StringIO()) for c in cfgs]
    joined = run_headless_joined(cfgs, 300)
    assert joined is not None
    assert [untimed(j) for j in joined] == [untimed(a) for a in alone]
    # the same seed with other live settings: another run (the settings reach the fish)
    twins = [load_config(None, live, seed=7) for live in LIVE]
    hashes = [j["final_state_hash"] for j in run_headless_joined(twins, 200) or []]
    assert hashes == [run_headless(c, 200, out=io.StringIO())["final_state_hash"] for c in twins]
    assert len(set(hashes)) == len(LIVE)


@pytest.mark.parametrize("other", ["steering.temperature=0.5", "food.energy=30", "brain.chooser=random",
                                   "brain.planner.school=1", "steering.wall=2", "triggers.alone_ticks=9"])
def test_runs_that_differ_by_a_setting_that_is_not_live_are_not_joined(other):
    from mirofish.batch import Batch
    from mirofish.world import World

    cfgs = [load_config(None, (), seed=1), load_config(None, (other,), seed=2)]
    assert run_headless_joined(cfgs, 5) is None
    with pytest.raises(ValueError, match=r"settings a running tank may change: food\.spawn_rate"):
        Batch([World(c) for c in cfgs], planned=True)


def test_groups_join_runs_of_other_live_settings_and_keep_other_settings_apart():
    tasks = [RunTask("aquarium", {"brain.chooser": c, "steering.alignment": a, "food.spawn_rate": r}, seed, 150)
             for c in ("instinct", "random") for a in (0.0, 5.0) for r in (0.0003, 0.001) for seed in (1, 2)]
    got = groups(tasks, 1)
    assert sorted(t.run_id for g in got for t in g) == sorted(t.run_id for t in tasks)
    assert all(len({t.params["brain.chooser"] for t in g}) == 1 for g in got)  # the planner: one a world
    assert sum(len({(t.params["steering.alignment"], t.params["food.spawn_rate"]) for t in g}) > 1 for g in got) == 2
    mixed = next(g for g in got if g[0].params["brain.chooser"] == "instinct")
    assert len(mixed) == 8
    rows = run_tasks(mixed)
    assert [comparable(r) for r in rows] == [comparable(run_task(t)) for t in mixed]
    assert all(r["status"] == "ok" for r in rows) and len({r["summary"]["final_state_hash"] for r in rows}) == 8
    assert len({r["elapsed_s"] for r in rows}) == 1  # stepped as one world: each its share of the group's time
    # the planner's weights are not among them: a planner setting a group
    weighed = [RunTask("aquarium", {"brain.planner.school": w}, seed, 150) for w in (1.0, 3.0) for seed in (1, 2)]
    assert sorted(sorted(t.params["brain.planner.school"] for t in g) for g in groups(weighed, 1)) == \
        [[1.0, 1.0], [3.0, 3.0]]
