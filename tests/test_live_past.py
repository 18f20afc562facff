"""A live tank with a past: interventions that replay and fork exactly, the recent past kept
without Record, "Keep this", and panels that show the tank as of the tick on screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np
import pygame
import pytest

from mirofish.config import load_config
from mirofish.interventions import InterventionError, read_file
from mirofish.observe.recording import Recording
from mirofish.session import LiveSession, ReplaySession
from mirofish.session.replay import fork_recording
from mirofish.ui.app import App
from mirofish.ui.scenes.aquarium import AquariumScene

EVERY_KIND = {
    40: [{"kind": "food", "x": 30, "y": 20}, {"kind": "rock", "x": 50, "y": 30}],
    60: [{"kind": "remove", "fish": 3}],
    90: [{"kind": "current", "dir": "east", "ticks": 40}],
    120: [{"kind": "add", "x": 40, "y": 20, "traits": [95, 50, 20, 50, 50]}],
    150: [{"kind": "tune", "key": "steering.alignment", "value": 1.5}, {"kind": "clear", "x": 50, "y": 30}],
    210: [{"kind": "rock", "x": 20, "y": 12}, {"kind": "current", "dir": "north", "ticks": 30}],
    250: [{"kind": "add", "x": 10, "y": 10}],
}
CONFIG = ["record.keyframe_every=50", "fish.spare=1"]  # room for one more fish; fish 3 taken out makes two


def as_given(ivs: list[dict]) -> list[dict]:
    """Interventions as they were asked for (without what applying them added: cells, the new fish's id)."""
    return [{k: v for k, v in iv.items() if k not in ("cells",) and not (iv["kind"] == "add" and k == "fish")}
            for iv in ivs]


@pytest.fixture(scope="module")
def touched(tmp_path_factory):
    """A 300-tick recording with every kind of intervention, and the live run's hash per tick."""
    path = tmp_path_factory.mktemp("iv") / "touched.db"
    cfg = load_config(seed=5, overrides=CONFIG)
    live = LiveSession(cfg)
    live.start_recording(path)
    hashes = {}
    for _ in range(300):
        for iv in EVERY_KIND.get(live.tick, []):
            live.intervene(iv)
        live.step()
        hashes[live.tick] = live.state_hash()
    live.close()
    return path, hashes


def test_every_kind_of_intervention_changes_the_tank_and_replays_tick_by_tick(touched):
    path, hashes = touched
    rec = Recording(path)
    assert {t: as_given(ivs) for t, ivs in rec.interventions().items()} == EVERY_KIND
    added = [iv["fish"] for ivs in rec.interventions().values() for iv in ivs if iv["kind"] == "add"]
    assert added == [3, 60]  # the lowest free room: fish 3 taken out at t60, then the spare one
    assert all(iv["cells"] > 0 for t, ivs in rec.interventions().items() for iv in ivs
               if iv["kind"] in ("food", "rock", "clear"))
    replay = ReplaySession(rec)
    while replay.tick < 300:
        replay.step()
        assert replay.state_hash() == hashes[replay.tick], f"diverged at t{replay.tick}"
    for t in (45, 120, 160, 260, 299, 40):  # seeks restore rocks, currents and tuning from keyframes
        replay.seek(t)
        assert replay.state_hash() == hashes[t]
    replay.close()
    untouched = LiveSession(load_config(seed=5, overrides=CONFIG))
    untouched.run(300)
    assert untouched.state_hash() != hashes[300]  # they changed something
    rec.close()


def test_a_current_pushes_the_fish_the_way_it_flows():
    cfg = load_config(seed=5)
    plain, pushed = LiveSession(cfg), LiveSession(cfg)
    plain.run(50)
    pushed.run(50)
    pushed.intervene({"kind": "current", "dir": "east", "ticks": 40})
    plain.run(40)
    pushed.run(40)
    assert pushed.view().x.mean() > plain.view().x.mean() + 5
    assert pushed.world.current is None or pushed.tick >= pushed.world.current[1]


def test_a_fork_of_a_recording_reproduces_its_interventions(touched):
    path, _ = touched
    rec = Recording(path)
    fork = fork_recording(rec, 20, 3, "rest 30")
    applied = {}
    while fork.tick < 300:
        frame = fork.step()
        if frame.interventions:
            applied[frame.tick] = as_given(frame.interventions)
    assert applied == EVERY_KIND
    assert fork.world.tuned() == {"steering.alignment": 1.5}
    fork.close()
    rec.close()


def test_fork_flags_drop_food_and_an_interventions_file_are_recorded_and_replay(touched, tmp_path):
    path, _ = touched
    plan = tmp_path / "plan.jsonl"
    plan.write_text('# a rock in the school\'s way\n{"tick": 130, "kind": "rock", "x": 60, "y": 25}\n')
    out = tmp_path / "fork.db"
    cmd = [sys.executable, "-m", "mirofish", "fork", str(path), "--at", "100", "--drop-food", "40,20",
           "--current", "west,20", "--interventions", str(plan), "--ticks", "100", "--record", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["fish"] is None and "food dropped at 40,20 at t100" in summary["action"]
    kept = Recording(out)
    ticks = {t: [iv["kind"] for iv in ivs] for t, ivs in kept.interventions().items()}
    assert ticks[100] == ["food", "current"] and ticks[130] == ["rock"] and ticks[150] == ["tune", "clear"]
    replay = ReplaySession(kept)
    replay.seek(200)
    assert replay.state_hash() == summary["final_state_hash"]
    replay.close()
    kept.close()
    help_text = subprocess.run([sys.executable, "-m", "mirofish", "fork", "--help"], capture_output=True,
                               text=True).stdout
    assert all(flag in help_text for flag in ("--drop-food", "--rock", "--clear-rock", "--current", "--interventions"))


@pytest.mark.parametrize("args, says", [
    (["--drop-food", "40"], "expected X,Y"),
    (["--drop-food", "400,20"], "outside the tank"),
    (["--current", "up,10"], "dir must be one of"),
    ([], "say what changes"),
    (["--fish", "3"], "go together"),
])
def test_bad_intervention_flags_get_one_line_and_exit_2(touched, args, says):
    path, _ = touched
    done = subprocess.run([sys.executable, "-m", "mirofish", "fork", str(path), "--at", "10", *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_interventions_file_with_a_bad_line_is_named(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"tick": 5, "kind": "food", "x": 1, "y": 2}\n{"tick": 6, "kind": "flood"}\n')
    with pytest.raises(InterventionError, match="line 2: unknown intervention 'flood'"):
        read_file(bad)


# ---------------------------------------------------------------- the recent past


def test_the_recent_past_is_trimmed_replays_to_now_and_keep_makes_a_recording(tmp_path):
    cfg = load_config(seed=4, overrides=["record.history_minutes=1.0", "record.keyframe_every=20"])
    live = LiveSession(cfg, past=True)  # one simulated minute = 120 ticks
    folder = live.past_folder
    live.run(400)
    live.intervene({"kind": "food", "x": 30, "y": 20})
    live.run(20)
    past = live.past()
    assert 400 - 120 - 20 <= past.first_tick <= 420 - 120 and past.last_tick == live.tick == 420
    past.seek(420)
    assert past.state_hash() == live.state_hash()
    past.close()
    kept = live.keep(tmp_path / "kept.db")
    assert not folder.exists()  # the temporary past is gone; the kept file goes on
    live.run(30)
    now = live.state_hash()
    assert live.stop_recording() == kept
    replay = ReplaySession(kept)
    assert replay.first_tick >= 280 and replay.last_tick == 450
    replay.seek(450)
    assert replay.state_hash() == now
    replay.close()
    assert live.past_folder is not None  # a new recent past starts when the recording stops
    live.close()
    assert not live.past_folder


def test_closing_a_live_tank_removes_its_past_unless_kept():
    live = LiveSession(load_config(seed=1), past=True)
    folder = live.past_folder
    live.run(30)
    assert (folder / "past.db").exists()
    live.close()
    assert not folder.exists()


def _ticks_of(scene) -> dict[int, int]:
    return {f: d["tick"] for f, d in scene.last_decision.items()}


def _fresh(seed: int, ticks: int) -> LiveSession:
    """The same tank run straight to ``ticks``: what every panel should show there."""
    fresh = LiveSession(load_config(seed=seed))
    fresh.run(ticks)
    return fresh


def test_live_rewind_drag_back_fork_return_to_now_and_keep(tmp_path):
    """The acceptance path: 60 fish, 5 simulated minutes without Record; drag the timeline
    back 3 minutes; fork a fish there; O; N back to now; K keeps the past, which replays to
    the live tank's state."""
    scene = AquariumScene.live(load_config(seed=6))
    scene.saves = tmp_path
    app = App([scene], (1280, 720), offscreen=True)
    scene.pacer.paused = True
    for _ in range(600):  # 5 simulated minutes at 0.5 s a tick
        scene.step()
    app.frame(0.0)
    now_tick, now_hash = scene.tick, scene.session.state_hash()
    bar = scene.timeline.bar
    x = scene.timeline.x_of(240)
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(x, bar.centery)))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=(x, bar.centery)))
    app.frame(0.0)
    assert scene.mode == "replay" and abs(scene.tick - 240) <= 2 and scene.live_home is not None
    back = scene.tick
    assert all(t < back for t in _ticks_of(scene).values())  # no decision from after the tick shown
    fresh = _fresh(6, back)
    assert _ticks_of(scene) == {f: d["tick"] for f, d in fresh.decisions().last.items()}
    assert np.array_equal(scene.goal_counts[:60], fresh.decisions().counts)  # (the window has room for 8 more)
    fresh.close()
    scene.selected = 11
    scene.start_fork("explore east 30")
    for _ in range(40):
        scene.step()
    scene.end_fork()
    assert scene.tick == back and all(t < back for t in _ticks_of(scene).values())
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_n, mod=0, unicode="n"))
    app.frame(0.0)
    assert scene.mode == "live" and scene.tick == now_tick and scene.session.state_hash() == now_hash
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_k, mod=0, unicode="k"))
    app.frame(0.0)
    kept = list(tmp_path.glob("kept-*.db"))
    assert len(kept) == 1 and scene.session.is_recording
    for _ in range(20):
        scene.step()
    final = scene.session.state_hash()
    scene.session.stop_recording()
    replay = ReplaySession(kept[0])
    assert replay.first_tick == 0 and replay.last_tick == now_tick + 20
    replay.seek(now_tick)
    assert replay.state_hash() == now_hash
    replay.seek(now_tick + 20)
    assert replay.state_hash() == final
    replay.close()
    app.close()


