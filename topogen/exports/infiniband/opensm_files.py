"""OpenSM's files for each InfiniBand subnet: partitions (a P_Key per rail), ftree roots and compute nodes.

One set per subnet of the ibnetdiscover export (:func:`topogen.exports.infiniband.ibnetdiscover.subnets`:
the whole fabric, a plane, or a rail-only rail or group of rails sharing a
switch), keyed by the GUIDs that export writes (:func:`~topogen.exports.infiniband.ibnetdiscover.guid`;
a GPU's CA port ``nic<q>`` has port GUID ``guid(gpu) + q + 1``):

* ``partitions.conf`` (OpenSM's ``partition_config_file``). The default
  partition ``0x7fff`` always exists. Rail-optimized fabrics are any-to-any,
  so every port is a full member of it and nothing else. Rail-only rails must
  stay apart, most of all where several share a switch (``rail_packing:
  shared``): each rail ``r`` gets partition ``rail<r>`` with P_Key
  ``PKEY_BASE + r`` (``0x1000 + r``), every GPU port of the rail a full
  member; the default partition keeps the GPU ports as *limited* members (a
  limited member talks only to full members: the switches and the subnet
  manager, never another GPU), so a GPU port's table holds its rail's key
  (``0x9000 | r`` with the membership bit) and ``0x7fff``. The key of a rail
  is the same in every subnet and plane, so one ``NCCL_IB_PKEY`` index serves
  every GPU. Members are one per line: OpenSM reads a line into a fixed
  buffer, a partition of 100,000 ports on one line would be cut.
* ``root_guids.conf`` (``root_guid_file``): node GUIDs of the top tier's
  switches with a cable in the subnet; a director (more than 254 ports,
  written as ASICs) contributes its spine ASICs, the top of the fabric as
  OpenSM sees it.
* ``cn_guids.conf`` (``cn_guid_file``): port GUIDs of every GPU port in the
  subnet, the compute nodes ftree balances routes over.
* ``opensm.conf``: the options that use them (``routing_engine ftree`` and
  the three files, at ``/etc/opensm/`` where the subnet manager's host keeps
  them). A one-switch subnet is no fat tree: ``routing_engine minhop`` and no
  root or CN file. Nor is a leaf pair (``design: leaf-pair``: two leaves of one
  tier joined by ISLs; OpenSM's ftree refuses it, "more than one root ... with
  maximum rank 0", and falls back): ``routing_engine minhop``, no root or CN
  file. Min-hop routes cross at most one ISL and never turn back over one, so
  they hold no credit loop; OpenSM spreads the destinations over the parallel
  ISLs (tests/test_opensm_leaf_pair.py routes it under ibsim).

Every file is a pure function of the fabric: same spec, same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from topogen.exports.infiniband import ibnetdiscover as ib
from topogen.fabric import director
from topogen.fabric.model import Fabric

PKEY_BASE = 0x1000  # rail r's P_Key: PKEY_BASE + r (15 bits; the full-member bit 0x8000 is OpenSM's to set)
DEFAULT_PKEY = 0x7FFF
FULL_BIT = 0x8000
ETC = "/etc/opensm"  # where opensm.conf says the files are
FILES = ("opensm.conf", "partitions.conf", "root_guids.conf", "cn_guids.conf")


def rail_pkey(rail: int) -> int:
    """Rail ``rail``'s 15-bit P_Key (a full member's table holds it with bit 15 set)."""
    return PKEY_BASE + int(rail)


@dataclass(frozen=True, slots=True)
class SubnetGuids:
    """What OpenSM's files list for one subnet: GPU ports (GUID and rail), the roots, whether ftree applies."""

    name: str
    port_guids: np.ndarray  # int64, GPU CA ports in GPU then port order
    port_rails: np.ndarray  # rail of each of those ports
    roots: np.ndarray  # node GUIDs of the top tier (spine ASICs of a director)
    switches: int  # switch nodes in the subnet (ASICs counted)
    isls: int = 0  # inter-switch links of a leaf pair in the subnet (design: leaf-pair)

    @property
    def fat_tree(self) -> bool:
        """More than one switch and no leaf pair: OpenSM's ftree applies (one switch, or a leaf pair, is routed with minhop)."""
        return self.switches > 1 and not self.isls


