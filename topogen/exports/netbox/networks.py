"""NetBox files of the other networks (spec ``networks:``): storage, in-band and OOB, beside the compute fabric's.

:func:`export` is the ``netbox`` exporter: the compute fabric's files
(:func:`topogen.exports.netbox.dcim.export`, unchanged), then, when the spec has networks, the
shared objects they add (``netbox/shared/``, same rules) and these files under
``<arch>/netbox/``, imported after the compute fabric's (their cables reach its nodes and
switches):

* ``networks-racks.csv``: the management racks (role ``management-rack``), beside the
  compute layout's ``racks.csv``;
* ``networks-devices.csv``: every switch of the three networks, the management servers,
  fabric managers, PDUs, and one device each for the storage targets, the NFS appliance
  and the data-centre core (outside the plan: no rack). Device roles name the network:
  ``storage-leaf``, ``storage-target-leaf``, ``storage-spine``, ``inband-leaf``,
  ``inband-spine``, ``oob-access``, ``management-server``, ``fabric-manager``, ``pdu``,
  ``storage-target``, ``nfs``, ``dc-core``;
* ``networks-interfaces.csv``: every port a cable of these networks lands on, on every
  device, the compute nodes and switches included (a node's ``stor0``, ``inb0``, ``bmc``;
  a switch's ``mgmt0``), and every unused port of the networks' switches (disabled);
* ``networks-cables.csv``: one cable per row, labelled ``<site>/<network>-<cable id>``
  (the id of ``networks-cabling.csv``), its length from the layout;
* the address plan (:mod:`topogen.config.netaddr`), after the cables: ``networks-vrfs.csv``
  (``<site>.inband`` and ``<site>.oob``, unique addresses enforced: both architectures of
  a build use the same pools), ``networks-prefixes.csv`` (each pool as a ``container``,
  then every subnet ``active``, its VLAN and gateway in the description) and
  ``networks-ip-addresses.csv`` (every address on its device and interface, ``planned``
  as the devices: ``reserved``; a leaf pair's virtual gateway on both leaves with role
  ``anycast``; a node's or server's in-band ``bond0`` its primary address
  (``is_primary``), every BMC and management port its out-of-band one (``is_oob``)).

``networks-interfaces.csv`` has one more column than the compute fabric's, ``lag``: the
bonds come first (``bond0`` of each node and management server, type ``lag``) and the
switches' SVIs (``vlan<id>``, type ``virtual``), then every port, an in-band port naming
the bond it joins.

Columns are the compute files' (:mod:`topogen.exports.netbox.dcim`), names ``<site>.<device>``
likewise; files split like the others at NetBox's size and time limits. Device types:
the switches' catalog SKUs (their manufacturer), and generic ``management-server-<u>u``,
``fabric-manager-<u>u``, ``pdu-0u``, ``storage-target``, ``nfs-appliance`` and
``dc-core-switch`` (the last three without height: not in the plan's racks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.config import netaddr
from topogen.config.addressing import ip_text
from topogen.exports.netbox import dcim
from topogen.exports.files import arch_dir, write_csv
from topogen.exports.netbox.dcim import CABLE_COLUMNS, DEVICE_COLUMNS, GENERIC, INTERFACE_COLUMNS, PORT_TYPES, RACK_COLUMNS, RACK_STATUS, RACK_WIDTH, STATUS, TERMINATION, site_name, slug, write_parts
from topogen.exports.network_view import NetworkView
from topogen.fabric import networks as nw
from topogen.spec.addressing import DEFAULT as ADDRESSING_DEFAULT

ROLE_COLORS = {"storage": "ff9800", "inband": "00bcd4", "oob": "9e9e9e"}
KIND_ROLES = {nw.MGMT: "management-server", nw.UFM: "fabric-manager", nw.PDU: "pdu", nw.RACKDEV: "rack-device", nw.TARGETS: "storage-target", nw.NFS: "nfs", nw.CORE: "dc-core"}
KIND_TYPES = {nw.MGMT: "management-server", nw.UFM: "fabric-manager", nw.PDU: "pdu", nw.RACKDEV: "rack-device", nw.TARGETS: "storage-target", nw.NFS: "nfs-appliance", nw.CORE: "dc-core-switch"}
KIND_DESCRIPTIONS = {
    nw.MGMT: "management server (head node)",
    nw.UFM: "fabric manager (UFM appliance)",
    nw.PDU: "rack power distribution unit, managed",
    nw.RACKDEV: "NVLink switch tray or power shelf of a rack-scale system, managed (its OOB port)",
    nw.TARGETS: "storage targets (appliances; not placed by the plan)",
    nw.NFS: "NFS appliance on the in-band network (not placed by the plan)",
    nw.CORE: "data-centre core (not placed by the plan)",
}
OUTSIDE = (nw.TARGETS, nw.NFS, nw.CORE)
EXTRA_PORT_TYPES = {1: "1000base-t", 10: "10gbase-x-sfpp", 25: "25gbase-x-sfp28", 50: "50gbase-x-sfp56"}


def port_type(gbps: int) -> str:
    return PORT_TYPES.get(gbps) or EXTRA_PORT_TYPES.get(gbps, "other")


def kind_height(kind: int, switch_u: int) -> int:
    """U of a device of ``kind``: servers as a switch, PDUs zero-U, devices outside the plan none."""
    return 0 if kind in (nw.PDU, nw.RACKDEV) or kind in OUTSIDE else switch_u  # a rack device: in its compute rack, no U of its own in this plan


def kind_model(kind: int, switch_u: int) -> str:
    return f"{KIND_TYPES[kind]}-{kind_height(kind, switch_u)}u" if kind in (nw.MGMT, nw.UFM, nw.PDU, nw.RACKDEV) else KIND_TYPES[kind]


def switch_makers(catalog, skus) -> dict[str, tuple[str, str]]:
    """``{sku: (manufacturer, description)}`` of the networks' switch SKUs (``generic`` where the catalog names none)."""
    out = {}
    for sku in skus:
        x = next((s for s in catalog.switches if s.sku == sku), None) if catalog is not None and sku else None
        out[sku] = ((x.manufacturer if x is not None else "") or GENERIC, (x.description if x is not None else "") or f"switch ({sku})")
    return out


