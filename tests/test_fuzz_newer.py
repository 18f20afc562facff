"""The fault campaign for the newer commands, kept as tests: generated reef files and checkpoints,
clip ranges and speeds, reask flags, glossary review targets, and sweep files with a key in a
URL. The promise for every case, as for the aquarium's (tests/test_fuzz.py): exit code 0 or 2,
one line on stderr for 2, never a traceback, never a changed input, no canary key in any file
written or line printed, and nothing from a checkpoint ever run.

The default suite runs a small seeded sample of each class; ``python -m pytest -m soak`` runs
hundreds of cases per class.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import pickle
import random
import zlib
from pathlib import Path

import pytest
from conftest import sqlite_file

from mirofish.cli import main

ROOT = Path(__file__).resolve().parent.parent
RING = ROOT / "assets" / "reefs" / "ring.toml"
CANARY = "pw-canary-3b9d41"


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def check(argv: list[str], inputs: tuple[Path, ...] = ()) -> tuple[int, str, str]:
    before = [digest(p) for p in inputs]
    code, out, err = run_cli(argv)
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (argv, err)
    assert [digest(p) for p in inputs] == before, (argv, "an input changed")
    return code, out, err


# ---------------------------------------------------------------- reef files

REEF_TOP = ["interval = {v}", "ticks = {v}", "tanks = {v}", "corridors = {v}", "extra = {v}"]
REEF_VALUES = ["0", "1", "20", "-5", "2.5", "true", '"20"', "1e309", "99999999999999999999", "[]", "{}", "[1, 2]"]
TANK_LINES = ['name = "{n}"', "seed = {v}", 'preset = "{p}"', "set = {s}", "room = {v}", "nosuch = 1"]
NAMES = ["a", "b", "a", "", "x y", "n" * 50, "é", "ok_1"]
PRESETS = ["schooling-demo", "nope", ""]
SETS = ['{"fish.count" = 8}', '{"fish.count" = -1}', '{"fish.count" = true}', '{"brain.kind" = "we\\"ird\\\\x.py:B"}',
        '{"world.width" = 8}', '{"nosuch.key" = 1}', '{"fish" = 3}', "{}", '{"seed" = 3}', '{"fish.count" = "8"}']
CORRIDOR_LINES = ['a = "{n}"', 'b = "{n}"', 'side_a = "{side}"', 'side_b = "{side}"', "at_a = {f}", "width = {v}"]
SIDES = ["north", "south", "west", "east", "up"]
FRACTIONS = ["0", "0.5", "1", "1.5", "-0.1", "true", '"0.5"']


BASE_REEF = """interval = 5
ticks = 10
[[tanks]]
name = "a"
seed = 1
set = {"fish.count" = 8, "world.width" = 40, "world.height" = 24}
[[tanks]]
name = "b"
seed = 2
set = {"fish.count" = 8, "world.width" = 40, "world.height" = 24}
[[corridors]]
a = "a"
b = "b"
side_a = "east"
side_b = "west"
""".splitlines()


def reef_cases(seed: int, n: int):
    """A good two-tank reef with 0–3 of its lines changed, dropped or added: types, ranges,
    names, sides, settings, tables out of place (and now and then bytes that are not TOML)."""
    rng = random.Random(seed)
    pool = [*(line.format(v=v) for line in REEF_TOP for v in REEF_VALUES),
            *(line.format(n=nm, v=v, p=pr, s=st) for line in TANK_LINES
              for nm, v, pr, st in zip(NAMES, REEF_VALUES, PRESETS * 4, SETS)),
            *(line.format(n=nm, side=sd, f=f, v=v) for line in CORRIDOR_LINES
              for nm, sd, f, v in zip(NAMES, SIDES * 2, FRACTIONS * 2, REEF_VALUES)),
            "[[tanks]]", "[[corridors]]", "[tanks]"]
    for _ in range(n):
        lines = list(BASE_REEF)
        for _ in range(rng.randint(0, 3)):
            k = rng.randrange(len(lines))
            what = rng.random()
            if what < 0.5:
                key = lines[k].split("=")[0].strip()
                same_key = [c for c in pool if c.split("=")[0].strip() == key]
                lines[k] = rng.choice(same_key or pool)  # the same key, another value: no duplicate keys
            elif what < 0.7:
                del lines[k]
            else:
                lines.insert(k, rng.choice(pool))
        text = "\n".join(lines) + "\n"
        if rng.random() < 0.05:  # not TOML at all, or cut short
            text = rng.choice(["[[tanks]\nname=", "\x00\x01\x02", text[: len(text) // 2] + "= [", "ticks = [[[[[["])
        yield text


def run_reef_campaign(tmp_path: Path, seed: int, n: int) -> int:
    ran = 0
    for k, text in enumerate(reef_cases(seed, n)):
        path = tmp_path / f"r{k}.toml"
        path.write_text(text)
        code, _, _ = check(["reef", path, "--headless", "--ticks", 3], (path,))
        ran += code == 0
    return ran


def test_generated_reef_files_are_exit_0_or_one_line_exit_2(tmp_path):
    ran = run_reef_campaign(tmp_path, seed=3, n=40)
    assert ran >= 1  # some of them are good reefs, and run


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    ckpt = tmp_path_factory.mktemp("ckpt") / "ring.ckpt"
    code, _, err = run_cli(["reef", RING, "--headless", "--ticks", 40, "--checkpoint", ckpt])
    assert code == 0, err
    return ckpt


class _Bomb:
    marker: Path

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def checkpoint_cases(good: bytes, marker: Path, seed: int, n: int):
    rng = random.Random(seed)
    raw = zlib.decompress(good)
    bomb = _Bomb()
    bomb.marker = marker
    makers = [
        lambda: pickle.dumps({"spec": None, "tick": 20, "x": bomb}),
        lambda: zlib.compress(pickle.dumps(bomb)),
        lambda: good[: rng.randint(0, len(good) - 1)],
        lambda: zlib.compress(raw[: rng.randint(0, len(raw) - 1)]),
        lambda: bytes(b ^ (0xFF if rng.random() < 0.001 else 0) for b in good),
        lambda: zlib.compress(bytes(b ^ (0x55 if rng.random() < 0.002 else 0) for b in raw)),
        lambda: rng.randbytes(rng.randint(0, 4000)),
        lambda: b'{"format": "mirofish reef checkpoint", "version": 1}',
        lambda: zlib.compress(b'{"format": "mirofish reef checkpoint"}' + raw[:100]),
    ]
    for _ in range(n):
        yield rng.choice(makers)()


def run_checkpoint_campaign(tmp_path: Path, checkpoint: Path, seed: int, n: int) -> None:
    marker = tmp_path / "pwned"
    for k, blob in enumerate(checkpoint_cases(checkpoint.read_bytes(), marker, seed, n)):
        path = tmp_path / f"c{k}.ckpt"
        path.write_bytes(blob)
        check(["reef", RING, "--headless", "--ticks", 60, "--resume", path], (path, RING))
    assert not marker.exists(), "a checkpoint ran code"


def test_generated_checkpoints_run_nothing_and_are_one_line(tmp_path, checkpoint):
    run_checkpoint_campaign(tmp_path, checkpoint, seed=3, n=30)


# ---------------------------------------------------------------- clips, reask, glossary reviews


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    """30 ticks of 8 fish asking the bundled test server (stopped afterwards: reask finds it gone)."""
    from mirofish.brains.testserver import TestServer
    from mirofish.config import load_config
    from mirofish.session import LiveSession

    path = tmp_path_factory.mktemp("rec") / "run.db"
    with TestServer() as server:
        cfg = load_config(**{"fish.count": 8, "brain.kind": "llm", "seed": 2, "brain.request_timeout_s": 2.0,
                             "brain.small.endpoints": [{"base_url": server.url, "model": "fish-mini"}]})
        live = LiveSession(cfg, mode="lockstep")
        live.start_recording(path)
        live.run(30)
        live.close()
    return path


CLIP_TICKS = ["0", "1", "2", "29", "30", "31", "-1", "x", "99999999999"]
CLIP_SPEEDS = ["0.25", "0.2", "4", "64", "65", "0", "-1", "nan", "inf", "x"]
CLIP_OUTS = ["a.gif", "a.mp4", "a.webm", "a", "{rec}", "sub/a.gif", "."]


def clip_cases(seed: int, n: int):
    """Mostly short stretches the recording has at speeds a clip takes (so many are drawn), the
    rest ranges, speeds, outputs and options it must refuse."""
    rng = random.Random(seed)
    for _ in range(n):
        good = rng.random() < 0.6
        t0 = rng.choice(["0", "5", "27", "28"] if good else CLIP_TICKS)
        t1 = str(int(t0) + rng.choice([1, 2])) if good or (t0.isdigit() and rng.random() < 0.5) else \
            rng.choice(CLIP_TICKS)
        speed = rng.choice(["0.25", "4", "64"] if good else CLIP_SPEEDS)
        out = rng.choice(["a.gif", "a.mp4"] if good else CLIP_OUTS)
        yield ["--from", t0, "--to", t1, "--speed", speed, "--out", out,
               *rng.choice([[], ["--size", "640x400"], ["--size", "10x10"], ["--follow", "3"], ["--follow", "999"],
                            ["--zoom", "9"], ["--zoom", "2"], ["--no-hud"]])]


def run_clip_campaign(tmp_path: Path, recording: Path, seed: int, n: int) -> None:
    for k, args in enumerate(clip_cases(seed, n)):
        here = tmp_path / f"k{k}"
        here.mkdir()
        args = [str(recording) if a == "{rec}" else str(here / a) if a in CLIP_OUTS and a != "." else a
                for a in args]
        if "--size" not in args:
            args += ["--size", "640x400"]  # small frames: the campaign is about the arguments
        code, _, _ = check(["clip", recording, *args], (recording,))
        if code == 2:  # a refused clip leaves nothing behind
            assert not [p for p in here.rglob("*") if p.is_file()], args


def test_generated_clip_requests_are_exit_0_or_one_line(tmp_path, recording):
    run_clip_campaign(tmp_path, recording, seed=3, n=25)


REASK_FLAGS = [["--fish", "3"], ["--fish", "0", "--tick", "0"],
               ["--fish", "-1"], ["--fish", "x"], ["--fish", "99999"], ["--tick", "5"],
               ["--tick", "-2"], ["--n", "0"], ["--n", "101"], ["--n", "2"], ["--timeout", "0"], ["--timeout", "nan"],
               ["--timeout", "1"], ["--base-url", "not a url"], ["--base-url", f"http://u:{CANARY}@127.0.0.1:9/v1"],
               ["--base-url", "http://127.0.0.1:9/v1"], ["--base-url", ""], ["--model", ""], ["--model", "m"],
               ["--json"]]


def run_reask_campaign(recording: Path, seed: int, n: int) -> None:
    rng = random.Random(seed)
    for _ in range(n):
        argv = ["reask", recording]
        for _ in range(rng.randint(0, 4)):
            argv += rng.choice(REASK_FLAGS)
        _, out, err = check(argv, (recording,))
        assert CANARY not in out + err


def test_generated_reask_flags_are_exit_0_or_one_line(recording):
    run_reask_campaign(recording, seed=3, n=40)


@pytest.fixture(scope="module")
def glossary(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gloss") / "g.db"
    code, _, err = run_cli(["referential", "--headless", "--rounds", "40", "--glossary", path, "--review"])
    assert code == 0, err
    return path


def glossary_targets(good: Path, tmp_path: Path, rng: random.Random) -> Path:
    path = tmp_path / f"g{rng.randrange(10**9)}.db"
    kind = rng.choice(["good", "good", "empty", "bytes", "foreign", "cut", "damaged", "old", "missing", "folder"])
    if kind in ("good", "damaged", "old", "cut"):
        data = good.read_bytes()
        path.write_bytes(data[: len(data) // 2] if kind == "cut" else data)
        if kind in ("damaged", "old"):
            sqlite_file(path, "UPDATE glossary SET canonical_properties = '[1'" if kind == "damaged"
                        else "ALTER TABLE glossary DROP COLUMN agreed_count")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "bytes":
        path.write_bytes(rng.randbytes(rng.randint(1, 3000)))
    elif kind == "foreign":
        sqlite_file(path, "CREATE TABLE meta (key TEXT, value TEXT)")
    elif kind == "folder":
        path.mkdir()
    return path


def run_glossary_campaign(good: Path, tmp_path: Path, seed: int, n: int) -> None:
    rng = random.Random(seed)
    code, out, _ = run_cli(["glossary", "review", good])
    import json

    pending = [t["term"] for t in json.loads(out)["pending"]] or ["none"]
    for _ in range(n):
        target = glossary_targets(good, tmp_path, rng)
        argv = ["glossary", "review", target]
        for _ in range(rng.randint(0, 3)):
            argv += [rng.choice(["--approve", "--reject"]), rng.choice([*pending, "nosuch", "", "'; DROP TABLE x"])]
        before = digest(target)
        code, _, _ = check(argv)
        if code == 2 and before is not None:
            assert digest(target) == before, argv  # a refused review wrote not a byte


def test_generated_glossary_reviews_change_only_glossaries(glossary, tmp_path):
    run_glossary_campaign(glossary, tmp_path, seed=3, n=40)


# ---------------------------------------------------------------- sweep files with a key in a URL

SECRET_PARAMS = [
    '"brain.small.endpoints" = [[{{base_url = "{u}", model = "m"}}]]',
    '"brain.large.endpoints" = [[{{base_url = "{u}", model = "m"}}], []]',
    '"fish.groups" = [[{{name = "g", share = 0.5, base_url = "{u}", model = "m"}}]]',
]
URLS = [f"http://fishuser:{CANARY}@127.0.0.1:9/v1", f"https://:{CANARY}@example.invalid/v1",
        f"http://fishuser:{CANARY}@[::1/v1"]


def run_secret_campaign(tmp_path: Path, seed: int, n: int) -> None:
    rng = random.Random(seed)
    for k in range(n):
        lines = ['scene = "aquarium"', f"length = {rng.choice([2, 3])}", "seeds = [1]", "[params]",
                 rng.choice(SECRET_PARAMS).format(u=rng.choice(URLS)), '"brain.kind" = ["instinct"]',
                 '"fish.count" = [6]']
        spec = tmp_path / f"s{k}.toml"
        spec.write_text("\n".join(lines) + "\n")
        out = tmp_path / f"o{k}"
        argv = ["sweep", spec, "--out", out, "--workers", "1", *(["--dry-run"] if rng.random() < 0.3 else [])]
        _, printed, err = check(argv, (spec,))
        assert CANARY not in printed + err, argv
        for path in out.rglob("*") if out.exists() else ():
            if path.is_file():
                assert CANARY.encode() not in path.read_bytes(), path


def test_generated_sweep_files_with_keys_in_urls_keep_them_out_of_every_file(tmp_path):
    run_secret_campaign(tmp_path, seed=3, n=8)


@pytest.mark.soak
def test_full_campaign_of_the_newer_commands(tmp_path, checkpoint, recording, glossary):
    """Hundreds of generated cases per class (python -m pytest -m soak)."""
    for name in ("reef", "ckpt", "clip", "gloss", "secret"):
        (tmp_path / name).mkdir()
    run_reef_campaign(tmp_path / "reef", seed=17, n=300)
    run_checkpoint_campaign(tmp_path / "ckpt", checkpoint, seed=17, n=200)
    run_clip_campaign(tmp_path / "clip", recording, seed=17, n=200)
    run_reask_campaign(recording, seed=17, n=300)
    run_glossary_campaign(glossary, tmp_path / "gloss", seed=17, n=300)
    run_secret_campaign(tmp_path / "secret", seed=17, n=100)
