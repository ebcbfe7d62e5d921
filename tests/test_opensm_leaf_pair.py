"""An InfiniBand leaf pair (``design: leaf-pair``, catalog ndr-400g): the ISLs in the .topo, OpenSM routes it with minhop.

OpenSM's ftree cannot route two leaves of one tier joined by ISLs (it finds two
roots of rank 0 and falls back): the exported ``opensm.conf`` names
``routing_engine minhop`` and no root or CN file. Under ibsim, with the files
as exported, OpenSM must configure minhop tables without an error; then the
forwarding tables OpenSM wrote (read back by :mod:`topogen.exports.infiniband.opensm_routes`)
are walked here hop by hop: every GPU port reaches every GPU port of its plane
in at most two switches, never through a leaf twice, and a leaf spreads the
other leaf's destinations over its ISLs (counts apart by at most one).
Runs where Debian's ibsim-utils and opensm are installed; skipped otherwise.
"""

from __future__ import annotations

import itertools
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from ibsim_fabric import MISSING, SKIP_REASON, WHERE, discover, simulated

from topogen import pipeline
from topogen.exports.infiniband import ibnetdiscover as ib
from topogen.exports.infiniband import opensm as exporter
from topogen.exports.infiniband import opensm_files as osm
from topogen.exports.infiniband import opensm_routes
from topogen.spec.cluster import build_spec
from topogen.traffic import lft

needs_tools = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)

# (gpus, gpus_per_node, planes, GPU:ISL) on 64-port 400G leaves (ndr-400g)
SHAPES = [(32, 8, 1, "1:1"), (64, 4, 1, "1:1"), (32, 2, 2, "2:1"), (64, 8, 2, "1:1"), (16, 4, 1, "2:1")]
IDS = [f"{g}g-gpn{n}-pl{p}-{o}" for g, n, p, o in SHAPES]


def _ctx(gpus: int, gpn: int, planes: int, over: str, arch: str = "rail-optimized"):
    spec = build_spec({"name": "ibp", "design": "leaf-pair", "catalog": "ndr-400g", "gpus": gpus, "hb_domain": 8, "gpus_per_node": gpn, "radix": 64, "planes": planes, "oversubscription": over, "arch": arch})
    return pipeline.build(spec)


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_topo_holds_the_isls_and_conf_names_minhop(shape, tmp_path):
    ctx = _ctx(*shape)
    f = ctx.fabrics["rail-optimized"]
    ib.export(ctx, tmp_path)
    exporter.export(ctx, tmp_path)
    subs = ib.subnets(f)
    assert len(subs) == shape[2]  # one subnet per plane
    for sub in subs:
        text = (tmp_path / "rail-optimized" / "ibnetdiscover" / f"{sub.name}.topo").read_text()
        records = {m.group(1): m.group(2) for m in re.finditer(r'^Switch\t\d+ "S-[0-9a-f]+"\t\t# "(\S+)".*\n((?:\[.*\n)*)', text, re.M)}
        a, b = sorted(records)
        to_b = re.findall(r'^\[(\d+)\]\t"S-[0-9a-f]+"\[(\d+)\]\t\t# "' + re.escape(b) + '"', records[a], re.M)
        to_a = re.findall(r'^\[(\d+)\]\t"S-[0-9a-f]+"\[(\d+)\]\t\t# "' + re.escape(a) + '"', records[b], re.M)
        isls = int((f.isls.plane == subs.index(sub)).sum())
        assert len(to_b) == len(to_a) == isls > 0
        assert all(x == y for x, y in to_b) and sorted(to_b) == sorted(to_a)  # same port number at both ends, each ISL written from both
        folder = tmp_path / "rail-optimized" / "opensm" / sub.name
        conf = (folder / "opensm.conf").read_text()
        assert "routing_engine minhop\n" in conf and "ftree" in conf.split("routing_engine")[0]  # the comment says why not ftree
        assert sorted(p.name for p in folder.iterdir()) == ["opensm.conf", "partitions.conf"]


def test_rail_only_pair_has_no_isl_and_one_subnet_per_switch(tmp_path):
    ctx = _ctx(32, 8, 1, "1:1", arch="rail-only")
    f = ctx.fabrics["rail-only"]
    assert len(f.isls) == 0
    for sub in ib.subnets(f):
        assert osm.subnet_guids(f, sub).isls == 0 and len(sub.switch_ids) == 1


