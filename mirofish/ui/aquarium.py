"""The aquarium scene: live tank, replay with a timeline, and forks with a ghost of the original.

It holds a session (:mod:`mirofish.session`: live or replay) and, while a fork is shown, a
fork session; it reads :class:`~mirofish.snapshot.TankView` and
:class:`~mirofish.snapshot.FishSnapshot` objects from them and changes the tank only
through commands — pause, speed, step, seek, fork, end fork, reset.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, cast

import numpy as np
import pygame

from ..brains.base import TIERS, status_name
from ..fish.personality import behaviour_score
from ..fish.plans import describe, parse_plan
from ..frame import Frame
from ..observe import ascii as ascii_view
from ..observe.recording import DIVERGENCE_COLUMNS, RecordingError
from ..pacing import Pacer, clamp_speed
from ..session import ForkSession, LiveSession, ReplaySession, Session
from ..snapshot import TankView
from . import theme
from .ask import AskBox
from .charts import Series, draw_charts
from .controls import ControlsBar
from .keys import pacing_key
from .layout import aquarium_layout
from .panels import FollowPanel, Hud, Timeline, draw_help
from .pickers import draw_file_picker, draw_fork_picker, file_choice, fork_choice_at, fork_choice_for_key
from .tank import TankRenderer
from .tune import draw_tune_panel, tune_sliders
from .widgets import Button, Slider

HISTORY = 160  # ticks of energy history per fish (follow panel sparkline)
SPARE = 8  # room for fish added by a click in a live tank (fish.spare)
_CELLS = 1 + DIVERGENCE_COLUMNS.index("cells_differ")  # columns of ForkSession.curve (tick first)




def _live_timeline(live: LiveSession) -> Timeline | None:
    """The live tank's timeline: its kept past up to now (None when it keeps none)."""
    rng = live.past_range()
    return Timeline(rng[0], rng[1], []) if rng is not None else None


