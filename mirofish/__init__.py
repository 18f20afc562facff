"""MiroFish: an aquarium of agents where order emerges (see README.md and docs/)."""

__version__ = "0.1.0"

_INTERRUPTS: list[int] = []  # Ctrl-C presses seen by the handler of :func:`catch_interrupts`


def catch_interrupts() -> None:
    """Ctrl-C raises KeyboardInterrupt as always, and is also remembered: Python drops one that
    lands in a callback it cannot raise from (an import's module lock: "Exception ignored in"),
    so long commands ask :func:`interrupted` between steps too. The command line installs it
    (``python run.py``, ``python -m mirofish``); importing MiroFish as a library does not."""
    import signal

    def on_sigint(signum: int, frame: object) -> None:
        _INTERRUPTS.append(signum)
        raise KeyboardInterrupt

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_sigint)


def interrupted() -> bool:
    """Whether Ctrl-C was pressed since :func:`catch_interrupts` (even if its exception was lost)."""
    return bool(_INTERRUPTS)
