"""Benchmark: the other networks of ``dgx-h100-superpod`` on the floor and in the exporters, at scale.

Builds the spec (rail-optimized) through :func:`topogen.pipeline.build`, then times what this
work adds on top of the compute fabric's phases: the networks' layout
(:func:`topogen.layout.networks.plan_networks`), ``networks-cabling.csv`` with its floor
columns, the NetBox ``networks-*.csv`` files, topology.json and GraphML with every network,
and the four-network diagram's bundles.

    .venv/bin/python bench/networks_exports.py                 # 16,384 and 131,072 GPUs
    .venv/bin/python bench/networks_exports.py --gpus 65536

Prints one Markdown row per size: cables of the other networks, seconds per step. The NetBox,
topology.json and GraphML figures include the compute fabric's part of those files (the
exporter writes both).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from topogen import pipeline
from topogen.exports.graphs import graphml, topology
from topogen.exports.installers import network_cabling
from topogen.exports.netbox import networks as netbox_networks
from topogen.exports.network_view import NetworkView
from topogen.layout.networks import plan_networks
from topogen.spec.cluster import load_spec


def run(gpus: int) -> str:
    arch = "rail-optimized"
    ctx = pipeline.build(load_spec("dgx-h100-superpod", {"gpus": gpus, "arch": arch}))
    n, f, lay = ctx.networks[arch], ctx.fabrics[arch], ctx.layouts[arch]
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        t = time.perf_counter()
        nl = plan_networks(n, lay)
        times["layout"] = time.perf_counter() - t
        t = time.perf_counter()
        network_cabling.write(n, f, d / "networks-cabling.csv", nl)
        times["cabling"] = time.perf_counter() - t
        t = time.perf_counter()
        netbox_networks.export(ctx, d, "devices")
        netbox_networks.export(ctx, d, "interfaces")
        netbox_networks.export(ctx, d, "cables")
        times["netbox (all files)"] = time.perf_counter() - t
        t = time.perf_counter()
        topology.write_topology(f, d / "topology.json", NetworkView(n, f))
        times["topology.json"] = time.perf_counter() - t
        t = time.perf_counter()
        graphml.write_graphml(f, d / "topology.graphml", NetworkView(n, f))
        times["graphml"] = time.perf_counter() - t
        t = time.perf_counter()
        NetworkView(n, f).bundles(f)
        times["diagram bundles"] = time.perf_counter() - t
    return f"| {gpus:,} | {len(n.cables):,} | " + " | ".join(f"{v:.2f}" for v in times.values()) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, action="append", help="GPUs (repeatable); default 16384 and 131072")
    args = ap.parse_args()
    print("| GPUs | other cables | layout s | networks-cabling.csv s | NetBox s | topology.json s | GraphML s | diagram bundles s |")
    print("|---|---|---|---|---|---|---|---|")
    for g in args.gpus or [16384, 131072]:
        print(run(g), flush=True)


if __name__ == "__main__":
    main()
