"""Reusable measurements over whole runs (used by the benchmarks and the acceptance tests)."""

from __future__ import annotations

import numpy as np

from ..config import Config


def schooling_run(cfg: Config, ticks: int):
    """Run ``cfg`` for ``ticks`` ticks; return (engine, schooling degree over the first 100
    ticks, schooling degree over the last 1,000 ticks)."""
    from ..engine import make_engine

    engine = make_engine(cfg)
    first, last = [], []
    for t in range(ticks):
        engine.step()
        degree = engine.metrics.current()["schooling_degree"]
        if t < 100:
            first.append(degree)
        elif t >= ticks - 1000:
            last.append(degree)
    return engine, float(np.mean(first)), float(np.mean(last))
