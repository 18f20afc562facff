"""The design card in the window: 20 px a cell on every screen through the camera (the followed
fish, else the largest school), the whole tank one key (X) away and in the minimap, panels
docked beside the water that never cover a fish and fold away, a click that selects the fish
drawn under it, a cell size setting, and the follow panel's drift score."""

import subprocess
import sys

import pygame
import pytest
from test_window import click, key, recording  # noqa: F401  (the module's recording fixture)

from mirofish.config import load_config
from mirofish.session import ReplaySession
from mirofish.session.report import fish_report
from mirofish.ui import theme
from mirofish.ui.app import App, default_size
from mirofish.ui.layout import FOOTER_H, inside_and_apart
from mirofish.ui.scenes.aquarium import AquariumScene


def shown(scene, size, frames=1):
    app = App([scene], size, offscreen=True)
    for _ in range(frames):
        app.frame(0.0)
    return app


PARTS = ("hud", "controls", "panel", "minimap", "footer", "timeline", "tab")  # everything but the water


def demo(tick=240):
    """The schooling demo (seed 1) at ``tick``, paused: a moving school of 15-32 fish."""
    scene = AquariumScene.live(load_config(preset="schooling-demo", seed=1, **{"engine.speed": 1.0}))
    scene.pacer.paused = True
    while scene.tick < tick:
        scene.step()
    return scene


def drawn(scene, fish):
    """Where the window drew a fish (pixel centre) and whether it lies in the water on screen."""
    r = scene.pane.renderer
    px, py = r.to_px(float(scene.view.x[fish]), float(scene.view.y[fish]))
    return (int(px), int(py)), r.rect.collidepoint(int(px), int(py))


def test_the_default_window_on_a_1920x1080_screen_shows_the_ringed_school_at_20_px():
    size = default_size((1920, 1080))
    assert size == (1840, 960)
    scene = demo()
    app = shown(scene, size, frames=2)
    members = scene.shown.metrics.school_members
    assert len(members) >= 15  # the HUD's "largest school" (33 fish), ringed in the tank
    assert scene.pane.renderer.cell == 20 and scene.camera.mode == "follow"
    for fish in members.tolist():
        assert drawn(scene, fish)[1], f"school fish {fish} is not on screen"
    assert not inside_and_apart(scene.rects, size)  # the panels beside the water, none over it
    assert scene.rects["panel"].w and scene.rects["hud"].w and scene.rects["minimap"].w
    mm = scene.pane.minimap
    assert scene.rects["minimap"].contains(mm.map) and not mm.map.colliderect(scene.rects["tank"])
    app.close()


