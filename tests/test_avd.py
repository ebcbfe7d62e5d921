"""Arista AVD inputs (``--formats avd``), rendered by the real pyavd: every device, neighbours and interfaces equal to the plan.

pyavd (Arista's own Python AVD, on PyPI) validates the inputs against AVD's schema, computes the
fabric's facts and renders each switch's EOS configuration, documentation and ANTA test catalog. The
rendered configuration is parsed back: each switch's routed interfaces (EOS name, address) and BGP
neighbours (address, remote AS) must be exactly those of topogen's cabling and address plan.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from topogen import pipeline
from topogen.config import avd as avd_config
from topogen.config.addressing import cidr_text, ip_text, plan
from topogen.exports.switch_configs import avd as avd_export
from topogen.fabric.view import view
from topogen.spec import load_spec
from topogen.util.resources import template_path

pytestmark = pytest.mark.filterwarnings("ignore:DSA is deprecated")

pyavd = pytest.importorskip("pyavd", reason="pyavd (Arista AVD, PyPI) is not installed: pip install -e '.[test]'")


def arista_catalog(tmp: Path) -> Path:
    """The paper catalog (any radix at 400G) with its switch made an Arista one: small fabrics of every shape."""
    data = yaml.safe_load(template_path("catalogs", "paper").read_text())
    data["name"] = "arista-any"
    data["switches"][0]["manufacturer"] = "Arista"
    p = tmp / "arista-any.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


SHAPES = {
    "2-tier": {"gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-optimized"},
    "3-tier": {"gpus": 128, "hb_domain": 8, "radix": 8, "arch": "rail-optimized"},
    "2-planes": {"gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-optimized", "planes": 2},
    "3:1": {"gpus": 96, "hb_domain": 8, "radix": 16, "arch": "rail-optimized", "oversubscription": "3:1"},
    "rail-only": {"gpus": 64, "hb_domain": 4, "gpus_per_node": 4, "radix": 8, "arch": "rail-only", "rail_packing": "dedicated"},
    "leaf-pair": {"gpus": 32, "hb_domain": 8, "gpus_per_node": 8, "radix": 64, "arch": "rail-optimized", "design": "leaf-pair"},
}


def build(overrides: dict, catalog) -> pipeline.BuildContext:
    return pipeline.build(load_spec("demo", {**overrides, "catalog": str(catalog), "link_speed": 400}))


def hostvars(group_vars: dict, inventory: dict) -> dict[str, dict]:
    """Each host's variables as Ansible (and pyavd) see them: the fabric's group vars plus its group's ``type``."""
    fab = next(iter(inventory["all"]["children"].values()))
    out = {}
    for g in fab["children"].values():
        for h in g["hosts"]:
            out[h] = {**copy.deepcopy(group_vars), **g["vars"]}
    return out


def rendered(hosts: dict[str, dict]) -> dict[str, tuple[dict, str]]:
    for h, d in hosts.items():
        v = pyavd.validate_inputs(copy.deepcopy(d)).validation_result
        assert not v.violations, (h, [getattr(x, "message", x) for x in v.violations])
    facts = pyavd.get_avd_facts(copy.deepcopy(hosts))
    out = {}
    for h, d in hosts.items():
        sc = pyavd.get_device_structured_config(h, copy.deepcopy(d), facts)
        out[h] = (sc, pyavd.get_device_config(sc))
    return out


IFACE_RE = re.compile(r"^interface (\S+)\n((?:   .*\n)*)", re.M)
NBR_RE = re.compile(r"^   neighbor (\d+\.\d+\.\d+\.\d+) remote-as (\d+)$", re.M)


def parsed(cfg: str) -> tuple[dict[str, str], dict[str, int]]:
    """``{interface: address}`` of every routed interface and ``{neighbour address: remote AS}``."""
    ifaces = {}
    for name, body in IFACE_RE.findall(cfg):
        m = re.search(r"^   ip address (\S+)$", body, re.M)
        if m:
            ifaces[name] = m.group(1)
    return ifaces, {a: int(asn) for a, asn in NBR_RE.findall(cfg)}


