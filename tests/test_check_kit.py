"""The kit for plug-in authors (mirofish.testing, docs/extending.md "Check your plug-in"): the
examples of the docs pass it — every user brain docs/brains.md shows, the scene and the metric
of tests/plugin_scene, every built-in scene, metric and plan type, the docs' new plan type — and
each check fails, in one line, on a plug-in broken the way plug-ins break (a brain reading the
clock or an unseeded random, a metric that raises, a scene whose step is not seeded …). Also the
typed public API: ``mirofish.__all__`` resolves, ``import mirofish`` stays light, py.typed ships."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

import mirofish
from mirofish.testing import Checked, CheckFailed, check_brain, check_metric, check_plan_type, check_scene

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "tests" / "plugin_scene"


def fails(check, *args, **kwargs) -> str:
    """The one line a check fails with (it must fail: the test is red otherwise)."""
    with pytest.raises(CheckFailed) as got:
        check(*args, **kwargs)
    message = str(got.value)
    assert isinstance(got.value, AssertionError)  # a bare pytest test reports it
    assert "\n" not in message and message.startswith(f"{check.__name__}: "), message
    return message


@pytest.fixture
def coins(monkeypatch):
    """tests/plugin_scene importable (its scene and metric, as the objects a plug-in defines)."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    import mirofish_coins
    import mirofish_coins.metric

    return mirofish_coins


# ---------------------------------------------------------------- the docs' examples pass


def _doc_brains() -> list[str]:
    text = (ROOT / "docs" / "brains.md").read_text(encoding="utf-8")
    return sorted(set(re.findall(r"examples/\w+\.py:\w+", text)))


def test_the_docs_show_both_example_brains():
    assert _doc_brains() == ["examples/llm_agent.py:LLMAgent", "examples/rule_brain.py:RuleBrain"]


@pytest.mark.parametrize("spec", _doc_brains())
def test_every_brain_the_docs_show_passes_the_kit(spec, monkeypatch):
    monkeypatch.chdir(ROOT)  # the specs as the docs write them, relative to the checkout
    done = check_brain(spec, test_server=True)  # the agent asks the bundled scripted server
    assert isinstance(done, Checked) and done.subject == spec
    steps = " / ".join(done.steps)
    for step in ("replay --verify", "a second run of the same seed", "fork at tick", "export --tables",
                 "survey:", "bad input"):
        assert step in steps, steps


def test_the_docs_worked_example_runs_as_written(monkeypatch):
    """The test file docs/extending.md shows, run as pytest would run it."""
    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    section = text.split("## Check your plug-in")[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) == 5 and "check_brain(" in code
    monkeypatch.chdir(ROOT)
    space: dict = {}
    exec(compile(code, "docs/extending.md", "exec"), space)
    tests = [f for name, f in space.items() if name.startswith("test_")]
    assert len(tests) == 1
    tests[0]()


def _signature(check) -> str:
    import inspect

    parts, star = [], False
    for p in inspect.signature(check).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        parts.append(str(p.replace(annotation=p.empty)))
    return f"{check.__name__}({', '.join(parts)})"


def test_the_docs_table_gives_each_checks_signature():
    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8").split("## Check your plug-in")[1]
    shown = re.findall(r"^\| `(check_\w+\(.*?\))` \|", text, re.M)
    assert shown == [_signature(c) for c in (check_brain, check_scene, check_metric, check_plan_type)]


def test_the_failure_the_docs_show_is_the_kits(tmp_path, monkeypatch):
    (tmp_path / "my_brain.py").write_text(CLOCK)
    monkeypatch.chdir(tmp_path)
    message = fails(check_brain, "my_brain.py:ClockBrain")
    shown = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8").split("## Check your plug-in")[1]
    # (quoted as pytest prints it: the kit's CheckFailed, an AssertionError)
    shown = " ".join(re.search(r"```\n(mirofish\.testing\.common\.CheckFailed: .*?)```", shown, re.S).group(1).split())
    shape = re.escape(shown.removeprefix("mirofish.testing.common.CheckFailed: "))
    shape = re.sub(r"tick\\ \d+", r"tick\\ \\d+", re.sub(r"[0-9a-f]{12}", "[0-9a-f]{12}", shape))
    assert re.fullmatch(shape, message), (message, shown)