def shared_rows(ctx, switch_u: int) -> dict[str, tuple[str, tuple]]:
    """``{file tag: (kind, row)}``: manufacturers, device roles, the management rack role and device types of the networks."""
    out: dict[str, tuple[str, tuple]] = {}
    for n in (getattr(ctx, "networks", None) or {}).values():
        makers = switch_makers(getattr(ctx, "catalog", None), sorted({s.sku for s in n.switches}))
        for maker, _ in makers.values():
            out.setdefault(f"manufacturer-{slug(maker)}", ("manufacturer", (maker, slug(maker))))
        for s in n.switches:
            if s.compute >= 0:  # a collapsed core's leaf: the compute fabric's device
                continue
            role = f"{nw.NETWORK_NAMES[s.network]}-{s.role}"
            out.setdefault(f"device-role-{role}", ("device-role", (role, slug(role), ROLE_COLORS[nw.NETWORK_NAMES[s.network]], f"{s.role} switch of the {nw.NETWORK_NAMES[s.network]} network")))
            maker, desc = makers[s.sku]
            out.setdefault(f"device-type-{slug(maker + '-' + s.sku)}", ("device-type", (maker, s.sku, slug(s.sku), s.sku if maker != GENERIC else "", switch_u, desc)))
        for kind in KIND_ROLES:
            if _count(n, kind):
                role = KIND_ROLES[kind]
                out.setdefault(f"device-role-{role}", ("device-role", (role, role, "607d8b", KIND_DESCRIPTIONS[kind])))
                model = kind_model(kind, switch_u)
                out.setdefault(f"device-type-{GENERIC}-{model}", ("device-type", (GENERIC, model, slug(model), "", kind_height(kind, switch_u), KIND_DESCRIPTIONS[kind])))
        if n.racks[1]:
            out.setdefault("rack-role-management-rack", ("rack-role", ("management-rack", "management-rack", "607d8b", "management racks (storage and in-band switches, management servers, fabric managers)")))
    return out


