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


def test_a_metric_added_later_never_breaks_a_recording(capsys, old_model_run, tmp_path, monkeypatch):
    """A recording names its columns in its header and is read by name: a version with one more
    recorded metric reads a file made before it (the column NaN there), and today's version reads
    a file made by that one (the unknown column left aside) — replay by hash, export, fork."""
    import numpy as np

    from mirofish.observe import recording as R

    today = tuple(R.SAMPLE_COLUMNS)
    monkeypatch.setattr(R, "SAMPLE_COLUMNS", (*today[:3], "water_temperature", *today[3:]))
    code, _, err = run(capsys, "replay", str(old_model_run), "--headless", "--verify")
    assert code == 0, err
    rec = Recording(old_model_run)
    try:
        rows = rec.sample_rows(rec.first_tick, rec.last_tick)
        assert rows.shape[1] == len(today) + 2 and np.isnan(rows[:, 4]).all() and not np.isnan(rows[:, 1]).any()
    finally:
        rec.close()
    newer = tmp_path / "newer.mirofish"  # written by the version with the extra column
    code, _, err = run(capsys, "live", "--headless", "--ticks", "60", "--fish", "10", "--record", str(newer))
    assert code == 0, err
    monkeypatch.setattr(R, "SAMPLE_COLUMNS", today)
    rec = Recording(newer)
    try:  # today's columns, then the one only the file names, kept (NaN: no such metric ran)
        assert "water_temperature" in rec.file_columns()["samples"]
        assert rec.columns()["samples"] == (*today, "water_temperature")
        rows = rec.sample_rows(rec.first_tick, rec.last_tick)
        assert rows.shape[1] == len(today) + 2 and not np.isnan(rows[:, 1:-1]).any()
    finally:
        rec.close()
    for argv in (["replay", str(newer), "--headless", "--verify"],
                 ["export", str(newer), "--tables", str(tmp_path / "t"), "--format", "csv"],
                 ["fork", str(newer), "--at", "20", "--fish", "1", "--plan", "rest 20", "--ticks", "20"]):
        code, _, err = run(capsys, *argv)
        assert code == 0, (argv, err)
    import csv

    header = next(csv.reader((tmp_path / "t" / "metrics.csv").open()))
    assert header[-1] == "water_temperature"  # the export's table shows the column it does not know


def test_plan_goals_are_read_by_name(tmp_path):
    """The header names the plan goals in code order; a file whose codes are in another order
    (a version that reordered or added plan types) reads each decision as the plan it named."""
    import sqlite3

    from mirofish.cli import main
    from mirofish.fish.plans import GOAL_NAMES

    path = tmp_path / "r.mirofish"
    assert main(["live", "--headless", "--ticks", "80", "--fish", "12", "--record", str(path)]) == 0
    rec = Recording(path)
    try:
        want = [(t, f, int(g)) for t in range(0, 80) if (d := rec.decisions_at(t)) is not None
                for f, g in zip(d.fish.tolist(), d.goal.tolist())]
    finally:
        rec.close()
    # the same file, its header naming the goals in another order (its codes left as they are)
    swapped = list(GOAL_NAMES)
    swapped[1], swapped[2] = swapped[2], swapped[1]
    from mirofish.observe.recording import content_digest

    db = sqlite3.connect(path)
    db.execute("UPDATE header SET value = ? WHERE key = 'goals'", (json.dumps(swapped),))
    db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db)),))  # resealed
    db.commit()
    db.close()
    rec = Recording(path)
    try:
        got = [(t, f, int(g)) for t in range(0, 80) if (d := rec.decisions_at(t)) is not None
               for f, g in zip(d.fish.tolist(), d.goal.tolist())]
    finally:
        rec.close()
    flip = {1: 2, 2: 1}
    assert got == [(t, f, flip.get(g, g)) for t, f, g in want] and any(g in flip for _, _, g in want)


ALL = sorted(p for p in GOLDEN.iterdir() if p.suffix in (".mirofish", ".db"))


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_every_golden_recording_replays_checked_and_exports(capsys, path, tmp_path):
    """Every scene's golden recording (the aquarium's instinct and model runs, a negotiation, a
    referential game: the file name says the commit that wrote it) replays, checked turn by turn
    or tick by tick, and exports its tables."""
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    argv = ["replay", str(copy), "--headless"] + (["--verify"] if path.suffix == ".mirofish" else [])
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    code, _, err = run(capsys, "export", str(copy), "--tables", str(tmp_path / "t"), "--format", "csv")
    assert code == 0, err
    assert any((tmp_path / "t").iterdir())


def test_a_file_naming_a_plan_type_this_version_lacks_reads_until_a_decision_uses_it(tmp_path, capsys):
    """A recording made with a plan-type plug-in installed names its goals; without the plug-in it
    still replays, exports and forks when none of its decisions is of that type, and one that is
    refuses in one line naming the type (exit 2)."""
    import sqlite3

    from mirofish.fish.plans import GOAL_NAMES
    from mirofish.observe.recording import content_digest

    path = tmp_path / "r.mirofish"
    code, _, err = run(capsys, "live", "--headless", "--ticks", "60", "--fish", "10", "--record", str(path))
    assert code == 0, err

    def name_goals(goals):
        db = sqlite3.connect(path)
        db.execute("UPDATE header SET value = ? WHERE key = 'goals'", (json.dumps(goals),))
        db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db)),))
        db.commit()
        db.close()

    name_goals([*GOAL_NAMES, "huddle"])  # installed then, never chosen
    for argv in (["replay", str(path), "--headless", "--verify"],
                 ["export", str(path), "--tables", str(tmp_path / "t"), "--format", "csv"],
                 ["fork", str(path), "--at", "20", "--fish", "1", "--plan", "rest 20", "--ticks", "20"]):
        code, _, err = run(capsys, *argv)
        assert code == 0, (argv, err)
    used = list(GOAL_NAMES)
    used[1] = "huddle"  # now the file's forage decisions read as a type this version lacks
    name_goals(used)
    code, _, err = run(capsys, "replay", str(path), "--headless", "--verify")
    assert code == 2 and "plans of a type this version does not know (huddle)" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
