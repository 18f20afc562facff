"""Ask the whole tank: ``survey`` asks every fish questions at ticks of a recording, in the
context each had, and keeps the answers as a table — a model's through the user's server and
the reply cache, the embedded brain's by template, a user brain's through its ``answer``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirofish.brains.testserver import TestServer
from mirofish.cli import main

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = str(ROOT / "assets" / "questions" / "fish.toml")
RULES = f"{ROOT / 'examples' / 'rule_brain.py'}:RuleBrain"
KEY = "sk-canary-survey-0006"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A model run of 60 fish against the test server, an instinct run and its fork."""
    d = tmp_path_factory.mktemp("survey")
    model, plain, fork = d / "model.mirofish", d / "plain.mirofish", d / "fork.mirofish"
    with TestServer() as server:
        assert main(["live", "--headless", "--ticks", "120", "--fish", "60", "--seed", "5", "--base-url", server.url,
                     "--model", "fish-mini", "--record", str(model)]) == 0
    assert main(["live", "--headless", "--ticks", "260", "--fish", "30", "--seed", "3", "--record", str(plain)]) == 0
    assert main(["fork", str(plain), "--at", "150", "--fish", "4", "--plan", "explore east 60", "--ticks", "110",
                 "--record", str(fork)]) == 0
    return {"model": model, "plain": plain, "fork": fork, "dir": d}


def questions(tmp_path, n: int = 3) -> str:
    """The example file's first ``n`` questions."""
    text = Path(QUESTIONS).read_text()
    blocks = text.split("\n[[question]]\n")
    path = tmp_path / "q.toml"
    path.write_text("\n[[question]]\n".join(blocks[: n + 1]))
    return str(path)


