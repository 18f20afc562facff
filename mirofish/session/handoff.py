"""Argent's report chain as a session: what its window (:mod:`mirofish.ui.scenes.handoff`) shows,
without the window.

The session plays tasks one after another, one message a step: each task is a
:class:`~mirofish.scenes.handoff.chain.Chain` of the arm's signal layers, its brief drawn from the
seed and the task's index; a finished task's result is kept. :meth:`HandoffSession.snapshot` is
what the window draws, as a frozen :class:`HandoffShown` — the messages, what each agent believes
the task is against the brief, the drifts injected (caught, gone or carried), the arm's figures
over the tasks finished; its :meth:`~HandoffShown.as_json` is the scene's JSON-ready state.

The session sits below the scenes and imports none of them: the chain's model — its classes
and tables in :mod:`mirofish.scenes.handoff` — is handed to it as :class:`HandoffParts` by
whoever opens it (the window).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .turns import Episodes

if TYPE_CHECKING:  # (types only: the parts come from the caller)
    from ..scenes.handoff.brief import Brief
    from ..scenes.handoff.chain import Chain, Drift, Message

__all__ = ["DriftShown", "FiguresShown", "HandoffParts", "HandoffSession", "HandoffShown", "MessageShown",
           "MindShown"]

LAYERS = ("layer1", "layer2", "layer3")  # the Argent signals a message may carry, as its badges [1] [2] [3]


@dataclass(frozen=True)
class HandoffParts:
    """The report chain's model, as :mod:`mirofish.scenes.handoff` has it: ``chain``
    (``chain.Chain``), ``brief`` (``brief.draw_brief``: a task's brief from the seed and its
    index), ``arms`` (``chain.ARMS``: an arm's name → its signal layers), ``flow`` (``chain.FLOW``:
    each message's sender, receiver and kind) and ``reading_codes`` (``brief.READING_CODES``)."""

    chain: type[Chain]
    brief: Callable[[int, int], Brief]
    arms: Mapping[str, frozenset[int]]
    flow: tuple[tuple[str, str, str], ...]
    reading_codes: Mapping[str, str]


@dataclass(frozen=True)
class MessageShown:
    index: int
    sender: str
    receiver: str
    kind: str  # insights, draft, review, question, handoff, final
    text: str
    layers: tuple[str, ...]  # the signals it carried ("layer1" …)
    detections: tuple[str, ...]  # what the receiver's checks found
    calibration: str  # the calibration it opened ("": none)


@dataclass(frozen=True)
class MindShown:
    """What ``agent`` believes the task is, against the brief."""

    agent: str
    goal_changed: bool
    missing: tuple[str, ...]  # the brief's requirements it lost
    invented: tuple[str, ...]  # requirements it holds that the brief has not
    reads: tuple[str, ...]  # concepts it reads another way ("growth=units")

    @property
    def as_briefed(self) -> bool:
        return not (self.goal_changed or self.missing or self.invented or self.reads)


@dataclass(frozen=True)
class DriftShown:
    """A drift injected before message ``at`` (sent by ``sender``); ``carried``: some agent still
    believes what it made it believe."""

    kind: str  # misunderstanding, invented, lost
    what: str
    at: int
    sender: str
    detected_at: int | None
    carried: bool


@dataclass(frozen=True)
class FiguresShown:
    """The arm's figures over the tasks finished so far."""

    tasks: int
    drifts: int
    caught: int
    completed: int  # reports that meet the brief
    calibrations: int
    message_tokens: int
    signal_tokens: int  # signals and calibrations (estimated)


@dataclass(frozen=True)
class HandoffShown:
    """What the report chain's window draws (see the module doc)."""

    index: int  # the task being played (0 …)
    task_id: str
    arm: str  # "L1+2+3" …
    goal: str
    requirements: tuple[str, ...]  # the brief's, in words
    messages: tuple[MessageShown, ...]
    minds: tuple[MindShown, ...]
    drifts: tuple[DriftShown, ...]
    lost_unprompted: tuple[str, ...]  # requirements caught lost that no drift took (the telephone game's)
    finished: bool  # the task sent its last message
    figures: FiguresShown
    recent: tuple[dict[str, Any], ...]  # the last 20 tasks' results

    def as_json(self) -> dict[str, Any]:
        """The scene's JSON-ready state: the task, its messages so far, the last tasks' results."""
        return {"task": self.task_id, "messages": len(self.messages), "done": list(self.recent)}


class HandoffSession(Episodes["Chain", "Message", HandoffShown]):
    """The report chain's tasks one after another (see the module doc). ``writer``: a model
    writes the messages (None: the templates); it is closed with the session."""

    def __init__(self, parts: HandoffParts, seed: int = 1, layers: str = "L1+2+3", writer: Any = None,
                 l2_source: str = "agent", wire_form: str = "full", l2_every: int | None = None,
                 l2_triggers: bool = True):
        """``l2_every``, ``l2_triggers``: layer 2's schedule (None: the chain's own default)."""
        self.parts = parts
        self.arm, self.writer, self.l2_source, self.wire_form = layers, writer, l2_source, wire_form
        self.l2_schedule: dict[str, Any] = {"l2_triggers": l2_triggers,
                                            **({"l2_every": l2_every} if l2_every is not None else {})}
        super().__init__(seed)

    @property
    def model_agents(self) -> bool:
        return self.writer is not None

    def _begin(self, index: int) -> tuple[Chain, Iterator[Message]]:
        chain = self.parts.chain(self.parts.brief(self.seed, index), self.parts.arms[self.arm], self.seed,
                                 writer=self.writer, l2_source=self.l2_source, wire_form=self.wire_form,
                                 **self.l2_schedule)
        return chain, chain.iter_messages()

    def _take(self) -> HandoffShown:
        c = self.model
        reg = c.registry
        messages = tuple(MessageShown(m.index, m.sender, m.receiver, m.kind, m.text,
                                      tuple(k for k in LAYERS if k in m.signals), tuple(m.detections), m.calibration)
                         for m in c.messages)
        minds = tuple(MindShown(agent, mind.goal != reg.goal, tuple(sorted(reg.requirements - mind.requirements)),
                                tuple(sorted(mind.requirements - reg.requirements)),
                                tuple(f"{k}={self.parts.reading_codes[r]}" for k, r in mind.concepts.items()
                                      if r != reg.concepts[k]))
                      for agent, mind in c.minds.items())
        drifts = tuple(DriftShown(d.kind, d.what, d.at, self.parts.flow[d.at][0], d.detected_at, self._carried(d))
                       for d in c.drifts)
        injected = {f"{d.kind}:{d.what}" for d in c.drifts}
        lost = sorted({f for m in c.messages for f in m.detections if f.startswith("lost:") and f not in injected})
        return HandoffShown(self.index, c.brief.task_id, self.arm, c.brief.goal,
                            tuple(c.brief.requirement_text(r) for r in c.brief.requirements), messages, minds, drifts,
                            tuple(lost),
                            self.finished, self._figures(), tuple(self.results[-20:]))

    def _figures(self) -> FiguresShown:
        done = self.results
        drifts = [d for r in done for d in r["drifts"]]
        return FiguresShown(len(done), len(drifts), sum(d["detected_at"] is not None for d in drifts),
                            sum(bool(r["completed"]) for r in done), sum(int(r["calibrations"]) for r in done),
                            sum(int(r["message_tokens"]) for r in done),
                            sum(int(r["signal_tokens"]) + int(r["calibration_tokens"]) for r in done))

    def _carried(self, d: Drift) -> bool:
        """Whether any agent still believes what drift ``d`` made it believe."""
        reg = self.model.registry
        for mind in self.model.minds.values():
            if d.kind == "misunderstanding" and mind.concepts[d.what] != reg.concepts[d.what]:
                return True
            if d.kind == "invented" and d.what in mind.requirements:
                return True
            if d.kind == "lost" and d.what not in mind.requirements:
                return True
        return False

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
