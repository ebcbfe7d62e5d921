"""``striping: minimal``: the fewest top-tier switches the ports need, parallel links uneven by at most one.

Over a grid of N, K, radix, tiers, oversubscription, provisioning, planes, dual homing,
link speeds and scalable units, both architectures:

* the closed form (:func:`topogen.spec.counts.arch_counts`) equals the wiring;
* every port within its radix and used once, the down/up split and ratio kept;
* every lower switch's parallel links to the upper switches of its group differ by at
  most one, and it reaches every one of them; every leaf reaches every top switch;
* the top tier never has more switches than balanced striping, nor fewer than its
  links need, and the tiers below are the balanced ones;
* the closed-form spread (links per pair, shares) equals the one measured on the wiring;
* the same spec gives the same wiring twice.

Then the validator (silent on the design, still naming a real error), the traffic
simulator on uneven parallel links, and the real CLI on gb200-nvl72.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from topogen.checks import validate
from topogen.cli import main
from topogen.fabric import clos
from topogen.fabric.model import Fabric, LinkTable
from topogen.spec import counts
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

ARCHES = ("rail-optimized", "rail-only")


def spec_for(n, k, r, **kw):
    return build_spec({"gpus": n, "hb_domain": k, "radix": r, "striping": "minimal", **kw})


def pair_counts(f: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower switch, upper switch, parallel links) of every switch-switch pair that has a cable."""
    L, n, S = f.links, f.gpus, len(f.switches)
    up = L.tier > 1
    key = (L.a_dev[up] - n).astype(np.int64) * S + (L.z_dev[up] - n)
    uk, c = np.unique(key, return_counts=True)
    return uk // S, uk % S, c


def measured_spread(f: Fabric) -> tuple[int, int]:
    """(fewest, most) parallel links of a lower-upper pair at the top tier, read off the wiring."""
    lo, hi, c = pair_counts(f)
    top = f.switch_tiers()[hi] == f.tiers
    return int(c[top].min()), int(c[top].max())


def leaves_reach_every_top(f: Fabric) -> bool:
    """Whether every leaf reaches every top-tier switch going up (in its plane, and its rail in rail-only)."""
    L, n = f.links, f.gpus
    tiers = f.switch_tiers()
    S = len(f.switches)
    reach = {i: {i} for i in np.flatnonzero(tiers == 1).tolist()}
    for t in range(2, f.tiers + 1):
        sel = L.tier == t
        nxt: dict[int, set[int]] = {}
        above: dict[int, set[int]] = {}
        for a, z in zip((L.a_dev[sel] - n).tolist(), (L.z_dev[sel] - n).tolist()):
            above.setdefault(a, set()).add(z)
        for leaf, cur in reach.items():
            nxt[leaf] = set().union(*(above.get(x, set()) for x in cur))
        reach = nxt
    top = np.flatnonzero(tiers == f.tiers)
    for leaf, got in reach.items():
        sw = f.switches[leaf]
        want = {int(i) for i in top if f.switches[i].plane == sw.plane and (f.arch == "rail-optimized" or f.switches[i].group == sw.group)}
        if got != want:
            return False
    assert S
    return True


