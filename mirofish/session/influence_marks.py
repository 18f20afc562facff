"""An influence study's decisions as marks on a replay's timeline (``replay REC --influence DIR``).

``influence REC --outcome … --out DIR`` writes ``DIR/influence.json``: the decisions of a window
ranked by their effect on an outcome, the pivotal ones flagged (session/influence.py). A replay
of the same recording draws them on its timeline — the pivotal ones as amber marks, the next few
of the ranking faintly — and a click on one forks the recording there with the study's strongest
alternative (ui/shown.py, :meth:`~mirofish.ui.shown.ShownTank.open_mark`).

Where the marks come from:

* ``--influence DIR`` (or the JSON file itself): read now; a file that is missing, not JSON, not
  an influence summary, the study of another recording, or about ticks or fish the recording does
  not have is a :class:`MarksError` (one line; the command exits 2);
* without the flag, ``<REC>.influence/influence.json`` beside the recording (or
  ``<REC without its suffix>.influence/``), when there is one:
  used when it is the study of this recording; a problem with it is one warning line and the
  replay goes on without marks.

Files are read under the one rule for input files (:func:`mirofish.files.read_text_bounded`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import FileRefused, read_text_bounded

INFLUENCE_LIMIT = 32_000_000  # an influence.json: ~300 bytes a decision; 32 MB is ~100,000 decisions
FILE_NAME = "influence.json"
FAINT_TOP = 8  # the non-pivotal decisions drawn (faintly): the first of the ranking


class MarksError(ValueError):
    """An influence file the replay cannot use (one line)."""


@dataclass(frozen=True)
class Mark:
    """One decision of the study: fish ``fish`` chose ``recorded`` at tick ``tick``; its effect
    on the outcome with its 95 % interval, the null band it was tested against, whether it is
    pivotal, the alternative that moved the outcome most (``alternative``, plan text the fork
    picker's plans use) and the outcome there; ``rank`` in the study's ranking (1 = largest |effect|)."""

    tick: int
    fish: int
    recorded: str
    effect: float
    low: float
    high: float
    pivotal: bool
    alternative: str | None
    alternative_outcome: float | None
    band: tuple[float, float] | None
    rank: int


@dataclass(frozen=True)
class InfluenceMarks:
    """What a replay draws from an influence study: its marks (pivotal first, then the first
    :data:`FAINT_TOP` others of the ranking), the outcome, and how many decisions it tested."""

    path: Path  # the influence.json read
    recording: str  # as the study names it
    outcome: str
    outcome_recorded: float | None
    window: tuple[int, int] | None
    tested: int
    marks: tuple[Mark, ...]

    @property
    def pivotal(self) -> tuple[Mark, ...]:
        return tuple(m for m in self.marks if m.pivotal)


def number(value: float) -> str:
    """An effect or an outcome as a person reads it: -15.3, 0.412, 1234."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.3g}"


def summary_path(path: str | os.PathLike[str]) -> Path:
    """``DIR/influence.json`` for a folder, else the path itself."""
    p = Path(path)
    return p / FILE_NAME if p.is_dir() else p


def beside(recording: str | os.PathLike[str]) -> Path:
    """Where a replay looks without ``--influence``: ``<REC>.influence/influence.json``."""
    return Path(os.fspath(recording) + ".influence") / FILE_NAME


def beside_all(recording: str | os.PathLike[str]) -> list[Path]:
    """Every place a replay looks: :func:`beside`, then ``<REC without its suffix>.influence/``
    (``influence saves/demo1.mirofish --out saves/demo1.influence``)."""
    first, rec = beside(recording), Path(recording)
    other = rec.with_name(rec.stem + ".influence") / FILE_NAME if rec.suffix else first
    return [first] if other == first else [first, other]


def _shown(path: str | os.PathLike[str]) -> str:
    text = os.fspath(path)
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))
    return text if len(text) <= 200 else text[:200] + "…"


def _resolved(path: str | os.PathLike[str]) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(os.fspath(path)))


def _names(named: str, recording: Path, folder: Path) -> bool:
    """Does ``named`` (the study's "recording", maybe relative to where it ran) name ``recording``?"""
    target = _resolved(recording)
    p = Path(named)
    candidates = [p] if p.is_absolute() else [Path.cwd() / p, folder / p, folder.parent / p]
    for c in candidates:
        if _resolved(c) == target:
            return True
        try:
            if c.exists() and os.path.samefile(c, recording):
                return True
        except (OSError, ValueError):
            continue
    return False


