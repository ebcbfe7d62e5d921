"""Per-tier link speeds (issue 13): ``link_speed: [200, 400]``, a radix counted at the downlink
speed, faster uplinks taking several ports, 1:1 balanced in Gb/s, and the breakout that serves it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from test_bisection import cut_flows

from topogen import pipeline
from topogen.checks import validate
from topogen.cli import main
from topogen.fabric import clos
from topogen.fabric.model import LINK_COLUMNS, Fabric, LinkTable
from topogen.spec import counts
from topogen.spec.cluster import build_spec, load_spec
from topogen.util.errors import InputError


def spec(**kw):
    return build_spec({"name": "t", **kw})


def test_issue_example_leaf_128_at_200g():
    """A 64 x 400G leaf serving 200G NICs is radix 128 at 200G: 64 x 200G down, 32 x 400G up."""
    s = spec(gpus=1024, hb_domain=8, radix=[128, 64], link_speed=[200, 400], arch="rail-optimized")
    assert (s.link_speed, s.speed_at(1), s.speed_at(2), s.speed_at(5)) == (200, 200, 400, 400)
    assert s.shape.split(1) == (64, 32)
    f = clos.generate(s, "rail-optimized")
    L = f.links
    assert f.switches_per_tier() == [16, 8]
    leaf = f.gpus  # the first leaf
    down, up = L.z_dev == leaf, L.a_dev == leaf
    assert (int(down.sum()), int(up.sum())) == (64, 32)
    assert set(L.a_speed[down].tolist()) == {200} and set(L.a_speed[up].tolist()) == {400}
    assert int(L.a_speed[down].sum()) == int(L.a_speed[up].sum())  # 1:1 in Gb/s
    assert sorted(L.a_port[up].tolist()) == list(range(65, 97))  # uplinks numbered after the 64 down ports
    assert f.ports_used()[0] == 128  # 64 + 2 x 32: every port of the radix
    r = validate.validate(f)
    assert r.valid, validate.render(r)
    assert "both ends at their link tier's speed (200/400 Gb/s)" in r.checks["hygiene"]


SPEED_GRID = [
    {"gpus": 1024, "hb_domain": 8, "radix": [128, 64], "link_speed": [200, 400]},
    {"gpus": 8192, "hb_domain": 8, "radix": [128, 576], "link_speed": [200, 400]},
    {"gpus": 16384, "hb_domain": 8, "radix": 128, "link_speed": "200,400,800"},
    {"gpus": 584, "hb_domain": 8, "radix": 16, "link_speed": [100, 200]},
    {"gpus": 2000, "hb_domain": 8, "radix": [64, 32], "link_speed": [200, 400], "oversubscription": "3:1"},
    {"gpus": 4608, "hb_domain": 72, "radix": [64, 32, 64], "link_speed": [200, 400], "oversubscription": ["1:1", "3:1"]},
    {"gpus": 1016, "hb_domain": 8, "radix": 32, "link_speed": [100, 400], "provision": "minimal", "planes": 2},
    {"gpus": 720, "hb_domain": 72, "radix": [32, 64], "link_speed": [400, 800], "rail_packing": "dedicated"},
]


@pytest.mark.parametrize("kw", SPEED_GRID, ids=[str(i) for i in range(len(SPEED_GRID))])
def test_per_tier_speeds_closed_form_equals_wiring(kw):
    from test_clos_grid import check_fabric

    s = spec(**kw)
    for arch in s.arches:
        f = clos.generate(s, arch)
        c = counts.arch_counts(s, arch)
        check_fabric(f, c)
        r = validate.validate(f, maxflow_links=4096)
        assert r.valid, validate.render(r)
        per = r.figures["oversubscription_per_tier"]  # in Gb/s: every tier's ratio honoured
        for j, role in enumerate(per, start=1):
            assert per[role] is not None and per[role] <= s.ratio_at(j) + 1e-9


@pytest.mark.parametrize("arch,kw", [("rail-optimized", {"gpus": 96, "hb_domain": 8, "radix": 16, "link_speed": [200, 400]}), ("rail-optimized", {"gpus": 136, "hb_domain": 8, "radix": [16, 8], "link_speed": [100, 400]}), ("rail-only", {"gpus": 8 * 45, "hb_domain": 8, "radix": 8, "link_speed": [200, 400]})])
def test_max_flow_in_gbps_mixed_speeds(arch, kw):
    """Max-flow with each cable's Gb/s as capacity: every cut carries the smaller side x 200G (full bisection),
    though half as many (or a quarter as many) uplinks as downlinks carry it; the validator's figure agrees."""
    s = spec(arch=arch, **kw)
    f = clos.generate(s, arch)
    assert f.tiers >= 2
    for name, flow, a, b in cut_flows(f, gbps=True):
        assert flow == min(a, b) * s.speed_at(1), name
    bis = validate.validate(f).figures["bisection"]
    assert bis["checked"] and bis["full"] and bis["worst_flow_gbps"] >= bis["demand_gbps"] > 0
    # the same fabric with its uplinks at the GPU speed (a wrong-speed cabling) is not full bisection
    slow = Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**{c: getattr(f.links, c) for c in LINK_COLUMNS if "speed" not in c}, a_speed=np.full(len(f.links), s.speed_at(1)), z_speed=np.full(len(f.links), s.speed_at(1))), [])
    assert min(flow - min(a, b) * s.speed_at(1) for _n, flow, a, b in cut_flows(slow, gbps=True)) < 0


