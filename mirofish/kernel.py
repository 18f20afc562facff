"""Which tick runs: the compiled one (``mirofish/_tick.c``) or the numpy reference.

``pip install -e .`` builds ``mirofish._tick`` with the machine's C compiler (``setup.py``;
the build is optional, so an install without a compiler still works). When the module is
there, :class:`~mirofish.world.World` steers, arbitrates and does the after-tick bookkeeping
in it: the whole loop (planner and metrics included) runs about 3–4 times faster at 60 fish,
where the numpy tick is bound by the fixed cost of a few hundred small array operations
(``bench/tick_kernels.py``). When it is not, or when the environment variable
``MIROFISH_TICK=numpy`` is set, the numpy code in ``world.py``, ``arbiter.py`` and
``fish/steering.py`` runs; it is the reference the compiled tick is tested against, tick by
tick (``tests/test_kernel.py``). Tanks of 4,096 fish and more split the compiled steering
and after-tick loops over the machine's cores when the extension was built with OpenMP
(``setup.py``; ``_tick.THREADS``); the world is the same with any number of threads.

Both give the same world on the same seed: everything but steering's utilities is integer
arithmetic, and the utilities follow the numpy code operation by operation (see the C
file's header for the one-ulp caveat). ``live --headless`` reports which tick ran
(``"tick_kernel"``).
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import textwrap
import types
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

try:
    from . import _tick as _compiled  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # not built (no compiler at install time): the numpy tick runs
    _compiled = None
if _compiled is not None and not hasattr(_compiled, "dict_counts"):  # built from an older _tick.c (without its
    _compiled = None  # newest function): stale, so the numpy tick runs until pip install -e . rebuilds it
_compiled_module: ModuleType | None = _compiled

ENV = "MIROFISH_TICK"


def compiled_tick() -> ModuleType | None:
    """The compiled tick module, or None when it is absent or ``MIROFISH_TICK=numpy``."""
    choice = os.environ.get(ENV, "").strip().lower()
    if choice not in ("", "compiled", "numpy"):
        raise ValueError(f"{ENV}={choice!r}: use 'compiled' or 'numpy'")
    if choice == "numpy":
        return None
    if choice == "compiled" and _compiled is None:
        raise ValueError(f"{ENV}=compiled, but mirofish._tick was not built (reinstall with a C compiler: "
                         "pip install -e .)")
    return _compiled_module


def name() -> str:
    """``"compiled"`` or ``"numpy"``: the tick a world built now would run."""
    return "numpy" if compiled_tick() is None else "compiled"


def built() -> ModuleType | None:
    """The compiled module if it was built, whatever ``MIROFISH_TICK`` says (for objects that
    decided with :func:`compiled_tick` when made and keep only that choice, so that they stay
    copyable and picklable)."""
    return _compiled_module


# ------------------------------------------------------------------ the arguments by position

F = TypeVar("F", bound=Callable[..., Any])

# what the compiled calls' names are looked up in (a call name: its two tables)
TABLES = {"steer": ("STEER_ARRAYS", "STEER_NUMBERS"), "arbitrate": ("ARBITRATE_ARRAYS", "ARBITRATE_INTS"),
          "after": ("AFTER_ARRAYS", "AFTER_INTS"), "plan": ("PLAN_ARRAYS", "PLAN_NUMBERS"),
          "adopt": ("ADOPT_ARRAYS", "ADOPT_NUMBERS"), "ask": ("ASK_ARRAYS", "ASK_INTS"),
          "tally": ("TALLY_ARRAYS", "TALLY_INTS"), "tally_tanks": ("TALLY_TANKS_ARRAYS", "TALLY_TANKS_INTS"),
          "deeds": ("DEEDS_ARRAYS", "DEEDS_INTS"),
          "judge": ("JUDGE_ARRAYS", "JUDGE_INTS"), "summarize": ("SUMMARIZE_ARRAYS", "SUMMARIZE_INTS"),
          "keep": ("KEEP_ARRAYS", "KEEP_INTS")}
# every function :func:`positional` rewrote (each keeps the function as written as ``by_name``)
POSITIONAL: list[Callable[..., Any]] = []


class _ToTuples(ast.NodeTransformer):
    """Each ``X.NAME({...}, {...})`` whose NAME is a compiled call and whose dicts are literals
    naming exactly its tables' names becomes ``X.NAME((...), (...))``, the values in the
    tables' order; any other call is left as written (its dicts are read by name)."""

    def __init__(self, module: ModuleType) -> None:
        self.module, self.done = module, 0

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr in TABLES and len(node.args) == 2 and not node.keywords):
            return node
        tuples = []
        for arg, table in zip(node.args, TABLES[f.attr]):
            names = tuple(getattr(self.module, table))
            if not (isinstance(arg, ast.Dict) and all(isinstance(k, ast.Constant) for k in arg.keys)):
                return node  # (a dict made elsewhere, or one with ** in it: by name)
            keys = [k.value for k in arg.keys]  # type: ignore[union-attr]
            if sorted(keys) != sorted(names):
                missing, extra = set(names) - set(keys), set(keys) - set(names)
                raise ValueError(f"{f.attr}(): the names given are not {table}'s (missing {sorted(missing)}, "
                                 f"not in it {sorted(extra)})")
            by = dict(zip(keys, arg.values))
            tuples.append(ast.Tuple([by[n] for n in names], ast.Load()))
        node.args = tuples  # type: ignore[assignment]
        self.done += 1
        return node


def positional(fn: F) -> F:
    """``fn`` with its calls of the compiled tick given tuples instead of dicts: its source is
    read, each call whose dicts are literals naming exactly the call's table names (checked
    here, once) is rewritten to pass the same values in the tables' order, and the function is
    compiled again (its file and line numbers kept). The source keeps the names — what a reader
    and mypy see — and a tick does not build about 230 dict entries (a dict of 67 names takes
    about 3.4 µs to build, a tuple of them 0.8: a 60-fish tick's compiled calls went from about
    9 µs of dicts to about 2). The values are evaluated in the table's order, not as written:
    keep them free of side effects. Without the compiled module, or where the source cannot be
    read or rewritten safely (a closure, ``super()``, a private ``__name``), ``fn`` is returned
    as it is: its dicts are read by name, the same values, only slower. Put it next to the
    ``def`` (below any other decorator)."""
    k = _compiled_module
    if k is None or not isinstance(fn, types.FunctionType) or fn.__code__.co_freevars:
        return fn
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        filename = inspect.getsourcefile(fn) or "<positional>"
    except (OSError, TypeError):
        return fn
    if re.search(r"(?<!\w)__[A-Za-z]\w*(?<!__)\b", src):  # a name Python mangles in a class (self.__x too)
        return fn
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != fn.__name__:
        return fn
    fdef.decorator_list = []
    rewrite = _ToTuples(k)
    rewrite.visit(fdef)
    if not rewrite.done:
        return fn
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
    code = compile(tree, filename, "exec", flags=annotations.compiler_flag, dont_inherit=True)
    inner = next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == fn.__name__)
    new = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    new.__doc__, new.__qualname__, new.__module__ = fn.__doc__, fn.__qualname__, fn.__module__
    new.__annotations__ = fn.__annotations__
    new.by_name = fn  # type: ignore[attr-defined]  # the function as written (its dicts read by name)
    POSITIONAL.append(new)
    return new  # type: ignore[return-value]
