"""Figures per group of a mixed tank (``[[fish.groups]]``, docs/groups.md), from the frames.

An observer like the metrics: it reads each :class:`~mirofish.frame.Frame` (live, headless, or a
recording re-simulated by ``report`` and ``diff``) and splits by the fish's group
(``FishConfig.group_of``: a pure function of the config, which every recording stores). Per group:

* ``fish`` — fish in the group; ``brain`` — what decides for it (:func:`brain_label`);
* ``mean_energy`` — the group's fish's mean energy over the ticks seen, ``final_energy`` at the last;
* ``schooling`` — the mean over ticks of the share of the group's fish in the water with more
  than one other fish in view that moved this tick (the tank's schooling degree, per tick and
  for a subset: company that swims, not a resting heap);
* ``eats`` — eat actions carried out per fish per 1,000 ticks (the food economy);
* ``decisions`` by tier and ``fallbacks`` by reason (each decision's recorded status),
  ``own_share`` — the share its own brain made (not the fallback), ``tokens`` — prompt and
  completion tokens of its decisions, ``tokens_per_decision``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ..actions import Action
from ..arbiter import MOVED
from ..brains.base import LATE_ANSWER, TIERS, late_replaces, status_name
from ..config import Config
from ..frame import Frame


def brain_label(cfg: Config) -> str:
    """A brain in a few words: ``instinct``, ``llm fish-mini``, ``RuleBrain`` (a user brain's NAME),
    with the model a user brain chats with and a prompt file other than the default."""
    b = cfg.brain
    eps = b.small.endpoints or b.large.endpoints
    if b.kind == "instinct":
        label = "instinct"
    elif b.kind == "llm":
        label = "llm " + (eps[0].model if eps else "?")
    else:
        label = b.kind.rpartition(":")[2] + (f" + {eps[0].model}" if eps else "")
    if b.prompt:
        label += f" ({b.prompt.rsplit('/', 1)[-1]})"
    return label


def groups_now(cfg: Config, view: Any, metrics: Any) -> list[tuple[int, str, int, float, float]]:
    """A mixed tank's groups as of the tick on screen (the window's legend and charts): per group
    in the water, ``(index, name, fish, mean energy, schooling degree)`` — the energy from ``view``
    (a :class:`~mirofish.snapshot.TankView`), the schooling degree the metrics' own test over the
    group's fish (:meth:`~mirofish.observe.metrics.Metrics.schooling_of`)."""
    of = np.asarray(cfg.fish.group_of(), np.int64)[: len(view.energy)]
    here = np.ones(len(of), bool) if view.present is None else np.asarray(view.present[: len(of)], bool)
    energy = np.asarray(view.energy[: len(of)], np.float64) / 100.0
    out = []
    for g, name in enumerate(cfg.fish.group_names()):
        mine = (of == g) & here
        n = int(np.count_nonzero(mine))
        if n:
            out.append((g, name, n, float(energy[mine].mean()), metrics.schooling_of(mine)))
    return out


