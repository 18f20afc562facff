"""The six actions — an enum, never free text (docs/design.md §2)."""

from __future__ import annotations

from enum import IntEnum


class Action(IntEnum):
    MOVE_N = 0
    MOVE_S = 1
    MOVE_W = 2
    MOVE_E = 3
    EAT = 4
    REST = 5

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Action:
        """``'move_n'`` / ``'MOVE_N'`` → Action.MOVE_N; raises ValueError naming the choices."""
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown action {text!r}; choose one of {', '.join(ACTION_NAMES)}") from None


ACTION_NAMES = tuple(a.label for a in Action)
N_ACTIONS = len(Action)
DIRECTION_NAMES = ("north", "south", "west", "east")
# (dx, dy) of the four moves, tank coordinates (y grows downward).
MOVE_DXDY = ((0, -1), (0, 1), (-1, 0), (1, 0))