def check_minimal(f: Fabric, spec) -> None:
    closed = counts.arch_counts(spec, f.arch)
    L, n = f.links, f.gpus
    # closed form == explicit wiring
    assert tuple(f.switches_per_tier()) == closed.switches_per_tier
    assert tuple(f.links_per_tier()) == closed.links_per_tier
    assert f.unused_switch_ports() == closed.unused_switch_ports
    assert f.tiers == closed.tiers
    # one cable per GPU NIC port
    g = L.tier == 1
    nics = spec.nic_ports
    assert np.array_equal(np.bincount(L.a_dev[g] * nics + L.a_port[g], minlength=n * nics), np.ones(n * nics, int))
    # adjacent tiers; ports used once, within radix, down ports below up ports
    tiers = np.concatenate([np.zeros(n, np.int8), f.switch_tiers()])
    assert np.array_equal(tiers[L.a_dev], L.tier - 1) and np.array_equal(tiers[L.z_dev], L.tier)
    radix = np.array([s.radix for s in f.switches])
    down = np.array([s.down_ports for s in f.switches])
    key = np.concatenate([L.z_dev * 8192 + L.z_port, L.a_dev[~g] * 8192 + L.a_port[~g]])
    assert len(np.unique(key)) == len(key)
    assert np.all(L.z_port >= 1) and np.all(L.z_port <= down[L.z_dev - n])
    assert np.all(L.a_port[~g] > down[L.a_dev[~g] - n]) and np.all(L.a_port[~g] <= radix[L.a_dev[~g] - n])
    factor = np.asarray([spec.shape.factor(j) for j in range(f.tiers + 2)])[f.switch_tiers()]
    S = len(f.switches)
    assert np.all(np.bincount(L.z_dev - n, minlength=S) + factor * np.bincount(L.a_dev[~g] - n, minlength=S) <= radix)
    # the spec's down:up ratio below the top, in Gb/s
    downs = np.bincount(L.z_dev - n, weights=L.a_speed, minlength=S)
    ups = np.bincount(L.a_dev[~g] - n, weights=L.a_speed[~g], minlength=S)
    non_top = f.switch_tiers() < f.tiers
    allowed = np.asarray([spec.ratio_at(max(1, j)) for j in range(f.tiers + 1)])[f.switch_tiers()]
    assert np.all(ups[non_top] * allowed[non_top] >= downs[non_top])
    if f.tiers == 1:
        return
    # parallel links per lower switch differ by at most one (exactly equal below the top)
    lo, hi, c = pair_counts(f)
    mn = np.full(S, 1 << 30)
    mx = np.zeros(S, np.int64)
    np.minimum.at(mn, lo, c)
    np.maximum.at(mx, lo, c)
    has = mx > 0
    assert np.all(mx[has] - mn[has] <= 1)
    below_top = has & (f.switch_tiers() < f.tiers - 1)
    assert np.array_equal(mn[below_top], mx[below_top])
    # a lower switch reaches every upper switch of its group (the group: a connected part of the top tier's pairs)
    top_pairs = f.switch_tiers()[hi] == f.tiers
    parent = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for a, z in zip(lo[top_pairs].tolist(), hi[top_pairs].tolist()):
        parent[root(("lo", a))] = root(("hi", z))
    uppers_of: dict[int, set[int]] = {}
    group_uppers: dict[object, set[int]] = {}
    for a, z in zip(lo[top_pairs].tolist(), hi[top_pairs].tolist()):
        uppers_of.setdefault(a, set()).add(z)
        group_uppers.setdefault(root(("hi", z)), set()).add(z)
    for a, zs in uppers_of.items():
        assert zs == group_uppers[root(("lo", a))]
    # the top switches of a group take their links as evenly: counts at most one apart
    took = np.bincount(hi[top_pairs], weights=c[top_pairs], minlength=S)
    for ups_of_group in group_uppers.values():
        got = took[sorted(ups_of_group)]
        assert got.max() - got.min() <= 1
    # against balanced striping: the same tiers below the top, never more switches on top, never fewer than the links need
    bal = counts.arch_counts(replace(spec, striping="balanced"), f.arch)
    assert bal.tiers == closed.tiers
    assert bal.switches_per_tier[:-1] == closed.switches_per_tier[:-1]
    assert closed.switches_per_tier[-1] <= bal.switches_per_tier[-1]
    per_clos = spec.planes * (spec.hb_domain if f.arch == "rail-only" else 1)
    top_down = f.switches[-1].down_ports
    assert closed.switches_per_tier[-1] >= per_clos * -(-closed.links_per_tier[-1] // per_clos // top_down)
    if spec.provision == "full":
        assert bal.links_per_tier == closed.links_per_tier
    # the closed-form spread is the wiring's
    sp = counts.top_spread(spec, f.arch)
    assert sp is not None and sp.links == measured_spread(f)
    assert 0 < sp.worst_share <= sp.mean_share <= 1
    top_lowers = np.unique(lo[top_pairs])
    assert (sp.worst_share == 1) == bool(np.all(mn[top_lowers] == mx[top_lowers]))


KS = (8, 72)
RADIXES = (16, 32, 64)
DOMAINS = (2, 3, 9, 17, 33, 100, 129)


def grid():
    for k in KS:
        for r in RADIXES:
            for d in DOMAINS:
                if d * k <= 16384:
                    yield pytest.param(d * k, k, r, id=f"N{d * k}-K{k}-r{r}")


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("n,k,r", list(grid()))
def test_minimal_matches_closed_form(arch, n, k, r):
    spec = spec_for(n, k, r, arch=arch)
    f = clos.generate(spec, arch)
    check_minimal(f, spec)
    if len(f.switches) <= 3000:
        assert leaves_reach_every_top(f)


VARIANTS = [
    {"provision": "minimal"},
    {"rail_packing": "dedicated", "provision": "minimal"},
    {"planes": 2},
    {"oversubscription": "3:1"},
    {"oversubscription": "7:1", "provision": "minimal"},
    {"oversubscription": ["1:1", "3:1"]},
    {"link_speed": [200, 400]},
    {"link_speed": [100, 400], "provision": "minimal"},
    {"homing": "dual"},
    {"homing": "dual", "oversubscription": "3:1", "provision": "minimal"},
    {"radix": [16, 24]},
    {"leaf_packing": "shared"},
]
SUBGRID = [(8, 16, d) for d in (3, 9, 17, 40, 129)] + [(8, 12, d) for d in (5, 12, 60)] + [(72, 64, d) for d in (2, 9)] + [(4, 8, d) for d in (9, 37)]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(f"{a}={b}" for a, b in v.items()))
@pytest.mark.parametrize("k,r,d", SUBGRID, ids=lambda x: str(x))
@pytest.mark.parametrize("arch", ARCHES)
def test_variants_match_closed_form(arch, k, r, d, variant):
    kw = dict(variant)
    radix = kw.pop("radix", r)
    try:
        spec = spec_for(d * k, k, radix, arch=arch, **kw)
    except InputError:
        pytest.skip("not a valid spec at this size")
    f = clos.generate(spec, arch)
    check_minimal(f, spec)
    assert leaves_reach_every_top(f)
    assert validate.validate(f).valid


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("su,max_su,nodes", [(4, 8, 13), (4, 6, 24), (8, 4, 20)])
def test_scalable_units_sized_top(arch, su, max_su, nodes):
    """A top tier sized for more SUs keeps the full design's groups; only the present leaves are cabled."""
    spec = spec_for(nodes * 8, 8, 16, arch=arch, scalable_unit=su, max_scalable_units=max_su)
    f = clos.generate(spec, arch)
    check_minimal(f, spec)
    grown = spec_for(su * max_su * 8, 8, 16, arch=arch, scalable_unit=su)
    assert counts.arch_counts(spec, arch).switches_per_tier[-1] == counts.arch_counts(grown, arch).switches_per_tier[-1]
    assert validate.validate(f).valid


