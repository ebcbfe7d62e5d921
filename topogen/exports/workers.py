"""Run the exporters, serially or in parallel worker processes forked after the build.

The exporters are independent readers of one :class:`~topogen.pipeline.BuildContext`,
so ``jobs > 1`` forks that many workers once the build is done: they inherit the
context copy-on-write (the numpy link columns are never copied), each runs
tasks heaviest first and hands back its paths, its notes for the user and the
sizes and hashes of the files it wrote. A task is one exporter, or one
architecture of an exporter that writes each architecture's files from that
architecture's data alone (:data:`PER_ARCH`), or one part of those files
(:data:`topogen.exports.PARTS`: NetBox's devices, interfaces and cables), so
the pieces of a big exporter run side by side. Tasks start heaviest first
(:data:`COST`, measured), so the last to finish is a light one and the wall
time approaches the CPU time over the workers. Everything is merged in the
serial order (exporter, architecture, part), so the files, the manifest and
the notes are the same as with ``jobs=1``; an exporter's exception is
re-raised in the parent, the one of the first failing task in that order, as
the serial run would raise it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Callable, ContextManager

from topogen.exports import EXPORTERS, PARTS
from topogen.exports.files import register, remember, take_written
from topogen.util.memory import release_free_memory
from topogen.util.outdir import held_signals

MAX_DEFAULT_JOBS = 8
PR_SET_PDEATHSIG = 1  # linux/prctl.h
PARENT_POLL_S = 0.5  # where prctl is missing: how often a worker looks for its parent

# CPU-seconds of each exporter (or exporter part) at 131,072 GPUs, both architectures
# (bench/bench.py --shares; diagrams: the wall time its `dot` runs take); a task of one
# architecture counts its share of the cables. Only the order matters: the heaviest start
# first, so the last to finish is a light one. Not listed: 0.05.
COST = {
    "ibnetdiscover": 1.4,
    "xlsx": 1.4,
    "cabling": 1.3,
    "pull-sheets": 3.4,  # with a CSV per rack pair (13,313 files per architecture): 2.8x the grouped file alone, measured in-process
    "graphml": 1.0,
    "diagrams": 1.0,
    "topology": 0.75,
    "slurm": 0.4,
    ("netbox", "cables"): 0.85,
    ("netbox", "interfaces"): 0.8,
    ("netbox", "devices"): 0.16,
}

# Exporters whose <arch>/ files depend only on that architecture's entries of the context
# (byte-identical split checked by tests/test_parallel_exports.py on every format).
PER_ARCH = frozenset({"cabling", "pull-sheets", "topology", "bom", "netbox", "graphml", "slurm", "ibnetdiscover", "validation"})

_CTX = None  # the build context, set in the parent just before forking


def default_jobs() -> int:
    """Worker processes for ``--jobs`` by default: the CPUs this process may use, at most 8."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_DEFAULT_JOBS))


def task_list(ctx, formats: list[str]) -> list[tuple[str, str | None, str | None]]:
    """The tasks of a parallel run, in the serial order: (exporter, architecture or None, part or None)."""
    split = len(ctx.fabrics) > 1
    return [(f, a, p) for f in formats for a in (ctx.fabrics if split and f in PER_ARCH else [None]) for p in PARTS.get(f, (None,))]


def task_cost(ctx, task: tuple[str, str | None, str | None]) -> float:
    """Estimated CPU-seconds of a task at 131,072 GPUs (:data:`COST`, an architecture's share of the cables)."""
    name, arch, part = task
    cost = COST.get((name, part) if part else name, 0.05)
    if arch is None:
        return cost
    links = {a: len(f.links) for a, f in ctx.fabrics.items()}
    return cost * links[arch] / (sum(links.values()) or 1)


