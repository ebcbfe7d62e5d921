"""Benchmark: wall time and peak memory of topogen's phases at real scale.

Each case runs in its own Python process so peak RSS (``ru_maxrss``) belongs to
that case alone. Prints a Markdown table (paste it into the README).

    .venv/bin/python bench/bench.py                  # default grid
    .venv/bin/python bench/bench.py --gpus 65536 --exports all
    .venv/bin/python bench/bench.py --million        # also 1,048,576 GPUs

Phases timed: ``generate`` (explicit wiring), ``validate`` (all checks),
``bom`` (bill of materials), ``exports`` (writing the chosen formats to a
temporary directory). A phase whose module is absent is reported as ``-``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def one(n: int, k: int, radix: int, arch: str, exports: str | None) -> dict:
    """Run the phases for one case in this process and return the figures."""
    from topogen import clos, pipeline
    from topogen.spec import build_spec

    spec = build_spec({"name": f"bench-{n}", "gpus": n, "hb_domain": k, "radix": radix, "arch": arch})
    row: dict = {"gpus": n, "hb_domain": k, "radix": radix, "arch": arch}
    t0 = time.perf_counter()
    fabric = clos.generate(spec, arch)
    row["generate_s"] = time.perf_counter() - t0
    row["switches"] = len(fabric.switches)
    row["links"] = len(fabric.links)
    row["tiers"] = fabric.tiers
    try:
        from topogen import validate
    except ImportError:
        row["validate_s"] = None
    else:
        t0 = time.perf_counter()
        report = validate.validate(fabric)
        row["validate_s"] = time.perf_counter() - t0
        row["valid"] = report.valid
    try:
        from topogen import bom, catalog
    except ImportError:
        row["bom_s"] = None
    else:
        t0 = time.perf_counter()
        cat = catalog.load_catalog(spec.catalog)
        bom.compile_bom(fabric, cat)
        row["bom_s"] = time.perf_counter() - t0
    if exports:
        t0 = time.perf_counter()
        ctx = pipeline.build(spec)
        formats = pipeline.resolve_formats(exports)
        with tempfile.TemporaryDirectory() as tmp:
            pipeline.write_outputs(ctx, Path(tmp) / "out", formats)
            size = sum(p.stat().st_size for p in (Path(tmp) / "out").rglob("*") if p.is_file())
        row["build_and_export_s"] = time.perf_counter() - t0
        row["exports"] = exports
        row["output_mb"] = size / 1e6
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", default="8192,32768,65536,131072", help="comma-separated GPU counts")
    ap.add_argument("--hb-domain", type=int, default=8)
    ap.add_argument("--radix", type=int, default=64)
    ap.add_argument("--arch", default="rail-optimized,rail-only")
    ap.add_argument("--exports", default=None, help="also build+write these formats ('all' for every exporter)")
    ap.add_argument("--million", action="store_true", help="add 1,048,576 GPUs")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        n, arch = args.one.split(":")
        print(json.dumps(one(int(n), args.hb_domain, args.radix, arch, args.exports)))
        return
    gpus = [int(x) for x in args.gpus.split(",")] + ([1048576] if args.million else [])
    rows = []
    for n in gpus:
        for arch in args.arch.split(","):
            cmd = [sys.executable, __file__, "--one", f"{n}:{arch}", "--hb-domain", str(args.hb_domain), "--radix", str(args.radix)]
            if args.exports:
                cmd += ["--exports", args.exports]
            res = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
            if res.returncode:
                print(f"case {n} {arch} failed:\n{res.stderr}", file=sys.stderr)
                continue
            rows.append(json.loads(res.stdout))
    cols = ["gpus", "arch", "tiers", "switches", "links", "generate_s", "validate_s", "bom_s"]
    if args.exports:
        cols += ["exports", "build_and_export_s", "output_mb"]
    cols += ["peak_rss_mb"]
    print(f"K={args.hb_domain}, radix {args.radix}; {os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(fmt(r.get(c), 1 if c.endswith("_mb") else 2) for c in cols) + " |")


if __name__ == "__main__":
    main()
