"""The window's first-hour defects, each as a user met it: a template summary flagged out of
character, "Why?" read as the plan's reasons, a live energy curve that is not the metric's, a
fork mark lost after a seek, and command lines that accepted what they should have refused."""

from __future__ import annotations

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np
import pygame
import pytest

from mirofish.cli import main
from mirofish.config import load_config
from mirofish.observe.recording import Recorder, Recording
from mirofish.session import LiveSession
from mirofish.ui import panels, theme
from mirofish.ui.app import App
from mirofish.ui.scenes.aquarium import AquariumScene


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    path = tmp_path_factory.mktemp("defects") / "run.db"
    cfg = load_config(seed=4)
    eng = LiveSession(cfg)
    rec = Recorder(path, cfg).attach(eng)
    eng.run(400)
    rec.close()
    return path


def said(monkeypatch) -> list[str]:
    """Every text the window draws from now on."""
    out: list[str] = []
    real_fit, real_text = theme.fit, theme.text

    def fit(s, *a, **k):
        out.append(s)
        return real_fit(s, *a, **k)

    def text(s, *a, **k):
        out.append(s)
        return real_text(s, *a, **k)

    monkeypatch.setattr(theme, "fit", fit)
    monkeypatch.setattr(theme, "text", text)
    return out


def test_a_template_summary_is_never_flagged_out_of_character(monkeypatch):
    """The embedded brain's summaries are facts in set words: their drift against the persona
    says nothing of the fish, and the follow panel says n/a — a model's own summary still alarms."""
    pygame.font.init()
    lines = said(monkeypatch)
    surf = pygame.Surface((420, 200))
    panel = panels.FollowPanel()
    panel._behaviour = (None, 0)
    panel._draw_in_character(surf, 0, 0, 400, (0.0, "template"), 0.05)
    panel._draw_in_character(surf, 0, 0, 400, (0.0, "model"), 0.05)
    template_line = next(t for t in lines if t.startswith("drift") and "template" in t)
    model_line = [t for t in lines if t.startswith("drift 0.00 <")]
    assert "ALERT" not in template_line and "n/a" in template_line
    assert model_line and "ALERT: out of character" in model_line[0]


def test_why_says_the_plan_was_chosen_then_and_the_numbers_are_what_it_would_weigh_now():
    s = LiveSession(load_config(seed=2))
    s.run(30)
    lines = s.explain(7)
    assert lines[0].startswith("plan now:") and "chosen at t" in lines[0] and "asked now" in lines[0]
    weighed = [ln for ln in lines if ": utility" in ln]
    assert weighed and all(ln.startswith("  ") for ln in weighed)
    s.close()


def test_the_live_energy_curve_is_the_metric_of_the_fish_in_the_water(tmp_path):
    """With room for fish not yet added (fish.spare), the live chart's mean energy is the
    recording's: the fish in the water, not the empty slots."""
    cfg = load_config(seed=3, **{"fish.count": 40, "fish.spare": 20})
    scene = AquariumScene.live(cfg)
    app = App([scene], (1280, 720), offscreen=True)
    rec_path = tmp_path / "live.db"
    rec = Recorder(rec_path, cfg).attach(scene.session)
    scene.set_speed(64)
    app.run(frames=40, fixed_dt=0.25)
    rec.close()
    pts = dict(scene.series.points["mean_energy"])
    assert len(pts) >= 3
    r = Recording(rec_path)
    try:
        rows = r.tick_rows(r.first_tick, r.last_tick)
        from mirofish.observe.recording import TICK_COLUMNS

        recorded = {int(t) + 1: float(v) for t, v in zip(rows[:, 0], rows[:, 1 + TICK_COLUMNS.index("mean_energy")])}
    finally:
        r.close()
    common = [t for t in pts if t in recorded]
    assert common and all(abs(pts[t] - recorded[t]) < 0.01 for t in common), [(t, pts[t], recorded[t])
                                                                                for t in common[:5]]
    app.close()


def test_a_forks_mark_stays_on_the_timeline_after_a_seek(recording):
    from mirofish.session import ReplaySession

    scene = AquariumScene(ReplaySession(recording))
    app = App([scene], (1280, 720), offscreen=True)
    app.frame(0.0)
    scene.seek(200)
    scene.selected = 5
    scene.start_fork("explore east 30")
    assert (200, "fork") in scene.timeline.markers
    scene.end_fork()
    scene.seek(50)
    scene.seek(300)
    assert (200, "fork") in scene.timeline.markers
    app.close()


