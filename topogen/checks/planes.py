"""The wiring as one graph per plane: its connected parts, and which GPUs are cut off.

Shared by the reachability, bisection and failure checks.
"""

from __future__ import annotations

import numpy as np

from .graphs import components, unique
from .wire import Wire


class PlaneGraph:
    """Port-expanded graph: GPU ``g`` on NIC port ``i`` is node ``i*N + g``, switch ``s`` is ``nics*N + s``.

    GPUs are separate nodes per NIC port because a GPU does not forward between
    its NICs; a plane's graph is then a separate part of one components run.
    NIC port ``i`` is in plane ``i // homes``: one port per plane, or a
    dual-homed pair (``homes`` 2), whose two nodes belong to the same plane, so
    the nodes of plane ``p`` are ``p*homes*N .. (p+1)*homes*N - 1``.
    ``u[j]``, ``v[j]`` are the nodes of oriented cable ``j`` of the :class:`Wire`.
    """

    def __init__(self, w: Wire):
        n, P = w.n, w.nics
        self.w = w
        self.size = P * n + w.S
        nic = w.plane * w.homes + (np.where(w.lo < n, w.lo_port, 0) % w.homes if w.homes > 1 else 0)
        self.u = self.node(w.lo, nic)
        self.v = self.node(w.hi, nic)
        self.label = components(self.size, self.u, self.v)

    def node(self, dev: np.ndarray, nic: np.ndarray) -> np.ndarray:
        n = self.w.n
        p = np.clip(nic, 0, self.w.nics - 1)
        return np.where(dev < n, p * n + dev, self.w.nics * n + (dev - n))

    def nodes(self, plane: int) -> slice:
        """The GPU nodes of ``plane`` (all its NIC ports)."""
        n, h = self.w.n, self.w.homes
        return slice(plane * h * n, (plane + 1) * h * n)

    def _linked(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        n, P = self.w.n, self.w.nics
        out = np.zeros(P * n, bool)
        for x in (u, v):
            out[x[x < P * n]] = True
        return out

    def linked(self) -> np.ndarray:
        """GPU-port nodes holding at least one cable (bool over ``nics*N``)."""
        return self._linked(self.u, self.v)

    def without(self, remove: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Component labels and linked GPU-plane nodes once the cables of mask ``remove`` are gone."""
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
