"""Bad inputs found by a third fault campaign (damaged files, FIFOs, devices, an interrupted run):
each is one true line on stderr naming the file and exit 2 — never a hang, a traceback, an
"unexpected error", or exit 0 with a wrong result. Each test failed before its fix.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import cli_recording, refused

from mirofish.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    return cli_recording(tmp_path_factory, "damaged", 300)


PLAN = ('[[plan]]\nname = "drift"\nticks = 20\nevents = ["planned", "hungry"]\nsteer = [{align = ["alignment", 1.0]}]\n'
        'prompt = "PROMPT"\nfits = "fish_in_view"\nfork = ["drift {ticks}"]\nwords = ["drift"]\ndeed = "along"\n'
        'utility = "3 * company - 0.2"\n')


def test_plan_types_from_a_fifo_a_device_or_a_huge_file_are_refused_unread(tmp_path, capsys):
    """A2: ``--plan-types`` reads by the one rule for input files (before: a FIFO hung, /dev/zero
    was read until memory ran out)."""
    fifo = tmp_path / "plans.toml"
    os.mkfifo(fifo)
    live = ["live", "--headless", "--ticks", "5", "--plan-types"]
    refused(capsys, [*live, fifo], f"plan types file {fifo} is a FIFO, not a file")
    refused(capsys, [*live, "/dev/zero"], "plan types file /dev/zero is a device, not a file")
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(5_000_000)
    refused(capsys, [*live, big], f"plan types file {big} is 5,000,000 bytes, over the 4 MB limit")


def test_a_plan_types_prompt_too_long_is_refused_with_the_limit(tmp_path, capsys):
    """A17: the true reason and the limit (before: "prompt is a text" for any text too long)."""
    rows = tmp_path / "long.toml"
    rows.write_text(PLAN.replace("PROMPT", "y" * 3000))
    refused(capsys, ["live", "--headless", "--ticks", "5", "--plan-types", rows],
            "plan 1: plan type drift: prompt is 3,000 characters, over the limit of 200")
    rows.write_text(PLAN.replace("PROMPT", "y" * 200))
    assert main(["live", "--headless", "--ticks", "5", "--plan-types", str(rows)]) == 0


@pytest.fixture
def glossary(tmp_path):
    path = tmp_path / "g.db"
    assert main(["referential", "--headless", "--rounds", "10", "--glossary", str(path)]) == 0
    return path


def _sql(path, statement):
    db = sqlite3.connect(path)
    db.execute(statement)
    db.commit()
    db.close()


def test_a_glossary_count_past_what_sqlite_holds_is_damage_named(glossary, capsys):
    """A8: before, "unexpected error: OverflowError", exit 1."""
    _sql(glossary, "UPDATE glossary SET usage_count = 9223372036854775807 WHERE id = 1")
    before = glossary.read_bytes()
    for argv in (["referential", "--headless", "--rounds", "5", "--glossary", glossary], ["glossary", glossary]):
        refused(capsys, argv, f"glossary file {glossary} is damaged (term row 1: usage_count 9223372036854775807 "
                              f"is outside 0..")
    assert glossary.read_bytes() == before


def test_a_glossarys_garbled_meta_row_is_damage_named(glossary, capsys):
    """A9: before, only "invalid literal for int() with base 10: '{{{'"."""
    _sql(glossary, "UPDATE meta SET value = '{{{'")
    refused(capsys, ["referential", "--headless", "--rounds", "5", "--glossary", glossary],
            f"glossary file {glossary} is damaged (meta rounds_played: invalid literal")


def test_a_resumed_sweep_with_a_garbled_row_names_its_file(tmp_path, capsys):
    """A9: before, only "Expecting ',' delimiter …" (the JSON error, no file)."""
    spec = tmp_path / "sw.toml"
    spec.write_text('scene = "aquarium"\nlength = 20\nseeds = [1, 2]\nmetrics = ["mean_energy"]\n')
    out = tmp_path / "swo"
    argv = ["sweep", spec, "--out", out, "--workers", "1"]
    assert main([str(a) for a in argv]) == 0
    _sql(out / "runs.sqlite", "UPDATE runs SET summary = '{not json' WHERE rowid = 1")
    refused(capsys, argv, f"sweep results {out / 'runs.sqlite'} are damaged (run row 1: ")


def test_a_fish_taken_out_twice_is_refused_and_nothing_is_recorded(rec, tmp_path, capsys):
    """A12: the second removal did nothing and was reported and recorded as done; now refused
    before the fork runs (a fish added into its room in between may be taken out again)."""
    refused(capsys, ["fork", rec, "--at", "100", "--ticks", "50", "--remove-fish", "3", "--remove-fish", "3"],
            "remove at t100: fish 3 is already out of the water")
    ivs = tmp_path / "rm2.jsonl"
    ivs.write_text('{"tick": 120, "kind": "remove", "fish": 3}\n{"tick": 121, "kind": "remove", "fish": 3}\n')
    out = tmp_path / "rt.mirofish"
    refused(capsys, ["fork", rec, "--at", "100", "--ticks", "50", "--interventions", ivs, "--record", out],
            "remove at t121: fish 3 is already out of the water")
    assert not out.exists()
    ivs.write_text('{"tick": 120, "kind": "remove", "fish": 3}\n{"tick": 121, "kind": "add", "x": 5, "y": 5}\n'
                   '{"tick": 122, "kind": "remove", "fish": 3}\n')
    capsys.readouterr()
    assert main(["fork", str(rec), "--at", "100", "--ticks", "50", "--interventions", str(ivs)]) == 0
    assert "fish 3 taken out at t122" in json.loads(capsys.readouterr().out)["action"]


def test_verify_reads_every_keyframe_of_a_recording_without_a_checksum(rec, tmp_path, capsys):
    """A15: a killed run's recording (no checksum) with one keyframe cut short passed --verify,
    which read only the first keyframe, while --to-tick called it damaged."""
    cut = tmp_path / "cut.mirofish"
    cut.write_bytes(rec.read_bytes())
    db = sqlite3.connect(cut)
    db.execute("DELETE FROM header WHERE key = 'checksum'")
    data = db.execute("SELECT data FROM keyframes WHERE tick = 200").fetchone()[0]
    db.execute("UPDATE keyframes SET data = ? WHERE tick = 200", (data[: len(data) // 2],))
    db.commit()
    db.close()
    for argv in (["--verify"], ["--to-tick", "250"]):
        refused(capsys, ["replay", cut, "--headless", *argv], "recording is damaged (keyframe 200: ", str(cut))
    capsys.readouterr()
    assert main(["replay", str(rec), "--headless", "--verify"]) == 0  # an undamaged one still verifies
    assert json.loads(capsys.readouterr().out)["verified_ticks"] == 300


def test_an_interrupted_runs_summary_is_its_recordings_last_tick(tmp_path):
    """A16: Ctrl-C after the world stepped but before the recorder had the frame gave a summary
    one tick (and its hash) past the recording, in about half the tries; now a tick is whole."""
    from mirofish.observe.recording import Recording
    from mirofish.session import ReplaySession

    for k in range(4):
        path = tmp_path / f"int{k}.mirofish"
        # (a shell that started pytest in the background ignores SIGINT, and a child would inherit that)
        proc = subprocess.Popen([sys.executable, str(ROOT / "run.py"), "live", "--headless", "--ticks", "10000000",
                                 "--record", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 30
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.7 + 0.1 * k)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130 and "mirofish: interrupted" in err, err
        summary = json.loads(out)
        assert summary["interrupted"] is True and summary["ticks"] > 0
        kept = Recording(path)
        assert summary["ticks"] == kept.last_tick, (summary["ticks"], kept.last_tick)
        player = ReplaySession(kept)
        player.seek(kept.last_tick)
        assert summary["final_state_hash"] == player.state_hash()
        player.close()


def test_a_fifo_given_as_a_glossary_or_a_brains_file_is_named_for_what_it_is(tmp_path, capsys):
    """A FIFO (or a device) where a glossary or a brain's FILE.py is expected was "file not found"
    — untrue, and the path exists; it is said for what it is. A missing one is still not found."""
    fifo, brain = tmp_path / "g.db", tmp_path / "b.py"
    os.mkfifo(fifo)
    os.mkfifo(brain)
    refused(capsys, ["glossary", fifo], f"glossary {fifo} is a FIFO, not a glossary file")
    refused(capsys, ["glossary", "review", fifo], "is a FIFO")
    refused(capsys, ["live", "--headless", "--ticks", "5", "--brain", f"{brain}:Brain"], f"{brain} is a FIFO",
            "not a Python file")
    refused(capsys, ["glossary", tmp_path / "none.db"], "glossary file not found")


def test_influence_and_survey_name_only_the_scenes_they_read(tmp_path, capsys):
    """They read a scene's ticks: a referential recording's refusal named negotiation as a scene
    they are for, and a negotiation recording was then refused ("reads aquarium recordings")."""
    neg, ref = tmp_path / "neg.db", tmp_path / "ref.db"
    assert main(["negotiation", "--headless", "--sessions", "2", "--record", str(neg)]) == 0
    assert main(["referential", "--headless", "--rounds", "10", "--record", str(ref)]) == 0
    questions = ROOT / "assets" / "questions" / "fish.toml"
    for rec in (neg, ref):
        for argv in (["influence", rec, "--outcome", "largest_school@20"],
                     ["survey", rec, "--at", "1", "--questions", questions]):
            line = refused(capsys, argv, f"has no {argv[0]} ({argv[0]} is for aquarium)")
            assert "negotiation)" not in line


def test_a_config_saved_with_a_byte_order_mark_reads_as_without(tmp_path, capsys):
    """Windows' Notepad starts a UTF-8 file with a byte-order mark: such a config was refused
    ("Invalid statement (at line 1, column 1)")."""
    cfg = tmp_path / "bom.toml"
    cfg.write_bytes(b"\xef\xbb\xbf[fish]\ncount = 7\n")
    capsys.readouterr()
    assert main(["live", "--headless", "--ticks", "3", "--config", str(cfg)]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["fish"] == 7


def test_an_interventions_file_reads_end_of_line_comments_and_refuses_keys_read_by_nothing(rec, tmp_path, capsys):
    """docs/live-past.md allows # comments; one after the object was "not JSON (Extra data)". A
    misspelt key ("trait" for "traits") and a key given twice were read by nothing, silently."""
    good = tmp_path / "good.jsonl"
    good.write_text('{"tick": 110, "kind": "food", "x": 10, "y": 10}  # a handful for the school\n')
    capsys.readouterr()
    assert main(["fork", str(rec), "--at", "100", "--ticks", "20", "--interventions", str(good)]) == 0
    for line, words in (('{"tick": 110, "kind": "add", "x": 12, "y": 10, "trait": [1, 2, 3, 4, 5]}',
                         ("line 1: unknown key 'trait'", "reads tick, kind, x, y, traits")),
                        ('{"tick": 110, "kind": "food", "x": 10, "x": 11, "y": 10}', ("line 1: key 'x' given twice",))):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(line + "\n")
        refused(capsys, ["fork", rec, "--at", "100", "--ticks", "20", "--interventions", bad], str(bad), *words)


@pytest.mark.parametrize("utility, words", [("1 / 0", "1 / 0 divides by zero"),
                                            ("1e999 - 1e999", "beyond a double's range")])
def test_a_plan_types_utility_that_is_never_a_number_is_refused(tmp_path, capsys, utility, words):
    """A utility of 1 / 0 (inf for every fish) or 1e999 - 1e999 (NaN) was taken, and the planner
    then chose by inf or NaN; ** was refused, these were not."""
    rows = tmp_path / "rows.toml"
    rows.write_text(PLAN.replace("PROMPT", "drift along").replace('"3 * company - 0.2"', f'"{utility}"'))
    refused(capsys, ["live", "--headless", "--ticks", "5", "--plan-types", rows], words)


def test_a_sweep_whose_store_was_cut_short_says_damaged_and_overwrite_starts_afresh(tmp_path, capsys):
    """A runs.sqlite cut short (a full disk, a copy stopped half-way) was "not a sweep's results
    (not an SQLite database)", with --overwrite too: the folder could be neither resumed nor
    started again. A file that is no SQLite file at all is still refused, --overwrite or not."""
    spec = tmp_path / "sw.toml"
    spec.write_text('scene = "aquarium"\nlength = 20\nseeds = [1, 2]\nmetrics = ["mean_energy"]\n')
    out = tmp_path / "swo"
    argv = ["sweep", spec, "--out", out, "--workers", "1"]
    assert main([str(a) for a in argv]) == 0
    store = out / "runs.sqlite"
    with open(store, "r+b") as f:
        f.truncate(store.stat().st_size // 2)
    refused(capsys, argv, f"{store} is damaged", "--overwrite starts the sweep afresh")
    capsys.readouterr()
    assert main([str(a) for a in [*argv, "--overwrite"]]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["ran_now"] == 2
    store.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    refused(capsys, [*argv, "--overwrite"], "is not a sweep's results")


def test_a_mirofish_file_of_another_kind_given_as_a_recording_is_named_for_what_it_is(tmp_path, capsys):
    """A negotiation's --db given to replay was "damaged or not a MiroFish recording (no such
    table: header)": it is neither damaged nor foreign."""
    db = tmp_path / "n.db"
    assert main(["negotiation", "--headless", "--sessions", "2", "--db", str(db)]) == 0
    refused(capsys, ["replay", db, "--headless"], f"{db} is a negotiation's grounding database (--db), not a recording")