def test_deterministic():
    spec = spec_for(9216, 72, 64, arch="rail-optimized")
    a, b = clos.generate(spec, "rail-optimized"), clos.generate(spec, "rail-optimized")
    for col in ("a_dev", "a_port", "z_dev", "z_port", "tier"):
        assert np.array_equal(getattr(a.links, col), getattr(b.links, col))
    assert [s.name for s in a.switches] == [s.name for s in b.switches] and a.notes == b.notes


def test_gb200_nvl72_core_tier():
    """The issue's figure: 144 cores where ports alone need 144 (balanced striping: 256)."""
    spec = spec_for(9216, 72, 64, arch="rail-optimized")
    c, bal = counts.arch_counts(spec, "rail-optimized"), counts.arch_counts(replace(spec, striping="balanced"), "rail-optimized")
    assert c.switches_per_tier == (288, 288, 144) and bal.switches_per_tier == (288, 288, 256)
    sp = counts.top_spread(spec, "rail-optimized")
    assert (sp.groups, sp.stripes, sp.links) == (16, (2,), (3, 4))
    assert sp.worst_share == pytest.approx(0.75)


def test_balanced_spec_is_unchanged():
    """The default writes no striping key: the spec hash, and so every output's provenance, is as before."""
    s = build_spec({"gpus": 9216, "hb_domain": 72, "radix": 64})
    assert s.striping == "balanced" and "striping" not in s.to_dict()
    assert build_spec({"gpus": 9216, "hb_domain": 72, "radix": 64, "striping": "balanced"}).digest() == s.digest()
    assert spec_for(9216, 72, 64).to_dict()["striping"] == "minimal"
    assert counts.top_spread(s, "rail-optimized") is None