class GroupFigures:
    """Per-group accumulators over the frames it is called with."""

    def __init__(self, cfg: Config):
        self.names = cfg.fish.group_names()
        self.of = np.asarray(cfg.fish.group_of(), np.int64)
        self._last_fallback = np.full(self.of.size, -1, np.int16)  # for late answers (brains/base.py)
        self.labels = [brain_label(cfg.for_group(g)) for g in range(len(self.names))]
        k = len(self.names)
        self.masks = [self.of == g for g in range(k)]
        self.ticks = 0
        self.energy_sum = np.zeros(k)
        self.energy_n = np.zeros(k)
        self.final_energy = np.zeros(k)
        self.schooling_sum = np.zeros(k)
        self.eats = np.zeros(k, np.int64)
        self.tokens = np.zeros(k, np.int64)
        self.tiers = [Counter[str]() for _ in range(k)]
        self.fallbacks = [Counter[str]() for _ in range(k)]

    def __call__(self, f: Frame) -> None:
        self.ticks += 1
        here = np.ones(self.of.size, bool) if f.present is None else np.asarray(f.present, bool)
        company = (f.neighbours > 1) & (f.move_outcome == MOVED)
        eat = f.executed == int(Action.EAT)
        for g, m in enumerate(self.masks):
            m = m & here
            n = int(np.count_nonzero(m))
            if not n:
                continue
            e = f.energy[m] / 100.0
            self.energy_sum[g] += float(e.sum())
            self.energy_n[g] += n
            self.final_energy[g] = float(e.mean())
            self.schooling_sum[g] += np.count_nonzero(company & m) / n
            self.eats[g] += int(np.count_nonzero(eat & m))
        for b in f.applied:
            groups = self.of[b.fish]
            for g, t, s, tok in zip(groups.tolist(), b.tier.tolist(), b.status.tolist(), b.tokens.tolist()):
                self.tiers[g][TIERS[t] if 0 <= t < len(TIERS) else str(t)] += 1
                if s and s != LATE_ANSWER:
                    self.fallbacks[g][status_name(s)] += 1
                self.tokens[g] += tok
            for fish, st in late_replaces(self._last_fallback, b.fish, b.status):  # one outcome a request
                if st >= 0:
                    g = int(self.of[fish])
                    self.tiers[g]["fallback"] -= 1
                    self.fallbacks[g][status_name(st)] -= 1

    def summary(self, word_deed: Any = None) -> dict[str, dict[str, Any]]:
        """Each group's figures; with ``word_deed`` (an observe.worddeed.WordDeed of the same
        ticks) also its word-and-deed shares."""
        out = {}
        for g, name in enumerate(self.names):
            fish = int(np.count_nonzero(self.masks[g]))
            if not fish:
                continue
            made = sum(self.tiers[g].values())
            fell = self.tiers[g].get("fallback", 0)
            out[name] = {
                "fish": fish, "brain": self.labels[g],
                "mean_energy": round(self.energy_sum[g] / max(1.0, self.energy_n[g]), 2),
                "final_energy": round(float(self.final_energy[g]), 2),
                "schooling": round(float(self.schooling_sum[g]) / max(1, self.ticks), 4),
                "eats_per_fish_per_1000_ticks": round(1000.0 * int(self.eats[g]) / max(1, fish * self.ticks), 2),
                "decisions": dict(sorted(self.tiers[g].items())), "fallbacks": dict(sorted(self.fallbacks[g].items())),
                "own_share": round((made - fell) / made, 4) if made else None,
                "tokens": int(self.tokens[g]), "tokens_per_decision": round(int(self.tokens[g]) / max(1, made), 1),
            }
            if word_deed is not None:
                out[name]["word_and_deed"] = word_deed.shares_of(self.masks[g])
        return out


def render_lines(groups: dict[str, dict[str, Any]]) -> list[str]:
    """The per-group figures as text lines (``report``, ``diff``)."""
    lines = [f"{'group':<10} {'fish':>4}  {'brain':<22} {'energy':>6} {'school':>6} {'eats':>6} {'own':>5} "
             f"{'tokens/dec':>10} {'deed':>5}  fallbacks"]
    for name, g in groups.items():
        own = "-" if g["own_share"] is None else f"{g['own_share']:.0%}"
        fb = ", ".join(f"{k} {v}" for k, v in g["fallbacks"].items()) or "none"
        done = (g.get("word_and_deed") or {}).get("deed_done")
        deed = "-" if done is None else f"{done:.0%}"
        lines.append(f"{name:<10} {g['fish']:>4}  {g['brain'][:22]:<22} {g['mean_energy']:>6.1f} "
                     f"{g['schooling']:>6.2f} {g['eats_per_fish_per_1000_ticks']:>6.1f} {own:>5} "
                     f"{g['tokens_per_decision']:>10.1f} {deed:>5}  {fb}")
    return lines
