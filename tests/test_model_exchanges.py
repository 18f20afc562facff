"""The model's part, kept: every exchange recorded as sent, never a credential, and reused.

Servers are the bundled test server on 127.0.0.1 (a real HTTP server speaking the OpenAI
protocol); nothing patches the client.
"""

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mirofish.brains.base import TIER_INDEX
from mirofish.brains.exchanges import ReplyCache, request_body
from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.observe.recording import Recorder, Recording
from mirofish.session import LiveSession

ROOT = Path(__file__).resolve().parent.parent

CANARY = "sk-CANARY-7f3a9c"


def llm_config(url: str, fish: int = 12, **dotted):
    base = {"fish.count": fish, "brain.kind": "llm", "brain.small.endpoints": [{"base_url": url, "model": "fish-mini"}],
            "seed": 1}
    base.update(dotted)
    return load_config(**base)


def record_run(cfg, path, ticks):
    session = LiveSession(cfg)
    rec = Recorder(path, cfg).attach(session)
    try:
        session.run(ticks)
    finally:
        rec.close()
        session.close()
    return session


@pytest.fixture(scope="module")
def model_run(tmp_path_factory):
    """The recorded model run: 60 fish, 2,000 ticks, lockstep, recorded; the server keeps every body it
    receives; a canary key in the environment and in the URL's userinfo."""
    import os

    path = tmp_path_factory.mktemp("exchanges") / "model.db"
    os.environ["MIROFISH_TEST_CANARY_KEY"] = CANARY
    try:
        with TestServer(keep_bodies=True) as server:
            url = server.url.replace("http://", f"http://fishuser:{CANARY}@")
            cfg = llm_config(url, fish=60, **{"brain.api_key_env": "MIROFISH_TEST_CANARY_KEY"})
            session = record_run(cfg, path, 2000)
            bodies = list(server.bodies)
            auth = set(server.seen_auth)
    finally:
        del os.environ["MIROFISH_TEST_CANARY_KEY"]
    return path, bodies, session, auth


def test_every_model_decision_has_an_exchange_whose_request_is_what_the_server_received(model_run):
    path, bodies, _, auth = model_run
    import base64

    # the credentials did reach the server (httpx sends a URL's userinfo as basic auth) …
    assert any(CANARY in base64.b64decode(a.split()[-1]).decode() for a in auth if a.startswith("Basic"))
    rec = Recording(path)
    calls = rec.model_calls()
    texts = rec.texts()
    received = Counter(json.dumps(json.loads(b), sort_keys=True) for b in bodies)
    sent = Counter(json.dumps(request_body(c, texts, rec.config.seed), sort_keys=True)
                   for c in calls if not c["cached"])
    # every recorded request is byte-for-byte (as JSON) one the server received, and every
    # request the server received is recorded but the one warm-up request before tick 0
    assert sent - received == Counter()
    assert sum((received - sent).values()) == 1
    decisions = {(c["tick"], c["fish"]) for c in calls if c["kind"] == "decision" and c["read"] == "ok"}
    model_made = 0
    for t in range(rec.first_tick, rec.last_tick):
        d = rec.decisions_at(t)
        for f, tier, status in zip(d.fish.tolist(), d.tier.tolist(), d.status.tolist()):
            if tier in (TIER_INDEX["small"], TIER_INDEX["large"]) and status == 0:
                model_made += 1
                assert (t, f) in decisions
    assert model_made > 2000 and len(decisions) == model_made
    # a due long-term summary is asked inside the decision request: no request of its own
    assert {c["kind"] for c in calls} == {"decision"}
    folded = [c for c in calls if '"summary": one sentence' in c["user"]]
    assert folded and all('"summary"' in (c["reply"] or "") for c in folded if c["read"] == "ok")
    assert all(c["endpoint"].startswith("http://***@127.0.0.1:") for c in calls)  # … and are not recorded
    rec.close()


def test_no_key_and_no_userinfo_anywhere_in_the_recording(model_run):
    path = model_run[0]
    raw = path.read_bytes()
    import zlib

    from mirofish.observe.recording import Recording as R

    assert CANARY.encode() not in raw and b"fishuser" not in raw
    rec = R(path)  # the chunks are compressed: look inside them too
    blobs = [row[0] for row in rec._db.execute("SELECT data FROM chunks")]
    assert blobs and not any(CANARY.encode() in zlib.decompress(b) or b"fishuser" in zlib.decompress(b)
                             for b in blobs)
    rec.close()


