"""The scenes, one entry each: what the command line, replay, fork, export, sweep and the window
know about a scene comes from its :class:`SceneSpec` (pluggy's idea: a registry, not ``if scene
== …`` chains).

A spec names the scene's parts by reference (``"package.module:attribute"``, or gives the objects
themselves), resolved only when used, so that a scene's heavy modules load only for the command
that needs them. A built-in scene's spec holds its model's parts only (``records``, ``export``,
``sweep``); its command line's parts are :mod:`mirofish.cli.fronts`'s and its window
:mod:`mirofish.ui.fronts`'s, so ``scenes/`` names neither (the types: :mod:`.parts`). The parts:

================ ==========================================================================
``arguments``    ``(parser)``: the flags of the scene's own command (``run.py NAME …``)
``run``          ``(args) -> exit code``: that command (headless JSON, ``--record``, the window)
``replay``       ``(args) -> exit code``: ``replay REC`` of this scene's recording (checked)
``fork``         ``(args) -> exit code``: ``fork REC …`` of this scene's recording
``fork_arguments`` ``(parser)``: the fork flags only this scene reads (added to ``fork``)
``export``       ``(path, out_dir, fmt, overwrite) -> dict``: ``export REC --tables DIR``
``sweep``        a :class:`SweepHooks`: a sweep file's ``scene = "NAME"``
``window``       ``() -> view``: a fresh window view for the live window's scene switcher (S)
================ ==========================================================================

``records``: what its recordings hold — ``"ticks"`` (the aquarium's recording format) or
``"turns"`` (the turn-by-turn container, :mod:`mirofish.observe.turns`); a recording's header
names its scene, and replay, fork and export go to that scene's spec.

The built-in scenes are listed in :data:`BUILT_IN`; a scene from another package joins through
the entry point group ``mirofish.scenes`` (each entry: a ``SceneSpec``), the same door. For a
turn-by-turn scene of your own, :mod:`mirofish.scenes.turnscene` makes the whole spec — record,
replay, fork, export, sweep — from a small model class (docs/scenes.md).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from .parts import SceneError as SceneError
from .parts import SceneSpec as SceneSpec
from .parts import SweepHooks as SweepHooks
from .parts import resolve as resolve

GROUP = "mirofish.scenes"  # the entry point group of scenes from other packages


BUILT_IN = (
    "mirofish.scenes.aquarium:SPEC",
    "mirofish.scenes.referential.spec:SPEC",
    "mirofish.scenes.negotiation.spec:SPEC",
    "mirofish.scenes.handoff.spec:SPEC",
)

_loaded: list[SceneSpec] | None = None
_problems: list[str] = []


def scenes() -> list[SceneSpec]:
    """Every scene: the built-in ones, then those of installed packages (entry points
    ``mirofish.scenes``), in that order; a plug-in that fails to load is left out and its
    problem kept in :func:`problems` (one line each)."""
    global _loaded
    if _loaded is None:
        found: list[SceneSpec] = [resolve(ref, "built-in scene") for ref in BUILT_IN]
        for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
            try:
                spec = ep.load()
            except Exception as exc:  # noqa: BLE001 — someone else's package: its failure is one line, not ours
                _problems.append(f"scene plug-in {ep.name} ({ep.value}) does not load: {type(exc).__name__}: {exc}")
                continue
            problem = _clash(spec, found, ep.name)
            if problem:
                _problems.append(problem)
                continue
            found.append(spec)
        _loaded = found
    return list(_loaded)


def _clash(spec: Any, found: list[SceneSpec], entry: str) -> str | None:
    if not isinstance(spec, SceneSpec):
        return f"scene plug-in {entry} is not a mirofish.scenes.registry.SceneSpec (it is {type(spec).__name__})"
    taken = {s.name for s in found} | {s.command_name for s in found}
    if spec.name in taken or spec.command_name in taken:
        return f"scene plug-in {entry}: the name {spec.name!r} is taken by another scene"
    return None


def problems() -> list[str]:
    """What went wrong loading scene plug-ins (empty when nothing did)."""
    scenes()
    return list(_problems)


def scene(name: str) -> SceneSpec:
    """The scene named ``name`` (SceneError naming the scenes there are)."""
    for s in scenes():
        if s.name == name:
            return s
    raise SceneError(f"no scene {name!r}; the scenes are {', '.join(s.name for s in scenes())}")


def with_part(what: str) -> list[SceneSpec]:
    """The scenes that have the part ``what`` (e.g. those that sweep)."""
    return [s for s in scenes() if s.has(what)]


def turn_scenes() -> tuple[str, ...]:
    """The scenes recorded turn by turn."""
    return tuple(s.name for s in scenes() if s.records == "turns")


def reset() -> None:
    """Forget the loaded scenes (tests that install a plug-in)."""
    global _loaded
    _loaded = None
    _problems.clear()
