"""The other networks everywhere the compute fabric goes: floor layout, NetBox, topology.json, GraphML.

Each test reads what the real ``topogen build`` wrote for the dgx-h100-superpod preset (and
variants of it), and checks it against the model (``topogen.fabric.networks``) it renders.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.fabric import networks as nw
from topogen.layout.networks import compute_switch_racks
from topogen.spec.cluster import load_spec
from topogen.spec.layout import SELLABLE_M

from test_netbox import parts, read

ARCHES = ("rail-optimized", "rail-only")
FORMATS = "cabling,topology,netbox,graphml"


def build(out: Path, *args: str, formats: str = FORMATS) -> Path:
    res = CliRunner().invoke(main, ["build", *args, "--out", str(out), "--formats", formats], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def superpod(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("netx") / "sp", "dgx-h100-superpod")


@pytest.fixture(scope="module")
def ctx():
    return pipeline.build(load_spec("dgx-h100-superpod"))


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# --- 1. racks and floor ----------------------------------------------------------------------


def test_superpod_racks_are_the_models(ctx, superpod):
    """32 compute + 6 management racks: the compute layout's 3 switch racks and 3 of the other networks', each with its PDUs."""
    for arch in ARCHES:
        n, lay, nl = ctx.networks[arch], ctx.layouts[arch], ctx.network_layouts[arch]
        assert n.racks == (32, 6)
        assert compute_switch_racks(lay) == 3
        assert len(nl.floor) == 38 and Counter(nl.floor.kind)["management"] == 3 and nl.racks == ["D01", "D02", "D03"]
        assert list(nl.floor.name[: len(lay.racks)]) == list(lay.racks.name)  # the compute layout stands as it was
        pdus = Counter(nl.where[nw.PDU][0].tolist())
        assert sorted(pdus.values()) == [2] * 6 + [3] * 32
        assert {nl.floor.kind[r] for r, c in pdus.items() if c == 3} == {"compute"}
    s = json.loads((superpod / "summary.json").read_text())["networks"]["architectures"]["rail-optimized"]["layout"]
    assert s["racks"] == 38 and s["management_racks_placed"] == 3
    assert s["cables_with_length"] == 548 + 304 + 333 - 48 - 8 - 4  # not the targets', NFS and core cables: outside the plan
    assert {k: v["cables"] for k, v in s["cables"].items()} == {"storage": 548, "inband": 304, "oob": 333}


def test_no_two_chassis_share_a_unit(ctx):
    """Compute trays and switches, the networks' switches and servers: every U of every rack holds at most one chassis."""
    for arch in ARCHES:
        lay, nl = ctx.layouts[arch], ctx.network_layouts[arch]
        p = lay.placement
        seen = {(r, u + k) for r, u, h in zip(p.rack.tolist(), p.u.tolist(), p.height_u.tolist()) for k in range(h)}
        for kind in (nw.SWITCH, nw.MGMT, nw.UFM):
            rack, u, h = nl.where[kind]
            for r, uu, hh in zip(rack.tolist(), u.tolist(), h.tolist()):
                assert r >= 0 and 1 <= uu and uu + hh - 1 <= lay.spec.rack_u
                units = {(r, uu + k) for k in range(hh)}
                assert not units & seen, (arch, kind, r, uu)
                seen |= units


def test_oob_access_switches_stand_in_their_units_racks(ctx):
    n, nl = ctx.networks["rail-optimized"], ctx.network_layouts["rail-optimized"]
    node_rack = nl.where[nw.NODE][0]
    p = n.plan
    for i, s in enumerate(n.switches):
        r = int(nl.where[nw.SWITCH][0][i])
        if s.network == nw.OOB:
            assert nl.floor.kind[r] == "compute"
            su = range(s.group * p.su_nodes, min(p.nodes, (s.group + 1) * p.su_nodes))
            assert r in set(node_rack[list(su)].tolist())
        else:
            assert nl.floor.kind[r] == "management"


