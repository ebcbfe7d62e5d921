"""The address plan of the in-band and out-of-band (OOB) networks (spec ``networks:``), from the ``addressing:`` pools.

:func:`plan` numbers the devices of a :class:`~topogen.fabric.networks.Networks` column-wise
(numpy: 131,072 GPUs' networks in well under a second), deterministic, from the
``inband`` and ``oob`` pools of :class:`~topogen.spec.addressing.AddressingSpec`
(defaults ``10.16.0.0/12`` and ``10.32.0.0/12``, apart from the compute pools).

In-band: **one subnet per in-band leaf pair** (per leaf when the node ports are not
bonded), every subnet alike in size (the smallest power of two that holds the fullest
pair), subnet ``i`` at ``inband + i x size``, on VLAN ``inband_vlan``:

* ``.1`` the virtual gateway (VRR: the same address and MAC on both leaves of the pair),
  ``.2`` and ``.3`` the two leaves' own SVI addresses (unbonded: ``.1`` is the leaf's SVI);
* then, in wiring order (the leaves' port order): each node's ``bond0`` (LACP over its
  in-band ports to the pair), each management server's ``bond0``, the NFS appliance's and,
  with a converged storage design, the storage targets' bonds (``bond<k>``, one per port
  pair) and the nodes' storage bond (``bond1``). Unbonded ports take an address each, on
  the port (``inb0``...).

OOB: **one subnet per OOB access switch**, alike in size (a power of two above the
switch's ports plus its network, gateway and broadcast addresses), subnet ``i`` at ``oob +
i x size``: ``.1`` the switch's own SVI (``vlan1``), the gateway of the subnet and the
switch's management address; then the device on port ``p`` takes ``.(p + 1)``: every node's
BMC, every switch of every network (the compute fabric's included) on its ``mgmt0``, the
management servers, fabric managers and PDUs. An address tells the port it hangs on.

:func:`audit` proves the plan (no duplicate address, every address inside its subnet,
no two subnets overlapping, no subnet in a compute pool); :func:`plan` runs it. A pool too
small for its subnets raises :class:`~topogen.util.errors.InputError` naming
``addressing.inband`` or ``addressing.oob`` and the prefix length needed (exit 2).

Columns of :class:`Addresses` (one row per address, in-band first, each network by subnet
then address): ``net`` (``INBAND``/``OOB``), ``kind`` and ``idx`` (the device, as in the
networks' cable ends; ``SWITCH`` for the networks' own switches), ``iface`` (text),
``subnet`` (row in that network's :class:`Subnets`), ``addr`` (uint32), ``role``
(:data:`ROLES`), ``members`` (a bond's ports, as the cabling names them; ``()`` elsewhere).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import numpy as np

from topogen.config.addressing import ip_text, pow2ceil
from topogen.fabric import networks as nw
from topogen.spec.addressing import DEFAULT, NETWORK_POOLS, POOLS, AddressingSpec
from topogen.util.errors import InputError, Problem

ROLES = ("gateway", "svi", "host")  # the virtual (VRR) gateway of a leaf pair, a switch's own SVI, a device
GATEWAY, SVI, HOST = range(3)
OOB_VLAN = 1  # the OOB access switches' one bridge VLAN (untagged on every access port)
_INBAND_ROLES = (nw.R_NODE, nw.R_MGMT, nw.R_NFS, nw.R_NSTOR, nw.R_TARGET)


@dataclass(frozen=True, slots=True)
class Subnets:
    """The subnets of one network, alike in size: ``base[i]`` (uint32), ``plen``, ``gateway[i]``, ``switches[i]``.

    ``switches[i]``: the network switches (indices into ``Networks.switches``) holding the
    subnet's SVI (a leaf pair, one leaf, or one OOB access switch); ``hosts[i]``: devices
    addressed in it (gateway and SVIs not counted); ``vlan``: its VLAN (0: none named).
    """

    net: int
    base: np.ndarray
    plen: int
    gateway: np.ndarray
    switches: tuple[tuple[int, ...], ...]
    hosts: np.ndarray
    vlan: int

    def __len__(self) -> int:
        return len(self.base)

    @property
    def size(self) -> int:
        return 1 << (32 - self.plen)

    def free(self) -> np.ndarray:
        """Usable addresses left in each subnet (network and broadcast addresses excluded)."""
        used = self.hosts + np.asarray([1 + (len(s) if len(s) > 1 else 0) for s in self.switches], np.int64)
        return self.size - 2 - used


@dataclass(frozen=True, slots=True)
class Addresses:
    """Every address of the in-band and OOB networks (see the module docstring for the columns)."""

    net: np.ndarray
    kind: np.ndarray
    idx: np.ndarray
    iface: np.ndarray
    subnet: np.ndarray
    addr: np.ndarray
    role: np.ndarray
    members: np.ndarray  # object: the ports a bond joins (tuple of port names), () elsewhere
    subnets: dict[int, Subnets]

    def __len__(self) -> int:
        return len(self.addr)

    def of(self, net: int) -> np.ndarray:
        return np.flatnonzero(self.net == net)

    def host(self, net: int, kind: int, iface: str | None = None) -> dict[int, int]:
        """``{device idx: row}`` of the first address of each device of ``kind`` in ``net`` (on ``iface`` when given)."""
        m = (self.net == net) & (self.kind == kind) & (self.role == HOST)
        rows = np.flatnonzero(m)
        if iface is not None:
            rows = rows[self.iface[rows] == iface]
        out: dict[int, int] = {}
        for r, i in zip(rows.tolist(), self.idx[rows].tolist()):
            out.setdefault(i, r)
        return out

    def prefix_len(self, rows: np.ndarray) -> np.ndarray:
        plens = np.zeros(len(rows), np.int64)
        for net, s in self.subnets.items():
            plens[self.net[rows] == net] = s.plen
        return plens

    def gateways(self, rows: np.ndarray) -> np.ndarray:
        """Gateway (uint32) of each address's subnet."""
        out = np.zeros(len(rows), np.uint32)
        for net, s in self.subnets.items():
            m = self.net[rows] == net
            out[m] = s.gateway[self.subnet[rows][m]]
        return out


