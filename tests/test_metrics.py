import math

import numpy as np

from mirofish.actions import Action
from mirofish.config import load_config
from mirofish.observe.metrics import entropy, neighbours_and_clusters, polarization, rotation
from mirofish.session import LiveSession


def test_entropy_of_uniform_and_single_actions():
    assert math.isclose(entropy(np.ones(6)), math.log(6))
    assert entropy(np.array([5, 0, 0, 0, 0, 0])) == 0.0


def test_polarization_aligned_vs_opposed():
    assert polarization(np.full(10, Action.MOVE_E)) == 1.0
    assert polarization(np.array([Action.MOVE_E, Action.MOVE_W] * 5)) == 0.0


def test_rotation_of_a_milling_ring():
    # Four fish around a centre, each heading counter-clockwise on screen (y down): a mill.
    xy = np.array([[5, 0], [10, 5], [5, 10], [0, 5]], float)
    heading = np.array([Action.MOVE_W, Action.MOVE_N, Action.MOVE_E, Action.MOVE_S])
    assert math.isclose(rotation(xy, heading), 1.0)
    assert polarization(heading) == 0.0
    parallel = np.full(4, Action.MOVE_E)
    assert rotation(xy, parallel) < 1e-9


def test_nearest_neighbour_and_clusters():
    xy = np.array([[0, 0], [1, 0], [2, 2], [10, 10], [30, 30], [31, 31]], float)
    nnd, clusters, largest = neighbours_and_clusters(xy)
    assert clusters == 2 and largest == 3  # {0,1,2} chained within 2 cells, {4,5}; 3 alone
    assert math.isclose(nnd, (1 + 1 + math.hypot(1, 2) + math.hypot(8, 8) + math.sqrt(2) * 2) / 6)


def test_live_metrics_are_in_range_and_wired():
    eng = LiveSession(load_config(seed=5))
    eng.run(300)
    summary = eng.metrics.summary()
    six = ("action_entropy", "conflict_rate", "schooling_degree", "tokens_per_decision",
           "decision_latency_p95_ms", "fallback_rate")
    for key in six:
        assert set(summary[key]) == {"current", "mean"}
    assert 1.0 < summary["action_entropy"]["current"] <= math.log(6)
    assert 0 <= summary["conflict_rate"]["current"] < 0.2
    assert summary["tokens_per_decision"]["current"] == 0.0 and summary["fallback_rate"]["current"] == 0.0
    assert summary["decision_latency_p95_ms"]["current"] > 0.0  # measured, even if tiny
    assert summary["heartbeat"]["alert"] is False
    assert eng.metrics.decisions_by_tier()["instinct"] == eng.world.school.decisions.sum()


def test_heartbeat_alert_when_nobody_moves():
    from mirofish.brains.base import TIER_INDEX, DecisionBatch, InlineSource

    def rest(b):
        return DecisionBatch(tick=b.tick, fish=b.fish, actions=np.full(len(b), Action.REST, np.int8),
                             tier=np.full(len(b), TIER_INDEX["instinct"], np.int8))

    eng = LiveSession(load_config(**{"fish.count": 4}), source=InlineSource(rest))
    eng.run(19)
    assert not eng.metrics.heartbeat_alert
    eng.run(1)
    assert eng.metrics.heartbeat_alert
    assert any("heartbeat" in a for a in eng.metrics.summary()["alerts"])


def test_stuck_hotspots_point_at_refusals():
    eng = LiveSession(load_config(seed=8))
    eng.run(500)
    spots = eng.metrics.hotspots()
    assert spots and spots[0]["stuck_events"] >= spots[-1]["stuck_events"] > 0


def test_grid_path_agrees_with_all_pairs():
    from mirofish.observe.metrics import _grid_neighbours_and_clusters

    rng = np.random.default_rng(3)
    xy = np.unique(rng.integers(0, 120, (700, 2)), axis=0)[:500].astype(float)
    grid = _grid_neighbours_and_clusters(xy.astype(np.int64), 2)
    # The all-pairs path, forced by splitting the fish into chunks of the same computation.
    import mirofish.observe.metrics as m

    n = len(xy)
    dx = np.abs(xy[:, None, 0] - xy[None, :, 0])
    dy = np.abs(xy[:, None, 1] - xy[None, :, 1])
    d2 = dx * dx + dy * dy
    np.fill_diagonal(d2, np.inf)
    cheb = np.maximum(dx, dy)
    np.fill_diagonal(cheb, 99)
    i, j = np.nonzero(cheb <= 2)
    sizes = np.bincount(m._components(n, i, j), minlength=n)
    assert math.isclose(grid[0], float(np.sqrt(d2.min(axis=1)).mean()))
    gsizes = np.bincount(grid[1], minlength=n)
    assert (int((gsizes >= 2).sum()), int(gsizes.max())) == (int((sizes >= 2).sum()), int(sizes.max()))


