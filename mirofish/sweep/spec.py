"""A sweep file (TOML) and its expansion into runs.

```toml
scene = "aquarium"            # any scene that sweeps: aquarium | referential | negotiation | a plug-in's
length = 2000                 # ticks (aquarium), rounds (referential), sessions (negotiation)
seeds = [1, 2, 3]             # or {from = 1, count = 5}
preset = "schooling-demo"     # aquarium only, optional
metrics = ["metrics.school_moving.mean"]   # figures for the table and plots (default: the scene's)

[params]                      # any config key (aquarium: section.key; referential: a game
"food.spawn_rate" = [0.0002, 0.0005]       # setting; negotiation: repair, layers): a list, or
"fish.count" = {from = 20, to = 60, step = 20}   # a range (to included)
"steering.alignment,steering.cohesion" = [[5, 3], [0, 3], [0, 0]]   # keys that vary together

[sample]                      # optional: a seeded random sample of the grid instead of all of it
count = 10
seed = 0
```

Every run is one headless run with its own settings and seed, reproducible on its own: its
row carries the single command that gives the same summary.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..files import CONFIG_LIMIT, read_toml_bounded
from ..scenes.registry import SweepHooks


def hooks(scene: str) -> SweepHooks:
    """The sweep hooks of ``scene`` (scenes/registry.py); ValueError naming the scenes that sweep."""
    from ..scenes.registry import SceneError, with_part

    able = {s.name: s for s in with_part("sweep")}
    if scene not in able:
        raise ValueError(f"scene {scene!r} does not sweep; the scenes that do: {', '.join(able)}")
    try:
        found: SweepHooks = able[scene].part("sweep")
    except SceneError as exc:
        raise ValueError(str(exc)) from None
    return found


MAX_SETTINGS = 100_000  # settings in a grid (computed before anything is built)
MAX_RUNS = 100_000  # settings × seeds
MAX_LENGTH = 2**31 - 1  # ticks, rounds or sessions: the CLI's own bound
MAX_SEED = 2**63 - 1


class SpecError(ValueError):
    """A sweep file that cannot be run; the message is one line naming the problem."""


class Range(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    start: float = Field(alias="from")
    to: float
    step: float = Field(gt=0)

    @model_validator(mode="after")
    def _finite(self) -> Range:
        if not all(math.isfinite(v) for v in (self.start, self.to, self.step)):
            raise ValueError("from, to and step must be finite numbers")
        if self.size() < 1:  # (said here, where the file's key is known: params.KEY: …)
            raise ValueError(f"from {self.start:g} to {self.to:g} is empty (to is below from)")
        if self.size() > MAX_SETTINGS:
            raise ValueError(f"from {self.start:g} to {self.to:g} step {self.step:g} is {self.size():.3g} values; "
                             f"{MAX_SETTINGS:,} at most")
        return self

    def size(self) -> float:
        return math.floor((self.to - self.start) / self.step + 1e-9) + 1

    def values(self) -> list[int] | list[float]:
        n = int(self.size())
        if n < 1:
            raise ValueError(f"from {self.start:g} to {self.to:g} is empty")
        vals = [self.start + k * self.step for k in range(n)]
        if all(float(v).is_integer() for v in (self.start, self.step)):
            return [int(v) for v in vals]
        return [round(v, 12) for v in vals]


class Seeds(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    start: int = Field(alias="from", ge=0, le=MAX_SEED)
    count: int = Field(ge=1, le=MAX_RUNS)

    @model_validator(mode="after")
    def _in_range(self) -> Seeds:
        if self.start + self.count - 1 > MAX_SEED:
            raise ValueError(f"seeds from {self.start} count {self.count} pass {MAX_SEED}")
        return self


class Sample(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = Field(ge=1)
    seed: int = Field(0, ge=0)


class SweepSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scene: str
    length: int = Field(ge=1, le=MAX_LENGTH)
    seeds: list[int] | Seeds
    params: dict[str, list[Any] | Range] = {}
    preset: str | None = None
    sample: Sample | None = None
    metrics: list[str] | None = None

    @field_validator("scene")
    @classmethod
    def _scene(cls, v: str) -> str:
        hooks(v)
        return v

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int] | Seeds) -> list[int] | Seeds:
        if isinstance(v, list):
            if not v:
                raise ValueError("no seeds")
            if any(s < 0 or s > MAX_SEED for s in v) or len(set(v)) != len(v):
                raise ValueError(f"seeds must be distinct, ≥ 0 and ≤ {MAX_SEED}")
        return v

    @model_validator(mode="after")
    def _grid(self) -> SweepSpec:
        for key, vals in self.params.items():
            if isinstance(vals, list) and not vals:
                raise ValueError(f"params.{key}: no values (an empty grid)")
            names = key.split(",")
            if len(names) > 1:  # keys that vary together: one list of values per setting
                if not isinstance(vals, list) or not all(isinstance(v, list) and len(v) == len(names) for v in vals):
                    raise ValueError(f"params.{key}: keys that vary together take a list of [{len(names)} values] "
                                     f"lists")
                if any(not n.strip() for n in names):
                    raise ValueError(f"params.{key}: an empty key")
        if self.preset is not None and not hooks(self.scene).presets:
            raise ValueError(f"preset: the {self.scene} has no presets (the aquarium has)")
        settings = 1.0
        for vals in self.params.values():
            settings *= vals.size() if isinstance(vals, Range) else len(vals)
        if settings > MAX_SETTINGS:
            raise ValueError(f"params: a grid of {settings:.3g} settings; {MAX_SETTINGS:,} at most (use [sample] on "
                             f"a smaller grid)")
        seeds = len(self.seeds) if isinstance(self.seeds, list) else self.seeds.count
        count = min(settings, self.sample.count) if self.sample is not None else settings
        if count * seeds > MAX_RUNS:
            raise ValueError(f"{count * seeds:.3g} runs (settings × seeds); {MAX_RUNS:,} at most")
        return self

    def seed_list(self) -> list[int]:
        s = self.seeds
        return list(s) if isinstance(s, list) else list(range(s.start, s.start + s.count))

    def param_keys(self) -> list[str]:
        """Every setting's key (keys that vary together, ``"a,b"``, counted one by one), sorted."""
        return sorted(k.strip() for key in self.params for k in key.split(","))

    def grid(self) -> list[dict[str, Any]]:
        """The settings: the full grid, or a seeded sample of it (keys that vary together take
        their values from the same item)."""
        keys = sorted(self.params)
        values = [v.values() if isinstance(v, Range) else v for v in (self.params[k] for k in keys)]
        combos = []
        for c in itertools.product(*values) if keys else [()]:
            combo: dict[str, Any] = {}
            for key, value in zip(keys, c):
                names = [n.strip() for n in key.split(",")]
                combo.update(zip(names, value) if len(names) > 1 else [(key, value)])
            combos.append(combo)
        if self.sample is not None and self.sample.count < len(combos):
            rng = np.random.Generator(np.random.PCG64(self.sample.seed))
            pick = sorted(rng.choice(len(combos), self.sample.count, replace=False))
            combos = [combos[int(i)] for i in pick]
        return combos

    def tasks(self) -> list[RunTask]:
        return [RunTask(self.scene, params, seed, self.length, self.preset)
                for params in self.grid() for seed in self.seed_list()]

    def digest(self) -> str:
        """Identifies the sweep (a results folder belongs to one)."""
        return hashlib.blake2b(self.model_dump_json(by_alias=True).encode(), digest_size=8).hexdigest()

    def headline(self) -> list[str]:
        return self.metrics or list(hooks(self.scene).metrics)


