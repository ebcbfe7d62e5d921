"""Find and read the two sides of ``topogen diff``: the plan and what was found on the floor.

PLAN is a build directory (``out/<name>``: the architecture from ``--arch``,
the only one built, or the one that matches the floor best), an architecture
directory (``out/<name>/rail-only``) or a ``cabling.csv``. Its spec (for the
design checks) comes from ``--spec`` or from the build the file belongs to.

AS_BUILT is one or more files or directories of one format, told by
``--format`` or detected: ``.csv`` a cabling CSV, ``.json`` lldpctl output,
anything else ibnetdiscover output (checked by its content).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from topogen.asbuilt import Found, cabling, ibnetdiscover, lldp, wiring
from topogen.asbuilt.diff import Comparison, attribute, compare
from topogen.checks import validate as checks
from topogen.fabric.model import ARCHES
from topogen.spec.cluster import Spec, build_spec, load_spec
from topogen.util.errors import InputError, Problem
from topogen.util.inputs import MAX_ASBUILT_BYTES, open_input

FORMATS = ("ibnetdiscover", "lldp", "cabling")
READERS = {"ibnetdiscover": ibnetdiscover.read, "lldp": lldp.read, "cabling": lambda paths: _csvs(paths)}


@dataclass
class Plan:
    """The planned cables of one architecture, the file they came from, the spec (when known) and where devices stand."""

    found: Found
    path: Path
    arch: str | None
    spec: Spec | None
    places: dict[str, str] | None = None  # device -> "rack A01 U12", from cabling.csv's floor columns

    def locate(self, device: str) -> str:
        return (self.places or {}).get(device, "")


def places(path: Path) -> dict[str, str] | None:
    """Device -> ``rack <rack> U<u>`` from a cabling.csv with the floor columns (None without them)."""
    import csv

    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.reader(line for line in fh if not line.startswith("#"))
        header = next(rows, [])
        need = ("a_device", "a_rack", "a_u", "z_device", "z_rack", "z_u")
        if not all(c in header for c in need):
            return None
        ix = [header.index(c) for c in need]
        out: dict[str, str] = {}
        for r in rows:
            if len(r) == len(header):
                out[r[ix[0]]] = f"rack {r[ix[1]]} U{r[ix[2]]}"
                out[r[ix[3]]] = f"rack {r[ix[4]]} U{r[ix[5]]}"
        return out


def _csvs(paths: list[Path]) -> Found:
    parts = [cabling.read(p) for p in paths]
    out = Found("cabling", [s for p in parts for s in p.sources])
    seen = set()
    for p in parts:
        for c in p.cables:
            if c.key() not in seen:
                seen.add(c.key())
                out.cables.append(c)
    return out


def _files(refs: list[str]) -> list[Path]:
    out: list[Path] = []
    problems = []
    for ref in refs:
        p = Path(ref)
        if p.is_dir():
            inner = sorted(q for q in p.iterdir() if q.is_file() and not q.name.startswith("."))
            if not inner:
                problems.append(Problem("as-built", f"directory {ref!r} holds no files", "give ibnetdiscover output, lldpctl JSON files or a cabling CSV"))
            out.extend(inner)
        elif p.is_file():
            out.append(p)
        else:
            problems.append(Problem("as-built", f"{ref!r} does not exist", "give ibnetdiscover output, lldpctl -f json files (one per device) or a cabling CSV"))
    if problems:
        raise InputError(problems)
    return out


def detect(path: Path) -> str:
    """The format of one as-built file, by extension, then by content."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "cabling"
    if suffix == ".json":
        return "lldp"
    missing = Problem("as-built", f"file {str(path)!r} does not exist", "give a readable file")
    with open_input(path, "as-built", repr(str(path)), MAX_ASBUILT_BYTES, missing, what="as-built file") as fh:
        head = fh.read(65536).decode("utf-8", errors="replace")
    if ibnetdiscover.looks_like(head):
        return "ibnetdiscover"
    raise InputError([Problem("as-built", f"cannot tell the format of {str(path)!r}: no ibnetdiscover node line, and not .csv or .json", f"pass --format ({', '.join(FORMATS)})")])


def read_found(refs: list[str], fmt: str | None = None) -> Found:
    """Read every as-built file (one format); InputError when formats mix or a file is malformed."""
    files = _files(refs)
    if fmt is None or fmt == "auto":
        kinds = {p: detect(p) for p in files}
        distinct = sorted(set(kinds.values()))
        if len(distinct) > 1:
            shown = ", ".join(f"{p.name} ({k})" for p, k in list(kinds.items())[:6])
            raise InputError([Problem("as-built", f"files of several formats given: {shown}", "give files of one format, or pass --format")])
        fmt = distinct[0]
    return READERS[fmt](files)