def test_uniform_list_is_the_plain_speed():
    a = spec(gpus=1024, hb_domain=8, radix=64)
    b = spec(gpus=1024, hb_domain=8, radix=64, link_speed=[400, 400])
    assert a.digest() == b.digest() and b.to_dict()["link_speed"] == 400 and not b.tier_speed
    c = spec(gpus=1024, hb_domain=8, radix=[128, 64], link_speed="200,400")
    assert c.to_dict()["link_speed"] == [200, 400] and c.digest() != a.digest()
    assert build_spec(c.to_dict()).digest() == c.digest()  # summary.json's spec parses back to it


@pytest.mark.parametrize(
    "kw,field,text",
    [
        ({"link_speed": [200, 300]}, "link_speed[1]", "300 Gb/s is not a whole multiple of link_speed[0] 200 Gb/s"),
        ({"link_speed": [400, 200]}, "link_speed[1]", "not a whole multiple"),
        ({"link_speed": [200, 0]}, "link_speed", "(link_speed[1] is not)"),
        ({"link_speed": "200,x"}, "link_speed", "a list of them (one per link tier, GPU-leaf first)"),
        ({"link_speed": [100, 400], "radix": 36, "gpus": 4096}, "radix", "radix 36 at 100G does not split 1:1"),
        ({"link_speed": [200, 400], "radix": 64, "oversubscription": "5:1"}, "oversubscription", "uplinks 2x faster taking 2 ports each"),
    ],
)
def test_speed_input_errors(kw, field, text):
    with pytest.raises(InputError) as e:
        build_spec({"name": "t", "gpus": 1024, "hb_domain": 8, "radix": 64, **kw})
    assert any(p.path == field and text in p.message for p in e.value.problems), [(p.path, p.message) for p in e.value.problems]


def _with(f: Fabric, **cols) -> Fabric:
    base = {c: getattr(f.links, c).copy() for c in LINK_COLUMNS}
    base.update(cols)
    return Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**base), list(f.notes))


def test_mutation_uplink_bandwidth_off_its_ratio():
    """A leaf uplink cabled at 200G instead of 400G: the cable is off its tier's speed, and the leaf's
    uplink Gb/s no longer matches its 1:1 ratio (64 x 200G down, 31 x 400G + 1 x 200G up)."""
    s = spec(gpus=1024, hb_domain=8, radix=[128, 64], link_speed=[200, 400], arch="rail-optimized")
    f = clos.generate(s, "rail-optimized")
    i = int(np.flatnonzero(f.links.tier == 2)[0])
    sp = f.links.a_speed.copy()
    sp[i] = 200
    r = validate.validate(_with(f, a_speed=sp, z_speed=sp))
    leaf = f.switches[int(f.links.a_dev[i]) - f.gpus].name
    speed = [x for x in r.findings if x.check == "hygiene.link-speed"]
    assert len(speed) == 1 and "the spec's leaf-spine links are 400 Gb/s (200/400 by link tier)" in speed[0].message
    over = [x for x in r.findings if x.check == "capacity.oversubscription"]
    assert len(over) == 1 and over[0].devices == (leaf,)
    assert "64 downlink(s) (12800 Gb/s) but 32 uplink(s) (12600 Gb/s)" in over[0].message and "1:1 required (leaf tier)" in over[0].message


