"""frr.conf per switch: FRR's own parser accepts every file (``vtysh --dryrun``), and each file says what the plan says.

Read back against addressing.csv: the switch's ASN in ``router bgp``, one eBGP neighbour per
switch-facing port with the peer's ASN, an address per numbered port, a VRF per rail on
rail-only shared switches. Needs Debian's ``frr`` for the parser check (.ci/run installs it).
"""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topogen.cli import main
from topogen.config.emulate import Port, Router, bgp_mismatches, split_vrfs

HAVE_VTYSH = shutil.which("vtysh") is not None
MODES = [{}, {"p2p": "unnumbered"}, {"gpu_subnet": "rail"}, {"asn_scheme": "per-switch", "asn_pool": "64512-65534"}]


def _id(x):
    return ",".join(f"{k}={v}" for k, v in x.items()) or "defaults"


def build(tmp_path: Path, shape: dict, mode: dict) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"name": "t", **shape, "addressing": mode or None}))
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", str(spec), "--formats", "cabling,addressing,frr", "--out", str(out), "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


def routers_from(out: Path, arch: str) -> tuple[list[Router], dict[str, str], dict[str, str]]:
    """Routers (switch, VRF) with their ports from addressing.csv and their file split per VRF."""
    with open(out / arch / "addressing.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    roles = {r["device"]: r["role"] for r in rows}
    asns = {r["device"]: r["asn"] for r in rows if r["role"] != "gpu"}
    routers = []
    for path in sorted((out / arch / "frr").rglob("*.conf")):
        name = path.stem
        ports = [Port(r["device"], r["interface"], r["vrf"], r["vlan"], r["address"], r["peer_device"], r["peer_interface"], r["peer_address"]) for r in rows if r["device"] == name and r["interface"].startswith("p")]
        for vrf, conf in split_vrfs(path.read_text()).items():
            routers.append(Router(name if not vrf else f"{name}/{vrf}", name, roles[name], vrf, conf, [p for p in ports if p.vrf == vrf], asn=asns[name]))
    return routers, roles, asns


@pytest.mark.parametrize("mode", MODES, ids=_id)
@pytest.mark.parametrize("shape", [dict(gpus=64, hb_domain=8, radix=16), dict(gpus=64, hb_domain=4, radix=8), dict(gpus=128, hb_domain=8, radix=8, planes=2)], ids=_id)
def test_configs_say_what_the_plan_says(tmp_path, shape, mode):
    out = build(tmp_path, shape, mode)
    for arch in ("rail-optimized", "rail-only"):
        routers, roles, asns = routers_from(out, arch)
        assert {r.switch for r in routers} == set(asns)
        for r in routers:
            assert bgp_mismatches(r, roles, {x.name: x.asn for x in routers}) == []
            if r.vrf:
                assert r.ports and all(p.vrf == r.vrf for p in r.ports)
        files = list((out / arch / "frr").rglob("*.conf"))
        folders = {f.parent for f in files}
        assert len(folders) > 1 or len(files) <= 4  # not one flat folder


def test_a_changed_file_is_found_by_the_lint(tmp_path):
    out = build(tmp_path, dict(gpus=64, hb_domain=8, radix=16), {})
    routers, roles, asns = routers_from(out, "rail-optimized")
    leaf = next(r for r in routers if r.name == "leaf-g0-r0")
    leaf.config = leaf.config.replace("remote-as 4200000008", "remote-as 4200000009", 1)
    assert bgp_mismatches(leaf, roles, asns) == ["leaf-g0-r0: neighbour 10.64.0.0 on p9 has remote-as 4200000009, but spine-0 is AS 4200000008"]
    spine = next(r for r in routers if r.name == "spine-0")
    spine.config = "\n".join(ln for ln in spine.config.splitlines() if not ln.startswith(" neighbor 10.64.0.1 "))
    assert bgp_mismatches(spine, roles, asns) == ["spine-0: no BGP neighbour 10.64.0.1 on p1 (to leaf-g0-r0:p9, AS 4200000000)"]


def test_shared_rail_only_switch_file():
    from topogen.fabric import clos
    from topogen.config.frr import generate_texts
    from topogen.spec.cluster import build_spec

    f = clos.generate(build_spec({"name": "t", "gpus": 64, "hb_domain": 8, "radix": 16}), "rail-only")
    text = dict(generate_texts(f))[0]
    assert "vrf rail0\nexit-vrf\n" in text and "vrf rail1\nexit-vrf\n" in text
    assert "interface p1 vrf rail0\n" in text and "interface p9 vrf rail1\n" in text
    assert "router bgp 4200000000 vrf rail0\n" in text and "router bgp 4200000000 vrf rail1\n" in text
    parts = split_vrfs(text)
    assert set(parts) == {"", "rail0", "rail1"}
    assert "interface p1\n" in parts["rail0"] and "interface p9" not in parts["rail0"] and "router bgp 4200000000\n" in parts["rail1"]


@pytest.mark.skipif(not HAVE_VTYSH, reason="FRR's vtysh not installed (apt-get install frr; .ci/run does)")
@pytest.mark.parametrize("mode", MODES, ids=_id)
def test_frr_parses_every_kind_of_file(tmp_path, mode):
    """One file of every (architecture, role, VRF or not) through FRR's parser: no unknown or bad line."""
    out = build(tmp_path, dict(gpus=64, hb_domain=4, radix=8), mode)
    shared = build(tmp_path / "shared", dict(gpus=64, hb_domain=8, radix=16), mode)
    picked = {}
    for root in (out, shared):
        for path in sorted(root.rglob("*.conf")):
            picked.setdefault(path.parent, path)  # one per folder: every architecture, rail, role and pod
    assert len(picked) >= 10 and any("vrf rail" in p.read_text() for p in picked.values())
    for path in picked.values():
        res = subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True, text=True)
        assert res.returncode == 0 and res.stdout.strip() == "", (path, res.stdout, res.stderr)