def _whole(d: dict[str, Any], key: str, where: str) -> int:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise MarksError(f"{where} has no whole-number {key!r}")
    return v


def _num(d: dict[str, Any], key: str, where: str, optional: bool = False) -> float | None:
    v = d.get(key)
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise MarksError(f"{where} has no number {key!r}")
    return float(v)


def _mark(d: Any, rank: int, what: str) -> Mark | None:
    """Decision ``rank`` of the ranking as a mark (None: it was not tested, no effect)."""
    where = f"{what}: decision {rank}"
    if not isinstance(d, dict):
        raise MarksError(f"{where} is not an object")
    tick, fish = _whole(d, "tick", where), _whole(d, "fish", where)
    where = f"{what}: decision {rank} (t{tick} fish {fish})"
    recorded = d.get("recorded")
    if not isinstance(recorded, str):
        raise MarksError(f"{where} has no recorded plan")
    pivotal = d.get("pivotal", False)
    if not isinstance(pivotal, bool):
        raise MarksError(f"{where}: 'pivotal' is not true or false")
    effect = _num(d, "effect", where, optional=True)
    if effect is None:  # a decision with no alternative to test: nothing to mark
        if pivotal:
            raise MarksError(f"{where} is pivotal without an effect")
        return None
    low, high = _num(d, "low", where), _num(d, "high", where)
    assert low is not None and high is not None
    alt = d.get("strongest_alternative")
    if alt is not None and (not isinstance(alt, str) or not alt.strip() or len(alt) > 200):
        raise MarksError(f"{where}: 'strongest_alternative' is not a plan")
    band_v = d.get("band")
    band: tuple[float, float] | None = None
    if band_v is not None:
        if not (isinstance(band_v, list) and len(band_v) == 2
                and all(isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b) for b in band_v)):
            raise MarksError(f"{where}: 'band' is not two numbers")
        band = (float(band_v[0]), float(band_v[1]))
    return Mark(tick, fish, recorded, effect, low, high, pivotal, alt,
                _num(d, "strongest_outcome", where, optional=True), band, rank)


def load(path: str | os.PathLike[str], recording: str | os.PathLike[str],
         bounds: tuple[int, int, int] | None = None) -> InfluenceMarks:
    """The marks of the influence study at ``path`` (its folder or its influence.json) for the
    recording ``recording``; ``bounds`` = (first tick, last tick, fish slots) of that recording:
    a decision outside them is refused. Raises :class:`MarksError` (one line) for a file that
    cannot be read, is not JSON, is not an influence summary, or is another recording's study."""
    given = Path(path)
    file = summary_path(given)
    if given.is_dir() and not file.exists():
        raise MarksError(f"{_shown(given)} holds no {FILE_NAME} (influence --out DIR writes one)")
    try:
        text = read_text_bounded(file, INFLUENCE_LIMIT, "influence file")
    except FileRefused as exc:
        raise MarksError(str(exc)) from None
    what = f"influence file {_shown(file)}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MarksError(f"{what} is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except (RecursionError, ValueError) as exc:
        raise MarksError(f"{what} is not JSON ({'nested too deeply' if isinstance(exc, RecursionError) else exc})"
                         ) from None
    if not isinstance(data, dict) or not isinstance(data.get("decisions"), list):
        raise MarksError(f"{what} is not an influence summary (no \"decisions\" list; influence --out writes one)")
    named = data.get("recording")
    if not isinstance(named, str) or not named:
        raise MarksError(f"{what} does not say which recording it studied (no \"recording\")")
    if not _names(named, Path(recording), file.parent):
        raise MarksError(f"{what} is the influence study of {_shown(named)}, not of {_shown(recording)}")
    outcome = data.get("outcome")
    if not isinstance(outcome, str):
        raise MarksError(f"{what} has no \"outcome\"")
    pivotal: list[Mark] = []
    others: list[Mark] = []
    for rank, d in enumerate(data["decisions"], 1):
        m = _mark(d, rank, what)
        if m is None:
            continue
        if bounds is not None:
            first, last, slots = bounds
            if not (first <= m.tick < last and 0 <= m.fish < slots):
                raise MarksError(f"{what}: decision {rank} (t{m.tick} fish {m.fish}) is not in the recording "
                                 f"(ticks {first}..{last - 1}, fish 0..{slots - 1})")
        (pivotal if m.pivotal else others).append(m)
    window = data.get("window")
    win = (int(window[0]), int(window[1])) if (isinstance(window, list) and len(window) == 2 and all(
        isinstance(t, int) and not isinstance(t, bool) for t in window)) else None
    rec_v = data.get("outcome_recorded")
    tested = data.get("decisions_tested")
    return InfluenceMarks(file, named, outcome,
                          float(rec_v) if isinstance(rec_v, (int, float)) and not isinstance(rec_v, bool)
                          and math.isfinite(rec_v) else None,
                          win, tested if isinstance(tested, int) and not isinstance(tested, bool)
                          else len(data["decisions"]),
                          tuple(pivotal + others[:FAINT_TOP]))


