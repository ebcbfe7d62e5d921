"""Fabric shapes: rail-aligned leaves, build notes on extra switches, failure impact per
plane, and striping findings that name the wrong cable (issues 13 and 9)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from click.testing import CliRunner
from test_clos_grid import check_fabric

from topogen.checks import validate
from topogen.cli import main
from topogen.fabric import clos
from topogen.fabric.model import LINK_COLUMNS, Fabric, LinkTable
from topogen.spec import counts
from topogen.spec.cluster import build_spec


def spec(**kw):
    return build_spec({"name": "t", **kw})


# --- rail-aligned leaves -------------------------------------------------------------------------


def test_256_gpus_144_port_is_8_leaves_and_4_spines():
    s = spec(gpus=256, hb_domain=8, radix=144, arch="rail-optimized")
    f = clos.generate(s, "rail-optimized")
    assert f.switches_per_tier() == [8, 4]
    assert all(len(x.rails) == 1 for x in f.switches if x.tier == 1)
    assert tuple(f.switches_per_tier()) == counts.arch_counts(s, "rail-optimized").switches_per_tier
    assert validate.validate(f).valid


def test_packing_rails_on_a_leaf_is_explicit_and_noted():
    s = spec(gpus=256, hb_domain=8, radix=144, arch="rail-optimized", leaf_packing="shared")
    f = clos.generate(s, "rail-optimized")
    assert f.switches_per_tier() == [4, 2]
    assert any(n.startswith("leaf_packing shared: group 0 holds 32 HB domain(s), so 2 rails share") for n in f.notes)
    assert not any("leaf_packing" in n for n in clos.generate(spec(gpus=256, hb_domain=8, radix=144), "rail-optimized").notes)


@pytest.mark.parametrize("k,radix,d", [(8, 16, 9), (8, 64, 45), (8, 144, 19), (72, 64, 33), (4, 32, 70), (8, 32, 17)])
def test_every_group_gets_one_leaf_per_rail(k, radix, d):
    """Partly filled groups too: leaves = groups x K, each leaf one rail; closed form agrees."""
    s = spec(gpus=k * d, hb_domain=k, radix=radix, arch="rail-optimized")
    f = clos.generate(s, "rail-optimized")
    groups = -(-d // (radix // 2))
    assert f.switches_per_tier()[0] == groups * k
    assert all(len(x.rails) == 1 for x in f.switches if x.tier == 1)
    assert tuple(f.switches_per_tier()) == counts.arch_counts(s, "rail-optimized").switches_per_tier
    assert validate.validate(f).valid


def test_rail_only_packing_unchanged():
    """The paper's cost table: two 128-GPU rails per 256-port switch."""
    s = spec(gpus=32768, hb_domain=256, radix=256, arch="rail-only")
    c = counts.arch_counts(s, "rail-only")
    assert (c.tiers, c.switches) == (1, 128)


# --- build notes: more switches than ports alone need ---------------------------------------------


def test_note_balanced_striping_cores():
    f = clos.generate(spec(gpus=9216, hb_domain=72, radix=64, arch="rail-optimized"), "rail-optimized")
    assert f.switches_per_tier() == [288, 288, 256]
    note = next(n for n in f.notes if n.startswith("core:"))
    assert "core: 256 switches where ports alone need 144 (9216 uplinks, 64 down ports each): balanced striping" in note
    assert "9 spines with 288 uplinks fill 5 core(s) of 64 ports but get 8" in note


def test_note_full_provisioning():
    f = clos.generate(spec(gpus=920, hb_domain=8, radix=64, arch="rail-optimized"), "rail-optimized")
    assert "spine: 16 switches where ports alone need 15 (920 uplinks, 64 down ports each): provision: full cables all 1024 uplinks" in f.notes[0]


def test_note_minimal_provisioning_rounds_uplinks():
    """--provision minimal still gives 32 uplinks to a 31-down leaf: the note says why."""
    f = clos.generate(spec(gpus=1016, hb_domain=8, radix=64, arch="rail-optimized", provision="minimal"), "rail-optimized")
    assert f.notes == [
        "provision: minimal: 8 leaf(s) with 31 downlink(s) in use need 31 uplink(s) but get 32: balanced striping gives each the same number of "
        "parallel links to each of the 16 spines of its stripe, so its uplinks round up to a multiple of 16"
    ]
    ups = np.bincount(f.links.a_dev[f.links.tier == 2] - f.gpus)
    assert sorted(set(ups[:32].tolist())) == [32]


