"""Scalable units (issue 13): leaves per SU, a top tier sized for a declared maximum of SUs,
reserved leaf ports; the closed form equals the wiring over a grid of every shape, max-flow
confirms each shape's promised bisection (or its ratio), and mutations are caught."""

from __future__ import annotations

import json

import numpy as np
import pytest
import test_shapes
from click.testing import CliRunner
from test_bisection import cut_flows
from test_clos_grid import check_fabric

from topogen import pipeline
from topogen.checks import validate
from topogen.cli import main
from topogen.fabric import clos
from topogen.fabric.model import LINK_COLUMNS, Fabric, LinkTable
from topogen.spec import counts, units
from topogen.spec.cluster import build_spec, load_spec


def spec(**kw):
    return build_spec({"name": "t", **kw})


def without(f: Fabric, i: int) -> Fabric:
    keep = np.ones(len(f.links), bool)
    keep[i] = False
    return Fabric(f.spec, f.arch, f.tiers, f.switches, f.links.take(keep), [], f.reserved)


# --- the published SU table --------------------------------------------------------------------

# NVIDIA DGX SuperPOD (DGX H100) reference architecture, compute fabric per SU count (recalled,
# not re-checked): nodes, leaves, spines. One node slot of the last SU is kept for UFM.
DGX_H100_SUS = {1: (31, 8, 4), 2: (63, 16, 8), 3: (95, 24, 16), 4: (127, 32, 16)}


@pytest.mark.parametrize("sus", sorted(DGX_H100_SUS))
def test_dgx_h100_superpod_su_table(sus):
    nodes, leaves, spines = DGX_H100_SUS[sus]
    s = spec(gpus=8 * nodes, hb_domain=8, radix=64, scalable_unit=32, reserved_leaf_ports=1, arch="rail-optimized")
    f = clos.generate(s, "rail-optimized")
    assert f.switches_per_tier() == [leaves, spines]
    assert f.links_per_tier() == [8 * nodes, 256 * sus]
    # one leaf per rail per SU, each serving only its SU's nodes
    leaf = [x for x in f.switches if x.tier == 1]
    assert [(x.block, x.rails) for x in leaf] == [(g, (r,)) for g in range(sus) for r in range(8)]
    gl = f.links.tier == 1
    su_of_gpu = f.links.a_dev[gl] // 8 // 32
    assert np.array_equal(np.array([f.switch(int(d)).block for d in f.links.z_dev[gl]]), su_of_gpu)
    # the UFM slot: port 32 of the last SU's 8 leaves, no cable on it
    assert [(f.switches[i].name, a, b) for i, a, b in f.reserved] == [(f"leaf-g{sus - 1}-r{r}", 32, 32) for r in range(8)]
    assert validate.validate(f).valid
    check_fabric(f, counts.arch_counts(s, "rail-optimized"))


def test_su_preset_matches_the_uniform_preset_and_the_published_counts():
    su = pipeline.build(load_spec("dgx-h100-su"))
    old = pipeline.build(load_spec("dgx-h100-superpod", {"arch": "rail-optimized"}))
    a, b = su.fabrics["rail-optimized"], old.fabrics["rail-optimized"]
    assert a.switches_per_tier() == b.switches_per_tier() == [32, 16]
    assert a.links_per_tier() == b.links_per_tier() == [1016, 1024]
    assert su.valid
    pb = su.summary["architectures"]["rail-optimized"]["port_budget"]
    assert (pb["nodes_per_su"], pb["sus_present"], pb["sus_sized_for"], pb["nodes_in_last_su"]) == (32, 4, 4, 31)
    assert (pb["cabled_ports"], pb["reserved_leaf_ports"], pb["growth_ports"], pb["unused_ports"]) == (1016 + 2 * 1024, 8, 0, 0)
    assert su.boms["rail-optimized"].to_dict()["port_budget"] == pb
    assert su.boms["rail-optimized"].switches == old.boms["rail-optimized"].switches


# --- spines sized for a maximum of SUs ------------------------------------------------------------