def test_playing_the_past_forward_becomes_live_again_at_now():
    scene = AquariumScene.live(load_config(seed=2))
    app = App([scene], (1280, 720), offscreen=True)
    scene.pacer.paused = True
    for _ in range(100):
        scene.step()
    now = scene.session.state_hash()
    scene.seek(90)
    assert scene.mode == "replay"
    for _ in range(11):
        scene.step()
    assert scene.mode == "live" and scene.tick == 100 and scene.session.state_hash() == now
    scene.step()
    assert scene.tick == 101
    app.close()


def test_a_live_fork_then_o_shows_the_panels_of_the_fork_tick_and_its_past_has_no_branch(tmp_path):
    scene = AquariumScene.live(load_config(seed=2))
    app = App([scene], (1280, 720), offscreen=True)
    scene.pacer.paused = True
    for _ in range(80):
        scene.step()
    tick, state = scene.tick, scene.session.state_hash()
    scene.selected = 5
    scene.start_fork("rest 10")
    for _ in range(60):
        scene.step()
    scene.end_fork()
    assert scene.tick == tick and all(t < tick for t in _ticks_of(scene).values())
    fresh = _fresh(2, tick)
    assert _ticks_of(scene) == {f: d["tick"] for f, d in fresh.decisions().last.items()}
    for _ in range(30):  # on from the fork tick; the past forgot the parent's run beside the branch
        scene.step()
        fresh.step()
    assert scene.session.state_hash() == fresh.state_hash()
    past = scene.session.past()
    assert past.last_tick == tick + 30
    past.seek(tick + 30)
    assert past.state_hash() == fresh.state_hash()
    past.close()
    fresh.close()
    app.close()
    assert state


