"""Cables of a plan or a cabling CSV as :class:`Found`: from a generated fabric or a ``cabling.csv``.

A CSV is streamed: one row at a time, each distinct cable kept once (its
device and port names shared between cables), so memory grows with the
cables of the fabric, not with the size of the file; a record repeated in one
file is a duplicate (:attr:`Found.duplicates`). The columns are those
``topogen validate`` reads (:data:`topogen.asbuilt.wiring.CABLING_REQUIRED`): topogen's own
``cabling.csv``, with or without the floor columns, edited by hand or filled in
on the floor, comma-, semicolon- or tab-separated.
"""

from __future__ import annotations

import csv
import io
import operator
from dataclasses import dataclass, field
from pathlib import Path

from topogen.asbuilt import Cable, End, Found, wiring
from topogen.fabric.graph import edge_columns
from topogen.fabric.model import Fabric
from topogen.util.errors import InputError, Problem, show
from topogen.util.inputs import open_input

MAX_DUPLICATES = 20  # duplicate records kept for the report (all are counted)
FLOOR = ("a_rack", "a_u", "z_rack", "z_u")


@dataclass
class Sheet:
    """What a cabling CSV holds besides its cables: the provenance line and where devices stand."""

    arch: str | None = None
    spec_sha: str | None = None
    places: dict[str, str] | None = None  # device -> "rack A01 U12", from the floor columns
    notes: list[str] = field(default_factory=list)


def from_fabric(fabric: Fabric, source: str = "plan") -> Found:
    """Every cable of a generated fabric, named as in cabling.csv (``where``: ``cable <id>``)."""
    found = Found("plan", [source])
    for c in edge_columns(fabric):
        found.cables.extend(
            Cable(End(s, ap), End(t, zp), f"cable {k}")
            for k, s, t, ap, zp in zip(c["key"], c["source"], c["target"], c["a_port"], c["z_port"])
        )
    return found


def read(path: Path, sheet: Sheet | None = None, field_name: str = "as-built") -> Found:
    """A cabling CSV, streamed (InputError naming the line when malformed; a file that is no cabling CSV is refused unquoted)."""
    path = Path(path)
    found = Found("cabling", [str(path)])
    missing = Problem(field_name, f"file {str(path)!r} does not exist", "give a cabling CSV (topogen's cabling.csv, or one recorded on the floor)")
    with open_input(path, field_name, repr(str(path)), wiring.MAX_WIRING_BYTES, missing, what="cabling CSV") as fh:
        try:
            _rows(path, io.TextIOWrapper(fh, encoding="utf-8-sig", newline=""), found, sheet if sheet is not None else Sheet(), field_name)
        except UnicodeDecodeError:
            raise InputError([Problem(field_name, f"{str(path)!r} is not UTF-8 text: not a cabling CSV", "save the file as CSV UTF-8")]) from None
    return found


