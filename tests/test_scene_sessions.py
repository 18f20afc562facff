"""The negotiation's, the report chain's and the reef's windows read their scene through a session
(mirofish/session/negotiation.py, handoff.py, reef.py), as the aquarium's does: the session owns
the model, its stepping, recorder and replay player, and hands out frozen snapshots; the window
forwards actions and draws snapshots.

* each session runs headless (no pygame, nothing of mirofish.ui imported);
* its snapshots hold what the window drew before the session existed, step by step, for fixed
  seeds: the reference below is the old window's own model code (as of d2e55ae), run beside it;
* a replay's refused move is one line, and the session goes on;
* the window modules build no model and step none (AST), and the session modules import no
  scene, no reef, no window and no pygame outside ``TYPE_CHECKING`` (the session floor reads no
  scenes: the model's classes are handed over as parts).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mirofish.observe.recording import RecordingError
from mirofish.reef.run import Reef
from mirofish.reef.spec import load_reef
from mirofish.scenes.handoff.brief import READING_CODES, draw_brief
from mirofish.scenes.handoff.chain import ARMS, FLOW, Chain, _req_text
from mirofish.scenes.negotiation.dialogue import STRATEGIES, Bandit, Negotiation
from mirofish.scenes.negotiation.recording import (
    NegotiationRecorder,
    NegotiationRecording,
    NegotiationReplay,
    ReplayDiverged,
    session_seed,
    turn_record,
)
from mirofish.scenes.negotiation.world import Session as Deal
from mirofish.session.handoff import HandoffParts, HandoffSession
from mirofish.session.negotiation import NegotiationParts, NegotiationSession, NotARepair
from mirofish.session.reef import ReefSession
from mirofish.session.turns import SceneSession

ROOT = Path(__file__).resolve().parent.parent
RING = ROOT / "assets" / "reefs" / "ring.toml"
NEG = NegotiationParts(negotiation=Negotiation, bandit=Bandit, deal=Deal.draw, session_seed=session_seed,
                       replay=NegotiationReplay, turn_record=turn_record)
HAND = HandoffParts(chain=Chain, brief=draw_brief, arms=ARMS, flow=FLOW, reading_codes=READING_CODES)
LAYERS = ("layer1", "layer2", "layer3")


def _json(state: dict) -> str:
    return json.dumps(state, sort_keys=True, default=str)


# ---------------------------------------------------------------- the negotiation


class OldNegotiationWindow:
    """The negotiation window's model side as it was (before the session): the reference."""

    def __init__(self, seed: int, repair: bool = True, layers: int = 3, recorder=None):
        self.seed, self.repair, self.layers, self.recorder = seed, repair, layers, recorder
        self.bandit, self.index, self.results = Bandit(), 0, []
        self._start()

    def _start(self):
        speakers = self.recorder.begin(self.bandit, None) if self.recorder is not None else None
        self.neg = Negotiation(Deal.draw(self.seed * 100_003 + self.index), self.repair, self.bandit,
                               speakers=speakers, layers=self.layers)
        self.turn_iter, self.done = self.neg.iter_turns(), False

    def reset(self, seed):
        self.seed, self.index, self.results, self.bandit = seed, 0, [], Bandit()
        self._start()

    def step(self):
        if self.done:
            self.results.append(self.neg.result())
            if self.recorder is not None:
                self.recorder.end(self.index, self.neg)
            self.index += 1
            self._start()
            return
        try:
            turn = next(self.turn_iter)
        except StopIteration:
            self.done = True
            return
        if self.recorder is not None:
            self.recorder.turn(turn)


def old_negotiation_drawn(neg, index=0, results=(), player=None) -> dict:
    """What the old window read off the model to draw a frame (its status line, dialogue, board,
    bandit, curve; a replay's line and note), and its JSON snapshot."""
    d = {"turns": [[t.index, t.speaker, t.kind, t.text, t.reply, [k for k in LAYERS if k in t.signals],
                    t.uncertainty, t.strategy] for t in neg.turns],
         "issues": [[k, list(e["attributes"].items()), e["grounded"]] for k, e in sorted(neg.tracker.entities.items())],
         "offers": [[pid, p["proponent"], p["status"]] for pid, p in neg.tracker.propositions.items()],
         "arms": [[n, s["pulls"], s["mean_reward"]] for n, s in neg.bandit.stats().items()],
         "json": _json({"session": neg.tracker.as_json(), "results": list(results), "bandit": neg.bandit.stats()})}
    if player is None:
        d["live"] = [neg.tracker.session, index, len(results), sum(r["agreement"] for r in results)]
    else:
        differs = None
        if player.fork_point:
            f = player.fork_point[0]
            played = [turn_record(x) for x in neg.turns[f + 1:]]
            recorded = player.recorded[f + 1:f + 1 + len(played)]
            differs = next((f + 1 + k for k, (a, b) in enumerate(zip(played, recorded)) if a != b), None)
        d["replay"] = [player.index, player.pos, len(player.order), player.shown, len(player.recorded), player.last,
                       player.fork_point, differs]
    return d


