"""Which decisions made this? Counterfactual influence of every decision of a window.

``influence REC --outcome METRIC@TICK`` forks the recording at every decision of a window of
ticks, once per alternative the fish was offered there (the plans that fit its view, each with
its type's default horizon — the fork picker's list), runs each fork to the outcome's tick and
reads the outcome. The method is the source design's own (lock the window, change one thing,
re-run, compare: its §5.4 and §6.2) done for every decision at once, with a null:

* **Effect** of a decision: the outcome as recorded minus the mean outcome over its
  alternatives — how much the choice the fish made moved the outcome compared with what it
  could have chosen. Its 95 % interval is a bootstrap over the alternatives (one alternative:
  a point, said so).
* **Null**: the world is chaotic — any change moves a later outcome somewhat. The null is the
  effect of a decision drawn at random from the window replaced by one of its offered
  alternatives drawn at random: sampled in batches until its 95th percentile of |effect| moves
  by less than 5 % (or ``null_max`` samples), the count reported. Its central 95 % is the
  **null band**.
* A decision is **pivotal** when its whole interval lies outside the null band (the band of the
  null's swaps of *other* decisions: a decision is not its own null): replacing it
  moved the outcome more than replacing an arbitrary decision of the window does, in the same
  direction for every resampling of its alternatives. It does *not* mean the decision was
  sufficient or the only cause (several pivotal decisions may share one outcome), nor that a
  non-pivotal decision did nothing (an effect inside the band is indistinguishable from the
  world's own noise at these sample sizes). The band is of single swaps, the effects are means
  over alternatives: a conservative test.
* **Per fish**: the sum of its decisions' effects, and (for the fish with the largest sums)
  *ablating* it: every decision it makes in the window replaced by the random chooser
  (``brain.chooser = "random"``, seeded per replicate), outcome as recorded minus the
  replicates' mean, with a bootstrap interval. **Per plan type**: every choice of that type in
  the window by any fish replaced by a random other plan that fits, the same way.

Forks run in this process from the state at the fork tick (the recording re-simulated once
per keyframe interval), or in ``workers`` processes; each starts as the ``fork`` command starts
(:func:`~.fork.swapped_batch`, the swapped plan held for its horizon, the recording's
interventions), so any row re-runs with ``fork REC --at T --fish F --plan ALT --ticks N
--outcome SPEC`` to the same outcome and final hash. After the fork tick the recording's own kind
of brain decides (the instinct re-decides deterministically; a model run's brain answers a
request it has seen from the recorded replies, and a new one from the server the user gives
with ``--base-url`` under ``max_requests``, else the fallback, counted) — or ``--brain
instinct``, offline, labelled so.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ..registry import Registry
from .influence_forks import Forker as Forker  # (re-exported: the bench and tests drive them)
from .influence_forks import Runner as Runner
from .influence_forks import Task as Task
from .influence_outcome import (
    BOOT,
    NOTE,
    NULL_BATCH,
    NULL_FIRST,
    NULL_STABLE,
    InfluenceError,
    offered,
    plan_words,
    same_plan,
)
from .trust import ReaderChoice


def bootstrap(values: np.ndarray, rng: np.random.Generator, boot: int = BOOT) -> tuple[float, float]:
    """95 % interval of the mean of ``values`` (percentile bootstrap; one value: itself)."""
    if len(values) <= 1:
        v = float(values[0]) if len(values) else float("nan")
        return v, v
    means = values[rng.integers(0, len(values), size=(boot, len(values)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def fish_ids(spec: str | None, cfg: Any) -> set[int] | None:
    """``--fish``: ids separated by commas, or ``group:NAME`` (None: every fish); one line when bad
    (``influence`` and ``survey`` read it alike)."""
    if not spec:
        return None
    if spec.startswith("group:"):
        name = spec[len("group:"):]
        names = list(cfg.fish.group_names()) if cfg.fish.groups else []
        if name not in names:
            raise InfluenceError(f"--fish {spec}: no group {name!r}" + (f" (groups: {', '.join(names)})" if names
                                                                         else " (this tank has no groups)"))
        g = names.index(name)
        return {i for i, gi in enumerate(cfg.fish.group_of()) if gi == g}
    try:
        ids = {int(x) for x in spec.split(",") if x.strip()}
    except ValueError:
        raise InfluenceError(f"--fish {spec!r}: fish ids separated by commas, or group:NAME") from None
    bad = sorted(i for i in ids if not 0 <= i < cfg.fish.slots)
    if bad or not ids:
        raise InfluenceError(f"--fish {spec!r}: fish {bad[0] if bad else spec} does not exist "
                             f"(0..{cfg.fish.slots - 1})")
    return ids


def alternatives_of(text: str) -> tuple[str, int]:
    """``--alternatives``: (all | random | keep, K of random:K)."""
    kind = text.split(":")[0]
    if kind not in ("all", "random", "keep"):
        raise InfluenceError(f"--alternatives {text!r}: all, random:K or keep")
    if kind != "random":
        return kind, 0
    try:
        k = int(text.split(":", 1)[1])
    except (IndexError, ValueError):
        k = 0
    if k < 1:
        raise InfluenceError(f"--alternatives {text!r}: random:K with K a whole number >= 1")
    return kind, k


def window_decisions(forker: Forker, w0: int, w1: int) -> list[dict[str, Any]]:
    """Every decision of ticks [w0, w1): tick, fish, the recorded plan, the plans its fish was
    offered there (:func:`offered`) but that one, and the plan it had before (``keep``)."""
    rec, cfg = forker.rec, forker.cfg
    plans = rec.plans  # the run's plan table
    out: list[dict[str, Any]] = []
    for tick in range(w0, w1):
        made = rec.decisions_at(tick)
        if made is None or not len(made.fish):
            continue
        forker.seek(tick)
        world = forker.player.world
        s = world.school
        for k, f in enumerate(made.fish.tolist()):
            own = (int(made.goal[k]), int(made.param[k]), int(made.horizon[k]))
            alts = [a for a in offered(world, f, cfg.brain.decides) if not same_plan(plans.parse_plan(a), own)]
            keep = None
            if int(s.plan_end[f]) > tick:  # the plan it had before: what "no new decision" leaves it on
                prior = (int(s.plan_goal[f]), int(s.plan_param[f]), int(s.plan_end[f]) - tick)
                keep = plan_words(prior, plans) if not same_plan(prior, own) else None
            out.append({"tick": tick, "fish": f, "recorded": plans.describe(*own), "goal": plans.names[own[0]],
                        "alternatives": alts, "keep": keep, "tier": int(made.tier[k])})
    return out


def picked(d: dict[str, Any], kind: str, k: int, rng: np.random.Generator) -> list[str]:
    """The alternatives of decision ``d`` that are tried (``--alternatives``)."""
    if kind == "keep":
        return [d["keep"]] if d["keep"] else []
    alts: list[str] = d["alternatives"]
    if kind == "random" and alts:
        return [alts[i] for i in sorted(rng.choice(len(alts), min(k, len(alts)), replace=False).tolist())]
    return alts


def sample_null(forker: Forker, runner: Runner, decisions: list[dict[str, Any]], rng: np.random.Generator,
                null_max: int, tasks: list[Task], owner: list[tuple[str, int]], results: list[dict[str, Any]],
                done_keys: dict[tuple[int, int, str], int]
                ) -> tuple[list[tuple[int, dict[str, Any], str]], list[float]]:
    """The null's samples — (result index, decision, alternative) — drawn in batches until the
    95th percentile of their |effect| is stable (module doc), and that percentile per batch;
    forks not run yet are added to ``tasks``/``owner``/``results``."""
    with_alts = [d for d in decisions if d["alternatives"]]
    rows: list[tuple[int, dict[str, Any], str]] = []
    p95: list[float] = []
    target = NULL_FIRST
    while with_alts and len(rows) < min(target, null_max):
        want = min(target, null_max) - len(rows)
        picks = [(with_alts[i], with_alts[i]["alternatives"][int(rng.integers(len(with_alts[i]["alternatives"])))])
                 for i in rng.integers(0, len(with_alts), size=want).tolist()]
        new: list[Task] = []
        for d, a in picks:
            key = (d["tick"], d["fish"], a)
            if key not in done_keys:
                done_keys[key] = len(tasks) + len(new)
                new.append(Task("null", d["tick"], d["fish"], a))
            rows.append((done_keys[key], d, a))
        tasks += new
        owner += [("null", 0)] * len(new)
        results += runner.run(new)
        effects = np.array([forker.recorded(d["tick"])[0] - results[i]["outcome"] for i, d, _ in rows])
        p95.append(float(np.percentile(np.abs(effects), 95)))
        if len(p95) >= 2 and abs(p95[-1] - p95[-2]) <= NULL_STABLE * max(1e-9, p95[-2]):
            break
        target = len(rows) + NULL_BATCH
    return rows, p95


def rank(tested: list[dict[str, Any]], owner: list[tuple[str, int]], results: list[dict[str, Any]], forker: Forker,
         null_effects: np.ndarray, null_of: np.ndarray, band: tuple[float, float],
         rng: np.random.Generator) -> list[dict[str, Any]]:
    """Each tested decision's effect, interval, band (the null without its own swaps) and verdict."""
    by_decision: dict[int, list[int]] = {}
    for i, (what, j) in enumerate(owner):
        if what == "test":
            by_decision.setdefault(j, []).append(i)
    ranked: list[dict[str, Any]] = []
    for j, d in enumerate(tested):
        rec_value = forker.recorded(d["tick"])[0]
        ys = np.array([results[i]["outcome"] for i in by_decision.get(j, [])])
        row: dict[str, Any] = {"tick": d["tick"], "fish": d["fish"], "recorded": d["recorded"], "goal": d["goal"],
                               "alternatives": len(ys), "outcome_recorded": round(rec_value, 4),
                               "effect": None, "low": None, "high": None, "band": None, "pivotal": False,
                               "strongest_alternative": None, "strongest_outcome": None}
        if len(ys):
            lo, hi = bootstrap(rec_value - ys, rng)
            strongest = int(np.argmax(np.abs(ys - rec_value)))
            # its band: the null without this decision's own swaps (a decision is not its own null)
            others = null_effects[null_of != d["tick"] * 2**20 + d["fish"]]
            mine = (float(np.percentile(others, 2.5)), float(np.percentile(others, 97.5))) if len(others) else band
            row.update(effect=round(float(rec_value - ys.mean()), 4), low=round(lo, 4), high=round(hi, 4),
                       band=[round(mine[0], 4), round(mine[1], 4)], pivotal=bool(lo > mine[1] or hi < mine[0]),
                       strongest_alternative=d["tested"][strongest], strongest_outcome=round(float(ys[strongest]), 4))
        ranked.append(row)
    return ranked


