"""Talking to an OpenAI-compatible server: one chat completion, whatever the server does.

Pure, separately tested pieces — :func:`classify_error` (what an exception from the client
means: retry or not, how long the server asked us to wait), :func:`backoff_delay`
(exponential with jitter, ``Retry-After`` honoured up to its own cap) and
:func:`parse_completion` (the reply body, read tolerantly) — and :class:`Transport`, which
puts them together: a **total** deadline per attempt (waiting for a slot, connecting and
reading the whole body), a cap on the bytes read, retries only while they can still finish
in time, and structured-output detection per server (json_schema → json_object + schema →
plain instructions; llama.cpp's server answers 500 to json_schema). :class:`LoopThread`
runs the asyncio loop these live on beside the caller's thread.

Models are reached only through the ``openai`` package; nothing here knows about fish.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import random
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from ..config import BrainConfig, EndpointConfig, redact_url

FORMATS = ("json_schema", "json_object", "plain")
RETRYABLE_STATUS = {408, 409, 429}
T = TypeVar("T")


class Failure(Exception):
    """A model call that produced nothing usable; ``reason`` is a short code (``timeout``,
    ``connection``, ``http_503``, ``rate_limited``, ``reply_too_large``, ``breaker_open`` …).
    ``server``: the server failed (a breaker counts it; running out of the tick's time while
    waiting on it counts too); False for what is not the server's fault (a reply the fish
    can't use, an open breaker, an exhausted budget)."""

    def __init__(self, reason: str, server: bool = True):
        super().__init__(reason)
        self.reason, self.server = reason, server


@dataclass(frozen=True)
class Classified:
    reason: str
    retry: bool
    wait: float | None = None  # seconds the server asked for (Retry-After)
    unreachable: bool = False
    format_unsupported: bool = False


