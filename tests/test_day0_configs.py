"""Switch and host configurations rendered from the addressing plan: SONiC, NVUE, netplan + NCCL, NVIDIA Air.

Read back, not trusted: every config_db.json loads as JSON and every YAML with
a YAML loader; every BGP neighbour of every switch (SONiC and NVUE) is an
address (or, unnumbered, a port) of a switch that holds it, with that switch's
ASN, and the neighbour counts are the switch-facing ports; the VRFs of shared
switches hold every port; each node's netplan routes through its leaf's
address; Air's links are the cables with the NVUE port names. Over a grid of
shapes, both architectures, three addressing modes. netplan's own generator
(``netplan generate --root-dir``, Debian's netplan.io) reads the node files
when installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from topogen import pipeline
from topogen.config import air, batches, hosts, nvue, scalars, sonic
from topogen.config.addressing import plan
from topogen.config.ports import port_names
from topogen.spec.cluster import build_spec

SHAPES = [
    # gpus, hb_domain, radix, extra
    (64, 8, 16, {}),  # demo: 2-tier rail-optimized, rail-only rails sharing a switch (VRF per rail)
    (128, 8, 8, {"rail_packing": "dedicated"}),  # 3 tiers, 2-tier rails
    (96, 8, 16, {"planes": 2}),  # two NIC ports per GPU, two planes
    (64, 8, 16, {"homing": "dual"}),  # leaf pairs
    (64, 8, 16, {"gpus_per_node": 4}),  # two nodes per HB domain
    (32, 8, 32, {"design": "leaf-pair", "gpus_per_node": 4}),  # the Enterprise RA's leaf pair: 16 ISLs, eBGP between its leaves
    (16, 8, 32, {"design": "leaf-pair", "gpus_per_node": 2, "planes": 2, "oversubscription": "2:1"}),  # a pair per plane, 4 ISLs each
]
MODES = {"default": None, "unnumbered": {"p2p": "unnumbered"}, "rail-subnet": {"gpu_subnet": "rail"}}
FORMATS = ["addressing", "sonic", "nvue", "netplan", "air"]
NETPLAN = shutil.which("netplan", path="/usr/sbin:/usr/bin:/sbin")


def _spec(gpus, hb, radix, extra, addressing=None):
    data = {"name": "day0", "gpus": gpus, "hb_domain": hb, "radix": radix, **extra}
    if addressing:
        data["addressing"] = addressing
    return build_spec(data)


@pytest.fixture(scope="module", params=[(s, m) for s in SHAPES for m in MODES], ids=lambda p: "n{}-k{}-r{}".format(*p[0][:3]) + "".join(f"-{v}" for v in p[0][3].values()) + f"-{p[1]}")
def built(request, tmp_path_factory):
    shape, mode = request.param
    ctx = pipeline.build(_spec(*shape, MODES[mode]))
    out = tmp_path_factory.mktemp("day0")
    pipeline.write_outputs(ctx, out, FORMATS)
    return ctx, out


def _sonic(out: Path, arch: str) -> dict[str, dict]:
    return {p.name.removesuffix(".config_db.json"): json.loads(p.read_text()) for p in sorted((out / arch / "sonic").rglob("*.config_db.json"))}


def _nvue(out: Path, arch: str) -> dict[str, dict]:
    docs = {}
    for p in sorted((out / arch / "nvue").rglob("*.startup.yaml")):
        (doc,) = yaml.safe_load(p.read_text())
        docs[p.name.removesuffix(".startup.yaml")] = doc["set"]
    return docs


def test_one_file_per_switch_in_folders(built):
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        for fmt, suffix in (("sonic", ".config_db.json"), ("nvue", ".startup.yaml")):
            files = sorted((out / arch / fmt).rglob(f"*{suffix}"))
            assert sorted(p.name.removesuffix(suffix) for p in files) == sorted(s.name for s in fabric.switches)
            assert all(p.parent != out / arch / fmt for p in files)  # never one flat folder


def test_sonic_config_db(built):
    """Tables present; every address and ASN is the plan's; every BGP neighbour is a peer's address (or port) with the peer's ASN."""
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        ad = plan(fabric)
        dbs = _sonic(out, arch)
        owner: dict[str, tuple[str, str]] = {}  # address -> (switch, vrf)
        for name, db in dbs.items():
            for key, val in db["INTERFACE"].items():
                if "|" in key:
                    owner[key.split("|")[1].split("/")[0]] = (name, db["INTERFACE"][key.split("|")[0]].get("vrf_name", ""))
            for key in db.get("VLAN_INTERFACE", {}):
                if "|" in key:
                    owner[key.split("|")[1].split("/")[0]] = (name, "")
        asn = {name: db["DEVICE_METADATA"]["localhost"]["bgp_asn"] for name, db in dbs.items()}
        idx = {s.name: i for i, s in enumerate(fabric.switches)}
        for name, db in dbs.items():
            s = idx[name]
            assert set(db) >= {"DEVICE_METADATA", "PORT", "INTERFACE", "LOOPBACK_INTERFACE"}
            assert asn[name] == str(int(ad.asn[s]))
            sl = ad.ends.of(s)
            ports = db["PORT"]
            assert len(ports) == sl.stop - sl.start  # every cabled port
            lanes = [x for p in ports.values() for x in p["lanes"].split(",")]
            assert len(lanes) == len(set(lanes))
            assert {p["alias"] for p in ports.values()} == {f"p{x}" for x in ad.ends.port[sl].tolist()}
            to_switch = int((ad.ends.peer[sl] >= fabric.gpus).sum())
            assert len(db.get("BGP_NEIGHBOR", {})) == to_switch
            for key, nb in db.get("BGP_NEIGHBOR", {}).items():
                vrf, _, peer = key.rpartition("|")
                if peer.startswith("Ethernet"):  # unnumbered: a port of this switch facing the peer
                    assert peer in ports and ad.spec.p2p == "unnumbered"
                    assert nb["asn"] == asn[nb["name"].split(":")[0]]
                    continue
                peer_switch, peer_vrf = owner[peer]
                assert peer_switch == nb["name"].split(":")[0] and nb["asn"] == asn[peer_switch]
                assert owner[nb["local_addr"]][0] == name
                assert vrf == owner[nb["local_addr"]][1]
            if ad.shared[s]:
                assert set(db["VRF"]) == {f"Vrfrail{r}" for r in ad.vrfs(s)}
                assert all(db["INTERFACE"].get(p, {}).get("vrf_name") in db["VRF"] for p in ports if p in db["INTERFACE"])
            else:
                assert "VRF" not in db


