"""`topogen simulate --routing opensm`: OpenSM's own forwarding tables (ibsim + opensm), followed hop by hop.

Independent truths, over grids of N, K and radix:

* ftree's shift on a full (non-blocking) fat tree is contention-free: every
  flow of every ``shift:S`` at line rate, busiest link offered exactly its
  capacity (2-tier at radix 16 and 32, 3-tier at radix 8, planes, rail-only
  rails as subnets of their own, dual homing);
* on one-subnet fat trees, OpenSM's ftree and topogen's ``dmodk`` route every
  flow of a random permutation on the very same links (topogen's dmodk is
  ftree's destination-mod-k) on 2 tiers and a full 3-tier; on 4 tiers and
  partly built top tiers they pick other top-tier links with the same loads
  and rates; on several subnets (planes, rail-only
  rails, where dmodk numbers hosts over the whole fabric) both are
  contention-free on shifts;
* a failed spine is routed around by OpenSM itself: no pair is cut off and no
  path uses the dead switch;
* LMC: each port has ``2^LMC`` LIDs and queue pairs spread over them; OpenSM
  3.3's ftree refuses LMC > 0 and the run says what it used instead;
* a fabric beyond the unicast LID space, missing tools and bad names exit 2
  with ``routing`` named.

The dump reader is checked on OpenSM's text itself (no tools needed).
"""

from __future__ import annotations

import numpy as np
import pytest
from ibsim_fabric import MISSING, SKIP_REASON
from test_simulate_cli import invoke, rows

from topogen.exports.infiniband import opensm_routes
from topogen.fabric import clos
from topogen.spec.cluster import build_spec
from topogen.traffic import flows, lft, network, patterns
from topogen.util.errors import InputError

needs_tools = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)


def shape(gpus, hb, radix, extra=None):
    return ["--gpus", str(gpus), "--hb-domain", str(hb), "--radix", str(radix), *[x for k, v in (extra or {}).items() for x in (f"--{k.replace('_', '-')}", str(v))]]


# --- no tools needed ---------------------------------------------------------------------------

DUMP = b"""Unicast lids [0-14] of switch Lid 1 guid 0x0002c90000000400 ('leaf-g0-r0'):
0x0001 000 # Switch portguid 0x0002c90000000400: 'leaf-g0-r0'
0x0002 009 # Switch portguid 0x0002c90000000410: 'leaf-g0-r1'
0x000d 001 # Channel Adapter portguid 0x0002c90000000001: 'hb00-gpu0'
3 lids dumped
Unicast lids [0-14] of switch Lid 9 guid 0x0002c90000000480 ('spine-0'):
0x000D 001 # Channel Adapter portguid 0x0002c90000000001: 'hb00-gpu0'
0x000e 254 # Channel Adapter portguid 0x0002c90000000011: 'hb00-gpu1'
2 lids dumped
"""


def test_lft_dump_read_column_by_column():
    guids, sw, lid, port = lft.read_lfts(DUMP)
    assert guids == [0x0002C90000000400, 0x0002C90000000480]
    assert sw.tolist() == [0, 0, 0, 1, 1]
    assert lid.tolist() == [1, 2, 13, 13, 14]
    assert port.tolist() == [0, 9, 1, 1, 254]


@pytest.mark.parametrize("block", [1, 7, 40, 64, 200])
def test_lft_dump_read_in_pieces_gives_the_same_entries(block, tmp_path):
    """Pieces cut anywhere (inside a header, inside a line) read as the whole; a path reads as its bytes."""
    whole = lft.read_lfts(DUMP)
    path = tmp_path / "opensm-lfts.dump"
    path.write_bytes(DUMP)
    for got in (lft.read_lfts(DUMP, block=block), lft.read_lfts(path, block=block)):
        assert got[0] == whole[0]
        for a, b in zip(got[1:], whole[1:]):
            assert a.tolist() == b.tolist()


def test_lft_dump_refuses_what_is_not_opensm_columns():
    with pytest.raises(ValueError, match="columns"):
        lft.read_lfts(DUMP.replace(b"0x0002 009", b"0x0002 0x9"))
    with pytest.raises(ValueError, match="before any switch"):
        lft.read_lfts(b"0x0001 001 # x\n" + DUMP)