def test_mutation_extra_fast_uplink_over_the_port_budget():
    """A 33rd 400G uplink on a full 128-port (200G) leaf: 64 + 2 x 33 = 130 ports > 128."""
    s = spec(gpus=1024, hb_domain=8, radix=[128, 64], link_speed=[200, 400], arch="rail-optimized")
    f = clos.generate(s, "rail-optimized")
    L = f.links
    i = int(np.flatnonzero(L.tier == 2)[0])
    cols = {c: np.r_[getattr(L, c), getattr(L, c)[i]] for c in LINK_COLUMNS}
    cols["a_port"][-1] = 97  # after the 32 uplinks p65-p96: within the radix, but the ports are all taken
    r = validate.validate(Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**cols), []))
    leaf = f.switches[int(L.a_dev[i]) - f.gpus].name
    budget = [x for x in r.findings if x.check == "hygiene.port-budget" and x.devices == (leaf,)]
    assert len(budget) == 1
    assert f"{leaf} has 97 cables taking 130 ports at 200G on a 128-port (200G) switch; over budget on p97" in budget[0].message
    assert budget[0].cables == (len(L) + 1,)
    bad = [x for x in r.findings if x.check == "hygiene.bad-port"]  # p97 is no interface: 64 down + 32 uplinks
    assert len(bad) == 1 and f"but {leaf} has ports p1-p96" in bad[0].message


SMALL = ["--gpus", "1024", "--hb-domain", "8", "--radix", "128,576", "--link-speed", "200,400", "--arch", "rail-optimized", "--catalog", "chassis-400g"]


@pytest.fixture(scope="module")
def small_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("speeds") / "o"
    res = CliRunner().invoke(main, ["build", *SMALL, "--out", str(out), "--formats", "bom,cabling,topology,netbox,ibnetdiscover,pull-sheets"])
    assert res.exit_code == 0, res.output
    return out, res.output


def _cabling(out):
    import csv

    rows = list(csv.reader((out / "rail-optimized" / "cabling.csv").open()))
    return rows[0], rows[1:]


def test_cli_link_speed_list(small_build):
    out, output = small_build
    assert "radix 128/576, 200/400 Gb/s" in output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["spec"]["link_speed"] == [200, 400]
    topo = json.loads((out / "rail-optimized" / "topology.json").read_text())
    edges = topo.get("links") or topo.get("edges")
    by_tier = {}
    for e in edges:
        by_tier.setdefault(e["tier"], set()).add(e["speed"])
    assert by_tier == {1: {200}, 2: {400}}
    head, rows = _cabling(out)
    c = {x: i for i, x in enumerate(head)}
    assert {(r[c["tier"]], r[c["a_speed_gbps"]]) for r in rows} == {("1", "200"), ("2", "400")}
    # the cabling file reads back and validates against the spec
    v = CliRunner().invoke(main, ["validate", str(out / "rail-optimized" / "cabling.csv"), *SMALL])
    assert v.exit_code == 0, v.output


def test_breakout_cable_once_with_its_legs(small_build):
    """cabling.csv: each leg names its one breakout cable (the leaf cage it leaves); the BOM counts
    those cables, not the legs; leaf-spine rows name none."""
    out, _ = small_build
    head, rows = _cabling(out)
    c = {x: i for i, x in enumerate(head)}
    assert head[-1] == "breakout_cable"
    legs: dict[str, list] = {}
    for r in rows:
        if r[c["tier"]] == "1":
            legs.setdefault(r[c["breakout_cable"]], []).append(r)
        else:
            assert r[c["breakout_cable"]] == ""
    assert len(legs) == 1024 // 2 and all(len(x) == 2 for x in legs.values())
    for name, (x, y) in legs.items():
        sw, ports = name.split(":")
        assert x[c["z_device"]] == y[c["z_device"]] == sw
        assert {x[c["z_port"]], y[c["z_port"]]} == set(ports.split("-"))
        assert x[c["a_device"]] != y[c["a_device"]]  # fanned out to two NICs
    bom = json.loads((out / "rail-optimized" / "bom.json").read_text())
    cables = [x for x in bom["lines_by_tier"] if x["category"] == "cable" and x["tier"] == 1]
    assert sum(x["quantity"] for x in cables) == len(legs)


