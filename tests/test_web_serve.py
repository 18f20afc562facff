"""``serve``: a live tank or a recording watched (and steered, with the token) from a real
headless Chromium and from WebSocket clients (mirofish/web/server.py, docs/web.md)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import pytest
from conftest import record_run

from mirofish.brains.testserver import TestServer
from mirofish.web.server import FrameReader, delta_frame, encode_frame, whole_fields

ROOT = Path(__file__).resolve().parent.parent


class Served:
    """``python run.py serve …`` on a free port, until closed; its stderr kept."""

    def __init__(self, *args: str, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen([sys.executable, "-m", "mirofish", "serve", "--port", "0", *args], cwd=ROOT,
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                     env={**os.environ, **(env or {})})
        self.lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.lines.append(line.rstrip())
            found = re.search(r"at (http://\S+/)$", line.strip())
            if found:
                self.url = found.group(1)
                break
        else:
            raise AssertionError("serve did not start")
        if not hasattr(self, "url"):
            raise AssertionError(f"serve did not start: {self.lines}")
        self.port = int(self.url.rsplit(":", 1)[1].strip("/"))

    def token(self) -> str:
        if not any("steering token" in ln for ln in self.lines):  # printed on the line after the address
            self.lines.append(self.proc.stderr.readline().rstrip())
        for line in self.lines:
            if "steering token " in line:
                return line.split("steering token ")[1].split()[0]
        raise AssertionError(f"no token printed: {self.lines}")

    def close(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return "\n".join(self.lines) + "\n" + (err or "")


def _run(coro):
    """``asyncio.run(coro)`` on a thread of its own (Playwright's sync API keeps a loop on this one)."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result(timeout=120)


async def _talk(url: str, sends: list[object], want: int, token: str = "") -> list[object]:
    """Connect to serve's socket, send each message, and gather the next ``want`` text replies."""
    import websockets

    got: list[object] = []
    async with websockets.connect(url.replace("http", "ws") + "ws?token=" + token, max_size=1 << 24) as ws:
        hello = json.loads(await ws.recv())
        got.append(hello)
        for m in sends:
            await ws.send(m if isinstance(m, str | bytes) else json.dumps(m))
        deadline = time.monotonic() + 20
        while len(got) < want + 1 and time.monotonic() < deadline:
            msg = await asyncio.wait_for(ws.recv(), 20)
            if isinstance(msg, str):
                decoded = json.loads(msg)
                if decoded.get("op") != "metrics":
                    got.append(decoded)
    return got


def _until(page, expression: str, seconds: float = 20) -> None:
    """Poll ``expression`` in the page until it is truthy (the page's CSP forbids eval, which
    Playwright's wait_for_function needs)."""
    deadline = time.monotonic() + seconds
    while not page.evaluate(f"Boolean({expression})"):
        assert time.monotonic() < deadline, f"never true: {expression}"
        page.wait_for_timeout(100)


def test_a_live_tank_in_the_browser_draws_follows_and_goes_back(browser):
    served = Served("--fish", "40", "--speed", "20")
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        asked: list[str] = []
        errors: list[str] = []
        page.on("request", lambda r: asked.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served.url)
        page.evaluate("window.mirofish.ready")
        first = page.evaluate("window.mirofish.tick()")
        page.wait_for_timeout(1500)
        later = page.evaluate("window.mirofish.tick()")
        assert later > first  # the live tank keeps going, and the page with it
        assert page.locator("#inwater").inner_text() == "· 40 fish"
        assert page.locator("#speed").input_value() == "20"  # the tank's own speed, not the page's default
        fish = next(i for i, p in enumerate(page.evaluate("window.mirofish.state(window.mirofish.tick())")["present"])
                    if p)
        page.evaluate(f"window.mirofish.follow({fish})")
        _until(page, "window.mirofish.fishInfo() && window.mirofish.fishInfo().plan !== undefined")
        assert page.locator("#side").inner_text().startswith(f"Fish {fish}")
        assert page.locator("#follow-plan").inner_text()
        assert page.locator("#follow-memories").count() == 1  # what it remembers, from the tank
        _until(page, "window.mirofish.fishInfo() && window.mirofish.fishInfo().drift")
        assert "drift: " in page.locator("#follow-drift").inner_text()  # in character? (a summary by t20)
        # the canvas: a fish's pixel is not the water's blue
        rgb = page.evaluate(f"""(() => {{ const c = document.getElementById('tank'), d = window.devicePixelRatio || 1;
            const [x, y] = window.mirofish.pixelOf({fish});  // (one evaluation: no frame comes in between)
            return Array.from(c.getContext('2d').getImageData(x * d, y * d, 1, 1).data); }})()""")
        assert not (rgb[0] < 40 and rgb[2] > rgb[0] + 20), rgb
        # drag the timeline back: the page shows the past while the tank goes on
        bar = page.locator("#timeline").bounding_box()
        page.mouse.move(bar["x"] + bar["width"] - 4, bar["y"] + bar["height"] / 2)
        page.mouse.down()
        page.mouse.move(bar["x"] + bar["width"] * 0.1, bar["y"] + bar["height"] / 2, steps=6)
        page.mouse.up()
        page.wait_for_timeout(500)
        shown, latest = page.evaluate("window.mirofish.tick()"), page.evaluate("window.mirofish.latest()")
        assert shown < latest and page.locator("#tick").inner_text() == f"t{shown}"
        page.screenshot(path=str(ROOT / "docs" / "web-serve.png")) if os.environ.get("MIROFISH_SHOTS") else None
        origin = served.url.rstrip("/")
        assert all(u.startswith(origin) or u.startswith(("data:", "blob:")) for u in asked), asked  # no CDN
        assert errors == []
        page.close()
    finally:
        served.close()


def test_a_served_recordings_frames_are_the_replays_states(tmp_path):
    from mirofish.session.replay import ReplaySession

    rec = record_run(tmp_path / "r.mirofish", 4, 400, **{"fish.count": 30})
    served = Served(str(rec))
    try:
        import websockets

        async def frame_at(t: int) -> dict:
            reader = FrameReader()  # as the page reads them: whole frames and deltas against the last
            async with websockets.connect(served.url.replace("http", "ws") + "ws", max_size=1 << 24) as ws:
                hello = json.loads(await ws.recv())
                assert hello["live"] is False and (hello["first"], hello["last"]) == (0, 400)
                # the page writes each metric with the window's format ("4 fish", not "4.000")
                assert hello["formats"]["school_size"] == "{:.0f} fish"
                assert hello["formats"]["largest_cluster"] == "{:.0f}"
                assert hello["labels"]["school_size"] == "largest school"
                await ws.send(json.dumps({"op": "seek", "tick": t - 1}))
                await ws.send(json.dumps({"op": "seek", "tick": t}))
                while True:
                    msg = await asyncio.wait_for(ws.recv(), 20)
                    if isinstance(msg, bytes) and reader.read(msg)["tick"] == t:
                        return reader.last

        replay = ReplaySession(rec)
        for t in (50, 333):
            got = _run(frame_at(t))
            replay.seek(t)
            v = replay.view()
            assert got["x"].tolist() == v.x.tolist() and got["y"].tolist() == v.y.tolist()
            assert sorted(map(tuple, got["food"].tolist())) == sorted(zip(v.food_x.tolist(), v.food_y.tolist()))
        replay.close()
    finally:
        served.close()


def test_a_served_recording_in_the_browser_reads_delta_frames_to_the_replays_states(tmp_path, browser):
    """The page rebuilds each tick from the delta frames it is sent (and the whole ones between)
    to exactly the recording's state: fish, headings and food, over a run of ticks and a jump."""
    from mirofish.session.replay import ReplaySession

    rec = record_run(tmp_path / "r.mirofish", 6, 300, **{"fish.count": 40})
    served = Served(str(rec))
    try:
        page = browser.new_page(viewport={"width": 1024, "height": 600})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served.url)
        page.evaluate("window.mirofish.ready")
        replay = ReplaySession(rec)
        for t in [*range(100, 131), 40, 41, 299]:
            page.evaluate(f"window.mirofish.seek({t})")
            _until(page, f"window.mirofish.state({t}) && window.mirofish.state({t}).tick === {t}")
            got = page.evaluate(f"window.mirofish.state({t})")
            replay.seek(t)
            v = replay.view()
            assert (got["x"], got["y"], got["heading"]) == (v.x.tolist(), v.y.tolist(), v.heading.tolist()), t
            food = sorted(zip(got["food"][0::2], got["food"][1::2]))
            assert food == sorted(zip(v.food_x.tolist(), v.food_y.tolist())), t
        kinds = page.evaluate("window.mirofish.framesRead()")
        assert kinds["delta"] >= 25 and kinds["whole"] >= 1, kinds  # the run of ticks came as deltas
        assert errors == []
        replay.close()
        page.close()
    finally:
        served.close()