def test_exchanges_cost_at_most_twice_the_plan_only_recording(model_run, tmp_path):
    """The same run recorded without exchanges (record.model_calls = false) is the plan-only
    recording; with them the file stays within 2× (shared prefix stored once, chunks compressed)."""
    path = model_run[0]
    with TestServer() as server:
        cfg = llm_config(server.url, fish=60, **{"record.model_calls": False})
        record_run(cfg, tmp_path / "plain.db", 2000)
    with_calls, plain = path.stat().st_size, (tmp_path / "plain.db").stat().st_size
    assert plain < with_calls <= 2 * plain, (with_calls, plain)


def test_a_reply_cache_answers_a_repeated_run_without_a_server(tmp_path):
    """The same lockstep run twice: the first fills ``--reply-cache``; the second, with the server
    stopped, gets every decision from the cache and ends in the same state."""
    folder = tmp_path / "cache"
    with TestServer() as server:
        cfg = llm_config(server.url, fish=12)
        first = LiveSession(cfg, cache=ReplyCache(folder))
        first.run(120)
        first.close()
    url = server.url  # stopped now
    second = LiveSession(llm_config(url, fish=12), cache=ReplyCache(folder))
    second.run(120)
    status = second.source.status()
    second.close()
    assert first.state_hash() == second.state_hash()
    assert status["cache_hits"] > 12 and status["cache_misses"] == 0 and not status["fallbacks"]
    assert np.array_equal(first.engine.world.school.cell, second.engine.world.school.cell)


@pytest.fixture(scope="module")
def small_model_run(tmp_path_factory):
    """30 fish, 240 ticks, lockstep, recorded; the server is stopped afterwards."""
    path = tmp_path_factory.mktemp("forks") / "model.db"
    with TestServer() as server:
        record_run(llm_config(server.url, fish=30, seed=3), path, 240)
    return path


def _a_decision(path, after):
    rec = Recording(path)
    try:
        for t in range(after, rec.last_tick):
            d = rec.decisions_at(t)
            if d.fish.size:
                from mirofish.fish.plans import describe

                return t, int(d.fish[0]), describe(int(d.goal[0]), int(d.param[0]), int(d.horizon[0]))
    finally:
        rec.close()
    raise AssertionError("no decision")


def test_a_fork_that_changes_nothing_replays_the_model_run_from_its_replies_without_a_server(small_model_run):
    """Forked at a tick where a model also wrote a fish's long-term summary (left out, it would
    change every later prompt of that fish): every request is answered from the recording."""
    from mirofish.fish.plans import describe
    from mirofish.session import fork

    rec = Recording(small_model_run)
    asks = {(c["fish"], c["tick"]) for c in rec.model_calls() if c["kind"] == "decision"}

    def fits(t: int) -> bool:  # a summary written at t whose fish asks again within 80 ticks
        d = rec.decisions_at(t)
        return bool(d.summaries) and any((f, u) in asks for f, _, _ in d.summaries for u in range(t + 1, t + 80))

    t = next(t for t in range(60, rec.last_tick - 80) if fits(t))
    d = rec.decisions_at(t)
    fish, plan = int(d.fish[0]), describe(int(d.goal[0]), int(d.param[0]), int(d.horizon[0]))
    rec.close()
    out = fork(small_model_run, t, fish, plan, 80)  # the server is gone
    assert out["cache_misses"] == 0 and out["cache_hits"] > 30 and not out["fallbacks"]
    assert out["final_state_hash"] == out["parent_state_hash_at_same_tick"]
    assert out["divergence"]["first_tick_cells_differ"] is None


