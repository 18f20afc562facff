"""Copying measured: does a model's text repeat what its prompt showed it?

A small model asked for "one sentence in your own words, like "…"" often writes the example
back, or the instruction itself; asked for a thought it writes the example thought. Such text
says nothing about the fish, yet it used to count as a written summary, feed the drift score
and agree with the plan in word-and-deed. This module reads the prompt's examples and
instructions (:class:`Examples`, from any prompt file: the quoted ``"thought"`` and
``"summary"`` values of its examples, the summary asks' ``like "…"``, the ask's own words) and
judges a text against them:

* :func:`copies` — a near-duplicate of a reference: the two texts' words overlap by at least
  :data:`JACCARD` (Jaccard of their word sets), or at least :data:`CONTAINED` of the text's
  words (three or more) come from the reference.
* :func:`judge_summary` — why a model-written long-term summary is refused (``empty``,
  ``junk``: fewer than three words or mostly not letters, ``copies_example``,
  ``echoes_instruction``: a near-copy of the ask, or four of its words in a row), or None: the
  summary is kept. A refused summary is never written
  into the fish's memory: the template summary stays (labelled as such).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .prompts import Prompt

JACCARD = 0.6
CONTAINED = 0.8
_WORD = re.compile(r"[a-z]+")
_THOUGHT = re.compile(r'"thought"\s*:\s*"([^"]+)"')
_SUMMARY = re.compile(r'"summary"\s*:\s*"([^"]+)"')
_LIKE = re.compile(r'\blike\s+"([^"]+)"')
_PLACEHOLDER = re.compile(r"\$\w+|\{[^}]*\}")
_QUOTED = re.compile(r'"[^"]*"')


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def copies(text: str, references: Iterable[str]) -> bool:
    """Is ``text`` a near-duplicate of one of ``references`` (see the module doc)?"""
    mine = set(words(text))
    if not mine:
        return False
    for ref in references:
        theirs = set(words(ref))
        if not theirs:
            continue
        shared = len(mine & theirs)
        if shared / len(mine | theirs) >= JACCARD or (shared >= 3 and shared / len(mine) >= CONTAINED):
            return True
    return False


@dataclass(frozen=True)
class Examples:
    """What a prompt shows a model: example thoughts, example summaries, and the words of its
    summary instructions (placeholders and quoted examples taken out)."""

    thoughts: tuple[str, ...]
    summaries: tuple[str, ...]
    instructions: tuple[str, ...]


def examples_of(prompt: Prompt) -> Examples:
    return _examples(tuple(sorted((t, k, str(v)) for t, table in prompt.texts.items() if isinstance(table, dict)
                                  for k, v in table.items() if isinstance(v, str))))


@lru_cache(maxsize=32)
def _examples(texts: tuple[tuple[str, str, str], ...]) -> Examples:
    thoughts: list[str] = []
    summaries: list[str] = []
    instructions: list[str] = []
    for table, key, text in texts:
        thoughts += _THOUGHT.findall(text)
        summaries += _SUMMARY.findall(text) + _LIKE.findall(text)
        if key == "summary_ask" or (table == "summary" and key == "system"):
            bare = _QUOTED.sub(" ", _PLACEHOLDER.sub(" ", text))
            instructions += [s for s in re.split(r"[.:]\s", bare) if len(words(s)) >= 3]
    return Examples(tuple(dict.fromkeys(thoughts)), tuple(dict.fromkeys(summaries)),
                    tuple(dict.fromkeys(instructions)))


def judge_summary(text: str | None, examples: Examples) -> str | None:
    """Why a model-written summary is refused, or None when it is kept (module doc)."""
    s = (text or "").strip()
    if not s:
        return "empty"
    ws = words(s)
    if len(ws) < 3 or sum(map(len, ws)) < 0.5 * len(s.replace(" ", "")):
        return "junk"
    if copies(s, examples.summaries):
        return "copies_example"
    if copies(s, examples.instructions) or _shares_run(ws, examples.instructions, 4):
        return "echoes_instruction"
    return None


def _shares_run(ws: list[str], references: Iterable[str], n: int) -> bool:
    """Do ``ws`` hold ``n`` words in a row of a reference ("… in your own words about t84-t13:
    found no food …": the ask's own words with facts after them)?"""
    mine = {tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)}
    for ref in references:
        rw = words(ref)
        if any(tuple(rw[i:i + n]) in mine for i in range(len(rw) - n + 1)):
            return True
    return False
