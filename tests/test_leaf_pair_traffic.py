"""Traffic on design: leaf-pair against independent truths, over a grid of GPUs, gpus_per_node, planes and ratios.

The closed form every truth here comes from: a pair has ``g = N/2`` GPU ports
and ``I`` ISLs per plane. Every HB domain has half its GPUs on each leaf
(A-B-B-A), so of each GPU's ``N - K`` all-to-all partners across the network
half are on the other leaf: at line rate ``N/4`` NIC lines cross the ISLs
each way, so the slowest pair of a sprayed all-to-all gets ``min(1, 4I/N)``
of its line rate. A ring all-reduce is rail-aligned (rank r to rank r), and a
rank lives on one leaf, so it never crosses an ISL.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from topogen.fabric import clos
from topogen.spec import leafpair
from topogen.spec.cluster import build_spec
from topogen.traffic import network
from topogen.traffic.failures import Failure, apply
from topogen.traffic.patterns import parse
from topogen.traffic.simulate import run
from topogen.util.errors import InputError

HB = 1e6  # an HB domain that never limits: the network's figures alone

# (gpus, hb_domain, gpus_per_node, radix)
SHAPES = [(16, 8, 8, 64), (32, 8, 4, 64), (64, 8, 2, 128), (48, 4, 4, 64), (128, 8, 8, 256), (24, 4, 2, 32)]
GRID = [(*s, o, p) for s in SHAPES for o in ("1:1", "2:1", "3:1") for p in (1, 2)]


def fabric(n, k, gpn, r, ratio="1:1", planes=1, arch="rail-optimized"):
    spec = build_spec({"name": "lp", "design": "leaf-pair", "arch": arch, "gpus": n, "hb_domain": k, "gpus_per_node": gpn, "radix": r, "oversubscription": ratio, "planes": planes})
    return clos.generate(spec, arch)


def isls(n, r, ratio):
    return leafpair.plan(n, r, ratio, False).isls


def isl_load(res) -> float:
    """Highest utilisation of an ISL in a run (0 when none carries anything)."""
    tier = [t for t, name in res.tier_names.items() if name == "leaf-leaf"]
    sel = res.link_tier == tier[0] if tier else np.zeros(len(res.link_tier), bool)
    return float(res.link_utilisation[sel].max()) if sel.any() else 0.0


@pytest.mark.parametrize("n,k,gpn,r,ratio,planes", GRID)
def test_network_has_the_isls_as_lateral_links(n, k, gpn, r, ratio, planes):
    f = fabric(n, k, gpn, r, ratio, planes)
    net = network.build(f, HB)
    assert net.cables == len(f.links) + len(f.isls) == len(f.cable_table())
    assert net.links == 2 * net.cables + 2 * n
    isl = np.arange(2 * len(f.links), 2 * net.cables)
    assert (net.direction(isl) == "across").all() and (net.tier[isl] == net.isl_tier).all()
    assert net.tier_names()[net.isl_tier] == "leaf-leaf"
    # each leaf's upward links are exactly its ISLs, to its partner; each leaf reaches both leaves of its plane, no other
    for i, sw in enumerate(f.switches):
        up = net.up_link[net.up_ptr[i] : net.up_ptr[i + 1]]
        assert len(up) == isls(n, r, ratio)
        partner = net.link_head[up] - n
        assert (partner == (i ^ 1)).all()
        leaves = {j for j in range(len(f.switches)) if net.has_leaf(net.reach, np.array([i]), np.array([net.leaf_of_switch[j]]))[0]}
        assert leaves == {i, i ^ 1}
    assert not net.layered
    names = net.link_names(np.array([2 * len(f.links), 2 * len(f.links) + 1]))
    port = leafpair.plan(n, r, ratio, False).gpu_ports + 1
    prefix = "pl0-" if planes > 1 else ""
    assert names == [f"{prefix}leaf-a:p{port} -> {prefix}leaf-b:p{port}", f"{prefix}leaf-b:p{port} -> {prefix}leaf-a:p{port}"]


@pytest.mark.parametrize("n,k,gpn,r,ratio,planes", GRID)
@pytest.mark.parametrize("routing", ["spray", "ecmp", "dmodk"])
def test_ring_allreduce_never_crosses_an_isl(n, k, gpn, r, ratio, planes, routing):
    res = run(fabric(n, k, gpn, r, ratio, planes), parse("ring-allreduce"), routing, HB)
    assert res.min_rate_fraction == pytest.approx(1.0)
    assert isl_load(res) == 0.0 and res.unroutable == 0


@pytest.mark.parametrize("n,k,gpn,r,ratio,planes", GRID)
def test_sprayed_alltoall_follows_the_closed_form(n, k, gpn, r, ratio, planes):
    res = run(fabric(n, k, gpn, r, ratio, planes), parse("alltoall"), "spray", HB)
    want = min(1.0, 4 * isls(n, r, ratio) / n)
    assert res.unroutable == 0
    assert res.min_rate_fraction == pytest.approx(want)
    assert res.mean_rate_fraction == pytest.approx(1.0)  # what the ISLs take from the cross pairs, the same-leaf pairs get back
    assert isl_load(res) == pytest.approx(min(1.0, n / (4 * isls(n, r, ratio))))  # N/4 lines offered to I ISLs each way
    if ratio == "1:1":
        assert isl_load(res) == pytest.approx(0.5)  # as many ISLs as GPU ports, half the traffic crosses


@pytest.mark.parametrize("n,k,gpn,r", SHAPES)
@pytest.mark.parametrize("planes", [1, 2])
def test_dmodk_gives_each_destination_its_own_isl_at_1to1(n, k, gpn, r, planes):
    """D-mod-K picks ISL ``host mod I``: at 1:1 the other leaf's hosts are I consecutive numbers, one per ISL."""
    f = fabric(n, k, gpn, r, "1:1", planes)
    res = run(f, parse("alltoall"), "dmodk", HB)
    assert res.min_rate_fraction == pytest.approx(1.0)
    perm = run(f, parse("permutation"), "dmodk", HB)
    assert isl_load(perm) <= 1.0 + 1e-9 and perm.min_rate_fraction == pytest.approx(1.0)


