"""The plan types: one row per goal, everything else derives from this table.

A plan type says, once, what the rest of the package needs to know about a goal:

* its **name** (the word a prompt, a fork picker, a recording's tables and the CLI use) and the
  **kind of its parameter** (:data:`PARAM_KINDS`: the action it holds, a direction, an energy to
  rest up to, what it keeps away from, a remembered place, or none);
* its **default horizon** in ticks (a model's plan without ``ticks``, the fork picker's plans);
* the **plan events** that concern it (:data:`EVENTS`, the columns of ``world.GoalParts.flags``:
  which ends and failures the after-tick raises for it — the compiled tick reads the same rows);
* its **steering**: which weighted terms of a move's utility it changes from the base row
  (open water, the glass, crowding count for every goal), per parameter value where the
  parameter picks a variant (keep away from a crowd / from the glass), whether it eats what it
  reaches, only when hungry or never, and whether it rests;
* the instinct **planner's utility** it answers to: a **formula over named features**
  (``utility``, :mod:`mirofish.fish.formula`: ``"(0.3 + caution) * min(plants_seen, 1) * crowd -
  0.2"``; ``weight`` is its ``planner_weight`` from the config), which the compiled planner runs
  as a program and numpy as arrays, the same doubles; ``planner`` names the built-in choice of
  its parameter and horizon (the way to explore, the energy to rest to; return's utility is
  computed from the fish's places); without a utility the planner never chooses it (a model or
  a person still can);
* **plan events as predicates** over the same features, beside the built-in ones: ``ends``
  (the plan is done: trigger ``plan_done``) and ``fails`` (trigger ``plan_failed``), checked
  after every tick for the fish holding it;
* the line that offers it in the model's prompt, when it **fits**
  a fish's view, the words of a **fork picker**;
* the **word-and-deed** phrases that name it in a thought and the check of its **deed**;
* the personality **trait** it answers to (the behaviour score: how in character a fish's plans are).

From it: ``plans.Goal`` and every goal list (prompt enum and option lines, ``DEFAULT_TICKS``,
the fork picker's plans, the planner's goals, the goal flags, steering's table, word and deed's
words and checks), and the numbers the compiled tick receives by name. A new plan type is one
row here (plus a steering term only when none of :data:`STEER_TERMS` fits, and a parameter kind
only when none of :data:`PARAM_KINDS` does); ``tests/test_plan_types.py`` adds one and runs it.

This module imports nothing of the package, so a table can be extended before the rest loads.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any

from ..actions import ACTION_NAMES
from . import formula

# What a goal's parameter is. ``action``: the action a hold plan repeats; ``direction``: 0 n, 1 s,
# 2 w, 3 e (steering biases that way); ``energy``: whole units of energy to reach; ``away``: the
# index in AWAY_NAMES; ``place``: a remembered place (steering pulls toward it; fish.places).
PARAM_KINDS = ("none", "action", "direction", "energy", "away", "place")
AWAY_NAMES = ("crowd", "glass")
# The plan events a goal may care about (world.GOAL_FLAG_COLUMNS; _tick.c reads them as rows).
EVENTS = ("planned", "forage", "school", "rest", "roaming", "crowd", "hungry")
# The weighted terms of a move's utility (fish.steering.TERMS); a goal row sets some of them from
# a SteeringConfig weight times a factor; open, glass and crowd have a base value for every row.
STEER_TERMS = ("open", "glass", "crowd", "align", "cohesion", "food")
BASE_ROW: dict[str, tuple[str, float]] = {"open": ("open_water", 1.0), "glass": ("wall", -1.0),
                                          "crowd": ("separation", -1.0)}
# When a plan fits a fish's view (what a model is offered, what a random chooser picks among).
FITS = ("always", "fish_in_view", "open_way", "places", "plants_in_view", "prey_in_view", "hunter_in_view", "never")
# What a plan may swim to (fish.targets.TARGETS: where it is, when the fish is there, and what then).
SEEKS = (None, "place", "plant", "prey", "away", "bite")
# The perception switches (config ``perception.*``) a plan type may need: without it, the tank's
# prompts neither list nor offer the plan (a person and a fork still can give it).
NEEDS = (None, "plants_seen", "hunting", "fleeing", "grazing")
# What makes a tank offer a plan type that needs a switch: the settings (dotted keys) the check
# kit runs it with (mirofish.testing.check_plan_type). "hunting" is on where a group hunts,
# "fleeing" where a group hunts and a group flees.


def switches_on(cfg: Any) -> tuple[str, ...]:
    """The :data:`NEEDS` switches a tank (a Config) has on: a perception switch by its name,
    ``hunting`` where some group hunts, ``fleeing`` where one hunts and one flees, ``grazing`` where
    one eats plants (docs/species.md)."""
    hunts = any(g.hunts for g in cfg.fish.groups)
    on = {"hunting": hunts, "fleeing": hunts and any(g.flees for g in cfg.fish.groups),
          "grazing": any(g.eats_plants for g in cfg.fish.groups)}
    return tuple(name for name in NEEDS if name and (on[name] if name in on else getattr(cfg.perception, name)))


NEED_SETTINGS: dict[str, dict[str, Any]] = {
    "plants_seen": {"perception.plants_seen": True},
    "hunting": {"fish.groups": [{"name": "hunters", "share": 0.25, "hunts": ["prey"]},
                                {"name": "prey", "share": 0.75}]},
    "fleeing": {"fish.groups": [{"name": "hunters", "share": 0.25, "hunts": ["prey"]},
                                {"name": "prey", "share": 0.75, "flees": True}]},
    "grazing": {"perception.plants_seen": True, "world.plant_patches": 24, "food.spawn_rate": 0.0001,
                "fish.groups": [{"name": "grazers", "share": 0.5, "eats_plants": True},
                                {"name": "others", "share": 0.5}]},
}
# The most plan types with a ``utility`` formula (the compiled planner's softmax: 64 choices, 6 built in).
MAX_FORMULA_UTILITIES = 58
# How a plan's deed is judged when it ends (observe.worddeed).
DEEDS = ("ate", "company", "along", "still", "away", "worked")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")  # a plan type's name: one word a person types
# the personality traits (fish/personality.py's, in the state's column order): a row's ``trait``
TRAITS = ("sociability", "curiosity", "caution", "appetite", "calm")


@dataclass(frozen=True)
class PlanType:
    """One goal (see the module doc)."""

    name: str
    param: str = "none"  # PARAM_KINDS
    ticks: int = 0  # default horizon (0: until the next decision)
    events: frozenset[str] = frozenset({"planned"})
    steer: tuple[dict[str, tuple[str, float]], ...] = ({},)  # one row per parameter variant (the first: default)
    eats: str = "hungry"  # "reach": eats whatever food it reaches; "hungry": when hungry; "no": never
    rests: bool = False
    planner: str | None = None  # the planner's built-in choice of parameter and horizon (_tick.c PLANNER_UTILITIES)
    planner_weight: str = ""  # PlannerConfig: the utility's weight ...
    planner_ticks: str = ""  # ... and its base horizon
    prompt: str | None = None  # its line in the plan prompt's list ("forage - go to food and eat it")
    fits: str = "always"  # FITS
    fork: tuple[str, ...] = ()  # the fork picker's plans (a {param} word each; () none)
    words: tuple[str, ...] = ()  # what a thought says when it means this goal
    deed: str = "worked"  # DEEDS
    trait: str | None = None  # the personality trait it answers to (personality.TRAITS; the behaviour score)
    doc: str = ""  # what it means, for the docs and the help
    seek: str | None = None  # SEEKS: a target it swims to (fish.targets), pulled there every tick
    needs: str | None = None  # NEEDS: the perception switch without which prompts leave it out
    utility: str | None = None  # the instinct planner's utility as a formula over features (fish.formula)
    ends: str | None = None  # a predicate over features: the plan is done (trigger plan_done)
    fails: str | None = None  # a predicate over features: the plan failed (trigger plan_failed)

    def __post_init__(self) -> None:
        self._check_name()
        self._check_choices()
        self._check_fork()
        self._check_formulas()
        self._check_planner()

    def _check_name(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name) or (
                self.name in ACTION_NAMES and self.name != "rest"):
            raise ValueError(f"plan type {self.name!r}: a name is a lower-case word (letters, digits, _; at most "
                             f"32), not an action's (a typed plan reads its first word as the name)")

    def _check_choices(self) -> None:
        """Every field that names one of the table's choices names one."""
        for what, value, allowed in (("param", self.param, PARAM_KINDS), ("fits", self.fits, FITS),
                                     ("deed", self.deed, DEEDS), ("eats", self.eats, ("reach", "hungry", "no")),
                                     ("seek", self.seek, SEEKS), ("needs", self.needs, NEEDS),
                                     ("trait", self.trait, (None, *TRAITS))):
            if value not in allowed:
                choices = ", ".join(map(str, allowed))
                raise ValueError(f"plan type {self.name}: {what} {value!r} is not one of {choices}")
        bad_event = next((e for e in self.events if e not in EVENTS), None)
        if bad_event is not None:
            raise ValueError(f"plan type {self.name}: event {bad_event!r} is not one of {', '.join(EVENTS)}")
        bad_term = next((t for row in self.steer for t in row if t not in STEER_TERMS), None)
        if bad_term is not None:
            raise ValueError(f"plan type {self.name}: steering term {bad_term!r} is not one of "
                             f"{', '.join(STEER_TERMS)}")
        if not isinstance(self.ticks, int) or isinstance(self.ticks, bool) or not 0 <= self.ticks <= 32767:
            raise ValueError(f"plan type {self.name}: ticks {self.ticks!r} is not a whole number of ticks in "
                             f"0..32767 (0: until the next decision)")

    def _check_fork(self) -> None:
        """A fork picker's plan: words and ``{param}`` / ``{ticks}``, nothing else formatted."""
        for entry in self.fork:
            fields = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(entry) if f is not None]
            if any(f not in ("param", "ticks") or spec or conv for f, spec, conv in fields):
                raise ValueError(f"plan type {self.name}: fork entry {entry!r} may name only {{param}} and {{ticks}}")

    def _check_formulas(self) -> None:
        for context in ("utility", "ends", "fails"):
            try:
                formula.check(getattr(self, context), context)
            except formula.FormulaError as exc:
                text = repr(getattr(self, context))
                shown = text if len(text) <= 80 else text[:60] + " … " + text[-12:]
                raise ValueError(f"plan type {self.name}: {context} {shown}: {exc}") from None

    def _check_planner(self) -> None:
        if self.utility and self.param != "none" and not self.planner:
            raise ValueError(f"plan type {self.name}: the planner gives a formula's plan no {self.param} parameter; "
                             f"a utility formula is for a plan type whose param is none (or one with a planner "
                             f"choice, which picks the parameter)")
        if self.planner and self.planner != "return" and not self.utility:
            raise ValueError(f"plan type {self.name}: the planner's choice {self.planner!r} needs its utility formula")
        if self.planner and not (self.planner_weight and self.planner_ticks):
            raise ValueError(f"plan type {self.name}: a planner utility needs planner_weight and planner_ticks")


