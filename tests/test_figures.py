"""Numbers a person reads: separators, singular/plural, kW, money, and what an unpriced count means."""

from __future__ import annotations

import re

from click.testing import CliRunner

from topogen.cli import main
from topogen.util import figures


def test_figures_format_consistently():
    assert figures.count(131072) == "131,072"
    assert (figures.plural(1, "GPU"), figures.plural(8, "GPU"), figures.plural(1, "leaf"), figures.plural(32, "leaf")) == ("1 GPU", "8 GPUs", "1 leaf", "32 leaves")
    assert figures.plural(1024, "switch") == "1,024 switches"
    assert (figures.usd(5313840), figures.usd_cents(5230.157), figures.usd_cents(748)) == ("$5,313,840", "$5,230.16", "$748.00")
    assert figures.kw(70736) == "70.7 kW" and figures.pct(0.375) == "37.5%" and figures.pct(None) == "n/a"


def test_paper_catalog_says_cables_are_not_priced(tmp_path):
    """The paper's model prices no cables and no power: say so instead of "0 cables" and "0.0 kW"."""
    res = CliRunner().invoke(main, ["build", "--gpus", "32768", "--hb-domain", "256", "--radix", "64", "--catalog", "paper", "--formats", "bom", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert " 0 cables" not in res.output and "0.0 kW" not in res.output
    assert "cables not priced (98,304 links; the catalog lists no cables)" in res.output
    assert "196,608 transceivers" in res.output and "($5,984.00 per GPU)" in res.output
    assert res.stdout.startswith("n32768-k256-r64: 32,768 GPUs, HB domain 256 (128 domains), radix 64, 400 Gb/s, 1 plane\n")


def test_one_gpu_is_singular(tmp_path):
    res = CliRunner().invoke(main, ["build", "--gpus", "8", "--hb-domain", "8", "--radix", "16", "--arch", "rail-only", "--formats", "bom", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "1 GPUs" not in res.output and "each rail has 1 GPU:" in res.output
    assert "1 tier," in res.output and "1 domain)" in res.output


def test_priced_build_reads_kw_and_cents(tmp_path):
    res = CliRunner().invoke(main, ["build", "dgx-h100-superpod", "--formats", "bom", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert re.search(r"BOM \(ndr-400g\): 2,\d{3} transceivers, 2,\d{3} cables, cost \$5,\d{3},\d{3} \(\$5,\d{3}\.\d\d per GPU\), power \d\d\.\d kW", res.output), res.output
