"""The IP/ASN plan (topogen.config.addressing) and addressing.csv: invariants over a grid of shapes, pool checks, errors.

Invariants (every shape, both architectures, every addressing mode):
- every interface address is unique (a rail subnet's gateway once per leaf and rail), inside its pool;
- the two ends of a /31 are its even and odd address; a GPU is inside its gateway's subnet and its route;
- rail-only: the routes of different rails are disjoint; rail-optimized: one route covers every GPU;
- leaves have distinct ASNs; rfc7938 spines of one tier, pod, plane and rail group share one; per-switch: all distinct;
- a switch carrying several rails puts each port in its rail's VRF, a single-rail switch none.
"""

from __future__ import annotations

import csv
import ipaddress
import os
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from topogen.fabric import clos
from topogen.cli import main
from topogen.config import addressing as ad
from topogen.spec.addressing import AddressingSpec
from topogen.util.errors import InputError
from topogen.spec.cluster import build_spec

SHAPES = [
    dict(gpus=64, hb_domain=8, radix=16),
    dict(gpus=64, hb_domain=4, radix=8),
    dict(gpus=256, hb_domain=8, radix=8),
    dict(gpus=128, hb_domain=8, radix=8, planes=2),
    dict(gpus=64, hb_domain=8, radix=8, homing="dual"),
    dict(gpus=96, hb_domain=8, radix=16, leaf_packing="shared"),
    dict(gpus=512, hb_domain=8, radix=16, rail_packing="dedicated"),
    dict(gpus=128, hb_domain=8, radix=16, oversubscription="3:1"),
]
MODES = [{}, {"p2p": "unnumbered"}, {"gpu_subnet": "rail"}, {"asn_scheme": "per-switch", "asn_pool": "64512-65534"}]


def fabrics(shape, mode):
    spec = build_spec({"name": "t", **shape, "addressing": mode or None})
    return [clos.generate(spec, a) for a in spec.arches]


def _id(x):
    return ",".join(f"{k}={v}" for k, v in x.items()) or "defaults"


