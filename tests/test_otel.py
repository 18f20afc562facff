"""Traces out: ``export REC --otel FILE.json`` writes a model run's exchanges as OTLP/JSON that the
OpenTelemetry protobuf classes read, one GenAI CLIENT span per recorded exchange, never a key.

The runs are real: ``live --headless --brain llm`` against the bundled OpenAI-compatible test
server on 127.0.0.1 (nothing patches the client), recorded, then exported through the CLI.
"""

import base64
import calendar
import itertools
import json
import math
import os
import random
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict, Parse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from mirofish.brains.testserver import TestServer
from mirofish.cli import main
from mirofish.observe.paths import WriterLock
from mirofish.observe.recording import Recording, content_digest
from mirofish.session.otel import INT64_MAX, LAST_NS

CANARY = "sk-canary-0tel-4b9e2f"
ROOT = Path(__file__).resolve().parent.parent


def record(path: Path, url: str, ticks: int = 120, fish: int = 8, *more: str) -> None:
    argv = ["live", "--headless", "--ticks", str(ticks), "--fish", str(fish), "--brain", "llm", "--base-url", url,
            "--model", "fish-mini", "--record", str(path), *more]
    assert main(argv) == 0


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two recorded model runs with a canary key in OPENAI_API_KEY: one against a server that
    echoes the Authorization header into every reply, one whose server fails every other request
    (no retries, so those exchanges have no reply)."""
    folder = tmp_path_factory.mktemp("otel")
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = CANARY
    try:
        with TestServer(fault="echo_auth") as server:
            # summaries in requests of their own: the export has both kinds of exchange
            record(folder / "echo.db", server.url, 120, 8, "--set", "brain.summaries=own_request")
            echoed, port = set(server.seen_auth), server.port
        with TestServer(fault="500", fault_every=2) as server:
            record(folder / "failing.db", server.url, 60, 6, "--set", "brain.max_retries=0")
    finally:
        if before is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = before
    assert any(CANARY in a for a in echoed)  # the key did reach the server, which echoed it back
    return {"echo": folder / "echo.db", "failing": folder / "failing.db", "port": port, "folder": folder}


def export(capsys, rec: Path, out: Path, *more: str) -> dict:
    code = main(["export", str(rec), "--otel", str(out), *more])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    return json.loads(printed.out)


def no_constant(name: str):
    raise AssertionError(f"{name} is not JSON")


def parse(text: str) -> ExportTraceServiceRequest:
    """The file read by the real OTLP classes. OTLP/JSON writes ids as hex (the protocol's rule),
    where protobuf's generic JSON mapping expects base64 for bytes: convert them as a receiver does."""
    json.loads(text, parse_constant=no_constant)  # strict JSON: no NaN, no Infinity
    Parse(text, ExportTraceServiceRequest())  # the file as it is parses …
    data = json.loads(text)
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        assert span[key] == span[key].lower() and len(span[key]) in (16, 32)
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return Parse(json.dumps(data), ExportTraceServiceRequest())  # … and with its ids as bytes


def spans_of(req: ExportTraceServiceRequest) -> list[Span]:
    assert len(req.resource_spans) == 1 and len(req.resource_spans[0].scope_spans) == 1
    return list(req.resource_spans[0].scope_spans[0].spans)


def attrs(span) -> dict:
    return {a.key: MessageToDict(a.value) for a in span.attributes}


def value(span, key: str):
    v = attrs(span)[key]
    (kind, x), = v.items()
    return int(x) if kind == "intValue" else [next(iter(e.values())) for e in x["values"]] \
        if kind == "arrayValue" else x


def test_every_exchange_is_one_genai_span_with_the_recorded_tokens_under_one_trace(runs, tmp_path, capsys):
    rec = Recording(runs["echo"])
    calls, texts, cfg = rec.model_calls(), rec.texts(), rec.config
    created = calendar.timegm(time.strptime(rec.header["created"], "%Y-%m-%dT%H:%M:%SZ")) * 10**9
    rec.close()
    assert {c["kind"] for c in calls} == {"decision", "summary"}
    out = tmp_path / "trace.json"
    summary = export(capsys, runs["echo"], out)
    text = out.read_text()
    spans = spans_of(parse(text))
    chats = [s for s in spans if s.kind == Span.SPAN_KIND_CLIENT]
    assert len(chats) == len(calls) == summary["exchange_spans"] and summary["spans"] == len(spans)

    # one trace; every parent a span of the file; run → fish → exchange
    assert len({s.trace_id for s in spans}) == 1 and len(spans[0].trace_id) == 16 and any(spans[0].trace_id)
    assert spans[0].trace_id.hex() == summary["trace_id"]
    by_id = {s.span_id: s for s in spans}
    assert len(by_id) == len(spans) and all(len(i) == 8 for i in by_id)
    roots = [s for s in spans if not s.parent_span_id]
    assert [r.name for r in roots] == ["mirofish run"]
    root = roots[0]
    assert value(root, "mirofish.scene") == "aquarium" and value(root, "mirofish.seed") == cfg.seed
    assert value(root, "mirofish.ticks") == 120 and value(root, "mirofish.brain.kind") == "llm"
    fish_spans = {value(s, "mirofish.fish"): s for s in spans if s.name.startswith("fish ")}
    assert sorted(fish_spans) == sorted({c["fish"] for c in calls})
    assert all(s.parent_span_id == root.span_id and s.name == f"fish {f}" for f, s in fish_spans.items())

    for span, c in zip(chats, calls):  # in the recording's order
        a = {k: value(span, k) for k in attrs(span)}
        assert span.name == f"chat {c['model']}" == "chat fish-mini"
        assert by_id[span.parent_span_id] is fish_spans[c["fish"]]
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.provider.name"] == a["gen_ai.system"] == "openai"
        assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == "fish-mini"
        assert a["gen_ai.request.max_tokens"] == c["max_tokens"]
        assert a["gen_ai.request.temperature"] == c.get("temperature", 0)
        assert a["gen_ai.request.seed"] == cfg.seed
        assert a["gen_ai.usage.input_tokens"] == c["prompt_tokens"] > 0
        assert a["gen_ai.usage.output_tokens"] == c["completion_tokens"] > 0
        assert a["server.address"] == "127.0.0.1" and a["server.port"] == runs["port"]
        assert (a["mirofish.fish"], a["mirofish.tick"], a["mirofish.kind"], a["mirofish.tier"],
                a["mirofish.read"], a["mirofish.cached"]) == (c["fish"], c["tick"], c["kind"], c["tier"], c["read"],
                                                             c["cached"])
        for key in ("top_p", "system_fingerprint", "finish_reason", "group"):  # the keys newer recordings have
            if c.get(key) is not None:
                name = {"top_p": "gen_ai.request.top_p", "group": "mirofish.group",
                        "finish_reason": "gen_ai.response.finish_reasons",
                        "system_fingerprint": "gen_ai.openai.response.system_fingerprint"}[key]
                assert a[name] == ([c[key]] if key == "finish_reason" else c[key])
        assert span.status.code == Status.STATUS_CODE_UNSET
        # simulated time: asked at tick T → T × tick_seconds after the recording's creation; lasts latency_s
        assert span.start_time_unix_nano >= created + int(c["asked"] * cfg.world.tick_seconds * 1e9)
        assert span.end_time_unix_nano - span.start_time_unix_nano == round(c["latency_s"] * 1e9)
        parent = fish_spans[c["fish"]]
        assert parent.start_time_unix_nano <= span.start_time_unix_nano <= span.end_time_unix_nano \
            <= parent.end_time_unix_nano <= root.end_time_unix_nano
        events = {e.name: {x.key: MessageToDict(x.value) for x in e.attributes} for e in span.events}
        assert list(events) == ["gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"]
        assert events["gen_ai.system.message"]["content"]["stringValue"] == texts[c["prefix"]]
        assert events["gen_ai.user.message"]["content"]["stringValue"] == c["user"]
        assert events["gen_ai.choice"]["content"]["stringValue"] == c["reply"]
    # a fish's requests of one tick (its decision, then its summary) follow each other
    for f in fish_spans:
        mine = sorted((s.start_time_unix_nano, s.end_time_unix_nano) for s in chats if value(s, "mirofish.fish") == f)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(mine))

    # never the key: not as text, not base64-encoded (the server echoed it into every reply)
    raw = out.read_bytes()
    assert CANARY.encode() not in raw and base64.b64encode(f"Bearer {CANARY}".encode()) not in raw
    assert base64.b64encode(CANARY.encode()) not in raw
    # exporting again gives the same file
    assert export(capsys, runs["echo"], tmp_path / "again.json")["trace_id"] == summary["trace_id"]
    assert (tmp_path / "again.json").read_bytes() == raw


