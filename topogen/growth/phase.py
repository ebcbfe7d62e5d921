"""The installed phase: the cables of a build directory and the spec it was built from.

A build directory (``out/<name>``) holds ``<arch>/cabling.csv`` (as planned, or
edited on the floor to what was installed) and ``summary.json``, which records the
spec (``spec``) and its hash; ``manifest.json`` lists the files, so a cabling file
is known to belong to that build. The cables are read with the as-built reader
(:mod:`topogen.asbuilt.cabling`): a malformed file is an InputError naming its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from topogen.asbuilt import Cable, cabling, wiring
from topogen.asbuilt.sources import _build_spec
from topogen.fabric.model import ARCHES
from topogen.spec.cluster import Spec
from topogen.util.errors import InputError, Problem, show


@dataclass
class Phase:
    """One architecture of an installed build: its spec, cables (in file order) and cable ids."""

    spec: Spec
    arch: str
    path: Path
    cables: list[Cable]
    ids: list[int]  # the cable column of each cable (0 when the file has none)


def built(build_dir: str | Path) -> list[str]:
    """The architectures whose ``cabling.csv`` a build directory holds."""
    return [a for a in ARCHES if (Path(build_dir) / a / "cabling.csv").is_file()]


def read(build_dir: str | Path, arch: str | None = None) -> Phase:
    """The installed phase of ``build_dir``: ``<arch>/cabling.csv`` read, its spec from ``summary.json``.

    ``arch`` chooses when the build holds both architectures. InputError when the
    directory is no topogen build, the summary records no spec, or the file is malformed.
    """
    root = Path(build_dir)
    if not root.is_dir():
        raise InputError([Problem("BUILD_DIR", f"{show(str(build_dir))} is not a directory", "give the directory topogen build wrote (out/<name>)")])
    if arch is not None and arch not in ARCHES:
        raise InputError([Problem("arch", f"unknown architecture {show(arch)}", f"use {' or '.join(ARCHES)}")])
    built = [a for a in ARCHES if (root / a / "cabling.csv").is_file()]
    if not built:
        raise InputError([Problem("BUILD_DIR", f"{show(str(build_dir))} holds no <arch>/cabling.csv", "build the installed phase with --formats cabling (or all), or give its build directory")])
    if arch is not None and arch not in built:
        raise InputError([Problem("arch", f"{show(str(build_dir))} holds no {arch} build (it has {', '.join(built)})", f"use --arch {' or --arch '.join(built)}")])
    if arch is None and len(built) > 1:
        raise InputError([Problem("arch", f"{show(str(build_dir))} holds {' and '.join(built)} builds", f"pass --arch {' or --arch '.join(built)}")])
    arch = arch or built[0]
    summary = root / "summary.json"
    spec = _build_spec(summary) if summary.is_file() else None
    if spec is None:
        raise InputError([Problem("BUILD_DIR", f"{show(str(summary))} is missing or records no spec", "give a directory written by topogen build (its summary.json records the spec it was built from)")])
    path = root / arch / "cabling.csv"
    sheet = cabling.Sheet()
    found = cabling.read(path, sheet, "BUILD_DIR")
    build = wiring.build_of(path)
    if build is not None and not spec.digest().startswith(build[0]):
        raise InputError([Problem("BUILD_DIR", f"{show(str(path))} belongs to a build of another spec than {show(str(summary))} records", "give one build directory as topogen build wrote it")])
    ids = []
    for c in found.cables:
        cell = c.where.rsplit("(cable ", 1)
        ids.append(int(cell[1].rstrip(")")) if len(cell) == 2 and cell[1].rstrip(")").isdecimal() else 0)
    return Phase(spec, arch, path, found.cables, ids)
