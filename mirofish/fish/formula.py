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

_BIN: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide}
_CMP: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater, ast.GtE: np.greater_equal,
    ast.Eq: np.equal, ast.NotEq: np.not_equal}
_CALLS: dict[str, tuple[int, Callable[..., np.ndarray]]] = {
    "min": (2, np.minimum), "max": (2, np.maximum), "abs": (1, np.abs), "clip": (3, np.clip)}

Values = Mapping[str, np.ndarray]
_Eval = Callable[[Values], np.ndarray]


class FormulaError(ValueError):
    """A formula that does not parse or names what is not a feature (its message is one line)."""


def _as_float(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float64)


def _constant(node: ast.Constant, names: Mapping[str, str], used: set[str]) -> _Eval:
    if not isinstance(node.value, (int, float)) or isinstance(node.value, bool):
        raise FormulaError(f"{node.value!r} is not a number")
    value = np.float64(node.value)
    return lambda v: value  # type: ignore[return-value]


def _name(node: ast.Name, names: Mapping[str, str], used: set[str]) -> _Eval:
    if node.id not in names:
        raise FormulaError(f"unknown name {node.id!r} (features: {', '.join(names)})")
    used.add(node.id)
    key = node.id
    return lambda v: v[key]


def _binop(node: ast.BinOp, names: Mapping[str, str], used: set[str]) -> _Eval:
    if type(node.op) not in _BIN:
        raise FormulaError(f"{type(node.op).__name__} ({ast.unparse(node)}) is not allowed: + - * / only")
    op, a, b = _BIN[type(node.op)], _build(node.left, names, used), _build(node.right, names, used)
    return lambda v: op(a(v), b(v))


def _unary(node: ast.UnaryOp, names: Mapping[str, str], used: set[str]) -> _Eval:
    a = _build(node.operand, names, used)
    if isinstance(node.op, ast.USub):
        return lambda v: np.negative(a(v))
    if isinstance(node.op, ast.Not):
        return lambda v: _as_float(np.equal(a(v), 0.0))
    if isinstance(node.op, ast.UAdd):
        return a
    raise FormulaError(f"{ast.unparse(node)} is not allowed")


def _compare(node: ast.Compare, names: Mapping[str, str], used: set[str]) -> _Eval:
    if len(node.ops) != 1 or type(node.ops[0]) not in _CMP:
        raise FormulaError(f"{ast.unparse(node)}: one comparison (< <= > >= == !=) at a time")
    op, a, b = _CMP[type(node.ops[0])], _build(node.left, names, used), _build(node.comparators[0], names, used)
    return lambda v: _as_float(op(a(v), b(v)))


def _boolop(node: ast.BoolOp, names: Mapping[str, str], used: set[str]) -> _Eval:
    parts = [_build(x, names, used) for x in node.values]
    join = np.logical_and if isinstance(node.op, ast.And) else np.logical_or

    def boolop(v: Values) -> np.ndarray:
        out = np.not_equal(parts[0](v), 0.0)
        for p in parts[1:]:
            out = join(out, np.not_equal(p(v), 0.0))
        return _as_float(out)
    return boolop


def _ifexp(node: ast.IfExp, names: Mapping[str, str], used: set[str]) -> _Eval:
    c, a, b = (_build(x, names, used) for x in (node.test, node.body, node.orelse))
    return lambda v: _as_float(np.where(np.not_equal(c(v), 0.0), a(v), b(v)))


def _call(node: ast.Call, names: Mapping[str, str], used: set[str]) -> _Eval:
    fname = node.func.id if isinstance(node.func, ast.Name) else None
    if fname not in _CALLS or node.keywords:
        raise FormulaError(f"call of {ast.unparse(node.func)} is not allowed (only {', '.join(_CALLS)})")
    arity, fn = _CALLS[fname]
    if len(node.args) != arity:
        raise FormulaError(f"{fname}() takes {arity} argument{'s' if arity > 1 else ''}")
    args = [_build(x, names, used) for x in node.args]
    return lambda v: _as_float(fn(*(a(v) for a in args)))


# each node a formula may hold, and how it is built
_NODES: dict[type, Callable[[Any, Mapping[str, str], set[str]], _Eval]] = {
    ast.Constant: _constant, ast.Name: _name, ast.BinOp: _binop, ast.UnaryOp: _unary, ast.Compare: _compare,
    ast.BoolOp: _boolop, ast.IfExp: _ifexp, ast.Call: _call}


