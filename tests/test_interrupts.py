"""A Ctrl-C is never lost: SIGINT/SIGTERM whose exception C code discarded still end the run (exit 130/143).

CPython 3.10 and 3.11 fold constants while compiling a module and clear any exception
but a ``KeyboardInterrupt`` raised meanwhile, so a signal handled during an import
from source vanished and the build ran to the end (exit 0). The handler records each
signal and :func:`topogen.util.interrupts.checkpoint` raises it again. The stress
reproduction with real builds is ``tests/stress_interrupts.py`` (a manual run).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from topogen.util import interrupts
from topogen.util.interrupts import Interrupted

ROOT = Path(__file__).resolve().parents[1]
SAID = "topogen: interrupted (SIGINT); no partial output was left behind"


@pytest.fixture
def handlers():
    """topogen's handlers for the test, then the test process's own again, and no signal left recorded."""
    before = {s: signal.getsignal(s) for s in interrupts.HANDLED}
    hook = sys.unraisablehook
    interrupts.install()
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for s, h in before.items():
            signal.signal(s, h)
        interrupts._received.clear()
        interrupts._raised[0] = Interrupted


def test_a_discarded_interrupt_is_raised_again_at_the_checkpoint(handlers):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)  # the handler runs here
    except BaseException:  # what C code that clears errors does
        pass
    assert interrupts.received() == signal.SIGINT
    with pytest.raises(Interrupted) as got:
        interrupts.checkpoint()
    assert got.value.signum == signal.SIGINT and got.value.exit_code == 130


WEAKREF_CHILD = textwrap.dedent(
    """
    import os, signal, weakref
    from topogen.util import interrupts

    interrupts.install()

    class Thing:
        pass

    def gone(_ref):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs here, inside the callback: Python cannot raise from it
            pass

    thing = Thing()
    ref = weakref.ref(thing, gone)
    del thing
    print("went on")
    try:
        interrupts.checkpoint()
    except interrupts.Interrupted as exc:
        print("raised", exc.signum)
    """
)


def test_an_interrupt_in_a_weakref_callback_is_recorded_not_printed():
    """The handler may run inside a callback (importlib's module locks have one): no "Exception ignored", raised at the checkpoint."""
    res = subprocess.run([sys.executable, "-c", WEAKREF_CHILD], capture_output=True, text=True, timeout=60)
    assert res.stdout.split("\n") == ["went on", f"raised {int(signal.SIGINT)}", ""] and res.stderr == "", (res.stdout, res.stderr)


def test_no_signal_no_interrupt(handlers):
    interrupts.checkpoint()
    assert interrupts.received() is None


def test_a_signal_during_compilation_is_not_lost(handlers):
    """The real case: SIGINT while a module is compiled (constant folding checks for signals)."""
    source = "\n".join(f"x{i} = 2 ** 100 * {i} ** 3 * 7 ** 40" for i in range(20_000))
    seen = []
    try:
        sender = subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -INT {os.getpid()}"])  # another process: compile() holds the GIL
        compile(source, "<many constants>", "exec", dont_inherit=True, optimize=-1)
        seen.append("compiled")  # 3.10, 3.11: the signal came during compile(), its exception was discarded
        sender.wait()
        time.sleep(0.2)
    except Interrupted:
        seen.append("raised")
    sender.wait()
    assert interrupts.received() == signal.SIGINT, seen
    with pytest.raises(Interrupted):
        interrupts.checkpoint()


def test_during_the_start_up_imports_compile_lets_the_signal_through(handlers):
    """``install(starting=True)``: the exception is also a KeyboardInterrupt, which the compiler does not discard."""
    interrupts.install(starting=True)
    source = "\n".join(f"x{i} = 2 ** 100 * {i} ** 3 * 7 ** 40" for i in range(20_000))
    seen = []
    try:
        sender = subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -INT {os.getpid()}"])
        compile(source, "<many constants>", "exec", dont_inherit=True, optimize=-1)
        seen.append("compiled")  # only when the signal came after compile() (a slow machine): raised below
        sender.wait()
        time.sleep(0.2)
    except Interrupted as exc:
        seen.append(type(exc).__name__)
    sender.wait()
    interrupts.install()
    assert seen[-1:] == ["StartupInterrupted"], seen
    assert interrupts.received() == signal.SIGINT


def test_held_signals_wait_even_with_other_threads(handlers):
    """Inside ``held()`` no Interrupted is raised, even when another thread takes the signal; it comes after the block."""
    stop = threading.Event()
    spare = threading.Thread(target=stop.wait, daemon=True)  # a thread that does not block SIGINT (like BLAS's)
    spare.start()
    inside = []
    with pytest.raises(Interrupted):
        with interrupts.held():
            os.kill(os.getpid(), signal.SIGINT)  # process-directed: the kernel gives it to the spare thread
            for _ in range(20):
                time.sleep(0.01)
            inside.append("finished")
    stop.set()
    assert inside == ["finished"]


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from topogen.__main__ import run

    class Swallow:
        '''While topogen.pipeline is imported: SIGINT, its exception discarded (as C code clearing errors does).'''
        def find_spec(self, name, path=None, target=None):
            if name == "topogen.pipeline":
                sys.meta_path.remove(self)
                try:
                    os.kill(os.getpid(), signal.SIGINT)
                    for _ in range(1000):
                        pass
                except BaseException:
                    pass
            return None

    sys.meta_path.insert(0, Swallow())
    sys.argv = ["topogen", *sys.argv[1:]]
    run()
    """
)


def test_the_program_exits_130_when_the_interrupt_was_discarded(tmp_path):
    out = tmp_path / "demo"
    first = subprocess.run([sys.executable, "-m", "topogen", "build", "demo", "--formats", "cabling", "--out", str(out)], cwd=tmp_path, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    res = subprocess.run([sys.executable, "-c", CHILD, "build", "demo", "--formats", "cabling", "--out", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 130, res.stderr
    assert res.stderr.splitlines() == [SAID] and res.stdout == ""
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(q.name for q in tmp_path.iterdir()) == ["demo"]


def test_without_the_discarding_the_child_builds(tmp_path):
    """The child program itself works: the 130 above comes from the discarded signal, not from the set-up."""
    child = CHILD.replace('if name == "topogen.pipeline":', "if False:")
    res = subprocess.run([sys.executable, "-c", child, "build", "demo", "--formats", "cabling", "--out", str(tmp_path / "demo"), "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
