"""Where the explicit builds run: in this process, in local worker processes, or on a Dask cluster.

Every executor maps a function of one dict (by default
:func:`topogen.search.explicit.build_design`) over dicts and yields ``(index, result
dict)`` as they finish; only plain data crosses a process or network boundary, so
other sweeps (failure scenarios, say) can use the same executors.

* :class:`Local` runs ``jobs`` worker processes (one: in this process). A worker
  that dies (killed, out of memory) breaks the pool; the builds not yet done are
  submitted again to a new pool, up to ``retries`` times.
* :class:`Dask` sends the builds to a running ``dask scheduler`` (``tcp://HOST:PORT``).
  The scheduler moves the builds of a worker that dies to the others
  (its ``allowed-failures`` bound how often one build may take a worker down); a
  build that raises is retried ``retries`` times. Needs ``distributed``
  (``pip install topogen-railfabric[dask]``).
"""

from __future__ import annotations

import uuid
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, Sequence

from topogen.exports.workers import default_jobs
from topogen.util.errors import InputError, Problem
from topogen.search.explicit import build_design

RETRIES = 3


class Local:
    """Local worker processes (``jobs``; 1 builds in this process)."""

    def __init__(self, jobs: int = 1, retries: int = RETRIES, fn: Callable[[dict[str, Any]], dict[str, Any]] = build_design):
        self.jobs = max(1, jobs)
        self.retries = retries
        self.fn = fn

    def describe(self) -> str:
        return "this process" if self.jobs == 1 else f"{self.jobs} local worker processes"

    def run(self, specs: Sequence[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
        if self.jobs == 1 or len(specs) <= 1:
            for i, s in enumerate(specs):
                yield i, self.fn(s)
            return
        todo = set(range(len(specs)))
        for attempt in range(self.retries + 1):
            try:
                with ProcessPoolExecutor(max_workers=min(self.jobs, len(todo))) as pool:
                    pending = {pool.submit(self.fn, specs[i]): i for i in sorted(todo)}
                    while pending:
                        done, _ = wait(pending, return_when=FIRST_COMPLETED)
                        for f in sorted(done, key=lambda f: pending[f]):
                            i = pending.pop(f)
                            result = f.result()  # BrokenProcessPool when a worker died
                            todo.discard(i)
                            yield i, result
                return
            except BrokenProcessPool:
                if attempt == self.retries:
                    raise
        return


class Dask:
    """A Dask distributed cluster: the scheduler's address ``tcp://HOST:PORT``."""

    def __init__(self, address: str, retries: int = RETRIES, timeout_s: float = 30.0, fn: Callable[[dict[str, Any]], dict[str, Any]] = build_design):
        self.address = address
        self.retries = retries
        self.timeout_s = timeout_s
        self.fn = fn  # a module-level function: workers import it by name

    def describe(self) -> str:
        return f"the Dask cluster at {self.address}"

    def _client(self):
        try:
            from distributed import Client
        except ImportError:
            raise InputError([Problem("scheduler", "--scheduler needs the Dask distributed package, which is not installed", "pip install 'topogen-railfabric[dask]' (or pip install distributed)")]) from None
        try:
            return Client(self.address, timeout=self.timeout_s, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise InputError([Problem("scheduler", f"cannot reach the Dask scheduler at {self.address!r}: {exc}", "start one with `dask scheduler` and workers with `dask worker ADDRESS`, or drop --scheduler to build locally")]) from None

    def run(self, specs: Sequence[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
        from distributed import as_completed

        client = self._client()
        try:
            run = uuid.uuid4().hex[:12]  # keys unique to this run: two searches on one cluster never share a task
            futures = [client.submit(self.fn, s, key=f"topogen-{getattr(self.fn, '__name__', 'task')}-{run}-{i}", retries=self.retries, pure=False) for i, s in enumerate(specs)]
            index = {f.key: i for i, f in enumerate(futures)}
            for f in as_completed(futures, loop=client.loop):
                yield index[f.key], f.result()
        finally:
            client.close()


def make(jobs: int | None, scheduler: str | None) -> Local | Dask:
    """The executor the flags ask for: Dask when ``scheduler`` is given, else local processes."""
    if scheduler:
        if not scheduler.startswith(("tcp://", "tls://", "inproc://", "ucx://")) or len(scheduler) > 300:
            raise InputError([Problem("scheduler", f"--scheduler {scheduler[:80]!r} is no scheduler address", "give tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786")])
        return Dask(scheduler)
    return Local(jobs or default_jobs())