_ROAMING = frozenset({"planned", "roaming", "crowd", "hungry"})

PLAN_TYPES: tuple[PlanType, ...] = (
    PlanType("hold", param="action", events=frozenset(), fits="never",
             doc="repeat one action (the source design's one-action mode)"),
    PlanType("forage", ticks=60, events=frozenset({"planned", "forage"}), steer=({"food": ("food", 1.0)},),
             eats="reach", planner="forage", planner_weight="forage", planner_ticks="forage_ticks",
             utility="weight * (0.5 + appetite) * hunger * (1.5 + 0.5 * (food_seen > 0)) + 6 * low + 2 * hungry_food",
             prompt="go to food and eat it", fork=("forage {ticks}",),
             words=("food", "eat", "hungry", "feed", "snack", "meal", "forag"), deed="ate", trait="appetite",
             doc="swim to food in view and eat it; done when a meal made it sated, failed after no food for a while"),
    PlanType("school", ticks=120, events=frozenset({"planned", "school", "crowd", "hungry"}),
             steer=({"align": ("alignment", 1.0), "cohesion": ("cohesion", 1.0)},),
             planner="school", planner_weight="school", planner_ticks="school_ticks",
             utility="weight * (0.3 + sociability) * company * max(1 - 1.5 * hunger, 0)",
             prompt="stay with the fish you see and swim their way", fits="fish_in_view", fork=("school {ticks}",),
             words=("others", "other fish", "join", "school", "together", "company", "group", "with them",
                    "follow"),
             deed="company", trait="sociability",
             doc="swim the way the fish in view face and stay near them; failed when alone a while"),
    PlanType("explore", param="direction", ticks=30, events=_ROAMING, planner="explore", planner_weight="explore",
             planner_ticks="explore_ticks",
             utility="weight * ((0.5 + curiosity) * (1 - 0.6 * company) + sociability * (visible == 0))",
             prompt="swim north, south, west or east", fits="open_way",
             fork=("explore {param} {ticks}",),
             words=("explor", "open water", "nobody", "alone", "wander", "head ", "swim "), deed="along",
             trait="curiosity",
             doc="swim one way; ends at its horizon or when it finds company"),
    PlanType("rest", param="energy", ticks=20, events=frozenset({"planned", "rest", "crowd", "hungry"}), eats="no",
             rests=True, planner="rest", planner_weight="rest", planner_ticks="rest_ticks",
             # never hungry with food in view; an exhausted fish with no food in sight rests
             utility="-1000000000 if hungry_food else weight * (calm - 0.4 - 3 * hunger - 0.3 * company)"
                     " + 4 * (rest_low and food_seen == 0)",
             prompt='stay put until energy reaches "until" (rest only revives below 10)', fork=("rest 100 {ticks}",),
             words=("rest", "tired", "stay put", "sleep", "recover", "stay here", "still"), deed="still", trait="calm",
             doc="stay put until energy reaches the parameter; failed when hungry with food in view"),
    PlanType("keep_away", param="away", ticks=8, events=frozenset({"planned", "roaming", "hungry"}),
             steer=({"cohesion": ("cohesion", -1.0)}, {"glass": ("wall", -4.0)}),
             planner="keep_away", planner_weight="keep_away", planner_ticks="away_ticks",
             utility="weight * (0.3 + caution) * (crowd + 0.5 * (walls >= 10)) - 0.5",
             prompt='from a "crowd" or the "glass"', fork=("keep_away {param} {ticks}",),
             words=("away from", "avoid", "crowd", "too many", "glass", "wall"), deed="away", trait="caution",
             doc="move away from a crowd (the fish in view) or from the glass"),
    PlanType("return", param="place", ticks=60, events=frozenset({"planned", "hungry"}),
             steer=({"food": ("food", 1.0)},), eats="reach", planner="return", planner_weight="revisit",
             planner_ticks="revisit_ticks", fits="places", seek="place",
             words=("go back", "back to", "return", "where i ate", "my place"), deed="ate",
             doc="swim back to a remembered place where it ate (fish.places > 0); ends there"),
    PlanType("hide", ticks=40, events=frozenset({"planned", "hungry"}), eats="no", seek="plant",
             needs="plants_seen", prompt="swim beside the nearest plant (P) and stay hidden there",
             fits="plants_in_view", fork=("hide {ticks}",), words=("hide", "hiding", "plant", "cover", "shelter"),
             deed="still",
             # the instinct planner's utility and a plan event, as formulas over features (fish/formula.py)
             utility="4 * (0.3 + caution) * min(plants_seen, 1) * (1 - hunger) * (crowd + 0.5 * (1 - company)) - 0.3",
             fails="plants_seen == 0 and plan_ticks >= 10",
             doc="swim beside the nearest plant in view and rest there until its horizon; failed after 10 ticks "
                 "with no plant in view"),
    PlanType("hunt", ticks=12, events=frozenset({"planned", "hungry"}), eats="no", seek="prey",
             needs="hunting", prompt="swim at the nearest fish you hunt (only a hunter catches)",
             fits="prey_in_view", fork=("hunt {ticks}",), words=("hunt", "chase", "catch", "prey", "strike"),
             deed="worked",
             utility="10 * min(prey_seen, 1) * (0.5 + hunger + appetite) - 8",
             doc="a hunter (docs/species.md) swims at the nearest fish of a group it hunts in view; ends beside it "
                 "(the catch is the population's rule) or when none is in view"),
    PlanType("flee", ticks=10, events=frozenset({"planned", "hungry"}), eats="no", seek="away",
             needs="fleeing", prompt="swim straight away from the nearest fish that hunts you (X)",
             fits="hunter_in_view", fork=("flee {ticks}",), words=("flee", "fleeing", "escape"),
             deed="worked",  # (no trait: fleeing answers a hunter, not a character; the behaviour score leaves it out)
             utility="(6 + 4 * caution) * min(hunters_seen, 1) - 2",
             doc="a fish whose group flees (docs/species.md) swims straight away from the nearest fish in view of a "
                 "group that hunts it; ends when none is in view"),
    PlanType("graze", ticks=30, events=frozenset({"planned", "hungry"}), eats="no", seek="bite",
             needs="grazing", prompt="swim beside the nearest plant (P) with leaves left and eat from it",
             fits="plants_in_view", fork=("graze {ticks}",), words=("graze", "grazing", "nibble", "leaves"),
             deed="ate",  # (no trait: grazing is a group's diet, not a character; the behaviour score leaves it out)
             utility="-1000000000 if bites_seen == 0 or hunger == 0 "
                     "else (0.5 + appetite) * hunger * 10 + 6 * low - 0.5",
             ends="hunger == 0",
             fails="bites_seen == 0 and plan_ticks >= 3",
             doc="a fish whose group eats plants (docs/species.md) swims beside the nearest plant in view with a "
                 "bite left and eats there, a bite a tick; done when it is full (hunger 0), failed when no plant "
                 "in view has a bite left"),
)