def test_a_served_recording_is_forked_from_the_page_and_rings_its_fish(tmp_path):
    """``fork`` from a page: the branch runs live, each frame carrying where the recording's fish
    are (the page's rings); ``back`` returns to the recording."""
    from mirofish.session.replay import ReplaySession

    rec = record_run(tmp_path / "r.mirofish", 4, 400, **{"fish.count": 30})
    served = Served(str(rec), "--speed", "50")
    try:
        import websockets

        async def fork() -> tuple[list[dict], dict]:
            told: list[dict] = []
            async with websockets.connect(served.url.replace("http", "ws") + "ws", max_size=1 << 24) as ws:
                told.append(json.loads(await ws.recv()))
                await ws.send(json.dumps({"op": "fork", "fish": 3, "tick": 200, "plan": "explore east 30"}))
                frame: dict = {}
                reader = FrameReader()
                forked = False  # (the recording's own last frame, t400, may come first)
                while True:
                    msg = await asyncio.wait_for(ws.recv(), 30)
                    if isinstance(msg, str):
                        decoded = json.loads(msg)
                        if decoded.get("op") != "metrics":
                            told.append(decoded)
                        forked = forked or bool(decoded.get("op") == "hello" and decoded.get("fork"))
                    elif isinstance(msg, bytes):
                        got = reader.read(msg)
                        if forked and 300 <= got["tick"] < 400:
                            frame = got
                            break
                await ws.send(json.dumps({"op": "back"}))
                while True:
                    msg = await asyncio.wait_for(ws.recv(), 30)
                    if isinstance(msg, str) and json.loads(msg).get("op") == "hello":
                        told.append(json.loads(msg))
                        break
            return told, frame

        told, frame = _run(fork())
        ops = [m["op"] for m in told]
        assert ops[:3] == ["hello", "forked", "hello"] and told[2]["live"] and "fish 3 at t200" in told[2]["fork"]
        assert told[-1]["op"] == "hello" and told[-1]["fork"] is None and told[-1]["live"] is False  # back
        tick, x, y = frame["tick"], frame["x"], frame["y"]
        px, py = frame["parent"]["x"], frame["parent"]["y"]
        replay = ReplaySession(rec)
        replay.seek(tick)
        v = replay.view()
        assert px.tolist() == v.x.tolist() and py.tolist() == v.y.tolist()  # the rings: the recording's fish
        assert (x.tolist(), y.tolist()) != (v.x.tolist(), v.y.tolist())  # and the branch went its own way
        replay.close()
    finally:
        served.close()


