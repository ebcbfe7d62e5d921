"""The other networks on the floor: management racks, every device's rack and U, every cable's length.

:func:`plan_networks` places the storage, in-band and OOB networks of one architecture
(:class:`topogen.fabric.networks.Networks`) around the compute fabric's layout, which it
leaves as it is:

* **Nodes** are where the compute layout put their trays; their storage, in-band and BMC
  ports sit on the tray, like their GPU NICs. **Compute switches** (whose management ports
  the OOB network takes) stay in their leaf and spine racks.
* **Management racks** stand in a row of their own at the end of the hall (after every
  compute and network row), ``switches_per_rack`` devices of ``switch_u`` to a rack, from
  ``first_u`` up: first the storage and in-band switches (storage, then in-band, in the
  model's order), then the management servers and fabric managers in racks of their own.
  The model counts the same racks (its management racks are the compute fabric's switch
  racks plus these), so every rack has its PDUs.
* **OOB access switches** of a scalable unit stand in that unit's compute racks, above the
  trays (switch ``i`` of ``s`` in the rack of the unit's node ``i x nodes / s``), as in a
  DGX SuperPOD; a rack without room sends its switch to the management racks. The shared
  OOB switches (``oob-mgmt-*``) take the free slots of the management racks.
* **In a large hall** (a node's or a shared device's run past :data:`ACCESS_REACH_M`):
  each scalable unit (split by row where it wraps between far rows: :func:`su_groups`) gets
  storage node leaves, in-band leaves and OOB switches of its own, its leaves standing with
  its nodes (:func:`leaf_racks`, ``leaves_with_su``), and the shared devices take the OOB
  switches nearest them (:func:`oob_home`). These follow from the plan and the compute
  layout, so :func:`wire_and_place` wires the model once more, not until it settles.
* **PDUs** are zero-U, mounted at the side of their rack (U 0); their management port is
  taken at mid-height.
* **Storage targets, the NFS appliance and the data-centre core** are outside the plan:
  where they stand is not known, so their cables get no length (NaN; an empty cell).

Cable lengths follow :mod:`.cables`: up to the overhead tray, the Manhattan distance along it,
down again (or straight within a rack), plus slack, rounded up to a sold length. All arrays
are numpy columns over the networks' cable table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import ceil
from typing import Any

import numpy as np

from topogen.fabric import networks as nw
from topogen.layout import Layout
from topogen.layout.cables import route_m, sold_m
from topogen.layout.floor import U_M, Racks, rack_names, row_name
from topogen.util.errors import InputError, Problem

EXTERNAL = -1  # rack of a device outside the plan (storage targets, NFS, data-centre core)


@dataclass
class NetworkLayout:
    """Racks (the compute layout's, then the management racks) and where every device of the networks stands.

    ``where[kind]`` is ``(rack, u, height_u)`` per device index of that kind
    (:data:`topogen.fabric.networks.KIND_NAMES`); ``rack`` is :data:`EXTERNAL` for devices
    outside the plan, ``u`` 0 for zero-U PDUs. ``routed_m`` and ``length_m`` are per cable of
    ``networks.cables``.
    """

    floor: Racks  # every rack: the compute layout's, then the management racks
    first_management: int  # index of the first management rack in ``floor``
    where: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]
    a_rack: np.ndarray  # object: rack name of each cable's a end ("" outside the plan)
    z_rack: np.ndarray
    routed_m: np.ndarray  # float64, NaN for a cable with an end outside the plan
    length_m: np.ndarray
    net: np.ndarray  # each cable's network (the model's ``cables.net``), for the figures per network
    shared_tray: bool = False  # several nodes to a tray: a label names the node with its port
    leaves_with_su: int = 0  # storage and in-band leaves standing in compute racks (the model's ``NetworkPlan.leaves_with_su``)

    @property
    def racks(self) -> list[str]:
        """Names of the management racks placed (after the compute layout's racks)."""
        return list(self.floor.name[self.first_management :])

    def rack_names(self, kind: int, idx: np.ndarray) -> np.ndarray:
        """Rack name of each device (empty for devices outside the plan)."""
        names = np.asarray(list(self.floor.name) + [""], dtype=object)
        return names[self.where[kind][0][idx]]  # EXTERNAL (-1) picks the trailing ""

    def summary(self) -> dict[str, Any]:
        """Racks by kind and cable metres per network (cables with a length: both ends in the plan): what summary.json carries."""
        kinds: dict[str, int] = {}
        for k in self.floor.kind:
            kinds[k] = kinds.get(k, 0) + 1
        known = ~np.isnan(self.length_m)
        per_net = {}
        for k, name in enumerate(nw.NETWORK_NAMES):
            sel = (self.net == k) & known
            if sel.any():
                vals, counts = np.unique(self.length_m[sel], return_counts=True)
                per_net[name] = {
                    "cables": int(((self.net == k)).sum()),
                    "with_length": int(sel.sum()),
                    "max_m": _num(float(self.length_m[sel].max())),
                    "total_m": _num(round(float(self.length_m[sel].sum()), 1)),
                    "length_histogram_m": {str(_num(v)): int(c) for v, c in zip(vals.tolist(), counts.tolist())},
                }
        return {
            "racks": len(self.floor),
            "racks_by_kind": kinds,
            "management_racks_placed": len(self.floor) - self.first_management,
            "cables_with_length": int(known.sum()),
            "cable_m_total": _num(round(float(self.length_m[known].sum()), 1)),
            "cables": per_net,
        }


def _num(x: float):
    return int(x) if float(x).is_integer() else x


def compute_switch_racks(lay: Layout) -> int:
    """Racks of the compute layout that hold switches (every rack that is not a compute rack)."""
    return sum(k != "compute" for k in lay.racks.kind)


def plan_networks(networks: nw.Networks, lay: Layout, leaves_with_su: bool = False) -> NetworkLayout:
    """Place every device of ``networks`` around the compute layout ``lay`` and give every cable a length.

    ``leaves_with_su``: the storage node leaves and in-band leaves stand in the compute racks
    of the nodes they serve (above the trays, where there is room), not in the management row;
    :func:`too_far` says when a hall needs it.
    """
    s, p = lay.spec, lay.placement
    plan_ = networks.plan
    n_gpus = lay.gpus
    spr = s.switches_per_rack
    R = len(lay.racks)
    # nodes: their first GPU's tray
    node_gpu = np.arange(plan_.nodes, dtype=np.int64) * plan_.gpus_per_node
    where: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {
        nw.NODE: (p.rack[node_gpu].astype(np.int64), p.u[node_gpu].astype(np.int64), p.height_u[node_gpu].astype(np.int64)),
        nw.FABRIC: (p.rack[n_gpus:].astype(np.int64), p.u[n_gpus:].astype(np.int64), p.height_u[n_gpus:].astype(np.int64)),
    }
    # management racks: switch racks (storage, in-band), then server racks
    sw = networks.switches
    top = _tops(lay)
    sw_rack = np.full(len(sw), -1, np.int64)
    sw_u = np.zeros(len(sw), np.int64)
    if leaves_with_su:
        ids = [i for i, x in enumerate(sw) if x.network != nw.OOB and x.role == "leaf" and x.group >= 0]  # the node leaves, in nw.node_leaves' order
        rack, u = leaf_racks(plan_, lay, top)
        if len(ids) != len(rack):
            raise AssertionError("the model's node leaves are not the plan's")
        keep = rack >= 0
        sw_rack[np.asarray(ids, np.int64)[keep]], sw_u[np.asarray(ids, np.int64)[keep]] = rack[keep], u[keep]
    for i, x in enumerate(sw):  # a collapsed core's leaf stands where the compute fabric put its box
        if x.compute >= 0:
            sw_rack[i], sw_u[i] = where[nw.FABRIC][0][x.compute], where[nw.FABRIC][1][x.compute]
    net_sw = [i for i, x in enumerate(sw) if x.network != nw.OOB and sw_rack[i] < 0]
    servers = plan_.net.management_servers + plan_.net.compute_fabric_managers + plan_.net.storage.fabric_managers
    sw_racks, srv_racks = ceil(len(net_sw) / spr), ceil(servers / spr)
    slots: list[tuple[int, int]] = []  # (management rack, slot) of every device placed there, in order
    free: list[tuple[int, int]] = [(r, k) for r in range(sw_racks) for k in range(spr)][len(net_sw):]
    free += [(sw_racks + r, k) for r in range(srv_racks) for k in range(spr)][servers:]
    mgmt_rack = np.zeros(len(sw), np.int64)
    mgmt_slot = np.zeros(len(sw), np.int64)
    for j, i in enumerate(net_sw):
        mgmt_rack[i], mgmt_slot[i] = divmod(j, spr)
    srv = np.arange(servers, dtype=np.int64)
    srv_rack, srv_slot = sw_racks + srv // spr, srv % spr
    # OOB access switches: per group in the group's compute racks, above the trays; the rest in the free slots
    groups = _group_first_nodes(plan_)
    per_group: dict[int, list[int]] = {}
    for i, x in enumerate(sw):
        if x.network == nw.OOB and x.group >= 0:
            per_group.setdefault(x.group, []).append(i)
    for g, ids in per_group.items():
        first, cnt = groups[g]
        for k, i in enumerate(ids):
            rack = int(where[nw.NODE][0][first + k * cnt // len(ids)]) if cnt else -1
            if rack >= 0 and top[rack] + s.switch_u - 1 <= s.rack_u and lay.racks.kind[rack] == "compute":
                sw_rack[i], sw_u[i] = rack, top[rack]
                top[rack] += s.switch_u
    extra_racks = 0
    for i, x in enumerate(sw):
        if x.network == nw.OOB and sw_rack[i] < 0:
            if not free:  # no slot left: a management rack of its own (the model counts none for it)
                base = sw_racks + srv_racks + extra_racks
                free = [(base, k) for k in range(spr)]
                extra_racks += 1
            mgmt_rack[i], mgmt_slot[i] = free.pop(0)
            net_sw.append(i)
    n_mgmt = sw_racks + srv_racks + extra_racks
    for i in net_sw:
        sw_rack[i] = R + mgmt_rack[i]
        sw_u[i] = s.first_u + mgmt_slot[i] * s.switch_u
    where[nw.SWITCH] = (sw_rack, sw_u, np.full(len(sw), s.switch_u, np.int64))
    srv_where = (R + srv_rack, s.first_u + srv_slot * s.switch_u, np.full(servers, s.switch_u, np.int64))
    nm = plan_.net.management_servers
    where[nw.MGMT] = tuple(a[:nm] for a in srv_where)  # type: ignore[assignment]
    where[nw.UFM] = tuple(a[nm:] for a in srv_where)  # type: ignore[assignment]
    # PDUs: compute racks' first, then the management racks' (the compute layout's switch racks, then ours)
    pc, pm = plan_.net.oob.pdus_per_compute_rack, plan_.net.oob.pdus_per_management_rack
    cr, mr = networks.racks
    compute_ids = np.asarray([i for i, k in enumerate(lay.racks.kind) if k == "compute"], np.int64)
    switch_ids = np.asarray([i for i, k in enumerate(lay.racks.kind) if k != "compute"] + [R + r for r in range(n_mgmt)], np.int64)
    if mr > len(switch_ids):  # a model wired for more management racks (leaves not yet placed with their nodes): the caller places again
        switch_ids = np.concatenate([switch_ids, np.full(mr - len(switch_ids), switch_ids[-1] if len(switch_ids) else 0, np.int64)])
    pdu_rack = np.concatenate([np.repeat(compute_ids[:cr], pc), np.repeat(switch_ids[:mr], pm)]).astype(np.int64)
    where[nw.PDU] = (pdu_rack, np.zeros(len(pdu_rack), np.int64), np.zeros(len(pdu_rack), np.int64))
    rd = plan_.net.oob.hb_switch_trays + plan_.net.oob.power_shelves  # a rack-scale system's switch trays and power shelves: in their compute rack, port at mid-height
    dev_rack = np.repeat(compute_ids[:cr], rd).astype(np.int64)
    where[nw.RACKDEV] = (dev_rack, np.zeros(len(dev_rack), np.int64), np.zeros(len(dev_rack), np.int64))
    for k in (nw.TARGETS, nw.NFS, nw.CORE):
        where[k] = (np.full(1, EXTERNAL, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))
    racks = _with_management_racks(lay.racks, n_mgmt, plan_.naming)
    c = networks.cables
    routed = _routed(c, where, racks, s)
    known = ~np.isnan(routed)
    length = np.where(known, sold_m(np.where(known, routed, 0.0), s.lengths_m), np.nan)
    names = np.asarray(list(racks.name) + [""], dtype=object)
    ends = []
    for kind, idx in ((c.a_kind, c.a_idx), (c.z_kind, c.z_idx)):
        r = np.full(len(kind), EXTERNAL, np.int64)
        for k in np.unique(kind).tolist():
            m = kind == k
            r[m] = where[int(k)][0][idx[m]]
        ends.append(names[r])
    placed = int(sum(1 for i, x in enumerate(sw) if x.network != nw.OOB and 0 <= sw_rack[i] < R))
    return NetworkLayout(racks, R, where, ends[0], ends[1], routed, length, c.net.copy(), plan_.gpus_per_node < s.gpus_per_tray, placed)


ACCESS_REACH_M = 100.0  # the shortest reach of the networks' access media (multimode SR4, Cat6, a node's DR4 module)


def too_far(networks: nw.Networks, nlay: NetworkLayout) -> bool:
    """Whether a node's storage or in-band run to its leaf in the management row exceeds :data:`ACCESS_REACH_M`.

    The rule: the leaves stand in the central management row while every node run from it
    fits (a small hall: one row of network racks, as in a DGX SuperPOD); past that they
    stand with their nodes (:func:`plan_networks` with ``leaves_with_su``).
    """
    c = networks.cables
    node_runs = (c.role == nw.R_NODE) & (c.net != nw.OOB) & ~np.isnan(nlay.routed_m)
    return bool(node_runs.any() and float(nlay.length_m[node_runs].max()) > ACCESS_REACH_M)


def oob_too_far(networks: nw.Networks, nlay: NetworkLayout) -> bool:
    """Whether a shared device's management port (any but a node's BMC or a compute rack's PDU) runs past :data:`ACCESS_REACH_M`."""
    runs = _shared_ports(networks) & ~np.isnan(nlay.routed_m)
    return bool(runs.any() and float(nlay.length_m[runs].max()) > ACCESS_REACH_M)


def _tops(lay: Layout) -> np.ndarray:
    """The first free U of every rack of the compute layout (above its trays and switches)."""
    p = lay.placement
    top = np.full(len(lay.racks), lay.spec.first_u, np.int64)
    np.maximum.at(top, p.rack.astype(np.int64), (p.u + p.height_u).astype(np.int64))
    return top


def _node_racks(plan: nw.NetworkPlan, lay: Layout) -> np.ndarray:
    """The compute rack of every node (its first GPU's tray)."""
    return lay.placement.rack[np.arange(plan.nodes, dtype=np.int64) * plan.gpus_per_node].astype(np.int64)


def _nearest_group(plan: nw.NetworkPlan, lay: Layout, rack: np.ndarray) -> np.ndarray:
    """The OOB group whose middle node's rack is nearest each rack along the trays; -1 for a rack outside the compute layout."""
    node_rack = _node_racks(plan, lay)
    ref = np.asarray([node_rack[f + n // 2] for f, n in _group_first_nodes(plan)], np.int64)
    home = np.full(len(rack), -1, np.int64)
    inside = (rack >= 0) & (rack < len(lay.racks))
    uniq, inv = np.unique(rack[inside], return_inverse=True)
    if len(uniq) and len(ref):  # distances of every rack holding such a device to every group's rack: a few thousand x a few hundred
        ra, rz = np.repeat(uniq, len(ref)), np.tile(ref, len(uniq))
        zero = np.zeros(len(ra), np.float64)
        d = route_m(lay.spec, lay.racks.row, lay.racks.col, ra, rz, zero, zero).reshape(len(uniq), len(ref))
        home[inside] = np.argmin(d, axis=1)[inv]
    return home


def oob_home(plan: nw.NetworkPlan, lay: Layout, leaf_rack: np.ndarray) -> nw.OobHomes:
    """The OOB group nearest each shared device outside the management row (the model's ``NetworkPlan.oob_home``).

    The rule, used where the spare ports in order would run a Cat6 cord past its reach
    (:func:`oob_too_far`) and wherever the leaves stand with their nodes: a device in the
    management row (spines, servers, the row's PDUs) takes an OOB switch of that row; any
    other (a compute switch, a leaf standing with its nodes, a compute switch rack's PDU) the
    OOB switches of the group whose middle node's rack is nearest along the cable trays.
    ``leaf_rack``: :func:`leaf_racks`' racks (empty when the leaves stay in the management row).
    """
    fabric = _nearest_group(plan, lay, lay.placement.rack[lay.gpus :].astype(np.int64))
    nst = len(nw.storage_shape(plan).leaf_first) if plan.net.storage.design == "separate" and len(leaf_rack) else 0
    leaves = _nearest_group(plan, lay, leaf_rack)
    switch_racks = np.asarray([i for i, k in enumerate(lay.racks.kind) if k != "compute"], np.int64)
    pdus = _nearest_group(plan, lay, np.repeat(switch_racks, plan.net.oob.pdus_per_management_rack))
    return nw.OobHomes(tuple(fabric.tolist()), tuple(leaves[:nst].tolist()), tuple(leaves[nst:].tolist()), tuple(pdus.tolist()))


def _shared_ports(networks: nw.Networks) -> np.ndarray:
    """Mask of the OOB management-port cables of the shared devices (the model's OOB wiring puts them last)."""
    c = networks.cables
    p = networks.plan
    compute_pdus = networks.racks[0] * p.net.oob.pdus_per_compute_rack
    return (c.net == nw.OOB) & (c.role == nw.R_MPORT) & (c.a_kind != nw.NODE) & (c.a_kind != nw.RACKDEV) & ~((c.a_kind == nw.PDU) & (c.a_idx < compute_pdus))


def leaf_racks(plan: nw.NetworkPlan, lay: Layout, top: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rack and U of every node leaf (:func:`topogen.fabric.networks.node_leaves`) standing with its nodes; rack -1: the management row.

    The rule: a leaf stands in the rack of its middle node, above the trays, else in the
    nearest rack of its nodes with room for a switch; a leaf with no room in any of its
    nodes' racks stays in the management row. Leaves are placed in switch order, each
    taking the room it finds (``top``, updated). The plan alone decides it, so the model
    counts these leaves out of the management racks before it is wired.
    """
    s = lay.spec
    top = _tops(lay) if top is None else top
    node_rack = _node_racks(plan, lay)
    first, count = nw.node_leaves(plan)
    rack = np.full(len(first), -1, np.int64)
    u = np.zeros(len(first), np.int64)
    kind = lay.racks.kind
    for i, (f, n) in enumerate(zip(first.tolist(), count.tolist())):
        racks = node_rack[f : f + n]
        mid = int(racks[n // 2])
        for r in sorted(set(racks.tolist()), key=lambda r: (abs(r - mid), r)):
            if kind[r] == "compute" and top[r] + s.switch_u - 1 <= s.rack_u:
                rack[i], u[i] = r, top[r]
                top[r] += s.switch_u
                break
    return rack, u


def wire_and_place(plan: nw.NetworkPlan, lay: Layout) -> tuple[nw.Networks, NetworkLayout]:
    """Wire and place the networks; in a hall too large for the management row's reach, place what serves the nodes near them.

    The model is wired and placed with every leaf in the management row. Where that
    placement runs a node's storage or in-band cable past its medium's reach
    (:func:`too_far`), the leaves stand with their nodes: each scalable unit (split by row
    where it wraps between rows too far apart: :func:`su_groups`) gets storage node leaves,
    in-band leaves and OOB switches of its own (:func:`leaf_racks`), and the shared devices
    take the OOB switches nearest them (:func:`oob_home`); where only a shared device's
    Cat6 run is too long (:func:`oob_too_far`), just the latter. Those decisions come from
    the plan and the compute layout alone, so the model is wired once more, and placed.
    """
    net = nw.generate(plan)
    nlay = plan_networks(net, lay)
    with_su, homed = too_far(net, nlay), oob_too_far(net, nlay)
    if not (with_su or homed):
        return net, nlay
    rack = np.zeros(0, np.int64)
    if with_su:
        plan = replace(plan, node_groups=su_groups(plan, lay))
        plan = replace(plan, inband_blocks=inband_blocks(plan, lay))
        rack, _ = leaf_racks(plan, lay)
        plan = replace(plan, leaves_with_su=int((rack >= 0).sum()))
    plan = replace(plan, oob_home=oob_home(plan, lay, rack))
    net = nw.generate(plan)
    return net, plan_networks(net, lay, leaves_with_su=with_su)


def su_groups(plan: nw.NetworkPlan, lay: Layout) -> tuple[int, ...]:
    """Nodes of each group whose leaves and OOB switches stand with it (the model's ``NetworkPlan.node_groups``).

    The rule: each scalable unit (without SUs: each OOB access switch's worth of nodes) is
    a group, unless one of its nodes stands farther than
    :data:`ACCESS_REACH_M` from its middle node's rack (routed from floor to floor, the
    longest a run between the two racks gets): an SU that wraps from the end of a long row to
    the start of the next. Such an SU is split by row, each row's share a group of its own.
    A share still too wide is an InputError naming the SU, the row and the fix (every such share at once).
    """
    s = lay.spec
    racks = lay.racks
    node_rack = _node_racks(plan, lay)
    sizes = np.asarray(nw.node_groups(replace(plan, node_groups=()), _oob_group_nodes(plan)), np.int64)  # the SUs (without SUs: an OOB switch's worth of nodes)
    first = np.cumsum(sizes) - sizes
    far = _spread_m(s, racks, node_rack, first, sizes) > ACCESS_REACH_M
    if not far.any():
        return tuple(sizes.tolist())
    out: list[int] = []
    problems: list[Problem] = []
    for su, (f, n) in enumerate(zip(first.tolist(), sizes.tolist())):
        if not far[su]:
            out.append(n)
            continue
        rows = racks.row[node_rack[f : f + n]]
        cut = np.flatnonzero(np.diff(rows)) + 1
        pf = np.concatenate([[0], cut]).astype(np.int64)
        pn = np.diff(np.concatenate([pf, [n]])).astype(np.int64)
        wide = _spread_m(s, racks, node_rack[f : f + n], pf, pn)
        for k in np.flatnonzero(wide > ACCESS_REACH_M).tolist():
            row = row_name(int(rows[pf[k]]))
            what = f"scalable unit {su}" if plan.su_nodes else f"node group {su} (nodes {f}-{f + n - 1})"
            problems.append(Problem("layout.racks_per_row", f"{what}'s {pn[k]} nodes in row {row} need runs of up to {wide[k]:.0f} m to a leaf or OOB switch in the rack in their middle, past the {ACCESS_REACH_M:g} m reach of the nodes' storage, in-band and BMC media", "stand fewer racks side by side in a row (layout.racks_per_row), narrower racks (layout.rack_width_m), or make networks.scalable_unit smaller"))
        out += pn.tolist()
    if problems:
        raise InputError(problems)
    return tuple(out)


def inband_blocks(plan: nw.NetworkPlan, lay: Layout) -> tuple[int, ...]:
    """Node groups on each block of in-band leaves (the model's ``NetworkPlan.inband_blocks``); () one group each.

    The rule: consecutive groups (small SUs) share a leaf pair while their nodes' units fit
    one pair's down ports, they stand in one row and every node is within
    :data:`ACCESS_REACH_M` of their middle node's rack; a pair thus serves a whole number of
    SUs, or (an SU larger than a pair) a whole fraction of one.
    """
    down, per_node = nw.inband_down(plan), nw.units_per_node(plan)
    node_rack = _node_racks(plan, lay)
    row = lay.racks.row[node_rack]
    out: list[int] = []
    first, nodes, joined = 0, 0, 0
    for g in nw.node_groups(plan, 1):
        f = first + nodes
        if joined:
            a, z = first, f + g
            fits = (nodes + g) * per_node <= down and row[a] == row[z - 1] and (row[a:z] == row[a]).all()
            if fits and _spread_m(lay.spec, lay.racks, node_rack[a:z], np.zeros(1, np.int64), np.asarray([z - a], np.int64))[0] <= ACCESS_REACH_M:
                nodes += g
                joined += 1
                continue
            out.append(joined)
        first, nodes, joined = f, g, 1
    out.append(joined)
    return tuple(out) if max(out) > 1 else ()


def _spread_m(s, racks: Racks, node_rack: np.ndarray, first: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Longest floor-to-floor route (metres) from each group's middle node's rack to a rack of its nodes."""
    mid = node_rack[first + sizes // 2]
    zero = np.zeros(len(node_rack), np.float64)
    d = route_m(s, racks.row, racks.col, np.repeat(mid, sizes), node_rack, zero, zero)
    return np.maximum.reduceat(d, first)


def _oob_group_nodes(p: nw.NetworkPlan) -> int:
    """Nodes of an OOB group without SUs: an access switch's worth."""
    return max(1, p.oob_radix // max(1, p.net.bmc_ports.count))


def _group_first_nodes(p: nw.NetworkPlan) -> list[tuple[int, int]]:
    """``(first node, nodes)`` of every OOB group (the model's grouping: its node groups, scalable units, or an access switch's worth)."""
    sizes = nw.node_groups(p, _oob_group_nodes(p))
    out, first = [], 0
    for c in sizes:
        out.append((first, c))
        first += c
    return out


def _with_management_racks(racks: Racks, count: int, naming=None) -> Racks:
    """The compute layout's racks and ``count`` management racks in a row of their own at the end of the hall."""
    if not count:
        return racks
    width = int(racks.col.max()) + 1 if len(racks) else count
    width = max(width, 1)
    row0 = int(racks.row.max()) + 1 if len(racks) else 0
    k = np.arange(count, dtype=np.int64)
    rows, cols = row0 + k // width, k % width
    cw = max(2, len(str(width)))
    names = rack_names(rows, cols, cw, naming, len(racks))
    return Racks(list(racks.name) + names, list(racks.kind) + ["management"] * count, np.concatenate([racks.row, rows]), np.concatenate([racks.col, cols]))


def _routed(c: nw.CableTable, where, racks: Racks, s) -> np.ndarray:
    """Routed metres of every cable; NaN where an end is outside the plan (its position is unknown)."""
    ends = []
    for kind, idx in ((c.a_kind, c.a_idx), (c.z_kind, c.z_idx)):
        r = np.zeros(len(kind), np.int64)
        u = np.zeros(len(kind), np.float64)
        h = np.zeros(len(kind), np.float64)
        for k in np.unique(kind).tolist():
            m = kind == k
            wr, wu, wh = where[int(k)]
            r[m], u[m], h[m] = wr[idx[m]], wu[idx[m]], wh[idx[m]]
        ends.append((r, u, h))
    (ra, ua, ha), (rz, uz, hz) = ends
    known = (ra >= 0) & (rz >= 0)
    ra, rz = np.where(known, ra, 0), np.where(known, rz, 0)
    routed = route_m(s, racks.row, racks.col, ra, rz, _port_height(ua, ha, s), _port_height(uz, hz, s))
    return np.where(known, routed, np.nan)


def _port_height(u: np.ndarray, h: np.ndarray, s) -> np.ndarray:
    """Port height in metres: mid-height of the device; a zero-U PDU's at mid-rack."""
    mid = (u - 0.5 + h / 2) * U_M
    return np.where(h == 0, s.rack_u / 2 * U_M, mid)


FLOOR_COLUMNS = ("a_rack", "a_u", "z_rack", "z_u", "length_m", "label")


def floor_rows(networks: nw.Networks, nlay: NetworkLayout, a_dev: np.ndarray, a_port: np.ndarray, z_dev: np.ndarray, z_port: np.ndarray) -> list[tuple]:
    """:data:`FLOOR_COLUMNS` of every cable, given each end's device and port names (in cable order).

    A label names both ends, ``a`` first: ``<rack>-U<u> <port>`` for a racked device
    (a node's port carries its host name when several nodes share a tray), the device
    name for a zero-U PDU or a device outside the plan: ``A01-U02 stor0 / C01-U03 p1``,
    ``A01 pdu-c00-1 mgmt0 / A01-U35 p9``. Every port holds one cable, so every label is unique.
    """
    c = networks.cables
    shared_tray = nlay.shared_tray
    out_ends = []
    for kind, idx, dev, port in ((c.a_kind, c.a_idx, a_dev, a_port), (c.z_kind, c.z_idx, z_dev, z_port)):
        rack = np.empty(len(kind), object)
        u = np.zeros(len(kind), np.int64)
        for k in np.unique(kind).tolist():
            m = kind == k
            rack[m] = nlay.rack_names(int(k), idx[m])
            u[m] = nlay.where[int(k)][1][idx[m]]
        ends = []
        for r, uu, d, pt, k in zip(rack.tolist(), u.tolist(), dev, port, kind.tolist()):
            if not r:
                ends.append(f"{d} {pt}")
            elif not uu:
                ends.append(f"{r} {d} {pt}")
            else:
                ends.append(f"{r}-U{uu:02d} {d + '-' if k == nw.NODE and shared_tray else ''}{pt}")
        out_ends.append((rack, u, ends))
    (ra, ua, ea), (rz, uz, ez) = out_ends
    lengths = ["" if x != x else _num(x) for x in nlay.length_m.tolist()]  # NaN: an end outside the plan
    return [(ra[i], int(ua[i]) if ra[i] else "", rz[i], int(uz[i]) if rz[i] else "", lengths[i], f"{ea[i]} / {ez[i]}") for i in range(len(c))]
