import numpy as np

from mirofish.config import load_config
from mirofish.fish.memory import ATE, NEIGHBOURS, REFUSED, ShortMemory
from mirofish.fish.personality import persona_text
from mirofish.session import LiveSession


def test_short_memory_is_a_ring_of_eight_in_t_tick_format():
    m = ShortMemory(2, 8)
    for t in range(11):
        m.record(np.array([0]), t, NEIGHBOURS, t % 4)
    lines = m.lines(0)
    assert len(lines) == 8 and lines[0].startswith("t3 ") and lines[-1].startswith("t10 ")
    assert m.lines(1) == []


def test_record_many_keeps_column_order_per_fish():
    m = ShortMemory(3, 8)
    flags = np.array([[True, True], [False, True], [False, False]])
    args = np.array([[1, 2], [0, 3], [0, 0]])
    m.record_many(5, flags, np.array([REFUSED, ATE], np.int8), args)
    assert m.lines(0) == ["t5 move refused (south)", "t5 ate food, energy 2"]
    assert m.lines(1) == ["t5 ate food, energy 3"] and m.lines(2) == []


def test_long_memory_every_20_ticks_three_kept_with_raw_anchors():
    eng = LiveSession(load_config(seed=3))
    w = eng.world
    personas = list(w.school.persona)
    traits = w.school.traits.copy()
    anchors_seen = {}
    for t in range(1, 201):
        eng.step()
        if t % 20 == 0:
            for i in range(w.school.n):
                anchors_seen.setdefault(i, []).append((t, w.school.memory.lines(i)[-3:]))
    # Fish with news in a 20-tick span get a summary for it (a quiet span gets none).
    busy = np.flatnonzero(w.school.long_memory.count == 10)
    assert busy.size >= 3
    for i in busy[:3]:
        summaries = w.summaries(i)
        assert 1 <= len(summaries) <= 3
        # The newest summary quotes the three newest raw events of its tick, verbatim.
        tick, raw = anchors_seen[i][-1]
        newest = summaries[-1]
        assert newest.startswith(f"t{tick - 20}-t{tick}:") or f"-t{tick}:" in newest
        for event in raw:
            assert event in newest
    # The personality is frozen: summaries never rewrite it.
    assert w.school.persona == personas and np.array_equal(w.school.traits, traits)
    assert w.school.long_memory.count.max() == 10  # 200 ticks / 20
    assert np.median(w.school.long_memory.count) >= 5


def test_persona_text_follows_traits():
    assert persona_text([90, 90, 10, 90, 10]).startswith("a sociable fish that loves to explore")
    assert "loner" in persona_text([5, 50, 50, 50, 50])