def test_a_failed_exchange_is_an_error_span_naming_its_reason(runs, tmp_path, capsys):
    rec = Recording(runs["failing"])
    calls = rec.model_calls()
    rec.close()
    failed = [c for c in calls if c["reply"] is None]
    assert failed and len(failed) < len(calls)
    summary = export(capsys, runs["failing"], tmp_path / "t.json")
    assert summary["errors"] == len(failed)
    chats = [s for s in spans_of(parse((tmp_path / "t.json").read_text())) if s.kind == Span.SPAN_KIND_CLIENT]
    assert len(chats) == len(calls)
    for span, c in zip(chats, calls):
        names = [e.name for e in span.events]
        if c["reply"] is None:
            assert span.status.code == Status.STATUS_CODE_ERROR and c["read"] in span.status.message
            assert value(span, "error.type") == c["read"] == value(span, "mirofish.read") == "http_500"
            assert "gen_ai.choice" not in names and "gen_ai.response.model" not in attrs(span)
        else:
            assert span.status.code == Status.STATUS_CODE_UNSET and "error.type" not in attrs(span)
            assert names[-1] == "gen_ai.choice"


def test_content_can_go_to_attributes_or_be_left_out(runs, tmp_path, capsys):
    rec = Recording(runs["echo"])
    calls = rec.model_calls()
    rec.close()
    export(capsys, runs["echo"], tmp_path / "none.json", "--otel-content", "none")
    text = (tmp_path / "none.json").read_text()
    chats = [s for s in spans_of(parse(text)) if s.kind == Span.SPAN_KIND_CLIENT]
    assert len(chats) == len(calls) and not any(s.events for s in chats)
    assert not any(c["user"][:40] in text for c in calls) and "Energy" not in text
    assert all(value(s, "gen_ai.usage.input_tokens") == c["prompt_tokens"] for s, c in zip(chats, calls))

    export(capsys, runs["echo"], tmp_path / "attrs.json", "--otel-content", "attributes", "--from", "20", "--to", "80")
    chats = [s for s in spans_of(parse((tmp_path / "attrs.json").read_text())) if s.kind == Span.SPAN_KIND_CLIENT]
    window = [c for c in calls if 20 <= c["tick"] < 80]
    assert window and len(chats) == len(window)
    for span, c in zip(chats, window):
        assert not span.events
        said = json.loads(value(span, "gen_ai.input.messages"))
        assert said == [{"role": "user", "parts": [{"type": "text", "content": c["user"]}]}]
        answer = json.loads(value(span, "gen_ai.output.messages"))
        assert answer[0]["role"] == "assistant" and answer[0]["parts"][0]["content"] == c["reply"]
        assert json.loads(value(span, "gen_ai.system_instructions"))[0]["type"] == "text"