def _count(n: nw.Networks, kind: int) -> int:
    if kind in OUTSIDE:
        return 1 if (n.cables.a_kind == kind).any() or (n.cables.z_kind == kind).any() else 0
    return n.endpoints[nw.KIND_NAMES[kind]]


def management_rack_rows(site: str, nlay, rack_u: int) -> list[tuple]:
    """Rack rows of the management racks (after the compute layout's)."""
    r = nlay.floor
    return [(site, r.name[i], f"{r.kind[i]}-rack", RACK_STATUS, RACK_WIDTH, rack_u, f"{r.kind[i]} rack, row {int(r.row[i]) + 1}, position {int(r.col[i]) + 1}") for i in range(nlay.first_management, len(r))]


def device_rows(site: str, n: nw.Networks, v: NetworkView, nlay, switch_u: int, catalog=None) -> Iterator[tuple]:
    """The networks' switches (model order), then management servers, fabric managers, PDUs and the devices outside the plan."""
    pre = site + "."
    makers = switch_makers(catalog, sorted({s.sku for s in n.switches}))

    def where(kind: int, idx: int) -> tuple[str, str, str]:
        if nlay is None:
            return "", "", ""
        rack = nlay.rack_names(kind, np.asarray([idx]))[0]
        u = int(nlay.where[kind][1][idx])
        return rack, str(u) if u and rack else "", "front" if u and rack else ""

    for i, s in enumerate(n.switches):
        if s.compute >= 0:  # a collapsed core's leaf: the compute fabric's device (its files create it)
            continue
        net = nw.NETWORK_NAMES[s.network]
        note = f"{net} {s.role} switch {s.name}, {s.radix} x {s.speed}G" + (f", scalable unit {s.group}" if s.group >= 0 else "") + (f", MLAG pair {s.pair}" if s.pair >= 0 else "")
        yield (pre + s.name, f"{net}-{s.role}", s.sku, makers[s.sku][0], site, *where(nw.SWITCH, i), STATUS, note)
    for kind in (nw.MGMT, nw.UFM, nw.PDU, nw.RACKDEV, *OUTSIDE):
        for i in range(_count(n, kind)):
            yield (pre + v.names[kind][i], KIND_ROLES[kind], kind_model(kind, switch_u), GENERIC, site, *where(kind, i), STATUS, KIND_DESCRIPTIONS[kind])


def cable_port_types(n: nw.Networks, catalog=None) -> list[str]:
    """NetBox interface type of both ends of every cable: the switch SKU's catalog ``interface_type`` at its own
    speed (``infiniband-ndr`` on a QM9700, ``1000base-t`` on an SN2201's access ports), else by speed."""
    sw_type = _switch_types(n, catalog)
    sw_speed = [s.speed for s in n.switches]
    c = n.cables
    out = []
    for zk, zi, g in zip(c.z_kind.tolist(), c.z_idx.tolist(), c.speed.tolist()):
        t = sw_type[zi] if zk == nw.SWITCH and sw_speed[zi] == g else ""
        out.append(t or port_type(g))
    return out


def _switch_types(n: nw.Networks, catalog) -> list[str]:
    out = []
    for s in n.switches:
        x = next((q for q in catalog.switches if q.sku == s.sku), None) if catalog is not None else None
        out.append(x.interface_type if x is not None else "")
    return out