def negotiation_drawn(snap) -> dict:
    """The same, read off a session's snapshot."""
    d = {"turns": [[t.index, t.speaker, t.kind, t.text, t.reply, list(t.layers), t.uncertainty, t.strategy]
                   for t in snap.turns],
         "issues": [[i.key, list(i.readings), i.grounded] for i in snap.issues],
         "offers": [[o.id, o.proponent, o.status] for o in snap.offers],
         "arms": [[a.name, a.pulls, a.mean_reward] for a in snap.arms],
         "json": _json(snap.as_json())}
    p = snap.replay
    if p is None:
        d["live"] = [snap.session_id, snap.index, len(snap.results), snap.deals]
    else:
        d["replay"] = [p.session, p.pos, p.sessions, p.shown, p.recorded, p.last, p.fork_point, p.differs_from]
    return d


def same(a: dict, b: dict) -> bool:
    return json.loads(json.dumps(a, default=str)) == json.loads(json.dumps(b, default=str))


@pytest.mark.parametrize("seed, repair, layers", [(2, True, 3), (3, False, 2)])
def test_the_negotiation_session_shows_what_the_window_showed(seed, repair, layers):
    """Step by step over sessions that end and begin, and across a reset: the same turns, board,
    bandit, status and JSON state as the old window's."""
    old = OldNegotiationWindow(seed, repair, layers)
    new = NegotiationSession(NEG, seed, repair, None, layers)
    assert isinstance(new, SceneSession) and not new.can_seek
    sessions = 0
    for k in range(90):
        if k == 70:
            old.reset(seed + 5)
            new.reset(seed + 5)
        else:
            old.step()
            assert new.step() is True
        assert same(negotiation_drawn(new.snapshot()), old_negotiation_drawn(old.neg, old.index, old.results)), k
        sessions = max(sessions, new.index)
    assert sessions >= 1  # a session did end in there
    first = new.snapshot()
    assert new.snapshot() is first  # kept until the session changes …
    new.step()
    assert new.snapshot() is not first
    with pytest.raises(AttributeError):
        first.index = 9  # … and frozen
    new.close()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path]:
    """Three sessions of seed 4 recorded by the session, and by the old window's code."""
    paths = []
    for who in ("session", "old"):
        path = tmp_path_factory.mktemp(who) / "run.db"
        recorder = NegotiationRecorder(path, {"seed": 4, "repair": True, "layers": 3, "agents": "embedded"})
        if who == "session":
            run = NegotiationSession(NEG, 4, recorder=recorder)
            while run.index < 3:
                run.step()
            run.close()
        else:
            old = OldNegotiationWindow(4, recorder=recorder)
            while old.index < 3:
                old.step()
            recorder.close()
        paths.append(path)
    return paths[0], paths[1]


def test_the_session_records_what_the_window_recorded(recorded):
    mine, old = (NegotiationRecording(p) for p in recorded)
    try:
        assert mine.sessions == old.sessions and len(mine.sessions) == 3
        assert [mine.turns(s["session"]) for s in mine.sessions] == [old.turns(s["session"]) for s in old.sessions]
    finally:
        mine.close()
        old.close()


def _first_repair(path: Path) -> tuple[int, int]:
    rec = NegotiationRecording(path)
    try:
        return next((s["session"], t) for s in rec.sessions for t in rec.repair_turns(s["session"]))
    finally:
        rec.close()


