"""The storage, in-band and OOB networks grown around their installed cables.

The installed phase's ``<arch>/networks-cabling.csv`` (as planned or edited on the
floor) is laid against the new spec's networks (:func:`topogen.pipeline.build` plans
them) the way :mod:`.rewire` lays the compute fabric, by device identity (a name's
numbers without their zero padding):

1. **keep**: an installed cable stays, both plugs in place, while the new design still
   joins its two devices with a cable of that network and role, and both its ports
   serve that network and role in the new design (a storage leaf's uplink port is
   still an uplink, a node's ``stor0`` still its storage port);
2. **add**: the new design's other cables, each end on the design's own port when no
   kept cable holds it, else on the lowest free port the design gives that network and
   role on that device (so a device's ports of each role stay those of the design);
3. **move**: an installed cable not kept and a new cable sharing one end are one cable
   re-plugged at its other end (a node's storage cable whose leaf changes, a leaf's
   uplink to another spine); the installed cables left are **removed**.

Stages: stage 0 installs every new cable whose two ports are free on the installed
floor (nothing running is touched); stage 1 unplugs the moves and removals, re-plugs
the moves and installs the cables that needed their ports. The networks carry no
training traffic, so no bandwidth is simulated; the final wiring gets the networks'
checks (:func:`topogen.asbuilt.networks.check`) against the new spec's plan.
"""

from __future__ import annotations

import ipaddress
import csv
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, NamedTuple

import numpy as np

from topogen.asbuilt import Cable, End, cabling
from topogen.asbuilt import networks as asbuilt_networks
from topogen.config import netaddr
from topogen.config.addressing import ip_text
from topogen.exports.installers.network_cabling import COLUMNS as NET_COLUMNS
from topogen.exports.netbox import dcim as nb_dcim
from topogen.exports.netbox import networks as nb_networks
from topogen.exports.network_view import NetworkView
from topogen.fabric import networks as nw
from topogen.exports.installers.network_cabling import generate_rows
from topogen.growth.phase import bad_row, expansion_rows
from topogen.growth.rewire import _natural, _pair_moves, identity
from topogen.layout.networks import FLOOR_COLUMNS
from topogen.spec.addressing import DEFAULT as ADDRESSING_DEFAULT
from topogen.util.errors import InputError, Problem, show
from topogen.util.text import csv_line

ROW_COLUMNS = NET_COLUMNS + FLOOR_COLUMNS
DELTA_COLUMNS = ("stage", "action", "sheet", *ROW_COLUMNS, "from_device", "from_port")
NETWORKS = ("storage", "inband", "oob")
SWITCH_ROLE = re.compile(r"(storage|inband|oob)-")


def own_rack(role: str) -> bool:
    """Does a device of this role stand in the networks' own racks (a switch of theirs, a management server, a fabric manager)?"""
    return bool(SWITCH_ROLE.match(role)) or role in ("mgmt", "ufm")


class NetWire(NamedTuple):
    """One cable of the other networks, in ``networks-cabling.csv``'s columns (ends as named there)."""

    cable: int
    network: str
    role: str
    a: str
    a_role: str
    a_port: str
    a_speed: str
    z: str
    z_role: str
    z_port: str
    z_speed: str
    a_rack: str = ""
    a_u: str = ""
    z_rack: str = ""
    z_u: str = ""
    length_m: str = ""
    label: str = ""

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (self.a, self.a_port), (self.z, self.z_port)

    def kind(self) -> tuple[str, str]:
        return self.network, self.role


@dataclass
class NetMove:
    before: NetWire
    after: NetWire

    @property
    def unplugged(self) -> tuple[str, str]:
        a, z = self.before.ends()
        return z if a in self.after.ends() else a


