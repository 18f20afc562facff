"""A newcomer's trial, each defect as a user met it: school rings on fish far from the school, the
HUD's school figures behind "more", report's drift score of template summaries, influence's
unexplained "effect", help texts that misled, a rest plan's label, clip's wording, the HTML
player's "4.000 fish", and a mixed tank's "tank:" group."""

from __future__ import annotations

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np
import pytest
from conftest import record_run

from mirofish.config import load_config
from mirofish.observe.metrics import hex_nn_and_labels, nn_and_labels
from mirofish.observe.recording import Recorder
from mirofish.session import LiveSession, ReplaySession
from mirofish.ui.scenes.aquarium import AquariumScene


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """400 ticks of the default tank (seed 7) with the embedded brain."""
    return record_run(tmp_path_factory.mktemp("newcomer") / "run.db", 7, 400)


def _clusters(view, fish: np.ndarray) -> int:
    """Into how many groups ``fish`` fall, linking fish within 2 cells (the README's school; a
    hexagonal tank's: two hex steps)."""
    if len(fish) < 2:
        return len(fish)
    if view.settings is not None and view.settings.world.grid == "hex":
        return len(set(hex_nn_and_labels(view.x[fish], view.y[fish])[1].tolist()))
    xy = np.stack([view.x[fish], view.y[fish]], axis=1).astype(np.float64)
    return len(set(nn_and_labels(xy)[1].tolist()))


def _rings_are_one_school(scene, ticks: int) -> None:
    for _ in range(ticks):
        frame = scene.step()
        ringed, _ = scene.school()
        assert _clusters(scene.view, ringed) <= 1, f"t{scene.view.tick}: a ringed fish away from the school"
        assert scene.hud.history["school_size"][-1] == len(ringed)  # the HUD's number is the rings'
        if frame is not None and frame.tick % scene.cfg.metrics.sample_every == 0:  # a sample: the same fish
            assert sorted(ringed.tolist()) == sorted(scene.shown.metrics.school_members.tolist())


def test_the_school_rings_are_the_school_of_the_tick_drawn_live_and_in_replay(tmp_path):
    """Rings drawn from the last metrics sample stayed on fish that had left the school (116 of
    300 ticks of the demo, seed 1, had a ringed fish away from the others); now the rings and the
    HUD's "largest school" are of the tick on screen, and on a sample tick are the sample's."""
    cfg = load_config(preset="schooling-demo", seed=1)
    _rings_are_one_school(AquariumScene.live(cfg), 300)
    path = tmp_path / "run.db"
    live = LiveSession(cfg)
    rec = Recorder(path, cfg).attach(live)
    live.run(200)
    rec.close()
    _rings_are_one_school(AquariumScene(ReplaySession(path)), 199)


def test_the_rings_are_one_school_on_a_hexagonal_tank():
    _rings_are_one_school(AquariumScene.live(load_config(preset="schooling-demo", seed=2, **{"world.grid": "hex"})),
                          300)


@pytest.mark.parametrize("size", [(1280, 720), (1024, 600)])
def test_the_demo_hud_shows_largest_school_and_school_moving_without_paging(monkeypatch, size):
    """The README's demo says to watch "largest school" and "school moving": at 1280x720 "school
    moving" was behind "more 1/2", at 1024x600 "largest school" too; the preset puts them first."""
    from mirofish.ui import panels, theme
    from mirofish.ui.app import App

    drawn: list[str] = []
    real_fit = theme.fit
    monkeypatch.setattr(theme, "fit", lambda s, *a, **k: (drawn.append(s), real_fit(s, *a, **k))[1])
    scene = AquariumScene.live(load_config(preset="schooling-demo", seed=1))
    app = App([scene], size, offscreen=True)
    app.frame(0.0)
    assert "largest school" in drawn and "school moving" in drawn
    hidden = panels.hud_hidden(scene.rects["hud"].w, scene.shown.brain_status(), scene.cfg.metrics.hud_first)
    assert "largest school" not in hidden and "school moving" not in hidden and "school polariz." not in hidden
    assert not any(label in drawn for label in hidden)  # (what the panel hides: on the next page)
    app.close()


