"""OpenSM's files per InfiniBand subnet: partitions (a P_Key per rail-only rail), ftree roots and compute nodes.

Unit tests read the files against the ibnetdiscover export of the same build,
parsed here with regular expressions (not topogen's reader): every GPU port
GUID of a subnet's ``.topo`` file is a compute node and a member of exactly its
rail's partition (rail-only), the roots are the top tier's nodes (a
director's spine ASICs), over a grid of shapes of both architectures.

Integration tests run the real tools: ``ibsim`` simulates each subnet file,
``opensm -o -F opensm.conf`` (the generated options, with the files' folder in
place of ``/etc/opensm``) must log no error, rank exactly the named roots and
count every GPU port as a compute node, configure ftree (minhop on a
one-switch subnet) and report each GPU port's P_Key; then ``smpquery pkeys``
reads every GPU port's table back: rail-only holds the rail's key (full) and
the default key (limited) only; rail-optimized only the full default key.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ibsim_fabric import MISSING, SKIP_REASON, WHERE, discover, simulated

from topogen import pipeline
from topogen.exports.infiniband import ibnetdiscover as ib
from topogen.exports.infiniband import opensm as exporter
from topogen.exports.infiniband import opensm_files as osm
from topogen.spec.cluster import build_spec

GRID = [
    # gpus, hb_domain, radix, extra spec keys
    (64, 8, 16, {}),  # demo: 2-tier rail-optimized; rail-only rails two per switch
    (96, 8, 16, {"planes": 2}),  # two planes: a subnet per plane (per plane and rail group)
    (128, 8, 8, {"rail_packing": "dedicated"}),  # 3-tier rail-optimized, 2-tier rails
    (256, 8, 16, {}),  # rail-only rails of 32 GPUs: each its own 2-tier subnet
    (288, 72, 16, {}),  # NVL72-like domains: 72 rails of 4 GPUs, four to a switch
    (64, 8, 16, {"homing": "dual"}),  # two CA ports per GPU on a leaf pair
    (512, 8, [32, 288], {}),  # 288-port director spines: roots are their spine ASICs
]


def _build(gpus, hb, radix, extra=None, arch="both"):
    spec = build_spec({"name": "osm", "gpus": gpus, "hb_domain": hb, "radix": radix, "arch": arch, **(extra or {})})
    return pipeline.build(spec)


def _topo(path: Path) -> dict:
    """Nodes of an ibnetdiscover file: guid -> (kind, name, [CA port GUIDs])."""
    out: dict[int, tuple[str, str, list[int]]] = {}
    cur = None
    for line in path.read_text().splitlines():
        m = re.match(r'^(Switch|Ca)\t\d+ "[SH]-([0-9a-f]{16})"\t\t# "([^"]+)"', line)
        if m:
            cur = out[int(m.group(2), 16)] = (m.group(1), m.group(3), [])
            continue
        m = re.match(r"^\[\d+\]\(([0-9a-f]+)\) ", line)
        if m:
            cur[2].append(int(m.group(1), 16))
    return out


def _guids(path: Path) -> list[int]:
    return [int(x, 16) for x in path.read_text().split()]


def _partitions(path: Path) -> dict[str, tuple[int, dict[int, str]]]:
    """name -> (P_Key, {port GUID: membership}) of a partitions.conf (ALL/SELF/ALL_SWITCHES kept as text keys)."""
    text = re.sub(r"#[^\n]*", "", path.read_text())
    out = {}
    for stmt in filter(str.strip, text.split(";")):
        head, members = stmt.split(":", 1)
        name, key = re.match(r"\s*(\w+)=0x([0-9a-f]{4})", head).groups()
        mem = {}
        for m in filter(str.strip, members.split(",")):
            who, how = m.strip().split("=")
            mem[int(who, 16) if who.startswith("0x") else who] = how
        out[name] = (int(key, 16), mem)
    return out


@pytest.fixture(scope="module", params=GRID, ids=lambda p: "n{}-k{}-r{}".format(*p[:3]).replace(", ", "-") + "".join(f"-{v}" for v in p[3].values()))
def exported(request, tmp_path_factory):
    ctx = _build(*request.param)
    out = tmp_path_factory.mktemp("osm")
    ib.export(ctx, out)
    exporter.export(ctx, out)
    return ctx, out


def test_a_folder_per_subnet_with_its_files(exported):
    ctx, out = exported
    for arch, fabric in ctx.fabrics.items():
        subs = ib.subnets(fabric)
        assert sorted(p.name for p in (out / arch / "opensm").iterdir()) == sorted(s.name for s in subs)
        for sub in subs:
            files = sorted(p.name for p in (out / arch / "opensm" / sub.name).iterdir())
            fat = osm.subnet_guids(fabric, sub).fat_tree
            assert files == sorted(osm.FILES if fat else ("opensm.conf", "partitions.conf"))
            conf = (out / arch / "opensm" / sub.name / "opensm.conf").read_text()
            assert ("routing_engine ftree\n" in conf) == fat and ("routing_engine minhop\n" in conf) == (not fat)


def test_compute_nodes_are_the_gpu_ports_of_the_subnet_file(exported):
    ctx, out = exported
    for arch, fabric in ctx.fabrics.items():
        for sub in ib.subnets(fabric):
            nodes = _topo(out / arch / "ibnetdiscover" / f"{sub.name}.topo")
            ports = sorted(g for kind, _, gs in nodes.values() if kind == "Ca" for g in gs)
            sg = osm.subnet_guids(fabric, sub)
            assert sorted(sg.port_guids.tolist()) == ports
            assert len(ports) == int((fabric.links.a_dev[sub.links] < fabric.gpus).sum())
            if sg.fat_tree:
                cn = _guids(out / arch / "opensm" / sub.name / "cn_guids.conf")
                assert cn == sg.port_guids.tolist() and sorted(cn) == ports and len(set(cn)) == len(cn)


def test_roots_are_the_top_tier(exported):
    """Roots: the top tier's switches of the file, or the spine ASICs of its directors; every other switch is below them."""
    ctx, out = exported
    for arch, fabric in ctx.fabrics.items():
        n = fabric.gpus
        top = fabric.tiers
        by_name = {s.name: s for s in fabric.switches}
        for sub in ib.subnets(fabric):
            if not osm.subnet_guids(fabric, sub).fat_tree:
                continue
            nodes = _topo(out / arch / "ibnetdiscover" / f"{sub.name}.topo")
            expect = set()
            sub_top = max(fabric.switches[d - n].tier for d in sub.switch_ids.tolist())
            for g, (kind, name, _) in nodes.items():
                if kind != "Switch":
                    continue
                chassis, _, asic = name.partition("/")
                if by_name[chassis].tier == sub_top and (not asic or asic.startswith("S")):
                    expect.add(g)
            roots = _guids(out / arch / "opensm" / sub.name / "root_guids.conf")
            assert set(roots) == expect and len(roots) == len(expect) > 0
            assert sub_top <= top


