"""Spraying at scale: the even per-hop split of :mod:`.routing`, factored so it stays linear in size.

A leaf pair sprayed over a 3- or 4-tier Clos touches thousands of links; a
random permutation at 131,072 GPUs has ~131,000 leaf pairs. Stored pair by
pair that is 10^8-10^9 entries. But the split at a switch depends only on the
switch and the destination leaf, so pairs that share a distribution share
their future:

* **Up.** Where every parent of a switch has the same leaves below it and
  reaches the same leaves (a *clean* switch), the split upward does not depend
  on the destination: all source leaves are sprayed upward once, tier by tier,
  and sources whose distributions over a tier coincide (the leaves of a pod,
  at the spine tier) are merged into one group.
* **Turn.** A pair turns at the first tier whose switches have its
  destination below.
* **Down.** From the turn down, a group is the pair's distribution plus the
  destination's ancestors on the next tier down (leaves of one pod share
  them), regrouped at every hop; only the last hop is per destination.

A pair's middle links are then the sum of its groups' links at each level,
each level a sparse (groups x links) matrix: :func:`levels` returns them with
each pair's group per level. Pairs whose up path meets a switch whose parents
disagree about the destination (a failure made the fabric asymmetric) are
routed one by one by :func:`topogen.traffic.routing.route`, as its own level.
Same numbers either way; tests compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from topogen.traffic.network import Network, _or_rows
from topogen.traffic.routing import mix, route
from topogen.util.errors import InputError, Problem

Q = np.float64(1 << 30)  # fractions are hashed at 2^-30 resolution


@dataclass
class Level:
    """One level of the factored incidence: pair ``i`` puts ``matrix[group[i]]`` on the links (``group[i] = -1``: nothing)."""

    group: np.ndarray
    matrix: sp.csr_matrix


def _row_hash(bits: np.ndarray) -> np.ndarray:
    """A 64-bit hash of every bitset row."""
    w = mix(np.arange(1, bits.shape[1] + 1, dtype=np.uint64))
    with np.errstate(over="ignore"):
        return mix((mix(bits ^ w[None, :])).sum(axis=1, dtype=np.uint64))


def dirty_cone(net: Network) -> np.ndarray:
    """Per switch, the leaves for which some switch on or above it has parents that disagree (bitset rows).

    Parents agree when their ``below`` and ``reach`` rows are equal; rows are
    compared by hash first, so an intact fabric costs one pass over the bitsets.
    """
    S, W = net.below.shape
    cone = np.zeros((S, W), np.uint64)
    deg = np.diff(net.up_ptr)
    has = np.flatnonzero(deg > 0)
    if not len(has):
        return cone
    parents = net.link_head[net.up_link] - net.gpus
    starts = net.up_ptr[has]
    hb, hr = _row_hash(net.below)[parents], _row_hash(net.reach)[parents]
    differ = (np.minimum.reduceat(hb, starts) != np.maximum.reduceat(hb, starts)) | (np.minimum.reduceat(hr, starts) != np.maximum.reduceat(hr, starts))
    if not differ.any():
        return cone
    for u in has[differ].tolist():  # the few switches whose parents differ (failures)
        ps = parents[net.up_ptr[u] : net.up_ptr[u + 1]]
        b, r = net.below[ps], net.reach[ps]
        cone[u] = (np.bitwise_or.reduce(b, axis=0) & ~np.bitwise_and.reduce(b, axis=0)) | (np.bitwise_or.reduce(r, axis=0) & ~np.bitwise_and.reduce(r, axis=0))
    tiers = net.switch_tier
    lower = np.repeat(np.arange(S), deg)
    for t in range(int(tiers.max(initial=0)) - 1, 0, -1):
        sel = tiers[lower] == t
        if sel.any():
            _or_rows(cone, lower[sel], cone[parents[sel]])
    return cone


def _ancestor_hash(net: Network, leaves: np.ndarray) -> np.ndarray:
    """``h[t, i]``: a hash of the tier-t switches that have leaf ``leaves[i]`` below them (t = 0 .. top)."""
    S = len(net.switch_tier)
    top = int(net.switch_tier.max(initial=0))
    weights = mix(np.arange(1, S + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    out = np.zeros((top + 1, len(leaves)), np.uint64)
    word, bit = leaves >> 6, (leaves & 63).astype(np.uint64)
    for t in range(1, top + 1):
        rows = np.flatnonzero(net.switch_tier == t)
        for c in range(0, len(rows), 256):
            r = rows[c : c + 256]
            has = ((net.below[r][:, word] >> bit) & np.uint64(1)).astype(bool)  # chunk x leaves
            with np.errstate(over="ignore"):
                out[t] += (has * weights[r][:, None]).sum(axis=0, dtype=np.uint64)
    return out


def _signature(group: np.ndarray, switch: np.ndarray, frac: np.ndarray, groups: int) -> np.ndarray:
    """A 64-bit hash of each group's distribution (switch -> share)."""
    q = np.round(frac * Q).astype(np.uint64)
    with np.errstate(over="ignore"):
        v = mix(switch.astype(np.uint64) * np.uint64(0x100000001B3) ^ q)
    out = np.zeros(groups, np.uint64)
    if len(group):
        order = np.argsort(group, kind="stable")
        g = group[order]
        start = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        with np.errstate(over="ignore"):
            out[g[start]] = np.add.reduceat(v[order], start)
    return out


