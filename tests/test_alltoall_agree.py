"""analyze alltoall and simulate agree on the same wiring: EP groups, leaf oversubscription, both architectures.

The closed form (:func:`topogen.analysis.fabric.alltoall_report`, with the leaf factor of
the generated wiring when a leaf is oversubscribed) and the max-min fair simulation of
``alltoall:G`` (every ordered pair of each group of G consecutive GPUs, sprayed) give the
same completion time for the same bytes per pair, over a grid of sizes, radixes, ratios
and group sizes, 1 to 3 tiers.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from topogen.analysis.fabric import alltoall_report
from topogen.fabric import clos
from topogen.spec.cluster import build_spec
from topogen.traffic import simulate
from topogen.traffic.patterns import Pattern, parse
from topogen.util.errors import InputError

S = 1e6  # bytes per ordered pair
GRID = [
    (256, 16, "1:1", 32), (256, 16, "3:1", 32), (256, 16, "3:1", 256),
    (512, 32, "1:1", 64), (512, 32, "3:1", 64), (512, 32, "3:1", 512), (512, 32, "7:1", 128),
    (512, 64, "3:1", 128), (1024, 32, "7:1", 256), (1024, 32, "3:1", 16), (512, 32, "3:1", 8),
]


@pytest.mark.parametrize("gpus,radix,ratio,group", GRID)
def test_analyze_alltoall_agrees_with_simulate(gpus, radix, ratio, group):
    spec = build_spec({"name": "agree", "gpus": gpus, "hb_domain": 8, "radix": radix, "link_speed": 400, "oversubscription": ratio, "hb_bandwidth_gbps": 7200}, {})
    row = alltoall_report([spec], bytes_per_pair=S, group_gpus=group).rows[0]
    for arch, key in (("rail-optimized", "clos_s"), ("rail-only", "rail_only_pipelined_s")):
        fabric = clos.generate(replace(spec, arch=arch), arch)
        res = simulate.run(fabric, Pattern("alltoall", None if group == gpus else group), "spray", 7200.0)
        assert res.completion_s(S) == pytest.approx(row[key], rel=1e-9), (arch, fabric.tiers)
    if ratio != "1:1" and group > 8:
        assert row["leaf_factor_rail_optimized"] > 1  # rail-optimized's cross-rail pairs climb to the spines
    else:
        assert row["clos_s"] == pytest.approx(max((group - 8) * S / 50e9, 7 * S / 900e9) if group > 8 else 7 * S / 900e9)


def test_alltoall_group_pattern_input():
    assert parse("alltoall:64") == Pattern("alltoall", 64)
    for bad in ("alltoall:1", "alltoall:x", "alltoall:0"):
        with pytest.raises(InputError) as exc:
            parse(bad)
        assert "alltoall:G" in exc.value.problems[0].render()
    spec = build_spec({"name": "agree", "gpus": 64, "hb_domain": 8, "radix": 16, "link_speed": 400, "hb_bandwidth_gbps": 7200}, {})
    fabric = clos.generate(replace(spec, arch="rail-optimized"), "rail-optimized")
    with pytest.raises(InputError) as exc:
        simulate.run(fabric, Pattern("alltoall", 12), "spray", 7200.0)
    assert "does not tile" in exc.value.problems[0].render()
