"""Day-0 files by technology: an InfiniBand fabric gets the subnet manager's files and no BGP, an Ethernet
fabric the routing configs its switches' operating systems read (the catalog's ``nos``), and the build says
what it skipped.

Over catalogs (InfiniBand QM9700 and Q3400, Ethernet SN5600 running SONiC and Cumulus, EOS-class fixed
boxes, SONiC-class 51.2T, the generic paper switch), both architectures and one or two planes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from topogen import pipeline
from topogen.config.technology import technology, writes
from topogen.spec.cluster import build_spec

ROUTED = ("addressing", "frr", "sonic", "nvue", "air", "ipam")
CASES = [
    # catalog, radix, link_speed, extra, kind, formats the compute fabric gets among the config formats
    ("ndr-400g", 64, 400, {}, "infiniband", {"opensm"}),
    ("ndr-400g", 64, 400, {"planes": 2}, "infiniband", {"opensm"}),
    ("xdr-800g", 144, 800, {}, "infiniband", {"opensm"}),
    ("xdr-800g", 64, 800, {}, "ethernet", {"addressing", "frr", "sonic", "nvue", "air", "ipam"}),
    ("xdr-800g", 128, 400, {"planes": 2}, "ethernet", {"addressing", "frr", "sonic", "nvue", "air", "ipam"}),
    ("chassis-400g", 32, 400, {}, "ethernet", {"addressing", "frr", "ipam"}),
    ("hpn-51t", [256, 128], [200, 400], {"nic_ports": 2, "homing": "dual", "gpus": 128}, "ethernet", {"addressing", "frr", "sonic", "ipam"}),
    ("paper", 16, 400, {}, "", {"addressing", "frr", "sonic", "nvue", "air", "ipam", "opensm"}),
]


def _arch_files(out: Path, arch: str) -> set[str]:
    """The config formats present under ``out/<arch>/`` (and the build-level NetBox IPAM files)."""
    d = out / arch
    got = {f for f in ("frr", "sonic", "nvue", "air", "opensm") if (d / f).is_dir() and any((d / f).rglob("*"))}
    if (d / "addressing.csv").exists():
        got.add("addressing")
    if (d / "netbox" / "ipam").is_dir():
        got.add("ipam")
    return got


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{c[0]}-r{c[1]}-{c[2]}g".replace(" ", "") + "".join(f"-{k}{v}" for k, v in c[3].items()))
def built(request, tmp_path_factory):
    cat, radix, speed, extra, kind, expect = request.param
    spec = build_spec({"name": "tech", "gpus": 64, "hb_domain": 8, "radix": radix, "link_speed": speed, "catalog": cat, **extra})  # extra may resize
    ctx = pipeline.build(spec)
    out = tmp_path_factory.mktemp("tech")
    formats = pipeline.resolve_formats("config")
    pipeline.write_outputs(ctx, out, formats)
    return ctx, out, kind, expect


def test_each_fabric_gets_the_files_of_its_technology(built):
    ctx, out, kind, expect = built
    for arch in ctx.fabrics:
        assert technology(ctx, arch).kind == kind
        assert _arch_files(out, arch) == expect
        for fmt in (*ROUTED, "opensm"):
            assert writes(ctx, arch, fmt) == (fmt in expect)


def test_an_infiniband_fabric_writes_no_bgp(built):
    """No BGP anywhere in an InfiniBand build's files; an Ethernet (or unstated) one has a BGP frr.conf per switch."""
    ctx, out, kind, _ = built
    if kind != "infiniband":
        for arch, fabric in ctx.fabrics.items():
            confs = list((out / arch / "frr").rglob("*.conf"))
            assert len(confs) == len(fabric.switches) and all("router bgp" in p.read_text() for p in confs)
        return
    for p in out.rglob("*"):
        if p.is_file() and p.suffix in (".conf", ".json", ".yaml", ".csv"):
            text = p.read_text(errors="replace")
            assert "router bgp" not in text and "BGP_NEIGHBOR" not in text and "autonomous-system" not in text, p


def test_the_build_says_what_it_skipped_and_why(built):
    ctx, _, kind, expect = built
    notes = [m for m in ctx.messages if "skipped" in m]
    if kind == "":
        assert notes == []
        return
    assert len(notes) >= len(ctx.fabrics)
    for arch in ctx.fabrics:
        mine = " ".join(m for m in notes if m.startswith(f"{arch}: "))
        for fmt in (*ROUTED, "opensm"):
            if fmt not in expect:
                assert fmt in mine
        if kind == "infiniband":
            assert "InfiniBand" in mine and "opensm/" in mine
        else:
            assert "Ethernet" in mine


def test_superpod_infiniband_compute_with_ethernet_in_band(tmp_path):
    """dgx-h100-superpod's shape, small: InfiniBand compute (opensm, no BGP), the hosts' in-band bond in netplan."""
    spec = build_spec({"name": "pod", "gpus": 64, "hb_domain": 8, "radix": 64, "link_speed": 400, "catalog": "ndr-400g", "networks": {"inband": {}}})
    ctx = pipeline.build(spec)
    pipeline.write_outputs(ctx, tmp_path, pipeline.resolve_formats("config"))
    for arch in ctx.fabrics:
        assert _arch_files(tmp_path, arch) == {"opensm"}
        node = next((tmp_path / arch / "netplan").rglob("*.yaml")).read_text()
        assert "bond0" in node


def test_ethernet_ports_fit_the_switch_models_cages(built):
    """SONiC lanes and Cumulus swp numbers stay on the SKU's faceplate: cages = radix / per_cage of its port mode, 8 lanes a cage; a twin-port cage is split (BREAKOUT_CFG)."""
    import json

    import yaml

    ctx, out, kind, expect = built
    if kind != "ethernet":
        assert kind in ("infiniband", "")
        return
    by_sku = {s.sku: s for s in ctx.catalog.switches}
    for arch, fabric in ctx.fabrics.items():
        skus = ctx.boms[arch].switch_skus
        for sw in fabric.switches:
            sku = by_sku[skus[sw.tier - 1]]
            cages = max((m.radix // m.per_cage for m in sku.ports if m.radix), default=0)
            folder = out / arch / "sonic"
            if "sonic" in expect:
                (path,) = folder.rglob(f"{sw.name}.config_db.json")
                db = json.loads(path.read_text())
                lanes = [int(x) for p in db["PORT"].values() for x in p["lanes"].split(",")]
                assert max(lanes) < 8 * cages and len(lanes) == len(set(lanes))
                for name, mode in db.get("BREAKOUT_CFG", {}).items():
                    assert name in db["PORT"] and int(mode["brkout_mode"].split("x")[0]) > 1
            if "nvue" in expect:
                (path,) = (out / arch / "nvue").rglob(f"{sw.name}.startup.yaml")
                (doc,) = yaml.safe_load(path.read_text())
                swp = [int(n[3:].split("s")[0]) for n in doc["set"]["interface"] if n.startswith("swp")]
                assert swp and max(swp) <= cages
