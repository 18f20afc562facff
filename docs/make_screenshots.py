#!/usr/bin/env python3
"""Regenerate the documentation's screenshots (offscreen, 1920×1080): python docs/make_screenshots.py"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ["SDL_VIDEODRIVER"] = "dummy"
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numpy as np
import pygame

from mirofish.config import load_config
from mirofish.observe.recording import Recorder
from mirofish.session import (
    LiveSession,
    ReplaySession,
)
from mirofish.ui.app import App
from mirofish.ui.scenes.aquarium import AquariumScene


def recorded_run(seed: int, ticks: int) -> Path:
    """A recording of ``ticks`` ticks of the default tank (in a temporary folder)."""
    path = Path(tempfile.mkdtemp()) / "run.db"
    cfg = load_config(seed=seed)
    engine = LiveSession(cfg)
    rec = Recorder(path, cfg).attach(engine)
    engine.run(ticks)
    rec.close()
    return path


def shoot(scene, name: str, frames: int, keys=(), select=None, size=(1920, 1080), out=HERE) -> None:
    app = App([scene], size, offscreen=True)
    if select is not None:
        scene.selected = select
    app.frame(0.0)
    for k in keys:
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=0, unicode=""))
    app.run(frames=frames, fixed_dt=1 / 30)
    app.screenshot(out / name)
    app.close()
    print("wrote", out / name)


def school_sequence(seed: int = 1, ticks=(240, 250, 260, 270, 280, 290), size=(1920, 1080)) -> None:
    """docs/school-sequence.png: the schooling-demo tank (seed 1) every ten ticks from tick 240,
    cropped to the part of the tank the largest moving school swims through, the same crop in
    every panel (the panels folded away and the camera held still at 20 px a cell, so a crop is
    the same water in every panel); its fish are ringed. The full window at tick 240 is
    docs/school-window.png."""
    demo = load_config(preset="schooling-demo", seed=seed, **{"engine.speed": 1.0})
    scene = AquariumScene.live(demo)
    app = App([scene], size, offscreen=True)
    scene.pacer.paused = True
    scene.show_fov = False
    while scene.session.world.tick < ticks[0]:
        scene.step()
    app.frame(0.0)
    app.screenshot(HERE / "school-window.png")
    scene.folded = True
    app.frame(0.0)
    scene.camera.following = False  # the same view in every panel
    from mirofish.observe.metrics import nn_and_labels, schools

    frame_xy = lambda: np.stack(scene.session.world.water.xy(scene.session.world.school.cell), axis=1)
    _, labels = nn_and_labels(frame_xy().astype(float))
    members = schools(labels, scene.session.metrics.moving())[0]
    shots, centres = [], []
    for tick in ticks:
        while scene.session.world.tick < tick:
            scene.step()
        app.frame(0.0)
        for i in members:  # ring the school's fish (the ones that made it up at tick 240)
            x, y = scene.renderer.to_px(*frame_xy()[i])
            pygame.draw.circle(app.screen, (255, 255, 255), (int(x), int(y)), 9, 1)
        shots.append(app.screen.copy())
        centres.append(frame_xy()[members].mean(axis=0))
    lo, hi = np.min(centres, axis=0) - (14, 9), np.max(centres, axis=0) + (14, 9)
    (x0, y0), (x1, y1) = scene.renderer.to_px(*lo), scene.renderer.to_px(*hi)
    crop = pygame.Rect(int(x0), int(y0), int(x1 - x0), int(y1 - y0)).clip(app.screen.get_rect())
    cols = 2
    rows = (len(shots) + cols - 1) // cols
    sheet = pygame.Surface((cols * (crop.w + 8) + 8, rows * (crop.h + 34) + 8))
    sheet.fill((10, 18, 32))
    font = pygame.font.SysFont(None, 26)
    for k, (shot, tick) in enumerate(zip(shots, ticks)):
        px, py = 8 + (k % cols) * (crop.w + 8), 8 + (k // cols) * (crop.h + 34)
        sheet.blit(shot, (px, py + 26), crop)
        sheet.blit(font.render(f"tick {tick}", True, (220, 230, 240)), (px + 4, py + 4))
    pygame.image.save(sheet, str(HERE / "school-sequence.png"))
    print("wrote", HERE / "school-sequence.png", "school of", members.size, "centre", centres[0], "->", centres[-1])
    app.close()


def main() -> None:
    school_sequence()
    # the README's second screenshot: the window as `live` opens the demo (its own speed, the camera
    # following fish 1), at tick 301, a metrics sample tick (the HUD then equals --headless --ticks 301)
    import subprocess

    subprocess.run([sys.executable, str(HERE.parent / "run.py"), "live", "--preset", "schooling-demo", "--seed", "1",
                    "--select", "1", "--size", "1920x1080", "--frames", "2266", "--screenshot",
                    str(HERE / "live.png")], check=True)

    path = recorded_run(7, 2400)

    replay = AquariumScene(ReplaySession(path))
    replay.seek(1500)
    shoot(replay, "replay.png", 20, keys=[pygame.K_SPACE], select=7)

    from mirofish.brains.testserver import TestServer

    with TestServer() as server:  # the model brain against the bundled scripted server
        cfg = load_config(**{"fish.count": 30, "engine.speed": 4.0, "brain.kind": "llm",
                             "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini"}]})
        scene = AquariumScene.live(cfg)
        app = App([scene], (1920, 1080), offscreen=True)
        scene.selected = 4
        app.run(frames=240, fixed_dt=1 / 30, wall_paced=True)
        app.screenshot(HERE / "model-brain.png")
        app.close()
        print("wrote", HERE / "model-brain.png")
        model_exchange(server.url)

    fork = AquariumScene(ReplaySession(path))
    fork.seek(1200)
    fork.set_speed(16)
    # Fish 7 is given the plan "explore east 30" at t1200; the timeline shows the divergence.
    shoot(fork, "fork.png", 110, keys=[pygame.K_f, pygame.K_6], select=7)


def model_exchange(url: str, size=(1280, 720)) -> None:
    """docs/model-exchange.png: a replay of a recorded model run (30 fish, the bundled server) at
    1280x720, fish 5 followed after its decision of t300: what its model saw and said, and G's
    answer to the same request sent again; docs/diff.png: that run against a fork of it."""
    import time

    cfg = load_config(seed=3, **{"fish.count": 30, "brain.kind": "llm",
                                 "brain.small.endpoints": [{"base_url": url, "model": "fish-mini"}]})
    path = Path(tempfile.mkdtemp()) / "model.db"
    live = LiveSession(cfg)
    rec = Recorder(path, cfg).attach(live)
    live.run(400)
    rec.close()
    live.close()
    scene = AquariumScene(ReplaySession(path))
    app = App([scene], size, offscreen=True)
    scene.seek(300)
    scene.selected = 5
    for _ in range(3):
        scene.step()
    scene.pacer.paused = True
    scene.ask_again()
    start = time.perf_counter()
    while not scene.why["again"].done() and time.perf_counter() - start < 10:
        app.frame(1 / 30)
    app.frame(0.0)
    app.screenshot(HERE / "model-exchange.png")
    app.close()
    print("wrote", HERE / "model-exchange.png")
    # docs/diff.png: the run against a fork that gives fish 5 "rest 10" at t300 (replies reused)
    from mirofish.session import fork
    from mirofish.session.diff import diff_runs
    from mirofish.ui.figures import diff_png

    fork(path, 300, 5, "rest 10", 100, path.with_name("fork.db"))
    diff_png(diff_runs(path, path.with_name("fork.db")), HERE / "diff.png")
    print("wrote", HERE / "diff.png")


def referential() -> None:
    from mirofish.scenes.referential.experiment import Experiment
    from mirofish.scenes.referential.game import GameConfig
    from mirofish.ui.scenes.referential import ReferentialScene

    scene = ReferentialScene(Experiment(GameConfig(seed=2, rounds=400)))
    scene.pacer.speed = 16
    shoot(scene, "referential.png", 180)
    scene = ReferentialScene(Experiment(GameConfig(seed=11, rounds=400, templates=True)))
    scene.pacer.speed = 16
    shoot(scene, "referential-templates.png", 360, size=(1280, 720))


def negotiation() -> None:
    from mirofish.ui.scenes.negotiation import NegotiationScene

    scene = NegotiationScene(seed=1)
    scene.pacer.speed = 8
    shoot(scene, "negotiation.png", 200)


def handoff() -> None:
    """docs/handoff.png: the report chain (Argent layers 1+2), mid-way through a task."""
    from mirofish.ui.scenes.handoff import HandoffScene

    scene = HandoffScene(seed=1, layers="L1+2")
    scene.pacer.speed = 8
    shoot(scene, "handoff.png", 260, size=(1280, 720))


def places_and_reef(size=(1280, 720)) -> None:
    """docs/places.png: the default tank with four remembered places per fish (revisit 12) at
    t3835, fish 5 followed, its places ringed; docs/reef.png: assets/reefs/ring.toml's map at t199."""
    from mirofish.reef.spec import load_reef
    from mirofish.ui.scenes.reef import ReefScene

    scene = AquariumScene.live(load_config(**{"fish.places": 4, "brain.planner.revisit": 12.0}))
    app = App([scene], size, offscreen=True)
    scene.pacer.paused = True
    for _ in range(3835):
        scene.step()
    scene.selected = 5
    app.frame(0.0)
    app.screenshot(HERE / "places.png")
    app.close()
    reef = ReefScene(load_reef(HERE.parent / "assets" / "reefs" / "ring.toml"))
    app = App([reef], size, offscreen=True)
    reef.pacer.paused = True
    for _ in range(199):
        reef.step()
    app.frame(0.0)
    app.screenshot(HERE / "reef.png")
    app.close()
    print("wrote", HERE / "places.png", HERE / "reef.png")


