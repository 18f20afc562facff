"""Which decisions made this? ``influence``: every decision of a window forked against the plans
its fish was offered, ranked against a null — a planted cause is found, a row re-runs with
``fork`` to the same outcome and hash, a model run's forks answer from the recording."""

from __future__ import annotations

import json
import os
import shlex

import numpy as np
import pytest

from mirofish.cli import main
from mirofish.session.replay import ReplaySession

FISH = 30
PLANT_TICK = 200


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def tank(tmp_path_factory):
    """An instinct run (30 fish, seed 3) and the same run with one decision planted at t200: a
    fish with company, on the western side, made to explore east for 80 ticks."""
    d = tmp_path_factory.mktemp("influence")
    plain, planted = d / "plain.mirofish", d / "planted.mirofish"
    assert main(["live", "--headless", "--ticks", "320", "--fish", str(FISH), "--seed", "3",
                 "--record", str(plain)]) == 0
    p = ReplaySession(plain)
    try:
        p.seek(PLANT_TICK)
        s = p.world.school
        x, _ = p.world.water.xy(s.cell)
        fish = int(np.argmax(np.where(x < 40, s.neighbours, -1)))
    finally:
        p.close()
    assert main(["fork", str(plain), "--at", str(PLANT_TICK), "--fish", str(fish), "--plan", "explore east 80",
                 "--ticks", "120", "--record", str(planted)]) == 0
    return {"plain": plain, "planted": planted, "fish": fish, "dir": d}


