"""``topogen build`` with a ``workload:``: summary.json's analysis, the workbook's Analysis sheet, the plots."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
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
    assert [(r["gpus"], r["hb_domain"]) for r in an["iteration_vs_k"]["rows"]] == [(16, 8), (16, 16), (32, 8), (32, 16), (32, 32), (64, 8), (64, 16), (64, 32), (64, 64)]
    assert "skipped" in an["alltoall"] and "is a dense model" in an["alltoall"]["skipped"]  # llama has no experts
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
    from topogen.spec.cluster import load_spec

    assert load_spec("gh200-32k").hb_bandwidth_gbps == 7680 and load_spec("gh200-32k").workload.model.name == "palm-540b"
    assert load_spec("gh200-64k").workload.model.name == "gpt-3-175b"
    assert load_spec("dgx-h100-superpod").hb_bandwidth_gbps == 7200
    assert load_spec("gb200-nvl72").hb_bandwidth_gbps == 14400


@pytest.mark.parametrize(
    "workload",
    [
        {"model": "deepseek-v3", "gpu": "h100", "parallelism": {"expert_parallel": 64}},
        {"model": "palm-540b", "gpu": "gh200", "batch": "512x2048", "checkpoint": {"write_s": 60, "path": "compute-nics"}},
        {"model": "megatron-1t", "parallelism": {"tp": 8, "pp": 64, "dp": "megatron"}, "checkpoint": {"write_GBps": 273}},
        {"model": {"name": "mine", "layers": 32, "d_model": 4096, "params": "7e9", "batch": "4M", "m_cc": 8}, "gpu": 1e15},
    ],
)
def test_spec_dict_round_trips_with_a_workload(workload):
    """summary.json/topology.json embed spec.to_dict(); it must parse back to the same spec (and hash)."""
    from topogen.spec.cluster import build_spec

    s = build_spec({"gpus": 3072, "hb_domain": 8, "radix": 64, "workload": workload})
    again = build_spec(json.loads(json.dumps(s.to_dict())))
    assert again == s and again.digest() == s.digest()


def test_validate_a_workload_builds_topology(built):
    res = CliRunner().invoke(main, ["build", str(built[0].parent / "wl.yaml"), "--out", str(built[0].parent / "t"), "--formats", "topology", "--jobs", "1"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["validate", str(built[0].parent / "t" / "rail-only" / "topology.json")])
    assert res.exit_code == 0, res.output


def test_own_model_and_gpu_yaml_files(tmp_path):
    """A user's own YAML works as well as a preset, for the model and for the GPU."""
    (tmp_path / "m.yaml").write_text("# my model\nname: my-13b\nlayers: 40\nd_model: 5120\nparams: 13e9\nbatch: 1024x4096\nm_cc: 8\nsources:\n  params: 'user: our config'\n")
    (tmp_path / "g.yaml").write_text("name: my-gpu\nflops: 2e15\nmemory_gb: 141\nhb_bandwidth_gbps: 7200\n")
    res = CliRunner().invoke(main, ["analyze", "iteration", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", str(tmp_path / "m.yaml"), "--gpu", str(tmp_path / "g.yaml"), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["rows"][0]["model"] == "my-13b" and doc["rows"][0]["batch_tokens"] == 1024 * 4096
    p = {q["name"]: q for q in doc["parameters"]}
    assert p["P, parameters (my-13b)"]["status"] == "user" and p["C, dense BF16 FLOP/s per GPU (my-gpu)"]["value"] == 2e15
    assert p["B_F, HB-domain bandwidth per GPU"]["value"] == 7200
    res = CliRunner().invoke(main, ["analyze", "iteration", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", str(tmp_path / "none.yaml")])
    assert res.exit_code == 2 and "workload.model: model file" in res.stderr


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) not installed; .ci/run installs libreoffice-calc-nogui")
def test_libreoffice_reads_the_analysis_sheet(built, tmp_path):
    """LibreOffice opens the workbook and exports the Analysis sheet with the same figures."""
    res = subprocess.run(
        ["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{tmp_path}/profile",
         "--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1", "--outdir", str(tmp_path), str(built[0] / "wl.xlsx")],
        capture_output=True, text=True, timeout=180,
    )
    sheet = tmp_path / "wl-Analysis.csv"
    assert sheet.exists(), res.stdout + res.stderr
    rows = list(csv.reader(sheet.open(encoding="utf-8")))
    assert rows[1][:4] == ["gpus", "K", "batch", "N_M"]
    summary = json.loads((built[0] / "summary.json").read_text())
    it = summary["analysis"]["iteration"]["rows"][0]
    assert float(rows[2][4]) == pytest.approx(it["iteration_s"], rel=1e-9)
    assert any(r[:2] == ["P, parameters (llama-2-70b)", "70000000000"] for r in rows)