def _merge(group: np.ndarray, switch: np.ndarray, frac: np.ndarray, S: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    key = group * S + switch
    uk, inv = np.unique(key, return_inverse=True)
    return uk // S, uk % S, np.bincount(inv, weights=frac, minlength=len(uk))


def _regroup(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Group ids of rows by equal key tuples (first occurrence order), and the first row of each group."""
    stacked = np.stack(keys, axis=1) if len(keys) > 1 else keys[0][:, None]
    _, first, inv = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # ids in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inv.reshape(-1)], first[order]


def _split_turn(net: Network, item_g: np.ndarray, item_sw: np.ndarray, g_of: np.ndarray, dl: np.ndarray, live: np.ndarray, t: int) -> np.ndarray:
    """Live pairs whose group's switches disagree on having the destination below (some turn here, some not)."""
    idx = np.flatnonzero(live)
    if not len(idx) or not len(item_g):
        return np.zeros(len(g_of), bool)
    leaves, inv = np.unique(dl[idx], return_inverse=True)
    combo, first = _regroup([g_of[idx].astype(np.uint64), inv.astype(np.uint64)])
    g, d = g_of[idx][first], dl[idx][first]
    order = np.argsort(item_g, kind="stable")
    ptr = np.searchsorted(item_g[order], np.arange(int(item_g.max()) + 2))
    cnt = ptr[g + 1] - ptr[g]
    which = np.repeat(np.arange(len(g)), cnt)
    pos = np.repeat(ptr[g], cnt) + np.arange(len(which)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    has = net.has_leaf(net.below, item_sw[order][pos], d[which])
    yes = np.bincount(which[has], minlength=len(g))
    split = (yes > 0) & (yes < cnt)
    out = np.zeros(len(g_of), bool)
    out[idx[split[combo]]] = True
    return out


def _take(g: np.ndarray, sw: np.ndarray, fr: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Items of new group j = the items of old group ``which[j]`` (``g`` sorted)."""
    ptr = np.searchsorted(g, np.arange(int(which.max(initial=-1)) + 2))
    cnt = ptr[which + 1] - ptr[which]
    new = np.repeat(np.arange(len(which)), cnt)
    pos = np.repeat(ptr[which], cnt) + np.arange(len(new)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return new, sw[pos], fr[pos]


MAX_PAIR_ENTRIES = 40_000_000  # (pair, link) entries of the leaf pairs sprayed one by one: about 1.5 GB with the sparse matrix
CHUNK_ENTRIES = 2_000_000  # entries routed at once (the routing's intermediates stay near this)


def _one_by_one(net: Network, src_sw: np.ndarray, dst_leaf: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """Spray leaf pairs one by one (:func:`route`), in chunks of bounded size; InputError past :data:`MAX_PAIR_ENTRIES`.

    A failure that makes the fabric asymmetric leaves pairs whose spray cannot be
    factored; each touches up to thousands of links, so a large share of pairs at
    131,072 GPUs would need tens of GB. The chunks are sized from the entries per
    pair seen so far; the total is refused with the bound named rather than run
    out of memory.
    """
    P = len(src_sw)
    parts, dead = [], np.zeros(P, bool)
    total, i, chunk = 0, 0, 64
    while i < P:
        j = min(P, i + chunk)
        seg = route(net, src_sw[i:j], dst_leaf[i:j], "spray")
        parts.append((seg.row + i, seg.link, seg.frac))
        dead[i:j] = seg.dead
        total += len(seg.row)
        per = max(1.0, total / j)
        if total + per * (P - j) > MAX_PAIR_ENTRIES:
            raise InputError([Problem("routing", f"spray: the failures leave {P:,} leaf pairs whose paths must be followed one by one, about {int(per):,} links each ({int(per * P):,} entries in all); simulate holds at most {MAX_PAIR_ENTRIES:,} (about 1.5 GB)", "fail a smaller share (--fail-random 0.1%) or named devices, simulate fewer GPUs, or use --routing ecmp")])
        i = j
        chunk = max(1, min(P, int(CHUNK_ENTRIES / per)))
    row = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    link = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    frac = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0)
    return sp.csr_matrix((frac, (row, link)), shape=(P, net.links)), dead


def levels(net: Network, src_sw: np.ndarray, dst_leaf: np.ndarray) -> tuple[list[Level], np.ndarray]:
    """The factored spray incidence of leaf pairs (see the module), and which pairs have no path."""
    n = net.gpus
    S = len(net.switch_tier)
    P = len(src_sw)
    links = net.links
    out: list[Level] = []
    dead = np.zeros(P, bool)
    if not P:
        return out, dead
    here = net.leaf_of_switch[src_sw] == dst_leaf
    dirty = ~here & ~net.has_leaf(net.reach, src_sw, dst_leaf)
    dirty |= ~here & (net.has_leaf(dirty_cone(net), src_sw, dst_leaf) if net.layered else True)
    if dirty.any():
        idx = np.flatnonzero(dirty)
        matrix, cut = _one_by_one(net, src_sw[idx], dst_leaf[idx])
        grp = np.full(P, -1, np.int64)
        grp[idx] = np.arange(len(idx))
        out.append(Level(grp, matrix))
        dead[idx] = cut
    clean = np.flatnonzero(~here & ~dirty)
    if not len(clean):
        return out, dead
    ls, dl = src_sw[clean], dst_leaf[clean]
    m = len(clean)
    top = int(net.switch_tier.max(initial=0))

    # up: source distributions, tier by tier, merged where they coincide
    srcs, g_of = np.unique(ls, return_inverse=True)
    item_g, item_sw, item_fr = np.arange(len(srcs)), srcs.copy(), np.ones(len(srcs))
    turn_tier = np.full(m, -1, np.int64)
    turn_group = np.full(m, -1, np.int64)  # global id over tiers
    late = np.zeros(m, bool)  # pairs whose distribution turns at two tiers at once: routed one by one after all
    kept = []  # per tier: that tier's group items
    up_levels: list[int] = []
    offset = 0
    for t in range(1, top + 1):
        groups = int(item_g.max()) + 1 if len(item_g) else 0
        rep = np.full(groups, -1, np.int64)
        rep[item_g[::-1]] = item_sw[::-1]
        late |= _split_turn(net, item_g, item_sw, g_of, dl, (turn_tier < 0) & ~late, t)
        turns = (turn_tier < 0) & ~late & net.has_leaf(net.below, rep[g_of], dl)
        turn_tier[turns] = t
        turn_group[turns] = offset + g_of[turns]
        kept.append((item_g + offset, item_sw, item_fr))
        offset += groups
        live = turn_tier < 0
        if not live.any() or t == top:
            break
        deg = net.up_ptr[item_sw + 1] - net.up_ptr[item_sw]
        r = np.repeat(np.arange(len(item_g)), deg)
        start = np.cumsum(deg) - deg
        lk = net.up_link[net.up_ptr[item_sw][r] + np.arange(len(r)) - start[r]]
        share = item_fr[r] / deg[r]
        grp = np.full(P, -1, np.int64)
        grp[clean[live]] = g_of[live]
        out.append(Level(grp, sp.csr_matrix((share, (item_g[r], lk)), shape=(groups, links))))
        up_levels.append(len(out) - 1)
        ng, nsw, nfr = _merge(item_g[r], net.link_head[lk] - n, share, S)
        new_id, first = _regroup([_signature(ng, nsw, nfr, groups)])
        item_g, item_sw, item_fr = _take(ng, nsw, nfr, first)
        g_of = new_id[g_of]
    if late.any():  # take them out of the up levels and route them one by one
        for i in up_levels:
            out[i].group[clean[late]] = -1
        idx = clean[late]
        matrix, cut = _one_by_one(net, src_sw[idx], dst_leaf[idx])
        grp = np.full(P, -1, np.int64)
        grp[idx] = np.arange(len(idx))
        out.append(Level(grp, matrix))
        dead[idx] = cut
        turn_tier[late] = -2
    dead[clean[turn_tier == -1]] = True

    # down: grouped by distribution and the destination's ancestors one tier down, regrouped each hop
    pairs = np.flatnonzero(turn_tier >= 0)
    if not len(pairs):
        return out, dead
    leaves, anc_of = np.unique(dl, return_inverse=True)
    anc = _ancestor_hash(net, leaves)
    all_g = np.concatenate([x[0] for x in kept])
    order = np.argsort(all_g, kind="stable")
    all_g, all_sw, all_fr = all_g[order], np.concatenate([x[1] for x in kept])[order], np.concatenate([x[2] for x in kept])[order]
    tier_now = turn_tier[pairs]

    def key(dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _regroup([dist.astype(np.uint64), anc[np.maximum(tier_now - 1, 0), anc_of[pairs]], tier_now.astype(np.uint64)])

    dgrp, first = key(turn_group[pairs])
    item_g, item_sw, item_fr = _take(all_g, all_sw, all_fr, turn_group[pairs][first])
    while len(item_g):
        groups = len(first)
        rep_leaf = dl[pairs[first]]
        moving = net.leaf_of_switch[item_sw] != rep_leaf[item_g]
        item_g, item_sw, item_fr = item_g[moving], item_sw[moving], item_fr[moving]
        if not len(item_g):
            break
        deg = net.down_ptr[item_sw + 1] - net.down_ptr[item_sw]
        r = np.repeat(np.arange(len(item_g)), deg)
        start = np.cumsum(deg) - deg
        lk = net.down_link[net.down_ptr[item_sw][r] + np.arange(len(r)) - start[r]]
        child = net.link_head[lk] - n
        valid = net.has_leaf(net.below, child, rep_leaf[item_g[r]])
        count = np.bincount(r[valid], minlength=len(item_g))
        stuck = np.bincount(item_g[count == 0], minlength=groups) > 0
        r, lk, child = r[valid], lk[valid], child[valid]
        share = item_fr[r] / count[r]
        grp = np.full(P, -1, np.int64)
        grp[clean[pairs]] = dgrp
        out.append(Level(grp, sp.csr_matrix((share, (item_g[r], lk)), shape=(groups, links))))
        dead[clean[pairs[stuck[dgrp]]]] = True
        ng, nsw, nfr = _merge(item_g[r], child, share, S)
        tier_now = tier_now - 1
        dgrp_new, first = key(_signature(ng, nsw, nfr, groups)[dgrp])
        item_g, item_sw, item_fr = _take(ng, nsw, nfr, dgrp[first])
        dgrp = dgrp_new
    return out, dead