@dataclass
class NetGrowth:
    """The other networks' plan: kept, moved, added and removed cables, switches, stages and checks."""

    kept: list[NetWire]
    moved: list[NetMove]
    added: list[NetWire]
    removed: list[NetWire]
    installed: int
    forced: int  # installed cables no wiring of the new design keeps (their pair has fewer cables in it, or a device is gone)
    rebuild_changed: int  # installed cables a plain rebuild of the new spec changes
    new_switches: list[str] = field(default_factory=list)
    spare_switches: list[str] = field(default_factory=list)
    stage0: list[NetWire] = field(default_factory=list)  # new cables on ports free today
    errors: list[str] = field(default_factory=list)  # the networks' checks on the final wiring (messages)
    stage0_errors: list[str] = field(default_factory=list)  # on the wiring after stage 0, but those of a build in progress
    renamed: list[NetWire] = field(default_factory=list)  # the installed cables, devices named as in the new design

    @property
    def final(self) -> list[NetWire]:
        return sorted(self.kept + [m.after for m in self.moved] + self.added, key=lambda w: w.cable)

    def figures(self) -> dict[str, Any]:
        n = max(self.installed, 1)
        per: dict[str, dict[str, int]] = {net: {"kept": 0, "moved": 0, "added": 0, "removed": 0} for net in NETWORKS}
        for what, ws in (("kept", self.kept), ("moved", [m.after for m in self.moved]), ("added", self.added), ("removed", self.removed)):
            for w in ws:
                per.setdefault(w.network, {"kept": 0, "moved": 0, "added": 0, "removed": 0})[what] += 1
        changed = len(self.moved) + len(self.removed)
        return {
            "cables": {"kept": len(self.kept), "moved": len(self.moved), "added": len(self.added), "removed": len(self.removed)},
            "per_network": {k: v for k, v in per.items() if any(v.values())},
            "installed": self.installed,
            "final": len(self.final),
            "changed_share": round(changed / n, 4),
            "fewest_possible_share": round(self.forced / n, 4),
            "rebuild": {"changed": self.rebuild_changed, "changed_share": round(self.rebuild_changed / n, 4)},
            "switches": {"new": len(self.new_switches), "spare": len(self.spare_switches)},
            "stages": 2 if (self.moved or self.removed) else 1,
            "stages_valid": not self.stage0_errors,
            "final_valid": not self.errors,
            "errors": self.errors + [f"after stage 0: {e}" for e in self.stage0_errors],
        }


def read_installed(arch_dir: Path) -> list[NetWire]:
    """The installed phase's ``networks-cabling.csv`` (none: an empty list); InputError naming the line when malformed."""
    path = Path(arch_dir) / "networks-cabling.csv"
    if not path.is_file():
        return []
    cabling.read(path, cabling.Sheet(), "BUILD_DIR")  # the as-built reader's checks: fields per row, ends, size
    out = []
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = csv.DictReader(line for line in fh if line.strip() and not line.lstrip().startswith("#"))
        missing = [c for c in ("cable", "network", "role") if c not in (rows.fieldnames or [])]
        if missing:
            raise InputError([Problem("BUILD_DIR", f"{show(str(path))} has no {', '.join(missing)} column(s)", "give the networks-cabling.csv topogen build wrote")])
        for no, r in enumerate(rows, 2):
            if not str(r["cable"]).isdecimal() or r["network"] not in NETWORKS:
                raise InputError([Problem("BUILD_DIR", f"{show(str(path))} line {no}: cable {show(r['cable'] or '')} of network {show(r['network'] or '')}", f"give a cable number and a network of {', '.join(NETWORKS)}")])
            out.append(_wire(r))
    return out


def _wire(r: dict) -> NetWire:
    def g(k: str) -> str:
        return (r.get(k) or "").strip()

    return NetWire(int(g("cable")), g("network"), g("role"), g("a_device"), g("a_role"), g("a_port"), g("a_speed_gbps"), g("z_device"), g("z_role"), g("z_port"), g("z_speed_gbps"),
                   g("a_rack"), g("a_u"), g("z_rack"), g("z_u"), g("length_m"), g("label"))


def design_wires(ctx, arch: str) -> list[NetWire]:
    """The new build's networks cables (``ctx``: its pipeline build), as its networks-cabling.csv lists them."""
    n = ctx.networks.get(arch)
    if n is None:
        return []
    return [NetWire(*(str(x) if i else int(x) for i, x in enumerate(row))) for row in generate_rows(n, ctx.fabrics[arch], ctx.network_layouts.get(arch))]


