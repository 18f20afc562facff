"""Where a sweep's runs execute: local processes (default) or an existing Dask cluster.

Dask distributed, not Ray, for the cluster: it is pure Python and pip-installable with no
native runtime, its scheduler and workers are two plain commands (``dask scheduler``,
``dask worker ADDRESS``) that start in about a second, and ``Client.submit`` of a plain
function is exactly the shape of a sweep (independent runs, results back to one place).
Ray brings a large native runtime and a heavier start for no gain here. Both backends call
the same ``run_task`` (through ``run_tasks``, which steps runs that differ only by their seed
and live settings as one world where it can, each run's row what ``run_task`` gives it but for
its timings), so a run's row does not depend on which one ran it. Both send such runs together
(:func:`~.runs.groups`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from typing import Any

from .runs import groups, run_tasks
from .spec import RunTask

_TERM_GRACE_S = 2.0  # how long stop() lets a SIGTERMed worker take to end before it is killed


class BackendError(RuntimeError):
    """A backend that cannot start (no cluster at the address, Dask not installed); one line."""


def _worker_init() -> None:
    """A local worker leaves Ctrl-C to the sweep (which stops it), ends at SIGTERM, and dies with
    the sweep: if the sweep is killed outright (kill -9), the kernel ends its workers too (Linux),
    so no run goes on writing behind a sweep that is gone.

    SIGTERM is set back to its default: a forked worker inherits the sweep's handlers, and one
    that does not end the process (SDL's, left by ``pygame.init()`` in the same process, turns
    SIGTERM into a quit event) would make :meth:`LocalBackend.stop` wait for a run in flight to
    finish."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: an orphaned worker ends when it next asks its dead parent for work


