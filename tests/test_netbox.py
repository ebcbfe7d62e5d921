"""NetBox files: catalog types, the split into parts NetBox takes, and the import docs.

Whether NetBox accepts them is asked of NetBox itself: tests/test_netbox_live.py imports
builds into a real NetBox 4.7 (bulk-import page and REST API) and reads every row back.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen.cli import main
from topogen.exports.netbox import dcim as netbox

UPLOAD_LIMIT = 2.5 * 1024 * 1024  # DATA_UPLOAD_MAX_MEMORY_SIZE: pasted text above it is refused (HTTP 400)
SHARED_KINDS = {"manufacturer": "manufacturers.csv", "device-role": "device-roles.csv", "rack-role": "rack-roles.csv", "device-type": "device-types.csv"}

def read(path: Path) -> tuple[list[str], list[dict]]:
    with open(path, encoding="utf-8", newline="") as fh:
        r = csv.DictReader(fh)
        return list(r.fieldnames or []), list(r)


def parts(d: Path, stem: str) -> list[Path]:
    """``<stem>.csv`` or its numbered parts, in import order."""
    one = d / f"{stem}.csv"
    return [one] if one.exists() else sorted(d.glob(f"{stem}-[0-9][0-9][0-9].csv"))


def build(tmp: Path, name: str, *args: str) -> Path:
    out = tmp / name
    res = CliRunner().invoke(main, ["build", "--name", name, *args, "--out", str(out), "--formats", "netbox"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def clusters(tmp_path_factory) -> list[Path]:
    """Two clusters whose host names overlap (hb00..), both architectures, one priced by a real catalog."""
    tmp = tmp_path_factory.mktemp("netbox")
    return [
        build(tmp, "alpha", "--gpus", "64", "--hb-domain", "8", "--radix", "16"),
        build(tmp, "beta", "--gpus", "512", "--hb-domain", "8", "--radix", "64", "--catalog", "ndr-400g", "--planes", "2"),
    ]


def shared_files(out: Path) -> list[tuple[str, Path]]:
    """``(kind, path)`` of the shared objects (``netbox/shared/<n>-<kind>-<slug>.csv``), in import (name) order."""
    out_files = []
    for p in sorted((out / "netbox" / "shared").glob("*.csv")):
        kind = re.match(r"^\d-([a-z]+-[a-z]+|manufacturer)-", p.name).group(1)
        out_files.append((SHARED_KINDS[kind], p))
    return out_files


def all_files(out: Path) -> list[tuple[str, Path]]:
    """``(kind, path)`` of every NetBox file of a build, in the README's import order."""
    files = [("sites.csv", out / "netbox" / "sites.csv"), *shared_files(out)]
    for arch in ("rail-optimized", "rail-only"):
        if (out / arch / "netbox" / "racks.csv").exists():
            files.append(("racks", out / arch / "netbox" / "racks.csv"))
    for stem in ("devices", "interfaces", "cables"):
        for arch in ("rail-optimized", "rail-only"):
            files += [(stem, p) for p in parts(out / arch / "netbox", stem)]
    return files


def test_catalog_gives_interface_types_and_manufacturers(clusters):
    """ndr-400g names NVIDIA and InfiniBand NDR: no ``other``/``generic`` where the catalog knows better."""
    beta = clusters[1]
    types = [r for kind, p in shared_files(beta) if kind == "device-types.csv" for r in read(p)[1]]
    assert {r["manufacturer"] for r in types if r["model"] == "MQM9700-NS2F"} == {"NVIDIA"}
    assert "NVIDIA" in {r["name"] for kind, p in shared_files(beta) if kind == "manufacturers.csv" for r in read(p)[1]}
    for arch in ("rail-optimized", "rail-only"):
        rows = [r for p in parts(beta / arch / "netbox", "interfaces") for r in read(p)[1]]
        assert {r["type"] for r in rows} == {"infiniband-ndr"}
        devices = read(beta / arch / "netbox" / "devices.csv")[1]
        assert {r["manufacturer"] for r in devices if r["role"] != "gpu-node"} == {"NVIDIA"}


def test_files_stay_below_the_upload_limit(tmp_path):
    """At 16,384 GPUs interfaces.csv would be ~5 MB: it comes in parts below 2.5 MiB, each with the header, rows intact."""
    out = build(tmp_path, "big", "--gpus", "16384", "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized")
    d = out / "rail-optimized" / "netbox"
    ifaces = parts(d, "interfaces")
    assert len(ifaces) >= 2 and not (d / "interfaces.csv").exists()
    for kind, p in all_files(out):
        assert p.stat().st_size <= netbox.MAX_PART_BYTES < UPLOAD_LIMIT, p
    rows = [r for p in ifaces for r in read(p)[1]]
    assert len(rows) == 16384 + 1280 * 64  # NIC ports + switch ports, each once
    assert len({(r["device"], r["name"]) for r in rows}) == len(rows)


def test_docs_document_the_import(clusters):
    readme = (Path(__file__).parents[1] / "docs" / "exports" / "netbox.md").read_text()
    for needle in ("sites.csv", "netbox/shared/", "already exists", "racks.csv", "RQ_DEFAULT_TIMEOUT", "topogen netbox push", "--dry-run", "2.5 MiB"):
        assert needle in readme, needle


