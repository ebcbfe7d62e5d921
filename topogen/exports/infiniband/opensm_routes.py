"""OpenSM's forwarding tables for a fabric: its ibnetdiscover export simulated by ``ibsim``, routed by ``opensm``.

For each subnet of the export (:func:`topogen.exports.infiniband.ibnetdiscover.subnets`),
in a temporary directory removed afterwards:

1. the subnet's ``.topo`` file, byte for byte what ``topogen build`` writes
   (the same GUIDs, so OpenSM's files apply);
2. ``ibsim -s -n FILE`` (with the ``-S/-N/-P`` options the file's header
   asks for, and ``-L`` when the LIDs pass ibsim's default LFT of 30,720
   entries), on a socket of its own (``IBSIM_SOCKNAME``) so runs do not meet;
3. ``opensm -o -R <engine> [-l LMC] [-a root_guids]`` once under
   ``ibsim-run`` (which preloads ibsim's umad shim), with routing dumps on:
   OpenSM writes ``opensm-lfts.dump`` (every switch's LFT) and its
   ``guid2lid`` cache (every port's LIDs);
4. the dumps are read back (:mod:`topogen.traffic.lft`) and keyed to the
   plan's devices and ports by the export's GUIDs and port numbers.

ftree, updn and dnup get the export's root GUIDs (the top tier; a
director's spine ASICs). A one-switch subnet (a rail-only rail on one switch)
is no fat tree, nor is a leaf pair joined by ISLs (``design: leaf-pair``): each
is routed with minhop whatever the engine, as the exported ``opensm.conf`` says. Limits: a subnet must fit the unicast LID space
(49,151 LIDs: its switch ASICs plus ``2^LMC`` per GPU port); ibsim's tables
are raised to the subnet's size, so beyond that the bound is the machine's
time and memory (see docs/benchmarks.md).

Processes are started with explicit paths, each with a timeout, and stopped
by their own process object; nothing here prints.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from topogen.exports.infiniband import ibnetdiscover as ib
from topogen.exports.infiniband import opensm_files as osm
from topogen.fabric import director
from topogen.fabric.model import Fabric
from topogen.traffic import lft
from topogen.util.errors import InputError, Problem
from topogen.util import processes

TOOLS = ("ibsim", "ibsim-run", "opensm")
SEARCH = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"  # opensm lives in sbin
IBSIM_LINEAR_CAP = 30720  # ibsim 0.10's default LFT size (``MaxLinearCap``)
START_S = 900.0  # ibsim must load its file within this (it took 115 s for 32,768 GPUs on a loaded machine)
ROUTE_S = 7200.0  # one OpenSM sweep: 10 min for 16,384 GPUs on a loaded machine; past 2 h something is wrong
INSTALL = "install the Debian packages ibsim-utils and opensm (apt-get install ibsim-utils opensm), or use --routing dmodk (ftree's destination-mod-k without the tools)"
_ROOTED = ("ftree", "updn", "dnup")


def tools() -> dict[str, str]:
    """Paths of ibsim, ibsim-run and opensm; an InputError naming ``routing`` when one is missing."""
    where = {t: shutil.which(t, path=SEARCH) for t in TOOLS}
    missing = [t for t, p in where.items() if p is None]
    if missing:
        raise InputError([Problem("routing", f"--routing opensm runs OpenSM on the InfiniBand simulator, and {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed", INSTALL)])
    return where  # type: ignore[return-value]


def lids_needed(fabric: Fabric, sub: ib.Subnet, lmc: int, dirs=ib.FIND) -> int:
    """Unicast LIDs the subnet takes: one per switch node, ``2^lmc`` per CA port."""
    switches, _nodes, _ports = ib.sim_needs(fabric, sub, dirs)
    ca_ports = int((fabric.cable_table().a_dev[sub.links] < fabric.gpus).sum())
    return switches + ca_ports * (1 << lmc)


def check(fabric: Fabric, choice: lft.Choice) -> None:
    """An InputError when a subnet cannot be routed: a leaf pair the export lacks the ISLs of, or more LIDs than the unicast LID space holds.

    A leaf pair (``design: leaf-pair``, rail-optimized) joins its two leaves by
    ISLs; OpenSM routes what the ibnetdiscover export lists, so an export
    without the ISLs would show every pair across the leaves unroutable: the
    run stops instead (once the export lists them, OpenSM routes the pair).
    """
    subs = ib.subnets(fabric)
    if len(fabric.isls) and not any((sub.links >= len(fabric.links)).any() for sub in subs):
        raise InputError([Problem("routing", f"{choice.label}: the {fabric.arch} leaf pair (design: leaf-pair) joins its two leaves by inter-switch links, and the ibnetdiscover export OpenSM routes does not list them, so OpenSM would see two leaves apart", "use --routing dmodk (ftree's destination-mod-k: the ISL is picked by destination), spray or ecmp; or --arch rail-only (no ISL)")])
    for sub in subs:
        need = lids_needed(fabric, sub, choice.lmc)
        if need > lft.MAX_UNICAST_LID:
            raise InputError([Problem("routing", f"{choice.label}: subnet {sub.name} of the {fabric.arch} fabric needs {need:,} LIDs ({fabric.gpus:,} GPUs), more than InfiniBand's {lft.MAX_UNICAST_LID:,} unicast LIDs, so OpenSM cannot route it" + (f" (LMC {choice.lmc} gives each port {choice.lids} LIDs)" if choice.lmc else ""), "simulate a smaller fabric (fewer --gpus, or more planes: one subnet each), a lower LMC, or use --routing dmodk (ftree's destination-mod-k, computed by topogen at any size)")])


def tables(fabric: Fabric, choice: lft.Choice) -> lft.Tables:
    """OpenSM's LFTs for every subnet of ``fabric`` under ``choice`` (see the module)."""
    check(fabric, choice)
    where = tools()
    n = fabric.gpus
    nsw = len(fabric.switches)
    L = fabric.cable_table()  # sub.links index it: the links, then a leaf pair's ISLs
    radix = fabric.switch_ports()
    subs = ib.subnets(fabric)
    dirs = [ib.directors(fabric, s, radix) for s in subs]
    shift = np.cumsum([0] + [d.asics if d is not None else 0 for d in dirs])  # global ASIC offset per subnet
    nodes = nsw + int(shift[-1])  # switch nodes: devices, then every subnet's ASICs
    width = max([int(radix.max(initial=0))] + [int(p.max()) for d in dirs if d is not None for p in (s.asic_ports() for s in d.shapes)]) + 1
    width = min(width, 256)
    peer = np.full((nodes, width), -1, np.int64)
    link = np.full((nodes, width), -1, np.int64)
    ports = fabric.spec.nic_ports
    nic_peer = np.full((n, ports), -1, np.int64)
    lid = np.full((n, ports), -1, np.int64)
    guid_node: dict[int, int] = {}
    for sub, d, off in zip(subs, dirs, shift.tolist()):
        rows = sub.links
        a_node, a_port = _ends(fabric, L.a_dev[rows], L.a_port[rows], d, off)
        z_node, z_port = _ends(fabric, L.z_dev[rows], L.z_port[rows], d, off)
        for me, mp, you, up in ((a_node, a_port, z_node, 2 * rows), (z_node, z_port, a_node, 2 * rows + 1)):
            sw = me >= n
            peer[me[sw] - n, mp[sw]] = you[sw]
            link[me[sw] - n, mp[sw]] = up[sw]
        gpu = a_node < n
        nic_peer[a_node[gpu], a_port[gpu] - 1] = z_node[gpu]
        for x in np.unique(np.r_[z_node, a_node[~gpu]]).tolist():
            if x < n + nsw:
                guid_node[ib.guid(x)] = x
        if d is not None:
            e = np.arange(2 * d.links)
            u = (e + d.links) % (2 * d.links)
            node = d.end_node + off
            peer[node[e] - n, d.end_port[e]] = node[u]  # internal: no link of the plan
            for k, (dev, s) in enumerate(zip(d.dev.tolist(), d.shapes)):
                for a in range(s.asics):
                    guid_node[ib.asic_guid(dev, a)] = int(d.base[k]) + off + a
    parts: list[np.ndarray] = []
    lft_base = np.full(nodes, -1, np.int64)
    lft_len = np.zeros(nodes, np.int64)
    engines: dict[str, str] = {}
    start = time.monotonic()
    total = 0
    with tempfile.TemporaryDirectory(prefix="topogen-opensm-") as tmp:
        for i, (sub, d) in enumerate(zip(subs, dirs)):
            work = Path(tmp) / f"s{i}"
            work.mkdir()
            dump, g2l, used = _route(fabric, sub, d, radix, choice, where, work)
            engines[sub.name] = used
            guids, sw, lids, out = lft.read_lfts(dump)
            dump.unlink()  # the largest file of the run (about 40 bytes per switch and LID)
            node = np.array([guid_node.get(g, -1) for g in guids], np.int64)
            if (node < 0).any():
                raise InputError([Problem("routing", f"OpenSM's tables for subnet {sub.name} name switch GUID {guids[int(np.argmax(node < 0))]:#x}, which the export did not write", "a topogen bug: report it with the spec")])
            top = int(lids.max(initial=0)) + 1
            for j, x in enumerate(node.tolist()):
                lft_base[x - n] = total + j * top
                lft_len[x - n] = top
            table = np.full(len(node) * top, lft.NO_PORT, np.uint8)
            table[sw.astype(np.int64) * top + lids] = out
            parts.append(table)
            total += len(table)
            for g, lo in lft.read_guid2lid(g2l).items():
                dev, p = divmod(g - ib.GUID_BASE, 16)
                if 0 <= dev < n and 1 <= p <= ports:
                    lid[dev, p - 1] = lo
    seconds = time.monotonic() - start
    table = np.concatenate(parts) if parts else np.zeros(0, np.uint8)
    return lft.Tables(choice, n, table, lft_base, lft_len, peer, link, nic_peer, lid, engines, seconds)


