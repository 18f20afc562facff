"""MiroFish: an aquarium of agents where order emerges (see README.md and docs/)."""

__version__ = "0.1.0"
