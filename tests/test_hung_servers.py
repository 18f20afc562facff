"""Servers that hang, drip or never finish must never freeze the tank (reliability).

Each server here is a real HTTP server on 127.0.0.1 (the bundled test server's transport
faults). The promise: a lockstep tick waits at most ``brain.timeout_s`` in all and then the
fallback decides for the fish still waiting; in realtime the tank never waits and the fish
keep swimming at their healthy rate; the breaker opens; memory stays bounded.
"""

import time

import pytest
from conftest import step_in_wall_time

from mirofish.brains.base import TIER_INDEX
from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.session import LiveSession


def cfg_for(url: str, **dotted):
    base = {"fish.count": 10, "seed": 4, "brain.kind": "llm", "brain.timeout_s": 0.3,
            "brain.request_timeout_s": 0.5, "brain.backoff_s": 0.01, "brain.warmup_timeout_s": 1.0,
            "brain.small.endpoints": [{"base_url": url, "model": "fish-mini"}]}
    base.update(dotted)
    return load_config(**base)


LOCKSTEP = [("hang", 20), ("drip", 20), ("endless", 20), ("reset", 10), ("not_http", 10), ("huge_body", 10),
            ("retry_after_forever", 10)]


@pytest.mark.parametrize("fault, ticks", LOCKSTEP)
def test_lockstep_ticks_are_bounded_and_the_fallback_decides(fault, ticks):
    with TestServer(fault=fault, delay=1.0) as server:
        eng = LiveSession(cfg_for(server.url))
        start = time.perf_counter()
        try:
            eng.run(ticks)
        finally:
            eng.close()
        elapsed = time.perf_counter() - start
    assert elapsed < ticks * 0.3 + 2.0, elapsed
    tiers = eng.metrics.decisions_by_tier()
    assert tiers.get("fallback", 0) >= 10 and not tiers.get("small")  # every fish, by the fallback
    assert eng.world.school.moves.sum() > 5 * ticks  # and the fish swam
    if ticks == 20:  # the failing server opened the breaker, or was asked only a few times: requests given up
        status = eng.source.status()  # while they waited for its one slot were never sent
        assert status["tiers"]["small"]["state"] != "closed" or status["calls"] <= 5, status


def healthy_moves(ticks: int) -> int:
    eng = LiveSession(load_config(**{"fish.count": 10, "seed": 4}), mode="realtime")
    eng.run(ticks)
    return int(eng.world.school.moves.sum())


@pytest.mark.parametrize("fault", ["hang", "drip", "endless", "retry_after_forever"])
def test_realtime_fish_keep_swimming_against_a_failing_server(fault):
    ticks = 60
    with TestServer(fault=fault) as server:
        eng = LiveSession(cfg_for(server.url), mode="realtime")
        try:
            for _ in range(ticks):
                eng.step()
                time.sleep(0.02)  # let the server's failures happen in wall time, as in the window
        finally:
            eng.close()
    assert eng.world.school.moves.sum() >= 0.9 * healthy_moves(ticks)
    assert not eng.metrics.decisions_by_tier().get("small")
    if fault != "retry_after_forever":  # the fish swim instinct plans: waiting for the model, then fallbacks
        assert eng.metrics.decisions_by_tier().get("fallback", 0) + eng.source.status()["waiting_plans"] > 0


