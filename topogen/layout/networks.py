"""The other networks on the floor: management racks, a rack for every device, a length for every cable.

:func:`plan_networks` places the storage, in-band and OOB networks of one architecture
beside its compute layout (:func:`topogen.layout.plan`), with the same routing rule
(:mod:`.cables`: up to the tray, along it, down again; slack; rounded up to a sold length):

* nodes and compute switches stand where the compute layout put them (a node at its first
  GPU's tray);
* management racks stand in one row after the compute layout's last row: first the storage
  and in-band switches, ``switches_per_rack`` to a rack, ``switch_u`` each from ``first_u``;
  then the management servers and fabric managers, as many to a rack;
* an OOB access switch stands at the top of its scalable unit's compute racks (one per rack
  in turn), an extra one in the management racks' row after them;
* a compute rack's PDUs are at its mid-height, a management rack's likewise;
* the storage targets, the NFS storage and the data-centre core stand outside the plan:
  their cables get no length (NaN).

Management racks here are the compute layout's network racks plus these, which is the
count :class:`~topogen.fabric.networks.Networks` reports (``racks[1]``) when the pipeline
passes the compute layout's network racks to the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
import numpy as np

from topogen.fabric import networks as nw
from topogen.layout.cables import sold_m
from topogen.layout.floor import U_M, row_name


@dataclass
class NetworkLayout:
    """Management racks (names), and per cable of the networks: each end's rack name and the lengths."""

    racks: list[str]
    a_rack: np.ndarray  # object: rack name per cable ("" outside the plan)
    z_rack: np.ndarray
    routed_m: np.ndarray  # float64, NaN outside the plan
    length_m: np.ndarray

    def summary(self) -> dict:
        known = ~np.isnan(self.length_m)
        return {"management_racks_placed": len(self.racks), "cables_with_length": int(known.sum()), "cable_m_total": round(float(self.length_m[known].sum()), 1)}


def plan_networks(n: nw.Networks, layout) -> NetworkLayout:
    """Place ``n`` beside the compute ``layout`` (:class:`topogen.layout.Layout`) and route its cables."""
    lay, p = layout.spec, layout.placement
    racks = p.racks
    row = int(racks.row.max()) + 1 if len(racks) else 0
    spr = lay.switches_per_rack
    x_of = list(((racks.col.astype(np.float64) + 0.5) * lay.rack_width_m).tolist())
    y_of = list((racks.row.astype(np.float64) * lay.row_pitch_m).tolist())
    names = list(racks.name)

    def new_rack(col: int) -> int:
        names.append(f"{row_name(row)}{col + 1:02d}")
        x_of.append((col + 0.5) * lay.rack_width_m)
        y_of.append(row * lay.row_pitch_m)
        return len(names) - 1

    # management racks: storage and in-band switches, then servers
    sw_rack = np.full(len(n.switches), -1, np.int64)
    sw_u = np.zeros(len(n.switches), np.float64)
    mgmt = [i for i, s in enumerate(n.switches) if s.network != nw.OOB]
    col = 0
    first = len(names)
    for k, i in enumerate(mgmt):
        if k % spr == 0:
            new_rack(col)
            col += 1
        sw_rack[i], sw_u[i] = len(names) - 1, lay.first_u + (k % spr) * lay.switch_u
    servers = n.endpoints["mgmt"] + n.endpoints["ufm"]
    srv_rack = np.zeros(max(servers, 1), np.int64)
    srv_u = np.zeros(max(servers, 1), np.float64)
    for k in range(servers):
        if k % spr == 0:
            new_rack(col)
            col += 1
        srv_rack[k], srv_u[k] = len(names) - 1, lay.first_u + (k % spr) * lay.switch_u
    # OOB access switches: the top of their SU's compute racks; extra ones in the management row
    compute_racks = np.flatnonzero(np.asarray(racks.kind) == "compute")
    node_rack = p.rack[np.arange(n.plan.nodes) * n.plan.gpus_per_node]
    per_group: dict[int, int] = {}
    extra = 0
    last_compute = int(compute_racks.max()) if len(compute_racks) else 0
    for i, s in enumerate(n.switches):
        if s.network != nw.OOB:
            continue
        if s.group >= 0:  # the k-th access switch of an SU: the top U of the SU's k-th compute rack
            k = per_group.get(s.group, 0)
            per_group[s.group] = k + 1
            r0 = int(node_rack[min(_first_node(n, s.group), n.plan.nodes - 1)])
            sw_rack[i], sw_u[i] = min(r0 + k, last_compute), lay.rack_u - lay.switch_u + 1
        else:  # the shared devices' own access switches: racks of their own in the management row
            if extra % spr == 0:
                new_rack(col)
                col += 1
            sw_rack[i], sw_u[i] = len(names) - 1, lay.first_u + (extra % spr) * lay.switch_u
            extra += 1
    mgmt_racks = names[first:]
    # positions of every cable end
    c = n.cables
    pdu_racks = np.asarray(range(first, len(names)) or [-1], np.int64)  # a management rack's PDUs: the placed management racks in turn
    rack_a, u_a = _ends(n, c.a_kind, c.a_idx, p, layout, sw_rack, sw_u, srv_rack, srv_u, compute_racks, pdu_racks)
    rack_z, u_z = _ends(n, c.z_kind, c.z_idx, p, layout, sw_rack, sw_u, srv_rack, srv_u, compute_racks, pdu_racks)
    x, y = np.asarray(x_of), np.asarray(y_of)
    known = (rack_a >= 0) & (rack_z >= 0)
    ra, rz = np.where(known, rack_a, 0), np.where(known, rack_z, 0)
    ha, hz = (u_a - 0.5) * U_M, (u_z - 0.5) * U_M
    flat = np.abs(x[ra] - x[rz]) + np.abs(y[ra] - y[rz])
    routed = np.where(ra == rz, np.abs(ha - hz), flat + (lay.tray_height_m - ha) + (lay.tray_height_m - hz)) + lay.slack_m
    routed = np.where(known, routed, np.nan)
    length = np.where(known, sold_m(np.where(known, routed, 0.0), lay.lengths_m), np.nan)
    name_arr = np.asarray(names + [""], dtype=object)
    return NetworkLayout(mgmt_racks, name_arr[np.where(rack_a >= 0, rack_a, len(names))], name_arr[np.where(rack_z >= 0, rack_z, len(names))], routed, length)


