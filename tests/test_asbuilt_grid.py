"""``topogen diff`` over a grid of factory floors with real faults planted among them.

Each case is one shape (the demo, 1:1 and 3:1 leaves, 2 and 3 tiers, both
architectures, planes, dual homing, a leaf pair), one reading of the floor and
one seed. The floor is the plan's own wiring with faults planted at places the
seed picks, each of a class installers make:

* two cables swapped on a leaf (their leaf ports crossed);
* a pair of GPUs swapped on one host (their adapters' cables crossed);
* a leaf's uplink on the wrong spine (a spine with a free port; else two leaves'
  uplinks crossed at the spines);
* a cable between two leaves that no cable joins in the plan;
* a cable on the wrong port of the right switch (a leaf pair's ISL where there is one);
* a missing cable.

The floor is then read the way a real fabric reports itself, with nothing of the
plan's names or GUIDs: ``ib`` (ibnetdiscover: factory switch descriptions
``MF0;switch-xxxx:MQM9700/U1``, adapters ``hbNN mlx5_K``, fresh hardware GUIDs),
``ib-known`` (the same with the adapters' GUIDs known), ``ib-partial`` (a
third of the switches already under their plan names), ``ib-dgx`` (adapters
numbered as a DGX H100 numbers its compute ports), ``lldp`` (``lldpctl -f json``
per device: switches under factory host names, host interfaces under their OS
names, in an order unlike the GPUs').

Asserted for every case: each planted fault reported exactly once, of its kind,
at its devices and ports in the plan's names; nothing else reported (no move
order for a cable whose only difference is a name); one ``rename`` per switch,
to the plan name it truly has; no choice left undecided (the wiring decides
every device of these floors). A floor whose alike subnets the wiring cannot
tell apart is said once, with what decides it (:func:`test_alike_subnets_said_once`).
"""

from __future__ import annotations

import random
import re
import zlib
from pathlib import Path

import numpy as np
import pytest
from test_asbuilt import Floor, _write_topo
from test_asbuilt_factory import diff, floor_files, moves
from test_asbuilt_floor import lldp_dir

from topogen import pipeline
from topogen.exports.infiniband import ibnetdiscover as exporter
from topogen.exports.installers.cabling import write_cabling
from topogen.fabric.model import LINK_COLUMNS, Fabric, LinkTable
from topogen.spec.cluster import build_spec, load_spec

SHAPES = {
    "demo": {"preset": "demo", "arch": "rail-optimized"},
    "demo-rail-only": {"preset": "demo", "arch": "rail-only"},
    "ro-1:1": {"arch": "rail-optimized", "gpus": 96, "hb_domain": 8, "radix": 16},
    "ro-3:1": {"arch": "rail-optimized", "gpus": 144, "hb_domain": 8, "radix": 16, "oversubscription": "3:1"},
    "ro-3tier": {"arch": "rail-optimized", "gpus": 160, "hb_domain": 8, "radix": 16, "rail_packing": "dedicated"},
    "rol-1:1": {"arch": "rail-only", "gpus": 80, "hb_domain": 8, "radix": 8},
    "rol-3:1": {"arch": "rail-only", "gpus": 112, "hb_domain": 8, "radix": 16, "oversubscription": "3:1"},
    "ro-planes": {"arch": "rail-optimized", "gpus": 96, "hb_domain": 8, "radix": 16, "nic_ports": 2},
    "rol-planes": {"arch": "rail-only", "gpus": 80, "hb_domain": 8, "radix": 8, "nic_ports": 2},
    "ro-dual": {"arch": "rail-optimized", "gpus": 48, "hb_domain": 8, "radix": 32, "nic_ports": 2, "homing": "dual"},
    "leaf-pair": {"arch": "rail-optimized", "gpus": 48, "hb_domain": 8, "radix": 64, "design": "leaf-pair"},
}
READINGS = ("ib", "ib-known", "ib-partial", "ib-dgx", "lldp")
SEEDS = (1, 2, 3)
DGX_H100 = [0, 3, 4, 5, 6, 9, 10, 11]  # the compute ports' mlx5_<n> of a DGX H100, GPU 0 first
PLANNED_CABLES = {"swapped": 2, "wrong-device": 1, "wrong-port": 1, "missing": 1, "unexpected": 0}  # planned cables a fault takes from 'identical'
DGX_BUS = [24, 64, 79, 94, 154, 192, 206, 220]  # a DGX H100's compute ports' PCI buses, GPU 0 first: the OS names them enp<bus>s0np<port>