def test_requests_still_with_the_server_when_the_run_ends_are_counted():
    """A run that ends while the server still computes requests its ticks gave up on says how many
    (``requests_in_flight``: before, counted nowhere — neither a decision nor a fallback of
    theirs); a server that answered everything leaves none."""
    statuses = []
    with TestServer() as server:
        for slow in (False, True):  # (the fast run's ticks wait up to 10 s: a loaded machine is no slow server)
            eng = LiveSession(cfg_for(server.url, **{"brain.request_timeout_s": 30.0, "brain.breaker_failures": 100,
                                                     "brain.timeout_s": 0.3 if slow else 10.0}))
            if slow:  # (warmed up; slow from tick 0: the ticks give up, the requests stay open)
                server.fault, server.delay = "slow", 5.0
            try:
                eng.run(3)
                statuses.append(eng.source.status())
            finally:
                eng.close()
    fast, slow = statuses
    assert fast["requests_in_flight"] == 0 and fast["model_decisions"] == fast["requests"] > 0, fast
    # every request of tick 0: one with the server, the others waiting for its one slot; the fallback decided
    assert slow["requests_in_flight"] == slow["requests"] == 10 and slow["fallbacks"] == {"tick_timeout": 10}, slow


def test_late_model_answers_after_a_tick_gave_up_replace_the_fallback_once():
    """A tick gives up on a server that became slow: the fallback decides every fish; requests
    still waiting for the server's one slot are dropped unsent; the answer already being
    computed arrives later and replaces its fish's fallback plan — once, and only because that
    fish has not asked again."""
    with TestServer() as server:
        eng = LiveSession(cfg_for(server.url, **{"brain.request_timeout_s": 5.0, "brain.breaker_failures": 100}))
        server.fault, server.delay = "slow", 0.6  # warm and fast at start, slow from tick 0
        applied = []  # (tick the request was made at, fish, tier, tick applied) of every applied decision
        eng.observers.append(lambda f: applied.extend((b.tick, int(fish), int(t), f.tick) for b in f.applied
                                                      for fish, t in zip(b.fish, b.tier)))
        try:
            eng.run(6)
            time.sleep(0.8)  # the slow answer to tick 0 arrives now
            eng.run(2)
        finally:
            eng.close()
    first = [(fish, tier, at) for t, fish, tier, at in applied if t == 0]
    by_fallback = sorted(f for f, tier, at in first if tier == TIER_INDEX["fallback"])
    assert by_fallback == list(range(10))  # every fish decided once for its tick-0 request, at tick 0 …
    late = [(f, at) for f, tier, at in first if tier == TIER_INDEX["small"]]
    assert len(late) == 1 and late[0][1] >= 6, late  # … and the one answer computed replaced a fallback plan later
    asked_again = {fish for t, fish, _, _ in applied if 0 < t <= late[0][1]}
    assert late[0][0] not in asked_again
    status = eng.source.status()
    assert status["late_answers_used"] == 1 and status["superseded_unsent"] == 9, status
    assert_one_outcome_a_request(eng)


def assert_one_outcome_a_request(eng, before: dict | None = None):
    """The identities of one accounting: every request one outcome (a model plan, a late model plan
    that replaced its fallback, or a fallback by reason); tiers, shares and rates add up.
    ``before``: the tiers a fork's metrics inherited from its parent (its brain counts its own)."""
    from mirofish.session.headless import _brain_status

    status = _brain_status(eng, eng.world.tick)
    status = status.get("live", status)  # a fork: its live brain's accounting
    by_tier = {k: v - (before or {}).get(k, 0) for k, v in eng.metrics.decisions_by_tier().items()}
    if before is not None:  # a fork's shares: of its own decisions
        status["model_share"] = by_tier.get("small", 0) / max(1, status["decisions"])
    fallbacks = sum(status["fallbacks"].values())
    assert status["decisions"] == status["model_decisions"] + fallbacks, status
    assert by_tier.get("fallback", 0) == fallbacks and by_tier.get("small", 0) == status["model_decisions"], by_tier
    if status["decisions"]:
        assert abs(status["model_share"] + status["fallback_rate"] - 1) < 1e-3, status


