"""Mutation tests: inject one fault class into a valid wiring; the validator names it.

Each test starts from a valid generated fabric of each architecture, changes
the cabling the way an installer (or a hand edit) would, and checks that an
error finding of the expected check id names the exact device and port. The
faults are injected at several places (first, middle, last) to show it is
found every time, not by luck of position.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from topogen.checks import validate
from topogen.fabric import clos
from topogen.fabric.model import LINK_COLUMNS, Fabric, LinkTable
from topogen.spec.cluster import build_spec

ARCHES = ("rail-optimized", "rail-only")
# 63 HB domains of 8 on 16-port switches: rail-optimized has 3 tiers, rail-only 2 tiers
# per rail; the last group / last leaf of each rail has 7 GPUs, so one free down port.
SPEC = build_spec({"name": "mut", "gpus": 504, "hb_domain": 8, "radix": 16})
WHERE = ("first", "middle", "last")


@pytest.fixture(scope="module")
def fabrics() -> dict[str, Fabric]:
    out = {a: clos.generate(SPEC, a) for a in ARCHES}
    for f in out.values():
        assert validate.validate(f).valid
    return out


# --- helpers ---------------------------------------------------------------------------------


def with_links(f: Fabric, **cols) -> Fabric:
    """A copy of ``f`` with some link columns replaced."""
    base = {c: getattr(f.links, c).copy() for c in LINK_COLUMNS}
    base.update(cols)
    return Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**base), list(f.notes))


def edit(f: Fabric, i: int, **values) -> Fabric:
    cols = {c: getattr(f.links, c).copy() for c in values}
    for c, v in values.items():
        cols[c][i] = v
    return with_links(f, **cols)


def drop(f: Fabric, i: int) -> Fabric:
    keep = np.ones(len(f.links), bool)
    keep[i] = False
    return Fabric(f.spec, f.arch, f.tiers, f.switches, f.links.take(keep), list(f.notes))


def add(f: Fabric, a: int, a_port: int, z: int, z_port: int, tier: int, speed: int = 400) -> Fabric:
    row = LinkTable.from_columns(a_dev=[a], a_port=[a_port], z_dev=[z], z_port=[z_port], tier=[tier], plane=[0], a_speed=[speed], z_speed=[speed])
    return Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.concat([f.links, row]), list(f.notes))


def pick(idx: np.ndarray, where: str) -> int:
    return int(idx[{"first": 0, "middle": len(idx) // 2, "last": len(idx) - 1}[where]])


def name(f: Fabric, dev: int) -> str:
    if dev < f.gpus:
        from topogen.fabric.naming import GpuNames

        return GpuNames(f.gpus, f.hb_domain).name(dev)
    return f.switch(dev).name


def gpu_link(f: Fabric, gpu: int) -> int:
    return int(np.flatnonzero((f.links.a_dev == gpu) & (f.links.tier == 1))[0])


def free_down_ports(f: Fabric, dev: int) -> list[int]:
    used = set(f.links.z_port[f.links.z_dev == dev].tolist()) | set(f.links.a_port[f.links.a_dev == dev].tolist())
    return [p for p in range(1, f.switch(dev).down_ports + 1) if p not in used]


def errors(report: validate.Report, check: str) -> list[validate.Finding]:
    return [x for x in report.findings if x.check == check and x.severity == "error"]


def assert_named(report: validate.Report, check: str | tuple[str, ...], device: str, port: str) -> validate.Finding:
    """An error finding of ``check`` (or one of several) that lists ``device`` and ``device:port``."""
    checks = (check,) if isinstance(check, str) else check
    found = [x for c in checks for x in errors(report, c)]
    assert found, f"no {check} error; got {[x.check for x in report.findings if x.severity == 'error']}"
    hits = [x for x in found if device in x.devices and f"{device}:{port}" in x.ports]
    assert hits, f"{check} findings do not name {device}:{port}: {[x.message for x in found]}"
    assert not report.valid
    return hits[0]


# --- the fault classes --------------------------------------------------------------------------


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("arch", ARCHES)
def test_cable_moved_to_another_rail(fabrics, arch, where):
    """A GPU's cable lands on a free port of another rail's switch."""
    f = fabrics[arch]
    last_domain = f.spec.domains - 1  # its switches have a free down port
    rank = {"first": 0, "middle": 3, "last": 6}[where]
    gpu = last_domain * 8 + rank
    other = int(f.links.z_dev[gpu_link(f, last_domain * 8 + rank + 1)])  # the next rail's switch
    port = free_down_ports(f, other)[0]
    bad = edit(f, gpu_link(f, gpu), z_dev=other, z_port=port)
    r = validate.validate(bad)
    check = "rails.cross-rail" if arch == "rail-only" else "rails.leaf-alignment"
    hit = assert_named(r, check, name(f, gpu), "nic0")
    assert f"{name(f, other)}:p{port}" in hit.ports
    assert f"rail {rank}" in hit.message


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("arch", ARCHES)
def test_link_removed(fabrics, arch, where):
    """A leaf's uplink is missing: its empty uplink port is named, whatever the leaf's fill."""
    f = fabrics[arch]
    up = np.flatnonzero(f.links.tier == 2)
    i = pick(up, where)
    leaf, port = int(f.links.a_dev[i]), int(f.links.a_port[i])
    r = validate.validate(drop(f, i))
    checks = ("capacity.oversubscription", "capacity.striping", "capacity.provisioning")
    hit = assert_named(r, checks, name(f, leaf), f"p{port}")
    assert f"uplink port(s) without a cable: p{port}" in hit.message
    if where == "first":  # the first leaf is full: 8 GPUs down, 7 cables up
        over = assert_named(r, "capacity.oversubscription", name(f, leaf), f"p{port}")
        assert "8:7 oversubscribed" in over.message


@pytest.mark.parametrize("arch", ARCHES)
def test_link_removed_minimal_provisioning(arch):
    """With minimal provisioning an empty uplink port is normal; a removed uplink still shows."""
    spec = build_spec({"name": "m", "gpus": 504, "hb_domain": 8, "radix": 16, "provision": "minimal"})
    f = clos.generate(spec, arch)
    assert validate.validate(f).valid
    for i in (int(np.flatnonzero(f.links.tier == 2)[0]), int(np.flatnonzero(f.links.tier == 2)[-1])):
        leaf, port = int(f.links.a_dev[i]), int(f.links.a_port[i])
        r = validate.validate(drop(f, i))
        hit = assert_named(r, "capacity.striping", name(f, leaf), f"p{port}")
        assert name(f, int(f.links.z_dev[i])) in hit.message  # the upper switch it no longer reaches


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("arch", ARCHES)
def test_port_used_twice(fabrics, arch, where):
    """Two cables on one spine port."""
    f = fabrics[arch]
    up = np.flatnonzero(f.links.tier == 2)
    i = pick(up, where)
    spine = int(f.links.z_dev[i])
    j = int(np.flatnonzero((f.links.z_dev == spine) & (np.arange(len(f.links)) != i))[0])
    port = int(f.links.z_port[j])
    r = validate.validate(edit(f, i, z_port=port))
    hit = assert_named(r, "hygiene.port-reuse", name(f, spine), f"p{port}")
    assert len(hit.cables) == 2 and set(hit.cables) == {i + 1, j + 1}


@pytest.mark.parametrize("where", ("first", "last"))
@pytest.mark.parametrize("arch", ARCHES)
def test_leaf_cabled_to_leaf(fabrics, arch, where):
    """A cable between two leaves (free ports on both)."""
    f = fabrics[arch]
    leaves = sorted({int(f.links.z_dev[gpu_link(f, (f.spec.domains - 1) * 8 + r)]) for r in range(8)})
    x, y = (leaves[0], leaves[1]) if where == "first" else (leaves[-2], leaves[-1])
    px, py = free_down_ports(f, x)[0], free_down_ports(f, y)[0]
    r = validate.validate(add(f, x, px, y, py, 2))
    hit = assert_named(r, "tiers.adjacent", name(f, x), f"p{px}")
    assert f"{name(f, y)}:p{py}" in hit.ports
    assert "(leaf, tier 1)" in hit.message
    # the check's one-line detail says so too (it said "every cable joins adjacent tiers")
    assert "1 cable(s) skip or stay within a tier" in r.checks["tiers"] and "every cable joins" not in r.checks["tiers"]


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("arch", ARCHES)
def test_switch_over_its_radix(fabrics, arch, where):
    """One more cable on a full spine, on a port number past its radix."""
    f = fabrics[arch]
    spines = np.unique(f.links.z_dev[f.links.tier == 2])
    spine = pick(spines, where)
    leaf = int(f.links.z_dev[gpu_link(f, (f.spec.domains - 1) * 8)])
    lp = free_down_ports(f, leaf)[0]
    r = validate.validate(add(f, leaf, lp, spine, 17, 2))
    hit = assert_named(r, "hygiene.port-budget", name(f, spine), "p17")
    assert "17 cables on a 16-port switch" in hit.message
    assert_named(r, "hygiene.bad-port", name(f, spine), "p17")


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("arch", ARCHES)
def test_gpu_with_no_link(fabrics, arch, where):
    f = fabrics[arch]
    gpu = pick(np.arange(f.gpus), where)
    r = validate.validate(drop(f, gpu_link(f, gpu)))
    assert_named(r, "hygiene.gpu-no-link", name(f, gpu), "nic0")
    assert r.by_check("reach.unlinked")


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("arch", ARCHES)
def test_gpu_with_two_links(fabrics, arch, where):
    """A second cable from a GPU's NIC to a free port of another switch."""
    f = fabrics[arch]
    last = (f.spec.domains - 1) * 8
    gpu = last + {"first": 0, "middle": 3, "last": 7}[where]
    other = int(f.links.z_dev[gpu_link(f, last + (gpu - last + 1) % 8)])
    port = free_down_ports(f, other)[0]
    r = validate.validate(add(f, gpu, 0, other, port, 1))
    hit = assert_named(r, "hygiene.gpu-extra-link", name(f, gpu), "nic0")
    assert f"{name(f, other)}:p{port}" in hit.ports and "2 cables on plane 0" in hit.message


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("arch", ARCHES)
def test_unbalanced_striping(fabrics, arch, where):
    """Two leaves swap the upper ends of one uplink each: every port still used once."""
    f = fabrics[arch]
    L = f.links
    leaves = np.unique(L.a_dev[L.tier == 2])
    x = pick(leaves[:-1], where)
    y = int(leaves[np.searchsorted(leaves, x) + 1])
    i = int(np.flatnonzero((L.a_dev == x) & (L.tier == 2))[0])
    j = next(int(k) for k in np.flatnonzero((L.a_dev == y) & (L.tier == 2)) if L.z_dev[k] != L.z_dev[i])
    z, zp = L.z_dev.copy(), L.z_port.copy()
    z[i], z[j] = L.z_dev[j], L.z_dev[i]
    zp[i], zp[j] = L.z_port[j], L.z_port[i]
    r = validate.validate(with_links(f, z_dev=z, z_port=zp))
    hit = assert_named(r, "capacity.striping", name(f, x), f"p{int(L.a_port[i])}")
    assert name(f, int(L.z_dev[j])) in hit.message
    assert not errors(r, "hygiene.port-reuse")


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("arch", ARCHES)
def test_speed_mismatch(fabrics, arch, where):
    f = fabrics[arch]
    i = pick(np.arange(len(f.links)), where)
    r = validate.validate(edit(f, i, z_speed=800))
    z, zp = int(f.links.z_dev[i]), int(f.links.z_port[i])
    hit = assert_named(r, "hygiene.speed-mismatch", name(f, z), f"p{zp}")
    assert "400 Gb/s" in hit.message and "800 Gb/s" in hit.message and hit.cables == (i + 1,)