def test_nvue_startup(built):
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        ad = plan(fabric)
        docs = _nvue(out, arch)
        addr_of: dict[str, str] = {}
        for name, doc in docs.items():
            for ifname, it in doc["interface"].items():
                for a in it.get("ip", {}).get("address", {}):
                    addr_of[a.split("/")[0]] = name
        asn = {name: doc["router"]["bgp"]["autonomous-system"] for name, doc in docs.items()}
        for s, sw in enumerate(fabric.switches):
            doc = docs[sw.name]
            assert asn[sw.name] == int(ad.asn[s])
            nbrs = {k: v for vrf in doc["vrf"].values() for k, v in vrf["router"]["bgp"]["neighbor"].items()}
            sl = ad.ends.of(s)
            assert len(nbrs) == int((ad.ends.peer[sl] >= fabric.gpus).sum())
            for key, nb in nbrs.items():
                peer = nb["description"].split(":")[0]
                assert nb["remote-as"] == asn[peer]
                if nb["type"] == "numbered":
                    assert addr_of[key] == peer
                else:
                    assert key in doc["interface"] and doc["interface"][key]["description"] == nb["description"]
            if ad.shared[s]:
                assert set(doc["vrf"]) >= {f"rail{r}" for r in ad.vrfs(s)}


def test_netplan_and_nccl(built):
    """Each NIC's gateway is its leaf's address on that cable; one table and one source rule per NIC; NCCL pins local rank r to the NIC(s) of its GPU."""
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        ad = plan(fabric)
        nn = hosts.nodes(fabric)
        files = sorted((out / arch / "netplan").rglob("*.yaml"))
        assert len(files) == nn.nodes
        rows, starts = hosts.node_links(fabric)
        gws = set(ad.z_addr[rows].tolist())
        import ipaddress

        for f in files:
            eth = yaml.safe_load(f.read_text())["network"]["ethernets"]
            tables = [it["routes"][0]["table"] for it in eth.values()]
            assert len(set(tables)) == len(tables) == len(eth)
            for ifname, it in eth.items():
                assert len(ifname) <= 15
                (mine,) = it["addresses"]
                gw = it["routes"][1]["via"]
                assert int(ipaddress.ip_address(gw)) in gws
                assert ipaddress.ip_address(gw) in ipaddress.ip_network(mine, strict=False)
                assert it["routing-policy"][0]["from"] == mine.split("/")[0] + "/32"
            sh = f.with_name(f.name.replace(".yaml", ".nccl.sh")).read_text()
            cases = dict(re.findall(r"^    (\d+)\) export NCCL_IB_HCA==([\w,]+) ;;", sh, re.M))
            assert len(cases) == nn.per_node
            per_gpu = len(eth) // nn.per_node
            for k, hcas in cases.items():
                assert hcas.split(",") == [f"mlx5_{int(k) * per_gpu + j}" for j in range(per_gpu)]


