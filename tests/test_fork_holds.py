"""A forced plan holds for its horizon — in the window and headless alike — unless the fork's
own option (``replan``) lets triggers end it; whatever ends a plan early is named."""

import json
import subprocess
import sys

import pygame
import pytest

from mirofish.config import load_config
from mirofish.fish.plans import parse_plan
from mirofish.observe.recording import Recorder
from mirofish.session import LiveSession, ReplaySession
from mirofish.session.replay import fork_recording
from mirofish.ui.app import App
from mirofish.ui.scenes.aquarium import AquariumScene

AT, PLAN, TICKS = 200, "explore east 30", 40


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    path = tmp_path_factory.mktemp("hold") / "run.db"
    cfg = load_config(seed=4)
    eng = LiveSession(cfg)
    r = Recorder(path, cfg).attach(eng)
    eng.run(400)
    r.close()
    return path


def plans_of(session, fish, ticks):
    """The fish's plan goal and the tank's state hash after each tick."""
    out = []
    for _ in range(ticks):
        session.step()
        out.append((int(session.engine.world.school.plan_goal[fish]), session.state_hash()))
    return out


def headless(rec, fish, replan=False):
    s = fork_recording(rec, AT, fish, PLAN, replan=replan)
    try:
        return plans_of(s, fish, TICKS), s.fork_source.held
    finally:
        s.close()


def test_the_plan_holds_for_its_horizon_and_a_trigger_that_would_end_it_is_named(rec):
    goal = parse_plan(PLAN)[0]
    # the fish whose plan a trigger would end early when re-planning is allowed
    fish = next(f for f in range(30) if any(g != goal for g, _ in headless(rec, f, replan=True)[0][:30]))
    held, against = headless(rec, fish)
    assert all(g == goal for g, _ in held[:30]), held[:30]
    assert against, "no trigger was held against: the test would not show a hold"
    replanned, none = headless(rec, fish, replan=True)
    assert not none and any(g != goal for g, _ in replanned[:30])


def test_a_fork_in_the_window_is_the_same_fork_headless_tick_by_tick(rec):
    goal = parse_plan(PLAN)[0]
    fish = next(f for f in range(30) if any(g != goal for g, _ in headless(rec, f, replan=True)[0][:30]))
    expected, _ = headless(rec, fish)
    scene = AquariumScene(ReplaySession(rec))
    app = App([scene], (1280, 720), offscreen=True)
    try:
        scene.seek(AT)
        scene.selected = fish
        app.frame(0.0)
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_f, mod=0, unicode="f"))
        app.frame(0.0)
        assert scene.pickers.action and "pick a plan" in scene.message  # not a stale "fork cancelled"
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_6, mod=0, unicode="6"))  # explore east 30
        app.frame(0.0)
        assert scene.fork is not None and "holds it for its horizon" in scene.message
        got = plans_of(scene.fork, fish, TICKS)
        assert got == expected
    finally:
        app.close()


def test_fork_cli_replan_option(rec, tmp_path):
    goal = parse_plan(PLAN)[0]
    fish = next(f for f in range(30) if any(g != goal for g, _ in headless(rec, f, replan=True)[0][:30]))
    runs = {}
    for flag in ([], ["--replan"]):
        out = subprocess.run([sys.executable, "run.py", "fork", str(rec), "--at", str(AT), "--fish", str(fish),
                              "--plan", PLAN, "--ticks", str(TICKS), *flag], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        runs[bool(flag)] = json.loads(out.stdout)
    assert runs[False]["replan"] is False and runs[False]["held_against"]
    assert runs[True]["replan"] is True and runs[True]["held_against"] == []
    assert runs[False]["final_state_hash"] != runs[True]["final_state_hash"]
    bad = subprocess.run([sys.executable, "run.py", "fork", str(rec), "--at", str(AT), "--drop-food", "10,10",
                          "--replan"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--replan" in bad.stderr




def test_the_trigger_that_ended_a_plan_early_is_named_live_and_after_a_seek(rec):
    from mirofish.fish.triggers import T_HORIZON, ended_early

    live = LiveSession(load_config(seed=4))
    plan_end, early, seen = {}, 0, set()

    def check(frame):  # every decision: what ended the plan before it, against that plan's horizon
        nonlocal early
        for b, ended in zip(frame.applied, frame.ended):
            for f, h, code in zip(b.fish.tolist(), b.horizons.tolist(), ended.tolist()):
                if f in plan_end and code >= 0:
                    assert (frame.tick >= plan_end[f]) == (code == T_HORIZON), (frame.tick, f, code)
                    if ended_early(code):
                        early += 1
                        seen.add(ended_early(code))
                plan_end[f] = frame.tick + h if h else 10**9

    live.observers.append(check)
    live.run(300)
    assert early > 50 and {"found company", "ate"} <= seen, (early, seen)
    lasts = {f: d["ended"] for f, d in live.decisions().last.items()}
    replay = ReplaySession(rec)
    replay.seek(300)  # rebuilt from the recording: the same triggers, for every fish
    assert {f: d["ended"] for f, d in replay.decisions().last.items()} == lasts
    scene = AquariumScene(replay)
    named = {f: d["ended_by"] for f, d in scene.last_decision.items() if d["ended_by"]}
    assert named and all(v == ended_early(lasts[f]) for f, v in named.items())
    replay.close()
    live.close()
