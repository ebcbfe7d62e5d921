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

    Progressive filling at the level ``x`` (flow ``i`` at ``weight[i] * x``), done
    by rounds of *local minima*: a link's fill level is its residual capacity over
    the weight of the growing flows on it. A link whose level is no higher than
    that of any link sharing a growing flow with it fills at exactly that level
    (freezing flows elsewhere only slows other links' filling, never its own), so
    every such link fills in the same round and its flows freeze there. A round
    is a few sparse products over the flows still growing; the rounds are the
    longest chain of links each filling after a neighbour, not the number of
    distinct rate levels (ecmp with several queue pairs per pair has tens of
    thousands of those at 131,072 GPUs, and a few tens of rounds).
    """
    flows = direct.shape[0]
    rate = np.zeros(flows)
    direct = _no_zeros(direct.tocsr())
    factors = [(g, _no_zeros(m.tocsr())) for g, m in factors]
    factorsT = [m.T.tocsr() for _, m in factors]
    residual = capacity.astype(np.float64).copy()
    live = np.flatnonzero(np.ones(flows, bool) if alive is None else alive)
    while len(live):
        d = direct[live]
        dT = d.T.tocsr()
        fs = [g[live] for g, _ in factors]
        w = weight[live]
        load = dT @ w
        for g, (_, m) in zip(fs, factors):
            load += m.T @ np.bincount(g, weights=w, minlength=m.shape[0])
        level = np.full(len(load), np.inf)
        on = load > 0
        level[on] = np.maximum(residual[on], 0.0) / load[on]
        fmin = _row_min(d, level)  # each flow: the lowest level of the links it crosses
        for g, (_, m) in zip(fs, factors):
            fmin = np.minimum(fmin, _row_min(m, level)[g])
        nmin = _row_min(dT, fmin)  # each link: the lowest of those over its flows
        for g, (_, m), mT in zip(fs, factors, factorsT):
            gmin = np.full(m.shape[0], np.inf)
            np.minimum.at(gmin, g, fmin)
            nmin = np.minimum(nmin, _row_min(mT, gmin))
        local = (level <= nmin) & on
        lf = local.astype(np.float64)
        hit = d @ lf
        for g, (_, m) in zip(fs, factors):
            hit += (m @ lf)[g]
        frozen = (hit > 0) & np.isfinite(fmin)
        r = np.where(frozen, w * np.where(np.isfinite(fmin), fmin, 0.0), 0.0)
        rate[live[frozen]] = r[frozen]
        residual -= dT @ r
        for g, (_, m) in zip(fs, factors):
            residual -= m.T @ np.bincount(g, weights=r, minlength=m.shape[0])
        residual[local] = 0.0
        live = live[~frozen & np.isfinite(fmin)]  # a flow on no link with capacity: nothing to share, rate 0
    return rate


def _no_zeros(m: sp.csr_matrix) -> sp.csr_matrix:
    """``m`` without stored zeros (a zero share is no crossing); copied only when it has some."""
    if m.nnz and not m.data.all():
        m = m.copy()
        m.eliminate_zeros()
    return m


def _row_min(m: sp.csr_matrix, values: np.ndarray) -> np.ndarray:
    """Per row of ``m``, the least of ``values`` over its stored columns (inf for an empty row)."""
    out = np.full(m.shape[0], np.inf)
    starts = m.indptr[:-1]
    full = np.flatnonzero(m.indptr[1:] > starts)
    if len(full):
        out[full] = np.minimum.reduceat(values[m.indices], starts[full])
    return out


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
