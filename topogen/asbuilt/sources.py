"""Find and read the two sides of ``topogen diff``: the plan and what was found on the floor.

PLAN is a build directory (``out/<name>``: the architecture from ``--arch``,
the only one built, or the one that matches the floor best), an architecture
directory (``out/<name>/rail-only``) or a cabling CSV of a build (under any
name: a copy is known by its content, through the build's ``manifest.json``).
Its spec (for the design checks) comes from ``--spec`` (a spec, or the build's
``summary.json`` or ``manifest.json``) or from the build the file belongs to.
The plan's ibnetdiscover export, when the build wrote one, gives the node and
port GUIDs that :mod:`.identity` matches an ibnetdiscover reading by.

AS_BUILT is one or more files or directories of one format, told by
``--format`` or detected: ``.csv`` a cabling CSV, ``.json`` lldpctl output,
anything else ibnetdiscover output (checked by its content). A file that is
none of these is refused without quoting it.
"""

from __future__ import annotations

import csv

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from topogen.asbuilt import Cable, End, Found, cabling, ibnetdiscover, identity, lldp, wiring
from topogen.asbuilt import networks as asbuilt_networks
from topogen.asbuilt import ports as asbuilt_ports
from topogen.asbuilt.diff import Comparison, attribute, compare
from topogen.checks import validate as checks
from topogen.fabric.model import ARCHES
from topogen.spec import systems
from topogen.spec.cluster import Spec, build_spec, load_spec
from topogen.util.errors import InputError, Problem, show
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
    ids: dict[str, str] | None = None  # node GUID -> plan device, from the build's ibnetdiscover export
    port_ids: dict[str, End] | None = None  # port GUID -> plan GPU port
    networks: dict[tuple[End, End], str] | None = None  # cable key -> its network, when the build has networks-cabling.csv
    homes: dict[str, str] | None = None  # switch -> its own network (storage-leaf: storage; compute switches: compute)
    build: Callable[..., Any] | None = None  # the pipeline's build (topogen.pipeline.build), given by the caller: the networks' checks plan the spec's networks with it

    def locate(self, device: str) -> str:
        return (self.places or {}).get(device, "")


def _csvs(paths: list[Path]) -> Found:
    """Cabling CSVs as one reading; a cable in two files is kept once (records repeated within a file are duplicates)."""
    parts = [cabling.read(p) for p in paths]
    out = Found("cabling", [s for p in parts for s in p.sources])
    seen = set()
    for p in parts:
        out.duplicates.extend(p.duplicates[: cabling.MAX_DUPLICATES - len(out.duplicates)])
        out.duplicate_count += p.duplicate_count
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
    raise InputError([Problem("as-built", f"{str(path)!r} is not discovery output: no ibnetdiscover node line, and not .csv or .json", f"give ibnetdiscover output, lldpctl -f json files or a cabling CSV (--format {', '.join(FORMATS)})")])


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


def load_plan(ref: str, arch: str | None, spec_ref: str | None, found: Found | None = None, build: Callable[..., Any] | None = None) -> Plan:
    """The plan's cables (a build dir, an arch dir or a cabling CSV), its architecture and spec.

    ``build`` is the pipeline's build (the CLI passes :func:`topogen.pipeline.build`; this
    phase sits below the pipeline): without it the storage, in-band and OOB checks are skipped,
    with a note.
    """
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
    if path.suffix.lower() == ".json":  # a topology.json
        raw = wiring.read(path)
        plan_found = Found("plan", [str(path)], [Cable(End(a, ap), End(z, zp), f"{path.name} edges[{i}]", (sa, sz)) for a, ap, z, zp, i, sa, sz in zip(raw.a_dev, raw.a_port, raw.z_dev, raw.z_port, raw.loc, raw.a_speed, raw.z_speed)])
        sheet = cabling.Sheet(raw.arch, raw.spec_sha)
    else:
        sheet = cabling.Sheet()
        plan_found = cabling.read(path, sheet, "plan")
        raw = wiring.RawWiring(path, "cabling", sheet.arch, sheet.spec_sha, None, [], [], [], [], [], [], [], [])
    plan_found.kind = "plan"
    spec = _spec(raw, spec_ref)
    file_arch = raw.arch or (path.parent.name if path.parent.name in ARCHES else None)
    if arch and file_arch and arch != file_arch:
        raise InputError([Problem("arch", f"{path} is the {file_arch} plan, but --arch says {arch}", "drop --arch or give the other plan")])
    chosen = arch or file_arch or (spec.arch if spec is not None and spec.arch in ARCHES else None)
    plan = Plan(plan_found, path, chosen, spec, sheet.places, build=build)
    if path.name == "cabling.csv" and (path.parent / NETWORKS_CSV).is_file():
        _add_networks(plan, path.parent / NETWORKS_CSV)
    if found is not None and found.kind == "ibnetdiscover":
        plan.ids, plan.port_ids = _guids(path.parent / "ibnetdiscover")
    return plan