def test_a_fork_keeps_untouched_fishs_recorded_decisions_and_counts_the_misses(small_model_run, tmp_path):
    from mirofish.session import ReplaySession, fork

    t, fish, _ = _a_decision(small_model_run, 100)
    out = fork(small_model_run, t, fish, "rest 10", 120, tmp_path / "fork.db")
    assert out["cache_hits"] > 30 and out["cache_misses"] > 0
    assert out["fallbacks"] == {"cache_miss": out["fallbacks"]["cache_miss"]}  # every miss fell back, labelled
    assert out["divergence"]["first_tick_cells_differ"] is not None
    # before the divergence reaches them, fish keep their recorded decisions: every model
    # decision of the branch (a cache hit: there is no server) is the recorded one, and the
    # fish far from the swapped one keep theirs
    parent, branch = Recording(small_model_run), Recording(tmp_path / "fork.db")
    hits = kept = 0
    for tt in range(t + 1, branch.last_tick):
        b, p = branch.decisions_at(tt), parent.decisions_at(tt)
        recorded = {int(f): (int(g), int(q), int(h)) for f, g, q, h in zip(p.fish, p.goal, p.param, p.horizon)}
        for f, g, q, h, tier, status in zip(b.fish, b.goal, b.param, b.horizon, b.tier, b.status):
            if tier == TIER_INDEX["small"] and status == 0:
                hits += 1
                kept += recorded.get(int(f)) == (int(g), int(q), int(h))
    assert hits > 20 and kept == hits
    parent.close()
    branch.close()
    replay = ReplaySession(tmp_path / "fork.db")
    replay.seek(replay.last_tick)
    assert replay.state_hash() == out["final_state_hash"]  # the fork replays exactly
    replay.close()


def test_model_calls_table_joins_the_decisions_table(small_model_run, tmp_path):
    from mirofish.session.tables import export_tables

    out = export_tables(small_model_run, tmp_path / "t", fmt="csv", workers=1)
    assert out["tables"]["model_calls"]["rows"] > 60
    import csv

    with open(tmp_path / "t" / "model_calls.csv") as fh:
        calls = list(csv.DictReader(fh))
    with open(tmp_path / "t" / "decisions.csv") as fh:
        decisions = list(csv.DictReader(fh))
    asked = {(c["tick"], c["fish"]) for c in calls if c["kind"] == "decision" and c["read"] == "ok"}
    made = {(d["tick"], d["fish"]) for d in decisions if d["tier"] == "small" and d["status"] == "ok"}
    assert made and made == asked
    assert all(c["message"].startswith("You are ") and c["reply"] for c in calls if c["read"] == "ok")


def test_reask_returns_the_recorded_answer_and_shows_another_models_difference(small_model_run):
    from mirofish.session.reask import reask

    t, fish, _ = _a_decision(small_model_run, 50)
    with TestServer() as server:
        same = reask(small_model_run, fish, t, base_url=server.url, n=2)
        other = reask(small_model_run, fish, t, base_url=server.url, model="fish-mini-forager", n=2)
    assert same["same_as_recorded"] == 2 and same["answers"][0]["reply"] == same["recorded"]["reply"]
    assert same["legal"] == 2
    if same["recorded"]["choice"] != "forage":
        assert other["same_as_recorded"] == 0 and other["choices"] == {"forage": 2}


