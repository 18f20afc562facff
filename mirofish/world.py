"""The world: water + fish + arbiter, advanced one tick at a time from a set of intents.

``World`` owns the only random generator of a run and all state that the state hash
covers. It never imports a brain, pygame or openai, and never reads the clock: the engine
asks it which fish need a decision, hands it decisions, and calls :meth:`World.step`.

Tick order (DESIGN §3): exhausted fish are made to rest → the arbiter resolves moves and
meals → food spawns and rots → energy → age → the fish sense their new surroundings,
remember what happened and raise decision triggers for the next tick.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from . import arbiter
from .actions import Action, N_ACTIONS
from .config import Config, MemoryConfig, hundredths
from .fish import memory as mem
from .fish.memory import LongMemory, ShortMemory, Summarizer, TemplateSummarizer
from .fish.perception import Perception, render_view, view_codes
from .fish.personality import persona_text, sample_traits
from .rng import make_generator, mix64
from .water import NO_FOOD, Water

# Decision triggers, most urgent first (a request carries the first that applies).
NEVER = -(2**30)  # "long ago" for tick-valued fields

EVENT_ORDER = np.array([mem.EXHAUSTED, mem.REFUSED, mem.BLOCKED, mem.ATE, mem.FOOD_TAKEN, mem.NOTHING_TO_EAT,
                        mem.LOW_ENERGY, mem.FOOD_SEEN, mem.NEIGHBOURS], np.int8)

T_LOW_ENERGY, T_ACTION_FAILED, T_FOOD_ROSE, T_NEIGHBOURS, T_TIMEOUT = range(5)
TRIGGER_NAMES = ("low_energy", "action_failed", "food_rose", "neighbours_changed", "timeout")


@dataclass
class StepOutcome:
    """What happened in one tick, per fish (read-only for observers)."""

    tick: int  # the tick that was simulated
    executed: np.ndarray  # action each fish actually attempted (exhausted → rest)
    move_outcome: np.ndarray  # arbiter.MOVED / STAYED / BLOCKED / CROWDED / OCCUPIED
    ate: np.ndarray  # bool
    food_spawned: int
    food_rotted: int


class School:
    """All per-fish state as parallel arrays (index = fish id)."""

    def __init__(self, n: int, cfg_memory: MemoryConfig):
        self.n = n
        self.ids = np.arange(n, dtype=np.int64)
        self.cell = np.zeros(n, np.int64)
        self.heading = np.zeros(n, np.int8)
        self.energy = np.zeros(n, np.int32)
        self.age = np.zeros(n, np.int32)
        self.intent = np.full(n, Action.REST, np.int8)  # standing intent
        self.stuck = np.zeros(n, np.int32)
        self.last_decision = np.zeros(n, np.int32)
        self.food_seen = np.zeros(n, np.int16)  # food count in view after the last tick
        self.neighbours = np.zeros(n, np.int16)  # other fish in view after the last tick
        self.failed = np.zeros(n, bool)  # last attempted action failed
        self.refused_at = np.full((n, 4), NEVER, np.int32)  # last tick a move north/south/west/east failed
        self.food_rose = np.zeros(n, bool)  # more food in view than a tick before
        self.neighbours_changed = np.zeros(n, bool)
        self.traits = np.zeros((n, 5), np.int16)
        self.persona: list[str] = []
        self.memory = ShortMemory(n, cfg_memory.short_size)
        self.long_memory = LongMemory(n, cfg_memory.summaries_kept, cfg_memory.summary_anchors)
        # Counters for reports and summaries.
        self.action_counts = np.zeros((n, N_ACTIONS), np.int32)
        self.eats = np.zeros(n, np.int32)
        self.refusals = np.zeros(n, np.int32)
        self.moves = np.zeros(n, np.int32)
        self.company_ticks = np.zeros(n, np.int32)
        self.max_stuck = np.zeros(n, np.int32)
        self.decisions = np.zeros(n, np.int32)
        # Values at the last summary: tick, eats, refusals, moves, company, energy.
        self.at_summary = np.zeros((n, 6), np.int64)

    HASHED = ("cell", "heading", "energy", "age", "intent", "stuck", "last_decision", "food_seen",
              "neighbours", "failed", "refused_at", "food_rose", "neighbours_changed", "traits", "eats", "refusals",
              "moves", "company_ticks")
    # Everything a keyframe must hold: the hashed state plus report counters.
    STATE = HASHED + ("max_stuck", "action_counts", "decisions", "at_summary")


class World:
    """One aquarium. ``World(cfg)`` is fully determined by ``cfg`` (including ``cfg.seed``)."""

    def __init__(self, cfg: Config, summarizer: Summarizer | None = None):
        self.cfg = cfg
        self.seed = cfg.seed
        self.rng = make_generator(cfg.seed)
        self.tick = 0
        self.summarizer: Summarizer = summarizer or TemplateSummarizer()
        self.water = w = Water(cfg, self.rng)
        f = cfg.fish
        self.max_energy = hundredths(f.max_energy)
        self.decay, self.move_cost = hundredths(f.decay_per_tick), hundredths(f.move_cost)
        self.eat_cost, self.rest_gain = hundredths(f.eat_cost), hundredths(f.rest_gain)
        self.rest_ceiling = hundredths(f.rest_ceiling)
        self.food_energy = hundredths(cfg.food.energy)
        self.low_line = int(self.max_energy * cfg.triggers.low_energy_fraction)
        self.delta = np.array([-w.pw, w.pw, -1, 1], np.int64)
        self.eat_offsets = np.array([0, -w.pw, w.pw, -1, 1], np.int64)
        self.window = w.view_offsets().astype(np.int64)
        self.occupant = np.full(w.terrain.size, -1, np.int64)

        n = f.count
        if n > w.open_cells.size:
            raise ValueError(f"{n} fish do not fit in {w.open_cells.size} open cells")
        self.school = s = School(n, cfg.memory)
        s.cell[:] = self.rng.choice(w.open_cells, size=n, replace=False)
        s.heading[:] = self.rng.integers(0, 4, n)
        lo, hi = hundredths(f.start_energy_min), hundredths(f.start_energy_max)
        s.energy[:] = self.rng.integers(lo, hi + 1, n)
        s.age[:] = self.rng.integers(0, f.start_age_max + 1, n)
        s.traits[:] = sample_traits(self.rng, n)
        s.persona = [persona_text(t) for t in s.traits]
        s.last_decision[:] = -cfg.triggers.hard_timeout  # everyone decides at tick 0
        s.at_summary[:, 5] = s.energy
        self.occupant[s.cell] = s.ids
        self._id_keys = mix64(cfg.seed, s.ids)
        self._zeros = np.zeros(n, np.int16)
        s.food_seen, s.neighbours = self._sense()

    # ------------------------------------------------------------ perception

    def _sense(self) -> tuple[np.ndarray, np.ndarray]:
        """Food and other fish in each fish's view window (one gather over a packed grid)."""
        packed = (self.water.food_born != NO_FOOD).astype(np.int16)
        packed[self.school.cell] += 64  # fish, in the bits above any food count (≤ 49)
        total = packed[self.school.cell[:, None] + self.window[None, :]].sum(axis=1, dtype=np.int16)
        return (total & 63), (total >> 6) - 1

    def view_codes(self, fish: np.ndarray) -> np.ndarray:
        """``(k, side²)`` view codes for the given fish (see :mod:`mirofish.fish.perception`)."""
        win = self.school.cell[fish, None] + self.window[None, :]
        return view_codes(self.water.blocked, self.water.food_born != NO_FOOD, self.occupant >= 0, win)

    def perceive(self, i: int, codes: np.ndarray | None = None) -> Perception:
        """Fish ``i``'s complete perception (the only input any brain gets)."""
        s = self.school
        if codes is None:
            codes = self.view_codes(np.array([i]))[0]
        return Perception(
            tick=self.tick, view=render_view(codes), food_here=bool(self.water.food_born[s.cell[i]] != NO_FOOD),
            energy=int(s.energy[i]), max_energy=self.max_energy, age=int(s.age[i]),
            memories=tuple(s.memory.lines(i)), summaries=tuple(self.summaries(i)),
        )

    # ------------------------------------------------------------ decisions

    def triggers(self) -> np.ndarray:
        """Per fish: the trigger code asking for a decision this tick, or -1 (keep the standing intent)."""
        s, t = self.school, self.cfg.triggers
        out = np.full(s.n, -1, np.int8)
        if t.poll_every:  # the polling baseline: no events, a fixed rhythm
            out[self.tick - s.last_decision >= t.poll_every] = T_TIMEOUT
            return out
        out[self.tick - s.last_decision >= t.hard_timeout] = T_TIMEOUT
        if t.neighbours_changed:
            out[s.neighbours_changed] = T_NEIGHBOURS
        if t.food_rose:
            out[s.food_rose] = T_FOOD_ROSE
        if t.action_failed:
            out[s.failed] = T_ACTION_FAILED
        out[s.energy < self.low_line] = T_LOW_ENERGY
        return out

    def recently_refused(self, fish: np.ndarray, within: int) -> np.ndarray:
        """``(k, 4)`` bool: directions in which each fish's move failed during the last ``within`` ticks."""
        return self.school.refused_at[fish] >= self.tick - within

    def apply_decisions(self, fish: np.ndarray, actions: np.ndarray) -> None:
        """Make decided actions the fish's standing intents, from this tick on."""
        s = self.school
        s.intent[fish] = actions
        s.last_decision[fish] = self.tick
        s.decisions[fish] += 1

    # ------------------------------------------------------------ the tick

    def step(self) -> StepOutcome:
        """Advance one tick using every fish's standing intent."""
        s, w, t = self.school, self.water, self.tick
        n = s.n
        executed = s.intent.copy()
        executed[s.energy <= 0] = Action.REST

        cfg_a = self.cfg.arbiter
        score = arbiter.priority(s.age, s.energy, self.max_energy, age_weight=cfg_a.age_weight,
                                 energy_weight=cfg_a.energy_weight, age_cap=cfg_a.age_cap)
        tie = arbiter.tie_break(t, self._id_keys)

        moving = executed < 4
        targets = s.cell + self.delta[np.minimum(executed, 3)]
        outcome = arbiter.resolve_moves(s.cell, targets, moving, w.blocked, self.occupant, score, tie)
        has_food = w.food_born != NO_FOOD
        eaters, eat_result, eaten = arbiter.resolve_eats(s.cell, executed == Action.EAT, has_food,
                                                         self.eat_offsets, score, tie)

        moved = np.flatnonzero(outcome == arbiter.MOVED)
        if moved.size:
            self.occupant[s.cell[moved]] = -1
            s.cell[moved] = targets[moved]
            self.occupant[s.cell[moved]] = moved
            s.heading[moved] = executed[moved]
        w.food_born[eaten] = NO_FOOD

        spawned = w.spawn_food(self.rng, t)
        rotted = w.rot_food(t)

        ate_mask = np.zeros(n, bool)
        ate_mask[eaters[eat_result == arbiter.ATE]] = True
        e = s.energy - self.decay
        e[moved] -= self.move_cost
        e[ate_mask] += self.food_energy - self.eat_cost
        e[(executed == Action.REST) & (s.energy < self.rest_ceiling)] += self.rest_gain
        before = s.energy
        s.energy = np.minimum(np.maximum(e, 0), self.max_energy).astype(np.int32)
        s.age += 1

        # Bookkeeping.
        refused = (outcome == arbiter.CROWDED) | (outcome == arbiter.OCCUPIED)
        bumped = outcome == arbiter.BLOCKED
        stuck = refused | bumped
        s.stuck[stuck] += 1
        stuck_idx = np.flatnonzero(stuck)
        s.refused_at[stuck_idx, executed[stuck_idx]] = t
        s.stuck[moved] = 0
        np.maximum(s.max_stuck, s.stuck, out=s.max_stuck)
        s.action_counts[s.ids, executed] += 1
        s.moves[moved] += 1
        s.refusals[stuck] += 1
        s.eats[ate_mask] += 1
        taken = np.zeros(n, bool)
        taken[eaters[eat_result == arbiter.TAKEN]] = True
        nothing = np.zeros(n, bool)
        nothing[eaters[eat_result == arbiter.NO_FOOD]] = True
        s.failed = stuck | taken | nothing

        food_seen, neighbours = self._sense()
        s.food_rose = food_seen > s.food_seen
        s.neighbours_changed = neighbours != s.neighbours
        s.food_seen, s.neighbours = food_seen, neighbours
        s.company_ticks[neighbours > 0] += 1

        # Memories, in this order within a tick (columns of EVENT_ORDER).
        level = s.energy // 100
        flags = np.stack([(before > 0) & (s.energy == 0), refused, bumped, ate_mask, taken, nothing,
                          (before >= self.low_line) & (s.energy < self.low_line), s.food_rose,
                          s.neighbours_changed], axis=1)
        args = np.stack([self._zeros, executed, executed, level, self._zeros, self._zeros, level, food_seen,
                         neighbours], axis=1)
        s.memory.record_many(t, flags, EVENT_ORDER, args)

        self.tick = t + 1
        self._summarize()
        return StepOutcome(t, executed, outcome, ate_mask, spawned, rotted)

    def _summarize(self) -> None:
        """Every ``summary_every`` ticks, write a long-term summary for each fish with news.

        Each record is built from the counters since the last summary plus the newest
        ``summary_anchors`` raw events, quoted as they are; the persona is not an input.
        """
        s, c, m = self.school, self.cfg.memory, self.school.memory
        if self.tick % c.summary_every:
            return
        due = np.flatnonzero((np.minimum(m.count, m.size) >= c.summary_anchors)
                             & (m.count > s.at_summary[:, 0]))
        if due.size == 0:
            return
        prev = s.at_summary[due]
        slots = (m.count[due, None] - np.arange(c.summary_anchors, 0, -1)[None, :]) % m.size
        rows_idx = due[:, None]
        anchors = np.stack([m.tick[rows_idx, slots], m.code[rows_idx, slots], m.arg[rows_idx, slots]], axis=2)
        head = np.stack([
            np.full(due.size, self.tick), np.full(due.size, max(0, self.tick - c.summary_every)),
            s.eats[due] - prev[:, 1], s.refusals[due] - prev[:, 2], s.moves[due] - prev[:, 3],
            s.company_ticks[due] - prev[:, 4], prev[:, 5] // 100, s.energy[due] // 100,
        ], axis=1)
        s.long_memory.add(due, np.concatenate([head, anchors.reshape(due.size, -1)], axis=1))
        s.at_summary[due] = np.stack([m.count[due], s.eats[due], s.refusals[due], s.moves[due],
                                      s.company_ticks[due], s.energy[due]], axis=1)

    def summary_due(self, i: int) -> tuple[int, str] | None:
        """(serial, facts) of fish ``i``'s newest summary if no model has written it yet."""
        lm = self.school.long_memory
        serial = int(lm.count[i]) - 1
        if serial < 0 or (i, serial) in lm.texts:
            return None
        item = lm.items(i)[-1]
        return serial, self.summarizer.summarize(item)

    def write_summary(self, i: int, serial: int, text: str) -> None:
        """Store a model-written long-term summary (it replaces the template text; the persona is untouched)."""
        lm = self.school.long_memory
        oldest = int(lm.count[i]) - lm.kept
        if oldest <= serial < int(lm.count[i]):
            lm.texts[(int(i), int(serial))] = text
            for key in [k for k in lm.texts if k[0] == i and k[1] < oldest]:
                del lm.texts[key]

    def summaries(self, i: int) -> list[str]:
        """Fish ``i``'s long-term summaries (at most ``summaries_kept``), oldest first."""
        return self.school.long_memory.summaries(i, self.summarizer)

    # ------------------------------------------------------------ hashing

    def state_arrays(self) -> dict[str, np.ndarray]:
        """Copies of every array that decides the future (and the report counters).

        :meth:`load_state_arrays` on a world built from the same config continues exactly
        like this one; recordings store these as keyframes.
        """
        s, w = self.school, self.water
        out = {"tick": np.array([self.tick], np.int64)}
        for name in School.STATE:
            out[f"fish.{name}"] = getattr(s, name).copy()
        for name in ("tick", "code", "arg", "count"):
            out[f"memory.{name}"] = getattr(s.memory, name).copy()
        out["long.records"] = s.long_memory.records.copy()
        out["long.count"] = s.long_memory.count.copy()
        cells = w.food_cells()
        out["food.cell"], out["food.born"] = cells, w.food_born[cells]
        st = self.rng.bit_generator.state
        rng = {"bit_generator": st["bit_generator"], "state": {k: str(v) for k, v in st["state"].items()},
               "has_uint32": st["has_uint32"], "uinteger": str(st["uinteger"])}
        out["rng"] = np.frombuffer(json.dumps(rng).encode(), np.uint8).copy()
        texts = [[f, k, t] for (f, k), t in s.long_memory.texts.items()]
        out["long.texts"] = np.frombuffer(json.dumps(texts).encode(), np.uint8).copy()
        return out

    def load_state_arrays(self, d: dict[str, np.ndarray]) -> None:
        """Put this world (built from the same config) into the state :meth:`state_arrays` returned."""
        s, w = self.school, self.water
        self.tick = int(d["tick"][0])
        for name in School.STATE:
            setattr(s, name, np.array(d[f"fish.{name}"], dtype=getattr(s, name).dtype))
        for name in ("tick", "code", "arg", "count"):
            setattr(s.memory, name, np.array(d[f"memory.{name}"], dtype=getattr(s.memory, name).dtype))
        s.long_memory.records = np.array(d["long.records"], np.int32)
        s.long_memory.count = np.array(d["long.count"], np.int32)
        s.long_memory.texts = {(int(f), int(k)): t for f, k, t in json.loads(bytes(d["long.texts"]).decode())}
        s.persona = [persona_text(t) for t in s.traits]
        w.food_born[:] = NO_FOOD
        w.food_born[d["food.cell"]] = d["food.born"]
        self.occupant[:] = -1
        self.occupant[s.cell] = s.ids
        rng = json.loads(bytes(d["rng"]).decode())
        self.rng.bit_generator.state = {
            "bit_generator": rng["bit_generator"], "state": {k: int(v) for k, v in rng["state"].items()},
            "has_uint32": rng["has_uint32"], "uinteger": int(rng["uinteger"]),
        }

    def state_hash(self) -> str:
        """A digest of everything that decides the future: fish, food, memories, tick, RNG state."""
        h = hashlib.blake2b(digest_size=16)
        s = self.school
        h.update(np.int64(self.tick).tobytes())
        for name in School.HASHED:
            h.update(np.ascontiguousarray(getattr(s, name)).tobytes())
        h.update(s.memory.tick.tobytes())
        h.update(s.memory.code.tobytes())
        h.update(s.memory.arg.tobytes())
        h.update(s.memory.count.tobytes())
        h.update(s.long_memory.records.tobytes())
        h.update(s.long_memory.count.tobytes())
        h.update(self.water.food_born.tobytes())
        st = self.rng.bit_generator.state["state"]
        h.update(f"{st['state']}:{st['inc']}".encode())
        return h.hexdigest()

    def low_energy_count(self) -> int:
        return int(np.count_nonzero(self.school.energy < hundredths(self.cfg.fish.low_energy)))
