"""Where the fabric to simulate comes from: a spec, a build, a cabling.csv, or what was found on the floor.

* a spec (preset name, YAML path, or the spec flags): the generated wiring of
  each architecture it builds;
* a build directory (``out/<name>``): every ``<arch>/cabling.csv`` in it;
  an architecture directory or a ``cabling.csv``: that one wiring;
* with ``as_built`` files (ibnetdiscover output, lldpctl JSON, a cabling CSV
  from the floor, read by ``topogen diff``'s readers): the cables found,
  against the plan given as the first argument (its spec and architecture).

A wiring read from a file keeps what the reader could place; the reader's
findings (unknown devices, bad ports) are reported as notes, as ``topogen
validate`` would list them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from topogen.fabric import clos
from topogen.asbuilt import wiring
from topogen.asbuilt import sources
from topogen.checks.validate import structure_errors
from topogen.util.errors import InputError, Problem
from topogen.fabric.model import ARCHES, Fabric
from topogen.spec.cluster import Spec, build_spec, load_spec


@dataclass
class Source:
    """The fabrics to simulate (one per architecture), the spec they implement and notes about reading them."""

    spec: Spec
    fabrics: list[Fabric]
    origin: str
    notes: list[str] = field(default_factory=list)


def from_spec(spec: Spec) -> Source:
    """The generated wiring of every architecture the spec builds."""
    return Source(spec, [clos.generate(spec, a) for a in spec.arches], f"spec {spec.name} (generated wiring)")


def is_wiring_ref(ref: str | None) -> bool:
    """A directory or a .csv/.json file: a wiring to read, not a spec."""
    return ref is not None and (Path(ref).is_dir() or wiring.is_wiring_path(ref))


def from_wiring(ref: str, arch: str | None, spec_ref: str | None) -> Source:
    """Each wiring of a build directory, or one architecture directory / cabling.csv / topology.json."""
    p = Path(ref)
    if arch is not None and arch not in ARCHES:
        raise InputError([Problem("arch", f"unknown architecture {arch!r}", f"use {' or '.join(ARCHES)}")])
    if p.is_dir():
        if (p / "cabling.csv").is_file():
            paths = [p / "cabling.csv"]
        else:
            paths = [p / a / "cabling.csv" for a in ARCHES if (p / a / "cabling.csv").is_file() and arch in (None, a)]
            if not paths:
                raise InputError([Problem("spec", f"{ref!r} holds no cabling.csv (nor <arch>/cabling.csv{' for ' + arch if arch else ''})", "give a spec, a build directory (out/<name>), an architecture directory or a cabling.csv")])
    else:
        paths = [p]
    fabrics, notes, spec = [], [], None
    for path in paths:
        raw = wiring.read(path)
        spec = _spec(raw, spec_ref)
        w = wiring.to_fabric(raw, spec, wiring.choose_arch(raw, arch if len(paths) == 1 else None, spec))
        _refuse_broken(path, w)
        fabrics.append(w.fabric)
        notes += _findings(path, w.findings)
    return Source(spec, fabrics, ", ".join(str(x) for x in paths), notes)


def from_as_built(plan_ref: str, found_refs: list[str], fmt: str, arch: str | None, spec_ref: str | None) -> Source:
    """The cables found on the floor, read against the plan's spec and architecture."""
    found = sources.read_found(found_refs, fmt)
    plan = sources.load_plan(plan_ref, arch, spec_ref, found)
    if plan.spec is None or plan.arch is None:
        raise InputError([Problem("spec", f"the spec of the plan {plan_ref!r} is unknown", "give the plan's build directory or --spec")])
    w = wiring.to_fabric(sources.found_wiring(found, plan.arch), plan.spec, plan.arch)
    notes = [f"as built: {len(found.cables):,} cable(s) found in {', '.join(found.sources[:3])}{' ...' if len(found.sources) > 3 else ''}, against the plan {plan.path}"]
    return Source(plan.spec, [w.fabric], " + ".join(found.sources), notes + found.notes + _findings(Path(found.sources[0]) if found.sources else Path("as-built"), w.findings))


def _spec(raw: wiring.RawWiring, spec_ref: str | None) -> Spec:
    if spec_ref is not None:
        return load_spec(spec_ref)
    claimed = wiring.claimed_spec(raw)
    if claimed is None:
        raise InputError([Problem("spec", f"{raw.path.name} does not say which spec it implements", "give it with --spec (a YAML file or preset name)")])
    data, _where = claimed
    return build_spec(data, default_name=str(data.get("name") or "cluster"))


def _refuse_broken(path: Path, w) -> None:
    """A wiring with a cable the reader could not place (an unknown device, a bad port name), a port used twice, a self-loop, a cable between non-adjacent tiers...: refused (exit 2), its findings listed."""
    bad = [f for f in w.findings if f.severity == "error"] + structure_errors(w.fabric, labels=w.labels, source=str(path), expected=w.expected)
    bad = list({(f.check, f.message): f for f in bad}.values())  # the reader's and the checks' may name one cable alike
    if bad:
        shown = [Problem(str(path), f"{f.check}: {f.message}", "") for f in bad[:10]]
        more = [Problem(str(path), f"... and {len(bad) - 10} more such error(s)", "")] if len(bad) > 10 else []
        raise InputError(shown + more + [Problem(str(path), "is no wiring to simulate: the errors above break the network itself", f"fix the cables (topogen validate {path} lists every finding), then simulate")])


def _findings(path: Path, findings: list) -> list[str]:
    errors = [f for f in findings if f.severity == "error"]
    if not errors:
        return []
    return [f"{path.name}: {len(errors)} cable(s) or device(s) could not be placed and are left out (first: {errors[0].message}); run topogen validate for the list"]
