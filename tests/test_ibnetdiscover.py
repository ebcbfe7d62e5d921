"""The plan in ibnetdiscover format: read back, simulated with ibsim, routed by opensm, rediscovered.

Unit tests read the exported ``.topo`` files back with topogen's own reader over
a grid (both architectures, shared and dedicated rails, two planes, 1- to
3-tier). Integration tests run the real tools: ``ibsim -s`` simulates each
subnet file, ``opensm -o -R ftree`` must report "ftree tables configured on all
switches" (a one-switch rail is no fat tree: opensm says so and routes it with
minhop), and ``ibnetdiscover`` run against the simulation must find exactly the
plan's cables.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ibsim_fabric import MISSING, SKIP_REASON, discover, ibsim_options, route_ftree, simulated

from topogen import pipeline
from topogen.asbuilt import cabling as plan_reader
from topogen.asbuilt import ibnetdiscover as reader
from topogen.exports.infiniband import ibnetdiscover as exporter
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

GRID = [
    # gpus, hb_domain, radix, planes, rail_packing
    (64, 8, 16, 1, "shared"),  # demo: 2-tier rail-optimized, rail-only rails share switches
    (96, 8, 16, 2, "shared"),  # two planes, partial group
    (128, 8, 8, 1, "dedicated"),  # 3-tier rail-optimized, 2-tier rails
    (288, 72, 16, 1, "shared"),  # NVL72-like domains
    (504, 8, 16, 1, "shared", "dual"),  # dual-homed: two CA ports per GPU on a leaf pair; 3 tiers
]


def _build(gpus, hb, radix, planes=1, packing="shared", homing="planes", arch="both"):
    spec = build_spec({"name": "ib", "gpus": gpus, "hb_domain": hb, "radix": radix, "planes": planes, "rail_packing": packing, "homing": homing, "arch": arch})
    return pipeline.build(spec)


def _keys(found) -> set:
    return {c.key() for c in found.cables}


@pytest.fixture(scope="module", params=GRID, ids=lambda p: "n{}-k{}-r{}-pl{}-{}".format(*p) + "".join(f"-{x}" for x in p[5:]))
def exported(request, tmp_path_factory):
    ctx = _build(*request.param)
    out = tmp_path_factory.mktemp("ib")
    paths = exporter.export(ctx, out)
    return ctx, out, paths


def test_files_read_back_to_the_plan(exported):
    ctx, out, _ = exported
    for arch, fabric in ctx.fabrics.items():
        files = sorted((out / arch / "ibnetdiscover").glob("*.topo"))
        found = reader.read(files)
        plan = plan_reader.from_fabric(fabric)
        assert len(found.cables) == len(fabric.links)
        assert _keys(found) == _keys(plan)


def test_one_file_per_isolated_subnet(exported):
    ctx, out, _ = exported
    for arch, fabric in ctx.fabrics.items():
        files = sorted((out / arch / "ibnetdiscover").glob("*.topo"))
        subs = exporter.subnets(fabric)
        assert sorted(f.stem for f in files) == sorted(s.name for s in subs)
        assert sum(len(s.links) for s in subs) == len(fabric.links)
        seen: dict[str, str] = {}
        for f in files:  # no device appears in two subnets, except GPUs with one NIC port per plane
            for name in set(re.findall(r'^Switch\t\d+ "[^"]+"\t\t# "([^"]+)"', f.read_text(), re.M)):
                assert name not in seen, f"{name} in {seen.get(name)} and {f.name}"
                seen[name] = f.name
        if arch == "rail-only":
            assert len(files) == len({s.group + s.plane * 10_000 for s in fabric.switches})
        else:
            assert len(files) == fabric.spec.planes


def test_deterministic_and_guids_from_device_ids(tmp_path):
    ctx = _build(64, 8, 16)
    a = exporter.export(ctx, tmp_path / "a")
    b = exporter.export(ctx, tmp_path / "b")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    text = (tmp_path / "a" / "rail-optimized" / "ibnetdiscover" / "fabric.topo").read_text()
    n = ctx.spec.gpus
    assert f'Switch\t16 "S-{exporter.guid(n):016x}"\t\t# "leaf-g0-r0"' in text
    assert f'Ca\t1 "H-{exporter.guid(0):016x}"\t\t# "hb00-gpu0"' in text


def test_size_note_above_the_simulator_limit(tmp_path):
    ctx = _build(1024, 8, 16, arch="rail-optimized")  # 320 switches
    exporter.export(ctx, tmp_path)
    head = (tmp_path / "rail-optimized" / "ibnetdiscover" / "fabric.topo").read_text()[:600]
    assert "exceeds ibsim's default tables" in head
    assert ibsim_options(tmp_path / "rail-optimized" / "ibnetdiscover" / "fabric.topo")[:2] == ["-S", "320"]
    assert any("exceed ibsim's default tables" in m for m in ctx.messages)
    ctx = _build(64, 8, 16)
    exporter.export(ctx, tmp_path / "small")
    assert not ctx.messages


def test_malformed_file_names_the_line(tmp_path):
    ctx = _build(64, 8, 16, arch="rail-optimized")
    exporter.export(ctx, tmp_path)
    f = tmp_path / "rail-optimized" / "ibnetdiscover" / "fabric.topo"
    lines = f.read_text().splitlines()
    lines[9] = "[3  garbage"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as exc:
        reader.read([f])
    assert exc.value.problems[0].path == "fabric.topo line 10"
    assert "not an ibnetdiscover line" in exc.value.problems[0].message


def test_reads_real_ibnetdiscover_shapes(tmp_path):
    """Lines as the real tool prints them: key=value lines, port GUIDs, CA lines with the lid first."""
    f = tmp_path / "real.topo"
    f.write_text(
        "#\n# Topology file: generated on Wed Nov 25 11:25:58 2026\n#\nvendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0x200001\nswitchguid=0x200001(200001)\n"
        'Switch\t64 "S-0000000000200001"\t\t# "leaf-g0-r0" enhanced port 0 lid 2 lmc 0\n'
        '[1]\t"H-0000000000100004"[1](100005) \t\t# "hb00-gpu0 mlx5_0" lid 4 4xNDR\n'
        '[33]\t"S-0000000000200002"[1]\t\t# "spine-0" lid 3 4xNDR\n\n'
        'caguid=0x100004\nCa\t1 "H-0000000000100004"\t\t# "hb00-gpu0 mlx5_0"\n'
        '[1](100005) \t"S-0000000000200001"[1]\t\t# lid 4 lmc 0 "leaf-g0-r0" lid 2 4xNDR\n'
    )
    found = reader.read([f])  # the node description as read; topogen diff matches its first word to the plan's GPU
    assert sorted(str(c.a) + "-" + str(c.z) for c in found.cables) == ["leaf-g0-r0:p1-hb00-gpu0 mlx5_0:nic0", "leaf-g0-r0:p33-spine-0:p1"]
    assert found.ids["hb00-gpu0 mlx5_0"] == "guid 0x0000000000100004" and found.ids["leaf-g0-r0"] == "guid 0x0000000000200001"
    assert {c.speeds for c in found.cables} == {(400, 400)}


# --- the real tools ---------------------------------------------------------------------------

needs_tools = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)

SIM_CASES = [
    # gpus, hb_domain, radix, arch: 2- and 3-tier of both architectures, and once at ibsim's 256 switches
    (64, 8, 16, "rail-optimized"),  # 2-tier, 12 switches
    (128, 8, 8, "rail-optimized"),  # 3-tier, 80 switches
    (768, 8, 16, "rail-optimized"),  # 3-tier, 256 switches: ibsim's default limit
    (256, 8, 16, "rail-only"),  # 8 rails of 2 tiers
    (64, 8, 16, "rail-only"),  # rails of one switch each (shared by two rails)
    (64, 8, 16, "rail-optimized", "dual"),  # dual-homed: each CA's two ports on a leaf pair, 2 tiers
]


@needs_tools
@pytest.mark.parametrize("case", SIM_CASES, ids=lambda c: "n{}-k{}-r{}-{}".format(*c) + "".join(f"-{x}" for x in c[4:]))
def test_ibsim_opensm_ftree_and_rediscovery(case, tmp_path):
    gpus, hb, radix, arch, *homing = case
    ctx = _build(gpus, hb, radix, homing=(homing or ["planes"])[0], arch=arch)
    fabric = ctx.fabrics[arch]
    exporter.export(ctx, tmp_path)
    plan = plan_reader.from_fabric(fabric)
    subs = {s.name: s for s in exporter.subnets(fabric)}
    files = sorted((tmp_path / arch / "ibnetdiscover").glob("*.topo"))
    assert files
    rediscovered = set()
    for topo in files:
        work = tmp_path / topo.stem
        work.mkdir()
        single = subs[topo.stem].switches == 1
        with simulated(topo, work) as env:
            log = route_ftree(env, work)
            if single:
                assert "Fabric has 1 switches - topology is not fat-tree" in log
                assert "minhop tables configured on all switches" in log
            else:
                assert "ftree tables configured on all switches" in log, log[-3000:]
            found = reader.read([discover(env, work / "discovered.topo")])
        mine = _keys(reader.read([topo]))
        assert _keys(found) == mine, f"{topo.name}: ibnetdiscover differs from the plan"
        rediscovered |= _keys(found)
    assert rediscovered == _keys(plan)
