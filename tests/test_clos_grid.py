"""The explicit wiring agrees with the closed form, and keeps the Clos invariants, over a grid.

Grid: both architectures, K in {8, 72, 256}, radix in {32, 64, 128, 144, 256}, N from one HB
domain to 65,536 GPUs (the largest multiple of K), with non-power-of-two N and partly
filled groups; rail packing and provisioning are varied on a sub-grid.
"""

from __future__ import annotations

import numpy as np
import pytest

from topogen.fabric import clos
from topogen.spec import counts
from topogen.spec.cluster import build_spec

KS = (8, 72, 256)
RADIXES = (32, 64, 128, 144, 256)
DOMAIN_COUNTS = (1, 2, 3, 7, 16, 31, 33, 100, 129, 257, 1000, 4097)
MAX_N = 65536


def grid():
    for k in KS:
        ns = sorted({d * k for d in DOMAIN_COUNTS if d * k <= MAX_N} | {(MAX_N // k) * k})
        for r in RADIXES:
            for n in ns:
                yield pytest.param(n, k, r, id=f"N{n}-K{k}-r{r}")


def spec_for(n, k, r, **kw):
    return build_spec({"gpus": n, "hb_domain": k, "radix": r, **kw})


def check_fabric(f, closed):
    spec = f.spec
    L = f.links
    # closed form == explicit wiring
    assert tuple(f.switches_per_tier()) == closed.switches_per_tier
    assert tuple(f.links_per_tier()) == closed.links_per_tier
    assert f.unused_switch_ports() == closed.unused_switch_ports
    assert f.tiers == closed.tiers
    # every GPU has exactly one link per NIC port (= plane, or plane x 2 + home when dual-homed)
    g = L.tier == 1
    assert np.all(L.a_dev[g] < spec.gpus)
    nics = spec.nic_ports
    assert np.array_equal(np.bincount(L.a_dev[g] * nics + L.a_port[g], minlength=spec.gpus * nics), np.ones(spec.gpus * nics, int))
    # links join adjacent tiers only
    tiers = np.concatenate([np.zeros(spec.gpus, np.int8), f.switch_tiers()])
    assert np.array_equal(tiers[L.a_dev], L.tier - 1)
    assert np.array_equal(tiers[L.z_dev], L.tier)
    # no switch port used twice, all ports within radix, down/up split respected
    used = f.ports_used()
    radix = np.array([s.radix for s in f.switches])
    assert np.all(used <= radix)
    for dev, port in ((L.z_dev, L.z_port), (L.a_dev[~g], L.a_port[~g])):
        assert np.all(port >= 1) and np.all(port <= radix[dev - spec.gpus])
    key = np.concatenate([L.z_dev * 4096 + L.z_port, L.a_dev[~g] * 4096 + L.a_port[~g]])
    assert len(np.unique(key)) == len(key)
    down = np.array([s.down_ports for s in f.switches])
    assert np.all(L.z_port <= down[L.z_dev - spec.gpus])
    assert np.all(L.a_port[~g] > down[L.a_dev[~g] - spec.gpus])
    # every link at its tier's speed; a switch's ports count at its downlink speed (a faster uplink takes several)
    assert np.array_equal(L.a_speed, np.asarray([spec.speed_at(max(1, j)) for j in range(f.tiers + 1)])[L.tier])
    ups_n = np.bincount(L.a_dev[~g] - spec.gpus, minlength=len(f.switches))
    factor = np.asarray([spec.shape.factor(j) for j in range(f.tiers + 2)])[f.switch_tiers()]
    assert np.all(np.bincount(L.z_dev - spec.gpus, minlength=len(f.switches)) + factor * ups_n <= radix)
    # 1:1 below the top (each tier: at most the spec's down:up) in bandwidth: uplink Gb/s covers downlink Gb/s
    n_sw = len(f.switches)
    downs = np.bincount(L.z_dev - spec.gpus, weights=L.a_speed, minlength=n_sw)
    ups = np.bincount(L.a_dev[~g] - spec.gpus, weights=L.a_speed[~g], minlength=n_sw)
    non_top = f.switch_tiers() < f.tiers
    allowed = np.asarray([spec.ratio_at(max(1, j)) for j in range(f.tiers + 1)])[f.switch_tiers()]
    assert np.all(ups[non_top] * allowed[non_top] >= downs[non_top])
    # balanced striping: a switch has the same number of links to each upper switch it uses
    up = ~g
    pair = (L.a_dev[up] - spec.gpus) * (n_sw + 1) + (L.z_dev[up] - spec.gpus)
    pairs, mult = np.unique(pair, return_counts=True)
    lower = pairs // (n_sw + 1)
    lo_min = np.full(n_sw, np.iinfo(np.int64).max)
    lo_max = np.zeros(n_sw, np.int64)
    np.minimum.at(lo_min, lower, mult)
    np.maximum.at(lo_max, lower, mult)
    has_up = lo_max > 0
    assert np.array_equal(lo_min[has_up], lo_max[has_up])


@pytest.mark.parametrize("n,k,r", list(grid()))
def test_rail_optimized_matches_closed_form(n, k, r):
    spec = spec_for(n, k, r, arch="rail-optimized")
    check_fabric(clos.rail_optimized(spec), counts.arch_counts(spec, "rail-optimized"))


@pytest.mark.parametrize("n,k,r", list(grid()))
def test_rail_only_matches_closed_form(n, k, r):
    spec = spec_for(n, k, r, arch="rail-only")
    f = clos.rail_only(spec)
    check_fabric(f, counts.arch_counts(spec, "rail-only"))
    # rail isolation: every switch carries whole rails only, and every link stays in its rail
    rail_of = np.full(f.num_devices, -1)
    rail_of[: n] = np.arange(n) % k
    for i, s in enumerate(f.switches):
        rail_of[n + i] = s.rails[0] if len(s.rails) == 1 else -2
    g = f.links.tier == 1
    z_rail = rail_of[f.links.z_dev[g]]
    dedicated = z_rail >= 0
    assert np.array_equal(z_rail[dedicated], rail_of[f.links.a_dev[g]][dedicated])


VARIANTS = [
    {"rail_packing": "dedicated"},
    {"provision": "minimal"},
    {"rail_packing": "dedicated", "provision": "minimal"},
    {"planes": 2},
    {"oversubscription": "3:1"},
    {"oversubscription": "7:1", "provision": "minimal"},
    {"oversubscription": "3:1", "rail_packing": "dedicated"},
    {"link_speed": [200, 400]},  # uplinks 2x faster: each takes 2 of the radix's ports, a 1:1 tier balances Gb/s
    {"link_speed": [100, 400], "provision": "minimal"},
    {"link_speed": [200, 400], "oversubscription": "3:1"},
    {"homing": "dual"},
    {"homing": "dual", "nic_ports": 4},
    {"homing": "dual", "oversubscription": "3:1", "provision": "minimal"},
    {"homing": "dual", "leaf_packing": "shared", "rail_packing": "dedicated"},
    {"homing": "dual", "link_speed": [200, 400], "oversubscription": "3:1"},  # 200G pairs under 400G uplinks
]
SUBGRID = [(8, 64, d) for d in (1, 3, 33, 129, 1000)] + [(72, 144, d) for d in (1, 5, 73)] + [(256, 32, d) for d in (1, 3, 40)]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(f"{a}={b}" for a, b in v.items()))
@pytest.mark.parametrize("k,r,d", SUBGRID, ids=lambda x: str(x))
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_variants_match_closed_form(arch, k, r, d, variant):
    spec = spec_for(d * k, k, r, arch=arch, **variant)
    check_fabric(clos.generate(spec, arch), counts.arch_counts(spec, arch))


@pytest.mark.parametrize(
    "k,r,t",
    [(8, 64, 2), (8, 64, 3), (256, 32, 3), (72, 144, 2), (8, 16, 4)],
)
def test_fully_populated_closed_form(k, r, t):
    """A full t-tier Clos of P endpoints has (2t-1)P/k switches and t·P links."""
    p = counts.clos_capacity(r, t)
    c = counts.rail_only_counts(p * k, k, r, shared=True, full=True)
    assert c.tiers == t
    assert c.switches == k * (2 * t - 1) * p // r
    assert c.links == t * p * k
    assert c.unused_switch_ports == 0
    if p * k <= counts.clos_capacity(r, t) and p * k > counts.clos_capacity(r, t - 1):
        ro = counts.rail_optimized_counts(p * k, k, r, shared=True, full=True)
        assert ro.switches == (2 * t - 1) * p * k // r


def test_issue_example_rail_optimized_1024():
    spec = spec_for(1024, 8, 64, arch="rail-optimized")
    f = clos.rail_optimized(spec)
    assert f.switches_per_tier() == [32, 16]
    L = f.links
    leaves = [i for i, s in enumerate(f.switches) if s.tier == 1]
    spines = [i for i, s in enumerate(f.switches) if s.tier == 2]
    for leaf in leaves:
        dev = spec.gpus + leaf
        assert int(np.sum((L.z_dev == dev) & (L.tier == 1))) == 32
        ups = L.z_dev[L.a_dev == dev]
        assert sorted(np.unique(ups, return_counts=True)[1].tolist()) == [2] * 16
        assert set(np.unique(ups).tolist()) == {spec.gpus + s for s in spines}
    # leaf (group, rail) is rail-aligned: every GPU on it has that rank
    for leaf in leaves:
        gpus = L.a_dev[(L.z_dev == spec.gpus + leaf) & (L.tier == 1)]
        assert set((gpus % 8).tolist()) == set(f.switches[leaf].rails)


def test_issue_example_rail_only_1024():
    spec = spec_for(1024, 8, 64, arch="rail-only")
    f = clos.rail_only(spec)
    assert f.tiers == 2
    by_rail = {}
    for s in f.switches:
        by_rail.setdefault(s.rails, []).append(s.tier)
    assert sorted(by_rail) == [(r,) for r in range(8)]
    for tiers in by_rail.values():
        assert sorted(tiers) == [1, 1, 1, 1, 2, 2]
    # no cable joins switches of different rails
    L = f.links
    up = L.tier > 1
    ra = [f.switch(int(d)).rails for d in L.a_dev[up]]
    rz = [f.switch(int(d)).rails for d in L.z_dev[up]]
    assert ra == rz


def test_paper_configurations():
    """Switch and transceiver counts of the rail-only paper's cost comparison (K = 256)."""
    expect = {
        (32768, 64): (2560, 1536),
        (32768, 256): (384, 128),
        (65536, 256): (1280, 256),
    }
    for (n, r), (ro, rail) in expect.items():
        assert counts.rail_optimized_counts(n, 256, r, True, True).switches == ro
        assert counts.rail_only_counts(n, 256, r, True, True).switches == rail


def test_partial_spine_count_uses_next_divisor():
    """domain.md: 24 leaves x 32 uplinks need 12 spines by ports; 12 does not divide 32, so 16."""
    spec = spec_for(24 * 32, 1, 64, arch="rail-only")
    f = clos.rail_only(spec)
    assert f.switches_per_tier() == [24, 16]
    assert counts.stripe_width((32,) * 24, 32, 64, True)[0] == 16


def test_deterministic_generation():
    spec = spec_for(72 * 37, 72, 64)
    for arch in spec.arches:
        a, b = clos.generate(spec, arch), clos.generate(spec, arch)
        assert [s.name for s in a.switches] == [s.name for s in b.switches]
        for col in ("a_dev", "a_port", "z_dev", "z_port", "tier"):
            assert np.array_equal(getattr(a.links, col), getattr(b.links, col))


def test_switch_names_unique():
    spec = spec_for(8 * 4097, 8, 32, planes=2)
    for arch in spec.arches:
        names = [s.name for s in clos.generate(spec, arch).switches]
        assert len(set(names)) == len(names)
