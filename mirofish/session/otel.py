"""A model run's exchanges as OpenTelemetry traces: OTLP/JSON with the GenAI semantic conventions.

``python run.py export REC --otel trace.json [--otel-content events|attributes|none] [--otel-anchor WHEN]``

The file is one ``ExportTraceServiceRequest`` in the OTLP/JSON encoding (what an OTLP/HTTP
receiver takes at ``/v1/traces`` with ``Content-Type: application/json``): ids as hex strings,
times as unix-nanosecond strings, enums as integers. One trace per recording:

* a root span ``mirofish run`` (scene, seed, ticks, brain kind …);
* under it one span per fish that asked a model, ``fish N``;
* under each fish one CLIENT span per model exchange, ``chat {model}``, with the GenAI
  attributes (``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.request.*``,
  ``gen_ai.response.*``, ``gen_ai.usage.*``, ``server.*``) and the tank's own (``mirofish.*``);
  the prompt and the reply as span events (``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.choice``), or as the newer ``gen_ai.input.messages``/``gen_ai.output.messages``
  attributes, or left out. An exchange with no reply has status ERROR with its reason.

Everything is derived from the recording alone, so exporting it again gives the same bytes:
the trace id is a digest of the recording's header (which holds its checksum), each span id a
digest of the trace id and the span's place, and the times are **simulated**: a request asked
at tick T starts ``(T - first tick) x world.tick_seconds`` after the anchor (the recording's
``created`` time, or the Unix epoch for a header without one), and lasts its recorded
``latency_s``. docs/traces.md has the attribute table and how to send the file to a collector.

No OpenTelemetry package is needed to write the file (the ``otel`` extra only reads it back).

Whatever a recording holds, the file is valid OTLP: a value it cannot hold as it is (a latency
that runs past the last representable time, a token count beyond int64, a NaN or infinite
number, a negative duration, a time before 1970) is clamped into range or its attribute left
out, and how many were is the summary's ``out_of_range`` and, when not 0, the resource attribute
``mirofish.out_of_range``. Times end at ``LAST_NS`` (2262-04-11, the last signed 64-bit
nanosecond: what collectors turn a span's time into); an anchor that would put the run's ticks
past it is refused (``RecordingError``, one line). A recording never holds an API key; as a
second guard the text fields of the request (string attribute values, names, status messages;
never ids, times or numbers) are scrubbed one by one: every URL's credentials removed
(``redact_url``/``redact_text``), and the values of the key variables the run's config names
replaced by ``***`` where a field holds them, if they are at least ``MIN_SECRET`` (8)
characters: a shorter value (``true``, ``span``, ``1000``) is no real key and would match
ordinary words and numbers.
"""

from __future__ import annotations

import base64
import calendar
import hashlib
import json
import math
import os
import tempfile
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..brains.exchanges import TEMPERATURE, canonical
from ..config import Config, redact_text, redact_url
from ..observe.paths import OutputError, WriterLock, check_output
from ..observe.recording import TICK_SCENE, Recording, RecordingError, recording_scene

CONTENT = ("events", "attributes", "none")  # --otel-content: where the prompts and replies go
PROVIDER = "openai"  # every model server is spoken to as an OpenAI-compatible endpoint
SCOPE = "mirofish.otel"
SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT = 1, 3  # opentelemetry.proto.trace.v1.Span.SpanKind
STATUS_ERROR = 2  # opentelemetry.proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # an AnyValue's intValue
# The last time written (2262-04-11T23:47:16.854775807Z). OTLP's times are fixed64 (up to 2554),
# but collectors and backends hold a time as signed 64-bit nanoseconds (a Go time.Time from
# int64(t)): past this a receiver would read the span as before 1970.
LAST_NS = INT64_MAX
MIN_SECRET = 8  # a key variable's value shorter than this is never matched (see _Scrub)



# ---------------------------------------------------------------- OTLP/JSON values


