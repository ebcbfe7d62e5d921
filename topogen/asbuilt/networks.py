"""The other networks as built: cables read from a file (or found on the floor) put back into the model, and checked.

``topogen validate <arch>/networks-cabling.csv`` and ``topogen diff`` of the storage,
in-band and OOB networks use this module: :func:`as_built` turns cables named as
``networks-cabling.csv`` names them (``hb000:stor0 -- stor-leaf-su00-p0:p1``) into a
:class:`~topogen.fabric.networks.Networks` that keeps the plan's switches, devices and
radixes but holds the cables as read; :func:`check` runs the networks' checks
(:mod:`topogen.checks.networks`) on it and compares its cables, network by network and role
by role, with the design's (``networks.as-built``).

Each read cable takes its network and role from the planned cable that shares its managed
end (a node's, server's or device's port, or a lower switch's port), else its switch end:
a storage cable moved from its storage leaf to a compute leaf stays a storage node cable,
and the checks then see a storage cable on the compute fabric. A cable with no planned
end takes the network of the switch it reaches. Ends are oriented as the plan's (the
managed end ``a``). Device names are looked up in the plan's; ports are parsed from their
names (``p<n>``, ``stor<i>``, ``inb<i>``, ``bmc``/``bmc<i>``, ``mgmt0``, ``ha0``); a
row naming anything else is reported, not guessed.
"""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from topogen.asbuilt import Cable, End, cabling, wiring
from topogen.checks.findings import Finding
from topogen.checks.networks import validate_networks
from topogen.fabric import networks as nw
from topogen.util.errors import InputError, Problem
from topogen.util.inputs import open_input

MAX_HEADER_BYTES = 1 << 16
_PORT = re.compile(r"(p|stor|inb|bmc|mgmt|ha)([0-9]{0,6})", re.ASCII)
_SPLIT = re.compile(r"p([0-9]{1,4})s([0-9]{1,2})", re.ASCII)  # a collapsed core's split cage


def is_networks_csv(path: Path) -> bool:
    """True when ``path`` is a CSV whose header names the ``network`` and ``role`` columns (``networks-cabling.csv``)."""
    path = Path(path)
    if path.suffix.lower() != ".csv" or not path.is_file():
        return False
    missing = Problem("wiring", f"file {str(path)!r} does not exist", "")
    with open_input(path, "wiring", repr(str(path)), wiring.MAX_WIRING_BYTES, missing, what="wiring file") as fh:
        head = fh.read(MAX_HEADER_BYTES).decode("utf-8-sig", "replace")
    for line in head.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            cols = {c.strip() for c in next(csv.reader([line]), [])}
            return {"network", "role", "a_device", "z_device"} <= cols
    return False


def _lookup(n: nw.Networks) -> dict[str, tuple[int, int]]:
    """Device name -> ``(kind, idx)`` of every device the plan's networks name."""
    out: dict[str, tuple[int, int]] = {}
    for kind in range(len(nw.KIND_NAMES)):
        for i, name in enumerate(n.names(kind, n.compute_names)):
            out.setdefault(name, (kind, i))
    return out


def _port(kind: int, text: str, per_cage: int = 1) -> tuple[int, int] | None:
    """``(port number, network it implies or -1)`` of a port name at a device of ``kind``; None when it names no port there."""
    split = _SPLIT.fullmatch(text)
    if split is not None and kind == nw.SWITCH and int(split.group(1)) >= 1 and int(split.group(2)) < per_cage:
        return (int(split.group(1)) - 1) * per_cage + int(split.group(2)) + 1, nw.INBAND
    m = _PORT.fullmatch(text)
    if m is None:
        return None
    stem, num = m.group(1), m.group(2)
    if kind in (nw.SWITCH, nw.FABRIC, nw.UFM, nw.PDU, nw.RACKDEV) and stem == "mgmt" and num == "0":
        return 0, nw.OOB
    if kind in (nw.SWITCH, nw.FABRIC) and stem == "p" and num and int(num) >= 1:  # switch ports count from 1
        return int(num), -1
    if kind in (nw.TARGETS, nw.NFS, nw.CORE, nw.UFM) and stem == "p" and num:  # a device's own ports as the plan numbers them
        return int(num), -1
    if kind in (nw.NODE, nw.MGMT):
        if stem == "bmc":
            return (int(num) if num else 0), nw.OOB
        if stem in ("stor", "inb") and num:
            return int(num), nw.STORAGE if stem == "stor" else nw.INBAND
    if kind == nw.UFM and stem == "ha" and num == "0":
        return 1, nw.OOB
    return None


