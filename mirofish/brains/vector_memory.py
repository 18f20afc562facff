"""A vector-store memory (``memory.kind = "vector"``; docs/memory.md): retrieval and reflection.

Every event a fish lives (and every reflection) is a memory item: its words, the tick, an
importance by kind (an exhaustion or a meal matters more than one more neighbour count) and an
embedding. At each decision the fish recalls the ``memory.top_k`` items scoring highest on

    score = recency_weight × 0.995^(ticks since) + importance_weight × importance
            + relevance_weight × cosine(item, the situation now)

— Generative Agents' memory-stream scoring, with the weights in the config — plus its newest
reflections. Relevance candidates come from an index of the fish's items (usearch, exact
search: the optional extra ``memory``), the ``memory.candidates`` most similar; the score
ranks them. Every ``memory.reflect_every`` events a **reflection** is written: the fish's most
important recent events, quoted with their ticks (the source's anchors, so a reflection never
invents what did not happen), kept as an item of importance 1.

Embeddings are made offline by a deterministic local embedder (hashed character trigrams,
``memory.embed_dim`` dimensions, L2-normalized: the same text gives the same vector on every
machine), so the memory runs with no server and a run is reproducible; a model run's
decisions are recorded, so its replay is exact whatever the memory said. With
``memory.embedder = "server"`` they come from the small tier's server (``/v1/embeddings``, as
llama.cpp, Ollama and vLLM serve it), each text asked once per run (a fish's events repeat:
"saw 1 food"); a text the server cannot embed — it is down, serves no embeddings, or answers
another dimension than its first answer — is embedded locally at the server's dimension and
counted (``embed_fallbacks``), and the run goes on.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..fish.memory import (
    ARRIVED,
    ATE,
    BLOCKED,
    EXHAUSTED,
    FOOD_SEEN,
    FOOD_TAKEN,
    LOW_ENERGY,
    NEIGHBOURS,
    NOTHING_TO_EAT,
    REFUSED,
)
from ..fish.recall import Events

# how much an event of each kind matters (0..1): what a fish would bring up again
IMPORTANCE = {EXHAUSTED: 1.0, LOW_ENERGY: 0.9, ATE: 0.8, FOOD_TAKEN: 0.6, ARRIVED: 0.5, BLOCKED: 0.4,
              FOOD_SEEN: 0.4, REFUSED: 0.3, NOTHING_TO_EAT: 0.3, NEIGHBOURS: 0.3}
DECAY = 0.995  # recency per tick
REFLECTION = -1  # an item's code when it is a reflection


def embed(texts: list[str], dim: int) -> np.ndarray:
    """``(len(texts), dim)`` float32: each text's hashed character trigrams, counted, L2-normalized
    (a text without trigrams: a zero vector)."""
    out = np.zeros((len(texts), dim), np.float32)
    for row, text in enumerate(texts):
        t = f"  {text.lower()} "
        for i in range(len(t) - 2):
            h = int.from_bytes(hashlib.blake2b(t[i:i + 3].encode(), digest_size=4).digest(), "little")
            out[row, h % dim] += 1.0
    norm = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norm, out=out, where=norm > 0)
    return out


class VectorMemory:
    """Per fish: its memory items (words, tick, importance) and an index of their embeddings."""

    name = "vector"

    def __init__(self, n_fish: int, cfg: Any, client: Any = None):
        from usearch.index import Index  # the optional extra "memory"

        self.cfg = cfg
        self._index_type = Index
        self.client = client  # a ModelClient: embeddings from its server (memory.embedder = "server")
        self.dim = cfg.embed_dim
        self._vectors: dict[str, np.ndarray] = {}  # text -> its embedding (each asked once a run)
        self.embed_requests = self.embed_fallbacks = 0
        self._failed_in_a_row = 0  # three: the server is not asked again this run (local, counted)
        self.server_given_up = False
        if client is not None:  # the server's dimension, from its first answer (none: local, counted)
            probe = self._from_server(["probe"])
            if probe is not None:
                self.dim = int(probe.shape[1])
            else:
                self.server_given_up, self.client = True, None
        self.items: list[list[tuple[int, str, float, int]]] = [[] for _ in range(n_fish)]  # (tick, text, imp, code)
        self._indexes: list[Any] = [None] * n_fish
        self._since_reflection = np.zeros(n_fish, np.int64)
        self._last: dict[int, tuple[tuple[int, float], ...]] = {}  # fish -> what its last recall chose, scored

    def _index(self, fish: int) -> Any:
        if self._indexes[fish] is None:
            self._indexes[fish] = self._index_type(ndim=self.dim, metric="cos", dtype="f32")
        return self._indexes[fish]

    def _from_server(self, texts: list[str]) -> np.ndarray | None:
        self.embed_requests += 1
        got = self.client.embed(texts)
        if not got or len(got) != len(texts):
            return None
        try:
            out = np.asarray(got, np.float32)
        except (TypeError, ValueError):  # ragged or not numbers
            return None
        if out.ndim != 2 or (self.embed_requests > 1 and out.shape[1] != self.dim) or not np.isfinite(out).all():
            return None
        norm = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norm, out=out, where=norm > 0)
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` embeddings: from the cache, the server (new texts, one request) or
        the local embedder."""
        if self.client is None and not self.server_given_up:
            return embed(texts, self.dim)
        new = sorted({t for t in texts if t not in self._vectors})
        if new:
            got = self._from_server(new) if self.client is not None else None
            if got is None:
                self.embed_fallbacks += len(new)
                got = embed(new, self.dim)
                self._failed_in_a_row += 1
                if self._failed_in_a_row >= 3 and self.client is not None:
                    self.server_given_up, self.client = True, None
            else:
                self._failed_in_a_row = 0
            self._vectors.update(zip(new, got))
        return np.stack([self._vectors[t] for t in texts])

    def _add(self, fish: int, tick: int, text: str, importance: float, code: int, vector: np.ndarray) -> None:
        key = len(self.items[fish])
        self.items[fish].append((tick, text, importance, code))
        self._index(fish).add(key, vector)

    def remember(self, events: Events) -> None:
        if not len(events):
            return
        texts = [events.text(k) for k in range(len(events))]
        vectors = self.embed(texts)
        for k, text in enumerate(texts):
            fish, code = int(events.fish[k]), int(events.code[k])
            self._add(fish, int(events.tick[k]), text, IMPORTANCE.get(code, 0.3), code, vectors[k])
            self._since_reflection[fish] += 1
            if self._since_reflection[fish] >= self.cfg.reflect_every:
                self._reflect(fish, int(events.tick[k]))

    def _reflect(self, fish: int, tick: int) -> None:
        """A reflection: the most important of the fish's last ``reflect_every`` events, quoted."""
        self._since_reflection[fish] = 0
        recent = [it for it in self.items[fish][-self.cfg.reflect_every:] if it[3] != REFLECTION]
        top = sorted(recent, key=lambda it: (-it[2], -it[0]))[:3]
        if not top:
            return
        text = "looking back: " + "; ".join(f"t{t} {words}" for t, words, _, _ in sorted(top))
        self._add(fish, tick, text, 1.0, REFLECTION, self.embed([text])[0])

    def recall(self, fish: int, tick: int, view: str) -> tuple[list[str], list[str]]:
        items = self.items[fish]
        events = [k for k, it in enumerate(items) if it[3] != REFLECTION]
        reflections = [items[k][1] for k, it in enumerate(items) if it[3] == REFLECTION][-2:]
        if not events:
            return [], reflections
        query = self.embed([view.replace("\n", " ")])[0]
        found = self._index(fish).search(query, min(len(items), self.cfg.candidates), exact=True)
        relevance = {int(k): 1.0 - float(d) for k, d in zip(np.atleast_1d(found.keys), np.atleast_1d(found.distances))}
        c = self.cfg
        scored = []
        for k in events:
            t, _, imp, _ = items[k]
            score = (c.recency_weight * DECAY ** max(0, tick - t) + c.importance_weight * imp
                     + c.relevance_weight * relevance.get(k, 0.0))
            scored.append((-score, -t, k))
        best = sorted(scored)[:c.top_k]
        chosen = sorted(k for _, _, k in best)
        self._last[fish] = tuple((k, round(-s, 4)) for s, _, k in sorted(best, key=lambda b: b[2]))
        return [f"t{items[k][0]} {items[k][1]}" for k in chosen], reflections

    def recalled(self, fish: int) -> tuple[tuple[int, float], ...]:
        """The items ``fish``'s last recall chose (their ids in its memory, in tick order) and scores."""
        return self._last.get(fish, ())

    def __deepcopy__(self, memo: dict[int, Any]) -> VectorMemory:
        """A copy with its own index (an index is not copied: it is rebuilt from the items)."""
        out = VectorMemory.__new__(VectorMemory)
        out.cfg, out._index_type, out.client, out.dim = self.cfg, self._index_type, self.client, self.dim
        out._vectors = self._vectors  # (the embeddings of texts: the same whoever asks)
        out.embed_requests, out.embed_fallbacks = self.embed_requests, self.embed_fallbacks
        out._failed_in_a_row, out.server_given_up = self._failed_in_a_row, self.server_given_up
        out.set_state(self.get_state())
        out._last = dict(self._last)
        return out

    def get_state(self) -> Any:
        return {"items": [list(x) for x in self.items], "since": self._since_reflection.tolist()}

    def set_state(self, state: Any) -> None:
        self.items = [[(int(it[0]), str(it[1]), float(it[2]), int(it[3])) for it in x] for x in state["items"]]
        self._since_reflection = np.array(state["since"], np.int64)
        self._indexes = [None] * len(self.items)
        self._last = {}
        for fish, items in enumerate(self.items):
            if items:
                self._index(fish).add(np.arange(len(items)), self.embed([it[1] for it in items]))
