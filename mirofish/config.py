"""One validated parameter tree for a MiroFish run (docs/design.md §2).

The defaults live in ``assets/default.toml``; a user file given with ``--config``
is layered on top, then every ``--set section.key=value``. Validation errors become a
:class:`ConfigError` whose message is one line naming the offending key.

Energy amounts are written in energy units (``0.15``) for people, but the world keeps
them as integer hundredths; :func:`hundredths` does that conversion exactly once.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)


def _assets() -> Path:
    """The bundled assets (the defaults, presets, prompts, examples): inside the package in an
    installed wheel (``setup.py`` copies ``assets/`` there), beside it in a checkout (an editable
    install, ``pip install -e .``)."""
    here = Path(__file__).resolve().parent
    for folder in (here / "assets", here.parent / "assets"):
        if (folder / "default.toml").is_file():
            return folder
    return here.parent / "assets"


ASSETS = _assets()
DEFAULT_CONFIG_PATH = ASSETS / "default.toml"


class ConfigError(ValueError):
    """A config value, file or override the user must fix; the message is one line."""


def _admits_bool(annotation: Any) -> bool:
    """Whether a field's type takes true/false (bool, Any, or a union with bool)."""
    if annotation is bool or annotation is Any:
        return True
    return any(_admits_bool(a) for a in getattr(annotation, "__args__", ()) if a is not type(None))


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """``temperature = true`` is a mistake, not 1.0: true/false for a number is refused (pydantic
        would read it as 1 or 0); the error names the key."""
        if isinstance(value, bool) and info.field_name is not None:
            field = cls.model_fields.get(info.field_name)
            if field is not None and not _admits_bool(field.annotation):
                raise ValueError(f"a number is needed, not {str(value).lower()}")
        return value


def hundredths(value: float) -> int:
    """Energy units → integer hundredths (0.15 → 15)."""
    return int(round(value * 100))


def _energy(value: float) -> float:
    if abs(value * 100 - round(value * 100)) > 1e-6:
        raise ValueError("energy amounts have a resolution of 0.01")
    return value


class WorldConfig(_Section):
    """The water layer: grid, glass and obstacles, time."""

    width: int = Field(96, ge=8, le=2000, description="cells across, glass included")
    height: int = Field(54, ge=8, le=2000, description="cells down, glass included")
    wall_margin: int = Field(2, ge=1, le=10, description="cells of impassable glass")
    tick_seconds: float = Field(0.5, gt=0, le=60, description="simulated seconds per tick")
    plant_patches: int = Field(6, ge=0, le=200, description="plant patches growing from the floor")
    plant_height: int = Field(7, ge=1, le=100, description="tallest plant patch, in cells")
    plant_bites: int = Field(3, ge=1, le=1000, description="bites each plant cell holds for a group that eats "
                                                         "plants (GroupConfig.eats_plants)")
    plant_regrow_ticks: int = Field(60, ge=1, le=1_000_000, description="ticks a bitten plant takes to grow "
                                                                          "each bite back")
    rocks: int = Field(5, ge=0, le=200, description="rocks (small impassable blobs)")
    grid: Literal["square", "hex"] = Field(
        "square", description="square: four moves (north, south, west, east); hex: hexagonal cells, six moves "
                              "(east, north-east, north-west, west, south-west, south-east), a view of the hexes "
                              "within perception.radius steps (docs/hex.md)")
    cell_px: int = Field(
        0, ge=0, le=40,
        description="pixels per cell in the window: 0 = 20 where the window holds the tank (the panels float "
                    "over it), else the largest whole size that fits (key X: 20); 4–40 = that size, the view "
                    "following the followed fish. The tank's state does not depend on it")

    @field_validator("cell_px")
    @classmethod
    def _cell_px(cls, v: int) -> int:
        if 0 < v < 4:
            raise ValueError("0 (20 px where it fits) or 4–40 pixels a cell")
        return v

    @model_validator(mode="after")
    def _room_to_swim(self) -> WorldConfig:
        if min(self.width, self.height) - 2 * self.wall_margin < 4:
            raise ValueError("grid too small for its glass margin (need 4 open cells across)")
        return self


class FoodConfig(_Section):
    """Food spawn and rot. ``spawn_rate`` is per open-water cell per tick (docs/tank.md, "Carrying capacity")."""

    spawn_rate: float = Field(0.0003, ge=0, le=1)
    energy: float = Field(40.0, gt=0, le=1000)
    rot_ticks: int = Field(300, ge=1, le=1_000_000)
    open_water_bias: float = Field(
        0.9, ge=0, le=1, description="0 = uniform over open water, 1 = only far from walls/obstacles"
    )

    @field_validator("energy")
    @classmethod
    def _check_energy(cls, v: float) -> float:
        return _energy(v)


