"""`topogen build --traffic`: the collectives simulated on each wiring, in the workbook's Traffic sheet and the utilisation plots."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess

import numpy as np
import openpyxl
import pytest
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.exports.workbook import book as wbx
from topogen.spec.cluster import build_spec
from topogen.traffic import overview

SHAPE = ["--gpus", "256", "--hb-domain", "8", "--radix", "16"]


@pytest.fixture(scope="module")
def ctx():
    return pipeline.build(build_spec({"name": "tb", "gpus": 256, "hb_domain": 8, "radix": 16, "hb_bandwidth_gbps": 7200}), traffic=True)


def test_rows_are_simulates_rows(ctx):
    """Every row equals what topogen simulate prints for that pattern, intact and with the same spine down."""
    sec = ctx.traffic
    assert sec["routing"] == "spray" and not sec["notes"]
    assert {(r["arch"], r["pattern"]) for r in sec["rows"]} == {(a, p) for a in ("rail-optimized", "rail-only") for p in overview.PATTERNS}
    for arch, fabric in ctx.fabrics.items():
        down = overview.spine(fabric)
        assert down is not None
        for pattern in overview.PATTERNS:
            res = CliRunner().invoke(main, ["simulate", *SHAPE, "--arch", arch, "--hb-bandwidth", "7200", "--pattern", pattern, "--fail", down, "--json"], catch_exceptions=False)
            assert res.exit_code == 0, res.output
            want = json.loads(res.stdout)["rows"]
            got = [r for r in sec["rows"] if r["arch"] == arch and r["pattern"] == pattern]
            assert [r["failed"] for r in got] == ["none", down]
            assert got == want


def test_histograms_count_every_link_once(ctx):
    sec = ctx.traffic
    assert len(sec["bins"]) == overview.BINS + 1 and sec["bins"][0] == 0 and sec["bins"][-1] == 1
    assert len(sec["histograms"]) == len(sec["rows"])
    for h, r in zip(sec["histograms"], sec["rows"]):
        assert (h["arch"], h["pattern"], h["failed"]) == (r["arch"], r["pattern"], r["failed"])
        tiers = {t["tier"]: t for t in r["tiers"]}
        for t in h["tiers"]:
            assert len(t["counts"]) == overview.BINS and sum(t["counts"]) == t["links"]
            if t["tier"] in tiers:
                assert t["links"] == tiers[t["tier"]]["links"]
                if tiers[t["tier"]]["max_utilisation"] > 0.999:
                    assert t["counts"][-1] > 0  # the full links are in the last bin


def test_a_ring_alone_uses_its_leaf_links_fully(ctx):
    """The ring on a non-blocking fabric: every NIC link at 100 %, nothing in between."""
    h = next(h for h in ctx.traffic["histograms"] if h["pattern"] == "ring-allreduce" and h["failed"] == "none" and h["arch"] == "rail-only")
    nic = next(t for t in h["tiers"] if t["tier"] == "gpu-leaf")
    assert nic["counts"][-1] == nic["links"] == 2 * 256


def test_without_hb_bandwidth_the_alltoall_is_named_as_skipped():
    c = pipeline.build(build_spec({"name": "nohb", "gpus": 64, "hb_domain": 8, "radix": 16}), traffic=True)
    assert {r["pattern"] for r in c.traffic["rows"]} == {"ring-allreduce"}
    assert any("alltoall not run" in n and "hb_bandwidth_gbps" in n for n in c.traffic["notes"])
    assert any("permutation not run" in n for n in c.traffic["notes"])


def test_build_is_unchanged_without_the_flag():
    c = pipeline.build(build_spec({"name": "plain", "gpus": 64, "hb_domain": 8, "radix": 16}))
    assert c.traffic is None


def test_workbook_and_plots(tmp_path):
    spec_path = tmp_path / "s.yaml"
    spec_path.write_text("name: wt\ngpus: 256\nhb_domain: 8\nradix: 16\nhb_bandwidth_gbps: 7200\n")
    outs = []
    for i in range(2):
        out = tmp_path / f"o{i}"
        res = CliRunner().invoke(main, ["build", str(spec_path), "--out", str(out), "--formats", "xlsx,plots", "-q", "--traffic"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        outs.append(out)
    plain = tmp_path / "plain"
    res = CliRunner().invoke(main, ["build", str(spec_path), "--out", str(plain), "--formats", "xlsx,plots", "-q"], catch_exceptions=False)
    assert res.exit_code == 0
    # the sheet: after the others, its first table the rows of the study
    wb = openpyxl.load_workbook(outs[0] / "wt.xlsx")
    assert wb.sheetnames[-1] == "Traffic" and "Traffic" not in openpyxl.load_workbook(plain / "wt.xlsx").sheetnames
    ws = wb["Traffic"]
    rows = list(ws.iter_rows(values_only=True))
    head = [h for h, _k, _f in wbx.TRAFFIC_COLUMNS]
    i = next(n for n, r in enumerate(rows) if list(r[: len(head)]) == head)
    ctx = pipeline.build(build_spec({"name": "wt", "gpus": 256, "hb_domain": 8, "radix": 16, "hb_bandwidth_gbps": 7200}), traffic=True)
    for r, want in zip(rows[i + 1 :], ctx.traffic["rows"]):
        assert r[:4] == (want["arch"], want["pattern"], want["failed"], want["aggregation"])
        assert r[6] == pytest.approx(want["min_rate_fraction"]) and r[8] == pytest.approx(want["max_link_load"])
    busiest = {b["link"] for x in ctx.traffic["rows"] for b in x["busiest_links"]}
    assert busiest <= {r[3] for r in rows if r and r[3]}
    assert ws.page_setup.orientation == "landscape" and ws.page_setup.fitToWidth == 1
    # plots: one per pattern, both formats, with or without a workload; the same bytes every build
    for p in overview.PATTERNS:
        for fmt in ("png", "svg"):
            a, b = (o / "analysis" / f"link_utilisation_{p}.{fmt}" for o in outs)
            assert a.read_bytes() == b.read_bytes() and a.stat().st_size > 10_000
    assert not (plain / "analysis").exists()
    assert (outs[0] / "wt.xlsx").read_bytes() == (outs[1] / "wt.xlsx").read_bytes()


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) not installed; .ci/run installs libreoffice-calc-nogui")
def test_libreoffice_reads_the_traffic_sheet(tmp_path):
    """LibreOffice opens the workbook and reads the Traffic sheet's figures as written."""
    ctx = pipeline.build(build_spec({"name": "lot", "gpus": 128, "hb_domain": 8, "radix": 16, "hb_bandwidth_gbps": 7200}), traffic=True)
    path = tmp_path / "lot.xlsx"
    wbx.write_workbook(ctx, path)
    res = subprocess.run(
        ["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{tmp_path}/profile",
         "--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1", "--outdir", str(tmp_path), str(path)],
        capture_output=True, text=True, timeout=300,
    )
    out = tmp_path / "lot-Traffic.csv"
    assert out.exists(), res.stdout + res.stderr
    got = list(csv.reader(out.open(encoding="utf-8")))
    head = [h for h, _k, _f in wbx.TRAFFIC_COLUMNS]
    i = next(n for n, r in enumerate(got) if r[: len(head)] == head)
    for r, want in zip(got[i + 1 :], ctx.traffic["rows"]):
        assert r[:3] == [want["arch"], want["pattern"], want["failed"]]
        assert float(r[6].rstrip("%")) == pytest.approx(100 * want["min_rate_fraction"], abs=0.05)  # as formatted: 0.0%
    assert np.isfinite([float(r[4].replace(",", "")) for r in got[i + 1 : i + 1 + len(ctx.traffic["rows"])]]).all()


def test_spine_down_only_up_to_the_cap(monkeypatch):
    monkeypatch.setattr(overview, "FAILURE_GPUS", 128)
    c = pipeline.build(build_spec({"name": "cap", "gpus": 256, "hb_domain": 8, "radix": 16, "hb_bandwidth_gbps": 7200}), traffic=True)
    assert {r["failed"] for r in c.traffic["rows"]} == {"none"} and len(c.traffic["rows"]) == 2 * len(overview.PATTERNS)
    assert sum("spine-down case runs up to 128 GPUs" in n for n in c.traffic["notes"]) == 2