def test_rail_only_partition_per_rail(exported):
    """Rail-only: every GPU port a full member of its own rail's partition only, keys 0x1000 + rail; rail-optimized: the default partition, full."""
    ctx, out = exported
    k = ctx.spec.hb_domain
    for arch, fabric in ctx.fabrics.items():
        for sub in ib.subnets(fabric):
            parts = _partitions(out / arch / "opensm" / sub.name / "partitions.conf")
            sg = osm.subnet_guids(fabric, sub)
            if arch == "rail-optimized":
                assert parts == {"Default": (0x7FFF, {"ALL": "full", "SELF": "full"})}
                continue
            assert parts.pop("Default") == (0x7FFF, {"ALL": "limited", "ALL_SWITCHES": "full", "SELF": "full"})
            rails = sorted({r for d in sub.switch_ids.tolist() for r in fabric.switches[d - fabric.gpus].rails})
            assert sorted(parts) == sorted(f"rail{r}" for r in rails)
            seen: dict[int, int] = {}
            for name, (key, members) in parts.items():
                r = int(name[4:])
                assert key == osm.rail_pkey(r) == 0x1000 + r
                assert set(members.values()) == {"full"}
                for g in members:
                    assert g not in seen, f"port {g:#x} in two partitions"
                    seen[g] = r
            assert sorted(seen) == sorted(sg.port_guids.tolist())
            for g, r in seen.items():  # the rail of a port is its GPU's rank in the HB domain
                assert ((g - ib.GUID_BASE) >> 4) % k == r


def test_same_spec_same_bytes(tmp_path):
    a = exporter.export(_build(64, 8, 16), tmp_path / "a")
    b = exporter.export(_build(64, 8, 16), tmp_path / "b")
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b") for p in b]
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_build_writes_opensm_format(tmp_path):
    ctx = _build(64, 8, 16)
    written = pipeline.write_outputs(ctx, tmp_path / "out", ["opensm"])
    rel = sorted(p.relative_to(tmp_path / "out").as_posix() for p in written)
    assert "rail-only/opensm/rail0-1/partitions.conf" in rel and "rail-optimized/opensm/fabric/root_guids.conf" in rel


# --- the real tools ---------------------------------------------------------------------------

