"""A mixed tank (``[[fish.groups]]``, docs/groups.md): each group's fish decided by that group's brain.

:class:`MixedSource` is one decision source made of one source per group — the instinct brain,
a model pool (its own servers, key variable, prompt and sampling: :meth:`Config.for_group`) or
a user brain — that splits every request batch by the fish's group and shares its ``results``
queue with its parts, so the engine sees one source and one code path, as for any other brain.
A tank whose groups all run the instinct brain decides exactly as the same tank without groups.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..config import Config
from .base import DecisionBatch, DecisionSource, RequestBatch
from .exchanges import ReplyCache


def concat(batches: list[DecisionBatch]) -> DecisionBatch:
    """Several decision batches of one tick as one (plans; actions kept only when all have them)."""
    if len(batches) == 1:
        return batches[0]
    n = [len(b) for b in batches]
    actions = None if any(b.actions is None for b in batches) else np.concatenate([b.actions for b in batches])
    meta: dict[str, Any] = {}
    for b in batches:
        meta.update(b.meta)
    return DecisionBatch(
        tick=batches[0].tick, fish=np.concatenate([b.fish for b in batches]), actions=actions,
        tier=np.concatenate([b.tier for b in batches]), status=np.concatenate([b.status for b in batches]),
        tokens=np.concatenate([b.tokens for b in batches]),
        thoughts=None if all(b.thoughts is None for b in batches)
        else [t for b, k in zip(batches, n) for t in (b.thoughts or [""] * k)],
        summaries=[s for b in batches for s in (b.summaries or ())] or None,
        calls=[c for b in batches for c in (b.calls or ())] or None, meta=meta,
        goals=np.concatenate([b.goals for b in batches]), params=np.concatenate([b.params for b in batches]),
        horizons=np.concatenate([b.horizons for b in batches]))


class MixedSource(DecisionSource):
    """One source per group of a mixed tank, behind the one interface."""

    name = "mixed"

    def __init__(self, cfg: Config, make_source: Callable[..., DecisionSource], mode: str = "lockstep",
                 cache: ReplyCache | None = None, asked_before: set[int] | None = None):
        """``make_source``: :func:`~.sources.make_source`, which makes each group's source."""
        super().__init__()
        self.cfg = cfg
        self.group_of = np.array(cfg.fish.group_of(), np.int64)
        self.names = cfg.fish.group_names()
        self.parts: list[tuple[int, DecisionSource]] = []
        self.late = 0
        try:
            for g, name in enumerate(self.names):
                if np.any(self.group_of == g):
                    src = make_source(cfg.for_group(g), mode, cache=cache, asked_before=asked_before, group=name)
                    src.results = self.results  # one queue: answers reach the engine as they come
                    self.parts.append((g, src))
        except BaseException:
            self.close()
            raise
        self.wants_perceptions = any(s.wants_perceptions for _, s in self.parts)
        self.writes_summaries = any(s.writes_summaries for _, s in self.parts)

    def source_of(self, fish: int) -> DecisionSource | None:
        """The source that decides for ``fish`` (its group's): the one a question to the fish goes
        to (Session.ask), a model's only if its group's brain is one."""
        g = int(self.group_of[fish]) if 0 <= fish < self.group_of.size else -1
        return next((src for k, src in self.parts if k == g), None)

    def _split(self, batch: RequestBatch) -> list[tuple[DecisionSource, RequestBatch]]:
        groups = self.group_of[batch.fish]
        out = []
        for g, src in self.parts:
            pick = np.flatnonzero(groups == g)
            if pick.size:
                out.append((src, batch if pick.size == len(batch) else batch.subset(pick)))
        return out

    def submit(self, batch: RequestBatch) -> None:
        for src, part in self._split(batch):
            src.submit(part)

    def begin_tick(self, tick: int) -> None:
        for _, src in self.parts:
            src.begin_tick(tick)

    def pump(self) -> None:
        for _, src in self.parts:
            src.pump()

    def tick_wait(self) -> float | None:
        waits = [w for _, s in self.parts if (w := s.tick_wait()) is not None]
        return max(waits) if waits else None

    def progress(self) -> int:
        return sum(s.progress() for _, s in self.parts)

    def dropped_late(self, n: int, dropped: DecisionBatch | None = None) -> None:
        self.late += n
        if dropped is not None:  # each group's source takes back its own
            groups = self.group_of[dropped.fish]
            for g, src in self.parts:
                pick = np.flatnonzero(groups == g)
                if pick.size:
                    src.dropped_late(int(pick.size), dropped.subset(pick))

    def give_up(self, batch: RequestBatch) -> DecisionBatch | None:
        answered = [a for src, part in self._split(batch) if (a := src.give_up(part)) is not None]
        return concat(answered) if answered else None

    def status(self) -> dict[str, Any]:
        return {"source": self.name, "late_answers_dropped": self.late,
                "groups": {self.names[g]: src.status() for g, src in self.parts}}

    def alerts(self) -> list[str]:
        out = []
        for g, src in self.parts:
            alerts = getattr(src, "alerts", None)
            out += [f"{self.names[g]}: {a}" for a in (alerts() if callable(alerts) else ())]
        return out

    def close(self) -> None:
        for _, src in self.parts:
            src.close()
