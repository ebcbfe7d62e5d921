"""Check 3, rail isolation: GPUs on the switches of their rail, rails kept apart as the spec asks.

Ids: ``rails.cross-rail`` (rail-only: a cable joins two rails' networks),
``rails.leaf-alignment`` (rail-optimized: a GPU on another rail's leaf),
``rails.shared-switch`` (several rails on one switch: info, error when the
spec asks for dedicated rails), ``rails.pair-one-leaf``, ``rails.pair-split`` and
``rails.pair-link`` (``homing: dual``: a GPU's two ports of a plane on one leaf; on
leaves of two different pairs; a cable between the two leaves of a pair).
"""

from __future__ import annotations

import numpy as np

from topogen.checks.graphs import run_starts
from topogen.checks.text import port_ranges
from topogen.checks.wire import Wire


def check(w: Wire) -> None:
    n, K = w.n, w.K
    gl = np.flatnonzero((w.lo < n) & (w.hi >= n) & w.adj)
    rank = w.lo[gl] % K
    sw = w.hi[gl] - n
    wrong = gl[~_in_rails(w, sw, rank)]

    def gpu_msg(j: int):
        i, g, d, pg, ps = w.oriented(j)
        s = d - n
        rails = w.fabric.switches[s].rails
        rtext = f"rail {rails[0]}" if len(rails) == 1 else f"rails {rails[0]}-{rails[-1]}"
        if w.rail_only:
            text = f"{w.cable(i)} puts {pg} (rail {g % K}) on {ps}, a switch of {rtext}: a network path now joins two rails"
            hint = f"rail-only rails are separate networks: cable {pg} to a switch of rail {g % K}"
        else:
            text = f"{w.cable(i)} puts {pg} (rail {g % K}) on {ps}, the leaf of {rtext}: leaves must be rail-aligned"
            hint = f"cable {pg} to the rail-{g % K} leaf of its group"
        return (w.name(g), w.sw_names[s]), (pg, ps), text, hint, (i,)

    w.add_many("rails.cross-rail" if w.rail_only else "rails.leaf-alignment", "error", wrong, gpu_msg)
    if w.rail_only:
        _switch_to_switch(w)
    shared_count = _shared_switches(w, gl)
    w.report.figures["shared_switches"] = shared_count
    pairs = _dual_homing(w, gl) if w.homes > 1 else 0
    status = w.report.group_status("rails")
    detail = "every network path stays within one rail" if w.rail_only else "every leaf is rail-aligned"
    if shared_count:
        detail += f"; {shared_count} switch(es) carry several rails (logical isolation)"
    if w.homes > 1 and not any(w.counts.get(c) for c in ("rails.pair-one-leaf", "rails.pair-split", "rails.pair-link")):
        detail += f"; every GPU dual-homed on two leaves of its rail ({pairs} leaf pair(s)), no cable between the two leaves of a pair"
    w.report.checks["rails"] = detail if status != "error" else "cables join different rails, or rails share switches against the spec"


