"""The model transport's pure parts and the breaker, tested without a server; and the
fallback reason recorded per decision, tested against the real loopback test server."""

import asyncio
import importlib

import numpy as np
import openai
import pytest

from mirofish.brains.base import STATUS_NAMES, status_code, status_name
from mirofish.brains.breaker import Breaker
from mirofish.brains.transport import Failure, backoff_delay, classify_error, parse_completion

httpx = importlib.import_module(openai.APIStatusError.__init__.__globals__["httpx2"].__name__
                                if "httpx2" in openai.APIStatusError.__init__.__globals__ else "httpx")


def status_error(code: int, body: str = "", retry_after: str | None = None) -> openai.APIStatusError:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    response = httpx.Response(code, headers=headers, request=httpx.Request("POST", "http://127.0.0.1/v1"))
    return openai.APIStatusError(body or "error", response=response, body=body or None)


def test_errors_are_classified_for_retry_and_wait():
    c = classify_error(status_error(503, retry_after="7"), "json_schema")
    assert (c.reason, c.retry, c.wait) == ("http_503", True, 7.0)
    c = classify_error(status_error(429), "plain")
    assert (c.reason, c.retry, c.wait) == ("rate_limited", True, None)
    assert not classify_error(status_error(401), "plain").retry
    assert classify_error(status_error(500, "response_format json_schema unsupported"),
                          "json_schema").format_unsupported
    assert not classify_error(status_error(500, "json_schema"), "plain").format_unsupported  # nothing left to drop
    assert classify_error(TimeoutError(), "plain").reason == "timeout"
    assert classify_error(Failure("reply_too_large"), "plain") .reason == "reply_too_large"
    assert classify_error(ValueError("x"), "plain").reason == "error_ValueError"


def test_backoff_doubles_with_jitter_is_capped_and_honours_retry_after_up_to_its_cap():
    assert backoff_delay(0, 0.2, 4.0, 0.0) == pytest.approx(0.2)
    assert backoff_delay(2, 0.2, 4.0, 0.5) == pytest.approx(0.8 * 1.5)
    assert backoff_delay(10, 0.2, 4.0, 0.9) == 4.0  # our own cap
    assert backoff_delay(0, 0.2, 4.0, 0.0, retry_after=9.0) == 9.0  # the server's wait, beyond our cap
    assert backoff_delay(0, 0.2, 4.0, 0.0, retry_after=100000.0, retry_after_cap_s=30.0) == 30.0


def test_completion_bodies_are_read_tolerantly_and_refused_when_not_a_completion():
    body = b'{"choices": [{"message": {"content": "{\\"goal\\": \\"rest\\"}"}}], "usage": {"prompt_tokens": 9}}'
    assert parse_completion(body) == ('{"goal": "rest"}', 9, 0)
    assert parse_completion(b'{"choices": []}') == (None, 0, 0)
    for bad in (b"not json", b"[1, 2]", b'{"choices": [{"message": {"content": 5}}]}'):
        with pytest.raises(Failure, match="reply_not_completion"):
            parse_completion(bad)


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def run(coro):
    return asyncio.run(coro)


async def ok():
    return "answer"


async def failing(reason="timeout", server=True):
    raise Failure(reason, server)


def test_breaker_opens_probes_doubles_and_closes():
    clock = Clock()
    b = Breaker(failures=2, cooldown_s=5.0, clock=clock)
    for _ in range(2):
        with pytest.raises(Failure):
            run(b.call(failing()))
    assert b.state() == "open"
    with pytest.raises(Failure, match="breaker_open"):
        run(b.call(ok()))  # answered at once
    clock.t += 5.0
    assert b.state() == "half_open"
    with pytest.raises(Failure, match="timeout"):
        run(b.call(failing()))  # the probe fails: open again for 10 s
    assert b.backoff == 2 and b.state() == "open"
    clock.t += 9.0
    assert b.state() == "open"
    clock.t += 1.0
    assert run(b.call(ok())) == "answer" and b.state() == "closed" and b.backoff == 1


def test_failures_that_are_not_the_servers_do_not_open_the_breaker():
    b = Breaker(failures=1, cooldown_s=5.0, clock=Clock())
    with pytest.raises(Failure):
        run(b.call(failing("reply_schema", server=False)))  # a reply the fish can't use
    assert b.state() == "closed"


def test_fallback_reasons_map_to_recorded_status_codes():
    assert status_name(status_code("tick_timeout")) == "tick_timeout"
    assert status_name(status_code("http_503")) == "server_error"
    assert status_name(status_code("reply_invalid_json")) == "reply_malformed"
    assert status_name(status_code("school_without_fish")) == "illegal_plan"
    assert status_name(status_code("breaker_open")) == "breaker_open"
    assert status_code("ok") == 0 and len(set(STATUS_NAMES)) == len(STATUS_NAMES)


def test_each_fallbacks_reason_is_recorded_and_shown_by_trace(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from mirofish.brains.testserver import TestServer
    from mirofish.observe.recording import Recording

    root = Path(__file__).resolve().parent.parent
    path = tmp_path / "garbage.db"
    with TestServer(fault="garbage", fault_every=2) as server:
        out = subprocess.run([sys.executable, "run.py", "live", "--headless", "--ticks", "20", "--fish", "6",
                              "--brain", "llm", "--base-url", server.url, "--model", "m", "--record", str(path)],
                             cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rec = Recording(path)
    statuses = np.concatenate([rec.decisions_at(t).status for t in range(20) if rec.decisions_at(t) is not None])
    assert status_code("reply_malformed") in statuses.tolist()  # garbage replies: recorded as such
    assert 0 in statuses.tolist()  # and the good ones as model decisions
    rec.close()
    fish = next(f for t in range(20) for f, s in zip(Recording(path).decisions_at(t).fish,
                                                      Recording(path).decisions_at(t).status) if s)
    trace = subprocess.run([sys.executable, "run.py", "trace", str(path), "--fish", str(fish), "--from", "0",
                            "--to", "20"], cwd=root, capture_output=True, text=True, timeout=120)
    assert "[fallback: reply_malformed]" in trace.stdout