def test_cable_lengths_and_labels(superpod, ctx):
    """Every cable has a sold length and both ends' rack and U (but outside the plan), and a unique label."""
    for arch in ARCHES:
        rs = rows(superpod / arch / "networks-cabling.csv")
        assert len(rs) == len(ctx.networks[arch].cables)
        for r in rs:  # a sold length, but for the cables to a device outside the plan (no position: no length)
            outside = r["a_device"] in ("targets", "nfs", "dc-core") or r["z_device"] in ("targets", "nfs", "dc-core")
            assert (r["length_m"] == "") if outside else float(r["length_m"]) in SELLABLE_M
        assert len({r["label"] for r in rs}) == len(rs)
        for r in rs:
            for end in "az":
                outside = r[f"{end}_device"] in ("targets", "nfs", "dc-core")
                assert bool(r[f"{end}_rack"]) != outside  # placed, but for the devices outside the plan
                assert (r[f"{end}_u"] not in ("", "0")) == (not outside and r[f"{end}_role"] != "pdu")  # PDUs are zero-U
        within = [r for r in rs if r["a_rack"] == r["z_rack"]]
        assert within and all(float(r["length_m"]) <= 3 for r in within)  # in one rack: a patch cord
        node = [r for r in rs if r["a_role"] == "node" and r["network"] == "storage"]
        assert all(r["a_rack"] != r["z_rack"] for r in node)  # node to management row: across the hall


def test_lengths_follow_the_floor(ctx):
    """A longer hall (wider row pitch) never shortens a cable; the management row at the end lengthens node cables."""
    from dataclasses import replace

    from topogen.layout import plan as compute_plan
    from topogen.layout.networks import plan_networks as net_plan
    from topogen.spec.layout import racks_per_row

    arch = "rail-optimized"
    f, n = ctx.fabrics[arch], ctx.networks[arch]
    base = ctx.network_layouts[arch]
    lay = ctx.layouts[arch].spec
    rpr = racks_per_row(lay, n.racks[0])  # the same racks in each row, rows further apart
    wide = replace(f, spec=replace(f.spec, layout=replace(lay, row_pitch_m=2 * lay.row_pitch_m, racks_per_row=rpr)))
    nl = net_plan(n, compute_plan(wide))
    known = ~np.isnan(base.routed_m)
    assert (np.isnan(nl.routed_m) == ~known).all()
    assert (nl.routed_m[known] >= base.routed_m[known] - 1e-9).all()
    assert (nl.routed_m[known] > base.routed_m[known]).any()


@pytest.mark.parametrize("gpus", ["256", "512", "1016", "2048"])
def test_layout_invariants_over_sizes(gpus, tmp_path):
    """Over cluster sizes: the laid-out racks equal the model's, every device is placed, PDUs one set per rack."""
    out = build(tmp_path / gpus, "dgx-h100-superpod", "--gpus", gpus, "--arch", "rail-optimized", formats="cabling")
    s = json.loads((out / "summary.json").read_text())["networks"]["architectures"]["rail-optimized"]
    assert s["layout"]["racks"] == s["racks"]["compute"] + s["racks"]["management"]
    rs = rows(out / "rail-optimized" / "networks-cabling.csv")
    assert len(rs) == s["totals"]["other_cables"]
    assert len({r["label"] for r in rs}) == len(rs)
    pdus = Counter(r["a_rack"] for r in rs if r["a_role"] == "pdu")
    assert sum(pdus.values()) == s["pdus"] and len(pdus) == s["layout"]["racks"]


# --- 2. NetBox -------------------------------------------------------------------------------


def test_netbox_files_hold_every_network(superpod, ctx):
    """Every device and cable of every network, by role and network (tests/test_netbox_live.py imports them into NetBox)."""
    for arch in ARCHES:
        d = superpod / arch / "netbox"
        devs = rows(d / "networks-devices.csv")
        n = ctx.networks[arch]
        roles = Counter(r["role"] for r in devs)
        assert roles["storage-leaf"] == 8 and roles["storage-target-leaf"] == 4 and roles["storage-spine"] == 4
        assert roles["inband-leaf"] == 6 and roles["inband-spine"] == 2 and roles["oob-access"] == 8
        assert roles["pdu"] == 108 and roles["management-server"] == 4 and roles["fabric-manager"] == 4
        assert {r["rack"] for r in devs if r["role"] in ("storage-target", "nfs", "dc-core")} == {""}
        cables = [r for p in parts(d, "networks-cables") for r in read(p)[1]]
        assert len(cables) == len(n.cables)
        assert Counter(r["label"].split("/")[1].split("-")[0] for r in cables) == {"storage": 548, "inband": 304, "oob": 333}
    site = "dgx-h100-superpod-rail-optimized"
    assert f"{site}.stor-leaf-su00-p0" in {r["name"] for r in rows(superpod / "rail-optimized" / "netbox" / "networks-devices.csv")}


