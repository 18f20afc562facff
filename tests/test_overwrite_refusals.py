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