def grow(installed: list[NetWire], design: list[NetWire]) -> NetGrowth:
    """Lay the ``design`` networks around the ``installed`` cables (see the module); deterministic."""
    by_id = {}
    for w in design:
        for d in (w.a, w.z):
            by_id.setdefault(identity(d), d)
    inst = [w._replace(a=by_id.get(identity(w.a), w.a), z=by_id.get(identity(w.z), w.z)) for w in installed]
    port_kind: dict[tuple[str, str], tuple[str, str]] = {}
    pool: dict[tuple[str, str, str], list[str]] = defaultdict(list)  # (device, network, role) -> the design's ports there
    need: dict[tuple, int] = defaultdict(int)
    for w in design:
        need[_pair(w)] += 1
        for e in w.ends():
            port_kind[e] = w.kind()
            pool[(e[0], *w.kind())].append(e[1])
    full = dict(need)
    kept, rest, used = [], [], set()
    for w in inst:
        ka, kz = port_kind.get((w.a, w.a_port)), port_kind.get((w.z, w.z_port))
        key = (w.a, w.z, *(ka or ("", "")))
        if ka is not None and ka == kz and need.get(key, 0) > 0 and not (set(w.ends()) & used):
            need[key] -= 1
            kept.append(w._replace(network=ka[0], role=ka[1]))
            used.update(w.ends())
        else:
            rest.append(w)
    have: dict[tuple, int] = defaultdict(int)
    for w in inst:
        ka, kz = port_kind.get((w.a, w.a_port)), port_kind.get((w.z, w.z_port))
        have[(w.a, w.z, *(ka if ka is not None and ka == kz else (w.network, w.role)))] += 1
    forced = sum(max(0, c - full.get(k, 0)) for k, c in have.items())
    todo = []
    for w in design:
        if need.get(_pair(w), 0) > 0:
            need[_pair(w)] -= 1
            todo.append(w)
    placed: list[NetWire | None] = [None] * len(todo)
    for i, w in enumerate(todo):  # the design's own ports where both are free
        if not (set(w.ends()) & used):
            used.update(w.ends())
            placed[i] = w
    for i, w in enumerate(todo):
        if placed[i] is None:
            a = (w.a, w.a_port) if (w.a, w.a_port) not in used else _free(w.a, w, pool, used)
            z = (w.z, w.z_port) if (w.z, w.z_port) not in used else _free(w.z, w, pool, used)
            used.update((a, z))
            placed[i] = _relabel(w, a[1], z[1])
    added, moves, removed = _pair_moves(rest, [w for w in placed if w is not None])
    nxt = max((w.cable for w in installed), default=0) + 1
    numbered = []
    for w in added:
        numbered.append(w._replace(cable=nxt))
        nxt += 1
    moved = [NetMove(m.before, m.after) for m in moves]
    own = {(identity(w.a), w.a_port, identity(w.z), w.z_port) for w in design}
    rebuild = sum((identity(w.a), w.a_port, identity(w.z), w.z_port) not in own for w in installed)
    had = {d for w in inst for d in (w.a, w.z)}
    switches_new = sorted({d for w in design for d, r in ((w.a, w.a_role), (w.z, w.z_role)) if SWITCH_ROLE.match(r) and d not in had}, key=_natural)
    known = set(by_id.values())
    spare = sorted({d for w in inst for d, r in ((w.a, w.a_role), (w.z, w.z_role)) if SWITCH_ROLE.match(r) and d not in known}, key=_natural)
    busy = {e for w in inst for e in w.ends()}
    stage0 = [w for w in numbered if not (set(w.ends()) & busy)]
    return NetGrowth(kept, moved, numbered, removed, len(installed), forced, rebuild, switches_new, spare, stage0, renamed=inst)


def _pair(w: NetWire) -> tuple:
    return (w.a, w.z, w.network, w.role)


