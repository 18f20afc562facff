"""Event-driven decisions: triggers, the hard timeout and standing intents (DESIGN §2)."""

import numpy as np

from mirofish.actions import Action
from mirofish.brains.base import TIER_INDEX, DecisionBatch, InlineSource
from mirofish.engine import Engine
from mirofish.world import T_ACTION_FAILED, T_FOOD_ROSE, T_LOW_ENERGY, T_NEIGHBOURS, T_TIMEOUT, World

from conftest import arrange, small_config


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
    w = arrange(World(small_config(1, **{"world.width": 40, "world.height": 40})), fish_xy=[(5, 20)],
                energy=np.array([9000]))
    src = Scripted(Action.REST)
    eng = Engine(w, src)
    eng.run(40)
    ticks = [t for t, _, _ in src.asked]
    assert ticks == [0, 12, 24, 36]  # first decision, then every 12 ticks
    assert all(trig == T_TIMEOUT for _, _, trig in src.asked)


def test_standing_move_intent_continues_until_an_event():
    w = arrange(World(small_config(1, **{"world.width": 40, "world.height": 12})), fish_xy=[(5, 5)],
                energy=np.array([9000]))
    src = Scripted(Action.MOVE_E)
    eng = Engine(w, src)
    eng.run(12)
    x, _ = w.water.xy(w.school.cell[0])
    assert x == 17 and len(src.asked) == 1  # twelve steps east on one decision


def test_refusal_food_neighbours_and_low_energy_trigger_decisions():
    w = arrange(World(small_config(2)), fish_xy=[(2, 4), (8, 8)], energy=np.array([9000, 9000]))
    w.apply_decisions(np.array([0, 1]), np.array([Action.MOVE_W, Action.REST], np.int8))
    w.step()  # fish 0 bumps into glass
    assert w.triggers()[0] == T_ACTION_FAILED

    w = arrange(World(small_config(2)), fish_xy=[(3, 3), (8, 8)], energy=np.array([9000, 9000]))
    w.apply_decisions(np.array([0, 1]), np.array([Action.REST, Action.REST], np.int8))
    w.water.food_born[w.water.cell(4, 4)] = 0  # food appears in fish 0's view
    w.step()
    trig = w.triggers()
    assert trig[0] == T_FOOD_ROSE and trig[1] == -1

    w = arrange(World(small_config(2)), fish_xy=[(3, 3), (6, 3)], energy=np.array([9000, 9000]))
    w.apply_decisions(np.array([0, 1]), np.array([Action.REST, Action.MOVE_W], np.int8))
    w.step()  # fish 1 comes into view of fish 0 and vice versa
    assert (w.triggers() == T_NEIGHBOURS).all()

    w = arrange(World(small_config(1)), fish_xy=[(5, 5)], energy=np.array([2400]))
    w.apply_decisions(np.array([0]), np.array([Action.REST], np.int8))
    assert w.triggers()[0] == T_LOW_ENERGY


def test_decisions_are_rarer_than_ticks_in_a_default_tank():
    from mirofish.config import load_config
    from mirofish.engine import make_engine

    eng = make_engine(load_config())
    eng.run(500)
    per_fish_tick = eng.world.school.decisions.sum() / (60 * 500)
    assert per_fish_tick < 0.7  # event-driven: most ticks reuse the standing intent
