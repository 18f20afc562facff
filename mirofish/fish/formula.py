"""Formulas over named per-fish features: a plan type's planner utility and its plan events as data.

A plan type may say, as text, when the instinct planner should choose it and when it ends or
fails (:class:`mirofish.fish.plantypes.PlanType` ``utility``, ``ends``, ``fails``)::

    utility="(0.3 + caution) * min(plants_seen, 1) * (crowd + 0.5 * low) - 0.2"
    fails="hunger > 0.6 and food_seen > 0"

A formula is an arithmetic expression over the **features** below — numbers per fish, every one
a float — with ``+ - * /``, comparisons (1.0 true, 0.0 false), ``and``/``or``/``not``,
``x if c else y``, and ``min(a, b)``, ``max(a, b)``, ``abs(a)``, ``clip(a, lo, hi)``. Nothing
else parses: no attribute, no subscript, no other call, no name outside the table; a bad
formula is refused when its row is built, with one line naming the problem and the features.

It is evaluated in numpy, a fish per row, in the order written, so the same formula gives the
same doubles on every run (the hashes rest on it); :func:`program` compiles it to postfix ops
that the compiled planner runs (``_tick.c`` ``run_formula``) with numpy's rules — the same
doubles, bit for bit. The shipped plan types' utilities are such formulas (fish/plantypes.py),
drawn among by the one seeded softmax; the plan events are checked after the tick, whichever
tick ran (:meth:`mirofish.world.World.plan_predicates`), so compiled and numpy stay hash for hash
the same with no line of C about a particular formula.

Features (:data:`PLANNER_FEATURES`: what the planner reads from a request — what the fish sees
and is; :data:`EVENT_FEATURES`: those and its standing plan, read from the tank after a tick):

This module imports nothing of the package (a plan-type row checks its formulas while the
tables are being built).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# name -> what it means (the docs' table is generated from these)
PLANNER_FEATURES: dict[str, str] = {
    "energy": "energy as a share of the most a fish can hold (0 to 1)",
    "hunger": "0 above 80 % energy, rising to 1 at empty",
    "low": "1 below the low-energy line (triggers.low_energy_fraction), else 0",
    "food_seen": "food cells in view",
    "visible": "other fish in view",
    "company": "min(visible, 3) / 3",
    "crowd": "how crowded the view is: max(visible - triggers.crowd_line + 2, 0) / 3",
    "walls": "glass, rock and plant cells in view",
    "plants_seen": "plant cells in view, as shown to the fish (0 unless perception.plants_seen)",
    "prey_seen": "fish in view of the groups this fish's group hunts (0 for a fish that hunts none)",
    "hungry_food": "1 below the hungry line (triggers.hungry_fraction) with food in view, else 0",
    "rest_low": "1 below the energy resting revives (fish.rest_ceiling), else 0",
    "sociability": "the trait, 0 to 1",
    "curiosity": "the trait, 0 to 1",
    "caution": "the trait, 0 to 1",
    "appetite": "the trait, 0 to 1",
    "calm": "the trait, 0 to 1",
    "hunters_seen": "fish in view of groups that hunt this fish's group (0 unless a group flees: docs/species.md)",
    "bites_seen": "plant cells with a bite left in view (0 for a fish whose group does not eat plants: "
                  "docs/species.md)",
}
# a utility may also name its plan type's own planner weight (brain.planner.<planner_weight>; 1
# for a row without one): a number of the tank's config, the same for every fish
WEIGHT = "weight"
UTILITY_NAMES: dict[str, str] = {**PLANNER_FEATURES, WEIGHT: "the plan type's planner weight (brain.planner."
                                 "<its planner_weight>; 1 without one)"}
EVENT_FEATURES: dict[str, str] = {
    **PLANNER_FEATURES,
    "param": "the standing plan's parameter",
    "plan_ticks": "ticks since the standing plan was chosen",
    "ticks_left": "ticks to the plan's horizon (a large number without one)",
    "alone": "ticks since another fish was last in view",
    "no_food": "ticks since food was last in view",
    "stuck": "ticks the fish has not moved though it tried",
}
CONTEXTS = {"utility": UTILITY_NAMES, "ends": EVENT_FEATURES, "fails": EVENT_FEATURES}
# The ops of a compiled formula (:meth:`Formula.program`), as the compiled tick numbers them
# (_tick.c FORMULA_OPS; a test compares).
OPS = ("const", "feat", "add", "sub", "mul", "div", "neg", "not", "lt", "le", "gt", "ge", "eq", "ne", "and", "or",
       "if", "min", "max", "abs", "clip")
_OP = {name: i for i, name in enumerate(OPS)}
_BIN_OP = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_CMP_OP = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
MAX_PARTS = 200  # nodes of a formula's tree (numbers, names, operators): a formula is a line, not a program
MAX_TEXT = 2000  # characters

# the numpy function of each op with arguments (postfix: the last pushed is the last argument)
_UFUNC: dict[str, Callable[..., np.ndarray]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "neg": np.negative,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
    "ne": np.not_equal, "min": np.minimum, "max": np.maximum, "abs": np.abs, "clip": np.clip}
_ARITY = {"neg": 1, "not": 1, "abs": 1, "if": 3, "clip": 3}  # (the others take 2)
# the ops whose results are made float64 (a comparison's bools; the calls, as numpy returns them)
_AS_FLOAT = frozenset({"lt", "le", "gt", "ge", "eq", "ne", "min", "max", "abs", "clip"})
_CALLS = {"min": 2, "max": 2, "abs": 1, "clip": 3}  # the calls a formula may make, and their arguments

Values = Mapping[str, np.ndarray]
Program = tuple[tuple[str, Any], ...]  # postfix: (op, its argument: a number for const, a name for feat)


class FormulaError(ValueError):
    """A formula that does not parse or names what is not a feature (its message is one line)."""


def _as_float(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float64)


def _number(node: ast.Constant) -> float:
    """A formula's number: an int or a float within a double's range (1e999 reads as inf, and a
    utility of inf - inf is NaN), else :class:`FormulaError`."""
    if not isinstance(node.value, (int, float)) or isinstance(node.value, bool):
        raise FormulaError(f"{node.value!r} is not a number")
    if not math.isfinite(float(node.value)):
        raise FormulaError("a number beyond a double's range (it reads as inf) is not allowed")
    return float(node.value)


def _compile(node: ast.AST, names: Mapping[str, str], out: list[tuple[str, Any]]) -> None:
    """``node`` as postfix ops onto ``out`` (the operations in the order written), refusing, in one
    line, anything but numbers, the ``names``, ``+ - * /``, one comparison at a time,
    ``and or not``, ``x if c else y`` and the calls of :data:`_CALLS`."""
    if isinstance(node, ast.Expression):
        _compile(node.body, names, out)
    elif isinstance(node, ast.Constant):
        out.append(("const", _number(node)))
    elif isinstance(node, ast.Name):
        if node.id not in names:
            raise FormulaError(f"unknown name {node.id!r} (features: {', '.join(names)})")
        out.append(("feat", node.id))
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BIN_OP:
            raise FormulaError(f"{type(node.op).__name__} ({ast.unparse(node)}) is not allowed: + - * / only")
        if isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) and _number(node.right) == 0:
            raise FormulaError(f"{ast.unparse(node)} divides by zero")  # (inf or NaN, every fish, every tick)
        _compile(node.left, names, out)
        _compile(node.right, names, out)
        out.append((_BIN_OP[type(node.op)], None))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not, ast.UAdd)):
        _compile(node.operand, names, out)
        if not isinstance(node.op, ast.UAdd):
            out.append(("neg" if isinstance(node.op, ast.USub) else "not", None))
    elif isinstance(node, ast.Compare):
        if len(node.ops) != 1 or type(node.ops[0]) not in _CMP_OP:
            raise FormulaError(f"{ast.unparse(node)}: one comparison (< <= > >= == !=) at a time")
        _compile(node.left, names, out)
        _compile(node.comparators[0], names, out)
        out.append((_CMP_OP[type(node.ops[0])], None))
    elif isinstance(node, ast.BoolOp):  # the first part's truth, joined with each next one's
        join = "and" if isinstance(node.op, ast.And) else "or"
        _compile(node.values[0], names, out)
        for part in node.values[1:]:
            _compile(part, names, out)
            out.append((join, None))
    elif isinstance(node, ast.IfExp):
        for part in (node.test, node.body, node.orelse):
            _compile(part, names, out)
        out.append(("if", None))
    elif isinstance(node, ast.Call):
        fname = node.func.id if isinstance(node.func, ast.Name) else None
        if fname not in _CALLS or node.keywords:
            raise FormulaError(f"call of {ast.unparse(node.func)} is not allowed (only {', '.join(_CALLS)})")
        if len(node.args) != _CALLS[fname]:
            raise FormulaError(f"{fname}() takes {_CALLS[fname]} argument{'s' if _CALLS[fname] > 1 else ''}")
        for arg in node.args:
            _compile(arg, names, out)
        out.append((fname, None))
    else:
        raise FormulaError(f"{type(node).__name__} ({ast.unparse(node)}) is not allowed (numbers, features, "
                           f"+ - * /, comparisons, and/or/not, x if c else y, {', '.join(_CALLS)})")


def _run(code: Program, values: Values) -> np.ndarray:
    """A program in numpy, a fish per row: numpy's functions, in the program's order (the doubles
    the compiled tick's ``run_formula`` gives too)."""
    stack: list[Any] = []
    for op, arg in code:
        if op == "const":
            stack.append(np.float64(arg))
            continue
        if op == "feat":
            stack.append(values[arg])
            continue
        n = _ARITY.get(op, 2)
        args = stack[-n:]
        del stack[-n:]
        if op == "not":
            value = _as_float(np.equal(args[0], 0.0))
        elif op in ("and", "or"):
            join = np.logical_and if op == "and" else np.logical_or
            value = _as_float(join(np.not_equal(args[0], 0.0), np.not_equal(args[1], 0.0)))
        elif op == "if":
            value = _as_float(np.where(np.not_equal(args[0], 0.0), args[1], args[2]))
        else:
            value = _UFUNC[op](*args)
            if op in _AS_FLOAT:
                value = _as_float(value)
        stack.append(value)
    out: np.ndarray = stack[0]
    return out


@dataclass(frozen=True)
class Formula:
    """One formula, parsed and checked against the features of its ``context`` (``utility``,
    ``ends`` or ``fails``). ``names``: the features it reads (only those are computed)."""

    text: str
    context: str = "utility"
    names: frozenset[str] = field(init=False)
    code: Program = field(init=False, repr=False, compare=False)  # postfix, checked

    def __post_init__(self) -> None:
        features = CONTEXTS[self.context]
        if not isinstance(self.text, str):
            raise FormulaError(f"a formula is text, not {type(self.text).__name__}")
        if len(self.text) > MAX_TEXT:
            raise FormulaError(f"{len(self.text)} characters: a formula has at most {MAX_TEXT}")
        try:
            tree = ast.parse(self.text.strip(), mode="eval")
            parts = sum(1 for _ in ast.walk(tree)) - 1
        except SyntaxError as exc:
            raise FormulaError(f"does not parse: {exc.msg}") from None
        except (RecursionError, MemoryError):
            raise FormulaError(f"nested too deeply: a formula has at most {MAX_PARTS} parts") from None
        if parts > MAX_PARTS:
            raise FormulaError(f"{parts} parts (numbers, names, operators): a formula has at most {MAX_PARTS}")
        code: list[tuple[str, Any]] = []
        try:
            _compile(tree, features, code)
        except RecursionError:
            raise FormulaError(f"nested too deeply: a formula has at most {MAX_PARTS} parts") from None
        object.__setattr__(self, "names", frozenset(arg for op, arg in code if op == "feat"))
        object.__setattr__(self, "code", tuple(code))

    def __call__(self, values: Values, k: int) -> np.ndarray:
        """The formula for ``k`` fish, from ``values`` (feature name -> ``(k,)`` float64)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.broadcast_to(_as_float(_run(self.code, values)), (k,))
        return np.where(np.isfinite(out), out, 0.0)  # a 0/0 counts as 0: never NaN in a softmax


def program(formula: Formula, features: Sequence[str], bind: Mapping[str, float] | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """``formula`` compiled for the compiled tick: postfix ``(ops, args)`` (int8, float64), a
    feature by its index in ``features`` (the tick's FORMULA_FEATURES), a name in ``bind`` (the
    planner weight) as its value. Run there, it gives the doubles :class:`Formula` gives."""
    index = {n: i for i, n in enumerate(features)}
    bind = bind or {}
    ops = [_OP["const"] if op == "feat" and arg in bind else _OP[op] for op, arg in formula.code]
    args = [float(bind[arg]) if op == "feat" and arg in bind else float(index[arg]) if op == "feat"
            else float(arg) if op == "const" else 0.0 for op, arg in formula.code]
    return np.array(ops, np.int8), np.array(args, np.float64)


def check(text: str | None, context: str) -> Formula | None:
    """``text`` parsed as a formula of ``context`` (None for None); FormulaError names the problem."""
    return None if text is None else Formula(text, context)


def feature_doc() -> str:
    """The features as a Markdown table (docs/extending.md quotes it; a test compares)."""
    rows = [f"| `{name}` | {doc} | {'planner and events' if name in PLANNER_FEATURES else 'events'} |"
            for name, doc in EVENT_FEATURES.items()]
    rows.append(f"| `{WEIGHT}` | {UTILITY_NAMES[WEIGHT]} | utilities |")
    return "\n".join(["| feature | what it is | in |", "|---|---|---|", *rows])
