"""Recordings as tables that DuckDB reads directly: row counts, states equal to replay, types,
forks' divergence, a whole sweep as one frame, and reading that never changes the recording."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

from mirofish.observe.recording import Recording
from mirofish.session import ReplaySession
from mirofish.session.tables import TYPES

ROOT = Path(__file__).resolve().parent.parent

DUCK = {"int64": "BIGINT", "string": "VARCHAR", "float64": "DOUBLE", "bool": "BOOLEAN"}


def run(*args, timeout=180):
    return subprocess.run([sys.executable, "run.py", *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    d = tmp_path_factory.mktemp("rec")
    rec = d / "run.mfrec"
    done = run("live", "--headless", "--ticks", "620", "--seed", "4", "--fish", "30", "--record", rec)
    assert done.returncode == 0, done.stderr
    return rec


def digest(path: Path) -> str:
    return hashlib.blake2b(path.read_bytes()).hexdigest()


def test_tables_have_every_decision_and_every_sampled_fish_with_documented_types(recording, tmp_path):
    before = digest(recording)
    out = run("export", recording, "--tables", tmp_path / "t", "--every", "7")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert digest(recording) == before  # reading never changes the recording
    rec = Recording(recording)
    applied = sum(d.fish.size for t in range(rec.first_tick, rec.last_tick) if (d := rec.decisions_at(t)))
    sampled = [t for t in range(rec.first_tick, rec.last_tick) if t % 7 == 0]
    rec.close()
    con = duckdb.connect()

    def q(sql):
        return con.sql(sql.replace("T/", f"{tmp_path}/t/")).fetchall()

    assert q("SELECT count(*) FROM 'T/decisions.parquet'")[0][0] == applied == report["tables"]["decisions"]["rows"]
    assert q("SELECT count(*) FROM 'T/fish.parquet'")[0][0] == 30 * len(sampled)
    assert q("SELECT count(DISTINCT tick) FROM 'T/metrics.parquet'")[0][0] == 620
    assert q("SELECT count(*) FROM 'T/runs.parquet'")[0][0] == 1
    assert q('SELECT "config.fish.count", seed FROM \'T/runs.parquet\'')[0] == (30, 4)
    for table, types in TYPES.items():
        got = dict((c[0], c[1]) for c in q(f"DESCRIBE SELECT * FROM 'T/{table}.parquet'"))
        assert got == {c: DUCK[t] for c, t in types.items()}, table
    metric_types = {c[0]: c[1] for c in q("DESCRIBE SELECT * FROM 'T/metrics.parquet'")}
    assert metric_types.pop("tick") == "BIGINT" and set(metric_types.values()) == {"DOUBLE"}
    # what a user asks: every decision one fish made in a window, and how often hungry fish schooled
    rows = q("SELECT tick, plan, tier FROM 'T/decisions.parquet' WHERE fish = 3 AND tick BETWEEN 100 AND 400")
    assert rows and all(100 <= r[0] <= 400 for r in rows)
    events = q("SELECT count(*) FROM 'T/memory.parquet' WHERE source = 'perception'")[0][0]
    assert events > 0


def test_fish_states_at_keyframe_ticks_equal_the_replayed_state(recording, tmp_path):
    out = run("export", recording, "--tables", tmp_path / "t", "--every", "50", "--format", "csv")
    assert out.returncode == 0, out.stderr
    con = duckdb.connect()
    player = ReplaySession(recording)
    checked = 0
    for k in player.recording.keyframe_ticks:
        if k >= player.last_tick:
            continue
        player.seek(k)
        s, water = player.world.school, player.world.water
        rows = con.sql(f"SELECT fish, x, y, energy, age FROM '{tmp_path}/t/fish.csv' WHERE tick = {k} "
                       "ORDER BY fish").fetchall()
        assert len(rows) == 30
        got = np.array(rows, float)
        x, y = water.xy(s.cell)  # tank cells (the state's are padded by the view's radius)
        assert np.array_equal(got[:, 1], x) and np.array_equal(got[:, 2], y)
        assert np.allclose(got[:, 3], s.energy / 100) and np.array_equal(got[:, 4], s.age)
        # and between keyframes too: the state after tick t, as replay shows it
        player.seek(k + 50)
        mid = np.array(con.sql(f"SELECT x, energy FROM '{tmp_path}/t/fish.csv' WHERE tick = {k + 50} "
                               "ORDER BY fish").fetchall(), float)
        if len(mid):
            assert np.array_equal(mid[:, 0], water.xy(player.world.school.cell)[0])
            assert np.allclose(mid[:, 1], player.world.school.energy / 100)
        checked += 1
    player.close()
    assert checked >= 6


def test_a_window_of_ticks_and_a_forks_divergence(recording, tmp_path):
    out = run("export", recording, "--tables", tmp_path / "w", "--from", "200", "--to", "300", "--every", "10")
    report = json.loads(out.stdout)
    assert report["tables"]["fish"]["rows"] == 30 * 10 and report["tables"]["metrics"]["rows"] == 100
    lo, hi = duckdb.sql(f"SELECT min(tick), max(tick) FROM '{tmp_path}/w/decisions.parquet'").fetchall()[0]
    assert lo >= 200 and hi < 300
    fork = tmp_path / "fork.mfrec"
    made = run("fork", recording, "--at", "300", "--fish", "5", "--plan", "rest until 90 energy", "--ticks", "150",
               "--record", fork)
    assert made.returncode == 0, made.stderr
    out = run("export", fork, "--tables", tmp_path / "f")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["tables"]["divergence"]["rows"] > 0
    cells = duckdb.sql(f"SELECT max(cells_differ) FROM '{tmp_path}/f/divergence.parquet'").fetchall()[0][0]
    kinds = dict((c[0], c[1]) for c in
                 duckdb.sql(f"DESCRIBE SELECT * FROM '{tmp_path}/f/divergence.parquet'").fetchall())
    assert kinds == {"tick": "BIGINT", "cells_differ": "DOUBLE", "schooling_diff": "DOUBLE",
                     "energy_diff": "DOUBLE"}
    assert cells > 0  # the swapped decision made the tank diverge


def test_a_sweeps_recorded_runs_load_as_one_frame(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('scene = "aquarium"\nlength = 120\nseeds = [1, 2]\n[params]\n"fish.count" = [10, 15]\n')
    assert run("sweep", spec, "--out", tmp_path / "sw", "--record").returncode == 0
    out = run("export", tmp_path / "sw", "--tables", tmp_path / "all")
    assert out.returncode == 0, out.stderr
    con = duckdb.connect()
    per_run = dict(con.sql(f"SELECT run_id, count(*) FROM '{tmp_path}/all/fish.parquet' GROUP BY 1").fetchall())
    params = dict(con.sql(f'SELECT run_id, "param.fish.count" FROM \'{tmp_path}/all/runs.parquet\'').fetchall())
    assert len(per_run) == 4 and all(per_run[r] == params[r] * 12 for r in per_run)  # 120 ticks / 10 × fish


def test_bad_ranges_recordings_and_outputs_are_one_line_exit_2(recording, tmp_path):
    (tmp_path / "junk.mfrec").write_bytes(b"not a recording at all")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "fish.parquet").write_bytes(b"keep me")
    cases = [
        (recording, "--tables", tmp_path / "a", "--from", "500", "--to", "400"),
        (recording, "--tables", tmp_path / "a", "--to", "99999"),
        (recording, "--tables", tmp_path / "a", "--every", "0"),
        (tmp_path / "junk.mfrec", "--tables", tmp_path / "a"),
        (tmp_path / "nothing.mfrec", "--tables", tmp_path / "a"),
        (recording, "--tables", tmp_path / "t"),  # a table file is there: not without --overwrite
        (recording, "--tables", tmp_path / "a", "--around", "100", "--out", tmp_path / "x.mfrec"),
        (recording, "--tables", recording),  # the input itself
        (tmp_path, "--tables", tmp_path / "b"),  # a folder that is not a sweep
    ]
    for args in cases:
        out = run("export", *args)
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, (args, out.stderr)
        assert "Traceback" not in out.stderr
    assert (tmp_path / "t" / "fish.parquet").read_bytes() == b"keep me"


def test_the_states_only_replay_equals_a_full_replay_with_steering(recording):
    """The fish table replays with the recorded executed actions instead of steering; the
    states must be exactly those of the full replay (which steers)."""
    import mirofish.world as world_module
    from mirofish.session import tables

    fast = tables._segment((str(recording), 100, 500, 0, 620, 1))
    real_step = world_module.World.step

    def steered(self):
        self.given_actions = None
        return real_step(self)

    world_module.World.step = steered
    try:
        full = tables._segment((str(recording), 100, 500, 0, 620, 1))
    finally:
        world_module.World.step = real_step
    assert len(fast["fish"]) == 30 * 401 and np.array_equal(fast["fish"], full["fish"])
    assert np.array_equal(fast["memory"], full["memory"])


def test_csv_works_without_pyarrow_and_parquet_says_what_it_needs(recording, tmp_path):
    """CSV is always available: with pyarrow missing, the tables are written by Python's csv."""
    script = ("import sys; sys.modules['pyarrow'] = None; from mirofish.cli import main; "
              "sys.exit(main(sys.argv[1:]))")
    out = subprocess.run([sys.executable, "-c", script, "export", str(recording), "--tables", str(tmp_path / "c"),
                          "--format", "csv", "--from", "100", "--to", "200"], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    rows = duckdb.sql(f"SELECT count(*), min(tick), max(tick) FROM '{tmp_path}/c/fish.csv'").fetchall()[0]
    assert rows == (300, 100, 190)
    header = (tmp_path / "c" / "decisions.csv").read_text().splitlines()[0].split(",")
    assert header == list(TYPES["decisions"])
    out = subprocess.run([sys.executable, "-c", script, "export", str(recording), "--tables", str(tmp_path / "p")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and "needs pyarrow" in out.stderr and len(out.stderr.strip().splitlines()) == 1
