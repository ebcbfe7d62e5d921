"""Host side per compute node: netplan with per-NIC source routing, and the NCCL variables that keep each GPU on its rail NIC.

A node is ``gpus_per_node`` consecutive GPUs (:class:`topogen.naming.NodeNames`,
the NetBox device); its NIC ports are ``gpu<rank>-nic<q>`` (NetBox's interface
names, the Linux interface names here; at most 15 characters, as Linux
allows), each on the link the plan addresses (:mod:`topogen.config.addressing`).

**netplan** (``<node>.yaml``, ``network: version 2``): every NIC port gets its
address, MTU 4200 (as the SONiC ports: RoCE's 4096-byte MTU and its headers) and the standard multi-NIC RoCE setup: its own routing
table ``TABLE_BASE + i`` (``i`` the port's index in the node) with the
on-link subnet and the route to the GPU pool (rail-only: its rail's block)
through its leaf, and a policy rule ``from <its address>`` into that table,
so replies and RDMA-CM traffic leave by the NIC that owns the address. The
main table holds only the on-link subnets: no default route through a rail.

With the in-band network (spec ``networks:``, :mod:`topogen.config.netaddr`) each node
also gets ``bonds: bond0`` over its in-band ports (``inb0``, ``inb1``: declared under
``ethernets`` without an address), LACP (``mode: 802.3ad``, ``lacp-rate: fast``,
``transmit-hash-policy: layer3+4``, MII monitor 100 ms) to its MLAG leaf pair, with its
in-band address and the **default route** via the pair's gateway; a converged storage
design adds ``bond1`` over the storage ports (an address, no route). Unbonded in-band
ports each take their address, the first the default route. ``NCCL_SOCKET_IFNAME`` then
names ``bond0`` (the in-band interface).

**NCCL** (``<node>.nccl.sh``, sourced by each rank's launcher): the HCA of
each NIC port is ``mlx5_<i>`` (PCI order, port ``i`` of the node), the GID
index 3 (RoCE v2, IPv4), ``NCCL_CROSS_NIC=0`` (a ring stays on one rail),
and, from the rank's local index (``LOCAL_RANK``, ``SLURM_LOCALID`` or
``OMPI_COMM_WORLD_LOCAL_RANK``), ``NCCL_IB_HCA==<its NIC(s)>`` (exact
names): GPU ``r`` uses only the NIC of rail ``r``. ``NCCL_SOCKET_IFNAME``
(bootstrap TCP) names the node's management interface, not a rail NIC
(``MGMT_IF``, change to the site's).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import yaml

from topogen.config.addressing import ip_text, plan
from topogen.config.scalars import int_text, yaml_scalar, yaml_strings
from topogen.fabric.naming import NodeNames
from topogen.fabric.view import view

TABLE_BASE = 101
MTU = 4200  # the switch ports' RoCE MTU (SONiC config_db.json): a 4096-byte RDMA MTU and its headers
GID_INDEX = 3
MGMT_IF = "eth0"
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def nodes(fabric) -> NodeNames:
    s = fabric.spec
    return NodeNames.of(s)


def node_links(fabric) -> tuple[np.ndarray, np.ndarray]:
    """GPU link rows in node order (GPU, then NIC port), and the start of each node's rows (``len`` nodes + 1)."""
    L = fabric.links
    g = np.flatnonzero(L.a_dev < fabric.gpus)
    g = g[np.lexsort((L.a_port[g], L.a_dev[g]))]
    nn = nodes(fabric)
    node = L.a_dev[g] // nn.per_node
    return g, np.searchsorted(node, np.arange(nn.nodes + 1), side="left")


BOND_PARAMETERS = {"mode": "802.3ad", "lacp-rate": "fast", "mii-monitor-interval": 100, "transmit-hash-policy": "layer3+4"}