def test_interventions_from_the_window_are_recorded_with_their_tick(tmp_path):
    scene = AquariumScene.live(load_config(seed=3))
    app = App([scene], (1280, 720), offscreen=True)
    scene.pacer.paused = True
    for _ in range(20):
        scene.step()
    scene.tool = "food"
    rect = scene.renderer.rect
    pos = (rect.x + rect.w // 2, rect.y + rect.h // 2)
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=pos))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=pos))
    app.frame(0.0)
    assert scene.tick == 21 and "food dropped" in scene.message
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_u, mod=0, unicode="u"))
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_LEFT, mod=0, unicode=""))
    app.frame(0.0)
    assert "current west" in scene.message and scene.selected is None  # the arrow picked, not a fish
    past = scene.session.past()
    kinds = {t: [iv["kind"] for iv in ivs] for t, ivs in past.recording.interventions().items()}
    assert kinds == {20: ["food"], 21: ["current"]}
    past.close()
    app.close()


def test_one_drag_from_now_goes_on_into_the_past_and_to_start_never_resets_the_live_tank():
    """A real drag: press at now, move back step by step, release — the past follows the mouse
    to where it is released; "To start" there goes to the past's first tick, the live tank
    (waiting) is untouched."""
    scene = AquariumScene.live(load_config(seed=2))
    app = App([scene], (1280, 720), offscreen=True)
    scene.pacer.paused = True
    for _ in range(200):
        scene.step()
    app.frame(0.0)
    live_hash = scene.session.state_hash()
    tl = scene.timeline
    y = tl.bar.centery
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(tl.x_of(200), y)))
    for t in (190, 160, 120, 100):
        pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=(tl.x_of(t), y), rel=(0, 0), buttons=(1, 0, 0)))
        app.frame(0.0)
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=(tl.x_of(100), y)))
    app.frame(0.0)
    assert scene.mode == "replay" and abs(scene.tick - 100) <= 1
    next(b for b in scene.buttons if b.label == "To start").action()
    assert scene.mode == "replay" and scene.tick == 0 and scene.live_home is not None
    assert scene.live_home.tick == 200 and scene.live_home.state_hash() == live_hash
    app.close()


