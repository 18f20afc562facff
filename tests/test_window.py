"""The window, driven the way a user drives it: by posting pygame events (offscreen)."""

import json
import os
import subprocess
import sys
from pathlib import Path

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np
import pygame
import pytest

from mirofish.config import load_config
from mirofish.observe.recording import Recorder
from mirofish.session import (
    LiveSession,
    ReplaySession,
)
from mirofish.ui.app import App
from mirofish.ui.scenes.aquarium import AquariumScene

ROOT = Path(__file__).resolve().parent.parent


def app_for(scene, size=(1600, 900)):
    app = App([scene], size, offscreen=True)
    app.frame(0.0)  # lay out and draw once
    return app


def key(k, mod=0):
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=mod, unicode=""))


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    path = tmp_path_factory.mktemp("win") / "run.db"
    cfg = load_config(seed=4)
    eng = LiveSession(cfg)
    rec = Recorder(path, cfg).attach(eng)
    eng.run(600)
    rec.close()
    return path


def test_click_on_a_fish_follows_it():
    scene = AquariumScene.live(load_config(seed=2))
    app = app_for(scene)
    x, y = scene.renderer.to_px(scene.view.x[17], scene.view.y[17])
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(int(x), int(y))))
    app.frame(0.0)
    assert scene.selected == 17
    key(pygame.K_ESCAPE)
    app.frame(0.0)
    assert scene.selected is None
    app.close()


def test_keyboard_cycles_fish_and_changes_speed_and_pause():
    scene = AquariumScene.live(load_config(seed=2))
    app = app_for(scene)
    for k in (pygame.K_TAB, pygame.K_TAB, pygame.K_RIGHT):
        key(k)
    app.frame(0.0)
    assert scene.selected == 2
    key(pygame.K_LEFT)
    app.frame(0.0)
    assert scene.selected == 1
    key(pygame.K_PLUS)
    key(pygame.K_PLUS)
    app.frame(0.0)
    assert scene.speed == 4.0
    key(pygame.K_MINUS)
    app.frame(0.0)
    assert scene.speed == 2.0
    before = scene.tick
    app.run(frames=30, fixed_dt=0.1)  # 3 s of wall time at 2x = 12 ticks
    assert scene.tick - before in (11, 12, 13)
    key(pygame.K_SPACE)
    app.frame(0.1)
    paused_at = scene.tick
    app.run(frames=10, fixed_dt=0.1)
    assert scene.tick == paused_at
    key(pygame.K_PERIOD)
    app.frame(0.0)
    assert scene.tick == paused_at + 1
    app.close()


