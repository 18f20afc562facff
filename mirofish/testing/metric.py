"""``check_metric``: a metric through runs, its recording, an empty tank and its warnings."""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .common import FISH, SEED, Checked, _Check, _line, _work


def check_metric(metric: Any, *, ticks: int = 200, fish: int = FISH, seed: int = SEED,
                 settings: Sequence[str] = (), workdir: str | Path | None = None) -> Checked:
    """Check a metric (docs/extending.md "A metric") as a user sees it:

    1. it is a :class:`~mirofish.observe.metrics.Metric` — a plug-in's of kind ``sample`` or
       ``window`` — whose key no other metric has (one not installed is added to the running
       table, as its entry point would add it, for the check's duration);
    2. ``live --headless --record R``: its key is in the JSON's ``metrics`` with finite
       ``current`` and ``mean``, and its ``compute`` never raised (a plug-in's that raises
       reads 0 with one warning: the check fails with that warning);
    3. the same run again: the same values (a metric reading the clock or an unseeded random
       fails here);
    4. the recording replayed (:class:`~mirofish.session.ReplaySession`, every tick from the
       first): its metrics give the live run's value;
    5. a sweep run (the aquarium's sweep hooks): its figure ``metrics.KEY.mean`` is in the
       summary a sweep reads;
    6. bad input — a tank whose fish were all taken out — is a number, not a raise.

    ``metric``: a key of the running table (built-in or installed), ``"module:ATTR"``, or the
    ``Metric`` itself. ``settings``: ``SECTION.KEY=VALUE`` for the runs (a metric of a group that
    only some tanks count gets what they need, ``observe.metrics.GROUP_SETTINGS``: ``territory``
    ``fish.places=3``, ``population`` a tank with species).
    """
    subject = metric if isinstance(metric, str) else str(getattr(metric, "key", type(metric).__name__))
    with _work("check_metric", subject, workdir) as c, _installed_metric(c, metric) as m:
        c.subject = m.key
        from ..config import toml_value
        from ..observe.metrics import GROUP_SETTINGS

        sets = [*settings, *(f"{k}={toml_value(v)}" for k, v in GROUP_SETTINGS.get(m.group, {}).items())]
        _metric_runs(c, m, ticks, fish, seed, sets)
        _metric_empty_tank(c, m, seed, sets)
        return c.result()


@contextlib.contextmanager
def _installed_metric(c: _Check, given: Any) -> Iterator[Any]:
    from ..observe import metrics as mx
    from ..scenes.registry import SceneError, resolve

    m = given
    if isinstance(given, str):
        if ":" in given:
            try:
                m = resolve(given, "metric")
            except SceneError as exc:
                raise c.fail(str(exc)) from None
        else:
            try:
                m = mx.metric(given)
            except KeyError:
                raise c.fail(f"no metric {given!r} in the running table (the installed plug-ins: "
                             f"{', '.join(x.key for x in mx.METRICS if x.plugin) or 'none'}"
                             f"{'; ' + '; '.join(mx.PLUGIN_PROBLEMS) if mx.PLUGIN_PROBLEMS else ''})") from None
    if not isinstance(m, mx.Metric):
        raise c.fail(f"is a {type(m).__name__}, not a mirofish.observe.metrics.Metric")
    here = next((x for x in mx.METRICS if x.key == m.key), None)
    if here is not None:
        if here is not m and here.compute is not m.compute:
            raise c.fail(f"its key {m.key!r} is taken by another metric ({here.plugin or 'built-in'}): a plug-in "
                         f"with it is left out")
        yield here
        return
    if m.kind == "tick":
        raise c.fail("is of kind tick: a plug-in's metric is a sample or window metric (docs/extending.md)")
    row = mx.Metric(**{**m.__dict__, "recorded": False, "plugin": "mirofish.testing"})
    table = mx.METRICS
    mx.METRICS = (*table, row)
    try:
        yield row
    finally:
        mx.METRICS = table


def _warning_of(m: Any, err: str) -> str | None:
    for ln in err.splitlines():
        if f"metric {m.key} " in ln and "failed" in ln:
            return _line(ln.removeprefix("mirofish: warning: "))
    return None


