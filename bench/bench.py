"""Benchmark: wall time, CPU time and peak memory of topogen at real scale.

Each case runs in its own Python process (under ``/usr/bin/time -v`` when it
exists), ``--repeat`` times, in rounds of every case (alternately forward and
backward); the table shows medians (peak memory: the largest).
Prints a Markdown table (paste it into the README), after a line giving the machine's
speed at the start and at the end on three fixed workloads (:func:`machine_speed`), so
figures from different days compare.

    .venv/bin/python bench/bench.py                          # phases in memory, default grid
    .venv/bin/python bench/bench.py --gpus 131072,262144,524288,1048576,2097152   # validation per cable up to 2M GPUs
    .venv/bin/python bench/bench.py --gpus 131072 --arch both --exports all --jobs 2,1
    .venv/bin/python bench/bench.py --gpus 131072 --arch rail-optimized,rail-only,both --exports cabling
    .venv/bin/python bench/bench.py --gpus 1048576 --exports all --jobs 2
    .venv/bin/python bench/bench.py --million                # also 1,048,576 GPUs
    .venv/bin/python bench/bench.py --shares --gpus 131072 --arch both   # CPU per exporter
    .venv/bin/python bench/bench.py --targets                # every case of the issue's targets: met / NOT met
    .venv/bin/python bench/bench.py --gpus 131072,2097152 --memory default   # without the program's memory policy
    .venv/bin/python bench/bench.py --search                 # topogen search: 10,752 designs screened; 200 builds of 131,072 GPUs, local and on Dask
    .venv/bin/python bench/bench.py --gpus 16384,131072 --traffic ring-allreduce,permutation,bisection --routing ecmp,spray   # topogen simulate
    .venv/bin/python bench/bench.py --gpus 131072 --arch rail-optimized --traffic permutation --routing ecmp:4   # simulate --flows-per-pair 4
    .venv/bin/python bench/bench.py --gpus 131072 --arch both --exports all --build-traffic   # topogen build --traffic

Each case runs as the ``topogen`` program does: with its memory policy
(``topogen.util.memory``: large blocks from the heap during the build's phases, glibc's
usual allocation again before the exporters); ``--memory default`` leaves the
allocator alone.

Columns:

* ``generate_s``, ``validate_s``, ``layout_s``, ``bom_s``, ``summary_s``: the
  phases of ``pipeline.build`` (one architecture per case), timed through its
  progress callback; ``build_s``: all of it (with the closed form and the
  catalog check). Validation is given the generated wiring as the spec's own,
  as ``build`` does. ``validate_cpu_us_per_cable`` is validation's CPU time
  per cable (CPU, not wall: it holds on a machine busy with other work);
  ``validate_sys_us_per_cable`` the part of it spent in the kernel, mostly
  giving the process fresh pages (on a virtual machine, pages first touched
  cost far more than in-process work on them).
* with ``--exports``: ``build_and_export_s``, the whole build (every phase,
  every architecture of the case) plus the chosen exporters writing to a
  temporary directory (``--jobs`` worker processes), timed inside the process;
  ``csv_dump_s``, a bare ``csv.writer`` dump of the same cabling rows (every
  column cabling.csv holds: read back from the build's files when it wrote
  them, else the 12 wiring columns; rows made beforehand, so only the
  writing is timed) in the same process; ``x_csv``
  their ratio (the issue's yardstick: a cabling-only build should be near 1).
* ``wall_s``, ``cpu_s`` (user + system, worker processes included) and
  ``peak_rss_mb`` of the whole process as ``/usr/bin/time`` reports them (or
  ``resource`` without it). Peak RSS is the largest single process: a worker
  shares the parent's pages copy-on-write, so summing processes would
  double-count them.

* with ``--traffic``: ``topogen simulate``'s work for one pattern and routing
  on the generated wiring (one architecture): ``generate_s`` the wiring,
  ``simulate_s`` the rest (flow network, pattern, routing, max-min rates,
  busiest links and tiers); ``flows``, ``aggregation`` (what a flow stands
  for: ``gpu-pair``, ``leaf-pair``, ``leaf-group-pair``), ``routed`` (the
  routing used: an aggregated all-to-all is sprayed) and ``min_rate_fraction``
  say what was computed. Target: every 131,072-GPU case within
  ``TRAFFIC_131K_CPU_S`` of CPU and ``TRAFFIC_131K_MB`` (CPU, not wall: the
  machine is shared).
* with ``--build-traffic``: the build as ``topogen build --traffic`` runs it
  (the spec gets ``hb_bandwidth_gbps: 7200`` so the all-to-all runs).

After the tables, one line per issue target whose case ran: the figure, the
target, ``met`` or ``NOT met``. The export targets are judged on
``build_and_export_s`` (what ``topogen build`` does; the process's ``wall_s``
also holds the bench's own csv dump and clean-up) and on ``peak_rss_mb``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


# bench column -> the pipeline.build phase it times (the names build() reports to its progress callback)
PHASES = {"generate_s": "wiring", "validate_s": "validation", "layout_s": "layout", "bom_s": "bill of materials", "summary_s": "analyses and summary"}


def one(n: int, k: int, radix: int, arch: str, exports: str | None, jobs: int, memory: str = "program", traffic: bool = False) -> dict:
    """Run the phases for one case in this process and return the figures (``traffic``: as ``build --traffic``)."""
    from topogen import pipeline
    from topogen.spec.cluster import build_spec

    extra = {"hb_bandwidth_gbps": 7200} if traffic else {}  # the all-to-all and the permutation cross the HB domain
    spec = build_spec({"name": f"bench-{n}", "gpus": n, "hb_domain": k, "radix": radix, "arch": arch, **extra})
    row: dict = {"gpus": n, "hb_domain": k, "radix": radix, "arch": arch}
    if not exports:
        # pipeline.build, timed phase by phase through its progress callback
        marks: list[tuple[str, float, float, float]] = []

        def mark(phase: str) -> None:
            ru = resource.getrusage(resource.RUSAGE_SELF)
            marks.append((phase, time.perf_counter(), ru.ru_utime, ru.ru_stime))

        ctx = pipeline.build(spec, progress=mark, traffic=traffic)
        mark("end")
        spent = {a[0]: (b[1] - a[1], (b[2] - a[2]) + (b[3] - a[3]), b[3] - a[3]) for a, b in zip(marks, marks[1:])}
        fabric = ctx.fabrics[arch]
        row.update(switches=len(fabric.switches), links=len(fabric.links), tiers=fabric.tiers, valid=ctx.valid)
        for col, phase in PHASES.items():
            row[col] = spent[phase][0]
        row["build_s"] = marks[-1][1] - marks[0][1]
        row["validate_cpu_us_per_cable"] = 1e6 * spent["validation"][1] / max(1, len(fabric.links))
        row["validate_sys_us_per_cable"] = 1e6 * spent["validation"][2] / max(1, len(fabric.links))  # of it, the kernel's (mostly providing fresh pages)
        return row
    formats = pipeline.resolve_formats(exports)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        ctx = pipeline.build(spec, traffic=traffic)
        if memory == "program":
            from topogen.util.memory import usual_allocation

            usual_allocation()  # as topogen build does before its exporters
        pipeline.write_outputs(ctx, Path(tmp) / "out", pipeline.export_formats(ctx, formats), jobs=jobs)
        row["build_and_export_s"] = time.perf_counter() - t0
        row["output_mb"] = sum(p.stat().st_size for p in (Path(tmp) / "out").rglob("*") if p.is_file()) / 1e6
        row["csv_dump_s"] = csv_dump(ctx, Path(tmp) / "dump.csv", Path(tmp) / "out")
    row["x_csv"] = row["build_and_export_s"] / row["csv_dump_s"]
    row["switches"] = sum(len(f.switches) for f in ctx.fabrics.values())
    row["links"] = sum(len(f.links) for f in ctx.fabrics.values())
    row["tiers"] = "/".join(str(f.tiers) for f in ctx.fabrics.values())
    row["exports"] = exports + (" + traffic" if traffic else "")
    row["jobs"] = jobs
    return row


def one_traffic(n: int, k: int, radix: int, arch: str, pattern: str, routing: str) -> dict:
    """One ``topogen simulate`` run (generated wiring, one pattern and routing) in this process."""
    from topogen.fabric import clos
    from topogen.spec.cluster import build_spec
    from topogen.traffic import patterns, simulate

    spec = build_spec({"name": f"bench-{n}", "gpus": n, "hb_domain": k, "radix": radix, "arch": arch})
    t0 = time.perf_counter()
    fabric = clos.generate(spec, arch)
    t1 = time.perf_counter()
    how, _, fpp = routing.partition(":")  # ecmp:4 is --routing ecmp --flows-per-pair 4
    res = simulate.run(fabric, patterns.parse(pattern), how, 7200.0, flows_per_pair=int(fpp or 1))
    t2 = time.perf_counter()
    return {"gpus": n, "hb_domain": k, "radix": radix, "arch": arch, "tiers": fabric.tiers, "pattern": pattern, "routing": routing, "routed": res.routing, "aggregation": res.aggregation, "flows": res.flows, "min_rate_fraction": res.min_rate_fraction, "generate_s": t1 - t0, "simulate_s": t2 - t1}


def shares(n: int, k: int, radix: int, arch: str, memory: str = "program") -> str:
    """Each exporter run alone, one after another, in this process: CPU seconds and share (Markdown)."""
    from topogen import pipeline
    from topogen.exports import EXPORTERS
    from topogen.spec.cluster import build_spec

    spec = build_spec({"name": f"bench-{n}", "gpus": n, "hb_domain": k, "radix": radix, "arch": arch})
    c0 = time.process_time()
    ctx = pipeline.build(spec)
    build_cpu = time.process_time() - c0
    if memory == "program":
        from topogen.util.memory import usual_allocation

        usual_allocation()  # as topogen build does before its exporters
    cpu = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in pipeline.export_formats(ctx, list(EXPORTERS)):
            c0 = time.process_time()
            EXPORTERS[name](ctx, Path(tmp))
            cpu[name] = time.process_time() - c0
    total = sum(cpu.values())
    lines = [f"{n:,} GPUs, {arch}: build {build_cpu:.2f} CPU-s, exporters {total:.2f} CPU-s (child processes such as dot not counted)", "", "| exporter | CPU s | share |", "|---|---|---|"]
    lines += [f"| {k} | {v:.2f} | {100 * v / total:.1f} % |" for k, v in sorted(cpu.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines)


def csv_dump(ctx, path: Path, out: Path | None = None) -> float:
    """Seconds ``csv.writer`` takes to write the cabling rows of every architecture, rows made beforehand.

    The rows are those of the build's ``<arch>/cabling.csv`` under ``out``
    (every column: wiring, floor, labels), read back; without those files, the
    wiring columns (:func:`topogen.exports.installers.cabling.generate_rows`). They are
    made a chunk at a time (untimed), 8,192 rows, so the dump adds little to
    the process's peak memory; only ``writerows`` and the file's writes count.
    """
    from itertools import islice

    from topogen.exports.installers import cabling
    from topogen.fabric.model import CHUNK

    files = [out / arch / "cabling.csv" for arch in ctx.fabrics] if out is not None else []
    written = bool(files) and all(f.exists() for f in files)
    spent = 0.0
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        if not written:
            w.writerow(cabling.COLUMNS)
        for i, fabric in enumerate(ctx.fabrics.values()):
            src = open(files[i], newline="", encoding="utf-8") if written else None
            rows = csv.reader(src) if src is not None else cabling.generate_rows(fabric)
            if src is not None and i:
                next(rows)  # one header
            while chunk := list(islice(rows, CHUNK // 8)):  # small chunks: the dump adds little to the peak
                t0 = time.perf_counter()
                w.writerows(chunk)
                spent += time.perf_counter() - t0
            if src is not None:
                src.close()
        t0 = time.perf_counter()
        fh.flush()
    return spent + time.perf_counter() - t0


TIME_V = {"wall_s": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", "user": r"User time \(seconds\): (\S+)", "sys": r"System time \(seconds\): (\S+)", "rss_kb": r"Maximum resident set size \(kbytes\): (\d+)"}


def run_case(cmd: list[str]) -> dict | None:
    """One run of a case in a fresh process; its JSON row plus wall, CPU and peak RSS of the process."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    gnu_time = shutil.which("time") if Path("/usr/bin/time").exists() else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run((["/usr/bin/time", "-v"] if gnu_time else []) + cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if res.returncode:
        print(f"case failed: {' '.join(cmd)}\n{res.stderr}", file=sys.stderr)
        return None
    row = json.loads(res.stdout.strip().splitlines()[-1])
    if gnu_time:
        got = {k: re.search(rx, res.stderr).group(1) for k, rx in TIME_V.items()}
        parts = [float(x) for x in got["wall_s"].split(":")]
        row["wall_s"] = sum(p * 60**i for i, p in enumerate(reversed(parts)))
        row["cpu_s"] = float(got["user"]) + float(got["sys"])
        row["peak_rss_mb"] = int(got["rss_kb"]) / 1024
    else:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        row["wall_s"] = wall
        row["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        row["peak_rss_mb"] = after.ru_maxrss / 1024
    return row


def median_row(runs: list[dict]) -> dict:
    out = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, float):
            out[key] = (max if key == "peak_rss_mb" else statistics.median)(r[key] for r in runs)
    out["runs"] = len(runs)
    return out


def fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


# The targets (issue 12), checked on the rows of any run that holds their case.
WALL_131K_S, PEAK_131K_MB = 10.0, 400.0  # 131,072 GPUs, both architectures, every export
WALL_1M_S, PEAK_1M_MB = 60.0, 2048.0  # 1,048,576 GPUs, one architecture, every export
X_CSV_CABLING = 1.5  # cabling-only build against the bare csv dump, >= 131,072 GPUs
FLAT_VALIDATE = 1.2  # validation CPU per cable, largest over smallest, 131,072 .. 2,097,152 GPUs
# issue 22: topogen simulate at 131,072 GPUs, "seconds, not minutes" (CPU: the machine is shared), in linear memory
TRAFFIC_131K_CPU_S, TRAFFIC_131K_MB = 30.0, 2048.0

# --targets: every case the targets need, (gpus, arch, exports); each runs in its own process
TARGET_CASES = [
    (131072, "rail-optimized", None),
    (2097152, "rail-optimized", None),
    (131072, "rail-only", None),
    (2097152, "rail-only", None),
    (131072, "both", "cabling"),
    (131072, "both", "all"),
    (1048576, "rail-optimized", "all"),
    (1048576, "rail-only", "all"),
]


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def target_lines(rows: list[dict]) -> list[str]:
    """One line per target whose case is among ``rows``: the figure, the target, met or not."""
    out = []
    for r in rows:
        if r.get("exports") == "all" and r["gpus"] == 131072 and r["arch"] == "both":
            ok = r["build_and_export_s"] <= WALL_131K_S and r["peak_rss_mb"] <= PEAK_131K_MB
            out.append(f"target 131,072 GPUs, both architectures, every export (jobs {r['jobs']}): <= {WALL_131K_S:g} s wall, <= {PEAK_131K_MB:g} MB peak; measured {r['build_and_export_s']:.2f} s, {r['peak_rss_mb']:.0f} MB: {met(ok)}")
        if r.get("exports") == "all" and r["gpus"] == 1048576 and r["arch"] != "both":
            ok = r["build_and_export_s"] <= WALL_1M_S and r["peak_rss_mb"] <= PEAK_1M_MB
            out.append(f"target 1,048,576 GPUs, {r['arch']}, every export (jobs {r['jobs']}): <= {WALL_1M_S:g} s wall, <= {PEAK_1M_MB:g} MB peak; measured {r['build_and_export_s']:.2f} s, {r['peak_rss_mb']:.0f} MB: {met(ok)}")
        if r.get("exports") == "cabling" and r["gpus"] >= 131072:
            out.append(f"target cabling-only build within {X_CSV_CABLING:g}x the bare csv dump, {r['gpus']:,} GPUs, {r['arch']}: measured {r['x_csv']:.2f}x: {met(r['x_csv'] <= X_CSV_CABLING)}")
        if "simulate_s" in r and r["gpus"] == 131072:
            ok = r["cpu_s"] <= TRAFFIC_131K_CPU_S and r["peak_rss_mb"] <= TRAFFIC_131K_MB
            out.append(f"target simulate 131,072 GPUs, {r['arch']}, {r['pattern']} {r['routing']}: <= {TRAFFIC_131K_CPU_S:g} s CPU, <= {TRAFFIC_131K_MB:g} MB peak; measured {r['cpu_s']:.2f} s CPU ({r['wall_s']:.2f} s wall), {r['peak_rss_mb']:.0f} MB: {met(ok)}")
    phase = [r for r in rows if "simulate_s" not in r and not r.get("exports") and 131072 <= r["gpus"] <= 2097152]
    for arch in sorted({r["arch"] for r in phase}):
        mine = sorted((r for r in phase if r["arch"] == arch), key=lambda r: r["gpus"])
        if len(mine) >= 2 and mine[0]["gpus"] == 131072 and mine[-1]["gpus"] == 2097152:
            us = [r["validate_cpu_us_per_cable"] for r in mine]
            x = max(us) / min(us)
            out.append(
                f"target validation CPU per cable flat (within {FLAT_VALIDATE:g}x) from 131,072 to 2,097,152 GPUs, {arch}: "
                + ", ".join(f"{r['gpus']:,}: {u:.2f} us" for r, u in zip(mine, us))
                + f"; largest/smallest {x:.2f}x: {met(x <= FLAT_VALIDATE)}"
            )
    return out


