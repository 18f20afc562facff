"""Every golden recording (tests/golden/: one per format — each chunk layout MFC1..MFC4, the reef's
folders, the turn-by-turn scenes — made by the commit its name says) used as a user would, by
the command line in a subprocess: replay checked (on the compiled tick and on the numpy one,
reaching the state the producing version reached where made.json says it can), export (tables,
and a window of ticks as a new recording that replays checked), fork where the scene forks; and
a damaged copy of each is one line naming the problem, exit 2, never a traceback.

Files are found by globbing tests/golden/, so a golden file added later is checked too;
tests/golden/made.json says how each was made and adds what it must reach.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from test_golden import GOLDEN  # (the same folder tests/test_golden.py reads)

ROOT = Path(__file__).resolve().parent.parent
MADE = json.loads((GOLDEN / "made.json").read_text(encoding="utf-8"))["files"]
TICKS = sorted(GOLDEN.glob("*.mirofish"))  # aquarium recordings
REEFS = sorted(p for p in GOLDEN.glob("*.reef") if p.is_dir())  # recorded reefs (a folder each)
TANKS = sorted(GOLDEN.glob("*.reef/*.db"))  # each reef tank: an aquarium recording of its own
TURNS = sorted(GOLDEN.glob("*.db"))  # the turn-by-turn scenes (negotiation, referential)
EXIT_BAD_INPUT = 2


def mirofish(*args: object, tick: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """``python -m mirofish ARGS`` as a user runs it; ``tick``: MIROFISH_TICK (None: the default)."""
    env = {k: v for k, v in os.environ.items() if k != "MIROFISH_TICK"}
    env["SDL_VIDEODRIVER"] = "dummy"
    if tick is not None:
        env["MIROFISH_TICK"] = tick
    return subprocess.run([sys.executable, "-m", "mirofish", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def ok(done: subprocess.CompletedProcess[str]) -> dict:
    """The JSON line a successful command printed last."""
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    assert lines, done.stdout
    return json.loads(lines[-1])


def refused(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one line a refused command said (exit 2, no traceback), checked to name ``words``."""
    assert done.returncode == EXIT_BAD_INPUT, (done.returncode, done.stderr)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def copied(path: Path, tmp_path: Path) -> Path:
    """A copy to work on (the golden file is never opened by a command)."""
    out = tmp_path / path.name
    (shutil.copytree if path.is_dir() else shutil.copy)(path, out)
    return out


def layouts(path: Path) -> set[bytes]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {zlib.decompress(blob)[:4] for (blob,) in db.execute("SELECT data FROM chunks")}
    finally:
        db.close()


def header(path: Path) -> dict:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM header")}
    finally:
        db.close()


def entry(path: Path) -> dict:
    """made.json's entry for a golden file (a reef tank: its reef's), {} when it has none."""
    return MADE.get(path.parent.name if path.parent != GOLDEN else path.name, {})


def ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(GOLDEN)) for p in paths]


# ---------------------------------------------------------------- what the folder holds


def test_every_chunk_layout_and_every_recording_scene_has_a_golden_file():
    """A recording of every layout this version reads (the reader's own list), of the reef, and of
    every built-in scene that records (the handoff records nothing: its spec says so)."""
    from mirofish.observe.recording_chunks import _LAYOUTS
    from mirofish.scenes import registry

    held = set().union(*(layouts(p) for p in TICKS + TANKS))
    assert set(_LAYOUTS) <= held, sorted(set(_LAYOUTS) - held)
    assert REEFS and TANKS
    scenes = {header(p).get("scene", "aquarium") for p in TICKS + TURNS}
    for spec in (registry.resolve(ref, "built-in scene") for ref in registry.BUILT_IN):
        assert not spec.records or spec.name in scenes, f"no golden recording of the {spec.name} scene"


def test_made_json_names_the_golden_files_and_their_commits():
    on_disk = {p.name for p in TICKS + TURNS + REEFS}
    assert set(MADE) <= on_disk, sorted(set(MADE) - on_disk)
    for name, made in MADE.items():
        short = re.search(r"-([0-9a-f]{7})\.", name)
        assert short and made["commit"].startswith(short.group(1)), (name, made.get("commit"))


