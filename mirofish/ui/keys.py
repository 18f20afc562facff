"""The keys: each binding carries its help line, and a scene's keys are one table from which
both what a key does and the help overlay (H) are made.

A table is a sequence of rows, in the order the help lists them:

* :class:`Binding` — ``keys`` (pygame key codes) and what they do, ``run(target, event)``
  (it may answer False: "not now", and the key goes on down the table), with the help's two
  columns, ``label`` (how it names the keys: "Tab / Left / Right") and ``text``; ``also``: keys
  that do the same without being named (Down and Up beside Left and Right); ``owner="app"``:
  a key of the window itself, which it takes only when the scene did not (S, Q);
* :class:`Line` — a help line that binds no key: what something on screen means, or what the
  mouse does.

The one event contract: every handler — a scene's ``handle_event``, the app's ``handle``,
a widget's ``handle`` — takes an event and returns whether it consumed it; what else it found
(a tick to seek to, a point clicked, a choice picked) goes to an attribute or a callback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pygame


@dataclass(frozen=True)
class Line:
    """A help line that binds no key."""

    label: str
    text: str


@dataclass(frozen=True)
class Binding:
    """Keys, what they do, and their help line."""

    label: str
    text: str
    keys: tuple[int, ...]
    run: Callable[[Any, Any], bool | None]
    also: tuple[int, ...] = ()
    owner: str = "scene"

    def binds(self, key: int) -> bool:
        return key in self.keys or key in self.also


Row = Line | Binding


def help_lines(table: Iterable[Row]) -> list[tuple[str, str]]:
    """The help overlay's lines of a table, in its order."""
    return [(row.label, row.text) for row in table]


def dispatch(table: Iterable[Row], target: Any, event: Any, owner: str = "scene") -> bool:
    """A key press to the first of ``owner``'s bindings in ``table`` that binds it and does
    not answer False; returns whether one took it."""
    if event.type != pygame.KEYDOWN:
        return False
    for row in table:
        if isinstance(row, Binding) and row.owner == owner and row.binds(event.key) \
                and row.run(target, event) is not False:
            return True
    return False


# ---------------------------------------------------------------- the run keys every scene shares

PLUS = (pygame.K_EQUALS, pygame.K_KP_PLUS)  # "+" on keyboards where it needs Shift, and the keypad's
MINUS = (pygame.K_KP_MINUS,)


def pacing(step: Callable[[Any], Any]) -> Callable[[Any, Any], bool]:
    """The run keys on ``scene.pacer``: Space pause/play, "." one step (``step(scene)``, and
    pause), +/- speed ×2 / ÷2 (¼× … 64×)."""

    def run(scene: Any, event: Any) -> bool:
        from ..pacing import clamp_speed

        pacer, key = scene.pacer, event.key
        if key == pygame.K_SPACE:
            pacer.paused = not pacer.paused
            pacer.restart()
        elif key == pygame.K_PERIOD:
            pacer.paused = True
            step(scene)
        elif key in (pygame.K_PLUS, *PLUS):
            pacer.speed = clamp_speed(pacer.speed * 2)
        elif key in (pygame.K_MINUS, *MINUS):
            pacer.speed = clamp_speed(pacer.speed / 2)
        else:
            return False
        return True

    return run


# ---------------------------------------------------------------- the window's own keys (ui/app.py)

NEXT_SCENE = Binding("S", "next scene", (pygame.K_s,), lambda app, e: app.next_scene(), owner="app")
QUIT = Binding("Q", "quit", (pygame.K_q,), lambda app, e: app.quit(), owner="app")
APP_KEYS: tuple[Row, ...] = (NEXT_SCENE, QUIT)


# ---------------------------------------------------------------- the camera over the tank (ui/camera.py)

# the aquarium's camera keys, on ``scene.toggle_camera()`` / ``scene.recentre()`` (ui/scenes/aquarium.py)
CAMERA_KEYS: tuple[Row, ...] = (
    Binding("wheel / drag / Z", "zoom at the cursor (the whole tank … 40 px a cell) / pan (or rest the mouse at "
            "the water's edge, or click the map) / back on the followed fish or the largest school",
            (pygame.K_z,), lambda s, e: s.recentre()),
    Binding("X", "camera: 20 px a cell (world.cell_px) following the followed fish, else the largest school / "
            "the whole tank", (pygame.K_x,), lambda s, e: s.toggle_camera()),
)


# ---------------------------------------------------------------- the alternate scenes' shared keys


def _help_key(scene: Any, event: Any) -> None:
    scene.show_help = not scene.show_help if event.key == pygame.K_h else False


def paced_keys(switchable: bool) -> tuple[Row, ...]:
    """The keys every alternate scene has (ui/scenes/base.PacedScene), after its own."""
    run = pacing(lambda scene: scene._step_now())
    return (Binding("Space / .", "pause or play / one step", (pygame.K_SPACE, pygame.K_PERIOD), run),
            Binding("+ / -", "faster / slower", (pygame.K_PLUS, pygame.K_MINUS), run, also=(*PLUS, *MINUS)),
            *((NEXT_SCENE,) if switchable else ()),
            Binding("H / Esc", "close this help", (pygame.K_h, pygame.K_ESCAPE), _help_key),
            QUIT)


# ---------------------------------------------------------------- how a help line names a key

NAMES = {"Space": pygame.K_SPACE, ".": pygame.K_PERIOD, ",": pygame.K_COMMA, "+": pygame.K_PLUS,
         "-": pygame.K_MINUS, "[": pygame.K_LEFTBRACKET, "]": pygame.K_RIGHTBRACKET, "Tab": pygame.K_TAB,
         "Esc": pygame.K_ESCAPE, "Enter": pygame.K_RETURN, "Left": pygame.K_LEFT, "Right": pygame.K_RIGHT,
         "Up": pygame.K_UP, "Down": pygame.K_DOWN,
         **{chr(c): getattr(pygame, f"K_{chr(c).lower()}") for c in range(ord("A"), ord("Z") + 1)},
         **{str(d): getattr(pygame, f"K_{d}") for d in range(10)}}


def named_keys(words: str) -> set[int]:
    """The keys ``words`` names ("Tab / Left / Right", "R / Shift+R", "U + arrow", "; N back to
    now"): each word that is a key's name (a capital letter, a digit, Space, Esc, Tab …, with
    or without Shift+); other words ("click", "arrow", "1-5") name none."""
    out = set()
    for word in words.replace(" / ", " ").split():
        word = word.strip(":;()").removeprefix("Shift+")
        if word in NAMES:
            out.add(NAMES[word])
    return out
