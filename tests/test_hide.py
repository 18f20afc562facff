"""The hide plan: a behaviour added as one plan-type row and one target (fish/targets.py), with
no line of the compiled tick about it. Plants show as P with perception.plants_seen; a fish
told to hide swims beside the nearest plant in view and rests there until its horizon,
remembering its arrival; the compiled tick and the numpy one agree hash for hash."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mirofish.brains.prompt import PlanReply, fitting_choices, messages, plan_legal_for_view
from mirofish.config import load_config
from mirofish.fish import memory as mem
from mirofish.fish.plans import CODE, describe, fork_plans, parse_plan
from mirofish.session import LiveSession
from mirofish.water import PLANT

ROOT = Path(__file__).resolve().parent.parent
HIDE = CODE["hide"]
# a small planted tank: most fish start with a plant in view
PLANTS = {"perception.plants_seen": True, "world.width": 32, "world.height": 16, "world.plant_patches": 12,
          "world.plant_height": 9, "fish.count": 20}


def _hide_all(s: LiveSession, horizon: int = 40) -> None:
    w = s.world
    fish = np.flatnonzero(~w.school.absent)
    w.apply_plans(fish, np.full(fish.size, HIDE, np.int8), np.zeros(fish.size, np.int16),
                  np.full(fish.size, horizon, np.int16))


def _beside_plant(w, fish: np.ndarray) -> np.ndarray:
    plant = w.water.terrain == PLANT
    cells = w.school.cell[fish][:, None] + w.water.pw * np.array([[0, 0, -1, 1]]) + np.array([[-1, 1, 0, 0]])
    return plant[cells].any(axis=1)


def test_hide_is_one_row_that_reaches_the_prompt_the_picker_and_the_parser():
    assert "hide 40" in fork_plans()
    assert parse_plan("hide 30") == (HIDE, 0, 30) and describe(HIDE, 0, 30) == "hide for 30 ticks"
    view = ".....\n..P..\n..@..\n.....\n....."
    assert "hide" in fitting_choices(view)[0]
    assert "hide" not in fitting_choices(view.replace("P", "#"))[0]
    assert plan_legal_for_view(PlanReply(goal="hide"), view.replace("P", "#")) == "hide_without_plant"


def test_plants_show_as_p_only_when_switched_on_and_the_prompt_offers_hide_then():
    on = LiveSession(load_config(seed=2, **PLANTS, **{"brain.decides": "plan"}))
    off = LiveSession(load_config(seed=2, **{**PLANTS, "perception.plants_seen": False, "brain.decides": "plan"}))
    w_on, w_off = on.world, off.world
    near = [i for i in range(w_on.school.n) if "P" in w_on.perceive(i).view]
    assert near, "no fish sees a plant at the start"
    i = near[0]
    p_on, p_off = w_on.perceive(i), w_off.perceive(i)
    assert p_on.view.replace("P", "#") == p_off.view and "P" not in p_off.view
    sys_on, user_on = (m["content"] for m in messages(p_on, "a fish", "timeout", plans=True))
    sys_off, user_off = (m["content"] for m in messages(p_off, "a fish", "timeout", plans=True))
    assert "P a plant" in sys_on and "\nhide - swim beside the nearest plant" in sys_on
    assert "hide" not in sys_off and "P a plant" not in sys_off and "hide" not in user_off
    assert "hide" in user_on.split("\n")[-1]  # the plans that fit it


def test_a_fish_told_to_hide_reaches_a_plant_and_stays_and_remembers_it():
    s = LiveSession(load_config(seed=2, **PLANTS, **{"brain.decides": "plan"}))
    w = s.world
    sees = np.array([w.perceive(i).view.count("P") > 0 for i in range(w.school.n)])
    _hide_all(s, horizon=60)
    for _ in range(30):
        w.step()
    hiders = np.flatnonzero(sees & (w.school.plan_goal == HIDE))
    assert hiders.size >= 8
    beside = _beside_plant(w, hiders)
    assert beside.mean() >= 0.8, f"{beside.sum()} of {hiders.size} fish with a plant in view reached one"
    stayed = hiders[beside]
    cells = w.school.cell[stayed].copy()
    for _ in range(10):
        w.step()
    assert np.mean(w.school.cell[stayed] == cells) >= 0.6  # they rest there (a rest may still drift a cell)
    lines = [line for i in stayed for line in w.school.memory.lines(int(i))]
    assert any(mem.event_text(mem.ARRIVED, 0) in line for line in lines)
    # a fish with no plant in view keeps still where it is (its plan goes on: no churn of plans)
    blind = np.flatnonzero(~sees & ~_beside_plant(w, np.arange(w.school.n)))
    assert blind.size and np.all(w.school.plan_end[blind] == 60) and np.all(w.steering.rests[blind])


@pytest.mark.parametrize("seed", [2, 7])
def test_hiding_fish_on_the_compiled_tick_agree_with_the_numpy_tick_hash_for_hash(seed):
    cfg = load_config(seed=seed, **PLANTS, **{"brain.decides": "plan"})
    fast, ref = LiveSession(cfg), LiveSession(cfg)
    ref.world._kernel = None
    assert fast.world.tick_kernel == "compiled"
    for t in range(160):
        if t % 40 == 5:
            _hide_all(fast)
            _hide_all(ref)
        fast.step()
        ref.step()
        assert np.array_equal(fast.world.codes, ref.world.codes), t
        assert fast.state_hash() == ref.state_hash(), f"tick {fast.tick}: worlds differ"
    hiding = fast.world.school.plan_goal == HIDE
    assert np.count_nonzero(hiding) and np.count_nonzero(fast.world.steering.rests[hiding])


def test_a_recording_forks_to_hide_and_the_fork_replays_and_exports_the_goal_by_name(tmp_path):
    rec, fork, out = tmp_path / "r.mirofish", tmp_path / "f.mirofish", tmp_path / "x"
    run = [sys.executable, "-m", "mirofish"]
    sets = [a for k, v in PLANTS.items() if k != "fish.count" for a in ("--set", f"{k}={str(v).lower()}")]
    subprocess.run([*run, "live", "--headless", "--fish", "10", "--ticks", "80", "--seed", "2", *sets,
                    "--record", str(rec)], check=True, cwd=ROOT, capture_output=True, timeout=120)
    done = subprocess.run([*run, "fork", str(rec), "--at", "20", "--fish", "0", "--plan", "hide 50",
                           "--ticks", "60", "--record", str(fork)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    check = subprocess.run([*run, "replay", str(fork), "--headless", "--verify"], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    subprocess.run([*run, "export", str(fork), "--tables", str(out), "--format", "csv"], check=True, cwd=ROOT,
                   capture_output=True, timeout=120)
    rows = list(csv.DictReader((out / "decisions.csv").open()))
    fish0 = [r for r in rows if r["fish"] == "0" and int(r["tick"]) == 20]
    assert fish0 and fish0[0]["goal"] == "hide", fish0


def test_the_fork_picker_pages_through_every_plan_type_and_hide_is_on_the_second_page():
    import os

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import pygame

    from mirofish.ui import pickers

    picked = []

    class Pacer:
        paused = False

        def restart(self) -> None: ...

    p = pickers.Pickers(Pacer(), lambda kind, value: picked.append((kind, value)))
    shown = [plan for page in range(pickers.PAGES) for plan in pickers.fork_page(page)]
    assert shown == list(fork_plans()) and pickers.PAGES >= 2  # every entry, none cut
    p.open_fork()
    key = lambda k, mod=0: pygame.event.Event(pygame.KEYDOWN, key=k, mod=mod)
    assert p.handle_key(key(pygame.K_TAB)) and p.action and p.page == 1  # the picker stays open
    n = pickers.fork_page(1).index("hide 40")
    assert p.handle_key(key(pygame.K_1 + n)) and picked[-1] == ("fork", "hide 40")
    p.open_fork()
    p.handle_key(key(pygame.K_TAB))
    p.handle_key(key(pygame.K_TAB, pygame.KMOD_SHIFT))
    assert p.page == 0 and p.handle_key(key(pygame.K_2)) and picked[-1] == ("fork", "school 120")
    pygame.init()
    surf = pygame.Surface((1024, 600))
    p.open_fork()
    p.handle_key(key(pygame.K_PAGEDOWN))
    p.draw(surf, 12, 3)  # the second page draws (its lines are what a click on them picks)
    rect = pickers._fork_rect((1024, 600), None)
    assert pickers.fork_choice_at((rect.x + 40, rect.y + 62 + 23 * n + 5), (1024, 600), None, 1) == "hide 40"