def influence(capsys, path, outcome: str, *extra: str) -> dict:
    code, out, err = run(capsys, "influence", str(path), "--outcome", outcome, "--window", "200:215",
                         "--ablate-fish", "1", "--ablate-reps", "2", "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_a_planted_cause_is_ranked_first_and_pivotal_and_the_plain_run_has_no_such_decision(capsys, tank):
    outcome = f"fish.{tank['fish']}.x@270:280"
    planted = influence(capsys, tank["planted"], outcome)
    top = planted["decisions"][0]
    assert (top["tick"], top["fish"]) == (PLANT_TICK, tank["fish"]) and top["pivotal"]
    assert top["recorded"].startswith("explore east") and top["effect"] > 10
    assert planted["pivotal_share"] <= 0.05 and planted["null"]["samples"] >= 100
    plain = influence(capsys, tank["plain"], outcome)
    assert plain["pivotal_share"] <= 0.05  # the same settings without the plant: no more than 5 % pivotal
    assert plain["decisions_tested"] >= 15 and plain["forks"] > 100


def test_a_row_re_runs_with_fork_to_the_same_outcome_and_hash_and_workers_agree(capsys, tank):
    out_dir = tank["dir"] / "o"
    s = influence(capsys, tank["planted"], "largest_school@260:270", "--out", str(out_dir), "--format", "csv")
    assert set(os.listdir(out_dir)) == {"influence.csv", "influence.json", "influence.png"}
    import csv

    with open(out_dir / "influence.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["kind"] == "alternative"]
    assert len(rows) == sum(r["alternatives"] for r in s["decisions"])
    row = max(rows, key=lambda r: abs(float(r["delta"])))  # the strongest single swap
    argv = shlex.split(row["rerun"])
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    again = json.loads(out)
    assert again["final_state_hash"] == row["final_hash"]
    assert again["outcome"]["value"] == pytest.approx(float(row["outcome"]), abs=1e-9)
    # the same study split between two processes: the same forks, the same figures
    two = influence(capsys, tank["planted"], "largest_school@260:270", "--workers", "2")
    assert [(r["tick"], r["fish"], r["effect"], r["pivotal"]) for r in two["decisions"]] == \
        [(r["tick"], r["fish"], r["effect"], r["pivotal"]) for r in s["decisions"]]
    assert two["null"] == s["null"] and two["workers"] == 2


def test_outcomes_of_a_user_function_and_of_one_fish_and_the_keep_alternative(capsys, tank, tmp_path):
    fn = tmp_path / "outcomes.py"
    fn.write_text("def east_half(snap):\n    return sum(f.x >= snap.width // 2 for f in snap.fish if f.in_water)\n")
    s = influence(capsys, tank["plain"], f"{fn}:east_half@250", "--alternatives", "random:2", "--null-max", "40")
    assert all(r["alternatives"] <= 2 for r in s["decisions"]) and s["null"]["samples"] <= 40
    assert 0 <= s["outcome_recorded"] <= FISH
    keep = influence(capsys, tank["plain"], "mean_energy@240", "--alternatives", "keep", "--null-max", "40")
    assert all(r["alternatives"] <= 1 for r in keep["decisions"])


@pytest.mark.parametrize("argv, says", [
    (["--outcome", "happiness@250"], "is not a metric"),
    (["--outcome", "largest_school@5000"], "outside the recording"),
    (["--outcome", "largest_school"], "FIGURE@TICK"),
    (["--outcome", "fish.99.x@250"], "fish 99 does not exist"),
    (["--outcome", "largest_school@250", "--window", "240:260"], "ends after the outcome"),
    (["--outcome", "largest_school@250", "--window", "900:950"], "outside the recording"),
    (["--outcome", "largest_school@250", "--window", "abc"], "T0:T1"),
    (["--outcome", "largest_school@250", "--alternatives", "some"], "all, random:K or keep"),
    (["--outcome", "largest_school@250", "--fish", "group:red"], "no group"),
    (["--outcome", "nofile.py:f@250"], "file not found"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tank, argv, says):
    code, out, err = run(capsys, "influence", str(tank["plain"]), *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and says in err, err


def test_an_outcome_function_that_raises_is_one_line_naming_it(capsys, tank, tmp_path):
    fn = tmp_path / "broken.py"
    fn.write_text("def f(snap):\n    raise ValueError('no such thing')\n")
    code, out, err = run(capsys, "influence", str(tank["plain"]), "--outcome", f"{fn}:f@250")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()  # (the progress line first: the function is called once forks run)
    assert lines[-1] == f"mirofish: --outcome {fn}:f@250: the function raised ValueError: no such thing"
    assert len(lines) <= 2 and "Traceback" not in err


def test_a_file_that_is_not_a_recording_is_one_line(capsys, tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    code, _, err = run(capsys, "influence", str(bad), "--outcome", "largest_school@10")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_a_model_runs_forks_answer_from_the_recording_and_spend_only_the_budget(capsys, tmp_path, monkeypatch):
    """Decisions the recording holds are answered from it (the server is asked nothing for
    them); new requests go to the server the user gives, at most --max-requests of them; the
    key is never written."""
    from mirofish.brains.testserver import TestServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-influence-0005")
    rec, out_dir = tmp_path / "model.mirofish", tmp_path / "out"
    with TestServer() as server:
        assert main(["live", "--headless", "--ticks", "150", "--fish", "10", "--seed", "2", "--base-url", server.url,
                     "--model", "fish-mini", "--record", str(rec)]) == 0
        capsys.readouterr()
        before = server.completions
        offline = influence_model(capsys, rec)
        assert server.completions == before  # no --base-url: the recording's server is never asked
        assert offline["model"]["answered_from_recording"] > 0 and offline["model"]["requests_sent"] == 0
        budget = influence_model(capsys, rec, "--base-url", server.url, "--max-requests", "10", "--out", str(out_dir),
                                 "--format", "csv")
        sent = server.completions - before
    assert sent == budget["model"]["requests_sent"] <= 10 and sent > 0
    assert budget["model"]["answered_from_recording"] > 0
    for f in out_dir.iterdir():
        assert b"sk-canary" not in f.read_bytes()
    # the futures on the instinct brain instead: offline, and measured against a baseline fork on
    # the same brain (not against the model's own recording), labelled so
    inst = influence_model(capsys, rec, "--brain", "instinct")
    assert inst["brain"].startswith("instinct (offline") and inst["baseline"].startswith("a fork keeping")
    assert inst["model"]["requests_sent"] == 0 and inst["model"]["answered_from_recording"] == 0


def influence_model(capsys, rec, *extra: str) -> dict:
    code, out, err = run(capsys, "influence", str(rec), "--outcome", "mean_energy@140", "--window", "100:110",
                         "--ablate-fish", "1", "--ablate-reps", "2", "--json", *extra)
    assert code == 0, err
    return json.loads(out)
