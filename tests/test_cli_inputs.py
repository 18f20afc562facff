"""A command's inputs stay inputs, and what it would ignore is refused: found by a newcomer's
fault campaign against the CLI (each case here failed before its fix: an input overwritten, or
exit 0 with nothing done).

Every refusal is one line on stderr and exit 2; the input file is left byte for byte.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_recording, refused

from mirofish.cli import main
from mirofish.fish.plans import DEFAULT

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    return cli_recording(tmp_path_factory, "inputs", 200)




def test_no_output_is_written_over_a_file_the_command_reads(rec, tmp_path, capsys):
    """A brain's source, an interventions file: --record over either is refused even with
    --overwrite (before: the file became a SQLite recording), and an unrelated path still works."""
    brain = tmp_path / "rb.py"
    shutil.copy(ROOT / "examples" / "rule_brain.py", brain)
    before = brain.read_bytes()
    refused(capsys, ["live", "--headless", "--ticks", "5", "--brain", f"{brain}:RuleBrain", "--record", brain,
                     "--overwrite"], "refusing to write the recording", "an input of this command")
    ivs = tmp_path / "iv.jsonl"
    ivs.write_text('{"tick": 110, "kind": "food", "x": 10, "y": 10}\n')
    refused(capsys, ["fork", rec, "--at", "100", "--ticks", "20", "--interventions", ivs, "--record", ivs,
                     "--overwrite"], "an input of this command")
    ruled = tmp_path / "ruled.mirofish"  # (a fork's --brain is for fish a user brain ran)
    assert main(["live", "--headless", "--ticks", "120", "--fish", "8", "--brain", f"{brain}:RuleBrain", "--record",
                 str(ruled)]) == 0
    refused(capsys, ["fork", ruled, "--at", "100", "--ticks", "20", "--fish", "3", "--plan", "forage", "--brain",
                     f"{brain}:RuleBrain", "--record", brain, "--overwrite"], "an input of this command")
    assert brain.read_bytes() == before and ivs.read_text().startswith('{"tick": 110')
    assert main(["fork", str(rec), "--at", "100", "--ticks", "20", "--interventions", str(ivs), "--record",
                 str(tmp_path / "out.mirofish")]) == 0


def test_a_sweeps_folder_is_not_its_own_tables_folder(tmp_path, capsys):
    spec = tmp_path / "sw.toml"
    spec.write_text('scene = "aquarium"\nlength = 20\nseeds = [1]\n')
    out = tmp_path / "swo"
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "1", "--record"]) == 0
    runs = (out / "runs.csv").read_bytes()
    refused(capsys, ["export", out, "--tables", out, "--format", "csv", "--overwrite"],
            "a folder this command reads")
    assert (out / "runs.csv").read_bytes() == runs
    for _ in range(2):  # a folder inside it is another folder: written, and again with --overwrite
        assert main(["export", str(out), "--tables", str(out / "tables"), "--format", "csv", "--overwrite"]) == 0
    assert (out / "tables" / "fish.csv").exists() and (out / "runs.csv").read_bytes() == runs


@pytest.mark.parametrize("t0,t1", [(500, 600), (20, 10), (10, 10)])
def test_trace_refuses_an_empty_range_or_one_outside_the_recording(rec, capsys, t0, t1):
    refused(capsys, ["trace", rec, "--fish", "3", "--from", t0, "--to", t1], f"tick range {t0}..{t1}",
            "(0..200)")


def test_trace_to_past_the_end_reads_to_the_end(rec, capsys):
    assert main(["trace", str(rec), "--fish", "3", "--from", "190", "--to", "900"]) == 0
    assert '"ticks": 10' in capsys.readouterr().out


@pytest.mark.parametrize("plan,word", [("rest -50", "'-50'"), ("explore east -5", "'-5'"), ("school 1.5", "'1.5'"),
                                       ("explore east 30 junk", "'junk'"), ("explore east 40 30 20", "3 numbers"),
                                       ("move_n 3", "hold move_n 3")])
def test_a_forks_plan_with_a_word_it_would_skip_is_refused(rec, capsys, plan, word):
    """Before: 'rest -50' forked 'rest until 10 energy' and 'explore east 30 junk' ignored junk."""
    refused(capsys, ["fork", rec, "--at", "100", "--ticks", "10", "--fish", "3", "--plan", plan], word)


def test_every_plan_the_tool_writes_or_offers_reads_back_strictly():
    """What describe() writes (influence's tables, a fork's summary) and the fork picker offers
    are read strictly to the same plan as leniently; a fork recording's header keeps the lenient
    reading (its plan was accepted when the fork was made)."""
    texts = [*DEFAULT.fork_plans(), "rest", "move_n", "hold move_n 5", "school 60", "explore e 30", "rest 10"]
    texts += [DEFAULT.describe(g, p, h) for g in range(len(DEFAULT.types)) for p in (0, 1) for h in (0, 1, 30)]
    for text in texts:
        assert DEFAULT.parse_plan(text, strict=True) == DEFAULT.parse_plan(text), text
    assert DEFAULT.parse_plan("explore east 30 junk") == DEFAULT.parse_plan("explore east 30")


def test_a_forks_intervention_after_its_last_tick_is_refused(rec, tmp_path, capsys):
    late = tmp_path / "late.jsonl"
    late.write_text('{"tick": 130, "kind": "food", "x": 10, "y": 10}\n')
    refused(capsys, ["fork", rec, "--at", "100", "--ticks", "20", "--interventions", late],
            "intervention at t130, after the fork ends at t120")
    last = tmp_path / "last.jsonl"  # the fork's last tick: it happens
    last.write_text('{"tick": 119, "kind": "food", "x": 10, "y": 10}\n')
    assert main(["fork", str(rec), "--at", "100", "--ticks", "20", "--interventions", str(last)]) == 0


def test_a_sweeps_unknown_figure_stops_it_after_the_first_run_with_its_rows_kept(tmp_path, capsys):
    spec = tmp_path / "sw.toml"
    spec.write_text('scene = "aquarium"\nlength = 20\nseeds = [1, 2, 3, 4]\nmetrics = ["metrics.school_sise.mean"]\n')
    out = tmp_path / "o"
    line = refused(capsys, ["sweep", spec, "--out", out, "--workers", "1"], "'metrics.school_sise.mean' is not a "
                   "figure", "did you mean metrics.school_size.mean")
    assert "stopped with" in line and (out / "runs.csv").exists()
    spec.write_text('scene = "aquarium"\nlength = 20\nseeds = [1]\n[params]\n"fish.count" = {from = 60, to = 20, '
                    'step = 20}\n')
    refused(capsys, ["sweep", spec, "--out", tmp_path / "o2"], "params.fish.count: from 60 to 20 is empty")


def test_window_flags_without_a_window_and_an_unused_prompt_are_refused(tmp_path, capsys):
    shot = tmp_path / "shot.png"
    refused(capsys, ["live", "--headless", "--ticks", "5", "--screenshot", shot], "--screenshot is for the window",
            "--headless")
    refused(capsys, ["live", "--terminal", "--ticks", "5", "--fps"], "--fps is for the window")
    refused(capsys, ["referential", "--headless", "--rounds", "5", "--size", "1280x720"], "--size is for the window")
    assert not shot.exists()
    refused(capsys, ["live", "--headless", "--ticks", "5", "--prompt", tmp_path / "nosuch.toml"],
            "no such prompt file")
    refused(capsys, ["live", "--headless", "--ticks", "5", "--prompt", tmp_path], "a folder")


def test_influence_without_pyarrow_writes_csv_and_names_its_own_flag(rec, tmp_path):
    """The README's influence command after the README's install (no [tables] extra): CSV, not
    'needs pyarrow'; a file given as --out is named as --out (it said --tables)."""
    script = ("import sys; sys.modules['pyarrow'] = None; from mirofish.cli import main; "
              "sys.exit(main(sys.argv[1:]))")
    args = [sys.executable, "-c", script, "influence", str(rec), "--outcome", "largest_school@150", "--window",
            "100:103", "--alternatives", "random:1", "--null-max", "20", "--workers", "1"]
    done = subprocess.run([*args, "--out", str(tmp_path / "why")], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "why" / "influence.csv").exists() and not (tmp_path / "why" / "influence.parquet").exists()
    bad = subprocess.run([*args, "--out", str(rec)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert bad.returncode == 2 and bad.stderr.strip().startswith(f"mirofish: --out {rec} is a file"), bad.stderr


def test_a_commands_inputs_are_its_own_not_the_next_calls(rec, tmp_path):
    """In one process (a notebook, the suite): after a command read a file, a library call may
    write it again (--overwrite), as before the command ran."""
    from mirofish.observe.paths import INPUTS, check_output

    copy = tmp_path / "again.mirofish"
    shutil.copy(rec, copy)
    assert main(["trace", str(copy), "--fish", "3", "--from", "0", "--to", "3"]) == 0
    assert not INPUTS
    assert check_output(copy, (), overwrite=True, what="recording", scene="aquarium") == copy


def test_two_outputs_of_one_command_never_share_a_path(tmp_path, capsys):
    """Before: --record X --log X truncated the log X (then refused), and --record A --screenshot A
    left one of them: now refused before anything is opened, the file untouched or not made."""
    log = tmp_path / "L.jsonl"
    assert main(["referential", "--headless", "--rounds", "20", "--log", str(log)]) == 0
    before = log.read_bytes()
    refused(capsys, ["referential", "--headless", "--rounds", "5", "--record", log, "--log", log, "--overwrite"],
            "--record and --log name the same file")
    assert log.read_bytes() == before
    new = tmp_path / "new.db"
    refused(capsys, ["referential", "--headless", "--rounds", "5", "--glossary", new, "--record", new],
            "--record and --glossary name the same file")
    refused(capsys, ["live", "--record", tmp_path / "A.png", "--screenshot", tmp_path / "A.png"],
            "--record and --screenshot name the same file")
    assert not new.exists() and not (tmp_path / "A.png").exists()


def test_a_game_setting_with_its_own_flag_is_set_by_the_flag(capsys):
    """--set rounds=… got past --rounds' bound (1,000,000) and quietly overrode --rounds."""
    refused(capsys, ["referential", "--headless", "--rounds", "5", "--set", "rounds=100000000000"], "use --rounds")


