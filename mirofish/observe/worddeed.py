"""Does a fish do what it says? The *word-and-deed* score of each fish's plans.

Every plan a brain gives a fish is judged twice when it ends (replaced by the next decision):

* **word** — does the plan's *thought* agree with its goal and direction? The thought is read
  for a goal (:data:`GOAL_WORDS`: "food", "hungry" → forage; "others", "join" → school;
  "tired", "rest" → rest; …) and a compass direction. It *disagrees* when it names a goal and
  none of the plan's own goal's words ("tired, I stay put and rest" on an explore plan), or
  when an explore plan's thought names only another direction ("I head south" while the plan
  goes north); it agrees when it names the plan's goal or direction; a thought that names
  neither (or no thought) is not judged. A thought that claims food somewhere
  (:func:`claims_food`: "food two cells east", "food here") when the fish had no food in view
  as its plan began (``Frame.food_in_view``) is *unfounded*: it never agrees, whatever its
  goal, and is counted (``word_unfounded``) — a model that copies its prompt's example thought
  would otherwise agree with every forage plan it makes.
* **deed** — did the plan then happen? A forage plan that ate; an explore plan whose net
  displacement went its way (at least one cell, and at least half its moves); a school plan
  that spent at least half its ticks with another fish in view; a rest plan that stayed put
  (moved on at most a fifth of its ticks); keeping away from a crowd that ended with no more
  fish in view than it started with, from the glass by moving at all; a return to a
  remembered place that ate; a single held action (action mode) that succeeded at least once.

``word_agrees`` and ``deed_done`` are shares of the judged plans; ``word_and_deed`` is the
share of plans with a judged thought that both agreed and happened. The score is computed from
what every observer sees (frames: the decisions applied, positions, energy, executed actions,
fish in view), so live runs, replays and reports give the same figures for the same ticks.

For the instinct brain there is no thought (it writes none): its word score is empty and its
deed score says how often the body carries out the plans the planner picks. For a model, a low
word score means its stated reasons and its choices part ways; a low deed score with a high
word score means the plans it chooses are ones the body cannot carry out where the fish is.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import kernel
from ..actions import MOVE_DXDY
from ..arbiter import MOVED
from ..fish.plans import AWAY_NAMES, DEFAULT, G_HOLD, PlanTable
from ..fish.plantypes import DEEDS
from ..grid import SQRT3_2, SQUARE, Grid

if TYPE_CHECKING:
    from ..brains.base import DecisionBatch
    from ..frame import Frame

GOAL_WORDS = {t.name: t.words for t in DEFAULT.types if t.words}  # the default table's words (fish/plantypes.py)
_DIR_RE = re.compile(r"\b(north|south|west|east)\b")
# a hexagonal tank's six ways (mirofish/grid.py): "north-east", "north east", "northeast" … and east, west
_HEX_DIR_RE = re.compile(r"\b((?:north|south)[- ]?(?:east|west)|east|west)\b")
RECENT = 8  # judged plans kept per fish for the follow panel


def reads(thought: str, plans: PlanTable = DEFAULT) -> tuple[set[str], set[str]]:
    """(goals, directions) a thought names (``plans``: the run's table, whose rows' words it reads)."""
    text = f" {thought.lower()} "
    words_of = GOAL_WORDS if plans is DEFAULT else {t.name: t.words for t in plans.types if t.words}
    goals = {g for g, words in words_of.items() if any(w in text for w in words)}
    if plans.grid.hex:  # (its ways' words, spelt as the grid spells them: north-east)
        return goals, {w[:5] + "-" + w[-4:] if len(w) > 5 else w for w in _HEX_DIR_RE.findall(text)}
    return goals, set(_DIR_RE.findall(text))


_FOOD = re.compile(r"\b(food|meal|snack|algae)\b")
_PLACE = re.compile(r"\b(north|south|west|east|here|under|beside|next to|ahead|nearby|near|cells?|close)\b")
_SEEKING = re.compile(r"\b(no|not|none|without|find|look|looking|search|searching|seek|seeking|need|want|hoping)\b")


def claims_food(thought: str) -> bool:
    """Does ``thought`` say food is somewhere ("food two cells east", "eat the food here")? It
    names food and a place, and no word before the food's says it is sought or absent ("no
    food here", "looking for food to the east" claim nothing)."""
    text = thought.lower()
    m = _FOOD.search(text)
    return bool(m and _PLACE.search(text) and not _SEEKING.search(text[:m.start()]))