def _free(dev: str, w: NetWire, pool: dict, used: set) -> tuple[str, str]:
    """The lowest port of ``dev`` the design gives ``w``'s network and role that nothing holds yet."""
    for p in sorted(pool[(dev, *w.kind())], key=_natural):
        if (dev, p) not in used:
            return dev, p
    raise AssertionError(f"no free {w.network} {w.role} port on {dev}")  # pragma: no cover - a device has as many such ports as cables


def _relabel(w: NetWire, a_port: str, z_port: str) -> NetWire:
    """``w`` on other ports: the label's port names follow."""
    if (a_port, z_port) == (w.a_port, w.z_port):
        return w
    halves = w.label.split(" / ")
    if len(halves) == 2:
        halves = [h[: len(h) - len(old)] + new if h.endswith(old) else h for h, old, new in zip(halves, (w.a_port, w.z_port), (a_port, z_port))]
    return w._replace(a_port=a_port, z_port=z_port, label=" / ".join(halves))


def check(g: NetGrowth, ctx, arch: str) -> None:
    """The networks' checks against the new build's plan (``ctx``) on the final wiring, and on the wiring after stage 0.

    After stage 0 the moves are still to come: a node short of its ports
    (``networks.node-ports``) and cable counts per network and role short of the design's
    (``networks.as-built`` naming no device) are those of a build in progress; any other
    error counts. Messages into ``g.errors`` and ``g.stage0_errors``.
    """
    plan = ctx.networks.get(arch)
    if plan is None:
        g.errors = [f"{len(g.final):,} cable(s) remain but the new spec has no networks: section"] if g.final else []
        return
    g.errors = [f"{f.check}: {f.message}" for f in _findings(g.final, plan, ctx) if f.severity == "error"]
    if g.moved or g.removed:
        g.stage0_errors = [f"{f.check}: {f.message}" for f in _findings(g.renamed + g.stage0, plan, ctx)
                           if f.severity == "error" and f.check != "networks.node-ports" and not (f.check == "networks.as-built" and not f.devices)]


def _findings(wires: list[NetWire], plan, ctx) -> list:
    cables = [Cable(End(w.a, w.a_port), End(w.z, w.z_port), f"networks-cabling.csv (cable {w.cable})") for w in wires]
    built, _ids, bad = asbuilt_networks.as_built(plan, cables)
    return bad + asbuilt_networks.check(plan, built, ctx.storage_required)


def cabling_lines(g: NetGrowth) -> Iterator[str]:
    """The new networks-cabling.csv: kept cables as installed (their labels), moved and new ones as the new layout places them."""
    yield csv_line(ROW_COLUMNS)
    for w in g.final:
        yield csv_line(tuple(w))


def delta_lines(g: NetGrowth) -> Iterator[str]:
    """networks-delta.csv: stage 0 the new cables on free ports; stage 1 removals, moves and the rest, by rack pair."""
    early = {w.cable for w in g.stage0}
    rows = []
    for w in g.removed:
        rows.append((1, 0, "remove", w, ("", "")))
    for m in g.moved:
        rows.append((1, 1, "move", m.after, m.unplugged))
    for w in g.added:
        rows.append((0 if w.cable in early else 1, 2, "add", w, ("", "")))
    yield csv_line(DELTA_COLUMNS)
    for stage, _order, action, w, frm in sorted(rows, key=lambda r: (r[0], r[1], _sheet(r[3]), r[3].cable)):
        yield csv_line((stage, action, _sheet(w), *tuple(w), *frm))


def _sheet(w: NetWire) -> str:
    return "_".join(sorted((w.a_rack, w.z_rack))) if w.a_rack and w.z_rack else ""


_PLACE = re.compile(r"^([A-Z]+[0-9]+)-U([0-9]+) (.*)$")


