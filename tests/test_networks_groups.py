"""Node groups: in a large hall each scalable unit (or its share of a row) has storage node leaves, in-band leaves and OOB switches of its own.

The model (``NetworkPlan.node_groups``): closed form = wiring over grids, and no node leaf
serves nodes of two groups. The floor (``dgx-h100-superpod`` over GPU counts and SU sizes):
every node run fits its medium's reach, the leaves stand with the SU they serve, an SU that
wraps between rows too far apart is split by row, and an SU too wide for any leaf position
stops the build naming the SU and the row.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from math import ceil

import numpy as np
import pytest
import yaml

from topogen import layout
from topogen.spec import catalog
from topogen.bom import networks as nb
from topogen.checks.networks import validate_networks
from topogen.fabric import clos
from topogen.fabric import networks as nw
from topogen.layout import networks as ln
from topogen.spec.cluster import build_spec, read_spec_file, resolve_spec_path
from topogen.spec.networks import InbandSpec, NetworksSpec, NodePorts, OobSpec, StorageSpec
from topogen.util.errors import InputError

# --- the model -------------------------------------------------------------------------------


def _plan(nodes, su, radix, groups, design="separate", bonded=True, ports=2):
    net = NetworksSpec(
        inband_ports=NodePorts(ports, 100, bonded),
        storage_ports=NodePorts(2, 400 if design == "separate" else 100),
        management_servers=2,
        compute_fabric_managers=2,
        storage=StorageSpec(design=design, target_ports=24, target_leaves="per_su", fabric_managers=2 if design == "separate" else 0, target_speed=100 if design == "converged" else None),
        inband=InbandSpec(nfs_ports=4, leaf_uplinks=4),
        oob=OobSpec(),
    )
    return nw.NetworkPlan(nodes, nodes * 8, 8, 8, su, 4, 16, nodes // 4, net, radix, radix, 48, 24, ("s", "i", "o"), node_groups=tuple(groups))


def _groups(nodes, su, split, seed):
    """The SUs, each split at ``split`` random points (an SU's shares of rows)."""
    rng = np.random.default_rng(seed)
    out = []
    for f in range(0, nodes, su):
        n = min(su, nodes - f)
        cuts = sorted(set(rng.integers(1, n, min(split, n - 1)).tolist())) if n > 1 else []
        out += np.diff([0, *cuts, n]).tolist()
    return out


def _served(n: nw.Networks) -> dict[int, np.ndarray]:
    """Nodes cabled to each switch (storage and in-band node ports, converged storage ports)."""
    c = n.cables
    m = (c.a_kind == nw.NODE) & (c.net != nw.OOB)
    out: dict[int, list[int]] = {}
    for leaf, node in zip(c.z_idx[m].tolist(), c.a_idx[m].tolist()):
        out.setdefault(leaf, []).append(node)
    return {k: np.unique(v) for k, v in out.items()}


GRID = [(nodes, su, radix, split) for nodes in (31, 127, 300) for su in (4, 32, 64) for radix in (40, 64) for split in (0, 2)]


@pytest.mark.parametrize("nodes,su,radix,split", GRID)
def test_closed_form_equals_wiring_and_no_leaf_straddles_a_group(nodes, su, radix, split):
    groups = _groups(nodes, su, split, nodes + su + radix)
    p = _plan(nodes, su, radix, groups)
    n = nw.generate(p)
    assert nw.closed_form(p) == n.counts()
    assert validate_networks(n) == []
    ends = np.cumsum(groups)
    for leaf, nodes_ in _served(n).items():
        g = np.searchsorted(ends, nodes_, side="right")
        assert len(np.unique(g)) == 1, f"{n.switches[leaf].name} serves nodes of groups {np.unique(g).tolist()}"
    # node_leaves (what the layout places before wiring) lists exactly the leaves that serve nodes, with their nodes
    first, count = nw.node_leaves(p)
    ids = [i for i, s in enumerate(n.switches) if s.network != nw.OOB and s.role == "leaf" and s.group >= 0]
    assert len(ids) == len(first) and set(ids) == set(_served(n))
    for i, f, c in zip(ids, first.tolist(), count.tolist()):
        assert _served(n)[i].tolist() == list(range(f, f + c))


@pytest.mark.parametrize("design,bonded,ports", [("converged", True, 2), ("separate", False, 2), ("separate", False, 1), ("none", True, 2)])
@pytest.mark.parametrize("split", [0, 3])
def test_designs_with_groups(design, bonded, ports, split):
    """Converged storage ports share their node's group leaves; unbonded ports and no storage fabric too."""
    groups = _groups(127, 32, split, 7)
    p = _plan(127, 32, 64, groups, design=design, bonded=bonded, ports=ports)
    n = nw.generate(p)
    assert nw.closed_form(p) == n.counts()
    assert validate_networks(n) == []
    ends = np.cumsum(groups)
    assert all(len(np.unique(np.searchsorted(ends, v, side="right"))) == 1 for v in _served(n).values())
    leaves = [s for s in n.switches_of(nw.INBAND) if s.role == "leaf"]
    assert sum(s.group >= 0 for s in leaves) == len(nw.node_leaves(p)[0]) - (len(nw.storage_shape(p).leaf_first) if design == "separate" else 0)


def test_a_group_leaf_pair_per_su_and_names_by_su():
    """Four SUs of 32 nodes on 58-port leaf pairs: a pair each (8 leaves, not the 6 node order packs), switches named by their SU."""
    p = _plan(127, 32, 64, [32, 32, 32, 31])
    n = nw.generate(p)
    ib = [s for s in n.switches_of(nw.INBAND) if s.role == "leaf"]
    assert [s.group for s in ib if s.group >= 0] == [0, 0, 1, 1, 2, 2, 3, 3]
    split = nw.generate(replace(p, node_groups=(32, 32, 20, 12, 31)))  # SU 2 split in two rows
    oob = [s.name for s in split.switches_of(nw.OOB)]
    assert [x for x in oob if x.startswith("oob-su02")] == ["oob-su02-0", "oob-su02-1"]
    stor = [s.name for s in split.switches_of(nw.STORAGE) if s.role == "leaf" and s.group == 2]
    assert stor == ["stor-leaf-su02-p0-n64", "stor-leaf-su02-p1-n64", "stor-leaf-su02-p0-n84", "stor-leaf-su02-p1-n84"]  # each row's share, port by port


@pytest.mark.parametrize("nodes", [31, 127, 300])
@pytest.mark.parametrize("su", [1, 4, 16])
@pytest.mark.parametrize("radix", [40, 64])
def test_small_sus_share_a_pair_whole(nodes, su, radix):
    """Consecutive groups joined on one pair while they fit it (the layout's blocks): each in-band node leaf serves whole groups."""
    groups = _groups(nodes, su, 0, 0)
    p = _plan(nodes, su, radix, groups)
    down = nw.inband_down(p)
    blocks, k, n_ = [], 0, 0
    for g in groups:
        if k and (n_ + g) * nw.units_per_node(p) <= down:
            k, n_ = k + 1, n_ + g
        else:
            blocks += [k] if k else []
            k, n_ = 1, g
    blocks.append(k)
    p = replace(p, inband_blocks=tuple(blocks))
    n = nw.generate(p)
    assert nw.closed_form(p) == n.counts()
    assert validate_networks(n) == []
    ends = np.cumsum(groups)
    starts = set((ends - groups).tolist()) | {nodes}
    for leaf, v in _served(n).items():
        if n.switches[leaf].network == nw.INBAND:
            assert v[0] in starts and v[-1] + 1 in starts  # whole groups only
    pairs = sum(1 for s in n.switches_of(nw.INBAND) if s.role == "leaf" and s.group >= 0) // 2
    assert pairs == len(blocks) == ceil(len(groups) / max(1, down // (su * nw.units_per_node(p))))


def test_groups_that_do_not_split_the_nodes_are_refused():
    with pytest.raises(ValueError):
        nw.generate(_plan(127, 32, 64, [32, 32, 32]))


# --- the floor -------------------------------------------------------------------------------


def _build(data, arch="rail-optimized"):
    spec = build_spec(data, default_name="x")
    spec = replace(spec, arch=arch)
    compute = clos.generate(spec, arch)
    lay = layout.plan(compute)
    per_rack = 4
    plan = nb.plan_for(spec, catalog.load_catalog(spec.catalog_ref), len(compute.switches), per_rack, 16, None, sum(k != "compute" for k in lay.racks.kind))
    return plan, lay


def _superpod(gpus, su=32, **lay):
    d = read_spec_file(resolve_spec_path("dgx-h100-superpod"))
    d["gpus"] = gpus
    d["networks"]["scalable_unit"] = su
    if lay:
        d["layout"] = lay
    return d


def _node_runs(n, nl):
    c = n.cables
    known = ~np.isnan(nl.length_m)
    return {name: nl.length_m[(c.a_kind == nw.NODE) & (c.net == k) & known] for k, name in enumerate(nw.NETWORK_NAMES)}


@pytest.mark.parametrize("gpus,su", [(g, su) for g in (16384, 65536, 131072) for su in (16, 32, 64) if (g, su) != (131072, 16)])
def test_node_runs_fit_and_leaves_stand_with_their_su(gpus, su):
    """Every node run (storage, in-band, BMC) is 100 m at most; in a large hall every node leaf serves one SU (a pair: a whole number of small SUs) and stands in one of its racks."""
    plan, lay = _build(_superpod(gpus, su))
    n, nl = ln.wire_and_place(plan, lay)
    for name, runs in _node_runs(n, nl).items():
        assert len(runs) == plan.nodes * {"storage": 2, "inband": 2, "oob": 1}[name]
        assert runs.max() <= ln.ACCESS_REACH_M, name
    assert nw.closed_form(n.plan) == n.counts()
    if not n.plan.leaves_with_su:  # the management row reaches every node: leaves there, in-band packed in node order
        assert gpus == 16384 and not n.plan.node_groups
        return
    assert sum(n.plan.node_groups) == plan.nodes and max(n.plan.node_groups) <= su
    node_rack = nl.where[nw.NODE][0]
    racks = nl.where[nw.SWITCH][0]
    joined = 0
    for leaf, nodes in _served(n).items():
        sus = np.unique(nodes // su)
        if len(sus) > 1:  # an in-band pair of several whole SUs (small ones)
            assert n.switches[leaf].network == nw.INBAND
            assert nodes.tolist() == list(range(sus[0] * su, min(plan.nodes, (sus[-1] + 1) * su))), f"{n.switches[leaf].name} serves part of an SU and more"
            assert len(sus) * su * 1 <= nw.inband_down(n.plan)
            joined += 1
        if racks[leaf] < nl.first_management:
            assert racks[leaf] in set(node_rack[nodes].tolist())
    assert nl.leaves_with_su == n.plan.leaves_with_su
    assert bool(joined) == (su * 2 <= nw.inband_down(n.plan))  # 16-node SUs: 3 to a 58-port pair; 32 and 64: a pair holds no two


def test_131072_gpus_in_16_node_sus_need_a_fourth_storage_tier():
    """2,048 storage node leaves of 16 nodes (12 uplinks each) are past three tiers of 64-port switches, as before node groups."""
    plan, lay = _build(_superpod(131072, 16))
    with pytest.raises(InputError) as e:
        ln.wire_and_place(plan, lay)
    assert e.value.problems[0].path == "networks.storage.switch" and "fourth tier" in e.value.problems[0].message


def test_large_hall_is_wired_twice_not_until_it_settles(monkeypatch):
    """One wiring with the leaves in the management row, then one with every decision made up front from the plan and the layout."""
    plan, lay = _build(_superpod(65536))
    calls = []
    real = nw.generate
    monkeypatch.setattr(ln.nw, "generate", lambda p: calls.append(p) or real(p))
    n, nl = ln.wire_and_place(plan, lay)
    assert len(calls) == 2 and n.plan is calls[-1]
    assert n.plan.oob_home is not None and len(n.plan.oob_home.fabric) == plan.compute_switches


def _far_rows():
    """16,384 GPUs on rows of 180 compute racks (108 m): SU 22 runs from the end of row A to the start of the next compute row, 130 m away."""
    return _superpod(16384, racks_per_row=180)


def test_an_su_wrapping_between_far_rows_is_split_by_row():
    plan, lay = _build(_far_rows())
    n, nl = ln.wire_and_place(plan, lay)
    g = n.plan.node_groups
    assert len(g) == 65 and g[22:24] == (16, 16) and sum(g) == 2048
    node_rack = nl.where[nw.NODE][0]
    assert len(set(lay.racks.row[node_rack[704:736]].tolist())) == 2
    for name, runs in _node_runs(n, nl).items():
        assert runs.max() <= 20, name  # every node's leaf and OOB switch stands in its row, near it
    su22 = [s.name for s in n.switches if s.group >= 0 and "su22" in s.name]
    assert "stor-leaf-su22-p0-n704" in su22 and "stor-leaf-su22-p0-n720" in su22 and "oob-su22-1" in su22


def test_far_rows_build_through_the_cli(tmp_path):
    """The spec that stopped at the BOM (runs of 120 and 130 m) builds: exit 0 and a BOM."""
    spec = tmp_path / "far.yaml"
    spec.write_text(yaml.safe_dump(_far_rows(), sort_keys=False))
    out = subprocess.run([sys.executable, "-m", "topogen", "build", str(spec), "--formats", "bom", "--out", str(tmp_path / "o"), "-q"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    for arch in ("rail-optimized", "rail-only"):
        assert s["networks"]["architectures"][arch]["findings"] == []
        assert (tmp_path / "o" / arch / "bom.csv").exists()


def test_an_su_too_wide_for_its_leaves_names_su_and_row():
    """Racks 30 m wide: an SU's 8 racks in one row are 126 m from their middle; every such SU is named, with the field to change."""
    plan, lay = _build(_superpod(1016, rack_width_m=30, racks_per_row=16))
    with pytest.raises(InputError) as e:
        ln.wire_and_place(plan, lay)
    probs = e.value.problems
    assert [p.path for p in probs] == ["layout.racks_per_row"] * 4
    assert probs[0].message.startswith("scalable unit 0's 32 nodes in row A need runs of up to 126 m")
    assert "scalable unit 3's 31 nodes in row C" in probs[3].message
    assert "layout.racks_per_row" in probs[0].hint and "networks.scalable_unit" in probs[0].hint
