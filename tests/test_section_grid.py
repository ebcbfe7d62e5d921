"""Every optional spec section, and every preset, built with every format through ``topogen build``.

A section that reaches an exporter in a shape it does not expect (the ``layout:``
mapping in the workbook's Summary sheet once raised "Cannot convert {...} to Excel",
exit 1, nothing written) shows up here as a non-zero exit or a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from topogen.util import resources
from topogen.cli import main

BASE = "name: grid\nhb_domain: 8\n"
RADIX = "gpus: 64\nradix: 16\n"

# section -> YAML added to the base spec (a small demo-sized fabric, so every exporter runs in seconds)
SECTIONS = {
    "layout": RADIX + "layout:\n  gpus_per_rack: 16\n  racks_per_row: 8\n  rack_u: 42\n  leaf_racks: end\n  lengths_m: [1, 3, 10, 30, 100]\n",
    "workload": RADIX + "hb_bandwidth_gbps: 7200\nworkload:\n  model: gpt-3-175b\n  gpu: h100\n  batch: 512x2048\n  parallelism: {tp: 8, pp: 2, dp: fsdp}\n  checkpoint: {interval_h: 2, write_GBps: 100}\n",
    "scalable-units": RADIX + "scalable_unit: 2\nmax_scalable_units: 6\n",
    "reserved-leaf-ports": "gpus: 48\nradix: 16\nreserved_leaf_ports: 2\n",
    "reserved-leaf-ports-per-su": "gpus: 48\nradix: 16\nscalable_unit: 3\nreserved_leaf_ports: 2\nreserved_leaf_ports_per: su\n",
    "backup-nodes": RADIX + "backup_nodes: 1\n",
    "dual-homing": RADIX + "planes: 2\nhoming: dual\n",
    "gpus-per-node": RADIX + "gpus_per_node: 4\n",
    "per-tier-lists": "gpus: 256\nradix: [64, 32]\nlink_speed: [200, 400]\noversubscription: 3:1\ncatalog: chassis-400g\n",
    "packing": RADIX + "leaf_packing: shared\nrail_packing: dedicated\nprovision: minimal\n",
}


SMALL_PRESETS = [t for t in resources.template_names("clusters") if t not in ("gh200-32k", "gh200-64k")]  # up to 16,320 GPUs


def build(args: list[str], cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["build", *args, "--formats", "all", "--jobs", "1"], catch_exceptions=False)
    finally:
        os.chdir(old)


def check_all_formats(out: Path) -> None:
    """Every file the manifest lists is there, the workbook opens, and no exporter was left out."""
    manifest = json.loads((out / "manifest.json").read_text())
    paths = [f["path"] for f in manifest["files"]]
    assert all((out / p).is_file() for p in paths)
    assert any(p.endswith("cabling.csv") for p in paths) and any(p.endswith(".xlsx") for p in paths)
    assert any(p.endswith("topology.conf") for p in paths) and any(p.endswith(".graphml") for p in paths)
    for p in paths:
        if p.endswith(".xlsx"):
            openpyxl.load_workbook(out / p, read_only=True).close()


@pytest.mark.parametrize("section", list(SECTIONS))
def test_optional_section_builds_with_every_format(tmp_path, section):
    (tmp_path / "spec.yaml").write_text(BASE + SECTIONS[section])
    res = build(["spec.yaml", "--out", "out"], tmp_path)
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    check_all_formats(tmp_path / "out")


def test_layout_section_is_one_cell_of_the_workbook(tmp_path):
    """The ``layout:`` mapping is written as its keys and values in one text cell of the Summary sheet."""
    (tmp_path / "spec.yaml").write_text(BASE + SECTIONS["layout"])
    assert build(["spec.yaml", "--out", "out"], tmp_path).exit_code == 0
    ws = openpyxl.load_workbook(tmp_path / "out" / "grid.xlsx", read_only=True)["Summary"]
    cells = {r[0]: r[1] for r in ws.iter_rows(values_only=True) if r and r[0] is not None and len(r) > 1}
    assert cells["layout"].startswith("gpus_per_rack 16; ") and "rack_u 42" in cells["layout"] and "lengths_m 1, 3, 10, 30, 100" in cells["layout"]


@pytest.mark.parametrize("preset", SMALL_PRESETS)
def test_preset_builds_with_every_format(tmp_path, preset):
    """Every preset of at most 16,320 GPUs (the two GH200 ones, 32,768 and 65,536 GPUs, take minutes with every format)."""
    res = build([preset, "--out", "out"], tmp_path)
    assert res.exit_code == 0, res.output
    check_all_formats(tmp_path / "out")

