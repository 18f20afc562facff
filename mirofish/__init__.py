"""MiroFish: an aquarium of agents where order emerges (see docs/design.md and README.md)."""

__version__ = "0.1.0"