def test_a_prompt_named_in_the_config_is_checked_on_an_instinct_tank(capsys, tmp_path):
    refused(capsys, ["live", "--headless", "--ticks", "5", "--set", f"brain.prompt={tmp_path / 'no.toml'}"],
            "no such prompt file")


def test_glossary_check_against_a_dead_server_says_nothing_was_checked(tmp_path, capsys):
    """Before: exit 0 and every term reported lost, though no model answered."""
    g = tmp_path / "g.db"
    assert main(["referential", "--headless", "--rounds", "60", "--glossary", str(g)]) == 0
    capsys.readouterr()
    assert main(["glossary", "check", str(g), "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--rounds", "3",
                 "--timeout", "2"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("mirofish")]
    assert len(err) == 1 and "answered none of the" in err[0] and "no term was checked" in err[0], err


def test_a_brains_own_name_is_shown_on_one_line(tmp_path):
    brain = tmp_path / "named.py"
    brain.write_text("class Odd:\n    name = 'line1\\nline2\\x1b[31mRED'\n\n    def decide(self, ask):\n"
                     "        raise RuntimeError('no')\n")
    done = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "30", "--fish", "6", "--brain",
                           f"{brain}:Odd"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "line1" in line]
    assert warnings and all("line2" in w for w in warnings) and "\x1b" not in done.stderr, done.stderr