@pytest.mark.parametrize("mode", MODES, ids=_id)
@pytest.mark.parametrize("shape", SHAPES, ids=_id)
def test_plan_invariants(shape, mode):
    for f in fabrics(shape, mode):
        p = ad.plan(f)
        spec = p.spec
        L = f.links
        n = f.gpus
        g = L.a_dev < n
        s = ~g
        pools = {k: spec.pool(k) for k in ("loopbacks", "fabric", "gpus")}

        def inside(addrs, pool):
            lo, hi = int(pool.network_address), int(pool.broadcast_address)
            return bool(((addrs >= lo) & (addrs <= hi)).all())

        assert inside(p.loopback.astype(np.int64), pools["loopbacks"])
        assert len(np.unique(p.loopback)) == len(f.switches)
        # switch links
        if spec.p2p == "numbered":
            assert (p.prefix_len[s] == 31).all()
            assert (p.z_addr[s] % 2 == 0).all() and (p.a_addr[s] == p.z_addr[s] + 1).all()
            assert inside(p.z_addr[s].astype(np.int64), pools["fabric"]) and inside(p.a_addr[s].astype(np.int64), pools["fabric"])
        else:
            assert (p.prefix_len[s] == 0).all() and (p.a_addr[s] == 0).all() and (p.z_addr[s] == 0).all()
        # GPU links
        ga, gz, gl = p.a_addr[g].astype(np.int64), p.z_addr[g].astype(np.int64), p.prefix_len[g].astype(np.int64)
        assert inside(ga, pools["gpus"]) and inside(gz, pools["gpus"])
        mask = (np.int64(0xFFFFFFFF) << (32 - gl)) & 0xFFFFFFFF
        assert ((ga & mask) == (gz & mask)).all(), "a GPU outside its gateway's subnet"
        rmask = (np.int64(0xFFFFFFFF) << (32 - p.gpu_route_len[g].astype(np.int64))) & 0xFFFFFFFF
        assert ((ga & rmask) == p.gpu_route[g].astype(np.int64)).all(), "a GPU outside its own route"
        if spec.gpu_subnet == "link":
            assert (gl == 31).all() and (gz % 2 == 0).all() and (ga == gz + 1).all()
        # every interface address unique (gateways: one per leaf and rail subnet)
        gateways = np.unique(gz) if spec.gpu_subnet == "rail" else gz
        every = np.concatenate([p.loopback.astype(np.int64), ga, gateways] + ([p.a_addr[s].astype(np.int64), p.z_addr[s].astype(np.int64)] if spec.p2p == "numbered" else []))
        assert len(np.unique(every)) == len(every)
        if spec.gpu_subnet == "rail":  # one gateway per (leaf, rail)
            pairs = {(int(z), int(r)) for z, r in zip(L.z_dev[g], L.a_dev[g] % f.hb_domain)}
            assert len(np.unique(gz)) == len(pairs)
        # routes
        routes = {(int(a), int(b)) for a, b in zip(p.gpu_route[g], p.gpu_route_len[g])}
        if f.arch == "rail-optimized":
            assert routes == {(int(pools["gpus"].network_address), pools["gpus"].prefixlen)}
        else:
            nets = [ipaddress.IPv4Network((a, b)) for a, b in routes]
            per_rail = {}
            for a, r, pl in zip(p.gpu_route[g].tolist(), (L.a_dev[g] % f.hb_domain).tolist(), L.plane[g].tolist()):
                per_rail.setdefault((r, pl), set()).add(a)
            assert all(len(v) == 1 for v in per_rail.values())
            assert all(not x.overlaps(y) for i, x in enumerate(nets) for y in nets[i + 1 :])
        # ASNs
        first, last = spec.asn_range
        assert ((p.asn >= first) & (p.asn <= last)).all()
        tiers = np.array([sw.tier for sw in f.switches])
        leaves = p.asn[tiers == 1]
        assert len(np.unique(leaves)) == len(leaves)
        assert not set(leaves.tolist()) & set(p.asn[tiers > 1].tolist())
        if spec.asn_scheme == "per-switch":
            assert len(np.unique(p.asn)) == len(f.switches)
        else:
            groups = {}
            for sw, a in zip(f.switches, p.asn.tolist()):
                if sw.tier > 1:
                    groups.setdefault((sw.tier, sw.plane, sw.group, sw.block), set()).add(a)
            assert all(len(v) == 1 for v in groups.values())
            assert len({next(iter(v)) for v in groups.values()}) == len(groups)
        # VRFs: every end of a shared switch in its link's rail's VRF, none elsewhere
        e = p.ends
        shared_end = p.shared[e.switch]
        assert (e.vrf[shared_end] == e.rail[shared_end]).all() and (e.vrf[shared_end] >= 0).all()
        assert (e.vrf[~shared_end & ~p.shared[np.maximum(e.peer - n, 0)] | (e.peer < n) & ~shared_end] == -1).all()
        # ends: every cable end at a switch once, grouped by switch
        assert len(e.switch) == len(L) + int(s.sum())
        assert (np.diff(e.switch) >= 0).all() and e.offsets[-1] == len(e.switch)


def test_shared_rail_only_switch_has_a_vrf_per_rail():
    f = fabrics(dict(gpus=64, hb_domain=8, radix=16), {})[1]
    p = ad.plan(f)
    assert f.arch == "rail-only" and f.switches[0].rails == (0, 1)
    assert p.vrfs(0) == (0, 1) and p.vrf_name(1) == "rail1" and p.vlan_id(1) == 1001 and p.vrf_table(1) == 1001


def test_rfc7938_spines_share_and_leaves_do_not():
    f = fabrics(dict(gpus=64, hb_domain=8, radix=16), {})[0]
    p = ad.plan(f)
    assert p.asn[:8].tolist() == list(range(4200000000, 4200000008))
    assert set(p.asn[8:].tolist()) == {4200000008}


def build(tmp, *args):
    return CliRunner().invoke(main, ["build", *args, "--out", str(tmp)], catch_exceptions=False)