def test_guid2lid_cache_read():
    assert lft.read_guid2lid("0x0002c900000001f1 0x002c 0x002f\n\n0x0002c90000000111 0x001e 0x001e\n") == {0x0002C900000001F1: 0x2C, 0x0002C90000000111: 0x1E}


@pytest.mark.parametrize("name,engine,lmc", [("opensm", "ftree", 0), ("opensm:updn", "updn", 0), ("opensm:minhop:lmc=3", "minhop", 3), ("opensm:sssp:lmc=0", "sssp", 0), ("opensm:dnup:lmc=7", "dnup", 7)])
def test_routing_names(name, engine, lmc):
    c = lft.parse(name)
    assert (c.engine, c.lmc, c.lids) == (engine, lmc, 1 << lmc)
    assert lft.parse(c.label) == c


@pytest.mark.parametrize("name,says", [("opensm:lash", "engine 'lash'"), ("opensm:ftree:lmc=8", "bad LMC"), ("opensm:ftree:lmc", "bad LMC"), ("opensm:ftree:lmc=1:x", "unknown routing"), ("opensm:", "engine ''")])
def test_bad_routing_names_exit_2(name, says):
    res = invoke(["demo", "--routing", name])
    assert res.exit_code == 2 and "routing" in res.output and says in res.output and "Traceback" not in res.output, res.output


def test_missing_tools_exit_2_naming_them(monkeypatch):
    monkeypatch.setattr(opensm_routes, "SEARCH", "/nonexistent")
    res = invoke(["demo", "--routing", "opensm", "--pattern", "shift:1"])
    assert res.exit_code == 2 and "routing" in res.output and "ibsim, ibsim-run, opensm are not installed" in res.output and "apt-get install ibsim-utils opensm" in res.output, res.output


@pytest.mark.parametrize("gpus,radix,lmc", [(65536, 64, 0), (32768, 64, 1)])
def test_beyond_the_lid_space_exit_2(gpus, radix, lmc):
    """49,151 unicast LIDs: 65,536 GPU ports never fit, 32,768 fit only at LMC 0 (checked before any tool runs)."""
    spec = build_spec({"name": "big", "gpus": gpus, "hb_domain": 8, "radix": radix, "arch": "rail-optimized"})
    fabric = clos.generate(spec, "rail-optimized")
    choice = lft.Choice("ftree", lmc)
    with pytest.raises(InputError) as exc:
        opensm_routes.check(fabric, choice)
    text = str(exc.value)
    assert "routing" in text and "49,151 unicast LIDs" in text and "--routing dmodk" in text
    if lmc == 0:
        res = invoke(["--gpus", str(gpus), "--hb-domain", "8", "--radix", str(radix), "--arch", "rail-optimized", "--routing", "opensm", "--pattern", "shift:1"])
        assert res.exit_code == 2 and "49,151 unicast LIDs" in res.output and "Traceback" not in res.output, res.output
    else:
        opensm_routes.check(fabric, lft.Choice("ftree", 0))  # fits without LMC


# --- the real tools ----------------------------------------------------------------------------

FAT_TREES = [
    # gpus, hb, radix, extra, arch, shifts (domains): within a leaf group and across groups
    (128, 8, 16, {}, "rail-optimized", (1, 3, 8)),  # 2-tier, radix 16: 2 groups of 8 domains
    (512, 8, 32, {}, "rail-optimized", (1, 5, 16, 33)),  # 2-tier, radix 32: 4 groups of 16
    (128, 8, 8, {}, "rail-optimized", (1, 4, 8)),  # 3-tier, radix 8: 80 switches
    (256, 8, 8, {}, "rail-optimized", (2, 16, 31)),  # 3-tier, radix 8, 160 switches
    (192, 8, 16, {"planes": 2}, "rail-optimized", (1, 9)),  # a subnet per plane
    (64, 8, 16, {"homing": "dual"}, "rail-optimized", (1, 3)),  # two CA ports per GPU
    (256, 8, 16, {}, "rail-only", (1, 8, 31)),  # each rail its own 2-tier subnet
]


def _id(c):
    return f"n{c[0]}-k{c[1]}-r{c[2]}-{c[4]}" + "".join(f"-{k}{v}" for k, v in c[3].items())