def table(path: str, outcome: str, t_end: int, decisions: list[dict[str, Any]], tasks: list[Task],
          results: list[dict[str, Any]], ab_tasks: list[Task], ab_results: list[dict[str, Any]], forker: Forker,
          rec_w0: float) -> tuple[dict[str, list[Any]], int]:
    """The table (one row per fork, :data:`ROW_TYPES`) and the ticks all the forks simulated."""
    rows: dict[str, list[Any]] = {c: [] for c in ROW_TYPES}
    by_key = {(dd["tick"], dd["fish"]): dd for dd in decisions}
    ticks_run = 0
    for task, r in [*zip(tasks, results), *zip(ab_tasks, ab_results)]:
        ablated = task.kind.startswith("ablate")
        rv = rec_w0 if ablated else forker.recorded(task.tick)[0]
        found = by_key.get((task.tick, task.fish))
        rows["kind"].append(task.kind)
        rows["tick"].append(task.tick)
        rows["fish"].append(task.fish)
        rows["recorded_plan"].append((forker.rec.plans.names[task.goal] if task.goal >= 0 else "")
                                     if ablated
                                     else (found["recorded"] if found else ""))
        rows["alternative"].append(f"random chooser, replicate {task.rep}" if ablated else task.plan)
        rows["outcome"].append(r["outcome"])
        rows["outcome_recorded"].append(rv)
        rows["delta"].append(r["outcome"] - rv)
        rows["final_hash"].append(r["final_hash"])
        rows["rerun"].append("" if ablated else
                             f"fork {shlex.quote(path)} --at {task.tick} --fish {task.fish} --plan "
                             f"{shlex.quote(task.plan)} --ticks {t_end - task.tick} --outcome {shlex.quote(outcome)}")
        ticks_run += t_end - task.tick
    return rows, ticks_run


