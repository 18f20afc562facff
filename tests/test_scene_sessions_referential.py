"""The referential game's window reads its game through a session (mirofish/session/referential.py),
as the negotiation's, the report chain's and the reef's do: the session owns the Experiment, its
stepping, the charts' series, the recorder and a replay's recording, and hands out frozen
snapshots; the window forwards actions and draws snapshots.

* the session runs headless (no pygame, nothing of mirofish.ui imported);
* its snapshots hold what the window drew before the session existed, step by step, for fixed
  seeds: the reference below is the old window's own model code (as of cc518c5), run beside it;
* a replayed round the recording does not hold is one line, and the session goes on;
* the window module builds no model and steps none (AST), and the session module imports no
  scene, no window and no pygame outside ``TYPE_CHECKING``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from mirofish.observe.recording import RecordingError
from mirofish.scenes.referential.experiment import Experiment
from mirofish.scenes.referential.game import GameConfig
from mirofish.scenes.referential.recording import ReferentialRecorder, ReferentialRecording, ReplayDiverged
from mirofish.session.referential import ReferentialParts, ReferentialSession
from mirofish.session.turns import SceneSession

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_scene_sessions import _calls, _runtime_imports

ROOT = Path(__file__).resolve().parent.parent
PARTS = ReferentialParts(experiment=Experiment, config=GameConfig)
WINDOW = ROOT / "mirofish" / "ui" / "scenes" / "referential.py"


def _plain(x):
    return json.loads(json.dumps(x, sort_keys=True, default=str))


class OldReferentialWindow:
    """The referential window's model side as it was (before the session): the reference."""

    def __init__(self, exp: Experiment, recording: ReferentialRecording | None = None):
        self.exp, self.recording = exp, recording
        self.success: deque[float] = deque(maxlen=300)
        self.compression: deque[float] = deque(maxlen=300)
        self.size: deque[float] = deque(maxlen=300)
        self.last = None
        self.paused, self.message = False, ""

    @property
    def last_round(self) -> int:
        return len(self.recording.rounds) if self.recording is not None else self.exp.cfg.rounds

    def reset(self, seed):
        cfg = self.exp.cfg.model_copy(update={"seed": seed})
        self.exp.close()
        self.exp = self.recording.experiment() if self.recording is not None else Experiment(cfg)
        for series in (self.success, self.compression, self.size):
            series.clear()
        self.last = None

    def seek(self, n):
        self.reset(self.exp.cfg.seed)
        for _ in range(max(0, min(n, self.last_round))):
            self.step()

    def step(self):
        if len(self.exp.rounds) >= self.last_round:
            self.paused = True
            return
        try:
            self.last = self.exp.step()
        except RecordingError as exc:
            self.paused = True
            self.message = str(exc)
            return
        self.success.append(float(np.mean(self.exp.success[-50:])))
        msg, nat = zip(*self.exp.lengths[-50:])
        self.compression.append(sum(msg) / sum(nat))
        self.size.append(self.exp.glossary.size())

    def review(self, approve):
        waiting = self.exp.glossary.pending()
        if waiting:
            self.exp.glossary.review(waiting[0].term, approve=approve)
            return waiting[0].term, approve
        return None

    def json(self) -> dict:
        return {"summary": self.exp.summary(), "glossary": self.exp.glossary.as_dict()}

    def drawn(self) -> dict:
        """What the old window read off the model to draw a frame (in the frame's order: the
        summary, then the agents playing), and its JSON snapshot taken before the frame."""
        state = _plain(self.json())
        exp, names = self.exp, self.exp.game.names
        s = exp.summary() if exp.rounds else {}
        agents = len(exp.present)
        r = self.last

        def obj(o):
            return [o.id, list(o.properties(names).items()), o.detail, o.describe(tuple(names))]

        terms = sorted(exp.glossary.active(), key=lambda t: -t.stable_score) + exp.glossary.pending()
        return {"status": [len(exp.rounds), self.last_round, exp.cfg.condition, agents, exp.cfg.candidates],
                "round": None if r is None else [obj(r.target), [obj(c) for c in r.candidates], r.message, r.choice,
                                                 r.success, list(r.new_terms)],
                "charts": [list(self.success), list(self.compression), list(self.size), exp.game.chance],
                "terms": [[t.term, " ".join(t.canonical.values()),
                           " ".join(t.by_receiver.values()) if t.by_receiver else "?", t.agreed, t.tier, t.usage,
                           t.success_rate, t.stable_score, t.status] for t in terms],
                "review": [exp.cfg.review, [[t.term, " ".join(t.canonical.values()), t.proposed_by]
                                            for t in exp.glossary.pending()]],
                "facts": _plain(s), "alarm_window": exp.cfg.alarm_window, "json": state}


