"""A scene's spec and its parts' types (the registry, :mod:`mirofish.scenes.registry`, lists
the specs). This module imports nothing of the package: a scene's spec module imports its types
from here, so the registry naming the spec modules closes no cycle.

A spec is the model's side of a scene: its name, what its recordings hold, and the parts that
need no command line and no window — ``export``, ``sweep``. The command line's side of a
built-in scene (its command's flags and run, ``replay``, ``fork`` and the fork's flags) lives in
:mod:`mirofish.cli.fronts`, and its window in :mod:`mirofish.ui.fronts`: ``scenes/`` names
neither ``cli/`` nor ``ui/``, not even by a ``"module:attribute"`` string. A plug-in scene (or
one :mod:`mirofish.scenes.turnscene` makes) may give those parts in its spec itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class SceneError(ValueError):
    """A scene that cannot be loaded or used; the message is one line."""


@dataclass(frozen=True)
class SweepHooks:
    """How a sweep runs a scene (mirofish/sweep): ``length`` names what a run's ``length``
    counts; ``metrics`` are the figures a sweep's table and plots show unless the file names
    others; ``check(task)`` says why a run's settings cannot run (None: they can);
    ``summarize(task, record_dir)`` runs it and returns its summary; ``command(task)`` is the
    single command that gives the same summary; ``presets``: the scene has config presets;
    ``ask_server(params, base_url, model)``: how ``sweep --base-url --model`` makes every run
    ask that server (it edits the sweep file's ``params``; None: the scene's runs ask none);
    ``summarize_joined(tasks)``: the summaries of runs of one setting (their seeds differ), run
    together — each what ``summarize`` gives it, but for its timings — or None: run each alone
    (None as the hook: the scene's runs always run alone); ``joins_across``: the settings such
    runs may also differ by (the aquarium's live settings: one joined world holds them per tank)."""

    length: str
    metrics: tuple[str, ...]
    check: Callable[[Any], str | None]
    summarize: Callable[[Any, str | None], dict[str, Any]]
    command: Callable[[Any], list[str]]
    presets: bool = False
    ask_server: Callable[[dict[str, Any], str, str], None] | None = None
    summarize_joined: Callable[[list[Any]], list[dict[str, Any]] | None] | None = None
    joins_across: tuple[str, ...] = ()


@dataclass(frozen=True)
class SceneSpec:
    """One scene (see the module doc). ``command``: its command's name (default: its name)."""

    name: str
    help: str
    arguments: Any = None  # each part: a "module:attribute" reference, or the object itself
    run: Any = None  # (a built-in scene's command parts are the command line's: cli/fronts.py)
    records: str = ""
    replay: Any = None
    fork: Any = None
    fork_arguments: Any = None
    export: Any = None
    sweep: Any = None
    window: Any = None
    command: str = ""
    fork_usage: str = ""  # how its fork is asked for, in a line ("--at-turn N --repair STRATEGY")
    no_exchanges: str = ""  # why its recordings hold no model exchanges to export (export --otel's line)
    doc: str = ""
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise SceneError(f"scene {self.name!r}: a scene's name is a word (letters, digits, _)")
        if self.records not in ("", "ticks", "turns"):
            raise SceneError(f"scene {self.name}: records {self.records!r} is not '', 'ticks' or 'turns'")

    @property
    def command_name(self) -> str:
        return self.command or self.name

    def part(self, what: str) -> Any:
        """The part ``what`` (``"run"``, ``"replay"``, ``"sweep"`` …) resolved; SceneError if the
        scene has none or its reference does not load."""
        ref = getattr(self, what)
        if ref is None:
            raise SceneError(f"the {self.name} scene has no {what}")
        if not isinstance(ref, str):
            return ref
        if ref not in self._cache:
            self._cache[ref] = resolve(ref, f"scene {self.name}: {what}")
        return self._cache[ref]

    def has(self, what: str) -> bool:
        return getattr(self, what) is not None


def resolve(ref: str, what: str = "reference") -> Any:
    """``"package.module:attribute"`` (attribute may be dotted) → the object; SceneError naming it."""
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise SceneError(f"{what}: {ref!r} is not 'module:attribute'")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise SceneError(f"{what}: cannot import {module_name} ({exc})") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SceneError(f"{what}: {module_name} has no {attr}") from None
    return obj


_FRONTS: dict[str, Any] = {}  # a front entry's resolved reference (cli/fronts.py, ui/fronts.py)


def front_part(spec: SceneSpec, what: str, ref: str | None) -> Any:
    """A scene's part as a front end sees it: the spec's own ``what``, else ``ref`` (the front
    end's entry for this scene, ``"module:attribute"``) resolved once; SceneError when it has
    neither or it does not load."""
    if spec.has(what):
        return spec.part(what)
    if ref is None:
        raise SceneError(f"the {spec.name} scene has no {what}")
    if ref not in _FRONTS:
        _FRONTS[ref] = resolve(ref, f"scene {spec.name}: {what}")
    return _FRONTS[ref]
