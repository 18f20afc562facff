"""A joined world's tanks observed together (session/together.py): each tank's metrics, word and
deed and decision history hold, array for array, what its run alone holds; what cannot be
observed together is observed one by one; the compiled tally of many tanks refuses what does not
fit in one line."""

from __future__ import annotations

import numpy as np
import pytest

from mirofish import kernel
from mirofish.batch import Batch
from mirofish.brains.instinct import instinct_source
from mirofish.config import load_config
from mirofish.session.joined import JoinedEngine, JoinedTank, keyed_brain
from mirofish.session.live import LiveSession

pytestmark = pytest.mark.skipif(kernel.built() is None, reason="observing together needs the compiled tick")

METRIC_ARRAYS = ("_actions", "_action_sum", "_conflicts", "_conflict_sum", "_nb", "_nb_sum", "last_moved", "heat",
                 "by_tier", "school_members", "_prev_xy")
METRIC_NUMBERS = ("ticks", "first_tick", "in_water", "since_move", "max_stuck", "stuck_now", "_decisions",
                  "_decision_sum", "_samples", "_current", "_sums", "_lat_n")
WORD_DEED = ("open", "_said", "food0", "counts", "_ring", "_ring_n", "table", "_holds")
HISTORY = ("counts", "tick", "goal", "param", "horizon", "tier", "status", "ended")


def joined(cfgs, ticks, together=True, extra=None):
    """The runs of ``cfgs`` joined for ``ticks`` ticks: (their sessions, the engine)."""
    runs = [LiveSession(c, own_memory=True) for c in cfgs]
    planners = [keyed_brain(r.engine.source) for r in runs]
    n = runs[0].world.school.n
    keys = np.concatenate([p._keys[np.arange(n)] for p in planners])
    tanks = [JoinedTank(list(r.engine.observers) + ([extra] if extra and k == 1 else [])) for k, r in enumerate(runs)]
    engine = JoinedEngine(Batch([r.world for r in runs], planned=True), keyed_brain(instinct_source(cfgs[0])),
                          tanks, keys, observe_together=together)
    for _ in range(ticks):
        engine.step()
    engine.settle()
    for k in range(len(runs)):
        engine.batch.world(k)
    return runs, engine


def alone(cfg, ticks):
    run = LiveSession(cfg, own_memory=True)
    for _ in range(ticks):
        run.engine.step()
    return run


def untimed(d):
    """``d`` without the decisions' latencies (the machine's time, not the tank's)."""
    return {k: v for k, v in d.items() if "latency" not in k} if isinstance(d, dict) else d


def same(a, b, what):
    a, b = untimed(a), untimed(b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert a is not None and b is not None and np.array_equal(a, b), what
    else:
        assert a == b, what


def assert_observed_alike(run, ref, k):
    m, r = run.metrics, ref.metrics
    for name in METRIC_ARRAYS + METRIC_NUMBERS:
        same(getattr(m, name), getattr(r, name), f"tank {k}: metrics {name}")
    for name in WORD_DEED:
        same(getattr(m.word_deed, name), getattr(r.word_deed, name), f"tank {k}: word and deed {name}")
    h, rh = run.history, ref.history
    for name in HISTORY:
        same(getattr(h, name), getattr(rh, name), f"tank {k}: decision history {name}")
    assert untimed(m.summary()) == untimed(r.summary())
    assert m.word_deed.summary("instinct") == r.word_deed.summary("instinct")


@pytest.mark.parametrize("settings", [(), ("world.grid=hex", "fish.count=40"),
                                      ("brain.chooser=random", "brain.decides=action"),
                                      ("food.spawn_rate=0.02", "steering.alignment=0")])
def test_each_tank_observed_together_holds_what_its_run_alone_holds(settings):
    cfgs = [load_config(None, settings, seed=s) for s in (1, 2, 5)]
    runs, engine = joined(cfgs, 257)  # (past 25 samples, and one tick after the last)
    assert engine.together is not None
    for k, (run, cfg) in enumerate(zip(runs, cfgs)):
        assert_observed_alike(run, alone(cfg, 257), k)


def test_a_tank_with_its_own_observer_is_observed_one_by_one_and_alike():
    seen = []
    cfgs = [load_config(None, (), seed=s) for s in (3, 4)]
    runs, engine = joined(cfgs, 60, extra=lambda f: seen.append(f.tick))
    assert engine.together is None and len(seen) == 60  # a plug-in's observer: every frame its own
    for k, (run, cfg) in enumerate(zip(runs, cfgs)):
        assert_observed_alike(run, alone(cfg, 60), k)


def test_a_tank_goes_on_alone_after_being_observed_together():
    cfgs = [load_config(None, (), seed=s) for s in (6, 7)]
    runs, _ = joined(cfgs, 120)
    for _ in range(80):  # each tank's own world and observers, stepped alone from where the batch left them
        runs[1].engine.step()
    assert_observed_alike(runs[1], alone(cfgs[1], 200), 1)


def test_the_tally_of_many_tanks_refuses_in_one_line_what_does_not_fit():
    k = kernel.built()
    m = LiveSession(load_config(None, (), seed=1), own_memory=True).metrics
    n = m.last_moved.size
    arrays = {"executed": np.zeros(2 * n, np.int8), "move_outcome": np.zeros(2 * n, np.int8),
              "present": np.ones(2 * n, np.uint8), "neighbours": np.zeros(2 * n, np.int16),
              "stuck": np.zeros(2 * n, np.int32), "x": np.zeros(2 * n, np.int64), "y": np.zeros(2 * n, np.int64),
              "actions": np.stack([m._actions] * 2), "action_sum": np.stack([m._action_sum] * 2),
              "conflicts": np.stack([m._conflicts] * 2), "conflict_sum": np.stack([m._conflict_sum] * 2),
              "nb": np.stack([m._nb] * 2), "nb_sum": np.zeros(2 * n, np.int64),
              "last_moved": np.zeros(2 * n, np.int64), "heat": np.stack([m.heat] * 2),
              "outcomes": np.zeros((2, 5), np.int64), "here_worst": np.zeros((2, 2), np.int64)}
    ints = {"slot": 0, "nslot": 0, "window": m.cfg.window, "schooling_window": m.cfg.schooling_window, "ticks": 1,
            "hotspot_cell": m.cfg.hotspot_cell, "heat_width": m.heat.shape[1], "heat_height": m.heat.shape[0],
            "tanks": 2}
    k.tally_tanks(arrays, ints)
    assert arrays["here_worst"][:, 0].tolist() == [n, n]  # every fish of each tank in the water
    with pytest.raises(ValueError, match=r"^tally_tanks\(\): 120 fish is not 7 tanks' fish$"):
        k.tally_tanks(arrays, {**ints, "tanks": 7})
    with pytest.raises(ValueError, match=r"^array here_worst: 16 bytes, expected 32$"):
        k.tally_tanks({**arrays, "here_worst": np.zeros(2, np.int64)}, ints)
    bad = {**arrays, "executed": np.full(2 * n, 9, np.int8)}
    with pytest.raises(ValueError, match=r"^action 9 is out of range$"):
        k.tally_tanks(bad, ints)
