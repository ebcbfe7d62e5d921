"""Every CSV topogen writes is a plain CSV: the header on line 1, read right by pandas and csv with defaults.

A leading ``#`` provenance line made ``pandas.read_csv(path)`` return one
column and ``csv.DictReader`` take the comment as its header, silently. The
provenance lives in ``manifest.json`` instead; ``bom.csv`` holds items only,
so summing a column gives the total.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from topogen.cli import main
from topogen.exports.workbook import bom as bom_export
from topogen.exports.installers import cabling
from topogen.exports.netbox import dcim as netbox

# documented columns of each CSV (the exporters' column constants, listed in docs/exports/index.md)
DOCUMENTED = {
    "cabling.csv": cabling.COLUMNS + cabling.FLOOR_COLUMNS,
    "bom.csv": bom_export.COLUMNS,
    "netbox/devices.csv": netbox.DEVICE_COLUMNS,
    "netbox/interfaces.csv": netbox.INTERFACE_COLUMNS,
    "netbox/cables.csv": netbox.CABLE_COLUMNS,
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("csv") / "demo"
    res = CliRunner().invoke(main, ["build", "--name", "csvs", "--gpus", "512", "--hb-domain", "8", "--radix", "64", "--out", str(out), "--catalog", "ndr-400g", "--formats", "cabling,bom,netbox"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


def all_csvs(out: Path) -> list[Path]:
    return sorted(out.rglob("*.csv"))


def test_every_csv_is_found(built):
    rels = {p.relative_to(built).as_posix() for p in all_csvs(built)}
    for arch in ("rail-optimized", "rail-only"):
        assert {f"{arch}/{name}" for name in DOCUMENTED} <= rels


def test_every_csv_reads_with_pandas_and_dictreader_defaults(built):
    for p in all_csvs(built):
        first = p.read_text(encoding="utf-8").split("\n", 1)[0]
        assert not first.startswith("#"), f"{p}: a comment line before the header"
        df = pd.read_csv(p)
        with open(p, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
        assert list(df.columns) == reader.fieldnames == next(csv.reader([first])), p
        assert not any(str(c).startswith("Unnamed") for c in df.columns), p
        assert len(df) == len(rows) > 0, p
        assert all(None not in r and None not in r.values() for r in rows), f"{p}: a row with too many or too few fields"


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_csv_has_the_documented_columns(built, arch, name):
    df = pd.read_csv(built / arch / name)
    assert tuple(df.columns) == DOCUMENTED[name]


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_bom_csv_holds_items_only_and_sums_to_bom_json(built, arch):
    df = pd.read_csv(built / arch / "bom.csv")
    totals = json.loads((built / arch / "bom.json").read_text())["totals"]
    assert "total" not in set(df["category"])
    assert df["extended_price_usd"].sum() == pytest.approx(totals["cost"])
    assert df["total_power_w"].sum() == pytest.approx(totals["power_w"])
    assert int(df.loc[df["category"] == "switch", "quantity"].sum()) == totals["switches"]


def test_cabling_csv_rows_are_the_cables(built):
    summary = json.loads((built / "summary.json").read_text())
    for arch, sec in summary["architectures"].items():
        df = pd.read_csv(built / arch / "cabling.csv")
        assert len(df) == sum(sec["links_per_tier"])
        assert list(df["cable"]) == list(range(1, len(df) + 1))


def test_provenance_is_in_the_manifest(built):
    manifest = json.loads((built / "manifest.json").read_text())
    summary = json.loads((built / "summary.json").read_text())
    assert manifest["generator"].startswith("topogen ") and manifest["spec_sha256"] == summary["spec_sha256"]
    listed = {f["path"] for f in manifest["files"]}
    assert {p.relative_to(built).as_posix() for p in all_csvs(built)} <= listed