def test_dragging_the_timeline_seeks_exactly(recording):
    scene = AquariumScene(ReplaySession(recording))
    app = app_for(scene)
    bar = scene.timeline.bar
    y = bar.centery
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(bar.x + bar.w // 2, y)))
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=(bar.x + 3 * bar.w // 4, y), rel=(1, 0),
                                         buttons=(1, 0, 0)))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=(bar.x + 3 * bar.w // 4, y)))
    app.frame(0.0)
    target = scene.timeline.tick_at(bar.x + 3 * bar.w // 4)
    assert abs(target - 450) <= 2 and scene.tick == target
    reference = ReplaySession(recording)
    reference.seek(target)
    assert scene.session.state_hash() == reference.state_hash()
    app.close()


def test_fork_from_the_window_diverges_and_returns(recording):
    scene = AquariumScene(ReplaySession(recording))
    app = app_for(scene)
    scene.seek(200)
    scene.selected = 9
    key(pygame.K_f)
    key(pygame.K_7)  # the plan "rest 100 20" (rest's default horizon, from the plan types' table)
    app.frame(0.0)
    assert scene.mode == "fork" and scene.fork is not None and scene.fork.ghost_view() is not None
    assert scene.fork.label == "rest until 100 energy for 20 ticks"
    scene.set_speed(64)
    app.run(frames=40, fixed_dt=0.1)  # ~ 500 ticks of branch
    assert scene.tick > 300
    assert max(row[1] for row in scene.fork.curve) > 0  # fish in other cells than in the original
    app.screenshot(ROOT / ".pytest_fork.png")
    (ROOT / ".pytest_fork.png").unlink()
    key(pygame.K_o)
    app.frame(0.0)
    assert scene.mode == "replay" and scene.fork is None and scene.tick == 200
    app.close()


def test_live_fork_keeps_the_original_as_a_ghost():
    scene = AquariumScene.live(load_config(seed=3))
    app = app_for(scene)
    scene.selected = 4
    key(pygame.K_f)
    key(pygame.K_w)  # one action: move south
    app.frame(0.0)
    assert scene.mode == "fork" and scene.fork is not None
    assert "move_s" in scene.message
    scene.set_speed(64)
    app.run(frames=20, fixed_dt=0.1)
    assert scene.session.tick == scene.fork.tick > 0  # the original ran on beside the branch
    key(pygame.K_o)
    app.frame(0.0)
    assert scene.mode == "live" and scene.fork is None
    app.close()


def test_unreachable_model_server_is_shown_and_fish_keep_moving():
    cfg = load_config(**{"fish.count": 20, "brain.kind": "llm",
                         "brain.small.endpoints": [{"base_url": "http://127.0.0.1:9/v1", "model": "m"}]})
    scene = AquariumScene.live(cfg)
    app = app_for(scene)
    scene.set_speed(16)
    import time

    for _ in range(30):  # real time passes, as in a window: the fallback answers arrive
        app.frame(0.1)
        time.sleep(0.03)
    brain = scene.shown.brain_status()
    from mirofish.ui.panels import status_lines

    lines = [text for text, _ in status_lines({"tick": 1}, brain)]
    assert any("UNREACHABLE" in t or "breaker open" in t for t in lines)
    assert sum(f.counters["moves"] for f in scene.snapshot().fish) > 0
    app.close()


def test_first_readme_command_opens_the_window(tmp_path):
    shot = tmp_path / "first.png"
    out = subprocess.run([sys.executable, "run.py", "--screenshot", str(shot), "--frames", "5"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    assert out.returncode == 0, out.stderr
    img = pygame.image.load(str(shot))
    assert img.get_size() == (1920, 1080)


def test_fps_flag_prints_frame_rate_json():
    out = subprocess.run([sys.executable, "run.py", "live", "--fps", "--frames", "30", "--fish", "30"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, env={**os.environ, "SDL_VIDEODRIVER": "dummy"})
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["frames"] == 30 and data["fps_median"] > 0 and data["fish"] == 30


def test_scene_switcher_reaches_the_alternate_scenes():
    from mirofish.ui.scenes.negotiation import NegotiationScene
    from mirofish.ui.scenes.referential import ReferentialScene

    scenes = [AquariumScene.live(load_config(seed=1)), ReferentialScene(), NegotiationScene(seed=2)]
    app = App(scenes, (1400, 850), offscreen=True)
    for expected in ("Referential game", "Negotiation", "Aquarium"):
        key(pygame.K_s)
        app.run(frames=12, fixed_dt=0.25)  # the first frame starts the clock: 11 × 0.25 s at 1× = 5 steps
        assert app.scene.title == expected
    ref, neg = scenes[1], scenes[2]
    assert len(ref.exp.rounds) == 5 and len(neg.neg.turns) + sum(r["rounds"] for r in neg.results) == 5
    key(pygame.K_s)
    key(pygame.K_SPACE)  # pause the referential game
    app.run(frames=8, fixed_dt=0.25)
    assert len(ref.exp.rounds) == 5
    app.close()


@pytest.mark.parametrize("command", [[], ["replay", "{rec}"], ["referential"], ["negotiation"]])
def test_no_display_is_one_line_and_exit_2_naming_the_other_views(command, recording):
    """Without a display SDL would fall back to an invisible window and run unseen forever."""
    import time

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "run.py", *[c.replace("{rec}", str(recording)) for c in command]],
                         cwd=ROOT, capture_output=True, text=True, timeout=30, env=env)
    assert out.returncode == 2 and time.perf_counter() - start < 5
    assert len(out.stderr.strip().splitlines()) == 1
    assert "--terminal" in out.stderr and "--headless" in out.stderr


SIZES = [(1024, 600), (1280, 720), (1920, 1080), (2560, 1440), (3840, 2160)]


def click(pos):
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=pos))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=pos))


def button(scene, label):
    return next(b for b in scene.buttons if b.label.startswith(label))


