"""Negotiation with grounding repair, bandit-chosen strategies and Argent signals."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mirofish.scenes.negotiation import dialogue as D
from mirofish.scenes.negotiation.world import NAMED, Session

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("seed", (1, 2))
def test_repair_and_signals_beat_no_repair_on_the_same_sessions(seed):
    with_repair, _, _ = D.evaluate(250, seed, True)
    without, _, _ = D.evaluate(250, seed, False)
    assert with_repair["agreement_rate"] > without["agreement_rate"]
    assert with_repair["joint_utility_mean"] > without["joint_utility_mean"]
    assert 0.05 <= with_repair["repair_share"] <= 0.15
    assert with_repair["unresolved_conflicts_mean"] < without["unresolved_conflicts_mean"]
    assert without["repair_share"] == 0.0


def test_the_bandit_stops_choosing_a_strategy_that_does_not_work():
    _, normal, _ = D.evaluate(400, 5, True)
    q = len(normal.history) // 4
    best = max(D.STRATEGIES, key=lambda a: sum(x == a for x in normal.history[-q:]))  # what it learnt to use
    broken = {k: dict(v) for k, v in D.EFFECT.items()}
    broken[best] = {k: 0.0 for k in broken[best]}
    _, bandit, _ = D.evaluate(400, 5, True, effect=broken)
    h = bandit.history

    def share(xs):
        return sum(a == best for a in xs) / len(xs)

    # the strategy it relied on, made useless, is soon left alone: well under an even share late
    # in the run, and a fraction of how often the same bandit uses it when it works
    assert share(h[-q:]) < 0.5 / len(D.STRATEGIES) < share(normal.history[-q:])
    assert 3 * bandit.pulls[best] < normal.pulls[best]


def test_goal_hash_ignores_case_whitespace_and_punctuation():
    restated = "  agree ON price delivery time, payment terms; support scope and the AI feature"
    assert D.goal_hash(D.GOAL) == D.goal_hash(restated)
    assert D.goal_hash(D.GOAL) != D.goal_hash("Agree on the price.")


def test_sessions_have_private_definitions_that_differ():
    mismatched = [Session.draw(k).mismatched for k in range(100)]
    assert sum(bool(m) for m in mismatched) > 60 and all(set(m) <= set(NAMED) for m in mismatched)


def test_a_session_records_grounding_state_signals_and_repairs(tmp_path):
    db = tmp_path / "neg.db"
    D.evaluate(30, 3, True, db_path=str(db))
    rows = sqlite3.connect(db).execute("SELECT session_id, state, turns, result FROM sessions").fetchall()
    assert len(rows) == 30
    states = [json.loads(r[1]) for r in rows]
    turns = [t for r in rows for t in json.loads(r[2])]
    assert all("entities" in s["grounding_status"] and "uncertainty_score" in s for s in states)
    assert all("layer1" in t["signals"] or "layer3" in t["signals"] for t in turns)
    assert any("layer2" in t["signals"] for t in turns)
    assert any(t["kind"] == "repair" for t in turns)
    statuses = {p["status"] for s in states for p in s["grounding_status"]["propositions"].values()}
    assert {"countered", "accepted"} <= statuses


def test_anti_loop_and_agree_to_disagree():
    never = {k: {f: 0.0 for f in v} for k, v in D.EFFECT.items()}  # no strategy ever works …
    found = {"yes_no": 0, "disagree": 0}
    bandit = D.Bandit()
    for k in range(60):
        neg = D.Negotiation(Session.draw(900 + k), True, bandit, never)
        neg.run()
        found["yes_no"] += sum(1 for t in neg.turns if t.strategy == "yes_no_confirmation")
        found["disagree"] += len(neg.disagreed)
    assert found["yes_no"] > 0  # … so after two failures the anti-loop rule asks yes/no
    assert found["disagree"] > 0 or found["yes_no"] > 0


def test_model_negotiators_end_to_end_and_malformed_signals_counted():
    from mirofish.brains.testserver import TestServer
    from mirofish.scenes.negotiation.model_agents import model_speakers

    with TestServer() as server:
        speakers_for, close = model_speakers(server.url, "m", 1)
        summary, _, _ = D.evaluate(4, 1, True, speakers_for=speakers_for)
        failures = close()
    made = failures.pop("model_turns")
    assert summary["sessions"] == 4 and summary["agreement_rate"] > 0 and not failures and made > 20
    with TestServer(fault="garbage", fault_every=2) as server:
        out = subprocess.run([sys.executable, "run.py", "negotiation", "--headless", "--sessions", "3", "--seed", "2",
                              "--agents", "llm", "--base-url", server.url, "--model", "m"],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
    summary = json.loads(out.stdout)
    assert summary["model_failures"].get("signal_json_malformed", 0) > 0 and summary["sessions"] == 3
    made = summary["model_made"]  # the JSON says how much of the run the model played
    assert made["turns"] > 0 and made["fell_back"] > 0 and 0 < made["share"] < 1


def test_cli_json_and_bad_input():
    out = subprocess.run([sys.executable, "run.py", "negotiation", "--headless", "--sessions", "40", "--seed", "2"],
                         capture_output=True, text=True, cwd=ROOT)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    for key in ("agreement_rate", "joint_utility_mean", "fairness_mean", "rounds_mean", "repair_share",
                "uncertainty_mean", "uncertainty_max", "unresolved_conflicts_mean"):
        assert key in data
    for args in (["--sessions", "0"], ["--agents", "llm"], ["--bogus"]):
        bad = subprocess.run([sys.executable, "run.py", "negotiation", "--headless", *args], capture_output=True,
                             text=True, cwd=ROOT)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_every_failure_type_is_detected_repaired_and_mostly_right_on_each_seed():
    """On each of the tuning seeds, every failure type is detected and repaired in 250 sessions,
    and the detections are right — the two sides did read a name they are about differently —
    at least 60 % of the time overall and 40 % for every type. (value_opacity, a deal about to
    settle on a relative name nobody stated, is not raised with repair on: the first-use repair
    gets there first.)"""
    kinds = {"undefined_term", "contradiction", "vague_reference", "extreme_statement", "backtracking",
             "inheritance", "assumption_conflict", "response_expectation", "strategy_misjudgment"}
    for seed in (1, 2, 3):
        summary, _, _ = D.evaluate(250, seed, True)
        table, precision = summary["failure_types"], summary["detector_precision"]
        assert kinds <= set(table), (seed, set(table))
        assert all(table[k]["detections"] > 0 and table[k]["repairs"] > 0 for k in kinds), (seed, table)
        assert all(0 <= table[k]["restored"] <= table[k]["repairs"] for k in kinds)
        assert precision["all_judged"]["judged"] > 300 and precision["all_judged"]["precision"] >= 0.6, precision
        assert all(precision[k]["precision"] >= 0.4 for k in kinds), (seed, precision)
        assert summary["detector_recall"]["recall"] > 0.8


def test_without_its_prior_about_relative_names_the_detector_is_mostly_wrong(monkeypatch):
    """The ablation: with every name open to misreading (ends of a scale included), most
    detections are about names both sides read the same — the prior is what makes it right."""
    monkeypatch.setattr(D, "relative", lambda key: True)
    summary, _, _ = D.evaluate(120, 1, True)
    assert summary["detector_precision"]["all_judged"]["precision"] < 0.5


def test_the_detector_reads_the_dialogue_never_a_private_utility(monkeypatch):
    """Detection uses what was said and offered: a party's utility, weights or reservation
    read while a turn is checked fails the run; the same sessions with the parties'
    utilities swapped after each turn's checks detect the same."""
    from mirofish.scenes.negotiation import world as W

    inside = {"on": False}
    real_utility = W.Party.utility

    def guarded(self, *args, **kw):
        assert not inside["on"], "the detector read a private utility"
        return real_utility(self, *args, **kw)

    real_detect = D.Negotiation.detect

    def watched(self, *args, **kw):
        inside["on"] = True
        weights = {r: self.party(r).weights for r in ("buyer", "seller")}
        for r in ("buyer", "seller"):  # any read of the weights while checking would see None
            self.party(r).weights = None
        try:
            return real_detect(self, *args, **kw)
        finally:
            inside["on"] = False
            for r in ("buyer", "seller"):
                self.party(r).weights = weights[r]

    monkeypatch.setattr(W.Party, "utility", guarded)
    monkeypatch.setattr(D.Negotiation, "detect", watched)
    summary, _, _ = D.evaluate(60, 4, True)
    assert sum(row["detections"] for row in summary["failure_types"].values()) > 100


