"""NetBox IPAM files import after the DCIM files: lookups of devices, interfaces, VRFs and the RIR.

File-level (tests/test_netbox_live.py imports them into a real NetBox): every
device and interface an address names exists in the DCIM files (or the
virtual interfaces file), every VRF and RIR named is imported first, an
address is unique within its VRF, and lies in a prefix of the file. Both
architectures of a build import into one NetBox: what NetBox holds once
(RIR name and slug, ASN, VRF name, device and interface, an address within
its VRF) is never imported twice.
"""

from __future__ import annotations

import csv
import ipaddress

import pytest

from topogen import pipeline
from topogen.exports.netbox import ipam_rows as ipam
from topogen.spec.cluster import build_spec

STATUSES = {"prefixes.csv": {"container", "active", "reserved", "deprecated"}, "ip-addresses.csv": {"active", "reserved", "deprecated", "dhcp", "slaac"}}
CASES = [
    ({"gpus": 64, "hb_domain": 8, "radix": 16}, None),
    ({"gpus": 64, "hb_domain": 8, "radix": 16}, {"gpu_subnet": "rail"}),
    ({"gpus": 128, "hb_domain": 8, "radix": 8, "planes": 2}, {"p2p": "unnumbered"}),
]


def _parts(d, name):
    """``<stem>.csv``, or its parts ``<stem>-001.csv``... (files over NetBox's pasted-text limit are split)."""
    stem = name.removesuffix(".csv")
    return [d / name] if (d / name).exists() else sorted(d.glob(f"{stem}-[0-9][0-9][0-9].csv"))


def _read(p):
    with open(p, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("data,addressing", CASES, ids=["demo", "rail-subnet", "3tier-2planes-unnumbered"])
def test_ipam_imports_after_dcim(tmp_path, data, addressing):
    spec = build_spec({"name": "ipam", **data, **({"addressing": addressing} if addressing else {})})
    ctx = pipeline.build(spec)
    pipeline.write_outputs(ctx, tmp_path, ["netbox", "ipam"])
    assert len(ctx.fabrics) == 2
    shared = {name: _read(tmp_path / "netbox" / "ipam" / name) for name in ipam.BUILD_FILES}
    # the one NetBox both architectures import into: names it holds once
    held = {"rir": set(), "rir-slug": set(), "asn": set(), "vrf": set(), "device": set(), "address": set()}

    def once(kind, key):
        assert key not in held[kind], (kind, key)
        held[kind].add(key)

    for r in shared["rirs.csv"]:
        once("rir", r["name"])
        once("rir-slug", r["slug"])
    for r in shared["asns.csv"]:
        once("asn", int(r["asn"]))
        assert r["rir"] in held["rir"]
    assert held["asn"] == {int(a) for f in ctx.fabrics.values() for a in ipam.plan(f).asn.tolist()}  # every ASN of both plans, once
    for arch, fabric in ctx.fabrics.items():
        d = tmp_path / arch / "netbox"
        devices = {r["name"] for r in _read(d / "devices.csv")}
        for x in devices:
            once("device", x)
        interfaces = {(r["device"], r["name"]) for p in sorted(d.glob("interfaces*.csv")) for r in _read(p)}
        assert not list(d.glob("ipam/rirs.csv")) and not list(d.glob("ipam/asns.csv"))
        files = {**shared, **{name: [r for p in _parts(d / "ipam", name) for r in _read(p)] for name in ipam.ARCH_FILES}}
        for name, rows in files.items():
            for r in rows:
                if name in STATUSES:
                    assert r["status"] in STATUSES[name]
        site = f"ipam-{arch}"
        mine = [r for r in shared["asns.csv"] if f"{site}: " in r["description"]]
        assert sorted(int(r["asn"]) for r in mine) == sorted(set(int(x) for x in ipam.plan(fabric).asn.tolist()))
        vrfs = {r["name"] for r in files["vrfs.csv"]}
        for x in vrfs:
            once("vrf", x)
        for r in files["interfaces-virtual.csv"]:
            assert r["device"] in devices and (r["device"], r["name"]) not in interfaces
            interfaces.add((r["device"], r["name"]))
        nets = [(r["vrf"], ipaddress.ip_network(r["prefix"])) for r in files["prefixes.csv"]]
        assert all(v in vrfs for v, _ in nets)
        seen = set()
        for r in files["ip-addresses.csv"]:
            assert r["device"] in devices and (r["device"], r["interface"]) in interfaces, r
            assert r["vrf"] in vrfs
            ip = ipaddress.ip_interface(r["address"])
            assert (r["vrf"], ip.ip) not in seen
            seen.add((r["vrf"], ip.ip))
            once("address", (r["vrf"], ip.ip))
            assert any(ip.ip in net for _, net in nets)
        gpu_ports = int((fabric.links.a_dev < fabric.gpus).sum())
        assert sum(1 for r in files["ip-addresses.csv"] if "-nic" in r["interface"]) == gpu_ports
