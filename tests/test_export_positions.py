"""The export's fish table gives each fish's position in tank cells — where the window and a
replay show it (cells are stored padded by the view's radius; a table of padded or wrapped
positions would put fish in the glass and make them jump across the tank)."""

from __future__ import annotations

import csv

import numpy as np

from mirofish.cli import main
from mirofish.config import load_config
from mirofish.session import LiveSession


def test_exported_positions_are_where_the_fish_were(tmp_path, capsys):
    cfg = load_config(seed=5, **{"fish.count": 16})
    live = LiveSession(cfg)
    live.start_recording(tmp_path / "r.mirofish")
    seen = {}
    for _ in range(60):
        f = live.step()
        seen[f.tick + 1] = (f.x.copy(), f.y.copy())  # the frame of tick t: positions after it, at t + 1
    live.close()
    assert main(["export", str(tmp_path / "r.mirofish"), "--tables", str(tmp_path / "t"), "--format", "csv"]) == 0
    rows = list(csv.DictReader((tmp_path / "t" / "fish.csv").open()))
    checked = 0
    for tick, (x, y) in seen.items():
        at = [r for r in rows if int(r["tick"]) == tick]
        if not at:
            continue
        got = np.array([[int(r["x"]), int(r["y"])] for r in sorted(at, key=lambda r: int(r["fish"]))])
        assert np.array_equal(got, np.stack([x, y], axis=1)), tick
        checked += 1
    assert checked >= 5
    xs = np.array([int(r["x"]) for r in rows])
    ys = np.array([int(r["y"]) for r in rows])
    assert xs.min() >= 0 and xs.max() < cfg.world.width and ys.min() >= 0 and ys.max() < cfg.world.height
