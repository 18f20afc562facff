#!/usr/bin/env python3
"""Regenerate the README's screenshots (offscreen, 1920×1080): python docs/make_screenshots.py"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ["SDL_VIDEODRIVER"] = "dummy"
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import pygame  # noqa: E402

from mirofish.config import load_config  # noqa: E402
from mirofish.engine import make_engine  # noqa: E402
from mirofish.observe.recording import Recorder  # noqa: E402
from mirofish.observe.replay import Player  # noqa: E402
from mirofish.ui.app import App  # noqa: E402
from mirofish.ui.aquarium import AquariumScene  # noqa: E402


def shoot(scene, name: str, frames: int, keys=(), select=None) -> None:
    app = App([scene], (1920, 1080), offscreen=True)
    if select is not None:
        scene.selected = select
    app.frame(0.0)
    for k in keys:
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=k, mod=0, unicode=""))
    app.run(frames=frames, fixed_dt=1 / 30)
    app.screenshot(HERE / name)
    app.close()
    print("wrote", HERE / name)


def main() -> None:
    demo = load_config(preset="schooling-demo", **{"engine.speed": 32.0})
    shoot(AquariumScene(demo), "live.png", 120, select=12)

    path = Path(tempfile.mkdtemp()) / "demo.db"
    cfg = load_config(seed=7)
    engine = make_engine(cfg)
    rec = Recorder(path, cfg).attach(engine)
    engine.run(2400)
    rec.close()

    replay = AquariumScene(player=Player(path))
    replay.seek(1500)
    shoot(replay, "replay.png", 20, keys=[pygame.K_SPACE], select=7)

    from mirofish.brains.testserver import TestServer

    with TestServer() as server:  # the model brain against the bundled scripted server
        cfg = load_config(**{"fish.count": 30, "engine.speed": 4.0, "brain.kind": "llm",
                             "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini"}]})
        scene = AquariumScene(cfg)
        app = App([scene], (1920, 1080), offscreen=True)
        scene.selected = 4
        app.run(frames=240, fixed_dt=1 / 30, wall_paced=True)
        app.screenshot(HERE / "model-brain.png")
        app.close()
        print("wrote", HERE / "model-brain.png")

    fork = AquariumScene(player=Player(path))
    fork.seek(1200)
    fork.set_speed(16)
    # Fish 7 turns back east at t1200 instead of going on; the timeline shows the divergence.
    shoot(fork, "fork.png", 110, keys=[pygame.K_f, pygame.K_4], select=7)


def referential() -> None:
    from mirofish.scenes.referential.experiment import Experiment
    from mirofish.scenes.referential.game import GameConfig
    from mirofish.scenes.referential.scene import ReferentialScene

    scene = ReferentialScene(Experiment(GameConfig(seed=2, rounds=400)))
    scene.pacer.speed = 16
    shoot(scene, "referential.png", 180)


def negotiation() -> None:
    from mirofish.scenes.negotiation.scene import NegotiationScene

    scene = NegotiationScene(seed=1)
    scene.pacer.speed = 8
    shoot(scene, "negotiation.png", 200)


if __name__ == "__main__":
    referential()
    negotiation()
    main()
