"""Figures per group of a mixed tank, as a user reads them: the run summary, report, diff and
the window's rings (examples/mixed.toml: 30 instinct fish and 30 rule-brain fish)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from mirofish.cli import main
from mirofish.config import load_config

ROOT = Path(__file__).resolve().parent.parent


def mixed_toml(tmp_path: Path) -> Path:
    cfg = tmp_path / "mixed.toml"
    text = (ROOT / "examples" / "mixed.toml").read_text()
    cfg.write_text(text.replace("examples/rule_brain.py", str(ROOT / "examples" / "rule_brain.py")))
    return cfg


def last_json(out: str) -> dict:
    return json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])


def test_the_summary_report_and_diff_split_a_mixed_tank_per_group(capsys, tmp_path):
    cfg = mixed_toml(tmp_path)
    a, b = tmp_path / "a.mirofish", tmp_path / "b.mirofish"
    assert main(["live", "--headless", "--ticks", "200", "--config", str(cfg), "--record", str(a)]) == 0
    run = last_json(capsys.readouterr().out)
    groups = run["groups"]
    assert {k: g["fish"] for k, g in groups.items()} == {"instinct": 30, "rules": 30}
    assert groups["instinct"]["brain"] == "instinct" and groups["rules"]["brain"] == "RuleBrain"
    assert groups["rules"]["decisions"] == {"user": run["decisions_by_tier"]["user"]}
    final = (30 * groups["instinct"]["final_energy"] + 30 * groups["rules"]["final_energy"]) / 60
    assert abs(final - run["mean_energy"]) < 0.02  # the groups' energies make the tank's
    assert 0 <= groups["rules"]["schooling"] <= 1 and groups["rules"]["eats_per_fish_per_1000_ticks"] > 0
    assert main(["live", "--headless", "--ticks", "200", "--config", str(cfg), "--seed", "9",
                 "--record", str(b)]) == 0
    capsys.readouterr()
    assert main(["report", str(a), "--fish", "45"]) == 0
    report = capsys.readouterr().out
    assert "group: rules (RuleBrain)" in report and "groups over the range:" in report
    assert main(["diff", str(a), str(b)]) == 0
    diff = capsys.readouterr().out
    assert "groups, A" in diff and "groups, B" in diff and diff.count("RuleBrain") == 2
    assert main(["diff", str(a), str(b), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["a"]["groups"]["rules"]["fish"] == 30 and d["a"]["groups"] != d["b"]["groups"]


def test_a_tank_without_groups_has_no_group_figures(capsys):
    assert main(["live", "--headless", "--ticks", "20", "--fish", "10"]) == 0
    assert "groups" not in last_json(capsys.readouterr().out)


def test_the_window_rings_each_groups_fish_in_its_colour(tmp_path):
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    from mirofish.ui.app import App
    from mirofish.ui.scenes.aquarium import AquariumScene

    cfg = load_config(mixed_toml(tmp_path), seed=7)
    scene = AquariumScene.live(cfg, past=False)
    app = App([scene], (1280, 720), offscreen=True)
    try:
        app.run(frames=3, fixed_dt=1 / 30, fps_cap=0)
        app.frame(0.0)
        r = scene.pane.renderer
        shot = np.transpose(np.asarray(__import__("pygame").surfarray.array3d(app.screen)), (1, 0, 2))
        for fish, colour in ((3, (0x5A, 0xB4, 0xFF)), (40, (0xFF, 0xA0, 0x40))):
            px, py = r.to_px(float(scene.view.x[fish]), float(scene.view.y[fish]))
            rad = max(5, int(r.cell * 0.95))
            box = shot[int(py) - rad - 2:int(py) + rad + 3, int(px) - rad - 2:int(px) + rad + 3].reshape(-1, 3)
            assert np.any(np.all(np.abs(box.astype(int) - colour) <= 8, axis=1)), f"no ring around fish {fish}"
    finally:
        scene.close()


def test_a_sweep_splits_its_figures_per_group_with_intervals(tmp_path, capsys):
    import csv
    import json
    from pathlib import Path

    from mirofish.cli import main

    rules = Path(__file__).resolve().parent.parent / "examples" / "rule_brain.py"
    spec = tmp_path / "groups.toml"
    spec.write_text(
        'scene = "aquarium"\nlength = 80\nseeds = {from = 1, count = 2}\n'
        'metrics = ["groups.rules.eats_per_fish_per_1000_ticks", "groups.instinct.decisions.instinct",'
        ' "groups.rules.decisions.user"]\n'
        '[params]\n"fish.count" = [20]\n'
        f'"fish.groups" = [[{{name = "instinct", share = 0.5}}, {{name = "rules", share = 0.5, '
        f'brain = "{rules}:RuleBrain"}}]]\n')
    assert main(["sweep", str(spec), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    (row,) = csv.DictReader(Path(out["settings_csv"]).read_text().splitlines())
    assert float(row["groups.instinct.decisions.instinct mean"]) > 0  # each group's own brain decided
    assert float(row["groups.rules.decisions.user mean"]) > 0
    assert row["groups.rules.eats_per_fish_per_1000_ticks ci95"] != ""


def test_export_tables_name_each_row_s_group(tmp_path, capsys):
    import csv
    from pathlib import Path

    from mirofish.cli import main

    root = Path(__file__).resolve().parent.parent
    rec = tmp_path / "mixed.mirofish"
    assert main(["live", "--headless", "--ticks", "60", "--config", str(root / "examples" / "mixed.toml"),
                 "--record", str(rec)]) == 0
    assert main(["export", str(rec), "--tables", str(tmp_path / "t"), "--format", "csv"]) == 0
    capsys.readouterr()
    for table in ("decisions", "fish"):
        rows = list(csv.DictReader((tmp_path / "t" / f"{table}.csv").read_text().splitlines()))
        assert {r["group"] for r in rows} == {"instinct", "rules"}, table
        if table == "decisions":  # the rule fish decide as users, the instinct fish as the instinct
            assert {r["tier"] for r in rows if r["group"] == "rules"} <= {"user", "fallback"}
            assert {r["tier"] for r in rows if r["group"] == "instinct"} == {"instinct"}


def test_each_group_has_its_own_word_and_deed(capsys):
    import json
    from pathlib import Path

    from mirofish.cli import main

    root = Path(__file__).resolve().parent.parent
    assert main(["live", "--headless", "--ticks", "150", "--config", str(root / "examples" / "mixed.toml")]) == 0
    groups = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["groups"]
    rules, instinct = groups["rules"]["word_and_deed"], groups["instinct"]["word_and_deed"]
    assert rules["thoughts_judged"] > 0 and rules["word_agrees"] is not None  # the rule brain says why
    assert instinct["thoughts_judged"] == 0 and instinct["word_agrees"] is None  # the instinct writes no thought
    assert rules["plans_judged"] > 0 and instinct["plans_judged"] > 0


def test_the_window_charts_and_legend_split_a_mixed_tank_per_group_as_of_the_tick_shown(tmp_path):
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    from mirofish.observe.groups import groups_now
    from mirofish.ui.app import App
    from mirofish.ui.charts import group_key
    from mirofish.ui.scenes.aquarium import AquariumScene

    cfg = load_config(mixed_toml(tmp_path), seed=7)
    scene = AquariumScene.live(cfg)
    app = App([scene], (1280, 720), offscreen=True)
    try:
        for _ in range(80):
            scene.step()
        tank = scene
        now = groups_now(tank.cfg, tank.view, tank.shown.metrics)
        assert [(name, n) for _, name, n, _, _ in now] == [("instinct", 30), ("rules", 30)]
        # the groups' schooling degrees, weighted by their fish, make the tank's (the same test)
        whole = tank.shown.metrics.schooling_now()
        assert abs(sum(n * s for _, _, n, _, s in now) / 60 - whole) < 1e-9
        assert any(s > 0 for *_, s in now)
        pts = tank.series.points
        for name in ("instinct", "rules"):  # a line per group in the schooling and energy charts
            for key in ("schooling_degree", "mean_energy"):
                assert len(pts[group_key(name, key)]) == len(pts[key]) > 5
        tank.seek(40)  # back in the past: the group lines end at the tick shown too
        assert max(t for t, _ in pts[group_key("rules", "mean_energy")]) <= 41
        scene.show_charts = True
        app.frame(0.0)
        shot = np.transpose(np.asarray(__import__("pygame").surfarray.array3d(app.screen)), (1, 0, 2))
        for colour in ((0x5A, 0xB4, 0xFF), (0xFF, 0xA0, 0x40)):  # each group's line, in its colour
            assert np.count_nonzero(np.all(np.abs(shot.astype(int) - colour) <= 8, axis=2)) > 50
    finally:
        scene.close()


def test_a_question_to_a_fish_of_a_mixed_tank_goes_to_its_groups_model(tmp_path):
    """"Ask the fish" (the window's I) in a mixed tank whose own brain is a model: a fish of the
    model's group is answered by that model; a fish of a rule brain's group has no model to ask
    (None, as for any fish without one). Before, every question fell through to the replay's
    path and came back "no server to ask" (MixedSource had no ask)."""
    from mirofish.brains.testserver import TestServer
    from mirofish.session import LiveSession

    with TestServer() as server:
        cfg = load_config(str(mixed_toml(tmp_path)), **{"brain.kind": "llm", "brain.small.endpoints":
                                         [{"base_url": server.url, "model": "fish-mini"}]})
        live = LiveSession(cfg)
        try:
            live.run(3)
            groups = cfg.fish.group_of()
            model_fish = groups.index(0)  # the "instinct" group: the tank's own brain, the model here
            rule_fish = groups.index(1)
            answer = live.ask(model_fish, "how is the water?")
            assert answer is not None
            got = answer.result(timeout=30)
            assert live.ask(rule_fish, "how is the water?") is None
        finally:
            live.close()
    assert got["error"] is None and got["text"], got