def as_built(plan: nw.Networks, cables: list[Cable], fabric_port: Callable[[str, str], int | None] | None = None) -> tuple[nw.Networks, dict[tuple[End, End], int], list[Finding]]:
    """The plan's networks holding ``cables`` instead of its own: the model, each cable's row id (1-based), and the rows it could not place.

    ``fabric_port``: the 1-based port of a compute switch named by its model's own name
    (:func:`topogen.asbuilt.ports.fabric_port`); without it a compute switch's ports are ``p<n>``.
    """
    pv = _planned_ends(plan)
    names = _lookup(plan)
    cols: dict[str, list[int]] = {c: [] for c in nw.CABLE_COLUMNS}
    ids: dict[tuple[End, End], int] = {}
    bad: list[Finding] = []
    net_of = [s.network for s in plan.switches]
    for c in cables:
        ends = []
        for e in (c.a, c.z):
            kd = names.get(e.device)
            n = fabric_port(e.device, e.port) if kd is not None and kd[0] == nw.FABRIC and fabric_port is not None else None
            pt = (n, -1) if n else _port(kd[0], e.port, plan.plan.inband_per_cage) if kd is not None else None  # mgmt0 and p<n> as the networks name them
            ends.append(None if kd is None or pt is None else (kd[0], kd[1], pt[0], pt[1]))
        if None in ends:
            which = [str(e) for e, x in zip((c.a, c.z), ends) if x is None]
            bad.append(Finding("networks.as-built", "error", tuple(e.split(":")[0] for e in which), tuple(which), f"{c.where}: {' and '.join(which)} is no device port of the design's networks", "name devices and ports as networks-cabling.csv does (p<n> on switches, stor<i>, inb<i>, bmc on nodes, mgmt0)"))
            continue
        a, z = ends
        row = pv.get(c.a) if c.a in pv else pv.get(c.z)
        if row is not None:
            net, role, a_is_a = row[0], row[1], (row[2] == c.a) if c.a in pv else (row[2] != c.z)
        else:  # no planned end: the network of the switch it reaches, a trunk between two switches
            sw = next((x for x in (z, a) if x[0] == nw.SWITCH), None)
            net = net_of[sw[1]] if sw is not None else next((x[3] for x in (a, z) if x[3] >= 0), nw.OOB)
            role = nw.R_UP if a[0] == z[0] == nw.SWITCH else nw.R_MPORT if net == nw.OOB else nw.R_NODE
            a_is_a = z[0] == nw.SWITCH
        if not a_is_a:
            a, z = z, a
        speed = c.speeds[0] or c.speeds[1] or (row[3] if row is not None else 0)
        for col, v in zip(nw.CABLE_COLUMNS, (net, role, a[0], a[1], a[2], z[0], z[1], z[2], speed)):
            cols[col].append(v)
        ids[c.key()] = len(cols["net"])
    table = nw.CableTable(**{k: np.asarray(v, nw._DT[k]) for k, v in cols.items()})
    return replace(plan, cables=table, notes=[]), ids, bad


def _planned_ends(n: nw.Networks) -> dict[End, tuple[int, int, End, int]]:
    """Every planned cable end -> ``(network, role, its a end, Gb/s)``; an end on two cables keeps its managed (``a``) one."""
    c = n.cables
    v_a, v_z = _ends(n, "a"), _ends(n, "z")
    out: dict[End, tuple[int, int, End, int]] = {}
    for i in range(len(c)):
        t = (int(c.net[i]), int(c.role[i]), v_a[i], int(c.speed[i]))
        out[v_a[i]] = t
        out.setdefault(v_z[i], t)
    return out


def _ends(n: nw.Networks, end: str) -> list[End]:
    c = n.cables
    kind, idx, port = getattr(c, f"{end}_kind"), getattr(c, f"{end}_idx"), getattr(c, f"{end}_port")
    names = {k: n.names(k, n.compute_names) for k in np.unique(kind).tolist()}
    return [End(names[k][i], n.port_name(k, p, net, r, i if k == nw.SWITCH else -1)) for k, i, p, net, r in zip(kind.tolist(), idx.tolist(), port.tolist(), c.net.tolist(), c.role.tolist())]


def check(plan: nw.Networks, built: nw.Networks, required: dict | None = None) -> list[Finding]:
    """The networks' checks on ``built`` (:func:`as_built`), and its cables per network and role against ``plan``'s."""
    out = validate_networks(built, required)
    want, got = plan.counts(), built.counts()
    for net in nw.NETWORK_NAMES:
        w, g = want[net]["cables"], got[net]["cables"]
        for role in sorted(set(w) | set(g), key=lambda r: nw.ROLE_NAMES.index(r)):
            if w.get(role, 0) != g.get(role, 0):
                out.append(Finding("networks.as-built", "error", (), (), f"{g.get(role, 0):,} {net} {role} cable(s), the design has {w.get(role, 0):,}", "cable what the design plans (topogen diff names each missing or extra cable)"))
    return out


def planned(spec, arch: str, build):
    """The spec's networks for ``arch`` as ``topogen build`` plans them, and the storage bandwidth they must carry.

    ``build`` is the pipeline's build (:func:`topogen.pipeline.build`, given by the caller, since this
    phase sits below the pipeline): the networks need the compute fabric, its layout and the catalog.
    """
    ctx = build(replace(spec, arch=arch))
    return ctx.networks[arch], ctx.storage_required


def validate_file(path: Path, spec, arch: str, build) -> tuple[list[Finding], int]:
    """``topogen validate`` of a ``networks-cabling.csv``: the networks' checks on its wiring; ``(findings, cables read)``.

    InputError (exit 2) when the spec has no ``networks:`` section or the file is no cabling CSV.
    """
    if spec.networks is None:
        raise InputError([Problem("spec", f"{Path(path).name} holds storage, in-band and OOB cables, but spec {spec.name!r} has no networks: section", "give the spec the file was built from with --spec")])
    plan, required = planned(spec, arch, build)
    found = cabling.read(Path(path))
    built, _ids, bad = as_built(plan, found.cables)
    out = bad + check(plan, built, required)
    if found.duplicate_count:
        out.append(Finding("networks.as-built", "error", (), (), f"{found.duplicate_count:,} row(s) repeat a cable already listed", "list each cable once"))
    return out, len(found.cables)
