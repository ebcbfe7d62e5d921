"""Thin writers shared by the exporters: per-architecture directories and chunked CSV."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Callable, Iterable, Mapping, TypeVar

from ..model import CHUNK

T = TypeVar("T")


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
    """A plain CSV: the header on line 1, ``\\n`` line ends, rows written in blocks.

    No comment line: provenance belongs in ``manifest.json`` (a leading ``#``
    line makes ``pandas.read_csv`` and ``csv.DictReader`` read garbage).
    """
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        buf: list = []
        for row in rows:
            buf.append(row)
            if len(buf) >= CHUNK:
                w.writerows(buf)
                buf.clear()
        w.writerows(buf)
