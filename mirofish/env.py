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
* **Episode end**: every agent is truncated after ``max_steps`` steps. In a tank with species
  (docs/species.md) a fish that starves or is caught is terminated and leaves ``agents``; it
  stays in every later step's dicts, terminated, with reward 0 (PettingZoo's
  ``parallel_api_test`` reads every agent it has seen live); a fish born joins ``agents`` and
  the dicts of the step it was born in, with reward 0 in it. The possible agents are every room a fish may be born
  into. Without species no fish dies: no terminations. (``vector_env``: arrays over every room, with
  ``infos['alive']``, ``['died']`` and ``['born']``.)
* **Seeds**: ``reset(seed=s)`` builds the tank of seed ``s`` (``seed=None``: the config's
  ``seed``), so the same seed and the same actions give the same tank, tick by tick.
* **Recording**: ``record=PATH`` records each episode (``PATH`` for the first, ``PATH``'s stem
  with ``-2``, ``-3``, … for later ones) as a normal recording: ``run.py replay PATH`` opens it in
  the window, ``replay PATH --headless --verify`` re-runs it and checks every keyframe. An
  existing file is refused unless ``overwrite=True``.

* **Inputs are checked** (the contract table of docs/environment.md): an action is a Python or numpy
  integer (or a 0-d numpy integer array) in ``0..5`` — a bool, float, string, bytes, ``Decimal``
  or ``Fraction`` is a ``TypeError``, a number out of range a ``ValueError``, each one line naming
  the agent and the value; ``step()`` takes a dict (else ``TypeError``) of known agents (else
  ``ValueError`` naming them). ``reset(seed=)`` takes None or an integer in ``0..2**63-1`` and
  ``max_steps`` an integer in ``1..2**63-1`` (bool refused). Config settings are checked strictly
  (an integer key takes an integer: not ``True``, ``"30"`` or ``30.0``), and a config path must be a
  regular file of at most 1 MB (a FIFO, a device or a directory is refused before reading).

