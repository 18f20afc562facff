"""A negotiation run as a recording: the aquarium's recording container, turn by turn.

``negotiation --record R.db`` writes one SQLite file with the same ``header`` table as an
aquarium recording (scene, seed, created, code version, a checksum over everything, checked
when the file is opened) and three tables:

* ``sessions`` — session index, its seed, what the repair bandit had learnt when it began
  (sessions share one bandit, so a session replays on its own from this), and its result;
* ``turns`` — every turn as the window and ``export --tables`` show it (speaker, kind, text,
  signals, detections, strategy, the answer to a repair, uncertainty);
* ``said`` — what a model negotiator said at a turn (an offer, a repair line, an answer), so
  a model run replays without asking the model again.

A session is committed when it ends: Ctrl-C keeps every finished session.

**Replay** re-simulates a session from its seed and bandit state (the embedded logic is
seeded; a model's words come from ``said``) and compares every turn with the recorded one:
a turn that differs stops the replay with "replay diverges from the recording at session S
turn T" — the same check the aquarium's replay makes tick by tick. **Fork** re-runs a
session with another repair strategy at a repair turn and lets it go on from there (the
intervention replay of the aquarium, for the second scene): the turns before are checked,
the ones after are the new branch.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...observe.paths import OutputError, check_output
from ...observe.recording import RecordingError
from ...observe.turns import TurnReader, TurnWriter
from .dialogue import STRATEGIES, Bandit, Negotiation, Speaker, Turn
from .world import Session

SCENE = "negotiation"
TURNS_VERSION = 1
_TABLES = [("sessions", "session"), ("turns", "session, turn"), ("said", "session, turn, role, what")]
_SCHEMA = """
CREATE TABLE sessions (session INTEGER PRIMARY KEY, seed INTEGER, bandit TEXT, result TEXT);
CREATE TABLE turns (session INTEGER, turn INTEGER, data TEXT, PRIMARY KEY (session, turn));
CREATE TABLE said (session INTEGER, turn INTEGER, role TEXT, what TEXT, data TEXT,
                   PRIMARY KEY (session, turn, role, what));
"""
# a model negotiator's three ways of speaking, by method name → what the recording calls it
_SPEAKING = {"__call__": "offer", "repair_line": "repair", "read_back": "answer"}


class ReplayDiverged(RecordingError):
    """A re-simulated turn that is not the recorded one."""


def session_seed(seed: int, index: int) -> int:
    """The seed of a run's session ``index`` (as ``evaluate`` and the window draw them)."""
    return seed * 100_003 + index


def turn_record(turn: Turn) -> dict[str, Any]:
    """A turn as JSON data (what the recording keeps and a replay compares)."""
    record: dict[str, Any] = json.loads(json.dumps(turn.__dict__, default=str))
    return record


class _Taped:
    """A model negotiator that also writes down what it said, per (turn, role, what)."""

    def __init__(self, inner: Any, role: str, log: list[tuple[int, str, str, Any]]):
        self.inner, self.role, self.log = inner, role, log

    def __call__(self, neg: Negotiation, t: int, role: str) -> dict[str, Any] | None:
        said: dict[str, Any] | None = self.inner(neg, t, role)
        self.log.append((t, role, "offer", said))
        return said

    def repair_line(self, neg: Negotiation, role: str, t: int, *args: Any) -> dict[str, Any] | None:
        said: dict[str, Any] | None = self.inner.repair_line(neg, role, t, *args)
        self.log.append((t, role, "repair", said))
        return said

    def read_back(self, neg: Negotiation, role: str, t: int, *args: Any) -> dict[str, Any] | None:
        said: dict[str, Any] | None = self.inner.read_back(neg, role, t, *args)
        self.log.append((t, role, "answer", said))
        return said


