"""``export REC --html FILE``: one self-contained HTML file that plays a recording in a browser —
opened from disk in a real headless Chromium with the network off (docs/web.md).

These tests need Chromium (Debian's ``chromium``; ``.ci/run`` installs it where it is missing)
and Playwright for Python (the ``web`` extra, part of ``dev``); without them they fail, they do
not skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import record_run

from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.session import LiveSession
from mirofish.session.html_export import HtmlExportError, export_html

ROOT = Path(__file__).resolve().parent.parent
def _open(browser, html: Path, errors: list[str]):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720}, offline=True)  # no network at all
    page = ctx.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: errors.append(f"request {r.url}"))
    page.goto(html.resolve().as_uri())
    page.evaluate("window.mirofish.ready")
    return ctx, page


@pytest.fixture(scope="module")
def run60(tmp_path_factory):
    """A 2,000-tick, 60-fish recording and its HTML file."""
    folder = tmp_path_factory.mktemp("web")
    rec = record_run(folder / "r60.mirofish", 7, 2000)
    html = folder / "r60.html"
    summary = export_html(rec, html)
    return rec, html, summary


def test_an_exported_run_plays_from_disk_its_frames_the_replays_states(browser, run60):
    from mirofish.session.replay import ReplaySession

    rec, html, summary = run60
    assert summary["bytes"] == html.stat().st_size <= 5_000_000  # 2,000 ticks of 60 fish within 5 MB
    errors: list[str] = []
    ctx, page = _open(browser, html, errors)
    try:
        replay = ReplaySession(rec)
        for t in (0, 777, 2000):  # three ticks: the page's frame is the replay's state
            replay.seek(t)
            v = replay.view()
            shown = page.evaluate(f"window.mirofish.state({t})")
            assert shown["tick"] == t
            assert shown["x"] == v.x.tolist() and shown["y"] == v.y.tolist()
            assert shown["heading"] == v.heading.tolist()
            assert shown["energy"] == np.clip(v.energy * 100 // replay.world.max_energy, 0, 100).tolist()
            food = sorted(zip(shown["food"][0::2], shown["food"][1::2]))
            assert food == sorted(zip(v.food_x.tolist(), v.food_y.tolist()))
        replay.close()
        # the canvas draws the fish: at a fish's pixel, not the water's blue
        page.evaluate("window.mirofish.seek(500)")
        state = page.evaluate("window.mirofish.state(500)")
        fish = next(i for i in range(60) if state["present"][i])
        x, y = page.evaluate(f"window.mirofish.pixelOf({fish})")
        rgb = page.evaluate(f"""(() => {{ const c = document.getElementById('tank'), d = window.devicePixelRatio || 1;
            return Array.from(c.getContext('2d').getImageData({x} * d, {y} * d, 1, 1).data); }})()""")
        assert not (rgb[0] < 40 and rgb[2] > rgb[0] + 20), f"no fish drawn at its place: {rgb}"
        assert errors == [], errors  # nothing failed to load, no script error: it asked for nothing
    finally:
        ctx.close()


def test_click_a_fish_to_follow_it_and_drag_the_timeline(browser, run60, tmp_path):
    from mirofish.session.tables import decisions_table

    rec, html, _ = run60
    errors: list[str] = []
    ctx, page = _open(browser, html, errors)
    try:
        page.evaluate("window.mirofish.seek(300)")
        box = page.locator("#tank").bounding_box()
        x, y = page.evaluate("window.mirofish.pixelOf(5)")
        page.mouse.click(box["x"] + x, box["y"] + y)
        side = page.locator("#side").inner_text()
        assert side.startswith("Fish 5")
        from mirofish.observe.recording import Recording

        d = decisions_table(Recording(rec), 0, 301)
        mine = [(int(t), p) for t, f, p in zip(d["tick"], d["fish"], d["plan"]) if int(f) == 5]
        assert page.locator("#follow-plan").inner_text() == mine[-1][1]  # its latest plan by t300
        page.screenshot(path=str(tmp_path / "followed.png"))
        # drag the timeline's thumb back: the tick on screen follows
        bar = page.locator("#timeline").bounding_box()
        thumb_x = bar["x"] + bar["width"] * 300 / 2000
        page.mouse.move(thumb_x, bar["y"] + bar["height"] / 2)
        page.mouse.down()
        page.mouse.move(bar["x"] + bar["width"] * 0.05, bar["y"] + bar["height"] / 2, steps=8)
        page.mouse.up()
        now = page.evaluate("window.mirofish.tick()")
        assert now < 200 and page.locator("#tick").inner_text() == f"t{now}"
        assert page.locator("#side").inner_text().startswith("Fish 5")  # still followed, at the tick dragged to
        assert errors == []
    finally:
        ctx.close()


def test_a_model_runs_page_shows_a_followed_fishs_thought(browser, tmp_path):
    rec = tmp_path / "model.mirofish"
    with TestServer() as server:
        cfg = load_config(seed=3, **{"fish.count": 12, "brain.kind": "llm",
                                     "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini"}]})
        s = LiveSession(cfg, mode="lockstep")
        s.start_recording(rec)
        try:
            s.run(80)
        finally:
            s.stop_recording()
            s.close()
    html = tmp_path / "model.html"
    export_html(rec, html)
    errors: list[str] = []
    ctx, page = _open(browser, html, errors)
    try:
        page.evaluate("window.mirofish.seek(60)")
        page.evaluate("window.mirofish.follow(3)")
        assert page.locator("#follow-thought").inner_text().strip("“”")  # its thought, in its words
        assert "[small]" in page.locator("#side").inner_text()
    finally:
        ctx.close()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mirofish", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def test_bad_html_exports_are_one_line_exit_2(run60, tmp_path):
    rec, html, _ = run60
    onto_input = _cli("export", str(rec), "--html", str(rec))
    assert onto_input.returncode == 2 and len(onto_input.stderr.strip().splitlines()) == 1
    assert rec.stat().st_size > 0
    exists = _cli("export", str(rec), "--html", str(html))
    assert exists.returncode == 2 and "--overwrite" in exists.stderr
    damaged = tmp_path / "damaged.mirofish"
    damaged.write_bytes(rec.read_bytes()[:5000])
    bad = _cli("export", str(damaged), "--html", str(tmp_path / "x.html"))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.html").exists()
    with pytest.raises(HtmlExportError, match=r"about \d+ MB .*--from/--to"):
        export_html(rec, tmp_path / "big.html", limit_bytes=300_000)
    assert not (tmp_path / "big.html").exists()
    cut = json.loads(_cli("export", str(rec), "--html", str(tmp_path / "cut.html"), "--from", "100", "--to",
                          "400").stdout)
    assert (cut["from"], cut["to"]) == (100, 400) and cut["bytes"] < html.stat().st_size


def test_a_forks_page_rings_where_the_parents_fish_are(browser, run60, tmp_path):
    from mirofish.session.replay import ReplaySession

    rec, _, _ = run60
    fork = tmp_path / "fork.mirofish"
    done = _cli("fork", str(rec), "--at", "300", "--fish", "5", "--plan", "explore east 40", "--ticks", "150",
                "--record", str(fork))
    assert done.returncode == 0, done.stderr
    html = tmp_path / "fork.html"
    export_html(fork, html)
    errors: list[str] = []
    ctx, page = _open(browser, html, errors)
    try:
        assert "a fork of fish 5 at t300" in page.locator("#subtitle").inner_text()
        state = page.evaluate("window.mirofish.state(420)")
        parent = ReplaySession(rec)
        parent.seek(420)
        v = parent.view()
        assert state["parent"]["x"] == v.x.tolist() and state["parent"]["y"] == v.y.tolist()
        assert state["x"] != state["parent"]["x"]  # the fork moved fish: there are rings to draw
        parent.close()
        assert errors == []
    finally:
        ctx.close()


HOSTILE_BRAIN = '''
from mirofish.brains.user import Ask, Decision
EVIL = ['</script><script>window.PWNED1=1</script>', '<img src=x onerror="window.PWNED2=1">',
        '<!--<script>', 'MIROFISH_DATA', '"><svg onload=window.PWNED3=1>', "\\u2028\\u2029 '${1}` \\\\"]
class Evil:
    name = "evil"
    def decide(self, ask: Ask) -> Decision:
        th = EVIL[(ask.fish + ask.tick) % len(EVIL)]
        if "explore" in ask.plans and ask.directions:
            return Decision(goal="explore", direction=ask.directions[0], ticks=10, thought=th)
        return Decision(goal="forage", ticks=10, thought=th)
'''


def test_a_runs_own_words_never_break_or_script_the_page(browser, tmp_path):
    """Thoughts (a model's words) holding markup — "<!--<script", "</script><script>…", an
    onerror, the page's own placeholder — are shown as text: the page plays, runs none of them,
    and carries the run's data once (fault campaign, this stop)."""
    brain = tmp_path / "evil_brain.py"
    brain.write_text(HOSTILE_BRAIN)
    rec = tmp_path / "<!--<script>evil.mirofish"  # the file's name is in the page too
    done = _cli("live", "--headless", "--ticks", "120", "--fish", "12", "--brain", f"{brain}:Evil",
                "--record", str(rec))
    assert done.returncode == 0, done.stderr
    html = tmp_path / "evil.html"
    summary = export_html(rec, html)
    text = html.read_text()
    data = text.split('id="mirofish-data" type="application/octet-stream">')[1].split("</script>")[0]
    assert len(data) > 1000 and text.count(data[:64]) == 1  # the payload once, not pasted into thoughts
    assert summary["bytes"] < 400_000
    errors: list[str] = []
    ctx, page = _open(browser, html, errors)
    try:
        page.evaluate("window.mirofish.seek(60)")
        for fish in range(12):
            page.evaluate(f"window.mirofish.follow({fish})")
            page.wait_for_timeout(20)
        assert page.evaluate("[window.PWNED1, window.PWNED2, window.PWNED3]") == [None, None, None]
        shown = page.locator("#side").inner_text()
        assert "Fish 11" in shown and ("<" in shown or "MIROFISH_DATA" in shown or "'${1}`" in shown)
        assert errors == []
    finally:
        ctx.close()


def test_the_players_hud_writes_each_metric_as_the_window_does(browser, tmp_path):
    """Whole-number metrics read "4.000" (largest cluster, school size); the page now formats each
    value with the metric table's ``fmt``, as the window's HUD does: "12 fish", "4", "0.6%", and
    names each by its label, as the HUD does ("largest school", not "school size")."""
    from mirofish.observe.metrics import METRICS

    rec = record_run(tmp_path / "r.mirofish", 7, 300)
    export_html(rec, tmp_path / "r.html")
    errors: list[str] = []
    ctx, page = _open(browser, tmp_path / "r.html", errors)
    try:
        page.evaluate("window.mirofish.seek(250)")
        page.wait_for_timeout(300)
        shown = page.evaluate("""Array.from(document.querySelectorAll('#hud .spark')).map(b =>
            [b.querySelector('.k').textContent, b.querySelector('.v').textContent])""")
        values = dict(shown)
        # named as the window's HUD names them (the metric table's labels), not by their keys
        assert {"largest school", "schooling", "largest cluster"} <= set(values) and "school size" not in values
        assert values["largest school"].endswith(" fish") and "." not in values["largest school"], values
        assert "." not in values["largest cluster"], values
        assert values["conflict rate"].endswith("%"), values
        fmt = {m.key: m.fmt for m in METRICS}
        assert len(values["polarization"].split(".")[1]) == len(fmt["polarization"].format(0.5).split(".")[1])
        assert errors == [], errors
    finally:
        ctx.close()