class GridFloor(Floor):
    """:class:`test_asbuilt.Floor` over every cable (a leaf pair's ISLs too), with same-tier cables back among the ISLs."""

    def __init__(self, fabric: Fabric):
        super().__init__(fabric)
        table = fabric.cable_table()
        self.cols = {c: getattr(table, c).copy() for c in LINK_COLUMNS}
        n = fabric.gpus
        self.tier = np.asarray([s.tier for s in fabric.switches], np.int64)
        self.subnet = {int(d): sub.name for sub in exporter.subnets(fabric) for d in sub.switch_ids}
        self.n = n

    def tier_of(self, dev: int) -> int:
        return int(self.tier[dev - self.n]) if dev >= self.n else 0

    def fabric_as_built(self) -> Fabric:
        f, n = self.fabric, self.n
        a, z = self.cols["a_dev"], self.cols["z_dev"]
        same = (a >= n) & (z >= n) & (self.tier[np.maximum(a - n, 0)] == self.tier[np.maximum(z - n, 0)])
        links = LinkTable.from_columns(**{c: v[~same] for c, v in self.cols.items()})
        isls = LinkTable.from_columns(**{c: v[same] for c, v in self.cols.items()})
        return Fabric(f.spec, f.arch, f.tiers, f.switches, links, list(f.notes), f.reserved, isls)

    def untouched(self, i: int) -> bool:
        return not any((e.device, e.port) in self.touched for e in self.ends(i))

    def rows(self, mask: np.ndarray) -> list[int]:
        return [int(i) for i in np.flatnonzero(mask) if self.untouched(int(i))]


