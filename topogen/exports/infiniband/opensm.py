"""``<arch>/opensm/<subnet>/``: OpenSM's partitions, ftree root and compute-node files per InfiniBand subnet.

One folder per file of the ibnetdiscover export (same subnet names), holding
``opensm.conf``, ``partitions.conf``, ``root_guids.conf`` and ``cn_guids.conf``
(a one-switch subnet: no root or CN file). What each holds:
:mod:`topogen.exports.infiniband.opensm_files`. An InfiniBand storage fabric (spec ``networks:``)
gets ``storage/`` (:mod:`topogen.exports.infiniband.storage`).
"""

from __future__ import annotations

from pathlib import Path

from topogen.config.technology import writes
from topogen.exports.infiniband import ibnetdiscover, storage as storage_ib
from topogen.exports.infiniband import opensm_files as opensm
from topogen.exports.files import arch_dir, open_output


def export(ctx, dest: Path) -> list[Path]:
    paths: list[Path] = []
    for arch, fabric in ctx.fabrics.items():
        if not writes(ctx, arch, "opensm"):
            continue  # an Ethernet fabric: no subnet manager
        for sub in ibnetdiscover.subnets(fabric):
            d = arch_dir(dest, arch, "opensm", sub.name)
            sg = opensm.subnet_guids(fabric, sub)
            parts = {"opensm.conf": [opensm.conf_text(fabric, sg)], "partitions.conf": opensm.partitions_text(fabric, sg)}
            if sg.fat_tree:
                parts["root_guids.conf"] = [opensm.root_text(fabric, sg)]
                parts["cn_guids.conf"] = opensm.cn_text(fabric, sg)
            for name, pieces in parts.items():
                with open_output(d / name, newline="\n") as fh:
                    for text in pieces:
                        fh.write(text)
                paths.append(d / name)
    return paths + storage_ib.export_opensm(ctx, dest)
