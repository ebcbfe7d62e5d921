"""bench/bench.py: it runs, prints its tables, and judges the issue's targets from the figures it is given.

No timing is asserted: the targets are checked on made-up rows, the runs only
for their shape (a figure, not a speed).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench.py"
spec = importlib.util.spec_from_file_location("bench", BENCH)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def run(*args: str) -> str:
    res = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, check=True)
    return res.stdout


def table(out: str) -> list[dict[str, str]]:
    lines = [ln for ln in out.splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in ln.strip("|").split("|")))) for ln in lines[1:]]


def test_phase_table_times_every_build_phase():
    rows = table(run("--gpus", "512", "--arch", "rail-optimized,rail-only"))
    assert [(r["gpus"], r["arch"]) for r in rows] == [("512", "rail-optimized"), ("512", "rail-only")]
    for r in rows:
        for col in ("generate_s", "validate_s", "layout_s", "bom_s", "summary_s", "build_s", "validate_cpu_us_per_cable", "peak_rss_mb"):
            assert float(r[col]) >= 0
        assert float(r["build_s"]) >= float(r["validate_s"])


def test_export_table_has_the_csv_ratio_for_each_jobs_value():
    rows = table(run("--gpus", "512", "--arch", "both", "--exports", "cabling", "--jobs", "1,2"))
    assert [(r["arch"], r["jobs"]) for r in rows] == [("both", "1"), ("both", "2")]
    for r in rows:
        assert float(r["x_csv"]) > 0 and float(r["build_and_export_s"]) > 0 and float(r["csv_dump_s"]) >= 0


def row(**kw):
    return {"jobs": 2, "x_csv": 1.0, **kw}


def test_targets_are_judged_from_the_rows():
    rows = [
        row(gpus=131072, arch="both", exports="all", build_and_export_s=9.5, wall_s=12.0, peak_rss_mb=390.0),
        row(gpus=1048576, arch="rail-only", exports="all", build_and_export_s=61.0, wall_s=63.0, peak_rss_mb=1500.0),
        row(gpus=131072, arch="both", exports="cabling", x_csv=1.6, wall_s=1, peak_rss_mb=1),
        *(row(gpus=g, arch="rail-optimized", validate_cpu_us_per_cable=u) for g, u in ((131072, 0.5), (1048576, 0.58), (2097152, 0.55))),
        *(row(gpus=g, arch="rail-only", validate_cpu_us_per_cable=u) for g, u in ((131072, 0.5), (2097152, 0.7))),
    ]
    lines = bench.target_lines(rows)
    assert len(lines) == 5
    assert lines[0].startswith("target 131,072 GPUs") and lines[0].endswith(": met")
    assert "rail-only" in lines[1] and lines[1].endswith("NOT met")  # wall over 60 s
    assert "1.60x" in lines[2] and lines[2].endswith("NOT met")
    flat = {ln.split(", ")[1].split(":")[0]: ln for ln in lines[3:]}
    assert flat["rail-optimized"].endswith("1.16x: met")
    assert flat["rail-only"].endswith("1.40x: NOT met")
    # a grid without both ends of the range says nothing about flatness
    assert bench.target_lines(rows[3:5]) == []


def test_search_bench_screens_and_builds_on_every_executor():
    out = run("--search", "--search-points", "300", "--search-builds", "2", "--search-gpus", "1024", "--search-executors", "local-1,local-2,dask")
    tables = [t for t in out.split("\n\n") if t.lstrip().startswith("| ")]
    screened = table(tables[0])
    assert screened[0]["designs"] == "300" and float(screened[0]["screen_s"]) > 0
    built = table(tables[1])
    assert [r["executor"] for r in built] == ["local, 1 process", "local, 2 processes", "dask, 2 workers"]
    assert all(r["builds"] == "2" and float(r["wall_s"]) > 0 for r in built)


def test_traffic_rows_take_queue_pairs_per_pair():
    """``--routing ecmp:4`` is ``simulate --flows-per-pair 4``: four flows per network pair."""
    rows = table(run("--gpus", "512", "--arch", "rail-optimized", "--traffic", "permutation", "--routing", "ecmp:4,ecmp"))
    by = {r["routing"]: r for r in rows}
    assert by["ecmp:4"]["routed"] == "ecmp"
    assert int(by["ecmp:4"]["flows"].replace(",", "")) > 3 * int(by["ecmp"]["flows"].replace(",", ""))


def test_day0_formats_against_a_bare_write_of_the_same_files():
    """bench/config.py --formats: each format's files written again by a bare loop; the ratio and the target line follow."""
    config = BENCH.parent / "config.py"
    res = subprocess.run([sys.executable, str(config), "--gpus", "256", "--hb-domain", "8", "--radix", "16", "--arch", "rail-optimized", "--formats", "frr,sonic,addressing"], capture_output=True, text=True, check=True)
    rows = table(res.stdout)
    assert [r["format"] for r in rows] == ["frr", "sonic", "addressing"]
    for r in rows:
        e, b, ratio = float(r["export_s"]), float(r["bare_s"]), float(r["ratio"])  # printed to 0.01
        assert int(r["files"].replace(",", "")) >= 1 and b >= 0 and ratio > 0
        assert (e - 0.005) / (b + 0.005) - 0.005 <= ratio  # the ratio is export over bare (of the unrounded times)
        if b >= 0.01:
            assert ratio <= (e + 0.005) / (b - 0.005) + 0.005
    assert rows[0]["files"] == rows[1]["files"]  # one FRR and one SONiC file per switch
    targets = [ln for ln in res.stdout.splitlines() if ln.startswith("target ")]
    assert len(targets) == 3 and all("within 2.5x of a bare write" in t for t in targets)