def check(table: tuple[PlanType, ...]) -> None:
    """Raise ValueError naming the first problem of ``table`` as a whole (each row checks itself)."""
    for t in table:
        if not isinstance(t, PlanType):
            raise ValueError(f"{t!r} is not a PlanType (mirofish.fish.plantypes)")
    names = [t.name for t in table]
    if not table or table[0].name != "hold" or table[0].param != "action":
        raise ValueError("the first plan type must be hold (param action): the one-action mode")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"plan type {dupes[0]} is declared twice")
    for t in table:  # a plan a model is offered needs its line in the prompt's list (return's: the places line)
        if t.fits not in ("never", "places") and not t.prompt:
            raise ValueError(f"plan type {t.name}: it fits a view (fits {t.fits!r}) but has no prompt line, so a "
                             f"model offered it would not know what it is: give prompt=, or fits='never' (people "
                             f"and forks only)")
    if len(table) > 127:
        raise ValueError("at most 127 plan types (goals are int8)")
    formulas = [t.name for t in table if t.utility and not t.planner]  # (beside the built-in choices)
    if len(formulas) > MAX_FORMULA_UTILITIES:
        raise ValueError(f"{len(formulas)} plan types with a utility formula (the last: {formulas[-1]}): the "
                         f"instinct planner draws among at most {MAX_FORMULA_UTILITIES} of them")