def ablations(runner: Runner, forker: Forker, ranked: list[dict[str, Any]], decisions: list[dict[str, Any]], w0: int,
              ablate_fish: int, ablate_reps: int, band: tuple[float, float], rng: np.random.Generator,
              say: Callable[[str], None] | None) -> tuple[list[Task], list[dict[str, Any]], list[dict[str, Any]],
                                                          list[dict[str, Any]], float]:
    """Per fish (its decisions' summed effects; the ``ablate_fish`` largest ablated) and per plan
    type (every such choice replaced): (their forks, results, the fish's and the types' figures,
    the outcome as recorded from ``w0``)."""
    per_fish: dict[int, float] = {}
    for r in ranked:
        if r["effect"] is not None:
            per_fish[r["fish"]] = per_fish.get(r["fish"], 0.0) + r["effect"]
    order = sorted(per_fish, key=lambda f: -abs(per_fish[f]))
    tasks = [Task("ablate_fish", w0, f, rep=r) for f in order[:ablate_fish] for r in range(ablate_reps)]
    plans = forker.rec.plans
    goals_seen = sorted({plans.code[d["goal"]] for d in decisions if d["goal"] in plans.code and d["goal"] != "hold"})
    tasks += [Task("ablate_goal", w0, goal=g, rep=r) for g in goals_seen for r in range(ablate_reps)]
    if say and tasks:
        say(f"influence: {len(tasks)} ablation forks (fish and plan types) …")
    results = runner.run(tasks)
    rec_w0 = forker.recorded(w0)[0]

    def ablated(sel: list[int]) -> dict[str, Any]:
        ys = np.array([results[i]["outcome"] for i in sel])
        lo, hi = bootstrap(rec_w0 - ys, rng)
        return {"effect": round(float(rec_w0 - ys.mean()), 4), "low": round(lo, 4), "high": round(hi, 4),
                "replicates": len(ys), "beyond_null": bool(lo > band[1] or hi < band[0])}

    fish_out = []
    for f in order:
        entry: dict[str, Any] = {"fish": f, "sum_of_effects": round(per_fish[f], 4),
                                 "decisions": sum(1 for r in ranked if r["fish"] == f),
                                 "pivotal": sum(1 for r in ranked if r["fish"] == f and r["pivotal"])}
        sel = [i for i, t in enumerate(tasks) if t.kind == "ablate_fish" and t.fish == f]
        if sel:
            entry["ablated"] = ablated(sel)
        fish_out.append(entry)
    types_out = [{"plan": plans.names[g], "choices_in_window": sum(1 for d in decisions if d["goal"] == plans.names[g]),
                  "replaced": ablated([i for i, t in enumerate(tasks) if t.kind == "ablate_goal" and t.goal == g])}
                 for g in goals_seen]
    return tasks, results, fish_out, types_out, rec_w0


