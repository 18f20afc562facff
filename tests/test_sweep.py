"""Parameter sweeps: local processes and a real Dask cluster give the same rows, each equal to
its single command; an interrupted sweep resumes; bad sweep files are one line, exit 2."""

import csv
import json
import os
import shlex
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mirofish.sweep.runs import comparable, run_task
from mirofish.sweep.spec import RunTask, load_spec

ROOT = Path(__file__).resolve().parent.parent
SMALL = """scene = "aquarium"
length = 150
seeds = [1, 2]
[params]
"food.spawn_rate" = [0.0002, 0.0008]
"fish.count" = [20, 30]
"""


def sweep(*args, timeout=300):
    return subprocess.run([sys.executable, "run.py", "sweep", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def rows(out: Path) -> dict:
    db = sqlite3.connect(out / "runs.sqlite")
    got = {r[0]: {"status": r[1], "summary": json.loads(r[2]), "command": r[3]}
           for r in db.execute("SELECT run_id, status, summary, command FROM runs")}
    db.close()
    return got


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dask_cluster(tmp_path):
    """A real Dask cluster: its scheduler and two workers started as separate processes."""
    from mirofish.sweep.backends import LocalDaskCluster

    with LocalDaskCluster(workers=2, log_dir=tmp_path) as address:
        yield address


def test_local_and_dask_cluster_give_identical_rows_equal_to_the_single_commands(tmp_path, dask_cluster):
    spec = tmp_path / "small.toml"
    spec.write_text(SMALL)
    local = sweep(spec, "--out", tmp_path / "local", "--workers", "2")
    assert local.returncode == 0, local.stderr
    cluster = sweep(spec, "--out", tmp_path / "cluster", "--cluster", dask_cluster)
    assert cluster.returncode == 0, cluster.stderr
    assert "Dask cluster" in json.loads(cluster.stdout)["backend"]
    a, b = rows(tmp_path / "local"), rows(tmp_path / "cluster")
    assert len(a) == 8 and set(a) == set(b)
    assert all(comparable(a[k]) == comparable(b[k]) for k in a)  # every figure but the machine's timings
    assert len({r["summary"]["final_state_hash"] for r in a.values()}) == 8
    for out in ("local", "cluster"):  # both backends step a setting's two seeds as one world: one share of its time
        db = sqlite3.connect(tmp_path / out / "runs.sqlite")
        shares = {}
        for params, elapsed in db.execute("SELECT params, elapsed_s FROM runs"):
            shares.setdefault(params, set()).add(elapsed)
        db.close()
        assert len(shares) == 4 and all(len(v) == 1 for v in shares.values()), (out, shares)
    for k in sorted(a)[:3]:  # a row is what its single command prints
        cmd = shlex.split(a[k]["command"])[1:]
        single = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert comparable({"summary": json.loads(single.stdout)}) == comparable(a[k])
    with open(tmp_path / "local" / "settings.csv") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 4 and all(t["seeds"] == "2" for t in table)
    assert all(float(t["mean_energy ci95"]) >= 0 for t in table)
    plots = json.loads(local.stdout)["plots"]
    assert plots and all(Path(p).stat().st_size > 5000 for p in plots)
    import pyarrow.parquet as pq

    frame = pq.read_table(tmp_path / "local" / "runs.parquet").to_pydict()
    assert sorted(frame["run_id"]) == sorted(a) and frame["fish.count"].count(20) == 4


def test_the_scenes_sweep_too_and_a_failing_run_is_recorded_without_stopping(tmp_path):
    spec = tmp_path / "scenes.toml"
    spec.write_text('scene = "referential"\nlength = 40\nseeds = {from = 1, count = 2}\n'
                    '[params]\ncandidates = [3, 8]\ncondition = ["dynamic", "natural"]\n')
    out = sweep(spec, "--out", tmp_path / "ref", "--workers", "2")
    assert out.returncode == 0, out.stderr
    got = rows(tmp_path / "ref")
    assert len(got) == 8 and all(r["status"] == "ok" for r in got.values())
    one = next(iter(got.values()))
    single = subprocess.run([sys.executable, *shlex.split(one["command"])[1:]], capture_output=True, text=True,
                            cwd=ROOT)
    assert json.loads(single.stdout) == one["summary"]
    bad = tmp_path / "fail.toml"
    bad.write_text('scene = "aquarium"\nlength = 20\nseeds = [1]\n[params]\n"fish.count" = [10, 20000, 15]\n')
    out = sweep(bad, "--out", tmp_path / "fail", "--workers", "2")
    assert out.returncode == 0 and json.loads(out.stdout)["failed"] == 1
    assert "1 run(s) failed" in out.stderr
    got = rows(tmp_path / "fail")
    failed = [r for r in got.values() if r["status"] == "failed"]
    assert len(got) == 3 and len(failed) == 1
    with open(tmp_path / "fail" / "runs.csv") as fh:
        errors = [r["error"] for r in csv.DictReader(fh) if r["status"] == "failed"]
    assert "do not fit" in errors[0]


@pytest.mark.parametrize("how", ["kill -9", "SIGINT"])
def test_an_interrupted_sweep_resumes_without_repeating_or_losing_finished_runs(tmp_path, how):
    spec = tmp_path / "long.toml"
    # long enough that a group of runs (stepped as one world, sweep/runs.py) is still going when stopped
    spec.write_text('scene = "aquarium"\nlength = 2000\nseeds = {from = 1, count = 12}\n[params]\n'
                    '"fish.count" = [30]\n')
    out = tmp_path / "out"
    # as if from a terminal, whatever this suite inherited: a suite started in the background
    # (``pytest &``) has SIGINT ignored, and a child would inherit that
    proc = subprocess.Popen([sys.executable, "run.py", "sweep", str(spec), "--out", str(out), "--workers", "1"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.2)
        try:
            if len(rows(out)) >= 3:
                break
        except sqlite3.OperationalError:
            pass
    if how == "SIGINT":
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130 and "run the same command again to resume" in err
        assert len(err.strip().splitlines()[-1]) < 300
    else:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    before = rows(out)
    assert 3 <= len(before) < 12
    again = sweep(spec, "--out", out, "--workers", "2")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["skipped_finished"] == len(before) and report["ran_now"] == 12 - len(before)
    after = rows(out)
    assert len(after) == 12 and all(after[k] == before[k] for k in before)  # kept as they were, not re-run


@pytest.mark.parametrize(("text", "expect"), [
    ('scene = "aquarium"\nlength = 10\nseeds = [1]\n[params]\n"food.bogus" = [1, 2]\n', "food.bogus"),
    ('scene = "aquarium"\nlength = 10\nseeds = [1]\n[params]\n"food.spawn_rate" = []\n', "empty grid"),
    ('scene = "aquarium"\nlength = "long"\nseeds = [1]\n', "length"),
    ('scene = "aquarium"\nlength = 10\nseeds = "one"\n', "seeds"),
    ('scene = "aquarium"\nlength = 10\nseeds = [1]\n[params]\n"food.spawn_rate" = ["lots"]\n', "spawn_rate"),
    ('scene = "pond"\nlength = 10\nseeds = [1]\n', "scene"),
    ('scene = "aquarium"\nlength = 10\nseeds = [1]\nwhatever = 3\n', "unknown key"),
    ('scene = "negotiation"\nlength = 10\nseeds = [1]\n[params]\nlayers = [5]\n', "layers"),
    ('scene = "referential"\nlength = 10\nseeds = [1]\n[params]\ncandidates = [99]\n', "candidates"),
    ('scene = "aquarium"\nlength = 10\nseeds = [1]\n[params]\n"fish.count" = {from = 5, to = 1, step = 1}\n',
     "empty"),
    ("this is not toml = = =", "not valid TOML"),
])
def test_bad_sweep_files_are_one_line_exit_2(tmp_path, text, expect):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    out = sweep(spec, "--out", tmp_path / "out")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert expect in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "out").exists()  # nothing was started


def test_an_unreachable_cluster_a_missing_file_and_a_busy_folder_are_one_line_exit_2(tmp_path):
    spec = tmp_path / "small.toml"
    spec.write_text(SMALL)
    out = sweep(spec, "--cluster", f"tcp://127.0.0.1:{free_port()}", "--out", tmp_path / "o", timeout=60)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1 and "no Dask scheduler" in out.stderr
    for address, said in (("notaurl", "tcp://HOST:PORT"), ("ucx://10.0.0.1:13337", "only tcp://")):
        start = time.time()
        out = sweep(spec, "--cluster", address, "--out", tmp_path / "o", timeout=60)
        assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and said in out.stderr, out.stderr
        assert time.time() - start < 8 and "Traceback" not in out.stderr
    out = sweep(tmp_path / "nope.toml")
    assert out.returncode == 2 and "not found" in out.stderr
    from mirofish.sweep.results import ResultsError, Store

    held = Store(tmp_path / "busy", load_spec(spec))  # another sweep is writing this folder
    try:
        out = sweep(spec, "--out", tmp_path / "busy")
        assert out.returncode == 2 and "another sweep is writing" in out.stderr
    finally:
        held.close()
    other = tmp_path / "other.toml"
    other.write_text(SMALL.replace("150", "160"))
    with pytest.raises(ResultsError, match="another sweep file"):
        Store(tmp_path / "busy", load_spec(other))


def test_ranges_samples_and_the_printed_commands(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('scene = "aquarium"\nlength = 10\nseeds = {from = 3, count = 2}\n[params]\n'
                    '"fish.count" = {from = 10, to = 30, step = 10}\n"food.spawn_rate" = [0.0001, 0.0002]\n'
                    '[sample]\ncount = 4\nseed = 1\n')
    s = load_spec(spec)
    assert s.seed_list() == [3, 4] and len(s.grid()) == 4 and len(s.tasks()) == 8
    full = s.model_copy(update={"sample": None})
    assert len(full.grid()) == 6 and {g["fish.count"] for g in full.grid()} == {10, 20, 30}
    out = sweep(spec, "--dry-run")
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 8 and all(line.startswith("python run.py live --headless --ticks 10") for line in lines)
    row = run_task(RunTask("negotiation", {"repair": False, "layers": 1}, 2, 5))
    assert row["status"] == "ok" and "--no-repair --layers 1" in row["command"]


def test_keys_that_vary_together_make_one_axis(tmp_path):
    from mirofish.sweep.spec import load_spec

    f = tmp_path / "s.toml"
    f.write_text('scene = "aquarium"\nlength = 5\nseeds = [1]\n[params]\n'
                 '"steering.alignment,steering.cohesion" = [[5.0, 3.0], [0.0, 0.0]]\n"brain.chooser" = ["random"]\n')
    spec = load_spec(f)
    assert [t.params for t in spec.tasks()] == [
        {"brain.chooser": "random", "steering.alignment": 5.0, "steering.cohesion": 3.0},
        {"brain.chooser": "random", "steering.alignment": 0.0, "steering.cohesion": 0.0}]
    assert spec.param_keys() == ["brain.chooser", "steering.alignment", "steering.cohesion"]
    f.write_text('scene = "aquarium"\nlength = 5\nseeds = [1]\n[params]\n"steering.alignment,steering.cohesion" = '
                 '[[5.0]]\n')
    import pytest

    from mirofish.sweep.spec import SpecError

    with pytest.raises(SpecError, match="vary together"):
        load_spec(f)


@pytest.mark.parametrize("body, needle", [
    ('seeds = [1]\n[params]\n"fish.count" = {from = 0, to = 1e300, step = 1}', "at most"),
    ('seeds = {from = 1, count = 1000000000}', "less than or equal"),
    ('seeds = [1]\n[params]\n"fish.count" = {from = 0, to = inf, step = 1}', "finite"),
    ('seeds = [1]\n[params]\n"a" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"b" = {from = 1, to = 100000, step = 1}', "grid"),
    ('seeds = [18446744073709551615]', "≤"),
])
def test_a_sweep_too_big_or_unbounded_is_refused_before_anything_is_built(tmp_path, capsys, body, needle):
    import time

    from mirofish.cli import main

    spec = tmp_path / "s.toml"
    spec.write_text(f'scene = "aquarium"\nlength = 5\n{body}\n')
    start = time.perf_counter()
    assert main(["sweep", str(spec), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and needle in err, err
    assert time.perf_counter() - start < 5  # refused without materialising the grid


def test_sweep_length_deep_toml_and_an_unknown_tick_kernel_are_one_line(tmp_path, capsys, monkeypatch):
    from mirofish.cli import main

    spec = tmp_path / "s.toml"
    spec.write_text('scene = "aquarium"\nlength = 9223372036854775807\nseeds = [1]\n')
    assert main(["sweep", str(spec), "--dry-run"]) == 2 and "length" in capsys.readouterr().err
    spec.write_text("a = " + "[" * 3000 + "]" * 3000 + "\n")
    assert main(["sweep", str(spec), "--dry-run"]) == 2 and "deeply" in capsys.readouterr().err
    spec.write_text('scene = "aquarium"\nlength = 5\nseeds = [1]\n')
    monkeypatch.setenv("MIROFISH_TICK", "numba")
    assert main(["sweep", str(spec), "--out", str(tmp_path / "o")]) == 2
    assert "MIROFISH_TICK" in capsys.readouterr().err and not (tmp_path / "o").exists()


@pytest.mark.parametrize("delay", [0.1, 0.3])
def test_ctrl_c_at_any_moment_of_a_sweeps_start_is_one_line(tmp_path, delay):
    spec = tmp_path / "s.toml"
    spec.write_text('scene = "aquarium"\nlength = 300\nseeds = {from = 1, count = 4}\n')
    proc = subprocess.Popen([sys.executable, "run.py", "sweep", str(spec), "--out", str(tmp_path / "o"),
                             "--workers", "1"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err and "interrupted" in err.strip().splitlines()[-1], (
        proc.returncode, err[-2000:])


def test_a_referential_sweep_plays_model_agents_at_each_temperature(tmp_path):
    """sweep --base-url --model on a referential sweep: model agents play every game, each at
    the temperature of its run (sent to the server), and each row's command replays it."""
    from mirofish.brains.testserver import TestServer

    spec = tmp_path / "t.toml"
    spec.write_text('scene = "referential"\nlength = 4\nseeds = [1]\n[params]\ntemperature = [0.0, 0.9]\n')
    with TestServer(keep_bodies=True) as server:
        done = subprocess.run([sys.executable, "run.py", "sweep", str(spec), "--out", str(tmp_path / "o"),
                               "--workers", "1", "--base-url", server.url, "--model", "fish-mini"],
                              capture_output=True, text=True, cwd=ROOT, timeout=180)
        sent = sorted({json.loads(b).get("temperature") for b in server.bodies})
    assert done.returncode == 0, done.stderr
    assert sent == [0, 0.9]
    with open(tmp_path / "o" / "runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    assert all("--agents llm" in r["command"] and "--model fish-mini" in r["command"] for r in rows)
    assert all(float(r["model_made.sender_turns"]) == 4 for r in rows), rows[0].keys()
