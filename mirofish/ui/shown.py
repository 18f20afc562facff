"""The tank a window shows, as of the tick on screen, and the commands that move it.

:class:`ShownTank` is the aquarium window's model side: the navigator (which session is
shown: live, its past, a recording, a fork), the pace, and everything the window derives
from the session for the tick on screen — the tank view and the one before (for smooth
motion), each fish's energy history, the HUD's sparklines, the charts' series, the
timeline, the live sliders, the footer's message. Each command (step, seek, back to now,
fork, back to the original, keep, open a recording, reset) makes the navigator's move and
brings these along, so that after going back every panel shows the tank as of the tick on
screen. The drawing and the input are the scene's (scenes/aquarium/scene.py).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..brains.base import TIERS, status_name
from ..config import Config
from ..fish.triggers import ended_early
from ..frame import Frame
from ..interventions import InterventionError
from ..interventions import describe as describe_iv
from ..observe.groups import groups_now
from ..observe.recording import RecordingError
from ..observe.school_now import school_now, with_school
from ..pacing import Pacer, clamp_speed
from ..session import ForkSession, LiveSession, ReplaySession, Session
from ..session.influence_marks import InfluenceMarks, Mark, for_recording
from ..session.navigator import Navigator, Refused
from ..snapshot import TankView
from .charts import Series, group_key
from .panels import Hud, Timeline
from .tankpane import TankPane
from .tune import tune_sliders
from .widgets import Slider

HISTORY = 160  # ticks of energy history per fish (follow panel sparkline)


class ShownTank:
    """The session shown and what the window keeps of it for the tick on screen."""

    alarm = False  # the message is an alarm (a replay that diverged): drawn as a banner

    def __init__(self, session: Session):
        self.nav = Navigator(session)
        self.pacer = Pacer(session.cfg.world.tick_seconds, session.cfg.engine.speed)
        self.pane = TankPane(session.terrain())
        self.hud, self.series = Hud(), Series()
        # each recording's influence marks (or a problem with the study beside it), read once
        self._influence: dict[str, tuple[InfluenceMarks | None, str | None]] = {}
        self.influence_note = ""  # a problem with the influence study beside a recording (one line)
        self._fork_marks: list[int] = []  # the ticks of the forks made in this window: marked across seeks
        self.timeline = self._new_timeline()
        self.selected: int | None = None
        self._message, self.saves = "", Path("saves")
        self._message_tick = 0
        self._window_past: tuple | None = None  # what the window showed at a fork's tick (O restores it)
        self._live_series: Series | None = None  # the live tank's charts while its past or a recording is shown
        self._pending_cfg = session.cfg  # settings that apply at the next reset (fish count)
        self.sliders: list[Slider] = self._make_sliders()
        self._reset_views()
        if self.influence_said():
            self.message = self.influence_said()

    @property
    def session(self) -> Session:
        return self.nav.session

    @property
    def fork(self) -> ForkSession | None:
        return self.nav.fork

    @property
    def shown(self) -> Session:
        return self.nav.shown

    @property
    def replay(self) -> ReplaySession | None:
        return self.nav.replay

    @property
    def live_home(self) -> LiveSession | None:
        return self.nav.live_home

    @property
    def cfg(self) -> Config:
        return self.nav.cfg

    mode = property(lambda self: self.nav.mode)

    renderer = property(lambda self: self.pane.renderer)

    tick = property(lambda self: self.nav.shown.tick)

    speed = property(lambda self: self.pacer.speed)

    @property
    def last_decision(self) -> dict[int, dict]:
        """Each fish's last decision before the tick shown, as the panel words it (asked of the
        session shown: never one the window drew in a discarded branch or after a seek)."""
        words = self.shown.plans.describe  # the tank's own plan table (its run's registry)
        return {f: {"tick": d["tick"], "action": words(d["goal"], d["param"], d["horizon"]),
                    "tier": TIERS[d["tier"]], "thought": d["thought"],
                    "reason": status_name(d["status"]) if d["status"] else None, "call": d["call"],
                    "ended_by": ended_early(d.get("ended", -1))}
                for f, d in self.shown.decisions().last.items()}

    @property
    def goal_counts(self) -> np.ndarray:
        """Plans per fish by goal up to the tick shown (the behaviour score's counts)."""
        return self.shown.decisions().counts

    @property
    def message(self) -> str:
        """The footer's line: what the last command did (or an alarm, see :attr:`alarm`)."""
        return self._message

    @message.setter
    def message(self, text: str) -> None:
        self._message, self.alarm = text, False
        nav = getattr(self, "nav", None)
        self._message_tick = nav.shown.tick if nav is not None else 0  # said at this tick

    STALE_TICKS = 20  # a message is about its moment: it goes once the tank has moved on this far

    def drop_stale_message(self) -> None:
        """The footer's message goes when the tick shown is :data:`STALE_TICKS` past (or before)
        the tick it was said at — "now: t408" is not true at t432; an alarm stays."""
        if self._message and not self.alarm and abs(self.tick - self._message_tick) >= self.STALE_TICKS:
            self._message = ""

    def _new_timeline(self) -> Timeline | None:
        """A replay's timeline (with the marks of an influence study of its recording, if any), or
        the live tank's over its kept past (None: it keeps none)."""
        forks = [(t, "fork") for t in self._fork_marks]  # the forks made here: they stay marked
        if self.nav.replay is not None:
            r = self.nav.replay
            made = [m for m in forks if r.first_tick <= m[0] <= r.last_tick and m not in r.markers()]
            return Timeline(r.first_tick, r.last_tick, r.markers() + made, influence=self._influence_of(r))
        live = self.nav.showing_live
        rng = live.past_range() if live is not None else None
        return Timeline(rng[0], rng[1], [m for m in forks if rng[0] <= m[0] <= rng[1]]) if rng is not None else None

    def _influence_of(self, replay: ReplaySession) -> InfluenceMarks | None:
        """The influence study's marks for the recording ``replay`` plays: the one the command line
        gave (``--influence``) or the one beside it, read once per recording (a problem with the
        one beside it: :attr:`influence_note` says it, the footer shows it)."""
        path = getattr(replay.recording, "path", None)
        if path is None:
            return None
        key = str(path)
        if key not in self._influence:
            self._influence[key] = for_recording(path, (replay.first_tick, replay.last_tick, replay.cfg.fish.slots))
        marks, problem = self._influence[key]
        self.influence_note = problem or ""
        return marks

    def influence_said(self, short: bool = False) -> str:
        """The footer's word on the timeline's influence marks ("": there are none)."""
        influence = self.timeline.influence if self.timeline is not None else None
        if influence is None:
            return self.influence_note
        n = len(influence.pivotal)
        if n == 0:
            what = "no pivotal decision; the strongest ones marked faintly on the timeline"
        else:
            what = f"{n} pivotal decision{'s' if n != 1 else ''} marked amber on the timeline"
        if short:
            return f"influence study: {what} (hover one)"
        return f"influence on {influence.outcome}: {what}; hover a mark, click it to fork the strongest alternative"

    def open_mark(self, mark: Mark) -> None:
        """A click on an influence mark: the replay at the decision's tick, its fish followed and
        forked with the study's strongest alternative (as F and a plan would; O returns). The
        tank waits at the fork tick (Space plays the branch)."""
        if self.fork is not None:
            self.end_fork()
        self.pacer.paused = True
        self.seek(mark.tick)
        if self.tick != mark.tick or self.alarm:  # the seek was refused or the recording drifted: it said why
            return
        self.selected = mark.fish
        self.pane.centred = True
        if not mark.alternative:
            self.message = f"t{mark.tick} fish {mark.fish}: the influence study tested no alternative here"
            return
        self.start_fork(mark.alternative)
        if self.fork is None:  # refused: the message says why
            return
        self.message = (f"t{mark.tick} fish {mark.fish}: forked with {mark.alternative} — the influence study's "
                        f"strongest alternative (Space plays the branch, O returns to the original)")

    def _reset_views(self) -> None:
        self.view: TankView = self.shown.view()
        self.prev: TankView | None = None
        self.energy_hist = np.repeat(self.view.energy[:, None] / 100.0, HISTORY, axis=1)
        self._since_tick = 0.0

    def _new_tank(self) -> None:
        """Another session is shown: its terrain, its timeline, fresh sparklines and views."""
        self.pane.new_tank(self.session.terrain())
        old, self.timeline = self.timeline, self._new_timeline()
        if old is not None and self.timeline is not None:  # a drag that went back goes on, on the same bar
            self.timeline.dragging, self.timeline.rect = old.dragging, old.rect
        self.hud = Hud()
        self._reset_views()

    def _alarm(self, exc: Exception) -> None:
        self.pacer.paused = True
        self.message, self.alarm = str(exc), True

    def set_speed(self, speed: float) -> None:
        self.pacer.speed = clamp_speed(speed)

    def step(self) -> Frame | None:
        """One tick of whatever is shown (a fork steps its ghost too)."""
        self.prev = self.view
        try:
            frame = self.nav.step()
        except RecordingError as exc:  # a replay that drifts from its recording stops and says where
            self._alarm(exc)
            return None
        if frame is None:  # the end of a recording (or where it left it)
            playing = not self.pacer.paused
            self.pacer.paused = True
            if self.nav.showing_own_past() and self.fork is None and self.nav.diverged is not self.shown:
                self.to_now()  # the past has caught up with the live tank: it goes on live
                self.pacer.paused = not playing
            return None
        self.view = self.shown.view()
        refused = self.shown.take_refused()  # a click that could not apply when its tick came
        if refused:
            self.message = refused[-1]
        self.energy_hist = np.roll(self.energy_hist, -1, axis=1)
        self.energy_hist[:, -1] = self.view.energy / 100.0
        metrics = self._push_metrics()
        if frame.tick % self.cfg.metrics.sample_every == 0:
            # the fish in the water, as the metric counts them (not the empty spare slots): the live
            # curve and the recording's are one curve
            here = self.view.energy if self.view.present is None else self.view.energy[self.view.present]
            values = {**metrics, "mean_energy": int(here.sum()) / (100.0 * max(1, len(here)))}
            for _, name, n, energy, school in groups_now(self.cfg, self.view, self.shown.metrics):
                values[group_key(name, "mean_energy")] = energy  # a mixed tank's groups' lines
                values[group_key(name, "schooling_degree")] = school
                if "fish_in_water" in metrics:  # a tank with species: each group's population
                    values[group_key(name, "fish_in_water")] = n
            self.series.add(frame.tick + 1, values)
        return frame

    def seek(self, tick: int) -> None:
        was, drifted = self.session, None
        try:
            moved = self.nav.seek(tick)
        except Refused as exc:
            self.message = str(exc)
            return
        except RecordingError as exc:
            drifted, moved = exc, True
        if self.session is not was:  # into the live tank's past: it waits meanwhile
            self._live_series = copy.deepcopy(self.series)  # the live tank's, for when it is shown again
            self.pacer.paused = True
            self._new_tank()
            self.message = ("the tank's past: Space plays on (it becomes live again at now), F forks, "
                            "N returns to now, K keeps it as a recording")
        if drifted is not None:
            self._alarm(drifted)
        if moved:
            self.hud = Hud()  # the HUD's sparklines start again from the tick shown
            self.series.cut(self.tick)  # and the charts end there
            self._reset_views()
            self._push_metrics()
            if self.session is was and not self.alarm:
                self.message = f"t{self.tick} (Space plays, F forks)"

    def to_now(self) -> None:
        """Back to the live tank as it is now (from its past or an opened recording)."""
        if self.live_home is None:
            self.message = "N returns to the live tank from its past or a recording (this is it)"
            return
        if self.fork is not None:
            self.end_fork()
        live = self.nav.to_now()
        if self._live_series is not None:  # the charts as they were at now (the past's points go)
            self.series, self._live_series = self._live_series, None
        self.pane.new_tank(live.terrain())
        self.timeline = self._new_timeline()
        self.sliders = self._make_sliders()
        self.hud = Hud()
        self._reset_views()
        self._push_metrics()
        self.message = f"now: t{live.tick} (live)"

    def keep(self) -> None:
        """Keep the live tank's recent past as a recording in saves/ and go on recording ("Keep this")."""
        self._say(lambda: self.nav.keep(self.saves))
        self._past_reopened()

    def toggle_record(self) -> None:
        """K / the Record button: keep the recent past and record on (Keep this), or stop. Stopping
        while the past is shown returns to now: the past shown was the recording just closed."""
        live = self.nav.live_tank
        if live is not None and live.is_recording and self.nav.showing_own_past():
            self.to_now()  # the reader of the recording closes first: then closing it leaves no -wal/-shm files
            self._say(lambda: self.nav.toggle_record(self.saves))
            self.message = f"{self.message}; back to now (t{self.tick})"
            return
        self._say(lambda: self.nav.toggle_record(self.saves))
        self._past_reopened()

    def _past_reopened(self) -> None:
        """After Keep this while the past is shown, the past is read from the kept recording:
        its timeline and the tank at the tick shown."""
        if self.nav.showing_own_past():
            self._new_tank()
            self._push_metrics()

    def _say(self, move: Callable[[], str]) -> None:
        try:
            self.message = move()
        except Refused as exc:
            self.message = str(exc)

    def intervene(self, iv: dict) -> None:
        """A hands-on change to the tank shown (live or a fork), from its next tick."""
        try:
            self.nav.intervene(iv)
        except (Refused, InterventionError) as exc:
            self.message = str(exc)
            return
        self.message = f"{describe_iv(iv)} at t{self.tick}" + (" (paused: Space plays)" if self.pacer.paused else "")
        if self.pacer.paused:
            self.step()  # show it: a paused tank takes the one tick that applies it

    def start_fork(self, plan: str, replan: bool = False) -> None:
        """Swap the followed fish's plan (or give it one action) now and let the branch play live,
        the original as a ghost. ``plan`` is text :func:`~mirofish.fish.plans.parse_plan` reads."""
        window = (self.energy_hist.copy(), copy.deepcopy(self.series), copy.deepcopy(self.hud))
        try:
            self.message = self.nav.start_fork(self.selected, plan, replan)
        except Refused as exc:
            self.message = str(exc)
            return
        self._window_past = window  # what the window knew at the fork tick: O brings it back with the tank
        if self.fork is not None:
            self._fork_marks.append(self.fork.tick0)  # kept across seeks
            if self.timeline is not None:
                self.timeline.markers.append((self.fork.tick0, "fork"))
        self._reset_views()

    def end_fork(self) -> None:
        try:
            tick = self.nav.end_fork()
        except RecordingError as exc:
            self._alarm(exc)
            return
        if tick is None:
            return
        if self.session.can_seek:
            self.hud = Hud()
            self._reset_views()
            self._push_metrics()
        self.pacer.paused = True
        self.message = f"back to the original at the fork tick t{tick} (paused; Space plays)"
        self._reset_views()
        if self._window_past is not None:  # every panel as it was at the fork tick, not the branch's
            self.energy_hist, self.series, self.hud = self._window_past
            self._window_past = None

    def open_recording(self, path) -> None:
        """Show a recording; a live tank waits meanwhile (N returns to it)."""
        live_series = copy.deepcopy(self.series) if self.nav.showing_live is not None else None
        try:
            self.nav.open_recording(path)  # (a fork shown ends)
        except RecordingError as exc:
            self.message = str(exc)
            return
        self._window_past = None
        self._fork_marks = []  # another recording's timeline: the forks made on the last one are not its
        if live_series is not None:
            self._live_series = live_series
        self.series = Series()
        followed = self.selected
        self._new_tank()
        self.sliders, self.selected = [], None
        self.pacer.paused = True
        back = " · N: back to the live tank" if self.live_home is not None else ""
        follow = ""
        if followed is not None:  # the same id in the recording's tank, or said why not
            if followed < len(self.view.x) and self.view.in_water(followed):
                self.selected, follow = followed, f" · following fish {followed} in it"
            else:
                follow = f" · fish {followed} is not in this recording: following no one"
        self.message = f"replaying {path} (Space plays, drag the timeline to seek){follow}{back}"
        if self.influence_said(short=True):
            self.message = f"{self.message} · {self.influence_said(short=True)}"

    def reset(self, seed: int | None = None) -> None:
        """A fresh tank (live: with the settings that apply at a reset, and ``seed`` if given;
        replay: back to the first tick)."""
        if self.fork is not None:
            self.end_fork()
        if self.live_home is not None and self.replay is not None:  # back to its start (the live tank waits)
            self.seek(self.replay.first_tick)
            what = "the kept past" if self.nav.showing_own_past() else "the recording"
            self.message = f"t{self.tick}: the start of {what}"
            return
        self.nav.reset(seed, self._pending_cfg)
        self._fork_marks = []  # another tank: the forks of the last one are not its
        if self.nav.showing_live is not None:
            self.timeline = self._new_timeline()
            self.pane.new_tank(self.session.terrain())
        self.selected = None
        self.hud = Hud()
        self._reset_views()
        self.message = f"reset: seed {self.cfg.seed}, {self.cfg.fish.count} fish"

    def snapshot(self):
        return self.shown.snapshot()

    def close(self) -> None:
        self.nav.close()

    def _push_metrics(self) -> dict:
        """The HUD's values for the tick on screen: the metrics' summary, with the largest
        school's figures recomputed for this tick (:meth:`school`: the rings' fish)."""
        metrics = with_school(self.shown.metrics_summary(), self.school()[1])
        self.hud.push(metrics)
        return metrics

    def school(self) -> tuple[np.ndarray, dict[str, float]]:
        """The largest moving school of the tick on screen (its fish, its figures), computed once
        per view (observe/school_now.py: not the last metrics sample's, which fish have left)."""
        view = self.view
        cached = getattr(self, "_school", None)
        if cached is None or cached[0] is not view:
            cached = self._school = (view, *school_now(view, self.shown.metrics, self.shown.cfg))
        return cached[1], cached[2]

    def _make_sliders(self) -> list[Slider]:
        """Live settings (a ``tune`` intervention from the next tick) and two that apply at a reset."""
        if self.nav.showing_live is None:
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

    def new_seed(self) -> int:
        return (self.cfg.seed * 7919 + 104729 + int(time.time())) % (2**31 - 1)

    def toggle_pause(self) -> None:
        self.pacer.paused = not self.pacer.paused
        if not self.pacer.paused:
            self.pacer.restart()

    def step_paused(self) -> None:
        self.pacer.paused = True
        self.step()
