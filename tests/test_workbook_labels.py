"""The workbook's cable labels (reserved shared-string families, book.CableLabels): each cell is
its cable's label in cabling.csv, and the shared-string table holds every text once, also
where both architectures print the same label."""

import csv
import re
import zipfile

import openpyxl
import pytest

from topogen import pipeline
from topogen.spec.cluster import build_spec


@pytest.mark.parametrize("gpus", [256, 2048])
def test_labels_equal_cabling_csv_and_interned_once(tmp_path, gpus):
    ctx = pipeline.build(build_spec({"name": "lab", "gpus": gpus, "hb_domain": 8, "radix": 32, "arch": "both"}))
    pipeline.write_outputs(ctx, tmp_path / "out", ["cabling", "xlsx"])
    book = tmp_path / "out" / "lab.xlsx"
    wb = openpyxl.load_workbook(book, read_only=True)
    shared = 0
    seen = {}
    for arch in ctx.fabrics:
        with open(tmp_path / "out" / arch / "cabling.csv", newline="", encoding="utf-8") as fh:
            want = [r["label"] for r in csv.DictReader(fh)]
        rows = wb[f"Cabling {arch}"].iter_rows(values_only=True)
        col = next(rows).index("Label")
        got = [r[col] for r in rows]
        assert got == want
        shared += len(set(want) & set(seen))
        seen.update(dict.fromkeys(want))
    if gpus == 2048:
        assert shared > 0  # the case the hash look-up across sheets is for (99 labels here)
    sst = zipfile.ZipFile(book).read("xl/sharedStrings.xml").decode()
    items = re.findall(r"<si>(.*?)</si>", sst)
    assert len(items) == len(set(items)), "a text twice in the shared-string table"
    assert f'uniqueCount="{len(items)}"' in sst