def print_table(rows: list[dict], exports: bool) -> None:
    if rows and "simulate_s" in rows[0]:
        cols = ["gpus", "arch", "tiers", "pattern", "routing", "routed", "aggregation", "flows", "min_rate_fraction", "generate_s", "simulate_s"]
    elif exports:
        cols = ["gpus", "arch", "tiers", "switches", "links", "exports", "jobs", "build_and_export_s", "csv_dump_s", "x_csv", "output_mb"]
    else:
        cols = ["gpus", "arch", "tiers", "switches", "links", *PHASES, "build_s", "validate_cpu_us_per_cable", "validate_sys_us_per_cable"]
    cols += ["wall_s", "cpu_s", "peak_rss_mb"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(fmt(r.get(c), 1 if c.endswith("_mb") else 2) for c in cols) + " |")


def case_command(n: int, arch: str, exports: str | None, jobs: int, args, traffic: tuple[str, str] | None = None) -> list[str]:
    """The command that runs one case once, in a fresh process."""
    cmd = [sys.executable, __file__, "--one", f"{n}:{arch}", "--hb-domain", str(args.hb_domain), "--radix", str(args.radix), "--jobs", str(jobs), "--memory", args.memory]
    if traffic:
        cmd += ["--traffic", traffic[0], "--routing", traffic[1]]
    if args.build_traffic:
        cmd += ["--build-traffic"]
    if exports:
        cmd += ["--exports", exports]
    return cmd


