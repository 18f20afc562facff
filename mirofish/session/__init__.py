"""Sessions: one layer for everything that runs or shows a tank (live, replay, fork).

See :mod:`mirofish.session.base` for the protocol they share. The window, the terminal
view and the CLI use sessions and the snapshots they hand out; none of them builds or
changes a world itself.
"""

from .base import Session
from .fork import ForkSession, ForkSource
from .live import LiveSession
from .replay import ReplaySession, ReplaySource, fork, fork_recording
from .tools import export_window, trace_fish

__all__ = ["ForkSession", "ForkSource", "LiveSession", "ReplaySession", "ReplaySource", "Session",
           "export_window", "fork", "fork_recording", "trace_fish"]
