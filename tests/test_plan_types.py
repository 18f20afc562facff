"""A plan type is one row of one table (mirofish/fish/plantypes.py); everything else derives from it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mirofish.brains import instinct, prompt
from mirofish.fish import plans, plantypes
from mirofish.fish.plans import DEFAULT
from mirofish.fish.steering import GOAL_ROWS, TERMS
from mirofish.observe import worddeed
from mirofish.world import GOAL_FLAG_COLUMNS, goal_parts

_GOAL_FLAGS = goal_parts(DEFAULT).flags

ROOT = Path(__file__).resolve().parent.parent


def test_every_plan_type_has_its_derived_parts():
    """Each row of the table reaches every place that needs a goal: the enum, the goal flags,
    steering's rows, the prompt's list and schema, the default horizons, the fork picker, word
    and deed, and describe/parse (a type declared without one of them fails here)."""
    types = plantypes.PLAN_TYPES
    assert [g.label for g in plans.Goal] == [t.name for t in types] == list(plans.GOAL_NAMES)
    assert _GOAL_FLAGS.shape == (len(types), len(GOAL_FLAG_COLUMNS))
    assert GOAL_ROWS.n_rows == sum(len(t.steer) for t in types)
    schema_goals = prompt.PLAN_REPLY_SCHEMA["properties"]["goal"]["enum"]
    fork = plans.fork_plans()
    for code, t in enumerate(types):
        assert [c for c in GOAL_FLAG_COLUMNS if _GOAL_FLAGS[code, GOAL_FLAG_COLUMNS.index(c)]] == \
            [c for c in GOAL_FLAG_COLUMNS if c in t.events]
        if t.fits != "never":
            assert t.name in schema_goals and prompt.DEFAULT_TICKS[t.name] == t.ticks
        if t.prompt and t.needs:  # listed only in a tank whose perception switch is on
            assert f"\n{t.name} - " not in prompt.PLAN_PROMPT
            assert f"\n{t.name} - {t.prompt}\n" in prompt.system_prompt(True, True, None, (t.needs,))
        elif t.prompt:
            assert f"\n{t.name} - {t.prompt}\n" in prompt.PLAN_PROMPT
        if t.words:
            assert worddeed.GOAL_WORDS[t.name] == t.words
            assert worddeed.word_verdict(code, 0, f"I {t.words[0]} now") is (True if t.param != "action" else None)
        offered = [f for f in fork if f.split()[0] == t.name]
        assert len(offered) == sum(len(plans.PARAM_WORDS.get(t.param, ("",))) if "{param}" in e else 1
                                   for e in t.fork)
        for text in offered:
            assert plans.parse_plan(text)[0] == code
        param = 1 if t.param in ("direction", "away", "action", "place") else 0
        if t.param != "action":
            assert plans.parse_plan(plans.describe(code, param, 7)) == (code, param, 7)
        if t.planner:
            assert t.planner in instinct.PLANNER_UTILITIES
    assert set(schema_goals) == {t.name for t in types if t.fits != "never"}


def test_a_bad_row_is_refused_naming_what_is_wrong():
    with pytest.raises(ValueError, match="steering term 'speed'"):
        plantypes.PlanType("dash", steer=({"speed": ("food", 1.0)},))
    with pytest.raises(ValueError, match="param 'colour'"):
        plantypes.PlanType("paint", param="colour")
    with pytest.raises(ValueError, match="declared twice"):
        plantypes.check(plantypes.PLAN_TYPES + (plantypes.PlanType("forage"),))


# A new plan type added by one row (before the package loads): "drift", with the current. Its body
# weighs open water three times, eats when hungry; a model is offered it, people can fork to it.
NEW_TYPE = r'''
import json, sys
import numpy as np
from mirofish.fish import plantypes as pt
pt.PLAN_TYPES = pt.PLAN_TYPES + (pt.PlanType(
    "drift", ticks=25, events=frozenset({"planned", "crowd", "hungry"}), steer=({"open": ("open_water", 3.0)},),
    prompt="let the water carry you", fork=("drift {ticks}",), words=("drift", "carried"), deed="worked",
    utility="2 * curiosity * (1 - company) - 0.3", ends="walls >= 6"),)

from mirofish.brains import prompt
from mirofish.config import load_config
from mirofish.fish import plans
from mirofish.observe.worddeed import word_verdict
from mirofish.world import World

g = plans.code("drift")
out = {"goal": g, "describe": plans.describe(g, 0, 25), "parsed": plans.parse_plan("drift 40"),
       "fork": list(plans.fork_plans()), "in_prompt": "drift - let the water carry you" in prompt.PLAN_PROMPT,
       "schema": prompt.PLAN_REPLY_SCHEMA["properties"]["goal"]["enum"],
       "reply": prompt.parse_plan_reply('{"goal": "drift", "thought": "carried along"}').plan(10000),
       "word": word_verdict(g, 0, "I let the current drift me")}
world = World(load_config(seed=3, **{"fish.count": 30}))
world.apply_plans(np.arange(30), np.full(30, g, np.int8), np.zeros(30, np.int16), np.full(30, 25, np.int16))
moves = 0
for _ in range(20):
    moves += int(np.count_nonzero(world.step().executed < 4))
out["hash"] = world.state_hash()
out["moves"] = moves
out["kernel"] = world.tick_kernel
out["still_drifting"] = int(np.count_nonzero(world.school.plan_goal == g))
# the instinct planner chooses it by its formula, and its "ends" predicate ends it
from mirofish.fish.triggers import T_PLAN_DONE
from mirofish.session import LiveSession
s = LiveSession(load_config(seed=4, **{"fish.count": 40, "brain.decides": "plan"}))
chosen = done = 0
for _ in range(300):
    before = s.world.school.plan_goal.copy()
    s.step()
    now = s.world.school.plan_goal
    chosen += int(np.count_nonzero((now == g) & (before != g)))
    done += int(np.count_nonzero(s.world.school.plan_trigger == T_PLAN_DONE))
out["chosen"], out["done"], out["session_hash"] = chosen, done, s.state_hash()
print(json.dumps(out))
'''


def _run_new_type(env_tick: str) -> dict:
    env = {**os.environ, "MIROFISH_TICK": env_tick}
    done = subprocess.run([sys.executable, "-c", NEW_TYPE], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_new_plan_type_is_one_row_and_swims_in_both_ticks():
    compiled, numpy_tick = _run_new_type("compiled"), _run_new_type("numpy")
    assert compiled["kernel"] == "compiled" and numpy_tick["kernel"] == "numpy"
    assert compiled["goal"] == len(plantypes.PLAN_TYPES)  # after the shipped ones
    assert compiled["describe"] == "drift for 25 ticks" and compiled["parsed"] == [compiled["goal"], 0, 40]
    assert "drift 25" in compiled["fork"] and compiled["in_prompt"] and "drift" in compiled["schema"]
    assert compiled["reply"] == [compiled["goal"], 0, 25] and compiled["word"] is True
    # the body swims it (open water weighs more: the fish move), the same world in C and numpy
    assert compiled["moves"] > 300 and compiled["still_drifting"] > 0
    assert compiled["hash"] == numpy_tick["hash"] and compiled["moves"] == numpy_tick["moves"]
    # its utility formula gets it chosen by the instinct planner, its "ends" predicate ends it,
    # and the compiled planner and tick decide exactly as the numpy ones
    assert compiled["chosen"] >= 10 and compiled["done"] >= 3, compiled
    assert compiled["session_hash"] == numpy_tick["session_hash"]


def test_steering_rows_follow_the_table():
    from mirofish.config import load_config

    cfg = load_config().steering
    table = GOAL_ROWS.table(cfg)
    away = plans.code("keep_away")
    glass = GOAL_ROWS.row(np.array([away]), np.array([plantypes.AWAY_NAMES.index("glass")]))[0]
    assert table[glass, TERMS.index("glass")] == -4.0 * cfg.wall and table[glass, TERMS.index("cohesion")] == 0.0
    crowd = GOAL_ROWS.row(np.array([away, away]), np.array([0, 9]))  # any other value: the first variant
    assert (crowd == GOAL_ROWS.start[away]).all()
    school = GOAL_ROWS.row(np.array([plans.code("school")]), np.array([0]))[0]
    assert table[school, TERMS.index("align")] == cfg.alignment
