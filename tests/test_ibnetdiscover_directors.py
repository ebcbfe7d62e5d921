"""Switches of more than 254 ports (directors) in ibnetdiscover files: written as their ASICs, read back as one device.

InfiniBand numbers ports in 8 bits, so a 576-port chassis spine is a 2-tier
Clos of switch ASICs inside (:mod:`topogen.fabric.director`). Unit tests: the layout's
invariants over a grid of chassis sizes; files of fabrics with directors read
back to the plan, `topogen diff` of the plan against its own file and against
a file with one cable moved. Integration tests: ibsim loads such a file, opensm
routes it, and ibnetdiscover rediscovers every cable, external and internal.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from ibsim_fabric import MISSING, SKIP_REASON, discover, ibsim_options, route_ftree, simulated

from topogen.fabric.ports import switch_ports
from topogen.asbuilt.ports import in_plan_names
from topogen import pipeline
from topogen.asbuilt import cabling as plan_reader
from topogen.asbuilt import ibnetdiscover as reader
from topogen.cli import main
from topogen.exports.infiniband import ibnetdiscover as exporter
from topogen.fabric import director
from topogen.fabric.model import LINK_COLUMNS, Fabric, LinkTable
from topogen.spec.cluster import build_spec

SIZES = [255, 256, 260, 288, 300, 576, 648, 1000, 2048, 2049, 4096, director.MAX_DIRECTOR_PORTS]


@pytest.mark.parametrize("ports", SIZES)
def test_layout_invariants(ports):
    s = director.shape(ports)
    H = director.H
    assert s.leaves == -(-ports // H) and s.spines * s.per_pair == H
    assert s.asics == s.leaves + s.spines and s.internal_links == H * s.leaves
    assert (s.asic_ports() <= director.MAX_PORTS).all()
    # every external port lands once, on a leaf's ports 1..H
    leaf, port = director.external(np.arange(1, ports + 1))
    assert len(set(zip(leaf.tolist(), port.tolist()))) == ports
    assert leaf.min() == 0 and leaf.max() == s.leaves - 1 and port.min() >= 1 and port.max() <= H
    external = np.bincount(leaf, minlength=s.leaves)
    # internal links: each leaf's ports H+1..2H once, each spine port once, each spine joined to every leaf m times
    a, ap, b, bp = s.internal()
    assert len(set(zip(a.tolist(), ap.tolist()))) == len(a) == s.internal_links
    assert set(ap.tolist()) == set(range(H + 1, 2 * H + 1))
    assert len(set(zip(b.tolist(), bp.tolist()))) == len(b)
    assert bp.min() == 1 and bp.max() == s.spine_ports
    internal = np.bincount(a, minlength=s.leaves)
    assert (internal[:-1] == external[:-1]).all() and internal[-1] >= external[-1]  # non-blocking
    pairs = Counter(zip(a.tolist(), b.tolist()))
    assert set(pairs.values()) == {s.per_pair} and len(pairs) == s.leaves * s.spines
    names = s.names("spine-0")
    assert len(set(names)) == s.asics and all(director.parse(x)[0] == "spine-0" for x in names)


def test_layout_of_a_576_port_chassis():
    s = director.shape(576)
    assert (s.leaves, s.spines, s.spine_ports, s.internal_links) == (18, 16, 36, 576)
    assert s.names("spine-3")[0] == "spine-3/L01/U1" and s.names("spine-3")[-1] == "spine-3/S16/U1"
    assert director.port_name(director.parse("spine-3/L02/U1"), 5) == ("p37", False)
    assert director.port_name(director.parse("spine-3/L02/U1"), 40) == ("L02/p40", True)
    assert director.port_name(director.parse("spine-3/S16/U1"), 1) == ("S16/p1", True)
    assert director.parse("leaf-g0-r0") is None and director.parse("MF0;sw1:CS7500/L05/U1") is None


@pytest.mark.parametrize("ports", [254, director.MAX_DIRECTOR_PORTS + 1])
def test_layout_range(ports):
    with pytest.raises(ValueError, match="director has 255 to 8128 ports"):
        director.shape(ports)


FABRICS = {
    # name: spec; directors at the top tier (2 and 3 tiers), several per file, two planes, rail-only rails
    "nic200-leaf400-1024": {"gpus": 1024, "hb_domain": 8, "gpus_per_node": 8, "radix": [128, 576], "link_speed": [200, 400], "provision": "full", "catalog": "chassis-400g", "arch": "rail-optimized"},
    "r32-288": {"gpus": 512, "hb_domain": 8, "radix": [32, 288], "arch": "rail-optimized"},
    "r16-260": {"gpus": 512, "hb_domain": 8, "radix": [16, 260], "arch": "rail-optimized"},
    "r32-300-2planes": {"gpus": 512, "hb_domain": 8, "radix": [32, 300], "planes": 2, "arch": "rail-optimized"},
    "r16-16-400": {"gpus": 2048, "hb_domain": 8, "radix": [16, 16, 400], "arch": "rail-optimized"},
    "r64-256-both": {"gpus": 1024, "hb_domain": 8, "radix": [64, 256], "arch": "both"},
}


def _build(data: dict):
    return pipeline.build(build_spec({"name": "dir", **data}))


def _keys(found) -> set:
    return {c.key() for c in found.cables}


def _records(path: Path) -> dict[str, tuple[str, int, str, list[tuple[int, str, int]]]]:
    """id -> (type, ports, description, [(port, peer id, peer port)]) of an ibnetdiscover file, read here without topogen's reader."""
    out: dict = {}
    for line in path.read_text().splitlines():
        m = reader.NODE_RE.match(line.strip())
        if m:
            cur = out[m.group("id")] = (m.group("type"), int(m.group("ports")), m.group("desc"), [])
            continue
        m = reader.PORT_RE.match(line.strip())
        if m:
            cur[3].append((int(m.group("port")), m.group("peer"), int(m.group("pport"))))
    return out


