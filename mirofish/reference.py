"""The documentation site's reference pages, generated from the tables they describe.

The config page is read off :class:`mirofish.config.Config` (every field's type, default, range
and description), the command-line page off :func:`mirofish.cli.build_parser` (every command and
flag with its help), the metrics page off :data:`mirofish.observe.metrics.METRICS`. Nothing there
is copied by hand, so a field, flag or metric added in code is on the site at the next build.

``docs/hooks.py`` generates the three pages afresh at every ``mkdocs build`` (with the README as
the home page); ``python -m mirofish.reference docs/reference`` writes the copies kept in the
repository for reading without MkDocs (a test checks they equal what the code generates).
Only what ships is listed: a plug-in's scenes and metrics are the plug-in's to document.
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

PAGES = ("config", "cli", "metrics")


def github_slug(value: str, separator: str = "-") -> str:
    """A heading's anchor as GitHub makes it (lower case, punctuation dropped, each space a
    hyphen), so one link works in the repository and on the site (Python-Markdown's toc
    ``slugify`` hook)."""
    value = unicodedata.normalize("NFKC", value).strip().lower()
    value = re.sub(r"[^\w\- ]", "", value)
    return value.replace(" ", separator)


def _cell(text: Any) -> str:
    """One Markdown table cell: pipes escaped, one line."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _type_name(annotation: Any) -> str:
    name = getattr(annotation, "__name__", None)
    text = name if name and not getattr(annotation, "__args__", None) else str(annotation)
    return text.replace("typing.", "").replace("mirofish.config.", "")


def _bounds(info: FieldInfo) -> str:
    marks = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<", "min_length": "length ≥", "max_length": "length ≤",
             "pattern": "matches"}
    out = []
    for m in info.metadata:
        for attr, sign in marks.items():
            v = getattr(m, attr, None)
            if v is not None:
                out.append(f"{sign} {v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{sign} {v}")
    return ", ".join(out)


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "(required)"
    v = info.get_default(call_default_factory=True)
    if isinstance(v, BaseModel):
        return "(section)"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "unset"
    return repr(v) if isinstance(v, (list, tuple, dict)) else str(v)


def _sections(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, type[BaseModel]]]:
    yield prefix, model
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            yield from _sections(ann, f"{prefix}.{name}" if prefix else name)
        else:
            for arg in getattr(ann, "__args__", ()):  # list[EndpointConfig], X | None
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    yield from _sections(arg, f"{prefix}.{name}[]" if prefix else f"{name}[]")


def config_page() -> str:
    """Every setting of ``assets/default.toml`` and ``--set``, section by section."""
    from .config import Config

    out = ["# Configuration reference", "",
           "Generated from `mirofish/config.py` (`python -m mirofish.reference`). Every setting goes in a TOML "
           "file (`--config FILE`, on top of `assets/default.toml`) or on the command line (`--set "
           "section.key=value`); a value out of range is one line naming the setting, exit 2. "
           "A section ending in `[]` is a list of tables (`[[section]]` in TOML).", ""]
    for prefix, model in _sections(Config, ""):
        fields = {n: i for n, i in model.model_fields.items()
                  if not (isinstance(i.annotation, type) and issubclass(i.annotation, BaseModel))}
        if not fields:
            continue
        out += [f"## `{prefix}`" if prefix else "## top level", ""]
        if model.__doc__ and model.__doc__.strip() and model is not Config:
            out += [_cell(model.__doc__.strip()), ""]
        out += ["| setting | type | default | allowed | what it does |", "|---|---|---|---|---|"]
        for name, info in fields.items():
            key = f"{prefix}.{name}" if prefix else name
            out.append(f"| `{_cell(key)}` | {_cell(_type_name(info.annotation))} | {_cell(_default(info))} | "
                       f"{_cell(_bounds(info))} | {_cell(info.description or '')} |")
        out.append("")
    return "\n".join(out)


