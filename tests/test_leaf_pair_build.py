"""design: leaf-pair downstream of the generator: validation, BOM, layout, cabling.csv read back, the era preset.

The ISLs are cables like the links: every check reads them, the BOM prices them, cabling.csv lists
them (cable ids continue, link leaf-leaf), and a hand-edited file with an ISL missing or mis-cabled
is caught. Grids over GPU counts, gpus_per_node, planes, GPU:ISL ratio and both architectures.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pytest

from topogen import layout
from topogen.asbuilt import wiring
from topogen.bom import bill
from topogen.spec.catalog import load_catalog
from topogen.checks import validate
from topogen.exports.installers.cabling import write_cabling
from topogen.fabric import clos
from topogen.fabric.naming import ISL_LINK
from topogen.spec.cluster import build_spec, load_spec
from topogen.spec.counts import arch_counts

GRID = [
    dict(gpus=g, hb_domain=8, gpus_per_node=gpn, radix=r, planes=p, oversubscription=o)
    for g, gpn, r, p, o in itertools.product([16, 64, 128], [2, 4, 8], [64, 128], [1, 2], ["1:1", "2:1"])
    if g // 2 + -(-g // 2 * int(o[-1]) // int(o[0])) <= r
]


def _spec(kw, arch="both", **extra):
    return build_spec({"name": "lp", "design": "leaf-pair", "arch": arch, "link_speed": 400, **kw, **extra})


@pytest.mark.parametrize("kw", GRID, ids=lambda kw: "-".join(f"{v}" for v in kw.values()))
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_generated_pair_validates(kw, arch):
    spec = _spec(kw)
    f = clos.generate(spec, arch)
    r = validate.validate(f)
    assert r.valid and not [x for x in r.findings if x.severity != "info"], [x.message for x in r.findings if x.severity != "info"]
    fig = r.figures
    assert fig["tiers"] == fig["min_tiers"] == 1 and fig["cables"] == arch_counts(spec, arch).links
    assert fig["bisection"]["checked"] and fig["bisection"]["full"]
    if arch == "rail-only":
        assert len(f.isls) == 0 and "gpu_isl_oversubscription" not in fig
        return
    d, u = (int(x) for x in kw["oversubscription"].split(":"))
    g = kw["gpus"] // 2
    assert fig["isls"] == len(f.isls) == kw["planes"] * -(-g * u // d)
    assert fig["gpu_isl_oversubscription"] == pytest.approx(g / -(-g * u // d), abs=1e-4) and fig["gpu_isl_oversubscription"] <= d / u
    # the bisection cut is the pair's: the two leaves' GPUs, across the ISLs (demand: one leaf's GPU Gb/s / ratio)
    assert "leaf-a | leaf-b" in fig["bisection"]["cut"] and fig["bisection"]["demand_gbps"] == int(400 * g * u / d)
    assert fig["worst_case_hops"]["switch_hops"] == 2
    # failure: a leaf down cuts its half of the GPUs' NICs (reachable through NVLink); one ISL down cuts none
    imp = fig["failure_impact"]
    assert imp["switch"]["leaf"]["gpus_cut_off"] == (g if kw["planes"] == 1 else 0)
    assert imp["link"][ISL_LINK]["gpus_cut_off"] == 0 and set(imp["link"][ISL_LINK]["capacity_lost"]) == {ISL_LINK}
    leaf_msg = next(x.message for x in r.findings if x.check == "failure.switch")
    if kw["planes"] == 1:
        assert "they can still forward through their HB domain" in leaf_msg
    assert "inter-switch link" in r.checks["tiers"] and "GPU:ISL" in r.checks["capacity"]


@pytest.mark.parametrize("kw", [kw for kw in GRID if kw["radix"] == 128], ids=lambda kw: "-".join(f"{v}" for v in kw.values()))
def test_bom_prices_the_isls(kw):
    spec = _spec(kw)
    hw = load_catalog("xdr-800g")
    for arch in ("rail-optimized", "rail-only"):
        f = clos.generate(spec, arch)
        lay = layout.plan(f)
        assert len(lay.length_m) == f.cables == arch_counts(spec, arch).links
        b = bill.compile_bom(f, hw, lay)
        isl_cables = sum(x.quantity for x in b.lines if x.category == "cable" and x.where == ISL_LINK)
        isl_tx = sum(x.quantity for x in b.lines if x.category == "transceiver" and x.where == ISL_LINK)
        assert isl_cables == len(f.isls)
        assert b.cables == f.cables  # one cable per link and per ISL (no breakout at 400G on this catalog)
        rows = [r for r in b.length_rows() if r[1] == ISL_LINK]
        assert sum(r[-1] for r in rows) == len(f.isls) and all(r[0] == 1 for r in rows)
        if len(f.isls):
            # twin-port modules at both leaf ends: ceil(ISL ports of a leaf / 2) per leaf
            per_leaf = len(f.isls) // spec.planes  # each ISL takes one port on each leaf of its pair
            assert isl_tx == 2 * spec.planes * -(-per_leaf // 2)
            # the pair stands in one rack: ISLs are in-rack runs
            isl_racks = lay.placement.rack[np.concatenate([f.isls.a_dev, f.isls.z_dev])]
            assert len(set(isl_racks.tolist())) == spec.planes or len(set(isl_racks.tolist())) <= 2 * spec.planes
        else:
            assert isl_tx == 0 and not rows


def _write(spec, arch, path: Path):
    f = clos.generate(spec, arch)
    lay = layout.plan(f)
    b = bill.compile_bom(f, load_catalog("xdr-800g"), lay)
    write_cabling(f, path, lay, b)
    return f


def _rows(path: Path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _save(rows, path: Path):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _check(spec, path, arch="rail-optimized"):
    got = wiring.load(path, spec, arch)
    return validate.validate(got.fabric, got.labels, got.findings, expected=got.expected)


@pytest.fixture
def era(tmp_path):
    spec = _spec(dict(gpus=64, hb_domain=8, gpus_per_node=8, radix=128))
    path = tmp_path / "cabling.csv"
    f = _write(spec, "rail-optimized", path)
    return spec, f, path, _rows(path)


def test_cabling_lists_the_isls_and_reads_back_valid(era):
    spec, f, path, rows = era
    isl = [r for r in rows if r["link"] == ISL_LINK]
    assert len(rows) == f.cables and len(isl) == len(f.isls) == 32
    assert [int(r["cable"]) for r in rows] == list(range(1, f.cables + 1))
    assert all(r["tier"] == "1" and r["a_device"] == "leaf-a" and r["z_device"] == "leaf-b" and r["a_port"] == r["z_port"] for r in isl)
    assert all(r["length_m"] and r["cable_sku"] and r["a_transceiver_sku"] and r["z_transceiver_sku"] for r in isl)
    back = wiring.load(path, spec, "rail-optimized")
    assert len(back.fabric.isls) == len(f.isls) and len(back.fabric.links) == len(f.links)
    r = _check(spec, path)
    assert r.valid and r.errors == 0


def test_missing_isl_is_caught(era, tmp_path):
    spec, _f, _path, rows = era
    drop = next(i for i, r in enumerate(rows) if r["link"] == ISL_LINK)
    gone = rows[drop]
    p = tmp_path / "edited.csv"
    _save(rows[:drop] + rows[drop + 1 :], p)
    r = _check(spec, p)
    assert not r.valid
    over = r.by_check("capacity.oversubscription")
    assert over and "GPU:ISL 32:31" in over[0].message and f"p{gone['a_port'][1:]}" in over[0].message
    (isl,) = r.by_check("capacity.isl")
    assert "1 design ISL(s) missing" in isl.message
    assert r.by_check("capacity.bisection")


def test_miscabled_isl_is_caught(era, tmp_path):
    spec, _f, _path, rows = era
    isl = [i for i, r in enumerate(rows) if r["link"] == ISL_LINK]
    # swap two ISLs' B ends: every port still used once, but two ISLs leave the design's ports
    a, b = isl[0], isl[1]
    rows[a]["z_port"], rows[b]["z_port"] = rows[b]["z_port"], rows[a]["z_port"]
    p = tmp_path / "swapped.csv"
    _save(rows, p)
    r = _check(spec, p)
    (f,) = r.by_check("capacity.isl")
    assert "2 ISL(s) off the design's ports" in f.message and f.cables == (int(rows[a]["cable"]), int(rows[b]["cable"]))
    assert not r.by_check("hygiene.port-reuse") and not r.valid


def test_isl_to_a_gpu_port_or_itself_is_caught(era, tmp_path):
    spec, _f, _path, rows = era
    i = next(i for i, r in enumerate(rows) if r["link"] == ISL_LINK)
    rows[i]["z_device"] = "leaf-a"  # both ends on leaf-a
    p = tmp_path / "self.csv"
    _save(rows, p)
    r = _check(spec, p)
    assert r.by_check("hygiene.self-link") or r.by_check("tiers.adjacent")
    assert r.by_check("capacity.isl") and not r.valid


def test_rail_only_pair_refuses_an_isl():
    spec = _spec(dict(gpus=64, hb_domain=8, gpus_per_node=8, radix=128))
    ro = clos.generate(spec, "rail-optimized")
    f = clos.generate(spec, "rail-only")
    f.isls = ro.isls.take(np.arange(1))  # one ISL cabled into a rail-only pair
    r = validate.validate(f)
    (adj,) = r.by_check("tiers.adjacent")
    assert "a rail-only leaf pair has no inter-switch link" in adj.message


@pytest.mark.parametrize("sus", [1, 2, 3, 4])
def test_era_preset_totals_per_scalable_unit(sus):
    """era-2-8-9-400: 4 nodes (32 GPUs) per SU; 16 x 400G ISLs per SU at 1:1 (the RA's 8 x 800G), 2 leaves."""
    spec = load_spec("era-2-8-9-400", {"gpus": 32 * sus})
    assert spec.design == "leaf-pair"
    f = clos.generate(spec, "rail-optimized")
    c = arch_counts(spec, "rail-optimized")
    assert (len(f.switches), len(f.links), len(f.isls)) == (2, 32 * sus, 16 * sus) == (c.switches, c.links - c.isls, c.isls)
    assert f.ports_used().tolist() == [32 * sus] * 2
    r = validate.validate(f)
    assert r.valid and r.figures["gpu_isl_oversubscription"] == 1.0


@pytest.mark.parametrize("gpus,planes", [(16, 1), (32, 1), (64, 2), (128, 1)])
def test_bom_of_a_pair_slower_than_its_cages(gpus, planes):
    """200G GPU ports and ISLs on 800G cages run on breakout harnesses: the BOM counts each harness once, ISLs too."""
    spec = _spec(dict(gpus=gpus, hb_domain=8, gpus_per_node=8, radix=256, planes=planes), link_speed=200)
    f = clos.generate(spec, "rail-optimized")
    lay = layout.plan(f)
    b = bill.compile_bom(f, load_catalog("xdr-800g"), lay)
    harnesses = int(b.breakouts.cables_mask().sum())
    assert len(b.breakouts) and harnesses < f.cables
    cables = [x for x in b.lines if x.category == "cable"]
    assert sum(x.quantity for x in cables) == harnesses == sum(r[-1] for r in b.length_rows())
    # the ISLs' harnesses: one per cage they leave, each carrying links_per_cable ISLs
    isl = [x for x in cables if x.where == ISL_LINK]
    k = {x.sku: c.links_per_cable for x in isl for c in b.link_media.cables if c.sku == x.sku}
    assert sum(x.quantity * k[x.sku] for x in isl) == len(f.isls) > 0
