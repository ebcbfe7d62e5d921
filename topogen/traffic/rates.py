"""Max-min fair rates by progressive filling, on a sparse flows x links incidence.

All unfrozen flows grow together (flow ``i`` at ``weight[i]`` times the common
level); when a link fills, every flow crossing it freezes at its rate; repeat
until every flow is frozen. A flow's share of a link (``frac``, 1 for a whole
flow, less under spraying) scales what it puts there.

The incidence comes in parts so that spraying stays linear in size:
``direct`` (flows x links: NIC and HB links, and the middle links of
single-path routing) plus ``factors``, each a pair (``group``, ``matrix``):
flow ``i`` also puts ``matrix[group[i]]`` on the links (the middle links of
its leaf pair's groups under spraying, :mod:`.spray`; the last row of every
matrix is empty, for flows of no group). Each round is a few sparse products;
the rounds are the distinct rate levels, a handful on a symmetric fabric. Only
the links some flow crosses take part.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

EPS = 1e-9


Factors = list[tuple[np.ndarray, sp.csr_matrix]]


def max_min(direct: sp.csr_matrix, capacity: np.ndarray, weight: np.ndarray, factors: Factors = (), alive: np.ndarray | None = None) -> np.ndarray:
    """Rate of every flow (capacity units) under max-min fairness; 0 for flows not ``alive``.

    Works on the flows still growing and the links they cross: whenever half of
    them have frozen, the incidence is cut down to the rest (what is left of each
    link's capacity carried over), so a run with hundreds of rate levels (ecmp's
    collisions) costs about two passes over the full incidence.
    """
    flows = direct.shape[0]
    rate = np.zeros(flows)
    live = np.flatnonzero(np.ones(flows, bool) if alive is None else alive)
    direct = direct.tocsr()
    factors = list(factors)
    residual_all = capacity.astype(np.float64).copy()
    cols = None
    while len(live):
        # cut the incidence down to the live flows and their links
        d = direct[live]
        fs = [(g[live], m) for g, m in factors]
        used_groups = [np.flatnonzero(np.bincount(g, minlength=m.shape[0])) for g, m in fs]
        seen = np.zeros(direct.shape[1], bool)  # the links they cross (a mask: np.unique would sort or hash them all)
        seen[d.indices] = True
        for (g, m), u in zip(fs, used_groups):
            seen[m[u].indices] = True
        cols = np.flatnonzero(seen)
        remap = np.full(direct.shape[1], -1, np.int64)
        remap[cols] = np.arange(len(cols))
        d = sp.csr_matrix((d.data, remap[d.indices], d.indptr), shape=(len(live), len(cols)))
        fsub = []
        for (g, m), u in zip(fs, used_groups):
            mu = m[u]
            gi = np.searchsorted(u, g)
            fsub.append((gi, sp.csr_matrix((mu.data, remap[mu.indices], mu.indptr), shape=(len(u), len(cols)))))
        cap = capacity[cols]
        residual = residual_all[cols]
        dT = d.T.tocsr()
        fT = [(g, m.T.tocsr(), m.shape[0]) for g, m in fsub]
        w0 = weight[live]
        active = np.ones(len(live), bool)
        while active.sum() * 2 > len(live) or (active.any() and len(live) < 4096):
            w = np.where(active, w0, 0.0)
            load = dT @ w
            for g, mT, rows in fT:
                load += mT @ np.bincount(g, weights=w, minlength=rows)
            used = load > EPS
            if not used.any():
                active[:] = False  # flows that cross no link: nothing limits them (cannot happen with a NIC)
                break
            step = np.min(residual[used] / load[used])
            rate[live] += step * w
            residual -= step * load
            full = used & (residual <= EPS * np.maximum(cap, 1.0))
            residual[full] = 0.0
            fl = full.astype(np.float64)
            hit = d @ fl
            for g, m in fsub:
                hit += (m @ fl)[g]
            active &= hit <= 0
        residual_all[cols] = residual
        live = live[active]
    return rate


def link_load(direct: sp.csr_matrix, rate: np.ndarray, links: int, factors: Factors = ()) -> np.ndarray:
    """What flows at ``rate`` put on every link."""
    load = direct.T @ rate
    for g, m in factors:
        load = load + m.T @ np.bincount(g, weights=rate, minlength=m.shape[0])
    return np.asarray(load).reshape(-1)[:links]


def factor(group: np.ndarray, matrix: sp.csr_matrix) -> tuple[np.ndarray, sp.csr_matrix]:
    """A factor with an empty last row for the flows of no group (``group == -1``)."""
    m = sp.vstack([matrix, sp.csr_matrix((1, matrix.shape[1]))]).tocsr()
    return np.where(group < 0, matrix.shape[0], group), m
