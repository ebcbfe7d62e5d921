"""The ``topogen`` program (and ``python -m topogen``): signal handling, memory policy, then the click CLI.

SIGINT and SIGTERM raise :class:`~topogen.util.interrupts.Interrupted` from the first
moment (before every other import), so an interrupted run cleans up its temporary
output (see :mod:`topogen.util.outdir`), prints one line and exits 130 or 143, never
a traceback. A signal whose exception was lost (C code can discard it, see
:mod:`topogen.util.interrupts`) is raised again after the start-up imports, at each
phase and at the end: a run that got one always exits 130 or 143.
Large arrays are served from the heap and reused (:mod:`topogen.util.memory`).
"""

import signal
import sys

from topogen.util import interrupts
from topogen.util.interrupts import Interrupted


def run() -> None:
    interrupts.install(starting=True)
    try:
        _program()
    except Interrupted as exc:
        sys.stderr.write(f"topogen: interrupted ({signal.Signals(exc.signum).name}); no partial output was left behind\n")
        sys.exit(exc.exit_code)
    except OSError as exc:
        # The last line of defence for a path the system refuses (a name too long, a loop of
        # links...): every command checks its inputs first, but a path it could not foresee
        # still gets a one-line error naming it, and exit 2, never a traceback.
        from topogen.util.errors import show  # keeps difflib out of start-up, before the signal handlers

        where = f" {show(exc.filename)}" if exc.filename is not None else ""
        sys.stderr.write(f"error: cannot use{where}: {exc.strerror or exc}; check the paths given on the command line\n")
        sys.exit(2)


def _program() -> None:
    """The memory policy and the CLI; a signal got at any moment ends it as :class:`Interrupted`."""
    try:
        from topogen.util.memory import reuse_freed_memory  # after the signal handlers: ctypes slows start-up

        reuse_freed_memory()
        from topogen.cli import main  # after the signal handlers: a Ctrl-C during the start-up imports is handled

        interrupts.install()  # from here on Interrupted only: click would turn a KeyboardInterrupt into "Aborted!"
        interrupts.checkpoint()  # one whose exception was discarded meanwhile
        main(prog_name="topogen")
    finally:
        interrupts.checkpoint()  # whatever the exit (click's sys.exit included), a run that got a signal says so


if __name__ == "__main__":
    run()