@pytest.mark.parametrize("sus", [1, 2, 3, 4])
def test_spines_sized_for_max_sus(sus):
    """Leaves for the SUs present, the 16 spines of the 4-SU design; unused spine ports reserved for growth."""
    s = spec(gpus=8 * (32 * sus - 1), hb_domain=8, radix=64, scalable_unit=32, max_scalable_units=4, reserved_leaf_ports=1, arch="rail-optimized")
    ctx = pipeline.build(s)
    f = ctx.fabrics["rail-optimized"]
    assert f.switches_per_tier() == [8 * sus, 16]
    assert f.links_per_tier() == [8 * (32 * sus - 1), 256 * sus]
    up = f.links.tier == 2
    pairs = np.unique(f.links.a_dev[up] * 10**6 + f.links.z_dev[up], return_counts=True)[1]
    assert set(pairs.tolist()) == {2}  # every leaf: 2 links to each of the 16 spines
    pb = ctx.summary["architectures"]["rail-optimized"]["port_budget"]
    assert pb["growth_ports"] == 16 * 64 - 256 * sus and pb["sus_sized_for"] == 4
    note = next(n for n in f.notes if "sized for" in n)
    assert note == f"spine: 16 switches sized for max_scalable_units 4 (32 leaves of 32-node SUs; {sus} SU(s) present): {256 * sus:,} of their 1,024 down ports cabled, {1024 - 256 * sus:,} reserved for growth"
    assert ctx.valid
    # the BOM buys the 16 spines for the 4-SU design
    sw = {x.tier: x.quantity for x in ctx.boms["rail-optimized"].lines if x.category == "switch"}
    assert sw == {1: 8 * sus, 2: 16}


def test_max_sus_three_tiers_keeps_every_core():
    """16 SUs of 32 nodes on 64-port switches need 3 tiers; with 5 SUs built, the 64 cores of the full design."""
    s = spec(gpus=8 * 32 * 5, hb_domain=8, radix=64, scalable_unit=32, max_scalable_units=16, arch="rail-optimized")
    full = spec(gpus=8 * 32 * 16, hb_domain=8, radix=64, scalable_unit=32, arch="rail-optimized")
    f = clos.generate(s, "rail-optimized")
    assert f.tiers == 3 and f.switches_per_tier()[2] == counts.arch_counts(full, "rail-optimized").switches_per_tier[2] == 64
    check_fabric(f, counts.arch_counts(s, "rail-optimized"))
    assert validate.validate(f).valid


# --- the closed form equals the wiring over every shape -------------------------------------------

