"""The model path, exact and economical (a real server's replies are not thrown away, a
re-ask sends the recorded bytes, every request is counted): what a user of a local llama.cpp or
Ollama server sees in the run's JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mirofish.brains.prompt import parse_plan_reply
from mirofish.brains.testserver import TestServer
from mirofish.cli import main


def run(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    lines = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    return code, (lines[-1] if lines else {}), err


def model_tank(url: str, fish: int = 12):
    """A live model-brain tank against the server at ``url`` (seed 1)."""
    from mirofish.config import load_config
    from mirofish.session.live import LiveSession

    return LiveSession(load_config(seed=1, **{"fish.count": fish, "brain.kind": "llm",
                                               "brain.small.endpoints": [{"base_url": url, "model": "fish-mini"}]}))


def test_a_reply_is_judged_by_what_its_goal_reads():
    # a reply llama.cpp gave: a forage plan whose unused fields hold any number
    reply = parse_plan_reply('{"goal": "forage", "place": 1744, "direction": "north", "until": 98, "from": null, '
                             '"ticks": 203, "thought": "no one here, open water south"}')
    assert (reply.goal, reply.ticks, reply.place, reply.direction) == ("forage", 203, None, None)
    assert set(reply.ignored) == {"place", "direction", "until"} and reply.clamped == ()
    # SmolLM2 runs on past its thought into the next object: the plan stands, the thought is cut
    ran_on = parse_plan_reply('{"goal": "forage", "ticks": 40, "thought": "hunger, energy 96->98}\n{ ", '
                              '"summary": "I ate twice."}')
    assert ran_on.thought == "hunger, energy 96->98" and "thought" in ran_on.clamped
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


def test_a_breaker_probes_within_10_wall_seconds_however_slowly_the_ticks_pass():
    from mirofish.brains.breaker import Breaker

    now = [0.0]
    b = Breaker(failures=1, cooldown_s=2.0, tick_seconds=0.5, clock=lambda: now[0])
    b.backoff = 32  # a long outage: the next probe 64 s (128 ticks) away
    b.failed(tick=100)
    assert b.state(101) == "open" and b.open_until_tick == 228
    now[0] = 9.9
    assert b.state(102) == "open"
    now[0] = 10.0  # ten wall seconds on, a probe may go though only two ticks passed
    assert b.state(102) == "half_open"
    assert b.state(228) == "half_open"  # and as before, once its ticks have passed


def test_a_server_that_dies_and_comes_back_gets_a_line_each_and_is_used_again_within_10_s(capsys):
    import time

    first = TestServer().start()
    port = first.port
    eng = model_tank(first.url)
    try:
        eng.run(20)
        first.stop()
        eng.run(600)  # a long outage: the probes back off to 128 ticks apart
        capsys.readouterr()
        made = eng.source.stats.model_decisions
        second = TestServer(port=port, cold_s=1.5).start()  # a cold server: its first answer is slow
        back = time.monotonic()
        while eng.source.stats.model_decisions == made and time.monotonic() - back < 20:
            eng.step()
            time.sleep(0.1)  # a slow tank: ticks alone would wait 12.8 s for the next probe
        waited = time.monotonic() - back
        second.stop()
    finally:
        eng.close()
    err = capsys.readouterr().err
    assert waited <= 11, waited
    assert err.count("answers again") == 1, err
    took = re.search(r"answers again \(down [\d.]+ s; its first answer took ([\d.]+) s\)", err)
    assert took and float(took.group(1)) >= 1.4, err  # the line says why the model came back late
    assert eng.source.status()["fallbacks"].get("breaker_open", 0) > 0


def test_a_server_that_stops_answering_is_one_line(capsys):
    srv = TestServer().start()
    eng = model_tank(srv.url)
    try:
        eng.run(10)
        srv.stop()
        eng.run(300)
    finally:
        eng.close()
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "stopped answering" in ln]
    assert len(lines) == 1 and "fish-mini" in lines[0] and "connection" in lines[0], err


def test_trace_says_why_a_reply_was_not_used(tmp_path, capsys):
    rec = tmp_path / "run.mirofish"
    with TestServer(fault="illegal") as srv:
        code, _, err = run(capsys, "live", "--headless", "--ticks", "40", "--fish", "8", "--brain", "llm",
                           "--base-url", srv.url, "--model", "fish-mini", "--record", str(rec))
    assert code == 0, err
    from mirofish.observe.recording import Recording

    r = Recording(rec)
    refused = next(c for c in r.model_calls() if c["read"] != "ok")
    r.close()
    code = main(["trace", str(rec), "--fish", str(refused["fish"]), "--from", str(refused["tick"]),
                 "--to", str(refused["tick"] + 1)])
    out = capsys.readouterr().out
    assert code == 0 and "not used: " in out
    assert "no fish in view" in out or "into glass" in out


def test_a_negotiator_s_offer_out_of_range_is_clamped_and_counted_not_refused(capsys):
    with TestServer(fault="lax_grammar") as srv:
        code, out, err = run(capsys, "negotiation", "--headless", "--sessions", "3", "--agents", "llm",
                             "--base-url", srv.url, "--model", "fish-mini")
    assert code == 0, err
    assert out["model_failures"].get("offer_clamped", 0) > 0
    assert out["model_failures"].get("offer_invalid", 0) == 0
    assert out["model_made"]["share"] >= 0.95, out["model_made"]


def test_cached_prompt_tokens_are_read_where_a_server_reports_them():
    from mirofish.brains.transport import cached_tokens

    assert cached_tokens({"usage": {"prompt_tokens": 500, "prompt_tokens_details": {"cached_tokens": 256}}}) == 256
    assert cached_tokens({"usage": {"prompt_tokens": 500}, "timings": {"cache_n": 240, "prompt_n": 260}}) == 240
    assert cached_tokens({"usage": {"prompt_tokens": 500}}) is None


def test_the_shared_prefix_is_served_by_the_server_s_prompt_cache_and_priced_so(tmp_path, capsys):
    rec = tmp_path / "run.mirofish"
    price = ["--set", "brain.small.price_prompt_per_1k=1.0"]
    with TestServer(prefix_cache=True) as srv:
        base = ("live", "--headless", "--ticks", "100", "--fish", "12", "--brain", "llm", "--base-url", srv.url,
                "--model", "fish-mini", *price)
        code, full, err = run(capsys, *base, "--record", str(rec))
        assert code == 0, err
        code, cheap, err = run(capsys, *base, "--set", "brain.small.price_cached_prompt_per_1k=0.5")
        assert code == 0, err
    tokens = full["brain"]["tokens"]
    # every request begins with the same system message: a one-slot cache serves it each time
    assert tokens["cached_share"] >= 0.4 and tokens["cached_per_model_decision"] > 200, tokens
    assert cheap["brain"]["cost_per_sim_hour"] < full["brain"]["cost_per_sim_hour"]
    from mirofish.observe.recording import Recording

    r = Recording(rec)
    assert sum(c.get("cached_tokens", 0) for c in r.model_calls()) == tokens["cached_prompt"]
    r.close()


def test_empty_or_unbounded_flags_are_one_line(tmp_path, capsys):
    ring = Path(__file__).resolve().parent.parent / "assets" / "reefs" / "ring.toml"
    rec = tmp_path / "run.mirofish"
    with TestServer() as srv:
        assert run(capsys, "live", "--headless", "--ticks", "20", "--fish", "4", "--brain", "llm", "--base-url",
                   srv.url, "--model", "fish-mini", "--record", str(rec))[0] == 0
    cases = {  # the flags, and what the one line says
        ("reask", str(rec), "--fish", "0", "--tick", "0", "--base-url", "not a url"): "--base-url 'not a url'",
        ("reef", str(ring), "--headless", "--cluster", ""): "--cluster needs",
        ("handoff", "--headless", "--tasks", "1000000000"): "at most 100,000",
        ("live", "--headless", "--ticks", "5", "--reply-cache", ""): "--reply-cache needs a folder",
    }
    for argv, says in cases.items():
        code, _, err = run(capsys, *argv)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, (argv, err)
    assert not any(p.name.startswith(".tmp-") for p in Path.cwd().iterdir())  # nothing written in the cwd


def test_copied_summaries_are_refused_and_copied_thoughts_counted(capsys):
    """A model that copies its prompt (the test server's copycat: the example thought every
    time; the ask's example summary or the ask itself): no copied summary is written into a
    fish's memory or counted as written, each refusal is counted by reason, the drift alert
    sees none of them, and the copy shares say what happened. The scripted model beside it
    copies nothing."""
    import json

    from mirofish.cli import main

    with TestServer() as server:
        runs = {}
        for model in ("fish-mini-copycat", "fish-mini"):
            code = main(["live", "--headless", "--ticks", "300", "--fish", "8", "--base-url", server.url,
                         "--model", model, "--set", "memory.summary_every=40"])
            out = capsys.readouterr().out
            assert code == 0
            runs[model] = json.loads(out.splitlines()[-1])["brain"]
    copy, plain = runs["fish-mini-copycat"], runs["fish-mini"]
    assert copy["summaries"]["asked"] > 0 and copy["summaries"]["written"] == 0, copy["summaries"]
    refused = copy["summaries"]["refused"]
    assert set(refused) == {"copies_example", "echoes_instruction"} and sum(refused.values()) == \
        copy["summaries"]["asked"]
    assert copy["copying"]["summary_copy_share"] == 1.0 and copy["copying"]["thought_copy_share"] == 1.0
    assert copy["drift"]["fish_scored"] == 0  # no refused summary is scored
    assert plain["summaries"]["written"] == plain["summaries"]["asked"] > 0 and not plain["summaries"]["refused"]
    assert plain["copying"]["thought_copy_share"] < 0.2


def test_a_model_the_server_does_not_list_is_one_warning_and_recorded(capsys):
    """llama-cpp-python answers any model name: --model no-such-model used to give model_share
    1.0 with no word. Now GET /v1/models is read at start: one warning line, and the JSON says it."""
    from mirofish.cli import main

    with TestServer() as server:
        code = main(["live", "--headless", "--ticks", "20", "--fish", "4", "--base-url", server.url,
                     "--model", "no-such-model"])
        out, err = capsys.readouterr()
        listed = json.loads(out.splitlines()[-1])["brain"]["models_listed"]
        assert code == 0 and listed == {"no-such-model": False}
        said = [ln for ln in err.splitlines() if "does not list" in ln]
        assert len(said) == 1 and "'no-such-model'" in said[0] and "fish-mini" in said[0]
        code = main(["live", "--headless", "--ticks", "20", "--fish", "4", "--base-url", server.url,
                     "--model", "fish-mini"])
        out, err = capsys.readouterr()
        assert "does not list" not in err and json.loads(out.splitlines()[-1])["brain"]["models_listed"] == \
            {"fish-mini": True}


def test_a_reply_cut_at_max_tokens_inside_its_thought_is_salvaged_and_no_other():
    """The grammar does not bound the thought: a quiet SmolLM2 run's six reply_garbage all had
    goal and horizon whole and only the thought cut. Such a reply's plan stands (its thought as
    written, named in clamped); a reply cut anywhere else is still refused."""
    import pytest

    from mirofish.brains.prompt import ReplyError

    cut = parse_plan_reply('{"goal": "explore", "direction": "south", "ticks": 30, "thought": "nobody here, op')
    assert (cut.goal, cut.direction, cut.ticks, cut.thought) == ("explore", "south", 30, "nobody here, op")
    assert "thought" in cut.clamped
    for text in ('{"goal": "forage", "ticks": 4', '{"goal": "forage", "thought": "hung',
                 '{"thought": "x", "goal": "forage", "ticks": 4', '{"goal": "forag'):
        with pytest.raises(ReplyError):
            parse_plan_reply(text)


def test_the_example_agent_reads_its_replies_leniently(capsys, tmp_path):
    """examples/llm_agent.py against a server whose replies come fenced in prose: every reply
    is still its plan (strict json.loads raised on each before), none counted as brain_raised."""
    from mirofish.cli import main

    agent = Path(__file__).resolve().parents[1] / "examples" / "llm_agent.py"
    with TestServer(fault="fenced") as server:
        code = main(["live", "--headless", "--ticks", "60", "--fish", "6", "--brain", f"{agent}:LLMAgent",
                     "--base-url", server.url, "--model", "fish-mini"])
    out = json.loads(capsys.readouterr().out.splitlines()[-1])["brain"]
    assert code == 0 and out["brain_decisions"] == out["decisions"] > 0 and not out["fallbacks"], out


def test_a_replay_judges_a_models_own_summary_as_the_model_run_did(tmp_path, capsys):
    """The follow panel's drift (Session.drift) in a replay of a model run: a fish whose kept
    summaries include one its model wrote is judged on that one ("model"), as in the live run and
    as ``report`` does; before, a replay said "template" of every summary, a model's too."""
    from mirofish.session import ReplaySession

    rec = tmp_path / "m.mirofish"
    with TestServer() as srv:
        code, _, _ = run(capsys, "live", "--headless", "--ticks", "150", "--fish", "6", "--brain", "llm",
                         "--base-url", srv.url, "--model", "fish-mini", "--record", str(rec))
    assert code == 0
    replay = ReplaySession(rec)
    try:
        replay.seek(149)
        memory = replay.engine.world.school.long_memory
        said = {f: replay.drift(f) for f in range(6)}
        written = {f: memory.written(f) for f in range(6)}
    finally:
        replay.close()
    assert any(any(w) for w in written.values()) and any(not all(w) for w in written.values() if w), written
    for f, w in written.items():
        if said[f] is not None:
            assert said[f][1] == ("model" if any(w) else "template"), (f, said[f], w)