def _ends(fabric: Fabric, dev: np.ndarray, port: np.ndarray, dirs: ib.Directors | None, off: int) -> tuple[np.ndarray, np.ndarray]:
    """(node, port number) of cable ends as the export writes them: GPU ``nic<p>`` is port p+1; a director's port is its leaf ASIC's."""
    n = fabric.gpus
    node = np.asarray(dev, np.int64).copy()
    num = np.asarray(port, np.int64) + (node < n)
    if dirs is not None:
        k = dirs.which(node, n)
        at = np.flatnonzero(k >= 0)
        leaf, j = director.external(num[at])
        node[at] = dirs.base[k[at]] + off + leaf
        num[at] = j
    return node, num


def _route(fabric: Fabric, sub: ib.Subnet, dirs, radix: np.ndarray, choice: lft.Choice, where: dict[str, str], work: Path) -> tuple[Path, str, str]:
    """Simulate one subnet and route it once: (the path of ``opensm-lfts.dump``, ``guid2lid`` text, the engine OpenSM used and why, if not the one asked)."""
    topo = work / f"{sub.name}.topo"
    with open(topo, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(ib.header(fabric, sub, dirs)) + "\n")
        for text in ib.generate_text(fabric, sub, radix=radix, dirs=dirs):
            fh.write(text)
    sg = osm.subnet_guids(fabric, sub)
    opts = ib.ibsim_options(*ib.sim_needs(fabric, sub, dirs))
    need = lids_needed(fabric, sub, choice.lmc, dirs)
    if need + 1 > IBSIM_LINEAR_CAP:
        opts += ["-L", str(lft.MAX_UNICAST_LID + 1)]
    engine = choice.engine if sg.fat_tree else "minhop"  # what the exported opensm.conf says for one switch
    cmd = [where["opensm"], "-o", "-R", engine, "-s", "0", "-l", str(choice.lmc), "-f", str(work / "opensm.log"), "--dump_files_dir", str(work), "-D", "0x43"]
    if engine in _ROOTED:
        (work / "root_guids.conf").write_text(osm.root_text(fabric, sg))
        cmd += ["-a", str(work / "root_guids.conf")]
    env = dict(os.environ, IBSIM_SOCKNAME=f"topogen-{os.getpid()}-{work.parent.name}-{work.name}", OSM_CACHE_DIR=str(work), OSM_TMP_DIR=str(work))
    log = work / "ibsim.log"
    with open(log, "wb") as fh:
        sim = subprocess.Popen([where["ibsim"], *opts, "-s", "-n", str(topo)], stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=work)
    try:
        deadline = time.monotonic() + START_S
        while b"Network simulator ready" not in log.read_bytes():
            if sim.poll() is not None or time.monotonic() > deadline:
                raise InputError([Problem("routing", f"ibsim could not load subnet {sub.name} of the {fabric.arch} fabric: {_tail(log)}", "check the ibsim-utils install; the subnet's .topo file is what topogen build writes (--formats ibnetdiscover)")])
            time.sleep(0.05)
        try:
            subprocess.run([where["ibsim-run"], *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env, timeout=ROUTE_S, check=False, cwd=work)  # cwd: ibsim's umad shim makes a sys-<pid> folder there
        except subprocess.TimeoutExpired:
            raise InputError([Problem("routing", f"OpenSM did not finish routing subnet {sub.name} of the {fabric.arch} fabric within {ROUTE_S:.0f} s", "simulate a smaller fabric, or use --routing dmodk")]) from None
    finally:
        processes.stop(sim, 30)
    osm_log = (work / "opensm.log").read_text(errors="replace") if (work / "opensm.log").is_file() else ""
    dump = work / "opensm-lfts.dump"
    g2l = work / "guid2lid"
    used = re.findall(r"osm_ucast_mgr_process: (\S+) tables configured on all switches", osm_log)
    if not dump.is_file() or not g2l.is_file() or not used:
        errors = [x.split("-> ", 1)[-1] for x in osm_log.splitlines() if " 0x01 -> " in x]
        raise InputError([Problem("routing", f"OpenSM did not route subnet {sub.name} of the {fabric.arch} fabric with {engine}" + (f": {errors[0]}" if errors else ""), "try another engine (--routing opensm:minhop) or --routing dmodk")])
    why = re.findall(r"-> ([^\n]*)\nFalling back to default routing", osm_log)
    return dump, g2l.read_text(errors="replace"), used[-1] + (f" ({why[0].strip().rstrip('.')})" if why and used[-1] != choice.engine else "")


def _tail(path: Path, lines: int = 3) -> str:
    text = [x for x in path.read_text(errors="replace").splitlines() if x.strip() and not x.startswith("ibwarn")]
    return " / ".join(text[-lines:]) or "no output"
