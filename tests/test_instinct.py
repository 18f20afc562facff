"""The action-mode instinct brain (brain.decides = "action"): tendencies weighted by
personality, a seeded softmax, never parked. Views are written with ``f`` for another fish
(here: one facing north)."""

import numpy as np

from mirofish.actions import Action
from mirofish.brains.base import RequestBatch
from mirofish.brains.instinct import InstinctBrain
from mirofish.config import load_config
from mirofish.fish.perception import VIEW_CHARS

CFG = load_config().brain.instinct


def batch(view: str, n: int = 400, energy: int = 5000, traits=(50, 50, 50, 50, 50), tick: int = 0,
          heading: int = 0, food_here: bool = False) -> RequestBatch:
    codes = np.array([VIEW_CHARS.index(ch) for ch in view.replace("\n", "").replace("f", "^")], np.int8)
    return RequestBatch(
        tick=tick, fish=np.arange(n), triggers=np.zeros(n, np.int8), codes=np.tile(codes, (n, 1)),
        energy=np.full(n, energy), max_energy=10000, heading=np.full(n, heading, np.int8),
        traits=np.tile(np.array(traits, np.int16), (n, 1)), food_here=np.full(n, food_here),
        refused=np.zeros((n, 4), bool),
    )


def shares(view: str, **kw) -> np.ndarray:
    actions = InstinctBrain(CFG, seed=1).decide(batch(view, **kw)).actions
    return np.bincount(actions, minlength=6) / len(actions)


OPEN = ".....\n.....\n..@..\n.....\n....."


def test_with_nothing_in_view_it_swims():
    for energy in (9500, 5000, 1000):
        assert shares(OPEN, energy=energy)[:4].sum() > 0.9


def test_it_never_moves_into_glass_or_another_fish():
    view = "#####\n#####\n#f@..\n#.f..\n#...."
    p = shares(view)
    assert p[Action.MOVE_N] == 0 and p[Action.MOVE_W] == 0 and p[Action.MOVE_S] == 0
    assert p[Action.MOVE_E] > 0.5


def test_hungry_fish_eats_food_beside_it():
    assert shares(".....\n.....\n..@F.\n.....\n.....", energy=2000)[Action.EAT] > 0.7
    assert shares(OPEN, energy=2000, food_here=True)[Action.EAT] > 0.7


def test_hungry_fish_heads_for_food_it_sees():
    p = shares(".....\n.....\n..@.F\n.....\n.....", energy=2500)
    assert p[Action.MOVE_E] > 0.8


def test_sociability_pulls_toward_others():
    view = ".....\n.....\n..@.f\n.....\n....."
    loner = shares(view, energy=9500, traits=(0, 50, 50, 50, 50))[Action.MOVE_E]
    social = shares(view, energy=9500, traits=(100, 50, 50, 50, 50))[Action.MOVE_E]
    assert social > loner + 0.2


def test_caution_keeps_away_from_crowded_cells():
    view = ".f.f.\n.f.f.\n..@..\n.....\n....."  # the cell north is free but hemmed in by fish
    bold = shares(view, energy=9500, traits=(50, 50, 0, 50, 50))[Action.MOVE_N]
    wary = shares(view, energy=9500, traits=(50, 50, 100, 50, 50))[Action.MOVE_N]
    assert wary < bold


def test_recently_refused_direction_is_avoided():
    b = batch(OPEN, heading=Action.MOVE_E)
    before = np.mean(InstinctBrain(CFG, 1).decide(b).actions == Action.MOVE_E)
    b.refused[:, Action.MOVE_E] = True
    after = np.mean(InstinctBrain(CFG, 1).decide(b).actions == Action.MOVE_E)
    assert after < before / 3


def test_same_request_same_answer_and_the_draw_varies_with_tick():
    a = InstinctBrain(CFG, seed=4).decide(batch(OPEN, tick=10)).actions
    b = InstinctBrain(CFG, seed=4).decide(batch(OPEN, tick=10)).actions
    c = InstinctBrain(CFG, seed=4).decide(batch(OPEN, tick=11)).actions
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_the_control_choosers_choose_what_their_names_say():
    """brain.chooser: "never_school" never plans school; "random" only plans what fits the view
    and uses every plan that fits."""
    from collections import Counter

    from mirofish.config import load_config
    from mirofish.fish.plans import GOAL_NAMES
    from mirofish.session import LiveSession

    goals = {}
    for chooser in ("instinct", "random", "never_school"):
        s = LiveSession(load_config(seed=3, **{"brain.chooser": chooser}))
        seen: Counter = Counter()
        s.engine.observers.append(lambda f, seen=seen: seen.update(GOAL_NAMES[g] for b in f.applied for g in b.goals))
        s.run(600)
        goals[chooser] = seen
    assert goals["never_school"]["school"] == 0 and goals["instinct"]["school"] > 0
    assert set(goals["random"]) == {"forage", "school", "explore", "rest", "keep_away"}
    top, low = max(goals["random"].values()), min(goals["random"].values())
    assert low > 0.1 * top
