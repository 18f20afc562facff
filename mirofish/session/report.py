"""The single-fish report: one fish over a tick range, as numbers.

Action distribution (vs the tank), energy curve, memory length (the characters of memory a
model would be fed), social contacts, drift score (its latest long-term summary vs its
persona), stuck peak, and exploration share (distinct cells per tick) vs the tank mean.
The range is re-simulated from the recording, so every figure is exact. ``report --png``
draws it with :func:`mirofish.ui.figures.report_png`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..brains.base import LATE_ANSWER, TIERS, late_replaces, status_name
from ..fish.memory import drift_score
from ..observe.recording import Recording, RecordingError
from ..observe.worddeed import WordDeed
from .replay import ReplaySession


@dataclass
class FishReport:
    fish: int
    t0: int
    t1: int
    persona: str
    traits: dict[str, int]
    actions: dict[str, float]
    tank_actions: dict[str, float]
    energy: list[float]  # after each tick of the range
    memory_chars: list[int]
    company_ticks: int
    encounters: int
    drift: list[float]  # per kept summary at the end, oldest first (a template's too: see drift_by)
    stuck_peak: int
    exploration: float
    tank_exploration: float
    eats: int
    refusals: int
    decisions: dict[str, Any]  # this fish's decisions in the window by tier
    fallback_reasons: dict[str, Any]  # … and, of those the fallback made, why
    # does it do what it says: shares over its plans judged in the window (observe/worddeed.py)
    word_deed: dict[str, Any]
    # a mixed tank: the fish's group, and every group's figures over the range (observe/groups.py)
    group: str | None = None
    groups: dict[str, Any] | None = None
    memory: str = "two_level"  # the run's memory.kind (docs/memory.md), as recorded
    # of its cache_miss fallbacks (a fork of a model run): what the server asked instead said, or
    # "not asked" (no server, an open breaker, a spent budget) — a fork's summary's cache_miss_reasons
    cache_miss_reasons: dict[str, Any] = field(default_factory=dict)
    # who wrote each kept summary of ``drift``: "model" (its own words, judged) or "template" (the
    # memory's template, facts in set words, whatever the brain: its score says nothing of the
    # fish, n/a as in the window)
    drift_by: list[str] = field(default_factory=list)

    def drift_judged(self, model: bool = True) -> list[str]:
        """The drift scores of the summaries a model wrote (``model``), or of the template's, as text."""
        by = self.drift_by or ["model"] * len(self.drift)
        return [f"{d:.2f}" for d, who in zip(self.drift, by) if (who == "model") == model]

    def drift_text(self) -> str:
        """The drift scores as the window's follow panel judges them: a model's own summaries'
        scores; a template summary's n/a, with its score and why."""
        if not self.drift:
            return "no summary yet"
        judged, template = self.drift_judged(), self.drift_judged(model=False)
        if not template:
            return ", ".join(judged)
        n = len(template)
        why = (f"n/a for {'a template summary' if n == 1 else f'{n} template summaries'} (the memory's template: "
               f"facts in set words, not the fish's own, scoring {', '.join(template)}; only a model's own "
               f"summaries are judged)")
        return ", ".join(judged) + f"; {why}" if judged else why

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def fish_report(path: str | Path | Recording, fish: int, t0: int | None = None, t1: int | None = None) -> FishReport:
    """Re-simulate ``[t0, t1)`` of a recording and measure fish ``fish``."""
    player = ReplaySession(path)
    n = player.cfg.fish.slots
    if not 0 <= fish < n:
        raise RecordingError(f"--fish {fish} does not exist (this tank has fish 0..{n - 1})")
    t0 = player.first_tick if t0 is None else t0
    t1 = player.last_tick if t1 is None else t1
    if not player.first_tick <= t0 < t1 <= player.last_tick:
        raise RecordingError(f"tick range {t0}..{t1} is not inside the recording ({player.first_tick}.."
                             f"{player.last_tick}) or is empty")
    player.seek(t0)
    judge = WordDeed(n, keep=True, plans=player.plans)  # plans that start and end inside the window
    player.engine.observers.append(judge.observe)
    per_group = None
    if player.cfg.fish.groups:
        from ..observe.groups import GroupFigures

        per_group = GroupFigures(player.cfg)
        player.engine.observers.append(per_group)
    w = player.world
    s = w.school
    start_eats, start_refusals = int(s.eats[fish]), int(s.refusals[fish])
    cells = np.empty((t1 - t0, n), np.int64)
    names = w.grid.action_names  # (the tank's grid: mirofish/grid.py)
    mine = np.zeros(len(names), np.int64)
    tank = np.zeros(len(names), np.int64)
    energy, memory_chars = [], []
    company = encounters = stuck_peak = 0
    before = int(s.neighbours[fish])
    tiers: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    misses: Counter[str] = Counter()
    last_fallback = np.full(1, -1, np.int16)  # the fish's latest fallback (a late model answer replaces it)
    for k in range(t1 - t0):
        frame = player.step()
        assert frame is not None  # t1 <= last_tick
        for b in frame.applied:
            for i in np.flatnonzero(b.fish == fish):
                _count_decision(b, int(i), fish, tiers, reasons, misses, last_fallback)
        cells[k] = s.cell
        mine[frame.executed[fish]] += 1
        tank += np.bincount(frame.executed, minlength=len(names))
        energy.append(int(s.energy[fish]) / 100)
        p = w.perceive(fish)
        memory_chars.append(sum(len(m) for m in p.memories) + sum(len(x) for x in p.summaries))
        nb = int(s.neighbours[fish])
        company += nb > 0
        encounters += nb > 0 and before == 0
        before = nb
        stuck_peak = max(stuck_peak, int(s.stuck[fish]))
    visited = np.sort(cells, axis=0)
    distinct = 1 + np.count_nonzero(np.diff(visited, axis=0), axis=0)
    span = t1 - t0
    persona = s.persona[fish]
    report = FishReport(
        fish=fish, t0=t0, t1=t1, persona=persona,
        traits={k: int(v) for k, v in zip(("sociability", "curiosity", "caution", "appetite", "calm"), s.traits[fish])},
        actions={a: round(float(c / span), 4) for a, c in zip(names, mine)},
        tank_actions={a: round(float(c / tank.sum()), 4) for a, c in zip(names, tank)},
        energy=energy, memory_chars=memory_chars, company_ticks=int(company), encounters=int(encounters),
        drift=[round(drift_score(x, persona), 3) for x in w.summaries(fish)], stuck_peak=stuck_peak,
        drift_by=["model" if own else "template" for own in s.long_memory.written(fish)],
        exploration=round(float(distinct[fish] / span), 4), tank_exploration=round(float(distinct.mean() / span), 4),
        eats=int(s.eats[fish]) - start_eats, refusals=int(s.refusals[fish]) - start_refusals,
        decisions=dict(tiers), fallback_reasons=dict(reasons), cache_miss_reasons=dict(+misses),
        word_deed={**{k: v for k, v in judge.fish(fish).items() if k != "recent"},
                   "plans": [r for r in judge.records if r["fish"] == fish]},
        group=per_group.names[int(per_group.of[fish])] if per_group is not None else None,
        groups=per_group.summary(judge) if per_group is not None else None,
        memory=_memory_of(player.cfg, per_group.names[int(per_group.of[fish])] if per_group is not None else None),
    )
    player.close()
    return report


