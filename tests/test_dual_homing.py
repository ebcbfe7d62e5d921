"""Dual-homed NICs (``homing: dual``): spec rules, wiring invariants, mutations, failure impact, bisection.

A dual-homed GPU has two NIC ports per plane, on two different leaves of its rail
(a leaf pair, ``-a`` and ``-b``) with no cable between the two leaves; the pair
shares the tiers above. One leaf down leaves every GPU a path at half bandwidth.
"""

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
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

ARCHES = ("rail-optimized", "rail-only")
# 63 HB domains of 8 on 16-port switches: 3 tiers rail-optimized, 2 per rail in rail-only
SPEC = build_spec({"name": "dh", "gpus": 504, "hb_domain": 8, "radix": 16, "homing": "dual"})


@pytest.fixture(scope="module")
def fabrics() -> dict[str, Fabric]:
    return {a: clos.generate(SPEC, a) for a in ARCHES}


# --- spec ---------------------------------------------------------------------------------------


def spec_of(**kw):
    return build_spec({"gpus": 64, "hb_domain": 8, "radix": 16, **kw})


def test_nic_ports_planes_and_homing_relate():
    assert (spec_of().nic_ports, spec_of().planes, spec_of().homes) == (1, 1, 1)
    assert (spec_of(nic_ports=2).planes, spec_of(nic_ports=2).homing) == (2, "planes")  # nic_ports: 2 == planes: 2
    assert spec_of(nic_ports=2).to_dict() == spec_of(planes=2).to_dict()
    dual = spec_of(homing="dual")
    assert (dual.nic_ports, dual.planes, dual.homes) == (2, 1, 2)
    assert spec_of(homing="dual", nic_ports=4).planes == 2
    assert spec_of(homing="dual", nic_ports=4, planes=2) == spec_of(homing="dual", planes=2)
    assert dual.scale_out_gbps == 800.0  # B_S: both ports of the pair
    # the default spec hashes as before the fields existed; a dual spec echoes both and parses back
    assert "homing" not in spec_of().to_dict() and "nic_ports" not in spec_of().to_dict()
    d = dual.to_dict()
    assert (d["homing"], d["nic_ports"], d["planes"]) == ("dual", 2, 1)
    assert build_spec(d) == dual


@pytest.mark.parametrize(
    "data,field,words",
    [
        ({"homing": "triple"}, "homing", ("planes", "dual")),
        ({"nic_ports": 0}, "nic_ports", ("1 to 16",)),
        ({"nic_ports": "two"}, "nic_ports", ("whole number",)),
        ({"homing": "dual", "nic_ports": 3}, "nic_ports", ("odd", "even")),
        ({"homing": "dual", "nic_ports": 2, "planes": 2}, "nic_ports", ("contradicts planes 2", "nic_ports: 4")),
        ({"nic_ports": 4, "planes": 2}, "nic_ports", ("contradicts planes 2", "homing: dual")),
        ({"homing": "dual", "nic_ports": 32}, "nic_ports", ("from 1 to 16",)),
    ],
)
def test_bad_input_names_the_field(data, field, words):
    with pytest.raises(InputError) as e:
        spec_of(**data)
    probs = [p for p in e.value.problems if p.path == field]
    assert probs, e.value.render()
    text = probs[0].message + " " + probs[0].hint
    for w in words:
        assert w in text, text


def test_cli_contradiction_exits_2_naming_the_field():
    r = CliRunner().invoke(main, ["validate", "--gpus", "64", "--hb-domain", "8", "--radix", "16", "--homing", "dual", "--nic-ports", "2", "--planes", "2"])
    assert r.exit_code == 2
    assert "nic_ports" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["validate", "--gpus", "64", "--hb-domain", "8", "--radix", "16", "--homing", "stacked"])
    assert r.exit_code == 2 and "homing" in r.output and "dual" in r.output


# --- wiring ----------------------------------------------------------------------------------------


