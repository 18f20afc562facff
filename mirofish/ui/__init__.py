"""The pygame window: it draws snapshots and changes the world only through engine commands."""

import os

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


class WindowError(RuntimeError):
    """No display to open a window on; the message is one line."""