check(PLAN_TYPES)

# A plan type from another package (entry point group ``mirofish.plans``: a PlanType or a tuple
# of them) that does not load, or clashes with a row, is left out with one line here (shown by
# the command line, as the metric and scene plug-ins' are).
PLUGIN_PROBLEMS: list[str] = []


def with_plugins(table: tuple[PlanType, ...]) -> tuple[PlanType, ...]:
    """``table`` and, after it, the plan types of installed packages (entry point group
    ``mirofish.plans``), in entry-point name order, each row checked as the built-in ones are.
    Rows only ever go after the built-in ones, so a goal's code never moves (and recordings map
    goals by name anyway).

    The module that holds the rows is read while the plan tables are being built
    (:mod:`mirofish.fish.plans`), so it is loaded by itself — its package's ``__init__`` (which
    may well import MiroFish's scenes, metrics or recordings, all of which need the plan tables)
    is not run for it (:func:`mirofish.plugins.load_entry`). The row module itself should import only this module
    of MiroFish; one that imports more gets its one line, never a half-built table."""
    from importlib.metadata import entry_points

    from ..plugins import load_entry

    out = list(table)
    for ep in sorted(entry_points(group="mirofish.plans"), key=lambda e: e.name):
        try:
            rows = load_entry(ep)
            rows = rows if isinstance(rows, tuple) else (rows,)
            if not rows or not all(isinstance(r, PlanType) for r in rows):
                raise TypeError("not a PlanType (or a tuple of them)")
            check((*out, *rows))
        except Exception as exc:  # noqa: BLE001 — someone else's package: one line, not our failure
            PLUGIN_PROBLEMS.append(f"plan type plug-in {ep.name} ({ep.value}) does not load: {exc}")
            continue
        out += rows
    return tuple(out)




