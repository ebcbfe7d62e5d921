"""The other networks in the installers' pull sheets, the rack elevations and the storage fabric's ibnetdiscover file.

Each test reads what the real ``topogen build`` wrote for the dgx-h100-superpod preset (its
storage fabric is InfiniBand: QM9700) and for the converged era-2-8-9-400 preset (Ethernet),
and checks it against ``networks-cabling.csv`` and the model; the storage file is loaded by
``ibsim``, routed by OpenSM's ftree and compared by ``topogen diff``.
"""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
import subprocess
from collections import Counter
from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner
from ibsim_fabric import MISSING, SKIP_REASON, simulated

from topogen.cli import main
from topogen.exports.infiniband import opensm_files as osm
from test_networks_exports import build as build_with
from test_opensm import _opensm

ARCHES = ("rail-optimized", "rail-only")
FORMATS = "cabling,pull-sheets,diagrams,ibnetdiscover,opensm"


build = partial(build_with, formats=FORMATS)  # test_networks_exports' build, with these files by default


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def superpod(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("netpull") / "sp", "dgx-h100-superpod")


@pytest.fixture(scope="module")
def converged(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("netpull") / "era", "era-2-8-9-400")


# --- 1. pull sheets -----------------------------------------------------------------------


@pytest.mark.parametrize("which", ["superpod", "converged"])
@pytest.mark.parametrize("arch", ARCHES)
def test_pull_sheets_hold_every_network_cable_once(request, which, arch):
    """Every cable of networks-cabling.csv is on one sheet, with its network, ends, rack, U, length and label as there."""
    d = request.getfixturevalue(which) / arch
    if not d.is_dir():
        assert which == "converged" and arch == "rail-only"  # the converged preset builds rail-optimized alone
        return
    plan = {r["cable"]: r for r in rows(d / "networks-cabling.csv")}
    sheet = rows(d / "networks-pull-sheets.csv")
    assert sorted(int(r["cable"]) for r in sheet) == list(range(1, len(plan) + 1))
    for r in sheet:
        p = plan[r["cable"]]
        for col in ("network", "role", "a_device", "a_port", "z_device", "z_port", "a_rack", "a_u", "z_rack", "z_u", "length_m", "label"):
            assert r[col] == p[col], (col, r, p)
        ends = sorted((x or "external" for x in (r["a_rack"], r["z_rack"])), key=lambda x: (x == "external", x))
        assert r["sheet"] == f"{ends[0]}_{ends[1]}"
        assert (r["length_m"] == "") == ("external" in ends)  # only cables to devices outside the plan have no length
    assert Counter(r["network"] for r in sheet) == Counter(p["network"] for p in plan.values())
    assert len({r["label"] for r in sheet}) == len(sheet)


@pytest.mark.parametrize("arch", ARCHES)
def test_pull_sheets_are_ordered_and_split_by_rack_pair(superpod, arch):
    """Sheets in name order, then by length and label; the per-pair files are the grouped file cut at its sheets."""
    d = superpod / arch
    sheet = rows(d / "networks-pull-sheets.csv")
    key = [(r["sheet"], r["length_m"] == "", float(r["length_m"] or 0), r["label"]) for r in sheet]
    assert key == sorted(key)
    files = sorted((d / "networks-pull-sheets").glob("row-*/*.csv"), key=lambda f: f.stem)
    assert [f.stem for f in files] == sorted({r["sheet"] for r in sheet})
    index = rows(d / "networks-pull-sheets" / "index.csv")
    assert [r["sheet"] for r in index] == [f.stem for f in files] and [r["file"] for r in index] == [f"{f.parent.name}/{f.name}" for f in files]
    assert [r for f in files for r in rows(f)] == sheet
    assert {"storage", "inband", "oob"} == {r["network"] for r in sheet}
    mgmt = [r for r in sheet if r["network"] == "storage" and r["role"] == "leaf-spine"]
    assert mgmt and all(r["a_rack"] and r["z_rack"] and float(r["length_m"]) > 0 for r in mgmt)