def test_netbox_interfaces(superpod):
    d = superpod / "rail-optimized" / "netbox"
    ifs = [r for p in parts(d, "networks-interfaces") for r in read(p)[1]]
    assert len({(r["device"], r["name"]) for r in ifs}) == len(ifs)
    node = {r["name"]: r["lag"] for r in ifs if r["device"].endswith(".hb000")}
    assert node == {"bond0": "", "stor0": "", "stor1": "", "inb0": "bond0", "inb1": "bond0", "bmc": ""}
    spine = {r["name"]: r["type"] for r in ifs if r["device"].endswith(".stor-spine-00")}
    assert spine.pop("mgmt0") == "1000base-t" and set(spine.values()) == {"infiniband-ndr"}  # the QM9700's catalog type
    # every port of every network switch once: used ones enabled, the rest disabled
    stor = [r for r in ifs if r["device"].endswith(".stor-leaf-su00-p0")]
    assert {r["name"] for r in stor if r["name"].startswith("p")} == {f"p{i}" for i in range(1, 65)}
    assert sum(r["enabled"] == "true" for r in stor) == 32 + 24 + 1  # 32 nodes, 24 uplinks, its management port


@pytest.mark.parametrize("bmc", [2, 3])
def test_several_bmc_ports_are_numbered(tmp_path, bmc):
    """Several BMC ports per node: bmc0, bmc1... each an interface, a cable end and an address of its own; the first is the device's OOB address."""
    raw = yaml.safe_load(Path("templates/clusters/dgx-h100-superpod.yaml").read_text())
    raw.update(name="ra-bmc", gpus=256)
    raw["networks"]["node_ports"]["bmc"]["count"] = bmc
    raw["networks"]["storage"]["target_ports"] = 16
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(raw))
    out = build(tmp_path / "o", str(tmp_path / "s.yaml"), "--arch", "rail-optimized", formats="cabling,netbox")
    d = out / "rail-optimized"
    names = [f"bmc{i}" for i in range(bmc)]
    node = [r for r in rows(d / "networks-cabling.csv") if r["network"] == "oob" and r["a_role"] == "node"]
    assert len(node) == 32 * bmc and len({(r["a_device"], r["a_port"]) for r in node}) == len(node)
    assert Counter(r["a_port"] for r in node) == {x: 32 for x in names}
    addr = [r for r in rows(d / "networks-addresses.csv") if r["network"] == "oob" and r["device_role"] == "node"]
    assert len({(r["device"], r["interface"]) for r in addr}) == len(addr) == 32 * bmc
    assert len({r["address"] for r in addr}) == len(addr)
    ifs = [r for p in parts(d / "netbox", "networks-interfaces") for r in read(p)[1]]
    first = "." + node[0]["a_device"]
    assert sorted(r["name"] for r in ifs if r["device"].endswith(first) and r["name"].startswith("bmc")) == names
    ips = [r for p in parts(d / "netbox", "networks-ip-addresses") for r in read(p)[1]]
    oob = Counter(r["device"] for r in ips if r["is_oob"] == "true")
    assert set(oob.values()) == {1} and {r["interface"] for r in ips if r["is_oob"] == "true" and r["device"].endswith(first)} == {"bmc0"}


def test_netbox_compute_files_unchanged_by_networks(superpod, tmp_path):
    """The compute fabric's NetBox files are the same bytes with and without the networks section."""
    spec = Path(__file__).parents[1] / "templates" / "clusters" / "dgx-h100-superpod.yaml"
    text = spec.read_text()
    plain = tmp_path / "dgx-h100-superpod.yaml"
    plain.write_text(text[: text.index("\nnetworks:")] + "\n")
    out = build(tmp_path / "plain", str(plain))
    for arch in ARCHES:
        names = sorted(p.name for p in (out / arch / "netbox").glob("*.csv"))
        assert {"racks.csv", "devices.csv", "interfaces-001.csv", "cables-001.csv"} <= set(names)
        for name in names:
            assert (out / arch / "netbox" / name).read_bytes() == (superpod / arch / "netbox" / name).read_bytes(), name
        assert not (out / arch / "netbox" / "networks-devices.csv").exists()
        assert not (out / arch / "networks-cabling.csv").exists()
        assert '"network"' not in (out / arch / "topology.json").read_text()
        assert "n_network" not in (out / arch / "topology.graphml").read_text()


