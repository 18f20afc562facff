"""User code cannot stall or kill the tank: a brain whose answers cannot be encoded, that raises
BaseExceptions, whose exceptions cannot be shown, that hangs or raises at import, in setup,
when made or when closed — each is a counted fallback or one line, never a dead worker thread
leaving every tick waiting for the watchdog (21 s a tick before: 11.7 hours for 2,000 ticks)."""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from mirofish.brains import user
from mirofish.cli import main

BRAINS = textwrap.dedent("""
    import numpy as np
    from mirofish.brains.user import Decision

    class NumpyTicks:  # a numpy integer is a whole number: read as one
        def decide(self, ask):
            return Decision(goal="rest" if "rest" in ask.plans else ask.plans[0], ticks=np.int64(4),
                            thought="numpy")
    class NumpyInDict:
        def decide(self, ask):
            return {"goal": ask.plans[0], "ticks": np.int32(5)}
    class Deep:
        def decide(self, ask):
            d = {"goal": ask.plans[0]}
            for _ in range(5000):
                d = {"x": d}
            return d
    class RaisingDict(dict):
        def items(self):
            raise RuntimeError("no items for you")
        def __iter__(self):
            raise RuntimeError("no keys for you")
    class DictSubclass:
        def decide(self, ask):
            return RaisingDict(goal=ask.plans[0])
    class BadThought(Decision):
        @property
        def thought(self):
            raise RuntimeError("thinking hurts")
        @thought.setter
        def thought(self, v):
            pass
    class DecisionSubclass:
        def decide(self, ask):
            return BadThought(goal=ask.plans[0])
    class Unshowable:
        def __str__(self):
            raise RuntimeError("cannot show")
        __repr__ = __str__
    class ObjectInside:
        def decide(self, ask):
            return {"goal": ask.plans[0], "thought": Unshowable()}
    class HugeThought:
        def decide(self, ask):
            return {"goal": ask.plans[0], "thought": "x" * 30_000_000}
    class NaN:
        def decide(self, ask):
            return {"goal": ask.plans[0], "ticks": float("nan")}
    class ArrayAnswer:
        def decide(self, ask):
            return np.arange(3)
    class Exits:
        def decide(self, ask):
            raise SystemExit(3)
    class Interrupts:
        def decide(self, ask):
            raise KeyboardInterrupt
    class GenExit:
        def decide(self, ask):
            raise GeneratorExit
    class BadError(Exception):
        def __str__(self):
            raise RuntimeError("even my message fails")
    class UnshowableError:
        def decide(self, ask):
            raise BadError()
    class Multiline:
        def decide(self, ask):
            raise ValueError("line one\\nline two\\r\\nline three")
""")

# brain → the reason its failures are counted under (None: its answers are decisions)
CASES = {
    "NumpyTicks": None, "NumpyInDict": None,
    "Deep": "brain_garbage", "DictSubclass": "brain_garbage", "DecisionSubclass": "brain_garbage",
    "ObjectInside": "brain_garbage", "HugeThought": "brain_garbage", "NaN": "brain_garbage",
    "ArrayAnswer": "brain_garbage",
    "Exits": "brain_raised", "Interrupts": "brain_raised", "GenExit": "brain_raised",
    "UnshowableError": "brain_raised", "Multiline": "brain_raised",
}


def run(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    return code, json.loads(lines[-1]) if lines else None, err


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_brain_whose_answers_cannot_be_read_is_a_counted_fallback_and_never_stalls(capsys, tmp_path, name):
    (tmp_path / "b.py").write_text(BRAINS)
    code, out, err = run(capsys, "live", "--headless", "--ticks", "80", "--fish", "12",
                         "--brain", f"{tmp_path / 'b.py'}:{name}")
    assert code == 0, err
    assert "Traceback" not in err and "Exception in thread" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) <= 1, lines  # one line per kind of failure; every message on one line
    fallbacks = out["brain"]["fallbacks"]
    assert "brain_hung" not in fallbacks  # no worker died leaving a tick waiting for the watchdog
    assert out["brain"]["lost_workers"] == 0
    reason = CASES[name]
    if reason is None:
        assert not fallbacks and out["brain"]["brain_decisions"] == out["brain"]["decisions"] > 0
    else:
        # raising brains trip the brain's breaker (breaker_open) as any raising brain does
        assert fallbacks.get(reason, 0) > 0 and set(fallbacks) <= {reason, "breaker_open"}
        assert sum(fallbacks.values()) == out["brain"]["decisions"]
        assert out["decisions_by_tier"].get("fallback", 0) == out["brain"]["decisions"]


