"""Shared helpers: small hand-made tanks for exact scenarios."""

from __future__ import annotations

import numpy as np
import pytest

from mirofish.config import Config, load_config
from mirofish.world import World


def small_config(fish: int, width: int = 12, height: int = 12, **dotted) -> Config:
    """An empty tank (no plants, no rocks, no food spawning) with ``fish`` fish."""
    base = {"fish.count": fish, "world.width": width, "world.height": height, "world.plant_patches": 0,
            "world.rocks": 0, "food.spawn_rate": 0.0}
    base.update(dotted)
    return load_config(**base)


def arrange(world: World, fish_xy=(), food_xy=(), energy=None, age=None) -> World:
    """Put fish and food exactly where a test wants them; other state is left as generated."""
    s, w = world.school, world.water
    world.occupant[:] = -1
    for i, (x, y) in enumerate(fish_xy):
        s.cell[i] = w.cell(x, y)
    world.occupant[s.cell] = s.ids
    w.food_born[:] = -1
    for x, y in food_xy:
        w.food_born[w.cell(x, y)] = world.tick
    if energy is not None:
        s.energy[:] = energy
    if age is not None:
        s.age[:] = age
    world.look()
    return world


def set_intents(world: World, actions) -> None:
    world.apply_decisions(np.arange(len(actions)), np.array([int(a) for a in actions], np.int8))


@pytest.fixture
def default_config() -> Config:
    return load_config()


def record_run(path, seed: int, ticks: int, **dotted):
    """A recording of ``ticks`` ticks of the default tank (with ``dotted`` settings) with ``seed`` at ``path``."""
    from mirofish.config import load_config
    from mirofish.session import LiveSession

    live = LiveSession(load_config(seed=seed, **dotted))
    live.start_recording(path)
    live.run(ticks)
    live.close()
    return path


def sqlite_file(path, *statements: str):
    """An SQLite file at ``path`` after ``statements`` (a foreign database, a damaged glossary …)."""
    import sqlite3

    db = sqlite3.connect(path)
    for sql in statements:
        db.execute(sql)
    db.commit()
    db.close()
    return path


# ---- a real headless Chromium for the web player's tests (tests/test_web_*.py): they fail, not
# skip, without one (.ci/run installs Debian's chromium where it is missing)
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError("no Chromium on this machine: apt-get install chromium (.ci/run does)")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        yield b
        b.close()


def refused(capsys, argv, *words):
    """``argv`` (the CLI's ``main``) exits 2 with one line on stderr holding ``words``; returns the
    line (a line not starting "mirofish", such as a progress bar, is not counted)."""
    from mirofish.cli import main

    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("mirofish")]
    assert len(err) == 1 and all(w in err[0] for w in words), err
    return err[0]


def cli_recording(tmp_path_factory, folder: str, ticks: int):
    """A default tank's recording of ``ticks`` ticks, made as a user makes one (``live --headless
    --record``), in a new folder ``folder``."""
    from mirofish.cli import main

    path = tmp_path_factory.mktemp(folder) / "in.mirofish"
    assert main(["live", "--headless", "--ticks", str(ticks), "--record", str(path)]) == 0
    return path


def step_in_wall_time(session, ticks: int, pause: float) -> None:
    """Step ``session`` ``ticks`` times, ``pause`` seconds apart (a realtime model run: its server's
    answers and failures happen in wall time, as in the window), then close it."""
    import time

    try:
        for _ in range(ticks):
            session.step()
            time.sleep(pause)
    finally:
        session.close()
