"""Argent's report chain on the command line: ``handoff`` (the four signal arms headless, or
one in the window)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import (
    UsageError,
    add_model_flags,
    add_window_flags,
    int_at_least,
    prompt_named,
    run_window,
    warn_model_made,
)

TASKS = 250  # tasks per arm of a headless run when --tasks is not given


def arguments(ho: argparse.ArgumentParser) -> None:
    ho.add_argument("--headless", action="store_true",
                    help="no window; print one JSON line: the four arms (none, L1, L1+2, L1+2+3) on the same tasks")
    ho.add_argument("--tasks", type=int_at_least(1, 100_000), default=None,
                    help=f"--headless: tasks per arm (default {TASKS}, at most 100,000; the window plays tasks until "
                         f"closed)")
    ho.add_argument("--seed", type=int_at_least(0), default=1, help="random seed (default 1)")
    ho.add_argument("--layers", choices=("none", "L1", "L1+2", "L1+2+3"), default=None,
                    help="one arm only (headless), or the arm the window shows (default L1+2+3)")
    ho.add_argument("--l2-every", type=int_at_least(0), default=None, metavar="K",
                    help="layer 2 on every K-th message besides its triggers (0: only on its triggers; default 4; "
                         "an arm with layer 2: not with --layers none or L1)")
    ho.add_argument("--no-l2-triggers", action="store_true",
                    help="layer 2 only every K-th message (not on state changes, low confidence, entropy jumps; an "
                         "arm with layer 2)")
    ho.add_argument("--l2-source", choices=("agent", "oracle"), default=None,
                    help="who writes layer 2: the agent (only the readings its evidence leaves it unsure of, with "
                         "confidence and alternative; default) or the oracle (every reading it holds: the upper "
                         "bound; an arm with layer 2)")
    ho.add_argument("--wire", choices=("full", "compact"), default=None,
                    help="the signals' wire form: full (named fields, checklist by name; default) or compact (task "
                         "id, one token group a reading, calibrations by id; not with --layers none: no signals)")
    ho.add_argument("--agents", choices=("embedded", "llm"), default="embedded",
                    help="embedded writers (default: messages from templates) or a model through --base-url/--model")
    add_model_flags(ho, "agents")
    add_window_flags(ho, aquarium=False)


# Layer 2's flags (they act only in an arm with layer 2), and --wire (only in one with signals)
LAYER2_FLAGS = (("l2_every", "--l2-every"), ("no_l2_triggers", "--no-l2-triggers"), ("l2_source", "--l2-source"))


def _check_arm_flags(args: argparse.Namespace) -> None:
    """Layer 2's flags given with an arm without layer 2 (--layers none or L1), --wire with one
    without signals (--layers none): each would be ignored; one line instead."""
    if args.layers in ("none", "L1"):
        for dest, flag in LAYER2_FLAGS:
            if getattr(args, dest) is not None and getattr(args, dest) is not False:  # (0 is a given --l2-every)
                raise UsageError(f"mirofish handoff: {flag} is about layer 2, and --layers {args.layers} has none: "
                                 f"give --layers L1+2 or L1+2+3 (or leave out --layers), or leave out {flag}")
    if args.layers == "none" and args.wire is not None:
        raise UsageError("mirofish handoff: --wire is the signals' wire form, and --layers none sends no signals: "
                         "leave out --wire")


def _check_window_flags(args: argparse.Namespace) -> None:
    if not args.headless and args.tasks is not None:  # (before: taken and read by nothing)
        raise UsageError("mirofish handoff: --tasks is for --headless runs (the window plays tasks until it is "
                         "closed): add --headless or leave out --tasks")


def _writer(args: argparse.Namespace) -> Any:
    """The model writer of --agents llm (None: the embedded templates write)."""
    if args.agents != "llm":
        return None
    if not (args.base_url and args.model):
        raise UsageError("mirofish handoff: --agents llm needs --base-url and --model")
    from ..scenes.handoff.model_agents import ModelWriter

    return ModelWriter(args.base_url, args.model, args.seed, args.timeout, prompt=args.prompt)


def _with_failures(args: argparse.Namespace, out: dict[str, Any], result: dict[str, Any],
                   failures: dict[str, int]) -> dict[str, Any]:
    """``result`` with the model's failures and prompt, and the warning line when it wrote few turns."""
    made = [arm["model_made"] for arm in out.values() if "model_made" in arm]
    # (the embeddings' failure is no turn's: the turns' reasons alone, summing to the turns missed)
    warn_model_made("handoff", args.base_url, sum(m["messages"] for m in made), sum(m["of"] for m in made),
                    {k: n for k, n in failures.items() if k != "embeddings_unavailable"})
    return {**result, "model_failures": failures, "prompt": prompt_named("handoff", args.prompt)}


def run(args: argparse.Namespace) -> int:
    from ..scenes.handoff.chain import ARMS, L2_EVERY, evaluate

    _check_arm_flags(args)
    _check_window_flags(args)
    l2_every = L2_EVERY if args.l2_every is None else args.l2_every
    l2_source, wire = args.l2_source or "agent", args.wire or "full"
    writer = _writer(args)
    if not args.headless:
        from ..ui.scenes.handoff import HandoffScene

        return run_window(HandoffScene(args.seed, args.layers or "L1+2+3", writer, l2_source, wire, l2_every,
                                       not args.no_l2_triggers), args)
    arms = [args.layers] if args.layers else list(ARMS)
    try:
        tasks = TASKS if args.tasks is None else args.tasks
        out = {name: evaluate(tasks, args.seed, ARMS[name], l2_every, not args.no_l2_triggers, writer, l2_source, wire)
               for name in arms}
    finally:
        failures = writer.close() if writer is not None else None
    result = out if len(out) > 1 else out[arms[0]]
    if failures is not None:
        result = _with_failures(args, out, result, failures)
    print(json.dumps(result))
    return 0
