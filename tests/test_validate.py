"""The validator on generated wirings: zero errors over the core grid, exact figures, outputs.

Mutations (one per fault class) are in test_validate_mutations.py; reading
files back in test_wiring_io.py.
"""

from __future__ import annotations

import json
import random

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner

from topogen import pipeline
from topogen.checks import validate
from topogen.checks.graphs import Csr, edge_keys, leaf_distance_csr
from topogen.cli import main
from topogen.fabric import clos
from topogen.fabric.model import Fabric
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError


def domains(k: int, radix: int, max_gpus: int = 20000) -> list[int]:
    """HB-domain counts around the switch and tier boundaries of a radix, kept small enough to be quick."""
    h = radix // 2
    cand = {1, 2, 3, h - 1, h + 1, 2 * h + 1, radix + 1, h * h // 2 + 1, h * h + 1}
    return sorted(d for d in cand if d >= 1 and d * k <= max_gpus)


def supported(k: int, r: int, d: int) -> bool:
    try:
        build_spec({"gpus": k * d, "hb_domain": k, "radix": r})
    except InputError:  # more than 6 tiers
        return False
    return True


CORE = [(k, r, d) for k in (8, 72, 256) for r in (32, 64, 128, 144, 256) for d in domains(k, r)]
# small radices reach 4 to 6 tiers at small N; partial fills everywhere
DEEP = [(k, r, d) for k in (1, 2, 3, 8) for r in (4, 6, 8, 12) for d in (5, 17, 45, 137, 250) if supported(k, r, d)]
VARIANTS = [{"provision": "minimal"}, {"rail_packing": "dedicated"}, {"planes": 2}]


def check_valid(spec, arch):
    f = clos.generate(spec, arch)
    r = validate.validate(f)
    assert r.errors == 0 and r.warnings == 0, validate.render(r)
    fig = r.figures
    assert fig["tiers"] == fig["min_tiers"] == f.tiers
    hops = fig["worst_case_hops"]
    assert hops["switch_hops"] == 2 * f.tiers - 1
    assert hops["hb_hops"] == (1 if arch == "rail-only" and spec.hb_domain > 1 else 0)
    assert all(v is not None and v <= 1 for v in fig["oversubscription_per_tier"].values())
    assert len(fig["oversubscription_per_tier"]) == f.tiers - 1
    if fig["bisection"]["checked"]:
        assert fig["bisection"]["full"] and fig["bisection"]["worst_flow_gbps"] >= fig["bisection"]["demand_gbps"]
    # a failed leaf cuts off exactly the GPUs it serves, unless they have another plane: then
    # none is cut off and each of them loses its share of bandwidth in that plane
    leaf = fig["failure_impact"]["switch"]["leaf"]
    sw = next(i for i, s in enumerate(f.switches) if s.name == leaf["device"])
    served = int(((f.links.z_dev == f.gpus + sw) & (f.links.tier == 1)).sum())
    if spec.planes == 1:
        assert (leaf["gpus_cut_off"], leaf["gpus_degraded"]) == (served, 0)
    else:
        assert (leaf["gpus_cut_off"], leaf["gpus_degraded"]) == (0, served)
        assert leaf["degraded_bandwidth_lost"] == pytest.approx(1 / spec.planes)
        assert leaf["gpu_bandwidth_lost_gbps"] == served * spec.link_speed
    return r


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("k,radix,d", CORE, ids=[f"K{k}-r{r}-D{d}" for k, r, d in CORE])
def test_core_grid_validates(k, radix, d, arch):
    check_valid(build_spec({"gpus": k * d, "hb_domain": k, "radix": radix}), arch)


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("k,radix,d", DEEP, ids=[f"K{k}-r{r}-D{d}" for k, r, d in DEEP])
def test_deep_fabrics_validate(k, radix, d, arch):
    check_valid(build_spec({"gpus": k * d, "hb_domain": k, "radix": radix}), arch)


@pytest.mark.parametrize("extra", VARIANTS, ids=["minimal", "dedicated", "two-planes"])
@pytest.mark.parametrize("k,radix,d", [(8, 32, 17), (8, 32, 257), (72, 64, 3), (8, 8, 45), (2, 6, 137)])
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_spec_variants_validate(k, radix, d, extra, arch):
    r = check_valid(build_spec({"gpus": k * d, "hb_domain": k, "radix": radix, **extra}), arch)
    if extra.get("rail_packing") == "dedicated":
        assert r.figures["shared_switches"] == 0


def test_shared_switches_are_reported_as_logical_isolation():
    spec = build_spec({"gpus": 64, "hb_domain": 8, "radix": 16})  # the demo: 2 rails per rail-only switch
    r = validate.validate(clos.generate(spec, "rail-only"))
    shared = r.by_check("rails.shared-switch")
    assert [x.devices for x in shared] == [("rail0-1-leaf",), ("rail2-3-leaf",), ("rail4-5-leaf",), ("rail6-7-leaf",)]
    assert all(x.severity == "info" for x in shared)
    assert "rail 0 on 8 port(s) (p1-p8); rail 1 on 8 port(s) (p9-p16)" in shared[0].message
    assert r.valid and r.figures["shared_switches"] == 4


# --- building blocks against networkx ----------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_components_match_networkx(seed):
    rng = random.Random(seed)
    n = rng.randint(5, 400)
    m = rng.randint(0, n)
    a = np.array([rng.randrange(n) for _ in range(m)], np.int64)
    b = np.array([rng.randrange(n) for _ in range(m)], np.int64)
    label = validate.components(n, a, b)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(a.tolist(), b.tolist()))
    for comp in nx.connected_components(g):
        assert len({int(label[x]) for x in comp}) == 1
    assert len(set(label.tolist())) == nx.number_connected_components(g)


