"""Argent's scenario: a chain of agents writing a report, with injected drifts (chain.py, brief.py)."""