@pytest.mark.parametrize("size", [(1000, 600), *SIZES])  # (1000×600: the window on a 1024×600 screen)
@pytest.mark.parametrize("mode", ["live", "live+fish", "replay", "fork"])
def test_every_part_of_the_aquarium_fits_the_window_without_overlap(size, mode, recording, tmp_path):
    from mirofish.ui.layout import inside_and_apart

    scene = AquariumScene(ReplaySession(recording)) if mode in ("replay", "fork") else \
        AquariumScene.live(load_config(seed=2))
    app = app_for(scene, size)
    if mode != "live":
        scene.selected = 3
    if mode == "fork":
        scene.seek(200)
        scene.start_fork("rest 100 30")
        scene.set_speed(16)
        app.run(frames=10, fixed_dt=0.1)
    app.frame(0.0)
    rects = scene.widget_rects()
    regions = {k: v for k, v in rects.items() if not k.startswith("button:")}
    buttons = {k: v for k, v in rects.items() if k.startswith("button:")}
    # every part docked beside the water: nothing lies over the tank at any size (no floating panels)
    assert not inside_and_apart(regions, size)
    assert scene.rects["minimap"].w and scene.rects["panel"].w and scene.rects["hud"].w
    assert not inside_and_apart(buttons, size)
    assert all(scene.rects["controls"].contains(r) for r in buttons.values() if r.w)
    assert scene.rects["tank"].w >= 600 and scene.rects["tank"].h >= 300
    if size == (1280, 720):
        app.screenshot(tmp_path / f"{mode}.png")
    app.close()


