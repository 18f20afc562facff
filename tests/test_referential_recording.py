"""The referential game records its rounds in the turn-by-turn recording container, replays
them checked round by round (headless and in the window, with a timeline), and exports them."""

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
from mirofish.scenes.referential.recording import _TABLES, ReferentialRecording

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "run.py", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ref") / "game.db"
    done = cli("referential", "--headless", "--rounds", "200", "--seed", "5", "--record", str(path))
    assert done.returncode == 0, done.stderr
    return path


def test_a_recorded_game_replays_round_by_round_and_exports(recorded, tmp_path):
    done = cli("replay", str(recorded), "--headless")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["verified_rounds"] == 200 and 0.5 < out["success_rate"] <= 1
    done = cli("export", str(recorded), "--tables", str(tmp_path / "t"), "--format", "csv")
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "t" / "rounds.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 200 and all(r["message"] for r in rows)


def test_an_altered_round_is_reported_where_the_replay_leaves_the_recording(recorded, tmp_path):
    path = tmp_path / "altered.db"
    shutil.copy(recorded, path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        data = json.loads(db.execute("SELECT data FROM rounds WHERE round = 120").fetchone()[0])
        data["message"] = data["message"][::-1] + "x"
        db.execute("UPDATE rounds SET data = ? WHERE round = 120", (json.dumps(data),))
        db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db, _TABLES)),))
        db.commit()
    done = cli("replay", str(path), "--headless")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "replay diverges from the recording at round 120 (another message)" in done.stderr


@pytest.mark.parametrize("args, says", [
    (["--agents", "llm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], "keeps embedded agents' games"),
])
def test_what_cannot_be_recorded_is_one_line_and_leaves_no_file(tmp_path, args, says):
    out = tmp_path / "x.db"
    done = cli("referential", "--headless", "--rounds", "5", "--record", str(out), *args)
    assert done.returncode == 2 and says in done.stderr and not out.exists(), done.stderr


def test_a_game_that_continues_a_glossary_is_not_recorded(tmp_path):
    glossary = tmp_path / "g.db"
    assert cli("referential", "--headless", "--rounds", "30", "--glossary", str(glossary)).returncode == 0
    done = cli("referential", "--headless", "--rounds", "5", "--glossary", str(glossary), "--record",
               str(tmp_path / "x.db"))
    assert done.returncode == 2 and "starts from an empty glossary" in done.stderr


def test_the_window_replays_and_seeks_with_the_timeline(recorded):
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    import pygame

    from mirofish.ui.app import App
    from mirofish.ui.scenes.referential import ReferentialScene

    rec = ReferentialRecording(recorded)
    scene = ReferentialScene.replaying(rec)
    app = App([scene], (1280, 720), offscreen=True)
    app.frame(0.0)
    bar = scene.timeline.bar
    for kind in (pygame.MOUSEBUTTONDOWN, pygame.MOUSEBUTTONUP):
        scene.handle_event(pygame.event.Event(kind, button=1, pos=(bar.x + bar.w // 2, bar.centery)))
    assert len(scene.exp.rounds) == 100 and scene.last.message == rec.rounds[99]["message"]
    scene.handle_event(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_COMMA, mod=0, unicode=","))
    assert len(scene.exp.rounds) == 99 and scene.last.message == rec.rounds[98]["message"]
    assert len(scene.success) == 99  # the charts as of the round shown
    app.frame(0.0)
    for _ in range(150):  # plays to the recording's end, then waits
        scene.step()
    assert len(scene.exp.rounds) == 200 and scene.pacer.paused and not scene.message
    app.close()