def test_room_for_more_fish_changes_nothing_until_one_is_added():
    plain = LiveSession(load_config(seed=8))
    roomy = LiveSession(load_config(seed=8, overrides=["fish.spare=5"]))
    for _ in range(150):
        plain.step()
        roomy.step()
        assert roomy.state_hash() == plain.state_hash()
    assert roomy.metrics_summary()["schooling_degree"] == plain.metrics_summary()["schooling_degree"]
    roomy.intervene({"kind": "add", "x": 30, "y": 20})
    roomy.step()
    plain.step()
    assert roomy.state_hash() != plain.state_hash()


def test_a_fish_taken_out_is_not_seen_asked_drawn_or_counted_and_an_added_one_joins_in():
    live = LiveSession(load_config(seed=8, overrides=["fish.spare=1"]))
    live.run(30)
    gone = 7
    live.intervene({"kind": "remove", "fish": gone})
    live.run(200)
    d = live.decisions().last[gone]
    assert d["tick"] < 30  # asked nothing since
    assert not live.fish(gone).in_water and live.view().present[gone] is np.False_
    w, s = live.world, live.world.school  # no fish in the water sees it: each sees exactly the others there
    here = np.flatnonzero(~s.absent)
    for i in here:
        others = np.isin(s.cell[here], s.cell[i] + w.window) & (here != i)
        assert s.neighbours[i] == np.count_nonzero(others)
    assert "fish 59" in __import__("mirofish.observe.ascii", fromlist=["x"]).status_line(live.snapshot())
    live.intervene({"kind": "add", "x": 40, "y": 25, "traits": [95, 10, 10, 50, 50]})
    frame = live.step()
    new = frame.interventions[0]["fish"]
    fish = live.fish(new)
    assert new in (7, 60) and fish.in_water and fish.traits["sociability"] == 95 and "sociable" in fish.persona
    assert abs(fish.x - 40) + abs(fish.y - 25) <= 2 and fish.memory_count <= 2
    live.run(60)
    assert live.decisions().last[new]["tick"] >= frame.tick  # it is asked like any fish
    live.intervene({"kind": "add", "x": 20, "y": 20})  # the other room (fish.spare = 1, and fish 7's)
    live.step()
    with pytest.raises(InterventionError, match="no room for another fish"):
        live.intervene({"kind": "add", "x": 40, "y": 25})
    live.close()


