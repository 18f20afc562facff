"""A metric is one row of one table (observe/metrics.METRICS); the HUD, the charts, recordings'
samples, sweeps and diff read it, and a metric from another package joins the same table."""

import json
import os
import subprocess
import sys
from pathlib import Path

from mirofish.config import load_config
from mirofish.observe import metrics as mm
from mirofish.observe.recording import SAMPLE_COLUMNS, TICK_COLUMNS
from mirofish.scenes.aquarium import SWEEP
from mirofish.session import LiveSession

ROOT = Path(__file__).resolve().parent.parent


def test_every_metric_reaches_the_places_it_names():
    settings = {k: v for group in mm.GROUP_SETTINGS.values() for k, v in group.items()}  # every group counted
    session = LiveSession(load_config(seed=2, **settings))
    session.run(30)
    summary = session.metrics.summary()
    session.close()
    for m in mm.METRICS:
        assert m.kind in mm.KINDS and m.label and m.doc and m.unit, m.key
        if m.kind == "tick":
            assert m.key in TICK_COLUMNS, m.key  # kept in a recording's per-tick rows
        else:
            assert m.key in summary and set(summary[m.key]) == {"current", "mean"}, m.key
        assert (m.key in SAMPLE_COLUMNS) == m.recorded, m.key
    for place in ("hud", "chart", "diff", "sweep"):
        ranks = [getattr(m, place) for m in mm.METRICS if getattr(m, place) is not None]
        assert len(ranks) == len(set(ranks)), f"two metrics share a {place} rank"
    assert SWEEP.metrics == tuple(mm.summary_key(m) for m in mm.ranked("sweep"))
    assert mm.SIX == ("action_entropy", "conflict_rate", "schooling_degree", "tokens_per_decision",
                      "decision_latency_p95_ms", "fallback_rate")  # docs/design.md §4, in its order


def test_the_hud_and_the_charts_are_the_tables_ranks():
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    from mirofish.ui import charts, panels

    assert [m.key for m in panels.HUD_METRICS] == [m.key for m in mm.ranked("hud")]
    shown = [c[1] for c in charts.CHARTS + charts.TERRITORY_CHARTS + charts.POPULATION_CHARTS]
    assert shown == [m.key for m in mm.ranked("chart")]
    assert all(m.group == "territory" for m in mm.METRICS if m.key in {c[1] for c in charts.TERRITORY_CHARTS})
    assert all(m.group == "population" for m in mm.METRICS if m.key in {c[1] for c in charts.POPULATION_CHARTS})


def test_a_bad_row_is_refused():
    import pytest

    with pytest.raises(ValueError, match="kind 'daily'"):
        mm.Metric("x", "x", "x", "x", "{:.2f}", "daily", lambda s: 0.0)
    with pytest.raises(ValueError, match="does not format a number"):
        mm.Metric("x", "x", "x", "x", "{:.2f} {}", "sample", lambda s: 0.0)


PLUGIN = '''
from mirofish.observe.metrics import Metric

# the share of fish in the water that face east: a metric of another package
EAST = Metric("east_share", "facing east", "share of fish facing east", "share", "{:.0%}", "sample",
              lambda s: float((s.heading == 3).mean()) if len(s.heading) else 0.0)
BROKEN = Metric("broken_metric", "broken", "raises", "none", "{:.0f}", "sample", lambda s: 1 / 0)
'''


def test_a_metric_from_another_package_joins_the_summary(tmp_path):
    site = tmp_path / "site"
    (site / "east_metric").mkdir(parents=True)
    (site / "east_metric" / "__init__.py").write_text(PLUGIN)
    info = site / "east_metric-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: east-metric\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mirofish.metrics]\neast = east_metric:EAST\nbroken = east_metric:BROKEN\n"
                                           "gone = east_metric:MISSING\n")
    done = subprocess.run([sys.executable, str(ROOT / "run.py"), "live", "--headless", "--ticks", "60"],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(site)},
                          timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert 0.0 < out["metrics"]["east_share"]["mean"] < 1.0
    assert out["metrics"]["broken_metric"]["mean"] == 0.0  # it raised: 0, one warning, the tank ran on
    lines = [x for x in done.stderr.splitlines() if x.startswith("mirofish:")]
    assert sum("broken_metric" in x and "failed" in x for x in lines) == 1
    assert sum("gone" in x and "does not load" in x for x in lines) == 1
