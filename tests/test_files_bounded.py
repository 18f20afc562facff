"""Every file we are given is read under one rule (mirofish/files.py): opened without
blocking, refused unless a regular file within its kind's limit, read at most limit + 1 bytes.
/dev/zero, a FIFO nothing writes to, a folder or an over-limit file given as a config, prompt,
sweep, interventions or tokenizer file is one line on stderr and exit 2 within seconds (it filled
the memory or blocked forever before); a reply-cache entry that is one is a miss. The tokenizer
is checked before the native library sees it: a huge Fixed padding (which aborted the process),
a pattern that backtracks or a tokenizer that cannot count are one line too, in the commands,
the benches and the test server."""

from __future__ import annotations

import hashlib
import json
import os
import random
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mirofish import files

ROOT = Path(__file__).resolve().parent.parent
DEAD_URL = "http://127.0.0.1:9/v1"  # nothing listens: a command must refuse its file before asking
BAD = ("zero", "fifo", "folder", "big")
LIMITS = {"config": files.CONFIG_LIMIT, "prompt": files.PROMPT_LIMIT, "sweep": files.CONFIG_LIMIT,
          "interventions": files.CONFIG_LIMIT, "tokenizer": files.TOKENIZER_LIMIT,
          "reply-cache": files.REPLY_CACHE_LIMIT}
ERRORS = {"config": "ConfigError", "prompt": "PromptError", "sweep": "SpecError",
          "interventions": "InterventionError", "tokenizer": "TokenizerError"}


# ---------------------------------------------------------------- helpers

def make_bad(folder: Path, bad: str, kind: str, rng: random.Random | None = None) -> Path:
    """A path of the ``bad`` sort for a file of ``kind`` (made under ``folder``)."""
    rng = rng or random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / ("tokenizer.json" if kind == "tokenizer" else "input.toml" if kind != "interventions"
                  else "input.jsonl")
    devices = {"zero": "/dev/zero", "urandom": "/dev/urandom", "full": "/dev/full", "null": "/dev/null"}
    if bad in devices:
        return Path(devices[bad])
    if bad == "fifo":
        os.mkfifo(p)  # nothing ever writes to it
    elif bad == "fifo-link":
        os.mkfifo(folder / "pipe")
        p.symlink_to(folder / "pipe")
    elif bad == "zero-link":
        p.symlink_to("/dev/zero")
    elif bad == "folder":
        p.mkdir()
    elif bad == "dangling":
        p.symlink_to(folder / "nothing-here")
    elif bad == "missing":
        pass
    elif bad == "big":
        limit = LIMITS[kind]
        if limit > 8_000_000:  # a sparse file: its size is what is refused
            with open(p, "wb") as fh:
                fh.truncate(limit + 1)
        else:  # comment lines in every text kind (TOML, JSON Lines with # comments)
            line = b"#" + b"x" * 98 + b"\n"
            p.write_bytes(line * (limit // len(line) + 1))
    elif bad == "binary":
        p.write_bytes(b"\xff" + rng.randbytes(rng.randint(1, 4096)))  # never UTF-8
    elif bad == "deep":
        depth = rng.choice((5_000, 50_000))
        p.write_text({"interventions": '{"tick": 1, "kind": ' + "[" * depth,
                      "tokenizer": "[" * depth}.get(kind, "a = " + "[" * depth))
    else:
        raise ValueError(bad)
    return p


def fingerprint(p: Path) -> tuple:
    """What a reader must leave as it was: a file's bytes, a folder's names, a node's type."""
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return ("missing",)
    if stat.S_ISREG(st.st_mode):
        h = hashlib.sha256()
        with open(p, "rb") as fh:
            for piece in iter(lambda: fh.read(1 << 20), b""):
                h.update(piece)
        return ("file", st.st_size, h.hexdigest())
    if stat.S_ISDIR(st.st_mode):
        return ("folder", sorted(os.listdir(p)))
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(p))
    return (stat.S_IFMT(st.st_mode), st.st_rdev)


def run(args: list[str], script: str = "run.py",
        env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, float]:
    base = {k: v for k, v in os.environ.items() if k != "MIROFISH_TOKENIZER"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, script, *args], cwd=ROOT, capture_output=True, text=True, timeout=20,
                          env={**base, "SDL_VIDEODRIVER": "dummy", **(env or {})})
    return done, time.monotonic() - started