def test_a_replay_session_moves_forks_and_returns_as_the_window_did(recorded):
    """The window's replay keys (. , [ ] F+3 O, a reset, play to the end) as session moves, against
    the old window's player moved the same way: the same turns, board, position and fork."""
    path = recorded[0]
    session, turn = _first_repair(path)
    new = NegotiationSession.replaying(NEG, NegotiationRecording(path), session)
    player = NegotiationReplay(NegotiationRecording(path), session)
    assert new.can_seek and new.snapshot().replay.shown == 0
    with pytest.raises(NotARepair) as refused:
        new.check_fork()  # not at a repair: the repair turns are said
    assert turn in refused.value.repairs and "\n" not in str(refused.value)
    moves = ["step"] * (turn + 1) + ["fork", "step", "step", "step", "original", "back", "back", "next", "step",
                                     "next", "next", "previous", "step", "reset"] + ["step"] * 80
    ends = 0
    for k, move in enumerate(moves):
        if move == "step":
            more = new.step()
            ended = player.step() is None and not player.session_by(+1)
            assert more is not ended, k
            ends += ended
        elif move == "fork":
            new.check_fork()
            new.fork(STRATEGIES[2])
            player.fork(STRATEGIES[2])
        elif move in ("next", "previous"):
            delta = +1 if move == "next" else -1
            assert new.session_by(delta) is player.session_by(delta)
        elif move == "reset":
            new.reset(9)  # a replay's reset: its session's start
            player.seek(0)
        else:
            getattr(new, move)()
            getattr(player, move)()
        assert same(negotiation_drawn(new.snapshot()), old_negotiation_drawn(player.neg, player=player)), (k, move)
    assert ends > 0  # played to the recording's end
    new.close()
    player.rec.close()


def test_a_refused_replay_move_is_one_line_and_the_session_goes_on(recorded):
    path = recorded[0]
    live = NegotiationSession(NEG, 1)
    with pytest.raises(RecordingError, match=r"^a live negotiation has no recording"):
        live.seek(3)
    live.close()
    rec = NegotiationRecording(path)
    new = NegotiationSession.replaying(NEG, rec, 0)
    with pytest.raises(RecordingError) as refused:
        new.fork("offering_options")  # the newest turn is no repair (none is shown)
    assert "\n" not in str(refused.value)
    turns = rec.turns(0)
    altered = [dict(t) for t in turns]
    altered[2]["text"] += " (not what was said)"
    rec.turns = lambda index: altered if index == 0 else turns  # a turn the replay will not make
    new.step()
    new.step()
    with pytest.raises(ReplayDiverged, match=r"^replay diverges from the recording at session 0 turn 2") as diverged:
        new.step()
    assert "\n" not in str(diverged.value)
    new.seek(1)  # it goes on: to turn 1, checked
    assert new.snapshot().replay.shown == 1 and len(new.snapshot().turns) == 1
    new.close()


# ---------------------------------------------------------------- the report chain


class OldHandoffWindow:
    """The report chain window's model side as it was (the reference)."""

    def __init__(self, seed: int, layers: str):
        self.seed, self.arm, self.index, self.done = seed, layers, 0, []
        self._start()

    def _start(self):
        self.chain = Chain(draw_brief(self.seed, self.index), ARMS[self.arm], self.seed)
        self.messages, self.finished = self.chain.iter_messages(), False

    def reset(self, seed):
        self.seed, self.index, self.done = seed, 0, []
        self._start()

    def step(self):
        if self.finished:
            self.done.append(self.chain.result())
            self.index += 1
            self._start()
            return
        try:
            next(self.messages)
        except StopIteration:
            self.finished = True

    def carried(self, d) -> bool:
        reg = self.chain.registry
        for mind in self.chain.minds.values():
            if d.kind == "misunderstanding" and mind.concepts[d.what] != reg.concepts[d.what]:
                return True
            if d.kind == "invented" and d.what in mind.requirements:
                return True
            if d.kind == "lost" and d.what not in mind.requirements:
                return True
        return False

    def drawn(self) -> dict:
        c, reg, done = self.chain, self.chain.registry, self.done
        injected = {f"{d.kind}:{d.what}" for d in c.drifts}
        drifts = [d for r in done for d in r["drifts"]]
        return {
            "task": [self.index, c.brief.task_id, c.brief.goal, [_req_text(r) for r in c.brief.requirements]],
            "messages": [[m.index, m.sender, m.receiver, m.kind, [k for k in LAYERS if k in m.signals], m.text,
                          list(m.detections), m.calibration] for m in c.messages],
            "minds": [[agent, mind.goal == reg.goal, sorted(reg.requirements - mind.requirements),
                       sorted(mind.requirements - reg.requirements),
                       [f"{k}={READING_CODES[r]}" for k, r in mind.concepts.items() if r != reg.concepts[k]]]
                      for agent, mind in c.minds.items()],
            "drifts": [[d.kind, d.what, d.at, FLOW[d.at][0], d.detected_at, self.carried(d)] for d in c.drifts],
            "natural": sorted({f for m in c.messages for f in m.detections
                               if f.startswith("lost:") and f not in injected}),
            "finished": self.finished,
            "figures": [len(done), sum(d["detected_at"] is not None for d in drifts), len(drifts),
                        sum(r["completed"] for r in done), sum(r["calibrations"] for r in done),
                        sum(r["message_tokens"] for r in done),
                        sum(r["signal_tokens"] + r["calibration_tokens"] for r in done)],
            "json": _json({"task": c.brief.task_id, "messages": len(c.messages), "done": done[-20:]})}


