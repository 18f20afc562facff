"""An influence study's decisions on a replay's timeline, as a user meets them: amber marks at the
pivotal ticks, a tooltip naming the decision, a click that forks its strongest alternative, and
one-line refusals of an influence file the replay cannot use (``replay REC --influence DIR``)."""

import json
import os
import shutil
from pathlib import Path

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame
import pytest

from mirofish.cli import main
from mirofish.config import load_config
from mirofish.fish.plans import describe, parse_plan
from mirofish.observe.recording import Recorder, Recording
from mirofish.session import LiveSession, ReplaySession, fork
from mirofish.session.influence import influence
from mirofish.session.influence_marks import beside, given, load
from mirofish.ui.app import App
from mirofish.ui.panels import MARK_COLOUR
from mirofish.ui.scenes.aquarium import AquariumScene

SIZES = [(1024, 600), (1280, 720), (1920, 1080)]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A 30-fish, 320-tick recording, and a fork of it at t250 in which fish 5 (at the west glass)
    explores east for 80 ticks (planted.db), with the real influence study of that fork's t250..t255
    on fish 5's x at t300..t310 beside it: fish 5's planted decision comes out first and pivotal."""
    folder = tmp_path_factory.mktemp("influence-window")
    base = folder / "run.db"
    cfg = load_config(seed=5, **{"fish.count": 30})
    live = LiveSession(cfg)
    rec = Recorder(base, cfg).attach(live)
    live.run(320)
    rec.close()
    live.close()
    planted = folder / "planted.db"
    fork(base, 250, 5, "explore east 80", 70, planted)
    summary = influence(planted, "fish.5.x@300:310", (250, 256), null_max=60, ablate_fish=0, ablate_reps=1)["summary"]
    beside(planted).parent.mkdir()
    beside(planted).write_text(json.dumps(summary, indent=1))
    return {"folder": folder, "base": base, "planted": planted, "summary": summary}


def made_up(study, pivotal=((100, None), (200, None)), faint=((150, None),), recording=None) -> dict:
    """An influence summary of the base recording (the shape ``influence --out`` writes): decisions
    the recording made at those ticks (the first fish that decided at or after each), pivotal or not."""
    rec = Recording(study["base"])
    rows = []
    for want, flag in [(t, True) for t, _ in pivotal] + [(t, False) for t, _ in faint]:
        tick = want
        while rec.decisions_at(tick) is None or not len(rec.decisions_at(tick).fish):
            tick += 1
        made = rec.decisions_at(tick)
        rows.append({"tick": tick, "fish": int(made.fish[0]), "recorded": describe(int(made.goal[0]),
                     int(made.param[0]), int(made.horizon[0])), "goal": "x", "alternatives": 7,
                     "outcome_recorded": 20.0, "effect": -15.3 if flag else 2.5, "low": -18.7 if flag else -1.0,
                     "high": -11.3 if flag else 6.0, "band": [-3.0, 4.0], "pivotal": flag,
                     "strongest_alternative": "explore west 30", "strongest_outcome": 35.3})
    rec.close()
    return {"recording": str(recording or study["base"]), "outcome": "largest_school@300", "outcome_recorded": 20.0,
            "window": [100, 260], "decisions_tested": len(rows), "null": {"band": [-3.0, 4.0]},
            "decisions": rows, "pivotal": [r for r in rows if r["pivotal"]]}


def app_for(scene, size=(1280, 720)):
    app = App([scene], size, offscreen=True)
    scene.pacer.paused = True
    app.frame(0.0)
    return app


def move_to(pos):
    pygame.event.post(pygame.event.Event(pygame.MOUSEMOTION, pos=pos, rel=(0, 0), buttons=(0, 0, 0)))


def click(pos):
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=pos))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=pos))


def test_pivotal_decisions_are_amber_marks_at_their_ticks(study, tmp_path):
    path = tmp_path / "made-up.json"
    path.write_text(json.dumps(made_up(study)))
    for size in SIZES:
        with given(study["base"], load(path, study["base"])):
            scene = AquariumScene(ReplaySession(study["base"]))
        app = app_for(scene, size)
        tl = scene.timeline
        drawn = {(m.tick, m.pivotal): box for box, m in tl.drawn_marks}
        pivotal = [m for _, m in tl.drawn_marks if m.pivotal]
        assert len(pivotal) == 2 and len(tl.drawn_marks) == 3  # and the faint one
        for m in pivotal:
            box = drawn[(m.tick, True)]
            assert abs(box.centerx - tl.x_of(m.tick)) <= 1 and box.bottom <= tl.bar.y + 2  # above the bar, at its tick
            assert tuple(app.screen.get_at((box.centerx, box.y + 6)))[:3] == MARK_COLOUR
        faint = next(box for box, m in tl.drawn_marks if not m.pivotal)
        assert tuple(app.screen.get_at((faint.centerx, faint.y + 8)))[:3] != MARK_COLOUR
        assert pygame.Rect(0, 0, *size).contains(tl.rect)
        assert "2 pivotal decisions marked amber" in scene.message
        app.close()


def test_the_study_beside_the_recording_is_found_and_its_pivotal_decision_marked(study):
    scene = AquariumScene(ReplaySession(study["planted"]))
    app = app_for(scene)
    top = study["summary"]["decisions"][0]
    assert top["pivotal"] and (top["tick"], top["fish"]) == (250, 5)  # the planted decision
    marks = [m for _, m in scene.timeline.drawn_marks if m.pivotal]
    assert [(m.tick, m.fish) for m in marks] == [(250, 5)]
    assert "influence on fish.5.x@300:310: 1 pivotal decision" in scene.message
    app.close()


def test_hovering_a_mark_names_the_decision_inside_the_window(study):
    top = study["summary"]["decisions"][0]
    for size in SIZES:
        scene = AquariumScene(ReplaySession(study["planted"]))
        app = app_for(scene, size)
        scene.seek(290)
        app.frame(0.0)
        box, mark = next((b, m) for b, m in scene.timeline.drawn_marks if m.pivotal)
        move_to(box.center)
        app.frame(0.0)
        assert scene.timeline.hovered is mark
        lines = [text for text, _ in scene.timeline.tip_lines(mark)]
        effect = f"{top['effect']:.1f} [{top['low']:.1f}, {top['high']:.1f}]"
        assert lines[0] == (f"t250 fish 5: explore east for 80 ticks — effect {effect}, pivotal; strongest "
                            f"alternative: {top['strongest_alternative']}")
        tip = scene.timeline.draw_tip(app.screen)
        assert tip is not None and app.screen.get_rect().contains(tip)
        assert tuple(app.screen.get_at(tip.topleft))[:3] == MARK_COLOUR  # its edge: the tooltip is drawn
        move_to((5, 5))
        app.frame(0.0)
        assert scene.timeline.hovered is None and scene.timeline.draw_tip(app.screen) is None
        app.close()


def test_clicking_a_mark_forks_its_strongest_alternative_and_o_comes_back(study):
    top = study["summary"]["decisions"][0]
    scene = AquariumScene(ReplaySession(study["planted"]))
    app = app_for(scene)
    scene.seek(300)
    app.frame(0.0)
    box = next(b for b, m in scene.timeline.drawn_marks if m.pivotal)
    click(box.center)
    app.frame(0.0)
    alt = top["strongest_alternative"]
    assert scene.tick == 250 and scene.selected == 5 and scene.mode == "fork"
    assert scene.fork is not None and scene.fork.ghost_view() is not None  # the original's fish as rings
    assert scene.fork.label == describe(*parse_plan(alt))
    assert scene.message.startswith(f"t250 fish 5: forked with {alt} — the influence study's strongest alternative")
    scene.set_speed(16)
    scene.pacer.paused = False
    app.run(frames=10, fixed_dt=0.1)  # the branch plays
    assert scene.tick > 250
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_o, mod=0, unicode=""))
    app.frame(0.0)
    # back at the mark's tick: the marks stay, and every panel shows the tick on screen
    assert scene.mode == "replay" and scene.tick == 250
    assert [(m.tick, m.fish) for _, m in scene.timeline.drawn_marks if m.pivotal] == [(250, 5)]
    reference = ReplaySession(study["planted"])
    reference.seek(250)
    assert scene.session.state_hash() == reference.state_hash()
    assert (scene.view.x == reference.view().x).all() and scene._status()["tick"] == 250
    assert all(d["tick"] < 250 for d in scene.last_decision.values())
    reference.close()
    app.close()


def test_a_click_on_a_mark_from_inside_a_fork_opens_that_one(study, tmp_path):
    path = tmp_path / "made-up.json"
    path.write_text(json.dumps(made_up(study)))
    with given(study["base"], load(path, study["base"])):
        scene = AquariumScene(ReplaySession(study["base"]))
    app = app_for(scene)
    first, second = sorted((m for _, m in scene.timeline.drawn_marks if m.pivotal), key=lambda m: m.tick)
    scene.open_mark(first)
    assert scene.mode == "fork" and scene.tick == first.tick and scene.selected == first.fish
    app.frame(0.0)
    box = next(b for b, m in scene.timeline.drawn_marks if m is second)
    click(box.center)
    app.frame(0.0)
    assert scene.mode == "fork" and scene.fork.tick0 == second.tick and scene.selected == second.fish
    assert scene.fork.label == "explore west for 30 ticks"
    assert scene.message.startswith(f"t{second.tick} fish {second.fish}: forked with explore west 30")
    app.close()


def bad_inputs(study, tmp_path):
    """(what the flag names, what its one line says)."""
    folder = tmp_path / "empty"
    folder.mkdir()
    (tmp_path / "not.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "other.json").write_text(json.dumps(made_up(study, recording=tmp_path / "elsewhere.db")))
    outside = made_up(study)
    outside["decisions"][0]["tick"] = 5000
    (tmp_path / "outside.json").write_text(json.dumps(outside))
    wrong = made_up(study)
    wrong["decisions"][1]["effect"] = "big"
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    return [(tmp_path / "missing", "no such file"), (folder, "holds no influence.json"),
            (tmp_path / "not.json", "is not JSON (line 1"), (tmp_path / "list.json", "is not an influence summary"),
            (tmp_path / "other.json", "is the influence study of"),
            (tmp_path / "outside.json", "is not in the recording"),
            (tmp_path / "wrong.json", "has no number 'effect'"), (tmp_path / "binary.json", "is not UTF-8")]


def test_an_influence_file_the_replay_cannot_use_is_one_line_and_exit_2(study, tmp_path, capsys):
    for path, said in bad_inputs(study, tmp_path):
        code = main(["replay", str(study["base"]), "--influence", str(path), "--headless", "--to-tick", "10"])
        out, err = capsys.readouterr()
        assert code == 2, (path, err)
        assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert err.startswith("mirofish replay: --influence: ") and said in err, err


def test_the_flag_takes_the_folder_or_its_json_and_the_window_draws_the_marks(study, tmp_path, capsys):
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / "influence.json").write_text(json.dumps(made_up(study)))
    for named in (tmp_path / "study", tmp_path / "study" / "influence.json"):
        shot = tmp_path / f"{named.name}.png"
        code = main(["replay", str(study["base"]), "--influence", str(named), "--at-tick", "250",
                     "--screenshot", str(shot), "--frames", "2", "--size", "1280x720"])
        assert code == 0, capsys.readouterr().err
        img = pygame.image.load(str(shot))
        with given(study["base"], load(named, study["base"])):  # where the same window draws its marks
            scene = AquariumScene(ReplaySession(study["base"]))
        app = app_for(scene, (1280, 720))
        scene.seek(250)
        app.frame(0.0)
        for box, m in scene.timeline.drawn_marks:
            if m.pivotal:
                assert tuple(img.get_at((box.centerx, box.y + 6)))[:3] == MARK_COLOUR
        app.close()


def test_a_study_beside_the_recording_that_does_not_fit_is_a_warning_and_the_replay_goes_on(study, tmp_path, capsys):
    rec = tmp_path / "copy.db"
    shutil.copy(study["base"], rec)
    beside(rec).parent.mkdir()
    beside(rec).write_text(json.dumps(made_up(study)))  # the study of run.db, not of copy.db
    shot = tmp_path / "shot.png"
    code = main(["replay", str(rec), "--screenshot", str(shot), "--frames", "2", "--size", "1024x600"])
    err = capsys.readouterr().err
    assert code == 0 and shot.exists()
    assert len(err.strip().splitlines()) == 1 and err.startswith("mirofish replay: warning: ") and \
        "is the influence study of" in err and "goes on without influence marks" in err
    scene = AquariumScene(ReplaySession(rec))  # the window itself says it in the footer
    assert scene.timeline.influence is None and "is the influence study of" in scene.message
    scene.close()


def test_the_recording_named_relative_to_where_influence_ran(study, tmp_path, monkeypatch):
    """``cd DIR && influence run.db --out run.db.influence``: the study names "run.db"; a replay
    from elsewhere still knows it is this recording's."""
    rec = tmp_path / "rel.db"
    shutil.copy(study["base"], rec)
    summary = made_up(study, recording=Path("rel.db"))
    beside(rec).parent.mkdir()
    beside(rec).write_text(json.dumps(summary))
    monkeypatch.chdir(Path(__file__).parent)
    marks = load(beside(rec), rec)
    assert len(marks.pivotal) == 2


def test_a_study_written_to_the_recordings_name_without_its_suffix_is_found_too(study, tmp_path):
    """``influence saves/demo1.mirofish --out saves/demo1.influence``: a replay finds it as well."""
    rec = tmp_path / "demo1.mirofish"
    shutil.copy(study["base"], rec)
    (tmp_path / "demo1.influence").mkdir()
    (tmp_path / "demo1.influence" / "influence.json").write_text(json.dumps(made_up(study, recording=rec)))
    scene = AquariumScene(ReplaySession(rec))
    assert scene.timeline.influence is not None and len(scene.timeline.influence.pivotal) == 2
    scene.close()