def one_line_exit_2(done: subprocess.CompletedProcess, took: float, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert took < 5, took
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    rec = tmp_path_factory.mktemp("rec") / "run.db"
    done, _ = run(["live", "--headless", "--ticks", "5", "--fish", "5", "--record", str(rec)])
    assert done.returncode == 0, done.stderr
    return rec


def command(kind: str, path: Path, tmp_path: Path, recording: Path | None) -> tuple[list[str], dict[str, str]]:
    """The real command that reads a file of ``kind`` at ``path``, and its environment."""
    p = str(path)
    if kind == "config":
        return ["live", "--headless", "--ticks", "1", "--fish", "3", "--config", p], {}
    if kind == "prompt":
        return ["live", "--headless", "--ticks", "1", "--fish", "3", "--brain", "llm", "--base-url", DEAD_URL,
                "--model", "m", "--prompt", p], {}
    if kind == "sweep":
        return ["sweep", p, "--dry-run", "--out", str(tmp_path / "out")], {}
    if kind == "interventions":
        assert recording is not None
        return ["fork", str(recording), "--at", "2", "--interventions", p, "--ticks", "2"], {}
    if kind == "tokenizer":
        return ["handoff", "--headless", "--tasks", "1"], {"MIROFISH_TOKENIZER": p}
    raise ValueError(kind)


# ---------------------------------------------------------------- the rule itself

def test_read_bounded_refuses_what_is_not_a_file_and_what_is_too_big(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "ok.toml").write_text("a = 1\n")
    (tmp_path / "big").write_bytes(b"x" * 101)
    (tmp_path / "latin1").write_bytes(b"caf\xe9")
    assert files.read_bounded(tmp_path / "ok.toml", 100, "config file") == b"a = 1\n"
    cases = {"/dev/zero": "is a device, not a file", str(tmp_path / "fifo"): "is a FIFO, not a file",
             str(tmp_path): "is a folder, not a file", str(tmp_path / "big"): "101 bytes, over the 0.0001 MB limit",
             str(tmp_path / "none"): "no such file", "a\x00b": "cannot be read"}
    for path, words in cases.items():
        with pytest.raises(files.FileRefused, match=words) as got:
            files.read_bounded(path, 100, "config file")
        assert "\n" not in str(got.value) and str(got.value).startswith("config file ")
        assert got.value.missing == (words == "no such file")
    with pytest.raises(files.FileRefused, match="not UTF-8"):
        files.read_text_bounded(tmp_path / "latin1", 100, "prompt file")
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)  # left as it was


# ---------------------------------------------------------------- every kind, through the real command

@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("kind", ["config", "prompt", "sweep", "interventions", "tokenizer"])
def test_a_bad_file_of_any_kind_is_one_line_and_exit_2_within_seconds(kind, bad, tmp_path, request):
    rec = request.getfixturevalue("recording") if kind == "interventions" else None
    path = make_bad(tmp_path / "in", bad, kind)
    before = fingerprint(path)
    args, env = command(kind, path, tmp_path, rec)
    done, took = run(args, env=env)
    what = {"zero": "a device", "fifo": "a FIFO", "folder": "a folder", "big": "limit"}[bad]
    one_line_exit_2(done, took, what)
    assert fingerprint(path) == before


