"""The task a report-writing chain works on, drawn from a seeded corpus.

A **brief** asks for a market-analysis report on one segment and quarter: a goal sentence,
four to six requirements drawn from :data:`REQUIREMENTS` (things the report must contain or
must not contain), and the readings of three key concepts ("growth", "the quarter", "the
competitor") the report depends on. A **fact** is one sentence of market data about the
segment (about 25–40 tokens), drawn from a seeded corpus; the analyst picks the facts that
serve the brief and the writer turns them into prose, so messages have a report's size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SEGMENTS = ("home batteries", "e-bikes", "smart thermostats", "meal kits", "robot vacuums", "heat pumps",
            "running shoes", "language apps", "cloud backup", "plant-based milk")
QUARTERS = ("Q1", "Q2", "Q3", "Q4")
COMPETITORS = ("Arvo", "Belcan", "Corvid", "Dunmore", "Elsin")
CHANNELS = ("online", "retail chains", "specialist stores", "direct sales", "marketplaces")

# Requirement id → (kind, what it asks, the words a report that honours it shows). Kinds:
# "include" (the report must contain it) and "avoid" (it must not).
REQUIREMENTS: dict[str, tuple[str, str]] = {
    "quarter_growth": ("include", "cover the quarter's growth"),
    "competitor": ("include", "mention the main competitor's launch"),
    "channel_data": ("include", "cite the channel data"),
    "disclaimer": ("include", "end with the compliance disclaimer"),
    "sources": ("include", "name the data sources"),
    "no_forecast": ("avoid", "no financial forecast"),
    "no_opinion": ("avoid", "no personal opinion"),
    "no_pricing": ("avoid", "no pricing recommendation"),
}
# What a drifted agent may come to believe is required though the brief never said it
# (the source's "invented constraint or goal"): each conflicts with the brief or costs it.
INVENTED = {
    "fact_check": "question the data's authenticity",
    "forecast": "add a financial forecast for next year",
    "pricing": "recommend a price cut",
    "persuasive": "make the report persuasive for investors",
}
# The key concepts and their readings: the brief's (index 0) and the ones a misunderstanding
# drifts to (the source's "cumulative misunderstanding": the same words, another meaning).
CONCEPTS: dict[str, tuple[str, ...]] = {
    "growth": ("revenue growth year over year", "unit sales growth", "growth in market share"),
    "quarter": ("the calendar quarter", "the fiscal quarter", "the last three months"),
    "competitor": ("the largest competitor by revenue", "the newest entrant", "the competitor in the news"),
}

# Each reading's short name, as layer 2's assumptions carry it on the wire.
READING_CODES = {"revenue growth year over year": "revenue-yoy", "unit sales growth": "units",
                 "growth in market share": "share", "the calendar quarter": "calendar",
                 "the fiscal quarter": "fiscal", "the last three months": "trailing-3m",
                 "the largest competitor by revenue": "largest", "the newest entrant": "newest",
                 "the competitor in the news": "in-news"}

# How a text states each reading — what a receiver *hears* (``chain.heard_in``): the reading's
# own words and the forms the messages use for it. A concept's bare word ("growth", "the
# quarter", "the competitor") outside these states no reading: each hearer reads it as its own.
CUES: dict[str, tuple[str, ...]] = {
    "revenue growth year over year": (r"revenue growth", r"year[- ]over[- ]year revenue"),
    "unit sales growth": (r"unit[- ]sales growth", r"growth in unit sales"),
    "growth in market share": (r"growth in market share", r"market[- ]share growth"),
    "the calendar quarter": (r"calendar quarter", r"(?<!fiscal )\bQ[1-4]\b"),
    "the fiscal quarter": (r"fiscal (?:quarter|Q[1-4])",),
    "the last three months": (r"last three months", r"trailing three months"),
    "the largest competitor by revenue": (r"largest competitor",),
    "the newest entrant": (r"newest entrant", r"\bnew entrant"),
    "the competitor in the news": (r"competitor in the news",),
}
BARE = {"growth": r"\bgrowth\b", "quarter": r"\bquarter\b", "competitor": r"\bcompetitor\b"}

_FACT_TEMPLATES = (
    "{seg}: revenue in {q} rose {p}% year over year to {m} million, driven mostly by {ch}.",
    "{seg}: unit sales in {q} grew {p}% while the average price fell {p2}%, according to {src}.",
    "{seg}: {comp} launched a new product line in {q} and took about {p2} points of market share.",
    "{seg}: the {ch} channel now carries {p}% of sales, up from {p3}% a year earlier ({src}).",
    "{seg}: customer satisfaction scores in {q} were {s} out of 10 in the {src} survey of {n} buyers.",
    "{seg}: returns and complaints fell {p2}% in {q} after {comp} recalled part of its range.",
    "{seg}: supply costs rose {p2}% in {q}; margins held because {ch} volumes grew faster than costs.",
    "{seg}: {comp} is the largest competitor by revenue, with about {p}% of the market ({src}).",
)
SOURCES = ("the national statistics office", "the industry association", "our panel data",
           "the quarterly retail audit", "company filings")


@dataclass
class Brief:
    """One report-writing task (``task_id`` is what Argent's layer 1 anchors to)."""

    task_id: str
    segment: str
    quarter: str
    competitor: str
    goal: str
    requirements: list[str]
    facts: list[str]
    concepts: dict[str, str] = field(default_factory=dict)  # concept → the brief's reading

    def requirement_text(self, req: str) -> str:
        return INVENTED.get(req) or REQUIREMENTS[req][1]


def draw_brief(seed: int, index: int) -> Brief:
    """Task ``index`` of a run seeded ``seed`` (the same pair gives the same brief)."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, index, 7])))
    seg, q = SEGMENTS[rng.integers(len(SEGMENTS))], QUARTERS[rng.integers(len(QUARTERS))]
    comp = COMPETITORS[rng.integers(len(COMPETITORS))]
    includes = [r for r, (kind, _) in REQUIREMENTS.items() if kind == "include"]
    avoids = [r for r, (kind, _) in REQUIREMENTS.items() if kind == "avoid"]
    reqs = ["quarter_growth", *rng.choice(includes[1:], int(rng.integers(2, 4)), replace=False).tolist(),
            *rng.choice(avoids, int(rng.integers(1, 3)), replace=False).tolist()]
    facts = []
    for k in range(int(rng.integers(14, 20))):
        t = _FACT_TEMPLATES[k % len(_FACT_TEMPLATES)]
        facts.append(t.format(seg=seg, q=q, comp=comp, ch=CHANNELS[rng.integers(len(CHANNELS))],
                              src=SOURCES[rng.integers(len(SOURCES))], p=int(rng.integers(3, 40)),
                              p2=int(rng.integers(1, 12)), p3=int(rng.integers(5, 30)), m=int(rng.integers(20, 900)),
                              s=round(float(rng.uniform(5.5, 9.2)), 1), n=int(rng.integers(300, 5000))))
    goal = (f"Write a market analysis of {seg} for {q}: explain what drove growth and how {comp} "
            f"affected the segment.")
    return Brief(f"T{seed:02d}-{index:04d}", seg, q, comp, goal, reqs, facts,
                 {c: readings[0] for c, readings in CONCEPTS.items()})