def load_plan(ref: str, arch: str | None, spec_ref: str | None, found: Found | None = None) -> Plan:
    """The plan's cables (a build dir, an arch dir or a cabling.csv), its architecture and spec."""
    p = Path(ref)
    if arch is not None and arch not in ARCHES:
        raise InputError([Problem("arch", f"unknown architecture {arch!r}", f"use {' or '.join(ARCHES)}")])
    if p.is_dir():
        if (p / "cabling.csv").is_file():
            path = p / "cabling.csv"
        else:
            built = [a for a in ARCHES if (p / a / "cabling.csv").is_file()]
            if not built:
                raise InputError([Problem("plan", f"{ref!r} holds no cabling.csv (nor <arch>/cabling.csv)", "give a build directory (out/<name>), an architecture directory or a cabling.csv")])
            if arch is not None and arch not in built:
                raise InputError([Problem("arch", f"{ref!r} holds no {arch} build (it has {', '.join(built)})", f"use --arch {' or --arch '.join(built)}")])
            choice = arch or (built[0] if len(built) == 1 else _best(p, built, found))
            path = p / choice / "cabling.csv"
    elif p.is_file():
        path = p
    else:
        raise InputError([Problem("plan", f"{ref!r} does not exist", "give a build directory (out/<name>), an architecture directory or a cabling.csv")])
    raw = wiring.read(path)
    plan_found = cabling.read(path)
    plan_found.kind = "plan"
    spec = _spec(raw, spec_ref)
    file_arch = raw.arch or (path.parent.name if path.parent.name in ARCHES else None)
    if arch and file_arch and arch != file_arch:
        raise InputError([Problem("arch", f"{path} is the {file_arch} plan, but --arch says {arch}", "drop --arch or give the other plan")])
    chosen = arch or file_arch or (spec.arch if spec is not None and spec.arch in ARCHES else None)
    return Plan(plan_found, path, chosen, spec, places(path))


def _best(build: Path, arches: list[str], found: Found | None) -> str:
    """The architecture whose plan shares the most cables with what was found."""
    if found is None:
        raise InputError([Problem("arch", f"{build} holds {' and '.join(arches)} plans", "pass --arch")])
    keys = {c.key() for c in found.cables}
    score = {a: len(keys & {c.key() for c in cabling.read(build / a / "cabling.csv").cables}) for a in arches}
    return max(arches, key=lambda a: (score[a], -arches.index(a)))


def _spec(raw: wiring.RawWiring, spec_ref: str | None) -> Spec | None:
    if spec_ref is not None:
        return load_spec(spec_ref)
    claimed = wiring.claimed_spec(raw)
    if claimed is None:
        return None
    data, _where = claimed
    return build_spec(data, default_name=str(data.get("name") or "cluster"))


def found_wiring(found: Found, arch: str, ids: dict | None = None) -> wiring.RawWiring:
    """The cables found, as a wiring to read against a spec (cable ids: 1, 2... in reading order)."""
    ids = ids if ids is not None else {c.key(): i for i, c in enumerate(found.cables, 1)}
    return wiring.RawWiring(
        Path(found.sources[0]) if found.sources else Path("as-built"),
        "as-built",
        arch,
        None,
        None,
        [c.a.device for c in found.cables],
        [c.a.port for c in found.cables],
        [c.z.device for c in found.cables],
        [c.z.port for c in found.cables],
        [0] * len(found.cables),  # no speed read: each cable at its link tier's speed in the spec
        [0] * len(found.cables),
        list(ids.values()),
        list(ids.values()),
        loc_fmt="found #{}",
    )


def diff(plan: Plan, found: Found) -> Comparison:
    """Compare, then run the design checks on the as-built wiring when the spec is known."""
    cmp = compare(plan.found, found)
    if plan.spec is None or plan.arch is None:
        cmp.notes.append("design checks skipped: the plan's spec is unknown (give --spec, or the plan's build directory)")
        return cmp
    ids = {c.key(): i for i, c in enumerate(found.cables, 1)}
    raw = found_wiring(found, plan.arch, ids)
    w = wiring.to_fabric(raw, plan.spec, plan.arch)
    report = checks.validate(w.fabric, labels=w.labels, pre=w.findings, source=" + ".join(found.sources))
    attribute(cmp, report, ids)
    return cmp
