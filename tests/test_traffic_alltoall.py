"""The simulated all-to-all against `topogen analyze alltoall` (its pipelined figure), exact and aggregated by leaf pair."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from topogen.fabric import clos
from topogen.analysis.alltoall import alltoall
from topogen.cli import main
from topogen.spec.cluster import build_spec
from topogen.traffic.patterns import parse
from topogen.traffic.simulate import run

S = 1e6  # bytes per ordered pair


@pytest.mark.parametrize("n,k,r", [(64, 8, 16), (128, 8, 16), (96, 4, 16), (256, 8, 16), (128, 16, 32)])
@pytest.mark.parametrize("bf", [7200.0, 400.0, 150.0])
@pytest.mark.parametrize("arch", ["rail-only", "rail-optimized"])
@pytest.mark.parametrize("exact", [True, False])
def test_alltoall_completion_is_the_pipelined_figure(n, k, r, bf, arch, exact):
    """Rail-only: max(K(M-1)s/B_S, (K-1)Ms/B_F); rail-optimized (non-blocking): max(K(M-1)s/B_S, (K-1)s/B_F)."""
    spec = build_spec({"gpus": n, "hb_domain": k, "radix": r})
    f = clos.generate(spec, arch)
    res = run(f, parse("alltoall"), "spray", bf, exact_gpus=None if exact else 0)
    a = alltoall(k, n // k, S, spec.scale_out_gbps * 1e9 / 8, bf * 1e9 / 8)
    want = a.rail_only_pipelined_s if arch == "rail-only" else a.clos_s
    assert res.completion_s(S) == pytest.approx(want, rel=1e-9)
    assert res.pairs == n * (n - 1)
    if bf >= 400 * (k - 1) * (n // k) / (k * (n // k - 1)):  # the HB domain keeps up: every GPU sends at line rate
        assert res.min_rate_fraction == pytest.approx(1.0)
    assert any(("aggregated" in x) != exact for x in res.notes)


def test_cli_alltoall_agrees_with_analyze():
    args = ["--gpus", "256", "--hb-domain", "8", "--radix", "16", "--hb-bandwidth", "300"]
    sim = CliRunner().invoke(main, ["simulate", *args, "--pattern", "alltoall", "--size", "1M", "--json"], catch_exceptions=False)
    assert sim.exit_code == 0, sim.output
    ana = CliRunner().invoke(main, ["analyze", "alltoall", *args, "--bytes-per-pair", "1M", "--json"], catch_exceptions=False)
    assert ana.exit_code == 0, ana.output
    rows = {r["arch"]: r for r in json.loads(sim.stdout)["rows"]}
    a = json.loads(ana.stdout)["rows"][0]
    assert rows["rail-only"]["completion_s"] == pytest.approx(a["rail_only_pipelined_s"], rel=1e-6)
    assert rows["rail-optimized"]["completion_s"] == pytest.approx(a["clos_s"], rel=1e-6)