def test_reask_names_the_ticks_a_fish_did_ask_at(small_model_run, capsys):
    from mirofish.cli import main

    t, fish, _ = _a_decision(small_model_run, 50)
    assert main(["reask", str(small_model_run), "--fish", str(fish), "--tick", str(t + 1)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"t{t}" in err and "nearest" in err


def test_diff_of_a_run_and_its_fork_names_the_fork_tick_and_the_swapped_fish(small_model_run, tmp_path):
    from mirofish.cli import main
    from mirofish.session import fork
    from mirofish.session.diff import diff_runs, diff_windows

    t, fish, _ = _a_decision(small_model_run, 100)
    fork(small_model_run, t, fish, "rest 10", 60, tmp_path / "fork.db")
    d = diff_runs(small_model_run, tmp_path / "fork.db")
    assert d["from"] == t and d["first_divergent_decision"]["tick"] == t
    first = d["first_divergent_decision"]
    assert first["fish"] == [fish] and first["b"][0].startswith("rest until 10")
    assert fish in d["first_tick_cells_differ"]["fish"] and d["cells_differ"]["max"] >= 1
    same = diff_runs(small_model_run, small_model_run)
    assert same["first_divergent_decision"] is None and same["cells_differ"]["max"] == 0
    w = diff_windows(small_model_run, (0, 80), (120, 200))
    assert w["a"]["decisions"] > 30 and abs(sum(w["a"]["actions"].values()) - 1) < 1e-3
    assert main(["diff", str(small_model_run), str(tmp_path / "fork.db"), "--png", str(tmp_path / "d.png")]) == 0
    assert (tmp_path / "d.png").stat().st_size > 10_000
    assert main(["diff", str(small_model_run), "--a", "50:20", "--b", "0:10"]) == 2


def test_a_replay_fills_a_reply_cache_that_reruns_the_model_run_without_a_server(small_model_run, tmp_path, capsys):
    from mirofish.cli import main

    assert main(["replay", str(small_model_run), "--headless", "--reply-cache", str(tmp_path / "cache")]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["reply_cache"]["replies_added"] > 60
    rec = Recording(small_model_run)
    url = rec.config.brain.small.endpoints[0].base_url  # the recorded server: stopped now
    rec.close()
    assert main(["live", "--headless", "--ticks", str(replayed["tick"]), "--fish", "30", "--seed", "3",
                 "--base-url", url, "--model", "fish-mini", "--reply-cache", str(tmp_path / "cache")]) == 0
    live = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert live["final_state_hash"] == replayed["state_hash"]
    brain = live["brain"]
    assert brain["cache_misses"] == 0 and brain["cache_hits"] == replayed["reply_cache"]["replies_added"]


@pytest.mark.parametrize("fault", ["retry_after_forever", "hang"])
def test_reask_keeps_its_deadline_against_a_server_that_says_come_back_later_or_hangs(small_model_run, fault):
    """--timeout bounds each answer, retries and Retry-After included: two answers against a 429
    with Retry-After 100000 (or a server that never answers) take about 2 × 3 s at most, each
    says why it failed, and nothing is left pending ("Task was destroyed")."""
    import time

    t, fish, _ = _a_decision(small_model_run, 50)
    with TestServer(fault=fault) as server:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "run.py", "reask", str(small_model_run), "--fish", str(fish),
                               "--tick", str(t), "--base-url", server.url, "--n", "2", "--timeout", "3", "--json"],
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
        took = time.monotonic() - started
    assert took < 15, took
    answers = json.loads(done.stdout)["answers"]
    assert len(answers) == 2 and all(a["reply"] is None and a["read"] for a in answers)
    assert "Task was destroyed" not in done.stderr and "Traceback" not in done.stderr
    # no answer came: said in one line and exit 2, as survey says a server that answered nothing
    assert done.returncode == 2 and "answered none of the 2 request(s)" in done.stderr


def test_reask_against_a_dead_server_says_so_in_one_line_and_exits_2(small_model_run):
    """Nothing listens at the address: the answers are printed (each 'connection') and one line
    on stderr names the server; with a live server the same command exits 0."""
    t, fish, _ = _a_decision(small_model_run, 50)
    cmd = [sys.executable, "run.py", "reask", str(small_model_run), "--fish", str(fish), "--tick", str(t)]
    dead = subprocess.run([*cmd, "--base-url", "http://127.0.0.1:9/v1", "--timeout", "3"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert dead.returncode == 2, dead.stderr
    said = [line for line in dead.stderr.splitlines() if line.startswith("mirofish")]
    assert said == ["mirofish reask: the server at http://127.0.0.1:9/v1 answered none of the 1 request(s) "
                    "(connection 1)"], dead.stderr
    assert "[connection]" in dead.stdout and "Traceback" not in dead.stderr
    with TestServer() as server:
        alive = subprocess.run([*cmd, "--base-url", server.url], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert alive.returncode == 0 and "answered none" not in alive.stderr, alive.stderr


def test_a_cache_entry_taken_by_a_folder_is_skipped_and_leaves_no_temporary_file(tmp_path):
    key = "ab" + "0" * 30
    cache = ReplyCache(tmp_path / "cache")
    (tmp_path / "cache" / key[:2] / f"{key}.json").mkdir(parents=True)  # where the entry would go
    cache.put(key, "a reply", 10, 2, "m")  # kept in memory; the file cannot be written
    assert cache.get(key)["reply"] == "a reply"
    left = [p.name for p in (tmp_path / "cache").rglob("*") if p.name.startswith(".tmp-")]
    assert left == []
    assert ReplyCache(tmp_path / "cache").get(key) is None  # a folder is not an entry