def test_compute_pull_sheets_unchanged_and_none_without_networks(superpod, tmp_path):
    """The compute fabric's sheets are the same bytes with or without the networks; a spec without them gets no networks sheets, no storage file."""
    plain = build(tmp_path / "plain", "--gpus", "1024", "--hb-domain", "8", "--radix", "64")
    for arch in ARCHES:
        assert not (plain / arch / "networks-pull-sheets.csv").exists()
        assert not (plain / arch / "ibnetdiscover" / "storage.topo").exists()
        assert not (plain / arch / "opensm" / "storage").exists()
        assert not any(p.stem.startswith("management") for p in (plain / arch / "racks").glob("*.dot"))
    spec = yaml_without_networks(superpod, tmp_path)
    bare = build(tmp_path / "bare", str(spec), formats="pull-sheets")
    for arch in ARCHES:
        assert (bare / arch / "pull-sheets.csv").read_bytes() == (superpod / arch / "pull-sheets.csv").read_bytes()
        assert not (bare / arch / "networks-pull-sheets.csv").exists()


def yaml_without_networks(superpod: Path, tmp_path: Path) -> Path:
    """The superpod preset's spec without its networks section."""
    import yaml  # only this test reads a spec file back

    spec = yaml.safe_load((Path(__file__).parent.parent / "templates" / "clusters" / "dgx-h100-superpod.yaml").read_text())
    spec.pop("networks")
    p = tmp_path / "bare.yaml"
    p.write_text(yaml.safe_dump(spec))
    return p


# --- 2. rack elevations -------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHES)
def test_elevations_show_the_other_networks(superpod, arch):
    """Management racks (switches; servers and fabric managers) get elevations; compute racks show their OOB switch and PDUs."""
    d = superpod / arch / "racks"
    mgmt = (d / "management.dot").read_text()
    assert "stor-leaf-su00-p0 (storage leaf, 64 ports)" in mgmt and "(storage spine, 64 ports)" in mgmt
    servers = (d / "management-servers.dot").read_text()
    assert "mgmt-00 (management server)" in servers and "ufm-compute-0 (fabric manager)" in servers and "ufm-storage-0 (fabric manager)" in servers
    compute = (d / "compute.dot").read_text()
    assert re.search(r"oob-su\d+-\d+ \(oob access, \d+ ports\)", compute)
    assert re.search(r"zero-U, at the side: pdu-c\d+-0, pdu-c\d+-1, pdu-c\d+-2", compute)
    assert "PDUs" in (d / "leaf.dot").read_text()  # the compute layout's switch racks have PDUs too
    if shutil.which("dot"):
        for stem in ("management", "management-servers", "compute"):
            svg = html.unescape((d / f"{stem}.svg").read_text())
            assert "<svg" in svg and ("stor-leaf" in svg or "mgmt-00" in svg or "oob-su" in svg)
            assert (d / f"{stem}.png").stat().st_size > 1000


def test_every_management_rack_device_is_in_some_elevation_kind(superpod):
    """Every storage and in-band switch stands in a management rack the NetBox export names; the elevation draws the fullest one."""
    devices = rows(superpod / "rail-optimized" / "networks-cabling.csv")
    sw = {r["z_device"]: r["z_rack"] for r in devices if r["z_device"].startswith(("stor-", "inb-"))}
    racks = Counter(sw.values())
    text = (superpod / "rail-optimized" / "racks" / "management.dot").read_text()
    drawn = re.search(r"management rack (\S+) ", text).group(1)
    assert racks[drawn] == max(racks.values())
    assert all(name in text for name, rack in sw.items() if rack == drawn)
    pages = "".join(p.read_text() for p in (superpod / "rail-optimized" / "racks").glob("row-*.html"))
    assert all(html.escape(name) in pages for name in sw)  # every storage and in-band switch, in every management rack, on its row's page
    assert "(management-servers)" in (superpod / "rail-optimized" / "racks" / "index.html").read_text()


# --- 3. the storage fabric's ibnetdiscover file -------------------------------------------


def _topo_cables(path: Path) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    from topogen.asbuilt import ibnetdiscover

    found = ibnetdiscover.read([path])
    return {tuple(sorted(((c.a.device, c.a.port), (c.z.device, c.z.port)))) for c in found.cables}


@pytest.mark.parametrize("arch", ARCHES)
def test_storage_topo_is_the_storage_network(superpod, arch):
    """storage.topo holds exactly the storage cables of networks-cabling.csv; its GUIDs are not the compute fabric's."""
    d = superpod / arch
    plan = {tuple(sorted(((r["a_device"], r["a_port"]), (r["z_device"], r["z_port"])))) for r in rows(d / "networks-cabling.csv") if r["network"] == "storage"}
    assert _topo_cables(d / "ibnetdiscover" / "storage.topo") == plan and len(plan) == 548
    guids = lambda p: set(re.findall(r"(?:switch|ca)guid=0x([0-9a-f]+)", p.read_text()))
    storage = guids(d / "ibnetdiscover" / "storage.topo")
    compute = set().union(*(guids(p) for p in (d / "ibnetdiscover").glob("*.topo") if p.stem != "storage"))
    assert len(storage) == 16 + 254 + 48 + 2 + 4 and compute and not storage & compute


