"""The Enterprise RA single-tier compute fabric (``design: leaf-pair``): its rules and closed form.

NVIDIA's Enterprise Reference Architectures build small clusters (up to 4
scalable units of 4 nodes in the 2-8-9-400 design) without a spine: each plane
is a pair of GPU leaves, ``leaf-a`` and ``leaf-b``, and each node's NICs
alternate between them **A-B-B-A** (node-local NIC 0 on A, 1 and 2 on B, 3 on A,
and again for NICs 4-7). The two leaves are joined by inter-switch links (ISLs):
in the RA as many ISL ports as GPU ports on each leaf, so traffic between the
leaves is not blocked. ``oversubscription`` is read as GPU ports to ISL ports.

Rail-only on a leaf pair has no ISL: a rail lives on one leaf, and traffic
between rails on different leaves crosses the HB domain (NVLink) first, as in
every rail-only fabric.

Port map of each leaf: GPU ports ``p1 .. p<g>`` in node order (a node's NICs on
consecutive ports, as breakout cables land them), then the ISLs ``p<g+1> ..
p<g+i>`` (ISL ``j`` joins the same port number on both leaves), then any
``reserved_leaf_ports``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

import numpy as np

SIDES = ("a", "b")


def node_sides(gpus_per_node: int) -> np.ndarray:
    """The leaf (0 = A, 1 = B) of each node-local NIC: A-B-B-A, repeated (``[0, 1, 1, 0, 0, 1, 1, 0]`` for 8)."""
    j = np.arange(gpus_per_node)
    return ((j + 1) // 2) % 2


def rail_sides(hb_domain: int, gpus_per_node: int) -> np.ndarray:
    """The leaf of each rail (rank in the HB domain): its node-local NIC's side."""
    return node_sides(gpus_per_node)[np.arange(hb_domain) % gpus_per_node]


@dataclass(frozen=True, slots=True)
class LeafPair:
    """Closed form of one plane of a leaf pair.

    Attributes:
        gpu_ports: GPU ports on each leaf (half the GPUs).
        isls: inter-switch links between the two leaves (0 in rail-only).
        reserved: ports kept free on each leaf (``reserved_leaf_ports``).
        radix: ports of each leaf.
    """

    gpu_ports: int
    isls: int
    reserved: int
    radix: int

    @property
    def ports_needed(self) -> int:
        return self.gpu_ports + self.isls + self.reserved

    @property
    def fits(self) -> bool:
        return self.ports_needed <= self.radix

    def max_gpus(self, down: int, up: int) -> int:
        """The most GPUs one pair holds at this radix and GPU:ISL ratio ``down:up`` (``up`` 0: no ISL)."""
        free = self.radix - self.reserved
        g = free * down // (down + up) if up else free
        while g > 0 and g + (ceil(g * up / down) if up else 0) > free:
            g -= 1
        return 2 * g


def plan(gpus: int, radix: int, ratio: str, rail_only: bool, reserved: int = 0) -> LeafPair:
    """One plane's leaf pair for ``gpus`` GPUs on ``radix``-port leaves, GPU:ISL ports ``ratio`` (``"1:1"``)."""
    d, u = (int(x) for x in ratio.split(":"))
    g = gpus // 2
    return LeafPair(g, 0 if rail_only else ceil(g * u / d), reserved, radix)
