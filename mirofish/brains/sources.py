"""Which decision source a config names."""

from __future__ import annotations

from ..config import Config
from .base import DecisionSource
from .instinct import instinct_source


def make_source(cfg: Config, mode: str) -> DecisionSource:
    """The brain ``cfg.brain.kind`` names: the instinct brain, or the model worker pool."""
    if cfg.brain.kind == "llm":
        from .pool import ModelPool  # imports openai; the core never does

        return ModelPool(cfg, mode)
    return instinct_source(cfg)
