"""A reef: tanks joined by corridors, the same reef however it runs, recorded and replayed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pygame
import pytest

from mirofish.reef.run import Reef
from mirofish.reef.spec import load_reef
from mirofish.session import ReplaySession

ROOT = Path(__file__).resolve().parents[1]
RING = ROOT / "assets" / "reefs" / "ring.toml"


def reef_cli(*args, timeout=300):
    return subprocess.run([sys.executable, "run.py", "reef", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def ring():
    return load_reef(RING)


@pytest.fixture(scope="module")
def inline_run(ring):
    reef = Reef(ring, "inline")
    out = reef.run(1200)
    log = list(reef.log)
    reef.close()
    return out, log


def test_fish_cross_every_corridor_both_ways_and_keep_who_they_are(inline_run, ring):
    out, log = inline_run
    for cor in ring.corridors:
        assert out["migrations"].get(f"{cor.a}->{cor.b}", 0) > 0 and out["migrations"].get(f"{cor.b}->{cor.a}", 0) > 0
    # no fish lost or made: in a tank, in a corridor, or waiting at a full tank
    assert sum(t["population"] for t in out["tanks"]) + out["in_transit"] + out["waiting"] == 4 * 30
    assert all(e["arrive"] - e["leave"] == ring.interval for e in log)


def test_the_same_reef_in_one_process_two_processes_and_a_dask_cluster(inline_run, ring, tmp_path):
    from mirofish.sweep.backends import LocalDaskCluster

    out, _ = inline_run
    local = Reef(ring, "local", workers=2)
    try:
        assert local.run(1200)["reef_hash"] == out["reef_hash"]
    finally:
        local.close()
    with LocalDaskCluster(workers=2, log_dir=tmp_path) as address:
        dask = Reef(ring, "dask", cluster=address)
        try:
            got = dask.run(1200)
        finally:
            dask.close()
    assert got["reef_hash"] == out["reef_hash"] and got["migrations"] == out["migrations"]
    assert "Dask cluster" in got["backend"]


def test_a_recorded_reef_replays_each_tank_and_the_whole_reef(tmp_path):
    rec = tmp_path / "rec"
    done = reef_cli(RING, "--headless", "--ticks", 500, "--record", rec, "--workers", 2)
    assert done.returncode == 0, done.stderr
    live = json.loads(done.stdout)
    assert sum(live["migrations"].values()) > 5
    for tank in live["tanks"]:  # one tank alone, its migrants' comings and goings included
        r = ReplaySession(rec / f"{tank['name']}.db")
        r.seek(500)
        assert r.state_hash() == tank["hash"], tank["name"]
        r.close()
    again = reef_cli("--replay", rec)
    assert again.returncode == 0 and json.loads(again.stdout)["same"] is True
    refused = reef_cli(RING, "--headless", "--ticks", 50, "--record", rec)
    assert refused.returncode == 2 and "--overwrite" in refused.stderr


def test_a_killed_worker_is_one_line_and_the_reef_resumes_from_its_last_exchange(tmp_path):
    ckpt = tmp_path / "reef.ckpt"
    proc = subprocess.Popen([sys.executable, "run.py", "reef", str(RING), "--headless", "--ticks", "3000",
                             "--workers", "2", "--checkpoint", str(ckpt)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not ckpt.exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert children, "no worker processes"
    os.kill(int(children[0]), signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "worker" in err and "died" in err and f"--resume {ckpt}" in err and "Traceback" not in err
    resumed = reef_cli(RING, "--headless", "--ticks", 3000, "--workers", 2, "--resume", ckpt, "--checkpoint", ckpt,
                       "--overwrite")  # saving on into the file it resumes from: said with --overwrite
    assert resumed.returncode == 0, resumed.stderr
    whole = reef_cli(RING, "--headless", "--ticks", 3000)
    assert json.loads(resumed.stdout)["reef_hash"] == json.loads(whole.stdout)["reef_hash"]


@pytest.mark.parametrize("text, says", [
    ("interval = 0\n[[tanks]]\nname='a'\n", "interval"),
    ("[[tanks]]\nname='a'\n[[tanks]]\nname='a'\n", "unique"),
    ("[[tanks]]\nname='a'\n[[corridors]]\na='a'\nb='zz'\nside_a='east'\nside_b='west'\n", "no tank named 'zz'"),
    ("[[tanks]]\nname='a'\nset={'fish.count'=-3}\n", "tank a"),
    ("tanks = 3", "tanks"),
    ("not toml [", "not TOML"),
    ("ticks = true\n[[tanks]]\nname='a'\n", "ticks: Input should be a valid integer"),  # not read as 1
    ("interval = 2.5\n[[tanks]]\nname='a'\n", "interval"),
    ("[[tanks]]\nname='a'\nseed='7'\n", "seed"),
])
def test_a_bad_reef_file_is_one_line_and_exit_2(tmp_path, text, says):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    done = reef_cli(path, "--headless")
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_full_tank_keeps_its_migrants_waiting_in_the_corridor(ring):
    spec = ring.model_copy(deep=True)
    for t in spec.tanks:
        t.room = 0  # no room for anyone else: whoever arrives waits until someone leaves
    reef = Reef(spec, "inline")
    try:
        out = reef.run(800)
        assert all(t["population"] <= 30 for t in out["tanks"])
        assert out["waited"] > 0 and sum(out["migrations"].values()) > 0  # fish left, and some arrivals had to wait
    finally:
        reef.close()


def test_the_reef_map_opens_a_tank_on_a_click_and_esc_returns(tmp_path):
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    from mirofish.ui.app import App
    from mirofish.ui.scenes.reef import ReefScene

    scene = ReefScene(load_reef(RING))
    app = App([scene], (1280, 720), offscreen=True)
    for _ in range(30):
        scene.step()
    app.frame(0.0)
    assert len(scene.tiles) == 4 and scene.opened is None
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=scene.tiles[3].center))
    app.frame(0.0)
    assert scene.opened == 3
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_ESCAPE, mod=0, unicode="\x1b"))
    app.frame(0.0)
    assert scene.opened is None and scene.reef.tick >= 30
    app.close()


def test_a_killed_dask_worker_is_one_line_naming_the_checkpoint(tmp_path):
    """On a real local Dask cluster: a worker holding tanks killed mid-run ends the reef with
    one line (exit 2) that names the checkpoint to resume from."""
    from mirofish.sweep.backends import LocalDaskCluster

    ckpt = tmp_path / "reef.ckpt"
    cluster = LocalDaskCluster(workers=2, log_dir=tmp_path)
    with cluster as address:
        proc = subprocess.Popen([sys.executable, "run.py", "reef", str(RING), "--headless", "--ticks", "3000",
                                 "--cluster", address, "--checkpoint", str(ckpt)], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while not ckpt.exists() and time.time() < deadline:
            time.sleep(0.05)
        started = cluster._procs[1].pid  # `dask worker`: its worker processes descend from it
        ps = subprocess.run(["ps", "-ww", "-o", "pid=,ppid=,args=", "-e"], capture_output=True, text=True).stdout
        parent = {int(line.split()[0]): int(line.split()[1]) for line in ps.splitlines()}

        def descends(pid: int) -> bool:
            while pid > 1:
                if pid == started:
                    return True
                pid = parent.get(pid, 1)
            return False

        workers = [int(line.split()[0]) for line in ps.splitlines()
                   if "spawn_main" in line and descends(int(line.split()[0]))]
        assert workers and ckpt.exists()
        os.kill(workers[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=180)
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "Dask worker" in err and f"--resume {ckpt}" in err and "Traceback" not in err


def test_a_checkpoint_is_read_without_pickle_and_a_bad_one_is_one_line(tmp_path, capsys):
    """--resume reads the file's bytes and checks them before it uses anything: a forged
    pickle runs nothing, a file of another kind or reef, a damaged one or a tick past --ticks is
    one line (exit 2), and a genuine checkpoint resumes to the reef a whole run reaches."""
    import pickle
    import zlib

    from mirofish.cli import main

    ckpt = tmp_path / "ring.ckpt"
    assert main(["reef", str(RING), "--headless", "--ticks", "200", "--checkpoint", str(ckpt)]) == 0
    capsys.readouterr()
    assert main(["reef", str(RING), "--headless", "--ticks", "400", "--resume", str(ckpt)]) == 0
    resumed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main(["reef", str(RING), "--headless", "--ticks", "400"]) == 0
    assert resumed["reef_hash"] == json.loads(capsys.readouterr().out.strip().splitlines()[-1])["reef_hash"]

    marker = tmp_path / "pwned"

    class Forged:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    other = tmp_path / "other.toml"
    other.write_text(RING.read_text().replace("\ninterval = 20", "\ninterval = 40", 1))
    good = ckpt.read_bytes()
    raw = zlib.decompress(good)
    cases = {
        "forged.ckpt": (pickle.dumps({"spec": None, "x": Forged()}), "not a reef checkpoint"),
        "text.ckpt": (b"hello", "not a reef checkpoint"),
        "empty.ckpt": (b"", "not a reef checkpoint"),
        # cut short: damaged and truncated, not "not a reef checkpoint" as if another file had been given
        "cut.ckpt": (good[: len(good) // 2], "a damaged reef checkpoint: the file is truncated"),
        "arrays.ckpt": (zlib.compress(raw[: len(raw) - 64]), "a damaged reef checkpoint: the file is truncated"),
    }
    for name, (blob, says) in cases.items():
        (tmp_path / name).write_bytes(blob)
        code = main(["reef", str(RING), "--headless", "--ticks", "400", "--resume", str(tmp_path / name)])
        err = capsys.readouterr().err
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, (name, err)
    assert not marker.exists()  # the forged pickle ran nothing
    assert main(["reef", str(other), "--headless", "--ticks", "400", "--resume", str(ckpt)]) == 2
    assert "a checkpoint of another reef file" in capsys.readouterr().err
    assert main(["reef", str(RING), "--headless", "--ticks", "100", "--resume", str(ckpt)]) == 2
    assert "past tick 100" in capsys.readouterr().err
    assert main(["reef", str(RING), "--headless", "--ticks", "400", "--resume", str(tmp_path)]) == 2
    assert "folder" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["/dev/zero", "folder", "huge"])
def test_a_reef_file_that_is_a_device_a_folder_or_huge_is_refused_unread(tmp_path, where):
    path = {"/dev/zero": Path("/dev/zero"), "folder": tmp_path}.get(where)
    if where == "huge":
        path = tmp_path / "huge.toml"
        path.write_bytes(b"# " + b"x" * 5_000_000 + b"\n")
    done = reef_cli(path, "--headless", timeout=60)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert ("not a regular file" if where != "huge" else "larger than") in done.stderr


def test_a_set_string_reaches_the_tank_as_written(tmp_path):
    from mirofish.reef.spec import tank_config

    path = tmp_path / "q.toml"
    path.write_text("[[tanks]]\nname = 'a'\nset = {'brain.kind' = 'we\"ird\\\\dir/x.py:Brain'}\n")
    spec = load_reef(path)
    assert spec.tanks[0].set["brain.kind"] == 'we"ird\\\\dir/x.py:Brain'
    assert tank_config(spec, 0).brain.kind == spec.tanks[0].set["brain.kind"]


def _reef_tick(rec: Path) -> int:
    try:
        return int(json.loads((rec / "reef.json").read_text())["tick"])
    except (OSError, ValueError, KeyError):
        return -1


@pytest.mark.parametrize("kill_after", [150, 700, 1500])
def test_a_reef_killed_mid_run_replays_to_its_last_exchange(tmp_path, ring, kill_after):
    """SIGKILL while recording: the folder replays to the last exchange it committed, every tank
    equal to an uninterrupted reef at that tick."""
    rec = tmp_path / "rec"
    proc = subprocess.Popen([sys.executable, "run.py", "reef", str(RING), "--headless", "--ticks", "3000",
                             "--record", str(rec)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while _reef_tick(rec) < kill_after and time.time() < deadline and proc.poll() is None:
        time.sleep(0.01)
    proc.kill()
    proc.communicate(timeout=60)
    again = reef_cli("--replay", rec)
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    assert out["same"] is True and out["complete"] is False and out["tick"] >= kill_after
    assert out["tick"] % ring.interval == 0
    whole = Reef(ring, "inline")
    whole.run(out["tick"])
    assert out["reef_hash"] == whole.reef_hash()
    whole.close()


def test_a_replay_that_differs_exits_2_naming_the_tank_and_tick(tmp_path):
    rec = tmp_path / "rec"
    assert reef_cli(RING, "--headless", "--ticks", 100, "--record", rec).returncode == 0
    saved = json.loads((rec / "reef.json").read_text())
    saved["tanks"][2]["hash"] = "0" * 32
    saved["reef_hash"] = "f" * 32
    (rec / "reef.json").write_text(json.dumps(saved))
    again = reef_cli("--replay", rec)
    assert again.returncode == 2 and json.loads(again.stdout)["same"] is False
    assert "tick 100" in again.stderr and "tank sw" in again.stderr and len(again.stderr.strip().splitlines()) == 1


def test_a_checkpoint_in_the_record_folder_is_refused_before_anything_is_written(tmp_path):
    rec = tmp_path / "rec"
    for ckpt in (rec, rec / "reef.ckpt"):
        done = reef_cli(RING, "--headless", "--ticks", 40, "--record", rec, "--checkpoint", ckpt)
        said = "--record and --checkpoint name the same" if ckpt == rec else "--record folder"  # (the same path:
        assert done.returncode == 2 and said in done.stderr, done.stderr  # the check of any two outputs says so)
        assert not rec.exists()


def test_resuming_into_its_own_checkpoint_or_at_its_last_tick_is_one_line_and_the_checkpoint_stays(tmp_path):
    """A checkpoint is an input of --resume: never overwritten by --checkpoint (a link to it
    neither) unless --overwrite says so; a checkpoint already at --ticks has nothing left to run
    — one line each, exit 2."""
    ckpt = tmp_path / "reef.ckpt"
    done = reef_cli(RING, "--headless", "--ticks", 40, "--checkpoint", ckpt)
    assert done.returncode == 0, done.stderr
    before = ckpt.read_bytes()
    link = tmp_path / "link.ckpt"
    link.symlink_to(ckpt)
    for other in (ckpt, link):
        done = reef_cli(RING, "--headless", "--ticks", 80, "--resume", ckpt, "--checkpoint", other)
        assert done.returncode == 2 and "--resume file" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    done = reef_cli(RING, "--headless", "--ticks", 40, "--resume", ckpt)
    assert done.returncode == 2 and "at tick 40 already" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert ckpt.read_bytes() == before
    done = reef_cli(RING, "--headless", "--ticks", 80, "--resume", ckpt, "--checkpoint", tmp_path / "next.ckpt")
    assert done.returncode == 0, done.stderr  # going on into another file works
