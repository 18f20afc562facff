"""A small blocking chat client for the scenes (referential game, negotiation).

Same transport, limits and breaker as the aquarium's model pool — a total deadline per call
(retries included), a capped reply size, structured-output detection, a breaker that stops
asking a failing server — without an aquarium config. Failure is data: :meth:`complete`
returns ``{"text", "tokens", "error"}`` with ``error`` None on success, never raises.
"""

from __future__ import annotations

import concurrent.futures
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..config import BrainConfig, ConfigError, EndpointConfig
from .breaker import Breaker
from .exchanges import ReplyCache, cache_key
from .transport import Endpoint, Failure, LoopThread, Transport, TransportSettings, response_formats

DEFAULT_TIMEOUT_S = 20.0  # a scene's model call, retries included (the scenes' --timeout)


@dataclass
class Sent:
    """What the transport sent to the server: ``calls`` (every attempt, retries included — what
    the server received), ``retries``, ``by_kind``."""

    calls: int = 0
    retries: int = 0
    by_kind: Counter[str] = field(default_factory=Counter[str])


class ModelClient:
    """Chat completions from one OpenAI-compatible server.

    Args:
        base_url, model: the server and model (``--base-url``, ``--model``).
        timeout_s: a call takes at most this long in all, retries included.
        seed: sent with every request (servers that honour it answer reproducibly).
        brain: the ``[brain]`` settings for the rest — the API key's environment variable
            (never written anywhere), retries and backoff, the breaker, the reply size cap —
            its defaults when None; ``max_reply_bytes`` overrides the cap.
        max_concurrency: requests at once.
        cache: a reply cache (``--reply-cache DIR``): a request asked before is answered from it,
            without the server — a model game run again costs nothing and replays its replies.
    """

    def __init__(self, base_url: str, model: str, timeout_s: float = DEFAULT_TIMEOUT_S, seed: int = 0,
                 brain: BrainConfig | None = None, max_reply_bytes: int | None = None, max_concurrency: int = 4,
                 cache: ReplyCache | None = None):
        b = brain if brain is not None else BrainConfig()
        self.timeout_s = timeout_s
        self.calls = self.tokens = self.cached = 0  # calls: completions asked (not from the cache)
        self.sent = Sent()  # requests that reached the server (retries included)
        self.cache, self.model = cache, model
        self._sampling = (b.temperature, b.top_p)
        try:
            endpoint = EndpointConfig(base_url=base_url, model=model, max_concurrency=max_concurrency)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ConfigError(f"--{str(err['loc'][0]).replace('_', '-')}: {err['msg']} (got {base_url!r})") from None
        self._thread = LoopThread("mirofish-model-client")
        self.endpoint = Endpoint(endpoint)
        self.breaker = Breaker(b.breaker_failures, b.breaker_cooldown_s)
        settings = TransportSettings.of(b, seed=seed, request_timeout_s=timeout_s,
                                        **({"max_reply_bytes": max_reply_bytes} if max_reply_bytes else {}))
        api_key_env = b.api_key_env

        async def start() -> Transport:
            transport = Transport(settings, self._thread.loop, self.sent)
            transport.connect(self.endpoint, api_key_env)
            return transport

        self._transport = self._thread.run(start(), timeout=30)

    def complete(self, msgs: list[dict[str, Any]], schema: dict[str, Any] | None = None,
                 max_tokens: int = 200, trace: dict[str, Any] | None = None,
                 waiting: tuple[float, Callable[[], None]] | None = None) -> dict[str, Any]:
        """One completion (JSON shaped by ``schema`` when given); at most ``timeout_s`` in all,
        whatever the server does; an open breaker answers at once. ``trace``: filled as the
        transport fills it (endpoint, format, latency, the model as returned, fingerprint).
        ``waiting`` (seconds, callback): the callback is called once, from the caller's thread,
        when no answer has come after that many seconds (a "waiting for the server" line)."""
        formats = response_formats(schema) if schema is not None else None
        loop = self._thread.loop
        key = cache_key(self.model, msgs, schema, max_tokens, *self._sampling) if self.cache is not None else None
        if self.cache is not None and key is not None:
            hit = self.cache.get(key)
            if hit is not None:  # the same request answered before (--reply-cache): no server asked
                self.cached += 1
                completion = int(hit.get("completion_tokens", 0))
                return {"text": hit["reply"], "tokens": int(hit.get("prompt_tokens", 0)) + completion,
                        "completion_tokens": completion, "error": None, "cached": True}

        async def run() -> tuple[str | None, int, int]:
            return await self.breaker.call(self._transport.complete(
                [self.endpoint], msgs, formats, max_tokens, loop.time() + self.timeout_s, trace=trace))

        self.calls += 1
        try:
            future = self._thread.submit(run())
            if waiting is not None and waiting[0] < self.timeout_s:
                try:
                    future.result(timeout=waiting[0])
                except concurrent.futures.TimeoutError:
                    waiting[1]()
            text, p, c = future.result(timeout=self.timeout_s + 5.0)
        except Failure as failure:
            return {"text": None, "tokens": 0, "error": failure.reason}
        except Exception as exc:  # noqa: BLE001 — the wait itself timed out, or was cancelled
            return {"text": None, "tokens": 0, "error": f"error_{type(exc).__name__}"}
        self.tokens += p + c
        if self.cache is not None and key is not None:
            self.cache.put(key, text, p, c, self.model)
        return {"text": text, "tokens": p + c, "completion_tokens": c, "error": None}

    def embed(self, texts: list[str]) -> list[list[float]] | None:
        """Embeddings of ``texts`` from the server (``/v1/embeddings``); None when it serves none."""
        try:
            out: list[list[float]] = self._thread.run(self._transport.embeddings(self.endpoint, texts),
                                                      timeout=self.timeout_s + 5.0)
        except Exception:  # noqa: BLE001 — a server without embeddings: the caller measures otherwise
            return None
        return out

    def close(self) -> None:
        self._thread.close(self._transport.close)
