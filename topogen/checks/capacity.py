"""Check 5, non-blocking and balanced: uplink capacity, striping, provisioning, bisection.

Ids: ``capacity.oversubscription`` (downlink against uplink capacity per
switch), ``capacity.striping`` (same number of parallel links to each upper
switch; with ``striping: minimal`` at most one apart), ``capacity.provisioning`` (``provision: full`` builds every uplink
port below the top tier), ``capacity.bisection`` (networkx max-flow across a
cut, small clusters), ``capacity.isl`` (``design: leaf-pair``: an ISL off the
design's ports or missing; a pair short of ISLs is ``capacity.oversubscription``,
GPU:ISL).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topogen.checks.graphs import components, run_starts, unique
from topogen.checks.planes import PlaneGraph
from topogen.checks.text import LIST, place, port_ranges, ratio, ratio_text, some
from topogen.checks.wire import Wire
from topogen.fabric.model import Fabric
from topogen.spec.counts import tier_role
from topogen.spec.leafpair import rail_sides

MAXFLOW_LINKS = 16384  # max-flow bisection only when the fabric has at most this many cables


def check(w: Wire, graph: PlaneGraph, maxflow_links: int = MAXFLOW_LINKS, expected: Fabric | None = None) -> None:
    per_tier = _oversubscription(w)
    pair = _pair_isls(w, expected) if w.spec.design == "leaf-pair" and not w.rail_only else ""
    if expected is not None and _same_switches(w, expected):
        _striping_against(w, expected)
    else:
        _striping(w)
    bis = _bisection(w, graph, maxflow_links)
    w.report.figures["bisection"] = bis
    tiers_txt = ", ".join(f"{r} {ratio_text(v)}" for r, v in per_tier.items()) or "single tier"
    minimal = w.spec.striping == "minimal"
    good = "minimal (parallel links per pair uneven by at most one, by design)" if minimal else "balanced"
    if pair:
        tiers_txt = pair
    detail = f"oversubscription {tiers_txt}; striping {good if not w.counts.get('capacity.striping') else 'UNBALANCED'}"
    if bis.get("checked"):
        detail += f"; max-flow {'confirms' if bis['full'] else 'REFUTES'} full bisection across {bis['cut']}"
    else:
        detail += f"; max-flow bisection skipped ({bis.get('reason')})"
    w.report.checks["capacity"] = detail


def _oversubscription(w: Wire) -> dict[str, float | None]:
    """Downlink against uplink Gb/s of every switch below the top tier; with ``provision: full``, every uplink cabled.

    Returns the worst ratio per tier (``None``: no uplinks), also stored as a figure.
    """
    n, S = w.n, w.S
    lo_sw = w.adj & ~w.isl & (w.lo >= n)  # an ISL is neither end's uplink (see _pair_isls)
    at = w.lo[lo_sw] - n
    nup = np.bincount(at, minlength=S)
    up = np.bincount(at, weights=w.speed[lo_sw], minlength=S).astype(np.int64)  # Gb/s sums: exact in a double
    hs = w.adj & ~w.isl & (w.hi >= n)
    at = w.hi[hs] - n
    ndown = np.bincount(at, minlength=S)
    down = np.bincount(at, weights=w.speed[hs], minlength=S).astype(np.int64)
    top = w.fabric.tiers
    below = (w.sw_tier < top) & (down > 0)
    ratios = np.full(S, np.nan)
    ratios[below] = np.where(up[below] > 0, down[below] / np.maximum(up[below], 1), np.inf)
    tier_ratio = np.array([w.spec.ratio_at(j) if j else 1.0 for j in range(top + 1)])  # the spec's down:up per tier
    allowed_sw = tier_ratio[np.clip(w.sw_tier, 0, top)]
    over = below & (ratios > allowed_sw * (1 + 1e-9))

    def over_msg(s: int):
        name = w.sw_names[s]
        free = _free_uplink_ports(w, s)
        req = "1:1" if allowed_sw[s] == 1 else f"at most {w.spec.ratio_text_at(int(w.sw_tier[s]))}"
        text = (
            f"{name} has {int(ndown[s])} downlink(s) ({int(down[s])} Gb/s) but {int(nup[s])} uplink(s) ({int(up[s])} Gb/s): "
            f"{ratio(down[s], up[s])} oversubscribed, {req} required ({tier_role(int(w.sw_tier[s]))} tier)"
        )
        if free:
            text += f"; uplink port(s) without a cable: {port_ranges(free)}"
        return (name,), tuple(f"{name}:p{p}" for p in free[:LIST]), text, "cable the missing uplinks (as many Gb/s up as down)", ()

    w.add_many("capacity.oversubscription", "error", np.flatnonzero(over), over_msg)
    uplinks = _uplinks(w)
    if w.spec.provision == "full":

        def short_msg(s: int):
            name = w.sw_names[s]
            free = _free_uplink_ports(w, s)
            return (
                (name,),
                tuple(f"{name}:p{p}" for p in free[:LIST]),
                f"{name} has {int(nup[s])} of its {int(uplinks[s])} uplinks cabled; provision: full builds them all"
                + (f"; uplink port(s) without a cable: {port_ranges(free)}" if free else ""),
                "cable the missing uplinks to the upper switches of the switch's stripe (or set provision: minimal)",
                (),
            )

        w.add_many("capacity.provisioning", "error", np.flatnonzero(below & (nup < uplinks) & ~over), short_msg)
    per_tier: dict[str, float | None] = {}
    for t in range(1, top):
        sel = below & (w.sw_tier == t)
        if sel.any():
            r = float(np.max(ratios[sel]))
            per_tier[tier_role(t)] = None if np.isinf(r) else round(r, 4)
    w.report.figures["oversubscription_per_tier"] = per_tier
    return per_tier


def _pair_isls(w: Wire, expected: Fabric | None) -> str:
    """``design: leaf-pair``: each pair's ISLs against its GPU ports, and against the design's ISL ports.

    Traffic between a rail of leaf-a and a rail of leaf-b crosses the ISLs, so a
    pair is non-blocking when its ISLs carry as many Gb/s as the GPU cables of
    the busier leaf; the spec's ``oversubscription`` is read as GPU:ISL ports.
    A pair over that ratio is ``capacity.oversubscription``; an ISL off the
    design's ports (ISL ``j`` joins ``p<g+j>`` of both leaves), or a design ISL
    port left without one, is ``capacity.isl``. Returns the check's summary words.
    """
    n, S = w.n, w.S
    d, u = (int(x) for x in w.spec.oversubscription.split(":"))
    g = (w.lo < n) & (w.hi >= n)
    gpu_ports = np.bincount(w.hi[g] - n, minlength=S)
    gpu_gbps = np.bincount(w.hi[g] - n, weights=w.speed[g], minlength=S).astype(np.int64)
    ix = np.flatnonzero(w.isl)
    first = np.minimum(w.lo[ix], w.hi[ix]) - n  # the pair's leaf-a (the lower switch index)
    isls = np.bincount(first, minlength=S)
    isl_gbps = np.bincount(first, weights=w.speed[ix], minlength=S).astype(np.int64)
    leaves_a = np.arange(0, S - S % 2, 2)
    cross = np.maximum(gpu_gbps[leaves_a], gpu_gbps[leaves_a + 1])  # what one leaf's GPUs send to the other's
    over = cross * u > isl_gbps[leaves_a] * d
    worst = max((c / i if i else float("inf")) for c, i in zip(cross.tolist(), isl_gbps[leaves_a].tolist())) if len(leaves_a) else 0.0
    design = None
    if expected is not None and _same_switches(w, expected):
        E = expected.isls
        design = (np.minimum(E.a_dev, E.z_dev) - expected.gpus).astype(np.int64), E.a_port.astype(np.int64), E.z_port.astype(np.int64)

    def free_ports(a: int) -> list[int]:
        """The design's ISL ports of pair ``a`` (its leaf-a) that hold no ISL on either leaf."""
        if design is None:
            return []
        mine = design[1][design[0] == a].tolist()
        used = set()
        for leaf in (a, a + 1):
            on = ix[(w.lo[ix] == n + leaf)]
            used |= {(leaf, p) for p in w.lo_port[on].tolist()}
            on = ix[(w.hi[ix] == n + leaf)]
            used |= {(leaf, p) for p in w.hi_port[on].tolist()}
        return [p for p in mine if (a, p) not in used or (a + 1, p) not in used]

    def over_msg(k: int):
        a = int(leaves_a[k])
        na, nb = w.sw_names[a], w.sw_names[a + 1]
        free = free_ports(a)
        text = (
            f"{na} and {nb} (plane {int(w.sw_plane[a])}) hold {int(gpu_ports[a])} and {int(gpu_ports[a + 1])} GPU port(s) "
            f"({int(gpu_gbps[a])} and {int(gpu_gbps[a + 1])} Gb/s) but {int(isls[a])} inter-switch link(s) ({int(isl_gbps[a])} Gb/s) join them: "
            f"GPU:ISL {ratio(cross[k], isl_gbps[a])}, {w.spec.oversubscription} at most (oversubscription, read as GPU:ISL ports on a leaf pair)"
        )
        if free:
            text += f"; design ISL port(s) without their cable: {port_ranges(free)}"
        ports = tuple(f"{x}:p{p}" for p in free[:LIST] for x in (na, nb))
        return (na, nb), ports, text, f"cable the missing ISLs ({na} p<n> to {nb} p<n>, the same port on both leaves)", ()

    w.add_many("capacity.oversubscription", "error", np.flatnonzero(over), over_msg)
    if design is not None:
        da, pa, pz = design
        P = int(max(w.sw_radix.max(initial=0), int(w.lo_port.max(initial=0)), int(w.hi_port.max(initial=0)))) + 1
        lo_first = w.lo[ix] <= w.hi[ix]
        wp_a = np.where(lo_first, w.lo_port[ix], w.hi_port[ix]).astype(np.int64)
        wp_b = np.where(lo_first, w.hi_port[ix], w.lo_port[ix]).astype(np.int64)
        have = (first * P + wp_a) * P + wp_b
        want = (da * P + pa) * P + pz
        off = ~np.isin(have, want)
        missing = ~np.isin(want, have)
        bad_pairs = unique(np.concatenate([first[off], da[missing]]))

        def isl_msg(k: int):
            a = int(bad_pairs[k])
            na, nb = w.sw_names[a], w.sw_names[a + 1]
            wrong = ix[off & (first == a)]
            gone = sorted(pa[missing & (da == a)].tolist())
            parts = []
            if len(wrong):
                shown = ", ".join(f"{w.cable(int(w.gi[j]))} {w.port(int(w.lo[j]), int(w.lo_port[j]))} to {w.port(int(w.hi[j]), int(w.hi_port[j]))}" for j in wrong[:LIST])
                parts.append(f"{len(wrong)} ISL(s) off the design's ports ({shown}{' ...' if len(wrong) > LIST else ''})")
            if gone:
                parts.append(f"{len(gone)} design ISL(s) missing ({na} {port_ranges(gone)} to the same port(s) of {nb})")
            ports = [w.port(int(w.lo[j]), int(w.lo_port[j])) for j in wrong[:LIST]] + [f"{na}:p{p}" for p in gone[:LIST]]
            return (
                (na, nb),
                ports,
                f"the inter-switch links of {na} and {nb} (plane {int(w.sw_plane[a])}) differ from the design: " + "; ".join(parts),
                f"ISL j joins the same port of both leaves, after their GPU ports: cable each of {na}'s ISL ports to the same port of {nb}",
                tuple(int(w.gi[j]) for j in wrong[:LIST]),
            )

        w.add_many("capacity.isl", "error", np.arange(len(bad_pairs)), isl_msg)
    w.report.figures["gpu_isl_oversubscription"] = None if worst == float("inf") else round(worst, 4)
    w.report.figures["isls"] = int(len(ix))
    per_pair = int(isls[leaves_a].max(initial=0))
    state = "non-blocking" if worst <= 1 + 1e-9 else "no ISL between the leaves" if worst == float("inf") else f"{ratio_text(worst)} across the pair"
    shown = "no ISL" if worst == float("inf") else ratio_text(worst)
    return f"GPU:ISL {shown} on each leaf pair ({int(gpu_ports[leaves_a].max(initial=0))} GPU ports on a leaf, {per_pair} ISL(s) per pair: {state})"


