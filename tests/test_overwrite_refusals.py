"""``--overwrite`` refused where it cannot do what it says: a run that writes no file, and an
output file that is read-only — one line naming why, exit 2, nothing written or lost."""

import pytest
from conftest import cli_recording, refused


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    return cli_recording(tmp_path_factory, "overwrite", 30)


def commands(rec, tmp_path):
    """Every command that takes --overwrite, as a user runs it with no output named."""
    spec = tmp_path / "s.toml"
    spec.write_text('scene = "aquarium"\nlength = 5\nseeds = [1]\n')
    return {
        "live": ["live", "--headless", "--ticks", "3", "--overwrite"],
        "referential": ["referential", "--headless", "--rounds", "2", "--overwrite"],
        "negotiation": ["negotiation", "--headless", "--sessions", "1", "--overwrite"],
        "handoff": ["handoff", "--headless", "--tasks", "1", "--overwrite"],
        "replay": ["replay", rec, "--headless", "--overwrite"],
        "fork": ["fork", rec, "--at", "10", "--fish", "0", "--plan", "rest", "--ticks", "5", "--overwrite"],
        "report": ["report", rec, "--fish", "0", "--overwrite"],
        "export": ["export", rec, "--overwrite"],
        "diff": ["diff", rec, rec, "--overwrite"],
        "influence": ["influence", rec, "--outcome", "mean_energy", "--overwrite"],
        "survey": ["survey", rec, "--at", "10", "--questions", tmp_path / "q.toml", "--overwrite"],
        "sweep": ["sweep", spec, "--dry-run", "--overwrite"],
    }


@pytest.mark.parametrize("command", ["live", "referential", "negotiation", "handoff", "replay", "fork", "report",
                                     "export", "diff", "influence", "survey", "sweep"])
def test_overwrite_where_nothing_would_be_overwritten_is_refused(rec, tmp_path, capsys, command):
    """Before: taken and ignored (``live --headless --overwrite`` ran and wrote nothing to replace)."""
    line = refused(capsys, commands(rec, tmp_path)[command], "--overwrite", "nothing would be overwritten")
    assert line.startswith(f"mirofish {command}:"), line
    assert not any(p.name != "s.toml" for p in tmp_path.iterdir())  # no file was written


def test_overwrite_with_an_output_named_is_still_taken(rec, tmp_path):
    from mirofish.cli import main

    out = tmp_path / "again.mirofish"
    assert main(["live", "--headless", "--ticks", "3", "--record", str(out)]) == 0
    assert main(["live", "--headless", "--ticks", "3", "--record", str(out), "--overwrite"]) == 0


def read_only_copy(path, src):
    path.write_bytes(src.read_bytes())
    path.chmod(0o444)
    return path


@pytest.mark.parametrize("output", ["recording", "chart", "log"])
def test_overwrite_never_replaces_a_read_only_output_file(rec, tmp_path, capsys, output):
    """A file its owner made read-only is kept, --overwrite or not (before: replaced — the folder
    being writable — and left writable, as root too)."""
    kept = tmp_path / ("kept.mirofish" if output == "recording" else "kept.png" if output == "chart" else "kept.jsonl")
    src = rec if output == "recording" else tmp_path / "src.bin"
    if output != "recording":
        src.write_bytes(b"\x89PNG\r\n\x1a\n mine" if output == "chart" else b'{"round": 1}\n')
    read_only_copy(kept, src)
    before = kept.read_bytes()
    argv = {"recording": ["live", "--headless", "--ticks", "3", "--record", kept, "--overwrite"],
            "chart": ["report", rec, "--fish", "0", "--png", kept, "--overwrite"],
            "log": ["referential", "--headless", "--rounds", "2", "--log", kept, "--overwrite"]}[output]
    refused(capsys, argv, str(kept), "is read-only")
    assert kept.read_bytes() == before and not kept.stat().st_mode & 0o222


def test_overwrite_never_replaces_read_only_files_of_a_sweep_or_a_reef(rec, tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('scene = "aquarium"\nlength = 5\nseeds = [1]\n')
    out = tmp_path / "sw"
    out.mkdir()
    table = read_only_copy(out / "runs.csv", spec)
    refused(capsys, ["sweep", spec, "--out", out, "--workers", "1", "--overwrite"], str(table), "is read-only")
    folder = tmp_path / "reef"
    folder.mkdir()
    (folder / "reef.json").write_text("{}")
    tank = read_only_copy(folder / "a.db", rec)
    refused(capsys, ["reef", "assets/reefs/ring.toml", "--headless", "--ticks", "2", "--record", folder,
                     "--overwrite"], str(tank), "is read-only")
    assert tank.read_bytes() == rec.read_bytes() and (folder / "reef.json").read_text() == "{}"
