"""Child processes that topogen (and its tests and benches) start and must not leave behind."""

from __future__ import annotations

import subprocess


def stop(proc: subprocess.Popen, timeout: float) -> None:
    """End ``proc``: SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds; reaped either way."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