def _same_switches(w: Wire, expected: Fabric) -> bool:
    """Whether the wiring's switch table starts with the spec's own (extra foreign switches may follow)."""
    exp = expected.switches
    return len(exp) <= w.S and all(a.name == b for a, b in zip(exp, w.sw_names))


def _striping_against(w: Wire, expected: Fabric) -> None:
    """Balanced striping, checked against the spec's own switch-to-switch table.

    For every pair (lower switch, upper switch) the wiring must hold as many
    cables as the design: then every switch has its design's stripe and the same
    number of parallel links to each upper switch of it. A difference is reported
    on the lower switch whose cables differ, naming the cables that go where the
    design has none (or fewer), and the upper switches left short: the wrong
    cable, not its correctly cabled neighbours.
    """
    n, S = w.n, w.S
    ss = np.flatnonzero(w.adj & ~w.isl & (w.lo >= n))  # the ISLs are compared in _pair_isls
    E = expected.links
    en = expected.gpus
    es = E.a_dev >= en
    e_rows = np.flatnonzero(es)
    if (E is w.L or E is w.fabric.links) and np.array_equal(w.gi[ss], e_rows) and np.array_equal(w.lo[ss], E.a_dev[e_rows]):
        return  # the design's own cables, each read as the design has it: nothing differs
    # cables per (lower, upper) pair in the wiring and in the design (sorted values: no argsort)
    kw, cw = unique((w.lo[ss] - n) * S + (w.hi[ss] - n), counts=True)
    ke, ce = unique((E.a_dev[es] - en).astype(np.int64) * S + (E.z_dev[es] - en), counts=True)
    pk = unique(np.concatenate([kw, ke]))
    if not len(pk):
        return
    have = np.zeros(len(pk), np.int64)
    have[np.searchsorted(pk, kw)] = cw
    design = np.zeros(len(pk), np.int64)
    design[np.searchsorted(pk, ke)] = ce
    diff = have - design
    off = diff != 0
    if not off.any():
        return
    pk, diff, have = pk[off], diff[off], have[off]
    low = pk // S
    by_low = run_starts(low)
    ends = np.r_[by_low[1:], len(low)]

    def msg(b: int):
        s = int(low[by_low[b]])
        name = w.sw_names[s]
        mine = ss[w.lo[ss] - n == s]
        mine_ports = w.lo_port[mine]
        # the design's cables of this switch: which upper switch each of its ports goes to
        em = es & (E.a_dev == en + s)
        design = dict(zip(E.a_port[em].tolist(), (E.z_dev[em] - en).tolist()))
        wrong, short, cab, ports, uppers = [], [], [], [], []
        for k in range(by_low[b], ends[b]):
            u = int(pk[k] % S)
            uppers.append(w.sw_names[u])
            d, h = int(diff[k]), int(have[k])
            if d > 0:
                to_u = mine[w.hi[mine] - n == u]
                moved = sorted(to_u.tolist(), key=lambda j: (design.get(int(w.lo_port[j])) == u, int(w.lo_port[j])))[:d]
                for j in moved:
                    cab.append(int(w.gi[j]))
                    ports += [w.port(n + s, w.lo_port[j]), w.port(n + u, w.hi_port[j])]
                where = ", ".join(f"{w.cable(int(w.gi[j]))} {w.port(n + s, w.lo_port[j])} to {w.port(n + u, w.hi_port[j])}" for j in moved)
                wrong.append(f"{h} cable(s) to {w.sw_names[u]} where the design has {h - d} ({where})")
            else:
                # the design's ports toward u that hold no cable to u now
                free = sorted(p for p, v in design.items() if v == u and not np.any((mine_ports == p) & (w.hi[mine] - n == u)))[: -d]
                ports += [w.port(n + s, p) for p in free]
                empty = [p for p in free if not np.any(mine_ports == p)]
                taken = [p for p in free if p not in empty]
                at = [f"uplink port(s) without a cable: {port_ranges(empty)}"] if empty else []
                at += [f"design port(s) {port_ranges(taken)} cabled elsewhere"] if taken else []
                at = f" ({'; '.join(at)})" if at else ""
                short.append(f"{h} to {w.sw_names[u]} where the design has {h - d}{at}")
        text = f"{name} does not follow the design's striping: " + "; ".join(wrong + short)
        if wrong and short:
            hint = "move the cable(s) named to the upper switch(es) the design gives their ports"
        elif wrong:
            hint = "remove the extra cable(s) named, or move them to the upper switch the design gives that port"
        else:
            even = "striping: minimal: as many parallel links to each as the design, uneven by at most one" if w.spec.striping == "minimal" else "balanced striping: the same number of parallel links to each"
            hint = f"cable the missing uplink(s) of {name} to the upper switch(es) named ({even})"
        return (name, *uppers), ports, text, hint, tuple(cab[:LIST])

    w.add_many("capacity.striping", "error", np.arange(len(by_low)), msg)


