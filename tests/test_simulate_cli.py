"""`topogen simulate`: inputs (spec, build, cabling.csv, as-built), the JSON row contract, failures, and bad input (exit 2, field named)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from topogen.cli import main

SMALL = ["--gpus", "128", "--hb-domain", "8", "--radix", "16"]
ROW_KEYS = {"arch", "pattern", "routing", "failed", "flows", "min_rate_fraction", "mean_rate_fraction", "max_link_load"}


def invoke(args):
    return CliRunner().invoke(main, ["simulate", *args], catch_exceptions=False)


def rows(args):
    res = invoke([*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["rows"]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("b") / "small"
    res = CliRunner().invoke(main, ["build", *SMALL, "--out", str(out), "--formats", "cabling,ibnetdiscover", "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


def test_json_rows_one_per_arch_pattern_routing_failure():
    got = rows([*SMALL, "--pattern", "ring-allreduce,shift:8", "--routing", "spray,ecmp,dmodk", "--fail", "spine-0", "--size", "64M"])
    # rail-only has no spine-0: its failure rows are left out, with a note on its intact rows
    assert len(got) == 2 * 3 * 3
    assert all(ROW_KEYS <= set(r) and "completion_s" in r for r in got)
    failed = [r for r in got if r["failed"] != "none"]
    assert {r["arch"] for r in failed} == {"rail-optimized"} and all("change" in r for r in failed)
    assert all(any("spine-0" in n for n in r["notes"]) for r in got if r["arch"] == "rail-only")
    shift = [r for r in failed if r["pattern"] == "shift:8" and r["routing"] == "spray"][0]
    assert shift["min_rate_fraction"] == pytest.approx(7 / 8)
    assert shift["change"]["min_rate_fraction"] == pytest.approx(-1 / 8)
    ring = [r for r in got if r["pattern"] == "ring-allreduce" and r["failed"] == "none"]
    assert all(r["bus_bandwidth_GBps"] == pytest.approx(50.0) for r in ring)  # 400G NICs, non-blocking


def test_build_directory_and_cabling_csv_give_the_spec_figures(build):
    args = ["--pattern", "permutation,bisection", "--routing", "ecmp,dmodk", "--hb-bandwidth", "7200", "--draw", "3"]
    from_spec = rows([*SMALL, *args])
    from_build = rows([str(build), *args])
    strip = lambda rs: [{k: v for k, v in r.items() if k != "notes"} for r in rs]  # noqa: E731
    assert strip(from_build) == strip(from_spec)
    one = rows([str(build / "rail-only" / "cabling.csv"), *args])
    assert strip(one) == [r for r in strip(from_spec) if r["arch"] == "rail-only"]


@pytest.mark.parametrize("fmt", ["cabling", "ibnetdiscover"])
def test_as_built_with_a_missing_spine(build, tmp_path, fmt):
    plan = build / "rail-optimized"
    if fmt == "cabling":
        lines = (plan / "cabling.csv").read_text().splitlines(keepends=True)
        floor = tmp_path / "floor.csv"
        floor.write_text("".join(x for x in lines if "spine-0," not in x))
    else:
        floor = plan / "ibnetdiscover" / "fabric.topo"
    got = rows([str(plan), "--as-built", str(floor), "--pattern", "shift:8"])
    assert len(got) == 1 and got[0]["arch"] == "rail-optimized"
    spines = 8
    assert got[0]["min_rate_fraction"] == pytest.approx((spines - 1) / spines if fmt == "cabling" else 1.0)


def test_text_report_side_by_side():
    res = invoke([*SMALL, "--pattern", "shift:8", "--routing", "ecmp", "--fail", "spine-1", "--draw", "1"])
    assert res.exit_code == 0, res.output
    head = res.stdout.splitlines()[1]
    assert "rail-optimized" in head and "rail-only" in head and "[spine-1]" in head
    assert "busiest link: offered / capacity" in res.stdout and "leaf-spine" in res.stdout


def test_fail_random_is_repeatable_and_changes_ecmp():
    args = [*SMALL, "--pattern", "shift:8", "--routing", "spray", "--fail-random", "10%", "--arch", "rail-optimized"]
    a, b = rows([*args, "--draw", "5"]), rows([*args, "--draw", "5"])
    assert a == b and a[1]["failed"].startswith("random 10%")
    assert a[1]["min_rate_fraction"] < 1.0


def test_matrix_pattern(tmp_path):
    m = tmp_path / "m.csv"
    m.write_text("src,dst,bytes\nhb00-gpu0,hb08-gpu0,1G\n8,72,2e9\nhb00-gpu1,hb08-gpu1,1G\n")
    got = rows([*SMALL, "--pattern", f"matrix:{m}", "--arch", "rail-optimized"])
    assert got[0]["pairs"] == 3 and got[0]["min_rate_fraction"] == pytest.approx(1.0)
    assert got[0]["completion_s"] == pytest.approx(2e9 * 8 / 400e9)  # the largest pair, at line rate


BAD = [
    (["--fail", "spine-99"], "fail", "spine-99"),
    (["--fail", "leaf-g0-r0:p99"], "fail", "p99"),
    (["--fail-random", "150%"], "fail_random", "150%"),
    (["--fail-random", "lots"], "fail_random", "lots"),
    (["--pattern", "ringallreduce"], "pattern", "ringallreduce"),
    (["--pattern", "shift:0"], "pattern", "shift"),
    (["--pattern", "shift:16"], "pattern", "shift:16"),
    (["--routing", "ospf"], "routing", "ospf"),
    (["--size", "-3"], "size", "-3"),
    (["--pattern", "permutation"], "hb_bandwidth", "--hb-bandwidth"),
]


@pytest.mark.parametrize("extra,field,shown", BAD, ids=[b[1] + ":" + b[2] for b in BAD])
def test_bad_input_exits_2_naming_the_field(extra, field, shown):
    res = invoke([*SMALL, *extra])
    assert res.exit_code == 2, res.output
    assert f"{field}:" in res.stderr and shown in res.stderr
    assert "Traceback" not in res.output


@pytest.mark.parametrize(
    "content,shown",
    [
        ("src,dst,bytes\nhb00-gpu0,hb99-gpu0,1\n", "hb99-gpu0"),
        ("src,dst,bytes\n0,5000,1\n", "5000"),
        ("src,dst,bytes\n0,1,-1\n", "-1"),
        ("a,b,c\n0,1,1\n", "src,dst,bytes"),
        ("src,dst,bytes\n", "no GPU pair"),
    ],
)
def test_bad_matrix(tmp_path, content, shown):
    m = tmp_path / "m.csv"
    m.write_text(content)
    res = invoke([*SMALL, "--pattern", f"matrix:{m}"])
    assert res.exit_code == 2 and "pattern:" in res.stderr and shown in res.stderr, res.output


def test_huge_matrix_is_refused_before_reading(tmp_path):
    m = tmp_path / "huge.csv"
    with open(m, "wb") as fh:
        fh.truncate(300 << 20)  # sparse: no disk used, refused by its size
    res = invoke([*SMALL, "--pattern", f"matrix:{m}"])
    assert res.exit_code == 2 and "pattern:" in res.stderr and "MiB" in res.stderr, res.output
    os.remove(m)
