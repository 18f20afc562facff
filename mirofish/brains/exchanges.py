"""Model exchanges: what a fish's model was sent and what it said, kept and reused.

Every request a model brain makes for a fish — a plan (or action) request, a long-term
summary — becomes one **exchange** (:func:`exchange`): the request as sent, split into the
*shared prefix* (the system message, byte-identical for every fish; stored once per recording
under its hash, :func:`text_hash`) and the *per-fish part* (the user message, in full), the
response format's schema (also stored once by hash, its properties in the order sent), the
raw reply text, how the reply was read (``ok`` or the parse/legality failure), tier, model,
endpoint (credentials removed: :func:`~mirofish.config.redact_url`), latency, tokens and
retries. Recordings keep them in their chunks (:mod:`mirofish.observe.recording`); ``export
--tables`` writes them as the ``model_calls`` table; ``trace`` and the follow panel show them;
``reask`` sends one again.

The **reply cache** (:class:`ReplyCache`) is content-addressed: the key (:func:`cache_key`) is
a digest of the model name and the request body that decides the reply — messages, schema,
``max_tokens``, ``temperature`` — but not the structured-output *form* a server was found to
take (json_schema vs json_object), which carries the same schema. A fork of a model run loads
its parent's exchanges into one, so fish whose situation has not changed since the recording
get their recorded answers without a server; ``--reply-cache DIR`` keeps one on disk (one small
JSON file per reply) so repeated experiments against a paid API do not pay twice. An entry is read
under mirofish/files.py's rule: a FIFO, a device, a folder or a file over 8 MB in an entry's place
is a cache miss (never a read that blocks or fills the memory).

A **damaged entry** — a file in an entry's place that is not one (not JSON, JSON without a reply,
cut short, a FIFO or a folder) — is a miss too, but never a silent one: the first is named in one
line on standard error ("reply cache entry … is damaged (…)"), every one is counted
(``cache_damaged`` in the summary), and a reply the server gives for it replaces the file. The
run goes on rather than stopping: the damage is met mid-run, the request it held is asked again
(or, in a fork with no server, falls back ``cache_miss`` as any miss), and stopping would lose the
run made so far.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..files import REPLY_CACHE_LIMIT, FileRefused, read_bounded

TEMPERATURE = 0  # the default temperature (brain.temperature); sent as the int 0, as before it was configurable
KINDS = ("decision", "summary")
# The exchange's columns, in the order of the ``model_calls`` table (recordings store dicts
# with these keys; ``prefix``/``schema`` are hashes into the recording's ``texts`` table).
COLUMNS = ("tick", "asked", "fish", "kind", "key", "tier", "model", "endpoint", "format", "prefix", "schema",
           "user", "max_tokens", "reply", "read", "latency_s", "prompt_tokens", "completion_tokens", "retries",
           "cached", "view")


def text_hash(text: str) -> str:
    """The 16-hex-digit digest a shared text (a prefix, a schema) is stored under."""
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def canonical(obj: Any) -> str:
    """``obj`` as JSON with its keys sorted: the same text whatever order it was built in (the
    reply cache's keys)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def as_sent(obj: Any) -> str:
    """``obj`` as JSON in the order it was sent (a request's schema as recordings keep it: with
    grammar-constrained decoding, llama.cpp and vLLM generate the properties in the schema's
    order, so a re-ask must send them in that order). Recordings made before keep it sorted."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def schema_of(formats: tuple[dict[str, Any], dict[str, Any]] | None) -> dict[str, Any] | None:
    """The JSON schema both forms of a request's structured-output formats carry (None: none)."""
    if formats is None:
        return None
    spec = formats[0].get("json_schema") or {}
    return spec.get("schema") or formats[1].get("schema")


def cache_key(model: str, msgs: list[dict[str, Any]], schema: dict[str, Any] | None, max_tokens: int,
              temperature: float = TEMPERATURE, top_p: float | None = None) -> str:
    """The reply cache's key of a request: a digest of what decides the reply (sampling included;
    the defaults give the keys of recordings made before sampling was configurable)."""
    body: dict[str, Any] = {"model": model, "messages": msgs, "schema": schema, "max_tokens": max_tokens,
                            "temperature": temperature or TEMPERATURE}
    if top_p is not None:
        body["top_p"] = top_p
    return hashlib.blake2b(canonical(body).encode(), digest_size=16).hexdigest()


def exchange(*, tick: int, fish: int, kind: str, model: str, msgs: list[dict[str, Any]],
             formats: tuple[dict[str, Any], dict[str, Any]] | None, max_tokens: int, trace: dict[str, Any],
             reply: str | None, read: str, tier: str, view: str = "",
             cached: bool = False, temperature: float = TEMPERATURE, top_p: float | None = None,
             group: str | None = None, recalled: tuple[tuple[int, float], ...] = ()) -> dict[str, Any]:
    """One exchange as recordings store it, with the shared texts it references under
    ``_texts`` (``{hash: text}``; the recorder stores each once and drops the key). Sampling
    (``temperature`` when not 0, ``top_p`` when set), the fish's ``group`` in a mixed tank and
    what the server said of itself (``response_model``, ``system_fingerprint``,
    ``finish_reason`` from ``trace``) are kept only when there is something to keep, so a
    recording of a default run holds what it always held."""
    system = msgs[0]["content"] if msgs and msgs[0].get("role") == "system" else ""
    user = "\n\n".join(m["content"] for m in msgs if m is not msgs[0] or not system)
    schema = schema_of(formats)
    schema_text = as_sent(schema) if schema is not None else ""
    texts = {}
    if system:
        texts[text_hash(system)] = system
    if schema_text:
        texts[text_hash(schema_text)] = schema_text
    extra: dict[str, Any] = {k: trace[k] for k in ("response_model", "system_fingerprint", "finish_reason")
                             if trace.get(k)}
    if isinstance(trace.get("cached_tokens"), int):  # what the server's prompt cache served, where it says
        extra["cached_tokens"] = int(trace["cached_tokens"])
    if temperature:
        extra["temperature"] = float(temperature)
    if top_p is not None:
        extra["top_p"] = float(top_p)
    if group is not None:
        extra["group"] = group
    if recalled:  # what the fish's memory recalled for it (item id, score): docs/memory.md
        extra["recalled"] = [[int(k), float(s)] for k, s in recalled]
    return {
        "tick": tick, "asked": tick, "fish": fish, "kind": kind,
        "key": cache_key(model, msgs, schema, max_tokens, temperature, top_p),
        "tier": tier, "model": model, "endpoint": trace.get("endpoint", ""), "format": trace.get("format"),
        "prefix": text_hash(system) if system else None, "schema": text_hash(schema_text) if schema_text else None,
        "user": user, "max_tokens": max_tokens, "reply": reply, "read": read,
        "latency_s": round(float(trace.get("latency_s") or 0.0), 4),
        "prompt_tokens": int(trace.get("prompt_tokens") or 0),
        "completion_tokens": int(trace.get("completion_tokens") or 0),
        "retries": int(trace.get("retries") or 0), "cached": cached, "view": view, **extra, "_texts": texts,
    }


def complete_call(call: dict[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    """A stored exchange with the fields recordings leave out, derived: ``key`` (the reply
    cache's) and ``view`` (the 5x5 view, lines 2-6 of a decision's per-fish message)."""
    out = dict(call)
    try:
        out["key"] = cache_key(call["model"], messages_of(call, texts),
                               json.loads(texts[call["schema"]]) if call.get("schema") else None, call["max_tokens"],
                               call.get("temperature", TEMPERATURE), call.get("top_p"))
    except (KeyError, TypeError, ValueError):
        out["key"] = None
    lines = str(call.get("user", "")).split("\n")
    out["view"] = "\n".join(lines[1:6]) if call.get("kind") == "decision" and len(lines) >= 6 else ""
    return out


def request_body(call: dict[str, Any], texts: dict[str, str], seed: int) -> dict[str, Any]:
    """The chat-completion body an exchange was sent as (what the server received, parsed):
    model, messages, temperature, max_tokens, seed and the response format in the form the
    server took (none for ``plain`` or a request without a schema)."""
    msgs = []
    if call.get("prefix"):
        msgs.append({"role": "system", "content": texts[call["prefix"]]})
    msgs.append({"role": "user", "content": call["user"]})
    body: dict[str, Any] = {"model": call["model"], "messages": msgs,
                            "temperature": call.get("temperature", TEMPERATURE),
                            "max_tokens": call["max_tokens"], "seed": seed}
    if call.get("top_p") is not None:
        body["top_p"] = call["top_p"]
    schema = json.loads(texts[call["schema"]]) if call.get("schema") else None
    fmt = call.get("format") or "json_schema"
    if schema is not None and fmt != "plain":
        body["response_format"] = response_format(schema, fmt, call.get("kind", "decision"))
    return body


def messages_of(call: dict[str, Any], texts: dict[str, str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = request_body(call, texts, 0)["messages"]
    return messages


def formats_of(call: dict[str, Any], texts: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Both structured-output forms of the exchange's schema (None: it had none)."""
    if not call.get("schema"):
        return None
    schema = json.loads(texts[call["schema"]])
    kind = call.get("kind", "decision")
    return response_format(schema, "json_schema", kind), response_format(schema, "json_object", kind)


def response_format(schema: dict[str, Any], fmt: str, kind: str) -> dict[str, Any]:
    """The ``response_format`` field as the model brain sends it (names as in :mod:`.prompt`)."""
    if fmt == "json_object":
        return {"type": "json_object", "schema": schema}
    props = schema.get("properties", {})
    name = "fish_memory" if kind == "summary" else "fish_plan" if "goal" in props else "fish_reply"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


class ReplyCache:
    """Model replies by :func:`cache_key`: in memory, and in ``folder`` when one is given
    (``<folder>/<key[:2]>/<key>.json``, written atomically; several runs may share a folder).
    ``hits``/``misses`` count lookups. Thread-safe."""

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder is not None else None
        self._mem: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.hits = self.misses = self.stored = 0
        self.damaged = 0  # entries in the folder that are no entry (each read as a miss; the first said)
        self.filled_from: str | None = None  # the recording whose replies fill it (session/fork.py: once)
        if self.folder is not None:
            if self.folder.exists() and not self.folder.is_dir():
                raise ValueError(f"--reply-cache {self.folder} is a file, not a folder")
            self.folder.mkdir(parents=True, exist_ok=True)

    def __len__(self) -> int:
        return len(self._mem)

    def _file(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / f"{key}.json"

    def get(self, *keys: str) -> dict[str, Any] | None:
        """``{"reply", "prompt_tokens", "completion_tokens"}`` for the first of ``keys`` held (one
        request's keys: its model's, its schema's earlier wordings), or None; one lookup counted."""
        hit = None
        for key in keys:
            hit = self._one(key)
            if hit is not None:
                break
        with self._lock:
            if hit is None:
                self.misses += 1
            else:
                self.hits += 1
        return hit

    def _one(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            hit = self._mem.get(key)
        if hit is None and self.folder is not None:
            hit = self._read(key)
        return hit

    def _read(self, key: str) -> dict[str, Any] | None:
        """The folder's entry for ``key``: a regular file of at most files.REPLY_CACHE_LIMIT bytes;
        a FIFO, a device, a folder or a huge file in its place is a miss, never a read that blocks
        or fills the memory — and, like a file that holds no entry, a damaged one (:meth:`_damaged`)."""
        path = self._file(key)
        try:
            data = json.loads(read_bounded(path, REPLY_CACHE_LIMIT, "reply-cache entry"))
        except FileRefused as exc:
            if not exc.missing:  # (its words after the path: "is a FIFO, not a file", "is 9,000,000 bytes, …")
                text = str(exc)
                at = text.find(str(path))
                self._damaged(path, text[at + len(str(path)):].strip(" :") if at >= 0 else text)
            return None
        except (OSError, ValueError, RecursionError) as exc:  # a bad JSON is a ValueError
            self._damaged(path, "not JSON" if isinstance(exc, ValueError) else "cannot be read")
            return None
        if not (isinstance(data, dict) and isinstance(data.get("reply"), str)):
            self._damaged(path, "JSON without a reply")
            return None
        with self._lock:
            self._mem[key] = data
        return data

    def _damaged(self, path: Path, why: str) -> None:
        """An entry's file that holds no entry: counted, and the first said in one line."""
        with self._lock:
            self.damaged += 1
            first = self.damaged == 1
        if first:
            import sys

            print(f"mirofish: warning: reply cache entry {path} is damaged ({why}); it is read as a miss, as is "
                  f"any other damaged entry (counted: cache_damaged)", file=sys.stderr, flush=True)

    def put(self, key: str, reply: str | None, prompt_tokens: int = 0, completion_tokens: int = 0,
            model: str = "") -> None:
        """Keep a reply the server gave (None — no reply — is not kept)."""
        if reply is None:
            return
        entry = {"reply": reply, "prompt_tokens": int(prompt_tokens), "completion_tokens": int(completion_tokens),
                 "model": model}
        with self._lock:
            if key in self._mem:
                return
            self._mem[key] = entry
            self.stored += 1
        if self.folder is not None:
            path = self._file(key)
            tmp = None
            try:
                text = json.dumps(entry)  # ASCII: its length is its size in bytes
                if len(text) > REPLY_CACHE_LIMIT:
                    return  # an entry over the limit would be a miss when read: kept in memory only
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
                with os.fdopen(fd, "w") as fh:
                    fh.write(text)
                os.replace(tmp, path)  # (fails where the entry's name is taken by a folder)
                tmp = None
            except OSError:
                pass  # a cache that cannot be written is only a slower cache
            finally:
                if tmp is not None:  # no temporary file left behind
                    Path(tmp).unlink(missing_ok=True)

    def fill(self, calls: Iterable[dict[str, Any]]) -> int:
        """Add the replies of recorded exchanges (dicts with ``key``, ``reply``, tokens);
        returns how many were new."""
        before = self.stored
        for c in calls:
            if c.get("reply") is not None and c.get("key"):
                self.put(c["key"], c["reply"], c.get("prompt_tokens", 0), c.get("completion_tokens", 0),
                         c.get("model", ""))
        return self.stored - before

    def status(self) -> dict[str, Any]:
        return {"cache_hits": self.hits, "cache_misses": self.misses, "cached_replies": len(self._mem),
                "folder": str(self.folder) if self.folder is not None else None,
                **({"damaged_entries": self.damaged} if self.damaged else {})}