def test_the_plugin_scene_and_its_metric_pass_the_kit(coins):
    scene = check_scene(coins.SPEC)
    assert scene.subject == "coins" and any("fork --at-turn 30 --change bias=0.5" in s for s in scene.steps)
    assert any("sweep hooks" in s for s in scene.steps)
    assert check_scene("mirofish_coins:SPEC").subject == "coins"  # named as an entry point names it
    metric = check_metric(coins.metric.RESTING)
    assert metric.subject == "resting_share" and "replayed from its recording: the same values" in metric.steps
    assert check_metric("mirofish_coins.metric:RESTING").subject == "resting_share"


def test_an_installed_plugin_scene_passes_by_its_name(coins, tmp_path, monkeypatch):
    """Installed (an entry point of mirofish.scenes in a dist-info on the path), the scene is
    checked by its name as a user knows it."""
    from mirofish.scenes import registry

    site = tmp_path / "site"
    info = site / "mirofish_coins-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mirofish-coins\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[mirofish.scenes]\ncoins = mirofish_coins:SPEC\n")
    monkeypatch.syspath_prepend(str(site))
    registry.reset()
    try:
        assert check_scene("coins").subject == "coins"
    finally:
        monkeypatch.undo()
        registry.reset()


@pytest.mark.parametrize("name", ["aquarium", "referential", "negotiation", "handoff"])
def test_every_built_in_scene_passes_the_kit(name):
    assert check_scene(name).subject == name


def _built_in_metrics() -> list[str]:
    from mirofish.observe.metrics import METRICS

    return [m.key for m in METRICS if not m.plugin]


@pytest.mark.parametrize("key", [k for k in _built_in_metrics() if k != "decision_latency_p95_ms"])
def test_every_built_in_metric_passes_the_kit(key):
    assert check_metric(key).subject == key


def test_the_latency_metric_reads_the_clock_and_the_kit_says_so():
    """The one built-in metric measured in wall-clock time: two runs of one seed differ."""
    assert "decision_latency_p95_ms" in _built_in_metrics()
    message = fails(check_metric, "decision_latency_p95_ms")
    assert "a second run of seed 3 gives decision_latency_p95_ms mean" in message and "the clock" in message


def _plan_types() -> list[str]:
    from mirofish.fish.plantypes import PLAN_TYPES

    return [t.name for t in PLAN_TYPES]


@pytest.mark.parametrize("name", _plan_types())
def test_every_built_in_plan_type_passes_the_kit(name):
    done = check_plan_type(name)
    steps = " / ".join(done.steps)
    assert "decisions recorded as" in steps or "never offered" in steps, steps
    assert f"recorded as {name!r}, fish 0 swims it, replays, exports" in steps, steps
    from mirofish.fish.plantypes import PLAN_TYPES

    row = next(t for t in PLAN_TYPES if t.name == name)
    if row.utility:  # hide: its formula drawn by the compiled planner exactly as by numpy, and it won some
        assert re.search(r"utility: compiled planner = numpy on \d+ requests, the plan won [1-9]", steps), steps
    if row.ends or row.fails:
        assert "ends/fails: compiled tick = numpy" in steps, steps


# the row of docs/extending.md "A plan type", added before the rest of MiroFish loads, then checked
NEW_TYPE = """
import json, sys
from mirofish.fish import plantypes
from mirofish.fish.plantypes import PlanType
plantypes.PLAN_TYPES = plantypes.PLAN_TYPES + ({row},)
from mirofish.testing import CheckFailed, check_plan_type
try:
    print(json.dumps({{"ok": list(check_plan_type({name!r}).steps)}}))
except CheckFailed as exc:
    print(json.dumps({{"failed": str(exc)}}))
"""


def _row_of_the_docs() -> str:
    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    block = re.search(r"## A plan type.*?```python\n(.*?)```", text, re.S).group(1)
    return " ".join(block.split())