def _build(node: ast.AST, names: Mapping[str, str], used: set[str]) -> _Eval:
    """The evaluator of ``node``, adding the features it reads to ``used``."""
    if isinstance(node, ast.Expression):
        return _build(node.body, names, used)
    make = _NODES.get(type(node))
    if make is None:
        raise FormulaError(f"{type(node).__name__} ({ast.unparse(node)}) is not allowed (numbers, features, "
                           f"+ - * /, comparisons, and/or/not, x if c else y, {', '.join(_CALLS)})")
    return make(node, names, used)


@dataclass(frozen=True)
class Formula:
    """One formula, parsed and checked against the features of its ``context`` (``utility``,
    ``ends`` or ``fails``). ``names``: the features it reads (only those are computed)."""

    text: str
    context: str = "utility"
    names: frozenset[str] = field(init=False)
    _eval: _Eval = field(init=False, repr=False, compare=False)

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
        used: set[str] = set()
        fn = _build(tree, features, used)
        object.__setattr__(self, "names", frozenset(used))
        object.__setattr__(self, "_eval", fn)

    def __call__(self, values: Values, k: int) -> np.ndarray:
        """The formula for ``k`` fish, from ``values`` (feature name -> ``(k,)`` float64)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.broadcast_to(_as_float(self._eval(values)), (k,))
        return np.where(np.isfinite(out), out, 0.0)  # a 0/0 counts as 0: never NaN in a softmax


def _emit(node: ast.AST, index: Mapping[str, int], bind: Mapping[str, float], out: list[tuple[int, float]]) -> None:
    """``node`` (checked by :class:`Formula`) as postfix ops onto ``out``: the same operations in
    the same order as its numpy evaluation."""
    if isinstance(node, ast.Expression):
        _emit(node.body, index, bind, out)
    elif isinstance(node, ast.Constant):
        out.append((_OP["const"], float(node.value)))  # type: ignore[arg-type]
    elif isinstance(node, ast.Name):
        out.append((_OP["const"], float(bind[node.id])) if node.id in bind else (_OP["feat"], float(index[node.id])))
    elif isinstance(node, ast.BinOp):
        _emit(node.left, index, bind, out)
        _emit(node.right, index, bind, out)
        out.append((_OP[_BIN_OP[type(node.op)]], 0.0))
    elif isinstance(node, ast.UnaryOp):
        _emit(node.operand, index, bind, out)
        if not isinstance(node.op, ast.UAdd):
            out.append((_OP["neg" if isinstance(node.op, ast.USub) else "not"], 0.0))
    elif isinstance(node, ast.Compare):
        _emit(node.left, index, bind, out)
        _emit(node.comparators[0], index, bind, out)
        out.append((_OP[_CMP_OP[type(node.ops[0])]], 0.0))
    elif isinstance(node, ast.BoolOp):  # numpy: the first part's truth, then joined with each next one's
        join = _OP["and" if isinstance(node.op, ast.And) else "or"]
        _emit(node.values[0], index, bind, out)
        if len(node.values) == 1:
            out += [(_OP["const"], 0.0), (_OP["ne"], 0.0)]
        for part in node.values[1:]:
            _emit(part, index, bind, out)
            out.append((join, 0.0))
    elif isinstance(node, ast.IfExp):
        for part in (node.test, node.body, node.orelse):
            _emit(part, index, bind, out)
        out.append((_OP["if"], 0.0))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):  # (checked: min, max, abs, clip)
        for arg in node.args:
            _emit(arg, index, bind, out)
        out.append((_OP[node.func.id], 0.0))
    else:  # (Formula refused it already)
        raise FormulaError(f"{type(node).__name__} cannot be compiled")


def program(formula: Formula, features: Sequence[str], bind: Mapping[str, float] | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """``formula`` compiled for the compiled tick: postfix ``(ops, args)`` (int8, float64), a
    feature by its index in ``features`` (the tick's FORMULA_FEATURES), a name in ``bind`` (the
    planner weight) as its value. Run there, it gives the doubles :class:`Formula` gives."""
    out: list[tuple[int, float]] = []
    _emit(ast.parse(formula.text.strip(), mode="eval"), {n: i for i, n in enumerate(features)}, bind or {}, out)
    return np.array([o for o, _ in out], np.int8), np.array([a for _, a in out], np.float64)


def check(text: str | None, context: str) -> Formula | None:
    """``text`` parsed as a formula of ``context`` (None for None); FormulaError names the problem."""
    return None if text is None else Formula(text, context)


def feature_doc() -> str:
    """The features as a Markdown table (docs/extending.md quotes it; a test compares)."""
    rows = [f"| `{name}` | {doc} | {'planner and events' if name in PLANNER_FEATURES else 'events'} |"
            for name, doc in EVENT_FEATURES.items()]
    rows.append(f"| `{WEIGHT}` | {UTILITY_NAMES[WEIGHT]} | utilities |")
    return "\n".join(["| feature | what it is | in |", "|---|---|---|", *rows])
