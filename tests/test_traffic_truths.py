"""`topogen simulate` against independent truths, over grids of fabric shapes.

* a non-blocking Clos gives every flow of a shift its full line rate under spray and dmodk;
* leaf oversubscription R:1 gives flows that all leave their leaf 1/R;
* one of S spines down under spray leaves (S-1)/S for all-inter-leaf traffic;
* ecmp's mean rate matches a balls-into-bins Monte Carlo written here, not the simulator's;
* the throughput of one-way traffic between two halves equals networkx's max-flow where
  spraying is optimal (a symmetric fabric, healthy or with a spine down).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from topogen.fabric import clos
from topogen.spec.cluster import build_spec
from topogen.traffic import network
from topogen.traffic.failures import Failure
from topogen.traffic.patterns import Pairs, parse
from topogen.traffic.simulate import run


def spec_for(n, k, r, **kw):
    return build_spec({"gpus": n, "hb_domain": k, "radix": r, **kw})


def leaf_domains(fabric) -> int:
    """HB domains under one rail leaf (GPUs per leaf of a rail)."""
    L = fabric.links
    gl = L.a_dev < fabric.gpus
    return int(np.bincount(L.z_dev[gl] - fabric.gpus).max())


NONBLOCKING = [
    (64, 8, 16),  # 2 tiers, 2 parallel links leaf-spine
    (128, 8, 16),  # 2 tiers, one link per spine
    (256, 8, 16),  # 3 tiers
    (512, 8, 16),  # 3 tiers, two pods
    (1024, 8, 32),  # 2 tiers at radix 32
    (96, 4, 8),  # partial fill, 3 tiers
]


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("n,k,r", NONBLOCKING)
@pytest.mark.parametrize("routing", ["spray", "dmodk"])
def test_shift_full_rate_on_nonblocking(arch, n, k, r, routing):
    spec = spec_for(n, k, r, arch=arch)
    f = clos.generate(spec, arch)
    d = n // k
    for s in sorted({1, 2, d // 2, d - 1, leaf_domains(f) % d or 1} - {0}):
        res = run(f, parse(f"shift:{s}"), routing, None)
        assert res.unroutable == 0
        assert res.min_rate_fraction == pytest.approx(1.0), (s, res.busiest[:2])


@pytest.mark.parametrize("ratio,R,r", [("3:1", 3, 16), ("7:1", 7, 16), ("2:1", 2, 24), ("5:3", 5 / 3, 16), ("3:1", 3, 32)])
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("routing", ["spray", "dmodk"])
def test_oversubscription_gives_one_over_r(ratio, R, r, arch, routing):
    """Shift by the domains of a leaf: every flow leaves its leaf, so the leaf uplinks share out u/d."""
    probe = spec_for(64, 8, r, oversubscription=ratio)
    down = r - probe.leaf_up
    k = 4
    n = down * k * 2  # two full leaves per rail
    spec = spec_for(n, k, r, oversubscription=ratio, arch=arch, rail_packing="dedicated")
    f = clos.generate(spec, arch)
    per_leaf = leaf_domains(f)
    assert per_leaf == down
    res = run(f, parse(f"shift:{per_leaf}"), routing, None)
    if routing == "spray":
        assert res.min_rate_fraction == pytest.approx(1 / R)
        assert res.mean_rate_fraction == pytest.approx(1 / R)
    else:  # one path per flow: no flow beats the leaf's share on average, none is starved
        assert res.mean_rate_fraction <= 1 / R + 1e-9
        assert res.min_rate_fraction > 0


@pytest.mark.parametrize("n,k,r", [(128, 8, 16), (512, 16, 32), (512, 8, 32), (32, 4, 8), (256, 8, 32)])
@pytest.mark.parametrize("which", [0, -1])
def test_one_spine_down_spray(n, k, r, which):
    spec = spec_for(n, k, r, arch="rail-optimized")
    f = clos.generate(spec, "rail-optimized")
    assert f.tiers == 2
    spines = [s.name for s in f.switches if s.tier == 2]
    S = len(spines)
    per_leaf = leaf_domains(f)
    res = run(f, parse(f"shift:{per_leaf}"), "spray", None, failure=Failure((spines[which],)))
    assert res.min_rate_fraction == pytest.approx((S - 1) / S)
    assert res.mean_rate_fraction == pytest.approx((S - 1) / S)


def balls_in_bins_mean(balls: int, bins: int, q: int, trials: int, rng) -> float:
    """Mean pair rate when each of ``balls`` pairs throws ``q`` sub-flows into ``bins`` links (independent of topogen)."""
    out = []
    for _ in range(trials):
        choice = rng.integers(0, bins, size=(balls, q))
        load = np.bincount(choice.ravel(), minlength=bins)
        sub = np.minimum(1.0 / q, 1.0 / load[choice])  # a link shared by c sub-flows gives each 1/c; a NIC port 1/q
        out.append((q * sub.min(axis=1)).mean())
    return float(np.mean(out))


@pytest.mark.parametrize("q", [1, 2, 4])
@pytest.mark.parametrize("n,k,r", [(128, 8, 16), (512, 8, 32)])
def test_ecmp_matches_balls_into_bins(q, n, k, r):
    """Shift by one group: each leaf's flows all go to one other leaf, over one link per spine (m balls, u bins)."""
    spec = spec_for(n, k, r, arch="rail-optimized")
    f = clos.generate(spec, "rail-optimized")
    per_leaf = leaf_domains(f)
    up = r // 2
    spines = sum(1 for s in f.switches if s.tier == 2)
    assert spines == up  # one link from each leaf to each spine: a bin is a spine
    sims = [run(f, parse(f"shift:{per_leaf}"), "ecmp", None, flows_per_pair=q, key=key).mean_rate_fraction for key in range(12)]
    mc = balls_in_bins_mean(per_leaf, up, q, 4000, np.random.default_rng(7))
    assert np.mean(sims) == pytest.approx(mc, rel=0.03)
    assert min(sims) < 1.0  # collisions happen: ecmp is not spray


