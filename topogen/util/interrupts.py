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

Nothing here imports more than :mod:`signal` and :mod:`sys`: the program installs
the handlers before every other import. An interrupt Python reports as "Exception
ignored" (the handler ran in a weakref callback) is not printed: it is recorded too.
"""

from __future__ import annotations

import signal
import sys

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
    sys.unraisablehook = _unraisable


def _unraisable(unraisable) -> None:
    """Python's report of an exception it cannot raise (in a ``__del__``, a weakref callback), but for :class:`Interrupted`.

    The handler can run inside such a callback (importlib's module locks have
    one): the exception is lost there, "Exception ignored in..." and a traceback
    would be printed; it is recorded, and :func:`checkpoint` raises it again.
    """
    if not isinstance(unraisable.exc_value, Interrupted):
        sys.__unraisablehook__(unraisable)


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


class held:  # noqa: N801  (used as ``with held():``, like a function)
    """SIGINT/SIGTERM wait until the block ends (then act): a swap or a clean-up is never cut.

    Blocking the signals in this thread is not enough: the kernel then hands a
    signal sent to the process to another thread (numpy's BLAS threads), and
    Python runs the handler in this one all the same. So, in the main thread,
    the handlers are also replaced by ones that only note the signal; the first
    signal noted is passed to the handler of before once the block is over.
    Elsewhere (a worker thread) only the signal mask is changed. A class, not a
    ``contextlib`` generator: this module imports nothing but :mod:`signal` and :mod:`sys`.
    """

    def __enter__(self) -> None:
        import threading  # keeps threading out of start-up: the handlers are installed first

        self.noted: list[int] = []
        self.before: dict[int, object] = {}
        self.old_mask = None
        try:
            if threading.current_thread() is threading.main_thread():
                for signum in HANDLED:
                    self.before[signum] = signal.signal(signum, lambda s, _f: self.noted.append(s))
            self.old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *_exc) -> None:
        if self.old_mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.old_mask)  # a signal pending meanwhile is noted now
        for signum, handler in self.before.items():
            if handler is not None:  # None: a handler not set from Python (none is, in topogen)
                signal.signal(signum, handler)
        if self.noted:
            handler = self.before.get(self.noted[0])
            if callable(handler):
                handler(self.noted[0], None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(self.noted[0])  # what it would have done: end the process
