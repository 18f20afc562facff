"""Negotiation with dynamic grounding, bandit-chosen repairs and Argent signals (docs/design.md §5)."""
