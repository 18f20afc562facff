"""The negotiation shares the aquarium's recording machinery: record a run, replay it checked
turn by turn, fork a session at a repair turn with another strategy, export it as tables —
headless and in the window."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mirofish.observe.recording import content_digest
from mirofish.scenes.negotiation.recording import _TABLES, NegotiationRecording

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "run.py", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("neg") / "run.db"
    done = cli("negotiation", "--headless", "--sessions", "8", "--seed", "3", "--record", str(path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sessions"] == 8
    return path


def a_repair(path: Path) -> tuple[int, int, str]:
    """(session, turn, recorded strategy) of the first repair in the recording."""
    rec = NegotiationRecording(path)
    try:
        for s in rec.sessions:
            for t in rec.turns(s["session"]):
                if t["kind"] == "repair" and t["strategy"] != "offering_options":
                    return s["session"], t["index"], t["strategy"]
    finally:
        rec.close()
    raise AssertionError("no repair recorded")


def test_a_recorded_run_replays_checked_turn_by_turn_and_exports_its_turns(recorded, tmp_path):
    rec = NegotiationRecording(recorded)
    turns = sum(len(rec.turns(s["session"])) for s in rec.sessions)
    rec.close()
    done = cli("replay", str(recorded), "--headless")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["sessions"] == 8 and out["verified_turns"] == turns > 8 * 5
    done = cli("export", str(recorded), "--tables", str(tmp_path / "t"), "--format", "csv")
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "t" / "turns.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == turns and {r["kind"] for r in rows} >= {"propose", "repair"}
    assert all(r["strategy"] for r in rows if r["kind"] == "repair")
    with open(tmp_path / "t" / "sessions.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 8


def test_a_fork_at_a_repair_turn_plays_the_other_strategy_and_goes_on(recorded, tmp_path):
    session, turn, was = a_repair(recorded)
    out = tmp_path / "fork.db"
    done = cli("fork", str(recorded), "--session", str(session), "--at-turn", str(turn), "--repair",
               "offering_options", "--record", str(out))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["recorded_repair"] == was and summary["repair"] == "offering_options"
    assert summary["first_different_turn"] == turn  # the turns before it are the recorded ones
    fork = NegotiationRecording(out)
    played = fork.turns(session)
    assert played[turn]["strategy"] == "offering_options" and played[turn]["text"].startswith("[offering options]")
    assert fork.header["fork"] == {"session": session, "turn": turn, "repair": "offering_options", "was": was}
    fork.close()
    again = cli("replay", str(out), "--headless")  # the fork's recording replays too
    assert again.returncode == 0 and json.loads(again.stdout)["verified_turns"] == len(played)


@pytest.mark.parametrize("args, says", [
    (["--at-turn", "0", "--repair", "offering_options"], "has no repair at that turn (repairs at: "),
    (["--at-turn", "1", "--repair", "shouting"], "not a repair strategy"),
    (["--at-turn", "1", "--repair", "offering_options", "--session", "99"], "--session 99 is not in this recording"),
    (["--at", "5", "--fish", "1", "--plan", "forage"], "a negotiation forks with --at-turn"),
])
def test_a_fork_that_cannot_be_made_is_one_line(recorded, args, says):
    done = cli("fork", str(recorded), *args)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr


def test_an_altered_turn_is_reported_where_the_replay_leaves_the_recording(recorded, tmp_path):
    session, turn, _ = a_repair(recorded)
    path = tmp_path / "altered.db"
    shutil.copy(recorded, path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        data = json.loads(db.execute("SELECT data FROM turns WHERE session = ? AND turn = ?",
                                     (session, turn)).fetchone()[0])
        data["strategy"] = "offering_options"
        db.execute("UPDATE turns SET data = ? WHERE session = ? AND turn = ?", (json.dumps(data), session, turn))
        db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db, _TABLES)),))
        db.commit()
    for args in (["replay", str(path), "--headless"], ["export", str(path), "--tables", str(tmp_path / "t")]):
        done = cli(*args)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert f"replay diverges from the recording at session {session} turn {turn}" in done.stderr
    shutil.copy(recorded, tmp_path / "edited.db")  # edited without re-sealing: the checksum says so
    with contextlib.closing(sqlite3.connect(tmp_path / "edited.db")) as db:
        db.execute("UPDATE turns SET data = replace(data, 'propose', 'accept') WHERE turn = 0")
        db.commit()
    done = cli("replay", str(tmp_path / "edited.db"), "--headless")
    assert done.returncode == 2 and "modified after it was written" in done.stderr


def test_a_model_run_replays_without_the_server(tmp_path):
    from mirofish.brains.testserver import TestServer

    path = tmp_path / "model.db"
    with TestServer() as server:
        done = cli("negotiation", "--headless", "--sessions", "2", "--seed", "1", "--agents", "llm",
                   "--base-url", server.url, "--model", "m", "--record", str(path))
    assert done.returncode == 0, done.stderr
    rec = NegotiationRecording(path)
    said = rec.said(0)
    assert rec.header["agents"] == "model" and said  # what the model said, kept
    rec.close()
    again = cli("replay", str(path), "--headless")  # no server now: the words come from the recording
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["verified_turns"] > 2
    session, turn, _ = a_repair(path)
    done = cli("fork", str(path), "--session", str(session), "--at-turn", str(turn), "--repair", "offering_options")
    assert done.returncode == 2 and "played by models is not supported" in done.stderr


def test_record_refuses_an_existing_file_replaces_a_recording_with_overwrite_only(recorded, tmp_path):
    done = cli("negotiation", "--headless", "--sessions", "2", "--record", str(recorded))
    assert done.returncode == 2 and "--overwrite" in done.stderr and "Traceback" not in done.stderr
    again = tmp_path / "again.db"
    shutil.copy(recorded, again)
    done = cli("negotiation", "--headless", "--sessions", "2", "--record", str(again), "--overwrite")
    assert done.returncode == 0, done.stderr
    assert len(NegotiationRecording(again).sessions) == 2
    done = cli("negotiation", "--headless", "--sessions", "2", "--db", str(recorded))  # a recording is not a --db
    assert done.returncode == 2 and "is a MiroFish recording" in done.stderr
    glossary = tmp_path / "g.db"
    with contextlib.closing(sqlite3.connect(glossary)) as db:
        db.execute("CREATE TABLE terms (x)")
    done = cli("negotiation", "--headless", "--sessions", "2", "--record", str(glossary), "--overwrite")
    assert done.returncode == 2 and "SQLite database" in done.stderr and glossary.stat().st_size > 0


def _key(scene, k):
    import pygame

    scene.handle_event(pygame.event.Event(pygame.KEYDOWN, key=k, mod=0, unicode=""))


def test_the_window_replays_forks_at_a_repair_and_returns(recorded, tmp_path):
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    import pygame

    from mirofish.ui.app import App
    from mirofish.ui.scenes.negotiation import NegotiationScene

    session, turn, was = a_repair(recorded)
    scene = NegotiationScene.replaying(NegotiationRecording(recorded), session)
    app = App([scene], (1280, 720), offscreen=True)
    for _ in range(turn):
        _key(scene, pygame.K_PERIOD)
    _key(scene, pygame.K_f)  # not a repair yet: says where the repairs are
    assert not scene.picking and "step to one first" in scene.message
    _key(scene, pygame.K_PERIOD)
    assert scene.neg.turns[-1].kind == "repair" and scene.neg.turns[-1].strategy == was
    _key(scene, pygame.K_f)
    assert scene.picking
    app.frame(0.0)
    _key(scene, pygame.K_3)  # offering options
    assert scene.player.fork_point == (turn, "offering_options", was)
    assert scene.neg.turns[-1].strategy == "offering_options" and len(scene.neg.turns) == turn + 1
    for _ in range(3):
        _key(scene, pygame.K_PERIOD)
    app.frame(0.0)
    _key(scene, pygame.K_o)  # back to the recording, at the fork's turn
    assert scene.player.fork_point is None and scene.neg.turns[-1].strategy == was
    box = scene.widget_rects()["timeline"]
    bar = scene.timeline.bar
    for kind, x in ((pygame.MOUSEBUTTONDOWN, bar.x), (pygame.MOUSEBUTTONUP, bar.x)):  # drag to the start
        scene.handle_event(pygame.event.Event(kind, button=1, pos=(x, bar.centery)))
    assert len(scene.neg.turns) == 0 and box.h > 0
    app.frame(0.0)
    app.close()


def test_the_window_records_a_session_that_replays(tmp_path):
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    from mirofish.scenes.negotiation.recording import NegotiationRecorder
    from mirofish.ui.scenes.negotiation import NegotiationScene

    path = tmp_path / "window.db"
    scene = NegotiationScene(4, recorder=NegotiationRecorder(path, {"seed": 4, "repair": True, "layers": 3,
                                                                   "agents": "embedded"}))
    while scene.index < 2:  # two whole sessions
        scene.step()
    scene.close()
    done = cli("replay", str(path), "--headless")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sessions"] == 2
