"""Generator of ``design: leaf-pair``: the Enterprise RA single tier, two leaves per plane joined by ISLs.

The rules and closed form are :mod:`topogen.spec.leafpair`'s. Per plane ``p``:
switches ``leaf-a`` and ``leaf-b`` (``pl<p>-`` prefixed with several planes);
GPU ``g`` on the leaf of its node-local NIC (A-B-B-A), on port 1 + its position
among that leaf's GPUs in GPU order (node order); ISL ``j`` (1-based) from
``p<gpu_ports + j>`` of A to the same port of B. Rail-only has no ISL.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from topogen.fabric.model import Fabric, LinkTable, Switch
from topogen.fabric.naming import site_switch_names, units_note
from topogen.spec import leafpair
from topogen.util.figures import plural


def leaf_pair(spec, arch: str) -> Fabric:
    """Explicit wiring of ``design: leaf-pair`` for ``arch`` (rail-optimized: with ISLs; rail-only: without)."""
    n, hb, gpn, k = spec.gpus, spec.hb_domain, spec.gpus_per_node, spec.radix
    rail_only = arch == "rail-only"
    res = spec.reserved_leaf_ports or 0
    lp = leafpair.plan(n, k, spec.oversubscription, rail_only, res)
    if not lp.fits:  # the spec parser refuses this; a hand-built Spec may not have gone through it
        raise ValueError(f"design: leaf-pair: {n} GPUs need {lp.ports_needed} ports on each {k}-port leaf")
    gpu = np.arange(n, dtype=np.int64)
    side = leafpair.node_sides(gpn)[gpu % gpn]
    port = np.empty(n, np.int64)
    for s in (0, 1):
        mask = side == s
        port[mask] = np.arange(1, int(mask.sum()) + 1)
    rails_of = leafpair.rail_sides(hb, gpn)
    rails = [tuple(int(r) for r in np.flatnonzero(rails_of == s)) for s in (0, 1)]
    speed = spec.speed_at(1)
    switches: list[Switch] = []
    cols: list[tuple] = []
    isl_cols: list[tuple] = []
    j = np.arange(lp.isls, dtype=np.int32)
    for p in range(spec.planes):
        prefix = f"pl{p}-" if spec.planes > 1 else ""
        a = n + 2 * p
        for s in (0, 1):
            group = rails[s][0] if rail_only and rails[s] else 0
            switches.append(Switch(f"{prefix}leaf-{leafpair.SIDES[s]}", 1, p, rails[s], group, 0, k, k - lp.isls))
        cols.append((gpu, np.full(n, p), a + side, port, np.full(n, p)))
        isl_cols.append((np.full(lp.isls, a), lp.gpu_ports + 1 + j, np.full(lp.isls, a + 1), lp.gpu_ports + 1 + j, np.full(lp.isls, p)))
    names = site_switch_names(spec.naming, [("leaf", sw.plane, 0, i % 2, sw.rails[0] if sw.rails else 0, 0) for i, sw in enumerate(switches)], [sw.name for sw in switches], arch)
    switches = [replace(sw, name=nm) for sw, nm in zip(switches, names)]
    links = _table(cols, 1, speed)
    isls = _table(isl_cols, 1, speed)
    notes = [_note(spec, arch, lp, rails)]
    reserved: tuple[tuple[int, int, int], ...] = ()
    if res:
        first = lp.gpu_ports + lp.isls + 1
        reserved = tuple((i, first, first + res - 1) for i in range(len(switches)))
        notes.append(units_note(spec, [s.name for s in switches], first, first + res - 1))
    return Fabric(spec, arch, 1, switches, links, notes, reserved, isls)


def _table(cols: list[tuple], tier: int, speed: int) -> LinkTable:
    """A :class:`LinkTable` from per-plane ``(a, a_port, z, z_port, plane)`` columns."""
    cat = [np.concatenate([c[i] for c in cols]) if cols else np.zeros(0, np.int64) for i in range(5)]
    m = len(cat[0])
    return LinkTable.from_columns(
        a_dev=cat[0], a_port=cat[1], z_dev=cat[2], z_port=cat[3], tier=np.full(m, tier), plane=cat[4], a_speed=np.full(m, speed), z_speed=np.full(m, speed)
    )


def _note(spec, arch: str, lp: leafpair.LeafPair, rails: list[tuple[int, ...]]) -> str:
    """The build note: the split, the ISLs and what crosses them."""
    shown = [",".join(map(str, r)) for r in rails]
    pairs = plural(spec.planes, "leaf pair")
    head = (
        f"design: leaf-pair: {pairs} (one per plane), each node's {spec.gpus_per_node} NICs alternate A-B-B-A over it: "
        f"leaf-a carries rails {shown[0]}, leaf-b rails {shown[1]}; {lp.gpu_ports} GPU port(s) on each leaf"
    )
    if arch == "rail-only":
        return head + "; rail-only: no link joins the two leaves, so traffic between a rail of A and a rail of B crosses the HB domain (NVLink) first"
    return head + (
        f"; {plural(lp.isls, 'inter-switch link')} join the pair (GPU:ISL ports {spec.oversubscription}), "
        "the one hop that traffic between the leaves' rails takes"
    )
