"""The aquarium as a PettingZoo ParallelEnv (mirofish.env, docs/environment.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the [rl] extra (installed with dev)")

from pettingzoo.test import parallel_api_test

from mirofish.actions import Action
from mirofish.cli import main
from mirofish.config import ConfigError
from mirofish.env import parallel_env


def random_episode(env, seed: int, steps: int, draw: int = 0) -> tuple[list[dict], str]:
    rng = np.random.default_rng(draw)
    env.reset(seed=seed)
    trail = []
    for _ in range(steps):
        acts = {a: int(rng.integers(6)) for a in env.agents}
        _obs, rewards, _, _, _ = env.step(acts)
        trail.append(rewards)
    return trail, env.session.state_hash()


def test_it_passes_pettingzoo_parallel_api_test_with_and_without_text():
    parallel_api_test(parallel_env(max_steps=40, **{"fish.count": 20}), num_cycles=50)
    parallel_api_test(parallel_env(max_steps=10, text=True, **{"fish.count": 8}), num_cycles=12)


def test_the_same_seed_and_actions_give_the_same_tank_and_another_seed_does_not():
    env = parallel_env(max_steps=200, **{"fish.count": 30})
    a, ha = random_episode(env, seed=5, steps=80)
    b, hb = random_episode(env, seed=5, steps=80)
    _c, hc = random_episode(env, seed=6, steps=80)
    env.close()
    assert ha == hb and a == b
    assert hc != ha


def test_rewards_are_each_fish_s_energy_change_and_eating_pays():
    env = parallel_env(max_steps=300, **{"fish.count": 30})
    obs, _ = env.reset(seed=2)
    ate = 0
    for _ in range(300):
        if not env.agents:
            break
        before = {a: float(obs[a]["energy"][0]) for a in env.agents}
        # eat when food is under or beside the fish, else swim east: a greedy policy
        acts = {}
        for a in env.agents:
            v = obs[a]["view"].reshape(5, 5)
            near = obs[a]["food_here"] or 2 in (v[1, 2], v[3, 2], v[2, 1], v[2, 3])
            acts[a] = int(Action.EAT if near else Action.MOVE_E)
        obs, rewards, terms, truncs, _infos = env.step(acts)
        for a, r in rewards.items():
            assert r == pytest.approx(float(obs[a]["energy"][0]) - before[a], abs=1e-3)
            ate += r > 10
    env.close()
    assert ate > 0  # food was eaten and paid in the reward
    assert all(truncs.values()) and not any(terms.values()) and env.agents == []


def test_the_actions_given_are_the_actions_the_world_executes():
    env = parallel_env(max_steps=5, **{"fish.count": 12})
    _obs, _ = env.reset(seed=1)
    _, _, _, _, infos = env.step(dict.fromkeys(env.agents, int(Action.REST)))
    assert {i["executed"] for i in infos.values()} <= {int(Action.REST), -1}
    _, _, _, _, infos = env.step(dict.fromkeys(env.agents, int(Action.MOVE_E)))
    east = sum(i["executed"] == int(Action.MOVE_E) for i in infos.values())
    assert east >= len(infos) // 2  # the world carries out the policy's moves (some are blocked)
    with pytest.raises(ValueError, match="action 9"):
        env.step({"fish_0": 9})
    with pytest.raises(KeyError, match="fish_99"):
        env.step({"fish_99": 0})
    with pytest.raises(ConfigError, match=r"fish\.count"):
        parallel_env(**{"fish.count": 0})


def test_a_recorded_episode_replays_exactly_and_refuses_to_overwrite(tmp_path, capsys):
    rec = tmp_path / "episode.mirofish"
    env = parallel_env(max_steps=120, record=rec, **{"fish.count": 20})
    _, final = random_episode(env, seed=9, steps=120)
    env.close()
    assert main(["replay", str(rec), "--headless", "--verify"]) == 0
    out = [json.loads(ln) for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")][-1]
    assert out["state_hash"] == final and out["verified_ticks"] == 120
    env = parallel_env(max_steps=10, record=rec, **{"fish.count": 20})
    with pytest.raises(Exception, match="exists"):
        env.reset(seed=1)
    env.close()
