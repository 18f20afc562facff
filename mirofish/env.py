"""The aquarium as a standard multi-agent environment: a PettingZoo ``ParallelEnv`` (docs/environment.md).

    from mirofish.env import parallel_env

    env = parallel_env(max_steps=500, **{"fish.count": 30})
    observations, infos = env.reset(seed=7)
    while env.agents:
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    env.close()

* **Agents**: ``fish_0`` … ``fish_{n-1}``, every fish of the tank (``fish.count`` of the config).
* **Action**: ``Discrete(6)``, the six actions of :class:`~mirofish.actions.Action` (0 move_n,
  1 move_s, 2 move_w, 3 move_e, 4 eat, 5 rest). Each step every fish acts on the action it is
  given — the world's physics and arbiter decide what happens (a move into glass is blocked, two
  fish wanting one cell: one gets it). A fish left out of the actions dict rests.
* **Observation**: a ``Dict`` with ``view`` (the fish's 5×5 view as ``side²`` codes, ``int8``:
  0 water, 1 glass/rock, 2 food, 3 the fish itself, 4–7 another fish facing north/south/west/east
  — ``mirofish.fish.perception.VIEW_CHARS``), ``energy`` (``Box(0, max, (1,), float32)``, in the
  config's units), ``heading`` (``Discrete(4)``: north, south, west, east) and ``food_here``
  (``Discrete(2)``); with ``text=True`` also ``text``: the per-fish message the model brain
  would send in action mode (persona, view, energy, memories — :func:`~mirofish.brains.prompt.fish_message`);
  its shared system prompt is :attr:`AquariumEnv.system_prompt`.
* **Reward**: the fish's energy change over the step (energy units: food gives
  ``food.energy``, 40 by default; each tick costs ``fish.tick_cost``, a move ``fish.move_cost``).
  ``infos[agent]`` holds the action the world executed (``executed``: -1 when it did nothing) and
  the tick.
* **Episode end**: no fish dies, so there are no terminations; every agent is truncated after
  ``max_steps`` steps.
* **Seeds**: ``reset(seed=s)`` builds the tank of seed ``s`` (``seed=None``: the config's
  ``seed``), so the same seed and the same actions give the same tank, tick by tick.
* **Recording**: ``record=PATH`` records each episode (``PATH`` for the first, ``PATH``'s stem
  with ``-2``, ``-3``, … for later ones) as a normal recording: ``run.py replay PATH`` opens it in
  the window, ``replay PATH --headless --verify`` re-runs it and checks every keyframe. An
  existing file is refused unless ``overwrite=True``.

Needs the optional extra ``[rl]`` (``pip install -e '.[rl]'``: pettingzoo, gymnasium).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .actions import N_ACTIONS
from .brains.base import TIER_INDEX, DecisionBatch, DecisionSource
from .brains.prompt import fish_message, system_prompt
from .brains.prompts import load_prompt
from .config import Config, load_config
from .fish.plans import G_HOLD
from .fish.triggers import trigger_name
from .water import NO_FOOD

try:
    from gymnasium import spaces
    from pettingzoo import ParallelEnv
except ImportError as exc:  # pragma: no cover - the extra is installed with dev
    raise ImportError("mirofish.env needs the optional extra [rl]: pip install -e '.[rl]' "
                      f"(pettingzoo and gymnasium; {exc})") from None

REST = N_ACTIONS - 1
TEXT_CHARSET = string.printable  # every character a fish's message holds (personas and views are ASCII)
TEXT_MAX = 4096


class EnvSource(DecisionSource):
    """The decision source of the environment: each tick it hands the engine the actions of the
    step being taken (tier ``user``), for every fish in the water. The engine builds no requests."""

    name = "env"
    needs_requests = False

    def __init__(self, n: int):
        super().__init__()
        self.fish = np.arange(n, dtype=np.int64)
        self.actions = np.full(n, REST, np.int64)
        self.tier = np.full(n, TIER_INDEX["user"], np.int8)
        self.present: np.ndarray | None = None

    school: Any = None  # the world's school (set by the env at reset)

    def begin_tick(self, tick: int) -> None:
        s = self.school
        # a fish whose action is the one it holds keeps its standing plan: no new decision
        change = (s.plan_goal != G_HOLD) | (s.plan_param != self.actions)
        if self.present is not None:
            change &= self.present
        pick = np.flatnonzero(change)
        if pick.size:
            self.results.put(DecisionBatch(tick=tick, fish=pick, actions=self.actions[pick], tier=self.tier[pick]))

    def status(self) -> dict[str, Any]:
        return {"source": self.name}


class AquariumEnv(ParallelEnv):
    """The aquarium as a PettingZoo ``ParallelEnv`` (see the module's docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"name": "mirofish_aquarium_v0", "render_modes": []}

    def __init__(self, cfg: Config, max_steps: int = 1000, text: bool = False, record: str | Path | None = None,
                 overwrite: bool = False):
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1 (got {max_steps})")
        self.cfg = cfg.model_copy(update={"brain": cfg.brain.model_copy(update={"decides": "action"})})
        self.max_steps, self.text, self.overwrite = int(max_steps), bool(text), bool(overwrite)
        self.record = Path(record) if record is not None else None
        n = self.cfg.fish.count
        self.possible_agents = [f"fish_{i}" for i in range(n)]
        self.agents: list[str] = []
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        side = 2 * self.cfg.perception.radius + 1
        top = float(self.cfg.fish.max_energy)
        obs: dict[str, spaces.Space[Any]] = {
            "view": spaces.Box(0, 7, (side * side,), np.int8),
            "energy": spaces.Box(0.0, top, (1,), np.float32),
            "heading": spaces.Discrete(4),
            "food_here": spaces.Discrete(2),
        }
        if self.text:
            obs["text"] = spaces.Text(max_length=TEXT_MAX, min_length=0, charset=TEXT_CHARSET)
        self._obs_space = spaces.Dict(obs)
        self._act_space = spaces.Discrete(N_ACTIONS)
        self.prompt = load_prompt(self.cfg.brain.prompt)
        self.system_prompt = system_prompt(plans=False, tendency=self.cfg.brain.tendency, prompt=self.prompt)
        self.session: Any = None
        self.episode = 0
        self.steps = 0

    # -- the PettingZoo API

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        from .session.live import LiveSession

        self.close()
        cfg = self.cfg if seed is None else self.cfg.model_copy(update={"seed": int(seed)})
        self.source = EnvSource(cfg.fish.count)
        self.session = LiveSession(cfg, mode="lockstep", source=self.source)
        self.source.school = self.session.world.school
        # lean observers: the tank's metrics stay; word-and-deed (a policy's actions carry no words)
        # and the follow panel's decision history are left to a replay of the recording
        self.session.metrics.judge_words = False
        self.session.engine.observers.remove(self.session.history.observe)
        self.episode += 1
        if self.record is not None:
            path = self.record if self.episode == 1 else self.record.with_name(
                f"{self.record.stem}-{self.episode}{self.record.suffix}")
            self.session.start_recording(path, overwrite=self.overwrite,
                                         extra_header={"decided_by": "env policy"})
        self.steps = 0
        self.agents = list(self.possible_agents)
        infos = {a: {"tick": self.session.tick, "executed": -1} for a in self.agents}
        return self._observe(), infos

    def step(self, actions: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, float], dict[str, bool],
                                                        dict[str, bool], dict[str, Any]]:
        if self.session is None or not self.agents:
            raise RuntimeError("step() before reset(), or after the episode ended: call reset()")
        src, world = self.source, self.session.world
        src.actions[:] = REST
        for agent, action in actions.items():
            i = self._index.get(agent)
            if i is None:
                raise KeyError(f"unknown agent {agent!r}")
            a = int(action)
            if not 0 <= a < N_ACTIONS:
                raise ValueError(f"{agent}: action {a} is not one of 0..{N_ACTIONS - 1}")
            src.actions[i] = a
        absent = world.school.absent
        src.present = ~absent if np.count_nonzero(absent) else None
        before = world.school.energy.astype(np.int64)
        engine = self.session.engine
        engine.queued_at[:] = engine.clock()  # the actions are given now: a decision latency of ~0
        frame = self.session.step()
        self.steps += 1
        gained = (world.school.energy.astype(np.int64) - before) / 100.0
        done = self.steps >= self.max_steps
        agents, tick = self.agents, frame.tick
        rewards = dict(zip(agents, gained.tolist()))
        terminations = dict.fromkeys(agents, False)
        truncations = dict.fromkeys(agents, done)
        infos = {a: {"tick": tick, "executed": e} for a, e in zip(agents, frame.executed.tolist())}
        observations = self._observe()
        if done:
            self.agents = []
            if self.session.recorder is not None:
                self.session.stop_recording()
        return observations, rewards, terminations, truncations, infos

    def render(self) -> None:
        """No render mode: record the episode (``record=``) and open it with ``run.py replay``."""
        return None

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    # -- observations

    def _observe(self) -> dict[str, Any]:
        w = self.session.world
        s = w.school
        n = s.n
        codes = w.view_codes(np.arange(n)).astype(np.int8)
        energy = (s.energy.astype(np.float32) / 100.0).reshape(n, 1)
        heading = s.heading.astype(np.int64)
        food = (w.water.food_born[s.cell] != NO_FOOD).astype(np.int64)
        out: dict[str, Any] = {
            a: {"view": v, "energy": e, "heading": h, "food_here": f}
            for a, v, e, h, f in zip(self.possible_agents, codes, energy, heading.tolist(), food.tolist())}
        if self.text:
            triggers = w.triggers()
            for i, a in enumerate(self.possible_agents):
                msg = fish_message(w.perceive(i), s.persona[i], trigger_name(int(triggers[i]))
                                   if triggers[i] >= 0 else "your turn", None, self.cfg.brain.prompt_memories,
                                   self.cfg.brain.prompt_summaries, self.prompt)
                out[a]["text"] = "".join(ch if ch in _CHARSET else "?" for ch in msg)[:TEXT_MAX]
        return out


_CHARSET = frozenset(TEXT_CHARSET)


def parallel_env(config: str | Path | Config | None = None, overrides: tuple[str, ...] | list[str] = (),
                 max_steps: int = 1000, text: bool = False, record: str | Path | None = None,
                 overwrite: bool = False, **settings: Any) -> AquariumEnv:
    """The aquarium as a PettingZoo ``ParallelEnv``.

    Args:
        config: a tank file (TOML, as ``run.py live --config``), a :class:`~mirofish.config.Config`,
            or None for the default tank.
        overrides: ``section.key=value`` strings, as ``--set``.
        max_steps: steps per episode (every agent is truncated after them).
        text: add the model brain's per-fish message to each observation (slower).
        record: record each episode at this path (see the module's docstring).
        overwrite: replace an existing recording.
        settings: dotted config keys, e.g. ``**{"fish.count": 30}``.

    Raises:
        ConfigError: a bad config value, one line naming it.
    """
    cfg = config if isinstance(config, Config) else load_config(config, list(overrides), **settings)
    if isinstance(config, Config) and (overrides or settings):
        raise ValueError("give overrides with a config file or None, not with a Config object")
    return AquariumEnv(cfg, max_steps=max_steps, text=text, record=record, overwrite=overwrite)
