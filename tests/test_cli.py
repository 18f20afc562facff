"""The command line as a user runs it: JSON out, one-line errors, exit code 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args, timeout=60):
    return subprocess.run([sys.executable, str(ROOT / "run.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_headless_prints_one_json_summary_last():
    out = run("live", "--headless", "--ticks", "200", "--fish", "30", "--seed", "4")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    for key in ("ticks", "fish", "seed", "ticks_per_sec", "final_state_hash", "mean_energy", "low_energy_fish",
                "max_stuck_ticks", "decisions_by_tier", "metrics"):
        assert key in summary
    assert summary["ticks"] == 200 and summary["fish"] == 30 and summary["seed"] == 4
    for key in ("action_entropy", "conflict_rate", "schooling_degree", "tokens_per_decision",
                "decision_latency_p95_ms", "fallback_rate"):
        assert set(summary["metrics"][key]) == {"current", "mean"}
    assert summary["decisions_by_tier"]["instinct"] > 0


def test_ascii_frames_then_json():
    out = run("live", "--headless", "--ticks", "20", "--ascii", "10", "--set", "world.width=30",
              "--set", "world.height=16", "--fish", "5")
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 0
    assert lines[0] == "#" * 30 and sum(1 for line in lines if line.startswith("tick ")) == 2
    json.loads(lines[-1])


def test_config_file_and_set(tmp_path):
    conf = tmp_path / "small.toml"
    conf.write_text("[world]\nwidth = 40\nheight = 20\n[fish]\ncount = 8\n")
    out = run("live", "--headless", "--ticks", "10", "--config", str(conf), "--set", "food.spawn_rate=0.001")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1])["fish"] == 8


@pytest.mark.parametrize("args, needle", [
    (["live", "--headless", "--fish", "-3"], "--fish"),
    (["live", "--headless", "--set", "food.spawn_rate=abc"], "food.spawn_rate"),
    (["live", "--headless", "--bogus"], "--bogus"),
    (["live", "--headless", "--config", "/no/such/file.toml"], "/no/such/file.toml"),
    (["live", "--headless", "--ticks", "zero"], "--ticks"),
    (["live", "--headless", "--set", "fish.count=0"], "fish.count"),
    (["live", "--headless", "--fish", "100000"], "fish"),
    (["fly"], "fly"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle):
    out = run(*args)
    assert out.returncode == 2
    err = out.stderr.strip()
    assert len(err.splitlines()) == 1 and needle in err
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_terminal_view_runs_and_stops_at_ticks():
    out = run("live", "--terminal", "--ticks", "6", "--speed", "64", "--fish", "5", timeout=30)
    assert out.returncode == 0, out.stderr
    assert "schooling" in out.stdout and json.loads(out.stdout.strip().splitlines()[-1])["ticks"] == 6


DEEP_TOML = "x = " + "[" * 3000 + "]" * 3000 + "\n"


@pytest.mark.parametrize("args, needle", [
    # values from the reliability campaign that used to end in exit 1 (its case 5)
    (["live", "--headless", "--set", "food.energy=inf"], "food.energy"),
    (["live", "--headless", "--set", "fish.max_energy=1e300"], "fish.max_energy"),
    (["live", "--headless", "--set", "fish.start_age_max=1e23"], "fish.start_age_max"),
    (["live", "--headless", "--set", "brain.request_timeout_s=1e23"], "brain.request_timeout_s"),
    (["live", "--headless", "--set", "metrics.window=1000000000"], "metrics.window"),
    (["live", "--headless", "--config", "{deep}"], "nested"),
    (["live", "--headless", "--ticks", "5", "--record", "{tmp}"], "directory"),
    (["live", "--headless", "--ticks", "5", "--record", ""], "empty"),
    (["live", "--headless", "--ticks", "5", "--record", "{tmp}/" + "x" * 300 + ".db"], "too long"),
    (["referential", "--headless", "--rounds", "5", "--log", "{tmp}"], "directory"),
    (["live", "--headless", "--select", "60"], "--select"),
    (["live", "--headless", "--base-url", "http://127.0.0.1:1/v1\nX-Evil: 1", "--model", "m",
      "--brain", "llm"], "base_url"),
    (["glossary", "{tmp}/g.db", "--diff", "1", str(2**63)], "--diff"),
    # … and the two that never ended (case 11)
    (["live", "--frames", str(2**63), "--fps"], "--frames"),
    (["live", "--screenshot", ""], "empty"),
])
def test_the_campaigns_exit_1_cases_are_one_line_exit_2(tmp_path, args, needle):
    deep = tmp_path / "deep.toml"
    deep.write_text(DEEP_TOML)
    args = [a.replace("{deep}", str(deep)).replace("{tmp}", str(tmp_path)) for a in args]
    out = run(*args)
    err = out.stderr.strip()
    assert out.returncode == 2 and len(err.splitlines()) == 1, (out.returncode, err)
    assert needle in err and "Traceback" not in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.toml"]  # nothing was written


def test_every_argument_of_every_command_has_help():
    import argparse

    from mirofish.cli import build_parser

    missing = []
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += [f"{name} {a.option_strings or a.dest}" for a in sub._actions
                            if not a.help and not isinstance(a, argparse._HelpAction)]
    assert not missing, missing


def test_every_commands_help_says_what_it_does():
    """``run.py clip --help`` (any command's) opens with what the command does, the line
    ``run.py --help`` lists it with — before, only its usage and flags."""
    import argparse

    from mirofish.cli import build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    listed = {c.dest: c.help for c in sub._choices_actions}
    for name, parser in sub.choices.items():
        assert listed[name] and "".join(listed[name].split()) in "".join(parser.format_help().split()), name
    done = run("clip", "--help")
    assert done.returncode == 0 and "draw a stretch of a recording" in done.stdout