def _values(c: _Check, m: Any, data: dict[str, Any], what: str) -> tuple[float, float]:
    if m.kind == "tick":  # a figure of the whole run, at the top of the JSON
        value = data.get(m.key)
        got: Any = {"current": value, "mean": value} if m.key in data else None
    else:
        got = data.get("metrics", {}).get(m.key)
    if not isinstance(got, dict):
        raise c.fail(f"is not in {what}'s JSON (metrics: {', '.join(list(data.get('metrics', {}))[:6])}…)")
    cur, mean = got.get("current"), got.get("mean")
    for name, v in (("current", cur), ("mean", mean)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise c.fail(f"its {name} value in {what}'s JSON is {v!r}, not a finite number")
    return float(cur), float(mean)  # type: ignore[arg-type]


def _metric_runs(c: _Check, m: Any, ticks: int, fish: int, seed: int, sets: list[str]) -> None:
    from ..config import parse_override
    from ..observe import metrics as mx

    rec = c.path("run.mirofish")
    common = ["live", "--headless", "--ticks", ticks, "--fish", fish, "--seed", seed,
              *(x for s in sets for x in ("--set", s))]
    mx._WARNED.discard(m.key)
    done = c.cli(*common, "--record", rec)
    warned = _warning_of(m, done.err)
    if warned:
        raise c.fail(f"its compute raised in a {ticks}-tick run: {warned}")
    if done.code != 0 or done.data is None:
        raise c.fail(f"a run with it failed (exit code {done.code}): {done.said()}")
    cur, mean = _values(c, m, done.data, "a run")
    c.done(f"a {ticks}-tick run: {m.key} current {cur:g}, mean {mean:g}")
    mx._WARNED.discard(m.key)
    again = c.cli(*common)
    if again.code != 0 or again.data is None:
        raise c.fail(f"a second run with it failed (exit code {again.code}): {again.said()}")
    cur2, mean2 = _values(c, m, again.data, "a second run")
    if (cur2, mean2) != (cur, mean):
        raise c.fail(f"a second run of seed {seed} gives {m.key} mean {mean2:g} (current {cur2:g}), the first "
                     f"{mean:g} ({cur:g}): it reads more than the tank (the clock, an unseeded random?)")
    c.done("a second run of the same seed: the same values")
    from ..session.replay import ReplaySession

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        mx._WARNED.discard(m.key)
        session = ReplaySession(rec)
        try:
            while session.step() is not None:  # every tick from the first (a seek starts at a keyframe)
                pass
            replayed = session.metrics.summary().get(m.key, {})
        finally:
            session.close()
    warned = _warning_of(m, err.getvalue())
    if warned:
        raise c.fail(f"its compute raised on the replay of a run: {warned}")
    if m.kind == "tick":
        replayed = {"current": cur, "mean": mean}  # kept in the recording's per-tick rows, not recomputed
    if (replayed.get("current"), replayed.get("mean")) != (cur, mean):
        raise c.fail(f"replayed, the recording gives {m.key} mean {replayed.get('mean')} (current "
                     f"{replayed.get('current')}), the live run {mean:g} ({cur:g})")
    c.done("replayed from its recording: the same values")
    from ..scenes.aquarium import SWEEP
    from ..sweep.runs import flatten
    from ..sweep.spec import RunTask

    with contextlib.redirect_stdout(io.StringIO()):
        params = {"fish.count": fish, **{".".join(parse_override(s)[0]): parse_override(s)[1] for s in sets}}
        summary = flatten(SWEEP.summarize(RunTask("aquarium", params, seed, ticks), None))
    figure = mx.summary_key(m)
    if summary.get(figure) != mean:
        raise c.fail(f"a sweep run's figure {figure} is {summary.get(figure)!r}, the run's mean {mean:g}")
    c.done(f"a sweep run's figure {figure}")


def _metric_empty_tank(c: _Check, m: Any, seed: int, sets: list[str]) -> None:
    """Every fish taken out of the water, then a few samples: a number, never a raise."""
    from ..config import load_config
    from ..observe import metrics as mx
    from ..session.live import LiveSession

    if m.kind == "tick":
        c.done("a tick figure: no empty-tank sample")
        return
    cfg = load_config(None, [*sets, "fish.count=3"], seed=seed)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        mx._WARNED.discard(m.key)
        session = LiveSession(cfg, mode="lockstep")
        try:
            for f in range(3):
                session.intervene({"kind": "remove", "fish": f})
            for _ in range(3 * cfg.metrics.sample_every + 1):
                session.step()
            got = session.metrics.summary().get(m.key, {})
        finally:
            session.close()
    warned = _warning_of(m, err.getvalue())
    if warned:
        raise c.fail(f"its compute raised on a tank with no fish in the water: {warned}")
    values = [got.get("current"), got.get("mean")]
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        raise c.fail(f"on a tank with no fish in the water it reads {values}, not finite numbers")
    c.done("a tank with no fish in the water: a number")


# ---------------------------------------------------------------- plan types
