"""The other networks' media priced per cable: SKU counts follow from the wiring and the layout's lengths."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import numpy as np
import pytest
import yaml

from topogen import pipeline
from topogen.bom import networks as nb
from topogen.spec.catalog import resolve_catalog_path
from topogen.fabric import networks as nw
from topogen.spec.cluster import build_spec, load_spec, read_spec_file, resolve_spec_path
from topogen.util.errors import InputError


@pytest.fixture(scope="module")
def superpod():
    return pipeline.build(load_spec("dgx-h100-superpod"))


def _boms(ctx, arch="rail-optimized"):
    return {b.network: b for b in ctx.network_boms[arch]}


def _qty(b, category, sku=None, where=None, end=None):
    return sum(x.quantity for x in b.lines if x.category == category and sku in (None, x.sku) and (where is None or where in x.where.split(", ")) and end in (None, x.end))


def _mask(ctx, k, arch="rail-optimized"):
    return ctx.networks[arch].cables.net == k


# --- the DGX H100 SuperPOD: each SKU count from the wiring -----------------------------------


def test_superpod_storage_media(superpod):
    b = _boms(superpod)["storage"]
    c = superpod.networks["rail-optimized"].cables.take(_mask(superpod, nw.STORAGE))
    assert b.cable_count == _qty(b, "cable") == b.cables_priced == 548
    assert set(c.speed.tolist()) == {400}
    assert _qty(b, "cable", where="node") == 254 and _qty(b, "cable", where="leaf-spine") == 240
    # access cables: at the DGX's storage ports a QSFP112 SR4 module (the catalog's role: node rule; RA-11333 lists
    # 254 DGX storage transceivers), at the targets, fabric managers and servers a single-port OSFP SR4, one per port
    assert _qty(b, "transceiver", "MMA1Z00-NS400", end="device") == 254
    assert _qty(b, "transceiver", "MMA4Z00-NS400", end="device") == 48 + 2 + 4
    # leaf-spine: a twin-port DR8 module serves two ports of one switch, at both ends: 480 ports
    assert _qty(b, "transceiver", "MMS4X00-NM") == 480 // 2
    access = c.role != nw.R_UP
    per_switch = np.bincount(c.z_idx[access])
    assert _qty(b, "transceiver", "MMA4Z00-NS", end="switch") == int(sum(-(-u // 2) for u in per_switch if u))
    assert all(x.sku.startswith(("MFP7E10", "SMF-MPO12APC")) for x in b.lines if x.category == "cable")


def test_superpod_inband_media(superpod):
    b = _boms(superpod)["inband"]
    lay = superpod.network_layouts["rail-optimized"]
    m = _mask(superpod, nw.INBAND)
    c = superpod.networks["rail-optimized"].cables.take(m)
    length = lay.length_m[m]
    assert b.cable_count == _qty(b, "cable") == 304
    assert _qty(b, "cable", where="node") == 254 and set(c.speed[c.role == nw.R_NODE].tolist()) == {100}
    dac = int((length <= 3).sum())  # in a rack: QSFP28 DAC, no module
    assert _qty(b, "cable", "MCP1600-C001E30N") + _qty(b, "cable", "MCP1600-C002E30N") + _qty(b, "cable", "MCP1600-C003E30N") == dac
    assert _qty(b, "transceiver", "MMA1B00-C100D") == 2 * (304 - dac)  # single-port SR4 at both ends of every optical cable
    assert _qty(b, "transceiver", "MMA1B00-C100D", where="node", end="device") == 254 + 8 + 8 + 4  # nodes, servers, NFS, core
    assert b.assumed == 8 + 4  # NFS and core uplinks: outside the plan, priced at 30 m
    assert _qty(b, "cable", "MMF-MPO12UPC-030M", where="nfs") == 8


def test_superpod_oob_media(superpod):
    b = _boms(superpod)["oob"]
    assert b.cable_count == _qty(b, "cable") == 333
    cat6 = sum(x.quantity for x in b.lines if x.category == "cable" and x.sku.startswith("CAT6"))
    assert cat6 == 317  # 315 management ports + 2 back-to-back
    assert _qty(b, "cable", where="oob-uplink") == 16
    assert _qty(b, "transceiver") == _qty(b, "transceiver", "MMA1B00-C100D", end="switch") == 32  # QSFP28 SR4 at the SN2201 and the SN4600C
    assert b.assumed == 0


def test_superpod_costs_add_up(superpod):
    sec = superpod.summary["networks"]["architectures"]["rail-optimized"]
    t = sec["totals"]
    boms = superpod.network_boms["rail-optimized"]
    assert t["other_cost_usd"] == pytest.approx(sum(x.extended_price for b in boms for x in b.lines))
    assert t["cluster_cost_usd"] == pytest.approx(superpod.boms["rail-optimized"].cost + t["other_cost_usd"])
    assert t["cluster_power_w"] == pytest.approx(superpod.boms["rail-optimized"].power_w + t["other_power_w"])
    for d in sec["bom"]:
        assert d["media_priced"] is True
        assert d["cost_usd"] == pytest.approx(d["switch_cost_usd"] + d["transceiver_cost_usd"] + d["cable_cost_usd"])
    assert any("30 m" in n for n in sec["notes"])


# --- a grid over node counts and catalogs: every cable priced exactly once ---------------------


def _spec(nodes, catalog):
    d = read_spec_file(resolve_spec_path("dgx-h100-superpod"))
    d.update(gpus=8 * nodes, arch="rail-optimized")
    if catalog == "xdr-800g":
        d.update(catalog="xdr-800g", link_speed=400, radix=128)
        n = d["networks"]
        n["node_ports"]["inband"]["speed"] = 200  # SN5600 split 4 x 200G: splitter media
        n["storage"]["switch"] = n["inband"]["switch"] = "SN5600"
    return build_spec(d, default_name=f"grid-{nodes}-{catalog}")


GRID = [(n, c) for n in (7, 32, 64, 127, 300) for c in ("ndr-400g", "xdr-800g")]


@pytest.mark.parametrize("nodes,catalog", GRID)
def test_every_cable_priced_once(nodes, catalog):
    ctx = pipeline.build(_spec(nodes, catalog))
    hw = ctx.catalog
    for b in ctx.network_boms["rail-optimized"]:
        k = nw.NETWORK_NAMES.index(b.network)
        cables = int(_mask(ctx, k).sum())
        assert b.cable_count == b.cables_priced == cables
        plain = sum(x.quantity for x in b.lines if x.category == "cable" and hw.cables[x.sku].links_per_cable == 1)
        split = [x for x in b.lines if x.category == "cable" and hw.cables[x.sku].links_per_cable > 1]
        legs = cables - plain
        # a splitter carries at most links_per_cable legs, and a switch leaves at most one splitter part-filled per cable role
        assert all(hw.cables[x.sku].links_per_cable == 2 for x in split)
        assert sum(x.quantity for x in split) * 2 >= legs >= sum(x.quantity for x in split) * 2 - len(ctx.networks["rail-optimized"].switches) * len(nw.ROLE_NAMES)
        if catalog == "ndr-400g":
            assert not split and plain == cables
        # every line priced from the catalog, and the totals are the lines'
        assert b.cost == pytest.approx(sum(x.quantity * x.unit_price for x in b.lines))
        assert all(x.unit_price > 0 and x.quantity > 0 for x in b.lines)


def test_splitters_on_the_sn5600():
    """200G in-band ports on an SN5600 split 4 x 200G: a splitter takes two legs of one switch."""
    ctx = pipeline.build(_spec(64, "xdr-800g"))
    b = _boms(ctx)["inband"]
    node = [x for x in b.lines if x.category == "cable" and x.where == "node"]
    assert node and all(x.sku.startswith("SMF-MPO12APC-2X") for x in node)
    assert sum(x.quantity for x in node) == 128 // 2  # 128 node ports, two to a splitter, even per leaf
    assert _qty(b, "transceiver", "QSFP112-200G-DR2", where="node", end="device") == 128 + 8 + 8  # nodes, management servers, NFS: one per port


# --- outputs ---------------------------------------------------------------------------------


def test_bom_files_carry_the_networks(superpod, tmp_path):
    pipeline.write_outputs(superpod, tmp_path / "a", ["bom"])
    rows = list(csv.DictReader((tmp_path / "a" / "rail-optimized" / "bom.csv").open()))
    assert {r["network"] for r in rows} == {"compute", "storage", "inband", "oob"}
    compute = [r for r in rows if r["network"] == "compute"]
    assert sum(float(r["extended_price_usd"]) for r in compute) == pytest.approx(superpod.boms["rail-optimized"].cost)
    for name, b in _boms(superpod).items():
        mine = [r for r in rows if r["network"] == name]
        assert sum(int(r["quantity"]) for r in mine if r["category"] == "cable") == b.cable_count
        assert sum(float(r["extended_price_usd"]) for r in mine) == pytest.approx(b.cost)
        assert all(r["length_m"] for r in mine if r["category"] == "cable")
    doc = json.loads((tmp_path / "a" / "rail-optimized" / "bom.json").read_text())
    assert doc["networks"]["cluster"]["cost"] == pytest.approx(doc["totals"]["cost"] + doc["networks"]["other_networks"]["cost"])
    assert doc["networks"]["networks"]["oob"]["totals"]["cables"] == 333


def test_no_networks_bom_unchanged(tmp_path):
    data = {k: v for k, v in read_spec_file(resolve_spec_path("dgx-h100-superpod")).items() if k != "networks"}
    ctx = pipeline.build(build_spec(data, default_name="x"))
    pipeline.write_outputs(ctx, tmp_path / "o", ["bom"])
    text = (tmp_path / "o" / "rail-optimized" / "bom.csv").read_text()
    assert text.startswith("category,sku,") and "storage" not in text.splitlines()[0]
    assert "networks" not in json.loads((tmp_path / "o" / "rail-optimized" / "bom.json").read_text())


def test_deterministic(superpod, tmp_path):
    again = pipeline.build(load_spec("dgx-h100-superpod"))
    pipeline.write_outputs(superpod, tmp_path / "a", ["bom", "xlsx"])
    pipeline.write_outputs(again, tmp_path / "b", ["bom", "xlsx"])
    for name in ("rail-optimized/bom.csv", "rail-optimized/bom.json", "rail-only/bom.csv", "dgx-h100-superpod.xlsx"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_workbook_networks_sheet_priced(superpod, tmp_path):
    import openpyxl

    pipeline.write_outputs(superpod, tmp_path / "w", ["xlsx"])
    ws = openpyxl.load_workbook(tmp_path / "w" / "dgx-h100-superpod.xlsx")["Networks"]
    rows = list(ws.iter_rows(values_only=True))
    assert rows[0][:8] == ("Architecture", "Network", "Category", "SKU", "Used in", "Quantity", "Unit price", "Extended price")
    for name, b in _boms(superpod).items():
        mine = [r for r in rows[1:] if r[0] == "rail-optimized" and r[1] == name and r[2] in ("switch", "transceiver", "cable")]
        assert sum(r[5] * r[6] for r in mine) == pytest.approx(b.cost)
        assert sum(r[5] for r in mine if r[2] == "cable") == b.cable_count
    assert any(r[1] == "all" and r[0] == "rail-optimized" for r in rows)
    assert any(r[0] == "note" and "30 m" in str(r[3]) for r in rows)


# --- the length assumed for cables to devices outside the plan (layout.outside_run_m) ----------

OUTSIDE_ROLES = {"storage": {"target"}, "inband": {"nfs", "core-uplink"}, "oob": set()}


@pytest.mark.parametrize("run_m", [1, 7, 30, 50, 100])
def test_outside_run_prices_only_the_cables_outside_the_plan(superpod, run_m):
    """Only the target, NFS and core-uplink cables move with the assumed length: each gets the shortest cable SKU at least that long; the rest stays as at 30 m."""
    n = superpod.networks["rail-optimized"]
    length = superpod.network_layouts["rail-optimized"].length_m
    hw = superpod.catalog
    base = {b.network: b for b in nb.network_bom(n, hw, length)}
    for b in nb.network_bom(n, hw, length, assumed_m=run_m):
        outside = OUTSIDE_ROLES[b.network]
        k = nw.NETWORK_NAMES.index(b.network)
        c = n.cables.take(n.cables.net == k)
        far = int(np.isin(c.role, [nw.ROLE_NAMES.index(r) for r in outside]).sum())
        assert b.assumed == base[b.network].assumed == far == {"storage": 48, "inband": 12, "oob": 0}[b.network]
        assert b.assumed_m == run_m and b.to_dict()["assumed_length_m"] == run_m
        assert b.cable_count == b.cables_priced == len(c)
        cables = lambda bom, inside: sorted((x.where, x.sku, x.quantity) for x in bom.lines if x.category == "cable" and (x.where not in outside) == inside)  # noqa: E731
        assert cables(b, True) == cables(base[b.network], True)
        for where, sku, q in cables(b, False):
            fits = [x for x in hw.rules if sku in x.cables]
            assert hw.cables[sku].length_m >= run_m
            assert not [o for r in fits for o in r.cables if run_m <= hw.cables[o].length_m < hw.cables[sku].length_m]  # the shortest that reaches
        assert sum(q for _, _, q in cables(b, False)) == far
        if far:
            (note,) = b.notes()
            assert f"priced at {run_m} m each" in note and "layout.outside_run_m" in note and note.startswith(f"{b.network}: {far} cable(s) to ")
            assert ("the storage targets" in note) == (b.network == "storage") and ("the data-centre core" in note) == (b.network == "inband")
        else:
            assert b.notes() == []


def test_outside_run_from_the_spec(tmp_path):
    """layout.outside_run_m reaches the BOM through the build: the notes in bom.json and summary.json carry it; the layout's lengths do not change."""
    d = read_spec_file(resolve_spec_path("dgx-h100-superpod"))
    d["layout"] = {"outside_run_m": 50}
    ctx = pipeline.build(build_spec(d, default_name="far-targets"))
    base = pipeline.build(load_spec("dgx-h100-superpod"))
    for arch in ("rail-optimized", "rail-only"):
        boms = _boms(ctx, arch)
        assert boms["storage"].assumed_m == boms["inband"].assumed_m == 50.0
        np.testing.assert_array_equal(ctx.network_layouts[arch].length_m, base.network_layouts[arch].length_m)
        notes = ctx.summary["networks"]["architectures"][arch]["notes"]
        assert len([x for x in notes if "priced at 50 m each (an assumption, layout.outside_run_m" in x]) == 2
    assert ctx.spec.layout.outside_run_m == 50.0
    assert base.spec.layout is None  # the preset has no layout section: the default, 30 m