def subnet_guids(fabric: Fabric, sub: ib.Subnet) -> SubnetGuids:
    """The GUIDs of ``sub`` that OpenSM's files name (see the module docstring)."""
    n = fabric.gpus
    L = fabric.cable_table()
    rows = sub.links
    gpu_rows = rows[L.a_dev[rows] < n]
    order = np.lexsort((L.a_port[gpu_rows], L.a_dev[gpu_rows]))
    gpu_rows = gpu_rows[order]
    dev = L.a_dev[gpu_rows].astype(np.int64)
    port_guids = ib.GUID_BASE + (dev << 4) + L.a_port[gpu_rows].astype(np.int64) + 1
    rails = dev % fabric.hb_domain
    cabled = np.unique(np.concatenate([L.z_dev[rows], L.a_dev[rows][L.a_dev[rows] >= n]]))
    tiers = fabric.switch_tiers()[cabled - n]
    top = cabled[tiers == tiers.max()] if len(cabled) else cabled
    radix = fabric.switch_ports()
    roots: list[int] = []
    switches = len(cabled)
    for d in top.tolist():
        if radix[d - n] > director.MAX_PORTS:
            s = director.shape(int(radix[d - n]))
            roots += [ib.asic_guid(d, a) for a in range(s.leaves, s.asics)]
        else:
            roots.append(ib.guid(d))
    for d in cabled.tolist():
        if radix[d - n] > director.MAX_PORTS:
            switches += director.shape(int(radix[d - n])).asics - 1
    isls = int((L.a_dev[rows] >= n).sum()) if len(fabric.isls) else 0  # a leaf pair's switch-to-switch cables are its ISLs
    return SubnetGuids(sub.name, port_guids, rails, np.asarray(roots, np.int64), switches, isls)


def _guid_lines(guids: np.ndarray, fmt: str) -> list[str]:
    return [fmt.format(g) for g in guids.tolist()]


def partitions_text(fabric: Fabric, sg: SubnetGuids) -> Iterator[str]:
    """``partitions.conf`` of one subnet, in pieces (see the module docstring)."""
    yield f"# OpenSM partitions of subnet {sg.name} ({fabric.arch}), written by {fabric.spec.provenance()}\n"
    if fabric.arch != "rail-only":
        yield "# rail-optimized: any GPU reaches any GPU, every port a full member of the default partition\n"
        yield f"Default=0x{DEFAULT_PKEY:04x}, ipoib : ALL=full, SELF=full ;\n"
        return
    rails = np.unique(sg.port_rails).tolist()
    yield "# rail-only: a partition per rail, GPU ports full members of their rail's only; limited in the default one\n"
    yield f"Default=0x{DEFAULT_PKEY:04x}, ipoib : ALL=limited, ALL_SWITCHES=full, SELF=full ;\n"
    for r in rails:
        guids = sg.port_guids[sg.port_rails == r]
        lines = _guid_lines(guids, "    0x{:016x}=full")
        yield f"rail{r}=0x{rail_pkey(r):04x} :\n" + ",\n".join(lines) + " ;\n"


def root_text(fabric: Fabric, sg: SubnetGuids) -> str:
    """``root_guids.conf``: the top tier's node GUIDs, one per line."""
    return "".join(f"0x{g:016x}\n" for g in sg.roots.tolist())


def cn_text(fabric: Fabric, sg: SubnetGuids, size: int = 65536) -> Iterator[str]:
    """``cn_guids.conf``: every GPU port GUID of the subnet, one per line, in pieces."""
    g = sg.port_guids
    for lo in range(0, len(g), size):
        yield "".join(_guid_lines(g[lo : lo + size], "0x{:016x}\n"))


def conf_text(fabric: Fabric, sg: SubnetGuids, etc: str = ETC) -> str:
    """``opensm.conf`` options for the subnet: the routing engine and the files at ``etc``."""
    head = f"# OpenSM options of subnet {sg.name} ({fabric.arch}), written by {fabric.spec.provenance()}\n# copy this folder's files to {etc}/ on the subnet manager's host\n"
    lines = [f"partition_config_file {etc}/partitions.conf"]
    if sg.fat_tree:
        lines = ["routing_engine ftree", f"root_guid_file {etc}/root_guids.conf", f"cn_guid_file {etc}/cn_guids.conf"] + lines
    elif sg.isls:
        head += (
            "# a leaf pair joined by inter-switch links is no fat tree (ftree refuses it: two roots of rank 0):\n"
            "# minimum-hop routing; every route is GPU > leaf > (one ISL) > leaf > GPU, never back over an ISL,\n"
            "# so no credit loop, and minhop spreads the destinations over the parallel ISLs\n"
        )
        lines = ["routing_engine minhop"] + lines
    else:
        head += "# one switch: no fat tree, minimum-hop routing\n"
        lines = ["routing_engine minhop"] + lines
    return head + "\n".join(lines) + "\n"