def test_pair_shares_by_hand():
    """Two kinds of 4 uplinks on 3 upper switches: (2,1,1) and (1,2,1) or (1,1,2): the worst pair gets 1/2."""
    worst, total, pairs = counts.pair_shares((4, 4, 4), 3)
    assert worst == pytest.approx(0.5) and pairs == 6 and total == pytest.approx(6 * 0.5)
    assert counts.pair_shares((6, 6), 3) == (1.0, 2.0, 2)


@pytest.mark.parametrize("ups,s", [((4, 4, 4), 3), ((32,) * 18, 9), ((5, 7, 3, 9, 9, 2), 2), ((11,) * 7, 5)])
def test_spread_matrix_is_spread(ups, s):
    """The vectorised matrix the generator cables is the rule of :func:`counts.spread`; totals per upper switch at most one apart."""
    m = counts.spread_matrix(ups, s)
    for row, u, (b, r, off) in zip(m, ups, counts.spread(ups, s)):
        assert row.sum() == u and set(row.tolist()) <= {b, b + 1}
        assert sorted(((q - off) % s for q in range(s) if row[q] == b + 1)) == list(range(r))
    assert m.sum(axis=0).max() - m.sum(axis=0).min() <= 1


# --- validation ----------------------------------------------------------------------------


def _with_links(f: Fabric, links: LinkTable, spec=None) -> Fabric:
    return Fabric(spec or f.spec, f.arch, f.tiers, f.switches, links, [])


def _renamed(f: Fabric) -> Fabric:
    """The same wiring with its first switch renamed: the validator cannot use the design's table and infers stripes."""
    sw = list(f.switches)
    sw[0] = replace(sw[0], name=sw[0].name + "-x")
    return Fabric(f.spec, f.arch, f.tiers, sw, f.links, [])


def _move_one(f: Fabric) -> tuple[LinkTable, str]:
    """Swap the upper ends of two top-tier cables: a lower switch loses a link where it has the fewest and gains one where it has the most."""
    L, n = f.links, f.gpus
    lo, hi, c = pair_counts(f)
    top = f.switch_tiers()[hi] == f.tiers
    a = int(lo[top][0])
    mine = top & (lo == a)
    few, many = int(hi[mine][np.argmin(c[mine])]), int(hi[mine][np.argmax(c[mine])])
    i = int(np.flatnonzero((L.a_dev == a + n) & (L.z_dev == few + n))[0])
    j = int(np.flatnonzero((L.a_dev != a + n) & (L.z_dev == many + n))[0])
    cols = {c_: getattr(L, c_).copy() for c_ in ("a_dev", "a_port", "z_dev", "z_port", "tier", "plane", "a_speed", "z_speed")}
    for col in ("z_dev", "z_port"):
        cols[col][[i, j]] = cols[col][[j, i]]
    return LinkTable.from_columns(**cols), f.switches[a].name