def test_off_this_machine_only_the_token_steers_and_no_key_reaches_a_page():
    canary = "sk-canary-7f3a9c"
    with TestServer() as server:
        served = Served("--host", "0.0.0.0", "--fish", "10", "--speed", "5", "--brain", "llm", "--base-url",
                        server.url, "--model", "fish-mini", "--set", "brain.api_key_env=MIROFISH_CANARY_KEY",
                        env={"MIROFISH_CANARY_KEY": canary})
        try:
            token = served.token()
            url = served.url.replace("0.0.0.0", "127.0.0.1")
            without = _run(_talk(url, [{"op": "pause"}, {"op": "speed", "value": 50},
                                       {"op": "fork", "fish": 1, "tick": 0, "plan": "rest 10"}], 3))
            assert without[0]["may_steer"] is False
            assert [m["op"] for m in without[1:]] == ["refused", "refused", "refused"]
            wrong = _run(_talk(url, [{"op": "pause"}], 1, token="x" + token))
            assert wrong[1]["op"] == "refused"
            with_token = _run(_talk(url, [{"op": "pause"}, {"op": "resume"}], 2, token=token))
            assert with_token[0]["may_steer"] is True and [m["op"] for m in with_token[1:]] == ["steered", "steered"]
            # what a page is ever sent: the page, the hello, the frames, a fish's panel — no key, no server
            import urllib.request

            page = urllib.request.urlopen(url, timeout=10).read().decode()
            told = json.dumps(_run(_talk(url, [{"op": "fish", "fish": 2, "tick": 0}], 1)))
            for text in (page, told):
                assert canary not in text and server.url not in text and "127.0.0.1:" + str(server.port) not in text
        finally:
            log = served.close()
    assert canary not in log


