"""Atomic output directories: build everything in a temporary sibling, then swap it in.

A failed run never leaves a half-written ``out/<name>/`` and never clobbers the
previous good one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import InputError, Problem


def check_writable(out_dir: Path) -> None:
    """Fail early, with a clear message, when ``out_dir`` cannot be created or written."""
    parent = out_dir.parent
    probe = parent
    while not probe.exists():
        probe = probe.parent
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError([Problem("out", f"{str(out_dir)!r} exists and is not a directory", "choose another --out directory")])
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise InputError([Problem("out", f"cannot write to {str(out_dir)!r}: {str(probe)!r} is not a writable directory", "choose a writable --out directory")])


@contextmanager
def atomic_dir(out_dir: Path) -> Iterator[Path]:
    """Yield a temporary directory; on success it replaces ``out_dir`` in one rename."""
    out_dir = Path(out_dir)
    check_writable(out_dir)
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    except OSError as exc:
        raise InputError([Problem("out", f"cannot write to {str(out_dir)!r}: {exc.strerror or exc}", "choose a writable --out directory")]) from None
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    os.chmod(tmp, 0o755)
    old = None
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        os.rmdir(old)
        os.rename(out_dir, old)
    os.rename(tmp, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Write one file through a temporary sibling and a rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