def expected(ctx, fabric) -> dict[str, tuple[dict[str, str], dict[str, int], str]]:
    """Per switch, from topogen's own plan: interfaces with addresses, neighbours, loopback."""
    tv = avd_config.tiers(ctx, fabric)
    ad = plan(fabric)
    e = ad.ends
    legs = np.array([tv[fabric.switches[s].tier].legs for s in e.switch.tolist()], np.int64)
    p0 = e.port.astype(np.int64) - 1  # EOS: Ethernet<cage>/<first lane of the leg>, 8 lanes a cage
    names = "Ethernet" + (p0 // legs + 1).astype(str).astype(object) + "/" + ((p0 % legs) * (8 // legs) + 1).astype(str).astype(object)
    addr = cidr_text(e.addr, e.plen)
    peer = ip_text(e.peer_addr)
    lo = ip_text(ad.loopback)
    out = {}
    for s, sw in enumerate(fabric.switches):
        sl = e.of(s)
        ifaces = {names[i]: addr[i] for i in range(sl.start, sl.stop)}
        ifaces["Loopback0"] = f"{lo[s]}/32"
        nbrs = {peer[i]: int(e.peer_asn[i]) for i in range(sl.start, sl.stop) if e.peer[i] >= fabric.gpus}
        out[sw.name] = (ifaces, nbrs, lo[s])
    return out


def files_of(tmp: Path, ctx, arch: str) -> tuple[dict, dict]:
    paths = avd_export.export(ctx, tmp)
    inv = next(p for p in paths if p.name == "inventory.yml" and p.parent.parent.name == arch)
    gv = next(p for p in paths if p.parent.name == "group_vars" and p.parent.parent.parent.name == arch)
    return yaml.safe_load(gv.read_text()), yaml.safe_load(inv.read_text())


@pytest.mark.parametrize("shape", SHAPES)
def test_pyavd_renders_every_device_as_planned(shape, tmp_path):
    over = SHAPES[shape]
    ctx = build(over, arista_catalog(tmp_path))
    arch = over["arch"]
    fabric = ctx.fabrics[arch]
    assert avd_config.unsupported(ctx, fabric) == ""
    gv, inv = files_of(tmp_path / "out", ctx, arch)
    hosts = hostvars(gv, inv)
    assert sorted(hosts) == sorted(s.name for s in fabric.switches)
    want = expected(ctx, fabric)
    out = rendered(hosts)
    for name, (sc, cfg) in out.items():
        ifaces, nbrs = parsed(cfg)
        w_ifaces, w_nbrs, lo = want[name]
        assert ifaces == w_ifaces, name
        assert nbrs == w_nbrs, name
        assert f"router-id {lo}" in cfg
        assert "redistribute connected route-map RM-TOPOGEN-LOCAL" in cfg
    # every switch-to-switch cable is one session seen from both ends
    sessions = sum(len(w[1]) for w in want.values())
    L = fabric.cable_table()
    assert sessions == 2 * int((L.a_dev >= fabric.gpus).sum())


def test_breakout_ports_take_eos_lane_names(tmp_path):
    """The bundled arista-800g catalog at 400G: cages split 2 x 400G, so ports are Ethernet<cage>/1 and /5."""
    ctx = pipeline.build(load_spec("demo", {"gpus": 256, "catalog": "arista-800g", "radix": 128, "link_speed": 400, "arch": "rail-optimized"}))
    fabric = ctx.fabrics["rail-optimized"]
    gv, inv = files_of(tmp_path, ctx, "rail-optimized")
    ifs = {i for ln in gv["l3_edge"]["p2p_links"] for i in ln["interfaces"] if i.startswith("Ethernet")}
    assert {"Ethernet1/1", "Ethernet1/5"} <= ifs
    assert all(re.fullmatch(r"Ethernet([1-9]|[1-5][0-9]|6[0-4])/[15]", i) for i in ifs)
    hosts = hostvars(gv, inv)
    leaf = fabric.switches[0].name
    one = {leaf: hosts[leaf], **{h: hosts[h] for h in hosts if h != leaf}}
    out = rendered(one)
    ifaces, nbrs = parsed(out[leaf][1])
    assert ifaces == expected(ctx, fabric)[leaf][0]
    doc = pyavd.get_device_doc(out[leaf][0])
    assert leaf in doc and "Ethernet1/5" in doc
    # ANTA's test catalog for the leaf: a BGP peer test naming each of its spine sessions
    from pyavd.api.anta import AVDFabricData

    fabric_data = AVDFabricData.from_structured_configs({h: dict(sc) if isinstance(sc, dict) else sc._as_dict() for h, (sc, _) in out.items()})
    sc = out[leaf][0]
    catalog = pyavd.get_device_test_catalog(leaf, dict(sc) if isinstance(sc, dict) else sc._as_dict(), fabric_data)
    text = catalog.dump().yaml() if hasattr(catalog.dump(), "yaml") else str(catalog.dump())
    for addr in nbrs:
        assert addr in text, addr


@pytest.mark.parametrize("why, overrides, catalog", [
    ("not an Arista EOS switch", {"arch": "rail-optimized"}, "paper"),
    ("several rails", {"arch": "rail-only"}, None),
    ("unnumbered", {"arch": "rail-optimized", "addressing": {"p2p": "unnumbered"}}, None),
    ("rail subnets", {"arch": "rail-optimized", "addressing": {"gpu_subnet": "rail"}}, None),
])
def test_fabrics_avd_cannot_carry_get_no_files_and_a_reason(why, overrides, catalog, tmp_path):
    cat = catalog or str(arista_catalog(tmp_path))
    ctx = pipeline.build(load_spec("demo", {**overrides, "catalog": cat}))
    arch = overrides["arch"]
    assert why in avd_config.unsupported(ctx, ctx.fabrics[arch])
    assert avd_export.export(ctx, tmp_path / "out") == []


def test_files_are_deterministic_and_yaml(tmp_path):
    cat = arista_catalog(tmp_path)
    a = avd_export.export(build(SHAPES["3-tier"], cat), tmp_path / "a")
    b = avd_export.export(build(SHAPES["3-tier"], cat), tmp_path / "b")
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b") for p in b]
    for x, y in zip(a, b):
        assert x.read_bytes() == y.read_bytes()
        yaml.safe_load(x.read_text())
