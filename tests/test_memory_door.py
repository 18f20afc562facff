"""Memory as a replaceable part (fish/recall.py, docs/memory.md): the default two-level memory
behind the door tells prompts exactly what they held before; "none" tells them nothing; a
memory of a person's own (the worked example, examples/last_meal_memory.py) is told every event
and fills the prompt, through a real model run against the test server; bad memories are one
line or a counted fallback, and a recording naming one never imports it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.fish.recall import NoMemory, TwoLevel, new_events
from mirofish.session import LiveSession

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/last_meal_memory.py:LastMeal"


def llm(url: str, **dotted):
    base = {"fish.count": 8, "brain.kind": "llm", "brain.small.endpoints": [{"base_url": url, "model": "fish-mini"}],
            "brain.request_timeout_s": 2.0, "brain.backoff_s": 0.01, "seed": 5}
    return load_config(**{**base, **dotted})


def test_the_default_memory_tells_a_prompt_what_the_ring_and_the_summaries_hold():
    s = LiveSession(load_config(seed=3, **{"fish.count": 20}))
    s.run(120)
    w = s.world
    assert isinstance(w.recall_part, TwoLevel)
    for i in range(0, 20, 5):
        p = w.perceive(i)
        assert list(p.memories) == w.school.memory.lines(i) and list(p.summaries) == w.summaries(i)
        assert p.memories  # 120 ticks: every fish has events


def test_none_tells_a_prompt_nothing_and_changes_no_tank():
    a = LiveSession(load_config(seed=3, **{"fish.count": 20}))
    b = LiveSession(load_config(seed=3, **{"fish.count": 20, "memory.kind": "none"}))
    a.run(80)
    b.run(80)
    assert isinstance(b.world.recall_part, NoMemory)
    assert a.state_hash() == b.state_hash()  # the instinct brain reads no memory: the same tank
    p = b.world.perceive(0)
    assert p.memories == () and p.summaries == () and "(none yet)" in p.text()


def test_new_events_are_the_ring_entries_a_tick_added_in_order():
    s = LiveSession(load_config(seed=4, **{"fish.count": 30}))
    w = s.world
    seen = w.school.memory.count.astype(np.int64)
    got = []
    for _ in range(60):
        s.step()
        got.append(new_events(w, seen))
    assert sum(len(e) for e in got) == int(w.school.memory.count.sum())  # every event told once (< a ring a tick)
    last = got[-1]
    for k in range(len(last)):  # the newest ones are in the ring's lines, in words
        assert f"t{int(last.tick[k])} {last.text(k)}" in w.school.memory.lines(int(last.fish[k]))


def test_a_memory_of_ones_own_fills_the_prompt_of_a_real_model_run():
    with TestServer(keep_bodies=True) as server:
        cfg = llm(server.url, **{"memory.kind": EXAMPLE})
        s = LiveSession(cfg, mode="lockstep", own_memory=True)
        try:
            s.run(150)
        finally:
            s.close()
        bodies = [json.loads(b) for b in server.bodies]
    users = [m["content"] for b in bodies[1:] for m in b["messages"] if m["role"] == "user"]  # (first: the warm-up)
    assert users
    told = [u for u in users if "I last ate" in u or "I have not eaten yet" in u]
    assert len(told) == len(users), "every decision's prompt holds the memory's lines, and only them"
    assert any("I last ate" in u for u in users)  # some fish ate, and remembered it
    assert not any("nothing to eat here" in u or "saw " in u.split("memories:")[-1][:200] for u in told[:5])
    assert s.world.memory_fallbacks == 0


def test_a_memory_that_raises_is_a_counted_fallback_and_the_tank_goes_on(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("class Flaky:\n    def __init__(self, n):\n        self.k = 0\n"
                   "    def recall(self, fish, tick, view):\n        self.k += 1\n"
                   "        if self.k % 2:\n            raise RuntimeError('lost my keys')\n"
                   "        return ['fine'], []\n")
    with TestServer() as server:
        s = LiveSession(llm(server.url, **{"memory.kind": f"{bad}:Flaky"}), mode="lockstep", own_memory=True)
        try:
            s.run(60)
        finally:
            s.close()
    assert s.world.memory_fallbacks > 0 and s.tick == 60
    assert "lost my keys" in s.world.recall_part.problems[0]


def test_a_memory_that_gives_too_much_is_kept_within_the_prompts_token_budget(tmp_path):
    """A memory of one's own may give 64 lines; what a model is told stays within
    brain.memory_tokens, the oldest left out first (the newest memory always kept)."""
    from mirofish.brains.prompt import estimate_tokens
    wordy = tmp_path / "wordy.py"
    wordy.write_text("class Wordy:\n    def __init__(self, n):\n        pass\n"
                     "    def recall(self, fish, tick, view):\n"
                     "        mem = [f'm{k} at t{tick} the water was cold, I swam past a stone' for k in range(64)]\n"
                     "        return mem, [f's{k} an afternoon of drifting, looking for food' for k in range(16)]\n")
    told = {}
    for budget in (120, 0):
        with TestServer(keep_bodies=True) as server:
            cfg = llm(server.url, **{"memory.kind": f"{wordy}:Wordy", "brain.memory_tokens": budget,
                                     "brain.prompt_memories": 64, "brain.prompt_summaries": 16})
            s = LiveSession(cfg, mode="lockstep", own_memory=True)
            try:
                s.run(30)
            finally:
                s.close()
            bodies = [json.loads(b) for b in server.bodies[1:]]
        users = [m["content"] for b in bodies for m in b["messages"] if m["role"] == "user"]
        assert users
        told[budget] = [[ln for ln in u.split("\n") if ln.startswith(("Recent:", "Earlier:", "- s"))]
                        for u in users]
    for block in told[120]:
        text = "\n".join(block)
        assert estimate_tokens(text) <= 120, text
        assert "m63 at" in text and "m0 at" not in text  # the newest kept, the oldest left out
    unbounded = "\n".join(told[0][0])
    assert "m0 at" in unbounded and estimate_tokens(unbounded) > 600  # 0: no budget, all 64 told


def test_one_memory_alone_over_the_budget_is_cut_to_its_first_words():
    import dataclasses

    from mirofish.brains.prompt import default_prompt, estimate_tokens, memory_block
    w = LiveSession(load_config(seed=3, **{"fish.count": 4})).world
    p = dataclasses.replace(w.perceive(0), memories=("t5 " + "a very long memory " * 40,), summaries=())
    recent, earlier = memory_block(default_prompt(), "plan", p, 8, 3, budget=30)
    assert recent.startswith("t5 a very long") and recent.endswith("…") and earlier == ""
    assert estimate_tokens(recent) <= 30
    assert memory_block(default_prompt(), "plan", p, 8, 3, budget=0)[0].count("memory") == 40


@pytest.mark.parametrize(("kind", "words"), [
    ("nowhere.py:Nope", "memory nowhere.py:Nope"),
    ("examples/last_meal_memory.py:Missing", "defines no Missing"),
    ("no_such_memory", "unknown memory 'no_such_memory'"),
])
def test_a_memory_that_does_not_load_is_one_line_exit_2(kind, words):
    done = subprocess.run([sys.executable, "-m", "mirofish", "live", "--headless", "--ticks", "5", "--fish", "5",
                           "--memory", kind], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_recording_naming_a_memory_is_replayed_without_importing_it(tmp_path):
    marker = tmp_path / "imported"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w').write('x')\nclass M:\n    def recall(self, f, t, v):\n"
                    f"        return [], []\n")
    rec = tmp_path / "r.mirofish"
    run = [sys.executable, "-m", "mirofish"]
    made = subprocess.run([*run, "live", "--headless", "--ticks", "30", "--fish", "6", "--record", str(rec),
                           "--set", f"memory.kind={evil}:M"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert made.returncode == 0, made.stderr
    assert marker.exists()  # the person who started the run named it: it was loaded
    marker.unlink()
    replayed = subprocess.run([*run, "replay", str(rec), "--headless", "--verify"], capture_output=True, text=True,
                              cwd=ROOT, timeout=120)
    assert replayed.returncode == 0, replayed.stderr
    assert not marker.exists()  # the recording names it: a replay never imports it


def _vector_run(url: str, ticks: int, record: Path | None = None) -> LiveSession:
    s = LiveSession(llm(url, **{"memory.kind": "vector"}), mode="lockstep", own_memory=True)
    if record is not None:
        s.start_recording(record)
    try:
        s.run(ticks)
    finally:
        if record is not None:
            s.stop_recording()
        s.close()
    return s


def test_the_vector_memory_recalls_by_score_reflects_on_real_events_and_replays_exactly(tmp_path):
    rec = tmp_path / "v.mirofish"
    with TestServer(keep_bodies=True) as server:
        s = _vector_run(server.url, 400, rec)
        first = [json.loads(b) for b in server.bodies[1:]]
        server.bodies.clear()
        again = _vector_run(server.url, 400)
        second = [json.loads(b) for b in server.bodies[1:]]
    assert first == second and s.state_hash() == again.state_hash()  # deterministic: the same prompts, the same tank
    mem = s.world.recall_part.inner
    users = [m["content"] for b in first for m in b["messages"] if m["role"] == "user"]
    assert any("Earlier: looking back: t" in u for u in users), "reflections reach the prompt"
    for items in mem.items:  # every reflection quotes events the fish lived, with their ticks
        lived = {f"t{t} {words}" for t, words, _, code in items if code != -1}
        for _, words, _, code in items:
            if code == -1:
                assert all(q in lived for q in words.removeprefix("looking back: ").split("; ")), words
    # recall: the top_k of the fish's events by recency × importance × relevance, in tick order
    fish = max(range(len(mem.items)), key=lambda f: len(mem.items[f]))
    recalled, _ = mem.recall(fish, s.tick, s.world.perceive(fish).view)
    assert len(recalled) == s.cfg.memory.top_k
    ticks = [int(line.split()[0][1:]) for line in recalled]
    assert ticks == sorted(ticks)
    replayed = subprocess.run([sys.executable, "-m", "mirofish", "replay", str(rec), "--headless", "--verify"],
                              capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert replayed.returncode == 0, replayed.stderr


def test_the_bundled_memory_sweep_runs_the_three_memories_on_identical_worlds():
    from mirofish.sweep.spec import check_settings, load_spec

    spec = load_spec(ROOT / "assets" / "sweeps" / "memory-ab.toml", base_url="http://127.0.0.1:9/v1", model="m")
    tasks = spec.tasks()
    kinds = sorted({t.params["memory.kind"] for t in tasks})
    assert kinds == ["none", "two_level", "vector"] and len(tasks) == 30
    assert all(check_settings(t) is None for t in tasks)
    by_seed: dict[int, set] = {}
    for t in tasks:
        by_seed.setdefault(t.seed, set()).add(t.params["memory.kind"])
    assert all(len(v) == 3 for v in by_seed.values())  # every seed under every memory


@pytest.mark.parametrize("fault", ["none", "no_embeddings"])
def test_the_vector_memory_embeds_with_the_servers_embeddings_or_falls_back_counted(fault):
    with TestServer(fault=fault) as server:
        s = LiveSession(llm(server.url, **{"memory.kind": "vector", "memory.embedder": "server"}), mode="lockstep",
                        own_memory=True)
        try:
            s.run(120)
        finally:
            s.close()
    mem = s.world.recall_part.inner
    assert s.tick == 120 and s.world.memory_fallbacks == 0  # recall itself never failed
    if fault == "none":
        # the server's vectors (its dimension, 64), each distinct text asked once (events repeat), none local
        texts = {words for items in mem.items for _, words, _, _ in items}
        assert mem.embed_requests > 0 and mem.embed_fallbacks == 0 and mem.dim == 64
        assert texts <= set(mem._vectors) and len(texts) < sum(len(items) for items in mem.items)
    else:  # a chat server that serves no embeddings: given up at the probe, every text local and counted
        assert mem.server_given_up and mem.embed_requests == 1 and mem.embed_fallbacks > 0
    assert any(items for items in mem.items)


def test_a_headless_run_counts_the_memorys_embedding_requests_by_kind_as_the_server_saw_them():
    with TestServer() as server:
        done = subprocess.run([sys.executable, "-m", "mirofish", "live", "--headless", "--ticks", "60", "--fish", "8",
                               "--brain", "llm", "--base-url", server.url, "--model", "fish-mini", "--memory", "vector",
                               "--set", "memory.embedder=server"], capture_output=True, text=True, cwd=ROOT,
                              timeout=300)
        seen = server.embeddings
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    kinds = summary["brain"]["requests_by_kind"]
    assert seen > 0 and kinds["embedding"] == seen == summary["memory"]["embedding_requests"]
    assert kinds["decision"] > 0


def test_the_vector_memory_with_a_dead_embedding_server_keeps_the_tank_moving():
    with TestServer() as server:
        url = server.url
    cfg = llm(url, **{"memory.kind": "vector", "memory.embedder": "server", "brain.request_timeout_s": 0.5,
                      "brain.max_retries": 0})
    s = LiveSession(cfg, mode="lockstep", own_memory=True)
    try:
        s.run(20)
    finally:
        s.close()
    mem = s.world.recall_part.inner
    assert s.tick == 20 and mem.server_given_up and mem.embed_fallbacks > 0


def test_a_vector_memory_run_re_asks_exactly_with_its_embedding_server_gone(tmp_path):
    rec = tmp_path / "v.mirofish"
    with TestServer() as server:  # chat and embeddings
        s = LiveSession(llm(server.url, **{"memory.kind": "vector", "memory.embedder": "server"}), mode="lockstep",
                        own_memory=True)
        s.start_recording(rec)
        try:
            s.run(60)
        finally:
            s.stop_recording()
            s.close()
    last = s.history.last  # a decision the model made, late in the run (its prompt recalled memories)
    fish = max((f for f in last if last[f]["tier"] >= 1 and last[f]["tick"] > 0), key=lambda f: last[f]["tick"])
    with TestServer(keep_bodies=True) as other:  # the run's server is gone; another deterministic one answers
        done = subprocess.run([sys.executable, "-m", "mirofish", "reask", str(rec), "--fish", str(fish), "--tick",
                               str(last[fish]["tick"]), "--base-url", other.url, "--json"], capture_output=True,
                              text=True, cwd=ROOT, timeout=120)
        asked = [json.loads(b) for b in other.bodies]
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["same_as_recorded"] == 1, out  # the recorded request, byte for byte: the same decision
    assert len(asked) == 1 and "messages" in asked[0]  # one chat request, no embeddings asked or needed
    assert "Recent: t" in next(m["content"] for m in asked[0]["messages"] if m["role"] == "user")


def test_a_mixed_tank_gives_each_group_its_own_memory():
    """The user-memory example in one group, the source's two-level memory in the other: each
    fish's prompt holds its own group's memory."""
    with TestServer(keep_bodies=True) as server:
        cfg = llm(server.url, **{"fish.count": 8, "fish.groups": [
            {"name": "meals", "count": 4, "memory": EXAMPLE}, {"name": "ring", "count": 4}]})
        s = LiveSession(cfg, mode="lockstep", own_memory=True)
        try:
            s.run(120)
        finally:
            s.close()
        bodies = [json.loads(b) for b in server.bodies[1:]]
    held = s.world.recall_part
    assert held.name.startswith("by group: meals=LastMeal, ring=two_level")
    users = [m["content"] for b in bodies for m in b["messages"] if m["role"] == "user"]
    meals = [u for u in users if "I last ate" in u or "I have not eaten yet" in u]
    assert meals and len(meals) < len(users)  # the other group's prompts hold the ring's events
    w = s.world
    for f in range(8):
        recalled = w.recall_part.recall(f, w.tick, "")[0]
        if f < 4:
            assert recalled and ("I last ate" in recalled[0] or "I have not eaten yet" in recalled[0])
        else:
            assert recalled == w.school.memory.lines(f)


def test_the_report_names_the_memory_a_run_was_told(tmp_path):
    from mirofish.session.report import fish_report, render_text

    rec = tmp_path / "v.mirofish"
    with TestServer() as server:
        s = LiveSession(llm(server.url, **{"memory.kind": "vector"}), mode="lockstep", own_memory=True)
        s.start_recording(rec)
        try:
            s.run(40)
        finally:
            s.stop_recording()
            s.close()
    r = fish_report(rec, 2)
    assert r.memory == "vector" and "  memory: vector (what its prompts were told is in the recorded" in render_text(r)


def test_a_rewound_live_tank_remembers_nothing_of_the_ticks_undone():
    """The window's fork of a live tank, then back: the vector memory is as it was at the fork
    (its items), not holding the discarded branch's events."""
    from mirofish.session.fork import ForkSession

    s = LiveSession(load_config(seed=6, **{"fish.count": 12, "memory.kind": "vector"}), own_memory=True)
    s.run(80)
    mem = s.world.recall_part.inner
    before = [list(items) for items in mem.items]
    fork = ForkSession.from_live(s, 0, "rest")
    s.run(60)  # the live parent runs on beside the branch, remembering more
    assert sum(map(len, mem.items)) > sum(map(len, before))
    fork.back()
    assert [list(items) for items in mem.items] == before and s.tick == 80
    s.run(5)  # and it is told the events from there on, once each
    assert all(len(items) >= len(old) for items, old in zip(mem.items, before))


