"""The layout phase: every device in a rack at a U, every cable a routed and a sold length.

Invariants over a grid of cluster shapes (DGX-style K = 8, NVL72 trays, GH200
superchips, two planes, both architectures), the ``layout:`` spec section's
errors, and the round trip of the section through summary.json.
"""

from __future__ import annotations

import numpy as np
import pytest

from topogen import layout
from topogen.fabric import clos
from topogen.layout.floor import U_M
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

GRID = [
    # gpus, hb_domain, radix, planes, gpus_per_node
    (64, 8, 16, 1, None),
    (1024, 8, 32, 2, None),
    (4096, 8, 64, 1, None),
    (1152, 72, 64, 1, 4),
    (2048, 256, 64, 1, 1),
    (40, 8, 8, 1, None),
]


def _spec(gpus, hb, radix, planes=1, per_node=None, **extra):
    data = {"name": "lay", "gpus": gpus, "hb_domain": hb, "radix": radix, "planes": planes, **extra}
    if per_node is not None:
        data["gpus_per_node"] = per_node
    return build_spec(data)


@pytest.fixture(scope="module", params=[(g, a) for g in GRID for a in ("rail-optimized", "rail-only")], ids=lambda p: "n{}-k{}-r{}-pl{}-g{}".format(*p[0]) + "-" + p[1])
def planned(request):
    grid, arch = request.param
    spec = _spec(*grid)
    fabric = clos.generate(spec, arch)
    return fabric, layout.plan(fabric)


def test_every_device_in_a_rack_within_its_height(planned):
    fabric, lay = planned
    p, s = lay.placement, lay.spec
    n_dev = fabric.gpus + len(fabric.switches)
    assert p.rack.shape == (n_dev,) and p.u.shape == (n_dev,)
    assert (p.rack >= 0).all() and (p.rack < len(lay.racks)).all()
    assert (p.u >= s.first_u).all()
    assert (p.u.astype(int) + p.height_u - 1 <= s.rack_u).all()
    assert len(set(lay.racks.name)) == len(lay.racks)  # rack names unique
    assert len({(r, c) for r, c in zip(lay.racks.row.tolist(), lay.racks.col.tolist())}) == len(lay.racks)  # one rack per floor slot