NETWORK_INTERFACE_COLUMNS = INTERFACE_COLUMNS + ("lag",)
VRF_COLUMNS = ("name", "enforce_unique", "description")
PREFIX_COLUMNS = ("prefix", "vrf", "status", "description")
FURTHER_BMC = frozenset(f"bmc{i}" for i in range(1, 65))  # a node's BMC ports past its first: addressed, not its out-of-band address (NetBox keeps one)
ADDRESS_COLUMNS = ("address", "vrf", "status", "role", "device", "interface", "is_primary", "is_oob", "description")
ADDRESS_STATUS = "reserved"


def _address_devices(a, v: NetworkView, rows: np.ndarray) -> np.ndarray:
    dev = np.empty(len(rows), dtype=object)
    for k in np.unique(a.kind[rows]).tolist():
        m = a.kind[rows] == k
        dev[m] = v.names[k][a.idx[rows][m]]
    return dev


def virtual_interface_rows(site: str, a, v: NetworkView) -> tuple[list[tuple], dict[tuple[str, str], str]]:
    """The bonds (type ``lag``) and SVIs (``virtual``) the plan puts addresses on, and ``{(device, member port): bond}``."""
    pre = site + "."
    rows = np.flatnonzero((a.role != netaddr.HOST) | np.fromiter((len(m) > 0 for m in a.members.tolist()), bool, len(a)))
    dev = _address_devices(a, v, rows)
    out, seen, lag = [], set(), {}
    for r, d in zip(rows.tolist(), dev.tolist()):
        name = a.iface[r]
        if (d, name) in seen:
            continue
        seen.add((d, name))
        if a.members[r]:
            out.append((pre + d, name, "lag", "true", "", f"{nw.NETWORK_NAMES[int(a.net[r])]}: LACP bond of {', '.join(a.members[r])}", ""))
            for m in a.members[r]:
                lag[(d, m)] = name
        else:
            out.append((pre + d, name, "virtual", "true", "", f"{nw.NETWORK_NAMES[int(a.net[r])]}: SVI, VLAN {a.subnets[int(a.net[r])].vlan}", ""))
    return out, lag


def vrf_rows(site: str) -> list[tuple]:
    return [(f"{site}.inband", "true", "in-band management network"), (f"{site}.oob", "true", "out-of-band network")]


def prefix_rows(site: str, a, spec) -> Iterator[tuple]:
    """Each pool (container), then every subnet of the in-band and OOB networks (active)."""
    for net, pool in ((nw.INBAND, "inband"), (nw.OOB, "oob")):
        vrf = f"{site}.{pool}"
        yield (str(spec.pool(pool)), vrf, "container", f"{site}: {pool} pool")
        s = a.subnets[net]
        for b, g, h, f in zip(ip_text(s.base).tolist(), ip_text(s.gateway).tolist(), s.hosts.tolist(), s.free().tolist()):
            yield (f"{b}/{s.plen}", vrf, "active", f"VLAN {s.vlan}, gateway {g}, {h} devices, {f} free")


def address_rows(site: str, a, v: NetworkView) -> Iterator[tuple]:
    """Every address of the plan on its device and interface (plan order)."""
    pre = site + "."
    rows = np.arange(len(a))
    dev = _address_devices(a, v, rows)
    text = ip_text(a.addr)
    plen = a.prefix_len(rows).tolist()
    primary_kinds = (nw.NODE, nw.MGMT)
    for r in rows.tolist():
        net, role, kind = int(a.net[r]), int(a.role[r]), int(a.kind[r])
        iface = a.iface[r]
        primary = net == nw.INBAND and role == netaddr.HOST and kind in primary_kinds and iface == "bond0"
        oob = net == nw.OOB and (role == netaddr.HOST or kind == nw.SWITCH) and iface not in FURTHER_BMC  # a device's one out-of-band address: its first BMC port's
        yield (f"{text[r]}/{plen[r]}", f"{site}.{nw.NETWORK_NAMES[net]}", ADDRESS_STATUS, "anycast" if role == netaddr.GATEWAY else "", pre + dev[r], iface, "true" if primary else "false", "true" if oob else "false", {netaddr.GATEWAY: "virtual gateway (VRR) of the leaf pair", netaddr.SVI: "SVI"}.get(role, ""))