def pairs_of(f: Fabric) -> tuple[np.ndarray, np.ndarray]:
    """(leaf of nic 2p, leaf of nic 2p+1) per GPU and plane."""
    L = f.links
    g = L.tier == 1
    n, nics = f.gpus, f.spec.nic_ports
    leaf = np.full(n * nics, -1, np.int64)
    leaf[L.a_dev[g] * nics + L.a_port[g]] = L.z_dev[g]
    leaf = leaf.reshape(n, f.spec.planes, 2)
    return leaf[..., 0], leaf[..., 1]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("n,k,r,kw", [(504, 8, 16, {}), (64, 8, 16, {"nic_ports": 4}), (1024, 8, 64, {"oversubscription": "3:1"}), (8, 8, 64, {}), (72 * 5, 72, 32, {})])
def test_pairs_are_two_leaves_of_the_rail_serving_the_same_gpus(arch, n, k, r, kw):
    spec = build_spec({"gpus": n, "hb_domain": k, "radix": r, "homing": "dual", **kw})
    f = clos.generate(spec, arch)
    a, b = pairs_of(f)
    assert np.all(a >= 0) and np.all(b >= 0) and np.all(a != b)
    sw = f.switches
    for x, y in {(int(p), int(q)) for p, q in zip(a.ravel(), b.ravel())}:
        sa, sb = sw[x - n], sw[y - n]
        assert sa.tier == sb.tier == 1 and sa.plane == sb.plane and sa.rails == sb.rails
        assert sa.name.endswith("-a") and sb.name == sa.name[:-2] + "-b"
    # a leaf's partner serves exactly its GPUs: the pair map is one-to-one
    partner = dict(zip(a.ravel().tolist(), b.ravel().tolist()))
    assert len(set(partner.values())) == len(partner)
    # no cable joins two leaves
    tiers = np.concatenate([np.zeros(n, np.int8), f.switch_tiers()])
    assert not np.any((tiers[f.links.a_dev] == 1) & (tiers[f.links.z_dev] == 1))
    # leaf count doubles against single-homing at the same port budget (rail-only: against one switch
    # per rail, since a dual-homed rail never packs with another on a switch)
    single = build_spec({"gpus": n, "hb_domain": k, "radix": r, "planes": spec.planes, "rail_packing": "dedicated", **{x: v for x, v in kw.items() if x != "nic_ports"}})
    one = counts.arch_counts(single, arch)
    if one.tiers > 1 or arch == "rail-only":  # (a one-switch rail-optimized cluster has no leaf per rail to double)
        assert f.switches_per_tier()[0] == 2 * one.switches_per_tier[0]
    assert validate.validate(f).valid


# --- mutations ---------------------------------------------------------------------------------------


def with_links(f: Fabric, **cols) -> Fabric:
    base = {c: getattr(f.links, c).copy() for c in LINK_COLUMNS}
    base.update(cols)
    return Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**base), list(f.notes))


def name(f: Fabric, dev: int) -> str:
    return f.switch(dev).name


def nic_links(f: Fabric, gpu: int) -> tuple[int, int]:
    """Row indices of the GPU's nic0 and nic1 cables."""
    L = f.links
    return tuple(int(np.flatnonzero((L.a_dev == gpu) & (L.a_port == p) & (L.tier == 1))[0]) for p in (0, 1))


def moved_to_free_port(f: Fabric, link: int, leaf: int) -> tuple[Fabric, int]:
    """The fabric with cable ``link`` moved to the first free down port of ``leaf``, and that port."""
    L = f.links
    used = set(L.z_port[L.z_dev == leaf].tolist())
    free = [p for p in range(1, f.switch(leaf).down_ports + 1) if p not in used][0]
    z, zp = L.z_dev.copy(), L.z_port.copy()
    z[link], zp[link] = leaf, free
    return with_links(f, z_dev=z, z_port=zp), free