def max_flow(fabric, sources, sinks) -> float:
    """networkx max-flow (Gb/s) from GPUs ``sources`` to GPUs ``sinks`` on the cables as directed pairs."""
    g = nx.DiGraph()
    L = fabric.links
    for a, z, sa, sz in zip(L.a_dev.tolist(), L.z_dev.tolist(), L.a_speed.tolist(), L.z_speed.tolist()):
        c = min(sa, sz)
        for u, v in ((a, z), (z, a)):
            if g.has_edge(u, v):
                g[u][v]["capacity"] += c
            else:
                g.add_edge(u, v, capacity=c)
    for s in sources:
        g.add_edge("S", int(s), capacity=float("inf"))
    for t in sinks:
        g.add_edge(int(t), "T", capacity=float("inf"))
    return nx.maximum_flow_value(g, "S", "T")


@pytest.mark.parametrize(
    "n,k,r,ratio,fail",
    [(64, 8, 16, "1:1", False), (128, 8, 16, "1:1", False), (96, 4, 16, "3:1", False), (256, 8, 16, "1:1", False), (512, 8, 16, "1:1", False),
     (128, 8, 16, "1:1", True), (96, 4, 16, "3:1", True), (512, 8, 32, "1:1", True), (32, 4, 8, "1:1", True)],
)
def test_half_to_half_matches_max_flow(n, k, r, ratio, fail):
    """One-way traffic from one half of the domains to the other; with ``fail``, a top switch of a 2-tier fabric down.

    Spraying is optimal only where the fabric stays symmetric for the leaves: a spine of a
    2-tier Clos (every leaf loses the same share). A core of a 3-tier Clos is not such a case
    (the spines above it lose half their uplinks while the others keep all; an even split at
    the leaf then overloads them), so it is not compared here.
    """
    spec = spec_for(n, k, r, arch="rail-optimized", oversubscription=ratio)
    f = clos.generate(spec, "rail-optimized")
    d = n // k
    g = np.arange(n)
    a = g[g // k < d // 2]
    b = (a // k + d // 2) * k + a % k
    failure = Failure(([s.name for s in f.switches if s.tier == f.tiers][0],)) if fail else None
    res = run(f, parse("matrix:x"), "spray", None, failure=failure, matrix=Pairs(a, b, np.ones(len(a))))
    from topogen.traffic.failures import apply

    cut = apply(f, failure) if failure else f
    assert res.pair_rate.sum() == pytest.approx(max_flow(cut, a, b))


def test_bitsets_of_a_three_tier_fabric():
    """Every switch has below it exactly the leaves that networkx finds by walking down its cables."""
    f = clos.generate(spec_for(256, 8, 16), "rail-optimized")
    net = network.build(f, 1.0)
    n = f.gpus
    g = nx.DiGraph()
    L = f.links
    sw = L.a_dev >= n
    g.add_edges_from(zip((L.z_dev[sw] - n).tolist(), (L.a_dev[sw] - n).tolist()))
    leaves = np.flatnonzero(net.leaf_of_switch >= 0)
    for u in range(len(f.switches)):
        want = {int(net.leaf_of_switch[x]) for x in (nx.descendants(g, u) | {u}) & set(leaves.tolist())} if u in g else ({int(net.leaf_of_switch[u])} if net.leaf_of_switch[u] >= 0 else set())
        got = {x for x in range(len(leaves)) if net.has_leaf(net.below, np.array([u]), np.array([x]))[0]}
        assert got == want


def _pair_vectors_factored(net, src, dst):
    from topogen.traffic import spray

    lv, dead = spray.levels(net, src, dst)
    total = None
    for x in lv:
        m = sp.vstack([x.matrix, sp.csr_matrix((1, x.matrix.shape[1]))]).tocsr()
        part = m[np.where(x.group < 0, x.matrix.shape[0], x.group)]
        total = part if total is None else total + part
    return (total if total is not None else sp.csr_matrix((len(src), net.links))).toarray(), dead


@pytest.mark.parametrize(
    "spec_kw,arch,failure",
    [
        ({"gpus": 256, "hb_domain": 8, "radix": 16}, "rail-optimized", None),
        ({"gpus": 256, "hb_domain": 8, "radix": 16}, "rail-optimized", Failure((), 5.0)),
        ({"gpus": 256, "hb_domain": 8, "radix": 16}, "rail-optimized", Failure(("core-00",))),
        ({"gpus": 256, "hb_domain": 8, "radix": 16}, "rail-optimized", Failure(("spine-b1-3",))),
        ({"gpus": 512, "hb_domain": 8, "radix": 16}, "rail-optimized", Failure((), 2.0)),
        ({"gpus": 1024, "hb_domain": 8, "radix": 8}, "rail-optimized", Failure((), 1.0)),
        ({"gpus": 1024, "hb_domain": 8, "radix": 8}, "rail-only", Failure((), 3.0)),
        ({"gpus": 256, "hb_domain": 8, "radix": 16, "planes": 2}, "rail-optimized", Failure((), 3.0)),
        ({"gpus": 256, "hb_domain": 8, "radix": 16, "homing": "dual", "nic_ports": 2}, "rail-optimized", Failure((), 3.0)),
        ({"gpus": 512, "hb_domain": 8, "radix": 16, "oversubscription": "3:1"}, "rail-optimized", Failure((), 4.0)),
    ],
)
def test_factored_spray_equals_pair_by_pair(spec_kw, arch, failure):
    """:mod:`topogen.traffic.spray` (groups, merged) puts exactly what routing each leaf pair alone puts on every link."""
    from topogen.traffic.failures import apply
    from topogen.traffic.routing import route

    f = clos.generate(build_spec({**spec_kw, "arch": arch}), arch)
    if failure:
        f = apply(f, failure, key=4)
    net = network.build(f, 1.0)
    leaves = np.flatnonzero(net.leaf_of_switch >= 0)
    rng = np.random.default_rng(1)
    src = rng.choice(leaves, 400)
    dst = net.leaf_of_switch[rng.choice(leaves, 400)]
    got, dead = _pair_vectors_factored(net, src, dst)
    seg = route(net, src, dst, "spray")
    want = sp.csr_matrix((seg.frac, (seg.row, seg.link)), shape=(len(src), net.links)).toarray()
    assert np.array_equal(dead, seg.dead)
    ok = ~dead
    assert np.allclose(got[ok], want[ok], atol=1e-9)
