"""Native port names: each switch port is its model's own name, the same string in every file that names it.

Over a grid of catalogs (SONiC and Cumulus on a Spectrum-4 SN5600, EOS on an
Arista 7060X6, InfiniBand on a QM9700), with and without split cages, both
architectures: the switch end of every cable reads the same in cabling.csv,
the pull sheets and their labels, NetBox's cables and interfaces, the address
plan, frr.conf and SONiC's config_db.json; ``validate`` reads the build's
cabling.csv back without a finding on its ports, and ``diff`` of the build
against its own cabling.csv (and, InfiniBand, its own ibnetdiscover file, whose
ports are numbers) finds nothing. The names themselves are checked against the
operating systems' conventions (SONiC lanes, Cumulus ``swpNsM``, EOS
``EthernetN/M``, QM9700 ``cage/port``).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import yaml

from topogen import pipeline
from topogen.asbuilt import End, sources
from topogen.config.emulation import grammar
from topogen.fabric.ports import names, switch_ports
from topogen.spec.cluster import build_spec
from topogen.util import resources


def test_names_follow_each_operating_system():
    cage, leg = np.array([0, 0, 1, 63]), np.array([0, 1, 0, 1])
    two = np.full(4, 2)
    assert names("sonic", cage, leg, two).tolist() == ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet508"]
    assert names("cumulus", cage, leg, two).tolist() == ["swp1s0", "swp1s1", "swp2s0", "swp64s1"]
    assert names("cumulus", cage, leg * 0, np.ones(4, np.int64)).tolist() == ["swp1", "swp1", "swp2", "swp64"]
    assert names("eos", cage, leg, two).tolist() == ["Ethernet1/1", "Ethernet1/5", "Ethernet2/1", "Ethernet64/5"]
    assert names("eos", np.array([0, 0]), np.array([0, 3]), np.array([4, 4])).tolist() == ["Ethernet1/1", "Ethernet1/7"]
    assert names("eos", np.array([0]), np.array([0]), np.array([1])).tolist() == ["Ethernet1/1"]
    assert names("mlnx-os", cage, leg, two, phys=2).tolist() == ["1/1", "1/2", "2/1", "64/2"]
    four = np.full(4, 4)  # a QM9700 cage at 4 x NDR200: each of its two ports split in two
    assert names("mlnx-os", np.zeros(4, np.int64), np.arange(4), four, phys=2).tolist() == ["1/1/1", "1/1/2", "1/2/1", "1/2/2"]


def _catalog(tmp: Path, nos: list[str]) -> Path:
    """The xdr-800g catalog with its SN5600 running only ``nos`` (Cumulus alone: NVUE names)."""
    data = yaml.safe_load(resources.template_path("catalogs", "xdr-800g").read_text())
    data["name"] = "xdr-" + "-".join(nos)
    for s in data["switches"]:
        if s["sku"] == "SN5600":
            s["nos"] = nos
    p = tmp / f"{data['name']}.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


# (catalog, radix, link speed, expected scheme, a name of leaf port 1, a name of leaf port 2)
GRID = {
    "sonic": ("xdr-800g", 128, 400, "sonic", "Ethernet0", "Ethernet4"),
    "sonic-split": ("xdr-800g", 256, 200, "sonic", "Ethernet0", "Ethernet2"),
    "cumulus": ("cumulus", 128, 400, "cumulus", "swp1s0", "swp1s1"),
    "eos": ("arista-800g", 128, 400, "eos", "Ethernet1/1", "Ethernet1/5"),
    "eos-split": ("arista-800g", 256, 200, "eos", "Ethernet1/1", "Ethernet1/3"),
    "qm9700": ("ndr-400g", 64, 400, "mlnx-os", "1/1", "1/2"),
    "qm9700-ndr200": ("ndr-400g", 128, 200, "mlnx-os", "1/1/1", "1/1/2"),
}
ETHERNET_FORMATS = ["cabling", "pull-sheets", "netbox", "addressing", "frr", "sonic"]
IB_FORMATS = ["cabling", "pull-sheets", "netbox", "ibnetdiscover"]


@pytest.fixture(scope="module", params=sorted(GRID))
def built(request, tmp_path_factory):
    case = request.param
    cat, radix, speed, scheme, p1, p2 = GRID[case]
    tmp = tmp_path_factory.mktemp(f"ports-{case}")
    ref = str(_catalog(tmp, ["cumulus"])) if cat == "cumulus" else cat
    spec = build_spec({"name": f"ports-{case}", "gpus": 64, "hb_domain": 8, "radix": radix, "link_speed": speed, "catalog": ref, "arch": "both"})
    ctx = pipeline.build(spec)
    out = tmp / "out"
    pipeline.write_outputs(ctx, out, IB_FORMATS if scheme == "mlnx-os" else ETHERNET_FORMATS)
    return case, ctx, out


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _cabling(out: Path, arch: str) -> dict[str, tuple[End, End]]:
    return {r["cable"]: (End(r["a_device"], r["a_port"]), End(r["z_device"], r["z_port"])) for r in _csv(out / arch / "cabling.csv")}


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_the_names_are_the_models_own(built, arch):
    case, ctx, out = built
    _, _, _, scheme, p1, p2 = GRID[case]
    sp = switch_ports(ctx.fabrics[arch])
    assert set(sp.scheme) == {scheme}
    assert sp.at(0, 1) == p1 and sp.at(0, 2) == p2
    for i, sw in enumerate(ctx.fabrics[arch].switches):  # every port of every switch: one name each, all read back
        block = [sp.at(i, p) for p in range(1, sw.radix + 1)]
        assert len(set(block)) == len(block), sw.name
        assert [sp.index(i, x) for x in block] == list(range(1, sw.radix + 1))
        assert all(sp.index(i, f"p{p}") == p for p in range(1, sw.radix + 1))


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_every_file_names_each_switch_port_alike(built, arch):
    case, ctx, out = built
    scheme = GRID[case][3]
    cables = _cabling(out, arch)
    switch_ports_of = defaultdict(set)
    for a, z in cables.values():
        for e in (a, z):
            if not e.port.startswith("nic"):
                switch_ports_of[e.device].add(e.port)
    assert all(not re.fullmatch(r"p[0-9]+", p) for ports in switch_ports_of.values() for p in ports)
    # pull sheets and their labels
    for r in _csv(out / arch / "pull-sheets.csv"):
        a, z = cables[r["cable"]]
        got = {(r["a_device"], r["a_port"]), (r["z_device"], r["z_port"])}
        for e in (a, z):
            if not e.port.startswith("nic"):
                assert (e.device, e.port) in got, (r["cable"], e)
                assert f" {e.port}" in r["label"], (r["label"], e)
    # NetBox: cables by their label (<site>/<cable id>), interfaces by device
    site = ctx.spec.name + "-" + arch
    nb_ports = defaultdict(set)
    for r in _csv(out / arch / "netbox" / "interfaces.csv"):
        nb_ports[r["device"].split(".", 1)[1]].add(r["name"])
    for dev, ports in switch_ports_of.items():
        assert ports <= nb_ports[dev], dev
    for r in _csv(out / arch / "netbox" / "cables.csv"):
        cid = r["label"].rsplit("/", 1)[1]
        if cid not in cables:
            continue
        want = {(e.device, e.port) for e in cables[cid] if not e.port.startswith("nic")}
        got = {(r[f"side_{s}_device"].split(".", 1)[1], r[f"side_{s}_name"]) for s in "ab"}
        assert want <= got, (cid, want, got)
    assert site  # the NetBox site of this architecture (its devices' prefix)
    if scheme == "mlnx-os":
        return
    # address plan, frr.conf, config_db.json
    by_cable = {}
    for r in _csv(out / arch / "addressing.csv"):
        if r["role"] != "gpu" and r["cable"]:
            by_cable.setdefault(r["cable"], set()).add((r["device"], r["interface"]))
    for cid, ends in by_cable.items():
        assert ends <= {(e.device, e.port) for e in cables[cid]}, cid
    for conf in (out / arch / "frr").rglob("*.conf"):
        dev = conf.stem
        ifaces = set(re.findall(r"^interface (\S+)", conf.read_text(), re.M)) - {"lo"}
        ifaces = {x for x in ifaces if not x.startswith("vlan")}
        assert ifaces == switch_ports_of[dev], dev
    for db in (out / arch / "sonic").rglob("*.json"):
        data = json.loads(db.read_text())
        assert set(data["PORT"]) == switch_ports_of[data["DEVICE_METADATA"]["localhost"]["hostname"]], db


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_diff_of_the_build_against_its_own_exports_finds_nothing(built, arch):
    case, ctx, out = built
    refs = [str(out / arch / "cabling.csv")]
    if GRID[case][3] == "mlnx-os":
        refs.append(str(out / arch / "ibnetdiscover"))
    for ref in refs:
        found = sources.read_found([ref])
        plan = sources.load_plan(str(out), arch, None, found)
        cmp = sources.diff(plan, found)
        assert cmp.clean, (ref, cmp.counts())
        assert cmp.compared == len(_cabling(out, arch))


def test_ibnetdiscover_numbers_under_factory_names_map_to_the_plans_names(built):
    """A QM9700 under its factory description still gets the plan's ``cage/port`` names: no move order for a name."""
    case, ctx, out = built
    if GRID[case][3] != "mlnx-os":
        pytest.skip("InfiniBand only")
    topo = out / "rail-optimized" / "ibnetdiscover" / "fabric.topo"
    text = topo.read_text()
    for i, sw in enumerate(ctx.fabrics["rail-optimized"].switches):
        text = text.replace(f'"{sw.name}"', f'"MF0;switch-{i:04x}:MQM9700/U1"')
    floor = topo.parent.parent.parent / "floor.topo"
    floor.write_text(text)
    found = sources.read_found([str(floor)])
    plan = sources.load_plan(str(out), "rail-optimized", None, found)
    cmp = sources.diff(plan, found)
    assert not cmp.deviations, cmp.counts()