SHAPES = [
    # per-tier radix lists (chassis spines)
    {"gpus": 4096, "hb_domain": 8, "radix": [32, 288]},
    {"gpus": 1000, "hb_domain": 8, "radix": [16, 32, 64]},
    # per-tier oversubscription
    {"gpus": 2048, "hb_domain": 8, "radix": [16, 32], "oversubscription": ["1:1", "3:1"]},
    {"gpus": 8192, "hb_domain": 8, "radix": 64, "oversubscription": {"spine": "15:1"}},
    {"gpus": 584, "hb_domain": 8, "radix": [8, 16], "oversubscription": {"leaf": "3:1", "spine": "7:1"}},
    # scalable units: per SU, reserved ports, a top tier sized for more SUs, with the other shapes
    {"gpus": 1016, "hb_domain": 8, "radix": 64, "scalable_unit": 32, "reserved_leaf_ports": 1},
    {"gpus": 504, "hb_domain": 8, "radix": 64, "scalable_unit": 32, "max_scalable_units": 4},
    {"gpus": 1280, "hb_domain": 8, "radix": 64, "scalable_unit": 32, "max_scalable_units": 16},
    {"gpus": 1280, "hb_domain": 8, "radix": 64, "scalable_unit": 32, "max_scalable_units": 16, "provision": "minimal"},
    {"gpus": 400, "hb_domain": 8, "radix": 16, "scalable_unit": 5, "max_scalable_units": 30, "provision": "minimal"},
    {"gpus": 4000, "hb_domain": 8, "radix": [32, 288], "scalable_unit": 12, "max_scalable_units": 60, "reserved_leaf_ports": 2},
    {"gpus": 1440, "hb_domain": 72, "radix": [16, 64], "gpus_per_node": 4, "scalable_unit": 36, "max_scalable_units": 12},
    {"gpus": 2000, "hb_domain": 8, "radix": [16, 32], "oversubscription": ["1:1", "3:1"], "scalable_unit": 6, "max_scalable_units": 48},
    {"gpus": 960, "hb_domain": 8, "radix": 32, "oversubscription": "3:1", "scalable_unit": 20, "reserved_leaf_ports": 4, "planes": 2},
    {"gpus": 720, "hb_domain": 8, "radix": 16, "scalable_unit": 7, "leaf_packing": "shared", "reserved_leaf_ports": 1},
    {"gpus": 1000, "hb_domain": 8, "radix": 64, "scalable_unit": 31, "reserved_leaf_ports": 1, "reserved_leaf_ports_per": "su"},
    {"gpus": 720, "hb_domain": 8, "radix": 16, "scalable_unit": 7, "leaf_packing": "shared", "reserved_leaf_ports": 1, "reserved_leaf_ports_per": "su"},
    {"gpus": 992, "hb_domain": 8, "radix": 64, "homing": "dual", "scalable_unit": 30, "max_scalable_units": 5, "reserved_leaf_ports": 2, "reserved_leaf_ports_per": "su"},
    # per-tier link speeds (200G NICs on broken-out 400G leaves), alone and with SUs
    {"gpus": 2048, "hb_domain": 8, "radix": [128, 576], "link_speed": [200, 400]},
    {"gpus": 2000, "hb_domain": 8, "radix": [128, 576], "link_speed": [200, 400], "scalable_unit": 64, "max_scalable_units": 8, "reserved_leaf_ports": 2},
    {"gpus": 600, "hb_domain": 8, "radix": [32, 16], "link_speed": [200, 400], "scalable_unit": 10, "max_scalable_units": 12},
    # dual-homed NICs (a leaf pair per rail per SU), alone and with the other shapes
    {"gpus": 504, "hb_domain": 8, "radix": 16, "homing": "dual"},
    {"gpus": 1016, "hb_domain": 8, "radix": 64, "homing": "dual", "scalable_unit": 32, "max_scalable_units": 4, "reserved_leaf_ports": 1},
    {"gpus": 600, "hb_domain": 8, "radix": [32, 64], "homing": "dual", "link_speed": [200, 400], "scalable_unit": 10, "max_scalable_units": 8},
    {"gpus": 480, "hb_domain": 8, "radix": 16, "homing": "dual", "planes": 2, "oversubscription": "3:1", "scalable_unit": 6, "max_scalable_units": 12, "provision": "minimal"},
]


@pytest.mark.parametrize("kw", SHAPES, ids=[str(i) for i in range(len(SHAPES))])
def test_closed_form_equals_wiring_over_shapes(kw):
    s = spec(**kw)
    for arch in s.arches:
        f = clos.generate(s, arch)
        check_fabric(f, counts.arch_counts(s, arch))
        for i, a, b in f.reserved:  # reserved ports hold no cable
            dev = s.gpus + i
            on = ((f.links.z_dev == dev) & (f.links.z_port >= a) & (f.links.z_port <= b)) | ((f.links.a_dev == dev) & (f.links.a_port >= a) & (f.links.a_port <= b))
            assert not on.any()
        r = validate.validate(f)
        assert r.valid, validate.render(r)


# --- max-flow: the promised bisection, or its ratio, per shape -------------------------------------