def influence(path: str | Path, outcome: str, window: tuple[int, int] | None = None, fish: str | None = None,
              alternatives: str = "all", brain: str = "recorded", choice: ReaderChoice | None = None,
              max_requests: int = 0, workers: int = 1, seed: int = 0, null_max: int = 400,
              ablate_fish: int = 5, ablate_reps: int = 6, say: Callable[[str], None] | None = None,
              registry: Registry | None = None) -> dict[str, Any]:
    """Influence of every decision of ``window`` on ``outcome`` (module doc): a dict with
    ``rows`` (one per fork) and the summary (``decisions`` ranked, ``null``, ``pivotal``,
    ``fish``, ``plan_types``, forks run, requests sent, seconds). ``registry``: the run's that
    reads the recording (mirofish/registry.py; default the process's) — one of the caller's own
    runs its forks in this process."""
    start = time.perf_counter()
    path = str(path)
    forker = Forker(path, outcome, brain, choice, (0, 0), max_requests, registry)
    runner: Runner | None = None
    try:
        rec, cfg, out = forker.rec, forker.cfg, forker.outcome
        if window is None:
            window = (max(rec.first_tick, out.t0 - 100), out.t0)
        w0, w1 = window
        if not (rec.first_tick <= w0 < w1 <= rec.last_tick):
            raise InfluenceError(f"--window {w0}:{w1} is outside the recording's ticks "
                                 f"{rec.first_tick}..{rec.last_tick}")
        if w1 > out.t0:
            raise InfluenceError(f"--window {w0}:{w1} ends after the outcome's tick {out.t0}: a decision can only "
                                 "influence what comes after it")
        forker.window = (w0, w1)
        chosen = fish_ids(fish, cfg)
        rng = np.random.default_rng(seed)
        kind, k_random = alternatives_of(alternatives)
        decisions = window_decisions(forker, w0, w1)  # with the plans each fish was offered
        if not decisions:
            raise InfluenceError(f"no decision was made in ticks {w0}..{w1 - 1}: nothing to test")
        tested = [d for d in decisions if chosen is None or d["fish"] in chosen]
        if not tested:
            raise InfluenceError(f"--fish {fish}: none of them decided in ticks {w0}..{w1 - 1}")
        tasks: list[Task] = []
        owner: list[tuple[str, int]] = []  # per task: ("test", decision index) / ("null", sample) / ablations
        d: dict[str, Any]
        for j, d in enumerate(tested):
            d["tested"] = picked(d, kind, k_random, rng)
            for a in d["tested"]:
                tasks.append(Task("keep" if kind == "keep" else "alternative", d["tick"], d["fish"], a))
                owner.append(("test", j))
        done_keys: dict[tuple[int, int, str], int] = {(t.tick, t.fish, t.plan): i for i, t in enumerate(tasks)}
        if say:
            say(f"influence: {len(tested)} decisions in t{w0}..t{w1 - 1}, {len(tasks)} forks to t{out.t1} …")
        runner = Runner(forker, workers, path, outcome)
        results = runner.run(tasks)
        # the null: random decisions of the window, each replaced by a random offered alternative
        null_rows, null_p95 = sample_null(forker, runner, decisions, rng, null_max, tasks, owner, results, done_keys)
        null_effects = np.array([forker.recorded(d["tick"])[0] - results[i]["outcome"] for i, d, _ in null_rows])
        band = (float(np.percentile(null_effects, 2.5)), float(np.percentile(null_effects, 97.5))) \
            if len(null_effects) else (0.0, 0.0)
        # each null sample's decision, as tick * 2**20 + fish
        null_of = np.array([d["tick"] * 2**20 + d["fish"] for _, d, _ in null_rows], np.int64)
        ranked = rank(tested, owner, results, forker, null_effects, null_of, band, rng)
        ranked.sort(key=lambda r: -abs(r["effect"]) if r["effect"] is not None else 0.0)
        ab_tasks, ab_results, fish_out, types_out, rec_w0 = ablations(
            runner, forker, ranked, decisions, w0, ablate_fish, ablate_reps, band, rng, say)
        rows, ticks_run = table(path, outcome, out.t1, decisions, tasks, results, ab_tasks, ab_results, forker, rec_w0)
        seconds = time.perf_counter() - start
        brain_label = ("instinct (offline, in place of the recording's brain; the baseline is a fork that keeps "
                       "the fork tick's decisions, instinct after)" if forker.swaps_brain
                       else f"the recording's own ({cfg.brain.kind})")
        summary = {
            "recording": path, "outcome": outcome, "outcome_recorded": round(rec_w0, 4),
            "baseline": "a fork keeping the fork tick's decisions" if forker.swaps_brain else "the recording",
            "window": [w0, w1], "alternatives": alternatives, "brain": brain_label, "seed": seed,
            "decisions_in_window": len(decisions), "decisions_tested": len(tested),
            "forks": len(tasks) + len(ab_tasks), "ticks_simulated": ticks_run, "workers": runner.workers,
            "seconds": round(seconds, 2),
            "forks_per_second": round((len(tasks) + len(ab_tasks)) / max(seconds, 1e-9), 1),
            "null": {"samples": len(null_effects), "band": [round(band[0], 4), round(band[1], 4)],
                     "p95_abs": round(float(np.percentile(np.abs(null_effects), 95)), 4) if len(null_effects) else None,
                     "stable": len(null_p95) >= 2 and abs(null_p95[-1] - null_p95[-2])
                     <= NULL_STABLE * max(1e-9, null_p95[-2]),
                     "what": "effect of replacing a decision drawn at random from the window by a random offered "
                             "alternative; band = its central 95 %"},
            "pivotal": [r for r in ranked if r["pivotal"]],
            "pivotal_share": round(sum(1 for r in ranked if r["pivotal"]) / max(1, len(ranked)), 4),
            "decisions": ranked, "fish": fish_out, "plan_types": types_out, "note": NOTE,
        }
        if cfg.brain.kind != "instinct" or cfg.fish.groups:
            summary["model"] = {"requests_sent": forker.requests_sent, "max_requests": max_requests,
                                "answered_from_recording": forker.cache_hits, "not_in_recording": forker.cache_misses}
        return {"summary": summary, "rows": rows}
    finally:
        if runner is not None:
            runner.close()
        forker.close()


