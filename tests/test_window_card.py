"""The design card in the window: 20 px a cell where the window holds it, the panels that fold
and keep off the followed fish, a cell size setting, and the follow panel's drift score."""

import subprocess
import sys

import pygame
import pytest

from mirofish.config import load_config
from mirofish.session import ReplaySession
from mirofish.session.report import fish_report
from mirofish.ui.app import App
from mirofish.ui.layout import inside_and_apart
from mirofish.ui.scenes.aquarium import AquariumScene
from tests.test_window import key, recording  # noqa: F401  (the module's recording fixture)


def shown(scene, size, frames=1):
    app = App([scene], size, offscreen=True)
    for _ in range(frames):
        app.frame(0.0)
    return app


def test_a_1920x1080_window_draws_the_tank_at_20_px_and_the_panels_float_over_it():
    scene = AquariumScene.live(load_config(seed=2))
    app = shown(scene, (1920, 1080))
    assert scene.pane.renderer.cell == 20
    assert scene.rects["tank"] == pygame.Rect(0, 0, 1920, 1080)
    assert not inside_and_apart(scene.rects, (1920, 1080), under="tank")  # the rest never overlap
    assert scene.rects["panel"].w and scene.rects["hud"].w
    app.close()


@pytest.mark.parametrize("size", [(1280, 720), (1024, 600)])
def test_a_laptop_window_fits_the_largest_whole_size_and_x_switches_to_20_px(size):
    scene = AquariumScene.live(load_config(seed=2))
    app = shown(scene, size)
    fit = scene.pane.renderer.cell
    tank, r = scene.rects["tank"], scene.pane.renderer
    assert fit < 20 and (r.w * (fit + 1) > tank.w or r.h * (fit + 1) > tank.h)  # the largest whole size that fits
    scene.selected = 11
    key(pygame.K_x)
    app.frame(0.0)
    app.frame(0.0)
    assert scene.pane.renderer.cell == 20 and "20 px" in scene.message
    px, py = scene.pane.renderer.to_px(float(scene.view.x[11]), float(scene.view.y[11]))
    assert scene.rects["tank"].collidepoint(int(px), int(py))  # the view follows the fish
    key(pygame.K_x)
    app.frame(0.0)
    assert scene.pane.renderer.cell == fit
    app.close()


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_p_folds_the_panels_away_and_the_tab_brings_them_back(size):
    scene = AquariumScene.live(load_config(seed=2))
    app = shown(scene, size)
    key(pygame.K_p)
    app.frame(0.0)
    assert scene.folded and not scene.rects["hud"].w and not scene.rects["panel"].w
    assert scene.rects["tank"].size == size
    assert scene.pane.renderer.cell >= (20 if size == (1920, 1080) else 12)
    tab = scene.unfold_tab
    assert tab.w and pygame.Rect(0, 0, *size).contains(tab)
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=tab.center, rel=(0, 0), buttons=(0, 0, 0)))
    app.frame(0.0)
    assert not scene.folded and scene.rects["hud"].w  # resting the mouse on the tab unfolds
    app.close()


def test_floating_panels_keep_off_the_followed_fish():
    """At 1920×1080 a fish under the side panel moves the panel to the other side; under the
    top strip, the HUD and controls fold while it is there."""
    scene = AquariumScene.live(load_config(seed=2))
    app = shown(scene, (1920, 1080))
    v = scene.view
    for fish in range(len(v.x)):
        scene.selected = fish
        app.frame(0.0)
        px, py = scene.pane.renderer.to_px(float(v.x[fish]), float(v.y[fish]))
        for part in ("hud", "controls", "panel", "timeline"):
            assert not scene.rects[part].collidepoint(int(px), int(py)), (fish, part, (px, py))
    app.close()


def test_a_cell_size_setting_with_a_clear_error():
    bad = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "1", "--set", "world.cell_px=2"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "world.cell_px" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    scene = AquariumScene.live(load_config(seed=2, **{"world.cell_px": 24}))
    app = shown(scene, (1280, 720), frames=2)
    assert scene.pane.renderer.cell == 24
    app.close()


def test_the_follow_panel_shows_the_drift_score_report_prints(recording):  # noqa: F811
    """With the embedded brain (template summaries) the panel's drift is the number ``report``
    prints for the same fish at the same tick, not "n/a"."""
    scene = AquariumScene(ReplaySession(recording))
    app = shown(scene, (1280, 720))
    scene.seek(600)
    fish = next(f for f in range(20) if scene.shown.drift(f) is not None)
    score, by = scene.shown.drift(fish)
    assert by == "template"
    assert round(score, 3) == fish_report(recording, fish, 0, 600).drift[-1]
    scene.selected = fish
    app.frame(0.0)
    app.close()