class LocalBackend:
    """Runs in ``workers`` local processes, at most ``workers`` at a time; runs that differ only by
    their seed and live settings go to a worker together, up to ``JOIN_RUNS`` at once, and are
    stepped as one world where they can be (:func:`~.runs.run_tasks`). A stopped sweep loses the
    groups in flight (their runs are run again when it resumes)."""

    def __init__(self, workers: int):
        self.workers = workers
        self.name = f"local processes ({workers})"
        self._pool: ProcessPoolExecutor | None = None

    def run(self, tasks: list[RunTask], record_dir: str | None) -> Iterator[dict[str, Any]]:
        ctx = multiprocessing.get_context("fork")
        self._pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_worker_init)
        try:
            # Ctrl-C waits while the workers are forked: one arriving inside os.fork's
            # after-fork handlers is swallowed there ("Exception ignored"), and the sweep would
            # run on as if it had not been pressed; unblocked, it is raised here.
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if hasattr(signal, "pthread_sigmask") \
                else None
            try:
                pending: set[Future[list[dict[str, Any]]]] = {
                    self._pool.submit(run_tasks, g, record_dir) for g in groups(tasks, self.workers)}
            finally:
                if mask is not None:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    yield from fut.result()
        finally:
            self.stop()

    def stop(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # A run in flight is abandoned. A Ctrl-C inside submit() can leave a worker forked but not
        # yet known to the pool, and Python's exit would wait for it forever: end every child.
        procs = {*getattr(pool, "_processes", {}).values(), *multiprocessing.active_children()}
        for proc in procs:
            proc.terminate()
        # SIGTERM can be caught where the worker has not reset it yet (forked, its initializer not
        # run) or where a run set its own handler (SDL's, at pygame.init()): whatever has not
        # ended in a moment is killed, so that shutdown() below never waits on a run in flight.
        # Waiting on the sentinels reaps nothing (the pool's manager thread does that).
        alive = {proc.sentinel: proc for proc in procs if proc.exitcode is None}
        deadline = time.monotonic() + _TERM_GRACE_S
        while alive and (left := deadline - time.monotonic()) > 0:
            for sentinel in mp_wait(list(alive), left):
                alive.pop(sentinel)
        for proc in alive.values():
            proc.kill()
        pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        self.stop()


def _quietly_collect() -> None:
    import gc
    import sys

    hook = sys.unraisablehook
    sys.unraisablehook = lambda *_: None
    try:
        gc.collect()
    finally:
        sys.unraisablehook = hook


def _dask(needs: str) -> Any:
    """Dask distributed, imported when a cluster is used: an optional dependency, and untyped (what
    it makes is Any here); a :class:`BackendError` saying what ``needs`` it when it is not installed."""
    try:
        import distributed
    except ImportError:
        raise BackendError(f"{needs} needs Dask: pip install -e '.[cluster]'") from None
    return distributed


def check_address(address: str, timeout_s: float = 3.0) -> None:
    """``tcp://HOST:PORT`` (or ``tls://``) of a scheduler that accepts a connection; else a
    :class:`BackendError` naming the problem (no Dask traceback, no 10 s wait on a bad address)."""
    import re
    import socket

    m = re.fullmatch(r"(tcp|tls)://(\[[^\]]+\]|[^:/\s]+):(\d{1,5})/?", address.strip())
    if m is None:
        scheme = address.split("://", 1)[0] if "://" in address else ""
        if scheme and scheme not in ("tcp", "tls"):
            raise BackendError(f"--cluster {address}: only tcp:// and tls:// scheduler addresses are supported")
        raise BackendError(f"--cluster {address}: expected a scheduler address like tcp://HOST:PORT")
    host, port = m.group(2).strip("[]"), int(m.group(3))
    if not 0 < port < 65536:
        raise BackendError(f"--cluster {address}: port {port} is not a port")
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        raise BackendError(f"no Dask scheduler at {address}: {exc.strerror or exc}") from None


class DaskBackend:
    """Runs on an existing Dask distributed cluster (``--cluster tcp://HOST:PORT``).

    Each worker needs MiroFish importable (``pip install -e '.[cluster]'`` in the environment
    the worker runs in); ``--record`` paths are on the workers' file system."""

    def __init__(self, address: str, timeout_s: float = 3.0):
        dask = _dask("--cluster")
        check_address(address, timeout_s)  # one line, at once, before Dask builds anything
        failure = None
        try:
            self.client: Any = dask.Client(address, timeout=f"{timeout_s}s", set_as_default=False)
        except Exception as exc:  # noqa: BLE001 — whatever answers there, it is not a usable scheduler
            failure = (str(exc).splitlines() or [type(exc).__name__])[0][:160]
        if failure is not None:
            _quietly_collect()  # the half-built client closes itself; its complaints are not the user's
            raise BackendError(f"no Dask scheduler at {address}: {failure}")
        workers = self.client.scheduler_info().get("workers", {})
        self.name = f"Dask cluster {address} ({len(workers)} workers)"
        self._futures: list[Any] = []

    def run(self, tasks: list[RunTask], record_dir: str | None) -> Iterator[dict[str, Any]]:
        """The runs in groups that may join (:func:`~.runs.groups` over the cluster's workers, as
        the local backend sends them), each group one task that steps its runs as one world where
        it can (:func:`~.runs.run_tasks`): rows arrive a group at a time, and a stopped sweep loses
        the groups in flight."""
        as_completed = _dask("--cluster").as_completed
        workers = len(self.client.scheduler_info().get("workers", {}))
        self._futures = [self.client.submit(run_tasks, g, record_dir, key=f"mirofish-runs-{g[0].run_id}", pure=False)
                         for g in groups(tasks, workers)]
        try:
            for fut in as_completed(self._futures, loop=self.client.loop):
                yield from fut.result()
        finally:
            self.stop()

    def stop(self) -> None:
        if self._futures:
            self.client.cancel(self._futures)
            self._futures = []

    def close(self) -> None:
        self.stop()
        self.client.close()


class LocalDaskCluster:
    """A real Dask cluster on this machine, for trying ``--cluster`` (and for the tests and the
    scaling bench): ``dask scheduler`` and ``dask worker`` started as separate processes,
    exactly as on a real cluster. A context manager; ``address`` is what ``--cluster`` takes.

        with LocalDaskCluster(workers=2, log_dir=Path("saves")) as address:
            ...  # python run.py sweep SPEC.toml --cluster <address>
    """

    def __init__(self, workers: int = 2, log_dir: str | os.PathLike[str] | None = None, start_timeout_s: float = 60.0):
        self.workers, self.start_timeout_s = workers, start_timeout_s
        self.log_dir = Path(log_dir or ".")
        self._procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> str:
        import socket
        import time

        client = _dask("a Dask cluster").Client
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        bindir = Path(sys.executable).parent
        dask = str(bindir / "dask") if (bindir / "dask").exists() else "dask"
        self.address = f"tcp://127.0.0.1:{port}"
        self._log = open(self.log_dir / "dask.log", "w")
        for args in (["scheduler", "--host", "127.0.0.1", "--port", str(port)],
                     ["worker", self.address, "--nworkers", str(self.workers), "--nthreads", "1"]):
            self._procs.append(subprocess.Popen([dask, *args, "--no-dashboard"], stdout=self._log,
                                                stderr=self._log, cwd=self.log_dir))
        deadline = time.time() + self.start_timeout_s
        while True:
            try:
                with client(self.address, timeout="5s") as c:
                    if len(c.scheduler_info()["workers"]) >= self.workers:
                        return self.address
            except OSError:
                pass
            if time.time() > deadline:
                self.__exit__()
                raise BackendError(f"the local Dask cluster did not start (see {self.log_dir / 'dask.log'})")
            time.sleep(0.3)

    def __exit__(self, *exc: object) -> None:
        for proc in reversed(self._procs):
            proc.terminate()
        for proc in reversed(self._procs):
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs = []
        self._log.close()
