"""Max-min fair rates by progressive filling, on a sparse flows x links incidence.

All unfrozen flows grow together (flow ``i`` at ``weight[i]`` times the common
level); when a link fills, every flow crossing it freezes at its rate; repeat
until every flow is frozen. A flow's share of a link (``frac``, 1 for a whole
flow, less under spraying) scales what it puts there.

The incidence comes in two parts so that spraying stays linear in size:
``direct`` (flows x links: NIC and HB links, and the middle links of
single-path routing) and, optionally, ``cls`` x ``middle`` (each flow's class,
and classes x links: the middle links of a leaf pair under spraying, shared by
every flow of that pair). Each round is two sparse products; the rounds are the
distinct rate levels, a handful on a symmetric fabric.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

EPS = 1e-9


def max_min(direct: sp.csr_matrix, capacity: np.ndarray, weight: np.ndarray, cls: np.ndarray | None = None, middle: sp.csr_matrix | None = None, alive: np.ndarray | None = None) -> np.ndarray:
    """Rate of every flow (capacity units) under max-min fairness; 0 for flows not ``alive``."""
    flows = direct.shape[0]
    rate = np.zeros(flows)
    active = np.ones(flows, bool) if alive is None else alive.copy()
    residual = capacity.astype(np.float64).copy()
    directT = direct.T.tocsr()
    middleT = middle.T.tocsr() if middle is not None else None
    classes = middle.shape[0] if middle is not None else 0
    while active.any():
        w = np.where(active, weight, 0.0)
        load = directT @ w
        if middleT is not None:
            load += middleT @ np.bincount(cls, weights=w, minlength=classes)
        used = load > EPS
        if not used.any():
            break  # active flows that cross no link: nothing limits them (cannot happen with a NIC)
        step = np.min(residual[used] / load[used])
        rate += step * w
        residual -= step * load
        full = used & (residual <= EPS * np.maximum(capacity, 1.0))
        residual[full] = 0.0
        hit = direct @ full.astype(np.float64)
        if middle is not None:
            hit += (middle @ full.astype(np.float64))[cls]
        active &= hit <= 0
    return rate


def link_load(direct: sp.csr_matrix, rate: np.ndarray, links: int, cls: np.ndarray | None = None, middle: sp.csr_matrix | None = None) -> np.ndarray:
    """What flows at ``rate`` put on every link."""
    load = direct.T @ rate
    if middle is not None:
        load = load + middle.T @ np.bincount(cls, weights=rate, minlength=middle.shape[0])
    return np.asarray(load).reshape(-1)[:links]