def test_a_file_another_run_is_writing_is_read_as_committed(tmp_path):
    """A turn-by-turn recording between two commits has no journal beside it, yet changes: read
    as immutable it was "damaged (database disk image is malformed)" to replay while its run went
    on. With the run's writer lock held, a reader sees each commit."""
    import sqlite3

    from mirofish.observe.paths import WriterLock, open_read_only

    db = tmp_path / "w.db"
    w = sqlite3.connect(db)
    w.execute("CREATE TABLE t (x)")
    w.execute("INSERT INTO t VALUES (1)")
    w.commit()
    lock = WriterLock(db)
    try:
        r = open_read_only(db)
        assert r.execute("SELECT count(*) FROM t").fetchone()[0] == 1
        w.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(2000)])
        w.commit()
        assert r.execute("SELECT count(*) FROM t").fetchone()[0] == 2001
        r.close()
    finally:
        lock.release()
        w.close()


def test_a_glossary_left_with_a_hot_journal_by_a_killed_run_is_read(tmp_path, capsys):
    """A run killed mid-write leaves X-journal; a read-only connection cannot roll it back, and
    every command called the glossary "not an SQLite database". Now SQLite rolls it back (the
    last committed state) and the glossary reads as it was saved."""
    g = tmp_path / "hot.db"
    assert main(["referential", "--headless", "--rounds", "50", "--glossary", str(g)]) == 0
    assert main(["glossary", str(g)]) == 0
    saved = json.loads(capsys.readouterr().out.splitlines()[-1])["terms"]
    kill = ("import sqlite3, os, sys; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA cache_size=1'); "
            "c.execute('BEGIN IMMEDIATE'); c.execute('UPDATE glossary SET usage_count = usage_count + 1'); "
            "c.execute('UPDATE meta SET value = value'); os._exit(9)")
    subprocess.run([sys.executable, "-c", kill, str(g)], check=False)
    assert Path(f"{g}-journal").stat().st_size > 0  # (the killed writer's journal, hot)
    assert main(["glossary", str(g)]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["terms"] == saved
    assert not Path(f"{g}-journal").exists()


@pytest.mark.parametrize("scene", ["referential", "negotiation", "handoff"])
def test_a_scenes_model_flags_without_model_agents_are_refused(capsys, scene):
    """Before: --base-url, --model, --prompt without --agents llm were read by nothing (exit 0)."""
    refused(capsys, [scene, "--headless", "--base-url", "http://127.0.0.1:9/v1"], "--base-url is for model agents")
    refused(capsys, [scene, "--headless", "--model", "m"], "--model is for model agents")


def test_reef_replay_and_glossary_name_what_is_wrong(tmp_path, capsys):
    f = tmp_path / "file.db"
    f.write_bytes(b"x")
    refused(capsys, ["reef", "--replay", f], "not a folder")
    refused(capsys, ["reef", "--replay", tmp_path, "--ticks", "40"], "--ticks is for a run")
    refused(capsys, ["glossary", tmp_path], "is a folder, not a glossary file")


def test_a_referential_model_that_never_answered_is_said_to_have_lost_its_turns():
    """Its turns are not played by the embedded agents (the warning said they were): they are lost —
    and a run whose model played no turn measured no game: one line, exit 2 (the JSON still printed)."""
    done = subprocess.run([sys.executable, "run.py", "referential", "--headless", "--rounds", "4", "--agents", "llm",
                           "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--timeout", "1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("mirofish")]
    assert len(said) == 1 and "played none of 8 turns" in said[0] and "every one was lost" in said[0], done.stderr
    assert "embedded agents played" not in done.stderr
    assert json.loads(done.stdout)["model_made"]["rounds"] == 4  # what was played is still printed


def test_frames_where_no_offscreen_window_counts_them_is_refused(rec, tmp_path, capsys):
    """--frames had a default (60), so a given one could not be told apart: with --headless or
    --terminal, reef --replay, or a window that runs until closed it was ignored (exit 0)."""
    refused(capsys, ["live", "--headless", "--ticks", "5", "--frames", "10"], "--frames is for the window",
            "leave out --headless")
    refused(capsys, ["replay", rec, "--terminal", "--frames", "10"], "--frames is for the window", "--terminal")
    refused(capsys, ["negotiation", "--headless", "--sessions", "1", "--frames", "10"], "--frames is for the window")
    refused(capsys, ["reef", "--replay", tmp_path, "--frames", "10"], "--frames is for the window", "reef --replay")
    refused(capsys, ["live", "--frames", "10"], "--frames counts the frames of --screenshot or --fps")
    done = subprocess.run([sys.executable, "run.py", "live", "--fps", "--fish", "10"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    assert done.returncode == 0 and json.loads(done.stdout.splitlines()[-1])["frames"] == 60, done.stderr


@pytest.mark.parametrize("layers,flag", [("none", ["--l2-every", "2"]), ("L1", ["--l2-every", "0"]),
                                         ("L1", ["--no-l2-triggers"]), ("none", ["--l2-source", "oracle"]),
                                         ("L1", ["--l2-source", "agent"]), ("none", ["--wire", "full"])])
def test_handoffs_layer_2_flags_on_an_arm_without_layer_2_are_refused(capsys, layers, flag):
    """They act only where layer 2 is sent (--wire: where any signal is); before, --layers none or L1
    ran with them read by nothing (exit 0). Only a given value is refused, not the default."""
    line = refused(capsys, ["handoff", "--headless", "--tasks", "2", "--layers", layers, *flag], f"{flag[0]} is",
                   f"--layers {layers}")
    assert "has none" in line or "sends no signals" in line
    assert main(["handoff", "--headless", "--tasks", "2", "--layers", "L1", "--wire", "compact"]) == 0
    assert main(["handoff", "--headless", "--tasks", "2", "--layers", "L1+2", *flag]) == 0


@pytest.mark.parametrize("condition", ["natural", "fixed"])
def test_review_without_invented_terms_is_refused(capsys, condition):
    """Only the dynamic condition's agents invent terms for a person to review; before, --review with
    --condition natural or fixed played the same game as without it (exit 0)."""
    refused(capsys, ["referential", "--headless", "--rounds", "5", "--review", "--condition", condition],
            "--review", f"--condition {condition} invents none")
    assert main(["referential", "--headless", "--rounds", "5", "--review"]) == 0  # (dynamic, the default)


def test_survey_brain_for_fish_no_user_brain_ran_is_refused(rec, tmp_path, capsys):
    """survey --brain gives the answers of fish a user brain ran; for an instinct recording's fish
    (they answer by template) it was read by nothing (exit 0), as is a group's for a group that no
    user brain ran."""
    rules = f"{ROOT / 'examples' / 'rule_brain.py'}:RuleBrain"
    questions = ROOT / "assets" / "questions" / "fish.toml"
    refused(capsys, ["survey", rec, "--at", "100", "--questions", questions, "--brain", rules],
            f"--brain {rules} answers for fish a user brain ran", "the instinct brain (answering by template)",
            "leave out --brain")
    ruled = tmp_path / "rules.mirofish"
    assert main(["live", "--headless", "--ticks", "60", "--fish", "8", "--brain", rules, "--record", str(ruled)]) == 0
    refused(capsys, ["survey", ruled, "--at", "30", "--questions", questions, "--brain", f"reds={rules}"],
            "no fish of group 'reds'", "give --brain SPEC")
    assert main(["survey", str(ruled), "--at", "30", "--questions", str(questions), "--brain", rules]) == 0


@pytest.fixture(scope="module")
def turn_recordings(tmp_path_factory):
    """A negotiation recording (4 sessions) and a referential game's."""
    d = tmp_path_factory.mktemp("turns")
    assert main(["negotiation", "--headless", "--sessions", "4", "--seed", "3", "--record", str(d / "neg.db")]) == 0
    assert main(["referential", "--headless", "--rounds", "30", "--record", str(d / "ref.db")]) == 0
    return d / "neg.db", d / "ref.db"


def test_a_negotiations_headless_replay_checks_the_session_asked_for(turn_recordings, capsys):
    """Before: replay NEG --session K --headless checked every session (and said so)."""
    from mirofish.scenes.negotiation.recording import NegotiationRecording

    neg, _ = turn_recordings
    rec = NegotiationRecording(neg)
    turns = {s["session"]: len(rec.turns(s["session"])) for s in rec.sessions}
    rec.close()
    capsys.readouterr()
    assert main(["replay", str(neg), "--headless", "--session", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["session"] == 2 and out["sessions"] == 1 and out["verified_turns"] == turns[2] < sum(turns.values())
    assert main(["replay", str(neg), "--headless"]) == 0
    assert json.loads(capsys.readouterr().out)["verified_turns"] == sum(turns.values())
    refused(capsys, ["replay", neg, "--headless", "--session", "9"], "--session 9 is not in this recording")


@pytest.mark.parametrize("which,flags,says", [
    ("ref", ["--session", "3"], "--session does nothing in a referential recording's replay"),
    ("ref", ["--headless", "--session", "3"], "--session does nothing in a referential recording's replay"),
    ("ref", ["--terminal"], "--terminal plays an aquarium recording"),
    ("neg", ["--headless", "--to-tick", "3"], "--to-tick does nothing in a negotiation recording's replay"),
    ("neg", ["--headless", "--reply-cache", "cache"], "--reply-cache does nothing in a negotiation recording's"),
    ("aq", ["--headless", "--session", "1"], "--session does nothing in an aquarium recording's replay"),
    ("aq", ["--headless", "--speed", "2"], "--speed does nothing in an aquarium recording's replay with --headless"),
    ("aq", ["--headless", "--at-tick", "50"], "--at-tick does nothing in an aquarium recording's replay with"),
    ("aq", ["--terminal", "--to-tick", "50"], "--to-tick does nothing in an aquarium recording's replay with"),
    ("aq", ["--headless", "--brain", "instinct"], "--brain does nothing in an aquarium recording's replay with"),
    ("aq", ["--headless", "--select", "3"], "--select does nothing in an aquarium recording's replay with"),
])
def test_a_replay_flag_the_recordings_replay_does_not_read_is_refused(rec, turn_recordings, tmp_path, capsys, which,
                                                                      flags, says):
    """replay's flags are every scene's: each is read by some replays, as they play (headless, in the
    terminal, in the window). Before, replay REF --session 3 and the others here ran as without it."""
    path = {"aq": rec, "neg": turn_recordings[0], "ref": turn_recordings[1]}[which]
    line = refused(capsys, ["replay", path, *[str(tmp_path / f) if f == "cache" else f for f in flags]], says)
    assert "it acts in" in line or "--terminal plays" in line
    assert not (tmp_path / "cache").exists()


def test_a_brain_still_loading_after_a_few_seconds_is_said_to_be_waited_for(tmp_path, capsys, monkeypatch):
    """A user brain's import, making and setup() each have LOAD_TIMEOUT_S (120 s); before, a run
    whose brain hung said nothing for those two minutes. Now one line once LOAD_NOTICE_S (5 s) has
    passed (both lowered here), then the run goes on — or, hung, stops with its one line."""
    from mirofish.brains import user

    monkeypatch.setattr(user, "LOAD_NOTICE_S", 0.3, raising=False)  # (raising=False: fails on the lines)
    monkeypatch.setattr(user, "LOAD_TIMEOUT_S", 2.0)
    brain = tmp_path / "slow.py"
    brain.write_text("import time\n\n\nclass Slow:\n    def setup(self, ctx):\n        time.sleep(1)\n\n"
                     "    def decide(self, ask):\n        return {'goal': ask.plans[0]}\n\n\n"
                     "class Hangs(Slow):\n    def setup(self, ctx):\n        time.sleep(10 ** 6)\n")
    run = ["live", "--headless", "--ticks", "5", "--fish", "5", "--set", "brain.warmup_timeout_s=1", "--brain"]
    capsys.readouterr()
    assert main([*run, f"{brain}:Slow"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"mirofish: loading brain {brain}:Slow: setup still running after 0.3 s; waiting (it is stopped after 2 s)"]
    assert main([*run, f"{brain}:Hangs"]) == 2
    waited, stopped = capsys.readouterr().err.splitlines()
    assert waited.startswith(f"mirofish: loading brain {brain}:Hangs: setup still running after 0.3 s")
    assert stopped == f"mirofish: brain {brain}:Hangs: setup did not return within 2 s"


@pytest.mark.parametrize("argv,flag", [(["negotiation", "--sessions", "3"], "--sessions"),
                                       (["negotiation", "--db", "neg.db"], "--db"),
                                       (["handoff", "--tasks", "3"], "--tasks")])
def test_a_headless_count_or_database_given_to_the_window_is_refused(capsys, tmp_path, monkeypatch, argv, flag):
    """The negotiation's and the handoff's windows play session after session until closed and keep
    no grounding database (their turns go to --record): before, --sessions, --db and --tasks there
    were taken and read by nothing. Refused before any window opens, and no file is made."""
    monkeypatch.chdir(tmp_path)
    refused(capsys, [*argv, "--screenshot", "shot.png"], f"{flag} is for --headless runs", "add --headless")
    assert not list(tmp_path.iterdir())


def test_a_forks_brain_for_fish_no_user_brain_ran_is_refused(rec, tmp_path, capsys):
    """fork --brain gives the brain of fish a user brain ran (a recording never loads code); an
    instinct recording's fork decides again with the instinct brain, so it was read by nothing
    (exit 0), as survey's was."""
    rules = f"{ROOT / 'examples' / 'rule_brain.py'}:RuleBrain"
    refused(capsys, ["fork", rec, "--at", "50", "--fish", "1", "--plan", "rest until 50 energy", "--ticks", "5",
                     "--brain", rules], f"mirofish fork: --brain {rules} answers for fish a user brain ran",
            "the instinct brain", "leave out --brain")
    ruled = tmp_path / "rules.mirofish"
    assert main(["live", "--headless", "--ticks", "60", "--fish", "8", "--brain", rules, "--record", str(ruled)]) == 0
    assert main(["fork", str(ruled), "--at", "30", "--fish", "1", "--plan", "rest until 50 energy", "--ticks", "5",
                 "--brain", rules]) == 0
