"""The InfiniBand storage fabric under the real OpenSM: ftree with compute nodes and I/O nodes, every port reaching every other.

``topogen build --formats ibnetdiscover,opensm`` writes ``storage.topo`` and
``opensm/storage/``: the nodes' storage ports are ftree's compute nodes
(``cn_guids.conf``), every other port (storage targets, management servers,
fabric managers) an I/O node (``io_guids.conf``, ``max_reverse_hops 0``).
The files are read here with regular expressions, not topogen's readers.

Over a grid of storage designs (two tiers with per-SU or paired target leaves,
three tiers with pods, no I/O nodes at all), ``ibsim`` simulates the file and
``opensm -o -F opensm.conf`` routes it; the log must show ftree itself (no
fallback), the named roots, the CN and I/O counts. Then OpenSM's own
forwarding tables (``opensm-lfts.dump``, read by
:func:`topogen.traffic.lft.read_lfts`, and the ``guid2lid`` cache) are followed
hop by hop from every storage port to every other: each pair arrives, on a path
that goes up and then down (no reverse hop), no longer than the Clos needs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from ibsim_fabric import MISSING, SKIP_REASON, WHERE, simulated

from topogen.cli import main
from topogen.exports.infiniband import opensm_files as osm
from topogen.exports.infiniband import storage as storage_ib
from topogen.traffic import lft

PRESET = Path(__file__).parent.parent / "templates" / "clusters" / "dgx-h100-superpod.yaml"
FORMATS = "ibnetdiscover,opensm"

CASES = {
    # id: (gpus or None for the preset's, changes to networks.storage, networks keys dropped, storage tiers)
    "superpod": (None, {}, (), 2),  # 127 nodes, 8 node leaves, 4 target leaves (per_su), 4 spines
    "target-pair": (None, {"target_leaves": "pair"}, (), 2),  # the targets on two leaves
    "three-tier": (8192, {}, (), 3),  # 1,024 nodes: pods of spines under super-spines
    "no-io": (None, {"fabric_managers": 0, "target_ports": None, "required": None}, ("management_servers",), 2),  # compute nodes alone
}


def _spec(tmp: Path, storage: dict, drop: tuple[str, ...]) -> Path:
    spec = yaml.safe_load(PRESET.read_text())
    st = spec["networks"]["storage"]
    for k, v in storage.items():
        if v is None:
            st.pop(k, None)
        else:
            st[k] = v
    for k in drop:
        spec["networks"].pop(k)
    p = tmp / "spec.yaml"
    p.write_text(yaml.safe_dump(spec))
    return p


@pytest.fixture(scope="module", params=list(CASES))
def built(request, tmp_path_factory) -> tuple[str, Path]:
    gpus, storage, drop, _ = CASES[request.param]
    tmp = tmp_path_factory.mktemp(f"stor-{request.param}")
    args = ["build", str(_spec(tmp, storage, drop)), "--out", str(tmp / "out"), "--formats", FORMATS, "-q"]
    if gpus:
        args += ["--gpus", str(gpus)]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return request.param, tmp / "out" / "rail-optimized"


def _nodes(topo: Path) -> dict[int, tuple[str, str, dict[int, tuple[int, int]], int]]:
    """Node GUID -> (kind, name, {port: (peer node GUID, peer port)}, port GUID of a CA's port 1 or 0)."""
    out: dict[int, tuple[str, str, dict[int, tuple[int, int]], int]] = {}
    cur = None
    for line in topo.read_text().splitlines():
        m = re.match(r'^(Switch|Ca)\t\d+ "[SH]-([0-9a-f]{16})"\t\t# "([^"]+)"', line)
        if m:
            cur = int(m.group(2), 16)
            out[cur] = (m.group(1), m.group(3), {}, 0)
            continue
        m = re.match(r'^\[(\d+)\](?:\(([0-9a-f]+)\))?\s*\t"[SH]-([0-9a-f]{16})"\[(\d+)\]', line)
        if m:
            kind, name, links, pg = out[cur]
            links[int(m.group(1))] = (int(m.group(3), 16), int(m.group(4)))
            if kind == "Ca":
                out[cur] = (kind, name, links, int(m.group(2), 16))
    return out


def _guids(path: Path) -> list[int]:
    return [int(x, 16) for x in path.read_text().split()] if path.exists() else []


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_io_guids_are_every_storage_port_but_the_nodes(built, arch):
    """cn_guids + io_guids = every CA port of storage.topo, apart; the conf names io_guids.conf only when there are I/O nodes."""
    case, d = built
    d = d.parent / arch
    folder = d / "opensm" / "storage"
    nodes = _nodes(d / "ibnetdiscover" / "storage.topo")
    ports = {pg: name for kind, name, _, pg in nodes.values() if kind == "Ca"}
    cn, io = _guids(folder / "cn_guids.conf"), _guids(folder / "io_guids.conf")
    assert not set(cn) & set(io) and sorted(cn + io) == sorted(ports)
    assert len(set(io)) == len(io)
    assert all(re.fullmatch(r"hb\d+ stor\d+", ports[g]) for g in cn)  # the DGX nodes' storage ports
    assert all(not ports[g].startswith("hb") for g in io)
    conf = (folder / "opensm.conf").read_text()
    if case == "no-io":
        assert not io and not (folder / "io_guids.conf").exists() and "io_guid_file" not in conf and "max_reverse_hops" not in conf
    else:
        kinds = {ports[g].split()[0].rstrip("0123456789-") for g in io}
        assert kinds == {"targets", "mgmt", "ufm-storage"}
        assert f"io_guid_file {osm.ETC}/io_guids.conf\n" in conf and f"max_reverse_hops {storage_ib.MAX_REVERSE_HOPS}\n" in conf
    assert "io_guid_file" not in (d / "opensm" / ("fabric" if arch == "rail-optimized" else "rail0") / "opensm.conf").read_text()


def _route(env: dict, work: Path, folder: Path) -> str:
    """``opensm -o -F`` with the folder's opensm.conf (its files in place of /etc/opensm), dumping its LFTs to ``work``; returns the log."""
    conf = work / "opensm.conf"
    conf.write_text((folder / "opensm.conf").read_text().replace(osm.ETC + "/", f"{folder}/"))
    log = work / "opensm.log"
    # -D 0x4f: errors, info, verbose, debug (the CN and I/O marking) and routing (which writes opensm-lfts.dump)
    subprocess.run([WHERE["ibsim-run"], WHERE["opensm"], "-o", "-F", str(conf), "-s", "0", "-D", "0x4f", "-f", str(log), "--dump_files_dir", str(work)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True, timeout=600, cwd=work)
    return log.read_text(errors="replace")


def _walk(nodes: dict, work: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Follow OpenSM's LFTs from every CA port to every other: (arrived, switches crossed, valley-free, CA names) per ordered pair.

    Valley-free: the switches' tiers (BFS distance from the leaves, the switches with
    CAs) rise and then fall along the path, never down and up again (a reverse hop).
    """
    guids = sorted(nodes)
    at = {g: i for i, g in enumerate(guids)}
    sw = np.asarray([nodes[g][0] == "Switch" for g in guids])
    peer = np.full((len(guids), 1 + max(max(v[2], default=0) for v in nodes.values())), -1, np.int64)
    for g, (_, _, links, _) in nodes.items():
        for p, (q, _) in links.items():
            peer[at[g], p] = at[q]
    tier = np.full(len(guids), -1, np.int64)
    frontier = sorted({peer[at[g], 1] for g in guids if not sw[at[g]]})
    level = 0
    while frontier:
        tier[frontier] = level
        nxt = {int(q) for f in frontier for q in peer[f] if q >= 0 and sw[q] and tier[q] < 0}
        frontier, level = sorted(nxt), level + 1
    g2l = lft.read_guid2lid((work / "guid2lid").read_text())
    dump_guids, dump_sw, dump_lid, dump_port = lft.read_lfts(work / "opensm-lfts.dump")
    table = np.full((len(guids), int(dump_lid.max()) + 1), lft.NO_PORT, np.int64)
    rows = np.asarray([at[g] for g in dump_guids], np.int64)
    table[rows[dump_sw], dump_lid] = dump_port
    cas = [at[g] for g in guids if not sw[at[g]]]
    ca_lid = np.asarray([g2l[nodes[guids[c]][3]] for c in cas], np.int64)
    src, dst = (x.ravel() for x in np.meshgrid(np.arange(len(cas)), np.arange(len(cas)), indexing="ij"))
    keep = src != dst
    src, dst = src[keep], dst[keep]
    ca = np.asarray(cas, np.int64)
    cur = peer[ca[src], 1]
    lid = ca_lid[dst]
    crossed = np.zeros(len(src), np.int64)
    arrived = np.zeros(len(src), bool)
    valley_free = np.ones(len(src), bool)
    falling = np.zeros(len(src), bool)
    live = np.arange(len(src))
    for _ in range(16):
        if not len(live):
            break
        c = cur[live]
        crossed[live] += 1
        out = table[c, lid[live]]
        nxt = np.where(out < peer.shape[1], peer[c, np.minimum(out, peer.shape[1] - 1)], -1)
        done = nxt == ca[dst[live]]
        arrived[live[done]] = True
        go = (nxt >= 0) & ~done & sw[np.maximum(nxt, 0)]
        up = tier[np.maximum(nxt, 0)] > tier[c]
        valley_free[live[go & up & falling[live]]] = False
        falling[live[go & ~up]] = True
        cur[live[go]] = nxt[go]
        live = live[go]
    return arrived, crossed, valley_free, [nodes[guids[c]][1] for c in cas]


@pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
def test_opensm_ftree_routes_every_storage_port_to_every_other(built, tmp_path):
    """ibsim + OpenSM's ftree with the written files: no fallback, the roots, CNs and I/O nodes as listed; every pair routed up then down."""
    case, d = built
    tiers = CASES[case][3]
    folder = d / "opensm" / "storage"
    roots, cn, io = (_guids(folder / f"{f}_guids.conf") for f in ("root", "cn", "io"))
    with simulated(d / "ibnetdiscover" / "storage.topo", tmp_path) as env:
        log = _route(env, tmp_path, folder)
    assert not [x for x in log.splitlines() if " 0x01 -> " in x]
    assert "Falling back" not in log
    assert "osm_ucast_mgr_process: ftree tables configured on all switches" in log
    assert f"Ranked {len(roots)} valid root switches" in log
    assert re.search(rf"Fabric has {len(cn) + len(io)} CAs, {len(cn) + len(io)} CA ports \({len(cn)} of them CNs\)", log)
    assert {int(g, 16) for g in re.findall(r"Marking I/O port GUID (0x[0-9a-f]+)", log)} == set(io)
    nodes = _nodes(d / "ibnetdiscover" / "storage.topo")
    arrived, crossed, valley_free, names = _walk(nodes, tmp_path)
    assert len(arrived) == len(names) * (len(names) - 1) and len(names) == len(cn) + len(io)
    assert arrived.all(), f"{int((~arrived).sum())} of {len(arrived)} port pairs unrouted"
    assert valley_free.all()
    assert crossed.max() == 2 * tiers - 1  # through the top tier, no further
    assert sum(n.startswith("targets ") for n in names) == (0 if case == "no-io" else 48)  # so every node reaches every target port, and back