def _count_decision(b: Any, i: int, fish: int, tiers: Counter[str], reasons: Counter[str], misses: Counter[str],
                    last_fallback: np.ndarray) -> None:
    """Decision ``i`` of applied batch ``b`` (the fish's) counted: its tier, the fallback's reason,
    a cache_miss's server reason (:func:`miss_reason`); a late model answer takes the fallback it
    replaces back out (one outcome a request)."""
    tiers[TIERS[int(b.tier[i])]] += 1
    st = int(b.status[i]) if b.status is not None else 0
    if st and st != LATE_ANSWER:
        reasons[status_name(st)] += 1
        if status_name(st) == "cache_miss":
            misses[miss_reason(b.calls, fish)] += 1
    for _, was in late_replaces(last_fallback, np.zeros(1, np.int64), np.array([st])):
        if was >= 0:  # one outcome a request: the late model plan replaces the fallback
            tiers["fallback"] -= 1
            reasons[status_name(was)] -= 1
            reasons["late_answer"] += 1


def miss_reason(calls: list[dict[str, Any]] | None, fish: int) -> str:
    """Why a reply-cache miss of ``fish`` fell back: the server's reason its decision's exchange keeps
    (``http_500``, ``timeout`` …: as ``trace`` shows it, ``cache_miss (server: http_500)``), or
    ``not asked`` when none was sent (no server given, an open breaker, a spent budget)."""
    failed = [c["read"] for c in calls or () if c.get("fish") == fish and c.get("kind") == "decision"
              and c.get("reply") is None and c.get("read") not in (None, "ok")]
    return str(failed[-1]) if failed else "not asked"


