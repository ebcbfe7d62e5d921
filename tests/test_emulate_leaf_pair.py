"""``topogen emulate`` of ``design: leaf-pair`` on real FRR: the pair's eBGP over every ISL converges, GPUs reach across it.

A leaf pair has no spine: a GPU on leaf-a reaches a GPU on leaf-b over the
inter-switch links, leaf-a's route to each of leaf-b's GPUs having one next hop
per ISL (ECMP over all of them), and one ISL down narrows it by one. Shapes:
one plane at 1:1 (4 GPUs a node), two planes at 2:1 (2 GPUs a node), and BGP
unnumbered with a subnet per rail per leaf. Runs as root with Debian's frr;
skipped (with the reason) where network namespaces or FRR are missing.
"""

from __future__ import annotations

import csv

import pytest
import yaml
from test_emulate import WHY, emulate, expected, topogen

pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

SHAPES = {
    "pair": {"gpus": 32, "hb_domain": 8, "gpus_per_node": 4, "radix": 32},
    "planes": {"gpus": 16, "hb_domain": 8, "gpus_per_node": 2, "radix": 32, "planes": 2, "oversubscription": "2:1"},
    "unnumbered": {"gpus": 16, "hb_domain": 4, "radix": 16, "addressing": {"p2p": "unnumbered", "gpu_subnet": "rail"}},
}


@pytest.fixture(scope="module", params=sorted(SHAPES))
def build(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("lp-emulate")
    spec = {"name": f"lp-{request.param}", "design": "leaf-pair", "arch": "rail-optimized", **SHAPES[request.param]}
    (root / "spec.yaml").write_text(yaml.safe_dump(spec))
    res = topogen("build", str(root / "spec.yaml"), "--formats", "cabling,addressing,frr", "--out", str(root / "out"), "-q")
    assert res.returncode == 0, res.stderr
    return request.param, root / "out"


def test_pair_converges_and_routes_over_every_isl(build):
    shape, out = build
    res, r = emulate(out, "rail-optimized", "--timeout", "90")
    assert res.returncode == 0, res.stdout + res.stderr
    assert r["ok"] and r["failures"] == []
    with open(out / "rail-optimized" / "cabling.csv", newline="") as fh:
        cables = list(csv.DictReader(fh))
    isls = [c for c in cables if c["link"] == "leaf-leaf"]
    planes = SHAPES[shape].get("planes", 1)
    assert isls and all(c["a_device"].endswith("leaf-a") and c["z_device"].endswith("leaf-b") for c in isls)
    # a session per ISL end, every one Established; every GPU NIC reaches every NIC of its plane
    assert r["sessions"] == r["sessions_up"] == 2 * len(isls) == expected(out, "rail-optimized")["sessions"]
    nics = r["gpus_total"]
    assert r["gpus_sampled"] == nics == SHAPES[shape]["gpus"] * planes
    per_plane = nics // planes
    assert r["pairs_reach"] == planes * per_plane * (per_plane - 1)
    # ECMP: every route of a leaf to the other leaf's GPUs at the width of its ISLs (checked by emulate), one ISL down narrows it
    assert r["ecmp_checked"] == nics and r["ecmp_narrowed"] >= 1
    assert r["link_down"].split()[0].endswith("leaf-a") and "leaf-b:" in r["link_down"]
    assert r["reconverge_down_s"] is not None and r["reconverge_up_s"] is not None