def test_realtime_late_answers_and_a_fork_keep_one_outcome_a_request():
    """Realtime against a server slower than brain.request_timeout_s: the fallback answers each
    request first, the model's late plan replaces it — counted once, as a model plan. A fork of
    the tank keeps the same identities."""
    from mirofish.session import ForkSession

    with TestServer() as server:
        cfg = load_config(seed=3, **{"fish.count": 8, "brain.kind": "llm", "engine.mode": "realtime",
                                     "brain.request_timeout_s": 0.15, "brain.breaker_failures": 1000,
                                     "brain.small.endpoints": [{"base_url": server.url, "model": "m",
                                                                "max_concurrency": 8}]})
        live = LiveSession(cfg, mode="realtime")
        server.fault, server.delay = "slow", 0.3
        try:
            for _ in range(60):
                live.step()
                time.sleep(0.03)
            time.sleep(1.0)  # every answer under way arrives …
            live.step()  # … and is taken; the requests this tick makes are answered 0.15 s from now at the soonest
            assert live.source.status()["late_answers_used"] > 0, live.source.status()
            assert_one_outcome_a_request(live)
            inherited = live.metrics.decisions_by_tier()
            fork = ForkSession.from_live(live, 2, "rest 20")
            for _ in range(30):
                fork.step()
                time.sleep(0.03)
            time.sleep(1.0)
            fork.step()
            assert_one_outcome_a_request(fork, inherited)
            fork.close()
        finally:
            live.close()


@pytest.mark.parametrize("fault", ["huge_body", "endless"])
def test_a_huge_or_endless_reply_is_cut_off_at_the_size_cap(fault):
    """The reply is read in pieces and cut off past ``brain.max_reply_bytes`` — long before the
    deadline, and without holding 50 MB (or an endless stream) in memory."""
    from mirofish.brains.client import ModelClient

    with TestServer(fault=fault) as server:
        pool = ModelClient(server.url, "fish-mini", timeout_s=10.0, max_reply_bytes=65536)
        try:
            start = time.perf_counter()
            reply = pool.complete([{"role": "user", "content": "hello"}])
            elapsed = time.perf_counter() - start
        finally:
            pool.close()
    assert reply["error"] == "reply_too_large" and reply["text"] is None
    assert elapsed < 5.0, elapsed  # cut off at the cap, not at the 10 s deadline


@pytest.mark.parametrize("scene", ["referential", "negotiation"])
def test_the_scenes_model_calls_are_bounded_against_a_hung_server(scene):
    """Every scene call takes at most --timeout in all; after brain.breaker_failures timeouts the
    breaker answers at once, so a whole run costs a few timeouts, not one per call."""
    import json
    import subprocess
    import sys

    args = (["--rounds", "12"] if scene == "referential" else ["--sessions", "2"])
    with TestServer(fault="hang") as server:
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "run.py", scene, "--headless", *args, "--agents", "llm",
                              "--base-url", server.url, "--model", "m", "--timeout", "0.5"],
                             capture_output=True, text=True, timeout=120)
        elapsed = time.perf_counter() - start
    # a referential model that played no turn measured no game: exit 2 (the JSON still printed); negotiation's
    # embedded agents played every turn
    assert run.returncode == (2 if scene == "referential" else 0), run.stderr
    summary = json.loads(run.stdout)
    failures = summary["failures" if scene == "referential" else "model_failures"]
    timeouts = sum(n for k, n in failures.items() if k.endswith("_timeout"))
    assert timeouts == 5 and sum(n for k, n in failures.items() if k.endswith("_breaker_open")) > 0, failures
    assert elapsed < 5 * 0.5 + 6.0, elapsed  # five bounded waits plus start-up, not 60 s per call