def test_sixty_model_fish_answer_three_questions_at_two_ticks_and_a_second_run_is_free(capsys, runs, tmp_path,
                                                                                      monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out_dir, cache = tmp_path / "out", tmp_path / "cache"
    q = questions(tmp_path)
    with TestServer() as server:
        code, out, err = run(capsys, "survey", str(runs["model"]), "--at", "40,100", "--questions", q,
                             "--base-url", server.url, "--reply-cache", str(cache), "--out", str(out_dir), "--json",
                             "--otel", str(tmp_path / "survey.otel.json"))
        assert code == 0, err
        first = json.loads(out)
        asked = server.completions
        code, out2, err2 = run(capsys, "survey", str(runs["model"]), "--at", "40,100", "--questions", q,
                               "--base-url", server.url, "--reply-cache", str(cache), "--json")
        again = json.loads(out2)
        assert server.completions == asked  # every answer from the reply cache
    assert first["answers"] == 60 * 3 * 2 and first["valid"] == first["answers"] and asked == first["requests_sent"]
    assert again["requests_sent"] == 0 and again["answered_from_cache"] == 360
    assert again["by_question"] == first["by_question"]
    by = first["by_question"]["safe"]["by"]
    assert [b["tick"] for b in by] == [40, 100] and all(1 <= b["low"] <= b["mean"] <= b["high"] <= 5 for b in by)
    wd = first["by_question"]["next"]["by"][0]["words_vs_deeds"]
    assert wd["judged"] == 60 and 0 <= wd["agree"] <= 1
    import duckdb

    rows = duckdb.sql(f"select brain, count(*), sum(valid::int) from '{out_dir / 'survey.parquet'}' "
                      "group by brain").fetchall()
    assert rows == [("model", 360, 360)]
    # every exchange kept as recordings keep a decision's, and as OpenTelemetry traces (one span a request)
    kept = [json.loads(line) for line in (out_dir / "exchanges.jsonl").read_text().splitlines()]
    assert len(kept) == 360 and {c["kind"] for c in kept} == {"survey"} and all(c["system"] for c in kept)
    otel = json.loads((tmp_path / "survey.otel.json").read_text())
    spans = otel["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert sum(1 for sp in spans if sp["name"].startswith("chat")) == 360
    for f in [*out_dir.iterdir(), *cache.rglob("*.json"), tmp_path / "survey.otel.json"]:
        assert KEY.encode() not in f.read_bytes()
    assert KEY not in out + err + out2 + err2


def test_the_embedded_brain_answers_by_template_and_says_so(capsys, runs, tmp_path):
    nothing = tmp_path / "free.toml"
    nothing.write_text('[[question]]\nid = "dream"\nkind = "text"\ntext = "What do you dream of?"\n')
    code, out, err = run(capsys, "survey", str(runs["plain"]), "--at", "100", "--questions", QUESTIONS, "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["reasons"] == {"template": 150} and s["requests_sent"] == 0
    assert all(b["brains"] == {"template": 30} for e in s["by_question"].values() for b in e["by"])
    code, out, _ = run(capsys, "survey", str(runs["plain"]), "--at", "100", "--questions", str(nothing), "--json")
    assert json.loads(out)["reasons"] == {"no_template": 30}  # a question it has no template for: counted


def test_a_user_brain_answers_through_its_answer_method_and_only_when_given(capsys, tmp_path):
    rec = tmp_path / "rules.mirofish"
    assert main(["live", "--headless", "--ticks", "120", "--fish", "20", "--brain", RULES, "--record", str(rec)]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "survey", str(rec), "--at", "80", "--questions", QUESTIONS)
    assert code == 2 and "never loads code" in err and len(err.strip().splitlines()) == 1
    code, out, err = run(capsys, "survey", str(rec), "--at", "80", "--questions", QUESTIONS, "--brain", RULES, "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["valid"] == 100 and s["by_question"]["together"]["by"][0]["brains"] == {"user": 20}
    assert s["by_question"]["together"]["by"][0]["words_vs_deeds"]["agree"] >= 0.5


def test_a_fork_against_its_parent_question_by_question(capsys, runs):
    code, out, err = run(capsys, "survey", str(runs["plain"]), str(runs["fork"]), "--at", "200", "--questions",
                         QUESTIONS, "--json")
    assert code == 0, err
    s = json.loads(out)
    diff = s["by_question"]["energy"]["differences"][0]
    assert diff["low"] <= diff["difference"] <= diff["high"] and diff["recording"].endswith("fork.mirofish")
    assert len(s["by_question"]["next"]["by"]) == 2  # each recording's distribution and words vs deeds


def test_max_requests_stops_asking_and_counts_the_rest(capsys, runs, tmp_path):
    with TestServer() as server:
        code, out, err = run(capsys, "survey", str(runs["model"]), "--at", "40", "--questions", questions(tmp_path, 1),
                             "--base-url", server.url, "--max-requests", "25", "--json")
        assert server.completions == 25, err
    s = json.loads(out)
    assert code == 0 and s["reasons"] == {"ok": 25, "max_requests": 35}


@pytest.mark.parametrize("extra, says", [
    (["--questions", "BAD"], "kind 'essay' is not one of"),
    (["--at", "5000"], "outside the recording"),
    (["--at", "x"], "ticks separated by commas"),
    (["--questions", "/nonexistent.toml"], "not found"),
    (["--fish", "99"], "fish 99 does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, runs, tmp_path, extra, says):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[question]]\nkind = "essay"\ntext = "Why?"\n')
    argv = ["survey", str(runs["plain"]), "--at", "100", "--questions", QUESTIONS, *extra]
    argv = [str(bad) if a == "BAD" else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and says in err, err


def test_a_dead_server_is_one_line_and_exit_2_with_what_was_asked_written(capsys, runs, tmp_path):
    out_dir = tmp_path / "o"
    code, _, err = run(capsys, "survey", str(runs["model"]), "--at", "40", "--questions", questions(tmp_path, 1),
                       "--base-url", "http://127.0.0.1:9/v1", "--out", str(out_dir), "--format", "csv")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "answered none" in err
    assert (out_dir / "survey.csv").read_text().count("\n") == 61  # every fish, counted with its reason
