"""Does a fish do what it says? The word-and-deed score."""

import numpy as np

from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.fish.plans import Goal
from mirofish.observe.worddeed import word_verdict
from mirofish.session import LiveSession
from mirofish.session.headless import summarize_run


def test_a_thought_agrees_with_its_plan_only_when_it_says_the_plans_goal_or_way():
    explore, forage, rest = int(Goal.EXPLORE), int(Goal.FORAGE), int(Goal.REST)
    north, east = 0, 3
    assert word_verdict(explore, north, "open water north, nobody here") is True
    assert word_verdict(explore, east, "I head west, away from here") is False  # says one way, goes another
    assert word_verdict(forage, 0, "hungry, food two cells east") is True
    assert word_verdict(forage, 0, "tired, I stay put and rest") is False
    assert word_verdict(rest, 10, "tired, I stay put and rest") is True
    assert word_verdict(forage, 0, "hmm") is None and word_verdict(forage, 0, "") is None


def run(model: str, url: str):
    cfg = load_config(**{"fish.count": 20, "seed": 4, "brain.kind": "llm",
                         "brain.small.endpoints": [{"base_url": url, "model": model}]})
    s = LiveSession(cfg)
    try:
        s.run(300)
    finally:
        s.close()
    return summarize_run(s, 300, 1.0)["word_and_deed"], s


def test_a_server_whose_thoughts_contradict_its_plans_scores_low_and_the_follow_data_says_why():
    with TestServer() as server:
        honest, _ = run("fish-mini", server.url)
        contrary, session = run("fish-mini-contrarian", server.url)  # same plans, thoughts that say otherwise
    assert honest["thoughts_judged"] > 50 and contrary["thoughts_judged"] > 50
    assert honest["word_agrees"] >= 0.9 and contrary["word_agrees"] <= 0.1
    assert contrary["word_and_deed"] < honest["word_and_deed"]
    assert honest["deed_done"] == contrary["deed_done"]  # the same plans happen either way
    fish = session.metrics.word_deed.fish(int(np.argmax(session.metrics.word_deed.counts[:, 5])))
    assert fish["recent"] and fish["recent"][-1]["word"] is False and fish["word_agrees"] == 0.0


def test_the_instinct_brain_has_a_deed_score_and_no_word_score():
    s = LiveSession(load_config(**{"fish.count": 30, "seed": 2}))
    s.run(600)
    out = summarize_run(s, 600, 1.0)["word_and_deed"]
    assert out["plans_judged"] > 100 and out["word_agrees"] is None and 0.5 < out["deed_done"] <= 1.0
    assert "no thought" in out["note"]


def test_report_and_tables_carry_the_score_of_a_recorded_model_run(tmp_path):
    from mirofish.observe.recording import Recorder
    from mirofish.session.report import fish_report, render_text
    from mirofish.session.tables import export_tables

    with TestServer() as server:
        cfg = load_config(**{"fish.count": 12, "seed": 4, "brain.kind": "llm",
                             "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini-contrarian"}]})
        s = LiveSession(cfg)
        rec = Recorder(tmp_path / "r.db", cfg).attach(s)
        s.run(200)
        rec.close()
        s.close()
    busiest = int(np.argmax(s.metrics.word_deed.counts[:, 5]))
    r = fish_report(tmp_path / "r.db", busiest)
    assert r.word_deed["thoughts_judged"] >= 2 and r.word_deed["word_agrees"] == 0.0
    assert "disagreed: t" in render_text(r)
    out = export_tables(tmp_path / "r.db", tmp_path / "t", fmt="csv", workers=1)
    assert out["tables"]["word_deed"]["rows"] >= s.metrics.word_deed.counts[:, 5].sum() - 12


def test_large_batches_judged_at_once_score_as_fish_by_fish(monkeypatch):
    """A large tank's batches of new plans are opened and judged in numpy (worddeed.MANY); the
    scores and every record equal judging them one fish at a time, thoughts included."""
    from mirofish.observe import worddeed

    live = LiveSession(load_config(seed=4, **{"fish.count": 400, "world.width": 120, "world.height": 70,
                                               "brain.decides": "plan"}))
    said = ["I forage north", "school with them", "", "rest a while", "go east", "keep away from the crowd"]
    frames = []
    for t in range(300):
        f = live.step()
        for b in f.applied:  # thoughts to read, as a model's would be
            b.thoughts = [said[(t + int(i)) % len(said)] for i in b.fish]
        frames.append(f)
    assert max(len(b) for f in frames for b in f.applied) >= worddeed.MANY
    scores = []
    for many in (worddeed.MANY, 10**9):
        monkeypatch.setattr(worddeed, "MANY", many)
        wd = worddeed.WordDeed(400, keep=True)
        for f in frames:
            wd.observe(f)
        scores.append((wd.counts.copy(), wd.records, {c: a.copy() for c, a in wd.plan.items()}))
    (c1, r1, p1), (c2, r2, p2) = scores
    assert np.array_equal(c1, c2) and r1 == r2 and all(np.array_equal(p1[c], p2[c]) for c in p1)
    assert len(r1) > 1000 and c1[:, 0].sum() > 0 and c1[:, 1].sum() > 0  # words agreed and disagreed


