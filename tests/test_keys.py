"""Every key binding carries its help line, and every handler answers one contract: it takes
an event and returns whether it consumed it."""

import os
from types import SimpleNamespace

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame
import pytest

from mirofish.config import load_config
from mirofish.ui.app import App
from mirofish.ui.controls import aquarium_buttons
from mirofish.ui.keys import (
    APP_KEYS,
    NEXT_SCENE,
    QUIT,
    Binding,
    Line,
    dispatch,
    help_lines,
    named_keys,
    paced_keys,
)
from mirofish.ui.panels import Timeline
from mirofish.ui.scenes.aquarium import KEYS, AquariumScene
from mirofish.ui.scenes.base import PacedScene
from mirofish.ui.scenes.handoff import HandoffScene
from mirofish.ui.scenes.negotiation import NegotiationScene
from mirofish.ui.scenes.reef import ReefScene
from mirofish.ui.scenes.referential import ReferentialScene


def _paced(lines, switchable):
    """An alternate scene's whole table, as PacedScene.keys makes it."""
    return PacedScene.keys.fget(SimpleNamespace(help_lines=lines, switchable=switchable))


TABLES = {
    "aquarium": KEYS,
    "window": APP_KEYS,
    "referential": _paced(ReferentialScene.help_lines, True),
    "referential replay": _paced((*ReferentialScene.REPLAY_HELP, *ReferentialScene.help_lines), False),
    "negotiation": _paced(NegotiationScene.help_lines, True),
    "negotiation replay": _paced((*NegotiationScene.REPLAY_HELP, *NegotiationScene.help_lines), False),
    "handoff": _paced(HandoffScene.help_lines, True),
    "reef": _paced(ReefScene.help_lines, ReefScene.switchable),
}


def problems(table) -> list[str]:
    """What is wrong with a table of keys: a binding without its help line (no label or text,
    or a key its line does not name), a line that names a key no binding of the table has."""
    out = []
    bound = {k for row in table if isinstance(row, Binding) for k in (*row.keys, *row.also)}
    for row in table:
        if not row.label.strip() or not row.text.strip():
            out.append(f"{row!r}: no help line")
        if isinstance(row, Binding):
            if not row.keys:
                out.append(f"{row.label!r}: binds no key")
            unnamed = set(row.keys) - named_keys(f"{row.label} {row.text}")
            if unnamed:
                out.append(f"{row.label!r}: its line does not name {sorted(pygame.key.name(k) for k in unnamed)}")
        unbound = named_keys(row.label) - bound
        if unbound:
            out.append(f"{row.label!r}: names {sorted(pygame.key.name(k) for k in unbound)}, which nothing binds")
    return out


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_binding_has_its_help_line_and_every_line_names_bound_keys(name):
    assert problems(TABLES[name]) == []


def test_the_check_fails_on_a_binding_without_its_line_or_a_line_naming_an_unbound_key():
    run = lambda s, e: None
    assert problems((Binding("X", "does x", (pygame.K_y,), run),)) == ["'X': its line does not name ['y']",
                                                                       "'X': names ['x'], which nothing binds"]
    assert problems((Line("P / Shift+W", "pans"), Binding("", "", (pygame.K_p,), run)))[0].startswith(
        "'P / Shift+W': names ['w']")
    missing = problems((Binding("N", "", (pygame.K_n,), run),))
    assert len(missing) == 1 and missing[0].endswith(": no help line")
    assert problems((Binding("drag", "go back; N to now", (pygame.K_n,), run),)) == []  # named in the text


def test_the_help_overlays_are_the_tables():
    """The aquarium's help lists its table; each alternate scene's, its lines then the shared
    keys; the window's own keys (S, Q) are listed where it offers them."""
    assert help_lines(KEYS)[0] == ("Space", "pause / play") and len(help_lines(KEYS)) == 30
    assert NEXT_SCENE in KEYS and QUIT in KEYS
    assert NEXT_SCENE in paced_keys(True) and NEXT_SCENE not in paced_keys(False) and QUIT in paced_keys(False)
    scene = NegotiationScene(seed=1)
    assert help_lines(scene.keys)[: len(scene.help_lines)] == help_lines(scene.help_lines)
    assert help_lines(scene.keys)[-1] == ("Q", "quit")
    scene.close()


def test_the_aquarium_buttons_name_bound_keys():
    scene = AquariumScene.live(load_config(seed=2, **{"fish.count": 20}))
    app = App([scene], (1600, 900), offscreen=True)
    app.frame(0.0)
    scene.selected = 3
    bound = {k for row in KEYS if isinstance(row, Binding) for k in (*row.keys, *row.also)}
    hints = {b.key_hint for b in aquarium_buttons(scene) if b.key_hint}
    assert {"Space", "F", "I", "Shift+R"} <= hints
    for hint in hints:
        assert named_keys(hint) and named_keys(hint) <= bound, hint
    app.close()


def _key(k, uni=""):
    return pygame.event.Event(pygame.KEYDOWN, key=k, mod=0, unicode=uni)