@pytest.mark.parametrize("gpus,k,radix", [(1024, 8, 64), (2048, 8, 64), (32768, 256, 64), (16, 8, 16)])
def test_no_note_when_ports_decide(gpus, k, radix):
    for arch in ("rail-optimized", "rail-only"):
        f = clos.generate(spec(gpus=gpus, hb_domain=k, radix=radix), arch)
        assert not any("ports alone" in n or "provision:" in n for n in f.notes), f.notes


def test_notes_count_matches_wiring_over_grid():
    """Whenever a note says 'X switches where ports alone need Y', X is the tier's real count."""
    for k, radix, d in [(8, 16, 63), (72, 64, 128), (8, 64, 115), (8, 12, 45), (2, 8, 137)]:
        s = spec(gpus=k * d, hb_domain=k, radix=radix)
        for arch in s.arches:
            f = clos.generate(s, arch)
            per = dict(zip(["leaf", "spine", "core", "tier4", "tier5", "tier6"], f.switches_per_tier()))
            for n in f.notes:
                n = n.removeprefix("in each rail's Clos, ")
                if "ports alone" in n:
                    role, rest = n.split(": ", 1)
                    x, y = int(rest.split(" ")[0]), int(rest.split("need ")[1].split(" ")[0])
                    assert x > y
                    mult = k if arch == "rail-only" else 1
                    assert per[role] == x * mult


# --- failure impact per plane ---------------------------------------------------------------------


def test_two_planes_one_leaf_down_cuts_off_nobody(tmp_path):
    """A 2-plane fabric: one leaf down cuts off 0 GPUs; its 8 GPUs lose half their bandwidth.

    The same figures in summary.json, validation.json, the workbook and the CLI."""
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "--gpus", "128", "--hb-domain", "8", "--radix", "16", "--planes", "2", "--arch", "rail-optimized", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "one leaf down cuts off 0 GPU(s), 8 GPU(s) lose 50% of their bandwidth" in res.output
    leaf = json.loads((out / "summary.json").read_text())["architectures"]["rail-optimized"]["validation"]["failure_impact"]["switch"]["leaf"]
    assert (leaf["gpus_cut_off"], leaf["gpus_degraded"], leaf["degraded_bandwidth_lost"]) == (0, 8, 0.5)
    assert leaf["gpu_bandwidth_lost_gbps"] == 8 * 400
    assert leaf["capacity_lost"]["gpu-leaf"] == pytest.approx(8 / 256)
    assert leaf["capacity_lost_in_plane"]["gpu-leaf"] == pytest.approx(8 / 128)
    v = json.loads((out / "rail-optimized" / "validation.json").read_text())
    assert json.dumps(v).count('"gpus_degraded": 8') >= 1
    info = [x for x in v["findings"] if x["check"] == "failure.switch" and "leaf" in x["devices"][0]]
    assert "0 GPU(s) lose their network path, 8 GPU(s) keep a path but lose 50% of their bandwidth" in info[0]["message"]
    wb = openpyxl.load_workbook(next(out.glob("*.xlsx")), read_only=True)
    cells = {str(r[1]): r[2] for r in wb["Validation"].iter_rows(values_only=True) if r and len(r) > 2 and r[0] == "rail-optimized"}
    assert cells["failure_impact.switch.leaf.gpus_cut_off"] == 0
    assert cells["failure_impact.switch.leaf.gpus_degraded"] == 8


def test_one_plane_leaf_down_cuts_off_its_gpus():
    f = clos.generate(spec(gpus=128, hb_domain=8, radix=16, arch="rail-optimized"), "rail-optimized")
    leaf = validate.validate(f).figures["failure_impact"]["switch"]["leaf"]
    assert (leaf["gpus_cut_off"], leaf["gpus_degraded"]) == (8, 0)


# --- striping findings name the wrong cable -----------------------------------------------------


def _with(f: Fabric, **cols) -> Fabric:
    base = {c: getattr(f.links, c).copy() for c in LINK_COLUMNS}
    base.update(cols)
    return Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**base), list(f.notes))


def _swap_uppers(f: Fabric, i: int, j: int) -> Fabric:
    z, zp = f.links.z_dev.copy(), f.links.z_port.copy()
    z[i], z[j], zp[i], zp[j] = z[j], z[i], zp[j], zp[i]
    return _with(f, z_dev=z, z_port=zp)


STRIPE_CASES = [
    ({"gpus": 504, "hb_domain": 8, "radix": 16}, "rail-optimized"),
    ({"gpus": 504, "hb_domain": 8, "radix": 16}, "rail-only"),
    ({"gpus": 1024, "hb_domain": 8, "radix": 32, "planes": 2}, "rail-optimized"),
    ({"gpus": 9216, "hb_domain": 72, "radix": 64}, "rail-optimized"),
]


