"""Benchmark: the day-0 configuration phase at scale (the IP/ASN plan, addressing.csv, frr.conf per switch).

    .venv/bin/python bench/config.py                               # 131,072 GPUs, K = 8, 64 ports, both architectures
    .venv/bin/python bench/config.py --gpus 65536,131072 --twice   # ... and a second run compared byte for byte
    .venv/bin/python bench/config.py --formats sonic,nvue,netplan,frr,addressing,air,ipam --arch both   # each day-0 format against a bare write

With ``--formats``: one process per format, the whole build (``pipeline.build``) and the
address plan made before the clock starts, then the format's exporter timed (``export_s``
wall, ``export_cpu_s``); the same files (paths and bytes, read back into memory) are then
written again by a bare loop (``os.makedirs`` per folder, ``open``/``write``/``close`` per
file: ``bare_s``, ``bare_cpu_s``) and ``ratio`` is ``export_s / bare_s`` (``cpu_ratio`` the
same over CPU). Target: every format within ``DAY0_RATIO`` (2.5x) of its bare write.

One process per case (fresh memory, peak RSS of that case). Columns: ``plan_s`` (wall) /
``plan_cpu_s`` for :func:`topogen.config.addressing.plan` (pools checked, every address and
ASN); ``addressing_s`` / ``addressing_cpu_s`` for writing ``addressing.csv``; ``frr_s`` /
``frr_cpu_s`` for writing every ``frr.conf``; ``files``, ``mb`` written; ``peak_rss_mb``;
``sha256`` (first 12 hex) over every file's path and bytes; with ``--twice`` the case runs
again in a new process and ``same`` says whether the bytes matched. The wiring
(``clos.generate``) is built before the clock starts. CPU time is the process's user +
system time: on a machine shared with other work it is the steadier figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def one(n: int, k: int, radix: int, arch: str) -> dict:
    from topogen.fabric import clos
    from topogen.config import addressing
    from topogen.exports.switch_configs import addressing as addressing_csv
    from topogen.exports.switch_configs import frr
    from topogen.spec.cluster import build_spec

    spec = build_spec({"name": f"bench-{n}", "gpus": n, "hb_domain": k, "radix": radix, "arch": arch})
    fabric = clos.generate(spec, arch)

    class Ctx:
        fabrics = {arch: fabric}

    row = {"gpus": n, "arch": arch, "switches": len(fabric.switches), "links": len(fabric.links)}

    def timed(name, fn):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        row[f"{name}_s"], row[f"{name}_cpu_s"] = time.perf_counter() - w, time.process_time() - c
        return out

    timed("plan", lambda: addressing.plan(fabric))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = timed("addressing", lambda: addressing_csv.export(Ctx, root))
        files += timed("frr", lambda: frr.export(Ctx, root))
        h = hashlib.sha256()
        size = 0
        for p in sorted(files):
            data = p.read_bytes()
            size += len(data)
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + data)
    row.update(files=len(files), mb=size / 1e6, sha256=h.hexdigest()[:12], peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return row


DAY0_RATIO = 2.5  # a day-0 format's export against a bare write of the same files and bytes


def one_format(n: int, k: int, radix: int, arch: str, fmt: str) -> dict:
    """One day-0 format's exporter at scale, against a bare write of its files (see the module)."""
    import os

    from topogen import pipeline
    from topogen.config import addressing
    from topogen.exports import EXPORTERS
    from topogen.spec.cluster import build_spec

    spec = build_spec({"name": f"bench-{n}", "gpus": n, "hb_domain": k, "radix": radix, "arch": arch})
    ctx = pipeline.build(spec)
    addressing.check(ctx.fabrics)  # the plan every addressed format shares, made once per build
    row = {"gpus": n, "arch": arch, "format": fmt}
    with tempfile.TemporaryDirectory(prefix="topogen-bench-") as tmp:
        root = Path(tmp) / "export"
        root.mkdir()
        w, c = time.perf_counter(), time.process_time()
        files = EXPORTERS[fmt](ctx, root)
        row["export_s"], row["export_cpu_s"] = time.perf_counter() - w, time.process_time() - c
        data = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in files]
        h = hashlib.sha256()
        for rel, b in sorted(data):
            h.update(rel.encode() + b"\0" + b)
        bare = Path(tmp) / "bare"
        w, c = time.perf_counter(), time.process_time()
        made: set[str] = set()
        for rel, b in data:
            d = os.path.dirname(rel)
            if d not in made:
                os.makedirs(bare / d, exist_ok=True)
                made.add(d)
            with open(bare / rel, "wb") as fh:
                fh.write(b)
        row["bare_s"], row["bare_cpu_s"] = time.perf_counter() - w, time.process_time() - c
    row.update(files=len(data), mb=sum(len(b) for _, b in data) / 1e6, ratio=row["export_s"] / row["bare_s"], cpu_ratio=row["export_cpu_s"] / max(row["bare_cpu_s"], 1e-9), sha256=h.hexdigest()[:12], peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", default="131072")
    ap.add_argument("--hb-domain", type=int, default=8)
    ap.add_argument("--radix", type=int, default=64)
    ap.add_argument("--arch", default="rail-optimized,rail-only")
    ap.add_argument("--twice", action="store_true", help="run each case again in a new process and compare the bytes")
    ap.add_argument("--formats", help="time these day-0 exporters (comma-separated: sonic, nvue, netplan, frr, addressing, air, ipam) against a bare write")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        n, arch, *fmt = args.one.split(":")
        print(json.dumps(one_format(int(n), args.hb_domain, args.radix, arch, fmt[0]) if fmt else one(int(n), args.hb_domain, args.radix, arch)))
        return
    if args.formats:
        cols = ("gpus", "arch", "format", "files", "mb", "export_s", "export_cpu_s", "bare_s", "bare_cpu_s", "ratio", "cpu_ratio", "peak_rss_mb", "sha256")
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        rows = []
        for n in (int(x) for x in args.gpus.split(",")):
            for arch in args.arch.split(","):
                for fmt in args.formats.split(","):
                    cmd = [sys.executable, __file__, "--one", f"{n}:{arch}:{fmt}", "--hb-domain", str(args.hb_domain), "--radix", str(args.radix)]
                    row = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                    rows.append(row)
                    print("| " + " | ".join(f"{row[c]:,.2f}" if isinstance(row[c], float) else (f"{row[c]:,}" if isinstance(row[c], int) else str(row[c])) for c in cols) + " |", flush=True)
        for row in rows:
            ok = row["ratio"] <= DAY0_RATIO
            print(f"target {row['format']} at {row['gpus']:,} GPUs ({row['arch']}): export within {DAY0_RATIO:g}x of a bare write of its {row['files']:,} files; measured {row['ratio']:.2f}x wall ({row['cpu_ratio']:.2f}x CPU): {'met' if ok else 'NOT met'}")
        return
    cols = ("gpus", "arch", "switches", "links", "plan_s", "plan_cpu_s", "addressing_s", "addressing_cpu_s", "frr_s", "frr_cpu_s", "files", "mb", "peak_rss_mb", "sha256") + (("same",) if args.twice else ())
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for n in (int(x) for x in args.gpus.split(",")):
        for arch in args.arch.split(","):
            cmd = [sys.executable, __file__, "--one", f"{n}:{arch}", "--hb-domain", str(args.hb_domain), "--radix", str(args.radix)]
            row = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
            if args.twice:
                again = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                row["same"] = "yes" if again["sha256"] == row["sha256"] else "NO"
            print("| " + " | ".join(f"{row[c]:,.2f}" if isinstance(row[c], float) else (f"{row[c]:,}" if isinstance(row[c], int) else str(row[c])) for c in cols) + " |", flush=True)


if __name__ == "__main__":
    main()
