"""Failure rates a catalog states: used by the decision, shown with their source on the report and the workbook.

A catalog's ``failure_rates`` section overrides topogen's sourced defaults (Alibaba HPN,
SIGCOMM 2024; Llama 3) component by component; the expected failures per month are
count x rate with the catalog's rate, and every other component keeps its default.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from topogen import pipeline
from topogen.analysis import decision
from topogen.spec import catalog as cat
from topogen.cli import main
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
RATES = {"source": "fleet ZX-7, 2025 RMA tickets", "leaf_switch": 0.0123, "nic": 0.0}


def _catalog(tmp_path: Path, rates: dict | None) -> Path:
    data = yaml.safe_load((ROOT / "templates" / "catalogs" / "ndr-400g.yaml").read_text())
    data["name"] = "rated"
    if rates is not None:
        data["failure_rates"] = rates
    p = tmp_path / "rated.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def _decision(tmp_path: Path, rates: dict | None, gpus: int) -> dict:
    spec = build_spec({"name": "rated", "gpus": gpus, "hb_domain": 8, "radix": 64, "catalog": str(_catalog(tmp_path, rates)), "workload": {"model": "gpt-3-175b", "gpu": "h100"}}, {})
    return pipeline.build(spec).summary["decision"]


@pytest.mark.parametrize("gpus", [512, 4096])
def test_the_catalog_s_rates_replace_the_defaults_it_names(tmp_path, gpus):
    mine = _decision(tmp_path, RATES, gpus)
    default = _decision(tmp_path, None, gpus)
    by = {r["component"]: r for r in mine["failure_rates"]}
    assert by["leaf switch"] == {"component": "leaf switch", "per_month": 0.0123, "status": "catalog", "source": "catalog rated: fleet ZX-7, 2025 RMA tickets"}
    assert by["NIC"]["per_month"] == 0.0 and by["NIC"]["status"] == "catalog"
    for r, d in zip(mine["failure_rates"], default["failure_rates"]):
        if r["component"] not in ("leaf switch", "NIC"):
            assert r == d  # a component the catalog does not name keeps its sourced default
    for arch, side in mine["architectures"].items():
        for f, rate in zip(side["failures_per_month"], mine["failure_rates"]):
            assert f["per_month"] == rate["per_month"]
            assert f["expected_per_month"] == round(f["count"] * rate["per_month"], 4)
        nic = next(f for f in side["failures_per_month"] if f["component"] == "NIC")
        assert nic["count"] == gpus and nic["expected_per_month"] == 0.0
        assert side["expected_failures_per_month"] == round(sum(f["expected_per_month"] for f in side["failures_per_month"]), 4)
        assert side["expected_failures_per_month"] != default["architectures"][arch]["expected_failures_per_month"]


def test_report_and_workbook_show_the_catalog_s_rate_and_source(tmp_path):
    spec = {"name": "rated", "gpus": 512, "hb_domain": 8, "radix": 64, "catalog": str(_catalog(tmp_path, RATES)), "workload": {"model": "gpt-3-175b", "gpu": "h100"}}
    p = tmp_path / "spec.yaml"
    p.write_text(yaml.safe_dump(spec, sort_keys=False))
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["build", str(p), "--out", str(out)])
    assert res.exit_code == 0, res.output
    page = (out / "report.html").read_text()
    assert "leaf switch [catalog]: catalog rated: fleet ZX-7, 2025 RMA tickets" in page
    assert "<td>1.2300 %</td>" in page
    assert "NIC [derived]: Llama 3" not in page  # the NIC rate is the catalog's now
    import openpyxl

    book = next(out.rglob("*.xlsx"))
    texts = [str(c.value) for ws in openpyxl.load_workbook(book, read_only=True).worksheets for row in ws.iter_rows() for c in row if c.value is not None]
    assert "leaf switch [catalog]: catalog rated: fleet ZX-7, 2025 RMA tickets" in texts


def test_rates_without_a_catalog_section_are_the_sourced_defaults():
    assert decision.rates(cat.load_catalog("ndr-400g")) == decision.FAILURE_RATES
    assert decision.rates(None) == decision.FAILURE_RATES


@pytest.mark.parametrize("section,message", [
    ({"source": "x", "leaf_switch": -0.1}, "failure_rates.leaf_switch: leaf_switch must be 0 or more, got -0.1"),
    ({"source": "x", "nic": True}, "failure_rates.nic: nic must be a number, got True"),
    ({"source": "x"}, "failure_rates: failure_rates gives a source but no rate"),
    ({"leaf_switch": 0.001}, "failure_rates.source: source is required"),
    ([0.001], "failure_rates: failure_rates must be a mapping, got [0.001]"),
    ({"source": "x", "spine": 0.001}, "failure_rates.spine: unknown key 'spine'"),
])
def test_bad_failure_rates_are_refused_naming_the_field(tmp_path, section, message):
    with pytest.raises(InputError) as exc:
        cat.load_catalog(str(_catalog(tmp_path, section)))
    assert any(message in p.render() for p in exc.value.problems), [p.render() for p in exc.value.problems]
