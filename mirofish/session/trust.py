"""A recording is data, never instructions.

Recordings are files people share. Their header *names* the brains, servers and key
variables of the run — for information (the window, ``export --tables``, a report) — but
nothing that reads a recording acts on those names: ``fork``, ``reask``, ``trace``, a
replay's questions and every other reader use only

- what the user gives on the command line or in their own config: a brain (``--brain
  FILE.py:NAME``, ``--brain GROUP=SPEC``), a server (``--base-url``, ``--model``) and the
  variable holding its key (``--api-key-env``, default ``OPENAI_API_KEY``, as for ``live``);
- or the recorded replies (a fork's reply cache).

So no code is imported and no credential is sent because a file said so. :func:`reader_config`
turns a recording's config into the one a reader's live brains are built from; without a
server of the user's, model parts are *offline* (:func:`~mirofish.brains.sources.make_source`):
the recorded replies answer, a request they do not hold falls back (``cache_miss``, counted
as ``no_server``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..config import BRAIN_SPEC, BrainConfig, Config, ConfigError, EndpointConfig
from ..observe.recording import RecordingError

_BUILTIN = ("instinct", "llm")
_GROUP_SPEC = re.compile(r"^([a-z][a-z0-9_-]{0,31})=(.+)$")
DEFAULT_KEY_ENV = BrainConfig.model_fields["api_key_env"].default


@dataclass
class ReaderChoice:
    """What the user said a reader may use: a server, a model, a key variable, brains."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    brains: dict[str | None, str] = field(default_factory=dict)  # group name (None: any) → brain spec

    @classmethod
    def of(cls, base_url: str | None = None, model: str | None = None, api_key_env: str | None = None,
           brains: list[str] | tuple[str, ...] = ()) -> ReaderChoice:
        """From command-line values; ``brains``: ``SPEC`` (the tank and every group run by a user
        brain) or ``GROUP=SPEC``. Raises :class:`RecordingError` (one line) for a bad one."""
        if base_url is not None:
            try:
                EndpointConfig(base_url=base_url, model=model or "m")
            except ValueError as exc:
                first = str(exc).splitlines()
                raise RecordingError(f"--base-url: {first[-1].strip() if first else 'not a URL'}") from None
        if api_key_env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", api_key_env):
            raise RecordingError(f"--api-key-env {api_key_env!r}: not an environment variable name")
        chosen: dict[str | None, str] = {}
        for text in brains:
            m = _GROUP_SPEC.match(text)
            group, spec = (m.group(1), m.group(2)) if m and not text.endswith(".py") else (None, text)
            if not BRAIN_SPEC.match(spec) or len(spec) > 500:
                raise RecordingError(f"--brain {text!r}: not a brain (instinct, llm, FILE.py:NAME, MODULE:NAME)")
            chosen[group] = spec
        return cls(base_url, model, api_key_env, chosen)


def _user_brain(kind: str | None) -> bool:
    return kind is not None and kind not in _BUILTIN


def reader_config(cfg: Config, choice: ReaderChoice | None = None,
                  pinned: set[str] | frozenset[str] = frozenset()) -> tuple[Config, bool]:
    """The config a reader's live brains are built from, and whether they are offline.

    Every server of the recording is replaced by the user's ``--base-url`` (its model kept
    unless ``--model``), or kept only as a model name for the reply cache with no server
    contacted (offline); every key variable the recording names is dropped for the user's
    (``--api-key-env``, default ``OPENAI_API_KEY``); a user brain the recording names is
    replaced by the one the user gives, and without one the reader is refused (one line). A
    prompt file the recording names is used only as the text the recording kept of it
    (``pinned``: the paths whose text its header holds, read through ``as_recorded``); a path it
    kept no text of is never opened — the bundled prompt is used instead."""
    choice = choice or ReaderChoice()
    data: dict[str, Any] = cfg.model_dump()
    brain = data["brain"]
    key_env = choice.api_key_env or DEFAULT_KEY_ENV

    def brain_for(kind: str, where: str, group: str | None) -> str:
        given = choice.brains.get(group) if group is not None and group in choice.brains else choice.brains.get(None)
        if given is not None:
            return given
        raise RecordingError(
            f"{where} was decided by the user brain {kind!r}, and a recording never loads code: give the brain "
            f"yourself with --brain {'' if group is None else group + '='}SPEC (your FILE.py:NAME, or instinct)")

    if _user_brain(brain["kind"]):
        brain["kind"] = brain_for(brain["kind"], "this tank", None)
    if brain.get("prompt") and str(brain["prompt"]) not in pinned:
        brain["prompt"] = ""  # the bundled prompt
    brain["api_key_env"] = key_env
    recorded = brain["small"]["endpoints"] + brain["large"]["endpoints"]
    if choice.base_url is not None and (recorded or brain["kind"] == "llm"):  # one server of the user's, both tiers
        model = choice.model or (recorded[0]["model"] if recorded else "model")
        brain["small"]["endpoints"] = [{"base_url": choice.base_url, "model": model}]
        brain["large"]["endpoints"] = []
    for tier in ("small", "large"):  # offline: the recorded model names key the reply cache
        brain[tier]["endpoints"] = [{**e, "api_key_env": None, **({"model": choice.model} if choice.model else {})}
                                    for e in brain[tier]["endpoints"]]
    for grp in data["fish"]["groups"]:
        grp["api_key_env"] = None
        if grp.get("prompt") and str(grp["prompt"]) not in pinned:
            grp["prompt"] = None
        if _user_brain(grp.get("brain")):
            grp["brain"] = brain_for(grp["brain"], f"group {grp['name']!r}", grp["name"])
        if grp.get("base_url") is not None:
            if choice.base_url is not None:
                grp["base_url"] = choice.base_url
            if choice.model is not None:
                grp["model"] = choice.model
    try:
        out = Config.model_validate(data)
    except (ValueError, ConfigError) as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        raise RecordingError(f"the recording's config cannot be used: {' '.join(lines[:3])[:200]}") from None
    return out, choice.base_url is None
