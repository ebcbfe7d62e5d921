"""Benchmark: peak memory of ``topogen build`` and of each of its exporter tasks.

``topogen build`` forks its exporter workers after the build; a worker's resident
size is the parent's pages it touches plus what its task allocates, and the
build's peak RSS is the largest of these processes. This bench builds once, as
the program does (memory policy included), then runs every task of the build
(:func:`topogen.exports.workers.task_list`: one exporter, one architecture, one
part) alone in a freshly forked child, and reports each child's peak RSS (from
``wait4``) and CPU seconds, the parent's RSS at the fork, and their difference:
what that task adds on top of the build.

    .venv/bin/python bench/memory.py                      # 131,072 GPUs, both architectures, default exports
    .venv/bin/python bench/memory.py --gpus 16384 --formats all
    .venv/bin/python bench/memory.py --tasks xlsx,pull-sheets  # only those exporters' tasks
    .venv/bin/python bench/memory.py --whole              # also the whole build under /usr/bin/time -v (--jobs 2)

Prints a Markdown table, tasks largest first, and with ``--whole`` the peak RSS and
CPU seconds of ``topogen build`` itself, against :data:`PEAK_131K_DEFAULT_MB`.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PEAK_131K_DEFAULT_MB = 330.0  # 131,072 GPUs, both architectures, default exports: the figure before the exports of stop 28 (315 MB) and a margin


def rss_mb() -> float:
    """This process's current resident size (``/proc/self/statm``)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def tasks_table(n: int, k: int, radix: int, arch: str, formats: str | None, only: str | None = None) -> list[dict]:
    """Every exporter task of the build run alone in a forked child: its peak RSS and CPU seconds."""
    from topogen import pipeline
    from topogen.exports import workers
    from topogen.spec.cluster import build_spec
    from topogen.util.memory import release_free_memory, reuse_freed_memory, usual_allocation

    reuse_freed_memory()  # as the program does
    spec = build_spec({"name": f"bench-{n}", "gpus": n, "hb_domain": k, "radix": radix, "arch": arch})
    ctx = pipeline.build(spec)
    usual_allocation()
    fmts = pipeline.export_formats(ctx, pipeline.resolve_formats(formats) if formats else pipeline.resolve_formats(None))
    workers._CTX = ctx
    release_free_memory()
    rows = []
    with tempfile.TemporaryDirectory(prefix="topogen-scale-mem-") as tmp:
        for task in workers.task_list(ctx, fmts):
            if only and task[0] not in only.split(","):
                continue
            dest = Path(tmp) / "-".join(x for x in task if x)
            dest.mkdir()
            base = rss_mb()
            pid = os.fork()
            if pid == 0:
                try:
                    workers._export(*task, str(dest))
                    os._exit(0)
                except BaseException:  # noqa: BLE001 - a child reports by its status
                    os._exit(1)
            _, status, ru = os.wait4(pid, 0)
            rows.append({"task": " ".join(x for x in task if x), "status": os.waitstatus_to_exitcode(status), "peak_rss_mb": ru.ru_maxrss / 1024, "parent_mb": base, "added_mb": ru.ru_maxrss / 1024 - base, "cpu_s": ru.ru_utime + ru.ru_stime})
    return rows


def whole(n: int, k: int, radix: int, arch: str, formats: str | None, jobs: int) -> dict:
    """``topogen build`` as a user runs it, under ``/usr/bin/time -v``: CPU seconds and peak RSS."""
    exe = Path(sys.executable).with_name("topogen")
    with tempfile.TemporaryDirectory(prefix="topogen-scale-mem-") as tmp:
        cmd = ["/usr/bin/time", "-v", str(exe), "build", "--gpus", str(n), "--hb-domain", str(k), "--radix", str(radix), "--arch", arch, "--jobs", str(jobs), "--quiet", "--out", str(Path(tmp) / "out")]
        if formats:
            cmd += ["--formats", formats]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(p.stderr[-2000:])
    got = {k: float(re.search(rx, p.stderr).group(1)) for k, rx in {"user": r"User time \(seconds\): (\S+)", "sys": r"System time \(seconds\): (\S+)", "rss": r"Maximum resident set size \(kbytes\): (\d+)"}.items()}
    return {"cpu_s": got["user"] + got["sys"], "peak_rss_mb": got["rss"] / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=131072)
    ap.add_argument("--hb-domain", type=int, default=8)
    ap.add_argument("--radix", type=int, default=64)
    ap.add_argument("--arch", default="both")
    ap.add_argument("--formats", default=None, help="as build --formats (default: the build's default exports)")
    ap.add_argument("--jobs", type=int, default=2, help="for --whole")
    ap.add_argument("--whole", action="store_true", help="also run topogen build under /usr/bin/time -v")
    ap.add_argument("--tasks", default=None, help="only these exporters' tasks (comma-separated)")
    ap.add_argument("--no-tasks", action="store_true", help="only --whole")
    args = ap.parse_args()
    print(f"{args.gpus:,} GPUs, K={args.hb_domain}, radix {args.radix}, {args.arch}, formats {args.formats or 'default'}")
    if not args.no_tasks:
        t0 = time.process_time()
        rows = tasks_table(args.gpus, args.hb_domain, args.radix, args.arch, args.formats, args.tasks)
        print(f"build: {time.process_time() - t0:.2f} CPU-s in this process, RSS after it {rss_mb():.1f} MB, peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MB\n")
        print("| task | peak_rss_mb | parent_mb | added_mb | cpu_s |\n|---|---|---|---|---|")
        for r in sorted(rows, key=lambda r: -r["peak_rss_mb"]):
            flag = "" if r["status"] == 0 else f" (exit {r['status']})"
            print(f"| {r['task']}{flag} | {r['peak_rss_mb']:.1f} | {r['parent_mb']:.1f} | {r['added_mb']:.1f} | {r['cpu_s']:.2f} |")
    if args.whole:
        w = whole(args.gpus, args.hb_domain, args.radix, args.arch, args.formats, args.jobs)
        ok = w["peak_rss_mb"] <= PEAK_131K_DEFAULT_MB
        print(f"\ntopogen build --jobs {args.jobs}: {w['cpu_s']:.2f} CPU-s, peak RSS {w['peak_rss_mb']:.1f} MB")
        if args.gpus == 131072 and args.arch == "both" and not args.formats:
            print(f"target 131,072 GPUs, both architectures, default exports: <= {PEAK_131K_DEFAULT_MB:g} MB peak; measured {w['peak_rss_mb']:.0f} MB: {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
