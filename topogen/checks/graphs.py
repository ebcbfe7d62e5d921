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
    ix = np.int32 if n < 2**31 else np.int64  # narrow ids: half the memory traffic of the gathers
    label = np.arange(n, dtype=ix)
    a = np.asarray(a).astype(ix, copy=False)
    b = np.asarray(b).astype(ix, copy=False)
    while len(a):
        # hook, a slice of edges at a time (its temporaries stay in the cache); a slice sees the
        # labels the slices before it lowered, which only hooks sooner
        left = 0
        for lo in range(0, len(a), SLICE):
            la, lb = label[a[lo : lo + SLICE]], label[b[lo : lo + SLICE]]
            diff = la != lb
            c = int(np.count_nonzero(diff))
            if c:
                left += c
                if c < len(diff):
                    la, lb = la[diff], lb[diff]
                np.minimum.at(label, np.maximum(la, lb), np.minimum(la, lb))
        if not left:
            break
        while True:
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt
        if left < len(a) // 2:  # drop settled edges once they are most of them (copying them all costs more)
            keep = label[a] != label[b]
            a, b = a[keep], b[keep]
    return label.astype(np.int64)


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
    x = np.sort(np.asarray(x).ravel())  # values only: any sort order is the same, and the default is many times faster
    first = run_starts(x)
    if counts:
        return x[first], np.diff(np.r_[first, len(x)])
    return x[first]


def _mix(x: np.ndarray, seed: int) -> np.ndarray:
    """splitmix64 of ``x + seed``: hash of a neighbour id, summed per node."""
    with np.errstate(over="ignore"):  # in place: two temporaries however long x is
        z = x.astype(np.uint64)
        z += np.uint64(seed)
        z *= np.uint64(0x9E3779B97F4A7C15)
        for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            t = z >> np.uint64(shift)
            z ^= t
            z *= np.uint64(mult)
        z ^= z >> np.uint64(31)
        return z


def edge_keys(V: int, ea: np.ndarray, eb: np.ndarray) -> np.ndarray:
    """Both directions of edges ``ea–eb`` as one int64 key each (``src << 32 | dst``; ``src * V + dst`` past 31 bits)."""
    E = len(ea)
    key = np.empty(2 * E, np.int64)  # ends of any integer type, cast into the key in place
    key[:E] = ea
    key[E:] = eb
    return _pair_halves(key, V)


def _pair_halves(key: np.ndarray, V: int) -> np.ndarray:
    """``key[:E]`` = a, ``key[E:]`` = b in; both directions' keys out (in place, a slice at a time)."""
    E = len(key) // 2
    for lo in range(0, E, SLICE):
        a, b = key[lo : min(E, lo + SLICE)], key[E + lo : E + min(E, lo + SLICE)]
        if V >= 2**31:
            ab = a * V
            ab += b
            b *= V
            b += a
        else:
            ab = a << 32
            ab |= b
            b <<= 32
            b |= a
        a[:] = ab
    return key