def place(g: NetGrowth, installed: list[NetWire], where: dict[str, tuple[str, int]], racks: dict[str, str]) -> None:
    """The moved and new cables' ends on the grown floor: installed devices where they stand.

    ``where``: device identity -> (rack, U) of the compute floor (nodes and compute
    switches, :mod:`topogen.growth.floor`); the networks' own installed devices keep the
    rack and U of the installed rows. Labels follow. New devices of the networks that the
    new build's layout puts in a compute rack (an OOB switch, a PDU) go into the grown
    floor's rack of that rack's devices (``racks``: the new build's compute rack -> the
    grown floor's), at the same U; those in the networks' own racks keep their places.
    """
    at: dict[str, tuple[str, str]] = {}
    for w in installed:
        for dev, rack, u in ((w.a, w.a_rack, w.a_u), (w.z, w.z_rack, w.z_u)):
            if rack and u:
                at.setdefault(identity(dev), (rack, u))
    at.update({k: (r, str(u)) for k, (r, u) in where.items()})

    def fix(w: NetWire) -> NetWire:
        halves = w.label.split(" / ")
        out = {}
        for i, (dev, rack, u) in enumerate(((w.a, w.a_rack, w.a_u), (w.z, w.z_rack, w.z_u))):
            got = at.get(identity(dev))
            if got is None and rack in racks:
                got = (racks[rack], u)
            if got is None or got == (rack, u) or not rack:
                continue
            out["az"[i] + "_rack"], out["az"[i] + "_u"] = got
            m = _PLACE.match(halves[i]) if len(halves) == 2 else None
            if m:
                halves[i] = f"{got[0]}-U{int(got[1]):02d} {m.group(3)}"
            elif len(halves) == 2 and halves[i].startswith(rack + " "):  # a zero-U device: its rack and name
                halves[i] = got[0] + halves[i][len(rack):]
        return w._replace(**out, label=" / ".join(halves)) if out else w

    g.moved = [NetMove(m.before, fix(m.after)) for m in g.moved]
    early = {w.cable for w in g.stage0}
    g.added = [fix(w) for w in g.added]
    g.stage0 = [w for w in g.added if w.cable in early]


def netbox_rows(g: NetGrowth, installed: list[NetWire], ctx, arch: str, racks: dict[str, str]) -> dict[str, tuple[tuple[str, ...], list[tuple]]]:
    """NetBox bulk-import rows of what changes in the other networks, by file name under ``netbox/``.

    ``networks-devices.csv``: the networks' devices the installed phase lacks, as the
    build's NetBox export rows them (a device in a compute rack of the new build in the
    grown floor's rack of it, ``racks``); ``networks-interfaces.csv`` the interfaces (and
    bonds) of the devices and nodes the installed phase lacks; ``networks-cables.csv`` the new cables,
    ``networks-cables-moved.csv`` each moved cable by its label with its new
    terminations, ``networks-cables-removed.csv`` the labels to delete. Labels are the
    build's (``<site>/<network>-<cable id>``), so a kept or moved cable keeps its label.
    """
    n = ctx.networks.get(arch)
    site = nb_dcim.site_name(ctx.spec, arch)
    pre = site + "."
    had = {identity(d) for w in installed for d in (w.a, w.z)}
    devices, interfaces = [], []
    if n is not None:
        v = NetworkView(n, ctx.fabrics[arch])
        for r in nb_networks.device_rows(site, n, v, ctx.network_layouts.get(arch), nb_dcim._heights(ctx.spec)[1], ctx.catalog):
            if identity(r[0][len(pre):]) not in had:
                devices.append(r[:5] + (racks.get(r[5], r[5]),) + r[6:])
        interfaces = [r for r in nb_networks.interface_rows(site, n, v, ctx.catalog, ctx.network_addresses.get(arch)) if identity(r[0][len(pre):]) not in had]

    def cable(w: NetWire) -> tuple:
        one_gbe = w.a_speed.isdecimal() and int(w.a_speed) <= 1
        return (site, pre + w.a, nb_dcim.TERMINATION, w.a_port, site, pre + w.z, nb_dcim.TERMINATION, w.z_port, "cat6" if one_gbe else "", nb_dcim.STATUS,
                w.length_m, "m" if w.length_m else "", f"{site}/{w.network}-{w.cable}", f"{w.network} {w.role}")

    return {
        "netbox/networks-devices.csv": (nb_dcim.DEVICE_COLUMNS, devices),
        "netbox/networks-interfaces.csv": (nb_networks.NETWORK_INTERFACE_COLUMNS, interfaces),
        "netbox/networks-cables.csv": (nb_dcim.CABLE_COLUMNS, [cable(w) for w in g.added]),
        "netbox/networks-cables-moved.csv": (nb_dcim.CABLE_COLUMNS, [cable(m.after) for m in g.moved]),
        "netbox/networks-cables-removed.csv": (("label",), [(f"{site}/{w.network}-{w.cable}",) for w in g.removed]),
    }


