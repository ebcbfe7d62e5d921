"""Benchmark: OpenSM's routing of one rail-optimized fabric under ibsim, as ``topogen simulate --routing opensm`` runs it.

Each case generates a rail-optimized fabric (K=8) and calls
:func:`topogen.exports.infiniband.opensm_routes.tables` (write the subnet's ibnetdiscover
file, start ibsim, ``opensm -o -R ftree`` once, read the LFT dump back) in
this process, then routes a ``shift:1`` on the tables as the simulation does.
Prints one Markdown row per case: switches, LIDs, the tools' wall time, the
whole wall time, CPU time (this process and the tools), peak RSS of this
process and of the largest tool (opensm or ibsim).

    .venv/bin/python bench/opensm.py                       # 512, 4,096 and 16,384 GPUs at radix 64 (2 and 3 tiers)
    .venv/bin/python bench/opensm.py --cases 32768:64      # GPUS:RADIX, comma-separated

Needs ibsim-utils and opensm. Each case in its own process, so peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one(gpus: int, radix: int) -> dict:
    """Route one fabric and measure it (runs in a child process)."""
    from topogen.exports.infiniband import ibnetdiscover as ib
    from topogen.exports.infiniband import opensm_routes
    from topogen.fabric import clos
    from topogen.spec.cluster import build_spec
    from topogen.traffic import lft, network, flows, patterns

    spec = build_spec({"name": "bench", "gpus": gpus, "hb_domain": 8, "radix": radix, "arch": "rail-optimized"})
    fabric = clos.generate(spec, "rail-optimized")
    sub = ib.subnets(fabric)[0]
    t0 = time.monotonic()
    tables = opensm_routes.tables(fabric, lft.Choice())
    t1 = time.monotonic()
    net = network.build(fabric, 7200.0)
    prs = patterns.pairs(patterns.parse("shift:1"), fabric.gpus, fabric.hb_domain, 0)
    t = flows.build(net, prs, "opensm:ftree", tables=tables)
    t2 = time.monotonic()
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "gpus": gpus,
        "radix": radix,
        "tiers": fabric.tiers,
        "switches": len(fabric.switches),
        "lids": opensm_routes.lids_needed(fabric, sub, 0),
        "engine": tables.engines[sub.name],
        "tools_s": round(tables.seconds, 1),
        "tables_s": round(t1 - t0, 1),
        "walk_s": round(t2 - t1, 2),
        "routed": bool(t.alive.all()),
        "cpu_s": round(me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, 1),
        "rss_mb": me.ru_maxrss // 1024,
        "tool_rss_mb": kids.ru_maxrss // 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="512:64,4096:64,16384:64", help="GPUS:RADIX, comma-separated")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        g, r = (int(x) for x in a.one.split(":"))
        print(json.dumps(one(g, r)))
        return
    cols = ["gpus", "radix", "tiers", "switches", "lids", "engine", "routed", "tools_s", "tables_s", "walk_s", "cpu_s", "rss_mb", "tool_rss_mb"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for case in a.cases.split(","):
        res = subprocess.run([sys.executable, __file__, "--one", case], capture_output=True, text=True, cwd=ROOT)
        if res.returncode:
            print(f"| {case} | failed: {res.stderr.strip().splitlines()[-1:]} |")
            continue
        row = json.loads(res.stdout.strip().splitlines()[-1])
        print("| " + " | ".join(f"{row[c]:,}" if isinstance(row[c], int) and not isinstance(row[c], bool) else str(row[c]) for c in cols) + " |", flush=True)


if __name__ == "__main__":
    main()
