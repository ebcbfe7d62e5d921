"""Run the exporters, serially or in parallel worker processes forked after the build.

The exporters are independent readers of one :class:`~topogen.pipeline.BuildContext`,
so ``jobs > 1`` forks that many workers once the build is done: they inherit the
context copy-on-write (the numpy link columns are never copied), each runs
whole exporters, heaviest first, and hands back its paths, its notes for the
user and the sizes and hashes of the files it wrote. Everything is merged in
the registry's order, so the files, the manifest and the notes are the same as
with ``jobs=1``; an exporter's exception is re-raised in the parent, the one of
the first failing exporter in that order, as the serial run would raise it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from pathlib import Path

from . import EXPORTERS
from .files import register, take_written

MAX_DEFAULT_JOBS = 8

# Relative cost of each exporter (its share of an every-format build at 131,072 GPUs,
# both architectures, profiled); only the order matters: the heaviest start first so the
# last to finish is a light one. Exporters not listed count 1.
COST = {"netbox": 34, "xlsx": 25, "topology": 15, "cabling": 7, "graphml": 4, "slurm": 3, "ibnetdiscover": 3}

_CTX = None  # the build context, set in the parent just before forking


def default_jobs() -> int:
    """Worker processes for ``--jobs`` by default: the CPUs this process may use, at most 8."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_DEFAULT_JOBS))


def run(ctx, dest: Path, formats: list[str], jobs: int = 1) -> list[Path]:
    """Run the exporters ``formats`` into ``dest``; the paths written, in ``formats`` order."""
    if jobs <= 1 or len(formats) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        paths: list[Path] = []
        for name in formats:
            paths.extend(EXPORTERS[name](ctx, dest))
        return paths
    global _CTX
    _CTX = ctx
    sys.stdout.flush()  # a forked worker would write the parent's unflushed output again
    sys.stderr.flush()
    try:
        heaviest_first = sorted(formats, key=lambda f: -COST.get(f, 1))
        with multiprocessing.get_context("fork").Pool(min(jobs, len(formats)), initializer=_quiet) as pool:
            pending = {f: pool.apply_async(_export, (f, str(dest))) for f in heaviest_first}
            results = [pending[f].get() for f in formats]
    finally:
        _CTX = None
    paths = []
    for rel, messages, hashes in results:
        paths.extend(dest / r for r in rel)
        ctx.messages.extend(messages)
        register(hashes)
    return paths


def _quiet() -> None:
    """Workers leave Ctrl-C to the parent (which stops the pool) and die plainly when it does."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _export(name: str, dest: str) -> tuple[list[str], list[str], dict]:
    """In a worker: run one exporter; its paths (relative to ``dest``), new notes and file hashes."""
    ctx = _CTX
    take_written()  # registrations inherited from the parent are not this exporter's
    before = len(ctx.messages)
    paths = EXPORTERS[name](ctx, Path(dest))
    return [str(Path(p).relative_to(dest)) for p in paths], ctx.messages[before:], take_written()
