"""Brains: where decisions come from. ``instinct`` is the embedded default and fallback tier."""

from .base import TIERS, DecisionBatch, DecisionSource, RequestBatch
from .instinct import InstinctBrain

__all__ = ["TIERS", "DecisionBatch", "DecisionSource", "InstinctBrain", "RequestBatch"]
