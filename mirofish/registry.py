"""A run's registry: the plan types and the metrics one run is built from.

A :class:`Registry` is an object, made when a run starts and handed to its world, its engine and
its session (``World(cfg, registry=…)``, ``LiveSession(cfg, registry=…)``); everything of the
run — the world's plan events and steering rows, the brains' prompt and planner (through each
request), the metrics, the recording's header and columns, replay, forks, export and the fork
picker — reads the run's registry, not a module's table. So two runs in one process may differ:
one with a plan type or a recorded metric added for it alone (:meth:`Registry.adding`), one with
the shipped rows only (:func:`built_in`), one with the installed plug-ins (:func:`default`).

:func:`default` is the registry of a run given none (``registry=None`` stands for it in the
world, the recordings and the sessions, which build nothing for it): the built-in rows and the installed
packages' entry points (``mirofish.plans``, ``mirofish.metrics``; scenes have their own table,
``mirofish.scenes.registry``). It is built once, when first asked for, from tables that exist
by then (each plug-in row loaded by itself: :mod:`mirofish.plugins`), so a plug-in importing
any part of MiroFish meets no half-built module.

One request is worded with the process's table, not the run's: the model brain's warm-up, sent
as its pool starts, before any request of the run reaches it (it wakes the server and finds the
reply format; no decision is read from it).

Recordings name their plan goals and columns in their header, so a file made with one registry
replays with another that holds its plan types, whatever their codes there; a decision of a plan
type the replaying registry lacks is refused in one line naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from .fish import plans as _plans
from .fish.plans import PlanTable
from .fish.plantypes import PlanType

if TYPE_CHECKING:
    from .observe.metrics import Metric

__all__ = ["Registry", "built_in", "default", "with_plan_file"]


@dataclass(frozen=True, eq=False)
class Registry:
    """The plan types (:class:`~mirofish.fish.plans.PlanTable`) and metrics
    (:class:`~mirofish.observe.metrics.Metric` rows) of one run."""

    plans: PlanTable
    metrics: tuple[Metric, ...]
    # the process's default (:func:`default`): its recordings sample the columns the process's
    # recording module names (which a test or a plug-in may set: observe/recording_columns.py)
    process_default: bool = False
    recorded: tuple[str, ...] = field(init=False)  # the metrics a recording samples, in table order

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for m in self.metrics:  # the table as a whole (each Metric row checks itself)
            key = getattr(m, "key", None)
            if not isinstance(key, str) or not hasattr(m, "compute"):
                raise ValueError(f"{m!r} is not a Metric")
            if key in seen:
                raise ValueError(f"metric {key} is declared twice")
            seen.add(key)
        object.__setattr__(self, "recorded", tuple(m.key for m in self.metrics if m.recorded))

    def adding(self, plans: tuple[PlanType, ...] = (), metrics: tuple[Metric, ...] = ()) -> Registry:
        """This registry with ``plans`` and ``metrics`` after its own rows (ValueError naming the
        first problem: a name taken, a row that does not check)."""
        if not plans and not metrics:
            return self
        # a metric added here is a plug-in's as far as a failure goes: a compute that raises or
        # gives no number reads 0 with one warning naming it, the run goes on (observe.metrics)
        own = tuple(replace(m, plugin=m.plugin or "registry") if hasattr(m, "plugin") else m for m in metrics)
        return Registry(self.plans.adding(tuple(plans)) if plans else self.plans, (*self.metrics, *own))

    def metric(self, key: str) -> Metric:
        """The metric named ``key`` (KeyError naming the known ones)."""
        for m in self.metrics:
            if m.key == key:
                return m
        raise KeyError(f"no metric {key!r}; the metrics are {', '.join(m.key for m in self.metrics)}")

    def ranked(self, place: str) -> list[Metric]:
        """The metrics shown in one place (``"hud"``, ``"chart"``, ``"diff"``, ``"sweep"``), in order."""
        return sorted((m for m in self.metrics if getattr(m, place) is not None), key=lambda m: getattr(m, place))



_DEFAULT: list[Registry] = []


def default() -> Registry:
    """The registry of a run given none: the built-in rows and the installed plug-ins' — the
    process's tables as they are now (a row the check kit adds for its check's duration, as an
    entry point would add it, is in it; the same object while those tables are unchanged)."""
    from .observe import metrics

    if not _DEFAULT or _DEFAULT[0].metrics is not metrics.METRICS or _DEFAULT[0].plans is not _plans.DEFAULT:
        _DEFAULT[:] = [Registry(_plans.DEFAULT, metrics.METRICS, process_default=True)]
    return _DEFAULT[0]


def with_plan_file(path: str | Path, base: Registry | None = None) -> Registry:
    """``base`` (default :func:`default`) with the plan types a TOML file declares as data, one
    ``[[plan]]`` table each — the fields of a :class:`~mirofish.fish.plantypes.PlanType`, e.g.::

        [[plan]]
        name = "drift"
        ticks = 20
        events = ["planned", "hungry"]
        steer = [{align = ["alignment", 1.0]}]
        prompt = "drift along with the fish you see"
        fits = "fish_in_view"
        fork = ["drift {ticks}"]
        utility = "3 * company - 0.2"

    (``live --plan-types FILE``: docs/extending.md). Each row is checked as a recording's rows
    are (:func:`~mirofish.fish.plantypes.row_from_data`); ValueError names the file, the row and
    the problem."""
    import tomllib

    from .files import CONFIG_LIMIT, FileRefused, read_text_bounded
    from .fish.plantypes import row_from_data

    where = Path(path)
    try:  # the one rule for every input file (mirofish/files.py): a FIFO or a device is refused, the size bounded
        text = read_text_bounded(where, CONFIG_LIMIT, "plan types file")
    except FileRefused as exc:
        raise ValueError(f"plan types file {where}: cannot be read (no such file)" if exc.missing
                         else str(exc)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"plan types file {where}: not TOML ({exc})") from None
    except RecursionError:
        raise ValueError(f"plan types file {where}: not TOML (nested too deeply)") from None
    rows, other = data.get("plan"), sorted(set(data) - {"plan"})
    if other:
        raise ValueError(f"plan types file {where}: unknown table {other[0]!r} (each plan type is a [[plan]] table)")
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"plan types file {where}: no [[plan]] table")
    plans = []
    for k, row in enumerate(rows):
        try:
            plans.append(row_from_data(row))
        except ValueError as exc:
            raise ValueError(f"plan types file {where}, plan {k + 1}: {exc}") from None
    try:
        return (base or default()).adding(plans=tuple(plans))
    except ValueError as exc:
        raise ValueError(f"plan types file {where}: {exc}") from None


@cache
def built_in() -> Registry:
    """The shipped plan types and metrics only, no installed plug-in's."""
    from .observe.metrics import BUILT_IN_METRICS

    return Registry(PlanTable(_plans.SHIPPED), BUILT_IN_METRICS)
