"""One configuration file per switch under ``<arch>/<format>/<folder>/``: the shared writer of SONiC and NVUE.

Folders per plane, rail (rail-only), role and pod, as the FRR files
(:func:`topogen.config.paths.switch_dirs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

from topogen.config.paths import switch_dirs
from topogen.config.technology import writes
from topogen.exports.files import arch_dir, write_file_text


def write(ctx, dest: Path, fmt: str, filename: Callable[[str], str], texts: Callable[..., Iterator[tuple[int, str]]]) -> list[Path]:
    """Write ``texts(ctx, fabric)``'s ``(switch, text)`` pairs of every architecture whose switches take ``fmt`` (:mod:`topogen.config.technology`); ``filename(switch name)`` names each file."""
    paths: list[Path] = []
    for arch, fabric in ctx.fabrics.items():
        if not writes(ctx, arch, fmt):
            continue
        root = arch_dir(dest, arch, fmt)
        dirs = switch_dirs(fabric)
        made: set[str] = set()
        for s, text in texts(ctx, fabric):
            d = dirs[s]
            if d not in made:
                (root / d).mkdir(parents=True, exist_ok=True)
                made.add(d)
            path = root / d / filename(fabric.switches[s].name)
            write_file_text(path, text)
            paths.append(path)
    return paths
