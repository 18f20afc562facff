"""The negotiation as a session: what its window (:mod:`mirofish.ui.scenes.negotiation`) shows,
live or replayed, without the window.

The session sits below the scenes (core → brains → observe → session → scenes → ui/cli) and
imports none of them: the negotiation's model — its classes and functions in
:mod:`mirofish.scenes.negotiation` — is handed to it as :class:`NegotiationParts` by whoever
opens it (the window); the session builds, steps, records and replays the model with them.

Live, the session plays negotiation sessions one after another, one turn a step, all of them
learning with one repair bandit (``negotiation``); with a recorder (``--record``) each session
is written as it ends. Replaying (:meth:`NegotiationSession.replaying`, ``replay R.db``) it plays
a recording back, checked turn by turn: ``step``, ``seek(n)``, ``back``, ``session_by(±1)``,
``fork(strategy)`` at a repair turn (``check_fork`` says why not, before a strategy is chosen)
and ``original()``. A move the recording refuses is a one-line
:class:`~mirofish.observe.recording.RecordingError` (the recording's ``ReplayDiverged`` when a
turn is not the recorded one); the negotiation shown stays the one of the last move that went
through (a step that diverged has played its turn into it already, as the window always showed).

:meth:`~NegotiationSession.snapshot` is what the window draws, as a frozen
:class:`NegotiationShown`; its :meth:`~NegotiationShown.as_json` is the scene's JSON-ready state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..observe.recording import RecordingError
from .turns import Episodes

if TYPE_CHECKING:  # (types only: the parts come from the caller)
    from ..scenes.negotiation.dialogue import Bandit, Negotiation, Speaker, Turn
    from ..scenes.negotiation.recording import NegotiationRecorder, NegotiationRecording, NegotiationReplay
    from ..scenes.negotiation.world import Session as Deal

__all__ = ["ArmShown", "IssueShown", "NegotiationParts", "NegotiationSession", "NegotiationShown", "NotARepair",
           "OfferShown", "ReplayShown", "TurnShown"]

LAYERS = ("layer1", "layer2", "layer3")  # the Argent signals a turn may carry, as its badges [1] [2] [3]

SpeakersFor = Callable[[int], "Mapping[str, Speaker] | None"]  # session index → its negotiators (model agents)


@dataclass(frozen=True)
class NegotiationParts:
    """The negotiation's model, as :mod:`mirofish.scenes.negotiation` has it: ``negotiation``
    (``dialogue.Negotiation``), ``bandit`` (``dialogue.Bandit``), ``deal`` (``world.Session.draw``:
    a session's setup from its seed), ``session_seed`` (a run's seed and a session's index → that
    seed), ``replay`` (``recording.NegotiationReplay``) and ``turn_record`` (a turn as recorded)."""

    negotiation: type[Negotiation]
    bandit: type[Bandit]
    deal: Callable[[int], Deal]
    session_seed: Callable[[int, int], int]
    replay: type[NegotiationReplay]
    turn_record: Callable[[Turn], dict[str, Any]]


class NotARepair(RecordingError):
    """A fork asked for where the newest turn shown is not a repair; ``repairs``: the recorded
    session's repair turns."""

    def __init__(self, repairs: list[int]):
        self.repairs = repairs
        where = ", ".join(map(str, repairs)) or "none"
        super().__init__(f"a fork changes a repair: step to a repair turn first (repairs at turns {where})")


@dataclass(frozen=True)
class TurnShown:
    index: int
    speaker: str
    kind: str  # propose, accept, repair, calibrate, check, dispute, …
    text: str
    reply: str  # a repair: the other side's answer
    layers: tuple[str, ...]  # the signals it carried ("layer1" …)
    uncertainty: float
    strategy: str | None  # a repair: how


@dataclass(frozen=True)
class IssueShown:
    """A name on the grounding board ("support:premium"): each side's stated reading, agreed or not."""

    key: str
    readings: tuple[tuple[str, int], ...]  # (role, level) in the order they were stated
    grounded: bool