def drawn(g) -> dict:
    """The same, read off a session's snapshot."""
    names = list(g.names)

    def obj(o):
        return [o.id, list(o.properties(names).items()), o.detail, o.description]

    r = g.last
    return {"status": [g.rounds, g.last_round, g.condition, g.agents, g.candidates],
            "round": None if r is None else [obj(r.target), [obj(c) for c in r.candidates], r.message, r.choice,
                                             r.success, list(r.new_terms)],
            "charts": [list(g.success), list(g.compression), list(g.size), g.chance],
            "terms": [[t.term, " ".join(t.means), " ".join(t.reads) if t.reads else "?", t.agreed, t.tier, t.usage,
                       t.success_rate, t.stable_score, t.status] for t in g.terms],
            "review": [g.review, [[t.term, " ".join(t.means), t.proposed_by] for t in g.pending]],
            "facts": _plain(dict(g.summary) if g.rounds else {}), "alarm_window": g.alarm_window,
            "json": _plain(g.as_json())}


CASES = {
    "default": dict(seed=3, rounds=400),
    "templates, review, three agents": dict(seed=5, rounds=100, templates=True, review=True, agents=3),
    "alarms": dict(seed=7, rounds=90, alarm_window=5, alarm_drop=0.1),
    "fixed, short": dict(seed=2, rounds=30, condition="fixed"),
    "natural, short": dict(seed=2, rounds=40, condition="natural"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_referential_session_shows_what_the_window_showed(case):
    """Step by step, with reviews, past the game's last round and across a reset: the same status,
    round, charts, glossary, review line and JSON state as the old window's."""
    cfg = GameConfig(**CASES[case])
    old = OldReferentialWindow(Experiment(cfg))
    new = ReferentialSession(PARTS, Experiment(cfg))
    assert isinstance(new, SceneSession) and not new.can_seek
    assert drawn(new.snapshot()) == old.drawn()
    ended = False
    for k in range(min(cfg.rounds + 5, 110)):
        if k == 60:
            old.reset(cfg.seed + 11)
            new.reset(cfg.seed + 11)
        elif k % 17 == 9:
            assert new.review(k % 2 == 0) == old.review(k % 2 == 0)
        else:
            old.paused = False
            old.step()
            played = new.step()
            assert played is not old.paused, k
            ended |= not played
        assert drawn(new.snapshot()) == old.drawn(), (case, k)
    if cfg.rounds < 50:
        assert ended  # played past the last round: the step says so, as the window paused
    if cfg.review:
        assert any(t.status == "pending" for t in new.snapshot().terms)
    first = new.snapshot()
    assert new.snapshot() is first  # kept until the session changes …
    new.reset(1)
    assert new.snapshot() is not first
    with pytest.raises(AttributeError):
        first.rounds = 9  # … and frozen
    old.exp.close()
    new.close()


def test_the_alarm_case_does_raise_an_alarm():
    new = ReferentialSession(PARTS, Experiment(GameConfig(**CASES["alarms"])))
    for _ in range(55):
        new.step()
    assert new.snapshot().summary["success_alarms"]  # (before the other test's reset at round 60)
    new.close()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path]:
    """60 rounds of seed 4 recorded by the session, and by the old window's code."""
    paths = []
    for who in ("session", "old"):
        path = tmp_path_factory.mktemp(who) / "run.db"
        exp = Experiment(GameConfig(seed=4, rounds=60))
        recorder = ReferentialRecorder(path, exp)
        if who == "session":
            run = ReferentialSession(PARTS, exp, recorder)
            while run.step():
                pass
            run.close()
        else:
            old = OldReferentialWindow(exp)
            while not old.paused:
                old.step()
            exp.close()
            recorder.close()
        paths.append(path)
    return paths[0], paths[1]


def test_the_session_records_what_the_window_recorded(recorded):
    mine, old = (ReferentialRecording(p) for p in recorded)
    try:
        assert len(mine.rounds) == 60 and mine.rounds == old.rounds and mine.cfg == old.cfg
    finally:
        mine.close()
        old.close()


def test_a_replay_session_seeks_steps_and_diverges_as_the_window_did(recorded):
    """The window's replay moves (the timeline, ",", play to the end, a reset) and a round the
    recording does not hold, against the old window's code moved the same way."""
    path = recorded[0]
    rec_new, rec_old = ReferentialRecording(path), ReferentialRecording(path)
    new = ReferentialSession.replaying(PARTS, rec_new)
    old = OldReferentialWindow(rec_old.experiment(), rec_old)
    assert new.can_seek and new.snapshot().replay and new.snapshot().last_round == 60
    moves = [("seek", 30), ("seek", 29), *[("step", 0)] * 35, ("reset", 0), ("step", 0), ("seek", 45)]
    for k, (move, n) in enumerate(moves):
        if move == "seek":
            new.seek(n)
            old.seek(n)
        elif move == "reset":
            new.reset(9)
            old.reset(9)
        else:
            old.paused = False
            old.step()
            assert new.step() is not old.paused, k
        assert drawn(new.snapshot()) == old.drawn(), (k, move)
    assert new.snapshot().rounds == 45
    # a round the recording does not hold: one line, the round played, not charted; the session goes on
    for rec in (rec_new, rec_old):
        rec.rounds[5] = {**rec.rounds[5], "message": "not what was said"}
    new.reset(0)
    old.reset(0)
    for _ in range(5):
        new.step()
        old.step()
    with pytest.raises(ReplayDiverged, match=r"^replay diverges from the recording at round 5") as diverged:
        new.step()
    old.step()
    assert "\n" not in str(diverged.value) and str(diverged.value) == old.message
    assert drawn(new.snapshot()) == old.drawn()
    with pytest.raises(ReplayDiverged):
        new.seek(8)  # the rounds after are played all the same; the refusal is said at the end
    old.seek(8)
    assert drawn(new.snapshot()) == old.drawn() and new.snapshot().rounds == 8
    new.close()
    old.exp.close()
    rec_old.close()


def test_the_referential_session_runs_headless():
    """Stepped, reviewed and snapshotted in a process of its own: no pygame, nothing of the window."""
    code = f"""
import json, sys
sys.path.insert(0, {str(ROOT / "tests")!r})
from mirofish.scenes.referential.experiment import Experiment
from mirofish.scenes.referential.game import GameConfig
from mirofish.session.referential import ReferentialParts, ReferentialSession
s = ReferentialSession(ReferentialParts(experiment=Experiment, config=GameConfig),
                       Experiment(GameConfig(seed=1, rounds=50, review=True)))
for _ in range(40):
    s.step()
s.review(True)
seen = json.dumps(s.snapshot().as_json(), default=str)[:40]
s.reset(2)
s.close()
d = ReferentialSession(ReferentialParts(experiment=Experiment, config=GameConfig))
d.step()
assert d.snapshot().last_round == 400 and d.snapshot().seed == 0
d.close()
print(json.dumps({{"seen": seen, "pygame": sorted(m for m in sys.modules if m.split(".")[0] == "pygame"),
                  "ui": sorted(m for m in sys.modules if m.startswith("mirofish.ui"))}}))
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["pygame"] == [] and out["ui"] == [] and out["seen"], out


MODEL_MAKERS = {"Experiment", "GameConfig", "Game", "experiment", "model_copy", "draw_round", "ReferentialRecorder"}
MODEL_READS = {"summary", "as_dict", "pending", "active", "describe", "run", "mean"}  # reading the model, or stepping


def test_the_window_builds_and_steps_no_model():
    calls = set(_calls(WINDOW.read_text()))
    assert not calls & MODEL_MAKERS, calls & MODEL_MAKERS
    assert not calls & MODEL_READS, calls & MODEL_READS
    old = set(_calls((ROOT / "tests" / "test_scene_sessions_referential.py").read_text()))
    assert {"Experiment", "summary", "pending", "describe"} <= old  # (the checks would see them)


def test_the_referential_session_imports_no_scene_window_or_pygame():
    imports = _runtime_imports((ROOT / "mirofish" / "session" / "referential.py").read_text(), "mirofish.session")
    bad = {m for m in imports if m.split(".")[0] == "pygame"
           or m.startswith(("mirofish.ui", "mirofish.scenes", "mirofish.reef", "mirofish.cli"))}
    assert not bad, bad
    assert "mirofish.observe.recording" in imports


def test_the_window_hands_its_session_the_scenes_own_parts(recorded):
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    from mirofish.ui.scenes import referential

    assert referential.PARTS == PARTS
    live = referential.ReferentialScene()
    replay = referential.ReferentialScene.replaying(ReferentialRecording(recorded[0]))
    for scene in (live, replay):
        assert isinstance(scene.session, ReferentialSession)
        scene.step()
        assert scene.snapshot() == scene.session.snapshot().as_json()
        assert scene.exp is scene.session.exp and scene.last is scene.session.snapshot().last
        scene.close()
    assert replay.session.can_seek and not live.session.can_seek
