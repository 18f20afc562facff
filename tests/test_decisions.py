"""Event-driven decisions: the seed's action-mode triggers (brain.decides = "action"), and
plan mode's triggers: plans end, fail, or meet something salient (docs/design.md §2)."""

import numpy as np
from conftest import arrange, small_config

from mirofish.actions import Action
from mirofish.brains.base import TIER_INDEX, DecisionBatch, InlineSource
from mirofish.engine import Engine
from mirofish.fish.plans import Goal
from mirofish.fish.triggers import (
    T_ACTION_FAILED,
    T_ATE,
    T_FOOD_ROSE,
    T_HORIZON,
    T_LOST_COMPANY,
    T_LOW_ENERGY,
    T_NEIGHBOURS,
    T_TIMEOUT,
)
from mirofish.world import World

ACTION = {"brain.decides": "action"}


class Scripted(InlineSource):
    """Answers every request with one fixed action and remembers who asked when."""

    def __init__(self, action):
        self.asked: list[tuple[int, int, int]] = []  # (tick, fish, trigger)
        self.action = action
        super().__init__(self._decide)

    def _decide(self, b):
        self.asked += [(b.tick, int(f), int(t)) for f, t in zip(b.fish, b.triggers)]
        return DecisionBatch(tick=b.tick, fish=b.fish, actions=np.full(len(b), self.action, np.int8),
                             tier=np.full(len(b), TIER_INDEX["instinct"], np.int8))


def test_a_calm_fish_asks_only_at_the_hard_timeout_and_keeps_its_intent():
    cfg = small_config(1, **{"world.width": 40, "world.height": 40, "brain.decides": "action"})
    w = arrange(World(cfg), fish_xy=[(5, 20)],
                energy=np.array([9000]))
    src = Scripted(Action.REST)
    eng = Engine(w, src)
    eng.run(40)
    ticks = [t for t, _, _ in src.asked]
    assert ticks == [0, 12, 24, 36]  # first decision, then every 12 ticks
    assert all(trig == T_TIMEOUT for _, _, trig in src.asked)


def test_standing_move_intent_continues_until_an_event():
    cfg = small_config(1, **{"world.width": 40, "world.height": 12, "brain.decides": "action"})
    w = arrange(World(cfg), fish_xy=[(5, 5)],
                energy=np.array([9000]))
    src = Scripted(Action.MOVE_E)
    eng = Engine(w, src)
    eng.run(12)
    x, _ = w.water.xy(w.school.cell[0])
    assert x == 17 and len(src.asked) == 1  # twelve steps east on one decision


def test_refusal_food_neighbours_and_low_energy_trigger_decisions():
    w = arrange(World(small_config(2, **ACTION)), fish_xy=[(2, 4), (8, 8)], energy=np.array([9000, 9000]))
    w.apply_decisions(np.array([0, 1]), np.array([Action.MOVE_W, Action.REST], np.int8))
    w.step()  # fish 0 bumps into glass
    assert w.triggers()[0] == T_ACTION_FAILED

    w = arrange(World(small_config(2, **ACTION)), fish_xy=[(3, 3), (8, 8)], energy=np.array([9000, 9000]))
    w.apply_decisions(np.array([0, 1]), np.array([Action.REST, Action.REST], np.int8))
    w.water.food_born[w.water.cell(4, 4)] = 0  # food appears in fish 0's view
    w.step()
    trig = w.triggers()
    assert trig[0] == T_FOOD_ROSE and trig[1] == -1

    w = arrange(World(small_config(2, **ACTION)), fish_xy=[(3, 3), (6, 3)], energy=np.array([9000, 9000]))
    w.apply_decisions(np.array([0, 1]), np.array([Action.REST, Action.MOVE_W], np.int8))
    w.step()  # fish 1 comes into view of fish 0 and vice versa
    assert (w.triggers() == T_NEIGHBOURS).all()

    w = arrange(World(small_config(1, **ACTION)), fish_xy=[(5, 5)], energy=np.array([2400]))
    w.apply_decisions(np.array([0]), np.array([Action.REST], np.int8))
    assert w.triggers()[0] == T_LOW_ENERGY


