"""The storage, in-band and OOB networks: published totals, closed form = wiring over grids, validation, bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
import sys

import numpy as np
import pytest

from topogen import pipeline
from topogen.checks.networks import validate_networks
from topogen.fabric import networks as nw
from topogen.spec.cluster import build_spec, load_spec, read_spec_file, resolve_spec_path
from topogen.spec.networks import InbandSpec, NetworksSpec, NodePorts, OobSpec, StorageSpec
from topogen.util.errors import InputError


@pytest.fixture(scope="module")
def superpod():
    return pipeline.build(load_spec("dgx-h100-superpod"))


def _counts(ctx, arch="rail-optimized"):
    return ctx.networks[arch].counts()


# --- the published DGX H100 SuperPOD 4-SU totals, each figure checked ----------------------


def test_superpod_storage_switches(superpod):
    c = _counts(superpod)["storage"]
    assert c["switches"] == {"leaf": 8, "target-leaf": 4, "spine": 4}
    assert sum(c["switches"].values()) == 16


def test_superpod_storage_cables(superpod):
    c = _counts(superpod)["storage"]["cables"]
    assert c == {"node": 254, "leaf-spine": 240, "target": 48, "fabric-manager": 2, "management-server": 4}
    assert sum(c.values()) == 548


def test_superpod_inband(superpod):
    c = _counts(superpod)["inband"]
    assert c["switches"] == {"leaf": 6, "spine": 2}
    assert c["cables"] == {"node": 254, "management-server": 8, "core-uplink": 4, "isl": 6, "nfs": 8, "leaf-spine": 24}
    assert sum(c["cables"].values()) == 304


def test_superpod_oob(superpod):
    c = _counts(superpod)["oob"]
    assert c["switches"] == {"access": 8}
    one_gbe = c["cables"]["management-port"] + c["cables"]["back-to-back"]
    assert one_gbe == 317 and c["cables"]["oob-uplink"] == 16
    assert sum(c["cables"].values()) == 333


def test_superpod_oob_devices(superpod):
    """317 = 127 BMC + 64 InfiniBand switches + 8 servers + 8 in-band switches + 2 back-to-back + 108 PDUs."""
    n = superpod.networks["rail-optimized"]
    c = n.cables
    m = (c.net == nw.OOB) & (c.role == nw.R_MPORT)
    kinds = np.bincount(c.a_kind[m], minlength=len(nw.KIND_NAMES))
    assert kinds[nw.NODE] == 127
    assert kinds[nw.FABRIC] == 48
    roles = [n.switches[i].network for i in c.a_idx[m & (c.a_kind == nw.SWITCH)]]
    assert roles.count(nw.STORAGE) == 16 and roles.count(nw.INBAND) == 8
    assert kinds[nw.MGMT] + kinds[nw.UFM] == 8
    assert kinds[nw.PDU] == 108


def test_superpod_racks_and_pdus(superpod):
    n = superpod.networks["rail-optimized"]
    assert n.racks == (32, 6) and sum(n.racks) == 38
    assert n.endpoints["pdu"] == 96 + 12


def test_superpod_valid_and_in_summary(superpod):
    assert superpod.valid
    sec = superpod.summary["networks"]["architectures"]["rail-optimized"]
    assert sec["totals"]["all_switches"] == 48 + 16 + 8 + 8
    assert sec["totals"]["all_cables"] == 2040 + 548 + 304 + 333
    assert sec["findings"] == []


def test_compare_still_compute_fabric(superpod):
    """Rail-only vs rail-optimized compares the compute fabric; the totals show what the other networks add."""
    plain = build_spec({k: v for k, v in read_spec_file(resolve_spec_path("dgx-h100-superpod")).items() if k != "networks"}, default_name="x")
    assert superpod.summary["comparison"] == pipeline.build(plain).summary["comparison"]
    sec = superpod.summary["networks"]["architectures"]
    assert sec["rail-optimized"]["totals"]["other_switches"] == sec["rail-only"]["totals"]["other_switches"] == 32


# --- closed form = wiring, over grids ------------------------------------------------------


def _plan(nodes, su, radix, ports=2, bonded=True, mgmt=2, ufm=2, targets=24, design="separate", rule="per_su", oob=48, ratio="4:3"):
    net = NetworksSpec(
        inband_ports=NodePorts(ports, 100, bonded), storage_ports=NodePorts(2, 400), management_servers=mgmt, compute_fabric_managers=2,
        storage=StorageSpec(design=design, target_ports=targets, target_leaves=rule, fabric_managers=ufm if design == "separate" else 0, node_oversubscription=ratio, target_speed=100 if design == "converged" else None),
        inband=InbandSpec(nfs_ports=4, leaf_uplinks=8 if nodes > 500 else 4),
        oob=OobSpec(),
    )
    if design == "converged":
        net = NetworksSpec(inband_ports=NodePorts(ports, 100, bonded), storage_ports=NodePorts(2, 100), management_servers=mgmt, storage=net.storage, inband=net.inband)
    return nw.NetworkPlan(nodes, nodes * 8, 8, 8, su, 4, 16, nodes // 4, net, radix, radix, oob, targets, ("s", "i", "o"))


GRID = [(n, su, r) for n in (1, 7, 31, 64, 127, 300) for su in (0, 32) for r in (40, 64, 128)]


@pytest.mark.parametrize("nodes,su,radix", GRID)
def test_closed_form_equals_wiring(nodes, su, radix):
    p = _plan(nodes, su, radix, ufm=0 if nodes == 1 else 2)
    try:
        closed = nw.closed_form(p)
    except InputError:
        pytest.skip("outside two tiers for this radix")
    wired = nw.generate(p)
    assert wired.counts() == {k: {"switches": v["switches"], "cables": v["cables"]} for k, v in closed.items()}
    assert validate_networks(wired) == []


@pytest.mark.parametrize("design,rule,bonded", [("separate", "pair", True), ("separate", "per_su", False), ("converged", "per_su", True), ("none", "per_su", True)])
def test_designs_valid_and_closed(design, rule, bonded):
    p = _plan(127, 32, 64, design=design, rule=rule, bonded=bonded)
    wired = nw.generate(p)
    closed = nw.closed_form(p)
    assert wired.counts() == closed
    assert validate_networks(wired) == []
    if design != "separate":
        assert not wired.switches_of(nw.STORAGE)


@pytest.mark.parametrize("nodes,su,radix,targets", [(n, su, r, t) for n in (4, 31, 64, 127, 300) for su in (0, 32) for r in (64, 128) for t in (1, 8, 32)])
def test_targets_on_the_node_leaves(nodes, su, radix, targets):
    """target_leaves: node_leaves: no target leaf; the targets split evenly over the node leaves, each leaf's uplinks its nodes' at 4:3 plus its targets' at 1:1."""
    p = _plan(nodes, su, radix, ufm=0, targets=targets, rule="node_leaves")
    try:
        closed = nw.closed_form(p)
    except InputError as e:
        assert e.problems[0].path in ("networks.storage.target_ports", "networks.storage.switch")
        return
    wired = nw.generate(p)
    assert wired.counts() == {k: {"switches": v["switches"], "cables": v["cables"]} for k, v in closed.items()}
    assert "target-leaf" not in wired.counts()["storage"]["switches"]
    assert validate_networks(wired) == []
    st = nw.storage_shape(p)
    assert sum(st.leaf_targets) == targets and max(st.leaf_targets) - min(st.leaf_targets) <= 1
    assert list(st.up) == [-(-d * 3 // 4) + t for d, t in zip(st.leaf_down, st.leaf_targets)]


@pytest.mark.parametrize("targets,radix", [(1, 64), (32, 64), (33, 64), (100, 64), (48, 128), (200, 128)])
def test_target_leaves_by_ports(targets, radix):
    """target_leaves: by_ports: as many target leaves as the target ports fill at 1:1 (not one per SU)."""
    p = _plan(127, 32, radix, targets=targets, rule="by_ports")
    wired = nw.generate(p)
    k = -(-targets // nw.max_down(radix, 1, 1))  # the target ports' leaves at 1:1, then one more while the 2 servers' ports do not fit
    while k < targets and any(t + m + t > radix for t, m in zip([targets // k + (i < targets % k) for i in range(k)], [2 // k + (i < 2 % k) for i in range(k)])):
        k += 1
    assert wired.counts()["storage"]["switches"]["target-leaf"] == k
    assert validate_networks(wired) == []


def test_every_node_port_cabled_once():
    wired = nw.generate(_plan(300, 32, 64, targets=160))
    c = wired.cables
    for net, count in ((nw.STORAGE, 2), (nw.INBAND, 2), (nw.OOB, 1)):
        m = (c.a_kind == nw.NODE) & (c.net == net)
        assert np.all(np.bincount(c.a_idx[m], minlength=300) == count)


def test_bonded_pairs_on_two_leaves_of_a_pair():
    wired = nw.generate(_plan(127, 32, 64))
    c = wired.cables
    m = (c.a_kind == nw.NODE) & (c.net == nw.INBAND)
    for node in (0, 63, 126):
        z = sorted(c.z_idx[m & (c.a_idx == node)])
        a, b = wired.switches[z[0]], wired.switches[z[1]]
        assert a.pair == b.pair >= 0 and a.name != b.name


def test_deterministic():
    a, b = nw.generate(_plan(300, 32, 64, targets=160)), nw.generate(_plan(300, 32, 64, targets=160))
    assert [s.name for s in a.switches] == [s.name for s in b.switches]
    for col in nw.CABLE_COLUMNS:
        assert np.array_equal(getattr(a.cables, col), getattr(b.cables, col))


def test_validation_catches_a_cable_across_networks():
    wired = nw.generate(_plan(31, 32, 64))
    c = wired.cables
    i = int(np.flatnonzero((c.net == nw.STORAGE) & (c.role == nw.R_NODE))[0])
    ib_leaf = next(k for k, s in enumerate(wired.switches) if s.network == nw.INBAND)
    c.z_idx[i] = ib_leaf
    checks = {f.check for f in validate_networks(wired)}
    assert "networks.separate" in checks


OOB_GRID = [(nodes, su, bmc, mins, spread, mp) for nodes in (1, 4, 12, 31, 127) for su in (0, 4, 32) for bmc in (1, 2, 4) for mins, spread, mp in ((1, "su", 1), (2, "round-robin", 4), (3, "round-robin", 1), (2, "su", 3))]


def _oob_plan(nodes, su, bmc, mins, spread, mp):
    import dataclasses

    base = _plan(nodes, su, 64, ufm=0 if nodes == 1 else 2)
    net = dataclasses.replace(base.net, bmc_ports=NodePorts(bmc, 1), oob=OobSpec(min_switches=mins, spread=spread, management_server_ports=mp))
    return dataclasses.replace(base, net=net)


@pytest.mark.parametrize("nodes,su,bmc,mins,spread,mp", OOB_GRID)
def test_oob_redundancy_closed_form_equals_wiring(nodes, su, bmc, mins, spread, mp):
    """min_switches, round-robin spread, several OOB ports per server: the wiring's counts are the closed form's, and valid."""
    p = _oob_plan(nodes, su, bmc, mins, spread, mp)
    wired = nw.generate(p)
    closed = nw.closed_form(p)
    assert wired.counts() == {k: {"switches": v["switches"], "cables": v["cables"]} for k, v in closed.items()}
    assert validate_networks(wired) == []
    oob = wired.switches_of(nw.OOB)
    per_su = nw.oob_shape(p, 0, 0)  # sized without the shared switches: a lower bound
    assert len(oob) >= max(mins, sum(per_su.group_switches))
    c = wired.cables
    srv = (c.net == nw.OOB) & (c.a_kind == nw.MGMT)
    assert sorted(c.a_port[srv].tolist()) == sorted(list(range(mp)) * p.net.management_servers)
    node = (c.net == nw.OOB) & (c.a_kind == nw.NODE)
    on = {}
    for x, z in zip(c.a_idx[node].tolist(), c.z_idx[node].tolist()):
        on.setdefault(x, []).append(z)
    if spread == "round-robin":
        # a node's ports on distinct switches while it has no more ports than there are switches; switches' node ports within one of each other
        assert all(len(set(v)) == min(len(v), len(oob)) for v in on.values())
        per = np.bincount(c.z_idx[node] - min(s_i for s_i, s in enumerate(wired.switches) if s.network == nw.OOB), minlength=len(oob))
        assert per.max() - per.min() <= 1


def test_oob_spread_survives_one_switch_down():
    """ERA-style: 4 OOB ports per node over 2+ switches round-robin: any one OOB switch down leaves every node an OOB port."""
    for nodes, su in ((4, 4), (8, 4), (12, 4), (16, 4)):
        wired = nw.generate(_oob_plan(nodes, su, 4, 2, "round-robin", 4))
        c = wired.cables
        node = (c.net == nw.OOB) & (c.a_kind == nw.NODE)
        for s in {int(z) for z in c.z_idx[node].tolist()}:
            left = set(c.a_idx[node & (c.z_idx != s)].tolist())
            assert left == set(range(nodes))


def test_management_server_oob_ports_are_numbered():
    wired = nw.generate(_oob_plan(31, 32, 1, 1, "su", 3))
    c = wired.cables
    srv = np.flatnonzero((c.net == nw.OOB) & (c.a_kind == nw.MGMT))
    names = {(int(c.a_idx[i]), wired.port_name(nw.MGMT, int(c.a_port[i]), nw.OOB, nw.R_MPORT)) for i in srv}
    assert names == {(m, f"bmc{j}") for m in range(2) for j in range(3)}
    assert wired.port_name(nw.NODE, 0, nw.OOB, nw.R_MPORT) == "bmc"


@pytest.mark.parametrize("uplinks,ports", [(2, 4), (4, 4), (6, 4), (3, 2), (2, 0)])
def test_oob_uplinks_past_the_switch_are_caught(uplinks, ports):
    """An OOB switch's uplinks past the catalog's uplink ports: a port-reuse error per cable past them (the wiring's own check, whatever the spec said)."""
    import dataclasses

    base = _plan(127, 32, 64)
    p = dataclasses.replace(base, net=dataclasses.replace(base.net, oob=OobSpec(uplinks=uplinks)), oob_uplink_ports=ports)
    wired = nw.generate(p)
    past = [f for f in validate_networks(wired) if f.check == "networks.port-reuse"]
    over = max(0, uplinks - ports) if ports else 0
    oob = len(wired.switches_of(nw.OOB))
    assert len(past) == min(20, oob * over)
    if over:
        assert f"port p{48 + ports + 1} of oob-su00-0 is past the switch's {48 + ports} ports" in past[0].message
    assert any("states no uplink ports" in x for x in wired.assumptions) == (ports == 0)


@pytest.mark.parametrize("nodes,su,radix", [(1000, 0, 32), (2048, 32, 64)])
def test_three_tiers_closed_form_equals_wiring(nodes, su, radix):
    p = _plan(nodes, su, radix, targets=64)
    closed = nw.closed_form(p)
    assert closed["storage"]["switches"]["super-spine"] and closed["inband"]["switches"]["super-spine"]
    wired = nw.generate(p)
    assert wired.counts() == closed
    assert validate_networks(wired) == []
    c = wired.cables
    up = (c.net == nw.STORAGE) & (c.role == nw.R_UP)
    sup = (c.net == nw.STORAGE) & (c.role == nw.R_SUPER)
    assert up.sum() == sup.sum()  # pod spines at 1:1


def test_fourth_tier_is_an_input_error():
    """1,024 node leaves of 40 ports: each plane's 26 super-spines outnumber a whole pod spine's 20 uplinks."""
    with pytest.raises(InputError) as e:
        nw.closed_form(_plan(8192, 32, 40))
    assert e.value.problems[0].path == "networks.storage.switch"
    assert "fourth tier" in e.value.problems[0].message


def test_a_pod_shared_with_target_leaves_is_partial():
    """512 node leaves: a pod holds the last 12 node leaves and 8 target leaves; its spines reach 12 of a plane's 13 super-spines, as a partial pod's do (it was refused as a fourth tier)."""
    p = _plan(4096, 32, 40)
    st = nw.storage_shape(p)
    f, n, _ = st.upper.pods[-2]  # the last pod holds target leaves alone
    assert n == 20 and f < len(st.leaf_down) < f + n
    assert nw.closed_form(p) == nw.generate(p).counts()
    assert st.upper.planes[1] == 13 and validate_networks(nw.generate(p)) == []


# --- required bandwidth ----------------------------------------------------------------------


def _superpod_data(**storage):
    data = read_spec_file(resolve_spec_path("dgx-h100-superpod"))
    data["networks"]["storage"].update(storage)
    return data


def test_halving_storage_ports_names_the_shortfall():
    data = _superpod_data(required={"per_node_GBps": 80})
    data["networks"]["node_ports"]["storage"]["count"] = 1
    ctx = pipeline.build(build_spec(data, default_name="x"))
    assert not ctx.valid
    f = [f for f in ctx.network_findings["rail-optimized"] if f.check == "networks.storage-node"]
    assert f and "50 GB/s" in f[0].message and "80 GB/s" in f[0].message and "needs 2 port(s) of 400G" in f[0].hint and "networks.node_ports.storage.count: 2" in f[0].hint


def test_bisection_shortfall_names_target_ports():
    data = _superpod_data(required={"aggregate_GBps": 4000})
    ctx = pipeline.build(build_spec(data, default_name="x"))
    f = [f for f in ctx.network_findings["rail-optimized"] if f.check == "networks.storage-bisection"]
    assert f and "needs 80 target ports of 400G" in f[0].hint and "48 given" in f[0].hint


def test_targets_sized_from_required():
    data = _superpod_data(required={"per_gpu_GBps": 1})
    del data["networks"]["storage"]["target_ports"]
    ctx = pipeline.build(build_spec(data, default_name="x"))
    assert ctx.networks["rail-optimized"].plan.target_ports == -(-1016 * 8 // 400)  # 1 GB/s per GPU: 8,128 Gb/s on 400G ports
    assert ctx.valid


@pytest.mark.parametrize("gpus,per_node", [(256, 40), (512, 25), (1016, 40), (1016, 80)])
def test_targets_sized_from_per_node_required(gpus, per_node):
    """required: {per_node_GBps} without target_ports: every node at that rate at once sizes the target ports (it used to exit 2 asking for a bandwidth)."""
    data = _superpod_data(required={"per_node_GBps": per_node})
    data["gpus"] = gpus
    del data["networks"]["storage"]["target_ports"]
    spec = build_spec(data, default_name="x")
    ctx = pipeline.build(spec)
    n = ctx.networks["rail-optimized"]
    want = -(-per_node * spec.nodes * 8 // 400)
    assert n.plan.target_ports == want
    assert n.counts()["storage"]["cables"]["target"] == want
    assert n.assumptions[0] == f"storage: {want:,} target ports of 400G sized from {per_node:g} GB/s per node x {spec.nodes:,} nodes at once (networks.storage.target_ports not given)"
    assert ctx.summary["networks"]["architectures"]["rail-optimized"]["assumptions"] == n.assumptions


def test_from_checkpoint_equals_the_analysis(tmp_path):
    data = _superpod_data(required={"from": "checkpoint"})
    del data["networks"]["storage"]["target_ports"]
    data["workload"] = {"model": "gpt-3-175b", "gpu": "h100", "parallelism": {"dp": "fsdp"}, "checkpoint": {"write_s": 30, "path": "storage-fabric"}}
    spec = build_spec(data, default_name="ckpt")
    ctx = pipeline.build(spec)
    path = tmp_path / "s.yaml"
    import yaml

    path.write_text(yaml.safe_dump(data))
    out = subprocess.run([sys.executable, "-m", "topogen", "analyze", "checkpoint", str(path), "--json"], capture_output=True, text=True)
    figure = ctx.storage_required["aggregate_GBps"]
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rows"][0]["write_GBps"] == pytest.approx(figure)
    assert figure == pytest.approx(175e9 * 14 / 30 / 1e9)
    assert ctx.networks["rail-optimized"].plan.target_ports == -(-int(figure * 8) // 400)


# --- bad input: exit 2, the field named --------------------------------------------------------


@pytest.mark.parametrize(
    "networks,path",
    [
        ({"node_ports": {"inband": {"count": 3, "bonded": True}}}, "networks.node_ports.inband.count"),
        ({"storage": {"design": "both"}}, "networks.storage.design"),
        ({"storage": {"node_oversubscription": "1:2"}}, "networks.storage.node_oversubscription"),
        ({"storage": {"required": {"per_node_GBps": 40, "per_gpu_GBps": 4}}}, "networks.storage.required"),
        ({"storage": {"design": "converged"}}, "networks.node_ports.storage.speed"),
        ({"oob": {"uplinks": -1}}, "networks.oob.uplinks"),
        ({"colour": 1}, "networks.colour"),
    ],
)
def test_bad_section(networks, path):
    with pytest.raises(InputError) as e:
        build_spec({"gpus": 64, "hb_domain": 8, "radix": 16, "networks": networks})
    assert path in [p.path for p in e.value.problems]


def test_no_switch_carries_the_speed_exits_2(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("gpus: 512\nhb_domain: 8\nradix: 64\ncatalog: ndr-400g\nnetworks:\n  node_ports:\n    storage: {count: 2, speed: 800}\n")
    out = subprocess.run([sys.executable, "-m", "topogen", "build", str(spec), "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert out.returncode == 2
    assert "networks.storage.switch" in out.stderr and "800G" in out.stderr and "Traceback" not in out.stderr


def test_absent_section_changes_nothing():
    spec = load_spec("demo")
    assert spec.networks is None
    ctx = pipeline.build(spec)
    assert "networks" not in ctx.summary and not ctx.networks
    assert "networks" not in spec.to_dict()


def test_section_round_trips_through_to_dict():
    spec = load_spec("dgx-h100-superpod")
    again = build_spec(spec.to_dict(), default_name="x")
    assert again.networks == spec.networks


# --- exports ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def superpod_out(superpod, tmp_path_factory):
    out = tmp_path_factory.mktemp("sp") / "out"
    pipeline.write_outputs(superpod, out, ["cabling", "topology", "xlsx"])
    return out


def test_networks_cabling_csv_reads_back(superpod_out, superpod):
    import csv

    from topogen.asbuilt import cabling

    path = superpod_out / "rail-optimized" / "networks-cabling.csv"
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 548 + 304 + 333
    by = {}
    for r in rows:
        by[r["network"]] = by.get(r["network"], 0) + 1
    assert by == {"storage": 548, "inband": 304, "oob": 333}
    found = cabling.read(path)
    assert len(found.cables) == len(rows) and found.duplicate_count == 0
    up = [r for r in rows if r["role"] == "oob-uplink"]
    assert all(r["a_role"] == "oob-access" and r["z_role"] == "inband-leaf" for r in up)
    assert "network" not in (superpod_out / "rail-optimized" / "cabling.csv").open().readline()


def test_workbook_networks_sheet(superpod_out):
    import openpyxl

    wb = openpyxl.load_workbook(superpod_out / "dgx-h100-superpod.xlsx")
    rows = list(wb["Networks"].iter_rows(values_only=True))
    totals = {(r[0], r[1]): r[3] for r in rows if r[3] and "switches," in str(r[3]) and r[1] not in ("all", "others", "compute")}
    assert totals[("rail-optimized", "storage")] == "16 switches, 548 cables"
    assert totals[("rail-optimized", "inband")] == "8 switches, 304 cables"
    assert totals[("rail-optimized", "oob")] == "8 switches, 333 cables"


# --- the converged Enterprise RA-style preset ------------------------------------------------


def test_enterprise_converged_single_tier():
    """era-2-8-9-400 at 4 SUs: the compute pair's cages are full, so the converged pair is one of its own."""
    ctx = pipeline.build(load_spec("era-2-8-9-400"))
    n = ctx.networks["rail-optimized"]
    c = n.counts()
    assert c["storage"] == {"switches": {}, "cables": {}}
    assert c["inband"]["switches"] == {"leaf": 2}  # one converged leaf pair, no spine
    # 16 nodes x 2 BlueField ports, 8 target ports, 2 servers x 2 ports, 4 ISLs, 2 x 8 uplinks to the core
    assert c["inband"]["cables"] == {"node": 32, "target": 8, "management-server": 4, "isl": 4, "core-uplink": 16}
    assert ctx.valid and not ctx.network_findings["rail-optimized"]
    a, b = n.switches[0], n.switches[1]
    assert a.pair == b.pair == 0 and a.compute == b.compute == -1
    assert "the compute ports take 64 of leaf-a/leaf-b's 64 cages" in n.assumptions[0]


ERA_PUBLISHED = {1: (2, 2), 2: (2, 2), 3: (2, 3), 4: (4, 4)}  # NVIDIA's 2-8-9-400: SN5600 and SN2201 at 1 to 4 SUs


def _sn5600(ctx, arch="rail-optimized"):
    """SN5600 boxes of the cluster: the compute fabric's and the other networks' own (a collapsed core's leaves are the compute ones)."""
    own = sum(x.quantity for b in ctx.network_boms[arch] for x in b.lines if x.category == "switch" and x.sku == "SN5600")
    return len(ctx.fabrics[arch].switches) + own


@pytest.mark.parametrize("sus", [1, 2, 3, 4])
def test_era_published_counts_come_from_the_rules(sus):
    """2-8-9-400: SN5600 2, 2, 2, 4 and SN2201 2, 2, 3, 4 at 1 to 4 SUs, from port arithmetic and the OOB rules (no count in the preset)."""
    ctx = pipeline.build(load_spec("era-2-8-9-400", {"gpus": 32 * sus}))
    n = ctx.networks["rail-optimized"]
    assert (_sn5600(ctx), len(n.switches_of(nw.OOB))) == ERA_PUBLISHED[sus]
    assert ctx.valid, [f.message for f in ctx.network_findings["rail-optimized"]]
    # the arithmetic: compute cages (2 x 400G each) + converged cages (4 x 200G each) within the 64
    f = ctx.fabrics["rail-optimized"]
    compute_cages = -(-(f.ports_used().max()) // 2)
    units = n.counts()["inband"]["cables"]
    oob_up = n.counts()["oob"]["cables"]["oob-uplink"]
    per_leaf = (units["node"] + units.get("target", 0) + units.get("management-server", 0) + oob_up) // 2  # each leaf takes half of every bonded unit
    collapsed = bool(n.plan.collapsed)
    assert collapsed == (sus < 4) == (compute_cages < 64)
    if collapsed:
        assert [s.name for s in n.switches_of(nw.INBAND)] == ["leaf-a", "leaf-b"] and n.plan.inband_reserved == compute_cages * 4
        assert n.counts()["inband"]["switches"] == {"compute-leaf": 2} and "isl" not in units
        assert per_leaf + 8 <= (64 - compute_cages) * 4  # the converged ports and the customer uplinks fit the free cages
    # the OOB: an SN2201 per SU, never fewer than 2; each node's 4 ports on distinct switches up to their count
    c = n.cables
    node = (c.net == nw.OOB) & (c.a_kind == nw.NODE)
    for x in range(n.plan.nodes):
        zs = c.z_idx[node & (c.a_idx == x)]
        assert len(zs) == 4 and len(set(zs.tolist())) == min(4, len(n.switches_of(nw.OOB)))


@pytest.mark.parametrize("sus", [5, 8])
def test_era_past_its_design_exits_2(sus):
    """Past 4 SUs the 2-8-9-400 GPU leaf pair is out of ports: the build stops naming design (the RA adds a spine there)."""
    out = subprocess.run([sys.executable, "-m", "topogen", "build", "era-2-8-9-400", "--gpus", str(32 * sus), "--out", "/nonexistent/x"], capture_output=True, text=True)
    assert out.returncode == 2 and "error: design: a leaf pair (rail-optimized) holds at most 128 GPUs" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("sus,uplinks,targets", [(s, u, t) for s in (1, 2, 3) for u, t in ((8, 8), (32, 8), (8, 96), (60, 40))])
def test_collapse_follows_the_cages(sus, uplinks, targets):
    """Collapsed exactly when the converged ports fit the cages the compute ports leave; valid and closed form = wiring either way."""
    data = read_spec_file(resolve_spec_path("era-2-8-9-400"))
    data["gpus"] = 32 * sus
    data["networks"]["inband"]["leaf_uplinks"] = uplinks
    data["networks"]["storage"]["target_ports"] = targets
    ctx = pipeline.build(build_spec(data, default_name="x"))
    n = ctx.networks["rail-optimized"]
    free = (64 - 16 * sus) * 4  # 200G ports each leaf keeps beside the compute cages
    oob = len(n.switches_of(nw.OOB))
    need = 4 * sus + -(-targets // 2) + 2 + 2 * oob + uplinks  # bonded units per leaf: nodes, targets, servers, OOB uplinks (4 each, 2 per leaf), customer uplinks
    assert bool(n.plan.collapsed) == (need <= free)
    closed = nw.closed_form(n.plan)
    assert n.counts() == {k: {"switches": v["switches"], "cables": v["cables"]} for k, v in closed.items()}
    assert ctx.valid, [f.message for f in ctx.network_findings["rail-optimized"]]


def test_collapsed_core_needs_a_leaf_pair(tmp_path):
    text = (Path(__file__).parent.parent / "templates" / "clusters" / "era-2-8-9-400.yaml").read_text()
    spec = tmp_path / "era.yaml"
    spec.write_text(text.replace("design: leaf-pair", "design: clos"))
    out = subprocess.run([sys.executable, "-m", "topogen", "build", str(spec), "--out", "/nonexistent/x"], capture_output=True, text=True)
    assert out.returncode == 2 and "networks.inband.collapsed_core: a collapsed core puts the converged ports on the compute fabric's leaf pair, but the compute fabric is design: clos" in out.stderr


@pytest.mark.parametrize("gpus,leaves", [(32, 0), (128, 2), (1024, 2)])
def test_enterprise_grows_in_steps(gpus, leaves):
    # past 4 SUs the compute leaf pair is out of ports: a Clos carries the compute fabric (no collapsed core), the in-band pair is under test
    over = {"design": "clos"} if gpus > 128 else {}
    data = read_spec_file(resolve_spec_path("era-2-8-9-400"))
    data.update(gpus=gpus, **over)
    if over:
        data["networks"]["inband"]["collapsed_core"] = False
    ctx = pipeline.build(build_spec(data, default_name="x"))
    n = ctx.networks["rail-optimized"]
    assert n.counts()["inband"]["switches"] == ({"leaf": leaves} if leaves else {"compute-leaf": 2})
    assert n.counts()["oob"]["switches"]["access"] == max(2, -(-gpus // 32))


def test_converged_past_single_tier_exits_2(tmp_path):
    # the compute fabric a Clos (the preset's leaf pair holds 4 SUs): the in-band pair's limit is under test
    text = (Path(__file__).parent.parent / "templates" / "clusters" / "era-2-8-9-400.yaml").read_text()
    spec = tmp_path / "era.yaml"
    spec.write_text(text.replace("design: leaf-pair", "design: clos").replace("collapsed_core: true", "collapsed_core: false"))
    out = subprocess.run([sys.executable, "-m", "topogen", "build", str(spec), "--gpus", "2048", "--out", "/nonexistent/x"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "networks.inband.spines" in out.stderr and "single-tier limit" in out.stderr and "Traceback" not in out.stderr
    leaf_pair = subprocess.run([sys.executable, "-m", "topogen", "build", "era-2-8-9-400", "--gpus", "2048", "--out", "/nonexistent/x"], capture_output=True, text=True)
    assert leaf_pair.returncode == 2 and "error: design: a leaf pair (rail-optimized) holds at most 128 GPUs" in leaf_pair.stderr and "Traceback" not in leaf_pair.stderr


def test_superpod_ports_and_transceivers_counted_apart(superpod):
    """Ports, twin-port switch modules and device modules are counted separately (254 DGX storage transceivers)."""
    b = {x.network: x for x in superpod.network_boms["rail-optimized"]}["storage"]
    assert b.ports == 254 + 2 * 240 + 48 + 2 + 4  # switch ports in use
    assert b.to_dict()["device_transceivers"] == 254 + 48 + 2 + 4  # one per node, target, fabric-manager and server port
    n = superpod.networks["rail-optimized"]
    c = n.cables
    node = (c.net == nw.STORAGE) & (c.a_kind == nw.NODE)
    assert int(node.sum()) == 254
    # QM9700 cages hold two 400G ports: modules = ports used per switch, halved, rounded up
    used = np.bincount(np.concatenate([c.a_idx[(c.net == nw.STORAGE) & (c.a_kind == nw.SWITCH)], c.z_idx[c.net == nw.STORAGE]]), minlength=len(n.switches))
    assert b.to_dict()["switch_transceivers"] == int(sum(-(-u // 2) for u in used if u))


def test_networks_topology_json_loads_in_networkx(superpod_out):
    import networkx as nx

    whole = nx.node_link_graph(json.loads((superpod_out / "rail-optimized" / "topology.json").read_text()), edges="edges")
    g = whole.edge_subgraph([(u, v, k) for u, v, k, d in whole.edges(keys=True, data=True) if d["network"] != "compute"])
    assert g.number_of_edges() == 548 + 304 + 333
    for net, cables in (("storage", 548), ("inband", 304), ("oob", 333)):
        h = g.edge_subgraph([(u, v, k) for u, v, k, d in g.edges(keys=True, data=True) if d["network"] == net])
        assert h.number_of_edges() == cables and nx.is_connected(h.to_undirected())
    assert g.nodes["stor-spine-00"]["network"] == "storage" and g.nodes["hb000"]["role"] == "node"


def _random_plan(seed: int) -> nw.NetworkPlan:
    """A plan drawn from the whole option space (bonding, designs, ratios, radixes, SUs, servers, uplinks)."""
    import random

    r = random.Random(seed)
    nodes = r.choice([1, 2, 3, 5, 17, 64, 127, 128, 300, 999])
    count = r.choice([1, 2, 4])
    inband = NodePorts(count, 100, count % 2 == 0 and r.random() < 0.7)
    design = r.choice(["separate", "separate", "converged", "none"])
    storage_ports = NodePorts(r.choice([0, 2]), 100) if design == "converged" else NodePorts(r.choice([1, 2, 4]), 400)
    net = NetworksSpec(
        inband_ports=inband, storage_ports=storage_ports, bmc_ports=NodePorts(r.choice([1, 2]), 1),
        management_servers=r.choice([0, 1, 4]), compute_fabric_managers=r.choice([0, 2]),
        storage=StorageSpec(design=design, node_oversubscription=r.choice(["1:1", "4:3", "3:1"]), target_leaves=r.choice(["per_su", "pair"]), fabric_managers=r.choice([0, 1, 2]) if design == "separate" else 0, management_ports=r.choice([0, 1]), spines=r.choice([None, 3])),
        inband=InbandSpec(management_ports=2 if inband.bonded else r.choice([0, 1, 2]), nfs_ports=r.choice([0, 3, 8]), leaf_uplinks=r.choice([1, 2, 4, 8]), isl=r.choice([0, 2]), spines=r.choice([0, 1, 2]), core_uplinks=r.choice([0, 2])),
        oob=OobSpec(uplinks=r.choice([0, 1, 2, 4])),
    )
    return nw.NetworkPlan(nodes, nodes * 8, 8, 8, r.choice([0, 1, 4, 32, 33]), r.choice([1, 4, 16]), 16, r.choice([0, 5, 48]), net, r.choice([8, 16, 40, 64, 128]), r.choice([8, 16, 32, 64]), r.choice([8, 24, 48]), r.choice([0, 1, 7, 48]), ("a", "b", "c"))


@pytest.mark.parametrize("seed", range(60))
def test_random_plan_closed_form_equals_wiring(seed):
    p = _random_plan(seed)
    try:
        closed = nw.closed_form(p)
    except InputError as e:
        assert e.problems[0].path.startswith("networks.")  # a plan the rules refuse names its field
        return
    wired = nw.generate(p)
    assert wired.counts() == closed
    assert validate_networks(wired) == []


# --- the floor -------------------------------------------------------------------------------


def test_superpod_management_racks_placed(superpod):
    """6 management racks: the compute layout's 3 switch racks, 2 for the 24 storage and in-band switches, 1 for 8 servers."""
    lay = superpod.layouts["rail-optimized"]
    fabric_racks = sum(1 for k in lay.racks.kind if k != "compute")
    nl = superpod.network_layouts["rail-optimized"]
    assert fabric_racks + len(nl.racks) == superpod.networks["rail-optimized"].racks[1] == 6
    assert fabric_racks + len(nl.racks) + 32 == 38


def test_network_cable_lengths(superpod):
    n = superpod.networks["rail-optimized"]
    nl = superpod.network_layouts["rail-optimized"]
    c = n.cables
    outside = np.isin(c.a_kind, [nw.TARGETS, nw.NFS, nw.CORE]) | np.isin(c.z_kind, [nw.TARGETS, nw.NFS, nw.CORE])
    assert np.isnan(nl.length_m[outside]).all() and not np.isnan(nl.length_m[~outside]).any()
    sold = set(superpod.layouts["rail-optimized"].spec.lengths_m)
    assert set(nl.length_m[~outside].tolist()) <= sold
    assert (nl.length_m[~outside] >= nl.routed_m[~outside]).all()
    # an OOB switch stands in its SU's compute racks: its BMC cables stay in the row
    bmc = (c.net == nw.OOB) & (c.a_kind == nw.NODE)
    assert {r[0] for r in nl.z_rack[bmc].tolist()} <= {r[0] for r in nl.a_rack[bmc].tolist()}


def test_validate_command_reports_the_networks(tmp_path):
    """`topogen validate SPEC` runs the networks' checks too: a shortfall exits 1 and names the figure."""
    spec = tmp_path / "s.yaml"
    spec.write_text("gpus: 1016\nhb_domain: 8\nradix: 64\ncatalog: ndr-400g\narch: rail-optimized\nnetworks:\n  scalable_unit: 32\n  node_ports:\n    storage: {count: 1, speed: 400}\n  storage:\n    target_ports: 48\n    required: {per_node_GBps: 80}\n")
    out = subprocess.run([sys.executable, "-m", "topogen", "validate", str(spec)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "rail-optimized: storage, in-band and OOB networks: 1 error(s)" in out.stdout
    assert "networks.node_ports.storage.count: 2" in out.stdout
    ok = subprocess.run([sys.executable, "-m", "topogen", "validate", "dgx-h100-superpod", "--arch", "rail-optimized"], capture_output=True, text=True)
    assert ok.returncode == 0 and "storage, in-band and OOB networks: valid" in ok.stdout


@pytest.mark.parametrize("nodes,su,radix", [(300, 64, 40), (1000, 0, 32), (127, 32, 64)])
def test_device_names_unique(nodes, su, radix):
    wired = nw.generate(_plan(nodes, su, radix, targets=64))
    names = [s.name for s in wired.switches]
    assert len(set(names)) == len(names)


# --- DGX B200 SuperPOD: targets on the storage leaves, in-band management leaves of another model ---------------


@pytest.fixture(scope="module")
def b200():
    return pipeline.build(load_spec("dgx-b200-superpod"))


def test_b200_storage_is_8_leaves_and_4_spines(b200):
    """NVIDIA's DGX B200 SuperPOD storage at 4 SUs: 8 leaves + 4 spines, the targets on the leaves, from the rules."""
    n = b200.networks["rail-optimized"]
    c = n.counts()["storage"]
    assert c["switches"] == {"leaf": 8, "spine": 4}
    assert c["cables"]["node"] == 128 * 2 and c["cables"]["target"] == 24
    t = n.cables.take((n.cables.net == nw.STORAGE) & (n.cables.role == nw.R_TARGET))
    assert {n.switches[int(z)].role for z in t.z_idx.tolist()} == {"leaf"}  # no target leaf
    assert b200.valid


def test_b200_inband_has_two_switch_models(b200):
    """The SN5600 pair and spines for the 200G bonded node ports, SN2201 management leaves for the management nodes' 1G ports, uplinked at 100G."""
    n = b200.networks["rail-optimized"]
    ib = n.switches_of(nw.INBAND)
    assert {(s.role, s.sku, s.speed) for s in ib} == {("leaf", "SN5600", 200), ("spine", "SN5600", 200), ("management-leaf", "MSN2201-CB2F", 1)}
    c = n.cables
    mg = (c.net == nw.INBAND) & (c.role == nw.R_MGMT)
    assert set(c.speed[mg].tolist()) == {1} and {n.switches[int(z)].role for z in c.z_idx[mg].tolist()} == {"management-leaf"}
    up = (c.net == nw.INBAND) & (c.role == nw.R_UP)
    ml = [i for i, s in enumerate(n.switches) if s.role == "management-leaf"]
    assert set(c.speed[up & np.isin(c.a_idx, ml)].tolist()) == {100} and set(c.speed[up & ~np.isin(c.a_idx, ml)].tolist()) == {200}
    lines = {(x.sku, x.where): x.quantity for b in b200.network_boms["rail-optimized"] if b.network == "inband" for x in b.lines if x.category == "switch"}
    assert lines == {("SN5600", "leaf"): 2, ("SN5600", "spine"): 2, ("MSN2201-CB2F", "management-leaf"): 1}


def test_b200_oob_manages_every_port(b200):
    """OOB: 3 ports per DGX B200 (BMC, 2 BlueField-3), every compute, storage and in-band switch, PDUs (3 per rack of 2 DGX), UFMs, management nodes' 2 ports."""
    n = b200.networks["rail-optimized"]
    f = b200.fabrics["rail-optimized"]
    racks = n.racks
    assert racks[0] == 64  # 2 DGX B200 per rack
    want = 128 * 3 + len(f.switches) + len(n.switches) - len(n.switches_of(nw.OOB)) + 4 * 2 + 4 + racks[0] * 3 + racks[1] * 2  # the OOB switches are not their own devices
    assert n.counts()["oob"]["cables"]["management-port"] == want
    assert b200.layouts["rail-optimized"].placement.height_u[0] == 10  # a DGX B200 is 10U


@pytest.mark.parametrize("servers,ports,radix_ports", [(1, 2, 48), (4, 2, 48), (24, 2, 48), (25, 2, 48), (40, 4, 48)])
def test_management_leaves_closed_form(servers, ports, radix_ports):
    """inband.management_switch: ceil(server ports / access ports) management leaves, their uplinks striped over the spines with the leaves'; closed form = wiring, valid."""
    import dataclasses

    base = _plan(127, 32, 64)
    net = dataclasses.replace(base.net, management_servers=servers, inband=dataclasses.replace(base.net.inband, management_ports=ports, management_switch="m", management_speed=1))
    p = dataclasses.replace(base, net=net, mgmt_radix=radix_ports, mgmt_sku="m")
    wired = nw.generate(p)
    closed = nw.closed_form(p)
    assert wired.counts() == {k: {"switches": v["switches"], "cables": v["cables"]} for k, v in closed.items()}
    assert wired.counts()["inband"]["switches"]["management-leaf"] == -(-servers * ports // radix_ports)
    assert validate_networks(wired) == []


# --- GB200 / GB300 NVL72: rack-scale managed devices, 2 SN2201 per rack, a converged Ethernet fabric ----------


@pytest.mark.parametrize("preset,sw", [("gb200-nvl72", "SN5600"), ("gb300-nvl72", "SN5610")])
@pytest.mark.parametrize("racks", [1, 2, 5, 8])
def test_nvl72_oob_two_per_rack(preset, sw, racks):
    """Per rack: 18 trays x 3 OOB ports, 9 NVLink switch trays, 8 power shelves on the rack's own OOB switches: 2 SN2201 per rack, from the rules."""
    ctx = pipeline.build(load_spec(preset, {"gpus": 72 * racks, "arch": "rail-optimized"}))
    n = ctx.networks["rail-optimized"]
    assert ctx.valid, [f.message for f in ctx.network_findings["rail-optimized"]][:3]
    per_rack = [s for s in n.switches_of(nw.OOB) if s.group >= 0]
    assert len(per_rack) == 2 * racks and {s.group for s in per_rack} == set(range(racks))
    assert {s.sku for s in n.switches_of(nw.INBAND)} == {sw}
    c = n.cables
    dev = (c.net == nw.OOB) & (c.a_kind == nw.RACKDEV)
    assert int(dev.sum()) == n.endpoints["rack-device"] == racks * (9 + 8)
    names = n.names(nw.RACKDEV)
    assert names[0] == "nvsw-c00-0" and names[9] == "pshelf-c00-0" and len(set(names)) == len(names)
    # a rack's devices on that rack's OOB switches
    for i in np.flatnonzero(dev)[:: 7].tolist():
        rack = int(c.a_idx[i]) // 17
        assert n.switches[int(c.z_idx[i])].group == rack
    closed = nw.closed_form(n.plan)
    assert n.counts() == {k: {"switches": v["switches"], "cables": v["cables"]} for k, v in closed.items()}
