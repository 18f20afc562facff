"""Which decision source a config names."""

from __future__ import annotations

from ..config import Config
from .base import DecisionSource
from .exchanges import ReplyCache
from .instinct import instinct_source


def make_source(cfg: Config, mode: str, cache: ReplyCache | None = None,
                asked_before: set[int] | None = None) -> DecisionSource:
    """The brain ``cfg.brain.kind`` names: the instinct brain, or the model worker pool (with
    a reply cache, and the fish that asked before it started: see :class:`~.pool.ModelPool`)."""
    if cfg.brain.kind == "llm":
        from .pool import ModelPool  # imports openai; the core never does

        return ModelPool(cfg, mode, cache=cache, asked_before=asked_before)
    return instinct_source(cfg)