def _slot(hosts: int, reserved: int) -> int:
    """Addresses of one subnet: a power of two holding ``hosts`` devices, ``reserved`` gateway/SVI addresses, network and broadcast."""
    return max(4, int(pow2ceil(hosts + reserved + 2)))


def _inband(n: nw.Networks) -> tuple[list[tuple[int, ...]], np.ndarray, dict[str, np.ndarray]]:
    """In-band subnets' switches, each leaf's subnet, and the host units in wiring order (first cable of each)."""
    leaves = [i for i, s in enumerate(n.switches) if s.network == nw.INBAND and s.role in ("leaf", "management-leaf")]  # a management leaf: a subnet of its own
    bonded = n.plan.net.inband_ports.bonded
    groups: dict[int, list[int]] = {}
    for i in leaves:
        key = n.switches[i].pair if bonded and n.switches[i].pair >= 0 else -1 - i
        groups.setdefault(key, []).append(i)
    subnet_switches = list(groups.values())
    subnet_of = np.full(len(n.switches), -1, np.int64)
    for k, members in enumerate(subnet_switches):
        subnet_of[members] = k
    c = n.cables
    rows = np.flatnonzero((c.net == nw.INBAND) & np.isin(c.role, _INBAND_ROLES) & (c.z_kind == nw.SWITCH))
    rows = rows[subnet_of[c.z_idx[rows]] >= 0]
    rows = rows[np.lexsort((c.z_port[rows], c.z_idx[rows]))] if len(rows) else rows
    kind, idx, role, port = c.a_kind[rows].astype(np.int64), c.a_idx[rows], c.role[rows].astype(np.int64), c.a_port[rows].astype(np.int64)
    whole = np.isin(role, (nw.R_NODE, nw.R_MGMT, nw.R_NSTOR))  # a node's or server's ports of one role form one bond
    unit = np.where(whole, 0, port // 2) if bonded else port
    key = ((kind * 16 + role) * (int(idx.max()) + 1 if len(idx) else 1) + idx) * (int(unit.max()) + 1 if len(unit) else 1) + unit
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    names = [n.port_name(int(k), int(p), nw.INBAND, int(ro)) for k, p, ro in zip(kind.tolist(), port.tolist(), role.tolist())]
    ports: list[list[str]] = [[] for _ in range(len(first))]
    for j, u in enumerate(inv.tolist()):
        ports[u].append(names[j])
    o = np.argsort(first, kind="stable")  # one address per unit, at its first cable in wiring order
    first = first[o]
    members = np.empty(len(first), dtype=object)
    members[:] = [tuple(sorted(ports[u], key=lambda x: (len(x), x))) if bonded else () for u in o.tolist()]
    r = rows[first]
    iface = np.empty(len(r), dtype=object)
    if bonded:
        iface[:] = [f"bond{1 if ro == nw.R_NSTOR else 0}" if w else f"bond{u}" for ro, w, u in zip(role[first].tolist(), whole[first].tolist(), unit[first].tolist())]
    else:
        iface[:] = [names[j] for j in first.tolist()]
    return subnet_switches, subnet_of, {"kind": kind[first], "idx": idx[first], "subnet": subnet_of[c.z_idx[r]], "iface": iface, "members": members}


def _oob(n: nw.Networks) -> tuple[list[tuple[int, ...]], np.ndarray, dict[str, np.ndarray], int]:
    """OOB subnets' switches, each access switch's subnet, the managed ports (device, port on the switch)."""
    access = [i for i, s in enumerate(n.switches) if s.network == nw.OOB]
    subnet_of = np.full(len(n.switches), -1, np.int64)
    subnet_of[access] = np.arange(len(access))
    c = n.cables
    rows = np.flatnonzero((c.role == nw.R_MPORT) & (c.z_kind == nw.SWITCH))
    rows = rows[np.lexsort((c.z_port[rows], subnet_of[c.z_idx[rows]]))] if len(rows) else rows
    iface = np.asarray([n.port_name(int(k), int(p), nw.OOB, nw.R_MPORT) for k, p in zip(c.a_kind[rows].tolist(), c.a_port[rows].tolist())], dtype=object)
    radix = max((n.switches[i].radix for i in access), default=1)
    return [(i,) for i in access], subnet_of, {"kind": c.a_kind[rows].astype(np.int64), "idx": c.a_idx[rows], "subnet": subnet_of[c.z_idx[rows]], "iface": iface, "port": c.z_port[rows].astype(np.int64)}, radix


def needs(n: nw.Networks) -> dict[str, tuple[int, int, str]]:
    """``{pool: (addresses, subnet size, what for)}`` of the in-band and OOB pools for ``n``."""
    ib_sw, _, ib = _inband(n)
    per = np.bincount(ib["subnet"], minlength=len(ib_sw)) if ib_sw else np.zeros(0, np.int64)
    reserved = 3 if any(len(s) > 1 for s in ib_sw) else 1
    ib_slot = _slot(int(per.max()) if len(per) else 0, reserved)
    oob_sw, _, _, radix = _oob(n)
    oob_slot = _slot(radix, 1)
    what = "leaf pair" if reserved == 3 else "leaf"
    return {
        "inband": (len(ib_sw) * ib_slot, ib_slot, f"{_subnets(len(ib_sw))} of {ib_slot} addresses, one per in-band {what}, the fullest holding {int(per.max()) if len(per) else 0} devices"),
        "oob": (len(oob_sw) * oob_slot, oob_slot, f"{_subnets(len(oob_sw))} of {oob_slot} addresses, one per OOB access switch of {radix} ports"),
    }


def _subnets(k: int) -> str:
    return f"{k:,} subnet" + ("" if k == 1 else "s")


def check_pools(n: nw.Networks, spec: AddressingSpec, arch: str = "") -> list[Problem]:
    """The in-band and OOB pools too small for ``n``, as problems naming the prefix length needed."""
    out = []
    for pool, (need, _, why) in needs(n).items():
        net = spec.pool(pool)
        if need > net.num_addresses:
            plen = 32 - (int(pow2ceil(need)) - 1).bit_length()
            label = {"inband": "in-band", "oob": "OOB"}[pool]
            out.append(Problem(f"addressing.{pool}", f"pool {pool} {net} holds {net.num_addresses:,} addresses; the {label} network{' of ' + arch if arch else ''} needs {need:,} ({why})", f"give a /{plen} or larger"))
    return out


def plan(n: nw.Networks, spec: AddressingSpec | None = None, arch: str = "") -> Addresses:
    """The :class:`Addresses` of ``n`` from ``spec``'s pools (the module docstring's rules); InputError when a pool is short."""
    spec = spec or DEFAULT
    problems = check_pools(n, spec, arch)
    if problems:
        raise InputError(problems)
    need = needs(n)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("net", "kind", "idx", "iface", "subnet", "addr", "role", "members")}

    def add(net: int, kind, idx, iface, subnet, addr, role, members=None) -> None:
        m = len(addr)
        mem = np.empty(m, dtype=object)
        mem[:] = [()] * m if members is None else list(members)
        cols["members"].append(mem)
        for k, v, dt in (("net", net, np.int8), ("kind", kind, np.int8), ("idx", idx, np.int64), ("subnet", subnet, np.int64), ("role", role, np.int8)):
            a = np.asarray(v, dt)
            cols[k].append(np.full(m, a, dt) if a.ndim == 0 else a)
        cols["iface"].append(np.asarray(iface, dtype=object) if not isinstance(iface, str) else np.full(m, iface, dtype=object))
        cols["addr"].append(np.asarray(addr, np.uint32))

    subnets: dict[int, Subnets] = {}
    # in-band
    ib_sw, _, ib = _inband(n)
    size = need["inband"][1]
    base = np.uint32(int(spec.pool("inband").network_address)) + (np.arange(len(ib_sw), dtype=np.uint32) * np.uint32(size))
    pairs = np.asarray([len(s) > 1 for s in ib_sw], bool)
    vlan_if = f"vlan{spec.inband_vlan}"
    for k, members in enumerate(ib_sw):  # the gateway and the leaves' SVIs, subnet by subnet
        if len(members) > 1:
            add(nw.INBAND, nw.SWITCH, members, vlan_if, k, [base[k] + 1] * len(members), GATEWAY)
            add(nw.INBAND, nw.SWITCH, members, vlan_if, k, base[k] + 2 + np.arange(len(members), dtype=np.uint32), SVI)
        else:
            add(nw.INBAND, nw.SWITCH, members, vlan_if, k, [base[k] + 1], SVI)
    sub = ib["subnet"]
    order = np.argsort(sub, kind="stable")
    starts = np.searchsorted(sub[order], sub[order], side="left")
    pos = np.empty(len(sub), np.int64)
    pos[order] = np.arange(len(sub)) - starts
    first_host = np.where(pairs, 2 + 2, 2)[sub] if len(sub) else np.zeros(0, np.int64)  # after the gateway and both SVIs (a pair), or the SVI
    addr = base[sub].astype(np.int64) + first_host + pos if len(sub) else np.zeros(0, np.int64)
    add(nw.INBAND, ib["kind"][order], ib["idx"][order], ib["iface"][order], sub[order], addr[order], HOST, ib["members"][order])
    hosts = np.bincount(sub, minlength=len(ib_sw)) if len(ib_sw) else np.zeros(0, np.int64)
    subnets[nw.INBAND] = Subnets(nw.INBAND, base, 32 - (size - 1).bit_length(), (base + 1).astype(np.uint32), tuple(tuple(s) for s in ib_sw), hosts.astype(np.int64), spec.inband_vlan)
    # OOB
    oob_sw, _, oob, _ = _oob(n)
    size = need["oob"][1]
    base = np.uint32(int(spec.pool("oob").network_address)) + (np.arange(len(oob_sw), dtype=np.uint32) * np.uint32(size))
    sw = np.asarray([s[0] for s in oob_sw], np.int64)
    add(nw.OOB, nw.SWITCH, sw, f"vlan{OOB_VLAN}", np.arange(len(sw)), base + 1, SVI)
    add(nw.OOB, oob["kind"], oob["idx"], oob["iface"], oob["subnet"], base[oob["subnet"]].astype(np.int64) + 1 + oob["port"], HOST)
    hosts = np.bincount(oob["subnet"], minlength=len(oob_sw)) if len(oob_sw) else np.zeros(0, np.int64)
    subnets[nw.OOB] = Subnets(nw.OOB, base, 32 - (size - 1).bit_length(), (base + 1).astype(np.uint32), tuple(oob_sw), hosts.astype(np.int64), OOB_VLAN)
    # in-band first, then OOB; each by subnet, then address
    arr = {k: np.concatenate(v) if v else np.zeros(0) for k, v in cols.items()}
    o = np.lexsort((arr["addr"], arr["subnet"], arr["net"]))
    out = Addresses(**{k: arr[k][o] for k in cols}, subnets=subnets)
    problems = audit(out, spec)
    if problems:
        raise AssertionError("the in-band/OOB address plan broke its own rules: " + "; ".join(problems[:5]))
    return out