@pytest.mark.parametrize("arch", ARCHES)
def test_shared_switch_when_dedicated_asked(arch):
    """A wiring built with shared rail packing, checked against a spec that asks for dedicated rails."""
    gpus = 80 if arch == "rail-optimized" else 64  # a partly filled group / small rails pack rails on one switch
    field, alone = ("leaf_packing", "aligned") if arch == "rail-optimized" else ("rail_packing", "dedicated")
    shared = build_spec({"name": "s", "gpus": gpus, "hb_domain": 8, "radix": 16, field: "shared"})
    f = clos.generate(shared, arch)
    ok = validate.validate(f)
    assert ok.valid and all(x.severity == "info" for x in ok.by_check("rails.shared-switch"))
    f.spec = replace(shared, **{field: alone})
    r = validate.validate(f)
    multi = next(s for s in f.switches if len(s.rails) > 1)
    hit = assert_named(r, "rails.shared-switch", multi.name, "p1")
    assert f"{field}: {alone}" in hit.message and f"rail {multi.rails[0]} on" in hit.message and f"rail {multi.rails[1]} on" in hit.message


def test_cross_rail_uplink_in_rail_only(fabrics):
    """A rail-only leaf uplinked to a spine of another rail joins two rails' networks."""
    f = fabrics["rail-only"]
    L = f.links
    i = int(np.flatnonzero(L.tier == 2)[0])
    leaf = int(L.a_dev[i])
    other = next(int(d) for d in np.unique(L.z_dev[L.tier == 2]) if f.switch(int(d)).rails != f.switch(leaf).rails)
    port = int(L.z_port[np.flatnonzero(L.z_dev == other)[0]])
    r = validate.validate(edit(f, i, z_dev=other, z_port=port))
    hit = assert_named(r, "rails.cross-rail", name(f, leaf), f"p{int(L.a_port[i])}")
    assert f"{name(f, other)}:p{port}" in hit.ports