@pytest.mark.parametrize("bad", [0, -1, "far", True, None, [30]])
def test_outside_run_must_be_a_positive_length(bad):
    d = read_spec_file(resolve_spec_path("dgx-h100-superpod"))
    d["layout"] = {"outside_run_m": bad}
    if bad is None:  # absent: the default
        assert build_spec(d, default_name="x").layout.outside_run_m == 30.0
        return
    with pytest.raises(InputError) as e:
        build_spec(d, default_name="x")
    assert [p.path for p in e.value.problems] == ["layout.outside_run_m"]
    assert "outside_run_m must be a positive number of metres" in str(e.value)


# --- errors ----------------------------------------------------------------------------------


def test_run_beyond_reach_is_an_input_error(superpod):
    n = superpod.networks["rail-optimized"]
    length = superpod.network_layouts["rail-optimized"].length_m.copy()
    length[(n.cables.net == nw.INBAND) & (n.cables.role == nw.R_NODE)] = 200.0
    with pytest.raises(InputError) as e:
        nb.network_bom(n, superpod.catalog, length)
    msg = str(e.value)
    assert "254 inband node cable run(s) of 200 m" in msg and "hb000:inb0" in msg and "100 m" in msg


def test_run_beyond_reach_exits_2(tmp_path):
    """A catalog whose Cat6 cords stop at 10 m: the OOB runs between racks reach past them, exit 2 naming them."""
    hw = yaml.safe_load(resolve_catalog_path("ndr-400g").read_text())
    for m in hw["media"]:
        if m.get("speed") == 1:
            m["cable"] = [c for c in m["cable"] if c in ("CAT6-RJ45-001M", "CAT6-RJ45-002M", "CAT6-RJ45-003M", "CAT6-RJ45-005M", "CAT6-RJ45-007M", "CAT6-RJ45-010M")]
    (tmp_path / "short.yaml").write_text(yaml.safe_dump(hw, sort_keys=False))
    d = read_spec_file(resolve_spec_path("dgx-h100-superpod"))
    d["catalog"] = str(tmp_path / "short.yaml")
    spec = tmp_path / "short-cat6.yaml"
    spec.write_text(yaml.safe_dump(d, sort_keys=False))
    out = subprocess.run([sys.executable, "-m", "topogen", "build", str(spec), "--out", str(tmp_path / "o"), "-q"], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "oob management-port cable run(s) of" in out.stderr
    assert "longest reach it has for oob management-port links at 1G is 10 m" in out.stderr
    assert not (tmp_path / "o").exists()


def test_far_rows_place_the_leaves_with_their_nodes(tmp_path):
    """Eight rows (the far rows' nodes 190 m from the management racks, which stopped the build): the leaves stand with their nodes."""
    d = read_spec_file(resolve_spec_path("dgx-h100-superpod"))
    d["layout"] = {"row_pitch_m": 20, "racks_per_row": 4}
    ctx = pipeline.build(build_spec(d, default_name="far"))
    for arch, n in ctx.networks.items():
        nl = ctx.network_layouts[arch]
        c = n.cables
        node = (c.role == nw.R_NODE) & ~np.isnan(nl.length_m)
        assert node.any() and nl.length_m[node].max() <= 100
        mport = (c.role == nw.R_MPORT) & ~np.isnan(nl.length_m)
        assert nl.length_m[mport].max() <= 100
        assert n.plan.leaves_with_su == nl.leaves_with_su > 0
        assert nw.closed_form(n.plan) == n.counts()


def test_speed_without_media_names_it():
    d = read_spec_file(resolve_spec_path("era-2-8-9-400"))
    d["networks"]["oob"]["uplink_speed"] = 25
    with pytest.raises(InputError) as e:
        pipeline.build(build_spec(d, default_name="x"))
    assert "no media rule of catalog xdr-800g matches the" in str(e.value) and "oob oob-uplink cable(s) at 25G" in str(e.value)