SIZES = [(1000, 600), (1024, 600), (1280, 720), (1920, 1080), (2560, 1440), (3840, 2160)]


def camera_pictures() -> None:
    """docs/window-camera-1840x960.png (the default window on a 1920×1080 screen),
    window-whole-1920x1080.png (X: the whole tank) and window-camera-1024x600.png: the schooling
    demo (seed 1) at t240, the camera on its largest school at 20 px a cell, the minimap."""
    from mirofish.ui.app import default_size

    for name, size, keys in (("window-camera-1840x960.png", default_size((1920, 1080)), ()),
                             ("window-whole-1920x1080.png", (1920, 1080), (pygame.K_x,)),
                             ("window-camera-1024x600.png", (1024, 600), ())):
        scene = AquariumScene.live(load_config(preset="schooling-demo", seed=1, **{"engine.speed": 1.0}))
        scene.pacer.paused = True
        while scene.session.world.tick < 240:
            scene.step()
        shoot(scene, name, 20, keys=keys, size=size)


def first_and_past(size=(1280, 720)) -> None:
    """docs/first.png: what ``python run.py`` opens (the default tank, seed 7) after 40 ticks
    (20 s at 1x); docs/window-past-1280x720.png: the same tank at t400 after a rock, a handful
    of food and a current east at t300, gone back into its recent past (t330); and
    docs/window-zoom-1280x720.png: zoomed in on a followed fish (2.6× the whole tank's 8 px a
    cell); the past is shown whole (X)."""
    scene = AquariumScene.live(load_config())
    app = App([scene], size, offscreen=True)
    scene.pacer.paused = True
    for _ in range(40):
        scene.step()
    scene.pacer.paused = False
    app.frame(0.0)
    app.screenshot(HERE / "first.png")
    print("wrote", HERE / "first.png")
    scene.pacer.paused = True
    for _ in range(260):
        scene.step()
    scene.intervene({"kind": "rock", "x": 48, "y": 26})
    scene.intervene({"kind": "food", "x": 60, "y": 20})
    scene.intervene({"kind": "current", "dir": "east", "ticks": 60})
    for _ in range(99):
        scene.step()
    scene.selected = 12
    scene.reset_zoom()  # from the whole tank (8 px a cell) 2.6× in, following the fish
    app.frame(0.0)
    scene.zoom_at(scene.rects["tank"].center, 2.6)
    scene.pane.centred = True
    scene.pacer.paused = True
    app.frame(1.0)  # (a second of the camera's glide to the fish, the tank waiting)
    app.screenshot(HERE / "window-zoom-1280x720.png")
    print("wrote", HERE / "window-zoom-1280x720.png")
    scene.reset_zoom()  # the whole tank: the rock, the food and the current's fish by the east glass
    scene.seek(330)
    scene.pacer.paused = True
    app.frame(1.0)
    app.screenshot(HERE / "window-past-1280x720.png")
    print("wrote", HERE / "window-past-1280x720.png")
    app.close()


