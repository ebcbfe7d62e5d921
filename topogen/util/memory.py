"""The program's memory policy: large numpy buffers come from the heap and are reused.

glibc serves every block above its mmap threshold (128 KiB, rising to at most
32 MiB as blocks are freed) with a fresh ``mmap`` and unmaps it on ``free``. A
large fabric's columns are bigger than that (8.4 M cables at 2,097,152 GPUs:
67 MB per int64 column), so every temporary array of a pass costs page faults
and the kernel zeroing its pages again. Measured on validation at 2,097,152
GPUs (``bench/bench.py``): a third of its CPU time, 0.10 of 0.39 us per cable,
was system time for those pages; at 131,072 GPUs, where the arrays stay under
the threshold, none.

:func:`reuse_freed_memory` makes glibc serve large blocks from its heap and
keep up to :data:`KEEP_FREE` bytes of free heap at the top, so a freed
temporary's pages serve the next one. The results are the same; only where the
bytes live changes. Peak memory grows by at most the free heap kept.

It changes the whole process, so the library never calls it: the ``topogen``
program does (:mod:`topogen.__main__`), and so does ``bench/bench.py``, which
times what the program does. Elsewhere than glibc it does nothing.

:func:`usual_allocation` goes back to glibc's usual large blocks once the
build's phases are done (``topogen build`` calls it before its exporters).
:func:`release_free_memory` hands the free heap back to the kernel
(``malloc_trim``); the exporters call it before forking their workers, which
would otherwise each map, and count in their resident size, the parent's
kept free memory.
"""

from __future__ import annotations

import ctypes
import functools

# mallopt(3) parameters (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_MMAP_MAX = -4

KEEP_FREE = (1 << 31) - 1  # bytes of free heap kept at the top before glibc returns them to the kernel (mallopt takes an int: 2 GiB at most)


@functools.cache
def _glibc(name: str, *argtypes):
    """glibc's function ``name`` (returning int, taking ``argtypes``), or None elsewhere.

    Looked up among the symbols the process has loaded (libc is one), not with
    ``ctypes.util.find_library``, which runs ``ldconfig -p`` at start-up: a child a
    Ctrl-C could leave behind.
    """
    try:
        fn = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = argtypes, ctypes.c_int
    return fn


def release_free_memory() -> None:
    """Return the heap's free memory to the kernel (glibc's ``malloc_trim``; elsewhere nothing)."""
    trim = _glibc("malloc_trim", ctypes.c_size_t)
    if trim is not None:
        trim(0)


def usual_allocation() -> None:
    """Back to glibc's usual large blocks (from mmap, above 32 MiB: its dynamic threshold's ceiling) and free heap returned.

    For the exporters: their text and zip buffers grow by reallocation, which
    mmap serves in place; from the heap it copies, and workers peaked about a
    third higher (1,288 MB against 972 MB with glibc's defaults, 1,048,576 GPUs).
    """
    mallopt = _glibc("mallopt", ctypes.c_int, ctypes.c_int)
    if mallopt is None:
        return
    mallopt(M_MMAP_THRESHOLD, 32 << 20)
    mallopt(M_TRIM_THRESHOLD, 64 << 20)
    mallopt(M_MMAP_MAX, 65536)
    release_free_memory()


def reuse_freed_memory() -> bool:
    """Serve large blocks from the heap and keep freed memory for reuse (glibc only).

    Returns whether the policy is in force (False: not glibc, or glibc refused).
    """
    mallopt = _glibc("mallopt", ctypes.c_int, ctypes.c_int)
    if mallopt is None:
        return False
    # no mmap for any block: every block from the heap; keep KEEP_FREE of free heap before trimming
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, KEEP_FREE))
