"""Which tank a window shows, and the moves between tanks — no drawing here.

A window shows one session at a time: a live tank, the live tank's recent past, a recording,
or a fork of any of them (its parent drawn as a ghost). :class:`Navigator` holds them and
makes the moves — back into the past, to a recording, back to now, fork, back to the
original, keep the past, reset — so the window (scenes/aquarium/scene.py) only draws what
:attr:`Navigator.shown` answers and says what a move did. A move that cannot be made raises
:class:`Refused` with the sentence the window shows.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, cast

from ..config import Config
from ..frame import Frame
from ..observe.recording import RecordingError
from .base import Session
from .fork import ForkSession
from .live import LiveSession
from .replay import ReplaySession


class Refused(Exception):
    """A move the navigator cannot make now; the message says why (one line)."""


class Navigator:
    """The session shown and the live tank waiting behind it (``live_home``)."""

    def __init__(self, session: Session):
        self.session = session
        self.fork: ForkSession | None = None
        self.live_home: LiveSession | None = None  # the live tank, paused, while its past or a recording is shown
        self.past_is_own = False  # the replay shown is the live tank's own past (not a recording)
        self.diverged: object = None  # the session that left its recording (it is not stepped on)

    # ------------------------------------------------------------ what is shown

    @property
    def shown(self) -> Session:
        """The fork while one is shown, else the live or replay session."""
        return self.fork if self.fork is not None else self.session

    @property
    def mode(self) -> str:
        """``live``, ``replay`` or ``fork``."""
        return "fork" if self.fork is not None else self.session.kind

    @property
    def cfg(self) -> Config:
        return self.session.cfg

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

    def showing_own_past(self) -> bool:
        return self.live_home is not None and self.past_is_own

    # ------------------------------------------------------------ time

    def step(self) -> Frame | None:
        """One tick of what is shown (None: stopped where it left its recording, or at its end);
        a replay that drifts from its recording raises RecordingError, once."""
        if self.diverged is self.shown:
            return None
        try:
            return self.shown.step()
        except RecordingError:
            self.diverged = self.shown
            raise

    def seek(self, tick: int) -> bool:
        """Show ``tick`` of the replay shown, or of the live tank's past (going back into it);
        False when nothing moved. A recording that drifts raises RecordingError."""
        if self.fork is not None:
            return False
        if self.showing_live is not None and (tick >= self.showing_live.tick or not self.go_back()):
            return False
        if not self.session.can_seek:
            return False
        try:
            self.session.seek(tick)
            self.diverged = None
        except RecordingError:
            self.diverged = self.session
            raise
        return True

    # ------------------------------------------------------------ the live tank's past, recordings

    def go_back(self) -> bool:
        """Show the live tank's recent past (it waits meanwhile); False without a live tank;
        :class:`Refused` when it keeps no past."""
        live = self.showing_live
        if live is None:
            return False
        past = live.past()
        if past is None:
            raise Refused("this tank keeps no past (record.history_minutes is 0)")
        self.show_replay(past, own=True)
        return True

    def show_replay(self, replay: ReplaySession, own: bool) -> None:
        """Show ``replay``; a live tank waits as ``live_home``."""
        if self.showing_live is not None:
            self.live_home = self.showing_live
        elif self.session is not self.live_home:
            self.session.close()
        self.past_is_own = own
        self.session = replay

    def open_recording(self, path: str | Path) -> None:
        """Show a recording (RecordingError when it cannot be read); a live tank waits."""
        replay = ReplaySession(path)
        if self.fork is not None:
            self.end_fork()
        self.show_replay(replay, own=False)

    def to_now(self) -> LiveSession:
        """Back to the live tank as it is now; :class:`Refused` when this is it."""
        if self.live_home is None:
            raise Refused("N returns to the live tank from its past or a recording (this is it)")
        if self.fork is not None:
            self.end_fork()
        self.session.close()
        live, self.live_home = self.live_home, None
        self.session = live
        return live

    def keep(self, saves: Path) -> str:
        """Keep the live tank's recent past as a recording in ``saves`` and go on recording."""
        live = self.live_tank
        if live is None:
            raise Refused("K keeps a live tank's past; this is a recording already")
        if self.fork is not None:
            raise Refused("O returns to the original first, then K keeps its past")
        if live.is_recording:
            raise Refused(f"already recording to {live.recorder.path} (Stop rec ends it)")  # type: ignore[union-attr]
        path = saves / time.strftime("kept-%Y%m%d-%H%M%S.db")
        shown = self.shown.tick if self.showing_own_past() else None
        try:
            if shown is not None:
                self.session.close()  # the past's reader: reopened on the kept file below
            first = (live.past_range() or (live.tick, live.tick))[0]
            path = live.keep(path)
        except RecordingError as exc:
            raise Refused(str(exc)) from None
        finally:
            if shown is not None:
                past = live.past()
                if past is not None:
                    self.session = past
                    past.seek(shown)
        return f"kept t{first}..t{live.tick} in {path}; recording goes on (Stop rec ends it)"

    def toggle_record(self, saves: Path) -> str:
        """Keep the recent past and record on (Keep this), or stop recording."""
        live = self.live_tank
        if live is None:
            raise Refused("K records a live tank; this is a recording already")
        if live.is_recording:
            path = live.stop_recording()
            return f"recording saved: {path} (L opens it); the recent past is kept again from t{live.tick}"
        return self.keep(saves)

    # ------------------------------------------------------------ changes

    def intervene(self, iv: dict[str, Any]) -> None:
        """A hands-on change to the tank shown (live or a fork), from its next tick
        (InterventionError for one that cannot be made)."""
        if self.shown.kind == "replay":
            raise Refused("a replay can't be changed: F forks it first (or N returns to the live tank)")
        self.shown.intervene(iv)

    def start_fork(self, fish: int | None, plan: str, replan: bool = False) -> str:
        """Swap ``fish``'s plan (or give it one action) now; the branch is shown, the original
        as its ghost. The plan holds for its horizon (``replan``: triggers may end it early)."""
        if fish is None:
            raise Refused("select a fish first (click it), then F")
        self.fork = self.session.fork(fish, plan, replan=replan)
        holds = "may re-plan on triggers" if replan else "holds it for its horizon"
        words = self.session.plans  # the tank's own plan table (its run's registry)
        return (f"fork: fish {fish} will {words.describe(*words.parse_plan(plan))} from t{self.fork.tick0} ({holds}); "
                f"O returns to the original")

    def end_fork(self) -> int | None:
        """The branch ends; the original is back at the fork tick (returned; None without a fork)."""
        if self.fork is None:
            return None
        tick = self.fork.back()
        self.fork = None
        if self.session.can_seek:
            self.seek(tick)
        return tick

    def reset(self, seed: int | None, cfg: Config) -> None:
        """A fresh live tank (``cfg`` with the settings tuned on it kept), or a replay from its start."""
        if self.fork is not None:
            self.end_fork()
        live = self.showing_live
        if live is None:
            self.session.reset(seed)
            return
        for key, value in live.tuned().items():
            section, name = key.split(".")
            cfg = cfg.model_copy(update={section: getattr(cfg, section).model_copy(update={name: value})})
        live.reset(seed, cfg)

    def close(self) -> None:
        if self.fork is not None:
            self.fork.close()
        self.session.close()
        if self.live_home is not None:
            self.live_home.close()