@pytest.mark.parametrize("n,k,r", [(144, 8, 16), (72, 8, 8), (9216, 72, 64)])
def test_validator_accepts_the_design_and_names_a_real_error(n, k, r):
    spec = spec_for(n, k, r, arch="rail-optimized")
    f = clos.generate(spec, "rail-optimized")
    rep = validate.validate(f, expected=f)
    assert rep.valid and "striping minimal" in rep.checks["capacity"]
    inferred = validate.validate(_renamed(f), expected=f)  # stripes inferred from the wiring: uneven by one is the design
    assert not [x for x in inferred.findings if x.check == "capacity.striping"]
    # the same wiring under balanced striping is uneven
    bal = validate.validate(_renamed(_with_links(f, f.links, replace(spec, striping="balanced"))), expected=f)
    assert [x for x in bal.findings if x.check == "capacity.striping"]
    # one cable moved makes a difference of two: an error on both paths, naming the switch
    links, name = _move_one(f)
    for g in (_with_links(f, links), _renamed(_with_links(f, links))):
        hits = [x for x in validate.validate(g, expected=f).findings if x.check == "capacity.striping"]
        assert hits and any(name in x.devices for x in hits)


@pytest.mark.parametrize("n,k,r", [(144, 8, 16), (72, 8, 8), (296, 8, 24)])
def test_max_flow_bisection_is_full(n, k, r):
    """Every link is still there: max-flow across the half cut equals what one half injects."""
    f = clos.generate(spec_for(n, k, r, arch="rail-optimized"), "rail-optimized")
    rep = validate.validate(f, maxflow_links=10**6)
    b = rep.figures["bisection"]
    assert b["checked"] and b["full"] and b["worst_flow_gbps"] == b["demand_gbps"]


# --- traffic simulator -----------------------------------------------------------------------


@pytest.mark.parametrize("n,k,r", [(144, 8, 16), (72, 8, 8), (9216, 72, 64)])
def test_simulator_spray_on_uneven_parallel_links(n, k, r):
    """Spraying weighs each parallel link: every flow routed, no rate above line rate, none below the worst pair share.

    The closed form's worst pair share is a floor for spray (a leaf's traffic crosses
    every stripe, so it averages over pairs); on these fabrics some shift meets it or
    comes within the spread of one link, and balanced striping gives every shift full rate.
    """
    from topogen.traffic.patterns import parse
    from topogen.traffic.simulate import run

    spec = spec_for(n, k, r, arch="rail-optimized")
    f = clos.generate(spec, "rail-optimized")
    bal = clos.generate(replace(spec, striping="balanced"), "rail-optimized")
    worst = counts.top_spread(spec, "rail-optimized").worst_share
    d = n // k
    rates = []
    for s in sorted({1, 2, d // 4, d // 2, d - 1} - {0}):
        res = run(f, parse(f"shift:{s}"), "spray", None)
        assert res.unroutable == 0
        assert worst - 1e-9 <= res.min_rate_fraction <= 1 + 1e-9
        rates.append(res.min_rate_fraction)
        assert run(bal, parse(f"shift:{s}"), "spray", None).min_rate_fraction == pytest.approx(1.0)
    assert min(rates) < 1  # the unevenness costs something on some permutation
    for routing in ("ecmp", "dmodk"):
        assert run(f, parse("shift:1"), routing, None).unroutable == 0


# --- the real CLI --------------------------------------------------------------------------------


def test_build_gb200_nvl72_minimal(tmp_path):
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["build", "gb200-nvl72", "--striping", "minimal", "--arch", "rail-optimized", "--out", str(out), "--formats", "validation"])
    assert r.exit_code == 0, r.output
    assert "3 tiers, 720 switches (288 leaves + 288 spines + 144 cores)" in r.output
    assert "striping: minimal: 720 switches where balanced striping needs 832 (112 fewer cores), saving $3,360,000 of switches and 84.0 kW" in r.output
    assert "3 to 4 parallel links per spine-core pair" in r.output
    sec = json.loads((out / "summary.json").read_text())["architectures"]["rail-optimized"]
    st = sec["striping"]
    assert (st["switches"], st["balanced_switches"], st["switches_saved_per_tier"]) == (720, 832, [0, 0, 112])
    assert st["parallel_links_per_pair"] == [3, 4] and st["worst_pair_share"] == 0.75
    assert st["switch_cost_saved"] == 3360000 and sec["validation"]["errors"] == 0


def test_build_default_has_no_striping_section(tmp_path):
    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["build", "demo", "--out", str(out), "--formats", "validation"])
    assert r.exit_code == 0 and "striping" not in r.output
    assert all("striping" not in s for s in json.loads((out / "summary.json").read_text())["architectures"].values())


