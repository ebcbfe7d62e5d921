"""``<arch>/topology.conf`` (Slurm topology/tree) and ``<arch>/topology-block.conf`` (topology/block).

Slurm nodes are the compute nodes of :class:`topogen.naming.NodeNames`, the
same names as the NetBox devices: ``hb03`` when a node is a whole HB domain
(the default), ``hb003-n17`` when the spec's ``gpus_per_node`` splits each
domain into nodes (GB200 NVL72: 18 trays of 4 GPUs).

Tree (``TopologyPlugin=topology/tree``): the switch tree of **rail 0, plane 0**,
with the real switch names. Why one rail: a node has one NIC per rail, so in
both architectures it hangs under K leaf switches, while the tree plugin wants
each node under exactly one leaf switch. The rails are wired alike at the leaf
level (the same nodes share a leaf on every rail), so rail 0's tree gives the
scheduler the locality it needs; the upper tiers are rail 0's exactly. Lines:
``SwitchName=<leaf> Nodes=<nodes>`` for every leaf that carries rail 0, then
``SwitchName=<upper> Switches=<children>`` tier by tier, only the switches
reachable upward from those leaves (a child under several parents is how a
Clos's parallel uplinks look; Slurm accepts it). Rail-only fabrics have no
path between rails at all, so no other tree would be right there. Checked with
slurmctld 22.05: these files load without a warning, whereas listing a node
under every rail's leaf logs "Multiple leaf switches contain nodes".
With several nodes per HB domain, every node of a domain goes under that
domain's rail-0 leaf, although only the first node has a rail-0 NIC: a node's
other peers are reached through the HB domain (NVLink to the GPU on the
peer's rail: rail-only forwarding, NCCL's PXN), and every rail groups the same
domains on its leaves, so the domain's leaf group is the node's locality. Put
each node under its own GPUs' rail leaves instead and rail-only would give one
disconnected tree per rail, on which Slurm could not place a job wider than
a rail although the HB domains join the rails. The tree files of the
gb200-nvl72 (18 nodes per domain) and gh200-32k (256) presets, both
architectures, also load into slurmctld 22.05 without a warning.

Block (``TopologyPlugin=topology/block``, Slurm 23.11+): one block per HB
domain, ``BlockName=<domain>-block Nodes=<its nodes>`` (``hb03-block
Nodes=hb03``; ``hb003-block Nodes=hb003-n[00-17]`` for an NVL72 rack of 18
trays), in domain order, and ``BlockSizes=`` the base block size (nodes per
domain) and its power-of-two multiples up to the number of domains (Slurm's
default, written out; sizes count nodes).
Consecutive domains share leaf switches, so with a power-of-two radix the
aggregated blocks of up to radix/2 domains sit under one leaf group.

Both files start with ``#`` comment lines carrying the provenance. Node and
switch lists use Slurm hostlist ranges (``hb[00-31]``) where names end in
consecutive numbers; nodes of several per domain take one range per part
(``hb[000-071]-n[00-17]``, which Slurm expands to every combination).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import numpy as np

from ..model import Fabric
from ..naming import NodeNames
from .files import arch_dir

_TAIL = re.compile(r"^(.*?)(\d+)$")


def hostlist(names: list[str]) -> str:
    """Slurm hostlist of ``names`` (order kept): runs of equal-width trailing numbers become ranges.

    ``["hb00", "hb01", "hb02", "hb05"]`` → ``hb[00-02,05]``; names without a
    trailing number are listed as they are, comma-separated.
    """
    groups: list[tuple[str, int, list[list[int]]]] = []  # (prefix, digits, ranges); digits -1: plain name
    for name in names:
        m = _TAIL.match(name)
        if not m:
            groups.append((name, -1, []))
            continue
        prefix, digits = m.group(1), m.group(2)
        value, w = int(digits), len(digits)
        if groups and groups[-1][0] == prefix and groups[-1][1] == w:
            ranges = groups[-1][2]
            if value == ranges[-1][1] + 1:
                ranges[-1][1] = value
            else:
                ranges.append([value, value])
        else:
            groups.append((prefix, w, [[value, value]]))
    out = []
    for prefix, w, ranges in groups:
        if w < 0:
            out.append(prefix)
        elif len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            out.append(f"{prefix}{ranges[0][0]:0{w}d}")
        else:
            parts = [f"{lo:0{w}d}" if lo == hi else f"{lo:0{w}d}-{hi:0{w}d}" for lo, hi in ranges]
            out.append(f"{prefix}[{','.join(parts)}]")
    return ",".join(out)


def rail0_tree(fabric: Fabric) -> list[tuple[int, list[int]]]:
    """The rail-0, plane-0 switch tree as ``(switch id, child ids)`` pairs, tier by tier.

    Leaves come first with child *domains* (their rank-0 GPU's leaf); upper
    switches follow with child *switch ids*, each list sorted by id.
    """
    L = fabric.links
    k = fabric.hb_domain
    g1 = (L.tier == 1) & (L.plane == 0) & (L.a_dev % k == 0)
    gpus, leaves = L.a_dev[g1], L.z_dev[g1]
    order = np.lexsort((gpus, leaves))
    gpus, leaves = gpus[order], leaves[order]
    out: list[tuple[int, list[int]]] = []
    uniq, first = np.unique(leaves, return_index=True)
    bounds = list(first) + [len(leaves)]
    for i, leaf in enumerate(uniq.tolist()):
        out.append((leaf, (gpus[bounds[i] : bounds[i + 1]] // k).tolist()))
    reached = uniq
    for tier in range(2, fabric.tiers + 1):
        m = (L.tier == tier) & (L.plane == 0) & np.isin(L.a_dev, reached)
        pairs = np.unique(np.stack([L.z_dev[m], L.a_dev[m]], axis=1), axis=0)
        if not len(pairs):
            break
        parents, start = np.unique(pairs[:, 0], return_index=True)
        bounds = list(start) + [len(pairs)]
        for i, sw in enumerate(parents.tolist()):
            out.append((sw, pairs[bounds[i] : bounds[i + 1], 1].tolist()))
        reached = parents
    return out


def node_names(fabric: Fabric) -> NodeNames:
    return NodeNames(fabric.gpus, fabric.hb_domain, fabric.spec.gpus_per_node)


def domain_hostlist(nn: NodeNames, domains: list[int]) -> str:
    """Hostlist of every node of ``domains``: ``hb[000-071]-n[00-17]`` (Slurm expands both ranges).

    One bracket range per name part keeps a leaf's line short (a node-by-node
    list of 72 NVL72 racks is 1,100 characters); with one node per domain it
    is the plain hostlist of the domain names.
    """
    if nn.per_domain == 1:
        return hostlist([nn.name(d) for d in domains])
    last = nn.per_domain - 1
    return f"{hostlist([f'hb{d:0{nn.dw}d}' for d in domains])}-n[{0:0{nn.nw}d}-{last:0{nn.nw}d}]"


def header(fabric: Fabric, what: str) -> list[str]:
    spec = fabric.spec
    nn = node_names(fabric)
    if nn.per_domain == 1:
        nodes = f"{spec.domains} nodes, one per HB domain (hb<domain>)."
    else:
        size = "one GPU" if nn.per_node == 1 else f"{nn.per_node} GPUs"
        nodes = f"{nn.nodes} nodes of {size}, {nn.per_domain} per HB domain (hb<domain>-n<node>)."
    return [
        f"# Slurm {what} for {spec.name} ({fabric.arch}), generated by {spec.provenance()}",
        f"# {spec.gpus} GPUs, HB domain {spec.hb_domain}: {nodes}",
    ]


def tree_lines(fabric: Fabric) -> Iterator[str]:
    """Lines of topology.conf for the tree plugin (see the module docstring)."""
    yield from header(fabric, "topology.conf (TopologyPlugin=topology/tree)")
    nn = node_names(fabric)
    if nn.per_domain == 1:
        yield "# Switch tree of rail 0, plane 0: each node has one NIC per rail, so it sits under one leaf"
        yield "# per rail, and the tree plugin wants each node under exactly one leaf. Every rail groups the"
        yield "# same nodes on its leaves, so rail 0's tree is the locality the scheduler needs."
    else:
        yield "# Switch tree of rail 0, plane 0, every node under its HB domain's rail-0 leaf: a node has NICs"
        yield "# on its own GPUs' rails only, but reaches the other rails through the HB domain (NVLink), and"
        yield "# every rail groups the same HB domains on its leaves, so that leaf is the node's locality."
    yield "# HB domains as blocks: topology-block.conf (TopologyPlugin=topology/block, Slurm 23.11+)."
    n = fabric.gpus
    for sw, children in rail0_tree(fabric):
        s = fabric.switch(sw)
        if s.tier == 1:
            yield f"SwitchName={s.name} Nodes={domain_hostlist(nn, children)}"
        else:
            yield f"SwitchName={s.name} Switches={hostlist([fabric.switches[c - n].name for c in children])}"


def block_sizes(domains: int, base: int) -> list[int]:
    """``base`` and its power-of-two multiples up to ``domains`` base blocks (Slurm's default)."""
    sizes, m = [], 1
    while m <= domains:
        sizes.append(base * m)
        m *= 2
    return sizes


def block_lines(fabric: Fabric) -> Iterator[str]:
    """Lines of topology-block.conf: one block per HB domain, then ``BlockSizes``."""
    yield from header(fabric, "topology-block.conf (TopologyPlugin=topology/block, Slurm 23.11+)")
    yield "# One block per HB domain, in domain order; consecutive domains share leaf switches, so"
    yield "# aggregated blocks (BlockSizes: base size times powers of two) stay close in the network."
    nn = node_names(fabric)
    if nn.per_domain == 1:
        yield "# A node is a whole HB domain: where a domain spans several hosts (e.g. the compute trays of"
        yield "# an NVL72 rack), put those hosts in its block and scale BlockSizes by hosts per domain."
        for name in nn.names():
            yield f"BlockName={name}-block Nodes={name}"
    else:
        yield f"# A block is the {nn.per_domain} nodes of one HB domain; BlockSizes count nodes."
        for d in range(nn.domains):
            yield f"BlockName=hb{d:0{nn.dw}d}-block Nodes={domain_hostlist(nn, [d])}"
    yield "BlockSizes=" + ",".join(map(str, block_sizes(nn.domains, nn.per_domain)))


def write_lines(path: Path, lines: Iterator[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for line in lines:
            fh.write(line + "\n")


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    for arch, fabric in ctx.fabrics.items():
        d = arch_dir(dest, arch)
        for fname, lines in (("topology.conf", tree_lines(fabric)), ("topology-block.conf", block_lines(fabric))):
            p = d / fname
            write_lines(p, lines)
            paths.append(p)
    return paths
