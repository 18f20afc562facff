"""The array environment (mirofish.env.vector_env): many tanks, arrays over (tank, fish), auto-reset,
seeds a user can reproduce, each tank exactly parallel_env's tank of its seed, episodes recordable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mirofish.env import parallel_env, vector_env

ROOT = Path(__file__).resolve().parent.parent
FISH = 24
SMALL = {"fish.count": FISH, "world.width": 30, "world.height": 14}


def test_observations_and_actions_are_arrays_over_tanks_and_fish():
    env = vector_env(3, max_steps=20, **SMALL)
    obs, infos = env.reset(seed=11)
    assert env.observation_space.contains(obs)
    assert obs["view"].shape == (3, FISH, 25) and obs["energy"].shape == (3, FISH)
    assert list(infos["seed"]) == [11, 12, 13] and list(infos["tick"]) == [0, 0, 0]
    actions = env.action_space.sample()
    assert actions.shape == (3, FISH)
    obs, rewards, terminated, truncated, infos = env.step(actions)
    assert env.observation_space.contains(obs)
    assert rewards.shape == (3, FISH) and rewards.dtype == np.float32
    assert terminated.shape == truncated.shape == (3,) and not terminated.any() and not truncated.any()
    assert infos["executed"].shape == (3, FISH) and list(infos["tick"]) == [1, 1, 1]
    env.close()


def test_each_tank_is_parallel_envs_tank_of_its_seed_tick_by_tick():
    env = vector_env(2, max_steps=100, **SMALL)
    obs, _ = env.reset(seed=40)
    dict_env = parallel_env(max_steps=100, **SMALL)
    d_obs, _ = dict_env.reset(seed=41)  # tank 1 has seed 40 + 1
    rng = np.random.default_rng(3)
    agents = dict_env.possible_agents
    for _ in range(40):
        acts = rng.integers(0, 6, (2, FISH))
        obs, rewards, _, _, infos = env.step(acts)
        d_obs, d_rewards, _, _, d_infos = dict_env.step(dict(zip(agents, acts[1].tolist())))
        assert env.tanks[1].world.state_hash() == dict_env.session.state_hash()
        assert np.array_equal(obs["view"][1], np.stack([d_obs[a]["view"] for a in agents]))
        assert np.allclose(rewards[1], [d_rewards[a] for a in agents])
        assert list(infos["executed"][1]) == [d_infos[a]["executed"] for a in agents]
    # the other tank is another tank (its own seed)
    assert env.tanks[0].world.state_hash() != env.tanks[1].world.state_hash()


def test_a_tank_resets_the_step_after_its_episode_ends_with_the_next_seed():
    env = vector_env(2, max_steps=5, **SMALL)
    env.reset(seed=7)
    zero = np.zeros((2, FISH), np.int64) + 5
    for _ in range(5):
        obs, rewards, _, truncated, infos = env.step(zero)
    assert truncated.all() and list(infos["episode"]) == [0, 0] and list(infos["tick"]) == [5, 5]
    obs, rewards, _, truncated, infos = env.step(zero)  # ignored: the tanks start their next episode
    assert not truncated.any() and not rewards.any() and list(infos["tick"]) == [0, 0]
    assert list(infos["episode"]) == [1, 1] and list(infos["seed"]) == [9, 10]  # 7 + i + 1 × 2 tanks
    fresh = vector_env(2, max_steps=5, **SMALL)
    f_obs, _ = fresh.reset(seed=[9, 10])
    assert all(np.array_equal(obs[k], f_obs[k]) for k in obs)
    assert env.state_hashes() == fresh.state_hashes()


def test_recorded_tanks_replay_and_step_exactly_as_unrecorded_ones(tmp_path):
    rec = tmp_path / "runs"
    env, lean = vector_env(2, max_steps=30, record=rec, **SMALL), vector_env(2, max_steps=30, **SMALL)
    env.reset(seed=5)
    lean.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(30):
        acts = rng.integers(0, 6, (2, FISH))
        env.step(acts)
        lean.step(acts)
        assert env.state_hashes() == lean.state_hashes()
    env.close()
    files = sorted(p.name for p in rec.iterdir())
    assert files == ["tank0-ep0.mirofish", "tank1-ep0.mirofish"]
    done = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(rec / files[1]), "--headless", "--verify"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    # a second run into the same folder is refused, not written over
    again = vector_env(2, max_steps=30, record=rec, **SMALL)
    with pytest.raises(Exception, match="exists"):
        again.reset(seed=5)
    again.close()


@pytest.mark.parametrize(("actions", "error", "words"), [
    (np.zeros((2, FISH + 1), np.int64), ValueError, "shape (2, 25), expected (2, 24)"),
    (np.zeros((2, FISH), np.float64), TypeError, "integers"),
    (np.zeros((2, FISH), bool), TypeError, "integers"),
    (np.full((2, FISH), 6), ValueError, "tank 0 fish 0: action 6 is out of range"),
    ("rest", TypeError, "integers"),
])
def test_bad_actions_are_one_line_and_no_tank_steps(actions, error, words):
    env = vector_env(2, max_steps=10, **SMALL)
    env.reset(seed=1)
    before = env.state_hashes()
    with pytest.raises(error) as err:
        env.step(actions)
    assert words in str(err.value) and "\n" not in str(err.value)
    assert env.state_hashes() == before


def test_bad_construction_and_seeds_are_one_line():
    with pytest.raises(ValueError, match="num_envs"):
        vector_env(0, **SMALL)
    env = vector_env(2, **SMALL)
    with pytest.raises(ValueError, match="3 seeds for 2 tanks"):
        env.reset(seed=[1, 2, 3])
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.zeros((2, FISH), np.int64))


def test_a_second_reset_goes_on_numbering_the_recordings_and_never_writes_over_one(tmp_path):
    rec = tmp_path / "runs"
    with vector_env(1, max_steps=100, record=rec, **SMALL) as env:
        env.reset(seed=1)
        for _ in range(30):
            env.step(np.zeros((1, FISH), np.int64))
        env.reset(seed=2)
        for _ in range(2):
            env.step(np.zeros((1, FISH), np.int64))
    assert sorted(p.name for p in rec.glob("*.mirofish")) == ["tank0-ep0.mirofish", "tank0-ep1.mirofish"]
    first = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(rec / "tank0-ep0.mirofish"), "--headless",
                            "--verify"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert first.returncode == 0 and "30" in first.stdout + first.stderr, first.stdout + first.stderr


def test_a_refused_recording_leaves_the_environment_as_it_was(tmp_path):
    rec = tmp_path / "runs"
    rec.mkdir()
    (rec / "tank1-ep0.mirofish").write_bytes(b"precious")
    env = vector_env(2, max_steps=3, record=rec, **SMALL)
    with pytest.raises(ValueError, match=r"tank1-ep0\.mirofish exists.*overwrite=True"):
        env.reset(seed=5)
    assert sorted(p.name for p in rec.iterdir()) == ["tank1-ep0.mirofish"]  # nothing started, nothing written
    assert (rec / "tank1-ep0.mirofish").read_bytes() == b"precious"
    (rec / "tank1-ep0.mirofish").rename(rec / "tank1-ep1.mirofish")  # now the auto-reset's file is taken
    env.reset(seed=5)
    acts = np.zeros((2, FISH), np.int64)
    for _ in range(3):
        env.step(acts)
    before = env.state_hashes()
    with pytest.raises(ValueError, match=r"tank1-ep1\.mirofish exists"):
        env.step(acts)  # this step would start both tanks' next episodes: neither starts
    assert env.state_hashes() == before and list(env._infos(acts)["episode"]) == [0, 0]
    assert (rec / "tank1-ep1.mirofish").read_bytes() == b"precious"
    env.close()
    with pytest.raises(RuntimeError, match="after close"):
        env.step(acts)


def test_seeds_near_the_top_wrap_instead_of_failing_at_the_auto_reset():
    env = vector_env(2, max_steps=1, **SMALL)
    _, infos = env.reset(seed=2**63 - 2)
    assert list(infos["seed"]) == [2**63 - 2, 2**63 - 1]
    acts = np.zeros((2, FISH), np.int64)
    env.step(acts)
    _, _, _, _, infos = env.step(acts)  # both tanks start their second episode
    assert list(infos["seed"]) == [0, 1]


SPECIES = ('fish.groups=[{name="minnows",share=0.9,spare=40,birth_energy=70,dies=true},'
           '{name="pike",share=0.1,hunts=["minnows"],dies=true,eats_food=false,catch_gain=40}]')


def test_a_species_tank_is_parallel_envs_with_its_births_and_deaths_tick_by_tick():
    """Species (docs/species.md): the fish axis is every room a fish may be born into; ``alive``,
    ``died`` and ``born`` say who is in the water and who left or came, as parallel_env's agents
    and terminations do; a fish out of the water sees nothing; the tank hashes as parallel_env's."""
    env = vector_env(2, overrides=[SPECIES], max_steps=300, **{**SMALL, "fish.count": 30})
    obs, infos = env.reset(seed=40)
    assert env.n_fish == 70 and obs["view"].shape == (2, 70, 25) and list(infos["alive"].sum(1)) == [30, 30]
    dict_env = parallel_env(overrides=[SPECIES], max_steps=300, **{**SMALL, "fish.count": 30})
    dict_env.reset(seed=41)
    rng = np.random.default_rng(3)
    born = died = 0
    dead: set[str] = set()
    alive_before = infos["alive"]
    for _ in range(300):
        acts = rng.integers(0, 6, (2, 70))
        obs, rewards, terminated, _, infos = env.step(acts)
        assert not rewards[~alive_before].any()  # out of the water before the step (gone or unborn): 0
        alive_before = infos["alive"]
        d_obs, d_rewards, d_term, _, _ = dict_env.step({a: int(acts[1][int(a[5:])]) for a in dict_env.agents})
        assert env.tanks[1].world.state_hash() == dict_env.session.state_hash()
        in_water = set(dict_env._in_water())
        assert infos["alive"][1].tolist() == [a in in_water for a in dict_env.possible_agents]
        now_dead = {a for a, t in d_term.items() if t}
        assert {f"fish_{i}" for i in np.flatnonzero(infos["died"][1])} == now_dead - dead  # who left this step
        gone_before, dead = dead, now_dead
        gone = ~infos["alive"][1]
        assert not obs["view"][1][gone].any() and not obs["energy"][1][gone].any()
        for a in in_water:
            assert np.array_equal(d_obs[a]["view"], obs["view"][1][int(a[5:])])
        for a, r in d_rewards.items():  # the same energy change, the dead's last one included
            assert abs(rewards[1][int(a[5:])] - r) < 1e-6
            assert a not in gone_before or r == 0.0  # one gone before this step: reward 0, as the docs say
        born, died = born + int(infos["born"][1].sum()), died + int(infos["died"][1].sum())
        assert not terminated.any()
    terminated_in_dict = {a for a, t in d_term.items() if t}
    assert died == len(terminated_in_dict) and died > 20 and born > 10  # the same fish left, and young came
    assert born == len(set(dict_env._seen)) - 30
    env.close()