@pytest.mark.parametrize(
    "addressing, field, needle",
    [
        ({"gpus": "10.128.0.0/26"}, "addressing.gpus", "pool gpus 10.128.0.0/26 holds 64 addresses; the rail-optimized fabric needs 128 ("),
        ({"loopbacks": "10.0.0.0/29"}, "addressing.loopbacks", "pool loopbacks 10.0.0.0/29 holds 8 addresses; the rail-optimized fabric needs 13 (12 switch loopbacks"),
        ({"fabric": "10.64.0.0/26"}, "addressing.fabric", "pool fabric 10.64.0.0/26 holds 64 addresses; the rail-optimized fabric needs 128 (a /31 for each of 64 switch-to-switch links); give a /25 or larger"),
        ({"asn_pool": "64512-64515"}, "addressing.asn_pool", "asn_pool 64512-64515 holds 4 ASNs; the rail-optimized fabric needs 9 (rfc7938 scheme)"),
    ],
)
def test_pool_too_small_exits_2_naming_pool_and_size(tmp_path, addressing, field, needle):
    spec = tmp_path / "s.yaml"
    import yaml

    spec.write_text(yaml.safe_dump({"name": "demo", "gpus": 64, "hb_domain": 8, "radix": 16, "addressing": addressing}))
    res = build(tmp_path / "o", str(spec), "--formats", "addressing")
    assert res.exit_code == 2, res.output
    assert f"{field}: {needle}" in res.stderr
    assert "Traceback" not in res.output and not (tmp_path / "o").exists()


def test_pools_unchecked_when_no_config_format_is_written(tmp_path):
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"name": "demo", "gpus": 64, "hb_domain": 8, "radix": 16, "addressing": {"gpus": "10.128.0.0/30"}}))
    assert build(tmp_path / "o", str(spec), "--formats", "cabling").exit_code == 0


@pytest.mark.parametrize(
    "addressing, expected",
    [
        ({"gpus": "10.0.0.0/9"}, "addressing.gpus: pool gpus 10.0.0.0/9 overlaps pool loopbacks 10.0.0.0/16; give every pool its own range"),
        ({"loopbacks": "127.1.0.0/16"}, "addressing.loopbacks: pool loopbacks 127.1.0.0/16 overlaps the reserved range 127.0.0.0/8"),
        ({"fabric": "224.0.0.0/10"}, "addressing.fabric: pool fabric 224.0.0.0/10 overlaps the reserved range 224.0.0.0/4"),
        ({"asn_pool": "64000-64600"}, "addressing.asn_pool: asn_pool 64000-64600 includes the reserved ASN(s) 64496-64511"),
        ({"asn_pool": "65000-65535"}, "addressing.asn_pool: asn_pool 65000-65535 includes the reserved ASN(s) 65535-65551"),
        ({"gpus": "10.128.0.1/9"}, "addressing.gpus: gpus must be an IPv4 prefix such as 10.128.0.0/9, got '10.128.0.1/9' (10.128.0.1/9 has host bits set)"),
        ({"p2p": "ospf"}, "addressing.p2p: unknown p2p 'ospf'; valid values: numbered, unnumbered"),
        ({"asn_pool": "9-3"}, "addressing.asn_pool: asn_pool must be 'first-last' with 1 <= first <= last <= 4294967295, got '9-3'"),
        ({"vlan_base": 4090}, None),  # valid alone; the fabric's 8 rails pass 4094 (checked with the fabric)
        ({"colour": 1}, "addressing.colour: unknown key 'colour'; allowed keys: loopbacks, fabric, gpus, p2p, gpu_subnet, asn_scheme, asn_pool, vlan_base, vrf_table_base"),
    ],
)
def test_bad_addressing_section(addressing, expected):
    try:
        build_spec({"name": "t", "gpus": 64, "hb_domain": 8, "radix": 16, "addressing": addressing})
    except InputError as exc:
        assert expected is not None and any(p.render().startswith(expected) for p in exc.problems), exc.render()
    else:
        assert expected is None
        spec = build_spec({"name": "t", "gpus": 64, "hb_domain": 8, "radix": 16, "addressing": addressing})
        problems = ad.check_pools(clos.generate(spec, "rail-only"))
        assert [p.render() for p in problems] == ["addressing.vlan_base: vlan_base 4090 + 8 rails passes VLAN 4094; use vlan_base <= 4087"]