def inband_parts(ifaces) -> tuple[dict, dict]:
    """``(ethernets, bonds)`` entries of a node's in-band interfaces (:func:`topogen.config.netaddr.node_interfaces`)."""
    eth: dict = {}
    bonds: dict = {}
    for j, (name, cidr, gw, members) in enumerate(ifaces):
        body: dict = {}
        if members:
            for m in members:
                eth[m] = {}
            body["interfaces"] = list(members)
        body["addresses"] = [cidr]
        if j == 0:
            body["routes"] = [{"to": "default", "via": gw}]
        if members:
            body["parameters"] = dict(BOND_PARAMETERS)
            bonds[name] = body
        else:
            eth[name] = body
    return eth, bonds


def inband_texts(ifaces) -> tuple[str, str]:
    """:func:`inband_parts` as the YAML text ``yaml.dump`` gives (indented for ``network:``): ethernets lines, bonds lines."""
    eth, bonds = [], []
    q = yaml_scalar
    for j, (name, cidr, gw, members) in enumerate(ifaces):
        lines = []
        if members:
            eth += [f"    {q(m)}: {{}}\n" for m in members]
            lines.append("      interfaces:\n" + "".join(f"      - {q(m)}\n" for m in members))
        lines.append(f"      addresses:\n      - {q(cidr)}\n")
        if j == 0:
            lines.append(f"      routes:\n      - to: default\n        via: {q(gw)}\n")
        if members:
            lines.append("      parameters:\n" + "".join(f"        {k}: {v}\n" for k, v in BOND_PARAMETERS.items()))
            bonds.append(f"    {q(name)}:\n" + "".join(lines))
        else:
            eth.append(f"    {q(name)}:\n" + "".join(lines))
    return "".join(eth), "".join(bonds)


def _system_ports(system, per_node_ports: int) -> tuple[list[str], list[str]]:
    """The OS names to match and the HCA names of a node's compute ports (in node port order), from its system definition (:mod:`topogen.spec.systems`); empty where it does not say."""
    if system is None or len(system.compute) != per_node_ports:
        return [], []
    os_names = [p.os_name for p in system.compute] if system.renames else []
    hcas = [p.hca for p in system.compute] if all(p.hca for p in system.compute) else []
    return os_names, hcas


