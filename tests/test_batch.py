"""Many tanks stepped as one world (mirofish/batch.py): each tank is, tick by tick, the tank its
own run would be; what cannot be joined is refused in one line; the array environment joins its
tanks and gives what it gave tank by tank."""

from __future__ import annotations

import numpy as np
import pytest

from mirofish.batch import Batch, why_not
from mirofish.config import load_config
from mirofish.env import vector_env
from mirofish.fish.plans import changed_plans
from mirofish.world import World

SMALL = ("brain.decides=action", "fish.count=24", "world.width=30", "world.height=14")


def _worlds(seeds, overrides=SMALL):
    cfg = load_config(seed=0, overrides=overrides)
    return [World(cfg.model_copy(update={"seed": s})) for s in seeds]


def _step_alone(w: World, actions: np.ndarray) -> None:
    """One tick of one tank given ``actions``, as the environment steps a tank of its own."""
    pick = np.flatnonzero(changed_plans(w.school, actions))
    if pick.size:
        w.apply_plans(pick, np.zeros(pick.size, np.int8), actions[pick].astype(np.int16),
                      np.zeros(pick.size, np.int16))
    w.step()


@pytest.mark.parametrize("grid", ["square", "hex"])
def test_each_joined_tank_is_its_own_run_tick_by_tick(grid):
    overrides = (*SMALL, f"world.grid={grid}")
    seeds = [5, 6, 7]
    alone, batch = _worlds(seeds, overrides), Batch(_worlds(seeds, overrides))
    n_actions = alone[0].grid.n_actions
    rng = np.random.default_rng(1)
    for t in range(120):
        acts = rng.integers(0, n_actions, (3, 24))
        acts[:, :4] = n_actions - 1  # some fish keep resting: their plans stay
        for w, a in zip(alone, acts):
            _step_alone(w, a)
        batch.give(acts)
        out = batch.step()
        assert np.array_equal(batch.by_tank(out.executed), np.stack([w.school.intent for w in alone]))
        if t % 10 == 9:
            assert [batch.world(k).state_hash() for k in range(3)] == [w.state_hash() for w in alone]
            assert np.array_equal(batch.by_tank(batch.codes), np.stack([w.codes for w in alone]))
    # the three tanks are three tanks, not one copied
    assert len({w.state_hash() for w in alone}) == 3


def test_a_tank_taken_back_and_the_batch_go_on_apart_each_as_its_own_run():
    seeds = [21, 22]
    alone, batch = _worlds(seeds), Batch(_worlds(seeds))
    rng = np.random.default_rng(2)

    def both(acts, also=None):
        for w, a in zip(alone, acts):
            _step_alone(w, a)
        batch.give(acts)
        batch.step()
        if also is not None:
            _step_alone(also, acts[1])

    for _ in range(40):
        both(rng.integers(0, 6, (2, 24)))
    mine = batch.world(1)  # a snapshot of tank 1, stepped alone from here while the batch steps on
    for _ in range(40):
        both(rng.integers(0, 6, (2, 24)), also=mine)
    mine_now = mine.state_hash()
    assert mine_now == alone[1].state_hash()
    assert [batch.world(k).state_hash() for k in range(2)] == [w.state_hash() for w in alone]


def test_a_numpy_tick_tank_is_refused_and_an_environment_then_steps_one_by_one(monkeypatch):
    compiled = _worlds([1])[0]
    monkeypatch.setenv("MIROFISH_TICK", "numpy")
    numpy_made = _worlds([2])[0]
    env = vector_env(2, max_steps=3, **{"fish.count": 8})  # made while the numpy tick is chosen
    monkeypatch.delenv("MIROFISH_TICK")
    with pytest.raises(ValueError, match="tank 1 cannot be stepped with others: it runs the numpy tick"):
        Batch([compiled, numpy_made])
    ref = vector_env(2, max_steps=3, join=False, **{"fish.count": 8})
    env.reset(seed=3)
    ref.reset(seed=3)
    assert env.batch is not None  # the compiled tick again: joined at the reset
    monkeypatch.setenv("MIROFISH_TICK", "numpy")
    rng = np.random.default_rng(5)
    for _ in range(6):  # through the auto-reset, which joins no more: one by one, the same tanks
        acts = rng.integers(0, 6, (2, 8))
        env.step(acts)
        ref.step(acts)
    assert env.batch is None and env.state_hashes() == ref.state_hashes()
    env.close()
    ref.close()


