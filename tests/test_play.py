"""Play a fish: a person takes the controls of the followed fish (J in the window), its moves and
plans are the person's — recorded as interventions and replayed like any other decision — and
its brain is not asked until it is given back."""

import numpy as np
import pygame
import pytest

from mirofish.actions import Action
from mirofish.brains.base import TIER_INDEX, DecisionBatch
from mirofish.config import load_config
from mirofish.fish.plans import parse_plan
from mirofish.observe.recording import Recording
from mirofish.session import LiveSession, ReplaySession
from mirofish.session.play import PlayError
from mirofish.ui.app import App
from mirofish.ui.scenes.aquarium import AquariumScene

FISH, SEED = 5, 7
INTERVENTION = TIER_INDEX["intervention"]


def xy(session, fish=FISH):
    v = session.view()
    return int(v.x[fish]), int(v.y[fish])


def tiers_of(session, fish, ticks):
    """Step ``ticks`` ticks; the tier of every decision ``fish`` was given meanwhile."""
    out = []
    for _ in range(ticks):
        frame = session.step()
        for b in frame.applied:
            out += [int(t) for f, t in zip(b.fish.tolist(), b.tier.tolist()) if f == fish]
    return out


def test_a_played_fish_goes_where_the_person_steers_and_its_brain_is_not_asked():
    s = LiveSession(load_config(seed=SEED))
    s.run(50)  # fish 5 is at (79, 38) here, open water east of it
    x0, y0 = xy(s)
    player = s.play(FISH)
    player.steer(Action.MOVE_E)
    tiers = tiers_of(s, FISH, 6)
    assert xy(s) == (x0 + 6, y0)  # one cell east each tick the key is down
    assert tiers and set(tiers) == {INTERVENTION}
    player.release(Action.MOVE_E)
    s.run(2)
    still = xy(s)
    s.run(4)
    assert xy(s) == still and "waiting for you" in s.decisions().last[FISH]["thought"]  # nothing chosen: it waits
    player.choose("explore north 10")
    tiers = tiers_of(s, FISH, 10)
    assert xy(s)[1] < still[1] - 5 and set(tiers) == {INTERVENTION}
    assert s.stop_playing() == FISH and s.player is None
    tiers = tiers_of(s, FISH, 30)
    assert TIER_INDEX["instinct"] in tiers  # given back: its brain decides again
    s.close()


def test_a_tap_moves_once_even_when_let_go_before_the_tick():
    s = LiveSession(load_config(seed=SEED))
    s.run(50)
    x0, y0 = xy(s)
    player = s.play(FISH)
    player.steer(Action.MOVE_E)
    player.release(Action.MOVE_E)
    s.run(4)
    assert xy(s) == (x0 + 1, y0)
    s.close()


def test_played_decisions_are_recorded_as_interventions_and_replay_tick_by_tick(tmp_path):
    path = tmp_path / "played.db"
    s = LiveSession(load_config(seed=SEED))
    s.start_recording(path)
    hashes, script = {}, {40: ("steer", Action.MOVE_E), 47: ("release", None), 52: ("plan", "explore south 12"),
                          70: ("steer", Action.MOVE_W), 75: ("stop", None)}
    player = None
    for _ in range(120):
        what, arg = script.get(s.tick, (None, None))
        if s.tick == 40:
            player = s.play(FISH)
        if what == "steer":
            player.steer(arg)
        elif what == "release":
            player.release()
        elif what == "plan":
            player.choose(arg)
        elif what == "stop":
            s.stop_playing()
        s.step()
        hashes[s.tick] = s.state_hash()
    s.close()
    rec = Recording(path)
    played = [(t, d) for t in range(40, 75) if (d := rec.decisions_at(t)) is not None and FISH in d.fish.tolist()]
    assert len(played) >= 20
    for t, d in played:
        i = d.fish.tolist().index(FISH)
        assert d.tier[i] == INTERVENTION and d.thoughts[FISH].startswith("played:"), t
    goal = parse_plan("explore south 12")[0]
    assert any(d.goal[d.fish.tolist().index(FISH)] == goal for _, d in played)
    replay = ReplaySession(rec)
    while replay.tick < 120:
        replay.step()
        assert replay.state_hash() == hashes[replay.tick], f"replay diverged at t{replay.tick}"
    with pytest.raises(PlayError, match="replay plays back"):
        replay.play(FISH)
    replay.close()
    untouched = LiveSession(load_config(seed=SEED))
    untouched.run(120)
    assert untouched.state_hash() != hashes[120]  # the person changed the tank
    untouched.close()