def test_the_text_detectors_read_capitalised_and_but_you_said_lines():
    neg = D.Negotiation(D.Session.draw(7), True, D.Bandit())
    line = "Absolutely not. But you said 90 days."
    assert {"extreme_statement", "contradiction"} <= {d["type"] for d in neg._said(line)}
    assert neg.detect("buyer", None, line, {}, 3) == []  # nothing on the table a repair could settle
    offer = dict(neg.offers[0], support="standard", ai_feature="full")  # one relative name, one end
    neg.tracker.propositions["prop_2"] = {"content": offer, "proponent": "seller", "status": "pending"}
    found = neg.detect("buyer", None, line, {}, 3)
    assert {d["type"] for d in found} == {"extreme_statement", "contradiction"}
    assert all(d["keys"] == ["support:standard"] for d in found)  # about the relative name only


def test_model_spoken_repairs_are_judged_by_the_other_sides_answer():
    """Against the bundled server playing both negotiators: the initiator writes the repair in
    the chosen strategy, the other side answers with the reading it now holds. Strategies that
    state the reading outright change the other side's reading; those that only ask do not —
    and the bandit, rewarded from those answers, learns it. The A/B against no repair comes
    from the same model runs."""
    from mirofish.brains.testserver import TestServer
    from mirofish.scenes.negotiation.model_agents import model_speakers

    runs = {}
    for repair in (True, False):
        with TestServer() as server:
            speakers_for, close = model_speakers(server.url, "m", 1)
            runs[repair], learner, results = D.evaluate(50, 1, repair, speakers_for=speakers_for)
            failures = close()
        assert failures.pop("model_turns") > 500 and not failures
        if repair:
            bandit, spoken = learner, [r for res in results for r in res["repairs"]]
    rep = runs[True]["repairs"]
    assert rep["judged"] == "model" and rep["spoken_by_model"] == rep["turns"] > 20
    assert 0 < rep["resolved"] <= rep["readings_differed"]  # the other side's stated reading changed to match
    changed = {s: sum(bool(x["changed"]) for x in spoken if x["strategy"] == s) for s in D.STRATEGIES}
    assert changed["exploratory_question"] == changed["rebuilding_consensus"] == 0  # asked, not told
    assert bandit.pulls["revealing_assumptions"] > bandit.pulls["rebuilding_consensus"]
    assert runs[True]["agreement_rate"] > runs[False]["agreement_rate"]
    assert runs[True]["unresolved_conflicts_mean"] <= runs[False]["unresolved_conflicts_mean"]


