"""The aquarium as a PettingZoo ParallelEnv (mirofish.env, docs/environment.md)."""

from __future__ import annotations

import json
import os
import random
import stat
import sys
import threading
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the [rl] extra (installed with dev)")

from pettingzoo.test import parallel_api_test

from mirofish.actions import Action
from mirofish.cli import main
from mirofish.config import ConfigError, load_config
from mirofish.env import CONFIG_MAX_BYTES, parallel_env


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
    with pytest.raises(ValueError, match="fish_99"):
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


# -- what the environment refuses (a fault campaign found it accepting what it cannot mean)


@pytest.fixture(scope="module")
def small_env():
    env = parallel_env(max_steps=1000, **{"fish.count": 4})
    env.reset(seed=3)
    yield env
    env.close()


def one_line(exc: BaseException) -> str:
    msg = str(exc)
    assert msg and "\n" not in msg and len(msg) < 240, msg
    return msg


def type_id(value) -> str:
    return type(value).__name__


class BrokenRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


WRONG_TYPE_ACTIONS = [2.7, "3", b"1", -0.5, 3.0, np.float32(5.9), np.float64(2.0), Decimal("2"), Fraction(3, 1),
                      np.array(2.0), np.array(True), np.array([1]), np.array([[1, 2], [3, 4]]), True, False,
                      np.bool_(True), None, [1], (1,), {"a": 1}, complex(1, 0), float("nan"), float("inf"),
                      object(), BrokenRepr()]
OUT_OF_RANGE_ACTIONS = [6, -1, 7, np.int64(6), np.int8(-1), np.uint64(2**64 - 1), np.array(9), 10**30, 10**5000]


@pytest.mark.parametrize("action", WRONG_TYPE_ACTIONS, ids=type_id)
def test_an_action_of_the_wrong_type_is_a_type_error_naming_the_agent_and_value(small_env, action):
    tick = small_env.session.tick
    with pytest.raises(TypeError) as err:
        small_env.step({"fish_0": 0, "fish_2": action})
    msg = one_line(err.value)
    assert msg.startswith("fish_2: action ") and type(action).__name__ in msg
    if isinstance(action, BrokenRepr):
        assert "<BrokenRepr>" in msg
    elif "\n" not in repr(action) and len(repr(action)) < 40:
        assert repr(action) in msg
    assert small_env.session.tick == tick  # nothing stepped, nothing applied


@pytest.mark.parametrize("action", OUT_OF_RANGE_ACTIONS, ids=type_id)
def test_an_integer_action_out_of_range_is_a_value_error_naming_the_agent_and_value(small_env, action):
    tick = small_env.session.tick
    with pytest.raises(ValueError) as err:
        small_env.step({"fish_1": action})
    msg = one_line(err.value)
    assert msg.startswith("fish_1: action ") and "0..5" in msg
    if abs(int(action)) < 2**64:
        assert str(int(action)) in msg
    assert small_env.session.tick == tick


@pytest.mark.parametrize("actions", [None, [("fish_0", 1)], "fish_0", 3, {("fish_0",)}, np.array([1, 2])],
                         ids=type_id)
def test_step_takes_a_dict_and_names_what_it_was_given(small_env, actions):
    with pytest.raises(TypeError) as err:
        small_env.step(actions)
    msg = one_line(err.value)
    assert "step()" in msg and f"({type(actions).__name__})" in msg


def test_unknown_agents_are_a_value_error_naming_them(small_env):
    with pytest.raises(ValueError) as err:
        small_env.step({"fish_0": 1, "fish_4": 1, "shark": 2, 0: 3})
    msg = one_line(err.value)
    assert "'fish_4'" in msg and "'shark'" in msg and " 0 " in msg and "fish_0 … fish_3" in msg


def test_good_actions_after_refused_ones_still_step(small_env):
    tick = small_env.session.tick
    _, _, _, _, infos = small_env.step({"fish_0": np.array(4), "fish_1": np.uint8(5), "fish_2": 5})
    assert small_env.session.tick == tick + 1 and infos["fish_0"]["tick"] == tick


BAD_SEEDS = [(1.5, TypeError), ("7", TypeError), (b"7", TypeError), (True, TypeError), (np.bool_(False), TypeError),
             (7.0, TypeError), (Decimal(7), TypeError), (np.array(7), TypeError), (-1, ValueError),
             (2**63, ValueError), (np.uint64(2**64 - 1), ValueError), (10**5000, ValueError)]


@pytest.mark.parametrize(("seed", "error"), BAD_SEEDS, ids=[f"{type(s).__name__}-{i}" for i, (s, _) in
                                                            enumerate(BAD_SEEDS)])