@pytest.mark.parametrize("where", ["other-switch", "other-cage"])
def test_mutation_breakout_fanout_split(small_build, tmp_path, where):
    """The legs of one breakout cable must leave one cage of one switch: move a leg to another leaf
    (or to another cage of the same leaf) and validate names the cable, its switches and both legs."""
    import csv

    out, _ = small_build
    head, rows = _cabling(out)
    c = {x: i for i, x in enumerate(head)}
    a = next(i for i, r in enumerate(rows) if r[c["z_device"]] == "leaf-g0-r0" and r[c["z_port"]] == "Ethernet1/5")  # p2: the Arista leaf's own names
    other = ("leaf-g0-r1", "Ethernet1/5") if where == "other-switch" else ("leaf-g0-r0", "Ethernet2/1")
    b = next(i for i, r in enumerate(rows) if (r[c["z_device"]], r[c["z_port"]]) == other)
    for col in ("z_device", "z_port"):  # swap the two legs' switch ends: both cables now split
        rows[a][c[col]], rows[b][c[col]] = rows[b][c[col]], rows[a][c[col]]
    path = tmp_path / "rail-optimized" / "cabling.csv"
    path.parent.mkdir()
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows([head, *rows])
    (tmp_path / "summary.json").write_text((out / "summary.json").read_text())
    res = CliRunner().invoke(main, ["validate", str(path), *SMALL, "--out", str(tmp_path / "v")])
    assert res.exit_code == 1, res.output
    report = json.loads((tmp_path / "v" / "rail-optimized" / "validation.json").read_text())
    found = [x for x in report["findings"] if x["check"] == "hygiene.breakout-split"]
    assert len(found) == 2
    first = next(x for x in found if "leaf-g0-r0:Ethernet1/1-Ethernet1/5" in x["message"])
    assert set(first["cables"]) == {int(rows[a][c["cable"]]), 1}
    if where == "other-switch":
        assert first["devices"] == ["leaf-g0-r0", "leaf-g0-r1"] and "has its 2 legs on 2 switches" in first["message"]
    else:
        assert first["devices"] == ["leaf-g0-r0"] and "has its 2 legs on ports of 2 cages" in first["message"]


def test_catalog_port_modes_decide_the_tier_switch(tmp_path):
    """A leaf tier at 200G needs a switch with a 200G mode AND a 400G mode on the same cages for its uplinks."""
    from topogen.util.resources import template_path

    with pytest.raises(InputError) as e:
        pipeline.build(spec(gpus=1024, hb_domain=8, radix=[128, 64], link_speed=[200, 400], arch="rail-optimized"))  # paper: 400G only
    assert any(p.path == "link_speed[0]" and "has no switch with 200G ports" in p.message for p in e.value.problems)
    text = template_path("catalogs", "chassis-400g").read_text()
    no_up = tmp_path / "no-up.yaml"
    no_up.write_text(text.replace("      - {speed: 400, radix: 64, per_cage: 1}\n", ""))
    with pytest.raises(InputError) as e:
        pipeline.build(spec(gpus=8192, hb_domain=8, radix=[128, 576], link_speed=[200, 400], catalog=str(no_up), arch="rail-optimized"))
    assert [p.path for p in e.value.problems] == ["link_speed[0]"]
    assert "no 200G switch with radix 128 that also runs its uplinks at 400G on the same cages" in e.value.problems[0].message


