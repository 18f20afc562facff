"""Recordings made by earlier versions (tests/golden/, one file per format change) still replay,
export and fork — a fork answered from their recorded replies, none asked again."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from mirofish.cli import main
from mirofish.observe.recording import Recording

GOLDEN = Path(__file__).parent / "golden"
MODEL_RUNS = sorted(GOLDEN.glob("model-*.mirofish"))


def run(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    return code, json.loads(lines[-1]) if lines else None, err


@pytest.fixture(params=MODEL_RUNS, ids=[p.stem for p in MODEL_RUNS])
def old_model_run(request, tmp_path):
    copy = tmp_path / request.param.name  # read from a copy: the golden file is never touched
    shutil.copy(request.param, copy)
    return copy


def test_there_are_golden_model_recordings():
    assert MODEL_RUNS, "tests/golden holds no model recording"


def test_an_old_model_recording_replays_to_its_hashes(capsys, old_model_run):
    code, _, err = run(capsys, "replay", str(old_model_run), "--headless", "--verify")
    assert code == 0, err


def test_a_fork_of_an_old_model_recording_is_answered_from_its_replies(capsys, old_model_run, tmp_path):
    """One fish is given another plan at t10; every other request the fork makes that the run
    made too is answered from the recorded replies — under the schemas' words of the version
    that recorded it (brains/prompt.earlier_wordings: without it no request hits), no server
    asked (a recording's server is never contacted: a miss falls back, counted)."""
    code, out, err = run(capsys, "fork", str(old_model_run), "--at", "10", "--fish", "0", "--plan", "rest 30",
                         "--ticks", "200", "--record", str(tmp_path / "fork.mirofish"))
    assert code == 0, err
    assert out["cache_hits"] >= 5 and out["model_decisions"] == out["cache_hits"], out
    assert set(out["fallbacks"]) <= {"cache_miss"}
    code, _, err = run(capsys, "replay", str(tmp_path / "fork.mirofish"), "--headless", "--verify")
    assert code == 0, err


def test_an_old_model_recording_exports_its_tables(capsys, old_model_run, tmp_path):
    code, _, err = run(capsys, "export", str(old_model_run), "--tables", str(tmp_path / "t"), "--format", "csv")
    assert code == 0, err
    with open(tmp_path / "t" / "model_calls.csv", newline="") as fh:
        calls = list(csv.DictReader(fh))
    rec = Recording(old_model_run)
    try:
        assert len(calls) == len(rec.model_calls()) > 0
        assert all(c["reply_hash"] for c in calls)  # the cache's hash, derived from the recorded texts
    finally:
        rec.close()