def test_grounding_comes_from_what_the_sides_state_not_from_their_private_definitions():
    tracker = D.Tracker("t")
    tracker.use_terms({"support": "basic", "ai_feature": "none"})
    assert not any(e["grounded"] for e in tracker.entities.values())  # used, same private reading, nobody said
    assert tracker.merge(1, [("support:basic", "buyer", 0)]) == []  # one side said
    assert tracker.merge(2, [("support:basic", "seller", 0)]) == ["support:basic"]  # both, agreeing
    assert tracker.merge(3, [("support:basic", "seller", 1)]) == []
    assert not tracker.entities["support:basic"]["grounded"]  # a later statement that differs un-grounds it


def test_not_yet_follows_the_clarification_trait_and_repairs_cost_utility():
    def run(clarify):
        out = []
        for k in range(40):
            s = Session.draw(300 + k)
            s.buyer.traits["clarify"] = s.seller.traits["clarify"] = clarify
            out.append(D.Negotiation(s, True, D.Bandit()).run())
        return out

    eager, reluctant = run(1.0), run(0.0)
    assert sum(r["not_yet"] for r in eager) == 0 < sum(r["not_yet"] for r in reluctant)
    for r in eager:
        assert r["communication_cost"] == pytest.approx(2 * D.COMMUNICATION_COST * len(r["repairs"]))


def test_the_cli_says_the_embedded_run_is_simulated():
    out = subprocess.run([sys.executable, "run.py", "negotiation", "--headless", "--sessions", "20", "--seed", "4"],
                         capture_output=True, text=True, cwd=ROOT)
    data = json.loads(out.stdout)
    assert data["agents"] == "simulated" and data["repairs"]["judged"] == "simulated"
    assert data["repairs"]["spoken_by_model"] == 0 and data["repairs"]["turns"] > 0


def test_argent_layer_by_layer_on_the_same_sessions():
    arms = {n: D.evaluate(250, 1, True, layers=n)[0] for n in (0, 1, 2, 3)}
    completion = [arms[n]["completion_rate"] for n in (0, 1, 2, 3)]
    assert completion[0] < completion[1] <= completion[2] <= completion[3]  # each layer adds something
    assert completion[3] > completion[0] + 0.2
    assert arms[3]["semantic_consistency"] > arms[0]["semantic_consistency"]
    assert arms[0]["drift_interventions"]["per_session"] == 0 < arms[1]["drift_interventions"]["per_session"]
    assert "calibration" in arms[3]["drift_interventions"] and "calibration" not in arms[2]["drift_interventions"]
    chars = [arms[n]["signal_overhead"]["chars_per_message"] for n in (0, 1, 2, 3)]
    assert chars[0] == 0 < chars[1] < chars[2] < chars[3]  # and each layer costs characters


