"""Running a reef: tanks step on their own between exchanges; migrants cross at each exchange.

The interval is every corridor's transit time. A fish that leaves tank A during interval k
(ticks kI+1 … (k+1)I) arrives in tank B exactly I ticks later, during interval k+1 — so after
interval k every host already knows every arrival of interval k+1, and the tanks need nothing
from each other while they step. The reef's state after any interval is therefore the same
however the tanks are spread: all in this process, over local processes, or over the workers
of a Dask cluster (each host an actor holding its tanks). Arrivals are ordered by (leave tick,
tank, fish), so every tank receives them in one order whatever finished first.

``reef_hash`` digests every tank's state hash (in the reef file's order) and the migration log.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
import time
from collections import Counter
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from ..config import redact_data
from ..observe.recording import pack, unpack
from .progress import save
from .spec import ReefSpec
from .tank import Arrival, TankHost

# each tank's checkpointed state, by tank index: its world arrays and what is scheduled in it
# (TankHost.state)
States = dict[int, dict[str, Any]]


class ReefError(RuntimeError):
    """A reef that cannot go on (a worker lost, a cluster that is not there); one line."""


# ---------------------------------------------------------------- backends: where the hosts live


class InlineHosts:
    """Every tank in this process (one host)."""

    name = "one process"

    def __init__(self, spec: ReefSpec, record: str | None, states: States | None):
        self.hosts = [TankHost(spec, list(range(len(spec.tanks))), record, states)]
        self.size = 1

    def call(self, method: str, args: list[tuple[Any, ...]]) -> list[Any]:
        return [getattr(h, method)(*a) for h, a in zip(self.hosts, args)]

    def close(self) -> None:
        for h in self.hosts:
            h.close()


def _serve(conn: Connection, spec: dict[str, Any], mine: list[int], record: str | None, states: States | None) -> None:
    """A local worker process: one host, commands from the pipe until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle
    try:
        host = TankHost(spec, mine, record, states)
        conn.send(("ok", None))
    except Exception as exc:  # noqa: BLE001 — reported to the coordinator as one line
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    while True:
        try:
            method, args = conn.recv()
        except EOFError:
            break
        if method == "close":
            break
        try:
            conn.send(("ok", getattr(host, method)(*args)))
        except Exception as exc:  # noqa: BLE001
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
    host.close()


class LocalHosts:
    """The tanks dealt round-robin over ``workers`` local processes, each a host."""

    def __init__(self, spec: ReefSpec, workers: int, record: str | None, states: States | None):
        self.name = f"local processes ({workers})"
        ctx = multiprocessing.get_context("fork")
        self.procs, self.conns = [], []
        data = spec.model_dump()
        for k in range(workers):
            mine = list(range(k, len(spec.tanks), workers))
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, data, mine, record,
                                                    {i: states[i] for i in mine} if states else None), daemon=True)
            proc.start()
            child.close()
            self.procs.append(proc)
            self.conns.append(parent)
        for k in range(workers):
            self._answer(k)
        self.size = workers

    def _answer(self, k: int) -> Any:
        try:
            status, value = self.conns[k].recv()
        except (EOFError, OSError):
            code = self.procs[k].exitcode
            raise ReefError(f"worker {k} died" + (f" (exit code {code})" if code is not None else "")) from None
        if status == "error":
            raise ReefError(f"worker {k}: {value}")
        return value

    def call(self, method: str, args: list[tuple[Any, ...]]) -> list[Any]:
        for k, a in enumerate(args):
            try:
                self.conns[k].send((method, a))
            except (BrokenPipeError, OSError):
                raise ReefError(f"worker {k} died") from None
        return [self._answer(k) for k in range(len(args))]

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("close", ()))
            except (BrokenPipeError, OSError):
                pass
        for proc in self.procs:
            proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join()


