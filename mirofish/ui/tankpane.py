"""The water as the aquarium window shows it, through its camera (ui/camera.py: 20 px a cell
around the followed fish or the largest school, or the whole tank; the wheel zooms, a drag or
the mouse resting at the edge pans), a fork's ghost, the heat map and the ASCII view over it —
and what the mouse does in it (a press on a fish follows it, a drag pans, a click with a hand
tool intervenes)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pygame

from ..observe import ascii as ascii_view
from ..observe.groups import groups_now
from ..session import Session
from ..snapshot import TankView
from . import theme
from .camera import Camera
from .minimap import Minimap
from .panels import group_mark
from .tank import TankRenderer, moving_xy

GROUP_COLOURS = ((90, 180, 255), (255, 160, 64), (120, 220, 120), (230, 110, 200), (250, 230, 90),
                 (160, 140, 255), (90, 220, 210), (255, 110, 110))  # a group without a colour of its own


def group_colours(cfg: Any) -> list[tuple[int, int, int]]:
    """Each group's ring colour (its ``colour``, else the next of :data:`GROUP_COLOURS`), the
    fish no group takes (``tank``) last, in grey."""
    out = []
    for g, grp in enumerate(cfg.fish.groups):
        c = grp.colour
        out.append((int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)) if c else GROUP_COLOURS[g % len(GROUP_COLOURS)])
    return out + [theme.DIM]


class TankPane:
    """The tank's pane: a renderer, the camera over the tank (ui/camera.py) and the click tool
    of one window. Everything drawn in tank cells goes through the camera: the renderer is
    placed where it says each frame, and a click asks the renderer of the frame on screen."""

    TOOLS = ("follow", "food", "rock", "clear", "add", "remove")
    TOOL_LABELS: ClassVar[dict[str, str]] = {"follow": "Click: follow", "food": "Click: drop food",
                                             "rock": "Click: place rock", "clear": "Click: clear rock",
                                             "add": "Click: add a fish", "remove": "Click: take out"}

    def __init__(self, terrain: list[str]):
        self.renderer = TankRenderer(terrain)
        self.camera = Camera((self.renderer.w, self.renderer.h))
        self.minimap = Minimap()
        self.tool = "follow"  # what a click in the tank does: follow, food, rock, clear, add, remove
        # a mouse press in the tank: (where, the last point the drag panned from, moved, button, on a fish)
        self._drag: tuple | None = None
        self.clicked: tuple[int, int] | None = None  # the point the last event clicked, for the follow or hand tool
        self.hover: tuple[int, int] | None = None  # the mouse over the window (None: it left), for the edge scroll
        self._dt = 0.0  # time since the last frame drawn (the camera glides by it)
        self._edge = True  # the edge scroll may move the view (not under an open overlay)
        self._view: TankView | None = None  # the view drawn last (what a press finds under the mouse)
        self._followed: int | None = None  # the fish followed at the last frame (another one: the camera follows it)
        self._terrain_key: Any = None
        self._sight_of: Any = None  # the config whose view radii the renderer holds
        self._ascii: tuple[Any, pygame.Surface] | None = None

    def new_tank(self, terrain: list[str]) -> None:
        """Another session is shown: its terrain (the camera stays)."""
        self.renderer = TankRenderer(terrain)
        self.camera.set_grid((self.renderer.w, self.renderer.h))
        self.minimap.forget_colours()

    def release(self) -> None:
        """The window closes: its drawing caches go (the camera stays)."""
        self.renderer.release()
        self.minimap.forget_colours()
        self.minimap._bg = None
        self._ascii = None

    @property
    def centred(self) -> bool:
        """Does the camera keep to what matters (the followed fish, else the largest school)?
        False once a drag, the edge or the minimap moved it; a fish followed sets it again."""
        return self.camera.following

    @centred.setter
    def centred(self, value: bool) -> None:
        self.camera.following = bool(value)

    # ------------------------------------------------------------ the mouse

    def track(self, event: Any) -> None:
        """Every mouse motion of the window, whoever takes it: where the mouse rests (the edge scroll)."""
        if event.type == pygame.MOUSEMOTION:
            self.hover = event.pos
        elif event.type in (getattr(pygame, "WINDOWLEAVE", -1), getattr(pygame, "WINDOWFOCUSLOST", -1)):
            self.hover = None

    def handle(self, event: Any) -> bool:
        """Whether the event is the pane's; :attr:`clicked` is then the point a click asks the
        scene's follow or hand tool about (None: a press that only starts a drag, a drag).
        With the follow tool a press on a fish follows it at once; a press on the water that
        ends where it began is a click (it stops following), one that moves pans the view."""
        self.clicked = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button in (1, 2, 3) \
                and self.renderer.rect.collidepoint(event.pos):
            on_fish = (event.button == 1 and self.tool == "follow" and self._view is not None
                       and self.renderer.fish_at(event.pos, self._view) is not None)
            self._drag = (event.pos, event.pos, False, event.button, on_fish)
            self.clicked = event.pos if on_fish else None
            return True
        if event.type == pygame.MOUSEMOTION and self._drag is not None:
            start, last, moved, button, on_fish = self._drag
            if moved or abs(event.pos[0] - start[0]) + abs(event.pos[1] - start[1]) > 4:  # a drag pans
                self.camera.pan_px(event.pos[0] - last[0], event.pos[1] - last[1])
                self._drag = (start, event.pos, True, button, on_fish)
            return True
        if event.type == pygame.MOUSEBUTTONUP and self._drag is not None:
            start, _, moved, button, on_fish = self._drag
            self._drag = None
            self.clicked = start if not moved and button == 1 and not on_fish else None
            return True
        return False

    def cycle_tool(self) -> str:
        self.tool = self.TOOLS[(self.TOOLS.index(self.tool) + 1) % len(self.TOOLS)]
        return f"{self.TOOL_LABELS[self.tool].lower()} (D: next tool)"

    def zoom_at(self, pos: tuple[int, int], factor: float, tank: pygame.Rect | None = None) -> None:
        """Zoom by ``factor`` at ``pos`` (the wheel: the whole tank … 40 px a cell)."""
        if tank is not None:
            self.camera.place(tank)
        self.camera.zoom_at(pos, factor)

    def reset_zoom(self) -> None:
        """The whole tank."""
        self.camera.whole()

    def advance(self, dt: float, edge: bool = True) -> None:
        """Time passes (the scene's update): the camera glides by it at the next frame; ``edge``:
        whether the mouse resting at the water's edge may scroll (not under an open overlay)."""
        self._dt += dt
        self._edge = edge

    # ------------------------------------------------------------ drawing

    def target(self, view: TankView, prev: TankView | None, alpha: float, selected: int | None,
               members: Any) -> tuple[float, float] | None:
        """What matters, in cells: the followed fish (where it is drawn, between ticks), else the
        centre of the largest school (``members``: the metrics' ``school_members``), else None."""
        if selected is not None and 0 <= selected < len(view.x) and view.in_water(selected):
            x, y = moving_xy(view, prev, alpha)
            return float(x[selected]), float(y[selected])
        if members is not None and len(members):
            ids = np.asarray(members, np.int64)
            ids = ids[ids < len(view.x)]
            if ids.size:
                return float(view.x[ids].mean()), float(view.y[ids].mean())
        return None

    def draw(self, surf: pygame.Surface, rect: pygame.Rect, shown: Session, view: TankView, prev: TankView | None,
             alpha: float, selected: int | None, show_fov: bool, heat: Any, school: Any = None) -> None:
        """The water where the camera looks (gliding to the followed fish or the largest school,
        or scrolled by the mouse resting at its edge), the ghost of a fork's original, the
        largest school's rings, a mixed tank's group rings, the followed fish's places and the
        fish under the mouse. ``school``: the largest school's fish as of the drawn tick
        (observe/school_now.py; None: the metrics' last sample's)."""
        self._view = view
        key = shown.terrain_key()
        if key != self._terrain_key:
            self._terrain_key = key
            self.renderer.set_terrain(shown.terrain())
        if shown.cfg is not self._sight_of:  # how far its fish see (the followed fish's square of view)
            self._sight_of = shown.cfg
            self.renderer.radius, self.renderer.sight = shown.cfg.perception.radius, shown.cfg.view_radii()
            hexes = shown.cfg.world.grid == "hex"  # (mirofish/grid.py: its cells drawn as hexes)
            if hexes != self.renderer.hexes:
                self.renderer.hexes = hexes
                self.renderer.release()
        members = getattr(shown.metrics, "school_members", None) if school is None else school
        cam = self.camera
        cam.place(rect)
        if selected != self._followed:  # a fish followed (a click, Tab, a mark): the camera goes to it
            self._followed = selected
            if selected is not None:
                cam.following = True
        dt, self._dt = self._dt, 0.0
        cam.edge_scroll(self.hover if self._edge and self._drag is None else None, dt)
        cam.update(dt, self.target(view, prev, alpha, selected, members))
        self.renderer.place(rect, cam.cell, cam.origin)
        self.renderer.draw(surf, view, prev, alpha, selected, show_fov, heat, shown.cfg.metrics.hotspot_cell,
                           shown.ghost_view())
        if view.bitten is not None and view.bitten[0].size:
            self._draw_bitten(surf, view.bitten)
        self._draw_school(surf, members)
        if shown.cfg.fish.groups:
            self._draw_groups(surf, shown.cfg, view, prev, alpha, shown.metrics)
        places = view.places
        if selected is not None and places is not None and selected < len(places.meals):
            self._draw_places(surf, places, selected)
        self._draw_hover(surf, view, selected)

    def draw_minimap(self, surf: pygame.Surface, box: pygame.Rect, shown: Session, view: TankView,
                     selected: int | None, school: Any = None) -> None:
        """The whole tank in the minimap's box, with the camera's rectangle (ui/minimap.py)."""
        self.minimap.draw(surf, box, self.renderer.terrain, self._terrain_key, view, self.camera, selected,
                          getattr(shown.metrics, "school_members", None) if school is None else school)

    def _draw_hover(self, surf: pygame.Surface, view: TankView, selected: int | None) -> None:
        """A thin ring round the fish a click would follow (the follow tool, the mouse resting on
        the water)."""
        r = self.renderer
        if self.tool != "follow" or self.hover is None or self._drag is not None or not r.rect.collidepoint(self.hover):
            return
        fish = r.fish_at(self.hover, view)
        if fish is None or fish == selected or r.drawn_xy is None:
            return
        px, py = r.to_px(float(r.drawn_xy[0][fish]), float(r.drawn_xy[1][fish]))
        clip = surf.get_clip()
        surf.set_clip(r.rect)
        pygame.draw.circle(surf, theme.INK, (int(px), int(py)), max(5, int(r.cell * 0.85)), 1)
        surf.set_clip(clip)

    def _draw_groups(self, surf: pygame.Surface, cfg: Any, view: TankView, prev: TankView | None,
                     alpha: float, metrics: Any) -> None:
        """A mixed tank: its group's mark in its group's colour around every fish (up to 3,000
        fish) — a ring, or a diamond round a hunter's (docs/species.md), or the group's
        ``shape``; the groups' figures are in the side panel's legend (:func:`group_lines`)."""
        colours = group_colours(cfg)
        marks = [g.mark for g in cfg.fish.groups] + ["ring"]  # (GroupConfig.shape)
        of = np.asarray(cfg.fish.group_of(), np.int64)[: len(view.x)]
        clip = surf.get_clip()
        surf.set_clip(self.renderer.rect)
        if len(view.x) <= 3000:
            x, y = moving_xy(view, prev, alpha)  # where the fish are drawn
            px, py = self.renderer.to_px(x, y)
            r = max(5, int(self.renderer.cell * 0.95))
            width = 1 if self.renderer.cell < 14 else 2
            for i in range(len(of)):
                if view.in_water(i):
                    g, cx, cy = int(of[i]), int(px[i]), int(py[i])
                    group_mark(surf, marks[g], colours[g], cx, cy, r, width)
        surf.set_clip(clip)  # (the groups' figures are in the side panel's legend: nothing over the water)

    def _draw_school(self, surf: pygame.Surface, members: Any) -> None:
        """The HUD's "largest school" — moving and aligned (observe/metrics.py SCHOOL_ALIGNED) —
        ringed in the tank where its fish are drawn, so the number points at fish: ``members``
        are of the drawn tick (observe/school_now.py), as is the HUD's number."""
        drawn = self.renderer.drawn_xy
        if members is None or len(members) == 0 or drawn is None:
            return
        ids = np.asarray(members, np.int64)
        ids = ids[ids < len(drawn[0])]
        clip = surf.get_clip()
        surf.set_clip(self.renderer.rect)
        px, py = self.renderer.to_px(drawn[0][ids], drawn[1][ids])
        r = max(4, int(self.renderer.cell * 0.8))
        for x, y in zip(np.atleast_1d(px).tolist(), np.atleast_1d(py).tolist()):
            pygame.draw.circle(surf, theme.GOOD, (int(x), int(y)), r, 1)
        surf.set_clip(clip)

    def _draw_bitten(self, surf: pygame.Surface, bitten: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Plants grazed (GroupConfig.eats_plants): each bitten plant cell tinted brown, the more
        the fewer bites it has left."""
        clip = surf.get_clip()
        surf.set_clip(self.renderer.rect)
        c = self.renderer.cell
        px, py = self.renderer.to_px(bitten[0], bitten[1])
        side = max(1, int(round(c)))
        wash = pygame.Surface((side, side), pygame.SRCALPHA)
        for x, y, left in zip(px.tolist(), py.tolist(), bitten[2].tolist()):
            wash.fill((*theme.GRAZED, int(230 * (1 - left))))
            surf.blit(wash, (int(x - c / 2), int(y - c / 2)))
        surf.set_clip(clip)

    def _draw_places(self, surf: pygame.Surface, places: Any, fish: int) -> None:
        """The followed fish's remembered places: a ring per place (thicker for more meals) and
        its slot number, clipped to the water."""
        clip = surf.get_clip()
        surf.set_clip(self.renderer.rect)
        r = max(4, int(self.renderer.cell * 1.6))
        for j in np.flatnonzero(places.meals_at[fish] > 0).tolist():
            px, py = self.renderer.to_px(int(places.x[fish, j]), int(places.y[fish, j]))
            width = 1 + min(3, int(places.meals_at[fish, j]) // 2)
            pygame.draw.circle(surf, theme.GOOD, (int(px), int(py)), r, width)
            surf.blit(theme.text(f"#{j}", 13, theme.GOOD), (int(px) + r - 2, int(py) - r - 4))
        surf.set_clip(clip)

    def draw_ascii(self, surf: pygame.Surface, rect: pygame.Rect, shown: Session, mode: str) -> None:
        """The terminal view's characters over the tank (rendered once per tick)."""
        key = (shown.tick, rect.size, mode)
        if self._ascii is None or self._ascii[0] != key:
            lines = ascii_view.render(shown.snapshot()).split("\n")
            size = max(8, min(16, (rect.h - 8) // max(1, len(lines))))
            font = theme.mono(size)
            text = pygame.Surface((max(font.size(line)[0] for line in lines) + 12, 8 + len(lines) * size),
                                  pygame.SRCALPHA)
            for k, line in enumerate(lines):
                text.blit(font.render(line, False, theme.GOOD), (6, 4 + k * size))
            if text.get_width() > rect.w or text.get_height() > rect.h:  # a small window: all of it, smaller
                f = min(rect.w / text.get_width(), rect.h / text.get_height())
                text = pygame.transform.smoothscale(text, (int(text.get_width() * f), int(text.get_height() * f)))
            layer = pygame.Surface(rect.size, pygame.SRCALPHA)
            layer.fill(theme.SHADE)
            layer.blit(text, (0, 0))
            self._ascii = (key, layer)
        surf.blit(self._ascii[1], rect)


def group_lines(cfg: Any, view: TankView, metrics: Any) -> list[tuple[tuple[int, int, int], str, str]]:
    """A mixed tank's groups for the side panel's legend: (mark colour, "alpha 30 fish, energy 74,
    schooling 0.41", mark) each, as of the tick on screen (:func:`~mirofish.observe.groups.groups_now`)."""
    if not cfg.fish.groups:
        return []
    colours = group_colours(cfg)
    marks = [g.mark for g in cfg.fish.groups] + ["ring"]
    return [(colours[g], f"{name} {n} fish, energy {energy:.0f}, schooling {school:.2f}", marks[g])
            for g, name, n, energy, school in groups_now(cfg, view, metrics)]