# --- 3. topology.json and GraphML ------------------------------------------------------------


def test_graphs_hold_every_network(superpod, ctx):
    for arch in ARCHES:
        g = nx.node_link_graph(json.loads((superpod / arch / "topology.json").read_text()), edges="edges")
        h = nx.read_graphml(superpod / arch / "topology.graphml", force_multigraph=True)
        n, f = ctx.networks[arch], ctx.fabrics[arch]
        assert g.number_of_edges() == h.number_of_edges() == len(f.links) + len(n.cables)
        assert g.number_of_nodes() == h.number_of_nodes()
        for graph in (g, h):
            assert all("network" in d for _, d in graph.nodes(data=True))
            by_net = Counter(d["network"] for *_, d in graph.edges(data=True))
            assert by_net == {"compute": len(f.links), **{k: sum(v["cables"].values()) for k, v in n.counts().items()}}
        # a node's storage ports reach its leaves, and the compute switches carry their management port to the OOB network
        assert {v for v in g["hb000"]} >= {"stor-leaf-su00-p0", "stor-leaf-su00-p1", "inb-leaf-00a", "inb-leaf-00b"}
        leaf = f.switches[0].name
        assert any(g.nodes[v]["role"] == "oob-access" for v in g[leaf])


def test_exports_are_deterministic(superpod, tmp_path):
    again = build(tmp_path / "again", "dgx-h100-superpod")
    for arch in ARCHES:
        for rel in ("networks-cabling.csv", "topology.json", "topology.graphml", "netbox/networks-devices.csv", "netbox/networks-interfaces.csv", "netbox/networks-cables.csv", "netbox/networks-racks.csv"):
            assert (again / arch / rel).read_bytes() == (superpod / arch / rel).read_bytes(), rel


# --- 4. diagrams -----------------------------------------------------------------------------


def test_networks_diagram_draws_all_four(tmp_path, ctx):
    """``<arch>/networks.dot`` read back through Graphviz: a frame per network, bundles adding up to the model's cables."""
    import shutil
    import subprocess

    out = build(tmp_path / "d", "dgx-h100-superpod", formats="diagrams")
    dot = shutil.which("dot")
    if dot is None:
        pytest.skip("Graphviz dot not installed")
    for arch in ARCHES:
        p = out / arch / "networks.dot"
        assert (out / arch / "networks.svg").exists() and (out / arch / "networks.png").exists()
        g = json.loads(subprocess.run([dot, "-Tjson", str(p)], check=True, capture_output=True, text=True).stdout)
        frames = {o["name"] for o in g.get("objects", []) if o["name"].startswith("cluster_")}
        assert frames == {"cluster_compute", "cluster_storage", "cluster_inband", "cluster_oob"}
        links = Counter()
        for e in g["edges"]:
            links[e["topogen_network"]] += int(e["topogen_links"])
        n, f = ctx.networks[arch], ctx.fabrics[arch]
        assert links == {"compute": len(f.links), **{k: sum(v["cables"].values()) for k, v in n.counts().items()}}
        devices = {o["name"]: int(o["topogen_devices"]) for o in g["objects"] if "topogen_devices" in o}
        assert devices["b_nodes"] == n.plan.nodes and devices["b_storage_spine"] == 4 and devices["b_oob_access"] == 8


# --- 5. topogen diff: LLDP of the Ethernet networks ------------------------------------------


def _lldp(cables: list[tuple[str, str, str, str]], dest: Path) -> Path:
    """lldpctl -f json of every device on ``cables`` ``(a_device, a_port, z_device, z_port)``; switch ports as Cumulus swp<n>."""

    def ifname(port: str) -> str:
        return f"swp{port[1:]}" if port[:1] == "p" and port[1:].isdigit() else port

    per: dict[str, list] = {}
    for a, ap, z, zp in cables:
        for here, hp, there, tp in ((a, ap, z, zp), (z, zp, a, ap)):
            per.setdefault(here, []).append(
                {ifname(hp): {"chassis": {there: {"id": {"type": "mac", "value": "0c:42:a1:00:00:01"}}}, "port": {"id": {"type": "ifname", "value": ifname(tp)}, "descr": ifname(tp)}}}
            )
    dest.mkdir(parents=True, exist_ok=True)
    for host, items in per.items():
        (dest / f"{host}.json").write_text(json.dumps({"lldp": {"interface": items}}))
    return dest