def plant(fl: GridFloor, rnd: random.Random) -> list[str]:
    """Plant the fault classes the shape has room for, at places ``rnd`` picks; return the classes planted."""
    n = fl.n
    a, z = fl.cols["a_dev"], fl.cols["z_dev"]
    ztier = np.asarray([fl.tier_of(int(d)) for d in z])
    atier = np.asarray([fl.tier_of(int(d)) for d in a])
    planted = []
    # two cables swapped on a leaf
    gpu_rows = (a < n) & (ztier == 1)
    by_leaf: dict[int, list[int]] = {}
    for i in fl.rows(gpu_rows):
        by_leaf.setdefault(int(z[i]), []).append(i)
    leaf = rnd.choice(sorted(d for d, r in by_leaf.items() if len(r) >= 2))
    i, j = rnd.sample(by_leaf[leaf], 2)
    fl.swap("two cables swapped on a leaf", i, j, None, ports_only=True)
    planted.append("leaf-swap")
    # a pair of GPUs swapped on one host: each NIC port of one crossed with the same port of the other
    k = fl.fabric.hb_domain
    hosts = sorted({int(d) // k for d in a[gpu_rows]})
    for _ in range(50):
        h = rnd.choice(hosts)
        g1, g2 = rnd.sample(range(h * k, h * k + k), 2)
        pairs = []
        for port in sorted(set(fl.cols["a_port"][(a == g1)].tolist())):
            r1 = [i for i in fl.rows((a == g1) & (fl.cols["a_port"] == port))]
            r2 = [i for i in fl.rows((a == g2) & (fl.cols["a_port"] == port))]
            if len(r1) != 1 or len(r2) != 1 or z[r1[0]] == z[r2[0]]:
                pairs = []
                break
            pairs.append((r1[0], r2[0]))
        if pairs:
            for r1, r2 in pairs:
                fl.swap(f"GPUs {g1 % k} and {g2 % k} of host {h} swapped", r1, r2, "error")
            planted.append("host-swap")
            break
    # a leaf's uplink on the wrong spine
    ups = fl.rows((atier == 1) & (ztier == 2))
    if ups:
        i = rnd.choice(ups)
        here = int(z[i])
        spines = [s.name for s in fl.fabric.switches if s.tier == 2 and fl.ids[s.name] != here and fl.subnet.get(fl.ids[s.name]) == fl.subnet.get(here) and fl.has_free(s.name)]
        if spines:
            fl.move_z("uplink to the wrong spine", i, rnd.choice(spines), "wrong-device")
        else:
            others = [j for j in ups if j != i and a[j] != a[i] and z[j] != z[i] and fl.subnet.get(int(z[j])) == fl.subnet.get(here)]
            j = rnd.choice(others)
            fl.swap("two leaves' uplinks crossed at the spines", i, j, None)
        planted.append("wrong-spine")
    # a cable between two leaves no cable joins in the plan
    leaves = [s.name for s in fl.fabric.switches if s.tier == 1 and fl.has_free(s.name)]
    joined = {(int(x), int(y)) for x, y in zip(a, z)}
    pairs = [(p, q) for p in leaves for q in leaves if p < q and fl.subnet.get(fl.ids[p]) == fl.subnet.get(fl.ids[q]) and (fl.ids[p], fl.ids[q]) not in joined and (fl.ids[q], fl.ids[p]) not in joined]
    if pairs:
        p, q = rnd.choice(pairs)
        fl.add("a cable between two leaves", p, q)
        planted.append("leaf-leaf")
    # a cable on the wrong port of the right switch (a leaf pair's ISL where there is one)
    isl = fl.rows((atier == 1) & (ztier == 1))
    moved = [i for i in (isl or fl.rows(ztier >= 1)) if fl.has_free(fl.name(int(z[i])))]
    if moved:
        i = rnd.choice(moved)
        fl.move_z("a cable on the wrong port", i, fl.name(int(z[i])), "wrong-port")
        planted.append("wrong-port")
    # a missing cable (last: it renumbers the rows)
    i = rnd.choice(fl.rows(np.ones(len(fl.cols["a_dev"]), bool)))
    fl.drop("missing cable", i)
    planted.append("missing")
    return planted


_BUILT: dict[str, tuple] = {}


def built(key: str, tmp_path_factory) -> tuple[Path, Fabric]:
    if key not in _BUILT:
        data = dict(SHAPES[key])
        arch = data.pop("arch")
        spec = load_spec(data["preset"], {}) if "preset" in data else build_spec({"name": "grid", "arch": arch, **data})
        ctx = pipeline.build(spec)
        out = tmp_path_factory.mktemp(key.replace(":", "")) / "grid"
        pipeline.write_outputs(ctx, out, ["cabling", "ibnetdiscover"])
        _BUILT[key] = (out, ctx.fabrics[arch])
    return _BUILT[key]


def factory_host(name: str) -> str:
    return "sn-" + format(zlib.crc32(name.encode()), "08x")


def read_floor(fl: GridFloor, reading: str, dest: Path, seed: int) -> tuple[list[Path], dict[str, str]]:
    """The floor's files as ``reading`` reports them, and the truth: each switch's name as read -> its plan name."""
    fabric = fl.fabric_as_built()
    if reading == "lldp":
        cabling = dest / "as-built.csv"
        write_cabling(fabric, cabling)
        d = lldp_dir(cabling, dest / "lldp", switch_name=factory_host, host_if=lambda rank, plane: f"enp{DGX_BUS[rank]}s0np{plane}")
        return [d], {factory_host(s.name): s.name for s in fabric.switches}
    files, truth = floor_files(_write_topo(fabric, dest / "plan-names"), dest / "floor", seed, adapters_known=reading == "ib-known")
    if reading == "ib-partial":  # a third of the switches already carry their plan names
        keep = set(random.Random(seed).sample(sorted(truth), len(truth) // 3))
        for p in files:
            p.write_text(re.sub(r'"(MF0;switch-[0-9a-f]{4}:MQM9700/U1)"', lambda m: f'"{truth[m.group(1)]}"' if m.group(1) in keep else m.group(0), p.read_text()))
        truth = {k: v for k, v in truth.items() if k not in keep}
    if reading == "ib-dgx":
        for p in files:
            p.write_text(re.sub(r"(hb\d+) mlx5_(\d+)", lambda m: f"{m.group(1)} mlx5_{DGX_H100[int(m.group(2))]}", p.read_text()))
    return files, truth


def cable_ends(d: dict) -> set[str]:
    return {x for c in d["planned"] + d["found"] for x in (c["a"], c["z"])}


CASES = [pytest.param(k, r, s, id=f"{k}-{r}-{s}") for k in SHAPES for r in READINGS for s in SEEDS if not (r == "ib-dgx" and "planes" in k or r == "ib-dgx" and "dual" in k)]


@pytest.mark.parametrize("key, reading, seed", CASES)
def test_faults_on_a_factory_floor(tmp_path_factory, tmp_path, key, reading, seed):
    out, fabric = built(key, tmp_path_factory)
    fl = GridFloor(fabric)
    rnd = random.Random(zlib.crc32(f"{key}/{seed}".encode()))
    planted = plant(fl, rnd)
    assert {"leaf-swap", "host-swap", "missing"} <= set(planted)
    files, truth = read_floor(fl, reading, tmp_path, seed)
    arch = fabric.arch
    code, r = diff(out, "--arch", arch, *files) if reading != "lldp" else diff(out / arch / "cabling.csv", *files)
    assert code == 1
    devs = r["deviations"]
    for fault in fl.faults:
        want = {str(e) for e in fault.ends}
        hits = [d for d in devs if cable_ends(d) == want]
        assert len(hits) == 1, f"{fault.name}: {sorted(want)} not reported once; got {[(d['kind'], sorted(cable_ends(d))) for d in devs]}"
        assert hits[0]["kind"] == fault.kind, f"{fault.name}: reported as {hits[0]['kind']}"
        if fault.severity:
            assert hits[0]["severity"] == fault.severity, f"{fault.name}: {hits[0]['severity']} ({hits[0]['because']})"
        assert hits[0]["fix"]
    assert len(devs) == len(fl.faults), f"reported beyond the planted faults: {[(d['kind'], sorted(cable_ends(d))) for d in devs if not any(cable_ends(d) == {str(e) for e in f.ends} for f in fl.faults)]}"
    got = {x["found"]: x["plan"] for x in r["renames"]}
    assert got == truth, {k: (got.get(k), v) for k, v in truth.items() if got.get(k) != v}
    assert r["undecided"] == []
    assert r["identical"] == len(fabric.cable_table()) - sum(PLANNED_CABLES[f.kind] for f in fl.faults)


@pytest.mark.parametrize("seed", SEEDS)
def test_alike_subnets_said_once(tmp_path_factory, tmp_path, seed):
    """Rail-pair subnets with nothing named (no host names, one description for all) are alike: one 'undecided' finding saying what decides it, no move order."""
    out, fabric = built("demo-rail-only", tmp_path_factory)
    files, _ = floor_files(list((out / "rail-only" / "ibnetdiscover").glob("*.topo")), tmp_path / "floor", seed, anonymous=True)
    code, r = diff(out, "--arch", "rail-only", *files)
    assert code == 1 and moves(r) == []
    assert len(r["undecided"]) == 1
    assert "what decides it" in r["undecided"][0]["text"]


def test_grid_covers_every_shape_reading_and_fault(tmp_path_factory):
    """The grid is the size the module says (DGX numbering only where a node has 8 single-port GPUs); every fault class is planted on several shapes."""
    assert len(CASES) == len(SEEDS) * (len(SHAPES) * len(READINGS) - 3)
    assert {c.values[0] for c in CASES} == set(SHAPES) and {c.values[1] for c in CASES} == set(READINGS)
    shapes_of: dict[str, set[str]] = {}
    for key in SHAPES:
        for seed in SEEDS:
            for cls in plant(GridFloor(built(key, tmp_path_factory)[1]), random.Random(zlib.crc32(f"{key}/{seed}".encode()))):
                shapes_of.setdefault(cls, set()).add(key)
    assert set(shapes_of) == {"leaf-swap", "host-swap", "wrong-spine", "leaf-leaf", "wrong-port", "missing"}
    assert all(len(v) >= 5 for v in shapes_of.values()), {k: len(v) for k, v in shapes_of.items()}
    assert "leaf-pair" in shapes_of["wrong-port"]  # an ISL on the wrong port
