"""Which decision source a config names."""

from __future__ import annotations

from typing import Any

from ..config import Config
from .base import DecisionSource
from .exchanges import ReplyCache
from .instinct import instinct_source


def make_source(cfg: Config, mode: str, cache: ReplyCache | None = None,
                asked_before: set[int] | None = None, group: str | None = None,
                offline: bool = False, pool_options: dict[str, Any] | None = None) -> DecisionSource:
    """The brain ``cfg.brain.kind`` names: the instinct brain, the model worker pool (with a reply
    cache, and the fish that asked before it started: see :class:`~.pool.ModelPool`), or a user
    brain (:mod:`~.user`); a tank with ``[[fish.groups]]`` gets one source per group behind one
    (:class:`~.mixed.MixedSource`). ``group``: the group this source decides for (a part of a mixed
    tank). ``offline``: no server is contacted — a model's or a chatting user brain's request is
    answered from ``cache`` or by the fallback (a fork of a recording given no ``--base-url``:
    :func:`mirofish.session.trust.reader_config`). Raises :class:`~.user.BrainError` for a user
    brain that does not load."""
    if cfg.fish.groups and group is None:
        from functools import partial

        from .mixed import MixedSource

        return MixedSource(cfg, partial(make_source, offline=offline), mode, cache=cache, asked_before=asked_before)
    if cfg.brain.kind == "llm":
        from .pool import ModelPool  # imports openai; the core never does

        pool = ModelPool(cfg, mode, cache=cache, asked_before=asked_before, offline=offline,
                         **(pool_options or {}))  # influence: warmed servers, a request budget (pool.py)
        pool.group = group
        return pool
    if cfg.brain.kind == "instinct":
        return instinct_source(cfg)
    from .user import UserBrainSource

    return UserBrainSource(cfg, mode, cache=cache, group=group, offline=offline)