@pytest.mark.parametrize("fault", ["hang", "retry_after_forever"])
def test_realtime_fish_get_a_plan_within_three_simulated_seconds_from_a_hung_server(fault):
    """Realtime at 1x against a server that never answers: every fish swims an instinct plan
    (labelled as waiting for the model) from its first ticks — within 3 simulated seconds (6
    ticks) — and moves as often as with the embedded brain (within 10 %)."""
    with TestServer(fault=fault) as server:
        cfg = load_config(seed=2, **{"fish.count": 20, "brain.kind": "llm", "engine.mode": "realtime",
                                     "brain.small.endpoints": [{"base_url": server.url, "model": "m"}]})
        live = LiveSession(cfg, mode="realtime")
        first: dict[int, int] = {}
        moved: list[int] = []
        live.engine.observers.append(lambda f: [first.setdefault(int(x), f.tick) for b in f.applied for x in b.fish])
        live.engine.observers.append(lambda f: moved.append(f.moved))
        for _ in range(12):
            live.step()
            time.sleep(0.1)  # the pool answers from its own thread
        live.close()
    embedded = LiveSession(load_config(seed=2, **{"fish.count": 20}))
    baseline: list[int] = []
    embedded.engine.observers.append(lambda f: baseline.append(f.moved))
    embedded.run(12)
    assert len(first) == 20 and max(first.values()) < 6
    assert abs(sum(moved) - sum(baseline)) <= 0.1 * sum(baseline)