@pytest.mark.parametrize("size", [(1280, 720), (1024, 600), (1000, 600)])
def test_a_laptop_window_follows_at_20_px_and_x_shows_the_whole_tank(size):
    scene = demo()
    app = shown(scene, size)
    tank, r = scene.rects["tank"], scene.pane.renderer
    assert r.cell == 20  # >= 12 px a cell on a laptop: fish you can see
    scene.selected = 11
    app.frame(1.0)  # (paused: a second of the camera's glide)
    assert drawn(scene, 11)[1] and tank.inflate(-tank.w // 2, -tank.h // 2).collidepoint(drawn(scene, 11)[0])
    key(pygame.K_x)
    app.frame(0.0)
    fit = r.cell
    assert fit < 12 and (r.w * (fit + 1) > tank.w or r.h * (fit + 1) > tank.h)  # the largest whole size that fits
    assert "whole tank" in scene.message
    assert all(drawn(scene, f)[1] for f in range(len(scene.view.x)) if scene.view.in_water(f))  # every fish
    key(pygame.K_x)
    app.frame(1.0)
    assert r.cell == 20 and drawn(scene, 11)[1] and "20 px" in scene.message
    app.close()


def test_the_default_window_fits_a_1024x600_screen():
    assert default_size((1024, 600)) == (1000, 600)
    assert default_size((1280, 720)) == (1200, 600) and default_size((2560, 1440)) == (1920, 1080)
    for screen in ((1024, 600), (1280, 720), (1366, 768), (1920, 1080)):
        w, h = default_size(screen)
        assert w <= screen[0] and h <= screen[1] and (w, h) >= (1000, 600)


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_p_folds_the_panels_away_and_the_tab_brings_them_back(size):
    scene = demo()
    app = shown(scene, size)
    key(pygame.K_p)
    app.frame(0.0)
    assert scene.folded and not scene.rects["hud"].w and not scene.rects["panel"].w
    assert not scene.rects["minimap"].w
    w, h = size
    assert scene.rects["tank"] == pygame.Rect(0, 0, w, h - FOOTER_H)  # the water gets all but the footer line
    assert not inside_and_apart(scene.rects, size)  # the footer and the tab under the water, not over it
    assert scene.pane.renderer.cell >= 20
    tab = scene.unfold_tab
    assert tab.w and pygame.Rect(0, 0, *size).contains(tab) and not tab.colliderect(scene.rects["tank"])
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=tab.center, rel=(0, 0), buttons=(0, 0, 0)))
    app.frame(0.0)
    assert not scene.folded and scene.rects["hud"].w  # resting the mouse on the tab unfolds
    app.close()


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720), (1024, 600), (1000, 600)])
def test_no_fish_is_ever_under_a_panel(size):
    """For 60 followed fish in turn, in both camera modes: every fish the window draws lies in
    the water's pane and no part of the window (HUD, controls, side panel, minimap, footer,
    timeline) covers its cell; the followed fish is on screen."""
    scene = demo()
    app = shown(scene, size)
    n = len(scene.view.x)
    assert n >= 60
    under, seen = 0, set()
    for mode in ("follow", "whole"):
        for fish in range(60):
            scene.selected = fish
            if scene.camera.mode != mode:
                scene.toggle_camera()
            app.frame(1.0)  # (paused: the camera glides to the fish)
            r, parts = scene.pane.renderer, [scene.rects[k] for k in PARTS if scene.rects[k].w]
            water = r.rect
            assert scene.rects["tank"].contains(water)  # the renderer draws (clipped) in the tank's pane only
            assert drawn(scene, fish)[1], (size, mode, fish)  # the followed fish is on screen
            x0, y0, x1, y1 = scene.camera.visible()
            for f in range(n):
                if not scene.view.in_water(f):
                    continue
                x, y = float(scene.view.x[f]), float(scene.view.y[f])
                if not (x0 - 1 <= x < x1 + 1 and y0 - 1 <= y < y1 + 1):
                    continue  # outside the camera's view: not drawn (the minimap shows it)
                px, py = r.to_px(x, y)
                cell = pygame.Rect(int(px - r.cell / 2), int(py - r.cell / 2), r.cell, r.cell).clip(water)
                if cell.w and cell.h:
                    seen.add(f)
                    under += any(cell.colliderect(p) for p in parts)
    assert under == 0
    assert len(seen) >= 60  # (the count is over fish really drawn)
    app.close()


def test_a_click_selects_the_fish_drawn_under_it_through_the_camera():
    """At 1280×720 (20 px a cell, following the school), after a drag that pans the view, and in
    the whole tank: a click on where a fish is drawn follows that fish."""
    scene = demo()
    app = shown(scene, (1280, 720))
    checked = 0
    for step in ("follow", "panned", "whole"):
        if step == "panned":
            start = scene.rects["tank"].center
            before = scene.camera.to_cell(start)
            pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=start))
            for dx in (20, 80, 160):  # the water dragged 8 cells west (the school is by the west glass)
                pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=(start[0] - dx, start[1]),
                                                     rel=(0, 0), buttons=(1, 0, 0)))
            pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=(start[0] - 160, start[1])))
            followed = scene.selected
            app.frame(0.0)
            assert scene.camera.to_cell(start) == pytest.approx((before[0] + 8, before[1]), abs=0.01)
            assert scene.selected == followed and not scene.camera.following  # a drag is not a click
        if step == "whole":
            key(pygame.K_x)
            app.frame(0.0)
        fish_drawn = [f for f in range(len(scene.view.x)) if scene.view.in_water(f) and drawn(scene, f)[1]]
        assert len(fish_drawn) >= 20
        for f in fish_drawn[:25]:
            pos, _ = drawn(scene, f)
            click(pos)
            app.frame(0.0)
            assert scene.selected == f, (step, f)
            checked += 1
    assert checked >= 60
    app.close()