def _first_node(n: nw.Networks, group: int) -> int:
    """First node of scalable unit (or node group) ``group``, as the OOB rule groups them."""
    p = n.plan
    size = p.su_nodes or max(1, p.oob_radix // max(1, p.net.bmc_ports.count))
    return group * size


def _ends(n, kind, idx, p, layout, sw_rack, sw_u, srv_rack, srv_u, compute_racks, pdu_racks) -> tuple[np.ndarray, np.ndarray]:
    """Rack index and U (float) of every cable end; rack -1 outside the plan."""
    rack = np.full(len(kind), -1, np.int64)
    u = np.zeros(len(kind), np.float64)
    g = n.plan.gpus_per_node
    m = kind == nw.NODE
    dev = idx[m] * g
    rack[m], u[m] = p.rack[dev], p.u[dev] + p.height_u[dev] / 2
    m = kind == nw.FABRIC
    dev = n.plan.gpus + idx[m]
    rack[m], u[m] = p.rack[dev], p.u[dev] + p.height_u[dev] / 2
    m = kind == nw.SWITCH
    rack[m], u[m] = sw_rack[idx[m]], sw_u[idx[m]] + 0.5
    for k in (nw.MGMT, nw.UFM):
        m = kind == k
        j = idx[m] + (n.endpoints["mgmt"] if k == nw.UFM else 0)
        rack[m], u[m] = srv_rack[j], srv_u[j] + 0.5
    m = kind == nw.PDU
    pc = n.plan.net.oob.pdus_per_compute_rack
    compute_pdus = n.racks[0] * pc
    mid = layout.spec.rack_u / 2
    in_compute = m & (idx < compute_pdus)
    rack[in_compute] = compute_racks[np.minimum(idx[in_compute] // max(pc, 1), len(compute_racks) - 1)]
    u[m] = mid
    in_mgmt = m & (idx >= compute_pdus)
    pm = max(1, n.plan.net.oob.pdus_per_management_rack)
    rack[in_mgmt] = pdu_racks[((idx[in_mgmt] - compute_pdus) // pm) % len(pdu_racks)]
    return rack, u


__all__ = ["NetworkLayout", "plan_networks"]
