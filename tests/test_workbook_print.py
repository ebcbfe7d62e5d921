"""The workbook printed by LibreOffice: the Decision sheet first, the Summary on one page opening with the cluster total, then the recommendation.

LibreOffice (soffice --headless --convert-to pdf) prints the workbook; pdftotext reads each
page back and pdftoppm draws the Summary page (.ci/run installs libreoffice-calc-nogui and
poppler-utils).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml
from click.testing import CliRunner

from topogen.cli import main

SOFFICE = shutil.which("soffice")
POPPLER = shutil.which("pdftotext") and shutil.which("pdftoppm") and shutil.which("pdfinfo")
pytestmark = pytest.mark.skipif(not (SOFFICE and POPPLER), reason="LibreOffice (libreoffice-calc-nogui) and poppler-utils are not installed; .ci/run installs them")
SPEC = {"name": "decide-print", "gpus": 512, "hb_domain": 8, "radix": 64, "link_speed": 400, "catalog": "ndr-400g",
        "workload": {"model": "deepseek-v3", "gpu": "h100", "parallelism": {"expert_parallel": 64}}, "spares": {"percent": 2, "minimum": 1}}


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    d = tmp_path_factory.mktemp("decide-print")
    (d / "s.yaml").write_text(yaml.safe_dump(SPEC))
    res = CliRunner().invoke(main, ["build", str(d / "s.yaml"), "--out", str(d / "b"), "--formats", "bom,xlsx"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    subprocess.run([SOFFICE, "--headless", f"-env:UserInstallation=file://{d}/lo-profile-decide", "--convert-to", "pdf", "--outdir", str(d), str(d / "b" / "decide-print.xlsx")], check=True, capture_output=True, timeout=300)
    pdf = d / "decide-print.pdf"
    n = int(next(x for x in subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout.splitlines() if x.startswith("Pages:")).split()[1])
    pages = [subprocess.run(["pdftotext", "-layout", "-f", str(i), "-l", str(i), str(pdf), "-"], check=True, capture_output=True, text=True).stdout for i in range(1, n + 1)]
    return d, pdf, pages, json.loads((d / "b" / "summary.json").read_text())


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_decision_sheet_prints_first_with_the_recommendation(printed):
    _d, _pdf, pages, summary = printed
    assert "decide-print: which fabric to buy" in pages[0]
    assert _flat(summary["decision"]["sentence"]) in _flat(pages[0])


def test_summary_is_one_page_opening_with_the_cluster_total_then_the_recommendation(printed):
    d, pdf, pages, summary = printed
    at = [i for i, p in enumerate(pages) if "procurement workbook" in p]
    assert len(at) == 1
    page = pages[at[0]]
    assert "Cost and power figures are formulas" in page  # the last note: the whole sheet on this page
    assert "Cost by component" in page  # and its chart
    nxt = pages[at[0] + 1]
    assert "Cost by component" not in nxt and "Cabling sheets" not in nxt
    flat = _flat(page)
    total, rec, spec = flat.index("Cluster total (USD)"), flat.index("Recommendation:"), flat.index("Spec Value")
    assert total < rec < spec
    cost = summary["architectures"]["rail-only"]["cost"]
    assert f"${cost:,.0f}" in flat[total:rec]
    png = d / "summary"
    subprocess.run(["pdftoppm", "-r", "60", "-png", "-f", str(at[0] + 1), "-l", str(at[0] + 1), str(pdf), str(png)], check=True, timeout=120)
    assert any(p.stat().st_size > 10_000 for p in d.glob("summary*.png"))


def test_bom_sheets_print_the_spares_block(printed):
    _d, _pdf, pages, summary = printed
    text = _flat("\n".join(pages))
    assert text.count("Spares (spec spares:)") == 2 and text.count("Spares total") == 2


def test_validation_prints_its_checks_legibly(printed):
    _d, _pdf, pages, _summary = printed
    at = [i for i, p in enumerate(pages) if "Key figure" in p]
    assert at
    text = _flat("\n".join(pages[max(0, min(at) - 2) : max(at) + 1]))
    assert "Detail" in text and "worst_case_hops" in text and "pass" in text
