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

from click.testing import CliRunner

from topogen import layout, pipeline
from topogen.bom import bill as bom
from topogen.spec import catalog
from topogen.bom.media import CLASS_NAMES, assign, length_classes
from topogen.cli import main
from topogen.fabric import clos
from topogen.spec.cluster import build_spec
from topogen.util import resources
from topogen.util.errors import InputError

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


def _reach_ok(fabric, lm, hw) -> None:
    """Every cable's SKU is at least its run and every transceiver on it reaches the run."""
    sku_len = np.asarray([c.length_m for c in lm.cables])[lm.cable]
    assert (lm.cable >= 0).all() and (sku_len >= lm.length_m).all()
    for i, m in enumerate(lm.media):
        runs = lm.length_m[lm.index == i]
        for t in (m.transceiver, m.gpu_transceiver):
            assert t is None or t.reach_m is None or t.reach_m >= runs.max(), (m.name, t.sku, runs.max())
        # the SKU is the shortest of its rule that is long enough
        lens = sorted(hw.cables[s].length_m for s in hw.rules[m.rule].cables)
        got = sku_len[lm.index == i]
        shorter = np.asarray([max([x for x in lens if x < v], default=0) for v in got.tolist()])
        assert (shorter < runs).all()


LONG_RUNS = [
    # rows 20 m apart, one rack per row: GPU-leaf runs beyond multimode reach (50 m)
    ({"gpus": 256, "hb_domain": 8, "radix": 64, "layout": {"racks_per_row": 1, "row_pitch_m": 20}}, "rail-only"),
    ({"gpus": 4096, "hb_domain": 8, "radix": 64, "layout": {"racks_per_row": 4, "row_pitch_m": 6}}, "rail-optimized"),
    ({"gpus": 16384, "hb_domain": 8, "radix": 64}, "rail-optimized"),
    ({"gpus": 2048, "hb_domain": 8, "radix": [128, 64], "link_speed": [200, 400], "layout": {"racks_per_row": 2, "row_pitch_m": 12}}, "rail-optimized"),
]


@pytest.mark.parametrize("case,arch", LONG_RUNS, ids=lambda x: x if isinstance(x, str) else f"n{x['gpus']}-r{x['radix']}")
def test_every_run_gets_media_that_reaches_it(case, arch):
    """Grid of GPU counts, radixes, speeds and floors on ndr-400g: no cable shorter than its run, no optic short of it."""
    hw = catalog.load_catalog("ndr-400g")
    spec = build_spec({"name": "m", "arch": arch, "catalog": "ndr-400g", **case})
    fabric = clos.generate(spec, arch)
    lay = layout.plan(fabric)
    lm = assign(fabric, hw, lay.length_m)
    assert lm.notes == []
    _reach_ok(fabric, lm, hw)
    gl = (fabric.links.tier == 1) & (lm.length_m > 50)
    if gl.any():  # beyond multimode: single-mode at both ends
        names = {lm.media[i].name for i in np.unique(lm.index[gl]).tolist()}
        assert all("single-mode" in n for n in names), names


