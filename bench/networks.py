"""Benchmark: the storage, in-band and OOB networks of ``dgx-h100-superpod`` at scale (time, cables).

Plans the networks against the bundled catalog and the compute fabric's switch count, then
times :func:`topogen.fabric.networks.generate`, the closed form and
:func:`topogen.checks.networks.validate_networks`, and checks the closed form equals the wiring.

    .venv/bin/python bench/networks.py                    # 16,384 and 131,072 GPUs
    .venv/bin/python bench/networks.py --gpus 1016 --gpus 65536

Prints one Markdown row per size: nodes, switches and cables per network, seconds per phase.
"""

from __future__ import annotations

import argparse
import time

from topogen.bom import catalog
from topogen.bom import networks as network_bom
from topogen.checks.networks import validate_networks
from topogen.fabric import clos
from topogen.fabric import networks as nw
from topogen.spec.cluster import load_spec


def run(gpus: int) -> str:
    spec = load_spec("dgx-h100-superpod", {"gpus": gpus, "arch": "rail-optimized"})
    hw = catalog.load_catalog(spec.catalog_ref)
    compute = clos.generate(spec, "rail-optimized")
    plan = network_bom.plan_for(spec, hw, len(compute.switches), 4, 16, None)
    t0 = time.perf_counter()
    wired = nw.generate(plan)
    t1 = time.perf_counter()
    closed = nw.closed_form(plan)
    t2 = time.perf_counter()
    findings = validate_networks(wired, {"per_node_GBps": 40})
    t3 = time.perf_counter()
    counts = wired.counts()
    assert counts == closed, "closed form differs from the wiring"
    per = "; ".join(f"{k} {sum(v['switches'].values()):,} sw / {sum(v['cables'].values()):,} cables" for k, v in counts.items())
    return f"| {gpus:,} | {plan.nodes:,} | {per} | {t1 - t0:.2f} | {t2 - t1:.2f} | {t3 - t2:.2f} | {len(findings)} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, action="append", help="GPUs (repeatable); default 16384 and 131072")
    args = ap.parse_args()
    print("| GPUs | nodes | networks | generate s | closed form s | validate s | findings |")
    print("|---|---|---|---|---|---|---|")
    for g in args.gpus or [16384, 131072]:
        print(run(g), flush=True)


if __name__ == "__main__":
    main()