def test_a_slider_changes_the_food_rate_of_the_running_tank_while_it_records(tmp_path):
    """A slider is an intervention: it applies from the next tick, also while recording (the
    recording holds it with its tick), and the replay has the tuned rate from there."""
    scene = AquariumScene.live(load_config(seed=2))
    scene.saves = tmp_path
    app = app_for(scene, (1280, 720))
    scene.pacer.paused = True
    scene.session.start_recording(tmp_path / "tuned.db")
    food = scene.sliders[0]
    before = scene.session.world.water.spawn_rate
    t = food.track
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(t.x + t.w * 2 // 3, t.centery)))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=(t.x + t.w * 2 // 3, t.centery)))
    app.frame(0.0)
    scene.step()
    after = scene.session.world.water.spawn_rate
    assert after == pytest.approx(0.002, abs=2e-4) and after != before
    assert scene.session.tuned() == {"food.spawn_rate": after}
    assert food.value == pytest.approx(after)
    for _ in range(30):
        scene.step()
    tick, state = scene.tick, scene.session.state_hash()
    path = scene.session.stop_recording()
    replay = ReplaySession(path)
    replay.seek(tick)
    assert replay.state_hash() == state and replay.world.water.spawn_rate == after
    replay.close()
    app.close()


def test_reset_with_a_new_seed_gives_another_tank_and_reset_the_same_one():
    scene = AquariumScene.live(load_config(seed=2))
    app = app_for(scene, (1280, 720))
    first = scene.session.state_hash()
    scene.set_speed(16)
    app.run(frames=10, fixed_dt=0.1)
    click(button(scene, "Reset").rect.center)
    app.frame(0.0)
    assert scene.session.state_hash() == first and scene.tick == 0
    click(button(scene, "New seed").rect.center)
    app.frame(0.0)
    assert scene.session.state_hash() != first and scene.cfg.seed != 2
    app.close()


def test_record_on_and_off_writes_a_recording_that_opens_in_the_window(tmp_path):
    scene = AquariumScene.live(load_config(seed=2))
    scene.saves = tmp_path
    app = app_for(scene, (1280, 720))
    click(button(scene, "Record").rect.center)
    app.frame(0.0)
    assert scene.session.recorder is not None
    scene.set_speed(16)
    app.run(frames=10, fixed_dt=0.1)
    live_tick, live_hash = scene.tick, scene.session.state_hash()
    click(button(scene, "Stop rec").rect.center)
    app.frame(0.0)
    files = list(tmp_path.glob("*.db"))
    assert len(files) == 1 and not scene.session.is_recording  # (the recent past is kept again, in a temp file)
    replay = ReplaySession(files[0])
    replay.seek(live_tick)
    assert replay.state_hash() == live_hash  # the recording replays what the window showed
    replay.close()
    click(button(scene, "Open recording").rect.center)
    app.frame(0.0)
    assert scene.picking_file == files
    key(pygame.K_1)
    app.frame(0.0)
    assert scene.mode == "replay" and scene.timeline is not None and scene.session.last_tick == live_tick
    key(pygame.K_n)  # back to the live tank, which waited
    app.frame(0.0)
    assert scene.mode == "live" and scene.tick == live_tick and scene.session.state_hash() == live_hash
    app.close()


def test_the_fork_picker_pauses_the_tank_and_o_returns_to_the_fork_tick():
    scene = AquariumScene.live(load_config(seed=3))
    app = app_for(scene, (1280, 720))
    scene.set_speed(16)
    app.run(frames=5, fixed_dt=0.1)
    scene.selected = 4
    key(pygame.K_f)
    app.frame(0.0)
    pressed = scene.tick
    origin = scene.session.state_hash()
    app.run(frames=10, fixed_dt=0.1)  # the picker is open: nothing moves
    assert scene.picking_action and scene.tick == pressed
    key(pygame.K_2)  # "school 120"
    app.frame(0.0)
    assert scene.fork is not None and scene.fork.tick0 == pressed
    app.run(frames=10, fixed_dt=0.1)
    assert scene.fork.tick > pressed
    key(pygame.K_o)
    app.frame(0.0)
    assert scene.fork is None and scene.tick == pressed and scene.session.state_hash() == origin
    app.close()


def test_why_explains_an_instinct_fish_with_the_planners_numbers():
    scene = AquariumScene.live(load_config(seed=2))
    app = app_for(scene, (1280, 720))
    scene.set_speed(16)
    app.run(frames=5, fixed_dt=0.1)
    scene.selected = 7
    key(pygame.K_i)
    app.frame(0.0)
    lines = [t for t, _ in scene._why_lines()]
    assert lines[1].startswith("plan now:") and "utility" in lines[2] and "chance" in lines[2]
    assert any(t.startswith("because: energy") for t in lines)
    app.close()


def test_why_asks_a_model_fish_without_freezing_the_window():
    """The bundled server answers one request a second: the window keeps drawing meanwhile."""
    import time

    from mirofish.brains.testserver import TestServer

    with TestServer(latency=1.0) as server:
        cfg = load_config(seed=2, **{"fish.count": 10, "brain.kind": "llm",
                                     "brain.small.endpoints": [{"base_url": server.url, "model": "m"}]})
        scene = AquariumScene.live(cfg)
        app = app_for(scene, (1280, 720))
        scene.selected = 2
        key(pygame.K_i)
        app.frame(0.0)
        frames, start = [], time.perf_counter()
        while not scene.why["future"].done() and time.perf_counter() - start < 10:
            t = time.perf_counter()
            app.frame(1 / 60)
            frames.append(time.perf_counter() - t)
        answer = scene.why["future"].result()
        assert answer["text"] and answer["error"] is None
        assert time.perf_counter() - start >= 0.9  # it did wait for the paced server …
        assert sorted(frames)[len(frames) // 2] < 1 / 30  # … while frames kept coming at ≥ 30 FPS
        assert scene.session.source.status()["classes"].get("questions") == 1  # counted
        app.close()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("which", ["referential", "negotiation", "handoff"])
def test_the_alternate_scenes_fit_every_window_size(size, which, tmp_path):
    from mirofish.ui.layout import inside_and_apart
    from mirofish.ui.scenes.handoff import HandoffScene
    from mirofish.ui.scenes.negotiation import NegotiationScene
    from mirofish.ui.scenes.referential import ReferentialScene

    scene = {"referential": ReferentialScene, "negotiation": lambda: NegotiationScene(seed=2),
             "handoff": HandoffScene}[which]()
    app = App([scene], size, offscreen=True)
    for _ in range(60):
        scene.step()
    app.frame(0.0)
    rects = scene.widget_rects()
    assert len(rects) >= 4 and not inside_and_apart(rects, size)
    assert all(r.w >= 150 and r.h >= 60 for r in rects.values()), rects
    app.close()


def test_the_mix_slider_makes_the_next_tank_more_sociable():
    scene = AquariumScene.live(load_config(seed=2))
    app = app_for(scene, (1280, 720))
    before = np.mean([f.traits["sociability"] for f in scene.snapshot().fish])
    mix = next(s for s in scene.sliders if s.label.startswith("mix"))
    t = mix.track
    for kind in (pygame.MOUSEBUTTONDOWN, pygame.MOUSEBUTTONUP):
        pygame.event.post(pygame.event.Event(kind, button=1, pos=(t.right - 1, t.centery)))
    app.frame(0.0)
    click(button(scene, "Reset").rect.center)
    app.frame(0.0)
    after = np.mean([f.traits["sociability"] for f in scene.snapshot().fish])
    assert scene.cfg.fish.sociability_shift == 50 and after > before + 30
    app.close()


def test_on_a_4k_screen_the_window_is_drawn_twice_as_large_and_clicks_land():
    from mirofish.ui import theme

    scene = AquariumScene.live(load_config(seed=2))
    app = app_for(scene, (3840, 2160))
    assert theme.SCALE == 2.0 and scene.pickers.size == (1920, 1080)  # drawn at 1920×1080, shown at 2×
    charts = button(scene, "Charts").rect
    click((charts.centerx * 2, charts.centery * 2))  # where the user sees it on the 4K screen
    app.frame(0.0)
    assert scene.show_charts
    app.close()
    assert theme.SCALE == 1.0  # closing the window forgets the scale


@pytest.mark.parametrize("which", ["referential", "negotiation"])
def test_a_scene_waiting_on_a_paced_model_keeps_the_window_drawing(which):
    """Each model call takes 1 s: the step runs on a worker, the window draws the last frame
    with "thinking…" at ≥ 30 FPS, and the step's result arrives."""
    import time

    from mirofish.brains.testserver import TestServer
    from mirofish.scenes.negotiation.model_agents import model_speakers
    from mirofish.scenes.referential.experiment import Experiment
    from mirofish.scenes.referential.game import GameConfig
    from mirofish.scenes.referential.model_agents import model_agent_factory
    from mirofish.ui.scenes.negotiation import NegotiationScene
    from mirofish.ui.scenes.referential import ReferentialScene

    with TestServer(latency=1.0) as server:
        if which == "referential":
            cfg = GameConfig(seed=1, rounds=5)
            scene = ReferentialScene(Experiment(cfg, agents="llm",
                                                model_agent_factory=model_agent_factory(server.url, "m", cfg)))
            progressed = lambda: len(scene.exp.rounds)
        else:
            speakers_for, close = model_speakers(server.url, "m", 1)
            scene = NegotiationScene(seed=1, speakers_for=speakers_for)
            progressed = lambda: len(scene.neg.turns)
        assert scene.uses_model
        app = App([scene], (1280, 720), offscreen=True)
        app.frame(0.0)
        key(pygame.K_PERIOD)  # one step: a model call of ~1 s (two for a referential round)
        frames, start = [], time.perf_counter()
        app.frame(0.0)
        while scene.thinking and time.perf_counter() - start < 15:
            t = time.perf_counter()
            app.frame(1 / 60)
            frames.append(time.perf_counter() - t)
            time.sleep(0.005)
        app.frame(0.0)
        assert time.perf_counter() - start >= 0.9 and progressed() >= 1
        assert scene.thinking_frames >= 20 and sorted(frames)[len(frames) // 2] < 1 / 30
        app.close()
        if which == "negotiation":
            close()


def test_replay_of_a_model_run_shows_what_a_fish_saw_and_said_and_asks_again(tmp_path):
    """In a replay at 1280x720: the followed fish's last decision comes with the message its model
    got and its raw reply; G sends that request again (the answer beside the recorded one), I
    interviews the fish with the context it had at the tick shown — neither freezes the window."""
    import time

    from mirofish.brains.testserver import TestServer

    with TestServer() as server:
        cfg = load_config(seed=3, **{"fish.count": 12, "brain.kind": "llm",
                                     "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini"}]})
        eng = LiveSession(cfg)
        rec = Recorder(tmp_path / "model.db", cfg).attach(eng)
        eng.run(60)
        rec.close()
        eng.close()
        from mirofish.session.trust import ReaderChoice

        player = ReplaySession(tmp_path / "model.db")
        player.choice = ReaderChoice(base_url=server.url)  # replay --base-url: the server the user names
        scene = AquariumScene(player)
        app = app_for(scene, (1280, 720))
        scene.pacer.paused = True
        scene.selected = 0
        for _ in range(3):
            scene.step()  # fish 0 asked at tick 0: its first plan
        call = scene.last_decision[0]["call"]
        assert call["user"].startswith("You are ") and call["reply"].startswith("{") and call["read"] == "ok"
        key(pygame.K_g)
        app.frame(0.0)
        start = time.perf_counter()
        while not scene.why["again"].done() and time.perf_counter() - start < 10:
            app.frame(1 / 60)
        lines = [t for t, _ in scene._why_lines()]
        assert "the same answer" in lines
        key(pygame.K_i)
        app.frame(0.0)
        while not scene.why["future"].done() and time.perf_counter() - start < 20:
            app.frame(1 / 60)
        assert scene.why["future"].result()["text"]
        app.screenshot(tmp_path / "panel.png")
        app.close()


def test_t_with_the_embedded_brain_types_a_question_and_letters_stay_text():
    """With the embedded brain T opens the question box too: h, s and q are letters of the
    question (not help, next scene, quit); Enter answers with the planner's reasons and says
    the embedded brain does not talk."""
    from mirofish.ui.scenes.referential import ReferentialScene

    scene = AquariumScene.live(load_config(seed=2))
    app = App([scene, ReferentialScene()], (1280, 720), offscreen=True)
    app.frame(0.0)
    scene.selected = 3
    key(pygame.K_t)
    for k, ch in ((pygame.K_h, "h"), (pygame.K_s, "s"), (pygame.K_q, "q")):
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=0, unicode=ch))
    app.frame(0.0)
    assert scene.typing == "hsq" and not scene.show_help and app.scene is scene and app.running
    key(pygame.K_RETURN)
    app.frame(0.0)
    lines = [t for t, _ in scene._why_lines()]
    assert "you asked: hsq" in lines and any("does not talk" in t for t in lines)
    assert any(t.startswith("plan now") for t in lines)
    scene.selected = None
    key(pygame.K_t)
    app.frame(0.0)
    assert scene.typing is None and "follow a fish first" in scene.message
    app.close()