class _Played:
    """A model negotiator played back from a recording: it says what was recorded, at the turn
    it was recorded (None where the model had failed and the embedded logic spoke)."""

    def __init__(self, said: dict[tuple[int, str, str], dict[str, Any] | None]):
        self.said = said

    def __call__(self, neg: Negotiation, t: int, role: str) -> dict[str, Any] | None:
        return self.said.get((t, role, "offer"))

    def repair_line(self, neg: Negotiation, role: str, t: int, *args: Any) -> dict[str, Any] | None:
        return self.said.get((t, role, "repair"))

    def read_back(self, neg: Negotiation, role: str, t: int, *args: Any) -> dict[str, Any] | None:
        return self.said.get((t, role, "answer"))


class NegotiationRecorder:
    """Writes a negotiation run (refuses an existing file without ``overwrite``, an input, a
    path another run is writing)."""

    def __init__(self, path: str | Path, header: dict[str, Any], overwrite: bool = False):
        self._out = TurnWriter(path, SCENE, {"turns_version": TURNS_VERSION, **header}, _SCHEMA, _TABLES, overwrite)
        self.path = self._out.path
        self._log: list[tuple[int, str, str, Any]] = []
        self._turns: list[dict[str, Any]] = []
        self._bandit: dict[str, Any] = {}

    def begin(self, bandit: Bandit, speakers: Mapping[str, Speaker] | None) -> Mapping[str, Speaker] | None:
        """A session begins: what the bandit knows now; the speakers it will use, taped."""
        self._bandit, self._log, self._turns = bandit.state(), [], []
        if not speakers:
            return speakers
        return {role: _Taped(sp, role, self._log) for role, sp in speakers.items()}

    def turn(self, turn: Turn | dict[str, Any]) -> None:
        """A turn as it was played (later turns may annotate its detections: not the record)."""
        self._turns.append(turn if isinstance(turn, dict) else turn_record(turn))

    def end(self, index: int, neg: Negotiation) -> None:
        """A session ended: its turns, what its models said and its result, in one commit."""
        self._out.write({
            "sessions": [(index, neg.s.seed, json.dumps(self._bandit), json.dumps(neg.result(), default=str))],
            "turns": [(index, x["index"], json.dumps(x)) for x in self._turns],
            "said": [(index, t, role, what, json.dumps(data)) for t, role, what, data in self._log]})

    def close(self) -> None:
        self._out.close()


