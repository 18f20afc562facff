"""The aquarium scene: live tank, replay with a timeline, and forks with a ghost of the original.

It holds a session (:mod:`mirofish.session`: live or replay) and, while a fork is shown, a
fork session; it reads :class:`~mirofish.snapshot.TankView` and
:class:`~mirofish.snapshot.FishSnapshot` objects from them and changes the tank only
through commands — pause, speed, step, seek, fork, end fork, reset.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import numpy as np
import pygame

from ..brains.base import TIERS, status_name
from ..fish.personality import behaviour_score
from ..fish.plans import describe, parse_plan
from ..frame import Frame
from ..observe import ascii as ascii_view
from ..observe.recording import DIVERGENCE_COLUMNS
from ..pacing import Pacer, clamp_speed
from ..scenes.base import pacing_key
from ..session import ForkSession, LiveSession, ReplaySession, Session
from ..snapshot import TankView
from . import theme
from .charts import Series, draw_charts
from .layout import aquarium_layout
from .panels import FollowPanel, Hud, Timeline, draw_help, draw_legends
from .tank import TankRenderer
from .widgets import Button, Slider, lay_out_row

HISTORY = 160  # ticks of energy history per fish (follow panel sparkline)
_CELLS = 1 + DIVERGENCE_COLUMNS.index("cells_differ")  # columns of ForkSession.curve (tick first)


# The fork picker: nine plans on the number keys, the six single actions on letters.
FORK_PLANS = ("forage 60", "school 120", "explore north 30", "explore south 30", "explore west 30",
              "explore east 30", "rest 100 30", "keep_away crowd 8", "keep_away glass 8")
FORK_ACTION_LABELS = (("Q", "move_n"), ("W", "move_s"), ("E", "move_w"), ("R", "move_e"), ("T", "eat"),
                      ("Y", "rest"))
FORK_ACTION_KEYS = {getattr(pygame, f"K_{key.lower()}"): action for key, action in FORK_ACTION_LABELS}


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
        if isinstance(session, ReplaySession):
            self.timeline = Timeline(session.first_tick, session.last_tick, session.markers())
        self.selected: int | None = None
        self.show_fov, self.show_heat, self.show_ascii, self.show_help = True, False, False, False
        self.show_charts = False
        self.goal_counts = np.zeros((len(self.session.view().x), 6), np.int64)  # plans seen per fish
        self.why: dict | None = None  # {"fish", "lines", "future", "question"} while shown
        self.typing: str | None = None  # a question being typed to a model fish
        self.series = Series()
        self.picking_action = False
        self.picking_file: list[Path] | None = None  # the open-a-recording list, while shown
        self.message = ""
        self.last_decision: dict[int, dict] = {}
        self.saves = Path("saves")
        self._paused_before_pick = False
        self._fork_origin = None  # a live tank's state at the fork, for O
        self._window_past: tuple | None = None  # … and what the window showed then
        self._pending_cfg = self.cfg  # settings that apply at the next reset (fish count)
        self.rects: dict[str, pygame.Rect] = {}
        self.buttons: list[Button] = []
        self.hidden_buttons: list[Button] = []
        self.sliders: list[Slider] = self._make_sliders()
        self._reset_views()

    @classmethod
    def live(cls, cfg, cache=None) -> AquariumScene:
        """A live tank from ``cfg``, in realtime (the window's pace); ``cache``: a model
        brain's reply cache (``--reply-cache``)."""
        return cls(LiveSession(cfg, mode="realtime", cache=cache))

    # ------------------------------------------------------------ the session being shown

    @property
    def shown(self) -> Session:
        """The fork while one is shown, else the live or replay session."""
        return self.fork if self.fork is not None else self.session

    @property
    def tick(self) -> int:
        return self.shown.tick

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
        frame = self.shown.step()
        if frame is None:  # the end of a recording
            self.pacer.paused = True
            return None
        for b in frame.applied:
            np.add.at(self.goal_counts, (b.fish, b.goals.astype(np.intp)), 1)
            thoughts = b.thoughts or [""] * len(b)
            status = b.status.tolist() if b.status is not None else [0] * len(b)
            asked = {c["fish"]: c for c in b.calls or () if c.get("kind") == "decision"}
            for f, g, p, h, tier, th, st in zip(b.fish.tolist(), b.goals.tolist(), b.params.tolist(),
                                                b.horizons.tolist(), b.tier.tolist(), thoughts, status):
                self.last_decision[f] = {"tick": frame.tick, "action": describe(g, p, h), "tier": TIERS[tier],
                                         "thought": th, "reason": status_name(st) if st else None,
                                         "call": asked.get(f)}  # what its model saw and said
        self.view = self.shown.view()
        self.energy_hist = np.roll(self.energy_hist, -1, axis=1)
        self.energy_hist[:, -1] = self.view.energy / 100.0
        metrics = self._push_metrics()
        if frame.tick % self.cfg.metrics.sample_every == 0:
            self.series.add(frame.tick + 1, {**metrics, "mean_energy": float(self.view.energy.mean()) / 100})
        return frame

    def seek(self, tick: int) -> None:
        if not self.session.can_seek or self.fork is not None:
            return
        self.session.seek(tick)
        self._history_from_session()
        self._reset_views()
        self._push_metrics()

    def _history_from_session(self) -> None:
        """The followed fish's last decisions and plan counts as of the tick shown, asked of the
        replay (not the frames this window happened to draw before a seek); the HUD's sparklines
        start again from here."""
        asked = getattr(self.session, "decisions_before", None)
        if asked is None:
            return
        last, self.goal_counts = asked()
        self.last_decision = {f: {"tick": d["tick"], "action": describe(d["goal"], d["param"], d["horizon"]),
                                  "tier": TIERS[d["tier"]], "thought": d["thought"],
                                  "reason": status_name(d["status"]) if d["status"] else None, "call": d["call"]}
                              for f, d in last.items()}
        self.hud = Hud()

    def start_fork(self, plan: str) -> None:
        """Swap the followed fish's plan (or give it one action) now and let the branch play live,
        the original as a ghost. ``plan`` is text :func:`~mirofish.fish.plans.parse_plan` reads."""
        if self.selected is None:
            self.message = "select a fish first (click it), then F"
            return
        if self.session.kind == "live":
            self._fork_origin = self.session.mark()  # type: ignore[attr-defined]
            # what the window knew at the fork tick: O brings it back with the tank
            self._window_past = (copy.deepcopy(self.last_decision), self.goal_counts.copy(),
                                 self.energy_hist.copy(), copy.deepcopy(self.series), copy.deepcopy(self.hud))
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
        tick = self.fork.tick0
        self.fork.close()
        self.fork = None
        self.mode = self.session.kind
        if self.session.can_seek:
            self.seek(tick)
        elif self._fork_origin is not None:  # a live tank: back to where it was forked
            self.session.rewind(self._fork_origin)
            self._fork_origin = None
        self.pacer.paused = True
        self.message = f"back to the original at the fork tick t{tick} (paused; Space plays)"
        self._reset_views()
        if self._window_past is not None:  # every panel as it was at the fork tick, not the branch's
            self.last_decision, self.goal_counts, self.energy_hist, self.series, self.hud = self._window_past
            self._window_past = None

    # ------------------------------------------------------------ Scene protocol: model side

    def reset(self, seed: int | None = None) -> None:
        """A fresh tank (live: with the settings that apply at a reset, and ``seed`` if given;
        replay: back to the first tick)."""
        if self.fork is not None:
            self.end_fork()
        if isinstance(self.session, LiveSession):
            self.session.reset(seed, self._pending_cfg)
            self.cfg = self.session.cfg
            self.renderer = TankRenderer(self.session.terrain())
        else:
            self.session.reset(seed)
        self.selected = None
        self.last_decision.clear()
        self.goal_counts = np.zeros((len(self.session.view().x), 6), np.int64)
        self.hud = Hud()
        self._reset_views()
        self.message = f"reset: seed {self.cfg.seed}, {self.cfg.fish.count} fish"

    def snapshot(self):
        return self.shown.snapshot()

    def close(self) -> None:
        if self.fork is not None:
            self.fork.close()
        self.session.close()

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
        if self.picking_file is not None:
            self._pick_file(event)
            return
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1 and self.picking_action:
            self._pick_fork_click(event.pos)
            return
        for b in self.buttons:
            if b.handle(event):
                return
        if self.selected is None and isinstance(self.session, LiveSession) and self.fork is None:
            for sl in self.sliders:
                if sl.handle(event):
                    return
        if event.type == pygame.MOUSEWHEEL and self.rects.get("panel") is not None \
                and self.rects["panel"].collidepoint(theme.mouse_pos()):
            self.follow.scroll_by(-event.y * 40)
            return
        if self.timeline is not None and self.fork is None:
            tick = self.timeline.handle(event)
            if tick is not None:
                self.seek(tick)
                return
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            if self.renderer.rect.collidepoint(event.pos):
                self.selected = self.renderer.fish_at(event.pos, self.view)
        elif event.type == pygame.KEYDOWN:
            self._key(event)

    def _key(self, event) -> None:
        k, n = event.key, len(self.view.x)
        if self.typing is not None:
            self._type(event)
            return
        if self.picking_action:
            self.picking_action = False
            if pygame.K_1 <= k <= pygame.K_9:
                self.start_fork(FORK_PLANS[k - pygame.K_1])
            elif k in FORK_ACTION_KEYS:
                self.start_fork(FORK_ACTION_KEYS[k])
            else:
                self.message = "fork cancelled"
            self._end_pick()
            return
        if pacing_key(k, self.pacer, self.step):
            return
        if k == pygame.K_COMMA and self.session.can_seek and self.fork is None:
            self.pacer.paused = True
            self.seek(self.session.tick - 1)
        elif k in (pygame.K_TAB, pygame.K_RIGHT, pygame.K_DOWN):
            back = k == pygame.K_TAB and bool(event.mod & pygame.KMOD_SHIFT)
            self.selected = ((self.selected if self.selected is not None else -1) + (-1 if back else 1)) % n
        elif k in (pygame.K_LEFT, pygame.K_UP):
            self.selected = ((self.selected if self.selected is not None else 0) - 1) % n
        elif k == pygame.K_ESCAPE:
            if self.why is not None:
                self.why = None
            else:
                self.selected = None
        elif k == pygame.K_v:
            self.show_fov = not self.show_fov
        elif k == pygame.K_m:
            self.show_heat = not self.show_heat
        elif k == pygame.K_a:
            self.show_ascii = not self.show_ascii
        elif k == pygame.K_h:
            self.show_help = not self.show_help
        elif k == pygame.K_f:
            if self.mode == "fork":
                self.message = "already in a fork: O returns to the original first"
            elif self.selected is None:
                self.message = "select a fish first (click it), then F"
            else:
                self._begin_fork_pick()
        elif k == pygame.K_o and self.mode == "fork":
            self.end_fork()
        elif k == pygame.K_r:
            self.reset(None if not event.mod & pygame.KMOD_SHIFT else self._new_seed())
        elif k == pygame.K_c:
            self.show_charts = not self.show_charts
        elif k == pygame.K_i:
            self.ask_why()
        elif k == pygame.K_g:
            self.ask_again()
        elif k == pygame.K_t:
            if self.why is not None and self.why["future"] is not None:
                self.typing = ""
            else:  # never a silent key: say what T needs
                self.message = ("T types a question to a model fish (after I); this tank's brain is the embedded one, "
                                "which I explains with its numbers" if self.cfg.brain.kind != "llm"
                                else "follow a fish and press I first, then T types your own question")

    def update(self, dt: float) -> None:
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
        self.renderer.layout(r["tank"])
        self._draw_controls(surf, r["controls"])
        ghost = self.shown.ghost_view()
        heat = self._heat() if self.show_heat else None
        self.renderer.draw(surf, self.view, self.prev, getattr(self, "_alpha", 1.0), self.selected, self.show_fov,
                           heat, self.cfg.metrics.hotspot_cell, ghost)
        if self.show_ascii:
            self._draw_ascii(surf, r["tank"])
        if self.show_charts:
            self._draw_charts(surf, r["tank"])
        status = {"tick": self.tick, "speed": self.speed, "paused": self.pacer.paused,
                  "mode": {"live": "", "replay": f"REPLAY t{self.tick}",
                           "fork": "FORK: rings = the original's fish"}[self.mode]}
        self.hud.draw(surf, r["hud"], {}, status, self._brain())
        if r["panel"].w and self.selected is None:
            self._draw_tune_panel(surf, r["panel"])
        elif r["panel"].w:
            fish = self.shown.fish(self.selected) if self.selected is not None else None
            hist = self.energy_hist[self.selected] if self.selected is not None else []
            drift = self.shown.drift(self.selected) if self.selected is not None else None
            last = self.last_decision.get(self.selected) if self.selected is not None else None
            model = self.cfg.brain.kind == "llm"
            word_deed = self.shown.metrics.word_deed.fish(self.selected) if self.selected is not None else None
            self.follow.draw(surf, r["panel"], fish, hist, last,
                             self.view.max_energy / 100, drift, self.cfg.brain.drift_alert, self._why_lines(),
                             behaviour=self._behaviour(), text_drift_applies=model, word_deed=word_deed)
        if self.timeline is not None:
            if self.fork is not None:
                self.timeline.last = max(self.timeline.last, self.tick)
            curve = self.fork.curve if self.fork is not None else None
            self.timeline.draw(surf, r["timeline"], self.tick, curve)
        elif self.fork is not None and self.fork.curve:
            self._draw_live_curve(surf, r["footer"])
        self._draw_footer(surf, r["footer"])
        if self.picking_action:
            self._draw_picker(surf)
        if self.picking_file is not None:
            self._draw_file_picker(surf)
        if self.show_help:
            draw_help(surf)

    # ------------------------------------------------------------ controls

    def _make_sliders(self) -> list[Slider]:
        """Live settings (applied to the running tank) and one that applies at a reset."""
        if not isinstance(self.session, LiveSession):
            return []
        c = self.cfg

        def live(key: str):
            def apply(value: float) -> None:
                try:
                    self.session.tune(key, value)  # type: ignore[attr-defined]
                    self.cfg = self.session.cfg
                    self.message = f"{key} = {value:g} (now)"
                except ValueError as exc:
                    self.message = str(exc)
            return apply

        def at_reset(key: str, what: str):
            def apply(value: float) -> None:
                data = self._pending_cfg.model_dump()
                data["fish"][key] = int(value)
                self._pending_cfg = type(self.cfg).model_validate(data)
                self.message = f"{what} {int(value)} from the next reset (R)"
            return apply

        return [
            Slider("food per open cell per tick", 0.0, 0.003, c.food.spawn_rate, live("food.spawn_rate"), "{:.4f}"),
            Slider("school: alignment", 0.0, 15.0, c.steering.alignment, live("steering.alignment"), "{:.1f}"),
            Slider("school: cohesion", 0.0, 15.0, c.steering.cohesion, live("steering.cohesion"), "{:.1f}"),
            Slider("separation", 0.0, 10.0, c.steering.separation, live("steering.separation"), "{:.1f}"),
            Slider("fish at reset", 10, 240, c.fish.count, at_reset("count", "fish:"), "{:.0f}", step=1),
            Slider("mix at reset: loners … sociable", -50, 50, c.fish.sociability_shift,
                   at_reset("sociability_shift", "sociability shift"), "{:+.0f}", step=1),
        ]

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
        live = self.session
        if not isinstance(live, LiveSession):
            return
        if live.recorder is not None:
            path = live.stop_recording()
            self.message = f"recording saved: {path}  (O-pen it from the controls)"
            return
        from ..observe.recording import RecordingError

        path = self.saves / time.strftime("run-%Y%m%d-%H%M%S.db")
        try:
            live.start_recording(path)
            self.message = f"recording to {path}"
        except RecordingError as exc:
            self.message = str(exc)

    def _open_picker(self) -> None:
        files = sorted(self.saves.glob("*.db"), key=lambda p: p.stat().st_mtime, reverse=True)[:9]
        if not files:
            self.message = f"no recordings in {self.saves}/ yet (Rec starts one)"
            return
        self._paused_before_pick = self.pacer.paused
        self.pacer.paused = True
        self.picking_file = files

    def _pick_file(self, event) -> None:
        files = self.picking_file or []
        choice = None
        if event.type == pygame.KEYDOWN:
            if pygame.K_1 <= event.key < pygame.K_1 + len(files):
                choice = files[event.key - pygame.K_1]
            else:
                self.picking_file = None
                self._end_pick()
                return
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            for k, rect in enumerate(getattr(self, "_file_rows", [])):
                if rect.collidepoint(event.pos):
                    choice = files[k]
            if choice is None:
                self.picking_file = None
                self._end_pick()
                return
        if choice is not None:
            self.picking_file = None
            self.open_recording(choice)

    def open_recording(self, path) -> None:
        """Show a recording (the current tank is closed; its recording, if any, is saved)."""
        from ..observe.recording import RecordingError

        try:
            replay = ReplaySession(path)
        except RecordingError as exc:
            self.message = str(exc)
            return
        if self.fork is not None:
            self.end_fork()
        self.session.close()
        self.session, self.cfg, self.mode = replay, replay.cfg, "replay"
        self.renderer = TankRenderer(replay.terrain())
        self.timeline = Timeline(replay.first_tick, replay.last_tick, replay.markers())
        self.sliders = []
        self.selected = None
        self.goal_counts = np.zeros((len(replay.view().x), 6), np.int64)
        self.hud = Hud()
        self._reset_views()
        self.pacer.paused = True
        self.message = f"replaying {path} (Space plays, drag the timeline to seek)"

    def _buttons(self) -> list[Button]:
        paused = self.pacer.paused
        out = [Button("Play" if paused else "Pause", self._toggle_pause_button, "Space"),
               Button("Step", self._step_button, "."),
               Button("Slower", lambda: self.set_speed(self.speed / 2), "-"),
               Button(f"Faster ({self.speed:g}x)", lambda: self.set_speed(self.speed * 2), "+")]
        if isinstance(self.session, LiveSession) and self.fork is None:
            rec = self.session.recorder is not None
            out += [Button("Reset", lambda: self.reset(None), "R"),
                    Button("New seed", lambda: self.reset(self._new_seed()), "Shift+R"),
                    Button("Stop rec" if rec else "Record", self._toggle_record, "", active=rec)]
        elif self.fork is None:
            out += [Button("To start", lambda: self.reset(None), "R")]
        if self.fork is not None:
            out += [Button("Back to original", self.end_fork, "O")]
        elif self.selected is not None:
            out += [Button("Why?", self.ask_why, "I"), Button("Fork this fish", self._begin_fork_pick, "F")]
        out += [Button("Charts", lambda: setattr(self, "show_charts", not self.show_charts), "C",
                       active=self.show_charts),
                Button("Open recording", self._open_picker, ""),
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
        pygame.draw.rect(surf, theme.PANEL, rect)
        self.buttons = self._buttons()
        self.hidden_buttons = lay_out_row(self.buttons, rect.inflate(-16, 0))
        mouse = theme.mouse_pos() if pygame.display.get_init() else (-1, -1)
        for b in self.buttons:
            if b.rect.w:
                b.draw(surf, b.rect.collidepoint(mouse))
        if self.hidden_buttons:
            more = theme.text("…", 22, theme.DIM)
            surf.blit(more, (rect.right - more.get_width() - 6, rect.y + 6))

    def _draw_tune_panel(self, surf: pygame.Surface, rect: pygame.Rect) -> None:
        """No fish followed: how to follow one, the live settings, and the legends."""
        pygame.draw.rect(surf, theme.PANEL, rect)
        pygame.draw.line(surf, theme.PANEL_EDGE, rect.topleft, rect.bottomleft)
        x, y, w = rect.x + 16, rect.y + 12, rect.w - 32
        for line in ("Click a fish to follow it (Tab: next).", "H: all keys."):
            surf.blit(theme.fit(line, 19, w, theme.DIM), (x, y))
            y += 22
        y += 8
        if self.sliders:
            surf.blit(theme.fit("Tune the tank", 22, w, theme.INK, bold=True), (x, y))
            y += 26
            for sl in self.sliders:
                sl.rect = pygame.Rect(x, y, w, 34)
                if sl.rect.bottom < rect.bottom - 150:
                    sl.draw(surf)
                else:
                    sl.rect = pygame.Rect(0, 0, 0, 0)
                y += 40
            live = self.session
            if isinstance(live, LiveSession) and live.recorder is not None:
                surf.blit(theme.fit("recording: stop it to tune", 15, w, theme.WARN), (x, y))
                y += 18
        y += 6
        y = draw_legends(surf, pygame.Rect(x, y, w, rect.bottom - y - 8), self.show_heat)

    def _behaviour(self) -> tuple[float | None, int]:
        """(behaviour score, plans seen) of the followed fish (see fish.personality)."""
        if self.selected is None or self.selected >= len(self.goal_counts):
            return None, 0
        counts = self.goal_counts[self.selected]
        traits = self.shown.fish(self.selected).traits.values()
        return behaviour_score(counts, list(traits), self.goal_counts.sum(axis=0)), int(counts[1:].sum())

    # ------------------------------------------------------------ ask a fish

    def ask_why(self, question: str = "Why are you doing this?") -> None:
        """Explain the followed fish's plan: the planner's reasons now, and with a model brain
        the model's own answer in the fish's persona (asked without blocking the window)."""
        if self.selected is None:
            self.message = "follow a fish first (click it), then I asks it why"
            return
        fish = self.selected
        self.why = {"fish": fish, "lines": self.shown.explain(fish), "future": self.shown.ask(fish, question),
                    "question": question}

    def ask_again(self) -> None:
        """Send the followed fish's last model request again, as it was sent (live, replay or
        fork), and show the answer beside the one it got (without blocking the window)."""
        last = self.last_decision.get(self.selected) if self.selected is not None else None
        call = last.get("call") if last else None
        if last is None or call is None:
            self.message = ("follow a fish first (click it), then G asks its model again" if self.selected is None
                            else "no model request behind this fish's last decision (G needs a model brain)")
            return
        import concurrent.futures

        from ..session.reask import ask_exchange

        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirofish-ask-again")
        future = pool.submit(ask_exchange, call, call.get("_texts") or {}, self.cfg, None, None, 1, 60.0)
        pool.shutdown(wait=False)
        self.why = {"fish": self.selected, "again": future, "call": call, "tick": last["tick"], "lines": [],
                    "future": None, "question": ""}

    def _again_lines(self, why: dict) -> list[tuple[str, tuple]]:
        call, fut = why["call"], why["again"]
        out = [(f"Asked again: its request of t{why['tick']} (G again, Esc closes)", theme.INK),
               (f"it got: {call.get('reply')!r}  [{call.get('read')}]", theme.DIM)]
        if not fut.done():
            return [*out, (f"{call['model']} is thinking…", theme.WARN)]
        try:
            answer = fut.result()[0]
        except Exception as exc:  # noqa: BLE001 — a server that is gone is shown, not raised
            return [*out, (f"no answer: {exc}", theme.BAD)]
        same = answer.get("reply") == call.get("reply")
        colour = theme.ACCENT if answer["legal"] else theme.BAD
        out.append((f"now: {answer.get('reply')!r}  [{answer['read']}]", colour))
        out.append(("the same answer" if same else "a different answer", theme.GOOD if same else theme.WARN))
        return out

    def _why_lines(self) -> list[tuple[str, tuple]] | None:
        why = self.why
        if why is None or why["fish"] != self.selected:
            return None
        if "again" in why:
            return self._again_lines(why)
        out = [("Why? (I asks again, Esc closes)", theme.INK)]
        out += [(line, theme.DIM) for line in why["lines"]]
        fut = why["future"]
        if fut is not None:
            out.append((f"you asked: {why['question']}", theme.FAINT))
            if not fut.done():
                out.append(("the model is thinking…", theme.WARN))
            else:
                answer = fut.result()
                out.append((f"\u201c{answer['text']}\u201d" if answer["text"] else
                            f"no answer ({answer['error']})", theme.ACCENT if answer["text"] else theme.BAD))
            if self.typing is None:
                out.append(("T: type your own question", theme.FAINT))
        if self.typing is not None:
            out.append((f"ask: {self.typing}_", theme.INK))
        return out

    def _type(self, event) -> None:
        """Typing a question to a model fish: Enter asks, Esc cancels."""
        if event.key == pygame.K_RETURN:
            question, self.typing = (self.typing or "").strip(), None
            if question:
                self.ask_why(question)
        elif event.key == pygame.K_ESCAPE:
            self.typing = None
        elif event.key == pygame.K_BACKSPACE:
            self.typing = (self.typing or "")[:-1]
        elif event.unicode and event.unicode.isprintable() and len(self.typing or "") < 160:
            self.typing = (self.typing or "") + event.unicode

    def _draw_charts(self, surf: pygame.Surface, rect: pygame.Rect) -> None:
        if isinstance(self.session, ReplaySession) and self.fork is None:
            rec = self.session
            draw_charts(surf, rect, rec.curves(), cursor=self.tick, x_range=(rec.first_tick, rec.last_tick))
            return
        data = {k: (np.array([p[0] for p in pts], np.float64), np.array([p[1] for p in pts], np.float64))
                for k, pts in self.series.points.items()}
        draw_charts(surf, rect, data)

    def _heat(self):
        return self.shown.heat()

    def _draw_footer(self, surf, rect) -> None:
        alerts = self._metrics().get("alerts", [])
        text = self.message or "H: keys   click: follow a fish   F: fork   space: pause   +/-: speed"
        surf.blit(theme.text(text, 18, theme.DIM), (rect.x + 10, rect.y + 3))
        if alerts:
            a = theme.text("ALERT: " + "; ".join(alerts), 18, theme.BAD)
            surf.blit(a, (rect.right - a.get_width() - 10, rect.y + 3))

    def _draw_live_curve(self, surf, rect) -> None:
        if self.fork is None:
            return
        d = np.array(self.fork.curve)
        cells = d[-200:, _CELLS]
        a = theme.text(f"divergence: {int(cells[-1])} fish in another cell", 18, theme.BAD)
        surf.blit(a, (rect.right - a.get_width() - 10, rect.y - 20))

    def _picker_rect(self, surf_rect: pygame.Rect) -> pygame.Rect:
        rect = pygame.Rect(0, 0, 560, 300)
        rect.center = surf_rect.center
        return rect

    def _pick_fork_click(self, pos) -> None:
        """A click on a line of the fork picker chooses it; elsewhere cancels."""
        rect = self._picker_rect(pygame.Rect(0, 0, *getattr(self, "_surf_size", (1920, 1080))))
        self.picking_action = False
        x, y = pos
        row = (y - rect.y - 62) // 23
        if rect.x + 20 <= x < rect.x + 330 and 0 <= row < len(FORK_PLANS):
            self.start_fork(FORK_PLANS[row])
        elif rect.x + 340 <= x < rect.right and 0 <= row < len(FORK_ACTION_LABELS):
            self.start_fork(FORK_ACTION_LABELS[row][1])
        else:
            self.message = "fork cancelled"
        self._end_pick()

    def _draw_picker(self, surf) -> None:
        rect = self._picker_rect(surf.get_rect())
        theme.overlay(surf, rect, theme.ACCENT)
        surf.blit(theme.text(f"Fork at t{self.tick}: what should fish {self.selected} do now?", 22, theme.INK,
                             bold=True), (rect.x + 16, rect.y + 12))
        surf.blit(theme.text("a new plan", 16, theme.FAINT), (rect.x + 30, rect.y + 42))
        for k, plan in enumerate(FORK_PLANS):
            surf.blit(theme.text(f"{k + 1}  {plan}", 19, theme.ACCENT), (rect.x + 30, rect.y + 62 + k * 23))
        surf.blit(theme.text("or one action", 16, theme.FAINT), (rect.x + 340, rect.y + 42))
        for k, (key, action) in enumerate(FORK_ACTION_LABELS):
            surf.blit(theme.text(f"{key}  {action}", 19, theme.ACCENT), (rect.x + 350, rect.y + 62 + k * 23))
        surf.blit(theme.text("any other key cancels", 16, theme.DIM), (rect.x + 350, rect.y + 270))
        surf.blit(theme.text("the tank waits while you choose", 16, theme.DIM), (rect.x + 30, rect.y + 270))

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

    def _draw_file_picker(self, surf) -> None:
        files = self.picking_file or []
        rect = pygame.Rect(0, 0, min(720, surf.get_width() - 40), 80 + 30 * len(files))
        rect.center = surf.get_rect().center
        theme.overlay(surf, rect, theme.ACCENT)
        surf.blit(theme.text("Open a recording (newest first)", 22, theme.INK, bold=True), (rect.x + 16, rect.y + 12))
        self._file_rows = []
        for k, path in enumerate(files):
            row = pygame.Rect(rect.x + 16, rect.y + 46 + 30 * k, rect.w - 32, 26)
            self._file_rows.append(row)
            stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
            surf.blit(theme.fit(f"{k + 1}  {path.name}   {stamp}   {path.stat().st_size / 1e6:.1f} MB", 19,
                                row.w, theme.ACCENT), row.topleft)
        surf.blit(theme.text("a number or a click opens it; any other key cancels", 16, theme.DIM),
                  (rect.x + 16, rect.bottom - 24))