def _diff(plan: Path, *found: Path) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["diff", str(plan), *map(str, found), "--json"], catch_exceptions=False)
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.output)


def _net_cables(superpod: Path, network: str) -> list[tuple[str, str, str, str]]:
    return [(r["a_device"], r["a_port"], r["z_device"], r["z_port"]) for r in rows(superpod / "rail-optimized" / "networks-cabling.csv") if r["network"] == network]


@pytest.mark.parametrize("network", ["inband", "oob"])
def test_diff_lldp_of_one_ethernet_network(superpod, tmp_path, network):
    """LLDP of one network as built: identical, only that network compared, and the note names what was not covered."""
    cables = _net_cables(superpod, network)
    code, res = _diff(superpod / "rail-optimized", _lldp(cables, tmp_path / "lldp"))
    assert code == 0, res
    notes = " ".join(res["notes"])
    title = {"inband": "the in-band network", "oob": "the OOB network"}[network]
    assert f"compared only {title}:" in notes
    other = {"inband": "the OOB network (333 planned cables)", "oob": "the in-band network (304 planned cables)"}[network]
    assert "the compute fabric (2,040 planned cables)" in notes and "the storage network (548 planned cables)" in notes and other in notes
    assert res["identical"] == len(cables)


def test_diff_inband_lldp_that_sees_the_oob_boundary(superpod, tmp_path):
    """In-band switches' LLDP also sees their management ports and the OOB uplinks: the OOB network is still not compared."""
    inband = _net_cables(superpod, "inband")
    boundary = [c for c in _net_cables(superpod, "oob") if c[2].startswith("inb-") or c[0].startswith("inb-")]
    assert len(boundary) == 16 + 8  # 16 OOB uplinks, 8 in-band switches' management ports
    code, res = _diff(superpod / "rail-optimized", _lldp(inband + boundary, tmp_path / "lldp"))
    assert code == 0, res["deviations"][:3]
    notes = " ".join(res["notes"])
    assert "compared only the in-band network:" in notes and "24 found cable(s) of networks not covered" in notes


def test_diff_lldp_finds_a_moved_inband_cable(superpod, tmp_path):
    """A node's in-band port plugged into a free port of its leaf: a wrong-port deviation naming both ends; nothing else."""
    cables = _net_cables(superpod, "inband")
    used: dict[str, set[str]] = {}
    for c in _net_cables(superpod, "oob") + cables:  # the OOB uplinks land on the in-band leaves too
        for d, p in ((c[0], c[1]), (c[2], c[3])):
            used.setdefault(d, set()).add(p)
    i, free = next((k, f"p{q}") for k, c in enumerate(cables) if c[1] == "inb0" for q in range(1, 65) if f"p{q}" not in used[c[2]])  # a port the plan leaves free
    a, ap, z, zp = cables[i]
    cables[i] = (a, ap, z, free)
    code, res = _diff(superpod / "rail-optimized", _lldp(cables, tmp_path / "lldp"))
    assert code == 1
    assert [d["kind"] for d in res["deviations"]] == ["wrong-port"]
    d = res["deviations"][0]
    assert {d["planned"][0]["a"], d["planned"][0]["z"]} == {f"{a}:{ap}", f"{z}:{zp}"}
    assert {d["found"][0]["a"], d["found"][0]["z"]} == {f"{a}:{ap}", f"{z}:{free}"}


def test_diff_of_the_compute_fabric_alone_still_checks_its_design(superpod, tmp_path):
    """A compute-only as-built (its cabling.csv) compares the compute fabric, runs the design checks, names the rest."""
    code, res = _diff(superpod / "rail-optimized", superpod / "rail-optimized" / "cabling.csv")
    assert code == 0
    notes = " ".join(res["notes"])
    assert "compared only the compute fabric" in notes and "design checks skipped" not in notes


# --- 6. a networks-cabling.csv validated and diffed as what it is -----------------------------


def _edit(superpod: Path, dest: Path, change) -> Path:
    """networks-cabling.csv of the build with ``change(rows)`` applied, written to ``dest`` (a plain CSV: --spec names its spec)."""
    src = superpod / "rail-optimized" / "networks-cabling.csv"
    rs = rows(src)
    change(rs)
    with open(dest, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rs[0]))
        w.writeheader()
        w.writerows(rs)
    return dest


