"""``topogen analyze iteration|alltoall|checkpoint|dp-traffic``: sweeps, JSON shape, parameters, caveats, exit codes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from topogen.cli import main

FLAGS = ["--gpus", "16384", "--hb-domain", "32,64,512,1024", "--radix", "64", "--model", "gpt-3-175b", "--gpu", "gh200", "--hb-bandwidth", "7680"]


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def as_json(args):
    res = run([*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


ITERATION_FIELDS = {"gpus", "hb_domain", "batch_tokens", "n_m", "iteration_s", "ideal_s", "relative", "compute_s", "dp_network_s", "dp_hb_s", "mp_hb_s"}


def test_iteration_sweep_json_reproduces_the_k_claims():
    doc = as_json(["analyze", "iteration", *FLAGS])
    rows = doc["rows"]
    assert [r["hb_domain"] for r in rows] == [32, 64, 512, 1024]
    assert all(ITERATION_FIELDS <= set(r) for r in rows)
    assert all(r["relative"] == r["ideal_s"] / r["iteration_s"] for r in rows)
    assert abs(-100 * rows[1]["change_vs_smaller_k"] - 12) <= 0.5
    assert abs(-100 * rows[3]["change_vs_smaller_k"] - 0.95) <= 0.5
    names = {p["name"]: p for p in doc["parameters"]}
    assert names["C, dense BF16 FLOP/s per GPU (gh200)"]["status"] == "fit"
    assert names["B_S, scale-out bandwidth per GPU"]["value"] == 400 and names["B_S, scale-out bandwidth per GPU"]["status"] == "spec"
    assert all(p["status"] in ("paper", "derived", "fit", "assumed", "user", "spec") for p in doc["parameters"])
    assert any("printed Eq. 2" in c for c in doc["caveats"]) and any("32M tokens" in c for c in doc["caveats"])


def test_iteration_table_names_parameters_and_caveats():
    res = run(["analyze", "iteration", *FLAGS, "--nm-rule", "printed"])
    assert res.exit_code == 0, res.output
    assert "Rule used here: printed." in res.stdout
    assert "[paper]" in res.stdout and "[fit]" in res.stdout and "[spec]" in res.stdout
    assert "GPT-3's own paper used 3.2M" in res.stdout


def test_batch_sweep_palm():
    doc = as_json(["analyze", "iteration", "--gpus", "32768", "--hb-domain", "256", "--radix", "64", "--model", "palm-540b", "--gpu", "gh200", "--hb-bandwidth", "7680", "--batch", "512x2048,1024x2048,2048x2048"])
    rel = [round(100 * r["relative"]) for r in doc["rows"]]
    assert rel == [53, 64, 74]
    assert any("117.0 days" in n for n in doc["notes"])


def test_preset_workload_is_used():
    doc = as_json(["analyze", "iteration", "gh200-32k"])
    assert doc["rows"][0]["gpus"] == 32768 and doc["rows"][0]["hb_bandwidth_gbps"] == 7680


def test_alltoall_json_fields():
    doc = as_json(["analyze", "alltoall", "--gpus", "2048", "--hb-domain", "8", "--radix", "64", "--model", "deepseek-v3", "--hb-bandwidth", "7200"])
    r = doc["rows"][0]
    for key in ("clos_s", "rail_only_pipelined_s", "rail_only_serial_s", "overhead_pipelined", "overhead_serial"):
        assert key in r
    doc2 = as_json(["analyze", "alltoall", "--gpus", "2048", "--hb-domain", "8", "--radix", "64", "--hb-bandwidth", "7200", "--bytes-per-pair", "1M"])
    assert doc2["rows"][0]["bytes_per_pair"] == 1e6 and doc2["rows"][0]["group_gpus"] == 2048


def test_checkpoint_json_fields_and_target_time():
    base = ["analyze", "checkpoint", "--gpus", "3072", "--hb-domain", "8", "--radix", "64", "--model", "megatron-1t", "--tp", "8", "--pp", "64", "--dp", "megatron"]
    r = as_json([*base, "--write-GBps", "273"])["rows"][0]
    for key in ("checkpoint_bytes", "writers", "write_GBps", "write_s", "write_per_gpu_GBps", "write_per_node_GBps", "overhead", "restore_read_GBps"):
        assert key in r
    t = as_json([*base, "--write-s", "60", "--interval-h", "1"])["rows"][0]
    assert t["write_s"] == 60 and t["overhead"] == 60 / 3600


def test_dp_traffic_json_fields():
    doc = as_json(["analyze", "dp-traffic", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", "llama-2-70b", "--gpu", "h100"])
    assert [r["scheme"] for r in doc["rows"]] == ["ddp", "zero1", "zero2", "fsdp", "hsdp", "megatron"]
    for r in doc["rows"]:
        assert {"bytes_per_gpu", "bytes_per_nic", "rail_time_s", "nvlink_bytes_per_gpu", "memory_fits", "cross_rail_bytes"} <= set(r)
    assert any("stays on one rail" in c for c in doc["caveats"])


@pytest.mark.parametrize(
    "args,field",
    [
        (["analyze", "dp-traffic", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", "llama-2-70b", "--tp", "16"], "workload.parallelism.tp:"),
        (["analyze", "dp-traffic", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", "llama-2-70b", "--tp", "8", "--pp", "3"], "workload.parallelism.pp:"),
        (["analyze", "dp-traffic", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", "llama-2-70b", "--gpu", "h100", "--dp", "ddp"], "does not fit"),
        (["analyze", "iteration", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", "llama-2-70b", "--hb-bandwidth", "7200"], "workload.gpu:"),
        (["analyze", "iteration", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", "llama-2-70b", "--gpu", "h100", "--batch", "lots"], "batch: not a batch"),
        (["analyze", "iteration", "--gpus", "1024", "--hb-domain", "8", "--radix", "64"], "workload: the iteration analysis needs a workload"),
        (["analyze", "alltoall", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--hb-bandwidth", "7200"], "bytes_per_pair:"),
        (["analyze", "alltoall", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--bytes-per-pair", "1M"], "hb_bandwidth_gbps:"),
        (["analyze", "checkpoint", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", "gpt-3-175b"], "workload.checkpoint:"),
        (["analyze", "iteration", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", "gpt-9"], "workload.model: no model preset named 'gpt-9'"),
    ],
)
def test_bad_input_exits_2_naming_the_field(args, field):
    res = run(args)
    assert res.exit_code == 2, res.output
    assert field in res.stderr and "Traceback" not in res.output


def test_hsdp_shard_flag():
    """HSDP over 8 domains of 8 (64 GPUs), 16 replicas: (7/8)·Ψ·6/8 + 2·(15/16)·Ψ·2/64 bytes per NIC."""
    doc = as_json(["analyze", "dp-traffic", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--model", "llama-2-70b", "--gpu", "h100", "--dp", "hsdp", "--hsdp-shard-gpus", "64"])
    hs = next(r for r in doc["rows"] if r["scheme"] == "hsdp")
    assert hs["chosen"] and hs["hsdp_shard_gpus"] == 64 and hs["memory_fits"]
    assert hs["bytes_per_nic"] == pytest.approx(7 / 8 * 70e9 * 6 / 8 + 2 * 15 / 16 * 70e9 * 2 / 64)