def _check_new_type(row: str, name: str) -> dict:
    done = subprocess.run([sys.executable, "-c", NEW_TYPE.format(row=row, name=name)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_docs_new_plan_type_passes_the_kit():
    row = _row_of_the_docs()
    assert row.startswith('PlanType("drift"')
    got = _check_new_type(row, "drift")
    assert "ok" in got, got
    steps = " / ".join(got["ok"])
    assert "fork picker: drift 25" in steps and "recorded as 'drift'" in steps


# ---------------------------------------------------------------- broken plug-ins fail, in one line

CLOCK = textwrap.dedent("""
    import time
    from mirofish.brains.user import Decision

    class ClockBrain:
        def decide(self, ask):
            if time.perf_counter_ns() % 2 and "explore" in ask.plans:
                return Decision(goal="explore", direction=ask.directions[-1], ticks=20)
            return Decision(goal="forage", ticks=30)
    """)

BROKEN_BRAINS = textwrap.dedent("""
    import random
    from mirofish.brains.user import Decision

    class Dice:
        def decide(self, ask):
            return Decision(goal=random.choice(["forage", "rest"]), ticks=20)

    class Raises:
        def decide(self, ask):
            raise ValueError("boom")

    class Mute:
        def decide(self, ask):
            return Decision(goal="forage", ticks=30)

        def answer(self, question, ask):
            raise RuntimeError("no words")
    """)


def test_a_brain_that_reads_the_clock_fails(tmp_path, monkeypatch):
    (tmp_path / "clock.py").write_text(CLOCK)
    monkeypatch.chdir(tmp_path)
    message = fails(check_brain, "clock.py:ClockBrain")
    assert message.startswith("check_brain: clock.py:ClockBrain: a second run of seed 3 differs from the first at "
                              "tick ") and "(state hash " in message and "the clock" in message


@pytest.mark.parametrize("name, says", [
    ("Dice", "a second run of seed 3 differs from the first at tick"),
    ("Raises", "decisions fell back to the instinct"),
    ("Mute", "its answer(question, ask) failed 12 of 12 survey questions (12 brain_raised)"),
])
def test_a_broken_brain_fails_with_one_line(tmp_path, name, says):
    (tmp_path / "broken.py").write_text(BROKEN_BRAINS)
    message = fails(check_brain, f"{tmp_path / 'broken.py'}:{name}")
    assert says in message, message
    if name == "Raises":
        assert "brain_raised" in message and "ValueError: boom" in message


def test_a_brain_object_is_checked_as_given():
    import random

    def forager(ask):
        return {"goal": "forage", "ticks": 30}

    assert check_brain(forager).subject == "test_a_brain_object_is_checked_as_given.<locals>.forager"

    class Moody:
        def decide(self, ask):
            return {"goal": random.choice(["forage", "rest"])}

    assert "differs from the first at tick" in fails(check_brain, Moody)


def test_a_brain_that_chats_without_a_server_is_told_what_to_give(monkeypatch):
    monkeypatch.chdir(ROOT)
    message = fails(check_brain, "examples/llm_agent.py:LLMAgent")
    assert "needs a model server: pass base_url= and model= (or test_server=True" in message


def test_a_metric_whose_compute_raises_fails():
    from mirofish.observe.metrics import Metric

    crash = Metric("crash_share", "crash", "divides by zero", "share", "{:.0%}", "sample", lambda s: 1 / 0)
    message = fails(check_metric, crash)
    assert message.startswith("check_metric: crash_share: its compute raised in a 200-tick run: ")
    assert "ZeroDivisionError: division by zero" in message


def test_a_metric_that_fails_on_an_empty_tank_fails():
    from mirofish.observe.metrics import Metric

    lonely = Metric("lonely", "lonely", "one over the fish", "share", "{:.2f}", "sample", lambda s: 1 / len(s.ids))
    message = fails(check_metric, lonely)
    assert "its compute raised on a tank with no fish in the water" in message and "ZeroDivisionError" in message


def test_a_metric_that_reads_an_unseeded_random_fails():
    import random

    from mirofish.observe.metrics import Metric

    dice = Metric("dice", "dice", "a die", "share", "{:.2f}", "sample", lambda s: random.random())
    assert "a second run of seed 3 gives dice mean" in fails(check_metric, dice)


def test_a_metric_whose_key_is_taken_or_that_is_no_metric_fails():
    from mirofish.observe.metrics import Metric

    twin = Metric("polarization", "p", "mine", "0..1", "{:.2f}", "sample", lambda s: 0.0)
    assert "its key 'polarization' is taken by another metric (built-in)" in fails(check_metric, twin)
    assert "no metric 'no_such_metric' in the running table" in fails(check_metric, "no_such_metric")
    assert "is a int, not a mirofish.observe.metrics.Metric" in fails(check_metric, 42)


def test_a_scene_whose_step_is_not_seeded_fails(coins):
    import random

    from mirofish.scenes.turnscene import TurnScene

    class Loose(coins.Coins):
        def __init__(self, seed, settings):
            super().__init__(seed, settings)
            self.rng = random.Random()  # not the scene's seed

    message = fails(check_scene, TurnScene("loose", Loose, help="an unseeded coin").spec())
    assert message.startswith("check_scene: loose: replaying its recording failed (exit code 2): mirofish: replay "
                              "diverges from the recording at turn "), message


def test_a_scene_that_records_without_a_replay_or_takes_a_name_fails(coins):
    from dataclasses import replace

    no_replay = replace(coins.SPEC, name="half", replay=None)
    assert "records turns but has no replay part" in fails(check_scene, no_replay)
    assert "the name 'aquarium' is taken by another scene" in fails(check_scene, replace(coins.SPEC, name="aquarium"))
    assert "no scene 'no_such_scene'" in fails(check_scene, "no_such_scene")


def test_a_plan_type_outside_the_table_fails(monkeypatch):
    assert "is not a plan type of the running table" in fails(check_plan_type, "drift")
    from mirofish.fish import plantypes

    late = plantypes.PlanType("late", ticks=10, fork=("late {ticks}",))
    monkeypatch.setattr(plantypes, "PLAN_TYPES", plantypes.PLAN_TYPES + (late,))
    assert "was added to PLAN_TYPES after mirofish.fish.plans loaded" in fails(check_plan_type, "late")


def test_a_plan_type_whose_fork_entry_does_not_read_fails():
    """A direction plan whose fork entry forgot its {param}: the picker would offer a plan that
    cannot be read."""
    got = _check_new_type('PlanType("dash", param="direction", ticks=10, prompt="dash one way", fits="open_way", '
                          'fork=("dash {ticks}",))', "dash")
    assert got == {"failed": "check_plan_type: dash: its fork entry 'dash 10' does not read as a plan: dash needs a "
                             "direction: north, south, west or east"}


# ---------------------------------------------------------------- the typed public API


def test_every_name_of_the_public_api_resolves():
    assert len(set(mirofish.__all__)) == len(mirofish.__all__)
    for name in mirofish.__all__:
        assert getattr(mirofish, name) is not None, name
    from mirofish.brains.user import Ask, Decision
    from mirofish.fish.plantypes import PlanType
    from mirofish.observe.metrics import Metric
    from mirofish.scenes.registry import SceneSpec

    assert (mirofish.Ask, mirofish.Decision, mirofish.PlanType, mirofish.Metric, mirofish.SceneSpec) == (
        Ask, Decision, PlanType, Metric, SceneSpec)
    assert mirofish.testing.check_brain is check_brain
    assert set(mirofish.__all__) <= set(dir(mirofish))

    class Rules:
        def decide(self, ask):
            return {"goal": "forage"}

    assert isinstance(Rules(), mirofish.Brain) and not isinstance(object(), mirofish.Brain)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = mirofish.nothing_here


def test_import_mirofish_is_light_and_star_import_gives_the_api():
    code = ("import sys, mirofish\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pygame', 'openai', 'numpy', 'pydantic'))\n"
            "ns = {}\n"
            "exec('from mirofish import *', ns)\n"
            "after = sorted({m.split('.')[0] for m in sys.modules} & {'pygame', 'openai'})\n"
            "import json; print(json.dumps([heavy, sorted(k for k in ns if not k.startswith('__')), after]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    heavy, names, after = json.loads(done.stdout)
    assert heavy == [] and names == sorted(mirofish.__all__) and after == []


def test_the_package_ships_py_typed():
    assert (ROOT / "mirofish" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["mirofish"]
