"""The glossary as a runtime resource, in SQLite.

Schema = the source design's glossary table (docs/design.md §5) plus the model that created a
term, its status (``active``, ``proposed`` — waiting for a majority in a three-agent game — or
``pruned``) and who proposed it. Lifecycle: reuse before invention; a new term needs
canonical properties and the sender's definition; the receiver's interpretation is stored
and compared with them; every use updates usage, success, ``success_rate`` and
``stable_score = success_rate * usage / (usage + 1) * agreement`` where ``agreement`` is the
share of the receivers' interpretations that matched the sender's definition (disagreement
lowers a term's score, and a term that is read wrongly often enough is pruned); weak or stale
terms are pruned. With review on, a new term waits as ``pending`` until a person approves or
rejects it (``glossary review``, or the window's review panel). ``snapshot()`` stores the
whole glossary per run so it can be versioned, reloaded and diffed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ...observe.paths import OutputError, check_scene_db, open_read_only

SCHEMA = """
CREATE TABLE IF NOT EXISTS glossary (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    term TEXT UNIQUE NOT NULL,
    canonical_properties TEXT NOT NULL,
    definition_by_sender TEXT,
    definition_by_receiver TEXT,
    usage_count INTEGER DEFAULT 0,
    success_count INTEGER DEFAULT 0,
    success_rate REAL DEFAULT 0.0,
    stable_score REAL DEFAULT 0.0,
    created_at TEXT,
    updated_at TEXT,
    last_used_round INTEGER,
    model TEXT,
    status TEXT DEFAULT 'active',
    proposed_by TEXT,
    heard_count INTEGER DEFAULT 0,
    agreed_count INTEGER DEFAULT 0,
    tier TEXT DEFAULT 'private',
    example TEXT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS glossary_snapshots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    round INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    data TEXT NOT NULL
);
"""

# What a term means: attribute → value (a term for a combination, or a template's schema, names
# several). JSON as stated by a sender or read by a receiver — a model's may hold anything.
Meaning: TypeAlias = dict[str, Any]


@dataclass
class Term:
    term: str
    canonical: Meaning
    by_sender: Meaning | None
    by_receiver: Meaning | None
    usage: int
    success: int
    success_rate: float
    stable_score: float
    last_used_round: int | None
    model: str
    status: str
    proposed_by: str | None
    heard: int = 0  # receivers' interpretations recorded
    agreed_n: int = 0  # … that matched the sender's definition
    tier: str = "private"  # private (its proposer's), shared (understood once), global (voted, approved, settled)
    example: str | None = None  # a template term (game setting ``templates``): the instance it was coined for

    @property
    def agreement_rate(self) -> float:
        return self.agreed_n / self.heard if self.heard else 1.0

    @property
    def agreed(self) -> bool:
        return self.by_receiver is not None and self.by_receiver == self.canonical


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# a count (uses, successes, interpretations) or a round number a file may hold: far above any
# real one, and below SQLite's 64-bit INTEGER (a use adds one and is written back)
COUNT_LIMIT = 2**53


class GlossaryError(ValueError):
    """A glossary file that cannot be used; one line."""


class Glossary:
    """A glossary in an SQLite file (``:memory:`` for a throwaway one)."""

    def __init__(self, path: str | Path = ":memory:", model: str = "embedded", read_only: bool = False):
        """``read_only``: open an existing file without writing a byte to it (listing, diffs):
        an old-format glossary is read as it is, not upgraded."""
        self.path, self.model, self.read_only = str(path), model, read_only
        try:
            check_scene_db(path, {"glossary", "meta", "glossary_snapshots"}, "glossary")
        except OutputError as exc:
            raise GlossaryError(str(exc)) from None
        try:
            if read_only:
                self.db = open_read_only(self.path)
                kinds = {r[0]: r[1] for r in self.db.execute("SELECT name, type FROM sqlite_master")}
                if kinds.get("glossary") != "table":
                    raise GlossaryError(f"{self.path} is not a glossary (no glossary table)")
            else:
                self.db = sqlite3.connect(self.path, check_same_thread=False)  # a model scene steps on a worker
                self.db.executescript(SCHEMA)
            have = {r[1] for r in self.db.execute("PRAGMA table_info(glossary)")}
            if not read_only:
                for column in ("heard_count", "agreed_count"):  # glossaries written before these columns
                    if column not in have:
                        self.db.execute(f"ALTER TABLE glossary ADD COLUMN {column} INTEGER DEFAULT 0")
                if "tier" not in have:  # … and before tiers: what it was is unknown, "shared" if it worked once
                    self.db.execute("ALTER TABLE glossary ADD COLUMN tier TEXT DEFAULT 'private'")
                    self.db.execute("UPDATE glossary SET tier = 'shared' WHERE success_count > 0")
                if "example" not in have:  # … and before template terms
                    self.db.execute("ALTER TABLE glossary ADD COLUMN example TEXT")
                    have.add("example")
                have |= {"heard_count", "agreed_count", "tier"}
        except sqlite3.DatabaseError as exc:
            raise GlossaryError(f"glossary file {self.path} is not usable: {exc}") from None
        self._columns = have
        self._cache: dict[str, Term] = {}
        self._load()

    _FIELDS = ("term", "canonical_properties", "definition_by_sender", "definition_by_receiver", "usage_count",
               "success_count", "success_rate", "stable_score", "last_used_round", "model", "status", "proposed_by",
               "heard_count", "agreed_count", "tier", "example")

    def _load(self) -> None:
        """Every term, checked: JSON objects where meanings are, numbers where counts are,
        readable text — a damaged file is one line (:class:`GlossaryError`), never a crash."""
        missing = {"term", "canonical_properties"} - self._columns
        if missing:
            raise GlossaryError(f"{self.path} is not a glossary (its glossary table has no {sorted(missing)[0]})")
        select = ", ".join(f if f in self._columns else "NULL" for f in self._FIELDS)
        try:
            self.db.text_factory = bytes  # decode (and check) the text ourselves
            rows = self.db.execute(f"SELECT {select} FROM glossary").fetchall()
        except sqlite3.DatabaseError as exc:
            raise GlossaryError(f"glossary file {self.path} is damaged: {exc}") from None
        finally:
            self.db.text_factory = str
        cache = {}
        for n, row in enumerate(rows, 1):
            try:
                t = self._term_of(row)
            except (ValueError, TypeError, UnicodeDecodeError) as exc:
                raise GlossaryError(f"glossary file {self.path} is damaged (term row {n}: {exc})") from None
            cache[t.term] = t
        self._cache = cache

    def _term_of(self, row: Sequence[Any]) -> Term:
        """One row of the glossary table as a :class:`Term`, its fields checked (ValueError,
        TypeError or UnicodeDecodeError naming what is wrong)."""
        r = [v.decode() if isinstance(v, bytes) else v for v in row]
        meaning = [json.loads(r[k]) if r[k] else None for k in (1, 2, 3)]
        if not isinstance(meaning[0], dict) or not all(m is None or isinstance(m, dict) for m in meaning):
            raise ValueError("a meaning is not a JSON object")
        counts = [int(r[k] or 0) for k in (4, 5, 12, 13)]
        for k, c in zip((4, 5, 12, 13), counts, strict=True):
            if not 0 <= c <= COUNT_LIMIT:
                raise ValueError(f"{self._FIELDS[k]} {c} is outside 0..{COUNT_LIMIT:,}")
        rates = [float(r[k] or 0.0) for k in (6, 7)]
        last = int(r[8]) if r[8] is not None else None
        if last is not None and not -COUNT_LIMIT <= last <= COUNT_LIMIT:
            raise ValueError(f"last_used_round {last} is outside ±{COUNT_LIMIT:,}")
        if not isinstance(r[0], str) or not r[0]:
            raise ValueError("a term without a name")
        return Term(r[0], meaning[0], meaning[1], meaning[2], counts[0], counts[1], rates[0], rates[1], last,
                    str(r[9] or ""), str(r[10] or "active"), r[11], counts[2], counts[3],
                    str(r[14] or ("shared" if counts[1] else "private")), r[15] if isinstance(r[15], str) else None)

    # ------------------------------------------------------------ reading

    def get(self, term: str) -> Term | None:
        return self._cache.get(term)

    def active(self) -> list[Term]:
        return [t for t in self._cache.values() if t.status == "active"]

    def terms_for(self, canonical: Meaning, statuses: Sequence[str] = ("active",)) -> list[Term]:
        return [t for t in self._cache.values() if t.canonical == canonical and t.status in statuses]

    def __contains__(self, term: str) -> bool:
        return term in self._cache

    def size(self) -> int:
        return len(self.active())

    # ------------------------------------------------------------ writing

    def add(self, term: str, canonical: Meaning, definition_by_sender: Meaning, round_: int, status: str = "active",
            proposed_by: str | None = None, example: str | None = None) -> Term:
        """A new term: refused without canonical properties and the sender's definition. A
        template term (``canonical`` is then its schema: the values it matches, whatever the
        rest) keeps the ``example`` it was coined for."""
        if not term or not canonical or not definition_by_sender:
            raise ValueError("a new term needs canonical properties and the sender's definition")
        if term in self._cache:
            raise ValueError(f"term {term!r} exists already")
        now = _now()
        tier = "global" if proposed_by == "fixed" else "private"  # the fixed condition's terms are agreed upfront
        self.db.execute("INSERT INTO glossary (term, canonical_properties, definition_by_sender, created_at, "
                        "updated_at, last_used_round, model, status, proposed_by, tier, example) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        (term, json.dumps(canonical, sort_keys=True), json.dumps(definition_by_sender, sort_keys=True),
                         now, now, round_, self.model, status, proposed_by, tier, example))
        t = Term(term, dict(canonical), dict(definition_by_sender), None, 0, 0, 0.0, 0.0, round_, self.model, status,
                 proposed_by, tier=tier, example=example)
        self._cache[term] = t
        return t

    def set_status(self, term: str, status: str) -> None:
        """A new status; a term voted in (three agents) or approved by a person becomes global."""
        t = self._cache[term]
        if status == "active" and t.status in ("proposed", "pending"):
            self.set_tier(term, "global")
        self.db.execute("UPDATE glossary SET status = ?, updated_at = ? WHERE term = ?", (status, _now(), term))
        t.status = status

    # the tiers' lifecycle: private → shared (a receiver understood it once) → global (voted in,
    # approved, or settled: used 10 times with a stable score of 0.6 or more)
    GLOBAL_USES, GLOBAL_SCORE = 10, 0.6

    def set_tier(self, term: str, tier: str) -> None:
        self.db.execute("UPDATE glossary SET tier = ? WHERE term = ?", (tier, term))
        self._cache[term].tier = tier

    def interpret(self, term: str, definition: Meaning | None) -> None:
        """Store the receiver's interpretation of a term; a reading that differs from the
        sender's definition lowers the term's stable score."""
        t = self._cache[term]
        t.by_receiver = dict(definition) if definition else None
        if definition:
            t.heard += 1
            t.agreed_n += int(definition == t.canonical)
            self._rescore(t)
        self.db.execute("UPDATE glossary SET definition_by_receiver = ?, heard_count = ?, agreed_count = ?, "
                        "stable_score = ?, updated_at = ? WHERE term = ?",
                        (json.dumps(definition, sort_keys=True) if definition else None, t.heard, t.agreed_n,
                         t.stable_score, _now(), term))

    @staticmethod
    def _rescore(t: Term) -> None:
        t.stable_score = t.success_rate * t.usage / (t.usage + 1) * t.agreement_rate

    def record_use(self, term: str, success: bool, round_: int) -> None:
        t = self._cache[term]
        t.usage += 1
        t.success += int(success)
        t.success_rate = t.success / t.usage
        self._rescore(t)
        t.last_used_round = round_
        self.db.execute("UPDATE glossary SET usage_count = ?, success_count = ?, success_rate = ?, stable_score = ?, "
                        "last_used_round = ?, updated_at = ? WHERE term = ?",
                        (t.usage, t.success, t.success_rate, t.stable_score, round_, _now(), term))
        if success and t.tier == "private":
            self.set_tier(term, "shared")
        if t.tier == "shared" and t.status == "active" and t.usage >= self.GLOBAL_USES \
                and t.stable_score >= self.GLOBAL_SCORE:
            self.set_tier(term, "global")

    def prune(self, round_: int, below: float, after_uses: int, stale_rounds: int) -> list[str]:
        """Retire weak (low stable score once used enough) and stale (long unused) terms; a
        given glossary's terms (the fixed condition's) are not forgotten for lack of use."""
        out = []
        for t in self.active():
            weak = t.usage >= after_uses and t.stable_score < below
            stale = (t.last_used_round is not None and round_ - t.last_used_round > stale_rounds
                     and t.proposed_by != "fixed")
            if weak or stale:
                self.set_status(t.term, "pruned")
                out.append(t.term)
        return out

    def pending(self) -> list[Term]:
        """Terms waiting for a person's review before they become global."""
        return sorted((t for t in self._cache.values() if t.status == "pending"), key=lambda t: t.term)

    def review(self, term: str, approve: bool) -> None:
        """A person's verdict on a pending term: active (global) or rejected."""
        self.review_all([term] if approve else [], [] if approve else [term])

    def review_all(self, approve: list[str], reject: list[str]) -> None:
        """Verdicts on several pending terms, all or none: every term is checked first, then
        they are applied in one transaction."""
        self.check_review(approve, reject)
        self.db.commit()
        try:
            with self.db:
                for term in approve:
                    self.set_status(term, "active")
                for term in reject:
                    self.set_status(term, "rejected")
        except sqlite3.DatabaseError as exc:
            self._load()
            raise GlossaryError(f"glossary file {self.path}: the review was not saved ({exc})") from None

    def check_review(self, approve: list[str], reject: list[str]) -> None:
        """:class:`GlossaryError` if the verdicts cannot all apply (a term not pending, one both
        approved and rejected); works on a glossary opened read-only, so a review that would fail
        is refused before the file is opened for writing."""
        for term in [*approve, *reject]:
            t = self._cache.get(term)
            if t is None or t.status != "pending":
                raise GlossaryError(f"no pending term {term!r} in {self.path} (nothing was changed)")
        both = set(approve) & set(reject)
        if both:
            raise GlossaryError(f"term {sorted(both)[0]!r} is both approved and rejected (nothing was changed)")

    def commit(self) -> None:
        self.db.commit()

    @property
    def rounds_played(self) -> int:
        """Rounds played with this glossary over all runs (round numbers continue across restarts)."""
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'rounds_played'").fetchone()
            n = int(row[0]) if row else 0
            if not 0 <= n <= COUNT_LIMIT:
                raise ValueError(f"{n} is outside 0..{COUNT_LIMIT:,}")
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise GlossaryError(f"glossary file {self.path} is damaged (meta rounds_played: {exc})") from None
        return n

    @rounds_played.setter
    def rounds_played(self, n: int) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('rounds_played', ?)", (str(int(n)),))

    # ------------------------------------------------------------ versions

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {t.term: {"canonical": t.canonical, "by_sender": t.by_sender, "by_receiver": t.by_receiver,
                         "usage": t.usage, "success_rate": round(t.success_rate, 4),
                         "stable_score": round(t.stable_score, 4), "agreement": round(t.agreement_rate, 4),
                         "status": t.status, "tier": t.tier, "model": t.model,
                         **({"example": t.example} if t.example else {})}
                for t in sorted(self._cache.values(), key=lambda t: t.term)}

    def snapshot(self, run_id: str, round_: int) -> int:
        cur = self.db.execute("INSERT INTO glossary_snapshots (run_id, round, created_at, data) VALUES (?,?,?,?)",
                              (run_id, round_, _now(), json.dumps(self.as_dict(), sort_keys=True)))
        self.db.commit()
        return int(cur.lastrowid or 0)

    def snapshots(self) -> list[tuple[int, str, int]]:
        try:
            if not self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'glossary_snapshots'").fetchone():
                return []  # an old-format file read as it is
            rows = self.db.execute("SELECT id, run_id, round FROM glossary_snapshots ORDER BY id").fetchall()
        except sqlite3.DatabaseError as exc:
            raise GlossaryError(f"glossary file {self.path} is damaged: {exc}") from None
        return [(int(i), str(run), int(r)) for i, run, r in rows]

    def load_snapshot(self, snapshot_id: int) -> dict[str, dict[str, Any]]:
        try:
            row = self.db.execute("SELECT data FROM glossary_snapshots WHERE id = ?", (snapshot_id,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise GlossaryError(f"glossary file {self.path} has no usable snapshots: {exc}") from None
        if row is None:
            raise GlossaryError(f"no glossary snapshot {snapshot_id} in {self.path}")
        try:
            data = json.loads(row[0])
            if not isinstance(data, dict) or not all(isinstance(v, dict) and "status" in v and "by_receiver" in v
                                                     for v in data.values()):
                raise ValueError("not a glossary")
        except (ValueError, TypeError) as exc:
            raise GlossaryError(f"glossary snapshot {snapshot_id} in {self.path} is damaged ({exc})") from None
        return data

    @staticmethod
    def diff(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
        """Terms added, removed (pruned or gone) and whose meaning or status changed."""
        live: Callable[[dict[str, dict[str, Any]]], set[str]] = lambda d: {
            k for k, v in d.items() if v["status"] == "active"}
        changed = sorted(k for k in set(old) & set(new)
                         if (old[k]["by_receiver"], old[k]["status"]) != (new[k]["by_receiver"], new[k]["status"]))
        return {"added": sorted(live(new) - live(old)), "removed": sorted(live(old) - live(new)), "changed": changed}

    def close(self) -> None:
        if not self.read_only:
            self.db.commit()
        self.db.close()
