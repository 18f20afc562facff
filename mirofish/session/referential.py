"""The referential game as a session: what its window (:mod:`mirofish.ui.scenes.referential`) shows,
live or replayed, without the window.

The session owns the game's :class:`~mirofish.scenes.referential.experiment.Experiment`, one
round a step, and the charts' series drawn from it (success over the last 50 rounds, message
length against spelling the object out, the glossary's size; the last 300 rounds). Live, a
recorder (``--record``) keeps each round as it is played; replaying
(:meth:`ReferentialSession.replaying`, ``replay R.db``) the game is played again from its
recording, each round checked: ``step`` (False: the rounds are all played), ``seek(n)`` (the game
again from its start to round ``n``). A round the recording does not hold is a one-line
:class:`~mirofish.observe.recording.RecordingError` (the recording's ``ReplayDiverged``); the game
shown keeps the round played, as the window always showed. ``review(approve)`` approves or
rejects the first term waiting for a person (``--review``).

:meth:`~ReferentialSession.snapshot` is what the window draws, as a frozen
:class:`ReferentialShown`; its :meth:`~ReferentialShown.as_json` is the scene's JSON-ready state.

The session sits below the scenes and imports none of them: the game's model — its classes in
:mod:`mirofish.scenes.referential` — is handed to it as :class:`ReferentialParts` by whoever
opens it (the window).
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..observe.recording import RecordingError

if TYPE_CHECKING:  # (types only: the parts come from the caller)
    from ..scenes.referential.experiment import Experiment
    from ..scenes.referential.game import GameConfig, GameObject, Round
    from ..scenes.referential.glossary import Term
    from ..scenes.referential.recording import ReferentialRecorder, ReferentialRecording

__all__ = ["ObjectShown", "ReferentialParts", "ReferentialSession", "ReferentialShown", "RoundShown", "TermShown"]

CHART_ROUNDS = 300  # the rounds the charts show
WINDOW = 50  # the rounds the success and compression curves average over


@dataclass(frozen=True)
class ReferentialParts:
    """The game's model, as :mod:`mirofish.scenes.referential` has it: ``experiment``
    (``experiment.Experiment``: a game from its config) and ``config`` (``game.GameConfig``)."""

    experiment: Callable[[GameConfig], Experiment]
    config: Callable[..., GameConfig]


@dataclass(frozen=True)
class ObjectShown:
    """An object of a round: its values (one per attribute, in the game's order), this round's
    free-text detail (the ``templates`` option's) and its spelled-out description."""

    id: str
    values: tuple[str, ...]
    detail: str
    description: str

    def properties(self, names: list[str]) -> dict[str, str]:
        """Attribute → value (as the game's objects answer it)."""
        return dict(zip(names, self.values))


@dataclass(frozen=True)
class RoundShown:
    """The round played last: the target, the candidates, the message, the receiver's pick."""

    index: int
    target: ObjectShown
    candidates: tuple[ObjectShown, ...]
    message: str
    choice: str | None
    success: bool
    new_terms: tuple[str, ...]


@dataclass(frozen=True)
class TermShown:
    """A glossary term: what its sender means (``means``: the canonical meaning's values), what the
    receiver reads (``reads``: empty when it read nothing yet), whether they agree, and its figures."""

    term: str
    means: tuple[str, ...]
    reads: tuple[str, ...]
    agreed: bool
    tier: str
    usage: int
    success_rate: float
    stable_score: float
    status: str  # active, pending (waiting for a person), …
    proposed_by: str | None


@dataclass(frozen=True)
class ReferentialShown:
    """What the referential game's window draws (see the module doc)."""

    rounds: int  # rounds played
    last_round: int  # the recording's rounds (a replay), or the game's
    seed: int
    condition: str
    candidates: int
    agents: int  # agents playing now
    review: bool  # new terms wait for a person
    alarm_window: int
    names: tuple[str, ...]  # the attributes
    chance: float  # success by picking at random
    last: RoundShown | None  # the round played last (None: none since the start)
    success: tuple[float, ...]  # the charts' series, the last 300 rounds
    compression: tuple[float, ...]
    size: tuple[float, ...]
    terms: tuple[TermShown, ...]  # the active terms (most stable first), then the pending ones
    pending: tuple[TermShown, ...]  # the terms waiting for a person, the first to review first
    summary: Mapping[str, Any]  # the game's summary (the command's JSON)
    glossary: Mapping[str, Any]  # the glossary, term by term
    model_agents: bool
    recording: bool  # rounds kept as they are played (--record)
    replay: bool  # a recording played back

    def as_json(self) -> dict[str, Any]:
        """The scene's JSON-ready state: the game's summary and its glossary."""
        return {"summary": copy.deepcopy(dict(self.summary)), "glossary": copy.deepcopy(dict(self.glossary))}


def _object(obj: GameObject, names: tuple[str, ...]) -> ObjectShown:
    return ObjectShown(obj.id, tuple(obj.values), obj.detail, obj.describe(names))


def _term(t: Term) -> TermShown:
    return TermShown(t.term, tuple(t.canonical.values()), tuple(t.by_receiver.values()) if t.by_receiver else (),
                     t.agreed, t.tier, t.usage, t.success_rate, t.stable_score, t.status, t.proposed_by)


class ReferentialSession:
    """A referential game, live or replayed (see the module doc). ``experiment``: the game to
    play (None: the command's default, seed 0)."""

    def __init__(self, parts: ReferentialParts, experiment: Experiment | None = None,
                 recorder: ReferentialRecorder | None = None, recording: ReferentialRecording | None = None):
        self.parts = parts
        self.exp = experiment or parts.experiment(parts.config(seed=0))  # the command's default: 400 rounds
        self.recorder = recorder  # referential --record: each round kept as it is played
        self.recording = recording  # replay R.db: the rounds played again
        self.can_seek = recording is not None
        self.success: deque[float] = deque(maxlen=CHART_ROUNDS)
        self.compression: deque[float] = deque(maxlen=CHART_ROUNDS)
        self.size: deque[float] = deque(maxlen=CHART_ROUNDS)
        self.last: Round | None = None
        self._snap: ReferentialShown | None = None

    @classmethod
    def replaying(cls, parts: ReferentialParts, rec: ReferentialRecording) -> ReferentialSession:
        """A recording played back from its start, each round checked against it."""
        return cls(parts, rec.experiment(), recording=rec)

    @property
    def model_agents(self) -> bool:
        return self.exp.agents_kind == "llm"

    @property
    def last_round(self) -> int:
        """The rounds there are: the recording's, or the game's."""
        return len(self.recording.rounds) if self.recording is not None else self.exp.cfg.rounds

    def _changed(self) -> None:
        self._snap = None

    # -- stepping

    def step(self) -> bool:
        """One round (False: every round is played, none was). A replayed round that is not the
        recorded one raises RecordingError; it is played, but not charted."""
        if len(self.exp.rounds) >= self.last_round:
            return False
        try:
            self.last = self.exp.step()
        finally:
            self._changed()
        self.success.append(float(np.mean(self.exp.success[-WINDOW:])))
        msg, nat = zip(*self.exp.lengths[-WINDOW:])
        self.compression.append(sum(msg) / sum(nat))
        self.size.append(self.exp.glossary.size())
        return True

    def reset(self, seed: int) -> None:
        """The game again from its start: live, with ``seed``; a replay, its recording's."""
        cfg = self.exp.cfg.model_copy(update={"seed": seed})
        self.exp.close()
        self.exp = self.recording.experiment() if self.recording is not None else self.parts.experiment(cfg)
        for series in (self.success, self.compression, self.size):
            series.clear()
        self.last = None
        self._changed()

    def seek(self, n: int) -> None:
        """Round ``n``: the game played again from its start (the charts too). A round on the way
        that is not the recorded one does not stop it: the last one refused is raised at the end."""
        self.reset(self.exp.cfg.seed)
        refused: RecordingError | None = None
        for _ in range(max(0, min(n, self.last_round))):
            try:
                self.step()
            except RecordingError as exc:
                refused = exc
        if refused is not None:
            raise refused

    def review(self, approve: bool) -> tuple[str, bool] | None:
        """Approve or reject the first term waiting for a person: (the term, the verdict), or None
        when none waits."""
        waiting = self.exp.glossary.pending()
        if not waiting:
            return None
        self.exp.glossary.review(waiting[0].term, approve=approve)
        self._changed()
        return waiting[0].term, approve

    # -- what is shown

    def snapshot(self) -> ReferentialShown:
        if self._snap is None:
            self._snap = self._take()
        return self._snap

    def _take(self) -> ReferentialShown:
        exp, cfg = self.exp, self.exp.cfg
        summary = copy.deepcopy(exp.summary())
        agents = len(exp.present)  # (the third agent joins when its round comes: as a frame always asked)
        names = tuple(exp.game.names)
        r = self.last
        last = None if r is None else RoundShown(
            r.index, _object(r.target, names), tuple(_object(c, names) for c in r.candidates), r.message, r.choice,
            bool(r.success), tuple(r.new_terms))
        pending = tuple(_term(t) for t in exp.glossary.pending())
        active = tuple(_term(t) for t in sorted(exp.glossary.active(), key=lambda t: -t.stable_score))
        return ReferentialShown(len(exp.rounds), self.last_round, cfg.seed, cfg.condition, cfg.candidates, agents,
                                cfg.review, cfg.alarm_window, names, exp.game.chance, last, tuple(self.success),
                                tuple(self.compression), tuple(self.size), active + pending, pending, summary,
                                copy.deepcopy(exp.glossary.as_dict()), self.model_agents, self.recorder is not None,
                                self.recording is not None)

    def close(self) -> None:
        self.exp.close()
        if self.recorder is not None:
            self.recorder.close()  # every round played stays recorded
        if self.recording is not None:
            self.recording.close()