def recording_bounds(recording: str | os.PathLike[str]) -> tuple[int, int, int] | None:
    """(first tick, last tick, fish slots) of an aquarium recording; None when it cannot be
    opened (the replay says why itself)."""
    from ..observe.recording import Recording, RecordingError

    try:
        rec = Recording(os.fspath(recording))
    except (RecordingError, OSError, ValueError):
        return None
    try:
        return rec.first_tick, rec.last_tick, rec.config.fish.slots
    finally:
        rec.close()


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def find_beside(recording: str | os.PathLike[str],
                bounds: tuple[int, int, int] | None = None) -> tuple[InfluenceMarks | None, str | None]:
    """The study beside the recording (:func:`beside_all`) when there is one: (marks, None); (None,
    the problem in one line) when it cannot be used; (None, None) when there is none."""
    problem = None
    for path in beside_all(recording):
        if not _exists(path.parent):
            continue
        try:
            return load(path.parent, recording, bounds), None
        except MarksError as exc:
            problem = problem or f"{exc}; the replay goes on without influence marks"
    return None, problem


_GIVEN: dict[Path, InfluenceMarks | None] = {}  # what the command line chose for a recording (marks or none)


@contextmanager
def given(recording: str | os.PathLike[str], marks: InfluenceMarks | None) -> Iterator[None]:
    """While the replay of ``recording`` runs, its window shows ``marks`` (None: none, and it
    does not look beside the recording again)."""
    key = _resolved(recording)
    had, before = key in _GIVEN, _GIVEN.get(key)
    _GIVEN[key] = marks
    try:
        yield
    finally:
        if had:
            _GIVEN[key] = before
        else:
            _GIVEN.pop(key, None)


def for_recording(recording: str | os.PathLike[str],
                  bounds: tuple[int, int, int] | None = None) -> tuple[InfluenceMarks | None, str | None]:
    """The marks a window shows on the timeline of ``recording``: the ones the command line gave,
    else the study beside it (see :func:`find_beside`)."""
    key = _resolved(recording)
    if key in _GIVEN:
        return _GIVEN[key], None
    return find_beside(recording, bounds)


def for_command(recording: str, flag: str | None, look_beside: bool,
                warn: Callable[[str], None]) -> InfluenceMarks | None:
    """``replay REC [--influence DIR]``: the marks the flag names (:class:`MarksError` when they
    cannot be used), or without it the study beside the recording (a problem: ``warn`` says it
    in one line and there are no marks)."""
    if flag is not None:
        if not flag.strip():
            raise MarksError("an empty name: give the folder influence --out wrote, or its influence.json")
        return load(flag, recording, recording_bounds(recording))
    if not look_beside or not any(_exists(p.parent) for p in beside_all(recording)):
        return None
    marks, problem = find_beside(recording, recording_bounds(recording))
    if problem is not None:
        warn(problem)
    return marks


__all__ = ["FAINT_TOP", "FILE_NAME", "INFLUENCE_LIMIT", "InfluenceMarks", "Mark", "MarksError", "beside", "beside_all",
           "find_beside", "for_command", "for_recording", "given", "load", "number", "recording_bounds",
           "summary_path"]