def test_preset_nic200_leaf400_breakout_bom():
    """The preset: 8,192 x 200G NICs on 128 leaves (64-port 400G boxes run as 128 x 200G) under 8 chassis
    spines; one breakout module and one breakout fibre per leaf cage, 2 NIC legs each."""
    ctx = pipeline.build(load_spec("nic200-leaf400"))
    assert ctx.valid
    f = ctx.fabrics["rail-optimized"]
    assert f.switches_per_tier() == [128, 8] and f.links_per_tier() == [8192, 4096]
    b = ctx.boms["rail-optimized"]
    lines = {(x.tier, x.category, x.end, x.sku): x.quantity for x in b.lines}
    assert lines[(1, "switch", "", "FIXED-64X400G")] == 128
    assert lines[(2, "switch", "", "CHASSIS-576X400G")] == 8
    cages = 128 * 32  # each leaf: 64 x 200G down on 32 cages
    assert lines[(1, "transceiver", "switch", "QDD-400G-SR8-2X200G")] == cages
    assert lines[(1, "transceiver", "gpu", "QSFP56-200G-SR4-NIC")] == 8192
    breakout = sum(q for (t, c, _e, sku), q in lines.items() if t == 1 and c == "cable")
    assert breakout == cages  # cables, not legs: 8,192 NIC links on 4,096 breakout cables
    assert all("2XMPO8" in sku for (t, c, _e, sku) in lines if t == 1 and c == "cable")
    assert lines[(2, "transceiver", "switch", "QDD-400G-DR4")] == 2 * 4096


def test_netbox_ports_at_their_speed_and_breakout_legs(small_build):
    """NetBox: a 128-port (200G) leaf has 96 interfaces, p1-p64 at 200G and p65-p96 at 400G; each leg of
    a breakout cable is a NetBox cable (its two NICs are two devices) whose comment names the breakout cable.
    Ports carry the Arista switch's own names: cages 1-32 split two ways (EthernetN/1, EthernetN/5), 33-64 whole."""
    import csv

    out, _ = small_build
    d = out / "rail-optimized" / "netbox"
    rows = [r for p in sorted(d.glob("interfaces*.csv")) for r in csv.DictReader(p.open())]
    leaf = [r for r in rows if r["device"].endswith(".leaf-g0-r0")]
    assert [r["name"] for r in leaf] == [f"Ethernet{c}/{j}" for c in range(1, 33) for j in (1, 5)] + [f"Ethernet{c}/1" for c in range(33, 65)]
    assert {r["speed"] for r in leaf[:64]} == {"200000000"} and {r["type"] for r in leaf[:64]} == {"200gbase-x-qsfp56"}
    assert {r["speed"] for r in leaf[64:]} == {"400000000"} and {r["type"] for r in leaf[64:]} == {"400gbase-x-osfp"}
    assert all(r["enabled"] == "true" for r in leaf)
    cables = [r for p in sorted(d.glob("cables*.csv")) for r in csv.DictReader(p.open())]
    legs = [r for r in cables if r["side_b_device"].endswith(".leaf-g0-r0") and r["side_b_name"] in ("Ethernet1/1", "Ethernet1/5")]
    assert [r["comments"] for r in legs] == ["gpu-leaf plane 0; leg of breakout cable leaf-g0-r0:Ethernet1/1-Ethernet1/5"] * 2
    assert len({r["label"] for r in cables}) == len(cables)  # labels stay unique per NetBox cable
    assert not any("breakout" in r["comments"] for r in cables if r["comments"].startswith("leaf-spine"))


def test_as_built_plan_against_itself_at_per_tier_speeds(small_build):
    """topogen diff of the plan against its own ibnetdiscover file: identical, and the design check
    (an as-built reading has no speeds: each cable takes its tier's) finds every cable at its speed."""
    out, _ = small_build
    topo = sorted((out / "rail-optimized" / "ibnetdiscover").glob("*.topo"))
    res = CliRunner().invoke(main, ["diff", str(out), *map(str, topo), "--json"])
    assert res.exit_code == 0, res.output
    result = json.loads(res.output)
    assert result["deviations"] == [] and result["design_check"]["valid"] is True