NETWORKS_CSV = "networks-cabling.csv"  # the build's storage, in-band and OOB cables (spec networks:)
NETWORK_TITLES = {"compute": "the compute fabric", "storage": "the storage network", "inband": "the in-band network", "oob": "the OOB network"}


def _add_networks(plan: Plan, path: Path) -> None:
    """The other networks' cables join the plan, each cable tagged with its network (the compute fabric's ``compute``).

    Also notes each switch's own network (``homes``: a storage leaf's is ``storage``, a
    compute leaf's ``compute``), which tells a network's own cables from those at its
    boundary (an OOB switch's uplink to an in-band leaf, a switch's management port).
    """
    sheet = cabling.Sheet()
    other = cabling.read(path, sheet, "plan")
    tags = {c.key(): "compute" for c in plan.found.cables}
    homes = {e.device: "compute" for c in plan.found.cables for e in (c.a, c.z) if not e.port.startswith("nic")}
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            tags[Cable(End(r["a_device"], r["a_port"]), End(r["z_device"], r["z_port"]), "").key()] = r["network"]
            for end in "az":
                net = r[f"{end}_role"].split("-", 1)[0]
                if net in NETWORK_TITLES:  # storage-leaf, inband-spine, oob-access
                    homes[r[f"{end}_device"]] = net
    plan.found.cables.extend(other.cables)
    plan.found.sources.append(str(path))
    plan.networks = tags
    plan.homes = homes
    if plan.places is not None and sheet.places:
        plan.places = {**sheet.places, **plan.places}


def _order(nets) -> list[str]:
    return sorted(nets, key=lambda x: (list(NETWORK_TITLES).index(x) if x in NETWORK_TITLES else 9, x))


def network_of(plan: Plan):
    """A function giving a found cable's ``(network, own cable)``: the network of the planned cable at its ends, else of the switch it reaches."""
    tags = plan.networks or {}
    homes = plan.homes or {}
    by_end: dict[End, str] = {e: net for key, net in tags.items() for e in key}

    def network(c: Cable) -> tuple[str | None, bool]:
        net = tags.get(c.key()) or by_end.get(c.a) or by_end.get(c.z)
        if net is None:
            for e in (c.a, c.z):
                net = net or homes.get(e.device)
        if net is None:
            return None, False
        own = all(homes.get(e.device, net) == net for e in (c.a, c.z))
        return net, own

    return network