ROW_TYPES = {"kind": "string", "tick": "int64", "fish": "int64", "recorded_plan": "string", "alternative": "string",
             "outcome": "float64", "outcome_recorded": "float64", "delta": "float64", "final_hash": "string",
             "rerun": "string"}


def measure_fork(path: str | Path, tick: int, fish: int, plan: str, outcome: str,
                 choice: ReaderChoice | None = None, registry: Registry | None = None) -> dict[str, Any]:
    """One fork as ``influence`` runs it (``fork --outcome``): its outcome and final hash."""
    forker = Forker(path, outcome, "recorded", choice, registry=registry)
    try:
        if not forker.rec.first_tick <= tick < forker.outcome.t0:
            raise InfluenceError(f"--outcome {outcome}: its tick must come after the fork at t{tick}")
        return forker.run(Task("alternative", tick, fish, plan))
    finally:
        forker.close()


def write_outputs(result: dict[str, Any], out_dir: str | Path, fmt: str, inputs: Iterable[str | Path],
                  overwrite: bool) -> dict[str, str]:
    """The table (``influence.parquet``/``.csv``), ``influence.json``; the PNG is the window's (ui)."""
    import json

    from ..observe.tablefile import write_table
    from .tables import check_parquet, table_targets

    check_parquet(fmt)
    files = table_targets(out_dir, ["influence"], fmt, tuple(inputs), overwrite, "--out")
    target = files["influence"]
    target.parent.mkdir(parents=True, exist_ok=True)
    summary_path = target.parent / "influence.json"
    if summary_path.exists() and not overwrite:
        raise InfluenceError(f"{summary_path} exists (--overwrite to replace it)")
    write_table(target, result["rows"], fmt, ROW_TYPES)
    tmp = summary_path.with_name(summary_path.name + ".tmp")
    tmp.write_text(json.dumps(result["summary"], indent=1))
    os.replace(tmp, summary_path)
    return {"table": str(target), "summary": str(summary_path)}


