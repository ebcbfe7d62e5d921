"""Thin writers shared by the exporters: per-architecture directories, chunked CSV, hashed outputs.

Every file an exporter opens with :func:`open_output` is hashed while it is
written, so ``manifest.json`` never reads the outputs back; :func:`digest`
falls back to reading a file nobody registered (a file written by a tool such
as Graphviz, or by an exporter that uses plain ``open``).
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Mapping, TypeVar

import numpy as np

from topogen.util.text import CsvWriter

T = TypeVar("T")

# absolute path -> (bytes, sha256 hex, mtime_ns) of every file closed by open_output in this process
_WRITTEN: dict[str, tuple[int, str, int]] = {}


class _HashingFile(io.RawIOBase):
    """A binary file that hashes and counts every byte on its way to the disk."""

    def __init__(self, path: Path):
        self._path = os.path.abspath(path)
        self._file = io.FileIO(self._path, "w")
        self._sha = hashlib.sha256()
        self._bytes = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        n = self._file.write(data)
        self._sha.update(memoryview(data)[:n])
        self._bytes += n
        return n

    def close(self) -> None:
        if not self.closed:
            self._file.close()
            _WRITTEN[self._path] = (self._bytes, self._sha.hexdigest(), os.stat(self._path).st_mtime_ns)
        super().close()


def open_output(path: Path, mode: str = "w", encoding: str = "utf-8", newline: str | None = None) -> IO[Any]:
    """Open an output file for writing (text, or binary with ``mode="wb"``), hashed as it is written.

    Behaves like ``open(path, mode, encoding=..., newline=...)`` with a 1 MiB
    buffer; on close the file's size and sha256 are registered for the manifest.
    """
    buffered = io.BufferedWriter(_HashingFile(path), buffer_size=1 << 20)
    if "b" in mode:
        return buffered
    return io.TextIOWrapper(buffered, encoding=encoding, newline=newline)


def write_output_text(path: Path, text: str, newline: str | None = None) -> None:
    """``path.write_text(text)`` through :func:`open_output`."""
    with open_output(path, newline=newline) as fh:
        fh.write(text)


def write_file_text(path: str | Path, text: str | bytes) -> None:
    """A small whole file (UTF-8, text as given, or its bytes), hashed and registered as :func:`open_output` does, with one ``write``.

    For exporters writing thousands of small files (a configuration per
    switch or node): no 1 MiB buffer and text layer per file.
    """
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    key = path if isinstance(path, str) and path.startswith("/") and "/." not in path and "//" not in path else os.path.abspath(path)
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        mtime = os.fstat(fd).st_mtime_ns
    finally:
        os.close(fd)
    _WRITTEN[key] = (len(data), hashlib.sha256(data).hexdigest(), mtime)


def take_written() -> dict[str, tuple[int, str, int]]:
    """The registrations of this process, cleared (a worker process hands them to the parent)."""
    out = dict(_WRITTEN)
    _WRITTEN.clear()
    return out


def register(entries: Mapping[str, tuple[int, str, int]]) -> None:
    """Adopt registrations made in another process (a parallel exporter)."""
    _WRITTEN.update(entries)


def relative(paths: Iterable[Path], root: Path) -> list[str]:
    """Each of ``paths`` relative to ``root``, POSIX-style: ``Path.relative_to(root).as_posix()``, by text where a path starts with ``root/``.

    The manifest and the file listing of a build holding a pull sheet per rack
    pair (13,313 files a fabric at 131,072 GPUs) spent a second in pathlib.
    """
    base = os.fspath(root).rstrip("/") + "/"
    out = []
    for p in paths:
        s = os.fspath(p)
        out.append(s[len(base) :] if s.startswith(base) and "/./" not in s and "//" not in s[len(base) :] else Path(p).relative_to(root).as_posix())
    return out


def digest(path: Path) -> tuple[int, str]:
    """``(bytes, sha256 hex)`` of a written file: as registered while writing, else read back.

    A registration counts only while the file's size and mtime are those seen
    at close, so a file rewritten afterwards by other means is read again.
    """
    key = os.path.abspath(path)
    st = os.stat(key)
    got = _WRITTEN.pop(key, None)
    if got is not None and got[0] == st.st_size and got[2] == st.st_mtime_ns:
        return got[0], got[1]
    return _read(key, st)[:2]


def remember(path: Path) -> None:
    """Register a file written by other means (a Graphviz render, a zip) by reading it once.

    A worker process does this for its own files, so the parent's manifest
    reads nothing back.
    """
    key = os.path.abspath(path)
    if key not in _WRITTEN:
        _WRITTEN[key] = _read(key, os.stat(key))


def _read(key: str, st: os.stat_result) -> tuple[int, str, int]:
    h = hashlib.sha256()
    with open(key, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return st.st_size, h.hexdigest(), st.st_mtime_ns


def arch_dir(dest: Path, arch: str, *sub: str) -> Path:
    """``dest/<arch>[/sub...]``, created."""
    d = dest.joinpath(arch, *sub)
    d.mkdir(parents=True, exist_ok=True)
    return d


def per_arch(items: Mapping[str, T], dest: Path, filename: str, write: Callable[[T, Path], None]) -> list[Path]:
    """Write ``dest/<arch>/<filename>`` for every architecture with ``write(item, path)``."""
    paths = []
    for arch, item in items.items():
        p = arch_dir(dest, arch) / filename
        write(item, p)
        paths.append(p)
    return paths


def write_csv(path: Path, columns: Iterable[str], rows: Iterable[Iterable]) -> None:
    """A plain CSV: the header on line 1, ``\\n`` line ends, every field by the CSV rule.

    No comment line: provenance belongs in ``manifest.json`` (a leading ``#``
    line makes ``pandas.read_csv`` and ``csv.DictReader`` read garbage).
    Fields go through :func:`topogen.util.text.csv_field` (formula starts
    neutralised, ``;`` and tab quoted too), one Python step per row: for the
    small files (BOMs, NetBox prerequisites); the big ones are built column by
    column (:func:`topogen.fabric.view.csv_lines`).
    """
    with open_output(path, newline="") as fh:
        w = CsvWriter(fh)
        w.writerow(columns)
        w.writerows(rows)


def write_csv_parts(directory: Path, stem: str, header: str, records: Iterable[list[str]], max_bytes: int, max_rows: int | None = None) -> list[Path]:
    """``<stem>.csv``, or ``<stem>-001.csv``, ``<stem>-002.csv``... each at most ``max_bytes`` with the header
    and at most ``max_rows`` records (an importer's time limit).

    For importers that refuse large files (NetBox refuses pasted text over
    2.5 MiB). ``header`` is the header line (with its end); ``records``
    yields chunks of records, each a CSV line without its ``\n``. A part
    takes records while they fit; a single record longer than the limit
    stays whole. A single part keeps the plain name. Sizes are UTF-8 bytes.
    Only the part being filled is held in memory.
    """
    head = header.encode("utf-8")
    room = max_bytes - len(head)
    paths: list[Path] = []
    part: list[str] = []  # texts of the part being filled, each ending with \n
    size = 0
    rows = 0  # records in the part being filled

    def flush(name: str) -> None:
        nonlocal part, size, rows
        path = Path(directory) / name
        with open_output(path, "wb") as fh:
            fh.write(head)
            fh.write("".join(part).encode("utf-8"))
        paths.append(path)
        part, size, rows = [], 0, 0

    for recs in records:
        if not recs:
            continue
        text = "\n".join(recs) + "\n"
        if text.isascii():
            lens = np.fromiter(map(len, recs), np.int64, len(recs))
        else:
            lens = np.fromiter((len(r.encode("utf-8")) for r in recs), np.int64, len(recs))
        ends = np.cumsum(lens + 1)  # bytes up to the end of each record, in this chunk
        i, done = 0, 0
        while i < len(recs):
            j = int(np.searchsorted(ends, done + room - size, side="right"))  # records i..j-1 fit
            if max_rows is not None:
                j = min(j, i + max_rows - rows)
            if j == i and size == 0:
                j = i + 1  # a record longer than the limit: alone in its part
            if j > i:
                part.append(text if (i, j) == (0, len(recs)) else "\n".join(recs[i:j]) + "\n")
                size += int(ends[j - 1]) - done
                rows += j - i
                done, i = int(ends[j - 1]), j
            if i < len(recs):
                flush(f"{stem}-{len(paths) + 1:03d}.csv")
    flush(f"{stem}.csv" if not paths else f"{stem}-{len(paths) + 1:03d}.csv")
    return paths