class GroupConfig(_Section):
    """One group of fish in a mixed tank (``[[fish.groups]]``, docs/groups.md): how many, how they are
    marked, and what decides for them. Unset per-group keys take the tank's ``[brain]`` values."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$", description="short name shown in figures and the window")
    count: int | None = Field(None, ge=1, le=100_000, description="fish in this group (or share)")
    share: float | None = Field(None, gt=0, le=1, description="share of fish.count in this group (or count)")
    colour: str | None = Field(None, pattern=r"^#[0-9a-fA-F]{6}$", description="ring colour in the window, #rrggbb")
    brain: str | None = Field(None, max_length=500, description="this group's brain.kind")
    model: str | None = Field(None, min_length=1, description="this group's model (its brain is then llm)")
    base_url: str | None = Field(None, description="this group's server (with model)")

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        return None if v is None else check_url(v)

    @field_validator("birth_energy", "catch_gain", "decay_per_tick", "move_cost", "max_energy")
    @classmethod
    def _check_energy(cls, v: float | None) -> float | None:
        return None if v is None else _energy(v)
    api_key_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                                    description="environment variable with this group's server key")
    prompt: str | None = Field(None, max_length=1000, description="this group's prompt file")
    memory: str | None = Field(None, min_length=1, max_length=300,
                               description="this group's memory.kind (docs/memory.md)")
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    chooser: Literal["instinct", "random", "never_school"] | None = Field(
        None, description="this group's brain.chooser (the embedded brain's arms: an ablation of one group)")
    # A species (docs/species.md): the group's population rules. None of them set: its fish
    # never die and none is born (every tank before species existed).
    spare: int = Field(0, ge=0, le=10_000, description="room for this group's young (ids never reused: a "
                                                      "young takes room no fish had)")
    birth_energy: float | None = Field(None, gt=0, le=10_000,
                                       description="a fish at or above this energy splits: the young takes half "
                                                   "its energy (needs spare room)")
    mutation: int = Field(5, ge=0, le=50, description="a young's personality: its parent's traits, each moved "
                                                      "by up to this many points")
    dies: bool = Field(False, description="its fish die when their energy reaches 0 (else they rest, as ever)")
    hunts: list[str] = Field([], max_length=16, description="groups whose fish this group's fish catch")
    catch_chance: float = Field(0.5, ge=0, le=1, description="a hunter's chance to catch a prey beside it "
                                                              "that swims with none of its kind")
    confusion: float = Field(1.0, ge=0, le=100,
                             description="the confusion effect: the chance is divided by 1 + confusion × the "
                                         "prey's kind within 2 cells swimming its way")
    catch_gain: float = Field(40.0, ge=0, le=10_000, description="energy a catch gives the hunter")
    flees: bool = Field(False, description="its fish may flee a fish that hunts them in view (the flee plan: "
                                           "swim straight away from the nearest; docs/species.md)")
    eats_plants: bool = Field(False, description="its fish graze plants: an eat with no food beside it takes a "
                                                 "bite of a plant beside it (world.plant_bites; needs "
                                                 "perception.plants_seen, so its fish see them)")
    eats_food: bool = Field(True, description="false: its fish never eat food nor are drawn to it (a hunter "
                                              "that lives on its prey; its planner's forage weight is 0)")
    shape: Literal["ring", "diamond", "square", "triangle"] | None = Field(
        None, description="its fish's mark in the window and the page (default: a diamond for a hunter, else a ring)")
    # its body (None: the tank's fish.* value): what living and swimming cost this group's fish
    decay_per_tick: float | None = Field(None, ge=0, le=10_000,
                                         description="energy its fish lose a tick (default fish.decay_per_tick)")
    move_cost: float | None = Field(None, ge=0, le=10_000,
                                    description="energy a move costs this group's fish (default fish.move_cost)")
    max_energy: float | None = Field(None, gt=0, le=10_000,
                                     description="the most energy its fish can hold (default fish.max_energy); "
                                                 "its hunger, low and sated lines stay the tank's")
    moves_per_tick: int | None = Field(None, ge=1, le=4,
                                       description="cells its fish may swim a tick (default 1): a fish whose move "
                                                   "went through swims on the same way, each cell a move's "
                                                   "cost, until something is in the way or what it came for "
                                                   "(food, prey, its plan's target) is beside it")
    view_radius: int | None = Field(None, ge=1, le=6,
                                    description="how far its fish see, in cells (default perception.radius, the "
                                                "widest any fish sees: cells beyond a fish's own radius read as "
                                                "open water to it and show as ? in its view)")

    @model_validator(mode="after")
    def _size(self) -> GroupConfig:
        if (self.count is None) == (self.share is None):
            raise ValueError(f"group {self.name!r} needs exactly one of count and share")
        if (self.model is None) != (self.base_url is None):
            raise ValueError(f"group {self.name!r} needs model and base_url together")
        if self.name in self.hunts:
            raise ValueError(f"group {self.name!r} hunts itself")
        return self

    @property
    def mark(self) -> str:
        """The mark drawn round its fish: its ``shape``, or a diamond for a hunter and a ring else."""
        return self.shape or ("diamond" if self.hunts else "ring")

    @property
    def species_rules(self) -> bool:
        """Does this group live by population rules (births, deaths or hunting)?"""
        return bool(self.spare or self.birth_energy is not None or self.dies or self.hunts or not self.eats_food
                    or self.eats_plants)


class FishConfig(_Section):
    """Energy bookkeeping and population."""

    count: int = Field(60, ge=1, le=100_000)
    spare: int = Field(0, ge=0, le=10_000, description="room for fish added while the tank runs (an intervention); "
                                                      "they start out of the water")
    places: int = Field(0, ge=0, le=8,
                        description="places each fish remembers where it ate (0: none; the source design's "
                                    "environmental memory: fish/places.py)")
    sociability_shift: int = Field(0, ge=-50, le=50,
                                   description="the personality mix: added to every fish's drawn sociability")
    max_energy: float = Field(100.0, gt=0, le=10_000)
    start_energy_min: float = Field(60.0, ge=0, le=10_000)
    start_energy_max: float = Field(100.0, ge=0, le=10_000)
    start_age_max: int = Field(2000, ge=0, le=1_000_000, description="fish start with ages drawn from 0..this")
    decay_per_tick: float = Field(0.15, ge=0, le=10_000)
    move_cost: float = Field(0.3, ge=0, le=10_000)
    eat_cost: float = Field(0.1, ge=0, le=10_000)
    rest_gain: float = Field(0.2, ge=0, le=10_000)
    rest_ceiling: float = Field(
        10.0, ge=0, le=10_000, description="rest recovers energy only below this: it revives, it does not feed"
    )
    low_energy: float = Field(20.0, ge=0, le=10_000, description="'low energy' line used in reports")
    groups: list[GroupConfig] = Field(
        [], max_length=16, description="a mixed tank: groups of fish with their own brain, model, prompt "
                                       "(docs/groups.md); fish no group takes stay with the tank's [brain]")

    @field_validator(
        "max_energy", "start_energy_min", "start_energy_max", "decay_per_tick",
        "move_cost", "eat_cost", "rest_gain", "rest_ceiling", "low_energy",
    )
    @classmethod
    def _check_energy(cls, v: float) -> float:
        return _energy(v)

    @property
    def slots(self) -> int:
        """Fish the tank has room for: ``count`` in the water at the start, ``spare`` out of it,
        then each group's room for its young (``groups[g].spare``, in group order)."""
        return self.count + self.spare + sum(g.spare for g in self.groups)

    def young_room(self) -> list[tuple[int, int]]:
        """Each group's room for its young: ``[first, end)`` ids, after every other slot."""
        out, at = [], self.count + self.spare
        for g in self.groups:
            out.append((at, at + g.spare))
            at += g.spare
        return out

    @model_validator(mode="after")
    def _ranges(self) -> FishConfig:
        if not self.start_energy_min <= self.start_energy_max <= self.max_energy:
            raise ValueError("need start_energy_min <= start_energy_max <= max_energy")
        names = [g.name for g in self.groups]
        if len(set(names)) != len(names) or "tank" in names:
            raise ValueError("group names must be unique and not 'tank' (the fish no group takes)")
        if sum(self.group_sizes()) > self.count:
            raise ValueError(f"the groups hold {sum(self.group_sizes())} fish; fish.count is {self.count}")
        for g in self.groups:
            unknown = [h for h in g.hunts if h not in names]
            if unknown:
                raise ValueError(f"group {g.name!r} hunts {', '.join(map(repr, unknown))}: no such group "
                                 f"(groups: {', '.join(names)})")
            top = g.max_energy if g.max_energy is not None else self.max_energy
            if g.birth_energy is not None and hundredths(g.birth_energy) > hundredths(top):
                raise ValueError(f"group {g.name!r}: birth_energy {g.birth_energy} is above max_energy "
                                 f"{top}: none would ever be born")
        return self

    def group_sizes(self) -> list[int]:
        """Fish in each group, in order: ``count``, or ``share`` × ``fish.count`` rounded (shares
        that add up to 1 cover every fish: the last such group takes the rounding's rest)."""
        sizes = [g.count if g.count is not None else int(round((g.share or 0) * self.count)) for g in self.groups]
        if self.groups and all(g.share is not None for g in self.groups) \
                and abs(sum(g.share or 0 for g in self.groups) - 1) < 1e-9:
            sizes[-1] = self.count - sum(sizes[:-1])
        return sizes

    def group_of(self) -> list[int]:
        """Each fish slot's group: an index into ``groups``, or ``len(groups)`` for the fish no group
        takes (named ``tank``; spare slots too). Groups take fish ids in order: the first group the
        first ``count`` ids, and so on."""
        out: list[int] = []
        for g, n in enumerate(self.group_sizes()):
            out += [g] * n
        out += [len(self.groups)] * (self.count + self.spare - len(out))
        for g, group in enumerate(self.groups):  # each group's room for its young (young_room)
            out += [g] * group.spare
        return out

    def group_names(self) -> list[str]:
        """The groups' names and ``tank`` last (the fish no group takes)."""
        return [g.name for g in self.groups] + ["tank"]


