"""Analyses on design: leaf-pair: one job, one figure, whether the closed form or the simulator computes it.

* the all-to-all's rail-optimized time (``topogen analyze alltoall``) is the
  simulated all-to-all's completion time (``topogen simulate --size``): the ISLs
  stretch it by max(1, N/(4I)) in both;
* the DP ring never crosses an ISL, so the simulated B_S of the iteration
  analysis is the nominal link speed x planes at every GPU:ISL ratio.
"""

from __future__ import annotations

import pytest

from topogen.analysis import bus_bandwidth as bus
from topogen.analysis.fabric import alltoall_report
from topogen.fabric import clos
from topogen.spec import leafpair
from topogen.spec.cluster import build_spec
from topogen.traffic.patterns import parse
from topogen.traffic.simulate import run

HB = 1e6
SHAPES = [(16, 8, 8, 64), (32, 8, 4, 64), (64, 8, 2, 128), (48, 4, 4, 64), (128, 8, 8, 256)]
GRID = [(*s, o, p) for s in SHAPES for o in ("1:1", "2:1", "3:1") for p in (1, 2)]
SIZE = 1e6


def spec_for(n, k, gpn, r, ratio, planes, arch="both"):
    return build_spec({"name": "lp", "design": "leaf-pair", "arch": arch, "gpus": n, "hb_domain": k, "gpus_per_node": gpn, "radix": r, "oversubscription": ratio, "planes": planes})


@pytest.mark.parametrize("n,k,gpn,r,ratio,planes", GRID)
def test_alltoall_closed_form_is_the_simulated_completion(n, k, gpn, r, ratio, planes):
    spec = spec_for(n, k, gpn, r, ratio, planes)
    row = alltoall_report([spec], bytes_per_pair=SIZE, hb_gbps=HB).rows[0]
    isls = leafpair.plan(n, r, ratio, False).isls
    assert row["isl_factor"] == pytest.approx(max(1.0, n / (4 * isls)))
    res = run(clos.generate(spec, "rail-optimized"), parse("alltoall"), "spray", HB)
    assert row["clos_s"] == pytest.approx(res.completion_s(SIZE), rel=1e-9)
    ro = run(clos.generate(spec, "rail-only"), parse("alltoall"), "spray", HB)
    assert row["rail_only_pipelined_s"] == pytest.approx(ro.completion_s(SIZE), rel=1e-9)  # no ISL: the rails alone


def test_a_clos_row_has_no_isl_factor():
    spec = build_spec({"name": "c", "gpus": 64, "hb_domain": 8, "radix": 16})
    assert "isl_factor" not in alltoall_report([spec], bytes_per_pair=SIZE, hb_gbps=HB).rows[0]


@pytest.mark.parametrize("n,k,gpn,r,ratio,planes", [g for g in GRID if g[0] > g[1]])
@pytest.mark.parametrize("routing", ["spray", "ecmp", "dmodk"])
def test_simulated_bs_is_nominal_on_a_pair(n, k, gpn, r, ratio, planes, routing):
    spec = spec_for(n, k, gpn, r, ratio, planes)
    got = dict(bus.simulated(spec, routing, HB))
    assert set(got) == {"rail-optimized", "rail-only"}
    for arch, p in got.items():
        assert p.value == pytest.approx(spec.scale_out_gbps), arch