def test_what_a_batch_cannot_do_is_one_line():
    batch = Batch(_worlds([1, 2]))
    for call, words in ((lambda: batch.tune("food.spawn_rate", 0.3), "cannot tune"),
                        (lambda: batch.intervene({"kind": "food", "x": 3, "y": 3}), "cannot intervene"),
                        (batch.state_hash, "no one state hash"), (batch.state_arrays, "no one keyframe"),
                        (lambda: batch.world(2), "tanks are 0..1"), (lambda: batch.world(-1), "tanks are 0..1")):
        with pytest.raises(ValueError, match=words):
            call()
    from mirofish import interventions

    with pytest.raises(AttributeError, match=r"water\.width: a batch of tanks has no one water"):
        interventions.apply(batch, {"kind": "food", "x": 3, "y": 3})  # (not through World.intervene)
    hide = batch.plan_table.code["hide"]
    with pytest.raises(ValueError, match=r"'hide'.*swim to a target"):
        batch.apply_plans(np.arange(3), np.full(3, hide, np.int8), np.zeros(3, np.int16), np.zeros(3, np.int16))


@pytest.mark.parametrize("overrides, words", [
    (("brain.decides=plan",), "decide plans"),
    (("brain.decides=action", "fish.places=2"), "remember places"),
    (("brain.decides=action", "fish.spare=4"), "spare room"),
    (("brain.decides=action", "perception.plants_seen=true"), "see plants"),
])
def test_what_cannot_be_joined_is_refused_in_one_line(overrides, words):
    cfg = load_config(seed=0, overrides=overrides)
    assert words in why_not(cfg)
    with pytest.raises(ValueError, match=words):
        Batch([World(cfg)])


def test_tanks_of_other_settings_or_ticks_or_that_step_alone_only_are_refused():
    a = _worlds([1])[0]
    b = _worlds([2], (*SMALL[:-1], "world.height=16"))[0]
    with pytest.raises(ValueError, match="another config"):
        Batch([a, b])
    c = _worlds([3])[0]
    _step_alone(c, np.full(24, 5))
    with pytest.raises(ValueError, match="at tick 1"):
        Batch([_worlds([4])[0], c])
    with pytest.raises(ValueError, match="at least one"):
        Batch([])
    d = _worlds([5])[0]
    with pytest.raises(ValueError, match="given twice"):
        Batch([d, d])
    with pytest.raises(ValueError, match="a batch itself"):
        Batch([Batch(_worlds([6]))])
    e = _worlds([7])[0]
    e.intervene({"kind": "current", "dir": "east", "ticks": 50})
    with pytest.raises(ValueError, match="tank 1 cannot be stepped with others: a current flows"):
        Batch([_worlds([8])[0], e])


def test_the_array_environment_joined_gives_what_it_gives_tank_by_tank():
    settings = {"fish.count": 24, "world.width": 30, "world.height": 14}
    joined, alone = (vector_env(4, max_steps=30, join=j, **settings) for j in (True, False))
    o1, _ = joined.reset(seed=70)
    o2, _ = alone.reset(seed=70)
    assert joined.batch is not None and alone.batch is None  # (joined at the reset)
    assert all(np.array_equal(o1[k], o2[k]) for k in o1)
    rng = np.random.default_rng(4)
    for step in range(75):  # two episodes end (at 30 steps) and the tanks start anew
        acts = rng.integers(0, 6, (4, 24))
        r1, r2 = joined.step(acts), alone.step(acts)
        for k in r1[0]:
            assert np.array_equal(r1[0][k], r2[0][k]), (step, k)
        for a, b in zip(r1[1:4], r2[1:4]):
            assert np.array_equal(a, b), step
        for k in ("tick", "executed", "episode", "seed"):
            assert np.array_equal(r1[4][k], r2[4][k]), (step, k)
        if step % 15 == 0:
            assert joined.state_hashes() == alone.state_hashes()
    assert list(r1[4]["episode"]) == [2, 2, 2, 2]
    # a tank's world read through the environment is up to date with the joined one
    assert joined.tanks[3].world.state_hash() == alone.tanks[3].world.state_hash()
    joined.close()
    alone.close()


def test_a_tank_with_spare_room_steps_one_by_one_with_every_room_on_the_fish_axis():
    settings = {"fish.count": 8, "fish.spare": 3, "world.width": 20, "world.height": 12}
    env = vector_env(2, max_steps=10, **settings)
    obs, infos = env.reset(seed=1)
    assert env.batch is None and obs["view"].shape == (2, 11, 25)
    assert infos["alive"].sum(axis=1).tolist() == [8, 8] and not obs["view"][:, 8:].any()
    obs, rewards, *_ = env.step(np.zeros((2, 11), np.int64))
    assert not rewards[:, 8:].any() and not obs["energy"][:, 8:].any()
    env.close()


def test_recorded_or_species_tanks_step_one_by_one(tmp_path):
    rec = vector_env(2, max_steps=5, record=tmp_path / "r", **{"fish.count": 8})
    rec.reset(seed=1)
    assert rec.batch is None
    rec.close()
    species = vector_env(2, max_steps=5, preset="predators")
    species.reset(seed=1)
    assert species.batch is None
    species.close()
