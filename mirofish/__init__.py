"""MiroFish: an aquarium of agents where order emerges (see README.md and docs/).

The names a plug-in author writes against are here (:data:`__all__`, docs/extending.md), each
loaded from its module on first use, so ``import mirofish`` stays cheap and imports neither
pygame nor openai:

* a brain (docs/brains.md): :class:`Brain` (the protocol), what it is asked — :class:`Ask` —,
  what it answers — :class:`Decision` —, what its ``setup(ctx)`` gets — :class:`BrainContext` —,
  and :class:`ModelFailed` (``ctx.chat`` got no answer);
* a plan type: :class:`PlanType` (a row of ``mirofish.fish.plantypes.PLAN_TYPES``);
* a metric: :class:`Metric` (a row of the metrics table, or an entry point ``mirofish.metrics``)
  and :class:`Sample` (what a sampled metric's ``compute`` reads);
* a scene: :class:`SceneSpec`, :class:`SweepHooks`, and :class:`TurnScene` (a whole turn-by-turn
  scene from a small model class);
* the config: :class:`Config`, :func:`load_config`, :class:`ConfigError`;
* recordings: :class:`Recording` (an aquarium recording, read-only), :class:`ReplaySession`
  (played back tick by tick, with its metrics), :class:`RecordingError`;
* :mod:`mirofish.testing`: the checks a plug-in passes (``check_brain``, ``check_scene``,
  ``check_metric``, ``check_plan_type``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from . import testing as testing
    from .brains.user import Ask as Ask
    from .brains.user import BrainContext as BrainContext
    from .brains.user import Decision as Decision
    from .brains.user import ModelFailed as ModelFailed
    from .config import Config as Config
    from .config import ConfigError as ConfigError
    from .config import load_config as load_config
    from .fish.plantypes import PlanType as PlanType
    from .observe.metrics import Metric as Metric
    from .observe.metrics import Sample as Sample
    from .observe.recording import Recording as Recording
    from .observe.recording import RecordingError as RecordingError
    from .scenes.registry import SceneSpec as SceneSpec
    from .scenes.registry import SweepHooks as SweepHooks
    from .scenes.turnscene import TurnScene as TurnScene
    from .session.replay import ReplaySession as ReplaySession

__version__ = "0.1.0"

__all__ = [
    "Ask",
    "Brain",
    "BrainContext",
    "Config",
    "ConfigError",
    "Decision",
    "Metric",
    "ModelFailed",
    "PlanType",
    "Recording",
    "RecordingError",
    "ReplaySession",
    "Sample",
    "SceneSpec",
    "SweepHooks",
    "TurnScene",
    "load_config",
    "testing",
]

# where each name of __all__ lives (loaded on first use: module __getattr__, PEP 562)
_LAZY = {
    "Ask": "mirofish.brains.user",
    "BrainContext": "mirofish.brains.user",
    "Decision": "mirofish.brains.user",
    "ModelFailed": "mirofish.brains.user",
    "Config": "mirofish.config",
    "ConfigError": "mirofish.config",
    "load_config": "mirofish.config",
    "PlanType": "mirofish.fish.plantypes",
    "Metric": "mirofish.observe.metrics",
    "Sample": "mirofish.observe.metrics",
    "Recording": "mirofish.observe.recording",
    "RecordingError": "mirofish.observe.recording",
    "SceneSpec": "mirofish.scenes.registry",
    "SweepHooks": "mirofish.scenes.registry",
    "TurnScene": "mirofish.scenes.turnscene",
    "ReplaySession": "mirofish.session.replay",
}


@runtime_checkable
class Brain(Protocol):
    """A user brain (docs/brains.md): anything with ``decide(ask)`` — a class (made once per run
    with no arguments), an object, or a plain function of ``ask`` (which is not a ``Brain``
    instance, and is a brain all the same). ``decide`` gets an :class:`Ask` and returns a
    :class:`Decision`, a dict or a JSON string in the model brain's reply shape.

    Optional, read when present: ``setup(self, ctx)`` (a :class:`BrainContext`, before the first
    decision), ``answer(self, question, ask)`` (a survey's question), ``close(self)``, and the
    attributes ``name`` (what it is shown and counted as) and ``concurrency`` (worker threads,
    1 by default). ``mirofish.testing.check_brain`` checks one."""

    def decide(self, ask: Ask) -> Decision | dict[str, Any] | str: ...


def __getattr__(name: str) -> Any:
    if name == "testing":
        return importlib.import_module("mirofish.testing")
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'mirofish' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