def test_workbook_cabling_names_each_legs_breakout_cable(tmp_path):
    """The workbook's Cabling sheets end with a Breakout cable column on a breakout fabric (the streamed
    sheets equal openpyxl's, split over two sheets); a fabric without breakout keeps its columns."""
    import openpyxl
    from test_workbook import _cells, _settings, make_ctx, write

    ctx = make_ctx(spec(gpus=256, hb_domain=8, radix=[64, 32], link_speed=[200, 400], catalog="chassis-400g", arch="rail-optimized"))
    fast = openpyxl.load_workbook(write(ctx, tmp_path, "f.xlsx", fast=True, max_rows=300))
    slow = openpyxl.load_workbook(write(ctx, tmp_path, "s.xlsx", fast=False, max_rows=300))
    assert fast.sheetnames == slow.sheetnames and "Cabling rail-optimized 2" in fast.sheetnames
    for a, b in zip(fast, slow):
        assert _cells(a) == _cells(b), a.title
        assert _settings(a) == _settings(b), a.title
    rows = [r for t in ("Cabling rail-optimized 1", "Cabling rail-optimized 2") for r in fast[t].iter_rows(values_only=True)]
    head = rows[0]
    assert head[-1] == "Breakout cable"
    data = [r for r in rows if r[0] != head[0]]
    legs = {}
    for r in data:
        if r[head.index("Tier")] == 1:
            legs.setdefault(r[-1], []).append(r)
        else:
            assert r[-1] is None
    assert len(legs) == 128 and all(len(x) == 2 and {y[head.index("Z-Node Name")] for y in x} == {k.split(":")[0]} for k, x in legs.items())
    plain = openpyxl.load_workbook(write(make_ctx(spec(gpus=256, hb_domain=8, radix=[64, 32], link_speed=400, catalog="chassis-400g", arch="rail-optimized")), tmp_path, "p.xlsx"))
    assert next(plain["Cabling rail-optimized"].iter_rows(values_only=True))[-1] == "Label"


def test_breakout_cable_must_fit_the_cage(tmp_path):
    """A 2-leg breakout cable on a port mode with one port per cage cannot be built: the catalog check says so."""
    from topogen.util.resources import template_path

    text = template_path("catalogs", "chassis-400g").read_text()
    bad = tmp_path / "one-per-cage.yaml"
    bad.write_text(text.replace("{speed: 200, radix: 128, per_cage: 2}", "{speed: 200, radix: 128, per_cage: 1}"))
    with pytest.raises(InputError) as e:
        pipeline.build(spec(gpus=8, hb_domain=8, radix=128, link_speed=200, catalog=str(bad), arch="rail-optimized"))
    # the loader refuses it: no rule can build that mode's links at any length, and it says why
    assert [p.message for p in e.value.problems] == [
        "FIXED-64X400G offers 200G ports, but no media rule builds 200G links on it at any length "
        "(media[0].cable: DAC-400G-2X200G-3M fans out to 2 links from one cage, but FIXED-64X400G has 1 port(s) per cage at 200G)"
    ]
    assert pipeline.build(spec(gpus=8, hb_domain=8, radix=128, link_speed=200, catalog="chassis-400g", arch="rail-optimized")).valid


def test_diagram_bundles_carry_their_tier_speed():
    """The overview and rail views label each bundle with its own tier's speed (200G NIC links, 400G uplinks)."""
    from topogen.exports.drawings import overview

    for arch, gpus in (("rail-optimized", 1024), ("rail-only", 8 * 200)):
        s = spec(gpus=gpus, hb_domain=8, radix=[128, 64], link_speed=[200, 400], arch=arch)
        f = clos.generate(s, arch)
        assert f.tiers == 2
        for view in (overview.overview(f), *((overview.rail_view(f),) if arch == "rail-only" else ())):
            by_tier = {b.tier: " ".join(b.lines) for b in view.bundles if b.lines}
            assert by_tier and all(("200G" in t) == (tier == 1) and ("400G" in t) == (tier == 2) for tier, t in by_tier.items()), by_tier
            rows = {j: " ".join(r) for j, r in view.rows.items()}
            assert "× 128-port" in rows[max(k for k in rows if "leaf" in rows[k])] and any("spines × 64-port" in r for r in rows.values()), rows
        assert "radix 128/64 · 200/400G · 2 tier(s)" in overview.overview(f).subtitle[0]


def test_pull_sheets_name_each_legs_breakout_cable(small_build):
    """Installers' pull sheets carry the breakout cable of each leg, as cabling.csv does (same cable ids)."""
    import csv

    out, _ = small_build
    pulls = list(csv.DictReader((out / "rail-optimized" / "pull-sheets.csv").open()))
    head, rows = _cabling(out)
    c = {x: i for i, x in enumerate(head)}
    by_id = {r[c["cable"]]: r[c["breakout_cable"]] for r in rows}
    assert len(pulls) == len(rows) and all(p["breakout_cable"] == by_id[p["cable"]] for p in pulls)
    assert sum(1 for p in pulls if p["breakout_cable"]) == 1024
