"""A guard on per-tick work that needs no clock: the calls a tick of the default tank makes,
counted under ``sys.setprofile`` and held to ``tests/call_budget.json``.

What is counted: each call of a Python function of the package, and each call a line of the
package makes to anything else (a numpy function, a builtin, a method, the compiled tick) —
once, not the work inside it, so the count is the package's own and does not move with numpy's
internals. It is the same on every machine and every run (the tank is seeded), so a change that
adds per-tick Python work fails here by count however fast the machine is. A count well under
its budget fails too, asking for the budget to come down with the work (bench/vs_mesa.py times
what the counts stand for)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mirofish
from mirofish.config import load_config
from mirofish.session import LiveSession

ROOT = Path(__file__).resolve().parent.parent
PKG = str(Path(mirofish.__file__).resolve().parent)
BUDGET = json.loads((ROOT / "tests" / "call_budget.json").read_text())
WARM, TICKS = 100, 300


def calls_per_tick(fish: int, ticks: int = TICKS) -> dict[str, float]:
    s = LiveSession(load_config(seed=1, **{"fish.count": fish}))
    s.run(WARM)
    n = {"calls": 0, "compiled": 0}

    def ours(frame) -> bool:
        return frame is not None and frame.f_code.co_filename.startswith(PKG)

    def count(frame, event, arg):
        if event == "call" and (ours(frame) or ours(frame.f_back)):
            n["calls"] += 1
        elif event == "c_call" and ours(frame):
            n["calls"] += 1
            n["compiled"] += getattr(arg, "__module__", None) == "mirofish._tick"

    sys.setprofile(count)
    try:
        s.run(ticks)
    finally:
        sys.setprofile(None)
    return {k: v / ticks for k, v in n.items()}


@pytest.mark.parametrize("fish", [60, 1000])
def test_a_tick_makes_no_more_calls_than_its_budget(fish):
    got, budget = calls_per_tick(fish), BUDGET[str(fish)]
    assert got["calls"] <= budget["calls"], (
        f"{fish} fish: {got['calls']:.1f} calls a tick, over the budget of {budget['calls']} "
        f"(tests/call_budget.json): what per-tick work was added?")
    assert got["calls"] >= 0.9 * budget["calls"], (
        f"{fish} fish: {got['calls']:.1f} calls a tick, well under the budget of {budget['calls']}: "
        f"lower it in tests/call_budget.json")
    assert got["compiled"] == pytest.approx(budget["compiled"], abs=0.01)  # the compiled tick's calls


def test_the_count_is_the_same_run_to_run_and_sees_added_work(monkeypatch):
    """The same count twice; and one numpy call added to every fish's tick shows in it."""
    first, again = calls_per_tick(60, 60), calls_per_tick(60, 60)
    assert first == again
    import numpy as np

    from mirofish import world

    step = world.World.step

    def heavier(self):
        np.zeros(3)  # (a call of this test's line: not the package's own)
        return step(self)

    monkeypatch.setattr(world.World, "step", heavier)
    more = calls_per_tick(60, 60)
    assert more["calls"] == pytest.approx(first["calls"] + 1, abs=0.01)  # one more function a tick


@pytest.mark.parametrize("fish", [60, 1000])
def test_the_compiled_calls_read_their_names_in_one_walk(fish):
    """Each compiled call takes its arrays and numbers in dicts by name; a dict given in its
    table's order (kernel.AFTER_ARRAYS, …) is read in one walk, without hashing a name. None of
    a tick's calls may fall back to looking its names up one by one (mirofish/_tick.c, by_name)."""
    from mirofish import kernel

    k = kernel.compiled_tick()
    assert k is not None
    s = LiveSession(load_config(seed=1, **{"fish.count": fish}))
    s.run(WARM)
    dicts, before = k.dict_counts()
    s.run(TICKS // 3)
    now = k.dict_counts()
    assert now[1] == before, "a compiled call was given its names out of their table's order"
    # kernel.positional: a tick's calls give their values as tuples in the tables' order, no dict
    assert now[0] == dicts, "a compiled call of a tick was given a dict: is its caller @kernel.positional?"
