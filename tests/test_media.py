"""Media per cable by its routed length and the catalog's rules; the BOM counts cables by length.

A catalog with copper (DAC, <= 3 m), active optical (AOC, <= 30 m) and
single-mode (beyond) for every link tier: each cable must get the media its
own length calls for, the cable SKU the shortest that reaches, and the BOM
the same counts as the per-cable assignment.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
import yaml

from topogen import layout, pipeline
from topogen.bom import bill as bom
from topogen.bom import catalog
from topogen.bom.media import CLASS_NAMES, assign, length_classes
from topogen.fabric import clos
from topogen.spec.cluster import build_spec
from topogen.util import resources

BY_LENGTH = {
    "name": "by-length",
    "switches": [{"sku": "SW64", "ports": [{"speed": 400, "radix": 64, "per_cage": 2}, {"speed": 400, "radix": 32, "per_cage": 2}], "price_usd": 1000}],
    "transceivers": [
        {"sku": "SR8", "speed": 400, "reach_m": 50, "ports_per_module": 2, "price_usd": 100},
        {"sku": "DR8", "speed": 400, "reach_m": 500, "ports_per_module": 2, "price_usd": 200},
    ],
    "cables": [
        {"sku": "DAC-1M", "kind": "dac", "length_m": 1, "price_usd": 10},
        {"sku": "DAC-2M", "kind": "dac", "length_m": 2, "price_usd": 11},
        {"sku": "DAC-3M", "kind": "dac", "length_m": 3, "price_usd": 12},
        {"sku": "MMF-10M", "kind": "fiber", "length_m": 10, "price_usd": 20},
        {"sku": "MMF-30M", "kind": "fiber", "length_m": 30, "price_usd": 30},
        {"sku": "SMF-50M", "kind": "fiber", "length_m": 50, "price_usd": 40},
        {"sku": "SMF-100M", "kind": "fiber", "length_m": 100, "price_usd": 50},
    ],
    "media": [
        {"name": "copper", "length": "in-rack", "cable": ["DAC-1M", "DAC-2M", "DAC-3M"]},
        {"name": "multimode", "length": ["in-row", "cross-row"], "transceiver": "SR8", "cable": ["MMF-10M", "MMF-30M"]},
        {"name": "single-mode", "transceiver": "DR8", "cable": ["SMF-50M", "SMF-100M"]},
    ],
}
HW = catalog.parse_catalog(BY_LENGTH, label="by-length")

SPECS = [
    {"gpus": 8, "hb_domain": 8, "radix": 64},  # one rack: leaf on top of the rack, copper
    {"gpus": 4096, "hb_domain": 8, "radix": 64},  # rows, a spine row: multimode and single-mode
    {"gpus": 256, "hb_domain": 8, "radix": 32, "layout": {"racks_per_row": 1, "row_pitch_m": 20}},  # rows far apart: single-mode
]


@pytest.fixture(scope="module", params=[(i, a) for i in range(len(SPECS)) for a in ("rail-optimized", "rail-only")], ids=lambda p: f"spec{p[0]}-{p[1]}")
def assigned(request):
    i, arch = request.param
    spec = build_spec({"name": "m", "arch": arch, **SPECS[i]})
    fabric = clos.generate(spec, arch)
    lay = layout.plan(fabric)
    return fabric, lay, assign(fabric, HW, lay.length_m), bom.compile_bom(fabric, HW, lay)


def test_each_cable_gets_the_media_of_its_length(assigned):
    fabric, lay, lm, _ = assigned
    names = np.asarray([m.name for m in lm.media])[lm.index]
    cls = np.asarray(CLASS_NAMES)[length_classes(lay.length_m)]
    assert (names[cls == "in-rack"] == "copper").all()
    assert (names[np.isin(cls, ["in-row", "cross-row"])] == "multimode").all()
    assert (names[np.isin(cls, ["cross-hall", "building"])] == "single-mode").all()
    assert (names[lay.length_m <= 3] == "copper").all() and (names[lay.length_m > 30] == "single-mode").all()


def test_cable_sku_is_the_shortest_that_reaches(assigned):
    fabric, lay, lm, _ = assigned
    sku_len = np.asarray([c.length_m for c in lm.cables])[lm.cable]
    assert (lm.cable >= 0).all()
    assert (sku_len >= lay.length_m).all()
    for i, m in enumerate(lm.media):  # no shorter SKU of the same rule would do
        rule = HW.rules[m.rule]
        lens = sorted(HW.cables[s].length_m for s in rule.cables)
        sel = lm.index == i
        shorter = np.asarray([max([x for x in lens if x < v], default=0) for v in sku_len[sel].tolist()])
        assert (shorter < lay.length_m[sel]).all()


def test_bom_counts_cables_by_sku_and_length(assigned):
    fabric, lay, lm, b = assigned
    counted = {x.sku: x.quantity for x in b.sku_lines() if x.category == "cable"}
    expect = {c.sku: int((lm.cable == i).sum()) for i, c in enumerate(lm.cables) if (lm.cable == i).any()}
    assert counted == expect
    assert sum(counted.values()) == len(fabric.links)
    hist = {}
    for _t, _link, length, _media, _sku, n in b.length_rows():
        hist[length] = hist.get(length, 0) + n
    assert hist == lay.histogram()
    # optics only where the media has them: no transceiver for copper cables
    copper = sum(int((lm.index == i).sum()) for i, m in enumerate(lm.media) if m.name == "copper")
    tx = sum(x.quantity for x in b.lines if x.category == "transceiver")
    assert (tx == 0) == (copper == len(fabric.links))


def test_one_rack_cluster_is_copper_and_rows_use_optics():
    spec = build_spec({"name": "m", "arch": "rail-optimized", **SPECS[0]})
    fabric = clos.generate(spec, "rail-optimized")
    b = bom.compile_bom(fabric, HW)
    assert b.transceivers == 0 and all(x.sku.startswith("DAC") for x in b.lines if x.category == "cable")
    kinds = set()
    for s in SPECS[1:]:
        spec = build_spec({"name": "m", "arch": "rail-optimized", **s})
        b = bom.compile_bom(clos.generate(spec, "rail-optimized"), HW)
        kinds |= {m.name for m in b.link_media.media}
    assert kinds == {"multimode", "single-mode"}


def test_longer_than_every_sku_is_noted():
    data = yaml.safe_load(resources.template_path("catalogs", "ndr-400g").read_text())
    hw = catalog.parse_catalog(data, label="ndr")
    spec = build_spec({"name": "m", "arch": "rail-only", "gpus": 256, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g", "layout": {"racks_per_row": 1, "row_pitch_m": 20}})
    fabric = clos.generate(spec, "rail-only")
    b = bom.compile_bom(fabric, hw)
    assert b.link_media.length_m.max() > 50
    assert any("no media for them" in n or "longer than" in n for n in b.notes)


def test_build_writes_the_histogram(tmp_path):
    ctx = pipeline.build(build_spec({"name": "h", "gpus": 1024, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g", "arch": "rail-optimized"}))
    pipeline.write_outputs(ctx, tmp_path, ["bom", "xlsx"])
    rows = list(csv.DictReader(open(tmp_path / "rail-optimized" / "cable-lengths.csv")))
    assert sum(int(r["cables"]) for r in rows) == len(ctx.fabrics["rail-optimized"].links)
    assert {float(r["length_m"]) for r in rows} == set(ctx.layouts["rail-optimized"].histogram())
    bom_rows = list(csv.DictReader(open(tmp_path / "rail-optimized" / "bom.csv")))
    assert all(r["length_m"] for r in bom_rows if r["category"] == "cable")
    import openpyxl

    wb = openpyxl.load_workbook(tmp_path / "h.xlsx", read_only=True)
    ws = wb["BOM rail-optimized"]
    values = [c for row in ws.iter_rows(values_only=True) for c in row if c is not None]
    assert "Cable lengths (from the floor layout)" in values