def _validate(path: Path, *args: str):
    res = CliRunner().invoke(main, ["validate", str(path), *args], catch_exceptions=False)
    return res.exit_code, res.output


def _storage_on_compute(rs):
    r = next(r for r in rs if r["network"] == "storage" and r["role"] == "node")
    r["z_device"], r["z_port"] = "leaf-g0-r0", "p40"


def test_validate_networks_cabling_of_a_build_is_valid(superpod):
    code, out = _validate(superpod / "rail-optimized" / "networks-cabling.csv")
    assert code == 0, out
    assert out.startswith("rail-optimized: storage, in-band and OOB networks as built (1,185 cables read from ") and "): valid (" in out


@pytest.mark.parametrize("preset,gpus", [("era-2-8-9-400", "32"), ("era-2-8-9-400", "128"), ("dgx-h100-superpod", "128"), ("dgx-h100-superpod", "512")])
def test_validate_networks_cabling_over_sizes(tmp_path, preset, gpus):
    """Every build's own networks-cabling.csv validates, whatever its size and design (converged or separate storage)."""
    out = build(tmp_path / "b", preset, "--gpus", gpus, "--arch", "rail-optimized", formats="cabling")
    path = out / "rail-optimized" / "networks-cabling.csv"
    code, text = _validate(path)
    assert code == 0, text
    assert f"({len(rows(path)):,} cables read from" in text


@pytest.mark.parametrize(
    "case,check,words",
    [
        ("storage-on-compute", "networks.separate", "a storage cable (hb000:stor0 -- leaf-g0-r0:p40) ends on leaf-g0-r0 of the compute fabric"),
        ("row-missing", "networks.as-built", "253 storage node cable(s), the design has 254"),
        ("past-radix", "networks.port-reuse", "port p70 of stor-leaf-su00-p0 is past the switch's 64 ports"),
        ("unknown-device", "networks.as-built", "hb999:stor0 is no device port of the design's networks"),
        ("two-on-one-port", "networks.port-reuse", "stor-leaf-su00-p0 port p1 carries 2 cables"),
    ],
)
def test_validate_networks_cabling_finds_what_is_wrong(superpod, tmp_path, case, check, words):
    def change(rs):
        first = next(i for i, r in enumerate(rs) if r["network"] == "storage" and r["role"] == "node")
        if case == "storage-on-compute":
            _storage_on_compute(rs)
        elif case == "row-missing":
            del rs[first]
        elif case == "past-radix":
            rs[first]["z_port"] = "p70"
        elif case == "unknown-device":
            rs[first]["a_device"] = "hb999"
        else:
            rs[first + 1]["z_port"] = rs[first]["z_port"]

    path = _edit(superpod, tmp_path / "networks.csv", change)
    code, out = _validate(path, "--spec", "dgx-h100-superpod", "--arch", "rail-optimized")
    assert code == 1, out
    assert f"error   {check}: " in out and words in out, out


def test_validate_networks_cabling_needs_a_networks_spec(superpod, tmp_path):
    plain = tmp_path / "plain.yaml"
    plain.write_text("name: plain\ngpus: 1016\nhb_domain: 8\nradix: 64\ncatalog: ndr-400g\n")
    code, out = _validate(superpod / "rail-optimized" / "networks-cabling.csv", "--spec", str(plain))
    assert code == 2 and "has no networks: section" in out


def test_diff_of_a_storage_cable_on_a_compute_leaf_is_an_error(superpod, tmp_path):
    """The networks' checks run on the as-built wiring: the moved cable breaks the design, and the deviation says why."""
    path = _edit(superpod, tmp_path / "asbuilt.csv", _storage_on_compute)
    code, res = _diff(superpod / "rail-optimized", path)
    assert code == 1
    assert [(d["kind"], d["severity"]) for d in res["deviations"]] == [("wrong-device", "error")]
    assert any("networks.separate" in b for b in res["deviations"][0]["because"])
    assert res["design_check"]["scope"] == "storage, in-band and OOB networks" and res["design_check"]["errors"] == 1
    code, res = _diff(superpod / "rail-optimized", superpod / "rail-optimized" / "networks-cabling.csv")
    assert code == 0 and res["design_check"]["valid"]
