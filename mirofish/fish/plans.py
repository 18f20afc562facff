"""Plans: what a decision is (docs/design.md §2 "plans").

A brain answers with a standing **plan** — a goal from a small enum, its parameter, a
horizon and a short thought — and the fish keeps it until it ends, fails or something
salient happens (:meth:`mirofish.world.World.triggers`). The steering layer
(:mod:`mirofish.fish.steering`) turns plan + current view into one action per tick.

Goals and their parameter:

=========== ======================================== ==========================================
goal        parameter                                ends / fails
=========== ======================================== ==========================================
hold        the action to repeat (the source design's mode)   horizon (0 = until the next decision)
forage      —                                        done: a meal made it sated · failed: no food for a while
school      —                                        failed: alone for a while
explore     direction (0 n, 1 s, 2 w, 3 e)           horizon; found company
rest        energy (whole units) to rest up to       done: energy reached · failed: hungry with food in view
keep_away   0 = from a crowd, 1 = from the glass     horizon
return      a remembered place (0 … fish.places-1)   arrived there · horizon
=========== ======================================== ==========================================

``return`` exists when fish remember places (``fish.places`` > 0, :mod:`mirofish.fish.places`):
the fish swims back to a place where it ate (steering: the forage weights plus a pull toward
the place, set every tick), and the plan ends when it is there.

Every plan also ends at its horizon and fails when the fish is stuck for
``triggers.stuck_ticks`` ticks. ``hold`` with the source design's triggers (``brain.decides =
"action"``) is exactly the one-action-per-decision mode, so both modes run on the same
engine and can be compared on the same seeds.

Everything here is integers and pure functions; no brain, no pygame, no openai.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from ..actions import ACTION_NAMES, DIRECTION_NAMES, Action


class Goal(IntEnum):
    HOLD = 0
    FORAGE = 1
    SCHOOL = 2
    EXPLORE = 3
    REST = 4
    KEEP_AWAY = 5
    RETURN = 6

    @property
    def label(self) -> str:
        return self.name.lower()


GOAL_NAMES = tuple(g.label for g in Goal)
# Plain ints for vectorised code (an IntEnum member lookup costs a Python call each time).
G_HOLD, G_FORAGE, G_SCHOOL, G_EXPLORE, G_REST, G_KEEP_AWAY, G_RETURN = (int(g) for g in Goal)
PLAN_GOALS = GOAL_NAMES[1:]  # what a planning brain may choose (hold is the action mode; return needs places)
AWAY_NAMES = ("crowd", "glass")
NO_END = 2**31 - 1  # plan_end of a plan without a horizon


def parse_goal(text: str) -> Goal:
    try:
        return Goal[text.strip().upper().replace(" ", "_").replace("-", "_")]
    except KeyError:
        raise ValueError(f"unknown goal {text!r}; choose one of {', '.join(GOAL_NAMES)}") from None


def describe(goal: int, param: int, horizon: int = 0) -> str:
    """``'explore east for 30 ticks'``, ``'rest until 10 energy'``, ``'hold move_n'`` …"""
    g = Goal(int(goal))
    if g == Goal.HOLD:
        text = f"hold {ACTION_NAMES[int(param)]}"
    elif g == Goal.EXPLORE:
        text = f"explore {DIRECTION_NAMES[int(param) % 4]}"
    elif g == Goal.REST:
        text = f"rest until {int(param)} energy"
    elif g == Goal.KEEP_AWAY:
        text = f"keep_away from the {AWAY_NAMES[int(param) % 2]}"
    elif g == Goal.RETURN:
        text = f"return to place {int(param)}"
    else:
        text = g.label
    return f"{text} for {int(horizon)} tick{'s' if int(horizon) != 1 else ''}" if horizon else text


def parse_plan(text: str) -> tuple[int, int, int]:
    """A plan typed by a person (fork picker, CLI): ``'school 60'``, ``'explore e 30'``,
    ``'rest 10'``, ``'keep_away glass'``, ``'move_n'`` or a bare ``'rest'`` (a single action:
    hold it one tick),
    ``'hold move_n 5'``. What :func:`describe` writes reads back to the same plan.

    Returns (goal, param, horizon); raises ValueError naming the choices.
    """
    words = text.strip().lower().split()
    if not words:
        raise ValueError("empty plan")
    head, rest = words[0], words[1:]
    nums = [int(w) for w in rest if w.isdigit()]
    if head in ACTION_NAMES and (head != "rest" or not rest):  # a bare action; "rest 10" is the rest plan
        return int(Goal.HOLD), int(Action.parse(head)), 1
    if head == "hold" and rest and rest[0] in ACTION_NAMES:
        return int(Goal.HOLD), int(Action.parse(rest[0])), nums[-1] if nums else 0
    goal = parse_goal(head)
    if goal == Goal.HOLD:
        raise ValueError("type the action itself (move_n … rest) to hold one action")
    param, horizon = _PARAMS.get(goal, _no_param)(rest, nums)
    return int(goal), int(param), int(horizon)


def _no_param(rest: list[str], nums: list[int]) -> tuple[int, int]:
    return 0, nums[-1] if nums else 0


def _explore_param(rest: list[str], nums: list[int]) -> tuple[int, int]:
    dirs = [w for w in rest if w in DIRECTION_NAMES or w in ("n", "s", "w", "e")]
    if not dirs:
        raise ValueError("explore needs a direction: north, south, west or east")
    return direction_index(dirs[0]), nums[-1] if nums else 0


def _first_then_horizon(default: int):
    """rest N [H], return N [H]: the first number is the parameter, the second the horizon."""
    def read(rest: list[str], nums: list[int]) -> tuple[int, int]:
        return (nums[0] if nums else default), (nums[1] if len(nums) > 1 else 0)
    return read


def _away_param(rest: list[str], nums: list[int]) -> tuple[int, int]:
    words = [w for w in rest if not w.isdigit() and w not in ("from", "the", "for", "ticks")]
    word = words[0] if words else "crowd"
    if word not in AWAY_NAMES:
        raise ValueError(f"keep_away from {word!r}? choose crowd or glass")
    return AWAY_NAMES.index(word), nums[-1] if nums else 0


# each goal's parameter (and horizon) from the words after it
_PARAMS = {Goal.EXPLORE: _explore_param, Goal.REST: _first_then_horizon(10), Goal.KEEP_AWAY: _away_param,
           Goal.RETURN: _first_then_horizon(0)}


def direction_index(word: str) -> int:
    w = word.strip().lower()
    for i, name in enumerate(DIRECTION_NAMES):
        if w in (name, name[0]):
            return i
    raise ValueError(f"unknown direction {word!r}; choose north, south, west or east")


def hold(actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Single actions as plans: (goals, params, horizons) holding each action until the next decision."""
    a = np.asarray(actions, np.int16)
    return np.zeros(a.size, np.int8), a, np.zeros(a.size, np.int16)