class DaskHosts:
    """One host per worker of a Dask cluster, as an actor holding its tanks."""

    def __init__(self, spec: ReefSpec, address: str, record: str | None, states: States | None):
        from ..sweep.backends import BackendError, DaskBackend

        try:
            backend = DaskBackend(address)
        except BackendError as exc:
            raise ReefError(str(exc)) from None
        self.client = backend.client
        workers = sorted(self.client.scheduler_info().get("workers", {}))
        if not workers:
            raise ReefError(f"the Dask cluster at {address} has no workers")
        self.name = f"Dask cluster {address} ({len(workers)} workers)"
        data = spec.model_dump()
        futures = []
        for k, wk in enumerate(workers):
            mine = list(range(k, len(spec.tanks), len(workers)))
            if mine:
                futures.append(self.client.submit(TankHost, data, mine, record,
                                                  {i: states[i] for i in mine} if states else None,
                                                  actor=True, workers=[wk], pure=False))
        try:
            with self.client.as_current():  # an actor finds its client as the current one
                self.actors = [f.result() for f in futures]
                self.size = len(self.actors)
        except Exception as exc:  # noqa: BLE001
            raise ReefError(f"the Dask workers could not start the tanks: {exc}") from None

    def call(self, method: str, args: list[tuple[Any, ...]]) -> list[Any]:
        try:
            with self.client.as_current():
                pending = [getattr(a, method)(*x) for a, x in zip(self.actors, args)]
                return [p.result() for p in pending]
        except Exception as exc:  # noqa: BLE001 — a worker lost, an actor gone
            raise ReefError(f"a Dask worker failed: {(str(exc).splitlines() or [type(exc).__name__])[0][:160]}") \
                from None

    def close(self) -> None:
        try:
            with self.client.as_current():
                for a in self.actors:
                    a.close().result()  # an actor's call: a future
        except Exception:  # noqa: BLE001 — closing a cluster that is going away
            pass
        self.client.close()


# ---------------------------------------------------------------- the reef