class PerceptionConfig(_Section):
    radius: int = Field(2, ge=1, le=6, description="2 gives the 5×5 view")
    plants_seen: bool = Field(False, description="plants show as P in a fish's view (else as # like glass); "
                                                 "the hide plan needs them")


class MemoryConfig(_Section):
    short_size: int = Field(8, ge=1, le=64)
    summary_every: int = Field(20, ge=1, le=1_000_000)
    summaries_kept: int = Field(3, ge=1, le=20)
    summary_anchors: int = Field(3, ge=1, le=8, description="raw events each summary must quote")
    kind: str = Field("two_level", min_length=1, max_length=300,
                      description="what a decision is told of the fish's memory: two_level (the source's ring "
                                  "and summaries), none, vector (retrieval and reflection), or your own "
                                  "(FILE.py:NAME, MODULE:NAME or a mirofish.memories entry point; docs/memory.md)")
    top_k: int = Field(5, ge=1, le=64, description="vector memory: memories recalled for a decision")
    candidates: int = Field(32, ge=1, le=4096, description="vector memory: the most similar items scored")
    reflect_every: int = Field(20, ge=2, le=100_000, description="vector memory: events between reflections")
    embed_dim: int = Field(64, ge=8, le=4096, description="vector memory: dimensions of the local embedder")
    recency_weight: float = Field(1.0, ge=0, le=100, description="vector memory: weight of 0.995^(ticks since)")
    importance_weight: float = Field(1.0, ge=0, le=100, description="vector memory: weight of an event's importance")
    relevance_weight: float = Field(1.0, ge=0, le=100,
                                    description="vector memory: weight of its similarity to the situation now")
    embedder: Literal["local", "server"] = Field(
        "local", description="vector memory: embeddings from the local hashed-trigram embedder, or from the small "
                             "tier's server (/v1/embeddings; a text it cannot embed falls back to local, counted)")


