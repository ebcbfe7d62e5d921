"""Validation of the storage, in-band and OOB networks (:mod:`topogen.fabric.networks`).

:func:`validate_networks` returns findings as data (:class:`~topogen.checks.findings.Finding`),
one check id per rule in :data:`NETWORK_CHECK_IDS`:

* ``networks.separate``: no cable joins two networks, except the declared OOB uplinks
  (an OOB switch to an in-band leaf) and the compute switches' management ports; a cable of
  these networks on a compute-fabric port (a storage cable on a compute leaf) is one;
* ``networks.node-ports``: every node port of every network is cabled, once, to its network;
* ``networks.port-reuse``: no switch port carries two cables, and none is past the radix;
* ``networks.bond``: the two ports of a bonded pair land on the two leaves of one pair;
* ``networks.storage-node``: each node's storage ports carry the required GB/s;
* ``networks.storage-bisection``: the targets' ports and the leaves' uplinks towards them
  carry every node's share at once; a shortfall names the figure needed;
* ``networks.as-built`` (as built only, :mod:`topogen.asbuilt.networks`): each network
  holds the design's cables of each role, and every row names a device and port of it.

A finding about one cable names it (``cables``: its 1-based row in ``networks-cabling.csv``,
the order of :attr:`Networks.cables`) and its two ends (``ports``), so ``topogen diff`` can
say which deviation breaks the design.
"""

from __future__ import annotations

from math import ceil

import numpy as np

from topogen.checks.findings import Finding
from topogen.fabric import networks as nw

NETWORK_CHECK_IDS = ("networks.separate", "networks.node-ports", "networks.port-reuse", "networks.bond", "networks.storage-node", "networks.storage-bisection", "networks.as-built")


def validate_networks(n: nw.Networks, required: "dict[str, float | None] | None" = None) -> list[Finding]:
    """Every check of the module docstring on ``n``; ``required``: ``per_node_GBps`` and ``aggregate_GBps`` (None: unset)."""
    out: list[Finding] = []
    _separate(n, out)
    _node_ports(n, out)
    _port_reuse(n, out)
    _bonds(n, out)
    _bandwidth(n, required or {}, out)
    return out


def cable_ends(n: nw.Networks, i: int) -> tuple[str, str]:
    """``device:port`` of both ends of cable ``i``, named as ``networks-cabling.csv`` names them."""
    c = n.cables
    net, role = int(c.net[i]), int(c.role[i])
    return tuple(f"{n.device_name(int(k), int(x), n.compute_names)}:{n.port_name(int(k), int(pt), net, role, int(x) if k == nw.SWITCH else -1)}" for k, x, pt in ((c.a_kind[i], c.a_idx[i], c.a_port[i]), (c.z_kind[i], c.z_idx[i], c.z_port[i])))  # type: ignore[return-value]


def _separate(n: nw.Networks, out: list[Finding]) -> None:
    c = n.cables
    net_of = np.fromiter((s.network for s in n.switches), np.int8, len(n.switches))
    for end in ("a", "z"):
        kind, idx = getattr(c, f"{end}_kind"), getattr(c, f"{end}_idx")
        sw = kind == nw.SWITCH
        bad = sw & (net_of[np.where(sw, idx, 0)] != c.net)
        fabric = kind == nw.FABRIC  # a compute switch: only its management port joins these networks
        if end == "a":
            bad &= c.role != nw.R_MPORT  # a switch's management port belongs to the OOB network
            fabric &= ~((c.role == nw.R_MPORT) & (c.net == nw.OOB))
        else:
            bad &= c.role != nw.R_OOBUP  # the declared OOB uplinks end on in-band leaves
        for i in np.flatnonzero(bad | fabric)[:20].tolist():
            ends = cable_ends(n, i)
            where = n.device_name(int(kind[i]), int(idx[i]), n.compute_names)
            other = "the compute fabric" if fabric[i] else f"the {nw.NETWORK_NAMES[n.switches[int(idx[i])].network]} network"
            out.append(Finding("networks.separate", "error", (where,), ends, f"a {nw.NETWORK_NAMES[c.net[i]]} cable ({ends[0]} -- {ends[1]}) ends on {where} of {other}", "only OOB uplinks (and switches' management ports) may join two networks", (i + 1,)))