def test_plans_ask_an_order_of_magnitude_less_often_than_actions():
    from mirofish.config import load_config
    from mirofish.session import LiveSession

    rates = {}
    for mode in ("plan", "action"):
        eng = LiveSession(load_config(seed=3, **{"brain.decides": mode}))
        eng.run(1000)
        rates[mode] = eng.world.school.decisions.sum() / (60 * 1000)
    assert rates["plan"] <= 0.03  # the economy goal (docs/model-brain.md, "Economy") (the initial decisions included)
    assert rates["action"] > 5 * rates["plan"]


def plan_world(fish_xy, energy, food_xy=(), **dotted):
    return arrange(World(small_config(len(fish_xy), 20, 20, **dotted)), fish_xy=fish_xy, food_xy=food_xy,
                   energy=np.array(energy))


def test_a_forage_plan_ends_when_a_meal_has_made_the_fish_sated():
    w = plan_world([(5, 5)], [6000], food_xy=[(7, 5)])
    w.apply_plans(np.array([0]), np.array([Goal.FORAGE]), np.array([0]), np.array([60]))
    for _ in range(6):
        w.step()
        if w.triggers()[0] >= 0:
            break
    assert w.school.eats[0] == 1 and w.triggers()[0] == T_ATE


def test_a_hungry_forager_forages_on_after_a_meal():
    """A meal that leaves the fish hungry does not end its plan: it goes on to the next food
    without asking its brain again (a model that always forages would otherwise ask at every
    bite); the meal that makes it sated does."""
    w = plan_world([(5, 5)], [2000], food_xy=[(7, 5), (9, 5)])
    w.apply_plans(np.array([0]), np.array([Goal.FORAGE]), np.array([0]), np.array([60]))
    eats_when_done = None
    for _ in range(12):
        w.step()
        if w.triggers()[0] == T_ATE:
            eats_when_done = int(w.school.eats[0])
            break
    assert eats_when_done == 2  # 20 → 60 (still hungry: forage on) → 100 (sated: done)


def test_a_plan_ends_at_its_horizon_and_a_school_plan_fails_when_alone():
    w = plan_world([(5, 5)], [9000])
    w.apply_plans(np.array([0]), np.array([Goal.EXPLORE]), np.array([3]), np.array([4]))
    raised = []
    for _ in range(4):
        w.step()
        raised.append(int(w.triggers()[0]))
    assert raised == [-1, -1, -1, T_HORIZON]
    x, _ = w.water.xy(w.school.cell[0])
    assert x > 5  # it explored east

    w = plan_world([(5, 5)], [9000])
    w.apply_plans(np.array([0]), np.array([Goal.SCHOOL]), np.array([0]), np.array([200]))
    for _ in range(6):
        w.step()
    assert w.triggers()[0] == T_LOST_COMPANY


def test_a_fish_never_rests_while_hungry_with_food_in_view():
    """Across a default tank: no instinct plan rests a hungry fish with food in view (resting
    then is allowed only for an exhausted fish, which cannot do anything else)."""
    from mirofish.config import load_config
    from mirofish.session import LiveSession

    eng = LiveSession(load_config(seed=5))
    w, s = eng.world, eng.world.school
    checked = 0
    for _ in range(1500):
        hungry = (s.energy < w.hungry_line) & (s.food_seen > 0) & (s.energy > 0)
        frame = eng.step()
        checked += int(hungry.sum())
        assert not (hungry & (frame.executed == Action.REST) & (s.plan_goal == Goal.REST)).any()
    assert checked > 50  # the situation did occur


def test_a_school_plan_in_company_keeps_swimming():
    """Sated fish side by side with school plans swim on together instead of resting in a heap."""
    w = plan_world([(5, 8), (5, 10), (6, 9), (4, 9)], [9000] * 4)
    w.school.heading[:] = Action.MOVE_E
    w.apply_plans(np.arange(4), np.full(4, Goal.SCHOOL), np.zeros(4), np.full(4, 100))
    moved = 0
    for _ in range(10):
        out = w.step()
        moved += int((out.move_outcome == 0).sum())
        assert not (out.executed == Action.REST).any()
    assert moved >= 30
