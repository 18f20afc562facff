"""Your own brain and mixed tanks, as a user runs them: the CLI with a brain file, two example
brains, brains that fail in every way, groups on different servers with different keys."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mirofish.brains.base import TIERS
from mirofish.brains.testserver import TestServer
from mirofish.cli import main
from mirofish.observe.recording import Recording

ROOT = Path(__file__).resolve().parent.parent
RULES = f"{ROOT / 'examples' / 'rule_brain.py'}:RuleBrain"
AGENT = f"{ROOT / 'examples' / 'llm_agent.py'}:LLMAgent"


def run(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    return code, json.loads(lines[-1]) if lines else None, err


def headless(capsys, *argv: str, ticks: int = 120) -> tuple[int, dict | None, str]:
    return run(capsys, "live", "--headless", "--ticks", str(ticks), "--fish", "30", *argv)


def test_the_rule_brain_decides_reproducibly_and_its_run_replays_and_forks(capsys, tmp_path):
    rec = tmp_path / "rules.mirofish"
    code, first, err = headless(capsys, "--brain", RULES, "--record", str(rec))
    assert code == 0 and err == ""
    assert first["decisions_by_tier"] == {"user": first["brain"]["brain_decisions"]}
    assert first["brain"]["brain"] == "rules" and first["brain"]["fallbacks"] == {}
    again = headless(capsys, "--brain", RULES)[1]
    assert again["final_state_hash"] == first["final_state_hash"]  # a deterministic brain in lockstep
    other = headless(capsys)[1]
    assert other["final_state_hash"] != first["final_state_hash"]  # it is not the instinct under another name
    code, replayed, _ = run(capsys, "replay", str(rec), "--headless", "--verify")
    assert code == 0 and replayed["state_hash"] == first["final_state_hash"]
    code, fork, _ = run(capsys, "fork", str(rec), "--at", "60", "--fish", "2", "--plan", "rest 100 20",
                        "--ticks", "60", "--brain", RULES)  # a recording never loads code: the user names it
    assert code == 0 and fork["final_state_hash"] != fork["parent_state_hash_at_same_tick"]
    thoughts = [s for _, _, texts in Recording(rec).chunks(0, 120) for _, _, s in texts["thoughts"]]
    assert any("food in view" in t for t in thoughts)  # the brain's own words are recorded


BAD = textwrap.dedent("""
    import time
    class Raises:
        def decide(self, ask):
            raise ValueError("boom")
    class Sleeps:
        def decide(self, ask):
            time.sleep(10 ** 6)
    class Illegal:
        def decide(self, ask):
            if "school" not in ask.plans:
                return {"goal": "school", "thought": "with nobody"}
            return {"goal": "forage"}
    class Garbage:
        def decide(self, ask):
            return 42
    def function_brain(ask):
        return {"goal": "forage", "thought": "a function is a brain too"}
    class NotABrain:
        pass
    """)


@pytest.mark.parametrize("name, reason", [("Raises", "brain_raised"), ("Sleeps", "brain_hung"),
                                          ("Illegal", "school_without_fish"), ("Garbage", "brain_garbage")])
def test_a_brain_that_fails_gets_the_fallback_with_one_line_and_the_tank_moves(capsys, tmp_path, name, reason):
    (tmp_path / "bad.py").write_text(BAD)
    rec = tmp_path / "bad.mirofish"
    code, out, err = headless(capsys, "--brain", f"{tmp_path / 'bad.py'}:{name}", "--set",
                              "brain.request_timeout_s=0.3", "--record", str(rec), ticks=60)
    assert code == 0
    off = [ln for ln in err.splitlines() if "switched off" in ln]  # a brain that hangs every call: said once
    assert len(off) == (1 if out["brain"]["lost_workers"] >= 8 else 0), err
    warned = [ln for ln in err.splitlines() if ln.strip() and ln not in off]
    assert len(warned) == len({ln.split("(counted as ")[1].split(";")[0] for ln in warned})  # one line per kind
    assert any(f"counted as {reason}" in ln for ln in warned) and "Traceback" not in err
    assert out["brain"]["fallbacks"].get(reason, 0) > 0
    assert out["decisions_by_tier"].get("fallback", 0) == sum(out["brain"]["fallbacks"].values())
    assert out["action_shares"]["rest"] < 0.9  # the fish swim: the fallback planned for them
    statuses = {int(s) for _, d, _ in Recording(rec).chunks(0, 60) for s in d["status"]}
    assert statuses - {0}  # each fallback is recorded with its reason


@pytest.mark.parametrize("spec, says", [
    ("missing.py:B", "file not found: missing.py"),
    ("{bad}:Nope", "defines no Nope"),
    ("{bad}:NotABrain", "has no decide(ask) method"),
    ("json:nothing_here", "module json defines no nothing_here"),
    ("no_such_brain", "unknown brain 'no_such_brain'"),
])
def test_a_brain_that_does_not_load_is_one_line_and_exit_2(capsys, tmp_path, spec, says):
    (tmp_path / "bad.py").write_text(BAD)
    code, _, err = headless(capsys, "--brain", spec.format(bad=tmp_path / "bad.py"), ticks=5)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1


def test_a_function_and_an_entry_point_are_brains_too(capsys, tmp_path, monkeypatch):
    (tmp_path / "bad.py").write_text(BAD)
    code, out, _ = headless(capsys, "--brain", f"{tmp_path / 'bad.py'}:function_brain", ticks=30)
    assert code == 0 and out["brain"]["brain_decisions"] > 0
    site = tmp_path / "site"
    (site / "mybrains").mkdir(parents=True)
    (site / "mybrains" / "__init__.py").write_text(BAD)
    dist = site / "mybrains-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mybrains\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[mirofish.brains]\nforager = mybrains:function_brain\n")
    monkeypatch.syspath_prepend(str(site))
    code, out, _ = headless(capsys, "--brain", "forager", ticks=30)
    assert code == 0 and out["brain"]["brain_decisions"] > 0 and out["brain"]["spec"] == "forager"


def test_a_mixed_tank_of_instinct_and_rule_fish_records_replays_and_forks(capsys, tmp_path):
    cfg = tmp_path / "mixed.toml"
    text = (ROOT / "examples" / "mixed.toml").read_text()
    cfg.write_text(text.replace("examples/rule_brain.py", str(ROOT / "examples" / "rule_brain.py")))
    rec = tmp_path / "mixed.mirofish"
    code, out, _ = run(capsys, "live", "--headless", "--ticks", "150", "--config", str(cfg), "--record", str(rec))
    assert code == 0
    groups = out["brain"]["groups"]
    assert groups["instinct"]["source"] == "instinct" and groups["rules"]["brain"] == "rules"
    assert set(out["decisions_by_tier"]) == {"instinct", "user"}
    fish_by_tier: dict[str, set[int]] = {"instinct": set(), "user": set()}
    for _, d, _ in Recording(rec).chunks(0, 150):
        for f, t in zip(d["fish"], d["tier"]):
            fish_by_tier[TIERS[int(t)]].add(int(f))
    assert fish_by_tier["instinct"] <= set(range(30)) and fish_by_tier["user"] <= set(range(30, 60))
    code, replayed, _ = run(capsys, "replay", str(rec), "--headless", "--verify")
    assert code == 0 and replayed["state_hash"] == out["final_state_hash"]
    code, fork, _ = run(capsys, "fork", str(rec), "--at", "50", "--fish", "40", "--plan", "school 60",
                        "--ticks", "50", "--brain", f"rules={RULES}")
    assert code == 0 and fork["final_tick"] == 100


def test_groups_that_all_run_the_instinct_decide_as_the_tank_without_groups(capsys):
    plain = headless(capsys)[1]
    grouped = headless(capsys, "--set", 'fish.groups=[{name="a",share=0.5},{name="b",share=0.5}]')[1]
    assert grouped["final_state_hash"] == plain["final_state_hash"]


def test_each_group_asks_only_its_own_server_with_only_its_own_key(capsys, tmp_path, monkeypatch):
    a, b = TestServer(model="alpha", keep_bodies=True).start(), TestServer(model="beta", keep_bodies=True).start()
    monkeypatch.setenv("KEY_ALPHA", "sk-canary-alpha-0001")
    monkeypatch.setenv("KEY_BETA", "sk-canary-beta-0002")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-default-0003")
    groups = (f'fish.groups=[{{name="alpha",count=10,model="alpha",base_url="{a.url}",api_key_env="KEY_ALPHA"}},'
              f'{{name="beta",count=10,model="beta",base_url="{b.url}",api_key_env="KEY_BETA",temperature=0.7,'
              f'top_p=0.9}}]')
    rec = tmp_path / "two.mirofish"
    try:
        code, out, err = run(capsys, "live", "--headless", "--ticks", "60", "--fish", "20", "--set", groups,
                             "--record", str(rec))
        asked_b = len(b.bodies)
        beta_tick = next(c["tick"] for c in Recording(rec).model_calls(fish=15) if c["kind"] == "decision")
        again, _, _ = run(capsys, "reask", str(rec), "--fish", "15", "--tick", str(beta_tick), "--json",
                          "--base-url", b.url, "--api-key-env", "KEY_BETA")
        assert again == 0 and len(b.bodies) == asked_b + 1  # re-asked of the server and key the user names
    finally:
        a.stop()
        b.stop()
    assert code == 0, err
    assert a.seen_auth == {"Bearer sk-canary-alpha-0001"} and b.seen_auth == {"Bearer sk-canary-beta-0002"}
    bodies_a = [json.loads(x) for x in a.bodies]
    bodies_b = [json.loads(x) for x in b.bodies]
    assert bodies_a and bodies_b
    assert {x["model"] for x in bodies_a} == {"alpha"} and {x["model"] for x in bodies_b} == {"beta"}
    assert {x["temperature"] for x in bodies_a} == {0} and "top_p" not in bodies_a[0]
    assert {(x["temperature"], x["top_p"]) for x in bodies_b} == {(0.7, 0.9)}
    calls = Recording(rec).model_calls()
    by_group = {c["group"]: set() for c in calls}
    for c in calls:
        by_group[c["group"]].add(int(c["fish"]))
    assert set(by_group) == {"alpha", "beta"}
    assert by_group["alpha"] <= set(range(10)) and by_group["beta"] <= set(range(10, 20))
    beta = [c for c in calls if c["group"] == "beta"]
    assert all(c["temperature"] == 0.7 and c["top_p"] == 0.9 and c["system_fingerprint"] == "fp_beta"
               and c["response_model"] == "beta" for c in beta)
    raw = rec.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("two.mirofish*"))
    assert b"sk-canary" not in raw and "sk-canary" not in out.__repr__() + err


def test_the_llm_agent_example_asks_the_server_through_the_client_it_is_handed(capsys, tmp_path, monkeypatch):
    server = TestServer(keep_bodies=True).start()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-agent-0004")
    rec = tmp_path / "agent.mirofish"
    try:
        code, out, err = headless(capsys, "--brain", AGENT, "--base-url", server.url, "--model", "fish-mini",
                                  "--record", str(rec), ticks=40)
    finally:
        server.stop()
    assert code == 0, err
    assert out["brain"]["brain"] == "diary-agent" and out["brain"]["model_calls"] == len(server.bodies) > 0
    assert out["brain"]["brain_decisions"] > 0.9 * out["brain"]["decisions"]
    sent = json.loads(server.bodies[-1])["messages"]
    assert "Your diary:" in sent[1]["content"] and "steer one fish" in sent[0]["content"]  # its own prompt
    calls = Recording(rec).model_calls()
    assert len(calls) == len(server.bodies) and {c["tier"] for c in calls} == {"user"}
    assert all(c["prompt_tokens"] > 0 for c in calls)
    code, _, _ = run(capsys, "replay", str(rec), "--headless", "--verify")
    assert code == 0
    assert b"sk-canary" not in rec.read_bytes()
    # trace names the prompt the agent wrote itself, not the one MiroFish offered it
    fish = calls[0]["fish"]
    code = main(["trace", str(rec), "--fish", str(fish), "--from", "0", "--to", "40"])
    said = capsys.readouterr().out
    assert code == 0, said
    head, tail = said.splitlines()[0], json.loads(said.splitlines()[-1])
    assert f"your own ({AGENT})" in head and "\u201cYou steer one fish" in head
    assert "offered to it as Ask.messages" in head
    mine = sum(1 for c in calls if c["fish"] == fish)
    assert sum(tail["prompt"]["own"].values()) == mine and len(tail["prompt"]["own"]) == 1


def test_a_brain_that_chats_without_a_server_falls_back_with_the_reason(capsys):
    code, out, err = headless(capsys, "--brain", AGENT, ticks=20)
    assert code == 0 and out["brain"]["fallbacks"].get("no_server", 0) > 0
    assert "needs a model server" in err and len(err.strip().splitlines()) == 1
    assert np.isclose(out["brain"]["fallback_rate"], 1.0)
