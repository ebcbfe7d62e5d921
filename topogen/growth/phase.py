"""The installed phase: the cables of a build directory and the spec it was built from.

A build directory (``out/<name>``) holds ``<arch>/cabling.csv`` (as planned, or
edited on the floor to what was installed) and ``summary.json``, which records the
spec (``spec``) and its hash; ``manifest.json`` lists the files, so a cabling file
is known to belong to that build. The cables are read with the as-built reader
(:mod:`topogen.asbuilt.cabling`): a malformed file is an InputError naming its line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

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


INSTALLED = "installed"  # the stage name of the installed phase (before stage 0)
FINAL = "final"


def stage_plan(expand_dir: str | Path, stage: str, arch: str | None = None) -> tuple[Path, Path, str, bool]:
    """The plan of one stage of ``topogen expand``'s output: ``(cabling file, summary.json of its spec, arch, in progress)``.

    ``stage``: ``installed`` (the installed phase as the expansion read it, against its
    own spec), a stage number (the wiring after that stage, against the new spec; the
    last is the final wiring) or ``final``. ``in progress`` is True for a stage before the
    last, whose wiring still lacks cables of later stages. InputError naming ``--stage``
    when the directory is no expansion or the stage does not exist.
    """
    root = Path(expand_dir)
    figures = root / "expand.json"
    if not figures.is_file():
        raise InputError([Problem("--stage", f"{show(str(expand_dir))} is not a directory topogen expand wrote (it holds no expand.json)", "give the expansion's output directory (topogen expand BUILD_DIR SPEC --out DIR)")])
    have = [a for a in ARCHES if (root / a / "cabling.csv").is_file()]
    if arch is not None and arch not in have:
        raise InputError([Problem("arch", f"{show(str(expand_dir))} holds no {arch} expansion (it has {', '.join(have) or 'none'})", f"use --arch {' or --arch '.join(have)}")])
    if arch is None and len(have) != 1:
        raise InputError([Problem("arch", f"{show(str(expand_dir))} holds {' and '.join(have) or 'no'} expansions", f"pass --arch {' or --arch '.join(have)}")])
    arch = arch or have[0]
    try:
        detail = next(f for f in json.loads(figures.read_text(encoding="utf-8"))["expansions"] if f["arch"] == arch)["stage_detail"]
    except (ValueError, KeyError, StopIteration, TypeError):
        raise InputError([Problem("--stage", f"{show(str(figures))} is not the figures file topogen expand writes", "give the expansion's output directory as written")]) from None
    last = len(detail) - 1
    if stage == INSTALLED:
        return root / INSTALLED / arch / "cabling.csv", root / INSTALLED / "summary.json", arch, False
    if stage == FINAL or stage == str(last):
        return root / arch / "cabling.csv", root / "summary.json", arch, False
    if stage.isdecimal() and int(stage) < last:
        return root / arch / "stages" / f"stage-{int(stage)}.csv", root / "summary.json", arch, True
    raise InputError([Problem("--stage", f"{show(stage)} is no stage of this expansion", f"give {INSTALLED}, a stage number 0 to {last}, or {FINAL}")])


def expansion_rows(path: Path, columns: tuple[str, ...], name: str) -> Iterator[tuple[int, dict]]:
    """(line number, row) of a file an expansion wrote (``name``: as the message calls it); InputError when its header is not ``columns``."""
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        rd = csv.DictReader(fh)
        if tuple(rd.fieldnames or ()) != columns:
            raise InputError([Problem("BUILD_DIR", f"{show(str(path))} has the columns {','.join(rd.fieldnames or ())}", f"give the {name} topogen expand wrote ({','.join(columns)})")])
        yield from enumerate(rd, 2)


def bad_row(path: Path, no: int, row: dict, hint: str) -> InputError:
    """The InputError of a malformed line of a file an expansion wrote: the file, the line and its text."""
    return InputError([Problem("BUILD_DIR", f"{show(str(path))} line {no}: {show(','.join(str(v) for v in row.values()))}", hint)])