def test_the_flags_say_what_is_wrong(recording, capsys):
    assert main(["replay", str(recording), "--at-tick", "99999"]) == 2
    assert "--at-tick 99999 is outside the recording (0..400)" in capsys.readouterr().err
    assert main(["clip", str(recording), "--from", "340", "--to", "240", "--out", "x.gif"]) == 2
    assert "--from 340 is not before --to 240" in capsys.readouterr().err
    assert main(["fork", str(recording), "--at", "400", "--fish", "1", "--plan", "rest"]) == 2
    err = capsys.readouterr().err
    assert "holds ticks 0..400" in err and "a fork starts at 0..399" in err
    assert main(["clip", str(recording), "--from", "390", "--to", "401", "--out", "x.gif"]) == 2
    assert "holds ticks 0..400" in capsys.readouterr().err  # the same words for the same file


def test_the_referential_game_from_the_switcher_plays_the_commands_rounds():
    from mirofish.ui.scenes.referential import ReferentialScene

    assert ReferentialScene().last_round == 400


def test_the_picker_of_a_played_fish_says_no_fork_is_made(monkeypatch):
    """J then F: the person's own fish gets a plan of its own — the picker is not titled a fork."""
    scene = AquariumScene.live(load_config(seed=2))
    app = App([scene], (1280, 720), offscreen=True)
    app.frame(0.0)
    scene.selected = 3
    scene.toggle_play()
    scene.begin_fork_pick()
    lines = said(monkeypatch)
    app.frame(0.0)
    assert any("your fish 3's next plan (no fork)" in t for t in lines)
    assert not any(t.startswith("Fork at t") for t in lines)
    app.close()


def test_a_mixed_tanks_group_figures_are_in_the_side_panel_not_over_the_water(monkeypatch):
    from pathlib import Path

    from mirofish.ui import tune

    cfg = load_config(Path(__file__).resolve().parent.parent / "examples" / "mixed.toml", seed=7)
    scene = AquariumScene.live(cfg)
    app = App([scene], (1280, 720), offscreen=True)
    legends: list[tuple[pygame.Rect, list]] = []
    real = tune.draw_legends

    def draw_legends(surf, rect, show_heat, groups=None):
        legends.append((pygame.Rect(rect), list(groups or [])))
        return real(surf, rect, show_heat, groups)

    monkeypatch.setattr(tune, "draw_legends", draw_legends)
    rendered: list[str] = []  # every text rendered (the legend's fit renders through it too)
    real_text = theme.text
    monkeypatch.setattr(theme, "text", lambda s, *a, **k: (rendered.append(s), real_text(s, *a, **k))[1])
    app.frame(0.0)
    rect, groups = legends[-1]
    assert [text.split()[0] for _, text, _ in groups] == ["instinct", "rules"]
    assert scene.rects["panel"].contains(rect) and not rect.colliderect(scene.rects["tank"])
    assert sum("30 fish, energy" in t for t in rendered) == 2  # once each: in the legend, not over the water
    app.close()


def test_the_follow_panel_of_a_fish_caught_says_it_is_not_in_the_water(monkeypatch):
    """A species tank (docs/species.md): a followed fish that was caught stays followed, and its
    panel says it is out of the water rather than showing it as if it swam on at the corner."""
    from mirofish.session import LiveSession

    pygame.font.init()
    s = LiveSession(load_config(seed=7, preset="predators"))
    s.run(200)
    gone = next(i for i in range(74) if s.world.school.absent[i])
    here = next(i for i in range(74) if not s.world.school.absent[i])
    lines = said(monkeypatch)
    panel = panels.FollowPanel()
    surf = pygame.Surface((420, 900))
    panel.draw_followed(surf, pygame.Rect(0, 0, 420, 900), s, s.view(), gone, np.zeros(10), None, None)
    assert any("not in the water" in t for t in lines)
    lines.clear()
    panel.draw_followed(surf, pygame.Rect(0, 0, 420, 900), s, s.view(), here, np.zeros(10), None, None)
    assert not any("not in the water" in t for t in lines)
    s.close()
