"""The pygame window: it draws snapshots and changes the world only through engine commands."""


class WindowError(RuntimeError):
    """No display to open a window on; the message is one line."""
