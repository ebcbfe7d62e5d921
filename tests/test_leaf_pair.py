"""design: leaf-pair (the Enterprise RA single tier): closed form = wiring over a grid, the A-B-B-A split, bad specs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from topogen.fabric import clos
from topogen.spec import leafpair
from topogen.spec.cluster import build_spec
from topogen.spec.counts import arch_counts
from topogen.util.errors import InputError


def test_abba():
    assert leafpair.node_sides(8).tolist() == [0, 1, 1, 0, 0, 1, 1, 0]
    assert leafpair.node_sides(4).tolist() == [0, 1, 1, 0]
    assert leafpair.node_sides(2).tolist() == [0, 1]
    assert leafpair.rail_sides(72, 4).tolist() == [0, 1, 1, 0] * 18


GRID = [
    dict(gpus=g, hb_domain=hb, gpus_per_node=gpn, radix=r, oversubscription=o, planes=p, reserved_leaf_ports=res)
    for (hb, gpn), g, r, o, p, res in itertools.product(
        [(8, 8), (8, 4), (8, 2), (72, 4), (4, 4)], [8, 32, 72, 128, 144, 288], [32, 64, 128, 256], ["1:1", "2:1", "3:1"], [1, 2], [0, 1]
    )
    if g % hb == 0
]


def _spec(kw, arch):
    return build_spec({"name": "lp", "design": "leaf-pair", "arch": arch, **{k: v for k, v in kw.items() if v}})


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_closed_form_equals_wiring(arch):
    built = refused = 0
    for kw in GRID:
        try:
            spec = _spec(kw, arch)
        except InputError as e:
            assert [p.path for p in e.problems] == ["design"], (kw, e.problems)
            lp = leafpair.plan(kw["gpus"], kw["radix"], kw["oversubscription"], arch == "rail-only", kw["reserved_leaf_ports"])
            assert not lp.fits
            refused += 1
            continue
        built += 1
        f = clos.generate(spec, arch)
        c = arch_counts(spec, arch)
        n, p = spec.gpus, spec.planes
        assert (f.tiers, f.switches_per_tier(), f.links_per_tier(), len(f.isls)) == (1, list(c.switches_per_tier), list(c.links_per_tier), c.isls)
        assert f.cables == c.links and f.unused_switch_ports() == c.unused_switch_ports
        assert (f.ports_used() <= np.array([s.radix for s in f.switches])).all()
        # every GPU one cable per plane, on the leaf of its node-local NIC, the pair's halves equal
        L = f.links
        assert sorted(zip(L.a_dev.tolist(), L.plane.tolist())) == sorted((g, q) for g in range(n) for q in range(p))
        side = leafpair.node_sides(spec.gpus_per_node)[L.a_dev % spec.gpus_per_node]
        assert ((L.z_dev - n) % 2 == side).all() and ((L.z_dev - n) // 2 == L.plane).all()
        assert (np.bincount(L.z_dev - n) == n // 2).all()
        for s in f.switches:
            assert set(s.rails) == {r for r in range(spec.hb_domain) if leafpair.rail_sides(spec.hb_domain, spec.gpus_per_node)[r] == "ab".index(s.name[-1])}
        # no port used twice, ISLs join the same port numbers of A and B of one plane
        ends = np.concatenate([np.stack([L.z_dev, L.z_port], 1), np.stack([f.isls.a_dev, f.isls.a_port], 1), np.stack([f.isls.z_dev, f.isls.z_port], 1)])
        assert len(np.unique(ends, axis=0)) == len(ends)
        assert (f.isls.a_port == f.isls.z_port).all() and (f.isls.z_dev == f.isls.a_dev + 1).all()
        d, u = (int(x) for x in spec.oversubscription.split(":"))
        assert len(f.isls) == (0 if arch == "rail-only" else p * -(-n // 2 * u // d))
        if spec.reserved_leaf_ports:
            assert len(f.reserved) == 2 * p and all(z - a + 1 == 1 for _i, a, z in f.reserved)
            assert max(f.reserved[0][1:]) <= spec.radix
    assert built > 50 and refused > 10


def test_era_four_su_fills_the_pair():
    """2-8-9-400 at 4 SUs: 64 GPU ports and 64 ISL ports of 400G on each 128-port leaf; one more node does not fit."""
    kw = dict(gpus=128, hb_domain=8, radix=128, design="leaf-pair", arch="rail-optimized")
    f = clos.generate(build_spec(kw), "rail-optimized")
    assert f.ports_used().tolist() == [128, 128] and len(f.isls) == 64
    with pytest.raises(InputError) as e:
        build_spec({**kw, "gpus": 136})
    (p,) = e.value.problems
    assert p.path == "design" and "at most 128 GPUs" in p.message and "design: clos" in p.hint


@pytest.mark.parametrize(
    "extra, field",
    [
        ({"homing": "dual", "nic_ports": 2}, "homing"),
        ({"gpus_per_node": 1, "hb_domain": 1, "gpus": 8}, "gpus_per_node"),
        ({"scalable_unit": 4, "max_scalable_units": 8}, "max_scalable_units"),
        ({"radix": "64/128"}, "radix"),
        ({"design": "pair"}, "design"),
    ],
)
def test_bad_specs_name_the_field(extra, field):
    with pytest.raises(InputError) as e:
        build_spec({"gpus": 32, "hb_domain": 8, "radix": 64, "design": "leaf-pair", **extra})
    assert field in [p.path for p in e.value.problems]
