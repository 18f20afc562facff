"""The acceptance figures, measured on full default tanks (60 fish)."""

import pytest

from mirofish.config import load_config
from mirofish.session import LiveSession
from mirofish.session.studies import schooling_run

SEEDS = (1, 2, 3)


def _run(seed: int, ticks: int):
    return schooling_run(load_config(seed=seed), ticks)


@pytest.fixture(scope="module")
def runs():
    return {seed: _run(seed, 8000) for seed in SEEDS}


@pytest.mark.parametrize("seed", SEEDS)
def test_no_jams_in_8000_ticks(runs, seed):
    eng, _ = runs[seed]
    assert int(eng.world.school.max_stuck.max()) <= 6


@pytest.mark.parametrize("seed", SEEDS)
def test_schooling_emerges_without_a_schooling_rule(runs, seed):
    """Moving schools and their alignment grow over the run (fish only see where others face)."""
    _, fig = runs[seed]
    assert fig["schooling_last1000"] > 1.5 * fig["schooling_first100"], fig
    # the largest cluster doubles and stays aligned well beyond what chance gives a group of
    # its size (alignment sets in within the first 100 ticks already: see docs/schools.md)
    assert fig["cluster_size_last1000"] > 1.5 * fig["cluster_size_first100"], fig
    assert fig["alignment_last1000"] >= 0.4 and fig["alignment_last1000"] >= fig["alignment_first100"] - 0.02, fig


@pytest.mark.parametrize("seed", SEEDS)
def test_hunger_is_felt_but_the_tank_is_sustainable(runs, seed):
    eng, _ = runs[seed]
    s = eng.world.school
    rest_share = s.action_counts[:, 5].sum() / s.action_counts.sum()
    # (0.09: since a meal that leaves a fish hungry no longer ends its forage plan, fish rest a
    # little less — 9.7 % at seed 1, was 10–12 %; docs/model-brain.md "Plans that last")
    assert 0.09 <= rest_share <= 0.30
    assert eng.world.low_energy_count() < 6  # fewer than 10 % of 60 fish below 20 energy
    assert 30 < s.energy.mean() / 100 < 85  # neither starving nor sated


@pytest.mark.soak
@pytest.mark.parametrize("seed", (7, 1))
def test_six_simulated_hours_do_not_collapse(seed):
    eng = LiveSession(load_config(seed=seed))
    for _ in range(43_200):
        eng.step()
    assert eng.world.low_energy_count() < 6
    assert eng.metrics.summary()["heartbeat"]["alert"] is False