def _reasons_text(r: FishReport) -> str:
    """The fallback's reasons, a cache_miss with its server's reasons beside it, as a fork's
    summary gives them (``cache_miss 3 (server: http_500 3)``)."""
    def one(k: str, v: Any) -> str:
        if k != "cache_miss" or not r.cache_miss_reasons:
            return f"{k} {v}"
        said = ", ".join(f"{m} {n}" for m, n in sorted(r.cache_miss_reasons.items()) if m != "not asked")
        unsent = r.cache_miss_reasons.get("not asked", 0)
        why = [f"server: {said}"] if said else []
        why += [f"no server asked {unsent}"] if unsent else []
        return f"{k} {v} ({'; '.join(why)})"

    return ", ".join(one(k, v) for k, v in sorted(r.fallback_reasons.items()))


def _memory_of(cfg: Any, group: str | None) -> str:
    """The memory the fish's prompts were told (its group's in a mixed tank)."""
    names = cfg.fish.group_names()
    if group is not None and group in names:
        return str(cfg.for_group(names.index(group)).memory.kind)
    return str(cfg.memory.kind)


def _word_deed_line(wd: dict[str, Any]) -> str:
    if not wd["plans_judged"]:
        return "no plan began and ended in this window"
    deeds = f"{wd['deed_done']:.0%} of {wd['plans_judged']} plans happened"
    if wd["word_agrees"] is None:
        return deeds + " (no thoughts to judge: the instinct brain writes none)"
    odd = [p for p in wd["plans"] if p["word"] is False][:2]
    said = "; ".join(f"t{p['tick']} {p['goal']} while saying \u201c{p['thought']}\u201d" for p in odd)
    unseen = wd.get("word_unfounded") or 0
    return (f"its thoughts agree with {wd['word_agrees']:.0%} of {wd['thoughts_judged']} plans, {deeds}, both "
            f"{wd['word_and_deed']:.0%}"
            + (f"; {unseen} claimed food with none in view" if unseen else "")
            + (f"; disagreed: {said}" if said else ""))


def render_text(r: FishReport) -> str:
    bar: Callable[[float], str] = lambda v: "#" * int(round(v * 40))
    e = np.array(r.energy)
    lines = [
        f"Fish {r.fish}, ticks {r.t0}..{r.t1} ({r.t1 - r.t0} ticks)",
        f"  persona: {r.persona}",
        "  traits:  " + ", ".join(f"{k} {v}" for k, v in r.traits.items()),
        "  actions (fish | tank):",
    ]
    for a in r.actions:
        lines.append(f"    {a:<7} {r.actions[a]:6.1%} {bar(r.actions[a]):<20} | {r.tank_actions[a]:6.1%}")
    more = "more" if r.exploration >= r.tank_exploration else "less"
    ratio = r.exploration / r.tank_exploration if r.tank_exploration else 0.0
    lines += [
        f"  energy: start {e[0]:.1f}, end {e[-1]:.1f}, mean {e.mean():.1f}, min {e.min():.1f}, max {e.max():.1f}",
        f"  meals: {r.eats}   refused or blocked moves: {r.refusals}   stuck peak: {r.stuck_peak}",
        f"  social: in company {r.company_ticks / (r.t1 - r.t0):.0%} of ticks, {r.encounters} encounters",
        f"  exploration: {r.exploration:.3f} new cells per tick vs tank mean {r.tank_exploration:.3f} "
        f"({ratio:.0%}, {more} than average)",
        f"  memory: {r.memory}" + ("" if r.memory == "two_level" else " (what its prompts were told is in the "
                                   "recorded exchanges; the lengths below are the tank's two-level memory)"),
        f"  memory length: mean {np.mean(r.memory_chars):.0f} chars, max {max(r.memory_chars)}",
        "  decisions: " + (", ".join(f"{k} {v}" for k, v in sorted(r.decisions.items())) or "none")
        + ("   fallback because: " + _reasons_text(r) if r.fallback_reasons else ""),
        "  word and deed: " + _word_deed_line(r.word_deed),
        "  drift score (summary vs persona, 1 = in character): " + r.drift_text(),
    ]
    if r.groups is not None:
        from ..observe.groups import render_lines

        lines[1:1] = [f"  group: {r.group} ({r.groups[r.group or '']['brain']})"]
        lines += ["  groups over the range:"] + ["    " + x for x in render_lines(r.groups)]
    return "\n".join(lines)