@dataclass(frozen=True)
class OfferShown:
    id: str  # "prop_7"
    proponent: str
    status: str  # pending, countered, accepted, rejected


@dataclass(frozen=True)
class ArmShown:
    """A repair strategy of the bandit: repairs scored, their average reward."""

    name: str
    pulls: int
    mean_reward: float


@dataclass(frozen=True)
class ReplayShown:
    """Where a replay is: recorded session ``session`` (``pos`` of ``sessions``), ``shown`` of its
    ``recorded`` turns played; ``last`` is the timeline's end; ``fork_point`` (turn, strategy, the
    recorded strategy) when the turns shown are a fork's, and ``differs_from`` the first of its
    turns that is not the recording's (None: the same so far)."""

    session: int
    pos: int
    sessions: int
    shown: int
    recorded: int
    last: int
    fork_point: tuple[int, str, str] | None
    differs_from: int | None


@dataclass(frozen=True)
class NegotiationShown:
    """What the negotiation's window draws (see the module doc)."""

    session_id: str  # the negotiation's own name ("neg_00042")
    index: int  # live: the session being played (0 …)
    turns: tuple[TurnShown, ...]
    issues: tuple[IssueShown, ...]  # sorted by key
    offers: tuple[OfferShown, ...]  # in the order they were made
    arms: tuple[ArmShown, ...]
    results: tuple[dict[str, Any], ...]  # live: the sessions finished so far
    repair: bool
    layers: int
    model_agents: bool
    recording: bool
    replay: ReplayShown | None
    tracker: str  # the grounding tracker as JSON text

    @property
    def deals(self) -> int:
        return sum(bool(r["agreement"]) for r in self.results)

    def as_json(self) -> dict[str, Any]:
        """The scene's JSON-ready state: the tracker, the finished sessions, the bandit."""
        return {"session": self.tracker, "results": list(self.results),
                "bandit": {a.name: {"pulls": a.pulls, "mean_reward": a.mean_reward} for a in self.arms}}


