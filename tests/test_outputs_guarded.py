"""No output may reach a file another run is writing, a recording's journal, a config, or a
store of another kind — one line, exit 2, the file's bytes unchanged, no stray files."""

import hashlib
import os
from pathlib import Path

import pytest

from mirofish.cli import main
from mirofish.config import load_config
from mirofish.observe.recording import Recorder, Recording
from mirofish.session import LiveSession

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


def digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def rec(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("guard") / "rec.db"
    cfg = load_config(seed=2, **{"fish.count": 12})
    s = LiveSession(cfg)
    r = Recorder(path, cfg).attach(s)
    s.run(60)
    r.close()
    return path


def refused(capsys, argv: list[str], needle: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and needle in err, err


def test_no_output_reaches_a_recording_another_run_is_writing(rec, tmp_path, capsys):
    busy = tmp_path / "busy.db"
    cfg = load_config(seed=3, **{"fish.count": 10})
    s = LiveSession(cfg)
    writer = Recorder(busy, cfg).attach(s)  # a run recording right now (holds its writer lock)
    s.run(20)
    writer.flush()
    before = digest(busy)
    refused(capsys, ["report", str(rec), "--fish", "1", "--png", str(busy), "--overwrite"], "being written")
    refused(capsys, ["referential", "--headless", "--rounds", "3", "--log", str(busy), "--overwrite"],
            "being written")
    refused(capsys, ["live", "--screenshot", str(busy), "--overwrite", "--frames", "1"], "being written")
    refused(capsys, ["export", str(rec), "--around", "30", "--radius", "10", "--out", str(busy), "--overwrite"],
            "being written")
    assert digest(busy) == before
    s.run(20)
    writer.close()
    assert Recording(busy).last_tick == 40  # still a whole recording


def test_overwrite_never_replaces_a_recording_or_a_config_with_another_kind_of_file(rec, tmp_path, capsys):
    before = digest(rec)
    refused(capsys, ["referential", "--headless", "--rounds", "3", "--log", str(rec), "--overwrite"],
            "MiroFish recording")
    refused(capsys, ["report", str(rec), "--fish", "1", "--png", str(rec), "--overwrite"], "over its input")
    other = tmp_path / "other.db"
    other.write_bytes(rec.read_bytes())
    refused(capsys, ["report", str(rec), "--fish", "1", "--png", str(other), "--overwrite"], "MiroFish recording")
    assert digest(rec) == before == digest(other)
    conf = tmp_path / "c.toml"
    conf.write_text("[fish]\ncount = 8\n")
    text = conf.read_text()
    refused(capsys, ["live", "--headless", "--ticks", "3", "--config", str(conf), "--record", str(conf),
                     "--overwrite"], "config file")
    assert conf.read_text() == text


def test_an_output_named_like_a_journal_is_refused_and_creates_nothing(rec, tmp_path, capsys):
    wal = Path(str(rec) + "-wal")
    refused(capsys, ["export", str(rec), "--tables", str(wal), "--format", "csv"], "journal")
    refused(capsys, ["report", str(rec), "--fish", "1", "--png", str(wal / "x.png")], "journal")
    refused(capsys, ["export", str(rec), "--around", "30", "--radius", "5", "--out", str(rec) + "-journal"],
            "journal")
    assert not wal.exists() and not Path(str(rec) + "-journal").exists()
    assert main(["replay", str(rec), "--headless"]) == 0  # still opens


def test_sweep_and_scene_outputs_refuse_what_is_not_theirs(rec, tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('scene = "aquarium"\nlength = 5\nseeds = [1]\n[params]\n"fish.count" = [6]\n')
    wal = Path(str(rec) + "-wal")
    refused(capsys, ["sweep", str(spec), "--out", str(wal), "--workers", "1"], "journal")
    assert not wal.exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "runs.csv").write_text("my,own,table\n")
    refused(capsys, ["sweep", str(spec), "--out", str(mine), "--workers", "1"], "not a sweep's")
    assert (mine / "runs.csv").read_text() == "my,own,table\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / "runs.sqlite").write_bytes(rec.read_bytes())
    refused(capsys, ["sweep", str(spec), "--out", str(other), "--workers", "1", "--overwrite"], "recording")
    sweep_dir = tmp_path / "sw"
    assert main(["sweep", str(spec), "--out", str(sweep_dir), "--workers", "1"]) == 0
    capsys.readouterr()
    before = digest(sweep_dir / "runs.sqlite")
    refused(capsys, ["referential", "--headless", "--rounds", "3", "--glossary", str(sweep_dir / "runs.sqlite")],
            "not a glossary")
    assert digest(sweep_dir / "runs.sqlite") == before


@pytest.mark.parametrize("argv, needle", [
    (["live", "--screenshot", "/proc/mirofish.png", "--frames", "1"], "/proc"),
    (["negotiation", "--headless", "--sessions", "1", "--db", "/dev/full"], "not a regular file"),
    (["live", "--size", "9223372036854775808x9223372036854775808", "--screenshot", "{tmp}/s.png"], "at most"),
    (["live", "--headless", "--ticks", "2", "--set", ".".join(["a"] * 3000) + "=1"], "parts"),
    (["replay", "{tmp}/" + "x" * 300 + ".db"], "too long"),
    (["referential", "--headless", "--rounds", "2", "--glossary", " "], "empty"),
    (["export", "{rec}", "--tables", " "], "folder name"),
    (["report", "{rec}", "--fish", "1", "--png", "{tmp}/afile/x.png"], "is a file"),
])
def test_bad_paths_and_sizes_are_one_line_and_leave_nothing(rec, tmp_path, capsys, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("a file, not a folder")
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{rec}", str(rec)) for a in argv]
    refused(capsys, argv, needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no stray file, not even one named " "


def test_a_recorded_sweep_in_a_folder_named_with_a_hash_exports_and_leaves_no_stray_file(tmp_path, capsys,
                                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.toml").write_text('scene = "aquarium"\nlength = 20\nseeds = [1]\n')
    assert main(["sweep", "s.toml", "--out", "sw#1", "--record", "--workers", "1"]) == 0
    assert main(["export", "sw#1", "--tables", "t", "--format", "csv"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml", "sw#1", "t"]


def test_reading_a_recording_left_in_wal_mode_leaves_no_journal_files(rec, tmp_path, capsys):
    import sqlite3

    copy = tmp_path / "wal.db"
    copy.write_bytes(rec.read_bytes())
    db = sqlite3.connect(copy)
    db.execute("PRAGMA journal_mode=WAL")  # as a recorder interrupted at its very close leaves it
    db.close()
    assert main(["replay", str(copy), "--headless"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wal.db"]


def test_a_results_folder_with_a_table_name_taken_by_a_folder_or_plots_by_a_file_is_one_line(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('scene = "aquarium"\nlength = 5\nseeds = [1]\n')
    first = tmp_path / "a"
    (first / "runs.csv").mkdir(parents=True)
    refused(capsys, ["sweep", str(spec), "--out", str(first), "--workers", "1", "--overwrite"], "not a file")
    second = tmp_path / "b"
    second.mkdir()
    (second / "plots").write_text("a file")
    refused(capsys, ["sweep", str(spec), "--out", str(second), "--workers", "1"], "plots")
    assert (second / "plots").read_text() == "a file" and sorted(p.name for p in second.iterdir()) == ["plots"]


def test_overwrite_replaces_a_recording_only_with_one_of_the_same_scene(tmp_path):
    """One rule for every recording kind: --overwrite replaces an aquarium recording with an
    aquarium one, a referential game's with a referential game's, a negotiation's with a
    negotiation's — never one scene's with another's (the file's bytes stay as they were)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent

    def cli(*args):
        return subprocess.run([sys.executable, "run.py", *map(str, args)], capture_output=True, text=True, cwd=root,
                              timeout=120)

    writers = {"aquarium": lambda out: cli("live", "--headless", "--ticks", 5, "--record", out, "--overwrite"),
               "referential": lambda out: cli("referential", "--headless", "--rounds", 3, "--record", out,
                                              "--overwrite"),
               "negotiation": lambda out: cli("negotiation", "--headless", "--sessions", 2, "--record", out,
                                              "--overwrite")}
    for kind, write in writers.items():
        made = write(tmp_path / f"{kind}.db")
        assert made.returncode == 0, made.stderr
    for kind, write in writers.items():
        for other in writers:
            target = tmp_path / f"{other}.db"
            before = hashlib.sha256(target.read_bytes()).hexdigest()
            done = write(target)
            if other == kind:
                assert done.returncode == 0, done.stderr  # the same scene's recording: replaced
            else:
                assert done.returncode == 2 and f"is a {other} recording" in done.stderr, (kind, other, done.stderr)
                assert len(done.stderr.strip().splitlines()) == 1
                assert hashlib.sha256(target.read_bytes()).hexdigest() == before