def any_value(value: Any) -> dict[str, Any]:
    """An OTLP ``AnyValue`` in JSON: bool, int (as a decimal string), float, string or array."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def attributes(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    """``KeyValue`` list of the pairs whose value is not None, in the order given."""
    return [{"key": k, "value": any_value(v)} for k, v in pairs.items() if v is not None]


class _Fit:
    """Keeps every number of the request one OTLP can hold, and counts those it had to change:
    a recorded value that is not a number at all, or out of range, is clamped into range or its
    attribute left out (an exported file is never invalid, and never an OverflowError)."""

    def __init__(self) -> None:
        self.count = 0

    def real(self, value: Any, default: float | None = None) -> float | None:
        """``value`` as a float (perhaps not finite: :meth:`attributes` leaves those out),
        ``default`` when absent, None (counted) when it is no number."""
        if value is None:
            return default
        if isinstance(value, (int, float, str)):
            try:
                return float(value)
            except OverflowError:  # an int past a float's range
                return math.inf if int(value) > 0 else -math.inf
            except ValueError:
                pass
        self.count += 1
        return None

    def whole(self, value: Any, default: int | None = None) -> int | None:
        """``value`` as an int (perhaps past int64: :meth:`attributes` clamps those), ``default``
        when absent, None (counted) when it is no finite number."""
        if value is None:
            return default
        if isinstance(value, int):
            return int(value)
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
        real = self.real(value)
        if real is None:
            return None
        if not math.isfinite(real):
            self.count += 1
            return None
        return int(real)

    def time(self, ns: int) -> int:
        """A time in unix nanoseconds, clamped into ``[0, LAST_NS]``."""
        if 0 <= ns <= LAST_NS:
            return ns
        self.count += 1
        return min(max(ns, 0), LAST_NS)

    def end(self, start: int, latency: Any) -> int:
        """When a request that started at ``start`` and lasted ``latency`` seconds ended: a
        negative or NaN latency lasts 0, one past the last time ends at ``LAST_NS``."""
        seconds = self.real(latency, 0.0)
        if seconds is None:
            return start
        ns = seconds * 1e9
        if math.isnan(ns) or ns < -0.5:
            self.count += 1
            return start
        if ns > LAST_NS - start:
            self.count += 1
            return LAST_NS
        return start + int(round(ns))

    def value(self, v: dict[str, Any]) -> dict[str, Any] | None:
        """An ``AnyValue`` OTLP holds: an int clamped to int64, None for a NaN or infinite double."""
        if "intValue" in v:
            n = int(v["intValue"])
            if not INT64_MIN <= n <= INT64_MAX:
                self.count += 1
                return {"intValue": str(min(max(n, INT64_MIN), INT64_MAX))}
        elif "doubleValue" in v:
            if not math.isfinite(v["doubleValue"]):
                self.count += 1
                return None
        elif "arrayValue" in v:
            kept = (self.value(x) for x in v["arrayValue"]["values"])
            return {"arrayValue": {"values": [x for x in kept if x is not None]}}
        return v

    def attributes(self, pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for kv in pairs:
            v = self.value(kv["value"])
            if v is not None:
                out.append({"key": kv["key"], "value": v})
        return out

    def request(self, request: dict[str, Any]) -> None:
        """Every attribute and time of ``request`` (in place) made one OTLP holds."""
        for rs in request["resourceSpans"]:
            rs["resource"]["attributes"] = self.attributes(rs["resource"]["attributes"])
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    start = self.time(int(span["startTimeUnixNano"]))
                    end = self.time(int(span["endTimeUnixNano"]))
                    if end < start:
                        self.count += 1
                        end = start
                    span["startTimeUnixNano"], span["endTimeUnixNano"] = str(start), str(end)
                    span["attributes"] = self.attributes(span["attributes"])
                    for event in span.get("events", ()):
                        event["timeUnixNano"] = str(self.time(int(event["timeUnixNano"])))
                        event["attributes"] = self.attributes(event["attributes"])


def _iso(ns: int) -> str:
    try:
        return datetime.fromtimestamp(ns // 10**9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError, OSError):
        return f"{ns} ns after 1970"


def _id(seed: str, size: int) -> str:
    """A non-zero hex id of ``size`` bytes derived from ``seed`` (an all-zero id is invalid)."""
    raw = hashlib.blake2b(seed.encode(), digest_size=size).digest()
    return (raw if any(raw) else b"\x01" + raw[1:]).hex()


def trace_id_of(header: dict[str, Any]) -> str:
    """The trace id of a recording: a digest of its whole header (seed, config, created time,
    checksum …), so the same file always gives the same trace and two runs never share one."""
    return _id("mirofish trace " + canonical(header), 16)


# ---------------------------------------------------------------- time


def parse_anchor(text: str | None, header: dict[str, Any]) -> int:
    """Unix nanoseconds of the run's first tick: ``created`` (default: the header's creation
    time, the Unix epoch when it has none), ``now``, or an ISO-8601 time (UTC unless it says)."""
    if text is None or text == "created":
        created = header.get("created")
        if not isinstance(created, str):
            return 0
        try:
            return calendar.timegm(time.strptime(created, "%Y-%m-%dT%H:%M:%SZ")) * 10**9
        except ValueError:
            return 0
    if text == "now":
        return time.time_ns()
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise RecordingError(f"--otel-anchor {text!r} is not created, now or an ISO-8601 time "
                             f"(e.g. 2025-01-31T12:00:00Z)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = when.timestamp()
    if seconds < 0:
        raise RecordingError(f"--otel-anchor {text!r} is before 1970 (OTLP times are unix nanoseconds)")
    return int(round(seconds * 1e6)) * 1000


# ---------------------------------------------------------------- secrets


def key_secrets(cfg: Config) -> set[str]:
    """The values, in this process's environment, of every API-key variable the config names
    (and the credentials of any URL it holds): what must never reach the file."""
    from ..brains.transport import secrets_of

    names = {cfg.brain.api_key_env}
    urls = []
    for tier in (cfg.brain.small, cfg.brain.large):
        for ep in tier.endpoints:
            urls.append(ep.base_url)
            if ep.api_key_env:
                names.add(ep.api_key_env)
    for grp in cfg.fish.groups:
        if grp.api_key_env:
            names.add(grp.api_key_env)
        if grp.base_url:
            urls.append(grp.base_url)
    out: set[str] = set()
    for name in sorted(names):
        out |= secrets_of("", os.environ.get(name))
    for url in urls:
        out |= {s for s in secrets_of(url, None) if s != "***"}
    return out


# ---------------------------------------------------------------- spans


def _server(endpoint: str) -> tuple[str | None, int | None]:
    """``server.address`` and ``server.port`` of a recorded (credential-free) endpoint."""
    try:
        parts = urlsplit(endpoint)
        port = parts.port
    except ValueError:
        return None, None
    if not parts.hostname:
        return None, None
    return parts.hostname, port or {"http": 80, "https": 443}.get(parts.scheme)


def _messages(call: dict[str, Any], texts: dict[str, str]) -> tuple[str, str, str | None]:
    system = texts.get(call["prefix"], "") if call.get("prefix") else ""
    return system, str(call.get("user") or ""), call.get("reply")


def exchange_span(call: dict[str, Any], texts: dict[str, str], seed: int, trace_id: str, span_id: str,
                  parent: str, start: int, end: int, content: str, fit: _Fit | None = None,
                  fallback_at: int | None = None) -> dict[str, Any]:
    """One model exchange as a CLIENT span (GenAI semantic conventions); ``fit`` counts the
    recorded values that are no numbers (their attributes are left out)."""
    fit = fit or _Fit()
    model = str(call.get("model") or "unknown")
    replied = call.get("reply") is not None
    host, port = _server(str(call.get("endpoint") or ""))
    finish = call.get("finish_reason")
    temperature = call.get("temperature")
    top_p = call.get("top_p")
    schema = bool(call.get("schema")) and call.get("format") != "plain"
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.system": PROVIDER,
        "gen_ai.request.model": model,
        "gen_ai.response.model": str(call.get("response_model") or model) if replied else None,
        "gen_ai.request.max_tokens": fit.whole(call.get("max_tokens"), 0),
        "gen_ai.request.temperature": fit.real(temperature, float(TEMPERATURE)),
        "gen_ai.request.top_p": fit.real(top_p),
        "gen_ai.request.seed": fit.whole(call.get("seed"), seed),
        "gen_ai.output.type": "json" if schema else "text",
        "gen_ai.usage.input_tokens": _tokens(fit, call.get("prompt_tokens")),
        "gen_ai.usage.output_tokens": _tokens(fit, call.get("completion_tokens")),
        "gen_ai.response.finish_reasons": [str(finish)] if finish else None,
        "gen_ai.openai.response.system_fingerprint": call.get("system_fingerprint") or None,
        "server.address": host,
        "server.port": port,
        "error.type": None if replied else str(call.get("read") or "no_reply"),
        "mirofish.fish": int(call["fish"]),
        "mirofish.tick": int(call["tick"]),
        "mirofish.asked": fit.whole(call.get("asked"), int(call["tick"])),
        "mirofish.kind": str(call.get("kind") or "decision"),
        "mirofish.tier": str(call["tier"]) if call.get("tier") else None,
        "mirofish.read": str(call.get("read") or ""),
        "mirofish.cached": bool(call.get("cached")),
        "mirofish.retries": fit.whole(call.get("retries"), 0),
        "mirofish.format": call.get("format") or None,
        "mirofish.group": str(call["group"]) if call.get("group") is not None else None,
    }
    system, user, reply = _messages(call, texts)
    events: list[dict[str, Any]] = []
    if content == "attributes":
        if system:
            attrs["gen_ai.system_instructions"] = json.dumps([{"type": "text", "content": system}],
                                                             ensure_ascii=False)
        attrs["gen_ai.input.messages"] = json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": user}]}], ensure_ascii=False)
        if replied:
            out = {"role": "assistant", "parts": [{"type": "text", "content": reply}],
                   **({"finish_reason": str(finish)} if finish else {})}
            attrs["gen_ai.output.messages"] = json.dumps([out], ensure_ascii=False)
    elif content == "events":
        if system:
            events.append(_event("gen_ai.system.message", start, {"gen_ai.system": PROVIDER, "role": "system",
                                                                  "content": system}))
        events.append(_event("gen_ai.user.message", start, {"gen_ai.system": PROVIDER, "role": "user",
                                                            "content": user}))
        if replied:
            events.append(_event("gen_ai.choice", end, {"gen_ai.system": PROVIDER, "index": 0,
                                                        "finish_reason": str(finish) if finish else None,
                                                        "role": "assistant", "content": reply}))
    span: dict[str, Any] = {
        "traceId": trace_id, "spanId": span_id, "parentSpanId": parent, "name": f"chat {model}",
        "kind": SPAN_KIND_CLIENT, "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
        "attributes": attributes(attrs),
    }
    if isinstance(call.get("fallback_tick"), int) and fallback_at is not None:  # a late answer used
        span["attributes"] += attributes({"mirofish.late_answer": True,
                                          "mirofish.fallback_tick": call["fallback_tick"]})
        events.append(_event("mirofish.fallback_answered", min(max(start, fallback_at), end),
                             {"mirofish.tick": call["fallback_tick"]}))
    if events:
        span["events"] = events
    if not replied:
        span["status"] = {"code": STATUS_ERROR, "message": f"no reply: {call.get('read') or 'failed'}"}
    return span


def one_a_request(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The exchanges as HTTP requests: a request that ran past ``brain.request_timeout_s`` is
    kept twice by the recording — the fallback's record (no reply, ``timeout``) and, when its
    late answer was used, the answer's — and is one span here, the answer's, marked with the
    tick the fallback answered at (``mirofish.fallback_tick``, an event on the span)."""
    out: list[dict[str, Any]] = []
    open_: dict[tuple[int, int, str], int] = {}  # (fish, asked, kind) → index of its fallback's record
    for c in calls:
        key = (int(c["fish"]), _asked(c), str(c.get("kind") or "decision"))
        if c.get("reply") is None and c.get("read") == "timeout":
            open_[key] = len(out)
            out.append(c)
            continue
        j = open_.pop(key, None)
        if j is not None and c.get("reply") is not None:
            out[j] = {**c, "fallback_tick": out[j]["tick"]}  # the late answer, where its request's span is
            continue
        out.append(c)
    return out


