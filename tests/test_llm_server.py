"""Opt-in: a short lockstep tank against a *real* OpenAI-compatible server.

    MIROFISH_LLM_URL=http://127.0.0.1:8000/v1 MIROFISH_LLM_MODEL=smollm2 python -m pytest -m llm_server

It asserts protocol-level facts only (a 135M model copies the prompt's first example):
every applied decision is a plan with a known goal and a horizon, usage is counted, and
every fallback is counted with its reason.
"""

import os

import numpy as np
import pytest

from mirofish.config import load_config
from mirofish.session import LiveSession


@pytest.mark.llm_server
def test_short_tank_against_a_real_server():
    url, model = os.environ.get("MIROFISH_LLM_URL"), os.environ.get("MIROFISH_LLM_MODEL")
    assert url and model, "set MIROFISH_LLM_URL and MIROFISH_LLM_MODEL to a running OpenAI-compatible server"
    cfg = load_config(**{"fish.count": 4, "seed": 3, "brain.kind": "llm",
                         "brain.small.endpoints": [{"base_url": url, "model": model, "max_concurrency": 1}],
                         "brain.timeout_s": 120.0, "brain.request_timeout_s": 60.0})
    eng = LiveSession(cfg)
    applied = []
    eng.observers.append(lambda f: applied.extend((int(g), int(h)) for b in f.applied
                                                  for g, h in zip(b.goals, b.horizons)))
    try:
        eng.run(8)
    finally:
        eng.close()
    status = eng.source.status()
    assert applied and all(1 <= g <= 5 and h > 0 for g, h in applied)  # plans, each with a horizon
    assert status["calls"] > 0 and status["tokens"]["prompt"] > 0  # usage counted
    tiers = eng.metrics.decisions_by_tier()
    assert tiers.get("fallback", 0) == sum(status["fallbacks"].values())  # every fallback has a reason
    assert status["decisions"] == sum(tiers.values())
    assert np.isfinite(status["tokens"]["per_model_decision"])