def test_a_2000_tick_run_of_a_brain_that_cannot_be_encoded_completes_with_every_fallback_counted(capsys, tmp_path):
    """The acceptance run: every decision of 2,000 ticks is the fallback's, counted, none waited
    for (a single stalled tick would add brain.request_timeout_s + 1 = 21 s)."""
    (tmp_path / "b.py").write_text(BRAINS)
    started = time.monotonic()
    code, out, err = run(capsys, "live", "--headless", "--ticks", "2000", "--fish", "20",
                         "--brain", f"{tmp_path / 'b.py'}:DictSubclass")
    took = time.monotonic() - started
    assert code == 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert out["ticks"] == 2000 and out["brain_timeouts"] == 0  # no tick waited on a dead worker
    fb = out["brain"]["fallbacks"]
    assert set(fb) == {"brain_garbage"} and fb["brain_garbage"] == out["brain"]["decisions"] > 100
    assert out["decisions_by_tier"].get("fallback", 0) == fb["brain_garbage"]  # no tick gave up waiting
    print(f"2,000 ticks in {took:.1f} s")  # the closing note's figure; guarded by the counts above


LOADS = textwrap.dedent("""
    import time
    class InitExits:
        def __init__(self):
            raise SystemExit(1)
        def decide(self, ask):
            return {"goal": "forage"}
    class SetupHangs:
        def setup(self, ctx):
            time.sleep(10 ** 6)
        def decide(self, ask):
            return {"goal": "forage"}
    class SetupInterrupts:
        def setup(self, ctx):
            raise KeyboardInterrupt
        def decide(self, ask):
            return {"goal": "forage"}
    class CloseHangs:
        def decide(self, ask):
            return {"goal": ask.plans[0]}
        def close(self):
            time.sleep(10 ** 6)
""")


@pytest.mark.parametrize("module, name, says", [
    ("raise SystemExit(4)\n", "B", "raised SystemExit"),
    ("raise KeyboardInterrupt\n", "B", "raised KeyboardInterrupt"),
    ("raise GeneratorExit\n", "B", "raised GeneratorExit"),
    ("import time\ntime.sleep(10 ** 6)\n", "B", "did not return within"),
    ("raise ValueError('a\\nb\\nc')\n", "B", "raised ValueError"),
    (LOADS, "InitExits", "making InitExits raised SystemExit"),
    (LOADS, "SetupHangs", "setup did not return within"),
    (LOADS, "SetupInterrupts", "setup raised KeyboardInterrupt"),
])
def test_a_brain_that_raises_anything_or_hangs_while_loading_is_one_line_exit_2(capsys, tmp_path, monkeypatch,
                                                                                module, name, says):
    monkeypatch.setattr(user, "LOAD_TIMEOUT_S", 1.0)
    (tmp_path / "b.py").write_text(module)
    started = time.monotonic()
    code, _, err = run(capsys, "live", "--headless", "--ticks", "5", "--fish", "5", "--brain",
                       f"{tmp_path / 'b.py'}:{name}", "--set", "brain.warmup_timeout_s=1")
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert time.monotonic() - started < 10


def test_a_close_that_hangs_costs_its_watchdog_once_and_the_run_reports(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(user, "CLOSE_TIMEOUT_S", 0.5)
    (tmp_path / "b.py").write_text(LOADS)
    code, out, err = run(capsys, "live", "--headless", "--ticks", "20", "--fish", "5", "--brain",
                         f"{tmp_path / 'b.py'}:CloseHangs")
    assert code == 0 and out is not None and "close() did not return within 0.5 s" in err
    assert len(err.strip().splitlines()) == 1


def test_one_line_escapes_newlines_and_survives_unshowable_objects():
    class Bad:
        def __str__(self):
            raise RuntimeError

    assert user.one_line("a\nb\r\nc") == "a\\nb\\r\\nc"
    assert "Bad" in user.one_line(Bad())
    assert len(user.one_line("x" * 10_000)) <= 300