def test_each_switch_tier_has_its_own_device_type(tmp_path):
    """A per-tier radix puts 288-port chassis above 32-port leaves: NetBox types each tier as what the BOM buys."""
    out = build(tmp_path, "chassis", "--gpus", "4096", "--hb-domain", "8", "--radix", "32,288", "--catalog", "chassis-400g", "--arch", "rail-optimized")
    types = [r for kind, p in shared_files(out) if kind == "device-types.csv" for r in read(p)[1]]
    models = {t["model"] for t in types}
    by_role: dict[str, set[str]] = {}
    for p in parts(out / "rail-optimized" / "netbox", "devices"):
        for row in read(p)[1]:
            by_role.setdefault(row["role"], set()).add(row["device_type"])
    assert by_role["leaf"] == {"FIXED-32X400G"}
    assert by_role["spine"] == {"CHASSIS-288X400G"}
    assert set().union(*by_role.values()) <= models  # every device type is importable first


def test_parts_import_within_the_job_timeout(tmp_path):
    """Every file, IPAM too, in parts NetBox saves within the job budget at its measured seconds per row, and below the paste limit."""
    out = tmp_path / "big"
    res = CliRunner().invoke(main, ["build", "--name", "big", "--gpus", "16384", "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized", "--out", str(out), "--formats", "netbox,ipam", "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    stems: dict[tuple[Path, str], list[int]] = {}
    for p in sorted(out.rglob("*.csv")):
        if p.parent.name == "shared":
            continue
        assert p.stat().st_size <= netbox.MAX_PART_BYTES, p
        stem = re.sub(r"-\d{3}$", "", p.stem)
        stems.setdefault((p.parent, stem), []).append(len(read(p)[1]))
    for (d, stem), sizes in stems.items():
        limit = netbox.part_rows(stem)
        assert limit * netbox.ROW_S[stem.removeprefix("networks-")] <= netbox.JOB_BUDGET_S < 300
        assert max(sizes) <= limit and all(s == limit for s in sizes[:-1]), (d, stem, sizes)  # full parts, then the rest
    cables = stems[(out / "rail-optimized" / "netbox", "cables")]
    assert len(cables) == -(-sum(cables) // netbox.part_rows("cables")) >= 2
    assert len(stems[(out / "rail-optimized" / "netbox" / "ipam", "ip-addresses")]) >= 2


@pytest.mark.parametrize("bonds", [1, 3, 300])
def test_push_creates_bonds_in_a_wave_before_their_ports(bonds):
    """A port naming a bond this push creates waits for the bond's wave (NetBox needs the bond's id),
    wherever the bond falls in the files; bonds of bonds wait one wave more."""
    from topogen.exports.netbox import push as nbpush

    rows = []
    for b in range(bonds):
        rows += [{"_key": (f"n{b}", f"p{i}"), "lag": ("ref", "interface", (f"n{b}", "bond0"))} for i in range(2)]
        rows += [{"_key": (f"n{b}", "bond0"), "lag": None}, {"_key": (f"n{b}", "eth9"), "lag": 7}]
    rows.append({"_key": ("n0", "bond1"), "lag": ("ref", "interface", ("n0", "p0"))})
    waves = nbpush.waves("interface", rows)
    assert [len(w) for w in waves] == [2 * bonds, 2 * bonds, 1]
    wave_of = {o["_key"]: i for i, w in enumerate(waves) for o in w}
    assert all(wave_of[o["lag"][2]] < wave_of[o["_key"]] for o in rows if isinstance(o["lag"], tuple))
    assert sum(waves, []) == [o for o in rows if o["lag"] is None or isinstance(o["lag"], int)] + [o for o in rows if isinstance(o["lag"], tuple) and o["_key"][1] != "bond1"] + rows[-1:]
    with pytest.raises(nbpush.PushError, match="neither in NetBox nor before it"):
        nbpush.waves("interface", [{"_key": ("a", "p0"), "lag": ("ref", "interface", ("a", "bond9"))}])
    assert nbpush.waves("device", [{"_key": ("a",)}]) == [[{"_key": ("a",)}]]


@pytest.mark.parametrize(("ports", "devices"), [(1, 1), (8, 100), (64, 9), (300, 2), (7, 1000)])
def test_parallel_interface_batches_never_share_a_device(ports, devices):
    """Requests sent at once hold ports of different devices (each port updates its device's counter:
    two requests on one device deadlock in PostgreSQL); every row is sent once, in file order per device."""
    from topogen.exports.netbox import push as nbpush

    rows = [{"_key": (f"d{d}", f"p{i}"), "device": ("ref", "device", (f"d{d}",)) if d % 2 else d} for i in range(ports) for d in range(devices)]
    got = nbpush.batches_of(nbpush.KINDS["interface"], rows)
    owners = [{repr(o["device"]) for o in b} for b in got]
    assert sum(len(o) for o in owners) == devices  # each device in one request
    assert all(len(b) <= nbpush.BATCH or len(o) == 1 for b, o in zip(got, owners))
    assert sorted(map(id, sum(got, []))) == sorted(map(id, rows))
    assert [o for b in got for o in b if o["device"] == 0] == [o for o in rows if o["device"] == 0]
    cables = nbpush.batches_of(nbpush.KINDS["cable"], rows)
    assert [len(b) for b in cables] == [min(nbpush.BATCH, len(rows) - i) for i in range(0, len(rows), nbpush.BATCH)]