@needs_tools
@pytest.mark.parametrize("case", FAT_TREES, ids=_id)
def test_ftree_shift_is_contention_free_and_agrees_with_dmodk(case):
    gpus, hb, radix, extra, arch, shifts = case
    pats = ",".join(f"shift:{s}" for s in shifts)
    got = rows([*shape(gpus, hb, radix, extra), "--arch", arch, "--pattern", pats, "--routing", "opensm,dmodk"])
    assert len(got) == 2 * len(shifts)
    for r in got:
        assert r["unroutable_pairs"] == 0, r
        assert r["min_rate_fraction"] == pytest.approx(1.0) and r["mean_rate_fraction"] == pytest.approx(1.0), (r["pattern"], r["routing"])
        assert r["max_link_load"] == pytest.approx(1.0), (r["pattern"], r["routing"])
    osm = [r for r in got if r["routing"] == "opensm:ftree"]
    assert len(osm) == len(shifts)
    assert all(any("OpenSM's forwarding tables" in n for n in r["notes"]) for r in osm)
    assert not any("another engine" in n for r in osm for n in r["notes"])  # ftree itself routed every subnet


ONE_SUBNET = [(128, 8, 16, {}), (512, 8, 32, {}), (128, 8, 8, {}), (64, 8, 16, {"homing": "dual"})]  # 2 tiers, and a full 3-tier


@needs_tools
@pytest.mark.parametrize("case", ONE_SUBNET, ids=lambda c: f"n{c[0]}-k{c[1]}-r{c[2]}" + "".join(f"-{v}" for v in c[3].values()))
def test_ftree_paths_are_dmodk_paths_link_for_link(case):
    """On one subnet, OpenSM's ftree LFTs put every flow of a permutation on the links topogen's dmodk picks."""
    gpus, hb, radix, extra = case
    spec = build_spec({"name": "eq", "gpus": gpus, "hb_domain": hb, "radix": radix, "arch": "rail-optimized", **extra})
    fabric = clos.generate(spec, "rail-optimized")
    net = network.build(fabric, 7200.0)
    tables = opensm_routes.tables(fabric, lft.Choice())
    assert tables.engines == {"fabric": "ftree"}
    for draw in (1, 2):
        prs = patterns.pairs(patterns.parse("permutation"), fabric.gpus, fabric.hb_domain, draw)
        mine = flows.build(net, prs, "dmodk")
        theirs = flows.build(net, prs, "opensm:ftree", tables=tables)
        assert theirs.alive.all() and mine.alive.all()
        assert (mine.direct != theirs.direct).nnz == 0


@needs_tools
def test_parallel_leaf_spine_links_break_link_for_link_but_not_the_loads():
    """The bundled demo (two links from each leaf to each spine): ftree picks other parallel links than dmodk, same loads."""
    spec = build_spec({"name": "demo", "gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-optimized"})
    fabric = clos.generate(spec, "rail-optimized")
    net = network.build(fabric, 7200.0)
    tables = opensm_routes.tables(fabric, lft.Choice())
    prs = patterns.pairs(patterns.parse("permutation"), fabric.gpus, fabric.hb_domain, 1)
    mine, theirs = flows.build(net, prs, "dmodk"), flows.build(net, prs, "opensm:ftree", tables=tables)
    assert (mine.direct != theirs.direct).nnz > 0  # docs/traffic.md: not link for link here
    args = [*shape(64, 8, 16), "--arch", "rail-optimized", "--pattern", "permutation,shift:1", "--hb-bandwidth", "7200", "--draw", "1"]
    for a, b in zip(rows([*args, "--routing", "opensm"]), rows([*args, "--routing", "dmodk"])):
        for k in ("unroutable_pairs", "min_rate_fraction", "mean_rate_fraction", "max_link_load"):
            assert a[k] == pytest.approx(b[k]), (a["pattern"], k)


ALIKE = [(256, 8, 8), (256, 8, 16), (512, 8, 16)]  # 4 tiers; 3 tiers with part of the top tier


@needs_tools
@pytest.mark.parametrize("case", ALIKE, ids=lambda c: "n{}-k{}-r{}".format(*c))
def test_ftree_and_dmodk_load_links_alike(case):
    """Where ftree picks other top-tier links than dmodk's digit, the loads and rates are still the same."""
    args = [*shape(*case), "--arch", "rail-optimized", "--pattern", "permutation,bisection,shift:3", "--hb-bandwidth", "7200", "--draw", "1"]
    osm, mine = rows([*args, "--routing", "opensm"]), rows([*args, "--routing", "dmodk"])
    assert len(osm) == len(mine) == 3
    for a, b in zip(osm, mine):
        assert a["pattern"] == b["pattern"]
        for k in ("unroutable_pairs", "min_rate_fraction", "mean_rate_fraction", "max_link_load"):
            assert a[k] == pytest.approx(b[k]), (a["pattern"], k)


