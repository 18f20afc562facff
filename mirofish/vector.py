"""Many tanks as one array environment: actions and observations over (tank, fish), no dicts.

    from mirofish.env import vector_env

    env = vector_env(8, max_steps=500, **{"fish.count": 64})
    obs, infos = env.reset(seed=7)               # obs["view"]: (8, 64, 25) int8
    for _ in range(1000):
        actions = env.action_space.sample()      # (8, 64) ints in 0..5
        obs, rewards, terminated, truncated, infos = env.step(actions)
    env.close()

The tanks are the :class:`~mirofish.env.AquariumEnv`'s, as arrays (docs/environment.md):

* **Action**: an integer array of shape ``(num_envs, n_fish)`` with values in ``0..5``
  (:class:`~mirofish.actions.Action`: move n/s/w/e, eat, rest); one bad shape, dtype or value is
  a one-line ``TypeError``/``ValueError`` naming it, before any tank steps.
* **Observation**: a dict of arrays — ``view`` ``(num_envs, n_fish, side²)`` int8 (the view
  codes: 0 water, 1 glass/rock/plant, 2 food, 3 the fish itself, 4–7 another fish facing
  n/s/w/e), ``energy`` ``(num_envs, n_fish)`` float32 (config units), ``heading``
  ``(num_envs, n_fish)`` int8 (0 n, 1 s, 2 w, 3 e), ``food_here`` ``(num_envs, n_fish)`` bool.
  Each step returns new arrays (keep them as they are).
* **Reward**: ``(num_envs, n_fish)`` float32, each fish's energy change over the step.
* **Episodes** are per tank: ``terminated`` (no fish left in the water: only with species) and
  ``truncated`` (after ``max_steps`` steps) are ``(num_envs,)`` bool.
* **Species** (docs/species.md), or spare room (``fish.spare``): the fish axis is every room a fish
  may be born (or put) into;
  ``infos["alive"]``, ``infos["died"]`` and ``infos["born"]`` ``(num_envs, n_fish)`` bool say
  who is in the water after the step and who left or came in it; a fish out of the water
  observes zeros and its actions are ignored. **Auto-reset** is Gymnasium's default
  (``AutoresetMode.NEXT_STEP``): the step after a tank's episode ended resets that tank — its
  actions are ignored, it returns the new episode's first observation with reward 0 — while the
  others step on.
* **Seeds**: ``reset(seed=s)`` gives tank ``i`` the seed ``s + i``; its ``k``-th later episode
  (after auto-reset) has seed ``s + i + k × num_envs`` (modulo 2⁶³). A list (or an integer
  array) gives each tank its own first seed. ``seed=None``: the config's seed as ``s``. The same
  seeds and actions give the same tanks, tick by tick; tank ``i`` with seed ``x`` is exactly
  ``parallel_env``'s tank of seed ``x``.
* ``infos``: ``tick`` ``(num_envs,)``, ``executed`` ``(num_envs, n_fish)`` (the action the world
  executed), ``episode`` ``(num_envs,)`` and ``seed`` ``(num_envs,)``.
* **Recording**: ``record=DIR`` records every episode of every tank as a normal recording,
  ``DIR/tank{i}-ep{k}.mirofish`` (``replay --verify`` re-runs it), ``k`` counting the tank's
  episodes over the environment's life (a later ``reset()`` goes on counting, as
  ``parallel_env``'s episodes do); a recorded tank steps through the session as ``parallel_env``
  does, an unrecorded one through the world alone (the same states, hash for hash, without the
  per-tick metrics of a recording). An existing file is refused unless ``overwrite=True``:
  ``reset()`` and the auto-reset check every file they are about to start before any tank
  changes, so a refusal (one ``ValueError``) leaves the environment as it was. Close the
  environment (``close()``, or ``with vector_env(...) as env``) to finish the recordings.

**Joined** (``join=True``, the default): tanks that are not recorded and have no species,
groups, places or plants shown step as one world (:mod:`mirofish.batch`): each tick one compiled
call of each stage for all of them, only their food spawned tank by tank — the same tanks, hash
for hash, as stepped one after another (``join=False``, and what a recorded or species tank
does: a few compiled calls per tank). Needs the extra ``[rl]`` (gymnasium).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .batch import Batch, why_not
from .config import Config
from .env_inputs import SEED_MAX, _bounded, _flag, _load, env_session
from .fish.perception import V_FISH
from .grid import grid_of
from .water import NO_FOOD
from .world import World

SEEDS = 2**63  # seeds wrap modulo this (an episode's seed stays a seed the tank's RNG takes)


class _Tank:
    """One tank of the vector: its world (and its session when it is recorded)."""

    def __init__(self, cfg: Config, seed: int, record: Path | None, overwrite: bool):
        self.seed, self.steps = seed, 0
        cfg = cfg.model_copy(update={"seed": seed})
        self.session: Any = None
        self.joined: tuple[Batch, int] | None = None  # (the batch, its tank number) while joined
        if record is not None:
            self.session, self.source = env_session(cfg, record, overwrite)
            self._world = self.session.world
        else:
            self._world = World(cfg)

    @property
    def world(self) -> World:
        """The tank's world (joined: brought up to date with the batch when read)."""
        if self.joined is not None:
            return self.joined[0].world(self.joined[1])
        return self._world

    def step(self, actions: np.ndarray) -> np.ndarray:
        """One tick on ``actions`` (n_fish int64); the executed actions."""
        w = self._world
        s = w.school
        self.steps += 1
        if self.session is not None:
            src = self.source
            src.actions[:] = actions
            src.present = ~s.absent if np.count_nonzero(s.absent) else None
            engine = self.session.engine
            engine.queued_at[:] = engine.clock()
            executed: np.ndarray = self.session.step().executed
            return executed
        w.give(actions)  # (as the environment's decision source does: fish in the water)
        out: np.ndarray = w.step().executed
        return out

    def close(self) -> None:
        if self.session is not None:
            if self.session.recorder is not None:
                self.session.stop_recording()
            self.session.close()
            self.session = None