@dataclass(frozen=True)
class RunTask:
    """One run: a scene, its settings, a seed and a length."""

    scene: str
    params: dict[str, Any]
    seed: int
    length: int
    preset: str | None = None

    @property
    def run_id(self) -> str:
        key = json.dumps([self.scene, self.params, self.seed, self.length, self.preset], sort_keys=True)
        return hashlib.blake2b(key.encode(), digest_size=8).hexdigest()

    def command(self) -> list[str]:
        """The single headless command that gives this run's summary (the scene's sweep hooks)."""
        return hooks(self.scene).command(self)

    def command_line(self) -> str:
        return " ".join(shlex.quote(x) for x in self.command())


def load_spec(path: str | Path, base_url: str | None = None, model: str | None = None) -> SweepSpec:
    """Read and check a sweep file; every run's settings are validated before any run starts.
    ``base_url``/``model`` (``sweep --base-url --model``): every aquarium run asks that server
    (``brain.small.endpoints``; the sweep file sets ``brain.kind = "llm"`` where it wants the model).

    Raises:
        SpecError: one line naming the file and the problem.
    """
    p = Path(path)
    data = _read_toml(p)
    if base_url or model:
        _ask_server(data, p, base_url, model)
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(f"sweep file {p}: {_first_problem(exc)}") from None
    tasks = spec.tasks()
    for task in {json.dumps(t.params, sort_keys=True): t for t in tasks}.values():
        problem = check_settings(task)
        if problem:
            raise SpecError(f"sweep file {p}: {problem}")
    for m in spec.metrics or []:
        if not isinstance(m, str) or not m:
            raise SpecError(f"sweep file {p}: metrics: names of summary figures, e.g. \"mean_energy\"")
    return spec


