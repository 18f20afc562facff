"""Argent's scenario: a report chain with a hand-over and injected drifts, and which signal
layers catch them — measured per arm on the same seeded tasks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mirofish.scenes.handoff.brief import draw_brief
from mirofish.scenes.handoff.chain import ARMS, Chain, evaluate

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def arms():
    return {name: evaluate(80, 2, layers) for name, layers in ARMS.items()}


def test_signals_catch_the_drifts_that_reach_the_report_and_without_them_none_is_caught(arms):
    none, l1, l12 = arms["none"], arms["L1"], arms["L1+2"]
    assert none["major_drifts"] > 60 and none["major_intercepted_share"] == 0 and none["interventions_per_task"] == 0
    assert l12["major_intercepted_share"] >= 0.8 and l12["completion_rate"] > none["completion_rate"] + 0.3
    # layer 1 sees what is required (invented and lost requirements), not what a word means
    assert l1["by_kind"]["invented"]["major_intercepted"] == l1["by_kind"]["invented"]["major"] > 0
    assert l1["by_kind"]["misunderstanding"]["intercepted"] == 0
    assert l12["by_kind"]["misunderstanding"]["major_intercepted"] == l12["by_kind"]["misunderstanding"]["major"]
    assert 0 < l1["signal_token_share"] < l12["signal_token_share"] < arms["L1+2+3"]["signal_token_share"]


def test_without_layer_1_invented_and_lost_requirements_go_unseen():
    """Layer 1 carries the checklist: remove it and what layers 2-3 cannot see is never caught
    (layer 2 still compares readings, with the receiver's own instead of the registry's)."""
    without = evaluate(80, 2, frozenset({2, 3}))
    assert without["by_kind"]["invented"]["intercepted"] == 0 and without["by_kind"]["lost"]["intercepted"] == 0
    assert without["by_kind"]["misunderstanding"]["intercepted"] > 0
    with_l1 = evaluate(80, 2, frozenset({1, 2, 3}))
    assert without["major_intercepted_share"] < 0.6 * with_l1["major_intercepted_share"]


def test_a_drift_changes_what_the_agent_writes_not_only_a_flag():
    """A misunderstood concept makes the agent pick other facts (the same words, another meaning)."""
    brief = draw_brief(3, 11)
    plain = Chain(brief, frozenset(), 3)
    shifted = Chain(brief, frozenset(), 3)
    shifted.minds["analyst"].concepts["growth"] = "growth in market share"
    a = plain._write("analyst", "insights", plain.minds["analyst"])
    b = shifted._write("analyst", "insights", shifted.minds["analyst"])
    assert a != b and "market share" in b


def test_the_command_line_prints_the_four_arms_and_refuses_bad_input():
    out = subprocess.run([sys.executable, "run.py", "handoff", "--headless", "--tasks", "20", "--seed", "3"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    data = json.loads(out.stdout)
    assert set(data) == set(ARMS) and all(v["tasks"] == 20 for v in data.values())
    assert "estimated" in data["L1"]["tokens"]
    bad = subprocess.run([sys.executable, "run.py", "handoff", "--headless", "--layers", "L9"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_model_writers_against_the_bundled_server_and_a_failing_one():
    """A model writes every message from its agent's belief; when it fails the template
    writes it and the failure is counted — the checks and drifts do not depend on who wrote."""
    from mirofish.brains.testserver import TestServer

    with TestServer() as server:
        out = subprocess.run([sys.executable, "run.py", "handoff", "--headless", "--tasks", "6", "--seed", "1",
                              "--layers", "L1+2", "--agents", "llm", "--base-url", server.url, "--model", "m"],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert server.completions == 66  # (and one embedding call per message: the concept drift)
    data = json.loads(out.stdout)
    assert data["model_made"] == {"messages": 66, "of": 66, "share": 1.0} and data["model_failures"] == {}
    assert data["concept_measure"] == "embeddings" and data["server_message_tokens"] > 66 * 20
    assert data["major_intercepted_share"] == evaluate(6, 1, ARMS["L1+2"])["major_intercepted_share"]
    with TestServer(fault="garbage", fault_every=3) as server:
        out = subprocess.run([sys.executable, "run.py", "handoff", "--headless", "--tasks", "6", "--seed", "1",
                              "--layers", "L1", "--agents", "llm", "--base-url", server.url, "--model", "m"],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
    data = json.loads(out.stdout)
    assert 0 < data["model_made"]["share"] < 1 and data["model_failures"].get("writer_empty", 0) > 0