def test_a_one_tick_plan_reads_in_the_singular():
    from mirofish.fish.plans import Goal, describe, parse_plan

    assert describe(int(Goal.HOLD), 5, 1) == "hold rest for 1 tick"
    assert parse_plan("hold rest for 1 tick") == (int(Goal.HOLD), 5, 1)


def test_after_a_seek_the_panel_shows_only_decisions_before_the_tick_shown(recording):
    """Replay: played to t500, then dragged back — the follow panel's last decision is the
    fish's last one before the tick shown (as the recording says), never a later one; the
    behaviour counts are the plans up to there. The same when the replay opens at a tick."""
    session = ReplaySession(recording)
    session._CHECKPOINT_TICKS = 100  # exercise the checkpoints on a short recording
    scene = AquariumScene(session)
    app = app_for(scene, (1280, 720))
    scene.pacer.paused = True
    scene.seek(500)
    for _ in range(5):
        scene.step()
    rec = session.recording
    for target in (480, 333, 120, 7):
        scene.seek(target)
        shown = scene.tick
        assert all(d["tick"] < shown for d in scene.last_decision.values())
        expect_last, expect_counts = {}, np.zeros_like(scene.goal_counts)
        for t in range(rec.first_tick, shown):
            d = rec.decisions_at(t)
            for f, g in zip(d.fish.tolist(), d.goal.tolist()):
                expect_last[f] = t
                expect_counts[f, g] += 1
        assert {f: d["tick"] for f, d in scene.last_decision.items()} == expect_last
        assert np.array_equal(scene.goal_counts, expect_counts)
    fresh = AquariumScene(ReplaySession(recording))
    fresh.seek(333)  # replay --at-tick 333
    scene.seek(333)
    assert fresh.last_decision.keys() == scene.last_decision.keys() and fresh.last_decision
    app.close()