FLOW_SHAPES = [
    ("rail-only", {"gpus": 150, "hb_domain": 1, "radix": [8, 32], "oversubscription": {"spine": "15:1"}}),  # 15:1 at aggregation only
    ("rail-only", {"gpus": 40, "hb_domain": 1, "radix": [4, 8, 16]}),  # per-tier radix, 3 tiers
    ("rail-optimized", {"gpus": 320, "hb_domain": 4, "radix": [8, 64]}),  # chassis-like spine over small leaves
    ("rail-optimized", {"gpus": 248, "hb_domain": 8, "radix": 64, "scalable_unit": 32, "max_scalable_units": 4, "reserved_leaf_ports": 1}),
    ("rail-optimized", {"gpus": 88, "hb_domain": 4, "radix": 8, "scalable_unit": 3, "max_scalable_units": 12}),  # 3 tiers, top sized for 12 SUs
    ("rail-only", {"gpus": 70, "hb_domain": 2, "radix": 8, "scalable_unit": 3, "max_scalable_units": 16, "provision": "minimal"}),
    ("rail-optimized", {"gpus": 96, "hb_domain": 4, "radix": [8, 16], "oversubscription": ["3:1", "1:1"], "scalable_unit": 4, "max_scalable_units": 8}),
    ("rail-optimized", {"gpus": 96, "hb_domain": 4, "radix": [8, 8], "link_speed": [200, 400], "scalable_unit": 2, "max_scalable_units": 16}),  # 4 tiers, 400G above 200G
    ("rail-only", {"gpus": 96, "hb_domain": 2, "radix": [8, 8], "link_speed": [200, 400], "oversubscription": {"spine": "3:1"}}),
    ("rail-optimized", {"gpus": 64, "hb_domain": 4, "radix": 8, "homing": "dual", "scalable_unit": 2, "max_scalable_units": 10, "reserved_leaf_ports": 1}),
]


@pytest.mark.parametrize("arch,kw", FLOW_SHAPES, ids=[str(i) for i in range(len(FLOW_SHAPES))])
def test_max_flow_confirms_each_shape(arch, kw):
    """Every cut carries at least min(|A|, |B|) x the NIC speed / (product of the ratios below the top), each cable
    at its own speed; the validator's own cut agrees."""
    s = spec(arch=arch, **kw)
    f = clos.generate(s, arch)
    promised = float(np.prod([s.ratio_at(j) for j in range(1, f.tiers)]))
    for name, flow, a, b in cut_flows(f, gbps=True):
        assert flow * promised >= min(a, b) * s.speed_at(1) - 1e-9, (name, flow, a, b)
    bis = validate.validate(f).figures["bisection"]
    assert bis["checked"] and bis["full"]


def test_fifteen_to_one_at_aggregation_is_the_ratio():
    """15:1 at the spine tier only: two pods of 30 leaves, the half cut carries exactly 1/15 of a half."""
    s = spec(gpus=240, hb_domain=1, radix=[8, 32], oversubscription={"spine": "15:1"}, arch="rail-only")
    f = clos.generate(s, "rail-only")
    assert f.tiers == 3
    half = next(x for x in cut_flows(f) if x[0] == "first-half")
    assert half[1:] == (8, 120, 120)  # 4 spines x 2 uplinks per pod of 120 GPUs: 120/15
    assert validate.validate(f).figures["oversubscription_per_tier"] == {"leaf": 1.0, "spine": 15.0}


# --- mutations ---------------------------------------------------------------------------------