def _asked(call: dict[str, Any]) -> int:
    """The tick an exchange was asked at (its tick where the recorded one is no number: the
    span's ``mirofish.asked`` counts that)."""
    asked = _Fit().whole(call.get("asked"), int(call["tick"]))
    return int(call["tick"]) if asked is None else asked


def _tokens(fit: _Fit, value: Any) -> int | None:
    """A token count: a whole number from 0 (a negative one is out of range: 0, counted)."""
    n = fit.whole(value, 0)
    if n is not None and n < 0:
        fit.count += 1
        return 0
    return n


def _event(name: str, at: int, attrs: dict[str, Any]) -> dict[str, Any]:
    return {"timeUnixNano": str(at), "name": name, "attributes": attributes(attrs)}


def _internal(trace_id: str, span_id: str, parent: str | None, name: str, start: int, end: int,
              attrs: dict[str, Any]) -> dict[str, Any]:
    span: dict[str, Any] = {"traceId": trace_id, "spanId": span_id}
    if parent:
        span["parentSpanId"] = parent
    span.update({"name": name, "kind": SPAN_KIND_INTERNAL, "startTimeUnixNano": str(start),
                 "endTimeUnixNano": str(end), "attributes": attributes(attrs)})
    return span


def build_request(rec: Recording, calls: list[dict[str, Any]], content: str = "events",
                  anchor: int | None = None, texts: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``ExportTraceServiceRequest`` (OTLP/JSON, as a dict) of a recording's exchanges, every
    value one OTLP holds (the resource's ``mirofish.out_of_range``: how many were clamped or left
    out); an anchor that puts the run's ticks past ``LAST_NS`` is refused."""
    from .. import __version__

    if content not in CONTENT:
        raise RecordingError(f"--otel-content must be one of {', '.join(CONTENT)}, got {content!r}")
    cfg, header = rec.config, rec.header
    trace_id = trace_id_of(header)
    base = parse_anchor(None, header) if anchor is None else anchor
    tick_ns = int(round(cfg.world.tick_seconds * 1e9))
    if base < 0 or base + (rec.last_tick - rec.first_tick) * tick_ns > LAST_NS:
        raise RecordingError(f"the anchor {_iso(base)} (--otel-anchor, by default the recording's created time) "
                             f"puts the run's {rec.last_tick - rec.first_tick} ticks past {_iso(LAST_NS)}, the last "
                             f"time OTLP's nanosecond timestamps hold; give an earlier --otel-anchor")
    run_id = _id(trace_id + " run", 8)
    texts = {**rec.texts(), **(texts or {})}  # (a survey's exchanges bring their own shared texts)
    calls = one_a_request(calls)
    fit = _Fit()

    def at(tick: int) -> int:
        return fit.time(base + (tick - rec.first_tick) * tick_ns)

    spans: list[dict[str, Any]] = []
    fish_spans: dict[int, dict[str, Any]] = {}
    fish_ids = {f: _id(f"{trace_id} fish {f}", 8) for f in sorted({int(c["fish"]) for c in calls})}
    busy: dict[tuple[int, int], int] = {}  # (fish, asked tick) → when its previous request ended
    tokens_in: list[int] = []
    tokens_out: list[int] = []
    for i, c in enumerate(calls):
        fish, asked = int(c["fish"]), _asked(c)
        start = max(at(asked), busy.get((fish, asked), 0))  # a fish's requests of one tick: one after another
        end = fit.end(start, c.get("latency_s"))
        busy[(fish, asked)] = end
        late = c.get("fallback_tick")
        spans.append(exchange_span(c, texts, cfg.seed, trace_id, _id(f"{trace_id} call {i}", 8), fish_ids[fish],
                                   start, end, content, fit, at(late) if isinstance(late, int) else None))
        tokens_in.append(_tokens(_Fit(), c.get("prompt_tokens")) or 0)  # (counted once, in the span)
        tokens_out.append(_tokens(_Fit(), c.get("completion_tokens")) or 0)
        agg = fish_spans.setdefault(fish, {"start": start, "end": end, "n": 0, "failed": 0, "in": 0, "out": 0,
                                           "decisions": 0, "summaries": 0, "group": None})
        agg["start"], agg["end"] = min(agg["start"], start), max(agg["end"], end)
        agg["n"] += 1
        agg["failed"] += c.get("reply") is None
        agg["in"] += tokens_in[-1]
        agg["out"] += tokens_out[-1]
        agg["decisions" if c.get("kind", "decision") == "decision" else "summaries"] += 1
        if agg["group"] is None and c.get("group") is not None:
            agg["group"] = str(c["group"])
    run_start, run_end = at(rec.first_tick), at(rec.last_tick)
    parents = []
    for fish, agg in sorted(fish_spans.items()):
        parents.append(_internal(trace_id, fish_ids[fish], run_id, f"fish {fish}", agg["start"], agg["end"], {
            "mirofish.fish": fish, "mirofish.group": agg["group"], "mirofish.exchanges": agg["n"],
            "mirofish.decisions": agg["decisions"], "mirofish.summaries": agg["summaries"],
            "mirofish.failed": agg["failed"], "mirofish.tokens.input": agg["in"],
            "mirofish.tokens.output": agg["out"]}))
        run_start, run_end = min(run_start, agg["start"]), max(run_end, agg["end"])
    groups = [g.name for g in cfg.fish.groups]
    root = _internal(trace_id, run_id, None, "mirofish run", run_start, run_end, {
        "mirofish.scene": str(header.get("scene", TICK_SCENE)),
        "mirofish.seed": int(cfg.seed),
        "mirofish.ticks": rec.last_tick - rec.first_tick,
        "mirofish.first_tick": rec.first_tick,
        "mirofish.last_tick": rec.last_tick,
        "mirofish.tick_seconds": float(cfg.world.tick_seconds),
        "mirofish.brain.kind": cfg.brain.kind,
        "mirofish.brain.decides": cfg.brain.decides,
        "mirofish.engine.mode": cfg.engine.mode,
        "mirofish.fish.count": cfg.fish.count,
        "mirofish.groups": groups or None,
        "mirofish.exchanges": len(calls),
        "mirofish.failed": sum(1 for c in calls if c.get("reply") is None),
        "mirofish.tokens.input": sum(tokens_in),
        "mirofish.tokens.output": sum(tokens_out),
        "mirofish.created": header.get("created") if isinstance(header.get("created"), str) else None,
        "mirofish.code_version": str(header["code_version"]) if "code_version" in header else None,
        "mirofish.fork_tick": int(header["fork_tick"]) if isinstance(header.get("fork_tick"), int) else None,
        "mirofish.simulated_time": True,
    })
    resource = attributes({"service.name": "mirofish", "service.version": __version__,
                           "mirofish.scene": str(header.get("scene", TICK_SCENE))})
    request: dict[str, Any] = {"resourceSpans": [{
        "resource": {"attributes": resource},
        "scopeSpans": [{"scope": {"name": SCOPE, "version": __version__}, "spans": [root, *parents, *spans]}],
    }]}
    fit.request(request)
    if fit.count:
        request["resourceSpans"][0]["resource"]["attributes"] += attributes({"mirofish.out_of_range": fit.count})
    return request


# ---------------------------------------------------------------- the command


def _recording(path: str | Path) -> Recording:
    """The aquarium recording at ``path``, or a one-line refusal naming why it has no exchanges."""
    scene = recording_scene(path)  # (a missing, damaged or foreign file: one line)
    if scene != TICK_SCENE:
        why = "its scene keeps no model exchanges"  # (the command line names why: its spec's no_exchanges)
        raise RecordingError(f"{path} is a {scene} recording: {why}; export --otel writes an aquarium model run's "
                             f"exchanges")
    return Recording(path)


def _no_exchanges(rec: Recording, lo: int | None = None, hi: int | None = None) -> str:
    """Why the recording has no exchange to export in ticks ``[lo, hi)``, truly: no model asked,
    exchanges not kept, or — where the fallback decided for fish whose requests got no reply the
    recording keeps (a tick that gave up on a dripping or hung server keeps no exchange) — how
    many and why; only a range without any decision is "no fish asked"."""
    cfg = rec.config
    asked = cfg.brain.kind == "llm" or any(g.model for g in cfg.fish.groups)
    if not asked:
        return f"{rec.path} holds no model exchange: a run of the {cfg.brain.kind} brain asks no model"
    if not cfg.record.model_calls:
        return f"{rec.path} holds no model exchange: it was recorded with record.model_calls = false"
    fell = _fallbacks(rec, rec.first_tick if lo is None else lo, rec.last_tick if hi is None else hi)
    if fell:
        why = ", ".join(f"{k} {n}" for k, n in sorted(fell.items(), key=lambda kv: (-kv[1], kv[0])))
        n = sum(fell.values())
        return (f"{rec.path} holds no model exchange in the ticks exported: no model reply was kept — the fallback "
                f"decided {n} time{'s' if n != 1 else ''} there ({why}; a request given up before its answer, or "
                f"never sent, keeps no exchange)")
    return f"{rec.path} holds no model exchange (no fish asked its model in the ticks exported)"


def _fallbacks(rec: Recording, lo: int, hi: int) -> dict[str, int]:
    """The fallback's decisions in ticks ``[lo, hi)`` by reason (the recorded decisions' status)."""
    from collections import Counter

    from ..brains.base import TIER_INDEX, status_name

    out: Counter[str] = Counter()
    fallback = TIER_INDEX["fallback"]
    for tick0, d, _ in rec.chunks(lo, hi):
        ticks = tick0 + d["dt"].astype(int)
        sel = (ticks >= lo) & (ticks < hi) & (d["tier"] == fallback)
        for code in d["status"][sel].tolist():
            out[status_name(int(code))] += 1
    return dict(out)


def write_atomically(path: Path, text: str) -> None:
    """``text`` into ``path`` through a temporary file beside it (a reader never sees half a file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_otel(path: str | Path, out: str | Path, content: str = "events", anchor: str | None = None,
                t0: int | None = None, t1: int | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Write the model exchanges of the recording at ``path`` (ticks ``[t0, t1)``, default all)
    to ``out`` as OTLP/JSON; returns what was written (spans, trace id, bytes)."""
    start = time.perf_counter()
    if content not in CONTENT:
        raise RecordingError(f"--otel-content must be one of {', '.join(CONTENT)}, got {content!r}")
    try:
        target = check_output(out, (path,), overwrite, "trace")
    except OutputError as exc:
        raise RecordingError(str(exc)) from None
    rec = _recording(path)
    try:
        lo = rec.first_tick if t0 is None else t0
        hi = rec.last_tick if t1 is None else t1
        if not rec.first_tick <= lo < hi <= rec.last_tick:
            raise RecordingError(f"--from {lo} --to {hi} is not a range inside this recording "
                                 f"(ticks {rec.first_tick}..{rec.last_tick})")
        calls = rec.model_calls(lo, hi)
        if not calls:
            raise RecordingError(_no_exchanges(rec, lo, hi))
        request = build_request(rec, calls, content, parse_anchor(anchor, rec.header))
        calls = one_a_request(calls)  # the spans: one a request
        secrets = key_secrets(rec.config)
    finally:
        rec.close()
    scrub = _Scrub(secrets)
    scrub.walk(request)
    # allow_nan=False: a NaN would be no JSON (build_request left none; never write one)
    text = json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
    try:
        lock = WriterLock(target)
    except OutputError as exc:
        raise RecordingError(str(exc)) from None
    try:
        write_atomically(target, text)
    finally:
        lock.release()
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    resource = {kv["key"]: kv["value"] for kv in request["resourceSpans"][0]["resource"]["attributes"]}
    out_of_range = int(resource.get("mirofish.out_of_range", {}).get("intValue", 0))
    summary = {"otel": str(target), "trace_id": spans[0]["traceId"], "spans": len(spans),
               "exchange_spans": len(calls), "fish_spans": len(spans) - len(calls) - 1,
               "errors": sum(1 for c in calls if c.get("reply") is None),
               "late_answers": sum(1 for c in calls if "fallback_tick" in c), "from": lo, "to": hi,
               "content": content, "out_of_range": out_of_range, "bytes": target.stat().st_size,
               "seconds": round(time.perf_counter() - start, 2)}
    if scrub.count:
        summary["secrets_scrubbed"] = scrub.count
    return summary


class _Scrub:
    """The second guard against a key in the file, field by field (never over the serialized
    text, which a short value would corrupt): each text field of the request (a string
    attribute value, a span's or event's name, a status message — never an id, a time or a
    number) loses every URL's credentials (``redact_url``/``redact_text``) and every occurrence
    of a key value, as it is, JSON-escaped (inside ``gen_ai.*.messages``) or base64-encoded.
    Only values of at least ``MIN_SECRET`` characters are looked for: a shorter one (``true``,
    ``span``, ``1000``) is no real key and would match ordinary words and numbers."""

    FIELDS = frozenset({"stringValue", "name", "message"})

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = set()
        for secret in secrets:
            if len(secret) >= MIN_SECRET:
                forms |= {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
                          base64.b64encode(secret.encode()).decode()}
        self.forms = sorted(forms, key=lambda f: (-len(f), f))
        self.count = 0  # the fields changed

    def text(self, value: str) -> str:
        clean = redact_text(value)
        if clean and not any(ch.isspace() for ch in clean) and "://" in clean:
            clean = redact_url(clean)  # a field that is one URL
        for form in self.forms:
            if form in clean:
                clean = clean.replace(form, "***")
        if clean != value:
            self.count += 1
        return clean

    def walk(self, node: Any) -> None:
        """Every text field of ``node`` (a request, in place) scrubbed."""
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, str):
                    if key in self.FIELDS:
                        node[key] = self.text(value)
                else:
                    self.walk(value)
        elif isinstance(node, list):
            for item in node:
                self.walk(item)
