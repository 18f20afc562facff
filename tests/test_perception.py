from conftest import arrange, small_config

from mirofish.fish.perception import render_view
from mirofish.world import World


def test_view_is_the_exact_5x5_text():
    # Tank 12×12 with 2 cells of glass: open water is x, y in 2..9.
    w = arrange(World(small_config(3)), fish_xy=[(3, 3), (4, 2), (5, 5)], food_xy=[(2, 4), (3, 3)])
    w.school.heading[:] = [0, 3, 1]  # fish 1 faces east, fish 2 south
    w.look()
    p = w.perceive(0)
    assert p.view == "\n".join([
        "#####",  # y=1: glass
        "#..>.",  # y=2: glass at x=1, another fish at (4,2) facing east
        "#.@..",  # y=3: self at centre; food under self is hidden by '@'
        "#F...",  # y=4: food at (2,4)
        "#...v",  # y=5: the fish at (5,5) facing south, the window's corner
    ])
    assert p.food_here is True
    assert "1" not in p.view and "2" not in p.view  # no ids, only the way each fish faces
    w.school.heading[1] = 0  # it turns north: the view shows it
    w.look()
    assert w.perceive(0).view.split("\n")[1] == "#..^."


def test_off_grid_is_wall_and_text_has_state_and_memories():
    # A 1-cell margin lets a fish stand 1 cell from the edge: cells beyond the tank are '#'.
    w = arrange(World(small_config(1, **{"world.wall_margin": 1})), fish_xy=[(1, 1)])
    p = w.perceive(0)
    rows = p.view.split("\n")
    assert rows[0] == "#####" and rows[1] == "#####" and rows[2].startswith("##@")
    text = p.text()
    assert "energy:" in text and "age:" in text and "memories:" in text


def test_render_view_alphabet():
    assert render_view([0, 1, 2, 4, 3, 5, 6, 7, 0]) == ".#F\n^@v\n<>."


def test_memories_reach_the_perception():
    w = arrange(World(small_config(2)), fish_xy=[(3, 3), (4, 3)])
    from conftest import set_intents

    from mirofish.actions import Action

    set_intents(w, [Action.MOVE_E, Action.REST])  # fish 0 walks into resting fish 1
    w.step()
    assert any("move refused (east)" in m for m in w.perceive(0).memories)
    assert all(m.startswith("t") for m in w.perceive(0).memories)