def test_a_run_beyond_every_reach_is_an_error():
    """No media reaches 310 m GPU-leaf runs (single-mode NIC modules reach 100 m): an InputError naming one run and the reach."""
    spec = build_spec({"name": "m", "arch": "rail-only", "gpus": 256, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g", "layout": {"racks_per_row": 1, "row_pitch_m": 200}})
    fabric = clos.generate(spec, "rail-only")
    lay = layout.plan(fabric)
    with pytest.raises(InputError) as e:
        assign(fabric, catalog.load_catalog("ndr-400g"), lay.length_m)
    text = str(e.value)
    assert "gpu-leaf cable run(s) of" in text and "e.g. hb" in text and "the longest reach it has for gpu-leaf links at 400G is 100 m" in text


def _cli_build(tmp_path, *args):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["build", *args, "--out", str(out)], catch_exceptions=False)
    return res, out


def _sku_lengths(name: str) -> dict[str, float]:
    return {s: c.length_m for s, c in catalog.load_catalog(name).cables.items()}


def test_131072_gpus_runs_beyond_100_m_get_longer_single_mode(tmp_path):
    """At 131,072 GPUs the floor has leaf-spine runs of 110 to 140 m: each is priced as a trunk that reaches it (it was the 100 m SKU)."""
    res, out = _cli_build(tmp_path, "--gpus", "131072", "--hb-domain", "8", "--radix", "64", "--catalog", "ndr-400g", "--arch", "rail-optimized", "--formats", "bom")
    assert res.exit_code == 0, res.output
    skus = _sku_lengths("ndr-400g")
    rows = list(csv.DictReader(open(out / "rail-optimized" / "cable-lengths.csv")))
    assert max(float(r["length_m"]) for r in rows) > 100
    for r in rows:
        assert skus[r["cable_sku"]] >= float(r["length_m"]), r
    bom_rows = list(csv.DictReader(open(out / "rail-optimized" / "bom.csv")))
    assert any(r["sku"] == "SMF-MPO12APC-150M" for r in bom_rows)


def test_short_runs_get_short_cables(tmp_path):
    """A 7 m GPU-leaf run is a 7 m multimode cable, not the 15 m one (multimode came in 15/30/50 m only)."""
    res, out = _cli_build(tmp_path, "gb200-nvl72", "--formats", "bom")
    assert res.exit_code == 0, res.output
    skus = _sku_lengths("ndr-400g")
    rows = list(csv.DictReader(open(out / "rail-optimized" / "cable-lengths.csv")))
    assert {r["cable_sku"] for r in rows if r["length_m"] == "7"} == {"MFP7E10-N007", "SMF-MPO12APC-007M"} & {r["cable_sku"] for r in rows}
    for r in rows:  # the shortest SKU of the same family that reaches
        fam = r["cable_sku"].rsplit("-", 1)[0]
        fits = [v for s, v in skus.items() if s.rsplit("-", 1)[0] == fam and v >= float(r["length_m"])]
        assert skus[r["cable_sku"]] == min(fits), r


def test_ndr_400g_at_200g_gets_ndr200_media(tmp_path):
    """200G NICs on ndr-400g's 4 x 200G cage mode, 400G uplinks: split modules, splitter fibres, 200G NIC modules, by count."""
    res, out = _cli_build(tmp_path, "--gpus", "1024", "--hb-domain", "8", "--radix", "128/64", "--link-speed", "200/400", "--catalog", "ndr-400g", "--formats", "bom")
    assert res.exit_code == 0, res.output
    for arch in ("rail-optimized", "rail-only"):
        rows = [r for r in csv.DictReader(open(out / arch / "bom.csv")) if r["used_in"].startswith("gpu-leaf")]
        qty = {r["sku"]: int(r["quantity"]) for r in rows}
        assert qty["MMA4Z00-NS-4X200G"] == 1024 // 4  # one twin-port module per cage of 4 NDR200 legs
        assert qty["OSFP-NDR200-SR-NIC"] == 1024
        assert sum(v for s, v in qty.items() if s.startswith("MFP7E20-")) == 1024 // 2  # a 1:2 splitter per 2 NICs
        assert not any(s in qty for s in ("MMA4Z00-NS", "MMA4Z00-NS400"))  # no 400G optics on 200G links


def test_ndr_400g_all_links_at_200g_is_refused(tmp_path):
    """ndr-400g's 200G media serve NIC links; 200G between switches is refused (exit 2) naming the rule and speed."""
    res, out = _cli_build(tmp_path, "--gpus", "1024", "--hb-domain", "8", "--radix", "128", "--link-speed", "200", "--catalog", "ndr-400g", "--formats", "bom")
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "MMS4X00-NM runs at 400G but the leaf-spine links run at 200G" in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("name", ["ndr-400g", "xdr-800g", "chassis-400g", "hpn-51t", "paper"])
def test_every_bundled_speed_has_media_at_every_length_class(name):
    """Each bundled port mode's speed has media in every length class (the loader refuses a speed with none)."""
    hw = catalog.load_catalog(name)
    assert catalog.coverage_gaps(hw) == {}
    assert all(m.speed in {t.speed for t in hw.transceivers.values()} | {c.speed for c in hw.cables.values() if c.speed} for sw in hw.switches for m in sw.ports)


def test_a_speed_without_media_is_refused_naming_the_port_mode():
    data = yaml.safe_load(resources.template_path("catalogs", "ndr-400g").read_text())
    data["media"] = [r for r in data["media"] if r.get("speed") != 200]
    with pytest.raises(InputError) as e:
        catalog.parse_catalog(data, label="ndr")
    assert [p.path for p in e.value.problems] == ["catalog ndr: switches[0].ports[1]", "catalog ndr: switches[3].ports[1]"]  # the QM9700's 200G mode, and the SN5600's
    assert "MQM9700-NS2F offers 200G ports, but no media rule builds 200G links on it at any length" in str(e.value)


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
