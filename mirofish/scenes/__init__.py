"""Scenes: the aquarium and the alternate scenes behind one protocol (see base.py)."""