def test_a_tank_whose_fish_are_all_gone_terminates_and_starts_its_next_episode():
    starving = {**SMALL, "fish.count": 10, "fish.decay_per_tick": 20.0, "fish.start_energy_min": 30.0,
                "fish.start_energy_max": 40.0}
    env = vector_env(2, overrides=['fish.groups=[{name="all",share=1.0,dies=true}]'], max_steps=500, **starving)
    env.reset(seed=5)
    rest = np.full((2, 10), 5, np.int64)
    steps = 0
    while steps < 10:
        _, rewards, terminated, truncated, infos = env.step(rest)
        steps += 1
        if terminated.any():
            break
    assert terminated.all() and not truncated.any() and not infos["alive"].any() and steps <= 3
    assert (rewards < 0).all()  # each fish's last energy, lost
    _, rewards, terminated, _, infos = env.step(rest)  # the next episode, with the next seeds
    assert infos["alive"].all() and list(infos["episode"]) == [1, 1] and not terminated.any()
    assert not infos["born"].any() and not infos["died"].any() and not rewards.any()
    env.close()


def test_an_environment_takes_a_presets_name_as_the_command_lines_preset():
    by_name = vector_env(2, "predators", max_steps=5)
    by_path = vector_env(2, str(ROOT / "assets" / "presets" / "predators.toml"), max_steps=5)
    by_name.reset(seed=3)
    by_path.reset(seed=3)
    assert by_name.n_fish == by_path.n_fish and by_name.state_hashes() == by_path.state_hashes()
    assert parallel_env("predators").possible_agents == parallel_env(preset="predators").possible_agents
    with pytest.raises(Exception, match="not found"):
        vector_env(2, "no-such-preset")