def test_a_hud_column_that_does_not_exist_is_refused_by_name(tmp_path, capsys):
    """A misspelt ``metrics.hud_first`` key is refused in one line, exit 2, naming it (checked where
    the metrics are made: the config sits below the metric table)."""
    from mirofish.cli import main
    from mirofish.config import ConfigError

    with pytest.raises(ConfigError, match="school_sise is not a HUD column"):
        LiveSession(load_config(**{"metrics.hud_first": ["school_sise"]}))
    cfg = tmp_path / "hud.toml"
    cfg.write_text('[metrics]\nhud_first = ["school_size", "school_sise"]\n')
    assert main(["live", "--headless", "--ticks", "2", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "metrics.hud_first: school_sise is not a HUD column" in err, err


def test_report_says_drift_is_n_a_for_template_summaries_as_the_window_does(recording, capsys):
    """``report --fish 7`` printed "drift score …: 0.20, 0.14, 0.14" for an instinct fish, whose
    summaries are the template's facts in set words; the follow panel says n/a, and so does report."""
    import dataclasses

    from mirofish.cli import main
    from mirofish.session.report import fish_report

    assert main(["report", str(recording), "--fish", "7"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "drift score" in ln)
    assert "n/a for 3 template summaries" in line and "only a model's own summaries are judged" in line
    r = fish_report(recording, 7)
    assert r.drift_by == ["template"] * 3
    mixed = dataclasses.replace(r, drift=[0.31, 0.2, 0.1], drift_by=["model", "template", "template"])
    assert mixed.drift_text().startswith("0.31; n/a for 2 template summaries (")
    assert dataclasses.replace(r, drift_by=["model"] * 3).drift_text() == ", ".join(f"{d:.2f}" for d in r.drift)


def test_influences_table_says_what_effect_means_and_counts_one_decision():
    """The terminal table never said what sign "effect" has (only the PNG did) and printed "sum -3
    over 1 decisions"."""
    from mirofish.session.influence import render_text

    summary = {"outcome": "largest_school@330:350", "outcome_recorded": 12.0, "window": [200, 260],
               "decisions_tested": 2, "forks": 10, "seconds": 1.0, "forks_per_second": 10.0, "workers": 1,
               "brain": "instinct", "null": {"band": [-2.0, 2.0], "samples": 20, "stable": True},
               "pivotal": [], "pivotal_share": 0.0, "note": "note",
               "decisions": [{"effect": -3.0, "pivotal": False, "low": -4.0, "high": -2.0, "tick": 210, "fish": 7,
                              "recorded": "rest", "alternatives": 4, "strongest_alternative": "school",
                              "strongest_outcome": 15.0}],
               "fish": [{"fish": 7, "sum_of_effects": -3.0, "decisions": 1}, {"fish": 8, "sum_of_effects": 1.0,
                                                                            "decisions": 2}],
               "plan_types": []}
    text = render_text(summary)
    assert ("effect = largest_school@330:350 with the recorded choice - its mean over the choice's alternatives "
            "(+: the recorded choice raised it, -: lowered it)") in text
    assert "sum -3 over 1 decision\n" in text + "\n" and "over 2 decisions" in text and "1 decisions" not in text


def _help(capsys, *argv: str) -> str:
    from mirofish.cli import main

    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())  # (argparse's wrapping undone)


def test_the_help_texts_say_what_is_true(capsys):
    """``--help`` did not say live is the default; replay's --select named a ``headless --ascii``
    it lacks; influence's --workers had no default and "the influence's forks asks"; reef pointed
    at mirofish/reef/spec.py."""
    assert "Without a command (or with only flags) it runs live" in _help(capsys)
    replay = _help(capsys, "replay")
    assert "--select ID follow this fish from the start --charts" in replay and "--ascii" not in replay
    assert "headless --ascii: its remembered places" in _help(capsys, "live")
    influence = _help(capsys, "influence")
    assert "fork in N processes (default 1" in influence and "the influence study's forks ask (" in influence
    assert "the window's forks and questions ask (" in replay and "the fork asks (" in _help(capsys, "fork")
    assert "example: assets/reefs/ring.toml" in _help(capsys, "reef")


def test_reef_without_a_file_suggests_the_example(capsys):
    from mirofish.cli import main

    assert main(["reef", "--headless"]) == 2
    assert "try the example: python run.py reef assets/reefs/ring.toml --headless" in capsys.readouterr().err


def test_trace_labels_a_rest_plan_by_the_end_it_can_reach(recording, capsys):
    """``trace`` showed "plan rest until 100 energy" while energy fell: resting revives only below
    fish.rest_ceiling (10), so such a plan ends at its horizon, and the label says so."""
    from mirofish.cli import main
    from mirofish.fish.plans import DEFAULT as DEFAULT_PLANS
    from mirofish.fish.plans import NO_END

    rest = DEFAULT_PLANS.code["rest"]
    assert DEFAULT_PLANS.standing(rest, 100, 1018, 1000) == (
        "rest until t1018 (its horizon; 100 energy is out of reach: resting revives only below 10)")
    assert DEFAULT_PLANS.standing(rest, 100, NO_END, 1000).startswith("rest (until a trigger or the next decision;")
    assert DEFAULT_PLANS.standing(rest, 8, 1018, 1000) == "rest until 8 energy"  # reachable: as it was
    assert main(["trace", str(recording), "--fish", "7", "--from", "0", "--to", "399"]) == 0
    plans = [ln for ln in capsys.readouterr().out.splitlines() if "  plan " in ln]  # (a decision keeps its words)
    resting = [ln for ln in plans if " plan rest " in ln]
    assert resting and not any("until 100 energy" in ln for ln in plans)
    assert "plan rest until t34 (its horizon; 100 energy is out of reach: resting revives only below 10)" in resting[0]


def test_clips_help_says_it_draws_the_whole_tank_not_as_the_window_shows_it(capsys):
    """clip said "as the window shows it", but draws the whole tank at 8 px where the replay window
    shows its 20 px camera on the school; the help now says what a clip shows."""
    text = _help(capsys, "clip")
    assert "as the window shows it" not in text
    assert "the whole tank (where the window's camera follows the school at 20 px a cell" in _help(capsys)


def test_a_mixed_tanks_hud_says_what_its_tank_group_is(monkeypatch):
    """examples/mixed.toml's window listed "tank: instinct", a group nothing explained: the fish no
    group takes and, in the window, those added by a click (its spare slots)."""
    from mirofish.ui import panels

    scene = AquariumScene.live(load_config("examples/mixed.toml"))
    lines = [text for text, _ in panels.status_lines({"tick": 0}, scene.shown.brain_status())]
    assert "tank (fish in no group): instinct" in lines and not any(ln.startswith("tank:") for ln in lines)
    assert "instinct: instinct" in lines and "rules: RuleBrain" in lines  # (was "rules: rules")


def test_the_follow_panel_words_a_rest_plan_as_trace_does(recording, monkeypatch):
    """The follow panel said "plan: rest until 100 energy" for a plan resting can never end that way."""
    from mirofish.ui import follow, theme

    drawn: list[str] = []
    real_fit = theme.fit
    monkeypatch.setattr(theme, "fit", lambda s, *a, **k: (drawn.append(s), real_fit(s, *a, **k))[1])
    scene = AquariumScene(ReplaySession(recording))
    scene.seek(10)
    import pygame

    pygame.font.init()
    fish = 7
    snap = scene.shown.fish(fish)
    assert snap.plan == "rest until 100 energy"  # (seed 7's fish 7 rests from the start: see trace's test)
    follow.FollowPanel().draw_followed(pygame.Surface((400, 900)), pygame.Rect(0, 0, 400, 900), scene.shown,
                                       scene.view, fish, np.zeros(160), None, None)
    plan = next(s for s in drawn if s.startswith("plan: "))
    assert plan == "plan: rest until t34 (100 energy out of reach)", plan
