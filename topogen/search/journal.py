"""The results file: explicit builds appended as they finish, so an interrupted search resumes.

A JSON-lines file: a header line ``{"topogen_search_results": 1}``, then one line
per finished build ``{"spec_sha256", "generator", "figures"}``. A rerun with the
same file reuses every result of the same topogen version and spec hash and builds
only the rest. A file that is not such a journal is refused (exit 2), never
overwritten; a last line cut by a crash is ignored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from topogen import __version__
from topogen.util.errors import InputError, Problem

HEADER = {"topogen_search_results": 1}
MAX_BYTES = 1 << 30


class Journal:
    """An append-only results file (see the module doc)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.done: dict[str, dict[str, Any]] = {}
        self._fh = None
        self._read()

    def _refuse(self, why: str) -> InputError:
        return InputError([Problem("results", f"{str(self.path)!r} {why}", "give a new file name, or a results file an earlier topogen search wrote")])

    def _read(self) -> None:
        p = self.path
        if not os.path.lexists(p):
            parent = p.parent if str(p.parent) else Path(".")
            if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
                raise self._refuse(f"cannot be created: {str(parent)!r} is not a writable directory")
            return
        if not p.is_file() or p.is_symlink():
            raise self._refuse("is not a regular file")
        if p.stat().st_size > MAX_BYTES:
            raise self._refuse(f"is larger than {MAX_BYTES >> 20} MiB")
        if p.stat().st_size == 0:
            return
        with open(p, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        try:
            head = json.loads(lines[0])
        except ValueError:
            head = None
        if head != HEADER:
            raise self._refuse("is not a topogen search results file (its first line is not the header)")
        generator = f"topogen {__version__}"
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash
            if isinstance(entry, dict) and entry.get("generator") == generator and isinstance(entry.get("figures"), dict):
                self.done[str(entry.get("spec_sha256"))] = entry["figures"]

    def add(self, spec_sha256: str, figures: dict[str, Any]) -> None:
        """Append one finished build (flushed at once: a crash loses at most the line being written)."""
        if self._fh is None:
            new = not self.path.exists() or self.path.stat().st_size == 0
            self._fh = open(self.path, "a", encoding="utf-8")
            if new:
                self._fh.write(json.dumps(HEADER) + "\n")
        self._fh.write(json.dumps({"spec_sha256": spec_sha256, "generator": f"topogen {__version__}", "figures": figures}, sort_keys=True) + "\n")
        self._fh.flush()
        self.done[spec_sha256] = figures

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
