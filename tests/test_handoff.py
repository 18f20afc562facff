"""Argent's scenario: a report chain with a hand-over and injected drifts, and which signal
layers catch them — measured per arm on the same seeded tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mirofish.scenes.handoff.brief import draw_brief
from mirofish.scenes.handoff.chain import ARMS, Chain, Evidence, evaluate, heard_in

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


def test_confidence_comes_from_what_the_agent_heard():
    """Layer 2's confidence is the agent's evidence: readings stated in what it received
    support or contradict its own; a bare word ("growth") lends weak support to whatever it
    reads; with nothing heard it is a coin toss, and it names the reading it heard instead."""
    stated, bare = heard_in("Growth here means unit sales growth. The fiscal Q3 figures and the growth of Arvo.")
    assert stated["growth"]["unit sales growth"] == 1 and stated["quarter"]["the fiscal quarter"] == 1
    assert "the calendar quarter" not in stated["quarter"] and bare["growth"] == 2  # "fiscal Q3" is not calendar
    ev = Evidence()
    assert ev.confidence("growth", "unit sales growth") == 0.5 and ev.alternative("growth", "unit sales growth") is None
    ev.hear("Growth here means revenue growth year over year.")
    assert ev.confidence("growth", "revenue growth year over year") > 0.6 > ev.confidence("growth", "unit sales growth")
    assert ev.alternative("growth", "unit sales growth") == "revenue growth year over year"


def test_agents_write_layer_2_from_their_evidence_and_it_catches_what_they_flag():
    """With agent-written layer 2 the sender states only the readings it is unsure of; a
    drifted reading is flagged because it contradicts what the agent heard — not because the
    injection put it on the wire — and the oracle (every reading held) catches no more while
    sending many times the readings. An agent that heard nothing against its drifted reading
    (only bare words) is sure of it and does not flag it."""
    agent, oracle = (evaluate(80, 2, ARMS["L1+2"], l2_source=src) for src in ("agent", "oracle"))
    mis = agent["by_kind"]["misunderstanding"]
    assert mis["major"] > 20 and agent["major_caught_by"]["layer2"] == mis["major_intercepted"] >= 0.9 * mis["major"]
    assert oracle["major_intercepted_share"] >= agent["major_intercepted_share"]
    assert 5 * agent["layer2_readings"]["sent"] < oracle["layer2_readings"]["sent"]
    assert agent["layer2_readings"]["drifted"] / agent["layer2_readings"]["sent"] > \
        5 * oracle["layer2_readings"]["drifted"] / oracle["layer2_readings"]["sent"]
    chain = Chain(draw_brief(3, 11), ARMS["L1+2"], 3)
    chain.minds["writer"] = chain.minds["analyst"].copy()
    chain.minds["writer"].concepts["growth"] = "unit sales growth"
    chain.evidence["writer"] = Evidence()
    chain.evidence["writer"].hear("Insights on growth, growth and growth.")  # bare words only
    assert "growth" not in chain.unsure("writer")
    chain.evidence["writer"].hear("Growth here means revenue growth year over year.")
    assert chain.unsure("writer")["growth"][2] == "revenue growth year over year"


def test_compact_signals_catch_the_same_drifts_for_a_fraction_of_the_tokens():
    """The compact wire form (task id; one token group a flagged reading; calibrations by id)
    catches exactly what the full one does, and layers 1+2 written by the agents reach the
    source's goal: at least 80 % of major drifts at no more than 5 % extra tokens."""
    full, compact = (evaluate(80, 2, ARMS["L1+2"], wire_form=w) for w in ("full", "compact"))
    assert compact["major_intercepted_share"] == full["major_intercepted_share"] >= 0.8
    assert compact["extra_token_share"] <= 0.05 < full["extra_token_share"]
    assert compact["extra_token_share"] < 0.6 * full["extra_token_share"]


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


