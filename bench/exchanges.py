"""The model's part, measured: what recording every exchange costs, and what a reply cache saves.

    python bench/exchanges.py                      # the bundled test server, 60 fish, 2,000 ticks
    python bench/exchanges.py --fish 12 --ticks 300 --base-url http://127.0.0.1:8000/v1 --model smollm2

Prints JSON: the recording's size with every model exchange kept and without
(``record.model_calls = false``, the plan-only recording) and their ratio; exchanges kept;
tokens per model decision and the shared prefix's share (the server's own token counts); then,
with the server stopped, a fork of the recording at the middle tick that changes nothing (its plan
as recorded, with ``replan``: ended by its triggers as in the run)
(every request answered from the recording's replies: cache hits, no misses, the same final
state) and one that swaps a fish's plan (hits until the change reaches a fish, misses after),
and what ``diff`` finds between the run and that fork.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mirofish.brains.testserver import TestServer
from mirofish.config import load_config
from mirofish.fish.plans import describe
from mirofish.observe.recording import Recorder, Recording
from mirofish.session import LiveSession, fork
from mirofish.session.diff import diff_runs
from mirofish.session.headless import _brain_status


def record(cfg, path: Path, ticks: int) -> tuple[dict, float]:
    s = LiveSession(cfg)
    rec = Recorder(path, cfg).attach(s)
    start = time.perf_counter()
    try:
        s.run(ticks)
    finally:
        rec.close()
        s.close()
    return {**_brain_status(s, ticks), "word_and_deed": s.metrics.word_deed.summary()}, time.perf_counter() - start


def server_token_count(url: str, text: str, model: str) -> int | None:
    """Tokens of ``text`` by the server's tokenizer, where it says (llama-cpp-python's server)."""
    import urllib.request

    root = url[: -len("/v1")] if url.endswith("/v1") else url
    try:
        req = urllib.request.Request(root + "/extras/tokenize/count", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"input": text, "model": model}).encode())
        with urllib.request.urlopen(req, timeout=5) as resp:
            return int(json.loads(resp.read())["count"])
    except Exception:  # noqa: BLE001 — a server without it: the estimate stands
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fish", type=int, default=60)
    ap.add_argument("--ticks", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--base-url", help="measure against this server instead of the bundled test server")
    ap.add_argument("--model", default="fish-mini")
    args = ap.parse_args()
    server = None if args.base_url else TestServer().start()
    url = args.base_url or server.url  # type: ignore[union-attr]
    out: dict = {"fish": args.fish, "ticks": args.ticks, "seed": args.seed,
                 "server": "bundled test server" if server else url, "model": args.model}
    with tempfile.TemporaryDirectory() as tmp:
        base = {"fish.count": args.fish, "seed": args.seed, "brain.kind": "llm",
                "brain.small.endpoints": [{"base_url": url, "model": args.model}]}
        status, wall = record(load_config(**base), Path(tmp) / "calls.db", args.ticks)
        plain = None
        if server is not None:  # the plan-only recording of the same run (a deterministic server)
            _, _ = record(load_config(**base, **{"record.model_calls": False}), Path(tmp) / "plain.db", args.ticks)
            plain = (Path(tmp) / "plain.db").stat().st_size
            server.stop()
        size = (Path(tmp) / "calls.db").stat().st_size
        rec = Recording(Path(tmp) / "calls.db")
        calls = rec.model_calls()
        out["recording"] = {"bytes_with_exchanges": size, "bytes_plan_only": plain,
                            "ratio": round(size / plain, 2) if plain else None, "exchanges": len(calls),
                            "bytes_per_exchange": round((size - plain) / max(1, len(calls)), 1) if plain else None,
                            "run_wall_s": round(wall, 1)}
        tok = status["tokens"]
        out["prompt"] = {"tokens_per_model_decision": tok["per_model_decision"], "prefix_share": tok["prefix_share"],
                         "model_decisions": status["model_decisions"],
                         "summaries_written": status["summaries"]["written"]}
        out["word_and_deed"] = status["word_and_deed"]
        plan_calls = [c for c in calls if c["kind"] == "decision" and c["prompt_tokens"]]
        if plan_calls:  # decision requests only (the JSON's share counts the summaries' prompts too)
            from mirofish.brains.prompt import estimate_tokens

            prefix = estimate_tokens(rec.texts()[plan_calls[0]["prefix"]])
            mean_prompt = sum(c["prompt_tokens"] for c in plan_calls) / len(plan_calls)
            mean_reply = sum(c["completion_tokens"] for c in plan_calls) / len(plan_calls)
            counted = server_token_count(url, rec.texts()[plan_calls[0]["prefix"]], args.model)
            if counted:  # the server's own tokenizer (llama-cpp-python's /extras/tokenize/count)
                prefix = counted
            out["prompt"]["decision_requests"] = {
                "prompt_tokens_mean": round(mean_prompt, 1), "reply_tokens_mean": round(mean_reply, 1),
                "shared_prefix_tokens": prefix, "prefix_counted_by": "server" if counted else "estimate",
                "prefix_share_of_prompt": round(prefix / mean_prompt, 3)}
        mid = rec.first_tick + (rec.last_tick - rec.first_tick) // 2
        rec.close()
        if server is None:
            print(json.dumps(out, indent=1))
            return
        rec = Recording(Path(tmp) / "calls.db")
        t, fish_id, plan = next((t, int(d.fish[0]), describe(int(d.goal[0]), int(d.param[0]), int(d.horizon[0])))
                                for t in range(mid, rec.last_tick) if (d := rec.decisions_at(t)).fish.size)
        rec.close()
        span = min(300, args.ticks - t)
        # (replan: the recorded plan ends as it ended in the run, at its triggers; held for its whole
        # horizon, as a plain swap is, it would outlast its recorded end and change the run)
        same = fork(Path(tmp) / "calls.db", t, fish_id, plan, span, replan=True)
        out["fork_that_changes_nothing"] = {
            "at": t, "fish": fish_id, "plan": plan, "ticks": span, "cache_hits": same["cache_hits"],
            "cache_misses": same["cache_misses"],
            "same_final_state": same["final_state_hash"] == same["parent_state_hash_at_same_tick"]}
        swapped = fork(Path(tmp) / "calls.db", t, fish_id, "rest 10", span, Path(tmp) / "fork.db")
        out["fork_that_swaps_a_plan"] = {
            "at": t, "fish": fish_id, "plan": "rest 10", "ticks": span, "cache_hits": swapped["cache_hits"],
            "cache_misses": swapped["cache_misses"],
            "first_tick_cells_differ": swapped["divergence"]["first_tick_cells_differ"],
            "cells_differ_final": swapped["divergence"]["cells_differ_final"]}
        d = diff_runs(Path(tmp) / "calls.db", Path(tmp) / "fork.db")
        out["diff"] = {"first_divergent_decision": d["first_divergent_decision"],
                       "first_tick_cells_differ": d["first_tick_cells_differ"]["tick"]
                       if d["first_tick_cells_differ"] else None,
                       "fish_ever_elsewhere": d["cells_differ"]["fish_ever_elsewhere"]}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
