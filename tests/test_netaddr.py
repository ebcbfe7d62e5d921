"""The in-band and OOB address plan (topogen.config.netaddr) and the files that render it.

Closed forms from the spec (devices addressed = devices cabled) over a grid of presets,
sizes and node-port designs; the plan's own audit over the grid, and that the audit
catches a broken plan; networks-addresses.csv, the NetBox IPAM rows and the netplan bonds
read back; the real ``netplan generate``/``netplan get`` on the bonded files. The real
slurmctld reading ``nodes.conf`` is in tests/test_slurm_ctld.py, the bad pools' exact
messages in tests/errors/networks-pool-*.
"""

from __future__ import annotations

import csv
import ipaddress
import shutil
import subprocess
from collections import Counter
from dataclasses import replace
from math import ceil
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.config import hosts, netaddr
from topogen.config.addressing import ip_text
from topogen.fabric import networks as nw
from topogen.spec.addressing import DEFAULT
from topogen.spec.cluster import build_spec, load_spec
from topogen.util import resources
from topogen.util.errors import InputError

NETPLAN = shutil.which("netplan", path="/usr/sbin:/usr/bin:/sbin")


def preset(name: str, **over) -> dict:
    data = yaml.safe_load(Path(resources.template_path("clusters", name)).read_text())
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(data.get(k), dict):
            data[k] = {**data[k], **v}
        else:
            data[k] = v
    return data