@pytest.mark.parametrize("arch,kw", [(a, k) for a, k in FLOW_SHAPES] + [("rail-optimized", SHAPES[2]), ("rail-optimized", SHAPES[13])], ids=lambda x: str(x) if isinstance(x, str) else "")
def test_mutation_a_tier_over_its_oversubscription(arch, kw):
    """Remove uplinks of the fullest switch of each tier below the top until it is over its ratio: the validator reports that switch over its tier's ratio, naming the tier."""
    s = spec(**{**kw, "arch": arch})
    f = clos.generate(s, arch)
    L = f.links
    nsw = len(f.switches)
    downs = np.bincount(L.z_dev - s.gpus, weights=L.a_speed, minlength=nsw)  # Gb/s: a ratio is in bandwidth
    up_links = L.tier > 1
    ups = np.bincount(L.a_dev[up_links] - s.gpus, weights=L.a_speed[up_links], minlength=nsw)
    up_speed = np.array([s.speed_at(x.tier + 1) for x in f.switches])
    ratio = np.array([s.ratio_at(x.tier) for x in f.switches])
    mutated = 0
    for tier in range(2, f.tiers + 1):  # link tier j: the uplinks of switch tier j-1
        lower = np.flatnonzero((f.switch_tiers() == tier - 1) & (ups > 0))
        if not len(lower):
            continue
        sw_i = int(lower[np.argmax(downs[lower] / ups[lower])])  # the fullest switch of the tier
        drop = int((ups[sw_i] - downs[sw_i] / ratio[sw_i]) // up_speed[sw_i]) + 1  # uplinks to remove to go over
        rows = np.flatnonzero(L.a_dev == s.gpus + sw_i)[-drop:]
        keep = np.ones(len(L), bool)
        keep[rows] = False
        g = Fabric(f.spec, f.arch, f.tiers, f.switches, L.take(keep), [], f.reserved)
        mutated += 1
        sw = f.switches[sw_i]
        hits = [x for x in validate.validate(g).findings if x.check == "capacity.oversubscription"]
        assert [x.devices for x in hits] == [(sw.name,)], (tier, [x.message for x in hits])
        need = "1:1 required" if s.ratio_text_at(sw.tier) == "1:1" else f"at most {s.ratio_text_at(sw.tier)} required"
        assert f"{need} ({sw.role} tier)" in hits[0].message
    assert mutated >= 1


def test_mutation_cable_on_a_reserved_port():
    """A GPU cable moved onto the UFM port of its leaf: hygiene.reserved-port names the port and the cable."""
    s = spec(gpus=1016, hb_domain=8, radix=64, scalable_unit=32, reserved_leaf_ports=1, arch="rail-optimized")
    f = clos.generate(s, "rail-optimized")
    i, a, _b = f.reserved[3]
    dev = s.gpus + i
    row = int(np.flatnonzero((f.links.z_dev == dev) & (f.links.tier == 1))[-1])
    cols = {c: getattr(f.links, c).copy() for c in LINK_COLUMNS}
    cols["z_port"][row] = a
    g = Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**cols), [], f.reserved)
    r = validate.validate(g)
    hits = [x for x in r.findings if x.check == "hygiene.reserved-port"]
    assert len(hits) == 1 and hits[0].ports == (f"{f.switches[i].name}:p{a}",) and hits[0].cables == (row + 1,)
    assert "reserved for management / fabric-manager (UFM) links" in hits[0].message
    # the hygiene group's one-line detail counts it (it was written before the reserved ports were checked)
    assert r.group_status("hygiene") == "error" and "problem(s) with ports" in r.checks["hygiene"]


# --- input errors: the field named, exit 2 ---------------------------------------------------------


@pytest.mark.parametrize(
    "kw,field,text",
    [
        ({"scalable_unit": 0}, "scalable_unit", "must be a positive whole number"),
        ({"scalable_unit": "x"}, "scalable_unit", "must be a positive whole number"),
        ({"scalable_unit": 33}, "scalable_unit", "needs 33 down ports on each leaf, but a leaf has 32"),
        ({"hb_domain": 72, "gpus": 1440, "gpus_per_node": 4, "scalable_unit": 10}, "scalable_unit", "is not a whole number of HB domains of 72"),
        ({"max_scalable_units": 4}, "max_scalable_units", "needs scalable_unit"),
        ({"scalable_unit": 32, "max_scalable_units": 3}, "max_scalable_units", "below the 4 SUs of 32 nodes"),
        ({"scalable_unit": 32, "max_scalable_units": 4, "leaf_packing": "shared"}, "max_scalable_units", "leaf_packing: shared"),
        ({"scalable_unit": 32, "max_scalable_units": 100000}, "max_scalable_units", "size the design for 25,600,000 GPUs, more than 16,777,216"),
        ({"gpus": 1024, "scalable_unit": 32, "reserved_leaf_ports": 1}, "reserved_leaf_ports", "use 32 of their 32 down ports"),
        ({"reserved_leaf_ports": -1}, "reserved_leaf_ports", "0 or more"),
        ({"gpus": 64, "hb_domain": 8, "radix": 16, "reserved_leaf_ports": 1}, "reserved_leaf_ports", "the last leaf group's leaves (rail-optimized) use 8 of their 8 down ports"),
    ],
)
def test_su_input_errors(kw, field, text):
    test_shapes.test_per_tier_input_errors({"gpus": 1016, "radix": 64, **kw}, field, text)


