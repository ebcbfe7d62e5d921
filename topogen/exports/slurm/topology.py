"""Slurm topology files: ``<arch>/slurm/tree/topology.conf`` and ``<arch>/slurm/block/topology.conf``.

Slurm reads a file named ``topology.conf`` next to ``slurm.conf``, so each
plugin gets its own directory holding exactly that file: copy
``slurm/tree/topology.conf`` with ``TopologyPlugin=topology/tree``, or
``slurm/block/topology.conf`` with ``TopologyPlugin=topology/block`` (Slurm
23.11+), to ``/etc/slurm/topology.conf`` and restart slurmctld. Both file
headers say so.

Slurm nodes are the compute nodes of :class:`topogen.fabric.naming.NodeNames`, the
same names as the NetBox devices: ``hb03`` when a node is a whole HB domain
(the default), ``hb003-n17`` when the spec's ``gpus_per_node`` splits each
domain into nodes (GB200 NVL72: 18 trays of 4 GPUs).

Tree (``topology/tree``): the switch tree of **rail 0, plane 0**, with
**equivalent upper-tier switches aggregated**. Why one rail: a node has one NIC
per rail, so in both architectures it hangs under K leaf switches, while the
tree plugin wants each node under exactly one leaf switch. The rails are wired
alike at the leaf level (the same nodes share a leaf on every rail), so rail
0's leaves give the scheduler the locality it needs. Rail-only fabrics have no
path between rails at all, so no other tree would be right there. With several
nodes per HB domain, every node of a domain goes under that domain's rail-0
leaf: a node reaches the other rails through the HB domain (NVLink), and every
rail groups the same domains on its leaves.

Aggregation: above the leaves, switches whose children are the same set of
(aggregated) switches are interchangeable for placement, so they become one
Slurm switch. In a Clos that is one Slurm switch per pod (the spines of block
``b`` all join the same leaves: ``spine-b03`` stands for ``spine-b03-[00-31]``)
and one for each group of top-tier switches joining the same pods (usually
one). A group keeps its members' common name without the trailing position
(``spine-b03``, ``core``, ``rail0-spine``); a one-member group keeps the real
name; names that would clash get ``<role>-t<tier>-<index>``. The file's
header lists each aggregated switch with its members. Why: the tree plugin's
switch-path computation grows roughly with the cube of the switch count;
listing all 10,752 rail-0 switches of a 131,072-GPU rail-optimized fabric took
slurmctld 26.05 22 minutes, while the aggregated tree (a few hundred
switches) loads in seconds and places jobs on the same leaves and pods.
Checked with slurmctld 22.05 (``tests/test_slurm_ctld.py``): no topology
warning, a node under exactly one leaf. Above :data:`MAX_TREE_SWITCHES` Slurm
switches (past 131,072 GPUs at radix 64, K = 8) the leaves fold into their
pods (:func:`collapse_leaves`): jobs are then packed by pod, and the tree of
524,288 GPUs has 529 Slurm switches instead of 2,577.

Leaf pair (``design: leaf-pair``): every node has NICs on both leaves of the
pair (A-B-B-A), so both serve the same nodes and, as the two leaves of a
dual-homed pair, they are one Slurm switch (``leaf`` for ``leaf-a`` and
``leaf-b``; ``pl0-leaf`` with planes) holding every node. Listing each node
under both leaves is what the tree plugin warns about (a node in several leaf
switches; ``tests/test_slurm_ctld.py`` proves slurmctld flags it and loads the
pair as one switch without a word).

Block (``topology/block``, Slurm 23.11+): one block per HB domain,
``BlockName=block-<domain> Nodes=<its nodes>`` (``block-hb03 Nodes=hb03``;
``block-hb003 Nodes=hb003-n[00-17]`` for an NVL72 rack of 18 trays; the name ends
in the domain's digits, so Slurm compresses a list of blocks to ``block-hb[000-127]``), in domain
order, and ``BlockSizes=`` the base block size (nodes per domain) and its
power-of-two multiples up to the number of domains, **at most 16 values**
(Slurm refuses more: ``fatal: Invalid BlockSizes value``), so with 2^16 or
more domains the largest aggregate is 2^15 base blocks. Consecutive domains
share leaf switches, so with a power-of-two radix the aggregated blocks of up
to radix/2 domains sit under one leaf group.

Nodes on the in-band network (spec ``networks:``): ``<arch>/slurm/nodes.conf`` gives
``SlurmctldHost=<first management server>(<its in-band address>)`` and every compute node's
``NodeName=... NodeAddr=<its in-band bond0 address>`` (:mod:`topogen.config.netaddr`), so
slurmctld and slurmd talk over the in-band network, not a rail. Nodes whose addresses share
their first three octets go on one line, both lists in Slurm's hostlist form
(``NodeName=hb[000-057] NodeAddr=10.16.0.[4-61]``; Slurm pairs the two expansions in order).
``Include`` it from ``slurm.conf`` after a ``NodeName=DEFAULT`` line with the nodes' CPUs,
memory and GRES; without management servers there is no ``SlurmctldHost`` line.

Both files start with ``#`` comment lines (Slurm skips them) carrying the
provenance and the install instructions. Node and switch lists use Slurm
hostlist ranges (``hb[00-31]``) where names end in consecutive numbers; nodes
of several per domain take one range per part (``hb[000-071]-n[00-17]``,
which Slurm expands to every combination).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.config.addressing import ip_text
from topogen.exports.files import arch_dir, open_output
from topogen.fabric import networks as nw
from topogen.fabric.model import Fabric
from topogen.fabric.naming import NodeNames
from topogen.spec import leafpair

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
    g1 = (L.tier == 1) & (L.plane == 0) & np.isin(L.a_dev % k, _ranks(fabric))
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
        span = int(L.a_dev[m].max(initial=0)) + 1
        key = np.sort(L.z_dev[m] * span + L.a_dev[m])  # (parent, child) pairs in order, as one int64 each
        key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key
        pairs = np.stack([key // span, key % span], axis=1)
        if not len(pairs):
            break
        parents, start = np.unique(pairs[:, 0], return_index=True)
        bounds = list(start) + [len(pairs)]
        for i, sw in enumerate(parents.tolist()):
            out.append((sw, pairs[bounds[i] : bounds[i + 1], 1].tolist()))
        reached = parents
    return out


def _ranks(fabric: Fabric) -> list[int]:
    """The ranks whose leaves make the tree: rail 0, and on a leaf pair the first rank of leaf-b too (both leaves hold every node)."""
    if fabric.spec.design != "leaf-pair":
        return [0]
    sides = leafpair.rail_sides(fabric.hb_domain, fabric.spec.gpus_per_node)
    return [0, int(np.argmax(sides == 1))] if (sides == 1).any() else [0]


@dataclass(frozen=True, slots=True)
class SlurmSwitch:
    """One ``SwitchName`` line: a rail-0 leaf (``nodes``: HB domains) or an aggregate of equivalent upper switches."""

    name: str
    tier: int
    members: list[str]  # the real switches it stands for (one for a leaf)
    domains: list[int]  # leaves: the HB domains below it
    children: list[str]  # upper switches: child Slurm switch names
    leaves: tuple[str, ...] = ()  # a collapsed level: the real leaves it stands for too (see collapse_leaves)


MAX_TREE_SWITCHES = 768  # above this, leaves of one pod become one Slurm switch (collapse_leaves)


def aggregated_tree(fabric: Fabric, max_switches: int | None = None) -> list[SlurmSwitch]:
    """Rail 0's tree with the switches of a tier that join the same children merged (module docstring).

    Leaves first, then tier by tier; within a tier, groups in the order of
    their first member's id, so the output is deterministic. While the tree
    has more than ``max_switches`` Slurm switches, its leaf level is folded
    into the level above (:func:`collapse_leaves`).
    """
    cap = MAX_TREE_SWITCHES if max_switches is None else max_switches
    tree = _merged_tree(fabric)
    while len(tree) > cap:
        folded = collapse_leaves(tree)
        if folded is None:
            break
        tree = folded
    return tree


def collapse_leaves(tree: list[SlurmSwitch]) -> list[SlurmSwitch] | None:
    """The tree with each leaf-level parent made a leaf holding its children's nodes; None if it cannot be.

    slurmctld's tree plugin computes switch distances in time that grows with
    the cube of the Slurm switch count (2,577 switches: about 5 minutes), so a
    large tree gives up its lowest level: the switches above the leaves (a
    pod's spines, in a Clos) hold the nodes of their leaves, and jobs are
    packed by pod instead of by leaf. Possible only when every leaf has one
    parent and those parents have only leaves below them (true of Clos pods).
    """
    leaves = {t.name: t for t in tree if t.domains}
    parent_of: dict[str, str] = {}
    parents = [t for t in tree if any(c in leaves for c in t.children)]
    for p in parents:
        if not all(c in leaves for c in p.children):
            return None
        for c in p.children:
            if parent_of.setdefault(c, p.name) != p.name:
                return None
    if not parents or set(parent_of) != set(leaves):
        return None
    out = []
    for p in parents:
        kids = [leaves[c] for c in p.children]
        doms = sorted(d for k in kids for d in k.domains)
        below = tuple(x for k in kids for x in (k.leaves or tuple(k.members)))
        out.append(SlurmSwitch(p.name, p.tier, p.members, doms, [], below))
    return out + [t for t in tree if not t.domains and t not in parents]


def _merged_tree(fabric: Fabric) -> list[SlurmSwitch]:
    """Rail 0's tree with the switches of a tier that join the same children merged."""
    by_tier: dict[int, list[tuple[int, list[int]]]] = {}
    for sw, children in rail0_tree(fabric):
        by_tier.setdefault(fabric.switch(sw).tier, []).append((sw, children))
    # leaves serving the same nodes (the two leaves of a dual-homed pair) are one Slurm switch: the
    # tree plugin wants each node under exactly one leaf, and the pair is the node's locality
    same: dict[tuple[int, ...], list[int]] = {}
    for sw, doms in by_tier.get(1, []):
        same.setdefault(tuple(doms), []).append(sw)
    out, group_of = [], {}
    for doms, ids in same.items():
        mem = [fabric.switch(sw).name for sw in ids]
        name = mem[0] if len(mem) == 1 else os.path.commonprefix(mem).rstrip("-") or mem[0]
        out.append(SlurmSwitch(name, 1, mem, list(doms), []))
        group_of.update((sw, name) for sw in ids)
    for tier in sorted(t for t in by_tier if t > 1):
        groups: dict[tuple[str, ...], list[int]] = {}
        for sw, children in by_tier[tier]:
            groups.setdefault(tuple(sorted({group_of[c] for c in children}, key=_natural)), []).append(sw)
        members = [[fabric.switch(sw).name for sw in ids] for ids in groups.values()]
        names = _group_names(members, fabric.switch(by_tier[tier][0][0]).role, tier)
        for name, ids, key, mem in zip(names, groups.values(), groups, members):
            group_of.update((sw, name) for sw in ids)
            out.append(SlurmSwitch(name, tier, mem, [], list(key)))
    return out


_POS = re.compile(r"^(.*?)-?\d+$")


@functools.lru_cache(maxsize=1 << 16)
def _natural(name: str) -> tuple:
    """Sort key: names with numbers in numeric order (``leaf-g2`` before ``leaf-g10``)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _group_names(members: list[list[str]], role: str, tier: int) -> list[str]:
    """A name per group: the one member's name, else the members' common name without the position."""
    names = []
    for mem in members:
        if len(mem) == 1:
            names.append(mem[0])
            continue
        bases = {(_POS.match(m).group(1) if _POS.match(m) else m) for m in mem}
        names.append(bases.pop() if len(bases) == 1 else "")
    taken = [x for x in names if x]
    for i, x in enumerate(names):
        if not x or taken.count(x) > 1:
            names[i] = f"{role}-t{tier}-{i}"
    return names


def node_names(fabric: Fabric) -> NodeNames:
    return NodeNames.of(fabric.spec)


def domain_hostlist(nn: NodeNames, domains: list[int]) -> str:
    """Hostlist of every node of ``domains``: ``hb[000-071]-n[00-17]`` (Slurm expands both ranges).

    One bracket range per name part keeps a leaf's line short (a node-by-node
    list of 72 NVL72 racks is 1,100 characters); with one node per domain it
    is the plain hostlist of the domain names.
    """
    if nn.template is not None:  # the site's names: the hostlist of each node's name
        return hostlist([x for d in domains for x in nn.domain_names(d)])
    if nn.per_domain == 1:
        return hostlist([nn.name(d) for d in domains])
    last = nn.per_domain - 1
    return f"{hostlist([f'hb{d:0{nn.dw}d}' for d in domains])}-n[{0:0{nn.nw}d}-{last:0{nn.nw}d}]"


def header(fabric: Fabric, what: str) -> list[str]:
    spec = fabric.spec
    nn = node_names(fabric)
    if nn.template is not None:
        nodes = f"{nn.nodes:,} nodes, {nn.per_domain} per HB domain, named by naming.host {nn.template.text}."
    elif nn.per_domain == 1:
        nodes = f"{spec.domains:,} nodes, one per HB domain (hb<domain>)."
    else:
        size = "one GPU" if nn.per_node == 1 else f"{nn.per_node} GPUs"
        nodes = f"{nn.nodes:,} nodes of {size}, {nn.per_domain} per HB domain (hb<domain>-n<node>)."
    return [
        f"# Slurm {what} for {spec.name} ({fabric.arch}), generated by {spec.provenance()}",
        f"# {spec.gpus:,} GPUs, HB domain {spec.hb_domain}: {nodes}",
    ]


def install_lines(plugin: str, sub: str, arch: str) -> list[str]:
    return [
        "# Install: copy this file to the directory of slurm.conf as topology.conf (e.g.",
        f"#   cp <out>/{arch}/slurm/{sub}/topology.conf /etc/slurm/topology.conf), set",
        f"#   TopologyPlugin=topology/{plugin} in slurm.conf, and restart slurmctld.",
    ]


def tree_lines(fabric: Fabric) -> Iterator[str]:
    """Lines of the tree plugin's topology.conf (see the module docstring)."""
    yield from header(fabric, "topology.conf for TopologyPlugin=topology/tree")
    yield from install_lines("tree", "tree", fabric.arch)
    nn = node_names(fabric)
    if nn.per_domain == 1:
        yield "# Switch tree of rail 0, plane 0: each node has one NIC per rail, so it sits under one leaf"
        yield "# per rail, and the tree plugin wants each node under exactly one leaf. Every rail groups the"
        yield "# same nodes on its leaves, so rail 0's tree is the locality the scheduler needs."
    else:
        yield "# Switch tree of rail 0, plane 0, every node under its HB domain's rail-0 leaf: a node has NICs"
        yield "# on its own GPUs' rails only, but reaches the other rails through the HB domain (NVLink), and"
        yield "# every rail groups the same HB domains on its leaves, so that leaf is the node's locality."
    tree = aggregated_tree(fabric)
    merged = [t for t in tree if len(t.members) > 1 and not t.leaves]
    folded = [t for t in tree if t.leaves]
    if folded:
        full = len(_merged_tree(fabric))
        yield f"# Leaves: the rail-0 tree has {full:,} Slurm switches even with equivalent upper switches merged,"
        yield f"# more than {MAX_TREE_SWITCHES:,}: slurmctld's start grows with the cube of that count (minutes here),"
        yield "# so each pod is one Slurm leaf holding its leaves' nodes (jobs are packed by pod, not by leaf):"
        for t in folded:
            yield f"#   {t.name} = {len(t.leaves):,} leaves {hostlist(list(t.leaves))} with {len(t.members):,} switches {hostlist(t.members)}"
        yield "# Above them, switches that join the same children are one Slurm switch:"
    else:
        yield "# Leaves are real switches. Above them, switches that join the same children are one Slurm"
        yield "# switch (same placement, and slurmctld loads a few hundred switches in seconds where all of"
        yield "# a large fabric's switches take many minutes):"
    if not merged:
        yield "#   (none: every upper switch here joins different children)"
    for t in merged:
        yield f"#   {t.name} = {len(t.members):,} switches {hostlist(t.members)}"
    if fabric.spec.homes > 1:
        yield "# homing: dual: the two leaves of a pair (-a, -b) serve the same nodes, so each pair is one Slurm"
        yield "# switch named without the suffix (a node under two leaves is an error for the tree plugin)."
    if fabric.spec.design == "leaf-pair":
        yield "# design: leaf-pair: each node's NICs alternate A-B-B-A over leaf-a and leaf-b, so every node is on"
        yield "# both leaves; a node under two leaves is an error for the tree plugin, so the pair is one Slurm"
        yield "# switch (named without the -a/-b suffix) holding every node: one leaf's worth of locality."
    spec = fabric.spec
    if spec.scalable_unit:
        per = spec.units.domains
        sus = -(-spec.domains // per)
        yield f"# Scalable units: {sus} SU(s) of {spec.scalable_unit} nodes; the leaves are built per SU, so each rail-0 leaf"
        yield f"# switch holds one SU's nodes (SU s: HB domains {per}*s to {per}*s+{per - 1}), and jobs packed under one leaf stay in one SU."
    yield "# HB domains as blocks: ../block/topology.conf (TopologyPlugin=topology/block, Slurm 23.11+)."
    for t in tree:
        if t.domains:
            yield f"SwitchName={t.name} Nodes={domain_hostlist(nn, t.domains)}"
        else:
            yield f"SwitchName={t.name} Switches={hostlist(t.children)}"


MAX_BLOCK_SIZES = 16  # Slurm's limit: more BlockSizes values are "fatal: Invalid BlockSizes value"


def block_sizes(domains: int, base: int) -> list[int]:
    """``base`` and its power-of-two multiples up to ``domains`` base blocks, at most 16 values."""
    sizes, m = [], 1
    while m <= domains and len(sizes) < MAX_BLOCK_SIZES:
        sizes.append(base * m)
        m *= 2
    return sizes


def block_lines(fabric: Fabric) -> Iterator[str]:
    """Lines of the block plugin's topology.conf: one block per HB domain, then ``BlockSizes``."""
    yield from header(fabric, "topology.conf for TopologyPlugin=topology/block (Slurm 23.11+)")
    yield from install_lines("block", "block", fabric.arch)
    yield "# One block per HB domain, in domain order; consecutive domains share leaf switches, so"
    yield "# aggregated blocks (BlockSizes: base size times powers of two) stay close in the network."
    nn = node_names(fabric)
    sizes = block_sizes(nn.domains, nn.per_domain)
    if sizes[-1] * 2 <= nn.domains * nn.per_domain:
        yield f"# BlockSizes stops at {len(sizes)} values (Slurm's limit): the largest aggregate is {sizes[-1] // nn.per_domain:,} of {nn.domains:,} HB domains."
    if nn.per_domain == 1:
        yield "# A node is a whole HB domain: where a domain spans several hosts (e.g. the compute trays of"
        yield "# an NVL72 rack), put those hosts in its block and scale BlockSizes by hosts per domain."
        for name in nn.names():
            yield f"BlockName=block-{name} Nodes={name}"
    else:
        yield f"# A block is the {nn.per_domain} nodes of one HB domain; BlockSizes count nodes."
        for d in range(nn.domains):
            yield f"BlockName=block-hb{d:0{nn.dw}d} Nodes={domain_hostlist(nn, [d])}"
    yield "BlockSizes=" + ",".join(map(str, sizes))


def write_lines(path: Path, lines: Iterator[str]) -> None:
    with open_output(path, newline="\n") as fh:
        for line in lines:
            fh.write(line + "\n")


def octet_ranges(last: list[int]) -> str:
    """``4-61,65`` of last octets in order: runs of +1 steps as ranges (the order kept, as Slurm expands it)."""
    runs: list[list[int]] = []
    for x in last:
        if runs and x == runs[-1][1] + 1:
            runs[-1][1] = x
        else:
            runs.append([x, x])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def node_lines(fabric: Fabric, names: list[str], addrs: list[str], ctld: tuple[str, str] | None) -> Iterator[str]:
    """``nodes.conf``: the header, ``SlurmctldHost`` (``ctld``: name and address, or None), then the ``NodeName`` lines.

    ``names`` and ``addrs``: the nodes with an in-band address, in node order.
    """
    yield from header(fabric, "nodes on the in-band network")
    yield "# Install: copy to the directory of slurm.conf and add, after a NodeName=DEFAULT line with the"
    yield "#   nodes' CPUs, RealMemory and Gres:  Include nodes.conf  (then restart slurmctld)."
    if ctld is not None:
        yield f"SlurmctldHost={ctld[0]}({ctld[1]})"
    else:
        yield "# No management server in the spec (networks.management_servers): give SlurmctldHost in slurm.conf."
    i = 0
    while i < len(names):
        prefix = addrs[i].rsplit(".", 1)[0]
        j = i
        while j < len(names) and addrs[j].rsplit(".", 1)[0] == prefix:
            j += 1
        last = [int(a.rsplit(".", 1)[1]) for a in addrs[i:j]]
        rng = octet_ranges(last)
        yield f"NodeName={hostlist(names[i:j])} NodeAddr={prefix}.[{rng}]" if "," in rng or "-" in rng else f"NodeName={names[i]} NodeAddr={addrs[i]}"
        i = j


def inband_nodes(ctx, arch: str) -> tuple[list[str], list[str], tuple[str, str] | None] | None:
    """Names and in-band addresses of the nodes of ``arch`` that have one, and the first management server's; None without networks."""
    plans = getattr(ctx, "network_addresses", None) or {}
    if arch not in plans:
        return None
    a, n = plans[arch], ctx.networks[arch]
    first = a.host(nw.INBAND, nw.NODE, "bond0") if n.plan.net.inband_ports.bonded else a.host(nw.INBAND, nw.NODE)
    idx = sorted(first)
    rows = np.asarray([first[i] for i in idx], np.int64)
    nn = node_names(ctx.fabrics[arch])
    addrs = ip_text(a.addr[rows]).tolist() if len(rows) else []
    mg = a.host(nw.INBAND, nw.MGMT)
    ctld = (n.device_name(nw.MGMT, 0), str(ip_text(a.addr[[mg[0]]])[0])) if 0 in mg else None
    return [nn.name(i) for i in idx], addrs, ctld


def export(ctx, dest: Path) -> list[Path]:
    """``<arch>/slurm/tree/topology.conf`` and ``<arch>/slurm/block/topology.conf`` per architecture (and ``nodes.conf`` with networks)."""
    paths = []
    for arch, fabric in ctx.fabrics.items():
        for plugin, lines in (("tree", tree_lines(fabric)), ("block", block_lines(fabric))):
            p = arch_dir(dest, arch, "slurm", plugin) / "topology.conf"
            write_lines(p, lines)
            paths.append(p)
        got = inband_nodes(ctx, arch)
        if got is not None and got[0]:
            p = arch_dir(dest, arch, "slurm") / "nodes.conf"
            write_lines(p, node_lines(fabric, *got))
            paths.append(p)
    return paths