def _node_ports(n: nw.Networks, out: list[Finding]) -> None:
    p, c = n.plan, n.cables
    node = c.a_kind == nw.NODE
    want = [(nw.STORAGE, p.net.storage_ports.count if p.net.storage.design == "separate" else 0, c.role != nw.R_NSTOR), (nw.INBAND, p.net.inband_ports.count, c.role == nw.R_NODE), (nw.OOB, p.net.bmc_ports.count, c.role == nw.R_MPORT)]
    if p.net.storage.design == "converged":
        want.append((nw.INBAND, p.net.storage_ports.count, c.role == nw.R_NSTOR))
    for net, count, sel in want:
        m = node & (c.net == net) & sel
        got = np.bincount(c.a_idx[m], minlength=p.nodes)[: p.nodes]
        bad = np.flatnonzero(got != count)
        if len(bad):
            first = int(bad[0])
            out.append(Finding("networks.node-ports", "error", (n.device_name(nw.NODE, first),), (), f"{len(bad):,} node(s) have not {count} {nw.NETWORK_NAMES[net]} port(s) cabled (first: {n.device_name(nw.NODE, first)} has {int(got[first])})", "every node port is cabled to its network once"))
        ports = c.a_idx[m] * 64 + c.a_port[m]
        if len(np.unique(ports)) != int(m.sum()):
            out.append(Finding("networks.node-ports", "error", (), (), f"a node port carries two {nw.NETWORK_NAMES[net]} cables", "each node port takes one cable"))


