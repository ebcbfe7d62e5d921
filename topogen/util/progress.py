"""Progress of a long run on stderr: a bar on a terminal, one line per phase otherwise.

The pipeline reports phases through a plain callable (``progress(phase)``) and,
within a long phase, steps through ``progress.detail(text)`` when the callable
has one (the exporters finished so far: ``writing 5/14: topology done``); this
module renders them for the CLI. Library code never prints.

On a terminal the bar moves at least every :data:`BEAT` seconds even while the
work itself says nothing (a phase computing for a minute, exporters in worker
processes): a heartbeat thread redraws it with the elapsed time. Off a terminal
(CI logs, pipes) each phase and each step gets its own line, and nothing is
redrawn; a phase begun within the first :data:`DELAY` seconds and still running
then gets its line from the heartbeat (``simulate`` at 131,072 GPUs said nothing
for its first 16 s in a log: the fabric and the first run began before the delay).
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

BAR = 24
DELAY = 2.0  # seconds of silence before the first progress line: a quick build says nothing
BEAT = 1.0  # seconds between redraws of the bar on a terminal (it moves at least every 2 s)


class Progress:
    """``progress(phase)`` starts a phase; ``progress.detail(text)`` a step in it; :meth:`done` ends the display.

    On a TTY one line is redrawn: ``[#########---------------] 4/9 validation  1.2 s``;
    elsewhere (CI logs, pipes) each phase gets a line ``topogen: [  1.2 s] validation``.
    Nothing shows while the work is younger than ``delay`` seconds: a quick
    build (or one that stops at bad input) stays silent. ``clock`` (default
    :func:`time.monotonic`) and ``beat`` (seconds between heartbeat redraws,
    0: no heartbeat thread) are for tests; :meth:`tick` is one heartbeat.
    """

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True, delay: float | None = None, clock: Callable[[], float] = time.monotonic, beat: float | None = None):
        self.stream = stream or sys.stderr
        self.delay = DELAY if delay is None else delay
        self.total = max(1, total)
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.clock = clock
        self.step = 0
        self.phase = ""
        self.note = ""
        self.shown = False
        self._said: tuple[int, str] | None = None  # off a terminal: the phase and step last given a line
        self.start = clock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.beat = BEAT if beat is None else beat
        self._run()

    def _run(self) -> None:
        if self.enabled and self.beat > 0 and self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._heartbeat, name="topogen-progress", daemon=True)
            self._thread.start()

    def _halt(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No heartbeat thread while this holds: a process forked meanwhile (the exporters' pool) copies no thread."""
        running = self._thread is not None
        self._halt()
        try:
            yield
        finally:
            if running:
                self._run()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.done()

    def __call__(self, phase: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self.step = min(self.step + 1, self.total)
            self.phase, self.note = phase, ""
            self._show(line=phase)

    def detail(self, text: str) -> None:
        """A step within the current phase (``5/14: topology done``): redrawn on a TTY, a line of its own elsewhere."""
        if not self.enabled:
            return
        with self._lock:
            self.note = text
            self._show(line=f"{self.phase}: {text}" if self.phase else text)

    def tick(self) -> None:
        """One heartbeat: redraw the bar with the elapsed time; off a terminal, the line of a phase or step not yet given one (begun within the delay)."""
        with self._lock:
            if not self.step:
                return
            if self.tty:
                self._show(line=None)
            elif self._said != (self.step, self.note):
                self._show(line=f"{self.phase}: {self.note}" if self.note else self.phase)

    def _show(self, line: str | None) -> None:
        elapsed = self.clock() - self.start
        if elapsed < self.delay:
            return
        self.shown = True
        if self.tty:
            what = f"{self.phase}: {self.note}" if self.note else self.phase
            filled = BAR * self.step // self.total
            self.stream.write(f"\r[{'#' * filled}{'-' * (BAR - filled)}] {self.step}/{self.total} {what:<48.48} {elapsed:6.1f} s")
        elif line is not None:
            self.stream.write(f"topogen: [{elapsed:6.1f} s] {line}\n")
            self._said = (self.step, self.note)
        else:
            return
        self.stream.flush()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.beat):
            self.tick()

    def done(self) -> None:
        self._halt()
        if self.enabled and self.tty and self.shown:
            with self._lock:
                self.stream.write("\r" + " " * (BAR + 70) + "\r")
                self.stream.flush()