def _opensm(env: dict, work: Path, folder: Path, engine: str | None = None) -> str:
    conf = work / "opensm.conf"
    conf.write_text((folder / "opensm.conf").read_text().replace(osm.ETC + "/", f"{folder}/"))
    log = work / "opensm.log"
    log.unlink(missing_ok=True)
    extra = ["-R", engine] if engine else []
    subprocess.run([WHERE["ibsim-run"], WHERE["opensm"], "-o", "-F", str(conf), *extra, "-s", "0", "-f", str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True, timeout=600)
    return log.read_text(errors="replace")


@needs_tools
def test_ftree_refuses_the_pair_and_the_exported_conf_routes_it(tmp_path):
    ctx = _ctx(32, 8, 1, "1:1")
    ib.export(ctx, tmp_path)
    exporter.export(ctx, tmp_path)
    folder = tmp_path / "rail-optimized" / "opensm" / "fabric"
    with simulated(tmp_path / "rail-optimized" / "ibnetdiscover" / "fabric.topo", tmp_path) as env:
        log = _opensm(env, tmp_path, folder, engine="ftree")
        assert "Found more than one root on fabric with maximum rank 0" in log and "ftree tables configured" not in log
        log = _opensm(env, tmp_path, folder)
        assert "minhop tables configured on all switches" in log
        assert not [x for x in log.splitlines() if " 0x01 -> " in x]
        # the real ibnetdiscover finds the ISLs as planned: leaf-a port n to leaf-b port n, every one
        found = discover(env, tmp_path / "discovered.topo").read_text()
        leaf_b = re.search(r'^Switch\t\d+ "(S-[0-9a-f]+)"\t\t# "leaf-b"', found, re.M).group(1)
        record_a = re.search(r'^Switch\t\d+ "S-[0-9a-f]+"\t\t# "leaf-a".*\n((?:\[.*\n)*)', found, re.M).group(1)
        isls = re.findall(r'^\[(\d+)\]\t"' + leaf_b + r'"\[(\d+)\]', record_a, re.M)
        f = ctx.fabrics["rail-optimized"]
        assert sorted((int(a), int(b)) for a, b in isls) == sorted(zip(f.isls.a_port.tolist(), f.isls.z_port.tolist()))


def _walk(t: lft.Tables, n: int, src: int, port: int, dst_lid: int) -> list[int]:
    """The switch nodes a packet from (GPU ``src``, NIC ``port``) to ``dst_lid`` crosses, by the LFTs, to the GPU it reaches (last)."""
    x = int(t.nic_peer[src, port])
    path = []
    while x >= n and len(path) < 8:
        path.append(x)
        out = int(t.lft[t.lft_base[x - n] + dst_lid]) if dst_lid < t.lft_len[x - n] else lft.NO_PORT
        if out == lft.NO_PORT:
            return path + [-1]
        x = int(t.peer[x - n, out])
    return path + [x]


@needs_tools
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_every_gpu_reaches_every_gpu_by_opensm_tables(shape):
    ctx = _ctx(*shape)
    f = ctx.fabrics["rail-optimized"]
    n = f.gpus
    t = opensm_routes.tables(f, lft.parse("opensm"))
    assert set(t.engines.values()) == {"minhop"}
    for p in range(f.spec.planes):
        for src, dst in itertools.permutations(range(n), 2):
            path = _walk(t, n, src, p, int(t.lid[dst, p]))
            assert path[-1] == dst, (src, dst, path)
            assert len(path) - 1 == len(set(path[:-1])) <= 2  # one leaf, or leaf > ISL > leaf
        # each leaf's routes to the other leaf's GPUs: over its ISL ports only, spread evenly
        for me, other in ((f.isls.a_dev, f.isls.z_dev), (f.isls.z_dev, f.isls.a_dev)):
            mine = f.isls.plane == p
            x, y = int(me[mine][0]), int(other[mine][0])
            isl_ports = set((f.isls.a_port if me is f.isls.a_dev else f.isls.z_port)[mine].tolist())
            dsts = np.unique(f.links.a_dev[(f.links.z_dev == y)])
            out = t.lft[t.lft_base[x - n] + t.lid[dsts, p]].astype(np.int64)
            assert set(out.tolist()) <= isl_ports
            count = np.bincount(out, minlength=max(isl_ports) + 1)[sorted(isl_ports)]
            assert count.max() - count.min() <= 1 and count.sum() == len(dsts), count