class VectorAquariumEnv(VectorEnv):
    """``num_envs`` tanks with arrays over (tank, fish) (see the module's docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012 — gymnasium's own attribute

    def __init__(self, cfg: Config, num_envs: int, max_steps: int = 1000, record: str | os.PathLike[str] | None = None,
                 overwrite: bool = False, join: bool = True):
        if not isinstance(cfg, Config):
            raise TypeError(f"cfg must be a mirofish.config.Config, got {type(cfg).__name__} (use vector_env())")
        self.num_envs = _bounded(num_envs, "num_envs", 1, 1 << 16)
        self.max_steps = _bounded(max_steps, "max_steps", 1, SEED_MAX)
        self.overwrite = _flag(overwrite, "overwrite")
        self.join = _flag(join, "join")
        if record is not None and not isinstance(record, str | os.PathLike):
            raise TypeError(f"record must be a folder path or None, got {type(record).__name__}")
        if record is not None and not os.fspath(record):
            raise ValueError("record must be a folder path, got an empty string")
        self.record = Path(record) if record is not None else None
        if self.record is not None and self.record.exists() and not self.record.is_dir():
            raise ValueError(f"record={os.fspath(self.record)!r} is a file; give a folder for the tanks' recordings")
        self.cfg = cfg.model_copy(update={"brain": cfg.brain.model_copy(update={"decides": "action"})})
        # a tank with species (docs/species.md): the fish axis is every room a fish may be born into
        # (or with spare room, fish.spare: room out of the water until a fish is put in it) — then a fish
        # out of the water observes zeros, and a tank with none left in it ends
        self.species = (any(g.species_rules for g in self.cfg.fish.groups)
                        or self.cfg.fish.slots > self.cfg.fish.count)
        self.n_fish = n = self.cfg.fish.slots if self.species else self.cfg.fish.count
        # the tank's grid (mirofish/grid.py): its view's cells, its headings and actions
        grid = grid_of(self.cfg.world.grid)
        cells = grid.window_cells(self.cfg.perception.radius)[0].size
        self.n_actions = N_ACTIONS = grid.n_actions
        top = float(self.cfg.top_energy())
        self.single_observation_space = spaces.Dict({
            "view": spaces.Box(0, V_FISH + grid.n_moves - 1, (n, cells), np.int8),
            "energy": spaces.Box(0.0, top, (n,), np.float32),
            "heading": spaces.Box(0, grid.n_moves - 1, (n,), np.int8),
            "food_here": spaces.MultiBinary(n),
        })
        self.single_action_space = spaces.MultiDiscrete(np.full(n, N_ACTIONS))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        # (tanks, fish) of Discrete(6): what batch_space makes of it, as a MultiDiscrete (its sample
        # is a few µs for 512 fish, a Box's about 35)
        self.action_space = spaces.MultiDiscrete(np.full((self.num_envs, n), N_ACTIONS))
        self._cells = cells
        self._ticks = np.zeros(self.num_envs, np.int64)
        self._seeds = np.zeros(self.num_envs, np.int64)
        self.tanks: list[_Tank | None] = [None] * self.num_envs
        self._first: list[int] = [0] * self.num_envs
        self._episode = np.zeros(self.num_envs, np.int64)  # since the last reset (the seeds)
        self._files = np.zeros(self.num_envs, np.int64)  # episodes recorded so far, per tank (the file names)
        self._ended = np.zeros(self.num_envs, bool)
        self._alive = np.ones((self.num_envs, n), bool)  # in the water (species: after the last step)
        self._closed = False
        # the tanks as one world (mirofish/batch.py), or None: they step one by one
        self.batch: Batch | None = None
        self._joinable = join and self.record is None

    def __enter__(self) -> VectorAquariumEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 — at interpreter exit: nothing left to tell
            pass

    # -- Gymnasium's vector API

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if self._closed:
            raise RuntimeError("reset() after close(): make a new environment")
        if seed is None:
            firsts = [(self.cfg.seed + i) % SEEDS for i in range(self.num_envs)]
        elif isinstance(seed, np.ndarray) or (isinstance(seed, Sequence) and not isinstance(seed, str | bytes)):
            if len(seed) != self.num_envs:
                raise ValueError(f"reset(seed=...): {len(seed)} seeds for {self.num_envs} tanks")
            firsts = [_bounded(s, "reset(seed=...)", 0, SEED_MAX) for s in seed]
        else:
            base = _bounded(seed, "reset(seed=...)", 0, SEED_MAX)
            firsts = [(base + i) % SEEDS for i in range(self.num_envs)]
        every = list(range(self.num_envs))
        self._refuse_existing(every)  # before any tank changes
        self.close_extras()
        self._first = firsts
        self._episode[:] = 0
        self._ended[:] = False
        for i in every:
            self._start(i)
        self._rejoin()
        return self._observe(), self._infos(np.full((self.num_envs, self.n_fish), -1, np.int8))

    def _rejoin(self) -> None:
        """After every tank (re)started: join them into one world when they may be."""
        self.batch = None
        if self._joinable and why_not(self.cfg) is None:  # (MIROFISH_TICK may have changed since: then one by one)
            self.batch = Batch([t._world for t in self.tanks if t is not None])
            for k, t in enumerate(self.tanks):
                assert t is not None
                t.joined = (self.batch, k)

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._closed:
            raise RuntimeError("step() after close(): make a new environment")
        if self.tanks[0] is None:
            raise RuntimeError("step() before reset(): call reset()")
        acts = self._check(actions)
        if self.batch is not None:
            return self._step_joined(acts)
        ended = self._ended
        if ended.any():
            self._refuse_existing(np.flatnonzero(ended).tolist())  # the tanks this step starts anew
        t, n = self.num_envs, self.n_fish
        rewards = np.zeros((t, n), np.float32)
        executed = np.full((t, n), -1, np.int8)
        terminated, truncated = np.zeros(t, bool), np.zeros(t, bool)
        was = self._alive.copy()
        obs = self._empty_obs()
        for i, tank in enumerate(self.tanks):
            assert tank is not None
            if ended[i]:  # the step after its episode ended: a new episode, these actions ignored
                self._episode[i] += 1
                self._start(i)
                ended[i] = False
                self._observe_tank(i, obs)
                was[i] = self._alive[i]  # its new episode's fish: none born or died this step
                continue
            before = tank.world.school.energy.copy()
            executed[i] = tank.step(acts[i])
            np.subtract(tank.world.school.energy, before, out=before)
            np.multiply(before, 0.01, out=rewards[i], casting="unsafe")
            if self.species:  # a fish out of the water before the step (gone, or born in it): reward 0
                rewards[i][~was[i]] = 0.0
            if self.species and not np.count_nonzero(~tank.world.school.absent):
                terminated[i] = ended[i] = True  # no fish left in the water: the tank's episode is over
            elif tank.steps >= self.max_steps:
                truncated[i] = ended[i] = True
            self._observe_tank(i, obs)
            if ended[i]:
                tank.close()
        return obs, rewards, terminated, truncated, self._infos(executed, was)

    def _step_joined(self, acts: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray,
                                                       dict[str, Any]]:
        """:meth:`step` of joined tanks: every tank at once. Their episodes end together (each
        ends at ``max_steps``: joined tanks have no species), so the step after it starts every
        tank anew."""
        t, n, b = self.num_envs, self.n_fish, self.batch
        assert b is not None
        rewards = np.zeros((t, n), np.float32)
        terminated, truncated = np.zeros(t, bool), np.zeros(t, bool)
        if self._ended.any():  # (all of them) a new episode for each, these actions ignored
            self._episode += 1
            for i in range(t):
                self._start(i)
            self._ended[:] = False
            self._rejoin()
            return self._observe(), rewards, terminated, truncated, self._infos(np.full((t, n), -1, np.int8))
        s = b.school
        before = s.energy.copy()
        b.give(acts)
        executed = b.step().executed
        np.subtract(s.energy, before, out=before)
        np.multiply(before, 0.01, out=rewards.reshape(-1), casting="unsafe")
        for tank in self.tanks:
            assert tank is not None
            tank.steps += 1
        assert self.tanks[0] is not None
        if self.tanks[0].steps >= self.max_steps:
            truncated[:] = self._ended[:] = True
        obs = self._empty_obs()
        obs["view"].reshape(t * n, -1)[:] = b.codes
        np.multiply(s.energy, 0.01, out=obs["energy"].reshape(-1), casting="unsafe")
        obs["heading"].reshape(-1)[:] = s.heading
        np.not_equal(b.water.food_born[s.cell], NO_FOOD, out=obs["food_here"].reshape(-1))
        self._ticks[:] = b.tick
        return obs, rewards, terminated, truncated, self._infos(executed.reshape(t, n).copy())

    def close_extras(self, **kwargs: Any) -> None:
        for tank in self.tanks:
            if tank is not None:
                tank.close()

    def close(self, **kwargs: Any) -> None:
        """Finish every recording and release the tanks; the environment takes no more steps."""
        super().close(**kwargs)
        self._closed = True

    # -- the tanks

    def seed_of(self, tank: int, episode: int) -> int:
        """The seed of ``tank``'s ``episode``-th episode (0: the first) since the last reset."""
        return (self._first[tank] + episode * self.num_envs) % SEEDS

    def _path(self, i: int) -> Path | None:
        """Where tank ``i``'s next episode is recorded (None: not recorded)."""
        return None if self.record is None else self.record / f"tank{i}-ep{int(self._files[i])}.mirofish"

    def _refuse_existing(self, tanks: list[int]) -> None:
        """One ValueError, before anything changes, when a file these tanks would start exists."""
        if self.record is None or self.overwrite:
            return
        for i in tanks:
            path = self._path(i)
            if path is not None and (path.exists() or path.is_symlink()):
                raise ValueError(f"{os.fspath(path)} exists: the environment does not write over a recording "
                                 f"(pass overwrite=True, or record into another folder)")

    def _start(self, i: int) -> None:
        from .observe.recording import RecordingError

        self._seeds[i] = self.seed_of(i, int(self._episode[i]))
        path = self._path(i)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.tanks[i] = _Tank(self.cfg, self.seed_of(i, int(self._episode[i])), path, self.overwrite)
            except (OSError, RecordingError) as exc:
                raise ValueError(f"record={os.fspath(self.record or '')!r}: cannot record tank {i} there: "
                                 f"{exc}".replace("add --overwrite", "pass overwrite=True")) from None
            self._files[i] += 1
            return
        self.tanks[i] = _Tank(self.cfg, self.seed_of(i, int(self._episode[i])), None, self.overwrite)

    def _check(self, actions: Any) -> np.ndarray:
        shape, N_ACTIONS = (self.num_envs, self.n_fish), self.n_actions
        if isinstance(actions, np.ma.MaskedArray):
            raise TypeError("step(): a masked array hides actions; give a plain integer array")
        if not isinstance(actions, np.ndarray):
            try:
                actions = np.asarray(actions)
            except (TypeError, ValueError):
                raise TypeError(f"step() takes an integer array of shape {shape}, "
                                f"got {type(actions).__name__}") from None
        if actions.dtype.kind not in "iu":  # (bool is kind "b")
            raise TypeError(f"step(): actions must be integers (0..{N_ACTIONS - 1}), got dtype {actions.dtype}")
        if actions.shape != shape:
            raise ValueError(f"step(): actions of shape {actions.shape}, expected {shape} (tanks, fish)")
        if actions.dtype.kind == "u" and actions.dtype.itemsize == 8 and (actions >= 2**63).any():
            raise ValueError(f"step(): an action is out of range; the actions are 0..{N_ACTIONS - 1}")
        out: np.ndarray = actions.astype(np.int64, copy=False)
        if (out.view(np.uint64) >= N_ACTIONS).any():  # (a negative one reads as a huge one here)
            t, f = (int(v) for v in np.argwhere((out < 0) | (out >= N_ACTIONS))[0])
            raise ValueError(f"step(): tank {t} fish {f}: action {int(out[t, f])} is out of range; "
                             f"the actions are 0..{N_ACTIONS - 1}")
        return out

    def _empty_obs(self) -> dict[str, np.ndarray]:
        t, n = self.num_envs, self.n_fish
        return {"view": np.empty((t, n, self._cells), np.int8), "energy": np.empty((t, n), np.float32),
                "heading": np.empty((t, n), np.int8), "food_here": np.empty((t, n), bool)}

    def _observe_tank(self, i: int, obs: dict[str, np.ndarray]) -> None:
        """Tank ``i``'s observation into row ``i`` of ``obs``; its tick into the infos' ticks."""
        tank = self.tanks[i]
        assert tank is not None
        w = tank.world
        s = w.school
        obs["view"][i] = w.codes
        np.multiply(s.energy, 0.01, out=obs["energy"][i], casting="unsafe")
        obs["heading"][i] = s.heading
        np.not_equal(w.water.food_born[s.cell], NO_FOOD, out=obs["food_here"][i])
        self._ticks[i] = w.tick
        if self.species:  # a fish out of the water sees nothing and has nothing
            np.logical_not(s.absent, out=self._alive[i])
            gone = s.absent
            if gone.any():
                obs["view"][i][gone] = 0
                obs["energy"][i][gone] = 0.0
                obs["heading"][i][gone] = 0
                obs["food_here"][i][gone] = False

    def _observe(self) -> dict[str, np.ndarray]:
        obs = self._empty_obs()
        for i in range(self.num_envs):
            self._observe_tank(i, obs)
        return obs

    def _infos(self, executed: np.ndarray, was: np.ndarray | None = None) -> dict[str, Any]:
        out = {"tick": self._ticks.copy(), "executed": executed, "episode": self._episode.copy(),
               "seed": self._seeds.copy()}
        if self.species:  # which fish are in the water, and who left or came this step
            alive = self._alive.copy()
            out["alive"] = alive
            out["died"] = was & ~alive if was is not None else np.zeros_like(alive)
            out["born"] = ~was & alive if was is not None else np.zeros_like(alive)
        return out

    def state_hashes(self) -> list[str]:
        """Each tank's state hash now (the same as its own run's at this tick)."""
        return [tank.world.state_hash() if tank is not None else "" for tank in self.tanks]


def vector_env(num_envs: int, config: str | Path | Config | None = None, overrides: tuple[str, ...] | list[str] = (),
               max_steps: int = 1000, record: str | os.PathLike[str] | None = None, overwrite: bool = False,
               join: bool = True, **settings: Any) -> VectorAquariumEnv:
    """``num_envs`` tanks as one array environment: the config as :func:`mirofish.env.parallel_env`
    takes it (a file, a Config, ``--set``-style overrides, dotted settings), every tank the same
    but its seed."""
    if isinstance(config, Config):  # (as parallel_env takes one)
        if overrides or settings:
            raise ValueError("give overrides with a config file or None, not with a Config object")
        cfg = config
    else:
        cfg = _load(config, overrides, settings)
    return VectorAquariumEnv(cfg, num_envs, max_steps=max_steps, record=record, overwrite=overwrite, join=join)