def test_jam_alert_names_the_place():
    from conftest import arrange, small_config

    from mirofish.brains.base import TIER_INDEX, DecisionBatch, InlineSource
    from mirofish.session import LiveSession
    from mirofish.world import World

    def west(b):  # a stubborn brain: always swim west
        return DecisionBatch(tick=b.tick, fish=b.fish, actions=np.full(len(b), Action.MOVE_W, np.int8),
                             tier=np.full(len(b), TIER_INDEX["instinct"], np.int8))

    world = arrange(World(small_config(2)), fish_xy=[(2, 4), (6, 6)], energy=np.array([9000, 9000]))
    eng = LiveSession(world.cfg, source=InlineSource(west), world=world)
    eng.run(12)  # fish 0 bumps into the glass at x=1 every tick
    alerts = eng.metrics.alerts()
    assert any("jam" in a and "(2, 4)" in a for a in alerts), alerts


def test_a_resting_heap_is_not_a_school_and_a_moving_group_is():
    """Schools count only if they move; polarization inside them is Couzin's order parameter."""
    from mirofish.observe.metrics import nn_and_labels, school_figures, schools

    xy = np.array([[10, 10], [11, 10], [12, 10], [10, 11], [11, 11], [30, 30], [31, 30]], float)
    _, labels = nn_and_labels(xy)
    heading = np.array([3, 3, 3, 3, 0, 1, 1])
    assert schools(labels, np.zeros(7, bool)) == []  # nobody moved: a heap
    moving = np.array([1, 1, 1, 1, 0, 1, 1], bool)
    found = schools(labels, moving)
    assert len(found) == 1 and found[0].tolist() == [0, 1, 2, 3, 4]  # the pair is too small to count
    fig = school_figures(found[0], xy, heading, moving)
    assert fig["school_size"] == 5 and fig["school_moving"] == 0.8
    assert math.isclose(fig["school_polarization"], float(np.hypot(4, -1) / 5))


def test_school_splits_and_merges_are_counted():
    from mirofish.session.studies import school_events

    whole, halves = [np.arange(1, 7)], [np.array([1, 2, 3]), np.array([4, 5, 6])]
    assert school_events(whole, halves) == (1, 0)
    assert school_events(halves, whole) == (0, 1)
    assert school_events(whole, whole) == (0, 0)
    assert school_events(whole, [np.array([1, 2, 3, 4]), np.array([5, 6, 9])]) == (0, 0)  # only two of 6 left


def test_behaviour_score_is_high_in_character_low_out_of_it_and_na_without_enough_plans():
    from mirofish.fish.personality import BEHAVIOUR_ALERT, behaviour_score

    sociable = [95, 30, 20, 40, 40]  # sociability, curiosity, caution, appetite, calm
    assert behaviour_score([0, 1, 2, 0, 0, 0], sociable) is None  # 3 plans say nothing yet
    schooling = behaviour_score([0, 3, 12, 3, 1, 0], sociable)  # mostly school: in character
    resting = behaviour_score([0, 0, 0, 0, 20, 0], sociable)  # only rest: out of character
    assert schooling > 0.8 and resting < BEHAVIOUR_ALERT < schooling


def test_a_healthy_instinct_tank_has_no_fish_out_of_character():
    from mirofish.fish.personality import BEHAVIOUR_ALERT, behaviour_score

    s = LiveSession(load_config(seed=1))
    counts = np.zeros((60, 6), np.int64)
    s.observers.append(lambda f: [np.add.at(counts, (b.fish, b.goals.astype(np.intp)), 1) for b in f.applied])
    s.run(2000)
    scores = [behaviour_score(counts[i], s.world.school.traits[i], counts.sum(axis=0)) for i in range(60)]
    assert all(x is not None and x >= BEHAVIOUR_ALERT for x in scores), min(x for x in scores if x is not None)