def generate(fabric, inband=None, system=None) -> Iterator[tuple[str, dict, str]]:
    """Yield ``(node name, netplan document, nccl.sh text)`` for every node, in node order; ``inband``: each node's in-band interfaces; ``system``: the node's definition (its ports' OS names and HCAs)."""
    ad = plan(fabric)
    L = fabric.links
    v = view(fabric)
    nn = nodes(fabric)
    rows, starts = node_links(fabric)
    ifname = v.interfaces(L.a_dev[rows], L.a_port[rows])
    mine = ip_text(ad.a_addr[rows])
    gw = ip_text(ad.z_addr[rows])
    plen = ad.prefix_len[rows].astype(np.int64)
    net = ip_text(ad.a_addr[rows] & (np.uint32(0xFFFFFFFF) << (32 - plen).astype(np.uint32)).astype(np.uint32))
    route = ip_text(ad.gpu_route[rows])
    rlen = ad.gpu_route_len[rows].astype(np.int64)
    rank = (L.a_dev[rows] % fabric.hb_domain).astype(np.int64)
    per_node = nn.per_node
    os_names, hca_names = _system_ports(system, int(starts[1] - starts[0]) if nn.nodes else 0)
    for i in range(nn.nodes):
        lo, hi = int(starts[i]), int(starts[i + 1])
        eth = {}
        hcas: dict[int, list[str]] = {}
        for j, r in enumerate(range(lo, hi)):
            t = TABLE_BASE + j
            ident = {"match": {"name": os_names[j]}, "set-name": str(ifname[r])} if os_names else {}
            eth[str(ifname[r])] = {
                **ident,
                "addresses": [f"{mine[r]}/{plen[r]}"],
                "mtu": MTU,
                "routes": [
                    {"to": f"{net[r]}/{plen[r]}", "scope": "link", "table": t},
                    {"to": f"{route[r]}/{rlen[r]}", "via": str(gw[r]), "table": t},
                ],
                "routing-policy": [{"from": f"{mine[r]}/32", "table": t, "priority": 1000 + j}],
            }
            local = int(L.a_dev[rows[r]] % per_node)
            hcas.setdefault(local, []).append(hca_names[j] if hca_names else f"mlx5_{j}")
        bonds: dict = {}
        if inband is not None:
            more, bonds = inband_parts(inband[i])
            eth.update(more)
        doc = {"network": {"version": 2, "renderer": "networkd", "ethernets": eth}}
        if bonds:
            doc["network"]["bonds"] = bonds
        name = nn.name(i)
        mgmt_if = inband[i][0][0] if inband is not None and inband[i] else MGMT_IF
        cases = "".join(f"    {k}) export NCCL_IB_HCA=={','.join(h)} ;;  # rail {int(rank[lo]) + k}\n" for k, h in sorted(hcas.items()))
        sh = (
            f"# NCCL variables for {name} ({fabric.arch}), written by topogen: source from each rank's launcher\n"
            f"export NCCL_IB_GID_INDEX={GID_INDEX}\nexport NCCL_CROSS_NIC=0\nexport NCCL_SOCKET_IFNAME={mgmt_if}\n"
            f"export NCCL_IB_HCA=={','.join(h for k in sorted(hcas) for h in hcas[k])}  # every rail NIC; narrowed per rank below\n"
            'case "${LOCAL_RANK:-${SLURM_LOCALID:-${OMPI_COMM_WORLD_LOCAL_RANK:-}}}" in\n'
            f"{cases}esac\n"
        )
        yield name, doc, sh


def netplan_text(name: str, doc: dict) -> str:
    """``yaml.dump`` of one node's netplan document: the definition :func:`generate_texts` must equal."""
    return f"# netplan of {name}, written by topogen\n" + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


def reference_texts(fabric, inband=None, system=None) -> Iterator[tuple[str, str, str]]:
    """:func:`generate_texts` through ``yaml.dump`` of :func:`generate`'s documents (slow; for tests)."""
    for name, doc, sh in generate(fabric, inband, system):
        yield name, netplan_text(name, doc), sh


