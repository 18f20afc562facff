"""Negotiation with dynamic grounding, bandit-chosen repairs and Argent signals (seeds 002, 001)."""
