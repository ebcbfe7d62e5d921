"""Progress of a long build on stderr: a bar on a terminal, one line per phase otherwise.

The pipeline reports phases through a plain callable (``progress(phase)``);
this module renders them for the CLI. Library code never prints.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

BAR = 24
DELAY = 2.0  # seconds of silence before the first progress line: a quick build says nothing


class Progress:
    """``progress(phase)`` starts a phase; :meth:`done` ends the display.

    On a TTY one line is redrawn: ``[#########---------------] 4/9 validation  1.2 s``;
    elsewhere (CI logs, pipes) each phase gets a line ``topogen: [  1.2 s] validation``.
    Nothing shows while the work is younger than ``delay`` seconds: a quick
    build (or one that stops at bad input) stays silent.
    """

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True, delay: float | None = None):
        self.stream = stream or sys.stderr
        self.delay = DELAY if delay is None else delay
        self.total = max(1, total)
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.step = 0
        self.shown = False
        self.start = time.monotonic()

    def __call__(self, phase: str) -> None:
        if not self.enabled:
            return
        self.step = min(self.step + 1, self.total)
        elapsed = time.monotonic() - self.start
        if elapsed < self.delay:
            return
        self.shown = True
        if self.tty:
            filled = BAR * self.step // self.total
            self.stream.write(f"\r[{'#' * filled}{'-' * (BAR - filled)}] {self.step}/{self.total} {phase:<40.40} {elapsed:6.1f} s")
        else:
            self.stream.write(f"topogen: [{elapsed:6.1f} s] {phase}\n")
        self.stream.flush()

    def done(self) -> None:
        if self.enabled and self.tty and self.shown:
            self.stream.write("\r" + " " * (BAR + 60) + "\r")
            self.stream.flush()