def test_oversize_and_malformed_messages_are_dropped_with_one_line_each():
    served = Served("--fish", "10", "--speed", "5")
    try:
        got = _run(_talk(served.url, ["x" * 10_000, "not json", json.dumps({"op": "rm -rf"}),
                                             json.dumps([1, 2]), {"op": "fish", "fish": 1, "tick": 0}], 1))
        assert got[1]["op"] == "fish"  # still answered after the bad ones
    finally:
        log = served.close()
    assert "dropped a message of 10000 bytes" in log
    assert log.count("dropped a malformed message") == 3


def test_serve_refuses_a_damaged_recording_and_a_port_in_use_in_one_line(tmp_path):
    damaged = tmp_path / "bad.mirofish"
    damaged.write_bytes(b"SQLite format 3\0" + b"\0" * 2000)
    done = subprocess.run([sys.executable, "-m", "mirofish", "serve", str(damaged), "--port", "0"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    served = Served("--fish", "5")
    try:
        taken = subprocess.run([sys.executable, "-m", "mirofish", "serve", "--port", str(served.port)],
                               capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert taken.returncode == 2 and "cannot listen" in taken.stderr
        assert len(taken.stderr.strip().splitlines()) == 1
    finally:
        served.close()


@pytest.mark.parametrize("speed", ["0", "5000"])
def test_a_bad_speed_is_one_line(speed):
    done = subprocess.run([sys.executable, "-m", "mirofish", "serve", "--speed", speed], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "--speed" in done.stderr


def test_what_the_fault_campaign_found_holds_now(tmp_path):
    """Deep nesting, true for a number, a plan too large for the tank, a non-ASCII token: dropped
    or refused, the connection on; a fork and back leave the recording's HUD as it was; a page
    that reads nothing holds up no other page's fork."""
    rec = record_run(tmp_path / "r.mirofish", 4, 300, **{"fish.count": 20})
    served = Served(str(rec), "--speed", "50")
    try:
        import websockets

        url = served.url.replace("http", "ws") + "ws"

        async def campaign() -> dict:
            out: dict = {}
            async with websockets.connect(url + "?token=%C3%A9t%C3%A9", max_size=1 << 24) as ws:
                out["hello"] = json.loads(await ws.recv())
                for bad in ("[" * 2000 + "]" * 2000, json.dumps({"op": "fish", "fish": True, "tick": True}),
                            json.dumps({"op": "fork", "fish": 1, "tick": 10, "plan": "school 999999999"}),
                            json.dumps({"op": "fork", "fish": 1, "tick": True, "plan": "rest 10"})):
                    await ws.send(bad)
                await ws.send(json.dumps({"op": "fish", "fish": 2, "tick": 5}))
                replies = []
                while not replies or replies[-1].get("op") != "fish":
                    msg = await asyncio.wait_for(ws.recv(), 20)
                    if isinstance(msg, str):
                        replies.append(json.loads(msg))
                out["replies"] = replies
            # a page that never reads, then another that forks and comes back
            hog = await websockets.connect(url, max_size=1 << 24)
            await hog.recv()
            for _ in range(3000):
                await hog.send(json.dumps({"op": "fish", "fish": 1, "tick": 5}))
            async with websockets.connect(url, max_size=1 << 24) as ws:
                first = json.loads(await ws.recv())
                await ws.send(json.dumps({"op": "fork", "fish": 3, "tick": 100, "plan": "rest 10"}))
                seen = []
                while len([m for m in seen if m.get("op") == "hello"]) < 1:
                    msg = await asyncio.wait_for(ws.recv(), 20)
                    if isinstance(msg, str):
                        seen.append(json.loads(msg))
                await asyncio.sleep(1.0)  # the fork samples its own HUD meanwhile
                await ws.send(json.dumps({"op": "back"}))
                while True:
                    msg = await asyncio.wait_for(ws.recv(), 20)
                    if isinstance(msg, str) and json.loads(msg).get("op") == "hello":
                        out["after"] = json.loads(msg)
                        break
                out["before"], out["forked"] = first, seen
            await hog.close()
            return out

        got = _run(campaign())
    finally:
        log = served.close()
    assert got["hello"]["op"] == "hello"  # a non-ASCII token: a page that watches
    ops = [m["op"] for m in got["replies"]]
    assert ops.count("refused") == 2 and ops[-1] == "fish"  # the two forks refused, then answered
    assert "too large" in next(m["why"] for m in got["replies"] if m["op"] == "refused")
    assert "dropped a malformed message (RecursionError" in log and "Traceback" not in log
    assert [m["op"] for m in got["forked"]][:2] == ["forked", "hello"]
    assert got["after"]["metrics"] == got["before"]["metrics"]  # the recording's HUD, as it was


def test_serve_on_an_address_not_of_this_machine_is_one_line():
    done = subprocess.run([sys.executable, "-m", "mirofish", "serve", "--host", "no such host!!", "--port", "0"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and "cannot listen" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_delta_frames_rebuild_every_whole_frame_and_are_smaller():
    """What a viewer is sent between whole frames: the change since the frame it holds. Read back
    as the page does, every delta gives the whole frame exactly — moving fish, eaten and new food,
    a fork's rings, frames skipped (a slow viewer) and a seek back — and is smaller than it;
    frames that do not line up (another fish count, a fish far away) go whole."""
    from mirofish.config import load_config
    from mirofish.session import LiveSession

    def same(a: dict, b: dict) -> None:
        for k in ("tick", "x", "y", "heading", "energy", "present"):
            assert np.array_equal(a[k], b[k]), k
        assert sorted(map(tuple, a["food"].tolist())) == sorted(map(tuple, b["food"].tolist()))
        assert (a["parent"] is None) == (b["parent"] is None)
        if a["parent"] is not None:
            for k in ("x", "y", "present"):
                assert np.array_equal(a["parent"][k], b["parent"][k])

    s = LiveSession(load_config(seed=5, **{"fish.count": 60}))
    top = int(s.world.max_energy)
    reader, base = FrameReader(), encode_frame(s.tick, s.view(), top)
    reader.read(base)
    sizes, food_changed = [], 0
    for step in [1] * 150 + [7] * 30:  # every tick, then a viewer that skips six of seven
        s.run(step)
        frame = encode_frame(s.tick, s.view(), top)
        delta = delta_frame(base, frame)
        assert delta is not None and len(delta) < len(frame)
        food_changed += len(whole_fields(frame)["food"]) != len(whole_fields(base)["food"])
        same(reader.read(delta), whole_fields(frame))
        sizes.append((len(frame), len(delta)))
        base = frame
    assert food_changed > 10  # food was eaten and grew meanwhile
    whole, delta = (sum(x) / len(sizes) for x in zip(*sizes))
    assert delta < 0.6 * whole
    v = s.view()
    jumped = SimpleNamespace(x=np.array(v.x), y=v.y, heading=v.heading, energy=v.energy, present=v.present,
                             food_x=v.food_x, food_y=v.food_y)
    jumped.x[0] = (int(v.x[0]) + 200) % 60000  # one fish 200 cells off (a young born far away): sent where it is
    reader.read(encode_frame(s.tick, v, top))
    delta = delta_frame(encode_frame(s.tick, v, top), encode_frame(s.tick + 1, jumped, top))
    assert delta is not None
    same(reader.read(delta), whole_fields(encode_frame(s.tick + 1, jumped, top)))
    other = LiveSession(load_config(seed=5, **{"fish.count": 61}))
    assert delta_frame(base, encode_frame(other.tick, other.view(), top)) is None
    with pytest.raises(ValueError, match="t"):
        FrameReader().read(delta_frame(encode_frame(0, s.view(), top), encode_frame(1, s.view(), top)) or b"MFD1")
    s.close()
    other.close()


def test_delta_frames_carry_a_forks_rings(tmp_path):
    from mirofish.session.replay import fork_recording

    rec = record_run(tmp_path / "r.mirofish", 4, 200, **{"fish.count": 30})
    branch = fork_recording(rec, 100, 3, "explore east 30")
    top = int(branch.world.max_energy)

    def frame() -> bytes:  # (the recording steps in lockstep with its branch)
        assert branch.parent.tick == branch.tick
        return encode_frame(branch.tick, branch.view(), top, branch.parent.view())

    reader, base = FrameReader(), frame()
    reader.read(base)
    for _ in range(40):
        branch.step()
        now = frame()
        delta = delta_frame(base, now)
        assert delta is not None and len(delta) < len(now)
        got, want = reader.read(delta), whole_fields(now)
        for k in ("x", "y", "present"):
            assert np.array_equal(got["parent"][k], want["parent"][k]) and np.array_equal(got[k], want[k])
        base = now
    assert not np.array_equal(got["x"], got["parent"]["x"])  # the branch went its own way, the rings with the recording
    branch.close()


def test_the_page_reads_a_delta_of_fish_that_jumped_and_of_a_hundred_thousand_new_food_cells(tmp_path, browser):
    """The page's decoder (parseFrame) against FrameReader on the same bytes: fish far from where
    they were (a young born across the tank), the rings of a fork, and more food grown between
    two frames than a function call may take as arguments (a seek in a big tank)."""
    import base64

    rng = np.random.default_rng(1)
    n = 50

    def view(food: int, shift: int) -> SimpleNamespace:
        x = (np.arange(n) * 3 + shift) % 2000
        x[:3] += 900 * (shift > 0)  # three fish jumped
        cells = rng.choice(2000 * 2000, food, replace=False)
        return SimpleNamespace(x=x, y=np.arange(n) % 97, heading=np.arange(n) % 4, energy=np.full(n, 5000),
                               present=None, food_x=cells % 2000, food_y=cells // 2000)

    base_view, next_view = view(10, 0), view(120_000, 1)
    base = encode_frame(7, base_view, 10000, base_view)
    frame = encode_frame(8, next_view, 10000, next_view)
    delta = delta_frame(base, frame)
    assert delta is not None and delta[:4] == b"MFD1"
    want = FrameReader()
    want.read(base)
    want = want.read(delta)
    out = tmp_path / "any.html"
    rec = record_run(tmp_path / "r.mirofish", 1, 5, **{"fish.count": 5})
    subprocess.run([sys.executable, "-m", "mirofish", "export", str(rec), "--html", str(out)], check=True, cwd=ROOT,
                   capture_output=True, timeout=120)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(out.as_uri())
    page.evaluate("window.mirofish.ready")
    page.evaluate(f"window.mirofish.parse('{base64.b64encode(base).decode()}') && 0")
    got = page.evaluate(f"""(() => {{ const f = window.mirofish.parse('{base64.b64encode(delta).decode()}');
        return f && {{ x: f.x, y: f.y, food: f.food.length, sum: f.food.reduce((a, v) => a + v, 0),
                      px: f.parent.x, heading: f.heading }}; }})()""")
    assert errors == [] and got is not None
    assert got["x"] == want["x"].tolist() and got["y"] == want["y"].tolist()
    assert got["px"] == want["parent"]["x"].tolist()
    assert got["heading"] == want["heading"].tolist()
    assert got["food"] == want["food"].size == 2 * 120_000 and got["sum"] == int(want["food"].sum())
    page.close()


def test_a_viewer_is_sent_a_whole_frame_every_600(monkeypatch):
    from mirofish.config import load_config
    from mirofish.session import LiveSession
    from mirofish.web import server

    monkeypatch.setattr(server, "FPS_CAP", 1e6)  # (no pause between frames here)
    s = LiveSession(load_config(seed=2, **{"fish.count": 20}))
    top = int(s.world.max_energy)
    frames = []
    for _ in range(1300):
        s.step()
        frames.append(encode_frame(s.tick, s.view(), top))
    s.close()
    kinds: list[bytes] = []

    class Socket:
        async def send_bytes(self, b: bytes) -> None:
            kinds.append(b[:4])

        async def send_text(self, t: str) -> None:
            pass

    async def play() -> None:
        v = server.Viewer(Socket(), True)
        pump = asyncio.create_task(v.pump())
        for f in frames:
            v.offer(f)
            while v.pending is not None:
                await asyncio.sleep(0)
        await asyncio.sleep(0.01)
        pump.cancel()

    _run(play())
    assert len(kinds) == 1300
    assert [i for i, k in enumerate(kinds) if k == b"MFK1"] == [0, 600, 1200]


def test_a_slow_viewer_is_told_of_a_fork_however_many_samples_came_meanwhile():
    """A page that reads nothing for a while (a slow link, its socket full) while the tank it
    shows changes twice and 30 samples come: when it reads again it is told the newest tank
    first, then that tank's frame — the hello is never among what a full queue drops."""
    from mirofish.web import server

    sent: list[tuple[str, str]] = []
    gate = asyncio.Event()

    class Socket:  # (a page that reads nothing until the gate opens)
        async def send_bytes(self, b: bytes) -> None:
            await gate.wait()
            sent.append(("frame", b[:4].decode()))

        async def send_text(self, t: str) -> None:
            await gate.wait()
            sent.append((json.loads(t)["op"], json.loads(t).get("fork") or ""))

    class Tank:  # (what Host._push_text reads)
        viewers: ClassVar[set[Any]] = set()

    async def scene() -> None:
        v = server.Viewer(Socket(), True)
        Tank.viewers = {v}
        pump = asyncio.create_task(v.pump())
        v.offer(b"MFK1 the recording's frame")
        await asyncio.sleep(0.01)  # the pump is stuck sending it
        v.tell({"op": "hello", "fork": "fish 0 at t200"}, b"MFK1 the first branch", True)
        for k in range(30):
            server.Host._push_text(Tank, json.dumps({"op": "metrics", "tick": k}))  # type: ignore[arg-type]
        v.tell({"op": "hello", "fork": "fish 1 at t300"}, b"MFK1 the second branch", True)
        for k in range(30, 33):
            server.Host._push_text(Tank, json.dumps({"op": "metrics", "tick": k}))  # type: ignore[arg-type]
        gate.set()
        await asyncio.sleep(0.05)
        pump.cancel()

    _run(scene())
    assert sent[0] == ("frame", "MFK1")  # what it was sending when it stopped reading
    assert sent[1] == ("hello", "fish 1 at t300")  # then the newest tank, before anything of it
    assert [op for op, _ in sent[2:]] == ["metrics"] * 3 + ["frame"]  # its samples, then its frame


def test_a_refused_second_fork_leaves_the_running_fork_running(tmp_path):
    """Before: a second fork that the recording refused (tick -1) had already ended the fork
    running, and no page was told (frames stopped; 'back' said there was no fork). Refused
    first now: the fork goes on, and 'back' returns from it."""
    from mirofish.session.replay import ReplaySession
    from mirofish.web.server import Host

    rec = record_run(tmp_path / "r.mirofish", 4, 300, **{"fish.count": 20})
    host = Host(ReplaySession(str(rec)), False, 50.0)
    try:
        assert host.steer({"op": "fork", "fish": 3, "tick": 100, "plan": "explore east 30"})["op"] == "forked"
        for bad in ({"fish": 3, "tick": -1, "plan": "rest 10"}, {"fish": 99, "tick": 120, "plan": "rest 10"},
                    {"fish": 3, "tick": 120, "plan": "rest -10"}):
            answer = host.steer({"op": "fork", **bad})
            assert answer["op"] == "refused" and "left" not in answer, answer
            assert host.live and host.recording_session is not None and host.thread.is_alive()
        assert host.steer({"op": "back"})["op"] == "back" and not host.live
    finally:
        host.stop.set()
        if host.thread is not None:
            host.thread.join(timeout=10)
        host.session.close()


def test_a_model_tank_says_its_page_waits_for_the_warm_up_and_realtime_opens_at_once():
    """A lockstep model tank's first tick waits for the server's warm-up, so the page listens only
    after it (up to brain.warmup_timeout_s): a fault campaign's hung server left the port closed
    with nothing said but "warming up". serve now says so first; in realtime the page opens at
    once while the warm-up hangs."""
    with TestServer(fault="hang") as server:
        model = ["--fish", "5", "--brain", "llm", "--base-url", server.url, "--model", "m"]
        served = Served(*model, "--set", "brain.warmup_timeout_s=2")
        try:
            said = "\n".join(served.lines)
            assert "the page opens once the model server has answered its warm-up request" in said
            assert said.index("the page opens once") < said.index("a live tank at")
        finally:
            served.close()
        start = time.monotonic()
        served = Served(*model, "--set", "engine.mode=realtime")  # (the warm-up's default 120 s)
        try:
            assert time.monotonic() - start < 30
            assert not any("the page opens once" in ln for ln in served.lines)
        finally:
            served.close()