@pytest.mark.parametrize("argv, env, names", [
    (["--tasks", "0"], {}, "--tasks"),
    (["--timeout", "-1"], {}, "--timeout"),
    (["--tasks", "2", "--seeds", "1"], {"MIROFISH_TOKENIZER": "no-such-tokenizer.json"}, "no-such-tokenizer.json"),
])
def test_the_signal_benchmark_refuses_bad_input_in_one_line_before_any_work(argv, env, names):
    out = subprocess.run([sys.executable, "bench/handoff_signals.py", *argv], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, env={**os.environ, **env})
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and names in out.stderr


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
    # the model wrote its own layer 2 (what it is unsure of), and its flags caught misunderstandings
    assert data["model_layer2"]["stated"] > 6 and data["model_layer2"]["invalid"] == 0
    assert data["major_caught_by"]["layer2"] > 0 and data["major_intercepted_share"] >= 0.8
    with TestServer(fault="garbage", fault_every=3) as server:
        out = subprocess.run([sys.executable, "run.py", "handoff", "--headless", "--tasks", "6", "--seed", "1",
                              "--layers", "L1", "--agents", "llm", "--base-url", server.url, "--model", "m"],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
    data = json.loads(out.stdout)
    assert 0 < data["model_made"]["share"] < 1 and data["model_failures"].get("writer_empty", 0) > 0
    # a user sees on one line that the templates wrote part of it, and a dead server that they wrote it all
    made = data["model_made"]
    assert out.returncode == 0 and out.stderr.strip() == (
        f"mirofish handoff: warning: the model at {server.url} played {made['messages']} of {made['of']} turns "
        f"(writer_empty {data['model_failures']['writer_empty']}); the embedded agents played the rest")
    dead = subprocess.run([sys.executable, "run.py", "handoff", "--headless", "--tasks", "2", "--layers", "L1",
                           "--agents", "llm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert dead.returncode == 0 and json.loads(dead.stdout)["model_made"]["messages"] == 0
    assert len(dead.stderr.strip().splitlines()) == 1 and "played none of 22 turns" in dead.stderr
    # the turns' reasons, no more (the embeddings' failure is no turn's: they summed to 23 of 22)
    reasons = dead.stderr.split("turns (")[1].split(")")[0]
    assert "embeddings" not in reasons and sum(int(r.rsplit(" ", 1)[1]) for r in reasons.split(", ")) <= 22, reasons


def test_a_models_layer_2_entries_that_the_chain_cannot_use_are_dropped_and_counted():
    from mirofish.scenes.handoff.model_agents import ModelWriter

    writer = ModelWriter("http://127.0.0.1:9/v1", "m")
    try:
        got = writer._unsure([{"concept": "growth", "reading": "units", "confidence": 0.3,
                               "alternative": "revenue-yoy"},
                              {"concept": "growth", "reading": "the calendar quarter", "confidence": 0.3},
                              {"concept": "mood", "reading": "units", "confidence": 0.3},
                              {"concept": "quarter", "reading": "fiscal", "confidence": 7},
                              {"concept": "competitor", "reading": "newest", "confidence": True}, "nonsense"])
    finally:
        writer.close()
    assert got == {"growth": ("unit sales growth", 0.3, "revenue growth year over year")}
    assert writer.layer2 == {"stated": 6, "invalid": 5}


def test_messages_that_restate_the_task_are_not_model_made_and_missing_embeddings_are_one_line():
    """A model that answers every turn with the task it was given has written nothing of its own:
    its messages are not counted model-made (the templates write them, counted by why, said on
    one line). A server without /v1/embeddings (llama.cpp's 500) is one line, recorded in the
    failures, and the concept drift is measured lexically."""
    from mirofish.brains.testserver import TestServer

    def handoff(url: str, model: str) -> tuple[dict, list[str]]:
        out = subprocess.run([sys.executable, "run.py", "handoff", "--headless", "--tasks", "3", "--seed", "1",
                              "--layers", "L1+2", "--agents", "llm", "--base-url", url, "--model", model],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout), out.stderr.strip().splitlines()

    with TestServer() as server:
        data, err = handoff(server.url, "m-copycat")
    assert data["model_made"]["messages"] == 0 and data["model_failures"] == {"writer_restates_task": 33}
    assert len(err) == 1 and "played none of 33 turns (writer_restates_task 33)" in err[0]
    with TestServer(fault="no_embeddings") as server:
        data, err = handoff(server.url, "m")
    assert data["model_made"]["share"] == 1.0 and data["concept_measure"] == "lexical"
    assert data["model_failures"] == {"embeddings_unavailable": 1}
    assert err == ["mirofish handoff: warning: the model server gave no embeddings (/v1/embeddings); "
                   "concept drift is measured lexically"]


def test_the_window_plays_layer_2_on_the_schedule_its_flags_give(monkeypatch):
    """--l2-every and --no-l2-triggers reached the headless arms only: the window's chain kept the
    default schedule (layer 2 on its triggers and every 4th message) whatever they said."""
    import mirofish.cli.handoff as command
    from mirofish.cli import main

    opened = []
    monkeypatch.setattr(command, "run_window", lambda view, args: opened.append(view) or 0)

    def layer2_sent(*flags: str) -> int:
        assert main(["handoff", *flags]) == 0
        scene = opened.pop()
        try:
            for _ in range(11):  # one task's messages
                scene.step()
            return sum("layer2" in m.signals for m in scene.session.model.messages)
        finally:
            scene.close()

    assert layer2_sent("--l2-source", "oracle") > 0
    assert layer2_sent("--l2-source", "oracle", "--l2-every", "0", "--no-l2-triggers") == 0
    assert layer2_sent("--l2-source", "oracle", "--l2-every", "1", "--no-l2-triggers") == 11