@pytest.mark.parametrize("arch", ARCHES)
def test_self_link_and_dangling_end(fabrics, arch):
    f = fabrics[arch]
    i = int(np.flatnonzero(f.links.tier == 2)[0])
    leaf = int(f.links.a_dev[i])
    r = validate.validate(edit(f, i, z_dev=leaf, z_port=1))
    assert errors(r, "hygiene.self-link")[0].devices == (name(f, leaf),)
    r = validate.validate(edit(f, i, z_dev=f.gpus + len(f.switches) + 5))
    hit = errors(r, "hygiene.dangling")[0]
    assert hit.cables == (i + 1,) and name(f, leaf) in hit.devices


@pytest.mark.parametrize("arch", ARCHES)
def test_missing_uplinks_split_the_network(arch):
    """Every uplink of one leaf gone: its GPUs are cut off (reach.partition) and bisection fails."""
    spec = build_spec({"name": "p", "gpus": 512, "hb_domain": 8, "radix": 16})  # both multi-tier
    f = clos.generate(spec, arch)
    leaf = int(f.links.z_dev[0])
    keep = ~((f.links.a_dev == leaf) & (f.links.tier == 2))
    r = validate.validate(Fabric(f.spec, f.arch, f.tiers, f.switches, f.links.take(keep), []))
    part = errors(r, "reach.partition")
    assert part and name(f, leaf) in part[0].devices
    assert errors(r, "capacity.bisection") and r.figures["bisection"]["full"] is False
    assert errors(r, "capacity.oversubscription")[0].devices == (name(f, leaf),)


