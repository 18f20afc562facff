"""A memory of a person's own, attached to the tank they start (fish/recall.py, docs/memory.md).

``memory.kind`` other than ``two_level`` or ``none`` names one: ``FILE.py:NAME``,
``MODULE:NAME`` or an installed ``mirofish.memories`` entry point. Only the commands a person
starts with that setting load it (``live``, its window and ``--headless``): a recording or a
reef that names one is data, and replaying or forking it uses ``two_level`` (never importing
what a file names: docs/recordings.md, "a recording is data").
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

import numpy as np

from ..brains.user import BrainError, bounded, load_object
from ..config import Config
from ..fish.recall import BUILT_IN, RECALL_TIMEOUT_S, Events, Guarded, NoMemory, TwoLevel

GROUP = "mirofish.memories"
LOAD_TIMEOUT_S = 10.0


class MemoryLoadError(BrainError):
    """A memory that cannot be loaded or made (one line; a ConfigError, so the command line exits 2)."""


def load_memory(kind: str, n_fish: int, timeout_s: float = LOAD_TIMEOUT_S) -> Any:
    """The memory ``kind`` names, made for ``n_fish`` fish (a class is called with ``n_fish``,
    or with nothing when it takes no argument; an object is used as it is)."""
    if ":" in kind:
        try:
            obj = load_object(kind, "memory", timeout_s)
        except BrainError as exc:
            raise MemoryLoadError(str(exc)) from None
    else:
        found = [ep for ep in importlib.metadata.entry_points(group=GROUP) if ep.name == kind]
        if not found:
            raise MemoryLoadError(f"unknown memory {kind!r}: not {' or '.join(BUILT_IN)}, not FILE.py:NAME or "
                               f"MODULE:NAME, and no installed {GROUP} entry point of that name")
        try:
            obj = bounded(found[0].load, timeout_s, "loading the entry point")
        except BrainError as exc:
            raise MemoryLoadError(f"memory {kind}: the entry point does not load: {exc}") from None

    def make() -> Any:
        if not isinstance(obj, type):
            return obj
        try:
            return obj(n_fish)
        except TypeError:
            return obj()

    try:
        memory = bounded(make, timeout_s, f"making memory {kind}")
    except BrainError as exc:
        raise MemoryLoadError(f"memory {kind}: {exc}") from None
    if not callable(getattr(memory, "recall", None)):
        raise MemoryLoadError(f"memory {kind}: it has no recall(fish, tick, view) method (docs/memory.md)")
    return memory


def _embedding_client(cfg: Config) -> Any:
    """The small tier's first server, for the vector memory's embeddings (None: the local embedder)."""
    if cfg.memory.embedder != "server":
        return None
    endpoints = cfg.brain.small.endpoints
    if not endpoints:
        raise MemoryLoadError("memory.embedder = server needs a model server (--base-url, or brain.small.endpoints)")
    from ..brains.client import ModelClient

    ep = endpoints[0]
    return ModelClient(ep.base_url, ep.model, timeout_s=cfg.brain.request_timeout_s, seed=cfg.seed)


def _one(world: Any, cfg: Config) -> tuple[Any, str, float | None]:
    """The memory ``cfg.memory.kind`` names, made for ``world``: (it, its name, the time each
    call may take — None for shipped code, RECALL_TIMEOUT_S for a person's own)."""
    kind = cfg.memory.kind
    if kind == "two_level":
        return TwoLevel(world), kind, None
    if kind == "none":
        return NoMemory(), kind, None
    if kind == "vector":  # shipped: retrieval and reflection (the optional extra "memory")
        try:
            from ..brains.vector_memory import VectorMemory

            return VectorMemory(world.school.n, cfg.memory, _embedding_client(cfg)), kind, None
        except ImportError as exc:
            raise MemoryLoadError(f"memory vector needs the optional extra memory: pip install -e '.[memory]' "
                                  f"({exc})") from None
    return load_memory(kind, world.school.n), kind.rpartition(":")[2] or kind, RECALL_TIMEOUT_S


class ByGroup:
    """A mixed tank's memories: each group's own (``[[fish.groups]] memory``), each held on its
    own (fish/recall.Guarded: one group's failure or hang never reaches another's), each fish's
    recall asked of its group's, each tick's events told to each group's that listens."""

    def __init__(self, group_of: np.ndarray, parts: list[Guarded], names: list[str]):
        self.group_of, self.parts, self.names = group_of, parts, names
        self.name = "by group: " + ", ".join(names)

    @property
    def fallbacks(self) -> int:
        return sum(p.fallbacks for p in self.parts)

    @property
    def problems(self) -> list[str]:
        return [line for p in self.parts for line in p.problems]

    def remember(self, events: Events) -> None:
        if not len(events):
            return
        groups = self.group_of[events.fish]
        for g, part in enumerate(self.parts):
            pick = np.flatnonzero(groups == g)
            if part.wants_events and pick.size:
                part.remember(Events(events.fish[pick], events.tick[pick], events.code[pick], events.arg[pick]))

    def recall(self, fish: int, tick: int, view: str) -> tuple[list[str], list[str]]:
        return self.parts[int(self.group_of[fish])].recall(fish, tick, view)

    def recalled(self, fish: int) -> tuple[tuple[int, float], ...]:
        return self.parts[int(self.group_of[fish])].recalled(fish)

    def get_state(self) -> Any:
        return [p.get_state() for p in self.parts]

    def set_state(self, state: Any) -> None:
        for p, st in zip(self.parts, state or []):
            p.set_state(st)


def attach(world: Any, cfg: Config) -> Guarded | None:
    """Attach the memory ``cfg`` names — the tank's, or each group's in a mixed tank — to
    ``world`` (None: the tank's two-level or none, every group the same: nothing to do)."""
    groups = cfg.fish.groups
    if groups and any(g.memory is not None for g in groups):
        group_of = np.array(cfg.fish.group_of(), np.int64)
        parts, names = [], []
        for g, group in enumerate(cfg.fish.group_names()):
            memory, name, timeout_s = _one(world, cfg.for_group(g))
            parts.append(Guarded(memory, TwoLevel(world), f"{group}={name}", timeout_s))
            names.append(f"{group}={name}")
        router = ByGroup(group_of, parts, names)
        held_groups: Guarded = world.attach_memory(router, router.name)
        return held_groups
    if cfg.memory.kind in BUILT_IN:
        return None
    memory, name, timeout_s = _one(world, cfg)
    held: Guarded = world.attach_memory(memory, name, timeout_s)
    return held