class TriggersConfig(_Section):
    """When a fish asks its brain for a new decision (otherwise it keeps its standing intent)."""

    low_energy_fraction: float = Field(0.25, ge=0, le=1)
    hard_timeout: int = Field(12, ge=1, le=1_000_000, description="ticks since the last decision")
    food_rose: bool = True
    neighbours_changed: bool = True
    action_failed: bool = True
    poll_every: int = Field(0, ge=0, le=1_000_000,
                            description="0 = event-driven; N = every fish decides every N ticks (baseline)")
    # Plan mode (brain.decides = "plan"): a fish asks again when its plan ends or fails, when
    # something salient happens, or after plan_timeout ticks.
    plan_timeout: int = Field(160, ge=1, le=1_000_000, description="plan mode: ticks since the last decision")
    stuck_ticks: int = Field(3, ge=1, le=1_000_000,
                             description="plan mode: a plan fails when the fish is stuck this long")
    forage_patience: int = Field(30, ge=1, le=1_000_000,
                                 description="plan mode: forage fails after this many ticks without food in view")
    alone_ticks: int = Field(6, ge=1, le=1_000_000,
                             description="plan mode: alone this long = lost the school / company found after")
    crowd_line: int = Field(9, ge=1, le=1000, description="plan mode: this many fish in view is a crowd")
    hungry_fraction: float = Field(0.5, ge=0, le=1, description="plan mode: below this, food in view is salient")
    sated_fraction: float = Field(
        0.75, ge=0, le=1,
        description="plan mode: a meal ends a forage plan only when it brings energy up to this share of the "
                    "maximum (0 = every meal ends it); otherwise the fish forages on until no food has been in "
                    "view for forage_patience ticks or the horizon")


class ArbiterConfig(_Section):
    """Priority = age_weight·age/age_cap + energy_weight·energy/max, in per-mille, then a hash tie-break."""

    age_weight: int = Field(1, ge=0, le=1000)
    energy_weight: int = Field(1, ge=0, le=1000)
    age_cap: int = Field(5000, ge=1, le=1_000_000, description="ages beyond this count as this")


class InstinctConfig(_Section):
    """Weights of the embedded brain's utilities (tendencies, scaled by personality)."""

    temperature: float = Field(0.3, gt=0, le=10)
    food: float = Field(6.0, ge=0, le=1000)
    eat: float = Field(4.0, ge=0, le=1000)
    social: float = Field(8.0, ge=0, le=1000)
    hunger_damping: float = Field(3.0, ge=0, le=1000, description="how fast hunger turns off the social pull")
    cohesion: float = Field(6.0, ge=0, le=1000,
                            description="weight of losing sight of the fish in view, relative to social")
    crowd: float = Field(2.0, ge=0, le=1000)
    wall: float = Field(0.5, ge=0, le=1000)
    open_water: float = Field(1.0, ge=0, le=1000)
    persistence: float = Field(0.7, ge=0, le=1000)
    refused: float = Field(3.0, ge=0, le=1000, description="aversion to retrying a move refused a tick ago")
    rest: float = Field(0.6, ge=0, le=1000)
    company: float = Field(1.0, ge=0, le=1000, description="how much company makes resting appeal")


class SteeringConfig(_Section):
    """Weights of the steering layer (plan + view → action each tick), scaled by personality."""

    temperature: float = Field(0.25, gt=0, le=10)
    food: float = Field(6.0, ge=0, le=1000, description="forage: pull toward food in view")
    eat: float = Field(6.0, ge=0, le=1000)
    alignment: float = Field(5.0, ge=0, le=1000, description="school: swim the way the fish in view face")
    cohesion: float = Field(3.0, ge=0, le=1000, description="school: close in on fish in view, keep them in sight")
    separation: float = Field(2.0, ge=0, le=1000, description="avoid a target cell crowded by other fish")
    wall: float = Field(1.0, ge=0, le=1000)
    open_water: float = Field(1.0, ge=0, le=1000)
    persistence: float = Field(1.5, ge=0, le=1000, description="hold the current course")
    direction: float = Field(3.0, ge=0, le=1000, description="explore: the chosen direction")
    refused: float = Field(3.0, ge=0, le=1000, description="aversion to a move refused in the last ticks")
    rest: float = Field(5.0, ge=0, le=1000, description="rest: how firmly a resting fish stays")


# Settings a running tank may change (the window's sliders, ``tune``: mirofish/interventions.py);
# the rest apply at a reset. Tanks joined into one world may differ by them (mirofish/batch.py).
LIVE_KEYS = ("food.spawn_rate", "steering.alignment", "steering.cohesion", "steering.separation",
             "steering.food", "steering.open_water")


