"""The spec's spares: policy: a spares line per SKU in bom.csv, bom.json, summary.json and the workbook's BOM sheets."""

from __future__ import annotations

import csv
import json
import math

import openpyxl
import pytest
from click.testing import CliRunner

from topogen import pipeline
from topogen.bom.bill import spare_lines
from topogen.cli import main
from topogen.spec.cluster import build_spec
from topogen.spec.spares import SpareRule, SparesSpec

POLICY = {"percent": 2, "minimum": 1, "transceiver": {"percent": 5, "minimum": 4}, "cable": {"percent": 0, "minimum": 0}}


@pytest.mark.parametrize("q", [0, 1, 7, 49, 50, 51, 100, 12_345])
@pytest.mark.parametrize("pct,mn", [(0, 0), (2, 1), (5, 4), (0, 3), (12.5, 0), (100, 0)])
def test_rule_is_the_max_of_the_minimum_and_the_rounded_up_share(q, pct, mn):
    got = SpareRule(pct, mn).spares(q)
    assert got == (0 if q == 0 else max(mn, math.ceil(q * pct / 100 - 1e-9)))


def test_category_rules_override_the_default():
    s = SparesSpec(2, 1, transceiver=SpareRule(5, 4))
    assert s.rule("switch") == SpareRule(2, 1) and s.rule("transceiver") == SpareRule(5, 4) and s.rule("nic") == SpareRule(2, 1)


@pytest.mark.parametrize("gpus,catalog", [(64, "ndr-400g"), (512, "ndr-400g"), (1024, "xdr-800g")])
def test_spares_lines_in_every_output(tmp_path, gpus, catalog):
    spec = build_spec({"name": "spares", "gpus": gpus, "hb_domain": 8, "radix": 64 if catalog == "ndr-400g" else 128, "catalog": catalog, "spares": POLICY}, {})
    ctx = pipeline.build(spec)
    res = CliRunner().invoke(main, ["build", "--gpus", str(gpus), "--hb-domain", "8", "--radix", str(64 if catalog == "ndr-400g" else 128), "--catalog", catalog, str(_spec_file(tmp_path, gpus, catalog)), "--out", str(tmp_path / "cli"), "--formats", "bom,xlsx"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    for arch, bom in ctx.boms.items():
        lines = bom.sku_lines()
        spares = spare_lines(lines, spec.spares)
        want = {x.sku: spec.spares.rule(x.category).spares(x.quantity) for x in lines if spec.spares.rule(x.category).spares(x.quantity)}
        assert {x.sku: x.quantity for x in spares} == want
        assert not any(x.category == "cable" for x in spares)  # cable: 0 % and minimum 0
        assert all(x.quantity >= 4 for x in spares if x.category == "transceiver")
        rows = list(csv.DictReader(open(tmp_path / "cli" / arch / "bom.csv")))
        spare_rows = [r for r in rows if r["used_in"].startswith("spares:")]
        assert {r["sku"]: int(r["quantity"]) for r in spare_rows} == want
        doc = json.loads((tmp_path / "cli" / arch / "bom.json").read_text())
        assert doc["spares"]["totals"]["units"] == sum(want.values())
        assert summary["architectures"][arch]["spares"] == doc["spares"]["totals"]
        assert summary["architectures"][arch]["cost"] == bom.cost  # capex without the spares
        wb = openpyxl.load_workbook(tmp_path / "cli" / "spares.xlsx")
        ws = wb[f"BOM {arch}"]
        col_a = [c.value for c in ws["A"]]
        head = col_a.index("Spares (spec spares:)")
        got = {}
        for r in range(head + 2, head + 2 + len(want)):
            got[ws.cell(r, 1).value] = ws.cell(r, 5).value
        assert got == want
        assert ws.cell(head + 2 + len(want), 1).value == "Spares total"


def _spec_file(tmp_path, gpus, catalog):
    import yaml

    p = tmp_path / "spares.yaml"
    p.write_text(yaml.safe_dump({"name": "spares", "gpus": gpus, "hb_domain": 8, "catalog": catalog, "spares": POLICY}))
    return p


def test_no_policy_no_spares(tmp_path):
    spec = build_spec({"name": "plain", "gpus": 64, "hb_domain": 8, "radix": 16}, {})
    assert spec.spares is None and "spares" not in spec.to_dict()
    ctx = pipeline.build(spec)
    assert all("spares" not in a for a in ctx.summary["architectures"].values())
