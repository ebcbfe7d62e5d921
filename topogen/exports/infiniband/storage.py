"""``<arch>/ibnetdiscover/storage.topo`` and ``<arch>/opensm/storage/``: the InfiniBand storage fabric.

Written when the spec's storage network (``networks.storage``) is InfiniBand: its
switch SKU's catalog ``interface_type`` is ``infiniband-*`` (the QM9700 of a DGX
SuperPOD). The file follows the compute fabric's writer (:mod:`.ibnetdiscover`):
a ``switchguid=``/``caguid=`` line before each record, switches first (in the
networks' switch order), then the channel adapters; switch port ``p<n>`` is port
``[n]``, LIDs count from 1 in file order.

Every storage port of a node, management server, fabric manager or storage target
is a channel adapter of one port, described ``"<device> <port>"`` (``"dgx-h100-001
stor0"``, ``"targets p12"``): a DGX's storage ports sit on separate adapters, and the
reader (:mod:`topogen.asbuilt.ibnetdiscover`) turns that description back into the
plan's device and port, so ``topogen diff`` compares the file with
``networks-cabling.csv``. GUIDs: ``GUID_BASE + 2**39`` plus the file node's index
``<< 4`` (a CA's port GUID adds 1): bit 39 is clear in every compute GUID (device ids
below ``2**28`` in bits 4-31; a director's ASIC number + 1, below 128, in bits 32-38),
so none of them collide.

OpenSM (with ``--formats opensm``): ``opensm.conf`` routes with ftree, rooted at the
top tier's switches (``root_guids.conf``), the nodes' storage ports as compute nodes
(``cn_guids.conf``), the other ports (storage targets, management servers, fabric
managers) as I/O nodes (``io_guids.conf``, ``max_reverse_hops 0``: see
:data:`MAX_REVERSE_HOPS`), and one default partition (``partitions.conf``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from topogen.exports.files import arch_dir, open_output
from topogen.exports.infiniband import ibnetdiscover
from topogen.exports.infiniband.ibnetdiscover import GUID_BASE, ibsim_options, speed_name
from topogen.exports.infiniband.opensm_files import DEFAULT_PKEY, ETC
from topogen.fabric import networks as nw

STORAGE_GUID_BASE = GUID_BASE + (1 << 39)  # bit 39: clear in every compute GUID (see the module docstring)
SUBNET = "storage"
MAX_REVERSE_HOPS = 0
"""Reverse hops OpenSM's ftree may give an I/O node's routes (``max_reverse_hops``).

Every I/O node of this design (the targets on the target leaves, the management servers'
ports there, the fabric managers on node leaves) hangs off a leaf, as the compute nodes
do, so every pair of ports has an up-then-down path and no route needs a switch taken the
wrong way round. A credit above 0 adds no path; it makes ftree walk the counter-stream
ones too and count them as load: on ``dgx-h100-superpod`` ``max_reverse_hops 1`` moved
914 LFT entries and widened the spread of end-port LIDs per inter-switch port from
4..26 to 1..28 (and such routes can in theory close credit loops).
"""


def is_infiniband(n: nw.Networks, catalog) -> bool:
    """True when the storage network's switch SKU has an ``infiniband-*`` interface type in ``catalog``."""
    sw = n.switches_of(nw.STORAGE)
    if not sw or catalog is None:
        return False
    sku = next((q for q in catalog.switches if q.sku == sw[0].sku), None)
    return sku is not None and sku.interface_type.startswith("infiniband-")


