"""Observation: metrics, snapshots consumers, terminal view (reads frames and snapshots only)."""