def test_o_after_a_live_fork_brings_back_every_panel_as_it_was_at_the_fork():
    scene = AquariumScene.live(load_config(seed=2))
    app = app_for(scene, (1280, 720))
    scene.pacer.paused = True
    for _ in range(60):
        scene.step()
    scene.selected = 5
    before = ({f: d["tick"] for f, d in scene.last_decision.items()}, scene.goal_counts.copy(),
              scene.energy_hist.copy())
    tick = scene.tick
    scene.start_fork("rest 10")
    for _ in range(80):
        scene.step()
    assert max(d["tick"] for d in scene.last_decision.values()) > tick  # the branch decided meanwhile
    scene.end_fork()
    assert scene.tick == tick
    assert {f: d["tick"] for f, d in scene.last_decision.items()} == before[0]
    assert np.array_equal(scene.goal_counts, before[1]) and np.array_equal(scene.energy_hist, before[2])
    app.close()


def test_at_1024x600_the_controls_that_do_not_fit_are_in_a_menu_that_works(tmp_path):
    scene = AquariumScene.live(load_config(seed=2))
    scene.saves = tmp_path
    app = app_for(scene, (1024, 600))
    scene.selected = 3
    app.frame(0.0)
    assert scene.hidden_buttons, "at 1024x600 with a fish followed some controls do not fit"
    hidden = [b.label for b in scene.hidden_buttons]
    assert "Help" in hidden and "Open recording" in hidden
    more = button(scene, "More")
    click(more.rect.center)
    app.frame(0.0)
    assert scene.show_menu
    rows = dict((b.label, r) for b, r in scene.controls.menu_rows())
    assert all(app.canvas().get_rect().contains(r) for r in rows.values())
    click(rows["Help"].center)
    app.frame(0.0)
    assert scene.show_help and not scene.show_menu
    key(pygame.K_ESCAPE)
    click(button(scene, "More").rect.center)
    app.frame(0.0)
    click(dict((b.label, r) for b, r in scene.controls.menu_rows())["Open recording"].center)
    app.frame(0.0)
    assert "no recordings in" in scene.message  # the picker's own answer: the click reached it
    app.close()


