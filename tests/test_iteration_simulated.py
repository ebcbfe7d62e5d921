"""`topogen analyze iteration --bandwidth simulated`: B_S is the DP ring's bus bandwidth as `topogen simulate` reports it."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from topogen.analysis.fabric import iteration_report
from topogen.cli import main
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

WL = ["--model", "llama-2-70b", "--gpu", "h100", "--hb-bandwidth", "7200"]
NOMINAL_KEYS = {
    "model", "gpu", "gpus", "hb_domain", "batch_tokens", "n_m_rule", "n_m", "n_ds", "n_df", "iteration_s", "ideal_s", "relative",
    "compute_s", "dp_network_s", "dp_hb_s", "mp_hb_s", "scale_out_gbps", "hb_bandwidth_gbps", "train_days", "one_domain_train_days", "change_vs_smaller_k",
}


def _json(args: list[str]) -> dict:
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("shape", [
    ["--gpus", "64", "--hb-domain", "8", "--radix", "16"],
    ["--gpus", "512", "--hb-domain", "8", "--radix", "16"],  # 3 tiers
    ["--gpus", "1024", "--hb-domain", "8", "--radix", "32", "--oversubscription", "3:1"],
    ["--gpus", "768", "--hb-domain", "4", "--radix", "16", "--oversubscription", "3:1"],
    ["--gpus", "512", "--hb-domain", "8", "--radix", "32", "--planes", "2"],
])
@pytest.mark.parametrize("routing", ["spray", "ecmp", "dmodk"])
def test_one_job_one_figure(shape, routing):
    """Each architecture's B_S equals 8 x simulate's bus_bandwidth_GBps for the same spec and routing."""
    sim = _json(["simulate", *shape, "--pattern", "ring-allreduce", "--routing", routing, "--hb-bandwidth", "7200", "--json"])
    ana = _json(["analyze", "iteration", *shape, *WL, "--bandwidth", "simulated", "--routing", routing, "--json"])
    want = {r["arch"]: r["bus_bandwidth_GBps"] for r in sim["rows"]}
    got = {r["arch"]: r for r in ana["rows"]}
    assert set(got) == set(want) == {"rail-optimized", "rail-only"}
    for arch, bus in want.items():
        assert got[arch]["scale_out_gbps"] == bus * 8
        assert got[arch]["routing"] == routing and got[arch]["bandwidth"] == "simulated"
    assert any(p["status"] == "simulated" and routing in p["source"] for p in ana["parameters"])


@pytest.mark.parametrize("n,r,ratio", [(1024, 32, "3:1"), (2048, 32, "3:1"), (4096, 32, "3:1")])
def test_slower_ring_lengthens_only_the_network_term(n, r, ratio):
    """ecmp on an oversubscribed leaf: where the ring runs slower than line rate, only the DP network term grows, by line rate / simulated.

    The nominal B_S of an oversubscribed fabric is the bound where every GPU's bytes leave its leaf
    (line rate / oversubscription): a rail-aligned ring, simulated, never runs slower than it.
    """
    spec = build_spec({"gpus": n, "hb_domain": 8, "radix": r, "oversubscription": ratio, "workload": {"model": "llama-2-70b", "gpu": "h100"}, "hb_bandwidth_gbps": 7200})
    nominal = iteration_report([spec])
    sim = iteration_report([spec], bandwidth="simulated", routing="ecmp")
    line = float(spec.link_speed * spec.nic_ports)
    for row in sim.rows:
        base = next(x for x in nominal.rows if x.get("arch", row["arch"]) == row["arch"])
        line_dp = base["dp_network_s"] * base["scale_out_gbps"] / line
        assert base["scale_out_gbps"] - 1e-9 <= row["scale_out_gbps"] <= line + 1e-9
        assert row["dp_network_s"] == pytest.approx(line_dp * line / row["scale_out_gbps"], rel=1e-12)
        for key in ("compute_s", "dp_hb_s", "mp_hb_s", "ideal_s", "n_m"):
            assert row[key] == base[key]
        assert row["iteration_s"] == pytest.approx(base["iteration_s"] - base["dp_network_s"] + row["dp_network_s"], rel=1e-12)
    assert any(r["scale_out_gbps"] < line for r in sim.rows), "a case where ecmp's collisions slow the ring"


def test_nominal_stays_the_default():
    args = ["analyze", "iteration", "--gpus", "256", "--hb-domain", "8", "--radix", "16", *WL]
    plain = CliRunner().invoke(main, args, catch_exceptions=False)
    explicit = CliRunner().invoke(main, [*args, "--bandwidth", "nominal"], catch_exceptions=False)
    assert plain.exit_code == explicit.exit_code == 0
    assert plain.stdout == explicit.stdout
    assert "arch" not in plain.stdout.splitlines()[1]
    rows = _json([*args, "--json"])["rows"]
    assert len(rows) == 1 and set(rows[0]) == NOMINAL_KEYS


def test_one_domain_keeps_nominal_with_a_note():
    spec = build_spec({"gpus": 8, "hb_domain": 8, "radix": 16, "workload": {"model": "llama-2-70b", "gpu": "b200"}, "hb_bandwidth_gbps": 7200})
    rep = iteration_report([spec], bandwidth="simulated")
    assert all(r["dp_network_s"] == 0 for r in rep.rows)
    assert any("one HB domain" in n for n in rep.notes)


def test_bad_routing_and_bandwidth_name_the_field():
    res = CliRunner().invoke(main, ["analyze", "iteration", "--gpus", "64", "--hb-domain", "8", "--radix", "16", *WL, "--bandwidth", "simulated", "--routing", "nope"])
    assert res.exit_code == 2 and "routing" in res.output and "spray" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(main, ["analyze", "iteration", "--gpus", "64", "--hb-domain", "8", "--radix", "16", *WL, "--bandwidth", "fast"])
    assert res.exit_code == 2 and "bandwidth" in res.output
    spec = build_spec({"gpus": 64, "hb_domain": 8, "radix": 16, "workload": {"model": "llama-2-70b", "gpu": "h100"}, "hb_bandwidth_gbps": 7200})
    with pytest.raises(InputError) as exc:
        iteration_report([spec], bandwidth="measured")
    assert exc.value.problems[0].path == "bandwidth"