def _port_reuse(n: nw.Networks, out: list[Finding]) -> None:
    c = n.cables
    radix = np.fromiter((s.radix for s in n.switches), np.int64, len(n.switches))
    data = (c.a_kind == nw.SWITCH) & (c.role != nw.R_MPORT)  # a switch's management port is not one of its data ports
    ends = [(c.a_idx[data], c.a_port[data]), (c.z_idx[c.z_kind == nw.SWITCH], c.z_port[c.z_kind == nw.SWITCH])]
    sw = np.concatenate([e[0] for e in ends])
    port = np.concatenate([e[1] for e in ends]).astype(np.int64)
    extra = np.fromiter((n.plan.oob_uplink_ports or n.plan.net.oob.uplinks if s.network == nw.OOB else n.plan.net.inband.management_uplinks if s.role == "management-leaf" else 0 for s in n.switches), np.int64, len(n.switches))  # an OOB switch's (or management leaf's) uplink ports follow its access ports
    over = (port < 1) | (port > radix[sw] + extra[sw])
    rows = np.concatenate([np.flatnonzero(data), np.flatnonzero(c.z_kind == nw.SWITCH)])  # the cable of each end
    for i in np.flatnonzero(over)[:20]:
        out.append(Finding("networks.port-reuse", "error", (n.switches[int(sw[i])].name,), (f"{n.switches[int(sw[i])].name}:p{int(port[i])}",), f"port p{int(port[i])} of {n.switches[int(sw[i])].name} is past the switch's {int(radix[sw[i]] + extra[sw[i]])} ports", "renumber the cable", (int(rows[i]) + 1,)))
    key = sw * 1_000_000 + port
    uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    for j in np.flatnonzero(cnt > 1)[:20].tolist():
        k = int(uniq[j])
        s = n.switches[k // 1_000_000]
        ids = tuple(int(r) + 1 for r in np.sort(rows[inv.ravel() == j]).tolist())
        out.append(Finding("networks.port-reuse", "error", (s.name,), (f"{s.name}:p{k % 1_000_000}",), f"{s.name} port p{k % 1_000_000} carries {int(cnt[j])} cables", "one cable per port", ids))


def _bonds(n: nw.Networks, out: list[Finding]) -> None:
    """A bonded node's port pair (2k, 2k+1) lands on leaves a and b of one pair."""
    p, c = n.plan, n.cables
    if not p.net.inband_ports.bonded or not p.nodes:
        return
    m = (c.a_kind == nw.NODE) & (c.net == nw.INBAND) & (c.role == nw.R_NODE)
    order = np.lexsort((c.a_port[m], c.a_idx[m]))
    z = c.z_idx[m][order]
    cnt = p.net.inband_ports.count
    if len(z) != p.nodes * cnt:
        return  # reported by networks.node-ports
    z = z.reshape(p.nodes, cnt // 2, 2)
    pair = np.fromiter((s.pair for s in n.switches), np.int64, len(n.switches))
    bad = (z[..., 0] == z[..., 1]) | (pair[z[..., 0]] != pair[z[..., 1]]) | (pair[z[..., 0]] < 0)
    for node in np.flatnonzero(bad.any(axis=1))[:20]:
        name = n.device_name(nw.NODE, int(node))
        out.append(Finding("networks.bond", "error", (name,), (), f"{name}'s bonded in-band ports do not land on the two leaves of one pair", "put port 2k on leaf a and 2k+1 on leaf b of a pair"))


def _bandwidth(n: nw.Networks, required: dict, out: list[Finding]) -> None:
    p = n.plan
    per_node, aggregate = required.get("per_node_GBps"), required.get("aggregate_GBps")
    converged = p.net.storage.design == "converged"
    sp = p.net.storage_ports if p.net.storage_ports.count or not converged else p.net.inband_ports  # converged with no storage port: the in-band ports carry storage
    if per_node is not None and p.net.storage.design != "none":
        have = sp.gbps / 8
        if have < per_node:
            need = ceil(per_node * 8 / sp.speed)
            which = "inband" if sp is p.net.inband_ports and not p.net.storage_ports.count else "storage"
            out.append(Finding("networks.storage-node", "error", (), (), f"each node's {sp.count} x {sp.speed}G {which} port(s) carry {have:g} GB/s of storage, below the {per_node:g} GB/s required", f"needs {need} port(s) of {sp.speed}G per node (networks.node_ports.{which}.count: {need}), or faster ports"))
    if aggregate is None or p.net.storage.design == "none":
        return
    c = n.cables
    tspeed = p.net.storage.target_speed or sp.speed
    net = nw.INBAND if converged else nw.STORAGE
    targets = float(c.speed[(c.net == net) & (c.role == nw.R_TARGET)].sum()) / 8
    figures = [("the target ports", targets, lambda short: f"needs {ceil(aggregate * 8 / tspeed)} target ports of {tspeed}G (networks.storage.target_ports), {p.target_ports} given")]
    if not converged:
        roles = np.fromiter((s.role for s in n.switches), object, len(n.switches))
        up = (c.net == nw.STORAGE) & (c.role == nw.R_UP)
        a_role = roles[c.a_idx[up]]
        node_up = float(c.speed[up][a_role == "leaf"].sum()) / 8
        tgt_up = float(c.speed[up][a_role == "target-leaf"].sum()) / 8
        figures += [("the node leaves' uplinks", node_up, lambda short: f"needs {ceil(aggregate * 8 / sp.speed)} node-leaf uplinks of {sp.speed}G: lower networks.storage.node_oversubscription")]
        if p.net.storage.target_leaves != "node_leaves":  # targets on the node leaves: their traffic crosses the same uplinks, counted above
            figures.append(("the target leaves' uplinks", tgt_up, lambda short: f"needs {ceil(aggregate * 8 / sp.speed)} target-leaf uplinks: lower networks.storage.target_oversubscription or give more target_ports"))
    for what, have, hint in figures:
        if have < aggregate:
            out.append(Finding("networks.storage-bisection", "error", (), (), f"{what} carry {have:,.0f} GB/s towards the storage targets, below the {aggregate:,.0f} GB/s required", hint(aggregate - have)))


BUILT_CHECK_IDS = NETWORK_CHECK_IDS[:-1]  # what a build's own wiring is checked for (as-built compares a file with the design)


def render(arch: str, findings: list[Finding], checks: tuple[str, ...] = BUILT_CHECK_IDS, what: str = "storage, in-band and OOB networks") -> str:
    """The findings of ``arch``'s other networks as ``topogen validate`` prints them."""
    errors = sum(1 for f in findings if f.severity == "error")
    lines = [f"{arch}: {what}: {'valid' if not errors else f'{errors} error(s)'} ({', '.join(checks)})"]
    lines += [f"  {f.severity:7s} {f.check}: {f.message}" + (f" ({f.hint})" if f.hint else "") for f in findings]
    return "\n".join(lines)
