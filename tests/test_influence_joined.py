"""``influence``'s forks of one tick stepped as one world (mirofish/session/influence_joined.py):
each fork's outcome and final state hash are what the fork run alone gives — the same task
through ``Forker.run`` — for every kind of outcome, for held plans and a fork of a fork; and
what cannot be joined runs alone, with the same results."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from mirofish.batch import Batch
from mirofish.cli import main
from mirofish.config import load_config
from mirofish.session import LiveSession, influence_forks
from mirofish.session.influence import Forker, Task
from mirofish.session.influence_joined import joinable, run_joined
from mirofish.world import World

AT = 150
PLANS = ("explore north 30", "explore east 90", "school 120", "rest 100 20", "forage 60", "keep_away crowd 8")


@pytest.fixture(scope="module")
def recs(tmp_path_factory):
    """A 40-fish instinct run (seed 5, 260 ticks), a fork of it (a plan held from t100 to t220),
    and the same run with food put in by hand at t180 (an intervention)."""
    d = tmp_path_factory.mktemp("joined")
    plain, forked, rocked = d / "plain.mirofish", d / "forked.mirofish", d / "rocked.mirofish"
    assert main(["live", "--headless", "--ticks", "260", "--fish", "40", "--seed", "5", "--record", str(plain)]) == 0
    assert main(["fork", str(plain), "--at", "100", "--fish", "4", "--plan", "explore west 120",
                 "--ticks", "160", "--record", str(forked)]) == 0
    live = LiveSession(load_config(seed=5, **{"fish.count": 40}))
    live.start_recording(rocked)
    live.run(180)
    live.engine.intervene({"kind": "food", "x": 20, "y": 20})
    live.run(80)
    live.stop_recording()
    removed = d / "removed.mirofish"  # fish 6 and 33 taken out of the water by hand at t100
    live = LiveSession(load_config(seed=7, **{"fish.count": 40}))
    live.start_recording(removed)
    live.run(100)
    live.engine.intervene({"kind": "remove", "fish": 6})
    live.engine.intervene({"kind": "remove", "fish": 33})
    live.run(160)
    live.stop_recording()
    return {"plain": plain, "forked": forked, "rocked": rocked, "removed": removed}


def tasks(tick: int = AT) -> list[Task]:
    """Forks of one tick: plans swapped into several fish (one of them twice), a null, a keep, the baseline."""
    out = [Task("alternative", tick, fish, plan) for fish, plan in zip((0, 3, 7, 11, 19, 3), PLANS)]
    return out + [Task("null", tick, 25, "explore south 40"), Task("keep", tick, 30, "forage 60"),
                  Task("baseline", tick)]


def alone(forker: Forker, ts: list[Task]) -> list[dict]:
    return [forker.run(t) for t in ts]


@pytest.mark.parametrize("outcome", ["largest_school@230", "schooling@200:215", "fish.7.energy@210",
                                     "fish.3.x@190:200", "conflict_rate@240"])
def test_joined_forks_give_each_forks_own_outcome_and_hash(recs, outcome):
    f = Forker(recs["plain"], outcome)
    try:
        assert joinable(f) is None
        ts = tasks()
        joined = run_joined(f, ts)
        assert joined is not None, "these forks should step as one world"
        assert joined == alone(f, ts)
        assert len({r["final_hash"] for r in joined}) > 5  # the swaps made different tanks
    finally:
        f.close()


def test_a_fork_of_a_fork_keeps_the_held_plan_and_a_swap_holds_its_own(recs):
    f = Forker(recs["forked"], "largest_school@250")
    try:
        ts = [Task("alternative", 140, fish, plan) for fish, plan in ((4, "rest 100 20"), (5, "explore east 60"),
                                                                     (9, "school 120"))] + [Task("baseline", 140)]
        joined = run_joined(f, ts)
        assert joined is not None and joined == alone(f, ts)
    finally:
        f.close()


def test_a_user_outcome_is_read_off_each_forks_own_tank(recs, tmp_path):
    fn = tmp_path / "reach.py"
    fn.write_text("def east(snap):\n    return sum(f.x for f in snap.fish) / len(snap.fish)\n")
    f = Forker(recs["plain"], f"{fn}:east@200")
    try:
        joined = run_joined(f, tasks())
        assert joined is not None and joined == alone(f, tasks())
    finally:
        f.close()


def test_run_many_joins_the_forks_of_a_tick_and_runs_the_rest_alone(recs, monkeypatch):
    f = Forker(recs["plain"], "largest_school@230")
    try:
        mixed = [*tasks(150), Task("alternative", 150, 6, "hide 40"),  # a plan that swims to a target
                 Task("ablate_fish", 150, 2, rep=0), Task("alternative", 170, 1, "explore north 30"),
                 *tasks(120)]
        expected = alone(f, mixed)
        alone_calls = []
        real_run = influence_forks.Forker.run
        monkeypatch.setattr(influence_forks.Forker, "run", lambda self, t: alone_calls.append(t) or real_run(self, t))
        assert f.run_many(mixed) == expected
        # the two ticks' forks each joined (t150's ablation with them); the hide fork and t170's lone fork alone
        assert [(t.kind, t.tick, t.plan) for t in alone_calls] == [
            ("alternative", 150, "hide 40"), ("alternative", 170, "explore north 30")]
    finally:
        f.close()


def ablations(f: Forker, tick: int) -> list[Task]:
    """A fish's every decision and a plan type's every choice replaced, two replicates each; the baseline."""
    goals = [f.rec.plans.code[name] for name in ("school", "forage", "explore")]
    return ([Task("ablate_fish", tick, fish, rep=r) for fish in (2, 7, 19) for r in (0, 1)]
            + [Task("ablate_goal", tick, goal=g, rep=r) for g in goals for r in (0, 1)] + [Task("baseline", tick)])


@pytest.mark.parametrize("outcome", ["largest_school@230", "fish.7.energy@210", "conflict_rate@200:230"])
def test_ablation_forks_joined_give_each_forks_own_outcome_and_hash(recs, outcome):
    f = Forker(recs["plain"], outcome, window=(AT, 200))
    try:
        ts = ablations(f, AT) + [Task("ablate_fish", AT, 40), Task("ablate_fish", AT, -1)]  # (no such fish: as alone)
        joined = run_joined(f, ts)
        assert joined is not None, "ablations should step as one world"
        assert joined == alone(f, ts)
        # the ablations changed their tanks each its own way (a draw may happen to be the planner's choice)
        assert len({r["final_hash"] for r in joined}) >= len(ts) - 4
    finally:
        f.close()


def test_an_ablated_fish_holding_a_forks_plan_is_held_first(recs):
    f = Forker(recs["forked"], "largest_school@250", window=(140, 230))  # fish 4 holds its plan to t220
    try:
        ts = [Task("ablate_fish", 140, fish, rep=0) for fish in (4, 5)] + ablations(f, 140)
        joined = run_joined(f, ts)
        assert joined is not None and joined == alone(f, ts)
    finally:
        f.close()


def test_interventions_inside_the_forks_and_the_numpy_tick_run_alone(recs, monkeypatch):
    f = Forker(recs["rocked"], "largest_school@230")
    try:
        assert run_joined(f, tasks()) is None  # the food put in at t180 lies inside t150 … t230
        assert run_joined(f, tasks(200)) is not None  # … not inside t200 … t230
        assert f.run_many(tasks()) == alone(f, tasks())
    finally:
        f.close()
    monkeypatch.setenv("MIROFISH_TICK", "numpy")
    f = Forker(recs["plain"], "largest_school@230")
    try:
        assert "compiled tick" in (joinable(f) or "")
    finally:
        f.close()


def test_alike_tanks_are_one_world_given_again_and_again():
    cfg = load_config(seed=2, **{"fish.count": 12})
    w, other = World(cfg), World(cfg)
    with pytest.raises(ValueError, match="given twice"):
        Batch([w, w], planned=True)
    with pytest.raises(ValueError, match="alike tanks are one world"):
        Batch([w, other], planned=True, alike=True)
    with pytest.raises(ValueError, match="decide plans"):
        Batch([w, w], alike=True)  # a planner's tanks join only for a caller that asks for them (planned)
    b = Batch([w, w, w], planned=True, alike=True)
    before = w.state_hash()
    b.give(np.zeros(36, np.int8))  # every fish holds east…
    b.give(np.r_[np.zeros(12, np.int8), np.full(24, 2, np.int8)])  # …but those of tanks 1 and 2 go west
    b.step()
    east, west = b.world(0).state_hash(), b.world(1).state_hash()
    assert len({before, east, west}) == 3 and b.world(2).state_hash() == west and b.world(0) is w


@pytest.mark.parametrize("outcome", ["mean_energy@200", "fish_in_water@190:200", "schooling@200"])
def test_fish_taken_out_before_the_fork_stay_out_of_each_forks_figures(recs, outcome):
    f = Forker(recs["removed"], outcome)
    try:
        ts = [Task("alternative", 150, fish, plan) for fish, plan in ((0, "explore north 30"), (39, "school 120"),
                                                                     (3, "rest 100 20"))]
        joined = run_joined(f, ts)
        assert joined is not None and joined == alone(f, ts)
    finally:
        f.close()


def test_a_figure_of_remembered_places_is_asked_only_of_a_tank_with_places(recs, tmp_path, capsys):
    code = main(["influence", str(recs["plain"]), "--outcome", "home_range@200", "--window", "190:195"])
    err = capsys.readouterr().err
    assert code == 2 and "remember none" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    placed = tmp_path / "placed.mirofish"
    assert main(["live", "--headless", "--ticks", "220", "--fish", "30", "--seed", "2", "--set", "fish.places=3",
                 "--record", str(placed)]) == 0
    capsys.readouterr()
    f = Forker(placed, "home_range@210")
    try:
        assert "places" in (joinable(f) or "")  # (a tank with places: its forks run alone)
        ts = [Task("alternative", 190, 4, "explore east 30"), Task("baseline", 190)]
        assert f.run_many(ts) == alone(f, ts)
    finally:
        f.close()


def test_a_random_choosers_forks_join_too(tmp_path):
    rec = tmp_path / "random.mirofish"
    assert main(["live", "--headless", "--ticks", "200", "--fish", "30", "--seed", "8", "--set", "brain.chooser=random",
                 "--record", str(rec)]) == 0
    f = Forker(rec, "schooling@180:190")
    try:
        assert joinable(f) is None
        ts = [Task("alternative", 120, fish, plan) for fish, plan in ((1, "explore east 30"), (2, "school 120"),
                                                                     (29, "rest 100 20"))] + [Task("baseline", 120)]
        joined = run_joined(f, ts)
        assert joined is not None and joined == alone(f, ts)
    finally:
        f.close()


@pytest.mark.parametrize("outcome", ["school_travel@200:215", "largest_school@230", "tokens_per_decision@220",
                                     "schooling@200:215", "mean_energy@210", "fish.7.energy@210"])
def test_a_forks_metrics_doing_only_what_its_outcome_reads_give_the_same_outcome(recs, outcome):
    """A fork's metrics judge no words, count no decisions and sample nothing its outcome does not
    read (Outcome.lean); the outcome and hash are those of metrics doing everything, joined and alone."""
    lean, full = Forker(recs["plain"], outcome), Forker(recs["plain"], outcome)
    full.lean = False
    try:
        ts = tasks()
        expected = alone(full, ts)
        assert alone(lean, ts) == expected
        assert run_joined(lean, ts) == expected
        if outcome.startswith("school_travel"):  # the school moved between samples: the travel is read, not 0
            assert expected[-1]["outcome"] > 0
    finally:
        lean.close()
        full.close()


def test_what_a_forks_metrics_keep_for_each_kind_of_metric():
    """Two metrics watch one run, one doing everything, the other only what one metric reads:
    what that metric reads is equal, and the work it does not read is left undone."""
    from mirofish.observe.metrics import METRICS, SAMPLE_ALL, SAMPLE_NONE, SAMPLE_POSITIONS
    from mirofish.session.base import observed

    by_key = {m.key: m for m in METRICS}
    for key, sampling, counts in (("school_travel", SAMPLE_POSITIONS, False), ("fallback_rate", SAMPLE_NONE, True),
                                  ("action_entropy", SAMPLE_NONE, False), (None, SAMPLE_NONE, False)):
        live = LiveSession(load_config(seed=3, **{"fish.count": 30}))
        live.run(40)
        lean = copy.deepcopy(live.metrics)
        lean.keep_for(by_key[key] if key else None)
        assert (lean.sampling, lean.count_decisions, lean.judge_words) == (sampling, counts, False)
        observed(live.engine, lean)
        judged, samples = int(lean.word_deed.counts[:, 5].sum()), lean._samples
        live.run(45)
        full = live.metrics
        assert int(lean.word_deed.counts[:, 5].sum()) == judged < int(full.word_deed.counts[:, 5].sum())
        assert lean._samples == samples and full._samples > samples  # (no metric sampled)
        assert lean.current()["action_entropy"] == full.current()["action_entropy"]  # (the tally: always)
        assert (lean.decisions_window() == full.decisions_window()) == counts
        if sampling == SAMPLE_POSITIONS:
            assert np.array_equal(lean._prev_xy, full._prev_xy)
    # a metric of another package, a registry's, or a row put in a table by hand, under a shipped
    # row's key, may read anything: only a shipped row's own compute function is known
    def theirs_reads(s):
        return float(s.f.tick)

    for row in (dataclasses.replace(by_key["school_size"], plugin="registry", compute=theirs_reads),
                dataclasses.replace(by_key["school_size"], compute=theirs_reads)):
        theirs = copy.deepcopy(live.metrics)
        theirs.keep_for(row)
        assert (theirs.sampling, theirs.count_decisions, theirs.judge_words) == (SAMPLE_ALL, True, True)