def test_reset_refuses_a_seed_that_is_not_an_integer_in_0_to_2_63(small_env, seed, error):
    fresh = parallel_env(max_steps=3, **{"fish.count": 2})
    with pytest.raises(error) as err:
        fresh.reset(seed=seed)
    assert "seed" in one_line(err.value)
    assert fresh.session is None  # refused before any tank was built
    fresh.reset(seed=2**63 - 1)  # the top of the range is a seed
    fresh.close()


BAD_MAX_STEPS = [(1.5, TypeError), (True, TypeError), ("10", TypeError), (10.0, TypeError), (None, TypeError),
                 (0, ValueError), (-3, ValueError), (2**63, ValueError)]


@pytest.mark.parametrize(("max_steps", "error"), BAD_MAX_STEPS, ids=[f"{type(m).__name__}-{i}" for i, (m, _) in
                                                                     enumerate(BAD_MAX_STEPS)])
def test_max_steps_must_be_a_positive_integer(max_steps, error):
    with pytest.raises(error) as err:
        parallel_env(max_steps=max_steps, **{"fish.count": 2})
    assert "max_steps" in one_line(err.value)


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"text": "no"}, "text"), ({"text": 1}, "text"), ({"overwrite": "yes"}, "overwrite"), ({"config": 5}, "config"),
    ({"config": b"tank.toml"}, "config"), ({"overrides": "fish.count=3"}, "overrides"),
    ({"overrides": [b"fish.count=3"]}, "override"), ({"record": 5}, "record")])
def test_other_arguments_of_the_wrong_type_are_a_type_error_naming_them(kwargs, named):
    with pytest.raises(TypeError) as err:
        parallel_env(**kwargs)
    assert named in one_line(err.value)


@pytest.mark.parametrize(("settings", "key"), [
    ({"fish.count": True}, "fish.count"), ({"fish.count": "30"}, "fish.count"), ({"fish.count": 30.0}, "fish.count"),
    ({"fish.count": np.bool_(True)}, "fish.count"), ({"seed": True}, "seed"), ({"food.energy": True}, "food.energy"),
    ({"world.tick_seconds": "0.5"}, "world.tick_seconds"), ({"triggers.food_rose": 1}, "triggers.food_rose"),
    ({"overrides": ["fish.count=true"]}, "fish.count"), ({"overrides": ['fish.count="30"']}, "fish.count"),
    ({"fish.count": 0}, "fish.count"), ({"fish.count": 1.5}, "fish.count")])
def test_wrong_typed_settings_are_refused_with_a_value_error_naming_the_key(settings, key):
    with pytest.raises(ValueError) as err:
        parallel_env(**settings)
    assert key in one_line(err.value)


def test_a_config_file_is_checked_as_strictly_and_layered_under_overrides_and_settings(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[fish]\ncount = true\n")
    with pytest.raises(ConfigError, match=r"fish\.count"):
        parallel_env(config=bad)
    good = tmp_path / "good.toml"
    good.write_text("seed = 11\n[fish]\ncount = 5\n[food]\nenergy = 40\n")  # an int for a float key is a number
    assert parallel_env(config=good).cfg.fish.count == 5
    assert parallel_env(config=str(good), overrides=["fish.count=6"]).cfg.fish.count == 6
    env = parallel_env(config=good, overrides=["fish.count=6"], **{"fish.count": 7})
    assert env.cfg.fish.count == 7 and env.cfg.seed == 11
    for key in ("path", "preset"):  # not load_config's keywords: unknown keys of a tank file
        (tmp_path / "odd.toml").write_text(f'{key} = "schooling-demo"\n')
        with pytest.raises(ConfigError, match=f"{key}: unknown key"):
            parallel_env(config=tmp_path / "odd.toml")
    # the env reads and layers the file itself: it gives load_config's tank for the files shipped
    for shipped in ("examples/mixed.toml", "assets/presets/schooling-demo.toml"):
        path = Path(__file__).resolve().parent.parent / shipped
        cfg = load_config(path, ["fish.count=80"], **{"seed": 3})
        assert parallel_env(config=path, overrides=["fish.count=80"], seed=3).cfg.model_dump(exclude={"brain"}) \
            == cfg.model_dump(exclude={"brain"})


def test_numpy_integers_are_accepted_and_act_as_the_same_ints():
    def episode(kind):
        count = np.int64(6) if kind == "numpy" else 6
        env = parallel_env(max_steps=np.int32(30) if kind == "numpy" else 30, **{"fish.count": count})
        env.reset(seed=np.uint16(4) if kind == "numpy" else 4)
        rng = np.random.default_rng(1)
        casts = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64, np.intp, np.array]
        trail = []
        for t in range(30):
            acts = {}
            for j, a in enumerate(env.agents):
                n = int(rng.integers(6))
                acts[a] = casts[(t + j) % len(casts)](n) if kind == "numpy" else n
            _, rewards, _, _, infos = env.step(acts)
            trail.append((rewards, {a: i["executed"] for a, i in infos.items()}))
        digest = env.session.state_hash()
        env.close()
        return trail, digest

    assert episode("numpy") == episode("int")