def _flag_rows(parser: argparse.ArgumentParser) -> Iterator[str]:
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        names = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.dest}` (positional)"
        if action.metavar and action.option_strings:
            names += f" {_cell(action.metavar)}"
        default = action.default
        shown = "" if default in (None, False, argparse.SUPPRESS) or action.nargs == 0 else _cell(default)
        help_text = (action.help or "") % {"default": default, "prog": parser.prog} if action.help else ""
        if action.choices is not None and not isinstance(action.choices, dict):
            help_text += f" (one of: {', '.join(str(c) for c in action.choices)})"
        yield f"| {names} | {shown} | {_cell(help_text)} |"


def cli_page() -> str:
    """Every command of ``python run.py`` with its flags."""
    from .cli import build_parser
    from .scenes.registry import BUILT_IN, scenes

    parser = build_parser()
    own = {s.command_name for s in scenes()[:len(BUILT_IN)]}
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    out = ["# Command-line reference", "",
           "Generated from the command-line parser (`python -m mirofish.reference`). Run as `python run.py "
           "COMMAND …` (no command: `live`). `python run.py COMMAND --help` prints the same. A bad flag or value "
           "is one line naming it, exit 2.", "",
           "| command | what it does |", "|---|---|"]
    from .cli import COMMANDS

    names = [n for n in sub.choices if n in own or n in {c.name for c in COMMANDS}]
    out += [f"| [`{n}`](#{github_slug(n)}) | {_cell(helps.get(n, ''))} |" for n in names]
    out.append("")
    for n in names:
        p = sub.choices[n]
        out += [f"## {n}", "", _cell(helps.get(n, "")), "", "| flag | default | what it does |", "|---|---|---|"]
        out += list(_flag_rows(p))
        out.append("")
    return "\n".join(out)


def metrics_page() -> str:
    """Every metric of the registry: what it measures, unit, healthy band, where it shows."""
    from .observe.metrics import METRICS

    out = ["# Metrics reference", "",
           "Generated from the metric registry, `METRICS` in `mirofish/observe/metrics.py` "
           "(`python -m mirofish.reference`): the HUD, the charts, recordings, export tables, sweeps and `diff` "
           "read the same table. *window*: exact whenever read, over the rolling window; *sample*: every "
           "`metrics.sample_every` ticks; *tick*: every tick. A metric of your own goes through the same door "
           "(the `mirofish.metrics` entry point, [your own agents](../your-agents.md)).", "",
           "| key | label | what it measures | unit | kind | group | healthy | alarm | shown in | computed in |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for m in METRICS:
        if m.plugin:
            continue
        healthy = f"{m.fmt.format(m.healthy[0])} – {m.fmt.format(m.healthy[1])}" if m.healthy else ""
        alarm = "; ".join(s for s in (
            f"below {m.fmt.format(m.bad_below)}" if m.bad_below is not None else "",
            f"above {m.fmt.format(m.bad_above)}" if m.bad_above is not None else "") if s)
        shown = ", ".join(s for s, rank in (("HUD", m.hud), ("chart", m.chart), ("diff", m.diff),
                                            ("sweep", m.sweep)) if rank is not None)
        if m.recorded:
            shown += ", recordings" if shown else "recordings"
        if m.model_only:
            shown += " (model brains)"
        out.append(f"| `{m.key}` | {_cell(m.label)} | {_cell(m.doc)} | {_cell(m.unit)} | {m.kind} | {m.group} | "
                   f"{_cell(healthy)} | {_cell(alarm)} | {_cell(shown)} | {_cell(m.computed_in)} |")
    out.append("")
    return "\n".join(out)


def page(name: str) -> str:
    """One reference page's Markdown, by name (:data:`PAGES`)."""
    return {"config": config_page, "cli": cli_page, "metrics": metrics_page}[name]()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m mirofish.reference DIR  (writes config.md, cli.md and metrics.md into DIR)",
              file=sys.stderr)
        return 2
    out = Path(args[0])
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name in PAGES:
            (out / f"{name}.md").write_text(page(name) + "\n", encoding="utf-8")
    except OSError as exc:
        print(f"mirofish.reference: cannot write into {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"wrote {', '.join(f'{n}.md' for n in PAGES)} into {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
