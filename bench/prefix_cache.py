#!/usr/bin/env python3
"""What the stable shared prefix saves on a real server: a recording's decision requests sent
again, in the recorded order, as recorded (every request begins with the same system message,
so a server that keeps its KV cache — llama.cpp, vLLM with prefix caching — computes only the
per-fish part) and with the prefix broken (a different short line before the system message of
each request), one request at a time. Prints the server's seconds per request both ways and, when
the server reports them, its cached prompt tokens. Last line JSON.

    python bench/prefix_cache.py saves/model.mirofish --base-url http://127.0.0.1:8000/v1 [--n 30]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mirofish.brains.exchanges import request_body
from mirofish.brains.transport import cached_tokens
from mirofish.observe.recording import Recording


def send(url: str, body: dict) -> tuple[float, int | None, int]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url + "/chat/completions", data, {"Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=300) as resp:
        reply = json.loads(resp.read())
    return time.perf_counter() - start, cached_tokens(reply), int((reply.get("usage") or {}).get("prompt_tokens", 0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recording")
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model", default=None, help="default: the recorded model")
    ap.add_argument("--n", type=int, default=30, help="decision requests to send each way")
    args = ap.parse_args()
    rec = Recording(args.recording)
    texts = rec.texts()
    calls = [c for c in rec.model_calls() if c["kind"] == "decision" and c["prefix"]][: args.n]
    seed = rec.config.seed
    rec.close()
    out = {}
    for way in ("stable prefix", "broken prefix"):
        secs, cached, prompt = [], [], []
        for k, c in enumerate(calls):
            body = request_body(c, texts, seed)
            if args.model:
                body["model"] = args.model
            if way == "broken prefix":
                body["messages"][0]["content"] = f"Request {k * 7919 % 10007}.\n" + body["messages"][0]["content"]
            s, ca, p = send(args.base_url.rstrip("/"), body)
            secs.append(s)
            prompt.append(p)
            if ca is not None:
                cached.append(ca)
        out[way] = {"requests": len(secs), "seconds_per_request": round(sum(secs) / len(secs), 3),
                    "prompt_tokens_per_request": round(sum(prompt) / len(prompt), 1),
                    "cached_tokens_per_request": round(sum(cached) / len(cached), 1) if cached else None}
        print(f"{way:<14} {out[way]['seconds_per_request']:.3f} s per request, "
              f"{out[way]['prompt_tokens_per_request']:.0f} prompt tokens"
              + (f", {out[way]['cached_tokens_per_request']:.0f} cached" if cached else
                 " (the server does not report cached tokens)"), flush=True)
    out["saved_share"] = round(1 - out["stable prefix"]["seconds_per_request"]
                               / out["broken prefix"]["seconds_per_request"], 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