@pytest.mark.parametrize("where", ("first", "middle", "last"))
@pytest.mark.parametrize("arch", ARCHES)
def test_pair_on_one_leaf_is_found(fabrics, arch, where):
    """Both ports of a GPU's pair on one leaf: the b-port's cable moved to a free port of the a-leaf."""
    f = fabrics[arch]
    L = f.links
    last = f.gpus - 1 - {"first": 7, "middle": 4, "last": 0}[where]  # the last domain: its leaves have a free port
    a_link, b_link = nic_links(f, last)
    leaf = int(L.z_dev[a_link])
    bad, free = moved_to_free_port(f, b_link, leaf)
    r = validate.validate(bad)
    hits = [x for x in r.findings if x.check == "rails.pair-one-leaf" and x.severity == "error"]
    assert len(hits) == 1, [x.message for x in r.findings if x.severity == "error"]
    assert name(f, leaf) in hits[0].devices and f"{name(f, leaf)}:p{free}" in hits[0].ports
    assert hits[0].cables == (a_link + 1, b_link + 1)
    assert not r.valid


@pytest.mark.parametrize("where", ("first", "middle"))
@pytest.mark.parametrize("arch", ARCHES)
def test_pair_split_over_two_pairs_is_found(fabrics, arch, where):
    """nic1 moved from the -b leaf of its pair to the -b leaf of another pair of its rail (free port of the last pair)."""
    f = fabrics[arch]
    L = f.links
    a, b = pairs_of(f)
    g = {"first": 3, "middle": f.gpus // 2 + 3}[where]
    a_link, b_link = nic_links(f, g)
    other = int(b[f.gpus - 8 + g % 8, 0])  # the -b leaf of the last pair on g's rail
    assert other != int(L.z_dev[b_link]) and f.switch(other).rails == f.switch(int(L.z_dev[b_link])).rails
    bad, free = moved_to_free_port(f, b_link, other)
    r = validate.validate(bad)
    hits = [x for x in r.findings if x.check == "rails.pair-split" and x.severity == "error"]
    assert len(hits) == 1, [x.message for x in r.findings if x.severity == "error"]
    leaf_a, leaf_b = name(f, int(L.z_dev[a_link])), name(f, other)
    assert len(hits[0].devices) == 3 and hits[0].devices[1:] == (leaf_a, leaf_b)
    assert leaf_a in hits[0].message and leaf_b in hits[0].message and name(f, int(L.z_dev[b_link])) in hits[0].hint
    assert f"{leaf_b}:p{free}" in hits[0].ports and hits[0].cables == (a_link + 1, b_link + 1)
    assert not r.by_check("rails.pair-one-leaf") and not r.valid
    assert r.figures["leaf_pairs"] == validate.validate(f).figures["leaf_pairs"]


@pytest.mark.parametrize("where", ("first", "middle", "last"))
@pytest.mark.parametrize("arch", ARCHES)
def test_link_between_the_two_leaves_of_a_pair_is_found(fabrics, arch, where):
    """A cable between the two ToRs of a pair (a stacking link): found and named, not just a tier skip."""
    f = fabrics[arch]
    a, b = pairs_of(f)
    pairs = sorted({(int(x), int(y)) for x, y in zip(a.ravel(), b.ravel())})
    x, y = pairs[{"first": 0, "middle": len(pairs) // 2, "last": len(pairs) - 1}[where]]
    # the last domain's leaves have a free down port; elsewhere use the port count (a fresh port past the radix is reported too)
    used = lambda d: set(f.links.z_port[f.links.z_dev == d].tolist()) | set(f.links.a_port[f.links.a_dev == d].tolist())  # noqa: E731
    px = min(set(range(1, f.switch(x).radix + 1)) - used(x), default=1)
    py = min(set(range(1, f.switch(y).radix + 1)) - used(y), default=1)
    row = LinkTable.from_columns(a_dev=[x], a_port=[px], z_dev=[y], z_port=[py], tier=[1], plane=[0], a_speed=[400], z_speed=[400])
    bad = Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.concat([f.links, row]), list(f.notes))
    r = validate.validate(bad)
    hits = [h for h in r.findings if h.check == "rails.pair-link" and h.severity == "error"]
    assert len(hits) == 1, [h.message for h in r.findings if h.severity == "error"]
    assert {name(f, x), name(f, y)} <= set(hits[0].devices)
    assert hits[0].cables == (len(f.links) + 1,)
    # a leaf-leaf cable between leaves of different pairs is a tier skip, not a pair link
    other = pairs[0][0] if (x, y) != pairs[0] else pairs[1][0]
    row2 = LinkTable.from_columns(a_dev=[x], a_port=[px], z_dev=[other], z_port=[1], tier=[1], plane=[0], a_speed=[400], z_speed=[400])
    r2 = validate.validate(Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.concat([f.links, row2]), list(f.notes)))
    assert not r2.by_check("rails.pair-link") and r2.by_check("tiers.adjacent")


# --- failure impact and bisection ---------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHES)
def test_one_leaf_down_halves_bandwidth_and_cuts_no_gpu(fabrics, arch):
    r = validate.validate(fabrics[arch])
    leaf = r.figures["failure_impact"]["switch"]["leaf"]
    assert leaf["gpus_cut_off"] == 0
    assert leaf["gpus_degraded"] == 8  # a full leaf serves 8 GPUs (16-port leaf, 8 down)
    assert leaf["degraded_bandwidth_lost"] == 0.5
    assert leaf["gpu_bandwidth_lost_gbps"] == 8 * 400
    cable = r.figures["failure_impact"]["link"]["gpu-leaf"]
    assert (cable["gpus_cut_off"], cable["gpus_degraded"], cable["degraded_bandwidth_lost"]) == (0, 1, 0.5)
    # single-homed, the same leaf down cuts its GPUs off
    single = validate.validate(clos.generate(build_spec({"gpus": 504, "hb_domain": 8, "radix": 16}), arch))
    assert single.figures["failure_impact"]["switch"]["leaf"]["gpus_cut_off"] == 8


def test_failure_impact_reaches_summary_validation_and_cli(tmp_path):
    spec = build_spec({"name": "dhb", "gpus": 64, "hb_domain": 8, "radix": 16, "homing": "dual", "arch": "rail-optimized"})
    ctx = pipeline.build(spec)
    from topogen.exports import EXPORTERS

    EXPORTERS["validation"](ctx, tmp_path)
    v = json.loads((tmp_path / "rail-optimized" / "validation.json").read_text())
    leaf = v["figures"]["failure_impact"]["switch"]["leaf"] if "figures" in v else None
    msgs = [x["message"] for x in v["findings"] if x["check"] == "failure.switch"]
    assert any("8 GPU(s) keep a path but lose 50% of their bandwidth" in m for m in msgs), msgs
    if leaf is not None:
        assert leaf["degraded_bandwidth_lost"] == 0.5
    r = CliRunner().invoke(main, ["build", "--gpus", "64", "--hb-domain", "8", "--radix", "16", "--homing", "dual", "--arch", "rail-optimized", "--out", str(tmp_path / "b"), "--formats", "validation"])
    assert r.exit_code == 0, r.output
    assert "one leaf down cuts off 0 GPU(s), 8 GPU(s) lose 50% of their bandwidth" in r.output
    s = json.loads((tmp_path / "b" / "summary.json").read_text())
    fi = json.dumps(s)
    assert '"degraded_bandwidth_lost": 0.5' in fi
    # the workbook's Validation sheet: the finding, and the key figure
    from openpyxl import load_workbook

    (tmp_path / "x").mkdir()
    wb = load_workbook(EXPORTERS["xlsx"](ctx, tmp_path / "x")[0], read_only=True)
    texts = [str(c) for row in wb["Validation"].iter_rows(values_only=True) for c in row if c is not None]
    assert any("8 GPU(s) keep a path but lose 50% of their bandwidth" in t for t in texts)
    assert any("degraded_bandwidth_lost" in t for t in texts), [t for t in texts if "failure" in t][:5]


@pytest.mark.parametrize("arch,k,radix,domains", [("rail-optimized", 8, 8, 17), ("rail-optimized", 4, 8, 9), ("rail-only", 1, 8, 38), ("rail-optimized", 8, 16, 21)])
def test_max_flow_confirms_full_bisection_dual_homed(arch, k, radix, domains):
    """Each GPU injects two ports' worth; every cut carries min(|A|, |B|) x 2 port units."""
    spec = build_spec({"gpus": k * domains, "hb_domain": k, "radix": radix, "arch": arch, "homing": "dual"})
    f = clos.generate(spec, arch)
    for cut, flow, a, b in cut_flows(f, per_gpu=2):
        assert flow == 2 * min(a, b), cut
    rep = validate.validate(f)
    assert rep.figures["bisection"]["checked"] and rep.figures["bisection"]["full"]


# --- the Alibaba HPN preset -------------------------------------------------------------------------


def test_alibaba_hpn_preset_reproduces_the_published_pod():
    """Alibaba HPN (SIGCOMM 2024; recalled, see the preset's comment): segments, ToRs, planes, 15:1."""
    from topogen.spec.cluster import load_spec

    spec = load_spec("alibaba-hpn")
    assert (spec.gpus, spec.active_gpus, spec.nodes, spec.backup_nodes) == (16320, 15 * 1024, 15 * 136, 15 * 8)
    assert (spec.nic_ports, spec.homing, spec.speed_at(1), spec.speed_at(2)) == (2, "dual", 200, 400)
    f = clos.generate(spec, "rail-optimized")
    n = f.gpus
    L = f.links
    assert f.switches_per_tier() == [15 * 16, 2 * 60, 60]  # 16 ToRs per segment; 60 aggregation switches per plane
    assert f.links_per_tier() == [2 * 16320, 240 * 60, 120 * 8]
    assert tuple(f.switches_per_tier()) == counts.arch_counts(spec, "rail-optimized").switches_per_tier
    tiers = f.switch_tiers()
    down = np.bincount(L.z_dev - n, minlength=len(tiers))
    up = np.bincount(L.a_dev[L.a_dev >= n] - n, minlength=len(tiers))
    tor = tiers == 1
    # each ToR: (128 + 8) x 200G down, 60 x 400G up
    assert set(down[tor].tolist()) == {136} and set(up[tor].tolist()) == {60}
    assert set(L.a_speed[L.tier == 1].tolist()) == {200} and set(L.a_speed[L.tier > 1].tolist()) == {400}
    # each aggregation switch: 120 x 400G down, 8 x 400G up (15:1)
    agg = tiers == 2
    assert set(down[agg].tolist()) == {120} and set(up[agg].tolist()) == {8}
    # a segment (leaf group) has 16 ToRs: 8 rails x a pair
    groups = {}
    for s in f.switches:
        if s.tier == 1:
            groups.setdefault(s.block, []).append(s.name)
    assert len(groups) == 15 and {len(v) for v in groups.values()} == {16}
    # the two aggregation blocks are HPN's two planes: every -a ToR in one, every -b ToR in the other
    ls = L.tier == 2
    side = {f.switches[int(a) - n].name[-1] for a in L.a_dev[ls]}
    assert side == {"a", "b"}
    by_block = {}
    for a, z in zip(L.a_dev[ls].tolist(), L.z_dev[ls].tolist()):
        by_block.setdefault(f.switches[z - n].block, set()).add(f.switches[a - n].name[-1])
    assert by_block == {0: {"a"}, 1: {"b"}}
    r = validate.validate(f)
    assert r.valid, [x.message for x in r.findings if x.severity == "error"]
    leaf = r.figures["failure_impact"]["switch"]["leaf"]
    assert (leaf["gpus_cut_off"], leaf["gpus_degraded"], leaf["degraded_bandwidth_lost"]) == (0, 136, 0.5)
    assert r.figures["oversubscription_per_tier"] == {"leaf": round(136 * 200 / (60 * 400), 4), "spine": 15.0}


def test_backup_nodes_rules():
    assert spec_of(backup_nodes=1).active_gpus == 56
    assert "backup_nodes" not in spec_of().to_dict() and spec_of(backup_nodes=1).to_dict()["backup_nodes"] == 1
    for bad, words in ((-1, "0 or more"), (8, "leave no active GPU"), ("x", "whole number")):
        with pytest.raises(InputError) as e:
            spec_of(backup_nodes=bad)
        assert any(p.path == "backup_nodes" and words in p.message for p in e.value.problems), e.value.render()
    with pytest.raises(InputError) as e:
        spec_of(backup_nodes=1, gpus_per_node=4)
    assert any(p.path == "backup_nodes" and "HB domains" in p.message for p in e.value.problems)


def test_backup_nodes_cli(tmp_path):
    """--backup-nodes sets backup_nodes as the spec key does; a bad value exits 2 naming it, writing nothing."""
    args = ["build", "--gpus", "1024", "--hb-domain", "8", "--radix", "32", "--arch", "rail-only", "--formats", "validation"]
    res = CliRunner().invoke(main, [*args, "--backup-nodes", "8", "--out", str(tmp_path / "ok")])
    assert res.exit_code == 0, res.output
    assert "8 backup nodes (960 GPUs in the job)" in res.output
    assert json.loads((tmp_path / "ok" / "summary.json").read_text())["spec"]["backup_nodes"] == 8
    for bad in ("x", "-8", "128"):
        res = CliRunner().invoke(main, [*args, "--backup-nodes", bad, "--out", str(tmp_path / "bad")])
        assert res.exit_code == 2 and "backup_nodes" in res.stderr and "Traceback" not in res.stderr, res.output
        assert not (tmp_path / "bad").exists()


def test_netbox_two_interfaces_per_gpu_nic_each_cabled_to_its_leaf(tmp_path):
    import csv

    from topogen.exports import EXPORTERS

    spec = build_spec({"name": "dhn", "gpus": 64, "hb_domain": 8, "radix": 16, "homing": "dual", "arch": "rail-optimized"})
    ctx = pipeline.build(spec)
    EXPORTERS["netbox"](ctx, tmp_path)
    d = tmp_path / "rail-optimized" / "netbox"
    rows = list(csv.DictReader((d / "interfaces.csv").open()))
    nics = [r for r in rows if "-nic" in r["name"]]
    assert len(nics) == 64 * 2 and all(r["enabled"] == "true" for r in nics)
    by = {(r["device"].split(".")[-1], r["name"]): r["description"] for r in nics}
    assert by[("hb00", "gpu3-nic0")] == "rail 3 plane 0 to leaf-g0-r3-a p1"
    assert by[("hb07", "gpu3-nic1")] == "rail 3 plane 0 to leaf-g0-r3-b p8"
    cables = list(csv.DictReader((d / "cables.csv").open()))
    assert len(cables) == len(ctx.fabrics["rail-optimized"].links)
    devices = list(csv.DictReader((d / "devices.csv").open()))
    assert {r["device_type"] for r in devices if r["role"] == "compute-node" or "hb" in r["name"]} >= {"gpu-node-16x400g-8u"}  # ports, speed and height (8 U trays)


@pytest.mark.parametrize("arch", ARCHES)
def test_leaf_cut_from_the_spines_loses_ports_not_gpus(fabrics, arch):
    """One leaf of a pair without uplinks: its ports are cut off but their GPUs keep the partner leaf (warning);
    both leaves of the pair without uplinks: the GPUs are cut off (error)."""
    f = fabrics[arch]
    a, b = pairs_of(f)
    la, lb = int(a[0, 0]), int(b[0, 0])
    L = f.links

    def without_uplinks(*leaves):
        up = np.isin(L.a_dev, leaves) | np.isin(L.z_dev, leaves)
        keep = ~up | (L.tier == 1)
        return validate.validate(Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**{c: getattr(L, c)[keep] for c in LINK_COLUMNS}), list(f.notes)))

    served = np.unique(L.a_dev[(L.z_dev == la) & (L.tier == 1)])
    (hit,) = without_uplinks(la).by_check("reach.partition")
    assert hit.severity == "warning"
    assert f"{len(served)} GPU(s) keep a path through the other port of their pair (on {name(f, lb)}), at reduced bandwidth" in hit.message, hit.message
    assert "cut off" not in hit.message and name(f, la) in hit.message and name(f, la) in hit.devices
    assert without_uplinks(la).checks["reach"].startswith("every GPU reaches every other, some through one port of their dual-homed pair only")
    assert {f"{d}:nic0" for d in hit.devices if not d.startswith(("leaf", "rail"))} == set(hit.ports)
    (hit,) = without_uplinks(la, lb).by_check("reach.partition")
    assert hit.severity == "error" and "keep a path" not in hit.message
    assert f"{len(served)} GPU(s) lose every port of their pair and are cut off" in hit.message, hit.message