def _rows(path: Path, fh, found: Found, sheet: Sheet, field_name: str) -> None:
    where = path.name
    no = 0
    first = None
    for line in fh:  # leading comments (the provenance line of old files) and blank lines
        no += 1
        stripped = line.strip()
        if stripped.startswith("#"):
            m = wiring.HEADER_RE.match(stripped)
            if m:
                sheet.spec_sha = m.group("sha")
            m2 = wiring.ARCH_RE.search(stripped)
            if m2:
                sheet.arch = m2.group("arch")
            continue
        if stripped:
            first = line
            break
    if first is None:
        raise InputError([Problem(where, "no header row (the file is empty or holds only comments): not a cabling CSV", f"the first row names the columns: {', '.join(wiring.CABLING_REQUIRED)}")])
    try:
        header = [f.strip() for f in next(csv.reader([first], wiring._dialect(first)))]
    except csv.Error:
        header = []
    need = wiring.CABLING_REQUIRED
    missing = [c for c in need if c not in header]
    if len(missing) == len(need):
        raise InputError([Problem(field_name, f"{str(path)!r} is not a cabling CSV: its first row names none of the columns {', '.join(need)}", "give a cabling CSV (topogen's cabling.csv, or one recorded on the floor), or pass --format")])
    if missing:
        raise InputError([Problem(f"{where} line {no}", f"missing column(s) {', '.join(missing)}", f"required columns: {', '.join(need)}")])
    if sheet.spec_sha is None:
        build = wiring.build_of(path)
        if build is not None:
            sheet.spec_sha, sheet.arch = build[0], sheet.arch or build[1]
    col = {c: header.index(c) for c in header}
    ix = [col[c] for c in ("a_device", "a_port", "z_device", "z_port", "a_speed_gbps", "z_speed_gbps")]
    cid = col.get("cable")
    floor = [col[c] for c in FLOOR] if all(c in col for c in FLOOR) else None
    width = len(header)
    problems: list[Problem] = []
    bad = 0
    pos = [no]

    def lines():
        for line in fh:
            pos[0] += 1
            if line.strip() and not line.lstrip().startswith("#"):
                yield line

    def complain(at: int, text: str, name: str) -> None:
        nonlocal bad
        bad += 1
        if len(problems) < wiring.MAX_PROBLEMS:
            problems.append(Problem(f"{where} line {at:,}", f"{name} {show(text.strip())} is not a positive whole number", "speeds in Gb/s (e.g. 400)"))

    reader = csv.reader(lines(), wiring._dialect(first), strict=True)
    i0, i1, i2, i3, i4, i5 = ix
    keep = [i0, i1, i2, i3, i4, i5, *([cid] if cid is not None else []), *(floor or [])]
    ends_of, cells_of = operator.itemgetter(i0, i1, i2, i3), operator.itemgetter(*keep)
    first_of: dict[tuple[str, str, str, str], int] = {}  # the four cells as written -> the row kept (a repeat is only counted)
    kept: list[tuple[str, ...]] = []
    lines_of: list[int] = []
    repeats: list[tuple[int, int, str]] = []  # (row kept, line, cable cell) of the first repeats
    try:
        for f in reader:
            if len(f) != width:
                bad += 1
                if len(problems) < wiring.MAX_PROBLEMS:
                    problems.append(Problem(f"{where} line {pos[0]:,}", f"{len(f)} field(s), but the header has {width}", "give every row one value per column"))
                continue
            row = ends_of(f)
            at = first_of.get(row)
            if at is None:
                first_of[row] = len(kept)
                kept.append(cells_of(f))
                lines_of.append(pos[0])
                continue
            for x, name in ((f[i4], "a_speed_gbps"), (f[i5], "z_speed_gbps")):
                if not (x.isdecimal() and x.isascii() and len(x) <= 9 and int(x)):
                    complain(pos[0], x, name)
            found.duplicate_count += 1
            if len(repeats) < MAX_DUPLICATES:
                repeats.append((at, pos[0], f[cid].strip() if cid is not None else ""))
    except csv.Error as exc:
        raise InputError([Problem(f"{where} line {pos[0]:,}", f"not a CSV row: {exc}", "write comma-separated fields, one cable per line")]) from None
    del first_of
    cols = list(zip(*kept)) if kept else [()] * len(keep)
    del kept
    intern: dict[str, str] = {}

    def names(column) -> list[str]:
        return [intern.setdefault(x, x) for x in (c.strip() for c in column)]

    def speeds(column, name: str) -> list[int]:
        out = []
        for at, x in zip(lines_of, column):
            t = x.strip()
            if t.isdecimal() and t.isascii() and len(t) <= 9 and int(t):
                out.append(int(t))
            else:
                complain(at, x, name)
                out.append(0)
        return out

    a_end = list(map(End, names(cols[0]), names(cols[1])))
    z_end = list(map(End, names(cols[2]), names(cols[3])))
    spd = list(zip(speeds(cols[4], "a_speed_gbps"), speeds(cols[5], "z_speed_gbps")))
    if problems:
        problems.sort(key=lambda pr: int(pr.path.rsplit(" ", 1)[1].replace(",", "")))
        if bad > len(problems):
            problems.append(Problem(where, f"... and {bad - len(problems):,} more bad row(s)", "fix the rows above and run again"))
        raise InputError(problems)
    if cid is not None:
        wheres = [f"{where} line {at} (cable {c.strip()})" for at, c in zip(lines_of, cols[6])]
    else:
        wheres = [f"{where} line {at}" for at in lines_of]
    rows = list(map(Cable, a_end, z_end, wheres, spd))
    seen: dict = {}
    first_cable: list[Cable] = []
    dups: list[tuple[int, Cable, Cable]] = []  # (line, first record, its repeat)
    for c, line in zip(rows, lines_of):
        k = c.key()
        first = seen.get(k)
        if first is None:
            seen[k] = c
            found.cables.append(c)
            first_cable.append(c)
        else:  # the same cable written the other way round (or with other white space): a repeat too
            found.duplicate_count += 1
            dups.append((line, first, c))
            first_cable.append(first)
    for at, line, cell in repeats:
        first = first_cable[at]
        dups.append((line, first, Cable(first.a, first.z, f"{where} line {line}" + (f" (cable {cell})" if cid is not None else ""))))
    dups.sort(key=lambda d: d[0])
    found.duplicates = [(first, again) for _line, first, again in dups[:MAX_DUPLICATES]]
    if floor is not None:
        base = 6 + (cid is not None)
        places: dict[str, str] = {}
        for e, rack, u in (*zip(a_end, cols[base], cols[base + 1]), *zip(z_end, cols[base + 2], cols[base + 3])):
            if e.device not in places:
                places[e.device] = f"rack {rack.strip()} U{u.strip()}"
    if floor is not None:
        sheet.places = places