@pytest.mark.parametrize("n,k,gpn,r", SHAPES)
@pytest.mark.parametrize("ratio", ["1:1", "2:1", "3:1"])
def test_an_isl_down_leaves_the_others_sprayed(n, k, gpn, r, ratio):
    f = fabric(n, k, gpn, r, ratio)
    port = leafpair.plan(n, r, ratio, False).gpu_ports + 1
    res = run(f, parse("alltoall"), "spray", HB, failure=Failure((f"leaf-a:p{port}",)))
    i = isls(n, r, ratio) - 1
    assert res.unroutable == (0 if i else n * (n - k) // 2)
    if i:
        assert res.min_rate_fraction == pytest.approx(min(1.0, 4 * i / n))


@pytest.mark.parametrize("n,k,gpn,r", SHAPES)
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_a_leaf_down_cuts_exactly_its_gpus(n, k, gpn, r, arch):
    """rail-optimized: a pair dies when either end is on B; rail-only relays onto the destination's rank, so when the destination is."""
    f = fabric(n, k, gpn, r, arch=arch)
    res = run(f, parse("alltoall"), "spray", HB, failure=Failure(("leaf-b",)))
    side = leafpair.node_sides(gpn)[np.arange(n) % gpn]
    src = np.repeat(np.arange(n), n)
    dst = np.tile(np.arange(n), n)
    net = (src // k != dst // k)
    dead = (side[dst] == 1) | ((side[src] == 1) if arch == "rail-optimized" else False)
    assert res.unroutable == int((net & dead).sum())
    assert 0 < res.mean_rate_fraction <= 1.0 + 1e-9
    assert isl_load(res) == 0.0


@pytest.mark.parametrize("n,k,gpn,r", SHAPES)
def test_rail_only_pair_has_no_isl_and_runs_alltoall_at_line_rate(n, k, gpn, r):
    f = fabric(n, k, gpn, r, arch="rail-only")
    assert len(f.isls) == 0
    res = run(f, parse("alltoall"), "spray", HB)
    assert res.min_rate_fraction == pytest.approx(1.0) and "leaf-leaf" not in res.tier_names.values()


@pytest.mark.parametrize("n,k,gpn,r,ratio,planes", [g for g in GRID if g[0] >= 32])
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_aggregated_alltoall_gives_the_exact_figures(n, k, gpn, r, ratio, planes, arch):
    """The leaf-pair and leaf-group aggregations used at scale, forced at this size, against every GPU pair."""
    f = fabric(n, k, gpn, r, ratio, planes, arch)
    exact = run(f, parse("alltoall"), "spray", HB)
    for leaf_pairs in (1 << 40, 0):
        agg = run(f, parse("alltoall"), "spray", HB, exact_gpus=0, leaf_pairs=leaf_pairs)
        assert agg.aggregation == ("leaf-pair" if leaf_pairs else "leaf-group-pair")
        assert agg.min_rate_fraction == pytest.approx(exact.min_rate_fraction)
        assert agg.mean_rate_fraction == pytest.approx(exact.mean_rate_fraction)
        assert agg.unroutable == 0


def test_failing_a_leaf_takes_its_isls():
    f = fabric(32, 8, 8, 64, "2:1")
    g = apply(f, Failure(("leaf-a",)))
    assert len(g.isls) == 0 and len(g.links) == len(f.links) - 16
    g = apply(f, Failure(("leaf-b:p17",)))
    assert len(g.isls) == len(f.isls) - 1 and len(g.links) == len(f.links)
    g = apply(f, Failure((), 100.0))
    assert len(g.isls) == 0 and len(g.links) == len(f.links)  # GPU cables are never drawn


def test_opensm_routing_needs_the_isls_in_the_export():
    """OpenSM routes the ibnetdiscover export: a pair whose export lacks the ISLs is refused (exit 2), with them it is routed."""
    from topogen.exports.infiniband import ibnetdiscover as ib
    from topogen.exports.infiniband import opensm_routes
    from topogen.traffic import lft

    f = fabric(32, 8, 8, 64)
    exported = any((sub.links >= len(f.links)).any() for sub in ib.subnets(f))
    if exported:
        opensm_routes.check(f, lft.parse("opensm:ftree"))  # routed (OpenSM falls back from ftree on a pair, and says so)
    else:
        with pytest.raises(InputError) as e:
            opensm_routes.check(f, lft.parse("opensm:ftree"))
        assert e.value.problems[0].path == "routing" and "does not list them" in e.value.problems[0].message
    opensm_routes.check(fabric(32, 8, 8, 64, arch="rail-only"), lft.parse("opensm:ftree"))  # no ISL: routed as any rail-only fabric


@pytest.mark.skipif(shutil.which("ibsim") is None or shutil.which("opensm") is None, reason="ibsim-utils/opensm not installed")
@pytest.mark.parametrize("n,k,gpn,r,ratio,planes", [(32, 8, 8, 64, "1:1", 1), (48, 4, 2, 64, "2:1", 2)])
def test_opensm_routes_the_pair_over_its_isls_when_the_export_lists_them(n, k, gpn, r, ratio, planes):
    """With the ISLs in the export, OpenSM's tables reach every GPU, in at most two switches, and use the ISLs."""
    from topogen.exports.infiniband import ibnetdiscover as ib
    from topogen.exports.infiniband import opensm_routes

    f = fabric(n, k, gpn, r, ratio, planes)
    if not any((sub.links >= len(f.links)).any() for sub in ib.subnets(f)):
        pytest.skip("the ibnetdiscover export of this tree does not list the ISLs")
    res = run(f, parse("alltoall"), "opensm:minhop", HB, routes=opensm_routes.tables)
    assert res.unroutable == 0 and isl_load(res) > 0
    perm = run(f, parse("shift:1"), "opensm:minhop", HB, routes=opensm_routes.tables)
    assert perm.unroutable == 0 and perm.min_rate_fraction == pytest.approx(1.0)


def test_build_traffic_overview_takes_an_isl_down():
    """topogen build --traffic on a pair: the failure case is its first ISL (a spine's counterpart), rail-only has none."""
    from topogen import pipeline
    from topogen.traffic import overview

    spec = build_spec({"name": "lp", "design": "leaf-pair", "gpus": 64, "hb_domain": 8, "radix": 128, "oversubscription": "2:1", "hb_bandwidth_gbps": 7200})
    sec = pipeline.build(spec, traffic=True).traffic
    got = {(r["arch"], r["pattern"], r["failed"]) for r in sec["rows"]}
    assert got == {(a, p, "none") for a in ("rail-optimized", "rail-only") for p in overview.PATTERNS} | {("rail-optimized", p, "leaf-a:p33") for p in overview.PATTERNS}
    assert sec["notes"] == ["rail-only: one switch tier, no spine (or ISL) to take out"]
    a2a = [r for r in sec["rows"] if r["arch"] == "rail-optimized" and r["pattern"] == "alltoall"]
    assert [r["min_rate_fraction"] for r in a2a] == pytest.approx([1.0, 4 * 15 / 64])  # 16 ISLs, then 15
    hist = [h for h in sec["histograms"] if h["arch"] == "rail-optimized" and h["failed"] == "none"][0]
    assert {t["tier"]: t["links"] for t in hist["tiers"]}["leaf-leaf"] == 2 * 16