def new_rack_rows(installed_ctx, ctx, arch: str) -> list[tuple]:
    """``networks-racks.csv`` of the delta: the new build's management racks the installed phase lacks, as the build's NetBox export rows them."""
    lay = ctx.network_layouts.get(arch)
    if lay is None or not lay.racks:
        return []
    had = set(installed_ctx.network_layouts[arch].floor.name) if installed_ctx is not None and arch in installed_ctx.network_layouts else set()
    site = nb_dcim.site_name(ctx.spec, arch)
    return [r for r in nb_networks.management_rack_rows(site, lay, nb_networks.nlay_rack_u(ctx)) if r[1] not in had]


def _subnet_key(n, switches: tuple[int, ...]) -> frozenset:
    return frozenset(identity(n.switches[s].name) for s in switches)


PINNED_FILE = "networks-addressing-pinned.csv"
PINNED_COLUMNS = ("network", "subnet", "switches", "address")


def ipam_rows(installed_ctx, ctx, arch: str, had: set[str], pinned: Path | None = None) -> dict[str, tuple[tuple[str, ...], list[tuple]]]:
    """NetBox IPAM rows of the in-band and OOB addresses of the devices the installed phase lacks (``had``: installed device identities).

    Each new device's address is the new spec's own plan's, unless an installed device
    holds it: then the lowest free address of its subnet. A subnet keeps its installed
    place when the installed phase has it (the same switches hold its SVI); a new subnet
    takes the new plan's place, or, when that overlaps an installed subnet, the lowest
    free block of its size in the pool (its addresses at the same offsets). Files, as the
    build's NetBox export names them: ``networks-prefixes.csv`` (the new subnets; the pools
    and ``networks-vrfs.csv`` too when the installed phase had no in-band/OOB plan) and
    ``networks-ip-addresses.csv``. InputError when an installed subnet or the pool has no
    free address left.

    The installed phase's subnets and addresses are its spec's plan, or, when it is an
    expansion's output, the ``pinned`` file that expansion wrote (:data:`PINNED_FILE`:
    every subnet with the switches holding it, then every address held, installed and
    new); this function returns that file of the grown phase too.
    """
    a, n = ctx.network_addresses.get(arch), ctx.networks.get(arch)
    if a is None or n is None:
        return {}
    spec = ctx.spec.addressing or ADDRESSING_DEFAULT
    site = nb_dcim.site_name(ctx.spec, arch)
    old = installed_ctx.network_addresses.get(arch) if installed_ctx is not None else None
    old_n = installed_ctx.networks.get(arch) if installed_ctx is not None else None
    taken: dict[int, set[int]] = {net: set() for net in (nw.INBAND, nw.OOB)}
    blocks: dict[int, list[tuple[int, int]]] = {net: [] for net in taken}  # (first, last) of every subnet placed
    where: dict[tuple[int, int], tuple[int, int]] = {}  # the new plan's (net, subnet) -> (base, size) given
    installed_at: dict[tuple[int, frozenset], tuple[int, int]] = {}
    keyed: list[tuple[int, int, int, frozenset]] = []  # every subnet placed: (net, base, size, its switches)
    if pinned is not None:
        for net, b, size, key, addrs in _read_pinned(pinned):
            if b is not None:
                blocks[net].append((b, b + size - 1))
                installed_at.setdefault((net, key), (b, size))  # the first of a switch's subnets: its own
                keyed.append((net, b, size, key))
            taken[net].update(addrs)
    elif old is not None:
        for net in taken:
            taken[net].update(int(x) for x in old.addr[old.of(net)].tolist())
            s = old.subnets[net]
            for k in range(len(s)):
                b = int(s.base[k])
                blocks[net].append((b, b + s.size - 1))
                installed_at[(net, _subnet_key(old_n, s.switches[k]))] = (b, s.size)
                keyed.append((net, b, s.size, _subnet_key(old_n, s.switches[k])))
    fresh = pinned is None and old is None  # the installed phase had no in-band/OOB plan: VRFs and pools are new
    prefixes: list[tuple] = []
    if fresh:
        prefixes += [(str(spec.pool(p)), f"{site}.{p}", "container", f"{site}: {p} pool") for p in ("inband", "oob")]
    for net in (nw.INBAND, nw.OOB):
        s = a.subnets[net]
        pool = spec.pool(nw.NETWORK_NAMES[net])
        for k in range(len(s)):
            got = installed_at.get((net, _subnet_key(n, s.switches[k])))
            if got is None:
                b = int(s.base[k])
                if any(lo <= b + s.size - 1 and b <= hi for lo, hi in blocks[net]):
                    b = _free_block(blocks[net], int(pool.network_address), pool.num_addresses, s.size, net)
                blocks[net].append((b, b + s.size - 1))
                keyed.append((net, b, s.size, _subnet_key(n, s.switches[k])))
                got = (b, s.size)
                prefixes.append((f"{ip_text(np.asarray([b], np.uint32))[0]}/{s.plen}", f"{site}.{nw.NETWORK_NAMES[net]}", "active",
                                 f"VLAN {s.vlan}, gateway {ip_text(np.asarray([b + 1], np.uint32))[0]}, {int(s.hosts[k])} devices, {int(s.free()[k])} free"))
            where[(net, k)] = got
    rows = []
    v = NetworkView(n, ctx.fabrics[arch])
    pre = site + "."
    gateways: dict[tuple[int, int], int] = {}
    overflow: dict[tuple[int, int], tuple[int, int, str]] = {}
    for r, row in enumerate(nb_networks.address_rows(site, a, v)):
        if identity(row[4][len(pre):]) in had:
            continue
        net, k = int(a.net[r]), int(a.subnet[r])
        base, size = where[(net, k)]
        off = int(a.addr[r]) - int(a.subnets[net].base[k])
        plen = row[0].split("/")[1]
        if int(a.role[r]) == netaddr.GATEWAY and (net, k) in gateways:  # a pair's virtual gateway: one address on both leaves
            ip = gateways[(net, k)]
        else:
            ip = base + off
            if ip in taken[net]:
                ip = next((base + o for o in range(1, size - 1) if base + o not in taken[net]), -1)
            if ip < 0:  # the installed subnet is full: a second subnet on the same VLAN and switches
                if (net, k) not in overflow:
                    overflow[(net, k)] = _second_subnet(a, n, net, k, blocks, spec, site, taken, rows, prefixes)
                    keyed.append((net, overflow[(net, k)][0], overflow[(net, k)][1], _subnet_key(n, a.subnets[net].switches[k])))
                b2, size2, plen = overflow[(net, k)]
                ip = next((b2 + o for o in range(1, size2 - 1) if b2 + o not in taken[net]), -1)
                if ip < 0:
                    name = nw.NETWORK_NAMES[net]
                    raise InputError([Problem(f"NEW_SPEC.addressing.{name}", f"no free {name} address for {row[4]} {row[5]}", f"give addressing.{name} a larger pool")])  # pragma: no cover - a second subnet is sized for the whole new plan's
            taken[net].add(ip)
            if int(a.role[r]) == netaddr.GATEWAY:
                gateways[(net, k)] = ip
        rows.append((f"{ip_text(np.asarray([ip], np.uint32))[0]}/{plen}", *row[1:]))
    out = {"netbox/networks-prefixes.csv": (nb_networks.PREFIX_COLUMNS, prefixes), "netbox/networks-ip-addresses.csv": (nb_networks.ADDRESS_COLUMNS, rows)}
    text = lambda x: ip_text(np.asarray([x], np.uint32))[0]  # noqa: E731
    grown = [(nw.NETWORK_NAMES[net], f"{text(b)}/{32 - (size - 1).bit_length()}", " ".join(sorted(key, key=_natural)), "") for net, b, size, key in keyed]
    grown += [(nw.NETWORK_NAMES[net], "", "", text(x)) for net in taken for x in sorted(taken[net])]
    out[PINNED_FILE] = (PINNED_COLUMNS, grown)
    if fresh:
        out = {"netbox/networks-vrfs.csv": (nb_networks.VRF_COLUMNS, nb_networks.vrf_rows(site)), **out}
    return out


