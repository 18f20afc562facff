"""Behaviour as data: a plan type's planner utility and its plan events as formulas over named
features (mirofish/fish/formula.py). The shipped "hide" row declares both; the compiled planner
draws among them with the built-in utilities exactly as the numpy one does."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from mirofish import kernel
from mirofish.brains.base import RequestBatch
from mirofish.brains.instinct import InstinctPlanner, instinct_source
from mirofish.config import load_config
from mirofish.fish import formula
from mirofish.fish.plans import CODE
from mirofish.fish.plantypes import PlanType
from mirofish.fish.triggers import T_PLAN_FAILED, trigger_name
from mirofish.session import LiveSession

HIDE = CODE["hide"]
PLANTS = {"perception.plants_seen": True, "world.width": 32, "world.height": 16, "world.plant_patches": 12,
          "world.plant_height": 9, "fish.count": 20, "brain.decides": "plan"}


def _values(**cols: list[float]) -> dict[str, np.ndarray]:
    return {name: np.array(v, np.float64) for name, v in cols.items()}


def test_a_formula_computes_what_it_says_fish_by_fish():
    v = _values(hunger=[0.0, 0.5, 1.0], caution=[0.2, 0.4, 0.9], food_seen=[0, 2, 5], visible=[3, 0, 1])
    f = formula.Formula("2 * (0.3 + caution) * (1 - hunger) - 0.1")
    assert np.allclose(f(v, 3), 2 * (0.3 + v["caution"]) * (1 - v["hunger"]) - 0.1)
    assert f.names == {"caution", "hunger"}
    assert list(formula.Formula("hunger > 0.4 and food_seen > 0", "ends")(v, 3)) == [0.0, 1.0, 1.0]
    assert list(formula.Formula("not visible or caution >= 0.9", "fails")(v, 3)) == [0.0, 1.0, 1.0]
    assert list(formula.Formula("clip(food_seen, 1, 3) + min(visible, 1) + abs(-2)")(v, 3)) == [4.0, 4.0, 6.0]
    assert list(formula.Formula("1 if visible > 2 else -1")(v, 3)) == [1.0, -1.0, -1.0]
    assert list(formula.Formula("food_seen / visible")(v, 3)) == [0.0, 0.0, 5.0]  # 2/0 counts 0, never inf
    assert formula.Formula("0.5")(v, 3).shape == (3,)


@pytest.mark.parametrize(("text", "context", "problem"), [
    ("hunger + speed", "utility", "unknown name 'speed'"),
    ("plan_ticks > 3", "utility", "unknown name 'plan_ticks'"),  # the planner does not see the plan
    ("__import__('os')", "utility", "call of __import__ is not allowed"),
    ("hunger.real", "utility", "Attribute (hunger.real) is not allowed"),
    ("hunger ** 2", "utility", "Pow (hunger ** 2) is not allowed"),
    ("min(hunger)", "utility", "min() takes 2 arguments"),
    ("hunger >", "ends", "does not parse"),
])
def test_a_bad_formula_is_refused_in_one_line_naming_it(text, context, problem):
    with pytest.raises(formula.FormulaError, match=re.escape(problem)) as err:
        formula.Formula(text, context)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=f"plan type sulk: {context}"):
        PlanType("sulk", prompt="sulk", **{context: text})


def test_a_built_in_choice_needs_its_formula_and_a_parameter_needs_a_built_in_choice():
    with pytest.raises(ValueError, match="needs its utility formula"):
        PlanType("graze", prompt="graze", planner="forage", planner_weight="forage", planner_ticks="forage_ticks")
    with pytest.raises(ValueError, match="no direction parameter"):
        PlanType("graze", param="direction", prompt="graze", utility="hunger")
    PlanType("graze", param="direction", prompt="graze", planner="explore", planner_weight="explore",
             planner_ticks="explore_ticks", utility="weight * curiosity")  # the choice picks the way


def test_the_shipped_utilities_are_their_rows_formulas():
    """The five built-in utilities are data: each row's formula, the compiled planner running it
    as a program (no utility is written in C), numpy as arrays."""
    from mirofish.brains.instinct import PLANNER_TYPES

    assert [t.name for t in PLANNER_TYPES[:5]] == ["forage", "school", "explore", "rest", "keep_away"]
    assert all(t.utility for t in PLANNER_TYPES[:5]) and PLANNER_TYPES[5].utility is None  # return: from places
    source = (Path(kernel.__file__).parent / "_tick.c").read_text()
    plan_body = source[source.index("static PyObject *plan(PyObject *self"):source.index("--- ask */")]
    assert "appetite" not in plan_body and "(0.5 + app)" not in plan_body  # forage's formula lives in its row


FORMULA_TEXTS = [
    "weight * (0.5 + appetite) * hunger * (1.5 + 0.5 * (food_seen > 0)) + 6 * low + 2 * hungry_food",
    "-1000000000 if hungry_food else weight * (calm - 0.4 - 3 * hunger - 0.3 * company)"
    " + 4 * (rest_low and food_seen == 0)",
    "visible / (food_seen - food_seen)",  # 0/0 and x/0: not finite, so 0
    "min(visible / food_seen, crowd) + max(0 / walls, -1)",  # NaN through min and max
    "clip(energy * 3 - 1, -0.5, hunger) - abs(caution - calm)",
    "(visible == 0 or walls != 2) and not prey_seen >= 1 and plants_seen < 2",
    "+company - -crowd * (1 if low else 2 if hunger > 0.5 else 3)",
    "max(min(sociability, curiosity), clip(appetite, 0.2, 0.4)) / (weight - 1)",
]


@pytest.mark.skipif(kernel.compiled_tick() is None, reason="the compiled tick is not built (MIROFISH_TICK=numpy)")
def test_a_compiled_formula_gives_numpys_doubles_exactly():
    """A formula run by the compiled tick (its program) and by numpy gives the same double, bit for
    bit, over random features — NaN and division by zero included."""
    compiled = kernel.compiled_tick()
    assert compiled is not None
    assert tuple(compiled.FORMULA_OPS) == formula.OPS
    features = tuple(compiled.FORMULA_FEATURES)
    assert set(features) == set(formula.PLANNER_FEATURES)
    rng = np.random.default_rng(7)
    rows = 400
    cols = {name: rng.choice([0.0, 1.0, 2.0, 3.0, rng.random(), -rng.random()], rows).astype(np.float64)
            for name in features}
    for text in FORMULA_TEXTS:
        f = formula.Formula(text)
        weight = 1.25
        want = f({**cols, formula.WEIGHT: np.float64(weight)}, rows)
        ops, args = formula.program(f, features, {formula.WEIGHT: weight})
        got = np.array([compiled.formula(ops, args, np.array([cols[n][i] for n in features])) for i in range(rows)])
        assert got.tobytes() == want.tobytes(), text
    with pytest.raises(ValueError, match="op"):
        compiled.formula(np.array([99], np.int8), np.zeros(1), np.zeros(len(features)))
    with pytest.raises(ValueError, match=r"stack|one value"):
        compiled.formula(np.array([formula.OPS.index("add")], np.int8), np.zeros(1), np.zeros(len(features)))


def test_the_features_table_in_the_docs_is_the_one_formulas_read():
    from pathlib import Path

    docs = (Path(__file__).resolve().parent.parent / "docs" / "extending.md").read_text()
    assert formula.feature_doc() in docs


def _planned_goals(seed: int, settings: dict, ticks: int) -> tuple[np.ndarray, str]:
    s = LiveSession(load_config(seed=seed, **settings))
    counts = np.zeros(len(CODE), np.int64)
    for _ in range(ticks):
        s.step()
        decided = s.world.school.last_decision == s.world.tick - 1
        counts += np.bincount(s.world.school.plan_goal[decided], minlength=len(CODE))
    return counts, s.state_hash()


def test_the_instinct_planner_chooses_hide_by_its_formula_only_where_plants_are_shown():
    shown = sum(_planned_goals(seed, PLANTS, 400)[0][HIDE] for seed in (1, 2, 3))
    unseen = sum(_planned_goals(seed, {**PLANTS, "perception.plants_seen": False}, 400)[0][HIDE] for seed in (1, 2, 3))
    assert shown >= 5 and unseen == 0, (shown, unseen)
    # hidden plants: the planner has no formula to draw, so it decides exactly as before hide had one
    assert not instinct_source(load_config(**{**PLANTS, "perception.plants_seen": False})).formulas


@pytest.mark.skipif(kernel.compiled_tick() is None, reason="needs the compiled tick (built by pip install)")
@pytest.mark.parametrize("settings", [PLANTS, {**PLANTS, "fish.places": 3}])
def test_the_compiled_planner_draws_among_formulas_exactly_as_numpy(settings):
    """Requests from a planted tank (with places too: return's 'no place' alongside a formula)."""
    cfg = load_config(seed=5, **settings)
    s = LiveSession(cfg)
    fast = instinct_source(cfg)
    ref = instinct_source(cfg)
    assert isinstance(fast, InstinctPlanner) and isinstance(ref, InstinctPlanner) and fast.formulas
    ref._kernel = None
    picked = np.zeros(len(CODE), np.int64)
    for _ in range(300):
        s.step()
        fish = np.arange(s.world.school.n)
        batch = RequestBatch(tick=s.world.tick, fish=fish, triggers=np.zeros(fish.size, np.int8),
                  codes=s.world.view_codes(fish), energy=s.world.school.energy.copy(),
                  max_energy=s.world.max_energy, heading=s.world.school.heading.copy(),
                  traits=s.world.school.traits.copy(), food_here=np.zeros(fish.size, bool),
                  refused=np.zeros((fish.size, 4), bool), places=s.world.place_options(fish),
                  plants=s.world.plants_shown(fish))
        a, r = fast.decide(batch), ref.decide(batch)
        assert np.array_equal(a.goals, r.goals) and np.array_equal(a.params, r.params)
        assert np.array_equal(np.asarray(a.horizons, np.int64), np.asarray(r.horizons, np.int64))
        picked += np.bincount(a.goals, minlength=len(CODE))
    assert picked[HIDE] > 0  # the formula's column was drawn, not only carried
    if "fish.places" in settings:
        assert picked[CODE["return"]] > 0


def test_hiding_with_no_plant_in_view_fails_by_its_predicate_and_the_fish_plans_again():
    s = LiveSession(load_config(seed=2, **PLANTS))
    w = s.world
    blind = np.array([i for i in range(w.school.n) if "P" not in w.perceive(i).view])
    assert blind.size
    w.apply_plans(blind, np.full(blind.size, HIDE, np.int8), np.zeros(blind.size, np.int16),
                  np.full(blind.size, 60, np.int16))
    for _ in range(9):
        s.step()
    still = blind[(w.school.plan_goal[blind] == HIDE) & (w.plants_shown(blind) == 0)]
    assert still.size and not np.any(w.school.plan_trigger[still] == T_PLAN_FAILED)  # not before 10 ticks
    for _ in range(3):
        s.step()
    failed = [i for i in still if w.school.last_decision[i] > 9]
    assert len(failed) >= still.size // 2, "the fish hiding in the open asked for a new plan"
    assert trigger_name(T_PLAN_FAILED) == "plan_failed"


def test_a_formula_too_long_or_too_many_is_refused_when_the_table_loads():
    for text in ("+".join(["energy"] * 3000), "energy + " * 120 + "1", "-" * 5000 + "1"):
        with pytest.raises(ValueError, match="at most") as err:
            PlanType("sulk", prompt="sulk", utility=text)
        assert "\n" not in str(err.value) and len(str(err.value)) < 300
    from mirofish.fish import plantypes

    shipped = sum(1 for t in plantypes.PLAN_TYPES if t.utility and not t.planner)  # hide and hunt (beside the six)
    many = tuple(PlanType(f"mood{i}", prompt="a mood", utility="calm") for i in range(59 - shipped))
    with pytest.raises(ValueError, match="59 plan types with a utility formula"):
        plantypes.check(plantypes.PLAN_TYPES + many)
