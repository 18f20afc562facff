"""A recording is data, never instructions; a key in a group's URL reaches no file.

Recordings are files people share. A hostile one names a ``.py`` brain that plants a marker
when imported, a server of its own (a logging server here, on 127.0.0.1) and an environment
variable holding a secret: ``fork``, ``reask``, ``trace``, ``export`` and a replay's forks must
import nothing and send no credential to any server the user did not name."""

import json
import os
import sqlite3
import zlib
from pathlib import Path

import pytest

from mirofish.brains.testserver import TestServer
from mirofish.cli import main
from mirofish.config import redact_data, redact_text, redact_url

GROUP_KEY = "grp-canary-4d9b21e07c"
QUERY_KEY = "qry-canary-8e11f0c3aa"
ENV_SECRET = "aws-secret-CANARY-123"


def _blobs(path: Path) -> list[bytes]:
    data = path.read_bytes()
    out = [data]
    if data.startswith(b"SQLite format 3"):
        db = sqlite3.connect(path)
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            for row in db.execute(f"SELECT * FROM {table}"):
                for v in row:
                    if isinstance(v, bytes):
                        try:
                            out.append(zlib.decompress(v))
                        except zlib.error:
                            out.append(v)
                    elif isinstance(v, str):
                        out.append(v.encode())
        db.close()
    return out


def leaks(folder: Path, canaries: list[str]) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and any(c.encode() in b for b in _blobs(path) for c in canaries):
            found.append(path.name)
    return found


def test_redaction_removes_userinfo_and_key_like_query_values_everywhere():
    url = f"http://fishuser:{GROUP_KEY}@127.0.0.1:8080/v1?api_key={QUERY_KEY}&model=m&Access_Token=zz1"
    assert GROUP_KEY not in redact_url(url) and QUERY_KEY not in redact_url(url)
    assert "model=m" in redact_url(url) and "zz1" not in redact_url(url)
    assert redact_url("http://127.0.0.1/v1?q=1&page=2") == "http://127.0.0.1/v1?q=1&page=2"  # nothing to hide
    text = f'saw "{url}" and http://h/v1?token={QUERY_KEY}'
    assert GROUP_KEY not in redact_text(text) and QUERY_KEY not in redact_text(text)
    nested = {"a": [{"base_url": url}], "b": (f"x http://u:{GROUP_KEY}@h ",), "n": 3}
    assert GROUP_KEY not in json.dumps(redact_data(nested)) and redact_data(nested)["n"] == 3


def _mixed_config(tmp_path: Path, url: str) -> Path:
    cfg = tmp_path / "mixed.toml"
    cfg.write_text(f'[fish]\ncount = 12\n[[fish.groups]]\nname = "plain"\ncount = 6\n'
                   f'[[fish.groups]]\nname = "llm"\ncount = 6\nmodel = "fish-mini"\nbase_url = "{url}"\n')
    return cfg


def test_a_key_in_a_groups_url_reaches_no_recording_fork_window_table_or_sweep(tmp_path, capsys):
    with TestServer() as server:
        url = server.url.replace("http://", f"http://fishuser:{GROUP_KEY}@") + f"?api_key={QUERY_KEY}"
        cfg = _mixed_config(tmp_path, url)
        rec = tmp_path / "run.db"
        sweep = tmp_path / "s.toml"
        sweep.write_text(f'scene = "aquarium"\nlength = 8\nseeds = [1]\n[params]\n"fish.count" = [12]\n'
                         f'"fish.groups" = [[{{name = "plain", count = 6}}, {{name = "llm", count = 6, '
                         f'model = "fish-mini", base_url = "{url}"}}]]\n')
        runs = [
            ["live", "--headless", "--ticks", "40", "--config", str(cfg), "--record", str(rec)],
            ["fork", str(rec), "--at", "10", "--fish", "0", "--plan", "rest 5", "--ticks", "10",
             "--record", str(tmp_path / "fork.db")],
            ["export", str(rec), "--around", "20", "--radius", "10", "--out", str(tmp_path / "around.db")],
            ["export", str(rec), "--tables", str(tmp_path / "tables"), "--format", "csv"],
            ["trace", str(rec), "--fish", "8", "--from", "0", "--to", "5"],
            ["sweep", str(sweep), "--out", str(tmp_path / "sweep"), "--workers", "1", "--record"],
        ]
        printed = ""
        for argv in runs:
            code = main(argv)
            out = capsys.readouterr()
            printed += out.out + out.err
            assert code == 0, (argv[0], out.err[-400:])
        assert server.requests > 0  # the group's server was contacted through the URL with its key
    written = [p.name for p in tmp_path.rglob("*") if p.is_file()]
    assert {"run.db", "fork.db", "around.db", "runs.csv"} <= set(written), written
    assert any(p.startswith("decisions") for p in written)
    assert leaks(tmp_path, [GROUP_KEY, QUERY_KEY]) == ["mixed.toml", "s.toml"]  # only the user's own files
    assert GROUP_KEY not in printed and QUERY_KEY not in printed


