"""Where each switch's configuration file goes: one directory per architecture, subfolders, never one flat folder.

``<arch>/<format>/<dir>/<switch>.<ext>`` with ``<dir>`` from :func:`switch_dirs`:

* ``pl<plane>/`` first when the fabric has several planes;
* rail-only: ``rail<r>/`` (the first rail of a shared switch), each rail's Clos together;
* the role (``leaf``, ``spine``, ``core``, ``tier4``...);
* ``b<block>/`` when the role has more than one pod (block) there; rail-optimized
  leaves use their HB-domain group (``g<group>``, as in their names).

At 131,072 GPUs on 64-port switches no folder holds more than 2,048 files (the
top tier). Every format (FRR, SONiC, NVUE) uses the same folders, so a switch's
files are found alike.
"""

from __future__ import annotations

from collections import Counter


def switch_dirs(fabric) -> list[str]:
    """Relative folder (POSIX) of every switch, indexed by ``dev - gpus``."""
    planes = len({s.plane for s in fabric.switches}) > 1
    keys = []
    for s in fabric.switches:
        parts = [f"pl{s.plane}"] if planes else []
        if fabric.arch == "rail-only":
            parts.append(f"rail{s.group}")
        parts.append(s.role)
        keys.append((tuple(parts), s.block))
    blocks = Counter(k for k, _ in set(keys))
    out = []
    for (parts, block), s in zip(keys, fabric.switches):
        if blocks[parts] > 1:
            letter = "g" if s.tier == 1 and fabric.arch == "rail-optimized" else "b"
            parts = parts + (f"{letter}{block}",)
        out.append("/".join(parts))
    return out