@pytest.mark.parametrize("path", TICKS + TANKS, ids=ids(TICKS + TANKS))
def test_a_golden_file_holds_the_layout_it_names(path):
    want = entry(path).get("layout") or (re.search(r"-(MFC\d+)-", path.name) or [None, None])[1]
    held = layouts(path)
    assert held, "no chunk"
    if want:
        assert held == {want.encode()}, (want, held)


# ---------------------------------------------------------------- aquarium recordings


@pytest.mark.parametrize("tick", [None, "numpy"], ids=["default tick", "numpy tick"])
@pytest.mark.parametrize("path", TICKS + TANKS, ids=ids(TICKS + TANKS))
def test_a_golden_recording_replays_checked_to_its_hashes(path, tick, tmp_path):
    """replay --verify re-simulates every tick from the first, checking the executed actions
    and the kept state hashes (MFC2 on); where made.json says so, it also ends in the state the
    producing version ended in (an MFC2 file keeps no hash: this is its check)."""
    out = ok(mirofish("replay", copied(path, tmp_path), "--headless", "--verify", tick=tick))
    assert out["verified_ticks"] == out["tick"] > 0
    made = entry(path)
    if path.suffix == ".mirofish" and made.get("reproduced"):
        assert (out["tick"], out["state_hash"]) == (made["final_tick"], made["state_hash"])


@pytest.mark.parametrize("path", TICKS + TANKS, ids=ids(TICKS + TANKS))
def test_a_golden_recording_exports_its_tables_and_a_window(path, tmp_path):
    from mirofish.observe.recording import TICK_COLUMNS, Recording

    rec_path = copied(path, tmp_path)
    out = ok(mirofish("export", rec_path, "--tables", tmp_path / "t", "--format", "csv"))
    rec = Recording(rec_path)
    try:
        decisions = int(rec.tick_rows(rec.first_tick, rec.last_tick)[:, 1 + TICK_COLUMNS.index("decisions")].sum())
        middle = (rec.first_tick + rec.last_tick) // 2
    finally:
        rec.close()
    assert out["tables"]["decisions"]["rows"] == decisions > 0
    assert (tmp_path / "t" / "decisions.csv").exists()
    window = tmp_path / "window.mirofish"
    ok(mirofish("export", rec_path, "--around", middle, "--radius", 20, "--out", window))
    again = ok(mirofish("replay", window, "--headless", "--verify"))
    assert again["verified_ticks"] > 0


@pytest.mark.parametrize("path", TICKS + TANKS, ids=ids(TICKS + TANKS))
def test_a_golden_recording_forks_and_the_fork_replays_checked(path, tmp_path):
    rec_path = copied(path, tmp_path)
    fork = tmp_path / "fork.mirofish"
    out = ok(mirofish("fork", rec_path, "--at", 10, "--fish", 1, "--plan", "rest 30", "--ticks", 40, "--record", fork))
    assert out["fork_tick"] == 10 and out["final_tick"] == 50
    again = ok(mirofish("replay", fork, "--headless", "--verify"))
    assert again["state_hash"] == out["final_state_hash"]


def _flip_a_chunk_byte(path: Path) -> None:
    """One byte changed inside the first chunk's stored blob (found in the file's pages)."""
    db = sqlite3.connect(path)
    (blob,) = db.execute("SELECT data FROM chunks ORDER BY tick0 LIMIT 1").fetchone()
    db.close()
    raw = bytearray(path.read_bytes())
    at = raw.find(blob[:48])
    assert at > 0 and raw.find(blob[:48], at + 1) == -1
    raw[at + 24] ^= 0x5A
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("path", TICKS + TANKS, ids=ids(TICKS + TANKS))
def test_a_damaged_copy_of_a_golden_recording_is_one_line_naming_it(path, tmp_path):
    """A byte changed in a chunk: a sealed file (a checksum in its header) says it was modified,
    an older one without a seal says which chunk is damaged — exit 2, one line, no traceback."""
    damaged = copied(path, tmp_path)
    _flip_a_chunk_byte(damaged)
    sealed = "checksum" in header(damaged)
    why = "modified after it was written" if sealed else "is damaged (chunk at tick"
    for argv in (["replay", damaged, "--headless", "--verify"],
                 ["export", damaged, "--tables", tmp_path / "t", "--format", "csv"],
                 ["fork", damaged, "--at", 10, "--fish", 1, "--plan", "rest 30", "--ticks", 20]):
        refused(mirofish(*argv), str(damaged), why)