class NegotiationRecording:
    """A negotiation recording opened read-only (checked against its checksum)."""

    def __init__(self, path: str | Path):
        self._in = TurnReader(path, SCENE, "turns_version", TURNS_VERSION, _TABLES)
        self.path, self.header = self._in.path, self._in.header
        try:
            self.sessions = [{"session": k, "seed": seed, "bandit": json.loads(b), "result": json.loads(r)}
                             for k, seed, b, r in self._in.rows("SELECT session, seed, bandit, result FROM sessions "
                                                                "ORDER BY session")]
        except (ValueError, TypeError) as exc:
            self.close()
            raise RecordingError(f"recording is damaged ({exc}): {self.path}") from None
        if not self.sessions:
            self.close()
            raise RecordingError(f"recording holds no finished session: {self.path}")
        self.by_model = self.header.get("agents") == "model"

    def session(self, index: int) -> dict[str, Any]:
        for s in self.sessions:
            if s["session"] == index:
                return s
        raise RecordingError(f"--session {index} is not in this recording (it has sessions "
                             f"{self.sessions[0]['session']}..{self.sessions[-1]['session']})")

    def turns(self, index: int) -> list[dict[str, Any]]:
        return [json.loads(d) for (d,) in self._in.rows("SELECT data FROM turns WHERE session = ? ORDER BY turn",
                                                         (index,))]

    def said(self, index: int) -> dict[tuple[int, str, str], Any]:
        return {(t, role, what): json.loads(d) for t, role, what, d in self._in.rows(
            "SELECT turn, role, what, data FROM said WHERE session = ?", (index,))}

    def negotiation(self, index: int) -> Negotiation:
        """Session ``index`` set up as it began (not yet run)."""
        s = self.session(index)
        speakers = None
        if self.by_model:
            played = _Played(self.said(index))
            speakers = {"buyer": played, "seller": played}
        neg = Negotiation(Session.draw(s["seed"]), bool(self.header.get("repair", True)),
                          Bandit.from_state(s["bandit"]), speakers=speakers, layers=int(self.header.get("layers", 3)))
        fork = self.header.get("fork")
        if isinstance(fork, dict) and fork.get("session") == index:  # a fork's recording: its hand-picked repair
            neg.forced[int(fork["turn"])] = str(fork["repair"])
        return neg

    def replay(self, index: int, neg: Negotiation | None = None, until: int | None = None) -> Iterator[Turn]:
        """Session ``index`` turn by turn, each checked against the recorded turn (up to turn
        ``until``, excluded, when given: a fork's own turns are new)."""
        neg = neg or self.negotiation(index)
        recorded = self.turns(index)
        for k, turn in enumerate(neg.iter_turns()):
            if until is None or k < until:
                want = recorded[k] if k < len(recorded) else None
                if want != turn_record(turn):
                    what = "a turn the recording does not have" if want is None else \
                        f"{turn.speaker} {turn.kind}s where the recording has {want['speaker']} {want['kind']}" \
                        if (want["speaker"], want["kind"]) != (turn.speaker, turn.kind) else "the turn differs"
                    raise ReplayDiverged(f"replay diverges from the recording at session {index} turn {k} ({what}): "
                                         f"{self.path}")
            yield turn
        if until is None and len(neg.turns) != len(recorded):
            raise ReplayDiverged(f"replay diverges from the recording at session {index} turn {len(neg.turns)} (the "
                                 f"negotiation ended; the recording goes on to turn {len(recorded) - 1}): {self.path}")

    def repair_turns(self, index: int) -> list[int]:
        return [t["index"] for t in self.turns(index) if t["kind"] == "repair"]

    def fork(self, index: int, turn: int, strategy: str) -> Negotiation:
        """Session ``index`` re-run with ``strategy`` for the repair at ``turn``, then on from there."""
        neg, rest = self.fork_at(index, turn, strategy)
        for _ in rest:
            pass
        return neg

    def check_fork(self, index: int, turn: int, strategy: str) -> None:
        """A one-line :class:`RecordingError` unless session ``index`` can fork at ``turn``."""
        self.session(index)
        if strategy not in STRATEGIES:
            raise RecordingError(f"--repair {strategy}: not a repair strategy ({', '.join(STRATEGIES)})")
        repairs = self.repair_turns(index)
        if turn not in repairs:
            where = ", ".join(map(str, repairs)) if repairs else "none in this session"
            raise RecordingError(f"--at-turn {turn}: session {index} has no repair at that turn (repairs at: {where})")
        if self.by_model:
            raise RecordingError("fork --at-turn of a negotiation played by models is not supported: after the fork "
                                 "the models would have to be asked again (fork an embedded run)")

    def fork_at(self, index: int, turn: int, strategy: str) -> tuple[Negotiation, Iterator[Turn]]:
        """The fork stopped just before ``turn`` (the turns before it checked against the
        recording), and the iterator of its turns from there."""
        neg, turns = self.branch(index, turn, strategy)
        for _ in range(turn):
            next(turns)
        return neg, turns

    def branch(self, index: int, turn: int, strategy: str) -> tuple[Negotiation, Iterator[Turn]]:
        """The fork from its start: turns before ``turn`` checked against the recording."""
        self.check_fork(index, turn, strategy)
        neg = self.negotiation(index)
        neg.forced[turn] = strategy
        return neg, self.replay(index, neg, until=turn)

    def close(self) -> None:
        self._in.close()


