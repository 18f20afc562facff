"""The hexagonal tank (world.grid = "hex", mirofish/grid.py): six neighbours, six moves, a view
of 19 hexes, and a run that replays, forks and is drawn — and the square tank as it was."""

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import arrange, small_config

from mirofish.config import ConfigError, load_config
from mirofish.grid import HEX, SQUARE
from mirofish.observe.metrics import polarization
from mirofish.session import LiveSession
from mirofish.world import World

ROOT = Path(__file__).resolve().parent.parent


def run(*args, timeout=120, env=None):
    return subprocess.run([sys.executable, str(ROOT / "run.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})})


def neighbours(x, y):
    """The six hexes around (x, y) in odd-r offset coordinates, from first principles: axial
    (q, r) with q = x - (y - (y & 1)) // 2, the six axial steps, back to offset."""
    q = x - (y - (y & 1)) // 2
    out = set()
    for dq, dr in ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)):
        r = y + dr
        out.add((q + dq + (r - (r & 1)) // 2, r))
    return out


def test_the_square_grid_gives_the_offsets_the_tank_always_had():
    pw = 100
    assert SQUARE.deltas(pw).tolist() == [-pw, pw, -1, 1]
    assert SQUARE.eat_offsets(pw).tolist() == [0, -pw, pw, -1, 1]
    dy, dx = np.mgrid[-2:3, -2:3]
    assert SQUARE.window(2, pw).tolist() == (dy * pw + dx).ravel().tolist()
    assert (SQUARE.eat, SQUARE.rest, SQUARE.n_actions) == (4, 5, 6)


def hex_world(width=14, height=11, **dotted):
    return World(small_config(2, width, height, **{"world.grid": "hex", **dotted}))


@pytest.mark.parametrize("x, y", [(5, 4), (5, 5), (0, 0), (13, 10), (6, 9)])
def test_the_axial_store_puts_every_tank_cell_back_where_it_was(x, y):
    w = hex_world().water
    cell = int(w.cell(x, y))
    assert tuple(int(v[0]) for v in w.xy(np.array([cell]))) == (x, y)
    assert w.tank_terrain().shape == (11, 14)


@pytest.mark.parametrize("x, y", [(5, 4), (5, 5), (2, 2), (3, 7)])
def test_a_hex_has_six_neighbours_each_one_fixed_offset_away_and_back(x, y):
    world = hex_world()
    w, d = world.water, world.delta
    cell = int(w.cell(x, y))
    targets = {tuple(int(v[0]) for v in w.xy(np.array([cell + int(d[k])]))) for k in range(6)}
    assert targets == neighbours(x, y)
    for k in range(6):  # a move and its opposite come back
        assert cell + int(d[k]) + int(d[(k + 3) % 6]) == cell
    assert world.eat_offsets.tolist() == [0, *d.tolist()]


@pytest.mark.parametrize("x, y", [(5, 4), (5, 5)])
def test_the_hex_view_is_the_19_hexes_within_two_steps(x, y):
    world = hex_world()
    w, win = world.water, world.window
    cell = int(w.cell(x, y))
    assert win.size == 19 and len(set(win.tolist())) == 19 and win[9] == 0
    cells = {tuple(int(v[0]) for v in w.xy(np.array([cell + int(o)]))) for o in win}
    ring1 = neighbours(x, y)
    ring2 = set().union(*(neighbours(*c) for c in ring1))
    assert cells == ring1 | ring2  # exactly the hexes two steps or fewer away


def test_a_hex_tank_runs_the_same_run_twice_and_moves_only_to_neighbours():
    cfg = load_config(seed=3, **{"world.grid": "hex", "fish.count": 40, "world.width": 40, "world.height": 24})
    a, b = LiveSession(cfg), LiveSession(cfg)
    positions = []
    a.engine.observers.append(lambda f: positions.append((f.x.copy(), f.y.copy(), f.executed.copy(),
                                                          f.move_outcome.copy(), f.heading.copy())))
    for _ in range(400):
        a.engine.step()
        b.engine.step()
        assert a.world.state_hash() == b.world.state_hash()
    moves = 0
    for (x0, y0, *_), (x1, y1, ex, out, head) in itertools.pairwise(positions):
        for i in np.flatnonzero(out == 0).tolist():  # moved
            assert (int(x1[i]), int(y1[i])) in neighbours(int(x0[i]), int(y0[i]))
            assert head[i] == ex[i]  # it faces the way it moved
            moves += 1
        still = out != 0
        assert np.array_equal(x1[still], x0[still]) and np.array_equal(y1[still], y0[still])
    counts = a.world.school.action_counts.sum(axis=0)
    assert moves > 1000 and counts.size == 8 and (counts[:6] > 0).all() and counts[6] > 0  # six ways, eats


def test_a_hex_fish_sees_19_hexes_as_text_and_its_neighbours_where_they_are():
    w = World(small_config(3, 12, 10, **{"world.grid": "hex"}))
    w.school.heading[1:] = [3, 0]  # west, east
    # around (5, 5), an odd row: east (6, 5), north-east (6, 4), north-west (5, 4), west (4, 5),
    # south-west (5, 6), south-east (6, 6)
    arrange(w, fish_xy=[(5, 5), (6, 4), (4, 5)], food_xy=[(5, 6)])
    text = w.perceive(0).view
    rows = text.split("\n")
    assert [len(r.replace(" ", "")) for r in rows] == [3, 4, 5, 4, 3]
    assert rows[2].replace(" ", "")[2] == "@"
    near = HEX.neighbour_chars(text)  # east, north-east, north-west, west, south-west, south-east
    assert near[1] == HEX.fish_chars[3] and near[3] == HEX.fish_chars[0]  # facing west, facing east
    assert near[4] == "F" and near[0] == near[2] == near[5] == "."  # the food south-west
    assert int(w.school.food_seen[0]) == 1 and int(w.school.neighbours[0]) == 2


def test_polarization_of_six_headings():
    units = np.array(HEX.units)
    assert polarization(np.zeros(10, np.int64), units) == pytest.approx(1.0)
    assert polarization(np.array([0, 2, 4]), units) == pytest.approx(0.0, abs=1e-12)
    assert polarization(np.array([0, 1]), units) == pytest.approx(np.cos(np.pi / 6))


def test_hex_recording_replays_by_hash_and_forks(tmp_path):
    rec = tmp_path / "hex.mirofish"
    out = run("live", "--headless", "--ticks", "600", "--seed", "5", "--set", "world.grid=hex", "--record", str(rec))
    assert out.returncode == 0, out.stderr
    final = json.loads(out.stdout.strip().splitlines()[-1])["final_state_hash"]
    for tick in ("compiled", "numpy"):
        check = run("replay", str(rec), "--headless", "--verify", env={"MIROFISH_TICK": tick})
        assert check.returncode == 0, check.stderr
        got = json.loads(check.stdout.strip().splitlines()[-1])
        assert got["state_hash"] == final and got["verified_ticks"] == 600
    fork = tmp_path / "f.mirofish"
    out = run("fork", str(rec), "--at", "300", "--fish", "4", "--plan", "explore north-east 40", "--ticks", "200",
              "--record", str(fork))
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["action"] == "explore north-east for 40 ticks"
    assert res["divergence"]["cells_differ_final"] > 0
    again = run("replay", str(fork), "--headless", "--verify")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.strip().splitlines()[-1])["state_hash"] == res["final_state_hash"]


@pytest.mark.parametrize("args, needle", [
    (("live", "--headless", "--ticks", "5", "--set", "world.grid=hex", "--set", "fish.places=3"),
     "world.grid = \"hex\": remembered places"),
    (("live", "--headless", "--ticks", "5", "--set", "world.grid=hex", "--brain", "llm", "--base-url",
      "http://127.0.0.1:9/v1", "--model", "m", "--set", "brain.decides=action"), "decides plans on it"),
    (("live", "--headless", "--ticks", "5", "--set", "world.grid=hex", "--set", "perception.plants_seen=true"),
     "plants shown"),
    (("live", "--headless", "--ticks", "5", "--set", "world.grid=hexagon"), "world.grid"),
])
def test_what_a_hex_tank_cannot_do_yet_is_one_line_and_exit_2(args, needle):
    out = run(*args)
    assert out.returncode == 2 and needle in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_plan_or_action_of_the_other_grid_is_one_line(tmp_path):
    rec = tmp_path / "hex.mirofish"
    assert run("live", "--headless", "--ticks", "50", "--set", "world.grid=hex", "--record", str(rec)).returncode == 0
    for swap, needle in ((("--plan", "explore north 10"), "north-east"), (("--action", "move_n"), "no move on a hex")):
        out = run("fork", str(rec), "--at", "20", "--fish", "1", *swap, "--ticks", "5")
        assert out.returncode == 2 and needle in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    square = tmp_path / "sq.mirofish"
    assert run("live", "--headless", "--ticks", "50", "--record", str(square)).returncode == 0
    out = run("fork", str(square), "--at", "20", "--fish", "1", "--action", "move_ne", "--ticks", "5")
    assert out.returncode == 2 and "no move on a square" in out.stderr


def test_plans_read_and_worded_on_hex():
    table = World(small_config(2, **{"world.grid": "hex"})).plan_table
    for words in ("explore north-east 30", "explore sw 5", "hold move_se 3", "move_w"):
        goal, param, horizon = table.parse_plan(words)
        assert table.parse_plan(table.describe(goal, param, horizon) if horizon else words) == (goal, param, horizon)
    assert table.describe(*table.parse_plan("explore ne 7")) == "explore north-east for 7 ticks"
    with pytest.raises(ValueError, match="north-east"):
        table.parse_plan("explore south 4")


def test_config_refuses_an_unknown_grid():
    with pytest.raises(ConfigError, match=r"world\.grid"):
        load_config(**{"world.grid": "triangle"})


def test_the_terminal_draws_odd_rows_half_a_cell_right():
    from mirofish.observe import ascii as ascii_view
    from mirofish.snapshot import take

    snap = take(World(small_config(2, 10, 8, **{"world.grid": "hex"})))
    lines = ascii_view.render(snap).split("\n")
    assert snap.grid == "hex" and len(lines) == 8
    assert all(line.startswith(" ") == bool(y & 1) for y, line in enumerate(lines))
    assert {len(line.strip().split(" ")) for line in lines} == {10}


def test_the_window_puts_odd_rows_half_a_cell_right_and_clicks_back():
    pygame = pytest.importorskip("pygame")
    from mirofish.ui.tank import TankRenderer

    r = TankRenderer(["." * 10] * 8)
    r.hexes = True
    pygame.init()
    r.place(pygame.Rect(0, 0, 200, 160), 20, (0, 0))
    assert r.to_px(3, 2) == (70.0, 50.0) and r.to_px(3, 3) == (80.0, 70.0)
    for x, y in ((3, 2), (3, 3), (0, 7), (9, 1)):
        px, py = r.to_px(x, y)
        cx, cy = r.cell_at((int(px), int(py)))
        assert (round(cx), round(cy)) == (x, y)


def test_the_model_brain_plans_on_hex_against_a_real_server(tmp_path):
    from mirofish.brains.prompt import judge_reply, messages
    from mirofish.brains.testserver import TestServer

    rec = tmp_path / "llm.mirofish"
    with TestServer() as srv:
        cfg = load_config(**{"fish.count": 12, "world.grid": "hex", "brain.kind": "llm", "seed": 5,
                             "brain.small.endpoints": [{"base_url": srv.url, "model": "fish-mini"}],
                             "brain.request_timeout_s": 2.0})
        live = LiveSession(cfg, mode="lockstep")
        live.start_recording(rec)
        live.run(60)
        status = live.source.status()
        w = live.world
        hashed = live.state_hash()
        live.close()
    assert status["model_decisions"] > 20 and status["fallback_rate"] == 0.0
    system, user = (m["content"] for m in messages(w.perceive(0), "a calm fish", "first_plan", table=w.plan_table))
    assert "hexagons" in system and "^ v < >" not in system and "north, south, west or east" not in system
    assert all(name in system for name in HEX.move_names)
    assert "explore " not in user or "north-east" in user or "east" in user
    view = w.perceive(0).view
    for reply, read in (('{"goal": "explore", "direction": "north", "ticks": 9}', "reply_schema"),):
        assert judge_reply(reply, view, table=w.plan_table)[1] == read
    open_way = next(n for n, ch in zip(HEX.move_names, HEX.neighbour_chars(view)) if ch in ".F")
    short = "".join(part[0] for part in open_way.split("-"))
    got, read = judge_reply(f'{{"goal": "explore", "direction": "{short}", "ticks": 9}}', view, table=w.plan_table)
    assert read == "ok" and got.direction == open_way
    check = run("replay", str(rec), "--headless", "--verify")
    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout.strip().splitlines()[-1])["state_hash"] == hashed


def test_the_environments_on_hex_pass_the_api_test_with_six_moves():
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import parallel_api_test

    from mirofish.env import parallel_env, vector_env

    small = ("world.grid=hex", "fish.count=20", "world.width=24", "world.height=16")
    env = parallel_env(overrides=small, max_steps=40)
    parallel_api_test(env, num_cycles=40)
    assert env.action_space("fish_0").n == 8
    assert env.observation_space("fish_0")["view"].shape == (19,)
    assert env.observation_space("fish_0")["heading"].n == 6
    obs, _ = env.reset(seed=2)
    before = {a: (int(env.session.world.school.cell[i])) for i, a in enumerate(env.agents)}
    _, _, _, _, infos = env.step({a: 1 for a in env.agents})  # everyone north-east
    moved = [a for a in env.agents if int(env.session.world.school.cell[int(a[5:])]) != before[a]]
    assert moved and all(infos[a]["executed"] == 1 for a in env.agents)
    assert all(int(env.session.world.school.heading[int(a[5:])]) == 1 for a in moved)
    env.close()
    vec = vector_env(2, overrides=small, max_steps=30)
    obs, _ = vec.reset(seed=1)
    assert obs["view"].shape == (2, 20, 19)
    with pytest.raises(ValueError, match=r"0\.\.7"):
        vec.step(np.full((2, 20), 8))
    for _ in range(35):
        obs, *_ = vec.step(vec.action_space.sample())
    assert obs["heading"].max() <= 5
    vec.close()


def test_a_current_on_hex_carries_fish_one_hex_its_way():
    from mirofish.interventions import drift

    w = World(small_config(3, 14, 12, **{"world.grid": "hex"}))
    arrange(w, fish_xy=[(5, 5), (6, 6), (9, 8)])
    w.intervene({"kind": "current", "dir": "north-east", "ticks": 4})
    before = [(int(x), int(y)) for x, y in zip(*w.water.xy(w.school.cell))]
    assert drift(w) == 3
    after = [(int(x), int(y)) for x, y in zip(*w.water.xy(w.school.cell))]
    for (x0, y0), (x1, y1) in zip(before, after):
        q0, q1 = x0 - (y0 - (y0 & 1)) // 2, x1 - (y1 - (y1 & 1)) // 2
        assert (q1 - q0, y1 - y0) == (1, -1)  # one axial step north-east


@pytest.mark.parametrize("tick", ["compiled", "numpy"])
def test_fish_out_of_the_water_rest_on_hex_and_both_ticks_agree(tick, monkeypatch):
    monkeypatch.setenv("MIROFISH_TICK", tick)
    cfg = load_config(seed=4, **{"world.grid": "hex", "fish.count": 30, "fish.spare": 5})
    live = LiveSession(cfg)
    live.run(40)
    s = live.world.school
    assert s.absent.sum() == 5 and (s.stuck[s.absent] == 0).all() and (s.intent[s.absent] == HEX.rest).all()
    assert not live.metrics.alerts()
    live.engine.intervene({"kind": "add", "x": 10, "y": 10})
    live.run(40)
    assert s.absent.sum() == 4
    hashes = {tick: live.world.state_hash()}
    monkeypatch.setenv("MIROFISH_TICK", "numpy" if tick == "compiled" else "compiled")
    other = LiveSession(cfg)
    other.run(40)
    other.engine.intervene({"kind": "add", "x": 10, "y": 10})
    other.run(40)
    assert other.world.state_hash() == hashes[tick]


def test_the_grids_view_alphabet_is_the_perception_layers():
    from mirofish.fish.perception import N_CODES, V_FISH, VIEW_CHARS

    assert SQUARE.view_chars == VIEW_CHARS and len(SQUARE.fish_chars) == N_CODES - V_FISH
    assert HEX.view_chars[:V_FISH] == VIEW_CHARS[:V_FISH] and len(set(HEX.view_chars)) == V_FISH + 6


def test_word_and_deed_on_hex_compiled_is_numpys(monkeypatch):
    """The compiled deeds and judge (six ways, the cells' centres on screen) count what the numpy
    word-and-deed counts, plan for plan."""
    def run_with(tick):
        monkeypatch.setenv("MIROFISH_TICK", tick)
        live = LiveSession(load_config(seed=6, **{"world.grid": "hex", "fish.count": 80}))
        live.run(500)
        wd = live.metrics.word_deed
        return wd.compiled, wd.counts.copy(), wd._ring.copy(), live.metrics.summary()["action_entropy"]

    compiled, numpy_ = run_with("compiled"), run_with("numpy")
    assert compiled[0] and not numpy_[0]
    assert np.array_equal(compiled[1], numpy_[1]) and np.array_equal(compiled[2], numpy_[2])
    assert compiled[3] == numpy_[3]
    assert compiled[1][:, 2].sum() > 100  # deeds done, counted


def test_hex_clusters_and_nearest_distances_are_every_pairs():
    """A hexagonal tank's sample looks its fish up in an axial grid: its nearest-neighbour
    distances (between cells' centres on screen) and clusters (fish within two hex steps) are
    those of comparing every pair, on random tanks sparse and crowded."""
    from mirofish.observe.metrics import _components, hex_nn_and_labels

    rng = np.random.default_rng(0)
    for _ in range(60):
        w, h = int(rng.integers(5, 60)), int(rng.integers(5, 40))
        cells = rng.choice(w * h, size=min(int(rng.integers(2, 150)), w * h), replace=False)
        x, y = cells % w, cells // w
        q = x - (y >> 1)
        sx, sy = x + 0.5 * (y & 1), y * (3 ** 0.5 / 2)
        d = np.hypot(sx[:, None] - sx[None, :], sy[:, None] - sy[None, :])
        np.fill_diagonal(d, np.inf)
        dq, dr = q[:, None] - q[None, :], y[:, None] - y[None, :]
        steps = np.maximum(np.maximum(abs(dq), abs(dr)), abs(dq + dr))
        np.fill_diagonal(steps, 99)
        want = _components(len(x), *np.nonzero(steps <= 2))
        got_nnd, got = hex_nn_and_labels(x, y)
        assert got_nnd == pytest.approx(d.min(axis=1).mean(), abs=1e-9)
        assert np.array_equal(got[:, None] == got[None, :], want[:, None] == want[None, :])


def test_the_tools_read_a_hex_recording_in_its_own_words(tmp_path):
    """trace, diff, a fork's plans and currents, and word and deed name the hexagonal tank's
    actions and ways (a fault campaign found each reading the square tank's)."""
    from mirofish.fish.plans import DEFAULT
    from mirofish.observe.worddeed import word_verdict
    from mirofish.session.survey import _compass

    rec, sq = tmp_path / "hex.mirofish", tmp_path / "sq.mirofish"
    assert run("live", "--headless", "--ticks", "120", "--seed", "3", "--set", "world.grid=hex",
               "--record", str(rec)).returncode == 0
    out = run("trace", str(rec), "--fish", "4", "--from", "60", "--to", "90")
    assert out.returncode == 0, out.stderr
    doing = {line.split("doing ")[1].split()[0] for line in out.stdout.splitlines() if "doing " in line}
    assert doing and doing <= set(HEX.action_names), doing
    fork = tmp_path / "f.mirofish"
    out = run("fork", str(rec), "--at", "60", "--current", "ne,20", "--ticks", "40", "--record", str(fork))
    assert out.returncode == 0 and "current north-east" in out.stdout, out.stderr
    out = run("diff", str(rec), str(fork))
    assert out.returncode == 0, out.stderr
    assert "move_ne" in out.stdout and "move_n " not in out.stdout
    assert run("live", "--headless", "--ticks", "120", "--seed", "3", "--record", str(sq)).returncode == 0
    for args, needle in ((("diff", str(rec), str(sq)), "a hex tank and"),
                         (("fork", str(rec), "--at", "60", "--fish", "2", "--plan", "hide", "--ticks", "5"),
                          "hexagonal tank does not find"),
                         (("fork", str(rec), "--at", "60", "--current", "up,5", "--ticks", "5"), "north-east")):
        out = run(*args)
        assert out.returncode == 2 and needle in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    table = DEFAULT.on(HEX)
    explore = table.code["explore"]
    assert word_verdict(explore, 0, "open water to the east", table) is True
    assert word_verdict(explore, 1, "heading north east now", table) is True
    assert word_verdict(explore, 1, "open water to the east", table) is False
    assert [_compass(HEX, k) for k in range(6)] == ["east", "north", "north", "west", "south", "south"]
    assert [_compass(SQUARE, k) for k in range(4)] == ["north", "south", "west", "east"]


def test_adding_more_fish_than_rooms_at_one_tick_is_one_line(tmp_path):
    rec = tmp_path / "spare.mirofish"
    assert run("live", "--headless", "--ticks", "40", "--set", "fish.spare=2", "--record", str(rec)).returncode == 0
    adds = [arg for k in range(3) for arg in ("--add-fish", f"{10 + k},10")]
    out = run("fork", str(rec), "--at", "20", *adds, "--ticks", "5")
    assert out.returncode == 2 and "no room for another fish" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_a_fish_taken_out_frees_its_room_for_one_added_later_in_a_fork(tmp_path):
    """A fork checks its interventions at the fork tick; an add later in the file is not refused
    for want of a room a removal before it frees (found by the hex fault campaign; square too)."""
    rec, ivs = tmp_path / "full.mirofish", tmp_path / "iv.jsonl"
    assert run("live", "--headless", "--ticks", "60", "--record", str(rec)).returncode == 0  # no spare room
    ivs.write_text('{"tick": 30, "kind": "remove", "fish": 3}\n{"tick": 31, "kind": "add", "x": 10, "y": 10}\n')
    out = run("fork", str(rec), "--at", "20", "--interventions", str(ivs), "--ticks", "30")
    assert out.returncode == 0, out.stderr
    assert "a fish added at 10,10 at t31" in out.stdout
