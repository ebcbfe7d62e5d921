"""``topogen compare``: rows equal to what the explicit wiring gives, JSON shape, table, errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from topogen.bom import compare
from topogen.cli import main
from topogen.fabric import clos
from topogen.spec.cluster import build_spec

PAPER_GRID = ["--gpus", "32768,65536", "--radix", "32,64,128,256", "--hb-domain", "256", "--catalog", "paper"]
ARCH_KEYS = {"switches", "transceivers", "cost", "power_w"}


def run(*args):
    return CliRunner().invoke(main, ["compare", *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def paper_rows():
    res = run(*PAPER_GRID, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["rows"]


def test_json_shape(paper_rows):
    assert [(r["gpus"], r["radix"]) for r in paper_rows] == [(n, k) for n in (32768, 65536) for k in (32, 64, 128, 256)]
    for r in paper_rows:
        assert {"gpus", "hb_domain", "radix", "rail-optimized", "rail-only", "cost_reduction", "power_reduction"} <= set(r)
        assert r["hb_domain"] == 256
        for arch in ("rail-optimized", "rail-only"):
            assert ARCH_KEYS <= set(r[arch])
            assert all(isinstance(r[arch][k], int) for k in ARCH_KEYS)
        assert 0 < r["cost_reduction"] < 1
        assert r["power_reduction"] is None  # the paper gives no power: 0/0


def test_rows_equal_the_explicit_wiring(paper_rows):
    """Recount every row from the generated fabric: paper model = 748·radix per switch, 374 per link end."""
    for r in paper_rows:
        spec = build_spec({"gpus": r["gpus"], "hb_domain": 256, "radix": r["radix"]})
        cost = {}
        for arch in ("rail-optimized", "rail-only"):
            f = clos.generate(spec, arch)
            sw, tx = len(f.switches), 2 * len(f.links)
            cost[arch] = 748 * r["radix"] * sw + 374 * tx
            assert (r[arch]["switches"], r[arch]["transceivers"], r[arch]["cost"], r[arch]["power_w"]) == (sw, tx, cost[arch], 0)
            assert r[arch]["tiers"] == f.tiers and r[arch]["closed_form_agrees"]
        assert r["cost_reduction"] == round(1 - cost["rail-only"] / cost["rail-optimized"], 6)


def test_paper_sanity_figures(paper_rows):
    """Hand counts (K = 256) and the paper's '37% to 75%' range."""
    rows = {(r["gpus"], r["radix"]): r for r in paper_rows}
    r = rows[(32768, 64)]
    assert (r["rail-optimized"]["switches"], r["rail-optimized"]["transceivers"]) == (2560, 196608)
    assert r["rail-optimized"]["switches_per_tier"] == [1024, 1024, 512]
    assert (r["rail-only"]["switches"], r["rail-only"]["transceivers"]) == (1536, 131072)
    assert r["cost_reduction"] == 0.375
    r = rows[(65536, 256)]
    assert (r["rail-optimized"]["switches"], r["rail-only"]["switches"], r["cost_reduction"]) == (1280, 256, 0.75)
    r = rows[(32768, 256)]
    assert (r["rail-optimized"]["switches"], r["rail-only"]["switches"], r["cost_reduction"]) == (384, 128, 0.6)
    reductions = [r["cost_reduction"] for r in paper_rows]
    assert min(reductions) == 0.375 and max(reductions) == 0.75


def test_table_output(paper_rows):
    res = run(*PAPER_GRID)
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0].startswith("catalog paper;")
    body = [ln for ln in lines if ln.strip()[:1].isdigit()]
    assert len(body) == 8
    first = body[1].split()  # 32768 GPUs, radix 64
    assert first[:4] == ["32,768", "256", "64", "400"]  # counts with thousands separators, like costs
    assert "2,560" in first and "196,608" in first and "196,083,712" in first and "1,536" in first and "122,552,320" in first
    assert body[1].rstrip().endswith("37.5%    n/a")


def test_single_spec_compare_with_preset():
    res = run("gh200-32k", "--json")
    assert res.exit_code == 0
    (row,) = json.loads(res.stdout)["rows"]
    assert (row["gpus"], row["hb_domain"], row["radix"], row["cost_reduction"]) == (32768, 256, 64, 0.375)


def test_compare_matches_build_summary(tmp_path):
    """compare and build report the same figures for the same spec (realistic catalog, with power)."""
    args = ["--gpus", "4096", "--hb-domain", "8", "--radix", "64", "--catalog", "ndr-400g"]
    (row,) = json.loads(run(*args, "--json").stdout)["rows"]
    out = tmp_path / "o"
    assert CliRunner().invoke(main, ["build", *args, "--out", str(out), "--formats", "bom"]).exit_code == 0
    summary = json.loads((out / "summary.json").read_text())
    for arch in ("rail-optimized", "rail-only"):
        sec = summary["architectures"][arch]
        assert {k: row[arch][k] for k in ARCH_KEYS} == {k: sec[k] for k in ARCH_KEYS}
    assert row["cost_reduction"] == summary["comparison"]["cost_reduction"]
    assert row["power_reduction"] == summary["comparison"]["power_reduction"]
    assert 0 < row["power_reduction"] < 1


