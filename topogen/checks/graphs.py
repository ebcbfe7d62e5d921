"""Graph algorithms on numpy edge columns: components, sorted runs, leaf-to-leaf distance.

Pure functions of integer arrays (no fabric, no Python object per edge), so a
million-GPU fabric costs a few vectorised passes.
"""

from __future__ import annotations

import numpy as np


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected-component label of each of ``n`` nodes joined by edges ``a[i]–b[i]``.

    Hook-to-smaller-root plus pointer jumping (Shiloach–Vishkin style): a few
    vectorised rounds even for millions of edges. Labels are node ids of a
    representative; equal labels mean the same component.
    """
    label = np.arange(n, dtype=np.int64)
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    while len(a):
        la, lb = label[a], label[b]
        diff = la != lb
        if not diff.any():
            break
        a, b, la, lb = a[diff], b[diff], la[diff], lb[diff]
        np.minimum.at(label, np.maximum(la, lb), np.minimum(la, lb))
        while True:
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt
    return label


def run_starts(x: np.ndarray) -> np.ndarray:
    """Index of the first element of each run of equal values in ``x`` (sorted: of each distinct value)."""
    if not len(x):
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.r_[True, x[1:] != x[:-1]])


def unique(x: np.ndarray, counts: bool = False):
    """Sorted distinct values of an integer array (and how often each occurs).

    Sort-based: numpy's hash-based ``np.unique`` is several times slower on
    the millions of int64 keys of a large fabric.
    """
    x = np.sort(np.asarray(x).ravel(), kind="stable")
    first = run_starts(x)
    if counts:
        return x[first], np.diff(np.r_[first, len(x)])
    return x[first]


def _mix(x: np.ndarray, seed: int) -> np.ndarray:
    """splitmix64 of ``x + seed``: hash of a neighbour id, summed per leaf."""
    with np.errstate(over="ignore"):
        z = (x.astype(np.uint64) + np.uint64(seed)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def leaf_distance(V: int, leaves: np.ndarray, ea: np.ndarray, eb: np.ndarray) -> int:
    """Largest switch-graph distance between two of ``leaves`` that are connected.

    ``V`` nodes, undirected edges ``ea–eb``. Leaves with the same set of
    neighbours are at equal distance from every other node, so one
    representative per class is the source of a breadth-first search run on
    bitsets (64 sources per machine word). A Clos pod is one class, so a
    65,536-GPU fabric needs a few hundred sources, not thousands.
    """
    leaves = unique(leaves)
    if len(leaves) < 2:
        return 0
    key = unique(np.concatenate([ea * V + eb, eb * V + ea]))
    src, dst = np.divmod(key, V)  # sorted by src, deduplicated
    is_leaf = np.zeros(V, bool)
    is_leaf[leaves] = True
    lp = is_leaf[src]
    pl, pn = src[lp], dst[lp]
    deg = np.bincount(pl, minlength=V)
    starts = run_starts(pl)
    h1 = np.zeros(V, np.uint64)
    h2 = np.zeros(V, np.uint64)
    if len(pl):
        h1[pl[starts]] = np.add.reduceat(_mix(pn, 1), starts)
        h2[pl[starts]] = np.add.reduceat(_mix(pn, 7), starts)
    connected = leaves[deg[leaves] > 0]
    reps = leaves[deg[leaves] == 0]  # isolated leaves: their own class (distance to others infinite)
    if len(connected):
        cls_key = np.stack([deg[connected].astype(np.uint64), h1[connected], h2[connected]], axis=1)
        _u, first, inv = np.unique(cls_key, axis=0, return_index=True, return_inverse=True)
        inv = inv.ravel()
        rep_of = connected[first][inv]
        # prove the hash classes exact: each member's neighbour list equals its representative's
        off = np.zeros(V + 1, np.int64)  # pn is in CSR order: leaf rows sorted, then neighbours
        np.cumsum(deg, out=off[1:])
        member = np.repeat(connected, deg[connected])
        rep = np.repeat(rep_of, deg[connected])
        k = np.arange(len(member)) - np.repeat(off[connected], deg[connected])
        exact = np.array_equal(pn[off[member] + k], pn[off[rep] + k])
        reps = np.concatenate([reps, connected[first] if exact else connected])
    if len(src) == 0:
        return 0
    # bitset BFS from the representatives over the whole switch graph
    order = np.argsort(dst, kind="stable")
    s_sorted, d_sorted = src[order], dst[order]
    gstart = run_starts(d_sorted)
    udst = d_sorted[gstart]
    worst = 0
    chunk = 512
    for c0 in range(0, len(reps), chunk):
        rs = reps[c0 : c0 + chunk]
        W = (len(rs) + 63) // 64
        R = np.zeros((V, W), np.uint64)
        j = np.arange(len(rs))
        R[rs, j // 64] = np.left_shift(np.uint64(1), (j % 64).astype(np.uint64))
        d = 0
        while True:
            d += 1
            agg = _or_gather(R, s_sorted, gstart)
            new = R.copy()
            new[udst] |= agg
            if np.array_equal(new, R):
                break
            if not np.array_equal(new[leaves], R[leaves]):
                worst = max(worst, d)
            R = new
    return worst


def _or_gather(R: np.ndarray, src: np.ndarray, gstart: np.ndarray, budget: int = 1 << 22) -> np.ndarray:
    """OR of ``R[src]`` over each run starting at ``gstart``, in memory-bounded slices."""
    W = R.shape[1]
    step = max(1, budget // max(W, 1))
    if len(src) <= step:
        return np.bitwise_or.reduceat(R[src], gstart, axis=0)
    out = np.zeros((len(gstart), W), np.uint64)
    bounds = np.r_[gstart, len(src)]
    g0 = 0
    while g0 < len(gstart):
        g1 = int(np.searchsorted(bounds, bounds[g0] + step, side="right")) - 1
        g1 = max(g1, g0 + 1)
        lo, hi = bounds[g0], bounds[g1]
        out[g0:g1] = np.bitwise_or.reduceat(R[src[lo:hi]], gstart[g0:g1] - lo, axis=0)
        g0 = g1
    return out