def test_storage_topo_is_deterministic(superpod, tmp_path):
    again = build(tmp_path / "again", "dgx-h100-superpod", formats="ibnetdiscover,opensm")
    for arch in ARCHES:
        for rel in ("ibnetdiscover/storage.topo", "opensm/storage/opensm.conf", "opensm/storage/root_guids.conf", "opensm/storage/cn_guids.conf", "opensm/storage/io_guids.conf"):
            assert (again / arch / rel).read_bytes() == (superpod / arch / rel).read_bytes()


def test_converged_ethernet_storage_gets_no_topo(converged):
    assert (converged / "rail-optimized" / "networks-pull-sheets.csv").is_file()
    for arch in ARCHES:
        assert not (converged / arch / "ibnetdiscover" / "storage.topo").exists()
        assert not (converged / arch / "opensm" / "storage").exists()


def _diff(plan: Path, *found: Path) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["diff", str(plan), *map(str, found), "--json"], catch_exceptions=False)
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.output)


def test_diff_of_the_plan_against_storage_topo_is_identical(superpod):
    code, res = _diff(superpod / "rail-optimized", superpod / "rail-optimized" / "ibnetdiscover" / "storage.topo")
    assert code == 0, res["deviations"][:3]
    assert res["identical"] == 548
    assert "compared only the storage network:" in " ".join(res["notes"])


def test_diff_finds_a_moved_storage_cable(superpod, tmp_path):
    """Two nodes' storage cables swapped on their leaf: the diff names both cables, nothing else."""
    text = (superpod / "rail-optimized" / "ibnetdiscover" / "storage.topo").read_text()
    leaf = re.search(r'Switch\t\d+ ("S-[0-9a-f]+")\t\t# "stor-leaf-su00-p0"', text).group(1)
    lines = text.split("\n")
    head = next(i for i, x in enumerate(lines) if f"Switch\t64 {leaf}" in x)
    p1, p2 = head + 1, head + 2
    assert lines[p1].startswith("[1]\t") and lines[p2].startswith("[2]\t")
    lines[p1], lines[p2] = "[1]" + lines[p2][3:], "[2]" + lines[p1][3:]
    for i, x in enumerate(lines):  # the adapters' side of the same two cables
        if x.endswith('"stor-leaf-su00-p0" lid 1 4xNDR') and f"{leaf}[1]" in x:
            lines[i] = x.replace(f"{leaf}[1]", f"{leaf}[2]")
        elif x.endswith('"stor-leaf-su00-p0" lid 1 4xNDR') and f"{leaf}[2]" in x:
            lines[i] = x.replace(f"{leaf}[2]", f"{leaf}[1]")
    moved = tmp_path / "moved.topo"
    moved.write_text("\n".join(lines))
    code, res = _diff(superpod / "rail-optimized", moved)
    assert code == 1
    assert res["identical"] == 546
    ends = {e for d in res["deviations"] for side in ("planned", "found") for c in d[side] for e in (c["a"], c["z"])}
    assert {"hb000:stor0", "hb001:stor0", "stor-leaf-su00-p0:p1", "stor-leaf-su00-p0:p2"} <= ends


@pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
@pytest.mark.parametrize("arch", ARCHES)
def test_ibsim_loads_and_opensm_ftree_routes_the_storage_fabric(superpod, arch, tmp_path):
    """ibsim simulates storage.topo; OpenSM with the storage folder's files ranks its spines as roots and routes it with ftree."""
    d = superpod / arch
    folder = d / "opensm" / "storage"
    roots = [int(x, 16) for x in (folder / "root_guids.conf").read_text().split()]
    cns = len((folder / "cn_guids.conf").read_text().split())
    assert len(roots) == 4 and cns == 254
    work = tmp_path / "run"
    work.mkdir()
    with simulated(d / "ibnetdiscover" / "storage.topo", work) as env:
        log = _opensm(env, work, folder)
    assert not [line for line in log.splitlines() if " 0x01 -> " in line]
    assert f"Ranked {len(roots)} valid root switches" in log
    assert f"({cns} of them CNs)" in log
    assert "ftree tables configured on all switches" in log
    assert osm.ETC  # the folder's paths were rewritten from it