def handoff_drawn(s) -> dict:
    f = s.figures
    return {"task": [s.index, s.task_id, s.goal, list(s.requirements)],
            "messages": [[m.index, m.sender, m.receiver, m.kind, list(m.layers), m.text, list(m.detections),
                          m.calibration] for m in s.messages],
            "minds": [[m.agent, not m.goal_changed, list(m.missing), list(m.invented), list(m.reads)] for m in s.minds],
            "drifts": [[d.kind, d.what, d.at, d.sender, d.detected_at, d.carried] for d in s.drifts],
            "natural": list(s.lost_unprompted), "finished": s.finished,
            "figures": [f.tasks, f.caught, f.drifts, f.completed, f.calibrations, f.message_tokens, f.signal_tokens],
            "json": _json(s.as_json())}


@pytest.mark.parametrize("layers", ["L1+2+3", "L1", "none"])
def test_the_handoff_session_shows_what_the_window_showed(layers):
    old, new = OldHandoffWindow(1, layers), HandoffSession(HAND, 1, layers)
    assert isinstance(new, SceneSession)
    tasks = 0
    for k in range(100):
        if k == 80:
            old.reset(7)
            new.reset(7)
        else:
            old.step()
            new.step()
        assert same(handoff_drawn(new.snapshot()), old.drawn()), k
        tasks = max(tasks, new.snapshot().figures.tasks)
    assert tasks >= 5  # tasks did end in there
    new.close()


# ---------------------------------------------------------------- the reef


def reef_drawn(reef, spec, view) -> dict:
    """What the old reef window read to draw its map (its header, tiles, corridors)."""
    now = reef.tick
    tanks = []
    for i, t in enumerate(spec.tanks):
        fig = reef.figures.get(i, {})
        v = view(i)
        tanks.append([t.name, fig.get("population", 0), fig.get("schooling", 0.0),
                      sum(1 for e in reef.log if e["to"] == t.name and e["arrive"] <= now),
                      sum(1 for e in reef.log if e["from"] == t.name and e["leave"] <= now),
                      v.tick, v.x.tolist(), v.y.tolist()])
    corridors = []
    for c, cor in enumerate(spec.corridors):
        a, b = spec.index(cor.a), spec.index(cor.b)
        corridors.append([a, b, list(reef.doors[a][c]), list(reef.doors[b][c]),
                          [[(now - e["leave"]) / max(1, e["arrive"] - e["leave"]), e["from"] == cor.a]
                           for e in reef.log if e["corridor"] == c and e["leave"] < now <= e["arrive"]]])
    return {"tick": now, "interval": spec.interval, "moves": sum(reef.migrations().values()),
            "transit": reef.in_transit(), "tanks": tanks, "corridors": corridors,
            "json": _json({"tick": now, "migrations": reef.migrations()})}


def reef_shown(s) -> dict:
    return {"tick": s.tick, "interval": s.interval, "moves": s.crossings, "transit": s.in_transit,
            "tanks": [[t.name, t.population, t.schooling, t.arrived, t.left, t.view.tick, t.view.x.tolist(),
                       t.view.y.tolist()] for t in s.tanks],
            "corridors": [[c.a, c.b, list(c.door_a), list(c.door_b), [list(x) for x in c.travellers]]
                          for c in s.corridors],
            "json": _json(s.as_json())}


def test_the_reef_session_shows_what_the_window_showed():
    spec = load_reef(RING)
    old = Reef(spec, "inline")
    host = old.hosts.hosts[0]
    old.advance(0)
    new = ReefSession(Reef, spec)
    assert isinstance(new, SceneSession)
    assert [new.terrain(i) for i in range(len(spec.tanks))] == [host.view(i).terrain() for i in range(len(spec.tanks))]
    crossed = 0
    for k in range(101):
        if k:
            old.advance(old.tick + 1)
            new.step()
        assert same(reef_shown(new.snapshot()), reef_drawn(old, spec, lambda i: host.view(i).view())), k
        crossed = new.snapshot().crossings
    assert crossed > 0 and new.tick == 100
    new.close()
    old.close()


