"""The ``topogen`` program (and ``python -m topogen``): signal handling, memory policy, then the click CLI.

SIGINT and SIGTERM raise :class:`~topogen.util.errors.Interrupted` from the first moment
(before the heavy imports), so an interrupted run cleans up its temporary output
(see :mod:`topogen.util.outdir`), prints one line and exits 130 or 143, never a traceback.
Large arrays are served from the heap and reused (:mod:`topogen.util.memory`).
"""

import signal
import sys

from topogen.util.errors import Interrupted, show
from topogen.util.memory import reuse_freed_memory


def _interrupt(signum: int, _frame) -> None:
    raise Interrupted(signum)


def run() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupt)
    reuse_freed_memory()
    try:
        from topogen.cli import main  # after the signal handlers: a Ctrl-C during the start-up imports is handled

        main(prog_name="topogen")
    except Interrupted as exc:
        sys.stderr.write(f"topogen: interrupted ({signal.Signals(exc.signum).name}); no partial output was left behind\n")
        sys.exit(exc.exit_code)
    except OSError as exc:
        # The last line of defence for a path the system refuses (a name too long, a loop of
        # links...): every command checks its inputs first, but a path it could not foresee
        # still gets a one-line error naming it, and exit 2, never a traceback.
        where = f" {show(exc.filename)}" if exc.filename is not None else ""
        sys.stderr.write(f"error: cannot use{where}: {exc.strerror or exc}; check the paths given on the command line\n")
        sys.exit(2)


if __name__ == "__main__":
    run()
