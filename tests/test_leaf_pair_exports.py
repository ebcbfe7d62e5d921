"""design: leaf-pair in the exports that carry the ISLs: addressing, FRR/SONiC/NVUE/Air, NetBox (DCIM and IPAM), topology.json/GraphML.

Over a grid of GPU counts, GPUs per node 2/4/8, planes 1/2, GPU:ISL 1:1/2:1 and
both architectures (rail-only: no ISL): every ISL is one /31 (leaf-b even, leaf-a
odd) from the fabric pool, each leaf its own ASN and one eBGP neighbour per ISL
with ECMP as wide as the ISLs; the fast renderers equal their reference
renderings; NetBox's files hold every cable once (tests/test_netbox_live.py imports
a leaf pair into a real NetBox); the graph files round-trip to the same networkx graph,
ISL edges and only they carrying ``link: leaf-leaf``.
"""

from __future__ import annotations

import csv
import ipaddress
import itertools
import json
import re

import networkx as nx
import numpy as np
import pytest

from topogen import pipeline
from topogen.config import air, frr, nvue, sonic
from topogen.config.addressing import plan
from topogen.exports import EXPORTERS
from topogen.exports.graphs import graphml, topology
from topogen.exports.netbox import ipam_rows as ipam
from topogen.fabric import clos
from topogen.fabric.graph import to_networkx
from topogen.fabric.naming import ISL_LINK
from topogen.fabric.view import view
from topogen.spec.cluster import build_spec

GRID = [
    dict(gpus=g, hb_domain=8, gpus_per_node=gpn, radix=128 if g > 32 else 32, planes=p, oversubscription=o)
    for g, gpn, p, o in itertools.product([16, 64, 128], [2, 4, 8], [1, 2], ["1:1", "2:1"])
]
IDS = [f"{k['gpus']}g-gpn{k['gpus_per_node']}-pl{k['planes']}-{k['oversubscription']}" for k in GRID]
ARCHS = ["rail-optimized", "rail-only"]


def spec_of(kw: dict, arch: str, **extra):
    return build_spec({"name": "lp", "design": "leaf-pair", "arch": arch, **kw, **extra})


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kw", GRID, ids=IDS)
def test_graph_files_round_trip_with_isl_edges(kw, arch, tmp_path):
    f = clos.generate(spec_of(kw, arch), arch)
    g = to_networkx(f)
    assert g.number_of_edges() == f.cables == len(f.links) + len(f.isls)
    loaded = nx.node_link_graph(json.loads("".join(topology.generate_chunks(f))), edges="edges")
    (tmp_path / "t.graphml").write_text("".join(graphml.generate_graphml(f)))
    from_xml = nx.read_graphml(tmp_path / "t.graphml", force_multigraph=True)
    edges = sorted(g.edges(keys=True, data=True), key=lambda e: e[2])
    assert edges == sorted(loaded.edges(keys=True, data=True), key=lambda e: e[2])
    assert [(a, b, int(k), d) for a, b, k, d in sorted(from_xml.edges(keys=True, data=True), key=lambda e: int(e[2]))] == edges
    isl = [e for e in edges if "link" in e[3]]
    assert len(isl) == len(f.isls) == (0 if arch == "rail-only" else len(f.isls))
    assert [k for _a, _b, k, _d in isl] == list(range(len(f.links) + 1, f.cables + 1))  # cable ids continue after the links
    for a, b, _k, d in isl:
        assert d["link"] == ISL_LINK and d["tier"] == 1 and d["a_port"] == d["z_port"]
        assert a.endswith("leaf-a") and b == a[: -1] + "b" and g.nodes[a]["plane"] == g.nodes[b]["plane"] == d["plane"]
    if arch == "rail-only":
        assert b"e_link" not in (tmp_path / "t.graphml").read_bytes()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kw", GRID, ids=IDS)