def test_a_bad_reply_cache_entry_is_a_miss_and_the_run_asks_again(tmp_path):
    """Entries replaced by a FIFO, a link to /dev/zero, a folder and an over-limit file: the run
    does not block or fill the memory; each is a miss, asked of the server again (the cache's
    rule: a cache that cannot be read is only a slower cache) — and not a silent one: the first
    damaged entry is named in one warning line."""
    from mirofish.brains.testserver import TestServer

    cache = tmp_path / "cache"
    with TestServer() as server:
        args = ["referential", "--headless", "--rounds", "2", "--seed", "2", "--agents", "llm", "--base-url",
                server.url, "--model", "fish-mini", "--reply-cache", str(cache), "--timeout", "2"]
        first, _ = run(args)
        assert first.returncode == 0, first.stderr
        entries = sorted(cache.rglob("*.json"))
        asked = server.requests
        assert len(entries) == asked >= 4
        for e, bad in zip(entries, ["fifo", "zero-link", "folder", "big"] * len(entries), strict=False):
            e.unlink()
            if bad == "fifo":
                os.mkfifo(e)
            elif bad == "zero-link":
                e.symlink_to("/dev/zero")
            elif bad == "folder":
                e.mkdir()
            else:
                e.write_bytes(b" " * (files.REPLY_CACHE_LIMIT + 1))
        again, took = run(args)
        assert again.returncode == 0, again.stderr
        assert took < 5, took
        assert server.requests == 2 * asked  # every entry a miss, asked again
        said = again.stderr.strip().splitlines()
        assert len(said) == 1 and said[0].startswith("mirofish: warning: reply cache entry ") \
            and "is damaged (" in said[0], again.stderr
    assert json.loads(again.stdout)["success_rate"] == json.loads(first.stdout)["success_rate"]
    assert Path("/dev/zero").is_char_device()


# ---------------------------------------------------------------- tokenizers

def tokenizer_json(tmp_path: Path, variant: str = "good") -> Path:
    """A small WordLevel tokenizer.json, or a variant the native library cannot bear."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "[PAD]": 1, "fish": 2, "swim": 3, "food": 4}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / f"{variant}.json"
    tok.save(str(path))
    data = json.loads(path.read_text())
    pad = {"direction": "Right", "pad_to_multiple_of": None, "pad_id": 1, "pad_type_id": 0, "pad_token": "[PAD]"}
    if variant == "aborting":  # the library allocates 4 TB at the first encoding: the process aborts
        data["padding"] = {"strategy": {"Fixed": 1_000_000_000_000}, **pad}
    elif variant == "padded":  # a sane padding: dropped, a count is of the text's own tokens
        data["padding"] = {"strategy": {"Fixed": 100}, **pad}
    elif variant == "backtracking":  # a pattern whose matching backtracks: the library panics at encoding
        data["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": "(a|a)+$"}, "behavior": "Isolated",
                                 "invert": False}
    elif variant == "unencodable":  # loads, but cannot encode a word it does not know
        data["model"]["unk_token"] = "<not in the vocabulary>"
    elif variant != "good":
        raise ValueError(variant)
    path.write_text(json.dumps(data))
    return path


TOKENIZER_COMMANDS = {
    "handoff": ("run.py", ["handoff", "--headless", "--tasks", "1"], "mirofish: "),
    "negotiation": ("run.py", ["negotiation", "--headless", "--sessions", "1"], "mirofish: "),
    "detector_precision": ("bench/detector_precision.py", ["--seeds", "1", "--sessions", "1"], "detector_precision: "),
    "referential_templates": ("bench/referential_templates.py", ["--seeds", "1", "--rounds", "100"],
                              "referential_templates: "),
    "handoff_signals": ("bench/handoff_signals.py", ["--seeds", "1", "--tasks", "1"], "handoff_signals: "),
}


@pytest.mark.parametrize("variant", ["aborting", "backtracking", "unencodable"])
@pytest.mark.parametrize("where", list(TOKENIZER_COMMANDS))
def test_a_tokenizer_the_library_cannot_bear_is_one_line_everywhere(where, variant, tmp_path):
    path = tokenizer_json(tmp_path, variant)
    before = fingerprint(path)
    script, args, prefix = TOKENIZER_COMMANDS[where]
    done, took = run(args, script=script, env={"MIROFISH_TOKENIZER": str(path)})
    one_line_exit_2(done, took, prefix, "MIROFISH_TOKENIZER", str(path))
    assert fingerprint(path) == before


def test_a_good_tokenizer_counts_and_its_padding_is_dropped(tmp_path, monkeypatch):
    from mirofish.brains.prompt import TokenizerError, estimate_tokens

    for variant in ("good", "padded"):
        monkeypatch.setenv("MIROFISH_TOKENIZER", str(tokenizer_json(tmp_path, variant)))
        assert estimate_tokens("fish swim to the food") == 5  # not 100 (the padding)
    monkeypatch.setenv("MIROFISH_TOKENIZER", str(tokenizer_json(tmp_path, "aborting")))
    with pytest.raises(TokenizerError, match="Fixed length of 1000000000000 tokens"):
        estimate_tokens("fish")
    done, took = run(["handoff", "--headless", "--tasks", "1"],
                     env={"MIROFISH_TOKENIZER": str(tokenizer_json(tmp_path, "good"))})
    assert done.returncode == 0 and took < 10, done.stderr
    assert "counted by tokenizer good.json" in done.stdout


@pytest.mark.parametrize("variant", ["unencodable", "backtracking"])
def test_the_test_server_counts_with_the_estimate_and_says_so_once(variant, tmp_path, monkeypatch, capfd):
    import urllib.request

    from mirofish.brains.prompt import estimate_without_tokenizer
    from mirofish.brains.testserver import TestServer

    monkeypatch.setenv("MIROFISH_TOKENIZER", str(tokenizer_json(tmp_path, variant)))
    body = json.dumps({"model": "fish-mini", "messages": [{"role": "user", "content": "hello fish"}]}).encode()
    with TestServer() as server:
        for _ in range(3):
            req = urllib.request.Request(server.url + "/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as resp:
                assert resp.status == 200
                usage = json.loads(resp.read())["usage"]
            assert usage["prompt_tokens"] == estimate_without_tokenizer("hello fish")
    err = capfd.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "MIROFISH_TOKENIZER" in err


# ---------------------------------------------------------------- seeded fuzz

DRIVER = r"""
import json, os, sys, time
from mirofish.config import load_config
from mirofish.brains.prompts import load_prompt
from mirofish.sweep.spec import load_spec
from mirofish.interventions import read_file
from mirofish.brains import prompt as P
from mirofish.brains.exchanges import ReplyCache