def test_no_two_chassis_share_a_rack_unit(planned):
    fabric, lay = planned
    p, s = lay.placement, lay.spec
    n = fabric.gpus
    chassis = np.concatenate([np.arange(n) // s.gpus_per_tray, n + np.arange(len(fabric.switches))])
    first = np.unique(chassis, return_index=True)[1]
    occupied: dict[int, set] = {}
    for dev in first.tolist():
        units = set(range(int(p.u[dev]), int(p.u[dev]) + int(p.height_u[dev])))
        taken = occupied.setdefault(int(p.rack[dev]), set())
        assert not (taken & units), f"device {dev} overlaps in rack {lay.racks.name[int(p.rack[dev])]}"
        taken |= units


def test_racks_hold_whole_nodes_and_kinds(planned):
    fabric, lay = planned
    spec = fabric.spec
    p = lay.placement
    n = fabric.gpus
    node = np.arange(n) // spec.gpus_per_node
    if lay.spec.gpus_per_rack >= spec.gpus_per_node:
        racks_per_node = np.bincount(node, weights=None, minlength=1)
        first = p.rack[:n][np.unique(node, return_index=True)[1]]
        assert (p.rack[:n] == first[node]).all()
        del racks_per_node
    kinds = np.asarray(lay.racks.kind)
    assert (kinds[p.rack[:n]] == "compute").all()
    sw_kinds = kinds[p.rack[n:]]
    roles = np.asarray([s.role for s in fabric.switches])
    tor = (roles == "leaf") & (sw_kinds == "compute")  # top of rack: only when all its GPUs stand in that rack
    assert (sw_kinds[(roles == "leaf") & ~tor] == "leaf").all()
    L = fabric.links
    g1 = L.tier == 1
    on_tor = tor[L.z_dev[g1] - n]
    assert (p.rack[L.a_dev[g1]][on_tor] == p.rack[L.z_dev[g1]][on_tor]).all()
    assert (sw_kinds[roles != "leaf"] != "compute").all()


def test_leaves_stand_in_the_row_of_their_gpus(planned):
    fabric, lay = planned
    L = fabric.links
    p = lay.placement
    g1 = L.tier == 1
    gpu_row = lay.racks.row[p.rack[L.a_dev[g1]]]
    leaf_row = lay.racks.row[p.rack[L.z_dev[g1]]]
    leaf = L.z_dev[g1] - fabric.gpus
    lo = np.full(len(fabric.switches), 1 << 30)
    hi = np.full(len(fabric.switches), -1)
    np.minimum.at(lo, leaf, gpu_row)
    np.maximum.at(hi, leaf, gpu_row)
    assert ((leaf_row >= lo[leaf]) & (leaf_row <= hi[leaf])).all()  # among the rows of the GPUs it serves
    if fabric.hb_domain <= 16:  # DGX-style: most GPU-leaf cables stay in their row
        assert (gpu_row == leaf_row).mean() >= 0.5


def test_lengths_routed_and_sold(planned):
    fabric, lay = planned
    s = lay.spec
    L = fabric.links
    p = lay.placement
    assert lay.routed_m.shape == lay.length_m.shape == (len(L),)
    assert (lay.routed_m >= s.slack_m).all()
    assert (lay.length_m >= lay.routed_m - 1e-9).all()
    sold = set(s.lengths_m)
    custom = lay.length_m > max(s.lengths_m)
    assert all(v in sold for v in np.unique(lay.length_m[~custom]).tolist())
    assert (lay.length_m[custom] % 10 == 0).all()
    ra, rz = p.rack[L.a_dev], p.rack[L.z_dev]
    x = lay.racks.col * s.rack_width_m
    y = lay.racks.row * s.row_pitch_m
    manhattan = np.abs(x[ra] - x[rz]) + np.abs(y[ra] - y[rz])
    assert (lay.routed_m >= manhattan + s.slack_m - 1e-9).all()
    inside = ra == rz
    assert (lay.routed_m[inside] <= s.rack_u * U_M + s.slack_m).all()
    # each sold length is the smallest sold length that holds the routed one
    sizes = np.asarray(s.lengths_m, dtype=float)
    below = np.asarray([sizes[sizes < v].max() if (sizes < v).any() else 0 for v in lay.length_m[~custom].tolist()])
    assert (below < lay.routed_m[~custom] + 1e-9).all()


def test_deterministic(planned):
    fabric, lay = planned
    again = layout.plan(fabric)
    assert again.racks.name == lay.racks.name
    assert np.array_equal(again.placement.rack, lay.placement.rack) and np.array_equal(again.length_m, lay.length_m)


def test_rack_scale_domain_is_one_rack_with_switch_trays():
    spec = _spec(1152, 72, 64, 1, 4)
    fabric = clos.generate(spec, "rail-optimized")
    lay = layout.plan(fabric)
    assert lay.spec.gpus_per_rack == 72 and lay.spec.hb_switch_u == 9
    us = sorted(set(lay.placement.u[:72].tolist()))
    assert len(us) == 18 and us[0] == 2
    assert us[9] - us[8] == 10  # the 9 U of NVLink switch trays between the two halves


def test_layout_section_overrides_and_round_trip():
    spec = _spec(256, 8, 32, layout={"gpus_per_rack": 16, "racks_per_row": 4, "leaf_racks": "end", "lengths_m": [3, 10, 30, 100], "slack_m": 2})
    assert spec.layout.gpus_per_rack == 16 and spec.layout.lengths_m == (3, 10, 30, 100)
    again = build_spec(spec.to_dict())
    assert again.digest() == spec.digest()
    fabric = clos.generate(spec, "rail-only")
    lay = layout.plan(fabric)
    assert set(np.unique(lay.length_m).tolist()) <= {3, 10, 30, 100}
    compute = [c for c, k in zip(lay.racks.col.tolist(), lay.racks.kind) if k == "compute"]
    leaf = [c for c, k in zip(lay.racks.col.tolist(), lay.racks.kind) if k == "leaf"]
    assert min(leaf) > max(compute)  # leaf racks at the row end
    assert _spec(256, 8, 32).to_dict().get("layout") is None  # no section: not in the hash


@pytest.mark.parametrize(
    "section, path, words",
    [
        ({"rack_hight": 42}, "layout.rack_hight", "unknown key"),
        ({"rack_u": "tall"}, "layout.rack_u", "positive whole number"),
        ({"leaf_racks": "left"}, "layout.leaf_racks", "middle, end"),
        ({"lengths_m": [3, -1]}, "layout.lengths_m", "positive lengths"),
        ({"gpus_per_rack": 12}, "layout.gpus_per_rack", "whole trays"),
        ({"gpus_per_rack": 64, "rack_u": 42}, "layout.gpus_per_rack", "needs 64 U"),
        ("big", "layout", "must be a mapping"),
    ],
)
def test_layout_errors_name_the_field(section, path, words):
    with pytest.raises(InputError) as exc:
        _spec(256, 8, 32, layout=section)
    assert any(p.path == path and words in p.message for p in exc.value.problems), exc.value.render()
