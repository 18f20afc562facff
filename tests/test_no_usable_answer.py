"""A server that gives no usable answer is said so, truly (fault campaign 3, section A).

Every server here is a real HTTP server on 127.0.0.1: the bundled test server with its
transport faults, or :class:`Misbehaving` below (a connection closed mid-reply, a body that is
no JSON, a reply without a message, a ``usage`` block that cannot be true) — nothing patches
the client. Each test asserts what a user sees: the exit code, the one line, the figures.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mirofish.brains.testserver import TestServer
from mirofish.cli import main

ROOT = Path(__file__).resolve().parent.parent


class Misbehaving:
    """An OpenAI-compatible server answering every chat request as ``mode`` says: ``midclose``
    (half the body, then the connection is shut), ``hang`` (no answer), ``badjson`` (a body cut inside its JSON),
    ``nullcontent`` (a completion whose message is null), ``ok`` (a completion filling the
    asked JSON schema, ``usage`` as given). ``warm``: the first so many requests answer ``ok``."""

    def __init__(self, mode: str, usage: Any = None, warm: int = 0):
        self.mode, self.usage, self.warm, self.requests = mode, usage, warm, 0
        self.stopping = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, data: bytes, length: int | None = None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def do_GET(self) -> None:
                self._send(json.dumps({"object": "list", "data": [{"id": "x", "object": "model"}]}).encode())

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                owner.requests += 1
                mode = "ok" if owner.requests <= owner.warm else owner.mode
                reply = {"id": "c", "object": "chat.completion", "created": 0, "model": "x",
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": fill(body)}}],
                         "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
                if owner.usage is not None:
                    reply["usage"] = owner.usage
                if mode == "nullcontent":
                    reply["choices"][0]["message"]["content"] = None
                data = json.dumps(reply).encode()
                if mode == "hang":  # never answers (until the server stops)
                    owner.stopping.wait(60)
                elif mode == "badjson":
                    self._send(b'{"id": "x", "choices": [ {"message": ')
                elif mode == "midclose":
                    self._send(data[: len(data) // 2], len(data))
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                else:
                    self._send(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> Misbehaving:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def fill(body: dict[str, Any]) -> str:
    """A reply filling the request's JSON schema: a plan (rest) for a fish, an answer for a question."""
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
    out: dict[str, Any] = {}
    for key, spec in schema.get("properties", {}).items():
        if spec.get("enum"):
            out[key] = "rest" if "rest" in spec["enum"] else spec["enum"][0]
        elif spec.get("type") in ("integer", "number"):
            out[key] = max(spec.get("minimum", 1), 1) if key != "until" else 100
        elif spec.get("type") == "string":
            out[key] = "resting"
    return json.dumps(out or {"action": "rest", "thought": "resting"})