def test_the_minimap_shows_every_fish_and_moves_the_camera():
    scene = demo()
    app = shown(scene, (1280, 720))
    mm, cam = scene.pane.minimap, scene.camera
    assert scene.rects["minimap"].contains(mm.map) and mm.map.w >= 150
    for f in range(len(scene.view.x)):  # every fish has its dot on the map
        x, y = mm.to_px(float(scene.view.x[f]), float(scene.view.y[f]))
        assert mm.map.collidepoint(int(x), int(y))
    shot = pygame.surfarray.pixels3d(app.screen)
    members = scene.shown.metrics.school_members
    cx, cy = mm.to_px(float(scene.view.x[members].mean()), float(scene.view.y[members].mean()))
    near = pygame.Rect(0, 0, 120, 120)
    near.center = (int(cx), int(cy))
    near = near.clip(mm.map)
    ring = [tuple(shot[x, y]) for x in range(near.x, near.right) for y in range(near.y, near.bottom)]
    assert ring.count(theme.GOOD) > 20  # the largest school ringed on the map (in the HUD's green)
    del shot
    target = (mm.map.right - 10, mm.map.y + 10)  # the top-right corner of the tank
    click(target)
    app.frame(0.0)
    assert not cam.following and cam.cell == 20
    _, y0, x1, _ = cam.visible()
    assert x1 == 96 and y0 == 0  # the view went to the top-right corner
    want = mm.to_cell(target)
    assert cam.shows(want[0], want[1])
    app.close()


def test_the_wheel_zooms_and_z_goes_back_to_what_matters():
    scene = demo()
    app = shown(scene, (1280, 720))
    tank = scene.rects["tank"]
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=tank.center, rel=(0, 0), buttons=(0, 0, 0)))
    app.frame(0.0)
    for _ in range(4):
        scene.handle_event(pygame.event.Event(pygame.MOUSEWHEEL, x=0, y=1, flipped=False))
    app.frame(0.0)
    assert scene.pane.renderer.cell == 40  # 20 → 25 → 31 → 39 → 40
    for _ in range(8):
        scene.handle_event(pygame.event.Event(pygame.MOUSEWHEEL, x=0, y=-1, flipped=False))
    app.frame(0.0)
    assert scene.camera.mode == "whole" and scene.camera.whole_shown
    key(pygame.K_z)
    app.frame(1.0)
    members = scene.shown.metrics.school_members
    assert scene.camera.mode == "follow" and scene.pane.renderer.cell == 20
    centre = scene.camera.to_cell(tank.center)
    clamped = scene.camera._clamp((float(scene.view.x[members].mean()), float(scene.view.y[members].mean())))
    assert centre == pytest.approx(clamped, abs=0.5)  # on the largest school's centre
    app.close()


def test_the_mouse_resting_at_the_waters_edge_scrolls_the_view_but_not_under_the_help():
    scene = demo()
    app = shown(scene, (1280, 720))
    tank = scene.rects["tank"]
    before = scene.camera.to_cell(tank.center)
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=(tank.right - 4, tank.centery), rel=(0, 0),
                                         buttons=(0, 0, 0)))
    app.run(frames=30, fixed_dt=1 / 30, fps_cap=0)  # a second, the tank paused
    after = scene.camera.to_cell(tank.center)
    assert after[0] > before[0] + 10 and after[1] == pytest.approx(before[1])  # it scrolled east
    assert not scene.camera.following  # and stays there (Z goes back)
    key(pygame.K_h)
    app.frame(0.0)
    app.run(frames=30, fixed_dt=1 / 30, fps_cap=0)
    assert scene.camera.to_cell(tank.center) == pytest.approx(after)  # under the help: still
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
