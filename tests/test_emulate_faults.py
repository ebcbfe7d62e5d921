"""``topogen emulate`` names the switch whose configuration causes a finding: faults planted in copies of a build's frr.conf.

Each case copies a build, changes one switch's ``frr.conf`` (a statement the emulator's
grammar accepts, so FRR boots it), runs ``topogen emulate`` in real FRR and asserts the run
fails (exit 1) and that the report's ``culprits`` is exactly that switch, with a cause
saying why. Faults: a neighbour's wrong remote AS, a missing neighbour, a wrong local AS,
no ``redistribute connected`` (nothing advertised), a prefix-list that drops the GPU
subnets, ``maximum-paths`` below the width at a spine and at a 3-tier spine (its uplinks to
the cores), a port address that is not the plan's, a duplicate router-id, and a static route
that black-holes another leaf's GPUs (staticd started for it); on a two-plane build, a static
route from a plane-0 leaf into plane 1 (plane isolation). Plus two cables swapped
between the same leaf and spine (cabling.csv): caught by ARP answered only on the port
that owns the address, named as a cabling finding with no switch blamed.

Ports and addresses are looked up in ``addressing.csv``, never spelt here, so the cases
hold whatever the port names are. Runs as root with Debian's frr; skipped otherwise.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest
import yaml
from test_emulate import WHY, emulate, topogen

pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")
ARCH = "rail-optimized"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("emul-faults")
    out = {}
    shapes = {"demo": "demo", "3tier": {"name": "s2", "gpus": 64, "hb_domain": 4, "radix": 8, "arch": ARCH}, "planes": {"name": "pl", "gpus": 16, "hb_domain": 8, "radix": 8, "planes": 2, "arch": ARCH}}
    for key, spec in shapes.items():
        if isinstance(spec, dict):
            (root / f"{key}.yaml").write_text(yaml.safe_dump(spec))
            spec = str(root / f"{key}.yaml")
        res = topogen("build", spec, "--arch", ARCH, "--formats", "cabling,addressing,frr", "--out", str(root / key), "-q")
        assert res.returncode == 0, res.stderr
        out[key] = root / key
    return out


def plan(build: Path) -> list[dict[str, str]]:
    with open(build / ARCH / "addressing.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def uplink(build: Path, leaf: str) -> dict[str, str]:
    """The leaf's first port to a switch, as the plan has it."""
    return next(r for r in plan(build) if r["device"] == leaf and r["peer_device"] and r["peer_asn"])


def conf(build: Path, switch: str) -> Path:
    return next((build / ARCH / "frr").rglob(f"{switch}.conf"))


def planted(build: Path, tmp_path: Path, switch: str, edit) -> Path:
    copy = tmp_path / "b"
    shutil.copytree(build, copy)
    path = conf(copy, switch)
    text = path.read_text()
    changed = edit(text)
    assert changed != text, "the fault was not planted"
    path.write_text(changed)
    return copy


def loopback(build: Path, switch: str) -> str:
    return next(r["address"] for r in plan(build) if r["device"] == switch and r["interface"] == "lo")


def asn(build: Path, switch: str) -> str:
    return next(r["asn"] for r in plan(build) if r["device"] == switch)


def gpu_subnet(build: Path, leaf: str) -> str:
    import ipaddress

    row = next(r for r in plan(build) if r["device"] == leaf and r["peer_device"] and not r["peer_asn"])
    return str(ipaddress.ip_interface(row["address"]).network)


def drop_neighbour(address: str):
    return lambda t: "\n".join(ln for ln in t.splitlines() if not ln.startswith(f" neighbor {address} ")) + "\n"


