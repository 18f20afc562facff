"""Damaged recordings x every reading command (docs/recordings.md: a recording is data): a recording of a model run,
damaged as a careless tool or a hostile file would leave it and sealed again with a fresh
checksum, read by replay, report, trace, export (tables, window, OTel), fork (with and without a
server), diff (either side) and reask: each works or says one line, exit 2 — never exit 1, a
traceback or asyncio's "Task was destroyed" — and the file is never changed."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import random
import shutil
import sqlite3

import pytest

from mirofish.brains.testserver import TestServer
from mirofish.cli import main
from mirofish.observe.recording import content_digest, decode_columns, encode_columns


def run_cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


def chunks(db, change):
    for tick0, blob in db.execute("SELECT tick0, data FROM chunks").fetchall():
        a, t = decode_columns(blob)
        a, t = change(a, t)
        db.execute("UPDATE chunks SET data = ? WHERE tick0 = ?", (encode_columns(a, t), tick0))


def hdr(db, key, value):
    db.execute("INSERT OR REPLACE INTO header VALUES (?, ?)", (key, json.dumps(value)))


def cfg_edit(db, f):
    c = json.loads(db.execute("SELECT value FROM header WHERE key='config'").fetchone()[0])
    f(c)
    hdr(db, "config", c)


def g(v):
    def ch(a, t):
        a["goal"][:] = v
        return a, t
    return ch


def texts(key, value):
    def ch(a, t):
        return a, {**t, key: value}
    return ch


DAMAGES = {
 "prompts_int": lambda db: hdr(db, "prompts", {"tank": 5}),
 "prompts_list": lambda db: hdr(db, "prompts", [1, 2]),
 "prompts_str": lambda db: hdr(db, "prompts", "x"),
 "prompts_text_int": lambda db: hdr(db, "prompts", {"tank": {"name": 3, "hash": [], "text": 7}}),
 "goal_7": lambda db: chunks(db, g(7)),
 "goal_250": lambda db: chunks(db, g(250)),
 "width": lambda db: cfg_edit(db, lambda c: c["world"].__setitem__("width", c["world"]["width"] + 3)),
 "height": lambda db: cfg_edit(db, lambda c: c["world"].__setitem__("height", 5)),
 "thoughts_list": lambda db: chunks(db, texts("thoughts", [[1, 5], ["x", None]])),
 "thoughts_dict": lambda db: chunks(db, texts("thoughts", {"a": 1})),
 "summaries": lambda db: chunks(db, texts("summaries", [5, None])),
 "no_texts": lambda db: db.execute("DELETE FROM texts"),
 "calls_garbled": lambda db: db.execute("UPDATE calls SET data = x'00ff00ff'"),
 "calls_json": lambda db: db.execute("UPDATE calls SET data = ?", (b"[1,2,3]",)),
 "dicts_gone": lambda db: db.execute("DELETE FROM dicts"),
 "fish_count": lambda db: cfg_edit(db, lambda c: c["fish"].__setitem__("count", 3)),
 "brain_kind": lambda db: cfg_edit(db, lambda c: c["brain"].__setitem__("kind", "instinct")),
 "decides": lambda db: cfg_edit(db, lambda c: c["brain"].__setitem__("decides", "action")),
}


READERS = [["replay", "{p}", "--headless"], ["replay", "{p}", "--headless", "--verify"],
           ["report", "{p}", "--fish", "3"], ["trace", "{p}", "--fish", "1", "--from", "0", "--to", "50"],
           ["export", "{p}", "--tables", "{o}", "--format", "csv"],
           ["export", "{p}", "--around", "50", "--radius", "20", "--out", "{o}.db"],
           ["export", "{p}", "--otel", "{o}.json"],
           ["fork", "{p}", "--at", "40", "--fish", "2", "--plan", "forage", "--ticks", "20"],
           ["fork", "{p}", "--at", "40", "--fish", "2", "--plan", "forage", "--ticks", "20", "--base-url", "{url}"],
           ["diff", "{p}", "{base}"], ["diff", "{base}", "{p}"],
           ["reask", "{p}", "--fish", "1", "--tick", "0", "--base-url", "{url}"],
           ["reask", "{p}", "--fish", "2", "--tick", "1", "--base-url", "{url}"]]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with TestServer() as srv:
        base = tmp_path_factory.mktemp("damaged") / "base.db"
        code, err = run_cli(["live", "--headless", "--ticks", "100", "--fish", "10", "--base-url", srv.url,
                             "--model", "fish-mini", "--record", str(base)])
        assert code == 0, err
        yield srv, base


def damaged_copy(base, folder, name):
    p = folder / f"{name}.db"
    shutil.copy(base, p)
    with contextlib.closing(sqlite3.connect(p)) as db:
        DAMAGES[name](db)
        db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db)),))
        db.commit()
    return p


def check_reader(srv, base, tmp_path, name, reader, k):
    p = damaged_copy(base, tmp_path, f"{name}") if not (tmp_path / f"{name}.db").exists() else tmp_path / f"{name}.db"
    before = hashlib.sha256(p.read_bytes()).hexdigest()
    argv = [a.replace("{p}", str(p)).replace("{o}", str(tmp_path / f"out{k}")).replace("{url}", srv.url)
            .replace("{base}", str(base)) for a in reader]
    code, err = run_cli(argv)
    assert code in (0, 2), (name, argv, code, err)
    assert "Traceback" not in err and "Task was destroyed" not in err, (name, argv, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (name, argv, err)
    assert hashlib.sha256(p.read_bytes()).hexdigest() == before, (name, argv)


def cases(seed: int, n: int | None):
    grid = [(name, k) for name in sorted(DAMAGES) for k in range(len(READERS))]
    if n is None:
        return grid
    return random.Random(seed).sample(grid, n)


def test_the_campaigns_classes_are_one_line_for_the_reader_that_failed(served, tmp_path):
    """The damages that used to exit 1, each with the reader it broke."""
    srv, base = served
    for name, k in [("prompts_int", 3), ("prompts_list", 7), ("prompts_str", 9), ("prompts_int", 11),
                    ("goal_7", 3), ("goal_7", 9), ("goal_250", 10), ("no_texts", 11)]:
        check_reader(srv, base, tmp_path, name, READERS[k], k)


def test_generated_damage_and_readers_are_exit_0_or_one_line(served, tmp_path):
    srv, base = served
    for name, k in cases(seed=62, n=40):
        check_reader(srv, base, tmp_path, name, READERS[k], k)


@pytest.mark.soak
def test_every_damage_with_every_reader(served, tmp_path):
    srv, base = served
    for name, k in cases(seed=0, n=None):
        check_reader(srv, base, tmp_path, name, READERS[k], k)


def test_a_fifo_or_a_device_given_as_a_recording_is_one_line(tmp_path):
    import os
    import time

    fifo = tmp_path / "rec.db"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        for argv in (["replay", str(path), "--headless"], ["export", str(path), "--tables", str(tmp_path / "t")]):
            started = time.monotonic()
            code, err = run_cli(argv)
            assert code == 2 and len(err.strip().splitlines()) == 1 and time.monotonic() - started < 5, (argv, err)


def test_garbled_exchanges_are_one_line_for_tables_trace_and_reask(served, tmp_path):
    """The campaign's exit-1 cases: an exchange with a fish id past any tank, and exchanges whose
    fields have the wrong types — texts that are not text refused where they are decoded (one
    line), counts that are not whole numbers left empty in the tables; never exit 1."""
    import zlib

    from mirofish.observe.recording import decode_calls

    srv, base = served
    cases = {"fish_huge": lambda c: {**c, "fish": 10**20}, "kind_number": lambda c: {**c, "kind": 5},
             "user_list": lambda c: {**c, "user": [1]}, "tokens_text": lambda c: {**c, "prompt_tokens": "x"}}
    for name, change in cases.items():
        p = tmp_path / f"{name}.db"
        shutil.copy(base, p)
        with contextlib.closing(sqlite3.connect(p)) as db:
            for tick0, dict_name, blob in db.execute("SELECT tick0, dict, data FROM calls").fetchall():
                zdict = db.execute("SELECT data FROM dicts WHERE hash = ?", (dict_name,)).fetchone()
                calls = [change(c) for c in decode_calls(blob, zlib.decompress(zdict[0]) if zdict else None)]
                db.execute("UPDATE calls SET dict = NULL, data = ? WHERE tick0 = ?",  # stored without a dictionary
                           (zlib.compress(json.dumps(calls).encode()), tick0))
            db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db)),))
            db.commit()
        for argv in (["export", str(p), "--tables", str(tmp_path / f"t-{name}"), "--format", "csv"],
                     ["trace", str(p), "--fish", "1", "--from", "0", "--to", "30"],
                     ["reask", str(p), "--fish", "1", "--tick", "0", "--base-url", srv.url]):
            code, err = run_cli(argv)
            assert code in (0, 2) and "Traceback" not in err, (name, argv, code, err)
            if name in ("kind_number", "user_list"):  # texts that are not text: the file is damaged
                assert code == 2 and len(err.strip().splitlines()) == 1 and "damaged" in err, (name, argv, err)


def test_a_header_number_past_int64_goes_to_the_runs_table_as_text(served, tmp_path):
    """The campaign's rerun: a re-sealed header whose seed is 10^30 exited 1 in export --tables
    (Parquet): the runs table keeps such a number as its text."""
    _, base = served
    p = tmp_path / "seed.db"
    shutil.copy(base, p)
    with contextlib.closing(sqlite3.connect(p)) as db:
        hdr(db, "seed", 10**30)
        db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db)),))
        db.commit()
    for fmt in ("csv", "parquet"):
        code, err = run_cli(["export", str(p), "--tables", str(tmp_path / f"t-{fmt}"), "--format", fmt])
        assert code == 0, err
