"""kernel.positional: a function's calls of the compiled tick written with dicts of names and
run with tuples in the tables' order — the same world tick by tick, names checked once."""

from __future__ import annotations

import importlib
import sys

import pytest

from mirofish import kernel
from mirofish.config import load_config
from mirofish.session import LiveSession

pytestmark = pytest.mark.skipif(kernel.built() is None, reason="the compiled tick was not built")


def owner(fn):
    """The class or module a rewritten function was found in, by its qualified name."""
    obj = importlib.import_module(fn.__module__)
    for part in fn.__qualname__.split(".")[:-1]:
        obj = getattr(obj, part)
    return obj


def test_every_rewritten_function_gives_the_world_its_dicts_give(monkeypatch):
    """Each function kernel.positional rewrote, put back as written (its dicts read by name),
    steps the same world, tick by tick, as the rewritten ones: 60 fish with memories and
    summaries, and a hexagonal tank."""
    import mirofish.brains.instinct  # (every module with a rewritten function)
    import mirofish.observe.metrics
    import mirofish.session.history
    import mirofish.ticks  # noqa: F401

    names = {f.__qualname__ for f in kernel.POSITIONAL}
    assert {"step_compiled", "World.steer", "World.asks", "World.apply_plans", "World._summarize",
            "Metrics.observe", "WordDeed.observe", "WordDeed._judge_quiet", "DecisionHistory._keep",
            "InstinctPlanner._decide_compiled"} <= names
    k = kernel.built()

    def run(cfg):  # (each tick's hash and actions; how many dicts the compiled calls were given)
        s, seen, dicts = LiveSession(cfg), [], k.dict_counts()[0]
        for _ in range(120):
            f = s.step()
            seen.append((s.world.state_hash(), f.executed.tobytes()))
        return s, seen, k.dict_counts()[0] - dicts

    for grid in ("square", "hex"):
        cfg = load_config(seed=5, **{"world.grid": grid, "memory.summary_every": 25})
        fast, fast_ticks, fast_dicts = run(cfg)  # (the functions as rewritten: the package's own)
        with monkeypatch.context() as m:  # (the functions as written, for the whole of the other run)
            for fn in kernel.POSITIONAL:
                m.setattr(owner(fn), fn.__name__, fn.by_name)
                for mod in list(sys.modules.values()):  # (and where a module imported it by name)
                    if getattr(mod, "__name__", "").startswith("mirofish") and getattr(mod, fn.__name__, None) is fn:
                        m.setattr(mod, fn.__name__, fn.by_name)
            slow, slow_ticks, slow_dicts = run(cfg)
            want = slow.metrics.summary()
        # (as written: each of a tick's seven or so compiled calls gives its two dicts)
        assert fast_dicts == 0 and slow_dicts > 120 * 12, (fast_dicts, slow_dicts)
        for t, (a, b) in enumerate(zip(fast_ticks, slow_ticks, strict=True)):
            assert a == b, f"{grid}: tick {t} differs"
        got = fast.metrics.summary()
        for m in (want, got):  # (the decision latencies are wall-clock: the rest is the world's)
            del m["decision_latency_p95_ms"]
        assert got == want
        assert fast.metrics.word_deed.counts.tolist() == slow.metrics.word_deed.counts.tolist()


def load(tmp_path, name: str, src: str):
    """A module of ``src`` written to a file and imported (kernel.positional reads its source)."""
    (tmp_path / f"{name}.py").write_text(src)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def test_names_not_a_tables_are_refused_when_the_function_is_made(tmp_path):
    """A call whose dict literal names other names than its table's is a ValueError naming
    them when the function is rewritten — before any tick, not a wrong array in C."""
    src = ("from mirofish import kernel\n\n\n@kernel.positional\ndef bad(k, a):\n"
           "    return k.tally({'executed': a, 'nonsense': a}, {'slot': 0})\n")
    with pytest.raises(ValueError, match=r"tally\(\): the names given are not TALLY_ARRAYS's.*'nonsense'"):
        load(tmp_path, "names_wrong", src)


def test_a_function_it_cannot_read_or_rewrite_is_left_as_written(tmp_path):
    """No source (made by exec from a string), a dict made elsewhere, a ``**`` in it: the
    function is returned as it was, its dicts read by name."""
    made: dict = {}
    exec("def f(k, d):\n    return k.tally(d, {})\n", made)
    assert kernel.positional(made["f"]) is made["f"]
    g = load(tmp_path, "calls_elsewhere", "from mirofish import kernel\n\n\n@kernel.positional\n"
                                          "def g(k, d, n):\n    return k.tally({**d}, n)\n").g
    assert not hasattr(g, "by_name")  # (left as written)
    c = load(tmp_path, "mangled", "from mirofish import kernel\n\n\nclass C:\n    @kernel.positional\n"
                                  "    def h(self, k):\n        return k.tally({'executed': self.__x}, {})\n").C
    assert not hasattr(c.h, "by_name")  # (self.__x is C's own name only inside the class body)


def test_a_rewritten_function_runs_its_calls_with_tuples_in_table_order(tmp_path):
    """The rewritten call gives the compiled function the values in its table's order, whatever
    order they were written in; the function keeps its name, doc and defaults."""
    src = ("from mirofish import kernel\n\n\n@kernel.positional\n"
           "def f(k, a, b=2):\n    \"\"\"doc\"\"\"\n"
           "    return k.ask({'refused_at': a, 'cell': b}, {'tick': 1})\n")

    class Spy:
        def ask(self, arrays, numbers):
            return arrays, numbers

    got: list = []
    with pytest.raises(ValueError, match=r"ask\(\): the names given are not ASK_ARRAYS's"):
        load(tmp_path, "too_few", src)  # (two names of fourteen: refused)
    names = list(kernel.built().ASK_ARRAYS)
    ints = list(kernel.built().ASK_INTS)
    arrays = "{" + ", ".join(f"'{n}': {i}" for i, n in enumerate(reversed(names))) + "}"
    numbers = "{" + ", ".join(f"'{n}': -{i}" for i, n in enumerate(ints)) + "}"
    f = load(tmp_path, "in_order", "from mirofish import kernel\n\n\n@kernel.positional\n"
                                   f"def f(k, b=2):\n    \"\"\"doc\"\"\"\n    return k.ask({arrays}, {numbers})\n").f
    got = f(Spy())
    assert got[0] == tuple(len(names) - 1 - i for i in range(len(names)))  # each value at its name's place
    assert got[1] == tuple(-i for i in range(len(ints)))
    assert f.__doc__ == "doc" and f.__defaults__ == (2,) and f.__name__ == "f" and hasattr(f, "by_name")
    assert f.by_name(Spy())[0] == {n: i for i, n in enumerate(reversed(names))}  # (as written: a dict)