def interface_rows(site: str, n: nw.Networks, v: NetworkView, catalog=None, addrs=None) -> Iterator[tuple]:
    """The plan's bonds and SVIs (``addrs``), then every cabled port of every device (by device, then port), then
    each network switch's unused ports, disabled; the last column (``lag``) names the bond a port joins.

    Devices in the order: nodes, compute switches, the networks' switches, then the
    other kinds; a device's ports by network, then port number.
    """
    pre = site + "."
    c = n.cables
    types = cable_port_types(n, catalog)
    types = types + types
    sku_type = {s: t for s, t in zip((s.sku for s in n.switches), (t for t in _switch_types(n, catalog)))}
    (ad, _, ap), (zd, _, zp) = v.a, v.z
    kind = np.concatenate([c.a_kind, c.z_kind]).astype(np.int64)
    idx = np.concatenate([c.a_idx, c.z_idx])
    port = np.concatenate([c.a_port, c.z_port]).astype(np.int64)
    dev = np.concatenate([ad, zd])
    pname = ap + zp
    peer = np.concatenate([zd, ad])
    ppname = zp + ap
    speed = np.concatenate([c.speed, c.speed]).astype(np.int64)
    net = np.concatenate([c.net, c.net]).astype(np.int64)
    lag: dict[tuple[str, str], str] = {}
    if addrs is not None:
        virtual, lag = virtual_interface_rows(site, addrs, v)
        yield from virtual
    order = {nw.NODE: 0, nw.FABRIC: 1, nw.SWITCH: 2, nw.MGMT: 3, nw.UFM: 4, nw.PDU: 5, nw.RACKDEV: 6, nw.TARGETS: 7, nw.NFS: 8, nw.CORE: 9}
    rank = np.asarray([order[k] for k in range(len(nw.KIND_NAMES))], np.int64)[kind]
    # within a device: by network, then port number (a node's storage, in-band, BMC ports)
    o = np.lexsort((port, net, idx, rank))
    used: dict[int, set[int]] = {}
    for j in o.tolist():
        k = int(kind[j])
        if k == nw.SWITCH:
            used.setdefault(int(idx[j]), set()).add(int(port[j]))
        g = int(speed[j])
        yield (pre + dev[j], pname[j], types[j], "true", g * 1_000_000, f"{nw.NETWORK_NAMES[int(net[j])]}: to {peer[j]} {ppname[j]}", lag.get((dev[j], pname[j]), "") if int(net[j]) == nw.INBAND else "")
    for i, s in enumerate(n.switches):
        if s.compute >= 0:  # a collapsed core's unused cages are the compute fabric's ports
            continue
        taken = used.get(i, set())
        for p in range(1, s.radix + 1):
            if p not in taken:
                yield (pre + s.name, f"p{p}", sku_type[s.sku] or port_type(s.speed), "false", s.speed * 1_000_000, "unused", "")


def cable_rows(site: str, n: nw.Networks, v: NetworkView, nlay) -> Iterator[tuple]:
    """One row per cable, in ``networks-cabling.csv`` order; 1 GbE cables ``cat6``, others' type left to the catalog."""
    c = n.cables
    (ad, _, ap), (zd, _, zp) = v.a, v.z
    pre = site + "."
    lengths = nlay.length_m.tolist() if nlay is not None else None  # NaN: an end outside the plan, no length
    for i in range(len(c)):
        net, role, g = nw.NETWORK_NAMES[int(c.net[i])], nw.ROLE_NAMES[int(c.role[i])], int(c.speed[i])
        length = f"{lengths[i]:g}" if lengths is not None and lengths[i] == lengths[i] else ""
        yield (site, pre + ad[i], TERMINATION, ap[i], site, pre + zd[i], TERMINATION, zp[i], "cat6" if g <= 1 else "", STATUS, length, "m" if length else "", f"{site}/{net}-{i + 1}", f"{net} {role}")


