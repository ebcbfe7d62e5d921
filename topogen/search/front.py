"""Pareto fronts: the designs no other design beats on every objective (all minimised).

:func:`non_dominated` sorts the points lexicographically, so a point can only be
dominated by one before it, and compares each point with the front found so far
(a point dominated by anything is dominated by a front point): linear in the
points times the front's size.

With a ``slack`` ε per objective, :func:`near_front` keeps every point that no
front point beats by more than ε on every objective (f·(1+ε) ≤ p everywhere,
< somewhere): the designs whose closed-form estimates are close enough to the
front that the explicit figures might put them on it. ε-dominance by any point
implies ε-dominance by a front point, so comparing with the front suffices.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _matrix(values: Sequence[Sequence[float]]) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).reshape(len(values), -1)


def non_dominated(values: Sequence[Sequence[float]]) -> list[int]:
    """Indices of the points no other point dominates (≤ on every objective, < on one), in input order.

    Points with identical values are all kept (neither dominates the other).
    """
    v = _matrix(values)
    if not len(v):
        return []
    order = np.lexsort(v.T[::-1])  # first objective first
    front: list[int] = []
    fv = np.empty((0, v.shape[1]))
    for i in order.tolist():
        p = v[i]
        if len(fv) and bool(np.any(np.all(fv <= p, axis=1) & np.any(fv < p, axis=1))):
            continue
        front.append(i)
        fv = np.vstack([fv, p])
    return sorted(front)


def near_front(values: Sequence[Sequence[float]], slack: Sequence[float]) -> list[int]:
    """Indices of the points that no front point beats by more than ``slack`` (fractions per objective)."""
    v = _matrix(values)
    front = non_dominated(values)
    if not front:
        return []
    fv = v[front] * (1.0 + np.asarray(slack, dtype=np.float64))
    keep = []
    for i in range(len(v)):
        p = v[i]
        if bool(np.any(np.all(fv <= p, axis=1) & np.any(fv < p, axis=1))):
            continue
        keep.append(i)
    return keep


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` is no worse than ``b`` on every objective and better on one."""
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))