def word_verdict(goal: int, param: int, thought: str, plans: PlanTable = DEFAULT) -> bool | None:
    """Does ``thought`` agree with the plan (goal, param) (a goal code of ``plans``, the run's
    table)? None: it says nothing to judge."""
    if not thought or not thought.strip():
        return None
    goals, ways = reads(thought, plans)
    name = plans.names[goal] if 0 <= goal < plans.n else ""
    kind = plans.types[goal].param if 0 <= goal < plans.n else ""
    if kind == "direction":
        names = plans.grid.move_names  # (the tank's: a hexagonal tank's six)
        own = names[param] if 0 <= param < len(names) else ""
        if ways:
            return own in ways
    if kind == "action":
        return None  # a single action's thought is not read for a goal
    if not goals:
        return None
    return name in goals


MANY = 16  # a batch of this many new plans or more is opened and judged in numpy (a large tank)
_COLS = ("tick", "goal", "param", "x0", "y0", "nb0", "ticks", "moved", "ate", "company", "worked")
_HOLD = G_HOLD
# each goal's deed check (the plan types' ``deed``), as an index into DEEDS
_TICK = kernel.built()  # the compiled module, whatever MIROFISH_TICK says (WordDeed.compiled decides)


def _along(grid: Grid, x: np.ndarray, y: np.ndarray, x0: np.ndarray, y0: np.ndarray, prm: np.ndarray) -> np.ndarray:
    """How far each fish swam along its plan's direction ``prm`` from (x0, y0) to (x, y), in cells
    (0 for a parameter that is no direction): whole cells on the square grid; on a hexagonal one,
    along the direction's unit vector between the cells' centres on screen (one step: one)."""
    prm = np.asarray(prm, np.int64)
    way = (prm >= 0) & (prm < grid.n_moves)
    if not grid.hex:
        step = np.zeros((len(prm), 2), np.int64)
        step[way] = np.asarray(MOVE_DXDY, np.int64)[prm[way]]
        out: np.ndarray = (np.asarray(x) - x0) * step[:, 0] + (np.asarray(y) - y0) * step[:, 1]
        return out
    units = np.zeros((len(prm), 2))
    units[way] = np.asarray(grid.units)[prm[way]]
    (cx, cy), (cx0, cy0) = grid.centres(np.asarray(x), np.asarray(y)), grid.centres(np.asarray(x0), np.asarray(y0))
    # (every such distance is a whole number of quarter cells: rounded to one, no rounding noise)
    along: np.ndarray = np.round(((cx - cx0) * units[:, 0] + (cy - cy0) * units[:, 1]) * 4) / 4
    return along


def _along_one(grid: Grid, x: int, y: int, x0: int, y0: int, prm: int) -> float:
    """:func:`_along` for one plan, in Python numbers (a plan's close: no arrays)."""
    if not 0 <= prm < grid.n_moves:
        return 0.0
    if not grid.hex:
        dx, dy = MOVE_DXDY[prm]
        return float((x - x0) * dx + (y - y0) * dy)
    ux, uy = grid.units[prm]
    cx, cx0 = x + 0.5 * (y & 1), x0 + 0.5 * (y0 & 1)
    return round(((cx - cx0) * ux + (y - y0) * SQRT3_2 * uy) * 4) / 4


def _deeds(plans: PlanTable) -> np.ndarray:
    """Each goal's deed check of a run's table (the plan types' ``deed``), as an index into DEEDS."""
    return np.array([DEEDS.index(t.deed) for t in plans.types], np.int64)


_CROWD = AWAY_NAMES.index("crowd")
_RING = ("tick", "end", "goal", "param", "deed", "word", "unfounded")  # word: -1 none, 0 disagrees, 1 agrees


