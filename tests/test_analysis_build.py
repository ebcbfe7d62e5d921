"""``topogen build`` with a ``workload:``: summary.json's analysis, the workbook's Analysis sheet, the plots."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from topogen.cli import main

SPEC = """\
name: wl
gpus: 64
hb_domain: 8
gpus_per_node: 8
radix: 16
hb_bandwidth_gbps: 7200
workload:
  model: llama-2-70b
  gpu: h100
  parallelism: {dp: fsdp}
  checkpoint: {write_GBps: 50, interval_h: 2}
"""
PLOTS = ("iteration_vs_k", "relative_vs_batch", "time_breakdown", "dp_rail_bytes")


def build(tmp_path: Path, text: str, out: str) -> Path:
    spec = tmp_path / "wl.yaml"
    spec.write_text(text)
    res = CliRunner().invoke(main, ["build", str(spec), "--out", str(tmp_path / out), "--formats", "xlsx,plots", "--jobs", "1"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return tmp_path / out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wl")
    return build(tmp, SPEC, "a"), build(tmp, SPEC, "b")


def test_summary_has_every_analysis(built):
    s = json.loads((built[0] / "summary.json").read_text())
    an = s["analysis"]
    assert set(an) == {"iteration", "iteration_vs_k", "iteration_vs_batch", "alltoall", "checkpoint", "dp-traffic"}
    assert an["iteration"]["rows"][0]["gpus"] == 64 and an["iteration"]["rows"][0]["hb_bandwidth_gbps"] == 7200
    assert [r["hb_domain"] for r in an["iteration_vs_k"]["rows"]] == [8, 16, 32, 64]
    assert "skipped" in an["alltoall"] and "bytes_per_pair" in an["alltoall"]["skipped"]  # llama is dense
    ck = an["checkpoint"]["rows"][0]
    assert ck["checkpoint_bytes"] == 70e9 * 14 and ck["write_GBps"] == 50 and ck["overhead"] == ck["write_s"] / 7200
    for sec in (an["iteration"], an["checkpoint"], an["dp-traffic"]):
        assert sec["parameters"] and all(p["status"] and p["source"] for p in sec["parameters"])
        assert sec["caveats"]
    assert s["spec"]["workload"]["model"]["name"] == "llama-2-70b"


def test_plots_written_valid_and_deterministic(built):
    a, b = built
    for name in PLOTS:
        png, svg = a / "analysis" / f"{name}.png", a / "analysis" / f"{name}.svg"
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and b"Software" not in data and b"matplotlib" not in data
        root = ET.parse(svg).getroot()
        assert root.tag.endswith("svg")
        assert b"<dc:date>" not in svg.read_bytes()
        assert data == (b / "analysis" / f"{name}.png").read_bytes()
        assert svg.read_bytes() == (b / "analysis" / f"{name}.svg").read_bytes()
    man = {e["path"] for e in json.loads((a / "manifest.json").read_text())["files"]}
    assert {f"analysis/{n}.{x}" for n in PLOTS for x in ("png", "svg")} <= man


def test_workbook_analysis_sheet(built):
    wb = openpyxl.load_workbook(built[0] / "wl.xlsx", read_only=True)
    assert wb.sheetnames[-1] == "Analysis"
    rows = list(wb["Analysis"].iter_rows(values_only=True))
    text = [r[0] for r in rows if r and isinstance(r[0], str)]
    assert any(t.startswith("Iteration time") for t in text)
    assert any(t.startswith("Checkpoint write") for t in text)
    assert any(t == "FSDP full shard" for t in text)
    params = [r for r in rows if r and r[0] == "P, parameters (llama-2-70b)"]
    assert params and params[0][1] == 70e9 and params[0][3] == "paper"
    assert any(r[0] == "caveat" for r in rows)
    summary = {r[0]: r[1] for r in wb["Summary"].iter_rows(values_only=True) if len(r) > 1 and r[0]}
    assert summary["workload"].startswith("model llama-2-70b, gpu h100")


def test_no_workload_no_analysis(tmp_path):
    out = build(tmp_path, "\n".join(line for line in SPEC.splitlines() if not line.startswith((" ", "workload"))) + "\n", "plain")
    s = json.loads((out / "summary.json").read_text())
    assert "analysis" not in s and "workload" not in s["spec"]
    assert not (out / "analysis").exists()
    assert "Analysis" not in openpyxl.load_workbook(out / "wl.xlsx", read_only=True).sheetnames


def test_presets_carry_hb_bandwidth_and_workloads():
    from topogen.spec import load_spec

    assert load_spec("gh200-32k").hb_bandwidth_gbps == 7680 and load_spec("gh200-32k").workload.model.name == "palm-540b"
    assert load_spec("gh200-64k").workload.model.name == "gpt-3-175b"
    assert load_spec("dgx-h100-superpod").hb_bandwidth_gbps == 7200
    assert load_spec("gb200-nvl72").hb_bandwidth_gbps == 14400