def _kind(path) -> str:
    return stat.filemode(os.stat(path).st_mode)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_config_is_refused_within_5_seconds(tmp_path):
    fifo = tmp_path / "tank.toml"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def load():
        try:
            parallel_env(config=fifo)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 — handed to the test's thread to judge
            outcome.append(exc)

    start = time.monotonic()
    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=5)
    took = time.monotonic() - start
    if worker.is_alive():  # it blocked on the FIFO: open the writing end so the reader returns, then fail
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
        worker.join(timeout=5)
        pytest.fail(f"parallel_env(config=<FIFO>) still running after {took:.1f} s")
    assert took < 5
    assert isinstance(outcome[0], ConfigError), outcome
    assert "FIFO" in one_line(outcome[0]) and "tank.toml" in str(outcome[0])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_symlink_to_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "tank.toml").symlink_to(tmp_path / "pipe")
    with pytest.raises(ConfigError, match="FIFO"):
        parallel_env(config=tmp_path / "tank.toml")


@pytest.mark.parametrize("where", ["directory", "dev_zero"])
def test_a_directory_or_a_device_as_config_is_refused(tmp_path, where):
    path = tmp_path if where == "directory" else "/dev/zero"
    if where == "dev_zero" and (sys.platform == "win32" or not os.path.exists(path)):
        pytest.skip("no /dev/zero here")
    with pytest.raises(ConfigError) as err:
        parallel_env(config=path)
    assert "not a regular file" in one_line(err.value), _kind(path)


def test_a_config_file_over_1_mb_is_refused_and_one_at_the_limit_is_read(tmp_path):
    body = "[fish]\ncount = 5\n"
    at_limit = tmp_path / "big.toml"
    at_limit.write_text("#" * (CONFIG_MAX_BYTES - len(body) - 1) + "\n" + body)
    assert at_limit.stat().st_size == CONFIG_MAX_BYTES == 1 << 20
    assert parallel_env(config=at_limit).cfg.fish.count == 5
    over = tmp_path / "bigger.toml"
    over.write_text("#" * (CONFIG_MAX_BYTES - len(body)) + "\n" + body)
    with pytest.raises(ConfigError) as err:
        parallel_env(config=over)
    assert "bigger.toml" in one_line(err.value) and str(CONFIG_MAX_BYTES) in str(err.value)


def _bad_action(rng: random.Random):
    """One action that is not an int in 0..5: a random type, a random value."""
    n = rng.randint(-10**6, 10**6)
    kinds = [
        lambda: rng.uniform(-100, 100),
        lambda: float(rng.randint(0, 5)),
        lambda: str(rng.randint(0, 5)),
        lambda: str(rng.randint(0, 5)).encode(),
        lambda: rng.choice([True, False, np.bool_(True)]),
        lambda: rng.choice([n, -abs(n) - 1, 6 + abs(n), 2**rng.randint(63, 300)]),
        lambda: rng.choice([np.int8, np.int64, np.uint32, np.uint64])(rng.randint(6, 120)),
        lambda: np.float16(rng.randint(0, 5)),
        lambda: Decimal(rng.randint(0, 5)),
        lambda: Fraction(rng.randint(0, 30), rng.randint(1, 5)),
        lambda: complex(rng.randint(0, 5), 0),
        lambda: rng.choice([None, float("nan"), float("-inf"), object(), BrokenRepr(), ...]),
        lambda: [rng.randint(0, 5)] * rng.randint(0, 3),
        lambda: {rng.randint(0, 5)},
        lambda: np.array(rng.randint(0, 5), dtype=rng.choice([np.float32, np.bool_, object])),
        lambda: np.full((rng.randint(1, 3),) * rng.randint(1, 2), rng.randint(0, 5)),
        lambda: np.array(rng.randint(6, 1000)),
    ]
    return rng.choice(kinds)()


def test_a_seeded_fuzz_of_bad_actions_raises_only_type_and_value_errors(small_env):
    rng = random.Random(62)
    tick = small_env.session.tick
    kinds = set()
    for _ in range(60):
        bad = _bad_action(rng)
        agent = rng.choice(small_env.agents)
        acts = {a: rng.randint(0, 5) for a in small_env.agents if rng.random() < 0.5}
        acts[agent] = bad
        try:
            small_env.step(acts)
        except (TypeError, ValueError) as exc:
            msg = one_line(exc)
            assert msg.startswith(f"{agent}: action "), msg
            kinds.add(type(exc))
        else:
            pytest.fail(f"{agent}: action {bad!r} was accepted")
    assert kinds == {TypeError, ValueError}
    assert small_env.session.tick == tick  # not one of them stepped the tank