def audit(a: Addresses, spec: AddressingSpec) -> list[str]:
    """What is wrong with the plan ``a``, in words (empty: sound).

    Every address inside its subnet and neither its network nor its broadcast address; no
    address twice, except a pair's virtual gateway (one per leaf of the pair); no two
    subnets overlapping; no subnet inside a compute pool (``loopbacks``, ``fabric``, ``gpus``)
    or outside its own pool.
    """
    out: list[str] = []
    for net, s in a.subnets.items():
        rows = a.of(net)
        name = nw.NETWORK_NAMES[net]
        if not len(rows):
            continue
        mask = np.uint32((0xFFFFFFFF << (32 - s.plen)) & 0xFFFFFFFF)
        sub = a.subnet[rows]
        bad = (a.addr[rows] & mask) != s.base[sub]
        edge = (a.addr[rows] == s.base[sub]) | (a.addr[rows] == s.base[sub] + np.uint32(s.size - 1))
        for r in rows[bad | edge][:3].tolist():
            out.append(f"{name} address {ip_text(a.addr[[r]])[0]} is not a host address of its subnet {ip_text(s.base[[a.subnet[r]]])[0]}/{s.plen}")
    single = a.role != GATEWAY
    keys = np.concatenate([a.addr[single].astype(np.int64), np.unique(a.addr[~single]).astype(np.int64)])
    u, cnt = np.unique(keys, return_counts=True)
    for x in u[cnt > 1][:3].tolist():
        out.append(f"address {ipaddress.IPv4Address(int(x))} is given twice")
    gw = np.unique(a.addr[~single])
    if len(np.intersect1d(gw, a.addr[single])):
        out.append("a virtual gateway is also a device's address")
    spans = []
    for net, s in a.subnets.items():
        pool = spec.pool(NETWORK_POOLS[0] if net == nw.INBAND else NETWORK_POOLS[1])
        lo, hi = int(pool.network_address), int(pool.broadcast_address)
        spans += [(int(b), int(b) + s.size - 1, nw.NETWORK_NAMES[net]) for b in s.base.tolist()]
        if len(s.base) and (int(s.base.min()) < lo or int(s.base.max()) + s.size - 1 > hi):
            out.append(f"a {nw.NETWORK_NAMES[net]} subnet is outside its pool {pool}")
    spans.sort()
    for (a0, a1, n0), (b0, b1, n1) in zip(spans, spans[1:]):
        if b0 <= a1:
            out.append(f"subnets {ipaddress.IPv4Address(a0)} ({n0}) and {ipaddress.IPv4Address(b0)} ({n1}) overlap")
    for key in POOLS:
        p = spec.pool(key)
        lo, hi = int(p.network_address), int(p.broadcast_address)
        if any(b0 <= hi and lo <= b1 for b0, b1, _ in spans):
            out.append(f"a subnet lies in the compute pool {key} {p}")
    return out