def test_validate_reads_native_names_and_refuses_a_port_the_switch_lacks(built, tmp_path):
    case, ctx, out = built
    rows = (out / "rail-optimized" / "cabling.csv").read_text().splitlines()
    from topogen.asbuilt import wiring

    w = wiring.load(out / "rail-optimized" / "cabling.csv", ctx.spec, "rail-optimized")
    assert not [f for f in w.findings if f.check.startswith("hygiene")]
    assert len(w.fabric.links) + len(w.fabric.isls) == len(rows) - 1
    bad = tmp_path / "rail-optimized" / "cabling.csv"
    bad.parent.mkdir()
    head, first = rows[0], rows[1].split(",")
    z = head.split(",").index("z_port")
    first[z] = "Ethernet9999/9" if GRID[case][3] != "mlnx-os" else "99/9"
    bad.write_text("\n".join([head, ",".join(first)] + rows[2:]) + "\n")
    w = wiring.load(bad, ctx.spec, "rail-optimized")
    msgs = [f.message for f in w.findings if f.check == "hygiene.bad-port"]
    assert len(msgs) == 1 and first[z] in msgs[0] and "switch ports are" in msgs[0]


@pytest.mark.parametrize("name, linux", [("Ethernet0", "Ethernet0"), ("Ethernet256", "Ethernet256"), ("swp1s0", "swp1s0"), ("swp64", "swp64"), ("Ethernet1/5", "Ethernet1_5"), ("Ethernet64/1", "Ethernet64_1"), ("p12", "p12")])
def test_emulate_takes_native_names_as_linux_interfaces(name, linux):
    assert grammar.IFACE_RE.fullmatch(name)
    assert grammar.linux_name(name) == linux and len(linux) <= grammar.IFNAMSIZ and "/" not in linux
    conf = f"interface {name}\n description leaf-0:{name}\n"
    assert any(p.fullmatch(f"interface {name}") for p in grammar.FRR_LINES)
    assert grammar.linux_conf(conf) == conf.replace(name, linux)


