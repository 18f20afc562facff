"""A key never shows: not in any file a command writes nor in any line it prints — with the key
in the environment, in the URL's userinfo, and a server that echoes the Authorization header."""

import base64
from pathlib import Path

import pytest

from mirofish.brains.testserver import TestServer
from mirofish.cli import main

KEY = "sk-canary-5e1f0a9d"
PASSWORD = "pw-canary-77c3"


def canaries() -> list[bytes]:
    out = [KEY.encode(), PASSWORD.encode()]
    for text in (f"fishuser:{PASSWORD}", KEY):
        out.append(base64.b64encode(text.encode()))
    return out


def scan(folder: Path, printed: str) -> list[str]:
    import zlib

    found = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            blobs = [data]
            if data.startswith(b"SQLite format 3"):  # look inside compressed chunks too
                import sqlite3

                db = sqlite3.connect(path)
                for table, col in (("chunks", "data"), ("calls", "data"), ("dicts", "data")):
                    try:
                        for (blob,) in db.execute(f"SELECT {col} FROM {table}"):
                            try:
                                blobs.append(zlib.decompress(blob))
                            except zlib.error:
                                blobs.append(blob)
                    except sqlite3.DatabaseError:
                        pass
                db.close()
            if any(c in b for b in blobs for c in canaries()):
                found.append(str(path))
    if any(c.decode() in printed for c in canaries()):
        found.append("<printed output>")
    return found


@pytest.mark.parametrize("where", ["environment", "url"])
def test_no_key_reaches_a_file_or_the_screen_even_when_the_server_echoes_it(where, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MIROFISH_CANARY_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the scenes' model agents read the default variable
    with TestServer(fault="echo_auth") as server:
        url = server.url if where == "environment" else server.url.replace("http://", f"http://fishuser:{PASSWORD}@")
        key_env = ["--set", 'brain.api_key_env="MIROFISH_CANARY_KEY"']
        rec = tmp_path / "run.db"
        runs = [
            ["live", "--headless", "--ticks", "60", "--fish", "8", "--base-url", url, "--model", "m", "--record",
             str(rec), *key_env],
            ["trace", str(rec), "--fish", "1", "--from", "0", "--to", "5"],
            ["export", str(rec), "--tables", str(tmp_path / "tables"), "--format", "csv"],
            ["report", str(rec), "--fish", "1", "--png", str(tmp_path / "r.png")],
            ["referential", "--headless", "--rounds", "4", "--agents", "llm", "--base-url", url, "--model", "m",
             "--log", str(tmp_path / "rounds.jsonl")],
            ["negotiation", "--headless", "--sessions", "2", "--agents", "llm", "--base-url", url, "--model", "m",
             "--db", str(tmp_path / "neg.db")],
        ]
        printed = []
        for argv in runs:
            code = main(argv)
            out = capsys.readouterr()
            printed.append(out.out + out.err)
            assert code == 0, (argv[0], out.err[-300:])
        assert server.requests > 10
        echoed = server.seen_auth
    assert any(echoed)  # the credentials reached the server (and were echoed back) …
    assert scan(tmp_path, "".join(printed)) == []  # … and nowhere else


def test_keys_in_unparseable_urls_sweep_files_and_cluster_addresses_are_never_printed(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(f'scene = "aquarium"\nlength = 5\nseeds = [1]\n[params]\n"brain.small.endpoints" = '
                    f'[[{{base_url = "http://fishuser:{PASSWORD}@[::1/v1", model = "m"}}]]\n"brain.kind" = ["llm"]\n')
    runs = [["referential", "--headless", "--rounds", "2", "--agents", "llm", "--base-url",
             f"http://fishuser:{PASSWORD}@[::1/v1", "--model", "m"],
            ["sweep", str(spec), "--dry-run"],
            ["sweep", str(spec), "--cluster", f"tcp://fishuser:{PASSWORD}@127.0.0.1:9", "--out", str(tmp_path / "o")],
            ["live", "--headless", "--ticks", "2", "--base-url", f"http://fishuser:{PASSWORD}@[::1/v1", "--model", "m"]]
    printed = ""
    for argv in runs:
        main(argv)
        out = capsys.readouterr()
        printed += out.out + out.err
    assert printed and PASSWORD not in printed


def test_a_key_in_a_sweep_files_url_reaches_no_table_csv_or_parquet(tmp_path, capsys):
    """A sweep parameter that is an endpoint with a key in its URL: the runs run against it, and
    runs.sqlite (rows and the spec kept for resuming), runs.csv (its command column too),
    settings.csv and runs.parquet hold it redacted."""
    with TestServer() as server:
        url = server.url.replace("http://", f"http://fishuser:{PASSWORD}@")
        spec = tmp_path / "s.toml"
        spec.write_text(f'scene = "aquarium"\nlength = 6\nseeds = [1, 2]\n[params]\n"brain.small.endpoints" = '
                        f'[[{{base_url = "{url}", model = "fish-mini"}}]]\n"brain.kind" = ["llm"]\n'
                        '"fish.count" = [10]\n')
        out = tmp_path / "out"
        code = main(["sweep", str(spec), "--out", str(out), "--workers", "1"])
        printed = capsys.readouterr()
    assert code == 0, printed.err
    made = {p.name for p in out.iterdir()}
    assert {"runs.sqlite", "runs.csv", "settings.csv", "runs.parquet"} <= made, made
    runs_csv = (out / "runs.csv").read_text()
    assert "***@127.0.0.1" in runs_csv and ",ok," in runs_csv.replace('"', "")  # they ran, against the server
    assert scan(out, printed.out + printed.err) == []
