"""The simulated all-to-all against `topogen analyze alltoall` (its pipelined figure), exact and aggregated by leaf pair; leaf groups against leaf pairs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from topogen.fabric import clos
from topogen.analysis.alltoall import alltoall
from topogen.cli import main
from topogen.spec.cluster import build_spec
from topogen.traffic import alltoall as a2a
from topogen.traffic import network
from topogen.traffic.failures import Failure
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


FIGURES = ("min_rate_fraction", "mean_rate_fraction", "max_link_load")


def _failures(f) -> dict[str, tuple[str, ...]]:
    """One of each kind of failure, named from the fabric: a tier-2 switch, a leaf's uplink, a NIC cable, a whole leaf."""
    n = f.gpus
    L = f.links
    tiers = f.switch_tiers()
    up = int(np.flatnonzero((L.a_dev >= n) & (tiers[np.maximum(L.a_dev - n, 0)] == 1))[0])
    leaf = f.switches[int(L.a_dev[up]) - n].name
    return {
        "none": (),
        "spine": (f.switches[int(np.flatnonzero(tiers == 2)[0])].name,),
        "uplink": (f"{leaf}:p{int(L.a_port[up])}",),
        "nic": ("hb00-gpu0:nic0" if f.gpus // f.hb_domain <= 100 else "hb000-gpu0:nic0",),
        "leaf": (f.switches[int(np.flatnonzero(tiers == 1)[-1])].name,),
    }


def _same(a, b):
    for key in FIGURES:
        assert getattr(a, key) == pytest.approx(getattr(b, key), rel=1e-9, abs=1e-12), key
    assert a.completion_s(S) == pytest.approx(b.completion_s(S), rel=1e-9)
    assert a.pairs == b.pairs and a.unroutable == b.unroutable
    ta, tb = {t["tier"]: t for t in a.tiers}, {t["tier"]: t for t in b.tiers}
    assert ta.keys() == tb.keys()
    for tier in ta:
        for key in ("mean_utilisation", "max_utilisation", "max_offered_over_capacity"):
            assert ta[tier][key] == pytest.approx(tb[tier][key], rel=1e-9, abs=1e-12), (tier, key)
    assert [round(x["offered_over_capacity"], 9) for x in a.busiest][:1] == [round(x["offered_over_capacity"], 9) for x in b.busiest][:1]


@pytest.mark.parametrize("n,k,r", [(256, 8, 16), (512, 8, 16), (96, 4, 16), (1024, 8, 32), (2048, 8, 16)])
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("fail", ["none", "spine", "uplink", "nic", "leaf"])
def test_leaf_groups_give_the_leaf_pairs_figures(n, k, r, arch, fail):
    """Aggregated by leaf group, the all-to-all gives the figures of the leaf-pair aggregation, healthy and with each kind of failure."""
    spec = build_spec({"gpus": n, "hb_domain": k, "radix": r})
    f = clos.generate(spec, arch)
    names = _failures(f)[fail]
    failure = Failure(names, 0) if names else None
    pairs = run(f, parse("alltoall"), "spray", 3000.0, exact_gpus=0, leaf_pairs=1 << 40, failure=failure)
    groups = run(f, parse("alltoall"), "spray", 3000.0, exact_gpus=0, leaf_pairs=0, failure=failure)
    assert (pairs.aggregation, groups.aggregation) == ("leaf-pair", "leaf-group-pair")
    assert any("aggregated by leaf group" in x for x in groups.notes)
    assert groups.flows <= pairs.flows
    _same(groups, pairs)
    if fail == "none":
        _same(groups, run(f, parse("alltoall"), "spray", 3000.0, exact_gpus=None))


@pytest.mark.parametrize("n,r", [(4096, 16), (8192, 32), (16384, 64)])
def test_leaf_groups_stay_few(n, r):
    """Flows of the grouped all-to-all: group pairs, far fewer than leaf pairs, and numbered alike in every run."""
    spec = build_spec({"gpus": n, "hb_domain": 8, "radix": r})
    f = clos.generate(spec, "rail-optimized")
    net = network.build(f, 7200.0)
    leaves = int((net.leaf_of_switch >= 0).sum())
    group = a2a.leaf_groups(net)
    assert group.max() + 1 < leaves and np.bincount(group).min() >= 2
    res = run(f, parse("alltoall"), "spray", 7200.0, leaf_pairs=0)
    assert res.flows <= (group.max() + 1) ** 2 + 2 * (group.max() + 1) + n // 8
    assert res.flows * 4 < leaves**2


def test_cli_states_the_aggregation(monkeypatch):
    monkeypatch.setattr(a2a, "LEAF_PAIRS", 16)
    monkeypatch.setattr(a2a, "EXACT_GPUS", 64)
    args = ["simulate", "--gpus", "256", "--hb-domain", "8", "--radix", "16", "--hb-bandwidth", "7200", "--pattern", "alltoall,ring-allreduce", "--json"]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["rows"]
    assert {(r["pattern"], r["aggregation"]) for r in rows} == {("alltoall", "leaf-group-pair"), ("ring-allreduce", "gpu-pair")}
    assert all(any("aggregated by leaf group" in x for x in r["notes"]) for r in rows if r["pattern"] == "alltoall")
    text = CliRunner().invoke(main, args[:-1], catch_exceptions=False).stdout
    assert "aggregated by leaf group" in text