def classify_error(exc: BaseException, fmt: str) -> Classified:
    """What an exception from one completion attempt means (``fmt``: the format it asked for)."""
    import openai

    if isinstance(exc, Failure):  # the reply itself was unusable (too large, not a completion)
        return Classified(exc.reason, False)
    if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
        return Classified("timeout", True)
    if isinstance(exc, openai.APIConnectionError):
        return Classified("connection", True, unreachable=True)
    # the HTTP library's own errors, raised while the reply's body is read (after the client's call
    # returned): its package is httpx or a fork of it (openai 3 ships "httpx2"), known by its classes
    http = {c.__name__ for c in type(exc).__mro__ if c.__module__.split(".")[0].startswith("httpx")}
    if "TimeoutException" in http:
        return Classified("timeout", True)
    if "TransportError" in http:  # reached, then the connection broke mid-reply: a connection error, retried
        return Classified("connection_closed", True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        body = str(getattr(exc, "body", "") or exc.message or "").lower()
        if fmt != "plain" and status in (400, 422, 500) and ("json_schema" in body or "response_format" in body):
            return Classified("format_unsupported", False, format_unsupported=True)
        wait = None
        try:
            wait = float(exc.response.headers.get("retry-after", ""))
        except (TypeError, ValueError, AttributeError):
            pass
        if status == 429:
            return Classified("rate_limited", True, wait)
        if status >= 500:
            return Classified(f"http_{status}", True, wait)
        return Classified(f"http_{status}", status in RETRYABLE_STATUS, wait)
    return Classified(f"error_{type(exc).__name__}", False)


def backoff_delay(attempt: int, base_s: float, cap_s: float, jitter: float, retry_after: float | None = None,
                  retry_after_cap_s: float = 30.0) -> float:
    """Seconds before retry number ``attempt + 1``: ``base · 2^attempt`` plus up to as much
    again (``jitter`` in [0, 1)), at most ``cap_s``; a server's ``Retry-After`` replaces that
    and is honoured up to ``retry_after_cap_s`` (a caller's deadline may still forbid it). A
    longer ``Retry-After`` is not retried at all (the pool fails the request with the server's
    reason, ``rate_limited`` for a 429): asking again before the time the server named would
    only be refused again; the delay returned for it is the cap."""
    if retry_after is not None and retry_after >= 0:
        return min(retry_after, retry_after_cap_s)
    base: float = base_s * (2 ** attempt)
    return min(cap_s, base + jitter * base)


USAGE_SLACK = 1000  # tokens a chat template may add around a request's own bytes (usage_cap)


def usage_cap(max_tokens: int, request_bytes: int) -> int:
    """The largest token count a reply's ``usage`` may claim for one request: ten times its
    ``max_tokens``, plus the request's size in bytes (no tokenizer makes more tokens of a text
    than it has bytes), plus :data:`USAGE_SLACK` for the chat template."""
    return 10 * max(0, max_tokens) + max(0, request_bytes) + USAGE_SLACK


def read_usage(usage: Any, cap: int | None = None) -> tuple[int, int, bool]:
    """(prompt tokens, completion tokens, ignored) of a completion's ``usage`` block. Counts the
    server did not give are 0 (unknown); a block that is not an object, or a count that is not
    a non-negative integer or is above ``cap`` (:func:`usage_cap`), makes the whole block
    ignored — (0, 0, True): the tokens are unknown, the reply itself is still good (a server's
    bookkeeping never makes its answer a failure, nor drains a token budget)."""
    if usage is None:
        return 0, 0, False
    if not isinstance(usage, dict):
        return 0, 0, True
    counts = []
    for key in ("prompt_tokens", "completion_tokens"):
        v = usage.get(key)
        if v is None:
            counts.append(0)
        elif isinstance(v, bool) or not isinstance(v, int) or v < 0 or (cap is not None and v > cap):
            return 0, 0, True
        else:
            counts.append(v)
    return counts[0], counts[1], False


def read_completion(body: bytes, cap: int | None = None) -> tuple[str | None, int, int, bool]:
    """(text, prompt tokens, completion tokens, usage ignored) of a chat completion body: the
    counts as :func:`read_usage` reads them (``cap``: its bound). Raises :class:`Failure`
    (``reply_not_completion``) for a body that is no completion."""
    try:
        data = json.loads(body)
        choices = data.get("choices") or []
        text = choices[0]["message"].get("content") if choices else None
        usage = data.get("usage")
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        raise Failure("reply_not_completion") from None
    if text is not None and not isinstance(text, str):
        raise Failure("reply_not_completion")
    prompt_toks, completion_toks, ignored = read_usage(usage, cap)
    return text, prompt_toks, completion_toks, ignored


def parse_completion(body: bytes, cap: int | None = None) -> tuple[str | None, int, int]:
    """(text, prompt tokens, completion tokens; 0 when the server gave none or gave counts that
    cannot be true, :func:`read_usage`) of a chat completion body. Raises :class:`Failure`
    (``reply_not_completion``) for anything else."""
    return read_completion(body, cap)[:3]


def sampling(temperature: float) -> float | int:
    """The temperature as sent: ``0`` (an int, as every request was sent before sampling was
    configurable: the same bytes, the same reply-cache keys) or the configured float."""
    return 0 if temperature == 0 else float(temperature)


def completion_meta(body: bytes) -> dict[str, Any]:
    """What a chat completion says about the model that answered, as recordings keep it with the
    exchange: ``response_model`` (the model name as returned), ``system_fingerprint`` (a hosted
    model's revision) and ``finish_reason`` — each only when the server gave it — and
    ``cached_tokens``, the prompt tokens the server's prompt cache served (:func:`cached_tokens`)."""
    try:
        data = json.loads(body)
        choice = (data.get("choices") or [{}])[0]
        found = {"response_model": data.get("model"), "system_fingerprint": data.get("system_fingerprint"),
                 "finish_reason": choice.get("finish_reason") if isinstance(choice, dict) else None}
    except (ValueError, AttributeError, TypeError):
        return {}
    out: dict[str, Any] = {k: v for k, v in found.items() if isinstance(v, str) and v}
    cached = cached_tokens(data) if isinstance(data, dict) else None
    if cached is not None:
        out["cached_tokens"] = cached
    return out


def cached_tokens(data: dict[str, Any]) -> int | None:
    """The prompt tokens a server says its prompt cache served, where it says so: OpenAI and
    vLLM ``usage.prompt_tokens_details.cached_tokens``, llama.cpp's server ``timings.cache_n``,
    DeepSeek's ``usage.prompt_cache_hit_tokens``; None when it says nothing."""
    def table(d: dict[str, Any], key: str) -> dict[str, Any]:
        v = d.get(key)
        return v if isinstance(v, dict) else {}

    usage = table(data, "usage")
    details, timings = table(usage, "prompt_tokens_details"), table(data, "timings")
    for v in (details.get("cached_tokens"), timings.get("cache_n"), usage.get("prompt_cache_hit_tokens")):
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            return v
    return None


@dataclass
class TransportSettings:
    """How a transport asks: the ``[brain]`` settings of the same names (:meth:`of`), and the seed
    sent with every request."""

    request_timeout_s: float
    max_retries: int
    backoff_s: float
    backoff_cap_s: float
    retry_after_cap_s: float
    max_reply_bytes: int
    temperature: float = 0.0
    top_p: float | None = None
    seed: int = 0

    @classmethod
    def of(cls, brain: BrainConfig | None = None, seed: int = 0, **changes: Any) -> TransportSettings:
        """From ``brain`` (the defaults of ``[brain]`` when None), with ``changes`` on top."""
        b = brain if brain is not None else BrainConfig()
        values = {f.name: getattr(b, f.name) for f in fields(cls) if f.name != "seed"}
        return cls(**{**values, "seed": seed, **changes})


@dataclass
class Endpoint:
    """One server of a tier, with what was learned about it."""

    cfg: EndpointConfig
    client: Any = None
    semaphore: asyncio.Semaphore | None = None
    slots: int = 0  # requests the server computes at once (its slots); 0 until connected
    slots_source: str = ""  # "config", "server" (/props or /slots), "local default", "remote default"
    outstanding: int = 0  # requests dispatched to it and not yet answered
    queued: int = 0  # requests waiting for one of its slots
    latency_s: float | None = None  # running mean of dispatch → answer, seconds
    answered: int = 0  # completions it has finished (the lockstep wait's sign of progress)
    format: str | None = None  # detected structured-output support
    reachable: bool | None = None
    listed: list[str] | None = None  # the models GET /v1/models names (None: it did not say)
    probing: bool = False  # a first request is finding out the structured-output support
    probed: asyncio.Event = field(default_factory=asyncio.Event)  # … and has found out (others wait)

    def observe_latency(self, seconds: float) -> None:
        self.answered += 1
        self.latency_s = seconds if self.latency_s is None else 0.8 * self.latency_s + 0.2 * seconds


def is_local(url: str) -> bool:
    """Is ``url`` a server on this machine (loopback)?"""
    from urllib.parse import urlparse

    host = (urlparse(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def server_root(url: str) -> str:
    """``http://host:8000/v1`` → ``http://host:8000`` (llama.cpp serves /props and /slots there)."""
    return url[: -len("/v1")] if url.endswith("/v1") else url


def slots_from(props: Any, slots: Any) -> int | None:
    """The server's parallel slots from llama.cpp's ``/props`` (``total_slots``) or ``/slots``
    (a list, one item per slot) replies, None when neither says."""
    if isinstance(props, dict):
        n = props.get("total_slots")
        if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 256:
            return n
    if isinstance(slots, list) and 1 <= len(slots) <= 256:
        return len(slots)
    return None


def secrets_of(url: str, api_key: str | None) -> set[str]:
    """The credentials a request carries: the API key and a URL's userinfo (user, password)."""
    from urllib.parse import unquote

    out = {api_key} if api_key and api_key != "not-needed" else set()
    netloc = url.split("//", 1)[-1].split("/", 1)[0]
    if "@" in netloc:
        info = netloc.rsplit("@", 1)[0]
        out |= {info, unquote(info), *(unquote(p) for p in info.split(":"))}
    return {x for x in out if len(x) >= 4}


def scrub(text: str | None, secrets: set[str]) -> str | None:
    """``text`` with every secret replaced by ``***`` — a server that echoes the Authorization
    header or the key must not get it into recordings, logs, tables or the window."""
    if not text or not secrets:
        return text
    import base64

    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
        encoded = base64.b64encode(secret.encode()).decode()
        if len(encoded) >= 8:
            text = text.replace(encoded, "***")
    return text


def response_formats(schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two structured-output forms of ``schema``: json_schema, and json_object + schema."""
    return ({"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
            {"type": "json_object", "schema": schema})


class Transport:
    """Chat completions from a set of endpoints (see the module doc). Lives on an event loop.

    ``stats`` (optional) gets ``calls`` (every attempt sent to a server; by kind in ``by_kind``
    when it has one) and ``retries`` incremented.

    ``usage_ignored`` counts the completions whose ``usage`` block could not be true
    (:func:`read_usage`: their tokens unknown, the reply used); the first is said once, through
    ``warn`` (default: a ``mirofish: warning:`` line on standard error).
    """

    def __init__(self, settings: TransportSettings, loop: asyncio.AbstractEventLoop, stats: Any = None,
                 warn: Callable[[str], None] | None = None):
        self.s, self.loop, self.stats = settings, loop, stats
        self.usage_ignored = 0
        self.warn = warn
        self._rng = random.Random(settings.seed)  # retry jitter only; never affects a decision
        self._clients: dict[tuple[str, str], Any] = {}
        self._slots: dict[str, tuple[int, str]] = {}  # server → (slots, where that figure came from)
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._secrets: set[str] = set()  # API keys and URL passwords: scrubbed from every reply

    def connect(self, ep: Endpoint, api_key_env: str) -> None:
        """Give ``ep`` its client (one per server and model) and its slots: ``max_concurrency``
        when configured, else a first guess (1 on this machine, 4 remote) that
        :meth:`discover_slots` may correct. Requests to one server share its slots, whatever
        the model (a server computes them all)."""
        from openai import AsyncOpenAI

        key = (ep.cfg.base_url, ep.cfg.model)
        if key not in self._clients:
            api_key = os.environ.get(ep.cfg.api_key_env or api_key_env) or "not-needed"
            self._secrets.update(secrets_of(ep.cfg.base_url, api_key))
            self._clients[key] = AsyncOpenAI(base_url=ep.cfg.base_url, api_key=api_key, max_retries=0,
                                             timeout=self.s.request_timeout_s)
        ep.client = self._clients[key]
        if ep.cfg.base_url not in self._slots:
            if ep.cfg.max_concurrency is not None:
                self._slots[ep.cfg.base_url] = (ep.cfg.max_concurrency, "config")
            else:
                local = is_local(ep.cfg.base_url)
                self._slots[ep.cfg.base_url] = (1, "local default") if local else (4, "remote default")
            self._semaphores[ep.cfg.base_url] = asyncio.Semaphore(self._slots[ep.cfg.base_url][0])
        self.bind(ep)

    def bind(self, ep: Endpoint) -> None:
        """Give ``ep`` its server's slots as known now (after :meth:`discover_slots`, for every
        endpoint of that server)."""
        ep.slots, ep.slots_source = self._slots[ep.cfg.base_url]
        ep.semaphore = self._semaphores[ep.cfg.base_url]

    async def discover_slots(self, ep: Endpoint) -> None:
        """Ask the server how many requests it computes at once (llama.cpp: ``/props``'s
        ``total_slots``, else the length of ``/slots``) when ``max_concurrency`` is not set;
        a server that does not say keeps the default. Never raises."""
        if ep.cfg.max_concurrency is not None or self._slots[ep.cfg.base_url][1] == "server":
            self.bind(ep)
            return
        replies: list[Any] = []
        for path in ("/props", "/slots"):
            try:
                asked = ep.client.get(server_root(ep.cfg.base_url) + path, cast_to=object)
                replies.append(await asyncio.wait_for(asked, min(3.0, self.s.request_timeout_s)))
            except Exception:  # noqa: BLE001 — a server that does not say keeps the default
                replies.append(None)
            if slots_from(replies[0], None) is not None:
                break
        n = slots_from(replies[0], replies[1] if len(replies) > 1 else None)
        if n is not None:
            self._slots[ep.cfg.base_url] = (n, "server")
            self._semaphores[ep.cfg.base_url] = asyncio.Semaphore(n)
        self.bind(ep)

    async def reachable(self, ep: Endpoint) -> bool:
        """Does the server answer ``/v1/models`` within a few seconds?"""
        try:
            page = await asyncio.wait_for(ep.client.models.list(), timeout=min(3.0, self.s.request_timeout_s))
        except Exception:  # noqa: BLE001 — any failure means "not now"
            return False
        try:
            ep.listed = [str(m.id) for m in page.data][:1000]
        except Exception:  # noqa: BLE001 — a list the server words otherwise: it did not say
            ep.listed = None
        return True

    def limit(self, budget_end: float | None, attempt_s: float | None = None) -> float:
        """Seconds an attempt may take: ``attempt_s`` (default ``request_timeout_s``), and not past ``budget_end``."""
        own = self.s.request_timeout_s if attempt_s is None else attempt_s
        if budget_end is None:
            return own
        return min(own, budget_end - self.loop.time())

    async def complete(self, endpoints: list[Endpoint], msgs: list[dict[str, Any]],
                       formats: tuple[dict[str, Any], dict[str, Any]] | None, max_tokens: int,
                       budget_end: float | None = None, *, attempt_s: float | None = None,
                       wanted: Callable[[], bool] | None = None,
                       dispatched: Callable[[Endpoint], None] | None = None,
                       trace: dict[str, Any] | None = None, kind: str = "decision",
                       patience_s: float | None = None) -> tuple[str | None, int, int]:
        """One chat completion from the least busy of ``endpoints``. Returns (text, prompt
        tokens, completion tokens; 0 when the server gave none); raises :class:`Failure`.

        A request first waits for one of the server's slots (``budget_end``, loop time, bounds
        that wait and everything after it; the scenes' calls use it). Once it has a slot it is
        *dispatched*: ``wanted()`` is asked first (False: it is dropped unsent,
        ``Failure("superseded")``), then ``dispatched(ep)`` is called and the attempt may take
        ``attempt_s`` (default ``request_timeout_s``) from there — time spent queueing for a
        slot does not count. Retries only for retryable errors while they can finish in time;
        a timeout is not retried on a one-slot server (it is still computing the answer);
        structured-output degradation as in the module doc.

        ``trace`` (a dict, optional) is filled with what happened, for the exchange a recording
        keeps: ``endpoint`` (without credentials), ``model``, ``format`` (the structured-output
        form sent last), ``retries``, ``latency_s`` (dispatch → answer of the last attempt).
        ``kind`` (decision, summary, warmup, question): what ``stats.by_kind`` counts each attempt
        sent to a server as.

        ``patience_s``: how long from its first dispatch the caller waits for this answer (a
        lockstep tick's wait, realtime's ``request_timeout_s``). A server that asks to be asked
        again (``Retry-After``) later than that is not waited out: the call fails at once with
        the server's reason (``rate_limited`` for a 429) — before, the caller gave up first and
        the fish's fallback was labelled ``tick_timeout`` or ``timeout``, as if the server had
        been slow."""
        ep = min(endpoints, key=lambda e: e.outstanding + e.queued)
        if trace is not None:
            trace.update(endpoint=redact_url(ep.cfg.base_url), model=ep.cfg.model, retries=0, latency_s=0.0)
        if ep.client is None:  # never connected (an offline pool: a fork given no server): nothing is sent
            raise Failure("no_server", server=False)
        attempt, prober = 0, False
        first_sent: list[float] = []  # loop time of the first dispatch (patience_s counts from it)

        def on_dispatch(e: Endpoint) -> None:
            if not first_sent:
                first_sent.append(self.loop.time())
            if dispatched is not None:
                dispatched(e)

        while True:
            prober = await self._probe_turn(ep, formats, budget_end, prober)
            fmt = ep.format or "json_schema"
            kwargs: dict[str, Any] = {"model": ep.cfg.model, "messages": msgs,
                                      "temperature": sampling(self.s.temperature),
                                      "max_tokens": max_tokens, "seed": self.s.seed,
                                      "timeout": self.limit(None, attempt_s)}
            if self.s.top_p is not None:
                kwargs["top_p"] = self.s.top_p
            if formats is not None and fmt in ("json_schema", "json_object"):
                kwargs["response_format"] = formats[0] if fmt == "json_schema" else formats[1]
            if trace is not None:
                trace.update(format=fmt if formats is not None else None, retries=attempt)
            try:
                text, prompt_toks, completion_toks = await self._attempt(ep, kwargs, budget_end, attempt_s, wanted,
                                                                         on_dispatch, trace, kind)
            except Exception as exc:  # noqa: BLE001 — every failure is classified
                patience_end = first_sent[0] + patience_s if first_sent and patience_s is not None else None
                attempt, prober = await self._after_failure(exc, ep, fmt, attempt, prober, budget_end, patience_end)
                continue
            ep.format = fmt
            if prober:
                self._release_probe(ep, learned=True)
            ep.reachable = True
            return scrub(text, self._secrets), prompt_toks, completion_toks

    async def _probe_turn(self, ep: Endpoint, formats: tuple[dict[str, Any], dict[str, Any]] | None,
                          budget_end: float | None, prober: bool) -> bool:
        """One request per server finds out its structured-output support; the others wait for
        it, but no longer than their own deadline. Returns whether this request is the prober."""
        if formats is None or ep.format is not None:
            return prober
        if ep.probing and not prober:
            try:
                await asyncio.wait_for(ep.probed.wait(), None if budget_end is None
                                       else max(0.0, budget_end - self.loop.time()))
            except TimeoutError:
                raise Failure("timeout") from None
        if ep.format is None and not ep.probing:
            ep.probing = prober = True
        return prober

    async def _after_failure(self, exc: Exception, ep: Endpoint, fmt: str, attempt: int, prober: bool,
                             budget_end: float | None, patience_end: float | None = None) -> tuple[int, bool]:
        """A failed attempt: the next format to try, or a pause and a retry (attempt, prober for
        the next one); raises :class:`Failure` when it is not retried (``patience_end``, loop
        time: a server's ``Retry-After`` that ends later is not waited out, :meth:`complete`)."""
        c = classify_error(exc, fmt)
        if c.unreachable:
            ep.reachable = False
        if c.format_unsupported:
            ep.format = FORMATS[FORMATS.index(fmt) + 1]
            if prober:  # the others may go now, in the format that works
                ep.probing = False
                ep.probed.set()
            return attempt, False
        pause = backoff_delay(attempt, self.s.backoff_s, self.s.backoff_cap_s, self._rng.random(), c.wait,
                              self.s.retry_after_cap_s)
        in_time = budget_end is None or self.loop.time() + pause + 0.05 < budget_end
        if c.wait is not None and patience_end is not None and self.loop.time() + c.wait > patience_end:
            in_time = False  # the server asked to wait longer than the caller waits: its reason, now
        if c.wait is not None and c.wait > self.s.retry_after_cap_s:
            in_time = False  # longer than we honour: not asked again before the server's time, but failed now
        busy_server = c.reason == "timeout" and ep.slots == 1  # it is still computing the answer
        if c.retry and not busy_server and attempt < self.s.max_retries and in_time:
            if self.stats is not None:
                self.stats.retries += 1
            await asyncio.sleep(pause)
            return attempt + 1, prober
        if prober:  # it learned nothing about the format; let the next request try
            self._release_probe(ep, learned=False)
        raise Failure(c.reason, server=c.reason not in ("superseded", "tick_budget_queued")) from None

    async def _attempt(self, ep: Endpoint, kwargs: dict[str, Any], budget_end: float | None, attempt_s: float | None,
                       wanted: Callable[[], bool] | None, dispatched: Callable[[Endpoint], None] | None,
                       trace: dict[str, Any] | None = None, kind: str = "decision") -> tuple[str | None, int, int]:
        """Wait for a slot (bounded by ``budget_end`` only), then one request with its own deadline."""
        assert ep.semaphore is not None
        ep.queued += 1
        try:
            if budget_end is None:
                await ep.semaphore.acquire()
            else:
                try:
                    await asyncio.wait_for(ep.semaphore.acquire(), max(0.0, budget_end - self.loop.time()))
                except TimeoutError:
                    raise Failure("tick_budget_queued", server=False) from None
        finally:
            ep.queued -= 1
        try:
            if wanted is not None and not wanted():
                raise Failure("superseded", server=False)
            limit = self.limit(budget_end, attempt_s)
            if limit <= 0.0:
                raise Failure("tick_budget")  # the server was too slow for the tick: its failure too
            if dispatched is not None:
                dispatched(ep)
            ep.outstanding += 1
            if self.stats is not None:
                self.stats.calls += 1
                if hasattr(self.stats, "by_kind"):
                    self.stats.by_kind[kind] += 1
            start = self.loop.time()
            try:
                out = await asyncio.wait_for(self._post(ep, kwargs, trace), limit)
            finally:
                ep.outstanding -= 1
                if trace is not None:
                    trace["latency_s"] = self.loop.time() - start
            ep.observe_latency(self.loop.time() - start)
            return out
        finally:
            ep.semaphore.release()

    @staticmethod
    def _release_probe(ep: Endpoint, learned: bool) -> None:
        ep.probing = False
        ep.probed.set()
        if not learned:
            ep.probed.clear()

    async def _post(self, ep: Endpoint, kwargs: dict[str, Any],
                    trace: dict[str, Any] | None = None) -> tuple[str | None, int, int]:
        """One request. The body is read in pieces and cut off past ``max_reply_bytes`` (a
        server that answers 50 MB, or an endless stream, costs at most that much memory)."""
        cap = self.s.max_reply_bytes
        async with ep.client.chat.completions.with_streaming_response.create(**kwargs) as resp:
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > cap:
                raise Failure("reply_too_large")
            body = bytearray()
            async for piece in resp.iter_bytes():
                body += piece
                if len(body) > cap:
                    raise Failure("reply_too_large")
        request_bytes = len(json.dumps(kwargs.get("messages"), ensure_ascii=False).encode()) \
            + len(json.dumps(kwargs.get("response_format"), ensure_ascii=False).encode())
        text, prompt_toks, completion_toks, ignored = read_completion(
            bytes(body), usage_cap(int(kwargs.get("max_tokens") or 0), request_bytes))
        if ignored:
            self._usage_ignored(ep)
        if trace is not None:
            trace.update(completion_meta(bytes(body)))
        return text, prompt_toks, completion_toks

    def _usage_ignored(self, ep: Endpoint) -> None:
        """A reply whose ``usage`` could not be true: counted, and said the first time."""
        self.usage_ignored += 1
        if self.usage_ignored > 1:
            return
        msg = (f"model server {redact_url(ep.cfg.base_url)} sent token counts (usage) that cannot be true "
               f"(not a whole number of at least 0, or more than 10 × max_tokens + the request's size); "
               f"they are ignored (its tokens counted unknown, usage_ignored), its replies used")
        if self.warn is not None:
            self.warn(msg)
        else:
            import sys

            print(f"mirofish: warning: {msg}", file=sys.stderr, flush=True)

    async def embeddings(self, ep: Endpoint, texts: list[str]) -> list[list[float]]:
        resp = await asyncio.wait_for(ep.client.embeddings.create(model=ep.cfg.model, input=texts),
                                      self.s.request_timeout_s)
        return [d.embedding for d in resp.data]

    async def close(self) -> None:
        for client in self._clients.values():
            try:
                await client.close()
            except Exception:  # noqa: BLE001 — closing must not raise
                pass


async def _cancel_pending() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class LoopThread:
    """An asyncio event loop on its own daemon thread, for sources and clients whose callers
    are synchronous (the engine's tick loop, the scenes)."""

    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()
        self.closed = False

    def run(self, coro: Awaitable[T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result (raises what it raises)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=timeout)  # type: ignore[arg-type]

    def submit(self, coro: Awaitable[T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    def close(self, shutdown: Callable[[], Awaitable[Any]] | None = None) -> None:
        """Run ``shutdown`` (if given) on the loop, then stop and join it. Never raises."""
        if self.closed:
            return
        self.closed = True
        if shutdown is not None:
            try:
                self.run(shutdown(), timeout=10)
            except Exception:  # noqa: BLE001 — closing must not raise
                pass
        try:  # what is still pending is cancelled, not left for "Task was destroyed but it is pending!"
            self.run(_cancel_pending(), timeout=5)
        except Exception:  # noqa: BLE001 — closing must not raise
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        self.loop.close()