NodeIface = tuple[str, str, str, tuple[str, ...]]  # (interface, a.b.c.d/len, gateway, member ports; () when the interface is a port)


def node_interfaces(a: Addresses, n: nw.Networks) -> list[tuple[NodeIface, ...]]:
    """Each compute node's in-band interfaces, in node order: ``bond0`` over its in-band ports (``bond1`` over its
    storage ports on a converged design), or each unbonded port with its own address; the first carries the default route."""
    rows = np.flatnonzero((a.net == nw.INBAND) & (a.kind == nw.NODE) & (a.role == HOST))
    rows = rows[np.lexsort((a.iface[rows].astype(str), a.idx[rows]))] if len(rows) else rows
    plen = a.subnets[nw.INBAND].plen if nw.INBAND in a.subnets else 32
    addr, gw = ip_text(a.addr[rows]), ip_text(a.gateways(rows))
    out: list[list[NodeIface]] = [[] for _ in range(n.plan.nodes)]
    for r, i, ad, g in zip(rows.tolist(), a.idx[rows].tolist(), addr.tolist(), gw.tolist()):
        name = a.iface[r]
        out[i].append((name, f"{ad}/{plen}", g, tuple(a.members[r])))
    return [tuple(x) for x in out]


def host_address(a: Addresses, net: int, kind: int, idx: int) -> str:
    """The dotted quad of device ``(kind, idx)``'s first address in ``net`` ("" when it has none)."""
    m = np.flatnonzero((a.net == net) & (a.kind == kind) & (a.idx == idx) & (a.role == HOST))
    return str(ip_text(a.addr[m[:1]])[0]) if len(m) else ""


__all__ = ["node_interfaces", "host_address", "Addresses", "Subnets", "plan", "audit", "needs", "check_pools", "ROLES", "GATEWAY", "SVI", "HOST"]
