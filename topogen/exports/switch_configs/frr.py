"""``<arch>/frr/<folder>/<switch>.conf``: FRR's integrated configuration of every switch (:mod:`topogen.config.frr`).

Folders per plane, rail (rail-only), role and pod (:mod:`topogen.config.paths`),
so no folder holds every switch. ``topogen emulate`` boots these files in FRR.
"""

from __future__ import annotations

from pathlib import Path

from topogen.config.frr import generate_texts
from topogen.exports.switch_configs import switch_files


def export(ctx, dest: Path) -> list[Path]:
    return switch_files.write(ctx, dest, "frr", lambda name: f"{name}.conf", lambda ctx, fabric: generate_texts(fabric))
