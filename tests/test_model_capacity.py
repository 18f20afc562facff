"""The model path against servers shaped like real local ones (no wasted completions,
a cold start that counts, plans that last, schemas that constrain, routing that saves).

Every server is the bundled test server on 127.0.0.1: paced one request at a time like
llama.cpp or Ollama on a CPU, saying its slots at ``/props`` like llama.cpp, enforcing
OpenAI's strict-schema rules, or answering forage to everything like a tiny model.
"""

import time

import pytest

from mirofish.brains.base import TIER_INDEX
from mirofish.brains.breaker import Breaker
from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.session import LiveSession
from mirofish.session.headless import _brain_status


def llm_config(url: str, fish: int = 12, **dotted):
    base = {"fish.count": fish, "brain.kind": "llm", "brain.small.endpoints": [{"base_url": url, "model": "fish-mini"}],
            "seed": 1}
    base.update(dotted)
    return load_config(**base)


def first_tick_tiers(eng) -> set[int]:
    tiers: set[int] = set()
    eng.observers.append(lambda f: tiers.update(int(t) for b in f.applied if b.tick == 0 for t in b.tier))
    return tiers


def test_a_cold_one_slot_server_is_warmed_before_tick_0_and_gives_every_first_plan():
    """The warm-up meets the cold start (here: the first completion takes 1.5 s, the rest 0.05 s)
    before tick 0; lockstep then waits while the one slot answers the 12 first requests in turn."""
    with TestServer(rate=20) as server:
        server.latency = 1.5  # the cold first completion …
        eng = LiveSession(llm_config(server.url, **{"brain.timeout_s": 0.5}))
        server.latency = 0.0  # … then a warm server, one request at a time
        tiers = first_tick_tiers(eng)
        try:
            eng.run(5)
        finally:
            eng.close()
    status = eng.source.status()
    warm = next(iter(status["warmup"].values()))
    assert warm["ok"] and warm["seconds"] >= 1.4 and warm["slots"] == 1 and warm["slots_from"] == "local default"
    assert tiers == {TIER_INDEX["small"]}  # every fish's first plan is the model's, at tick 0
    assert eng.timeouts == 0 and not status["fallbacks"]


def test_slots_are_read_from_the_server_and_bound_what_is_in_flight():
    with TestServer(slots=3, rate=50) as server:
        eng = LiveSession(llm_config(server.url))
        try:
            eng.run(3)
        finally:
            eng.close()
    ep = eng.source.status()["tiers"]["small"]["endpoints"][0]
    assert ep["slots"] == 3 and ep["slots_from"] == "server"


def test_a_one_slot_paced_server_in_realtime_wastes_almost_nothing():
    """12 fish in realtime against a server that computes one completion at a time (0.2 s each,
    the pace of a 1 s CPU server at 5x speed): fish swim instinct plans ("waiting for the model")
    until their first answer, nearly every decision is the model's and the server computes
    almost nothing nobody uses (llama.cpp cannot cancel a completion it has started)."""
    ticks = 240
    with TestServer(rate=5) as server:
        eng = LiveSession(llm_config(server.url, **{"engine.mode": "realtime"}), mode="realtime")
        try:
            for _ in range(ticks):
                eng.step()
                time.sleep(0.1)  # 2 ticks/s at 5x
        finally:
            eng.close()
        computed = server.completions
    status = _brain_status(eng, ticks)
    assert status["waiting_plans"] == 12  # each fish's first request: an instinct plan meanwhile
    assert status["model_share"] >= 0.9, status
    assert status["completions_wasted"] <= 0.05 * computed, (status["completions_wasted"], computed)
    used = status["model_decisions"] + status["summaries"]["written"] + 1  # + the warm-up
    assert computed - used <= 0.05 * computed, (computed, used)  # the server's own count agrees


def forager_run(ticks: int, **dotted):
    with TestServer(policy="forager") as server:
        eng = LiveSession(llm_config(server.url, **dotted))
        try:
            eng.run(ticks)
        finally:
            eng.close()
    return _brain_status(eng, ticks)