def network_scope(plan: Plan, found: Found) -> tuple[Found, Found, set[str], list[str]]:
    """The networks ``found`` covers: the plan's and the found cables of those networks, the networks, and notes.

    A found cable is in the network of the planned cable at its ends (device and port), else
    of the switch it reaches. A network is covered when ``found`` holds one of its own
    cables: not one at its boundary, which joins a switch of another network (an OOB
    uplink to an in-band leaf, a switch's management port), so the in-band switches'
    LLDP, which sees their management ports, does not make the OOB network covered. Found
    cables of networks not covered are left out of the comparison, and said so.
    """
    tags = plan.networks or {}
    network = network_of(plan)
    nets = [network(c) for c in found.cables]
    touched = {net for net, own in nets if own}
    if not touched:
        return plan.found, found, set(tags.values()) or {"compute"}, []
    keep = [c for c in plan.found.cables if tags.get(c.key(), "compute") in touched]
    left: dict[str, int] = {}
    for c in plan.found.cables:
        net = tags.get(c.key(), "compute")
        if net not in touched:
            left[net] = left.get(net, 0) + 1
    kept = [c for c, (net, _) in zip(found.cables, nets) if net is None or net in touched]
    notes = []
    if left:
        parts = ", ".join(f"{NETWORK_TITLES.get(k, k)} ({left[k]:,} planned cables)" for k in _order(left))
        notes.append(f"not covered by the as-built input: {parts}; compared only {' and '.join(NETWORK_TITLES.get(k, k) for k in _order(touched))}: give their discovery output (ibnetdiscover for InfiniBand, lldpctl -f json for Ethernet) to compare them")
    dropped = len(found.cables) - len(kept)
    if dropped:
        notes.append(f"{dropped:,} found cable(s) of networks not covered (at their boundary: OOB uplinks, switches' management ports) were not compared")
    return Found(plan.found.kind, plan.found.sources, keep), replace(found, cables=kept), touched, notes


def _guids(folder: Path) -> tuple[dict[str, str], dict[str, End]]:
    """Node GUID -> device and port GUID -> GPU port of the plan's ibnetdiscover export (empty without one)."""
    topo = sorted(folder.glob("*.topo")) if folder.is_dir() else []
    if not topo:
        return {}, {}
    try:
        exported = ibnetdiscover.read(topo)
    except InputError:
        return {}, {}  # an export that does not read is no evidence
    return {v: k for k, v in exported.ids.items()}, {v: k for k, v in exported.port_ids.items()}


def _best(build: Path, arches: list[str], found: Found | None) -> str:
    """The architecture whose plan shares the most cables with what was found."""
    if found is None:
        raise InputError([Problem("arch", f"{build} holds {' and '.join(arches)} plans", "pass --arch")])
    keys = {c.key() for c in found.cables}
    score = {a: len(keys & {c.key() for c in cabling.read(build / a / "cabling.csv").cables}) for a in arches}
    return max(arches, key=lambda a: (score[a], -arches.index(a)))


def _spec(raw: wiring.RawWiring, spec_ref: str | None) -> Spec | None:
    if spec_ref is not None:
        built = _build_spec(Path(spec_ref)) if spec_ref.lower().endswith(".json") else None
        return built if built is not None else load_spec(spec_ref)
    claimed = wiring.claimed_spec(raw)
    if claimed is None:
        return None
    data, _where = claimed
    return build_spec(data, default_name=str(data.get("name") or "cluster"))


def _build_spec(path: Path) -> Spec | None:
    """The spec of a build's ``summary.json``, or of the ``manifest.json`` beside its summary (None for any other JSON)."""
    data = wiring.beside(path)
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("spec"), dict) and "spec_sha256" in data:
        spec = data["spec"]
    elif isinstance(data.get("files"), list) and isinstance(data.get("spec_sha256"), str):
        summary = wiring.beside(path.parent / "summary.json")
        if not (isinstance(summary, dict) and summary.get("spec_sha256") == data["spec_sha256"] and isinstance(summary.get("spec"), dict)):
            raise InputError([Problem("--spec", f"{show(str(path))} is a build's manifest, but no summary.json of the same spec is beside it", "give the build's summary.json, or its spec (YAML or preset)")])
        spec = summary["spec"]
    else:
        return None
    return build_spec(dict(spec), default_name=str(spec.get("name") or "cluster"))


def found_wiring(found: Found, arch: str, ids: dict | None = None) -> wiring.RawWiring:
    """The cables found, as a wiring to read against a spec (cable ids: 1, 2... in reading order).

    Port speeds are read from a cabling CSV; an ibnetdiscover file gives a link rate, not
    port speeds (and ibsim brings every link up at 4xSDR), so its cables take their link
    tier's speed in the spec (0: not read).
    """
    ids = ids if ids is not None else {c.key(): i for i, c in enumerate(found.cables, 1)}
    rates = found.kind == "ibnetdiscover"
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
        [0 if rates else c.speeds[0] for c in found.cables],
        [0 if rates else c.speeds[1] for c in found.cables],
        list(ids.values()),
        list(ids.values()),
        loc_fmt="found #{}",
    )