def generate_texts(fabric, inband=None, system=None) -> Iterator[tuple[str, str, str]]:
    """Yield ``(node name, netplan text, nccl.sh text)`` for every node, in node order, written from columns.

    ``inband``: each node's in-band interfaces (:func:`topogen.config.netaddr.node_interfaces`), or None;
    ``system``: the node's definition (:mod:`topogen.spec.systems`): with its ports' OS names each
    stanza matches the port by name and sets topogen's (``match:`` + ``set-name:``), with its
    HCAs NCCL names them.

    Each NIC port's netplan stanza is one format template filled for every
    port at once; a node's file joins its ports. The NCCL file depends only
    on the node's first rail and its ports' local GPUs, so each distinct one
    is written once.
    """
    ad = plan(fabric)
    L = fabric.links
    v = view(fabric)
    nn = nodes(fabric)
    rows, starts = node_links(fabric)
    m = len(rows)
    node_of = np.repeat(np.arange(nn.nodes), np.diff(starts))
    j = np.arange(m) - starts[node_of] if m else np.zeros(0, np.int64)  # the port's index in its node
    plen = ad.prefix_len[rows].astype(np.int64)
    plen_t = np.array([str(i) for i in range(33)], dtype=object)
    mine = ip_text(ad.a_addr[rows])
    net = ip_text(ad.a_addr[rows] & (np.uint32(0xFFFFFFFF) << (32 - plen).astype(np.uint32)).astype(np.uint32))
    os_names, hca_names = _system_ports(system, int(starts[1] - starts[0]) if nn.nodes else 0)
    ifnames = yaml_strings(v.interfaces(L.a_dev[rows], L.a_port[rows]))
    if os_names and m:
        os_t = np.array([yaml_scalar(x) for x in os_names], dtype=object)[j]
        ident = "      match:\n        name: " + os_t + "\n      set-name: " + ifnames + "\n"
    else:
        ident = np.full(m, "", dtype=object)
    cols = [
        ifnames,
        yaml_strings(mine + "/" + plen_t[plen]) if m else mine,
        yaml_strings(net + "/" + plen_t[plen]) if m else net,
        int_text(TABLE_BASE + j),
        yaml_strings(ip_text(ad.gpu_route[rows]) + "/" + plen_t[ad.gpu_route_len[rows].astype(np.int64)]) if m else net,
        yaml_strings(ip_text(ad.z_addr[rows])),
        yaml_strings(mine + "/32") if m else mine,
        int_text(1000 + j),
        ident,
    ]
    template = (
        "    {0}:\n{8}      addresses:\n      - {1}\n      mtu: " + str(MTU) + "\n      routes:\n      - to: {2}\n        scope: link\n        table: {3}\n"
        "      - to: {4}\n        via: {5}\n        table: {3}\n      routing-policy:\n      - from: {6}\n        table: {3}\n        priority: {7}\n"
    )
    stanza = list(map(template.format, *(c.tolist() for c in cols)))
    local = (L.a_dev[rows] % nn.per_node).tolist()
    rank = (L.a_dev[rows] % fabric.hb_domain).tolist()
    bodies: dict[tuple, str] = {}
    for i in range(nn.nodes):
        lo, hi = int(starts[i]), int(starts[i + 1])
        name = nn.name(i)
        ports = "".join(stanza[lo:hi])
        bonds = ""
        mgmt_if = MGMT_IF
        if inband is not None:
            more, bonds = inband_texts(inband[i])
            ports += more
            mgmt_if = inband[i][0][0] if inband[i] else MGMT_IF
        text = f"# netplan of {name}, written by topogen\nnetwork:\n  version: 2\n  renderer: networkd\n" + (f"  ethernets:\n{ports}" if ports else "  ethernets: {}\n") + (f"  bonds:\n{bonds}" if bonds else "")
        key = (rank[lo] if hi > lo else 0, tuple(local[lo:hi]), mgmt_if)
        body = bodies.get(key)
        if body is None:
            body = bodies[key] = _nccl_body(key[0], key[1], mgmt_if, hca_names)
        yield name, text, f"# NCCL variables for {name} ({fabric.arch}), written by topogen: source from each rank's launcher\n" + body


def _nccl_body(rank0: int, local: tuple[int, ...], mgmt_if: str = MGMT_IF, hca_names: list[str] | None = None) -> str:
    """The NCCL variables of a node whose NIC port ``j`` serves local GPU ``local[j]`` (HCA ``hca_names[j]``, else ``mlx5_<j>``), its first GPU on rail ``rank0``."""
    hcas: dict[int, list[str]] = {}
    for j, g in enumerate(local):
        hcas.setdefault(g, []).append(hca_names[j] if hca_names else f"mlx5_{j}")
    cases = "".join(f"    {k}) export NCCL_IB_HCA=={','.join(h)} ;;  # rail {rank0 + k}\n" for k, h in sorted(hcas.items()))
    return (
        f"export NCCL_IB_GID_INDEX={GID_INDEX}\nexport NCCL_CROSS_NIC=0\nexport NCCL_SOCKET_IFNAME={mgmt_if}\n"
        f"export NCCL_IB_HCA=={','.join(h for k in sorted(hcas) for h in hcas[k])}  # every rail NIC; narrowed per rank below\n"
        'case "${LOCAL_RANK:-${SLURM_LOCALID:-${OMPI_COMM_WORLD_LOCAL_RANK:-}}}" in\n'
        f"{cases}esac\n"
    )