def test_cli_flags_and_exit_2(tmp_path):
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "dgx-h100-su", "--gpus", "504", "--out", str(out), "--formats", "bom"])
    assert res.exit_code == 0, res.output
    assert "2 scalable units of 32 nodes (last 31), top tier sized for 4; switch ports: 1,528 cabled, 8 reserved on leaves (management / UFM), 512 for growth, 0 unused" in res.output
    b = json.loads((out / "rail-optimized" / "bom.json").read_text())
    assert b["port_budget"]["growth_ports"] == 512 and len(b["port_budget"]["reserved_ports"]) == 8
    res = CliRunner().invoke(main, ["build", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--scalable-unit", "32", "--reserved-leaf-ports", "1", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "reserved_leaf_ports" in res.stderr and "Traceback" not in res.stderr
    # unset fields: the spec's hash and every output as before
    assert "scalable_unit" not in load_spec("demo").to_dict()


# --- exports follow the SUs ----------------------------------------------------------------------


def test_slurm_tree_and_diagram_follow_the_sus(tmp_path):
    """Slurm: each rail-0 leaf holds exactly one SU's nodes; the overview diagram boxes leaves per SU and
    shows the top tier's growth ports; NetBox marks the reserved ports and each leaf's SU; the workbook
    carries the build notes; the 288-port spine row says 288-port."""
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "dgx-h100-su", "--gpus", "760", "--out", str(out), "--formats", "slurm,diagrams,netbox,xlsx"])
    assert res.exit_code == 0, res.output
    tree = (out / "rail-optimized" / "slurm" / "tree" / "topology.conf").read_text().splitlines()
    leaves = [ln for ln in tree if ln.startswith("SwitchName=leaf")]
    assert leaves == ["SwitchName=leaf-g0-r0 Nodes=hb[00-31]", "SwitchName=leaf-g1-r0 Nodes=hb[32-63]", "SwitchName=leaf-g2-r0 Nodes=hb[64-94]"]
    assert any(ln.startswith("# Scalable units: 3 SU(s) of 32 nodes") for ln in tree)
    dot = (out / "rail-optimized" / "overview.dot").read_text()
    assert ">leaf SU 2<" in dot and "in 3 SUs" in dot and "sized for 4 SUs: 256 ports for growth" in dot
    nb = out / "rail-optimized" / "netbox"
    kept = [ln.split(",")[0:2] for ln in (nb / "interfaces.csv").read_text().splitlines() if "reserved for management / UFM" in ln]
    assert kept == [[f"dgx-h100-su-rail-optimized.leaf-g2-r{r}", "16/2"] for r in range(8)]  # p32 by the QM9700's own name (cage 16, port 2)
    assert "rail 0, scalable unit 2" in (nb / "devices.csv").read_text()
    import openpyxl

    wb = openpyxl.load_workbook(next(out.glob("*.xlsx")), read_only=True)
    text = " ".join(str(c) for ws in wb.worksheets for row in ws.iter_rows(values_only=True) for c in row if c)
    assert "reserved_leaf_ports 1: port(s) p32 of 8 switches" in text and "spine: 16 switches sized for max_scalable_units 4" in text
    from topogen.exports.drawings import overview

    v = overview.rail_optimized_overview(clos.generate(load_spec("leaf32-spine288", {"arch": "rail-optimized"}), "rail-optimized"))
    assert "16 spines × 288-port" in v.rows[2]