class NegotiationSession(Episodes["Negotiation", "Turn", NegotiationShown]):
    """A negotiation run, live or replayed (see the module doc)."""

    def __init__(self, parts: NegotiationParts, seed: int = 0, repair: bool = True,
                 speakers_for: SpeakersFor | None = None, layers: int = 3, recorder: NegotiationRecorder | None = None,
                 player: NegotiationReplay | None = None):
        self.parts = parts
        self.repair, self.speakers_for, self.layers = repair, speakers_for, layers
        self.recorder = recorder  # each session kept as it ends
        self.player = player  # a recording played back
        self.can_seek = player is not None
        self.bandit = parts.bandit()
        super().__init__(seed)

    @classmethod
    def replaying(cls, parts: NegotiationParts, rec: NegotiationRecording,
                  session: int | None = None) -> NegotiationSession:
        """Recorded session ``session`` (the first by default) at its start; RecordingError when
        the recording has no such session."""
        return cls(parts, int(rec.header.get("seed", 0)), bool(rec.header.get("repair", True)), None,
                   int(rec.header.get("layers", 3)), player=parts.replay(rec, session))

    @property
    def model_agents(self) -> bool:
        return self.speakers_for is not None

    # -- live

    def _begin(self, index: int) -> tuple[Negotiation, Iterator[Turn]]:
        speakers = self.speakers_for(index) if self.speakers_for else None
        if self.recorder is not None:
            speakers = self.recorder.begin(self.bandit, speakers)
        neg = self.parts.negotiation(self.parts.deal(self.parts.session_seed(self.seed, index)), self.repair,
                                     self.bandit, speakers=speakers, layers=self.layers)
        return neg, neg.iter_turns()

    def _start(self) -> None:
        if self.player is None:
            super()._start()
            return
        self.model, self._turns, self.finished = self.player.neg, iter(()), False
        self._changed()

    def _played(self, turn: Turn) -> None:
        if self.recorder is not None:
            self.recorder.turn(turn)

    def _ended(self, model: Negotiation) -> None:
        if self.recorder is not None:
            self.recorder.end(self.index, model)

    def step(self) -> bool:
        """One turn; a replay goes on to the next recorded session at a session's end (False:
        the recording's end)."""
        if self.player is None:
            return super().step()
        more = True

        def on(p: NegotiationReplay) -> None:
            nonlocal more
            more = p.step() is not None or p.session_by(+1)

        self._move(on)
        return more

    def reset(self, seed: int) -> None:
        """Live: a fresh run (a fresh bandit) with ``seed``; a replay: back to its session's start."""
        if self.player is not None:
            self.seek(0)
            return
        self.bandit = self.parts.bandit()
        super().reset(seed)

    # -- a replay's moves

    def _replay(self) -> NegotiationReplay:
        if self.player is None:
            raise RecordingError("a live negotiation has no recording to move in: replay one (replay R.db)")
        return self.player

    def _move(self, move: Callable[[NegotiationReplay], Any]) -> None:
        """A move in the recording; the negotiation shown changes only when it succeeded."""
        player = self._replay()
        try:
            move(player)
        finally:
            self._changed()  # (where the replay is — its session, its turn — is read as it is)
        self.model = player.neg

    def seek(self, n: int) -> None:
        """To turn ``n`` of the session shown (its first ``n`` turns re-played)."""
        self._move(lambda p: p.seek(n))

    def back(self) -> None:
        self._move(lambda p: p.back())

    def session_by(self, delta: int) -> bool:
        """To the previous / next recorded session (False when there is none)."""
        moved = False

        def on(p: NegotiationReplay) -> None:
            nonlocal moved
            moved = p.session_by(delta)

        self._move(on)
        return moved

    def check_fork(self) -> None:
        """:class:`NotARepair` unless the newest turn shown is a repair (a fork plays it again)."""
        player = self._replay()
        if not self.model.turns or self.model.turns[-1].kind != "repair":
            raise NotARepair(player.rec.repair_turns(player.index))

    def fork(self, strategy: str) -> None:
        """The newest turn shown — a repair — again with ``strategy``; the turns after are new."""
        self._move(lambda p: p.fork(strategy))

    def original(self) -> None:
        """After a fork: back to the recording, at the fork's turn."""
        self._move(lambda p: p.original())

    # -- what is shown

    def _take(self) -> NegotiationShown:
        neg, p = self.model, self.player
        turns = tuple(TurnShown(t.index, t.speaker, t.kind, t.text, t.reply, tuple(k for k in LAYERS if k in t.signals),
                                t.uncertainty, t.strategy) for t in neg.turns)
        issues = tuple(IssueShown(key, tuple(ent["attributes"].items()), ent["grounded"])
                       for key, ent in sorted(neg.tracker.entities.items(), key=lambda kv: kv[0]))
        offers = tuple(OfferShown(pid, prop["proponent"], prop["status"])
                       for pid, prop in neg.tracker.propositions.items())
        arms = tuple(ArmShown(name, int(s["pulls"]), s["mean_reward"]) for name, s in neg.bandit.stats().items())
        replay = None
        if p is not None:
            replay = ReplayShown(p.index, p.pos, len(p.order), p.shown, len(p.recorded), p.last, p.fork_point,
                                 self._differs_from(p))
        return NegotiationShown(neg.tracker.session, self.index, turns, issues, offers, arms, tuple(self.results),
                                self.repair, self.layers, self.model_agents, self.recorder is not None, replay,
                                neg.tracker.as_json())

    def _differs_from(self, p: NegotiationReplay) -> int | None:
        """A fork's first turn that is not the recording's (None: none so far, or no fork)."""
        if not p.fork_point:
            return None
        first = p.fork_point[0] + 1
        played = [self.parts.turn_record(x) for x in self.model.turns[first:]]
        recorded = p.recorded[first:first + len(played)]
        return next((first + k for k, (a, b) in enumerate(zip(played, recorded)) if a != b), None)

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()  # finished sessions stay recorded
        if self.player is not None:
            self.player.rec.close()