@pytest.mark.parametrize("arch", ARCHES)
def test_ports_past_the_radix_are_told_apart(fabrics, arch):
    """Two cables on one port past the radix are a reuse; a port below 1 never merges with another switch's last port."""
    f = fabrics[arch]
    ss = np.flatnonzero((f.links.tier == 2) & (f.links.a_dev > f.gpus))  # the switch before is a switch too
    i, j, k = int(ss[0]), int(ss[1]), int(ss[2])
    lower = int(f.links.a_dev[i])
    radix = f.switch(lower).radix
    g = edit(edit(f, i, a_port=radix + 5), j, a_dev=lower, a_port=radix + 5)
    r = validate.validate(g, expected=f)
    assert_named(r, "hygiene.bad-port", name(f, lower), f"p{radix + 5}")
    reuse = assert_named(r, "hygiene.port-reuse", name(f, lower), f"p{radix + 5}")
    assert reuse.cables == tuple(sorted((i + 1, j + 1)))
    # p-2 on one switch, the largest port in the file on the switch before it: two bad ports, no reuse
    prev = lower - 1
    h = edit(edit(f, k, a_dev=prev, a_port=radix + 7), i, a_port=-2)
    r = validate.validate(h, expected=f)
    assert_named(r, "hygiene.bad-port", name(f, lower), "p-2")
    assert_named(r, "hygiene.bad-port", name(f, prev), f"p{radix + 7}")
    assert not errors(r, "hygiene.port-reuse"), [x.message for x in errors(r, "hygiene.port-reuse")]