def test_a_run_with_late_answers_adds_up_and_exports_one_span_a_request(tmp_path):
    """The model path's figures under load, measured as a user runs them: requests slower than
    brain.request_timeout_s — the JSON's decisions are its model decisions plus its fallbacks,
    the tiers the same, shares sum to 1, and export --otel writes one span per HTTP request
    (the late answer marked on its request's span), not one per record."""
    import json
    import subprocess
    import sys

    rec = tmp_path / "late.db"
    with TestServer(fault="slow", delay=0.25) as server:
        run = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "60", "--fish", "6",
                              "--base-url", server.url, "--model", "m", "--set", "brain.request_timeout_s=0.15",
                              "--set", "brain.breaker_failures=1000", "--record", str(rec)],
                             capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.splitlines()[-1])
    b, tiers = out["brain"], out["decisions_by_tier"]
    assert b["late_answers_used"] > 0, b
    assert b["decisions"] == b["model_decisions"] + sum(b["fallbacks"].values())
    assert tiers.get("small", 0) == b["model_decisions"] and tiers.get("fallback", 0) == sum(b["fallbacks"].values())
    assert abs(b["model_share"] + b["fallback_rate"] - 1) < 1e-3
    exported = subprocess.run([sys.executable, "run.py", "export", str(rec), "--otel", str(tmp_path / "t.json")],
                              capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    summary = json.loads(exported.stdout)
    sent = b["requests_by_kind"].get("decision", 0) + b["requests_by_kind"].get("summary", 0)
    assert summary["exchange_spans"] == sent and summary["late_answers"] == b["late_answers_used"], (summary, b)
    spans = json.loads((tmp_path / "t.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    marked = [s for s in spans if any(e["name"] == "mirofish.fallback_answered" for e in s.get("events", ()))]
    assert len(marked) == b["late_answers_used"]


def test_realtime_fish_waiting_for_a_hung_warm_up_swim_one_instinct_plan_after_another(capsys):
    """In realtime a fish swims an instinct plan ("waiting for the model") until its first answer.
    A server that hangs on its warm-up holds every first request for up to brain.warmup_timeout_s
    (120 s by default): the fish used to keep their first plan after it ended, the whole run (a
    fault campaign's 400 ticks at --speed 16: five fish, one plan each, starved to a mean energy of
    7.5 %). Now each plan that ends is followed by another, and the summary and one line at the
    end say the warm-up was never answered; the first says how long it is waited for, and how to
    wait less (a lockstep run, a fork, waits that long before its first tick)."""
    with TestServer(fault="hang") as server:
        eng = LiveSession(cfg_for(server.url, **{"brain.warmup_timeout_s": 60.0}), mode="realtime")
        try:
            for _ in range(150):
                eng.step()
                time.sleep(0.01)
            status = eng.source.status()
        finally:
            eng.close()
    plans = eng.decisions().counts.sum(axis=1)
    assert plans.min() >= 2, plans  # every fish: more than its first plan
    assert status["waiting_plans"] >= plans.sum() > 10 and status["decisions"] == 0
    (warmup,) = status["warmup"].values()
    assert warmup["pending"] is True and warmup["waited_s"] >= 1.0
    err = capsys.readouterr().err
    assert "had not answered its warm-up request when the run ended" in err
    # the line said at the start names how long a hung warm-up is waited for, and the setting
    assert "waited for up to 60 s: --set brain.warmup_timeout_s=S" in err, err


def headless_against(fault: str, ticks: int, *settings: str):
    """``live --headless`` of 4 fish for ``ticks`` ticks against a test server with ``fault``, each
    of ``settings`` a ``--set``; the finished process (exit 0 checked)."""
    import subprocess
    import sys

    sets = [a for kv in settings for a in ("--set", kv)]
    with TestServer(fault=fault) as server:
        run = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", str(ticks), "--fish", "4",
                              "--base-url", server.url, "--model", "m", *sets], capture_output=True, text=True,
                             timeout=120)
    assert run.returncode == 0, run.stderr
    return run


def test_a_long_retry_after_is_counted_rate_limited_not_tick_timeout():
    """A 429 whose Retry-After is longer than a lockstep tick waits is the server asking to wait,
    not a slow server: the run's summary counts those fallbacks as rate_limited, and the line
    said when the breaker opens names it (before: fallbacks.tick_timeout, the tick having given
    up while the request slept out the Retry-After)."""
    import json

    run = headless_against("retry_after_forever", 12, "brain.timeout_s=0.5", "brain.warmup_timeout_s=1")
    brain = json.loads(run.stdout.splitlines()[-1])["brain"]
    assert brain["fallbacks"] and set(brain["fallbacks"]) == {"rate_limited"}, brain["fallbacks"]
    assert "asks to be asked later (rate_limited" in run.stderr and "tick_timeout" not in run.stderr, run.stderr
    assert "stopped answering" not in run.stderr, run.stderr  # (it answers: with 429s)


def test_a_server_answering_with_errors_is_not_said_to_have_stopped_answering():
    """A server that answers every request with an HTTP 500 opens the breaker; its line says it
    answers with errors, naming the status, not that it stopped answering."""
    run = headless_against("500", 30, "brain.backoff_s=0.01", "brain.warmup_timeout_s=2")
    assert "answers with errors (http_500" in run.stderr and "stopped answering" not in run.stderr, run.stderr


def test_a_long_retry_after_in_realtime_is_counted_rate_limited_not_timeout():
    """Realtime: a Retry-After longer than brain.request_timeout_s fails the request at once as
    rate_limited (before: the fallback answered at the deadline, counted timeout)."""
    with TestServer(fault="retry_after_forever") as server:
        eng = LiveSession(cfg_for(server.url, **{"brain.breaker_failures": 1000}), mode="realtime")
        step_in_wall_time(eng, 20, 0.05)
    fallbacks = eng.source.status()["fallbacks"]
    assert fallbacks.get("rate_limited", 0) > 0 and "timeout" not in fallbacks, fallbacks


def test_a_retry_after_longer_than_the_cap_is_not_asked_again_early():
    """A 429 whose Retry-After (0.05 s) is longer than brain.retry_after_cap_s is not retried
    after the cap (before: it slept the cap and asked again, earlier than the server asked):
    the request fails at once as rate_limited, no retry counted; under the cap it is retried."""
    import json

    def brain(*sets):
        run = headless_against("429", 6, "brain.warmup_timeout_s=1", "brain.breaker_failures=1000", *sets)
        return json.loads(run.stdout.splitlines()[-1])["brain"]

    capped = brain("brain.retry_after_cap_s=0.01")
    assert capped["fallbacks"].get("rate_limited", 0) > 0, capped["fallbacks"]
    assert capped["retries"] == 0, capped
    honoured = brain("brain.retry_after_cap_s=1")
    assert honoured["retries"] > 0, honoured
