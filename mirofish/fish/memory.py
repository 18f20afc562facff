"""Short memory (a ring of raw events) and long memory (periodic summaries).

Events are stored as integers — ``(tick, code, arg)`` per slot of an ``(n, size)`` ring — so
recording is vectorised and the state hash covers them; they become the text
``t{tick} {event}`` only when a brain, a snapshot or a person reads them.

Long memory (docs/design.md §2): every ``summary_every`` ticks a summary is written from
the counters since the last one *plus at least ``summary_anchors`` raw events quoted
verbatim*, at most ``summaries_kept`` are kept, and the personality is never an input
that the summary may rewrite.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..actions import DIRECTION_NAMES
from ..grid import HEX

NONE, ATE, REFUSED, BLOCKED, FOOD_TAKEN, NOTHING_TO_EAT, FOOD_SEEN, NEIGHBOURS, LOW_ENERGY, EXHAUSTED = range(10)
ARRIVED = 10  # came to rest beside a plant (the hide plan: fish/targets.py)
# A hexagonal tank's refused and blocked moves are remembered as this + the move (0–5), so a
# memory's words never depend on which tank reads it (mirofish/grid.py).
HEX_MOVE_ARG = 16


def _direction(arg: int) -> str:
    return HEX.move_names[arg - HEX_MOVE_ARG] if arg >= HEX_MOVE_ARG else DIRECTION_NAMES[arg]


def event_text(code: int, arg: int) -> str:
    """The words for one event (the part after ``t{tick} ``)."""
    if code == ATE:
        return f"ate food, energy {arg}"
    if code == REFUSED:
        return f"move refused ({_direction(arg)})"
    if code == BLOCKED:
        return f"bumped into a wall going {_direction(arg)}"
    if code == FOOD_TAKEN:
        return "food taken by another fish"
    if code == NOTHING_TO_EAT:
        return "nothing to eat here"
    if code == FOOD_SEEN:
        return f"saw {arg} food"
    if code == NEIGHBOURS:
        return "alone now" if arg == 0 else f"{arg} fish nearby"
    if code == LOW_ENERGY:
        return f"energy low ({arg})"
    if code == EXHAUSTED:
        return "exhausted, can only rest"
    if code == ARRIVED:
        return "reached a plant, hiding beside it"
    return "?"


class ShortMemory:
    """Rings of the last ``size`` events for ``n`` fish."""

    def __init__(self, n: int, size: int):
        self.size = size
        self.tick = np.zeros((n, size), np.int32)
        self.code = np.zeros((n, size), np.int8)
        self.arg = np.zeros((n, size), np.int16)
        self.count = np.zeros(n, np.int32)  # events ever recorded; head = count % size

    def record(self, fish: np.ndarray, tick: int, code: int, arg: np.ndarray | int = 0) -> None:
        """Append one event to each fish in ``fish`` (indices must be unique)."""
        if fish.size == 0:
            return
        slot = self.count[fish] % self.size
        self.tick[fish, slot] = tick
        self.code[fish, slot] = code
        self.arg[fish, slot] = arg
        self.count[fish] += 1

    def record_many(self, tick: int, flags: np.ndarray, codes: np.ndarray, args: np.ndarray) -> None:
        """Append several kinds of event at once: ``flags[i, k]`` → event ``codes[k]`` with ``args[i, k]``.

        A fish with several events gets them in column order.
        """
        fish, kind = np.nonzero(flags)
        if fish.size == 0:
            return
        first = np.searchsorted(fish, fish)  # index of each fish's first event (fish is sorted)
        slot = (self.count[fish] + np.arange(fish.size) - first) % self.size
        self.tick[fish, slot] = tick
        self.code[fish, slot] = codes[kind]
        self.arg[fish, slot] = args[fish, kind]
        self.count += flags.sum(axis=1, dtype=np.int32)

    def raw(self, i: int, last: int | None = None) -> list[tuple[int, int, int]]:
        """Fish ``i``'s events (the ``last`` few, or all kept), oldest first, as (tick, code, arg)."""
        c, s = int(self.count[i]), self.size
        k = min(c, s) if last is None else min(c, s, last)
        slots = [(c - j) % s for j in range(k, 0, -1)]
        return [(int(self.tick[i, j]), int(self.code[i, j]), int(self.arg[i, j])) for j in slots]

    def lines(self, i: int, last: int | None = None) -> list[str]:
        """Fish ``i``'s events as ``t{tick} {event}``, oldest first."""
        return [f"t{t} {event_text(c, a)}" for t, c, a in self.raw(i, last)]

    def load(self, i: int, events: Sequence[Sequence[int]], count: int) -> None:
        """Restore fish ``i``'s ring from :meth:`raw` output and its lifetime event count."""
        self.count[i] = count - len(events)
        for t, c, a in events:
            self.record(np.array([i]), int(t), int(c), int(a))


@dataclass(frozen=True, slots=True)
class SummaryInput:
    """What a summarizer may see: counters since the last summary and the raw anchors."""

    fish: int
    anchors: list[str]
    tick: int
    since: int
    ate: int
    refused: int
    moves: int
    company: int
    energy_from: int
    energy_to: int