# ---------------------------------------------------------------- headless, and the structure


def test_the_sessions_run_headless():
    """Each session, stepped and snapshotted in a process of its own: no pygame, nothing of the window."""
    code = f"""
import json, sys
sys.path.insert(0, {str(ROOT / "tests")!r})
from test_scene_sessions import HAND, NEG, RING
from mirofish.reef.run import Reef
from mirofish.reef.spec import load_reef
from mirofish.session.handoff import HandoffSession
from mirofish.session.negotiation import NegotiationSession
from mirofish.session.reef import ReefSession
seen = []
for s in (NegotiationSession(NEG, 1), HandoffSession(HAND, 1), ReefSession(Reef, load_reef(RING))):
    for _ in range(40):
        s.step()
    seen.append(json.dumps(s.snapshot().as_json(), default=str)[:40])
    s.close()
print(json.dumps({{"seen": seen, "pygame": sorted(m for m in sys.modules if m.split(".")[0] == "pygame"),
                  "ui": sorted(m for m in sys.modules if m.startswith("mirofish.ui"))}}))
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["pygame"] == [] and out["ui"] == [] and len(out["seen"]) == 3, out


WINDOWS = {"negotiation": ROOT / "mirofish" / "ui" / "scenes" / "negotiation.py",
           "handoff": ROOT / "mirofish" / "ui" / "scenes" / "handoff.py",
           "reef": ROOT / "mirofish" / "ui" / "scenes" / "reef.py"}
MODEL_MAKERS = {"Negotiation", "Bandit", "NegotiationReplay", "Chain", "draw_brief", "Reef", "Brief", "from_state",
                "TankHost", "InlineHosts"}  # the scenes' models, their parts and their players
MODEL_STEPS = {"iter_turns", "iter_messages", "advance", "next", "result"}  # stepping one, or reading its end


def _calls(source: str) -> list[str]:
    """The names every call in ``source`` calls (``Negotiation(...)`` → Negotiation, ``x.advance()`` → advance)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            out.append(f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "")
    return out


def _runtime_imports(source: str, package: str) -> set[str]:
    """The modules ``source`` (a module of ``package``) imports outside ``if TYPE_CHECKING:``."""
    tree = ast.parse(source)
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", "") == "TYPE_CHECKING" for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            out.add(".".join(base + ([node.module] if node.module else [])))
    return out


def test_the_checks_find_what_they_forbid():
    assert {"Negotiation", "advance", "next"} <= set(_calls("n = Negotiation(s)\nr.advance(1)\nnext(it)\n"))
    src = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..scenes.x import A\n"
           "from ..reef.run import Reef\n")
    assert _runtime_imports(src, "mirofish.session") == {"typing", "mirofish.reef.run"}


@pytest.mark.parametrize("scene", sorted(WINDOWS))
def test_the_window_builds_and_steps_no_model(scene):
    """The window module calls none of the model's makers nor a model's stepping: its session does."""
    calls = set(_calls(WINDOWS[scene].read_text()))
    assert not calls & MODEL_MAKERS, (scene, calls & MODEL_MAKERS)
    assert not calls & MODEL_STEPS, (scene, calls & MODEL_STEPS)


@pytest.mark.parametrize("module", ["turns", "negotiation", "handoff", "reef"])
def test_a_scene_session_imports_no_scene_reef_window_or_pygame(module):
    imports = _runtime_imports((ROOT / "mirofish" / "session" / f"{module}.py").read_text(), "mirofish.session")
    bad = {m for m in imports if m.split(".")[0] == "pygame"
           or m.startswith(("mirofish.ui", "mirofish.scenes", "mirofish.reef", "mirofish.cli"))}
    assert not bad, (module, bad)


def test_the_windows_hand_their_sessions_the_scenes_own_parts():
    """What the windows hand over is the scene packages' model (the parts this test runs with), and
    each window holds its session."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    from mirofish.ui.scenes import handoff, negotiation
    from mirofish.ui.scenes.reef import ReefScene

    assert negotiation.PARTS == NEG and handoff.PARTS == HAND
    scenes = [negotiation.NegotiationScene(seed=1), handoff.HandoffScene(), ReefScene(load_reef(RING))]
    for scene, kind in zip(scenes, (NegotiationSession, HandoffSession, ReefSession)):
        assert isinstance(scene.session, kind)
        scene.step()
        assert scene.snapshot() == scene.session.snapshot().as_json()
        scene.close()
