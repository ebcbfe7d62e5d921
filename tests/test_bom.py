"""The BOM, counted from the explicit wiring, against closed forms and hand counts.

The grid is the core grid of tests/test_clos_grid.py (K in {8, 72, 256}, radix in
{32, 64, 128, 144, 256}, N from one HB domain to 65,536 GPUs with partial groups).
"""

from __future__ import annotations

import csv
import hashlib
import json
import textwrap
from math import ceil

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from topogen import pipeline
from topogen.bom import bill as bom
from topogen.spec import catalog
from topogen.cli import main
from topogen.fabric import clos
from topogen.spec import counts
from topogen.spec.cluster import build_spec
from topogen.util import resources

KS = (8, 72, 256)
RADIXES = (32, 64, 128, 144, 256)
DOMAIN_COUNTS = (1, 2, 3, 7, 16, 31, 33, 100, 129, 257, 1000, 4097)
MAX_N = 65536

PAPER = catalog.load_catalog("paper")
NDR = catalog.load_catalog("ndr-400g")


def grid():
    for k in KS:
        ns = sorted({d * k for d in DOMAIN_COUNTS if d * k <= MAX_N} | {(MAX_N // k) * k})
        for r in RADIXES:
            for n in ns:
                yield pytest.param(n, k, r, id=f"N{n}-K{k}-r{r}")


def by_tier(b: bom.Bom, category: str) -> list[int]:
    return [sum(x.quantity for x in b.lines if x.category == category and x.tier == t) for t in range(1, b.tiers + 1)]


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("n,k,r", list(grid()))
def test_paper_bom_matches_closed_form(n, k, r, arch):
    """Paper model: switches = closed-form switches, transceivers = 2 per link, cost = 748·radix·S + 374·T."""
    spec = build_spec({"gpus": n, "hb_domain": k, "radix": r, "arch": arch})
    closed = counts.arch_counts(spec, arch)
    b = bom.compile_bom(clos.generate(spec, arch), PAPER)
    assert tuple(by_tier(b, "switch")) == closed.switches_per_tier
    assert tuple(by_tier(b, "transceiver")) == tuple(2 * x for x in closed.links_per_tier)
    assert b.cables == 0 and b.power_w == 0
    assert b.cost == 748 * r * closed.switches + 374 * 2 * closed.links
    assert sum(b.cost_per_tier()) == b.cost


FULL = [(8, 64, 2), (8, 16, 3), (8, 16, 4), (72, 32, 2), (256, 16, 2), (256, 32, 1)]  # N <= 65,536


@pytest.mark.parametrize("k,r,t", FULL, ids=lambda x: str(x))
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_twin_port_bom_matches_closed_form_when_full(k, r, t, arch):
    """Fully populated, every switch uses an even number of ports per tier: modules = ports / 2."""
    n = counts.clos_capacity(r, t) * k
    cat = _ndr_with_radix(r)  # ndr-400g's media on a radix-r twin-port switch
    spec = build_spec({"gpus": n, "hb_domain": k, "radix": r, "arch": arch})
    closed = counts.arch_counts(spec, arch)
    b = bom.compile_bom(clos.generate(spec, arch), cat)
    q = {(x.sku, x.tier, x.end): x.quantity for x in b.lines}
    assert tuple(by_tier(b, "switch")) == closed.switches_per_tier
    lpt = closed.links_per_tier
    # GPU-leaf runs beyond multimode reach (50 m) are single-mode (twin-port DR8 at the leaf, DR4 at the NIC)
    sm = q.get(("MMS4X00-NM", 1, "switch"), 0)
    if not sm:
        assert q[("MMA4Z00-NS", 1, "switch")] == lpt[0] // 2
    else:  # a leaf with ports of both kinds may round up one module of each
        leaves = closed.switches_per_tier[0]
        assert lpt[0] // 2 <= q[("MMA4Z00-NS", 1, "switch")] + sm <= lpt[0] // 2 + leaves
        assert (b.link_media.length_m[(clos.generate(spec, arch).links.tier == 1)] > 50).any()
    if k == 8:  # DGX H100-class node (gpus_per_node 8): twin-port flat-top modules in its 4 NIC cages
        assert q[("MMA4Z00-NS-FLT", 1, "gpu")] == lpt[0] // 2
    else:
        assert q[("MMA4Z00-NS400", 1, "gpu")] + q.get(("MMS4X00-NS400", 1, "gpu"), 0) == lpt[0]
    assert sum(v for (sku, t, _), v in q.items() if t == 1 and sku.startswith(("MFP7E10", "SMF"))) == lpt[0]  # one fibre per link, by length
    for tier in range(2, closed.tiers + 1):
        assert q[("MMS4X00-NM", tier, "switch")] == lpt[tier - 1]  # 2 ends / 2 ports per module
        assert sum(v for (sku, t, _), v in q.items() if t == tier and sku.startswith("SMF")) == lpt[tier - 1]


def _ndr_with_radix(r: int) -> catalog.Catalog:
    """ndr-400g with its switch re-declared at radix ``r`` (it ships radix 64 only)."""
    data = yaml.safe_load((resources.template_path("catalogs", "ndr-400g")).read_text())
    data["switches"][0]["ports"] = [{"speed": 400, "radix": r, "per_cage": 2}]
    return catalog.parse_catalog(data, label="ndr-test")


def test_twin_port_modules_round_up_per_device():
    """40 GPUs, K=8, dedicated rails: 8 rail switches with 5 GPUs each need 3 twin-port modules each."""
    spec = build_spec({"gpus": 40, "hb_domain": 8, "radix": 64, "rail_packing": "dedicated", "catalog": "ndr-400g", "arch": "rail-only"})
    b = bom.compile_bom(clos.generate(spec, "rail-only"), NDR)
    q = {(x.sku, x.end): x.quantity for x in b.lines}
    assert b.switches == 8
    assert q[("MMA4Z00-NS", "switch")] == 8 * 3  # not 40 / 2 = 20
    assert q[("MMA4Z00-NS-FLT", "gpu")] == 5 * 4  # 5 DGX-class nodes, 4 twin-port cages each


def test_gpu_end_modules_are_counted_per_node():
    """A twin-port GPU-end module sits in one host: 4-GPU nodes of a 72-GPU domain take 2 each, never one across trays."""
    data = yaml.safe_load((resources.template_path("catalogs", "ndr-400g")).read_text())
    for rule in data["media"]:
        if rule.get("gpus_per_node") == 8:
            rule["gpus_per_node"] = [4]
    cat = catalog.parse_catalog(data, label="ndr-trays")
    spec = build_spec({"gpus": 144, "hb_domain": 72, "gpus_per_node": 4, "radix": 64, "catalog": "ndr-400g", "arch": "rail-only"})
    b = bom.compile_bom(clos.generate(spec, "rail-only"), cat)
    assert {x.sku: x.quantity for x in b.lines if x.end == "gpu"} == {"MMA4Z00-NS-FLT": 36 * 2}


def test_per_device_rounding_matches_a_loop():
    """The bincount count equals an independent per-switch loop on a partly filled fabric."""
    spec = build_spec({"gpus": 8 * 45, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g", "arch": "rail-optimized"})
    f = clos.generate(spec, "rail-optimized")
    b = bom.compile_bom(f, NDR)
    want = {1: 0, 2: 0}
    for i, _s in enumerate(f.switches):
        dev = spec.gpus + i
        for tier in (1, 2):
            sel = f.links.tier == tier
            ports = int(np.sum(f.links.z_dev[sel] == dev) + np.sum(f.links.a_dev[sel] == dev))
            want[tier] += ceil(ports / 2)
    q = {(x.sku, x.tier, x.end): x.quantity for x in b.lines}
    assert q[("MMA4Z00-NS", 1, "switch")] == want[1]
    assert q[("MMS4X00-NM", 2, "switch")] == want[2]


TWIN_GPU = """\
name: twin-gpu
switches:
  - sku: sw
    ports: [{speed: 400, radix: 64, per_cage: 2}]
    price_usd: 100
    power_w: 10
transceivers:
  - {sku: twin, speed: 400, ports_per_module: 2, price_usd: 2, power_w: 1}
nics:
  - {sku: nic2, speed: 400, ports: 2, price_usd: 5, power_w: 3}
media:
  - transceiver: twin
"""


def test_gpu_end_twin_modules_counted_per_hb_domain_and_nics_per_gpu():
    cat = catalog.parse_catalog(yaml.safe_load(TWIN_GPU), label="t")
    for planes, nics_per_gpu in ((1, 1), (2, 1), (3, 2)):
        spec = build_spec({"gpus": 8 * 5, "hb_domain": 8, "radix": 64, "planes": planes, "arch": "rail-only"})
        b = bom.compile_bom(clos.generate(spec, "rail-only"), cat)
        q = {(x.category, x.end): x.quantity for x in b.lines}
        assert q[("transceiver", "gpu")] == 5 * ceil(8 * planes / 2)
        assert q[("nic", "")] == 40 * nics_per_gpu


def test_splitter_cables_counted_per_switch_and_no_optics_in_rack():
    """One HB domain: in-rack copper splitters (2 links each), no transceivers."""
    spec = build_spec({"gpus": 8, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g"})
    for arch in spec.arches:
        b = bom.compile_bom(clos.generate(spec, arch), NDR)
        assert b.transceivers == 0
        assert {x.sku: x.quantity for x in b.lines if x.category == "cable"} == {"MCP7Y00-N002": 4}  # the 2 m splitter reaches the in-rack runs
        assert b.media[1].length_class == "in-rack" and b.media[1].kind == "copper"


def test_dgx_h100_class_bom_with_ndr_400g():
    """1,024 GPUs in DGX H100-class nodes on 64-port 400G switches: every line, priced and sourced."""
    spec = build_spec({"gpus": 1024, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g", "arch": "rail-optimized"})
    b = bom.compile_bom(clos.generate(spec, "rail-optimized"), NDR)
    lines = {x.sku: x for x in b.sku_lines()}
    assert {s: x.quantity for s, x in lines.items()} == {
        "MQM9700-NS2F": 48,  # 32 leaves + 16 spines
        "MMA4Z00-NS": 512,  # twin-port SR8 at the leaves: 32 x 32 ports / 2
        "MMA4Z00-NS-FLT": 512,  # twin-port flat-top SR8 at the nodes: 4 per DGX H100-class node
        # multimode fibre, the shortest that reaches each GPU-leaf run (all at most 15 m on this floor)
        "MFP7E10-N005": 14,
        "MFP7E10-N007": 350,
        "MFP7E10-N010": 612,
        "MFP7E10-N015": 48,
        "MMS4X00-NM": 1024,  # twin-port DR8: (32 + 16) switches x 32 uplink/downlink ports / 2
        "SMF-MPO12APC-015M": 1024,  # single-mode trunk: 2 compute rows with the spine row between, <= 15 m
    }
    assert all(x.price_source and x.power_source for x in lines.values())
    expect = 48 * 30000 + 512 * 1600 + 512 * 1600 + (14 * 65 + 350 * 70 + 612 * 80 + 48 * 90) + 1024 * 2000 + 1024 * 80
    assert b.cost == expect
    assert b.totals()["cost_per_gpu"] == round(expect / 1024, 2)
    assert b.power_w == 48 * 750 + 512 * 17 + 512 * 17 + 1024 * 17
    assert [m.length_class for m in b.media.values()] == ["in-row", "in-row"]
    assert b.link_media.length_m.max() <= 15


def test_sku_lines_aggregate_tier_lines():
    spec = build_spec({"gpus": 4096, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g", "arch": "rail-optimized"})
    b = bom.compile_bom(clos.generate(spec, "rail-optimized"), NDR)
    assert b.tiers == 3
    agg = {x.sku: x.quantity for x in b.sku_lines()}
    for sku, qty in agg.items():
        assert qty == sum(x.quantity for x in b.lines if x.sku == sku)
    assert sum(x.extended_price for x in b.sku_lines()) == b.cost
    assert sum(b.cost_per_tier()) == b.cost
    assert sum(b.power_per_tier()) == b.power_w
    # the DR8 module serves two link tiers
    (dr8,) = [x for x in b.sku_lines() if x.sku == "MMS4X00-NM"]
    assert dr8.used_in == "leaf-spine (switch end), spine-core (switch end)"


def test_link_media_for_exports():
    spec = build_spec({"gpus": 4096, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g"})
    m = bom.link_media(clos.generate(spec, "rail-optimized"), NDR)
    assert sorted(m) == [1, 2, 3]
    assert [(x.length_class, x.kind, x.cable.sku) for x in m.values()] == [
        ("in-row", "optical", "MFP7E10-N015"),
        ("cross-row", "optical", "SMF-MPO12APC-030M"),
        ("cross-hall", "optical", "SMF-MPO12APC-050M"),
    ]
    assert m[1].name.startswith("SR4 multimode")


# --- build: summary.json, bom.csv, bom.json --------------------------------------------------


def build_out(tmp_path, *args):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["build", *args, "--out", str(out), "--formats", "bom"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out, res


def read_bom_csv(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))  # plain CSV: the header is line 1


def test_build_writes_bom_files_and_summary(tmp_path):
    out, res = build_out(tmp_path, "--gpus", "32768", "--hb-domain", "256", "--radix", "64", "--catalog", "paper")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["catalog"] == "paper"
    assert summary["catalog_sha256"] == hashlib.sha256((resources.template_path("catalogs", "paper")).read_bytes()).hexdigest()
    ro, opt = summary["architectures"]["rail-only"], summary["architectures"]["rail-optimized"]
    assert (opt["switches"], opt["transceivers"], opt["cost"]) == (2560, 196608, 2560 * 64 * 748 + 196608 * 374)
    assert (ro["switches"], ro["transceivers"], ro["cost"]) == (1536, 131072, 1536 * 64 * 748 + 131072 * 374)
    assert opt["power_w"] == 0 and len(opt["cost_per_tier"]) == 3
    assert summary["comparison"]["cost_reduction"] == 0.375
    assert summary["comparison"]["power_reduction"] is None
    assert "rail-only saves 37.5% of the cost" in res.output
    for arch, sec in summary["architectures"].items():
        rows = read_bom_csv(out / arch / "bom.csv")
        assert "total" not in {r["category"] for r in rows}  # items only: a column sums to the total
        assert sum(float(r["extended_price_usd"]) for r in rows) == sec["cost"]
        assert sum(float(r["total_power_w"]) for r in rows) == sec["power_w"]
        assert sum(int(r["quantity"]) for r in rows if r["category"] == "transceiver") == sec["transceivers"]
        doc = json.loads((out / arch / "bom.json").read_text())
        assert doc["totals"]["cost"] == sec["cost"]
        assert doc["catalog_sha256"] == summary["catalog_sha256"]
        assert doc["totals"]["cost_per_tier"] == sec["cost_per_tier"]
        assert [m["length_class"] for m in doc["media"]] == [m["length_class"] for m in sec["media"]]
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"rail-only/bom.csv", "rail-only/bom.json", "rail-optimized/bom.csv", "rail-optimized/bom.json"} <= {f["path"] for f in manifest["files"]}


def test_bom_files_are_deterministic(tmp_path):
    a, _ = build_out(tmp_path / "a", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--catalog", "ndr-400g")
    b, _ = build_out(tmp_path / "b", "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--catalog", "ndr-400g")
    for arch in ("rail-optimized", "rail-only"):
        for name in ("bom.csv", "bom.json"):
            assert (a / arch / name).read_bytes() == (b / arch / name).read_bytes()


def test_bom_csv_neutralises_formulas(tmp_path):
    text = textwrap.dedent(TWIN_GPU).replace("name: twin-gpu\n", "name: evil\n").replace("  - sku: sw\n", "  - sku: sw\n    description: \"=HYPERLINK(\\\"http://x\\\")\"\n    price_source: \"+1 (estimate)\"\n")
    p = tmp_path / "evil.yaml"
    p.write_text(text)
    out, _ = build_out(tmp_path, "--gpus", "64", "--hb-domain", "8", "--radix", "64", "--catalog", str(p), "--arch", "rail-only")
    rows = read_bom_csv(out / "rail-only" / "bom.csv")
    sw = next(r for r in rows if r["sku"] == "sw")
    assert sw["description"].startswith("'=HYPERLINK")
    assert sw["price_source"] == "'+1 (estimate)"


def test_pipeline_context_carries_catalog_and_boms():
    spec = build_spec({"gpus": 64, "hb_domain": 8, "radix": 16})
    ctx = pipeline.build(spec)
    assert ctx.catalog.name == "paper"
    assert set(ctx.boms) == {"rail-optimized", "rail-only"}
    assert ctx.summary["architectures"]["rail-only"]["cost"] == ctx.boms["rail-only"].cost
