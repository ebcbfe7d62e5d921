"""``topogen diff`` of a floor whose hosts carry the site's names (a spec's ``naming:``).

The plan is built with host, GPU, interface and switch templates (the demo in
both architectures, a 2-plane build, and HB domains of 16 GPUs on trays of 4
named by domain and slot); its wiring gets a real fault planted
(two cables swapped on a leaf, a pair of GPUs swapped on one host, a missing
cable...: :func:`test_asbuilt_grid.plant`), then it is read the way the floor
reports it: ibnetdiscover with factory switch descriptions, adapters described
the OFED way under the site's host names (``sjc1-dgx007 mlx5_3``) and fresh
hardware GUIDs; LLDP per host file named by the site's host name, its
interfaces by the site's interface template (or by the OS, ``enp24s0np0``), the
switches under factory host names. Asserted: every planted fault found once at
the plan's (site's) names, nothing else reported, one rename per switch to its
plan name, no choice left open.
"""

from __future__ import annotations

import random
import re
import zlib
from pathlib import Path

import pytest
from test_asbuilt import _write_topo
from test_asbuilt_factory import diff, floor_files
from test_asbuilt_floor import lldp_dir
from test_asbuilt_grid import DGX_BUS, PLANNED_CABLES, GridFloor, cable_ends, factory_host, plant

from topogen import pipeline
from topogen.asbuilt.identity import Hosts
from topogen.exports.installers.cabling import write_cabling
from topogen.fabric.naming import GpuNames, NodeNames
from topogen.spec.cluster import build_spec, load_spec

SITE = {"site": "sjc1", "host": "{site}-dgx{index+1:03}", "gpu": "{host}-gpu{local}", "interface": "gpu{rank}np{port}", "leaf": "{site}-p{plane}-leaf{group:02}-r{rail}{pos}", "spine": "{site}-p{plane}-spine{index:03}", "core": "{site}-p{plane}-core{index:03}"}
POD = {"site": "pod1", "host": "{site}-dgx{index:03}", "gpu": "g{domain:04}x{rank:02}", "interface": "ib{local}p{plane}", "leaf": "lf-{plane}-{index:04}"}
TRAYS = {"site": "nvl1", "host": "{site}-c{domain:02}t{slot}", "gpu": "{host}-g{local}", "interface": "g{local}p{port}"}
SHAPES = {
    "demo": ("rail-optimized", {"preset": "demo"}, SITE),
    "demo-rail-only": ("rail-only", {"preset": "demo"}, POD),
    "planes": ("rail-optimized", {"gpus": 64, "hb_domain": 8, "radix": 16, "planes": 2}, SITE),
    "trays": ("rail-optimized", {"gpus": 64, "hb_domain": 16, "gpus_per_node": 4, "radix": 16}, TRAYS),
}
READINGS = ("ib", "lldp", "lldp-os")
_BUILT: dict[str, tuple] = {}


def built(key: str, tmp_path_factory):
    if key not in _BUILT:
        arch, data, naming = SHAPES[key]
        if "preset" in data:
            spec = load_spec(data["preset"], {"naming": naming, "arch": arch})
        else:
            spec = build_spec({"name": "named", "arch": arch, **data, "naming": naming})
        assert spec.naming is not None
        ctx = pipeline.build(spec)
        out = tmp_path_factory.mktemp(key) / "named"
        pipeline.write_outputs(ctx, out, ["cabling", "ibnetdiscover"])
        _BUILT[key] = (out, ctx.fabrics[arch], spec)
    return _BUILT[key]


class NamedFloor(GridFloor):
    """The grid's floor with the GPUs under the spec's names."""

    def __init__(self, fabric, spec):
        super().__init__(fabric)
        self.gn = GpuNames.of(spec)


