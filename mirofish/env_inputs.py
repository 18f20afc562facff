"""What both environments share (mirofish.env's ``parallel_env`` and the array ``vector_env``): the
decision source that hands the engine a step's actions, the one-line checks of what a caller
gives (integers, flags, bounds) and the strict reading of a tank's config (a file, ``--set``
strings, dotted settings). Imports neither pettingzoo nor gymnasium."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from .actions import N_ACTIONS
from .brains.base import TIER_INDEX, DecisionBatch, DecisionSource
from .config import READ_FILES, Config, ConfigError, _deep_merge, _format_error, load_config, parse_override, presets
from .fish.plans import changed_plans
from .grid import grid_of

REST = N_ACTIONS - 1
SEED_MAX = 2**63 - 1  # seeds and max_steps: what the tank's RNG and counters hold
CONFIG_MAX_BYTES = 1 << 20  # a tank file is a few kB; a bigger one is not a tank file


def _show(value: Any, width: int = 60) -> str:
    """``value``'s repr on one short line (never raises: a repr that fails shows the type)."""
    if isinstance(value, int) and value.bit_length() > 128:
        return f"<an int of {value.bit_length()} bits>"  # (its repr may be refused: the int digit limit)
    try:
        text = " ".join(repr(value).split())
    except Exception:  # noqa: BLE001 — a caller's object with a broken __repr__ (or a huge int) is named by type
        text = f"<{type(value).__name__}>"
    return text if len(text) <= width else text[:width - 1] + "…"


def _integer(value: Any, what: str) -> int:
    """``value`` as an int when it is a Python or numpy integer (not a bool); else a one-line TypeError."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{what} must be an integer, got {_show(value)} ({type(value).__name__})")
    return int(value)


def _bounded(value: Any, what: str, low: int, high: int) -> int:
    n = _integer(value, what)
    if not low <= n <= high:
        raise ValueError(f"{what} must be in {low}..{high}, got {_show(n)}")
    return n


def _flag(value: Any, what: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{what} must be True or False, got {_show(value)} ({type(value).__name__})")
    return bool(value)


def env_session(cfg: Config, record: Path | None = None, overwrite: bool = False) -> tuple[Any, EnvSource]:
    """A lockstep session stepped by an environment's actions, and its source: the tank's
    metrics stay; word-and-deed (a policy's actions carry no words) and the follow panel's
    decision history are left to a replay of the recording; ``record``: recorded there."""
    from .session.live import LiveSession

    source = EnvSource(cfg.fish.slots)  # every room (spare, a species' young): absent ones are asked nothing
    source.actions[:] = grid_of(cfg.world.grid).rest  # (its tank's rest: mirofish/grid.py)
    session = LiveSession(cfg, mode="lockstep", source=source)
    source.school = session.world.school
    session.metrics.judge_words = False
    session.engine.observers.remove(session.history.observe)
    if record is not None:
        session.start_recording(record, overwrite=overwrite, extra_header={"decided_by": "env policy"})
    return session, source


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
        change = changed_plans(self.school, self.actions)
        if self.present is not None:
            change &= self.present
        pick = np.flatnonzero(change)
        if pick.size:
            self.results.put(DecisionBatch(tick=tick, fish=pick, actions=self.actions[pick], tier=self.tier[pick]))

    def status(self) -> dict[str, Any]:
        return {"source": self.name}


def _plain(value: Any) -> Any:
    """numpy scalars as Python values, tuples as lists (what a TOML file gives), all the way down."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _patch(keys: list[str], value: Any) -> dict[str, Any]:
    patch: dict[str, Any] = {keys[-1]: value}
    for k in reversed(keys[:-1]):
        patch = {k: patch}
    return patch


def _load(config: Any, overrides: Any, settings: dict[str, Any]) -> Config:
    """The tank's config from a file (or None), ``--set`` strings and dotted settings, layered on the
    defaults as :func:`~mirofish.config.load_config` does, and validated strictly: every value given
    must be of its key's type (pydantic's lax mode, which load_config uses, reads ``True`` as 1 and
    ``"30"`` as 30)."""
    if config is not None and not isinstance(config, str | os.PathLike):
        raise TypeError(f"config must be a tank file path, a Config or None, got {_show(config)} "
                        f"({type(config).__name__})")
    if isinstance(overrides, str | bytes) or not isinstance(overrides, list | tuple):
        raise TypeError(f"overrides must be a list of 'section.key=value' strings, got {_show(overrides)} "
                        f"({type(overrides).__name__})")
    settings = dict(settings)
    preset = settings.pop("preset", None)  # load_config's preset keyword, as parallel_env passed it on before
    if isinstance(config, str) and preset is None and config in presets() and not Path(config).exists():
        config, preset = None, config  # a preset's name (assets/presets), as the command line's --preset
    given: dict[str, Any] = _read_config(Path(config)) if config is not None else {}
    for text in overrides:
        if not isinstance(text, str):
            raise TypeError(f"an override must be a 'section.key=value' string, got {_show(text)} "
                            f"({type(text).__name__})")
        given = _deep_merge(given, _patch(*parse_override(text)))
    for dotted, value in settings.items():
        if value is not None:  # None: leave the key as it is (load_config's rule)
            given = _deep_merge(given, _patch(dotted.split("."), _plain(value)))
    base = load_config(None, (), preset=preset).model_dump()  # the defaults (and preset): valid, strict-clean
    try:
        return Config.model_validate(_deep_merge(base, given), strict=True)
    except ValidationError as exc:
        raise ConfigError(_format_error(exc)) from None


_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(mode: int) -> str:
    return next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")


def _read_config(path: Path) -> dict[str, Any]:
    """A tank file's TOML, read only when it is a regular file of at most ``CONFIG_MAX_BYTES`` (a FIFO
    or a device would block or never end) and at most that many bytes read."""
    shown = _show(os.fspath(path), 200)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {shown}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise ConfigError(f"cannot read config file {shown}: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"config path {shown} is {_not_regular(st.st_mode)}, not a regular file")
    if st.st_size > CONFIG_MAX_BYTES:
        raise ConfigError(f"config file {shown} is {st.st_size} bytes; a tank file is at most {CONFIG_MAX_BYTES}")
    try:
        # non-blocking: a path swapped for a FIFO since the stat does not hang the open
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise ConfigError(f"config path {shown} is {_not_regular(mode)}, not a regular file")
            data = fh.read(CONFIG_MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {shown}: {exc.strerror}") from None
    if len(data) > CONFIG_MAX_BYTES:
        raise ConfigError(f"config file {shown} is over {CONFIG_MAX_BYTES} bytes; a tank file is at most that")
    try:
        READ_FILES.add(path.resolve())  # a config read: never an output (as load_config's files)
    except OSError:
        pass
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"config file {shown} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {shown} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"config file {shown} is nested too deeply") from None
