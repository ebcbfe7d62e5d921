"""NVIDIA's published designs, size by size: switch counts per model per network from the rules.

Every number in this file is a published one (the source named beside it); none is in the
code or the presets, which state rules only. Each size is built through the same path as
``topogen build PRESET --scalable-units N`` (the preset's SU count overridden, the spec
otherwise as shipped) and counted from the explicit wiring's bill of materials: the compute
fabric's switches by its catalog SKU, the other networks' by their BOM lines (a collapsed
core's leaves are the compute fabric's boxes, counted there once).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from topogen import pipeline
from topogen.fabric import networks as nw
from topogen.spec.cluster import load_spec
from topogen.spec.units import gpus_for_units
from topogen.util.errors import InputError

ARCH = "rail-optimized"


def build(preset: str, sus: int):
    """``topogen build PRESET --scalable-units SUS --arch rail-optimized``, in process."""
    spec = load_spec(preset, {"arch": ARCH})
    return pipeline.build(load_spec(preset, {"arch": ARCH, "gpus": gpus_for_units(spec, sus)}))


def models(ctx) -> dict[str, dict[str, int]]:
    """Switches per network, per catalog SKU: ``{"compute": {"QM9700": 48}, "oob": {...}, ...}``."""
    out: dict[str, dict[str, int]] = {}
    compute = Counter()
    for line in ctx.boms[ARCH].lines:
        if line.category == "switch":
            compute[line.sku] += line.quantity
    out["compute"] = dict(compute)
    for b in ctx.network_boms.get(ARCH, []):
        c = Counter()
        for line in b.lines:
            if line.category == "switch":
                c[line.sku] += line.quantity
        if c:
            out[b.network] = dict(c)
    return out


def compute_as_tabulated(preset: str, sus: int, table: dict):
    """Build ``sus`` SUs of ``preset`` and check its nodes, QM9700 leaves and spines against ``table[sus]``."""
    ctx = build(preset, sus)
    nodes, leaves, spines = table[sus]
    assert ctx.spec.nodes == nodes
    assert ctx.fabrics[ARCH].switches_per_tier() == [leaves, spines]
    assert models(ctx)["compute"] == {"MQM9700-NS2F": leaves + spines}
    assert ctx.valid, [f.message for f in ctx.network_findings[ARCH]]
    return ctx


def total(ctx, sku: str) -> int:
    """Boxes of ``sku`` in the whole cluster, every network."""
    return sum(per.get(sku, 0) for per in models(ctx).values())


# --- DGX H100 SuperPOD (RA-11333, "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure
# for AI Leadership, Reference Architecture, featuring NVIDIA DGX H100", V11) --------------------

# Table 4 (compute fabric component count): DGX nodes, leaf and spine QM9700 per SU count (the 4-SU
# row is also Tables 7 and 8's; rows 1 to 3 recalled from the RA, not re-checked offline)
H100_COMPUTE = {1: (31, 8, 4), 2: (63, 16, 8), 3: (95, 24, 16), 4: (127, 32, 16)}
# Tables 7 and 8 at 4 SUs: storage 16 QM9700, in-band 8 SN4600C, OOB 8 SN2201
H100_4SU = {"storage": {"MQM9700-NS2F": 16}, "inband": {"MSN4600C-CS2F": 8}, "oob": {"MSN2201-CB2F": 8}}
# Tables 7 and 8 at 4 SUs: cables per network
H100_4SU_CABLES = {"storage": 548, "inband": 304, "oob": 333}


@pytest.mark.parametrize("sus", sorted(H100_COMPUTE))
def test_h100_compute_fabric_per_su(sus):
    """DGX H100 SuperPOD compute fabric at 1 to 4 SUs: nodes, leaves, spines as RA-11333 Table 4."""
    compute_as_tabulated("dgx-h100-superpod", sus, H100_COMPUTE)


def test_h100_four_su_totals_stay_exact():
    """The 4-SU totals of RA-11333 Tables 7 and 8, switch model by model, network by network."""
    ctx = build("dgx-h100-superpod", 4)
    got = models(ctx)
    assert {k: got[k] for k in H100_4SU} == H100_4SU
    n = ctx.networks[ARCH].counts()
    assert {k: sum(n[k]["cables"].values()) for k in H100_4SU_CABLES} == H100_4SU_CABLES
    assert len(ctx.fabrics[ARCH].links) == 2040  # 1,016 node + 1,024 leaf-spine (Table 8)


# --- DGX B200 SuperPOD (NVIDIA DGX SuperPOD reference architecture with DGX B200 systems) -------

# 32 DGX B200 per SU; compute fabric 8 QM9700 leaves per SU and 4, 8, 16, 16 spines at 1 to 4 SUs
# (its compute component-count table, recalled, not re-checked offline); storage at 4 SUs: 8 leaves
# + 4 spines, the targets on the leaves
B200_COMPUTE = {1: (32, 8, 4), 2: (64, 16, 8), 3: (96, 24, 16), 4: (128, 32, 16)}
B200_STORAGE_4SU = (8, 4)


@pytest.mark.parametrize("sus", sorted(B200_COMPUTE))
def test_b200_builds_every_su_count(sus):
    """Every tabulated size builds (it once stopped on target_ports below 4 SUs), valid, with the RA's compute fabric."""
    ctx = compute_as_tabulated("dgx-b200-superpod", sus, B200_COMPUTE)
    st = ctx.networks[ARCH].counts()["storage"]["switches"]
    assert st["leaf"] == 2 * sus  # one per SU and node storage port (2 BlueField-3 InfiniBand ports)
    assert "target-leaf" not in st  # the targets on the storage leaves themselves
    if sus == 4:
        assert (st["leaf"], st["spine"]) == B200_STORAGE_4SU