# ---------------------------------------------------------------- rows as data (a recording's header)

_ROW_FIELDS = {f for f in PlanType.__dataclass_fields__}


def row_data(t: PlanType) -> dict[str, Any]:
    """Plan type ``t`` as plain data (JSON: a recording's header keeps the rows of its run's own
    plan types, so a file made with a plug-in's type replays where the plug-in is not installed)."""
    out: dict[str, Any] = {}
    for name in PlanType.__dataclass_fields__:
        v = getattr(t, name)
        if name == "events":
            v = sorted(v)
        elif name == "steer":
            v = [{term: [key, factor] for term, (key, factor) in row.items()} for row in v]
        elif isinstance(v, tuple):
            v = list(v)
        out[name] = v
    return out


def row_from_data(d: Any) -> PlanType:
    """A plan type from :func:`row_data`'s data, checked as a row is (ValueError naming the
    problem: data from a file is never trusted — every name it gives is one of the table's
    choices, a steering weight's config key a steering setting, a planner weight a planner one,
    a formula parsed by :mod:`.formula`, never evaluated as code; a prompt one printable line)."""
    if not isinstance(d, dict) or not isinstance(d.get("name"), str):
        raise ValueError("a plan type row is an object with a name")
    name = d["name"]
    if not name.isidentifier() or len(name) > 40:
        raise ValueError(f"plan type {name[:40]!r}: a name is a short identifier")
    unknown = sorted(set(d) - _ROW_FIELDS)
    if unknown:
        raise ValueError(f"plan type {name}: unknown field {unknown[0]!r}")
    ticks, rests = d.get("ticks", 0), d.get("rests", False)
    if not isinstance(rests, bool):
        raise ValueError(f"plan type {name}: rests is true or false")
    return PlanType(name, ticks=ticks, events=frozenset(_row_words(d, name, "events")), steer=_row_steer(d, name),
                    rests=rests, fork=_row_words(d, name, "fork"), words=_row_words(d, name, "words"),
                    **_row_planner(d, name), **_row_texts(d, name))


