"""The search's ``design`` axis: a small cluster weighs the leaf pair against the Clos, screened by the closed form.

The screened counts of a leaf pair are the generated wiring's (switches, links,
ISLs), its worst path is two switches (leaf-a > ISL > leaf-b; one in rail-only,
where nothing crosses), its blast radius is half the GPUs (a leaf), and its ISLs
are priced: more ISLs (a lower GPU:ISL ratio) cost more optics.
"""

from __future__ import annotations

from itertools import product

import pytest

from topogen.fabric import clos
from topogen.search import run, screen, space
from topogen.spec import leafpair


def search(n, k, radix, ratios=("1:1",), planes=(1,), design=("clos", "leaf-pair"), gpn=None, speed=400):
    base = {"gpus_per_node": gpn} if gpn else {}
    return space.parse({**base, "search": {"gpus": n, "space": {"arch": ["rail-optimized", "rail-only"], "hb_domain": [k], "catalog": ["xdr-800g"], "radix": [radix], "link_speed": [speed], "oversubscription": list(ratios), "planes": list(planes), "design": list(design)}, "objectives": ["capex", "power"]}}, {})


def screened(s):
    cats = run.load_catalogs(s)
    overrides, _ = space.points(s, cats)
    sc = screen.Screener(s, cats)
    return [(o, sc.screen(i, o)) for i, o in enumerate(overrides)]


# xdr-800g's switch runs 128 ports at 400G or 256 at 200G
GRID = [(n, k, gpn, sp, r, o, p) for (n, k, gpn, sp, r), o, p in product([(32, 8, 8, 400, 128), (64, 8, 4, 400, 128), (48, 4, 2, 400, 128), (128, 8, 8, 200, 256)], ("1:1", "2:1", "3:1"), (1, 2))]


@pytest.mark.parametrize("n,k,gpn,speed,r,ratio,planes", GRID)
def test_screened_leaf_pair_is_the_wiring(n, k, gpn, speed, r, ratio, planes):
    rows = screened(search(n, k, r, (ratio,), (planes,), gpn=gpn, speed=speed))
    pairs = [(o, row) for o, row in rows if o.get("design") == "leaf-pair"]
    assert {o["arch"] for o, _ in pairs} == {"rail-optimized", "rail-only"}
    assert len(rows) == 4  # both designs, both architectures
    for o, row in pairs:
        assert "skipped" not in row, row
        f = clos.generate(row["_spec"], o["arch"])
        assert row["fabric_design"] == "leaf-pair"
        assert (row["tiers"], row["switches_per_tier"], row["links_per_tier"]) == (1, f.switches_per_tier(), f.links_per_tier())
        assert row["links"] == f.cables == n * planes + len(f.isls)
        assert row["switch_hops"] == (2 if len(f.isls) else 1)
        assert row["blast_radius_gpus"] == n // 2
    for o, row in rows:
        if o.get("design") == "clos" and "skipped" not in row:
            assert "fabric_design" not in row


def test_isls_are_priced():
    rows = screened(search(128, 8, 128, ("1:1", "3:1"), design=("leaf-pair",)))
    by = {(o["arch"], o["oversubscription"]): row for o, row in rows}
    ro = [by[("rail-only", r)] for r in ("1:1", "3:1")]
    assert ro[0]["cost_usd"] == ro[1]["cost_usd"] and ro[0]["cables_optics"] == ro[1]["cables_optics"]  # no ISL either way
    full, thin = by[("rail-optimized", "1:1")], by[("rail-optimized", "3:1")]
    isl = [leafpair.plan(128, 128, r, False).isls for r in ("1:1", "3:1")]
    assert isl == [64, 22]
    assert full["cables_optics"] > thin["cables_optics"] > ro[0]["cables_optics"] and full["cost_usd"] > thin["cost_usd"] > ro[0]["cost_usd"]


def test_a_pair_past_its_ports_is_skipped_naming_design():
    """256 GPUs on 128-port leaves: rail-only fills both leaves (no ISL); rail-optimized would need 128 more ports."""
    rows = {o["arch"]: row for o, row in screened(search(256, 8, 128, design=("leaf-pair",)))}
    assert rows["rail-optimized"]["skipped"].startswith("design: a leaf pair (rail-optimized) holds at most 128 GPUs")
    assert "skipped" not in rows["rail-only"] and rows["rail-only"]["switches"] == 2


def test_design_values_are_checked():
    with pytest.raises(Exception) as e:
        search(32, 8, 64, design=("clos", "leafpair"))
    assert "search.space.design: unknown design 'leafpair'" in str(e.value.problems[0].render()) and "clos, leaf-pair" in e.value.problems[0].render()


@pytest.mark.parametrize("ratio", ["1:1", "3:1"])
def test_explicit_builds_agree_with_the_screening(ratio):
    """What the search builds near the front: the pair's counts, hops, blast radius, parts and iteration are the screened ones."""
    from topogen.search.explicit import build_design

    s = space.parse({"workload": {"model": "gpt-3-175b", "gpu": "b200"}, "search": {"gpus": 128, "space": {"arch": ["rail-optimized", "rail-only"], "hb_domain": [8], "catalog": ["xdr-800g"], "radix": [128], "link_speed": [400], "oversubscription": [ratio], "design": ["leaf-pair"]}}}, {})
    sc = screen.Screener(s, run.load_catalogs(s))
    for o, row in screened(s):
        sc.materialize(row)
        got = build_design(row["spec"])
        assert got["valid"] and got["closed_form_agrees"]
        for key in ("tiers", "switches_per_tier", "links_per_tier", "links", "switch_hops", "blast_radius_gpus", "cables_optics", "iteration_s"):
            assert got[key] == row[key], (o["arch"], key)
        assert got["cost_usd"] == pytest.approx(row["cost_usd"], rel=0.02)  # media by routed length in the build