def test_large_batches_of_plans_without_thoughts_are_scored_as_fish_by_fish(monkeypatch):
    """The instinct brain's plans carry no thought: a large tank's batches of them are judged in
    numpy and kept only in the ring (no records). Each fish's deeds done and not done equal
    judging them one at a time (the "not done" count once went down by one or two per plan)."""
    from mirofish.observe import worddeed

    live = LiveSession(load_config(seed=4, **{"fish.count": 400, "world.width": 120, "world.height": 70}))
    frames = [live.step() for _ in range(300)]
    assert max(len(b) for f in frames for b in f.applied) >= worddeed.MANY
    assert not any(b.thoughts for f in frames for b in f.applied)
    counts = []
    for many in (worddeed.MANY, 10**9):
        monkeypatch.setattr(worddeed, "MANY", many)
        wd = worddeed.WordDeed(400)
        for f in frames:
            wd.observe(f)
        counts.append(wd.counts.copy())
        assert (wd.counts >= 0).all()
        assert np.array_equal(wd.counts[:, 2] + wd.counts[:, 3], wd.counts[:, 5])  # each judged plan done or not
    assert np.array_equal(counts[0], counts[1]) and counts[0][:, 5].sum() > 1000


def test_plans_without_words_judged_in_c_score_as_in_python():
    """Batches of plans without words are judged and opened in one compiled call (_tick.judge):
    every count, ring slot and open plan equals the Python reference's, plan by plan, in small
    and large tanks, and when batches with words (read in Python) come between them."""
    import pytest

    from mirofish import kernel
    from mirofish.observe import worddeed

    if kernel.compiled_tick() is None:
        pytest.skip("the compiled tick is not built here (MIROFISH_TICK=numpy)")
    from mirofish.fish.plantypes import DEEDS

    assert kernel.compiled_tick().JUDGE_DEEDS == DEEDS  # the C side's deed checks, in the plan types' order
    said = ["I forage north", "", "school with them", "go east"]
    for fish, (w, h), worded in ((60, (96, 54), False), (400, (120, 70), False), (60, (96, 54), True),
                                 (400, (120, 70), True)):
        live = LiveSession(load_config(seed=5, **{"fish.count": fish, "world.width": w, "world.height": h}))
        frames = []
        for t in range(400):
            f = live.step()
            if worded and t % 3 == 0:
                for b in f.applied:  # a model's words on some ticks' plans
                    b.thoughts = [said[(t + int(i)) % len(said)] for i in b.fish]
            frames.append(f)
        runs = []
        for compiled in (True, False):
            wd = worddeed.WordDeed(fish)
            wd.compiled = compiled
            for f in frames:
                wd.observe(f)
            runs.append(wd)
        fast, slow = runs
        assert fast.counts[:, 5].sum() > 300
        for name in ("counts", "_ring", "_ring_n", "table", "open", "_said", "food0"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name)), (fish, worded, name)
        assert fast._holds == slow._holds and fast._ring_thought == slow._ring_thought
        if worded:
            assert fast.counts[:, 0].sum() + fast.counts[:, 1].sum() > 0  # words were read too


def test_a_thought_that_claims_food_is_read_as_a_claim_not_as_a_search():
    from mirofish.observe.worddeed import claims_food

    assert claims_food("hungry, food two cells east") and claims_food("eat the food here")
    assert not claims_food("no food here, heading east") and not claims_food("looking for food to the north")
    assert not claims_food("hungry") and not claims_food("open water north")


def test_a_copied_food_thought_with_no_food_in_view_never_agrees():
    """The copycat server gives every plan the prompt's example thought ("hungry, food two cells
    east") whatever the fish sees: where the fish had no food in view the thought is unfounded
    and does not agree, so the copycat's word score falls below the honest server's."""
    with TestServer() as server:
        honest, _ = run("fish-mini", server.url)
        copycat, session = run("fish-mini-copycat", server.url)
    assert honest["word_unfounded"] == 0
    assert copycat["word_unfounded"] > 10 and copycat["word_agrees"] < honest["word_agrees"]
    wd = session.metrics.word_deed
    said = wd.counts[:, :2].sum()
    assert copycat["word_agrees"] == round(float(wd.counts[:, 0].sum()) / said, 3)
    unseen = [r for f in range(wd.n) for r in wd.recent[f] if r.get("unfounded")]
    assert unseen and all(r["word"] is False and r["thought"] == "hungry, food two cells east" for r in unseen)