CASES = {
    "superpod": lambda: preset("dgx-h100-superpod"),
    "superpod-4096": lambda: preset("dgx-h100-superpod", gpus=4096),
    "superpod-16384": lambda: preset("dgx-h100-superpod", gpus=16384),
    "era": lambda: preset("era-2-8-9-400"),
    "unbonded": lambda: preset("dgx-h100-superpod", networks={"node_ports": {"inband": {"count": 2, "speed": 100, "bonded": False}}}),
    "converged-storage-ports": lambda: preset("era-2-8-9-400", networks={"node_ports": {"inband": {"count": 2, "speed": 200, "bonded": True}, "storage": {"count": 2, "speed": 200}}, "inband": {"spines": 2, "nfs_ports": 3, "collapsed_core": False}}),
    "no-servers": lambda: preset("dgx-h100-superpod", gpus=512, networks={"management_servers": 0, "compute_fabric_managers": 0, "storage": {"management_ports": 0, "fabric_managers": 0}}),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def built(request):
    spec = build_spec(CASES[request.param]())
    return request.param, pipeline.build(spec)


def inband_hosts_closed_form(p: nw.NetworkPlan) -> int:
    """In-band addresses of devices, from the spec alone: a bond per node, server and converged node storage; a bond per port pair of NFS and targets; unbonded, one per port."""
    n = p.net
    conv = n.storage.design == "converged"
    if n.inband_ports.bonded:
        return p.nodes * (n.inband_ports.count > 0) + n.management_servers * (n.inband.management_ports > 0) + ceil(n.inband.nfs_ports / 2) + (p.nodes * (n.storage_ports.count > 0) + ceil(p.target_ports / 2) if conv else 0)
    return p.nodes * n.inband_ports.count + n.management_servers * n.inband.management_ports + n.inband.nfs_ports + (p.nodes * n.storage_ports.count + p.target_ports if conv else 0)


def test_counts_are_the_closed_form(built):
    """Devices addressed = devices cabled, over the grid: in-band bonds, the pairs' gateways and SVIs, one OOB address per managed port, an SVI per OOB switch."""
    _, ctx = built
    for arch, a in ctx.network_addresses.items():
        n = ctx.networks[arch]
        cf = nw.closed_form(n.plan)
        ib, oob = a.of(nw.INBAND), a.of(nw.OOB)
        hosts_ib = int((a.role[ib] == netaddr.HOST).sum())
        assert hosts_ib == inband_hosts_closed_form(n.plan)
        leaves = cf["inband"]["switches"].get("leaf", 0) + cf["inband"]["switches"].get("compute-leaf", 0)  # a collapsed core's pair: the compute leaves
        per = 4 if n.plan.net.inband_ports.bonded else 1  # a pair: the gateway on both leaves and two SVIs; a lone leaf: its SVI
        assert len(ib) - hosts_ib == (leaves // 2 if per == 4 else leaves) * per
        assert int((a.role[oob] == netaddr.HOST).sum()) == cf["oob"]["cables"]["management-port"]
        assert int((a.role[oob] == netaddr.SVI).sum()) == cf["oob"]["switches"]["access"] == len(a.subnets[nw.OOB])
        # every device its addresses: each node one in-band bond0 (bonded) and one BMC address per BMC port; every
        # switch of every network one OOB address (the OOB switches their SVI); servers, fabric managers and PDUs one
        nodes = n.plan.nodes
        o_host = a.role == netaddr.HOST
        bmc = Counter(a.idx[(a.net == nw.OOB) & (a.kind == nw.NODE) & o_host].tolist())
        assert len(bmc) == nodes and set(bmc.values()) == {n.plan.net.bmc_ports.count}
        if n.plan.net.inband_ports.bonded:
            bond = Counter(a.idx[(a.net == nw.INBAND) & (a.kind == nw.NODE) & (a.iface == "bond0")].tolist())
            assert len(bond) == nodes and set(bond.values()) == {1}
        fabric_sw = Counter(a.idx[(a.net == nw.OOB) & (a.kind == nw.FABRIC)].tolist())
        assert sorted(fabric_sw) == list(range(len(ctx.fabrics[arch].switches))) and set(fabric_sw.values()) == {1}
        net_sw = Counter(a.idx[(a.net == nw.OOB) & (a.kind == nw.SWITCH)].tolist())
        assert sorted(net_sw) == [i for i, s in enumerate(n.switches) if s.compute < 0] and set(net_sw.values()) == {1}  # a collapsed core's leaves: their compute boxes'
        for kind in (nw.MGMT, nw.UFM, nw.PDU):
            got = Counter(a.idx[(a.net == nw.OOB) & (a.kind == kind)].tolist())
            assert sorted(got) == list(range(n.endpoints[nw.KIND_NAMES[kind]])) and set(got.values()) <= {n.oob_ports(kind) if kind == nw.MGMT else 1}
        summary = ctx.summary["networks"]["architectures"][arch]["addresses"]
        assert summary["inband"]["devices"] == hosts_ib and summary["oob"]["devices"] == cf["oob"]["cables"]["management-port"]
        assert summary["inband"]["subnets"] * 2 ** (32 - summary["inband"]["prefix_len"]) == netaddr.needs(n)["inband"][0]


def test_plan_is_sound(built):
    """The audit finds nothing: unique addresses, inside their subnets, subnets apart from each other and the compute pools; gateways first."""
    _, ctx = built
    spec = ctx.spec.addressing or DEFAULT
    for arch, a in ctx.network_addresses.items():
        assert netaddr.audit(a, spec) == []
        gpus = ipaddress.ip_network(spec.gpus)
        for net, s in a.subnets.items():
            nets = [ipaddress.ip_network(f"{b}/{s.plen}") for b in ip_text(s.base).tolist()]
            assert all(not x.overlaps(gpus) for x in nets)
            assert (s.gateway == s.base + 1).all() and (s.free() >= 0).all()
        u, cnt = np.unique(a.addr[a.role != netaddr.GATEWAY], return_counts=True)
        assert cnt.max() == 1


def test_audit_catches_a_broken_plan(built):
    """The audit can fail: a duplicate, an address outside its subnet, overlapping subnets, a subnet in a compute pool."""
    _, ctx = built
    spec = ctx.spec.addressing or DEFAULT
    a = next(iter(ctx.network_addresses.values()))
    hosts_ = np.flatnonzero(a.role == netaddr.HOST)
    dup = a.addr.copy()
    dup[hosts_[1]] = dup[hosts_[0]]
    assert any("twice" in p for p in netaddr.audit(replace(a, addr=dup), spec))
    out = a.addr.copy()
    out[hosts_[0]] += np.uint32(1 << 20)
    assert any("not a host address" in p for p in netaddr.audit(replace(a, addr=out), spec))
    s = a.subnets[nw.OOB]
    if len(s) > 1:
        base = s.base.copy()
        base[1] = base[0]
        assert any("overlap" in p for p in netaddr.audit(replace(a, subnets={**a.subnets, nw.OOB: replace(s, base=base)}), spec))
    inside = replace(spec, oob=spec.gpus, gpus=spec.oob)
    assert any("compute pool" in p for p in netaddr.audit(a, inside))


def test_plan_is_deterministic_and_fast_enough_to_redo(built):
    _, ctx = built
    for arch, a in ctx.network_addresses.items():
        b = netaddr.plan(ctx.networks[arch], ctx.spec.addressing, arch)
        assert (a.addr == b.addr).all() and a.iface.tolist() == b.iface.tolist() and a.members.tolist() == b.members.tolist()


def test_a_small_pool_raises_naming_the_field():
    spec = build_spec(preset("dgx-h100-superpod", addressing={"inband": "10.16.0.0/25", "oob": "10.32.0.0/23"}))
    with pytest.raises(InputError) as e:
        pipeline.build(spec)
    (p,) = e.value.problems
    assert p.path == "addressing.inband" and "needs 192" in p.message and p.hint == "give a /24 or larger"


def test_spec_hash_without_the_new_keys_is_unchanged():
    """A spec with an addressing: section and no in-band/OOB keys hashes as before the keys existed; a given key counts."""
    plain = build_spec({"name": "h", "gpus": 64, "hb_domain": 8, "radix": 16, "addressing": {"p2p": "unnumbered"}})
    assert set(plain.to_dict()["addressing"]) == {"loopbacks", "fabric", "gpus", "p2p", "gpu_subnet", "asn_scheme", "asn_pool", "vlan_base", "vrf_table_base"}
    given = build_spec({"name": "h", "gpus": 64, "hb_domain": 8, "radix": 16, "addressing": {"p2p": "unnumbered", "oob": "172.16.0.0/16"}})
    assert given.to_dict()["addressing"]["oob"] == "172.16.0.0/16" and given.digest() != plain.digest()


def test_network_pools_are_free_without_networks():
    """Without networks: the compute pools may use the space the in-band and OOB defaults take (nothing checked against them)."""
    spec = build_spec({"name": "x", "gpus": 64, "hb_domain": 8, "radix": 16, "addressing": {"fabric": "10.0.0.0/9", "loopbacks": "192.168.0.0/24"}})
    assert spec.networks is None


# --- the files -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def superpod(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("netaddr") / "sp"
    res = CliRunner().invoke(main, ["build", "dgx-h100-superpod", "--out", str(out), "--formats", "cabling,netbox,netplan,slurm", "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


def read(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_addresses_csv(superpod):
    ctx = pipeline.build(load_spec("dgx-h100-superpod"))
    for arch, a in ctx.network_addresses.items():
        rows = read(superpod / arch / "networks-addresses.csv")
        assert len(rows) == len(a)
        assert {(r["device"], r["interface"], r["address"]) for r in rows if r["role"] != "gateway"}.__len__() == sum(r["role"] != "gateway" for r in rows)
        for r in rows:
            ip = ipaddress.ip_interface(r["address"])
            assert ip.network == ipaddress.ip_network(r["subnet"])
            if r["role"] == "host":
                assert ipaddress.ip_address(r["gateway"]) in ip.network and r["gateway"] != str(ip.ip)
        inb = [r for r in rows if r["network"] == "inband"]
        assert {r["vlan"] for r in inb} == {"100"}
        assert next(r for r in rows if r["device"] == "hb000" and r["network"] == "inband") == {"device": "hb000", "device_role": "node", "interface": "bond0", "network": "inband", "address": "10.16.0.4/26", "gateway": "10.16.0.1", "vlan": "100", "subnet": "10.16.0.0/26", "role": "host"}
        assert Counter(r["device_role"] for r in rows if r["network"] == "oob" and r["role"] == "host")["node"] == 127


def test_netbox_ipam_rows_land_on_interfaces(superpod):
    """Every address on an interface the networks' files create (bonds before their members), in a VRF of the file, inside an
    active prefix of that VRF, unique in it (but a pair's anycast gateway); one primary in-band address per node and server."""
    for arch in ("rail-optimized", "rail-only"):
        d = superpod / arch / "netbox"
        ifs = [r for p in sorted(d.glob("networks-interfaces*.csv")) for r in read(p)]
        seen: dict[tuple[str, str], str] = {}
        for r in ifs:
            if r["lag"]:
                assert seen.get((r["device"], r["lag"])) == "lag", r  # the bond exists before its member
            seen[(r["device"], r["name"])] = r["type"]
        vrfs = {r["name"] for r in read(d / "networks-vrfs.csv")}
        prefixes = [(r["vrf"], ipaddress.ip_network(r["prefix"]), r["status"]) for r in read(d / "networks-prefixes.csv")]
        assert {v for v, _, _ in prefixes} <= vrfs
        taken: set[tuple[str, object]] = set()
        primary = Counter()
        for r in read(d / "networks-ip-addresses.csv"):
            assert (r["device"], r["interface"]) in seen, r
            ip = ipaddress.ip_interface(r["address"])
            assert any(v == r["vrf"] and st == "active" and ip.network == net for v, net, st in prefixes), r
            if r["role"] != "anycast":
                assert (r["vrf"], ip.ip) not in taken
                taken.add((r["vrf"], ip.ip))
            primary[r["device"]] += r["is_primary"] == "true"
            if r["is_oob"] == "true":
                assert r["vrf"].endswith(".oob")
        nodes = [x for x in primary if x.rsplit(".", 1)[1].startswith(("hb", "mgmt-"))]
        assert len(nodes) == 127 + 4 and all(primary[x] == 1 for x in nodes)


def test_netplan_bonds(superpod):
    ctx = pipeline.build(load_spec("dgx-h100-superpod"))
    for arch, f in ctx.fabrics.items():
        ib = netaddr.node_interfaces(ctx.network_addresses[arch], ctx.networks[arch])
        assert list(hosts.generate_texts(f, ib)) == list(hosts.reference_texts(f, ib))  # the fast writer is yaml.dump's text
        files = sorted((superpod / arch / "netplan").rglob("*.yaml"))
        rows = {r["device"]: r for r in read(superpod / arch / "networks-addresses.csv") if r["interface"] == "bond0"}
        for p in files:
            doc = yaml.safe_load(p.read_text())["network"]
            bond = doc["bonds"]["bond0"]
            assert bond["interfaces"] == ["inb0", "inb1"] and doc["ethernets"]["inb0"] == {} and bond["parameters"]["mode"] == "802.3ad"
            row = rows[p.stem]
            assert bond["addresses"] == [row["address"]] and bond["routes"] == [{"to": "default", "via": row["gateway"]}]
            assert "NCCL_SOCKET_IFNAME=bond0" in p.with_name(p.stem + ".nccl.sh").read_text()
            assert all("via" not in rt or rt.get("table") for e in doc["ethernets"].values() for rt in e.get("routes", []))  # the rails keep their own tables


@pytest.mark.skipif(NETPLAN is None, reason="netplan not installed (apt-get install netplan.io)")
@pytest.mark.parametrize("case", ["superpod", "unbonded", "converged-storage-ports"])
def test_netplan_generate_makes_the_bond(case, tmp_path):
    """netplan's own generator: a bond netdev in 802.3ad over the in-band ports, its address and default route; ``netplan get`` reads them back."""
    ctx = pipeline.build(build_spec(CASES[case]()))
    arch = next(iter(ctx.fabrics))
    ib = netaddr.node_interfaces(ctx.network_addresses[arch], ctx.networks[arch])
    texts = list(hosts.generate_texts(ctx.fabrics[arch], ib))
    for i in (0, len(texts) - 1):
        name, text, _ = texts[i]
        root = tmp_path / name
        (root / "etc" / "netplan").mkdir(parents=True)
        p = root / "etc" / "netplan" / f"{name}.yaml"
        p.write_text(text)
        p.chmod(0o600)
        res = subprocess.run([NETPLAN, "generate", "--root-dir", str(root)], capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        net = root / "run" / "systemd" / "network"
        first, cidr, gw, members = ib[i][0]
        if members:
            netdev = (net / f"10-netplan-{first}.netdev").read_text()
            assert "Kind=bond" in netdev and "Mode=802.3ad" in netdev and "TransmitHashPolicy=layer3+4" in netdev
            for m in members:
                assert f"Bond={first}" in (net / f"10-netplan-{m}.network").read_text()
        conf = (net / f"10-netplan-{first}.network").read_text()
        assert f"Address={cidr}" in conf and f"Gateway={gw}" in conf and "Destination=0.0.0.0/0" in conf
        got = subprocess.run([NETPLAN, "get", "--root-dir", str(root), f"network.{'bonds' if members else 'ethernets'}.{first}.addresses"], capture_output=True, text=True, timeout=60)
        assert got.returncode == 0 and cidr in got.stdout, got.stdout + got.stderr


def test_nodes_conf_lines_are_slurm_hostlists(superpod):
    text = (superpod / "rail-optimized" / "slurm" / "nodes.conf").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert lines == ["SlurmctldHost=mgmt-00(10.16.0.143)", "NodeName=hb[000-126] NodeAddr=10.16.0.[4-61,68-125,132-142]"]


def test_without_networks_no_new_files(tmp_path):
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "demo", "--out", str(out), "--formats", "cabling,netbox,slurm,netplan,xlsx", "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    names = {p.name for p in out.rglob("*")}
    assert not names & {"networks-addresses.csv", "nodes.conf", "networks-ip-addresses.csv", "networks-prefixes.csv"}
    assert "bonds" not in next(out.rglob("*.yaml")).read_text()