def test_isl_addresses_asns_and_bgp(kw, arch):
    f = clos.generate(spec_of(kw, arch), arch)
    ad = plan(f)
    n, m = f.gpus, len(f.links)
    assert len(ad.a_addr) == f.cables
    rows = np.arange(m, f.cables)
    fabric_pool = ipaddress.ip_network(ad.spec.fabric)
    assert (ad.prefix_len[rows] == 31).all() and (ad.a_addr[rows] == ad.z_addr[rows] + 1).all() and (ad.z_addr[rows] % 2 == 0).all()
    assert all(ipaddress.ip_address(int(x)) in fabric_pool for x in ad.z_addr[rows].tolist())
    every = np.concatenate([ad.a_addr, ad.z_addr, ad.loopback])
    assert len(np.unique(every)) == len(every)  # no address twice in the plan
    asn = {s.name: int(ad.asn[i]) for i, s in enumerate(f.switches)}
    assert len(set(asn.values())) == len(asn)  # RFC 7938: every leaf its own ASN, the two of a pair too
    isls_of = np.bincount(f.isls.a_dev - n, minlength=len(f.switches)) + np.bincount(f.isls.z_dev - n, minlength=len(f.switches))
    for s, text in frr.generate_texts(f):
        name = f.switches[s].name
        peers = re.findall(r"^ neighbor (\S+) remote-as (\d+)$", text, re.M)
        assert len(peers) == isls_of[s]
        if isls_of[s]:
            other = name[:-1] + ("b" if name.endswith("a") else "a")
            assert {int(x) for _ip, x in peers} == {asn[other]}
            assert f"  maximum-paths {isls_of[s]}\n" in text  # ECMP across every ISL
            assert len({ip for ip, _x in peers}) == isls_of[s]


@pytest.mark.parametrize("kw", GRID[::3], ids=IDS[::3])
def test_addressing_csv_lists_both_ends_of_every_isl(kw, tmp_path):
    ctx = pipeline.build(spec_of(kw, "rail-optimized"))
    f = ctx.fabrics["rail-optimized"]
    EXPORTERS["addressing"](ctx, tmp_path)
    with open(tmp_path / "rail-optimized" / "addressing.csv", newline="") as fh:
        rows = {(r["device"], r["interface"]): r for r in csv.DictReader(fh)}
    v = view(f)
    for j in range(len(f.isls)):
        a, z = v.device[f.isls.a_dev[j]], v.device[f.isls.z_dev[j]]
        pa, pz = f"p{f.isls.a_port[j]}", f"p{f.isls.z_port[j]}"
        ra, rz = rows[(a, pa)], rows[(z, pz)]
        assert ra["cable"] == rz["cable"] == str(len(f.links) + j + 1)  # the cabling.csv id
        assert (ra["peer_device"], ra["peer_interface"], rz["peer_device"], rz["peer_interface"]) == (z, pz, a, pa)
        assert ra["peer_address"] == rz["address"] and rz["peer_address"] == ra["address"]
        assert ra["peer_asn"] == rz["asn"] != rz["peer_asn"] == ra["asn"]
        net = ipaddress.ip_interface(ra["address"]).network
        assert net.prefixlen == 31 and net == ipaddress.ip_interface(rz["address"]).network


def test_unnumbered_isls_peer_over_link_local():
    kw = dict(gpus=32, hb_domain=8, gpus_per_node=4, radix=32)
    f = clos.generate(spec_of(kw, "rail-optimized", addressing={"p2p": "unnumbered"}), "rail-optimized")
    ad = plan(f)
    assert (ad.prefix_len[len(f.links) :] == 0).all() and len(f.isls) == 16
    _, text = next(frr.generate_texts(f))
    assert len(re.findall(r"^ neighbor p\d+ interface remote-as \d+$", text, re.M)) == 16


@pytest.mark.parametrize("kw", GRID[::5], ids=IDS[::5])
def test_switch_configurations_carry_the_isls(kw):
    spec = spec_of(kw, "rail-optimized")
    ctx = pipeline.build(spec)
    f = ctx.fabrics["rail-optimized"]
    n = f.gpus
    isls_of = np.bincount(f.isls.a_dev - n, minlength=len(f.switches)) + np.bincount(f.isls.z_dev - n, minlength=len(f.switches))
    assert dict(sonic.generate_texts(ctx, f)) == dict(sonic.reference_texts(ctx, f))
    nvue_texts = dict(nvue.generate_texts(ctx, f))
    assert nvue_texts == dict(nvue.reference_texts(ctx, f))
    for s, text in nvue_texts.items():
        assert re.findall(r"^ +multipaths:\n +ebgp: (\d+)$", text, re.M) == [str(isls_of[s] or 1)]  # ECMP across every ISL
    for s, doc in sonic.generate(ctx, f):
        assert len(doc.get("BGP_NEIGHBOR", {})) == isls_of[s]
    for s, docs in nvue.generate(ctx, f):
        nbrs = docs[0]["set"]["router"]["bgp"]
        vrf = docs[0]["set"]["vrf"]["default"]["router"]["bgp"]
        assert len(vrf["neighbor"]) == isls_of[s] and nbrs["autonomous-system"] == int(plan(f).asn[s])
    text = "".join(air.chunks(ctx, f))
    assert text == air.reference_text(ctx, f)
    links = json.loads(text)["content"]["links"]
    assert len(links) == f.cables
    lateral = [(a["node"], b["node"]) for a, b in links if a["node"].endswith("leaf-a") and b["node"].endswith("leaf-b")]
    assert len(lateral) == len(f.isls)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kw", GRID[::4], ids=IDS[::4])
