"""Glossary files: read without writing, validated, reviews all or nothing, foreign files refused."""

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import sqlite_file

from mirofish.cli import main


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def glossary(tmp_path, capsys) -> Path:
    path = tmp_path / "g.db"
    assert main(["referential", "--headless", "--rounds", "40", "--glossary", str(path), "--review"]) == 0
    capsys.readouterr()
    return path


def run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err.strip()


def test_listing_and_diffing_write_nothing_even_to_an_old_format_file(glossary, capsys):
    db = sqlite3.connect(glossary)  # an old-format glossary: no heard/agreed columns, no snapshots table
    db.execute("CREATE TABLE g2 AS SELECT id, term, canonical_properties, definition_by_sender, "
               "definition_by_receiver, usage_count, success_count, success_rate, stable_score, created_at, "
               "updated_at, last_used_round, model, status, proposed_by FROM glossary")
    db.execute("DROP TABLE glossary")
    db.execute("ALTER TABLE g2 RENAME TO glossary")
    db.execute("DROP TABLE glossary_snapshots")
    db.commit()
    db.close()
    before = digest(glossary)
    code, out, _ = run(capsys, ["glossary", str(glossary)])
    assert code == 0 and json.loads(out)["terms"] and json.loads(out)["snapshots"] == []
    code, _, _ = run(capsys, ["glossary", "review", str(glossary)])
    assert code == 0 and digest(glossary) == before
    assert sorted(p.name for p in glossary.parent.iterdir()) == ["g.db"]  # no journal left behind


@pytest.mark.parametrize("damage", [
    "UPDATE glossary SET canonical_properties = '{not json' WHERE id = 1",
    "UPDATE glossary SET usage_count = 'many' WHERE id = 1",
    "UPDATE glossary SET canonical_properties = '[1, 2]' WHERE id = 1",
    "UPDATE glossary SET term = CAST(X'FFFE' AS TEXT) WHERE id = 1",
    "UPDATE glossary_snapshots SET data = 'garbage'",
])
def test_a_damaged_glossary_is_one_line_exit_2_and_unchanged(glossary, capsys, damage):
    argv = ["glossary", str(glossary)] + (["--diff", "1", "1"] if "snapshots" in damage else [])
    refused_unchanged(glossary, capsys, damage, argv, "damaged")


def refused_unchanged(glossary: Path, capsys, sql: str, argv: list[str], needle: str) -> None:
    """Change ``glossary`` with ``sql``; ``argv`` is then one line, exit 2, and writes nothing."""
    db = sqlite3.connect(glossary)
    db.executescript(sql)
    db.commit()
    db.close()
    before = digest(glossary)
    code, _, err = run(capsys, argv)
    assert code == 2 and err.count("\n") == 0 and needle in err, err
    assert digest(glossary) == before


def test_a_review_is_all_or_nothing(glossary, capsys):
    code, out, _ = run(capsys, ["glossary", "review", str(glossary)])
    pending = [t["term"] for t in json.loads(out)["pending"]]
    assert pending
    before = digest(glossary)
    code, _, err = run(capsys, ["glossary", "review", str(glossary), "--approve", pending[0], "nosuch"])
    assert code == 2 and "nosuch" in err and "nothing was changed" in err
    assert digest(glossary) == before
    code, out, _ = run(capsys, ["glossary", "review", str(glossary), "--approve", pending[0]])
    assert code == 0 and pending[0] not in [t["term"] for t in json.loads(out)["pending"]]


def test_a_foreign_database_is_refused_as_a_glossary(tmp_path, capsys):
    other = tmp_path / "runs.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("CREATE TABLE runs (run_id TEXT)")
    db.commit()
    db.close()
    before = digest(other)
    for argv in (["glossary", str(other)], ["referential", "--headless", "--rounds", "2", "--glossary", str(other)]):
        code, _, err = run(capsys, argv)
        assert code == 2 and "not a glossary" in err
    assert digest(other) == before


@pytest.mark.parametrize("change", ["ALTER TABLE glossary DROP COLUMN canonical_properties",
                                    "DROP TABLE glossary; CREATE VIEW glossary AS SELECT 1 AS term"])
def test_a_glossary_without_its_columns_or_with_a_view_for_a_table_is_one_line(glossary, capsys, change):
    refused_unchanged(glossary, capsys, change, ["glossary", str(glossary)], "not a glossary")


COLUMNS = ["term", "canonical_properties", "definition_by_sender", "definition_by_receiver", "usage_count",
           "success_count", "success_rate", "stable_score", "last_used_round", "status", "heard_count"]
DAMAGE = ["NULL", "''", "'many'", "'{'", "'[]'", "'{\"a\": 1}'", "X'FFFE00'", "-1", "1e308", "'active'",
          "9223372036854775807"]


@pytest.mark.parametrize("seed", range(6))
def test_generated_damage_is_read_as_it_is_or_one_line_and_never_written(glossary, capsys, seed):
    import random

    rng = random.Random(seed)
    db = sqlite3.connect(glossary)
    for _ in range(rng.randint(1, 4)):
        col, value = rng.choice(COLUMNS), rng.choice(DAMAGE)
        try:
            db.execute(f"UPDATE glossary SET {col} = {value} WHERE id = {rng.randint(1, 3)}")
        except sqlite3.DatabaseError:
            pass  # a constraint refused it: the file stays valid there
    db.commit()
    db.close()
    before = digest(glossary)
    for argv in (["glossary", str(glossary)], ["glossary", "review", str(glossary)],
                 ["glossary", str(glossary), "--diff", "1", "1"]):
        code, _, err = run(capsys, argv)
        assert code in (0, 2) and "Traceback" not in err, (argv, err)
        assert code == 0 or err.count("\n") == 0, err
        assert digest(glossary) == before, argv


@pytest.mark.parametrize("target", ["foreign", "empty", "damaged", "old_format_bad_term", "not_sqlite"])
def test_a_review_that_cannot_apply_writes_not_a_byte(glossary, tmp_path, capsys, target):
    """--approve/--reject on a file that is not a glossary, an empty or damaged one, or a term that
    is not pending (in an old-format glossary, which a writable open would upgrade): one line,
    exit 2, and the file's bytes as they were — "(nothing was changed)" is true."""
    path = tmp_path / "t.db"
    if target == "foreign":
        sqlite_file(path, "CREATE TABLE runs (run_id TEXT)")
    elif target == "empty":
        path.write_bytes(b"")
    elif target == "not_sqlite":
        path.write_bytes(b"just some text, not a database\n" * 20)
    else:
        path.write_bytes(glossary.read_bytes())
        sqlite_file(path, "UPDATE glossary SET canonical_properties = 'not json'" if target == "damaged"
                    else "ALTER TABLE glossary DROP COLUMN heard_count")  # (a writable open would add it back)
    before = digest(path)
    code, _, err = run(capsys, ["glossary", "review", str(path), "--approve", "nosuch", "--reject", "other"])
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert digest(path) == before
    assert not any(p.name.startswith("t.db-") for p in tmp_path.iterdir())  # no journal left either