def test_a_fork_resumes_with_the_vector_memory_as_it_was(tmp_path):
    """A fork of a recorded vector-memory run: its fish are told the memory rebuilt from the
    recording (the same items as the run had at the fork tick), never asking the recorded server;
    a fork of a live tank copies the live memory."""
    from mirofish.session.fork import ForkSession
    from mirofish.session.replay import ReplaySession

    rec = tmp_path / "v.mirofish"
    s = LiveSession(load_config(seed=8, **{"fish.count": 10, "memory.kind": "vector"}), own_memory=True)
    s.start_recording(rec)
    s.run(90)
    at_90 = [list(items) for items in s.world.recall_part.inner.items]
    s.run(30)
    s.stop_recording()
    # from the live tank now: a copy, not the same object (the branch's events are its own)
    live_fork = ForkSession.from_live(s, 1, "rest")
    branch = live_fork.engine.world.recall_part.inner
    assert branch is not s.world.recall_part.inner and branch.items == s.world.recall_part.inner.items
    live_fork.back()
    s.close()
    # from the recording at tick 90: rebuilt to what the run had then
    replay = ReplaySession(rec)
    replay.seek(90)
    fork = ForkSession(replay, 1, (4, 100, 20), None, replay.engine.source, "lockstep", owns_parent=True)
    rebuilt = fork.engine.world.recall_part.inner
    assert [list(items) for items in rebuilt.items] == at_90
    fork.engine.step()  # and it goes on being told the branch's events
    fork.close()