SAMPLE = 12
SMPQUERY = shutil.which("smpquery", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
needs_tools = pytest.mark.skipif(bool(MISSING) or SMPQUERY is None, reason=SKIP_REASON + " (and smpquery from infiniband-diags)")

SIM_CASES = [
    # gpus, hb, radix, arch, extra
    (64, 8, 16, "rail-optimized", {}),  # 2 tiers, 12 switches
    (128, 8, 8, "rail-optimized", {}),  # 3 tiers, 80 switches
    (64, 8, 16, "rail-only", {}),  # rails sharing a switch: two partitions on one switch
    (64, 16, 16, "rail-only", {}),  # 16 rails of 4 GPUs: four partitions per switch
    (256, 8, 16, "rail-only", {}),  # rails of 32 GPUs, each a 2-tier fat tree
    (64, 8, 16, "rail-optimized", {"homing": "dual"}),  # two CA ports per GPU on a leaf pair
    (512, 8, [32, 288], "rail-optimized", {}),  # director spines: roots are spine ASICs
]


def _opensm(env: dict, work: Path, folder: Path) -> str:
    """Run ``opensm -o -F`` with the folder's opensm.conf (its files in place of /etc/opensm); return the log."""
    conf = work / "opensm.conf"
    conf.write_text((folder / "opensm.conf").read_text().replace(osm.ETC + "/", f"{folder}/"))
    log = work / "opensm.log"
    subprocess.run([WHERE["ibsim-run"], WHERE["opensm"], "-o", "-F", str(conf), "-s", "0", "-D", "0x0f", "-f", str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True, timeout=600)
    return log.read_text(errors="replace")


def _ca_lids(topo: Path) -> dict[int, tuple[int, int]]:
    """Port GUID -> (LID, port number) of every CA port, from ibnetdiscover output of the routed simulation."""
    out = {}
    for m in re.finditer(r"^\[(\d+)\]\(([0-9a-f]+)\) \t\S+\t\t# lid (\d+) ", topo.read_text(), re.M):
        out[int(m.group(2), 16)] = (int(m.group(3)), int(m.group(1)))
    return out


def _pkeys(env: dict, lid: int, port: int) -> set[int]:
    res = subprocess.run([WHERE["ibsim-run"], SMPQUERY, "pkeys", str(lid), str(port)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, check=True, timeout=60, text=True)
    keys = {int(x, 16) for line in res.stdout.splitlines() if re.match(r"^\s*\d+:", line) for x in line.split(":", 1)[1].split()}
    return keys - {0}


@needs_tools
@pytest.mark.parametrize("case", SIM_CASES, ids=lambda c: "n{}-k{}-r{}-{}".format(*c[:4]).replace(", ", "-").replace("[", "").replace("]", "") + "".join(f"-{v}" for v in c[4].values()))
def test_opensm_loads_routes_and_partitions(case, tmp_path):
    gpus, hb, radix, arch, extra = case
    ctx = _build(gpus, hb, radix, extra, arch=arch)
    fabric = ctx.fabrics[arch]
    ib.export(ctx, tmp_path)
    exporter.export(ctx, tmp_path)
    for sub in ib.subnets(fabric):
        sg = osm.subnet_guids(fabric, sub)
        folder = tmp_path / arch / "opensm" / sub.name
        work = tmp_path / f"run-{sub.name}"
        work.mkdir()
        with simulated(tmp_path / arch / "ibnetdiscover" / f"{sub.name}.topo", work) as env:
            log = _opensm(env, work, folder)
            errors = [line for line in log.splitlines() if " 0x01 -> " in line]
            assert not errors, errors[:5]
            if sg.fat_tree:
                roots = _guids(folder / "root_guids.conf")
                assert f"Ranked {len(roots)} valid root switches" in log
                logged = {int(g, 16) for g in re.findall(r"fabric_dump_general_info:\s+GUID: (0x[0-9a-f]+), LID: \d+, Index 0\.", log)}  # rank 0
                assert logged == set(roots)
                ports = len(sg.port_guids)
                assert f"CA ports ({ports} of them CNs)" in log
                assert "ftree tables configured on all switches" in log
            else:
                assert "minhop tables configured on all switches" in log
            # OpenSM's report of the keys it set, per GPU port (node GUID, port)
            told: dict[tuple[int, int], set[int]] = {}
            for key, node, port in re.findall(r"pkey (0x[0-9a-f]{4}) was (?:inserted|updated) for node (0x[0-9a-f]+) port (\d+)", log):
                told.setdefault((int(node, 16), int(port)), set()).add(int(key, 16))
            lids = _ca_lids(discover(env, work / "routed.topo"))
            for i, (g, r) in enumerate(zip(sg.port_guids.tolist(), sg.port_rails.tolist())):
                want = {osm.FULL_BIT | osm.rail_pkey(r), osm.DEFAULT_PKEY} if arch == "rail-only" else {0xFFFF}
                if arch == "rail-only":
                    assert osm.FULL_BIT | osm.rail_pkey(r) in told[(g & ~0xF, g & 0xF)], f"OpenSM did not report rail {r}'s key on port {g:#x}"
                if i % max(1, len(sg.port_guids) // SAMPLE) and i != len(sg.port_guids) - 1:
                    continue  # the table read back from about SAMPLE ports per subnet (a process each); OpenSM's report covers all
                lid, port = lids[g]
                assert _pkeys(env, lid, port) == want, f"port {g:#x} (rail {r})"
