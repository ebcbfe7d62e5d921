"""``<arch>/air/topology.json``: the fabric as an NVIDIA Air topology (:mod:`topogen.config.air`)."""

from __future__ import annotations

from pathlib import Path

from topogen.config import air
from topogen.config.technology import writes
from topogen.exports.files import arch_dir, open_output


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    for arch, fabric in ctx.fabrics.items():
        if not writes(ctx, arch, "air"):
            continue
        p = arch_dir(dest, arch, "air") / "topology.json"
        with open_output(p, newline="\n") as fh:
            fh.writelines(air.chunks(ctx, fabric))
        paths.append(p)
    return paths