def _links(path: Path) -> set:
    """Every link of the file, as a pair of (node description, port), each end once."""
    recs = _records(path)
    return {frozenset({(desc, port), (recs[peer][2], pport)}) for _, _, desc, ports in recs.values() for port, peer, pport in ports}


@pytest.fixture(scope="module", params=list(FABRICS))
def exported(request, tmp_path_factory):
    ctx = _build(FABRICS[request.param])
    out = tmp_path_factory.mktemp("dir")
    exporter.export(ctx, out)
    return ctx, out


def test_directors_written_as_asics(exported):
    """No node over 254 ports; a director's ASICs carry each cabled chassis port once; header counts are the file's."""
    ctx, out = exported
    for arch, fabric in ctx.fabrics.items():
        n = fabric.gpus
        radix = fabric.switch_ports()
        for sub in exporter.subnets(fabric):
            path = out / arch / "ibnetdiscover" / f"{sub.name}.topo"
            recs = _records(path)
            dirs = exporter.directors(fabric, sub)
            assert dirs is not None
            assert all(r[1] <= director.MAX_PORTS and all(p <= r[1] for p, _, _ in r[3]) for r in recs.values())
            ids = re.findall(r'^(?:Switch|Ca)\t\d+ "([^"]+)"', path.read_text(), re.M)
            assert len(ids) == len(set(ids)) == len(recs)
            names = [r[2] for r in recs.values() if r[0] == "Switch"]
            for dev in dirs.dev.tolist():
                chassis = fabric.switches[dev - n].name
                s = director.shape(int(radix[dev - n]))
                assert chassis not in names
                asics = sorted(x for x in names if x.startswith(chassis + "/"))
                assert asics == sorted(s.names(chassis))
                # the chassis' cabled ports, as the plan has them, each once on a leaf ASIC's external ports
                L = fabric.links
                rows = sub.links
                planned = sorted(np.r_[L.a_port[rows][L.a_dev[rows] == dev], L.z_port[rows][L.z_dev[rows] == dev]].tolist())
                found = sorted(director.port_name(director.parse(r[2]), p)[0] for r in recs.values() if r[2] in asics for p, _, _ in r[3])
                assert sorted(x for x in found if x[0] == "p") == sorted(f"p{p}" for p in planned)
                assert len([x for x in found if x[0] != "p"]) == 2 * s.internal_links
            need = exporter.sim_needs(fabric, sub)
            head = path.read_text()[:600]
            internal = dirs.links
            assert sum(s.internal_links for s in dirs.shapes) == internal
            switch_recs = sum(r[0] == "Switch" for r in recs.values())
            assert need[0] == switch_recs and need[1] == len(recs)
            assert f"# {need[0]} switches (" in head and f"{len(sub.links)} cables and {internal} internal links" in head
            assert sum(len(r[3]) for r in recs.values()) == 2 * (len(sub.links) + internal)


