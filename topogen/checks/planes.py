"""The wiring as one graph per plane: its connected parts, and which GPUs are cut off.

Shared by the tier, reachability, bisection and failure checks.

Most GPU-port nodes hold one cable, to a switch: they are *attached* to that
switch and share its part of the network. Components are therefore computed
on the *core* graph only: the switches plus the few GPU-port nodes with more
cables (dual-homed ports, GPU-to-GPU cables), linked by every cable that is
not a GPU's single cable. Its label array fits in the processor's cache, and a
GPU's part is its switch's: exact on any wiring, linear in cables. GPUs are
counted per (group, switch) pair, so deciding which GPUs a failure cuts off
costs a pass over switches, not over GPUs.
"""

from __future__ import annotations

import numpy as np

from topogen.checks.graphs import SLICE, Csr, components, ranges, unique
from topogen.checks.wire import Wire


class PlaneGraph:
    """Port-expanded graph: GPU ``g`` on NIC port ``i`` is node ``i*N + g``, switch ``s`` is ``nics*N + s``.

    GPUs are separate nodes per NIC port because a GPU does not forward between
    its NICs; a plane's graph is then a separate part of one components run.
    NIC port ``i`` is in plane ``i // homes``: one port per plane, or a
    dual-homed pair (``homes`` 2), whose two nodes belong to the same plane, so
    the nodes of plane ``p`` are ``p*homes*N .. (p+1)*homes*N - 1``.
    ``u[j]``, ``v[j]`` are the nodes of oriented cable ``j`` of the :class:`Wire`;
    ``label[x]`` is the smallest node id of node ``x``'s part (as
    :func:`~topogen.checks.graphs.components` numbers them).
    """

    def __init__(self, w: Wire):
        n, P, S = w.n, w.nics, w.S
        self.w = w
        self.G = G = P * n  # GPU-port nodes come first
        self.size = G + S
        nic = w.plane * w.homes + (np.where(w.lo < n, w.lo_port, 0) % w.homes if w.homes > 1 else 0)
        self.u = self.node(w.lo, nic)
        self.v = self.node(w.hi, nic)
        u, v = self.u, self.v
        self.gdeg = np.bincount(u[u < G], minlength=G) + np.bincount(v[v < G], minlength=G)  # cables per GPU-port node
        # attached: a GPU-port node's only cable, to a switch (the GPU end is the lower one)
        att = (u < G) & (v >= G)
        att[att] = self.gdeg[u[att]] == 1
        self.att = att
        self.att_idx = np.flatnonzero(att)
        self.att_node = u[self.att_idx]
        self.att_sw = v[self.att_idx] - G
        core = ~att
        self.core_gpu = unique(np.concatenate([u[core & (u < G)], v[core & (v < G)]]))
        self.C = C = S + len(self.core_gpu)
        self.core_idx = np.flatnonzero(core)
        cix = np.int32 if C < 2**31 else np.int64  # core ids are few: narrow columns for the repeated components runs
        self.cu = self.compact(u[self.core_idx]).astype(cix)
        self.cv = self.compact(v[self.core_idx]).astype(cix)
        self.clabel = components(C, self.cu, self.cv)  # smallest compact id of each core node's part
        # the part's representative in node ids: its smallest node (GPU-port nodes before switches)
        orig = np.concatenate([G + np.arange(S), self.core_gpu])
        rep = np.full(C, self.size, np.int64)
        np.minimum.at(rep, self.clabel, orig)
        if len(self.att_sw):
            first = _first_per(self.att_sw, self.att_node, S)  # smallest attached node per switch
            np.minimum.at(rep, self.clabel[:S], first)
        label = np.arange(self.size, dtype=np.int64)  # a GPU-port node without cables is its own part
        label[G:] = rep[self.clabel[:S]]
        label[self.core_gpu] = rep[self.clabel[S:]]
        label[self.att_node] = rep[self.clabel[self.att_sw]]
        self.label = label
        # GPUs per (group, switch) pair of each plane; group: the rail in rail-only, else 0
        self.groups = w.K if w.rail_only else 1
        self._pairs: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def node(self, dev: np.ndarray, nic: np.ndarray) -> np.ndarray:
        n = self.w.n
        dev = np.asarray(dev, np.int64)
        out = dev + (self.w.nics * n - n)  # a switch; GPU ends (fewer) overwritten below
        g = np.flatnonzero(dev < n)
        out[g] = np.clip(nic[g], 0, self.w.nics - 1).astype(np.int64) * n + dev[g]
        return out

    def nodes(self, plane: int) -> slice:
        """The GPU nodes of ``plane`` (all its NIC ports)."""
        n, h = self.w.n, self.w.homes
        return slice(plane * h * n, (plane + 1) * h * n)

    def compact(self, x: np.ndarray) -> np.ndarray:
        """Core-graph id of graph nodes ``x`` (switches, then the core GPU-port nodes)."""
        out = x - self.G
        g = np.flatnonzero(out < 0)  # GPU-port nodes: few
        out[g] = self.w.S + np.searchsorted(self.core_gpu, x[g])
        return out

    def plane_of(self, node: np.ndarray) -> np.ndarray:
        """Plane of GPU-port nodes."""
        return node // max(self.w.n, 1) // self.w.homes

    def group(self, node: np.ndarray) -> np.ndarray:
        """Group of GPU-port nodes: the rail in rail-only, else 0."""
        return (node % self.w.n) % self.w.K if self.groups > 1 else np.zeros(len(node), np.int64)

    def _linked(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        n, P = self.w.n, self.w.nics
        out = np.zeros(P * n, bool)
        for x in (u, v):
            out[x[x < P * n]] = True
        return out

    def linked(self) -> np.ndarray:
        """GPU-port nodes holding at least one cable (bool over ``nics*N``)."""
        return self.gdeg > 0

    def without(self, remove: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Component labels and linked GPU-port nodes once the cables of mask ``remove`` are gone."""
        keep = ~remove
        # the edge lists are passed as temporaries so components() can free them as it
        # drops settled edges (holding them here costs ~10% on a 131,072-GPU rail-only fabric)
        label = components(self.size, self.u[keep], self.v[keep])
        return label, self._linked(self.u[keep], self.v[keep])

    def cut_off(self, label: np.ndarray, linked: np.ndarray, plane: int | None = None) -> np.ndarray:
        """GPU-port nodes outside the main part of their group (the plane; the rail in rail-only).

        The main part is the component holding most of the group's GPU ports; GPU
        ports with no cable count as cut off.
        """
        w = self.w
        n, K = w.n, w.K
        planes = range(w.planes) if plane is None else [plane]
        out = np.zeros(w.nics * n, bool)
        for p in planes:
            sl = self.nodes(p)
            lab = label[sl]
            lk = linked[sl]
            m = len(lab)
            grp = (np.arange(m) % n % K) if w.rail_only else np.zeros(m, np.int64)
            key = grp[lk] * (self.size + 1) + lab[lk]
            if len(key) == 0:
                out[sl] = True
                continue
            uk, cnt = unique(key, counts=True)
            g_of = uk // (self.size + 1)
            # main component per group: the largest (first on ties)
            order = np.lexsort((-cnt, g_of))
            first = np.r_[True, g_of[order][1:] != g_of[order][:-1]]
            main_key = uk[order][first]
            main = np.full(int(grp.max(initial=0)) + 1, -1, np.int64)
            main[main_key // (self.size + 1)] = main_key % (self.size + 1)
            out[sl] = ~lk | (lab != main[grp])
        return out

    # the core graph's answers ---------------------------------------------------------------

    def pairs(self, plane: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(group, switch, GPUs) of every pair with GPUs attached in ``plane``, sorted by group then switch."""
        if plane not in self._pairs:
            S, K = self.w.S, self.groups
            sel = self.plane_of(self.att_node) == plane
            key = self.group(self.att_node[sel]) * S + self.att_sw[sel]
            cnt = np.bincount(key, minlength=K * S)
            k = np.flatnonzero(cnt)
            self._pairs[plane] = (k // max(S, 1), k % max(S, 1), cnt[k])
        return self._pairs[plane]

    def parts(self, plane: int, clabel: np.ndarray | None = None, pair_cnt: np.ndarray | None = None, core_alive: np.ndarray | None = None):
        """Parts holding the linked GPUs of each group of ``plane``: (main part per group, parts per group, tie).

        ``main[g]``: the core label of the part with most GPUs of group ``g``
        (-1: none linked). ``tie``: some group's largest parts are equally
        large; the caller then asks :meth:`cut_off`, which breaks the tie by
        node id. Optional arguments describe the wiring after a failure:
        core labels, GPUs left per pair, core GPU-port nodes still linked.
        """
        K = self.groups
        M = 2 * self.C  # labels: a core id, or C + id for a node a failure left alone
        clabel = self.clabel if clabel is None else clabel
        pg, ps, pc = self.pairs(plane)
        if pair_cnt is not None:
            pc = pair_cnt
        cg = self.core_gpu
        in_p = self.plane_of(cg) == plane
        if core_alive is not None:
            in_p &= core_alive
        else:
            in_p &= self.gdeg[cg] > 0
        cgs = np.flatnonzero(in_p)
        key = np.concatenate([pg * M + clabel[ps], self.group(cg[cgs]) * M + clabel[self.w.S + cgs]])
        wt = np.concatenate([pc, np.ones(len(cgs), np.int64)]).astype(np.float64)
        keep = wt > 0
        key, wt = key[keep], wt[keep]
        uk = unique(key)
        tot = np.bincount(np.searchsorted(uk, key), weights=wt, minlength=len(uk))
        g_of = uk // M
        main = np.full(K, -1, np.int64)
        nparts = np.bincount(g_of, minlength=K)
        tie = False
        if len(uk):
            order = np.lexsort((-tot, g_of))
            first = np.flatnonzero(np.r_[True, g_of[order][1:] != g_of[order][:-1]])
            main[g_of[order][first]] = uk[order][first] % M
            second = first + 1
            ok = second < len(order)
            ok[ok] = g_of[order][second[ok]] == g_of[order][first[ok]]
            tie = bool(np.any(tot[order][second[ok]] == tot[order][first[ok]]))
        return main, nparts, tie

    def base_cut(self) -> np.ndarray:
        """:meth:`cut_off` of the intact wiring, every plane (bool over ``planes*N``)."""
        w = self.w
        out = ~self.linked()
        for p in range(w.planes):
            main, _nparts, tie = self.parts(p)
            if tie:
                sl = self.nodes(p)
                out[sl] = self.cut_off(self.label, self.linked(), p)[sl]
                continue
            sel = self.plane_of(self.att_node) == p
            nodes = self.att_node[sel]
            out[nodes] = self.clabel[self.att_sw[sel]] != main[self.group(nodes)]
            cg = self.core_gpu[self.plane_of(self.core_gpu) == p]
            out[cg] |= self.clabel[self.compact(cg)] != main[self.group(cg)]
        return out

    def _core_adjacency(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Core cables by node: ``edge[off[c]:off[c+1]]`` are the positions of node ``c``'s core cables, ``nbr[...]`` their other ends.

        Built once, shared by the failure pass (positions) and the worst-case path (neighbours).
        """
        if not hasattr(self, "_adj"):
            E = len(self.cu)
            shift = max(int(2 * E - 1).bit_length(), 1)  # node << shift | position fits 63 bits: core ids and positions stay far below 2**31 within the spec limits
            key = np.empty(2 * E, np.int64)
            key[:E] = self.cu
            key[E:] = self.cv
            key <<= shift
            for lo in range(0, 2 * E, SLICE):  # + position, a slice at a time (no 2E-long arange)
                key[lo : lo + SLICE] += np.arange(lo, min(lo + SLICE, 2 * E))
            key.sort()  # by node, then position: a value sort, no argsort
            ix = np.int32 if 2 * E < 2**31 else np.int64  # positions: half the bytes kept
            edge = np.empty(2 * E, ix)
            nbr = np.empty(2 * E, self.cu.dtype)
            far = np.concatenate([self.cv, self.cu])  # entry h of the doubled list (cu then cv) has its other end at far[h]
            for lo in range(0, 2 * E, SLICE):
                h = key[lo : lo + SLICE]
                h = h & ((1 << shift) - 1)
                nbr[lo : lo + SLICE] = far[h]
                h[h >= E] -= E
                edge[lo : lo + SLICE] = h
            del key, far
            off = np.zeros(self.C + 1, np.int64)
            np.cumsum(np.bincount(self.cu, minlength=self.C) + np.bincount(self.cv, minlength=self.C), out=off[1:])
            self._adj = (off, edge, nbr)
        return self._adj

    def switch_graph(self) -> Csr:
        """The worst-case path's graph: adjacent-tier cables between switches, over core ids (a core GPU-port node has no neighbour).

        The core adjacency's own lists when every core cable is one (a generated fabric), else those entries of it.
        """
        w, S = self.w, self.w.S
        off, edge, nbr = self._core_adjacency()
        if self.C == S and bool(w.adj.all()):
            return Csr.from_lists(off, nbr)
        ok = w.adj[self.core_idx] & (self.cu < S) & (self.cv < S)
        keep = ok[edge]
        node = np.repeat(np.arange(self.C), np.diff(off))
        sub = np.zeros(self.C + 1, np.int64)
        np.cumsum(np.bincount(node[keep], minlength=self.C), out=sub[1:])
        return Csr.from_lists(sub, nbr[keep])

    def _kept_whole(self, pos: np.ndarray) -> np.ndarray | None:
        """After removing core cables ``pos``: the nodes left without a core cable, when every other
        end of a removed cable still reaches the others (then no part splits); None when that is not
        shown within one hop of those ends (the caller computes the parts again).

        Exact: a path that used a removed cable, or a node left alone, can go round it through
        the ends that stay connected.
        """
        cu, cv = self.cu, self.cv
        off, edge, _nbr = self._core_adjacency()
        both = np.concatenate([cu[pos], cv[pos]]).astype(np.int64)
        ends = unique(both)
        left = (off[ends + 1] - off[ends]) - np.bincount(np.searchsorted(ends, both), minlength=len(ends))
        alone, need = ends[left <= 0], ends[left > 0]
        if len(need) <= 1:
            return alone

        def incident(nodes: np.ndarray) -> np.ndarray:
            return edge[ranges(off, nodes)]

        e1 = incident(need)
        ball = unique(np.concatenate([cu[e1], cv[e1]]).astype(np.int64))
        if (off[ball + 1] - off[ball]).sum() > len(cu) // 4:  # not local: as costly as the parts again
            return None
        e2 = unique(incident(ball))
        inb = np.zeros(self.C, bool)
        inb[ball] = True
        e2 = e2[inb[cu[e2]] & inb[cv[e2]] & ~np.isin(e2, pos)]
        lab = components(self.C, cu[e2], cv[e2])
        return alone if (lab[need] == lab[need[0]]).all() else None

    def cut_after(self, rm: np.ndarray, plane: int) -> np.ndarray | None:
        """GPU-port nodes of ``plane`` cut off once oriented cables ``rm`` are gone (sorted node ids), or None on a tie.

        Nodes whose every cable is in ``rm`` count as cut off; nodes that had
        no cable before are left out (they are in :meth:`base_cut`). Only the
        core parts that held a removed cable are computed again.
        """
        w = self.w
        S, C = w.S, self.C
        rm = np.asarray(rm, np.int64)
        is_att = self.att[rm]
        rm_core = rm[~is_att]
        clabel = self.clabel
        pos = np.searchsorted(self.core_idx, rm_core)
        alone = self._kept_whole(pos) if len(rm_core) else None
        if alone is not None:  # the parts stay whole, but for the nodes the failure left without a core cable
            clabel = clabel.copy()
            clabel[alone] = C + alone
        elif len(rm_core):
            # the core cables of the parts that lose one, less the removed ones
            hit = np.zeros(C, bool)
            hit[unique(clabel[self.cu[pos]])] = True
            sub = hit[clabel[self.cu]]
            sub[pos] = False
            inner = components(C, self.cu[sub], self.cv[sub])
            clabel = np.where(hit[clabel], inner, clabel)
        # GPUs left per pair, and core GPU-port nodes still linked
        pg, ps, pc = self.pairs(plane)
        pc = pc.copy()
        gone = rm[is_att]
        gone_nodes = self.u[gone]
        mine = self.plane_of(gone_nodes) == plane
        gk = self.group(gone_nodes[mine]) * S + (self.v[gone[mine]] - self.G)
        np.subtract.at(pc, np.searchsorted(pg * S + ps, gk), 1)
        cg = self.core_gpu
        lost = np.zeros(len(cg), np.int64)
        for x in (self.u[rm_core], self.v[rm_core]):
            x = x[x < self.G]
            np.add.at(lost, np.searchsorted(cg, x), 1)
        alive = self.gdeg[cg] - lost > 0
        main, _nparts, tie = self.parts(plane, clabel, pc, alive)
        if tie:
            return None
        # attached GPUs of pairs off their group's main part, and the removed ones
        bad_pair = np.zeros(self.groups * S, bool)
        off = clabel[ps] != main[pg]
        if off.any():
            bad_pair[(pg * S + ps)[off]] = True
        cut = [gone_nodes[mine]]
        if off.any():
            sel = self.plane_of(self.att_node) == plane
            nodes = self.att_node[sel]
            cut.append(nodes[bad_pair[self.group(nodes) * S + self.att_sw[sel]]])
        in_p = self.plane_of(cg) == plane
        cut.append(cg[in_p & (~alive | (clabel[S:] != main[self.group(cg)]))])  # clabel[S:]: the core GPU-port nodes'
        return unique(np.concatenate(cut))


def _first_per(key: np.ndarray, value: np.ndarray, size: int) -> np.ndarray:
    """Smallest ``value`` per ``key`` in ``0 .. size-1`` (``iinfo.max`` where none)."""
    out = np.full(size, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(out, key, value)
    return out