def diff(plan: Plan, found: Found, names: identity.Names | None = None, adapter_map: dict[int, int] | None = None) -> Comparison:
    """Match devices, compare, then run the design checks on the as-built wiring when the spec is known and all of it was read."""
    per_node = getattr(plan.spec, "gpus_per_node", None) if plan.spec is not None else None
    if plan.networks is None:  # a plan by index (p<n>: a growth stage file, an old build) names its ports natively too
        plan = replace(plan, found=asbuilt_ports.in_plan_names(plan.found, plan.spec, plan.arch, set()))
    found = asbuilt_ports.in_plan_names(found, plan.spec, plan.arch, {e.device for c in plan.found.cables for e in (c.a, c.z)})  # [3], Ethernet8, p3: the plan's port names
    system = systems.for_spec(plan.spec) if plan.spec is not None else None
    matched = identity.match(plan.found, found, names, plan.ids, plan.port_ids, adapter_map, per_node, system.name if system is not None else None, identity.Hosts(plan.spec))
    found = matched.found
    scoped, found, touched, scope_notes = network_scope(plan, found) if plan.networks else (plan.found, found, {"compute"}, [])
    cmp = compare(scoped, found, matched.covered)
    cmp.renames = matched.renames
    cmp.choices = matched.choices
    cmp.matched = matched
    cmp.notes = matched.notes + scope_notes + cmp.notes
    if touched != {"compute"}:
        if plan.spec is None or plan.arch is None or plan.spec.networks is None:
            cmp.notes.append("networks' checks skipped: the plan's spec is unknown (give --spec, or the plan's build directory)")
            return cmp
        if plan.build is None:
            cmp.notes.append("networks' checks skipped: no pipeline was given to plan the spec's networks")
            return cmp
        _check_networks(plan, found, touched, cmp)
        if "compute" in touched:
            cmp.notes.append("design checks of the compute fabric skipped: the as-built input also covers other networks (give the compute fabric's discovery output alone to check it)")
        return cmp
    if plan.spec is None or plan.arch is None:
        cmp.notes.append("design checks skipped: the plan's spec is unknown (give --spec, or the plan's build directory)")
        return cmp
    if cmp.partial:
        cmp.notes.append("design checks skipped: the as-built input covers only part of the plan")
        return cmp
    ids = {c.key(): i for i, c in enumerate(found.cables, 1)}
    w = wiring.to_fabric(found_wiring(found, plan.arch, ids), plan.spec, plan.arch)
    report = checks.validate(w.fabric, labels=w.labels, pre=w.findings, source=" + ".join(found.sources))
    attribute(cmp, report, ids)
    return cmp


def _check_networks(plan: Plan, found: Found, touched: set[str], cmp: Comparison) -> None:
    """The networks' checks on the as-built storage, in-band and OOB wiring: the found cables of the networks covered, the plan's of the others.

    A deviation whose found cable (or port) a finding names becomes an error, as the
    compute fabric's design checks make it (:func:`~topogen.asbuilt.diff.attribute`).
    """
    network = network_of(plan)
    tags = plan.networks or {}
    cables = [c for c in found.cables if network(c)[0] not in (None, "compute")]
    cables += [c for c in plan.found.cables if tags.get(c.key(), "compute") not in touched | {"compute"}]  # networks not covered: as planned
    planned, required = asbuilt_networks.planned(plan.spec, plan.arch, plan.build)
    built, ids, bad = asbuilt_networks.as_built(planned, cables, asbuilt_ports.fabric_port(plan.spec, plan.arch))  # a compute switch's ports by its model's names
    findings = bad + asbuilt_networks.check(planned, built, required)
    attribute(cmp, NetworkReport(findings, len(cables)), ids)


@dataclass
class NetworkReport:
    """The networks' findings on the as-built wiring, shaped as the design checks' report the diff renders."""

    findings: list
    cables: int

    def key_figures(self) -> dict:
        errors = sum(1 for f in self.findings if f.severity == "error")
        return {"scope": "storage, in-band and OOB networks", "valid": not errors, "errors": errors, "warnings": sum(1 for f in self.findings if f.severity == "warning"), "cables": self.cables}
