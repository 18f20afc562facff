"""Prompts as files (brains/prompts.py, assets/prompts/, docs/prompts.md): the bundled file is the
prompt the model brain sends; a user's file changes what the server receives, is recorded, named
by trace, reask and diff, can be a group's, and is varied by a sweep; a bad file is one line."""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import pytest

from mirofish.brains.prompt import messages, summary_messages, system_prompt
from mirofish.brains.prompts import PromptError, default_prompt, load_prompt
from mirofish.brains.testserver import TestServer
from mirofish.cli import main
from mirofish.fish.perception import Perception
from mirofish.observe.recording import Recording

ROOT = Path(__file__).resolve().parent.parent
TERSE = ROOT / "assets" / "prompts" / "fish-terse.toml"

FISH = Perception(tick=9, view=".....\n..F..\n..@.<\n.....\n.....", food_here=True, energy=4200, max_energy=10000,
                  age=31, memories=("t3 ate", "t5 bumped into glass"), summaries=("t0-t5: I ate once. Anchors: x",),
                  places="#1 (3 cells east, 2 meals)")


def run(capsys, *argv: str) -> tuple[int, list[dict], str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")], out, err


def test_the_bundled_file_is_the_prompt_a_fish_is_sent():
    user = messages(FISH, "a calm fish", "hungry", plans=True)[1]["content"]
    assert user == textwrap.dedent("""\
        You are a calm fish. Asking because: hungry.
        .....
        ..F..
        ..@.<
        .....
        .....
        You see: 1 food (nearest 1 cell north), 1 fish (facing 1 west).
        Energy 42/100; food under you; age 31 ticks.
        Recent: t3 ate; t5 bumped into glass.
        Earlier: t0-t5: I ate once.
        Places you ate at: #1 (3 cells east, 2 meals).
        Plans that fit now: forage, school, explore north/south/west/east, rest, keep_away, return {"place": #}.""")
    action = messages(FISH, "a calm fish", "hungry", "t5-t9: ate once", plans=False)[1]["content"]
    assert action.splitlines()[6:] == ["here: food; energy 42/100; age 31", "Recent:", "t3 ate", "t5 bumped into glass",
                                       "Earlier:", "t0-t5: I ate once.",
                                       'Also add "summary": one sentence in your own words about t5-t9, like '
                                       '"Drifted past the grey stones, nibbled twice, trailed a striped school." '
                                       'Facts: ate once.']
    for plans in (True, False):  # the tendency line is one line of the file, left out whole
        on, off = system_prompt(plans, True), system_prompt(plans, False)
        assert "steadier" in on and "steadier" not in off
        assert len(on.splitlines()) == len(off.splitlines()) + 1
    assert summary_messages("a calm fish", "t5-t9: ate once. Anchors: q")[1]["content"] == \
        "You are a calm fish. About t5-t9. Facts: ate once."


def test_a_file_changes_only_the_keys_it_holds(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text("[plan]\nrecent_none = '''a blank page'''\n[plan.plans]\nforage = '''find food and eat it'''\n")
    mine = load_prompt(f)
    assert mine.name == "mine.toml" and mine.hash != default_prompt().hash
    bare = Perception(tick=0, view=FISH.view, food_here=False, energy=5000, max_energy=10000, age=0, memories=())
    got = messages(bare, "a fish", "first_plan", plans=True, prompt=mine)
    assert "forage - find food and eat it" in got[0]["content"] and "go to food" not in got[0]["content"]
    assert "Recent: a blank page." in got[1]["content"]
    assert got[1]["content"].replace("a blank page", "nothing yet") == \
        messages(bare, "a fish", "first_plan", plans=True)[1]["content"]
    same = tmp_path / "same.toml"
    same.write_text("[plan]\nrecent_none = '''nothing yet'''\n")
    assert load_prompt(same).hash == default_prompt().hash  # a file that says the same thing


@pytest.mark.parametrize(("text", "says"), [
    ("[plan]\nfish = '''You are $persona, energy $enrgy.'''\n", "[plan] fish uses $enrgy"),
    ("[plan]\nfish = '''costs 5$ a day'''\n", "a '$' that starts no placeholder"),
    ("[plan]\nfishes = 'x'\n", "unknown key [plan] fishes"),
    ("[scene]\nsystem = 'x'\n", "unknown table [scene]"),
    ("[action]\nsystem = 3\n", "[action] system must be a string"),
    ("[plan.plans]\nfly = 'up'\n", "[plan.plans] fly: no such plan"),
    ("[plan\n", "not a TOML file"),
])
def test_a_bad_prompt_file_is_one_line_naming_the_problem_and_exit_2(tmp_path, capsys, text, says):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(PromptError, match=None) as exc:
        load_prompt(f)
    assert says in str(exc.value) and "\n" not in str(exc.value)
    code, _, _, err = run(capsys, "live", "--headless", "--ticks", "5", "--brain", "llm", "--base-url",
                          "http://127.0.0.1:9/v1", "--model", "m", "--prompt", str(f))
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    code, _, _, err = run(capsys, "live", "--headless", "--ticks", "5", "--brain", "llm", "--base-url",
                          "http://127.0.0.1:9/v1", "--model", "m", "--prompt", str(tmp_path / "missing.toml"))
    assert code == 2 and "no such prompt file" in err


def test_a_run_in_another_prompt_sends_it_records_it_and_trace_reask_diff_name_it(tmp_path, capsys):
    a, b = tmp_path / "a.mirofish", tmp_path / "b.mirofish"
    with TestServer() as srv:
        base = ("live", "--headless", "--ticks", "120", "--fish", "20", "--brain", "llm", "--base-url", srv.url,
                "--model", "fish-mini")
        code, out_a, _, _ = run(capsys, *base, "--record", str(a))
        assert code == 0
        code, out_b, _, _ = run(capsys, *base, "--record", str(b), "--prompt", str(TERSE))
        assert code == 0
        rec = Recording(b)
        meta = rec.header["prompts"]["tank"]
        assert meta["name"] == "fish-terse.toml" and meta["hash"] == load_prompt(TERSE).hash
        assert meta["text"] == TERSE.read_text()
        calls = rec.model_calls()
        texts = rec.texts()
        assert calls and all(texts[c["prefix"]] == system_prompt(True, True, load_prompt(TERSE)) for c in calls
                             if c["kind"] == "decision")
        assert all("You see:" not in c["user"] for c in calls if c["kind"] == "decision")  # the terse message
        rec.close()
        assert Recording(a).header["prompts"]["tank"]["name"] == "default"
        # fewer prompt tokens per decision, as the server counted them
        assert out_b[-1]["brain"]["tokens"]["per_model_decision"] < out_a[-1]["brain"]["tokens"]["per_model_decision"]
        fish, tick = calls[0]["fish"], calls[0]["asked"]
        code, _, out, _ = run(capsys, "reask", str(b), "--fish", str(fish), "--tick", str(tick),
                              "--base-url", srv.url)
        assert code == 0 and f"(prompt fish-terse.toml {meta['hash']})" in out
    code, got, out, _ = run(capsys, "trace", str(b), "--fish", str(fish), "--from", "0", "--to", "30")
    assert code == 0 and "prompt fish-terse.toml" in out and got[-1]["prompt"]["name"] == "fish-terse.toml"
    code, _, out, _ = run(capsys, "diff", str(a), str(b))
    assert code == 0 and "different prompts: A default" in out and "B fish-terse.toml" in out


def test_a_group_has_its_own_prompt(tmp_path, capsys):
    rec_path = tmp_path / "groups.mirofish"
    with TestServer() as srv:
        groups = (f'fish.groups=[{{name="plain",count=10,model="fish-mini",base_url="{srv.url}"}},'
                  f'{{name="terse",count=10,model="fish-mini",base_url="{srv.url}",prompt="{TERSE}"}}]')
        code, _, _, err = run(capsys, "live", "--headless", "--ticks", "60", "--fish", "20", "--set", groups,
                              "--record", str(rec_path))
    assert code == 0, err
    rec = Recording(rec_path)
    prompts = rec.header["prompts"]
    assert prompts["plain"]["name"] == "default" and prompts["terse"]["name"] == "fish-terse.toml"
    texts, group = rec.texts(), rec.config.fish.group_of()
    seen = {rec.config.fish.group_names()[group[c["fish"]]]: texts[c["prefix"]] for c in rec.model_calls()
            if c["kind"] == "decision"}
    assert seen["plain"] == system_prompt() and seen["terse"] == system_prompt(prompt=load_prompt(TERSE))


def test_a_sweep_varies_the_prompt_and_reports_each_arm_with_an_interval(tmp_path, capsys):
    spec = tmp_path / "ab.toml"
    spec.write_text(textwrap.dedent(f"""\
        scene = "aquarium"
        length = 60
        seeds = {{from = 1, count = 2}}
        metrics = ["brain.tokens.per_model_decision", "mean_energy"]
        [params]
        "brain.kind" = ["llm"]
        "fish.count" = [12]
        "brain.prompt" = ["{ROOT / 'assets' / 'prompts' / 'fish.toml'}", "{TERSE}"]
        """))
    with TestServer() as srv:
        code, got, _, err = run(capsys, "sweep", str(spec), "--out", str(tmp_path / "out"), "--workers", "1",
                                "--base-url", srv.url, "--model", "fish-mini")
    assert code == 0, err
    assert got[-1]["failed"] == 0 and got[-1]["runs"] == 4
    table = Path(got[-1]["settings_csv"]).read_text().splitlines()
    rows = {Path(r["brain.prompt"]).name: r for r in csv.DictReader(table)}
    assert set(rows) == {"fish.toml", "fish-terse.toml"}
    tokens = {k: float(r["brain.tokens.per_model_decision mean"]) for k, r in rows.items()}
    assert tokens["fish-terse.toml"] < tokens["fish.toml"]
    assert all(r["brain.tokens.per_model_decision ci95"] != "" for r in rows.values())


SCENES = {  # scene → (its command line with model agents, a line its bundled prompt holds, its table)
    "referential": (["referential", "--headless", "--rounds", "6", "--agents", "llm"],
                    "Use existing glossary terms where they fit.", "sender"),
    "negotiation": (["negotiation", "--headless", "--sessions", "2", "--agents", "llm"],
                    "Issues: price, delivery_weeks", "negotiator"),
    "handoff": (["handoff", "--headless", "--agents", "llm", "--tasks", "2"],
                "market-analysis report chain", "agent"),
}


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_each_scene_s_model_agents_are_sent_the_prompt_file_given(tmp_path, capsys, scene):
    argv, line, table = SCENES[scene]
    bundled = load_prompt(None, scene).t(table, "system")
    assert line in bundled  # the bundled file holds the scene's prompt
    mine = tmp_path / f"my-{scene}.toml"
    mine.write_text(f"[{table}]\nsystem = '''{bundled} Be brief: CANARY-PROMPT.'''\n")
    with TestServer(keep_bodies=True) as srv:
        code, got, _, err = run(capsys, *argv, "--base-url", srv.url, "--model", "fish-mini", "--prompt", str(mine))
        assert code == 0, err
        assert got[-1]["prompt"] == {"name": mine.name, "hash": load_prompt(mine, scene).hash}
        systems = [json.loads(b)["messages"][0]["content"] for b in srv.bodies]
    assert any("CANARY-PROMPT" in s for s in systems)
    if scene == "negotiation":  # its recording keeps the prompt's text, and replay names it
        rec = tmp_path / "neg.db"
        with TestServer() as srv:
            code, _, _, err = run(capsys, *argv, "--base-url", srv.url, "--model", "fish-mini", "--prompt", str(mine),
                                  "--record", str(rec))
        assert code == 0, err
        code, got, _, err = run(capsys, "replay", str(rec), "--headless")
        assert code == 0, err
        assert got[-1]["prompt"] == {"name": mine.name, "hash": load_prompt(mine, scene).hash}
        from mirofish.scenes.negotiation.recording import NegotiationRecording
        kept = NegotiationRecording(rec)
        try:
            assert "CANARY-PROMPT" in kept.header["prompt"]["text"]
        finally:
            kept.close()
    bad = tmp_path / "bad.toml"
    bad.write_text(f"[{table}]\nsystem = '''$nope'''\n")
    code, _, _, err = run(capsys, *argv, "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--prompt", str(bad))
    assert code == 2 and "uses $nope" in err and len(err.strip().splitlines()) == 1


def test_a_fork_asks_in_the_recorded_prompt_text_after_the_file_changed(tmp_path, capsys):
    mine, rec, out = tmp_path / "mine.toml", tmp_path / "run.mirofish", tmp_path / "fork.mirofish"
    mine.write_text(TERSE.read_text())
    with TestServer(keep_bodies=True) as srv:
        code, _, _, err = run(capsys, "live", "--headless", "--ticks", "80", "--fish", "12", "--brain", "llm",
                              "--base-url", srv.url, "--model", "fish-mini", "--prompt", str(mine),
                              "--record", str(rec))
        assert code == 0, err
        mine.write_text(TERSE.read_text().replace("You are a fish in a shared aquarium.", "CANARY-EDITED"))
        srv.bodies.clear()
        code, got, _, err = run(capsys, "fork", str(rec), "--at", "40", "--fish", "3", "--action", "move_e",
                                "--ticks", "40", "--base-url", srv.url, "--record", str(out))
        assert code == 0, err
        sent = [json.loads(b)["messages"][0]["content"] for b in srv.bodies]
    assert got[-1]["cache_misses"] > 0 and sent  # the fork asked the server for new decisions
    assert not any("CANARY-EDITED" in s for s in sent)  # in the words of the run, not the file as it is now
    assert all("You are a fish in a shared aquarium." in s for s in sent)
    parent, fork = Recording(rec), Recording(out)
    try:
        assert fork.header["prompts"] == parent.header["prompts"]  # and its recording says so
    finally:
        parent.close()
        fork.close()
    assert "CANARY-EDITED" in load_prompt(mine).t("plan", "system")  # outside a fork: the file as it is
