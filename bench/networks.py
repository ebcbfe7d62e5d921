"""Benchmark: the storage, in-band and OOB networks of ``dgx-h100-superpod`` at scale (time, cables).

Plans the networks against the bundled catalog and the compute fabric's switch count, then
times the wiring with its floor plan (:func:`topogen.layout.networks.wire_and_place`: in a
large hall the model is wired a second time, leaves with their SUs), the closed form,
:func:`topogen.checks.networks.validate_networks` and the priced BOM
(:func:`topogen.bom.networks.network_bom`: media per cable) and the in-band and OOB address
plan (:func:`topogen.config.netaddr.plan`, audited as it is made), and checks the closed form
equals the wiring.

    .venv/bin/python bench/networks.py                    # 16,384 and 131,072 GPUs
    .venv/bin/python bench/networks.py --gpus 1016 --gpus 65536

Prints one Markdown row per size: nodes, switches and cables per network, seconds per phase.
"""

from __future__ import annotations

import argparse
import time

from topogen import layout
from topogen.spec import catalog
from topogen.bom import networks as network_bom
from topogen.checks.networks import validate_networks
from topogen.config import netaddr
from topogen.fabric import clos
from topogen.fabric import networks as nw
from topogen.layout.networks import wire_and_place
from topogen.spec.layout import resolve as resolve_layout
from topogen.spec.cluster import load_spec


def run(gpus: int) -> str:
    spec = load_spec("dgx-h100-superpod", {"gpus": gpus, "arch": "rail-optimized"})
    hw = catalog.load_catalog(spec.catalog_ref)
    compute = clos.generate(spec, "rail-optimized")
    lay = layout.plan(compute)
    per_rack = max(1, resolve_layout(spec.layout, spec.hb_domain, spec.gpus_per_node).gpus_per_rack // spec.gpus_per_node)
    plan = network_bom.plan_for(spec, hw, len(compute.switches), per_rack, 16, None, sum(1 for k in lay.racks.kind if k != "compute"))
    t0 = time.perf_counter()
    wired, nlay = wire_and_place(plan, lay)  # wiring and floor plan (in a large hall: wired twice)
    plan = wired.plan
    t1 = time.perf_counter()
    closed = nw.closed_form(plan)
    t2 = time.perf_counter()
    findings = validate_networks(wired, {"per_node_GBps": 40})
    t3 = time.perf_counter()
    boms = network_bom.network_bom(wired, hw, nlay.length_m)
    t5 = time.perf_counter()
    addrs = netaddr.plan(wired, spec.addressing, "rail-optimized")
    t6 = time.perf_counter()
    assert all(b.cables_priced == b.cable_count for b in boms), "a cable left unpriced"
    cost = sum(b.cost for b in boms)
    counts = wired.counts()
    assert counts == closed, "closed form differs from the wiring"
    per = "; ".join(f"{k} {sum(v['switches'].values()):,} sw / {sum(v['cables'].values()):,} cables" for k, v in counts.items())
    return f"| {gpus:,} | {plan.nodes:,} | {per} | {t1 - t0:.2f} | {t2 - t1:.2f} | {t3 - t2:.2f} | {t5 - t3:.2f} | {len(addrs):,} in {len(addrs.subnets[nw.INBAND]):,} + {len(addrs.subnets[nw.OOB]):,} subnets | {t6 - t5:.2f} | ${cost:,.0f} | {len(findings)} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, action="append", help="GPUs (repeatable); default 16384 and 131072")
    args = ap.parse_args()
    print("| GPUs | nodes | networks | wire + place s | closed form s | validate s | price s | addresses | address s | cost | findings |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for g in args.gpus or [16384, 131072]:
        print(run(g), flush=True)


if __name__ == "__main__":
    main()