def test_fork_flags_add_and_remove_fish(touched, tmp_path):
    path, _ = touched
    done = subprocess.run([sys.executable, "-m", "mirofish", "fork", str(path), "--at", "20", "--remove-fish", "5",
                           "--ticks", "30"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "fish 5 taken out at t20" in json.loads(done.stdout)["action"]
    out = tmp_path / "refused.mirofish"
    full = subprocess.run([sys.executable, "-m", "mirofish", "fork", str(path), "--at", "280", "--add-fish", "30,20",
                           "--ticks", "10", "--record", str(out)], capture_output=True, text=True, timeout=60)
    assert full.returncode == 2 and "no room for another fish" in full.stderr
    assert len(full.stderr.strip().splitlines()) == 1 and not out.exists()  # (refused before its recording opened)
    from mirofish.observe.recording import RecordingError
    from mirofish.session import fork

    remove, add = {"kind": "remove", "fish": 5}, {"kind": "add", "x": 30, "y": 20}
    fork(path, 280, None, None, 5, added=[(280, remove), (280, add)])  # (a room freed first, then taken)
    with pytest.raises(RecordingError, match="no room for another fish"):
        fork(path, 280, None, None, 5, added=[(280, add), (280, remove)])
    bad = subprocess.run([sys.executable, "-m", "mirofish", "fork", str(path), "--at", "20", "--add-fish", "3,4,5",
                          "--ticks", "10"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "five traits" in bad.stderr


def _chart_ticks(scene) -> list[int]:
    return [t for t, _ in scene.series.points["schooling_degree"]]


def test_the_live_charts_end_at_the_tick_shown_and_come_back_at_now():
    """Charts (key C) after going back into the live past, a fork there and O, playing the past
    on, and N: never a point after the tick shown, never a tick twice or out of order, and at
    now the live tank's whole series again."""
    scene = AquariumScene.live(load_config(seed=3))
    app = App([scene], (1280, 720), offscreen=True)
    scene.pacer.paused = True
    for _ in range(300):
        scene.step()
    live_points = _chart_ticks(scene)
    assert live_points[-1] <= 300 and len(live_points) >= 25
    scene.seek(150)
    assert scene.mode == "replay" and max(_chart_ticks(scene)) <= scene.tick
    scene.selected = 4
    scene.start_fork("rest 10")
    for _ in range(50):
        scene.step()
    scene.end_fork()
    assert max(_chart_ticks(scene)) <= scene.tick == 150
    app.frame(0.0)  # the timeline is the past's again, not stretched to where the fork ran
    assert (scene.timeline.first, scene.timeline.last) == (scene.replay.first_tick, scene.replay.last_tick) \
        and scene.timeline.last <= 300
    for _ in range(60):  # the past played on: its points, once each, in order
        scene.step()
        ticks = _chart_ticks(scene)
        assert ticks == sorted(set(ticks)) and ticks[-1] <= scene.tick
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_n, mod=0, unicode="n"))
    app.frame(0.0)
    assert scene.mode == "live" and scene.tick == 300 and _chart_ticks(scene) == live_points
    app.close()


def test_keep_while_the_past_is_shown_reads_the_kept_recording_and_stop_returns_to_now(tmp_path):
    """K while the past is shown: the tank and its timeline are the kept recording's at the tick
    shown; K again (Stop rec) closes it and the window is live at now, with a new past."""
    scene = AquariumScene.live(load_config(seed=4))
    scene.saves = tmp_path
    app = App([scene], (1280, 720), offscreen=True)
    scene.pacer.paused = True
    for _ in range(200):
        scene.step()
    scene.seek(100)
    shown = scene.tick
    scene.toggle_record()  # Keep this
    kept = list(tmp_path.glob("kept-*.db"))
    assert len(kept) == 1 and "kept t0..t200" in scene.message
    assert scene.mode == "replay" and scene.tick == shown
    assert np.array_equal(scene.view.x, scene.shown.view().x) and scene.timeline.last == 200
    for _ in range(5):
        scene.step()
    assert np.array_equal(scene.view.x, scene.shown.view().x) and scene.tick == shown + 5
    scene.toggle_record()  # Stop rec
    assert scene.mode == "live" and scene.tick == 200 and "back to now" in scene.message
    assert not scene.session.is_recording and np.array_equal(scene.view.x, scene.session.view().x)
    r = ReplaySession(kept[0])
    assert r.last_tick == 200
    r.close()
    app.frame(0.0)
    assert scene.timeline.x_of(scene.tick) == scene.timeline.bar.right  # a new past of one tick: the handle at now
    app.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [kept[0].name]  # no -wal/-shm/-lock left