# ---------------------------------------------------------------- reefs


@pytest.mark.parametrize("tick", [None, "numpy"], ids=["default tick", "numpy tick"])
@pytest.mark.parametrize("path", REEFS, ids=ids(REEFS))
def test_a_golden_reef_replays_to_its_reef_hash(path, tick, tmp_path):
    out = ok(mirofish("reef", "--replay", copied(path, tmp_path), "--headless", tick=tick))
    assert out["same"] and out["reef_hash"] == out["recorded_reef_hash"] and not out["differ"]
    made = entry(path)
    if made.get("reproduced"):
        assert (out["tick"], out["reef_hash"]) == (made["final_tick"], made["reef_hash"])


@pytest.mark.parametrize("path", REEFS, ids=ids(REEFS))
def test_a_damaged_golden_reef_is_one_line_naming_the_tank_or_the_log(path, tmp_path):
    reef = copied(path, tmp_path)
    tank = sorted(reef.glob("*.db"))[0]
    _flip_a_chunk_byte(tank)
    refused(mirofish("reef", "--replay", reef, "--headless"), f"tank {tank.stem}")
    shutil.rmtree(reef)
    reef = copied(path, tmp_path)
    log = reef / "migrations.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["fish"] = int(first["fish"]) + 1  # a crossing the reef did not make
    log.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    refused(mirofish("reef", "--replay", reef, "--headless"), "the replay differs", "migration log")


# ---------------------------------------------------------------- turn-by-turn scenes


def _fork_argv(path: Path, scene: str) -> list[object] | None:
    """How to fork a recording of ``scene``; None for a scene whose fork says it has none (a
    scene that forks and is not named here fails: say here how it is forked)."""
    if scene == "negotiation":
        from mirofish.scenes.negotiation.recording import NegotiationRecording

        rec = NegotiationRecording(path)
        try:
            session = next(s["session"] for s in rec.sessions if rec.repair_turns(s["session"]))
            turn = rec.repair_turns(session)[0]
        finally:
            rec.close()
        return ["--at-turn", turn, "--session", session, "--repair", "offering_options"]
    refused(mirofish("fork", path), f"a {scene} recording has no fork")
    return None


@pytest.mark.parametrize("path", TURNS, ids=ids(TURNS))
def test_a_golden_turn_recording_replays_exports_and_forks(path, tmp_path):
    rec_path = copied(path, tmp_path)
    scene = header(rec_path)["scene"]
    if " " in entry(path).get("layout", ""):  # e.g. "turns_version 1": the container's version it names
        key, version = entry(path)["layout"].split()
        assert header(rec_path)[key] == int(version)
    out = ok(mirofish("replay", rec_path, "--headless"))
    assert out["scene"] == scene
    assert any(k.startswith("verified_") and v > 0 for k, v in out.items()), out
    ok(mirofish("export", rec_path, "--tables", tmp_path / "t", "--format", "csv"))
    assert any((tmp_path / "t").iterdir())
    argv = _fork_argv(rec_path, scene)
    if argv is not None:
        fork = tmp_path / "fork.db"
        ok(mirofish("fork", rec_path, *argv, "--record", fork))
        assert ok(mirofish("replay", fork, "--headless"))["scene"] == scene


@pytest.mark.parametrize("path", TURNS, ids=ids(TURNS))
def test_a_damaged_copy_of_a_golden_turn_recording_is_one_line_naming_it(path, tmp_path):
    damaged = copied(path, tmp_path)
    db = sqlite3.connect(damaged)
    tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
              if t != "header"]
    text = next(v for t in tables for row in db.execute(f"SELECT * FROM {t}") for v in row
                if isinstance(v, str) and len(v) > 64)  # a row of the scene's own, as stored
    db.close()
    raw = bytearray(damaged.read_bytes())
    at = raw.find(text[:48].encode())
    assert at > 0
    raw[at + 40] = ord("#") if raw[at + 40] != ord("#") else ord("%")
    damaged.write_bytes(bytes(raw))
    refused(mirofish("replay", damaged, "--headless"), str(damaged), "modified after it was written")