def cli(*argv: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "run.py", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


def said(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("mirofish")]


@pytest.fixture(scope="module")
def model_run(tmp_path_factory) -> dict[str, Path]:
    """A small model run against the test server (5 fish, 30 ticks) and one question."""
    d = tmp_path_factory.mktemp("nousable")
    rec = d / "m.mirofish"
    with TestServer() as server:
        assert main(["live", "--headless", "--ticks", "30", "--fish", "5", "--seed", "3", "--base-url", server.url,
                     "--model", "fish-mini", "--record", str(rec)]) == 0
    q = d / "q.toml"
    q.write_text('[[question]]\nid = "energy"\nkind = "number"\ntext = "How much energy do you have left?"\n'
                 'min = 0\nmax = 100\ntemplate = "energy"\n')
    return {"rec": rec, "q": q, "dir": d}


def a_decision(rec: Path) -> tuple[int, int]:
    from mirofish.observe.recording import Recording

    r = Recording(rec)
    try:
        c = next(c for c in r.model_calls() if c["kind"] == "decision" and c["read"] == "ok")
    finally:
        r.close()
    return int(c["fish"]), int(c["tick"])


# ---------------------------------------------------------------- A3: survey against a hung server


def test_survey_against_a_hung_server_says_it_waits_and_counts_what_was_sent(model_run):
    """--timeout bounds each answer; a line within seconds says the survey waits for the server; the
    requests counted sent are the ones the server received, each a timeout (none 'connection')."""
    with TestServer(fault="hang") as server:
        done = cli("survey", str(model_run["rec"]), "--at", "10", "--fish", "0,1", "--questions",
                   str(model_run["q"]), "--base-url", server.url, "--timeout", "3.5", "--json")
        received = server.requests
    lines = said(done.stderr)
    assert done.returncode == 2, done.stderr
    assert any("waiting for the server" in ln and "no answer after 3 s" in ln for ln in lines), done.stderr
    assert lines[-1].endswith("answered none of the model fish's questions (timeout 2)"), done.stderr
    s = json.loads(done.stdout)
    assert s["requests_sent"] == received == 2 and s["reasons"] == {"timeout": 2}


# ---------------------------------------------------------------- A4: no usable completion = a dead server


@pytest.mark.parametrize("mode, reason", [("midclose", "connection_closed"),
                                          ("badjson", "reply_not_completion"),
                                          ("nullcontent", "reply_empty")])
def test_reask_of_a_server_that_gave_no_usable_completion_is_one_line_and_exit_2(model_run, mode, reason):
    fish, tick = a_decision(model_run["rec"])
    with Misbehaving(mode) as server:
        done = cli("reask", str(model_run["rec"]), "--fish", str(fish), "--tick", str(tick), "--base-url", server.url,
                   "--n", "2", "--timeout", "4")
    assert done.returncode == 2, done.stdout + done.stderr
    assert said(done.stderr) == [f"mirofish reask: the server at {server.url} answered none of the 2 request(s) "
                                 f"({reason} 2)"], done.stderr
    if mode == "midclose":  # a connection that broke mid-reply is a connection error: retried (it was not)
        assert server.requests > 2, server.requests


@pytest.mark.parametrize("mode, reason", [("midclose", "connection_closed"),
                                          ("badjson", "reply_not_completion"), ("nullcontent", "no_content")])
def test_survey_of_a_server_that_gave_no_usable_completion_is_one_line_and_exit_2(model_run, mode, reason):
    with Misbehaving(mode) as server:
        done = cli("survey", str(model_run["rec"]), "--at", "10", "--questions", str(model_run["q"]),
                   "--base-url", server.url, "--timeout", "4", "--json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert said(done.stderr) == [f"mirofish survey: the server at {server.url} answered none of the model fish's "
                                 f"questions ({reason} 5)"], done.stderr
    assert json.loads(done.stdout)["reasons"] == {reason: 5}


# ---------------------------------------------------------------- A5: a fork's misses name the server's reason


def test_a_forks_cache_misses_against_a_failing_server_name_its_reason(model_run, tmp_path):
    fork = tmp_path / "fork.mirofish"
    with TestServer(fault="500") as server:
        done = cli("fork", str(model_run["rec"]), "--at", "10", "--fish", "0", "--plan", "rest", "--ticks", "20",
                   "--base-url", server.url, "--model", "fish-mini", "--record", str(fork))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    misses = out["fallbacks"]["cache_miss"]
    assert misses > 0 and out["cache_miss_reasons"] == {"http_500": misses}, out
    trace = cli("trace", "--fish", "0", "--from", "10", "--to", "30", str(fork))
    assert trace.returncode == 0, trace.stderr
    decided = [ln for ln in trace.stdout.splitlines() if "[fallback: cache_miss" in ln]
    assert decided and all("[fallback: cache_miss (server: http_500)]" in ln for ln in decided), trace.stdout


# ---------------------------------------------------------------- A6: export --otel says what happened


def test_export_otel_of_a_run_whose_fish_got_no_reply_says_so_truly(tmp_path):
    """The warm-up spent the whole token budget: every decision fell back (budget_exhausted), no exchange
    was kept — the fish did ask; the line says why there is nothing to export, not 'no fish asked'."""
    rec = tmp_path / "b.mirofish"
    with TestServer() as server:
        assert cli("live", "--headless", "--ticks", "12", "--fish", "3", "--base-url", server.url, "--model",
                   "fish-mini", "--budget-tokens", "1", "--record", str(rec)).returncode == 0
    done = cli("export", "--otel", str(tmp_path / "o.json"), str(rec))
    assert done.returncode == 2 and len(said(done.stderr)) == 1, done.stderr
    assert "no fish asked" not in done.stderr and "times there (budget_exhausted " \
        in done.stderr, done.stderr


# ---------------------------------------------------------------- A7: referential whose model played nothing


def test_referential_whose_model_played_no_turn_is_one_line_and_exit_2():
    with TestServer(fault="500") as server:
        done = cli("referential", "--headless", "--rounds", "2", "--agents", "llm", "--base-url", server.url,
                   "--model", "fish-mini", "--timeout", "2")
    assert done.returncode == 2, done.stderr
    lines = said(done.stderr)
    assert len(lines) == 1 and "played none of 4 turns" in lines[0] and "measure no game" in lines[0], done.stderr
    assert json.loads(done.stdout)["model_made"]["rounds"] == 2  # the counts still printed
    with TestServer() as server:  # a model that plays: exit 0, no line
        ok = cli("referential", "--headless", "--rounds", "2", "--agents", "llm", "--base-url", server.url,
                 "--model", "fish-mini", "--timeout", "5")
    assert ok.returncode == 0 and not said(ok.stderr), ok.stderr


# ---------------------------------------------------------------- A13: a usage block that cannot be true


@pytest.mark.parametrize("usage", [{"prompt_tokens": "ten", "completion_tokens": [1], "total_tokens": {}},
                                   "garbage",
                                   {"prompt_tokens": 1e300, "completion_tokens": 99999999999999999999}])
def test_a_usage_block_that_cannot_be_true_is_ignored_and_said_once(usage):
    with Misbehaving("ok", usage=usage) as server:
        done = cli("live", "--headless", "--ticks", "20", "--fish", "3", "--brain", "llm", "--base-url", server.url,
                   "--model", "x", "--budget-tokens", "1000")
    assert done.returncode == 0, done.stderr
    warned = [ln for ln in said(done.stderr) if "usage" in ln]
    assert len(warned) == 1 and "cannot be true" in warned[0], done.stderr
    assert "stopped answering" not in done.stderr
    brain = json.loads(done.stdout.strip().splitlines()[-1])["brain"]
    assert brain["model_decisions"] > 0 and not brain["fallbacks"], brain  # every reply used, no budget drained
    assert brain["usage_ignored"] == brain["requests_sent"] and brain["tokens"]["prompt"] == 0


# ---------------------------------------------------------------- B: a warm-up without a usable answer


def test_a_warm_up_without_a_usable_answer_is_not_said_answered():
    with Misbehaving("nullcontent") as server:
        done = cli("live", "--headless", "--ticks", "5", "--fish", "2", "--brain", "llm", "--base-url", server.url,
                   "--model", "x")
    assert done.returncode == 0, done.stderr
    assert re.search(r"replied to its warm-up .* but gave no usable answer \(reply_empty: no message\)", done.stderr)
    assert " answered in " not in done.stderr, done.stderr


def test_a_breaker_opened_by_ticks_that_gave_up_says_ticks_not_requests():
    """A good warm-up, then a server that never answers its one decision request: each lockstep tick
    gives up on it and counts one failure; the line says ticks, not "5 in a row" requests."""
    with Misbehaving("hang", warm=1) as server:
        done = cli("live", "--headless", "--ticks", "300", "--fish", "3", "--brain", "llm", "--base-url", server.url,
                   "--model", "x", "--set", "brain.timeout_s=0.2", "--set", "brain.request_timeout_s=30")
        sent = server.requests
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in said(done.stderr) if "stopped answering" in ln]
    assert sent == 2 and len(lines) == 1, done.stderr
    assert "(5 ticks in a row gave up waiting for its answer, tick_timeout)" in lines[0], done.stderr