class StorageSubnet:
    """The storage fabric as ibnetdiscover nodes: switches, then one-port channel adapters, with GUIDs and LIDs."""

    def __init__(self, n: nw.Networks, compute_names: list[str] | None = None) -> None:
        self.n = n
        c = n.cables
        rows = np.flatnonzero(c.net == nw.STORAGE)
        self.rows = rows
        sw_ids = [i for i, s in enumerate(n.switches) if s.network == nw.STORAGE]
        self.sw_node = {i: k for k, i in enumerate(sw_ids)}
        self.names: list[str] = [n.switches[i].name for i in sw_ids]
        self.radix: list[int] = [n.switches[i].radix for i in sw_ids]
        self.ca_node: dict[tuple[int, int, int], int] = {}
        names = {k: n.names(k, compute_names) for k in (nw.NODE, nw.MGMT, nw.UFM, nw.TARGETS)}
        self.cn: list[int] = []  # file nodes of the nodes' storage ports
        self.io: list[int] = []  # file nodes of every other port: targets, management servers, fabric managers
        ends = sorted({(int(c.a_kind[r]), int(c.a_idx[r]), int(c.a_port[r])) for r in rows.tolist() if c.a_kind[r] != nw.SWITCH})
        for kind, idx, port in ends:
            self.ca_node[(kind, idx, port)] = len(self.names)
            (self.cn if kind == nw.NODE else self.io).append(len(self.names))
            self.names.append(f"{names[kind][idx if kind != nw.TARGETS else 0]} {n.port_name(kind, port, nw.STORAGE, nw.R_TARGET if kind == nw.TARGETS else nw.R_NODE)}")
            self.radix.append(1)
        self.switches = len(sw_ids)
        self.guids = [STORAGE_GUID_BASE + (k << 4) for k in range(len(self.names))]

    def node(self, kind: int, idx: int, port: int) -> tuple[int, int]:
        """``(file node, its port)`` of a cable end."""
        if kind == nw.SWITCH:
            return self.sw_node[idx], port
        return self.ca_node[(kind, idx, port)], 1

    def links(self) -> dict[int, list[tuple[int, int, int, int]]]:
        """Per file node: ``(port, peer node, peer port, Gb/s)`` of every cabled port, ascending."""
        c = self.n.cables
        out: dict[int, list[tuple[int, int, int, int]]] = {}
        for r in self.rows.tolist():
            a = self.node(int(c.a_kind[r]), int(c.a_idx[r]), int(c.a_port[r]))
            z = self.node(int(c.z_kind[r]), int(c.z_idx[r]), int(c.z_port[r]))
            g = int(c.speed[r])
            out.setdefault(a[0], []).append((a[1], z[0], z[1], g))
            out.setdefault(z[0], []).append((z[1], a[0], a[1], g))
        for v in out.values():
            v.sort()
        return out

    def roots(self) -> list[int]:
        """GUIDs of the top tier's switches (super-spines when there are any, else spines)."""
        sw = [s for s in self.n.switches if s.network == nw.STORAGE]
        top = "super-spine" if any(s.role == "super-spine" for s in sw) else "spine"
        return [self.guids[k] for k, s in enumerate(sw) if s.role == top]

    def sim_needs(self) -> tuple[int, int, int]:
        """(switches, nodes, ports) ibsim must hold (a node's ports count port 0)."""
        return self.switches, len(self.names), sum(self.radix) + len(self.names)

    def text(self, provenance: str, arch: str) -> str:
        """The whole file: header comment, then every node's record."""
        links = self.links()
        nodes = sorted(links)
        lid = {k: i + 1 for i, k in enumerate(nodes)}
        ident = {k: f'"{"S" if k < self.switches else "H"}-{self.guids[k]:016x}"' for k in nodes}
        opts = ibsim_options(*self.sim_needs())
        lines = [f"# generated by {provenance}; arch {arch}; subnet {SUBNET}", f"# {self.switches} switches, {len(nodes) - self.switches} channel adapters (storage ports), {len(self.rows)} cables"]
        lines.append(f"# exceeds ibsim's default tables (256 switches, 2048 nodes, 13312 ports): simulate with ibsim {' '.join(opts)} -s FILE" if opts else "# simulate with: ibsim -s FILE")
        lines.append("")
        for i, k in enumerate(nodes):
            g = self.guids[k]
            if i:
                lines.append("")
            if k < self.switches:
                lines += [f"switchguid=0x{g:x}({g:x})", f'Switch\t{self.radix[k]} {ident[k]}\t\t# "{self.names[k]}" enhanced port 0 lid {lid[k]} lmc 0']
                for port, q, qp, gbps in links[k]:
                    pg = f"({self.guids[q] + qp:x}) " if q >= self.switches else ""
                    lines.append(f'[{port}]\t{ident[q]}[{qp}]{pg}\t\t# "{self.names[q]}" lid {lid[q]} {speed_name(gbps)}')
            else:
                lines += [f"caguid=0x{g:x}", f'Ca\t1 {ident[k]}\t\t# "{self.names[k]}"']
                for port, q, qp, gbps in links[k]:
                    lines.append(f'[{port}]({g + port:x}) \t{ident[q]}[{qp}]\t\t# lid {lid[k]} lmc 0 "{self.names[q]}" lid {lid[q]} {speed_name(gbps)}')
        return "\n".join(lines) + "\n"

    def opensm_files(self, provenance: str, arch: str, etc: str = ETC) -> dict[str, str]:
        """``opensm.conf``, ``partitions.conf``, ``root_guids.conf``, ``cn_guids.conf`` and ``io_guids.conf`` of the storage subnet.

        ``io_guids.conf`` lists the port GUIDs of the I/O nodes (every storage port
        but the compute nodes'), each on a leaf: :data:`MAX_REVERSE_HOPS`.
        """
        head = f"# OpenSM options of subnet {SUBNET} ({arch}), written by {provenance}\n# copy this folder's files to {etc}/ on the storage subnet manager's host\n"
        io = ["# I/O nodes (storage targets, management servers, fabric managers) sit on leaves as the compute nodes do: no reverse hop needed", f"io_guid_file {etc}/io_guids.conf", f"max_reverse_hops {MAX_REVERSE_HOPS}"] if self.io else []
        conf = head + "\n".join(["routing_engine ftree", f"root_guid_file {etc}/root_guids.conf", f"cn_guid_file {etc}/cn_guids.conf", *io, f"partition_config_file {etc}/partitions.conf"]) + "\n"
        parts = f"# OpenSM partitions of subnet {SUBNET} ({arch}), written by {provenance}\nDefault=0x{DEFAULT_PKEY:04x}, ipoib : ALL=full, SELF=full ;\n"
        return {
            "opensm.conf": conf,
            "partitions.conf": parts,
            "root_guids.conf": "".join(f"0x{g:016x}\n" for g in self.roots()),
            "cn_guids.conf": "".join(f"0x{self.guids[k] + 1:016x}\n" for k in self.cn),
        } | ({"io_guids.conf": "".join(f"0x{self.guids[k] + 1:016x}\n" for k in self.io)} if self.io else {})