def fork_summary(rec: NegotiationRecording, index: int, turn: int, strategy: str, out: str | Path | None = None,
                 overwrite: bool = False) -> dict[str, Any]:
    """``fork R.db --at-turn N --repair X``: the fork beside the recorded session, and the fork
    written as a recording of its own when ``out`` is given."""
    recorder = None
    if out is not None:
        try:
            check_output(out, (rec.path,), overwrite, "recording", scene="negotiation")
        except OutputError as exc:
            raise RecordingError(str(exc)) from None
    neg, rest = rec.fork_at(index, turn, strategy)
    played = rec.turns(index)[:turn] + [turn_record(x) for x in rest]  # each turn as it was played
    was = rec.session(index)["result"]
    recorded = rec.turns(index)
    now = neg.result()
    if out is not None:
        header = {k: v for k, v in rec.header.items() if k not in ("checksum", "created", "code_version")}
        recorder = NegotiationRecorder(out, {**header, "parent": str(rec.path), "fork": {
            "session": index, "turn": turn, "repair": strategy, "was": recorded[turn].get("strategy")}}, overwrite)
        recorder.begin(Bandit.from_state(rec.session(index)["bandit"]), None)
        for x in played:
            recorder.turn(x)
        recorder.end(index, neg)
        recorder.close()
    keys = ("agreement", "joint_utility", "fairness", "rounds", "unresolved_conflicts", "semantic_consistency",
            "completed")
    return {"session": index, "turn": turn, "repair": strategy, "recorded_repair": recorded[turn].get("strategy"),
            "recorded": {k: was.get(k) for k in keys}, "fork": {k: now.get(k) for k in keys},
            "first_different_turn": next((k for k, (a, b) in enumerate(zip(recorded, played)) if a != b),
                                         min(len(recorded), len(played))),
            **({"out": str(out)} if out is not None else {})}


def verify(rec: NegotiationRecording, session: int | None = None) -> dict[str, Any]:
    """``replay R.db --headless``: every session re-simulated and checked turn by turn
    (``session``: that one only, ``--session K``; RecordingError if the recording has none such)."""
    sessions = rec.sessions if session is None else [rec.session(session)]
    turns = 0
    for s in sessions:
        turns += sum(1 for _ in rec.replay(s["session"]))
    return {"scene": SCENE, **({"session": session} if session is not None else {}), "sessions": len(sessions),
            "verified_turns": turns,
            "agreement_rate": round(sum(bool(s["result"].get("agreement")) for s in sessions) / len(sessions), 4),
            # model negotiators: the prompt file they were sent, as the recording keeps it
            **({"prompt": {k: rec.header["prompt"][k] for k in ("name", "hash")}}
               if isinstance(rec.header.get("prompt"), dict) else {})}


def turn_tables(rec: NegotiationRecording) -> dict[str, dict[str, list[Any]]]:
    """``export --tables``: one row per turn and one per session."""
    turns: dict[str, list[Any]] = {k: [] for k in ("session", "turn", "speaker", "kind", "text", "reply", "strategy",
                                              "restored", "detections", "uncertainty", "signal_layers")}
    for s in rec.sessions:
        for t in rec.turns(s["session"]):
            for key, value in (("session", s["session"]), ("turn", t["index"]), ("speaker", t["speaker"]),
                               ("kind", t["kind"]), ("text", t["text"]), ("reply", t.get("reply", "")),
                               ("strategy", t.get("strategy") or ""), ("restored", t.get("restored")),
                               ("detections", ", ".join(d["type"] for d in t.get("detections") or [])),
                               ("uncertainty", t.get("uncertainty")),
                               ("signal_layers", " ".join(k for k in sorted(t.get("signals") or {})
                                                          if k.startswith("layer")))):
                turns[key].append(value)
    scalar = ("agreement", "joint_utility", "fairness", "rounds", "repair_share", "unresolved_conflicts",
              "semantic_consistency", "completed", "communication_cost", "not_yet")
    sessions: dict[str, list[Any]] = {"session": [s["session"] for s in rec.sessions],
                                 "seed": [s["seed"] for s in rec.sessions]}
    for key in scalar:
        sessions[key] = [s["result"].get(key) for s in rec.sessions]
    return {"turns": turns, "sessions": sessions}