def _row_words(d: dict[str, Any], name: str, key: str) -> tuple[str, ...]:
    v = d.get(key, [])
    if not isinstance(v, list) or len(v) > 64 or not all(isinstance(x, str) and len(x) <= 200 for x in v):
        raise ValueError(f"plan type {name}: {key} is a list of short texts")
    return tuple(v)


def _row_steer(d: dict[str, Any], name: str) -> tuple[dict[str, tuple[str, float]], ...]:
    """A row's steering: each term a [steering setting, factor] pair."""
    from ..config import SteeringConfig

    rows = d.get("steer", [{}])
    if not isinstance(rows, list) or not 1 <= len(rows) <= 8 or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"plan type {name}: steer is a list of 1 to 8 objects")
    steer: list[dict[str, tuple[str, float]]] = []
    for row in rows:
        out: dict[str, tuple[str, float]] = {}
        for term, pair in row.items():
            ok = (isinstance(pair, list) and len(pair) == 2 and pair[0] in SteeringConfig.model_fields
                  and isinstance(pair[1], (int, float)) and not isinstance(pair[1], bool) and abs(pair[1]) <= 1e6)
            if not ok:
                raise ValueError(f"plan type {name}: steer {term!r} is [a steering setting, a factor]")
            out[str(term)] = (str(pair[0]), float(pair[1]))
        steer.append(out)
    return tuple(steer)


def _row_planner(d: dict[str, Any], name: str) -> dict[str, Any]:
    """A row's planner weight and horizon settings (no built-in planner choice from a file)."""
    from ..config import PlannerConfig

    if d.get("planner") is not None:
        raise ValueError(f"plan type {name}: a row from a file names no built-in planner choice")
    out = {}
    for key in ("planner_weight", "planner_ticks"):
        v = d.get(key, "")
        if not isinstance(v, str) or (v and v not in PlannerConfig.model_fields):
            raise ValueError(f"plan type {name}: {key} {v!r} is not a planner setting")
        out[key] = v
    return out


def _row_texts(d: dict[str, Any], name: str) -> dict[str, Any]:
    """A row's texts: its choices (checked by PlanType), its prompt and doc (one printable line),
    its formulas (parsed by PlanType)."""
    out: dict[str, Any] = {}
    for key in ("param", "eats", "fits", "deed", "doc", "prompt", "trait", "seek", "needs", "utility", "ends",
                "fails"):
        v = d.get(key, getattr(PlanType, key))
        if v is None and key not in ("param", "eats", "fits", "deed", "doc"):
            out[key] = None
            continue
        if not isinstance(v, str):
            raise ValueError(f"plan type {name}: {key} is a text")
        most = 200 if key == "prompt" else 2000
        if len(v) > most:
            raise ValueError(f"plan type {name}: {key} is {len(v):,} characters, over the limit of {most:,}")
        if key in ("prompt", "doc") and not v.isprintable():
            raise ValueError(f"plan type {name}: {key} is one printable line (a prompt at most 200 characters)")
        out[key] = v
    return out
