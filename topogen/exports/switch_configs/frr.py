"""``<arch>/frr/<folder>/<switch>.conf``: FRR's integrated configuration of every switch (:mod:`topogen.config.frr`).

Folders per plane, rail (rail-only), role and pod (:mod:`topogen.config.paths`),
so no folder holds every switch. ``topogen emulate`` boots these files in FRR.
"""

from __future__ import annotations

from pathlib import Path

from topogen.config.frr import generate_texts
from topogen.config.paths import switch_dirs
from topogen.config.technology import writes
from topogen.exports.files import arch_dir, open_output


def export(ctx, dest: Path) -> list[Path]:
    paths: list[Path] = []
    for arch, fabric in ctx.fabrics.items():
        if not writes(ctx, arch, "frr"):
            continue  # an InfiniBand fabric: no BGP
        root = arch_dir(dest, arch, "frr")
        dirs = switch_dirs(fabric)
        made: set[str] = set()
        for s, text in generate_texts(fabric):
            d = dirs[s]
            if d not in made:
                (root / d).mkdir(parents=True, exist_ok=True)
                made.add(d)
            path = root / d / f"{fabric.switches[s].name}.conf"
            with open_output(path) as fh:
                fh.write(text)
            paths.append(path)
    return paths