def test_a_fork_of_a_mixed_tanks_recording_rebuilds_the_vector_group_and_imports_no_named_file(tmp_path):
    """A mixed tank: one group told the vector memory, one a memory of one's own whose file
    writes a marker when imported. A fork of its recording rebuilds the vector group's memory as
    it was at the fork tick; the other group is told the two-level memory, its file never
    imported."""
    from mirofish.config import GroupConfig
    from mirofish.session.fork import ForkSession
    from mirofish.session.replay import ReplaySession

    marker = tmp_path / "imported"
    own = tmp_path / "own.py"
    own.write_text(f"open({str(marker)!r}, 'w').close()\nclass Own:\n    def recall(self, fish, tick, view):\n"
                   "        return ['mine'], []\n")
    groups = [GroupConfig(name="vec", count=5, memory="vector"), GroupConfig(name="own", count=5, memory=f"{own}:Own")]
    rec = tmp_path / "mixed.mirofish"
    s = LiveSession(load_config(seed=8, **{"fish.groups": groups}), own_memory=True)
    s.start_recording(rec)
    s.run(90)
    router = s.world.recall_part.inner
    at_90 = [list(items) for items in router.parts[0].inner.items]
    s.run(20)
    s.stop_recording()
    s.close()
    marker.unlink()
    replay = ReplaySession(rec)
    replay.seek(90)
    fork = ForkSession(replay, 1, (4, 100, 20), None, replay.engine.source, "lockstep", owns_parent=True)
    rebuilt = fork.engine.world.recall_part.inner
    assert rebuilt.name.startswith("by group: vec=vector, own=two_level")
    assert [list(items) for items in rebuilt.parts[0].inner.items] == at_90
    w = fork.engine.world
    assert w.recall_part.recall(7, w.tick, "")[0] == w.school.memory.lines(7)  # the other group: the ring
    fork.engine.step()
    fork.close()
    assert not marker.exists()


