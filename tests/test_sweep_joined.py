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
