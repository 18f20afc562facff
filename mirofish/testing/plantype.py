"""``check_plan_type``: a plan type of the running table through the prompt, the planner, a run, a fork
and the tables."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .common import _HASH_EVERY_TICK, FISH, SEED, Checked, _Check, _module_with, _read_csv, _work


class _PlanProbe:
    """A user brain that chooses plan type ``name`` whenever a fish is offered it (forage
    otherwise, so fish eat and remember places), noting what the fish were offered and told."""

    name = "plan-probe"

    def __init__(self, plan: Any, prompt_line: str | None):
        self.plan, self.prompt_line = plan, prompt_line
        self.asked = self.offered = self.chosen = 0
        self.untold: str | None = None  # the first ask that offered the plan without the prompt saying so

    def decide(self, ask: Any) -> Any:
        from ..brains.user import Decision

        self.asked += 1
        t = self.plan
        if ask.decides == "action":  # hold: every single action is a hold plan
            self.offered += 1
            self.chosen += 1
            return Decision(action=ask.plans[0], thought=f"check {t.name}")
        if t.name not in ask.plans:
            return Decision(goal="forage", thought="check: eat")
        self.offered += 1
        system = " ".join(m.get("content", "") for m in ask.messages if m.get("role") == "system")
        user = " ".join(m.get("content", "") for m in ask.messages if m.get("role") != "system")
        if self.untold is None:
            if not re.search(rf"\b{re.escape(t.name)}\b", user):
                self.untold = f"fish {ask.fish} at tick {ask.tick} is offered it but its message does not name it"
            elif self.prompt_line and self.prompt_line not in system:
                self.untold = (f"fish {ask.fish} at tick {ask.tick} is offered it but the system prompt lacks "
                               f"{self.prompt_line!r}")
        self.chosen += 1
        out: dict[str, Any] = {"goal": t.name, "thought": f"check {t.name}"}
        if t.ticks:
            out["ticks"] = t.ticks
        if t.param == "direction":
            out["direction"] = ask.directions[0]
        elif t.param == "energy":
            out["until"] = 100
        elif t.param == "away":
            out["away_from"] = "crowd"
        elif t.param == "place":
            found = re.search(r"#(\d+)", ask.places)
            out["place"] = int(found.group(1)) if found else 0
        return Decision(**out)


def check_plan_type(name: str, *, ticks: int = 150, fish: int = FISH, seed: int = SEED,
                    workdir: str | Path | None = None) -> Checked:
    """Check a plan type (docs/extending.md "A plan type") through the places a plan reaches:

    1. it is a row of the running table (``mirofish.fish.plantypes.PLAN_TYPES``) that the goal
       enum was built from (a row added after ``mirofish.fish.plans`` loaded is not);
    2. ``describe`` and ``parse_plan`` read each other back; a plan a model may choose is in
       the reply schema's goal enum with its default horizon;
    3. its fork entries are in the fork picker's plans (``plans.fork_plans()``) and read back
       as this goal;
    4. a run whose user brain chooses it whenever a fish is offered it: every fish offered it
       is told so (its message names it; the system prompt has its ``prompt`` line), no choice
       of it is refused, and the run's export records its goal by name (a plan type that
       ``fits`` always must be offered; ``hold`` is run in action mode);
    5. that run's recording replays to its state hash;
    6. a fork giving fish 0 the plan (its first fork entry, or the plan in words): the fork
       runs, records the decision by the goal's name, the fish swims it, the fork's recording
       replays, its export has it;
    7. with a ``utility`` formula: in an instinct run (its perception switch on, if it needs
       one) the compiled planner draws exactly as the numpy one on every fish's request, every
       10th tick, and says how often the plan won a draw; with ``ends`` or ``fails``: the run's
       compiled and numpy ticks stay the same world with fish holding it.
    """
    from ..brains import prompt as pr
    from ..fish import plans, plantypes

    with _work("check_plan_type", name, workdir) as c:
        row = next((t for t in plantypes.PLAN_TYPES if t.name == name), None)
        if row is None:
            loaded = [p for p in plantypes.PLUGIN_PROBLEMS if name in p]
            why = f"; {loaded[0]}" if loaded else ""
            raise c.fail(f"is not a plan type of the running table (mirofish.fish.plantypes.PLAN_TYPES: "
                         f"{', '.join(t.name for t in plantypes.PLAN_TYPES)}){why}")
        if name not in plans.CODE or plans.TYPES[plans.CODE[name]] != row:
            raise c.fail("was added to PLAN_TYPES after mirofish.fish.plans loaded: the goal enum, steering and the "
                         "compiled tick do not know it (extend the table before importing the rest of MiroFish)")
        code = plans.code(name)
        c.done(f"goal code {code}")
        _plan_words(c, row, code, plans, pr)
        entries = _plan_fork_entries(c, row, code, plans)
        rec = _plan_run(c, row, ticks, fish, seed)
        _plan_fork(c, row, code, rec, entries, plans, ticks)
        _plan_formulas(c, row, code, ticks, fish, seed)
        return c.result()


def _plan_formulas(c: _Check, row: Any, code: int, ticks: int, fish: int, seed: int) -> None:
    """Step 7 of :func:`check_plan_type`: its formulas, the compiled planner and tick against numpy."""
    if not (row.utility or row.ends or row.fails):
        return
    import numpy as np

    from .. import kernel
    from ..brains.base import RequestBatch
    from ..brains.instinct import InstinctPlanner, instinct_source
    from ..config import load_config
    from ..session import LiveSession

    if kernel.compiled_tick() is None:
        c.done("formulas: no compiled tick to compare (MIROFISH_TICK=numpy or not built)")
        return
    sets: dict[str, Any] = {"fish.count": fish, "brain.decides": "plan"}
    if row.needs:
        from ..fish.plantypes import NEED_SETTINGS

        sets.update(NEED_SETTINGS.get(row.needs, {f"perception.{row.needs}": True}))
    cfg = load_config(seed=seed, **sets)
    fast, slow = LiveSession(cfg), LiveSession(cfg)
    slow.world._kernel = None
    planner, reference = instinct_source(cfg), instinct_source(cfg)
    assert isinstance(planner, InstinctPlanner) and isinstance(reference, InstinctPlanner)
    reference._kernel = None
    won = drawn = held = 0
    for t in range(ticks):
        if (row.ends or row.fails) and t % 25 == 0:  # fish given the plan now and then: its predicates run
            for s in (fast, slow):
                ids = np.arange(0, s.world.school.n, 2)
                s.world.apply_plans(ids, np.full(ids.size, code, np.int8), np.zeros(ids.size, np.int16),
                                    np.full(ids.size, row.ticks or 20, np.int16))
        fast.step()
        slow.step()
        if fast.state_hash() != slow.state_hash():
            raise c.fail(f"with fish holding it, the compiled tick and the numpy tick part at tick {fast.tick}: "
                         f"its ends/fails formulas or its utility differ between them")
        held += int(np.count_nonzero(fast.world.school.plan_goal == code))
        if row.utility and t % 10 == 0:
            w = fast.world
            ids = np.flatnonzero(~w.school.absent)
            batch = RequestBatch(tick=w.tick, fish=ids, triggers=np.zeros(ids.size, np.int8), codes=w.view_codes(ids),
                                 energy=w.school.energy[ids], max_energy=w.max_energy, heading=w.school.heading[ids],
                                 traits=w.school.traits[ids], food_here=np.zeros(ids.size, bool),
                                 refused=np.zeros((ids.size, 4), bool), plans=w.plan_table,
                                 **w.request_extras(ids)._asdict())  # (as the engine's requests carry them)
            a, b = planner.decide(batch), reference.decide(batch)
            if not (np.array_equal(a.goals, b.goals) and np.array_equal(a.params, b.params)
                    and np.array_equal(np.asarray(a.horizons, np.int64), np.asarray(b.horizons, np.int64))):
                raise c.fail(f"its utility formula: the compiled planner and the numpy one choose differently at "
                             f"tick {w.tick}")
            won += int(np.count_nonzero(a.goals == code))
            drawn += ids.size
    parts = []
    if row.utility:
        parts.append(f"utility: compiled planner = numpy on {drawn} requests, the plan won {won}")
    if row.ends or row.fails:
        parts.append(f"ends/fails: compiled tick = numpy over {ticks} ticks ({held} fish-ticks holding it)")
    c.done("; ".join(parts))


def _plan_words(c: _Check, row: Any, code: int, plans: Any, pr: Any) -> None:
    param = {"none": 0, "energy": 10}.get(row.param, 1)
    for horizon in (0, 7):
        text = plans.describe(code, param, horizon)
        try:
            back = plans.parse_plan(text)
        except ValueError as exc:
            raise c.fail(f"its plan in words {text!r} does not read back: {exc}") from None
        if back != (code, param, horizon):
            raise c.fail(f"its plan in words {text!r} reads back as {back}, not {(code, param, horizon)}")
    schema_goals = pr.PLAN_REPLY_SCHEMA["properties"]["goal"]["enum"]
    if row.fits != "never":
        if row.name not in schema_goals:
            raise c.fail(f"a model may choose it (fits {row.fits}) but the reply schema's goal enum lacks it")
        if pr.DEFAULT_TICKS.get(row.name) != row.ticks:
            raise c.fail(f"the default horizon of a model's plan is {pr.DEFAULT_TICKS.get(row.name)}, the row "
                         f"says {row.ticks}")
    elif row.name in schema_goals:
        raise c.fail("fits never, yet the reply schema offers it to a model")
    c.done("describe/parse read back; reply schema" + ("" if row.fits != "never" else ": not offered"))


def _plan_fork_entries(c: _Check, row: Any, code: int, plans: Any) -> list[str]:
    picker = plans.fork_plans()
    entries = [e.format(param=w, ticks=row.ticks) for e in row.fork
               for w in (plans.PARAM_WORDS.get(row.param, ("",)) if "{param}" in e else ("",))]
    for e in entries:
        if e not in picker:
            raise c.fail(f"its fork entry {e!r} is not among the fork picker's plans (fish.plans.fork_plans())")
        try:
            got = plans.parse_plan(e)[0]
        except ValueError as exc:
            raise c.fail(f"its fork entry {e!r} does not read as a plan: {exc}") from None
        if got != code:
            raise c.fail(f"its fork entry {e!r} reads as goal {plans.GOAL_NAMES[got]}")
    c.done(f"fork picker: {', '.join(entries)}" if entries else "no fork entries (not in the fork picker)")
    return entries


def _plan_run(c: _Check, row: Any, ticks: int, fish: int, seed: int) -> str:
    probe = _PlanProbe(row, f"{row.name} - {row.prompt}" if row.prompt else None)
    sets = ["--set", "fish.places=3"] if row.fits == "places" else []
    if getattr(row, "needs", None):  # a plan a tank offers only with a switch on (hide: plants_seen; hunt: hunting)
        from ..config import toml_value
        from ..fish.plantypes import NEED_SETTINGS

        for key, value in NEED_SETTINGS.get(row.needs, {f"perception.{row.needs}": True}).items():
            sets += ["--set", f"{key}={toml_value(value)}"]
    if row.param == "action":
        sets += ["--set", "brain.decides=action"]
    rec = c.path("run.mirofish")
    with _module_with(probe) as spec:
        first = c.ok("a run whose brain chooses it", "live", "--headless", "--ticks", ticks, "--fish", fish,
                     "--seed", seed, *_HASH_EVERY_TICK, *sets, "--brain", spec, "--record", rec)
    fallbacks = first.get("brain", {}).get("fallbacks", {})
    if fallbacks:
        reason, n = max(fallbacks.items(), key=lambda kv: kv[1])
        raise c.fail(f"a fish that chose it when offered was refused {n} times ({reason})")
    if probe.untold:
        raise c.fail(f"the model prompt's plan options miss it: {probe.untold}")
    if probe.offered == 0:
        if row.fits == "always":
            raise c.fail(f"it fits always, yet none of {probe.asked} asks in {ticks} ticks offered it (Ask.plans)")
        c.done(f"a {ticks}-tick run: never offered (fits {row.fits})")
    else:
        decisions = _read_csv(Path(_export(c, rec, "tables-run")) / "decisions.csv")
        goal = row.name if row.param != "action" else "hold"
        mine = sum(1 for d in decisions if d["goal"] == goal)
        if not mine:
            raise c.fail(f"chosen {probe.chosen} times, yet its export holds no decision with goal {goal!r}")
        c.done(f"a {ticks}-tick run: offered {probe.offered} times, told so, chosen, {mine} decisions recorded "
               f"as {goal!r}")
    replayed = c.ok("replaying that run", "replay", rec, "--headless", "--verify")
    if replayed.get("state_hash") != first["final_state_hash"]:
        raise c.fail(f"that run replays to state hash {replayed.get('state_hash')}, it ran to "
                     f"{first['final_state_hash']}")
    c.done("its recording replays (--verify, the same hash)")
    return rec


def _export(c: _Check, rec: str, folder: str, every: int = 10) -> str:
    out = c.path(folder)
    c.ok("exporting its tables", "export", rec, "--tables", out, "--format", "csv", "--every", every)
    return out


def _plan_fork(c: _Check, row: Any, code: int, rec: str, entries: list[str], plans: Any, ticks: int) -> None:
    horizon = row.ticks or 20
    param = {"direction": 0, "away": 0, "action": 0, "place": 0, "energy": 100}.get(row.param, 0)
    text = entries[0] if entries else plans.describe(code, param, horizon)
    at = max(1, ticks // 3)
    fork_rec = c.path("fork.mirofish")
    forked = c.ok(f"a fork to {text!r}", "fork", rec, "--at", at, "--fish", 0, "--plan", text, "--ticks", 30,
                  "--brain", "instinct", "--record", fork_rec)
    if not str(forked.get("action", "")).startswith(row.name):
        raise c.fail(f"a fork to {text!r} gave fish 0 the plan {forked.get('action')!r}")
    replayed = c.ok("replaying the fork", "replay", fork_rec, "--headless", "--verify")
    if replayed.get("state_hash") != forked["final_state_hash"]:
        raise c.fail(f"the fork to {text!r} replays to state hash {replayed.get('state_hash')}, it ran to "
                     f"{forked['final_state_hash']}")
    tables = Path(_export(c, fork_rec, "tables-fork", every=1))
    decided = [d for d in _read_csv(tables / "decisions.csv") if d["tick"] == str(at) and d["fish"] == "0"]
    if not decided or decided[0]["goal"] != row.name:
        raise c.fail(f"the fork's recording holds fish 0's decision at tick {at} as "
                     f"{decided[0]['goal'] if decided else 'nothing'}, not {row.name!r}")
    swam = [r for r in _read_csv(tables / "fish.csv") if r["fish"] == "0" and int(r["tick"]) > at]
    if not any(r["plan_goal"] == row.name for r in swam):
        raise c.fail(f"after the fork fish 0 never swims it (its plans: "
                     f"{', '.join(sorted({r['plan_goal'] for r in swam})) or 'none'})")
    c.done(f"fork to {text!r}: recorded as {row.name!r}, fish 0 swims it, replays, exports")
