"""The arbiter's documented rules, each on a hand-made scene."""

import numpy as np
from conftest import arrange, set_intents, small_config

from mirofish import arbiter
from mirofish.actions import Action
from mirofish.world import World

N, S, W, E, EAT, REST = (Action.MOVE_N, Action.MOVE_S, Action.MOVE_W, Action.MOVE_E, Action.EAT, Action.REST)


def xy(world, i):
    x, y = world.water.xy(world.school.cell[i])
    return int(x), int(y)


def scene(fish_xy, intents, energy=None, age=None, food_xy=(), tick=0, **cfg):
    w = World(small_config(len(fish_xy), **cfg))
    w.tick = tick
    arrange(w, fish_xy, food_xy, energy=energy, age=age)
    set_intents(w, intents)
    return w


def test_contested_cell_goes_to_the_higher_score():
    # (4,4) is wanted by fish 0 from the west and fish 1 from the east; fish 1 is stronger.
    w = scene([(3, 4), (5, 4)], [E, W], energy=np.array([5000, 9000]), age=np.array([100, 100]))
    out = w.step()
    assert xy(w, 1) == (4, 4) and xy(w, 0) == (3, 4)
    assert list(out.move_outcome) == [arbiter.CROWDED, arbiter.MOVED]
    assert w.school.stuck[0] == 1 and w.school.stuck[1] == 0
    assert any("move refused (east)" in m for m in w.school.memory.lines(0))


def test_ties_are_broken_by_tick_and_id_not_by_order():
    wins = [0, 0]
    for tick in range(64):
        w = scene([(3, 4), (5, 4)], [E, W], energy=np.array([5000, 5000]), age=np.array([10, 10]), tick=tick)
        w.step()
        wins[0 if xy(w, 0) == (4, 4) else 1] += 1
    assert sum(wins) == 64 and min(wins) > 12  # each fish wins a fair share of ties


def test_mover_is_refused_when_occupant_stays():
    w = scene([(3, 4), (4, 4)], [E, REST])
    w.step()
    assert xy(w, 0) == (3, 4) and w.school.stuck[0] == 1


def test_mover_follows_an_occupant_that_leaves():
    # A chain: 0 → 1's cell, 1 → 2's cell, 2 → free water. All three move.
    w = scene([(3, 4), (4, 4), (5, 4)], [E, E, E])
    w.step()
    assert [xy(w, i) for i in range(3)] == [(4, 4), (5, 4), (6, 4)]
    assert (w.school.stuck == 0).all()


def test_chain_behind_a_blocked_leader_is_refused():
    w = scene([(3, 4), (4, 4), (5, 4)], [E, E, REST])
    w.step()
    assert [xy(w, i) for i in range(3)] == [(3, 4), (4, 4), (5, 4)]
    assert list(w.school.stuck) == [1, 1, 0]


def test_head_on_swap_is_refused():
    w = scene([(3, 4), (4, 4)], [E, W])
    w.step()
    assert xy(w, 0) == (3, 4) and xy(w, 1) == (4, 4)


def test_rotation_in_a_square_is_refused():
    # 0:(3,3)→E, 1:(4,3)→S, 2:(4,4)→W, 3:(3,4)→N — a 4-cycle; fish do not pass through each other.
    w = scene([(3, 3), (4, 3), (4, 4), (3, 4)], [E, S, W, N])
    w.step()
    assert [xy(w, i) for i in range(4)] == [(3, 3), (4, 3), (4, 4), (3, 4)]


def test_glass_blocks_and_is_remembered():
    w = scene([(2, 4)], [W])  # x=1 is glass
    out = w.step()
    assert xy(w, 0) == (2, 4) and w.school.stuck[0] == 1 and out.move_outcome[0] == arbiter.BLOCKED
    assert "bumped into a wall going west" in w.school.memory.lines(0)[-1]


def test_stuck_resets_on_a_successful_move():
    w = scene([(3, 4), (4, 4)], [E, REST])
    w.step()
    w.step()
    assert w.school.stuck[0] == 2
    set_intents(w, [S, REST])
    w.step()
    assert w.school.stuck[0] == 0 and w.school.max_stuck[0] == 2


def test_one_food_many_eaters_one_winner():
    # Food at (4,4); fish on three sides; the oldest (same energy) eats, the others find it taken.
    w = scene([(3, 4), (5, 4), (4, 3)], [EAT, EAT, EAT], energy=np.array([5000] * 3),
              age=np.array([100, 900, 300]), food_xy=[(4, 4)])
    out = w.step()
    assert out.ate.tolist() == [False, True, False]
    assert w.water.food_cells().size == 0
    for i in (0, 2):
        assert w.school.memory.lines(i)[-1].endswith("food taken by another fish") or any(
            "food taken" in m for m in w.school.memory.lines(i))
    assert w.school.energy[1] == 5000 - 15 - 10 + 4000


def test_eating_own_cell_first_and_nothing_to_eat():
    w = scene([(4, 4), (7, 7)], [EAT, EAT], food_xy=[(4, 4), (4, 5)])
    w.step()
    assert not w.water.has_food()[w.water.cell(4, 4)] and w.water.has_food()[w.water.cell(4, 5)]
    assert any("nothing to eat" in m for m in w.school.memory.lines(1))


def test_exhausted_fish_can_only_rest():
    w = scene([(4, 4)], [E], energy=np.array([0]))
    out = w.step()
    assert xy(w, 0) == (4, 4) and out.executed[0] == REST
    assert w.school.energy[0] == 5  # rest +0.20 − decay 0.15, below the rest ceiling


def test_energy_bookkeeping_in_hundredths():
    w = scene([(4, 4), (6, 6)], [E, REST], energy=np.array([8000, 8000]))
    w.step()
    assert w.school.energy.tolist() == [8000 - 15 - 30, 8000 - 15]  # resting above the ceiling: decay only