def test_files_read_back_to_the_plan(exported):
    ctx, out = exported
    for arch, fabric in ctx.fabrics.items():
        found = reader.read(sorted((out / arch / "ibnetdiscover").glob("*.topo")))
        assert len(found.cables) == len(fabric.links)
        found = in_plan_names(found, fabric.spec, arch, set())  # ibnetdiscover's port numbers in the switches' own names, as diff reads them
        assert _keys(found) == _keys(plan_reader.from_fabric(fabric))


def test_missing_asic_record_still_folds(tmp_path):
    """A partial discovery without one leaf ASIC's record: its cables still fold to chassis ports, through the peers' comments."""
    ctx = _build(FABRICS["r32-288"])
    fabric = ctx.fabrics["rail-optimized"]
    exporter.export(ctx, tmp_path)
    path = tmp_path / "rail-optimized" / "ibnetdiscover" / "fabric.topo"
    records = path.read_text().split("\n\n")
    kept = [r for r in records if '# "spine-0/L02/U1" enhanced' not in r]
    assert len(kept) == len(records) - 1
    partial = tmp_path / "partial.topo"
    partial.write_text("\n\n".join(kept))
    assert _keys(reader.read([partial])) == _keys(plan_reader.from_fabric(fabric))


def test_asic_guids_do_not_meet_device_guids():
    ctx = _build(FABRICS["r32-288"])
    fabric = ctx.fabrics["rail-optimized"]
    devices = {exporter.guid(d) for d in range(fabric.gpus + len(fabric.switches))}
    sub = exporter.subnets(fabric)[0]
    dirs = exporter.directors(fabric, sub)
    asics = [exporter.asic_guid(d, a) for d, s in zip(dirs.dev.tolist(), dirs.shapes) for a in range(s.asics)]
    assert len(set(asics)) == len(asics) and not devices & set(asics)
    ports = {g + p for g in (exporter.guid(d) for d in range(fabric.gpus)) for p in range(1, fabric.spec.nic_ports + 1)}
    assert not ports & set(asics)


def test_no_director_no_change(tmp_path):
    """A fabric without a switch over 254 ports has no ASIC records, no sysimgguid lines, the same header."""
    ctx = _build({"gpus": 512, "hb_domain": 8, "radix": [32, 254], "arch": "rail-optimized"})
    fabric = ctx.fabrics["rail-optimized"]
    assert fabric.switch_ports().max() == 254
    assert all(exporter.directors(fabric, s) is None for s in exporter.subnets(fabric))
    exporter.export(ctx, tmp_path)
    text = (tmp_path / "rail-optimized" / "ibnetdiscover" / "fabric.topo").read_text()
    assert "sysimgguid" not in text and "/U1" not in text and 'Switch\t254 "' in text
    assert re.search(r"^# \d+ switches, \d+ channel adapters \(GPUs\), \d+ cables$", text, re.M)