def _edit_config(rec: Path, edit) -> None:
    """Edit a recording's config and seal it again, as a hostile file's author would."""
    from mirofish.observe.recording import content_digest

    db = sqlite3.connect(rec)
    cfg = json.loads(db.execute("SELECT value FROM header WHERE key = 'config'").fetchone()[0])
    edit(cfg)
    db.execute("UPDATE header SET value = ? WHERE key = 'config'", (json.dumps(cfg),))
    db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db)),))
    db.commit()
    db.close()


def _hostile_recording(tmp_path: Path, server_url: str) -> tuple[Path, Path]:
    """A recording of a user brain, then edited as a hostile file would be: its brain a planted
    ``.py`` that writes a marker on import, its server the logging one, its key variable one
    holding a secret."""
    brain = tmp_path / "planted.py"
    marker = tmp_path / "IMPORTED"
    brain.write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                     "class B:\n    def decide(self, ask):\n        return {'goal': 'rest', 'ticks': 3}\n")
    honest = tmp_path / "honest.py"
    honest.write_text("class B:\n    def decide(self, ask):\n        return {'goal': 'rest', 'ticks': 3}\n")
    rec = tmp_path / "shared.db"
    assert main(["live", "--headless", "--ticks", "30", "--fish", "8", "--brain", f"{honest}:B",
                 "--record", str(rec)]) == 0

    def edit(cfg):
        cfg["brain"]["kind"] = f"{brain}:B"
        cfg["brain"]["api_key_env"] = "MIROFISH_SECRET_FOR_TEST"
        cfg["brain"]["small"]["endpoints"] = [{"base_url": server_url, "model": "fish-mini",
                                               "api_key_env": "MIROFISH_SECRET_FOR_TEST", "max_concurrency": None}]

    _edit_config(rec, edit)
    return rec, marker