class NegotiationReplay:
    """Seekable playback of a negotiation recording, and forks of it (the window's side).

    ``shown`` turns of session ``index`` have been played (``seek(n)`` re-simulates the
    session's first n turns from its start, checked against the recording: a session is at
    most 30 turns). ``fork(strategy)`` re-plays the newest shown turn — a repair — with
    another strategy and goes on from there on a new branch; ``original()`` returns to the
    recording at that turn."""

    def __init__(self, rec: NegotiationRecording, session: int | None = None):
        self.rec = rec
        self.order: list[int] = [s["session"] for s in rec.sessions]
        self.pos = self.order.index(session) if session is not None else 0
        self.fork_point: tuple[int, str, str] | None = None  # (turn, strategy, the recorded strategy)
        self.seek(0)

    @property
    def index(self) -> int:
        return self.order[self.pos]

    @property
    def shown(self) -> int:
        return len(self.neg.turns)

    @property
    def last(self) -> int:
        """The timeline's end: the recorded session's turns, or a fork's as far as it can go."""
        return Negotiation.MAX_TURNS if self.fork_point else len(self.recorded)

    def seek(self, n: int) -> None:
        self.recorded = self.rec.turns(self.index)
        n = max(0, min(n, self.last))
        if self.fork_point is not None:  # (the turns before the fork are the recorded ones)
            self.neg, self._turns = self.rec.branch(self.index, self.fork_point[0], self.fork_point[1])
        else:
            self.neg = self.rec.negotiation(self.index)
            self._turns = self.rec.replay(self.index, self.neg)
        self.ended = False
        while self.shown < n and self.step() is not None:
            pass

    def step(self) -> Turn | None:
        """One turn on (None at the session's end)."""
        try:
            return next(self._turns)
        except StopIteration:
            self.ended = True
            return None

    def back(self) -> None:
        self.seek(self.shown - 1)

    def session_by(self, delta: int) -> bool:
        """To the previous/next recorded session (False when there is none)."""
        if not 0 <= self.pos + delta < len(self.order):
            return False
        self.pos += delta
        self.fork_point = None
        self.seek(0)
        return True

    def fork(self, strategy: str) -> None:
        """The newest shown turn (a repair) again with ``strategy``, on a new branch."""
        turn = self.shown - 1
        if self.shown == 0 or self.neg.turns[-1].kind != "repair":
            repairs = ", ".join(map(str, self.rec.repair_turns(self.index))) or "none in this session"
            raise RecordingError(f"a fork changes a repair: step to a repair turn first (repairs at turns {repairs})")
        if self.fork_point is not None:
            raise RecordingError("this is a fork already: O returns to the recording, fork from there")
        self.rec.check_fork(self.index, turn, strategy)
        self.fork_point = (turn, strategy, str(self.recorded[turn].get("strategy")))
        self.seek(turn + 1)

    def original(self) -> None:
        """Back to the recording, at the fork's turn."""
        if self.fork_point is not None:
            turn = self.fork_point[0]
            self.fork_point = None
            self.seek(turn + 1)


def export_turn_tables(path: str | Path, out_dir: str | Path, fmt: str = "parquet",
                       overwrite: bool = False) -> dict[str, Any]:
    """``export R.db --tables DIR``: the turns and sessions tables, after a replay checked every turn."""
    from ...session.tables import check_parquet, finish_export, table_targets

    check_parquet(fmt)
    start = time.perf_counter()
    rec = NegotiationRecording(path)
    try:
        files = table_targets(out_dir, ["turns", "sessions"], fmt, (rec.path,), overwrite)
        checked = verify(rec)
        return finish_export(turn_tables(rec), files, fmt, start, {"verified_turns": checked["verified_turns"]})
    finally:
        rec.close()