def _moved(fabric: Fabric) -> tuple[Fabric, str, str, str]:
    """The fabric with one leaf uplink moved to a free port of its director; (fabric, leaf end, planned chassis end, moved-to end)."""
    n = fabric.gpus
    radix = fabric.switch_ports()
    cols = {c: getattr(fabric.links, c).copy() for c in LINK_COLUMNS}
    big = np.flatnonzero(radix > director.MAX_PORTS)[0] + n
    i = int(np.flatnonzero(cols["z_dev"] == big)[0])
    used = set(cols["z_port"][cols["z_dev"] == big].tolist()) | set(cols["a_port"][cols["a_dev"] == big].tolist())
    free = max(p for p in range(1, int(radix[big - n]) + 1) if p not in used)
    chassis = fabric.switches[big - n].name
    leaf = fabric.switches[int(cols["a_dev"][i]) - n].name
    before = f"{chassis}:p{cols['z_port'][i]}"
    cols["z_port"][i] = free
    moved = Fabric(fabric.spec, fabric.arch, fabric.tiers, fabric.switches, LinkTable.from_columns(**cols), list(fabric.notes))
    return moved, f"{leaf}:p{cols['a_port'][i]}", before, f"{chassis}:p{free}"


def _diff(*args) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["diff", *map(str, args), "--json"], catch_exceptions=False)
    return res.exit_code, json.loads(res.output)


def test_diff_against_own_file_and_one_moved_cable(tmp_path):
    ctx = _build(FABRICS["nic200-leaf400-1024"])
    out = tmp_path / "plan"
    pipeline.write_outputs(ctx, out, ["cabling", "ibnetdiscover"])
    fabric = ctx.fabrics["rail-optimized"]
    topo = out / "rail-optimized" / "ibnetdiscover" / "fabric.topo"
    code, result = _diff(out, topo)
    assert code == 0 and result["deviations"] == [] and result["identical"] == len(fabric.links)
    moved, leaf, before, after = _moved(fabric)
    floor = tmp_path / "floor.topo"
    exporter.write_subnet(moved, exporter.subnets(moved)[0], floor)
    code, result = _diff(out, floor)
    assert result["identical"] == len(fabric.links) - 1
    (dev,) = result["deviations"]
    assert dev["kind"] == "wrong-port"
    sp = switch_ports(fabric)  # diff names the switch ports as the switches do (a chassis keeps p<n>)
    index = {s.name: i for i, s in enumerate(fabric.switches)}

    def native(end: str) -> str:
        d, port = end.split(":")
        return f"{d}:{sp.name(index[d], port) or port}" if d in index else end

    leaf, before, after = native(leaf), native(before), native(after)
    assert [{c["a"], c["z"]} for c in dev["planned"]] == [{leaf, before}]
    assert [{c["a"], c["z"]} for c in dev["found"]] == [{leaf, after}]


# --- the real tools ---------------------------------------------------------------------------

needs_tools = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)

SIM_FABRICS = ["nic200-leaf400-1024", "r32-288", "r16-16-400"]


@needs_tools
@pytest.mark.parametrize("name", SIM_FABRICS)
def test_ibsim_rediscovers_every_cable_and_internal_link(name, tmp_path):
    """ibsim loads the file; ibnetdiscover finds every link of it (cables and a director's own links); opensm's ftree routes it."""
    ctx = _build(FABRICS[name])
    exporter.export(ctx, tmp_path)
    fabric = ctx.fabrics["rail-optimized"]
    (topo,) = sorted((tmp_path / "rail-optimized" / "ibnetdiscover").glob("*.topo"))
    dirs = exporter.directors(fabric, exporter.subnets(fabric)[0])
    with simulated(topo, tmp_path) as env:
        log = route_ftree(env, tmp_path)
        found = discover(env, tmp_path / "discovered.topo")
    planned = _links(topo)
    assert len(planned) == len(fabric.links) + dirs.links
    assert _links(found) == planned
    assert _keys(in_plan_names(reader.read([found]), fabric.spec, "rail-optimized", set())) == _keys(plan_reader.from_fabric(fabric))
    assert "ftree tables configured on all switches" in log, log[-3000:]
    assert ibsim_options(topo) == exporter.ibsim_options(*exporter.sim_needs(fabric, exporter.subnets(fabric)[0]))