def test_spec_hash_unchanged_without_the_section_and_echoed_with_it():
    plain = build_spec({"name": "t", "gpus": 64, "hb_domain": 8, "radix": 16})
    assert "addressing" not in plain.to_dict()
    given = build_spec({"name": "t", "gpus": 64, "hb_domain": 8, "radix": 16, "addressing": {"p2p": "unnumbered"}})
    d = given.to_dict()
    assert d["addressing"]["p2p"] == "unnumbered" and d["addressing"]["gpus"] == "10.128.0.0/9"
    assert build_spec(d).digest() == given.digest()  # the echo parses back to the same spec


def read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("mode", MODES, ids=_id)
def test_addressing_csv_read_back(tmp_path, mode):
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"name": "demo", "gpus": 64, "hb_domain": 4, "radix": 8, "addressing": mode or None}))
    assert build(tmp_path / "a", str(spec), "--formats", "cabling,addressing").exit_code == 0
    assert build(tmp_path / "b", str(spec), "--formats", "cabling,addressing").exit_code == 0
    for arch in ("rail-optimized", "rail-only"):
        a, b = tmp_path / "a" / arch / "addressing.csv", tmp_path / "b" / arch / "addressing.csv"
        assert a.read_bytes() == b.read_bytes()
        rows = read(a)
        cables = read(tmp_path / "a" / arch / "cabling.csv")
        by_cable = Counter(r["cable"] for r in rows if r["cable"])
        # every cable: a row per end (a GPU end, a switch end)
        assert set(by_cable) == {c["cable"] for c in cables} and set(by_cable.values()) == {2}
        ends = {(r["device"], r["interface"]): r for r in rows}
        for c in cables:
            a_end, z_end = ends[(c["a_device"], c["a_port"])], ends[(c["z_device"], c["z_port"])]
            assert (a_end["peer_device"], a_end["peer_interface"]) == (c["z_device"], c["z_port"])
            assert (z_end["peer_device"], z_end["peer_interface"]) == (c["a_device"], c["a_port"])
            if a_end["address"] and z_end["address"]:
                assert a_end["peer_address"] == z_end["address"] and z_end["peer_address"] == a_end["address"]
                assert ipaddress.ip_interface(a_end["address"]).network == ipaddress.ip_interface(z_end["address"]).network
        switches = {c[k] for c in cables for k in ("a_device", "z_device") if not c[k].startswith("hb")}
        assert {r["device"] for r in rows if r["interface"] == "lo"} == switches
        for r in rows:
            if r["role"] == "gpu":
                assert ipaddress.ip_interface(r["address"]).ip in ipaddress.ip_network(r["route"])


def test_default_formats_leave_the_configurations_out():
    from topogen import pipeline
    from topogen.exports import CONFIG_FORMATS, EXPORTERS

    assert "addressing" not in pipeline.resolve_formats(None) and "frr" not in pipeline.resolve_formats(None)
    assert pipeline.resolve_formats("config") == [f for f in EXPORTERS if f in CONFIG_FORMATS]  # addressing, frr, sonic, nvue, netplan, air, ipam, opensm
    assert {"addressing", "frr"} <= set(pipeline.resolve_formats("all"))


@pytest.mark.parametrize("mode", MODES, ids=_id)
def test_chunked_rendering_gives_the_same_bytes(tmp_path, monkeypatch, mode):
    """addressing.csv and frr.conf stream a chunk of switches at a time; the chunk size never shows in the bytes."""
    from topogen.config import frr
    from topogen.exports.switch_configs import addressing as ea

    for arch_fabric in fabrics(dict(gpus=128, hb_domain=8, radix=8), mode):
        texts = []
        for chunk in (4096, 3):
            monkeypatch.setattr(ea, "SWITCH_CHUNK", chunk)
            monkeypatch.setattr(frr, "SWITCH_CHUNK", max(chunk // 2, 1))
            path = tmp_path / f"{arch_fabric.arch}-{chunk}.csv"
            ea.write_addressing(arch_fabric, path)
            texts.append((path.read_bytes(), list(frr.generate_texts(arch_fabric))))
        assert texts[0] == texts[1]


def test_field_table_is_the_dataclass():
    import dataclasses

    from topogen.spec.addressing import KEYS, AddressingSpec

    assert KEYS == tuple(f.name for f in dataclasses.fields(AddressingSpec))