@pytest.mark.parametrize("name", ["Ethernet1/5;reboot", "Ethernet/1", "swp1s", "eth0", "Ethernet1/0", "../p1", "Ethernet1_5", "1/1"])
def test_emulate_refuses_what_no_switch_is_named(name):
    assert not grammar.IFACE_RE.fullmatch(name)


def _emulate_why_not() -> str | None:
    if os.geteuid() != 0:
        return "emulate needs root (network namespaces)"
    if not Path("/usr/lib/frr/bgpd").exists() or shutil.which("vtysh") is None:
        return "Debian's frr is not installed (apt-get install frr; .ci/run does)"
    return None


@pytest.mark.skipif(_emulate_why_not() is not None, reason=_emulate_why_not() or "")
@pytest.mark.parametrize("nos, port", [("eos", "interface Ethernet1/5"), ("cumulus", "interface swp1s1")])
def test_native_names_boot_in_frr(nos, port, tmp_path):
    """The demo on switches named the EOS and Cumulus way (two ports a cage) boots in real FRR and routes as designed."""
    data = yaml.safe_load(resources.template_path("catalogs", "paper").read_text())
    data["name"] = f"paper-{nos}"
    data["switches"][0]["nos"] = [nos]
    for m in data["switches"][0]["ports"]:
        m["per_cage"] = 2
    cat = tmp_path / f"paper-{nos}.yaml"
    cat.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "out"
    run = lambda *a: subprocess.run([sys.executable, "-m", "topogen", *a], capture_output=True, text=True, timeout=580)  # noqa: E731
    res = run("build", "demo", "--catalog", str(cat), "--arch", "rail-optimized", "--formats", "cabling,addressing,frr", "--out", str(out), "-q")
    assert res.returncode == 0, res.stderr
    assert port in (out / "rail-optimized" / "frr" / "spine" / "spine-0.conf").read_text()
    res = run("emulate", str(out))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "BGP sessions Established: 128 of 128" in res.stdout and "result: every check passed" in res.stdout