def window_sizes(out_all: Path | None = None) -> None:
    """Every scene at the window sizes the layout is tested at; the 1280×720 ones (a
    laptop screen) are kept in docs/ as window-*-1280x720.png, the others go to ``out_all``."""
    from mirofish.scenes.referential.experiment import Experiment
    from mirofish.scenes.referential.game import GameConfig
    from mirofish.ui.scenes.negotiation import NegotiationScene
    from mirofish.ui.scenes.referential import ReferentialScene

    path = recorded_run(7, 900)
    for size in SIZES:
        tag = f"{size[0]}x{size[1]}"
        out = HERE if size == (1280, 720) else (out_all or Path(tempfile.mkdtemp()))
        live = AquariumScene.live(load_config(seed=1, preset="schooling-demo"))
        live.set_speed(16)
        shoot(live, f"window-live-{tag}.png", 40, size=size, out=out)
        follow = AquariumScene.live(load_config(seed=1))
        follow.set_speed(16)
        shoot(follow, f"window-why-{tag}.png", 40, keys=[pygame.K_i, pygame.K_SPACE], select=4, size=size, out=out)
        charts = AquariumScene(ReplaySession(path))
        charts.seek(600)
        charts.show_charts = True
        shoot(charts, f"window-replay-charts-{tag}.png", 2, size=size, out=out)
        fork = AquariumScene(ReplaySession(path))
        fork.seek(300)
        fork.set_speed(16)
        shoot(fork, f"window-fork-{tag}.png", 60, keys=[pygame.K_f, pygame.K_7], select=9, size=size, out=out)
        ref = ReferentialScene(Experiment(GameConfig(seed=2, rounds=400)))
        ref.pacer.speed = 16
        shoot(ref, f"window-referential-{tag}.png", 150, size=size, out=out)
        neg = NegotiationScene(seed=1)
        neg.pacer.speed = 8
        shoot(neg, f"window-negotiation-{tag}.png", 150, size=size, out=out)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--sizes"]:  # python docs/make_screenshots.py --sizes [DIR for the other sizes]
        window_sizes(Path(sys.argv[2]) if len(sys.argv) > 2 else None)
    elif sys.argv[1:2] == ["--first"]:  # python docs/make_screenshots.py --first
        first_and_past()
    elif sys.argv[1:2] == ["--scenes"]:  # python docs/make_screenshots.py --scenes (referential, report chain)
        referential()
        handoff()
    elif sys.argv[1:2] == ["--places-reef"]:  # python docs/make_screenshots.py --places-reef
        places_and_reef()
    elif sys.argv[1:2] == ["--camera"]:  # python docs/make_screenshots.py --camera
        camera_pictures()
    else:
        first_and_past()
        referential()
        negotiation()
        handoff()
        places_and_reef()
        camera_pictures()
        main()
        window_sizes()