def test_a_model_that_always_forages_does_not_re_ask_at_every_meal():
    """A meal ends a forage plan only when it made the fish sated: a tiny model that always
    answers forage asks at most 0.03 times per fish-tick, like the instinct planner; with the
    old rule (every meal ends the plan: sated_fraction 0) it asks about three times as often."""
    lasting = forager_run(300)
    per_meal = forager_run(300, **{"triggers.sated_fraction": 0.0})
    assert lasting["requests_per_fish_tick"] <= 0.03, lasting
    assert per_meal["requests_per_fish_tick"] > 1.3 * lasting["requests_per_fish_tick"], (per_meal, lasting)
    assert lasting["classes"].get("conflict_social", 0) + lasting["classes"].get("novel", 0) <= (
        0.3 * lasting["requests"])


def test_every_schema_the_tank_sends_passes_a_strict_server():
    with TestServer(strict=True) as server:
        eng = LiveSession(llm_config(server.url))
        try:
            eng.run(30)
        finally:
            eng.close()
        errors, by_status = server.schema_errors, dict(server.by_status)
    status = eng.source.status()
    assert not errors and 400 not in by_status
    assert status["tiers"]["small"]["endpoints"][0]["format"] == "json_schema"
    assert status["model_decisions"] > 0 and not status["fallbacks"]


def test_a_strict_server_refuses_the_old_optional_field_schema():
    """The strict test server really checks: a schema with an optional field is refused."""
    from mirofish.brains.testserver import strict_schema_errors

    loose = {"type": "object", "properties": {"goal": {"type": "string"}, "summary": {"type": "string"}},
             "required": ["goal"]}
    assert len(strict_schema_errors(loose)) == 2  # summary not required; additionalProperties missing


def test_a_reply_outside_the_narrowed_goal_enum_is_a_counted_fallback():
    with TestServer(strict=True, fault="schema_breaker") as server:
        eng = LiveSession(llm_config(server.url, **{"brain.breaker_failures": 1000}))
        try:
            eng.run(5)
        finally:
            eng.close()
    status = eng.source.status()
    refused = sum(n for reason, n in status["fallbacks"].items()
                  if reason in ("illegal_not_offered", "reply_schema", "school_without_fish"))
    assert refused >= 12 and status["model_decisions"] == 0, status


def test_a_slow_probe_that_answers_closes_the_breaker_without_doubling():
    now = [0.0]
    b = Breaker(2, 1.0, clock=lambda: now[0])
    b.outcome(False, False)
    b.outcome(False, False)
    assert b.state() == "open"
    now[0] = 1.5
    probe = b.admit()
    assert probe and b.state() == "half_open"
    now[0] = 9.0  # the probe took 7.5 s (a restarted server's cold start) but answered
    b.outcome(True, probe)
    assert b.state() == "closed" and b.backoff == 1


def test_scene_schemas_constrain_choices_and_numbers():
    from mirofish.scenes.negotiation.model_agents import REPLY_SCHEMA
    from mirofish.scenes.negotiation.world import NUMERIC
    from mirofish.scenes.referential.model_agents import receiver_schema

    assert receiver_schema(["obj_1", "obj_4"])["properties"]["choice"]["enum"] == ["obj_1", "obj_4"]
    for issue, (lo, hi) in NUMERIC.items():
        prop = REPLY_SCHEMA["properties"]["offer"]["properties"][issue]
        assert (prop["minimum"], prop["maximum"]) == (lo, hi)


@pytest.mark.parametrize("url, slots", [("http://127.0.0.1:9/v1", 1), ("http://localhost:9/v1", 1),
                                         ("https://api.example.com/v1", 4)])
def test_default_slots_by_where_the_server_is(url, slots):
    from mirofish.brains.transport import Endpoint, LoopThread, Transport, TransportSettings
    from mirofish.config import EndpointConfig

    thread = LoopThread("t")
    try:
        async def go():
            ep = Endpoint(EndpointConfig(base_url=url, model="m"))
            Transport(TransportSettings.of(), thread.loop).connect(ep, "NO_SUCH_KEY_VAR")
            return ep.slots
        assert thread.run(go(), timeout=10) == slots
    finally:
        thread.close()


def test_lockstep_waits_while_a_one_slot_server_is_busy_with_plans_and_summaries():
    """A fish with a summary due gets its plan only after a second request, queued behind the
    other fish's plans: the tick must wait while the server keeps finishing completions, not
    give up because no decision came for a while."""
    with TestServer(rate=20) as server:  # 0.05 s a completion, one at a time
        eng = LiveSession(llm_config(server.url, **{"brain.timeout_s": 0.12}))
        try:
            eng.run(300)
        finally:
            eng.close()
    status = eng.source.status()
    assert status["summaries"]["written"] >= 10, status["summaries"]
    assert eng.timeouts == 0 and not status["fallbacks"], status["fallbacks"]