def test_escape_closes_one_thing_at_a_time_and_twice_quits():
    scene = AquariumScene.live(load_config(seed=2))
    app = app_for(scene, (1280, 720))
    scene.selected, scene.show_help = 4, True
    for expect in ("help", "fish", "quit?"):
        key(pygame.K_ESCAPE)
        app.frame(0.0)
        if expect == "help":
            assert not scene.show_help and scene.selected == 4 and app.running
        elif expect == "fish":
            assert scene.selected is None and app.running
        else:
            assert "Esc again" in scene.message and app.running
    key(pygame.K_ESCAPE)
    app.frame(0.0)
    assert not app.running
    app.close()


def test_keys_typed_into_a_picker_or_a_question_never_switch_scene_or_quit():
    from mirofish.ui.scenes.referential import ReferentialScene

    scene = AquariumScene.live(load_config(seed=2))
    app = App([scene, ReferentialScene()], (1280, 720), offscreen=True)
    app.frame(0.0)
    scene.typing = ""
    for k, ch in ((pygame.K_s, "s"), (pygame.K_q, "q"), (pygame.K_h, "h")):
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=0, unicode=ch))
    app.frame(0.0)
    assert app.running and app.scene is scene and scene.typing == "sqh" and not scene.show_help
    scene.typing = None
    key(pygame.K_u)  # the current picker: its keys are its own
    key(pygame.K_s)
    app.frame(0.0)
    assert app.scene is scene and "cancelled" in scene.message
    app.close()


def test_the_scenes_explain_themselves_on_h(tmp_path):
    from mirofish.ui.scenes.handoff import HandoffScene
    from mirofish.ui.scenes.negotiation import NegotiationScene
    from mirofish.ui.scenes.referential import ReferentialScene

    for scene in (NegotiationScene(seed=1), ReferentialScene(), HandoffScene()):
        app = app_for(scene, (1280, 720))
        plain = app.canvas().copy()
        key(pygame.K_h)
        app.frame(0.0)
        assert scene.show_help and scene.help_lines
        assert pygame.image.tobytes(app.canvas(), "RGB") != pygame.image.tobytes(plain, "RGB")
        key(pygame.K_ESCAPE)
        app.frame(0.0)
        assert not scene.show_help
        app.close()


def test_a_slider_whose_value_is_beyond_its_range_stays_inside_its_panel():
    """A tank made with more fish than the "fish at reset" slider reaches (``--fish 10000``)
    shows the value in the label and a full track — nothing drawn past the slider's own width."""
    from mirofish.ui.widgets import Slider

    pygame.init()
    surf = pygame.Surface((400, 60))
    surf.fill((0, 0, 0))
    s = Slider("fish at reset", 10, 240, 10_000, lambda v: None, "{:.0f}", step=1)
    s.rect = pygame.Rect(20, 10, 200, 40)
    s.draw(surf)
    px = pygame.surfarray.array3d(surf)
    assert px[240:, :, :].sum() == 0, "the slider drew past its right edge"
    assert px[200:215, 33, :].sum() > 0  # the track is filled to its end