def _nx_worst_hops(f: Fabric) -> int:
    """Reference: the largest switch count on a shortest path between two GPU-holding switches, over
    the adjacent-tier switch-to-switch cables (networkx, all pairs), plus one; 0 without a pair."""
    import networkx as nx

    n, L = f.gpus, f.links
    tier = np.array([0] * n + [s.tier for s in f.switches])
    a, z = L.a_dev, L.z_dev
    ok = (a >= 0) & (z >= 0) & (a < len(tier)) & (z < len(tier)) & (a != z)
    a, z = a[ok], z[ok]
    ss = (a >= n) & (z >= n) & (np.abs(tier[a] - tier[z]) == 1)
    g = nx.Graph()
    g.add_edges_from(zip(a[ss].tolist(), z[ss].tolist()))
    leaves = sorted({int(x) for x, y in zip(a.tolist(), z.tolist()) for x, y in ((x, y), (y, x)) if x >= n and y < n})
    worst = -1
    for x in leaves:
        if x not in g:
            continue
        d = nx.single_source_shortest_path_length(g, x)
        worst = max([worst] + [d[y] for y in leaves if y in d and y != x])
    return worst + 1 if worst >= 0 else 0


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("seed", range(4))
def test_worst_path_on_edited_wiring(fabrics, arch, seed):
    """The worst-case path of an edited wiring (cables dropped, a tier skipped, a GPU on two leaves, a
    leaf-to-leaf cable) is networkx's: the shared core adjacency keeps only adjacent-tier switch cables."""
    import random

    rng = random.Random(seed)
    f = fabrics[arch]
    n = f.gpus
    L = f.links
    keep = np.ones(len(L), bool)
    keep[[rng.randrange(len(L)) for _ in range(rng.randint(1, 12))]] = False
    g = Fabric(f.spec, f.arch, f.tiers, f.switches, L.take(keep), [])
    leaves = np.unique(L.z_dev[L.tier == 1])
    tops = np.flatnonzero(np.array([s.tier for s in f.switches]) == f.tiers) + n
    a, b = (int(x) for x in rng.sample(leaves.tolist(), 2))
    g = add(g, int(leaves[0]), 90, int(tops[-1]), 90, 2)  # skips a tier when there are three
    g = add(g, a, 91, b, 91, 2)  # leaf to leaf
    g = add(g, rng.randrange(n), 5, int(leaves[-1]), 92, 1)  # a second cable of some GPU
    r = validate.validate(g, expected=f)
    assert r.figures["worst_case_hops"]["switch_hops"] == _nx_worst_hops(g)