def test_bad_striping_exits_2_naming_the_field():
    r = CliRunner().invoke(main, ["build", "demo", "--striping", "uneven"])
    assert r.exit_code == 2
    assert "striping" in r.output and "valid values: balanced, minimal" in r.output and "Traceback" not in r.output


def test_validate_cabling_file_of_a_minimal_build(tmp_path):
    """The installer's cabling.csv of a minimal build validates against its spec (the design's uneven table)."""
    out = tmp_path / "o"
    spec = tmp_path / "s.yaml"
    spec.write_text("name: s\ngpus: 144\nhb_domain: 8\nradix: 16\nstriping: minimal\narch: rail-optimized\n")
    r = CliRunner().invoke(main, ["build", str(spec), "--out", str(out), "--formats", "cabling"])
    assert r.exit_code == 0, r.output
    res = CliRunner().invoke(main, ["validate", str(out / "rail-optimized" / "cabling.csv"), "--spec", str(spec), "--arch", "rail-optimized"])
    assert res.exit_code == 0, res.output
    assert "striping minimal" in res.output


# --- topogen search ------------------------------------------------------------------------------


def test_search_space_has_a_striping_axis(tmp_path):
    """A search over striping screens and builds both; minimal is cheaper on gb200-nvl72's shape and is chosen by capex."""
    import yaml

    data = {
        "name": "st",
        "search": {
            "gpus": 9216,
            "space": {"arch": ["rail-optimized"], "hb_domain": [72], "catalog": ["ndr-400g"], "radix": [64], "link_speed": [400], "striping": ["balanced", "minimal"]},
            "objectives": ["capex", "power"],
        },
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    res = CliRunner().invoke(main, ["search", str(path), "--out", str(tmp_path / "o"), "--jobs", "1", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    by = {r.get("striping", "balanced"): r for r in out["rows"]}
    assert set(by) == {"balanced", "minimal"}
    assert (by["balanced"]["switches"], by["minimal"]["switches"]) == (832, 720)
    assert by["minimal"]["cost_usd"] < by["balanced"]["cost_usd"]
    assert out["chosen"]["design"] == by["minimal"]["design"]
    chosen = yaml.safe_load((tmp_path / "o" / "chosen.yaml").read_text())
    assert chosen["striping"] == "minimal"
    table = CliRunner().invoke(main, ["search", str(path), "--out", str(tmp_path / "o2"), "--jobs", "1"])
    assert table.exit_code == 0 and "minimal striping" in table.output
    data["search"]["space"]["striping"] = ["lopsided"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    bad = CliRunner().invoke(main, ["search", str(path), "--out", str(tmp_path / "o3")])
    assert bad.exit_code == 2 and "search.space.striping: unknown striping 'lopsided'; valid values: balanced, minimal" in bad.output


def test_workbook_summary_states_the_saving(tmp_path):
    """The procurement workbook's Summary sheet carries the spread note and the saving line, read back through openpyxl."""
    import openpyxl

    out = tmp_path / "o"
    r = CliRunner().invoke(main, ["build", "demo", "--gpus", "144", "--striping", "minimal", "--arch", "rail-optimized", "--out", str(out), "--formats", "xlsx"])
    assert r.exit_code == 0, r.output
    line = next(x.strip() for x in r.output.splitlines() if x.strip().startswith("striping: minimal:") and "balanced striping needs" in x)
    wb = openpyxl.load_workbook(next(out.glob("*.xlsx")), read_only=True)
    cells = [v for row in wb["Summary"].iter_rows(values_only=True) for v in row if isinstance(v, str)]
    assert f"rail-optimized: {line}" in cells
    assert any(c.startswith("rail-optimized: striping: minimal:") and "parallel links per" in c for c in cells)