def _striping(w: Wire) -> None:
    """Balanced striping (without a design table to compare with): the same number of parallel links to each upper switch, and to every upper switch of the stripe.

    The lower and upper switches joined by one tier of cables form complete
    bipartite stripes in a Clos. With ``striping: minimal`` the counts may differ
    by one (the top tier spreads uplinks that its switch count does not divide);
    a difference of two or more, or an upper switch of the group not reached, is
    still an error.
    """
    slack = 1 if w.spec.striping == "minimal" else 0
    n, S = w.n, w.S
    ss = np.flatnonzero(w.adj & ~w.isl & (w.lo >= n))
    key = (w.lo[ss] - n) * S + (w.hi[ss] - n)
    uk, cnt = unique(key, counts=True)
    low = uk // S
    upp = uk % S
    starts = run_starts(low)
    if not len(starts):
        return
    mn = np.minimum.reduceat(cnt, starts)
    mx = np.maximum.reduceat(cnt, starts)
    deg = np.diff(np.r_[starts, len(low)])
    # stripes: components of the (lower, upper) pairs, uppers as nodes of their own
    lab = components(2 * S, low, S + upp)
    stripe_uppers = np.bincount(unique(lab[S + upp] * 2 * S + upp) // (2 * S), minlength=2 * S)
    width = stripe_uppers[lab[low[starts]]]
    bad = np.flatnonzero((mx - mn > slack) | (deg < width))
    ends = np.r_[starts[1:], len(low)]

    def stripe_msg(b: int):
        s = int(low[starts[b]])
        name = w.sw_names[s]
        parts = []
        ports = []
        text = []
        sel_ss = ss[w.lo[ss] - n == s]
        for k in range(starts[b], ends[b]):
            u = int(uk[k] % S)
            ps = sorted(w.lo_port[sel_ss[w.hi[sel_ss] - n == u]].tolist())
            parts.append(f"{int(cnt[k])} to {w.sw_names[u]} ({port_ranges(ps)})")
            ports.extend(f"{name}:p{p}" for p in ps)
        cab = tuple(int(w.gi[j]) for j in sel_ss[:LIST])
        free = _free_uplink_ports(w, s)
        ports.extend(f"{name}:p{p}" for p in free[:LIST])
        if mx[b] - mn[b] > slack:
            text.append(f"{name} stripes its uplinks unevenly{' (by more than the one link striping: minimal allows)' if slack else ''}: " + ", ".join(parts))
        if deg[b] < width[b]:
            mine = set(upp[starts[b] : ends[b]].tolist())
            stripe = np.unique(upp[lab[S + upp] == lab[low[starts[b]]]])
            missing = [w.sw_names[u] for u in stripe.tolist() if u not in mine]
            text.append(f"{name} reaches {int(deg[b])} of the {int(width[b])} upper switches of its stripe (none to {some(missing)})" + ("" if text else ": " + ", ".join(parts)))
        return (
            (name,) + tuple(w.sw_names[int(uk[k] % S)] for k in range(starts[b], ends[b])),
            ports,
            "; ".join(text) + (f"; uplink port(s) without a cable: {port_ranges(free)}" if free else ""),
            "give the switch the same number of parallel links to each upper switch of its group (ECMP balance" + ("; striping: minimal: counts that differ by at most one)" if slack else ")"),
            cab,
        )

    w.add_many("capacity.striping", "error", bad, stripe_msg)


def _uplinks(w: Wire) -> np.ndarray:
    """Uplinks of every switch: its interfaces after the down ports (a faster uplink takes several of the radix's ports)."""
    return w.sw_ports - w.sw_down


def _free_uplink_ports(w: Wire, s: int) -> list[int]:
    """Uplink ports (numbered after the switch's down ports) of switch index ``s`` that hold no cable."""
    d = w.n + s
    used = set(w.lo_port[w.lo == d].tolist()) | set(w.hi_port[w.hi == d].tolist())
    return [p for p in range(int(w.sw_down[s]) + 1, int(w.sw_ports[s]) + 1) if p not in used]


def _bisection(w: Wire, graph: PlaneGraph, limit: int) -> dict[str, Any]:
    """Max-flow between the two halves of the cluster (or of each rail) in every plane.

    The cut: HB domains ``0 .. D/2-1`` against the rest (the first half of the
    groups and pods of a Clos, so traffic has to cross its top tier). With one
    domain the GPUs are cut by rank. Full bisection: the flow equals the smaller
    half's injection bandwidth (its GPUs x the spec's link speed), so a GPU
    without its cable also shows as a shortfall.
    """
    n, K, spec = w.n, w.K, w.spec
    D = spec.domains
    if len(w.L) > limit:
        return {"checked": False, "reason": f"{len(w.L)} cables > {limit}; per-switch 1:1 and balanced striping above stand in for it"}
    import networkx as nx  # only small fabrics pay for it

    gpu = np.arange(n)
    dom, rank = gpu // K, gpu % K
    cuts = []
    if w.rail_only:
        if D < 2:
            return {"checked": False, "reason": "each rail has a single GPU"}
        for p in range(w.planes):
            for r in range(K):
                cuts.append((p, r, (rank == r) & (dom < D // 2), (rank == r) & (dom >= D // 2)))
        desc = f"HB domains 0-{D // 2 - 1} | {D // 2}-{D - 1} within each rail ({K} rail(s) x {w.planes} plane(s))"
    elif w.spec.design == "leaf-pair":
        a = rail_sides(K, spec.gpus_per_node)[rank] == 0
        if a.all() or not a.any():
            return {"checked": False, "reason": "every GPU on one leaf of the pair"}
        desc = f"the GPUs of leaf-a | leaf-b, across the inter-switch links ({w.planes} plane(s))"
        for p in range(w.planes):
            cuts.append((p, None, a, ~a))
    else:
        if n < 2:
            return {"checked": False, "reason": "a single GPU"}
        if D >= 2:
            a = dom < D // 2
            desc = f"HB domains 0-{D // 2 - 1} | {D // 2}-{D - 1} ({w.planes} plane(s))"
        else:
            a = rank < K // 2
            desc = f"ranks 0-{K // 2 - 1} | {K // 2}-{K - 1} of the one HB domain ({w.planes} plane(s))"
        for p in range(w.planes):
            cuts.append((p, None, a, ~a))
    worst = None
    promised = 1.0
    for j in range(1, w.fabric.tiers):
        promised *= spec.ratio_at(j)
    if spec.design == "leaf-pair" and not w.rail_only:  # the ISLs carry 1/ratio of one leaf's GPU ports (GPU:ISL)
        d, u = (int(x) for x in spec.oversubscription.split(":"))
        promised = d / u
    edge_label = graph.label[graph.u]
    inj = int(spec.link_speed) * w.homes  # what a GPU's NIC injects into one plane (both ports of a dual-homed pair)
    for p, r, A, B in cuts:
        # only the parts of the network that hold the cut's GPUs (one rail's Clos in rail-only)
        ab = np.flatnonzero(A | B)
        inp = np.isin(edge_label, graph.label[np.concatenate([(p * w.homes + h) * n + ab for h in range(w.homes)])])
        lo, hi, sp = w.lo[inp], w.hi[inp], w.speed[inp]
        side = np.zeros(n, np.int8)
        side[A], side[B] = 1, 2
        gl = (lo < n) & (hi >= n)
        glinks = np.bincount(lo[gl], minlength=n)
        # a GPU with one cable is contracted into its switch: S -> switch (or switch -> T)
        one = gl & (glinks[np.minimum(lo, n - 1)] == 1) & (side[np.minimum(lo, n - 1)] > 0)
        G = nx.DiGraph()
        for s_ in (1, 2):
            sel = one & (side[np.minimum(lo, n - 1)] == s_)
            caps = np.bincount(hi[sel], weights=np.minimum(sp[sel], inj), minlength=w.ndev)
            for d in np.flatnonzero(caps).tolist():
                if s_ == 1:
                    G.add_edge("S", d, capacity=int(caps[d]))
                else:
                    G.add_edge(d, "T", capacity=int(caps[d]))
        rest = ~one & (hi >= n) & ((lo >= n) | (side[np.minimum(lo, n - 1)] > 0))
        key = lo[rest] * w.ndev + hi[rest]
        uk, inv = np.unique(key, return_inverse=True)
        cap = np.bincount(inv.ravel(), weights=sp[rest], minlength=len(uk)).astype(np.int64)
        ul, uh = np.divmod(uk, w.ndev)
        for u, v, c in zip(ul.tolist(), uh.tolist(), cap.tolist()):
            G.add_edge(u, v, capacity=c)
            G.add_edge(v, u, capacity=c)
        multi = np.unique(lo[rest & (lo < n)]) if rest.any() else np.zeros(0, np.int64)
        for g in multi.tolist():  # GPUs with several cables stay nodes of their own
            G.add_edge("S", g, capacity=inj) if side[g] == 1 else G.add_edge(g, "T", capacity=inj)
        # an oversubscribed tier passes up only 1/ratio of what comes in from below
        demand = int(inj * int(min(A.sum(), B.sum())) / promised)
        flow = int(nx.maximum_flow_value(G, "S", "T")) if "S" in G and "T" in G else 0
        res = (flow - demand, p, r, flow, demand)
        if worst is None or res < worst:
            worst = res
        if flow < demand:
            w.add(
                "capacity.bisection",
                "error",
                (),
                (),
                f"{place(p, r)}: max-flow across {desc.split(' (')[0]} is {flow} Gb/s, below the {demand} Gb/s one half injects: not full bisection",
                "look for missing uplinks or oversubscribed switches (capacity.oversubscription, capacity.striping)",
            )
    _gap, p, r, flow, demand = worst
    return {
        "checked": True,
        "cut": desc,
        "cuts": len(cuts),
        "full": not w.counts.get("capacity.bisection"),
        "worst_flow_gbps": flow,
        "demand_gbps": demand,
        "worst_cut": place(p, r),
    }
