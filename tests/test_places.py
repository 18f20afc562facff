"""Environmental memory: places where a fish ate, the ``return`` plan, and territory measures."""

from __future__ import annotations

import numpy as np
import pytest

from mirofish.config import load_config
from mirofish.fish import places as P
from mirofish.fish.plans import Goal, describe, parse_plan
from mirofish.session import LiveSession, ReplaySession


def test_a_meal_near_a_place_counts_there_and_a_return_needs_time_away():
    p = P.Places(2, 2)
    p.remember(np.array([0]), np.array([10]), np.array([10]), tick=100)
    p.remember(np.array([0]), np.array([12]), np.array([8]), tick=120)  # within 3 cells, 20 ticks later
    assert (p.meals_at[0, 0], p.tick[0, 0], p.returns[0], p.meals[0]) == (2, 120, 0, 2)  # a patch, not a return
    p.remember(np.array([0]), np.array([9]), np.array([11]), tick=200)  # 80 ticks later: back
    assert (p.meals_at[0, 0], p.returns[0]) == (3, 1)
    p.remember(np.array([0]), np.array([40]), np.array([30]), tick=210)  # far: a new place
    p.remember(np.array([0]), np.array([70]), np.array([5]), tick=220)  # no room: over the one with fewest meals
    assert p.meals_at[0].tolist() == [3, 1] and (p.x[0, 1], p.y[0, 1], p.tick[0, 1]) == (70, 5, 220)
    assert p.best(np.array([0, 1])).tolist() == [0, -1]
    assert p.describe(0) == "#0 (10,10) 3 meals t200; #1 (70,5) 1 meal t220"
    assert p.describe(0, here=(14, 10), now=260).startswith("#0 4 west, 3 meals, last 60 ticks ago")


def test_return_reads_and_writes_as_a_plan():
    assert parse_plan("return 2 30") == (int(Goal.RETURN), 2, 30)
    assert parse_plan(describe(int(Goal.RETURN), 1, 45)) == (int(Goal.RETURN), 1, 45)


def _fidelity(revisit: float, seeds=(1, 2, 3), ticks=1500) -> tuple[int, int, int]:
    meals = returns = chosen = 0
    for seed in seeds:
        live = LiveSession(load_config(seed=seed, **{"fish.places": 4, "brain.planner.revisit": revisit}))
        for _ in range(ticks):
            f = live.step()
            chosen += sum(int(np.count_nonzero(b.goals == Goal.RETURN)) for b in f.applied)
        meals += int(live.world.places.meals.sum())
        returns += int(live.world.places.returns.sum())
    return meals, returns, chosen


def test_fish_that_use_their_memory_come_back_to_where_they_ate_more_often():
    """The same tanks, places remembered in both; only in one may the planner choose to return.
    Fish that do come back to a place where they ate more often than fish that don't."""
    m_on, r_on, chosen_on = _fidelity(12.0)
    m_off, r_off, chosen_off = _fidelity(0.0)
    assert chosen_off == 0 and chosen_on > 100
    assert r_on / m_on > 1.2 * (r_off / m_off), (r_on / m_on, r_off / m_off)


def test_places_are_in_the_state_keyframes_and_a_recording_replays_exactly(tmp_path):
    cfg = load_config(seed=4, **{"fish.places": 3, "record.keyframe_every": 100})
    live = LiveSession(cfg)
    live.start_recording(tmp_path / "p.db")
    hashes = {}
    for _ in range(450):
        live.step()
        hashes[live.tick] = live.state_hash()
    assert live.world.places.meals.sum() > 0
    live.close()
    plain = LiveSession(load_config(seed=4))
    plain.run(450)
    assert plain.state_hash() != hashes[450]  # the places are part of the state
    replay = ReplaySession(tmp_path / "p.db")
    for t in (150, 330, 450):
        replay.seek(t)
        assert replay.state_hash() == hashes[t], t
    replay.close()


def test_a_model_is_told_its_places_and_offered_return():
    from mirofish.brains.prompt import fitting_choices, plan_message

    live = LiveSession(load_config(seed=2, **{"fish.places": 4}))
    live.run(600)
    w = live.world
    fish = int(np.flatnonzero(w.places.meals_at.sum(axis=1) > 0)[0])
    p = w.perceive(fish)
    text = plan_message(p, "a calm fish", "timeout")
    assert "Places you ate at: #" in text and "ticks ago" in text and 'return {"place": #}' in text
    assert "return" in fitting_choices(p.view, p.places)[0] and "return" not in fitting_choices(p.view)[0]


def test_territory_figures_are_in_the_summary_only_with_places():
    from mirofish.session.headless import summarize_run

    on = LiveSession(load_config(seed=1, **{"fish.places": 4}))
    on.run(400)
    m = summarize_run(on, 400, 1.0)["metrics"]
    assert 0 < m["home_range"]["current"] < 96 * 54 and 0 <= m["range_overlap"]["current"] <= 1
    assert 0 <= m["territoriality"]["current"] <= m["site_fidelity"]["current"] <= 1
    off = LiveSession(load_config(seed=1))
    off.run(50)
    assert "home_range" not in summarize_run(off, 50, 1.0)["metrics"]


@pytest.mark.parametrize("seed", [1, 5])
def test_the_compiled_tick_and_planner_agree_with_the_numpy_ones_with_places(seed):
    cfg = load_config(seed=seed, **{"fish.places": 4, "brain.planner.revisit": 12.0})
    fast, ref = LiveSession(cfg), LiveSession(cfg)
    ref.world._kernel = None
    ref.engine.source._kernel = None
    returns = 0
    for _ in range(700):
        f = fast.step()
        ref.step()
        returns += sum(int(np.count_nonzero(b.goals == Goal.RETURN)) for b in f.applied)
        assert fast.state_hash() == ref.state_hash(), fast.tick
    assert returns > 10


def test_the_terminal_view_marks_a_fish_s_places_on_request_and_the_charts_show_territory(tmp_path):
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "600", "--ascii", "600",
                           "--select", "5", "--set", "fish.places=4"], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))), timeout=120)
    assert done.returncode == 0, done.stderr
    tank = "\n".join(done.stdout.splitlines()[:54])
    live = LiveSession(load_config(seed=7, **{"fish.places": 4}))
    live.run(600)
    p = live.world.places
    for j in np.flatnonzero(p.meals_at[5] > 0):  # each remembered place of fish 5, as its digit (unless covered)
        ch = tank.splitlines()[p.y[5, j]][p.x[5, j]]
        assert ch in (str(j), "%", "^", "v", "<", ">", "x")
    assert any(str(j) in tank for j in np.flatnonzero(p.meals_at[5] > 0))

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import pygame

    from mirofish.ui.charts import Series, draw_charts

    series = Series()
    series.add(10, live.metrics_summary())
    pygame.init()
    surf = pygame.Surface((1280, 720))
    data = {k: (np.array([t for t, _ in pts], float), np.array([v for _, v in pts]))
            for k, pts in series.points.items()}
    assert len(draw_charts(surf, surf.get_rect(), data)) == 9  # the six, and fidelity, range, overlap
