"""The command line's side of the built-in scenes: each one's command (its flags and run), and
the ``replay`` and ``fork`` of its recordings (with the fork's own flags).

A scene's spec (:mod:`mirofish.scenes.parts`) is its model's side and names nothing of
``cli/`` or ``ui/``; these entries live here, on the floor that uses them, so the registry
closes no import cycle (``tests/test_sessions.py`` reads ``"module:attribute"`` strings as
imports). A plug-in scene gives its command parts in its spec itself (a
:class:`~mirofish.scenes.turnscene.TurnScene` makes them): :func:`part` reads the spec first.
"""

from __future__ import annotations

from typing import Any

from ..scenes.parts import SceneSpec, front_part

# scene name -> part -> "module:attribute" (resolved when used: a command loads only its own)
COMMANDS: dict[str, dict[str, str]] = {
    "aquarium": {"arguments": "mirofish.cli.aquarium:arguments", "run": "mirofish.cli.aquarium:run",
                 "replay": "mirofish.cli.aquarium:replay", "fork": "mirofish.cli.aquarium:fork",
                 "fork_arguments": "mirofish.cli.aquarium:fork_arguments"},
    "referential": {"arguments": "mirofish.cli.referential:arguments", "run": "mirofish.cli.referential:run",
                    "replay": "mirofish.cli.referential:replay"},
    "negotiation": {"arguments": "mirofish.cli.negotiation:arguments", "run": "mirofish.cli.negotiation:run",
                    "replay": "mirofish.cli.negotiation:replay", "fork": "mirofish.cli.negotiation:fork",
                    "fork_arguments": "mirofish.cli.negotiation:fork_arguments"},
    "handoff": {"arguments": "mirofish.cli.handoff:arguments", "run": "mirofish.cli.handoff:run"},
}
PARTS = ("arguments", "run", "replay", "fork", "fork_arguments")  # the command line's parts of a scene


def has(spec: SceneSpec, what: str) -> bool:
    """Whether ``spec``'s scene has the part ``what`` (its own, or its command line's here)."""
    return spec.has(what) or (what in PARTS and what in COMMANDS.get(spec.name, {}))


def part(spec: SceneSpec, what: str) -> Any:
    """The part ``what`` of ``spec``'s scene resolved: the spec's own, else its entry here;
    SceneError when it has none or it does not load."""
    return front_part(spec, what, COMMANDS.get(spec.name, {}).get(what) if what in PARTS else None)