def render_text(s: dict[str, Any], top: int = 12) -> str:
    """The summary as a person reads it: the null, the ranking (pivotal marked), fish and plan types."""
    band = s["null"]["band"]
    was = "as recorded" if s.get("baseline", "the recording") == "the recording" else "baseline"
    lines = [f"influence on {s['outcome']} ({was}: {s['outcome_recorded']:g}) of the decisions in "
             f"t{s['window'][0]}..t{s['window'][1] - 1}: {s['decisions_tested']} decisions, {s['forks']} forks, "
             f"{s['seconds']:.1f} s ({s['forks_per_second']:g} forks/s, {s['workers']} worker"
             f"{'s' if s['workers'] != 1 else ''}); brain after the fork: {s['brain']}",
             f"null: {s['null']['samples']} random swaps; their effects' central 95 % (the band; each decision is "
             f"judged against the band of the other decisions' swaps) "
             f"{band[0]:+.3g} .. {band[1]:+.3g}"
             + ("" if s["null"]["stable"] else " (not yet stable: raise --null-max)"),
             f"pivotal: {len(s['pivotal'])} of {s['decisions_tested']} decisions ({s['pivotal_share']:.0%})",
             f"effect = {s['outcome']} with the recorded choice - its mean over the choice's alternatives "
             f"(+: the recorded choice raised it, -: lowered it)", "",
             " rank  tick  fish  recorded plan                       effect   95% interval        alts  strongest "
             "alternative"]
    for n, r in enumerate(s["decisions"][:top], 1):
        if r["effect"] is None:
            continue
        mark = "*" if r["pivotal"] else " "
        interval = f"[{r['low']:+.3g}, {r['high']:+.3g}]"
        lines.append(f"{mark}{n:4d}  {r['tick']:4d}  {r['fish']:4d}  {r['recorded'][:34]:34s}  {r['effect']:+7.3g}  "
                     f"{interval:18s}  {r['alternatives']:4d}  {r['strongest_alternative']} -> "
                     f"{r['strongest_outcome']:g}"
                     + (f"  (its band {r['band'][0]:+.3g} .. {r['band'][1]:+.3g})" if r["pivotal"] else ""))
    if s["fish"]:
        lines += ["", "fish (summed effects; ablated: all its decisions in the window by the random chooser):"]
        for f in s["fish"][:6]:
            ab = f.get("ablated")
            n = f["decisions"]
            lines.append(f"  fish {f['fish']:4d}: sum {f['sum_of_effects']:+.3g} over {n} decision{'s' * (n != 1)}"
                         + (f"; ablated {ab['effect']:+.3g} [{ab['low']:+.3g}, {ab['high']:+.3g}] "
                            f"({ab['replicates']} replicates)" if ab else ""))
    if s["plan_types"]:
        lines += ["", "plan types (every such choice in the window replaced by another that fits):"]
        for t in s["plan_types"]:
            r = t["replaced"]
            lines.append(f"  {t['plan']:10s} ({t['choices_in_window']} choices): {r['effect']:+.3g} "
                         f"[{r['low']:+.3g}, {r['high']:+.3g}]"
                         + ("  beyond the null band" if r["beyond_null"] else ""))
    if "model" in s:
        m = s["model"]
        lines += ["", f"model: {m['answered_from_recording']} requests answered from the recording, "
                      f"{m['requests_sent']} sent to the server (--max-requests {m['max_requests']}), "
                      f"{m['not_in_recording']} not in the recording"]
    lines += ["", s["note"]]
    if "files" in s:
        lines.append("wrote " + ", ".join(s["files"].values()))
    return "\n".join(lines)