def test_waiting_for_a_first_answer_is_not_a_fallback_alarm():
    """Realtime start against a slow server: fish swim instinct plans labelled "waiting for the
    model"; the window's fallback rate stays 0 and raises no alert (nothing has failed)."""
    with TestServer(rate=0.5) as server:  # 2 s a completion: most fish are still waiting
        eng = LiveSession(llm_config(server.url), mode="realtime")
        try:
            for _ in range(6):
                eng.step()
                time.sleep(0.05)
            rate = eng.metrics.current()["fallback_rate"]
            alerts = eng.metrics.alerts()
        finally:
            eng.close()
    assert eng.source.status()["waiting_plans"] == 12
    assert rate == 0.0 and not any("fallback" in a for a in alerts), (rate, alerts)


def test_realtime_warm_up_reaches_a_one_slot_server_before_any_fish_request():
    """Realtime starts at once, but the warm-up (the fixed warm-up fish: food north, a fish
    east) is the first chat completion a one-slot server receives; the fish's first requests
    queue behind it rather than in front of it."""
    import json

    with TestServer(rate=5, keep_bodies=True) as server:
        eng = LiveSession(llm_config(server.url, **{"engine.mode": "realtime"}), mode="realtime")
        try:
            for _ in range(20):
                eng.step()
                time.sleep(0.05)
        finally:
            eng.close()
        bodies = [json.loads(b) for b in server.bodies]
    assert len(bodies) >= 3  # the warm-up and fish requests after it (5 a second)
    first = "\n".join(m["content"] for m in bodies[0]["messages"])
    assert "..F..\n..@.<" in first, first[-400:]
    assert not any("..F..\n..@.<" in "\n".join(m["content"] for m in b["messages"]) for b in bodies[1:])


def test_the_test_server_keeps_no_body_of_a_client_that_closed_mid_send():
    """A request cut off while its body was sent (an engine closing with a request on the wire:
    the warm-up test above failed once under load on such an empty body) is no request the
    server was sent; a whole one is kept."""
    import http.client
    import json
    import socket

    whole = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]}).encode()
    with TestServer(keep_bodies=True) as server:
        with socket.create_connection(("127.0.0.1", server.port)) as cut:
            cut.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 400\r\n\r\n" + whole[:10])
            cut.shutdown(socket.SHUT_WR)
            cut.recv(4096)  # (the server has read what came: its answer, or the connection closed)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("POST", "/v1/chat/completions", whole, {"Content-Type": "application/json"})
        assert conn.getresponse().status == 200
        conn.close()
        assert server.bodies == [whole]


def test_realtime_totals_in_the_json_equal_the_recordings():
    """A realtime run against a paced server, recorded: the JSON's decisions and model-made
    decisions are the recording's own rows (requests still in flight at the end are in
    neither), and its waiting plans are the recording's "waiting for the model" rows."""
    import collections
    import json
    import subprocess
    import sys

    from mirofish.observe.recording import Recording
    from mirofish.session.tables import decisions_table

    with TestServer(rate=4, latency=0.2) as server, __import__("tempfile").TemporaryDirectory() as tmp:
        rec_path = f"{tmp}/rt.mirofish"
        out = subprocess.run([sys.executable, "run.py", "live", "--headless", "--fish", "12", "--ticks", "60",
                              "--seed", "1", "--brain", "llm", "--base-url", server.url, "--model", "fish-mini",
                              "--set", "engine.mode=realtime", "--speed", "4", "--record", rec_path],
                             capture_output=True, text=True, timeout=240)
        assert out.returncode == 0, out.stderr[-500:]
        brain = json.loads(out.stdout)["brain"]
        rec = Recording(rec_path)
        try:
            table = decisions_table(rec, 0, rec.last_tick + 1)
        finally:
            rec.close()
    status = collections.Counter(table["status"])
    tiers = collections.Counter(table["tier"])
    assert status["waiting_for_the_model"] == brain["waiting_plans"] == 12
    assert sum(status.values()) - status["waiting_for_the_model"] == brain["decisions"], (status, brain)
    assert sum(n for t, n in tiers.items() if t in ("small", "large")) == brain["model_decisions"], (tiers, brain)
    assert brain["requests_by_kind"]["decision"] >= brain["decisions"] - status.get("fallback", 0)