def test_what_the_vector_memory_recalled_is_recorded_with_each_exchange(tmp_path):
    import csv

    rec = tmp_path / "v.mirofish"
    with TestServer() as server:
        s = _vector_run(server.url, 150, rec)
    mem = s.world.recall_part.inner
    from mirofish.session.tables import export_tables

    out = tmp_path / "t"
    export_tables(rec, out, fmt="csv", workers=1)
    with open(out / "model_calls.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["kind"] == "decision"]
    said = [r for r in rows if r["recalled"]]
    assert said and len(said) >= len(rows) // 2  # (a fish that has lived no event yet recalls nothing)
    for r in said[-10:]:  # each recalled id is an item of that fish's memory, quoted in the prompt sent
        items = mem.items[int(r["fish"])]
        for part in r["recalled"].split("; "):
            k, score = part.split(":")
            t, words, _, _ = items[int(k)]
            assert f"t{t} {words}" in r["message"] and float(score) > 0


HOSTILE = """
import sys, time
class Hang:
    def __init__(self, n): pass
    def recall(self, fish, tick, view):
        time.sleep(30)
class Endless:
    def __init__(self, n): pass
    def recall(self, fish, tick, view):
        def forever():
            while True:
                yield "x"
        return forever(), []
class Exits:
    def __init__(self, n): pass
    def recall(self, fish, tick, view):
        sys.exit(3)
class Word:
    def __init__(self, n): pass
    def recall(self, fish, tick, view):
        return "ab"
class RememberRaises:
    def __init__(self, n): pass
    def remember(self, events):
        raise RuntimeError("no room")
    def recall(self, fish, tick, view):
        return ["raised, still here"], []
"""


@pytest.mark.parametrize("name", ["Hang", "Endless", "Exits", "Word"])
def test_a_memory_that_hangs_exits_or_answers_wrongly_is_a_counted_fallback(tmp_path, monkeypatch, name):
    import mirofish.session.memories as memories

    monkeypatch.setattr(memories, "RECALL_TIMEOUT_S", 0.3)
    (tmp_path / "hostile.py").write_text(HOSTILE)
    with TestServer() as server:
        s = LiveSession(llm(server.url, **{"memory.kind": f"{tmp_path / 'hostile.py'}:{name}", "fish.count": 4}),
                        mode="lockstep", own_memory=True)
        try:
            s.run(30)
        finally:
            s.close()
    held = s.world.recall_part
    assert s.tick == 30 and s.world.memory_fallbacks > 0 and held.problems
    if name == "Hang":  # not asked again after the first that ran out of time: one wait, not one a decision
        assert held.given_up and "did not return within 0.3 s" in held.problems[0]
    elif name == "Exits":
        assert "SystemExit" in held.problems[0]
    else:  # a generator or a string: not two lists of lines, refused at once (never read to its end)
        assert "two lists of lines" in held.problems[0]


def test_in_a_mixed_tank_one_groups_failing_memory_leaves_the_others_whole_and_a_rewind_restores_them(tmp_path):
    from mirofish.session.fork import ForkSession

    (tmp_path / "hostile.py").write_text(HOSTILE)
    cfg = load_config(seed=9, **{"fish.count": 8, "fish.groups": [
        {"name": "a", "count": 4, "memory": f"{tmp_path / 'hostile.py'}:RememberRaises"},
        {"name": "b", "count": 4, "memory": "vector"}]})
    alone = load_config(seed=9, **{"fish.count": 8, "fish.groups": [
        {"name": "a", "count": 4, "memory": "none"}, {"name": "b", "count": 4, "memory": "vector"}]})
    s, t = LiveSession(cfg, own_memory=True), LiveSession(alone, own_memory=True)
    s.run(100)
    t.run(100)
    b, b_alone = s.world.recall_part.inner.parts[1].inner, t.world.recall_part.inner.parts[1].inner
    assert [len(x) for x in b.items] == [len(x) for x in b_alone.items]  # group a's failures cost group b nothing
    assert s.world.recall_part.inner.parts[0].remember_failures > 0
    mark = [len(x) for x in b.items]
    fork = ForkSession.from_live(s, 0, "rest")
    s.run(40)
    fork.back()
    assert [len(x) for x in s.world.recall_part.inner.parts[1].inner.items] == mark
