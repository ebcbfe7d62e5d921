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


def _compact(direct: sp.csr_matrix, factors: Factors, capacity: np.ndarray) -> tuple[sp.csr_matrix, Factors, np.ndarray]:
    """The same incidence over only the links some flow crosses (columns renumbered)."""
    cols = np.unique(np.concatenate([direct.indices] + [m.indices for _, m in factors]))
    remap = np.full(direct.shape[1], -1, np.int64)
    remap[cols] = np.arange(len(cols))

    def sub(m: sp.csr_matrix) -> sp.csr_matrix:
        return sp.csr_matrix((m.data, remap[m.indices], m.indptr), shape=(m.shape[0], len(cols)))

    return sub(direct), [(g, sub(m)) for g, m in factors], capacity[cols]


def max_min(direct: sp.csr_matrix, capacity: np.ndarray, weight: np.ndarray, factors: Factors = (), alive: np.ndarray | None = None) -> np.ndarray:
    """Rate of every flow (capacity units) under max-min fairness; 0 for flows not ``alive``."""
    flows = direct.shape[0]
    rate = np.zeros(flows)
    active = np.ones(flows, bool) if alive is None else alive.copy()
    direct, factors, capacity = _compact(direct.tocsr(), list(factors), capacity)
    residual = capacity.astype(np.float64).copy()
    directT = direct.T.tocsr()
    factT = [(g, m.T.tocsr(), m.shape[0]) for g, m in factors]
    while active.any():
        w = np.where(active, weight, 0.0)
        load = directT @ w
        for g, mT, rows in factT:
            load += mT @ np.bincount(g, weights=w, minlength=rows)
        used = load > EPS
        if not used.any():
            break  # active flows that cross no link: nothing limits them (cannot happen with a NIC)
        step = np.min(residual[used] / load[used])
        rate += step * w
        residual -= step * load
        full = used & (residual <= EPS * np.maximum(capacity, 1.0))
        residual[full] = 0.0
        fl = full.astype(np.float64)
        hit = direct @ fl
        for g, m in factors:
            hit += (m @ fl)[g]
        active &= hit <= 0
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