def _in_rails(w: Wire, sw: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Whether rail ``rank[i]`` is among the rails of switch ``sw[i]`` (switch index)."""
    ok = (w.sw_rail_lo[sw] <= rank) & (rank <= w.sw_rail_hi[sw])
    odd = np.flatnonzero(~w.sw_rail_contig[sw])
    for j in odd:
        rails = w.fabric.switches[int(sw[j])].rails
        ok[j] = not rails or int(rank[j]) in rails
    return ok


def _switch_to_switch(w: Wire) -> None:
    """Rail-only: a switch cables only to switches carrying the same rails."""
    n = w.n
    ss = np.flatnonzero((w.lo >= n) & w.adj)
    a, b = w.lo[ss] - n, w.hi[ss] - n
    same = (w.sw_rail_lo[a] == w.sw_rail_lo[b]) & (w.sw_rail_hi[a] == w.sw_rail_hi[b]) & (w.sw_nrails[a] == w.sw_nrails[b])
    odd = np.flatnonzero(same & ~(w.sw_rail_contig[a] & w.sw_rail_contig[b]))
    for j in odd:
        same[j] = w.fabric.switches[int(a[j])].rails == w.fabric.switches[int(b[j])].rails

    def sw_msg(j: int):
        i, lo, hi, pl, ph = w.oriented(j)
        rl, rh = w.fabric.switches[lo - n].rails, w.fabric.switches[hi - n].rails
        return (
            (w.name(lo), w.name(hi)),
            (pl, ph),
            f"{w.cable(i)} joins {pl} (rails {list(rl)}) to {ph} (rails {list(rh)}): a network path now joins different rails",
            "rail-only rails are separate networks: cable each switch only to switches of its own rail",
            (i,),
        )

    w.add_many("rails.cross-rail", "error", ss[~same], sw_msg)


def _dual_homing(w: Wire, gl: np.ndarray) -> int:
    """``homing: dual``: a GPU's two ports of a plane on two different leaves, and no cable between those two.

    Returns the number of distinct leaf pairs the GPUs are homed on.
    """
    n = w.n
    key = w.lo[gl] * max(w.planes, 1) + w.plane[gl]
    order = np.argsort(key, kind="stable")
    k, cab = key[order], gl[order]
    twin = np.flatnonzero(k[1:] == k[:-1])  # consecutive cables of one GPU in one plane
    first, second = cab[twin], cab[twin + 1]
    same = w.hi[first] == w.hi[second]

    def one_leaf(j: int):
        a, b = int(first[j]), int(second[j])
        g, leaf = int(w.lo[a]), int(w.hi[a])
        pa, pb = w.port(g, w.lo_port[a]), w.port(g, w.lo_port[b])
        la, lb = w.port(leaf, w.hi_port[a]), w.port(leaf, w.hi_port[b])
        return (
            (w.name(g), w.name(leaf)),
            (pa, pb, la, lb),
            f"{w.cable(int(w.gi[a]))} and {w.cable(int(w.gi[b]))} put both ports of {w.name(g)}'s dual-homed pair ({pa}, {pb}; plane {int(w.plane[a])}) on one leaf, {w.name(leaf)} ({la}, {lb}): "
            "if that leaf fails the GPU loses its whole plane",
            f"cable {pb} to the other leaf of its rail's pair (the -b leaf when {w.name(leaf)} is the -a leaf): dual-homing needs two different leaves",
            (int(w.gi[a]), int(w.gi[b])),
        )

    w.add_many("rails.pair-one-leaf", "error", np.flatnonzero(same), one_leaf)
    pair_keys = _split_pairs(w, first[~same], second[~same])
    ll = np.flatnonzero((w.lo >= n) & (w.lo_t == 1) & (w.hi_t == 1))
    hit = ll[np.isin(np.minimum(w.lo[ll], w.hi[ll]) * w.ndev + np.maximum(w.lo[ll], w.hi[ll]), pair_keys)]

    def pair_link(j: int):
        i, lo, hi, pl, ph = w.oriented(j)
        return (
            (w.name(lo), w.name(hi)),
            (pl, ph),
            f"{w.cable(i)} joins {pl} to {ph}: {w.name(lo)} and {w.name(hi)} are the two leaves of a dual-homed pair (they serve the same GPUs), and a non-stacked dual-ToR pair has no link between its leaves",
            "remove the cable: the two leaves of a pair reach each other only through the tier above",
            (i,),
        )

    w.add_many("rails.pair-link", "error", hit, pair_link)
    w.report.figures["leaf_pairs"] = int(len(pair_keys))
    return int(len(pair_keys))


def _split_pairs(w: Wire, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``rails.pair-split``: a GPU's two ports of a plane on leaves of two different pairs.

    ``first``/``second`` are the two cables of one GPU in one plane, on two leaves.
    A leaf's pair is the leaf pair most of its GPUs are homed on (ties: the lower key);
    a GPU whose pair is not the main pair of both its leaves is split.
    Returns the keys (``lo * ndev + hi``) of the leaf pairs kept (split ones excluded).
    """
    a, b = w.hi[first], w.hi[second]
    lo_leaf, hi_leaf = np.minimum(a, b), np.maximum(a, b)
    pk = lo_leaf * w.ndev + hi_leaf
    keys, inv, cnt = np.unique(pk, return_inverse=True, return_counts=True)
    leaves = np.concatenate([lo_leaf, hi_leaf])
    lk, lc = np.concatenate([pk, pk]), np.concatenate([cnt[inv], cnt[inv]])
    order = np.lexsort((lk, -lc, leaves))
    _u, at = np.unique(leaves[order], return_index=True)
    main = np.full(w.ndev, -1, np.int64)  # each leaf's main pair key
    main[leaves[order][at]] = lk[order][at]
    split = (main[lo_leaf] != pk) | (main[hi_leaf] != pk)

    def partner(leaf: int) -> str:
        k = int(main[leaf])
        return w.name(k % w.ndev if k // w.ndev == leaf else k // w.ndev)

    def split_msg(j: int):
        x, y = int(first[j]), int(second[j])
        g, la, lb = int(w.lo[x]), int(w.hi[x]), int(w.hi[y])
        pa, pb = w.port(g, w.lo_port[x]), w.port(g, w.lo_port[y])
        return (
            (w.name(g), w.name(la), w.name(lb)),
            (pa, pb, w.port(la, w.hi_port[x]), w.port(lb, w.hi_port[y])),
            f"{w.cable(int(w.gi[x]))} and {w.cable(int(w.gi[y]))} split {w.name(g)}'s dual-homed pair ({pa}, {pb}; plane {int(w.plane[x])}) over "
            f"{w.name(la)} and {w.name(lb)}, leaves of two different pairs ({w.name(la)} pairs with {partner(la)}, {w.name(lb)} with {partner(lb)}): "
            "the two leaves do not serve the same GPUs",
            f"cable {pb} to {partner(la)}, the other leaf of {w.name(la)}'s pair",
            (int(w.gi[x]), int(w.gi[y])),
        )

    w.add_many("rails.pair-split", "error", np.flatnonzero(split), split_msg)
    return np.unique(pk[~split]) if split.any() else keys


def _shared_switches(w: Wire, gl: np.ndarray) -> int:
    """Leaves that carry several rails: which rails, on how many ports each. Returns how many."""
    n, K = w.n, w.K
    multi = np.flatnonzero((w.sw_nrails > 1) & (w.sw_tier == 1))
    if not len(multi):
        return 0
    is_multi = np.zeros(w.S, bool)
    is_multi[multi] = True
    sel = gl[is_multi[w.hi[gl] - n]]
    key = (w.hi[sel] - n) * K + w.lo[sel] % K
    order = np.lexsort((w.hi_port[sel], key))
    sk, sp = key[order], w.hi_port[sel][order]
    starts = run_starts(sk)
    groups: dict[int, list[tuple[int, list[int]]]] = {}
    for s0, s1 in zip(starts, np.r_[starts[1:], len(sk)]):
        s, r = divmod(int(sk[s0]), K)
        groups.setdefault(s, []).append((r, sp[s0:s1].tolist()))
    field = "rail_packing" if w.rail_only else "leaf_packing"
    value = getattr(w.spec, field)
    one_switch = not w.rail_only and w.fabric.tiers == 1  # the whole cluster on one switch: nothing to align
    sev = "info" if w.spec.packs_rails(w.fabric.arch) or one_switch else "error"
    alone = "dedicated" if w.rail_only else "aligned"
    shared_count = 0
    for s in sorted(groups):
        rails = groups[s]
        if len(rails) < 2:
            continue
        shared_count += 1
        name = w.sw_names[s]
        parts = "; ".join(f"rail {r} on {len(p)} port(s) ({port_ranges(p)})" for r, p in rails)
        if sev == "info":
            text = f"{name} carries {len(rails)} rails, isolated logically (VLAN/partition per rail), not physically: {parts}"
            hint = f"set {field}: {alone} to give every rail its own switches"
        else:
            text = f"{name} carries {len(rails)} rails on one switch, but the spec asks for one switch per rail ({field}: {value}): {parts}"
            hint = f"give each rail its own switch (the generator does with {field}: {alone}), or accept logical isolation with {field}: shared"
        ports = [f"{name}:p{p[0]}" for _r, p in rails]
        w.add("rails.shared-switch", sev, (name,), ports, text, hint)
    return shared_count