FAULTS = {
    # name: (build, switch, edit(build) -> text edit, words expected in its cause)
    "wrong remote AS": ("demo", "leaf-g0-r0", lambda b: (lambda t, u=uplink(b, "leaf-g0-r0"): t.replace(f"neighbor {u['peer_address'].split('/')[0]} remote-as {u['peer_asn']}", f"neighbor {u['peer_address'].split('/')[0]} remote-as {int(u['peer_asn']) + 1}")), "remote-as"),
    "missing neighbour": ("demo", "spine-0", lambda b: drop_neighbour(uplink(b, "leaf-g0-r0")["address"].split("/")[0]), "no BGP neighbour"),
    "wrong local AS": ("demo", "spine-1", lambda b: (lambda t: t.replace(f"router bgp {asn(b, 'spine-1')}", f"router bgp {int(asn(b, 'spine-1')) + 77}")), "AS"),
    "no redistribute": ("demo", "leaf-g0-r1", lambda b: (lambda t: t.replace("  redistribute connected route-map LOCAL\n", "")), "redistribute connected"),
    "filter drops GPU subnets": ("demo", "leaf-g0-r2", lambda b: (lambda t: re.sub(r"(ip prefix-list LOCAL seq 10 permit \S+) le 32", r"\1 ge 32", t)), "leaves out"),
    "maximum-paths below the width": ("demo", "spine-2", lambda b: (lambda t: re.sub(r"maximum-paths [0-9]+", "maximum-paths 1", t)), "maximum-paths 1"),
    "port address not the plan's": ("demo", "leaf-g0-r3", lambda b: (lambda t, u=uplink(b, "leaf-g0-r3"): t.replace(f" ip address {u['address']}\n", " ip address 10.63.255.1/31\n")), "the plan gives"),
    "duplicate router-id": ("demo", "spine-3", lambda b: (lambda t: t.replace(f"bgp router-id {loopback(b, 'spine-3').split('/')[0]}", f"bgp router-id {loopback(b, 'leaf-g0-r0').split('/')[0]}")), "router-id"),
    "static route black-holes GPUs": ("demo", "leaf-g0-r0", lambda b: (lambda t: t.replace("router bgp", f"ip route {gpu_subnet(b, 'leaf-g0-r2')} blackhole\n!\nrouter bgp", 1)), "next hops"),
    "3-tier spine maximum-paths": ("3tier", "spine-b0-0", lambda b: (lambda t: re.sub(r"maximum-paths [0-9]+", "maximum-paths 1", t)), "maximum-paths 1"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_planted_fault_is_caught_and_blamed_on_its_switch(builds, tmp_path, fault):
    key, switch, edit, words = FAULTS[fault]
    b = planted(builds[key], tmp_path, switch, edit(builds[key]))
    res, r = emulate(b, ARCH, "--timeout", "15")
    assert res.returncode == 1 and not r["ok"], res.stdout + res.stderr
    assert r["culprits"] == [switch], r["causes"]
    assert any(c.startswith(f"{switch}: ") and words in c for c in r["causes"]), r["causes"]
    assert any(switch in f for f in r["failures"]), r["failures"]
    if fault == "static route black-holes GPUs":
        assert r["daemons"]["staticd"] == 1  # started for the one file with an ip route
        assert any(c.startswith(f"{switch}: routes {gpu_subnet(builds[key], 'leaf-g0-r2')} over fewer next hops") for c in r["causes"]), r["causes"]


def test_every_tier_checked_and_daemons_per_file(builds):
    res, r = emulate(builds["3tier"], ARCH, "--timeout", "90")
    assert res.returncode == 0 and r["ok"], res.stdout + res.stderr
    assert set(r["ecmp_by_tier"]) == {"leaf", "spine", "core"} and all(v > 0 for v in r["ecmp_by_tier"].values())
    assert r["daemons"] == {"zebra": 40, "bgpd": 40, "bfdd": 40}  # no file has an ip route: no staticd
    assert r["culprits"] == [] and r["causes"] == []


def test_crossed_cables_are_caught(builds, tmp_path):
    """Two parallel leaf-spine cables swapped at the spine: with Linux's default ARP each session would still come up through the other port."""
    copy = tmp_path / "b"
    shutil.copytree(builds["demo"], copy)
    path = copy / ARCH / "cabling.csv"
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    a = next(x for x in rows if x["link"] == "leaf-spine")
    z = next(x for x in rows if x["link"] == "leaf-spine" and x is not a and (x["a_device"], x["z_device"]) == (a["a_device"], a["z_device"]))
    a["z_port"], z["z_port"] = z["z_port"], a["z_port"]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    res, r = emulate(copy, ARCH, "--timeout", "15")
    assert res.returncode == 1 and not r["ok"], res.stdout + res.stderr
    assert r["sessions_up"] == r["sessions"] - 4  # both cables' sessions, each seen from both ends
    crossed = [f for f in r["failures"] if f.startswith("cabling: ")]
    assert len(crossed) == 4 and any(f.startswith(f"cabling: {a['a_device']} {a['a_port']} gets no ARP answer") for f in crossed), r["failures"]
    assert r["culprits"] == []  # no switch's configuration is at fault


def test_a_route_into_another_plane_is_caught(builds, tmp_path):
    """Planes are separate networks: a static route on a plane-0 leaf toward a plane-1 NIC's subnet is a leak, blamed on that leaf."""
    rows = plan(builds["planes"])
    leaf = next(r["device"] for r in rows if r["role"] == "leaf")
    nics = {r["peer_interface"] for r in rows if r["device"] == leaf and r["peer_device"] and not r["peer_asn"]}  # the NIC (plane) its GPUs use
    other = next(r for r in rows if r["role"] == "gpu" and r["interface"] not in nics)  # a NIC of the other plane
    import ipaddress

    subnet = str(ipaddress.ip_interface(other["address"]).network)
    via = uplink(builds["planes"], leaf)["peer_address"].split("/")[0]
    b = planted(builds["planes"], tmp_path, leaf, lambda t: t.replace("router bgp", f"ip route {subnet} {via}\n!\nrouter bgp", 1))
    res, r = emulate(b, ARCH, "--timeout", "30")
    assert res.returncode == 1 and not r["ok"], res.stdout + res.stderr
    assert any(f.startswith(f"planes apart: {leaf} routes to {other['device']} {other['interface']} of another plane") for f in r["failures"]), r["failures"]
    assert r["culprits"] == [leaf], r["causes"]
    assert r["daemons"]["staticd"] == 1
