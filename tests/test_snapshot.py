import json

import pytest

from mirofish.brains.instinct import instinct_source
from mirofish import snapshot
from mirofish.config import load_config
from mirofish.engine import Engine
from mirofish.session import LiveSession
from mirofish.observe import ascii as ascii_view


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
    assert snap.metrics["schooling_degree"]["current"] >= 0


def test_restored_world_continues_exactly_like_the_original():
    cfg = load_config(seed=13)
    eng = LiveSession(cfg)
    eng.run(150)
    snap = snapshot.Snapshot.model_validate_json(eng.snapshot().model_dump_json())
    restored = Engine(snapshot.restore(cfg, snap), instinct_source(cfg))
    assert restored.state_hash() == eng.state_hash()
    for _ in range(150):
        eng.step()
        restored.step()
        assert restored.state_hash() == eng.state_hash()
    assert restored.world.summaries(5) == eng.world.summaries(5)


def test_restore_rejects_a_snapshot_from_another_run():
    eng = LiveSession(load_config(seed=1))
    eng.run(5)
    snap = eng.snapshot()
    with pytest.raises(ValueError, match="different seed"):
        snapshot.restore(load_config(seed=2), snap)
    tampered = snap.model_copy(update={"state_hash": "0" * 32})
    with pytest.raises(ValueError, match="inconsistent"):
        snapshot.restore(load_config(seed=1), tampered)


def test_ascii_view_draws_the_whole_tank():
    eng = LiveSession(load_config(seed=2))
    eng.run(10)
    snap = eng.snapshot()
    lines = ascii_view.render(snap).split("\n")
    assert len(lines) == 54 and all(len(line) == 96 for line in lines)
    assert lines[0] == "#" * 96
    body = "".join(lines)
    assert sum(body.count(c) for c in "^v<>x") == 60
    assert body.count("F") == len(snap.food) - sum(1 for x, y, _ in snap.food
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