class PlannerConfig(_Section):
    """The instinct planner: goal utilities (scaled by personality and state) and horizons."""

    temperature: float = Field(0.35, gt=0, le=10)
    forage: float = Field(4.0, ge=0, le=1000)
    school: float = Field(3.0, ge=0, le=1000)
    explore: float = Field(1.0, ge=0, le=1000)
    rest: float = Field(6.0, ge=0, le=1000)
    keep_away: float = Field(1.5, ge=0, le=1000)
    revisit: float = Field(4.0, ge=0, le=1000, description="return to a remembered place where it ate (with "
                                                           "fish.places; 0: never)")
    school_ticks: int = Field(150, ge=1, le=30_000)
    explore_ticks: int = Field(40, ge=1, le=30_000)
    rest_ticks: int = Field(24, ge=1, le=30_000)
    forage_ticks: int = Field(80, ge=1, le=30_000)
    away_ticks: int = Field(8, ge=1, le=30_000)
    revisit_ticks: int = Field(60, ge=1, le=30_000,
                               description="a return's horizon: at least this, more for a far place")


class EndpointConfig(_Section):
    """One OpenAI-compatible server (Ollama, vLLM, llama.cpp server, LM Studio, OpenAI)."""

    base_url: str
    model: str = Field(min_length=1)
    api_key_env: str | None = Field(
        None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="environment variable holding this server's API key (unset: brain.api_key_env); the key is "
                    "sent to this server only and never written anywhere")
    max_concurrency: int | None = Field(
        None, ge=1, le=256,
        description="requests in flight to this server at once; unset = the server's slots where it says "
                    "(llama.cpp's /props), else 1 for a server on this machine and 4 for a remote one")

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        return check_url(v)


def check_url(v: str) -> str:
    """An OpenAI-compatible server's address, checked (http(s), a host, a port that parses, no
    spaces): the one check of every ``base_url`` — endpoints and groups."""
    from urllib.parse import urlparse

    if any(ch.isspace() or ord(ch) < 32 for ch in v):
        raise ValueError(f"URL contains spaces or control characters: {redact_url(v)!r}")
    try:
        u = urlparse(v)
        host = u.hostname
    except ValueError:
        raise ValueError(f"not an http(s) URL: {redact_url(v)!r}") from None
    if u.scheme not in ("http", "https") or not host:
        raise ValueError(f"not an http(s) URL: {redact_url(v)!r}")
    try:
        u.port  # noqa: B018 — raises on a malformed port
    except ValueError:
        raise ValueError(f"bad port in URL: {redact_url(v)!r}") from None
    return v.rstrip("/")


KEY_PARAM = re.compile(r"(?i)(key|token|secret|passw|pwd|auth|sig|credential|session|access|bearer|jwt|code)")
_QUERY_PARAM = re.compile(r"(?<=[?&;])([^=&;#\s\"'<>]*)=([^&;#\s\"'<>]*)")


def _redact_query(query: str) -> str:
    """``a=1&api_key=K`` → ``a=1&api_key=***``: a query parameter whose name says key, token,
    secret, password, auth, signature, credential, session or access keeps its name, never its value."""
    def one(m: re.Match[str]) -> str:
        return f"{m.group(1)}=***" if KEY_PARAM.search(m.group(1)) and m.group(2) else m.group(0)

    return _QUERY_PARAM.sub(one, "?" + query)[1:]