@pytest.mark.parametrize("kw,arch", STRIPE_CASES, ids=[f"{a}-{k['gpus']}" for k, a in STRIPE_CASES])
def test_striping_findings_name_only_touched_switches(kw, arch):
    """Swap the upper ends of two switch-to-switch cables at many places; measure how many
    striping findings name a switch the swap did not touch (inferring stripes from the
    wiring, 67-94% did). Against the design's table: none, and the moved cables are named."""
    f = clos.generate(spec(**kw), arch)
    L = f.links
    n = f.gpus
    rng = np.random.default_rng(7)
    findings = untouched = 0
    for tier in range(2, f.tiers + 1):
        idx = np.flatnonzero(L.tier == tier)
        for _ in range(6):
            i, j = (int(x) for x in rng.choice(idx, 2, replace=False))
            if L.z_dev[i] == L.z_dev[j] or L.a_dev[i] == L.a_dev[j]:
                continue
            touched = {f.switches[int(d) - n].name for d in (L.a_dev[i], L.a_dev[j], L.z_dev[i], L.z_dev[j])}
            r = validate.validate(_swap_uppers(f, i, j))
            hits = [x for x in r.findings if x.check == "capacity.striping"]
            assert hits, "a swapped uplink must be found"
            for x in hits:
                findings += 1
                untouched += not set(x.devices) <= touched
                assert x.devices[0] in touched
            named = {c for x in hits for c in x.cables}
            assert {i + 1, j + 1} <= named
    assert findings and untouched == 0, f"{untouched}/{findings} striping findings name untouched switches"


def test_removed_uplink_names_its_port():
    f = clos.generate(spec(gpus=504, hb_domain=8, radix=16, arch="rail-optimized"), "rail-optimized")
    i = int(np.flatnonzero(f.links.tier == 3)[5])
    keep = np.ones(len(f.links), bool)
    keep[i] = False
    g = Fabric(f.spec, f.arch, f.tiers, f.switches, f.links.take(keep), [])
    hits = [x for x in validate.validate(g).findings if x.check == "capacity.striping"]
    lo, port = f.switches[int(f.links.a_dev[i]) - f.gpus].name, int(f.links.a_port[i])
    assert len(hits) == 1 and hits[0].devices == (lo, f.switches[int(f.links.z_dev[i]) - f.gpus].name)
    assert f"uplink port(s) without a cable: p{port}" in hits[0].message


def test_validate_file_checks_against_design(tmp_path: Path):
    """A cabling.csv with two leaf uplinks swapped: the CLI names both cables and only their switches."""
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["build", "demo", "--arch", "rail-optimized", "--out", str(out), "--formats", "cabling"])
    assert r.exit_code == 0, r.output
    path = out / "rail-optimized" / "cabling.csv"
    lines = path.read_text().splitlines()
    head = next(k for k, x in enumerate(lines) if x.startswith("cable,"))
    cols = lines[head].split(",")
    rows = [x.split(",") for x in lines[head + 1 :]]
    up = [k for k, x in enumerate(rows) if x[cols.index("tier")] == "2"]
    a, b = next((p, q) for p in up for q in up if rows[p][cols.index("a_device")] != rows[q][cols.index("a_device")] and rows[p][cols.index("z_device")] != rows[q][cols.index("z_device")])
    for c in ("z_device", "z_port"):
        ci = cols.index(c)
        rows[a][ci], rows[b][ci] = rows[b][ci], rows[a][ci]
    path.write_text("\n".join(lines[: head + 1] + [",".join(x) for x in rows]) + "\n")
    res = CliRunner().invoke(main, ["validate", str(path), "--spec", "demo", "--arch", "rail-optimized"])
    assert res.exit_code == 1
    striping = [x for x in res.output.splitlines() if "capacity.striping" in x]
    assert len(striping) == 2
    touched = {rows[a][cols.index(c)] for c in ("a_device", "z_device")} | {rows[b][cols.index(c)] for c in ("a_device", "z_device")}
    for x in striping:
        named = {w.split(":")[0] for w in x.replace(",", " ").replace("(", " ").split() if w.startswith(("leaf-", "spine-"))}
        assert named <= touched, (named, touched)


# --- per-tier radix and oversubscription --------------------------------------------------------