# --- Enterprise RA 2-8-9-400 (NVIDIA Enterprise Reference Architecture, 2-8-9-400 sizing tables) ---

# SN5600 (compute + converged, a collapsed core while it fits) and SN2201 at 1 to 4 SUs of 4 nodes
ERA_2_8_9_400 = {1: {"SN5600": 2, "MSN2201-CB2F": 2}, 2: {"SN5600": 2, "MSN2201-CB2F": 2}, 3: {"SN5600": 2, "MSN2201-CB2F": 3}, 4: {"SN5600": 4, "MSN2201-CB2F": 4}}


@pytest.mark.parametrize("sus", sorted(ERA_2_8_9_400))
def test_era_2_8_9_400_per_su(sus):
    """2-8-9-400 at 1 to 4 SUs: every switch of the cluster by model, as the RA's tables."""
    ctx = build("era-2-8-9-400", sus)
    assert ctx.spec.nodes == 4 * sus
    assert {sku: total(ctx, sku) for sku in ERA_2_8_9_400[sus]} == ERA_2_8_9_400[sus]
    assert sum(sum(per.values()) for per in models(ctx).values()) == sum(ERA_2_8_9_400[sus].values())  # no other switch
    assert ctx.valid, [f.message for f in ctx.network_findings[ARCH]]


# --- GB200 / GB300 NVL72 (NVIDIA's NVL72 Enterprise RA: 2 SN2201 OOB switches per rack) ----------

@pytest.mark.parametrize("preset", ["gb200-nvl72", "gb300-nvl72"])
@pytest.mark.parametrize("racks", [1, 2, 4, 8])
def test_nvl72_two_oob_switches_per_rack(preset, racks):
    """Each NVL72 rack's 18 trays x 3 OOB ports, 9 NVLink switch trays and power shelves fill 2 SN2201 of its own."""
    ctx = build(preset, racks)  # the presets' SU is a rack (networks.scalable_unit: 18 trays)
    n = ctx.networks[ARCH]
    per_rack = Counter(s.group for s in n.switches_of(nw.OOB) if s.group >= 0)
    assert set(per_rack.values()) == {2} and len(per_rack) == racks
    assert ctx.valid, [f.message for f in ctx.network_findings[ARCH]]


# --- the flag ---------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["0", "-1", "1.5", "two", "99999999999", "9999999"])
def test_scalable_units_refuses_what_is_no_count(bad):
    with pytest.raises(InputError) as e:
        gpus_for_units(load_spec("dgx-h100-superpod"), bad)
    assert e.value.problems[0].path == "--scalable-units"


def test_scalable_units_flag_exits_2_with_gpus_or_without_su(tmp_path):
    both = subprocess.run([sys.executable, "-m", "topogen", "build", "era-2-8-9-400", "--gpus", "32", "--scalable-units", "1", "--out", str(tmp_path / "a")], capture_output=True, text=True)
    assert both.returncode == 2 and both.stderr == "error: --scalable-units: both --gpus (32) and --scalable-units (1) give the size; give one of them\n"
    none = subprocess.run([sys.executable, "-m", "topogen", "build", "demo", "--scalable-units", "2", "--out", str(tmp_path / "b")], capture_output=True, text=True)
    assert none.returncode == 2 and "spec demo has no scalable unit" in none.stderr and "Traceback" not in none.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_scalable_units_flag_builds_the_size(tmp_path):
    out = subprocess.run([sys.executable, "-m", "topogen", "build", "dgx-h100-superpod", "--scalable-units", "2", "--arch", "rail-optimized", "--formats", "bom", "-q", "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["spec"]["gpus"] == 63 * 8


# --- media per port as the RAs list them ------------------------------------------------------

@pytest.mark.parametrize("preset, sus, nodes", [("dgx-h100-superpod", 4, 127), ("dgx-b200-superpod", 1, 32)])
def test_storage_ports_take_qsfp112_at_the_node(preset, sus, nodes):
    """RA-11333 Table 8 lists 254 DGX storage transceivers at 4 SUs (2 per DGX): the node end of every storage
    node cable is a QSFP112 module (the catalog's role: node rule), its own BOM line; the GPU NICs' OSFP
    cages of the compute fabric never take it."""
    ctx = build(preset, sus)
    storage = next(b for b in ctx.network_boms[ARCH] if b.network == "storage")
    qsfp = [x for x in storage.lines if x.category == "transceiver" and x.end == "device" and "QSFP112" in x.description]
    assert sum(x.quantity for x in qsfp) == 2 * nodes and {x.where for x in qsfp} == {"node"}
    if preset == "dgx-h100-superpod":
        assert sum(x.quantity for x in qsfp) == 254
    assert not any("QSFP112" in x.description for x in ctx.boms[ARCH].lines)
