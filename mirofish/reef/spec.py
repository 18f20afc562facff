"""A reef file (TOML): the tanks, the corridors between them, the interval.

::

    interval = 20                  # ticks between exchanges = a corridor's transit time
    ticks = 2000                   # how long `run.py reef` runs (default)
    [[tanks]]
    name = "north"                 # unique; the tanks' order is the reef's
    seed = 1
    preset = "schooling-demo"      # optional, as live --preset
    set = {"fish.count" = 40}      # optional config keys, as live --set
    [[corridors]]
    a = "north"; side_a = "east"   # an opening in north's east glass …
    b = "south"; side_b = "west"   # … joined to south's west glass
    at_a = 0.5; at_b = 0.5         # where along that side (0 … 1; default the middle)
    width = 6                      # cells of glass the opening spans (default 6)

A fish that swims onto a water cell by an opening, moving toward the glass there, swims into
the corridor and leaves its tank; it
arrives in the other tank ``interval`` ticks later, at the other opening (or the free water
nearest it). Every tank keeps room for ``room`` fish besides its own (default: a fifth of its
own, at least 5 — room costs a little at every tick, as the tick steps every slot); a migrant
that finds no room waits in the corridor and tries again at each exchange.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..config import Config, ConfigError, load_config

SIDES = ("north", "south", "west", "east")
MAX_REEF_BYTES = 4_000_000


class TankSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)  # strict: `ticks = true` is not 1

    name: str = Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_-]+$")
    seed: int = Field(1, ge=0, le=2**31 - 1)
    preset: str | None = None
    set: dict[str, Any] = Field(default_factory=dict)
    room: int | None = Field(None, ge=0, le=10_000)


class CorridorSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    a: str
    b: str
    side_a: Literal["north", "south", "west", "east"]
    side_b: Literal["north", "south", "west", "east"]
    at_a: float = Field(0.5, ge=0, le=1)
    at_b: float = Field(0.5, ge=0, le=1)
    width: int = Field(6, ge=1, le=1000)  # cells of glass the opening spans


class ReefSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    interval: int = Field(20, ge=1, le=10_000)
    ticks: int = Field(2000, ge=1, le=10_000_000)
    tanks: list[TankSpec] = Field(min_length=1, max_length=4096)
    corridors: list[CorridorSpec] = Field(default_factory=list, max_length=100_000)

    @model_validator(mode="after")
    def _names(self) -> ReefSpec:
        names = [t.name for t in self.tanks]
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"tank names must be unique: {', '.join(twice)}")
        for c in self.corridors:
            for end in (c.a, c.b):
                if end not in names:
                    raise ValueError(f"corridor {c.a}-{c.b}: no tank named {end!r}")
            if c.a == c.b:
                raise ValueError(f"corridor {c.a}-{c.b}: joins a tank to itself")
        return self

    def index(self, name: str) -> int:
        return [t.name for t in self.tanks].index(name)


def tank_config(spec: ReefSpec, i: int) -> Config:
    """Tank ``i``'s config: its preset and settings, its seed, and room for migrants."""
    t = spec.tanks[i]
    # the values as the reef file gave them (never through text: a string keeps its quotes and backslashes)
    settings = {k: v for k, v in t.set.items() if k != "seed"}
    base = load_config(preset=t.preset, **{**settings, "seed": t.seed})
    room = t.room if t.room is not None else max(5, base.fish.count // 5)
    return load_config(preset=t.preset, **{**settings, "seed": t.seed, "fish.spare": base.fish.spare + room})


def load_reef(path: str | Path) -> ReefSpec:
    """Read and check a reef file; :class:`ConfigError` (one line) naming the problem."""
    p = Path(path)
    try:
        if p.exists() and not p.is_file():
            raise ConfigError(f"reef file {p}: not a regular file")
        with open(p, "rb") as fh:  # a bounded read: /dev/zero or a huge file is refused, not read
            raw = fh.read(MAX_REEF_BYTES + 1)
        if len(raw) > MAX_REEF_BYTES:
            raise ConfigError(f"reef file {p}: larger than {MAX_REEF_BYTES // 1_000_000} MB "
                              "(a reef file is a few lines)")
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"reef file {p}: not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"reef file {p}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"reef file {p}: not TOML ({exc})") from None
    try:
        spec = ReefSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "reef"
        raise ConfigError(f"reef file {p}: {where}: {err['msg']}") from None
    for i in range(len(spec.tanks)):  # every tank's settings are checked before anything runs
        try:
            tank_config(spec, i)
        except ConfigError as exc:
            raise ConfigError(f"reef file {p}: tank {spec.tanks[i].name}: {exc}") from None
    return spec