def _subnets(ctx):
    nets = getattr(ctx, "networks", None) or {}
    for arch, fabric in ctx.fabrics.items():
        n = nets.get(arch)
        if n is not None and is_infiniband(n, getattr(ctx, "catalog", None)):
            yield arch, fabric, StorageSubnet(n, [s.name for s in fabric.switches])


def export_topo(ctx, dest: Path) -> list[Path]:
    """``<arch>/ibnetdiscover/storage.topo`` of every architecture whose storage fabric is InfiniBand."""
    paths = []
    for arch, fabric, sub in _subnets(ctx):
        p = arch_dir(dest, arch, "ibnetdiscover") / f"{SUBNET}.topo"
        with open_output(p, newline="\n") as fh:
            fh.write(sub.text(fabric.spec.provenance(), arch))
        paths.append(p)
    return paths


def export(ctx, dest: Path) -> list[Path]:
    """The ``ibnetdiscover`` format: the compute fabric's subnets (:func:`.ibnetdiscover.export`), then ``storage.topo``."""
    return ibnetdiscover.export(ctx, dest) + export_topo(ctx, dest)


def export_opensm(ctx, dest: Path) -> list[Path]:
    """``<arch>/opensm/storage/`` of every architecture whose storage fabric is InfiniBand."""
    paths = []
    for arch, fabric, sub in _subnets(ctx):
        d = arch_dir(dest, arch, "opensm", SUBNET)
        for name, text in sub.opensm_files(fabric.spec.provenance(), arch).items():
            with open_output(d / name, newline="\n") as fh:
                fh.write(text)
            paths.append(d / name)
    return paths