def test_netbox_files_hold_every_cable_and_the_isl_addresses(kw, arch, tmp_path):
    spec = spec_of(kw, arch)
    ctx = pipeline.build(spec)
    f = ctx.fabrics[arch]
    EXPORTERS["netbox"](ctx, tmp_path)
    d = tmp_path / arch / "netbox"
    with open(d / "cables.csv", newline="") as fh:
        cables = list(csv.DictReader(fh))
    assert len({c["label"] for c in cables}) == len(cables) == f.cables  # each cable once, ISLs included
    isl = [c for c in cables if c["comments"].startswith(ISL_LINK)]
    assert len(isl) == len(f.isls) and [c["label"].split("/")[1] for c in isl] == [str(i) for i in range(len(f.links) + 1, f.cables + 1)]
    with open(d / "interfaces.csv", newline="") as fh:
        ports = [r for r in csv.DictReader(fh) if r["description"].startswith(ISL_LINK)]
    assert len(ports) == 2 * len(f.isls) and all(r["enabled"] == "true" for r in ports)
    # IPAM: each ISL /31 a prefix, both ends an address on their port
    runs = ipam.rows(f)
    prefixes = {r[0] for r in runs["prefixes.csv"]}
    addresses = {(r[3], r[4]): r[0] for r in runs["ip-addresses.csv"]}
    ad = plan(f)
    v = view(f)
    site = f"lp-{arch}."
    for j in range(len(f.isls)):
        row = len(f.links) + j
        net = ipaddress.ip_network((int(ad.z_addr[row]), 31))
        assert str(net) in prefixes
        for dev, port, addr in ((f.isls.a_dev[j], f.isls.a_port[j], ad.a_addr[row]), (f.isls.z_dev[j], f.isls.z_port[j], ad.z_addr[row])):
            assert addresses[(site + v.device[dev], f"p{port}")] == f"{ipaddress.ip_address(int(addr))}/31"


def test_emulation_expects_isl_wide_ecmp_within_each_plane(tmp_path):
    """What ``topogen emulate`` expects of a pair, read from the build's files (no FRR needed): widths, parts, pairs."""
    from topogen.config.emulation.checks import Checks
    from topogen.config.emulation.ecmp import Ecmp
    from topogen.config.emulation.lab import load_lab

    kw = dict(gpus=16, hb_domain=8, gpus_per_node=2, radix=32, planes=2, oversubscription="2:1")
    ctx = pipeline.build(spec_of(kw, "rail-optimized"))
    for fmt in ("cabling", "addressing", "frr"):
        EXPORTERS[fmt](ctx, tmp_path)
    lab = load_lab(tmp_path, "rail-optimized", 64)

    class Probe(Ecmp, Checks):
        pass

    e = Probe()
    e.lab, e._widths = lab, {}
    e.router_of_port = {(p.device, p.name): r for r in lab.routers for p in r.ports}
    isls = len(ctx.fabrics["rail-optimized"].isls) // 2  # per plane
    assert isls == 4 and sorted(e.parts().values()) == [0, 0, 1, 1]
    width = e.widths()
    assert width == {(a, b): isls for a in e.parts() for b in e.parts() if a != b and a[:3] == b[:3]} | {(a, b): 0 for a in e.parts() for b in e.parts() if a[:3] != b[:3]}
    leaf = next(r for r in lab.routers if r.name == "pl0-leaf-a")
    assert len(leaf.exits(lab.roles)) == len(leaf.isls(lab.roles)) == isls and not leaf.uplinks(lab.roles)
    down = {(leaf.name, leaf.isls(lab.roles)[0].name)}
    assert e.widths(down)[("pl0-leaf-a", "pl0-leaf-b")] == e.widths(down)[("pl0-leaf-b", "pl0-leaf-a")] == isls - 1
    assert e.full_width() == []
    reach, apart, planes = e.pairs()
    assert apart == [] and len(reach) == 2 * 16 * 15  # every NIC to every NIC of its plane
    assert len(planes) == 2 * 16 * 16  # every NIC to every NIC of the other plane: kept apart
    assert all(e.host_part(a) == e.host_part(b) for a, b in reach)
