"""The model path, exact and economical (issue: a real server's replies are not thrown away, a
re-ask sends the recorded bytes, every request is counted): what a user of a local llama.cpp or
Ollama server sees in the run's JSON."""

from __future__ import annotations

import json

from mirofish.brains.prompt import parse_plan_reply
from mirofish.brains.testserver import TestServer
from mirofish.cli import main


def run(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    lines = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    return code, (lines[-1] if lines else {}), err


def test_a_reply_is_judged_by_what_its_goal_reads():
    # the llama.cpp reply the issue quotes: a forage plan whose unused fields hold any number
    reply = parse_plan_reply('{"goal": "forage", "place": 1744, "direction": "north", "until": 98, "from": null, '
                             '"ticks": 203, "thought": "no one here, open water south"}')
    assert (reply.goal, reply.ticks, reply.place, reply.direction) == ("forage", 203, None, None)
    assert set(reply.ignored) == {"place", "direction", "until"} and reply.clamped == ()
    long = parse_plan_reply('{"goal": "explore", "direction": "e", "ticks": 5000.4, "place": -3}')
    assert (long.direction, long.ticks, long.clamped, long.ignored) == ("east", 1000, ("ticks",), ("place",))


def test_a_lax_grammar_server_s_plans_are_the_model_s(capsys):
    with TestServer(fault="lax_grammar") as srv:
        code, out, err = run(capsys, "live", "--headless", "--ticks", "300", "--fish", "12", "--seed", "1",
                             "--brain", "llm", "--base-url", srv.url, "--model", "fish-mini")
    assert code == 0, err
    brain = out["brain"]
    share = brain["model_decisions"] / brain["decisions"]
    assert share >= 0.95, brain["fallbacks"]
    assert brain["fields_ignored"].get("place", 0) > 0  # the numbers forage does not read were left alone
    assert brain["replies_clamped"].get("ticks", 0) > 0  # horizons past 1,000 ticks were brought into range


def test_reask_sends_the_recorded_request_byte_for_byte_and_gets_the_recorded_decision(tmp_path, capsys):
    rec = tmp_path / "run.mirofish"
    with TestServer(keep_bodies=True) as srv:
        code, _, err = run(capsys, "live", "--headless", "--ticks", "60", "--fish", "8", "--brain", "llm",
                           "--base-url", srv.url, "--model", "fish-mini", "--record", str(rec))
        assert code == 0, err
        first = list(srv.bodies)
        from mirofish.observe.recording import Recording

        r = Recording(rec)
        call = next(c for c in r.model_calls() if c["kind"] == "decision" and c["read"] == "ok" and c["tick"] > 0)
        r.close()
        original = [b for b in first if json.loads(b)["messages"][-1]["content"] == call["user"]]
        assert len(original) == 1
        srv.bodies.clear()
        code, out, err = run(capsys, "reask", str(rec), "--fish", str(call["fish"]), "--tick", str(call["tick"]),
                             "--n", "2", "--base-url", srv.url, "--json")
        assert code == 0, err
        again = list(srv.bodies)
    assert again == original * 2  # the raw bytes the server received, both times: schema order included
    schema = json.loads(original[0])["response_format"]["json_schema"]["schema"]
    assert next(iter(schema["properties"])) == "goal"  # as the brain sends it, not sorted
    assert out["same_as_recorded"] == 2 and out["same_text_as_recorded"] == 2
