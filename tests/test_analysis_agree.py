"""Analyses that agree with themselves: one job gives one figure everywhere, bad numbers exit 2, sweeps skip.

Each case runs through ``topogen`` (the click entry point), as a user would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen.cli import main


def run(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def as_json(args):
    res = run([*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _rows(doc, key="scheme"):
    return {r[key]: r for r in doc["rows"]}


@pytest.mark.parametrize("n,k,tp", [(32_768, 256, 8), (4_096, 64, 4), (1_024, 8, 2), (1_024, 8, 8), (2_048, 72 // 9 * 8, 1)])
def test_megatron_row_counts_the_hb_domain(n, k, tp):
    """TP < K: the domain's K/TP DP peers reduce inside it first, so a NIC carries what DDP's does (same gradients).

    At TP = K nothing is shared inside the domain and the row is the flat ring over D = N/TP.
    """
    doc = as_json(["analyze", "dp-traffic", "--gpus", n, "--hb-domain", k, "--model", "palm-540b", "--gpu", "gh200", "--tp", tp])
    rows = _rows(doc)
    mega, ddp = rows["megatron"], rows["ddp"]
    assert mega["bytes_per_nic"] == pytest.approx(ddp["bytes_per_nic"], rel=1e-12)
    d = n // tp
    flat = 2 * (d - 1) / d * 540e9 * 2 / tp
    assert mega["bytes_per_gpu"] == pytest.approx(flat, rel=1e-12)
    g = k // tp
    assert mega["nvlink_bytes_per_gpu"] == pytest.approx(2 * (g - 1) / g * 540e9 * 2 / tp, rel=1e-12)
    if tp == k:
        assert mega["bytes_per_nic"] == pytest.approx(flat, rel=1e-12)


def test_megatron_row_at_k256_is_not_k_over_tp_times_ddp():
    """The filed case: 269.9 GB per NIC against DDP's 8.4 GB at K = 256, TP 8."""
    rows = _rows(as_json(["analyze", "dp-traffic", "gh200-32k", "--tp", "8"]))
    assert round(rows["megatron"]["bytes_per_nic"] / 1e9, 1) == round(rows["ddp"]["bytes_per_nic"] / 1e9, 1) == 8.4


def _spec(tmp_path: Path, parallelism: str) -> Path:
    p = tmp_path / "job.yaml"
    p.write_text(f"name: job\ngpus: 32768\nhb_domain: 256\nradix: 64\nworkload:\n  model: palm-540b\n  gpu: gh200\n  parallelism: {parallelism}\n")
    return p


@pytest.mark.parametrize("parallelism,rule,n_m", [("{tp: 8, dp: fsdp}", "tp", 8.0), ("{tp: 16, pp: 4, dp: fsdp}", "tp", 16.0), ("{dp: fsdp}", "derived", None)])
def test_build_and_analyze_give_one_iteration_figure(tmp_path, parallelism, rule, n_m):
    """build's summary line, its summary.json and ``analyze iteration`` (default rule) agree; the rule is named."""
    spec = _spec(tmp_path, parallelism)
    out = tmp_path / "out"
    res = run(["build", spec, "--out", out, "--formats", "bom"])
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if "analysis (palm-540b" in ln)
    summary = json.loads((out / "summary.json").read_text())
    built = summary["analysis"]["iteration"]["rows"][0]
    doc = as_json(["analyze", "iteration", spec])
    row = doc["rows"][0]
    assert row["n_m_rule"] == built["n_m_rule"] == rule
    assert row["iteration_s"] == built["iteration_s"]
    assert f"iteration {row['iteration_s']:.3f} s" in line and f"({rule})" in line
    if n_m is not None:
        assert row["n_m"] == n_m
    assert f"Rule used here: {rule}." in doc["caveats"][0]
    explicit = as_json(["analyze", "iteration", spec, "--nm-rule", "derived"])["rows"][0]
    assert (explicit["n_m_rule"] == "derived") and (rule == "derived" or explicit["iteration_s"] != row["iteration_s"])


def test_pipeline_stages_are_named_as_not_modelled(tmp_path):
    doc = as_json(["analyze", "iteration", _spec(tmp_path, "{tp: 16, pp: 4, dp: fsdp}")])
    assert any("pp 4 is not in the iteration time" in c for c in doc["caveats"])


BASE = ["--gpus", "1024", "--hb-domain", "8", "--model", "deepseek-v3", "--gpu", "h100", "--hb-bandwidth", "7200"]