def tok(path):
    os.environ["MIROFISH_TOKENIZER"] = path
    P.tokenizer()
    return P.estimate_tokens("fish swim to the food, 42 times. " * 20)  # a tokenizer that loads counts

READERS = {"config": load_config, "prompt": load_prompt, "sweep": load_spec, "interventions": read_file,
           "tokenizer": tok}
for case in json.load(open(sys.argv[1])):
    started = time.monotonic()
    try:
        if case["kind"] == "reply-cache":
            out = {"result": "miss" if ReplyCache(case["folder"]).get(case["key"]) is None else "hit"}
        else:
            READERS[case["kind"]](case["path"])
            out = {"result": "read"}
    except Exception as exc:
        out = {"result": "refused", "error": type(exc).__name__, "message": str(exc)}
    out["seconds"] = time.monotonic() - started
    print(json.dumps(out), flush=True)
"""
FUZZ_BAD = ("zero", "urandom", "full", "null", "fifo", "fifo-link", "zero-link", "folder", "big", "missing",
            "dangling", "binary", "deep", "nul")
MUTANTS = (1_000_000_000_000, 2**32, -1, 10**7, "x" * 5_000, None, [], {}, "Fixed", {"Fixed": 10**9}, 0, 3.5, True)


def _mutant(rng: random.Random, folder: Path) -> Path:
    """The small tokenizer with one value somewhere replaced: it loads, or it is one line."""
    folder.mkdir(parents=True, exist_ok=True)
    data = json.loads(tokenizer_json(folder, "good").read_text())
    data["padding"] = {"strategy": {"Fixed": 8}, "direction": "Right", "pad_to_multiple_of": 4, "pad_id": 1,
                       "pad_type_id": 0, "pad_token": "[PAD]"}
    data["truncation"] = {"direction": "Right", "max_length": 64, "strategy": "LongestFirst", "stride": 0}
    spots: list[tuple[Any, Any]] = []
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else []
        for k in keys:
            spots.append((node, k))
            stack.append(node[k])
    node, key = rng.choice(spots)
    node[key] = rng.choice(MUTANTS)
    p = folder / "mutant.json"
    p.write_text(json.dumps(data))
    return p


def fuzz_cases(n: int, seed: int, tmp_path: Path) -> list[dict]:
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        folder = tmp_path / f"case{i}"
        kind = rng.choice(["config", "prompt", "sweep", "interventions", "tokenizer", "reply-cache"])
        bad = "mutant" if kind == "tokenizer" and rng.random() < 0.4 else rng.choice(FUZZ_BAD)
        if kind == "reply-cache":
            key = f"{rng.getrandbits(128):032x}"
            entry = make_bad(folder / "tmp", "missing" if bad in ("nul", "mutant") else bad, kind, rng)
            spot = folder / "cache" / key[:2] / f"{key}.json"
            spot.parent.mkdir(parents=True)
            if str(entry).startswith("/dev/"):
                spot.symlink_to(entry)  # an entry that is a link to a device
            elif os.path.lexists(entry):
                entry.rename(spot)
            cases.append({"kind": kind, "bad": bad, "folder": str(folder / "cache"), "key": key})
            continue
        if bad == "nul" and kind == "tokenizer":
            bad = "missing"  # an environment variable cannot hold a NUL
        if bad == "nul":
            path = str(folder / "a\x00b.toml")
        elif bad == "mutant":
            path = str(_mutant(rng, folder))
        else:
            path = str(make_bad(folder, bad, kind, rng))
        cases.append({"kind": kind, "bad": bad, "path": path})
    return cases


def check_fuzz(n: int, seed: int, tmp_path: Path) -> dict[str, int]:
    cases = fuzz_cases(n, seed, tmp_path)
    before = {i: fingerprint(Path(c["path"])) for i, c in enumerate(cases) if "path" in c and "\x00" not in c["path"]}
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    env = {k: v for k, v in os.environ.items() if k != "MIROFISH_TOKENIZER"}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path / "cases.json")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=20 + 5 * n)
    assert done.returncode == 0, done.stderr[-3000:]  # no case aborted the process or escaped as a traceback
    outs = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(outs) == len(cases)
    seen: dict[str, int] = {}
    for i, (case, out) in enumerate(zip(cases, outs, strict=True)):
        assert out["seconds"] < 5, (case, out)
        seen[out["result"]] = seen.get(out["result"], 0) + 1
        if case["kind"] == "reply-cache":
            assert out["result"] == "miss", (case, out)
            continue
        if case["bad"] == "mutant":  # a harmless change loads; any other is one line of its kind's error
            assert out["result"] in ("read", "refused"), (case, out)
        else:
            assert out["result"] == "refused" and out["error"] == ERRORS[case["kind"]], (case, out)
        if out["result"] == "refused":
            assert out["message"] and "\n" not in out["message"], (case, out)
        if i in before:
            assert fingerprint(Path(case["path"])) == before[i], case
    return seen


def test_a_seeded_fuzz_of_kinds_and_bad_paths(tmp_path):
    seen = check_fuzz(48, 62, tmp_path)
    assert seen.get("refused", 0) > 20 and seen.get("miss", 0) > 0


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(5))
def test_a_longer_fuzz_of_kinds_and_bad_paths(seed, tmp_path):
    check_fuzz(300, 1000 + seed, tmp_path)


@pytest.mark.soak
def test_a_fuzz_through_the_real_commands(tmp_path, request):
    """Random kinds and bad paths through the command line: each one line, exit 2, in seconds."""
    rng = random.Random(6262)
    rec = request.getfixturevalue("recording")
    for i in range(40):
        kind = rng.choice(["config", "prompt", "sweep", "interventions", "tokenizer"])
        bad = rng.choice(tuple(b for b in FUZZ_BAD if b != "nul"))
        path = make_bad(tmp_path / f"case{i}", bad, kind, rng)
        before = fingerprint(path)
        args, env = command(kind, path, tmp_path / f"case{i}", rec)
        done, took = run(args, env=env)
        one_line_exit_2(done, took)
        assert fingerprint(path) == before