def test_sweep_order_and_dedupe():
    specs = compare.sweep_specs(None, {"gpus": "2048,1024,2048", "hb_domain": "8", "radix": "64,32", "catalog": "paper"})
    assert [(s.gpus, s.radix) for s in specs] == [(2048, 64), (2048, 32), (1024, 64), (1024, 32)]
    assert all(s.arch == "both" for s in specs)


def test_sweep_skips_the_bad_combination_and_reports_it():
    res = run("--gpus", "32768,1000", "--hb-domain", "256", "--radix", "64")
    assert res.exit_code == 0
    assert "32,768" in res.stdout and "1,000" not in res.stdout
    assert res.stderr == (
        "skipped 1 of 2 combinations that cannot be built:\n"
        "  gpus=1000: gpus: gpus 1000 is not a whole number of HB domains of 256 (use a multiple of hb_domain, e.g. 768 or 1024)\n"
    )
    res = run("--gpus", "32768,1000", "--hb-domain", "256", "--radix", "64", "--json")
    doc = json.loads(res.stdout)
    assert [r["gpus"] for r in doc["rows"]] == [32768] and doc["skipped"][0]["combination"] == "gpus=1000"


def test_sweep_error_when_no_combination_builds():
    res = run("--gpus", "1000,2000", "--hb-domain", "256", "--radix", "64")
    assert res.exit_code == 2
    assert res.stderr.startswith("error: 2 problems in the input:") and "(for gpus=1000)" in res.stderr and "(for gpus=2000)" in res.stderr


def test_sweep_empty_value():
    res = run("--gpus", "32768,,65536", "--hb-domain", "256", "--radix", "64")
    assert res.exit_code == 0
    assert "gpus=: gpus: " in res.stderr and "got ''" in res.stderr


def test_sweep_radix_the_catalog_cannot_supply():
    res = run("--gpus", "1024", "--hb-domain", "8", "--radix", "64,32", "--catalog", "ndr-400g")
    assert res.exit_code == 0
    assert res.stderr == "skipped 1 of 2 combinations that cannot be built:\n  radix=32: radix: catalog ndr-400g has no 400G switch with radix 32 (it supplies 200G: radix 128; 400G: radix 64)\n"
    assert "1,024" in res.stdout


# --- "/" separates link tiers, "," swept values ------------------------------------------------------


def test_slash_is_the_per_tier_separator_in_build_and_compare():
    base = {"gpus": 2048, "hb_domain": 8}
    assert build_spec({**base, "radix": "128/576", "link_speed": "200/400"}) == build_spec({**base, "radix": "128,576", "link_speed": "200,400"}) == build_spec({**base, "radix": [128, 576], "link_speed": [200, 400]})
    r = CliRunner().invoke(main, ["compare", "--gpus", "2048", "--hb-domain", "8", "--radix", "64/576", "--link-speed", "200/400,400", "--catalog", "chassis-400g", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    # two values swept, the first per tier (200G NICs, 400G uplinks): fewer transceivers than 400G everywhere
    assert [x["link_speed"] for x in rows] == [200, 400]
    assert rows[0]["rail-optimized"]["transceivers"] < rows[1]["rail-optimized"]["transceivers"]
    # a plain comma still sweeps in compare; "/" stays inside one swept value
    assert compare._combinations({"link_speed": "200,400"})[0]["link_speed"] == ["200", "400"]
    assert compare._combinations({"link_speed": "200/400,400"})[0]["link_speed"] == ["200/400", "400"]


@pytest.mark.parametrize("cmd", ("build", "validate"))
def test_mixed_separators_exit_2_naming_the_field(cmd):
    r = CliRunner().invoke(main, [cmd, "--gpus", "2048", "--hb-domain", "8", "--radix", "128,576", "--link-speed", "200,400/800"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "link_speed '200,400/800' mixes ',' and '/'" in r.output, r.output


@pytest.mark.parametrize("flag,value", (("--radix", "32,64/128"), ("--oversubscription", "3:1,1:1/1:1")))
def test_mixed_separators_in_any_per_tier_field(flag, value):
    """radix and oversubscription are split by the same function: the same error, naming their own field and example."""
    r = CliRunner().invoke(main, ["build", "--gpus", "2048", "--hb-domain", "8", "--radix", "64", flag, value])
    key = flag[2:]
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"{key} '{value}' mixes ',' and '/'" in r.output and f"e.g. {flag} " in r.output and "--link-speed" not in r.output, r.output


def test_rows_show_per_tier_values():
    """A sweep over per-tier radixes shows each row's own tiers (it showed the leaf's radix only: two rows read 32)."""
    r = CliRunner().invoke(main, ["compare", "--gpus", "8192", "--hb-domain", "8", "--radix", "32/288,32/576", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    assert [x["radix_per_tier"] for x in rows] == ["32/288", "32/576"] and [x["link_speed_per_tier"] for x in rows] == ["400", "400"]
    table = CliRunner().invoke(main, ["compare", "--gpus", "8192", "--hb-domain", "8", "--radix", "32/288,32/576"]).stdout
    assert " 32/288 " in table and " 32/576 " in table
