"""Prompts as files (docs/prompts.md): what model brains and the scenes' model agents are sent,
read from TOML files — one kind of file per :data:`KINDS` entry: the fish prompt (below), and
each scene's system prompts (described in their bundled files).

The bundled file, ``assets/prompts/fish.toml``, holds every word the model brain sends about
the aquarium — plan mode's shared prefix, its per-fish message, the tendency line, the plan
list's line format, action mode's prompt and message, and the summary requests — and
reproduces the built-in prompt byte for byte. A user's file (``--prompt FILE``,
``brain.prompt``, or ``prompt`` in a ``[[fish.groups]]`` table) holds the keys it changes; the
others come from the bundled one.

Texts are :class:`string.Template` strings: ``$name`` placeholders (``$$`` is a dollar sign).
Each key may use the placeholders listed in :data:`KEYS`; a file that uses another, misspells a
key or a table, or gives a non-string is refused with one line naming the file, the key and
the placeholder (:class:`PromptError`, exit code 2 at the command line). A line that holds only
placeholders that come out empty is left out (no summaries yet, no places, the tendency off).

A :class:`Prompt` is named by its file (``name``) and its **hash** — the first 12 hex digits
of a BLAKE2b digest of the resolved texts (every key, after the defaults are filled in), so two
files that say the same thing have the same hash. Recordings store the name, the hash and the
file's text; ``trace``, ``reask``, ``diff`` and the follow panel name it.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import blake2b
from pathlib import Path
from string import Template
from typing import Any

from ..config import ASSETS, ConfigError
from ..files import PROMPT_LIMIT, FileRefused, read_text_bounded
from ..fish.perception import legend_extra
from ..fish.plans import DEFAULT, TYPES, PlanTable

BUNDLED = ASSETS / "prompts" / "fish.toml"

# table → key → the placeholders it may use; "plans" (a table of plan names) is checked apart
KEYS: dict[str, dict[str, frozenset[str]]] = {
    "plan": {
        "system": frozenset({"plans", "tendency", "shown"}),
        "tendency": frozenset(),
        "plan_line": frozenset({"name", "text"}),
        "fish": frozenset({"persona", "trigger", "view", "seen", "energy", "max_energy", "food_under", "age",
                           "recent", "earlier", "places", "plans_that_fit"}),
        "food_under": frozenset(), "recent_sep": frozenset(), "recent_none": frozenset(),
        "earlier_head": frozenset(), "earlier": frozenset({"summary"}), "places": frozenset({"places"}),
        "summary_ask": frozenset({"span", "facts"}),
    },
    "action": {
        "system": frozenset({"tendency", "shown"}),
        "tendency": frozenset(),
        "fish": frozenset({"persona", "trigger", "view", "here", "energy", "max_energy", "age", "recent", "earlier",
                           "summary_ask"}),
        "here_food": frozenset(), "here_water": frozenset(), "recent_sep": frozenset(), "recent_none": frozenset(),
        "earlier_head": frozenset(), "earlier": frozenset({"summary"}), "summary_ask": frozenset({"span", "facts"}),
    },
    "summary": {"system": frozenset(), "user": frozenset({"persona", "span", "facts"})},
}
PLAN_NAMES = tuple(t.name for t in TYPES if t.prompt)
PROMPTS_DIR = BUNDLED.parent
# Every kind of prompt file: its bundled file and its tables, keys and placeholders. The fish
# prompt is the model brain's; the scenes' are their model agents' system prompts (the
# per-turn messages, built from the game's state, stay in each scene's model_agents.py).
KINDS: dict[str, tuple[Path, dict[str, dict[str, frozenset[str]]]]] = {
    "fish": (BUNDLED, KEYS),
    "referential": (PROMPTS_DIR / "referential.toml", {
        "sender": {"system": frozenset({"max_chars", "words", "example"})},
        "receiver": {"system": frozenset({"example"})}}),
    "negotiation": (PROMPTS_DIR / "negotiation.toml", {
        "negotiator": {"system": frozenset()}, "repair": {"system": frozenset()}}),
    "handoff": (PROMPTS_DIR / "handoff.toml", {"agent": {"system": frozenset()}}),
}


class PromptError(ConfigError):
    """A prompt file that cannot be used: one line naming the file, the key and what is wrong."""


@dataclass(frozen=True)
class Prompt:
    """A resolved prompt (of any kind, :data:`KINDS`): every key's text, its file's name and
    text, and its hash. The methods after :meth:`fill` build the fish prompt's texts."""

    name: str
    texts: dict[str, dict[str, Any]]
    source: str = ""  # the file's own text (what the user wrote)
    path: str = ""
    hash: str = ""

    def t(self, table: str, key: str) -> str:
        text: str = self.texts[table][key]
        return text

    def fill(self, table: str, key: str, **values: str) -> str:
        """``table.key`` with its placeholders filled; lines of placeholders only that came out
        empty are left out."""
        out = []
        for line in self.t(table, key).split("\n"):
            text = Template(line).substitute(values)
            if not text.strip() and _only_placeholders(line):
                continue
            out.append(text)
        return "\n".join(out)

    # -- the texts a model brain sends

    def system(self, plans: bool = True, tendency: bool = True, shown: tuple[str, ...] = (),
               plan_types: PlanTable = DEFAULT, side: int = 5) -> str:
        """The shared prefix (plan or action mode), with or without the tendency line; ``shown``:
        the perception switches on in the tank (Perception.shown): their legend, and the plan
        types that need one (PlanType.needs) in the plan list; ``plan_types``: the run's plan table
        (mirofish/registry.py), whose rows the plan list is; ``side``: the view's side (2 ×
        perception.radius + 1) — the bundled texts say "5x5", which a tank of another radius reads
        as its own side (a text that does not say 5x5 is sent as written)."""
        text = self._system(plans, tendency, shown, plan_types)
        if plan_types.grid.hex:
            return hex_system(text, plan_types.grid, side // 2)
        return text if side == 5 else text.replace("5x5", f"{side}x{side}")

    def _system(self, plans: bool, tendency: bool, shown: tuple[str, ...], plan_types: PlanTable) -> str:
        if plan_types.grid.hex:  # (its legend: the hexes, how other fish face, the six ways)
            shown = (*shown, "hexes")
        table = "plan" if plans else "action"
        tend = self.t(table, "tendency") if tendency else ""
        legend = legend_extra(dict.fromkeys((w for w in shown if w != "hexes"), True))
        legend = legend + "." if legend else ""
        if "hexes" in shown:
            legend = (legend + "\n" if legend else "") + hex_legend(plan_types.grid)
        if not plans:
            return self.fill("action", "system", tendency=tend, shown=legend)
        wording = self.texts["plan"].get("plans", {})
        lines = [Template(self.t("plan", "plan_line")).substitute(name=t.name, text=wording.get(t.name, t.prompt))
                 for t in plan_types.types if t.prompt and (t.needs is None or t.needs in shown)]
        return self.fill("plan", "system", plans="\n".join(lines), tendency=tend, shown=legend)

    def recent(self, table: str, memories: list[str]) -> str:
        return self.t(table, "recent_sep").join(memories) or self.t(table, "recent_none")

    def earlier(self, table: str, summaries: list[str]) -> str:
        if not summaries:
            return ""
        head = self.t(table, "earlier_head")
        lines = [Template(self.t(table, "earlier")).substitute(summary=s) for s in summaries]
        return "\n".join(([head] if head else []) + lines)

    def meta(self) -> dict[str, str]:
        """What a recording keeps of it: name, hash and the file's text."""
        return {"name": self.name, "hash": self.hash, "path": self.path, "text": self.source}


_PLACEHOLDER = re.compile(r"\$(?:\$|([_a-z][_a-z0-9]*)|\{([_a-z][_a-z0-9]*)\})", re.I)


def _only_placeholders(line: str) -> bool:
    return bool(line.strip()) and not _PLACEHOLDER.sub("", line).strip() and "$$" not in line


def _check(where: str, table: str, key: str, value: Any, allowed: frozenset[str]) -> str:
    if not isinstance(value, str):
        raise PromptError(f"{where}: [{table}] {key} must be a string (got {type(value).__name__})")
    tpl = Template(value)
    if not tpl.is_valid():
        bad = re.search(r"\$(?!\$|[_a-zA-Z{])", value) or re.search(r"\$\{[^}]*$", value)
        at = f" near {value[bad.start():bad.start() + 12]!r}" if bad else ""
        raise PromptError(f"{where}: [{table}] {key}: a '$' that starts no placeholder{at} (write $$ for a dollar)")
    for name in tpl.get_identifiers():
        if name not in allowed:
            known = ", ".join(f"${n}" for n in sorted(allowed)) or "none"
            raise PromptError(f"{where}: [{table}] {key} uses ${name}, which it does not have (it may use: {known})")
    return value


def _read(path: Path, where: str) -> tuple[dict[str, Any], str]:
    """A prompt file's TOML and text: a regular file of at most ``files.PROMPT_LIMIT`` bytes (a FIFO,
    a device or a folder is refused unread: mirofish/files.py)."""
    try:
        text = read_text_bounded(path, PROMPT_LIMIT, "prompt file")
    except FileRefused as exc:
        if exc.missing:
            raise PromptError(f"{where}: no such prompt file") from None
        raise PromptError(str(exc)) from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise PromptError(f"{where}: not a TOML file ({exc})") from None
    except RecursionError:
        raise PromptError(f"{where}: nested too deeply") from None


def _resolve(data: dict[str, Any], where: str, base: dict[str, dict[str, Any]] | None,
             schema: dict[str, dict[str, frozenset[str]]]) -> dict[str, dict[str, Any]]:
    """``data`` (a file's tables) checked against ``schema`` (a kind's tables, keys and
    placeholders) and laid over ``base`` (the bundled file's texts; None: this is the bundled file)."""
    out: dict[str, dict[str, Any]] = {t: dict(v) for t, v in (base or {}).items()}
    for table, given in data.items():
        if table not in schema:
            raise PromptError(f"{where}: unknown table [{table}] (a prompt file has: "
                              f"{', '.join(f'[{t}]' for t in schema)})")
        if not isinstance(given, dict):
            raise PromptError(f"{where}: {table} must be a table [{table}]")
        dest = out.setdefault(table, {})
        for key, value in given.items():
            if table == "plan" and key == "plans":
                if not isinstance(value, dict):
                    raise PromptError(f"{where}: [plan.plans] must be a table of plan names")
                for name, line in value.items():
                    if name not in PLAN_NAMES:
                        raise PromptError(f"{where}: [plan.plans] {name}: no such plan a model may choose "
                                          f"({', '.join(PLAN_NAMES)})")
                    if not isinstance(line, str) or not line.strip() or "\n" in line:
                        raise PromptError(f"{where}: [plan.plans] {name} must be one line of text")
                dest["plans"] = {**dest.get("plans", {}), **value}
                continue
            if key not in schema[table]:
                raise PromptError(f"{where}: unknown key [{table}] {key} (known: {', '.join(schema[table])})")
            dest[key] = _check(where, table, key, value, schema[table][key])
    if base is None:
        missing = [f"[{t}] {k}" for t, ks in schema.items() for k in ks if k not in out.get(t, {})]
        if missing:
            raise PromptError(f"{where}: the bundled prompt lacks {', '.join(missing)}")
    return out


def _digest(texts: dict[str, dict[str, Any]]) -> str:
    return blake2b(json.dumps(texts, sort_keys=True, ensure_ascii=False).encode(), digest_size=6).hexdigest()


_CACHE: dict[tuple[str, str, float, int], Prompt] = {}
_PINNED: dict[tuple[str, str], str] = {}  # (kind, path as recorded) → the text a recording kept (as_recorded)


@contextmanager
def as_recorded(header: dict[str, Any]) -> Iterator[None]:
    """Within it, :func:`load_prompt` of a path a recording's ``header`` names gives the text the
    recording kept, not the file as it is now (edited since, or gone): a fork's model and user
    brains are asked in the words of the run it forks. Outside it, files are read as they are."""
    pins = {("fish", str(p.get("path") or "")): p["text"] for p in (header.get("prompts") or {}).values()
            if isinstance(p, dict) and isinstance(p.get("text"), str)}
    saved = dict(_PINNED)
    _PINNED.update(pins)
    try:
        yield
    finally:
        _PINNED.clear()
        _PINNED.update(saved)


def load_prompt(path: str | Path | None = None, kind: str = "fish") -> Prompt:
    """The prompt of ``path`` (None or ``""``: the bundled one of ``kind``, see :data:`KINDS`),
    its missing keys from the bundled file (inside :func:`as_recorded`: the text the recording
    kept of it). Raises :class:`PromptError` (one line) for a file that cannot be used."""
    bundled, keys = KINDS[kind]
    target = bundled if not path else Path(path)
    pinned = _PINNED.get((kind, str(path or "")))
    if pinned is not None:
        stamp = (kind, f"recorded:{_digest({'text': {'': pinned}})}", 0.0, 0)
    else:
        try:
            st = target.stat()
            stamp = (kind, str(target.resolve()), st.st_mtime, st.st_size)
        except (OSError, ValueError):  # ValueError: a NUL in the path (refused by the read, in one line)
            stamp = (kind, str(target), -1.0, -1)
    if stamp in _CACHE:
        return _CACHE[stamp]
    where = f"prompt {target}" + (" (as recorded)" if pinned is not None else "")
    base = None
    if target != bundled:
        base = load_prompt(None, kind).texts
    if pinned is not None:
        try:
            data, text = tomllib.loads(pinned), pinned
        except tomllib.TOMLDecodeError as exc:
            raise PromptError(f"{where}: not a TOML file ({exc})") from None
    else:
        data, text = _read(target, where)
    texts = _resolve(data, where, base, keys)
    name = "default" if target == bundled else target.name
    prompt = Prompt(name=name, texts=texts, source=text, path=str(path or ""), hash=_digest(texts))
    if kind == "fish":
        try:  # a placeholder's use is checked at load; a template that fails to fill is a bad file too
            for plans in (True, False):
                prompt.system(plans, True)
        except (KeyError, ValueError) as exc:
            raise PromptError(f"{where}: {exc}") from None
    _CACHE[stamp] = prompt
    return prompt


def default_prompt() -> Prompt:
    """The bundled prompt (``assets/prompts/fish.toml``)."""
    return load_prompt(None)


def prompts_of(cfg: Any) -> dict[str, Prompt]:
    """The prompt of every part of a tank that asks a model or a user brain: ``tank`` (the
    config's own brain) and each ``[[fish.groups]]`` group by name; instinct parts have none.
    Raises :class:`PromptError` for a prompt file that cannot be used (checked before a run)."""
    out: dict[str, Prompt] = {}
    if cfg.brain.kind != "instinct":
        out["tank"] = load_prompt(cfg.brain.prompt)
    for g, grp in enumerate(cfg.fish.groups):
        sub = cfg.for_group(g)
        if sub.brain.kind != "instinct":
            out[grp.name] = load_prompt(sub.brain.prompt)
    return out


def prompt_line(prompts: dict[str, Any]) -> str:
    """One line naming a run's prompts (``meta()`` dicts or :class:`Prompt` objects), e.g.
    ``prompt default 3f2a…`` or ``prompts: alpha terse.toml 9c1d…, beta default 3f2a…``."""
    def one(p: Any) -> str:
        name, h = (p.name, p.hash) if isinstance(p, Prompt) else (p.get("name", "?"), p.get("hash", "?"))
        return f"{name} {h}"
    if not prompts:
        return "prompt: none (no model or user brain)"
    if list(prompts) == ["tank"]:
        return "prompt: " + one(prompts["tank"])
    return "prompts: " + ", ".join(f"{label} {one(p)}" for label, p in prompts.items())


def recorded_prompt(header: dict[str, Any], cfg: Any, fish: int | None = None) -> dict[str, Any] | None:
    """The prompt a recording's header says fish ``fish`` was asked in (its group's, else the
    tank's; ``fish`` None: the tank's, or the first group's), as ``meta()``; None if it kept none."""
    prompts = header.get("prompts") or {}
    if not prompts:
        return None
    if fish is not None and cfg.fish.groups and fish < cfg.fish.slots:
        g = cfg.fish.group_of()[fish]
        label = cfg.fish.group_names()[g]
        if label in prompts:
            return dict(prompts[label])
    if "tank" in prompts:
        return dict(prompts["tank"])
    return dict(next(iter(prompts.values())))


def prompt_name(path: str) -> str:
    """How a window names a prompt file without reading it: its file name, "default" for the bundled one."""
    return Path(path).name if path and Path(path).resolve() != BUNDLED else "default"


# A hexagonal tank (mirofish/grid.py): what the bundled texts say of the square view, said of
# the hexes (a prompt file's own words are sent as written; the legend line is added to its
# $shown either way, so a model is told the hexes whatever the file says).
_HEX_WORDS = (
    ("Your 5x5 view (north up)", "Your view"),
    ("swim north, south, west or east", "swim east, north-east, north-west, west, south-west or south-east"),
    ("; other fish show the way they face: ^ v < >.", "."),
    ('"direction": "south", "ticks": 30, "thought": "nobody here, open water south"',
     '"direction": "south-east", "ticks": 30, "thought": "nobody here, open water south-east"'),
    ("You see only the 5x5 patch of water around you.", "You see only the water within two hexes of you."),
    ("View (north is up): ", "View: "),
    ("another fish as the way it faces: ^ north, v south, < west, > east.", "another fish as the way it faces."),
    ("- move_n / move_s / move_w / move_e: swim one cell north/south/west/east.",
     "- move_e / move_ne / move_nw / move_w / move_sw / move_se: swim one hex east / north-east / north-west / "
     "west / south-west / south-east."),
    ("directly N, S, W or E of you", "on a hex beside you"),
    ("move_n|move_s|move_w|move_e|eat|rest", "move_e|move_ne|move_nw|move_w|move_sw|move_se|eat|rest"),
)


def hex_legend(grid: Any) -> str:
    """The legend line of a hexagonal tank's view, from its grid (mirofish/grid.py)."""
    faces = ", ".join(f"{ch} {name}" for ch, name in zip(grid.fish_chars, grid.move_names))
    return (f"The water is hexagons: your view is the hexes within two steps of you, one row a line, each row "
            f"half a hex off the next. Other fish show the way they face as on a number pad: {faces}. "
            f"The six ways: {', '.join(grid.move_names)}.")


def hex_system(text: str, grid: Any, radius: int) -> str:
    """``text`` (a system prompt) with the square view's words said of the hexes."""
    for square, hexes in _HEX_WORDS:
        text = text.replace(square, hexes)
    return text if radius == 2 else text.replace("within two", f"within {radius}")
