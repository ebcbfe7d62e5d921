"""Thin writers shared by the exporters: per-architecture directories, chunked CSV, hashed outputs.

Every file an exporter opens with :func:`open_output` is hashed while it is
written, so ``manifest.json`` never reads the outputs back; :func:`digest`
falls back to reading a file nobody registered (a file written by a tool such
as Graphviz, or by an exporter that uses plain ``open``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import os
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Mapping, TypeVar

from .text import CarefulCsvWriter

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


def take_written() -> dict[str, tuple[int, str, int]]:
    """The registrations of this process, cleared (a worker process hands them to the parent)."""
    out = dict(_WRITTEN)
    _WRITTEN.clear()
    return out


def register(entries: Mapping[str, tuple[int, str, int]]) -> None:
    """Adopt registrations made in another process (a parallel exporter)."""
    _WRITTEN.update(entries)


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


def _csv_writer(fh, careful: bool):
    return CarefulCsvWriter(fh) if careful else csv.writer(fh, lineterminator="\n")


def write_csv(path: Path, columns: Iterable[str], rows: Iterable[Iterable], careful: bool = False) -> None:
    """A plain CSV: the header on line 1, ``\\n`` line ends.

    No comment line: provenance belongs in ``manifest.json`` (a leading ``#``
    line makes ``pandas.read_csv`` and ``csv.DictReader`` read garbage).
    ``csv.writer.writerows`` consumes ``rows`` in C, so a generator that yields
    whole chunks (``yield from zip(...)``) costs no Python step per row here;
    the file's 1 MiB buffer batches the writes. ``careful``: rows with catalog
    text, written by :class:`~topogen.exports.text.CarefulCsvWriter` (also quotes
    ``;``, tab and CR), one Python step per row.
    """
    with open_output(path, newline="") as fh:
        w = _csv_writer(fh, careful)
        w.writerow(columns)
        w.writerows(rows)


def write_csv_parts(directory: Path, stem: str, columns: Iterable[str], rows: Iterable[Iterable], max_bytes: int, careful: bool = False) -> list[Path]:
    """``<stem>.csv``, or ``<stem>-001.csv``, ``<stem>-002.csv``... each at most ``max_bytes`` with the header.

    For importers that refuse large files (NetBox refuses pasted text over
    2.5 MiB). A single part keeps the plain name. Sizes are UTF-8 bytes,
    counted while writing; a single row longer than the limit stays whole.
    """
    head = io.StringIO()
    _csv_writer(head, careful).writerow(list(columns))
    header = head.getvalue().encode("utf-8")
    room = max_bytes - len(header)
    bodies: list[bytes] = []

    def sink(start: bytes = b"") -> tuple[io.BytesIO, Any]:
        raw = io.BytesIO(start)
        raw.seek(0, io.SEEK_END)
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="", write_through=True)
        return raw, _csv_writer(text, careful)

    raw, w = sink()
    it = iter(rows)
    while batch := list(itertools.islice(it, 4096)):
        before = raw.tell()
        w.writerows(batch)  # whole batches in C while they fit
        if raw.tell() <= room:
            continue
        raw.truncate(before)
        raw.seek(before)
        for row in batch:  # the batch that crosses the limit, row by row
            at = raw.tell()
            w.writerow(row)
            if raw.tell() > room and at:
                data = raw.getvalue()
                bodies.append(data[:at])
                raw, w = sink(data[at:])
    bodies.append(raw.getvalue())
    names = [f"{stem}.csv"] if len(bodies) == 1 else [f"{stem}-{i:03d}.csv" for i in range(1, len(bodies) + 1)]
    paths = []
    for name, body in zip(names, bodies):
        path = Path(directory) / name
        with open_output(path, "wb") as fh:
            fh.write(header)
            fh.write(body)
        paths.append(path)
    return paths