def test_validate_cabling_file_with_a_cable_on_the_ufm_port(tmp_path):
    """topogen validate of a cabling.csv whose last GPU cable of a last-SU leaf is moved onto the reserved p32: exit 1, the port named."""
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["build", "dgx-h100-su", "--out", str(out), "--formats", "cabling"]).exit_code == 0
    path = out / "rail-optimized" / "cabling.csv"
    lines = path.read_text().splitlines()
    cols = lines[0].split(",")
    rows = [ln.split(",") for ln in lines[1:]]
    hit = max(i for i, r in enumerate(rows) if r[cols.index("z_device")] == "leaf-g3-r5" and r[cols.index("tier")] == "1")
    rows[hit][cols.index("z_port")] = "p32"
    path.write_text("\n".join([lines[0]] + [",".join(r) for r in rows]) + "\n")
    res = CliRunner().invoke(main, ["validate", str(path), "--spec", "dgx-h100-su"])
    assert res.exit_code == 1, res.output
    found = [ln for ln in res.output.splitlines() if "hygiene.reserved-port" in ln]
    assert len(found) == 1 and "leaf-g3-r5:16/2" in found[0] and f"cable {hit + 1}" in found[0]  # p32 by the QM9700's own name
    # the unmodified file validates
    assert CliRunner().invoke(main, ["build", "dgx-h100-su", "--out", str(tmp_path / "p"), "--formats", "cabling"]).exit_code == 0
    assert CliRunner().invoke(main, ["validate", str(tmp_path / "p" / "rail-optimized" / "cabling.csv"), "--spec", "dgx-h100-su"]).exit_code == 0


def test_a_cluster_that_fits_one_switch_stays_one_switch():
    """An SU that fits one leaf's ports entirely: one switch (no SU leaves), unless the top tier is sized for more SUs."""
    one = clos.generate(spec(gpus=48, hb_domain=8, radix=64, scalable_unit=4, arch="rail-optimized"), "rail-optimized")
    assert one.switches_per_tier() == [1]
    grown = spec(gpus=48, hb_domain=8, radix=64, scalable_unit=4, max_scalable_units=8, arch="rail-optimized")
    f = clos.generate(grown, "rail-optimized")
    assert f.switches_per_tier() == [16, 32] and validate.validate(f).valid  # 8 SUs x 8 leaves x 32 uplinks = 32 spines of 64
    check_fabric(f, counts.arch_counts(grown, "rail-optimized"))


def _su_grid():
    """A deterministic sample of SU shapes: SU size, a declared maximum, reserved ports, provisioning,
    homing, per-tier radix, ratio and speeds, both architectures."""
    import itertools
    import random

    rng = random.Random(13)
    bases = [
        {"hb_domain": 4, "radix": 8},
        {"hb_domain": 8, "radix": 16},
        {"hb_domain": 8, "radix": [8, 32]},
        {"hb_domain": 2, "radix": 16, "oversubscription": "3:1"},
        {"hb_domain": 8, "radix": [16, 16], "link_speed": [200, 400]},
    ]
    combos = list(itertools.product(range(len(bases)), (1, 3, 4), (5, 11, 23), (0, 2, 5), (0, 1), ("full", "minimal"), ("planes", "dual")))
    out = []
    for b, su, domains, grow, res, prov, homing in rng.sample(combos, 90):
        kw = {**bases[b], "gpus": bases[b]["hb_domain"] * domains, "scalable_unit": su, "provision": prov, "homing": homing}
        present = -(-domains // su)
        if grow:
            kw["max_scalable_units"] = present * grow
        if res and (domains - (present - 1) * su) < su:  # room in the last SU
            kw["reserved_leaf_ports"] = res
        out.append(kw)
    return out


@pytest.mark.parametrize("kw", _su_grid(), ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items() if a != "hb_domain"))
def test_su_grid_closed_form_equals_wiring(kw):
    s = spec(**kw)
    for arch in s.arches:
        f = clos.generate(s, arch)
        check_fabric(f, counts.arch_counts(s, arch))


# --- reserved_leaf_ports_per: su (every SU's leaves keep the ports) ----------------------------------