# Numeric long-memory record: these fields, then (tick, code, arg) per anchor.
SUMMARY_FIELDS = ("tick", "since", "ate", "refused", "moves", "company", "energy_from", "energy_to")
# What a fish's counters were at its last long-term summary (the columns of the school's
# ``at_summary``, world.FISH_STATE): how many memories it had, its eats, refusals, moves, ticks
# in company, and its energy; the next summary reports the differences.
AT_SUMMARY = ("memories", "eats", "refusals", "moves", "company", "energy")
AS = {name: i for i, name in enumerate(AT_SUMMARY)}  # at_summary's column of each


class LongMemory:
    """The last ``kept`` summaries per fish, stored as numbers; text is rendered on reading.

    A record holds the counters since the previous summary and ``anchors`` raw events
    quoted verbatim, so a template summary is a pure function of it. A model summarizer
    (which cannot be recomputed) stores its text in :attr:`texts`, keyed by
    (fish, serial number of the summary).
    """

    def __init__(self, n: int, kept: int, anchors: int):
        self.kept, self.anchors = kept, anchors
        self.records = np.zeros((n, kept, len(SUMMARY_FIELDS) + 3 * anchors), np.int32)
        self.count = np.zeros(n, np.int32)
        self.texts: dict[tuple[int, int], str] = {}

    def add(self, fish: np.ndarray, rows: np.ndarray) -> None:
        self.records[fish, self.count[fish] % self.kept] = rows
        self.count[fish] += 1

    def rows(self, i: int) -> list[tuple[int, np.ndarray]]:
        """(serial, record) of fish ``i``'s kept summaries, oldest first."""
        c = int(self.count[i])
        return [(k, self.records[i, k % self.kept]) for k in range(max(0, c - self.kept), c)]

    def load(self, i: int, rows: list[list[int]], count: int) -> None:
        self.count[i] = count - len(rows)
        for r in rows:
            self.add(np.array([i]), np.asarray(r, np.int32))

    def items(self, i: int) -> list[SummaryInput]:
        out = []
        nf = len(SUMMARY_FIELDS)
        for _, r in self.rows(i):
            vals = dict(zip(SUMMARY_FIELDS, (int(v) for v in r[:nf])))
            anchors = [f"t{int(r[j])} {event_text(int(r[j + 1]), int(r[j + 2]))}" for j in range(nf, r.size, 3)]
            out.append(SummaryInput(fish=i, anchors=anchors, **vals))
        return out

    def written(self, i: int) -> list[bool]:
        """Per kept summary of fish ``i``, oldest first: True where a model wrote its text (kept in
        :attr:`texts`), False where it is the template's (a pure function of its record)."""
        return [(i, serial) in self.texts for serial, _ in self.rows(i)]

    def summaries(self, i: int, summarizer: Summarizer) -> list[str]:
        """Fish ``i``'s kept summaries as text, oldest first."""
        texts = []
        for (serial, _), item in zip(self.rows(i), self.items(i)):
            texts.append(self.texts.get((i, serial)) or summarizer.summarize(item))
        return texts


class Summarizer(Protocol):
    def summarize(self, item: SummaryInput) -> str: ...


class TemplateSummarizer:
    """Deterministic, offline long-memory summaries (the embedded brain's summarizer).

    It describes behaviour in the persona's own vocabulary (sociable/loner, explore open
    water, wary of walls and crowds, hungry, rest), so that :func:`drift_score` — the
    similarity of a summary to the persona — says whether a fish still acts in character.
    """

    def summarize(self, s: SummaryInput) -> str:
        span = max(1, s.tick - s.since)
        doing = [f"hungry, ate {s.ate}x" if s.ate else "found no food"]
        if s.moves * 2 > span:
            doing.append("explored open water")
        elif s.moves * 5 < span:
            doing.append("stayed put to rest")
        if s.refused:
            doing.append(f"blocked {s.refused}x by walls and crowds")
        if s.company * 2 > span:
            doing.append("sociable, in company")
        elif s.company == 0:
            doing.append("alone like a loner")
        return (f"t{s.since}-t{s.tick}: {', '.join(doing)}; energy {s.energy_from}->{s.energy_to}. "
                f"Anchors: {' | '.join(s.anchors)}")


_STOP = frozenset(["a", "an", "and", "the", "of", "to", "in", "on", "at", "by", "with", "for", "that", "fish", "is",
                   "it", "its"])


def _bag(text: str) -> dict[str, int]:
    words = re.findall(r"[a-z]+", text.lower().split("anchors:")[0])
    bag: dict[str, int] = {}
    for w in words:
        if len(w) > 2 and w not in _STOP:
            w = w[:6]  # a crude stem: "explore"/"explored", "sociable"/"sociability"
            bag[w] = bag.get(w, 0) + 1
    return bag


def lexical_similarity(a: str, b: str) -> float:
    """Cosine similarity of two texts' word bags (0 … 1); the built-in drift measure."""
    x, y = _bag(a), _bag(b)
    dot = sum(v * y.get(k, 0) for k, v in x.items())
    norm = math.sqrt(sum(v * v for v in x.values()) * sum(v * v for v in y.values()))
    return dot / norm if norm else 0.0


def drift_score(summary: str, persona: str) -> float:
    """How much a long-term summary still sounds like the fish's persona (1 = in character)."""
    return lexical_similarity(summary, persona)
