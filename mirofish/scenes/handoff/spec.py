"""Argent's report chain as a scene of the registry (mirofish/scenes/registry.py): a command and
a window (cli/fronts.py, ui/fronts.py); it keeps no recording and does not sweep (its arms run side
by side in one command)."""

from __future__ import annotations

from ..parts import SceneSpec

SPEC = SceneSpec(
    name="handoff", help="Argent's scenario: analyst, writer and reviewer write a report, with a hand-over and "
                         "injected drifts; which signal layers catch them",
    doc="a report chain that signals drift")
