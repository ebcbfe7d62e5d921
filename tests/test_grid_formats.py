"""Every bundled preset and every optional spec section, built with every format through ``topogen build``.

A spec section that one exporter cannot render (a ``layout:`` mapping passed to
the workbook as a cell, a ``workload:`` batch the plots cannot draw) fails here,
whichever exporter it is. Small N keeps the grid within a couple of minutes.

Each build is checked the same way: exit 0 with no traceback, every format's
files present and listed in manifest.json, and every file read back (CSV rows
as wide as their header, JSON and GraphML parsed, the workbook opened).
"""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import openpyxl
import pytest
import yaml
from click.testing import CliRunner

from topogen.cli import main
from topogen.spec.cluster import available_presets

# a small size for each preset (its own is up to 65,536 GPUs); () keeps the preset's own
PRESET_ARGS = {
    "alibaba-hpn": (),
    "demo": (),
    "dgx-b200-superpod": (),  # its 24 target ports are sized for its 4 SUs (fewer SUs: exit 2 naming target_ports)
    "dgx-h100-su": ("--gpus", "504"),
    "dgx-h100-superpod": ("--gpus", "256"),
    "era-2-8-9-400": (),
    "gb200-nvl72": ("--gpus", "288"),
    "gb300-nvl72": ("--gpus", "288"),
    "gh200-32k": ("--gpus", "512"),
    "gh200-64k": ("--gpus", "512"),
    "leaf32-spine288": ("--gpus", "512"),
    "nic200-leaf400": ("--gpus", "256"),
}

BASE = {"gpus": 64, "hb_domain": 8, "radix": 16}
# every optional spec section (and the options that change what exporters write), each on the small base
SECTIONS = {
    "layout": {"layout": {"gpus_per_rack": 16, "racks_per_row": 4, "switches_per_rack": 8, "lengths_m": [1, 2, 3, 5, 10, 20, 50]}},
    "workload": {
        "hb_bandwidth_gbps": 7200,
        "workload": {"model": "llama-2-70b", "gpu": "h100", "batch": "4M", "parallelism": {"tp": 8, "dp": "fsdp"}, "checkpoint": {"interval_h": 4, "write_GBps": 100, "path": "compute-nics"}},
    },
    "workload-moe": {"gpus": 256, "radix": 32, "hb_bandwidth_gbps": 7200, "workload": {"model": "deepseek-v3", "gpu": "h100", "parallelism": {"expert_parallel": 64}}},
    "scalable-units": {"gpus": 56, "scalable_unit": 2, "max_scalable_units": 4, "reserved_leaf_ports": 1},
    "oversubscription": {"oversubscription": "3:1"},
    "planes": {"planes": 2},
    "dual-homing": {"homing": "dual"},
    "backup-nodes": {"backup_nodes": 1},
    "gpus-per-node": {"gpus_per_node": 4},
    "per-tier": {"radix": [16, 32]},  # per-tier speeds: the nic200-leaf400 preset
    "catalog": {"gpus": 512, "radix": 64, "catalog": "ndr-400g"},
    "packing": {"rail_packing": "dedicated", "leaf_packing": "shared", "provision": "minimal"},
}

FORMATS = ("cabling", "pull-sheets", "topology", "bom", "xlsx", "diagrams", "plots", "netbox", "graphml", "slurm", "ibnetdiscover", "validation")
# what each format writes for one architecture (plots: only with a workload, checked apart)
ARCH_FILES = {
    "cabling": ["cabling.csv"],
    "pull-sheets": ["pull-sheets.csv"],
    "topology": ["topology.json"],
    "bom": ["bom.csv", "bom.json", "cable-lengths.csv"],
    "diagrams": ["overview.svg", "overview.png"],
    "netbox": ["netbox/devices.csv|netbox/devices-001.csv", "netbox/racks.csv"],
    "graphml": ["topology.graphml"],
    "slurm": ["slurm/block/topology.conf|slurm/tree/topology.conf"],
    "ibnetdiscover": ["ibnetdiscover/*.topo"],
    "validation": ["validation.json"],
}


def _build(out: Path, args: list[str]) -> None:
    res = CliRunner().invoke(main, ["build", *args, "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output


def _check(out: Path, workload: bool) -> None:
    """Every format's files are there, listed in the manifest, and read back."""
    manifest = json.loads((out / "manifest.json").read_text())
    listed = {f["path"] if isinstance(f, dict) else f for f in manifest["files"]}
    summary = json.loads((out / "summary.json").read_text())
    arches = list(summary["architectures"])
    assert arches
    for arch in arches:
        for fmt, patterns in ARCH_FILES.items():
            for pattern in patterns:
                found = [p for alt in pattern.split("|") for p in (out / arch).glob(alt)]
                assert found, (arch, fmt, pattern)
    assert list(out.glob("*.xlsx")), "xlsx"
    assert (out / "netbox" / "sites.csv").exists() and list((out / "netbox" / "shared").glob("*.csv"))
    if workload:
        assert list(out.rglob("analysis/*.png")), "plots"
        assert "analysis" in summary
    files = [p for p in out.rglob("*") if p.is_file()]
    for p in files:
        rel = p.relative_to(out).as_posix()
        assert rel == "manifest.json" or rel in listed, rel
        if p.suffix == ".csv":
            with open(p, newline="", encoding="utf-8") as fh:
                rows = list(csv.reader(fh))
            assert rows and all(len(r) == len(rows[0]) for r in rows), rel
        elif p.suffix == ".json":
            json.loads(p.read_text())
        elif p.suffix == ".graphml":
            ET.parse(p)
        elif p.suffix == ".xlsx":
            wb = openpyxl.load_workbook(p, read_only=True)
            assert "Cabling" in " ".join(wb.sheetnames) or wb.sheetnames, rel
            wb.close()
        else:
            assert p.stat().st_size > 0, rel


def test_every_preset_is_in_the_grid():
    assert set(PRESET_ARGS) == set(available_presets())


@pytest.mark.parametrize("preset", sorted(PRESET_ARGS))
def test_preset_with_every_format(tmp_path, preset):
    out = tmp_path / "out"
    _build(out, [preset, *PRESET_ARGS[preset]])
    _check(out, workload=preset.startswith("gh200"))


# the workbook cannot yet write a spec's layout: section (issue 24, "crashes and data loss", fixed on another branch):
# not strict, so the case reports XPASS once that fix is merged, and this mark goes


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_optional_section_with_every_format(tmp_path, section):
    spec = {"name": f"grid-{section}", **BASE, **SECTIONS[section]}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    out = tmp_path / "out"
    _build(out, [str(path), "--formats", ",".join(FORMATS)])
    _check(out, workload="workload" in spec)
