"""Plans: what a decision is (docs/design.md §2 "plans").

A brain answers with a standing **plan** — a goal from a small enum, its parameter, a
horizon and a short thought — and the fish keeps it until it ends, fails or something
salient happens (:meth:`mirofish.world.World.triggers`). The steering layer
(:mod:`mirofish.fish.steering`) turns plan + current view into one action per tick.

The goals, their parameters and how each ends or fails: :data:`mirofish.fish.plantypes.PLAN_TYPES`.

``return`` exists when fish remember places (``fish.places`` > 0, :mod:`mirofish.fish.places`):
the fish swims back to a place where it ate (steering: the forage weights plus a pull toward
the place, set every tick), and the plan ends when it is there.

Every plan also ends at its horizon and fails when the fish is stuck for
``triggers.stuck_ticks`` ticks. ``hold`` with the source design's triggers (``brain.decides =
"action"``) is exactly the one-action-per-decision mode, so both modes run on the same
engine and can be compared on the same seeds.

The goals, their parameters, horizons, events, steering, words and deeds are declared once, in
that table; :class:`Goal` and every goal list here derive from it.

Everything here is integers and pure functions; no brain, no pygame, no openai.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import Any, TypeVar, cast

import numpy as np

from ..actions import DIRECTION_NAMES
from ..grid import SQUARE, Grid
from . import plantypes
from .plantypes import AWAY_NAMES as AWAY_NAMES  # re-exported: the words of the away parameter
from .plantypes import PlanType

plantypes.check(plantypes.PLAN_TYPES)  # again: a table extended before this module loaded is checked whole
SHIPPED: tuple[PlanType, ...] = plantypes.PLAN_TYPES  # the rows before the installed plug-ins' (registry.built_in)
# the installed packages' plan types join the default table here, once, before anything derives from it
plantypes.PLAN_TYPES = plantypes.with_plugins(plantypes.PLAN_TYPES)
TYPES: tuple[PlanType, ...] = plantypes.PLAN_TYPES


class GoalBase(IntEnum):
    """A goal code (its members come from :data:`TYPES`, in table order)."""

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def type(self) -> PlanType:
        return TYPES[int(self)]


# the functional enum API (members from the table); mypy reads the call as a member lookup
Goal = cast("type[GoalBase]", GoalBase("Goal", [(t.name.upper(), i) for i, t in enumerate(TYPES)]))  # type: ignore[call-arg, arg-type]

NO_END = 2**31 - 1  # plan_end of a plan without a horizon
PLAN_NUMBER_MAX = 2**15 - 1  # a typed plan's horizon or parameter (int16 state arrays)
G_HOLD = 0  # the one-action mode (plantypes.check: the first row)

# each parameter kind: how describe() words the parameter after the goal's name (on a grid)
_WORDED: dict[str, Callable[[int, Grid], str]] = {
    "action": lambda p, g: f" {g.action_names[p] if 0 <= p < g.n_actions else p}",
    "direction": lambda p, g: f" {g.move_names[p % g.n_moves]}",
    "energy": lambda p, g: f" until {p} energy",
    "away": lambda p, g: f" from the {AWAY_NAMES[p % 2]}",
    "place": lambda p, g: f" to place {p}",
    "none": lambda p, g: "",
}


def _no_param(name: str, rest: list[str], nums: list[int], grid: Grid = SQUARE) -> tuple[int, int]:
    return 0, nums[-1] if nums else 0


def _direction_param(name: str, rest: list[str], nums: list[int], grid: Grid = SQUARE) -> tuple[int, int]:
    dirs = [w for w in rest if _is_direction(w, grid)]
    if not dirs:
        raise ValueError(f"{name} needs a direction: {_choices(grid)}")
    return direction_index(dirs[0], grid), nums[-1] if nums else 0


def _is_direction(word: str, grid: Grid) -> bool:
    try:
        direction_index(word, grid)
    except ValueError:
        return False
    return True


def _choices(grid: Grid) -> str:
    names = grid.move_names
    return ", ".join(names[:-1]) + f" or {names[-1]}"


def _first_then_horizon(default: int) -> Callable[..., tuple[int, int]]:
    """rest N [H], return N [H]: the first number is the parameter, the second the horizon."""
    def read(name: str, rest: list[str], nums: list[int], grid: Grid = SQUARE) -> tuple[int, int]:
        return (nums[0] if nums else default), (nums[1] if len(nums) > 1 else 0)
    return read


def _away_param(name: str, rest: list[str], nums: list[int], grid: Grid = SQUARE) -> tuple[int, int]:
    words = [w for w in rest if not w.isdigit() and w not in ("from", "the", "for", "ticks")]
    word = words[0] if words else AWAY_NAMES[0]
    if word not in AWAY_NAMES:
        raise ValueError(f"{name} from {word!r}? choose {' or '.join(AWAY_NAMES)}")
    return AWAY_NAMES.index(word), nums[-1] if nums else 0


_FILLER = frozenset(("for", "ticks", "tick", "until", "energy", "from", "the", "to", "place"))  # describe()'s words

# each parameter kind's reading of the words after the goal (and the horizon)
_PARAMS = {"none": _no_param, "direction": _direction_param, "energy": _first_then_horizon(10),
           "away": _away_param, "place": _first_then_horizon(0)}

PARAM_WORDS = {"direction": DIRECTION_NAMES, "away": AWAY_NAMES}  # the words a kind's parameter is offered as

_P = TypeVar("_P")


class PlanTable:
    """One run's plan types (a :class:`mirofish.registry.Registry`'s ``plans``): the rows in
    goal-code order and everything a goal code means — its name, the plans a brain may choose,
    how a typed plan reads and is worded, the fork picker's entries. Two runs in one process may
    hold two tables (a plug-in row added for one run only); the built-in rows come first in every
    table, so :class:`Goal` and the shipped codes mean the same in all of them.

    What other layers derive from the rows (the world's plan events, the steering rows, the
    word-and-deed table, the prompt's plan list …) is built once per table by :meth:`part`."""

    def __init__(self, types: tuple[PlanType, ...], grid: Grid = SQUARE) -> None:
        plantypes.check(types)
        self.types = tuple(types)
        # the grid its directions and actions are worded and read on (mirofish/grid.py): a
        # hexagonal tank's table is this one :meth:`on` it
        self.grid = grid
        self.names = tuple(t.name for t in self.types)
        self.n = len(self.types)
        self.code = {t.name: i for i, t in enumerate(self.types)}  # goal name -> code
        self.plan_goals = tuple(t.name for t in self.types if t.fits != "never")  # what a brain may choose
        self._parts: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"PlanTable({', '.join(self.names)})"

    def part(self, key: str, build: Callable[[PlanTable], _P]) -> _P:
        """What ``build`` derives from this table, built once per table under ``key``."""
        got = self._parts.get(key)
        if got is None:
            got = self._parts[key] = build(self)
        return cast("_P", got)

    def adding(self, rows: tuple[PlanType, ...]) -> PlanTable:
        """This table with ``rows`` after it (checked whole; ValueError naming the problem)."""
        return PlanTable((*self.types, *rows), self.grid)

    def on(self, grid: Grid) -> PlanTable:
        """This table with its directions and actions on ``grid`` (the same rows and codes; built
        once per grid: the square grid's is the table itself)."""
        if grid is self.grid:
            return self
        return self.part(f"grid:{grid.name}", lambda t: PlanTable(t.types, grid))

    def of_kind(self, kind: str) -> tuple[int, ...]:
        """The goals whose parameter is of ``kind`` (plantypes.PARAM_KINDS)."""
        return tuple(i for i, t in enumerate(self.types) if t.param == kind)

    def parse_goal(self, text: str) -> int:
        try:
            return self.code[text.strip().lower().replace(" ", "_").replace("-", "_")]
        except KeyError:
            raise ValueError(f"unknown goal {text!r}; choose one of {', '.join(self.names)}") from None

    def describe(self, goal: int, param: int, horizon: int = 0) -> str:
        """``'explore east for 30 ticks'``, ``'rest until 10 energy'``, ``'hold move_n'`` …"""
        t = self.types[int(goal)]
        text = t.name + _WORDED[t.param](int(param), self.grid)
        return f"{text} for {int(horizon)} tick{'s' if int(horizon) != 1 else ''}" if horizon else text

    def standing(self, goal: int, param: int, end: int, ceiling: int, short: bool = False) -> str:
        """A fish's standing plan as its end really is (``trace``'s and the follow panel's label):
        :meth:`describe`'s words, but a resting plan (event ``rest``: it ends when energy reaches
        its parameter) whose energy lies above ``ceiling`` (``fish.rest_ceiling``, hundredths:
        resting revives only below it) never ends that way, so it reads ``'rest until t1012 (its
        horizon; 100 energy is out of reach: resting revives only below 10)'`` — ``end`` the
        plan's end tick (:data:`NO_END`: until a trigger or the next decision). ``short``: for a
        narrow panel, ``'rest until t1012 (100 energy out of reach)'``."""
        t = self.types[int(goal)]
        if t.param != "energy" or "rest" not in t.events or int(param) * 100 <= ceiling:
            return self.describe(goal, param)
        if short:
            return f"{t.name}{f' until t{int(end)}' if end != NO_END else ''} ({int(param)} energy out of reach)"
        until = f"until t{int(end)} (its horizon; " if end != NO_END else "(until a trigger or the next decision; "
        return f"{t.name} {until}{int(param)} energy is out of reach: resting revives only below {ceiling / 100:g})"

    def parse_plan(self, text: str, strict: bool = False) -> tuple[int, int, int]:
        """A plan typed by a person (fork picker, CLI): ``'school 60'``, ``'explore e 30'``,
        ``'rest 10'``, ``'keep_away glass'``, ``'move_n'`` or a bare ``'rest'`` (a single action:
        hold it one tick), ``'hold move_n 5'``. What :meth:`describe` writes reads back to the
        same plan.

        ``strict`` (a new fork's plan: mirofish.session.fork.plan_of): every word must be read —
        a whole number, a word :meth:`describe` writes (for, ticks, until, energy, from, the, to,
        place), the plan's direction, side or action — and no more numbers than the plan takes
        (``'rest -50'``, ``'school 1.5'`` and ``'explore east 30 junk'`` are refused, not read as
        ``'rest'``, ``'school'`` and ``'explore east 30'``). Not strict: the words it knows, the
        rest skipped (a plan a fork recording's header holds, read as it always was).

        Returns (goal, param, horizon); raises ValueError naming the choices.
        """
        words = text.strip().lower().split()
        if not words:
            raise ValueError("empty plan")
        head, rest = words[0], words[1:]
        nums = [int(w) for w in rest if w.isdigit() and w.isascii()]
        plan = self._read(head, rest, nums)
        if strict:  # (after the reading: its own refusals, which name the choices, come first)
            self._check_words(head, rest, len(nums))
        return plan

    def _read(self, head: str, rest: list[str], nums: list[int]) -> tuple[int, int, int]:
        """:meth:`parse_plan`'s reading of the words it knows."""
        if any(n > PLAN_NUMBER_MAX for n in nums):  # a horizon and a parameter are 16-bit in the tank's state
            raise ValueError(f"{max(nums)} is too large: a plan's numbers are at most {PLAN_NUMBER_MAX:,}")
        actions = self.grid.action_names
        if head in actions and (head != "rest" or not rest):  # a bare action; "rest 10" is the rest plan
            return G_HOLD, actions.index(head), 1
        if head == self.names[G_HOLD] and rest and rest[0] in actions:
            return G_HOLD, actions.index(rest[0]), nums[-1] if nums else 0
        if head.startswith("move_"):  # another grid's move
            raise ValueError(f"{head} is no move on a {self.grid.name} tank; its actions are {', '.join(actions)}")
        goal = self.parse_goal(head)
        t = self.types[goal]
        if self.grid.hex and t.seek:  # (its target is found on a square view: docs/hex.md)
            raise ValueError(f"{t.name} swims to a target, which a hexagonal tank does not find yet")
        if t.param == "action":
            raise ValueError(f"type the action itself ({actions[0]} … rest) to hold one action")
        param, horizon = _PARAMS[t.param](t.name, rest, nums, self.grid)
        return int(goal), int(param), int(horizon)

    def _check_words(self, head: str, rest: list[str], numbers: int) -> None:
        """:meth:`parse_plan`'s strict reading: a ValueError naming the first word it would skip."""
        actions = self.grid.action_names
        bare = head in actions and (head != "rest" or not rest)  # (as parse_plan reads them)
        held = bare or (head == self.names[G_HOLD] and bool(rest) and rest[0] in actions)
        if not held:
            try:
                kind = self.types[self.parse_goal(head)].param
            except ValueError:
                return  # (parse_plan names the unknown goal)
        elif bare and rest:
            raise ValueError(f"{head} alone is held one tick; 'hold {head} {rest[0]}' holds it longer")
        else:
            kind = "action"
        known = _FILLER | ({rest[0]} if held and not bare else set())
        for w in rest:
            if (w.isdigit() and w.isascii()) or w in known:
                continue
            if (kind == "direction" and _is_direction(w, self.grid)) or (kind == "away" and w in AWAY_NAMES):
                continue
            if w.lstrip("+-").replace(".", "", 1).replace(",", "").isdigit():
                raise ValueError(f"{w!r}: a plan's numbers are whole numbers of 0 or more")
            raise ValueError(f"{w!r} is not a word of the plan {head!r} (its numbers, for, ticks, until, energy, "
                             f"from, the, to, place{', a direction' if kind == 'direction' else ''}"
                             f"{', ' + ' or '.join(AWAY_NAMES) if kind == 'away' else ''})")
        most = 2 if kind in ("energy", "place") else 1
        if numbers > most:
            takes = "a number and a horizon" if most == 2 else "one number (its horizon)"
            raise ValueError(f"plan {head!r} takes {takes}, not {numbers} numbers")

    def fork_plans(self) -> tuple[str, ...]:
        """The fork picker's plans, in table order: each plan type's ``fork`` entries, ``{param}``
        spelled out over its parameter's words and ``{ticks}`` its default horizon."""
        out: list[str] = []
        for t in self.types:
            for entry in t.fork:
                words = ({**PARAM_WORDS, "direction": self.grid.move_names}.get(t.param, ("",))
                         if "{param}" in entry else ("",))
                out += [entry.format(param=w, ticks=t.ticks) for w in words]
        return tuple(out)


# The process's default table: the built-in rows and the installed packages' (a run given no
# registry of its own uses it; mirofish.registry.default()).
DEFAULT = PlanTable(TYPES)
GOAL_NAMES = DEFAULT.names
N_GOALS = DEFAULT.n
CODE = DEFAULT.code
PLAN_GOALS = DEFAULT.plan_goals
# Until its first plan arrives (late, from a slow model), a fish swims on the way it faces: this
# goal (a direction), with its heading as the parameter.
FIRST_PLAN = CODE["explore"]


def code(name: str) -> int:
    """The goal code of plan type ``name`` in the default table (KeyError for an unknown one)."""
    return CODE[name]


of_kind = DEFAULT.of_kind
parse_goal = DEFAULT.parse_goal
describe = DEFAULT.describe
parse_plan = DEFAULT.parse_plan
fork_plans = DEFAULT.fork_plans


def direction_index(word: str, grid: Grid = SQUARE) -> int:
    """A direction's word (or its initials: ``e``, ``ne``) → its move on ``grid``."""
    w = word.strip().lower().replace("_", "-")
    for i, name in enumerate(grid.move_names):
        if w in (name, "".join(part[0] for part in name.split("-"))):
            return i
    raise ValueError(f"unknown direction {word!r}; choose {_choices(grid)}")


def hold(actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Single actions as plans: (goals, params, horizons) holding each action until the next decision."""
    a = np.asarray(actions, np.int16)
    return np.full(a.size, G_HOLD, np.int8), a, np.zeros(a.size, np.int16)


def changed_plans(school: Any, actions: np.ndarray) -> np.ndarray:
    """Per fish: is ``actions`` other than the action it holds (a fish given the action it holds
    keeps its standing plan: no new decision)?"""
    change: np.ndarray = (school.plan_goal != G_HOLD) | (school.plan_param != actions)
    return change
