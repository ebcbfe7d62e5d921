"""Oversubscribed leaves (spec ``oversubscription: d:u``): wiring, closed form, validation, bisection."""

from __future__ import annotations

import numpy as np
import pytest
from test_bisection import cut_flows

from topogen.checks import validate
from topogen.fabric import clos
from topogen.fabric.model import Fabric
from topogen.spec import counts
from topogen.spec.cluster import build_spec


def spec_for(n, k, r, ratio, **kw):
    return build_spec({"gpus": n, "hb_domain": k, "radix": r, "oversubscription": ratio, **kw})


@pytest.mark.parametrize("ratio,down,up", [("1:1", 32, 32), ("3:1", 48, 16), ("48:16", 48, 16), ("7:1", 56, 8), ("5:3", 40, 24), (3, 48, 16)])
def test_leaf_split(ratio, down, up):
    spec = spec_for(4096, 8, 64, ratio)
    assert (spec.radix - spec.leaf_up, spec.leaf_up) == (down, up)
    f = clos.rail_optimized(spec)
    leaves = [s for s in f.switches if s.tier == 1]
    assert {s.down_ports for s in leaves} == {down}


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("ratio", ["3:1", "7:1"])
def test_fully_populated_two_tiers(arch, ratio):
    """k leaves of d GPUs each and u spines: k·d endpoints, k + u switches, k·d + k·u links per Clos."""
    k_rail = 1 if arch == "rail-optimized" else 8
    r = 64
    probe = spec_for(8 * 64, 8, r, ratio)
    d, u = r - probe.leaf_up, probe.leaf_up
    n = r * d * k_rail if arch == "rail-only" else r * d
    spec = spec_for(n, 8, r, ratio, arch=arch)
    c = counts.arch_counts(spec, arch)
    clos_count = k_rail if arch == "rail-only" else 1
    assert c.tiers == 2
    assert c.switches_per_tier == (clos_count * r, clos_count * u)
    assert c.links_per_tier == (n, clos_count * r * u)
    assert c.unused_switch_ports == 0


def test_oversubscription_saves_upper_tiers():
    one = counts.arch_counts(spec_for(8192, 8, 64, "1:1"), "rail-optimized")
    three = counts.arch_counts(spec_for(8192, 8, 64, "3:1"), "rail-optimized")
    assert three.switches < one.switches and three.links < one.links


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("n,k,r,ratio", [(4096, 8, 64, "3:1"), (9216, 72, 144, "7:1"), (1000, 8, 32, "3:1"), (72 * 33, 72, 64, "5:3")])
def test_generated_oversubscribed_fabrics_validate(arch, n, k, r, ratio):
    spec = spec_for(n, k, r, ratio, arch=arch)
    fabric = clos.generate(spec, arch)
    report = validate.validate(fabric)
    assert report.valid, [f.message for f in report.findings if f.severity == "error"][:3]
    if fabric.tiers > 1:  # a single-switch rail has no uplinks to oversubscribe
        leaf = report.figures["oversubscription_per_tier"]["leaf"]
        d, u = (int(x) for x in spec.oversubscription.split(":"))
        assert leaf <= d / u + 1e-9


def test_leaf_beyond_its_ratio_is_an_error():
    spec = spec_for(4096, 8, 64, "3:1", arch="rail-only")
    f = clos.rail_only(spec)
    L = f.links
    leaf = spec.gpus  # first switch: rail 0, leaf 0
    drop = np.flatnonzero((L.a_dev == leaf) & (L.tier == 2))[0]
    keep = np.ones(len(L), bool)
    keep[drop] = False
    report = validate.validate(Fabric(f.spec, f.arch, f.tiers, f.switches, L.take(keep), []))
    over = [x for x in report.findings if x.check == "capacity.oversubscription"]
    assert over and over[0].devices == (f.switches[0].name,)
    assert "at most 3:1 required" in over[0].message
    assert f"{f.switches[0].name}:p{int(L.a_port[drop])}" in over[0].ports


CASES = [("rail-only", 1, 8, 38, "3:1"), ("rail-only", 1, 16, 100, "7:1"), ("rail-optimized", 8, 8, 17, "3:1"), ("rail-optimized", 4, 16, 40, "7:1")]


@pytest.mark.parametrize("provision", ["full", "minimal"])
@pytest.mark.parametrize("arch,k,radix,domains,ratio", CASES, ids=lambda c: str(c))
def test_bisection_is_the_ratio(arch, k, radix, domains, ratio, provision):
    """Every cut carries at least min(|A|, |B|)·u/d: the leaves are the only oversubscribed tier."""
    spec = spec_for(k * domains, k, radix, ratio, arch=arch, provision=provision)
    d, u = (int(x) for x in spec.oversubscription.split(":"))
    for name, flow, a, b in cut_flows(clos.generate(spec, arch)):
        assert flow * d >= min(a, b) * u, name