# ---------------------------------------------------------------- a damaged reply cache is named, not silent


def test_a_forks_damaged_reply_cache_is_named_in_one_line_not_read_as_silent_misses(model_run, tmp_path):
    """A fork made again from ``--reply-cache DIR`` (no server) reads the replies a first fork kept
    there. Entries damaged since (not JSON) are misses, as before — but the first is named in one
    line on stderr and the summary counts them (``cache_damaged``); before, they read as plain
    cache misses, the fork's fish silently falling back."""
    cache = tmp_path / "cache"
    fork = ["fork", str(model_run["rec"]), "--at", "10", "--fish", "0", "--plan", "rest", "--ticks", "20",
            "--reply-cache", str(cache)]
    with TestServer() as server:
        first = cli(*fork, "--base-url", server.url, "--model", "fish-mini")
    assert first.returncode == 0, first.stderr
    whole = cli(*fork)  # the cache as the first fork left it: every request answered from it
    assert whole.returncode == 0 and not said(whole.stderr), whole.stderr
    assert json.loads(whole.stdout.strip().splitlines()[-1])["cache_misses"] == 0
    entries = sorted(cache.glob("*/*.json"))
    for entry in entries:
        entry.write_text('{"reply": "cut sho')
    done = cli(*fork)
    assert done.returncode == 0, done.stderr
    lines = said(done.stderr)
    assert len(lines) == 1 and "reply cache entry" in lines[0] and "is damaged (not JSON)" in lines[0], lines
    assert any(str(e) in lines[0] for e in entries), lines
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # (after the first miss the fish swim otherwise: later requests are not in the cache at all)
    assert 0 < out["cache_damaged"] <= out["cache_misses"], out


def test_report_shows_a_cache_misss_server_reason_as_the_forks_summary_does(model_run, tmp_path):
    """report's "fallback because" gives a cache_miss's server reason beside it, as the fork's
    summary (cache_miss_reasons) and trace do (before: "cache_miss 3" alone); a miss no server was
    asked for says so."""
    fork = tmp_path / "fork.mirofish"
    args = ["fork", str(model_run["rec"]), "--at", "10", "--fish", "0", "--plan", "rest", "--ticks", "20"]
    with TestServer(fault="500") as server:
        done = cli(*args, "--base-url", server.url, "--model", "fish-mini", "--record", str(fork))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["cache_miss_reasons"] == {"http_500": 5}
    offline = tmp_path / "offline.mirofish"
    assert cli(*args, "--record", str(offline)).returncode == 0
    seen = {}
    for rec, says in ((fork, "server: http_500"), (offline, "no server asked")):
        for fish in range(5):
            report = cli("report", str(rec), "--fish", str(fish))
            assert report.returncode == 0, report.stderr
            line = next(ln for ln in report.stdout.splitlines() if "decisions:" in ln)
            if "cache_miss" in line:
                n = re.search(r"cache_miss (\d+) \(([^)]*)\)", line)
                assert n and n.group(2) == f"{says} {n.group(1)}", line
                seen[rec] = seen.get(rec, 0) + int(n.group(1))
    assert seen == {fork: 5, offline: 5}, seen