def _second_subnet(a, n, net: int, k: int, blocks: dict, spec, site: str, taken: dict, rows: list, prefixes: list) -> tuple[int, int, str]:
    """A second subnet, of the new plan's size, for an installed subnet with no free address left: its prefix and the
    gateway and SVI addresses on the installed switches' SVI (rows appended); returns (base, size, prefix length)."""
    s = a.subnets[net]
    name = nw.NETWORK_NAMES[net]
    pool = spec.pool(name)
    b = _free_block(blocks[net], int(pool.network_address), pool.num_addresses, s.size, net)
    blocks[net].append((b, b + s.size - 1))
    text = lambda x: ip_text(np.asarray([x], np.uint32))[0]  # noqa: E731
    sw = [n.switches[i].name for i in s.switches[k]]
    pre, vrf, plen = site + ".", f"{site}.{name}", str(s.plen)
    svi = f"vlan{spec.inband_vlan}" if net == nw.INBAND else f"vlan{netaddr.OOB_VLAN}"
    prefixes.append((f"{text(b)}/{plen}", vrf, "active", f"VLAN {s.vlan}, gateway {text(b + 1)}, second subnet of {' and '.join(sw)} (the installed one is full)"))
    if len(sw) > 1:
        rows.extend((f"{text(b + 1)}/{plen}", vrf, nb_networks.ADDRESS_STATUS, "anycast", pre + x, svi, "false", "false", "virtual gateway (VRR) of the leaf pair, second subnet") for x in sw)
        rows.extend((f"{text(b + 2 + j)}/{plen}", vrf, nb_networks.ADDRESS_STATUS, "", pre + x, svi, "false", "false", "SVI, second subnet") for j, x in enumerate(sw))
        taken[net].update(range(b + 1, b + 2 + len(sw)))
    else:
        rows.append((f"{text(b + 1)}/{plen}", vrf, nb_networks.ADDRESS_STATUS, "", pre + sw[0], svi, "false", "false", "SVI, second subnet"))
        taken[net].add(b + 1)
    return b, s.size, plen


