"""Export a window of a recording, and trace one fish through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..brains.base import TIERS, status_name
from ..brains.instinct import instinct_source
from ..brains.prompt import why_refused
from ..observe.recording import Recorder, Recording, RecordingError
from .replay import ReplaySession, check_out, run_registry


def export_window(recording: Recording | str | Path, around: int, radius: int, out: str | Path,
                  overwrite: bool = False) -> dict[str, Any]:
    """Copy ticks ``[around - radius, around + radius)`` into a new, self-contained recording.

    The export starts with a keyframe at its first tick and re-records the same decisions;
    its windowed metrics are measured afresh from that tick.
    """
    rec = recording if isinstance(recording, Recording) else Recording(recording)
    check_out(out, rec, overwrite)
    t0 = max(rec.first_tick, around - radius)
    t1 = min(rec.last_tick, around + radius)
    if t0 >= t1:
        raise RecordingError(f"--around {around} --radius {radius} selects no recorded tick "
                             f"({rec.first_tick}..{rec.last_tick - 1})")
    player = ReplaySession(rec)
    player.seek(t0)
    recorder = Recorder(out, rec.config, overwrite=overwrite, inputs=(rec.path,), registry=run_registry(rec),
                        extra_header={"parent": str(rec.path), "export_from": t0, "export_to": t1,
                                      **({"prompts": rec.header["prompts"]} if "prompts" in rec.header else {})})
    recorder.attach(player)
    while player.tick < t1:
        player.step()
    recorder.close()
    return {"recording": str(out), "parent": str(rec.path), "from_tick": t0, "to_tick": t1,
            "state_hash_at_end": player.state_hash()}


def trace_fish(recording: Recording | str | Path, fish: int, t0: int, t1: int) -> list[dict[str, Any]]:
    """Isolate one fish: its perception, recorded decision and what the brain decides now, per
    tick; for a model run, what its model was sent and answered (``exchanges``).

    The whole tank is re-simulated from the recording, so the fish's neighbours are exactly
    where they were (isolating a fish without its neighbours proves nothing).
    """
    rec = recording if isinstance(recording, Recording) else Recording(recording)
    if not 0 <= fish < rec.config.fish.slots:
        raise RecordingError(f"--fish {fish} does not exist (this tank has fish 0..{rec.config.fish.slots - 1})")
    player = ReplaySession(rec)
    if not player.first_tick <= t0 < min(t1, player.last_tick):  # (a --to past the end: to the end)
        raise RecordingError(f"tick range {t0}..{t1} is empty or starts outside the recording "
                             f"({player.first_tick}..{player.last_tick})")
    player.seek(t0)
    # the embedded brain is asked again where the fish's own part of the tank ran it (its group's
    # brain in a mixed tank); a model or a user brain is never re-asked, nor any server contacted
    own = rec.config.for_group(rec.config.fish.group_of()[fish]) if rec.config.fish.groups else rec.config
    brain = instinct_source(own) if own.brain.kind == "instinct" else None
    out = []
    while player.tick < min(t1, player.last_tick):
        w, s = player.world, player.world.school
        decided = rec.decisions_at(player.tick)
        hit = np.flatnonzero(decided.fish == fish) if decided is not None else np.zeros(0, int)
        row = {"tick": player.tick, "view": w.perceive(fish).view, "energy": int(s.energy[fish]) / 100}
        if decided is not None and hit.size:
            k = hit[0]
            row["decision"] = rec.plans.describe(int(decided.goal[k]), int(decided.param[k]),
                                                          int(decided.horizon[k]))
            row["tier"] = TIERS[int(decided.tier[k])]
            if int(decided.status[k]):
                row["reason"] = status_name(int(decided.status[k]))  # why the fallback decided
            row["thought"] = decided.thoughts.get(int(fish), "")
            said = [c for c in decided.calls or () if c["fish"] == fish]
            if said:  # what the model saw and said (the exchanges behind this decision)
                plans = player.cfg.brain.decides == "plan"
                keys = ("kind", "model", "user", "reply", "read", "latency_s", "prompt_tokens", "completion_tokens",
                        "retries", "cached", "prefix")
                row["exchanges"] = [{**{k: c.get(k) for k in keys},
                                     **({"why": why_refused(c["reply"], c["read"], plans, rec.plans)}
                                        if c["kind"] == "decision" and c["read"] != "ok" else {})}
                                    for c in said]
                failed = [c["read"] for c in said if c["kind"] == "decision" and c.get("reply") is None
                          and c.get("read") not in (None, "ok")]
                if row.get("reason") == "cache_miss" and failed:  # the server asked for the miss gave nothing:
                    row["server_reason"] = failed[-1]  # why (the recording keeps it with the exchange)
            if brain is not None:
                brain.submit(player.request_for(fish))
                brain.pump()  # the embedded brain answers in this thread
                again = brain.results.get_nowait()
                now = rec.plans.describe(int(again.goals[0]), int(again.params[0]), int(again.horizons[0]))
                row["brain_now"] = now
                row["agrees"] = now == row["decision"]
        out.append(row)
        player.step()
        # the plan the fish swam during this tick (after any decision of the tick) and what it did
        row["plan"] = rec.plans.standing(int(s.plan_goal[fish]), int(s.plan_param[fish]), int(s.plan_end[fish]),
                                         int(w.rest_ceiling))
        row["intent"] = rec.plans.grid.action_names[int(s.intent[fish])]  # (the tank's grid's names)
    return out