Needs the optional extra ``[rl]`` (``pip install -e '.[rl]'``: pettingzoo, gymnasium).
"""

from __future__ import annotations

import os
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .brains.prompt import fish_message, system_prompt
from .brains.prompts import load_prompt
from .config import Config
from .env_inputs import CONFIG_MAX_BYTES, SEED_MAX, EnvSource, _bounded, _flag, _load, _show, env_session
from .fish.perception import V_FISH
from .fish.plantypes import switches_on
from .fish.triggers import trigger_name
from .grid import grid_of
from .water import NO_FOOD

try:
    from gymnasium import spaces
    from pettingzoo import ParallelEnv
except ImportError as exc:  # pragma: no cover - the extra is installed with dev
    raise ImportError("mirofish.env needs the optional extra [rl]: pip install -e '.[rl]' "
                      f"(pettingzoo and gymnasium; {exc})") from None

from .vector import VectorAquariumEnv, vector_env

TEXT_CHARSET = string.printable  # every character a fish's message holds (personas and views are ASCII)
TEXT_MAX = 4096


class AquariumEnv(ParallelEnv):
    """The aquarium as a PettingZoo ``ParallelEnv`` (see the module's docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"name": "mirofish_aquarium_v0", "render_modes": []}

    def __init__(self, cfg: Config, max_steps: int = 1000, text: bool = False, record: str | Path | None = None,
                 overwrite: bool = False):
        if not isinstance(cfg, Config):
            raise TypeError(f"cfg must be a mirofish.config.Config, got {type(cfg).__name__} (use parallel_env())")
        self.max_steps = _bounded(max_steps, "max_steps", 1, SEED_MAX)
        self.text, self.overwrite = _flag(text, "text"), _flag(overwrite, "overwrite")
        if record is not None and not isinstance(record, str | os.PathLike):
            raise TypeError(f"record must be a path or None, got {_show(record)} ({type(record).__name__})")
        if record is not None and not os.fspath(record):
            raise ValueError("record must be a file path, got an empty string")
        self.record = Path(record) if record is not None else None
        self.cfg = cfg.model_copy(update={"brain": cfg.brain.model_copy(update={"decides": "action"})})
        # a tank with species (docs/species.md): every room a fish may be born into is a possible
        # agent; the agents are the fish in the water, a fish that leaves is terminated
        self.species = any(g.species_rules for g in self.cfg.fish.groups)
        n = self.cfg.fish.slots if self.species else self.cfg.fish.count
        self.possible_agents = [f"fish_{i}" for i in range(n)]
        self.agents: list[str] = []
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        # the tank's grid (mirofish/grid.py): its view's cells, its headings and actions
        self.grid = grid = grid_of(self.cfg.world.grid)
        cells = grid.window_cells(self.cfg.perception.radius)[0].size
        top = float(self.cfg.top_energy())
        obs: dict[str, spaces.Space[Any]] = {
            "view": spaces.Box(0, V_FISH + grid.n_moves - 1, (cells,), np.int8),
            "energy": spaces.Box(0.0, top, (1,), np.float32),
            "heading": spaces.Discrete(grid.n_moves),
            "food_here": spaces.Discrete(2),
        }
        if self.text:
            obs["text"] = spaces.Text(max_length=TEXT_MAX, min_length=0, charset=TEXT_CHARSET)
        self._obs_space = spaces.Dict(obs)
        self._act_space = spaces.Discrete(grid.n_actions)
        self.prompt = load_prompt(self.cfg.brain.prompt)
        # the legend of what the fish's text shows (P a plant, X a hunter, ? out of sight) and its view's side
        shown = (*switches_on(self.cfg), *(("sight",) if self.cfg.view_radii() else ()))
        self.system_prompt = system_prompt(plans=False, tendency=self.cfg.brain.tendency, prompt=self.prompt,
                                           shown=shown, side=2 * self.cfg.perception.radius + 1)
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
        if seed is not None:
            seed = _bounded(seed, "reset(seed=...)", 0, SEED_MAX)
        self.close()
        cfg = self.cfg if seed is None else self.cfg.model_copy(update={"seed": seed})
        self.episode += 1
        path = None
        if self.record is not None:
            path = self.record if self.episode == 1 else self.record.with_name(
                f"{self.record.stem}-{self.episode}{self.record.suffix}")
        self.session, self.source = env_session(cfg, path, self.overwrite)
        self.steps = 0
        self.agents = self._in_water()
        self._seen = list(self.agents)  # every agent live this episode (species: the dead stay, terminated)
        infos = {a: {"tick": self.session.tick, "executed": -1} for a in self.agents}
        return self._observe(), infos

    def _in_water(self) -> list[str]:
        """The possible agents in the water now (all of them in a tank without species)."""
        if not self.species:
            return list(self.possible_agents)
        absent = self.session.world.school.absent
        return [a for i, a in enumerate(self.possible_agents) if not absent[i]]

    def step(self, actions: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, float], dict[str, bool],
                                                        dict[str, bool], dict[str, Any]]:
        if self.session is None or not self.agents:
            raise RuntimeError("step() before reset(), or after the episode ended: call reset()")
        given = self._actions(actions)  # every action checked before any is applied
        src, world = self.source, self.session.world
        src.actions[:] = self.grid.rest
        for i, a in given.items():
            src.actions[i] = a
        absent = world.school.absent
        src.present = ~absent if np.count_nonzero(absent) else None
        absent_before = absent.copy()
        before = world.school.energy.astype(np.int64)
        engine = self.session.engine
        engine.queued_at[:] = engine.clock()  # the actions are given now: a decision latency of ~0
        frame = self.session.step()
        self.steps += 1
        gained = (world.school.energy.astype(np.int64) - before) / 100.0
        done = self.steps >= self.max_steps
        tick = frame.tick
        if self.species:  # starved or caught: terminated (and stays so); born: live from this step
            now = self._in_water()
            alive = set(now)
            self._seen += [a for a in now if a not in set(self._seen)]
            agents = self._seen
            self.agents = now
        else:
            agents, alive = self.agents, set(self.agents)
        # a fish out of the water before this step (gone earlier, or born in it) has no energy change
        # to be rewarded for: 0 (its room's bookkeeping keeps ticking, no fish's)
        was_in = ~absent_before if self.species else None
        rewards = {a: float(gained[self._index[a]]) if was_in is None or was_in[self._index[a]] else 0.0
                   for a in agents}
        terminations = {a: a not in alive for a in agents}
        truncations = {a: done and a in alive for a in agents}
        executed = frame.executed.tolist()
        infos = {a: {"tick": tick, "executed": executed[self._index[a]]} for a in agents}
        observations = self._observe(agents)
        if done:
            self.agents = []
            if self.session.recorder is not None:
                self.session.stop_recording()
        return observations, rewards, terminations, truncations, infos

    def _actions(self, actions: Any) -> dict[int, int]:
        """``{fish index: action}`` from a step's dict; a one-line TypeError or ValueError naming the
        agent and the value for anything that is not one of the agents' actions."""
        if not isinstance(actions, Mapping):
            raise TypeError(f"step() takes a dict of agent name → action, got {_show(actions)} "
                            f"({type(actions).__name__})")
        unknown = [agent for agent in actions if not isinstance(agent, str) or agent not in self._index]
        if unknown:
            shown = ", ".join(_show(agent, 40) for agent in unknown[:5]) + (" …" if len(unknown) > 5 else "")
            raise ValueError(f"step(): unknown agent{'s' * (len(unknown) > 1)} {shown} "
                             f"(the agents are {self.possible_agents[0]} … {self.possible_agents[-1]})")
        top = int(self._act_space.n) - 1
        out: dict[int, int] = {}
        for agent, action in actions.items():
            value = action
            if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.integer):
                value = value[()]  # a 0-d integer array: its one integer
            if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
                raise TypeError(f"{agent}: action {_show(action)} ({type(action).__name__}) is not an integer; "
                                f"give an int in 0..{top}")
            a = int(value)
            if not 0 <= a <= top:
                raise ValueError(f"{agent}: action {_show(a)} is out of range; the actions are 0..{top}")
            out[self._index[agent]] = a
        return out

    def render(self) -> None:
        """No render mode: record the episode (``record=``) and open it with ``run.py replay``."""
        return None

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    # -- observations

    def _observe(self, agents: list[str] | None = None) -> dict[str, Any]:
        """The observations of ``agents`` (default: the agents now)."""
        wanted = set(self.agents if agents is None else agents)
        w = self.session.world
        s = w.school
        n = s.n
        codes = w.view_codes(np.arange(n)).astype(np.int8)
        energy = (s.energy.astype(np.float32) / 100.0).reshape(n, 1)
        heading = s.heading.astype(np.int64)
        food = (w.water.food_born[s.cell] != NO_FOOD).astype(np.int64)
        out: dict[str, Any] = {
            a: {"view": v, "energy": e, "heading": h, "food_here": f}
            for a, v, e, h, f in zip(self.possible_agents, codes, energy, heading.tolist(), food.tolist())
            if a in wanted}
        if self.text:
            triggers = w.triggers()
            for i, a in enumerate(self.possible_agents):
                if a not in out:
                    continue
                msg = fish_message(w.perceive(i), s.persona[i], trigger_name(int(triggers[i]))
                                   if triggers[i] >= 0 else "your turn", None, self.cfg.brain.prompt_memories,
                                   self.cfg.brain.prompt_summaries, self.prompt, self.cfg.brain.memory_tokens)
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
        ConfigError: a bad config value, file or path, one line naming it (a ``ValueError``). Setting
            types are checked strictly: an integer key takes an integer (not ``True``, ``"30"``
            or ``30.0``), a number key a number, a true/false key a bool. The config path must be a
            regular file of at most 1 MB.
        TypeError: an argument of the wrong type, one line naming it.
        ValueError: ``max_steps`` out of ``1..2**63-1``.
    """
    if isinstance(config, Config):
        if overrides or settings:
            raise ValueError("give overrides with a config file or None, not with a Config object")
        cfg = config
    else:
        cfg = _load(config, overrides, settings)
    return AquariumEnv(cfg, max_steps=max_steps, text=text, record=record, overwrite=overwrite)


__all__ = ["CONFIG_MAX_BYTES", "AquariumEnv", "EnvSource", "VectorAquariumEnv", "parallel_env", "vector_env"]