def cases(specs: list[tuple[int, str, str | None, int]], args, repeat: int) -> list[dict]:
    """Median row of each case over ``repeat`` rounds.

    A round runs every case once, each in a fresh process; rounds alternate
    forward and backward order, so a drift in the machine's speed during the
    run (a virtual machine's host load) falls on every case alike instead of
    on the cases that happened to run last.
    """
    cmds = [case_command(*c[:4], args, *c[4:]) for c in specs]
    runs: list[list[dict]] = [[] for _ in cmds]
    for r in range(repeat):
        order = range(len(cmds)) if r % 2 == 0 else reversed(range(len(cmds)))
        for i in order:
            row = run_case(cmds[i])
            if row is not None:
                runs[i].append(row)
    return [median_row(x) for x in runs if x]


def machine_speed() -> str:
    """This machine's speed on three fixed workloads, so tables from different days (or machines) compare.

    A pure-Python loop (the exporters' formatting), SHA-256 (the manifest's hashes) and a numpy sort
    (validation): on a virtual machine they vary with the host's load, by 2-3x from day to day here.
    """
    import hashlib

    import numpy as np

    t = time.perf_counter()
    s = 0
    for i in range(5_000_000):
        s += i
    loop = time.perf_counter() - t
    data = bytes(range(256)) * (1 << 18)  # 64 MiB
    t = time.perf_counter()
    hashlib.sha256(data).digest()
    sha = len(data) / (time.perf_counter() - t) / 1e9
    x = np.random.default_rng(0).integers(0, 1 << 62, 8_000_000)
    t = time.perf_counter()
    x.sort()
    sort = time.perf_counter() - t
    return f"python loop of 5M adds {loop:.2f} s, sha256 {sha:.2f} GB/s, numpy sort of 8M int64 {sort:.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", default="8192,32768,65536,131072", help="comma-separated GPU counts")
    ap.add_argument("--hb-domain", type=int, default=8)
    ap.add_argument("--radix", type=int, default=64)
    ap.add_argument("--arch", default="rail-optimized,rail-only", help="comma-separated cases; 'both' builds both in one process")
    ap.add_argument("--exports", default=None, help="build and write these formats ('all' for every exporter)")
    ap.add_argument("--jobs", default="1", help="exporter worker processes (build --jobs); a comma-separated list runs each")
    ap.add_argument("--repeat", type=int, default=1, help="runs per case; the table shows medians")
    ap.add_argument("--million", action="store_true", help="add 1,048,576 GPUs")
    ap.add_argument("--shares", action="store_true", help="time each exporter alone (CPU) for the first --gpus and --arch, in this process")
    ap.add_argument("--targets", action="store_true", help="run every case of the issue's targets (jobs: the first --jobs, 2 by default) and say which are met")
    ap.add_argument("--memory", choices=("program", "default"), default="program", help="program: the topogen program's memory policy (topogen.util.memory: large arrays from the heap, reused); default: the allocator's defaults")
    ap.add_argument("--search", action="store_true", help="benchmark topogen search instead (bench/search_bench.py): screening, and explicit builds per executor")
    ap.add_argument("--search-points", type=int, default=10_752, help="designs screened (the space holds 10,752)")
    ap.add_argument("--search-builds", type=int, default=200, help="explicit builds per executor")
    ap.add_argument("--search-gpus", type=int, default=131072, help="GPUs of each explicit build")
    ap.add_argument("--search-executors", default="local-1,local-2,dask", help="comma-separated: local-N (N worker processes), dask (a scheduler and two workers on 127.0.0.1)")
    ap.add_argument("--traffic", help="time topogen simulate instead: comma-separated patterns (ring-allreduce, permutation, bisection, shift:S, alltoall)")
    ap.add_argument("--routing", default="ecmp,spray", help="with --traffic: comma-separated routings; ROUTING:Q runs Q flows per pair (ecmp:4 is simulate --flows-per-pair 4)")
    ap.add_argument("--build-traffic", action="store_true", help="build as topogen build --traffic does (the collectives simulated on each wiring: Traffic sheet, utilisation plots)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.search:
        import search_bench

        search_bench.main(args.search_points, args.search_builds, args.search_gpus, args.search_executors.split(","))
        return
    if args.memory == "program" and (args.one or args.shares):
        from topogen.util.memory import reuse_freed_memory

        reuse_freed_memory()  # as the topogen program does (topogen/__main__.py)
    if args.shares:
        print(shares(int(args.gpus.split(",")[0]), args.hb_domain, args.radix, args.arch.split(",")[0], args.memory))
        return
    if args.one and args.traffic:
        n, arch = args.one.split(":")
        print(json.dumps(one_traffic(int(n), args.hb_domain, args.radix, arch, args.traffic, args.routing)))
        return
    if args.one:
        n, arch = args.one.split(":")
        print(json.dumps(one(int(n), args.hb_domain, args.radix, arch, args.exports, int(args.jobs), args.memory, args.build_traffic)))
        return
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    speed0 = machine_speed()
    jobs = [int(x) for x in args.jobs.split(",")]
    if args.traffic:
        gpus = [int(x) for x in args.gpus.split(",")]
        rows = cases([(n, arch, None, 1, (p, r)) for n in gpus for arch in args.arch.split(",") for p in args.traffic.split(",") for r in args.routing.split(",")], args, args.repeat)
    elif args.targets:
        tj = jobs[0] if "--jobs" in sys.argv else 2
        rows = cases([(n, arch, ex, tj if ex == "all" else 1) for n, arch, ex in TARGET_CASES], args, args.repeat)
    else:
        gpus = [int(x) for x in args.gpus.split(",")] + ([1048576] if args.million else [])
        rows = cases([(n, arch, args.exports, j) for n in gpus for arch in args.arch.split(",") for j in (jobs if args.exports else jobs[:1])], args, args.repeat)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"K={args.hb_domain}, radix {args.radix}; {os.cpu_count()} CPUs; python {sys.version.split()[0]}; memory policy: {args.memory}; medians of {args.repeat}; load average {load0:.1f} at the start, {load:.1f} at the end")
    print(f"machine speed at the start: {speed0}; at the end: {machine_speed()}")
    for exports in (False, True):
        part = [r for r in rows if bool(r.get("exports")) == exports]
        if part:
            print_table(part, exports)
            print()
    for line in target_lines(rows):
        print(line)


if __name__ == "__main__":
    main()