def _read_toml(p: Path) -> dict[str, Any]:
    """The sweep file's TOML: a regular file of at most ``files.CONFIG_LIMIT`` bytes (a FIFO, a
    device or a folder is refused unread: mirofish/files.py)."""
    return read_toml_bounded(p, CONFIG_LIMIT, "sweep file", SpecError)


def _ask_server(data: dict[str, Any], p: Path, base_url: str | None, model: str | None) -> None:
    """``--base-url --model``: every aquarium run of the sweep asks that server; in a referential
    sweep, model agents on it play every game."""
    from ..scenes.registry import with_part

    if not (base_url and model):
        raise SpecError("--base-url and --model go together")
    hooks_of = {s.name: s.part("sweep") for s in with_part("sweep")}
    asking = {name: h.ask_server for name, h in hooks_of.items() if h.ask_server}
    if data.get("scene") not in asking:
        raise SpecError(f"sweep file {p}: --base-url/--model are for {' and '.join(asking)} sweeps")
    if "@" in base_url.split("//", 1)[-1].split("/", 1)[0]:
        raise SpecError("--base-url must not carry credentials (every run's command is written to the results): "
                        "put the key in the environment variable brain.api_key_env names")
    params = data.setdefault("params", {})
    if not isinstance(params, dict):
        raise SpecError(f"sweep file {p}: params: a table of settings")
    asking[str(data["scene"])](params, base_url, model)  # the scene's hooks say how (SweepHooks)


def _first_problem(exc: ValidationError) -> str:
    """``where: what`` of the sweep file's first problem, in the file's words."""
    errors = exc.errors()
    # a {from, to, step} table fails as a list too: name what is wrong with the table
    tabled = [e for e in errors if any(k in str(x) for x in e["loc"] for k in ("Range", "Seeds"))]
    said = [e for e in tabled if e["type"] != "model_type"]  # not "a {from, to} table was expected"
    err = said[0] if said and errors[0]["type"] == "list_type" else errors[0]
    loc = ".".join(str(x) for x in err["loc"]
                   if not (str(x).startswith("list[") or "Range" in str(x) or "Seeds" in str(x))) or "sweep"
    msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
    return f"{loc}: {msg}"


def check_settings(task: RunTask) -> str | None:
    """Why ``task``'s settings cannot run (None if they can): unknown keys, wrong types (the
    scene's sweep hooks say)."""
    return hooks(task.scene).check(task)