@pytest.mark.parametrize("arch", ("rail-optimized", "rail-only"))
def test_reserved_ports_on_every_su(arch):
    """reserved_leaf_ports_per: su keeps the UFM port on each leaf of every SU; the counts do not change, the budget does."""
    base = {"gpus": 8 * 31 * 3, "hb_domain": 8, "radix": 64, "scalable_unit": 31, "reserved_leaf_ports": 1, "arch": arch}
    last, every = spec(**base), spec(**base, reserved_leaf_ports_per="su")
    assert "reserved_leaf_ports_per" not in last.to_dict() and spec(**base, reserved_leaf_ports_per="design") == last
    assert every.to_dict()["reserved_leaf_ports_per"] == "su" and build_spec(every.to_dict()) == every
    f, g = clos.generate(last, arch), clos.generate(every, arch)
    assert counts.arch_counts(every, arch) == counts.arch_counts(last, arch) and g.switches_per_tier() == f.switches_per_tier()
    leaves = [i for i, s in enumerate(g.switches) if s.tier == 1]
    assert [i for i, _a, _b in g.reserved] == leaves and {(a, b) for _i, a, b in g.reserved} == {(32, 32)}
    assert len(f.reserved) == 8 and len(g.reserved) == 3 * 8
    pb = units.port_budget(g)
    assert pb["reserved_leaf_ports"] == 24 and pb["unused_ports"] == units.port_budget(f)["unused_ports"] - 16
    assert any(n.startswith("reserved_leaf_ports 1: port(s) p32 of 24 switches (every SU's:") for n in g.notes), g.notes
    assert validate.validate(g).valid
    # a GPU cable of the FIRST SU moved onto its leaf's UFM port: found only when every SU keeps it
    i, a, _b = g.reserved[0]
    row = int(np.flatnonzero((g.links.z_dev == every.gpus + i) & (g.links.tier == 1))[-1])
    cols = {c: getattr(g.links, c).copy() for c in LINK_COLUMNS}
    cols["z_port"][row] = a
    hits = validate.validate(Fabric(g.spec, g.arch, g.tiers, g.switches, LinkTable.from_columns(**cols), [], g.reserved)).by_check("hygiene.reserved-port")
    assert len(hits) == 1 and "of every SU's leaves" in hits[0].message and hits[0].cables == (row + 1,)
    hits = validate.validate(Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**cols), [], f.reserved)).by_check("hygiene.reserved-port")
    assert not hits


@pytest.mark.parametrize(
    "kw,field,text",
    [
        ({"reserved_leaf_ports_per": "rack"}, "reserved_leaf_ports_per", "must be design or su"),
        ({"reserved_leaf_ports": 1, "reserved_leaf_ports_per": "su"}, "reserved_leaf_ports_per", "needs scalable_unit"),
        ({"scalable_unit": 32, "reserved_leaf_ports_per": "su"}, "reserved_leaf_ports_per", "reserved_leaf_ports is not set"),
        ({"gpus": 1016, "scalable_unit": 32, "reserved_leaf_ports": 1, "reserved_leaf_ports_per": "su"}, "reserved_leaf_ports", "every SU's leaves (rail-optimized) use 32 of their 32 down ports"),
    ],
)
def test_reserved_per_su_input_errors(kw, field, text):
    test_shapes.test_per_tier_input_errors({"gpus": 1016, "radix": 64, **kw}, field, text)


def test_reserved_per_su_cli(tmp_path):
    res = CliRunner().invoke(main, ["build", "--gpus", "744", "--hb-domain", "8", "--radix", "64", "--scalable-unit", "31", "--reserved-leaf-ports", "1", "--reserved-leaf-ports-per", "su", "--arch", "rail-optimized", "--out", str(tmp_path), "--formats", "validation"])
    assert res.exit_code == 0, res.output
    assert "24 reserved on leaves (management / UFM)" in res.output
    res = CliRunner().invoke(main, ["build", "--gpus", "744", "--hb-domain", "8", "--radix", "64", "--reserved-leaf-ports-per", "pod", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "reserved_leaf_ports_per" in res.stderr and "Traceback" not in res.stderr
