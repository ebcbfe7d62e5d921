"""Generated fabrics are non-blocking: max-flow across many cuts equals the smaller side.

Partly filled pods are where a careless striping loses bisection (a pod missing some
positions reaches only some top-tier stripes); these cases cover 2- to 4-tier fabrics
with partial fills, both provisioning policies, and several cuts each.
"""

from __future__ import annotations

import random

import networkx as nx
import pytest

from topogen.fabric import clos
from topogen.spec.cluster import build_spec

CASES = [
    # (arch, K, radix, domains)
    ("rail-only", 1, 8, 38),
    ("rail-only", 1, 8, 71),
    ("rail-only", 1, 8, 137),
    ("rail-only", 1, 12, 116),
    ("rail-only", 1, 8, 250),  # 4 tiers
    ("rail-only", 2, 8, 45),
    ("rail-optimized", 8, 8, 17),
    ("rail-optimized", 4, 8, 9),
    ("rail-optimized", 3, 8, 7),
    ("rail-optimized", 8, 16, 21),
    ("rail-optimized", 2, 8, 40),
]


def flow_graph(fabric, gbps: bool = False):
    """Both directions of every cable: capacity 1 per cable, or its speed in Gb/s."""
    g = nx.DiGraph()
    L = fabric.links
    caps = L.a_speed.tolist() if gbps else [1] * len(L)
    for a, z, c in zip(L.a_dev.tolist(), L.z_dev.tolist(), caps):
        for u, v in ((a, z), (z, a)):
            if g.has_edge(u, v):
                g[u][v]["capacity"] += c
            else:
                g.add_edge(u, v, capacity=c)
    return g


def cuts(fabric):
    """Cuts within one connected network: all GPUs (rail-optimized) or rail 0 (rail-only)."""
    n, k = fabric.gpus, fabric.hb_domain
    members = list(range(n)) if fabric.arch == "rail-optimized" else list(range(0, n, k))
    rng = random.Random(7)
    half = len(members) // 2
    yield "first-half", set(members[:half])
    yield "alternate", set(members[::2])
    yield "first-three", set(members[:3])
    for i in range(3):
        yield f"random-{i}", set(rng.sample(members, rng.randint(1, len(members) - 1)))


def cut_flows(fabric, gbps: bool = False, per_gpu: int = 1):
    """(cut name, max-flow, |A|, |B|) for each cut of :func:`cuts`, one unit of capacity per cable.

    With ``gbps`` capacities are the cables' speeds and each GPU injects its NIC's Gb/s
    (the flow of a non-blocking fabric is then the smaller side x the GPU-leaf speed).
    ``per_gpu``: the NIC ports a GPU injects through (2 when dual-homed)."""
    base = flow_graph(fabric, gbps)
    inj = (fabric.spec.speed_at(1) if gbps else 1) * per_gpu
    n, k = fabric.gpus, fabric.hb_domain
    members = set(range(n)) if fabric.arch == "rail-optimized" else set(range(0, n, k))
    for name, side_a in cuts(fabric):
        side_b = members - side_a
        g = base.copy()
        for v in side_a:
            g.add_edge("s", v, capacity=inj)
        for v in side_b:
            g.add_edge(v, "t", capacity=inj)
        yield name, nx.maximum_flow_value(g, "s", "t"), len(side_a), len(side_b)


@pytest.mark.parametrize("provision", ["full", "minimal"])
@pytest.mark.parametrize("arch,k,radix,domains", CASES, ids=lambda c: str(c))
def test_full_bisection(arch, k, radix, domains, provision):
    spec = build_spec({"gpus": k * domains, "hb_domain": k, "radix": radix, "arch": arch, "provision": provision})
    for name, flow, a, b in cut_flows(clos.generate(spec, arch)):
        assert flow == min(a, b), name
