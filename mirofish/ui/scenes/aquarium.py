"""The aquarium window: live tank, replay with a timeline, and forks with a ghost of the original.

The scene is made of parts, each drawing itself and taking the events meant for it: the
navigator (:mod:`mirofish.session.navigator`: which tank is shown, and the moves between
them), the tank pane (ui/tankpane.py), the controls bar (ui/controls.py), the pickers
(ui/pickers.py), the follow and tune panels (ui/panels.py, ui/tune.py), the ask box
(ui/ask.py), the HUD, timeline and charts. It reads snapshots from the session shown and
changes the tank only through the navigator's moves; every key, with its help line, is in
the table ``KEYS`` (ui/keys.py), which the help overlay (H) lists.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pygame

from ...actions import Action
from ...observe.recording import DIVERGENCE_COLUMNS
from ...session import LiveSession, Session
from .. import theme
from ..ask import AskBox
from ..charts import draw_charts
from ..controls import ControlsBar, aquarium_buttons
from ..keys import CAMERA_KEYS, MINUS, NEXT_SCENE, PLUS, QUIT, Binding, Line, Row, dispatch, help_lines, pacing
from ..layout import CELL_PX, aquarium_layout
from ..panels import FollowPanel, draw_footer, draw_help
from ..pickers import Pickers
from ..shown import ShownTank
from ..tankpane import group_colours, group_lines
from ..tune import draw_tune_panel

SPARE = 8  # room for fish added by a click in a live tank (fish.spare)
_CELLS = 1 + DIVERGENCE_COLUMNS.index("cells_differ")  # columns of ForkSession.curve (tick first)


class AquariumScene(ShownTank):
    """One scene, three modes: ``live``, ``replay`` and ``fork`` (:attr:`mode`); the tank as of
    the tick on screen and the commands that move it are :class:`~mirofish.ui.shown.ShownTank`'s."""

    title = "Aquarium"
    wants_quit = False  # the app closes the window when a scene sets this

    def __init__(self, session: Session):
        super().__init__(session)
        self.follow, self.controls = FollowPanel(), ControlsBar()
        self.pickers = Pickers(self.pacer, self._picked)
        self.asking = AskBox()  # "why?", a question typed to the fish, its request asked again
        self.show_fov, self.show_heat, self.show_ascii, self.show_help = True, False, False, False
        self.show_charts = False
        self.folded = False  # P, the Fold panels button / the « panels tab: every part but the footer away
        self.unfold_tab = pygame.Rect(0, 0, 0, 0)  # where the « panels tab is drawn while folded
        self._cell_set = False  # world.cell_px given to the camera at the first frame
        self._esc_at, self._t, self._alpha = -10.0, 0.0, 1.0
        self.rects: dict[str, pygame.Rect] = {}

    @classmethod
    def live(cls, cfg, cache=None, past: bool = True, registry=None) -> AquariumScene:
        """A live tank from ``cfg``, in realtime (the window's pace), keeping its recent past
        (``record.history_minutes``) for the timeline, with room for ``SPARE`` fish added by
        a click (``fish.spare``: the tank and its state hash are those of the same config
        without it until one is added); ``cache``: a model brain's reply cache (``--reply-cache``);
        ``registry``: the run's plan types and metrics (``--plan-types``; None: the process's)."""
        if cfg.fish.spare < SPARE:
            cfg = cfg.model_copy(update={"fish": cfg.fish.model_copy(update={"spare": SPARE})})
        return cls(LiveSession(cfg, mode="realtime", cache=cache, past=past, own_memory=True, registry=registry))

    def close(self) -> None:
        super().close()
        self.pane.release()  # (megabytes of backgrounds at 20 px a cell: gone with the window)

    # ------------------------------------------------------------ Scene protocol: view side

    def handle_event(self, event) -> bool:
        """Each part of the window in turn, from what lies on top: the first that takes the
        event ends it; then the keys (``KEYS``). Returns whether one took it."""
        if self.timeline is not None:  # the influence marks' hover follows the mouse wherever it is
            self.timeline.track(event)
        self.pane.track(event)  # (where the mouse rests: the edge scroll, the fish under it)
        return any(part(event) for part in (self._let_go, self._overlays, self._controls, self._wheel,
                                            self._timeline, self._minimap, self._tank_mouse, self._typing,
                                            self.pickers.handle_key, self._keys))

    def _let_go(self, event) -> bool:
        """An arrow (or E) let go while a fish is played: it stops after the move it is making."""
        player = self.shown.player
        if event.type != pygame.KEYUP or player is None or event.key not in PLAY_KEYS:
            return False
        player.release(PLAY_KEYS[event.key])
        return True

    def _overlays(self, event) -> bool:
        """The open pickers and the More… menu take every event (clicks and keys) meant for them;
        folded, the « panels tab brings the panels back on a click or when the mouse rests on it."""
        if self.folded and event.type in (pygame.MOUSEBUTTONDOWN, pygame.MOUSEMOTION) \
                and self.unfold_tab.collidepoint(event.pos):
            self.toggle_folded()
            return True
        return self.pickers.handle_overlay(event) or self.controls.handle(event)

    def _controls(self, event) -> bool:
        """The buttons, and the sliders of a live tank with no fish followed."""
        if any(b.handle(event) for b in self.buttons):
            return True
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.hud.click(event.pos):
            return True
        return self.selected is None and self.shown.kind == "live" and any(sl.handle(event) for sl in self.sliders)

    def _wheel(self, event) -> bool:
        """The wheel scrolls the side panel under the mouse, or zooms the tank at the cursor
        (from the whole tank to 40 px a cell)."""
        if event.type != pygame.MOUSEWHEEL:
            return False
        mouse = self.pane.hover or theme.mouse_pos()  # (the last motion's point: logical, as the scenes draw)
        if self.rects.get("panel") is not None and self.rects["panel"].collidepoint(mouse):
            self.follow.scroll_by(-event.y * 40)
        elif self.rects.get("tank") is not None and self.rects["tank"].collidepoint(mouse):
            self.zoom_at(mouse, 1.25 ** event.y)
        return True

    def _timeline(self, event) -> bool:
        """A click on an influence mark opens its decision's fork (also from a fork: it ends first);
        a press or drag on the bar seeks (not while a fork is shown)."""
        if self.timeline is not None and event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            mark = self.timeline.mark_at(event.pos)
            if mark is not None:
                self.open_mark(mark)
                return True
        if self.timeline is None or self.fork is not None or not self.timeline.handle(event):
            return False
        self.seek(self.timeline.seek_to)
        return True

    def _minimap(self, event) -> bool:
        """A click or drag on the minimap puts the camera there."""
        return self.pane.minimap.handle(event, self.pane.camera)

    def _tank_mouse(self, event) -> bool:
        if not self.pane.handle(event):
            return False
        if self.pane.clicked is not None:
            self._click_tank(self.pane.clicked)
        return True

    def _typing(self, event) -> bool:
        """While a question is typed every key is text (ui/ask.py); Enter asks it."""
        if not self.asking.handle(event):
            return False
        if self.asking.question:
            self.ask_why(self.asking.question)
            if self.why is not None:
                self.why["typed"] = True
        return True

    def _keys(self, event) -> bool:
        return dispatch(KEYS, self, event)

    def _click_tank(self, pos) -> None:
        """A click in the tank: follow the fish there, or the hand tool's intervention."""
        tool, r = self.pane.tool, self.pane.renderer
        if tool == "follow":  # (a fish followed: the camera follows it; the water: no fish followed)
            self.selected = r.fish_at(pos, self.view)
        elif tool == "remove":
            fish = r.fish_at(pos, self.view)
            if fish is None:
                self.message = "click on a fish to take it out"
                return
            if self.selected == fish:
                self.selected = None
            self.intervene({"kind": "remove", "fish": fish})
        else:
            x, y = (int(round(v)) for v in r.cell_at(pos))
            self.intervene({"kind": tool, "x": x, "y": y})

    def _picked(self, what: str, choice: Any) -> None:
        """What a picker chose (None: cancelled)."""
        if what == "fork":
            player = self.shown.player
            if choice is None:
                self.message = "plan cancelled" if player is not None else "fork cancelled"
            elif player is not None:  # the person's own fish: its plan, no branch
                try:
                    player.choose(choice)
                    self.message = f"fish {player.fish} follows your plan: {choice} (it holds for its horizon)"
                except ValueError as exc:
                    self.message = str(exc)
            else:
                self.start_fork(choice, replan=self.pickers.replan)
            self.pickers.done()
        elif what == "file":
            if choice is None:
                self.pickers.done()
            else:
                self.open_recording(choice)
        elif what == "current":
            if choice is None:
                self.message = "current cancelled"
            else:
                self.intervene({"kind": "current", "dir": "east" if choice == "stop" else choice,
                                "ticks": 0 if choice == "stop" else 60})

    def update(self, dt: float) -> None:
        self.drop_stale_message()
        if not self.pacer.paused and "Space plays" in self.message:
            self.message = ""  # it plays now: the hint is stale
        if self.message == QUIT_HINT and time.monotonic() - self._esc_at >= 3.0:
            self.message = ""  # the second Esc did not come in time: the hint would lie
        self._t += dt
        covered = self.show_help or self.show_charts or self.show_menu or self.pickers.action \
            or self.pickers.files is not None
        self.pane.advance(dt, edge=not covered)  # the camera glides (and the edge scrolls) at the next frame
        due = self.pacer.due(self._t, 32)
        for _ in range(due):
            if self.step() is None:
                break
        tick_s = self.cfg.world.tick_seconds / max(self.speed, 1e-9)
        self._since_tick = 0.0 if due else min(tick_s, self._since_tick + dt)
        self._alpha = 1.0 if self.pacer.paused else min(1.0, self._since_tick / tick_s)

    @property
    def cell_px(self) -> int:
        """The cell size the design card asks for: ``world.cell_px``, 0 = 20 px."""
        return self.shown.cfg.world.cell_px or CELL_PX

    def layout(self, size: tuple[int, int]) -> dict[str, pygame.Rect]:
        w = self.shown.cfg.world
        return aquarium_layout(size, replay=self.timeline is not None, grid=(w.width, w.height), folded=self.folded)

    def toggle_folded(self) -> None:
        self.folded = not self.folded
        self.message = "panels folded: P or the « panels tab brings them back" if self.folded else ""

    @property
    def camera(self):
        """The tank pane's camera (ui/camera.py)."""
        return self.pane.camera

    def toggle_camera(self) -> None:
        """X: the follow camera (:attr:`cell_px`, 20 px a cell, on the followed fish or the
        largest school) or the whole tank."""
        cam = self.camera
        cam.toggle()
        if cam.mode == "whole" or cam.whole_shown:
            self.message = f"{cam.describe()}; X: {cam.scale} px a cell, following"
        else:
            what = "the followed fish" if self.selected is not None else "the largest school"
            self.message = f"{cam.scale} px a cell on {what} (drag, the water's edge or the map pan; X: the whole tank)"

    def recentre(self) -> None:
        """Z: the camera back on what matters — the followed fish, else the largest school."""
        self.camera.follow()
        self.message = f"{self.camera.describe()}: on " + ("the followed fish" if self.selected is not None
                                                           else "the largest school")

    def widget_rects(self) -> dict[str, pygame.Rect]:
        """Every region and control drawn last frame (the layout test checks them)."""
        return {**self.rects, **{f"button:{b.label}": b.rect for b in self.buttons}}

    chrome = True  # the buttons and the footer's keys and messages (a clip leaves them out)

    def draw(self, surf: pygame.Surface) -> None:
        surf.fill(theme.PANEL)
        r = self.rects = self.layout(surf.get_size())
        self.camera.cell_px = self.pane.renderer.fit_cap = self.cell_px
        if not self._cell_set:  # world.cell_px (20 px unless set): the follow camera's scale from the start
            self._cell_set = True
            self.camera.scale = self.cell_px
            if self.shown.cfg.world.cell_px:  # asked for: that size from the first frame (no overview)
                self.camera.auto, self.camera.mode = False, "follow"
        self._draw_tank(surf, r["tank"])
        if r["minimap"].w:
            self.pane.draw_minimap(surf, r["minimap"], self.shown, self.view, self.selected, self.school()[0])
        if self.chrome and r["controls"].w:
            self.controls.draw(surf, r["controls"], aquarium_buttons(self))
        else:  # folded away (or under the followed fish): nothing there to click
            for b in self.buttons:
                b.rect = pygame.Rect(0, 0, 0, 0)
        if r["hud"].w:
            self.hud.draw(surf, r["hud"], {}, self._status(), self.shown.brain_status(),
                          self.shown.cfg.metrics.hud_first)
        if r["panel"].w and self.selected is None:  # no fish followed: the live settings
            live = self.shown.kind == "live"
            draw_tune_panel(surf, r["panel"], self.sliders if live else [], self.view.settings if live else None,
                            self.show_heat, hints=self.chrome,
                            groups=group_lines(self.cfg, self.view, self.shown.metrics),
                            above=r["minimap"].y if r["minimap"].h else None)
        elif r["panel"].w and self.selected is not None:
            fish = self.selected
            self.follow.draw_followed(surf, r["panel"], self.shown, self.view, fish, self.energy_hist[fish],
                                      self.last_decision.get(fish), self._why_lines())
        footer = self._draw_time(surf, r)
        if self.chrome:
            draw_footer(surf, footer, self.message, self.alarm, self.shown.metrics_summary().get("alerts", []))
        if self.show_menu:
            self.controls.draw_menu(surf)
        self.pickers.area = pygame.Rect(r["tank"])  # a picker is laid out over the water, the panels stay in view
        player = self.shown.player
        self.pickers.draw(surf, self.tick, self.selected, played=player is not None and player.fish == self.selected)
        self.unfold_tab = pygame.Rect(r["tab"])
        if self.folded:  # the « panels tab, at the footer's right end (beside the water)
            label = theme.fit("« panels (P)", 16, self.unfold_tab.w - 12, theme.INK)
            pygame.draw.rect(surf, theme.BUTTON, self.unfold_tab.inflate(-4, -4), border_radius=6)
            surf.blit(label, (self.unfold_tab.centerx - label.get_width() // 2,
                              self.unfold_tab.centery - label.get_height() // 2))
        if r["hud"].w and not (self.pickers.action or self.show_help):
            self.hud.draw_tip(surf)
        covered = self.pickers.action or self.pickers.files is not None or self.show_help or self.show_menu
        if self.timeline is not None and r["timeline"].w and not covered:
            self.timeline.draw_tip(surf)  # the influence mark under the mouse
        if self.show_help:
            draw_help(surf, help_lines(KEYS), "Keys")

    def _draw_tank(self, surf: pygame.Surface, rect: pygame.Rect) -> None:
        """The water, the heat map, and over it the ASCII view or the charts when open."""
        heat = self.shown.heat() if self.show_heat else None
        self.pane.draw(surf, rect, self.shown, self.view, self.prev, self._alpha, self.selected, self.show_fov, heat,
                       self.school()[0])
        if self.show_ascii:
            self.pane.draw_ascii(surf, rect, self.shown, self.mode)
        if self.show_charts:
            rec, cfg = self.replay, self.shown.cfg
            seen = {k: (np.array([p[0] for p in pts], np.float64), np.array([p[1] for p in pts], np.float64))
                    for k, pts in self.series.points.items()}
            groups = list(zip(cfg.fish.group_names(), group_colours(cfg))) if cfg.fish.groups else []
            if rec is not None and self.fork is None and not self.nav.showing_own_past():
                # a recording: its whole curves, a cursor at the tick shown (the live tank's own
                # past shows its series up to the tick shown, below: what follows is not yet shown);
                # a mixed tank's group lines are those of the ticks played (a recording stores the tank's)
                draw_charts(surf, rect, {**seen, **rec.curves()}, cursor=self.tick,
                            x_range=(rec.first_tick, rec.last_tick), groups=groups)
            else:
                draw_charts(surf, rect, seen, groups=groups)

    def _status(self) -> dict:
        """The HUD's status: tick, speed, paused, and which tank this is."""
        mode = {"fork": "FORK: rings = the original's fish", "live": ""}.get(self.mode, f"REPLAY t{self.tick}")
        if self.shown.player is not None:
            mode = f"{mode}  YOU PLAY FISH {self.shown.player.fish}".strip()
        if self.mode == "replay" and self.nav.showing_own_past() and self.live_home is not None:
            mode = f"PAST t{self.tick} (now t{self.live_home.tick})"
        return {"tick": self.tick, "speed": self.speed, "paused": self.pacer.paused, "mode": mode}

    def _draw_time(self, surf: pygame.Surface, r: dict[str, pygame.Rect]) -> pygame.Rect:
        """The timeline (a replay's, the live tank's kept past) with a fork's divergence under it;
        a live fork without a timeline: the divergence count at the footer line's right end.
        Returns the part of the footer line left for its keys and messages."""
        fork = self.fork
        if self.timeline is not None:
            self.timeline.hovered = None  # (a timeline folded away has no mark under the mouse)
        if self.timeline is not None and r["timeline"].w:
            rng = self.nav.showing_live.past_range() if self.nav.showing_live is not None else None
            if rng is not None:  # the live timeline: the kept past up to now
                self.timeline.first, self.timeline.last = rng
            elif self.replay is not None and fork is None:  # a replay's own range (a fork shown may have run past it)
                self.timeline.first, self.timeline.last = self.replay.first_tick, self.replay.last_tick
            if fork is not None:
                self.timeline.last = max(self.timeline.last, self.tick)
            self.timeline.draw(surf, r["timeline"], self.tick, fork.curve if fork is not None else None)
        elif fork is not None and fork.curve and r["footer"].w:  # in the footer line's right end (not on the water)
            cells = np.array(fork.curve)[-200:, _CELLS]
            footer = r["footer"]
            a = theme.fit(f"divergence: {int(cells[-1])} fish in another cell", 18, footer.w // 3, theme.BAD)
            surf.blit(a, (footer.right - a.get_width() - 10, footer.y + 3))
            return pygame.Rect(footer.x, footer.y, footer.w - a.get_width() - 20, footer.h)
        return r["footer"]

    def toggle(self, what: str) -> None:
        setattr(self, what, not getattr(self, what))

    def begin_fork_pick(self) -> None:
        """The tank waits while the picker is open: the fork happens at the tick F was pressed
        (a fish the person plays gets the plan itself, with no branch)."""
        self.pickers.open_fork(self.shown.plans.fork_plans())
        player = self.shown.player
        if player is not None and player.fish == self.selected:
            self.message = f"your fish {self.selected}: pick its plan (held for its horizon) or an action"
        else:
            self.message = (f"fork fish {self.selected} at t{self.tick}: pick a plan or an action "
                            "(0: the re-plan option)")

    def toggle_play(self) -> None:
        """J: take the controls of the followed fish, or give it back to its brain."""
        shown, player = self.shown, self.shown.player
        if player is not None and (self.selected is None or player.fish == self.selected):
            fish = shown.stop_playing()
            self.message = f"fish {fish} is its brain's again ({player.decisions} decisions were yours)"
            return
        if self.selected is None:
            self.message = "follow a fish first (click it), then J plays it"
            return
        try:
            shown.play(self.selected)
        except ValueError as exc:
            self.message = str(exc)
            return
        self.message = (f"you play fish {self.selected}: arrows move it, E eats, F picks a plan, J lets it go "
                        "(recorded as interventions)")

    def steer(self, key: int) -> bool:
        """An arrow or E while a fish is played: that move, from the next tick (False: not playing)."""
        player = self.shown.player
        if player is None or player.fish != self.selected:
            return False
        player.steer(PLAY_KEYS[key])
        return True

    def open_picker(self) -> None:
        files = sorted(self.saves.glob("*.db"), key=lambda p: p.stat().st_mtime, reverse=True)[:9]
        if not files:
            self.message = f"no recordings in {self.saves}/ yet (Rec starts one)"
            return
        self.pickers.open_files(files)

    def cycle_tool(self) -> None:
        self.message = self.pane.cycle_tool()

    def zoom_at(self, pos, factor: float) -> None:
        """Zoom the camera by ``factor`` at ``pos`` (the wheel)."""
        self.pane.zoom_at(pos, factor, self.rects["tank"])

    def reset_zoom(self) -> None:
        """The whole tank."""
        self.pane.reset_zoom()

    # the parts' state, as the window's tests and the keys reach it
    buttons = property(lambda self: self.controls.buttons)
    hidden_buttons = property(lambda self: self.controls.hidden)
    show_menu = property(lambda self: self.controls.menu_open,
                         lambda self, value: setattr(self.controls, "menu_open", value))
    tool = property(lambda self: self.pane.tool, lambda self, value: setattr(self.pane, "tool", value))
    picking_action = property(lambda self: self.pickers.action)
    picking_file = property(lambda self: self.pickers.files)
    why = property(lambda self: self.asking.why, lambda self, value: setattr(self.asking, "why", value))
    typing = property(lambda self: self.asking.typing, lambda self, value: setattr(self.asking, "typing", value))

    # ------------------------------------------------------------ ask a fish (ui/ask.py)

    def ask_why(self, question: str = "Why are you doing this?") -> None:
        """Explain the followed fish's plan (see :meth:`AskBox.ask`)."""
        if self.selected is None:
            self.message = "follow a fish first (click it), then I asks it why"
            return
        self.asking.ask(self.shown, self.selected, question)

    def ask_again(self) -> None:
        """Send the followed fish's last model request again (see :meth:`AskBox.again`)."""
        last = self.last_decision.get(self.selected) if self.selected is not None else None
        if last is None or last.get("call") is None:
            self.message = ("follow a fish first (click it), then G asks its model again" if self.selected is None
                            else "no model request behind this fish's last decision (G needs a model brain)")
            return
        recorded, choice = False, None
        for part in (self.shown, getattr(self.shown, "parent", None)):  # a replay, or a fork of one
            if part is not None and getattr(part, "recording", None) is not None:
                recorded, choice = True, getattr(part, "choice", None)
        self.asking.again(self.selected, last, self.cfg, recorded, choice)  # type: ignore[arg-type]

    def _why_lines(self) -> list[tuple[str, tuple]] | None:
        return self.asking.lines(self.selected)


# ---------------------------------------------------------------- the keys


def _back_one(s: AquariumScene, event) -> None:
    if s.fork is None:
        s.pacer.paused = True
        s.seek(s.tick - 1)


def _next_fish(s: AquariumScene, event) -> None:
    """Tab / arrows: the next (Shift+Tab, Left, Up: the previous) fish in the water."""
    k = event.key
    back = k in (pygame.K_LEFT, pygame.K_UP) or (k == pygame.K_TAB and bool(event.mod & pygame.KMOD_SHIFT))
    here = [i for i in range(len(s.view.x)) if s.view.in_water(i)]  # in id order
    if here:
        at = s.selected if s.selected is not None else (-1 if not back else 0)
        later = [i for i in here if (i < at if back else i > at)]
        s.selected = (later[-1] if back else later[0]) if later else (here[-1] if back else here[0])


def _fork_key(s: AquariumScene, event) -> None:
    if s.mode == "fork":
        s.message = "already in a fork: O returns to the original first"
    elif s.selected is None:
        s.message = "select a fish first (click it), then F"
    else:
        s.begin_fork_pick()


def _current_key(s: AquariumScene, event) -> None:
    s.pickers.current = True
    s.message = "current: an arrow key picks its direction (60 ticks), 0 stops it, any other key cancels"


def _type_key(s: AquariumScene, event) -> None:
    if s.selected is None:
        s.message = "follow a fish first (click it), then T types a question to it"
    else:  # a box for the question; every key is text until Enter or Esc
        if s.why is None or s.why["fish"] != s.selected:
            s.ask_why()
        s.typing = ""


def _escape(s: AquariumScene, event) -> None:
    """Esc closes what is open, one thing at a time; with nothing open, Esc twice quits."""
    if s.why is not None:
        s.why = None
    elif s.show_help or s.show_menu or s.show_charts:
        s.show_help = s.show_menu = s.show_charts = False
    elif s.selected is not None:
        s.selected = None
        s.message = ""  # what was said about that fish ("G needs a model brain" …) is not about the tank
    elif s.tool != "follow":
        s.tool = "follow"
        s.message = "click: follow a fish"
    elif time.monotonic() - s._esc_at < 3.0:
        s.wants_quit = True
    else:
        s._esc_at = time.monotonic()
        s.message = QUIT_HINT


QUIT_HINT = "Esc again within 3 s (or Q) quits"
PLAY_KEYS = {pygame.K_UP: Action.MOVE_N, pygame.K_DOWN: Action.MOVE_S, pygame.K_LEFT: Action.MOVE_W,
             pygame.K_RIGHT: Action.MOVE_E, pygame.K_e: Action.EAT}  # a played fish's moves
_pace = pacing(lambda s: s.step())  # Space, ".", + and - (ui/keys.py)


# Every key of the aquarium window, what it does and its help line, in the order the help lists them.
KEYS: tuple[Row, ...] = (
    Binding("Space", "pause / play", (pygame.K_SPACE,), _pace),
    Binding(". (period)", "one tick forward (paused)", (pygame.K_PERIOD,), _pace),
    Binding(", (comma)", "one tick back (replay)", (pygame.K_COMMA,), _back_one),
    Binding("+ / -", "speed ×2 / ÷2 (¼× … 64×)", (pygame.K_PLUS, pygame.K_MINUS), _pace, also=(*PLUS, *MINUS)),
    Line("click", "follow a fish"),
    Binding("J", "play the followed fish: arrows move it, E eats, F picks its plan (recorded); J gives it back",
            (pygame.K_j,), lambda s, e: s.toggle_play()),
    Binding("Up / Down / Left / Right / E", "while you play a fish: move it that way (held: it keeps going) / eat",
            (pygame.K_UP, pygame.K_DOWN, pygame.K_LEFT, pygame.K_RIGHT, pygame.K_e), lambda s, e: s.steer(e.key)),
    Binding("Tab / Left / Right", "next / previous fish", (pygame.K_TAB, pygame.K_LEFT, pygame.K_RIGHT), _next_fish,
            also=(pygame.K_DOWN, pygame.K_UP)),
    Binding("Esc", "stop following", (pygame.K_ESCAPE,), _escape),
    Binding("V", "field of view on/off", (pygame.K_v,), lambda s, e: s.toggle("show_fov")),
    Binding("M", "stuck heat map on/off", (pygame.K_m,), lambda s, e: s.toggle("show_heat")),
    Binding("A", "ASCII debug view on/off", (pygame.K_a,), lambda s, e: s.toggle("show_ascii")),
    Binding("F", "fork: the tank waits; pick a plan (1-9) or an action", (pygame.K_f,), _fork_key),
    Binding("O", "after a fork: back to the original, at the fork tick", (pygame.K_o,), lambda s, e: s.end_fork()),
    Binding("I", "ask the followed fish why", (pygame.K_i,), lambda s, e: s.ask_why()),
    Binding("T", "type a question to the followed fish (a model fish answers)", (pygame.K_t,), _type_key),
    Binding("G", "ask the fish's model its last request again", (pygame.K_g,), lambda s, e: s.ask_again()),
    Binding("C", "charts over time", (pygame.K_c,), lambda s, e: s.toggle("show_charts")),
    Binding("drag timeline", "go back: live, into the tank's recent past (it waits); N back to now", (pygame.K_n,),
            lambda s, e: s.to_now()),
    Binding("K", "record: keep the recent past and go on recording (Stop rec ends it)", (pygame.K_k,),
            lambda s, e: s.toggle_record()),
    Binding("L", "open a recording", (pygame.K_l,), lambda s, e: s.open_picker()),
    Binding("D", "what a click does: follow, drop food, place or clear a rock, add a fish, take one out", (pygame.K_d,),
            lambda s, e: s.cycle_tool()),
    Binding("U + arrow", "a current pushes the fish that way for 60 ticks (U 0 stops it)", (pygame.K_u,), _current_key),
    *CAMERA_KEYS,  # X, Z, the wheel and the drags (ui/keys.py)
    Binding("P", "fold the panels away / back (the « panels tab too)", (pygame.K_p,), lambda s, e: s.toggle_folded()),
    Binding("R / Shift+R", "reset / reset with a new seed", (pygame.K_r,),
            lambda s, e: s.reset(s.new_seed() if e.mod & pygame.KMOD_SHIFT else None)),
    NEXT_SCENE,
    Binding("H / Esc", "this help / close what is open (twice: quit)", (pygame.K_h,),
            lambda s, e: s.toggle("show_help")),
    QUIT,
)
