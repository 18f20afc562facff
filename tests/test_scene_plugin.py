"""A scene from another package joins through the entry point group ``mirofish.scenes`` and gets
a command, recording, checked replay, fork, export tables and sweeps — nothing in mirofish/
changed. The package is tests/plugin_scene (a biased coin), installed with pip into a folder."""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """tests/plugin_scene installed by pip into a folder of its own (on PYTHONPATH for the runs)."""
    work = tmp_path_factory.mktemp("plugin")
    shutil.copytree(ROOT / "tests" / "plugin_scene", work / "src")  # pip builds in the copy, not in tests/
    target = work / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(target), str(work / "src")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (target / "mirofish_coins").is_dir() and list(target.glob("mirofish_coins-*.dist-info"))
    return target


def cli(plugin, cwd, *args, ok=True):
    env = {**os.environ, "PYTHONPATH": str(plugin)}
    done = subprocess.run([sys.executable, str(ROOT / "run.py"), *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def test_the_plugin_scene_records_replays_forks_exports_and_sweeps(plugin, tmp_path):
    assert "coins" in cli(plugin, tmp_path, "--help").stdout
    played = json.loads(cli(plugin, tmp_path, "coins", "--turns", "60", "--seed", "3", "--set", "bias=0.7",
                            "--record", "c.db").stdout)
    assert played["scene"] == "coins" and played["turns"] == 60 and 0.5 < played["heads_share"] < 0.9
    replayed = json.loads(cli(plugin, tmp_path, "replay", "c.db").stdout)
    assert replayed["verified_turns"] == 60 and replayed["heads_share"] == played["heads_share"]
    for flags, says in ((["--session", "1"], "--session does nothing in a coins recording's replay"),
                        (["--screenshot", "c.png"], "--screenshot does nothing in a coins recording's replay"),
                        (["--terminal"], "--terminal plays an aquarium recording")):  # (its replay reads none)
        refused = cli(plugin, tmp_path, "replay", "c.db", *flags, ok=False)
        assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [refused.stderr.strip()], flags
        assert says in refused.stderr and not refused.stdout and not (tmp_path / "c.png").exists(), refused.stderr

    forked = json.loads(cli(plugin, tmp_path, "fork", "c.db", "--at-turn", "20", "--change", "bias=1.0",
                            "--record", "f.db").stdout)
    assert forked["first_different_turn"] >= 20  # the turns before the fork are the recorded ones
    assert forked["fork"]["heads_share"] > forked["original"]["heads_share"]  # every flip from turn 20 is heads
    assert json.loads(cli(plugin, tmp_path, "replay", "f.db").stdout)["verified_turns"] == 60  # a fork replays

    table = json.loads(cli(plugin, tmp_path, "export", "c.db", "--tables", "tabs", "--format", "csv").stdout)
    assert table["tables"]["turns"]["rows"] == 60
    rows = (tmp_path / "tabs" / "turns.csv").read_text().splitlines()
    assert rows[0] == "turn,flip,guess,right" and len(rows) == 61

    (tmp_path / "coins.toml").write_text('scene = "coins"\nlength = 80\nseeds = {from = 1, count = 4}\n'
                                         '[params]\nbias = [0.2, 0.8]\n')
    swept = json.loads(cli(plugin, tmp_path, "sweep", "coins.toml", "--out", "sw", "--workers", "2").stdout)
    assert swept["runs"] == 8 and swept["failed"] == 0
    settings = (tmp_path / "sw" / "settings.csv").read_text().splitlines()
    assert settings[0].startswith("bias,seeds,heads_share mean,heads_share ci95")  # the scene's own figures
    low, high = (float(line.split(",")[2]) for line in settings[1:])
    assert low < 0.35 < 0.65 < high


@pytest.mark.parametrize("args, says", [
    (["coins", "--set", "colour=3"], "no setting 'colour' (its settings: bias, memory)"),
    (["coins", "--set", "bias=x"], "setting bias = 'x' is not a float"),
    (["coins", "--set", "bias=3.0"], "bias must be 0..1"),
    (["fork", "c.db", "--at", "5", "--fish", "1", "--plan", "forage"], "a coins forks with --at-turn N --change"),
    (["fork", "c.db", "--at-turn", "999", "--change", "bias=0.1"], "past the recording's last turn"),
    (["fork", "c.db", "--at-turn", "3", "--change", "shade=1"], "no setting 'shade'"),
])
def test_bad_input_to_a_plugin_scene_is_one_line(plugin, tmp_path, args, says):
    cli(plugin, tmp_path, "coins", "--turns", "20", "--record", "c.db")
    done = cli(plugin, tmp_path, *args, ok=False)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_tampered_plugin_recording_is_refused(plugin, tmp_path):
    import sqlite3

    cli(plugin, tmp_path, "coins", "--turns", "20", "--record", "c.db")
    db = sqlite3.connect(tmp_path / "c.db")
    db.execute("UPDATE turns SET data = ? WHERE turn = 5", (json.dumps({"flip": "edge"}),))
    db.commit()
    db.close()
    done = cli(plugin, tmp_path, "replay", "c.db", ok=False)
    assert done.returncode == 2 and "checksum" in done.stderr


def test_a_plugin_that_does_not_load_is_one_warning_and_the_rest_works(tmp_path):
    site = tmp_path / "site"
    (site / "broken_scene").mkdir(parents=True)
    (site / "broken_scene" / "__init__.py").write_text("raise RuntimeError('half-written plug-in')\n")
    info = site / "broken_scene-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-scene\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mirofish.scenes]\nbroken = broken_scene:SPEC\n")
    done = cli(site, tmp_path, "live", "--headless", "--ticks", "5")
    assert json.loads(done.stdout)["ticks"] == 5
    warned = [line for line in done.stderr.splitlines() if "plug-in" in line]
    assert len(warned) == 1 and "broken" in warned[0] and "half-written plug-in" in warned[0]


def test_a_metric_plugin_that_imports_the_recording_module_loads_and_records_beside(plugin, tmp_path):
    """The package's metric imports observe.recording at module level (which reads the metrics
    table while it is built): it loads, with no warning, shows in the run's JSON and a recording
    of the run replays (the recording's own columns are read by name)."""
    done = cli(plugin, tmp_path, "live", "--headless", "--ticks", "40", "--fish", "20", "--record", "r.mirofish")
    assert "does not load" not in done.stderr and "resting_share" in json.loads(done.stdout)["metrics"]
    again = cli(plugin, tmp_path, "replay", "r.mirofish", "--headless", "--verify")
    assert again.returncode == 0


def test_a_plan_type_plugin_reaches_the_prompt_the_picker_the_recording_and_forks(plugin, tmp_path):
    """The package's plan type (entry point group mirofish.plans, one row: drift) joins the table
    after the built-in rows, and its metric the HUD: the model's prompt lists it, the window's fork picker offers it, a
    recording names it among its goals, a fork to it replays and exports it by name — and
    every golden recording still replays, checked, with it (and the package's metric) loaded."""
    shown = cli(plugin, tmp_path, "--help")
    assert "does not load" not in shown.stderr
    env = {**os.environ, "PYTHONPATH": str(plugin), "SDL_VIDEODRIVER": "dummy"}
    code = ("import mirofish.config, mirofish.ui.app, mirofish.ui.scenes.aquarium; "  # the window's import order
            "from mirofish.brains.prompt import PLAN_PROMPT; from mirofish.ui.pickers import FORK_PLANS; "
            "from mirofish.fish.plans import GOAL_NAMES; from mirofish.ui.panels import HUD_METRICS; import json; "
            "print(json.dumps([PLAN_PROMPT, FORK_PLANS, GOAL_NAMES, [m.key for m in HUD_METRICS]]))")
    probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=120)
    prompt_text, fork_plans, goals, hud = json.loads(probe.stdout.strip().splitlines()[-1])
    assert hud[-1] == "resting_share"  # the package's metric has a HUD column (after the built-in ones)
    assert "\ndrift - let the water carry you\n" in prompt_text and "drift 25" in fork_plans
    assert goals[-1] == "drift" and goals.index("forage") == 1  # after the built-in rows: no code moves
    cli(plugin, tmp_path, "live", "--headless", "--ticks", "60", "--fish", "12", "--seed", "4",
        "--record", "r.mirofish")
    cli(plugin, tmp_path, "fork", "r.mirofish", "--at", "20", "--fish", "0", "--plan", "drift 25", "--ticks", "50",
        "--record", "f.mirofish")
    assert cli(plugin, tmp_path, "replay", "f.mirofish", "--headless", "--verify").returncode == 0
    cli(plugin, tmp_path, "export", "f.mirofish", "--tables", "tabs", "--format", "csv")
    decided = list(csv.DictReader((tmp_path / "tabs" / "decisions.csv").open()))
    assert [r["goal"] for r in decided if r["fish"] == "0" and r["tick"] == "20"] == ["drift"]
    for golden in sorted((ROOT / "tests" / "golden").glob("*.mirofish")):
        again = cli(plugin, tmp_path, "replay", str(golden), "--headless", "--verify", ok=False)
        assert again.returncode == 0, (golden.name, again.stderr)
        out = tmp_path / f"x-{golden.stem}"
        assert cli(plugin, tmp_path, "export", str(golden), "--tables", str(out), "--format", "csv",
                   ok=False).returncode == 0, golden.name
        forked = cli(plugin, tmp_path, "fork", str(golden), "--at", "20", "--fish", "1", "--plan", "drift 25",
                     "--ticks", "20", ok=False)  # forked to the plug-in's own plan type
        assert forked.returncode == 0, (golden.name, forked.stderr)