def _nx_leaf_distance(V, leaves, ea, eb):
    g = nx.Graph()
    g.add_nodes_from(range(V))
    g.add_edges_from(zip(ea.tolist(), eb.tolist()))
    best = 0
    for x in leaves:
        dist = nx.single_source_shortest_path_length(g, int(x))
        best = max([best] + [dist[int(y)] for y in leaves if int(y) in dist])
    return best


@pytest.mark.parametrize("seed,nodes", [(s, (4, 120)) for s in range(8)] + [(s, (300, 1500)) for s in range(6)])
def test_leaf_distance_matches_networkx_on_random_graphs(seed, nodes):
    """Bounded searches (leaves, twin classes, centres) give exact distances on any graph.

    On the large sparse graphs the first batch's bounds rarely meet, so later
    batches (searches from the unsettled leaves) must settle them.
    """
    rng = random.Random(seed)
    V = rng.randint(*nodes)
    m = rng.randint(V // 2, 3 * V) if V < 300 else rng.randint(V, 2 * V)
    ea = np.array([rng.randrange(V) for _ in range(m)], np.int64)
    eb = np.array([rng.randrange(V) for _ in range(m)], np.int64)
    leaves = np.array(sorted(rng.sample(range(V), rng.randint(2, V) if V < 300 else V // 2)), np.int64)
    want = _nx_leaf_distance(V, leaves, ea, eb)
    assert validate.leaf_distance(V, leaves, ea, eb) == want
    # a caller's height hint (the switch tier) only orders the first centres: any hint, same answer
    height = np.array([rng.randint(0, 4) for _ in range(V)], np.int64)
    assert validate.leaf_distance(V, leaves, ea.astype(np.int32), eb.astype(np.int32), height=height) == want


def _from_lists(V, ea, eb, rng, parallel=0):
    """A :class:`Csr` built from adjacency lists in a random order within each list, with some parallel edges."""
    dup = [rng.randrange(len(ea)) for _ in range(parallel)] if len(ea) else []
    a = np.r_[ea, eb, ea[dup], eb[dup]].astype(np.int64)
    b = np.r_[eb, ea, eb[dup], ea[dup]].astype(np.int64)
    perm = np.array(rng.sample(range(len(a)), len(a)), np.int64)
    a, b = a[perm], b[perm]
    order = np.argsort(a, kind="stable")
    off = np.zeros(V + 1, np.int64)
    np.cumsum(np.bincount(a, minlength=V), out=off[1:])
    return Csr.from_lists(off, b[order].astype(np.int32))


@pytest.mark.parametrize("seed", range(10))
def test_leaf_distance_on_unordered_lists(seed):
    """Adjacency lists in any order, with parallel edges (the core graph's lists, as validation shares them): same answer."""
    rng = random.Random(100 + seed)
    V = rng.randint(4, 300)
    m = rng.randint(V // 2, 2 * V)
    ea = np.array([rng.randrange(V) for _ in range(m)], np.int64)
    eb = np.array([rng.randrange(V) for _ in range(m)], np.int64)
    loops = ea != eb
    ea, eb = ea[loops], eb[loops]
    leaves = np.array(sorted(rng.sample(range(V), rng.randint(2, V))), np.int64)
    want = _nx_leaf_distance(V, leaves, ea, eb)
    assert leaf_distance_csr(_from_lists(V, ea, eb, rng, parallel=rng.randint(0, 5)), leaves) == want
    # twins from unordered lists: the classes of the sorted, simple graph's when there are no parallel edges
    simple = np.unique(np.stack([np.minimum(ea, eb), np.maximum(ea, eb)], axis=1), axis=0)
    ea, eb = simple[:, 0], simple[:, 1]
    assert np.array_equal(_from_lists(V, ea, eb, rng).twins(), Csr(V, edge_keys(V, ea, eb)).twins())


def _switch_graphs(gpus: int, k: int, radix: int):
    """Per architecture: the fabric, its leaves and its switch-switch cables (switch ids from 0)."""
    spec = build_spec({"gpus": gpus, "hb_domain": k, "radix": radix})
    for arch in spec.arches:
        f = clos.generate(spec, arch)
        L = f.links
        ss = L.a_dev >= f.gpus
        yield f, np.unique(L.z_dev[~ss]) - f.gpus, L.a_dev[ss] - f.gpus, L.z_dev[ss] - f.gpus


@pytest.mark.parametrize("gpus,k,radix", [(504, 8, 16), (640, 8, 8), (96, 2, 6)])
def test_leaf_distance_matches_networkx_on_fabrics(gpus, k, radix):
    for f, leaves, ea, eb in _switch_graphs(gpus, k, radix):
        got = validate.leaf_distance(len(f.switches), leaves, ea, eb)
        assert got == _nx_leaf_distance(len(f.switches), leaves, ea, eb) == 2 * (f.tiers - 1)
        tier = np.array([s.tier for s in f.switches], np.int64)
        assert validate.leaf_distance(len(f.switches), leaves, ea, eb, height=tier) == got
        assert validate.leaf_distance(len(f.switches), leaves, ea, eb, height=-tier) == got  # the worst hint: leaves first


@pytest.mark.parametrize("seed", range(24))
def test_leaf_distance_matches_networkx_on_edited_fabrics(seed):
    """Hand-edited wiring: the bounds still give networkx's all-pairs answer.

    Cables dropped, random cables added, a leaf left with one uplink (its path
    then climbs through another pod, so the distances are no longer those of
    the tier structure).
    """
    rng = random.Random(seed)
    shape = rng.choice([(504, 8, 16), (640, 8, 8), (96, 2, 6), (256, 8, 8), (1024, 8, 16), (128, 4, 8)])
    for f, leaves, ea, eb in _switch_graphs(*shape):
        V = len(f.switches)
        keep = np.ones(len(ea), bool)
        keep[[rng.randrange(len(keep)) for _ in range(rng.randint(0, 6))]] = False
        ea, eb = ea[keep], eb[keep]
        extra = rng.randint(0, 3)
        ea = np.r_[ea, [rng.randrange(V) for _ in range(extra)]].astype(np.int64)
        eb = np.r_[eb, [rng.randrange(V) for _ in range(extra)]].astype(np.int64)
        lone = np.flatnonzero(ea == rng.choice(leaves.tolist()))
        if seed % 2 and len(lone) > 1:  # one uplink left on that leaf
            ea, eb = np.delete(ea, lone[1:]), np.delete(eb, lone[1:])
        assert validate.leaf_distance(V, leaves, ea, eb) == _nx_leaf_distance(V, leaves, ea, eb)


# --- figures -----------------------------------------------------------------------------------


def test_failure_impact_rail_only_no_worse():
    """The rail-only paper's claim at 4,096 GPUs: one leaf or one spine down costs the same GPUs."""
    spec = build_spec({"gpus": 4096, "hb_domain": 8, "radix": 64})
    fi = {a: validate.validate(clos.generate(spec, a)).figures["failure_impact"] for a in spec.arches}
    ro, rn = fi["rail-optimized"], fi["rail-only"]
    assert ro["switch"]["leaf"]["gpus_cut_off"] == rn["switch"]["leaf"]["gpus_cut_off"] == 32
    assert ro["switch"]["spine"]["gpus_cut_off"] == rn["switch"]["spine"]["gpus_cut_off"] == 0
    assert ro["switch"]["leaf"]["capacity_lost"]["gpu-leaf"] == rn["switch"]["leaf"]["capacity_lost"]["gpu-leaf"] == pytest.approx(32 / 4096, abs=1e-6)
    assert ro["link"]["gpu-leaf"]["gpus_cut_off"] == rn["link"]["gpu-leaf"]["gpus_cut_off"] == 1
    assert ro["link"]["leaf-spine"]["gpus_cut_off"] == rn["link"]["leaf-spine"]["gpus_cut_off"] == 0


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_failed_sole_uplink_cuts_off_its_leaf(arch):
    """The cable chosen for a tier is the weakest one: a leaf left with one uplink loses its GPUs with it."""
    spec = build_spec({"gpus": 512, "hb_domain": 8, "radix": 16})
    f = clos.generate(spec, arch)
    leaf = int(f.links.z_dev[0])
    ups = np.flatnonzero((f.links.a_dev == leaf) & (f.links.tier == 2))
    keep = np.ones(len(f.links), bool)
    keep[ups[1:]] = False
    r = validate.validate(Fabric(f.spec, f.arch, f.tiers, f.switches, f.links.take(keep), []))
    link = r.figures["failure_impact"]["link"]["leaf-spine"]
    assert link["cable"] == int(ups[0]) + 1
    assert link["gpus_cut_off"] == 8  # the leaf's GPUs


def test_bisection_names_the_cut_and_skips_large_fabrics():
    spec = build_spec({"gpus": 512, "hb_domain": 8, "radix": 16})
    f = clos.generate(spec, "rail-optimized")
    bis = validate.validate(f).figures["bisection"]
    assert bis == {"checked": True, "cut": "HB domains 0-31 | 32-63 (1 plane(s))", "cuts": 1, "full": True, "worst_flow_gbps": 102400, "demand_gbps": 102400, "worst_cut": "plane 0"}
    skipped = validate.validate(f, maxflow_links=100).figures["bisection"]
    assert skipped["checked"] is False and "1536 cables > 100" in skipped["reason"]
    r = validate.validate(clos.generate(spec, "rail-only"))
    assert r.figures["bisection"]["cuts"] == 8 and "within each rail" in r.figures["bisection"]["cut"]


def test_findings_beyond_the_cap_are_counted():
    spec = build_spec({"gpus": 512, "hb_domain": 8, "radix": 16})
    f = clos.generate(spec, "rail-only")
    keep = f.links.tier != 1
    r = validate.validate(Fabric(f.spec, f.arch, f.tiers, f.switches, f.links.take(keep), []))
    listed = r.by_check("hygiene.gpu-no-link")
    assert len(listed) == validate.MAX_PER_CHECK
    assert r.suppressed["hygiene.gpu-no-link"] == ("error", 512 - validate.MAX_PER_CHECK)
    assert r.errors >= 512
    d = r.to_dict()
    assert d["not_listed"]["hygiene.gpu-no-link"] == {"severity": "error", "count": 412}


def test_report_json_shape_and_render():
    spec = build_spec({"name": "demo", "gpus": 64, "hb_domain": 8, "radix": 16})
    r = validate.validate(clos.generate(spec, "rail-optimized"))
    d = r.to_dict()
    assert d["valid"] is True and d["errors"] == 0 and d["arch"] == "rail-optimized"
    assert [c["group"] for c in d["checks"]] == ["hygiene", "tiers", "rails", "reach", "capacity", "failure"]
    assert all(c["status"] == "pass" for c in d["checks"])
    assert {f["check"] for f in d["findings"]} <= set(validate.CHECK_IDS)
    text = validate.render(r)
    assert text.splitlines()[0].startswith("demo / rail-optimized: VALID (0 error(s), 0 warning(s))")
    assert "worst case 3 switch(es) and 0 HB hop(s) (GPU > leaf > spine > leaf > GPU)" in text
    assert "max-flow confirms full bisection across HB domains 0-3 | 4-7" in text


# --- pipeline and CLI ---------------------------------------------------------------------------


def test_build_writes_validation_and_summary_figures(tmp_path):
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "demo", "--out", str(out), "--formats", "cabling"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    s = json.loads((out / "summary.json").read_text())
    for arch in ("rail-optimized", "rail-only"):
        v = s["architectures"][arch]["validation"]
        assert v["valid"] is True and v["errors"] == 0 and v["warnings"] == 0
        assert set(v) >= {"valid", "errors", "warnings", "worst_case_hops", "oversubscription_per_tier"}
        doc = json.loads((out / arch / "validation.json").read_text())
        assert doc["valid"] is True and doc["figures"]["worst_case_hops"] == v["worst_case_hops"]
    assert s["architectures"]["rail-optimized"]["validation"]["oversubscription_per_tier"] == {"leaf": 1.0}
    assert "validation: valid (0 error(s), 0 warning(s)); worst case 3 switch hop(s) + 0 HB hop(s)" in res.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert "rail-only/validation.json" in [e["path"] for e in manifest["files"]]


def test_validation_json_is_deterministic(tmp_path):
    texts = []
    for i in range(2):
        out = tmp_path / f"o{i}"
        CliRunner().invoke(main, ["build", "demo", "--out", str(out), "--formats", "cabling"], catch_exceptions=False)
        texts.append((out / "rail-only" / "validation.json").read_bytes())
    assert texts[0] == texts[1]


def test_build_with_errors_exits_1_and_writes_no_misleading_exports(tmp_path, monkeypatch):
    real = clos.generate

    def broken(spec, arch):
        f = real(spec, arch)
        keep = np.ones(len(f.links), bool)
        keep[0] = False  # hb00-gpu0 loses its cable
        return Fabric(f.spec, f.arch, f.tiers, f.switches, f.links.take(keep), f.notes)

    monkeypatch.setattr(clos, "generate", broken)
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "demo", "--out", str(out)])
    assert res.exit_code == 1
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["manifest.json", "rail-only/validation.json", "rail-optimized/validation.json", "summary.json"]
    doc = json.loads((out / "rail-only" / "validation.json").read_text())
    assert doc["valid"] is False
    assert any(f["check"] == "hygiene.gpu-no-link" and f["ports"] == ["hb00-gpu0:nic0"] for f in doc["findings"])
    assert "hb00-gpu0 has no cable on nic0" in res.output
    assert "failed validation" in res.output


def test_pipeline_context_holds_reports():
    ctx = pipeline.build(build_spec({"name": "x", "gpus": 64, "hb_domain": 8, "radix": 16}))
    assert set(ctx.reports) == {"rail-optimized", "rail-only"} and ctx.valid
    assert pipeline.export_formats(ctx, ["cabling"]) == ["cabling", "validation"]


def test_validate_command_on_a_spec(tmp_path):
    res = CliRunner().invoke(main, ["validate", "demo", "--out", str(tmp_path / "v")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "demo / rail-optimized: VALID" in res.output and "demo / rail-only: VALID" in res.output
    assert json.loads((tmp_path / "v" / "rail-only" / "validation.json").read_text())["valid"] is True


def test_validate_command_bad_spec_exits_2():
    res = CliRunner().invoke(main, ["validate", "--gpus", "100", "--hb-domain", "8", "--radix", "16"])
    assert res.exit_code == 2 and "not a whole number of HB domains" in res.output


def _edited(f: Fabric, rng) -> Fabric:
    """``f`` with a few cables re-ended, re-ported, dropped or duplicated (as a hand edit might)."""
    from topogen.fabric.model import LINK_COLUMNS, LinkTable

    cols = {c: getattr(f.links, c).copy() for c in LINK_COLUMNS}
    nd = f.gpus + len(f.switches)
    for _ in range(int(rng.integers(1, 6))):
        L = len(cols["a_dev"])
        i = int(rng.integers(L))
        what = int(rng.integers(5))
        if what == 0:
            cols["a_dev" if rng.random() < 0.5 else "z_dev"][i] = rng.integers(nd)
        elif what == 1:
            cols["plane"][i] = 1 - cols["plane"][i]
            cols["a_port"][i] = cols["a_port"][i] if cols["a_dev"][i] >= f.gpus else rng.integers(f.spec.planes)
        elif what == 2:
            keep = np.ones(L, bool)
            keep[rng.integers(L, size=int(rng.integers(1, 30)))] = False
            cols = {c: v[keep] for c, v in cols.items()}
        else:
            j = rng.integers(L, size=2)
            cols = {c: np.concatenate([v, v[j]]) for c, v in cols.items()}
    return Fabric(f.spec, f.arch, f.tiers, f.switches, LinkTable.from_columns(**cols), list(f.notes))


@pytest.mark.parametrize("seed", range(3))
def test_core_graph_answers_match_the_whole_plane_graph(seed):
    """Parts and cut-off GPUs from the core graph (switches, GPUs attached by their one cable) equal the
    reference on the whole plane-expanded graph, on generated and hand-edited wirings, after random failures."""
    from topogen.checks import hygiene
    from topogen.checks.findings import Report
    from topogen.checks.planes import PlaneGraph
    from topogen.checks.tiers import _gpu_behind
    from topogen.checks.wire import Wire

    rng = np.random.default_rng(seed)
    specs = [
        {"gpus": 504, "hb_domain": 8, "radix": 16},
        {"gpus": 300, "hb_domain": 4, "radix": 16, "planes": 2},
        {"gpus": 64, "hb_domain": 8, "radix": 8},
        {"gpus": 128, "hb_domain": 8, "radix": 16, "homing": "dual"},
    ]
    compared = 0
    for sd in specs:
        spec = build_spec({"name": "core", **sd})
        for arch in ("rail-optimized", "rail-only"):
            f0 = clos.generate(spec, arch)
            for k in range(6):
                f = f0 if k == 0 else _edited(f0, rng)
                w = Wire(f, None, Report(f.arch, f.spec))
                hygiene.check(w)
                w.orient()
                g = PlaneGraph(w)
                assert np.array_equal(g.label, validate.components(g.size, g.u, g.v))
                assert np.array_equal(g.base_cut(), g.cut_off(g.label, g._linked(g.u, g.v)))
                assert np.array_equal(_gpu_behind(w, g), _gpu_behind(w, None))
                for _ in range(6):
                    if rng.random() < 0.5:
                        d = w.n + int(rng.integers(w.S))
                        rm = np.flatnonzero((w.lo == d) | (w.hi == d))
                    else:
                        rm = np.unique(rng.integers(len(w.lo), size=int(rng.integers(1, 40))))
                    for p in range(w.planes):
                        got = g.cut_after(rm, p)
                        if got is None:  # equally large parts: the caller asks the reference
                            continue
                        remove = np.zeros(len(w.lo), bool)
                        remove[rm] = True
                        sl = g.nodes(p)
                        want = np.flatnonzero(g.cut_off(*g.without(remove), p)[sl] & (g.gdeg[sl] > 0)) + sl.start
                        assert np.array_equal(got, want)
                        compared += 1
    assert compared > 150