def shared_files(ctx, switch_u: int) -> dict[str, tuple[tuple[str, ...], list[tuple]]]:
    """:func:`shared_rows` as ``netbox/shared/`` files, named and numbered as :func:`topogen.exports.netbox.dcim.shared_rows` names them."""
    cols = dict(dcim.SHARED_KINDS)
    order = {"manufacturer": 1, "device-role": 2, "rack-role": 2, "device-type": 3}
    out = {}
    for kind, row in sorted(shared_rows(ctx, switch_u).values(), key=lambda x: (order[x[0]], x[0], x[1])):
        tag = slug(f"{row[0]}-{row[1]}") if kind == "device-type" else slug(row[1])
        out[f"shared/{order[kind]}-{kind}-{tag}.csv"] = (cols[kind], [row])
    return out


def export(ctx, dest: Path, part: str | None = None) -> list[Path]:
    """The compute fabric's NetBox files, then the other networks' (see the module docstring); ``part`` as there."""
    paths = dcim.export(ctx, dest, part)
    nets = getattr(ctx, "networks", None) or {}
    if not nets:
        return paths
    lays = getattr(ctx, "network_layouts", None) or {}
    spec = ctx.spec
    switch_u = dcim._heights(spec)[1]
    if part in (None, dcim.PARTS[0]) and spec.arches[0] in ctx.fabrics:  # with the compute fabric's shared objects
        pre = arch_dir(dest, "netbox")
        for fname, (cols, rows) in shared_files(ctx, switch_u).items():
            p = pre / fname
            if not p.exists():  # the compute fabric's file of the same object (a manufacturer) stands
                write_csv(p, cols, rows)
                paths.append(p)
    for arch, n in nets.items():
        if arch not in ctx.fabrics:
            continue
        site = site_name(spec, arch)
        d = arch_dir(dest, arch, "netbox")
        v = NetworkView(n, ctx.fabrics[arch])
        nlay = lays.get(arch)
        if part in (None, dcim.PARTS[0]):
            if nlay is not None and nlay.racks:
                paths.extend(write_parts(d, "networks-racks", RACK_COLUMNS, management_rack_rows(site, nlay, nlay_rack_u(ctx))))
            paths.extend(write_parts(d, "networks-devices", DEVICE_COLUMNS, device_rows(site, n, v, nlay, switch_u, getattr(ctx, "catalog", None))))
        addrs = (getattr(ctx, "network_addresses", None) or {}).get(arch)
        for stem, cols, rows in (("interfaces", NETWORK_INTERFACE_COLUMNS, lambda: interface_rows(site, n, v, getattr(ctx, "catalog", None), addrs)), ("cables", CABLE_COLUMNS, lambda: cable_rows(site, n, v, nlay))):
            if part in (None, stem):
                paths.extend(write_parts(d, f"networks-{stem}", cols, rows()))
        if addrs is not None and part in (None, "cables"):  # the address plan imports after every interface
            paths.extend(write_parts(d, "networks-vrfs", VRF_COLUMNS, vrf_rows(site)))
            paths.extend(write_parts(d, "networks-prefixes", PREFIX_COLUMNS, prefix_rows(site, addrs, spec.addressing or ADDRESSING_DEFAULT)))
            paths.extend(write_parts(d, "networks-ip-addresses", ADDRESS_COLUMNS, address_rows(site, addrs, v)))
    return paths


def nlay_rack_u(ctx) -> int:
    lay = next(iter((getattr(ctx, "layouts", None) or {}).values()), None)
    return lay.spec.rack_u if lay is not None else 48