class Csr:
    """An undirected graph as adjacency lists: ``dst[off[v]:off[v+1]]`` are node ``v``'s neighbours.

    From :func:`edge_keys` (a simple graph, each list ascending), or from lists
    already grouped by node (:meth:`from_lists`: any order within a list,
    parallel edges kept; the searches need neither order nor uniqueness).
    """

    ordered = True  # each node's list ascending (twins compare lists entry by entry)

    @classmethod
    def from_lists(cls, off: np.ndarray, dst: np.ndarray) -> "Csr":
        """A graph of ``len(off) - 1`` nodes whose lists are ``dst[off[v]:off[v+1]]`` (kept, not copied)."""
        g = cls.__new__(cls)
        g.V = V = len(off) - 1
        g.off, g.dst = off, dst
        g.deg = np.diff(off)
        g.starts = off[:-1][g.deg > 0]
        g.usrc = np.flatnonzero(g.deg).astype(np.int64 if V >= 2**31 else np.int32)
        g.ordered = False
        return g

    def __init__(self, V: int, key: np.ndarray):
        wide = V >= 2**31
        key.sort()
        if len(key) and not (key[1:] != key[:-1]).all():
            key = key[np.r_[True, key[1:] != key[:-1]]]  # parallel cables: one edge
        self.V = V
        ix = np.int64 if wide else np.int32  # node ids: half the bytes of every later gather
        self.dst = np.empty(len(key), ix)  # neighbours, by node (src ascending), then ascending
        self.deg = np.zeros(V, np.int64)
        for lo in range(0, len(key), SLICE):  # a slice at a time: no column of sources is kept (see src)
            k = key[lo : lo + SLICE]
            s = k // V if wide else k >> 32
            self.dst[lo : lo + SLICE] = k - s * V if wide else k & 0xFFFFFFFF
            self.deg += np.bincount(s, minlength=V)
        del key
        self.off = np.zeros(V + 1, np.int64)
        np.cumsum(self.deg, out=self.off[1:])
        self.starts = self.off[:-1][self.deg > 0]  # first edge of each node with edges
        self.usrc = np.flatnonzero(self.deg).astype(ix)

    @property
    def src(self) -> np.ndarray:
        """The node of each entry of :attr:`dst` (made when asked: the searches need only ``off``)."""
        return np.repeat(np.arange(self.V, dtype=self.dst.dtype), self.deg)

    def _ordered_dst(self) -> np.ndarray:
        """:attr:`dst` with each node's list ascending (sorted here when built by :meth:`from_lists`)."""
        if self.ordered:
            return self.dst
        return self.dst[np.lexsort((self.dst, self.src))]

    def twins(self) -> np.ndarray:
        """Representative of each node's class of nodes with the same neighbour set.

        Classes come from the degree and a 64-bit hash of the neighbour list, then
        are proved exact by comparing every member's list with its
        representative's; should a hash ever collide, every node is its own
        class (still correct, only slower).
        """
        V, deg, off, dst = self.V, self.deg, self.off, self._ordered_dst()
        rep = np.arange(V, dtype=np.int64)
        nodes = np.flatnonzero(deg > 0)
        if not len(nodes):
            return rep
        h1 = np.zeros(V, np.uint64)
        for a, b in _slices(self.starts, len(dst)):  # nodes a..b-1 at a time: temporaries stay in cache
            lo, hi = self.starts[a], (self.starts[b] if b < len(self.starts) else len(dst))
            h1[self.usrc[a:b]] = np.add.reduceat(_mix(dst[lo:hi], 1), self.starts[a:b] - lo)
        cls_key = np.stack([deg[nodes].astype(np.uint64), h1[nodes]], axis=1)
        _u, first, inv = np.unique(cls_key, axis=0, return_index=True, return_inverse=True)
        cand = rep.copy()
        cand[nodes] = nodes[first][inv.ravel()]
        # edge e of node v (the k-th of its list) against the k-th of its representative's list
        src = self.src
        for lo in range(0, len(dst), SLICE):
            s = src[lo : lo + SLICE]
            idx = off[cand[s]]
            idx -= off[s]
            idx += np.arange(lo, lo + len(s))
            if not np.array_equal(dst[idx], dst[lo : lo + len(s)]):
                return rep
        return cand

    def sweep(self, sources: np.ndarray, bits: np.ndarray, rows: np.ndarray, mask: int, done: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Breadth-first distances from up to 64 source sets at once, one bit of a word per set.

        Source ``sources[i]`` belongs to set ``bits[i]`` (0..63). Returns
        ``(dist, last)``: ``dist[i, b]``, the distance from node ``rows[i]`` to
        the nearest source of set ``b`` (-1: none reachable), and ``last[v]``,
        the round in which node ``v`` last gained a set among those of ``mask``
        (its distance to the farthest of those sets it reaches; -1: none).
        Each round ORs the neighbours' words: ``O(edges)`` per round, as many
        rounds as the largest distance; only the rows asked for keep a matrix.
        The word is as narrow as the sets allow (a byte for 8): the gathers of
        a large graph then stay in the processor's cache.
        ``done``, when given, is each node's word once nothing can change (the
        sets of the sources in its component): reaching it ends the search a
        round early, without the round that would find no change.
        """
        V = self.V
        nbits = int(bits.max(initial=-1)) + 1
        word = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if np.dtype(t).itemsize * 8 >= nbits)
        R = np.zeros(V, word)
        np.bitwise_or.at(R, sources, np.left_shift(1, bits).astype(word))
        pos = np.full(V, -1, np.int64)
        pos[rows] = np.arange(len(rows))
        dist = np.full((len(rows), nbits), -1, np.int32)
        at = pos[sources] >= 0
        dist[pos[sources[at]], bits[at]] = 0
        m = word(mask & ((1 << (8 * np.dtype(word).itemsize)) - 1))
        last = np.where(R & m, 0, -1).astype(np.int32)
        if done is not None:
            done = done.astype(word)
        d = 0
        changed = unique(np.asarray(sources, np.int64))  # round 0: the sources' words were set
        E = len(self.dst)
        while E:
            d += 1
            # only a node next to one that changed last round, and not yet holding every set it can, may change
            may = None
            if int(self.deg[changed].sum()) <= E // 4:
                may = np.zeros(V, bool)
                may[self.dst[ranges(self.off, changed)]] = True
            if done is not None:
                may = (R != done) if may is None else may & (R != done)
            new = R.copy()
            if may is not None and int(self.deg[may].sum()) <= E // 2:  # a part of the edges: gather just theirs
                x = np.flatnonzero(may & (self.deg > 0))
                if len(x):
                    cnt = self.deg[x]
                    new[x] |= np.bitwise_or.reduceat(R[self.dst[ranges(self.off, x)]], np.r_[0, np.cumsum(cnt[:-1])])
            else:
                new[self.usrc] |= _or_gather(R, self.dst, self.starts)
            changed = np.flatnonzero(new != R)
            if not len(changed):
                break
            gain = new[changed] & ~R[changed]
            last[changed[(gain & m) != 0]] = d
            p = pos[changed]
            keep = p >= 0
            if keep.any():
                g = gain[keep]
                fresh = np.unpackbits(g.astype(g.dtype.newbyteorder("<")).view(np.uint8).reshape(len(g), -1), axis=1, bitorder="little")[:, :nbits].astype(bool)
                sub = dist[p[keep]]
                sub[fresh] = d
                dist[p[keep]] = sub
            R = new
            if done is not None and np.array_equal(R, done):
                break
        return dist, last


def leaf_distance(V: int, leaves: np.ndarray, ea: np.ndarray, eb: np.ndarray, height: np.ndarray | None = None, label: np.ndarray | None = None) -> int:
    """Largest distance between two of ``leaves`` that are connected, in the graph of ``V`` nodes and edges ``ea–eb``: see :func:`leaf_distance_csr`."""
    return leaf_distance_csr(Csr(V, edge_keys(V, ea, eb)), leaves, height, label)


def leaf_distance_csr(g: Csr, leaves: np.ndarray, height: np.ndarray | None = None, label: np.ndarray | None = None) -> int:
    """Largest distance between two of ``leaves`` that are connected, in the graph ``g``.

    Exact on any graph, in a few
    linear passes on a Clos, by bounding every leaf's eccentricity (its largest
    distance to another leaf of its component, ``e(v)``) from a few
    breadth-first searches run 64 at a time on bitsets:

    * a search from a leaf ``u`` gives ``e(u)`` exactly, and so a lower bound
      ``D ≥ e(u)`` of the answer ``D = max e``; leaves with the same neighbour
      set (twins: every leaf of a pod) have equal ``e``, so one search serves
      the class;
    * a search from any node ``c`` bounds every leaf from above:
      ``e(v) ≤ d(v, c) + max_u d(c, u)`` (triangle inequality);
    * the answer is proved once every leaf's upper bound is at most the best
      lower bound. In a generated Clos the first batch already proves it (a
      top-tier switch is at ``t-1`` from every leaf, a leaf has another at
      ``2(t-1)``), so twins are found only when it does not. On a hand-edited
      wiring the bounds may not meet; each next batch searches from the leaves
      whose bound is still too high (their search settles their whole twin
      class) and from the nodes least far from the leaves already searched, so
      the loop ends after at most one search per class of leaves (the
      all-pairs worst case, never wrong).

    ``height`` orders the centres of the first batch (highest first: the
    switch tier, when the caller knows it); without it, the distance from the
    nearest leaf, by one more search. ``label`` names each node's connected
    component when the caller knows them (computed here otherwise); a coarser
    labelling, whose parts are unions of components, gives the same answer
    (only the first batch may then prove less). A set of sources holds one node
    per component, so one bit serves every component (rails of a rail-only
    fabric) at once.
    """
    V = g.V
    leaves = unique(np.asarray(leaves, np.int64))
    if len(leaves) < 2 or not len(g.dst):
        return 0
    if label is None:
        src = g.src
        one_way = src < g.dst  # the adjacency holds both directions; components needs one
        label = components(V, src[one_way], g.dst[one_way])
        del src
        del one_way
    per_comp = np.bincount(label[leaves], minlength=V)
    leaves = leaves[per_comp[label[leaves]] >= 2]  # a leaf alone in its part has no pair
    if not len(leaves):
        return 0
    comps, lc = np.unique(label[leaves], return_inverse=True)  # leaf -> dense component index
    node_c = np.full(V, -1, np.int64)
    node_c[comps] = np.arange(len(comps))
    node_c = node_c[label]  # node -> dense component index (-1: no leaf pair there)
    is_leaf = np.zeros(V, bool)
    is_leaf[leaves] = True
    if height is None:  # distance to the nearest leaf: top-tier switches are the deepest
        height = g.sweep(leaves, np.zeros(len(leaves), np.int64), leaves[:0], 1)[1]
    lorder = np.argsort(lc, kind="stable")
    lstarts = run_starts(lc[lorder])
    ub = np.full(len(leaves), np.iinfo(np.int64).max)  # upper bound of e(v) per leaf
    twin = np.arange(V)  # each node its own class until twins are needed
    have_twins = False
    exact = np.full(V, -1, np.int64)  # e of a searched leaf's twin class, by representative
    lb = 0
    tried = np.zeros(V, bool)
    ecc_lb = np.zeros(V, np.int64)  # lower bound of max_u d(x, u), from the leaves searched
    cand = np.flatnonzero((node_c >= 0) & (g.deg > 0) & ~is_leaf)  # centres: one node per twin class
    first = True
    while True:
        active = ub > lb
        if not active.any():
            return int(lb)
        if not first and not have_twins:  # the first batch did not prove it: one search per twin class from now on
            twin, have_twins = _leaf_named_twins(g, leaves), True
            searched = np.flatnonzero(exact >= 0)
            exact[twin[searched]] = exact[searched]  # twins share e: the class inherits its searched member's
            cand = cand[twin[cand] == cand]
        # next sources, per component: k leaves still unsettled (largest bound first), k centres;
        # the first batch (which proves a Clos) 4 + 4 in a byte, later ones 32 + 32 in 64 bits
        k = 4 if first else 32
        al = leaves[active & (exact[twin[leaves]] < 0) & (twin[leaves] == leaves)]  # one leaf per unsettled class
        if first:
            al_key = (node_c[al], _spread_rank(node_c[al]))
        else:
            al_key = (node_c[al], -ub[np.searchsorted(leaves, al)], al)
        cen = cand[~tried[cand] & np.isin(node_c[cand], unique(lc[active]))]
        src_l, bit_l = _per_component(al, al_key, node_c[al], k)
        src_c, bit_c = _per_component(cen, (node_c[cen], ecc_lb[cen], -height[cen], cen), node_c[cen], k)
        src = np.concatenate([src_l, src_c])
        bit = np.concatenate([bit_l, bit_c + k])
        tried[src] = True
        first = False
        done = np.zeros(len(comps), np.uint64)  # every set of a component's sources, per component
        np.bitwise_or.at(done, node_c[src], np.left_shift(np.uint64(1), bit.astype(np.uint64)))
        done = np.where(node_c >= 0, done[node_c], 0).astype(np.uint64)
        dl, last = g.sweep(src, bit, leaves, (1 << k) - 1, done)  # leaf rows; last: farthest leaf source reached
        if dl.shape[1] < 2 * k:
            dl = np.pad(dl, ((0, 0), (0, 2 * k - dl.shape[1])), constant_values=-1)
        grouped = dl[lorder]  # leaves grouped by component
        far = np.full((len(comps), 2 * k), -1, np.int32)
        far[lc[lorder][lstarts]] = np.maximum.reduceat(grouped, lstarts, axis=0)  # max over the part's leaves
        reach = dl >= 0
        bound = np.where(reach, dl + far[lc], np.iinfo(np.int32).max).min(axis=1)
        ub = np.minimum(ub, bound)
        e_src = far[node_c[src_l], bit_l]  # a leaf source: its exact eccentricity
        exact[twin[src_l]] = e_src
        lb = max(lb, int(e_src.max(initial=0)))
        known = exact[twin[leaves]]
        ub = np.where(known >= 0, np.minimum(ub, known), ub)
        if len(src_l):
            ecc_lb = np.maximum(ecc_lb, last)


def _leaf_named_twins(g: Csr, leaves: np.ndarray) -> np.ndarray:
    """:meth:`Csr.twins`, a class holding a leaf named by its smallest leaf (a non-leaf twin has no ``e``)."""
    V = g.V
    twin = g.twins()
    lrep = np.full(V, V, np.int64)
    np.minimum.at(lrep, twin[leaves], leaves)
    twin[leaves] = lrep[twin[leaves]]
    return twin


def _spread_rank(group: np.ndarray) -> np.ndarray:
    """An order key spreading picks over each group: members evenly spaced first."""
    order = np.argsort(group, kind="stable")
    starts = run_starts(group[order])
    size = np.diff(np.r_[starts, len(group)])
    pos = np.arange(len(group)) - np.repeat(starts, size)
    rank = np.empty(len(group), np.int64)
    # bit-reversal-like spread: rank by pos * golden ratio mod 1 within the group
    rank[order] = ((pos * 0.6180339887498949) % 1.0 * (1 << 30)).astype(np.int64)
    return rank


def _per_component(nodes: np.ndarray, key: tuple, comp: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` of ``nodes`` in each component by ``key`` (lexsort keys, most significant first), with their rank."""
    if not len(nodes):
        return nodes, np.zeros(0, np.int64)
    order = np.lexsort(tuple(reversed(key)))
    c = comp[order]
    starts = run_starts(c)
    rank = np.arange(len(c)) - np.repeat(starts, np.diff(np.r_[starts, len(c)]))
    keep = rank < k
    return nodes[order][keep], rank[keep]