def test_the_nearest_neighbour_of_a_lonely_fish_is_exact():
    """Fish with nobody within 6 cells: the bucket search finds the same nearest distance as
    comparing with everyone, in sparse and crowded tanks."""
    from mirofish.observe import metrics as M

    rng = np.random.default_rng(11)
    for trial in range(20):
        size = int(rng.integers(20, 900))
        cells = rng.choice(size * size, size=min(int(rng.integers(2, 1500)), size * size), replace=False)
        xy = np.stack([cells % size, cells // size], axis=1).astype(np.int64)
        d2 = ((xy[None] - xy[:, None]) ** 2).sum(axis=2).astype(float)
        np.fill_diagonal(d2, np.inf)
        assert np.array_equal(M._far_nearest(xy, np.arange(len(xy))), np.sqrt(d2.min(axis=1))), trial


def test_the_sampled_school_and_polarization_take_shortcuts_to_the_same_figures():
    """Every 10 ticks the metrics take the largest moving school directly and polarization from
    heading counts: exactly what ranking every school and summing unit vectors give."""
    from mirofish.actions import MOVE_DXDY
    from mirofish.observe.metrics import largest_school, polarization, schools

    rng = np.random.default_rng(3)
    unit = np.array(MOVE_DXDY, np.float64)
    found_any = 0
    for _ in range(300):
        n = int(rng.integers(0, 80))
        heading = rng.integers(0, 4, n).astype(np.int8)
        assert polarization(heading) == float(np.hypot(*unit[heading].sum(axis=0)) / max(1, n))
        if n < 2:
            continue
        labels = np.minimum(rng.integers(0, max(1, n // 3), n), np.arange(n))
        moving = rng.random(n) < 0.6
        found = schools(labels, moving)
        want = found[0] if found else np.zeros(0, np.int64)
        found_any += bool(found)
        assert np.array_equal(largest_school(labels, moving), want)
    assert found_any > 100


def test_the_largest_school_is_moving_and_aligned_not_a_milling_crowd():
    """The HUD's "largest school": of two moving clusters, a crowd of 8 facing every way is not a
    school (polarization 0), the 5 facing one way are — the HUD's figure points at aligned fish."""
    from mirofish.observe.metrics import largest_school, schools

    labels = np.array([0] * 8 + [1] * 5)
    moving = np.ones(13, bool)
    heading = np.array([0, 1, 2, 3, 0, 1, 2, 3] + [3] * 5)
    assert largest_school(labels, moving).tolist() == list(range(8))  # without headings: the crowd
    assert largest_school(labels, moving, heading=heading).tolist() == list(range(8, 13))
    assert [s.tolist() for s in schools(labels, moving, heading=heading)] == [list(range(8, 13))]


def test_the_compiled_sample_gives_the_numpy_figures_bit_for_bit():
    """Every 10 ticks one compiled call (_tick.school) gives the tank's and its largest school's
    order figures; each is the numpy reference's number exactly, on random tanks (aligned,
    clustered, at the edge of the school's rules) and on a live tank's samples."""
    import pytest

    from mirofish import kernel
    from mirofish.observe.metrics import COLLECTIVE_FIGURES, Sample

    if kernel.compiled_tick() is None:
        pytest.skip("the compiled tick is not built here (MIROFISH_TICK=numpy)")
    rng = np.random.default_rng(11)

    def both(f, moving, prev):
        fast = Sample(f, moving, prev, None, compiled=True)
        slow = Sample(f, moving, prev, None, compiled=False)
        assert fast._compiled is not None and slow._compiled is None
        assert fast.collective == slow.collective and list(fast.collective) == list(COLLECTIVE_FIGURES)
        assert fast.school == slow.school and fast.school_travel() == slow.school_travel()
        assert np.array_equal(fast.members, slow.members) and np.array_equal(fast.cluster_sizes, slow.cluster_sizes)
        return fast

    from mirofish.frame import Frame

    schools = 0
    for k in range(400):
        n, side = int(rng.integers(2, 300)), int(rng.integers(3, 50))
        heading = rng.integers(0, 4, n).astype(np.int8)
        if k % 3 == 0:
            heading[: int(rng.integers(0, n))] = 3  # mostly one way: schools near the alignment line
        x, y = rng.integers(0, side, n), rng.integers(0, side, n)
        f = Frame(tick=k, x=x, y=y, heading=heading, energy=np.zeros(n, np.int32), stuck=np.zeros(n, np.int32),
                  neighbours=np.zeros(n, np.int16), executed=np.zeros(n, np.int8), move_outcome=np.zeros(n, np.int8),
                  present=rng.random(n) < 0.9 if k % 4 == 0 else None)
        prev = rng.integers(0, side, (n, 2)).astype(np.float64) if k % 2 else None
        schools += both(f, rng.random(n) < rng.random(), prev).members.size > 0
    assert schools > 100
    live = LiveSession(load_config(seed=2))
    prev = None
    for t in range(600):
        f = live.step()
        if t % 10 == 0:
            prev = both(f, live.metrics.moving(), prev).full_xy


def test_a_copy_of_the_metrics_goes_on_alone_sharing_only_what_no_observer_changes():
    """A fork's metrics are a deep copy of its parent's (influence makes one per fork): the copy's
    windows, counts and samples move without the original's; the settings and tables are shared."""
    import copy

    live, same = LiveSession(load_config(seed=4)), LiveSession(load_config(seed=4))
    live.run(120)
    same.run(120)
    m = live.metrics
    frame = live.engine.step()
    same.step()
    before = (m.summary(), m.ticks, m._nb.copy(), m.word_deed.table.copy())
    twin = copy.deepcopy(m)
    for _ in range(30):
        twin.observe(frame)
    assert twin.ticks == m.ticks + 30 and not np.array_equal(twin._nb, m._nb)
    assert m.summary() == before[0] and m.ticks == before[1]
    assert np.array_equal(m._nb, before[2]) and np.array_equal(m.word_deed.table, before[3])
    live.run(150)  # the original goes on as a run its copy never touched (every window turned over)
    same.run(150)
    ours, theirs = m.summary(), same.metrics.summary()
    for s in (ours, theirs):
        s.pop("decision_latency_p95_ms")  # (the clock's)
    assert ours == theirs and m.decisions_window() == same.metrics.decisions_window()
    assert twin.cfg is m.cfg and twin.table is m.table and twin.word_deed.plans is m.word_deed.plans
    assert twin.word_deed is not m.word_deed and twin._lat is not m._lat


def test_the_embedded_brains_plain_batches_are_counted_as_any_other():
    """A batch of the instinct planner says it is plain (one tier, every status OK, no tokens), and
    the metrics count it without reading its arrays: the same decisions, fallbacks and tokens in
    the window, and by tier, tick by tick, as when the same batches come unmarked; the random
    chooser's too, and a fallback tier's (a model run's stand-in) counts as a fallback."""
    from dataclasses import replace

    from mirofish.brains.base import TIER_INDEX

    for settings in ({}, {"brain.chooser": "random"}):
        cfg = load_config(seed=6, **{"fish.count": 30, **settings})
        marked, unmarked = LiveSession(cfg), LiveSession(cfg)
        src = unmarked.engine.source
        src._decide = lambda b, decide=src._decide: replace(decide(b), plain=False)
        for _ in range(200):
            marked.step()
            unmarked.step()
            assert marked.metrics.decisions_window() == unmarked.metrics.decisions_window()
        assert marked.metrics.decisions_by_tier() == unmarked.metrics.decisions_by_tier() != {}
    fb = LiveSession(load_config(seed=6, **{"fish.count": 30}))
    fb.engine.source.tier = TIER_INDEX["fallback"]
    fb.run(50)
    decisions, fallbacks, _ = fb.metrics.decisions_window()
    assert decisions == fallbacks > 0


def test_entropy_is_numpys_formula_to_the_last_bit():
    """entropy() reads the counts as Python ints around numpy's log and sum (fewer calls a sample):
    the same number as numpy's formula, bit for bit, on counts with zeros, one count, large ones."""
    rng = np.random.default_rng(3)

    def numpy_formula(counts):
        total = counts.sum()
        if total <= 0:
            return 0.0
        p = counts[counts > 0] / total
        return float(-(p * np.log(p)).sum())

    for _ in range(3000):
        counts = rng.integers(0, 10 ** int(rng.integers(1, 12)), int(rng.integers(1, 9))).astype(np.int64)
        counts[rng.random(counts.size) < 0.2] = 0
        assert entropy(counts) == numpy_formula(counts)
    assert entropy(np.zeros(6, np.int64)) == 0.0 and entropy(np.array([0, 7, 0])) == 0.0


def test_a_plain_batch_whose_status_is_set_afterwards_is_counted_by_its_status():
    """A model pool's stand-in answers are the instinct planner's plain batches whose status it
    sets afterwards (waiting for the model, a timeout): the metrics then read that status, as they
    do for any batch — a waiting plan is no decision, a timeout's is a fallback — not the shortcut
    a plain batch gets."""
    import copy
    from dataclasses import replace

    from mirofish.brains.base import status_code
    from mirofish.brains.instinct import instinct_source

    s = LiveSession(load_config(seed=1))
    frame = s.step()
    while not s.engine.step().applied:
        pass
    stand_in = instinct_source(s.engine.world.cfg, tier="fallback")
    for reason, counted in (("waiting_for_the_model", 0), ("timeout", None)):
        got = []
        for plain in (True, False):
            b = stand_in.decide(s.engine._asked)
            assert b.is_plain
            b.status = np.full(len(b), status_code(reason), np.int8)  # (as brains/pool.py does)
            assert not b.is_plain
            if not plain:
                b = replace(b, plain=False)
            m = copy.deepcopy(s.metrics)
            m.observe(replace(frame, tick=frame.tick + 1000, applied=[b], latencies=[], ended=[], food_in_view=[]))
            got.append((m.decisions_window(), m.decisions_by_tier()))
        assert got[0] == got[1]
        decisions, fallbacks, _ = got[0][0]
        if counted == 0:
            assert decisions == s.metrics.decisions_window()[0]  # (waiting: no decision added)
        else:
            assert fallbacks == s.metrics.decisions_window()[1] + len(b)