def test_every_handler_returns_whether_it_consumed_the_event():
    scene = AquariumScene.live(load_config(seed=2, **{"fish.count": 20}))
    app = App([scene, HandoffScene()], (1280, 720), offscreen=True)
    app.frame(0.0)
    nothing = pygame.event.Event(pygame.MOUSEMOTION, pos=(-5, -5), rel=(0, 0), buttons=(0, 0, 0))
    assert scene.handle_event(nothing) is False and scene.handle_event(_key(pygame.K_F5)) is False
    assert scene.handle_event(_key(pygame.K_q)) is False  # the window's key: the scene leaves it
    paused = scene.pacer.paused
    assert scene.handle_event(_key(pygame.K_SPACE)) is True and scene.pacer.paused is not paused
    scene.typing = ""
    assert scene.handle_event(_key(pygame.K_q, "q")) is True and scene.typing == "q"
    assert app.handle(_key(pygame.K_s, "s")) is True and app.scene is scene and app.running  # text, not S
    scene.typing = None
    assert app.handle(_key(pygame.K_s)) is True and app.scene is not scene  # not taken: the next scene
    assert app.scene.handle_event(_key(pygame.K_q)) is False
    assert app.handle(_key(pygame.K_q)) is True and not app.running
    app.close()


def test_the_parts_answer_a_bool_and_leave_what_they_found_in_an_attribute_or_a_callback():
    bar = Timeline(0, 100)
    bar.rect = pygame.Rect(0, 0, 1000, 64)
    press = pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(bar.bar.centerx, bar.bar.centery))
    assert bar.handle(press) is True and bar.seek_to == 50 and bar.dragging
    assert bar.handle(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=(bar.bar.right, 0))) is True
    assert bar.seek_to == 100 and not bar.dragging
    assert bar.handle(pygame.event.Event(pygame.MOUSEMOTION, pos=(5, 5), rel=(0, 0), buttons=(0, 0, 0))) is False

    nothing = pygame.event.Event(pygame.MOUSEMOTION, pos=(1, 1), rel=(0, 0), buttons=(0, 0, 0))
    scene = AquariumScene.live(load_config(seed=2, **{"fish.count": 20}))
    app = App([scene], (1280, 720), offscreen=True)
    app.frame(0.0)
    x, y = scene.renderer.to_px(scene.view.x[7], scene.view.y[7])
    assert scene.pane.handle(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(int(x), int(y)))) is True
    assert scene.pane.clicked == (int(x), int(y))
    assert scene.pane.handle(pygame.event.Event(pygame.MOUSEBUTTONUP, button=1, pos=(int(x), int(y)))) is True
    assert scene.pane.clicked is None  # the follow tool follows on the press
    picked = []
    scene.pickers.on_pick = lambda what, choice: picked.append((what, choice))
    assert scene.pickers.handle_key(_key(pygame.K_1)) is False  # nothing open
    scene.pickers.current = True
    assert scene.pickers.handle_key(_key(pygame.K_UP)) is True and picked == [("current", "north")]
    scene.pickers.open_fork()
    assert scene.pickers.handle_overlay(nothing) is False  # the fork picker takes clicks and keys
    assert scene.pickers.handle_key(_key(pygame.K_2)) is True and picked[-1] == ("fork", "school 120")
    assert scene.asking.handle(_key(pygame.K_a, "a")) is False  # not typing
    scene.asking.typing = "why"
    assert scene.asking.handle(_key(pygame.K_RETURN)) is True and scene.asking.question == "why"
    assert scene.controls.handle(nothing) is False
    assert all(b.handle(nothing) is False for b in scene.buttons)
    app.close()


def test_a_key_the_scene_does_not_take_goes_on_down_its_table():
    """A binding that answers False ("not now") leaves the key to the next row that binds it
    (the reef's Esc goes back to the map, and closes the help when it is open)."""
    seen = []
    table = (Binding("Esc", "first", (pygame.K_ESCAPE,), lambda s, e: seen.append("first") or False),
             Binding("H / Esc", "second", (pygame.K_h, pygame.K_ESCAPE), lambda s, e: seen.append("second")),
             QUIT)
    assert dispatch(table, None, _key(pygame.K_ESCAPE)) is True and seen == ["first", "second"]
    assert dispatch(table, None, _key(pygame.K_q)) is False  # the window's: not the scene's to run


def test_q_while_the_recordings_list_is_open_closes_the_list(tmp_path):
    """The list of recordings takes every key, as the fork and current pickers do: Q and S
    close it (any other key cancels it) instead of quitting or switching scene behind it."""
    scene = AquariumScene.live(load_config(seed=2, **{"fish.count": 20}))
    app = App([scene, HandoffScene()], (1280, 720), offscreen=True)
    app.frame(0.0)
    (tmp_path / "a.db").write_bytes(b"")
    scene.saves = tmp_path
    scene.open_picker()
    assert scene.picking_file
    assert app.handle(_key(pygame.K_q)) is True and app.running and scene.picking_file is None
    app.close()


@pytest.mark.parametrize("size", [(1024, 600), (1280, 720), (1920, 1080)])
def test_the_help_shows_every_key_at_every_window_size(size):
    """30 lines do not fit one column at 1024×600: the overlay takes two, and none is cut off."""
    from mirofish.ui.panels import draw_help

    pygame.font.init()
    assert draw_help(pygame.Surface(size), help_lines(KEYS)) == len(KEYS)