@pytest.mark.parametrize("keep", [0.96, 0.5, 0.02])
def test_a_truncated_recording_says_so_plainly(rec, tmp_path, capsys, keep):
    """A recording cut short (a copy or a download cut off, a full disk) is named damaged and
    truncated, with how much of it is there (before: "a row of its header is not text (name None,
    value NULL)" when cut near its end, "database disk image is malformed" elsewhere)."""
    whole = rec.read_bytes()
    cut = tmp_path / "cut.mirofish"
    cut.write_bytes(whole[: int(len(whole) * keep) // 512 * 512])
    for argv in (["replay", cut, "--headless"], ["report", cut, "--fish", "0"]):
        line = refused(capsys, argv, "recording is damaged: the file is truncated",
                       f"of its {len(whole):,} bytes", str(cut))
        assert "None" not in line and "NULL" not in line and "malformed" not in line, line


@pytest.mark.parametrize("lines, bad, says", [
    (['{"tick": 110, "kind": "food", "x": 5, "y": 5}', '{"tick": 120, "kind": "food", "x": 500, "y": 5}'], 2,
     "500,5 is outside the tank (0..95, 0..53)"),
    (['{"tick": 110, "kind": "rock", "x": -1, "y": 5}'], 1, "-1,5 is outside the tank"),
    (['# a comment', '{"tick": 110, "kind": "remove", "fish": 999}'], 2, "remove: no fish 999 in this tank"),
    (['{"tick": 110, "kind": "remove", "fish": 3}', '{"tick": 115, "kind": "remove", "fish": 3}'], 2,
     "remove at t115: fish 3 is already out of the water"),
    (['{"tick": 110, "kind": "tune", "key": "food.spawn_rate", "value": -5}'], 1, "food.spawn_rate: "),
    # the tank's 60 rooms: two fish taken out, three added — the third has no room when the fork reaches t120
    (['{"tick": 110, "kind": "remove", "fish": 1}', '{"tick": 110, "kind": "remove", "fish": 2}',
      '{"tick": 120, "kind": "add", "x": 5, "y": 5}', '{"tick": 120, "kind": "add", "x": 6, "y": 5}',
      '{"tick": 120, "kind": "add", "x": 7, "y": 5}'], 5, "no room for another fish"),
])
def test_an_intervention_the_tank_refuses_names_its_file_and_line(rec, tmp_path, capsys, lines, bad, says):
    """Refusals of an interventions file's line against the tank — a place outside it, a fish not
    there or taken out twice, a value out of range, an added fish with no room — name the file and
    the line, as a line that is no intervention does (before: "500,5 is outside the tank" alone).
    What the fork recorded before the refusal is kept."""
    ivs = tmp_path / "iv.jsonl"
    ivs.write_text("\n".join(lines) + "\n")
    out = tmp_path / "f.mirofish"
    refused(capsys, ["fork", rec, "--at", "100", "--ticks", "40", "--interventions", ivs, "--record", out],
            f"mirofish: {ivs} line {bad}: {says}")
    if says.startswith("no room"):  # refused at t120, as the fork ran: its ticks until then kept
        assert main(["replay", str(out), "--headless"]) == 0
        assert json.loads(capsys.readouterr().out)["last_tick"] == 120
    refused(capsys, ["fork", rec, "--at", "100", "--ticks", "40", "--drop-food", "500,5"],
            "mirofish: --drop-food 500,5: 500,5 is outside the tank")
