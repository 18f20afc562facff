"""The window's side of the built-in scenes: which view a scene shows in the live window's scene
switcher (S). The spec in ``scenes/`` names nothing of the window (see :mod:`mirofish.cli.fronts`);
a plug-in scene may give ``window`` in its spec itself, and :func:`window` reads the spec first."""

from __future__ import annotations

from typing import Any

from ..scenes.parts import SceneSpec, front_part

WINDOWS: dict[str, str] = {  # scene name -> "module:attribute" of its window view (a class: a fresh one)
    "aquarium": "mirofish.ui.scenes.aquarium:AquariumScene",
    "referential": "mirofish.ui.scenes.referential:ReferentialScene",
    "negotiation": "mirofish.ui.scenes.negotiation:NegotiationScene",
    "handoff": "mirofish.ui.scenes.handoff:HandoffScene",
}


def has_window(spec: SceneSpec) -> bool:
    return spec.has("window") or spec.name in WINDOWS


def window(spec: SceneSpec) -> Any:
    """The scene's window view maker (its spec's ``window``, else its entry here)."""
    return front_part(spec, "window", WINDOWS.get(spec.name))
