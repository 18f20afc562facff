"""The aquarium scene: live tank, replay with a timeline, and forks with a ghost of the original.

It holds a session (:mod:`mirofish.session`: live or replay) and, while a fork is shown, a
fork session; it reads :class:`~mirofish.snapshot.TankView` and
:class:`~mirofish.snapshot.FishSnapshot` objects from them and changes the tank only
through commands — pause, speed, step, seek, fork, end fork, reset.
"""

from __future__ import annotations

import numpy as np
import pygame

from ..brains.base import TIERS, status_name
from ..fish.plans import describe, parse_plan
from ..frame import Frame
from ..observe import ascii as ascii_view
from ..observe.recording import DIVERGENCE_COLUMNS
from ..pacing import Pacer, clamp_speed
from ..scenes.base import pacing_key
from ..session import ForkSession, LiveSession, ReplaySession, Session
from ..snapshot import TankView
from . import theme
from .panels import FollowPanel, Hud, Timeline, draw_help
from .tank import TankRenderer

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
        self.picking_action = False
        self.message = ""
        self.last_decision: dict[int, dict] = {}
        self._reset_views()

    @classmethod
    def live(cls, cfg) -> AquariumScene:
        """A live tank from ``cfg``, in realtime (the window's pace)."""
        return cls(LiveSession(cfg, mode="realtime"))

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
            thoughts = b.thoughts or [""] * len(b)
            status = b.status.tolist() if b.status is not None else [0] * len(b)
            for f, g, p, h, tier, th, st in zip(b.fish.tolist(), b.goals.tolist(), b.params.tolist(),
                                                b.horizons.tolist(), b.tier.tolist(), thoughts, status):
                self.last_decision[f] = {"tick": frame.tick, "action": describe(g, p, h), "tier": TIERS[tier],
                                         "thought": th, "reason": status_name(st) if st else None}
        self.view = self.shown.view()
        self.energy_hist = np.roll(self.energy_hist, -1, axis=1)
        self.energy_hist[:, -1] = self.view.energy / 100.0
        self._push_metrics()
        return frame

    def seek(self, tick: int) -> None:
        if not self.session.can_seek or self.fork is not None:
            return
        self.session.seek(tick)
        self._reset_views()
        self._push_metrics()

    def start_fork(self, plan: str) -> None:
        """Swap the followed fish's plan (or give it one action) now and let the branch play live,
        the original as a ghost. ``plan`` is text :func:`~mirofish.fish.plans.parse_plan` reads."""
        if self.selected is None:
            self.message = "select a fish first (click it), then F"
            return
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
        self.message = "back to the original"
        self._reset_views()

    # ------------------------------------------------------------ Scene protocol: model side

    def reset(self, seed: int) -> None:
        if self.fork is not None:
            self.end_fork()
        self.session.reset(seed)
        self._reset_views()

    def snapshot(self):
        return self.shown.snapshot()

    def close(self) -> None:
        if self.fork is not None:
            self.fork.close()
        self.session.close()

    # ------------------------------------------------------------ Scene protocol: view side

    def _metrics(self) -> dict:
        return self.shown.metrics_summary()

    def _push_metrics(self) -> None:
        self.hud.push(self._metrics())

    def _brain(self) -> dict:
        return self.shown.brain_status()

    def handle_event(self, event) -> None:
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
        if self.picking_action:
            self.picking_action = False
            if pygame.K_1 <= k <= pygame.K_9:
                self.start_fork(FORK_PLANS[k - pygame.K_1])
            elif k in FORK_ACTION_KEYS:
                self.start_fork(FORK_ACTION_KEYS[k])
            else:
                self.message = "fork cancelled"
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
                self.picking_action = True
        elif k == pygame.K_o and self.mode == "fork":
            self.end_fork()

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
        w, h = size
        panel_w = FollowPanel.width if w >= 1100 else 0
        bottom = Timeline.height if self.timeline is not None else 0
        rects = {"hud": pygame.Rect(0, 0, w - panel_w, Hud.height),
                 "panel": pygame.Rect(w - panel_w, 0, panel_w, h),
                 "tank": pygame.Rect(8, Hud.height + 8, w - panel_w - 16, h - Hud.height - bottom - 30),
                 "timeline": pygame.Rect(0, h - bottom, w - panel_w, bottom),
                 "footer": pygame.Rect(0, h - bottom - 22, w - panel_w, 22)}
        return rects

    def draw(self, surf: pygame.Surface) -> None:
        surf.fill(theme.PANEL)
        r = self.layout(surf.get_size())
        self.renderer.layout(r["tank"])
        ghost = self.shown.ghost_view()
        heat = self._heat() if self.show_heat else None
        self.renderer.draw(surf, self.view, self.prev, getattr(self, "_alpha", 1.0), self.selected, self.show_fov,
                           heat, self.cfg.metrics.hotspot_cell, ghost)
        if self.show_ascii:
            self._draw_ascii(surf, r["tank"])
        status = {"tick": self.tick, "speed": self.speed, "paused": self.pacer.paused,
                  "mode": {"live": "", "replay": f"REPLAY t{self.tick}",
                           "fork": "FORK: rings = the original's fish"}[self.mode]}
        self.hud.draw(surf, r["hud"], {}, status, self._brain())
        if r["panel"].w:
            fish = self.shown.fish(self.selected) if self.selected is not None else None
            hist = self.energy_hist[self.selected] if self.selected is not None else []
            drift = self.shown.drift(self.selected) if self.selected is not None else None
            last = self.last_decision.get(self.selected) if self.selected is not None else None
            self.follow.draw(surf, r["panel"], fish, hist, last,
                             self.view.max_energy / 100, drift, self.cfg.brain.drift_alert)
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
        if self.show_help:
            draw_help(surf)

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

    def _draw_picker(self, surf) -> None:
        rect = pygame.Rect(0, 0, 560, 300)
        rect.center = surf.get_rect().center
        layer = pygame.Surface(rect.size, pygame.SRCALPHA)
        layer.fill((8, 16, 30, 240))
        surf.blit(layer, rect)
        pygame.draw.rect(surf, theme.ACCENT, rect, 1)
        surf.blit(theme.text(f"Fork: what should fish {self.selected} do now?", 22, theme.INK, bold=True),
                  (rect.x + 16, rect.y + 12))
        surf.blit(theme.text("a new plan", 16, theme.FAINT), (rect.x + 30, rect.y + 42))
        for k, plan in enumerate(FORK_PLANS):
            surf.blit(theme.text(f"{k + 1}  {plan}", 19, theme.ACCENT), (rect.x + 30, rect.y + 62 + k * 23))
        surf.blit(theme.text("or one action", 16, theme.FAINT), (rect.x + 340, rect.y + 42))
        for k, (key, action) in enumerate(FORK_ACTION_LABELS):
            surf.blit(theme.text(f"{key}  {action}", 19, theme.ACCENT), (rect.x + 350, rect.y + 62 + k * 23))
        surf.blit(theme.text("any other key cancels", 16, theme.DIM), (rect.x + 350, rect.y + 270))

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
