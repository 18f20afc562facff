"""Sessions: one layer for everything that runs or shows a tank (live, replay, fork).

See :mod:`mirofish.session.base` for the protocol they share. The window, the terminal
view and the CLI use sessions and the snapshots they hand out; none of them builds or
changes a world itself.
"""

from .base import Session
from .fork import ForkSession, ForkSource, fork
from .live import LiveSession
from .replay import ReplaySession, ReplaySource
from .tools import export_window, trace_fish

__all__ = ["ForkSession", "ForkSource", "LiveSession", "ReplaySession", "ReplaySource", "Session",
           "export_window", "fork", "trace_fish"]