def run(ctx, dest: Path, formats: list[str], jobs: int = 1, done: Callable[[str], None] | None = None, forking: Callable[[], ContextManager] | None = None) -> list[Path]:
    """Run the exporters ``formats`` into ``dest``; the paths written, in ``formats`` order.

    ``done(text)`` hears each task finish (``3/14: topology (rail-only) done``), in the
    order they finish; ``forking()`` is held while the pool forks (a progress display
    stops its thread then: :meth:`topogen.util.progress.Progress.paused`).
    """
    tasks = task_list(ctx, formats)
    if jobs <= 1 or len(tasks) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        paths: list[Path] = []
        for i, name in enumerate(formats, 1):
            paths.extend(EXPORTERS[name](ctx, dest))
            if done is not None:
                done(f"{i}/{len(formats)}: {name} done")
        return paths
    global _CTX
    _CTX = ctx
    sys.stdout.flush()  # a forked worker would write the parent's unflushed output again
    sys.stderr.flush()
    release_free_memory()  # the build's freed heap: back to the kernel, not mapped into every worker
    gc.freeze()  # the build's objects out of the workers' collections: a collection would write to (copy) their pages
    try:
        heaviest_first = sorted(tasks, key=lambda t: -task_cost(ctx, t))
        with forking() if forking is not None else nullcontext(), held_signals():  # a worker takes its own handlers (_quiet) before any signal reaches it
            pool = multiprocessing.get_context("fork").Pool(min(jobs, len(tasks)), initializer=_quiet, initargs=(os.getpid(),))
        with pool:
            pending = {t: pool.apply_async(_export, (*t, str(dest))) for t in heaviest_first}
            if done is not None:
                _report(pending, heaviest_first, done)
            results = [pending[t].get() for t in tasks]
    finally:
        _CTX = None
        gc.unfreeze()
    paths = []
    for rel, messages, hashes in results:
        paths.extend(dest / r for r in rel)
        ctx.messages.extend(messages)
        register(hashes)
    return paths


def _report(pending: dict, order: list, done: Callable[[str], None], wait_s: float = 0.5) -> None:
    """Call ``done`` as each task of ``pending`` finishes (a task that failed is left to ``get()`` to raise)."""
    left = list(order)
    n = 0
    while left:
        pending[left[0]].wait(wait_s)
        for t in [t for t in left if pending[t].ready()]:
            left.remove(t)
            if not pending[t].successful():
                return
            n += 1
            name, arch, part = t
            done(f"{n}/{len(order)}: {name}" + "".join(f" ({x})" for x in (arch, part) if x) + " done")


def _quiet(parent: int) -> None:
    """Workers leave Ctrl-C to the parent (which stops the pool) and die plainly when it does.

    Forked with SIGINT/SIGTERM held, so a signal sent before this ran waits
    for these handlers instead of running the parent's (an ``Interrupted``
    traceback from a worker). A parent killed outright (SIGKILL) takes its
    workers with it (:func:`_die_with_parent`): an orphan would finish its
    task and print a ``BrokenPipeError`` traceback handing back the result.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def _die_with_parent(parent: int) -> None:
    """End this worker, silently, as soon as ``parent`` is gone.

    Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``, then one look at the parent in
    case it died before that call. Elsewhere a daemon thread polls ``getppid()``.
    """
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        armed = prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (AttributeError, OSError):  # not Linux
        armed = False
    if os.getppid() != parent:
        os._exit(1)
    if armed:
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="topogen-parent-watch", daemon=True).start()


def _one_arch(ctx, arch: str):
    """The context seen by one architecture: every per-architecture dict cut down to ``arch``."""
    arches = set(ctx.fabrics)
    cut = {}
    for f in dataclasses.fields(ctx):
        value = getattr(ctx, f.name)
        if isinstance(value, dict) and value and set(value) == arches:
            cut[f.name] = {arch: value[arch]}
    return dataclasses.replace(ctx, **cut)  # the rest (spec, summary, messages list...) is shared


def _export(name: str, arch: str | None, part: str | None, dest: str) -> tuple[list[str], list[str], dict]:
    """In a worker: run one exporter (for one architecture, one part); its paths (relative to ``dest``), new notes and file hashes."""
    ctx = _CTX if arch is None else _one_arch(_CTX, arch)
    take_written()  # registrations inherited from the parent are not this exporter's
    before = len(ctx.messages)
    paths = EXPORTERS[name](ctx, Path(dest)) if part is None else EXPORTERS[name](ctx, Path(dest), part=part)
    for p in paths:
        remember(p)  # files written without open_output are hashed here, in parallel, not by the parent
    # A worker runs several tasks: what this one freed goes back before the next one
    # starts, else each task's peak stacks on the last one's leftovers (cycles
    # not yet collected, free heap kept by glibc). The build's objects were frozen
    # before the fork (gc.freeze), so collecting here never touches, and so
    # never copies, the parent's pages.
    gc.collect()
    release_free_memory()
    return [str(Path(p).relative_to(dest)) for p in paths], ctx.messages[before:], take_written()