@pytest.mark.parametrize("args,field", [
    (["analyze", "alltoall", *BASE, "--group-gpus", "-8"], "--group-gpus"),
    (["analyze", "alltoall", *BASE, "--group-gpus", "0"], "--group-gpus"),
    (["analyze", "iteration", *BASE, "--batch", "1000.5"], "batch"),
    (["analyze", "iteration", *BASE, "--batch", "2M,1.5"], "batch"),
    (["analyze", "dp-traffic", *BASE, "--tp", "8.0"], "--tp"),
])
def test_bad_numbers_exit_2_naming_the_field(args, field):
    res = run(args)
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert field in res.output, res.output


@pytest.mark.parametrize("value", ["8.0", "'8.0'", "2.5", "0", "-8"])
def test_workload_tp_must_be_written_whole(tmp_path, value):
    spec = _spec(tmp_path, f"{{tp: {value}}}")
    for args in (["analyze", "dp-traffic", spec], ["build", spec, "--out", tmp_path / "o", "--formats", "bom"]):
        res = run(args)
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
        assert "workload.parallelism.tp: tp must be a positive whole number" in res.output, res.output
    assert not (tmp_path / "o").exists()


def test_workload_batch_must_be_whole_tokens(tmp_path):
    p = tmp_path / "b.yaml"
    p.write_text("name: b\ngpus: 1024\nhb_domain: 8\nradix: 64\nworkload: {model: gpt-3-175b, gpu: gh200, batch: 1000.5}\n")
    res = run(["analyze", "iteration", p])
    assert res.exit_code == 2 and "workload.batch" in res.output, res.output


@pytest.mark.parametrize("analysis", ["iteration", "dp-traffic", "checkpoint"])
def test_analyze_needs_no_radix(analysis):
    """The analyses read N, K, link speed and planes: --radix is never asked for, and giving one changes nothing."""
    args = ["analyze", analysis, "--gpus", "3072", "--hb-domain", "8", "--model", "megatron-1t", "--gpu", "h100", "--hb-bandwidth", "7200", "--write-GBps", "273"]
    if analysis != "checkpoint":
        args = args[:-2]
    without = as_json(args)
    with_radix = as_json([*args, "--radix", "64"])
    assert without["rows"] == with_radix["rows"]


def test_k_sweep_skips_a_k_that_does_not_divide_n():
    """As compare does: the other K are computed, the skipped one is named (table and JSON)."""
    args = ["analyze", "iteration", "--gpus", "1024", "--hb-domain", "8,24,64", "--model", "gpt-3-175b", "--gpu", "gh200", "--hb-bandwidth", "7680"]
    res = run(args)
    assert res.exit_code == 0, res.output
    assert "skipped hb_domain=24: gpus: gpus 1024 is not a whole number of HB domains of 24" in res.output
    doc = as_json(args)
    assert [r["hb_domain"] for r in doc["rows"]] == [8, 64]
    assert len(doc["skipped"]) == 1 and doc["skipped"][0].startswith("hb_domain=24")
    res = run(["analyze", "iteration", "--gpus", "1024", "--hb-domain", "24,48", "--model", "gpt-3-175b", "--gpu", "gh200"])
    assert res.exit_code == 2 and "Traceback" not in res.output


@pytest.mark.parametrize("cmd", [["compare"], ["analyze", "dp-traffic", "--model", "llama-2-70b"]])
def test_thousands_separator_is_refused_not_read_as_24(cmd):
    res = run([*cmd, "--gpus", "1,024", "--hb-domain", "8", "--radix", "64"])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "gpus '1,024'" in res.output and "--gpus 1024" in res.output
    assert "24 " not in res.output.replace("1,024", "").replace("024", "")


def test_compare_sweeps_oversubscription_and_shows_it():
    base = ["compare", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--oversubscription", "1:1,3:1"]
    res = run(base)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert "d:u" in lines[2]
    body = [ln for ln in lines if ln.strip()[:1].isdigit()]
    assert [ln.split()[4] for ln in body] == ["1:1", "3:1"]
    rows = json.loads(run([*base, "--json"]).stdout)["rows"]
    assert [r["oversubscription"] for r in rows] == ["1:1", "3:1"]
    assert rows[1]["rail-optimized"]["switches"] < rows[0]["rail-optimized"]["switches"]
    per_tier = json.loads(run(["compare", "--gpus", "32768", "--hb-domain", "8", "--radix", "64", "--oversubscription", "1:1/3:1", "--json"]).stdout)["rows"]
    assert [r["oversubscription"] for r in per_tier] == ["1:1/3:1"]