def test_a_recording_naming_a_py_brain_and_a_key_variable_imports_nothing_and_sends_no_key(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MIROFISH_SECRET_FOR_TEST", ENV_SECRET)
    with TestServer(fault="echo_auth") as server:
        rec, marker = _hostile_recording(tmp_path, server.url)
        capsys.readouterr()
        # fork: refused in one line, the planted file never imported
        code = main(["fork", str(rec), "--at", "5", "--fish", "1", "--plan", "rest 4", "--ticks", "5"])
        err = capsys.readouterr().err
        assert code == 2 and "never loads code" in err and "--brain" in err and len(err.strip().splitlines()) == 1
        # trace, export, replay: read it without the brain
        for argv in (["trace", str(rec), "--fish", "1", "--from", "0", "--to", "5"],
                     ["export", str(rec), "--tables", str(tmp_path / "t"), "--format", "csv"],
                     ["replay", str(rec), "--headless", "--verify"]):
            assert main(argv) == 0, capsys.readouterr().err
        # the user names the brain: the fork runs with theirs
        code = main(["fork", str(rec), "--at", "5", "--fish", "1", "--plan", "rest 4", "--ticks", "5",
                     "--brain", "instinct"])
        assert code == 0, capsys.readouterr().err
        # reask: never the recorded server
        code = main(["reask", str(rec), "--fish", "1", "--tick", "0"])
        assert code == 2
        assert server.requests == 0 and ENV_SECRET not in "".join(server.seen_auth)
    assert not marker.exists()


def test_a_model_recordings_fork_and_reask_send_the_key_only_to_the_server_the_user_names(
        tmp_path, capsys, monkeypatch):
    """The recording names a logging server and a secret variable: the fork answers from the
    recorded replies and asks no server; with the user's --base-url, that server gets the user's
    variable's key, the logging server nothing."""
    monkeypatch.setenv("MIROFISH_SECRET_FOR_TEST", ENV_SECRET)
    monkeypatch.setenv("MY_KEY", "sk-user-own-key-0001")
    with TestServer() as honest:
        rec = tmp_path / "m.db"
        assert main(["live", "--headless", "--ticks", "30", "--fish", "6", "--base-url", honest.url, "--model",
                     "fish-mini", "--record", str(rec)]) == 0
    with TestServer(fault="echo_auth") as logger, TestServer(fault="echo_auth") as mine:
        def edit(cfg):
            cfg["brain"]["api_key_env"] = "MIROFISH_SECRET_FOR_TEST"
            for ep in cfg["brain"]["small"]["endpoints"]:
                ep.update(base_url=logger.url, api_key_env="MIROFISH_SECRET_FOR_TEST")

        _edit_config(rec, edit)
        capsys.readouterr()
        code = main(["fork", str(rec), "--at", "10", "--fish", "1", "--plan", "rest 4", "--ticks", "20"])
        out = capsys.readouterr()
        assert code == 0, out.err
        summary = json.loads(out.out)
        assert summary["cache_hits"] + summary["cache_misses"] > 0
        assert logger.requests == 0  # the recorded server: never contacted
        code = main(["reask", str(rec), "--fish", "1", "--tick", "0"])
        assert code == 2 and "--base-url" in capsys.readouterr().err
        tick = _first_asked_tick(rec, 1)
        code = main(["reask", str(rec), "--fish", "1", "--tick", str(tick), "--base-url", mine.url,
                     "--api-key-env", "MY_KEY", "--json"])
        assert code == 0, capsys.readouterr().err
        code = main(["fork", str(rec), "--at", "10", "--fish", "1", "--plan", "rest 4", "--ticks", "40",
                     "--base-url", mine.url, "--api-key-env", "MY_KEY"])
        assert code == 0, capsys.readouterr().err
        assert logger.requests == 0 and mine.requests >= 1
        assert ENV_SECRET not in "".join(mine.seen_auth)
        assert any("sk-user-own-key-0001" in a for a in mine.seen_auth)


def _first_asked_tick(rec: Path, fish: int) -> int:
    from mirofish.observe.recording import Recording

    r = Recording(rec)
    try:
        return min(c["tick"] for c in r.model_calls(fish=fish) if c["kind"] == "decision")
    finally:
        r.close()


def test_trace_of_every_fish_of_a_mixed_tank_works_and_contacts_no_server(tmp_path, capsys):
    """The bundled mixed tank (instinct and a rule brain), and one with a model group whose
    server is gone by the time the recording is read."""
    root = Path(__file__).resolve().parents[1]
    rec = tmp_path / "mixed.db"
    assert main(["live", "--headless", "--ticks", "20", "--config", str(root / "examples" / "mixed.toml"),
                 "--record", str(rec)]) == 0
    for fish in (0, 45):  # one of each group
        assert main(["trace", str(rec), "--fish", str(fish), "--from", "0", "--to", "6", ]) == 0
        out = capsys.readouterr().out
        assert "t0" in out or "tick" in out
    with TestServer() as server:
        cfg = _mixed_config(tmp_path, server.url)
        rec2 = tmp_path / "m2.db"
        assert main(["live", "--headless", "--ticks", "20", "--config", str(cfg), "--record", str(rec2)]) == 0
        before = server.requests
        for fish in (0, 8):
            assert main(["trace", str(rec2), "--fish", str(fish), "--from", "0", "--to", "6"]) == 0
        assert server.requests == before
    capsys.readouterr()


@pytest.mark.parametrize("flag", [["--brain", "not a brain!"], ["--api-key-env", "9BAD"],
                                  ["--base-url", "ftp://x"]])
def test_bad_reader_flags_are_one_line(flag, tmp_path, capsys):
    rec = tmp_path / "r.db"
    assert main(["live", "--headless", "--ticks", "12", "--fish", "5", "--record", str(rec)]) == 0
    capsys.readouterr()
    code = main(["fork", str(rec), "--at", "2", "--fish", "1", "--plan", "rest 3", "--ticks", "3", *flag])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_prompt_file_a_recording_names_is_never_read_by_a_fork(tmp_path, capsys):
    """The campaign's probe: a recording edited to name a local file as its prompt. The fork
    (with the user's server) neither reads that file nor sends its text: a path the recording
    kept no text of is not opened; a FIFO there does not block."""
    notes = tmp_path / "victim_notes.toml"
    notes.write_text('[plan]\nsystem = """SECRET-NOTES-CANARY-77"""\n')
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with TestServer(keep_bodies=True) as server:
        rec = tmp_path / "m.db"
        assert main(["live", "--headless", "--ticks", "30", "--fish", "6", "--base-url", server.url, "--model",
                     "fish-mini", "--record", str(rec)]) == 0
        for named in (notes, fifo):
            _edit_config(rec, lambda cfg, named=named: cfg["brain"].__setitem__("prompt", str(named)))
            out = tmp_path / f"fork-{named.stem}.db"
            code = main(["fork", str(rec), "--at", "10", "--fish", "1", "--plan", "rest 4", "--ticks", "30",
                         "--base-url", server.url, "--record", str(out)])
            assert code == 0, capsys.readouterr().err
        sent = "".join(b.decode() if isinstance(b, bytes) else b for b in server.bodies)
    assert "SECRET-NOTES-CANARY-77" not in sent
    assert leaks(tmp_path, ["SECRET-NOTES-CANARY-77"]) == ["victim_notes.toml"]


def test_a_key_in_a_urls_fragment_or_code_parameter_is_redacted():
    assert "KEYFRAG" not in redact_url("http://h/v1#KEYFRAG") and "KEYFRAG" not in redact_text("x http://h/v1#KEYFRAG")
    assert "AUTHCODE" not in redact_url("http://h/v1?code=AUTHCODE") and "AUTHCODE" not in redact_text(
        "x http://h/v1?code=AUTHCODE y")
