"""Check 4, reachability: every GPU reaches every other, and the worst-case path.

Ids: ``reach.unlinked`` (GPUs with no cable in a plane), ``reach.partition``
(a plane, or a rail in rail-only, split in parts; with ``homing: dual`` a warning
when every GPU of the cut-off part keeps a path through the other port of its
pair, an error when some GPU loses every port). Proved with connected
components; the worst-case path is exact, from bounded breadth-first searches
over the switches that hold GPUs (linear on a Clos; see :func:`leaf_distance`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topogen.checks.graphs import leaf_distance_csr, unique
from topogen.checks.planes import PlaneGraph
from topogen.checks.text import LIST, place, some
from topogen.checks.wire import Wire
from topogen.spec.counts import tier_role


def check(w: Wire, graph: PlaneGraph) -> None:
    n, P, K = w.n, w.planes, w.K
    linked = graph.linked()
    label = graph.label
    for p in range(P):
        sl = graph.nodes(p)  # the plane's GPU nodes: one per GPU, or two (a dual-homed pair)
        unl_nodes = np.flatnonzero(~linked[sl])
        unl = np.unique(unl_nodes % n) if w.homes > 1 else unl_nodes
        if len(unl):
            names = w.gpu_names.many(unl[:LIST]).tolist()
            how = "reachable only through two HB-domain hops (no NIC path of their own)" if w.rail_only and K > 1 else "unreachable through the network"
            w.add(
                "reach.unlinked",
                "error",
                names,
                [f"{x}:nic{p}" for x in names] if w.homes == 1 else [f"{w.gpu_names.name(g % n)}:nic{p * w.homes + g // n}" for g in unl_nodes[:LIST]],
                f"plane {p}: {len(unl)} GPU(s) have no cable{'' if w.homes == 1 else ' on a NIC port'}, {how}: {some(names, len(unl))}",
                "see hygiene.gpu-no-link; cable every GPU's NIC port of each plane",
            )
        lab = label[sl]
        # which groups (rails in rail-only, else the plane) hold their GPUs in several parts: counted per switch
        _main, nparts, _tie = graph.parts(p)
        split = np.flatnonzero(nparts > 1)
        if w.rail_only:
            groups = [(int(r), np.flatnonzero(linked[sl] & (np.arange(len(lab)) % n % K == r))) for r in split]
        else:
            groups = [(None, np.flatnonzero(linked[sl]))] if len(split) else []
        for r, members in groups:
            if len(members) == 0:
                continue
            labs, cnt = unique(lab[members], counts=True)
            if len(labs) < 2:
                continue
            main = labs[np.argmax(cnt)]
            others = members[lab[members] != main]
            what = "GPUs"
            ports = None
            kept = np.zeros(0, np.int64)
            if w.homes > 1:  # nodes are NIC ports of dual-homed pairs
                ports = [f"{w.gpu_names.name(x % n)}:nic{p * w.homes + x // n}" for x in others[:LIST].tolist()]
                others = np.unique(others % n)
                what = f"GPU ports ({len(others)} GPUs)"
                # a GPU keeps a path when another port of its pair is in the main part
                in_main = (lab.reshape(w.homes, n)[:, others] == main).any(axis=0)
                kept, others = others[in_main], others[~in_main]
            names = w.gpu_names.many(others[:LIST]).tolist() if len(others) else []
            kept_names = w.gpu_names.many(kept[:LIST]).tolist() if len(kept) else []
            sw_nodes = np.flatnonzero(np.isin(label[w.nics * n :], labs[labs != main]))
            sw_names = [w.sw_names[s] for s in sw_nodes[:LIST]]
            behind = f" (behind {some(sw_names, len(sw_nodes))})" if sw_names else ""
            fix = "restore the missing uplinks so every leaf reaches the upper tiers of its " + ("rail" if w.rail_only else "fabric")
            if w.spec.design == "leaf-pair" and not w.rail_only:
                fix = "restore the inter-switch links (ISLs) between the plane's leaf-a and leaf-b: they are the only path between the two leaves' GPUs"
            if ports is None:
                text = f"{place(p, r)} is split into {len(labs)} parts: {len(others)} of its {len(members)} {what} cannot reach the rest through the network: {some(names, len(others))}{behind}"
            else:
                nports = int((lab[members] != main).sum())
                text = f"{place(p, r)} is split into {len(labs)} parts: {nports} of its {len(members)} GPU ports cannot reach the rest through the network{behind}"
                if len(others):
                    text += f"; {len(others)} GPU(s) lose every port of their pair and are cut off: {some(names, len(others))}"
                if len(kept):
                    partners = _kept_leaves(w, p, kept, lab == main)
                    text += (
                        f"; {len(kept)} GPU(s) keep a path through the other port of their pair"
                        f" (on {some([w.sw_names[s] for s in partners[:LIST]], len(partners))}), at reduced bandwidth: {some(kept_names, len(kept))}"
                    )
            w.add(
                "reach.partition",
                "error" if len(others) else "warning",
                names + kept_names[: max(LIST - len(names), 0)] + sw_names,
                ports or [f"{x}:nic{p}" for x in names],
                text,
                fix,
            )
    hops = _worst_path(w, graph)
    w.report.figures["worst_case_hops"] = hops
    if w.report.group_status("reach") == "pass":
        if w.rail_only:
            proof = f"each rail of each plane is one connected network and the {w.spec.domains} HB domains are complete ({K} GPUs each), so every pair communicates with at most one HB hop"
        else:
            proof = "each plane is one connected network holding all GPUs"
            if w.spec.design == "leaf-pair":
                proof += f" ({int(w.isl.sum())} inter-switch link(s) join each plane's two leaves)" if w.planes == 1 else f" (the inter-switch links join each plane's two leaves, {int(w.isl.sum())} in all)"
    elif w.report.group_status("reach") == "warning":
        proof = "every GPU reaches every other, some through one port of their dual-homed pair only (see findings)"
    else:
        proof = "some GPUs cannot reach others (see findings)"
    w.report.checks["reach"] = f"{proof}; worst case {hops['switch_hops']} switch(es) and {hops['hb_hops']} HB hop(s) ({hops['path']})"


def _kept_leaves(w: Wire, p: int, gpus: np.ndarray, main_node: np.ndarray) -> np.ndarray:
    """Switch indices of the leaves through which ``gpus`` (dual-homed, plane ``p``) keep a path."""
    n = w.n
    gl = np.flatnonzero((w.lo < n) & (w.hi >= n) & w.adj & (w.plane == p))
    gl = gl[np.isin(w.lo[gl], gpus)]
    node = (w.lo_port[gl] % w.homes) * n + w.lo[gl]
    return unique(w.hi[gl[main_node[node]]] - n)


def _worst_path(w: Wire, graph: PlaneGraph) -> dict[str, Any]:
    """Worst-case GPU-to-GPU path: switches traversed and HB-domain hops."""
    n, S = w.n, w.S
    worst = 0
    gpu_sw = unique(w.hi[(w.lo < n) & (w.hi >= n)] - n)  # switches holding GPUs, every plane (a switch is its core id)
    if len(gpu_sw):
        # one search over every plane at once: planes are separate parts of the core graph, and the core
        # graph's parts are unions of this graph's (every switch cable is a core cable)
        height = np.zeros(graph.C, np.int64)
        height[:S] = w.sw_tier
        worst = leaf_distance_csr(graph.switch_graph(), gpu_sw, height=height, label=graph.clabel) + 1
    any_pair = bool(len(gpu_sw))
    hb = 1 if w.rail_only and w.K > 1 else 0
    switch_hops = worst if any_pair and n > 1 else 0
    path = "GPU"
    if switch_hops % 2 == 1:
        m = (switch_hops + 1) // 2
        roles = [tier_role(t) for t in range(1, m + 1)]
        path = " > ".join(["GPU"] + roles + roles[-2::-1] + ["GPU"])
    elif switch_hops == 2 and w.spec.design == "leaf-pair":
        path = "GPU > leaf > leaf > GPU (over an ISL)"
    elif switch_hops:
        path = f"GPU > {switch_hops} switches > GPU"
    if hb:
        path = "GPU > HB domain > " + path
    return {"switch_hops": int(switch_hops), "hb_hops": hb, "path": path}