def test_a_plan_type_plugin_that_does_not_load_or_clashes_is_one_line_and_the_rest_works(tmp_path):
    site = tmp_path / "site"
    (site / "bad_plans").mkdir(parents=True)
    (site / "bad_plans" / "__init__.py").write_text(
        "from mirofish.fish.plantypes import PlanType\nFORAGE = PlanType('forage')\nNOT_ONE = 3\n"
        "MUTE = PlanType('mute', ticks=5)\n")
    info = site / "bad_plans-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-plans\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mirofish.plans]\nclash = bad_plans:FORAGE\nmute = bad_plans:MUTE\n"
                                           "number = bad_plans:NOT_ONE\n")
    done = cli(site, tmp_path, "live", "--headless", "--ticks", "5")
    assert json.loads(done.stdout)["ticks"] == 5
    warned = [line for line in done.stderr.splitlines() if "plug-in" in line]
    assert len(warned) == 3, done.stderr
    assert "clash" in warned[0] and "forage is declared twice" in warned[0]
    assert "mute" in warned[1] and "has no prompt line" in warned[1]  # a model would be offered a word it never saw
    assert "number" in warned[2] and "not a PlanType" in warned[2]


def test_a_sampled_metric_reads_the_run_s_config():
    """``Sample.cfg``: a metric's compute receives the run's whole config (here: the share of the
    tank's fish in the water, which needs fish.count), in a live run and in a replay."""
    from mirofish.config import load_config
    from mirofish.observe import metrics as mx
    from mirofish.session import LiveSession

    seen = []
    row = mx.Metric("in_water_share", "in water", "fish in the water per fish configured", "share", "{:.0%}",
                    "sample", lambda s: seen.append(s.cfg) or len(s.ids) / s.cfg.fish.count)
    saved = mx.METRICS
    try:
        mx.METRICS = (*saved, row)
        live = LiveSession(load_config(seed=2, **{"fish.count": 24}))
        live.run(40)
        assert seen and seen[-1] is live.world.cfg and seen[-1].fish.count == 24
        assert live.metrics.current()["in_water_share"] == 1.0
    finally:
        mx.METRICS = saved