def redact_url(url: str) -> str:
    """``http://user:KEY@host/v1?api_key=K`` → ``http://***@host/v1?api_key=***``: credentials in a
    URL (its userinfo, and the value of every key-like query parameter) are never shown, logged
    or stored (the URL itself is still used to connect). The one redaction every writer uses,
    through :func:`redact_data` for whole structures."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:  # a URL that does not parse still never shows its credentials
        return redact_text(url)
    if "@" in parts.netloc:
        parts = parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1])
    if parts.query:
        parts = parts._replace(query=_redact_query(parts.query))
    if parts.fragment:  # never sent to a server: nothing there is needed, anything may be a key
        parts = parts._replace(fragment="***")
    return urlunsplit(parts)


_USERINFO = re.compile(r"(?<=//)[^/@\s]*@")
_URL_FRAGMENT = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s#\"'<>]*)#[^\s\"'<>]+")
_URL_QUERY = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s?#\"'<>]*\?)([^\s#\"'<>]*)")


def redact_text(text: str) -> str:
    """Any text with the userinfo of every URL in it replaced by ``***``, and the value of every
    key-like query parameter of a URL in it — robust to URLs that do not parse
    (``http://u:KEY@[::1/v1``); applied to every error line the CLI prints and to every string
    :func:`redact_data` meets."""
    if "//" not in text:
        return text
    text = _USERINFO.sub("***@", text)
    if "?" in text:
        text = _URL_QUERY.sub(lambda m: m.group(1) + _redact_query(m.group(2)), text)
    if "#" in text:
        text = _URL_FRAGMENT.sub(r"\1#***", text)
    return text


def redact_data(data: Any) -> Any:
    """JSON-like ``data`` (dicts, lists, strings …) with :func:`redact_text` applied to every string
    in it, keys included: the one function every writer of a config, spec, header, table or
    export passes what it writes through, so a URL's credentials reach no file wherever in the
    structure the URL sits (a group's server, an endpoint, a sweep's or reef's ``set`` value)."""
    if isinstance(data, str):
        return redact_text(data)
    if isinstance(data, dict):
        return {redact_text(k) if isinstance(k, str) else k: redact_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(v) for v in data]
    return data


def redacted(cfg: Config) -> dict[str, Any]:
    """The config as JSON-ready data with every URL's credentials redacted (endpoints, groups,
    anything else that holds a URL)."""
    out: dict[str, Any] = redact_data(cfg.model_dump(mode="json"))
    return out


class TierConfig(_Section):
    """A tier of model servers; requests go to the endpoint with the fewest in flight."""

    endpoints: list[EndpointConfig] = []
    price_prompt_per_1k: float = Field(0.0, ge=0, le=1_000_000, description="currency units per 1,000 prompt tokens")
    price_completion_per_1k: float = Field(0.0, ge=0, le=1_000_000)
    price_cached_prompt_per_1k: float | None = Field(
        None, ge=0, le=1_000_000, description="per 1,000 prompt tokens the server's prompt cache served (OpenAI "
                                              "bills them at a discount); unset: the prompt price")


BRAIN_SPEC = re.compile(r"^(instinct|llm|[A-Za-z_][\w.-]*|.+\.py:[A-Za-z_]\w*|[A-Za-z_][\w.]*:[A-Za-z_]\w*)$")


class BrainConfig(_Section):
    kind: str = Field(
        "instinct", min_length=1, max_length=500,
        description="instinct (the embedded brain), llm (the model pool), or your own brain: FILE.py:NAME, "
                    "MODULE:NAME, or the name of an installed mirofish.brains entry point (docs/brains.md)")
    chooser: Literal["instinct", "random", "never_school"] = Field(
        "instinct", description="how the embedded brain chooses (an experiment's control arms): the instinct's "
                                "utilities; uniformly at random among what fits the view; or the instinct that never "
                                "chooses to school (plan mode) / feels no pull toward other fish (action mode)")
    decides: Literal["plan", "action"] = Field(
        "plan", description="plan: a decision is a standing plan; action: one action (the source design's mode)")
    timeout_s: float = Field(
        5.0, gt=0, le=3600,
        description="lockstep: a tick gives up on its outstanding requests after this long without an answer "
                    "(at least 3x the server's measured latency)")
    warmup_timeout_s: float = Field(
        120.0, gt=0, le=3600,
        description="before tick 0 each server answers one warm-up request (format probe, cold start) within this")
    abandon_after_s: float = Field(
        120.0, gt=0, le=3600,
        description="a request past request_timeout_s is answered by the fallback but kept open this long from "
                    "dispatch: its late answer is used if the fish has not asked again")
    batch_window_ms: int = Field(80, ge=0, le=5000, description="realtime: gather requests this long")
    budget_tokens: int = Field(0, ge=0, le=10**15,
                               description="0 = no budget; budget_small_only_at → small tier only, 100 % → instinct")
    budget_small_only_at: float = Field(0.8, ge=0, le=1,
                                        description="share of budget_tokens from which only the small tier is asked")
    novel_baseline: int = Field(
        3, ge=1, le=1_000_000,
        description="routing: a fish's first requests are its baseline (what it meets then is not novel)")
    novel_forget_ticks: int = Field(
        1000, ge=0, le=10**9,
        description="routing: a kind of view the fish has not met for this many ticks is novel again (0: never)")
    request_timeout_s: float = Field(
        20.0, gt=0, le=3600,
        description="one model request, counted from dispatch (not from waiting for a slot); then the fallback answers")
    max_reply_bytes: int = Field(262_144, ge=1024, le=64 * 2**20,
                                 description="a reply body longer than this is cut off and counted as a failure")
    max_retries: int = Field(2, ge=0, le=10, description="retries of retryable errors (429, 5xx, network)")
    backoff_s: float = Field(0.2, ge=0, le=60,
                             description="first retry delay; doubles, with jitter, up to backoff_cap_s")
    backoff_cap_s: float = Field(4.0, ge=0, le=600, description="longest retry delay of our own choosing")
    retry_after_cap_s: float = Field(30.0, ge=0, le=3600,
                                     description="a server's Retry-After is honoured up to this "
                                                 "(and never past a deadline); a longer one is not "
                                                 "retried: the request fails with the server's reason")
    breaker_failures: int = Field(5, ge=1, le=10_000, description="consecutive failures that open a tier's breaker")
    breaker_cooldown_s: float = Field(2.0, gt=0, le=3600, description="seconds before a half-open probe")
    api_key_env: str = Field("OPENAI_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                             description="environment variable holding the API key (an endpoint's own "
                                         "api_key_env wins)")
    temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature sent with every model request")
    top_p: float | None = Field(None, gt=0, le=1, description="nucleus sampling; unset: not sent")
    prompt: str = Field("", max_length=1000,
                        description="the fish prompt file (assets/prompts/ format, docs/prompts.md); empty: the "
                                    "bundled default, assets/prompts/fish.toml")
    small: TierConfig = TierConfig()
    large: TierConfig = TierConfig()
    prompt_memories: int = Field(8, ge=0, le=64, description="newest short memories in a fish's prompt")
    prompt_summaries: int = Field(3, ge=0, le=20, description="newest long-term summaries in a fish's prompt")
    memory_tokens: int = Field(200, ge=0, le=100_000,
                               description="the memory block's budget in a fish's prompt (estimated tokens; 0: none): "
                                           "over it, the oldest summaries and memories are left out (docs/memory.md)")
    tendency: bool = Field(True, description="the shared prefix says 'alone, the current scatters you; near others "
                                             "you feel steadier' (a tendency given to the model, not a rule)")
    embeddings: bool = Field(False, description="drift score via the small tier's /v1/embeddings")
    drift_alert: float = Field(0.05, ge=0, le=1, description="alert when a summary's drift score falls below")
    summaries: Literal["with_decision", "own_request"] = Field(
        "with_decision", description="how a due long-term summary is asked of the model: inside the fish's next "
                                     "decision request (no request of its own), or in a small request of its own")
    instinct: InstinctConfig = InstinctConfig()
    planner: PlannerConfig = PlannerConfig()

    @field_validator("kind")
    @classmethod
    def _brain_spec(cls, v: str) -> str:
        if not BRAIN_SPEC.match(v):
            raise ValueError("not a brain: use instinct, llm, FILE.py:NAME, MODULE:NAME or an entry point name")
        return v

    @model_validator(mode="after")
    def _llm_needs_a_server(self) -> BrainConfig:
        if self.kind == "llm" and not (self.small.endpoints or self.large.endpoints):
            raise ValueError("brain.kind = llm needs at least one endpoint (use --base-url and --model)")
        return self


class EngineConfig(_Section):
    mode: Literal["lockstep", "realtime"] = "lockstep"
    speed: float = Field(1.0, ge=0.25, le=64)


class MetricsConfig(_Section):
    window: int = Field(100, ge=1, le=100_000, description="ticks in the action-entropy / conflict window")
    schooling_window: int = Field(20, ge=1, le=100_000)
    sample_every: int = Field(10, ge=1, le=100_000,
                              description="run means, collective measures and alerts every N ticks")
    heartbeat_ticks: int = Field(20, ge=1, le=1_000_000)
    fallback_alert: float = Field(0.2, ge=0, le=1)
    hotspot_cell: int = Field(8, ge=1, le=1000, description="side of a stuck hot-spot square, in cells")
    jam_ticks: int = Field(6, ge=1, le=1_000_000, description="alert when a fish's stuck streak exceeds this")
    hud_first: list[str] = Field([], max_length=16,
                                 description="the window's HUD columns shown first, in this order (keys of its "
                                             "metrics, e.g. school_size, school_moving: the schooling-demo "
                                             "preset's, so a narrow window shows them without paging); the "
                                             "rest follow in the HUD's own order")
    # (each a HUD column of the run's metric table: checked where the metrics are made,
    # observe/metrics.Metrics, which knows the table — the config sits below it and cannot)


class RecordConfig(_Section):
    """Recordings (SQLite): how often a keyframe and a commit happen."""

    keyframe_every: int = Field(100, ge=1, le=1_000_000, description="ticks between full keyframes (seek cost)")
    commit_seconds: float = Field(1.0, gt=0, le=3600, description="simulated seconds per commit (crash loss bound)")
    model_calls: bool = Field(True, description="keep every model exchange: the per-fish prompt, the raw reply, how "
                                                "it was read, model, endpoint, latency, tokens (brains/exchanges.py)")
    hash_every: int = Field(10, ge=0, le=1_000_000,
                            description="ticks between state hashes kept in a recording, which replays check "
                                        "(0: none; each costs about a fifth of a 60-fish tick)")
    history_minutes: float = Field(10.0, ge=0, le=24 * 60,
                                   description="simulated minutes of its past a live tank in the window keeps, to "
                                               "rewind and fork without recording (0: none)")


class Config(_Section):
    seed: int = Field(7, ge=0, lt=2**63, description="the one seed of the tank's random draws: the same seed "
                                                      "and the same decisions give the same tank")
    world: WorldConfig = WorldConfig()
    food: FoodConfig = FoodConfig()
    fish: FishConfig = FishConfig()
    perception: PerceptionConfig = PerceptionConfig()
    memory: MemoryConfig = MemoryConfig()
    triggers: TriggersConfig = TriggersConfig()
    steering: SteeringConfig = SteeringConfig()
    arbiter: ArbiterConfig = ArbiterConfig()
    brain: BrainConfig = BrainConfig()
    engine: EngineConfig = EngineConfig()
    metrics: MetricsConfig = MetricsConfig()
    record: RecordConfig = RecordConfig()

    def _per_slot(self, own: list[Any], tank: Any) -> list[Any] | None:
        """Each fish slot's value of a group key: its group's (``own``, one per group, None: unset),
        else the tank's; None when every group's is the tank's (the tank as before the key)."""
        values = [tank if v is None else v for v in own] + [tank]  # (the last: the fish no group takes)
        if all(v == tank for v in values):
            return None
        return [values[g] for g in self.fish.group_of()]

    def max_energy_of(self) -> list[int] | None:
        """The most energy each fish slot can hold, in hundredths (its group's ``max_energy``, else
        ``fish.max_energy``), or None when every group holds the tank's."""
        return self._per_slot([None if g.max_energy is None else hundredths(g.max_energy) for g in self.fish.groups],
                              hundredths(self.fish.max_energy))

    def top_energy(self) -> float:
        """The most energy any fish of the tank can hold (the scale of energy bars and observations)."""
        return max([self.fish.max_energy] + [g.max_energy for g in self.fish.groups if g.max_energy is not None])

    def moves_of(self) -> list[int] | None:
        """Cells each fish slot may swim a tick (its group's ``moves_per_tick``, else 1), or None when
        every fish swims one."""
        return self._per_slot([g.moves_per_tick for g in self.fish.groups], 1)

    def view_radii(self) -> list[int] | None:
        """How far each fish slot sees (its group's ``view_radius``, else ``perception.radius``), or
        None when every fish sees the whole window (no group sees less)."""
        return self._per_slot([g.view_radius for g in self.fish.groups], self.perception.radius)

    @model_validator(mode="after")
    def _hex(self) -> Config:
        if self.world.grid != "hex":
            return self
        from .grid import hex_refusal

        problem = hex_refusal(self)
        if problem:
            raise ValueError(f"world.grid = \"hex\": {problem}")
        return self

    @model_validator(mode="after")
    def _sight(self) -> Config:
        grazers = [g.name for g in self.fish.groups if g.eats_plants]
        if grazers and not self.perception.plants_seen:
            raise ValueError(f"fish.groups.{grazers[0]}.eats_plants: set perception.plants_seen = true too (its "
                             f"fish must see the plants, as P)")
        r = self.perception.radius
        for g in self.fish.groups:
            if g.view_radius is not None and g.view_radius > r:
                raise ValueError(f"fish.groups.{g.name}.view_radius: {g.view_radius} is above perception.radius {r} "
                                 f"(the widest view in the tank: raise perception.radius, and give the groups "
                                 f"that see less their own view_radius)")
        return self

    def for_group(self, g: int) -> Config:
        """This config as group ``g`` sees it (``len(fish.groups)``: the tank's own brain): its
        ``[brain]`` with the group's brain, model and server, key variable, prompt and sampling."""
        if g >= len(self.fish.groups):
            return self
        grp = self.fish.groups[g]
        brain: dict[str, Any] = {}
        if grp.model is not None and grp.base_url is not None:
            ep = EndpointConfig(base_url=grp.base_url, model=grp.model, api_key_env=grp.api_key_env)
            brain.update(kind="llm", small=TierConfig(endpoints=[ep]), large=TierConfig())
        if grp.brain is not None:
            brain["kind"] = grp.brain
        for key in ("prompt", "temperature", "top_p", "chooser"):
            if getattr(grp, key) is not None:
                brain[key] = getattr(grp, key)
        if grp.api_key_env is not None:
            brain["api_key_env"] = grp.api_key_env
        if not grp.eats_food:  # its planner never chooses to forage (docs/species.md)
            brain["planner"] = {**self.brain.planner.model_dump(), "forage": 0.0}
        try:
            new_brain = BrainConfig.model_validate({**self.brain.model_dump(), **brain})
        except ValidationError as exc:
            where = f"invalid config: fish.groups.{grp.name}: "
            raise ConfigError(_format_error(exc).replace("invalid config: ", where)) from None
        update: dict[str, Any] = {"brain": new_brain}
        if grp.memory is not None:
            update["memory"] = self.memory.model_copy(update={"kind": grp.memory})
        return self.model_copy(update=update)


# ---------------------------------------------------------------- loading


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


READ_FILES: set[Path] = set()  # config and preset files read by this process: never an output


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        READ_FILES.add(Path(path).resolve())
    except (OSError, ValueError):  # ValueError: a NUL in the path (refused below, in one line)
        pass
    from .files import CONFIG_LIMIT, read_toml_bounded  # the one rule for every file read

    # a regular file of at most 4 MB: /dev/zero, a FIFO or a folder is one line, never read
    return read_toml_bounded(path, CONFIG_LIMIT, "config file", ConfigError)


def toml_value(value: Any) -> str:
    """A value as ``--set`` reads it back (TOML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return repr(value) if isinstance(value, float) else str(value)


def parse_override(text: str) -> tuple[list[str], Any]:
    """``'food.spawn_rate=0.001'`` → (['food', 'spawn_rate'], 0.001).

    The value is read as a TOML value when it is one (numbers, booleans, quoted strings,
    arrays); anything else is taken as a bare string and left for validation to judge.
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set expects section.key=value, got {text!r}")
    if key.count(".") > 15:
        raise ConfigError(f"--set key {key[:40]}… has {key.count('.') + 1} parts; a config key has a few")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        value = raw
    return key.split("."), value


def _format_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "config"
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    got = err.get("input")
    if isinstance(got, str) and "://" in got:
        got = redact_url(got)  # never echo credentials
    shown = repr(got) if len(repr(got)) <= 60 else repr(got)[:57] + "…"
    extra = f" (got {shown})" if err["type"] != "extra_forbidden" and not isinstance(got, dict) else ""
    more = f" [+{len(exc.errors()) - 1} more]" if len(exc.errors()) > 1 else ""
    if not err["loc"]:  # a check of the whole config: its message names the keys
        return f"invalid config: {msg}{more}"
    return f"invalid config: {loc}: {msg}{extra}{more}"


PRESETS_DIR = DEFAULT_CONFIG_PATH.parent / "presets"


def presets() -> list[str]:
    return sorted(p.stem for p in PRESETS_DIR.glob("*.toml"))


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    preset: str | None = None,
    **top: Any,
) -> Config:
    """Defaults ← ``preset`` ← ``path`` ← ``overrides`` (``section.key=value``) ← ``top`` (dotted keys).

    Raises:
        ConfigError: one-line message naming the file or key at fault.
    """
    data = _read_toml(DEFAULT_CONFIG_PATH) if DEFAULT_CONFIG_PATH.exists() else {}
    if preset is not None:
        if preset not in presets():
            raise ConfigError(f"unknown preset {preset!r}; choose one of: {', '.join(presets()) or 'none'}")
        data = _deep_merge(data, _read_toml(PRESETS_DIR / f"{preset}.toml"))
    if path is not None:
        data = _deep_merge(data, _read_toml(Path(path)))
    for text in overrides:
        keys, value = parse_override(text)
        patch: dict[str, Any] = {keys[-1]: value}
        for k in reversed(keys[:-1]):
            patch = {k: patch}
        data = _deep_merge(data, patch)
    for dotted, value in top.items():
        if value is None:
            continue
        keys = dotted.split(".")
        patch = {keys[-1]: value}
        for k in reversed(keys[:-1]):
            patch = {k: patch}
        data = _deep_merge(data, patch)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_error(exc)) from None