class AquariumScene:
    """One scene, three modes: ``live`` (a live session), ``replay`` (a replay session) and
    ``fork`` (a fork session of either, its parent drawn as a ghost)."""

    title = "Aquarium"

    def __init__(self, session: Session):
        self.session = session
        self.cfg = session.cfg
        self.mode = session.kind
        self.pacer = Pacer(self.cfg.world.tick_seconds, self.cfg.engine.speed)
        self.fork: ForkSession | None = None
        self.renderer = TankRenderer(session.terrain())
        self.hud, self.follow, self.timeline = Hud(), FollowPanel(), None
        self.live_home: LiveSession | None = None  # the live tank, paused, while its past or a recording is shown
        if self.replay is not None:
            self.timeline = Timeline(self.replay.first_tick, self.replay.last_tick, self.replay.markers())
        elif self.showing_live is not None:
            self.timeline = _live_timeline(self.showing_live)
        self.tool = "follow"  # what a click in the tank does: follow, food, rock, clear
        self.picking_current = False
        self.controls = ControlsBar()  # the buttons under the HUD, and the More… menu of those that do not fit
        self.zoom = 1.0
        self.pan: tuple[float, float] | None = None  # the cell at the tank's centre when zoomed (None: fit)
        self._drag: tuple | None = None  # a mouse press in the tank: (where, centre then, moved, button)
        self._centred = True  # zoomed in, the followed fish stays in the middle (until a drag pans)
        self._esc_at = -10.0
        self.selected: int | None = None
        self.show_fov, self.show_heat, self.show_ascii, self.show_help = True, False, False, False
        self.show_charts = False
        self.asking = AskBox()  # "why?", a question typed to the fish, its request asked again
        self.series = Series()
        self.picking_action = False
        self.picking_file: list[Path] | None = None  # the open-a-recording list, while shown
        self.message = ""
        self.saves = Path("saves")
        self._paused_before_pick = False
        self._window_past: tuple | None = None  # … and what the window showed then
        self._pending_cfg = self.cfg  # settings that apply at the next reset (fish count)
        self.rects: dict[str, pygame.Rect] = {}
        self.sliders: list[Slider] = self._make_sliders()
        self._reset_views()

    @classmethod
    def live(cls, cfg, cache=None, past: bool = True) -> AquariumScene:
        """A live tank from ``cfg``, in realtime (the window's pace), keeping its recent past
        (``record.history_minutes``) for the timeline, with room for ``SPARE`` fish added by
        a click (``fish.spare``: the tank and its state hash are those of the same config
        without it until one is added); ``cache``: a model brain's reply cache (``--reply-cache``)."""
        if cfg.fish.spare < SPARE:
            cfg = cfg.model_copy(update={"fish": cfg.fish.model_copy(update={"spare": SPARE})})
        return cls(LiveSession(cfg, mode="realtime", cache=cache, past=past))

    # ------------------------------------------------------------ the session being shown

    @property
    def shown(self) -> Session:
        """The fork while one is shown, else the live or replay session."""
        return self.fork if self.fork is not None else self.session

    @property
    def tick(self) -> int:
        return self.shown.tick

    # The session's capabilities, not its class, say what it is (can_record: a live tank;
    # can_seek: a replay); these narrow the type once, here.

    @property
    def live_tank(self) -> LiveSession | None:
        """The live tank: shown, or waiting while its past or a recording is shown (None: only a recording)."""
        s = self.live_home if self.live_home is not None else self.session
        return cast(LiveSession, s) if s.can_record else None

    @property
    def showing_live(self) -> LiveSession | None:
        """The live tank when it is the session shown (not waiting)."""
        return cast(LiveSession, self.session) if self.session.can_record else None

    @property
    def replay(self) -> ReplaySession | None:
        """The replay shown (a recording, or the live tank's past)."""
        return cast(ReplaySession, self.session) if self.session.can_seek else None

    @property
    def last_decision(self) -> dict[int, dict]:
        """Each fish's last decision before the tick shown, as the panel words it (asked of the
        session shown: never one the window drew in a discarded branch or after a seek)."""
        return {f: {"tick": d["tick"], "action": describe(d["goal"], d["param"], d["horizon"]),
                    "tier": TIERS[d["tier"]], "thought": d["thought"],
                    "reason": status_name(d["status"]) if d["status"] else None, "call": d["call"]}
                for f, d in self.shown.decisions().last.items()}

    @property
    def goal_counts(self) -> np.ndarray:
        """Plans per fish by goal up to the tick shown (the behaviour score's counts)."""
        return self.shown.decisions().counts

    def _reset_views(self) -> None:
        self.view: TankView = self.shown.view()
        self.prev: TankView | None = None
        self.energy_hist = np.repeat(self.view.energy[:, None] / 100.0, HISTORY, axis=1)
        self._since_tick = 0.0

    # ------------------------------------------------------------ commands

    @property
    def speed(self) -> float:
        return self.pacer.speed

    def set_speed(self, speed: float) -> None:
        self.pacer.speed = clamp_speed(speed)

    def step(self) -> Frame | None:
        """One tick of whatever is shown (a fork steps its ghost too)."""
        self.prev = self.view
        if self._diverged is self.shown:  # it stopped where it left its recording; a seek goes elsewhere
            self.pacer.paused = True
            return None
        try:
            frame = self.shown.step()
        except RecordingError as exc:  # a replay that drifts from its recording stops and says where
            self.pacer.paused = True
            self.message = str(exc)
            self.alarm = True
            self._diverged = self.shown
            return None
        if frame is None:  # the end of a recording
            if self._showing_own_past() and self.fork is None:
                playing = not self.pacer.paused
                self.to_now()  # the past has caught up with the live tank: it goes on live
                self.pacer.paused = not playing
                return None
            self.pacer.paused = True
            return None
        self.view = self.shown.view()
        self.energy_hist = np.roll(self.energy_hist, -1, axis=1)
        self.energy_hist[:, -1] = self.view.energy / 100.0
        metrics = self._push_metrics()
        if frame.tick % self.cfg.metrics.sample_every == 0:
            self.series.add(frame.tick + 1, {**metrics, "mean_energy": float(self.view.energy.mean()) / 100})
        return frame

    def seek(self, tick: int) -> None:
        if self.fork is not None:
            return
        if self.showing_live is not None and (tick >= self.showing_live.tick or not self._go_back()):
            return
        if not self.session.can_seek:
            return
        try:
            self.session.seek(tick)
            self._diverged = None
        except RecordingError as exc:
            self.pacer.paused = True
            self.message = str(exc)
            self.alarm = True
            self._diverged = self.session
        self.hud = Hud()  # the HUD's sparklines start again from the tick shown
        self._reset_views()
        self._push_metrics()

    # ------------------------------------------------------------ the live tank's past

    def _showing_own_past(self) -> bool:
        return self.live_home is not None and getattr(self, "_past_is_own", False)

    def _go_back(self) -> bool:
        """Show the live tank's recent past (it waits, paused, meanwhile); False without one."""
        live = self.showing_live
        if live is None:
            return False
        past = live.past()
        if past is None:
            self.message = "this tank keeps no past (record.history_minutes is 0)"
            return False
        self.pacer.paused = True
        self._show_replay(past, own=True)
        self.message = ("the tank's past: Space plays on (it becomes live again at now), F forks, "
                        "N returns to now, K keeps it as a recording")
        return True

    def _show_replay(self, replay: ReplaySession, own: bool) -> None:
        """Show ``replay``; a live tank waits as ``live_home`` (N returns to it)."""
        if self.showing_live is not None:
            self.live_home = self.showing_live
        elif self.session is not self.live_home:
            self.session.close()
        self._past_is_own = own
        self.session, self.mode = replay, "replay"
        self.cfg = replay.cfg
        self.renderer = TankRenderer(replay.terrain())
        old = self.timeline  # a drag that went back goes on, on the same bar
        self.timeline = Timeline(replay.first_tick, replay.last_tick, replay.markers())
        if old is not None:
            self.timeline.dragging, self.timeline.rect = old.dragging, old.rect
        self.hud = Hud()
        self._reset_views()

    def to_now(self) -> None:
        """Back to the live tank as it is now (from its past or an opened recording)."""
        if self.live_home is None:
            return
        if self.fork is not None:
            self.end_fork()
        self.session.close()
        live, self.live_home = self.live_home, None
        self.session, self.mode, self.cfg = live, "live", live.cfg
        self.renderer = TankRenderer(live.terrain())
        self.timeline = _live_timeline(live)
        self.sliders = self._make_sliders()
        self.hud = Hud()
        self._reset_views()
        self._push_metrics()
        self.message = f"now: t{live.tick} (live)"

    def keep(self) -> None:
        """Keep the live tank's recent past as a recording in saves/ and go on recording ("Keep this")."""
        live = self.live_tank
        if live is None:
            self.message = "K keeps a live tank's past; this is a recording already"
            return
        if self.fork is not None:
            self.message = "O returns to the original first, then K keeps its past"
            return
        if live.is_recording:
            self.message = f"already recording to {live.recorder.path} (Stop rec ends it)"  # type: ignore[union-attr]
            return
        from ..observe.recording import RecordingError

        path = self.saves / time.strftime("kept-%Y%m%d-%H%M%S.db")
        shown = self.tick if self._showing_own_past() else None
        try:
            if shown is not None:
                self.session.close()  # the past's reader: reopened on the kept file below
            first = (live.past_range() or (live.tick, live.tick))[0]
            path = live.keep(path)
        except RecordingError as exc:
            self.message = str(exc)
            return
        finally:
            if shown is not None:
                past = live.past()
                if past is not None:
                    self.session = past
                    past.seek(shown)
        self.message = f"kept t{first}..t{live.tick} in {path}; recording goes on (Stop rec ends it)"

    def intervene(self, iv: dict) -> None:
        """A hands-on change to the tank shown (live or a fork), from its next tick."""
        from ..interventions import InterventionError
        from ..interventions import describe as describe_iv

        target = self.shown
        if target.kind == "replay":
            self.message = "a replay can't be changed: F forks it first (or N returns to the live tank)"
            return
        try:
            target.intervene(iv)
        except InterventionError as exc:
            self.message = str(exc)
            return
        self.message = f"{describe_iv(iv)} at t{target.tick}" + (" (paused: Space plays)" if self.pacer.paused else "")
        if self.pacer.paused:
            self.step()  # show it: a paused tank takes the one tick that applies it

    def start_fork(self, plan: str) -> None:
        """Swap the followed fish's plan (or give it one action) now and let the branch play live,
        the original as a ghost. ``plan`` is text :func:`~mirofish.fish.plans.parse_plan` reads."""
        if self.selected is None:
            self.message = "select a fish first (click it), then F"
            return
        if self.session.kind == "live":
            # what the window knew at the fork tick: O brings it back with the tank
            self._window_past = (self.energy_hist.copy(), copy.deepcopy(self.series), copy.deepcopy(self.hud))
        self.fork = self.session.fork(self.selected, plan)
        if self.timeline is not None:
            self.timeline.markers.append((self.fork.tick0, "fork"))
        self.mode = "fork"
        self.message = (f"fork: fish {self.selected} will {describe(*parse_plan(plan))} from t{self.fork.tick0}; "
                        f"O returns to the original")
        self._reset_views()

    def end_fork(self) -> None:
        if self.fork is None:
            return
        tick = self.fork.back()  # the branch ends; the original is back at the fork tick
        self.fork = None
        self.mode = self.session.kind
        if self.session.can_seek:
            self.seek(tick)  # (the panels follow the replay)
        self.pacer.paused = True
        self.message = f"back to the original at the fork tick t{tick} (paused; Space plays)"
        self._reset_views()
        if self._window_past is not None:  # every panel as it was at the fork tick, not the branch's
            self.energy_hist, self.series, self.hud = self._window_past
            self._window_past = None

    # ------------------------------------------------------------ Scene protocol: model side

    def reset(self, seed: int | None = None) -> None:
        """A fresh tank (live: with the settings that apply at a reset, and ``seed`` if given;
        replay: back to the first tick)."""
        if self.fork is not None:
            self.end_fork()
        if self.live_home is not None and self.replay is not None:  # back to its start (the live tank waits)
            self.seek(self.replay.first_tick)
            what = "the kept past" if self._showing_own_past() else "the recording"
            self.message = f"t{self.tick}: the start of {what}"
            return
        live = self.showing_live
        if live is not None:
            cfg = self._pending_cfg  # with the fish count of the reset sliders, and the tuned settings kept
            for key, value in live.tuned().items():
                section, name = key.split(".")
                cfg = cfg.model_copy(update={section: getattr(cfg, section).model_copy(update={name: value})})
            live.reset(seed, cfg)
            self.timeline = _live_timeline(live)
            self.cfg = self.session.cfg
            self.renderer = TankRenderer(self.session.terrain())
        else:
            self.session.reset(seed)
        self.selected = None
        self.hud = Hud()
        self._reset_views()
        self.message = f"reset: seed {self.cfg.seed}, {self.cfg.fish.count} fish"

    def snapshot(self):
        return self.shown.snapshot()

    def close(self) -> None:
        if self.fork is not None:
            self.fork.close()
        self.session.close()
        if self.live_home is not None:
            self.live_home.close()

    # ------------------------------------------------------------ Scene protocol: view side

    def _metrics(self) -> dict:
        return self.shown.metrics_summary()

    def _push_metrics(self) -> dict:
        metrics = self._metrics()
        self.hud.push(metrics)
        return metrics

    def _brain(self) -> dict:
        return self.shown.brain_status()

    def handle_event(self, event) -> None:
        """Each part of the window in turn, from what lies on top: the first that takes the
        event ends it."""
        for part in (self._overlays, self._controls, self._wheel, self._timeline, self._tank_mouse):
            if part(event):
                return
        if event.type == pygame.KEYDOWN:
            self._key(event)

    def _overlays(self, event) -> bool:
        """The open pickers and the More… menu take every event (clicks and keys) meant for them."""
        if self.picking_file is not None:
            self._pick_file(event)
            return True
        clicked = event.type == pygame.MOUSEBUTTONDOWN and event.button == 1
        if clicked and self.picking_action:
            self.picking_action = False
            self._fork_choice(fork_choice_at(event.pos, getattr(self, "_surf_size", (1920, 1080))))
            return True
        if clicked and self.show_menu:
            self._menu_click(event.pos)
            return True
        return False

    def _controls(self, event) -> bool:
        """The buttons, and the sliders of a live tank with no fish followed."""
        if any(b.handle(event) for b in self.buttons):
            return True
        return self.selected is None and self.shown.kind == "live" and any(sl.handle(event) for sl in self.sliders)

    def _wheel(self, event) -> bool:
        """The wheel scrolls the side panel under the mouse, or zooms the tank at the cursor."""
        if event.type != pygame.MOUSEWHEEL:
            return False
        mouse = theme.mouse_pos()
        if self.rects.get("panel") is not None and self.rects["panel"].collidepoint(mouse):
            self.follow.scroll_by(-event.y * 40)
        elif self.rects.get("tank") is not None and self.rects["tank"].collidepoint(mouse):
            self.zoom_at(mouse, 1.25 ** event.y)
        return True

    def _timeline(self, event) -> bool:
        if self.timeline is None or self.fork is not None:
            return False
        tick = self.timeline.handle(event)
        if tick is None:
            return False
        self.seek(tick)
        return True

    def _tank_mouse(self, event) -> bool:
        """In the tank: a press follows a fish (or starts a drag), a drag pans, a click with a
        hand tool intervenes."""
        if event.type == pygame.MOUSEBUTTONDOWN and event.button in (1, 2, 3) \
                and self.renderer.rect.collidepoint(event.pos):
            self._drag = (event.pos, self.renderer.cell_at(self.renderer.view_rect.center), False, event.button)
            if event.button == 1 and self.tool == "follow":  # follows at once; a drag then pans
                self._click_tank(event.pos)
            return True
        if event.type == pygame.MOUSEMOTION and self._drag is not None:
            start, centre, moved, button = self._drag
            dx, dy = event.pos[0] - start[0], event.pos[1] - start[1]
            if moved or abs(dx) + abs(dy) > 4:  # a drag pans (a click stays a click)
                c = self.renderer.cell
                self.pan = (centre[0] - dx / c, centre[1] - dy / c)
                self._centred = False
                self._drag = (start, centre, True, button)
            return True
        if event.type == pygame.MOUSEBUTTONUP and self._drag is not None:
            start, _, moved, button = self._drag
            self._drag = None
            if not moved and button == 1 and self.tool != "follow":
                self._click_tank(start)
            return True
        return False

    TOOLS = ("follow", "food", "rock", "clear", "add", "remove")
    TOOL_LABELS: ClassVar[dict[str, str]] = {"follow": "Click: follow", "food": "Click: drop food",
                                             "rock": "Click: place rock", "clear": "Click: clear rock",
                                             "add": "Click: add a fish", "remove": "Click: take out"}

    def _click_tank(self, pos) -> None:
        """A click in the tank: follow the fish there, or the hand tool's intervention."""
        if self.tool == "follow":
            self.selected = self.renderer.fish_at(pos, self.view)
            self._centred = True
            return
        if self.tool == "remove":
            fish = self.renderer.fish_at(pos, self.view)
            if fish is None:
                self.message = "click on a fish to take it out"
                return
            if self.selected == fish:
                self.selected = None
            self.intervene({"kind": "remove", "fish": fish})
            return
        x, y = (int(round(v)) for v in self.renderer.cell_at(pos))
        self.intervene({"kind": self.tool, "x": x, "y": y})

    def cycle_tool(self) -> None:
        self.tool = self.TOOLS[(self.TOOLS.index(self.tool) + 1) % len(self.TOOLS)]
        self.message = f"{self.TOOL_LABELS[self.tool].lower()} (D: next tool)"

    def zoom_at(self, pos, factor: float) -> None:
        """Zoom the tank by ``factor`` keeping the cell under ``pos`` where it is."""
        r = self.renderer
        fit = r.fit_cell(self.rects["tank"])
        zoom = min(r.MAX_ZOOM_CELL / fit, max(1.0, self.zoom * factor))
        if zoom == self.zoom:
            return
        under = r.cell_at(pos)
        centre = r.cell_at(r.view_rect.center)
        new_cell = max(fit, min(r.MAX_ZOOM_CELL, int(round(fit * zoom))))
        scale = r.cell / new_cell
        self.pan = (under[0] + (centre[0] - under[0]) * scale, under[1] + (centre[1] - under[1]) * scale)
        self.zoom = zoom  # (a followed fish stays centred; only a drag stops that)
        if zoom == 1.0:
            self.pan = None

    def reset_zoom(self) -> None:
        self.zoom, self.pan = 1.0, None

    def _key(self, event) -> None:
        k = event.key
        if self.typing is not None:
            self._type(event)
            return
        if self.picking_action:
            self.picking_action = False
            self._fork_choice(fork_choice_for_key(k))
            return
        if self.picking_current:
            self._pick_current(k)
            return
        if pacing_key(k, self.pacer, self.step):
            return
        handler = KEYS.get(k)
        if handler is not None:
            handler(self, event)

    # -- what the keys do (the table KEYS, after the class, maps each key to one of these)

    def _back_one(self, event) -> None:
        if self.fork is None:
            self.pacer.paused = True
            self.seek(self.tick - 1)

    def _next_fish(self, event) -> None:
        """Tab / arrows: the next (Shift+Tab, Left, Up: the previous) fish in the water."""
        k = event.key
        back = k in (pygame.K_LEFT, pygame.K_UP) or (k == pygame.K_TAB and bool(event.mod & pygame.KMOD_SHIFT))
        here = [i for i in range(len(self.view.x)) if self.view.in_water(i)]  # in id order
        if here:
            at = self.selected if self.selected is not None else (-1 if not back else 0)
            later = [i for i in here if (i < at if back else i > at)]
            self.selected = (later[-1] if back else later[0]) if later else (here[-1] if back else here[0])

    def _toggle(self, what: str) -> None:
        setattr(self, what, not getattr(self, what))

    def _fork_key(self, event) -> None:
        if self.mode == "fork":
            self.message = "already in a fork: O returns to the original first"
        elif self.selected is None:
            self.message = "select a fish first (click it), then F"
        else:
            self._begin_fork_pick()

    def _now_key(self, event) -> None:
        if self.live_home is None:
            self.message = "N returns to the live tank from its past or a recording (this is it)"
        else:
            self.to_now()

    def _current_key(self, event) -> None:
        self.picking_current = True
        self.message = "current: an arrow key picks its direction (60 ticks), 0 stops it, any other key cancels"

    def _type_key(self, event) -> None:
        if self.selected is None:
            self.message = "follow a fish first (click it), then T types a question to it"
        else:  # a box for the question; every key is text until Enter or Esc
            if self.why is None or self.why["fish"] != self.selected:
                self.ask_why()
            self.typing = ""

    CURRENT_KEYS: ClassVar[dict[int, str]] = {pygame.K_UP: "north", pygame.K_DOWN: "south",
                                              pygame.K_LEFT: "west", pygame.K_RIGHT: "east"}

    def _pick_current(self, k: int) -> None:
        self.picking_current = False
        if k in self.CURRENT_KEYS:
            self.intervene({"kind": "current", "dir": self.CURRENT_KEYS[k], "ticks": 60})
        elif k in (pygame.K_0, pygame.K_KP0):
            self.intervene({"kind": "current", "dir": "east", "ticks": 0})
        else:
            self.message = "current cancelled"

    wants_quit = False  # the app closes the window when a scene sets this

    @property
    def capturing_keys(self) -> bool:
        """Whether keys are text or a picker's choice now (the app's Q and S then do not apply)."""
        return self.typing is not None or self.picking_action or self.picking_current

    def _escape(self) -> None:
        """Esc closes what is open, one thing at a time; with nothing open, Esc twice quits."""
        if self.why is not None:
            self.why = None
        elif self.show_help or self.show_menu or self.show_charts:
            self.show_help = self.show_menu = self.show_charts = False
        elif self.selected is not None:
            self.selected = None
        elif self.tool != "follow":
            self.tool = "follow"
            self.message = "click: follow a fish"
        elif time.monotonic() - self._esc_at < 3.0:
            self.wants_quit = True
        else:
            self._esc_at = time.monotonic()
            self.message = "Esc again (or Q) quits"

    def update(self, dt: float) -> None:
        if not self.pacer.paused and "Space plays" in self.message:
            self.message = ""  # it plays now: the hint is stale
        due = self.pacer.due(self._clock(dt), 32)
        for _ in range(due):
            if self.step() is None:
                break
        tick_s = self.cfg.world.tick_seconds / max(self.speed, 1e-9)
        self._since_tick = 0.0 if due else min(tick_s, self._since_tick + dt)
        self._alpha = 1.0 if self.pacer.paused else min(1.0, self._since_tick / tick_s)

    _t = 0.0

    def _clock(self, dt: float) -> float:
        self._t += dt
        return self._t

    def layout(self, size: tuple[int, int]) -> dict[str, pygame.Rect]:
        return aquarium_layout(size, replay=self.timeline is not None)

    def widget_rects(self) -> dict[str, pygame.Rect]:
        """Every region and control drawn last frame (the layout test checks them)."""
        out = dict(self.rects)
        out.update({f"button:{b.label}": b.rect for b in self.buttons})
        return out

    def draw(self, surf: pygame.Surface) -> None:
        surf.fill(theme.PANEL)
        self._surf_size = surf.get_size()
        r = self.rects = self.layout(surf.get_size())
        self._draw_tank(surf, r["tank"])
        self._draw_controls(surf, r["controls"])
        self.hud.draw(surf, r["hud"], {}, self._status(), self._brain())
        if r["panel"].w and self.selected is None:
            self._draw_tune_panel(surf, r["panel"])
        elif r["panel"].w:
            self._draw_follow_panel(surf, r["panel"])
        self._draw_time(surf, r)
        self._draw_footer(surf, r["footer"])
        if self.show_menu:
            self._draw_menu(surf)
        if self.picking_action:
            draw_fork_picker(surf, self.tick, self.selected)
        if self.picking_file is not None:
            self._file_rows = draw_file_picker(surf, self.picking_file)
        if self.show_help:
            draw_help(surf)

    def _draw_tank(self, surf: pygame.Surface, rect: pygame.Rect) -> None:
        """The water (zoomed and panned; the followed fish kept in the middle), the ghost of a
        fork's original, the heat map, and over it the ASCII view or the charts when open."""
        centre = self.pan
        if self.zoom > 1.0 and self.selected is not None and self._centred \
                and self.selected < len(self.view.x):  # zoomed in, the followed fish stays in the middle
            centre = (float(self.view.x[self.selected]), float(self.view.y[self.selected]))
            self.pan = centre
        key = self.shown.terrain_key()
        if key != getattr(self, "_terrain_key", None):
            self._terrain_key = key
            self.renderer.set_terrain(self.shown.terrain())
        self.renderer.layout(rect, self.zoom, centre)
        heat = self._heat() if self.show_heat else None
        self.renderer.draw(surf, self.view, self.prev, getattr(self, "_alpha", 1.0), self.selected, self.show_fov,
                           heat, self.cfg.metrics.hotspot_cell, self.shown.ghost_view())
        if self.show_ascii:
            self._draw_ascii(surf, rect)
        if self.show_charts:
            self._draw_charts(surf, rect)

    def _status(self) -> dict:
        """The HUD's status: tick, speed, paused, and which tank this is."""
        if self.mode == "replay":
            mode = (f"PAST t{self.tick} (now t{self.live_home.tick})" if self._showing_own_past() and self.live_home
                    else f"REPLAY t{self.tick}")
        else:
            mode = "FORK: rings = the original's fish" if self.mode == "fork" else ""
        return {"tick": self.tick, "speed": self.speed, "paused": self.pacer.paused, "mode": mode}

    def _draw_follow_panel(self, surf: pygame.Surface, rect: pygame.Rect) -> None:
        fish = self.selected
        assert fish is not None
        word_deed = self.shown.metrics.word_deed.fish(fish)
        if self.shown.metrics.first_tick > 0:
            word_deed["since"] = self.shown.metrics.first_tick
        self.follow.draw(surf, rect, self.shown.fish(fish), self.energy_hist[fish], self.last_decision.get(fish),
                         self.view.max_energy / 100, self.shown.drift(fish), self.cfg.brain.drift_alert,
                         self._why_lines(), behaviour=self._behaviour(),
                         text_drift_applies=self.cfg.brain.kind == "llm", word_deed=word_deed)

    def _draw_time(self, surf: pygame.Surface, r: dict[str, pygame.Rect]) -> None:
        """The timeline (a replay's, the live tank's kept past) with a fork's divergence under it;
        a live fork without a timeline: the divergence count above the footer."""
        if self.timeline is not None:
            if self.showing_live is not None:
                rng = self.showing_live.past_range()  # the live timeline: the kept past up to now
                if rng is not None:
                    self.timeline.first, self.timeline.last = rng
            if self.fork is not None:
                self.timeline.last = max(self.timeline.last, self.tick)
            self.timeline.draw(surf, r["timeline"], self.tick, self.fork.curve if self.fork is not None else None)
        elif self.fork is not None and self.fork.curve:
            self._draw_live_curve(surf, r["footer"])

    # ------------------------------------------------------------ controls

    def _make_sliders(self) -> list[Slider]:
        """Live settings (a ``tune`` intervention from the next tick) and two that apply at a reset."""
        if self.showing_live is None:
            return []

        def tune(key: str, value: float) -> None:
            try:
                self.intervene({"kind": "tune", "key": key, "value": value})
            except ValueError as exc:
                self.message = str(exc)

        def at_reset(key: str, value: float, what: str) -> None:
            data = self._pending_cfg.model_dump()
            data["fish"][key] = int(value)
            self._pending_cfg = type(self.cfg).model_validate(data)
            self.message = f"{what} {int(value)} from the next reset (R)"

        return tune_sliders(self.cfg, tune, at_reset)

    def _new_seed(self) -> int:
        return (self.cfg.seed * 7919 + 104729 + int(time.time())) % (2**31 - 1)

    def _begin_fork_pick(self) -> None:
        """The tank waits while the picker is open: the fork happens at the tick F was pressed."""
        self._paused_before_pick = self.pacer.paused
        self.pacer.paused = True
        self.picking_action = True

    def _end_pick(self) -> None:
        self.pacer.paused = self._paused_before_pick
        if not self.pacer.paused:
            self.pacer.restart()

    def _toggle_record(self) -> None:
        """K / the Record button: keep the recent past and record on (Keep this), or stop."""
        live = self.live_tank
        if live is None:
            self.message = "K records a live tank; this is a recording already"
            return
        if live.is_recording:
            path = live.stop_recording()
            self.message = f"recording saved: {path} (L opens it); the recent past is kept again from t{live.tick}"
            return
        self.keep()

    def _open_picker(self) -> None:
        files = sorted(self.saves.glob("*.db"), key=lambda p: p.stat().st_mtime, reverse=True)[:9]
        if not files:
            self.message = f"no recordings in {self.saves}/ yet (Rec starts one)"
            return
        self._paused_before_pick = self.pacer.paused
        self.pacer.paused = True
        self.picking_file = files

    def _fork_choice(self, plan: str | None) -> None:
        """What the fork picker chose (None: cancelled)."""
        if plan is None:
            self.message = "fork cancelled"
        else:
            self.start_fork(plan)
        self._end_pick()

    def _pick_file(self, event) -> None:
        choice = file_choice(event, self.picking_file or [], getattr(self, "_file_rows", []))
        if choice is False:  # any other key or click cancels
            self.picking_file = None
            self._end_pick()
        elif choice is not None:
            self.picking_file = None
            self.open_recording(choice)

    def open_recording(self, path) -> None:
        """Show a recording; a live tank waits meanwhile (N returns to it)."""
        from ..observe.recording import RecordingError

        try:
            replay = ReplaySession(path)
        except RecordingError as exc:
            self.message = str(exc)
            return
        if self.fork is not None:
            self.end_fork()
        self._show_replay(replay, own=False)
        self.sliders = []
        self.selected = None
        self.pacer.paused = True
        back = " · N: back to the live tank" if self.live_home is not None else ""
        self.message = f"replaying {path} (Space plays, drag the timeline to seek){back}"

    def _buttons(self) -> list[Button]:
        paused = self.pacer.paused
        out = [Button("Play" if paused else "Pause", self._toggle_pause_button, "Space"),
               Button("Step", self._step_button, "."),
               Button("Slower", lambda: self.set_speed(self.speed / 2), "-"),
               Button(f"Faster ({self.speed:g}x)", lambda: self.set_speed(self.speed * 2), "+")]
        live = self.live_tank
        if self.live_home is not None and self.fork is None:
            out += [Button("Back to now", self.to_now, "N", active=True)]
        if live is not None and self.fork is None and (self.live_home is None or self._showing_own_past()):
            rec = live.is_recording
            keep = "Keep this" if self._showing_own_past() else "Record"
            out += [Button("Stop rec" if rec else keep, self._toggle_record, "K", active=rec)]
        if self.showing_live is not None and self.fork is None:
            out += [Button("Reset", lambda: self.reset(None), "R"),
                    Button("New seed", lambda: self.reset(self._new_seed()), "Shift+R")]
        elif self.fork is None:
            out += [Button("To start", lambda: self.reset(None), "R")]
        if self.fork is not None:
            out += [Button("Back to original", self.end_fork, "O")]
        elif self.selected is not None:
            out += [Button("Why?", self.ask_why, "I"), Button("Fork this fish", self._begin_fork_pick, "F")]
        if self.shown.kind != "replay":
            out += [Button(self.TOOL_LABELS[self.tool], self.cycle_tool, "D", active=self.tool != "follow")]
        out += [Button("Charts", lambda: setattr(self, "show_charts", not self.show_charts), "C",
                       active=self.show_charts),
                Button("Open recording", self._open_picker, "L"),
                Button("Help", lambda: setattr(self, "show_help", not self.show_help), "H")]
        return out

    def _toggle_pause_button(self) -> None:
        self.pacer.paused = not self.pacer.paused
        if not self.pacer.paused:
            self.pacer.restart()

    def _step_button(self) -> None:
        self.pacer.paused = True
        self.step()

    def _draw_controls(self, surf: pygame.Surface, rect: pygame.Rect) -> None:
        self.controls.draw(surf, rect, self._buttons())

    # the controls bar's state, as the window's tests and the Esc key reach it
    @property
    def buttons(self) -> list[Button]:
        return self.controls.buttons

    @property
    def hidden_buttons(self) -> list[Button]:
        return self.controls.hidden

    @property
    def show_menu(self) -> bool:
        return self.controls.menu_open

    @show_menu.setter
    def show_menu(self, value: bool) -> None:
        self.controls.menu_open = value

    def _menu_rows(self) -> list[tuple[Button, pygame.Rect]]:
        return self.controls.menu_rows()

    def _menu_click(self, pos) -> None:
        self.controls.menu_click(pos)

    def _draw_menu(self, surf: pygame.Surface) -> None:
        self.controls.draw_menu(surf)

    def _draw_tune_panel(self, surf: pygame.Surface, rect: pygame.Rect) -> None:
        """No fish followed: how to follow one, the live settings as of the tick shown, the legends."""
        live = self.shown.kind == "live"
        draw_tune_panel(surf, rect, self.sliders if live else [], self.shown.world.cfg if live else None,
                        self.show_heat)

    def _behaviour(self) -> tuple[float | None, int]:
        """(behaviour score, plans seen) of the followed fish (see fish.personality)."""
        if self.selected is None or self.selected >= len(self.goal_counts):
            return None, 0
        counts = self.goal_counts[self.selected]
        traits = self.shown.fish(self.selected).traits.values()
        return behaviour_score(counts, list(traits), self.goal_counts.sum(axis=0)), int(counts[1:].sum())

    # ------------------------------------------------------------ ask a fish (ui/ask.py)

    @property
    def why(self) -> dict | None:
        return self.asking.why

    @why.setter
    def why(self, value: dict | None) -> None:
        self.asking.why = value

    @property
    def typing(self) -> str | None:
        return self.asking.typing

    @typing.setter
    def typing(self, value: str | None) -> None:
        self.asking.typing = value

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
        self.asking.again(self.selected, last, self.cfg)  # type: ignore[arg-type]

    def _why_lines(self) -> list[tuple[str, tuple]] | None:
        return self.asking.lines(self.selected)

    def _type(self, event) -> None:
        question = self.asking.type_key(event)
        if question:
            self.ask_why(question)
            if self.why is not None:
                self.why["typed"] = True

    def _draw_charts(self, surf: pygame.Surface, rect: pygame.Rect) -> None:
        rec = self.replay
        if rec is not None and self.fork is None:
            draw_charts(surf, rect, rec.curves(), cursor=self.tick, x_range=(rec.first_tick, rec.last_tick))
            return
        data = {k: (np.array([p[0] for p in pts], np.float64), np.array([p[1] for p in pts], np.float64))
                for k, pts in self.series.points.items()}
        draw_charts(surf, rect, data)

    def _heat(self):
        return self.shown.heat()

    alarm = False  # the message is an alarm (a replay that diverged): drawn as a banner
    _diverged: object = None  # the session that left its recording (it is not stepped on)
    _message = ""

    @property
    def message(self) -> str:
        """The footer's line: what the last command did (or an alarm, see :attr:`alarm`)."""
        return self._message

    @message.setter
    def message(self, text: str) -> None:
        self._message, self.alarm = text, False

    def _draw_footer(self, surf, rect) -> None:
        if self.alarm and self.message:
            banner = pygame.Rect(rect.x, rect.y - 6, rect.w, rect.h + 6)
            pygame.draw.rect(surf, (90, 20, 24), banner)
            surf.blit(theme.fit(self.message, 18, rect.w - 20, theme.INK, bold=True), (rect.x + 10, rect.y))
            return
        alerts = self._metrics().get("alerts", [])
        text = self.message or "H: keys   click: follow a fish   F: fork   space: pause   +/-: speed"
        room = rect.w - 20
        if alerts:  # the alert on the right, at most half the line; the message fits in what is left
            a = theme.fit("ALERT: " + "; ".join(alerts), 18, rect.w // 2, theme.BAD)
            surf.blit(a, (rect.right - a.get_width() - 10, rect.y + 3))
            room -= a.get_width() + 20
        surf.blit(theme.fit(text, 18, room, theme.DIM), (rect.x + 10, rect.y + 3))

    def _draw_live_curve(self, surf, rect) -> None:
        if self.fork is None:
            return
        d = np.array(self.fork.curve)
        cells = d[-200:, _CELLS]
        a = theme.text(f"divergence: {int(cells[-1])} fish in another cell", 18, theme.BAD)
        surf.blit(a, (rect.right - a.get_width() - 10, rect.y - 20))

    def _draw_ascii(self, surf, rect) -> None:
        """The terminal view's characters over the tank (rendered once per tick)."""
        key = (self.tick, rect.size, self.mode)
        if getattr(self, "_ascii_key", None) != key:
            lines = ascii_view.render(self.shown.snapshot()).split("\n")
            size = max(8, min(16, rect.h // max(1, len(lines))))
            layer = pygame.Surface(rect.size, pygame.SRCALPHA)
            layer.fill((0, 0, 0, 210))
            font = theme.mono(size)
            for k, line in enumerate(lines):
                layer.blit(font.render(line, False, theme.GOOD), (6, 4 + k * size))
            self._ascii_key, self._ascii_layer = key, layer
        surf.blit(self._ascii_layer, rect)



# Every key of the aquarium window and what it does (the help overlay lists them: ui/panels.HELP).
KEYS: dict[int, Callable[[AquariumScene, Any], None]] = {
    pygame.K_COMMA: AquariumScene._back_one,
    **dict.fromkeys((pygame.K_TAB, pygame.K_RIGHT, pygame.K_DOWN, pygame.K_LEFT, pygame.K_UP),
                    AquariumScene._next_fish),
    pygame.K_ESCAPE: lambda s, e: s._escape(),
    pygame.K_v: lambda s, e: s._toggle("show_fov"),
    pygame.K_m: lambda s, e: s._toggle("show_heat"),
    pygame.K_a: lambda s, e: s._toggle("show_ascii"),
    pygame.K_h: lambda s, e: s._toggle("show_help"),
    pygame.K_c: lambda s, e: s._toggle("show_charts"),
    pygame.K_f: AquariumScene._fork_key,
    pygame.K_o: lambda s, e: s.end_fork(),
    pygame.K_n: AquariumScene._now_key,
    pygame.K_k: lambda s, e: s._toggle_record(),
    pygame.K_l: lambda s, e: s._open_picker(),
    pygame.K_d: lambda s, e: s.cycle_tool(),
    pygame.K_u: AquariumScene._current_key,
    pygame.K_z: lambda s, e: s.reset_zoom(),
    pygame.K_r: lambda s, e: s.reset(s._new_seed() if e.mod & pygame.KMOD_SHIFT else None),
    pygame.K_i: lambda s, e: s.ask_why(),
    pygame.K_g: lambda s, e: s.ask_again(),
    pygame.K_t: AquariumScene._type_key,
}