SLICE = 1 << 20  # edges per slice of a long pass: its temporaries (8 MB each) stay in the cache


def _slices(starts: np.ndarray, total: int, size: int = SLICE):
    """Runs ``a .. b-1`` of consecutive groups (group ``i`` starts at ``starts[i]``), about ``size`` elements each."""
    a = 0
    while a < len(starts):
        b = int(np.searchsorted(starts, starts[a] + size, side="right"))
        b = max(b, a + 1)
        yield a, b
        a = b


def ranges(off: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Positions ``off[v] .. off[v+1]-1`` of every node ``v`` of ``nodes``, one run after another (an adjacency's entries of those nodes)."""
    cnt = off[nodes + 1] - off[nodes]
    total = int(cnt.sum())
    if not total:
        return np.zeros(0, np.int64)
    first = np.repeat(off[nodes] - np.r_[0, np.cumsum(cnt[:-1])], cnt)
    first += np.arange(total)
    return first


def _or_gather(R: np.ndarray, src: np.ndarray, gstart: np.ndarray, budget: int = SLICE) -> np.ndarray:
    """OR of ``R[src]`` over each run starting at ``gstart``, in slices of about ``budget`` entries (temporaries in the cache)."""
    if len(src) <= budget:
        return np.bitwise_or.reduceat(R[src], gstart)
    out = np.zeros(len(gstart), R.dtype)
    bounds = np.r_[gstart, len(src)]
    g0 = 0
    while g0 < len(gstart):
        g1 = int(np.searchsorted(bounds, bounds[g0] + budget, side="right")) - 1
        g1 = max(g1, g0 + 1)
        lo, hi = bounds[g0], bounds[g1]
        out[g0:g1] = np.bitwise_or.reduceat(R[src[lo:hi]], gstart[g0:g1] - lo)
        g0 = g1
    return out