def _free_block(blocks: list[tuple[int, int]], first: int, count: int, size: int, net: int) -> int:
    """The lowest block of ``size`` addresses (aligned) in the pool ``first``..``first + count - 1`` that overlaps no block placed."""
    for b in range(first, first + count - size + 1, size):
        if not any(lo <= b + size - 1 and b <= hi for lo, hi in blocks):
            return b
    name = nw.NETWORK_NAMES[net]
    raise InputError([Problem(f"NEW_SPEC.addressing.{name}", f"the pool has no free /{32 - (size - 1).bit_length()} left beside the installed subnets", f"give addressing.{name} a larger pool")])


def _read_pinned(path: Path) -> Iterator[tuple]:
    """(network, subnet base or None, size, switch identities, addresses) per row of a :data:`PINNED_FILE`; InputError naming the line when malformed."""
    nets = {nw.NETWORK_NAMES[x]: x for x in (nw.INBAND, nw.OOB)}
    for no, r in expansion_rows(path, PINNED_COLUMNS, PINNED_FILE):
        try:
            net = nets.get(r["network"])
            if net is None:
                raise ValueError("network: inband or oob")
            if r["subnet"]:
                sub = ipaddress.IPv4Network(r["subnet"])
                yield net, int(sub.network_address), sub.num_addresses, frozenset(r["switches"].split()), ()
            else:
                yield net, None, 0, frozenset(), (int(ipaddress.IPv4Address(r["address"])),)
        except (KeyError, ValueError, TypeError) as err:
            raise bad_row(path, no, r, f"give the {PINNED_FILE} topogen expand wrote ({err})") from None