@pytest.mark.skipif(NETPLAN is None, reason="netplan not installed (apt-get install netplan.io)")
def test_netplan_generate_accepts_the_files(built, tmp_path):
    ctx, out = built
    for arch in ctx.fabrics:
        files = sorted((out / arch / "netplan").rglob("*.yaml"))
        for f in files[:2] + files[-1:]:  # one node's file per root: each node is its own host
            root = tmp_path / arch / f.stem
            (root / "etc" / "netplan").mkdir(parents=True)
            shutil.copy(f, root / "etc" / "netplan" / f.name)
            (root / "etc" / "netplan" / f.name).chmod(0o600)
            res = subprocess.run([NETPLAN, "generate", "--root-dir", str(root)], capture_output=True, text=True, timeout=60)
            assert res.returncode == 0, res.stderr
            nets = list((root / "run" / "systemd" / "network").glob("*.network"))
            assert len(nets) == len(yaml.safe_load(f.read_text())["network"]["ethernets"])
            assert all("RoutingPolicyRule" in p.read_text() for p in nets)


@pytest.mark.skipif(NETPLAN is None, reason="netplan not installed (apt-get install netplan.io)")
def test_netplan_generate_rejects_a_broken_file(tmp_path):
    """The validator can fail: a route without a destination."""
    (tmp_path / "etc" / "netplan").mkdir(parents=True)
    p = tmp_path / "etc" / "netplan" / "x.yaml"
    p.write_text("network:\n  version: 2\n  ethernets:\n    gpu0-nic0:\n      addresses: [10.0.0.1/31]\n      routes:\n      - via: 10.0.0.0\n        table: 101\n")
    p.chmod(0o600)
    res = subprocess.run([NETPLAN, "generate", "--root-dir", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0


def test_air_topology(built):
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        topo = json.loads((out / arch / "air" / "topology.json").read_text())
        assert topo["format"] == "JSON"
        nodes, links = topo["content"]["nodes"], topo["content"]["links"]
        assert len(nodes) == len(fabric.switches) + hosts.nodes(fabric).nodes
        assert len(links) == fabric.cables  # the links and a leaf pair's ISLs
        docs = _nvue(out, arch)
        ends = Counter()
        for a, z in links:
            for end in (a, z):
                assert end["node"] in nodes
                ends[(end["node"], end["interface"])] += 1
                if end["node"] in docs:
                    assert end["interface"] in docs[end["node"]]["interface"]
        assert max(ends.values()) == 1  # no port cabled twice


def test_same_spec_same_bytes(tmp_path):
    for run in ("a", "b"):
        pipeline.write_outputs(pipeline.build(_spec(64, 8, 16, {})), tmp_path / run, FORMATS)
    a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert a == b
    assert all((tmp_path / "a" / p).read_bytes() == (tmp_path / "b" / p).read_bytes() for p in a if p.name != "manifest.json")


def _fast_and_reference(ctx):
    """Every switch/node text of SONiC, NVUE, netplan (+NCCL) and Air, written from columns and through json/PyYAML."""
    for fabric in ctx.fabrics.values():
        yield "sonic", list(sonic.generate_texts(ctx, fabric)), list(sonic.reference_texts(ctx, fabric))
        yield "nvue", list(nvue.generate_texts(ctx, fabric)), list(nvue.reference_texts(ctx, fabric))
        yield "netplan", list(hosts.generate_texts(fabric)), list(hosts.reference_texts(fabric))
        yield "air", "".join(air.chunks(ctx, fabric)), air.reference_text(ctx, fabric)


def test_column_writers_equal_the_json_yaml_rendering(built):
    """The fast writers are byte for byte ``json.dumps``/``yaml.dump`` of the per-switch documents (so a speed-up cannot change content)."""
    ctx, _ = built
    for fmt, fast, ref in _fast_and_reference(ctx):
        assert fast == ref, fmt
    for fabric in ctx.fabrics.values():
        assert all("&id0" not in text for _, text in nvue.generate_texts(ctx, fabric))  # no YAML aliases: every bfd block written out


def test_column_writers_with_breakout_and_many_pieces(monkeypatch):
    """Breakout legs (SONiC BREAKOUT_CFG lanes, NVUE swp<n>s<j>); switches rendered in many small batches, Air streamed in many pieces."""
    ctx = pipeline.build(build_spec({"name": "brk", "gpus": 1024, "hb_domain": 8, "radix": [128, 576], "link_speed": [200, 400], "catalog": "chassis-400g", "arch": "rail-optimized"}))
    assert (port_names(ctx, ctx.fabrics["rail-optimized"], plan(ctx.fabrics["rail-optimized"])).legs > 1).any()
    monkeypatch.setattr(air, "CHUNK", 7)
    for rows in (1, 300):
        monkeypatch.setattr(batches, "ROWS", rows)
        for fmt, fast, ref in _fast_and_reference(ctx):
            assert fast == ref, (fmt, rows)


@pytest.mark.parametrize("mode", list(MODES))
def test_column_writers_in_small_batches(monkeypatch, mode):
    """Switches rendered a few at a time (batches of several switches, cut mid-pod) give the same files."""
    ctx = pipeline.build(_spec(64, 8, 16, {}, MODES[mode]))
    monkeypatch.setattr(batches, "ROWS", 40)
    for fabric in ctx.fabrics.values():
        assert 1 < len(list(batches.batches(plan(fabric).ends, port_names(ctx, fabric, plan(fabric))))) < len(fabric.switches)
    for fmt, fast, ref in _fast_and_reference(ctx):
        assert fast == ref, fmt


@pytest.mark.parametrize("value", ["leaf-g0-r1:p3", "10.0.0.1/32", "10.0.0.1", "on", "Off", "yes", "null", "y", "1000", "2x", "400G", "1:30", "a b", "a: b", "#x", "-x", "x #y", "'q'", 'say "hi"', "é", "tab\there", "", "~", "0x1F", "1e3", ".inf", "a::b", "leaf:", "x:p1", "a-b_c.d/e", "10.0.0.1/32x", "\x7f", "back\\slash"])
def test_scalar_texts_equal_json_and_yaml(value):
    assert scalars.yaml_strings([value, value])[1] == yaml.dump(value, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)).removesuffix("\n...\n").removesuffix("\n")
    assert scalars.json_inner([value, "x"])[0] == json.dumps(value)[1:-1]
    assert scalars.yaml_scalar(value) == scalars.yaml_strings([value])[0]


def test_sonic_keeps_frr_and_sets_roce(built):
    """split-unified (the integrated frr.conf survives start-up); every port's RoCE QoS, PFC watchdog and cable length (the BOM's sold length)."""
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        ad = plan(fabric)
        pn = port_names(ctx, fabric, ad)
        length = {}
        for s, sw in enumerate(fabric.switches):
            sl = ad.ends.of(s)
            rows = list(range(sl.start, sl.stop))
            for name, m in zip(pn.sonic(rows).tolist(), pn.cable_m[rows].tolist()):
                length[(sw.name, name)] = f"{m}m"
        media = ctx.boms[arch].link_media
        for name, db in _sonic(out, arch).items():
            assert db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split-unified"
            ports = set(db["PORT"])
            assert all(p["mtu"] == sonic.MTU == "4200" for p in db["PORT"].values())
            assert set(db["CABLE_LENGTH"]["AZURE"]) == ports
            for port, text in db["CABLE_LENGTH"]["AZURE"].items():
                assert text == length[(name, port)]
                assert 0 < int(text[:-1]) <= max(media.length_m) + 1
            assert set(db["PORT_QOS_MAP"]) == ports and all(q["pfc_enable"] == "3" and q["dscp_to_tc_map"] == "AZURE" for q in db["PORT_QOS_MAP"].values())
            assert set(db["QUEUE"]) == {f"{p}|3" for p in ports} and all(q["wred_profile"] == "AZURE_LOSSLESS" for q in db["QUEUE"].values())
            assert set(db["PFC_WD"]) == ports | {"GLOBAL"} and all(w["detection_time"] == "750" for p, w in db["PFC_WD"].items() if p != "GLOBAL")
            assert db["DSCP_TO_TC_MAP"]["AZURE"]["26"] == "3" and db["DSCP_TO_TC_MAP"]["AZURE"]["48"] == "6" and len(db["DSCP_TO_TC_MAP"]["AZURE"]) == 64
            wred = db["WRED_PROFILE"]["AZURE_LOSSLESS"]
            assert wred["ecn"] == "ecn_all" and wred["green_drop_probability"] == "100"
            assert int(wred["green_min_threshold"]) == round(0.05 * sonic.QUEUE_BYTES) and int(wred["green_max_threshold"]) == round(0.80 * sonic.QUEUE_BYTES)


def test_nvue_filters_redistribution_and_enables_roce(built):
    """NVUE redistributes connected routes through FRR's LOCAL filter (loopbacks and GPU subnets only) and turns RoCE on."""
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        spec = fabric.spec
        for name, doc in _nvue(out, arch).items():
            pol = doc["router"]["policy"]
            rules = pol["prefix-list"]["LOCAL"]["rule"]
            assert {p for r in rules.values() for p in r["match"]} == {str(plan(fabric).spec.loopbacks), str(plan(fabric).spec.gpus)}
            assert pol["route-map"]["LOCAL"]["rule"]["10"]["match"]["ip-prefix-list"] == "LOCAL"
            for vrf in doc["vrf"].values():
                assert vrf["router"]["bgp"]["address-family"]["ipv4-unicast"]["redistribute"]["connected"] == {"enable": "on", "route-map": "LOCAL"}
            assert doc["qos"]["roce"] == {"enable": "on", "mode": "lossless"}


SYSTEM_SHAPES = [
    # gpus, extra: a DGX H100 node (its definition names every port's OS name and HCA), a DGX B200 (cages only)
    (64, {"workload": {"model": "gpt-3-175b", "gpu": "h100"}}),
    (128, {"workload": {"model": "gpt-3-175b", "gpu": "h100"}, "addressing": {"p2p": "unnumbered"}, "arch": "rail-only"}),
    (64, {"workload": {"model": "gpt-3-175b", "gpu": "b200"}}),
]


@pytest.mark.parametrize("gpus,extra", SYSTEM_SHAPES, ids=["h100", "h100-rail-only-unnumbered", "b200"])
def test_netplan_matches_the_systems_ports_and_names_them(gpus, extra, tmp_path):
    """With a system definition that names its ports' OS names, each GPU NIC stanza matches the port and sets topogen's name; NCCL names the system's HCAs; real netplan turns it into a .link renaming the port."""
    from topogen.spec import systems

    spec = build_spec({"name": "sys", "gpus": gpus, "hb_domain": 8, "radix": 16, **extra})
    system = systems.for_spec(spec)
    assert system is not None and system.gpu == extra["workload"]["gpu"]
    ctx = pipeline.build(spec)
    pipeline.write_outputs(ctx, tmp_path / "out", ["netplan"])
    for arch, fabric in ctx.fabrics.items():
        assert list(hosts.generate_texts(fabric, None, system)) == list(hosts.reference_texts(fabric, None, system))
        files = sorted((tmp_path / "out" / arch / "netplan").rglob("*.yaml"))
        assert len(files) == hosts.nodes(fabric).nodes
        for f in files[:1] + files[-1:]:
            eth = yaml.safe_load(f.read_text())["network"]["ethernets"]
            nccl = f.with_suffix(".nccl.sh").read_text()
            gpu_ports = {k: v for k, v in eth.items() if k.startswith("gpu")}
            assert len(gpu_ports) == len(system.compute)
            if system.renames:
                assert [v["match"]["name"] for v in gpu_ports.values()] == [p.os_name for p in system.compute]
                assert all(v["set-name"] == k for k, v in gpu_ports.items())
                assert all(f"=={p.hca}" in nccl or f",{p.hca}" in nccl for p in system.compute)
            else:
                assert all("match" not in v and "set-name" not in v for v in gpu_ports.values())
            if NETPLAN is None:
                continue
            root = tmp_path / "root" / arch / f.stem
            (root / "etc" / "netplan").mkdir(parents=True)
            shutil.copy(f, root / "etc" / "netplan" / f.name)
            (root / "etc" / "netplan" / f.name).chmod(0o600)
            res = subprocess.run([NETPLAN, "generate", "--root-dir", str(root)], capture_output=True, text=True, timeout=60)
            assert res.returncode == 0, res.stderr
            links = {p.read_text() for p in (root / "run" / "systemd" / "network").glob("*.link")}
            if system.renames:
                for p in system.compute:
                    assert any(f"OriginalName={p.os_name}\n" in t for t in links)
                got = subprocess.run([NETPLAN, "get", "--root-dir", str(root), "ethernets"], capture_output=True, text=True, timeout=60)
                assert got.returncode == 0 and "set-name" in got.stdout, got.stderr