class WordDeed:
    """The word-and-deed score of every fish's plans, from frames (see the module doc).

    ``observe(frame)`` as an engine observer (a few numpy operations per tick, Python only per
    decision); ``keep`` keeps every judged plan in ``records`` (for reports and tables), else
    only the newest :data:`RECENT` per fish."""

    def __init__(self, n_fish: int, keep: bool = False, plans: PlanTable = DEFAULT, grid: Grid = SQUARE):
        self.n = n_fish
        self.grid = grid  # the tank's (mirofish/grid.py): which way a direction is, what eating is
        self.keep = keep
        self.plans = plans  # the run's plan table (mirofish/registry.py): its rows' words and deeds
        self._deed = plans.part("worddeed", _deeds)
        self.records: list[dict[str, Any]] = []
        # the newest RECENT judged plans of each fish, as numbers (columns: _RING), and their
        # thoughts by (fish, slot): a large tank's tick judges thousands of plans, no dict each
        self._ring = np.zeros((n_fish, RECENT, len(_RING)), np.int64)
        self._ring_n = np.zeros(n_fish, np.int64)  # plans judged per fish (the next slot: this % RECENT)
        self._ring_thought: dict[tuple[int, int], str] = {}
        self._said = np.zeros(n_fish, bool)  # the open plan came with a thought
        # word agree, word disagree, deed done, not, both, judged, thought claimed food not in view
        self.counts = np.zeros((n_fish, 7), np.int64)
        self.food0 = np.full(n_fish, -1, np.int16)  # food in view as each open plan began (-1: unknown)
        self.open = np.zeros(n_fish, bool)
        self.table = np.zeros((len(_COLS), n_fish), np.int64)  # each open plan's columns (_COLS), fish by fish
        self.thought = [""] * n_fish
        self._prev: tuple[np.ndarray, ...] | None = None
        self._prev_native = False  # the arrays of _prev are a compiled tick's own (its frame was native)
        self._holds = 0  # open single-action plans (action mode)
        # the per-tick tally in C (_tick.deeds, and judge: a hexagonal tank's six ways too)
        self.compiled = kernel.compiled_tick() is not None

    @property
    def plan(self) -> dict[str, np.ndarray]:
        """Each open plan's columns by name (views of :attr:`table`)."""
        return dict(zip(_COLS, self.table))

    @kernel.positional
    def observe(self, f: Frame) -> None:
        prev = self._prev if self._prev is not None else (f.x, f.y, f.energy, f.neighbours)
        T = self.table
        seen_of = f.food_in_view or [None] * len(f.applied)
        for b, seen in zip(f.applied, seen_of):
            if self._judge_quiet(b, f, prev):  # no words to read: every plan judged and opened in C
                continue
            if len(b) >= MANY:
                self._open_many(b.fish, b.goals, b.params, b.thoughts or [""] * len(b), f, prev)
                self.food0[b.fish] = -1 if seen is None else seen
            else:
                self._open_each(b, seen, f, prev)
        compiled = _TICK if self.compiled else None
        if compiled is not None:
            mo, ex, en, before, nb = f.move_outcome, f.executed, f.energy, prev[2], f.neighbours
            if not f.native:  # a frame from elsewhere (a replay's): as the compiled code takes them
                c = np.ascontiguousarray
                mo, ex, en, nb = c(mo, np.int8), c(ex, np.int8), c(en, np.int32), c(nb, np.int16)
            if before.dtype != np.int32 or not before.flags.c_contiguous:  # (the last frame may have been another's)
                before = np.ascontiguousarray(before, np.int32)
            compiled.deeds(  # by name (_tick.DEEDS_ARRAYS, DEEDS_INTS)
                {"open": self.open, "move_outcome": mo, "executed": ex, "energy": en, "energy_before": before,
                 "neighbours": nb, "table": T},  # rows: _COLS
                {"holds": self._holds, "moves": self.grid.n_moves})
        else:
            self._tally(f, prev)
        self._prev = (f.x, f.y, f.energy, f.neighbours)
        self._prev_native = f.native

    def _open_each(self, b: DecisionBatch, seen: np.ndarray | None, f: Frame, prev: tuple[np.ndarray, ...]) -> None:
        """A few new plans (a small tank's tick), one at a time: each fish's open plan judged
        (its words read), the new one opened."""
        T, thoughts = self.table, b.thoughts or [""] * len(b)
        food = seen.tolist() if seen is not None else [-1] * len(b)
        for fish, goal, param, thought, fd in zip(b.fish.tolist(), b.goals.tolist(), b.params.tolist(), thoughts,
                                                  food):
            self._close(fish, f.tick, prev)
            self.food0[fish] = fd
            self.open[fish] = True
            self.thought[fish] = thought or ""
            self._said[fish] = bool(thought)
            self._holds += goal == _HOLD
            T[:, fish] = (f.tick, goal, param, prev[0][fish], prev[1][fish], f.neighbours[fish], 0, 0, 0, 0, 0)

    @kernel.positional
    def _judge_quiet(self, b: DecisionBatch, f: Frame, prev: tuple[np.ndarray, ...]) -> bool:
        """A batch of plans without words, neither theirs nor those they end (the instinct
        brain's): each fish's open plan judged and the new one opened in one compiled call
        (``_tick.judge``), as :meth:`_open_each` does plan by plan (tests/test_word_deed.py).
        False, doing nothing, for a batch with words (or when records are kept)."""
        if not (self.compiled and not self.keep and not (b.thoughts and any(b.thoughts)) and b.fish.size):
            return False
        assert _TICK is not None
        fish, goals, params, x, y, nb_prev, nb = b.fish, b.goals, b.params, prev[0], prev[1], prev[3], f.neighbours
        if not (f.native and self._prev_native):  # (a decision batch's arrays are the compiled code's dtypes)
            c = np.ascontiguousarray
            x, y, nb_prev, nb = c(x, np.int64), c(y, np.int64), c(nb_prev, np.int16), c(nb, np.int16)
        if not (fish.flags.c_contiguous and goals.flags.c_contiguous and params.flags.c_contiguous):
            c = np.ascontiguousarray
            fish, goals, params = c(fish, np.int64), c(goals, np.int8), c(params, np.int16)
        got = _TICK.judge(  # by name (_tick.JUDGE_ARRAYS, JUDGE_INTS); None: one of the fish's open plans had words
            {"fish": fish, "goals": goals, "params": params, "open": self.open,
             "said": self._said, "food0": self.food0, "table": self.table, "counts": self.counts,
             "ring": self._ring, "ring_n": self._ring_n, "deed_of": self._deed, "x": x,
             "y": y, "nb_prev": nb_prev, "neighbours": nb},
            {"tick": f.tick, "recent": RECENT, "crowd": _CROWD, "away_kinds": len(AWAY_NAMES),
             "moves": self.grid.n_moves})
        if got is None:  # (judged in Python, with the words: nothing was done here)
            return False
        holds, slots = got
        self._holds += holds
        if self._ring_thought:  # a slot written over loses the words it kept
            for fish_i, slot in zip(fish.tolist(), slots.tolist()):
                if slot >= 0:
                    self._ring_thought.pop((fish_i, slot), None)
        return True

    def _tally(self, f: Frame, prev: tuple[np.ndarray, ...]) -> None:
        """One tick of every open plan in numpy (the reference for _tick.deeds)."""
        P, on = self.plan, self.open
        moved = (f.move_outcome == MOVED) & on
        eat = self.grid.eat
        ate = (f.executed == eat) & (f.energy > prev[2]) & on
        P["ticks"] += on
        P["moved"] += moved
        P["ate"] += ate
        P["company"] += (f.neighbours > 0) & on
        if self._holds:
            act = P["param"]
            worked = np.where(act == eat, ate, np.where(act < eat, moved, f.executed == act))
            P["worked"] += on & (P["goal"] == _HOLD) & worked

    def _open_many(self, fish: np.ndarray, goals: np.ndarray, params: np.ndarray, thoughts: list[str],
                   f: Frame, prev: tuple[np.ndarray, ...]) -> None:
        """A batch of new plans at once (a large tank's tick): the open ones are judged first."""
        fish = np.asarray(fish, np.int64)
        self._close_many(fish, f.tick, prev)
        P = self.plan
        self.open[fish] = True
        for i, t in zip(fish.tolist(), thoughts):
            self.thought[i] = t or ""
        self._said[fish] = [bool(t) for t in thoughts]
        goals = np.asarray(goals, np.int64)
        self._holds += int(np.count_nonzero(goals == _HOLD))
        P["tick"][fish], P["goal"][fish], P["param"][fish] = f.tick, goals, params
        P["x0"][fish], P["y0"][fish], P["nb0"][fish] = prev[0][fish], prev[1][fish], f.neighbours[fish]
        for c in ("ticks", "moved", "ate", "company", "worked"):
            P[c][fish] = 0

    def _close_many(self, fish: np.ndarray, tick: int, prev: tuple[np.ndarray, ...]) -> None:
        """:meth:`_close` for many fish at once: the deeds judged in numpy, the words and the
        records fish by fish (tests/test_word_deed.py checks both give the same scores)."""
        P = self.plan
        sel = fish[self.open[fish]]
        self.open[sel] = False
        self._holds -= int(np.count_nonzero(P["goal"][sel] == _HOLD))
        sel = sel[P["ticks"][sel] > 0]
        if not sel.size:
            return
        g, prm, ticks = P["goal"][sel], P["param"][sel], P["ticks"][sel]
        moved = P["moved"][sel]
        along = _along(self.grid, prev[0][sel], prev[1][sel], P["x0"][sel], P["y0"][sel], prm)
        crowd = prm % len(AWAY_NAMES) == _CROWD
        checks = {"ate": P["ate"][sel] > 0, "company": 2 * P["company"][sel] >= ticks,
                  "along": along >= np.maximum(1, moved // 2), "still": 5 * moved <= ticks,
                  "away": np.where(crowd, prev[3][sel] <= P["nb0"][sel], moved > 0), "worked": P["worked"][sel] > 0}
        rows = np.zeros((len(DEEDS), sel.size), bool)  # each check's row, in DEEDS' order
        for d, v in checks.items():
            rows[DEEDS.index(d)] = v
        done = rows[self._deed[g], np.arange(sel.size)]  # (the check of each plan's deed)
        quiet = np.zeros(sel.size, bool) if self.keep else ~self._said[sel]  # no thought: no words to read
        if quiet.any():  # judged in numpy, kept in the ring
            qs, dq = sel[quiet], done[quiet]
            self.counts[qs, 2] += dq
            self.counts[qs, 3] += ~dq
            self.counts[qs, 5] += 1
            slot = self._ring_n[qs] % RECENT
            self._ring[qs, slot] = np.stack([P["tick"][qs], np.full(qs.size, tick), g[quiet], prm[quiet], dq,
                                             np.full(qs.size, -1), np.zeros(qs.size, np.int64)], axis=1)
            self._ring_n[qs] += 1
            if self._ring_thought:
                for f_i, s_i in zip(qs.tolist(), slot.tolist()):
                    self._ring_thought.pop((f_i, s_i), None)
        said = ~quiet
        if not np.count_nonzero(said):
            return
        for fish_i, g_i, p_i, d_i, t0 in zip(sel[said].tolist(), g[said].tolist(), prm[said].tolist(),
                                             done[said].tolist(), P["tick"][sel[said]].tolist()):
            self._judged(fish_i, g_i, p_i, bool(d_i), t0, tick)

    def _judged(self, fish: int, g: int, prm: int, done: bool, start: int, tick: int) -> None:
        """Count one judged plan (its deed ``done``; its words read here) and keep its record."""
        thought = self.thought[fish] if self._said[fish] else ""  # (a plan opened in C keeps no words)
        word = word_verdict(g, prm, thought, self.plans) if thought else None
        unfounded = word is not None and self.food0[fish] == 0 and claims_food(thought)
        if unfounded:
            word = False  # it claims food the fish did not see: never agreeing (module doc)
        c = self.counts[fish]
        if word is not None:
            c[0 if word else 1] += 1
            c[4] += int(word and done)
            c[6] += int(unfounded)
        c[2 if done else 3] += 1
        c[5] += 1
        slot = int(self._ring_n[fish] % RECENT)
        self._ring[fish, slot] = (start, tick, g, prm, done, -1 if word is None else int(word), unfounded)
        self._ring_n[fish] += 1
        if thought:
            self._ring_thought[(fish, slot)] = thought
        elif self._ring_thought:
            self._ring_thought.pop((fish, slot), None)
        if self.keep:
            self.records.append(self._record(fish, slot))

    def _record(self, fish: int, slot: int) -> dict[str, Any]:
        """One judged plan as a dict, from the ring."""
        start, end, g, prm, done, word, unfounded = self._ring[fish, slot].tolist()
        rec = {"tick": start, "end": end, "fish": fish, "goal": self.plans.names[g], "param": prm,
               "thought": self._ring_thought.get((fish, slot), ""), "word": None if word < 0 else bool(word),
               "deed": bool(done)}
        if unfounded:
            rec["unfounded"] = True
        return rec

    def recent_of(self, fish: int) -> list[dict[str, Any]]:
        """``fish``'s newest judged plans (at most RECENT), oldest first."""
        n = int(self._ring_n[fish])
        return [self._record(fish, j % RECENT) for j in range(max(0, n - RECENT), n)]

    @property
    def recent(self) -> list[list[dict[str, Any]]]:
        """Every fish's newest judged plans (:meth:`recent_of` for each)."""
        return [self.recent_of(f) for f in range(self.n)]

    def _close(self, fish: int, tick: int, prev: tuple[np.ndarray, ...]) -> None:
        """Judge ``fish``'s open plan, which ended before ``tick`` (``prev``: the frame arrays
        after its last tick: x, y, energy, fish in view)."""
        if not self.open[fish]:
            return
        self.open[fish] = False
        t0, g, prm, x0, y0, nb0, ticks, moved, ate, company, worked = self.table[:, fish].tolist()
        self._holds -= g == _HOLD
        if ticks == 0:
            return
        deed = DEEDS[self._deed[g]]
        if deed == "ate":  # return: it went back to where it ate, and ate
            done = ate > 0
        elif deed == "company":
            done = 2 * company >= ticks
        elif deed == "along":
            along = _along_one(self.grid, int(prev[0][fish]), int(prev[1][fish]), x0, y0, prm)
            done = along >= max(1, moved // 2)
        elif deed == "still":
            done = 5 * moved <= ticks
        elif deed == "away":
            done = prev[3][fish] <= nb0 if prm % len(AWAY_NAMES) == _CROWD else moved > 0
        else:
            done = worked > 0
        self._judged(fish, g, prm, bool(done), t0, tick)

    def fish(self, i: int) -> dict[str, Any]:
        """One fish's score (for the follow panel): shares and the newest judged plans."""
        return {**_shares(self.counts[i]), "recent": self.recent_of(i)}

    def shares_of(self, fish: np.ndarray) -> dict[str, Any]:
        """The shares over the plans of the fish ``fish`` picks (a mask or ids): a group's."""
        return _shares(self.counts[fish].sum(axis=0))

    def summary(self, brain: str = "") -> dict[str, Any]:
        """The tank's score (JSON): shares over all judged plans (per goal with ``keep``), and
        for the instinct brain what it means."""
        out = _shares(self.counts.sum(axis=0))
        if brain == "instinct":
            out["note"] = ("the instinct brain writes no thought: no word score; deed = how often the body carries "
                           "out the planner's plans")
        if self.keep:
            by_goal: dict[str, list[int]] = {}
            for r in self.records:
                d = by_goal.setdefault(r["goal"], [0, 0])
                d[0] += 1
                d[1] += int(r["deed"])
            out["deed_by_goal"] = {g: round(d[1] / d[0], 3) for g, d in sorted(by_goal.items())}
        return out


def _shares(c: np.ndarray) -> dict[str, Any]:
    """Plans and thoughts judged and the shares of one count row (see WordDeed.counts)."""
    said = int(c[0] + c[1])
    return {"plans_judged": int(c[5]), "thoughts_judged": said,
            "word_agrees": round(float(c[0]) / said, 3) if said else None,
            "deed_done": round(float(c[2]) / float(c[5]), 3) if c[5] else None,
            "word_and_deed": round(float(c[4]) / said, 3) if said else None,
            "word_unfounded": int(c[6])}
