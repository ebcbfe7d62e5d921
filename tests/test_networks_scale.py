"""The other networks in a large hall: dgx-h100-superpod at 65,536 and 131,072 GPUs.

In a hall this size the management row is far from most rows. The storage and in-band leaves
stand with their nodes, and each shared device gets its OOB access from the OOB switches
nearest it. Every run stays within its medium's reach, and the closed form still equals
the wiring.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from topogen import pipeline
from topogen.fabric import networks as nw
from topogen.layout.networks import ACCESS_REACH_M
from topogen.spec.cluster import load_spec

ARCHES = ("rail-optimized", "rail-only")


@pytest.fixture(scope="module")
def hall():
    return pipeline.build(load_spec("dgx-h100-superpod", {"gpus": 65536}))


@pytest.mark.parametrize("arch", ARCHES)
def test_access_runs_fit_their_reach(hall, arch):
    """Node runs to the storage and in-band leaves, and every OOB management-port run, are 100 m at most (they were up to 160 m)."""
    n, nl = hall.networks[arch], hall.network_layouts[arch]
    c = n.cables
    known = ~np.isnan(nl.length_m)
    node = (c.role == nw.R_NODE) & known
    mport = (c.role == nw.R_MPORT) & known
    assert node.sum() == 2 * 2 * 8192  # two storage and two in-band ports per node, all placed
    assert nl.length_m[node].max() <= ACCESS_REACH_M
    assert mport.sum() > 20_000 and nl.length_m[mport].max() <= ACCESS_REACH_M
    # the leaves stand with their nodes: a node's run to its leaf stays in its row
    assert nl.leaves_with_su == n.plan.leaves_with_su > 0
    assert n.plan.oob_home is not None and n.plan.oob_home.storage_leaves, "the shared devices' OOB homes are set in a hall this size"


@pytest.mark.parametrize("arch", ARCHES)
def test_closed_form_is_the_wiring(hall, arch):
    n = hall.networks[arch]
    assert nw.closed_form(n.plan) == n.counts()


@pytest.mark.parametrize("arch", ARCHES)
def test_every_shared_device_has_one_oob_port(hall, arch):
    """Each device's management port is cabled once, and each OOB switch port holds one cable."""
    n = hall.networks[arch]
    c = n.cables
    m = (c.net == nw.OOB) & (c.role == nw.R_MPORT)
    ends = np.stack([c.a_kind[m].astype(np.int64), c.a_idx[m], c.a_port[m]], axis=1)
    assert len(np.unique(ends, axis=0)) == int(m.sum())
    sw = np.stack([c.z_idx[m], c.z_port[m]], axis=1)
    assert len(np.unique(sw, axis=0)) == int(m.sum())
    oob = {i for i, s in enumerate(n.switches) if s.network == nw.OOB}
    assert set(np.unique(c.z_idx[m]).tolist()) <= oob
    assert int(c.z_port[m].max()) <= n.plan.oob_radix


def test_the_management_row_holds_only_the_rest(hall):
    """No storage node leaf or in-band leaf is left in the management row when it fits above its nodes' trays."""
    n, nl = hall.networks["rail-optimized"], hall.network_layouts["rail-optimized"]
    racks = nl.where[nw.SWITCH][0]
    c = n.cables
    serve_nodes = set(np.unique(c.z_idx[(c.role == nw.R_NODE) & (c.net != nw.OOB)]).tolist())
    leaves = [i for i, s in enumerate(n.switches) if s.network != nw.OOB and s.role == "leaf"]
    assert all((racks[i] < nl.first_management) == (i in serve_nodes) for i in leaves)  # in-band leaves of servers and OOB uplinks only stay
    assert sum(racks[i] < nl.first_management for i in leaves) == nl.leaves_with_su
    spines = [i for i, s in enumerate(n.switches) if s.role in ("spine", "super-spine")]
    assert all(racks[i] >= nl.first_management for i in spines)
    placed = nl.summary()["management_racks_placed"]
    assert placed == n.racks[1] - sum(k != "compute" for k in nl.floor.kind[: nl.first_management])


@pytest.mark.parametrize("gpus", [65536, 131072])
def test_cli_builds_the_bom(tmp_path, gpus):
    """Through the real CLI: both sizes exit 0 with a BOM (a run past every reach would exit 2); about 3 s and 6 s."""
    out = subprocess.run([sys.executable, "-m", "topogen", "build", "dgx-h100-superpod", "--gpus", str(gpus), "--formats", "bom", "--out", str(tmp_path / "o"), "-q"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    for arch in ARCHES:
        a = s["networks"]["architectures"][arch]
        assert a["racks"]["compute"] == gpus // 32
        assert (tmp_path / "o" / arch / "bom.csv").exists()


@pytest.fixture(scope="module")
def small_plan():
    return pipeline.build(load_spec("dgx-h100-superpod")).networks["rail-optimized"].plan


@pytest.mark.parametrize("draw", range(6))
@pytest.mark.parametrize("cut", [0, 5])
def test_oob_homes_are_honoured_and_closed_form_holds(small_plan, draw, cut):
    """Any homes (some for the management row; sections given in full or ``cut`` short) give a wiring equal to the closed form, each device on its home's switches."""
    st, ib, o = nw.solve(small_plan)
    ns, ni = len(st.up) + st.upper.spines, ib.leaves + ib.spines
    rng = np.random.default_rng(draw)
    groups = len(o.group_switches)

    def draw_(n):
        return tuple(int(x) for x in rng.integers(-1, groups + 1, max(0, n - cut)))  # a home past the last group is clipped to it

    fabric_racks = small_plan.compute_switch_racks
    homes = nw.OobHomes(draw_(small_plan.compute_switches), draw_(ns), draw_(ni), draw_(fabric_racks * small_plan.net.oob.pdus_per_management_rack))
    plan = replace(small_plan, oob_home=homes)
    n = nw.generate(plan)
    assert nw.closed_form(plan) == n.counts()
    c = n.cables
    m = (c.net == nw.OOB) & (c.role == nw.R_MPORT)
    assert len(np.unique(np.stack([c.z_idx[m], c.z_port[m]], axis=1), axis=0)) == int(m.sum())
    # the shared block is last; each device's switch belongs to its home group (or is an oob-mgmt switch for -1)
    st, ib, o = nw.solve(plan)
    sel = np.flatnonzero(m)[-o.shared :]
    want = nw.homes(plan, o.shared, ns, ni)
    assert want[: len(homes.fabric)] == list(homes.fabric) and want[small_plan.compute_switches : small_plan.compute_switches + len(homes.storage_leaves)] == list(homes.storage_leaves)
    for j, h in zip(sel.tolist(), want):
        s = n.switches[int(c.z_idx[j])]
        assert (s.group == min(h, groups - 1)) if h >= 0 else s.name.startswith("oob-mgmt-")


def test_homes_for_more_devices_than_the_model_has_are_refused(small_plan):
    with pytest.raises(ValueError):
        nw.generate(replace(small_plan, oob_home=nw.OobHomes(fabric=(0,) * (small_plan.compute_switches + 1))))