def test_anchor_moves_every_time_by_the_same_offset(runs, tmp_path, capsys):
    export(capsys, runs["failing"], tmp_path / "a.json", "--otel-anchor", "2030-01-01T00:00:00Z")
    export(capsys, runs["failing"], tmp_path / "b.json")
    a, b = (spans_of(parse((tmp_path / n).read_text())) for n in ("a.json", "b.json"))
    shift = {x.start_time_unix_nano - y.start_time_unix_nano for x, y in zip(a, b)}
    assert len(shift) == 1
    assert a[0].start_time_unix_nano == calendar.timegm((2030, 1, 1, 0, 0, 0)) * 10**9


def refused(capsys, argv: list[str], needle: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and needle in err and "Traceback" not in err, err
    return err


def test_bad_input_is_one_line_and_exit_2(runs, tmp_path, capsys):
    out = tmp_path / "t.json"
    # a run of the embedded brain has no model exchange
    instinct = tmp_path / "instinct.db"
    assert main(["live", "--headless", "--ticks", "20", "--fish", "4", "--record", str(instinct)]) == 0
    capsys.readouterr()
    refused(capsys, ["export", str(instinct), "--otel", str(out)], "instinct brain")
    # a model run recorded without its exchanges
    plain = tmp_path / "plain.db"
    with TestServer() as server:
        record(plain, server.url, 20, 4, "--set", "record.model_calls=false")
    capsys.readouterr()
    refused(capsys, ["export", str(plain), "--otel", str(out)], "record.model_calls = false")
    assert not out.exists()
    # the output: an existing file only with --overwrite; never the input, a recording, a busy path
    out.write_text("{}")
    refused(capsys, ["export", str(runs["failing"]), "--otel", str(out)], "exists; add --overwrite")
    assert out.read_text() == "{}"
    export(capsys, runs["failing"], out, "--overwrite")
    refused(capsys, ["export", str(runs["failing"]), "--otel", str(runs["failing"]), "--overwrite"], "its input")
    refused(capsys, ["export", str(runs["failing"]), "--otel", str(runs["echo"]), "--overwrite"],
            "MiroFish recording")
    busy = tmp_path / "busy.json"
    lock = WriterLock(busy)  # what a run writing that path holds
    try:
        refused(capsys, ["export", str(runs["failing"]), "--otel", str(busy), "--overwrite"], "being written")
    finally:
        lock.release()
    refused(capsys, ["export", str(runs["failing"]), "--otel", str(tmp_path / "x.json"), "--tables",
                     str(tmp_path / "tables")], "one at a time")
    refused(capsys, ["export", str(runs["failing"]), "--otel", str(tmp_path / "x.json"), "--otel-anchor", "soon"],
            "--otel-anchor")
    refused(capsys, ["export", str(runs["failing"]), "--otel", str(tmp_path / "x.json"), "--from", "50", "--to",
                     "500"], "not a range")
    # a tampered recording (its checksum no longer matches) and one that is not a recording
    tampered = tmp_path / "tampered.db"
    tampered.write_bytes(runs["failing"].read_bytes())
    db = sqlite3.connect(tampered)
    db.execute("UPDATE header SET value = '8' WHERE key = 'seed'")
    db.commit()
    db.close()
    refused(capsys, ["export", str(tampered), "--otel", str(tmp_path / "x.json")], "modified after it was written")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
    refused(capsys, ["export", str(junk), "--otel", str(tmp_path / "x.json")], str(junk))
    refused(capsys, ["export", str(tmp_path / "missing.db"), "--otel", str(tmp_path / "x.json")], "not found")
    assert not (tmp_path / "x.json").exists()


def test_other_scenes_recordings_say_why_in_one_line(tmp_path, capsys):
    neg = tmp_path / "neg.db"
    assert main(["negotiation", "--headless", "--sessions", "1", "--record", str(neg)]) == 0
    game = tmp_path / "game.db"
    assert main(["referential", "--headless", "--rounds", "3", "--record", str(game)]) == 0
    capsys.readouterr()
    refused(capsys, ["export", str(neg), "--otel", str(tmp_path / "n.json")], "is a negotiation recording")
    refused(capsys, ["export", str(game), "--otel", str(tmp_path / "g.json")], "is a referential recording")


def test_the_command_as_a_user_runs_it(runs, tmp_path):
    """``python run.py export …`` in its own process: the JSON line on success; one line, exit 2, on a
    damaged file."""
    run = [sys.executable, str(ROOT / "run.py"), "export"]
    ok = subprocess.run([*run, str(runs["failing"]), "--otel", str(tmp_path / "t.json")], capture_output=True,
                        text=True, timeout=120)
    assert ok.returncode == 0 and json.loads(ok.stdout)["exchange_spans"] > 0, ok.stderr
    cut = tmp_path / "cut.db"
    cut.write_bytes(runs["failing"].read_bytes()[:4096])
    bad = subprocess.run([*run, str(cut), "--otel", str(tmp_path / "c.json")], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr, bad.stderr


def test_a_key_variable_s_value_is_never_written_even_if_a_text_held_it(runs, tmp_path, capsys, monkeypatch):
    """The second guard: whatever the run's key variable holds now (8 characters or more) is
    replaced by *** in every text field that holds it (here a value the recording does hold: the
    model's name, in the span's name and attributes)."""
    monkeypatch.setenv("OPENAI_API_KEY", "fish-mini")
    summary = export(capsys, runs["failing"], tmp_path / "t.json")
    text = (tmp_path / "t.json").read_text()
    assert "fish-mini" not in text and "chat ***" in text and summary["secrets_scrubbed"] > 0


# ---------------------------------------------------------------- damaged and crafted recordings


def damaged(src: Path, dst: Path, edit=None, header: dict | None = None) -> Path:
    """A copy of the recording ``src`` whose stored model exchanges ``edit`` changed (in place, as
    one list in the recording's order) and whose header entries ``header`` replaced, its checksum
    written anew: what a crafted file does, which the checksum cannot catch."""
    dst.write_bytes(src.read_bytes())
    db = sqlite3.connect(dst)
    if edit is not None:
        dicts = {h: zlib.decompress(d) for h, d in db.execute("SELECT hash, data FROM dicts")}
        batches = []
        for tick0, name, data in db.execute("SELECT tick0, dict, data FROM calls ORDER BY tick0").fetchall():
            d = zlib.decompressobj(zdict=dicts[name]) if name else zlib.decompressobj()
            batches.append((tick0, json.loads(d.decompress(data) + d.flush())))
        edit([c for _, batch in batches for c in batch])
        for tick0, batch in batches:  # json.dumps writes NaN and Infinity as Python's json reads them
            db.execute("UPDATE calls SET dict = NULL, data = ? WHERE tick0 = ?",
                       (zlib.compress(json.dumps(batch).encode()), tick0))
    for key, v in (header or {}).items():
        db.execute("UPDATE header SET value = ? WHERE key = ?", (json.dumps(v), key))
    db.commit()
    db.execute("UPDATE header SET value = ? WHERE key = 'checksum'", (json.dumps(content_digest(db)),))
    db.commit()
    db.close()
    return dst


def checked(text: str) -> tuple[list[Span], dict]:
    """The spans of a file that must be valid OTLP whatever the recording held, and its resource
    attributes: strict JSON, read by the protobuf classes, every time in range, no span ending
    before it starts."""
    req = parse(text)
    spans = spans_of(req)
    for span in spans:
        assert 0 <= span.start_time_unix_nano <= span.end_time_unix_nano <= LAST_NS
        assert all(0 <= e.time_unix_nano <= LAST_NS for e in span.events)
    return spans, {a.key: MessageToDict(a.value) for a in req.resource_spans[0].resource.attributes}


def test_out_of_range_values_are_clamped_or_left_out_and_counted(runs, tmp_path, capsys):
    """1e308 latency (was an OverflowError, exit 1), NaN, token counts past int64, a negative
    latency: the file is valid OTLP and says how many values it had to change."""
    def edit(calls):
        calls[0]["latency_s"] = 1e308  # ends at the last time
        calls[1]["latency_s"] = math.nan  # lasts 0
        calls[2]["latency_s"] = -5.0  # lasts 0
        calls[3]["prompt_tokens"] = 10**30  # clamped to int64
        calls[4]["completion_tokens"] = math.nan  # left out
        calls[5]["temperature"] = math.inf  # left out
        calls[6]["max_tokens"] = -10**25  # clamped to int64's least
        calls[7]["top_p"] = math.nan  # left out
    rec = damaged(runs["failing"], tmp_path / "bad.db", edit)
    out = tmp_path / "t.json"
    summary = export(capsys, rec, out)
    spans, resource = checked(out.read_text())
    chats = [s for s in spans if s.kind == Span.SPAN_KIND_CLIENT]
    assert chats[0].end_time_unix_nano == LAST_NS
    assert chats[1].end_time_unix_nano == chats[1].start_time_unix_nano
    assert chats[2].end_time_unix_nano == chats[2].start_time_unix_nano
    assert value(chats[3], "gen_ai.usage.input_tokens") == INT64_MAX
    assert "gen_ai.usage.output_tokens" not in attrs(chats[4])
    assert "gen_ai.request.temperature" not in attrs(chats[5])
    assert value(chats[6], "gen_ai.request.max_tokens") == -(2**63)
    assert "gen_ai.request.top_p" not in attrs(chats[7])
    # the fish's and the run's input-token sums hold 10**30 too: clamped as well
    fish3 = next(s for s in spans if s.name == f"fish {value(chats[3], 'mirofish.fish')}")
    assert value(fish3, "mirofish.tokens.input") == value(spans[0], "mirofish.tokens.input") == INT64_MAX
    # the run's span reaches the clamped end
    assert spans[0].end_time_unix_nano == LAST_NS
    # 8 recorded values + the 2 sums
    assert summary["out_of_range"] == int(resource["mirofish.out_of_range"]["intValue"]) == 10
    # a sound recording's file has none, and no such attribute
    sound = export(capsys, runs["failing"], tmp_path / "sound.json")
    assert sound["out_of_range"] == 0
    assert "mirofish.out_of_range" not in checked((tmp_path / "sound.json").read_text())[1]


def test_the_1e308_latency_as_a_user_runs_it(runs, tmp_path):
    """The fault campaign's case in its own process: exit 0 and a file that parses (was exit 1)."""
    def edit(calls):
        calls[0]["latency_s"] = 1e308
    rec = damaged(runs["failing"], tmp_path / "bad.db", edit)
    argv = [sys.executable, str(ROOT / "run.py"), "export", str(rec), "--otel", str(tmp_path / "t.json")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and json.loads(done.stdout)["out_of_range"] == 1, done.stderr
    checked((tmp_path / "t.json").read_text())


def test_an_anchor_past_the_last_time_is_refused_in_one_line(runs, tmp_path, capsys):
    out = tmp_path / "t.json"
    for when in ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59.999999+00:00", "2262-04-11T23:47:00Z"):
        err = refused(capsys, ["export", str(runs["failing"]), "--otel", str(out), "--otel-anchor", when],
                      "--otel-anchor")
        assert "2262-04-11T23:47:16Z" in err
    assert not out.exists()
    # a recording whose header says it was created in 9999: its default anchor, refused the same way
    late = damaged(runs["failing"], tmp_path / "late.db", header={"created": "9999-12-31T00:00:00Z"})
    refused(capsys, ["export", str(late), "--otel", str(out)], "--otel-anchor")
    # … and exported with an anchor that fits
    export(capsys, late, out, "--otel-anchor", "2030-01-01T00:00:00Z")
    checked(out.read_text())
    # the latest anchor that fits the run (60 ticks × 0.5 s): its last tick at most the last time
    rec = Recording(runs["failing"])
    run_ns = (rec.last_tick - rec.first_tick) * round(rec.config.world.tick_seconds * 1e9)
    rec.close()
    latest = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime((LAST_NS - run_ns) // 10**9))
    summary = export(capsys, runs["failing"], out, "--otel-anchor", latest, "--overwrite")
    spans, _ = checked(out.read_text())
    assert spans[0].end_time_unix_nano <= LAST_NS and summary["out_of_range"] == 0
    # with a 1e308 latency at that anchor: that span ends at the last time
    big = damaged(runs["failing"], tmp_path / "big.db", lambda calls: calls[-1].update(latency_s=1e308))
    summary = export(capsys, big, out, "--otel-anchor", latest, "--overwrite")
    spans, _ = checked(out.read_text())
    assert spans[-1].end_time_unix_nano == LAST_NS and summary["out_of_range"] == 1


@pytest.mark.parametrize("key", ["span", "1000", "true", "chat", "fish"])
def test_a_short_key_value_leaves_the_file_as_it_is(runs, tmp_path, capsys, monkeypatch, key):
    """A key variable holding a short value (which the old scrub replaced over the whole
    serialized text, corrupting the JSON) changes nothing: no real key is under 8 characters."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    export(capsys, runs["failing"], tmp_path / "plain.json")
    monkeypatch.setenv("OPENAI_API_KEY", key)
    summary = export(capsys, runs["failing"], tmp_path / "keyed.json")
    text = (tmp_path / "keyed.json").read_text()
    checked(text)
    assert text == (tmp_path / "plain.json").read_text() and "secrets_scrubbed" not in summary


KEY = "sk-live-Q7v2Lm9XpR4t"  # 20 characters
PASSWORD = "hunter2-Zk81Wq0Lm3Vb"  # in a URL only, named by no variable


@pytest.mark.parametrize("content", ["events", "attributes"])
def test_a_real_key_in_a_recorded_field_or_url_is_absent_from_the_file(runs, tmp_path, capsys, monkeypatch,
                                                                       content):
    def edit(calls):
        calls[0]["user"] = f"ask http://alice:{KEY}@models.example.com/v1 and \"{KEY}\" again"
        calls[1]["model"] = KEY
        calls[2]["system_fingerprint"] = f"fp-{KEY}"
        calls[3]["endpoint"] = f"https://bob:{KEY}@api.example.com:8443/v1"
        calls[4]["user"] = f"mirror at https://carol:{PASSWORD}@mirror.example.com/v1/chat"
        calls[5]["model"] = f"https://dave:{PASSWORD}@m.example.com/v1"
        replied = next(c for c in calls[6:] if c.get("reply") is not None)
        replied["reply"] = f'{{"say": "the key is {KEY}"}}'
    rec = damaged(runs["failing"], tmp_path / "keyed.db", edit)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "t.json"
    summary = export(capsys, rec, out, "--otel-content", content)
    raw = out.read_bytes()
    spans, _ = checked(raw.decode())
    for secret in (KEY, PASSWORD):
        assert secret.encode() not in raw and base64.b64encode(secret.encode()) not in raw
    assert summary["secrets_scrubbed"] >= 6
    chats = [s for s in spans if s.kind == Span.SPAN_KIND_CLIENT]
    assert chats[1].name == "chat ***" and value(chats[1], "gen_ai.request.model") == "***"
    assert value(chats[2], "gen_ai.openai.response.system_fingerprint") == "fp-***"
    assert value(chats[3], "server.address") == "api.example.com" and value(chats[3], "server.port") == 8443
    assert "https://***@m.example.com/v1" in value(chats[5], "gen_ai.request.model")
    text = raw.decode()
    assert "http://***@models.example.com/v1" in text and "https://***@mirror.example.com/v1/chat" in text
    assert "the key is ***" in text


DAMAGE = [1e308, -1e308, math.inf, -math.inf, math.nan, 2**63, -(2**63) - 1, 2**64, 10**30, -(10**30), 10**400,
          -1, -0.0, 5e-324, 1.5e18, 9.3e18, "abc", "12", "1e999", "nan", [], {}, True, None, [1, 2]]
FIELDS = ["latency_s", "prompt_tokens", "completion_tokens", "max_tokens", "temperature", "top_p", "seed", "retries",
          "asked"]


def test_seeded_fuzz_of_damaged_numbers_always_gives_valid_otlp(runs, tmp_path, capsys):
    """Four dozen damaged numeric values (12 recordings of 4), each exported with another content
    mode and anchor: every file parses as OTLP and counts what it changed."""
    rng = random.Random(62)
    changed = 0
    for n in range(12):
        hits = [(rng.choice(FIELDS), rng.choice(DAMAGE), rng.random()) for _ in range(4)]
        if n % 3 == 0:  # a fish id past int64 too (a recorded fish is an int, of any size)
            hits.append(("fish", rng.choice([2**70, -(2**70)]), rng.random()))

        def edit(calls, hits=hits):
            for field, bad, where in hits:
                calls[int(where * len(calls))][field] = bad
        rec = damaged(runs["failing"], tmp_path / f"fuzz{n}.db", edit)
        out = tmp_path / f"fuzz{n}.json"
        anchor = rng.choice(["created", "now", "1970-01-01T00:00:00Z", "2262-04-11T00:00:00Z"])
        summary = export(capsys, rec, out, "--otel-content", ("events", "attributes", "none")[n % 3],
                         "--otel-anchor", anchor)
        _, resource = checked(out.read_text())
        assert summary["out_of_range"] == int(resource.get("mirofish.out_of_range", {}).get("intValue", 0))
        changed += summary["out_of_range"]
    assert changed >= 24  # most damaged values were out of range (the rest: numbers OTLP holds as they are)