@needs_tools
def test_every_path_ends_at_its_destination_and_climbs_no_higher_than_needed():
    """Walk check on a 3-tier fabric: each flow's links chain from its source leaf to its destination's, tiers up then down."""
    spec = build_spec({"name": "w", "gpus": 128, "hb_domain": 8, "radix": 8, "arch": "rail-optimized"})
    fabric = clos.generate(spec, "rail-optimized")
    net = network.build(fabric, 7200.0)
    for engine in ("ftree", "updn", "minhop"):
        tables = opensm_routes.tables(fabric, lft.Choice(engine))
        prs = patterns.pairs(patterns.parse("permutation"), fabric.gpus, fabric.hb_domain, 5)
        t = flows.build(net, prs, f"opensm:{engine}", tables=tables)
        assert t.alive.all()
        d = t.direct.tocsr()
        L = fabric.links
        for f in range(0, d.shape[0], 7):
            links = d.indices[d.indptr[f] : d.indptr[f + 1]]
            cables = links[links < 2 * net.cables]
            up = cables[cables % 2 == 0] // 2
            down = cables[cables % 2 == 1] // 2
            assert len(up) == len(down)  # valley-free: as many hops up as down
            tiers = sorted(L.tier[up].tolist())
            assert tiers == sorted(L.tier[down].tolist()) == list(range(1, len(tiers) + 1))


@needs_tools
def test_opensm_routes_around_a_dead_spine():
    args = [*shape(512, 8, 32), "--arch", "rail-optimized", "--pattern", "shift:16", "--routing", "opensm", "--fail", "spine-03"]
    got = rows(args)
    intact, failed = got
    assert failed["failed"] == "spine-03" and failed["unroutable_pairs"] == 0
    assert intact["max_link_load"] == pytest.approx(1.0)
    assert failed["max_link_load"] > 1.0  # 15 of 16 spines: the shift no longer fits
    assert not any("spine-03" in b["link"] for b in failed["busiest_links"])


@needs_tools
def test_lmc_spreads_queue_pairs_over_lids():
    spec = build_spec({"name": "l", "gpus": 128, "hb_domain": 8, "radix": 8, "arch": "rail-optimized"})
    fabric = clos.generate(spec, "rail-optimized")
    net = network.build(fabric, 7200.0)
    tables = opensm_routes.tables(fabric, lft.Choice("updn", 2))
    lid = tables.lid[tables.lid >= 0]
    assert (lid % 4 == 0).all() and len(np.unique(lid)) == len(lid)  # LMC 2: base LIDs aligned, 4 each
    prs = patterns.pairs(patterns.parse("shift:8"), fabric.gpus, fabric.hb_domain, 0)  # every pair crosses the core
    t = flows.build(net, prs, "opensm:updn:lmc=2", flows_per_pair=4, tables=tables)
    assert t.alive.all() and t.flows == 4 * len(prs.src)
    d = t.direct.tocsr()
    paths = [tuple(sorted(d.indices[d.indptr[f] : d.indptr[f + 1]].tolist())) for f in range(t.flows)]
    distinct = [len(set(paths[4 * p : 4 * p + 4])) for p in range(len(prs.src))]
    assert max(distinct) > 1  # the four LIDs of a port are routed on more than one path
    got = rows([*shape(128, 8, 8), "--arch", "rail-optimized", "--pattern", "shift:8", "--routing", "opensm:ftree:lmc=2", "--flows-per-pair", "4"])
    assert any("minhop (LMC > 0 is not supported by fat-tree routing)" in n for n in got[0]["notes"])  # OpenSM 3.3 falls back, and says so


@needs_tools
def test_director_spines_are_routed_through_their_asics():
    """288-port spines are written as ASICs: the walk crosses their internal links and comes out on the plan's cables."""
    got = rows([*shape(512, 8, "32/288"), "--arch", "rail-optimized", "--pattern", "shift:1,shift:16", "--routing", "opensm,dmodk"])
    for r in got:
        assert r["unroutable_pairs"] == 0 and r["min_rate_fraction"] == pytest.approx(1.0) and r["max_link_load"] == pytest.approx(1.0), r
