"""The referential game (GlossoGen): learning from chance, the glossary, conditions, three agents."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mirofish.scenes.referential.experiment import EmbeddedAgent, Experiment
from mirofish.scenes.referential.game import Game, GameConfig
from mirofish.scenes.referential.glossary import Glossary

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("seed", (1, 2, 3))
def test_embedded_agents_learn_from_chance_to_90_percent(seed):
    exp = Experiment(GameConfig(seed=seed, rounds=400, candidates=5))
    summary = exp.run()
    assert len(exp.game.objects) == 24 and summary["chance_rate"] == 0.2
    assert np.mean(exp.success[:10]) <= 0.5  # they start out guessing
    assert summary["success_rate_last100"] >= 0.9
    assert summary["new_terms_last100"] <= 2
    assert summary["compression_ratio"] <= 0.4
    assert summary["definition_agreement"] >= 0.9 and summary["topographic_similarity"] > 0.5
    exp.close()


def test_runs_are_reproducible_from_the_seed(tmp_path):
    a = Experiment(GameConfig(seed=9, rounds=120), log_path=tmp_path / "a.jsonl")
    b = Experiment(GameConfig(seed=9, rounds=120), log_path=tmp_path / "b.jsonl")
    assert a.run() == b.run()
    a.close()
    b.close()
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    first = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert set(first) == {"round", "target_id", "candidate_ids", "message", "sender_raw", "receiver_raw", "choice",
                          "success", "used_terms", "new_terms", "alarm"}


def test_the_glossary_survives_a_restart(tmp_path):
    path = tmp_path / "glossary.db"
    first = Experiment(GameConfig(seed=5, rounds=300), glossary_path=path)
    first.run()
    terms = {t.term: t.canonical for t in first.glossary.active()}
    first.close()
    second = Experiment(GameConfig(seed=6, rounds=40), glossary_path=path)
    summary = second.run()
    assert {t.term: t.canonical for t in second.glossary.active()} == terms
    assert summary["success_rate"] >= 0.9 and summary["new_terms_last100"] == 0  # no relearning from chance
    snaps = second.glossary.snapshots()
    assert len(snaps) == 2
    old, new = (second.glossary.load_snapshot(i) for i, _, _ in snaps)
    assert Glossary.diff(old, new) == {"added": [], "removed": [], "changed": []}
    second.close()


def test_conditions_fixed_and_natural():
    fixed = Experiment(GameConfig(seed=2, rounds=60, condition="fixed")).run()
    natural = Experiment(GameConfig(seed=2, rounds=60, condition="natural")).run()
    dynamic = Experiment(GameConfig(seed=2, rounds=60, condition="dynamic")).run()
    assert fixed["success_rate"] >= 0.95 and fixed["new_terms_last100"] == 0
    assert natural["compression_ratio"] == 1.0 and natural["glossary_size"] == 0
    # the baseline's receiver has to learn what the words mean too: no oracle, but it learns fast
    baseline = Experiment(GameConfig(seed=2, rounds=60, condition="natural"))
    baseline.run()
    assert np.mean(baseline.success[:10]) < 0.7 and np.mean(baseline.success[-20:]) >= 0.9
    assert dynamic["success_rate"] < fixed["success_rate"]  # it had to learn
    assert natural["baseline_chars_per_round"] == natural["message_chars_per_round"] > \
        2.5 * dynamic["message_chars_per_round"]


def test_message_rules():
    game = Game(GameConfig())
    assert game.check_message("blue square") == "spells an attribute out"
    assert game.check_message("x" * 21) == "longer than 20 characters"
    assert game.check_message("kamoti") is None and game.check_message("") == "empty message"


def test_glossary_lifecycle_and_scores(tmp_path):
    g = Glossary(tmp_path / "g.db")
    with pytest.raises(ValueError):
        g.add("ka", {}, {"color": "red"}, 0)
    g.add("ka", {"color": "red"}, {"color": "red"}, 0)
    for ok in (True, True, False, True):
        g.record_use("ka", ok, 3)
    t = g.get("ka")
    assert (t.usage, t.success) == (4, 3) and t.success_rate == 0.75
    assert abs(t.stable_score - 0.75 * 4 / 5) < 1e-9
    g.interpret("ka", {"color": "blue"})
    assert not g.get("ka").agreed and g.get("ka").stable_score == 0.0  # read otherwise than defined
    g.interpret("ka", {"color": "red"})
    assert abs(g.get("ka").stable_score - 0.75 * 4 / 5 * 0.5) < 1e-9  # one of two readings agreed
    g.add("mo", {"shape": "square"}, {"shape": "square"}, 0)
    g.record_use("mo", False, 1)
    assert g.prune(round_=2, below=0.25, after_uses=1, stale_rounds=100) == ["mo"]
    assert g.prune(round_=500, below=0.0, after_uses=99, stale_rounds=100) == ["ka"]  # stale
    assert g.size() == 0
    g.close()
    again = Glossary(tmp_path / "g.db")
    assert again.get("ka").status == "pruned" and again.get("ka").usage == 4


def test_three_agents_join_and_majority_rule():
    exp = Experiment(GameConfig(seed=3, rounds=300, agents=3))
    for _ in range(150):
        exp.step()
    assert len(exp.present) == 3  # the third agent has joined, knowing the glossary
    joined_at = len(exp.success)
    for _ in range(150):
        exp.step()
    assert np.mean(exp.success[joined_at:joined_at + 30]) >= 0.8
    proposed_then_active = [t for t in exp.glossary.active() if t.proposed_by]
    assert proposed_then_active  # terms entered the shared glossary
    exp.close()


def test_cli_json_and_bad_input():
    out = subprocess.run([sys.executable, "run.py", "referential", "--headless", "--rounds", "150", "--seed", "2"],
                         capture_output=True, text=True, cwd=ROOT)
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    for key in ("success_rate", "success_rate_last100", "chance_rate", "compression_ratio", "glossary_size",
                "new_terms_last100", "definition_agreement", "topographic_similarity"):
        assert key in summary
    bad = subprocess.run([sys.executable, "run.py", "referential", "--headless", "--candidates", "50"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_model_agents_end_to_end_against_the_test_server(tmp_path):
    from mirofish.brains.testserver import TestServer
    from mirofish.scenes.referential.model_agents import model_agent_factory

    with TestServer() as server:
        cfg = GameConfig(seed=1, rounds=30)
        exp = Experiment(cfg, tmp_path / "g.db", tmp_path / "log.jsonl", "llm",
                         model_agent_factory(server.url, "fish-mini", cfg))
        summary = exp.run()
        exp.close()
    assert summary["success_rate"] >= 0.9 and summary["glossary_size"] == 9 and not summary["failures"]
    assert summary["definition_agreement"] == 1.0
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert log[0]["new_terms"] and '"message"' in log[0]["sender_raw"] and '"choice"' in log[0]["receiver_raw"]
    assert Glossary(tmp_path / "g.db").get(log[0]["new_terms"][0]).model == "llm"


def test_malformed_model_replies_are_counted_not_crashed():
    from mirofish.brains.testserver import TestServer
    from mirofish.scenes.referential.model_agents import model_agent_factory

    with TestServer(fault="garbage", fault_every=2) as server:
        cfg = GameConfig(seed=2, rounds=20)
        exp = Experiment(cfg, agents="llm", model_agent_factory=model_agent_factory(server.url, "m", cfg))
        summary = exp.run()
        exp.close()
    assert summary["rounds"] == 20
    assert sum(summary["failures"].values()) > 0
    assert set(summary["failures"]) <= {"sender_malformed", "receiver_malformed", "message_empty_message"}


def test_glossary_cli_lists_and_diffs_snapshots(tmp_path):
    path = tmp_path / "g.db"
    for seed, rounds in ((1, 60), (2, 250)):
        subprocess.run([sys.executable, "run.py", "referential", "--headless", "--rounds", str(rounds), "--seed",
                        str(seed), "--glossary", str(path)], cwd=ROOT, check=True, capture_output=True)
    listing = json.loads(subprocess.run([sys.executable, "run.py", "glossary", str(path)], cwd=ROOT, check=True,
                                        capture_output=True, text=True).stdout)
    assert [s["round"] for s in listing["snapshots"]] == [60, 310]  # rounds continue across runs
    diff = json.loads(subprocess.run([sys.executable, "run.py", "glossary", str(path), "--diff", "1", "2"], cwd=ROOT,
                                     check=True, capture_output=True, text=True).stdout)
    assert diff["removed"]  # synonyms tried early were pruned later
    bad = subprocess.run([sys.executable, "run.py", "glossary", str(tmp_path / "missing.db")], cwd=ROOT,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "not found" in bad.stderr


def test_a_rule_breaking_model_message_gets_one_corrective_retry_and_the_model_share_is_reported(tmp_path):
    from mirofish.brains.testserver import TestServer
    from mirofish.scenes.referential.model_agents import model_agent_factory

    with TestServer(fault="rule_breaker") as server:
        cfg = GameConfig(seed=3, rounds=12)
        exp = Experiment(cfg, log_path=tmp_path / "log.jsonl", agents="llm",
                         model_agent_factory=model_agent_factory(server.url, "m", cfg))
        summary = exp.run()
        exp.close()
    assert summary["failures"].get("sender_corrected", 0) == 12  # every first message broke a rule …
    assert not any(k.startswith("message_") for k in summary["failures"])  # … and none after the correction
    made = summary["model_made"]
    assert made["sender_turns"] == 12 and made["receiver_turns"] == 12 and made["sender_share"] == 1.0
    assert summary["success_rate"] >= 0.9


def test_fixed_terms_never_collide_and_a_rejected_round_logs_no_stale_reply(tmp_path):
    from mirofish.brains.testserver import TestServer
    from mirofish.scenes.referential.model_agents import model_agent_factory

    with TestServer(fault="garbage", fault_every=3) as server:
        cfg = GameConfig(seed=1, rounds=9, condition="fixed")  # square/small and co. used to both be "ss"
        exp = Experiment(cfg, log_path=tmp_path / "log.jsonl", agents="llm",
                         model_agent_factory=model_agent_factory(server.url, "m", cfg))
        exp.run()
        exp.close()
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert len(rows) == 9
    rejected = [r for r in rows if r["choice"] is None and r["message"] == ""]
    assert rejected and all(r["receiver_raw"] == "" for r in rejected)


def test_a_term_made_after_the_third_agent_joined_is_voted_into_the_glossary():
    """The majority rule must run on a term proposed by three agents, not only on terms made
    before the join: retire every term for circles after the join, so a new one has to be
    invented, proposed, and read as defined by a majority before it becomes active."""
    exp = Experiment(GameConfig(seed=3, rounds=400, agents=3))
    for _ in range(210):
        exp.step()
    assert len(exp.present) == 3
    for t in [t for t in exp.glossary.active() if t.canonical == {"shape": "circle"}]:
        exp.glossary.set_status(t.term, "pruned")
    invented = []
    for _ in range(150):
        invented += exp.step().new_terms
    circle_terms = [exp.glossary.get(t) for t in invented if exp.glossary.get(t).canonical == {"shape": "circle"}]
    assert circle_terms and all(t.proposed_by for t in circle_terms)
    assert any(t.status == "active" for t in circle_terms)  # voted in by the majority
    exp.close()


def test_disagreement_lowers_a_terms_score_until_it_is_pruned(tmp_path):
    g = Glossary(tmp_path / "g.db")
    g.add("zu", {"color": "red"}, {"color": "red"}, 0)
    for k in range(6):  # it works in the game (the pick was right) …
        g.record_use("zu", True, k)
    assert g.get("zu").stable_score > 0.8
    for _ in range(3):  # … but the receivers keep reading it as something else
        g.interpret("zu", {"shape": "square"})
    g.interpret("zu", {"color": "red"})
    assert g.get("zu").stable_score < 0.25
    assert g.prune(round_=7, below=0.25, after_uses=4, stale_rounds=100) == ["zu"]
    g.close()
    assert Glossary(tmp_path / "g.db").get("zu").agreement_rate == 0.25  # kept in the file


def test_a_receiver_that_gives_no_interpretation_loses_the_round():
    class Mute(EmbeddedAgent):
        def listen(self, message, candidates):
            return candidates[0].id, {}  # a pick, and no reading of the message

    exp = Experiment(GameConfig(seed=4, rounds=40), model_agent_factory=None)
    exp.agents[1].__class__ = Mute
    exp.run()
    assert exp.failures["no_interpretation"] > 0
    rounds_b_listened = [r for k, r in enumerate(exp.rounds) if k % 2 == 0]  # A speaks on even rounds
    assert not any(r.success for r in rounds_b_listened)


def test_the_success_drop_alarm_fires_when_success_falls():
    exp = Experiment(GameConfig(seed=1, rounds=200))
    for _ in range(120):
        exp.step()
    assert exp.alarms == []  # learning, then steady: no alarm
    for t in exp.glossary.active():  # the code is scrambled: every term now means another value
        exp.glossary.set_status(t.term, "pruned")
    for a in exp.agents:
        a.assoc.clear()
    for _ in range(40):
        exp.step()
    assert exp.alarms and exp.alarms[0]["now"] <= exp.alarms[0]["best"] - exp.cfg.alarm_drop
    assert exp.summary()["success_alarms"] == exp.alarms


def test_review_holds_new_terms_until_a_person_approves_them(tmp_path):
    db = tmp_path / "g.db"
    run = subprocess.run([sys.executable, "run.py", "referential", "--headless", "--rounds", "40", "--seed", "1",
                          "--review", "--glossary", str(db)], capture_output=True, text=True, cwd=ROOT)
    summary = json.loads(run.stdout)
    assert summary["glossary_size"] == 0 and summary["pending_review"] > 0  # nothing global without review

    def review(*args):
        out = subprocess.run([sys.executable, "run.py", "glossary", "review", str(db), *args],
                             capture_output=True, text=True, cwd=ROOT)
        return out.returncode, out.stdout, out.stderr

    code, out, _ = review()
    waiting = [t["term"] for t in json.loads(out)["pending"]]
    code, out, _ = review("--approve", waiting[0], "--reject", waiting[1])
    assert code == 0 and len(json.loads(out)["pending"]) == len(waiting) - 2
    g = Glossary(db)
    assert g.get(waiting[0]).status == "active" and g.get(waiting[1]).status == "rejected"
    g.close()
    code, _, err = review("--approve", "nosuchterm")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "nosuchterm" in err


def test_the_window_reviews_pending_terms_with_a_and_r(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    import pygame

    from mirofish.ui.scenes.referential import ReferentialScene

    pygame.init()
    scene = ReferentialScene(Experiment(GameConfig(seed=1, rounds=100, review=True)))
    for _ in range(30):
        scene.step()
    before = [t.term for t in scene.exp.glossary.pending()]
    scene.handle_event(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_a))
    scene.handle_event(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_r))
    assert scene.exp.glossary.get(before[0]).status == "active"
    assert scene.exp.glossary.get(before[1]).status == "rejected"
    surf = pygame.Surface((1280, 720))
    scene.draw(surf)  # the review strip names the next waiting term
    scene.close()


def test_the_sender_names_only_what_tells_the_target_apart():
    """Context-dependent terms: candidates that differ in colour alone get one term; every
    attribute spelled out (context off) costs three times as many characters."""
    from mirofish.scenes.referential.experiment import Experiment
    from mirofish.scenes.referential.game import GameConfig, distinguishing

    attrs = {"color": ["red", "blue", "green", "yellow", "purple"], "shape": ["circle", "square", "triangle"],
             "size": ["small", "large"]}
    runs = {}
    for vary, context in ((1, True), (3, True), (1, False)):
        exp = Experiment(GameConfig(seed=2, rounds=300, attributes=attrs, vary=vary, context=context))
        runs[(vary, context)] = exp.run()
        for rnd in exp.rounds[-20:]:  # every message names exactly the values that tell the target apart
            if context and rnd.success:
                assert len(rnd.used_terms) == len(distinguishing(rnd.target, rnd.candidates, exp.game.names))
        exp.close()
    one, three, spelled = runs[(1, True)], runs[(3, True)], runs[(1, False)]
    assert one["message_chars_per_round"] < 2.5 < 3 * one["message_chars_per_round"] <= spelled[
        "message_chars_per_round"] + 0.01
    assert one["compression_ratio"] < three["compression_ratio"] < spelled["compression_ratio"]
    assert one["success_rate"] > 0.85 and three["success_rate"] > 0.8


def test_terms_climb_the_tiers_private_shared_global():
    from mirofish.scenes.referential.experiment import Experiment
    from mirofish.scenes.referential.game import GameConfig

    exp = Experiment(GameConfig(seed=3, rounds=300))
    exp.run()
    tiers = {t.term: t.tier for t in exp.glossary._cache.values()}
    assert {"private", "shared", "global"} <= set(tiers.values())
    for t in exp.glossary._cache.values():
        if t.tier == "private":
            assert t.success == 0  # never understood yet
        if t.tier == "global":
            assert t.usage >= 10 and t.success > 0
    listed = exp.glossary.as_dict()
    assert all("tier" in v for v in listed.values())
    exp.close()


def test_glossary_check_asks_a_model_which_terms_it_still_reads(tmp_path):
    from mirofish.brains.testserver import TestServer

    glossary = tmp_path / "g.db"
    assert subprocess.run([sys.executable, "run.py", "referential", "--headless", "--rounds", "150", "--glossary",
                           str(glossary)], cwd=ROOT, capture_output=True).returncode == 0
    with TestServer() as server:
        out = subprocess.run([sys.executable, "run.py", "glossary", "check", str(glossary), "--base-url", server.url,
                              "--model", "m", "--rounds", "15"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert server.completions >= 15
    data = json.loads(out.stdout)
    assert data["rounds"] == 15 and data["terms_checked"] > 3
    assert data["terms_still_read"] + len(data["terms_lost"]) == data["terms_checked"]
    bad = subprocess.run([sys.executable, "run.py", "glossary", "check", str(glossary)], cwd=ROOT,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--base-url" in bad.stderr


def test_the_temperature_is_sent_recorded_and_the_reply_cache_replays_a_model_game(tmp_path):
    """--set temperature reaches every request and the summary; a model game run again with
    --reply-cache asks no server (it is stopped) and plays the same game."""
    from mirofish.brains.testserver import TestServer

    cache = tmp_path / "cache"
    with TestServer(keep_bodies=True) as server:
        first = subprocess.run([sys.executable, "run.py", "referential", "--headless", "--rounds", "12", "--seed", "2",
                                "--agents", "llm", "--base-url", server.url, "--model", "fish-mini",
                                "--set", "temperature=0.7", "--reply-cache", str(cache)],
                               capture_output=True, text=True, cwd=ROOT, timeout=120)
        temperatures = {json.loads(b).get("temperature") for b in server.bodies}
    assert first.returncode == 0, first.stderr
    assert temperatures == {0.7}
    one = json.loads(first.stdout)
    assert one["temperature"] == 0.7 and one["model_made"]["sender_turns"] == 12
    again = subprocess.run([sys.executable, "run.py", "referential", "--headless", "--rounds", "12", "--seed", "2",
                            "--agents", "llm", "--base-url", server.url, "--model", "fish-mini",
                            "--set", "temperature=0.7", "--reply-cache", str(cache), "--timeout", "2"],
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert again.returncode == 0, again.stderr
    two = json.loads(again.stdout)
    for key in ("success_rate", "glossary_size", "compression_ratio", "model_made", "interpretability"):
        assert two[key] == one[key], key
    assert not two["failures"]


def test_interpretability_tells_initials_from_syllables():
    """Terms coined from their values' initials read as what they mean; random syllables do so
    about as often as chance (meanings dealt to the forms at random)."""
    runs = {coin: Experiment(GameConfig(seed=3, rounds=200, coin=coin)).run() for coin in ("syllable", "initials")}
    initials, syllables = runs["initials"]["interpretability"], runs["syllable"]["interpretability"]
    assert initials["terms"] >= 9 and initials["initials_share"] == 1.0 > initials["shuffled_share"] + 0.5
    assert syllables["initials_share"] < 0.5
    assert runs["initials"]["success_rate_last100"] >= 0.8


def _alert_values(obj) -> dict:
    return dict(zip(("severity", "category", "service"), obj.values))


def test_template_terms_name_the_values_that_tell_the_target_apart_and_cover_many_instances(tmp_path):
    """With ``templates`` (the source's canonical_schema: crit-db for a critical database
    alert): every message is one term whose schema the target satisfies and no other candidate
    does; each alert carries a new detail each round, kept as the term's example; a term names
    many objects, not one — and a given template glossary (fixed) plays without a miss."""
    cfg = GameConfig(seed=11, rounds=300, templates=True)
    assert set(cfg.attributes) == {"severity", "category", "service"}
    exp = Experiment(cfg, tmp_path / "g.db")
    for _ in range(cfg.rounds):
        rnd = exp.step()
        if not rnd.message:
            continue
        assert rnd.used_terms == [rnd.message]
        schema = exp.glossary.get(rnd.message).canonical
        assert schema.items() <= _alert_values(rnd.target).items()
        assert not any(schema.items() <= _alert_values(c).items() for c in rnd.candidates if c.id != rnd.target.id)
        assert rnd.target.detail and len({c.detail for c in rnd.candidates}) == len(rnd.candidates)
    summary = exp.summary()
    exp.close()
    assert summary["success_rate_last100"] >= 0.6 > summary["chance_rate"] * 2
    assert summary["templates"]["objects_per_term"] > 2 and summary["templates"]["schema_values"] > 1
    terms = Glossary(tmp_path / "g.db").as_dict()
    assert all(t["example"].rsplit("#", 1)[1].isdigit() for t in terms.values())
    fixed = Experiment(GameConfig(seed=11, rounds=200, templates=True, condition="fixed")).run()
    assert fixed["success_rate"] == 1.0 and fixed["glossary_size"] == 99 and fixed["message_chars_per_round"] <= 2.1


def test_model_agents_name_templates_against_the_test_server(tmp_path):
    from mirofish.brains.testserver import TestServer
    from mirofish.scenes.referential.model_agents import model_agent_factory

    cfg = GameConfig(seed=2, rounds=40, templates=True)
    with TestServer() as server:
        exp = Experiment(cfg, tmp_path / "g.db", None, "llm", model_agent_factory(server.url, "m", cfg))
        rounds = [exp.step() for _ in range(cfg.rounds)]
        summary = exp.summary()
        exp.close()
    assert summary["model_made"]["sender_share"] == 1.0 and summary["success_rate"] >= 0.9
    for rnd in rounds:  # one term a message, meaning exactly the values that tell the target apart
        schema = Glossary(tmp_path / "g.db").get(rnd.message).canonical
        assert schema.items() <= _alert_values(rnd.target).items() and "detail" not in schema
    assert summary["templates"]["objects_per_term"] > 1


def test_the_window_draws_alerts_as_cards_with_their_detail():
    """With templates the window shows each alert's values and detail on a card edged by its
    severity (not a grey circle): the candidate strip holds the severity colours."""
    import os

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import pygame

    from mirofish.ui import theme
    from mirofish.ui.scenes.referential import CARD_EDGE, draw_object

    pygame.init()
    game = Game(GameConfig(seed=11, templates=True))
    rnd = game.draw_round(0)
    surf = pygame.Surface((400, 200))
    surf.fill(theme.PANEL)
    draw_object(surf, rnd.target, game.names, (200, 100), 40)
    pixels = {tuple(surf.get_at((x, y)))[:3] for x in range(400) for y in range(200)}
    severity = rnd.target.values[0]
    assert tuple(CARD_EDGE[severity]) in pixels and tuple(theme.BUTTON) in pixels
    assert len(pixels) > 20  # text drawn on the card, not a plain shape