def _offers_breaking_the_receivers_limit(layers):
    broken = offers = 0
    for k in range(60):
        neg = D.Negotiation(Session.draw(500 + k), False, D.Bandit(), layers=layers)
        for turn in neg.iter_turns():
            if turn.kind == "propose":
                offer = neg.last_offer[turn.speaker]
                receiver = neg.party("seller" if turn.speaker == "buyer" else "buyer")
                offers += 1
                broken += not receiver.satisfies(offer)
    return broken / offers


def test_the_receiver_reads_the_constraint_checklist_and_answers_a_mismatch():
    assert _offers_breaking_the_receivers_limit(1) < 0.6 * _offers_breaking_the_receivers_limit(0)
    neg = D.Negotiation(Session.draw(11), False, D.Bandit(), layers=1)
    lines = [t.text for t in neg.iter_turns()]
    alerts = [x for x in lines if "My limit" in x]
    assert neg.interventions.get("constraint_alert", 0) == len(alerts)


class WrongGoalHash:
    """A model negotiator that plays the embedded offers but sends a goal hash of its own."""

    def __call__(self, neg, t, role):
        offer = neg._choose_offer(neg.party(role), t, neg.last_offer["seller" if role == "buyer" else "buyer"])
        return {"accept": False, "offer": offer, "message": "Here is my offer.",
                "signals": {"layer1": {"task_id": neg.tracker.session, "goal_hash": "0badc0ffee00",
                                       "constraints": []}}}


def test_a_models_goal_hash_mismatch_triggers_calibration():
    calibrated = D.Negotiation(Session.draw(3), False, D.Bandit(), speakers={"seller": WrongGoalHash()}, layers=3)
    kinds = [t.kind for t in calibrated.iter_turns()]
    assert "calibrate" in kinds and calibrated.interventions["calibration"] >= 1
    restated = D.Negotiation(Session.draw(3), False, D.Bandit(), speakers={"seller": WrongGoalHash()}, layers=1)
    texts = [t.text for t in restated.iter_turns()]
    assert any("My understanding of the goal" in x for x in texts) and "calibrate" not in [t.kind for t in
                                                                                            restated.turns]


def test_low_confidence_check_and_handoff_context():
    checks = surfaced = 0
    for k in range(80):
        neg = D.Negotiation(Session.draw(700 + k), False, D.Bandit(), layers=2)
        for turn in neg.iter_turns():
            if turn.kind == "check":
                checks += 1
                surfaced += bool(turn.detections)
    assert checks > 0 and surfaced > 0  # a check puts a difference in readings on the table
    with_handoff = [k for k in range(200) if Session.draw(k).handoff]
    for k in with_handoff[:10]:
        role, when = Session.draw(k).handoff
        kept = D.Negotiation(Session.draw(k), True, D.Bandit(), layers=3)
        notes = [t.signals["layer3"] for t in kept.iter_turns() if "handoff_context" in t.signals.get("layer3", {})]
        if kept.turns[-1].index > when:
            assert notes and {"done", "open", "next"} <= set(notes[0]["handoff_context"])
        lost = D.Negotiation(Session.draw(k), True, D.Bandit(), layers=2)
        lost.run()
        if lost.turns[-1].index > when:
            assert lost.agent_no[role] == 2
            assert not any("handoff_context" in t.signals.get("layer3", {}) for t in lost.turns)


def test_a_model_whose_messages_are_bare_numbers_is_said_to_speak_no_words():
    """A small model that answers "1.000" as its message: its offers are played (not fallbacks),
    and the JSON and one stderr line say how many of its turns said no words."""
    from mirofish.brains.testserver import TestServer

    with TestServer() as server:
        out = subprocess.run([sys.executable, "run.py", "negotiation", "--headless", "--sessions", "3", "--seed", "1",
                              "--agents", "llm", "--base-url", server.url, "--model", "m-copycat"],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    made = json.loads(out.stdout)["model_made"]
    assert made["fell_back"] == 0 and made["share"] == 1.0 and 0 < made["without_words"] <= made["turns"]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{made['without_words']} of the model's {made['turns']} turns said no words" in lines[0]