def test_only_a_fish_in_the_water_can_be_played():
    s = LiveSession(load_config(seed=SEED, overrides=["fish.spare=2"]))
    with pytest.raises(PlayError, match="not in the water"):
        s.play(s.world.school.n - 1)  # a spare room, empty
    with pytest.raises(PlayError, match="not in the water"):
        s.play(10_000)
    with pytest.raises(PlayError, match="plan"):
        s.play(FISH).choose("swim backwards")
    s.close()


def test_an_answer_still_under_way_when_play_begins_is_dropped():
    """A model's late answer to a request made before the person took over never overrides them."""
    s = LiveSession(load_config(seed=SEED))
    s.run(20)
    s.play(FISH).steer(Action.MOVE_E)
    late = DecisionBatch(tick=s.tick - 5, fish=np.array([FISH]), actions=None, goals=np.array([1], np.int8),
                         params=np.array([0], np.int16), horizons=np.array([60], np.int32),
                         tier=np.array([TIER_INDEX["small"]], np.int8))
    s.engine.source.results.put(late)
    frame = s.step()
    given = [int(t) for b in frame.applied for f, t in zip(b.fish.tolist(), b.tier.tolist()) if f == FISH]
    assert given == [INTERVENTION]
    s.close()


def key(k, up=False):
    pygame.event.post(pygame.event.Event(pygame.KEYUP if up else pygame.KEYDOWN, key=k, mod=0, unicode=""))


def test_in_the_window_j_arrows_and_the_plan_picker_play_the_followed_fish():
    scene = AquariumScene.live(load_config(seed=SEED))
    app = App([scene], (1280, 720), offscreen=True)
    try:
        scene.pacer.paused = True
        while scene.tick < 50:
            scene.step()
        scene.selected = FISH
        x0, y0 = xy(scene.shown)
        key(pygame.K_j)
        app.frame(0.0)
        assert scene.shown.player is not None and "you play fish 5" in scene.message
        key(pygame.K_RIGHT)  # with a fish played, Right moves it instead of following the next fish
        app.frame(0.0)
        for _ in range(4):
            scene.step()
        assert scene.selected == FISH and xy(scene.shown) == (x0 + 4, y0)
        key(pygame.K_RIGHT, up=True)
        key(pygame.K_f)
        app.frame(0.0)
        assert scene.pickers.action and "pick its plan" in scene.message
        key(pygame.K_3)  # explore north 30: the fish's own plan, no fork
        app.frame(0.0)
        assert scene.fork is None and "follows your plan" in scene.message
        for _ in range(6):
            scene.step()
        assert xy(scene.shown)[1] < y0 - 3
        app.frame(0.0)
        assert scene._status()["mode"] == "YOU PLAY FISH 5"
        key(pygame.K_j)
        app.frame(0.0)
        assert scene.shown.player is None and "its brain's again" in scene.message
        key(pygame.K_RIGHT)  # not playing: Right follows the next fish again
        app.frame(0.0)
        assert scene.selected == FISH + 1
    finally:
        app.close()


def test_the_wrapped_brains_questions_alerts_and_drift_still_answer_while_a_fish_is_played():
    """The session asks its source for ask / alerts / drift (a model pool has them): playing a fish
    must not hide them."""
    from mirofish.brains.base import InlineSource
    from mirofish.session.play import PlaySource

    class Pool(InlineSource):
        def alerts(self):
            return ["server slow"]

        def drift(self):
            return {3: 0.4}

    inner = Pool(lambda batch: None)
    played = PlaySource(inner, FISH)
    assert played.alerts() == ["server slow"] and played.drift() == {3: 0.4}
    with pytest.raises(AttributeError):
        played.no_such_thing  # noqa: B018 — a name neither has is still an AttributeError
