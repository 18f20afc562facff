"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests, demos and benchmarks.

It speaks ``GET /v1/models``, ``POST /v1/chat/completions`` and ``POST /v1/embeddings``
like Ollama, vLLM or llama.cpp's server do, and answers fish prompts with a scripted,
deterministic policy read from the 5×5 view in the prompt (eat food beside you, else head
for food, else for other fish, else a legal move picked by a hash of the prompt). Usage is
reported with :func:`~mirofish.brains.prompt.estimate_tokens` (where ``MIROFISH_TOKENIZER`` names a
tokenizer that cannot count: with the tokenizer-free estimate, and one line on standard error).

Fault modes make failures reproducible: ``slow`` (delay), ``garbage`` (prose, no JSON),
``fenced`` (JSON in a code fence inside prose — must still parse), ``json_array`` (the
reply wrapped in a JSON array: JSON, but no object — must not parse), ``illegal`` (an action
the view forbids), ``429`` (rate limited, with Retry-After), ``500``, ``reject_json_schema``
(HTTP 500 for ``response_format`` json_schema, as llama.cpp's server does), servers that
misbehave at the transport level — ``hang`` (reads the request, never answers), ``drip``
(a valid reply, one byte every ``delay`` seconds), ``endless`` (a chunked body that never
ends), ``reset`` (closes the connection without a word), ``not_http`` (answers with bytes
that are not HTTP), ``huge_body`` (a 50 MB reply), ``retry_after_forever`` (429 with
``Retry-After: 100000``), ``rule_breaker`` (a referential sender's first message is too long
and spells an attribute out, as a small model's is, until the prompt corrects it) — and
stopping the server outright, and ``echo_auth`` (every reply echoes the request's
Authorization header: the key must not reach a recording, a log or the screen). ``fault_every``
applies the fault to every k-th request only.

Pacing like a real local server: ``rate`` (completions per second, served one after another
as llama.cpp or Ollama do on a CPU) and ``latency`` (seconds each completion takes on top);
a completion whose client hung up is still computed and counted (``completions``), as on
llama.cpp, which cannot cancel one it has started. ``slots`` makes ``GET /props`` say
``total_slots`` as llama.cpp's server does. ``strict`` refuses (HTTP 400) a json_schema
format that breaks OpenAI's strict rules (every property required, no additional ones) and
fills every key of its plan replies; the fault ``schema_breaker`` answers a goal outside the
schema's enum; ``lax_grammar`` answers as a grammar without numeric bounds does (llama.cpp's:
every key of the plan filled, the fields the goal does not read with any number, ``ticks``
often past its maximum) — the goal stays the scripted, legal one. ``policy="forager"``
answers forage to every plan prompt, as a tiny model does.
Fish prompts in plan mode get a scripted plan (forage when hungry with food in view, school
with fish in view, rest when exhausted, else explore the most open way).
``prefix_cache`` reports ``usage.prompt_tokens_details.cached_tokens`` as OpenAI and vLLM do:
the tokens a prompt cache per slot would serve (the longest common prefix with a slot's last
prompt, :meth:`TestServer.cached_prefix`).
``policy="contrarian"``: scripted plans whose thoughts say the opposite (:func:`contrary`).
``policy="newest"``: the last plan the request's schema offers, when it reads no parameter (a
plan type added for one run comes last: tests/test_registry.py).
A request for the model ``<name>-forager`` or ``<name>-contrarian`` gets that policy whatever
the server's (two "models" to compare, e.g. with ``reask --model``). ``keep_bodies`` keeps
every chat-completion request body as received whole (``bodies``; ``--log FILE`` appends each as
one line: a client that closed mid-body sent no request), for checking that a recording holds
what the server was sent.

    python -m mirofish.brains.testserver --port 8765 [--fault slow --delay 0.3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .prompt import _TOKEN, TokenizerError, tokenizer
from .testreplies import (
    FAULTS,
    POLICIES,
    _embedding,
    _is_survey,
    _plan_reply,
    _scene_reply,
    _tell,
    count_tokens,
    illegal_action,
    scripted_reply,
    survey_reply,
)
from .testreplies import strict_schema_errors as strict_schema_errors  # (re-exported: tests check schemas with it)


class _Handler(BaseHTTPRequestHandler):
    """One request to a :class:`TestServer` (its settings and counters are ``self.owner``)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

    @property
    def owner(self) -> TestServer:
        owner: TestServer = self.server.owner  # type: ignore[attr-defined]
        return owner

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        with self.owner._lock:
            self.owner._connections.add(self.connection)

    def finish(self) -> None:
        with self.owner._lock:
            self.owner._connections.discard(self.connection)
        super().finish()

    def _send(self, status: int, body: dict[str, Any] | str, headers: dict[str, Any] | None = None) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        with self.owner._lock:
            self.owner.by_status[status] = self.owner.by_status.get(status, 0) + 1

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/props" and self.owner.slots:  # as llama.cpp's server says it
            self._send(200, {"total_slots": self.owner.slots, "model_path": self.owner.model})
        elif self.path.rstrip("/").endswith("/models"):
            # its model, each policy's, and "m" (the tests' shorthand): any other name it answers too,
            # as llama-cpp-python does, but does not list
            names = [self.owner.model] + [f"{self.owner.model}-{p}" for p in POLICIES[1:]] + ["m"]
            self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "mirofish"}
                                                        for m in names]})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        chat = self.path.rstrip("/").endswith("/chat/completions")
        if chat and len(raw) == length:  # (a client that gave up mid-body sent no request: not kept)
            self._keep(raw)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "body is not JSON"}})
            return
        with self.owner._lock:
            self.owner.requests += 1
            n = self.owner.requests
            self.owner.seen_auth.add(self.headers.get("Authorization", ""))
        if self.path.rstrip("/").endswith("/embeddings"):
            if self.owner.fault == "no_embeddings":  # a chat server that serves no embeddings (llama.cpp's 500)
                self._send(500, {"error": {"message": "this server does not serve embeddings"}})
            else:
                self._embeddings(body)
        elif not chat:
            self._send(404, {"error": {"message": "not found"}})
        else:
            self.owner.pace()
            fault = self.owner.fault if n % max(1, self.owner.fault_every) == 0 else "none"
            if not self._fails(fault):
                self._chat(n, body, fault)

    def _keep(self, raw: bytes) -> None:
        """The request body as it arrived (``keep_bodies``, ``--log``)."""
        if not (self.owner.keep_bodies or self.owner.log):
            return
        with self.owner._lock:
            if self.owner.keep_bodies:
                self.owner.bodies.append(raw)
            if self.owner.log:
                with open(self.owner.log, "ab") as fh:
                    fh.write(raw.replace(b"\n", b" ") + b"\n")

    def _embeddings(self, body: dict[str, Any]) -> None:
        with self.owner._lock:
            self.owner.embeddings += 1
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
        self._send(200, {"object": "list", "model": self.owner.model, "data": [
            {"object": "embedding", "index": i, "embedding": _embedding(t)} for i, t in enumerate(inputs)],
            "usage": {"prompt_tokens": sum(count_tokens(t) for t in inputs),
                      "total_tokens": sum(count_tokens(t) for t in inputs)}})

    def _fails(self, fault: str) -> bool:
        """The faults that answer no completion (True: answered, or not at all); "slow" waits first."""
        if fault in ("hang", "drip", "endless", "reset", "not_http", "huge_body"):
            self._misbehave(fault)
            return True
        if fault == "retry_after_forever":
            self._send(429, {"error": {"message": "come back much later"}}, {"Retry-After": "100000"})
            return True
        if fault == "slow":
            time.sleep(self.owner.delay)
        if fault == "429":
            self._send(429, {"error": {"message": "rate limited", "type": "rate_limit"}}, {"Retry-After": "0.05"})
            return True
        if fault == "500":
            self._send(500, {"error": {"message": "internal error"}})
            return True
        return False

    def _schema(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        """(the JSON schema asked for, refused): a server without json_schema, or a strict one
        that refuses a schema its strict mode cannot take, answers as OpenAI does."""
        fmt = (body.get("response_format") or {}).get("type")
        if fmt != "json_schema":
            return None, False
        if self.owner.fault == "reject_json_schema":
            self._send(500, {"error": {"message": "response_format json_schema is not supported"}})
            return None, True
        spec = body["response_format"].get("json_schema") or {}
        errors = strict_schema_errors(spec.get("schema")) if self.owner.strict and spec.get("strict") else []
        if errors:
            with self.owner._lock:
                self.owner.schema_errors += errors
            self._send(400, {"error": {"message": f"Invalid schema for response_format '{spec.get('name')}': "
                                                  f"{errors[0]}", "type": "invalid_request_error"}})
            return None, True
        return spec.get("schema"), False

    def _chat(self, n: int, body: dict[str, Any], fault: str) -> None:
        schema, refused = self._schema(body)
        if refused:
            return
        with self.owner._lock:
            self.owner.completions += 1
            cold = self.owner.cold_s if self.owner.completions == 1 else 0.0
        if cold:
            time.sleep(cold)
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages") or [])
        asked = schema or (body.get("response_format") or {}).get("schema")  # (json_object carries it too)
        if _is_survey(asked):  # a survey's question (session/survey.py)
            self._complete(n, prompt, survey_reply(prompt, asked) if fault != "garbage" else "Blub.")
            return
        content = _scene_reply(prompt, fault, self._policy(body))
        if content is None:
            content = self._fish_reply(body, prompt, schema, fault)
        self._complete(n, prompt, content)

    def _policy(self, body: dict[str, Any]) -> str:
        """The server's policy, or the one the request's model name ends with (``m-copycat``)."""
        for name in POLICIES:
            if str(body.get("model", "")).endswith(f"-{name}"):
                return name
        return self.owner.policy

    def _fish_reply(self, body: dict[str, Any], prompt: str, schema: dict[str, Any] | None, fault: str) -> str:
        """A fish's plan or action (as the test policies and faults answer), with a summary when asked."""
        policy = self._policy(body)
        if "Plans that fit now" in prompt:
            reply = _plan_reply(prompt, policy, schema if self.owner.strict else None, fault, schema)
        else:
            action, thought = scripted_reply(prompt)
            if fault == "illegal":
                action = illegal_action(prompt) or action
            reply = {"action": action, "thought": thought}
        asked = re.search(r'"summary": one sentence in your own words about (t\d+-t\d+),.*? Facts: (.*)',
                          prompt)
        if asked:
            facts = asked.group(2).split(". Anchors:")[0].split("; energy")[0].split(". For example")[0]
            reply["summary"] = f"I remember {asked.group(1)}: {facts}"[:160]
            if policy == "copycat":  # the ask's example, or the ask itself, in turn
                example = re.search(r'like "([^"]+)"', prompt)
                odd = hashlib.sha256(asked.group(1).encode()).digest()[0] % 2
                reply["summary"] = (example.group(1) if example and odd
                                    else f"one sentence in your own words about {asked.group(1)}, like")
        content = json.dumps(reply)
        if fault == "garbage":
            return "Hmm, I think I will swim around a bit and see."
        if fault == "fenced":
            return f"Sure! Here is my choice:\n```json\n{content}\n```\nHope that helps."
        if fault == "json_array":
            return f"[{content}]"
        return content

    def _misbehave(self, fault: str) -> None:
        """Never answer, drip a reply byte by byte, or stream a body that never ends —
        until the client gives up or the server stops."""
        try:
            if fault == "hang":
                self.owner._stopping.wait()
                return
            if fault == "reset":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault == "not_http":
                self.wfile.write(b"\x00\xffthis is not HTTP at all\r\n\r\n")
                self.close_connection = True
                return
            if fault == "huge_body":
                size = 50 * 2**20
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(size))
                self.end_headers()
                block = b" " * 2**20
                for _ in range(50):
                    if self.owner._stopping.is_set():
                        return
                    self.wfile.write(block)
                return
            if fault == "drip":
                body = json.dumps({"id": "drip", "object": "chat.completion", "created": 0,
                                   "model": self.owner.model, "choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": "{}"}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                for k in range(len(body)):
                    if self.owner._stopping.wait(self.owner.delay or 1.0):
                        return
                    self.wfile.write(body[k : k + 1])
                    self.wfile.flush()
                return
            self.send_response(200)  # endless
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"400\r\n" + b" " * 1024 + b"\r\n"
            while not self.owner._stopping.wait(0.001):
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:  # the client hung up
            return

    def _complete(self, n: int, prompt: str, content: str) -> None:
        """A chat completion reply with usage counted by :func:`count_tokens`
        (``echo_auth``: with the request's Authorization header echoed in the reply)."""
        if self.owner.fault == "echo_auth":
            auth = self.headers.get("Authorization", "")
            try:
                data = json.loads(content)
            except ValueError:
                data = None
            if isinstance(data, dict):
                data["echo"] = auth
                if "thought" in data:
                    data["thought"] = auth.split()[-1][:80] if auth else ""
                content = json.dumps(data)
            else:
                content = f"{content} {auth}"
        usage: dict[str, Any] = {"prompt_tokens": count_tokens(prompt),
                                 "completion_tokens": count_tokens(content)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if self.owner.prefix_cache:  # as OpenAI and vLLM report what their prompt cache served
            usage["prompt_tokens_details"] = {"cached_tokens": self.owner.cached_prefix(prompt)}
        self._send(200, {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": self.owner.model,
            "system_fingerprint": f"fp_{self.owner.model}",  # a hosted model's revision, as OpenAI names it
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": usage,
        })


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up before its answer (a request given up on, a run that ended) is
        no error of the server's: no traceback; anything else is one line."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            return
        print(f"mirofish test server: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)


class TestServer:
    """The server, running in a background thread. ``url`` is the base URL (…/v1)."""

    __test__ = False  # not a pytest test class

    def __init__(self, port: int = 0, model: str = "fish-mini", fault: str = "none", delay: float = 0.0,
                 fault_every: int = 1, rate: float = 0.0, latency: float = 0.0, slots: int | None = None,
                 strict: bool = False, policy: str = "scripted", keep_bodies: bool = False,
                 log: str | None = None, prefix_cache: bool = False, cold_s: float = 0.0):
        """``cold_s``: the first chat completion takes this long (a cold server loading its model:
        a restarted one-slot llama.cpp server's first answer took 41 s and 85 s)."""
        self.cold_s = cold_s
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
        self.model, self.fault, self.delay, self.fault_every = model, fault, delay, fault_every
        self.rate, self.latency = rate, latency
        self.slots, self.strict, self.policy = slots, strict, policy
        self.keep_bodies, self.log = keep_bodies, log
        self.prefix_cache = prefix_cache
        self._busy = threading.BoundedSemaphore(max(1, slots or 1))  # slots computing (pace)
        self._kv: list[list[str]] = []  # prefix_cache: the prompts (as tokens) its slots hold
        self.bodies: list[bytes] = []  # chat-completion request bodies as received (keep_bodies)
        self.completions = 0  # chat completions computed (a client that hung up meanwhile still costs one)
        self.embeddings = 0  # /v1/embeddings requests answered
        self.schema_errors: list[str] = []  # strict mode: schemas refused, with why
        self._next_free = 0.0  # pacing: when the next completion may start (monotonic seconds)
        self.requests = 0
        self.by_status: dict[int, int] = {}
        self.seen_auth: set[str] = set()
        self._connections: set[Any] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()  # ends the hang / drip / endless loops
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._httpd.daemon_threads = False  # request threads are joined by stop() (server_close)
        self._httpd.block_on_close = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="mirofish-testserver", daemon=True)

    def pace(self) -> None:
        """Wait for this completion's turn (``rate``) and its ``latency``; with ``slots``, a
        completion's ``latency`` holds one of them (at most ``slots`` computed at once, as a
        llama.cpp server started with ``--parallel N``)."""
        if self.rate <= 0 and self.latency <= 0:
            return
        if self.slots and self.rate <= 0:
            with self._busy:
                time.sleep(self.latency)
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next_free)
            self._next_free = start + (1.0 / self.rate if self.rate > 0 else 0.0)
        time.sleep(max(0.0, start - now) + self.latency)

    def cached_prefix(self, prompt: str) -> int:
        """``prefix_cache``: the tokens of ``prompt`` a prompt cache would serve — its longest
        common prefix with a prompt one of the server's slots computed last (as llama.cpp reuses
        a slot's KV cache); the prompt then takes that slot's place."""
        tokens = [m.group(0) for m in _TOKEN.finditer(prompt)]
        with self._lock:
            best, at = 0, 0
            for k, held in enumerate(self._kv):
                n = 0
                for a, b in zip(held, tokens):
                    if a != b:
                        break
                    n += 1
                if n > best:
                    best, at = n, k
            if len(self._kv) < max(1, self.slots or 1):
                self._kv.append(tokens)
            else:
                self._kv[at] = tokens
        return best

    def start(self) -> TestServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop like a killed server: refuse new connections, cut the open ones, and join every
        thread it started (so nothing of it outlives ``stop()``)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._httpd.server_close()  # joins the request threads (block_on_close)
        self._thread.join(timeout=5)

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description="MiroFish's scripted OpenAI-compatible test server")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--model", default="fish-mini")
    ap.add_argument("--fault", choices=FAULTS, default="none")
    ap.add_argument("--delay", type=float, default=0.3, help="seconds, for --fault slow")
    ap.add_argument("--fault-every", type=int, default=1, help="apply the fault to every k-th request")
    ap.add_argument("--rate", type=float, default=0.0, help="completions per second, one after another (0 = unpaced)")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds each completion takes on top of --rate")
    ap.add_argument("--slots", type=int, default=None,
                    help="say this many slots at /props, as llama.cpp's server does (default: no /props)")
    ap.add_argument("--strict", action="store_true",
                    help="refuse json_schema formats that break OpenAI's strict rules (HTTP 400)")
    ap.add_argument("--policy", choices=POLICIES, default="scripted",
                    help="forager: every plan is forage, as a tiny model answers; contrarian: thoughts "
                         "that say the opposite of the plan")
    ap.add_argument("--log", default=None, help="append every chat-completion request body, one per line, to FILE")
    ap.add_argument("--prefix-cache", action="store_true",
                    help="report usage.prompt_tokens_details.cached_tokens as a prompt cache per slot would serve")
    args = ap.parse_args()
    server = TestServer(args.port, args.model, args.fault, args.delay, args.fault_every,
                        rate=args.rate, latency=args.latency, slots=args.slots, strict=args.strict,
                        policy=args.policy, log=args.log, prefix_cache=args.prefix_cache).start()
    print(f"serving {server.model} at {server.url} (fault: {server.fault}); Ctrl-C stops", flush=True)
    try:
        tokenizer()  # a MIROFISH_TOKENIZER that cannot count: said once now; the estimate counts
    except TokenizerError as exc:
        _tell(str(exc))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
