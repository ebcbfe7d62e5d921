"""Optional spec sections in the workbook: the ``layout:`` mapping is one text cell of the Summary sheet.

It once raised "Cannot convert {...} to Excel" (exit 1, nothing written). The grid of every
preset and every optional section with every format is tests/test_grid_formats.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import openpyxl
from click.testing import CliRunner

from topogen.cli import main

BASE = "name: grid\nhb_domain: 8\n"
RADIX = "gpus: 64\nradix: 16\n"

LAYOUT = RADIX + "layout:\n  gpus_per_rack: 16\n  racks_per_row: 8\n  rack_u: 42\n  leaf_racks: end\n  lengths_m: [1, 3, 10, 30, 100]\n"




def build(args: list[str], cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["build", *args, "--formats", "all", "--jobs", "1"], catch_exceptions=False)
    finally:
        os.chdir(old)


def test_layout_section_is_one_cell_of_the_workbook(tmp_path):
    """The ``layout:`` mapping is written as its keys and values in one text cell of the Summary sheet."""
    (tmp_path / "spec.yaml").write_text(BASE + LAYOUT)
    assert build(["spec.yaml", "--out", "out"], tmp_path).exit_code == 0
    ws = openpyxl.load_workbook(tmp_path / "out" / "grid.xlsx", read_only=True)["Summary"]
    cells = {r[0]: r[1] for r in ws.iter_rows(values_only=True) if r and r[0] is not None and len(r) > 1}
    assert cells["layout"].startswith("gpus_per_rack 16; ") and "rack_u 42" in cells["layout"] and "lengths_m 1, 3, 10, 30, 100" in cells["layout"]