class Reef:
    """A reef run: ``backend`` ``inline``, ``local`` (``workers`` processes) or ``dask``
    (``cluster`` address). ``record``: a folder for each tank's recording and the migration
    log; ``checkpoint``: a file the reef's state is written to at every exchange, which
    ``resume`` starts from."""

    def __init__(self, spec: ReefSpec, backend: str = "inline", workers: int = 2, cluster: str | None = None,
                 record: str | None = None, checkpoint: str | None = None, resume: str | None = None):
        self.spec = spec
        self.checkpoint = checkpoint
        self.tick = 0
        self.log: list[dict[str, Any]] = []  # every crossing, in order
        self.pending: list[Arrival] = []  # arrivals to hand to the hosts: (tank, tick, add)
        self.record = record
        states = None
        if resume is not None:
            saved = _read_checkpoint(resume, spec)
            self.tick, self.log, self.pending, states = saved["tick"], saved["log"], saved["pending"], saved["tanks"]
        if states is not None:  # a checkpoint's arrays must make the tanks of this reef file
            _check_states(resume or "", spec, states)
        if backend == "inline":
            self.hosts: Any = InlineHosts(spec, record, states)
        elif backend == "local":
            self.hosts = LocalHosts(spec, min(max(1, workers), len(spec.tanks)), record, states)
        elif backend == "dask":
            if not cluster:
                raise ReefError("the dask backend needs --cluster ADDRESS")
            self.hosts = DaskHosts(spec, cluster, record, states)
        else:
            raise ReefError(f"unknown backend {backend!r}")
        self.doors: dict[int, dict[int, tuple[int, int]]] = {}  # tank → corridor → (x, y) of its opening
        for part in self.hosts.call("openings", [() for _ in self._shares()]):
            for i, ends in part.items():
                self.doors[int(i)] = {c: (x, y) for c, x, y in ends}
        self.figures: dict[int, dict[str, Any]] = {}
        self.waited = 0  # arrivals that found their tank full and waited for the next exchange
        self.waiting = 0  # … of them, those waiting now
        self.exchange_s: list[float] = []
        self.step_s: list[float] = []
        if record is not None and resume is None:  # the reef's own header first (progress.save)
            save(Path(record), self)

    def _shares(self) -> list[int]:
        return list(range(self.hosts.size))  # each backend's hosts, in the order tanks are dealt to them

    def _host_of(self, tank: int) -> int:
        return tank % len(self._shares())

    def run(self, until: int, on_interval: Callable[[Reef], None] | None = None) -> dict[str, Any]:
        """Step the reef to tick ``until`` (exchanging at every interval); returns the summary."""
        every = self.spec.interval
        if self.tick > until:
            raise ReefError(f"the reef is at tick {self.tick} already, past tick {until}")
        if self.tick == until and self.tick > 0:  # a checkpoint of the last tick: nothing left to run
            raise ReefError(f"the reef is at tick {self.tick} already (the checkpoint's): give --ticks past it "
                            f"to go on")
        started = time.perf_counter()
        while self.tick < until:
            nxt = min(until, (self.tick // every + 1) * every)
            self.advance(nxt)
            if on_interval is not None:
                on_interval(self)
        return self.summary(time.perf_counter() - started)

    def advance(self, nxt: int) -> None:
        """One interval: hand out the arrivals, step every host to ``nxt``, collect who left."""
        t0 = time.perf_counter()
        shares = self._shares()
        per_host: list[list[Arrival]] = [[] for _ in shares]
        for arrival in self.pending:
            per_host[self._host_of(arrival[0])].append(arrival)
        self.pending = []
        results = self.hosts.call("advance", [(nxt, a) for a in per_host])
        t1 = time.perf_counter()
        left, bounced = [], []
        for r in results:
            left += r["left"]
            bounced += r["bounced"]
            self.figures.update({int(i): f for i, f in r["figures"].items()})
        left.sort(key=lambda d: (d[1], d[0], d[3]))
        for tank, leave, corridor, fish, state in left:
            cor = self.spec.corridors[corridor]
            here = self.spec.tanks[tank].name
            there = cor.b if cor.a == here else cor.a
            dest = self.spec.index(there)
            x, y = self.doors[dest][corridor]
            arrive = leave + self.spec.interval
            self.pending.append((dest, arrive, {"kind": "add", "x": x, "y": y, "state": state}))
            self.log.append({"leave": leave, "arrive": arrive, "from": here, "to": there, "fish": fish,
                             "corridor": corridor})
        retry = -(-nxt // self.spec.interval) * self.spec.interval  # the next exchange (the window steps tick by tick)
        self.waited += len(bounced)
        self.waiting = len(bounced)
        for tank, iv in sorted(bounced, key=lambda b: (b[0], json.dumps(b[1], sort_keys=True))):
            self.pending.append((tank, retry, iv))  # no room: it waits in the corridor, tries at the next exchange
        self.tick = nxt
        self.step_s.append(max(r["seconds"] for r in results))
        self.exchange_s.append((t1 - t0 - self.step_s[-1]) + (time.perf_counter() - t1))
        if self.checkpoint is not None:
            self._save_checkpoint()
        if self.record is not None and nxt % self.spec.interval == 0:  # at every exchange, after the tanks' recordings
            save(Path(self.record), self)

    def reef_hash(self) -> str:
        h = hashlib.blake2b(digest_size=16)
        for i in range(len(self.spec.tanks)):
            h.update(self.figures[i]["hash"].encode())
        for entry in self.log:
            h.update(json.dumps(entry, sort_keys=True).encode())
        return h.hexdigest()

    def migrations(self) -> dict[str, int]:
        """Fish that left one tank for another so far, by way (``"a->b"``)."""
        return dict(sorted(Counter(f"{e['from']}->{e['to']}" for e in self.log if e["leave"] < self.tick).items()))

    def in_transit(self) -> int:
        """Fish in a corridor now: out of their tank, not yet in the next (a removal and an
        arrival happen at the start of their tick; the tanks have stepped ``tick`` ticks)."""
        return sum(1 for e in self.log if e["leave"] < self.tick <= e["arrive"])

    def summary(self, elapsed: float) -> dict[str, Any]:
        tanks = [{"name": t.name, **{k: v for k, v in self.figures[i].items() if k != "tick"}}
                 for i, t in enumerate(self.spec.tanks)]
        exch = self.exchange_s[1:] or self.exchange_s
        return {"tick": self.tick, "tanks": tanks, "migrations": self.migrations(),
                "in_transit": self.in_transit(), "waiting": self.waiting, "waited": self.waited,
                "reef_hash": self.reef_hash(), "backend": self.hosts.name, "intervals": len(self.exchange_s),
                "exchange_ms_mean": round(1000 * sum(exch) / max(1, len(exch)), 3),
                "ticks_per_s": round(self.tick / elapsed, 1) if elapsed > 0 else None,
                "elapsed_s": round(elapsed, 3)}

    def _save_checkpoint(self) -> None:
        states: dict[int, Any] = {}
        for part in self.hosts.call("state", [() for _ in self._shares()]):
            states.update({int(i): v for i, v in part.items()})
        path = Path(self.checkpoint)  # type: ignore[arg-type]
        tmp = path.with_name(path.name + ".part")
        with open(tmp, "wb") as fh:
            fh.write(pack_checkpoint(self.spec, self.tick, self.log, self.pending, states))
        os.replace(tmp, path)  # whole or not at all: a kill during the write leaves the last one

    def close(self) -> None:
        self.hosts.close()


def _check_states(path: str, spec: ReefSpec, states: dict[int, Any]) -> None:
    """Each tank's checkpointed arrays are those of a tank of ``spec`` (every array a fresh tank
    has, of its type and dimensions; a tank that took arrivals has some more); a one-line
    :class:`ReefError` if not."""
    from ..world import World
    from .spec import tank_config

    for i, tank in enumerate(spec.tanks):
        want = World(tank_config(spec, i)).state_arrays()
        got = states[i]["arrays"]
        if not set(want) <= set(got) or any(got[k].dtype != want[k].dtype or got[k].ndim != want[k].ndim
                                            for k in want):
            raise ReefError(f"--resume {path}: a damaged reef checkpoint (tank {tank.name}'s state does not fit it)")


CHECKPOINT_FORMAT = "mirofish reef checkpoint"
CHECKPOINT_VERSION = 1
MAX_CHECKPOINT_BYTES = 2**31  # a file larger than this is not one of ours (it is not read into memory)


def _plain(obj: Any) -> Any:
    """``obj`` with numpy scalars and arrays as JSON numbers and lists (a checkpoint's JSON part)."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON")


def pack_checkpoint(spec: ReefSpec, tick: int, log: list[dict[str, Any]], pending: list[Arrival],
                    states: States) -> bytes:
    """A reef's state as a checkpoint file: each tank's world arrays and the JSON of the rest, in
    the recordings' array codec (:func:`~mirofish.observe.recording.pack`) — no pickle, so
    reading one never runs code."""
    arrays = {f"{i}/{name}": a for i, st in states.items() for name, a in st["arrays"].items()}
    extra = json.loads(json.dumps({
        "format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "spec": redact_data(spec.model_dump()),
        "tick": tick, "log": log, "pending": pending,
        "schedules": {str(i): {str(t): ivs for t, ivs in st["schedule"].items()} for i, st in states.items()}},
        default=_plain))
    return pack(arrays, extra)


def _read_checkpoint(path: str, spec: ReefSpec) -> dict[str, Any]:
    """A checkpoint file read and checked before anything of it is used; a one-line
    :class:`ReefError` for one that is missing, not a checkpoint, damaged, or of another reef."""
    where = f"--resume {path}"
    arrays, extra = _checkpoint_parts(_checkpoint_bytes(path, where), where, spec)
    tick, log, pending, schedules = (extra.get(k) for k in ("tick", "log", "pending", "schedules"))
    damaged = ReefError(f"{where}: a damaged reef checkpoint")
    # explicit checks, not asserts: they hold under python -O too
    if not (_sound_tick(tick, spec) and _sound_log(log) and _sound_pending(pending, len(spec.tanks))
            and isinstance(schedules, dict) and set(schedules) == {str(i) for i in range(len(spec.tanks))}):
        raise damaged
    try:
        states = _tank_states(arrays, schedules, len(spec.tanks))
    except (KeyError, ValueError, TypeError, AttributeError):
        raise damaged from None
    if not all(st["arrays"] for st in states.values()):
        raise damaged
    return {"tick": tick, "log": log, "pending": [(p[0], p[1], p[2]) for p in pending], "tanks": states}


def _checkpoint_bytes(path: str, where: str) -> bytes:
    """The checkpoint file's bytes: a regular file only (a FIFO would block, a device never end),
    read bounded; a one-line :class:`ReefError` (``where``: the flag and path) for any other."""
    from ..files import FileRefused, read_bounded

    try:
        return read_bounded(path, MAX_CHECKPOINT_BYTES, "checkpoint")
    except FileRefused as exc:
        if exc.missing:
            raise ReefError(f"{where}: not found") from None
        if os.path.isdir(path):
            raise ReefError(f"{where}: is a folder, not a checkpoint") from None
        if "larger than" in str(exc) or "over" in str(exc):
            raise ReefError(f"{where}: not a reef checkpoint (too large)") from None
        raise ReefError(f"{where}: {str(exc).split(': ', 1)[-1]}") from None


def _checkpoint_parts(blob: bytes, where: str, spec: ReefSpec) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A checkpoint's arrays and JSON part, when it is a reef checkpoint of this version and of
    the reef file ``spec``; a one-line :class:`ReefError` if not."""
    try:
        arrays, extra = unpack(blob)
    except Exception:  # noqa: BLE001 — whatever the bytes are, they are not a checkpoint of ours
        raise ReefError(f"{where}: {_unreadable(blob)}") from None
    if not isinstance(extra, dict) or extra.get("format") != CHECKPOINT_FORMAT:
        raise ReefError(f"{where}: not a reef checkpoint (a file --checkpoint writes)")
    if extra.get("version") != CHECKPOINT_VERSION:
        raise ReefError(f"{where}: a checkpoint of another version ({extra.get('version')!r}; this one reads "
                        f"{CHECKPOINT_VERSION})")
    if extra.get("spec") != json.loads(json.dumps(redact_data(spec.model_dump()))):
        raise ReefError(f"{where}: a checkpoint of another reef file")
    return arrays, extra


def _unreadable(blob: bytes) -> str:
    """Why the bytes of a file given as a checkpoint cannot be read: a checkpoint cut short (its
    compressed stream ends early — a copy or a download cut off, a full disk — or its stream is
    whole but its arrays stop early), or not a reef checkpoint at all. Before, a truncated
    checkpoint was called "not a reef checkpoint", as if the user had given the wrong file."""
    import zlib

    d = zlib.decompressobj()
    try:
        raw = d.decompress(blob)  # (as much as unpack decompressed before it failed)
    except zlib.error:
        return "not a reef checkpoint (a file --checkpoint writes)"
    if len(blob) > 2 and not d.eof:
        return (f"a damaged reef checkpoint: the file is truncated ({len(blob):,} bytes, its data cut short by a "
                f"copy, a download or a full disk)")
    if _head_format(raw) == CHECKPOINT_FORMAT:
        return "a damaged reef checkpoint: the file is truncated (its arrays end early)"
    return "not a reef checkpoint (a file --checkpoint writes)"


def _head_format(raw: bytes) -> object:
    """The ``format`` a packed blob's head names (:func:`~mirofish.observe.recording.pack`), None if none."""
    try:
        (n,) = np.frombuffer(raw[:4], "<u4")
        head = json.loads(raw[4 : 4 + int(n)])
        return head["extra"]["format"]
    except Exception:  # noqa: BLE001 — no head of ours
        return None


def _sound_tick(tick: object, spec: ReefSpec) -> TypeGuard[int]:
    """A checkpoint's tick: an exchange's (a multiple of the interval, not negative)."""
    return type(tick) is int and tick >= 0 and tick % spec.interval == 0


def _sound_log(log: object) -> TypeGuard[list[dict[str, Any]]]:
    """A checkpoint's migration log: a list of crossings (objects)."""
    return isinstance(log, list) and all(isinstance(e, dict) for e in log)


def _sound_pending(pending: object, tanks: int) -> TypeGuard[list[list[Any]]]:
    """A checkpoint's arrivals to hand out: [tank, tick, intervention] each, the tank one of ``tanks``."""
    return isinstance(pending, list) and all(isinstance(p, list) and len(p) == 3 and type(p[0]) is int
                                             and 0 <= p[0] < tanks and type(p[1]) is int and isinstance(p[2], dict)
                                             for p in pending)


def _tank_states(arrays: dict[str, np.ndarray], schedules: dict[str, Any], tanks: int) -> States:
    """Each tank's state from a checkpoint: its arrays (keyed ``tank/name``) and its schedule;
    a malformed one raises KeyError, ValueError, TypeError or AttributeError."""
    states: States = {i: {"arrays": {}, "schedule": {int(t): list(ivs) for t, ivs in schedules[str(i)].items()}}
                      for i in range(tanks)}
    for key, a in arrays.items():
        i, _, name = key.partition("/")
        states[int(i)]["arrays"][name] = a
    return states
