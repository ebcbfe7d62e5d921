"""Deterministic device and port names.

Devices
    GPU ``hb<domain>-gpu<rank>``, e.g. ``hb0003-gpu7``: rank ``rank`` of HB
    domain ``domain`` (both 0-based, zero-padded to the width of the largest).

    Rail-optimized switches
        ``leaf-g<group>-r<rail>``: the rail switch of one rail in one group of
        HB domains; ``leaf-g<group>-r<first>-<last>`` when rails share it.
        ``<role>-b<block>-<pos>`` for tiers between leaf and top (role spine,
        core, tier4...), ``<role>-<pos>`` for the top tier.
    Rail-only switches
        the same names behind a rail prefix ``rail<r>-`` (``rail3-leaf-02``,
        ``rail3-spine-07``); a single-switch rail is ``rail<r>-leaf``; several
        whole rails on one switch: ``rail<first>-<last>-leaf``.
    With several planes every switch name starts with ``pl<plane>-``.

Nodes (NetBox devices, Slurm nodes; see :class:`NodeNames`)
    ``hb<domain>``: one per HB domain, NIC interfaces ``gpu<rank>-nic<plane>``.

Ports
    GPU NIC ports ``nic<plane>``; switch ports ``p<n>``, 1-based. Below the top
    tier ports ``p1 .. p<radix/2>`` face down and the rest up.
"""

from __future__ import annotations

import re

import numpy as np

GPU_RE = re.compile(r"^hb(\d+)-gpu(\d+)$")
NIC_RE = re.compile(r"^nic(\d+)$")
PORT_RE = re.compile(r"^p(\d+)$")


def width(count: int) -> int:
    """Digits needed to write ``0 .. count-1``."""
    return len(str(max(count - 1, 0)))


class GpuNames:
    """Names of the GPUs of a cluster; formats on demand so 1M GPUs cost no memory."""

    def __init__(self, gpus: int, hb_domain: int):
        self.gpus = gpus
        self.hb = hb_domain
        self.dw = max(2, width(gpus // hb_domain))
        self.rw = width(hb_domain)

    def name(self, gpu: int) -> str:
        d, r = divmod(int(gpu), self.hb)
        return f"hb{d:0{self.dw}d}-gpu{r:0{self.rw}d}"

    def many(self, gpus: np.ndarray) -> np.ndarray:
        """Vectorised names for an array of GPU ids (numpy unicode array)."""
        d, r = np.divmod(np.asarray(gpus, dtype=np.int64), self.hb)
        dpart = np.char.zfill(d.astype(str), self.dw)
        rpart = np.char.zfill(r.astype(str), self.rw)
        return np.char.add(np.char.add(np.char.add("hb", dpart), "-gpu"), rpart)

    def parse(self, name: str) -> int | None:
        """GPU id of a canonical GPU name, or None."""
        m = GPU_RE.match(name)
        if not m:
            return None
        d, r = int(m.group(1)), int(m.group(2))
        if d >= self.gpus // self.hb or r >= self.hb or name != f"hb{d:0{self.dw}d}-gpu{r:0{self.rw}d}":
            return None
        return d * self.hb + r


def nic_port(plane: int) -> str:
    return f"nic{plane}"


def switch_port(port: int) -> str:
    return f"p{port}"


def parse_port(text: str) -> tuple[str, int] | None:
    """``("nic", n)`` or ``("p", n)`` for a port name, else None."""
    m = NIC_RE.match(text)
    if m:
        return "nic", int(m.group(1))
    m = PORT_RE.match(text)
    if m:
        return "p", int(m.group(1))
    return None


class NodeNames:
    """Host names for inventory and scheduler files (NetBox devices, Slurm nodes).

    Rule: **one node per HB domain**, named ``hb<domain>`` with the same
    zero-padding as the GPU names, so GPU ``hb03-gpu7`` lives on node ``hb03``.
    Its NIC ports are interfaces ``gpu<rank>-nic<plane>`` (rank padded as in the
    GPU name), so ``<node>-<interface>`` reads ``<gpu name>-nic<plane>``. The
    HB domain is the unit the network and the scheduler place work on; a spec
    has no host size, so rack-scale domains (NVL72, GH200) are one node too.
    """

    def __init__(self, gpus: int, hb_domain: int):
        g = GpuNames(gpus, hb_domain)
        self.domains = gpus // hb_domain
        self.hb = hb_domain
        self.dw, self.rw = g.dw, g.rw

    def name(self, domain: int) -> str:
        return f"hb{int(domain):0{self.dw}d}"

    def names(self) -> list[str]:
        return [f"hb{d:0{self.dw}d}" for d in range(self.domains)]

    def interface(self, rank: int, plane: int) -> str:
        return f"gpu{int(rank):0{self.rw}d}-nic{int(plane)}"