TIER_GRID = [
    {"gpus": 4096, "hb_domain": 8, "radix": [32, 288]},
    {"gpus": 16384, "hb_domain": 8, "radix": [32, 288]},
    {"gpus": 9216, "hb_domain": 72, "radix": [64, 576]},
    {"gpus": 1000, "hb_domain": 8, "radix": [16, 32, 64], "oversubscription": ["3:1", "1:1"]},
    {"gpus": 2048, "hb_domain": 8, "radix": [16, 32], "oversubscription": ["1:1", "3:1"]},
    {"gpus": 8192, "hb_domain": 8, "radix": 64, "oversubscription": {"spine": "15:1"}},
    {"gpus": 584, "hb_domain": 8, "radix": [8, 16], "oversubscription": {"leaf": "3:1", "spine": "7:1"}},
    {"gpus": 1016, "hb_domain": 8, "radix": [16, 32], "provision": "minimal", "planes": 2},
    {"gpus": 720, "hb_domain": 72, "radix": "16,64"},
]


@pytest.mark.parametrize("kw", TIER_GRID, ids=[str(i) for i in range(len(TIER_GRID))])
def test_per_tier_closed_form_equals_wiring(kw):
    s = spec(**kw)
    for arch in s.arches:
        f = clos.generate(s, arch)
        c = counts.arch_counts(s, arch)
        assert (tuple(f.switches_per_tier()), tuple(f.links_per_tier())) == (c.switches_per_tier, c.links_per_tier)
        assert f.unused_switch_ports() == c.unused_switch_ports
        check_fabric(f, c)  # and every per-link invariant of the closed-form grid (ports, speeds, tiers)
        for x in f.switches:  # each switch carries its own tier's radix and never exceeds it
            assert x.radix == s.radix_at(x.tier)
        assert (f.ports_used() <= np.array([x.radix for x in f.switches])).all()
        r = validate.validate(f)
        assert r.valid, validate.render(r)
        per = r.figures["oversubscription_per_tier"]
        for j, role in enumerate(per, start=1):  # every tier's ratio honoured
            assert per[role] is not None and per[role] <= s.ratio_at(j) + 1e-9


@pytest.mark.parametrize("kw", [k for k in TIER_GRID if k["gpus"] <= 2048], ids=lambda k: f"{k['gpus']}-{k['radix']}")
def test_max_flow_confirms_the_promised_ratio(kw):
    """Max-flow across the top: at least what one half injects divided by the product of the
    ratios of the tiers below the top (1 at 1:1: full bisection)."""
    s = spec(**kw)
    for arch in s.arches:
        f = clos.generate(s, arch)
        bis = validate.validate(f).figures["bisection"]
        if not bis["checked"]:
            continue
        promised = float(np.prod([s.ratio_at(j) for j in range(1, f.tiers)]))
        assert bis["full"] and bis["worst_flow_gbps"] >= bis["demand_gbps"]
        d = min(s.domains // 2, s.domains - s.domains // 2)  # the cut: HB domains 0..D/2-1 | the rest
        half = d * s.hb_domain if arch == "rail-optimized" else d
        assert bis["demand_gbps"] == int(s.link_speed * half / promised)


def test_radix_list_semantics():
    s = spec(gpus=4096, hb_domain=8, radix="32,288")
    assert (s.radix, s.radix_at(1), s.radix_at(2), s.radix_at(5)) == (32, 32, 288, 288)
    assert s.to_dict()["radix"] == [32, 288]
    assert spec(gpus=4096, hb_domain=8, radix=[64, 64]).to_dict()["radix"] == 64  # a uniform list is the plain radix
    assert spec(gpus=1024, hb_domain=8, radix=64).digest() == spec(gpus=1024, hb_domain=8, radix=[64]).digest()
    o = spec(gpus=8192, hb_domain=8, radix=64, oversubscription={"spine": "15:1"})
    assert (o.ratio_text_at(1), o.ratio_text_at(2), o.ratio_text_at(3), o.oversubscription) == ("1:1", "15:1", "1:1", "1:1")
    assert o.to_dict()["oversubscription"] == ["1:1", "15:1"]


def test_unused_top_ratio_is_noted():
    f = clos.generate(spec(gpus=1024, hb_domain=8, radix=64, oversubscription=["1:1", "15:1"], arch="rail-optimized"), "rail-optimized")
    assert f.tiers == 2
    assert "oversubscription 15:1 of the spine tier is not used: this 2-tier fabric's top tier uses every port down" in f.notes


@pytest.mark.parametrize(
    "kw,field,text",
    [
        ({"radix": [32, 0]}, "radix", "a list of them (one per switch tier, leaf first)"),
        ({"radix": "32,x"}, "radix", "a list of them"),
        ({"radix": [16, 33], "gpus": 4096}, "radix", "radix 33 of the spine tier is odd"),
        ({"oversubscription": ["1:1", "5:1"], "radix": [32, 64], "gpus": 65536}, "oversubscription[1]", "does not split a 64-port spine"),
        ({"oversubscription": {"agg": "3:1"}}, "oversubscription", "unknown tier role(s) 'agg'"),
        ({"oversubscription": ["1:1", "1:2"]}, "oversubscription[1]", "below 1:1"),
    ],
)
def test_per_tier_input_errors(kw, field, text):
    from topogen.util.errors import InputError

    base = {"name": "t", "gpus": 1024, "hb_domain": 8, "radix": 32}
    with pytest.raises(InputError) as e:
        build_spec({**base, **kw})
    assert any(p.path == field and text in p.message for p in e.value.problems), [(p.path, p.message) for p in e.value.problems]


def test_cli_radix_list_and_chassis_priced(tmp_path):
    """--radix 32,288 with the chassis catalog: the spine line is the 288-port chassis, priced per box."""
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "--gpus", "4096", "--hb-domain", "8", "--radix", "32,288", "--arch", "rail-optimized", "--catalog", "chassis-400g", "--out", str(out), "--formats", "bom"])
    assert res.exit_code == 0, res.output
    assert "radix 32/288" in res.output
    lines = json.loads((out / "rail-optimized" / "bom.json").read_text())
    text = json.dumps(lines)
    assert "CHASSIS-288X400G" in text and "FIXED-32X400G" in text
    paper = CliRunner().invoke(main, ["build", "--gpus", "4096", "--hb-domain", "8", "--radix", "32,288", "--arch", "rail-optimized", "--out", str(tmp_path / "p"), "--formats", "bom"])
    assert paper.exit_code == 0
    from topogen import pipeline
    from topogen.spec.cluster import load_spec

    b = pipeline.build(load_spec(None, {"name": "p", "gpus": "4096", "hb_domain": "8", "radix": "32,288", "arch": "rail-optimized"})).boms["rail-optimized"]
    sw = {x.tier: x for x in b.lines if x.category == "switch"}
    assert (sw[1].quantity, sw[1].unit_price, sw[2].quantity, sw[2].unit_price) == (256, 32 * 748, 16, 288 * 748)


