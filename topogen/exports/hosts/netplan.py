"""``<arch>/netplan/<nodes>/<node>.yaml`` and ``<node>.nccl.sh``: each compute node's NICs and NCCL variables (:mod:`topogen.config.hosts`).

Folders of ``PER_FOLDER`` nodes (``n00000-00511``), so no folder holds every node. With the
in-band network (spec ``networks:``) each file also holds the node's ``bond0`` (its in-band
address and default route, :mod:`topogen.config.netaddr`).
"""

from __future__ import annotations

from pathlib import Path

from topogen.config import hosts, netaddr
from topogen.exports.files import arch_dir, write_file_text
from topogen.spec import systems

PER_FOLDER = 512


def export(ctx, dest: Path) -> list[Path]:
    paths: list[Path] = []
    plans = getattr(ctx, "network_addresses", None) or {}
    for arch, fabric in ctx.fabrics.items():
        inband = netaddr.node_interfaces(plans[arch], ctx.networks[arch]) if arch in plans else None
        root = arch_dir(dest, arch, "netplan")
        total = hosts.nodes(fabric).nodes
        w = max(5, len(str(total - 1)))
        d = root
        for i, (name, text, sh) in enumerate(hosts.generate_texts(fabric, inband, systems.for_spec(fabric.spec))):
            lo = i - i % PER_FOLDER
            if i == lo:
                d = root / f"n{lo:0{w}d}-{min(lo + PER_FOLDER, total) - 1:0{w}d}"
                d.mkdir(parents=True, exist_ok=True)
            for path, body in ((d / f"{name}.yaml", text), (d / f"{name}.nccl.sh", sh)):
                write_file_text(path, body)
                paths.append(path)
    return paths
