import json

import pytest

from mirofish import snapshot
from mirofish.brains.instinct import instinct_source
from mirofish.config import load_config
from mirofish.engine import Engine
from mirofish.observe import ascii as ascii_view
from mirofish.session import LiveSession


def test_snapshot_is_plain_json_and_round_trips():
    eng = LiveSession(load_config(seed=12))
    eng.run(120)
    snap = eng.snapshot()
    text = snap.model_dump_json()
    again = snapshot.Snapshot.model_validate(json.loads(text))
    assert again == snap
    assert snap.state_hash == eng.state_hash() and snap.tick == 120
    fish = snap.fish[0]
    assert len(fish.short_memory) <= 8 and all(m.startswith("t") for m in fish.short_memory)
    assert fish.persona and set(fish.traits) == {"sociability", "curiosity", "caution", "appetite", "calm"}
    assert snap.metrics["schooling_degree"]["current"] == pytest.approx(eng.metrics.current()["schooling_degree"],
                                                                        abs=1e-3)
    assert [f.id for f in snap.fish] == list(range(60)) and snap.fish[7] == eng.fish(7)


def test_ascii_view_draws_the_whole_tank():
    eng = LiveSession(load_config(seed=2))
    eng.run(10)
    snap = eng.snapshot()
    lines = ascii_view.render(snap).split("\n")
    assert len(lines) == 54 and all(len(line) == 96 for line in lines)
    assert lines[0] == "#" * 96
    body = "".join(lines)
    assert sum(body.count(c) for c in "^v<>x") == 60
    assert body.count(ascii_view.FOOD) == len(snap.food) - sum(1 for x, y, _ in snap.food
                                                   if any(f.x == x and f.y == y for f in snap.fish))
    assert "schooling" in ascii_view.status_line(snap)


def test_state_arrays_restore_a_world_exactly():
    from mirofish.world import World

    cfg = load_config(seed=14)
    eng = LiveSession(cfg)
    eng.run(90)
    arrays = eng.world.state_arrays()
    twin = World(cfg)
    twin.load_state_arrays(arrays)
    assert twin.state_hash() == eng.state_hash()
    other = Engine(twin, instinct_source(cfg))
    for _ in range(60):
        eng.step()
        other.step()
    assert other.state_hash() == eng.state_hash()
    assert other.world.summaries(3) == eng.world.summaries(3)


def test_a_keyframe_from_another_tank_is_refused_not_cast():
    """The one state codec checks what it loads: another tank's arrays are an error."""
    from mirofish.world import World

    small = LiveSession(load_config(seed=14, **{"fish.count": 20}))
    small.run(5)
    with pytest.raises(ValueError, match="expected"):
        World(load_config(seed=14)).load_state_arrays(small.state_arrays())
