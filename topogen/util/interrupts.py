"""SIGINT and SIGTERM as an exception that is never lost: :class:`Interrupted`.

The ``topogen`` program turns both signals into :class:`Interrupted` (:func:`install`,
the first thing it does). Python runs a signal's handler wherever the main thread
next looks for signals, and that may be inside C code that discards the exception
the handler raised: CPython 3.10 and 3.11 fold constants while compiling a module
(each import of a module without its ``.pyc``, as under ``PYTHONDONTWRITEBYTECODE``
or in a source tree the user cannot write) and there clear every exception but a
``KeyboardInterrupt``; the import then goes on as if no signal had come, and the
build ran to the end and exited 0. So the handler also records the signal, and
:func:`checkpoint` raises it again where going on would cost: after the start-up
imports, at each phase of a build and before an output directory is swapped in.
During the start-up imports the exception is also a ``KeyboardInterrupt``
(:class:`StartupInterrupted`), which the compiler lets through: a Ctrl-C then acts
at once instead of at the end of the imports.

Nothing here imports more than :mod:`signal`: the program installs the handlers
before its heavy imports.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Iterator

HANDLED = (signal.SIGINT, signal.SIGTERM)
_received: list[int] = []  # the signals this process got (first one first), raised or not


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (the program turns both into this): clean up, exit 128 + signal.

    A ``BaseException`` like :class:`KeyboardInterrupt`, so ``except Exception`` never
    swallows it, but not one, so click does not turn it into "Aborted!" and exit 1.
    """

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signum)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class StartupInterrupted(Interrupted, KeyboardInterrupt):
    """:class:`Interrupted` while the program imports its modules: also a ``KeyboardInterrupt``, which the compiler lets through.

    Only then: click turns a ``KeyboardInterrupt`` into "Aborted!" and exit 1.
    """


_raised = [Interrupted]  # what on_signal raises: StartupInterrupted during the start-up imports


def on_signal(signum: int, _frame) -> None:
    """The handler of SIGINT and SIGTERM: record the signal, raise :class:`Interrupted`."""
    _received.append(signum)
    raise _raised[0](signum)


def install(starting: bool = False) -> None:
    """Make SIGINT and SIGTERM raise :class:`Interrupted` (main thread only, as :func:`signal.signal`).

    ``starting``: the program is about to import its modules (and compile those without
    a ``.pyc``): raise :class:`StartupInterrupted` until ``install()`` is called again.
    """
    _raised[0] = StartupInterrupted if starting else Interrupted
    for signum in HANDLED:
        signal.signal(signum, on_signal)


def checkpoint() -> None:
    """Raise :class:`Interrupted` again if this process got SIGINT or SIGTERM, whatever became of the first raise.

    Call it on the normal path only (never while cleaning up after an exception):
    a process that got a signal must not go on, even when the exception its
    handler raised was discarded (see the module docstring).
    """
    if _received:
        raise Interrupted(_received[0])


def received() -> int | None:
    """The first SIGINT/SIGTERM this process got through :func:`on_signal`, or None."""
    return _received[0] if _received else None


@contextmanager
def held() -> Iterator[None]:
    """SIGINT/SIGTERM wait until the block ends (then act): a swap or a clean-up is never cut.

    Blocking the signals in this thread is not enough: the kernel then hands a
    signal sent to the process to another thread (numpy's BLAS threads), and
    Python runs the handler in this one all the same. So, in the main thread,
    the handlers are also replaced by ones that only note the signal; the first
    signal noted is passed to the handler of before once the block is over.
    Elsewhere (a worker thread) only the signal mask is changed.
    """
    import threading  # keeps threading out of start-up: the handlers are installed first

    main = threading.current_thread() is threading.main_thread()
    noted: list[int] = []
    before: dict[int, object] = {}
    old_mask = None
    try:
        if main:
            for signum in HANDLED:
                before[signum] = signal.signal(signum, lambda s, _f: noted.append(s))
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
        yield
    finally:
        if old_mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)  # a signal pending meanwhile is noted now
        for signum, handler in before.items():
            if handler is not None:  # None: a handler not set from Python (none is, in topogen)
                signal.signal(signum, handler)
        if noted:
            handler = before.get(noted[0])
            if callable(handler):
                handler(noted[0], None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(noted[0])  # what it would have done: end the process