def test_catalog_without_the_tier_radix_names_the_tier():
    from topogen import pipeline
    from topogen.util.errors import InputError

    with pytest.raises(InputError) as e:
        pipeline.build(spec(gpus=4096, hb_domain=8, radix=[32, 144], catalog="chassis-400g"))
    assert any("no 400G switch with radix 144 (the spine tier)" in p.message for p in e.value.problems)


def test_mutation_tier_over_its_oversubscription():
    """Spines allowed 3:1: drop one uplink of a spine and it runs over its tier's ratio."""
    s = spec(gpus=2048, hb_domain=8, radix=[16, 32], oversubscription=["1:1", "3:1"], arch="rail-optimized")
    f = clos.generate(s, "rail-optimized")
    up = np.flatnonzero(f.links.tier == 3)
    i = int(up[0])
    keep = np.ones(len(f.links), bool)
    keep[i] = False
    g = Fabric(f.spec, f.arch, f.tiers, f.switches, f.links.take(keep), [])
    spine = f.switches[int(f.links.a_dev[i]) - f.gpus].name
    hits = [x for x in validate.validate(g).findings if x.check == "capacity.oversubscription"]
    assert len(hits) == 1 and hits[0].devices == (spine,)
    assert "at most 3:1 required (spine tier)" in hits[0].message
    # its leaves stay 1:1: a leaf that loses an uplink is over its own tier's ratio
    leaf_up = int(np.flatnonzero(f.links.tier == 2)[0])
    keep = np.ones(len(f.links), bool)
    keep[leaf_up] = False
    h = validate.validate(Fabric(f.spec, f.arch, f.tiers, f.switches, f.links.take(keep), []))
    assert any(x.check == "capacity.oversubscription" and "1:1 required" in x.message for x in h.findings)


def test_chassis_spine_preset():
    """The leaf32-spine288 preset (a chassis-spine design): 2 tiers with 288-port spines where uniform 32-port needs 3."""
    from topogen import pipeline
    from topogen.spec.cluster import load_spec

    s = load_spec("leaf32-spine288")
    ctx = pipeline.build(s)
    assert ctx.valid
    f = ctx.fabrics["rail-optimized"]
    assert f.switches_per_tier() == [256, 16]
    assert counts.arch_counts(build_spec({"gpus": 4096, "hb_domain": 8, "radix": 32}), "rail-optimized").switches_per_tier == (256, 256, 128)
    sw = {x.tier: x.sku for x in ctx.boms["rail-optimized"].lines if x.category == "switch"}
    assert sw == {1: "FIXED-32X400G", 2: "CHASSIS-288X400G"}