def host_of(spec, gpu: str) -> tuple[str, int, int]:
    """(host name, GPU index on the host, rank in its domain) of a GPU name of the site."""
    g = GpuNames.of(spec).parse(gpu)
    nn = NodeNames.of(spec)
    return nn.name(g // nn.per_node), g % nn.per_node, g % spec.hb_domain


def read_floor(fl: NamedFloor, spec, reading: str, dest: Path, seed: int) -> tuple[list[Path], dict[str, str]]:
    """The floor's files as ``reading`` reports them (hosts under the site's names), and each switch's name as read -> its plan name."""
    fabric = fl.fabric_as_built()
    gn, nn = GpuNames.of(spec), NodeNames.of(spec)
    if reading.startswith("lldp"):
        cabling = dest / "as-built.csv"
        write_cabling(fabric, cabling)

        def gpu_end(dev: str, port: str):
            if gn.parse(dev) is None:
                return None
            host, local, rank = host_of(spec, dev)
            return host, (nn.interface(rank, int(port[3:])) if reading == "lldp" else f"enp{DGX_BUS[local]}s0np{port[3:]}")

        d = lldp_dir(cabling, dest / "lldp", switch_name=factory_host, gpu_end=gpu_end)
        assert {p.stem for p in d.iterdir()} >= set(nn.names())  # one file per host, named as the site names it
        return [d], {factory_host(s.name): s.name for s in fabric.switches}
    files, truth = floor_files(_write_topo(fabric, dest / "plan-names"), dest / "floor", seed)
    adapters = {k: v for k, v in truth.items() if gn.parse(v) is not None}  # the factory helper knows topogen's GPU names only: describe the site's the OFED way

    def ofed(m: re.Match) -> str:
        if m.group(1) not in adapters:
            return m.group(0)
        host, local, _rank = host_of(spec, adapters[m.group(1)])
        return f'"{host} mlx5_{local}"'

    for p in files:
        p.write_text(re.sub(r'"(MF0;switch-[0-9a-f]{4}:MQM9700/U1)"', ofed, p.read_text()))
    text = "".join(p.read_text() for p in files)
    assert f'"{nn.name(0)} mlx5_0"' in text and "hb0" not in text
    return files, {k: v for k, v in truth.items() if k not in adapters}


@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize("key", sorted(SHAPES))
def test_faults_on_a_floor_of_site_names(tmp_path_factory, tmp_path, key, reading):
    out, fabric, spec = built(key, tmp_path_factory)
    fl = NamedFloor(fabric, spec)
    planted = plant(fl, random.Random(zlib.crc32(f"{key}/named".encode())))
    assert {"leaf-swap", "host-swap", "missing"} <= set(planted)
    files, truth = read_floor(fl, spec, reading, tmp_path, 1)
    arch = fabric.arch
    code, r = diff(out, "--arch", arch, *files)
    assert code == 1
    devs = r["deviations"]
    for fault in fl.faults:
        want = {str(e) for e in fault.ends}
        assert not any(e.startswith("hb") for e in want)  # the site's names, not topogen's
        hits = [d for d in devs if cable_ends(d) == want]
        assert len(hits) == 1, f"{fault.name}: {sorted(want)} not reported once; got {[(d['kind'], sorted(cable_ends(d))) for d in devs]}"
        assert hits[0]["kind"] == fault.kind
        if fault.severity:
            assert hits[0]["severity"] == fault.severity
    assert len(devs) == len(fl.faults), [(d["kind"], sorted(cable_ends(d))) for d in devs]
    assert {x["found"]: x["plan"] for x in r["renames"]} == truth
    assert r["undecided"] == []
    assert r["identical"] == len(fabric.cable_table()) - sum(PLANNED_CABLES[f.kind] for f in fl.faults)


def test_hosts_read_the_site_names():
    """:class:`Hosts` reads a GPU, a host and a host's interface by the spec's templates, and topogen's names without them."""
    spec = build_spec({"name": "n", "gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-optimized", "planes": 2, "naming": SITE})
    h = Hosts(spec)
    assert h.gpu("sjc1-dgx003-gpu5") == (2, 5) and h.gpu("hb02-gpu5") is None
    assert h.host("sjc1-dgx003 mlx5_4") == 2 and h.node("sjc1-dgx009") is None  # 8 hosts
    assert h.nic("sjc1-dgx003", "gpu5np1").device == "sjc1-dgx003-gpu5" and h.nic("sjc1-dgx003", "gpu5np1").port == "nic1"
    assert h.nic("sjc1-dgx003", "gpu9np0") is None and h.nic("sjc1-dgx003", "enp24s0np0") is None
    d = Hosts(None)
    assert d.gpu("hb02-gpu5") == ("hb02", 5) and d.host("hb02 mlx5_4") == "hb02" and d.node("hb003-n17") == ("hb003", 17)
    assert Hosts(build_spec({"name": "n", "gpus": 64, "hb_domain": 8, "radix": 16})).templated is False


def test_topogen_host_names_with_site_gpu_and_interface_names(tmp_path):
    """Hosts keep topogen's names (``hb00``), GPUs and interfaces the site's: an LLDP interface the reader took the default way is read again by the templates."""
    data = {"name": "g", "gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-optimized", "naming": {"gpu": "gpu-{index:06}", "interface": "eth{local}p{port}"}}
    spec = build_spec(data)
    ctx = pipeline.build(spec)
    out = tmp_path / "g"
    pipeline.write_outputs(ctx, out, ["cabling"])
    nn = NodeNames.of(spec)
    for ifname in ("iface", "default"):

        def gpu_end(dev: str, port: str):
            host, local, rank = host_of(spec, dev) if GpuNames.of(spec).parse(dev) is not None else (None, 0, 0)
            return None if host is None else (host, nn.interface(rank, int(port[3:])) if ifname == "iface" else f"gpu{rank}-nic{port[3:]}")

        d = lldp_dir(out / "rail-optimized" / "cabling.csv", tmp_path / f"lldp-{ifname}", switch_name=factory_host, gpu_end=gpu_end)
        assert (d / "hb00.json").is_file()
        code, r = diff(out, d)
        assert r["deviations"] == [], [(x["kind"], sorted(cable_ends(x))) for x in r["deviations"]][:4]
        assert len(r["renames"]) == len(ctx.fabrics["rail-optimized"].switches) and r["undecided"] == []
        assert r["identical"] == len(ctx.fabrics["rail-optimized"].cable_table())
